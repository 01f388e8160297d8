/*
 * test_session_app_scopes.c — proves docs/sessions.md §Synchronous
 * application scopes: labels of 1–64 bytes of [A-Za-z0-9_] only; the window must be
 * registered; invalid label, unknown/closed window, closed collector, 64
 * exhausted live slots and invalid parents each give an inert guard with an
 * explicit status (and are counted), never stopping the caller; parent tokens
 * work from another thread while the parent is live and are refused after it
 * ended or from another collector; ids are monotonic with parent id and
 * depth; a parent may finish before its child; no implicit (TLS) parent and
 * no effect on an operation's phase; per-session history of min(max_samples,
 * 128) with completed/returned/dropped/truncated, started, boundary
 * exclusions and abandonment (window closed, producer closed, both with a
 * boundary exclusion); finish is idempotent and late finishes never
 * resurrect; application-only captures have a status; application sample
 * age uses the latest completion among the returned records; worker
 * completion timestamps are taken before the collector lock; durations are
 * inclusive wall milliseconds.
 *
 * STROBE_TEST_NEEDS: jansson reports
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "session/report.h"
#include "support/session_util.h"

static json_t *scope_at(json_t *doc, size_t i) {
  json_t *s = json_array_get(jreq(doc, "application_scopes.scopes"), i);
  REQUIRE(s != NULL);
  return s;
}

static json_t *scope_with_id(json_t *doc, uint64_t id) {
  size_t i;
  json_t *s;
  json_array_foreach(jreq(doc, "application_scopes.scopes"), i, s) if ((uint64_t)jint(s, "id") == id) return s;
  return NULL;
}

/* Serializes a report and checks that a string never appears in it. */
static void check_absent(const strobe_report *r, const char *text) {
  char *json = su_json(r);
  CHECK(strstr(json, text) == NULL);
  free(json);
}

/* >>refusals */
static void test_labels(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  char l64[65], l65[66];
  memset(l64, 'a', 64);
  l64[64] = 0;
  memset(l65, 'b', 65);
  l65[65] = 0;
  const char *bad[] = {"", l65, "a-b", "caf\xc3\xa9", "with space", "doc/path.txt", NULL};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    strobe_app_scope s = strobe_app_scope_begin(c, "main", bad[i], STROBE_LANE_UI);
    CHECK_EQ_INT(strobe_app_scope_query_status(&s), STROBE_ELABEL);
    CHECK_EQ_INT(s.id, 0);
    strobe_app_scope_end(&s); /* harmless */
  }
  strobe_app_scope bad_lane = strobe_app_scope_begin(c, "main", "ok", (strobe_lane)7);
  CHECK_EQ_INT(strobe_app_scope_query_status(&bad_lane), STROBE_ELABEL);
  strobe_app_scope ok = strobe_app_scope_begin(c, "main", l64, STROBE_LANE_WORKER);
  CHECK_EQ_INT(strobe_app_scope_query_status(&ok), 0);
  CHECK(ok.id != 0);
  strobe_app_scope ok2 = strobe_app_scope_begin(c, "main", "Local_Save_2", STROBE_LANE_UI);
  CHECK_EQ_INT(strobe_app_scope_query_status(&ok2), 0);
  strobe_app_scope_end(&ok2);
  strobe_app_scope_end(&ok);
  json_t *doc;
  strobe_report *r = su_end(c, id, &doc);
  CHECK_EQ_INT(jint(doc, "application_scopes.refused.invalid_label"), 8); /* 7 labels and a lane */
  CHECK_EQ_INT(jint(doc, "application_scopes.completed"), 2);
  /* Newest published first: l64 finished last. */
  CHECK(!strcmp(jstr(scope_at(doc, 0), "label"), l64));
  CHECK(!strcmp(jstr(scope_at(doc, 0), "lane"), "worker"));
  CHECK(!strcmp(jstr(scope_at(doc, 1), "label"), "Local_Save_2"));
  CHECK(!strcmp(jstr(scope_at(doc, 1), "lane"), "ui"));
  /* Refused labels are never interned. */
  check_absent(r, "doc/path.txt");
  check_absent(r, l65);
  json_decref(doc);
  strobe_report_free(r);
  strobe_collector_release(c);
}

