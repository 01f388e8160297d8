/*
 * test_probe_misuse.c — misuse is detected and counted and never corrupts
 * the stream: END without BEGIN, a BEGIN left open inside a block scope, an
 * END that closes a block scope early, a scope open at thread exit, nesting
 * beyond STROBE_MAX_DEPTH, a value with no scope, a scope whose site has no
 * name. Also strobe_thread_query_scope (loop accumulators in between are not
 * scopes), strobe_setup's rules, and that the capture stays balanced
 * throughout.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "support/fixtures.h"
#include "support/harness.h"
#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/strobe.h"

static void recurse(int n) {
  STROBE_SCOPE("deep");
  if (n > 1) recurse(n - 1);
}

static void *exits_with_open_scope(void *arg) {
  (void)arg;
  STROBE_BEGIN("left_open");
  return NULL;
}

static void begin_left_open_in_block(void) {
  STROBE_SCOPE("block_with_stray_begin");
  STROBE_BEGIN("stray_begin"); /* never ended: the block's end closes it first */
}

static void end_closes_block_early(void) {
  STROBE_BEGIN("explicit_outer");
  {
    STROBE_SCOPE("closed_early");
    STROBE_END(); /* closes closed_early (counted), then explicit_outer */
  }
}

/* Loop accumulators attach to the enclosing scope without being scopes
 * themselves: the innermost scope stays what the code opened, and closing it
 * (block or STROBE_END) is not misuse. */
static void loops_in_scopes(void) {
  STROBE_SCOPE("with_loop");
  for (int i = 0; i < 3; i++) {
    STROBE_CUMULATIVE("loop_body");
    STROBE_SCOPE("in_body");
    CHECK(!strcmp(strobe_thread_query_scope()->name, "in_body"));
  }
  CHECK(!strcmp(strobe_thread_query_scope()->name, "with_loop"));
  STROBE_BEGIN("explicit_with_loop");
  for (int i = 0; i < 2; i++) {
    STROBE_CUMULATIVE("explicit_loop_body");
  }
  CHECK(!strcmp(strobe_thread_query_scope()->name, "explicit_with_loop"));
  STROBE_END();
  CHECK(!strcmp(strobe_thread_query_scope()->name, "with_loop"));
}

/* A STROBE_END that closes a block scope early leaves that scope's guard
 * out until the block ends. Meanwhile new frames, here an explicit scope
 * and the holder of its loop accumulators, must not take the old frame's
 * place: its guard would then close them. */
static void guard_outlives_its_scope(void) {
  STROBE_BEGIN("early_outer");
  {
    STROBE_SCOPE("early_block");
    STROBE_END(); /* closes early_block (misuse) and early_outer */
    CHECK(strobe_thread_query_scope() == NULL);
    STROBE_BEGIN("after_early");
    for (int i = 0; i < 2; i++) {
      STROBE_CUMULATIVE("after_early_loop");
    }
    CHECK(!strcmp(strobe_thread_query_scope()->name, "after_early"));
  } /* early_block's guard: its scope is gone (misuse), and after_early, still open, is closed (misuse) */
  CHECK(strobe_thread_query_scope() == NULL);
  STROBE_END(); /* nothing left to close */
}

