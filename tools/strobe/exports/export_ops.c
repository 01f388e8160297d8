/*
 * export_ops.c — the operations of the Chrome and Perfetto exports, from the
 * frame model (export_ops.h). It feeds the model the OP_* records of the
 * export's one read and keeps each END's counters and cuts beside it; it
 * never derives a frame, a state or a stage itself, and never writes output.
 */
#include "export_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strobe/strobe.h"

static int grow(void **p, uint32_t *cap, uint32_t need, size_t size) {
  if (need <= *cap) return 0;
  uint32_t c = *cap ? *cap * 2 : 256;
  while (c < need) c *= 2;
  void *q = realloc(*p, (size_t)c * size);
  if (!q) return -1;
  *p = q;
  *cap = c;
  return 0;
}

int xo_init(export_ops *x) {
  memset(x, 0, sizeof *x);
  return strobe_frames_create(NULL, &x->fx) ? (x->failed = 1, -1) : 0;
}

static int add_end(export_ops *x, const strobe_capture_op *op) {
  if (grow((void **)&x->ends, &x->cap_ends, x->nends + 1, sizeof *x->ends) ||
      grow((void **)&x->counters, &x->cap_counters, x->ncounters + op->ncounters, sizeof *x->counters))
    return -1;
  x->ends[x->nends++] = (xo_end){op->collector, op->id, STROBE_FRAMES_NONE, x->ncounters, op->ncounters,
                                 op->stages_dropped, op->counters_dropped, op->handed_off};
  if (op->ncounters) /* both arrays are NULL while no operation had counters */
    memcpy(x->counters + x->ncounters, op->counters, op->ncounters * sizeof *op->counters); /* labels: the capture's */
  x->ncounters += op->ncounters;
  return 0;
}

void xo_add(export_ops *x, const strobe_capture *c, const strobe_capture_record *r) {
  if (x->failed || r->type < STROBE_REC_OP_BEGIN || r->type > STROBE_REC_OP_RESUME) return;
  if (strobe_frames_add(x->fx, c, r) || (r->type == STROBE_REC_OP_END && add_end(x, r->op))) x->failed = 1;
}

/* Orders the ENDs by frame (a counting sort: stable, so a frame's halves stay in the order read). */
static int by_frame(export_ops *x) {
  uint32_t n = strobe_frames_query_count(x->fx);
  xo_end *sorted = malloc(((size_t)x->nends + 1) * sizeof *sorted);
  x->first = calloc((size_t)n + 2, sizeof *x->first);
  if (!sorted || !x->first) {
    free(sorted);
    return -1;
  }
  for (uint32_t i = 0; i < x->nends; i++) {
    xo_end *e = &x->ends[i];
    e->frame = strobe_frames_find_op(x->fx, e->collector, e->id);
    x->first[(e->frame < n ? e->frame : n) + 1]++; /* an END of no frame goes last */
  }
  for (uint32_t i = 1; i <= n + 1; i++) x->first[i] += x->first[i - 1];
  uint32_t *at = malloc(((size_t)n + 1) * sizeof *at);
  if (!at) {
    free(sorted);
    return -1;
  }
  memcpy(at, x->first, ((size_t)n + 1) * sizeof *at);
  for (uint32_t i = 0; i < x->nends; i++) sorted[at[x->ends[i].frame < n ? x->ends[i].frame : n]++] = x->ends[i];
  free(at);
  free(x->ends);
  x->ends = sorted;
  return 0;
}

int xo_finish(export_ops *x, const strobe_capture *c) {
  if (!x->failed && (strobe_frames_finish(x->fx, c) || by_frame(x))) x->failed = 1;
  return x->failed ? -1 : 0;
}

int xo_frame_in(const export_ops *x, export_filter *f, uint32_t i) {
  const strobe_frame *fr = strobe_frames_query_frame(x->fx, i);
  if (!fr || fr->state == STROBE_FRAME_UNFINISHED || !x->first) return 0;
  if (!xf_thread_in(f, fr->end_thread)) return 0;
  if (xf_time_in(f, fr->begin_ns) && xf_time_in(f, fr->end_ns)) return 1;
  f->left_out++;
  return 0;
}

const xo_end *xo_ends(const export_ops *x, uint32_t i, uint32_t *n) {
  *n = x->first && i < strobe_frames_query_count(x->fx) ? x->first[i + 1] - x->first[i] : 0;
  return *n ? x->ends + x->first[i] : NULL;
}

void xo_free(export_ops *x) {
  strobe_frames_destroy(x->fx);
  free(x->ends);
  free(x->counters);
  free(x->first);
  memset(x, 0, sizeof *x);
}

void xo_stages(const export_ops *x, uint32_t i, xo_stage *out, uint32_t cap, uint32_t *n) {
  uint32_t ns;
  const strobe_frame_stage *st = strobe_frames_query_stages(x->fx, i, &ns);
  *n = 0;
  for (uint32_t k = 0; k < ns; k++) {
    uint32_t j = 0;
    while (j < *n && (out[j].site != st[k].site || out[j].process != st[k].process)) j++;
    if (j < *n) out[j].total_ns += st[k].total_ns;
    else if (*n < cap) out[(*n)++] = (xo_stage){st[k].site, st[k].process, st[k].total_ns};
  }
}

void xo_stage_key(const export_ops *x, const strobe_capture *c, uint32_t i, const xo_stage *st, char *buf, size_t cap) {
  const strobe_capture_site *s = strobe_capture_query_site(c, st->site);
  const strobe_frame *fr = strobe_frames_query_frame(x->fx, i);
  if (fr && st->process != fr->process)
    snprintf(buf, cap, "stage %s ms, in %s", s ? s->name : "?", strobe_frames_query_process(x->fx, st->process));
  else
    snprintf(buf, cap, "stage %s ms", s ? s->name : "?");
}

void xo_counter_key(const strobe_capture_op_counter *k, char *buf, size_t cap) {
  const char *unit = k->unit ? strobe_unit_name(k->unit) : NULL;
  snprintf(buf, cap, "counter %s%s%s%s%s%s", k->name, k->kind[0] ? "/" : "", k->kind, unit ? " (" : "",
           unit ? unit : "", unit ? ")" : ""); /* family/kind (unit) */
}
