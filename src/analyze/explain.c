/*
 * explain.c — why a frame took as long as it did (strobe/explain.h,
 * docs/explain.md): the frame model's frames and stages, with what the
 * capture says about the time inside them (stage runs, context switches,
 * sampled stacks, GPU frame instants), each part set against the same
 * series' typical frame.
 *
 * Owns: the stage runs of every frame (bounded, the rest counted), their
 * on-CPU / blocked / preempted split, the norms each part is compared with
 * and the rule that says a part exceeded its norm. Must never: say what a
 * frame is or which spans it owns (the frame model says: strobe/frames.h),
 * report a part or a split it has no data for as zero (it is unknown), or
 * carry a run-time name into anything but the local caller's hands.
 *
 * Contents: >>state >>read >>runs >>norms >>parts >>functions >>explain
 * >>excess >>stall >>queries
 */
#include "strobe/explain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/gpu_frames.h"
#include "analyze/percentile.h"
#include "analyze/samples.h"

/* >>state */
#define NONE STROBE_FRAMES_NONE
#define DEFAULT_MAX_RUNS (1u << 19) /* strobe/explain.h: about 80 MiB */
#define DEFAULT_MAX_SAMPLES (1u << 21) /* 48 MiB */
#define DEFAULT_TOP 3u
#define MAX_TOP 16u
#define MAX_OPEN 4096u /* stages open at once across threads, tracked for unfinished frames (16 a thread is the
                        * probe's bound: 256 threads); past it a frame's open stage is not known */

typedef struct run {
  uint32_t frame, site, thread, parent; /* parent: the index of the run it is nested in, NONE at the top */
  uint32_t depth;
  uint64_t begin, end;                  /* ticks */
  uint64_t off, blocked, lock;          /* ticks off CPU inside it, of them blocked, and of those waiting for a lock */
  int covered;                          /* the switches cover it */
  int64_t self, self_off, self_blocked, self_lock; /* ticks: the same less its child stage runs' */
  int self_covered;                     /* it and its child runs are covered */
} run;

/* One (frame, stage, run-time parent): its runs summed, self time split. */
typedef struct row {
  uint32_t frame, site, parent;
  double total_ns, self_ns, off_ns, blocked_ns; /* self_ns: its runs minus its child stage runs */
  double lock_ns;                               /* of blocked_ns, waiting for a lock */
  int covered;                                  /* every run of it and of its children is covered */
} row;

typedef struct top_split {
  uint64_t off, blocked;  /* ticks */
  int covered;
} top_split;

/* A lock wait (strobe/lock.h): from a thread's LOCK_WAIT to its LOCK_ACQUIRED of the same lock; pending until then. */
typedef struct wait_iv {
  uint32_t thread, site;
  uint64_t begin, end; /* ticks; end 0 while pending */
} wait_iv;

/* A stage run still open at the point the read has reached: at the end, those of unfinished frames. */
typedef struct open_run {
  uint32_t thread, depth, site;
  uint64_t begin; /* ticks */
} open_run;

typedef struct smp_rec {
  uint64_t tid, ticks;
  uint32_t func; /* the leaf frame's function id */
} smp_rec;

struct strobe_explain {
  strobe_explain_desc desc;
  strobe_frames *fx;
  strobe__samples smp;
  strobe__gpu_data gpu;
  run *runs;
  uint32_t nruns, cap_runs;
  row *rows;
  uint32_t nrows;
  smp_rec *samples;
  uint32_t nsamples, cap_samples;
  uint64_t *tids;               /* OS thread id by capture thread index */
  uint32_t nthreads;
  uint32_t *canon;              /* site id -> the stage's model id (the lowest of its name); 0: not a stage */
  uint8_t *interned;            /* site id -> 1 when its name is a run-time one (STROBE_SITE_INTERNED): content */
  char **names;                 /* site names (stages) and function names, copied: the capture is closed */
  uint32_t nsites, nfuncs;
  char **funcs;
  double ns_per_tick;
  uint64_t epoch_ticks;
  top_split *top;               /* per frame: its top-level stage runs on its own thread, split */
  uint8_t *cut;                 /* per frame: 1 when a run of it was cut (max_runs): its splits are unknown */
  uint64_t until;               /* the capture's end when the sampler still ran then (samples.h) */
  uint64_t end_ticks;           /* the capture's end (its footer, else its last event) */
  open_run *open;               /* stage runs open at the capture's end (strobe_explain_stall) */
  uint32_t nopen, cap_open;
  uint64_t open_cut;            /* stage BEGINs past MAX_OPEN open at once: not tracked */
  wait_iv *waits;               /* lock waits, ended ones sorted by (thread, begin) after the read */
  uint32_t nwaits, cap_waits;
  strobe_explain_coverage cov;
  strobe_explain_part *parts;   /* the last explanation's */
  uint32_t cap_parts;
  strobe_explain_function *fns;
  uint32_t nfns, cap_fns;
  double *vals;                 /* scratch for norms */
  size_t cap_vals;
  int failed;
};

static const char *const g_part_names[] = {
#define STROBE__EXPLAIN_PART_NAME(id, value, name) [value] = name,
    STROBE_EXPLAIN_PARTS(STROBE__EXPLAIN_PART_NAME)
#undef STROBE__EXPLAIN_PART_NAME
};
static const char *const g_cause_names[] = {
#define STROBE__EXPLAIN_CAUSE_NAME(id, value, name) [value] = name,
    STROBE_EXPLAIN_CAUSES(STROBE__EXPLAIN_CAUSE_NAME)
#undef STROBE__EXPLAIN_CAUSE_NAME
};
const char *strobe_explain_part_name(uint32_t kind) {
  return kind < STROBE_EXPLAIN_PART_LIMIT ? g_part_names[kind] : "unknown";
}
const char *strobe_explain_cause_name(uint32_t cause) {
  return cause < STROBE_EXPLAIN_CAUSE_LIMIT ? g_cause_names[cause] : "unknown";
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t size) {
  if (need <= *cap) return 0;
  uint32_t c = *cap ? *cap : 64;
  while (c < need) c *= 2;
  void *q = realloc(*p, (size_t)c * size);
  if (!q) return -1;
  *p = q;
  *cap = c;
  return 0;
}

