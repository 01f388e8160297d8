/*
 * export_chrome.c — Chrome Trace Event Format (JSON object form) for
 * Perfetto UI, chrome://tracing and speedscope:
 *   {"traceEvents":[...],"displayTimeUnit":"ns","otherData":{...}}
 * Every completed scope is one "X" (complete) event written when its END is
 * read, ts/dur in microseconds with three decimals (ns resolution), the
 * scope's VALUE numbers as args; threads are named by "M" thread_name events
 * (tid = the OS thread id, or 1000000000 + index when a tid repeats);
 * counters and gauges are "C" events (a counter shows its running sum) whose
 * one arg is named by the site's unit ("bytes", "percent"; "value" for none);
 * FRAME marks are process-scoped instant ("i", "s":"p") events named "frame";
 * every operation that ended (a pass, input dispatch, rebuild or request:
 * docs/capture-format.md, OPS) is an async slice ("b" then "e", cat
 * "operation": overlapping passes of a pipelined frame lie side by side)
 * named "<kind> <frame id or operation id>", taken from the frame model
 * (docs/frames.md, export_ops.h) once the capture is read, so a frame handed
 * between processes is one slice; with its window, frame id, state,
 * processes, population, committed flag, hand-off, stage totals and counters
 * as args.
 *
 * GPU spans (docs/gpu.md) are mapped onto the host timeline once the whole
 * capture is read (later calibration pairs improve earlier spans) and
 * written at the end, each queue lane as a thread of its own ("GPU
 * <domain>/<queue>", tid 2000000000 + lane, sorted below the CPU threads)
 * with "X" events named by their site, args pass, frame_id and bound_ns; a
 * "GPU frames" track (tid 1999999999) carries each frame's queue backlog
 * (submit to GPU start) and polling latency (GPU end to fence seen) as "X"
 * events, and its cpu_end, submit and fence_seen marks as instants. A gap
 * that is negative (an order violation) gets no slice: it is counted in
 * otherData.gpu_order_violations.
 *
 * Unfinished scopes (still open when their thread or the file ended) and
 * lost scopes (their END was dropped) are never given an end: each becomes a
 * "B" event without an "E", args {"strobe": "unfinished: never ended"} or
 * {"strobe": "end lost"}, written when the thread or file ends, ordered by
 * ts. Viewers show them as slices that do not end.
 *
 * The filters (--thread, --from/--to: export.h >>filters) are applied as
 * records arrive: an X event is written at its END, when both its ends are
 * known, so no extra pass is needed.
 *
 * Memory: per thread, the open-scope stack (<= 256), the values attached to
 * open scopes (<= 1024) and the pending B events; per site, its prebuilt
 * JSON. Never per event.
 *
 * Contents: >>tables (sites, threads) >>scopes (X, B, values, C, instants) >>operations
 */
#include <inttypes.h>
#include <math.h>
#include <math.h>
#include <stdlib.h>

#include "export.h"
#include "export_ops.h"
#include "format/json_writer.h"
#include "analyze/gpu_frames.h"
#include "strobe/gpu.h"

#define MAX_DEPTH 256   /* the reader's stack bound */
#define MAX_VALUES 1024 /* numbers held for open scopes of one thread; more are counted, not attached */

enum { V_VALUE, V_LOOP_TOTAL, V_LOOP_COUNT };

typedef struct cval {
  uint32_t site;
  uint32_t kind; /* V_* */
  double v;
} cval;

typedef struct cframe {
  uint32_t site;
  uint32_t vals_begin; /* this scope's numbers are vals[vals_begin..] */
  double begin_ns;
} cframe;

typedef struct pending {
  double ts_ns;
  uint32_t site;
  int lost; /* 1: end lost; 0: unfinished */
} pending;

typedef struct cthread {
  int defined;
  double last_ns;     /* its last timed record: where a LOST without a time was found */
  uint64_t tid;
  char x_prefix[80]; /* {"ph":"X","pid":P,"tid":T,"ts": */
  size_t x_len;
  cframe stack[MAX_DEPTH];
  uint32_t depth;
  cval *vals;
  uint32_t n_vals, cap_vals;
  pending *pend;
  uint32_t n_pend, cap_pend;
} cthread;

