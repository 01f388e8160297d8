/*
 * report_json.c — a report snapshot as content-free JSON version 1
 * (docs/report-schema.json). Runs with no lock held: the snapshot is
 * immutable. Carries only toolkit window ids, static labels and numbers.
 * Lives with the sessions because it reads their report's internals
 * (report.h); the JSON encoding itself is the format layer's writer.
 *
 * Contents: >>head >>truncated >>samples >>unfinished >>summaries >>application >>tail >>entry
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/percentile.h"
#include "format/json_writer.h"
#include "platform/host.h"
#include "platform/invariant.h"
#include "probe/probe.h"
#include "session/report.h"

#define MS 3 /* decimals for milliseconds: microsecond resolution */

static const char *kind_name(int kind) {
  const char *name = kind > 0 ? strobe_op_kind_name((uint32_t)kind) : NULL;
  return name ? name : "unknown";
}

static const char *status_name(strobe_report_status s) {
  switch (s) {
    case STROBE_REPORT_COMPLETE: return "complete";
    case STROBE_REPORT_EMPTY: return "empty";
    case STROBE_REPORT_UNFINISHED: return "unfinished";
    default: return "partial";
  }
}

static const char *status_note(strobe_report_status s) {
  switch (s) {
    case STROBE_REPORT_COMPLETE: return "every returned sample is a whole operation inside the session";
    case STROBE_REPORT_EMPTY: return "no operation completed inside the session and none is running: empty, not fast";
    case STROBE_REPORT_UNFINISHED:
      return "no completed operation qualifies, but work is running: see unfinished (not a fast result)";
    default: return "completed samples plus work still running: see unfinished, never added to the samples";
  }
}

/* Stage labels come from the report's own copies (report.h), never from a site. */
static const char *site_name(const strobe_report *r, uint32_t id) { return strobe__report_site_of(r, id)->name; }

static const char *site_declared_parent(const strobe_report *r, uint32_t id) {
  const strobe__report_site *e = strobe__report_site_of(r, id);
  return e->declared[0] ? e->declared : NULL;
}

static void dist(strobe__json *j, const strobe__dist *d) {
  strobe__json_uint(j, "n", d->n);
  strobe__json_num(j, "p50_ms", d->p50, MS);
  strobe__json_num(j, "p95_ms", d->p95, MS);
  strobe__json_num(j, "p99_ms", d->p99, MS);
  strobe__json_num(j, "max_ms", d->max, MS);
}

/* >>head */
/* Format version, identity and what the report holds. */
static void write_head(strobe__json *j, const strobe_report *r) {
  strobe_report_status st = strobe_report_query_status(r);
  strobe__json_int(j, "version", 1);
  strobe__json_str(j, "id", r->id);
  strobe__json_bool(j, "final", r->final);
  strobe__json_str(j, "status", status_name(st));
  strobe__json_str(j, "status_note", status_note(st));
}

/* First, because every consumer of events misses what was lost; the
 * report's own samples never pass through the rings (operations feed
 * sessions directly), so the loss is the captures', said here all the same. */
static void write_loss(strobe__json *j, const strobe_report *r) {
  strobe__json_object(j, "loss");
  strobe__json_uint(j, "events_lost", r->events_lost);
  const char *mode = strobe_overflow_name(r->overflow);
  strobe__json_str(j, "overflow", mode ? mode : "?");
  strobe__json_str(j, "note",
                   "ring events this process lost while the session ran: captures, flight recorder and live streams "
                   "miss them; this report's samples come from operations directly and are complete");
  strobe__json_end(j);
}

static void write_units(strobe__json *j) {
  strobe__json_object(j, "units");
  strobe__json_str(j, "durations", "milliseconds");
  strobe__json_str(j, "stage_timings", "CPU wall-clock milliseconds of the instrumented thread");
  strobe__json_str(j, "timestamps", "milliseconds since the collector's creation; monotonic, not calendar time");
  strobe__json_str(j, "unfinished_state",
                   "stalled when elapsed_ms > 2 x baseline_p95_ms, the p95 total_ms of this report's completed samples "
                   "of the same kind; in_flight otherwise; no_baseline when it has none of that kind");
  strobe__json_end(j);
}

/* A final report has an end and no read time; a live snapshot the reverse. */
static void write_session(strobe__json *j, const strobe_report *r) {
  strobe__json_object(j, "session");
  strobe__json_num(j, "start_ms", strobe__report_ms(r, r->created), MS);
  if (r->final) {
    strobe__json_num(j, "end_ms", strobe__report_ms(r, r->at), MS);
    strobe__json_null(j, "read_ms");
  } else {
    strobe__json_null(j, "end_ms");
    strobe__json_num(j, "read_ms", strobe__report_ms(r, r->at), MS);
  }
  strobe__json_uint(j, "resets", r->resets);
  if (r->resets)
    strobe__json_num(j, "reset_ms", strobe__report_ms(r, r->start), MS);
  else
    strobe__json_null(j, "reset_ms");
  strobe__json_uint(j, "max_samples", r->max_samples);
  strobe__json_bool(j, "include_devtools", r->include_devtools);
  strobe__json_bool(j, "stage_runs", r->stage_runs);
  strobe__json_array(j, "kinds");
  for (int kind = 1; kind < STROBE_OP_KIND_LIMIT; kind++)
    if (r->kinds & STROBE_KIND_BIT(kind)) strobe__json_str(j, NULL, kind_name(kind));
  strobe__json_end(j);
  strobe__json_end(j);
}

/* stage_pairs: the summary's distinct entries (strobe_report_query_stages). */
static uint64_t stage_summary_dropped(int stage_pairs) {
  return stage_pairs > STROBE_MAX_STAGE_SUMMARY ? (uint64_t)(stage_pairs - STROBE_MAX_STAGE_SUMMARY) : 0;
}