/* The window must already be registered by the toolkit; unknown or closed windows are refused. */
static void test_windows_and_closed_collector(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  strobe_window w1 = su_window(c, "w1", 0);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  strobe_app_scope s = strobe_app_scope_begin(c, "My Document", "save", STROBE_LANE_UI);
  CHECK_EQ_INT(strobe_app_scope_query_status(&s), STROBE_EWINDOW);
  s = strobe_app_scope_begin(c, NULL, "save", STROBE_LANE_UI);
  CHECK_EQ_INT(strobe_app_scope_query_status(&s), STROBE_EWINDOW);
  CHECK_EQ_INT(strobe_window_close(c, w1), 0);
  s = strobe_app_scope_begin(c, "w1", "save", STROBE_LANE_UI);
  CHECK_EQ_INT(strobe_app_scope_query_status(&s), STROBE_EWINDOW);
  s = strobe_app_scope_begin(NULL, "main", "save", STROBE_LANE_UI);
  CHECK(strobe_app_scope_query_status(&s) != 0);
  strobe_app_scope_end(&s);

  strobe_collector_close(c);
  s = strobe_app_scope_begin(c, "main", "save", STROBE_LANE_UI);
  CHECK_EQ_INT(strobe_app_scope_query_status(&s), STROBE_ECLOSED);
  json_t *doc;
  strobe_report *r = su_end(c, id, &doc);
  CHECK_EQ_INT(jint(doc, "application_scopes.refused.unknown_window"), 3);
  CHECK_EQ_INT(jint(doc, "application_scopes.refused.closed_collector"), 1);
  CHECK_EQ_INT(jint(doc, "application_scopes.started"), 0);
  check_absent(r, "My Document");
  json_decref(doc);
  strobe_report_free(r);
  strobe_collector_release(c);

  /* A fresh collector has no registered window: applications cannot create one by naming it. */
  c = su_collector(NULL);
  s = strobe_app_scope_begin(c, "main", "save", STROBE_LANE_UI);
  CHECK_EQ_INT(strobe_app_scope_query_status(&s), STROBE_EWINDOW);
  strobe_window found;
  CHECK_EQ_INT(strobe_window_find(c, "main", &found), STROBE_EWINDOW);
  strobe_collector_release(c);
}

/* At most 64 live scopes per collector; refusal gives an inert guard. */
static void test_live_slots(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  strobe_app_scope live[STROBE_MAX_LIVE_APP_SCOPES];
  for (int i = 0; i < STROBE_MAX_LIVE_APP_SCOPES; i++) {
    live[i] = strobe_app_scope_begin(c, "main", "busy", STROBE_LANE_WORKER);
    CHECK_EQ_INT(strobe_app_scope_query_status(&live[i]), 0);
  }
  strobe_app_scope extra = strobe_app_scope_begin(c, "main", "extra", STROBE_LANE_WORKER);
  CHECK_EQ_INT(strobe_app_scope_query_status(&extra), STROBE_ELIMIT);
  strobe_app_scope child = strobe_app_scope_begin_child(&live[0], "child", STROBE_LANE_WORKER);
  CHECK_EQ_INT(strobe_app_scope_query_status(&child), STROBE_ELIMIT);
  json_t *doc;
  strobe_report_free(su_read(c, id, &doc));
  CHECK_EQ_INT(jlen(doc, "application_scopes.unfinished"), 64);
  CHECK(!strcmp(jstr(doc, "status"), "unfinished")); /* application-only capture still has a status */
  json_decref(doc);
  strobe_app_scope_end(&live[5]);
  extra = strobe_app_scope_begin(c, "main", "extra", STROBE_LANE_WORKER);
  CHECK_EQ_INT(strobe_app_scope_query_status(&extra), 0);
  strobe_app_scope_end(&extra);
  for (int i = 0; i < STROBE_MAX_LIVE_APP_SCOPES; i++) strobe_app_scope_end(&live[i]);
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "application_scopes.refused.live_slots_exhausted"), 2);
  CHECK_EQ_INT(jint(doc, "application_scopes.started"), 65);
  CHECK_EQ_INT(jint(doc, "application_scopes.completed"), 65);
  CHECK_EQ_INT(jlen(doc, "samples"), 0);
  CHECK(!strcmp(jstr(doc, "status"), "complete")); /* completed even with an empty samples array */
  json_decref(doc);
  strobe_collector_release(c);
}

