/*
 * gpu.c — clock domains, GPU queues, GPU spans and the four instants of a
 * frame (include/strobe/gpu.h, docs/gpu.md).
 *
 * Owns: the domain table (each domain's sliding window of calibration pairs
 * and its live fit), the queue table, the live frame table (the most recent
 * STROBE_GPU_LIVE_FRAMES frames, slot = frame id mod the table size) and the
 * ring of closed frames sessions copy from. Everything is guarded by one
 * short lock, held for table updates and an O(window) refit, never around
 * ring writes or application code. Spans, pairs and marks go to captures as
 * STROBE__EV_GPU ring events (probe/probe.h >>gpu events) with raw device
 * ticks: captures' readers fit again (docs/capture-format.md, DEVICE).
 *
 * Must never: block for long, allocate after a domain is created, or fold a
 * span of one domain into a frame mapped through another (counted instead).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "platform/clock.h"
#include "platform/invariant.h"
#include "probe/clock_fit.h"
#include "probe/probe.h"

#define LIVE_FRAMES STROBE_GPU_LIVE_FRAMES
#define CLOSED_FRAMES 1024u /* closed frames sessions can copy between two reads */

typedef struct domain {
  const char *name;        /* the caller's static label */
  uint32_t label;          /* its capture label */
  double ticks_per_second;
  double nominal_rate;     /* host ticks per device tick at the nominal rate */
  uint32_t fit_pairs;
  strobe__clock_pair *window; /* fit_pairs, a ring in insertion (= device) order */
  uint32_t head, count;
  uint64_t pairs, refused;
  strobe__clock_fit fit;
} domain;

typedef struct queue {
  uint32_t domain;         /* 1-based */
  const char *name;
  uint32_t label;
} queue;

typedef struct live_frame {
  uint64_t frame_id;       /* 0: empty slot */
  uint64_t cpu_end, submit, fence_seen;
  uint32_t domain;         /* of its first span; 0: none yet */
  uint64_t dev_begin, dev_end;
  uint32_t spans, late;
  int closed;
  strobe_gpu_frame snap;   /* as closed */
} live_frame;

static strobe__mutex g_lock = STROBE__MUTEX_INIT;
static domain g_domains[STROBE_MAX_CLOCK_DOMAINS];
static uint32_t g_ndomains;  /* atomic (acquire) for the unlocked bounds checks */
static queue g_queues[STROBE_MAX_GPU_QUEUES];
static uint32_t g_nqueues;   /* atomic */
static live_frame g_frames[LIVE_FRAMES];
static strobe_gpu_frame g_closed[CLOSED_FRAMES];
static uint64_t g_seq;       /* closed frames so far: the next one's sequence number */
static strobe_gpu_stats g_stats;  /* lock held; but spans_refused, which is g_refused */
static uint64_t g_refused;       /* atomic: spans refused (counted without the lock) */
static int g_live;           /* atomic: sessions holding the live table open */
static strobe__clock_pair g_scratch[STROBE_CLOCK_FIT_PAIRS_MAX]; /* the window in order, for a refit (lock held) */

/* >>helpers */
static int recording(void) {
  return (__atomic_load_n(&strobe__active, __ATOMIC_RELAXED) & STROBE__ACTIVE_EVENTS) != 0;
}
static int live(void) { return __atomic_load_n(&g_live, __ATOMIC_RELAXED) > 0; }

static double ns_per_tick(void) { return strobe__clock()->ns_per_tick; }

static domain *domain_of(uint32_t id) {
  return id >= 1 && id <= __atomic_load_n(&g_ndomains, __ATOMIC_ACQUIRE) ? &g_domains[id - 1] : NULL;
}

static int site_timed(uint32_t kind) {
  switch (kind) {
#define GPU_SITE_TIMED(id, number, name, timed) \
  case number: return timed;
    STROBE_SITE_KINDS(GPU_SITE_TIMED)
#undef GPU_SITE_TIMED
    default: return 0;
  }
}

/* A pass label's capture id, cached per thread by pointer (labels are
 * static): the label registry's lock is taken once per label and thread. */
