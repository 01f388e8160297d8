/*
 * aggregate.c — one pass over a capture into per-site statistics (see
 * aggregate.h): scope durations with a bounded reservoir for percentiles,
 * counters, gauges, values and loop statistics, with the report filters
 * (thread, name, time range) applied as records arrive.
 *
 * This is the hot loop of `strobe report`: one call per record, no
 * allocation after a site's reservoir is full, no division on the common
 * path. It must never keep anything per event.
 */
#include "aggregate.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define RNG_SEED 0x9E3779B97F4A7C15ull /* fixed: the same file always yields the same sample */

static inline uint64_t rng_next(uint64_t *s) { /* xorshift64* */
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [0, n) without a division when n fits 32 bits (Lemire). */
static inline uint64_t rng_below(uint64_t *s, uint64_t n) {
  uint64_t r = rng_next(s);
  if (n <= UINT32_MAX) return ((r >> 32) * n) >> 32;
  return r % n;
}

static int grow_sites(agg *a, uint32_t id) {
  if (id < a->n_sites) return 0;
  uint32_t n = a->n_sites ? a->n_sites : 64;
  while (n <= id) n *= 2;
  agg_site *p = realloc(a->sites, n * sizeof *p);
  if (!p) return -1;
  memset(p + a->n_sites, 0, (n - a->n_sites) * sizeof *p);
  a->sites = p;
  a->n_sites = n;
  return 0;
}

static int grow_threads(agg *a, uint32_t index) {
  if (index < a->n_threads) return 0;
  uint32_t n = a->n_threads ? a->n_threads : 16;
  while (n <= index) n *= 2;
  uint8_t *p = realloc(a->thread_in, n);
  if (!p) return -1;
  memset(p + a->n_threads, 0, n - a->n_threads);
  a->thread_in = p;
  a->n_threads = n;
  return 0;
}

static int all_digits(const char *s) {
  if (!*s) return 0;
  for (; *s; s++)
    if (!isdigit((unsigned char)*s)) return 0;
  return 1;
}

static int keep_frame(void *ctx, const strobe_frame *fr);

int agg_init(agg *a, const strobe_capture *c, const agg_filter *filter, uint32_t top_frames) {
  memset(a, 0, sizeof *a);
  if (filter) a->filter = *filter;
  a->start_ns = cli_start_ns(c);
  a->rng = RNG_SEED;
  a->track_frames = top_frames > 0;
  a->track_calls = a->filter.graph != NULL;
  strobe_frames_desc d = {.keep = a->filter.thread || a->filter.has_range ? keep_frame : NULL, .keep_ctx = a};
  if (a->track_frames && strobe_frames_create(&d, &a->fx)) return -1;
  return 0;
}

void agg_free(agg *a) {
  for (uint32_t i = 0; i < a->n_sites; i++) free(a->sites[i].sample);
  free(a->open_sites);
  free(a->stage_parents);
  free(a->sites);
  for (uint32_t i = 0; i < a->ops.n_counters; i++) {
    free(a->ops.counters[i].name);
    free(a->ops.counters[i].kind);
  }
  free(a->thread_in);
  strobe__samples_free(&a->smp);
  strobe_frames_destroy(a->fx);
  strobe__gpu_free(&a->gpu);
  memset(a, 0, sizeof *a);
}

static void on_site(agg *a, const strobe_capture *c, uint32_t id) {
  if (grow_sites(a, id)) {
    a->failed = 1;
    return;
  }
  const strobe_capture_site *s = strobe_capture_query_site(c, id);
  a->sites[id].included = !a->filter.name || (s && strstr(s->name, a->filter.name));
  a->sites[id].graph = a->filter.graph && s && !strcmp(s->name, a->filter.graph);
  if (s && s->kind == STROBE_SITE_STAGE) a->track_stage_parents = 1;
}

/* The open-site slots of a thread (depth 1..AGG_MAX_DEPTH), or NULL. */
static uint32_t *open_sites_of(agg *a, uint32_t thread) {
  if (thread >= a->n_open_threads) {
    uint32_t n = a->n_open_threads ? a->n_open_threads : 8;
    while (n <= thread) n *= 2;
    uint32_t *p = realloc(a->open_sites, (size_t)n * (AGG_MAX_DEPTH + 1) * sizeof *p);
    if (!p) {
      a->failed = 1;
      return NULL;
    }
    memset(p + (size_t)a->n_open_threads * (AGG_MAX_DEPTH + 1), 0,
           (size_t)(n - a->n_open_threads) * (AGG_MAX_DEPTH + 1) * sizeof *p);
    a->open_sites = p;
    a->n_open_threads = n;
  }
  return a->open_sites + (size_t)thread * (AGG_MAX_DEPTH + 1);
}

/* A completed stage scope: counted under the innermost stage open around it. */
static void stage_parent(agg *a, const strobe_capture *c, const strobe_capture_record *r) {
  uint32_t *open = open_sites_of(a, r->thread);
  if (!open) return;
  uint32_t parent = 0;
  for (uint32_t d = r->depth < AGG_MAX_DEPTH ? r->depth : AGG_MAX_DEPTH; d-- > 1 && !parent;) {
    const strobe_capture_site *p = open[d] ? strobe_capture_query_site(c, open[d]) : NULL;
    if (p && p->kind == STROBE_SITE_STAGE) parent = open[d];
  }
  agg_stage_parent *e = NULL;
  for (uint32_t i = 0; i < a->n_stage_parents && !e; i++)
    if (a->stage_parents[i].site == r->site && a->stage_parents[i].parent == parent) e = &a->stage_parents[i];
  if (!e) {
    if (a->n_stage_parents == AGG_MAX_STAGE_PARENTS) {
      a->stage_parents_cut++;
      return;
    }
    if (!a->stage_parents && !(a->stage_parents = calloc(AGG_MAX_STAGE_PARENTS, sizeof *a->stage_parents))) {
      a->failed = 1;
      return;
    }
    e = &a->stage_parents[a->n_stage_parents++];
    *e = (agg_stage_parent){r->site, parent, 0, 0, 0};
  }
  e->count++;
  e->total_ns += r->duration_ns;
  if (r->duration_ns > e->max_ns) e->max_ns = r->duration_ns;
}

static void on_thread(agg *a, const strobe_capture *c, uint32_t index) {
  if (!a->filter.thread) return;
  if (grow_threads(a, index)) {
    a->failed = 1;
    return;
  }
  const strobe_capture_thread *t = strobe_capture_query_thread(c, index);
  int in = all_digits(a->filter.thread) ? strtoul(a->filter.thread, NULL, 10) == index
                                         : (t && strcmp(t->name, a->filter.thread) == 0);
  a->thread_in[index] = (uint8_t)in;
  if (in) a->thread_matched = 1;
}

/* Makes room for one more duration in a reservoir not yet full; 0, or -1 (a->failed set). */
static int grow_sample(agg *a, agg_site *s) {
  uint32_t cap = s->cap_sample ? s->cap_sample * 2 : 16;
  if (cap > AGG_RESERVOIR) cap = AGG_RESERVOIR;
  double *p = realloc(s->sample, cap * sizeof *p);
  if (!p) {
    a->failed = 1;
    return -1;
  }
  s->sample = p;
  s->cap_sample = cap;
  return 0;
}

static inline void sample(agg *a, agg_site *s, double dur) {
  if (s->count <= AGG_RESERVOIR) {
    if (s->n_sample == s->cap_sample && grow_sample(a, s)) return;
    s->sample[s->n_sample++] = dur;
    return;
  }
  uint64_t j = rng_below(&a->rng, s->count);
  if (j < AGG_RESERVOIR) s->sample[j] = dur;
}

static inline int in_range(const agg *a, double t_ns) {
  double rel = t_ns - a->start_ns;
  return rel >= a->filter.from_ns && rel <= a->filter.to_ns;
}

/* --thread, --from, --to on operations (strobe/frames.h keep): a whole operation that ended on a chosen thread
 * and lies wholly inside the range, as scopes do; never half of one. */
static int keep_frame(void *ctx, const strobe_frame *fr) {
  const agg *a = ctx;
  if (fr->state == STROBE_FRAME_UNFINISHED) return !a->filter.thread && !a->filter.has_range;
  if (a->filter.thread && (fr->end_thread >= a->n_threads || !a->thread_in[fr->end_thread])) return 0;
  return !a->filter.has_range || (in_range(a, fr->begin_ns) && in_range(a, fr->end_ns));
}

/* A duration added to a site's exact figures and reservoir. */
static inline void add_duration(agg *a, agg_site *s, double dur) {
  if (s->count == 0) s->shift = dur;
  if (s->count == 0 || dur < s->min_ns) s->min_ns = dur;
  if (s->count == 0 || dur > s->max_ns) s->max_ns = dur;
  s->count++;
  s->total_ns += dur;
  s->sumsq += (dur - s->shift) * (dur - s->shift);
  sample(a, s, dur);
}

static void op_counter(agg *a, const strobe_capture_op_counter *k) {
  agg_ops *o = &a->ops;
  if (a->filter.name && !strstr(k->name, a->filter.name)) return;
  agg_op_counter *e = NULL;
  const char *kind = k->kind && k->kind[0] ? k->kind : NULL;
  for (uint32_t i = 0; i < o->n_counters && !e; i++)
    if (!strcmp(o->counters[i].name, k->name) &&
        (o->counters[i].kind ? kind && !strcmp(o->counters[i].kind, kind) : !kind))
      e = &o->counters[i];
  if (!e) {
    char *name = o->n_counters < AGG_MAX_OP_COUNTERS ? strdup(k->name) : NULL;
    char *kcopy = name && kind ? strdup(kind) : NULL;
    if (!name || (kind && !kcopy)) {
      free(name);
      if (o->n_counters < AGG_MAX_OP_COUNTERS) a->failed = 1;
      o->counters_cut++;
      return;
    }
    e = &o->counters[o->n_counters++];
    *e = (agg_op_counter){name, kcopy, 0, 0, k->value, k->value, STROBE_UNIT_NONE};
  }
  if (!e->unit && strobe_unit_name(k->unit)) e->unit = k->unit;
  e->n++;
  e->sum += k->value;
  if (k->value < e->min) e->min = k->value;
  if (k->value > e->max) e->max = k->value;
}

/* A completed operation's counters and cuts (its frame, state and stages: the frame model). */
static void record_op(agg *a, const strobe_capture_record *r) {
  const strobe_capture_op *op = r->op;
  if (a->filter.thread && (r->thread >= a->n_threads || !a->thread_in[r->thread])) return;
  if (a->filter.has_range && !(in_range(a, op->start_ns) && in_range(a, r->time_ns))) return;
  agg_ops *o = &a->ops;
  o->handed_off += (uint64_t)op->handed_off;
  o->stages_dropped += op->stages_dropped;
  o->counters_dropped += op->counters_dropped;
  for (uint32_t i = 0; i < op->ncounters; i++) op_counter(a, &op->counters[i]);
}

static inline void edge_add(agg_edge *e, const strobe_capture_record *r) {
  e->count++;
  e->total_ns += r->duration_ns;
  e->self_ns += r->self_ns;
}

/* >>call graph: a completed call counted under its caller (the scope open one level up on its thread), when
 * either is the graph function. Deeper than AGG_MAX_DEPTH the caller is unknown: counted in graph_cut. */
static void call_edge(agg *a, const strobe_capture_record *r, agg_site *s) {
  uint32_t *open = open_sites_of(a, r->thread);
  if (!open) return;
  if (r->depth > AGG_MAX_DEPTH + 1) {
    a->graph_cut++;
    return;
  }
  uint32_t parent = r->depth > 1 ? open[r->depth - 1] : 0;
  if (parent >= a->n_sites) return;
  if (s->graph) edge_add(&a->sites[parent].caller, r);
  if (parent && a->sites[parent].graph) edge_add(&s->callee, r);
}

/* A scope's END (a site record: thread-filtered, site below n_sites). */
static inline void record_end(agg *a, const strobe_capture *c, const strobe_capture_record *r, agg_site *s) {
  double dur = r->duration_ns;
  double begin = r->time_ns - dur;
  if (a->filter.has_range && !(in_range(a, begin) && in_range(a, r->time_ns))) return;
  if (r->unwound) { /* its END never ran: when it ended is unknown, so it is no duration */
    if (s->included) s->unwound++;
    return;
  }
  if (a->fx && r->depth == 1 && strobe_frames_add(a->fx, c, r)) a->failed = 1;
  if (a->track_calls) call_edge(a, r, s);
  if (!s->included) return;
  if (a->track_stage_parents) {
    const strobe_capture_site *cs = strobe_capture_query_site(c, r->site);
    if (cs && cs->kind == STROBE_SITE_STAGE) stage_parent(a, c, r);
  }
  s->self_ns += r->self_ns;
  add_duration(a, s, dur);
}

/* An END: no sample, device or op, so straight to its site. */
static inline void record_end_of(agg *a, const strobe_capture *c, const strobe_capture_record *r) {
  if (a->filter.thread && (r->thread >= a->n_threads || !a->thread_in[r->thread])) return;
  if (r->site < a->n_sites) record_end(a, c, r, &a->sites[r->site]);
}

static void record(agg *a, const strobe_capture *c, const strobe_capture_record *r) {
  if (r->type == STROBE_REC_END) {
    record_end_of(a, c, r);
    return;
  }
  if (r->sample) { /* SAMPLE, SWITCH: by thread and time like every record */
    if (a->filter.thread && (r->thread >= a->n_threads || !a->thread_in[r->thread])) return;
    if (a->filter.has_range && !in_range(a, r->time_ns)) return;
    strobe__samples_add(&a->smp, r);
    if (a->smp.failed) a->failed = 1;
    return;
  }
  if (r->device) { /* pairs, GPU spans and instants: kept whole, mapped once the capture is read (gpu.c) */
    strobe__gpu_record(&a->gpu, r);
    return;
  }
  if (r->type == STROBE_REC_BEGIN) { /* half of all records: only stage parents need them */
    uint32_t *open = (a->track_stage_parents || a->track_calls) && r->depth <= AGG_MAX_DEPTH ? open_sites_of(a, r->thread) : NULL;
    if (open) open[r->depth] = r->site;
    return;
  }
  if (r->type == STROBE_REC_SITE) {
    on_site(a, c, r->site);
    return;
  }
  if (r->type == STROBE_REC_THREAD) {
    on_thread(a, c, r->thread);
    return;
  }
  if (r->op) { /* the frame model takes every operation record (it filters whole operations: keep_frame) */
    if (a->fx && strobe_frames_add(a->fx, c, r)) a->failed = 1;
    if (r->type == STROBE_REC_OP_END) record_op(a, r);
    return;
  }
  if (a->filter.thread && (r->thread >= a->n_threads || !a->thread_in[r->thread])) return;
  if (r->op || r->site >= a->n_sites) return; /* not a site record (LOST, THREAD_END, other OP_*) */
  agg_site *s = &a->sites[r->site];
  switch (r->type) {
    case STROBE_REC_FRAME:
      if (a->filter.has_range && !in_range(a, r->time_ns)) return;
      if (a->fx && strobe_frames_add(a->fx, c, r)) a->failed = 1;
      s->count++;
      return;
    case STROBE_REC_COUNTER:
    case STROBE_REC_GAUGE:
    case STROBE_REC_VALUE:
      if (!s->included || (a->filter.has_range && !in_range(a, r->time_ns))) return;
      if (s->count == 0 || r->value < s->vmin) s->vmin = r->value;
      if (s->count == 0 || r->value > s->vmax) s->vmax = r->value;
      s->count++;
      s->total_ns += r->value; /* counters: the sum of deltas; values: for the mean */
      s->last = r->value;
      return;
    case STROBE_REC_CUMULATIVE:
      if (!s->included || (a->filter.has_range && !in_range(a, r->time_ns))) return;
      if (r->count == 0) return;
      if (s->iterations == 0 || r->min_ns < s->loop_min) s->loop_min = r->min_ns;
      if (s->iterations == 0 || r->max_ns > s->loop_max) s->loop_max = r->max_ns;
      s->count++;
      s->iterations += r->count;
      s->total_ns += r->total_ns;
      return;
    default: return;
  }
}

void agg_record(agg *a, const strobe_capture *c, const strobe_capture_record *r) { record(a, c, r); }

/* Every record through record(). BEGINs, half of all records, only matter
 * for stage parents: until a stage site is defined the reader does not
 * return them (a SITE record ends its batch, so the next batch has them). */
void agg_read_all(agg *a, cli_input *in) {
  int begins = a->track_stage_parents || a->track_calls;
  if (!begins) strobe_capture_set_records(in->cap, STROBE_CAPTURE_ALL_RECORDS & ~(1ull << STROBE_REC_BEGIN));
  for (const strobe_capture_record *r; (r = cli_next_ref(in));) {
    if (r->type == STROBE_REC_END) {
      record_end_of(a, in->cap, r); /* the other half: inline */
      continue;
    }
    if (r->type != STROBE_REC_BEGIN || a->track_stage_parents || a->track_calls) record(a, in->cap, r);
    if (a->track_stage_parents && !begins) begins = !strobe_capture_set_records(in->cap, STROBE_CAPTURE_ALL_RECORDS);
  }
  if (a->fx && strobe_frames_finish(a->fx, in->cap)) a->failed = 1;
}

double agg_stddev(const agg_site *s) {
  if (!s->count) return 0;
  double n = (double)s->count;
  double mean_d = (s->total_ns - n * s->shift) / n; /* mean of (duration - shift) */
  double var = s->sumsq / n - mean_d * mean_d;
  return var > 0 ? sqrt(var) : 0;
}

strobe__dist agg_dist(agg_site *s) {
  strobe__dist d = strobe__dist_of(s->sample, s->n_sample);
  /* min and max are exact over every scope, not just the sample. */
  if (s->count) {
    d.min = s->min_ns;
    d.max = s->max_ns;
  }
  return d;
}

static const agg *g_sort_agg; /* qsort has no context argument in C11 */

static int by_total_desc(const void *x, const void *y) {
  const agg_site *a = &g_sort_agg->sites[*(const uint32_t *)x];
  const agg_site *b = &g_sort_agg->sites[*(const uint32_t *)y];
  if (a->total_ns != b->total_ns) return a->total_ns < b->total_ns ? 1 : -1;
  return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

static const double *g_sort_key;

static int by_key_desc(const void *x, const void *y) {
  uint32_t i = *(const uint32_t *)x, k = *(const uint32_t *)y;
  if (g_sort_key[i] != g_sort_key[k]) return g_sort_key[i] < g_sort_key[k] ? 1 : -1;
  return i < k ? -1 : 1;
}

void agg_sort_by(uint32_t *ids, uint32_t n, const double *key) {
  g_sort_key = key;
  qsort(ids, n, sizeof *ids, by_key_desc);
}

uint32_t *agg_sorted_scopes(const agg *a, const strobe_capture *c, uint32_t *n) {
  uint32_t *ids = malloc((a->n_sites ? a->n_sites : 1) * sizeof *ids);
  *n = 0;
  if (!ids) return NULL;
  for (uint32_t id = 1; id < a->n_sites; id++) {
    const strobe_capture_site *s = strobe_capture_query_site(c, id);
    if (!s || !strobe__site_timed(s->kind)) continue;
    if (a->sites[id].count && a->sites[id].included) ids[(*n)++] = id;
  }
  g_sort_agg = a;
  qsort(ids, *n, sizeof *ids, by_total_desc);
  return ids;
}
