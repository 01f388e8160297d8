/*
 * explain_json.c — the JSON of frame explanations (strobe_explain_json,
 * docs/explain.md §JSON): what `strobe explain --json`, the MCP tool
 * strobe_profile_explain and the viewer's /api/capture/explain all print, so
 * the three never disagree on a key or on what is unknown.
 *
 * Owns: the keys and the null-for-unknown rule of that JSON, and which of
 * its strings are content. Must never: decide anything about a frame (the
 * explainer does: explain.c), write an unknown figure as zero, or write a
 * run-time name (a sampled function, an interned stage name, a thread's
 * name) without STROBE_EXPLAIN_JSON_CONTENT.
 */
#include <stdlib.h>
#include <string.h>

#include "format/json_writer.h"
#include "strobe/explain.h"

#define MAX_UNFINISHED 64u /* strobe/explain.h: stalls listed; the rest counted */

/* A name as content-free output may carry it: a site's static name, not a run-time (interned) one; else null. */
static void name_json(strobe__json *j, const char *key, const char *name, int content, int is_content) {
  strobe__json_str(j, key, content || !is_content ? name : NULL);
}

static void figure_json(strobe__json *j, const char *key, const strobe_explain_figure *g) {
  strobe__json_object(j, key);
  if (g->known) strobe__json_num(j, "ns", g->ns, 0);
  else strobe__json_null(j, "ns");
  if (g->n) strobe__json_num(j, "p50_ns", g->p50_ns, 0);
  else strobe__json_null(j, "p50_ns");
  strobe__json_uint(j, "n", g->n);
  strobe__json_end(j);
}

static void split_json(strobe__json *j, const strobe_explain_part *p, int content) {
  if (p->kind == STROBE_EXPLAIN_STAGE) figure_json(j, "total", &p->total);
  figure_json(j, "on_cpu", &p->on_cpu);
  figure_json(j, "blocked", &p->blocked);
  if (p->kind == STROBE_EXPLAIN_STAGE && p->blocked.known) { /* what the blocked time waited on, where known */
    strobe__json_object(j, "blocked_on");
    strobe__json_num(j, "lock", p->blocked_lock_ns, 0);
    strobe__json_num(j, "unknown", p->blocked.ns > p->blocked_lock_ns ? p->blocked.ns - p->blocked_lock_ns : 0, 0);
    strobe__json_end(j);
  } else {
    strobe__json_null(j, "blocked_on");
  }
  figure_json(j, "preempted", &p->preempted);
  strobe__json_str(j, "cause", strobe_explain_cause_name(p->cause));
  strobe__json_array(j, "causes");
  for (uint32_t c = STROBE_EXPLAIN_CAUSE_ON_CPU; c <= STROBE_EXPLAIN_CAUSE_PREEMPTED; c++)
    if (p->causes & (1u << c)) strobe__json_str(j, NULL, strobe_explain_cause_name(c));
  strobe__json_end(j);
  if (!content) { /* function names are content: their number only */
    strobe__json_uint(j, "functions_withheld", p->nfunctions);
    return;
  }
  strobe__json_array(j, "functions");
  for (uint32_t k = 0; k < p->nfunctions; k++) {
    strobe__json_object(j, NULL);
    strobe__json_str(j, "name", p->functions[k].name);
    strobe__json_uint(j, "samples", p->functions[k].samples);
    strobe__json_num(j, "cpu_ns", p->functions[k].cpu_ns, 0);
    strobe__json_end(j);
  }
  strobe__json_end(j);
}

static void part_json(strobe__json *j, const strobe_explain_part *p, int content) {
  strobe__json_object(j, NULL);
  strobe__json_str(j, "kind", strobe_explain_part_name(p->kind));
  if (p->kind == STROBE_EXPLAIN_STAGE) name_json(j, "name", p->name, content, p->content);
  else strobe__json_str(j, "name", p->name);
  strobe__json_bool(j, "content", p->content);
  figure_json(j, "time", &p->wall);
  strobe__json_num(j, "excess_ns", p->excess_ns, 0);
  strobe__json_bool(j, "exceeded", p->exceeded);
  if (p->kind == STROBE_EXPLAIN_STAGE || p->kind == STROBE_EXPLAIN_OUTSIDE) split_json(j, p, content);
  strobe__json_end(j);
}

/* The fields that say which frame it is, shared by an explanation and a stall. */
static void frame_id_json(strobe__json *j, const strobe_frames *fx, const strobe_frame *f, int content) {
  const strobe_frame_series *s = strobe_frames_query_series(fx, f->series);
  strobe__json_str(j, "kind", f->kind ? strobe_op_kind_name(f->kind) : "frame");
  strobe__json_uint(j, "number", f->number);
  if (f->id) strobe__json_uint(j, "op", f->id); /* the operation id: a session sample's id */
  else strobe__json_null(j, "op");
  if (f->kind) strobe__json_str(j, "series", s ? s->name : f->window); /* a window id (docs/sessions.md) */
  else name_json(j, "series", s ? s->name : "", content, 1);             /* a thread's name: set at run time */
  const char *proc = strobe_frames_query_process_count(fx) < 2 ? "" : strobe_frames_query_process(fx, f->process);
  strobe__json_str(j, "process", proc ? proc : "");
  strobe__json_str(j, "state", strobe_frames_state_name(f->state));
}