typedef struct csite {
  char *suffix;       /* ,"name":"...","cat":"..." */
  size_t suffix_len;
  char *name;         /* JSON string literal of the name */
  const char *arg;    /* counters and gauges: the "C" event's args key, its unit's name ("value" for none) */
  double sum;         /* counters: running sum */
} csite;

typedef struct chrome {
  ob *o;
  export_filter *f;
  const strobe_capture *c;
  uint64_t pid;
  int first;          /* no event written yet: no comma */
  csite *sites;
  uint32_t n_sites;
  cthread **threads;
  uint32_t n_threads;
  export_tids tids;
  uint64_t values_dropped, unfinished, lost_scopes, unwound;
  strobe__gpu_data gpu;       /* GPU spans and marks, written at the end (>>gpu) */
  export_ops ops;             /* the operations, from the frame model: written at the end (>>operations) */
  int failed;
} chrome;

static char *json_literal(const char *s, size_t *len) {
  strobe__json j = {0};
  strobe__json_str(&j, NULL, s);
  strobe__buf_put(&j.out, "", 1); /* terminator */
  if (j.out.failed) {
    strobe__buf_free(&j.out);
    return NULL;
  }
  if (len) *len = j.out.len - 1;
  return (char *)j.out.data;
}

static void begin_event(chrome *x) {
  ob_room(x->o, OB_SLACK);
  if (!x->first) {
    x->o->buf[x->o->len++] = ',';
  }
  x->o->buf[x->o->len++] = '\n';
  x->first = 0;
}

/* {"ph":"<ph>","pid":P,"tid":T,"ts":<us> — the caller continues. */
static void head(chrome *x, const char *ph, uint64_t tid, double ts_ns) {
  begin_event(x);
  ob *o = x->o;
  ob_str(o, "{\"ph\":\"");
  ob_str(o, ph);
  ob_str(o, "\",\"pid\":");
  ob_room(o, 64);
  ob_u64(o, x->pid);
  ob_str(o, ",\"tid\":");
  ob_room(o, 64);
  ob_u64(o, tid);
  ob_str(o, ",\"ts\":");
  ob_room(o, 32);
  ob_milli(o, round_i64(ts_ns));
}

/* >>tables */
static int on_site(chrome *x, uint32_t id) {
  if (id >= x->n_sites) {
    uint32_t n = x->n_sites ? x->n_sites : 64;
    while (n <= id) n *= 2;
    csite *p = realloc(x->sites, n * sizeof *p);
    if (!p) return -1;
    memset(p + x->n_sites, 0, (n - x->n_sites) * sizeof *p);
    x->sites = p;
    x->n_sites = n;
  }
  csite *s = &x->sites[id];
  if (s->name) return 0; /* a repeated definition */
  const strobe_capture_site *cs = strobe_capture_query_site(x->c, id);
  size_t nl, cl;
  char series[640];
  int counter = cs->kind == STROBE_SITE_COUNTER || cs->kind == STROBE_SITE_GAUGE;
  char *name = json_literal(counter ? export_counter_name(cs, series, sizeof series) : cs->name, &nl);
  char *cat = json_literal(cs->category[0] ? cs->category : cli_site_kind_name(cs->kind), &cl);
  char *suffix = malloc(nl + cl + 20);
  if (!name || !cat || !suffix) {
    free(name);
    free(cat);
    free(suffix);
    return -1;
  }
  s->suffix_len = (size_t)sprintf(suffix, ",\"name\":%s,\"cat\":%s", name, cat);
  s->suffix = suffix;
  s->name = name;
  /* Perfetto labels a counter track's series by its args key: the unit says what the number is. */
  s->arg = cs->unit != STROBE_UNIT_NONE && strobe_unit_name(cs->unit) ? strobe_unit_name(cs->unit) : "value";
  free(cat);
  return 0;
}