/* >>parents */
typedef struct child_job {
  strobe_collector *c;
  strobe_app_parent token;
  strobe_app_scope child;
  int status;
} child_job;

static void *open_child(void *arg) {
  child_job *j = arg;
  j->child = strobe_app_scope_begin_child_of(j->c, j->token, "container_encode", STROBE_LANE_WORKER);
  j->status = strobe_app_scope_query_status(&j->child);
  fx_sleep_ms(2);
  strobe_app_scope_end(&j->child);
  return NULL;
}

/* A parent token permits an explicit child, from another thread, only in the
 * same collector while its parent remains live at child entry. */
static void test_parent_token(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  strobe_window w2;
  strobe_collector *other = su_collector(&w2);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);

  strobe_app_scope write = strobe_app_scope_begin(c, "main", "local_save_write", STROBE_LANE_WORKER);
  strobe_app_parent token = strobe_app_scope_query_parent(&write);
  CHECK_EQ_INT(token.id, write.id);
  child_job job = {c, token, {0}, -1};
  pthread_t t;
  REQUIRE_EQ_INT(pthread_create(&t, NULL, open_child, &job), 0);
  CHECK_EQ_INT(pthread_join(t, NULL), 0);
  CHECK_EQ_INT(job.status, 0);
  CHECK(job.child.id > write.id); /* monotonically increasing */
  uint64_t thread_child = job.child.id;

  /* Grandchild through the guard. */
  strobe_app_scope mid = strobe_app_scope_begin_child(&write, "encode", STROBE_LANE_WORKER);
  strobe_app_scope leaf = strobe_app_scope_begin_child(&mid, "compress", STROBE_LANE_WORKER);
  CHECK(mid.id > thread_child && leaf.id > mid.id);
  strobe_app_scope_end(&leaf);
  strobe_app_scope_end(&mid);

  /* A token from another collector is refused. */
  strobe_app_scope foreign = strobe_app_scope_begin_child_of(other, token, "x", STROBE_LANE_UI);
  CHECK_EQ_INT(strobe_app_scope_query_status(&foreign), STROBE_EPARENT);
  strobe_app_scope_end(&write);
  /* A token to an ended parent is refused, from any thread. */
  job = (child_job){c, token, {0}, -1};
  REQUIRE_EQ_INT(pthread_create(&t, NULL, open_child, &job), 0);
  CHECK_EQ_INT(pthread_join(t, NULL), 0);
  CHECK_EQ_INT(job.status, STROBE_EPARENT);
  strobe_app_scope late = strobe_app_scope_begin_child(&write, "late", STROBE_LANE_UI);
  CHECK_EQ_INT(strobe_app_scope_query_status(&late), STROBE_EPARENT);
  /* The token of an inert guard is no parent either. */
  strobe_app_scope inert = strobe_app_scope_begin(c, "nowhere", "x", STROBE_LANE_UI);
  strobe_app_parent none = strobe_app_scope_query_parent(&inert);
  CHECK_EQ_INT(none.id, 0);
  strobe_app_scope orphan = strobe_app_scope_begin_child_of(c, none, "x", STROBE_LANE_UI);
  CHECK_EQ_INT(strobe_app_scope_query_status(&orphan), STROBE_EPARENT);

  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "application_scopes.refused.invalid_parent"), 3);
  CHECK_EQ_INT(jint(doc, "application_scopes.refused.unknown_window"), 1);
  CHECK_EQ_INT(jint(doc, "application_scopes.completed"), 4);
  json_t *p = scope_with_id(doc, write.id), *ch = scope_with_id(doc, thread_child);
  CHECK(p && jnull(p, "parent_id") && jint(p, "depth") == 1);
  CHECK(ch && (uint64_t)jint(ch, "parent_id") == write.id && jint(ch, "depth") == 2);
  CHECK(!strcmp(jstr(ch, "lane"), "worker"));
  json_t *m = scope_with_id(doc, mid.id), *l = scope_with_id(doc, leaf.id);
  CHECK(m && (uint64_t)jint(m, "parent_id") == write.id && jint(m, "depth") == 2);
  CHECK(l && (uint64_t)jint(l, "parent_id") == mid.id && jint(l, "depth") == 3);
  /* Children inherit the registered window. */
  CHECK(!strcmp(jstr(l, "window"), "main"));
  json_decref(doc);
  strobe_collector_release(other);
  strobe_collector_release(c);
}

