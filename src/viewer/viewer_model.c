/*
 * viewer_model.c — turns one capture (a file, or a flight-recorder snapshot
 * in memory) into the viewer's model: packed little-endian column tables the
 * browser wraps in typed arrays without parsing, and one JSON document
 * ("meta") describing the capture and where each column sits. The browser
 * never sees the capture format or zstd. Layout and semantics:
 * docs/viewer.md.
 *
 * Two passes over the capture, so the model is allocated once at its exact
 * size: pass 1 counts spans per (thread, depth), values, samples per site
 * and frame marks; pass 2 fills. Spans are stored sorted by (thread, depth,
 * start) without any sort: on one thread, the scopes at one depth are
 * disjoint and end in start order, so each END lands at the next slot of
 * its (thread, depth) bucket. A flame-chart lane row is then one contiguous
 * run whose starts and ends both ascend, which the viewer binary-searches.
 *
 * Frames follow `strobe report` exactly: when the capture has pass
 * operations (OPS entries, docs/capture-format.md), every completed
 * operation is a frame-list entry of its kind (pass, input, rebuild,
 * request) numbered by its frame id, with its window, committed flag, stage
 * table (opstages) and counters (opcounters, also plotted as series);
 * otherwise, when any thread has two FRAME marks, frame k of a thread is the
 * interval from its kth mark to the next; otherwise every top-level scope is
 * one. Without operations, top-level scopes whose category names an
 * operation kind (pass, input, rebuild, app_scope, request) are listed as
 * such operations beside the frames. The frame model (strobe/frames.h,
 * docs/frames.md), built in pass 1, gives each entry its state, threads and
 * window, each span the frame that owns it (>>frames) and the meta both
 * frame rates per series, as `strobe report` gives them; a
 * capture with neither operations nor marks is a program without frames:
 * no frame rate, and the meta's `activity` instead (each thread's top-level
 * scope time per time bucket), which the viewer draws in place of the frame
 * strip.
 *
 * Honesty: scopes still open at the end (unfinished) or whose END was lost
 * are kept apart in the `open` table with the last time they were known to
 * be open, never given a duration; values attached to a lost scope are
 * dropped rather than pinned on the next scope at that depth.
 *
 * Owns: the model's memory (one allocation per table, the meta text).
 * Must never: hold more than max_spans spans, fabricate an end, or let a
 * malformed capture read outside its tables (depth and ids are bounded by
 * the reader; every index here is checked against pass 1's counts, since a
 * live capture is built from the same bytes twice but a file could change).
 *
 * Contents: >>tables >>pass1 >>pass2 >>finish >>meta >>api
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "analyze/gpu_frames.h"
#include "strobe/capture.h"
#include "strobe/frames.h"
#include "strobe/replay.h"
#include "strobe/session.h"
#include "viewer/viewer_model.h"
#include "viewer/viewer_samples.h"

#define MAX_DEPTH 256         /* the capture format's nesting bound */
#define MAX_SITES 65536       /* site ids are 1..65535 */
#define NO_SPAN UINT32_MAX
#define MAX_OP_COUNTER_NAMES 256 /* operation counter names told apart; values of others are counted, not kept */
#define NO_WINDOW 0xffffu
#define ACTIVITY_BUCKETS 256u    /* time buckets of the activity strip (programs without frames) */
#define ACTIVITY_MAX_THREADS 64u /* lanes of it; threads past them are counted (threads_cut) */
#define MAX_TREES 64u            /* UI-tree snapshots kept in a model; later ones are counted (trees_cut) */
#define MAX_DEEP_CALLS 8192u     /* draw calls of a deep capture kept in a model; more are counted (calls_cut) */
#define MAX_ATTACHMENTS 4096u    /* attachment entries in the meta; more are counted (attachments_cut) */

/* Frame kinds: the one list. The meta's `frame_kinds` names them, in this
 * order, for the viewer (docs/viewer.md). X(ENUM, name) */
#define FRAME_KINDS(X)       \
  X(FRAME, "frame")          \
  X(PASS, "pass")            \
  X(INPUT, "input")          \
  X(REBUILD, "rebuild")      \
  X(APP_SCOPE, "app_scope")  \
  X(REQUEST, "request")      \
  X(SCOPE, "scope")
enum {
#define FK_ENUM(id, name) FK_##id,
  FRAME_KINDS(FK_ENUM)
#undef FK_ENUM
  FK_COUNT
};
static const char *const g_frame_kinds[FK_COUNT] = {
#define FK_NAME(id, name) name,
    FRAME_KINDS(FK_NAME)
#undef FK_NAME
};

/* ======================================================================
 * >>tables
 * ====================================================================== */

typedef struct coldef {
  const char *name, *type;
  size_t width;
} coldef;

static size_t align8(size_t n) { return (n + 7u) & ~(size_t)7u; }

/* Lays out `rows` rows of the given columns back to back, each column
 * starting on an 8-byte boundary so a Float64Array can view it in place. */
static int table_alloc(strobe__vtable *t, const char *name, uint32_t rows, const coldef *cols, uint32_t ncols) {
  t->name = name;
  t->rows = rows;
  t->ncols = ncols;
  size_t off = 0;
  for (uint32_t i = 0; i < ncols; i++) {
    t->cols[i] = (strobe__vcol){cols[i].name, cols[i].type, off};
    off += align8((size_t)rows * cols[i].width);
  }
  t->bytes = off;
  t->data = calloc(1, off ? off : 8);
  return t->data ? 0 : STROBE_ENOMEM;
}

#define COL(t, i, type) ((type *)(void *)((t)->data + (t)->cols[i].offset))

/* spans.frame: the frames row of the operation that owns the span (the frame model's rule,
 * docs/frames.md §Own spans), NO_SPAN for none (a span outside every operation, or a capture whose frames
 * are marks or scopes, where a frame's spans are those inside its interval). */
static const coldef SPAN_COLS[] = {{"start", "f64", 8}, {"dur", "f32", 4}, {"self", "f32", 4},
                                   {"frame", "u32", 4}, {"site", "u16", 2}, {"depth", "u8", 1}};
enum { SP_START, SP_DUR, SP_SELF, SP_FRAME, SP_SITE, SP_DEPTH, SP_NCOLS };
static const coldef VALUE_COLS[] = {{"value", "f64", 8}, {"span", "u32", 4}, {"site", "u16", 2}};
enum { VA_VALUE, VA_SPAN, VA_SITE };
static const coldef CUMUL_COLS[] = {{"count", "f64", 8}, {"total", "f64", 8}, {"min", "f64", 8}, {"max", "f64", 8},
                                    {"span", "u32", 4},  {"thread", "u32", 4}, {"site", "u16", 2}};
enum { CU_COUNT, CU_TOTAL, CU_MIN, CU_MAX, CU_SPAN, CU_THREAD, CU_SITE };
/* frames.thread and begin_thread: the thread it ended and began on; state: the frame model's
 * STROBE_FRAME_* (include/strobe/frames.h; meta.frame_states names them), all from the frame model. */
static const coldef FRAME_COLS[] = {{"start", "f64", 8},  {"dur", "f64", 8},        {"number", "f64", 8},
                                    {"id", "f64", 8},     {"thread", "u32", 4},     {"begin_thread", "u32", 4},
                                    {"window", "u16", 2}, {"kind", "u8", 1},        {"flags", "u8", 1},
                                    {"state", "u8", 1}};
enum { FR_START, FR_DUR, FR_NUMBER, FR_ID, FR_THREAD, FR_BEGIN_THREAD, FR_WINDOW, FR_KIND, FR_FLAGS, FR_STATE,
       FR_NCOLS };
/* frames.flags: what an operation entry says of itself (0 for marks and scopes); viewer/data.js FRAME_FLAG
 * names them too (CTest viewer_vocab compares). FF_REMOTE: it crossed
 * processes (a row of the handoffs table says how: >>handoffs). */
enum { FF_OP = 1, FF_COMMITTED = 2, FF_HANDED_OFF = 4, FF_APP_FRAME = 8, FF_DETAIL = 16, FF_REMOTE = 32 };
/* opstages.process and opcounters.process: an index into meta.processes, NO_PROCESS for an operation
 * that never left its process. */
#define NO_PROCESS 0xffffu
#define MAX_PROCESSES 256u /* process labels told apart; operations of others are counted (processes_cut) */
/* opstages: the frame model's stages of each operation entry (strobe_frame_stage), each under its run-time
 * parent (parent: a stage site, 0 none; parent_known 0: a capture from before run-time parents, where the
 * declared parent is all there is). */
static const coldef OPSTAGE_COLS[] = {{"total", "f64", 8},  {"min", "f64", 8},     {"max", "f64", 8},
                                      {"frame", "u32", 4},  {"count", "u32", 4},   {"site", "u16", 2},
                                      {"process", "u16", 2}, {"parent", "u16", 2}, {"parent_known", "u8", 1}};
enum { OS_TOTAL, OS_MIN, OS_MAX, OS_FRAME, OS_COUNT, OS_SITE, OS_PROCESS, OS_PARENT, OS_PARENT_KNOWN, OS_NCOLS };
static const coldef OPCOUNTER_COLS[] = {{"value", "f64", 8}, {"frame", "u32", 4}, {"name", "u16", 2}, {"process", "u16", 2}};
enum { OC_VALUE, OC_FRAME, OC_NAME, OC_PROCESS };
/* One row per operation entry that crossed processes (docs/viewer.md §Across processes), by frame. */
static const coldef HANDOFF_COLS[] = {{"handed", "f64", 8},        {"resumed", "f64", 8}, {"frame", "u32", 4},
                                      {"origin_thread", "u32", 4}, {"origin", "u16", 2},  {"finisher", "u16", 2},
                                      {"state", "u8", 1}};
enum { HO_HANDED, HO_RESUMED, HO_FRAME, HO_ORIGIN_THREAD, HO_ORIGIN, HO_FINISHER, HO_STATE };
/* Where an operation that crossed processes ran: one row per stretch on one thread (from its begin or
 * resume there to its take or end), part 1 in the origin, 2 in the finisher; by frame. */
static const coldef OPRUN_COLS[] = {{"t0", "f64", 8}, {"t1", "f64", 8}, {"frame", "u32", 4}, {"thread", "u32", 4},
                                    {"part", "u8", 1}};
enum { RU_T0, RU_T1, RU_FRAME, RU_THREAD, RU_PART };
/* One row per GPU queue span kept (docs/viewer.md §Tables): the application's frame id it was recorded in
 * (strobe/gpu.h), which names the CPU frame that submitted it; by GPU span as gpu_fill places them. */
static const coldef GPUSPAN_COLS[] = {{"frame_id", "f64", 8}, {"span", "u32", 4}};
enum { GS_FRAME_ID, GS_SPAN };
/* handoffs.state: both halves are in this capture (one entry from the origin's begin to the finisher's
 * end); the finisher's half only; the origin's half only (handed off, never resumed in this capture). */
enum { HS_JOINED = 1, HS_RESUMED = 2, HS_NOT_RESUMED = 3 };
static const coldef SAMPLE_COLS[] = {{"time", "f64", 8}, {"value", "f64", 8}, {"site", "u16", 2}};
enum { SA_TIME, SA_VALUE, SA_SITE };
static const coldef OPEN_COLS[] = {{"start", "f64", 8}, {"until", "f64", 8}, {"thread", "u32", 4},
                                   {"site", "u16", 2},  {"depth", "u8", 1},  {"reason", "u8", 1}};
enum { OP_START, OP_UNTIL, OP_THREAD, OP_SITE, OP_DEPTH, OP_REASON };
/* Element attribution (docs/recording.md §Elements): the id as two halves, since the browser's typed
 * arrays have no 64-bit integers it can compare cheaply. */
static const coldef ELEMENT_COLS[] = {{"span", "u32", 4}, {"id_lo", "u32", 4}, {"id_hi", "u32", 4}, {"type", "u16", 2}};
enum { EL_SPAN, EL_ID_LO, EL_ID_HI, EL_TYPE };
/* Why a scope is in the `open` table: the one list. The meta's
 * `open_reasons` maps each name to its code for the viewer (docs/viewer.md).
 * X(ENUM, code, name) */
#define OPEN_REASONS(X)                 \
  X(UNFINISHED, 1, "unfinished")        \
  X(LOST, 2, "lost") /* its END was lost (events dropped) */ \
  X(CUT, 3, "cut")   /* open where max_spans stopped the model */ \
  X(UNWOUND, 4, "unwound") /* its END never ran (docs/recording.md, Unwinding): until when that was found */
enum {
#define OPEN_ENUM(id, code, name) OPEN_##id = code,
  OPEN_REASONS(OPEN_ENUM)
#undef OPEN_ENUM
};

/* ======================================================================
 * >>pass1 — per-thread and per-site counts
 * ====================================================================== */

typedef struct open_scope {
  uint32_t site;
  double begin;        /* ns since the capture start */
  uint64_t values_at;  /* values table length when it began (pass 2) */
  uint64_t cumul_at;
  uint64_t elem_id;    /* its element (an ELEMENT record), when elem_type is not 0 */
  uint32_t elem_type;
} open_scope;

typedef struct vthread {
  uint32_t *cnt;       /* pass 1: spans per depth (index depth-1); pass 2: slots filled */
  uint32_t *base;      /* pass 2: first span index of each depth's bucket */
  uint32_t ndepth;     /* entries of cnt/base */
  uint32_t cur;        /* open scopes now */
  open_scope *stack;   /* pass 2: the open scopes, MAX_DEPTH entries */
  uint64_t marks;      /* FRAME marks (pass 1: count; pass 2: seen so far) */
  double last_mark;
  double last_time;    /* latest event time of this thread */
  int seen;
} vthread;

typedef struct tmp_value { /* pass 2, before compaction */
  double value;
  uint32_t span, thread;
  uint16_t site;
  uint8_t depth;           /* of the scope it is attached to (0: top level) */
  uint8_t dead;            /* that scope's END was lost */
} tmp_value;

typedef struct tmp_elem { /* pass 2: an attributed span, before sorting by span */
  uint64_t id;
  uint32_t span;
  uint16_t type;
} tmp_elem;

typedef struct tmp_cumul {
  double count, total, min, max;
  uint32_t span, thread;
  uint16_t site;
  uint8_t depth, dead;
} tmp_cumul;

typedef struct tmp_frame {
  double start, dur, number, id;
  uint32_t thread;
  uint32_t counter0;          /* operations: first row of its counters in the tmp table */
  uint32_t collector;         /* operations: the collector that numbered it */
  uint32_t counter0b;         /* joined across processes: the origin's half's counters */
  uint32_t handoff;           /* its row of b->handoffs, NO_HANDOFF when it never left its process */
  uint32_t ocollector;        /* joined: the origin's half's collector and id */
  double oid;
  uint32_t run0, nruns;       /* crossed processes: its rows of b->runs */
  uint16_t window;
  uint8_t kind, flags, ncounters;
  uint8_t ncountersb, gone; /* gone: the origin's half, joined into its finisher's entry */
} tmp_frame;
#define NO_HANDOFF UINT32_MAX

/* An operation handed to (take) or resumed from (!take) another process: OP_TAKE / OP_RESUME with
 * op->remote, joined at >>handoffs by the origin collector's random id and the operation's id there. */
typedef struct tmp_remote {
  double time, gap;           /* when (ns since the capture start); resume: since the hand-off */
  uint64_t id, origin_uid, origin_id;
  uint32_t collector, thread;
  uint16_t process, peer;     /* indexes into b->procs: this side's label and the other side's */
  uint8_t take, used;
} tmp_remote;

/* An operation record (begin, take, resume or end) on a thread: where it ran (>>handoffs). */
typedef struct tmp_opev {
  double time;
  uint64_t id;
  uint32_t collector, thread;
  uint8_t starts;             /* 1: it runs on this thread from here (begin, resume); 0: it leaves (take, end) */
} tmp_opev;

typedef struct tmp_run {
  double t0, t1;
  uint32_t thread;
  uint8_t part;
} tmp_run;

typedef struct tmp_handoff {
  double handed, resumed;     /* resumed: NAN when not resumed in this capture */
  uint32_t origin_thread;     /* the thread the origin's half ended on, NO_SPAN when not here */
  uint16_t origin, finisher;  /* process indexes; not resumed: finisher is the peer it was handed to */
  uint8_t state;
} tmp_handoff;