static int on_thread(chrome *x, uint32_t index) {
  if (!xf_thread(x->f, x->c, index)) return -1;
  cthread *t = cli_entry(&x->threads, &x->n_threads, index, sizeof *t);
  if (!t) return -1;
  const strobe_capture_thread *ct = strobe_capture_query_thread(x->c, index);
  if (!t->defined) {
    t->defined = 1;
    if ((t->tid = export_tid(&x->tids, x->c, index)) == UINT64_MAX) return -1;
    t->x_len = (size_t)snprintf(t->x_prefix, sizeof t->x_prefix, "{\"ph\":\"X\",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"ts\":",
                                x->pid, t->tid);
  }
  if (!xf_thread_in(x->f, index)) return 0;
  char label[CLI_THREAD_LABEL_MAX];
  const char *name = cli_thread_label(x->c, index, label, sizeof label);
  head(x, "M", t->tid, 0);
  ob_str(x->o, ",\"name\":\"thread_name\",\"args\":{\"name\":");
  ob_json_str(x->o, name);
  ob_str(x->o, ",\"os_tid\":");
  ob_room(x->o, 32);
  ob_u64(x->o, ct->os_tid);
  ob_str(x->o, ",\"strobe_thread_index\":");
  ob_room(x->o, 32);
  ob_u64(x->o, index);
  ob_str(x->o, "}}");
  head(x, "M", t->tid, 0);
  ob_str(x->o, ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":");
  ob_room(x->o, 32);
  ob_u64(x->o, index);
  ob_str(x->o, "}}");
  return 0;
}

/* >>scopes */
static void write_args(chrome *x, const cthread *t, uint32_t from) {
  ob *o = x->o;
  ob_str(o, ",\"args\":{");
  for (uint32_t i = from; i < t->n_vals; i++) {
    const cval *v = &t->vals[i];
    const strobe_capture_site *s = strobe_capture_query_site(x->c, v->site);
    if (i > from) ob_ch(o, ',');
    char key[320];
    snprintf(key, sizeof key, "%s%s", s ? s->name : "?",
             v->kind == V_LOOP_TOTAL ? " total_ns" : v->kind == V_LOOP_COUNT ? " count" : "");
    ob_json_str(o, key);
    ob_ch(o, ':');
    ob_double(o, v->v);
  }
  ob_ch(o, '}');
}

static void on_end(chrome *x, cthread *t, const strobe_capture_record *r) {
  if (r->depth == 0 || r->depth > MAX_DEPTH || r->site >= x->n_sites) return;
  const cframe *f = &t->stack[r->depth - 1];
  const csite *s = &x->sites[r->site];
  if (!xf_time_in(x->f, f->begin_ns) || !xf_time_in(x->f, r->time_ns)) { /* not wholly inside --from/--to */
    x->f->left_out++;
    t->n_vals = f->vals_begin;
    t->depth = r->depth - 1;
    return;
  }
  begin_event(x);
  ob *o = x->o;
  memcpy(o->buf + o->len, t->x_prefix, t->x_len);
  o->len += t->x_len;
  ob_milli(o, round_i64(f->begin_ns));
  memcpy(o->buf + o->len, ",\"dur\":", 7);
  o->len += 7;
  int64_t dur = round_i64(r->duration_ns);
  ob_milli(o, dur < 0 ? 0 : dur); /* a clock stepping back is not a negative duration */
  ob_mem(o, s->suffix, s->suffix_len);
  if (r->unwound) { /* docs/recording.md, Unwinding: its span ends when that was found; values stay off it */
    x->unwound++;
    x->values_dropped += t->n_vals - f->vals_begin;
    ob_str(o, ",\"cname\":\"grey\",\"args\":{\"strobe\":\"unwound: its END never ran, closed when found\"}");
  } else if (t->n_vals > f->vals_begin) {
    write_args(x, t, f->vals_begin);
  }
  ob_ch(o, '}');
  t->n_vals = f->vals_begin;
  t->depth = r->depth - 1;
}