/* Every admission count, including what the bounds cut (dropped, untracked). */
static void write_counts(strobe__json *j, const strobe_report *r, const strobe__kind_baseline *base,
                         int stage_pairs) {
  strobe__json_object(j, "counts");
  strobe__json_uint(j, "completed", r->completed);
  strobe__json_uint(j, "returned", r->nsamples);
  strobe__json_uint(j, "dropped", r->dropped);
  strobe__json_uint(j, "boundary_excluded", r->boundary_excluded);
  strobe__json_uint(j, "devtools_excluded", r->devtools_excluded);
  strobe__json_uint(j, "kind_excluded", r->kind_excluded);
  strobe__json_uint(j, "interleaved", r->interleaved);
  strobe__json_uint(j, "idle", r->idle);
  strobe__json_uint(j, "unfinished", r->nunfinished);
  strobe__json_uint(j, "unfinished_stalled", strobe__count_stalled(r, base));
  strobe__json_uint(j, "untracked_windows", r->untracked_windows);
  strobe__json_uint(j, "abandoned", r->abandoned);
  strobe__json_uint(j, "nesting_overflow", r->nesting_overflow);
  strobe__json_uint(j, "stage_summary_dropped", stage_summary_dropped(stage_pairs));
  strobe__json_uint(j, "labels_replaced", r->labels_replaced);
  strobe__json_uint(j, "labels_refused", r->labels_refused);
  strobe__json_object(j, "completed_by_kind");
  for (int kind = 1; kind < STROBE_OP_KIND_LIMIT; kind++)
    strobe__json_uint(j, kind_name(kind), r->kind_completed[kind]);
  strobe__json_end(j);
  strobe__json_end(j);
}

/* >>truncated: every bound that can cut what a report holds, with what it
 * cut (docs/sessions.md §Truncated). One row per bound: the top-level
 * truncated is true when any row is non-zero, and truncated_by names those
 * rows by where their count is in the report. */
static uint64_t sum_stages_dropped(const strobe_report *r) {
  uint64_t n = 0;
  for (uint32_t i = 0; i < r->nsamples; i++) n += r->samples[i]->stages_dropped;
  return n;
}

static uint64_t sum_counters_dropped(const strobe_report *r) {
  uint64_t n = 0;
  for (uint32_t i = 0; i < r->nsamples; i++) n += r->samples[i]->counters_dropped;
  return n;
}

#define REPORT_BOUNDS(X)                                          \
  X("counts.dropped", r->dropped)                                 \
  X("samples.stages_dropped", sum_stages_dropped(r))              \
  X("samples.counters_dropped", sum_counters_dropped(r))          \
  X("application_scopes.dropped", r->app.dropped)                 \
  X("counts.untracked_windows", r->untracked_windows)             \
  X("counts.nesting_overflow", r->nesting_overflow)               \
  X("counts.stage_summary_dropped", summary_dropped)              \
  X("memory.gauges_dropped", r->gauges_dropped)                   \
  X("frame_rate.passes_untracked", r->passes_untracked)

static void write_truncated(strobe__json *j, const strobe_report *r, int stage_pairs) {
  uint64_t summary_dropped = stage_summary_dropped(stage_pairs);
  int any = 0;
#define BOUND_ANY(name, count) any |= (count) > 0;
  REPORT_BOUNDS(BOUND_ANY)
#undef BOUND_ANY
  strobe__json_bool(j, "truncated", any);
  strobe__json_array(j, "truncated_by");
#define BOUND_NAME(name, count) \
  if ((count) > 0) strobe__json_str(j, NULL, name);
  REPORT_BOUNDS(BOUND_NAME)
#undef BOUND_NAME
  strobe__json_end(j);
}

/* >>samples */
/* A counter's or gauge's kind in its family (docs/recording.md §Counters and
 * gauges by kind): a label copied under the rule, or null for none. */
static void kind_json(strobe__json *j, const char *kind) {
  if (kind[0]) strobe__json_str(j, "kind", kind);
  else strobe__json_null(j, "kind");
}

/* A stage or counter declared unavailable: null, never 0, with available false. */
static void write_unavailable(strobe__json *j, const strobe__sample *s, uint8_t what, const char *process) {
  for (uint32_t i = 0; i < s->nunavailable; i++) {
    const strobe__unavailable *u = &s->unavailable[i];
    if (u->what != what) continue;
    strobe__json_object(j, NULL);
    strobe__json_str(j, "name", u->name);
    if (what == STROBE_COVERAGE_STAGE) {
      strobe__json_null(j, "nested_in");
      strobe__json_null(j, "parent_incomplete");
      strobe__json_null(j, "declared_parent");
      strobe__json_null(j, "declared_parent_not_open");
      strobe__json_null(j, "count");
      strobe__json_null(j, "total_ms");
      strobe__json_null(j, "min_ms");
      strobe__json_null(j, "max_ms");
    } else {
      strobe__json_null(j, "value");
    }
    strobe__json_bool(j, "available", 0);
    if (what == STROBE_COVERAGE_STAGE) strobe__json_str(j, "process", process); /* declared where it was not timed */
    strobe__json_end(j);
  }
}

/* >>cross-process (docs/sessions.md §Across processes): a collector id as
 * 16 hex digits (a JSON number would lose its low bits in JavaScript). */
static void hex_id(strobe__json *j, const char *key, uint64_t id) {
  char text[17];
  snprintf(text, sizeof text, "%016llx", (unsigned long long)id);
  strobe__json_str(j, key, text);
}

/* Where the operation went (handed_off_to) or came from (from). */
static void write_remote(strobe__json *j, const strobe_report *r, const strobe__sample *s) {
  strobe__json_str(j, "handed_off_to", s->peer[0] ? s->peer : NULL);
  if (!s->remote) {
    strobe__json_null(j, "from");
    return;
  }
  strobe__json_object(j, "from");
  strobe__json_str(j, "process", s->from.process);
  strobe__json_uint(j, "pid", s->from.pid);
  hex_id(j, "collector", s->from.collector);
  strobe__json_uint(j, "op", s->from.op);
  strobe__json_num(j, "handed_off_ms", strobe__report_ms(r, s->from.taken), MS);
  strobe__json_num(j, "resumed_ms", strobe__report_ms(r, s->from.resumed), MS);
  strobe__json_num(j, "gap_ms", strobe__ticks_ms(r, s->from.resumed > s->from.taken ? s->from.resumed - s->from.taken : 0),
                   MS);
  strobe__json_end(j);
}

