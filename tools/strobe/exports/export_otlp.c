/*
 * export_otlp.c — OpenTelemetry's trace data, OTLP/JSON (an
 * ExportTraceServiceRequest as the OTLP/HTTP JSON encoding writes it), so a
 * fleet's backends (Jaeger, Tempo, any OpenTelemetry Collector) take
 * Strobe's operations (docs/otel.md, docs/cli.md §otlp):
 *
 *   - one trace per completed operation: its root span is the operation
 *     (name: its kind, "pass"; attributes: window, operation id, frame id,
 *     committed, handed off, its counters), from its start to its end;
 *   - its stages (scopes of stage sites inside it, on any thread it ran on)
 *     are child spans, each under the innermost enclosing stage; with
 *     --otlp-scopes every other scope inside the operation too;
 *   - trace and span ids are deterministic: a hash of the capture's identity
 *     (pid, clock epoch, start) with the operation's collector and id, and
 *     for a child its thread, depth, begin tick and site, so exporting a
 *     capture twice gives the same ids and a span's parent id is known before
 *     the parent ends;
 *   - times are Unix ns: the capture's wall-clock anchor (header
 *     epoch_unix_ns) plus its times. A capture without one is refused.
 *
 * Which operation a scope belongs to, and what one operation is, are the
 * frame model's (strobe/frames.h, docs/frames.md): a scope is a child of the
 * operation that was the innermost open on its thread at its begin, and an
 * operation handed between processes (a merged capture) is one trace, from
 * the origin's start to the finisher's end, the counters of both its ENDs on
 * its root.
 *
 * Two passes: the first builds the frame model and keeps each operation
 * END's counters, the second streams the scopes, writing each child span at
 * its END, then the root spans.
 *
 * Memory: the frame model; per operation END one entry (bounded:
 * OTLP_MAX_OPS, the rest counted and said); per thread its open scopes
 * (<= MAX_DEPTH). Never per scope.
 *
 * Contents: >>ids >>ops >>spans >>export
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "export.h"
#include "platform/mix.h"
#include "strobe/frames.h"

#define OTLP_MAX_OPS (4u << 20)   /* operations exported; later ones are counted (ops_cut) */
#define MAX_DEPTH 256

/* >>ids: platform/mix.h's mixer over words: deterministic, well mixed; nz makes them never 0. */
static uint64_t nz(uint64_t v) { return v ? v : 1; }

static void ob_hex64(ob *o, uint64_t v) {
  static const char hex[] = "0123456789abcdef";
  ob_room(o, 16);
  for (int i = 15; i >= 0; i--) o->buf[o->len + (size_t)(15 - i)] = hex[(v >> (4 * i)) & 15];
  o->len += 16;
}

/* >>ops: each operation END's counters and cuts; the rest is the frame model's. */
typedef struct op_rec {
  uint32_t collector, frame;         /* frame: its frame in the model */
  uint64_t id;
  int handed_off;                    /* moved between threads at least once */
  uint32_t stages_dropped, counters_dropped;
  uint32_t ncounters;
  char **counter_names;
  double *counter_values;
} op_rec;

typedef struct frame_ids {           /* per frame of the model: its trace and root span, and the filters' verdict */
  uint64_t trace_hi, trace_lo, root;
  int in;
} frame_ids;

typedef struct open_scope { /* a thread's open scope at one depth */
  uint32_t site, owner;     /* owner: its operation's frame (strobe_frames_owner at its begin) */
  uint64_t ticks;
  double begin_ns;
  int valid;
} open_scope;