static void add_val(chrome *x, cthread *t, uint32_t depth, uint32_t site, uint32_t kind, double v) {
  if (depth == 0 || depth != t->depth) return; /* top-level loop statistics: no scope to attach to */
  if (t->n_vals == t->cap_vals) {
    uint32_t cap = t->cap_vals ? t->cap_vals * 2 : 16;
    cval *p = cap <= MAX_VALUES ? realloc(t->vals, cap * sizeof *p) : NULL;
    if (!p) {
      x->values_dropped++;
      return;
    }
    t->vals = p;
    t->cap_vals = cap;
  }
  t->vals[t->n_vals++] = (cval){site, kind, v};
}

/* Open scopes deeper than `depth` never get an end here: queued as B events.
 * found_ns: where a loss was recorded (export.h >>filters: a lost scope is
 * kept when that lies inside the range; an unfinished one never with --to). */
static void drop_to(chrome *x, cthread *t, uint32_t depth, int lost, double found_ns) {
  while (t->depth > depth) {
    cframe *f = &t->stack[--t->depth];
    t->n_vals = f->vals_begin;
    if (x->f->has_range &&
        (!xf_time_in(x->f, f->begin_ns) || (lost ? !xf_time_in(x->f, found_ns) : isfinite(x->f->to_ns)))) {
      x->f->left_out++;
      continue;
    }
    if (lost) x->lost_scopes++;
    else x->unfinished++;
    if (t->n_pend == t->cap_pend) {
      uint32_t cap = t->cap_pend ? t->cap_pend * 2 : 16;
      pending *p = realloc(t->pend, cap * sizeof *p);
      if (!p) {
        x->failed = 1;
        continue;
      }
      t->pend = p;
      t->cap_pend = cap;
    }
    t->pend[t->n_pend++] = (pending){f->begin_ns, f->site, lost};
  }
}

static int by_ts(const void *a, const void *b) {
  double x = ((const pending *)a)->ts_ns, y = ((const pending *)b)->ts_ns;
  return (x > y) - (x < y);
}

static void flush_pending(chrome *x, cthread *t) {
  if (!t->n_pend) return;
  if (t->n_pend) qsort(t->pend, t->n_pend, sizeof *t->pend, by_ts);
  for (uint32_t i = 0; i < t->n_pend; i++) {
    const pending *p = &t->pend[i];
    head(x, "B", t->tid, p->ts_ns);
    if (p->site < x->n_sites && x->sites[p->site].suffix) ob_mem(x->o, x->sites[p->site].suffix, x->sites[p->site].suffix_len);
    ob_str(x->o, p->lost ? ",\"args\":{\"strobe\":\"end lost\"}}" : ",\"args\":{\"strobe\":\"unfinished: never ended\"}}");
  }
  t->n_pend = 0;
}

static void on_number(chrome *x, cthread *t, const strobe_capture_record *r) {
  if (r->site >= x->n_sites || !x->sites[r->site].name) return;
  csite *s = &x->sites[r->site];
  double v = r->value;
  if (r->type == STROBE_REC_COUNTER) v = s->sum += r->value; /* the level over every thread, filtered or not */
  if (!xf_thread_in(x->f, r->thread)) return;
  if (!xf_time_in(x->f, r->time_ns)) {
    x->f->left_out++;
    return;
  }
  head(x, "C", t->tid, r->time_ns);
  ob_str(x->o, ",\"name\":");
  ob_str(x->o, s->name);
  ob_str(x->o, ",\"args\":{\"");
  ob_str(x->o, s->arg);
  ob_str(x->o, "\":");
  ob_double(x->o, v);
  ob_str(x->o, "}}");
}

/* >>operations */
/* One operation of the frame model (export_ops.h): one async slice, the halves of a frame handed between processes
 * joined, named by where it began, ended where it ended, its state and population beside its stages and counters. */