typedef struct tmp_counter {
  double value;
  uint16_t name;
} tmp_counter;

typedef struct site_stat {
  uint64_t count;
  double total, self, min, max;
} site_stat;

typedef struct builder {
  const strobe__vsource *src;
  uint32_t max_spans;
  double t0;                 /* capture start, ns since the epoch */
  vthread *th;
  uint32_t nth;
  /* pass 1 results */
  uint64_t stop_at;          /* records processed before the span bound was reached (UINT64_MAX: all) */
  uint64_t spans, spans_cut, n_values, n_cumul, n_samples, n_open;
  uint64_t n_gpu_spans;      /* of them, GPU queue spans (the gpuspans table) */
  uint64_t n_elements;       /* ELEMENT records kept */
  uint64_t trees_cut;        /* TREE records past MAX_TREES or past the span cut */
  uint32_t *samples_per_site;/* MAX_SITES */
  int marks_mode;            /* the frame model's source: FRAME marks (a thread marked two or more) */
  int ops_mode;              /* ... pass operations: they are the frames, and own the spans */
  uint64_t n_op_counters;    /* rows the operations' counters need (ops_mode) */
  char *opc_names[MAX_OP_COUNTER_NAMES];  /* operation counter names, in order of first appearance */
  uint32_t opc_samples[MAX_OP_COUNTER_NAMES]; /* samples per name */
  uint32_t opc_unit[MAX_OP_COUNTER_NAMES];    /* strobe_unit per name: the first an operation's counter had */
  uint32_t n_opc;
  uint64_t opc_cut;          /* counter values of names past MAX_OP_COUNTER_NAMES */
  char *windows[NO_WINDOW];  /* window ids of operations, in order of first appearance */
  uint32_t n_windows;
  uint32_t frame_thread;     /* the first thread that marks frames (or begins a scope) */
  int frame_thread_set;
  /* pass 2 */
  strobe__vmodel *m;
  tmp_value *vals;
  uint64_t nvals;
  tmp_cumul *cums;
  uint64_t ncums;
  tmp_elem *elems;
  uint64_t nelems;
  json_t *trees;             /* the UI-tree snapshots, as the meta gives them */
  strobe__vsamples vs;       /* the sampler's records (viewer_samples.h) */
  json_t *deeps;             /* deep captures (strobe/deep.h), as the meta gives them; statuses at finish */
  json_t *attachments;       /* every attachment record's description, as the meta gives them */
  uint64_t deeps_cut, attachments_cut, images_cut;
  size_t blob_bytes;         /* kept image bytes, at most STROBE__VM_MAX_BLOB_BYTES */
  uint64_t *stored;          /* resource ids whose content the capture holds; sorted at finish */
  uint64_t nstored, capstored;
  tmp_frame *frames;
  uint64_t nframes, capframes;
  tmp_remote *remotes;       /* operations handed between processes (>>handoffs) */
  uint64_t nremotes, capremotes;
  tmp_handoff *handoffs;
  uint64_t nhandoffs;
  tmp_opev *opevs;           /* every operation record, for where those that crossed processes ran */
  uint64_t nopevs, capopevs;
  tmp_run *runs;
  uint64_t nruns, capruns;
  char *procs[MAX_PROCESSES]; /* process labels of those operations, in order of first appearance */
  uint32_t n_procs;
  uint64_t procs_cut;        /* their records past MAX_PROCESSES labels: not joined, counted */
  uint64_t xp_joined, xp_resumed, xp_not_resumed; /* handoffs rows by state */
  tmp_counter *ocounters;
  uint64_t nocounters;
  uint32_t opc_first[MAX_OP_COUNTER_NAMES], opc_next[MAX_OP_COUNTER_NAMES]; /* sample runs, after the sites' */
  uint32_t *sample_next;     /* per site: next slot */
  uint32_t *sample_first;    /* per site: first slot */
  uint64_t nopen;
  site_stat *stats;          /* MAX_SITES */
  double range_lo, range_hi;
  int read_error;
  strobe_capture_totals totals;
  strobe_capture *cap;       /* pass 2's reader, open until the meta is built */
  strobe_frames *fx;         /* the frame model (include/strobe/frames.h), built in pass 1 */
  uint32_t *fx_of_row, *row_of_fx; /* frames rows to the model's frames and back (>>frames), NO_SPAN for none */
  /* GPU (docs/gpu.md): each queue lane is a thread of the model after the
   * capture's own, its spans mapped once pass 1 has read every pair. */
  strobe__gpu_data gpu;
  uint32_t nth_cpu;          /* the capture's threads: GPU lane L is thread nth_cpu + L */
  uint8_t *gpu_depth;        /* per GPU span: its depth on its lane (1-based), 0 when not kept */
  char *gpu_names[STROBE__GPU_MAX_LANES][2]; /* each lane's domain and queue, copied: pass 1's capture owned them */
} builder;

static int open_source(const strobe__vsource *s, strobe_capture **c) {
  if (s->path) return strobe_capture_open(s->path, c);
  return strobe_capture_open_memory(s->data, s->len, c);
}

static vthread *thread_at(builder *b, uint32_t index) {
  if (index >= UINT32_MAX / 2) return NULL; /* no such thread index (and the doubling below would never end) */
  if (index >= b->nth) {
    uint32_t n = b->nth ? b->nth : 8;
    while (n <= index) n *= 2;
    vthread *p = realloc(b->th, (size_t)n * sizeof *p);
    if (!p) return NULL;
    memset(p + b->nth, 0, (size_t)(n - b->nth) * sizeof *p);
    b->th = p;
    b->nth = n;
  }
  return &b->th[index];
}

static int depth_reserve(vthread *t, uint32_t depth) {
  if (depth <= t->ndepth) return 0;
  uint32_t n = t->ndepth ? t->ndepth : 8;
  while (n < depth) n *= 2;
  if (n > MAX_DEPTH) n = MAX_DEPTH;
  uint32_t *c = realloc(t->cnt, n * sizeof *c);
  if (!c) return STROBE_ENOMEM;
  memset(c + t->ndepth, 0, (n - t->ndepth) * sizeof *c);
  t->cnt = c;
  t->ndepth = n;
  return 0;
}

/* The index of an operation counter name, added if new; -1 past the bound (counted). */
static int opc_index(builder *b, const char *name, int add) {
  for (uint32_t i = 0; i < b->n_opc; i++)
    if (!strcmp(b->opc_names[i], name)) return (int)i;
  if (!add || b->n_opc == MAX_OP_COUNTER_NAMES) return -1;
  char *copy = strdup(name);
  if (!copy) return -2;
  b->opc_names[b->n_opc] = copy;
  return (int)b->n_opc++;
}

static int window_index(builder *b, const char *id) {
  for (uint32_t i = 0; i < b->n_windows; i++)
    if (!strcmp(b->windows[i], id)) return (int)i;
  if (b->n_windows == NO_WINDOW) return NO_WINDOW;
  char *copy = strdup(id);
  if (!copy) return -1;
  b->windows[b->n_windows] = copy;
  return (int)b->n_windows++;
}

/* An operation counter's name in the model: family/kind for a counter by kind. */
#define STROBE__MAX_STR_NAME 4096 /* a capture's str is at most this long (docs/capture-format.md) */
static const char *opc_name(char *buf, size_t cap, const strobe_capture_op_counter *k) {
  if (!k->kind || !k->kind[0]) return k->name;
  snprintf(buf, cap, "%s/%s", k->name, k->kind);
  return buf;
}

/* Pass 1 of a completed operation: the rows it will need. */
static int op_counted(builder *b, const strobe_capture_op *op) {
  for (uint32_t i = 0; i < op->ncounters; i++) {
    char name[2 * STROBE__MAX_STR_NAME + 2];
    int k = opc_index(b, opc_name(name, sizeof name, &op->counters[i]), 1);
    if (k == -2) return STROBE_ENOMEM;
    if (k < 0) {
      b->opc_cut++;
      continue;
    }
    b->n_op_counters++;
    if (!b->opc_unit[k] && strobe_unit_name(op->counters[i].unit)) b->opc_unit[k] = op->counters[i].unit;
    if (b->opc_samples[k] < UINT32_MAX - 1) {
      b->opc_samples[k]++;
      b->n_samples++;
    }
  }
  return 0;
}

/* >>gpu: the lanes' spans, mapped with every pair of the capture, placed at
 * depths that keep overlapping spans apart (a span that begins inside an
 * earlier one of its lane goes below it), counted into their buckets. */
static int by_gpu_begin(const void *x, const void *y) {
  const strobe__gpu_span_rec *a = *(const strobe__gpu_span_rec *const *)x, *b = *(const strobe__gpu_span_rec *const *)y;
  if (a->begin_ns != b->begin_ns) return a->begin_ns < b->begin_ns ? -1 : 1;
  return (a->end_ns < b->end_ns) - (a->end_ns > b->end_ns);
}

static int gpu_lanes(builder *b, strobe_capture *c) {
  strobe__gpu_data *g = &b->gpu;
  strobe__gpu_resolve(g, c);
  if (g->failed) return STROBE_ENOMEM;
  uint32_t ncap = strobe_capture_query_thread_count(c);
  b->nth_cpu = b->nth > ncap ? b->nth : ncap;
  b->gpu_depth = calloc((size_t)g->n_spans + 1, 1);
  const strobe__gpu_span_rec **v = malloc(((size_t)g->n_spans + 1) * sizeof *v);
  if (!b->gpu_depth || !v) {
    free(v);
    return STROBE_ENOMEM;
  }
  for (uint32_t lane = 0; lane < g->n_lanes; lane++) {
    b->gpu_names[lane][0] = strdup(g->lanes[lane].domain);
    b->gpu_names[lane][1] = strdup(g->lanes[lane].name);
    if (!b->gpu_names[lane][0] || !b->gpu_names[lane][1] || !thread_at(b, b->nth_cpu + lane)) {
      free(v);
      return STROBE_ENOMEM;
    }
    size_t n = 0;
    for (uint32_t i = 0; i < g->n_spans; i++)
      if (g->spans[i].lane == lane && isfinite(g->spans[i].begin_ns)) v[n++] = &g->spans[i];
    qsort(v, n, sizeof *v, by_gpu_begin);
    double ends[MAX_DEPTH];
    uint32_t open = 0;
    for (size_t i = 0; i < n; i++) {
      while (open && ends[open - 1] <= v[i]->begin_ns) open--;
      if (open == MAX_DEPTH || b->spans >= b->max_spans) {
        b->spans_cut++;
        continue;
      }
      ends[open++] = v[i]->end_ns;
      vthread *t = &b->th[b->nth_cpu + lane];
      if (depth_reserve(t, open)) {
        free(v);
        return STROBE_ENOMEM;
      }
      t->cnt[open - 1]++;
      b->spans++;
      b->n_gpu_spans += !v[i]->producer;
      b->gpu_depth[v[i] - g->spans] = (uint8_t)open;
    }
  }
  free(v);
  return 0;
}

static void touch_range(builder *b, double lo, double hi);
static void site_stat_add(builder *b, const strobe_capture_record *r);

/* Pass 2's GPU spans, into the buckets gpu_lanes counted. */
static void gpu_fill(builder *b) {
  const strobe__gpu_data *g = &b->gpu;
  strobe__vtable *sp = &b->m->tables[STROBE__VT_SPANS], *gs = &b->m->tables[STROBE__VT_GPUSPANS];
  uint32_t ngs = 0;
  for (uint32_t i = 0; b->gpu_depth && i < g->n_spans; i++) {
    uint32_t d = b->gpu_depth[i];
    const strobe__gpu_span_rec *s = &g->spans[i];
    if (!d || b->nth_cpu + s->lane >= b->nth) continue;
    vthread *t = &b->th[b->nth_cpu + s->lane];
    if (d > t->ndepth || t->cnt[d - 1] >= t->base[d] - t->base[d - 1]) continue;
    uint32_t k = t->base[d - 1] + t->cnt[d - 1]++;
    double begin = s->begin_ns - b->t0, dur = s->end_ns - s->begin_ns;
    if (!isfinite(begin)) begin = 0;
    if (!isfinite(dur) || dur < 0) dur = 0;
    COL(sp, SP_START, double)[k] = begin;
    COL(sp, SP_DUR, float)[k] = (float)dur;
    COL(sp, SP_SELF, float)[k] = (float)dur;
    COL(sp, SP_SITE, uint16_t)[k] = (uint16_t)s->site;
    COL(sp, SP_DEPTH, uint8_t)[k] = (uint8_t)(d - 1);
    COL(sp, SP_FRAME, uint32_t)[k] = NO_SPAN; /* a GPU queue's work is no thread's operation */
    if (!s->producer && ngs < gs->rows) { /* but it names the frame that submitted it */
      COL(gs, GS_FRAME_ID, double)[ngs] = (double)s->frame_id;
      COL(gs, GS_SPAN, uint32_t)[ngs++] = k;
    }
    touch_range(b, begin, begin + dur);
    strobe_capture_record r = {.site = s->site, .duration_ns = dur, .self_ns = dur};
    site_stat_add(b, &r);
  }
  gs->rows = ngs; /* a span its bucket could not take (a file that changed between the passes) has no row */
}

/* Pass 1's count of one kept record on thread t (not a site, thread, device
 * entry or sample): spans per (thread, depth), scopes left open, values,
 * samples per site, frame marks, operations. The span bound is reached at
 * the END that would pass it: b->stop_at is then nrec - 1, the number of
 * records kept. Returns 0 or STROBE_ENOMEM. */
static int count_record(builder *b, vthread *t, const strobe_capture_record *r, uint64_t nrec,
                        int *first_begin_thread) {
  switch (r->type) {
    case STROBE_REC_BEGIN:
      if (*first_begin_thread < 0) *first_begin_thread = (int)r->thread;
      t->cur = r->depth;
      break;
    case STROBE_REC_END:
      if (r->unwound) { /* no duration: an `open` row, never a span */
        b->n_open++;
        t->cur = r->depth - 1;
        break;
      }
      if (b->spans >= b->max_spans) {
        b->stop_at = nrec - 1; /* this END and everything after it are not kept */
        b->spans_cut++;
        break;
      }
      if (depth_reserve(t, r->depth)) return STROBE_ENOMEM;
      t->cnt[r->depth - 1]++;
      b->spans++;
      t->cur = r->depth - 1;
      break;
    case STROBE_REC_VALUE: b->n_values++; break;
    case STROBE_REC_ELEMENT: b->n_elements++; break;
    case STROBE_REC_CUMULATIVE: b->n_cumul++; break;
    case STROBE_REC_COUNTER:
    case STROBE_REC_GAUGE:
      if (r->site < MAX_SITES && b->samples_per_site[r->site] < UINT32_MAX - 1) {
        b->samples_per_site[r->site]++;
        b->n_samples++;
      }
      break;
    case STROBE_REC_FRAME:
      t->marks++;
      if (!b->frame_thread_set) {
        b->frame_thread = r->thread;
        b->frame_thread_set = 1;
      }
      break;
    case STROBE_REC_LOST:
      if (t->cur > r->depth) {
        b->n_open += t->cur - r->depth;
        t->cur = (uint32_t)r->depth;
      }
      break;
    case STROBE_REC_THREAD_END:
      b->n_open += t->cur;
      t->cur = 0;
      break;
    case STROBE_REC_OP_END:
      if (op_counted(b, r->op)) return STROBE_ENOMEM;
      break;
    default: break;
  }
  return 0;
}