static uint32_t pass_label(const char *pass, int *bad) {
  enum { CACHE = 8 };
  static _Thread_local struct {
    const char *p;
    uint32_t id;
  } cache[CACHE] __attribute__((tls_model("initial-exec")));
  static _Thread_local uint32_t next __attribute__((tls_model("initial-exec")));
  *bad = 0;
  if (!pass) return 0;
  for (uint32_t i = 0; i < CACHE; i++)
    if (cache[i].p == pass) return cache[i].id;
  if (!strobe__label_rule_len(pass, STROBE__LABEL_NAME_MAX, 0)) {
    *bad = 1;
    return 0;
  }
  uint32_t id = strobe__label_id(pass);
  cache[next % CACHE].p = pass;
  cache[next % CACHE].id = id;
  next++;
  return id;
}

static uint64_t dbits(double v) {
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}

/* >>clock */
uint64_t strobe_clock_now(void) { return strobe__now(); }

uint64_t strobe_clock_ticks_from_mono_ns(uint64_t mono_ns) {
  const strobe__clock_info *ck = strobe__clock();
  double d = mono_ns >= ck->epoch_mono_ns ? (double)(mono_ns - ck->epoch_mono_ns) / ck->ns_per_tick
                                          : -(double)(ck->epoch_mono_ns - mono_ns) / ck->ns_per_tick;
  double r = floor(d + 0.5);
  if (r >= 0) return ck->epoch_ticks + (uint64_t)r;
  return (uint64_t)-r > ck->epoch_ticks ? 0 : ck->epoch_ticks - (uint64_t)-r;
}

double strobe_clock_ticks_to_ns(uint64_t ticks) { return (double)ticks * ns_per_tick(); }

/* >>domains */
int strobe_clock_domain_create(const strobe_clock_domain_desc *desc, strobe_clock_domain *out) {
  if (out) out->id = 0;
  if (!desc || !out) return STROBE_EINVAL;
  if (!(desc->ticks_per_second > 0) || !isfinite(desc->ticks_per_second)) return STROBE_EINVAL;
  uint32_t pairs = desc->fit_pairs ? desc->fit_pairs : STROBE_CLOCK_FIT_PAIRS;
  if (pairs < 2 || pairs > STROBE_CLOCK_FIT_PAIRS_MAX) return STROBE_EINVAL;
  if (!strobe__label_rule_len(desc->name, STROBE__LABEL_NAME_MAX, 0)) return STROBE_ELABEL;
  double npt = ns_per_tick(); /* calibrates the host clock once (~5 ms), outside the lock */
  int rc = 0;
  strobe__mutex_lock(&g_lock);
  for (uint32_t i = 0; i < g_ndomains; i++) {
    if (strcmp(g_domains[i].name, desc->name)) continue;
    if (g_domains[i].ticks_per_second != desc->ticks_per_second) rc = STROBE_EBUSY;
    else out->id = i + 1;
    goto done;
  }
  if (g_ndomains == STROBE_MAX_CLOCK_DOMAINS) {
    rc = STROBE_ELIMIT;
    goto done;
  }
  domain *d = &g_domains[g_ndomains];
  d->window = calloc(pairs, sizeof *d->window);
  if (!d->window) {
    rc = STROBE_ENOMEM;
    goto done;
  }
  d->name = desc->name;
  d->label = strobe__label_id(desc->name);
  d->ticks_per_second = desc->ticks_per_second;
  d->nominal_rate = 1e9 / desc->ticks_per_second / npt;
  d->fit_pairs = pairs;
  __atomic_store_n(&g_ndomains, g_ndomains + 1, __ATOMIC_RELEASE);
  out->id = g_ndomains;
done:
  strobe__mutex_unlock(&g_lock);
  return rc;
}

static void refit(domain *d) {
  STROBE_ASSERT(strobe__mutex_held(&g_lock));
  uint32_t first = (d->head + d->fit_pairs - d->count) % d->fit_pairs;
  for (uint32_t i = 0; i < d->count; i++) g_scratch[i] = d->window[(first + i) % d->fit_pairs];
  (void)strobe__clock_fit_pairs(g_scratch, d->count, d->nominal_rate, &d->fit);
}

