/*
 * cmd_query.c — `strobe query FILE [--attach NAME=FILE]... 'SELECT ...'
 * [--csv | --json]`: SQL over captures (docs/query.md) with SQLite, linked
 * by the CLI only (never by the library: tools/CMakeLists.txt).
 *
 * Each capture is one schema (`main`, or NAME for --attach): frames and
 * stages are virtual tables read from the frame model in place; the
 * capture's definitions (processes, threads, sites, gpu_spans, gpu_frames)
 * are loaded, small; the tables of events (spans, samples, switches,
 * counters, values) are virtual tables that stream from the capture reader
 * at each scan, so memory is bounded by the model and the definitions,
 * never by the events.
 *
 * Owns: the schema, its loading and the streaming cursors. Must never: copy
 * a capture's events into memory, decide what a frame is or which spans it
 * owns (the frame model does: strobe/frames.h), or hide that a name is a
 * run-time name (sites.content, docs/query.md §Content).
 *
 * Contents: >>context >>stream >>model >>load >>output >>main
 */
#include "cli.h"

#if STROBE_CLI_HAVE_SQLITE
#include <getopt.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/gpu_frames.h"
#include "exports/export.h"
#include "format/json_writer.h"
#include "strobe/frames.h"

/* >>context: one capture, open for its definitions, with its frame model. */
#define MAX_CAPTURES 8 /* main and up to 7 --attach */

typedef struct qcap {
  const char *path;
  strobe_capture *cap;   /* read to its end: sites, threads, functions, merge block */
  strobe_frames *fx;
  strobe__gpu_data gpu;
} qcap;

static qcap g_caps[MAX_CAPTURES];
static int g_ncaps;

static int load_capture(qcap *q, const char *path) {
  q->path = path;
  int rc = strobe_capture_open(path, &q->cap);
  if (!rc) rc = strobe_frames_create(NULL, &q->fx);
  const strobe_capture_record *r;
  int n = 0;
  while (!rc && (n = strobe_capture_next_batch(q->cap, &r)) > 0)
    for (int i = 0; i < n && !rc; i++) {
      rc = strobe_frames_add(q->fx, q->cap, &r[i]);
      strobe__gpu_record(&q->gpu, &r[i]);
    }
  if (!rc && n < 0) rc = n;
  if (!rc) rc = strobe_frames_finish(q->fx, q->cap);
  if (!rc) strobe__gpu_resolve(&q->gpu, q->cap);
  return rc;
}

static void free_captures(void) {
  for (int i = 0; i < g_ncaps; i++) {
    strobe__gpu_free(&g_caps[i].gpu);
    strobe_frames_destroy(g_caps[i].fx);
    strobe_capture_close(g_caps[i].cap);
  }
  g_ncaps = 0;
}

static const char *site_name(const qcap *q, uint32_t id) {
  const strobe_capture_site *s = strobe_capture_query_site(q->cap, id);
  return s ? s->name : NULL;
}

/* >>stream: a virtual table per event kind, each scan a fresh read of the capture. */
typedef enum { T_SPANS, T_SAMPLES, T_SWITCHES, T_COUNTERS, T_VALUES, T_LOCKS, T_COUNT } stream_kind;

static const struct {
  const char *name, *schema;
  uint64_t records;
} g_streams[T_COUNT] = {
    [T_SPANS] = {"spans",
                 "CREATE TABLE x(thread INTEGER, depth INTEGER, site INTEGER, name TEXT, start_ns REAL, dur_ns REAL,"
                 " self_ns REAL, end_ns REAL, frame INTEGER, unwound INTEGER)",
                 1ull << STROBE_REC_END},
    [T_SAMPLES] = {"samples",
                   "CREATE TABLE x(thread INTEGER, os_tid INTEGER, time_ns REAL, function TEXT, stack TEXT,"
                   " frame INTEGER)",
                   1ull << STROBE_REC_SAMPLE},
    [T_SWITCHES] = {"switches", "CREATE TABLE x(thread INTEGER, os_tid INTEGER, time_ns REAL, out INTEGER,"
                                " preempted INTEGER)",
                    1ull << STROBE_REC_SWITCH},
    [T_COUNTERS] = {"counters", "CREATE TABLE x(thread INTEGER, site INTEGER, name TEXT, kind TEXT, time_ns REAL,"
                                " value REAL, frame INTEGER)",
                    1ull << STROBE_REC_COUNTER | 1ull << STROBE_REC_GAUGE},
    [T_VALUES] = {"values", "CREATE TABLE x(thread INTEGER, site INTEGER, name TEXT, depth INTEGER, value REAL)",
                  1ull << STROBE_REC_VALUE},
    [T_LOCKS] = {"lock_events", "CREATE TABLE x(thread INTEGER, site INTEGER, name TEXT, event TEXT, time_ns REAL,"
                                " frame INTEGER)",
                 1ull << STROBE_REC_LOCK_WAIT | 1ull << STROBE_REC_LOCK_ACQUIRED | 1ull << STROBE_REC_LOCK_RELEASED},
};