static int pass1(builder *b) {
  strobe_capture *c = NULL;
  int rc = open_source(b->src, &c);
  if (rc) return rc;
  b->t0 = strobe_capture_ticks_to_ns(c, strobe_capture_query_header(c)->start_ticks);
  strobe_capture_record r;
  uint64_t nrec = 0;
  b->stop_at = UINT64_MAX;
  int first_begin_thread = -1;
  while ((rc = strobe_capture_next(c, &r)) > 0) {
    if (strobe_frames_add(b->fx, c, &r)) goto oom; /* every record: frames are whole even past the span bound */
    if (b->stop_at != UINT64_MAX) { /* over the bound: only count what is cut */
      if (r.type == STROBE_REC_END && !r.unwound) b->spans_cut++; /* unwound ones are no spans (totals count them) */
      if (r.type == STROBE_REC_TREE) b->trees_cut++;
      if (r.type == STROBE_REC_DEEP) b->deeps_cut++;
      continue;
    }
    nrec++;
    if (r.type == STROBE_REC_SITE || r.type == STROBE_REC_THREAD) continue;
    if (r.device) { /* kept whole, mapped at the end of the pass (gpu_lanes) */
      strobe__gpu_record(&b->gpu, &r);
      continue;
    }
    if (r.sample) continue; /* by OS thread, maybe none of the capture's: pass 2 (samples_record) */
    vthread *t = thread_at(b, r.thread);
    if (!t || count_record(b, t, &r, nrec, &first_begin_thread)) goto oom;
  }
  if (rc < 0 && nrec == 0) { /* nothing readable at all: an error, not an empty model */
    strobe_capture_close(c);
    return rc;
  }
  b->read_error = rc < 0 ? rc : 0;
  b->totals = strobe_capture_query_totals(c); /* over the whole capture, kept or cut */
  for (uint32_t i = 0; i < b->nth; i++) {
    b->n_open += b->th[i].cur; /* still open at the end */
  }
  if (!b->frame_thread_set && first_begin_thread >= 0) {
    b->frame_thread = (uint32_t)first_begin_thread;
    b->frame_thread_set = 1;
  }
  if (strobe__gpu_lanes_present(&b->gpu) && gpu_lanes(b, c)) goto oom;
  if (strobe_frames_finish(b->fx, c)) goto oom;
  /* Which frames the capture has is the frame model's to say (docs/frames.md §Which frames). */
  b->ops_mode = strobe_frames_query_source(b->fx) == STROBE_FRAME_SOURCE_PASSES;
  b->marks_mode = strobe_frames_query_source(b->fx) == STROBE_FRAME_SOURCE_MARKS;
  strobe_capture_close(c);
  return 0;
oom:
  strobe_capture_close(c);
  return STROBE_ENOMEM;
}

/* ======================================================================
 * >>pass2 — fill the tables
 * ====================================================================== */

static tmp_frame *frame_push(builder *b, double start, double dur, uint32_t thread, uint64_t number, int kind) {
  if (b->nframes == b->capframes) {
    uint64_t cap = b->capframes ? b->capframes * 2 : 256;
    tmp_frame *p = realloc(b->frames, cap * sizeof *p);
    if (!p) return NULL;
    b->frames = p;
    b->capframes = cap;
  }
  tmp_frame *f = &b->frames[b->nframes++];
  *f = (tmp_frame){.start = start, .dur = dur, .number = (double)number, .thread = thread, .handoff = NO_HANDOFF,
                   .window = NO_WINDOW, .kind = (uint8_t)kind};
  return f;
}

static int op_kind(const char *category) {
  if (!category || !category[0]) return -1;
  if (!strcmp(category, "pass") || !strcmp(category, "frame")) return FK_PASS;
  if (!strcmp(category, "input")) return FK_INPUT;
  if (!strcmp(category, "rebuild")) return FK_REBUILD;
  if (!strcmp(category, "app_scope") || !strcmp(category, "app")) return FK_APP_SCOPE;
  if (!strcmp(category, "request")) return FK_REQUEST;
  return -1;
}

static void touch_range(builder *b, double lo, double hi) {
  if (lo < b->range_lo) b->range_lo = lo;
  if (hi > b->range_hi) b->range_hi = hi;
}

/* A completed operation (ops_mode): a frame-list entry with its stages and counters. */
static int op_frame(builder *b, const strobe_capture_record *r, double now) {
  const strobe_capture_op *op = r->op;
  double dur = isfinite(op->duration_ns) && op->duration_ns > 0 ? op->duration_ns : 0;
  int kind = op_kind(strobe_op_kind_name(op->kind));
  tmp_frame *f = frame_push(b, now - dur, dur, r->thread, op->kind == STROBE_OP_PASS ? op->frame_id : op->id,
                            kind < 0 ? FK_SCOPE : kind);
  int w = window_index(b, op->window);
  if (!f || w < 0) return STROBE_ENOMEM;
  f->window = (uint16_t)w;
  f->id = (double)op->id;
  f->collector = op->collector;
  f->flags = (uint8_t)(FF_OP | (op->committed ? FF_COMMITTED : 0) | (op->handed_off ? FF_HANDED_OFF : 0) |
                       (op->app_frame_id ? FF_APP_FRAME : 0) | (op->detail ? FF_DETAIL : 0));
  f->counter0 = (uint32_t)b->nocounters;
  strobe__vtable *sa = &b->m->tables[STROBE__VT_SAMPLES];
  for (uint32_t i = 0; i < op->ncounters; i++) {
    char name[2 * STROBE__MAX_STR_NAME + 2];
    int k = opc_index(b, opc_name(name, sizeof name, &op->counters[i]), 0);
    if (k < 0 || b->nocounters >= b->n_op_counters) continue;
    b->ocounters[b->nocounters++] = (tmp_counter){op->counters[i].value, (uint16_t)k};
    f->ncounters++;
    if (b->opc_next[k] < b->opc_first[k] + b->opc_samples[k]) {
      uint32_t j = b->opc_next[k]++;
      COL(sa, SA_TIME, double)[j] = now;
      COL(sa, SA_VALUE, double)[j] = op->counters[i].value;
      COL(sa, SA_SITE, uint16_t)[j] = 0;
    }
  }
  touch_range(b, now - dur, now);
  return 0;
}

/* The index of a process label, added if new; NO_PROCESS past MAX_PROCESSES (the caller counts it). */
static int proc_index(builder *b, const char *label, uint16_t *out) {
  *out = NO_PROCESS;
  if (!label) label = "";
  for (uint32_t i = 0; i < b->n_procs; i++)
    if (!strcmp(b->procs[i], label)) return (void)(*out = (uint16_t)i), 0;
  if (b->n_procs == MAX_PROCESSES) return 0;
  if (!(b->procs[b->n_procs] = strdup(label))) return STROBE_ENOMEM;
  *out = (uint16_t)b->n_procs++;
  return 0;
}

/* An operation handed to, or resumed from, another process: kept for >>handoffs. */
static int remote_push(builder *b, const strobe_capture_record *r, double now) {
  const strobe_capture_op *op = r->op;
  tmp_remote x = {.time = now, .gap = isfinite(op->gap_ns) ? op->gap_ns : 0, .id = op->id,
                  .origin_uid = op->origin_collector, .origin_id = op->origin_id, .collector = op->collector,
                  .thread = r->thread, .take = r->type == STROBE_REC_OP_TAKE};
  if (proc_index(b, op->process, &x.process) || proc_index(b, op->peer, &x.peer)) return STROBE_ENOMEM;
  if (x.process == NO_PROCESS || x.peer == NO_PROCESS) {
    b->procs_cut++; /* not joined: its entries stay as they were, counted */
    return 0;
  }
  if (b->nremotes == b->capremotes) {
    uint64_t cap = b->capremotes ? b->capremotes * 2 : 64;
    tmp_remote *p = realloc(b->remotes, cap * sizeof *p);
    if (!p) return STROBE_ENOMEM;
    b->remotes = p;
    b->capremotes = cap;
  }
  b->remotes[b->nremotes++] = x;
  return 0;
}

/* An operation record, for where it ran (>>handoffs). */
static int opev_push(builder *b, const strobe_capture_record *r, double now) {
  if (b->nopevs == b->capopevs) {
    uint64_t cap = b->capopevs ? b->capopevs * 2 : 256;
    tmp_opev *p = realloc(b->opevs, cap * sizeof *p);
    if (!p) return STROBE_ENOMEM;
    b->opevs = p;
    b->capopevs = cap;
  }
  b->opevs[b->nopevs++] = (tmp_opev){now, r->op->id, r->op->collector, r->thread,
                                     r->type == STROBE_REC_OP_BEGIN || r->type == STROBE_REC_OP_RESUME};
  return 0;
}

/* Scopes deeper than `depth` on thread t stop being open (lost, or
 * unfinished at thread end / end of file): into the open table, and the
 * values and loop statistics they carried are dropped. */
static void close_open(builder *b, vthread *t, uint32_t index, uint32_t depth, double until, int reason) {
  strobe__vtable *ot = &b->m->tables[STROBE__VT_OPEN];
  while (t->cur > depth) {
    uint32_t d = t->cur--;
    const open_scope *o = &t->stack[d - 1];
    for (uint64_t i = o->values_at; i < b->nvals; i++)
      if (b->vals[i].thread == index && b->vals[i].depth >= d) b->vals[i].dead = 1;
    for (uint64_t i = o->cumul_at; i < b->ncums; i++)
      if (b->cums[i].thread == index && b->cums[i].depth >= d) b->cums[i].dead = 1;
    if (b->nopen >= ot->rows) continue;
    uint64_t k = b->nopen++;
    COL(ot, OP_START, double)[k] = o->begin;
    COL(ot, OP_UNTIL, double)[k] = until;
    COL(ot, OP_THREAD, uint32_t)[k] = index;
    COL(ot, OP_SITE, uint16_t)[k] = (uint16_t)o->site;
    COL(ot, OP_DEPTH, uint8_t)[k] = (uint8_t)(d - 1);
    COL(ot, OP_REASON, uint8_t)[k] = (uint8_t)reason;
    touch_range(b, o->begin, until);
  }
}

/* The span slot a scope at `depth` of thread t will fill when it ends. */
static uint32_t slot_of(const vthread *t, uint32_t depth) {
  if (depth == 0 || depth > t->ndepth) return NO_SPAN;
  return t->base[depth - 1] + t->cnt[depth - 1];
}

/* A record's times as ns since the capture start, made safe to store: a
 * hostile header (ns per tick NaN or infinite) or a clock that ran
 * backwards must not put NaN or negative durations in the tables. */
static double record_now(const builder *b, strobe_capture_record *r) {
  double now = r->time_ns - b->t0;
  if (!isfinite(now)) now = 0;
  if (!isfinite(r->duration_ns) || r->duration_ns < 0) r->duration_ns = 0;
  if (!isfinite(r->self_ns) || r->self_ns < 0) r->self_ns = 0;
  if (r->self_ns > r->duration_ns) r->self_ns = r->duration_ns;
  return now;
}

/* A scope opens: remembered on its thread's stack, with where the side
 * tables stood, so a loss can drop what it carried. */
static int fill_begin(builder *b, vthread *t, const strobe_capture_record *r, double now) {
  if (r->depth < 1 || r->depth > MAX_DEPTH) return 0;
  if (!t->stack && !(t->stack = calloc(MAX_DEPTH, sizeof *t->stack))) return STROBE_ENOMEM; /* 8 KiB per scoping thread */
  t->stack[r->depth - 1] = (open_scope){r->site, now, b->nvals, b->ncums, 0, 0};
  t->cur = r->depth;
  return 0;
}

/* The scope's site statistics (count, total, self, min, max). */
static void site_stat_add(builder *b, const strobe_capture_record *r) {
  site_stat *st = &b->stats[r->site < MAX_SITES ? r->site : 0];
  if (st->count == 0 || r->duration_ns < st->min) st->min = r->duration_ns;
  if (st->count == 0 || r->duration_ns > st->max) st->max = r->duration_ns;
  st->count++;
  st->total += r->duration_ns;
  st->self += r->self_ns;
}

/* A scope ends: the next slot of its (thread, depth) bucket, its site's
 * statistics, and for a top-level scope a frame or an operation entry. */
static int fill_end(builder *b, const strobe_capture *c, vthread *t, const strobe_capture_record *r, double now) {
  t->cur = r->depth - 1;
  if (r->depth > t->ndepth || t->cnt[r->depth - 1] >= t->base[r->depth] - t->base[r->depth - 1]) return 0;
  strobe__vtable *sp = &b->m->tables[STROBE__VT_SPANS];
  uint32_t i = t->base[r->depth - 1] + t->cnt[r->depth - 1]++;
  double begin = now - r->duration_ns;
  COL(sp, SP_START, double)[i] = begin;
  COL(sp, SP_DUR, float)[i] = (float)r->duration_ns;
  COL(sp, SP_SELF, float)[i] = (float)r->self_ns;
  COL(sp, SP_SITE, uint16_t)[i] = (uint16_t)r->site;
  COL(sp, SP_DEPTH, uint8_t)[i] = (uint8_t)(r->depth - 1);
  /* the model's index for now; >>frames turns it into the frames row */
  COL(sp, SP_FRAME, uint32_t)[i] = b->ops_mode ? strobe_frames_owner(b->fx, r->thread, r->time_ns - r->duration_ns)
                                             : STROBE_FRAMES_NONE;
  const open_scope *o = t->stack ? &t->stack[r->depth - 1] : NULL;
  if (o && o->elem_type && b->nelems < b->n_elements)
    b->elems[b->nelems++] = (tmp_elem){o->elem_id, i, (uint16_t)o->elem_type};
  touch_range(b, begin, now);
  site_stat_add(b, r);
  if (r->depth != 1 || b->ops_mode) return 0; /* with operations, they are the frames */
  const strobe_capture_site *site = strobe_capture_query_site(c, r->site);
  int k = op_kind(site ? site->category : NULL);
  if (k < 0 && !b->marks_mode) k = FK_SCOPE;
  return k >= 0 && !frame_push(b, begin, r->duration_ns, r->thread, 0, k) ? STROBE_ENOMEM : 0;
}

/* A VALUE or CUMULATIVE record: kept aside, naming the span its scope will
 * fill, until >>finish drops the dead ones and sorts by span. */
static void fill_number(builder *b, const vthread *t, const strobe_capture_record *r) {
  uint32_t span = slot_of(t, r->depth);
  if (r->type == STROBE_REC_VALUE) {
    if (r->depth == 0 || span == NO_SPAN || b->nvals >= b->n_values) return;
    b->vals[b->nvals++] = (tmp_value){r->value, span, r->thread, (uint16_t)r->site, (uint8_t)r->depth, 0};
  } else {
    if (b->ncums >= b->n_cumul) return;
    b->cums[b->ncums++] = (tmp_cumul){(double)r->count, r->total_ns, r->min_ns, r->max_ns, span, r->thread,
                                       (uint16_t)r->site, (uint8_t)(r->depth > 255 ? 255 : r->depth), 0};
  }
}

/* A COUNTER or GAUGE record: the next slot of its site's run. */
static void fill_sample(builder *b, const strobe_capture_record *r, double now) {
  if (r->site >= MAX_SITES || b->sample_next[r->site] >= b->sample_first[r->site] + b->samples_per_site[r->site])
    return;
  strobe__vtable *sa = &b->m->tables[STROBE__VT_SAMPLES];
  uint32_t k = b->sample_next[r->site]++;
  COL(sa, SA_TIME, double)[k] = now;
  COL(sa, SA_VALUE, double)[k] = r->value; /* counters: the delta until >>finish sums them */
  COL(sa, SA_SITE, uint16_t)[k] = (uint16_t)r->site;
  touch_range(b, now, now);
}

/* A FRAME mark: in marks mode (and without operations), the interval since
 * the thread's previous mark is a frame. */
static int fill_mark(builder *b, vthread *t, const strobe_capture_record *r, double now) {
  if (b->marks_mode && !b->ops_mode && t->marks > 0 &&
      !frame_push(b, t->last_mark, now - t->last_mark, r->thread, t->marks, FK_FRAME))
    return STROBE_ENOMEM;
  t->marks++;
  t->last_mark = now;
  touch_range(b, now, now);
  return 0;
}

/* A UI-tree snapshot (strobe/tree.h): into the meta as it is, nodes in
 * preorder as [depth, type site, id (16 hex digits), x, y, width, height,
 * {property: value}]; the browser rebuilds the tree (docs/viewer.md). */