int strobe_clock_domain_calibrate(strobe_clock_domain dom, uint64_t device_ticks, uint64_t host_before,
                                  uint64_t host_after) {
  domain *d = domain_of(dom.id);
  if (!d || host_before == 0 || host_after < host_before) return STROBE_EINVAL;
  strobe__mutex_lock(&g_lock);
  if (d->count && device_ticks <= d->window[(d->head + d->fit_pairs - 1) % d->fit_pairs].device) {
    d->refused++;
    strobe__mutex_unlock(&g_lock);
    return STROBE_EINVAL;
  }
  d->window[d->head] = (strobe__clock_pair){device_ticks, host_before, host_after};
  d->head = (d->head + 1) % d->fit_pairs;
  if (d->count < d->fit_pairs) d->count++;
  d->pairs++;
  refit(d);
  uint32_t label = d->label;
  double tps = d->ticks_per_second;
  strobe__mutex_unlock(&g_lock);
  if (recording()) {
    uint64_t w[3] = {device_ticks, host_before, dbits(tps)};
    uint32_t x[3] = {label, 0, 0};
    strobe__emit_gpu_event(host_after, STROBE__GPUEV_PAIR, w, x, 3);
  }
  return 0;
}

int strobe_clock_domain_map(strobe_clock_domain dom, uint64_t device_ticks, strobe_clock_mapping *out) {
  if (out) memset(out, 0, sizeof *out);
  domain *d = domain_of(dom.id);
  if (!d || !out) return STROBE_EINVAL;
  strobe__mutex_lock(&g_lock);
  strobe__clock_fit fit = d->fit;
  strobe__mutex_unlock(&g_lock);
  if (!fit.pairs) return STROBE_ESTATE;
  double bound;
  out->host_ticks = strobe__clock_fit_map(&fit, device_ticks, &bound);
  out->bound_ns = bound * ns_per_tick();
  out->pairs = fit.pairs;
  return 0;
}

int strobe_clock_domain_query_stats(strobe_clock_domain dom, strobe_clock_domain_stats *out) {
  domain *d = domain_of(dom.id);
  if (!d || !out) return STROBE_EINVAL;
  memset(out, 0, sizeof *out);
  strobe__mutex_lock(&g_lock);
  out->pairs = d->pairs;
  out->refused = d->refused;
  out->window = d->count;
  strobe__clock_fit fit = d->fit;
  uint64_t widest = 0;
  for (uint32_t i = 0; i < d->count; i++) {
    const strobe__clock_pair *p = &d->window[(d->head + d->fit_pairs - 1 - i) % d->fit_pairs];
    if (p->after - p->before > widest) widest = p->after - p->before;
  }
  double nominal = d->nominal_rate;
  strobe__mutex_unlock(&g_lock);
  double npt = ns_per_tick();
  if (fit.pairs >= 2 && fit.device_max > fit.device_min) out->drift_ppm = (nominal / fit.rate - 1.0) * 1e6;
  out->bound_ns = fit.pairs ? fit.bound * npt : 0;
  out->widest_pair_ns = (double)widest * npt;
  return 0;
}

uint32_t strobe__clock_domain_label(uint32_t id) {
  const domain *d = domain_of(id);
  return d ? d->label : 0;
}

/* >>queues */
int strobe_gpu_queue_create(strobe_clock_domain dom, const char *name, strobe_gpu_queue *out) {
  if (out) out->id = 0;
  if (!domain_of(dom.id) || !out) return STROBE_EINVAL;
  if (!strobe__label_rule_len(name, STROBE__LABEL_NAME_MAX, 0)) return STROBE_ELABEL;
  int rc = 0;
  strobe__mutex_lock(&g_lock);
  for (uint32_t i = 0; i < g_nqueues; i++)
    if (g_queues[i].domain == dom.id && !strcmp(g_queues[i].name, name)) {
      out->id = i + 1;
      goto done;
    }
  if (g_nqueues == STROBE_MAX_GPU_QUEUES) {
    rc = STROBE_ELIMIT;
    goto done;
  }
  uint32_t label = strobe__label_id(name);
  if (!label) {
    rc = STROBE_ENOMEM; /* the label registry is full: the capture could not name the lane */
    goto done;
  }
  g_queues[g_nqueues] = (queue){dom.id, name, label};
  __atomic_store_n(&g_nqueues, g_nqueues + 1, __ATOMIC_RELEASE);
  out->id = g_nqueues;
done:
  strobe__mutex_unlock(&g_lock);
  return rc;
}

