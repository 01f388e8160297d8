/*
 * viewer_samples.c — the sampler's records turned into the viewer's meta
 * (viewer_samples.h): per OS thread, sample times and off-CPU intervals;
 * for the capture, one call tree of every sample, root first.
 *
 * Owns: what it was fed, until freed. Must never: keep more than its bounds
 * without counting the rest, or put a function name anywhere but the meta
 * of a local capture (names are application content).
 */
#include "viewer/viewer_samples.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "strobe/sample.h"

static vs_thread *thread_of(strobe__vsamples *v, uint64_t tid, uint32_t thread) {
  for (uint32_t i = 0; i < v->nth; i++)
    if (v->th[i].tid == tid) {
      if (thread != STROBE_CAPTURE_NO_THREAD) v->th[i].thread = thread;
      return &v->th[i];
    }
  if (v->nth == STROBE__OFFCPU_MAX_THREADS) return NULL;
  if (v->nth == v->capth) {
    uint32_t cap = v->capth ? v->capth * 2 : 16;
    vs_thread *p = realloc(v->th, cap * sizeof *p);
    if (!p) {
      v->failed = 1;
      return NULL;
    }
    v->th = p;
    v->capth = cap;
  }
  vs_thread *t = &v->th[v->nth++];
  memset(t, 0, sizeof *t);
  t->tid = tid;
  t->thread = thread;
  return t;
}

/* The child of `parent` for `func`, added when new; 0 past the bound. */
static uint32_t child_of(strobe__vsamples *v, uint32_t parent, uint32_t func) {
  for (uint32_t k = v->nodes[parent].child; k; k = v->nodes[k].next)
    if (v->nodes[k].func == func) return k;
  if (v->nnodes == VS_MAX_NODES) return 0;
  if (v->nnodes == v->capnodes) {
    uint32_t cap = v->capnodes * 2;
    vs_node *p = realloc(v->nodes, cap * sizeof *p);
    if (!p) {
      v->failed = 1;
      return 0;
    }
    v->nodes = p;
    v->capnodes = cap;
  }
  uint32_t id = v->nnodes++;
  v->nodes[id] = (vs_node){func, parent, 0, v->nodes[parent].child, 0, 0};
  v->nodes[parent].child = id;
  return id;
}

static void add_stack(strobe__vsamples *v, const strobe_capture_sample *s) {
  if (!v->nodes) {
    v->nodes = calloc(1024, sizeof *v->nodes);
    if (!v->nodes) {
      v->failed = 1;
      return;
    }
    v->capnodes = 1024;
    v->nnodes = 1; /* the root */
  }
  uint32_t at = 0;
  v->nodes[0].total++;
  for (uint32_t k = s->nframes; k-- > 0;) { /* outermost frame first */
    uint32_t next = child_of(v, at, s->frames[k]);
    if (!next) {
      v->flame_cut++;
      break;
    }
    at = next;
    v->nodes[at].total++;
  }
  v->nodes[at].self++;
}

void strobe__vsamples_add(strobe__vsamples *v, const strobe_capture_record *r, double now) {
  if (r->type != STROBE_REC_SAMPLE && r->type != STROBE_REC_SWITCH) return;
  strobe__samples_add(&v->smp, r);
  if (v->smp.failed) v->failed = 1;
  vs_thread *t = thread_of(v, r->sample->os_tid, r->thread);
  if (r->type != STROBE_REC_SAMPLE) return;
  add_stack(v, r->sample);
  if (!t) return;
  if (v->ticks >= VS_MAX_TICKS) {
    v->ticks_cut++;
    return;
  }
  if (t->n == t->cap) {
    uint32_t cap = t->cap ? t->cap * 2 : 256;
    double *p = realloc(t->t, cap * sizeof *p);
    if (!p) {
      v->failed = 1;
      return;
    }
    t->t = p;
    t->cap = cap;
  }
  t->t[t->n++] = now;
  v->ticks++;
}

void strobe__vsamples_free(strobe__vsamples *v) {
  strobe__samples_free(&v->smp);
  for (uint32_t i = 0; i < v->nth; i++) free(v->th[i].t);
  free(v->th);
  free(v->nodes);
  memset(v, 0, sizeof *v);
}

static json_t *num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

