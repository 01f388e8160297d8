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
 * Two passes: the first collects every operation's intervals on each thread
 * (begin, hand-offs, resumptions, end: records of one operation may come in
 * any order, per-thread blocks), the second streams the scopes, writing each
 * child span at its END, then the root spans.
 *
 * Memory: per operation one entry and its intervals (bounded:
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

#define OTLP_MAX_OPS (4u << 20)   /* operations exported; later ones are counted (ops_cut) */
#define MAX_DEPTH 256
#define SCAN_BACK 256             /* intervals scanned back for a scope's operation on its thread */

/* >>ids: platform/mix.h's mixer over words: deterministic, well mixed; nz makes them never 0. */
static uint64_t nz(uint64_t v) { return v ? v : 1; }

static void ob_hex64(ob *o, uint64_t v) {
  static const char hex[] = "0123456789abcdef";
  ob_room(o, 16);
  for (int i = 15; i >= 0; i--) o->buf[o->len + (size_t)(15 - i)] = hex[(v >> (4 * i)) & 15];
  o->len += 16;
}

/* >>ops */
enum { EV_BEGIN, EV_TAKE, EV_RESUME, EV_END };

typedef struct opev {
  uint32_t collector, thread, what;
  uint64_t id;
  double t_ns;
} opev;

typedef struct span_iv {   /* an operation on one thread, from..to */
  double from, to;
  uint32_t op;             /* index into ops */
} span_iv;

typedef struct op_rec {
  uint32_t collector, kind, thread;  /* thread: where it ended */
  uint64_t id, frame_id;
  char *window;
  int committed, handed_off, detail, app_frame_id;
  uint32_t stages_dropped, counters_dropped;
  double start_ns, end_ns;
  uint32_t ncounters;
  char **counter_names;
  double *counter_values;
  uint64_t trace_hi, trace_lo, root;
  int in;                  /* passes the filters */
} op_rec;

typedef struct open_scope { /* a thread's open scope at one depth */
  uint32_t site;
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
  opev *evs;
  size_t nevs, capevs;
  op_rec *ops;
  uint32_t nops, capops;
  uint64_t ops_cut;
  span_iv **ivs;           /* per thread, sorted by from */
  uint32_t *nivs, nthreads;
  /* pass 2 */
  open_scope (*stack)[MAX_DEPTH]; /* per thread */
  uint32_t nstack;
  uint64_t spans, children, unattributed, unwound;
  int first_span;
  int failed;
} otlp;

static int op_key_cmp(const void *x, const void *y) {
  const opev *a = x, *b = y;
  if (a->collector != b->collector) return a->collector < b->collector ? -1 : 1;
  if (a->id != b->id) return a->id < b->id ? -1 : 1;
  if (a->t_ns != b->t_ns) return a->t_ns < b->t_ns ? -1 : 1;
  return (int)a->what - (int)b->what;
}

static int ev_push(otlp *x, const strobe_capture_record *r, uint32_t what) {
  if (x->nevs == x->capevs) {
    size_t cap = x->capevs ? x->capevs * 2 : 1024;
    opev *p = realloc(x->evs, cap * sizeof *p);
    if (!p) return -1;
    x->evs = p;
    x->capevs = cap;
  }
  double t = what == EV_BEGIN ? r->op->start_ns : r->time_ns;
  x->evs[x->nevs++] = (opev){r->op->collector, r->thread, what, r->op->id, t};
  return 0;
}

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
  op_rec *o = &x->ops[x->nops];
  memset(o, 0, sizeof *o);
  o->collector = op->collector;
  o->kind = op->kind;
  o->thread = r->thread;
  o->id = op->id;
  o->frame_id = op->frame_id;
  o->app_frame_id = op->app_frame_id;
  o->committed = op->committed;
  o->handed_off = op->handed_off;
  o->detail = op->detail;
  o->stages_dropped = op->stages_dropped;
  o->counters_dropped = op->counters_dropped;
  o->start_ns = op->start_ns;
  o->end_ns = r->time_ns;
  o->window = dup_str(op->window);
  if (!o->window) return -1;
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
  o->trace_hi = nz(strobe__mix64(strobe__mix64(x->key, o->collector), o->id));
  o->trace_lo = nz(strobe__mix64(o->trace_hi, 0x6f746c70u));
  o->root = nz(strobe__mix64(o->trace_lo, 0x726f6f74u));
  o->in = xf_thread_in(x->f, r->thread) && xf_time_in(x->f, o->start_ns) && xf_time_in(x->f, o->end_ns);
  if (!o->in) x->f->left_out++;
  x->nops++;
  return 0;
}