typedef struct stream_vtab {
  sqlite3_vtab base;
  stream_kind kind;
  qcap *q;
} stream_vtab;

typedef struct stream_cursor {
  sqlite3_vtab_cursor base;
  strobe_capture *cap;
  const strobe_capture_record *batch;
  int n, i;
  sqlite3_int64 rowid;
  int eof;
  char *stack;           /* the current sample's stack text, built on demand */
  size_t stack_cap;
} stream_cursor;

static int stream_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err) {
  (void)aux;
  if (argc != 5) return *err = sqlite3_mprintf("strobe_stream(KIND, CAPTURE)"), SQLITE_ERROR;
  int kind = -1, cap = atoi(argv[4]);
  for (int k = 0; k < T_COUNT; k++)
    if (!strcmp(argv[3], g_streams[k].name)) kind = k;
  if (kind < 0 || cap < 0 || cap >= g_ncaps) return *err = sqlite3_mprintf("no such stream"), SQLITE_ERROR;
  int rc = sqlite3_declare_vtab(db, g_streams[kind].schema);
  if (rc) return rc;
  stream_vtab *v = sqlite3_malloc(sizeof *v);
  if (!v) return SQLITE_NOMEM;
  memset(v, 0, sizeof *v);
  v->kind = (stream_kind)kind;
  v->q = &g_caps[cap];
  *out = &v->base;
  return SQLITE_OK;
}

static int stream_disconnect(sqlite3_vtab *v) {
  sqlite3_free(v);
  return SQLITE_OK;
}

static int stream_best_index(sqlite3_vtab *v, sqlite3_index_info *info) {
  (void)v;
  info->estimatedCost = 1e9; /* a full read of the capture, every time */
  info->estimatedRows = 1000000;
  return SQLITE_OK;
}

static int stream_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out) {
  stream_cursor *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  (void)v;
  *out = &c->base;
  return SQLITE_OK;
}

static int stream_close(sqlite3_vtab_cursor *cur) {
  stream_cursor *c = (stream_cursor *)cur;
  strobe_capture_close(c->cap);
  free(c->stack);
  sqlite3_free(c);
  return SQLITE_OK;
}

static int stream_next(sqlite3_vtab_cursor *cur) {
  stream_cursor *c = (stream_cursor *)cur;
  stream_vtab *v = (stream_vtab *)cur->pVtab;
  uint64_t want = g_streams[v->kind].records;
  for (;;) {
    if (++c->i >= c->n) {
      c->n = strobe_capture_next_batch(c->cap, &c->batch);
      c->i = 0;
      if (c->n <= 0) {
        c->eof = 1;
        if (c->n < 0) {
          sqlite3_free(v->base.zErrMsg);
          v->base.zErrMsg = sqlite3_mprintf("%s: %s", v->q->path, strobe_strerror(c->n));
          return SQLITE_ERROR;
        }
        return SQLITE_OK;
      }
    }
    if (want & (1ull << c->batch[c->i].type)) break;
  }
  c->rowid++;
  return SQLITE_OK;
}

static int stream_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxs, int argc, sqlite3_value **argv) {
  (void)idx, (void)idxs, (void)argc, (void)argv;
  stream_cursor *c = (stream_cursor *)cur;
  stream_vtab *v = (stream_vtab *)cur->pVtab;
  strobe_capture_close(c->cap);
  c->cap = NULL;
  c->n = c->i = 0, c->eof = 0, c->rowid = 0;
  int rc = strobe_capture_open(v->q->path, &c->cap);
  if (rc) {
    sqlite3_free(v->base.zErrMsg);
    v->base.zErrMsg = sqlite3_mprintf("%s: %s", v->q->path, strobe_strerror(rc));
    return SQLITE_ERROR;
  }
  strobe_capture_set_records(c->cap, g_streams[v->kind].records);
  c->i = -1;
  return stream_next(cur);
}

static int stream_eof(sqlite3_vtab_cursor *cur) { return ((stream_cursor *)cur)->eof; }

static int stream_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out) {
  *out = ((stream_cursor *)cur)->rowid;
  return SQLITE_OK;
}

static const char *function_name(const strobe_capture *cap, uint32_t id) {
  const strobe_capture_function *f = strobe_capture_query_function(cap, id);
  return f ? f->name : "?";
}

/* A sample's stack as folded text, root first: "main;layout;row_layout". */
static const char *stack_text(stream_cursor *c, const strobe_capture_sample *s) {
  size_t len = 0;
  for (uint32_t k = s->nframes; k-- > 0;) {
    const char *name = function_name(c->cap, s->frames[k]);
    size_t need = len + strlen(name) + 2;
    if (need > c->stack_cap) {
      char *p = realloc(c->stack, need * 2);
      if (!p) return NULL;
      c->stack = p, c->stack_cap = need * 2;
    }
    len += (size_t)sprintf(c->stack + len, "%s%s", len ? ";" : "", name);
  }
  return len ? c->stack : "";
}

