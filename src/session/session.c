/*
 * session.c — profiling sessions (docs/sessions.md): start, read, end and cancel;
 * whole-operation admission at completion; bounded sample rings sharing one
 * payload per operation; remembered ended ids; and report snapshots copied
 * under the collector's short lock, everything else done after it.
 *
 * Must never: wait for application work, request a frame, layout or input,
 * replay history from before a session's start, or let one session's end
 * touch another's state.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/frame_rate.h"
#include "analyze/percentile.h"
#include "platform/clock.h"
#include "probe/probe.h"
#include "session/report.h"

/* >>admission (lock held) */
/* Whether session s looks at operations of this kind and window at all. */
static int session_covers(const strobe__session *s, uint8_t kind, int devtools) {
  return s->active && (s->kinds & STROBE_KIND_BIT(kind)) && (!devtools || s->include_devtools);
}

/* Whether session s keeps an operation: whole, started at or after its start,
 * of a kind and window it covers. */
static int session_admits(const strobe__session *s, uint8_t kind, int devtools, uint64_t start) {
  return session_covers(s, kind, devtools) && start >= s->start;
}

/* Counts why an active session does not keep an operation: its kind first,
 * then its window, then the start boundary (each is counted once). */
static void count_exclusion(strobe__session *s, uint8_t kind, int devtools) {
  if (!(s->kinds & STROBE_KIND_BIT(kind)))
    s->kind_excluded++;
  else if (devtools && !s->include_devtools)
    s->devtools_excluded++;
  else /* crossed the start boundary: excluded, counted once it completes */
    s->boundary_excluded++;
}

/* An operation's end time is taken before the lock (the wait is not its
 * time), so a session can start between its end and its publication: it
 * completed before that session existed, which neither admits nor counts it. */
static int ended_before(const strobe__session *s, uint64_t end) { return end < s->start; }

int strobe__admissible(const strobe_collector *c, uint8_t kind, int devtools, uint64_t start) {
  STROBE_ASSERT(strobe__mutex_held(&c->lock));
  for (int k = 0; k < STROBE_MAX_SESSIONS; k++)
    if (session_admits(&c->sessions[k], kind, devtools, start)) return 1;
  return 0;
}

/* Counts a pass that counts in frame rates in its window's rate
 * (docs/sessions.md §Frame rate): by declared window id, whichever window
 * slot carried it. Lock held. */
static void count_pass(strobe__session *s, strobe__name *window, uint64_t start) {
  strobe__window_rate *e = NULL;
  for (uint32_t i = 0; i < s->nrates && !e; i++)
    if (s->rates[i].window->len == window->len && !memcmp(s->rates[i].window->text, window->text, window->len))
      e = &s->rates[i];
  if (!e) {
    if (s->nrates == STROBE_MAX_WINDOWS) {
      s->passes_untracked++; /* the bound cut it: counted, in no rate */
      return;
    }
    e = &s->rates[s->nrates++];
    *e = (strobe__window_rate){strobe__name_ref(window), 0, start, start};
  }
  e->passes++;
  if (start < e->first) e->first = start;
  if (start > e->last) e->last = start;
}

uint32_t strobe__publish_sample(strobe_collector *c, strobe__sample *smp) {
  STROBE_ASSERT(strobe__mutex_held(&c->lock));
  uint32_t admitted = 0;
  for (int k = 0; k < STROBE_MAX_SESSIONS; k++) {
    strobe__session *s = &c->sessions[k];
    if (!s->active || ended_before(s, smp->end)) continue;
    if (session_admits(s, smp->kind, smp->devtools, smp->start))
      admitted++;
    else
      count_exclusion(s, smp->kind, smp->devtools);
  }
  if (!admitted) return 0;
  smp->refs = admitted;
  for (int k = 0; k < STROBE_MAX_SESSIONS; k++) {
    strobe__session *s = &c->sessions[k];
    if (!session_admits(s, smp->kind, smp->devtools, smp->start)) continue;
    s->completed++;
    s->kind_completed[smp->kind]++;
    s->nesting_overflow += smp->nesting_overflow;
    if (smp->kind == STROBE_OP_PASS && strobe__sample_rendered(smp)) count_pass(s, smp->window, smp->start);
    if (s->count == s->max_samples) { /* oldest out */
      strobe__sample_unref(s->ring[s->head]);
      s->head = (s->head + 1) % s->max_samples;
      s->count--;
      s->dropped++;
    }
    s->ring[(s->head + s->count++) % s->max_samples] = smp;
  }
  return admitted;
}

