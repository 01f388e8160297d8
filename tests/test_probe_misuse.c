/*
 * test_probe_misuse.c — misuse is detected and counted and never corrupts
 * the stream: END without BEGIN, a BEGIN left open inside a block scope, an
 * END that closes a block scope early, a scope open at thread exit, nesting
 * beyond STROBE_MAX_DEPTH, a value with no scope. Also strobe_current_scope,
 * strobe_setup's rules, and that the capture stays balanced throughout.
 */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
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

int main(void) {
  /* Before any thread records, setup validates and takes effect. */
  CHECK_EQ_INT(strobe_setup(&(strobe_desc){.ring_events = 1000}), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_setup(&(strobe_desc){.drain_interval_ms = 5000}), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_setup(NULL), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_setup(&(strobe_desc){.ring_events = 65536}), 0);
  CHECK_EQ_INT(strobe_query_desc().ring_events, 65536);
  CHECK_EQ_INT(strobe_query_desc().drain_interval_ms, 2);

  /* Idle: nothing attaches, nothing is counted. */
  STROBE_END();
  CHECK(strobe_current_scope() == NULL);
  CHECK_EQ_U64(strobe_misuse_counts().end_without_begin, 0);

  char path[] = "/tmp/strobe-misuse-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  strobe_recorder *rec;
  CHECK_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path, .flush_interval_ms = 10}, &rec), 0);

  {
    STROBE_SCOPE("outer");
    CHECK(strobe_current_scope() != NULL && !strcmp(strobe_current_scope()->name, "outer"));
    {
      STROBE_SCOPE("inner");
      CHECK(!strcmp(strobe_current_scope()->name, "inner"));
    }
    CHECK(!strcmp(strobe_current_scope()->name, "outer"));
  }
  CHECK(strobe_current_scope() == NULL);
  CHECK_EQ_INT(strobe_setup(&(strobe_desc){.ring_events = 4096}), STROBE_EBUSY);

  STROBE_END();
  STROBE_END();
  CHECK_EQ_U64(strobe_misuse_counts().end_without_begin, 2);

  STROBE_VALUE("orphan_value", 1);
  CHECK_EQ_U64(strobe_misuse_counts().value_without_scope, 1);

  begin_left_open_in_block();
  CHECK_EQ_U64(strobe_misuse_counts().unbalanced, 1);
  CHECK(strobe_current_scope() == NULL);

  end_closes_block_early();
  CHECK_EQ_U64(strobe_misuse_counts().unbalanced, 3); /* closed early + its guard finding it gone */
  CHECK(strobe_current_scope() == NULL);

  recurse(STROBE_MAX_DEPTH + 10);
  CHECK_EQ_U64(strobe_misuse_counts().depth_overflow, 10);
  CHECK(strobe_current_scope() == NULL);

  pthread_t th;
  pthread_create(&th, NULL, exits_with_open_scope, NULL);
  pthread_join(th, NULL);
  strobe_record_flush(rec);
  CHECK_EQ_U64(strobe_misuse_counts().open_at_exit, 1);

  CHECK_EQ_INT(strobe_record_stop(rec), 0);

  /* The stream is balanced: no orphan ends, the only unfinished scope is the
   * one left open at thread exit, and deep nesting stops at the limit. */
  strobe_capture *cap;
  CHECK_EQ_INT(strobe_capture_open(path, &cap), 0);
  strobe_capture_record r;
  int rc;
  uint32_t max_depth = 0;
  uint64_t deep_ends = 0;
  while ((rc = strobe_capture_next(cap, &r)) > 0) {
    if (r.type == STROBE_REC_END) {
      if (r.depth > max_depth) max_depth = r.depth;
      if (!strcmp(strobe_capture_get_site(cap, r.site)->name, "deep")) deep_ends++;
    }
  }
  CHECK_EQ_INT(rc, 0);
  strobe_capture_totals t = strobe_capture_get_totals(cap);
  CHECK_EQ_U64(t.orphan_ends, 0);
  CHECK_EQ_U64(t.unfinished, 1);
  CHECK_EQ_U64(t.lost, 0);
  CHECK_EQ_INT(max_depth, STROBE_MAX_DEPTH);
  CHECK_EQ_U64(deep_ends, STROBE_MAX_DEPTH);
  CHECK_EQ_U64(t.misuse.end_without_begin, 2);
  CHECK_EQ_U64(t.misuse.open_at_exit, 1);
  CHECK_EQ_U64(t.misuse.depth_overflow, 10);
  strobe_capture_close(cap);
  unlink(path);
  return 0;
}
