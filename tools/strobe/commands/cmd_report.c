/*
 * cmd_report.c — `strobe report FILE`: the summary a person reads first.
 * Per scope site: count, total, self, p50/p95/p99/max each with its n, sorted
 * by total (or --sort self, count, p95); with --callers/--callees FUNC the
 * function's callers and callees from each END's enclosing scope; with
 * --correct-overhead self times minus calls x the writer's calibrated cost
 * (a call's two events at the header's event_cost_ns),
 * stated where shown; the slowest frames and two frame rates, each labelled (over the
 * first-to-last frame span, and steady from the median frame interval);
 * operations with their stages and counters; counters, gauges, values and
 * loop statistics; the writer's overhead per scope; unfinished and lost work
 * stated apart.
 *
 * Stages that ran under several parents (the stage open around them on
 * their thread) get a row per parent, so work declared in one phase but run
 * in others is shown where it ran.
 *
 * Streams through aggregate.c, so memory is bounded by sites (and their
 * 4096-duration reservoirs) and threads. Never adds unfinished work to any
 * figure and never sums nested (inclusive) totals.
 *
 * Contents: >>call graph >>json >>text (then the option parsing in parse_args)
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/aggregate.h"
#include "cli.h"
#include "analysis/frames_view.h"
#include "analysis/kinds.h"
#include "analysis/memory.h"
#include "analysis/locks.h"
#include "analysis/samples.h"
#include "format/json_writer.h"

static const char g_usage[] =
    "usage: strobe report [options] FILE\n"
    "\n"
    "Per scope site: count, total ms, self ms, p50/p95/p99/max (each with its n), sorted\n"
    "by total (or --sort). Slowest frames (a frame is a pass operation when the capture has any,\n"
    "else the interval between consecutive FRAME marks on a thread, else each top-level\n"
    "scope) and two frame rates: over the first-to-last frame span (fps_first_to_last)\n"
    "and steady, from the median frame interval (fps_steady_median_interval), which one\n"
    "long stall does not pull down. Operations by kind with their stages and counters.\n"
    "Counters (sum of deltas), gauges (last, min, max), values, loop statistics, and the\n"
    "writer's overhead per scope. Allocations by pool, the frames that allocated most, what\n"
    "was still live at the end and the peak (docs/memory.md). A stage name that ran under several parent stages gets\n"
    "one row per parent (\"nested in\": the stage open around it when it ran).\n"
    "\n"
    "  --thread NAME|INDEX  only this thread (all digits: a thread index)\n"
    "  --name SUBSTR        only sites whose name contains SUBSTR\n"
    "  --from MS, --to MS   only scopes lying wholly inside this range, in ms since\n"
    "                       the capture started (frames and numbers: their time)\n"
    "  --top N              show the N sites with the largest total and the N slowest\n"
    "                       frames (default: every site, 10 frames)\n"
    "  --samples            the sampler's hot functions, self and inclusive (top 20, or --top N)\n"
    "  --messages           the messages (STROBE_MESSAGE) in time order; run-time text is marked\n"
    "                       [content] (docs/memory.md)\n"
    "  --sort KEY           order the sites by self, total (default), count or p95, largest first\n"
    "                       (--top N then keeps the N largest by that key)\n"
    "  --callers FUNC       who called the site named FUNC (exactly): per caller, FUNC's calls,\n"
    "                       total and self time under it; \"(top level)\" when nothing was open\n"
    "  --callees FUNC       what FUNC called: per callee, its calls, total and self time under FUNC\n"
    "                       (both from each call's enclosing scope on its thread, as `uftrace graph`)\n"
    "  --correct-overhead   self times minus calls x the recording cost of a call's two events\n"
    "                       (BEGIN, END) at the cost per event the writer calibrated (the cost\n"
    "                       line), floored at 0; stated in the header, and JSON keeps the\n"
    "                       measured self_ns beside self_corrected_ns\n"
    "  --json               machine-readable output\n"
    "  --quiet              no progress bar\n"
    "\n"
    "Percentiles are nearest-rank over the scopes' durations. A site with more than\n"
    "4096 scopes keeps a uniform random sample of 4096 of them (fixed seed: the same\n"
    "file gives the same figures); its n then says so. count, total, self, min and max\n"
    "are always exact.\n"
    "\n"
    "Exit: 0 ok (also for a file without footer), 1 unreadable, corrupt or truncated\n"
    "inside a block (what was read is still reported), or --correct-overhead on a capture\n"
    "without a calibrated cost, 2 usage (also a --callers/--callees FUNC no site is named),\n"
    "3 output.\n";

#define MS(ns) ((ns) / 1e6)

typedef struct report {
  cli_input in;
  agg a;
  kinds k;        /* counters and gauges by kind, per frame (kinds.h) */
  mem_report m;   /* allocations and messages (memory.h) */
  uint32_t top;   /* 0: every site */
  uint32_t top_frames;
  samples_report sr; /* the sampler's on/off-CPU split (samples.h) */
  locks lk;           /* lock contention (locks.h) */
  uint32_t functions; /* --samples: top sampled functions to list; 0: none */
  int sort;           /* SORT_*: the sites' order */
  int callers, callees; /* --callers, --callees FUNC (a.filter.graph) */
  int correct;        /* --correct-overhead: self minus count x cost */
  double event_ns;    /* the header's event_cost_ns: the writer's calibrated cost per event */
  double cost;        /* ns per call subtracted: CALL_EVENTS x event_ns */
} report;

#define CALL_EVENTS 2 /* a call (a scope) writes a BEGIN and an END */

enum { SORT_TOTAL, SORT_SELF, SORT_COUNT, SORT_P95 };
static const char *const g_sort_names[] = {"total", "self", "count", "p95"};

/* A self time as reported: measured, or with --correct-overhead minus count x cost, floored at 0. */
static double self_shown(const report *x, double self_ns, uint64_t count) {
  if (!x->correct) return self_ns;
  double v = self_ns - (double)count * x->cost;
  return v > 0 ? v : 0;
}

/* Sites of ids whose corrected self time was floored at 0. */
static uint32_t count_floored(const report *x, const uint32_t *ids, uint32_t n_ids) {
  uint32_t n = 0;
  for (uint32_t i = 0; x->correct && i < n_ids; i++) {
    const agg_site *s = &x->a.sites[ids[i]];
    n += s->self_ns - (double)s->count * x->cost < 0;
  }
  return n;
}

/* What names a series (frames_view.h). */
static const char *series_label(const report *x, uint32_t key, char *buf, size_t cap) {
  return fv_series_label(x->a.fx, x->in.cap, key, buf, cap);
}

/* Stage rows follow --name (frames_view.h). */
static int stage_included(const void *ctx, uint32_t site) {
  const agg *a = ctx;
  return site < a->n_sites && a->sites[site].included;
}

static uint32_t count_kind(const report *x, uint32_t kind) {
  uint32_t n = 0;
  for (uint32_t id = 1; id < x->a.n_sites; id++) {
    const strobe_capture_site *s = strobe_capture_query_site(x->in.cap, id);
    if (s && s->kind == kind && x->a.sites[id].count && x->a.sites[id].included) n++;
  }
  return n;
}

/* >>stage parents: only names that ran under more than one parent stage. */
static const char *site_name_of(const report *x, uint32_t id) {
  const strobe_capture_site *s = id ? strobe_capture_query_site(x->in.cap, id) : NULL;
  return s ? s->name : NULL;
}

