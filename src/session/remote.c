/*
 * remote.c — operations handed between processes (docs/sessions.md §Across
 * processes): the operation token's codec (§The operation token: a versioned,
 * checksummed little-endian layout), the receiver's checks (same boot,
 * addressed to this process, not replayed: a window of 64 operation ids per
 * origin collector) and the stage sites a receiver registers for the stages
 * an origin ran, by their names.
 *
 * Must never: accept a token without checking every length against the bytes
 * given, read past them, or let a refused token change anything but the
 * refusal counts.
 */
#include <string.h>

#include "platform/host.h"
#include "probe/probe.h"
#include "session/session_internal.h"

/* >>layout (docs/sessions.md §The operation token) */
static const uint8_t g_magic[4] = {'S', 'O', 'P', 'T'};
#define HEAD_BYTES 72u  /* fixed fields, before the labels */
#define SUM_BYTES 8u    /* the FNV-1a 64 checksum closing the token */

static uint64_t fnv1a(const uint8_t *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

static void put_u16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}
static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint16_t get_u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t get_u32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
  return v;
}
static uint64_t get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

#define STAGE_FIXED 29u /* flags (1), count (4), total, min, max (8 each) */

size_t strobe__token_encode(const strobe__token *t, uint8_t *buf, size_t cap) {
  size_t np = strlen(t->process), nq = strlen(t->peer), nw = strlen(t->window), npop = strlen(t->population);
  size_t need = HEAD_BYTES + 1 + np + 1 + nq + 2 + nw + 1 + npop + SUM_BYTES;
  for (uint32_t i = 0; i < t->nstages; i++)
    need += 1 + strlen(t->stages[i].name) + 1 + strlen(t->stages[i].parent) + STAGE_FIXED;
  if (need > cap) return need;
  uint8_t *p = buf;
  memcpy(p, g_magic, 4);
  put_u16(p + 4, STROBE_OP_TOKEN_VERSION);
  put_u16(p + 6, (uint16_t)need);
  put_u32(p + 8, t->pid);
  p[12] = t->kind;
  p[13] = (uint8_t)((t->app_frame ? 1u : 0u) | (t->detail ? 2u : 0u));
  p[14] = t->nstages;
  p[15] = 0;
  memcpy(p + 16, t->boot, 16);
  put_u64(p + 32, t->collector);
  put_u64(p + 40, t->op);
  put_u64(p + 48, t->frame_id);
  put_u64(p + 56, t->start_mono_ns);
  put_u64(p + 64, t->taken_mono_ns);
  p += HEAD_BYTES;
  *p++ = (uint8_t)np;
  memcpy(p, t->process, np), p += np;
  *p++ = (uint8_t)nq;
  memcpy(p, t->peer, nq), p += nq;
  put_u16(p, (uint16_t)nw), p += 2;
  memcpy(p, t->window, nw), p += nw;
  *p++ = (uint8_t)npop;
  memcpy(p, t->population, npop), p += npop;
  for (uint32_t i = 0; i < t->nstages; i++) {
    const strobe__token_stage *s = &t->stages[i];
    size_t nn = strlen(s->name), npar = strlen(s->parent);
    *p++ = (uint8_t)nn;
    memcpy(p, s->name, nn), p += nn;
    *p++ = (uint8_t)npar;
    memcpy(p, s->parent, npar), p += npar;
    *p++ = s->parent_incomplete ? 1u : 0u;
    put_u32(p, s->count), p += 4;
    put_u64(p, s->total_ns), p += 8;
    put_u64(p, s->min_ns), p += 8;
    put_u64(p, s->max_ns), p += 8;
  }
  put_u64(p, fnv1a(buf, (size_t)(p - buf)));
  return need;
}

/* A length-prefixed label under the label rule, copied into out. Returns 0 or -1. */
static int get_label(const uint8_t **p, const uint8_t *end, char out[STROBE_MAX_LABEL + 1]) {
  if (*p >= end) return -1;
  size_t n = **p;
  if (n == 0 || n > STROBE_MAX_LABEL || (size_t)(end - *p - 1) < n) return -1;
  memcpy(out, *p + 1, n);
  out[n] = 0;
  *p += 1 + n;
  return strobe__label_valid(out) && strlen(out) == n ? 0 : -1;
}

