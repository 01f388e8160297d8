/*
 * test_session_bounds.c — proves the session bounds and lifecycle
 * (docs/sessions.md §Sessions, §Bounds and lifecycle, §Coverage and units):
 * at most eight concurrent sessions; 1..240 retained samples (default 120),
 * oldest dropped with completed/returned/dropped counts; ids profile_N that
 * are unique and must be used as returned; unknown, ended (64 remembered)
 * and cancelled ids error; ending one session never touches another; a
 * finalized report never receives a later completion; read is a snapshot
 * that leaves the session running; after the collector closes a surviving
 * handle may read/end but not start; owners can only read/end their own
 * sessions and cancelling an owner leaves in-process sessions running; no
 * history replay on start; no frame forced by a session; per-collector
 * epochs, millisecond units, gauges kept at most once a second.
 *
 * STROBE_TEST_NEEDS: jansson reports
 */
#include <stdio.h>
#include <string.h>

#include "support/session_util.h"

static void test_eight_concurrent_sessions(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char ids[STROBE_MAX_SESSIONS][STROBE_SESSION_ID_MAX];
  /* "across all consumers": in-process (owner 0) and MCP-owned (owner 9) together. */
  for (int i = 0; i < STROBE_MAX_SESSIONS; i++) {
    strobe_session_desc o = {.max_samples = 0, .include_devtools = 0, .owner = (uint64_t)(i % 2 ? 9 : 0)};
    REQUIRE_EQ_INT(strobe_session_start(c, &o, ids[i]), 0);
    for (int k = 0; k < i; k++) CHECK(strcmp(ids[i], ids[k]) != 0);
  }
  CHECK_EQ_INT(strobe_collector_query_session_count(c), 8);
  char ninth[STROBE_SESSION_ID_MAX] = "x";
  strobe_session_desc o9 = {.max_samples = 0, .include_devtools = 0, .owner = 9};
  CHECK_EQ_INT(strobe_session_start(c, NULL, ninth), STROBE_ELIMIT);
  CHECK_EQ_INT(strobe_session_start(c, &o9, ninth), STROBE_ELIMIT);
  CHECK_EQ_INT(ninth[0], 0); /* no id on error */
  CHECK_EQ_INT(strobe_collector_query_session_count(c), 8);
  /* Ending one frees its place. */
  su_end_free(c, ids[0]);
  REQUIRE_EQ_INT(strobe_session_start(c, NULL, ninth), 0);
  CHECK_EQ_INT(strobe_collector_query_session_count(c), 8);
  for (int i = 1; i < STROBE_MAX_SESSIONS; i++) {
    strobe_report *r = NULL;
    REQUIRE_EQ_INT(strobe_session_stop(c, ids[i], (uint64_t)(i % 2 ? 9 : 0), &r), 0);
    check_report(r);
    strobe_report_free(r);
  }
  su_end_free(c, ninth);
  CHECK_EQ_INT(strobe_collector_query_session_count(c), 0);
  strobe_collector_release(c);
}

static void test_max_samples_bounds(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  json_t *doc;

  su_start(c, 0, id); /* 0 means the default */
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "session.max_samples"), 120);
  CHECK_EQ_INT(jint(doc, "application_scopes.max_scopes"), 120);
  json_decref(doc);

  REQUIRE_EQ_INT(strobe_session_start(c, NULL, id), 0); /* NULL options: all defaults */
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "session.max_samples"), 120);
  json_decref(doc);

  strobe_session_desc bad = {.max_samples = 241, .include_devtools = 0, .owner = 0};
  CHECK_EQ_INT(strobe_session_start(c, &bad, id), STROBE_EINVAL);
  bad.max_samples = 100000;
  CHECK_EQ_INT(strobe_session_start(c, &bad, id), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_collector_query_session_count(c), 0); /* nothing started */

  const uint32_t ok[] = {1, 240};
  for (int i = 0; i < 2; i++) {
    su_start(c, ok[i], id);
    strobe_report_free(su_end(c, id, &doc));
    CHECK_EQ_INT(jint(doc, "session.max_samples"), ok[i]);
    CHECK_EQ_INT(jint(doc, "application_scopes.max_scopes"), ok[i] < 128 ? ok[i] : 128);
    json_decref(doc);
  }
  strobe_collector_release(c);
}