/* This process, and what its collector did with operation tokens since its creation. */
static void write_cross_process(strobe__json *j, const strobe_report *r) {
  strobe__json_object(j, "process");
  strobe__json_str(j, "name", r->process);
  strobe__json_uint(j, "pid", r->pid);
  hex_id(j, "collector", r->uid);
  strobe__json_end(j);
  const strobe_remote_stats *x = &r->remote;
  strobe__json_object(j, "cross_process");
  strobe__json_uint(j, "handed_off", x->handed_off);
  strobe__json_uint(j, "resumed", x->resumed);
  strobe__json_uint(j, "refused", x->refused_malformed + x->refused_truncated + x->refused_version + x->refused_corrupt +
                                      x->refused_replayed + x->refused_foreign + x->refused_limit);
  strobe__json_object(j, "refused_by");
  strobe__json_uint(j, "malformed", x->refused_malformed);
  strobe__json_uint(j, "truncated", x->refused_truncated);
  strobe__json_uint(j, "version", x->refused_version);
  strobe__json_uint(j, "corrupt", x->refused_corrupt);
  strobe__json_uint(j, "replayed", x->refused_replayed);
  strobe__json_uint(j, "foreign", x->refused_foreign);
  strobe__json_uint(j, "limit", x->refused_limit);
  strobe__json_end(j);
  strobe__json_end(j);
}

static void write_sample(strobe__json *j, const strobe_report *r, const strobe__sample *s) {
  strobe__json_object(j, NULL);
  strobe__json_uint(j, "id", s->seq);
  strobe__json_str(j, "kind", kind_name(s->kind));
  strobe__json_strn(j, "window", s->window->text, s->window->len);
  if (s->kind == STROBE_OP_PASS)
    strobe__json_uint(j, "frame_id", s->frame_id);
  else
    strobe__json_null(j, "frame_id");
  strobe__json_num(j, "start_ms", strobe__report_ms(r, s->start), MS);
  strobe__json_num(j, "end_ms", strobe__report_ms(r, s->end), MS);
  strobe__json_num(j, "total_ms", strobe__ticks_ms(r, s->end - s->start), MS);
  strobe__json_bool(j, "committed", s->committed);
  strobe__json_bool(j, "handed_off", s->handed_off);
  strobe__json_bool(j, "ended_implicitly", s->ended_implicitly);
  strobe__json_bool(j, "nesting_overflow", s->nesting_overflow);
  strobe__json_uint(j, "stages_dropped", s->stages_dropped);
  strobe__json_uint(j, "counters_dropped", s->counters_dropped);
  if (r->stage_runs) strobe__json_uint(j, "stage_runs_dropped", s->runs_dropped);
  strobe__json_str(j, "population", s->population[0] ? s->population : NULL);
  write_remote(j, r, s);
  strobe__json_array(j, "stages");
  for (uint32_t i = 0; i < s->nstages; i++) {
    const strobe__stage_agg *a = &s->stages[i];
    strobe__json_object(j, NULL);
    strobe__json_str(j, "name", site_name(r, a->site));
    strobe__json_str(j, "nested_in", a->parent ? site_name(r, a->parent) : NULL);
    if (a->parent)
      strobe__json_bool(j, "parent_incomplete", a->parent_incomplete);
    else
      strobe__json_null(j, "parent_incomplete");
    strobe__json_str(j, "declared_parent", site_declared_parent(r, a->site));
    strobe__json_uint(j, "declared_parent_not_open", a->not_in_declared);
    strobe__json_uint(j, "count", a->count);
    strobe__json_num(j, "total_ms", strobe__ticks_ms(r, a->total), MS);
    strobe__json_num(j, "min_ms", strobe__ticks_ms(r, a->min), MS);
    strobe__json_num(j, "max_ms", strobe__ticks_ms(r, a->max), MS);
    strobe__json_bool(j, "available", 1);
    strobe__json_str(j, "process", a->remote ? s->from.process : r->process);
    if (r->stage_runs) { /* docs/sessions.md §Stage runs: [start_ms, end_ms] of each run kept, in end order */
      strobe__json_array(j, "runs");
      for (uint32_t k = 0; k < s->nruns; k++) {
        if (s->runs[k].entry != i) continue;
        strobe__json_array(j, NULL);
        strobe__json_num(j, NULL, strobe__report_ms(r, s->runs[k].begin), MS);
        strobe__json_num(j, NULL, strobe__report_ms(r, s->runs[k].end), MS);
        strobe__json_end(j);
      }
      strobe__json_end(j);
    }
    strobe__json_end(j);
  }
  write_unavailable(j, s, STROBE_COVERAGE_STAGE, r->process);
  strobe__json_end(j);
  strobe__json_array(j, "counters");
  for (uint32_t i = 0; i < s->ncounters; i++) {
    strobe__json_object(j, NULL);
    strobe__json_str(j, "name", s->counters[i].name); /* copied at entry, under the label rule */
    kind_json(j, s->counters[i].kind);
    strobe__json_str(j, "unit", strobe_unit_name(s->counters[i].unit)); /* a static label of STROBE_UNITS */
    strobe__json_num(j, "value", s->counters[i].value, 3);
    strobe__json_bool(j, "available", 1);
    strobe__json_end(j);
  }
  write_unavailable(j, s, STROBE_COVERAGE_COUNTER, NULL);
  strobe__json_end(j);
  /* Gauges sampled while it ran: a memory spike is in the sample it happened in. */
  strobe__json_array(j, "memory");
  for (uint32_t i = 0; i < s->ngauges; i++) {
    const strobe__gauge_sample *g = &s->gauges[i];
    strobe__json_object(j, NULL);
    strobe__json_str(j, "name", g->gauge < r->ngauges ? r->gauges[g->gauge].name : "unknown");
    kind_json(j, g->gauge < r->ngauges ? r->gauges[g->gauge].kind : "");
    strobe__json_str(j, "unit", strobe_unit_name(g->gauge < r->ngauges ? r->gauges[g->gauge].unit : STROBE_UNIT_NONE));
    strobe__json_num(j, "value", g->value, 3);
    strobe__json_num(j, "sampled_ms", strobe__report_ms(r, g->sampled), MS);
    strobe__json_end(j);
  }
  strobe__json_end(j);
  strobe__json_end(j);
}