/* >>read: the second read, after the model: stage runs, switches, samples, GPU data. */
static void add_end(strobe_explain *e, const strobe_capture *c, const strobe_capture_record *r) {
  const strobe_capture_site *s = strobe_capture_query_site(c, r->site);
  if (r->unwound || !s || s->kind != STROBE_SITE_STAGE) return;
  double begin_ns = r->time_ns - r->duration_ns;
  uint32_t frame = strobe_frames_owner(e->fx, r->thread, begin_ns);
  if (frame == NONE) return;
  e->cov.runs++;
  if (e->nruns >= e->desc.max_runs || grow((void **)&e->runs, &e->cap_runs, e->nruns + 1, sizeof *e->runs)) {
    e->cov.runs_cut++;
    e->cut[frame] = 1;
    return;
  }
  uint64_t dur = (uint64_t)(r->duration_ns / e->ns_per_tick + 0.5);
  e->runs[e->nruns++] = (run){.frame = frame, .site = r->site, .thread = r->thread, .parent = NONE,
                              .depth = r->depth, .begin = r->ticks > dur ? r->ticks - dur : 0, .end = r->ticks};
}

/* Tracks the stage runs open now: a BEGIN of a stage opens one; an END (or a LOST marker, or the thread's end)
 * closes those at its depth and deeper on its thread. */
static void track_open(strobe_explain *e, const strobe_capture *c, const strobe_capture_record *r) {
  if (r->type == STROBE_REC_BEGIN) {
    const strobe_capture_site *s = strobe_capture_query_site(c, r->site);
    if (!s || s->kind != STROBE_SITE_STAGE) return;
    if (e->nopen >= MAX_OPEN || grow((void **)&e->open, &e->cap_open, e->nopen + 1, sizeof *e->open)) {
      e->open_cut++;
      return;
    }
    e->open[e->nopen++] = (open_run){r->thread, r->depth, r->site, r->ticks};
    return;
  }
  uint32_t keep = 0, from = r->type == STROBE_REC_THREAD_END ? 0 : r->type == STROBE_REC_LOST ? r->depth + 1 : r->depth;
  for (uint32_t i = 0; i < e->nopen; i++)
    if (e->open[i].thread != r->thread || e->open[i].depth < from) e->open[keep++] = e->open[i];
  e->nopen = keep;
}

/* LOCK_WAIT opens a wait on its thread; LOCK_ACQUIRED of the same lock there ends it. Waits past max_runs are
 * counted in waits_cut: their blocked time is then of no known kind. */
static void track_lock(strobe_explain *e, const strobe_capture_record *r) {
  if (r->type == STROBE_REC_LOCK_ACQUIRED) {
    for (uint32_t i = e->nwaits; i-- > 0;)
      if (!e->waits[i].end && e->waits[i].thread == r->thread && e->waits[i].site == r->site) {
        e->waits[i].end = r->ticks > e->waits[i].begin ? r->ticks : e->waits[i].begin;
        return;
      }
    return;
  }
  e->cov.lock_waits = 1;
  if (e->nwaits >= e->desc.max_runs || grow((void **)&e->waits, &e->cap_waits, e->nwaits + 1, sizeof *e->waits)) {
    e->cov.waits_cut++;
    return;
  }
  e->waits[e->nwaits++] = (wait_iv){r->thread, r->site, r->ticks, 0};
}

static int by_thread_begin_wait(const void *x, const void *y) {
  const wait_iv *a = x, *b = y;
  if (a->thread != b->thread) return a->thread < b->thread ? -1 : 1;
  return a->begin < b->begin ? -1 : a->begin > b->begin;
}

/* Blocked ticks of OS thread tid inside [begin, end) while it waited for a lock (the waits on capture thread th). */
static uint64_t lock_blocked(const strobe_explain *e, uint32_t th, uint64_t tid, uint64_t begin, uint64_t end) {
  uint32_t lo = 0, hi = e->nwaits;
  while (lo < hi) { /* the first wait of the thread */
    uint32_t mid = lo + (hi - lo) / 2;
    if (e->waits[mid].thread < th) lo = mid + 1;
    else hi = mid;
  }
  uint64_t sum = 0, off, blocked;
  for (uint32_t i = lo; i < e->nwaits && e->waits[i].thread == th && e->waits[i].begin < end; i++) {
    uint64_t a = e->waits[i].begin > begin ? e->waits[i].begin : begin, b = e->waits[i].end < end ? e->waits[i].end : end;
    if (b > a && strobe__samples_off_cpu(&e->smp, e->cov.switches, e->until, tid, a, b, &off, &blocked)) sum += blocked;
  }
  return sum;
}

static void add_sample(strobe_explain *e, const strobe_capture_record *r) {
  if (!r->sample->nframes) return;
  if (e->nsamples >= e->desc.max_samples ||
      grow((void **)&e->samples, &e->cap_samples, e->nsamples + 1, sizeof *e->samples)) {
    e->cov.samples_cut++;
    return;
  }
  e->samples[e->nsamples++] = (smp_rec){r->sample->os_tid, r->ticks, r->sample->frames[0]};
}

static int stage_table(strobe_explain *e, const strobe_capture *c) {
  e->nsites = strobe_capture_query_site_limit(c);
  e->canon = calloc((size_t)e->nsites + 1, sizeof *e->canon);
  e->names = calloc((size_t)e->nsites + 1, sizeof *e->names);
  e->interned = calloc((size_t)e->nsites + 1, 1);
  if (!e->canon || !e->names || !e->interned) return -1;
  for (uint32_t id = 1; id < e->nsites; id++) {
    const strobe_capture_site *s = strobe_capture_query_site(c, id);
    if (!s || s->kind != STROBE_SITE_STAGE) continue;
    e->canon[id] = id;
    for (uint32_t k = 1; k < id; k++) /* the model's id of a stage: the lowest of its name (strobe/frames.h) */
      if (e->canon[k] == k && e->names[k] && !strcmp(e->names[k], s->name)) {
        e->canon[id] = k;
        break;
      }
    if (!(e->names[id] = strdup(s->name))) return -1;
    e->interned[id] = (s->flags & STROBE_SITE_INTERNED) != 0;
  }
  return 0;
}

