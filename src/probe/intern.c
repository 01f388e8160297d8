/*
 * intern.c — sites for names known only at run time (strobe_site_intern;
 * docs/recording.md §Run-time names): each distinct (name, category, kind,
 * unit) gets one site, allocated once with its own copy of the name and flagged
 * STROBE_SITE_INTERNED, found again by every later call.
 *
 * Owns: the interned entries, the open-addressing index that finds them
 * (at most half full, so a probe always meets an empty slot), the refusal
 * counts and the fallback sites handed out instead of a refused name; and
 * the name a session report may show for a site (interned names are
 * application content: docs/sessions.md, the content rule).
 * Must never: take a lock or allocate to find a name already interned (a
 * lookup is acquire loads and compares); move, change or free an entry once
 * published (sites are referenced by pointer for the life of the process);
 * let more than STROBE_MAX_INTERNED names in (refused, counted, fallback).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform/invariant.h"
#include "probe/probe.h"

#define SLOTS (2u * STROBE_MAX_INTERNED) /* a power of two */
#define PLACEHOLDER_MAX 24               /* "interned_" and a site id */

typedef struct entry {
  strobe_site site; /* first: the site pointer handed out is the entry's */
  uint32_t hash;
  uint32_t len;
  char placeholder[PLACEHOLDER_MAX]; /* what a session report shows instead of the name */
  char name[];                       /* len bytes and a terminator */
} entry;

static entry *g_index[SLOTS]; /* NULL, or an entry published with a release store */
static uint32_t g_count;      /* under g_lock */
static strobe__mutex g_lock = STROBE__MUTEX_INIT;
static uint64_t g_invalid, g_full; /* atomic (relaxed): refusals, misuse counters */
static uint64_t g_bytes;           /* atomic (relaxed): bytes of the entries allocated */

/* >>fallbacks: one site per refusal reason and kind, so a value or counter
 * on a refused name still lands on a site of its own kind. */
enum { R_INVALID, R_FULL, R_NOMEM, R_COUNT };
static const char *const k_reason_names[R_COUNT] = {
    "strobe: invalid interned name", "strobe: interned names full", "strobe: interned name out of memory"};
static const int k_reason_errors[R_COUNT] = {STROBE_EINVAL, STROBE_ELIMIT, STROBE_ENOMEM};
#define KIND_SLOT(id, number, name, timed) [number] = 1,
enum { KINDS = sizeof((const char[]){STROBE_SITE_KINDS(KIND_SLOT)}) }; /* one past the largest kind */
#undef KIND_SLOT
static strobe_site g_fallback[R_COUNT][KINDS];
static pthread_once_t g_fallback_once = PTHREAD_ONCE_INIT;

static int kind_valid(uint32_t kind) {
  switch (kind) {
#define KIND_CASE(id, number, name, timed) case number:
    STROBE_SITE_KINDS(KIND_CASE)
#undef KIND_CASE
    return kind != STROBE_SITE_FRAME; /* a frame mark has no name of its own */
    default: return 0;
  }
}

static int number_kind(uint32_t kind) {
  return kind == STROBE_SITE_VALUE || kind == STROBE_SITE_COUNTER || kind == STROBE_SITE_GAUGE;
}

/* A number site's numbers come from call sites of every argument type, so
 * each says its own encoding (STROBE__NUM_IN_SLOT, the *_SITE forms); below
 * it, the unit the site was interned with. */
static uint32_t unit_bits(uint32_t kind, uint32_t unit) {
  return number_kind(kind) ? (uint32_t)STROBE__NUM_IN_SLOT << STROBE__NUM_SHIFT | unit : (uint32_t)STROBE_UNIT_NONE;
}

static void fallback_init(void) {
  for (int r = 0; r < R_COUNT; r++)
    for (uint32_t k = 1; k < KINDS; k++)
      g_fallback[r][k] = (strobe_site){k_reason_names[r], "strobe", NULL, __FILE__, "strobe_site_intern", __LINE__,
                                       k, 0, unit_bits(k, STROBE_UNIT_NONE), 0};
}

static strobe_site *refuse(int reason, uint32_t kind) {
  __atomic_fetch_add(reason == R_INVALID ? &g_invalid : &g_full, 1, __ATOMIC_RELAXED);
  pthread_once(&g_fallback_once, fallback_init);
  return &g_fallback[reason][kind_valid(kind) ? kind : STROBE_SITE_SCOPE];
}

int strobe_site_query_error(const strobe_site *site) {
  if (!site) return STROBE_EINVAL;
  for (int r = 0; r < R_COUNT; r++)
    if (site >= &g_fallback[r][0] && site < &g_fallback[r][KINDS]) return k_reason_errors[r];
  return 0;
}

uint64_t strobe__intern_bytes(void) { return __atomic_load_n(&g_bytes, __ATOMIC_RELAXED); }

void strobe__intern_misuse(strobe_misuse *m) {
  m->intern_invalid += __atomic_load_n(&g_invalid, __ATOMIC_RELAXED);
  m->intern_full += __atomic_load_n(&g_full, __ATOMIC_RELAXED);
}