static void result_frame(sqlite3_context *ctx, const qcap *q, uint32_t thread, double t) {
  uint32_t f = strobe_frames_owner(q->fx, thread, t);
  if (f == STROBE_FRAMES_NONE) sqlite3_result_null(ctx);
  else sqlite3_result_int64(ctx, f);
}

static void result_text(sqlite3_context *ctx, const char *s) {
  if (s) sqlite3_result_text(ctx, s, -1, SQLITE_TRANSIENT);
  else sqlite3_result_null(ctx);
}

static const char *rec_site_name(const stream_cursor *c, uint32_t site) {
  const strobe_capture_site *s = strobe_capture_query_site(c->cap, site);
  return s ? s->name : NULL;
}

static void span_column(stream_cursor *c, const qcap *q, const strobe_capture_record *r, sqlite3_context *ctx, int col) {
  double begin = r->time_ns - r->duration_ns;
  switch (col) {
    case 0: sqlite3_result_int64(ctx, r->thread); break;
    case 1: sqlite3_result_int64(ctx, r->depth); break;
    case 2: sqlite3_result_int64(ctx, r->site); break;
    case 3: result_text(ctx, rec_site_name(c, r->site)); break;
    case 4: sqlite3_result_double(ctx, begin); break;
    case 5: sqlite3_result_double(ctx, r->duration_ns); break;
    case 6: sqlite3_result_double(ctx, r->self_ns); break;
    case 7: sqlite3_result_double(ctx, r->time_ns); break;
    case 8: result_frame(ctx, q, r->thread, begin); break;
    default: sqlite3_result_int(ctx, r->unwound); break;
  }
}

static int stream_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  stream_cursor *c = (stream_cursor *)cur;
  stream_vtab *v = (stream_vtab *)cur->pVtab;
  const strobe_capture_record *r = &c->batch[c->i];
  const strobe_capture_sample *s = r->sample;
  if (v->kind == T_SPANS) {
    span_column(c, v->q, r, ctx, col);
  } else if (v->kind == T_SAMPLES || v->kind == T_SWITCHES) {
    if (col == 0) sqlite3_result_int64(ctx, r->thread);
    else if (col == 1) sqlite3_result_int64(ctx, (sqlite3_int64)s->os_tid);
    else if (col == 2) sqlite3_result_double(ctx, r->time_ns);
    else if (v->kind == T_SWITCHES) sqlite3_result_int(ctx, col == 3 ? s->out : s->preempted);
    else if (col == 3) result_text(ctx, s->nframes ? function_name(c->cap, s->frames[0]) : NULL);
    else if (col == 4) result_text(ctx, stack_text(c, s));
    else result_frame(ctx, v->q, r->thread, r->time_ns);
  } else if (col < 3) {
    if (col == 0) sqlite3_result_int64(ctx, r->thread);
    else if (col == 1) sqlite3_result_int64(ctx, r->site);
    else result_text(ctx, rec_site_name(c, r->site));
  } else if (v->kind == T_VALUES) {
    if (col == 3) sqlite3_result_int64(ctx, r->depth);
    else sqlite3_result_double(ctx, r->value);
  } else if (v->kind == T_LOCKS) {
    if (col == 3)
      result_text(ctx, r->type == STROBE_REC_LOCK_WAIT ? "wait" : r->type == STROBE_REC_LOCK_ACQUIRED ? "acquired" : "released");
    else if (col == 4) sqlite3_result_double(ctx, r->time_ns);
    else result_frame(ctx, v->q, r->thread, r->time_ns);
  } else {
    if (col == 3) result_text(ctx, r->type == STROBE_REC_COUNTER ? "counter" : "gauge");
    else if (col == 4) sqlite3_result_double(ctx, r->time_ns);
    else if (col == 5) sqlite3_result_double(ctx, r->value);
    else result_frame(ctx, v->q, r->thread, r->time_ns);
  }
  return SQLITE_OK;
}

static sqlite3_module g_stream_module = {
    .iVersion = 0,
    .xCreate = stream_connect,
    .xConnect = stream_connect,
    .xBestIndex = stream_best_index,
    .xDisconnect = stream_disconnect,
    .xDestroy = stream_disconnect,
    .xOpen = stream_open,
    .xClose = stream_close,
    .xFilter = stream_filter,
    .xNext = stream_next,
    .xEof = stream_eof,
    .xColumn = stream_column,
    .xRowid = stream_rowid,
};