/* >>frames: the live table (lock held) */
static live_frame *frame_slot(uint64_t frame_id) {
  STROBE_ASSERT(strobe__mutex_held(&g_lock));
  live_frame *f = &g_frames[frame_id % LIVE_FRAMES];
  if (f->frame_id != frame_id) {
    if (f->frame_id && !f->closed) g_stats.frames_evicted++;
    memset(f, 0, sizeof *f);
    f->frame_id = frame_id;
  }
  return f;
}

/* The frame's four instants as they stand (lock held): GPU start and end
 * mapped with its domain's live fit, the order checked where both sides
 * of a check are known. */
static strobe_gpu_frame snapshot(const live_frame *f) {
  STROBE_ASSERT(strobe__mutex_held(&g_lock));
  strobe_gpu_frame s;
  memset(&s, 0, sizeof s);
  s.frame_id = f->frame_id;
  s.cpu_end = f->cpu_end;
  s.submit = f->submit;
  s.fence_seen = f->fence_seen;
  s.spans = f->spans;
  s.late_spans = f->late;
  s.closed = f->closed;
  s.backlog_ns = s.polling_ns = NAN;
  double npt = ns_per_tick();
  const domain *d = f->domain ? &g_domains[f->domain - 1] : NULL;
  double bound = 0;
  if (d && d->fit.pairs) {
    double b0, b1;
    s.gpu_begin = strobe__clock_fit_map(&d->fit, f->dev_begin, &b0);
    s.gpu_end = strobe__clock_fit_map(&d->fit, f->dev_end, &b1);
    bound = b0 > b1 ? b0 : b1;
    s.bound_ns = bound * npt;
  }
  double slack = bound;
  if (s.cpu_end && s.submit && s.submit < s.cpu_end) s.violations |= STROBE_GPU_ORDER_END_SUBMIT;
  if (s.submit && s.gpu_begin) {
    if ((double)s.gpu_begin + slack < (double)s.submit) s.violations |= STROBE_GPU_ORDER_SUBMIT_START;
    s.backlog_ns = ((double)s.gpu_begin - (double)s.submit) * npt;
  }
  if (s.gpu_begin && s.gpu_end && s.gpu_end < s.gpu_begin) s.violations |= STROBE_GPU_ORDER_START_END;
  if (s.gpu_end && s.fence_seen) {
    if ((double)s.fence_seen + slack < (double)s.gpu_end) s.violations |= STROBE_GPU_ORDER_END_FENCE;
    s.polling_ns = ((double)s.fence_seen - (double)s.gpu_end) * npt;
  }
  return s;
}

static void close_frame(live_frame *f) {
  STROBE_ASSERT(strobe__mutex_held(&g_lock));
  f->closed = 1;
  f->snap = snapshot(f);
  if (f->spans && !f->snap.gpu_begin) g_stats.unmapped += f->spans;
  if (f->snap.violations) g_stats.violations++;
  g_stats.frames_closed++;
  g_closed[g_seq % CLOSED_FRAMES] = f->snap;
  g_seq++;
}

/* >>spans */
int strobe_gpu_span_add(const strobe_gpu_span *span) {
  uint32_t qid = span ? span->queue.id : 0;
  if (!span || !span->site || qid < 1 || qid > __atomic_load_n(&g_nqueues, __ATOMIC_ACQUIRE) ||
      !site_timed(span->site->kind) || span->end_ticks < span->begin_ticks) {
    __atomic_fetch_add(&g_refused, 1, __ATOMIC_RELAXED);
    return STROBE_EINVAL;
  }
  int rec = recording(), lv = live();
  if (!rec && !lv) return 0;
  int bad;
  uint32_t pass = pass_label(span->pass, &bad);
  if (bad) {
    __atomic_fetch_add(&g_refused, 1, __ATOMIC_RELAXED);
    return STROBE_ELABEL;
  }
  uint32_t site = __atomic_load_n(&span->site->id, __ATOMIC_ACQUIRE);
  if (!site) {
    int rc = strobe_site_register(span->site);
    if (rc < 0) {
      __atomic_fetch_add(&g_refused, 1, __ATOMIC_RELAXED);
      return rc;
    }
    site = (uint32_t)rc;
  }
  const queue *q = &g_queues[qid - 1];
  if (rec) {
    uint64_t w[4] = {span->begin_ticks, span->end_ticks, span->frame_id, 0};
    uint32_t x[4] = {g_domains[q->domain - 1].label, q->label, site, pass};
    strobe__emit_gpu_event(strobe__now(), STROBE__GPUEV_SPAN, w, x, 4);
  }
  if (!lv) return 0; /* the live table is the sessions': a capture alone costs no lock (docs/gpu.md) */
  strobe__mutex_lock(&g_lock);
  g_stats.spans++;
  if (span->frame_id) {
    live_frame *f = frame_slot(span->frame_id);
    f->spans++;
    if (f->closed) {
      f->late++;
      g_stats.late_spans++;
    } else if (!f->domain || f->domain == q->domain) {
      if (!f->domain || span->begin_ticks < f->dev_begin) f->dev_begin = span->begin_ticks;
      if (!f->domain || span->end_ticks > f->dev_end) f->dev_end = span->end_ticks;
      f->domain = q->domain;
    } else {
      g_stats.unmapped++; /* another device's span: not folded into this frame's GPU start and end */
    }
  }
  strobe__mutex_unlock(&g_lock);
  return 0;
}

