/*
 * deprecated.c — the old names kept for one release (each public header's
 * >>deprecated section; the conventions atop include/strobe/strobe.h) still
 * compile and do what their successors do. Every alias is used exactly once
 * here, next to its successor, on the same objects.
 *
 * check_deprecated.py compiles this file again with -fsyntax-only and checks
 * that every alias declared in include/strobe/ warns (its use is counted
 * from the compiler's own warnings), and that STROBE_NO_DEPRECATED hides
 * them. This executable itself is built with the warning allowed
 * (-Wno-error=deprecated-declarations, -Wno-deprecated-declarations).
 *
 * With STROBE_TEST_WITH_SERVER (libstrobe_server built) it also checks the
 * server's aliases against a running server.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strobe/capture.h"
#include "strobe/flight.h"
#include "strobe/record.h"
#include "strobe/session.h"
#include "strobe/strobe.h"
#if defined(STROBE_TEST_WITH_SERVER)
#include "strobe/server.h"
#endif
#include "../support/harness.h"

/* strobe.h: misuse counters and the current scope, while a capture records. */
static void test_probe_and_capture(void) {
  REQUIRE(strobe_profiling_available()); /* strobe_static is built with profiling */
  char path[] = "/tmp/strobe-deprecated-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  strobe_record_desc rd = {.path = path};
  strobe_recorder *rec = NULL;
  CHECK_EQ_INT(strobe_record_start(&rd, &rec), 0);
  {
    STROBE_SCOPE("deprecated_outer");
    const strobe_site *old_scope = strobe_current_scope();
    CHECK(old_scope != NULL);
    CHECK(old_scope == strobe_thread_query_scope());
    CHECK(strcmp(old_scope->name, "deprecated_outer") == 0);
  }
  STROBE_END(); /* nothing open: counted as misuse */
  strobe_misuse old_misuse = strobe_misuse_counts();
  strobe_misuse new_misuse = strobe_query_misuse();
  CHECK(old_misuse.end_without_begin >= 1);
  CHECK_EQ_U64(old_misuse.end_without_begin, new_misuse.end_without_begin);

  CHECK_EQ_INT(strobe_record_flush(rec), 0);
  strobe_record_stats old_rs = strobe_record_query(rec);
  strobe_record_stats new_rs = strobe_record_query_stats(rec);
  CHECK(old_rs.bytes > 0);
  CHECK(old_rs.bytes <= new_rs.bytes);
  CHECK_EQ_INT(old_rs.error, new_rs.error);
  CHECK_EQ_INT(strobe_record_stop(rec), 0);

  /* capture.h: the reader's getters, before and after reading every record. */
  strobe_capture *cap = NULL;
  CHECK_EQ_INT(strobe_capture_open(path, &cap), 0);
  CHECK(strobe_capture_get_header(cap) == strobe_capture_query_header(cap));
  strobe_capture_record r;
  int rc;
  uint32_t scope_site = 0;
  while ((rc = strobe_capture_next(cap, &r)) > 0)
    if (r.type == STROBE_REC_END) scope_site = r.site;
  CHECK_EQ_INT(rc, 0);
  CHECK(scope_site != 0);
  CHECK_EQ_INT(strobe_capture_site_limit(cap), strobe_capture_query_site_limit(cap));
  CHECK(strobe_capture_query_site_limit(cap) > scope_site);
  CHECK(strobe_capture_get_site(cap, scope_site) == strobe_capture_query_site(cap, scope_site));
  CHECK(strobe_capture_query_site(cap, scope_site) != NULL);
  CHECK_EQ_INT(strobe_capture_thread_count(cap), strobe_capture_query_thread_count(cap));
  CHECK(strobe_capture_query_thread_count(cap) >= 1);
  CHECK(strobe_capture_get_thread(cap, 0) == strobe_capture_query_thread(cap, 0));
  CHECK(strobe_capture_query_thread(cap, 0) != NULL);
  strobe_capture_totals old_t = strobe_capture_get_totals(cap);
  strobe_capture_totals new_t = strobe_capture_query_totals(cap);
  CHECK(memcmp(&old_t, &new_t, sizeof old_t) == 0);
  CHECK(new_t.scopes >= 1);
  CHECK_EQ_U64(strobe_capture_position(cap), strobe_capture_query_position(cap));
  CHECK(strobe_capture_query_position(cap) > 0);
  strobe_capture_close(cap);
  unlink(path);
}

