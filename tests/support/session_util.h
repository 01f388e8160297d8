/*
 * session_util.h — small helpers the session tests share: a collector with
 * its "main" window, starting a session with a sample bound, reading and
 * ending with every report checked and saved (report_check.h), and one-line
 * operations; clocks and sleeps come from tests/support/fixtures.h. Include
 * report_check.h's requirements: the test declares
 * "STROBE_TEST_NEEDS: jansson reports".
 */
#ifndef STROBE_TESTS_SESSION_UTIL_H
#define STROBE_TESTS_SESSION_UTIL_H

#include <string.h>

#include "fixtures.h"
#include "report_check.h"

/* A fresh collector with its root window "main" registered. */
static inline strobe_collector *su_collector(strobe_window *main_window) {
  strobe_collector *c = NULL;
  REQUIRE_EQ_INT(strobe_collector_create(&c), 0);
  REQUIRE(c != NULL);
  if (main_window) REQUIRE_EQ_INT(strobe_window_register(c, "main", 0, main_window), 0);
  return c;
}

static inline strobe_window su_window(strobe_collector *c, const char *id, uint32_t flags) {
  strobe_window w;
  REQUIRE_EQ_INT(strobe_window_register(c, id, flags, &w), 0);
  CHECK(w.id != 0);
  return w;
}

/* Starts an in-process session (owner 0) keeping max_samples (0 = default). */
static inline void su_start(strobe_collector *c, uint32_t max_samples, char id[STROBE_SESSION_ID_MAX]) {
  strobe_session_desc o = {.max_samples = max_samples, .include_devtools = 0, .owner = 0};
  REQUIRE_EQ_INT(strobe_session_start(c, &o, id), 0);
  CHECK(strncmp(id, "profile_", 8) == 0);
}

/* A live snapshot, checked; the caller frees it (and the document). */
static inline strobe_report *su_read(strobe_collector *c, const char *id, json_t **doc) {
  strobe_report *r = NULL;
  REQUIRE_EQ_INT(strobe_session_read(c, id, 0, &r), 0);
  REQUIRE(r != NULL);
  json_t *d = check_report_json(r);
  CHECK(!jbool(d, "final"));
  if (doc)
    *doc = d;
  else
    json_decref(d);
  return r;
}

/* The final report, checked. */
static inline strobe_report *su_end(strobe_collector *c, const char *id, json_t **doc) {
  strobe_report *r = NULL;
  REQUIRE_EQ_INT(strobe_session_stop(c, id, 0, &r), 0);
  REQUIRE(r != NULL);
  json_t *d = check_report_json(r);
  CHECK(jbool(d, "final"));
  if (doc)
    *doc = d;
  else
    json_decref(d);
  return r;
}

/* Ends a session, checks its report and frees everything; returns nothing. */
static inline void su_end_free(strobe_collector *c, const char *id) { strobe_report_free(su_end(c, id, NULL)); }

/* One whole operation on this thread. */
static inline void su_op(strobe_collector *c, strobe_window w, strobe_op_kind kind, int committed) {
  int st = -1;
  strobe_op op = strobe_op_begin(c, w, kind, &st);
  CHECK_EQ_INT(st, 0);
  CHECK(op.id != 0);
  strobe_op_end(op, committed);
}

/* The object called name in an array of named objects (a sample's stages or
 * counters, stage_summary, memory.gauges), or NULL. */
static inline json_t *su_named(json_t *arr, const char *name) {
  size_t i;
  json_t *e;
  json_array_foreach(arr, i, e) if (!strcmp(jstr(e, "name"), name)) return e;
  return NULL;
}

/* The JSON of a report, as text (caller frees). */
static inline char *su_json(const strobe_report *r) {
  char *json = NULL;
  REQUIRE_EQ_INT(strobe_report_json(r, &json, NULL), 0);
  return json;
}

#endif