static int same_name(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

/* 1 when the entry's stage name has entries under at least two parent names. */
static int several_parents(const report *x, const agg_stage_parent *e) {
  const char *name = site_name_of(x, e->site), *parent = site_name_of(x, e->parent);
  for (uint32_t i = 0; i < x->a.n_stage_parents; i++) {
    const agg_stage_parent *o = &x->a.stage_parents[i];
    if (same_name(site_name_of(x, o->site), name) && !same_name(site_name_of(x, o->parent), parent)) return 1;
  }
  return 0;
}

/* >>call graph: the sites with an edge to the graph function (callers: site 0 is the top level), sorted by
 * total; NULL with *n = 0 when there are none or memory ran out (a->failed). */
static uint32_t *edge_ids(report *x, int callers, uint32_t *n) {
  *n = 0;
  uint32_t *ids = malloc((x->a.n_sites ? x->a.n_sites : 1) * sizeof *ids);
  double *key = malloc((x->a.n_sites ? x->a.n_sites : 1) * sizeof *key);
  if (!ids || !key) {
    x->a.failed = 1;
    free(ids);
    free(key);
    return NULL;
  }
  for (uint32_t id = 0; id < x->a.n_sites; id++) {
    const agg_edge *e = callers ? &x->a.sites[id].caller : &x->a.sites[id].callee;
    key[id] = e->total_ns;
    if (e->count) ids[(*n)++] = id;
  }
  agg_sort_by(ids, *n, key);
  free(key);
  return ids;
}

static const char *edge_name(const report *x, uint32_t id) {
  const char *name = site_name_of(x, id);
  return name ? name : "(top level)";
}

static void graph_rows_json(strobe__json *j, report *x, int callers) {
  if (!(callers ? x->callers : x->callees)) {
    strobe__json_null(j, callers ? "callers" : "callees");
    return;
  }
  uint32_t n, *ids = edge_ids(x, callers, &n);
  strobe__json_array(j, callers ? "callers" : "callees");
  for (uint32_t i = 0; i < n; i++) {
    const agg_edge *e = callers ? &x->a.sites[ids[i]].caller : &x->a.sites[ids[i]].callee;
    strobe__json_object(j, NULL);
    if (ids[i]) strobe__json_uint(j, "id", ids[i]);
    else strobe__json_null(j, "id");
    strobe__json_str(j, "name", edge_name(x, ids[i]));
    strobe__json_uint(j, "calls", e->count);
    strobe__json_num(j, "total_ns", e->total_ns, 1);
    strobe__json_num(j, "self_ns", e->self_ns, 1);
    if (x->correct) strobe__json_num(j, "self_corrected_ns", self_shown(x, e->self_ns, e->count), 1);
    else strobe__json_null(j, "self_corrected_ns");
    strobe__json_end(j);
  }
  strobe__json_end(j);
  free(ids);
}

/* "graph": null without --callers/--callees. Callers' figures are the function's own calls under each caller. */
static void graph_json(strobe__json *j, report *x) {
  if (!x->a.filter.graph) {
    strobe__json_null(j, "graph");
    return;
  }
  strobe__json_object(j, "graph");
  strobe__json_str(j, "function", x->a.filter.graph);
  graph_rows_json(j, x, 1);
  graph_rows_json(j, x, 0);
  strobe__json_uint(j, "calls_cut_depth", x->a.graph_cut);
  strobe__json_end(j);
}

static void correction_json(strobe__json *j, const report *x, const uint32_t *ids, uint32_t n_ids) {
  if (!x->correct) {
    strobe__json_null(j, "overhead_correction");
    return;
  }
  strobe__json_object(j, "overhead_correction");
  strobe__json_num(j, "per_call_ns", x->cost, 3);
  strobe__json_num(j, "event_ns", x->event_ns, 3);
  strobe__json_uint(j, "events_per_call", CALL_EVENTS);
  strobe__json_str(j, "source", "header event_cost_ns (calibrated by the writer) x a call's BEGIN and END");
  strobe__json_uint(j, "sites_floored_at_zero", count_floored(x, ids, n_ids));
  strobe__json_end(j);
}

/* >>json */
static void pct_json(strobe__json *j, const char *key, double ns, uint64_t n) {
  strobe__json_object(j, key);
  strobe__json_num(j, "ns", ns, 1);
  strobe__json_uint(j, "n", n);
  strobe__json_end(j);
}

static void site_meta_json(strobe__json *j, const strobe_capture_site *s) {
  strobe__json_uint(j, "id", s->id);
  strobe__json_str(j, "name", s->name);
  strobe__json_str(j, "category", s->category);
  strobe__json_str(j, "file", s->file);
  strobe__json_uint(j, "line", s->line);
  strobe__json_str(j, "function", s->function);
  strobe__json_bool(j, "interned", (s->flags & STROBE_SITE_INTERNED) != 0);
  strobe__json_bool(j, "traced_call", (s->flags & STROBE_SITE_CALL) != 0);
}

/* Sites named at run time in the capture. */
static uint32_t count_interned(const report *x) {
  uint32_t n = 0;
  for (uint32_t id = 1; id < strobe_capture_query_site_limit(x->in.cap); id++) {
    const strobe_capture_site *s = strobe_capture_query_site(x->in.cap, id);
    if (s && (s->flags & STROBE_SITE_INTERNED)) n++;
  }
  return n;
}

static void numbers_json(strobe__json *j, report *x, const char *key, uint32_t kind) {
  strobe__json_array(j, key);
  for (uint32_t id = 1; id < x->a.n_sites; id++) {
    const strobe_capture_site *s = strobe_capture_query_site(x->in.cap, id);
    agg_site *st = &x->a.sites[id];
    if (!s || s->kind != kind || !st->count || !st->included) continue;
    strobe__json_object(j, NULL);
    site_meta_json(j, s);
    strobe__json_uint(j, "count", st->count);
    if (kind == STROBE_SITE_COUNTER || kind == STROBE_SITE_GAUGE) { /* one kind of the family `name`, or null */
      if (kinds_site_is_kind(s)) strobe__json_str(j, "kind", s->category);
      else strobe__json_null(j, "kind");
    }
    if (kind != STROBE_SITE_CUMULATIVE) { /* numbers: their site's unit, null for a newer writer's */
      if (strobe_unit_name(s->unit)) strobe__json_str(j, "unit", strobe_unit_name(s->unit));
      else strobe__json_null(j, "unit");
    }
    if (kind == STROBE_SITE_COUNTER) {
      strobe__json_num(j, "sum", st->total_ns, 6);
    } else if (kind == STROBE_SITE_CUMULATIVE) {
      strobe__json_uint(j, "iterations", st->iterations);
      strobe__json_num(j, "total_ns", st->total_ns, 1);
      strobe__json_num(j, "min_ns", st->loop_min, 1);
      strobe__json_num(j, "max_ns", st->loop_max, 1);
      strobe__json_num(j, "mean_ns", st->iterations ? st->total_ns / (double)st->iterations : 0, 1);
    } else {
      strobe__json_num(j, "last", st->last, 6);
      strobe__json_num(j, "min", st->vmin, 6);
      strobe__json_num(j, "max", st->vmax, 6);
      if (kind == STROBE_SITE_VALUE) strobe__json_num(j, "mean", st->total_ns / (double)st->count, 6);
    }
    strobe__json_end(j);
  }
  strobe__json_end(j);
}

/* Counters and gauges by kind, per frame (kinds.h): one entry per family, its kinds inside. */
static void kinds_json(strobe__json *j, report *x) {
  const kinds *k = &x->k;
  strobe__json_object(j, "kinds");
  strobe__json_bool(j, "available", k->available);
  if (!k->available) {
    strobe__json_str(j, "null_reason", k->why);
    strobe__json_end(j);
    return;
  }
  char buf[CLI_THREAD_LABEL_MAX];
  strobe__json_object(j, "frames");
  strobe__json_str(j, "source", fv_source_key((uint32_t)k->source));
  strobe__json_str(j, "series", series_label(x, k->key, buf, sizeof buf));
  strobe__json_uint(j, "n", kinds_frames(k));
  strobe__json_num(j, "from_ms", MS(k->starts[0] - x->a.start_ns), 6);
  strobe__json_num(j, "to_ms", MS(k->starts[k->n_starts - 1] - x->a.start_ns), 6);
  strobe__json_end(j);
  strobe__json_array(j, "families");
  for (uint32_t i = 0; i < k->n_rows;) {
    const strobe_capture_site *f = strobe_capture_query_site(x->in.cap, k->rows[i].site);
    strobe__json_object(j, NULL);
    strobe__json_str(j, "family", f->name);
    strobe__json_str(j, "site_kind", f->kind == STROBE_SITE_COUNTER ? "counter" : "gauge");
    strobe__json_array(j, "kinds");
    for (; i < k->n_rows; i++) {
      const kind_row *r = &k->rows[i];
      const strobe_capture_site *s = strobe_capture_query_site(x->in.cap, r->site);
      if (strcmp(s->name, f->name) || s->kind != f->kind) break;
      int counter = s->kind == STROBE_SITE_COUNTER;
      strobe__json_object(j, NULL);
      strobe__json_str(j, "kind", s->category);
      if (strobe_unit_name(s->unit)) strobe__json_str(j, "unit", strobe_unit_name(s->unit));
      else strobe__json_null(j, "unit");
      strobe__json_uint(j, "events", r->events);
      strobe__json_uint(j, "outside_frames", r->outside);
      if (counter) {
        strobe__json_num(j, "total", r->total, 6);
        strobe__json_uint(j, "n", kinds_frames(k)); /* per frame: every frame of the series, zero ones too */
        strobe__json_num(j, "mean_per_frame", r->total / (double)kinds_frames(k), 6);
        strobe__json_uint(j, "frames_counted", r->frames_with);
      } else {
        strobe__json_uint(j, "n", r->events); /* levels sampled in frames */
        if (r->events) strobe__json_num(j, "mean", r->total / (double)r->events, 6);
        else strobe__json_null(j, "mean");
      }
      if (r->events) {
        strobe__json_num(j, counter ? "max_per_frame" : "max", r->max, 6);
        strobe__json_num(j, "max_frame_start_ms", MS(k->starts[r->max_frame] - x->a.start_ns), 6);
      } else {
        strobe__json_null(j, counter ? "max_per_frame" : "max");
        strobe__json_null(j, "max_frame_start_ms");
      }
      strobe__json_end(j);
    }
    strobe__json_end(j);
    strobe__json_end(j);
  }
  strobe__json_end(j);
  strobe__json_end(j);
}

static void ops_json(strobe__json *j, report *x) {
  const agg_ops *o = &x->a.ops;
  fv_tally t = fv_tally_of(x->a.fx);
  strobe__json_object(j, "operations");
  strobe__json_object(j, "by_kind");
#define OP_KIND(id, number, name) strobe__json_uint(j, name, t.by_kind[number]);
  STROBE_OP_KINDS(OP_KIND)
#undef OP_KIND
  strobe__json_end(j);
  strobe__json_uint(j, "uncommitted", t.by_state[STROBE_FRAME_DROPPED] + t.by_state[STROBE_FRAME_SUPERSEDED]);
  strobe__json_uint(j, "handed_off", o->handed_off);
  strobe__json_uint(j, "without_detail", t.without_detail);
  strobe__json_uint(j, "stages_dropped", o->stages_dropped);
  strobe__json_uint(j, "counters_dropped", o->counters_dropped);
  fv_stages_json(j, x->a.fx, x->in.cap, stage_included, &x->a);
  strobe__json_array(j, "counters");
  for (uint32_t i = 0; i < o->n_counters; i++) {
    const agg_op_counter *k = &o->counters[i];
    strobe__json_object(j, NULL);
    strobe__json_str(j, "name", k->name);
    if (k->kind) strobe__json_str(j, "kind", k->kind);
    else strobe__json_null(j, "kind");
    strobe__json_str(j, "unit", strobe_unit_name(k->unit));
    strobe__json_uint(j, "n", k->n);
    strobe__json_num(j, "sum", k->sum, 6);
    strobe__json_num(j, "mean", k->sum / (double)k->n, 6);
    strobe__json_num(j, "min", k->min, 6);
    strobe__json_num(j, "max", k->max, 6);
    strobe__json_end(j);
  }
  strobe__json_end(j);
  strobe__json_uint(j, "counters_cut", o->counters_cut);
  strobe__json_end(j);
}

/* >>gpu (docs/gpu.md): null when the capture holds no GPU data, never zeros */
static void gap_json(strobe__json *j, const char *key, const strobe__dist *d) {
  if (!d->n) {
    strobe__json_null(j, key);
    return;
  }
  strobe__json_object(j, key);
  strobe__json_uint(j, "n", d->n);
  strobe__json_num(j, "p50_ns", d->p50, 1);
  strobe__json_num(j, "p95_ns", d->p95, 1);
  strobe__json_num(j, "max_ns", d->max, 1);
  strobe__json_end(j);
}

/* lanes: 0 passes, 1 GPU queue lanes, 2 producer lanes (the groups of that kind only). */
static void groups_json(strobe__json *j, const char *key, const strobe__gpu_group *g, uint32_t n, int lanes) {
  strobe__json_array(j, key);
  for (uint32_t i = 0; i < n; i++) {
    if (lanes && g[i].producer != (lanes == 2)) continue;
    strobe__json_object(j, NULL);
    if (lanes) strobe__json_str(j, "domain", g[i].domain);
    strobe__json_str(j, !lanes ? "pass" : lanes == 1 ? "queue" : "lane", g[i].name);
    strobe__json_uint(j, "spans", g[i].spans);
    strobe__json_num(j, "total_ns", g[i].total_ns, 1);
    strobe__json_num(j, "max_ns", g[i].max_ns, 1);
    strobe__json_end(j);
  }
  strobe__json_end(j);
}

static void gpu_json(strobe__json *j, const report *x) {
  const strobe__gpu_data *g = &x->a.gpu;
  if (!strobe__gpu_present(g)) {
    strobe__json_null(j, "gpu");
    return;
  }
  strobe__json_object(j, "gpu");
  strobe__json_uint(j, "frames", g->n_frames);
  strobe__json_uint(j, "spans", g->n_spans - g->n_lane_spans);
  strobe__json_uint(j, "calibration_pairs", g->pairs);
  strobe__json_uint(j, "spans_unmapped", g->unmapped);
  strobe__json_uint(j, "spans_cut", g->spans_cut);
  strobe__json_uint(j, "marks_cut", g->marks_cut);
  strobe__json_num(j, "worst_bound_ns", g->worst_bound_ns, 1);
  gap_json(j, "queue_backlog", &g->backlog);
  gap_json(j, "polling_latency", &g->polling);
  gap_json(j, "gpu_time", &g->gpu_time);
  strobe__json_object(j, "order");
  strobe__json_uint(j, "frames_checked", g->checked);
  strobe__json_uint(j, "frames_violating", g->violated);
  strobe__json_uint(j, "end_after_submit", g->by_check[0]);
  strobe__json_uint(j, "start_before_submit", g->by_check[1]);
  strobe__json_uint(j, "end_before_start", g->by_check[2]);
  strobe__json_uint(j, "fence_before_end", g->by_check[3]);
  strobe__json_end(j);
  groups_json(j, "lanes", g->lanes, g->n_lanes, 1);
  groups_json(j, "passes", g->passes, g->n_passes, 0);
  strobe__json_end(j);
}

/* >>producers (docs/recording.md §External producers): null when the capture holds no producer span */
static void producers_json(strobe__json *j, const report *x) {
  const strobe__gpu_data *g = &x->a.gpu;
  if (!g->n_lane_spans) {
    strobe__json_null(j, "producers");
    return;
  }
  strobe__json_object(j, "producers");
  strobe__json_uint(j, "spans", g->n_lane_spans);
  strobe__json_uint(j, "spans_unmapped", g->lane_spans_unmapped);
  groups_json(j, "lanes", g->lanes, g->n_lanes, 2);
  strobe__json_end(j);
}

static void producers_text(FILE *f, const report *x) {
  const strobe__gpu_data *g = &x->a.gpu;
  if (!g->n_lane_spans) return;
  fprintf(f, "\nexternal producers (docs/recording.md): %u spans on %u lanes\n", g->n_lane_spans, g->n_producer_lanes);
  for (uint32_t i = 0; i < g->n_lanes; i++) {
    if (!g->lanes[i].producer) continue;
    char title[300];
    fprintf(f, "  %s: %llu spans, total %s", strobe__gpu_lane_title(&g->lanes[i], title, sizeof title),
            (unsigned long long)g->lanes[i].spans, cli_dur(g->lanes[i].total_ns));
    fprintf(f, ", max %s\n", cli_dur(g->lanes[i].max_ns));
  }
  if (g->lane_spans_unmapped)
    fprintf(f, "  %llu spans not mapped: their clock domain has no calibration pair in the capture\n",
            (unsigned long long)g->lane_spans_unmapped);
}

static void gap_text(FILE *f, const char *label, const strobe__dist *d) {
  fprintf(f, "  %-32s %8zu", label, d->n);
  if (!d->n) {
    fprintf(f, "  unavailable: no frame has both instants\n");
    return;
  }
  const char *v[] = {cli_dur(d->p50), cli_dur(d->p95), cli_dur(d->max)};
  for (int i = 0; i < 3; i++) cli_cell(f, 11, v[i]);
  fputc('\n', f);
}

static void gpu_text(FILE *f, const report *x) {
  const strobe__gpu_data *g = &x->a.gpu;
  if (!strobe__gpu_present(g)) {
    fprintf(f, "\ngpu: unavailable: the capture holds no GPU spans or frame instants (docs/gpu.md)\n");
    return;
  }
  fprintf(f, "\ngpu (docs/gpu.md): %u frames, %u spans on %u lanes, %llu calibration pairs, bound up to %s\n",
          g->n_frames, g->n_spans - g->n_lane_spans, g->n_lanes - g->n_producer_lanes, (unsigned long long)g->pairs,
          cli_dur(g->worst_bound_ns));
  fprintf(f, "  %-32s %8s %11s %11s %11s\n", "per frame", "n", "p50", "p95", "max");
  gap_text(f, "queue backlog (GPU start-submit)", &g->backlog);
  gap_text(f, "polling latency (fence-GPU end)", &g->polling);
  gap_text(f, "GPU time (GPU end-start)", &g->gpu_time);
  fprintf(f, "  order violations: %llu of %llu frames checked (end>submit %llu, start<submit %llu, end<start %llu, "
             "fence<end %llu), beyond the calibration bound; gaps are reported as measured\n",
          (unsigned long long)g->violated, (unsigned long long)g->checked, (unsigned long long)g->by_check[0],
          (unsigned long long)g->by_check[1], (unsigned long long)g->by_check[2], (unsigned long long)g->by_check[3]);
  for (uint32_t i = 0; i < g->n_lanes; i++) {
    if (g->lanes[i].producer) continue; /* producers_text */
    fprintf(f, "  lane %s/%s: %llu spans, total %s", g->lanes[i].domain, g->lanes[i].name,
            (unsigned long long)g->lanes[i].spans, cli_dur(g->lanes[i].total_ns));
    fprintf(f, ", max %s\n", cli_dur(g->lanes[i].max_ns));
  }
  for (uint32_t i = 0; i < g->n_passes; i++) {
    fprintf(f, "  pass %s: %llu spans, total %s", g->passes[i].name, (unsigned long long)g->passes[i].spans,
            cli_dur(g->passes[i].total_ns));
    fprintf(f, ", max %s\n", cli_dur(g->passes[i].max_ns));
  }
  if (g->unmapped)
    fprintf(f, "  %llu spans not mapped: their clock domain has no calibration pair in the capture\n",
            (unsigned long long)g->unmapped);
  if (g->spans_cut || g->marks_cut || g->lanes_cut || g->passes_cut)
    fprintf(f, "  not kept: %llu spans and %llu instants past %u each, %llu spans of lanes past %u, %llu of passes "
               "past %u\n",
            (unsigned long long)g->spans_cut, (unsigned long long)g->marks_cut, STROBE__GPU_MAX_SPANS,
            (unsigned long long)g->lanes_cut, STROBE__GPU_MAX_LANES, (unsigned long long)g->passes_cut, STROBE__GPU_MAX_PASSES);
}

/* The report's "capture" (what the file holds) and "filters" objects. */
static void capture_json(strobe__json *j, const report *x, const strobe_capture_header *h,
                         const strobe_capture_totals *t) {
  strobe_capture *c = x->in.cap;
  strobe__json_object(j, "capture");
  strobe__json_str(j, "clock_source", h->clock_source);
  strobe__json_num(j, "ns_per_tick", h->ns_per_tick, 9);
  strobe__json_uint(j, "events", t->events);
  strobe__json_uint(j, "scopes", t->scopes);
  strobe__json_uint(j, "unwound_scopes", t->unwound);
  if (t->footer) strobe__json_uint(j, "depth_overflow", t->misuse.depth_overflow);
  else strobe__json_null(j, "depth_overflow");
  strobe__json_uint(j, "threads", strobe_capture_query_thread_count(c));
  strobe__json_num(j, "span_ns", strobe_capture_ticks_to_ns(c, t->end_ticks) - cli_start_ns(c), 1);
  strobe__json_end(j);

  strobe__json_object(j, "filters");
  strobe__json_str(j, "thread", x->a.filter.thread);
  strobe__json_str(j, "name", x->a.filter.name);
  if (x->a.filter.has_range && isfinite(x->a.filter.from_ns)) strobe__json_num(j, "from_ms", MS(x->a.filter.from_ns), 6);
  else strobe__json_null(j, "from_ms");
  if (x->a.filter.has_range && isfinite(x->a.filter.to_ns)) strobe__json_num(j, "to_ms", MS(x->a.filter.to_ns), 6);
  else strobe__json_null(j, "to_ms");
  strobe__json_end(j);
}

/* The "sites" array: each site shown (ids, n_ids) with its counts, times and percentiles. */
static void sites_json(strobe__json *j, report *x, const uint32_t *ids, uint32_t n_ids) {
  strobe_capture *c = x->in.cap;
  strobe__json_array(j, "sites");
  for (uint32_t i = 0; i < n_ids; i++) {
    agg_site *s = &x->a.sites[ids[i]];
    const strobe_capture_site *cs = strobe_capture_query_site(c, ids[i]);
    strobe__dist d = agg_dist(s);
    strobe__json_object(j, NULL);
    site_meta_json(j, cs);
    strobe__json_str(j, "kind", cli_site_kind_name(cs->kind));
    strobe__json_uint(j, "count", s->count);
    strobe__json_num(j, "total_ns", s->total_ns, 1);
    strobe__json_num(j, "self_ns", s->self_ns, 1);
    if (x->correct) strobe__json_num(j, "self_corrected_ns", self_shown(x, s->self_ns, s->count), 1);
    else strobe__json_null(j, "self_corrected_ns");
    strobe__json_num(j, "mean_ns", s->total_ns / (double)s->count, 1);
    strobe__json_num(j, "min_ns", s->min_ns, 1);
    pct_json(j, "p50", d.p50, d.n);
    pct_json(j, "p95", d.p95, d.n);
    pct_json(j, "p99", d.p99, d.n);
    pct_json(j, "max", s->max_ns, s->count);
    strobe__json_bool(j, "sampled", s->count > s->n_sample);
    strobe__json_uint(j, "n_sampled", s->n_sample);
    strobe__json_end(j);
  }
  strobe__json_end(j);
}

/* The "stage_parents" array: stages seen under more than one parent, each pair with its times. */
static void stage_parents_json(strobe__json *j, report *x) {
  strobe__json_array(j, "stage_parents");
  for (uint32_t i = 0; i < x->a.n_stage_parents; i++) {
    const agg_stage_parent *e = &x->a.stage_parents[i];
    if (!several_parents(x, e)) continue;
    strobe__json_object(j, NULL);
    strobe__json_str(j, "name", site_name_of(x, e->site));
    strobe__json_str(j, "nested_in", site_name_of(x, e->parent));
    strobe__json_uint(j, "count", e->count);
    strobe__json_num(j, "total_ns", e->total_ns, 1);
    strobe__json_num(j, "max_ns", e->max_ns, 1);
    strobe__json_end(j);
  }
  strobe__json_end(j);
  strobe__json_uint(j, "stage_parents_cut", x->a.stage_parents_cut);
}

/* What the figures leave out or cost: "overhead", "not_included" (unfinished, unwound, lost
 * scopes) and "interned_names". */
static void accounting_json(strobe__json *j, report *x, const strobe_capture_header *h,
                            const strobe_capture_totals *t) {
  strobe_capture *c = x->in.cap;
  strobe__json_object(j, "overhead");
  strobe__json_num(j, "per_scope_ns", h->overhead_per_scope_ns, 3);
  strobe__json_uint(j, "scopes", t->scopes);
  strobe__json_num(j, "estimated_total_ns", h->overhead_per_scope_ns * (double)t->scopes, 1);
  cli_cost k = cli_query_cost(c);
  strobe__json_num(j, "event_ns", k.event_ns, 3);
  if (k.drain_events) strobe__json_num(j, "drain_ns_per_event", k.drain_ns_per_event, 3);
  else strobe__json_null(j, "drain_ns_per_event");
  strobe__json_uint(j, "drain_cpu_ns", k.drain_cpu_ns);
  strobe__json_uint(j, "drain_events", k.drain_events);
  strobe__json_end(j);
  strobe__json_object(j, "not_included");
  strobe__json_uint(j, "unfinished_scopes", t->unfinished);
  strobe__json_uint(j, "unwound_scopes", t->unwound);
  strobe__json_array(j, "unwound_by_site"); /* docs/recording.md, Unwinding: counted, never timed */
  for (uint32_t id = 1; id < x->a.n_sites; id++) {
    if (!x->a.sites[id].unwound) continue;
    strobe__json_object(j, NULL);
    strobe__json_str(j, "name", strobe_capture_query_site(c, id)->name);
    strobe__json_uint(j, "unwound", x->a.sites[id].unwound);
    strobe__json_end(j);
  }
  strobe__json_end(j);
  strobe__json_uint(j, "lost_scopes", t->lost_scopes);
  strobe__json_uint(j, "lost_events", t->lost);
  strobe__json_uint(j, "orphan_ends", t->orphan_ends);
  strobe__json_end(j);
  /* Run-time names (docs/recording.md §Run-time names): refusals are only known from the footer. */
  strobe__json_object(j, "interned_names");
  strobe__json_uint(j, "sites", count_interned(x));
  if (t->footer) {
    strobe__json_uint(j, "refused_invalid", t->misuse.intern_invalid);
    strobe__json_uint(j, "refused_full", t->misuse.intern_full);
  } else {
    strobe__json_null(j, "refused_invalid");
    strobe__json_null(j, "refused_full");
  }
  strobe__json_end(j);
}

static void write_json(cli_output *o, report *x, const uint32_t *ids, uint32_t n_ids) {
  strobe_capture *c = x->in.cap;
  const strobe_capture_header *h = strobe_capture_query_header(c);
  strobe_capture_totals t = strobe_capture_query_totals(c);
  strobe__json j = {0};
  strobe__json_object(&j, NULL);
  strobe__json_str(&j, "file", x->in.path);
  strobe__json_str(&j, "state", cli_end_state(&x->in));
  strobe__json_bool(&j, "cut_short", t.cut_short || x->in.rc == STROBE_ETRUNCATED);
  cli_crash_json(&j, x->in.cap);
  capture_json(&j, x, h, &t);
  strobe__json_object(&j, "sampling");
  strobe__json_uint(&j, "reservoir", AGG_RESERVOIR);
  strobe__json_str(&j, "method", "nearest-rank percentiles over every duration, or over a uniform random sample "
                                  "of reservoir durations (fixed seed) when a site has more; max is always exact");
  strobe__json_end(&j);

  strobe__json_str(&j, "sort", g_sort_names[x->sort]);
  correction_json(&j, x, ids, n_ids);
  graph_json(&j, x);
  sites_json(&j, x, ids, n_ids);

  fv_frames_json(&j, x->a.fx, c, x->a.start_ns, x->top_frames);

  ops_json(&j, x);
  numbers_json(&j, x, "counters", STROBE_SITE_COUNTER);
  numbers_json(&j, x, "gauges", STROBE_SITE_GAUGE);
  numbers_json(&j, x, "values", STROBE_SITE_VALUE);
  numbers_json(&j, x, "loops", STROBE_SITE_CUMULATIVE);
  kinds_json(&j, x);

  stage_parents_json(&j, x);

  accounting_json(&j, x, h, &t);
  gpu_json(&j, x);
  producers_json(&j, x);
  cli_merge_json(&j, c); /* docs/cli.md §strobe merge: what a merge could not carry */
  cli_calls_json(&j, c); /* docs/exploration.md: what call tracing cut */
  samples_json(&j, &x->sr, &x->a, c, ids, n_ids, x->functions); /* docs/exploration.md §Sampling */
  mem_json(&j, &x->m, x->a.fx, x->a.start_ns); /* docs/memory.md */
  if (x->m.messages_wanted) mem_messages_json(&j, &x->m, c, x->a.start_ns);
  locks_json(&j, &x->lk, c);                                      /* docs/locks.md */
  strobe__json_end(&j);
  cli_output_json(o, &j);
}

/* >>text: durations in the unit that fits each, numbers in their site's unit (cli_dur, cli_num) */

/* n cells of w columns (cli_cell). */
static void cells(FILE *f, int w, int n, const char *const *v) {
  for (int i = 0; i < n; i++) cli_cell(f, w, v[i]);
}

static void kinds_text(FILE *f, report *x) {
  const kinds *k = &x->k;
  if (!k->available) {
    if (k->why && strstr(k->why, "no counters or gauges by kind") == NULL)
      fprintf(f, "\ncounters and gauges by kind, per frame: none (%s)\n", k->why);
    return;
  }
  char buf[CLI_THREAD_LABEL_MAX];
  fprintf(f, "\ncounters and gauges by kind, per frame (%llu frames of %s %s, %.1f to %.1f ms)\n",
          (unsigned long long)kinds_frames(k), k->source == STROBE_FRAME_SOURCE_PASSES ? "window" : "thread",
          series_label(x, k->key, buf, sizeof buf), MS(k->starts[0] - x->a.start_ns),
          MS(k->starts[k->n_starts - 1] - x->a.start_ns));
  fprintf(f, "  %-34s %14s %14s %14s %14s %10s\n", "family/kind", "total", "mean/frame", "max/frame", "max at ms",
          "outside");
  for (uint32_t i = 0; i < k->n_rows; i++) {
    const kind_row *r = &k->rows[i];
    const strobe_capture_site *s = strobe_capture_query_site(x->in.cap, r->site);
    int counter = s->kind == STROBE_SITE_COUNTER;
    int w = 34 - (int)strlen(s->name) - 1;
    fprintf(f, "  %s/%-*s", s->name, w > 0 ? w : 0, s->category);
    char at[32] = "-";
    if (r->events) snprintf(at, sizeof at, "%.1f", MS(k->starts[r->max_frame] - x->a.start_ns));
    /* Gauges are levels: their mean and max over the samples taken in frames. */
    const char *v[] = {counter ? cli_num(r->total, s->unit) : "(level)",
                       counter ? cli_num(r->total / (double)kinds_frames(k), s->unit)
                               : (r->events ? cli_num(r->total / (double)r->events, s->unit) : "-"),
                       r->events ? cli_num(r->max, s->unit) : "-", at};
    cells(f, 14, 4, v);
    fprintf(f, " %10llu\n", (unsigned long long)r->outside);
  }
}

static void numbers_text(FILE *f, report *x, uint32_t kind) {
  static const char *titles[8] = {
      [STROBE_SITE_COUNTER] = "counters (sum of deltas)", [STROBE_SITE_GAUGE] = "gauges (levels)",
      [STROBE_SITE_VALUE] = "values (numbers attached to scopes)",
      [STROBE_SITE_CUMULATIVE] = "loops (cumulative scopes; iteration times)"};
  if (!count_kind(x, kind)) return;
  fprintf(f, "\n%s\n", titles[kind]);
  if (kind == STROBE_SITE_COUNTER) fprintf(f, "  %-28s %16s %10s %8s\n", "name", "sum", "count", "unit");
  else if (kind == STROBE_SITE_CUMULATIVE)
    fprintf(f, "  %-28s %8s %10s %12s %12s %12s %12s\n", "name", "entries", "iterations", "total", "mean", "min",
            "max");
  else if (kind == STROBE_SITE_VALUE)
    fprintf(f, "  %-28s %14s %14s %14s %14s %10s %8s\n", "name", "mean", "min", "max", "last", "count", "unit");
  else fprintf(f, "  %-28s %14s %14s %14s %10s %8s\n", "name", "last", "min", "max", "count", "unit");
  for (uint32_t id = 1; id < x->a.n_sites; id++) {
    const strobe_capture_site *s = strobe_capture_query_site(x->in.cap, id);
    agg_site *st = &x->a.sites[id];
    if (!s || s->kind != kind || !st->count || !st->included) continue;
    const char *unit = strobe_unit_name(s->unit) ? strobe_unit_name(s->unit) : "?";
    if (kinds_site_is_kind(s)) { /* family/kind */
      int w = 28 - (int)strlen(s->name) - 1;
      fprintf(f, "  %s/%-*s", s->name, w > 0 ? w : 0, s->category);
    } else {
      fprintf(f, "  %-28s", s->name);
    }
    if (kind == STROBE_SITE_COUNTER) {
      const char *v[] = {cli_num(st->total_ns, s->unit)};
      cells(f, 16, 1, v);
    } else if (kind == STROBE_SITE_CUMULATIVE) {
      fprintf(f, " %8llu %10llu", (unsigned long long)st->count, (unsigned long long)st->iterations);
      const char *v[] = {cli_dur(st->total_ns), cli_dur(st->iterations ? st->total_ns / (double)st->iterations : 0),
                         cli_dur(st->loop_min), cli_dur(st->loop_max)};
      cells(f, 12, 4, v);
      fputc('\n', f);
      continue;
    } else if (kind == STROBE_SITE_VALUE) {
      const char *v[] = {cli_num(st->total_ns / (double)st->count, s->unit), cli_num(st->vmin, s->unit),
                         cli_num(st->vmax, s->unit), cli_num(st->last, s->unit)};
      cells(f, 14, 4, v);
    } else {
      const char *v[] = {cli_num(st->last, s->unit), cli_num(st->vmin, s->unit), cli_num(st->vmax, s->unit)};
      cells(f, 14, 3, v);
    }
    fprintf(f, " %10llu %8s\n", (unsigned long long)st->count, unit);
  }
}

static void ops_text(FILE *f, report *x) {
  const agg_ops *o = &x->a.ops;
  fv_tally t = fv_tally_of(x->a.fx);
  uint64_t total = 0;
  for (int k = 0; k < STROBE_OP_KIND_LIMIT; k++) total += t.by_kind[k];
  if (!total) return;
  fprintf(f, "\noperations: %llu pass, %llu rebuild, %llu input, %llu request (one each, wherever it ran)\n",
          (unsigned long long)t.by_kind[1], (unsigned long long)t.by_kind[2], (unsigned long long)t.by_kind[3],
          (unsigned long long)t.by_kind[4]);
  if (t.without_detail)
    fprintf(f, "  %llu began before the capture: their stages and counters are unknown, not zero\n",
            (unsigned long long)t.without_detail);
  fv_stages_text(f, x->a.fx, x->in.cap, stage_included, &x->a);
  if (o->n_counters) {
    fprintf(f, "  operation counters (per operation)\n  %-24s %8s %14s %14s %14s\n", "name", "n", "sum", "mean", "max");
    for (uint32_t i = 0; i < o->n_counters; i++) {
      const agg_op_counter *k = &o->counters[i];
      char name[160];
      snprintf(name, sizeof name, "%s%s%s", k->name, k->kind ? "/" : "", k->kind ? k->kind : ""); /* family/kind */
      char sum[32], mean[32], max[32]; /* by its unit (docs/recording.md §Units): bytes as KiB, ms as a duration */
      fprintf(f, "  %-24s %8llu %14s %14s %14s\n", name, (unsigned long long)k->n,
              strobe_unit_format(sum, sizeof sum, k->sum, k->unit),
              strobe_unit_format(mean, sizeof mean, k->sum / (double)k->n, k->unit),
              strobe_unit_format(max, sizeof max, k->max, k->unit));
    }
  }
  if (o->stages_dropped || o->counters_dropped || o->counters_cut)
    fprintf(f, "  not kept: %llu stages and %llu counters past the per-operation bounds, %llu counter values past "
               "%u names\n",
            (unsigned long long)o->stages_dropped, (unsigned long long)o->counters_dropped,
            (unsigned long long)o->counters_cut, AGG_MAX_OP_COUNTERS);
}

/* Scopes that never ended in their own time, said in the first lines: unwound
 * ones (their END never ran; docs/recording.md, Unwinding) and those past the
 * depth limit (never recorded). */
static void unwound_text(FILE *f, report *x, const strobe_capture_totals *t) {
  uint64_t overflow = t->footer ? t->misuse.depth_overflow : 0;
  if (!t->unwound && !overflow) return;
  fprintf(f, "warning  ");
  if (t->unwound) {
    fprintf(f, "%llu scopes unwound (a longjmp, exception or thread exit skipped their END; closed when found, "
               "never timed)", (unsigned long long)t->unwound);
    int shown = 0;
    for (uint32_t id = 1; id < x->a.n_sites; id++) {
      if (!x->a.sites[id].unwound) continue;
      if (shown++ == 3) {
        fprintf(f, ", ...");
        break;
      }
      fprintf(f, "%s %s %llu", shown > 1 ? "," : ":", strobe_capture_query_site(x->in.cap, id)->name,
              (unsigned long long)x->a.sites[id].unwound);
    }
    if (overflow) fprintf(f, "; ");
  }
  if (overflow)
    fprintf(f, "%llu scopes deeper than %d open scopes not recorded (depth overflow)", (unsigned long long)overflow,
            STROBE_MAX_DEPTH);
  fputc('\n', f);
}

static void correction_text(FILE *f, const report *x, const uint32_t *ids, uint32_t n_ids) {
  if (!x->correct) return;
  fprintf(f, "  self corrected for the recording cost: minus %s per call (%d events at the writer's calibrated %s)",
          cli_dur(x->cost), CALL_EVENTS, cli_dur(x->event_ns));
  uint32_t floored = count_floored(x, ids, n_ids);
  if (floored) fprintf(f, "; %u sites floored at 0", floored);
  fputc('\n', f);
}

/* --callers (callers = 1) or --callees FUNC: one row per site, sorted by total. */
static void graph_text(FILE *f, report *x, int callers) {
  if (!(callers ? x->callers : x->callees)) return;
  uint32_t n, *ids = edge_ids(x, callers, &n);
  fprintf(f, "\n%s of %s (%s; sorted by total)\n", callers ? "callers" : "callees", x->a.filter.graph,
          callers ? "its calls, total and self time under each caller" : "each callee's calls, total and self time under it");
  if (x->correct) fprintf(f, "  self corrected: minus %s per call\n", cli_dur(x->cost));
  if (!n) fprintf(f, "  none\n");
  else fprintf(f, "  %-40s %10s %10s %10s\n", callers ? "caller" : "callee", "calls", "total", "self");
  for (uint32_t i = 0; i < n; i++) {
    const agg_edge *e = callers ? &x->a.sites[ids[i]].caller : &x->a.sites[ids[i]].callee;
    fprintf(f, "  %-40.40s %10llu", edge_name(x, ids[i]), (unsigned long long)e->count);
    const char *v[] = {cli_dur(e->total_ns), cli_dur(self_shown(x, e->self_ns, e->count))};
    cells(f, 10, 2, v);
    fputc('\n', f);
  }
  if (x->a.graph_cut)
    fprintf(f, "  %llu calls deeper than %u scopes not counted: their caller is unknown\n",
            (unsigned long long)x->a.graph_cut, AGG_MAX_DEPTH);
  free(ids);
}

/* The scopes table: each site shown (ids, n_ids) with its count, times and
 * percentiles, and what its n means when sampled. */
static void sites_text(FILE *f, report *x, const uint32_t *ids, uint32_t n_ids, const strobe_capture_totals *t) {
  strobe_capture *c = x->in.cap;
  int width = 4;
  for (uint32_t i = 0; i < n_ids; i++) {
    int l = (int)strlen(strobe_capture_query_site(c, ids[i])->name);
    if (l > width) width = l;
  }
  if (width > 40) width = 40;
  int sampled = 0;
  fprintf(f, "\nscopes (sorted by %s; totals are inclusive: nested sites overlap, never sum them)\n",
          g_sort_names[x->sort]);
  correction_text(f, x, ids, n_ids);
  if (!n_ids) fprintf(f, "  none completed%s\n", t->unfinished ? " (see unfinished below)" : ": empty, not fast");
  else fprintf(f, "  %-*s %10s %10s %10s %10s %10s %10s %10s %8s\n", width, "site", "count", "total", "self", "p50",
               "p95", "p99", "max", "n");
  for (uint32_t i = 0; i < n_ids; i++) {
    agg_site *s = &x->a.sites[ids[i]];
    strobe__dist d = agg_dist(s);
    int sm = s->count > s->n_sample;
    sampled |= sm;
    fprintf(f, "  %-*.*s %10llu", width, width, strobe_capture_query_site(c, ids[i])->name,
            (unsigned long long)s->count);
    const char *v[] = {cli_dur(s->total_ns), cli_dur(self_shown(x, s->self_ns, s->count)), cli_dur(d.p50), cli_dur(d.p95),
                       cli_dur(d.p99),      cli_dur(s->max_ns)};
    cells(f, 10, 6, v);
    fprintf(f, " %8llu%s\n", (unsigned long long)d.n, sm ? "*" : "");
  }
  if (n_ids)
    fprintf(f, "  p50/p95/p99 are nearest-rank over n durations; max is exact over every scope (n = count)\n");
  if (sampled)
    fprintf(f, "  * more than %u scopes: n is a uniform random sample of them (fixed seed), so p50/p95/p99\n"
               "    are estimates from that sample; count, total, self and max are exact\n", AGG_RESERVOIR);
}

/* Stages that ran under several parents, each pair with its times. */
static void stage_parents_text(FILE *f, report *x) {
  int header = 0;
  for (uint32_t i = 0; i < x->a.n_stage_parents; i++) {
    const agg_stage_parent *e = &x->a.stage_parents[i];
    if (!several_parents(x, e)) continue;
    if (!header++)
      fprintf(f, "\nstages that ran under several parents (nested in: the stage open around it; do not sum)\n"
                 "  %-28s %-28s %10s %12s %12s\n", "stage", "nested in", "count", "total", "max");
    const char *parent = site_name_of(x, e->parent);
    fprintf(f, "  %-28.28s %-28.28s %10llu", site_name_of(x, e->site), parent ? parent : "-",
            (unsigned long long)e->count);
    const char *v[] = {cli_dur(e->total_ns), cli_dur(e->max_ns)};
    cells(f, 12, 2, v);
    fputc('\n', f);
  }
  if (x->a.stage_parents_cut)
    fprintf(f, "  %llu stage scopes not split by parent: more than %u (stage, parent) pairs\n",
            (unsigned long long)x->a.stage_parents_cut, AGG_MAX_STAGE_PARENTS);
}

/* Names interned at run time, and those refused (known from the footer). */
static void interned_text(FILE *f, report *x, const strobe_capture_totals *t) {
  uint32_t interned = count_interned(x);
  uint64_t refused = t->misuse.intern_invalid + t->misuse.intern_full;
  if (interned || refused) {
    fprintf(f, "run-time names: %u sites named at run time (strobe_site_intern)", interned);
    if (refused)
      fprintf(f, "; %llu names refused (%llu invalid, %llu past the table's bound), recorded under fallback sites",
              (unsigned long long)refused, (unsigned long long)t->misuse.intern_invalid,
              (unsigned long long)t->misuse.intern_full);
    fputc('\n', f);
  }
}

static void write_text(cli_output *o, report *x, const uint32_t *ids, uint32_t n_ids) {
  FILE *f = o->f;
  strobe_capture *c = x->in.cap;
  const strobe_capture_header *h = strobe_capture_query_header(c);
  strobe_capture_totals t = strobe_capture_query_totals(c);
  double span = strobe_capture_ticks_to_ns(c, t.end_ticks) - cli_start_ns(c);
  fprintf(f, "capture  %s: %s\n", x->in.path, cli_end_state(&x->in));
  fprintf(f, "         clock %s at %.6f ns/tick; %llu events, %llu scopes, %u threads over %s\n",
          h->clock_source, h->ns_per_tick, (unsigned long long)t.events, (unsigned long long)t.scopes,
          strobe_capture_query_thread_count(c), cli_dur(span));
  cli_loss_text(f, "LOSS     ", 9, c);
  unwound_text(f, x, &t);
  if (x->a.filter.thread || x->a.filter.name || x->a.filter.has_range) {
    fprintf(f, "filters ");
    if (x->a.filter.thread) fprintf(f, " thread %s%s;", x->a.filter.thread, x->a.thread_matched ? "" : " (matches no thread)");
    if (x->a.filter.name) fprintf(f, " name contains \"%s\";", x->a.filter.name);
    if (x->a.filter.has_range) fprintf(f, " %.3f to %.3f ms after the start (scopes wholly inside);",
                                       MS(x->a.filter.from_ns), MS(x->a.filter.to_ns));
    fputc('\n', f);
  }

  sites_text(f, x, ids, n_ids, &t);
  graph_text(f, x, 1);
  graph_text(f, x, 0);
  fv_frames_text(f, x->a.fx, c, x->a.start_ns, x->top_frames);
  ops_text(f, x);
  gpu_text(f, x);
  producers_text(f, x);

  numbers_text(f, x, STROBE_SITE_COUNTER);
  numbers_text(f, x, STROBE_SITE_GAUGE);
  numbers_text(f, x, STROBE_SITE_VALUE);
  numbers_text(f, x, STROBE_SITE_CUMULATIVE);
  kinds_text(f, x);
  mem_text(f, &x->m, c, x->a.fx, x->a.start_ns, x->top_frames);
  if (x->m.messages_wanted) mem_messages_text(f, &x->m, c, x->a.start_ns);

  stage_parents_text(f, x);
  fprintf(f, "\n");
  cli_cost_text(f, "cost ", 5, c);
  fprintf(f, "overhead %s per scope (calibrated by the writer): about %s over %llu scopes\n",
          cli_dur(h->overhead_per_scope_ns), cli_dur(h->overhead_per_scope_ns * (double)t.scopes),
          (unsigned long long)t.scopes);
  if (t.unfinished || t.lost_scopes || t.lost || t.orphan_ends)
    fprintf(f, "not included: %llu unfinished scopes (never ended), %llu lost scopes (END dropped), %llu lost "
               "events, %llu orphan ends\n",
            (unsigned long long)t.unfinished, (unsigned long long)t.lost_scopes, (unsigned long long)t.lost,
            (unsigned long long)t.orphan_ends);
  cli_merge_text(f, c);
  cli_crash_text(f, "crashed: ", c);
  cli_calls_text(f, "call tracing: ", 0, c);
  samples_text(f, &x->sr, &x->a, c, ids, n_ids, x->functions);
  locks_text(f, &x->lk, c);
  interned_text(f, x, &t);
}

static int graph_found(const agg *a) {
  for (uint32_t id = 1; id < a->n_sites; id++)
    if (a->sites[id].graph) return 1;
  return 0;
}

/* --sort: the sites (sorted by total) reordered by the chosen key; 0, or -1 out of memory. */
static int sort_sites(report *x, uint32_t *ids, uint32_t n_ids) {
  if (x->sort == SORT_TOTAL) return 0;
  double *key = calloc(x->a.n_sites ? x->a.n_sites : 1, sizeof *key);
  if (!key) return -1;
  for (uint32_t i = 0; i < n_ids; i++) {
    agg_site *s = &x->a.sites[ids[i]];
    key[ids[i]] = x->sort == SORT_SELF    ? self_shown(x, s->self_ns, s->count)
                  : x->sort == SORT_COUNT ? (double)s->count
                                          : agg_dist(s).p95;
  }
  agg_sort_by(ids, n_ids, key);
  free(key);
  return 0;
}

typedef struct report_args {
  agg_filter flt;
  int json, quiet;
} report_args;

/* The options into *x and *r: -1 to go on, else the exit code (usage errors said; --help printed). */
static int parse_args(int argc, char **argv, report *x, report_args *r) {
  static const struct option opts[] = {{"thread", required_argument, NULL, 't'}, {"name", required_argument, NULL, 'n'},
                                       {"from", required_argument, NULL, 'F'},   {"to", required_argument, NULL, 'T'},
                                       {"top", required_argument, NULL, 'N'},    {"json", no_argument, NULL, 'j'},
                                       {"quiet", no_argument, NULL, 'q'},        {"help", no_argument, NULL, 'h'},
                                       {"samples", no_argument, NULL, 'S'},      {"sort", required_argument, NULL, 'o'},
                                       {"callers", required_argument, NULL, 'C'},
                                       {"callees", required_argument, NULL, 'E'},
                                       {"correct-overhead", no_argument, NULL, 'O'},
                                       {"messages", no_argument, NULL, 'M'},
                                       {0}};
  agg_filter flt = {NULL, NULL, 0, -INFINITY, INFINITY, NULL};
  int samples = 0, sort = SORT_TOTAL, ch;
  uint64_t top = 0;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
    double v;
    switch (ch) {
      case 't': flt.thread = optarg; break;
      case 'n': flt.name = optarg; break;
      case 'F':
      case 'T':
        if (cli_parse_double(optarg, &v))
          return cli_usage_error("report", "--%s needs a number of ms, not '%s'", ch == 'F' ? "from" : "to", optarg);
        flt.has_range = 1;
        if (ch == 'F') flt.from_ns = v * 1e6;
        else flt.to_ns = v * 1e6;
        break;
      case 'N':
        if (cli_parse_u64(optarg, &top) || top == 0 || top > 1000000)
          return cli_usage_error("report", "--top needs a count from 1 to 1000000, not '%s'", optarg);
        break;
      case 'j': r->json = 1; break;
      case 'q': r->quiet = 1; break;
      case 'S': samples = 1; break;
      case 'o':
        sort = -1;
        for (int k = 0; k < 4; k++)
          if (!strcmp(optarg, g_sort_names[k])) sort = k;
        if (sort < 0) return cli_usage_error("report", "--sort takes self, total, count or p95, not '%s'", optarg);
        break;
      case 'C':
      case 'E':
        if (!*optarg) return cli_usage_error("report", "--%s needs a function name", ch == 'C' ? "callers" : "callees");
        if (flt.graph && strcmp(flt.graph, optarg))
          return cli_usage_error("report", "--callers and --callees take the same FUNC, not '%s' and '%s'", flt.graph,
                                 optarg);
        flt.graph = optarg;
        *(ch == 'C' ? &x->callers : &x->callees) = 1;
        break;
      case 'O': x->correct = 1; break;
      case 'M': x->m.messages_wanted = 1; break;
      case 'h': fputs(g_usage, stdout); return CLI_OK;
      default: return cli_bad_option("report", argv, optind);
    }
  }
  if (argc - optind != 1) return cli_usage_error("report", "expected one capture FILE");
  if (flt.has_range && !(flt.to_ns > flt.from_ns))
    return cli_usage_error("report", "--to must be later than --from");
  r->flt = flt;
  x->top = (uint32_t)top;
  x->top_frames = top ? (uint32_t)(top < 1000 ? top : 1000) : 10;
  x->functions = samples ? (top ? (uint32_t)top : 20) : 0;
  x->sort = sort;
  return -1;

}