static void op_args(chrome *x, uint32_t i, const strobe_frame *fr);
static void write_op(chrome *x, uint32_t i) {
  const strobe_frame *fr = strobe_frames_query_frame(x->ops.fx, i);
  const char *kind = strobe_op_kind_name(fr->kind);
  if (!kind) kind = "operation";
  for (int e = 0; e < 2; e++) {
    head(x, e ? "e" : "b", 0, e ? fr->end_ns : fr->begin_ns);
    ob *o = x->o;
    ob_str(o, ",\"cat\":\"operation\",\"id2\":{\"local\":\"");
    ob_room(o, 64);
    ob_u64(o, fr->collector);
    ob_str(o, ".");
    ob_u64(o, fr->id);
    ob_str(o, "\"},\"name\":\"");
    ob_str(o, kind);
    ob_str(o, " ");
    ob_room(o, 32);
    ob_u64(o, fr->number);
    ob_str(o, "\"");
    if (e) {
      ob_str(o, "}");
      break;
    }
    op_args(x, i, fr);
  }
}

static void arg_key(ob *o, const char *key) {
  ob_str(o, ",");
  ob_json_str(o, key);
  ob_str(o, ":");
}

static void op_args(chrome *x, uint32_t i, const strobe_frame *fr) {
  ob *o = x->o;
  uint32_t nends, nst;
  const xo_end *ends = xo_ends(&x->ops, i, &nends);
  int handed_off = fr->process != fr->end_process;
  for (uint32_t k = 0; k < nends; k++) handed_off |= ends[k].handed_off;
  ob_str(o, ",\"args\":{\"window\":");
  ob_json_str(o, fr->window);
  ob_str(o, ",\"operation_id\":");
  ob_room(o, 32);
  ob_u64(o, fr->id);
  if (fr->kind == STROBE_OP_PASS) {
    ob_str(o, ",\"frame_id\":");
    ob_room(o, 32);
    ob_u64(o, fr->number);
  }
  ob_str(o, ",\"state\":");
  ob_json_str(o, strobe_frames_state_name(fr->state));
  if (strobe_frames_query_process_count(x->ops.fx) > 1) {
    arg_key(o, "process");
    ob_json_str(o, strobe_frames_query_process(x->ops.fx, fr->process));
    arg_key(o, "end_process");
    ob_json_str(o, strobe_frames_query_process(x->ops.fx, fr->end_process));
  }
  if (fr->population[0]) {
    arg_key(o, "population");
    ob_json_str(o, fr->population);
  }
  int committed = fr->state == STROBE_FRAME_COMPLETED || fr->state == STROBE_FRAME_PRESENTED;
  ob_str(o, committed ? ",\"committed\":true" : ",\"committed\":false");
  ob_str(o, handed_off ? ",\"handed_off\":true" : ",\"handed_off\":false");
  if (!fr->detail) ob_str(o, ",\"strobe\":\"began before the capture: stages and counters unknown\"");
  xo_stage st[XO_STAGES_MAX];
  char key[320];
  xo_stages(&x->ops, i, st, XO_STAGES_MAX, &nst);
  for (uint32_t k = 0; k < nst; k++) {
    xo_stage_key(&x->ops, x->c, i, &st[k], key, sizeof key);
    arg_key(o, key);
    ob_double(o, st[k].total_ns / 1e6);
  }
  for (uint32_t k = 0; k < nends; k++)
    for (uint32_t n = 0; n < ends[k].ncounters; n++) {
      xo_counter_key(&x->ops.counters[ends[k].counter0 + n], key, sizeof key);
      arg_key(o, key);
      ob_double(o, x->ops.counters[ends[k].counter0 + n].value);
    }
  ob_str(o, "}}");
}

/* Every operation that ended, from the model, once the capture is read. */
static void write_ops(chrome *x) {
  if (xo_finish(&x->ops, x->c)) x->failed = 1;
  for (uint32_t i = 0; !x->failed && i < strobe_frames_query_count(x->ops.fx); i++)
    if (strobe_frames_query_frame(x->ops.fx, i)->kind && xo_frame_in(&x->ops, x->f, i)) write_op(x, i);
}

