/*
 * test_session_reset.c — strobe_collector_reset (docs/sessions.md §Reset):
 *   - it discards the retained samples, the application-scope history and
 *     every count of the caller's sessions, which then admit only whole
 *     operations that start after it (one running across it is a boundary
 *     exclusion), and counts the reset in the report;
 *   - never another owner's session, never another collector's;
 *   - with an id, only that session, with read's errors for an id the
 *     caller cannot use (another owner's, unknown, ended), changing nothing.
 *
 * STROBE_TEST_NEEDS: jansson reports
 */
#include <string.h>

#include "support/session_util.h"

#define OTHER_OWNER 7

static strobe_report *read_as(strobe_collector *c, const char *id, uint64_t owner, json_t **doc) {
  strobe_report *r = NULL;
  REQUIRE_EQ_INT(strobe_session_read(c, id, owner, &r), 0);
  *doc = check_report_json(r);
  return r;
}

static void app_scope(strobe_collector *c) {
  strobe_app_scope s = strobe_app_scope_begin(c, "main", "local_save_write", STROBE_LANE_WORKER);
  CHECK_EQ_INT(strobe_app_scope_query_status(&s), 0);
  strobe_app_scope_end(&s);
}

static void test_reset_discards_only_the_owners(void) {
  strobe_window wa, wb;
  strobe_collector *a = su_collector(&wa), *b = su_collector(&wb);
  char mine[STROBE_SESSION_ID_MAX], theirs[STROBE_SESSION_ID_MAX], elsewhere[STROBE_SESSION_ID_MAX];
  su_start(a, 0, mine);
  REQUIRE_EQ_INT(strobe_session_start(a, &(strobe_session_desc){.owner = OTHER_OWNER}, theirs), 0);
  su_start(b, 0, elsewhere);
  for (int i = 0; i < 5; i++) {
    su_op(a, wa, STROBE_OP_PASS, 1);
    su_op(b, wb, STROBE_OP_PASS, 1);
  }
  su_op(a, wa, STROBE_OP_INPUT, 1);
  app_scope(a);
  strobe_op idle = strobe_op_begin(a, wa, STROBE_OP_PASS, NULL);
  CHECK_EQ_INT(strobe_op_mark_idle(), 0);
  strobe_op_end(idle, 1);
  strobe_op across = strobe_op_begin(a, wa, STROBE_OP_PASS, NULL); /* runs across the reset */

  json_t *doc;
  strobe_report *before = read_as(a, mine, 0, &doc);
  CHECK_EQ_INT(jint(doc, "counts.returned"), 6);
  json_decref(doc);

  CHECK_EQ_INT(strobe_collector_reset(a, NULL, 0), 1); /* every session of owner 0 in collector a: one */

  strobe_report_free(read_as(a, mine, 0, &doc));
  CHECK_EQ_INT(jint(doc, "session.resets"), 1);
  CHECK(jnum(doc, "session.reset_ms") >= jnum(doc, "session.start_ms"));
  CHECK_EQ_INT(jint(doc, "counts.completed"), 0);
  CHECK_EQ_INT(jint(doc, "counts.returned"), 0);
  CHECK_EQ_INT(jint(doc, "counts.idle"), 0);
  CHECK_EQ_INT(jint(doc, "counts.completed_by_kind.pass"), 0);
  CHECK_EQ_INT(jint(doc, "application_scopes.completed"), 0);
  CHECK_EQ_INT(jint(doc, "application_scopes.started"), 0);
  CHECK_EQ_INT(jlen(doc, "application_scopes.scopes"), 0);
  CHECK(!strcmp(jstr(doc, "status"), "unfinished")); /* the crossing pass is still running */
  CHECK(jbool(json_array_get(jreq(doc, "unfinished"), 0), "started_before_session"));
  json_decref(doc);

  /* A snapshot taken before the reset keeps what it held. */
  json_t *kept = check_report_json(before);
  CHECK_EQ_INT(jint(kept, "counts.returned"), 6);
  CHECK_EQ_INT(jint(kept, "session.resets"), 0);
  json_decref(kept);
  strobe_report_free(before);

  /* Another owner's session in the same collector, and another collector: untouched. */
  strobe_report_free(read_as(a, theirs, OTHER_OWNER, &doc));
  CHECK_EQ_INT(jint(doc, "counts.returned"), 6);
  CHECK_EQ_INT(jint(doc, "counts.idle"), 1);
  CHECK_EQ_INT(jint(doc, "application_scopes.completed"), 1);
  CHECK_EQ_INT(jint(doc, "session.resets"), 0);
  CHECK(jnull(doc, "session.reset_ms"));
  json_decref(doc);
  strobe_report_free(read_as(b, elsewhere, 0, &doc));
  CHECK_EQ_INT(jint(doc, "counts.returned"), 5);
  CHECK_EQ_INT(jint(doc, "session.resets"), 0);
  json_decref(doc);

  /* After the reset: the crossing pass is a boundary exclusion, a new one is a sample. */
  strobe_op_end(across, 1);
  su_op(a, wa, STROBE_OP_PASS, 1);
  strobe_report_free(su_end(a, mine, &doc));
  CHECK_EQ_INT(jint(doc, "counts.returned"), 1);
  CHECK_EQ_INT(jint(doc, "counts.boundary_excluded"), 1);
  CHECK_EQ_INT(jint(doc, "session.resets"), 1);
  json_decref(doc);
  strobe_report *r = NULL;
  REQUIRE_EQ_INT(strobe_session_stop(a, theirs, OTHER_OWNER, &r), 0);
  doc = check_report_json(r);
  CHECK_EQ_INT(jint(doc, "counts.returned"), 8); /* it kept everything, the crossing pass included */
  json_decref(doc);
  strobe_report_free(r);
  su_end_free(b, elsewhere);
  strobe_collector_close(a);
  strobe_collector_close(b);
  strobe_collector_release(a);
  strobe_collector_release(b);
}