typedef struct otlp {
  const otlp_opts *opt;
  export_filter *f;
  ob *o;
  strobe_capture *c;
  uint64_t key;            /* the capture's identity */
  uint64_t unix0;          /* Unix ns at the capture's epoch */
  strobe_frames *fx;       /* the frame model (pass 1) */
  frame_ids *ids;          /* per frame */
  op_rec *ops;             /* operation ENDs, in the order read */
  uint32_t nops, capops;
  uint64_t ops_cut;
  /* pass 2 */
  open_scope (*stack)[MAX_DEPTH]; /* per thread */
  uint32_t nstack;
  uint64_t spans, children, unattributed, unwound;
  int first_span;
  int failed;
} otlp;

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static int op_push(otlp *x, const strobe_capture_record *r) {
  if (x->nops == OTLP_MAX_OPS) {
    x->ops_cut++;
    return 0;
  }
  if (x->nops == x->capops) {
    uint32_t cap = x->capops ? x->capops * 2 : 256;
    op_rec *p = realloc(x->ops, (size_t)cap * sizeof *p);
    if (!p) return -1;
    x->ops = p;
    x->capops = cap;
  }
  const strobe_capture_op *op = r->op;
  op_rec *o = &x->ops[x->nops++];
  memset(o, 0, sizeof *o);
  o->collector = op->collector;
  o->id = op->id;
  o->handed_off = op->handed_off;
  o->stages_dropped = op->stages_dropped;
  o->counters_dropped = op->counters_dropped;
  if (op->ncounters) {
    o->counter_names = calloc(op->ncounters, sizeof *o->counter_names);
    o->counter_values = calloc(op->ncounters, sizeof *o->counter_values);
    if (!o->counter_names || !o->counter_values) return -1;
    for (uint32_t i = 0; i < op->ncounters; i++) {
      if (!(o->counter_names[i] = dup_str(op->counters[i].name))) return -1;
      o->counter_values[i] = op->counters[i].value;
      o->ncounters = i + 1;
    }
  }
  return 0;
}

/* After pass 1: each frame's trace ids (from where it began: a hash of the capture's identity with that
 * collector and id, so a trace keeps its ids however the capture is cut) and the filters' verdict; each END's
 * frame. */
static int frame_ids_of(otlp *x) {
  uint32_t n = strobe_frames_query_count(x->fx);
  x->ids = calloc((size_t)n + 1, sizeof *x->ids);
  if (!x->ids) return -1;
  for (uint32_t i = 0; i < n; i++) {
    const strobe_frame *fr = strobe_frames_query_frame(x->fx, i);
    frame_ids *d = &x->ids[i];
    d->trace_hi = nz(strobe__mix64(strobe__mix64(x->key, fr->collector), fr->id));
    d->trace_lo = nz(strobe__mix64(d->trace_hi, 0x6f746c70u));
    d->root = nz(strobe__mix64(d->trace_lo, 0x726f6f74u));
    d->in = fr->state != STROBE_FRAME_UNFINISHED && xf_thread_in(x->f, fr->end_thread) &&
            xf_time_in(x->f, fr->begin_ns) && xf_time_in(x->f, fr->end_ns);
    if (fr->state != STROBE_FRAME_UNFINISHED && !d->in) x->f->left_out++;
  }
  for (uint32_t i = 0; i < x->nops; i++) x->ops[i].frame = strobe_frames_find_op(x->fx, x->ops[i].collector, x->ops[i].id);
  return 0;
}

/* >>spans */
static void attr_key(ob *o, int *first, const char *key) {
  ob_str(o, *first ? "{\"key\":" : ",{\"key\":");
  *first = 0;
  ob_json_str(o, key);
}
static void attr_str(ob *o, int *first, const char *key, const char *v) {
  attr_key(o, first, key);
  ob_str(o, ",\"value\":{\"stringValue\":");
  ob_json_str(o, v);
  ob_str(o, "}}");
}
static void attr_int(ob *o, int *first, const char *key, int64_t v) {
  attr_key(o, first, key);
  ob_str(o, ",\"value\":{\"intValue\":\"");
  ob_room(o, 24);
  ob_i64(o, v);
  ob_str(o, "\"}}");
}
static void attr_bool(ob *o, int *first, const char *key, int v) {
  attr_key(o, first, key);
  ob_str(o, v ? ",\"value\":{\"boolValue\":true}}" : ",\"value\":{\"boolValue\":false}}");
}
static void attr_double(ob *o, int *first, const char *key, double v) {
  attr_key(o, first, key);
  ob_str(o, ",\"value\":{\"doubleValue\":");
  ob_room(o, 32);
  ob_double(o, isfinite(v) ? v : 0);
  ob_str(o, "}}");
}

/* Integer arithmetic on the anchor: Unix ns need 61 bits, a double holds 53. */
static void unix_ns(otlp *x, double t_ns) {
  ob_ch(x->o, '"');
  ob_room(x->o, 24);
  ob_i64(x->o, (int64_t)x->unix0 + round_i64(t_ns));
  ob_ch(x->o, '"');
}