static int by_collector_id(const void *p, const void *q) {
  const op_rec *a = p, *b = q;
  if (a->collector != b->collector) return a->collector < b->collector ? -1 : 1;
  return (a->id > b->id) - (a->id < b->id);
}
static int by_from(const void *p, const void *q) {
  const span_iv *a = p, *b = q;
  return (a->from > b->from) - (a->from < b->from);
}

static op_rec *op_find(otlp *x, uint32_t collector, uint64_t id) {
  uint32_t lo = 0, hi = x->nops;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    const op_rec *m = &x->ops[mid];
    if (m->collector < collector || (m->collector == collector && m->id < id)) lo = mid + 1;
    else hi = mid;
  }
  return lo < x->nops && x->ops[lo].collector == collector && x->ops[lo].id == id ? &x->ops[lo] : NULL;
}

static int iv_add(otlp *x, uint32_t thread, double from, double to, uint32_t op) {
  if (thread >= x->nthreads) {
    uint32_t n = thread + 1;
    span_iv **t = realloc(x->ivs, n * sizeof *t);
    if (!t) return -1;
    x->ivs = t;
    uint32_t *c = realloc(x->nivs, n * sizeof *c);
    if (!c) return -1;
    x->nivs = c;
    for (uint32_t i = x->nthreads; i < n; i++) x->ivs[i] = NULL, x->nivs[i] = 0;
    x->nthreads = n;
  }
  uint32_t k = x->nivs[thread];
  if ((k & (k - 1)) == 0) { /* grow at powers of two */
    span_iv *p = realloc(x->ivs[thread], (size_t)(k ? 2 * k : 1) * sizeof *p);
    if (!p) return -1;
    x->ivs[thread] = p;
  }
  x->ivs[thread][k] = (span_iv){from, to, op};
  x->nivs[thread] = k + 1;
  return 0;
}

/* Each completed operation's intervals per thread, from its events in time
 * order: begin (or resume) opens one on its thread, take (or end) closes it. */
static int build_intervals(otlp *x) {
  if (x->nops) qsort(x->ops, x->nops, sizeof *x->ops, by_collector_id); /* NULL when none: qsort takes no NULL */
  if (x->nevs) qsort(x->evs, x->nevs, sizeof *x->evs, op_key_cmp);
  for (size_t i = 0; i < x->nevs;) {
    size_t j = i;
    while (j < x->nevs && x->evs[j].collector == x->evs[i].collector && x->evs[j].id == x->evs[i].id) j++;
    op_rec *o = op_find(x, x->evs[i].collector, x->evs[i].id);
    if (o && o->in) {
      int open = 0;
      uint32_t th = 0;
      double from = 0;
      for (size_t k = i; k < j; k++) {
        const opev *e = &x->evs[k];
        if (e->what == EV_BEGIN || e->what == EV_RESUME) {
          open = 1, th = e->thread, from = e->t_ns;
        } else if (open && (e->what == EV_TAKE || e->what == EV_END)) {
          if (e->thread == th && iv_add(x, th, from, e->t_ns, (uint32_t)(o - x->ops))) return -1;
          open = 0;
        }
      }
    }
    i = j;
  }
  for (uint32_t t = 0; t < x->nthreads; t++)
    if (x->nivs[t]) qsort(x->ivs[t], x->nivs[t], sizeof *x->ivs[t], by_from);
  return 0;
}

