/*
 * test_explain.c — the frame explanation's API (include/strobe/explain.h,
 * docs/explain.md) on a capture this test records: ten passes of window
 * "main" with the stages `build` and `draw` (no work to speak of), where
 * pass 5's `draw` sleeps 300 ms: far above anything a loaded machine's
 * scheduling adds to the others. The explainer names draw as pass 5's worst part against a
 * norm over the ten passes, says its cause unknown (no sampler: no context
 * switches), finds the slowest frames in order, and refuses bad arguments
 * with the documented codes, leaving nothing behind.
 * (`strobe explain` on a capture with switches: tests/cli/analysis_test.py.)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "strobe/explain.h"
#include "strobe/record.h"
#include "strobe/session.h"
#include "support/fixtures.h"
#include "support/harness.h"

static char g_path[256];

static void record(void) {
  REQUIRE(fx_temp_file(g_path, sizeof g_path, "explain") == 0);
  strobe_collector *c;
  strobe_window w;
  REQUIRE(strobe_collector_create(&c) == 0 && strobe_window_register(c, "main", 0, &w) == 0);
  strobe_recorder *rec = NULL;
  REQUIRE(strobe_record_start(&(strobe_record_desc){.path = g_path}, &rec) == 0);
  for (uint64_t id = 1; id <= 10; id++) {
    strobe_op op = strobe_op_begin_frame(c, w, id, NULL);
    {
      STROBE_STAGE("build", NULL);
    }
    {
      STROBE_STAGE("draw", NULL);
      if (id == 5) fx_sleep_ms(300);
    }
    strobe_op_end(op, 1);
  }
  REQUIRE(strobe_record_stop(rec) == 0);
  strobe_collector_release(c);
}

static void test_names_the_slow_stage(void) {
  record();
  strobe_explain *e = NULL;
  REQUIRE(strobe_explain_open(g_path, NULL, &e) == 0 && e);
  const strobe_frames *fx = strobe_explain_query_frames(e);
  uint32_t slow[3];
  REQUIRE(strobe_explain_slowest(e, 3, slow) == 3);
  CHECK(strobe_frames_query_frame(fx, slow[0])->number == 5);
  for (int i = 1; i < 3; i++) {
    const strobe_frame *a = strobe_frames_query_frame(fx, slow[i - 1]), *b = strobe_frames_query_frame(fx, slow[i]);
    CHECK(a->end_ns - a->begin_ns >= b->end_ns - b->begin_ns);
  }
  strobe_frame_explanation x;
  REQUIRE(strobe_explain_frame(e, slow[0], &x) == 0);
  CHECK(x.wall.known && x.wall.n == 10 && x.wall.ns >= 300e6 && x.wall.p50_ns < x.wall.ns / 3);
  REQUIRE(x.worst != STROBE_FRAMES_NONE && x.worst < x.nparts);
  const strobe_explain_part *p = &x.parts[x.worst];
  CHECK(p->kind == STROBE_EXPLAIN_STAGE && !strcmp(p->name, "draw") && p->exceeded);
  CHECK(p->wall.n == 10 && p->wall.ns >= 300e6 && p->excess_ns > 200e6);
  CHECK(p->cause == STROBE_EXPLAIN_CAUSE_UNKNOWN && !p->on_cpu.known && !p->blocked.known && p->causes == 0);
  CHECK(!strobe_explain_query_coverage(e).switches);
  uint32_t builds = 0;
  for (uint32_t i = 0; i < x.nparts; i++)
    if (x.parts[i].kind == STROBE_EXPLAIN_STAGE && !strcmp(x.parts[i].name, "build")) {
      builds++;
      CHECK(x.parts[i].wall.known && x.parts[i].wall.n == 10);
    }
  CHECK(builds == 1);
  strobe_explain_destroy(e);
  unlink(g_path);
}

static void test_refuses_bad_arguments(void) {
  record();
  strobe_explain *e = (strobe_explain *)&e;
  CHECK(strobe_explain_open(NULL, NULL, &e) == STROBE_EINVAL);
  CHECK(strobe_explain_open(g_path, NULL, NULL) == STROBE_EINVAL);
  CHECK(strobe_explain_open(g_path, &(strobe_explain_desc){.top_functions = 17}, &e) == STROBE_EINVAL && !e);
  CHECK(strobe_explain_open("/nonexistent/strobe-explain", NULL, &e) == STROBE_EIO && !e);
  REQUIRE(strobe_explain_open(g_path, NULL, &e) == 0);
  strobe_frame_explanation x;
  memset(&x, 0xff, sizeof x);
  CHECK(strobe_explain_frame(e, strobe_frames_query_count(strobe_explain_query_frames(e)), &x) == STROBE_ERANGE);
  CHECK(x.nparts == 0 && x.parts == NULL);
  CHECK(strobe_explain_frame(e, 0, NULL) == STROBE_EINVAL);
  uint32_t none[1];
  CHECK(strobe_explain_slowest(e, 0, none) == 0 && strobe_explain_slowest(NULL, 1, none) == 0);
  CHECK(!strcmp(strobe_explain_part_name(STROBE_EXPLAIN_PART_LIMIT), "unknown"));
  CHECK(!strcmp(strobe_explain_cause_name(STROBE_EXPLAIN_CAUSE_LIMIT), "unknown"));
  strobe_explain_destroy(e);
  strobe_explain_destroy(NULL);
  unlink(g_path);
}

#define CASES(X) X(names_the_slow_stage) X(refuses_bad_arguments)
HARNESS_MAIN(CASES)