/* Oldest samples are dropped on overflow; reports include completed, returned and dropped. */
static void test_oldest_dropped(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 3, id);
  for (int i = 0; i < 5; i++) su_op(c, w, STROBE_OP_PASS, 1);
  json_t *doc;
  strobe_report *r = su_end(c, id, &doc);
  CHECK_EQ_INT(jint(doc, "counts.completed"), 5);
  CHECK_EQ_INT(jint(doc, "counts.returned"), 3);
  CHECK_EQ_INT(jint(doc, "counts.dropped"), 2);
  /* The newest three, newest first: frames 5, 4, 3. */
  json_t *samples = jreq(doc, "samples");
  for (int i = 0; i < 3; i++) CHECK_EQ_INT(jint(json_array_get(samples, (size_t)i), "frame_id"), 5 - i);
  strobe_report_counts n = strobe_report_query_counts(r);
  CHECK_EQ_INT(n.completed, 5);
  CHECK_EQ_INT(n.returned, 3);
  CHECK_EQ_INT(n.dropped, 2);
  json_decref(doc);
  strobe_report_free(r);

  /* At the upper bound. */
  su_start(c, 240, id);
  for (int i = 0; i < 250; i++) su_op(c, w, STROBE_OP_INPUT, 1);
  r = su_end(c, id, &doc);
  CHECK_EQ_INT(jint(doc, "counts.completed"), 250);
  CHECK_EQ_INT(jint(doc, "counts.returned"), 240);
  CHECK_EQ_INT(jint(doc, "counts.dropped"), 10);
  CHECK_EQ_INT(jint(doc, "counts.completed_by_kind.input"), 250);
  json_decref(doc);
  strobe_report_free(r);
  strobe_collector_release(c);
}

/* Ids are profile_N, unique, and not fixed: a new session never reuses an ended id. */
static void test_ids_unique_not_fixed(void) {
  strobe_collector *c = su_collector(NULL);
  char seen[40][STROBE_SESSION_ID_MAX];
  for (int i = 0; i < 40; i++) {
    su_start(c, 1, seen[i]);
    CHECK(rc_matches("^profile_[1-9][0-9]*$", seen[i]));
    for (int k = 0; k < i; k++) CHECK(strcmp(seen[i], seen[k]) != 0);
    if (i % 10 != 9) su_end_free(c, seen[i]); /* a mix of ended and still-active ones */
  }
  for (int i = 9; i < 40; i += 10) su_end_free(c, seen[i]);
  strobe_collector_release(c);
}

static void test_unknown_and_ended_ids(void) {
  strobe_collector *c = su_collector(NULL);
  strobe_report *r = (strobe_report *)1;
  const char *unknown[] = {"profile_999", "profile_0", "profile_01", "profile_", "profile_1x", "bogus", "", "PROFILE_1",
                           "profile_99999999999999999999999"};
  for (size_t i = 0; i < sizeof unknown / sizeof *unknown; i++) {
    CHECK_EQ_INT(strobe_session_read(c, unknown[i], 0, &r), STROBE_EUNKNOWN_ID);
    CHECK(r == NULL);
    CHECK_EQ_INT(strobe_session_stop(c, unknown[i], 0, &r), STROBE_EUNKNOWN_ID);
  }
  CHECK_EQ_INT(strobe_session_read(c, NULL, 0, &r), STROBE_EINVAL);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  CHECK_EQ_INT(strobe_session_read(c, id, 0, NULL), STROBE_EINVAL);
  su_end_free(c, id);
  CHECK_EQ_INT(strobe_session_read(c, id, 0, &r), STROBE_EENDED);
  CHECK(r == NULL);
  CHECK_EQ_INT(strobe_session_stop(c, id, 0, &r), STROBE_EENDED);
  CHECK(strcmp(strobe_strerror(STROBE_EENDED), strobe_strerror(STROBE_EUNKNOWN_ID)) != 0);
  CHECK(!strcmp(strobe_err_name(STROBE_EENDED), "STROBE_EENDED"));
  strobe_collector_release(c);
}