/* How old the newest of n samples (completed at tick `newest`) is at read/end; null without samples. */
static void write_sample_age(strobe__json *j, const strobe_report *r, uint32_t n, uint64_t newest) {
  if (n)
    strobe__json_num(j, "sample_age_ms", strobe__ticks_ms(r, r->at - newest), MS);
  else
    strobe__json_null(j, "sample_age_ms");
}

/* The age of the newest sample, then every sample. */
static void write_samples(strobe__json *j, const strobe_report *r) {
  uint64_t newest = 0;
  for (uint32_t i = 0; i < r->nsamples; i++)
    if (r->samples[i]->end > newest) newest = r->samples[i]->end;
  write_sample_age(j, r, r->nsamples, newest);
  strobe__json_array(j, "samples");
  for (uint32_t i = 0; i < r->nsamples; i++) write_sample(j, r, r->samples[i]);
  strobe__json_end(j);
}

/* >>unfinished. Whether work still running is an ordinary operation in
 * flight or a stall is judged against the session's own completed
 * operations of the same kind (docs/sessions.md §In flight or stalled). */
static void write_unfinished(strobe__json *j, const strobe_report *r, const strobe__kind_baseline *base) {
  static const char *const state_names[] = {"no_baseline", "in_flight", "stalled"};
  strobe__json_array(j, "unfinished");
  for (uint32_t i = 0; i < r->nunfinished; i++) {
    const strobe__unfinished_op *u = &r->unfinished[i];
    const strobe__kind_baseline *b = &base[u->kind];
    double elapsed = strobe__ticks_ms(r, r->at - u->start);
    strobe__json_object(j, NULL);
    strobe__json_uint(j, "id", u->seq);
    strobe__json_str(j, "kind", kind_name(u->kind));
    strobe__json_strn(j, "window", u->window->text, u->window->len);
    if (u->kind == STROBE_OP_PASS)
      strobe__json_uint(j, "prospective_frame_id", u->frame_id);
    else
      strobe__json_null(j, "prospective_frame_id");
    if (u->phase_site) {
      strobe__json_str(j, "phase", site_name(r, u->phase_site));
      strobe__json_num(j, "phase_elapsed_ms", strobe__ticks_ms(r, r->at - u->phase_start), MS);
    } else {
      strobe__json_null(j, "phase");
      strobe__json_null(j, "phase_elapsed_ms");
    }
    strobe__json_num(j, "elapsed_ms", elapsed, MS);
    strobe__json_bool(j, "started_before_session", u->started_before_session);
    strobe__json_bool(j, "handed_off", u->handed_off);
    strobe__json_uint(j, "baseline_n", b->n);
    if (b->n) {
      strobe__json_num(j, "baseline_p95_ms", b->p95, MS);
      /* A zero p95 (operations shorter than a tick) has no finite ratio. */
      if (b->p95 > 0)
        strobe__json_num(j, "elapsed_vs_p95", elapsed / b->p95, 3);
      else
        strobe__json_null(j, "elapsed_vs_p95");
    } else {
      strobe__json_null(j, "baseline_p95_ms");
      strobe__json_null(j, "elapsed_vs_p95");
    }
    strobe__json_str(j, "state", state_names[strobe__unfinished_state(b, elapsed)]);
    strobe__json_end(j);
  }
  strobe__json_end(j);
}

/* >>summaries */

/* Whether interned names were carried, and how many distinct stage sites of
 * this report had theirs replaced by interned_<site id> (docs/recording.md
 * §Run-time names): the report's own copies say (session.c). */
static void write_interned_names(strobe__json *j, const strobe_report *r) {
  uint64_t withheld = 0;
  for (uint32_t i = 0; i < r->nsites; i++) withheld += r->sites[i].withheld;
  strobe__json_object(j, "interned_names");
  strobe__json_bool(j, "included", strobe_query_desc().report_interned_names != 0);
  strobe__json_uint(j, "withheld", withheld);
  strobe__json_str(j, "note", "stages named at run time (strobe_site_intern) are application content: unless the "
                              "application opted in at setup, reports name them interned_<site id> and count them "
                              "here; their names stay in local captures");
  strobe__json_end(j);
}
/* At most STROBE_MAX_STAGE_SUMMARY entries; counts.stage_summary_dropped says how many more there were. */
static void write_stage_summary(strobe__json *j, const strobe_report *r, int n) {
  strobe_stage_summary sums[STROBE_MAX_STAGE_SUMMARY];
  if (n > 0) n = strobe_report_query_stages(r, sums, STROBE_MAX_STAGE_SUMMARY);
  if (n < 0) {
    j->out.failed = 1; /* reported as STROBE_ENOMEM by the caller */
    return;
  }
  if (n > STROBE_MAX_STAGE_SUMMARY) n = STROBE_MAX_STAGE_SUMMARY;
  strobe__json_array(j, "stage_summary");
  for (int m = 0; m < n; m++) {
    const strobe_stage_summary *st = &sums[m];
    strobe__json_object(j, NULL);
    strobe__json_str(j, "name", st->name);
    strobe__json_str(j, "nested_in", st->nested_in);
    strobe__json_uint(j, "n", st->n);
    strobe__json_num(j, "p50_ms", st->p50_ms, MS);
    strobe__json_num(j, "p95_ms", st->p95_ms, MS);
    strobe__json_num(j, "p99_ms", st->p99_ms, MS);
    strobe__json_num(j, "max_ms", st->max_ms, MS);
    strobe__json_str(j, "declared_parent", st->declared_parent);
    strobe__json_uint(j, "declared_parent_not_open", st->declared_parent_not_open);
    if (st->nested_in)
      strobe__json_uint(j, "parent_incomplete", st->parent_incomplete);
    else
      strobe__json_null(j, "parent_incomplete");
    strobe__json_str(j, "note", !st->nested_in ? "per-operation total of this stage; stages nested in it are included"
                                : !st->parent_incomplete
                                    ? "nested: ran inside the stage named by nested_in and is already included in it; "
                                      "do not sum"
                                    : "nested: ran inside the stage named by nested_in, but in parent_incomplete of "
                                      "its samples that stage did not complete in the operation, so there this time "
                                      "is in no listed stage");
    strobe__json_end(j);
  }
  strobe__json_end(j);
}