/* The innermost operation on `thread` holding [b, e], or NULL. */
static op_rec *op_at(otlp *x, uint32_t thread, double b, double e) {
  if (thread >= x->nthreads || !x->nivs[thread]) return NULL;
  const span_iv *v = x->ivs[thread];
  uint32_t lo = 0, hi = x->nivs[thread];
  while (lo < hi) { /* the first interval beginning after b */
    uint32_t mid = lo + (hi - lo) / 2;
    if (v[mid].from <= b) lo = mid + 1;
    else hi = mid;
  }
  for (uint32_t k = lo, n = 0; k-- > 0 && n < SCAN_BACK; n++)
    if (v[k].from <= b && v[k].to >= e) return &x->ops[v[k].op];
  return NULL;
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
static void span_head(otlp *x, const op_rec *op, uint64_t span, uint64_t parent, const char *name, double b,
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

static uint64_t child_id(const op_rec *op, uint32_t thread, uint32_t depth, uint64_t ticks, uint32_t site) {
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
  op_rec *op = op_at(x, r->thread, fr->begin_ns, r->time_ns);
  if (!op) {
    x->unattributed++;
    return;
  }
  uint64_t parent = op->root;
  for (uint32_t k = r->depth - 1; k-- > 0;) { /* the innermost enclosing span of the same operation */
    const open_scope *a = &x->stack[r->thread][k];
    if (a->valid && a->begin_ns >= op->start_ns && emitted_kind(x, a->site)) {
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
    fr->valid = 1;
  } else if (r->type == STROBE_REC_END) {
    on_end(x, r);
  } else if ((r->type == STROBE_REC_LOST || r->type == STROBE_REC_THREAD_END) && r->thread < x->nstack) {
    uint32_t keep = r->type == STROBE_REC_LOST ? r->depth : 0; /* deeper scopes were closed as lost */
    for (uint32_t k = keep; k < MAX_DEPTH; k++) x->stack[r->thread][k].valid = 0;
  }
}

static void root_span(otlp *x, const op_rec *op) {
  const char *kind = strobe_op_kind_name(op->kind);
  span_head(x, op, op->root, 0, kind ? kind : "operation", op->start_ns, op->end_ns);
  ob *o = x->o;
  int first = 1;
  ob_str(o, ",\"attributes\":[");
  attr_str(o, &first, "strobe.operation.kind", kind ? kind : "unknown");
  attr_int(o, &first, "strobe.operation.id", (int64_t)op->id);
  attr_int(o, &first, "strobe.collector", op->collector);
  attr_str(o, &first, "strobe.window", op->window);
  if (op->kind == STROBE_OP_PASS) attr_int(o, &first, "strobe.frame_id", (int64_t)op->frame_id);
  attr_bool(o, &first, "strobe.committed", op->committed);
  attr_bool(o, &first, "strobe.handed_off", op->handed_off);
  attr_bool(o, &first, "strobe.detail", op->detail);
  if (op->stages_dropped) attr_int(o, &first, "strobe.stages_dropped", op->stages_dropped);
  if (op->counters_dropped) attr_int(o, &first, "strobe.counters_dropped", op->counters_dropped);
  char key[320];
  for (uint32_t i = 0; i < op->ncounters; i++) {
    snprintf(key, sizeof key, "strobe.counter.%s", op->counter_names[i]);
    attr_double(o, &first, key, op->counter_values[i]);
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
    free(x->ops[i].window);
    for (uint32_t k = 0; k < x->ops[i].ncounters; k++) free(x->ops[i].counter_names[k]);
    free(x->ops[i].counter_names);
    free(x->ops[i].counter_values);
  }
  free(x->ops);
  free(x->evs);
  for (uint32_t t = 0; t < x->nthreads; t++) free(x->ivs[t]);
  free(x->ivs);
  free(x->nivs);
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
  while (cli_next(&in, &r) > 0) { /* pass 1: the operations */
    if (r.type == STROBE_REC_THREAD && !xf_thread(f, in.cap, r.thread)) x.failed = 1;
    if (!r.op) continue;
    uint32_t what = r.type == STROBE_REC_OP_BEGIN ? EV_BEGIN : r.type == STROBE_REC_OP_TAKE ? EV_TAKE
                    : r.type == STROBE_REC_OP_RESUME ? EV_RESUME : EV_END;
    if (ev_push(&x, &r, what) || (r.type == STROBE_REC_OP_END && op_push(&x, &r))) x.failed = 1;
  }
  status = cli_finish_read(&in);
  cli_close(&in);
  if (!x.failed && build_intervals(&x)) x.failed = 1;
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
  for (uint32_t i = 0; i < x.nops; i++)
    if (x.ops[i].in) root_span(&x, &x.ops[i]);
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