static int fill_tree(builder *b, const strobe_capture_record *r, double now) {
  if (json_array_size(b->trees) >= MAX_TREES) {
    b->trees_cut++;
    return 0;
  }
  const strobe_capture_tree *t = r->tree;
  json_t *nodes = json_array();
  for (uint32_t i = 0; nodes && i < t->nnodes; i++) {
    const strobe_capture_tree_node *n = &t->nodes[i];
    char id[24];
    snprintf(id, sizeof id, "%016llx", (unsigned long long)n->id);
    json_t *props = json_object();
    for (uint32_t k = 0; props && k < n->nprops; k++)
      json_object_set_new(props, n->props[k].name, isfinite(n->props[k].value) ? json_real(n->props[k].value) : json_null());
    json_t *row = json_pack("[i,i,s,f,f,f,f,o]", (int)n->depth, (int)n->type, id, isfinite(n->x) ? (double)n->x : 0.0,
                            isfinite(n->y) ? (double)n->y : 0.0, isfinite(n->width) ? (double)n->width : 0.0,
                            isfinite(n->height) ? (double)n->height : 0.0, props ? props : json_object());
    if (!row || json_array_append_new(nodes, row)) {
      json_decref(nodes);
      return STROBE_ENOMEM;
    }
  }
  json_t *o = nodes ? json_pack("{s:I,s:f,s:I,s:I,s:i,s:o}", "seq", (json_int_t)t->seq, "time", now, "nodes_dropped",
                                (json_int_t)t->nodes_dropped, "props_dropped", (json_int_t)t->props_dropped, "origin",
                                (int)r->origin, "nodes", nodes)
                    : NULL;
  if (!o || json_array_append_new(b->trees, o)) return STROBE_ENOMEM;
  touch_range(b, now, now);
  return 0;
}

/* >>content: attachments and deep captures (docs/viewer.md §Deep capture).
 * An attachment's description goes into the meta; a PNG's bytes are kept
 * for the thumbnail (bounded); a deep capture's calls go into the meta as
 * [seq, kind, pipeline, pass, vertex_first, vertex_count, instance_first,
 * instance_count, bounds|null, clip|null, [[resource, role]...], status],
 * the status set at finish, when every stored content is known. */
static int fill_attachment(builder *b, const strobe_capture_record *r, double now) {
  const strobe_capture_attachment *a = r->attachment;
  if (a->state == STROBE_CAPTURE_ATTACH_STORED) {
    if (b->nstored == b->capstored) {
      uint64_t cap = b->capstored ? b->capstored * 2 : 64;
      uint64_t *p = realloc(b->stored, cap * sizeof *p);
      if (!p) return STROBE_ENOMEM;
      b->stored = p;
      b->capstored = cap;
    }
    b->stored[b->nstored++] = a->resource;
  }
  if (json_array_size(b->attachments) >= MAX_ATTACHMENTS) {
    b->attachments_cut++;
    return 0;
  }
  json_t *image = json_null();
  if (a->bytes && !strcmp(a->media_type, "image/png")) {
    strobe__vmodel *m = b->m;
    if (m->nblobs < STROBE__VM_MAX_BLOBS && b->blob_bytes + a->size <= STROBE__VM_MAX_BLOB_BYTES) {
      strobe__vblob *x = &m->blobs[m->nblobs];
      x->data = malloc((size_t)a->size);
      if (!x->data) return STROBE_ENOMEM;
      memcpy(x->data, a->bytes, (size_t)a->size);
      x->len = (size_t)a->size;
      snprintf(x->media_type, sizeof x->media_type, "%s", a->media_type);
      b->blob_bytes += x->len;
      image = json_integer(m->nblobs++);
    } else {
      b->images_cut++;
    }
  }
  char id[24];
  snprintf(id, sizeof id, "%016llx", (unsigned long long)a->resource);
  static const char *const states[] = {"stored", "earlier", "cut"};
  json_t *o = json_pack("{s:I,s:s,s:f,s:s,s:i,s:i,s:I,s:s,s:o,s:i}", "frame", (json_int_t)a->frame, "resource", id,
                        "time", now, "media_type", a->media_type, "width", (int)a->width, "height", (int)a->height,
                        "bytes", (json_int_t)a->size, "state", states[a->state], "image", image, "origin", (int)r->origin);
  if (!o || json_array_append_new(b->attachments, o)) return STROBE_ENOMEM;
  return 0;
}

static int fill_deep(builder *b, const strobe_capture_record *r, double now) {
  const strobe_capture_deep *d = r->deep;
  if (json_array_size(b->deeps) >= STROBE_DEEP_MAX_FRAMES) {
    b->deeps_cut++;
    return 0;
  }
  uint32_t keep = d->ncalls < MAX_DEEP_CALLS ? d->ncalls : MAX_DEEP_CALLS;
  json_t *calls = json_array();
  for (uint32_t i = 0; calls && i < keep; i++) {
    const strobe_capture_draw_call *c = &d->calls[i];
    json_t *refs = json_array();
    for (uint32_t k = 0; refs && k < c->nrefs; k++) {
      char id[24];
      snprintf(id, sizeof id, "%016llx", (unsigned long long)c->refs[k].resource);
      json_array_append_new(refs, json_pack("[s,i]", id, (int)c->refs[k].role));
    }
    json_t *bounds = c->has_geometry ? json_pack("[f,f,f,f]", (double)c->bounds[0], (double)c->bounds[1],
                                                 (double)c->bounds[2], (double)c->bounds[3])
                                     : json_null();
    json_t *clip = c->has_geometry ? json_pack("[f,f,f,f]", (double)c->clip[0], (double)c->clip[1], (double)c->clip[2],
                                               (double)c->clip[3])
                                   : json_null();
    json_t *row = refs && bounds && clip
                      ? json_pack("[i,s,s,s,i,i,i,i,o,o,o,s]", (int)c->seq, c->kind, c->pipeline, c->pass,
                                  (int)c->vertex_first, (int)c->vertex_count, (int)c->instance_first,
                                  (int)c->instance_count, bounds, clip, refs, "")
                      : NULL;
    if (!row || json_array_append_new(calls, row)) {
      json_decref(calls);
      return STROBE_ENOMEM;
    }
  }
  json_t *o = calls ? json_pack("{s:I,s:I,s:f,s:I,s:I,s:i,s:o}", "frame", (json_int_t)d->frame, "seq",
                                (json_int_t)d->seq, "time", now, "calls_dropped", (json_int_t)d->calls_dropped,
                                "calls_cut", (json_int_t)(d->ncalls - keep), "origin", (int)r->origin, "calls", calls)
                    : NULL;
  if (!o || json_array_append_new(b->deeps, o)) return STROBE_ENOMEM;
  touch_range(b, now, now);
  return 0;
}

static int cmp_u64(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, c = *(const uint64_t *)y;
  return (a > c) - (a < c);
}

typedef struct stored_set {
  const uint64_t *ids;
  uint64_t n;
} stored_set;

static int is_stored(void *ctx, uint64_t id) {
  const stored_set *s = ctx;
  return bsearch(&id, s->ids, (size_t)s->n, sizeof id, cmp_u64) != NULL;
}

/* Every kept call's replay status (strobe/replay.h), from the contents the
 * capture holds; kinds are the renderer's backend's to judge, not checked. */
static int deep_statuses(builder *b) {
  if (b->nstored) qsort(b->stored, (size_t)b->nstored, sizeof *b->stored, cmp_u64);
  stored_set set = {b->stored, b->nstored};
  size_t i;
  json_t *d;
  json_array_foreach(b->deeps, i, d) {
    size_t k;
    json_t *row;
    json_array_foreach(json_object_get(d, "calls"), k, row) {
      json_t *jr = json_array_get(row, 10);
      strobe_draw_ref refs[STROBE_DEEP_MAX_REFS];
      strobe_capture_draw_call c = {0};
      c.has_geometry = !json_is_null(json_array_get(row, 8));
      c.nrefs = (uint32_t)json_array_size(jr);
      if (c.nrefs > STROBE_DEEP_MAX_REFS) c.nrefs = STROBE_DEEP_MAX_REFS;
      for (uint32_t j = 0; j < c.nrefs; j++) {
        json_t *ref = json_array_get(jr, j);
        refs[j].resource = strtoull(json_string_value(json_array_get(ref, 0)), NULL, 16);
        refs[j].role = (uint32_t)json_integer_value(json_array_get(ref, 1));
      }
      c.refs = refs;
      c.kind = "";
      strobe_replay_status st = strobe_replay_check_call(&c, is_stored, &set, NULL);
      if (json_array_set_new(row, 11, json_string(strobe_replay_status_name(st)))) return STROBE_ENOMEM;
    }
  }
  return 0;
}

/* One record of pass 2 into the tables. */
static int fill_record(builder *b, const strobe_capture *c, strobe_capture_record *r) {
  /* Attachments and deep captures belong to the capture, not a thread. */
  if (r->type == STROBE_REC_ATTACHMENT) return fill_attachment(b, r, record_now(b, r));
  if (r->type == STROBE_REC_DEEP) return fill_deep(b, r, record_now(b, r));
  vthread *t = &b->th[r->thread];
  double now = record_now(b, r);
  /* Values, loop statistics and elements belong to the open scope and carry no time of their own (an element's
   * time is no time): they never move the thread's last time, where a scope cut open is said to end. */
  if (r->type != STROBE_REC_VALUE && r->type != STROBE_REC_CUMULATIVE && r->type != STROBE_REC_ELEMENT && now > t->last_time)
    t->last_time = now;
  switch (r->type) {
    case STROBE_REC_BEGIN: return fill_begin(b, t, r, now);
    case STROBE_REC_END:
      if (!r->unwound) return fill_end(b, c, t, r, now);
      if (t->stack && r->depth >= 1) close_open(b, t, r->thread, (uint32_t)r->depth - 1, now, OPEN_UNWOUND);
      return 0;
    case STROBE_REC_VALUE:
    case STROBE_REC_CUMULATIVE: fill_number(b, t, r); return 0;
    case STROBE_REC_COUNTER:
    case STROBE_REC_GAUGE: fill_sample(b, r, now); return 0;
    case STROBE_REC_FRAME: return fill_mark(b, t, r, now);
    case STROBE_REC_LOST:
      if (t->stack) close_open(b, t, r->thread, (uint32_t)r->depth, now, OPEN_LOST);
      return 0;
    case STROBE_REC_THREAD_END:
      if (t->stack) close_open(b, t, r->thread, 0, t->last_time, OPEN_UNFINISHED);
      return 0;
    case STROBE_REC_OP_END: return b->ops_mode ? opev_push(b, r, now) || op_frame(b, r, now) : 0;
    case STROBE_REC_OP_BEGIN: return b->ops_mode ? opev_push(b, r, now) : 0;
    case STROBE_REC_OP_TAKE:
    case STROBE_REC_OP_RESUME:
      if (!b->ops_mode) return 0;
      if (opev_push(b, r, now)) return STROBE_ENOMEM;
      return r->op->remote ? remote_push(b, r, now) : 0;
    case STROBE_REC_ELEMENT: /* the open scope's element: kept with the span its END fills */
      if (t->stack && r->depth >= 1 && r->depth <= MAX_DEPTH) {
        t->stack[r->depth - 1].elem_type = r->site;
        t->stack[r->depth - 1].elem_id = r->element;
      }
      return 0;
    case STROBE_REC_TREE: return fill_tree(b, r, now);
    default: return 0;
  }
}

/* Reads the capture again up to pass 1's stop, filling the tables; scopes
 * still open at the end (or at the cut) go to the open table. */
static int pass2(builder *b) {
  strobe_capture *c = NULL;
  int rc = open_source(b->src, &c);
  if (rc) return rc;
  strobe_capture_record r;
  uint64_t nrec = 0;
  while ((rc = strobe_capture_next(c, &r)) > 0 && nrec < b->stop_at) {
    nrec++;
    if (r.sample) { /* by OS thread, which may be none of the capture's threads */
      strobe__vsamples_add(&b->vs, &r, record_now(b, &r));
      if (b->vs.failed) {
        strobe_capture_close(c);
        return STROBE_ENOMEM;
      }
      continue;
    }
    if (r.type == STROBE_REC_SITE || r.type == STROBE_REC_THREAD || r.thread >= b->nth) continue;
    int err = fill_record(b, c, &r);
    if (err) {
      strobe_capture_close(c);
      return err;
    }
  }
  for (uint32_t i = 0; i < b->nth; i++)
    if (b->th[i].stack)
      close_open(b, &b->th[i], i, 0, b->th[i].last_time, b->stop_at == UINT64_MAX ? OPEN_UNFINISHED : OPEN_CUT);
  gpu_fill(b);
  b->cap = c; /* kept open: its site and thread tables name things in the meta */
  return 0;
}

/* ======================================================================
 * >>finish — compact the side tables, sort what needs sorting
 * ====================================================================== */

static int by_span(const void *x, const void *y) {
  const tmp_value *a = x, *b = y;
  return a->span < b->span ? -1 : a->span > b->span;
}
static int cumul_by_span(const void *x, const void *y) {
  const tmp_cumul *a = x, *b = y;
  if (a->span != b->span) return a->span < b->span ? -1 : 1;
  return a->thread < b->thread ? -1 : a->thread > b->thread;
}
static int frame_by_start(const void *x, const void *y) {
  const tmp_frame *a = x, *b = y;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  return a->kind < b->kind ? -1 : a->kind > b->kind;
}

typedef struct sample_pair {
  double t, v;
} sample_pair;
static int by_time(const void *x, const void *y) {
  const sample_pair *a = x, *b = y;
  return a->t < b->t ? -1 : a->t > b->t;
}

/* A row is in start order unless the capture's clock went backwards (a
 * hostile or broken file: the reader accepts negative deltas). Such a row is
 * sorted here, and the values and loop records that name its spans follow,
 * so the browser's binary searches hold for every model. Each key carries
 * its own start, so the comparator needs no context: two models built at
 * once (two servers, a live view beside a file view) share nothing. */
typedef struct start_key {
  double start;
  uint32_t index; /* span row; ties keep stream order */
} start_key;
static int by_start_key(const void *x, const void *y) {
  const start_key *a = x, *b = y;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index;
}

static int sort_rows(builder *b) {
  strobe__vtable *sp = &b->m->tables[STROBE__VT_SPANS];
  double *start = COL(sp, SP_START, double);
  uint32_t *remap = NULL; /* old index -> new, made when a first row needs sorting */
  int rc = 0;
  for (uint32_t t = 0; t < b->nth && !rc; t++) {
    const vthread *th = &b->th[t];
    for (uint32_t d = 0; d < th->ndepth && !rc; d++) {
      uint32_t first = th->base[d], n = th->base[d + 1] - first, k = 1;
      while (k < n && start[first + k] >= start[first + k - 1]) k++;
      if (k >= n) continue;
      start_key *perm = malloc((size_t)n * sizeof *perm);
      unsigned char *tmp = malloc((size_t)n * 8);
      if (!remap) {
        remap = malloc((size_t)sp->rows * sizeof *remap);
        for (uint32_t i = 0; remap && i < sp->rows; i++) remap[i] = i;
      }
      if (!perm || !tmp || !remap) {
        rc = STROBE_ENOMEM;
      } else {
        for (uint32_t i = 0; i < n; i++) perm[i] = (start_key){start[first + i], first + i};
        qsort(perm, n, sizeof *perm, by_start_key);
        for (uint32_t c = 0; c < sp->ncols; c++) { /* permute each column through tmp */
          size_t w = !strcmp(sp->cols[c].type, "f64") ? 8
                   : !strcmp(sp->cols[c].type, "f32") || !strcmp(sp->cols[c].type, "u32") ? 4
                   : !strcmp(sp->cols[c].type, "u16") ? 2 : 1;
          unsigned char *col = sp->data + sp->cols[c].offset;
          for (uint32_t i = 0; i < n; i++) memcpy(tmp + (size_t)i * w, col + (size_t)perm[i].index * w, w);
          memcpy(col + (size_t)first * w, tmp, (size_t)n * w);
        }
        for (uint32_t i = 0; i < n; i++) remap[perm[i].index] = first + i;
      }
      free(perm);
      free(tmp);
    }
  }
  if (remap && !rc) {
    for (uint64_t i = 0; i < b->nvals; i++)
      if (b->vals[i].span < sp->rows) b->vals[i].span = remap[b->vals[i].span];
    for (uint64_t i = 0; i < b->ncums; i++)
      if (b->cums[i].span < sp->rows) b->cums[i].span = remap[b->cums[i].span];
    for (uint64_t i = 0; i < b->nelems; i++)
      if (b->elems[i].span < sp->rows) b->elems[i].span = remap[b->elems[i].span];
  }
  free(remap);
  return rc;
}

static int elem_by_span(const void *x, const void *y) {
  const tmp_elem *a = x, *b = y;
  return a->span < b->span ? -1 : a->span > b->span;
}

/* ======================================================================
 * >>handoffs — an operation handed between processes as one entry
 * ====================================================================== */