/* The last 64 ended ids are remembered; older ones may be reported as unknown. */
static void test_last_64_ended_remembered(void) {
  strobe_collector *c = su_collector(NULL);
  char ids[65][STROBE_SESSION_ID_MAX];
  for (int i = 0; i < 65; i++) {
    su_start(c, 1, ids[i]);
    strobe_report *r = NULL;
    REQUIRE_EQ_INT(strobe_session_stop(c, ids[i], 0, &r), 0);
    strobe_report_free(r);
  }
  strobe_report *r = NULL;
  for (int i = 1; i < 65; i++) CHECK_EQ_INT(strobe_session_read(c, ids[i], 0, &r), STROBE_EENDED);
  CHECK_EQ_INT(strobe_session_read(c, ids[0], 0, &r), STROBE_EUNKNOWN_ID);
  CHECK_EQ_INT(strobe_session_stop(c, ids[0], 0, &r), STROBE_EUNKNOWN_ID);
  strobe_collector_release(c);
}

/* docs/sessions.md §Sessions: ending session 2 cannot reset, clear or stop session 1. */
static void test_end_two_keeps_one(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id1[STROBE_SESSION_ID_MAX], id2[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id1);
  su_op(c, w, STROBE_OP_PASS, 1);
  su_start(c, 0, id2);
  su_op(c, w, STROBE_OP_PASS, 1);
  json_t *d2;
  strobe_report_free(su_end(c, id2, &d2));
  CHECK_EQ_INT(jint(d2, "counts.completed"), 1);
  json_decref(d2);
  /* Normal application work continues. Session 1 keeps collecting. */
  CHECK_EQ_INT(strobe_collector_query_session_count(c), 1);
  su_op(c, w, STROBE_OP_PASS, 1);
  json_t *d1;
  strobe_report_free(su_end(c, id1, &d1));
  CHECK_EQ_INT(jint(d1, "counts.completed"), 3);
  CHECK_EQ_INT(jint(d1, "counts.dropped"), 0);
  json_decref(d1);
  strobe_collector_release(c);
}

/* A finalized report cannot receive a later completion. */
static void test_final_report_never_changes(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id1[STROBE_SESSION_ID_MAX], id2[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id1);
  su_start(c, 0, id2);
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  json_t *doc;
  strobe_report *r2 = su_end(c, id2, &doc);
  CHECK_EQ_INT(jint(doc, "counts.unfinished"), 1);
  CHECK(!strcmp(jstr(doc, "status"), "unfinished"));
  json_decref(doc);
  char *before = su_json(r2);
  strobe_op_end(op, 1); /* completes after session 2 ended */
  char *after = su_json(r2);
  CHECK(!strcmp(before, after));
  CHECK_EQ_INT(strobe_report_query_counts(r2).completed, 0);
  CHECK_EQ_INT(strobe_report_query_counts(r2).returned, 0);
  strobe_report *again = NULL;
  CHECK_EQ_INT(strobe_session_read(c, id2, 0, &again), STROBE_EENDED);
  /* Session 1 still gets it. */
  strobe_report *r1 = su_end(c, id1, &doc);
  CHECK_EQ_INT(jint(doc, "counts.completed"), 1);
  json_decref(doc);
  free(before);
  free(after);
  strobe_report_free(r1);
  strobe_report_free(r2);
  strobe_collector_release(c);
}

/* read(id) returns an owned immutable snapshot while leaving that session running. */
static void test_read_is_snapshot(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  su_op(c, w, STROBE_OP_PASS, 1);
  json_t *doc;
  strobe_report *r1 = su_read(c, id, &doc);
  CHECK_EQ_INT(jint(doc, "counts.returned"), 1);
  json_decref(doc);
  char *before = su_json(r1);
  su_op(c, w, STROBE_OP_PASS, 1);
  CHECK_EQ_INT(strobe_collector_query_session_count(c), 1);
  strobe_report *r2 = su_read(c, id, &doc);
  CHECK_EQ_INT(jint(doc, "counts.returned"), 2);
  json_decref(doc);
  char *after = su_json(r1);
  CHECK(!strcmp(before, after)); /* the first snapshot did not move */
  /* The snapshot outlives the session and its collector. */
  strobe_report *r3 = su_end(c, id, NULL);
  strobe_collector_release(c);
  CHECK_EQ_INT(strobe_report_query_counts(r1).returned, 1);
  CHECK_EQ_INT(strobe_report_query_counts(r3).returned, 2);
  char *late = su_json(r1);
  CHECK(!strcmp(before, late));
  free(before);
  free(after);
  free(late);
  strobe_report_free(r1);
  strobe_report_free(r2);
  strobe_report_free(r3);
}