static void test_misuse_counted_stream_balanced(void) {
  /* Before any thread records, setup validates and takes effect. */
  CHECK_EQ_INT(strobe_setup(&(strobe_desc){.ring_events = 1000}), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_setup(&(strobe_desc){.drain_interval_ms = 5000}), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_setup(NULL), STROBE_EINVAL);
  REQUIRE_EQ_INT(strobe_setup(&(strobe_desc){.ring_events = 65536}), 0);
  CHECK_EQ_INT(strobe_query_desc().ring_events, 65536);
  CHECK_EQ_INT(strobe_query_desc().drain_interval_ms, 2);

  /* Idle: nothing attaches, nothing is counted. */
  STROBE_END();
  CHECK(strobe_thread_query_scope() == NULL);
  CHECK_EQ_U64(strobe_query_misuse().end_without_begin, 0);

  char path[64];
  REQUIRE(fx_temp_file(path, sizeof path, "misuse") == 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path, .flush_interval_ms = 10}, &rec), 0);

  {
    STROBE_SCOPE("outer");
    CHECK(strobe_thread_query_scope() != NULL && !strcmp(strobe_thread_query_scope()->name, "outer"));
    {
      STROBE_SCOPE("inner");
      CHECK(!strcmp(strobe_thread_query_scope()->name, "inner"));
    }
    CHECK(!strcmp(strobe_thread_query_scope()->name, "outer"));
  }
  CHECK(strobe_thread_query_scope() == NULL);
  CHECK_EQ_INT(strobe_setup(&(strobe_desc){.ring_events = 4096}), STROBE_EBUSY);

  STROBE_END();
  STROBE_END();
  CHECK_EQ_U64(strobe_query_misuse().end_without_begin, 2);

  STROBE_VALUE("orphan_value", 1);
  CHECK_EQ_U64(strobe_query_misuse().value_without_scope, 1);

  begin_left_open_in_block();
  CHECK_EQ_U64(strobe_query_misuse().unbalanced, 1);
  CHECK(strobe_thread_query_scope() == NULL);

  end_closes_block_early();
  CHECK_EQ_U64(strobe_query_misuse().unbalanced, 3); /* closed early + its guard finding it gone */
  CHECK(strobe_thread_query_scope() == NULL);

  loops_in_scopes();
  CHECK_EQ_U64(strobe_query_misuse().unbalanced, 3);
  CHECK(strobe_thread_query_scope() == NULL);

  { STROBE_SCOPE((const char *)0); } /* recorded under the fallback site, not dropped */

  guard_outlives_its_scope();
  CHECK_EQ_U64(strobe_query_misuse().unbalanced, 6);
  CHECK_EQ_U64(strobe_query_misuse().end_without_begin, 3);

  recurse(STROBE_MAX_DEPTH + 10);
  CHECK_EQ_U64(strobe_query_misuse().depth_overflow, 10);
  CHECK(strobe_thread_query_scope() == NULL);

  pthread_t th;
  pthread_create(&th, NULL, exits_with_open_scope, NULL);
  pthread_join(th, NULL);
  strobe_record_flush(rec);
  CHECK_EQ_U64(strobe_query_misuse().open_at_exit, 1);

  CHECK_EQ_INT(strobe_record_stop(rec), 0);

  /* The stream is balanced: no orphan ends, the only unfinished scope is the
   * one left open at thread exit, and deep nesting stops at the limit. */
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  strobe_capture_record r;
  int rc;
  uint32_t max_depth = 0;
  uint64_t deep_ends = 0, unregistered_ends = 0, loop_count = 0, explicit_loop_count = 0, after_early_loop = 0;
  uint64_t early_ends[3] = {0}; /* early_outer, early_block, after_early */
  while ((rc = strobe_capture_next(cap, &r)) > 0) {
    const char *name = r.type == STROBE_REC_END || r.type == STROBE_REC_CUMULATIVE
                           ? strobe_capture_query_site(cap, r.site)->name : "";
    if (r.type == STROBE_REC_END) {
      if (r.depth > max_depth) max_depth = r.depth;
      if (!strcmp(name, "deep")) deep_ends++;
      if (!strcmp(name, "strobe: unregistered site")) unregistered_ends++;
      static const char *early[3] = {"early_outer", "early_block", "after_early"};
      static const uint32_t early_depth[3] = {1, 2, 1};
      for (int k = 0; k < 3; k++) {
        if (strcmp(name, early[k])) continue;
        CHECK_EQ_INT(r.depth, early_depth[k]);
        early_ends[k]++;
      }
    }
    if (r.type == STROBE_REC_CUMULATIVE && !strcmp(name, "loop_body")) {
      CHECK_EQ_INT(r.depth, 1); /* attached to with_loop */
      loop_count += r.count;
    }
    if (r.type == STROBE_REC_CUMULATIVE && !strcmp(name, "after_early_loop")) {
      CHECK_EQ_INT(r.depth, 1); /* attached to after_early */
      after_early_loop += r.count;
    }
    if (r.type == STROBE_REC_CUMULATIVE && !strcmp(name, "explicit_loop_body")) {
      CHECK_EQ_INT(r.depth, 2); /* attached to explicit_with_loop */
      explicit_loop_count += r.count;
    }
  }
  CHECK_EQ_U64(unregistered_ends, 1);
  CHECK_EQ_U64(early_ends[0], 1);
  CHECK_EQ_U64(early_ends[1], 1);
  CHECK_EQ_U64(early_ends[2], 1);
  CHECK_EQ_U64(after_early_loop, 2);
  CHECK_EQ_U64(loop_count, 3);
  CHECK_EQ_U64(explicit_loop_count, 2);
  CHECK_EQ_INT(rc, 0);
  strobe_capture_totals t = strobe_capture_query_totals(cap);
  CHECK_EQ_U64(t.orphan_ends, 0);
  CHECK_EQ_U64(t.unfinished, 1);
  CHECK_EQ_U64(t.lost, 0);
  CHECK_EQ_INT(max_depth, STROBE_MAX_DEPTH);
  CHECK_EQ_U64(deep_ends, STROBE_MAX_DEPTH);
  CHECK_EQ_U64(t.misuse.end_without_begin, 3);
  CHECK_EQ_U64(t.misuse.open_at_exit, 1);
  CHECK_EQ_U64(t.misuse.depth_overflow, 10);
  strobe_capture_close(cap);
  unlink(path);
}

/* STROBE_END is gated on whether anything records, like a scope, yet a
 * BEGIN made while a recording ran is still closed by the END that follows
 * the recording's stop (docs/recording.md §Explicit begin and end): its frame
 * never stays on the thread's stack, where it would count against the depth
 * bound for good. */
static void test_explicit_end_after_recording_stops(void) {
  char path[256];
  REQUIRE(fx_temp_file(path, sizeof path, "explicit-stop") == 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  STROBE_BEGIN("spans_the_stop");
  CHECK_EQ_INT(strobe_depth(), 1);
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
  STROBE_END();
  CHECK_EQ_INT(strobe_depth(), 0);
  STROBE_END(); /* nothing open, nothing recording: nothing happens */
  CHECK_EQ_INT(strobe_depth(), 0);
  remove(path);
}

#define CASES(X) X(misuse_counted_stream_balanced) X(explicit_end_after_recording_stops)
HARNESS_MAIN(CASES)