static int keep_tables(strobe_explain *e, const strobe_capture *c) {
  e->nthreads = strobe_capture_query_thread_count(c);
  e->tids = calloc((size_t)e->nthreads + 1, sizeof *e->tids);
  e->nfuncs = strobe_capture_query_function_limit(c);
  e->funcs = calloc((size_t)e->nfuncs + 1, sizeof *e->funcs);
  if (!e->tids || !e->funcs) return -1;
  for (uint32_t i = 0; i < e->nthreads; i++) { /* an index no record defined (a gap) has no thread: tid 0 */
    const strobe_capture_thread *th = strobe_capture_query_thread(c, i);
    e->tids[i] = th ? th->os_tid : 0;
  }
  for (uint32_t id = 1; id < e->nfuncs; id++) {
    const strobe_capture_function *f = strobe_capture_query_function(c, id);
    if (f && !(e->funcs[id] = strdup(f->name))) return -1;
  }
  strobe_capture_totals t = strobe_capture_query_totals(c);
  e->cov.switches = t.sample_switches && t.switches > 0;
  e->cov.samples = t.samples > 0;
  e->cov.sample_rate_hz = t.sample_rate_hz;
  e->until = t.sample_rate_hz ? t.end_ticks : 0;
  e->end_ticks = t.end_ticks;
  strobe__gpu_resolve(&e->gpu, (strobe_capture *)c);
  e->cov.gpu = strobe__gpu_present(&e->gpu);
  return e->gpu.failed || e->smp.failed ? -1 : 0;
}

static int read_details(strobe_explain *e, const char *path) {
  strobe_capture *c;
  e->cut = calloc((size_t)strobe_frames_query_count(e->fx) + 1, 1);
  if (!e->cut) return STROBE_ENOMEM;
  int rc = strobe_capture_open(path, &c);
  if (rc) return rc;
  e->ns_per_tick = strobe_capture_query_header(c)->ns_per_tick;
  e->epoch_ticks = strobe_capture_query_header(c)->epoch_ticks;
  uint64_t want = 1ull << STROBE_REC_SITE | 1ull << STROBE_REC_END | 1ull << STROBE_REC_SAMPLE |
                  1ull << STROBE_REC_SWITCH | 1ull << STROBE_REC_GPU_SPAN | 1ull << STROBE_REC_GPU_MARK |
                  1ull << STROBE_REC_CLOCK_PAIR | 1ull << STROBE_REC_BEGIN | 1ull << STROBE_REC_LOST |
                  1ull << STROBE_REC_THREAD_END | 1ull << STROBE_REC_LOCK_WAIT | 1ull << STROBE_REC_LOCK_ACQUIRED;
  strobe_capture_set_records(c, want);
  const strobe_capture_record *r;
  int n;
  while ((n = strobe_capture_next_batch(c, &r)) > 0) {
    for (int i = 0; i < n; i++) {
      if (r[i].type == STROBE_REC_LOCK_WAIT || r[i].type == STROBE_REC_LOCK_ACQUIRED) {
        track_lock(e, &r[i]);
      } else if (r[i].type == STROBE_REC_BEGIN || r[i].type == STROBE_REC_LOST || r[i].type == STROBE_REC_THREAD_END) {
        track_open(e, c, &r[i]);
      } else if (r[i].type == STROBE_REC_END) {
        if (e->nopen) track_open(e, c, &r[i]);
        add_end(e, c, &r[i]);
      } else if (r[i].type == STROBE_REC_SAMPLE || r[i].type == STROBE_REC_SWITCH) {
        strobe__samples_add(&e->smp, &r[i]);
        if (r[i].type == STROBE_REC_SAMPLE) add_sample(e, &r[i]);
      } else if (r[i].type != STROBE_REC_SITE) {
        strobe__gpu_record(&e->gpu, &r[i]);
      }
    }
  }
  if (n < 0) rc = n;
  if (!rc && (stage_table(e, c) || keep_tables(e, c))) rc = STROBE_ENOMEM;
  for (uint32_t i = 0; !rc && i < e->nruns; i++) e->runs[i].site = e->canon[e->runs[i].site];
  for (uint32_t i = 0; !rc && i < e->nopen; i++) e->open[i].site = e->open[i].site < e->nsites ? e->canon[e->open[i].site] : 0;
  strobe_capture_close(c);
  return rc;
}

/* >>runs: nesting, the split of each run, then one row per (frame, stage, run-time parent). */
static int by_thread_begin(const void *x, const void *y) {
  const run *a = x, *b = y;
  if (a->thread != b->thread) return a->thread < b->thread ? -1 : 1;
  if (a->begin != b->begin) return a->begin < b->begin ? -1 : 1;
  return a->depth < b->depth ? -1 : a->depth > b->depth;
}

/* A run's parent: the innermost run of the same frame on its thread that holds it (a stack per thread). */
static int nest_runs(strobe_explain *e) {
  uint32_t kept = 0; /* waits that never ended are dropped: no LOCK_ACQUIRED bounds them */
  for (uint32_t i = 0; i < e->nwaits; i++)
    if (e->waits[i].end) e->waits[kept++] = e->waits[i];
  e->nwaits = kept;
  if (e->nwaits) qsort(e->waits, e->nwaits, sizeof *e->waits, by_thread_begin_wait);
  if (e->nruns) qsort(e->runs, e->nruns, sizeof *e->runs, by_thread_begin);
  uint32_t *stack = malloc(((size_t)e->nruns + 1) * sizeof *stack), top = 0;
  if (!stack) return -1;
  for (uint32_t i = 0; i < e->nruns; i++) {
    run *r = &e->runs[i];
    if (i && r->thread != e->runs[i - 1].thread) top = 0;
    while (top && (e->runs[stack[top - 1]].end <= r->begin || e->runs[stack[top - 1]].frame != r->frame)) top--;
    r->parent = top ? stack[top - 1] : NONE;
    stack[top++] = i;
    uint64_t tid = r->thread < e->nthreads ? e->tids[r->thread] : 0;
    r->covered = strobe__samples_off_cpu(&e->smp, e->cov.switches, e->until, tid, r->begin, r->end, &r->off,
                                         &r->blocked);
    r->lock = r->covered && e->nwaits ? lock_blocked(e, r->thread, tid, r->begin, r->end) : 0;
    r->self = (int64_t)(r->end - r->begin), r->self_off = (int64_t)r->off, r->self_blocked = (int64_t)r->blocked;
    r->self_lock = (int64_t)r->lock;
    r->self_covered = r->covered;
  }
  for (uint32_t i = 0; i < e->nruns; i++) {
    const run *r = &e->runs[i];
    if (r->parent == NONE) continue;
    run *p = &e->runs[r->parent];
    p->self -= (int64_t)(r->end - r->begin), p->self_off -= (int64_t)r->off;
    p->self_blocked -= (int64_t)r->blocked, p->self_lock -= (int64_t)r->lock;
    p->self_covered &= r->covered;
  }
  free(stack);
  return 0;
}