/* A parent may finish before its worker child: the relation records
 * live-at-entry nesting, not containment. */
static void test_parent_finishes_first(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  strobe_app_scope parent = strobe_app_scope_begin(c, "main", "spawn", STROBE_LANE_UI);
  strobe_app_scope child = strobe_app_scope_begin_child(&parent, "work", STROBE_LANE_WORKER);
  strobe_app_scope_end(&parent);
  CHECK_EQ_INT(strobe_app_scope_query_status(&child), 0); /* still live */
  fx_sleep_ms(3);
  strobe_app_scope_end(&child);
  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  json_t *p = scope_with_id(doc, parent.id), *ch = scope_with_id(doc, child.id);
  CHECK(p && ch);
  CHECK_EQ_INT(jint(ch, "parent_id"), (long long)parent.id);
  CHECK(jnum(ch, "end_ms") > jnum(p, "end_ms"));
  /* Newest published first. */
  CHECK_EQ_INT(jint(scope_at(doc, 0), "id"), (long long)child.id);
  json_decref(doc);
  strobe_collector_release(c);
}

/* There is no global/TLS application parent and concurrent scopes never
 * overwrite the existing UI phase. */
static void test_no_implicit_parent_no_phase(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  json_t *doc;
  {
    STROBE_STAGE("layout", NULL);
    strobe_app_scope a = strobe_app_scope_begin(c, "main", "outer", STROBE_LANE_UI);
    strobe_app_scope b = strobe_app_scope_begin(c, "main", "inner", STROBE_LANE_UI);
    strobe_report_free(su_read(c, id, &doc));
    json_t *u = json_array_get(jreq(doc, "unfinished"), 0);
    CHECK(!strcmp(jstr(u, "phase"), "layout"));
    size_t i;
    json_t *s;
    json_array_foreach(jreq(doc, "application_scopes.unfinished"), i, s) {
      CHECK_EQ_INT(jint(s, "depth"), 1);
      CHECK(jnull(s, "parent_id"));
    }
    json_decref(doc);
    strobe_app_scope_end(&b);
    strobe_app_scope_end(&a);
  }
  strobe_op_end(op, 1);
  strobe_report_free(su_end(c, id, &doc));
  /* The pass sample has only its stage; scopes are a separate history. */
  json_t *pass = json_array_get(jreq(doc, "samples"), 0);
  CHECK_EQ_INT(jlen(pass, "stages"), 1);
  CHECK_EQ_INT(jint(doc, "counts.completed"), 1);
  CHECK_EQ_INT(jint(doc, "application_scopes.completed"), 2);
  json_decref(doc);
  strobe_collector_release(c);
}