/* The sections that read the file again once the first read is done (kinds, the CPU split, allocations, locks),
 * each only when the first read reached the end; returns the status after them. */
static int second_reads(report *x, const char *path, int status) {
  static const char why[] = "the capture could not be read to its end";
  if (status == CLI_OK) {
    int krc = kinds_collect(&x->k, &x->a, x->in.cap, path, x->in.is_stdin);
    if (krc) status = krc;
  } else {
    x->k.why = why;
  }
  if (status == CLI_OK) {
    int src = samples_split(&x->sr, &x->a, x->in.cap, path, x->in.is_stdin);
    if (src) status = src;
  } else {
    x->sr.why = why;
  }
  if (status == CLI_OK) {
    int mrc = mem_collect(&x->m, &x->a, x->in.cap, path, x->in.is_stdin);
    if (mrc) status = mrc;
  } else {
    x->m.why = why;
  }
  if (status == CLI_OK) {
    int lrc = locks_collect(&x->lk, x->in.cap, path, x->in.is_stdin);
    if (lrc) status = lrc;
  }
  return status;
}

int cmd_report(int argc, char **argv) {
  report x = {0};
  report_args ra = {0};
  int rc = parse_args(argc, argv, &x, &ra);
  if (rc >= 0) return rc;
  agg_filter flt = ra.flt;
  int json = ra.json;
  rc = cli_open(&x.in, "report", argv[optind], ra.quiet);
  if (rc) return rc;
  x.event_ns = strobe_capture_query_header(x.in.cap)->event_cost_ns;
  x.cost = CALL_EVENTS * x.event_ns;
  if (x.correct && !(x.cost > 0)) {
    cli_error("report", "--correct-overhead: the capture records no calibrated cost per event (an older writer)");
    cli_close(&x.in);
    return CLI_FAIL;
  }
  if (agg_init(&x.a, x.in.cap, &flt, x.top_frames)) {
    cli_error("report", "out of memory");
    cli_close(&x.in);
    return CLI_FAIL;
  }
  agg_read_all(&x.a, &x.in);
  int status = cli_finish_read(&x.in);
  strobe__gpu_resolve(&x.a.gpu, x.in.cap); /* after the whole capture: later pairs improve earlier spans */
  if (x.a.failed || strobe_frames_query_cut(x.a.fx).failed || x.a.gpu.failed) {
    cli_error("report", "out of memory: the figures below are incomplete");
    status = CLI_FAIL;
  }
  if (flt.thread && !x.a.thread_matched) cli_error("report", "warning: no thread matches --thread %s", flt.thread);
  status = second_reads(&x, argv[optind], status);

  if (flt.graph && !graph_found(&x.a)) {
    rc = cli_usage_error("report", "--%s %s: no site in the capture has that name",
                         x.callers ? "callers" : "callees", flt.graph);
    samples_report_free(&x.sr);
    mem_free(&x.m);
    locks_free(&x.lk);
    kinds_free(&x.k);
    agg_free(&x.a);
    cli_close(&x.in);
    return rc;
  }
  uint32_t n_ids = 0;
  uint32_t *ids = agg_sorted_scopes(&x.a, x.in.cap, &n_ids);
  if (ids && sort_sites(&x, ids, n_ids)) x.a.failed = 1;
  if (x.top && n_ids > x.top) n_ids = x.top;
  cli_output o;
  if ((rc = cli_output_open(&o, "report", NULL)) == CLI_OK) {
    if (json) write_json(&o, &x, ids, n_ids);
    else write_text(&o, &x, ids, n_ids);
    rc = cli_output_close(&o);
  }
  free(ids);
  mem_free(&x.m);
  samples_report_free(&x.sr);
  locks_free(&x.lk);
  kinds_free(&x.k);
  agg_free(&x.a);
  cli_close(&x.in);
  return rc ? rc : status;
}