static int by_row_key(const void *x, const void *y) {
  const row *a = x, *b = y;
  if (a->frame != b->frame) return a->frame < b->frame ? -1 : 1;
  if (a->site != b->site) return a->site < b->site ? -1 : 1;
  return a->parent < b->parent ? -1 : a->parent > b->parent;
}

/* Each frame's top-level stage runs on the thread it began on: what its time outside stages leaves out. */
static int build_top(strobe_explain *e) {
  uint32_t n = strobe_frames_query_count(e->fx);
  e->top = malloc(((size_t)n + 1) * sizeof *e->top);
  if (!e->top) return -1;
  for (uint32_t i = 0; i < n; i++) e->top[i] = (top_split){0, 0, 1};
  for (uint32_t i = 0; i < e->nruns; i++) {
    const run *r = &e->runs[i];
    if (r->parent != NONE || r->thread != strobe_frames_query_frame(e->fx, r->frame)->thread) continue;
    top_split *t = &e->top[r->frame];
    t->off += r->off, t->blocked += r->blocked, t->covered &= r->covered;
  }
  return 0;
}

static int build_rows(strobe_explain *e) {
  if (nest_runs(e) || build_top(e)) return -1;
  row *v = malloc(((size_t)e->nruns + 1) * sizeof *v);
  if (!v) return -1;
  double k = e->ns_per_tick;
  for (uint32_t i = 0; i < e->nruns; i++) {
    const run *r = &e->runs[i];
    v[i] = (row){r->frame, r->site, r->parent == NONE ? 0 : e->runs[r->parent].site, (double)(r->end - r->begin) * k,
                 (double)r->self * k, (double)r->self_off * k, (double)r->self_blocked * k,
                 (double)(r->self_lock > 0 ? r->self_lock : 0) * k, r->self_covered};
  }
  if (e->nruns) qsort(v, e->nruns, sizeof *v, by_row_key);
  uint32_t n = 0;
  for (uint32_t i = 0; i < e->nruns; i++) {
    if (n && !by_row_key(&v[n - 1], &v[i])) {
      row *w = &v[n - 1];
      w->total_ns += v[i].total_ns, w->self_ns += v[i].self_ns, w->off_ns += v[i].off_ns;
      w->blocked_ns += v[i].blocked_ns, w->lock_ns += v[i].lock_ns, w->covered &= v[i].covered;
    } else {
      v[n++] = v[i];
    }
  }
  e->rows = v;
  e->nrows = n;
  return 0;
}

static int by_tid_ticks(const void *x, const void *y) {
  const smp_rec *a = x, *b = y;
  if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
  return a->ticks < b->ticks ? -1 : a->ticks > b->ticks;
}

/* >>norms: a frame's peers are the ended frames of its kind and series (for operations that are not passes: of
 * its kind and window); a part's norm is its p50 over the peers that had it known. */
static int ended(const strobe_frame *f) { return f->state != STROBE_FRAME_UNFINISHED && f->end_ns > 0; }

static int peer_of(const strobe_frame *a, const strobe_frame *b) {
  if (a->kind != b->kind || a->series != b->series || !ended(b)) return 0;
  return a->series != NONE || !strcmp(a->window, b->window);
}

static strobe_explain_figure figure(int known, double ns, double *vals, size_t n) {
  strobe_explain_figure g = {known, known ? ns : 0, n ? strobe__rank_of(vals, n, 0.5) : 0, n};
  return g;
}

static const strobe_frame_stage *same_stage(const strobe_frame_stage *st, uint32_t n, const strobe_frame_stage *s) {
  for (uint32_t k = 0; k < n; k++)
    if (st[k].site == s->site && st[k].parent == s->parent && st[k].process == s->process) return &st[k];
  return NULL;
}

/* A stage's self time in its frame: its total less its child stages' (under it, in its process). */
static double stage_self(const strobe_frame_stage *st, uint32_t n, const strobe_frame_stage *s) {
  double self = s->total_ns;
  for (uint32_t k = 0; k < n && s->parent_known; k++)
    if (st[k].parent_known && st[k].parent == s->site && st[k].process == s->process) self -= st[k].total_ns;
  return self > 0 ? self : 0;
}

/* The split of stage s's self time in frame `frame`: 1 when every run of it there is covered. */
/* out: on CPU, blocked, preempted, and of blocked the time waiting for a lock. */
static int split_of(const strobe_explain *e, uint32_t frame, const strobe_frame_stage *s, double self, double out[4]) {
  uint32_t lo = 0, hi = e->nrows;
  while (lo < hi) { /* the first row of (frame, site) */
    uint32_t mid = lo + (hi - lo) / 2;
    const row *r = &e->rows[mid];
    if (r->frame < frame || (r->frame == frame && r->site < s->site)) lo = mid + 1;
    else hi = mid;
  }
  double off = 0, blocked = 0, lock = 0;
  int any = 0, covered = 1;
  for (uint32_t i = lo; i < e->nrows && e->rows[i].frame == frame && e->rows[i].site == s->site; i++) {
    const row *r = &e->rows[i];
    if (s->parent_known && r->parent != s->parent) continue;
    any = 1, covered &= r->covered, off += r->off_ns, blocked += r->blocked_ns, lock += r->lock_ns;
  }
  if (!any || !covered || e->cut[frame]) return 0;
  out[0] = self > off ? self - off : 0;
  out[1] = blocked;
  out[2] = off - blocked;
  out[3] = lock < blocked ? lock : blocked;
  return 1;
}

/* The gaps a frame may have: the hand-off between processes, the GPU's backlog and polling; NAN when unknown (a GPU
 * gap may be negative: docs/gpu.md's order checks count it, nothing clamps it). */
static const strobe__gpu_frame_rec *gpu_frame(const strobe_explain *e, const strobe_frame *f) {
  if (f->kind != STROBE_OP_PASS) return NULL;
  uint32_t lo = 0, hi = e->gpu.n_frames;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (e->gpu.frames[mid].frame_id < f->number) lo = mid + 1;
    else hi = mid;
  }
  return lo < e->gpu.n_frames && e->gpu.frames[lo].frame_id == f->number ? &e->gpu.frames[lo] : NULL;
}