static void write_kind_summary(strobe__json *j, const strobe_report *r, double *scratch) {
  strobe__json_array(j, "kind_summary");
  for (int kind = 1; kind < STROBE_OP_KIND_LIMIT; kind++) {
    size_t n = 0;
    for (uint32_t i = 0; i < r->nsamples; i++)
      if (r->samples[i]->kind == kind) scratch[n++] = strobe__ticks_ms(r, r->samples[i]->end - r->samples[i]->start);
    if (!n) continue;
    strobe__dist d = strobe__dist_of(scratch, n);
    strobe__json_object(j, NULL);
    strobe__json_str(j, "kind", kind_name(kind));
    dist(j, &d);
    strobe__json_end(j);
  }
  strobe__json_end(j);
}

/* Percentiles per kind and population (docs/sessions.md §Populations): for
 * each kind with labelled samples, one entry per population and one
 * (population null) for its unlabelled samples, each with its n; a kind's
 * entries add up to its kind_summary n. `names` holds nsamples pointers. */
static void write_population_summary(strobe__json *j, const strobe_report *r, double *scratch, const char **names) {
  strobe__json_array(j, "population_summary");
  for (int kind = 1; kind < STROBE_OP_KIND_LIMIT; kind++) {
    size_t npop = 0;
    int labelled = 0;
    for (uint32_t i = 0; i < r->nsamples; i++) {
      const strobe__sample *s = r->samples[i];
      if (s->kind != kind) continue;
      labelled |= s->population[0] != 0;
      const char *p = s->population;
      int seen = 0;
      for (size_t k = 0; k < npop && !seen; k++) seen = !strcmp(names[k], p);
      if (!seen) names[npop++] = p;
    }
    if (!labelled) continue;
    for (size_t k = 0; k < npop; k++) {
      size_t n = 0;
      for (uint32_t i = 0; i < r->nsamples; i++) {
        const strobe__sample *s = r->samples[i];
        if (s->kind == kind && !strcmp(s->population, names[k]))
          scratch[n++] = strobe__ticks_ms(r, s->end - s->start);
      }
      strobe__dist d = strobe__dist_of(scratch, n);
      strobe__json_object(j, NULL);
      strobe__json_str(j, "kind", kind_name(kind));
      strobe__json_str(j, "population", names[k][0] ? names[k] : NULL);
      dist(j, &d);
      strobe__json_end(j);
    }
  }
  strobe__json_end(j);
}

/* Mean and max of each counter over the samples that carry it (its n), in
 * order of first appearance, newest sample first (docs/sessions.md §Counter
 * summaries and memory per sample).
 * Distinct counters are bounded by the samples' own tables (16 each), so
 * nothing is cut here. `names` holds nsamples x STROBE_MAX_OP_COUNTERS pointers. */
static int same_counter(const strobe__counter_agg *a, const strobe__counter_agg *b) {
  return !strcmp(a->name, b->name) && !strcmp(a->kind, b->kind);
}

static void write_counter_summary(strobe__json *j, const strobe_report *r, const char **names) {
  /* names[m] points at a counter's name; the counter_agg it starts holds its kind too. */
  size_t nnames = 0;
  for (uint32_t i = 0; i < r->nsamples; i++)
    for (uint32_t k = 0; k < r->samples[i]->ncounters; k++) {
      const strobe__counter_agg *c = &r->samples[i]->counters[k];
      int seen = 0;
      for (size_t m = 0; m < nnames && !seen; m++) seen = same_counter((const strobe__counter_agg *)(const void *)names[m], c);
      if (!seen) names[nnames++] = (const char *)(const void *)c;
    }
  strobe__json_array(j, "counter_summary");
  for (size_t m = 0; m < nnames; m++) {
    uint64_t n = 0;
    uint32_t unit = STROBE_UNIT_NONE;
    double sum = 0, max = 0;
    for (uint32_t i = 0; i < r->nsamples; i++)
      for (uint32_t k = 0; k < r->samples[i]->ncounters; k++) {
        const strobe__counter_agg *c = &r->samples[i]->counters[k];
        if (!same_counter(c, (const strobe__counter_agg *)(const void *)names[m])) continue;
        if (!unit) unit = c->unit; /* the first sample's that named one, as within an operation */
        if (!n || c->value > max) max = c->value;
        sum += c->value;
        n++;
      }
    const strobe__counter_agg *first = (const strobe__counter_agg *)(const void *)names[m];
    strobe__json_object(j, NULL);
    strobe__json_str(j, "name", first->name);
    kind_json(j, first->kind);
    strobe__json_str(j, "unit", strobe_unit_name(unit));
    strobe__json_uint(j, "n", n);
    strobe__json_num(j, "mean", sum / (double)n, 3);
    strobe__json_num(j, "max", max, 3);
    strobe__json_end(j);
  }
  strobe__json_end(j);
}

/* Whether sample s measured the stage (any parent) or counter named u. */
static int sample_measured(const strobe_report *r, const strobe__sample *s, const strobe__unavailable *u) {
  if (u->what == STROBE_COVERAGE_COUNTER) {
    for (uint32_t k = 0; k < s->ncounters; k++)
      if (!strcmp(s->counters[k].name, u->name)) return 1;
    return 0;
  }
  for (uint32_t k = 0; k < s->nstages; k++)
    if (!strcmp(site_name(r, s->stages[k].site), u->name)) return 1;
  return 0;
}