void strobe__publish_unbuilt(strobe_collector *c, uint8_t kind, int devtools, uint64_t start, uint64_t end,
                             strobe__name *window, int rendered) {
  STROBE_ASSERT(strobe__mutex_held(&c->lock));
  for (int k = 0; k < STROBE_MAX_SESSIONS; k++) {
    strobe__session *s = &c->sessions[k];
    if (!s->active || ended_before(s, end)) continue;
    if (!session_admits(s, kind, devtools, start)) {
      count_exclusion(s, kind, devtools);
      continue;
    }
    s->completed++; /* admitted, but there is no payload to keep */
    s->kind_completed[kind]++;
    s->dropped++;
    if (kind == STROBE_OP_PASS && rendered) count_pass(s, window, start);
  }
}

void strobe__publish_idle(strobe_collector *c, uint8_t kind, int devtools, uint64_t start, uint64_t end) {
  STROBE_ASSERT(strobe__mutex_held(&c->lock));
  for (int k = 0; k < STROBE_MAX_SESSIONS; k++) {
    strobe__session *s = &c->sessions[k];
    if (!s->active || ended_before(s, end)) continue;
    if (session_admits(s, kind, devtools, start))
      s->idle++; /* it had nothing to do: not a sample, counted apart from completed */
    else
      count_exclusion(s, kind, devtools);
  }
}

void strobe__count_interleaved(strobe_collector *c, uint8_t kind, int devtools) {
  for (int k = 0; k < STROBE_MAX_SESSIONS; k++)
    if (session_covers(&c->sessions[k], kind, devtools)) c->sessions[k].interleaved++;
}

void strobe__count_abandoned(strobe_collector *c, uint8_t kind, int devtools) {
  STROBE_ASSERT(strobe__mutex_held(&c->lock));
  for (int k = 0; k < STROBE_MAX_SESSIONS; k++) {
    strobe__session *s = &c->sessions[k];
    if (!s->active) continue;
    if (!(s->kinds & STROBE_KIND_BIT(kind)))
      s->kind_excluded++;
    else if (devtools && !s->include_devtools)
      s->devtools_excluded++;
    else
      s->abandoned++;
  }
}

/* >>ids */
static void format_id(char out[STROBE_SESSION_ID_MAX], uint64_t number) {
  snprintf(out, STROBE_SESSION_ID_MAX, "profile_%" PRIu64, number);
}

static int parse_id(const char *id, uint64_t *number) {
  if (!id || strncmp(id, "profile_", 8)) return 0;
  const char *p = id + 8;
  if (*p < '1' || *p > '9') return 0;
  uint64_t n = 0;
  for (; *p; p++) {
    if (*p < '0' || *p > '9' || n > UINT64_MAX / 10 - 10) return 0;
    n = n * 10 + (uint64_t)(*p - '0');
  }
  *number = n;
  return 1;
}

/* Finds an active session by id for `owner`; returns its index or an error. Lock held. */
static int find_session(strobe_collector *c, const char *id, uint64_t owner) {
  STROBE_ASSERT(strobe__mutex_held(&c->lock));
  uint64_t number;
  if (!parse_id(id, &number)) return STROBE_EUNKNOWN_ID;
  for (int k = 0; k < STROBE_MAX_SESSIONS; k++) {
    strobe__session *s = &c->sessions[k];
    if (s->active && s->number == number) return s->owner == owner ? k : STROBE_ENOTOWNER;
  }
  for (int i = 0; i < STROBE_MAX_ENDED_IDS; i++)
    if (c->ended[i].number == number) {
      /* Another owner learns nothing about it, not even that it existed (docs/sessions.md §Bounds and lifecycle). */
      if (c->ended[i].owner != owner) return STROBE_ENOTOWNER;
      return c->ended[i].cancelled ? STROBE_ECANCELLED : STROBE_EENDED;
    }
  return STROBE_EUNKNOWN_ID;
}

/* Lock held. */
static void remember_ended(strobe_collector *c, const strobe__session *s, int cancelled) {
  STROBE_ASSERT(strobe__mutex_held(&c->lock));
  c->ended[c->ended_next] = (strobe__ended_id){s->number, s->owner, cancelled};
  c->ended_next = (c->ended_next + 1) % STROBE_MAX_ENDED_IDS;
}

/* Releases a session's retained samples, application-scope records and rates' window ids. Lock held. */
static void release_retained(strobe_collector *c, strobe__session *s) {
  STROBE_ASSERT(strobe__mutex_held(&c->lock));
  for (uint32_t i = 0; i < s->nrates; i++) strobe__name_unref(s->rates[i].window);
  for (uint32_t i = 0; i < s->count; i++) strobe__sample_unref(s->ring[(s->head + i) % s->max_samples]);
  for (uint32_t i = 0; i < s->app_count; i++) strobe__app_record_unref(s->app_ring[(s->app_head + i) % s->max_app]);
}