/* >>history */
/* min(session.max_samples, 128) completed scopes per session; the earliest published are dropped. */
static void test_history_bound(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char small[STROBE_SESSION_ID_MAX], big[STROBE_SESSION_ID_MAX];
  su_start(c, 4, small);
  su_start(c, 240, big);
  uint64_t ids[130];
  for (int i = 0; i < 130; i++) {
    strobe_app_scope s = strobe_app_scope_begin(c, "main", "tick", i % 2 ? STROBE_LANE_UI : STROBE_LANE_WORKER);
    ids[i] = s.id;
    strobe_app_scope_end(&s);
  }
  su_op(c, w, STROBE_OP_PASS, 1);
  json_t *ds, *db;
  strobe_report_free(su_end(c, small, &ds));
  strobe_report_free(su_end(c, big, &db));
  CHECK_EQ_INT(jint(ds, "application_scopes.max_scopes"), 4);
  CHECK_EQ_INT(jint(ds, "application_scopes.started"), 130);
  CHECK_EQ_INT(jint(ds, "application_scopes.completed"), 130);
  CHECK_EQ_INT(jint(ds, "application_scopes.returned"), 4);
  CHECK_EQ_INT(jint(ds, "application_scopes.dropped"), 126);
  CHECK(jbool(ds, "application_scopes.truncated"));
  for (int i = 0; i < 4; i++) CHECK_EQ_INT(jint(scope_at(ds, (size_t)i), "id"), (long long)ids[129 - i]);
  CHECK_EQ_INT(jint(db, "application_scopes.max_scopes"), 128);
  CHECK_EQ_INT(jint(db, "application_scopes.returned"), 128);
  CHECK_EQ_INT(jint(db, "application_scopes.dropped"), 2);
  /* The sample history is separate and unchanged by scopes. */
  CHECK_EQ_INT(jint(ds, "counts.completed"), 1);
  CHECK_EQ_INT(jint(ds, "counts.returned"), 1);
  CHECK_EQ_INT(jint(db, "counts.dropped"), 0);
  json_decref(ds);
  json_decref(db);

  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  strobe_app_scope s = strobe_app_scope_begin(c, "main", "one", STROBE_LANE_UI);
  strobe_app_scope_end(&s);
  strobe_report_free(su_end(c, id, &ds));
  CHECK(!jbool(ds, "application_scopes.truncated"));
  CHECK_EQ_INT(jint(ds, "application_scopes.dropped"), 0);
  json_decref(ds);
  strobe_collector_release(c);
}

/* >>boundaries */
/* A session started during a slow scope sees started_before_session and
 * elapsed-so-far, but excludes its entire later completion; a child begun
 * after the start may qualify while its parent does not. */
static void test_scope_boundaries(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  strobe_app_scope slow = strobe_app_scope_begin(c, "main", "slow_load", STROBE_LANE_UI);
  fx_sleep_ms(10);
  su_start(c, 0, id);
  strobe_app_scope child = strobe_app_scope_begin_child(&slow, "parse", STROBE_LANE_UI);
  strobe_app_scope_end(&child);
  json_t *doc;
  strobe_report_free(su_read(c, id, &doc));
  json_t *u = json_array_get(jreq(doc, "application_scopes.unfinished"), 0);
  REQUIRE(u != NULL);
  CHECK(jbool(u, "started_before_session"));
  CHECK(jnum(u, "elapsed_ms") >= 10.0);
  CHECK(!strcmp(jstr(doc, "status"), "partial"));
  json_decref(doc);
  strobe_app_scope_end(&slow);
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "application_scopes.boundary_excluded"), 1);
  CHECK_EQ_INT(jint(doc, "application_scopes.completed"), 1);
  CHECK_EQ_INT(jint(doc, "application_scopes.started"), 1); /* the child only */
  json_t *ch = scope_at(doc, 0);
  CHECK_EQ_INT(jint(ch, "parent_id"), (long long)slow.id);    /* a parent not in this report */
  CHECK(scope_with_id(doc, slow.id) == NULL);
  json_decref(doc);

  /* Ending session 2 does not stop a live scope or session 1; a late
   * completion cannot change the finalized session-2 report. */
  char id1[STROBE_SESSION_ID_MAX], id2[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id1);
  su_start(c, 0, id2);
  strobe_app_scope live = strobe_app_scope_begin(c, "main", "export", STROBE_LANE_WORKER);
  strobe_report *r2 = su_end(c, id2, NULL);
  char *before = su_json(r2);
  CHECK_EQ_INT(strobe_app_scope_query_status(&live), 0);
  strobe_app_scope_end(&live);
  char *after = su_json(r2);
  CHECK(!strcmp(before, after));
  strobe_report_free(su_end(c, id1, &doc));
  CHECK_EQ_INT(jint(doc, "application_scopes.completed"), 1);
  json_decref(doc);
  free(before);
  free(after);
  strobe_report_free(r2);
  strobe_collector_release(c);
}