static void on_record(chrome *x, const strobe_capture_record *r) {
  if (r->device) {
    strobe__gpu_record(&x->gpu, r);
    return;
  }
  if (r->type == STROBE_REC_SITE) {
    if (on_site(x, r->site)) x->failed = 1;
    return;
  }
  if (r->type == STROBE_REC_THREAD) {
    if (on_thread(x, r->thread)) x->failed = 1;
    return;
  }
  if (r->type >= STROBE_REC_OP_BEGIN && r->type <= STROBE_REC_OP_RESUME) {
    xo_add(&x->ops, x->c, r); /* written at the end, from the frame model (write_ops) */
    return;
  }
  cthread *t = r->thread < x->n_threads ? x->threads[r->thread] : NULL;
  if (!t) return;
  if (r->type == STROBE_REC_COUNTER || r->type == STROBE_REC_GAUGE) {
    on_number(x, t, r);
    return;
  }
  if (!xf_thread_in(x->f, r->thread)) return;
  if (r->ticks && r->time_ns > t->last_ns) t->last_ns = r->time_ns;
  switch (r->type) {
    case STROBE_REC_BEGIN:
      if (r->depth >= 1 && r->depth <= MAX_DEPTH) {
        t->stack[r->depth - 1] = (cframe){r->site, t->n_vals, r->time_ns};
        t->depth = r->depth;
      }
      break;
    case STROBE_REC_END: on_end(x, t, r); break;
    case STROBE_REC_VALUE: add_val(x, t, r->depth, r->site, V_VALUE, r->value); break;
    case STROBE_REC_CUMULATIVE:
      add_val(x, t, r->depth, r->site, V_LOOP_COUNT, (double)r->count);
      add_val(x, t, r->depth, r->site, V_LOOP_TOTAL, r->total_ns);
      break;
    case STROBE_REC_FRAME:
      if (!xf_time_in(x->f, r->time_ns)) {
        x->f->left_out++;
        break;
      }
      head(x, "i", t->tid, r->time_ns);
      ob_str(x->o, ",\"s\":\"p\",\"name\":\"frame\",\"args\":{\"strobe_thread_index\":");
      ob_room(x->o, 32);
      ob_u64(x->o, r->thread);
      ob_str(x->o, "}}");
      break;
    case STROBE_REC_LOST:
      drop_to(x, t, r->depth, 1, r->ticks ? r->time_ns : t->last_ns);
      if (r->ticks && xf_time_in(x->f, r->time_ns)) { /* a marker in the event stream: where the loss happened */
        head(x, "i", t->tid, r->time_ns);
        ob_str(x->o, ",\"s\":\"t\",\"name\":\"strobe: events lost\",\"args\":{\"lost\":");
        ob_room(x->o, 32);
        ob_u64(x->o, r->lost);
        ob_str(x->o, "}}");
      }
      break;
    case STROBE_REC_THREAD_END:
      drop_to(x, t, 0, 0, t->last_ns);
      flush_pending(x, t);
      break;
    default: break;
  }
}

/* >>gpu: queue lanes and the frames' gaps as tracks of their own */
#define GPU_FRAMES_TID 1999999999u
#define GPU_LANE_TID 2000000000u

static void track_name(chrome *x, uint64_t tid, const char *name, uint64_t sort) {
  head(x, "M", tid, 0);
  ob_str(x->o, ",\"name\":\"thread_name\",\"args\":{\"name\":");
  ob_json_str(x->o, name);
  ob_str(x->o, "}}");
  head(x, "M", tid, 0);
  ob_str(x->o, ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":");
  ob_room(x->o, 32);
  ob_u64(x->o, sort);
  ob_str(x->o, "}}");
}

static void gap_slice(chrome *x, const char *name, double from, double to, uint64_t frame) {
  if (!(to >= from)) return; /* unknown, or negative: an order violation, counted */
  head(x, "X", GPU_FRAMES_TID, from);
  ob_str(x->o, ",\"dur\":");
  ob_room(x->o, 32);
  ob_milli(x->o, round_i64(to - from));
  ob_str(x->o, ",\"name\":");
  ob_json_str(x->o, name);
  ob_str(x->o, ",\"cat\":\"gpu\",\"args\":{\"frame_id\":");
  ob_room(x->o, 32);
  ob_u64(x->o, frame);
  ob_str(x->o, "}}");
}