/* Releases a session's retained data and marks it inactive. Lock held. */
static void deactivate(strobe_collector *c, strobe__session *s) {
  STROBE_ASSERT(strobe__mutex_held(&c->lock));
  release_retained(c, s);
  free(s->ring);
  free(s->app_ring);
  if (s->active) strobe__gpu_live_hold(-1);
  memset(s, 0, sizeof *s);
  __atomic_store_n(&c->nactive, c->nactive - 1, __ATOMIC_RELAXED);
  __atomic_fetch_sub(&strobe__op_gate, STROBE__OPGATE_SESSION, __ATOMIC_RELAXED);
}

/* >>start */
int strobe_session_start(strobe_collector *c, const strobe_session_desc *opts, char id_out[STROBE_SESSION_ID_MAX]) {
  if (id_out) id_out[0] = 0;
  if (!STROBE__PROFILING) return STROBE_EFEATURE_DISABLED;
  if (!c || !id_out) return STROBE_EINVAL;
  strobe_session_desc o = opts ? *opts : (strobe_session_desc){0};
  if (o.max_samples == 0) o.max_samples = STROBE_DEFAULT_SAMPLES;
  if (o.max_samples > STROBE_MAX_SAMPLES) return STROBE_EINVAL;
  if (o.kinds & ~(uint32_t)STROBE_KINDS_ALL) return STROBE_EINVAL;
  if (o.kinds == 0) o.kinds = STROBE_KINDS_ALL;
  uint32_t max_app = o.max_samples < STROBE_MAX_APP_SCOPE_HISTORY ? o.max_samples : STROBE_MAX_APP_SCOPE_HISTORY;
  /* Measured once per collector, outside the lock: at most ~1 ms. */
  strobe__mutex_lock(&c->lock);
  int measure = c->overhead_ns == 0.0;
  strobe__mutex_unlock(&c->lock);
  if (measure) strobe_collector_measure_overhead(c);
  /* Outside the collector's lock: both take locks of the layers below. */
  uint64_t lost_base = strobe_query_event_stats().events_lost;
  strobe__drain_cost drain_base = strobe__drain_query_cost();
  strobe__sample **ring = calloc(o.max_samples, sizeof *ring);
  strobe__app_record **app_ring = calloc(max_app, sizeof *app_ring);
  if (!ring || !app_ring) {
    free(ring);
    free(app_ring);
    return STROBE_ENOMEM;
  }
  strobe__mutex_lock(&c->lock);
  int rc = 0;
  int slot = -1;
  for (int k = 0; k < STROBE_MAX_SESSIONS && slot < 0; k++)
    if (!c->sessions[k].active) slot = k;
  if (c->closed)
    rc = STROBE_ECLOSED;
  else if (slot < 0)
    rc = STROBE_ELIMIT;
  else {
    strobe__session *s = &c->sessions[slot];
    memset(s, 0, sizeof *s);
    s->active = 1;
    strobe__gpu_live_hold(1);
    s->gpu_seq = strobe__gpu_frames_seq();
    s->number = c->next_session++;
    s->owner = o.owner;
    s->max_samples = o.max_samples;
    s->max_app = max_app;
    s->include_devtools = o.include_devtools != 0;
    s->stage_runs = o.stage_runs != 0;
    s->kinds = o.kinds;
    s->start = strobe__now(); /* under the lock: ordered against every operation's admission */
    s->created = s->start;
    s->ring = ring;
    s->app_ring = app_ring;
    s->events_lost_base = lost_base;
    s->drain_base = drain_base;
    ring = NULL;
    app_ring = NULL;
    __atomic_store_n(&c->nactive, c->nactive + 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&strobe__op_gate, STROBE__OPGATE_SESSION, __ATOMIC_RELAXED); /* operations stop being idle */
    format_id(id_out, s->number);
  }
  strobe__mutex_unlock(&c->lock);
  free(ring);
  free(app_ring);
  return rc;
}

/* >>labels: a report's copy of every stage label it names (docs/sessions.md
 * §The label rule). Bounded (two per stage entry of its samples, one per
 * unfinished operation) and done with the snapshot, so the report never
 * reads a site again. */
