/*
 * kinds.c — counters and gauges by kind, per frame (kinds.h): picks the
 * busiest frame series of the first read, reads the capture again and puts
 * each kind's numbers into the frame whose interval holds their time.
 *
 * Never keeps anything per event: one running sum per (kind, thread),
 * committed when that thread's next number of the kind falls in a later
 * frame. Numbers outside every frame are counted apart, never put in one.
 */
#include "kinds.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"

int kinds_site_is_kind(const strobe_capture_site *s) {
  return s && (s->kind == STROBE_SITE_COUNTER || s->kind == STROBE_SITE_GAUGE) && s->category && s->category[0];
}

void kinds_free(kinds *k) {
  free(k->starts);
  free(k->rows);
  free(k->row_of);
  free(k->b);
  memset(k, 0, sizeof *k);
}

/* The series with the most frames (strobe/frames.h): its index, and its frame boundaries ascending (counted
 * passes' begins, or its marks). */
static int pick_series(kinds *k, agg *a) {
  const strobe_frames *fx = a->fx;
  uint32_t best = STROBE_FRAMES_NONE;
  for (uint32_t i = 0; i < strobe_frames_query_series_count(fx); i++) {
    const strobe_frame_series *s = strobe_frames_query_series(fx, i);
    if (s->has_rate && (best == STROBE_FRAMES_NONE || s->intervals > strobe_frames_query_series(fx, best)->intervals))
      best = i;
  }
  if (best == STROBE_FRAMES_NONE) return 0;
  k->key = best;
  uint64_t n = strobe_frames_query_series(fx, best)->intervals + 1;
  if (!(k->starts = malloc((size_t)n * sizeof *k->starts))) {
    k->failed = 1;
    return 0;
  }
  int marks = strobe_frames_query_source(fx) == STROBE_FRAME_SOURCE_MARKS;
  const strobe_frame *last = NULL;
  for (uint32_t i = 0; i < strobe_frames_query_count(fx) && k->n_starts < n; i++) {
    const strobe_frame *fr = strobe_frames_query_frame(fx, i);
    if (fr->series != best || !fr->counted) continue;
    k->starts[k->n_starts++] = fr->begin_ns;
    last = fr;
  }
  if (marks && last && k->n_starts < n) k->starts[k->n_starts++] = last->end_ns; /* the last mark closes the last frame */
  return k->n_starts >= 2;
}

/* The frame holding t: the last start <= t, when a start follows it; else -1. */
static int64_t frame_of(const kinds *k, double t) {
  if (k->n_starts < 2 || t < k->starts[0] || t >= k->starts[k->n_starts - 1]) return -1;
  uint64_t lo = 0, hi = k->n_starts - 1; /* starts[lo] <= t < starts[hi] */
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (k->starts[mid] <= t) lo = mid;
    else hi = mid;
  }
  return (int64_t)lo;
}

static void commit(kinds *k, kind_bucket *b, int counter) {
  if (b->frame < 0 || !counter) return;
  kind_row *r = &k->rows[b->row];
  if (r->frames_with == 0 || b->sum > r->max) {
    r->max = b->sum;
    r->max_frame = (uint64_t)b->frame;
  }
  r->frames_with++;
}

static kind_bucket *bucket_of(kinds *k, uint32_t row, uint32_t thread) {
  for (uint32_t i = 0; i < k->nb; i++)
    if (k->b[i].row == row && k->b[i].thread == thread) return &k->b[i];
  if (k->nb == k->cap_b) {
    uint32_t cap = k->cap_b ? k->cap_b * 2 : 32;
    kind_bucket *p = realloc(k->b, cap * sizeof *p);
    if (!p) {
      k->failed = 1;
      return NULL;
    }
    k->b = p;
    k->cap_b = cap;
  }
  k->b[k->nb] = (kind_bucket){row, thread, -1, 0};
  return &k->b[k->nb++];
}