static void write_gpu(chrome *x, strobe_capture *c) {
  strobe__gpu_data *g = &x->gpu;
  if (!xf_gpu_lanes(x->f, g, c, (uint64_t)g->n_spans + g->n_frames, &x->failed)) return;
  for (uint32_t i = 0; i < g->n_lanes; i++) {
    char name[300];
    track_name(x, GPU_LANE_TID + i, strobe__gpu_lane_title(&g->lanes[i], name, sizeof name), GPU_LANE_TID + i);
  }
  for (uint32_t i = 0; i < g->n_spans; i++) {
    const strobe__gpu_span_rec *s = &g->spans[i];
    if (s->lane == UINT32_MAX || isnan(s->begin_ns)) continue; /* counted: lanes_cut, unmapped */
    if (!xf_time_in(x->f, s->begin_ns) || !xf_time_in(x->f, s->end_ns)) { /* --from/--to: wholly inside */
      x->f->left_out++;
      continue;
    }
    const strobe_capture_site *cs = strobe_capture_query_site(c, s->site);
    head(x, "X", GPU_LANE_TID + s->lane, s->begin_ns);
    ob_str(x->o, ",\"dur\":");
    ob_room(x->o, 32);
    ob_milli(x->o, round_i64(s->end_ns - s->begin_ns));
    ob_str(x->o, ",\"name\":");
    ob_json_str(x->o, cs ? cs->name : "?");
    if (s->producer) { /* an external producer's span: no pass, no frame */
      ob_str(x->o, ",\"cat\":\"producer\",\"args\":{\"bound_ns\":");
      ob_double(x->o, s->bound_ns);
      ob_str(x->o, "}}");
      continue;
    }
    ob_str(x->o, ",\"cat\":\"gpu\",\"args\":{\"pass\":");
    ob_json_str(x->o, s->pass[0] ? s->pass : "none");
    ob_str(x->o, ",\"frame_id\":");
    ob_room(x->o, 64);
    ob_u64(x->o, s->frame_id);
    ob_str(x->o, ",\"bound_ns\":");
    ob_double(x->o, s->bound_ns);
    ob_str(x->o, "}}");
  }
  if (!g->n_frames) return;
  track_name(x, GPU_FRAMES_TID, "GPU frames: queue backlog, polling latency", GPU_FRAMES_TID);
  for (uint32_t i = 0; i < g->n_frames; i++) {
    const strobe__gpu_frame_rec *f = &g->frames[i];
    double first = !isnan(f->cpu_end) ? f->cpu_end : !isnan(f->submit) ? f->submit : f->gpu_begin;
    double last = !isnan(f->fence_seen) ? f->fence_seen : f->gpu_end;
    if ((!isnan(first) && !xf_time_in(x->f, first)) || (!isnan(last) && !xf_time_in(x->f, last))) {
      x->f->left_out++;
      continue;
    }
    gap_slice(x, "queue backlog", f->submit, f->gpu_begin, f->frame_id);
    gap_slice(x, "polling latency", f->gpu_end, f->fence_seen, f->frame_id);
    const double at[3] = {f->cpu_end, f->submit, f->fence_seen};
    for (uint32_t k = 0; k < 3; k++) {
      if (isnan(at[k])) continue;
      head(x, "i", GPU_FRAMES_TID, at[k]);
      ob_str(x->o, ",\"s\":\"t\",\"name\":");
      ob_json_str(x->o, strobe_gpu_instant_name(k + 1));
      ob_str(x->o, ",\"args\":{\"frame_id\":");
      ob_room(x->o, 32);
      ob_u64(x->o, f->frame_id);
      ob_str(x->o, "}}");
    }
  }
}