static double gap_of(const strobe_explain *e, const strobe_frame *f, uint32_t kind) {
  if (kind == STROBE_EXPLAIN_HANDOFF) return f->handed_off_ns > 0 && f->resumed_ns > 0 ? f->resumed_ns - f->handed_off_ns : NAN;
  const strobe__gpu_frame_rec *g = gpu_frame(e, f);
  if (!g) return NAN;
  return kind == STROBE_EXPLAIN_GPU_BACKLOG ? g->gpu_begin - g->submit : g->fence_seen - g->gpu_end;
}

/* The wall time in no top-level stage and no hand-off gap; NAN when its stages are unknown or it never ended. */
static double outside_of(const strobe_explain *e, uint32_t i) {
  const strobe_frame *f = strobe_frames_query_frame(e->fx, i);
  if (ended(f) && !f->kind) return f->end_ns - f->begin_ns; /* a mark interval or top-level scope: no stages */
  if (!ended(f) || !f->detail) return NAN;
  uint32_t n;
  const strobe_frame_stage *st = strobe_frames_query_stages(e->fx, i, &n);
  double v = f->end_ns - f->begin_ns, gap = gap_of(e, f, STROBE_EXPLAIN_HANDOFF);
  if (gap > 0) v -= gap; /* NAN compares false */
  for (uint32_t k = 0; k < n; k++) {
    if (!st[k].parent_known) return NAN; /* which stages are top-level is not known */
    if (!st[k].parent) v -= st[k].total_ns;
  }
  return v > 0 ? v : 0; /* top-level stages on two threads at once may overlap */
}

/* The split of the time outside stages: the frame's interval on its thread less its top-level stage runs there.
 * Known for a frame that stayed on one thread of one process, switches covering it and those runs. */
static int outside_split(const strobe_explain *e, uint32_t i, double outside, double out[3]) {
  const strobe_frame *f = strobe_frames_query_frame(e->fx, i);
  if (isnan(outside) || f->end_thread != f->thread || f->handed_off_ns > 0 || !e->top[i].covered || e->cut[i])
    return 0;
  uint64_t a = e->epoch_ticks + (uint64_t)(f->begin_ns / e->ns_per_tick + 0.5);
  uint64_t b = e->epoch_ticks + (uint64_t)(f->end_ns / e->ns_per_tick + 0.5), off, blocked;
  uint64_t tid = f->thread < e->nthreads ? e->tids[f->thread] : 0;
  if (!strobe__samples_off_cpu(&e->smp, e->cov.switches, e->until, tid, a, b, &off, &blocked)) return 0;
  double k = e->ns_per_tick, o = (double)off - (double)e->top[i].off;
  double bl = (double)blocked - (double)e->top[i].blocked;
  out[1] = bl > 0 ? bl * k : 0;
  out[2] = o - bl > 0 ? (o - bl) * k : 0;
  out[0] = outside > out[1] + out[2] ? outside - out[1] - out[2] : 0;
  return 1;
}

/* >>parts */
#define VALS(e, k) ((e)->vals + (size_t)(k) * ((e)->cap_vals / 5))

/* Exceeding (docs/explain.md §Exceeding): more than twice its norm, by at least 5 % of the frame's wall time,
 * over two peers or more. */
static int exceeds(const strobe_explain_figure *g, double frame_wall) {
  double excess = g->ns - g->p50_ns;
  return g->known && g->n >= 2 && excess > g->p50_ns && excess >= 0.05 * frame_wall;
}

static void judge(strobe_explain_part *p, double frame_wall) {
  if (!p->wall.known || p->wall.n < 2) return;
  p->excess_ns = p->wall.ns - p->wall.p50_ns;
  p->exceeded = exceeds(&p->wall, frame_wall);
  if (!p->exceeded || (p->kind != STROBE_EXPLAIN_STAGE && p->kind != STROBE_EXPLAIN_OUTSIDE)) return;
  if (!p->on_cpu.known) {
    p->cause = STROBE_EXPLAIN_CAUSE_UNKNOWN;
    return;
  }
  const strobe_explain_figure *k[3] = {&p->on_cpu, &p->blocked, &p->preempted};
  static const uint32_t causes[3] = {STROBE_EXPLAIN_CAUSE_ON_CPU, STROBE_EXPLAIN_CAUSE_BLOCKED,
                                     STROBE_EXPLAIN_CAUSE_PREEMPTED};
  double most = 0;
  for (int i = 0; i < 3; i++) {
    double d = k[i]->ns - k[i]->p50_ns;
    if (exceeds(k[i], frame_wall)) p->causes |= 1u << causes[i];
    if (i == 0 || d > most) most = d, p->cause = causes[i];
  }
}

static void stage_part(strobe_explain *e, uint32_t fi, const strobe_frame_stage *s, const uint32_t *peers,
                       uint32_t npeers, strobe_explain_part *p) {
  uint32_t n, m, nw = 0, ns = 0;
  const strobe_frame_stage *st = strobe_frames_query_stages(e->fx, fi, &n);
  double self = stage_self(st, n, s), split[4], v[4];
  int known = split_of(e, fi, s, self, split);
  for (uint32_t k = 0; k < npeers; k++) {
    const strobe_frame_stage *pst = strobe_frames_query_stages(e->fx, peers[k], &m);
    const strobe_frame_stage *q = same_stage(pst, m, s);
    if (!q) continue;
    double qself = stage_self(pst, m, q);
    VALS(e, 0)[nw] = qself, VALS(e, 1)[nw++] = q->total_ns;
    if (!split_of(e, peers[k], q, qself, v)) continue;
    VALS(e, 2)[ns] = v[0], VALS(e, 3)[ns] = v[1], VALS(e, 4)[ns++] = v[2];
  }
  p->kind = STROBE_EXPLAIN_STAGE;
  p->site = s->site, p->parent = s->parent;
  p->name = s->site < e->nsites && e->names[s->site] ? e->names[s->site] : "?";
  p->content = s->site < e->nsites && e->interned[s->site];
  p->wall = figure(1, self, VALS(e, 0), nw);
  p->total = figure(1, s->total_ns, VALS(e, 1), nw);
  p->on_cpu = figure(known, split[0], VALS(e, 2), ns);
  p->blocked = figure(known, split[1], VALS(e, 3), ns);
  p->preempted = figure(known, split[2], VALS(e, 4), ns);
  p->blocked_lock_ns = known ? split[3] : 0;
}

