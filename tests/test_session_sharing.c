/*
 * test_session_sharing.c — proves the cost rules for completed payloads
 * (docs/sessions.md §Cost and interpretation), counting the allocations made by
 * the calling thread (tests/support/alloc_count.h: every allocator entry
 * libstrobe could use is wrapped):
 *   - "A completed payload is allocated once, then referenced by up to eight
 *     sessions": one allocation per completed operation with eight sessions
 *     admitting it, and the very same payload in all eight reports;
 *   - "With no active session, no completed sample payload is retained or
 *     allocated"; nor for an operation no active session can admit (one
 *     crossing every session's start, or a devtools window no session
 *     includes); beginning operations and running stages never allocate;
 *   - application scopes: "No completed payload/history is allocated until
 *     at least one active eligible session accepts a completion", then once
 *     however many sessions keep it; refused scopes allocate nothing.
 *
 * STROBE_TEST_NEEDS: jansson reports alloc_count
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session/report.h"
#include "support/alloc_count.h"
#include "support/session_util.h"

static void warm_stage(void) { STROBE_STAGE("shared_stage", NULL); }

/* One payload for eight sessions, referenced by all of them. */
static void test_one_payload_eight_sessions(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char ids[STROBE_MAX_SESSIONS][STROBE_SESSION_ID_MAX];
  for (int i = 0; i < STROBE_MAX_SESSIONS; i++) su_start(c, 0, ids[i]);

  alloc_count_start();
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  warm_stage();
  long begin_allocs = alloc_count_stop();
  CHECK_EQ_INT(begin_allocs, 0);
  alloc_count_start();
  strobe_op_end(op, 1);
  CHECK_EQ_INT(alloc_count_stop(), 1);

  strobe_report *r[STROBE_MAX_SESSIONS];
  for (int i = 0; i < STROBE_MAX_SESSIONS; i++) {
    r[i] = su_read(c, ids[i], NULL);
    CHECK_EQ_INT(r[i]->nsamples, 1);
    CHECK(r[i]->samples[0] == r[0]->samples[0]); /* the same immutable payload */
  }
  /* Referenced by eight sessions and eight reports. */
  CHECK_EQ_INT(__atomic_load_n(&r[0]->samples[0]->refs, __ATOMIC_RELAXED), 16);
  for (int i = 0; i < STROBE_MAX_SESSIONS; i++) {
    su_end_free(c, ids[i]);
    strobe_report_free(r[i]);
  }

  /* A second operation with a single session: still exactly one allocation. */
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  op = strobe_op_begin(c, w, STROBE_OP_INPUT, NULL);
  alloc_count_start();
  strobe_op_end(op, 1);
  CHECK_EQ_INT(alloc_count_stop(), 1);
  su_end_free(c, id);
  strobe_collector_release(c);
}

/* No active session, or none that can admit the operation: no payload. */
static void test_no_payload_without_admitting_session(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  strobe_window dev = su_window(c, "devtools", STROBE_WINDOW_DEVTOOLS);

  alloc_count_start();
  for (int i = 0; i < 10; i++) {
    strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
    warm_stage();
    strobe_op_counter_add("nodes", 1);
    strobe_op_end(op, 1);
  }
  CHECK_EQ_INT(alloc_count_stop(), 0);

  /* A pass that began before the session crosses its start: no payload, but counted. */
  strobe_op crossing = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  alloc_count_start();
  strobe_op_end(crossing, 1);
  CHECK_EQ_INT(alloc_count_stop(), 0);

  /* A devtools operation while only non-devtools sessions run. */
  alloc_count_start();
  strobe_op op = strobe_op_begin(c, dev, STROBE_OP_PASS, NULL);
  strobe_op_end(op, 1);
  CHECK_EQ_INT(alloc_count_stop(), 0);

  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "counts.boundary_excluded"), 1);
  CHECK_EQ_INT(jint(doc, "counts.devtools_excluded"), 1);
  CHECK_EQ_INT(jint(doc, "counts.completed"), 0);
  json_decref(doc);
  strobe_collector_release(c);
}

/* Application scopes: no history allocation without a session; one with eight. */
static void test_app_scope_allocations(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  alloc_count_start();
  for (int i = 0; i < 10; i++) {
    strobe_app_scope s = strobe_app_scope_begin(c, "main", "idle_scope", STROBE_LANE_UI);
    strobe_app_scope ch = strobe_app_scope_begin_child(&s, "idle_child", STROBE_LANE_UI);
    strobe_app_scope_end(&ch);
    strobe_app_scope_end(&s);
  }
  CHECK_EQ_INT(alloc_count_stop(), 0);

  char ids[STROBE_MAX_SESSIONS][STROBE_SESSION_ID_MAX];
  for (int i = 0; i < STROBE_MAX_SESSIONS; i++) su_start(c, 0, ids[i]);
  alloc_count_start();
  strobe_app_scope s = strobe_app_scope_begin(c, "main", "shared_scope", STROBE_LANE_WORKER);
  strobe_app_scope bad = strobe_app_scope_begin(c, "main", "not a label", STROBE_LANE_WORKER);
  long begin_allocs = alloc_count_stop();
  CHECK_EQ_INT(begin_allocs, 0);
  CHECK_EQ_INT(strobe_app_scope_query_status(&bad), STROBE_ELABEL);
  alloc_count_start();
  strobe_app_scope_end(&s);
  CHECK_EQ_INT(alloc_count_stop(), 1);
  strobe_report *r[STROBE_MAX_SESSIONS];
  for (int i = 0; i < STROBE_MAX_SESSIONS; i++) {
    r[i] = su_end(c, ids[i], NULL);
    CHECK_EQ_INT(r[i]->napps, 1);
    CHECK(r[i]->apps[0] == r[0]->apps[0]);
  }
  for (int i = 0; i < STROBE_MAX_SESSIONS; i++) strobe_report_free(r[i]);
  strobe_collector_release(c);
}

/* Each wrapper must really be in the path, or the counts above prove nothing. */
static void test_malloc_is_counted(void) {
  alloc_count_start();
  void *volatile p = malloc(16);
  CHECK_EQ_INT(alloc_count_stop(), 1);
  alloc_count_start();
  void *volatile q = calloc(2, 8);
  CHECK_EQ_INT(alloc_count_stop(), 1);
  alloc_count_start();
  p = realloc(p, 64);
  CHECK_EQ_INT(alloc_count_stop(), 1);
  alloc_count_start();
  char *volatile d = strdup("x");
  char *volatile e = strndup("xy", 1);
  CHECK_EQ_INT(alloc_count_stop(), 2);
  void *a = NULL;
  alloc_count_start();
  CHECK_EQ_INT(posix_memalign(&a, 64, 64), 0);
  void *volatile b = aligned_alloc(64, 64);
  CHECK_EQ_INT(alloc_count_stop(), 2);
  free(p);
  free(q);
  free(d);
  free(e);
  free(a);
  free(b);
}

#define CASES(X)                        \
  X(malloc_is_counted)                  \
  X(one_payload_eight_sessions)         \
  X(no_payload_without_admitting_session) \
  X(app_scope_allocations)
HARNESS_MAIN(CASES)