/* A merged capture (docs/cli.md §strobe merge) holds both halves of an operation one
 * process handed to another: the origin's END (not committed, ending at the
 * hand-off, its own stages and counters) after its REMOTE_OUT, and the
 * finisher's END (from the origin's start to its end, committed or dropped,
 * the origin's stages copied under sites of STROBE_REMOTE_STAGE_FILE beside
 * its own) after its REMOTE_IN, which names the origin collector's random id
 * and the operation's id there. They become one entry: the finisher's, its
 * counters both halves', its stages the frame model's (>>frames: both
 * processes', each where it ran), a handoffs row saying when it was handed
 * off and resumed and on which thread the origin ran; the origin's entry
 * goes. An origin's half never resumed here stays an entry of its own,
 * flagged and counted (docs/viewer.md §Across processes). */

/* Where a counter row of frame f ran: the origin's half's, or its own (NO_PROCESS: it never left its process). */
static uint16_t row_process(const builder *b, const tmp_frame *f, int origin_run) {
  if (f->handoff == NO_HANDOFF) return NO_PROCESS;
  const tmp_handoff *h = &b->handoffs[f->handoff];
  return h->state == HS_NOT_RESUMED || origin_run ? h->origin : h->finisher;
}

/* An operation entry by the collector that numbered it and its id there. */
typedef struct op_key {
  uint64_t id;
  uint32_t collector, frame;
} op_key;

static int by_op(const void *x, const void *y) {
  const op_key *a = x, *c = y;
  if (a->collector != c->collector) return a->collector < c->collector ? -1 : 1;
  return a->id < c->id ? -1 : a->id > c->id;
}

static int by_origin(const void *x, const void *y) {
  const tmp_remote *a = x, *c = y;
  if (a->take != c->take) return a->take < c->take ? -1 : 1; /* resumes first, then takes */
  if (a->origin_uid != c->origin_uid) return a->origin_uid < c->origin_uid ? -1 : 1;
  return a->origin_id < c->origin_id ? -1 : a->origin_id > c->origin_id;
}

/* The operation entry numbered `id` by `collector`, or NULL. */
static tmp_frame *op_entry(builder *b, const op_key *idx, uint64_t n, uint32_t collector, uint64_t id) {
  op_key key = {id, collector, 0};
  const op_key *k = n ? bsearch(&key, idx, n, sizeof *idx, by_op) : NULL;
  return k ? &b->frames[k->frame] : NULL;
}

static int opev_order(const void *x, const void *y) {
  const tmp_opev *a = x, *c = y;
  if (a->collector != c->collector) return a->collector < c->collector ? -1 : 1;
  if (a->id != c->id) return a->id < c->id ? -1 : 1;
  return a->time < c->time ? -1 : a->time > c->time;
}

/* The stretches the operation (collector, id) ran on each thread, from its records in time order: from
 * a begin or resume to the next take or end on that thread; a take or end before any record opened one
 * runs from `from` (it began before the capture). Appended to b->runs as `part`. */
static int op_runs(builder *b, uint32_t collector, uint64_t id, double from, uint8_t part) {
  tmp_opev key = {-INFINITY, id, collector, 0, 0};
  uint64_t lo = 0, hi = b->nopevs;
  while (lo < hi) { /* the first record of the operation */
    uint64_t mid = (lo + hi) / 2;
    if (opev_order(&b->opevs[mid], &key) < 0) lo = mid + 1;
    else hi = mid;
  }
  double open = NAN;
  uint32_t thread = 0;
  int any = 0;
  for (uint64_t i = lo; i < b->nopevs && b->opevs[i].collector == collector && b->opevs[i].id == id; i++) {
    const tmp_opev *e = &b->opevs[i];
    if (e->starts) {
      open = e->time, thread = e->thread, any = 1;
      continue;
    }
    double t0 = !isnan(open) && thread == e->thread ? open : !any ? from : NAN;
    any = 1;
    open = NAN;
    if (isnan(t0)) continue; /* an END after the take that handed it off: nothing more ran here */
    if (b->nruns == b->capruns) {
      uint64_t cap = b->capruns ? b->capruns * 2 : 64;
      tmp_run *p = realloc(b->runs, cap * sizeof *p);
      if (!p) return STROBE_ENOMEM;
      b->runs = p;
      b->capruns = cap;
    }
    b->runs[b->nruns++] = (tmp_run){t0, e->time, e->thread, part};
  }
  return 0;
}

static int join_handoffs(builder *b) {
  if (!b->nremotes) return 0;
  op_key *idx = malloc((size_t)b->nframes * sizeof *idx + 1);
  b->handoffs = malloc((size_t)b->nremotes * sizeof *b->handoffs);
  if (!idx || !b->handoffs) {
    free(idx);
    return STROBE_ENOMEM;
  }
  uint64_t n = 0;
  for (uint64_t i = 0; i < b->nframes; i++)
    if (b->frames[i].flags & FF_OP) idx[n++] = (op_key){(uint64_t)b->frames[i].id, b->frames[i].collector, (uint32_t)i};
  qsort(idx, n, sizeof *idx, by_op);
  qsort(b->remotes, b->nremotes, sizeof *b->remotes, by_origin);
  uint64_t nres = 0;
  while (nres < b->nremotes && !b->remotes[nres].take) nres++;
  tmp_remote *takes = b->remotes + nres;
  uint64_t ntakes = b->nremotes - nres;
  for (uint64_t i = 0; i < nres; i++) {
    const tmp_remote *r = &b->remotes[i];
    tmp_frame *f = op_entry(b, idx, n, r->collector, r->id);
    if (!f || f->handoff != NO_HANDOFF) continue; /* its END is not here (still running at the end) */
    tmp_remote key = {.origin_uid = r->origin_uid, .origin_id = r->origin_id, .take = 1};
    tmp_remote *t = ntakes ? bsearch(&key, takes, ntakes, sizeof *takes, by_origin) : NULL;
    tmp_frame *o = t ? op_entry(b, idx, n, t->collector, t->id) : NULL;
    if (o == f || (o && o->handoff != NO_HANDOFF)) o = NULL;
    tmp_handoff *h = &b->handoffs[b->nhandoffs];
    *h = (tmp_handoff){.handed = t ? t->time : r->time - r->gap, .resumed = r->time, .origin_thread = NO_SPAN,
                       .origin = r->peer, .finisher = r->process, .state = HS_RESUMED};
    f->handoff = (uint32_t)b->nhandoffs++;
    f->flags |= FF_REMOTE;
    if (t) t->used = 1;
    if (o) {
      h->state = HS_JOINED;
      h->origin_thread = o->thread;
      f->counter0b = o->counter0, f->ncountersb = o->ncounters;
      f->ocollector = o->collector, f->oid = o->id;
      o->gone = 1;
      b->xp_joined++;
    } else {
      b->xp_resumed++;
    }
  }
  for (uint64_t i = 0; i < ntakes; i++) {
    const tmp_remote *t = &takes[i];
    tmp_frame *o = t->used ? NULL : op_entry(b, idx, n, t->collector, t->id);
    if (!o || o->gone || o->handoff != NO_HANDOFF) continue;
    b->handoffs[b->nhandoffs] = (tmp_handoff){.handed = t->time, .resumed = NAN, .origin_thread = o->thread,
                                              .origin = t->process, .finisher = t->peer, .state = HS_NOT_RESUMED};
    o->handoff = (uint32_t)b->nhandoffs++;
    o->flags |= FF_REMOTE;
    b->xp_not_resumed++;
  }
  free(idx);
  uint64_t k = 0; /* the joined origins' entries go */
  for (uint64_t i = 0; i < b->nframes; i++)
    if (!b->frames[i].gone) b->frames[k++] = b->frames[i];
  b->nframes = k;
  /* Where each of them ran: its stretches on each thread, the origin's then the finisher's. */
  qsort(b->opevs, b->nopevs, sizeof *b->opevs, opev_order);
  for (uint64_t i = 0; i < b->nframes; i++) {
    tmp_frame *f = &b->frames[i];
    if (f->handoff == NO_HANDOFF) continue;
    const tmp_handoff *h = &b->handoffs[f->handoff];
    f->run0 = (uint32_t)b->nruns;
    int rc = 0;
    if (h->state == HS_JOINED) rc = op_runs(b, f->ocollector, (uint64_t)f->oid, f->start, 1);
    if (!rc) rc = op_runs(b, f->collector, (uint64_t)f->id, h->state == HS_JOINED ? h->resumed : f->start,
                          h->state == HS_NOT_RESUMED ? 1 : 2);
    if (rc) return rc;
    f->nruns = (uint32_t)(b->nruns - f->run0);
  }
  return 0;
}

/* >>frames — each entry's frame in the frame model (include/strobe/frames.h): its state, the threads
 * it began and ended on and its window come from the model, as do the owners of the spans (the model's
 * index, turned here into the frames row). An operation entry is found by the collector and id it began
 * under: a joined entry's origin half. The model's operations without an entry (unfinished ones, never
 * ended in the capture) own their spans all the same: those spans are in no frame's tree. */
typedef struct fx_key {
  uint64_t collector, id;
  uint32_t index;
} fx_key;

static int by_fx_key(const void *x, const void *y) {
  const fx_key *a = x, *c = y;
  if (a->collector != c->collector) return a->collector < c->collector ? -1 : 1;
  return a->id < c->id ? -1 : a->id > c->id;
}

/* Each entry's frame in the model (b->fx_of_row) and each frame's entry (b->row_of_fx), NO_SPAN for none. */
static int frames_map(builder *b) {
  uint32_t nfx = strobe_frames_query_count(b->fx);
  fx_key *keys = malloc(((size_t)nfx + 1) * sizeof *keys);
  b->row_of_fx = malloc(((size_t)nfx + 1) * sizeof *b->row_of_fx);
  b->fx_of_row = malloc(((size_t)b->nframes + 1) * sizeof *b->fx_of_row);
  if (!keys || !b->row_of_fx || !b->fx_of_row) {
    free(keys);
    return STROBE_ENOMEM;
  }
  for (uint32_t j = 0; j < nfx; j++) {
    const strobe_frame *fr = strobe_frames_query_frame(b->fx, j);
    keys[j] = (fx_key){fr->collector, fr->id, j};
    b->row_of_fx[j] = NO_SPAN;
  }
  qsort(keys, nfx, sizeof *keys, by_fx_key);
  for (uint64_t i = 0; i < b->nframes; i++) {
    const tmp_frame *f = &b->frames[i];
    b->fx_of_row[i] = NO_SPAN;
    if (!(f->flags & FF_OP)) continue; /* marks and scopes: their spans are those inside their interval */
    int joined = f->handoff != NO_HANDOFF && b->handoffs[f->handoff].state == HS_JOINED;
    fx_key key = {joined ? f->ocollector : f->collector, (uint64_t)(joined ? f->oid : f->id), 0};
    const fx_key *k = nfx ? bsearch(&key, keys, nfx, sizeof *keys, by_fx_key) : NULL;
    if (!k) continue;
    b->fx_of_row[i] = k->index;
    b->row_of_fx[k->index] = (uint32_t)i;
  }
  free(keys);
  return 0;
}

/* Entry i's stages, as the model has them: each under its run-time parent, with the process it ran in when
 * the model says the frame crossed processes (began in one, ended in another: meta.processes, by label);
 * NO_PROCESS otherwise. Appended to opstages from row *ns. */
static int stages_from_model(builder *b, uint32_t i, uint64_t *ns) {
  strobe__vtable *ot = &b->m->tables[STROBE__VT_OPSTAGES];
  uint32_t j = b->fx_of_row[i], n = 0;
  const strobe_frame_stage *st = j == NO_SPAN ? NULL : strobe_frames_query_stages(b->fx, j, &n);
  const strobe_frame *fr = j == NO_SPAN ? NULL : strobe_frames_query_frame(b->fx, j);
  for (uint32_t k = 0; k < n && *ns < ot->rows; k++, (*ns)++) {
    uint16_t p = NO_PROCESS;
    if (fr->process != fr->end_process && proc_index(b, strobe_frames_query_process(b->fx, st[k].process), &p))
      return STROBE_ENOMEM;
    COL(ot, OS_TOTAL, double)[*ns] = st[k].total_ns;
    COL(ot, OS_MIN, double)[*ns] = st[k].min_ns;
    COL(ot, OS_MAX, double)[*ns] = st[k].max_ns;
    COL(ot, OS_FRAME, uint32_t)[*ns] = i;
    COL(ot, OS_COUNT, uint32_t)[*ns] = st[k].count;
    COL(ot, OS_SITE, uint16_t)[*ns] = (uint16_t)st[k].site;
    COL(ot, OS_PROCESS, uint16_t)[*ns] = p;
    COL(ot, OS_PARENT, uint16_t)[*ns] = (uint16_t)st[k].parent;
    COL(ot, OS_PARENT_KNOWN, uint8_t)[*ns] = (uint8_t)(st[k].parent_known != 0);
  }
  return 0;
}

/* The frames columns the model gives (state, threads, window) and the spans' owners as frames rows. */
static void frames_from_model(builder *b) {
  strobe__vtable *ft = &b->m->tables[STROBE__VT_FRAMES];
  for (uint64_t i = 0; i < b->nframes; i++) {
    const tmp_frame *f = &b->frames[i];
    COL(ft, FR_BEGIN_THREAD, uint32_t)[i] = f->thread;
    COL(ft, FR_STATE, uint8_t)[i] = (f->flags & FF_COMMITTED) || !(f->flags & FF_OP) ? STROBE_FRAME_COMPLETED
                                                                                      : STROBE_FRAME_DROPPED;
    if (b->fx_of_row[i] == NO_SPAN) continue; /* marks and scopes are completed; an END not in the model says it */
    const strobe_frame *fr = strobe_frames_query_frame(b->fx, b->fx_of_row[i]);
    COL(ft, FR_STATE, uint8_t)[i] = (uint8_t)fr->state;
    COL(ft, FR_BEGIN_THREAD, uint32_t)[i] = fr->thread;
    if (fr->end_thread != STROBE_FRAMES_NONE) COL(ft, FR_THREAD, uint32_t)[i] = fr->end_thread;
    int w = window_index(b, fr->window);
    if (w >= 0 && w != NO_WINDOW) COL(ft, FR_WINDOW, uint16_t)[i] = (uint16_t)w;
  }
  strobe__vtable *sp = &b->m->tables[STROBE__VT_SPANS];
  uint32_t *owner = COL(sp, SP_FRAME, uint32_t), nfx = strobe_frames_query_count(b->fx);
  for (uint32_t k = 0; k < sp->rows; k++) owner[k] = owner[k] < nfx ? b->row_of_fx[owner[k]] : NO_SPAN;
}

/* The values table: live values only, by span. */
static int fill_values(builder *b) {
  strobe__vmodel *m = b->m;
  qsort(b->vals, b->nvals, sizeof *b->vals, by_span);
  uint32_t nv = 0;
  for (uint64_t i = 0; i < b->nvals; i++) nv += !b->vals[i].dead;
  if (table_alloc(&m->tables[STROBE__VT_VALUES], "values", nv, VALUE_COLS, 3)) return STROBE_ENOMEM;
  strobe__vtable *vt = &m->tables[STROBE__VT_VALUES];
  for (uint64_t i = 0, k = 0; i < b->nvals; i++) {
    if (b->vals[i].dead) continue;
    COL(vt, VA_VALUE, double)[k] = b->vals[i].value;
    COL(vt, VA_SPAN, uint32_t)[k] = b->vals[i].span;
    COL(vt, VA_SITE, uint16_t)[k] = b->vals[i].site;
    k++;
  }
  return 0;
}

/* The elements table, by span. */
static int fill_elements(builder *b) {
  strobe__vmodel *m = b->m;
  qsort(b->elems, b->nelems, sizeof *b->elems, elem_by_span);
  if (table_alloc(&m->tables[STROBE__VT_ELEMENTS], "elements", (uint32_t)b->nelems, ELEMENT_COLS, 4))
    return STROBE_ENOMEM;
  strobe__vtable *et = &m->tables[STROBE__VT_ELEMENTS];
  for (uint64_t i = 0; i < b->nelems; i++) {
    COL(et, EL_SPAN, uint32_t)[i] = b->elems[i].span;
    COL(et, EL_ID_LO, uint32_t)[i] = (uint32_t)b->elems[i].id;
    COL(et, EL_ID_HI, uint32_t)[i] = (uint32_t)(b->elems[i].id >> 32);
    COL(et, EL_TYPE, uint16_t)[i] = b->elems[i].type;
  }
  return 0;
}