/* Coverage apart from zero (docs/sessions.md §Coverage apart from zero):
 * each stage or counter some sample declared unavailable, with how many
 * samples declared it and how many measured it. `names` holds nsamples x
 * STROBE_MAX_UNAVAILABLE pointers. */
static void write_coverage(strobe__json *j, const strobe_report *r, const strobe__unavailable **names) {
  size_t nnames = 0;
  for (uint32_t i = 0; i < r->nsamples; i++)
    for (uint32_t k = 0; k < r->samples[i]->nunavailable; k++) {
      const strobe__unavailable *u = &r->samples[i]->unavailable[k];
      int seen = 0;
      for (size_t m = 0; m < nnames && !seen; m++) seen = names[m]->what == u->what && !strcmp(names[m]->name, u->name);
      if (!seen) names[nnames++] = u;
    }
  strobe__json_array(j, "coverage");
  for (size_t m = 0; m < nnames; m++) {
    uint64_t unavailable = 0, available = 0;
    for (uint32_t i = 0; i < r->nsamples; i++) {
      const strobe__sample *s = r->samples[i];
      int declared = 0;
      for (uint32_t k = 0; k < s->nunavailable && !declared; k++)
        declared = s->unavailable[k].what == names[m]->what && !strcmp(s->unavailable[k].name, names[m]->name);
      unavailable += declared;
      available += !declared && sample_measured(r, s, names[m]);
    }
    strobe__json_object(j, NULL);
    strobe__json_str(j, "what", names[m]->what == STROBE_COVERAGE_STAGE ? "stage" : "counter");
    strobe__json_str(j, "name", names[m]->name);
    strobe__json_uint(j, "unavailable_n", unavailable);
    strobe__json_uint(j, "available_n", available);
    strobe__json_end(j);
  }
  strobe__json_end(j);
}

/* Frame rate two ways, each labelled (docs/sessions.md §Frame rate), per
 * window: first to last over every pass of it the session counted, which one
 * stall drags down for the whole session, and steady, from the median
 * interval between consecutive pass starts among the returned samples, which
 * a stall does not move. `window` NULL: the top level, the only window's
 * figures, or none when passes of several windows were counted (never summed). */
static void write_rates(strobe__json *j, const strobe_report *r, const strobe__name *window) {
  strobe_frame_rate fr;
  if (strobe__report_frame_rate(r, window ? window->text : NULL, window ? window->len : 0, &fr)) {
    j->out.failed = 1; /* reported as STROBE_ENOMEM by the caller */
    return;
  }
  strobe__json_uint(j, "passes", fr.passes);
  if (fr.valid) {
    strobe__json_num(j, "first_to_last_span_ms", fr.first_to_last_span_ms, MS);
    strobe__json_num(j, "passes_per_second", fr.passes_per_second, 3);
  } else {
    strobe__json_null(j, "first_to_last_span_ms");
    strobe__json_null(j, "passes_per_second");
  }
  strobe__json_uint(j, "intervals_n", fr.intervals);
  if (fr.intervals) {
    strobe__json_num(j, "median_interval_ms", fr.median_interval_ms, MS);
    if (fr.median_interval_ms > 0)
      strobe__json_num(j, "steady_passes_per_second", fr.steady_passes_per_second, 3);
    else /* more than half the passes began on the same tick */
      strobe__json_null(j, "steady_passes_per_second");
  } else { /* no rate, or no two of its passes among the returned samples */
    strobe__json_null(j, "median_interval_ms");
    strobe__json_null(j, "steady_passes_per_second");
  }
  if (fr.valid)
    strobe__json_null(j, "null_reason");
  else if (fr.windows > 1)
    strobe__json_str(j, "null_reason", "passes of several windows: rates are per window (by_window), never summed");
  else
    strobe__json_str(j, "null_reason", "fewer than two passes that count, or all on one tick, in the session");
}

static void write_frame_rate(strobe__json *j, const strobe_report *r) {
  strobe__json_object(j, "frame_rate");
  strobe__json_str(j, "definition",
                   "per window: passes_per_second: (passes - 1) / (start of its last pass - start of its first), "
                   "over every pass of the window the session counted since its start or reset (kept or not), "
                   "which one long stall lowers for the whole session; steady_passes_per_second: 1000 / "
                   "median_interval_ms, the median interval between consecutive pass starts of the window among the "
                   "returned samples (intervals_n of them), which a stall does not move. Passes that count: committed, "
                   "or handed off to another process (its outcome is in that process's report). Rates are never "
                   "summed across windows: the top level has them only when one window had passes. Input, rebuild "
                   "and request samples never count; an on-demand renderer idles between passes, so these are not "
                   "GPU throughput");
  write_rates(j, r, NULL);
  strobe__json_uint(j, "windows", r->nrates);
  strobe__json_uint(j, "passes_untracked", r->passes_untracked);
  /* Per window: nested windows (a popup rendered inside main's pass) interleave their passes with main's. */
  strobe__json_array(j, "by_window");
  for (uint32_t i = 0; i < r->nrates; i++) {
    strobe__json_object(j, NULL);
    strobe__json_strn(j, "window", r->rates[i].window->text, r->rates[i].window->len);
    write_rates(j, r, r->rates[i].window);
    strobe__json_end(j);
  }
  strobe__json_end(j);
  strobe__json_end(j);
}

/* >>gpu (docs/gpu.md): the frames' two gaps, each with its n, and the order
 * checks; null when no GPU frame closed while the session ran, never zeros. */
static void write_gap(strobe__json *j, const char *key, const strobe_report *r, double *scratch, int which) {
  size_t n = 0;
  for (uint32_t i = 0; i < r->ngpu; i++) {
    const strobe_gpu_frame *f = &r->gpu_frames[i];
    double v = which == 0 ? f->backlog_ns
             : which == 1 ? f->polling_ns
             : f->gpu_begin && f->gpu_end ? ((double)f->gpu_end - (double)f->gpu_begin) * r->ns_per_tick
                                          : NAN;
    if (!isnan(v)) scratch[n++] = v / 1e6;
  }
  if (!n) {
    strobe__json_null(j, key);
    return;
  }
  strobe__dist d = strobe__dist_of(scratch, n);
  strobe__json_object(j, key);
  strobe__json_uint(j, "n", d.n);
  strobe__json_num(j, "p50_ms", d.p50, 6); /* ns resolution: GPU gaps are often microseconds */
  strobe__json_num(j, "p95_ms", d.p95, 6);
  strobe__json_num(j, "max_ms", d.max, 6);
  strobe__json_end(j);
}