/* >>abandonment */
static void test_abandonment(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  strobe_window w1 = su_window(c, "w1", 0);
  strobe_window w2 = su_window(c, "w2", 0);
  char id[STROBE_SESSION_ID_MAX];
  strobe_app_scope before = strobe_app_scope_begin(c, "w2", "before", STROBE_LANE_UI);
  su_start(c, 0, id);
  strobe_app_scope on_w1 = strobe_app_scope_begin(c, "w1", "render_doc", STROBE_LANE_UI);
  strobe_app_scope on_main = strobe_app_scope_begin(c, "main", "sync", STROBE_LANE_WORKER);
  strobe_app_scope child = strobe_app_scope_begin_child(&on_w1, "inner", STROBE_LANE_UI);

  /* Closed windows remove their live slots and count abandoned_window_closed. */
  CHECK_EQ_INT(strobe_window_close(c, w1), 0);
  CHECK_EQ_INT(strobe_app_scope_query_status(&on_w1), STROBE_EWINDOW);
  CHECK_EQ_INT(strobe_app_scope_query_status(&child), STROBE_EWINDOW);
  CHECK_EQ_INT(strobe_app_scope_query_status(&on_main), 0);
  strobe_app_scope_end(&on_w1); /* late: cannot resurrect */
  strobe_app_scope_end(&child);
  /* One that began before the session counts as both boundary-excluded and abandoned. */
  CHECK_EQ_INT(strobe_window_close(c, w2), 0);
  strobe_app_scope_end(&before);
  json_t *doc;
  strobe_report_free(su_read(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "application_scopes.abandoned.window_closed"), 3);
  CHECK_EQ_INT(jint(doc, "application_scopes.boundary_excluded"), 1);
  CHECK_EQ_INT(jint(doc, "application_scopes.completed"), 0);
  CHECK_EQ_INT(jlen(doc, "application_scopes.unfinished"), 1);
  json_decref(doc);

  /* Root shutdown removes the remaining live slots: abandoned_producer_closed. */
  strobe_collector_close(c);
  CHECK_EQ_INT(strobe_app_scope_query_status(&on_main), STROBE_ECLOSED);
  strobe_app_scope_end(&on_main);
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "application_scopes.abandoned.producer_closed"), 1);
  CHECK_EQ_INT(jint(doc, "application_scopes.abandoned.window_closed"), 3);
  CHECK_EQ_INT(jint(doc, "application_scopes.completed"), 0);
  CHECK_EQ_INT(jlen(doc, "application_scopes.scopes"), 0); /* no fabricated durations */
  CHECK_EQ_INT(jlen(doc, "application_scopes.unfinished"), 0);
  CHECK(!strcmp(jstr(doc, "status"), "empty"));
  json_decref(doc);
  strobe_collector_release(c);

  /* Producer close of a scope that began before the session: both counters. */
  c = su_collector(&w);
  strobe_app_scope early = strobe_app_scope_begin(c, "main", "early", STROBE_LANE_UI);
  su_start(c, 0, id);
  strobe_collector_close(c);
  strobe_app_scope_end(&early);
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "application_scopes.abandoned.producer_closed"), 1);
  CHECK_EQ_INT(jint(doc, "application_scopes.boundary_excluded"), 1);
  json_decref(doc);
  strobe_collector_release(c);
}