/* >>lookup */
/* Well-formed UTF-8 (no overlongs, no surrogates, nothing past U+10FFFF) with no NUL byte. */
static int utf8_valid(const uint8_t *s, size_t n) {
  for (size_t i = 0; i < n;) {
    uint8_t c = s[i];
    if (c == 0) return 0;
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t more = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc2 ? 1 : 0;
    if (!more || c > 0xf4 || n - i <= more) return 0;
    uint32_t cp = c & (0x3fu >> more);
    for (size_t k = 1; k <= more; k++) {
      if ((s[i + k] & 0xc0) != 0x80) return 0;
      cp = cp << 6 | (s[i + k] & 0x3fu);
    }
    static const uint32_t min_cp[4] = {0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[more] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    i += more + 1;
  }
  return 1;
}

static uint32_t hash(const char *s, size_t n, uint32_t kind) {
  uint32_t h = 2166136261u ^ kind; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
  return h;
}

static int same_category(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

/* The entry for the key, or NULL with *empty at the slot where it would go.
 * Lock-free: slots only ever go from NULL to a published entry. */
static entry *find(uint32_t h, const char *name, size_t len, const char *category, uint32_t kind, uint32_t unit,
                   uint32_t *empty) {
  for (uint32_t i = h & (SLOTS - 1);; i = (i + 1) & (SLOTS - 1)) {
    entry *e = __atomic_load_n(&g_index[i], __ATOMIC_ACQUIRE);
    if (!e) {
      *empty = i;
      return NULL;
    }
    if (e->hash == h && e->len == len && e->site.kind == kind && (e->site.unit & STROBE__UNIT_MASK) == unit &&
        !memcmp(e->name, name, len) && same_category(e->site.category, category))
      return e;
  }
}

/* >>insert */
strobe_site *strobe_site_intern(const char *name, size_t len, const char *category, strobe_site_kind kind) {
  return strobe_site_intern_unit(name, len, category, kind, STROBE_UNIT_NONE);
}

strobe_site *strobe_site_intern_unit(const char *name, size_t len, const char *category, strobe_site_kind kind,
                                     strobe_unit unit_arg) {
  uint32_t unit = (uint32_t)unit_arg;
  if (!name || len == 0 || len > STROBE_MAX_INTERNED_NAME || !kind_valid((uint32_t)kind) ||
      !utf8_valid((const uint8_t *)name, len) || unit >= STROBE_UNIT_LIMIT ||
      (unit != STROBE_UNIT_NONE && !number_kind((uint32_t)kind)))
    return refuse(R_INVALID, (uint32_t)kind);
  uint32_t h = hash(name, len, (uint32_t)kind) ^ unit, slot;
  entry *e = find(h, name, len, category, (uint32_t)kind, unit, &slot);
  if (e) return &e->site;
  strobe__mutex_lock(&g_lock);
  e = find(h, name, len, category, (uint32_t)kind, unit, &slot); /* another thread may have inserted it */
  if (e) {
    strobe__mutex_unlock(&g_lock);
    return &e->site;
  }
  if (g_count >= STROBE_MAX_INTERNED) {
    strobe__mutex_unlock(&g_lock);
    return refuse(R_FULL, (uint32_t)kind);
  }
  e = malloc(sizeof *e + len + 1);
  if (!e) {
    strobe__mutex_unlock(&g_lock);
    return refuse(R_NOMEM, (uint32_t)kind);
  }
  __atomic_fetch_add(&g_bytes, (uint64_t)(sizeof *e + len + 1), __ATOMIC_RELAXED);
  memcpy(e->name, name, len);
  e->name[len] = '\0';
  e->hash = h;
  e->len = (uint32_t)len;
  e->site = (strobe_site){e->name,    category, NULL, "", "", 0, (uint32_t)kind, 0, unit_bits((uint32_t)kind, unit),
                          STROBE_SITE_INTERNED};
  /* Registered now, so the placeholder can name the id a capture of this
   * process gives it. A full registry records it under the unregistered
   * site (site.c), whose name is static. The placeholder is written after
   * the id is public, but a report only meets this id through events on the
   * site, which come after strobe_site_intern returned it. */
  int id = strobe_site_register(&e->site);
  snprintf(e->placeholder, sizeof e->placeholder, "interned_%d", id > 0 ? id : 0);
  g_count++;
  __atomic_store_n(&g_index[slot], e, __ATOMIC_RELEASE);
  strobe__mutex_unlock(&g_lock);
  return &e->site;
}

/* >>report names */
/* The label rule of everything a report names (STROBE_ELABEL's text): 1-64
 * bytes of letters, digits and underscore. An interned name outside it keeps
 * its placeholder even when the application opted in. */
static int label_shaped(const entry *e) {
  if (e->len > 64) return 0;
  for (uint32_t i = 0; i < e->len; i++) {
    char ch = e->name[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_')) return 0;
  }
  return 1;
}

const char *strobe__site_report_name(const strobe_site *s, int *withheld) {
  if (withheld) *withheld = 0;
  if (!s) return NULL;
  if (s->flags & STROBE_SITE_CALL) { /* a traced function's name is content too (strobe/trace.h) */
    int shown = strobe_query_desc().report_interned_names != 0;
    if (withheld) *withheld = !shown;
    return shown ? s->name : "traced_call";
  }
  if (!(s->flags & STROBE_SITE_INTERNED)) return s->name;
  if (strobe_query_desc().report_interned_names && label_shaped((const entry *)s)) return s->name;
  if (withheld) *withheld = 1;
  return ((const entry *)s)->placeholder;
}