static void write_gpu(strobe__json *j, const strobe_report *r, double *scratch) {
  if (!r->ngpu && !r->gpu_missed) {
    strobe__json_null(j, "gpu");
    return;
  }
  strobe__json_object(j, "gpu");
  strobe__json_uint(j, "frames", r->ngpu);
  strobe__json_uint(j, "frames_not_kept", r->gpu_missed);
  write_gap(j, "queue_backlog_ms", r, scratch, 0);
  write_gap(j, "polling_latency_ms", r, scratch, 1);
  write_gap(j, "gpu_time_ms", r, scratch, 2);
  uint64_t checked = 0, violating = 0, by[4] = {0}, late = 0;
  double bound = 0;
  for (uint32_t i = 0; i < r->ngpu; i++) {
    const strobe_gpu_frame *f = &r->gpu_frames[i];
    checked += (f->cpu_end && f->submit) || (f->submit && f->gpu_begin) || f->gpu_begin || (f->gpu_end && f->fence_seen);
    violating += f->violations != 0;
    for (int k = 0; k < 4; k++) by[k] += (f->violations >> k) & 1u;
    late += f->late_spans;
    if (f->bound_ns > bound) bound = f->bound_ns;
  }
  strobe__json_object(j, "order");
  strobe__json_uint(j, "frames_checked", checked);
  strobe__json_uint(j, "frames_violating", violating);
  strobe__json_uint(j, "end_after_submit", by[0]);
  strobe__json_uint(j, "start_before_submit", by[1]);
  strobe__json_uint(j, "end_before_start", by[2]);
  strobe__json_uint(j, "fence_before_end", by[3]);
  strobe__json_end(j);
  strobe__json_uint(j, "late_spans", late);
  strobe__json_num(j, "calibration_bound_max_ms", bound / 1e6, 6);
  strobe__json_end(j);
}

/* >>application */
static const char *lane_name(int lane) { return lane == STROBE_LANE_UI ? "ui" : "worker"; }

static void write_application(strobe__json *j, const strobe_report *r) {
  strobe__json_object(j, "application_scopes");
  const strobe__app_counts *a = &r->app;
  strobe__json_uint(j, "max_scopes", r->max_app);
  strobe__json_uint(j, "started", a->started);
  strobe__json_uint(j, "completed", a->completed);
  strobe__json_uint(j, "returned", r->napps);
  strobe__json_uint(j, "dropped", a->dropped);
  strobe__json_bool(j, "truncated", a->dropped > 0);
  strobe__json_uint(j, "boundary_excluded", a->boundary_excluded);
  strobe__json_uint(j, "devtools_excluded", a->devtools_excluded);
  strobe__json_object(j, "refused");
  strobe__json_uint(j, "invalid_label", a->refused_label);
  strobe__json_uint(j, "unknown_window", a->refused_window);
  strobe__json_uint(j, "closed_collector", a->refused_closed);
  strobe__json_uint(j, "live_slots_exhausted", a->refused_slots);
  strobe__json_uint(j, "invalid_parent", a->refused_parent);
  strobe__json_end(j);
  strobe__json_object(j, "abandoned");
  strobe__json_uint(j, "window_closed", a->abandoned_window_closed);
  strobe__json_uint(j, "producer_closed", a->abandoned_producer_closed);
  strobe__json_end(j);
  /* Publication order can differ from completion order (worker timestamps are
   * taken before the lock), so age uses the latest completion returned. */
  uint64_t newest = 0;
  for (uint32_t i = 0; i < r->napps; i++)
    if (r->apps[i]->end > newest) newest = r->apps[i]->end;
  write_sample_age(j, r, r->napps, newest);
  strobe__json_str(j, "units", "inclusive synchronous wall milliseconds, including lock waits and synchronous I/O; "
                               "may overlap passes, other lanes and children: do not sum");
  strobe__json_array(j, "scopes");
  for (uint32_t i = 0; i < r->napps; i++) {
    const strobe__app_record *s = r->apps[i];
    strobe__json_object(j, NULL);
    strobe__json_uint(j, "id", s->id);
    if (s->parent_id)
      strobe__json_uint(j, "parent_id", s->parent_id);
    else
      strobe__json_null(j, "parent_id");
    strobe__json_uint(j, "depth", s->depth);
    strobe__json_str(j, "label", s->label);
    strobe__json_str(j, "lane", lane_name(s->lane));
    strobe__json_strn(j, "window", s->window->text, s->window->len);
    strobe__json_num(j, "start_ms", strobe__report_ms(r, s->start), MS);
    strobe__json_num(j, "end_ms", strobe__report_ms(r, s->end), MS);
    strobe__json_object(j, "wall_timings_ms");
    strobe__json_num(j, "total", strobe__ticks_ms(r, s->end - s->start), MS);
    strobe__json_end(j);
    strobe__json_end(j);
  }
  strobe__json_end(j);
  strobe__json_array(j, "unfinished");
  for (uint32_t i = 0; i < r->napp_unfinished; i++) {
    const strobe__unfinished_app *u = &r->app_unfinished[i];
    strobe__json_object(j, NULL);
    strobe__json_uint(j, "id", u->id);
    if (u->parent_id)
      strobe__json_uint(j, "parent_id", u->parent_id);
    else
      strobe__json_null(j, "parent_id");
    strobe__json_uint(j, "depth", u->depth);
    strobe__json_str(j, "label", u->label);
    strobe__json_str(j, "lane", lane_name(u->lane));
    strobe__json_strn(j, "window", u->window->text, u->window->len);
    strobe__json_num(j, "elapsed_ms", strobe__ticks_ms(r, r->at - u->start), MS);
    strobe__json_bool(j, "started_before_session", u->started_before_session);
    strobe__json_end(j);
  }
  strobe__json_end(j);
  strobe__json_end(j);
}

