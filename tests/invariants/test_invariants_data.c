/*
 * test_invariants_data.c — the invariants of data are checked, not only
 * stated (docs/invariants.md §Invariants of data): the capture reader's
 * records (format/capture_reader.h), the frame model's index
 * (analyze/frames_check.h) and, when the server is built, the viewer's model
 * (viewer/viewer_model.h). Built as test_invariants is, against a library
 * that checks them (tests/CMakeLists.txt >>invariants).
 *   - each check, given a record, an index or a model broken on purpose, in
 *     a forked child, aborts it with a message naming the condition and the
 *     function that checks it: a BEGIN at depth 0, a tree whose first node
 *     is no root, a draw call reading resource 0, a frame of an unknown
 *     state, frames out of begin order, a table whose columns overrun its
 *     bytes, a span owned by a frame the model does not have, a lane row
 *     whose starts go back;
 *   - the same data as the library made it passes: every record of a
 *     capture, its frame index and its viewer model are checked as they are
 *     built (strobe_capture_next, strobe_frames_finish, strobe__vmodel_build)
 *     and checked again here.
 * The capture is written by a child (its drain thread lives and dies
 * there), so this process forks its checking children before any thread of
 * its own starts (TSan does not follow a fork of a multithreaded process).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyze/frames_check.h"
#include "format/capture_reader.h"
#include "invariants/aborts.h"
#include "platform/invariant.h"
#include "strobe/capture.h"
#include "strobe/deep.h"
#include "strobe/frames.h"
#include "strobe/record.h"
#include "strobe/session.h"
#include "strobe/strobe.h"
#include "support/harness.h"
#ifdef STROBE_TEST_VIEWER_MODEL
#include "viewer/viewer_model.h"
#endif

#ifndef STROBE_DEBUG_ASSERTS
#error "test_invariants_data must be built with STROBE_DEBUG_ASSERTS, against a library built with it"
#endif

/* >>capture: five passes of a window, each with two nested scopes, written by a child. */
static char g_path[64];

static void write_capture(void) {
  strobe_collector *c = NULL;
  strobe_window w;
  strobe_recorder *r = NULL;
  if (strobe_collector_create(&c) || strobe_window_register(c, "main", 0, &w) ||
      strobe_record_start(&(strobe_record_desc){.path = g_path, .no_journal = 1}, &r))
    _exit(1);
  for (uint64_t i = 1; i <= 5; i++) {
    strobe_op op = strobe_op_begin_frame(c, w, i, NULL);
    {
      STROBE_SCOPE("invariants_paint");
      {
        STROBE_SCOPE("invariants_inner");
      }
    }
    strobe_op_end(op, 1);
  }
  _exit(strobe_record_stop(r) ? 1 : 0);
}

/* Writes the capture at g_path in a child; the case's cleanup removes it. */
static void make_capture(void) {
  snprintf(g_path, sizeof g_path, "/tmp/strobe-invariants-data-XXXXXX");
  int fd = mkstemp(g_path);
  REQUIRE(fd >= 0);
  close(fd);
  fflush(NULL);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) write_capture();
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The capture's first record of `type` (the capture stays open in *out). */
static strobe_capture_record first_of(strobe_capture **out, strobe_capture_record_type type) {
  strobe_capture_record r = {0};
  if (strobe_capture_open(g_path, out)) _exit(2);
  while (strobe_capture_next(*out, &r) > 0)
    if (r.type == type) return r;
  _exit(3); /* no such record: the child exits, and the case fails */
}

/* >>violations: each runs in a child that must not return. */
static void begin_at_depth_zero(void) {
  strobe_capture *c;
  strobe_capture_record r = first_of(&c, STROBE_REC_BEGIN);
  r.depth = 0;
  strobe__capture_check_record(c, &r);
}

static void tree_without_root(void) {
  strobe_capture *c;
  strobe_capture_record r = first_of(&c, STROBE_REC_BEGIN);
  strobe_capture_tree_node nodes[2] = {{.depth = 1}, {.depth = 2}};
  strobe_capture_tree t = {.nnodes = 2, .nodes = nodes};
  r.type = STROBE_REC_TREE;
  r.tree = &t;
  strobe__capture_check_record(c, &r);
}

static void draw_call_reads_resource_zero(void) {
  strobe_capture *c;
  strobe_capture_record r = first_of(&c, STROBE_REC_BEGIN);
  strobe_draw_ref ref = {0, STROBE_DEEP_GEOMETRY};
  strobe_capture_draw_call call = {.kind = "quad", .pipeline = "p", .pass = "main", .nrefs = 1, .refs = &ref};
  strobe_capture_deep d = {.seq = 1, .ncalls = 1, .calls = &call};
  r.type = STROBE_REC_DEEP;
  r.deep = &d;
  strobe__capture_check_record(c, &r);
}

static strobe_frames *open_frames(void) {
  strobe_frames *f = NULL;
  if (strobe_frames_open(g_path, NULL, &f) || strobe_frames_query_count(f) < 2) _exit(2);
  return f;
}

static void frame_of_unknown_state(void) {
  strobe_frames *f = open_frames();
  ((strobe_frame *)strobe_frames_query_frame(f, 0))->state = STROBE_FRAME_STATE_LIMIT;
  strobe__frames_check(f);
}

static void frames_out_of_order(void) {
  strobe_frames *f = open_frames();
  strobe_frame *second = (strobe_frame *)strobe_frames_query_frame(f, 1);
  second->begin_ns = strobe_frames_query_frame(f, 0)->begin_ns - 1e6;
  strobe__frames_check(f);
}