/* After the root tree closes, surviving handles may read/end existing sessions but cannot start a new one. */
static void test_closed_collector_handles(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  strobe_collector *h = strobe_collector_retain(c);
  CHECK(h == c);
  char id1[STROBE_SESSION_ID_MAX], id2[STROBE_SESSION_ID_MAX], id3[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id1);
  su_start(c, 0, id2);
  su_op(c, w, STROBE_OP_PASS, 1);
  strobe_collector_close(c);
  strobe_collector_close(c); /* idempotent */
  strobe_collector_release(c); /* the owner goes away; the handle survives */

  CHECK_EQ_INT(strobe_session_start(h, NULL, id3), STROBE_ECLOSED);
  CHECK_EQ_INT(id3[0], 0);
  int st = 0;
  strobe_op op = strobe_op_begin(h, w, STROBE_OP_PASS, &st);
  CHECK_EQ_INT(st, STROBE_ECLOSED);
  CHECK_EQ_INT(op.id, 0);
  strobe_op_end(op, 1); /* inert: harmless */
  strobe_window w2;
  CHECK_EQ_INT(strobe_window_register(h, "w1", 0, &w2), STROBE_ECLOSED);

  json_t *doc;
  strobe_report *r = su_read(h, id1, &doc);
  CHECK_EQ_INT(jint(doc, "counts.completed"), 1);
  json_decref(doc);
  strobe_report_free(r);
  r = su_end(h, id1, &doc);
  CHECK_EQ_INT(jint(doc, "counts.completed"), 1);
  json_decref(doc);
  strobe_report_free(r);
  su_end_free(h, id2);
  strobe_report *gone = NULL;
  CHECK_EQ_INT(strobe_session_read(h, id1, 0, &gone), STROBE_EENDED);
  strobe_collector_release(h);
  strobe_collector_release(NULL); /* accepts NULL */
  strobe_collector_close(NULL);
}

/* MCP can only read/end sessions it started; cancelling an owner discards its
 * sessions, in-process sessions continue, and nothing revives cancelled ids. */
