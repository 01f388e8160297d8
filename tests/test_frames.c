/*
 * test_frames.c — the frame model's API (strobe/frames.h, docs/frames.md):
 * its documented errors and states (NULL arguments, a second finish, a
 * record after finish, queries before finish, a file that is not there),
 * and its rules on a real recording: the innermost open operation owns a
 * span (an input inside a pass, a pass taken off its thread while the next
 * ran), a frame handed between two collectors is one frame with both
 * halves' stages, and rates count only completed, presented and handed-off
 * passes. The CLI's agreement on whole captures is cli_frames_truth.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "strobe/frames.h"
#include "strobe/record.h"
#include "strobe/session.h"
#include "support/fixtures.h"
#include "support/harness.h"

static void test_errors(void) {
  CHECK_EQ_INT(strobe_frames_create(NULL, NULL), STROBE_EINVAL);
  strobe_frames *f = NULL;
  CHECK_EQ_INT(strobe_frames_open(NULL, NULL, &f), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_frames_open("/nonexistent/capture.strobe", NULL, &f), STROBE_EIO);
  CHECK(f == NULL);
  REQUIRE_EQ_INT(strobe_frames_create(NULL, &f), 0);
  CHECK_EQ_INT(strobe_frames_query_count(f), 0); /* before finish: nothing, never half an answer */
  CHECK(strobe_frames_query_frame(f, 0) == NULL);
  CHECK_EQ_INT(strobe_frames_owner(f, 0, 0), STROBE_FRAMES_NONE);
  CHECK_EQ_INT(strobe_frames_add(f, NULL, NULL), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_frames_finish(f, NULL), STROBE_EINVAL);
  strobe_frames_destroy(f);
  strobe_frames_destroy(NULL);
  CHECK_STR_EQ(strobe_frames_state_name(STROBE_FRAME_SUPERSEDED), "superseded");
  CHECK_STR_EQ(strobe_frames_state_name(99), "unknown");
  CHECK_STR_EQ(strobe_frames_source_name(STROBE_FRAME_SOURCE_MARKS), "frame marks");
}

/* A pass with an input inside it; a pass taken off its thread while the next pass runs; a pass handed to another
 * collector, which presents it; a dropped pass. */
static void record_frames(const char *path) {
  strobe_collector *a, *b;
  strobe_window wa, wb;
  REQUIRE_EQ_INT(strobe_collector_create(&a), 0);
  REQUIRE_EQ_INT(strobe_collector_set_process(a, "screen"), 0);
  REQUIRE_EQ_INT(strobe_window_register(a, "main", 0, &wa), 0);
  REQUIRE_EQ_INT(strobe_collector_create(&b), 0);
  REQUIRE_EQ_INT(strobe_collector_set_process(b, "sender"), 0);
  REQUIRE_EQ_INT(strobe_window_register(b, "main", 0, &wb), 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  strobe_op pass = strobe_op_begin_frame(a, wa, 1, NULL);
  strobe_op input = strobe_op_begin(a, wa, STROBE_OP_INPUT, NULL);
  { STROBE_SCOPE("click"); fx_sleep_ms(1); }
  strobe_op_end(input, 1);
  { STROBE_SCOPE("paint"); fx_sleep_ms(1); }
  strobe_op_end(pass, 1);
  strobe_op waiting = strobe_op_begin_frame(a, wa, 2, NULL);
  { STROBE_SCOPE("paint"); fx_sleep_ms(1); }
  strobe_op_take();
  strobe_op next = strobe_op_begin_frame(a, wa, 3, NULL);
  { STROBE_SCOPE("paint"); fx_sleep_ms(1); }
  strobe_op_end(next, 1);
  strobe_op_resume(waiting);
  strobe_op_end(waiting, 1);
  strobe_op_begin_frame(a, wa, 4, NULL);
  { STROBE_STAGE("render", NULL); fx_sleep_ms(1); }
  unsigned char tok[STROBE_OP_TOKEN_MAX];
  size_t len = 0;
  REQUIRE_EQ_INT(strobe_op_hand_off_remote(strobe_op_take(), "sender", tok, sizeof tok, &len), 0);
  int st = -1;
  strobe_op there = strobe_op_resume_remote(b, wb, tok, len, &st);
  REQUIRE_EQ_INT(st, 0);
  { STROBE_STAGE("encode", NULL); fx_sleep_ms(1); }
  strobe_op_end(there, 1);
  strobe_op dropped = strobe_op_begin_frame(a, wa, 5, NULL);
  strobe_op_end(dropped, 0);
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
  strobe_collector_close(a), strobe_collector_release(a);
  strobe_collector_close(b), strobe_collector_release(b);
}

static uint32_t frame_numbered(const strobe_frames *f, uint64_t n) {
  uint32_t i = strobe_frames_find(f, n, STROBE_FRAMES_NONE);
  REQUIRE(i != STROBE_FRAMES_NONE);
  return i;
}

static void test_rules(void) {
  char dir[64], path[128];
  REQUIRE_EQ_INT(fx_temp_dir(dir, sizeof dir, "frames"), 0);
  snprintf(path, sizeof path, "%s/frames.strobe", dir);
  record_frames(path);
  strobe_frames *f;
  REQUIRE_EQ_INT(strobe_frames_open(path, &(strobe_frames_desc){.spans = 1}, &f), 0);
  CHECK_EQ_INT(strobe_frames_query_source(f), STROBE_FRAME_SOURCE_PASSES);
  CHECK_EQ_INT(strobe_frames_query_count(f), 6); /* 5 passes and the input: the hand-off is one */
  const strobe_frame *p1 = strobe_frames_query_frame(f, frame_numbered(f, 1));
  CHECK_EQ_U64(p1->spans, 1); /* paint; click is the input's */
  CHECK_EQ_U64(strobe_frames_query_frame(f, frame_numbered(f, 2))->spans, 1); /* not 3's paint */
  CHECK_EQ_U64(strobe_frames_query_frame(f, frame_numbered(f, 3))->spans, 1);
  const strobe_frame *p4 = strobe_frames_query_frame(f, frame_numbered(f, 4));
  CHECK_EQ_INT(p4->state, STROBE_FRAME_PRESENTED);
  CHECK_STR_EQ(strobe_frames_query_process(f, p4->process), "screen");
  uint32_t n;
  const strobe_frame_stage *st = strobe_frames_query_stages(f, frame_numbered(f, 4), &n);
  CHECK_EQ_INT(n, 2); /* render (screen's, carried) and encode */
  CHECK_EQ_INT(strobe_frames_query_frame(f, frame_numbered(f, 5))->state, STROBE_FRAME_DROPPED);
  CHECK(st != NULL);
  const strobe_frame_series *s = strobe_frames_query_series(f, p1->series);
  REQUIRE(s != NULL);
  CHECK_EQ_U64(s->frames, 5);
  CHECK_EQ_U64(s->counted, 4); /* not the dropped one */
  CHECK_EQ_U64(s->intervals, 3);
  CHECK_EQ_INT(strobe_frames_add(f, NULL, &(strobe_capture_record){0}), STROBE_ESTATE);
  strobe_frames_destroy(f);
  remove(path);
  rmdir(dir);
}

#define CASES(X) \
  X(errors)      \
  X(rules)
HARNESS_MAIN(CASES)