static void other_data(chrome *x, const cli_input *in) {
  ob *o = x->o;
  const strobe_capture_header *h = strobe_capture_query_header(x->c);
  strobe_capture_totals t = strobe_capture_query_totals(x->c);
  ob_str(o, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"exporter\":\"strobe ");
  ob_str(o, strobe_version());
  ob_str(o, "\",\"capture_state\":");
  ob_json_str(o, cli_end_state(in));
  ob_str(o, ",\"clock_source\":");
  ob_json_str(o, h->clock_source);
  ob_str(o, ",\"ns_per_tick\":");
  ob_double(o, h->ns_per_tick);
  ob_str(o, ",\"overhead_per_scope_ns\":");
  ob_double(o, h->overhead_per_scope_ns);
  ob_room(o, 512);
  ob_str(o, ",\"events\":");
  ob_u64(o, t.events);
  ob_str(o, ",\"scopes\":");
  ob_u64(o, t.scopes);
  ob_str(o, ",\"lost_events\":");
  ob_u64(o, t.lost);
  ob_str(o, ",\"unfinished_scopes\":");
  ob_u64(o, x->unfinished);
  ob_str(o, ",\"lost_scopes\":");
  ob_u64(o, x->lost_scopes);
  ob_str(o, ",\"unwound_scopes\":");
  ob_u64(o, x->unwound);
  ob_str(o, ",\"values_not_attached\":");
  ob_u64(o, x->values_dropped);
  ob_room(o, 200);
  ob_str(o, ",\"gpu_spans\":");
  ob_u64(o, x->gpu.n_spans - x->gpu.n_lane_spans);
  ob_str(o, ",\"gpu_spans_unmapped\":");
  ob_u64(o, x->gpu.unmapped);
  ob_str(o, ",\"producer_spans\":");
  ob_u64(o, x->gpu.n_lane_spans);
  ob_str(o, ",\"producer_spans_unmapped\":");
  ob_u64(o, x->gpu.lane_spans_unmapped);
  ob_str(o, ",\"gpu_spans_not_kept\":");
  ob_u64(o, x->gpu.spans_cut + x->gpu.lanes_cut);
  ob_str(o, ",\"gpu_order_violations\":");
  ob_u64(o, x->gpu.violated);
  ob_str(o, ",\"left_out_by_filters\":");
  ob_u64(o, x->f->left_out);
  ob_str(o, ",\"unfinished_as\":\"B events without E, args.strobe says why; never given an end\"}}\n");
}

int export_chrome(cli_input *in, FILE *out, export_filter *f) {
  chrome *x = calloc(1, sizeof *x);
  ob *o = malloc(sizeof *o);
  if (!x || !o) {
    free(x);
    free(o);
    cli_error(in->cmd, "out of memory");
    return CLI_FAIL;
  }
  o->f = out;
  o->len = 0;
  o->failed = 0;
  x->o = o;
  x->f = f;
  xf_begin(f, in->cap);
  x->c = in->cap;
  x->pid = strobe_capture_query_header(in->cap)->pid;
  x->first = 1;
  if (xo_init(&x->ops)) x->failed = 1;
  ob_str(o, "{\"traceEvents\":[");
  head(x, "M", 0, 0);
  ob_str(o, ",\"name\":\"process_name\",\"args\":{\"name\":\"strobe capture\",\"pid\":");
  ob_room(o, 32);
  ob_u64(o, x->pid);
  ob_str(o, "}}");

  for (const strobe_capture_record *r; (r = cli_next_ref(in));) on_record(x, r);
  for (uint32_t i = 0; i < x->n_threads; i++) {
    cthread *t = x->threads[i];
    if (!t) continue;
    drop_to(x, t, 0, 0, t->last_ns);
    flush_pending(x, t);
  }
  int status = cli_finish_read(in);
  write_ops(x);
  write_gpu(x, in->cap);
  other_data(x, in);
  ob_flush(o);
  if (x->failed) {
    cli_error(in->cmd, "out of memory: the export is incomplete");
    status = CLI_FAIL;
  }
  int wfail = o->failed;
  for (uint32_t i = 0; i < x->n_sites; i++) {
    free(x->sites[i].suffix);
    free(x->sites[i].name);
  }
  for (uint32_t i = 0; i < x->n_threads; i++) {
    if (!x->threads[i]) continue;
    free(x->threads[i]->vals);
    free(x->threads[i]->pend);
    free(x->threads[i]);
  }
  free(x->sites);
  free(x->threads);
  export_tids_free(&x->tids);
  strobe__gpu_free(&x->gpu);
  xo_free(&x->ops);
  free(x);
  free(o);
  return wfail ? CLI_OUTPUT : status;
}