/* The head of a span: ids, name, kind INTERNAL, times. */
static void span_head(otlp *x, const frame_ids *op, uint64_t span, uint64_t parent, const char *name, double b,
                      double e) {
  ob *o = x->o;
  ob_str(o, x->first_span ? "\n{\"traceId\":\"" : ",\n{\"traceId\":\"");
  x->first_span = 0;
  ob_hex64(o, op->trace_hi);
  ob_hex64(o, op->trace_lo);
  ob_str(o, "\",\"spanId\":\"");
  ob_hex64(o, span);
  ob_str(o, "\"");
  if (parent) {
    ob_str(o, ",\"parentSpanId\":\"");
    ob_hex64(o, parent);
    ob_str(o, "\"");
  }
  ob_str(o, ",\"name\":");
  ob_json_str(o, name);
  ob_str(o, ",\"kind\":1,\"startTimeUnixNano\":");
  unix_ns(x, b);
  ob_str(o, ",\"endTimeUnixNano\":");
  unix_ns(x, e);
  x->spans++;
}

static int emitted_kind(const otlp *x, uint32_t site) {
  const strobe_capture_site *s = strobe_capture_query_site(x->c, site);
  return s && (s->kind == STROBE_SITE_STAGE || (x->opt->scopes && s->kind == STROBE_SITE_SCOPE));
}

static uint64_t child_id(const frame_ids *op, uint32_t thread, uint32_t depth, uint64_t ticks, uint32_t site) {
  return nz(strobe__mix64(strobe__mix64(strobe__mix64(strobe__mix64(op->trace_lo, thread), depth), ticks), site));
}

static int stack_for(otlp *x, uint32_t thread) {
  if (thread < x->nstack) return 0;
  uint32_t n = thread + 1;
  void *p = realloc(x->stack, (size_t)n * sizeof *x->stack);
  if (!p) return -1;
  x->stack = p;
  memset(x->stack + x->nstack, 0, (size_t)(n - x->nstack) * sizeof *x->stack);
  x->nstack = n;
  return 0;
}

static void on_end(otlp *x, const strobe_capture_record *r) {
  if (r->depth < 1 || r->depth > MAX_DEPTH || r->thread >= x->nstack) return;
  open_scope *fr = &x->stack[r->thread][r->depth - 1];
  if (!fr->valid || fr->site != r->site) return; /* begun before the capture */
  fr->valid = 0;
  if (!emitted_kind(x, r->site)) return;
  if (r->unwound) { /* no measured end: never a span */
    x->unwound++;
    return;
  }
  if (fr->owner == STROBE_FRAMES_NONE || !x->ids[fr->owner].in) { /* no operation owns it (docs/frames.md §Own spans) */
    x->unattributed++;
    return;
  }
  const frame_ids *op = &x->ids[fr->owner];
  uint64_t parent = op->root;
  for (uint32_t k = r->depth - 1; k-- > 0;) { /* the innermost enclosing span of the same operation */
    const open_scope *a = &x->stack[r->thread][k];
    if (a->valid && a->owner == fr->owner && emitted_kind(x, a->site)) {
      parent = child_id(op, r->thread, k + 1, a->ticks, a->site);
      break;
    }
  }
  const strobe_capture_site *s = strobe_capture_query_site(x->c, r->site);
  span_head(x, op, child_id(op, r->thread, r->depth, fr->ticks, r->site), parent, s->name, fr->begin_ns, r->time_ns);
  ob *o = x->o;
  int first = 1;
  ob_str(o, ",\"attributes\":[");
  attr_str(o, &first, "strobe.site.kind", s->kind == STROBE_SITE_STAGE ? "stage" : "scope");
  if (s->category[0]) attr_str(o, &first, "strobe.site.category", s->category);
  if (s->file[0]) attr_str(o, &first, "code.file.path", s->file);
  if (s->line) attr_int(o, &first, "code.line.number", s->line);
  if (s->function[0]) attr_str(o, &first, "code.function.name", s->function);
  if (s->flags & STROBE_SITE_INTERNED) attr_bool(o, &first, "strobe.site.interned", 1);
  const strobe_capture_thread *t = strobe_capture_query_thread(x->c, r->thread);
  if (t) {
    attr_int(o, &first, "thread.id", (int64_t)t->os_tid);
    if (t->name[0]) attr_str(o, &first, "thread.name", t->name);
  }
  ob_str(o, "]}");
  x->children++;
}