static int row_for(kinds *k, const strobe_capture *c, const agg *a, uint32_t site) {
  if (site < k->n_row_of && k->row_of[site]) return (int)k->row_of[site] - 1;
  const strobe_capture_site *s = strobe_capture_query_site(c, site);
  if (!kinds_site_is_kind(s) || site >= a->n_sites || !a->sites[site].included) return -1;
  if (site >= k->n_row_of) {
    uint32_t n = k->n_row_of ? k->n_row_of : 64;
    while (n <= site) n *= 2;
    uint32_t *p = realloc(k->row_of, n * sizeof *p);
    if (!p) return k->failed = 1, -1;
    memset(p + k->n_row_of, 0, (n - k->n_row_of) * sizeof *p);
    k->row_of = p;
    k->n_row_of = n;
  }
  kind_row *p = realloc(k->rows, (k->n_rows + 1) * sizeof *p);
  if (!p) return k->failed = 1, -1;
  k->rows = p;
  k->rows[k->n_rows] = (kind_row){.site = site};
  k->row_of[site] = ++k->n_rows;
  return (int)k->n_rows - 1;
}

static void number(kinds *k, const strobe_capture *c, const agg *a, const strobe_capture_record *r) {
  if (a->filter.thread && (r->thread >= a->n_threads || !a->thread_in[r->thread])) return;
  if (a->filter.has_range) {
    double t = r->time_ns - a->start_ns;
    if (t < a->filter.from_ns || t > a->filter.to_ns) return;
  }
  int row = row_for(k, c, a, r->site);
  if (row < 0) return;
  kind_row *kr = &k->rows[row];
  int64_t f = frame_of(k, r->time_ns);
  if (f < 0) {
    kr->outside++;
    return;
  }
  kr->events++;
  kr->total += r->value;
  if (r->type == STROBE_REC_GAUGE) { /* a level: the highest, and the frame it was sampled in */
    if (kr->events == 1 || r->value > kr->max) {
      kr->max = r->value;
      kr->max_frame = (uint64_t)f;
    }
    return;
  }
  kind_bucket *b = bucket_of(k, (uint32_t)row, r->thread);
  if (!b) return;
  if (b->frame != f) {
    commit(k, b, 1);
    b->frame = f;
    b->sum = 0;
  }
  b->sum += r->value;
}

/* Family, then counters before gauges, then kind; qsort has no context argument in C11. */
static const strobe_capture *g_sort_cap;
static int row_order(const void *x, const void *y) {
  const strobe_capture_site *a = strobe_capture_query_site(g_sort_cap, ((const kind_row *)x)->site);
  const strobe_capture_site *b = strobe_capture_query_site(g_sort_cap, ((const kind_row *)y)->site);
  int d = strcmp(a->name, b->name);
  if (d) return d;
  if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
  d = strcmp(a->category, b->category);
  if (d) return d;
  return a->id < b->id ? -1 : a->id > b->id;
}

int kinds_collect(kinds *k, agg *a, const strobe_capture *c, const char *path, int is_stdin) {
  memset(k, 0, sizeof *k);
  int any = 0;
  for (uint32_t id = 1; id < strobe_capture_query_site_limit(c) && !any; id++)
    any = kinds_site_is_kind(strobe_capture_query_site(c, id));
  if (!any) {
    k->why = "the capture has no counters or gauges by kind";
    return CLI_OK;
  }
  k->source = (int)strobe_frames_query_source(a->fx);
  if (!a->fx || k->source == STROBE_FRAME_SOURCE_TOP_SCOPES || k->source == STROBE_FRAME_SOURCE_NONE) {
    k->why = "the capture has no frames (no pass operations, no frame marks)";
    return CLI_OK;
  }
  if (!pick_series(k, a)) {
    k->why = k->failed ? "out of memory" : "fewer than two frames in every series";
    return CLI_OK;
  }
  if (is_stdin) {
    k->why = "per-frame figures read the capture twice: give a file, not standard input";
    return CLI_OK;
  }
  cli_input in;
  int rc = cli_open(&in, "report", path, 1);
  if (rc) return rc;
  strobe_capture_record r;
  while (cli_next(&in, &r) > 0)
    if (r.type == STROBE_REC_COUNTER || r.type == STROBE_REC_GAUGE) number(k, in.cap, a, &r);
  for (uint32_t i = 0; i < k->nb; i++) {
    const strobe_capture_site *s = strobe_capture_query_site(in.cap, k->rows[k->b[i].row].site);
    commit(k, &k->b[i], s && s->kind == STROBE_SITE_COUNTER);
  }
  rc = in.rc < 0 ? CLI_FAIL : CLI_OK; /* the first read said how the file ends */
  g_sort_cap = c;
  if (k->n_rows) qsort(k->rows, k->n_rows, sizeof *k->rows, row_order); /* rows stays NULL without a row */
  cli_close(&in);
  k->available = !k->failed;
  if (k->failed) k->why = "out of memory";
  return rc;
}