json_t *strobe__vsamples_json(const strobe__vsamples *v, const strobe_capture *c) {
  strobe_capture_totals tt = strobe_capture_query_totals(c);
  if (!tt.samples && !tt.switches) return json_null();
  double start = strobe_capture_ticks_to_ns(c, strobe_capture_query_header(c)->start_ticks);
  json_t *o = json_object();
  if (!o) return NULL;
  json_object_set_new(o, "rate_hz", json_integer(tt.sample_rate_hz));
  json_object_set_new(o, "switches_on", json_boolean(tt.sample_switches));
  json_object_set_new(o, "samples", json_integer((json_int_t)tt.samples));
  json_object_set_new(o, "switches", json_integer((json_int_t)tt.switches));
  json_object_set_new(o, "lost", json_integer((json_int_t)tt.samples_lost));
  json_object_set_new(o, "frames_cut", json_integer((json_int_t)tt.sample_frames_cut));
  json_object_set_new(o, "addresses_cut", json_integer((json_int_t)tt.sample_addresses_cut));
  json_object_set_new(o, "ticks_cut", json_integer((json_int_t)v->ticks_cut));
  json_object_set_new(o, "flame_cut", json_integer((json_int_t)v->flame_cut));
  json_object_set_new(o, "intervals_cut", json_integer((json_int_t)v->smp.intervals_cut));
  json_t *names = json_array();
  uint32_t limit = strobe_capture_query_function_limit(c);
  for (uint32_t id = 0; id < limit; id++) {
    const strobe_capture_function *f = strobe_capture_query_function(c, id);
    json_array_append_new(names, json_string(f ? f->name : ""));
  }
  json_object_set_new(o, "functions", names);
  json_t *threads = json_array();
  for (uint32_t i = 0; i < v->nth; i++) {
    const vs_thread *t = &v->th[i];
    json_t *times = json_array(), *off = json_array();
    for (uint32_t k = 0; k < t->n; k++) json_array_append_new(times, num(t->t[k]));
    for (uint32_t k = 0; k < v->smp.n_threads; k++) {
      const strobe__offcpu_thread *ot = &v->smp.threads[k];
      if (ot->tid != t->tid) continue;
      for (uint32_t j = 0; j < ot->n; j++) { /* [begin, end, preempted] in ns since the capture start */
        uint64_t a = ot->iv[2 * j] & ~1ull, b = ot->iv[2 * j + 1];
        json_array_append_new(off, num(strobe_capture_ticks_to_ns(c, a) - start));
        json_array_append_new(off, num(strobe_capture_ticks_to_ns(c, b) - start));
        json_array_append_new(off, json_integer((json_int_t)(ot->iv[2 * j] & 1)));
      }
    }
    /* What its switches cover (samples.h's rule): the tooltips split self time only inside it. */
    uint64_t from, to, until = tt.sample_rate_hz ? tt.end_ticks : 0;
    json_t *cover = strobe__samples_cover(&v->smp, tt.sample_switches && tt.switches > 0, until, t->tid, &from, &to)
                        ? json_pack("[o,o]", num(strobe_capture_ticks_to_ns(c, from) - start),
                                    num(strobe_capture_ticks_to_ns(c, to) - start))
                        : json_null();
    json_array_append_new(threads, json_pack("{s:I,s:i,s:o,s:o,s:o}", "tid", (json_int_t)t->tid, "thread",
                                             t->thread == STROBE_CAPTURE_NO_THREAD ? -1 : (int)t->thread, "t", times,
                                             "off", off, "cover", cover));
  }
  json_object_set_new(o, "threads", threads);
  /* The call tree as parallel arrays, preorder is not needed: each node names its parent. */
  json_t *func = json_array(), *parent = json_array(), *total = json_array(), *self = json_array();
  for (uint32_t k = 0; k < v->nnodes; k++) {
    json_array_append_new(func, json_integer(v->nodes[k].func));
    json_array_append_new(parent, json_integer(k ? (json_int_t)v->nodes[k].parent : -1));
    json_array_append_new(total, json_integer((json_int_t)v->nodes[k].total));
    json_array_append_new(self, json_integer((json_int_t)v->nodes[k].self));
  }
  json_object_set_new(o, "flame", json_pack("{s:o,s:o,s:o,s:o}", "func", func, "parent", parent, "total", total,
                                            "self", self));
  return o;
}