/* A gap or the time outside stages: its value here and in each peer (NAN: unknown there), and the split of the time
 * outside stages. */
static void other_part(strobe_explain *e, uint32_t fi, uint32_t kind, const uint32_t *peers, uint32_t npeers,
                       strobe_explain_part *p) {
  const strobe_frame *f = strobe_frames_query_frame(e->fx, fi);
  int outside = kind == STROBE_EXPLAIN_OUTSIDE;
  double here = outside ? outside_of(e, fi) : gap_of(e, f, kind), split[3] = {0, 0, 0}, v3[3];
  int known = outside && outside_split(e, fi, here, split);
  uint32_t nv = 0, ns = 0;
  for (uint32_t k = 0; k < npeers; k++) {
    const strobe_frame *g = strobe_frames_query_frame(e->fx, peers[k]);
    double v = outside ? outside_of(e, peers[k]) : gap_of(e, g, kind);
    if (!isnan(v)) VALS(e, 0)[nv++] = v;
    if (!outside || !outside_split(e, peers[k], v, v3)) continue;
    VALS(e, 2)[ns] = v3[0], VALS(e, 3)[ns] = v3[1], VALS(e, 4)[ns++] = v3[2];
  }
  p->kind = kind;
  p->name = strobe_explain_part_name(kind);
  p->wall = figure(!isnan(here), here, VALS(e, 0), nv);
  p->on_cpu = figure(known, split[0], VALS(e, 2), ns);
  p->blocked = figure(known, split[1], VALS(e, 3), ns);
  p->preempted = figure(known, split[2], VALS(e, 4), ns);
}

/* >>functions: the leaf functions of the samples inside an exceeding stage's self time in this frame. */
static int by_u32(const void *x, const void *y) {
  uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
  return a < b ? -1 : a > b;
}

/* Appends the leaf function ids of the samples on run i's thread in [a, b) to *ids. */
static int samples_in(strobe_explain *e, uint64_t tid, uint64_t a, uint64_t b, uint32_t **ids, uint32_t *n,
                      uint32_t *cap) {
  smp_rec key = {tid, a, 0};
  uint32_t lo = 0, hi = e->nsamples;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (by_tid_ticks(&e->samples[mid], &key) < 0) lo = mid + 1;
    else hi = mid;
  }
  for (uint32_t i = lo; i < e->nsamples && e->samples[i].tid == tid && e->samples[i].ticks < b; i++) {
    if (grow((void **)ids, cap, *n + 1, sizeof **ids)) return -1;
    (*ids)[(*n)++] = e->samples[i].func;
  }
  return 0;
}

/* The samples of one run's self time: its interval less its child runs' (they follow it on its thread). */
static int run_samples(strobe_explain *e, uint32_t i, uint32_t **ids, uint32_t *n, uint32_t *cap) {
  const run *r = &e->runs[i];
  uint64_t tid = r->thread < e->nthreads ? e->tids[r->thread] : 0, at = r->begin;
  for (uint32_t k = i + 1; k < e->nruns && e->runs[k].thread == r->thread && e->runs[k].begin < r->end; k++) {
    if (e->runs[k].parent != i) continue;
    if (samples_in(e, tid, at, e->runs[k].begin, ids, n, cap)) return -1;
    at = e->runs[k].end;
  }
  return samples_in(e, tid, at, r->end, ids, n, cap);
}

static int top_functions(strobe_explain *e, uint32_t fi, strobe_explain_part *p) {
  uint32_t *ids = NULL, n = 0, cap = 0;
  for (uint32_t i = 0; i < e->nruns; i++) {
    const run *r = &e->runs[i];
    uint32_t parent = r->parent == NONE ? 0 : e->runs[r->parent].site;
    if (r->frame == fi && r->site == p->site && parent == p->parent && run_samples(e, i, &ids, &n, &cap))
      return free(ids), -1;
  }
  if (n) qsort(ids, n, sizeof *ids, by_u32);
  uint32_t first = e->nfns;
  for (uint32_t i = 0; i < n;) {
    uint32_t j = i;
    while (j < n && ids[j] == ids[i]) j++;
    strobe_explain_function fn = {ids[i] < e->nfuncs && e->funcs[ids[i]] ? e->funcs[ids[i]] : "?", j - i,
                                  e->cov.sample_rate_hz ? (double)(j - i) * 1e9 / e->cov.sample_rate_hz : 0};
    uint32_t at = e->nfns; /* insert in order of samples, keeping top_functions of them */
    while (at > first && e->fns[at - 1].samples < fn.samples) at--;
    if (at - first < e->desc.top_functions) {
      if (e->nfns - first < e->desc.top_functions) {
        if (grow((void **)&e->fns, &e->cap_fns, e->nfns + 1, sizeof *e->fns)) return free(ids), -1;
        e->nfns++;
      }
      memmove(&e->fns[at + 1], &e->fns[at], (e->nfns - 1 - at) * sizeof *e->fns);
      e->fns[at] = fn;
    }
    i = j;
  }
  free(ids);
  p->nfunctions = e->nfns - first;
  p->functions = (const strobe_explain_function *)(uintptr_t)first; /* an offset until the arrays are final */
  return 0;
}

/* >>explain */
static uint32_t find_peers(const strobe_explain *e, const strobe_frame *f, uint32_t *peers) {
  uint32_t n = 0, count = strobe_frames_query_count(e->fx);
  for (uint32_t i = 0; i < count; i++)
    if (peer_of(f, strobe_frames_query_frame(e->fx, i))) peers[n++] = i;
  return n;
}

static int add_part(strobe_explain *e, uint32_t *n) {
  if (grow((void **)&e->parts, &e->cap_parts, *n + 1, sizeof *e->parts)) return -1;
  memset(&e->parts[*n], 0, sizeof *e->parts);
  (*n)++;
  return 0;
}