static void test_owners_and_cancel(void) {
  enum { MCP = 0x4d4350 };
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  strobe_session_desc mcp = {.max_samples = 0, .include_devtools = 0, .owner = MCP};
  char a[STROBE_SESSION_ID_MAX], b[STROBE_SESSION_ID_MAX], p[STROBE_SESSION_ID_MAX];
  REQUIRE_EQ_INT(strobe_session_start(c, &mcp, a), 0);
  REQUIRE_EQ_INT(strobe_session_start(c, &mcp, b), 0);
  su_start(c, 0, p);
  su_op(c, w, STROBE_OP_PASS, 1);

  strobe_report *r = NULL;
  CHECK_EQ_INT(strobe_session_read(c, a, 0, &r), STROBE_ENOTOWNER);
  CHECK_EQ_INT(strobe_session_stop(c, a, 0, &r), STROBE_ENOTOWNER);
  CHECK_EQ_INT(strobe_session_read(c, p, MCP, &r), STROBE_ENOTOWNER);
  CHECK_EQ_INT(strobe_session_stop(c, p, MCP, &r), STROBE_ENOTOWNER);
  REQUIRE_EQ_INT(strobe_session_read(c, a, MCP, &r), 0);
  check_report(r);
  CHECK_EQ_INT(strobe_report_query_counts(r).completed, 1);
  strobe_report_free(r);

  CHECK_EQ_INT(strobe_session_cancel_owner(c, MCP), 2);
  CHECK_EQ_INT(strobe_collector_query_session_count(c), 1);
  CHECK_EQ_INT(strobe_session_read(c, a, MCP, &r), STROBE_ECANCELLED);
  CHECK_EQ_INT(strobe_session_stop(c, b, MCP, &r), STROBE_ECANCELLED);
  /* Another owner is told only that it is not theirs, not that it was cancelled. */
  CHECK_EQ_INT(strobe_session_read(c, a, 0, &r), STROBE_ENOTOWNER);
  CHECK_EQ_INT(strobe_session_cancel_owner(c, MCP), 0);

  /* In-process sessions and live work continue. */
  su_op(c, w, STROBE_OP_PASS, 1);
  /* Regranting: a new MCP session gets a new id; the cancelled ones stay cancelled. */
  char again[STROBE_SESSION_ID_MAX];
  REQUIRE_EQ_INT(strobe_session_start(c, &mcp, again), 0);
  CHECK(strcmp(again, a) && strcmp(again, b));
  CHECK_EQ_INT(strobe_session_read(c, a, MCP, &r), STROBE_ECANCELLED);
  su_op(c, w, STROBE_OP_PASS, 1);
  REQUIRE_EQ_INT(strobe_session_stop(c, again, MCP, &r), 0);
  check_report(r);
  CHECK_EQ_INT(strobe_report_query_counts(r).completed, 1); /* no history from the cancelled ones */
  strobe_report_free(r);
  json_t *doc;
  strobe_report_free(su_end(c, p, &doc));
  CHECK_EQ_INT(jint(doc, "counts.completed"), 3);
  json_decref(doc);
  /* Ended ids too: the owner hears "ended", anyone else "not_owner" (never that it existed). */
  CHECK_EQ_INT(strobe_session_read(c, again, MCP, &r), STROBE_EENDED);
  CHECK_EQ_INT(strobe_session_read(c, again, 0, &r), STROBE_ENOTOWNER);
  CHECK_EQ_INT(strobe_session_stop(c, again, 0, &r), STROBE_ENOTOWNER);
  CHECK_EQ_INT(strobe_session_read(c, p, MCP, &r), STROBE_ENOTOWNER);
  CHECK_EQ_INT(strobe_session_read(c, p, 0, &r), STROBE_EENDED);
  strobe_collector_release(c);
}

/* There is no prior-history replay on start, and no frame is forced to obtain a sample. */
static void test_no_replay_no_forced_frame(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  for (int i = 0; i < 10; i++) su_op(c, w, STROBE_OP_PASS, 1);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  json_t *doc;
  strobe_report_free(su_read(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "counts.completed"), 0);
  CHECK_EQ_INT(jint(doc, "counts.boundary_excluded"), 0);
  CHECK_EQ_INT(jint(doc, "counts.unfinished"), 0);
  CHECK(!strcmp(jstr(doc, "status"), "empty"));
  json_decref(doc);
  strobe_report_free(su_end(c, id, NULL));
  /* Start, read and end began no pass on any window (the window's own pass
   * count), and the next pass is frame 11. */
  strobe_window_info info[2];
  REQUIRE_EQ_INT(strobe_collector_query_windows(c, info, 2), 1);
  CHECK_EQ_U64(info[0].passes, 10);
  su_start(c, 0, id);
  su_op(c, w, STROBE_OP_PASS, 1);
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(json_array_get(jreq(doc, "samples"), 0), "frame_id"), 11);
  json_decref(doc);
  strobe_collector_release(c);
}

/* Separate root trees own separate collectors: sessions see only their collector's work. */
static void test_separate_collectors(void) {
  strobe_window wa, wb;
  strobe_collector *a = su_collector(&wa);
  strobe_collector *b = su_collector(&wb);
  char ia[STROBE_SESSION_ID_MAX], ib[STROBE_SESSION_ID_MAX];
  su_start(a, 0, ia);
  su_start(b, 0, ib);
  su_op(a, wa, STROBE_OP_PASS, 1);
  su_op(a, wa, STROBE_OP_PASS, 1);
  su_op(b, wb, STROBE_OP_INPUT, 1);
  /* A stale window handle (another generation of the slot) is refused. */
  int st = 0;
  strobe_window foreign = {wa.id + (1u << 8)}; /* same slot, another generation */
  strobe_op op = strobe_op_begin(b, foreign, STROBE_OP_PASS, &st);
  CHECK_EQ_INT(st, STROBE_EWINDOW);
  CHECK_EQ_INT(op.id, 0);
  json_t *da, *db;
  strobe_report_free(su_end(a, ia, &da));
  strobe_report_free(su_end(b, ib, &db));
  CHECK_EQ_INT(jint(da, "counts.completed"), 2);
  CHECK_EQ_INT(jint(db, "counts.completed"), 1);
  CHECK_EQ_INT(jint(db, "counts.completed_by_kind.input"), 1);
  json_decref(da);
  json_decref(db);
  strobe_collector_release(a);
  strobe_collector_release(b);

  /* The process's default collector: one, created on first use. */
  strobe_collector *d = strobe_default_collector();
  CHECK(d != NULL && d == strobe_default_collector());
  strobe_window dw = su_window(d, "main", 0);
  char id[STROBE_SESSION_ID_MAX];
  su_start(d, 0, id);
  su_op(d, dw, STROBE_OP_PASS, 1);
  json_t *doc;
  strobe_report_free(su_end(d, id, &doc));
  CHECK_EQ_INT(jint(doc, "counts.completed"), 1);
  json_decref(doc);
  CHECK_EQ_INT(strobe_window_close(d, dw), 0);
}