/* The cumulative table: live entries, by span (NO_SPAN, the threads' top level, last). */
static int fill_cumulative(builder *b) {
  strobe__vmodel *m = b->m;
  qsort(b->cums, b->ncums, sizeof *b->cums, cumul_by_span);
  uint32_t nc = 0;
  for (uint64_t i = 0; i < b->ncums; i++) nc += !b->cums[i].dead;
  if (table_alloc(&m->tables[STROBE__VT_CUMUL], "cumulative", nc, CUMUL_COLS, 7)) return STROBE_ENOMEM;
  strobe__vtable *ct = &m->tables[STROBE__VT_CUMUL];
  for (uint64_t i = 0, k = 0; i < b->ncums; i++) {
    const tmp_cumul *x = &b->cums[i];
    if (x->dead) continue;
    COL(ct, CU_COUNT, double)[k] = x->count;
    COL(ct, CU_TOTAL, double)[k] = x->total;
    COL(ct, CU_MIN, double)[k] = x->min;
    COL(ct, CU_MAX, double)[k] = x->max;
    COL(ct, CU_SPAN, uint32_t)[k] = x->span;
    COL(ct, CU_THREAD, uint32_t)[k] = x->thread;
    COL(ct, CU_SITE, uint16_t)[k] = x->site;
    k++;
  }
  return 0;
}

/* Numbers top-level scopes per thread in start order, as `strobe report`
 * numbers them (frames already sorted by start). */
static int number_top_scopes(builder *b) {
  uint64_t *tops = calloc(b->nth ? b->nth : 1, sizeof *tops);
  if (!tops) return STROBE_ENOMEM;
  for (uint64_t i = 0; i < b->nframes; i++)
    if (b->frames[i].kind != FK_FRAME && !(b->frames[i].flags & FF_OP) && b->frames[i].thread < b->nth) {
      uint64_t n = ++tops[b->frames[i].thread];
      b->frames[i].number = (double)n;
    }
  free(tops);
  return 0;
}

/* Maps frame rows to the frame model (frames_map), then allocates the frames,
 * opstages, opcounters, handoffs and opruns tables at
 * the rows each takes: an entry's stages are the frame model's (both halves
 * of a joined one), its counters both halves'. */
static int alloc_frame_tables(builder *b) {
  strobe__vmodel *m = b->m;
  int rc;
  if ((rc = frames_map(b))) return rc;
  uint64_t nst = 0, nct = 0;
  for (uint64_t i = 0; i < b->nframes; i++) {
    const tmp_frame *f = &b->frames[i];
    nct += f->ncountersb + f->ncounters;
    if (b->fx_of_row[i] != NO_SPAN) nst += strobe_frames_query_frame(b->fx, b->fx_of_row[i])->nstages;
  }
  if (table_alloc(&m->tables[STROBE__VT_FRAMES], "frames", (uint32_t)b->nframes, FRAME_COLS, FR_NCOLS) ||
      table_alloc(&m->tables[STROBE__VT_OPSTAGES], "opstages", (uint32_t)nst, OPSTAGE_COLS, OS_NCOLS) ||
      table_alloc(&m->tables[STROBE__VT_OPCOUNTERS], "opcounters", (uint32_t)nct, OPCOUNTER_COLS, 4) ||
      table_alloc(&m->tables[STROBE__VT_HANDOFFS], "handoffs", (uint32_t)b->nhandoffs, HANDOFF_COLS, 7) ||
      table_alloc(&m->tables[STROBE__VT_OPRUNS], "opruns", (uint32_t)b->nruns, OPRUN_COLS, 5))
    return STROBE_ENOMEM;
  return 0;
}

/* Frame row i's handoff (when it has one) and its stage runs, at rows *nh
 * and *nr of their tables, which advance. */
static void fill_handoff_and_runs(builder *b, uint64_t i, uint64_t *nh_io, uint64_t *nr_io) {
  const tmp_frame *f = &b->frames[i];
  strobe__vtable *ht = &b->m->tables[STROBE__VT_HANDOFFS], *rt = &b->m->tables[STROBE__VT_OPRUNS];
  uint64_t nh = *nh_io, nr = *nr_io;
  if (f->handoff != NO_HANDOFF && nh < ht->rows) {
    const tmp_handoff *h = &b->handoffs[f->handoff];
    COL(ht, HO_HANDED, double)[nh] = h->handed;
    COL(ht, HO_RESUMED, double)[nh] = h->resumed;
    COL(ht, HO_FRAME, uint32_t)[nh] = (uint32_t)i;
    COL(ht, HO_ORIGIN_THREAD, uint32_t)[nh] = h->origin_thread;
    COL(ht, HO_ORIGIN, uint16_t)[nh] = h->origin;
    COL(ht, HO_FINISHER, uint16_t)[nh] = h->finisher;
    COL(ht, HO_STATE, uint8_t)[nh++] = h->state;
  }
  for (uint32_t k = 0; k < f->nruns && nr < rt->rows; k++, nr++) {
    const tmp_run *x = &b->runs[f->run0 + k];
    COL(rt, RU_T0, double)[nr] = x->t0;
    COL(rt, RU_T1, double)[nr] = x->t1;
    COL(rt, RU_FRAME, uint32_t)[nr] = (uint32_t)i;
    COL(rt, RU_THREAD, uint32_t)[nr] = x->thread;
    COL(rt, RU_PART, uint8_t)[nr] = x->part;
  }
  *nh_io = nh;
  *nr_io = nr;
}

/* Frame row i's operation counters at row *nk of opcounters, which advances. */
static void fill_op_counters(builder *b, uint64_t i, uint64_t *nk_io) {
  const tmp_frame *f = &b->frames[i];
  strobe__vtable *kt = &b->m->tables[STROBE__VT_OPCOUNTERS];
  uint64_t nk = *nk_io;
  /* the origin's half first (a joined entry), then its own */
  for (int run = 1; run >= 0; run--) {
    uint32_t c0 = run ? f->counter0b : f->counter0, cn = run ? f->ncountersb : f->ncounters;
    for (uint32_t k = 0; k < cn && nk < kt->rows; k++, nk++) {
      const tmp_counter *x = &b->ocounters[c0 + k];
      COL(kt, OC_VALUE, double)[nk] = x->value;
      COL(kt, OC_FRAME, uint32_t)[nk] = (uint32_t)i;
      COL(kt, OC_NAME, uint16_t)[nk] = x->name;
      COL(kt, OC_PROCESS, uint16_t)[nk] = row_process(b, f, run);
    }
  }
  *nk_io = nk;
}

/* The frames table and, in its order, each frame's stages, counters,
 * handoff and runs, so a frame's rows are one run in each. */
static int fill_frame_tables(builder *b) {
  strobe__vmodel *m = b->m;
  int rc;
  strobe__vtable *ft = &m->tables[STROBE__VT_FRAMES];
  uint64_t ns = 0, nk = 0, nh = 0, nr = 0;
  for (uint64_t i = 0; i < b->nframes; i++) {
    const tmp_frame *f = &b->frames[i];
    COL(ft, FR_START, double)[i] = f->start;
    COL(ft, FR_DUR, double)[i] = f->dur;
    COL(ft, FR_NUMBER, double)[i] = f->number;
    COL(ft, FR_ID, double)[i] = f->id;
    COL(ft, FR_THREAD, uint32_t)[i] = f->thread;
    COL(ft, FR_WINDOW, uint16_t)[i] = f->window;
    COL(ft, FR_KIND, uint8_t)[i] = f->kind;
    COL(ft, FR_FLAGS, uint8_t)[i] = f->flags;
    fill_handoff_and_runs(b, i, &nh, &nr);
    if ((rc = stages_from_model(b, (uint32_t)i, &ns))) return rc;
    fill_op_counters(b, i, &nk);
  }
  return 0;
}

/* The samples table: each site's (and operation counter's) run sorted by
 * time, since threads' blocks interleave. */
static int sort_sample_runs(builder *b) {
  strobe__vmodel *m = b->m;
  strobe__vtable *st = &m->tables[STROBE__VT_SAMPLES];
  uint32_t maxrun = 0;
  for (uint32_t s = 0; s < MAX_SITES; s++)
    if (b->sample_next[s] - b->sample_first[s] > maxrun) maxrun = b->sample_next[s] - b->sample_first[s];
  for (uint32_t k = 0; k < b->n_opc; k++)
    if (b->opc_next[k] - b->opc_first[k] > maxrun) maxrun = b->opc_next[k] - b->opc_first[k];
  sample_pair *tmp = malloc(((size_t)maxrun + 1) * sizeof *tmp);
  if (!tmp) return STROBE_ENOMEM;
  for (uint32_t s = 0; s < MAX_SITES + b->n_opc; s++) {
    uint32_t first = s < MAX_SITES ? b->sample_first[s] : b->opc_first[s - MAX_SITES];
    uint32_t n = (s < MAX_SITES ? b->sample_next[s] : b->opc_next[s - MAX_SITES]) - first;
    if (!n) continue;
    double *tt = COL(st, SA_TIME, double) + first, *vv = COL(st, SA_VALUE, double) + first;
    for (uint32_t i = 0; i < n; i++) tmp[i] = (sample_pair){tt[i], vv[i]};
    qsort(tmp, n, sizeof *tmp, by_time);
    for (uint32_t i = 0; i < n; i++) {
      tt[i] = tmp[i].t;
      vv[i] = tmp[i].v;
    }
  }
  free(tmp);
  return 0;
}

static int finish(builder *b) {
  int rc = sort_rows(b);
  if (!rc) rc = deep_statuses(b);
  if (!rc) rc = fill_values(b);
  if (!rc) rc = fill_elements(b);
  if (!rc) rc = fill_cumulative(b);
  if (rc) return rc;
  /* frames: the halves of operations handed between processes joined, then by start */
  if ((rc = join_handoffs(b))) return rc;
  if (b->nframes) qsort(b->frames, b->nframes, sizeof *b->frames, frame_by_start); /* frames is NULL when empty */
  if ((rc = number_top_scopes(b))) return rc;
  if ((rc = alloc_frame_tables(b)) || (rc = fill_frame_tables(b))) return rc;
  frames_from_model(b);
  return sort_sample_runs(b);
}

/* Counters: deltas → running totals (needs the site kinds, known at meta time). */
static void counters_to_totals(builder *b, const strobe_capture *c) {
  strobe__vtable *st = &b->m->tables[STROBE__VT_SAMPLES];
  for (uint32_t s = 1; s < MAX_SITES; s++) {
    uint32_t first = b->sample_first[s], n = b->sample_next[s] - first;
    if (!n) continue;
    const strobe_capture_site *site = strobe_capture_query_site(c, s);
    if (!site || site->kind != STROBE_SITE_COUNTER) continue;
    double *vv = COL(st, SA_VALUE, double) + first, sum = 0;
    for (uint32_t i = 0; i < n; i++) vv[i] = sum += vv[i];
  }
}

/* ======================================================================
 * >>meta
 * ====================================================================== */

static json_t *num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* A JSON string of capture text, which a hostile file can fill with invalid
 * UTF-8 (jansson refuses it): such bytes become '?', never a lost field. */
static json_t *jstr(const char *s) {
  if (!s) s = "";
  json_t *v = json_string(s);
  if (v) return v;
  size_t n = strlen(s);
  char *t = malloc(n + 1);
  if (!t) return json_string("");
  for (size_t i = 0; i <= n; i++) t[i] = (s[i] & 0x80) || (s[i] > 0 && s[i] < 0x20) ? '?' : s[i];
  v = json_string(t);
  free(t);
  return v ? v : json_string("");
}

static json_t *header_json(const strobe_capture_header *h) {
  json_t *o = json_pack("{s:i,s:o,s:o,s:b,s:o,s:I,s:I,s:o,s:o,s:o,s:o,s:o,s:b,s:I,s:I,s:I}", "version", (int)h->version,
                   "kind", jstr(h->kind), "clock_source", jstr(h->clock_source), "clock_invariant", h->clock_invariant,
                   "ns_per_tick", num_or_null(h->ns_per_tick), "epoch_ticks", (json_int_t)h->epoch_ticks,
                   "epoch_mono_ns", (json_int_t)h->epoch_mono_ns, "overhead_per_scope_ns",
                   num_or_null(h->overhead_per_scope_ns), "strobe_version", jstr(h->strobe_version), "os", jstr(h->os),
                   "arch", jstr(h->arch), "features", jstr(h->features), "assertions", h->assertions, "pid",
                   (json_int_t)h->pid, "ring_events", (json_int_t)h->ring_events, "flush_interval_ms",
                   (json_int_t)h->flush_interval_ms);
  /* The calibrated cost per event (0 from writers before it: null) and the overflow mode. */
  json_object_set_new(o, "event_cost_ns", h->event_cost_ns > 0 ? json_real(h->event_cost_ns) : json_null());
  const char *overflow = strobe_overflow_name(h->overflow);
  json_object_set_new(o, "overflow", overflow ? json_string(overflow) : json_null());
  json_object_set_new(o, "ring_events_max", json_integer((json_int_t)h->ring_events_max));
  return o;
}

static json_t *tables_json(const strobe__vmodel *m) {
  json_t *o = json_object();
  for (int i = 0; i < STROBE__VT_COUNT; i++) {
    const strobe__vtable *t = &m->tables[i];
    json_t *cols = json_object();
    for (uint32_t k = 0; k < t->ncols; k++)
      json_object_set_new(cols, t->cols[k].name, json_pack("[s,I]", t->cols[k].type, (json_int_t)t->cols[k].offset));
    json_object_set_new(o, t->name, json_pack("{s:I,s:I,s:o}", "rows", (json_int_t)t->rows, "bytes",
                                               (json_int_t)t->bytes, "columns", cols));
  }
  return o;
}

/* Both frame rates of every series of frames (committed passes per window,
 * or marks, or top-level scopes per thread), as `strobe report` gives them. */
/* Both frame rates of each series of the frame model (docs/frames.md: a process's window for passes, a
 * thread for marks; never two added together), as `strobe report` gives them. Top-level scopes have none. */
static json_t *frame_rates_json(const builder *b) {
  json_t *out = json_array();
  int merged = strobe_frames_query_process_count(b->fx) > 1;
  for (uint32_t i = 0; i < strobe_frames_query_series_count(b->fx); i++) {
    const strobe_frame_series *r = strobe_frames_query_series(b->fx, i);
    if (!r->has_rate) continue;
    json_t *o = json_pack("{s:I,s:o,s:o,s:o,s:o}", "frames", (json_int_t)r->intervals, "span_ns",
                          num_or_null(r->span_ns), "fps_first_to_last", num_or_null(r->fps_first_to_last),
                          "median_interval_ns", num_or_null(r->median_interval_ns), "fps_steady_median_interval",
                          num_or_null(r->fps_steady));
    if (r->thread == STROBE_FRAMES_NONE) {
      json_object_set_new(o, "window", jstr(r->name));
      json_object_set_new(o, "process", merged ? jstr(strobe_frames_query_process(b->fx, r->process)) : json_null());
    } else {
      json_object_set_new(o, "thread", json_integer(r->thread));
    }
    json_array_append_new(out, o);
  }
  return out;
}

/* A program without frames (no pass operations, no FRAME marks): per
 * thread, the time its top-level scopes (the spans kept at depth 0) spent in
 * each of ACTIVITY_BUCKETS equal slices of the range; null for a capture
 * with frames. At most ACTIVITY_MAX_THREADS lanes, in thread order; the
 * other threads with scopes are counted in threads_cut. */