static void copy_label(char out[STROBE_MAX_LABEL + 1], const char *text) {
  size_t n = strobe__label_len(text, STROBE__RULE_NAME);
  if (!n) { /* judged at entry too; a site rewritten since then still never leaks */
    text = STROBE_INVALID_LABEL;
    n = sizeof STROBE_INVALID_LABEL - 1;
  }
  memcpy(out, text, n);
  out[n] = 0;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static int cmp_site(const void *a, const void *b) {
  uint32_t x = ((const strobe__report_site *)a)->id, y = ((const strobe__report_site *)b)->id;
  return x < y ? -1 : x > y;
}

static int copy_sites(strobe_report *r) {
  size_t cap = 1 + r->nunfinished;
  for (uint32_t i = 0; i < r->nsamples; i++) cap += 2 * (size_t)r->samples[i]->nstages;
  uint32_t *ids = malloc(cap * sizeof *ids);
  if (!ids) return STROBE_ENOMEM;
  size_t n = 0;
  for (uint32_t i = 0; i < r->nsamples; i++)
    for (uint32_t k = 0; k < r->samples[i]->nstages; k++) {
      ids[n++] = r->samples[i]->stages[k].site;
      if (r->samples[i]->stages[k].parent) ids[n++] = r->samples[i]->stages[k].parent;
    }
  for (uint32_t i = 0; i < r->nunfinished; i++)
    if (r->unfinished[i].phase_site) ids[n++] = r->unfinished[i].phase_site;
  qsort(ids, n, sizeof *ids, cmp_u32); /* distinct ids, in order (bsearch below) */
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (!m || ids[m - 1] != ids[i]) ids[m++] = ids[i];
  r->sites = calloc(m ? m : 1, sizeof *r->sites);
  if (!r->sites) {
    free(ids);
    return STROBE_ENOMEM;
  }
  for (size_t i = 0; i < m; i++) {
    strobe__report_site *e = &r->sites[i];
    const strobe_site *site = strobe__site_get(ids[i]);
    e->id = ids[i];
    /* An interned name is content: its placeholder unless the application opted in (intern.c). */
    int withheld = 0;
    copy_label(e->name, site ? strobe__site_report_name(site, &withheld) : "unknown");
    e->withheld = (uint8_t)withheld;
    if (site && site->parent) copy_label(e->declared, site->parent);
  }
  r->nsites = (uint32_t)m;
  free(ids);
  return 0;
}

const strobe__report_site *strobe__report_site_of(const strobe_report *r, uint32_t id) {
  static const strobe__report_site unknown = {0, "unknown", "", 0};
  strobe__report_site key = {.id = id};
  const strobe__report_site *e = r->nsites ? bsearch(&key, r->sites, r->nsites, sizeof key, cmp_site) : NULL;
  return e ? e : &unknown;
}

/* >>snapshot: copy under the lock; references, not payloads. */
/* The session's settings and counts, the collector's, and the cost figures,
 * copied into a report. */
static void snapshot_counts(strobe_report *r, strobe_collector *c, const strobe__session *s, uint64_t at, int final) {
  r->final = final;
  r->max_samples = s->max_samples;
  r->max_app = s->max_app;
  r->include_devtools = s->include_devtools;
  r->stage_runs = s->stage_runs;
  r->kinds = s->kinds;
  r->created = s->created;
  r->start = s->start;
  r->resets = s->resets;
  r->at = at;
  r->epoch = c->epoch;
  r->ns_per_tick = strobe__clock()->ns_per_tick; /* calibrated by the caller, outside the lock */
  r->overhead_ns = c->overhead_ns;
  /* The cost figures and the loss while it ran (docs/recording.md, Cost
   * and Overflow); the calibration is the process's, measured at its start. */
  r->event_cost_ns = strobe__measure_cost().event_ns;
  strobe__drain_cost drain = strobe__drain_cost_since(&s->drain_base);
  r->drain_cpu_ns = drain.cpu_ns;
  r->drain_events = drain.events;
  r->events_lost = strobe_query_event_stats().events_lost - s->events_lost_base;
  r->overflow = strobe_query_desc().overflow;
  r->completed = s->completed;
  r->dropped = s->dropped;
  r->boundary_excluded = s->boundary_excluded;
  r->devtools_excluded = s->devtools_excluded;
  r->interleaved = s->interleaved;
  r->nesting_overflow = s->nesting_overflow;
  r->abandoned = s->abandoned;
  r->labels_replaced = __atomic_load_n(&c->labels_replaced, __ATOMIC_RELAXED);
  r->labels_refused = __atomic_load_n(&c->labels_refused, __ATOMIC_RELAXED);
  r->gauges_dropped = c->gauges_dropped;
  r->kind_excluded = s->kind_excluded;
  r->idle = s->idle;
  r->untracked_windows = c->untracked_windows;
  memcpy(r->process, c->process, sizeof r->process);
  r->pid = c->pid;
  r->uid = c->uid;
  r->remote = c->remote;
  memcpy(r->kind_completed, s->kind_completed, sizeof r->kind_completed);
  for (uint32_t i = 0; i < s->nrates; i++) {
    r->rates[i] = s->rates[i];
    strobe__name_ref(r->rates[i].window);
  }
  r->nrates = s->nrates;
  r->passes_untracked = s->passes_untracked;
}

/* The session's samples (newest first, referenced, not copied) and the
 * operations still in flight at `at` it covers. */
static void snapshot_operations(strobe_report *r, strobe_collector *c, const strobe__session *s, uint64_t at) {
  for (uint32_t i = 0; i < s->count; i++) { /* newest first */
    strobe__sample *smp = s->ring[(s->head + s->count - 1 - i) % s->max_samples];
    __atomic_fetch_add(&smp->refs, 1, __ATOMIC_RELAXED);
    r->samples[r->nsamples++] = smp;
  }
  for (int i = 0; i < STROBE_MAX_LIVE_OPS; i++) {
    const strobe__live_op *l = &c->ops[i];
    if (!l->used || l->abandoned || !session_covers(s, l->kind, l->devtools)) continue;
    uint64_t phase = __atomic_load_n(&l->phase, __ATOMIC_ACQUIRE);
    /* The phase is published without the lock, so one that began just after
     * `at` can be seen: it has run for no time yet, not a negative time. */
    uint64_t phase_start = l->start + strobe__phase_since(phase);
    if (phase_start > at) phase_start = at;
    r->unfinished[r->nunfinished++] = (strobe__unfinished_op){
        l->kind, l->handed_off, strobe__name_ref(l->window), l->seq, l->frame_id, strobe__phase_site(phase),
        l->start, phase_start, l->start < s->start};
  }
}

/* The session's application scopes (referenced) and those still open. */
static void snapshot_app_scopes(strobe_report *r, strobe_collector *c, const strobe__session *s) {
  r->app = s->app;
  for (uint32_t i = 0; i < s->app_count; i++) {
    strobe__app_record *a = s->app_ring[(s->app_head + s->app_count - 1 - i) % s->max_app];
    __atomic_fetch_add(&a->refs, 1, __ATOMIC_RELAXED);
    r->apps[r->napps++] = a;
  }
  for (int i = 0; i < STROBE_MAX_LIVE_APP_SCOPES; i++) {
    const strobe__live_app *a = &c->apps[i];
    if (!a->used || !strobe__session_sees_app(s, a->devtools)) continue;
    strobe__unfinished_app *u = &r->app_unfinished[r->napp_unfinished++];
    *u = (strobe__unfinished_app){"", a->lane, a->depth, strobe__name_ref(a->window), a->id, a->parent_id,
                                  a->start, a->start < s->start};
    memcpy(u->label, a->label, sizeof u->label);
  }
}

static strobe_report *snapshot(strobe_collector *c, const strobe__session *s, uint64_t at, int final) {
  STROBE_ASSERT(strobe__mutex_held(&c->lock));
  strobe_report *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->samples = malloc((s->count ? s->count : 1) * sizeof *r->samples);
  r->apps = malloc((s->app_count ? s->app_count : 1) * sizeof *r->apps);
  r->unfinished = malloc(STROBE_MAX_LIVE_OPS * sizeof *r->unfinished);
  r->app_unfinished = malloc(STROBE_MAX_LIVE_APP_SCOPES * sizeof *r->app_unfinished);
  if (!r->samples || !r->apps || !r->unfinished || !r->app_unfinished) {
    strobe_report_free(r);
    return NULL;
  }
  format_id(r->id, s->number);
  snapshot_counts(r, c, s, at, final);
  snapshot_operations(r, c, s, at);
  snapshot_app_scopes(r, c, s);
  if (copy_sites(r)) {
    strobe_report_free(r);
    return NULL;
  }
  memcpy(r->gauges, c->gauges, sizeof r->gauges);
  r->ngauges = c->ngauges;
  memcpy(r->run_keys, c->run_keys, sizeof r->run_keys);
  memcpy(r->run_values, c->run_values, sizeof r->run_values);
  r->nrun = c->nrun;
  return r;
}

static int read_or_end(strobe_collector *c, const char *id, uint64_t owner, strobe_report **out, int end) {
  if (!out) return STROBE_EINVAL;
  *out = NULL;
  if (!c || !id) return STROBE_EINVAL;
  (void)strobe__clock(); /* calibrates once (a few ms), never under the collector lock */
  strobe__mutex_lock(&c->lock);
  /* Under the lock, like a session's start: every timestamp published before
   * it (taken before its own lock) is then <= at, so no elapsed or age wraps. */
  uint64_t at = strobe__now();
  int k = find_session(c, id, owner);
  if (k < 0) {
    strobe__mutex_unlock(&c->lock);
    return k;
  }
  strobe__session *s = &c->sessions[k];
  uint64_t gpu_seq = s->gpu_seq;
  strobe_report *r = snapshot(c, s, at, end);
  if (r && end) {
    remember_ended(c, s, 0);
    deactivate(c, s);
  }
  strobe__mutex_unlock(&c->lock);
  if (!r) return STROBE_ENOMEM; /* the session is untouched */
  /* GPU frames closed since the session started or was reset (docs/gpu.md). */
  r->gpu_frames = malloc(STROBE__REPORT_GPU_FRAMES * sizeof *r->gpu_frames);
  if (r->gpu_frames) {
    r->ngpu = strobe__gpu_frames_since(gpu_seq, r->gpu_frames, STROBE__REPORT_GPU_FRAMES, &r->gpu_missed);
  } else {
    r->gpu_missed = strobe__gpu_frames_seq() - gpu_seq; /* none copied: said, never shown as none */
  }
  *out = r;
  return 0;
}

int strobe_session_read(strobe_collector *c, const char *id, uint64_t owner, strobe_report **out) {
  return read_or_end(c, id, owner, out, 0);
}

int strobe_session_stop(strobe_collector *c, const char *id, uint64_t owner, strobe_report **out) {
  return read_or_end(c, id, owner, out, 1);
}

int strobe_session_cancel_owner(strobe_collector *c, uint64_t owner) {
  if (!c) return STROBE_EINVAL;
  int n = 0;
  strobe__mutex_lock(&c->lock);
  for (int k = 0; k < STROBE_MAX_SESSIONS; k++) {
    strobe__session *s = &c->sessions[k];
    if (!s->active || s->owner != owner) continue;
    remember_ended(c, s, 1);
    deactivate(c, s);
    n++;
  }
  strobe__mutex_unlock(&c->lock);
  return n;
}

/* >>reset (docs/sessions.md §Reset): the session starts over in place. Lock held. */
static void reset_session(strobe_collector *c, strobe__session *s, uint64_t now) {
  STROBE_ASSERT(strobe__mutex_held(&c->lock));
  release_retained(c, s);
  /* Everything it accumulated goes; what identifies it stays. */
  strobe__session keep = *s;
  memset(s, 0, sizeof *s);
  s->active = 1;
  s->gpu_seq = strobe__gpu_frames_seq();
  s->number = keep.number;
  s->owner = keep.owner;
  s->max_samples = keep.max_samples;
  s->max_app = keep.max_app;
  s->include_devtools = keep.include_devtools;
  s->stage_runs = keep.stage_runs;
  s->kinds = keep.kinds;
  s->created = keep.created;
  s->ring = keep.ring;
  s->app_ring = keep.app_ring;
  s->resets = keep.resets + 1;
  s->start = now; /* operations already running cross this boundary: excluded when they complete */
}

int strobe_collector_reset(strobe_collector *c, const char *id, uint64_t owner) {
  if (!c) return STROBE_EINVAL;
  strobe__mutex_lock(&c->lock);
  uint64_t now = strobe__now(); /* under the lock, like a session's start */
  int n = 0;
  if (id) {
    n = find_session(c, id, owner);
    if (n >= 0) {
      reset_session(c, &c->sessions[n], now);
      n = 1;
    }
  } else {
    for (int k = 0; k < STROBE_MAX_SESSIONS; k++) {
      strobe__session *s = &c->sessions[k];
      if (!s->active || s->owner != owner) continue;
      reset_session(c, s, now);
      n++;
    }
  }
  strobe__mutex_unlock(&c->lock);
  return n;
}

int strobe_collector_query_session_count(strobe_collector *c) {
  if (!c) return 0;
  strobe__mutex_lock(&c->lock);
  int n = c->nactive;
  strobe__mutex_unlock(&c->lock);
  return n;
}

/* >>report accessors */
void strobe_report_free(strobe_report *r) {
  if (!r) return;
  for (uint32_t i = 0; i < r->nsamples; i++) strobe__sample_unref(r->samples[i]);
  for (uint32_t i = 0; i < r->napps; i++) strobe__app_record_unref(r->apps[i]);
  for (uint32_t i = 0; i < r->nunfinished; i++) strobe__name_unref(r->unfinished[i].window);
  for (uint32_t i = 0; i < r->napp_unfinished; i++) strobe__name_unref(r->app_unfinished[i].window);
  for (uint32_t i = 0; i < r->nrates; i++) strobe__name_unref(r->rates[i].window);
  free(r->samples);
  free(r->apps);
  free(r->unfinished);
  free(r->app_unfinished);
  free(r->sites);
  free(r->gpu_frames);
  free(r);
}

strobe_report_status strobe_report_query_status(const strobe_report *r) {
  int done = r->nsamples + r->napps > 0;
  int running = r->nunfinished + r->napp_unfinished > 0;
  if (done) return running ? STROBE_REPORT_PARTIAL : STROBE_REPORT_COMPLETE;
  return running ? STROBE_REPORT_UNFINISHED : STROBE_REPORT_EMPTY;
}

void strobe__kind_baselines(const strobe_report *r, double *scratch, strobe__kind_baseline base[STROBE_OP_KIND_LIMIT]) {
  for (int kind = 0; kind < STROBE_OP_KIND_LIMIT; kind++) {
    size_t n = 0;
    for (uint32_t i = 0; i < r->nsamples; i++)
      if (r->samples[i]->kind == kind) scratch[n++] = strobe__ticks_ms(r, r->samples[i]->end - r->samples[i]->start);
    strobe__dist d = strobe__dist_of(scratch, n);
    base[kind] = (strobe__kind_baseline){n, d.p95};
  }
}

int strobe__unfinished_state(const strobe__kind_baseline *b, double elapsed_ms) {
  if (!b->n) return STROBE__NO_BASELINE;
  return elapsed_ms > STROBE_STALL_FACTOR * b->p95 ? STROBE__STALLED : STROBE__IN_FLIGHT;
}

uint64_t strobe__count_stalled(const strobe_report *r, const strobe__kind_baseline base[STROBE_OP_KIND_LIMIT]) {
  uint64_t n = 0;
  for (uint32_t i = 0; i < r->nunfinished; i++) {
    const strobe__unfinished_op *u = &r->unfinished[i];
    n += strobe__unfinished_state(&base[u->kind], strobe__ticks_ms(r, r->at - u->start)) == STROBE__STALLED;
  }
  return n;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The window's entry in the report's rates, or NULL. */
static const strobe__window_rate *rate_of(const strobe_report *r, const char *window, size_t window_len) {
  if (!window) return r->nrates == 1 ? &r->rates[0] : NULL;
  for (uint32_t i = 0; i < r->nrates; i++)
    if (r->rates[i].window->len == window_len && !memcmp(r->rates[i].window->text, window, window_len))
      return &r->rates[i];
  return NULL;
}

/* The steady rate of one window from the returned samples: the median
 * interval between consecutive starts of its passes that count. */
static int steady_of(const strobe_report *r, const strobe__name *window, strobe_frame_rate *out) {
  size_t cap = r->nsamples ? r->nsamples : 1;
  uint64_t *starts = malloc(cap * sizeof *starts);
  double *t = malloc(2 * cap * sizeof *t); /* pass starts in ns, then the intervals */
  if (!starts || !t) {
    free(starts);
    free(t);
    return STROBE_ENOMEM;
  }
  size_t passes = 0;
  for (uint32_t i = 0; i < r->nsamples; i++) {
    const strobe__sample *s = r->samples[i];
    if (s->kind != STROBE_OP_PASS || !strobe__sample_rendered(s)) continue;
    if (s->window->len != window->len || memcmp(s->window->text, window->text, window->len)) continue;
    starts[passes++] = s->start;
  }
  qsort(starts, passes, sizeof *starts, cmp_u64);
  if (passes >= 2) {
    for (size_t i = 0; i < passes; i++) t[i] = strobe__ticks_ms(r, starts[i] - starts[0]) * 1e6;
    strobe__frame_rate fr = strobe__frame_rate_of(t, passes, t + cap); /* analyze/frame_rate.h: ns */
    out->intervals = fr.frames;
    out->median_interval_ms = fr.median_interval_ns / 1e6;
    out->steady_passes_per_second = fr.fps_steady;
  }
  free(starts);
  free(t);
  return 0;
}

int strobe__report_frame_rate(const strobe_report *r, const char *window, size_t window_len,
                              strobe_frame_rate *out) {
  memset(out, 0, sizeof *out);
  const strobe__window_rate *e = rate_of(r, window, window_len);
  out->windows = window ? e != NULL : r->nrates;
  if (!e) { /* no pass of it; or, for every window, none or several: their passes, never a summed rate */
    for (uint32_t i = 0; !window && i < r->nrates; i++) out->passes += r->rates[i].passes;
    return 0;
  }
  out->passes = e->passes;
  if (e->passes >= 2 && e->last > e->first) {
    /* First to last over every pass the session counted (analyze/frame_rate.h's definition, from the two ends). */
    out->valid = 1;
    out->first_to_last_span_ms = strobe__ticks_ms(r, e->last - e->first);
    out->passes_per_second = (double)(e->passes - 1) / (out->first_to_last_span_ms / 1e3);
  }
  return out->valid ? steady_of(r, e->window, out) : 0; /* no rate: no steady one either */
}

int strobe_report_query_frame_rate(const strobe_report *r, const char *window, strobe_frame_rate *out) {
  if (!r || !out) return STROBE_EINVAL;
  return strobe__report_frame_rate(r, window, window ? strlen(window) : 0, out);
}

strobe_report_counts strobe_report_query_counts(const strobe_report *r) {
  strobe_report_counts k = {r->completed, r->nsamples, r->dropped, r->boundary_excluded, r->nunfinished,
                            r->kind_excluded, 0, r->idle};
  double *scratch = malloc((r->nsamples ? r->nsamples : 1) * sizeof *scratch);
  if (scratch) { /* without memory, no unfinished entry is called stalled */
    strobe__kind_baseline base[STROBE_OP_KIND_LIMIT];
    strobe__kind_baselines(r, scratch, base);
    k.unfinished_stalled = strobe__count_stalled(r, base);
    free(scratch);
  }
  return k;
}

const char *strobe_report_query_id(const strobe_report *r) { return r->id; }

int strobe_report_query_run_info(const strobe_report *r, uint32_t index, const char **key, const char **value) {
  if (!r || !key || !value) return STROBE_EINVAL;
  if (index >= r->nrun) return STROBE_ERANGE;
  *key = r->run_keys[index];
  *value = r->run_values[index];
  return 0;
}

int strobe_report_query_stages(const strobe_report *r, strobe_stage_summary *out, int max) {
  if (!r || (max > 0 && !out)) return STROBE_EINVAL;
  /* Distinct (stage, run-time parent) pairs in order of first appearance
   * (newest sample first), every one of them: the count returned is never
   * cut, so a caller (and the JSON, STROBE_MAX_STAGE_SUMMARY) knows what it left out. */
  size_t cap = 1;
  for (uint32_t i = 0; i < r->nsamples; i++) cap += r->samples[i]->nstages;
  uint32_t *pairs = malloc(2 * cap * sizeof *pairs); /* site, parent */
  double *values = malloc((r->nsamples ? r->nsamples : 1) * sizeof *values);
  if (!pairs || !values) {
    free(pairs);
    free(values);
    return STROBE_ENOMEM;
  }
  int npairs = 0;
  for (uint32_t i = 0; i < r->nsamples; i++)
    for (uint32_t k = 0; k < r->samples[i]->nstages; k++) {
      const strobe__stage_agg *a = &r->samples[i]->stages[k];
      /* Consecutive samples usually list the same stages: check the same position first. */
      if ((int)k < npairs && pairs[2 * k] == a->site && pairs[2 * k + 1] == a->parent) continue;
      int seen = 0;
      for (int m = 0; m < npairs && !seen; m++) seen = pairs[2 * m] == a->site && pairs[2 * m + 1] == a->parent;
      if (!seen) {
        pairs[2 * npairs] = a->site;
        pairs[2 * npairs++ + 1] = a->parent;
      }
    }
  for (int m = 0; m < npairs && m < max; m++) {
    size_t n = 0;
    uint64_t not_in_declared = 0, incomplete = 0;
    for (uint32_t i = 0; i < r->nsamples; i++)
      for (uint32_t k = 0; k < r->samples[i]->nstages; k++) {
        const strobe__stage_agg *a = &r->samples[i]->stages[k];
        if (a->site != pairs[2 * m] || a->parent != pairs[2 * m + 1]) continue;
        values[n++] = strobe__ticks_ms(r, a->total);
        not_in_declared += a->not_in_declared;
        incomplete += a->parent_incomplete != 0;
      }
    strobe__dist d = strobe__dist_of(values, n);
    const strobe__report_site *site = strobe__report_site_of(r, pairs[2 * m]);
    out[m] = (strobe_stage_summary){site->name,
                                    pairs[2 * m + 1] ? strobe__report_site_of(r, pairs[2 * m + 1])->name : NULL,
                                    d.n,
                                    d.p50,
                                    d.p95,
                                    d.p99,
                                    d.max,
                                    site->declared[0] ? site->declared : NULL,
                                    not_in_declared,
                                    incomplete};
  }
  free(pairs);
  free(values);
  return npairs;
}