/* Units: durations in milliseconds; timestamps relative to the collector's creation. */
static void test_units_and_epoch(void) {
  strobe_window wa;
  strobe_collector *a = su_collector(&wa);
  fx_sleep_ms(60);
  strobe_window wb;
  strobe_collector *b = su_collector(&wb);
  char ia[STROBE_SESSION_ID_MAX], ib[STROBE_SESSION_ID_MAX];
  su_start(b, 0, ib); /* b first: then a's start is later in time, and later still on a's older epoch */
  su_start(a, 0, ia);
  strobe_op op = strobe_op_begin(a, wa, STROBE_OP_PASS, NULL);
  fx_sleep_ms(20);
  strobe_op_end(op, 1);
  json_t *da, *db;
  strobe_report_free(su_end(a, ia, &da));
  strobe_report_free(su_end(b, ib, &db));
  /* Each collector has its own epoch: a's is at least 60 ms older. */
  CHECK(jnum(da, "session.start_ms") >= 60.0);
  CHECK(jnum(da, "session.start_ms") - jnum(db, "session.start_ms") >= 60.0 - RC_MS_EPS);
  /* 20 ms of sleeping reads as >= 20 (ms), not 20000 (us) or 0.02 (s). */
  double total = jnum(json_array_get(jreq(da, "samples"), 0), "total_ms");
  CHECK(total >= 20.0);
  CHECK(total < 5000.0);
  /* Build metadata: version, OS/arch, features, assertions; not the optimization level. */
  CHECK(!strcmp(jstr(da, "build.strobe_version"), STROBE_VERSION_STRING));
  CHECK(strlen(jstr(da, "build.os")) > 0 && strlen(jstr(da, "build.arch")) > 0);
  CHECK(!strcmp(json_string_value(json_array_get(jreq(da, "build.features"), 0)), "profiling"));
  CHECK(jpath(da, "build.optimization") == NULL); /* and the schema admits no other field */
  /* Starting a session measured the per-scope overhead. */
  CHECK(jnum(da, "overhead_per_scope_ns") > 0);
  json_decref(da);
  json_decref(db);
  strobe_collector_release(a);
  strobe_collector_release(b);
}

/* Memory gauges keep at most one value per second and the unit they were
 * declared with (none without one); run metadata is carried. */