/* The window id (a 2-byte length: ids run to STROBE_MAX_WINDOW_ID = 256
 * bytes) and the population (length 0: none), each under its rule. Returns 0 or -1. */
static int get_window_and_population(const uint8_t **p, const uint8_t *end, strobe__token *t) {
  if (end - *p < 2) return -1;
  size_t n = get_u16(*p);
  if (n == 0 || n > STROBE_MAX_WINDOW_ID || (size_t)(end - *p - 2) < n) return -1;
  memcpy(t->window, *p + 2, n);
  t->window[n] = 0;
  *p += 2 + n;
  if (strobe__label_len(t->window, STROBE__RULE_WINDOW) != n || *p >= end) return -1;
  if (**p == 0) { /* no population */
    (*p)++;
    return 0;
  }
  return get_label(p, end, t->population);
}

static int refuse(int *why, int reason) {
  *why = reason;
  return STROBE_ETOKEN;
}

int strobe__token_decode(const uint8_t *buf, size_t len, strobe__token *t, int *why) {
  memset(t, 0, sizeof *t);
  if (!buf || len < 8) return refuse(why, STROBE__REFUSED_TRUNCATED); /* not even magic, version and length */
  if (memcmp(buf, g_magic, 4)) return refuse(why, STROBE__REFUSED_MALFORMED);
  if (get_u16(buf + 4) != STROBE_OP_TOKEN_VERSION) return refuse(why, STROBE__REFUSED_VERSION);
  size_t stated = get_u16(buf + 6);
  if (stated < HEAD_BYTES + 2 + 3 + SUM_BYTES || stated > STROBE_OP_TOKEN_MAX) return refuse(why, STROBE__REFUSED_MALFORMED);
  if (len < stated) return refuse(why, STROBE__REFUSED_TRUNCATED);
  if (len > stated) return refuse(why, STROBE__REFUSED_MALFORMED); /* trailing bytes: not one token */
  if (fnv1a(buf, stated - SUM_BYTES) != get_u64(buf + stated - SUM_BYTES)) return refuse(why, STROBE__REFUSED_CORRUPT);
  t->pid = get_u32(buf + 8);
  t->kind = buf[12];
  t->app_frame = buf[13] & 1u;
  t->detail = (buf[13] >> 1) & 1u;
  t->nstages = buf[14];
  memcpy(t->boot, buf + 16, 16);
  t->collector = get_u64(buf + 32);
  t->op = get_u64(buf + 40);
  t->frame_id = get_u64(buf + 48);
  t->start_mono_ns = get_u64(buf + 56);
  t->taken_mono_ns = get_u64(buf + 64);
  if ((buf[13] & ~3u) || buf[15] || t->kind < STROBE_OP_PASS || t->kind >= STROBE_OP_KIND_LIMIT || !t->collector ||
      !t->op || t->nstages > STROBE_MAX_STAGES || (t->nstages && !t->detail) || t->taken_mono_ns < t->start_mono_ns)
    return refuse(why, STROBE__REFUSED_MALFORMED);
  const uint8_t *p = buf + HEAD_BYTES, *end = buf + stated - SUM_BYTES;
  if (get_label(&p, end, t->process) || get_label(&p, end, t->peer) || get_window_and_population(&p, end, t))
    return refuse(why, STROBE__REFUSED_MALFORMED);
  for (uint32_t i = 0; i < t->nstages; i++) {
    strobe__token_stage *s = &t->stages[i];
    if (get_label(&p, end, s->name) || p >= end) return refuse(why, STROBE__REFUSED_MALFORMED);
    if (*p == 0) /* no parent */
      p++;
    else if (get_label(&p, end, s->parent))
      return refuse(why, STROBE__REFUSED_MALFORMED);
    if ((size_t)(end - p) < STAGE_FIXED || p[0] > 1) return refuse(why, STROBE__REFUSED_MALFORMED);
    s->parent_incomplete = p[0];
    s->count = get_u32(p + 1);
    s->total_ns = get_u64(p + 5);
    s->min_ns = get_u64(p + 13);
    s->max_ns = get_u64(p + 21);
    p += STAGE_FIXED;
    /* One run at least, and the fastest no slower than the slowest. */
    if (!s->count || s->min_ns > s->max_ns || s->max_ns > s->total_ns)
      return refuse(why, STROBE__REFUSED_MALFORMED);
  }
  if (p != end) return refuse(why, STROBE__REFUSED_MALFORMED);
  return 0;
}