static int build_parts(strobe_explain *e, uint32_t fi, const uint32_t *peers, uint32_t npeers, uint32_t *np) {
  const strobe_frame *f = strobe_frames_query_frame(e->fx, fi);
  uint32_t n;
  const strobe_frame_stage *st = strobe_frames_query_stages(e->fx, fi, &n);
  for (uint32_t k = 0; k < n; k++) {
    if (add_part(e, np)) return -1;
    stage_part(e, fi, &st[k], peers, npeers, &e->parts[*np - 1]);
  }
  uint32_t kinds[3] = {STROBE_EXPLAIN_OUTSIDE, STROBE_EXPLAIN_HANDOFF, STROBE_EXPLAIN_GPU_BACKLOG};
  for (uint32_t k = 0; k < 4; k++) {
    uint32_t kind = k < 3 ? kinds[k] : STROBE_EXPLAIN_GPU_POLLING;
    if (kind == STROBE_EXPLAIN_HANDOFF && !f->handed_off_ns) continue; /* no hand-off between processes */
    if (kind >= STROBE_EXPLAIN_GPU_BACKLOG && (!e->cov.gpu || f->kind != STROBE_OP_PASS)) continue;
    if (add_part(e, np)) return -1;
    other_part(e, fi, kind, peers, npeers, &e->parts[*np - 1]);
  }
  return 0;
}

int strobe_explain_frame(strobe_explain *e, uint32_t frame, strobe_frame_explanation *out) {
  if (!e || !out) return STROBE_EINVAL;
  memset(out, 0, sizeof *out);
  const strobe_frame *f = strobe_frames_query_frame(e->fx, frame);
  if (!f) return STROBE_ERANGE;
  uint32_t *peers = malloc(((size_t)strobe_frames_query_count(e->fx) + 1) * sizeof *peers), np = 0;
  if (!peers) return STROBE_ENOMEM;
  uint32_t npeers = find_peers(e, f, peers);
  for (uint32_t k = 0; k < npeers; k++) VALS(e, 0)[k] = strobe_frames_query_frame(e->fx, peers[k])->end_ns -
                                                       strobe_frames_query_frame(e->fx, peers[k])->begin_ns;
  strobe_explain_figure wall = figure(ended(f), f->end_ns - f->begin_ns, VALS(e, 0), npeers);
  e->nfns = 0;
  int rc = build_parts(e, frame, peers, npeers, &np);
  out->worst = NONE;
  for (uint32_t i = 0; i < np && !rc; i++) {
    strobe_explain_part *p = &e->parts[i];
    judge(p, wall.known ? wall.ns : 0);
    if (p->exceeded && p->kind == STROBE_EXPLAIN_STAGE && e->cov.samples) rc = top_functions(e, frame, p);
    if (!p->exceeded) continue;
    out->exceeded++;
    if (out->worst == NONE || p->excess_ns > e->parts[out->worst].excess_ns) out->worst = i;
  }
  free(peers);
  if (rc) {
    memset(out, 0, sizeof *out);
    return STROBE_ENOMEM;
  }
  for (uint32_t i = 0; i < np; i++) /* the functions' offsets become pointers now that e->fns is final */
    e->parts[i].functions = e->parts[i].nfunctions ? e->fns + (uintptr_t)e->parts[i].functions : NULL;
  out->frame = frame;
  out->wall = wall;
  out->nparts = np;
  out->parts = e->parts;
  return 0;
}

uint32_t strobe_explain_slowest(const strobe_explain *e, uint32_t k, uint32_t *frames) {
  if (!e || !frames) return 0;
  uint32_t n = 0, count = strobe_frames_query_count(e->fx);
  int passes = strobe_frames_query_source(e->fx) == STROBE_FRAME_SOURCE_PASSES;
  for (uint32_t i = 0; i < count; i++) {
    const strobe_frame *f = strobe_frames_query_frame(e->fx, i);
    if (!ended(f) || (passes && f->kind != STROBE_OP_PASS)) continue;
    double w = f->end_ns - f->begin_ns;
    uint32_t at = n;
    while (at > 0) {
      const strobe_frame *g = strobe_frames_query_frame(e->fx, frames[at - 1]);
      if (g->end_ns - g->begin_ns >= w) break;
      at--;
    }
    if (at >= k) continue;
    if (n < k) n++;
    memmove(&frames[at + 1], &frames[at], (n - 1 - at) * sizeof *frames);
    frames[at] = i;
  }
  return n;
}

/* >>excess: every frame's wall against its peers' p50 at once: frames sorted by peer key, one p50 per group. */
typedef struct peer_key {
  uint32_t kind, series; /* as strobe_frame */
  const char *window;    /* compared only when series is NONE (operations that are not passes) */
  uint32_t index;
  double wall;
} peer_key;

static int by_peer_key(const void *x, const void *y) {
  const peer_key *a = x, *b = y;
  if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
  if (a->series != b->series) return a->series < b->series ? -1 : 1;
  return a->series != NONE ? 0 : strcmp(a->window, b->window);
}

int strobe_explain_excess(const strobe_explain *e, double *excess_ns) {
  if (!e || !excess_ns) return STROBE_EINVAL;
  uint32_t n = strobe_frames_query_count(e->fx), ne = 0;
  peer_key *keys = malloc(((size_t)n + 1) * sizeof *keys);
  double *walls = malloc(((size_t)n + 1) * sizeof *walls);
  if (!keys || !walls) {
    free(keys), free(walls);
    return STROBE_ENOMEM;
  }
  for (uint32_t i = 0; i < n; i++) {
    const strobe_frame *f = strobe_frames_query_frame(e->fx, i);
    excess_ns[i] = NAN;
    if (ended(f)) keys[ne++] = (peer_key){f->kind, f->series, f->window, i, f->end_ns - f->begin_ns};
  }
  if (ne) qsort(keys, ne, sizeof *keys, by_peer_key);
  for (uint32_t a = 0, b; a < ne; a = b) { /* [a, b): one group of peers */
    for (b = a; b < ne && !by_peer_key(&keys[a], &keys[b]); b++) walls[b - a] = keys[b].wall;
    double p50 = strobe__rank_of(walls, b - a, 0.5);
    for (uint32_t k = a; k < b; k++) excess_ns[keys[k].index] = keys[k].wall - p50;
  }
  free(keys), free(walls);
  return 0;
}

/* >>stall: an unfinished frame at the capture's end (docs/explain.md §Unfinished frames). */
/* The innermost stage run of frame fi open at the end (the deepest; of two threads, the one opened last); NULL. */
static const open_run *open_stage(const strobe_explain *e, uint32_t fi, const open_run **around) {
  const open_run *best = NULL;
  for (uint32_t i = 0; i < e->nopen; i++) {
    const open_run *o = &e->open[i];
    double begin_ns = ((double)o->begin - (double)e->epoch_ticks) * e->ns_per_tick;
    if (!o->site || strobe_frames_owner(e->fx, o->thread, begin_ns) != fi) continue;
    if (!best || (o->thread == best->thread ? o->depth > best->depth : o->begin > best->begin)) best = o;
  }
  *around = NULL;
  for (uint32_t i = 0; best && i < e->nopen; i++) { /* the one open around it on its thread */
    const open_run *o = &e->open[i];
    if (o->thread == best->thread && o->depth < best->depth && o->site && (!*around || o->depth > (*around)->depth))
      *around = o;
  }
  return best;
}