static void test_gauges_and_run_info(void) {
  strobe_collector *c = su_collector(NULL);
  double t0 = fx_now_ms();
  strobe_collector_gauge_set_unit(c, "heap_bytes", 100, STROBE_UNIT_BYTES);
  strobe_collector_gauge_set(c, "heap_bytes", 200); /* within the second: ignored */
  strobe_collector_gauge_set(c, "queue", 3);
  strobe_collector_gauge_set_unit(c, "odd", 1, (strobe_unit)200); /* no unit: counted as none */
  CHECK_EQ_INT(strobe_collector_set_run_info(c, "source_sha", "0123abc"), 0);
  CHECK_EQ_INT(strobe_collector_set_run_info(c, "fixture", "dense_list"), 0);
  CHECK_EQ_INT(strobe_collector_set_run_info(c, "", "x"), STROBE_ELABEL);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  json_t *doc;
  strobe_report_free(su_read(c, id, &doc));
  json_t *g = json_array_get(jreq(doc, "memory.gauges"), 0);
  CHECK(!strcmp(jstr(g, "name"), "heap_bytes"));
  CHECK(!strcmp(jstr(g, "unit"), strobe_unit_name(STROBE_UNIT_BYTES)));
  CHECK(!strcmp(jstr(json_array_get(jreq(doc, "memory.gauges"), 1), "unit"), strobe_unit_name(STROBE_UNIT_NONE)));
  CHECK(!strcmp(jstr(json_array_get(jreq(doc, "memory.gauges"), 2), "unit"), strobe_unit_name(STROBE_UNIT_NONE)));
  if (fx_now_ms() - t0 < 1000.0) CHECK_NEAR(jnum(g, "value"), 100, 1e-9); /* a loaded machine may pass the second */
  json_decref(doc);
  /* A second later the level is sampled again, and again only once. */
  while (fx_now_ms() - t0 < 1050.0) fx_sleep_ms(20);
  strobe_collector_gauge_set(c, "heap_bytes", 300);
  double t1 = fx_now_ms();
  strobe_collector_gauge_set(c, "heap_bytes", 400);
  strobe_report_free(su_end(c, id, &doc));
  g = json_array_get(jreq(doc, "memory.gauges"), 0);
  if (fx_now_ms() - t1 < 1000.0) CHECK_NEAR(jnum(g, "value"), 300, 1e-9);
  CHECK(jnum(g, "sampled_ms_ago") < fx_now_ms() - t0 - 1000.0 + RC_MS_EPS); /* the later sample, not the first */
  CHECK(!strcmp(jstr(doc, "run.source_sha"), "0123abc"));
  CHECK(!strcmp(jstr(doc, "run.fixture"), "dense_list"));
  json_decref(doc);
  strobe_collector_release(c);
}

/* Per-operation tables are bounded (32 stages, 16 counters); what does not
 * fit is counted on the sample, never silently lost. */
static void test_stage_and_counter_bounds(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  enum { STAGES = STROBE_MAX_STAGES + 3, COUNTERS = STROBE_MAX_OP_COUNTERS + 2 };
  static char names[STAGES][16], counters[COUNTERS][16];
  static strobe_site sites[STAGES];
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  for (int i = 0; i < STAGES; i++) {
    snprintf(names[i], sizeof names[i], "stage_%d", i);
    sites[i] = (strobe_site){names[i], NULL, NULL, __FILE__, __func__, (uint32_t)__LINE__, STROBE_SITE_STAGE, 0, STROBE_UNIT_NONE, 0};
    strobe_stage g = strobe_stage_begin(&sites[i]);
    strobe_stage_end(&g);
  }
  for (int i = 0; i < COUNTERS; i++) {
    snprintf(counters[i], sizeof counters[i], "counter_%d", i);
    strobe_op_counter_add(counters[i], 1);
  }
  strobe_op_end(op, 1);
  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  json_t *sample = json_array_get(jreq(doc, "samples"), 0);
  CHECK_EQ_INT(json_array_size(jreq(sample, "stages")), STROBE_MAX_STAGES);
  CHECK_EQ_INT(jint(sample, "stages_dropped"), 3);
  CHECK_EQ_INT(json_array_size(jreq(sample, "counters")), STROBE_MAX_OP_COUNTERS);
  CHECK_EQ_INT(jint(sample, "counters_dropped"), 2);
  json_decref(doc);
  strobe_collector_release(c);
}

#define CASES(X)                \
  X(eight_concurrent_sessions)  \
  X(stage_and_counter_bounds)   \
  X(max_samples_bounds)         \
  X(oldest_dropped)             \
  X(ids_unique_not_fixed)       \
  X(unknown_and_ended_ids)      \
  X(last_64_ended_remembered)   \
  X(end_two_keeps_one)          \
  X(final_report_never_changes) \
  X(read_is_snapshot)           \
  X(closed_collector_handles)   \
  X(owners_and_cancel)          \
  X(no_replay_no_forced_frame)  \
  X(separate_collectors)        \
  X(units_and_epoch)            \
  X(gauges_and_run_info)       
HARNESS_MAIN(CASES)