/* >>admit (lock held) */
int strobe__remote_admit(strobe_collector *c, const strobe__token *t) {
  STROBE_ASSERT(strobe__mutex_held(&c->lock));
  uint8_t boot[16];
  /* No boot id of our own: nothing can be shown to share our clock. */
  if (strobe__host_boot_id(boot) || memcmp(boot, t->boot, 16) || strcmp(t->peer, c->process)) {
    c->remote.refused_foreign++;
    return STROBE_EFOREIGN;
  }
  strobe__remote_origin *o = NULL, *free_slot = NULL;
  for (int i = 0; i < STROBE_MAX_REMOTE_ORIGINS && !o; i++) {
    if (c->origins[i].collector == t->collector) o = &c->origins[i];
    else if (!c->origins[i].collector && !free_slot) free_slot = &c->origins[i];
  }
  if (!o) {
    if (!free_slot) {
      c->remote.refused_limit++;
      return STROBE_ELIMIT;
    }
    o = free_slot;
    *o = (strobe__remote_origin){t->collector, t->op, 1};
    return 0;
  }
  if (t->op > o->newest) {
    uint64_t shift = t->op - o->newest;
    o->seen = shift >= 64 ? 1 : (o->seen << shift) | 1;
    o->newest = t->op;
    return 0;
  }
  uint64_t back = o->newest - t->op;
  if (back >= STROBE_REMOTE_REPLAY_WINDOW || (o->seen >> back) & 1u) {
    c->remote.refused_replayed++;
    return STROBE_EREPLAY;
  }
  o->seen |= 1ull << back;
  return 0;
}

/* >>sites: one stage site per name an origin sent, in static storage (sites
 * are never unregistered). Names are static labels of the origin's sites, so
 * the table is as small as the set of stage names of the peer processes. */
#define MAX_REMOTE_SITES 256
static struct {
  char name[STROBE_MAX_LABEL + 1];
  strobe_site site;
} g_sites[MAX_REMOTE_SITES];
static uint32_t g_nsites; /* atomic: entries published */
static strobe__mutex g_sites_lock = STROBE__MUTEX_INIT;

uint32_t strobe__remote_stage_site(const char *name) {
  uint32_t n = __atomic_load_n(&g_nsites, __ATOMIC_ACQUIRE);
  for (uint32_t i = 0; i < n; i++)
    if (!strcmp(g_sites[i].name, name)) return __atomic_load_n(&g_sites[i].site.id, __ATOMIC_ACQUIRE);
  uint32_t id = 0;
  strobe__mutex_lock(&g_sites_lock);
  n = g_nsites;
  for (uint32_t i = 0; i < n && !id; i++)
    if (!strcmp(g_sites[i].name, name)) id = g_sites[i].site.id;
  if (!id && n < MAX_REMOTE_SITES) {
    strncpy(g_sites[n].name, name, STROBE_MAX_LABEL);
    g_sites[n].site = (strobe_site){g_sites[n].name, NULL, NULL, STROBE_REMOTE_STAGE_FILE, NULL, 0, STROBE_SITE_STAGE,
                                    0, STROBE_UNIT_NONE, 0};
    int rc = strobe_site_register(&g_sites[n].site);
    if (rc > 0) {
      id = (uint32_t)rc;
      __atomic_store_n(&g_nsites, n + 1, __ATOMIC_RELEASE);
    }
  }
  strobe__mutex_unlock(&g_sites_lock);
  return id;
}
