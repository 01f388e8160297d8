/*
 * test_cost.c — captures and session reports say what recording cost and
 * what it lost (docs/recording.md, Cost and Overflow): the calibrated cost
 * per event in the capture header, the drain's CPU time and events in its
 * DRAIN blocks (covering every event the capture holds), and, in a session
 * report, the ring events lost while the session ran and both figures.
 *
 * STROBE_TEST_NEEDS: jansson reports
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/session.h"
#include "strobe/strobe.h"
#include "support/fixtures.h"
#include "support/harness.h"
#include "support/session_util.h"

#define SCOPES 100000

static void test_capture_carries_both_figures(void) {
  /* Nothing may be lost, however busy the machine: every event is counted below. */
  REQUIRE_EQ_INT(strobe_setup(&(strobe_desc){.overflow = STROBE_OVERFLOW_WAIT}), 0);
  char path[256];
  REQUIRE(fx_temp_file(path, sizeof path, "cost") == 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  for (int i = 0; i < SCOPES; i++) {
    STROBE_SCOPE("cost_scope");
    STROBE_VALUE("cost_value", i);
  }
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  strobe_capture_record r;
  while (strobe_capture_next(cap, &r) > 0) {
  }
  const strobe_capture_header *h = strobe_capture_query_header(cap);
  strobe_capture_totals t = strobe_capture_query_totals(cap);
  CHECK(h->event_cost_ns > 0);
  /* The calibration's mix has 2.27 events per scope: the per-scope figure says so. */
  CHECK_NEAR(h->overhead_per_scope_ns / h->event_cost_ns, 2.27, 0.001);
  /* The explicit forms' figure, calibrated beside it (docs/recording.md §What a capture says it cost). */
  CHECK(h->explicit_scope_ns > 0);
  CHECK_EQ_INT(h->overflow, STROBE_OVERFLOW_WAIT); /* the mode in force */
  CHECK_EQ_U64(h->ring_events_max, 16777216);
  CHECK_EQ_U64(t.events, 2u * SCOPES + SCOPES); /* BEGIN, END and VALUE of each */
  /* The drain delivered every event the capture holds, and their payload slots. */
  CHECK_EQ_U64(t.drain_events, 4u * SCOPES);
  CHECK(t.drain_cpu_ns > 0);
  strobe_capture_close(cap);
  unlink(path);
}

/* A session report says first what the rings lost while it ran, then the cost. */
static void test_session_report_says_loss_and_cost(void) {
  REQUIRE_EQ_INT(strobe_setup(&(strobe_desc){.ring_events = 1024}), 0);
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  uint64_t lost0 = strobe_query_event_stats().events_lost;
  char path[256];
  REQUIRE(fx_temp_file(path, sizeof path, "cost") == 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  for (int i = 0; i < 20 * SCOPES; i++) {
    STROBE_SCOPE("lossy");
  }
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
  su_op(c, w, STROBE_OP_PASS, 1);
  uint64_t lost = strobe_query_event_stats().events_lost - lost0;
  REQUIRE(lost > 0); /* 4,000,000 events into a 1024-event ring */
  json_t *doc;
  strobe_report *r = su_end(c, id, &doc);
  REQUIRE(r != NULL && doc != NULL);
  const char *first = json_object_iter_key(json_object_iter_next(doc, json_object_iter_at(doc, "status_note")));
  CHECK_STR_EQ(first, "loss"); /* right after the head */
  json_t *loss = json_object_get(doc, "loss");
  CHECK_EQ_U64((uint64_t)json_integer_value(json_object_get(loss, "events_lost")), lost);
  CHECK_STR_EQ(json_string_value(json_object_get(loss, "overflow")), "drop");
  json_t *cost = json_object_get(doc, "cost");
  CHECK(json_real_value(json_object_get(cost, "event_ns")) > 0);
  CHECK(json_real_value(json_object_get(cost, "drain_ns_per_event")) > 0);
  CHECK(json_integer_value(json_object_get(cost, "drain_events")) > 0);
  json_decref(doc);
  strobe_report_free(r);
  strobe_collector_release(c);
  unlink(path);
}

#define CASES(X) X(capture_carries_both_figures) X(session_report_says_loss_and_cost)
HARNESS_MAIN(CASES)