/* >>model: frames and stages, read from the frame model in place (a row per frame, per frame's stage). */
typedef struct model_vtab {
  sqlite3_vtab base;
  int stages;            /* 0: frames, 1: stages */
  const qcap *q;
} model_vtab;

typedef struct model_cursor {
  sqlite3_vtab_cursor base;
  uint32_t i, k;         /* the frame, and (stages) its stage */
} model_cursor;

static int model_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err) {
  (void)aux;
  int cap = argc == 5 ? atoi(argv[4]) : -1, stages = argc == 5 && !strcmp(argv[3], "stages");
  if (cap < 0 || cap >= g_ncaps || (!stages && strcmp(argv[3], "frames")))
    return *err = sqlite3_mprintf("strobe_model(frames|stages, CAPTURE)"), SQLITE_ERROR;
  int rc = sqlite3_declare_vtab(db, stages ?
      "CREATE TABLE x(frame INTEGER, site INTEGER, name TEXT, parent INTEGER, parent_name TEXT, parent_known INTEGER,"
      " process TEXT, count INTEGER, total_ns REAL, min_ns REAL, max_ns REAL)" :
      "CREATE TABLE x(id INTEGER, kind TEXT, number INTEGER, state TEXT, counted INTEGER, series TEXT, window TEXT,"
      " process TEXT, end_process TEXT, thread INTEGER, end_thread INTEGER, begin_ns REAL, end_ns REAL, dur_ns REAL,"
      " handed_off_ns REAL, resumed_ns REAL, detail INTEGER)");
  if (rc) return rc;
  model_vtab *v = sqlite3_malloc(sizeof *v);
  if (!v) return SQLITE_NOMEM;
  memset(v, 0, sizeof *v);
  v->stages = stages;
  v->q = &g_caps[cap];
  *out = &v->base;
  return SQLITE_OK;
}

static int model_best_index(sqlite3_vtab *vt, sqlite3_index_info *info) {
  model_vtab *v = (model_vtab *)vt;
  info->estimatedRows = strobe_frames_query_count(v->q->fx) + 1;
  info->estimatedCost = (double)info->estimatedRows;
  return SQLITE_OK;
}

static int model_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out) {
  (void)v;
  model_cursor *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SQLITE_OK;
}

static int model_close(sqlite3_vtab_cursor *c) {
  sqlite3_free(c);
  return SQLITE_OK;
}

/* Stages: on to the next frame with a stage left. */
static void model_settle(model_cursor *c, const model_vtab *v) {
  uint32_t n, count = strobe_frames_query_count(v->q->fx);
  while (v->stages && c->i < count && (strobe_frames_query_stages(v->q->fx, c->i, &n), c->k >= n)) c->i++, c->k = 0;
}

static int model_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxs, int argc, sqlite3_value **argv) {
  (void)idx, (void)idxs, (void)argc, (void)argv;
  model_cursor *c = (model_cursor *)cur;
  c->i = c->k = 0;
  model_settle(c, (model_vtab *)cur->pVtab);
  return SQLITE_OK;
}

static int model_next(sqlite3_vtab_cursor *cur) {
  model_cursor *c = (model_cursor *)cur;
  model_vtab *v = (model_vtab *)cur->pVtab;
  if (v->stages) c->k++;
  else c->i++;
  model_settle(c, v);
  return SQLITE_OK;
}

static int model_eof(sqlite3_vtab_cursor *cur) {
  return ((model_cursor *)cur)->i >= strobe_frames_query_count(((model_vtab *)cur->pVtab)->q->fx);
}

static int model_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out) {
  model_cursor *c = (model_cursor *)cur;
  *out = (sqlite3_int64)c->i << 8 | c->k; /* at most 32 stages per operation (strobe/capture.h) */
  return SQLITE_OK;
}

static void result_time(sqlite3_context *ctx, double ns) { /* 0 and NaN: not known */
  if (ns == 0 || isnan(ns)) sqlite3_result_null(ctx);
  else sqlite3_result_double(ctx, ns);
}

static void frame_column(const strobe_frames *fx, uint32_t i, sqlite3_context *ctx, int col) {
  const strobe_frame *f = strobe_frames_query_frame(fx, i);
  const strobe_frame_series *s = strobe_frames_query_series(fx, f->series);
  switch (col) {
    case 0: sqlite3_result_int64(ctx, i); break;
    case 1: result_text(ctx, f->kind ? strobe_op_kind_name(f->kind) : "frame"); break;
    case 2: sqlite3_result_int64(ctx, (sqlite3_int64)f->number); break;
    case 3: result_text(ctx, strobe_frames_state_name(f->state)); break;
    case 4: sqlite3_result_int(ctx, f->counted); break;
    case 5: result_text(ctx, s ? s->name : NULL); break;
    case 6: result_text(ctx, f->window); break;
    case 7: result_text(ctx, strobe_frames_query_process(fx, f->process)); break;
    case 8: result_text(ctx, strobe_frames_query_process(fx, f->end_process)); break;
    case 9: sqlite3_result_int64(ctx, f->thread); break;
    case 10:
      if (f->end_thread == STROBE_FRAMES_NONE) sqlite3_result_null(ctx);
      else sqlite3_result_int64(ctx, f->end_thread);
      break;
    case 11: sqlite3_result_double(ctx, f->begin_ns); break;
    case 12: result_time(ctx, f->end_ns); break;
    case 13: result_time(ctx, f->end_ns ? f->end_ns - f->begin_ns : 0); break;
    case 14: result_time(ctx, f->handed_off_ns); break;
    case 15: result_time(ctx, f->resumed_ns); break;
    default: sqlite3_result_int(ctx, f->detail); break;
  }
}