/* >>tail */
static void write_build(strobe__json *j) {
  strobe__json_object(j, "build");
  strobe__json_str(j, "strobe_version", STROBE_VERSION_STRING);
  strobe__json_str(j, "os", strobe__host_os());
  strobe__json_str(j, "arch", strobe__host_machine());
  strobe__json_array(j, "features");
  if (strobe_profiling_available()) strobe__json_str(j, NULL, "profiling");
  strobe__json_str(j, NULL, "zstd");
  strobe__json_end(j);
  strobe__json_bool(j, "assertions", STROBE__ASSERTIONS);
  strobe__json_str(j, "note", "optimization level and build command are not embedded; keep them beside the report");
  strobe__json_end(j);
}

static void write_memory(strobe__json *j, const strobe_report *r) {
  strobe__json_object(j, "memory");
  strobe__json_str(j, "note", "application-reported levels sampled at most once per second; not an allocation trace");
  strobe__json_array(j, "gauges");
  for (uint32_t i = 0; i < r->ngauges; i++) {
    strobe__json_object(j, NULL);
    strobe__json_str(j, "name", r->gauges[i].name);
    kind_json(j, r->gauges[i].kind);
    strobe__json_str(j, "unit", strobe_unit_name(r->gauges[i].unit)); /* a static label of STROBE_UNITS */
    strobe__json_num(j, "value", r->gauges[i].value, 3);
    strobe__json_num(j, "sampled_ms_ago", strobe__ticks_ms(r, r->at - r->gauges[i].sampled), MS);
    strobe__json_end(j);
  }
  strobe__json_end(j);
  strobe__json_uint(j, "gauges_dropped", r->gauges_dropped);
  strobe__json_end(j);
}

/* null until a recorder or strobe_collector_measure_overhead measured it. */
static void write_overhead(strobe__json *j, const strobe_report *r) {
  if (r->overhead_ns > 0)
    strobe__json_num(j, "overhead_per_scope_ns", r->overhead_ns, 2);
  else
    strobe__json_null(j, "overhead_per_scope_ns");
  strobe__json_object(j, "cost");
  if (r->event_cost_ns > 0)
    strobe__json_num(j, "event_ns", r->event_cost_ns, 2);
  else
    strobe__json_null(j, "event_ns");
  if (r->drain_events)
    strobe__json_num(j, "drain_ns_per_event", (double)r->drain_cpu_ns / (double)r->drain_events, 2);
  else
    strobe__json_null(j, "drain_ns_per_event");
  strobe__json_uint(j, "drain_events", r->drain_events);
  strobe__json_end(j);
}

/* Run metadata the application set (strobe_collector_set_run_info). A value
 * that is an identifier (a source SHA, a fixture name: the window-id rule) is
 * in the JSON; free text (a build command) is null here and stays beside the
 * report (strobe_report_query_run_info; docs/sessions.md §The label rule). */
static void write_run(strobe__json *j, const strobe_report *r) {
  strobe__json_object(j, "run");
  for (uint32_t i = 0; i < r->nrun; i++) {
    if (strobe__label_len(r->run_values[i], STROBE__RULE_WINDOW))
      strobe__json_str(j, r->run_keys[i], r->run_values[i]);
    else
      strobe__json_null(j, r->run_keys[i]);
  }
  strobe__json_end(j);
}

/* >>entry */
/* Hands the NUL-terminated text to the caller, or frees it when any write failed. */
static int take_output(strobe__json *j, char **json, size_t *len) {
  strobe__buf_put(&j->out, "", 1); /* terminator */
  if (j->out.failed) {
    strobe__buf_free(&j->out);
    return STROBE_ENOMEM;
  }
  *json = (char *)j->out.data;
  if (len) *len = j->out.len - 1;
  return 0;
}

/* The report is written in these named steps, in the order their keys
 * appear in the JSON (docs/report-schema.json describes every key). */
int strobe_report_json(const strobe_report *r, char **json, size_t *len) {
  if (!r || !json) return STROBE_EINVAL;
  *json = NULL;
  size_t scratch_n = r->nsamples > r->ngpu ? r->nsamples : r->ngpu;
  if (!scratch_n) scratch_n = 1;
  double *scratch = malloc(scratch_n * sizeof *scratch); /* write_kind_summary's percentile workspace */
  /* The summaries' distinct names: at most every sample's whole table. */
  const void **names = malloc(scratch_n * (STROBE_MAX_OP_COUNTERS + STROBE_MAX_UNAVAILABLE) * sizeof *names);
  if (!scratch || !names) {
    free(scratch);
    free(names);
    return STROBE_ENOMEM;
  }
  strobe__kind_baseline base[STROBE_OP_KIND_LIMIT];
  strobe__kind_baselines(r, scratch, base);
  int stage_pairs = strobe_report_query_stages(r, NULL, 0); /* how many the summary has, before the bound */
  strobe__json j = {0};
  if (stage_pairs < 0) j.out.failed = 1;
  strobe__json_object(&j, NULL);
  write_head(&j, r);
  write_loss(&j, r);
  write_units(&j);
  write_session(&j, r);
  write_counts(&j, r, base, stage_pairs);
  write_truncated(&j, r, stage_pairs);
  write_samples(&j, r);
  write_unfinished(&j, r, base);
  write_stage_summary(&j, r, stage_pairs);
  write_interned_names(&j, r);
  write_kind_summary(&j, r, scratch);
  write_population_summary(&j, r, scratch, (const char **)names);
  write_counter_summary(&j, r, (const char **)names);
  write_coverage(&j, r, (const strobe__unavailable **)names);
  write_frame_rate(&j, r);
  write_gpu(&j, r, scratch);
  write_application(&j, r);
  write_memory(&j, r);
  write_overhead(&j, r);
  write_build(&j);
  write_run(&j, r);
  write_cross_process(&j, r);
  strobe__json_end(&j);
  free(scratch);
  free(names);
  return take_output(&j, json, len);
}