/* finish is idempotent; status() of finished and inert guards is explicit. */
static void test_finish_and_status(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  strobe_app_scope s = strobe_app_scope_begin(c, "main", "once", STROBE_LANE_UI);
  CHECK_EQ_INT(strobe_app_scope_query_status(&s), 0);
  strobe_app_scope_end(&s);
  strobe_app_scope_end(&s);
  CHECK(strobe_app_scope_query_status(&s) != 0); /* no longer live */
  strobe_app_scope_end(NULL);
  CHECK_EQ_INT(strobe_app_scope_query_status(NULL), STROBE_EINVAL);
  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "application_scopes.completed"), 1);
  CHECK_EQ_INT(jint(doc, "application_scopes.started"), 1);
  json_decref(doc);
  strobe_collector_release(c);
}

/* Application scopes are inclusive synchronous wall milliseconds, including waits. */
static void test_wall_milliseconds(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  strobe_app_scope s = strobe_app_scope_begin(c, "main", "io_wait", STROBE_LANE_WORKER);
  fx_sleep_ms(20); /* a wait, not CPU work: still counted */
  strobe_app_scope_end(&s);
  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  double total = jnum(scope_at(doc, 0), "wall_timings_ms.total");
  CHECK(total >= 20.0);
  CHECK(total < 5000.0);
  json_decref(doc);
  strobe_collector_release(c);
}

/* Application sample age uses the maximum completion timestamp among the
 * returned records, not the last published entry. Publication order can
 * differ from timestamp order (a worker's completion time is taken before
 * the lock), which is arranged here by editing the snapshot's records. */
static void test_sample_age_uses_latest_completion(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  strobe_app_scope a = strobe_app_scope_begin(c, "main", "first", STROBE_LANE_WORKER);
  strobe_app_scope b = strobe_app_scope_begin(c, "main", "second", STROBE_LANE_WORKER);
  strobe_app_scope_end(&a);
  strobe_app_scope_end(&b);
  fx_sleep_ms(20);
  strobe_report *r = NULL;
  REQUIRE_EQ_INT(strobe_session_stop(c, id, 0, &r), 0);
  CHECK_EQ_INT(r->napps, 2);
  /* apps[0] is the last published; make the earlier-published one complete last. */
  CHECK(r->apps[0]->id == b.id);
  r->apps[1]->end = r->at;
  json_t *doc = check_report_json(r);
  CHECK_NEAR(jnum(doc, "application_scopes.sample_age_ms"), 0.0, 0.001);
  json_decref(doc);
  strobe_report_free(r);
  strobe_collector_release(c);
}

/* Worker completion timestamps are captured before acquiring the collector lock. */
typedef struct finisher {
  strobe_app_scope scope;
  volatile int about_to_finish;
} finisher;

static void *finish_while_locked(void *arg) {
  finisher *f = arg;
  __atomic_store_n(&f->about_to_finish, 1, __ATOMIC_RELEASE);
  strobe_app_scope_end(&f->scope); /* blocks on the collector lock */
  return NULL;
}