/* record.h: a live stream's counters. */
static void test_stream(void) {
  strobe_stream *s = NULL;
  CHECK_EQ_INT(strobe_stream_start(NULL, &s), 0);
  strobe_stream_stats old_s = strobe_stream_query(s);
  strobe_stream_stats new_s = strobe_stream_query_stats(s);
  CHECK(old_s.bytes_produced > 0); /* the header is queued at start */
  CHECK(old_s.bytes_produced <= new_s.bytes_produced);
  CHECK_EQ_INT(strobe_stream_stop(s), 0);
  old_s = strobe_stream_query(s);
  new_s = strobe_stream_query_stats(s);
  CHECK(memcmp(&old_s, &new_s, sizeof old_s) == 0);
  strobe_stream_free(s);
}

/* flight.h: the recorder's configuration and counters. */
static void test_flight(void) {
  strobe_flight_recorder_desc d = {.max_mib = 1, .max_age_ms = 1234};
  strobe_flight_recorder *fr = NULL;
  CHECK_EQ_INT(strobe_flight_recorder_start(&d, &fr), 0);
  strobe_flight_recorder_desc old_d = strobe_flight_recorder_get_desc(fr);
  strobe_flight_recorder_desc new_d = strobe_flight_recorder_query_desc(fr);
  CHECK_EQ_INT(old_d.max_mib, 1);
  CHECK_EQ_INT(old_d.max_age_ms, 1234);
  CHECK(memcmp(&old_d, &new_d, sizeof old_d) == 0);
  strobe_flight_recorder_stats old_s = strobe_flight_recorder_query(fr);
  strobe_flight_recorder_stats new_s = strobe_flight_recorder_query_stats(fr);
  CHECK_EQ_U64(old_s.capacity_bytes, 1u << 20);
  CHECK_EQ_U64(old_s.capacity_bytes, new_s.capacity_bytes);
  CHECK_EQ_INT(strobe_flight_recorder_stop(fr), 0);
}