/* >>marks */
int strobe_gpu_frame_mark(uint64_t frame_id, strobe_gpu_instant which, uint64_t host_ticks) {
  if (!frame_id || !strobe_gpu_instant_name((uint32_t)which)) return STROBE_EINVAL;
  int rec = recording(), lv = live();
  if (!rec && !lv) return 0;
  if (!host_ticks) host_ticks = strobe__now();
  if (rec) {
    uint64_t w[1] = {frame_id};
    uint32_t x[1] = {(uint32_t)which};
    strobe__emit_gpu_event(host_ticks, STROBE__GPUEV_MARK, w, x, 1);
  }
  if (!lv) return 0;
  strobe__mutex_lock(&g_lock);
  live_frame *f = frame_slot(frame_id);
  switch (which) {
    case STROBE_GPU_CPU_END: f->cpu_end = host_ticks; break;
    case STROBE_GPU_SUBMIT: f->submit = host_ticks; break;
    case STROBE_GPU_FENCE_SEEN:
      f->fence_seen = host_ticks;
      if (!f->closed) close_frame(f);
      break;
  }
  strobe__mutex_unlock(&g_lock);
  return 0;
}

int strobe_gpu_query_frame(uint64_t frame_id, strobe_gpu_frame *out) {
  if (out) memset(out, 0, sizeof *out);
  if (!out || !frame_id) return STROBE_EINVAL;
  int rc = STROBE_ERANGE;
  strobe__mutex_lock(&g_lock);
  const live_frame *f = &g_frames[frame_id % LIVE_FRAMES];
  if (f->frame_id == frame_id) {
    *out = f->closed ? f->snap : snapshot(f);
    out->late_spans = f->late;
    out->spans = f->spans;
    rc = 0;
  }
  strobe__mutex_unlock(&g_lock);
  return rc;
}

strobe_gpu_stats strobe_gpu_query_stats(void) {
  strobe__mutex_lock(&g_lock);
  strobe_gpu_stats s = g_stats;
  strobe__mutex_unlock(&g_lock);
  s.spans_refused = __atomic_load_n(&g_refused, __ATOMIC_RELAXED);
  return s;
}

/* >>sessions (probe/probe.h >>gpu events) */
void strobe__gpu_live_hold(int delta) { __atomic_fetch_add(&g_live, delta, __ATOMIC_RELAXED); }

uint64_t strobe__gpu_frames_seq(void) {
  strobe__mutex_lock(&g_lock);
  uint64_t s = g_seq;
  strobe__mutex_unlock(&g_lock);
  return s;
}

uint32_t strobe__gpu_frames_since(uint64_t seq, strobe_gpu_frame *out, uint32_t max, uint64_t *missed) {
  strobe__mutex_lock(&g_lock);
  uint64_t oldest = g_seq > CLOSED_FRAMES ? g_seq - CLOSED_FRAMES : 0;
  uint64_t first = seq < oldest ? oldest : seq;
  if (missed) *missed = first - seq;
  uint32_t n = 0;
  for (uint64_t s = first; s < g_seq && n < max; s++) out[n++] = g_closed[s % CLOSED_FRAMES];
  strobe__mutex_unlock(&g_lock);
  return n;
}