static void test_completion_time_before_lock(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  finisher f = {strobe_app_scope_begin(c, "main", "worker_save", STROBE_LANE_WORKER), 0};
  strobe__mutex_lock(&c->lock); /* white box: hold the collector's short lock */
  pthread_t t;
  REQUIRE_EQ_INT(pthread_create(&t, NULL, finish_while_locked, &f), 0);
  while (!__atomic_load_n(&f.about_to_finish, __ATOMIC_ACQUIRE)) fx_sleep_ms(1);
  fx_sleep_ms(300); /* the worker has taken its timestamp and waits for the lock */
  uint64_t released = strobe__now();
  strobe__mutex_unlock(&c->lock);
  CHECK_EQ_INT(pthread_join(t, NULL), 0);
  strobe_report *r = su_end(c, id, NULL);
  CHECK_EQ_INT(r->napps, 1);
  CHECK(r->apps[0]->end < released); /* the lock wait is not the scope's time */
  strobe_report_free(r);
  strobe_collector_release(c);
}

/* DevTools windows are excluded by default for application scopes too: a
 * scope on one is neither started, returned nor unfinished in a session
 * without include_devtools, only counted (docs/sessions.md §Bounds and lifecycle). */
static void test_devtools_scopes_excluded(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  su_window(c, "devtools", STROBE_WINDOW_DEVTOOLS);
  char plain[STROBE_SESSION_ID_MAX], with[STROBE_SESSION_ID_MAX];
  su_start(c, 0, plain);
  strobe_session_desc o = {.include_devtools = 1};
  REQUIRE_EQ_INT(strobe_session_start(c, &o, with), 0);
  strobe_app_scope done = strobe_app_scope_begin(c, "devtools", "inspect", STROBE_LANE_UI);
  strobe_app_scope child = strobe_app_scope_begin_child(&done, "inspect_child", STROBE_LANE_UI);
  strobe_app_scope_end(&child);
  strobe_app_scope_end(&done);
  strobe_app_scope app = strobe_app_scope_begin(c, "main", "save", STROBE_LANE_UI);
  strobe_app_scope_end(&app);
  strobe_app_scope running = strobe_app_scope_begin(c, "devtools", "inspect", STROBE_LANE_UI);
  json_t *dp, *dw;
  strobe_report_free(su_read(c, plain, &dp));
  CHECK_EQ_INT(jint(dp, "application_scopes.returned"), 1);
  CHECK_EQ_INT(jint(dp, "application_scopes.started"), 1);
  CHECK_EQ_INT(jint(dp, "application_scopes.devtools_excluded"), 2);
  CHECK_EQ_INT(json_array_size(jreq(dp, "application_scopes.unfinished")), 0);
  CHECK(!strcmp(jstr(scope_at(dp, 0), "window"), "main"));
  strobe_report_free(su_read(c, with, &dw));
  CHECK_EQ_INT(jint(dw, "application_scopes.returned"), 3);
  CHECK_EQ_INT(jint(dw, "application_scopes.started"), 4);
  CHECK_EQ_INT(jint(dw, "application_scopes.devtools_excluded"), 0);
  CHECK_EQ_INT(json_array_size(jreq(dw, "application_scopes.unfinished")), 1);
  json_decref(dp);
  json_decref(dw);
  strobe_app_scope_end(&running);
  strobe_report_free(su_end(c, plain, &dp));
  CHECK_EQ_INT(jint(dp, "application_scopes.returned"), 1);
  CHECK_EQ_INT(jint(dp, "application_scopes.devtools_excluded"), 3);
  json_decref(dp);
  su_end_free(c, with);
  strobe_collector_release(c);
}

#define CASES(X)                       \
  X(labels)                            \
  X(devtools_scopes_excluded)          \
  X(windows_and_closed_collector)      \
  X(live_slots)                        \
  X(parent_token)                      \
  X(parent_finishes_first)             \
  X(no_implicit_parent_no_phase)       \
  X(history_bound)                     \
  X(scope_boundaries)                  \
  X(abandonment)                       \
  X(finish_and_status)                 \
  X(wall_milliseconds)                 \
  X(sample_age_uses_latest_completion) \
  X(completion_time_before_lock)      
HARNESS_MAIN(CASES)