static void on_record2(otlp *x, const strobe_capture_record *r) {
  if (r->type == STROBE_REC_THREAD || r->type == STROBE_REC_SITE) return;
  if (r->type == STROBE_REC_BEGIN) {
    if (r->depth < 1 || r->depth > MAX_DEPTH) return;
    if (stack_for(x, r->thread)) {
      x->failed = 1;
      return;
    }
    open_scope *fr = &x->stack[r->thread][r->depth - 1];
    fr->site = r->site;
    fr->ticks = r->ticks;
    fr->begin_ns = r->time_ns;
    fr->owner = strobe_frames_owner(x->fx, r->thread, r->time_ns);
    fr->valid = 1;
  } else if (r->type == STROBE_REC_END) {
    on_end(x, r);
  } else if ((r->type == STROBE_REC_LOST || r->type == STROBE_REC_THREAD_END) && r->thread < x->nstack) {
    uint32_t keep = r->type == STROBE_REC_LOST ? r->depth : 0; /* deeper scopes were closed as lost */
    for (uint32_t k = keep; k < MAX_DEPTH; k++) x->stack[r->thread][k].valid = 0;
  }
}

/* The root span of frame i: the operation from where it began to where it ended, its state, and the counters
 * and cuts of each of its ENDs (both halves of a hand-off between processes: counters stay where they were
 * counted, docs/sessions.md §Across processes). */
static void root_span(otlp *x, uint32_t i) {
  const strobe_frame *fr = strobe_frames_query_frame(x->fx, i);
  const char *kind = strobe_op_kind_name(fr->kind);
  span_head(x, &x->ids[i], x->ids[i].root, 0, kind ? kind : "operation", fr->begin_ns, fr->end_ns);
  ob *o = x->o;
  int first = 1, handed_off = fr->process != fr->end_process, committed = fr->state == STROBE_FRAME_COMPLETED ||
                                                                          fr->state == STROBE_FRAME_PRESENTED;
  ob_str(o, ",\"attributes\":[");
  attr_str(o, &first, "strobe.operation.kind", kind ? kind : "unknown");
  attr_int(o, &first, "strobe.operation.id", (int64_t)fr->id);
  attr_int(o, &first, "strobe.collector", (int64_t)fr->collector);
  attr_str(o, &first, "strobe.window", fr->window);
  if (fr->kind == STROBE_OP_PASS) attr_int(o, &first, "strobe.frame_id", (int64_t)fr->number);
  attr_str(o, &first, "strobe.state", strobe_frames_state_name(fr->state));
  if (fr->population[0]) attr_str(o, &first, "strobe.population", fr->population); /* as the OTLP push names it */
  if (strobe_frames_query_process_count(x->fx) > 1) {
    attr_str(o, &first, "strobe.process", strobe_frames_query_process(x->fx, fr->process));
    attr_str(o, &first, "strobe.end_process", strobe_frames_query_process(x->fx, fr->end_process));
  }
  uint32_t dropped[2] = {0, 0};
  for (uint32_t k = 0; k < x->nops; k++)
    if (x->ops[k].frame == i) {
      handed_off |= x->ops[k].handed_off;
      dropped[0] += x->ops[k].stages_dropped, dropped[1] += x->ops[k].counters_dropped;
    }
  attr_bool(o, &first, "strobe.committed", committed);
  attr_bool(o, &first, "strobe.handed_off", handed_off);
  attr_bool(o, &first, "strobe.detail", fr->detail);
  if (dropped[0]) attr_int(o, &first, "strobe.stages_dropped", dropped[0]);
  if (dropped[1]) attr_int(o, &first, "strobe.counters_dropped", dropped[1]);
  char key[320];
  for (uint32_t k = 0; k < x->nops; k++) {
    if (x->ops[k].frame != i) continue;
    for (uint32_t c = 0; c < x->ops[k].ncounters; c++) {
      snprintf(key, sizeof key, "strobe.counter.%s", x->ops[k].counter_names[c]);
      attr_double(o, &first, key, x->ops[k].counter_values[c]);
    }
  }
  ob_str(o, "]}");
}

static void resource(otlp *x) {
  const strobe_capture_header *h = strobe_capture_query_header(x->c);
  ob *o = x->o;
  int first = 1;
  ob_str(o, "{\"resourceSpans\":[{\"resource\":{\"attributes\":[");
  attr_str(o, &first, "service.name", x->opt->service ? x->opt->service : "unknown_service:strobe");
  attr_int(o, &first, "process.pid", (int64_t)h->pid);
  attr_str(o, &first, "host.arch", h->arch);
  attr_str(o, &first, "os.type", h->os);
  attr_str(o, &first, "telemetry.sdk.name", "strobe");
  attr_str(o, &first, "telemetry.sdk.language", "c");
  attr_str(o, &first, "telemetry.sdk.version", h->strobe_version);
  attr_str(o, &first, "strobe.capture.kind", h->kind);
  attr_str(o, &first, "strobe.clock.source", h->clock_source);
  for (uint32_t i = 0; i < x->opt->nresource; i++) {
    const char *kv = x->opt->resource[i], *eq = strchr(kv, '=');
    char key[256];
    snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
    attr_str(o, &first, key, eq + 1);
  }
  ob_str(o, "]},\"scopeSpans\":[{\"scope\":{\"name\":\"strobe\",\"version\":");
  ob_json_str(o, strobe_version());
  ob_str(o, "},\"spans\":[");
}