#ifdef STROBE_TEST_VIEWER_MODEL
static strobe__vmodel *build_model(void) {
  strobe__vmodel *m = NULL;
  if (strobe__vmodel_build(&(strobe__vsource){.path = g_path, .label = "t", .origin = "file"}, 1000, 1, &m)) _exit(2);
  return m;
}

static void columns_overrun_table(void) {
  strobe__vmodel *m = build_model();
  m->tables[STROBE__VT_SPANS].bytes += 8;
  strobe__vmodel_check(m);
}

static void span_of_missing_frame(void) {
  strobe__vmodel *m = build_model();
  strobe__vtable *sp = &m->tables[STROBE__VT_SPANS];
  const strobe__vtable *fr = strobe__vmodel_table(m, "frames");
  uint32_t *frame = NULL;
  for (uint32_t c = 0; c < sp->ncols; c++)
    if (!strcmp(sp->cols[c].name, "frame")) frame = (uint32_t *)(void *)(sp->data + sp->cols[c].offset);
  if (!frame || !sp->rows) _exit(2);
  frame[0] = fr->rows + 5;
  strobe__vmodel_check(m);
}

static void lane_row_goes_back(void) {
  strobe__vmodel *m = build_model();
  strobe__vtable *sp = &m->tables[STROBE__VT_SPANS];
  double *start = (double *)(void *)(sp->data + sp->cols[0].offset); /* "start", the first column */
  uint32_t a = m->nrows ? m->row_first[0] : 0, b = m->nrows > 1 ? m->row_first[1] : sp->rows;
  if (b < a + 2) _exit(2); /* the first row has five spans */
  double t = start[a];
  start[a] = start[a + 1];
  start[a + 1] = t - 1e6;
  strobe__vmodel_check(m);
}
#endif

/* Runs a violation against a fresh capture; it must abort naming cond and func. */
static void expect_abort(void (*fn)(void), const char *name, const char *cond, const char *func) {
  make_capture();
  CHECK(aborts_with(fn, name, cond, func));
  unlink(g_path);
}

/* >>cases: the forking ones first, while this process has no other thread. */
static void test_reader_begin_depth(void) {
  expect_abort(begin_at_depth_zero, "begin_at_depth_zero", "r->depth >= 1", "strobe__capture_check_record");
}
static void test_reader_tree_preorder(void) {
  expect_abort(tree_without_root, "tree_without_root", "n->depth == 0", "check_tree");
}
static void test_reader_deep_refs(void) {
  expect_abort(draw_call_reads_resource_zero, "draw_call_reads_resource_zero", "k->refs[j].resource != 0",
               "check_deep");
}
static void test_frames_state(void) {
  expect_abort(frame_of_unknown_state, "frame_of_unknown_state", "fr->state < STROBE_FRAME_STATE_LIMIT",
               "check_frames");
}
static void test_frames_begin_order(void) {
  expect_abort(frames_out_of_order, "frames_out_of_order", "!(fr->begin_ns < f->frames[i - 1].begin_ns)",
               "check_frames");
}
#ifdef STROBE_TEST_VIEWER_MODEL
static void test_viewer_columns(void) {
  expect_abort(columns_overrun_table, "columns_overrun_table", "t->bytes == off", "check_table");
}
static void test_viewer_span_frame(void) {
  expect_abort(span_of_missing_frame, "span_of_missing_frame", "ref[i] < rows", "check_refs");
}
static void test_viewer_lane_order(void) {
  expect_abort(lane_row_goes_back, "lane_row_goes_back", "!(start[i] < start[i - 1])", "check_lanes");
}
#endif

/* The data as the library made it keeps every promise (checked while built, and here again). */
static void test_as_built(void) {
  make_capture();
  strobe_capture *c = NULL;
  REQUIRE(strobe_capture_open(g_path, &c) == 0);
  strobe_capture_record r;
  uint64_t records = 0;
  while (strobe_capture_next(c, &r) > 0) {
    strobe__capture_check_record(c, &r);
    records++;
  }
  CHECK(records > 20);
  strobe_capture_close(c);
  strobe_frames *f = NULL;
  REQUIRE(strobe_frames_open(g_path, NULL, &f) == 0);
  CHECK_EQ_INT(strobe_frames_query_count(f), 5);
  strobe__frames_check(f);
  strobe_frames_destroy(f);
#ifdef STROBE_TEST_VIEWER_MODEL
  strobe__vmodel *m = NULL;
  REQUIRE(strobe__vmodel_build(&(strobe__vsource){.path = g_path, .label = "t", .origin = "file"}, 1000, 1, &m) == 0);
  CHECK(m->tables[STROBE__VT_SPANS].rows == 10);
  strobe__vmodel_check(m);
  strobe__vmodel_release(m);
#endif
  unlink(g_path);
}

#ifdef STROBE_TEST_VIEWER_MODEL
#define VIEWER_CASES(X) X(viewer_columns) X(viewer_span_frame) X(viewer_lane_order)
#else
#define VIEWER_CASES(X)
#endif
#define CASES(X)            \
  X(reader_begin_depth)     \
  X(reader_tree_preorder)   \
  X(reader_deep_refs)       \
  X(frames_state)           \
  X(frames_begin_order)     \
  VIEWER_CASES(X)           \
  X(as_built)
HARNESS_MAIN(CASES)