/* session.h: collectors, operations, application scopes, sessions, reports. */
static void test_session(void) {
  strobe_collector *c = NULL;
  CHECK_EQ_INT(strobe_collector_create(&c), 0);
  strobe_window w;
  CHECK_EQ_INT(strobe_window_register(c, "main", 0, &w), 0);
  strobe_window refused;
  CHECK(strobe_window_register(c, "", 0, &refused) < 0); /* counted as untracked */
  CHECK_EQ_U64(strobe_collector_untracked_windows(c), 1);
  CHECK_EQ_U64(strobe_collector_query_untracked_windows(c), 1);

  strobe_session_options opts = {.max_samples = 10};
  char id[STROBE_SESSION_ID_MAX];
  CHECK_EQ_INT(strobe_session_start(c, &opts, id), 0);
  CHECK_EQ_INT(strobe_session_count(c), 1);
  CHECK_EQ_INT(strobe_collector_query_session_count(c), 1);
  strobe_session_info old_i[2], new_i[2];
  CHECK_EQ_INT(strobe_session_list(c, old_i, 2), 1);
  CHECK_EQ_INT(strobe_collector_query_sessions(c, new_i, 2), 1);
  CHECK(strcmp(old_i[0].id, id) == 0 && strcmp(new_i[0].id, id) == 0);
  CHECK_EQ_INT(old_i[0].max_samples, 10);
  strobe_window_info old_w[2], new_w[2];
  CHECK_EQ_INT(strobe_window_list(c, old_w, 2), 1);
  CHECK_EQ_INT(strobe_collector_query_windows(c, new_w, 2), 1);
  CHECK(strcmp(old_w[0].id, "main") == 0 && strcmp(new_w[0].id, "main") == 0);

  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  CHECK(op.id != 0);
  strobe_op_count("nodes_old", 2);
  strobe_op_counter_add("nodes_new", 3);
  {
    STROBE_STAGE("deprecated_stage", NULL);
  }
  strobe_op_end(op, 1);
  strobe_collector_gauge(c, "gauge_old", 1.0);
  strobe_collector_gauge_set(c, "gauge_new", 2.0);

  strobe_app_scope top = strobe_app_scope_begin(c, "main", "deprecated_top", STROBE_LANE_UI);
  CHECK_EQ_INT(strobe_app_scope_query_status(&top), 0);
  strobe_app_scope child = strobe_app_scope_child(&top, "deprecated_child", STROBE_LANE_UI);
  CHECK(child.slot != 0);
  CHECK_EQ_INT(strobe_app_scope_status(&child), 0);
  strobe_app_parent old_p = strobe_app_scope_parent(&top);
  strobe_app_parent new_p = strobe_app_scope_query_parent(&top);
  CHECK(old_p.id != 0 && old_p.id == new_p.id && old_p.slot == new_p.slot);
  strobe_app_scope via = strobe_app_scope_child_of(c, old_p, "deprecated_via", STROBE_LANE_WORKER);
  CHECK(via.slot != 0);
  strobe_app_scope_end(&via);
  strobe_app_scope_end(&child);
  strobe_app_scope_finish(&top);
  CHECK(strobe_app_scope_query_status(&top) != 0); /* ended: no longer live */

  strobe_report *rep = NULL;
  CHECK_EQ_INT(strobe_session_end(c, id, 0, &rep), 0);
  CHECK_EQ_INT(strobe_collector_query_session_count(c), 0);
  CHECK_EQ_INT(strobe_report_get_status(rep), strobe_report_query_status(rep));
  CHECK_EQ_INT(strobe_report_query_status(rep), STROBE_REPORT_COMPLETE);
  strobe_report_counts old_c = strobe_report_get_counts(rep);
  strobe_report_counts new_c = strobe_report_query_counts(rep);
  CHECK_EQ_U64(old_c.returned, 1);
  CHECK(memcmp(&old_c, &new_c, sizeof old_c) == 0);
  CHECK(strobe_report_id(rep) == strobe_report_query_id(rep));
  CHECK(strcmp(strobe_report_query_id(rep), id) == 0);
  strobe_stage_summary old_st[2], new_st[2];
  CHECK_EQ_INT(strobe_report_stage_summary(rep, old_st, 2), 1);
  CHECK_EQ_INT(strobe_report_query_stages(rep, new_st, 2), 1);
  CHECK(strcmp(old_st[0].name, "deprecated_stage") == 0 && old_st[0].name == new_st[0].name);
  CHECK_EQ_U64(old_st[0].n, 1);
  strobe_report_free(rep);

  /* A second session, stopped under the new name, then read through the old one: ended. */
  CHECK_EQ_INT(strobe_session_start(c, NULL, id), 0);
  CHECK_EQ_INT(strobe_session_stop(c, id, 0, &rep), 0);
  strobe_report_free(rep);
  rep = NULL;
  CHECK_EQ_INT(strobe_session_end(c, id, 0, &rep), STROBE_EENDED);
  CHECK(rep == NULL);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

#if defined(STROBE_TEST_WITH_SERVER)
/* server.h: port, token file, counters and the viewer's recording. */
static void test_server(void) {
  char dir[] = "/tmp/strobe-deprecated-srv-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char token_file[64];
  snprintf(token_file, sizeof token_file, "%s/token", dir);
  strobe_server_desc d = {.token_file = token_file, .quiet = 1};
  strobe_server *s = NULL;
  CHECK_EQ_INT(strobe_server_start(&d, &s), 0);
  CHECK(strobe_server_port(s) != 0);
  CHECK_EQ_INT(strobe_server_port(s), strobe_server_query_port(s));
  CHECK(strobe_server_token_file(s) == strobe_server_query_token_file(s));
  CHECK(strcmp(strobe_server_query_token_file(s), token_file) == 0);
  strobe_server_stats old_s = strobe_server_query(s);
  strobe_server_stats new_s = strobe_server_query_stats(s);
  CHECK(memcmp(&old_s, &new_s, sizeof old_s) == 0);
  strobe_flight_recorder_desc fd = {.max_mib = 1};
  CHECK_EQ_INT(strobe_server_recording(s), 0);
  CHECK_EQ_INT(strobe_server_record(s, &fd), 0);
  CHECK_EQ_INT(strobe_server_recording(s), 1);
  CHECK_EQ_INT(strobe_server_record_start(s, &fd), STROBE_ESTATE); /* already recording */
  CHECK_EQ_INT(strobe_server_record_stop(s), 0);
  strobe_server_stop(s);
  CHECK(access(token_file, F_OK) != 0); /* removed at stop */
  rmdir(dir);
}
#endif

#if defined(STROBE_TEST_WITH_SERVER)
#define SERVER_CASES(X) X(server)
#else
#define SERVER_CASES(X)
#endif
#define CASES(X)        \
  X(probe_and_capture)  \
  X(stream)             \
  X(flight)             \
  X(session)            \
  SERVER_CASES(X)
HARNESS_MAIN(CASES)