/* >>export */
static void free_all(otlp *x) {
  for (uint32_t i = 0; i < x->nops; i++) {
    for (uint32_t k = 0; k < x->ops[i].ncounters; k++) free(x->ops[i].counter_names[k]);
    free(x->ops[i].counter_names);
    free(x->ops[i].counter_values);
  }
  free(x->ops);
  free(x->ids);
  strobe_frames_destroy(x->fx);
  free(x->stack);
}

int export_otlp(const char *path, int quiet, FILE *out, export_filter *f, const otlp_opts *opt) {
  otlp x = {.opt = opt, .f = f, .first_span = 1};
  cli_input in;
  int status = cli_open(&in, "export", path, quiet);
  if (status) return status;
  const strobe_capture_header *h = strobe_capture_query_header(in.cap);
  if (!h->epoch_unix_ns) {
    cli_error("export", "%s carries no wall-clock time (its writer predates the header's epoch_unix_ns): "
                        "OTLP needs Unix times, so nothing was written",
              path);
    cli_close(&in);
    return CLI_FAIL;
  }
  x.key = strobe__mix64(strobe__mix64(strobe__mix64(h->pid, h->epoch_mono_ns), h->start_ticks), h->epoch_unix_ns);
  x.unix0 = h->epoch_unix_ns;
  xf_begin(f, in.cap);
  strobe_capture_record r;
  if (strobe_frames_create(NULL, &x.fx)) x.failed = 1;
  while (!x.failed && cli_next(&in, &r) > 0) { /* pass 1: the frame model, and each END's counters */
    if (r.type == STROBE_REC_THREAD && !xf_thread(f, in.cap, r.thread)) x.failed = 1;
    if (!r.op) continue;
    if (strobe_frames_add(x.fx, in.cap, &r) || (r.type == STROBE_REC_OP_END && op_push(&x, &r))) x.failed = 1;
  }
  status = cli_finish_read(&in);
  if (!x.failed && (strobe_frames_finish(x.fx, in.cap) || frame_ids_of(&x))) x.failed = 1;
  cli_close(&in);
  ob *o = malloc(sizeof *o);
  if (!o || x.failed) {
    free(o);
    free_all(&x);
    cli_error("export", "out of memory");
    return CLI_FAIL;
  }
  *o = (ob){.f = out};
  x.o = o;
  int rc = cli_open(&in, "export", path, 1); /* pass 2: the scopes, then the roots */
  if (rc) {
    free(o);
    free_all(&x);
    return rc;
  }
  x.c = in.cap;
  resource(&x);
  while (cli_next(&in, &r) > 0) on_record2(&x, &r);
  for (uint32_t i = 0; i < strobe_frames_query_count(x.fx); i++)
    if (x.ids[i].in && strobe_frames_query_frame(x.fx, i)->kind) root_span(&x, i);
  ob_str(o, "\n]}]}]}\n");
  ob_flush(o);
  cli_close(&in);
  if (x.failed) {
    cli_error("export", "out of memory: the export is incomplete");
    status = CLI_FAIL;
  }
  if (!quiet && (x.ops_cut || x.unattributed || x.unwound))
    cli_error("export", "note: %llu operations past %u not exported; %llu stage or scope spans outside every "
                        "exported operation and %llu unwound ones (no measured end) left out",
              (unsigned long long)x.ops_cut, OTLP_MAX_OPS, (unsigned long long)x.unattributed,
              (unsigned long long)x.unwound);
  if (!x.nops && status == CLI_OK)
    cli_error("export", "warning: %s has no completed operation: the OTLP file has no spans", path);
  int wfail = o->failed;
  free(o);
  free_all(&x);
  if (wfail) {
    cli_error("export", "cannot write the output");
    return CLI_OUTPUT;
  }
  return status;
}