static void stage_column(const qcap *q, uint32_t i, uint32_t k, sqlite3_context *ctx, int col) {
  uint32_t n;
  const strobe_frame_stage *s = &strobe_frames_query_stages(q->fx, i, &n)[k];
  switch (col) {
    case 0: sqlite3_result_int64(ctx, i); break;
    case 1: sqlite3_result_int64(ctx, s->site); break;
    case 2: result_text(ctx, site_name(q, s->site)); break;
    case 3: s->parent ? sqlite3_result_int64(ctx, s->parent) : sqlite3_result_null(ctx); break;
    case 4: result_text(ctx, s->parent ? site_name(q, s->parent) : NULL); break;
    case 5: sqlite3_result_int(ctx, s->parent_known); break;
    case 6: result_text(ctx, strobe_frames_query_process(q->fx, s->process)); break;
    case 7: sqlite3_result_int64(ctx, s->count); break;
    case 8: sqlite3_result_double(ctx, s->total_ns); break;
    case 9: sqlite3_result_double(ctx, s->min_ns); break;
    default: sqlite3_result_double(ctx, s->max_ns); break;
  }
}

static int model_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  model_cursor *c = (model_cursor *)cur;
  model_vtab *v = (model_vtab *)cur->pVtab;
  if (v->stages) stage_column(v->q, c->i, c->k, ctx, col);
  else frame_column(v->q->fx, c->i, ctx, col);
  return SQLITE_OK;
}

static sqlite3_module g_model_module = {
    .iVersion = 0,
    .xCreate = model_connect,
    .xConnect = model_connect,
    .xBestIndex = model_best_index,
    .xDisconnect = stream_disconnect,
    .xDestroy = stream_disconnect,
    .xOpen = model_open,
    .xClose = model_close,
    .xFilter = model_filter,
    .xNext = model_next,
    .xEof = model_eof,
    .xColumn = model_column,
    .xRowid = model_rowid,
};

/* >>load: the small tables, copied from the frame model and the capture's definitions. */
static const char g_schema[] =
    "CREATE TABLE @.processes(id INTEGER PRIMARY KEY, name TEXT);"
    "CREATE TABLE @.threads(id INTEGER PRIMARY KEY, os_tid INTEGER, name TEXT, fiber INTEGER, events INTEGER,"
    " lost INTEGER, ended INTEGER);"
    "CREATE TABLE @.sites(id INTEGER PRIMARY KEY, kind TEXT, name TEXT, category TEXT, file TEXT, line INTEGER,"
    " function TEXT, parent TEXT, content INTEGER);"
    "CREATE TABLE @.gpu_spans(domain TEXT, queue TEXT, pass TEXT, site INTEGER, name TEXT, frame_id INTEGER,"
    " begin_ns REAL, end_ns REAL, dur_ns REAL, bound_ns REAL, producer INTEGER);"
    "CREATE TABLE @.gpu_frames(frame_id INTEGER, cpu_end_ns REAL, submit_ns REAL, gpu_begin_ns REAL,"
    " gpu_end_ns REAL, fence_seen_ns REAL, backlog_ns REAL, polling_ns REAL, gpu_ns REAL);";

static void bind_text(sqlite3_stmt *st, int i, const char *s) {
  if (s) sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
  else sqlite3_bind_null(st, i);
}

static void bind_time(sqlite3_stmt *st, int i, double ns) { /* 0 and NaN: not known */
  if (ns == 0 || isnan(ns)) sqlite3_bind_null(st, i);
  else sqlite3_bind_double(st, i, ns);
}

