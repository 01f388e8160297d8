/*
 * test_session_park.c — strobe_op_park / strobe_op_unpark (docs/sessions.md
 * §Parked operations): many operations interleaved on one thread, as an
 * event loop's tasks are, each parked with its open stages while the
 * others run:
 *   - 100 operations live at once, each unparked in turn, end with their own
 *     stages, parents and counts, the stage open across the waits timing the
 *     waits (wall time);
 *   - a parked operation is none of the thread's work: a stage begun while it
 *     is parked belongs to the outer (or no) operation;
 *   - unpark refuses what is not parked (twice, ended, inert) and changes
 *     nothing; no event of a hand-off, not handed_off.
 *
 * STROBE_TEST_NEEDS: jansson reports
 */
#include <string.h>

#include "support/session_util.h"

enum { N = 100 }; /* more than the 64 that STROBE_MAX_LIVE_OPS once allowed */

static int same(strobe_op a, strobe_op b) { return a.id == b.id && a.id != 0 && a.collector == b.collector; }

static strobe_site g_handler = STROBE_STAGE_SITE("handler", NULL);
static strobe_site g_query = STROBE_STAGE_SITE("query", "handler");

static void test_interleaved_operations_keep_their_stages(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  REQUIRE_EQ_INT(strobe_session_start(c, &(strobe_session_desc){.max_samples = 240}, id), 0);
  strobe_op ops[N];
  strobe_stage handler[N], query[N];
  for (int i = 0; i < N; i++) { /* each begins, opens its handler stage, and waits */
    int status = 0;
    ops[i] = strobe_op_begin(c, w, STROBE_OP_REQUEST, &status);
    REQUIRE_EQ_INT(status, 0);
    handler[i] = strobe_stage_begin(&g_handler);
    REQUIRE(same(strobe_op_park(), ops[i]));
  }
  for (int i = 0; i < N; i++) { /* each resumes, runs a query inside its handler, and waits again */
    REQUIRE_EQ_INT(strobe_op_unpark(ops[i]), 0);
    query[i] = strobe_stage_begin(&g_query);
    strobe_op_counter_add("rows", i);
    REQUIRE(same(strobe_op_park(), ops[i]));
  }
  strobe_stage stray = strobe_stage_begin(&g_query); /* no operation current: a capture scope only */
  CHECK_EQ_INT(strobe_stage_end(&stray), 0);
  for (int i = N; i-- > 0;) { /* they finish in the other order */
    REQUIRE_EQ_INT(strobe_op_unpark(ops[i]), 0);
    CHECK_EQ_INT(strobe_op_unpark(ops[i]), STROBE_ESTATE); /* not parked any more */
    CHECK_EQ_INT(strobe_stage_end(&query[i]), 0);
    CHECK_EQ_INT(strobe_stage_end(&handler[i]), 0);
    strobe_op_end(ops[i], 1);
    CHECK_EQ_INT(strobe_op_unpark(ops[i]), STROBE_ESTATE); /* ended */
  }
  CHECK_EQ_INT(strobe_op_unpark((strobe_op){0, NULL}), STROBE_EINVAL);
  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "counts.completed"), N);
  json_t *samples = jreq(doc, "samples");
  REQUIRE_EQ_INT(json_array_size(samples), N);
  double rows = 0;
  for (size_t k = 0; k < N; k++) {
    json_t *s = json_array_get(samples, k);
    CHECK(!json_is_true(json_object_get(s, "handed_off")));
    CHECK_EQ_INT(jint(s, "stages_dropped"), 0);
    json_t *stages = jreq(s, "stages");
    REQUIRE_EQ_INT(json_array_size(stages), 2);
    json_t *h = NULL, *q = NULL;
    for (size_t j = 0; j < 2; j++) {
      json_t *st = json_array_get(stages, j);
      if (!strcmp(jstr(st, "name"), "handler")) h = st;
      if (!strcmp(jstr(st, "name"), "query")) q = st;
    }
    REQUIRE(h && q);
    CHECK_EQ_INT(jint(h, "count"), 1);
    CHECK_EQ_INT(jint(q, "count"), 1);
    CHECK(!strcmp(jstr(q, "nested_in"), "handler"));
    CHECK_EQ_INT(jint(q, "declared_parent_not_open"), 0);
    CHECK(jnum(h, "total_ms") >= jnum(q, "total_ms")); /* the handler ran across every wait */
    rows += jnum(json_array_get(jreq(s, "counters"), 0), "value");
  }
  CHECK_EQ_INT((long long)rows, N * (N - 1) / 2); /* each counter landed on its own operation */
  json_decref(doc);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

static void test_park_with_nothing_current(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  CHECK_EQ_INT(strobe_op_park().id, 0);
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_REQUEST, NULL);
  strobe_op_end(op, 1);
  CHECK_EQ_INT(strobe_op_unpark(op), STROBE_ESTATE); /* never parked */
  strobe_collector_close(c);
  strobe_collector_release(c);
}

#define CASES(X) X(interleaved_operations_keep_their_stages) X(park_with_nothing_current)
HARNESS_MAIN(CASES)
