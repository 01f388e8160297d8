/*
 * producer.c — lanes of external producers and their spans
 * (include/strobe/producer.h, docs/recording.md §External producers).
 *
 * Owns: the lane table (STROBE_MAX_PRODUCER_LANES names, copied, each with its clock
 * domain and capture label; entries are never removed, so a handle stays
 * valid for the process) and the process-wide counts. Spans go to captures
 * as STROBE__GPUEV_LANE_SPAN events (probe/probe.h >>gpu events), a batch in
 * one ring reservation, read back from the DEVICE block
 * (docs/capture-format.md, DEVICE).
 *
 * Must never: write part of a batch (every span is checked first, and the
 * ring takes all or none), block but as any event does (overflow WAIT), or
 * hold the lane lock around a ring write.
 */
#include <string.h>

#include "platform/invariant.h"
#include "probe/probe.h"
#include "strobe/producer.h"

typedef struct lane {
  char name[STROBE_PRODUCER_LANE_NAME_MAX + 1];
  uint32_t domain;  /* gpu.h domain id; 0: host ticks */
  uint32_t label;   /* the name's capture label */
} lane;

static strobe__mutex g_lock = STROBE__MUTEX_INIT;
static lane g_lanes[STROBE_MAX_PRODUCER_LANES];
static uint32_t g_nlanes; /* atomic (acquire) for the unlocked checks */
static uint64_t g_spans, g_batches, g_refused, g_lost; /* atomic */

static int recording(void) {
  return (__atomic_load_n(&strobe__active, __ATOMIC_RELAXED) & STROBE__ACTIVE_EVENTS) != 0;
}

/* 1 when no '/'-separated segment of name is empty, "." or "..": a lane names a row, never a path. */
static int segments_ok(const char *name) {
  for (const char *seg = name;;) {
    const char *end = strchr(seg, '/');
    size_t n = end ? (size_t)(end - seg) : strlen(seg);
    if (n == 0 || (seg[0] == '.' && (n == 1 || (n == 2 && seg[1] == '.')))) return 0;
    if (!end) return 1;
    seg = end + 1;
  }
}

int strobe_producer_lane_create(const strobe_producer_lane_desc *desc, strobe_producer_lane *out) {
  if (out) out->id = 0;
  if (!desc || !out) return STROBE_EINVAL;
  if (desc->domain.id && !strobe__clock_domain_label(desc->domain.id)) return STROBE_EINVAL;
  size_t len = strobe__label_rule_len(desc->name, STROBE_PRODUCER_LANE_NAME_MAX, 1);
  if (!len || !segments_ok(desc->name)) return STROBE_ELABEL;
  int rc = 0;
  strobe__mutex_lock(&g_lock);
  for (uint32_t i = 0; i < g_nlanes; i++) {
    if (strcmp(g_lanes[i].name, desc->name)) continue;
    if (g_lanes[i].domain != desc->domain.id) rc = STROBE_EBUSY;
    else out->id = i + 1;
    goto done;
  }
  if (g_nlanes == STROBE_MAX_PRODUCER_LANES) {
    rc = STROBE_ELIMIT;
    goto done;
  }
  lane *l = &g_lanes[g_nlanes];
  l->label = strobe__label_id(desc->name);
  if (!l->label) {
    rc = STROBE_ENOMEM;
    goto done;
  }
  memcpy(l->name, desc->name, len);
  l->name[len] = '\0';
  l->domain = desc->domain.id;
  __atomic_store_n(&g_nlanes, g_nlanes + 1, __ATOMIC_RELEASE);
  out->id = g_nlanes;
done:
  strobe__mutex_unlock(&g_lock);
  return rc;
}

static int refuse(int rc) {
  __atomic_fetch_add(&g_refused, 1, __ATOMIC_RELAXED);
  return rc;
}

enum { SLOTS = 3 }; /* [begin | domain] [end | lane] [0 | site] */

/* Lanes are never removed, so an entry below the published count is
 * constant: read without the lock. */
static void fill(void *c, uint32_t k, uint64_t *w, uint32_t *x) {
  const strobe_producer_span *s = &((const strobe_producer_span *)c)[k];
  const lane *l = &g_lanes[s->lane.id - 1];
  w[0] = s->begin_ticks;
  x[0] = l->domain ? strobe__clock_domain_label(l->domain) : 0;
  w[1] = s->end_ticks;
  x[1] = l->label;
  w[2] = 0;
  x[2] = __atomic_load_n(&s->site->id, __ATOMIC_ACQUIRE);
}

int strobe_producer_spans_add(const strobe_producer_span *spans, uint32_t n) {
  if ((!spans && n) || n > STROBE_PRODUCER_BATCH_MAX) return refuse(STROBE_EINVAL);
  uint32_t lanes = __atomic_load_n(&g_nlanes, __ATOMIC_ACQUIRE);
  for (uint32_t i = 0; i < n; i++) {
    const strobe_producer_span *s = &spans[i];
    if (s->lane.id < 1 || s->lane.id > lanes || !s->site || s->site->kind != STROBE_SITE_SCOPE || !s->begin_ticks ||
        s->end_ticks < s->begin_ticks)
      return refuse(STROBE_EINVAL);
  }
  if (!n || !recording()) return 0;
  strobe_desc cfg = strobe_query_desc();
  if ((uint64_t)n * (1 + SLOTS) > cfg.ring_events / 4) return refuse(STROBE_ELIMIT);
  for (uint32_t i = 0; i < n; i++) /* sites first: the ring write below cannot fail half-way */
    if (!__atomic_load_n(&spans[i].site->id, __ATOMIC_ACQUIRE)) {
      int rc = strobe_site_register(spans[i].site);
      if (rc < 0) return refuse(rc);
    }
  if (strobe__emit_gpu_batch(strobe__now(), STROBE__GPUEV_LANE_SPAN, SLOTS, n, fill, (void *)spans)) {
    __atomic_fetch_add(&g_lost, 1, __ATOMIC_RELAXED);
    return STROBE_ELIMIT;
  }
  __atomic_fetch_add(&g_spans, n, __ATOMIC_RELAXED);
  __atomic_fetch_add(&g_batches, 1, __ATOMIC_RELAXED);
  return (int)n;
}

strobe_producer_stats strobe_producer_query_stats(void) {
  strobe_producer_stats s;
  s.lanes = __atomic_load_n(&g_nlanes, __ATOMIC_ACQUIRE);
  s.spans = __atomic_load_n(&g_spans, __ATOMIC_RELAXED);
  s.batches = __atomic_load_n(&g_batches, __ATOMIC_RELAXED);
  s.batches_refused = __atomic_load_n(&g_refused, __ATOMIC_RELAXED);
  s.batches_lost = __atomic_load_n(&g_lost, __ATOMIC_RELAXED);
  return s;
}