static int step(sqlite3_stmt *st) {
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int load_definitions(sqlite3_stmt *const st[3], const qcap *q) {
  int rc = SQLITE_OK;
  for (uint32_t i = 0; i < strobe_frames_query_process_count(q->fx) && !rc; i++) {
    sqlite3_bind_int64(st[0], 1, i);
    bind_text(st[0], 2, strobe_frames_query_process(q->fx, i));
    rc = step(st[0]);
  }
  for (uint32_t i = 0; i < strobe_capture_query_thread_count(q->cap) && !rc; i++) {
    const strobe_capture_thread *t = strobe_capture_query_thread(q->cap, i);
    sqlite3_bind_int64(st[1], 1, i);
    sqlite3_bind_int64(st[1], 2, (sqlite3_int64)t->os_tid);
    bind_text(st[1], 3, t->name);
    sqlite3_bind_int(st[1], 4, t->fiber);
    sqlite3_bind_int64(st[1], 5, (sqlite3_int64)t->events);
    sqlite3_bind_int64(st[1], 6, (sqlite3_int64)t->lost);
    sqlite3_bind_int(st[1], 7, t->ended);
    rc = step(st[1]);
  }
  for (uint32_t id = 1; id < strobe_capture_query_site_limit(q->cap) && !rc; id++) {
    const strobe_capture_site *s = strobe_capture_query_site(q->cap, id);
    if (!s) continue;
    sqlite3_bind_int64(st[2], 1, id);
    bind_text(st[2], 2, cli_site_kind_name(s->kind));
    bind_text(st[2], 3, s->name);
    bind_text(st[2], 4, s->category);
    bind_text(st[2], 5, s->file);
    sqlite3_bind_int64(st[2], 6, s->line);
    bind_text(st[2], 7, s->function);
    bind_text(st[2], 8, s->parent);
    sqlite3_bind_int(st[2], 9, (s->flags & STROBE_SITE_INTERNED) != 0);
    rc = step(st[2]);
  }
  return rc;
}

static int load_gpu(sqlite3_stmt *const st[2], const qcap *q) {
  const strobe__gpu_data *g = &q->gpu;
  int rc = SQLITE_OK;
  for (uint32_t i = 0; i < g->n_spans && !rc; i++) {
    const strobe__gpu_span_rec *s = &g->spans[i];
    bind_text(st[0], 1, s->domain);
    bind_text(st[0], 2, s->queue);
    bind_text(st[0], 3, s->pass);
    sqlite3_bind_int64(st[0], 4, s->site);
    bind_text(st[0], 5, site_name(q, s->site));
    sqlite3_bind_int64(st[0], 6, (sqlite3_int64)s->frame_id);
    bind_time(st[0], 7, s->begin_ns);
    bind_time(st[0], 8, s->end_ns);
    bind_time(st[0], 9, s->end_ns - s->begin_ns);
    bind_time(st[0], 10, s->bound_ns);
    sqlite3_bind_int(st[0], 11, s->producer);
    rc = step(st[0]);
  }
  for (uint32_t i = 0; i < g->n_frames && !rc; i++) {
    const strobe__gpu_frame_rec *f = &g->frames[i];
    double v[8] = {f->cpu_end, f->submit, f->gpu_begin, f->gpu_end, f->fence_seen, f->gpu_begin - f->submit,
                   f->fence_seen - f->gpu_end, f->gpu_end - f->gpu_begin};
    sqlite3_bind_int64(st[1], 1, (sqlite3_int64)f->frame_id);
    for (int k = 0; k < 8; k++) /* NaN: not known; a gap may be 0 or negative (docs/gpu.md) */
      isnan(v[k]) ? sqlite3_bind_null(st[1], k + 2) : sqlite3_bind_double(st[1], k + 2, v[k]);
    rc = step(st[1]);
  }
  return rc;
}

/* g_schema with each "@" replaced by the schema name. */
static char *schema_for(const char *name) {
  size_t n = 0, len = strlen(name);
  for (const char *p = g_schema; *p; p++) n += *p == '@' ? len : 1;
  char *out = malloc(n + 1), *w = out;
  if (!out) return NULL;
  for (const char *p = g_schema; *p; p++) {
    if (*p != '@') *w++ = *p;
    else memcpy(w, name, len), w += len;
  }
  *w = 0;
  return out;
}

static int prepare_insert(sqlite3 *db, const char *schema, const char *table, int ncols, sqlite3_stmt **st) {
  char sql[512];
  int n = snprintf(sql, sizeof sql, "INSERT INTO \"%s\".%s VALUES(?", schema, table);
  for (int i = 1; i < ncols; i++) n += snprintf(sql + n, sizeof sql - (size_t)n, ",?");
  snprintf(sql + n, sizeof sql - (size_t)n, ")");
  return sqlite3_prepare_v2(db, sql, -1, st, NULL);
}

static int load_tables(sqlite3 *db, const char *schema, const qcap *q) {
  static const struct { const char *table; int ncols; } t[] = {{"processes", 2}, {"threads", 7}, {"sites", 9},
      {"gpu_spans", 11}, {"gpu_frames", 9}};
  sqlite3_stmt *st[5] = {0};
  int rc = SQLITE_OK;
  for (int i = 0; i < 5 && !rc; i++) rc = prepare_insert(db, schema, t[i].table, t[i].ncols, &st[i]);
  if (!rc) rc = load_definitions(st, q);
  if (!rc) rc = load_gpu(st + 3, q);
  for (int i = 0; i < 5; i++) sqlite3_finalize(st[i]);
  return rc;
}

/* One capture as schema `name`: main, or an in-memory database attached as name. */
static int add_schema(sqlite3 *db, const char *name, int index) {
  char sql[256];
  int rc = SQLITE_OK;
  if (strcmp(name, "main")) {
    char *q = sqlite3_mprintf("ATTACH ':memory:' AS \"%w\"", name);
    rc = q ? sqlite3_exec(db, q, NULL, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(q);
  }
  char *schema = rc ? NULL : schema_for(name);
  if (!rc) rc = schema ? sqlite3_exec(db, schema, NULL, NULL, NULL) : SQLITE_NOMEM;
  free(schema);
  for (int k = 0; k < T_COUNT + 2 && !rc; k++) {
    const char *table = k < T_COUNT ? g_streams[k].name : k == T_COUNT ? "frames" : "stages";
    snprintf(sql, sizeof sql, "CREATE VIRTUAL TABLE \"%s\".\"%s\" USING strobe_%s(%s, %d)", name, table,
             k < T_COUNT ? "stream" : "model", table, index);
    rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
  }
  if (!rc) rc = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
  if (!rc) rc = load_tables(db, name, &g_caps[index]);
  if (!rc) rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
  return rc;
}

/* >>output */
enum { OUT_TEXT, OUT_CSV, OUT_JSON };

static void row_out(FILE *f, sqlite3_stmt *st, int format, strobe__json *j) {
  int n = sqlite3_column_count(st);
  if (format == OUT_JSON) strobe__json_object(j, NULL);
  for (int i = 0; i < n; i++) {
    int type = sqlite3_column_type(st, i);
    const char *text = (const char *)sqlite3_column_text(st, i);
    if (format == OUT_JSON) {
      const char *key = sqlite3_column_name(st, i);
      if (type == SQLITE_NULL) strobe__json_null(j, key);
      else if (type == SQLITE_INTEGER) strobe__json_int(j, key, sqlite3_column_int64(st, i));
      else if (type == SQLITE_FLOAT) strobe__json_num(j, key, sqlite3_column_double(st, i), 6);
      else strobe__json_str(j, key, text);
      continue;
    }
    if (i) fputc(format == OUT_CSV ? ',' : '|', f);
    if (format == OUT_CSV) export_csv_field(f, text ? text : "");
    else fputs(text ? text : "NULL", f);
  }
  if (format == OUT_JSON) strobe__json_end(j);
  else fputc('\n', f);
}

static void header_out(FILE *f, sqlite3_stmt *st, int format) {
  for (int i = 0; i < sqlite3_column_count(st) && format != OUT_JSON; i++) {
    if (i) fputc(format == OUT_CSV ? ',' : '|', f);
    if (format == OUT_CSV) export_csv_field(f, sqlite3_column_name(st, i));
    else fputs(sqlite3_column_name(st, i), f);
  }
  if (format != OUT_JSON && sqlite3_column_count(st)) fputc('\n', f);
}

/* Runs every statement of sql; rows of each go out. Returns CLI_OK or CLI_USAGE (after a message). */
static int run_sql(sqlite3 *db, const char *sql, FILE *f, int format, strobe__json *j) {
  if (format == OUT_JSON) strobe__json_array(j, "rows");
  while (sql && *sql) {
    sqlite3_stmt *st = NULL;
    const char *tail = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, &tail);
    if (rc == SQLITE_OK && st) {
      header_out(f, st, format);
      while ((rc = sqlite3_step(st)) == SQLITE_ROW) row_out(f, st, format, j);
      if (rc == SQLITE_DONE) rc = SQLITE_OK;
    }
    if (rc) cli_error("query", "%s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    if (rc) return CLI_USAGE;
    sql = tail;
  }
  if (format == OUT_JSON) strobe__json_end(j);
  return CLI_OK;
}

/* >>main */
static const char g_usage[] =
    "usage: strobe query [--attach NAME=FILE]... [--csv | --json] [--quiet] FILE SQL\n"
    "\n"
    "Runs SQL (SQLite's) over a capture (docs/query.md). Tables: frames, stages, processes,\n"
    "threads, sites, gpu_spans, gpu_frames (loaded from the frame model and the capture's\n"
    "definitions) and spans, samples, switches, counters, \"values\" (streamed from the\n"
    "capture at each scan: memory does not grow with its events). Names a program made at\n"
    "run time are content: sites.content says which.\n"
    "\n"
    "  --attach NAME=FILE  another capture as schema NAME (NAME.frames, NAME.spans, ...),\n"
    "                      to compare captures in one query; up to 7\n"
    "  --csv               rows as CSV with a header line\n"
    "  --json              {\"rows\": [{column: value, ...}, ...]}\n"
    "  --quiet             no progress bar\n"
    "\n"
    "Exit: 0 ran, 1 a capture unreadable or damaged, 2 usage or an SQL error, 3 output.\n";

static int open_capture(const char *path, int quiet) {
  cli_input in; /* the CLI's words for a missing, foreign or damaged file */
  int rc = cli_need_file("query", path, "each scan of an event table reads the capture again");
  if (!rc) rc = cli_open(&in, "query", path, quiet);
  if (rc) return rc;
  cli_close(&in);
  if (g_ncaps == MAX_CAPTURES) return cli_usage_error("query", "at most %d captures", MAX_CAPTURES);
  int err = load_capture(&g_caps[g_ncaps++], path);
  if (err) {
    cli_error("query", "%s: %s", path, strobe_strerror(err));
    return CLI_FAIL;
  }
  return CLI_OK;
}

static int valid_name(const char *s, size_t n) {
  if (!n || n > 64) return 0;
  for (size_t i = 0; i < n; i++)
    if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (i && s[i] >= '0' && s[i] <= '9')))
      return 0;
  return strncmp(s, "main", n) && strncmp(s, "temp", n);
}