static void test_reset_by_id(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char one[STROBE_SESSION_ID_MAX], two[STROBE_SESSION_ID_MAX], theirs[STROBE_SESSION_ID_MAX];
  su_start(c, 0, one);
  su_start(c, 0, two);
  REQUIRE_EQ_INT(strobe_session_start(c, &(strobe_session_desc){.owner = OTHER_OWNER}, theirs), 0);
  for (int i = 0; i < 3; i++) su_op(c, w, STROBE_OP_PASS, 1);

  /* Refused: nothing changes. */
  CHECK_EQ_INT(strobe_collector_reset(c, theirs, 0), STROBE_ENOTOWNER);
  CHECK_EQ_INT(strobe_collector_reset(c, "profile_99", 0), STROBE_EUNKNOWN_ID);
  CHECK_EQ_INT(strobe_collector_reset(c, "nonsense", 0), STROBE_EUNKNOWN_ID);
  CHECK_EQ_INT(strobe_collector_reset(NULL, NULL, 0), STROBE_EINVAL);
  json_t *doc;
  strobe_report_free(read_as(c, theirs, OTHER_OWNER, &doc));
  CHECK_EQ_INT(jint(doc, "counts.returned"), 3);
  json_decref(doc);

  /* Only the named session. */
  CHECK_EQ_INT(strobe_collector_reset(c, two, 0), 1);
  CHECK_EQ_INT(strobe_collector_reset(c, two, 0), 1);
  strobe_report_free(read_as(c, two, 0, &doc));
  CHECK_EQ_INT(jint(doc, "counts.returned"), 0);
  CHECK_EQ_INT(jint(doc, "session.resets"), 2);
  json_decref(doc);
  strobe_report_free(read_as(c, one, 0, &doc));
  CHECK_EQ_INT(jint(doc, "counts.returned"), 3);
  json_decref(doc);

  /* The owner resets its own by id; an ended id answers ended. */
  CHECK_EQ_INT(strobe_collector_reset(c, theirs, OTHER_OWNER), 1);
  strobe_report_free(read_as(c, theirs, OTHER_OWNER, &doc));
  CHECK_EQ_INT(jint(doc, "counts.returned"), 0);
  json_decref(doc);
  su_end_free(c, one);
  CHECK_EQ_INT(strobe_collector_reset(c, one, 0), STROBE_EENDED);
  CHECK_EQ_INT(strobe_collector_reset(c, NULL, 12345), 0); /* an owner with no session */
  su_end_free(c, two);
  strobe_report *r = NULL;
  REQUIRE_EQ_INT(strobe_session_stop(c, theirs, OTHER_OWNER, &r), 0);
  check_report(r);
  strobe_report_free(r);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

#define CASES(X) X(reset_discards_only_the_owners) X(reset_by_id)
HARNESS_MAIN(CASES)
