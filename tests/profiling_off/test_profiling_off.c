/*
 * test_profiling_off.c — a libstrobe built with STROBE_PROFILING=OFF still
 * links and runs: instrumentation does nothing, and every consumer reports
 * STROBE_EFEATURE_DISABLED instead of pretending to work.
 */
#include "support/harness.h"
#include "strobe/flight.h"
#include "strobe/record.h"
#include "strobe/session.h"
#include "strobe/strobe.h"

static void test_consumers_say_disabled(void) {
  CHECK_EQ_INT(strobe_profiling_available(), 0);

  strobe_recorder *rec = (strobe_recorder *)1;
  CHECK_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = "/tmp/never.strobe"}, &rec), STROBE_EFEATURE_DISABLED);
  CHECK(rec == NULL);
  strobe_flight_recorder *fr = (strobe_flight_recorder *)1;
  CHECK_EQ_INT(strobe_flight_recorder_start(NULL, &fr), STROBE_EFEATURE_DISABLED);
  CHECK(fr == NULL);

  strobe_collector *c = (strobe_collector *)1;
  CHECK_EQ_INT(strobe_collector_create(&c), STROBE_EFEATURE_DISABLED);
  CHECK(c == NULL);
  CHECK(strobe_default_collector() == NULL);

  int status = 0;
  strobe_op op = strobe_op_begin(NULL, (strobe_window){0}, STROBE_OP_PASS, &status);
  CHECK_EQ_INT(status, STROBE_EFEATURE_DISABLED);
  CHECK_EQ_INT(op.id, 0);
  strobe_op_end(op, 1); /* inert: harmless */
  strobe_app_scope s = strobe_app_scope_begin(NULL, "main", "save", STROBE_LANE_WORKER);
  CHECK_EQ_INT(strobe_app_scope_query_status(&s), STROBE_EFEATURE_DISABLED);
  strobe_app_scope_end(&s);
  char id[STROBE_SESSION_ID_MAX];
  CHECK_EQ_INT(strobe_session_start(NULL, NULL, id), STROBE_EFEATURE_DISABLED);

  /* Instrumentation compiles and runs as no-ops. */
  {
    STROBE_SCOPE("scope");
    STROBE_VALUE("value", 1);
    STROBE_COUNTER_ADD("counter", 1);
    STROBE_STAGE("stage", NULL);
  }
  CHECK(strobe_thread_query_scope() == NULL);
  CHECK_EQ_U64(strobe_query_event_stats().events_written, 0);
}

#define CASES(X) X(consumers_say_disabled)
HARNESS_MAIN(CASES)