static int query_run(const char *const *names, int format, const char *sql) {
  sqlite3 *db = NULL;
  int rc = sqlite3_open(":memory:", &db);
  if (!rc) rc = sqlite3_create_module(db, "strobe_stream", &g_stream_module, NULL);
  if (!rc) rc = sqlite3_create_module(db, "strobe_model", &g_model_module, NULL);
  for (int i = 0; i < g_ncaps && !rc; i++) rc = add_schema(db, names[i], i);
  if (rc) {
    cli_error("query", "building the tables: %s", db ? sqlite3_errmsg(db) : "out of memory");
    sqlite3_close(db);
    return CLI_FAIL;
  }
  cli_output o;
  int out = cli_output_open(&o, "query", NULL);
  if (out) return sqlite3_close(db), out;
  strobe__json j = {0};
  if (format == OUT_JSON) strobe__json_object(&j, NULL);
  rc = run_sql(db, sql, o.f, format, &j);
  if (format == OUT_JSON) {
    strobe__json_end(&j);
    if (!rc) rc = cli_output_json(&o, &j);
    else strobe__buf_free(&j.out);
  }
  sqlite3_close(db);
  out = cli_output_close(&o);
  return rc ? rc : out;
}

int cmd_query(int argc, char **argv) {
  static const struct option opts[] = {{"attach", required_argument, NULL, 'a'}, {"csv", no_argument, NULL, 'c'},
                                       {"json", no_argument, NULL, 'j'},        {"quiet", no_argument, NULL, 'q'},
                                       {"help", no_argument, NULL, 'h'},        {0}};
  const char *attach[MAX_CAPTURES];
  int nattach = 0, format = OUT_TEXT, quiet = 0, ch;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
    switch (ch) {
      case 'a':
        if (nattach == MAX_CAPTURES - 1) return cli_usage_error("query", "at most %d --attach", MAX_CAPTURES - 1);
        attach[nattach++] = optarg;
        break;
      case 'c': format = format == OUT_JSON ? -1 : OUT_CSV; break;
      case 'j': format = format == OUT_CSV ? -1 : OUT_JSON; break;
      case 'q': quiet = 1; break;
      case 'h': fputs(g_usage, stdout); return CLI_OK;
      default: return cli_bad_option("query", argv, optind);
    }
  }
  if (format < 0) return cli_usage_error("query", "--csv and --json exclude each other");
  if (argc - optind != 2) return cli_usage_error("query", "expected a capture FILE and one SQL argument");
  char names[MAX_CAPTURES][65];
  const char *name_of[MAX_CAPTURES] = {"main"};
  int rc = open_capture(argv[optind], quiet);
  for (int i = 0; i < nattach && !rc; i++) {
    const char *eq = strchr(attach[i], '=');
    if (!eq || !valid_name(attach[i], (size_t)(eq - attach[i])) || !eq[1])
      rc = cli_usage_error("query", "--attach wants NAME=FILE, NAME a letter then letters, digits or _ "
                                    "(not main or temp): '%s'", attach[i]);
    else {
      snprintf(names[i], sizeof names[i], "%.*s", (int)(eq - attach[i]), attach[i]);
      name_of[i + 1] = names[i];
      rc = open_capture(eq + 1, quiet);
    }
  }
  if (!rc) rc = query_run(name_of, format, argv[optind + 1]);
  free_captures();
  return rc;
}

#else /* built without SQLite */

int cmd_query(int argc, char **argv) {
  (void)argc, (void)argv;
  cli_error("query", "this strobe was built without SQLite: install libsqlite3-dev (scripts/deps.sh) and build "
                     "again (docs/query.md)");
  return CLI_USAGE;
}

#endif