static void explanation_json(strobe__json *j, const strobe_explain *e, const strobe_frame_explanation *x, int content) {
  const strobe_frames *fx = strobe_explain_query_frames(e);
  strobe__json_object(j, NULL);
  frame_id_json(j, fx, strobe_frames_query_frame(fx, x->frame), content);
  figure_json(j, "wall", &x->wall);
  strobe__json_uint(j, "exceeded", x->exceeded);
  if (x->worst != STROBE_FRAMES_NONE) strobe__json_uint(j, "worst", x->worst);
  else strobe__json_null(j, "worst");
  strobe__json_array(j, "parts");
  for (uint32_t i = 0; i < x->nparts; i++) part_json(j, &x->parts[i], content);
  strobe__json_end(j);
  strobe__json_end(j);
}

static void stall_json(strobe__json *j, const strobe_explain *e, const strobe_frame_stall *st, int content) {
  const strobe_frames *fx = strobe_explain_query_frames(e);
  strobe__json_object(j, NULL);
  frame_id_json(j, fx, strobe_frames_query_frame(fx, st->frame), content);
  strobe__json_num(j, "elapsed_ns", st->elapsed_ns, 0);
  if (st->n) strobe__json_num(j, "p95_ns", st->p95_ns, 0);
  else strobe__json_null(j, "p95_ns");
  strobe__json_uint(j, "n", st->n);
  strobe__json_str(j, "stall", !st->n ? "no_baseline" : st->stalled ? "stalled" : "in_flight");
  if (st->stage) {
    name_json(j, "stage", st->stage_name, content, st->stage_content);
    if (st->stage_parent) name_json(j, "stage_parent", st->stage_parent_name, content, st->stage_parent_content);
    else strobe__json_null(j, "stage_parent");
    strobe__json_num(j, "stage_elapsed_ns", st->stage_elapsed_ns, 0);
    if (st->stage_n) strobe__json_num(j, "stage_p95_ns", st->stage_p95_ns, 0);
    else strobe__json_null(j, "stage_p95_ns");
  } else {
    strobe__json_null(j, "stage");
    strobe__json_null(j, "stage_parent");
    strobe__json_null(j, "stage_elapsed_ns");
    strobe__json_null(j, "stage_p95_ns");
  }
  strobe__json_uint(j, "stage_n", st->stage_n);
  strobe__json_str(j, "thread_now", strobe_explain_cause_name(st->thread_now));
  if (st->thread_now != STROBE_EXPLAIN_CAUSE_UNKNOWN) strobe__json_num(j, "thread_since_ns", st->thread_since_ns, 0);
  else strobe__json_null(j, "thread_since_ns");
  strobe__json_end(j);
}

static void coverage_json(strobe__json *j, const strobe_explain_coverage *c) {
  strobe__json_object(j, "coverage");
  strobe__json_bool(j, "switches", c->switches);
  strobe__json_bool(j, "samples", c->samples);
  strobe__json_uint(j, "sample_rate_hz", c->sample_rate_hz);
  strobe__json_bool(j, "gpu", c->gpu);
  strobe__json_bool(j, "wait_reason", c->lock_waits); /* lock waits recorded: blocked time in them is "lock" */
  strobe__json_uint(j, "lock_waits_cut", c->waits_cut);
  strobe__json_uint(j, "stage_runs", c->runs);
  strobe__json_uint(j, "stage_runs_cut", c->runs_cut);
  strobe__json_uint(j, "samples_cut", c->samples_cut);
  strobe__json_end(j);
}

static int unfinished_json(strobe__json *j, const strobe_explain *e, int content) {
  const strobe_frames *fx = strobe_explain_query_frames(e);
  uint32_t listed = 0, cut = 0, count = strobe_frames_query_count(fx);
  strobe__json_array(j, "unfinished");
  for (uint32_t i = 0; i < count; i++) {
    if (strobe_frames_query_frame(fx, i)->state != STROBE_FRAME_UNFINISHED) continue;
    if (listed == MAX_UNFINISHED) {
      cut++;
      continue;
    }
    strobe_frame_stall st;
    int rc = strobe_explain_stall(e, i, &st);
    if (rc) return rc;
    stall_json(j, e, &st, content);
    listed++;
  }
  strobe__json_end(j);
  strobe__json_uint(j, "unfinished_cut", cut);
  return 0;
}

int strobe_explain_json(strobe_explain *e, const uint32_t *frames, uint32_t n, uint32_t flags, char **json,
                        size_t *len) {
  if (json) *json = NULL;
  if (!e || !json || !len || (n && !frames) ||
      (flags & ~(STROBE_EXPLAIN_JSON_CONTENT | STROBE_EXPLAIN_JSON_UNFINISHED)))
    return STROBE_EINVAL;
  uint32_t count = strobe_frames_query_count(strobe_explain_query_frames(e));
  for (uint32_t i = 0; i < n; i++)
    if (frames[i] >= count) return STROBE_ERANGE;
  int content = !!(flags & STROBE_EXPLAIN_JSON_CONTENT), rc = 0;
  strobe_explain_coverage cov = strobe_explain_query_coverage(e);
  strobe__json j = {0};
  strobe__json_object(&j, NULL);
  coverage_json(&j, &cov);
  strobe__json_array(&j, "frames");
  for (uint32_t i = 0; i < n && !rc; i++) {
    strobe_frame_explanation x;
    rc = strobe_explain_frame(e, frames[i], &x);
    if (!rc) explanation_json(&j, e, &x, content);
  }
  strobe__json_end(&j);
  if (!rc && (flags & STROBE_EXPLAIN_JSON_UNFINISHED)) rc = unfinished_json(&j, e, content);
  strobe__json_end(&j);
  strobe__buf_put(&j.out, "", 1);
  if (!rc && j.out.failed) rc = STROBE_ENOMEM;
  if (rc) {
    strobe__buf_free(&j.out);
    return rc;
  }
  *json = (char *)j.out.data;
  *len = j.out.len - 1;
  return 0;
}