/* The p95 of the peers' wall times, and of stage `site`'s total in those that ran it; 0 with n 0. */
static int stall_norms(const strobe_explain *e, const strobe_frame *f, uint32_t site, strobe_frame_stall *out) {
  uint32_t count = strobe_frames_query_count(e->fx);
  double *walls = malloc(((size_t)count + 1) * 2 * sizeof *walls), *stages = walls + count + 1;
  if (!walls) return STROBE_ENOMEM;
  size_t nw = 0, ns = 0;
  for (uint32_t i = 0; i < count; i++) {
    const strobe_frame *g = strobe_frames_query_frame(e->fx, i);
    if (!peer_of(f, g)) continue;
    walls[nw++] = g->end_ns - g->begin_ns;
    uint32_t m;
    const strobe_frame_stage *st = strobe_frames_query_stages(e->fx, i, &m);
    double total = 0;
    int ran = 0;
    for (uint32_t k = 0; k < m && site; k++)
      if (st[k].site == site) total += st[k].total_ns, ran = 1;
    if (ran) stages[ns++] = total;
  }
  out->n = nw, out->p95_ns = nw ? strobe__rank_of(walls, nw, 0.95) : 0;
  out->stage_n = ns, out->stage_p95_ns = ns ? strobe__rank_of(stages, ns, 0.95) : 0;
  free(walls);
  return 0;
}

int strobe_explain_stall(const strobe_explain *e, uint32_t frame, strobe_frame_stall *out) {
  if (!e || !out) return STROBE_EINVAL;
  memset(out, 0, sizeof *out);
  const strobe_frame *f = strobe_frames_query_frame(e->fx, frame);
  if (!f || f->state != STROBE_FRAME_UNFINISHED) return STROBE_ERANGE;
  double end_ns = ((double)e->end_ticks - (double)e->epoch_ticks) * e->ns_per_tick;
  const open_run *around, *o = open_stage(e, frame, &around);
  int rc = stall_norms(e, f, o ? o->site : 0, out);
  if (rc) return rc;
  out->frame = frame;
  out->elapsed_ns = end_ns > f->begin_ns ? end_ns - f->begin_ns : 0;
  out->stalled = out->n > 0 && out->elapsed_ns > STROBE_STALL_FACTOR * out->p95_ns;
  uint32_t thread = o ? o->thread : f->thread;
  if (o) {
    out->stage = o->site, out->stage_parent = around ? around->site : 0;
    out->stage_name = o->site < e->nsites ? e->names[o->site] : NULL;
    out->stage_content = o->site < e->nsites && e->interned[o->site];
    out->stage_parent_name = around && around->site < e->nsites ? e->names[around->site] : NULL;
    out->stage_parent_content = around && around->site < e->nsites && e->interned[around->site];
    out->stage_elapsed_ns = e->end_ticks > o->begin ? (double)(e->end_ticks - o->begin) * e->ns_per_tick : 0;
  }
  int state;
  uint64_t since, tid = thread < e->nthreads ? e->tids[thread] : 0;
  out->thread_now = STROBE_EXPLAIN_CAUSE_UNKNOWN;
  if (strobe__samples_state_at(&e->smp, e->cov.switches, e->until, tid, e->end_ticks, &state, &since)) {
    static const uint32_t kinds[3] = {STROBE_EXPLAIN_CAUSE_ON_CPU, STROBE_EXPLAIN_CAUSE_BLOCKED,
                                      STROBE_EXPLAIN_CAUSE_PREEMPTED};
    out->thread_now = kinds[state];
    out->thread_since_ns = e->end_ticks > since ? (double)(e->end_ticks - since) * e->ns_per_tick : 0;
  }
  return 0;
}

/* >>queries */
int strobe_explain_open(const char *path, const strobe_explain_desc *desc, strobe_explain **out) {
  if (!path || !out) return STROBE_EINVAL;
  *out = NULL;
  strobe_explain_desc d = desc ? *desc : (strobe_explain_desc){0};
  if (d.top_functions > MAX_TOP) return STROBE_EINVAL;
  if (!d.max_runs) d.max_runs = DEFAULT_MAX_RUNS;
  if (!d.max_samples) d.max_samples = DEFAULT_MAX_SAMPLES;
  if (!d.top_functions) d.top_functions = DEFAULT_TOP;
  strobe_explain *e = calloc(1, sizeof *e);
  if (!e) return STROBE_ENOMEM;
  e->desc = d;
  int rc = strobe_frames_open(path, NULL, &e->fx);
  if (!rc) rc = read_details(e, path);
  if (!rc) {
    if (e->nsamples) qsort(e->samples, e->nsamples, sizeof *e->samples, by_tid_ticks);
    e->cap_vals = 5 * ((size_t)strobe_frames_query_count(e->fx) + 1);
    e->vals = malloc(e->cap_vals * sizeof *e->vals);
    if (!e->vals || build_rows(e)) rc = STROBE_ENOMEM;
  }
  if (rc) {
    strobe_explain_destroy(e);
    return rc;
  }
  *out = e;
  return 0;
}

void strobe_explain_destroy(strobe_explain *e) {
  if (!e) return;
  for (uint32_t i = 0; e->names && i < e->nsites; i++) free(e->names[i]);
  for (uint32_t i = 0; e->funcs && i < e->nfuncs; i++) free(e->funcs[i]);
  free(e->names), free(e->funcs), free(e->canon), free(e->tids);
  free(e->runs), free(e->rows), free(e->top), free(e->cut), free(e->samples), free(e->parts), free(e->fns), free(e->vals);
  free(e->open), free(e->interned), free(e->waits);
  strobe__samples_free(&e->smp);
  strobe__gpu_free(&e->gpu);
  strobe_frames_destroy(e->fx);
  free(e);
}

const strobe_frames *strobe_explain_query_frames(const strobe_explain *e) { return e ? e->fx : NULL; }
strobe_explain_coverage strobe_explain_query_coverage(const strobe_explain *e) {
  return e ? e->cov : (strobe_explain_coverage){0};
}