static json_t *activity_json(const builder *b) {
  if (b->ops_mode || b->marks_mode || !(b->range_lo < b->range_hi)) return json_null();
  const strobe__vtable *sp = &b->m->tables[STROBE__VT_SPANS];
  const double *start = COL(sp, SP_START, double);
  const float *dur = COL(sp, SP_DUR, float);
  double lo = b->range_lo, width = (b->range_hi - b->range_lo) / ACTIVITY_BUCKETS;
  json_t *lanes = json_array();
  uint32_t cut = 0;
  double busy[ACTIVITY_BUCKETS];
  for (uint32_t i = 0; i < b->nth; i++) {
    const vthread *t = &b->th[i];
    if (!t->ndepth || t->base[1] == t->base[0]) continue;
    if (json_array_size(lanes) == ACTIVITY_MAX_THREADS) {
      cut++;
      continue;
    }
    memset(busy, 0, sizeof busy);
    for (uint32_t k = t->base[0]; k < t->base[1]; k++) { /* each scope's overlap with each bucket */
      double s0 = start[k] - lo, s1 = s0 + dur[k];
      uint32_t q = s0 <= 0 ? 0 : (uint32_t)(s0 / width);
      for (; q < ACTIVITY_BUCKETS && q * width < s1; q++) {
        double b0 = q * width, b1 = b0 + width;
        double o = (s1 < b1 ? s1 : b1) - (s0 > b0 ? s0 : b0);
        if (o > 0) busy[q] += o;
      }
    }
    json_t *arr = json_array();
    for (uint32_t q = 0; q < ACTIVITY_BUCKETS; q++) json_array_append_new(arr, json_real(busy[q]));
    json_array_append_new(lanes, json_pack("{s:i,s:o}", "thread", (int)i, "busy_ns", arr));
  }
  return json_pack("{s:i,s:f,s:f,s:o,s:i}", "buckets", (int)ACTIVITY_BUCKETS, "lo", lo, "bucket_ns", width, "threads",
                   lanes, "threads_cut", (int)cut);
}

/* What the capture is: its name, origin, header, start and time range. */
static void meta_identity(json_t *root, const builder *b, const strobe__vsource *src, uint64_t generation) {
  json_object_set_new(root, "format", json_integer(1));
  json_object_set_new(root, "label", jstr(src->label));
  json_object_set_new(root, "origin", json_string(src->origin ? src->origin : "file"));
  json_object_set_new(root, "generation", json_integer((json_int_t)generation));
  json_object_set_new(root, "header", header_json(strobe_capture_query_header(b->cap)));
  json_object_set_new(root, "start_ns", isfinite(b->t0) ? json_real(b->t0) : json_real(0));
  int empty = !(b->range_lo <= b->range_hi);
  json_t *range = json_array();
  json_array_append_new(range, json_real(empty ? 0.0 : b->range_lo));
  json_array_append_new(range, json_real(empty ? 0.0 : b->range_hi));
  json_object_set_new(root, "range", range);
}

/* The reader's totals over the whole capture, kept or cut. */
static json_t *totals_json(const strobe_capture_totals *tt) {
  json_t *misuse = json_object();
#define MISUSE(name) json_object_set_new(misuse, #name, json_integer((json_int_t)tt->misuse.name));
  STROBE_MISUSE_MAP(MISUSE)
#undef MISUSE
  /* Call tracing's cuts (docs/exploration.md): the header says them. */
  json_t *calls = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "functions", (json_int_t)tt->calls_functions, "unresolved",
                            (json_int_t)tt->calls_unresolved, "cut_depth", (json_int_t)tt->calls_cut_depth, "cut_stack",
                            (json_int_t)tt->calls_cut_stack, "cut_functions", (json_int_t)tt->calls_cut_functions,
                            "excluded", (json_int_t)tt->calls_excluded);
  return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:b,s:b,s:o,s:I,s:I,s:o}", "blocks", (json_int_t)tt->blocks, "events",
                   (json_int_t)tt->events, "scopes", (json_int_t)tt->scopes, "unwound", (json_int_t)tt->unwound, "lost", (json_int_t)tt->lost,
                   "orphan_ends", (json_int_t)tt->orphan_ends, "unfinished", (json_int_t)tt->unfinished,
                   "lost_scopes", (json_int_t)tt->lost_scopes, "footer", tt->footer, "cut_short", tt->cut_short,
                   "misuse", misuse, "drain_cpu_ns", (json_int_t)tt->drain_cpu_ns, "drain_events",
                   (json_int_t)tt->drain_events, "calls", calls);
}

/* How a merged capture's inputs were placed on one clock, and what the merge could not carry
 * (docs/cli.md §strobe merge); null for a capture that is not a merge. */
static json_t *merge_json(const strobe_capture *cap) {
  const strobe_capture_merge *m = strobe_capture_query_merge(cap);
  if (!m) return json_null();
  static const char *const names[] = {
#define ALIGN(name, value, text) [value] = text,
      STROBE_CAPTURE_ALIGNMENTS(ALIGN)
#undef ALIGN
  };
  json_t *inputs = json_array(), *cut = json_object();
  for (uint32_t i = 0; i < m->ninputs; i++) {
    const strobe_capture_merge_input *in = &m->inputs[i];
    json_array_append_new(inputs, json_pack("{s:s,s:I,s:s,s:s,s:I,s:I}", "process", in->process, "pid",
                                            (json_int_t)in->pid, "boot_id", in->boot_id, "alignment",
                                            in->alignment < sizeof names / sizeof *names ? names[in->alignment] : "?",
                                            "shift_ns", (json_int_t)in->shift_ns, "error_ns", (json_int_t)in->error_ns));
  }
  for (uint32_t t = 0; t < STROBE_CAPTURE_REC_TYPES; t++)
    if (m->not_merged[t])
      json_object_set_new(cut, strobe_capture_record_type_name(t), json_integer((json_int_t)m->not_merged[t]));
  return json_pack("{s:I,s:o,s:o}", "error_ns", (json_int_t)m->error_ns, "inputs", inputs, "not_merged", cut);
}

/* Where the process died (docs/capture-format.md §CRASH): the sentence strobe info says, and each thread's open
 * scopes; null when the capture has no CRASH block. */
static json_t *crash_json(const strobe_capture *cap) {
  const strobe_capture_crash *k = strobe_capture_query_crash(cap);
  if (!k) return json_null();
  char text[512];
  json_t *threads = json_array();
  for (uint32_t i = 0; i < k->nthreads; i++) {
    json_t *scopes = json_array();
    for (uint32_t s = 0; s < k->threads[i].nscopes; s++) json_array_append_new(scopes, json_string(k->threads[i].scopes[s]));
    json_array_append_new(threads, json_pack("{s:s,s:o}", "name", k->threads[i].name, "open_scopes", scopes));
  }
  return json_pack("{s:s,s:s,s:o}", "message", strobe_capture_crash_text(k, text, sizeof text), "signal",
                   k->signal_name, "threads", threads);
}

static json_t *clock_offsets_json(const strobe_capture *cap) {
  strobe_capture_clock_offsets co = strobe_capture_query_clock_offsets(cap);
  json_t *a = json_array();
  for (uint32_t i = 0; i < co.count; i++) {
    const strobe_clock_offset *o = &co.samples[i].sample;
    json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:I,s:I,s:I}", "local_boot_id", co.samples[i].local_boot_id,
                                       "peer", o->peer, "peer_boot_id", o->peer_boot_id, "offset_ns",
                                       (json_int_t)o->offset_ns, "error_ns", (json_int_t)o->error_ns, "rtt_ns",
                                       (json_int_t)o->rtt_ns));
  }
  return a;
}

/* What the model holds of it: totals, read error, the span cut, and how
 * frames were found. */
static void meta_completeness(json_t *root, const builder *b) {
  json_object_set_new(root, "totals", totals_json(&b->totals));
  json_object_set_new(root, "merge", merge_json(b->cap));
  json_object_set_new(root, "crash", crash_json(b->cap));
  json_object_set_new(root, "clock_offsets", clock_offsets_json(b->cap));
  json_object_set_new(root, "read_error", b->read_error ? json_pack("{s:s,s:s}", "name", strobe_err_name(b->read_error),
                                                                    "message", strobe_strerror(b->read_error))
                                                        : json_null());
  json_object_set_new(root, "spans_cut", json_integer((json_int_t)b->spans_cut));
  /* UI-tree snapshots (application content: local captures only, docs/sessions.md §Content). */
  json_object_set_new(root, "trees", json_incref(b->trees));
  json_object_set_new(root, "trees_cut", json_integer((json_int_t)b->trees_cut));
  json_object_set_new(root, "trees_refused", json_integer((json_int_t)b->totals.trees_dropped));
  /* The sampler's ticks, off-CPU gaps and call tree (application content, like the trees). */
  json_t *sampler = strobe__vsamples_json(&b->vs, b->cap);
  json_object_set_new(root, "sampler", sampler ? sampler : json_null());
  /* Deep captures and attachments (application content, the same rule: docs/viewer.md §Deep capture). */
  json_object_set_new(root, "deep", json_incref(b->deeps));
  json_object_set_new(root, "deep_cut", json_integer((json_int_t)b->deeps_cut));
  json_object_set_new(root, "deep_refused", json_integer((json_int_t)b->totals.deeps_dropped));
  json_object_set_new(root, "attachments", json_incref(b->attachments));
  json_object_set_new(root, "attachments_cut", json_integer((json_int_t)b->attachments_cut));
  json_object_set_new(root, "attachments_cut_by_capture", json_pack("{s:I,s:I}", "count", (json_int_t)b->totals.attach_cut,
                                                                     "bytes", (json_int_t)b->totals.attach_cut_bytes));
  json_object_set_new(root, "images_cut", json_integer((json_int_t)b->images_cut));
  json_object_set_new(root, "max_spans", json_integer((json_int_t)b->max_spans));
  /* Operations handed between processes (>>handoffs): the process labels the handoffs table and the
   * operations' stages and counters name, and how many entries of each state. */
  json_t *procs = json_array();
  for (uint32_t k = 0; k < b->n_procs; k++) json_array_append_new(procs, jstr(b->procs[k]));
  json_object_set_new(root, "processes", procs);
  json_object_set_new(root, "cross_process",
                      json_pack("{s:I,s:I,s:I,s:I}", "joined", (json_int_t)b->xp_joined, "resumed_without_origin",
                                (json_int_t)b->xp_resumed, "not_resumed", (json_int_t)b->xp_not_resumed,
                                "processes_cut", (json_int_t)b->procs_cut));
  json_object_set_new(root, "frames_are", json_string(b->ops_mode     ? "pass_operations"
                                                     : b->marks_mode ? "marks"
                                                                     : "top_level_scopes"));
  json_t *windows = json_array();
  for (uint32_t i = 0; i < b->n_windows; i++) json_array_append_new(windows, jstr(b->windows[i]));
  json_object_set_new(root, "windows", windows);
  json_object_set_new(root, "frame_rates", frame_rates_json(b));
  json_object_set_new(root, "activity", activity_json(b));
  json_object_set_new(root, "op_counters_cut", json_integer((json_int_t)b->opc_cut));
  json_object_set_new(root, "frame_thread", b->frame_thread_set ? json_integer(b->frame_thread) : json_null());
  json_t *kinds = json_array();
  for (int i = 0; i < FK_COUNT; i++) json_array_append_new(kinds, json_string(g_frame_kinds[i]));
  json_object_set_new(root, "frame_kinds", kinds);
  json_t *states = json_array(); /* frames.state's names, from the frame model's one list */
  for (uint32_t i = 0; i < STROBE_FRAME_STATE_LIMIT; i++) json_array_append_new(states, jstr(strobe_frames_state_name(i)));
  json_object_set_new(root, "frame_states", states);
  uint64_t unfinished = 0; /* operations the model holds that never ended here: no entry (no end to draw) */
  for (uint32_t i = 0; i < strobe_frames_query_count(b->fx); i++)
    unfinished += strobe_frames_query_frame(b->fx, i)->state == STROBE_FRAME_UNFINISHED;
  json_object_set_new(root, "operations_unfinished", json_integer((json_int_t)unfinished));
  json_t *reasons = json_object();
#define OPEN_JSON(id, code, name) json_object_set_new(reasons, name, json_integer(code));
  OPEN_REASONS(OPEN_JSON)
#undef OPEN_JSON
  json_object_set_new(root, "open_reasons", reasons);
}

/* Every thread the reader defined or that has spans here (a hostile file
 * can name one the reader no longer lists: its spans still need a lane),
 * with its lanes: [depth, first span, count]. */
static json_t *threads_json(const builder *b) {
  const strobe_capture *c = b->cap;
  json_t *threads = json_array();
  uint32_t nthreads = strobe_capture_query_thread_count(c);
  for (uint32_t i = 0; i < (nthreads > b->nth ? nthreads : b->nth); i++) {
    const strobe_capture_thread *ct = strobe_capture_query_thread(c, i);
    json_t *depths = json_array();
    if (i < b->nth)
      for (uint32_t d = 0; d < b->th[i].ndepth; d++) {
        uint32_t n = b->th[i].base[d + 1] - b->th[i].base[d];
        if (!n) continue;
        json_array_append_new(depths, json_pack("[i,I,I]", (int)d, (json_int_t)b->th[i].base[d], (json_int_t)n));
      }
    if (!ct && !json_array_size(depths)) {
      json_decref(depths);
      continue;
    }
    char *const *lane = i >= b->nth_cpu && i - b->nth_cpu < b->gpu.n_lanes ? b->gpu_names[i - b->nth_cpu] : NULL;
    char gname[300];
    int producer = lane && b->gpu.lanes[i - b->nth_cpu].producer;
    if (lane) {
      strobe__gpu_group g = b->gpu.lanes[i - b->nth_cpu]; /* its names were pass 1's: the copies stand in */
      g.domain = lane[0];
      g.name = lane[1];
      strobe__gpu_lane_title(&g, gname, sizeof gname);
    }
    /* fiber: a fiber's lane (strobe.h >>fibers), os_tid 0 */
    json_t *o = json_pack("{s:i,s:o,s:I,s:I,s:I,s:b,s:b,s:o}", "index", (int)i, "name",
                          jstr(lane ? gname : ct ? ct->name : ""), "os_tid", (json_int_t)(ct ? ct->os_tid : 0),
                          "events", (json_int_t)(ct ? ct->events : 0), "lost", (json_int_t)(ct ? ct->lost : 0),
                          "ended", ct ? ct->ended : 0, "fiber", !lane && ct ? ct->fiber : 0, "depths", depths);
    /* A GPU queue lane (docs/gpu.md) or an external producer's lane (docs/recording.md §External producers):
     * drawn under the CPU threads, its spans in the host timeline. */
    if (o && lane && !producer)
      json_object_set_new(o, "gpu_lane", json_pack("{s:o,s:o}", "domain", jstr(lane[0]), "queue", jstr(lane[1])));
    if (o && producer)
      json_object_set_new(o, "producer_lane", json_pack("{s:o,s:o}", "lane", jstr(lane[1]), "domain", jstr(lane[0])));
    json_array_append_new(threads, o);
  }
  return threads;
}

/* One site's metadata, and for a scope its statistics; NULL if jansson failed. */
static json_t *site_json(uint32_t id, const strobe_capture_site *s, const site_stat *st) {
  json_t *o = json_pack("{s:i,s:i,s:o,s:o,s:o,s:i,s:o,s:o,s:I}", "id", (int)id, "kind", (int)s->kind, "name",
                        jstr(s->name), "category", jstr(s->category), "file", jstr(s->file), "line", (int)s->line,
                        "function", jstr(s->function), "parent", jstr(s->parent), "count", (json_int_t)st->count);
  /* Named at run time (strobe_site_intern): application content, kept because the viewer is local. */
  if (o) json_object_set_new(o, "interned", json_boolean((s->flags & STROBE_SITE_INTERNED) != 0));
  if (o) json_object_set_new(o, "traced_call", json_boolean((s->flags & STROBE_SITE_CALL) != 0));
  /* The unit of its numbers by name (strobe.h, STROBE_UNITS); null for a newer writer's unit. */
  const char *unit = strobe_unit_name(s->unit);
  if (o) json_object_set_new(o, "unit", unit ? json_string(unit) : json_null());
  if (o && st->count) {
    json_object_set_new(o, "total_ns", num_or_null(st->total));
    json_object_set_new(o, "self_ns", num_or_null(st->self));
    json_object_set_new(o, "min_ns", num_or_null(st->min));
    json_object_set_new(o, "max_ns", num_or_null(st->max));
  }
  return o;
}

/* A counter or gauge site's run in the samples table, with its range;
 * NULL when the site has no samples or is of another kind. */
static json_t *series_json(const builder *b, uint32_t id, const strobe_capture_site *s) {
  uint32_t n = b->sample_next[id] - b->sample_first[id];
  if (!n || (s->kind != STROBE_SITE_COUNTER && s->kind != STROBE_SITE_GAUGE)) return NULL;
  const double *vv = COL(&b->m->tables[STROBE__VT_SAMPLES], SA_VALUE, double) + b->sample_first[id];
  double lo = vv[0], hi = vv[0];
  for (uint32_t i = 1; i < n; i++) {
    if (vv[i] < lo) lo = vv[i];
    if (vv[i] > hi) hi = vv[i];
  }
  return json_pack("{s:i,s:s,s:I,s:I,s:o,s:o}", "site", (int)id, "kind",
                   s->kind == STROBE_SITE_COUNTER ? "counter" : "gauge", "first", (json_int_t)b->sample_first[id],
                   "count", (json_int_t)n, "min", num_or_null(lo), "max", num_or_null(hi));
}

/* Every site the capture defines, and the series of its counters and gauges. */
static void meta_sites(json_t *root, const builder *b) {
  const strobe_capture *c = b->cap;
  json_t *sites = json_array(), *series = json_array();
  uint32_t limit = strobe_capture_query_site_limit(c);
  for (uint32_t id = 1; id < limit && id < MAX_SITES; id++) {
    const strobe_capture_site *s = strobe_capture_query_site(c, id);
    if (!s) continue;
    json_t *o = site_json(id, s, &b->stats[id]);
    if (!o) continue;
    json_array_append_new(sites, o);
    json_t *run = series_json(b, id, s);
    if (run) json_array_append_new(series, run);
  }
  for (uint32_t k = 0; k < b->n_opc; k++) {
    uint32_t n = b->opc_next[k] - b->opc_first[k];
    if (!n) continue;
    const double *vv = COL(&b->m->tables[STROBE__VT_SAMPLES], SA_VALUE, double) + b->opc_first[k];
    double lo = vv[0], hi = vv[0];
    for (uint32_t i = 1; i < n; i++) {
      if (vv[i] < lo) lo = vv[i];
      if (vv[i] > hi) hi = vv[i];
    }
    json_array_append_new(series, json_pack("{s:i,s:s,s:o,s:s,s:I,s:I,s:o,s:o}", "site", 0, "kind", "op_counter",
                                            "name", jstr(b->opc_names[k]), "unit", strobe_unit_name(b->opc_unit[k]),
                                            "first", (json_int_t)b->opc_first[k], "count", (json_int_t)n, "min",
                                            num_or_null(lo), "max", num_or_null(hi)));
  }
  json_t *opc = json_array(), *opu = json_array();
  for (uint32_t k = 0; k < b->n_opc; k++) {
    json_array_append_new(opc, jstr(b->opc_names[k]));
    json_array_append_new(opu, json_string(strobe_unit_name(b->opc_unit[k])));
  }
  json_object_set_new(root, "op_counter_names", opc);
  json_object_set_new(root, "op_counter_units", opu); /* docs/viewer.md: the unit of each name, "none" for none */
  json_object_set_new(root, "sites", sites);
  json_object_set_new(root, "series", series);
}

/* The tables' layout and the model's size, then the meta text itself. */
static int meta_finish(json_t *root, strobe__vmodel *m) {
  m->bytes = 0;
  for (int i = 0; i < STROBE__VT_COUNT; i++) m->bytes += m->tables[i].bytes;
  json_object_set_new(root, "tables", tables_json(m));
  json_object_set_new(root, "model_bytes", json_integer((json_int_t)m->bytes)); /* without the meta itself */
  m->meta = json_dumps(root, JSON_COMPACT);
  if (!m->meta) return STROBE_ENOMEM;
  m->meta_len = strlen(m->meta);
  m->bytes += m->meta_len;
  return 0;
}

/* The meta document (docs/viewer.md §Meta), in its keys' order. */
/* The GPU frames' instants (docs/gpu.md, docs/viewer.md "gpu"): one row per
 * frame, ns since the capture start, null where unknown; the gaps'
 * summaries with their n; null when the capture has no GPU data. */
#define GPU_META_FRAMES 100000u /* rows the meta carries; the rest are counted in frames_cut */
static json_t *gap_json(const strobe__dist *d) {
  if (!d->n) return json_null();
  return json_pack("{s:I,s:f,s:f,s:f}", "n", (json_int_t)d->n, "p50", d->p50, "p95", d->p95, "max", d->max);
}

static json_t *gpu_json(const builder *b) {
  const strobe__gpu_data *g = &b->gpu;
  if (!strobe__gpu_present(g)) return json_null();
  json_t *rows = json_array();
  uint32_t n = g->n_frames < GPU_META_FRAMES ? g->n_frames : GPU_META_FRAMES;
  for (uint32_t i = 0; i < n; i++) {
    const strobe__gpu_frame_rec *f = &g->frames[i];
    const double t[5] = {f->cpu_end, f->submit, f->gpu_begin, f->gpu_end, f->fence_seen};
    json_t *row = json_array();
    json_array_append_new(row, json_real((double)f->frame_id));
    for (int k = 0; k < 5; k++) json_array_append_new(row, num_or_null(t[k] - b->t0));
    json_array_append_new(row, json_real(f->bound_ns));
    json_array_append_new(row, json_integer(f->violations));
    json_array_append_new(rows, row);
  }
  return json_pack("{s:[s,s,s,s,s,s,s,s],s:o,s:I,s:I,s:I,s:I,s:I,s:o,s:o,s:o}", "columns", "frame_id", "cpu_end",
                   "submit", "gpu_begin", "gpu_end", "fence_seen", "bound", "violations", "frames", rows,
                   "frames_cut", (json_int_t)(g->n_frames - n), "spans", (json_int_t)(g->n_spans - g->n_lane_spans), "unmapped",
                   (json_int_t)g->unmapped, "frames_checked", (json_int_t)g->checked, "frames_violating",
                   (json_int_t)g->violated, "queue_backlog", gap_json(&g->backlog), "polling_latency",
                   gap_json(&g->polling), "gpu_time", gap_json(&g->gpu_time));
}

static int build_meta(builder *b, const strobe__vsource *src, uint64_t generation) {
  counters_to_totals(b, b->cap);
  json_t *root = json_object();
  meta_identity(root, b, src, generation);
  meta_completeness(root, b);
  json_object_set_new(root, "threads", threads_json(b));
  json_object_set_new(root, "gpu", gpu_json(b));
  meta_sites(root, b);
  int rc = meta_finish(root, b->m);
  json_decref(root);
  return rc;
}

/* ======================================================================
 * >>api
 * ====================================================================== */

static void builder_free(builder *b) {
  for (uint32_t i = 0; i < b->nth; i++) {
    free(b->th[i].cnt);
    free(b->th[i].base);
    free(b->th[i].stack);
  }
  free(b->th);
  free(b->samples_per_site);
  free(b->sample_next);
  free(b->sample_first);
  free(b->stats);
  free(b->vals);
  free(b->cums);
  free(b->elems);
  json_decref(b->trees);
  strobe__vsamples_free(&b->vs);
  json_decref(b->deeps);
  json_decref(b->attachments);
  free(b->stored);
  free(b->frames);
  free(b->remotes);
  free(b->handoffs);
  free(b->opevs);
  free(b->runs);
  for (uint32_t i = 0; i < b->n_procs; i++) free(b->procs[i]);
  free(b->ocounters);
  for (uint32_t i = 0; i < b->n_opc; i++) free(b->opc_names[i]);
  for (uint32_t i = 0; i < b->n_windows; i++) free(b->windows[i]);
  for (uint32_t i = 0; i < b->gpu.n_lanes; i++) free(b->gpu_names[i][0]), free(b->gpu_names[i][1]);
  strobe__gpu_free(&b->gpu);
  free(b->gpu_depth);
  strobe_capture_close(b->cap);
  strobe_frames_destroy(b->fx);
  free(b->fx_of_row);
  free(b->row_of_fx);
}

static int prepare_pass2(builder *b) {
  strobe__vmodel *m = b->m;
  /* spans: buckets in (thread, depth) order */
  if (table_alloc(&m->tables[STROBE__VT_SPANS], "spans", (uint32_t)b->spans, SPAN_COLS, SP_NCOLS)) return STROBE_ENOMEM;
  strobe__vtable *spt = &m->tables[STROBE__VT_SPANS];
  memset(COL(spt, SP_FRAME, uint32_t), 0xff, (size_t)spt->rows * sizeof(uint32_t)); /* NO_SPAN until filled */
  uint32_t next = 0;
  for (uint32_t i = 0; i < b->nth; i++) {
    vthread *t = &b->th[i];
    t->base = calloc((size_t)t->ndepth + 1, sizeof *t->base);
    if (!t->base) return STROBE_ENOMEM;
    for (uint32_t d = 0; d < t->ndepth; d++) {
      t->base[d] = next;
      next += t->cnt[d];
      t->cnt[d] = 0;
    }
    t->base[t->ndepth] = next;
    t->cur = 0;
    t->marks = 0;
  }
  /* every lane row's first span, for the live append's check (strobe__vmodel_spans_since) */
  uint32_t nrows = 0;
  for (uint32_t i = 0; i < b->nth; i++)
    for (uint32_t d = 0; d < b->th[i].ndepth; d++) nrows += b->th[i].base[d + 1] > b->th[i].base[d];
  m->row_first = malloc(((size_t)nrows + 1) * sizeof *m->row_first);
  if (!m->row_first) return STROBE_ENOMEM;
  m->mapped_first = strobe__gpu_lanes_present(&b->gpu) && b->nth_cpu < b->nth ? b->th[b->nth_cpu].base[0] : next;
  for (uint32_t i = 0; i < b->nth; i++)
    for (uint32_t d = 0; d < b->th[i].ndepth; d++)
      if (b->th[i].base[d + 1] > b->th[i].base[d]) m->row_first[m->nrows++] = b->th[i].base[d];
  /* samples: per-site runs */
  uint32_t at = 0;
  for (uint32_t s = 0; s < MAX_SITES; s++) {
    b->sample_first[s] = b->sample_next[s] = at;
    at += b->samples_per_site[s];
  }
  for (uint32_t k = 0; k < b->n_opc; k++) { /* operation counters: runs after the sites' */
    b->opc_first[k] = b->opc_next[k] = at;
    at += b->opc_samples[k];
  }
  if (table_alloc(&m->tables[STROBE__VT_GPUSPANS], "gpuspans", (uint32_t)b->n_gpu_spans, GPUSPAN_COLS, 2) ||
      table_alloc(&m->tables[STROBE__VT_SAMPLES], "samples", (uint32_t)b->n_samples, SAMPLE_COLS, 3) ||
      table_alloc(&m->tables[STROBE__VT_OPEN], "open", (uint32_t)b->n_open, OPEN_COLS, 6))
    return STROBE_ENOMEM;
  b->elems = malloc(((size_t)b->n_elements + 1) * sizeof *b->elems);
  b->trees = json_array();
  b->deeps = json_array();
  b->attachments = json_array();
  if (!b->elems || !b->trees || !b->deeps || !b->attachments) return STROBE_ENOMEM;
  b->vals = malloc(((size_t)b->n_values + 1) * sizeof *b->vals);
  b->cums = malloc(((size_t)b->n_cumul + 1) * sizeof *b->cums);
  b->ocounters = malloc(((size_t)b->n_op_counters + 1) * sizeof *b->ocounters);
  if (!b->vals || !b->cums || !b->ocounters) return STROBE_ENOMEM;
  return 0;
}

int strobe__vmodel_build(const strobe__vsource *src, uint32_t max_spans, uint64_t generation, strobe__vmodel **out) {
  if (!src || !out || !max_spans || (!src->path && !src->data)) return STROBE_EINVAL;
  *out = NULL;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  builder b;
  memset(&b, 0, sizeof b);
  b.src = src;
  b.max_spans = max_spans;
  b.range_lo = INFINITY;
  b.range_hi = -INFINITY;
  b.samples_per_site = calloc(MAX_SITES, sizeof *b.samples_per_site);
  b.sample_next = calloc(MAX_SITES, sizeof *b.sample_next);
  b.sample_first = calloc(MAX_SITES, sizeof *b.sample_first);
  b.stats = calloc(MAX_SITES, sizeof *b.stats);
  b.m = calloc(1, sizeof *b.m);
  int rc = strobe_frames_create(NULL, &b.fx);
  if (rc) goto fail;
  rc = STROBE_ENOMEM;
  if (!b.samples_per_site || !b.sample_next || !b.sample_first || !b.stats || !b.m) goto fail;
  b.m->refs = 1;
  rc = pass1(&b);
  if (rc) goto fail;
  rc = prepare_pass2(&b);
  if (rc) goto fail;
  rc = pass2(&b);
  if (rc) goto fail;
  rc = finish(&b);
  if (rc) goto fail;
  rc = build_meta(&b, src, generation);
  if (rc) goto fail;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  b.m->spans = b.spans;
  b.m->spans_cut = b.spans_cut;
  b.m->frames = b.nframes;
  b.m->samples = b.n_samples;
  b.m->build_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
  b.m->read_error = b.read_error;
  *out = b.m;
  b.m = NULL;
  builder_free(&b);
  return 0;
fail:
  strobe__vmodel_release(b.m);
  builder_free(&b);
  return rc;
}

strobe__vmodel *strobe__vmodel_retain(strobe__vmodel *m) {
  if (m) __atomic_fetch_add(&m->refs, 1, __ATOMIC_RELAXED);
  return m;
}

void strobe__vmodel_release(strobe__vmodel *m) {
  if (!m || __atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
  for (int i = 0; i < STROBE__VT_COUNT; i++) free(m->tables[i].data);
  for (uint32_t i = 0; i < m->nblobs; i++) free(m->blobs[i].data);
  free(m->row_first);
  free(m->meta);
  free(m);
}

const strobe__vblob *strobe__vmodel_blob(const strobe__vmodel *m, uint32_t k) {
  return m && k < m->nblobs ? &m->blobs[k] : NULL;
}

const strobe__vtable *strobe__vmodel_table(const strobe__vmodel *m, const char *name) {
  if (!m || !name) return NULL;
  for (int i = 0; i < STROBE__VT_COUNT; i++)
    if (m->tables[i].name && !strcmp(m->tables[i].name, name)) return &m->tables[i];
  return NULL;
}

/* The live append's spans (viewer_model.h): those ending after `since`, each row's first and every span of the
 * mapped lanes, with their index. */
int strobe__vmodel_spans_since(const strobe__vmodel *m, double since, unsigned char **out, size_t *len) {
  if (!m || !out || !len || since != since) return STROBE_EINVAL;
  *out = NULL;
  *len = 0;
  const strobe__vtable *t = &m->tables[STROBE__VT_SPANS];
  const double *start = COL(t, SP_START, double);
  const float *dur = COL(t, SP_DUR, float), *self = COL(t, SP_SELF, float);
  const uint16_t *site = COL(t, SP_SITE, uint16_t);
  const uint8_t *depth = COL(t, SP_DEPTH, uint8_t);
  uint32_t n = 0, r = 0;
  for (uint32_t i = 0; i < t->rows; i++) {
    int first = r < m->nrows && m->row_first[r] == i;
    r += first;
    n += first || i >= m->mapped_first || start[i] + dur[i] > since;
  }
  size_t off[7], at = 8;
  const size_t width[7] = {8, 4, 4, 4, 2, 1, 4};
  for (int c = 0; c < 7; c++) {
    off[c] = at;
    at += align8((size_t)(c == 6 ? t->rows : n) * width[c]); /* frame: every span's, as owners renumber */
  }
  unsigned char *p = calloc(1, at);
  if (!p) return STROBE_ENOMEM;
  memcpy(p, &n, 4);
  memcpy(p + 4, &t->rows, 4);
  uint32_t k = 0;
  r = 0;
  for (uint32_t i = 0; i < t->rows; i++) {
    int first = r < m->nrows && m->row_first[r] == i;
    r += first;
    if (!first && i < m->mapped_first && !(start[i] + dur[i] > since)) continue;
    memcpy(p + off[0] + 8 * (size_t)k, &start[i], 8);
    memcpy(p + off[1] + 4 * (size_t)k, &dur[i], 4);
    memcpy(p + off[2] + 4 * (size_t)k, &self[i], 4);
    memcpy(p + off[3] + 4 * (size_t)k, &i, 4);
    memcpy(p + off[4] + 2 * (size_t)k, &site[i], 2);
    p[off[5] + k] = depth[i];
    k++;
  }
  if (t->rows) memcpy(p + off[6], COL(t, SP_FRAME, uint32_t), (size_t)t->rows * 4);
  *out = p;
  *len = at;
  return 0;
}
