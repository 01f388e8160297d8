/*
 * test_session_boundaries.c — proves which operations a session admits and
 * how it reports the rest (docs/sessions.md §Bounds and lifecycle, §Cost and
 * interpretation, §The frame model):
 *   - only whole operations that started at or after the session's start and
 *     finished while it was active are samples; a pass crossing the start is
 *     excluded even if it later finishes, and counted once it completes while
 *     the session is active; a nested rebuild that fits inside the session is
 *     its own sample while its crossing outer pass is excluded;
 *   - work running at a read or end is reported apart (window, prospective
 *     frame id, phase, elapsed, phase elapsed, started_before_session), never
 *     as a sample; a session begun mid-frame reports that frame unfinished;
 *     empty and unfinished sessions carry an explicit status;
 *   - input dispatch is its own kind and never a rendered frame; frame_rate
 *     is over the first-to-last committed pass span;
 *   - the frame model: committed:false work is kept; an operation taken on one thread
 *     and resumed on another is one sample with both threads' stages; every
 *     percentile carries its n (stages do not share a population); raw
 *     samples newest first; stages nest and say so;
 *   - nested operations restore the outer one; detailed capture is decided
 *     once at an operation's entry;
 *   - windows: toolkit ids of at most 256 UTF-8 bytes, at most 64 tracked
 *     (the rest untracked), devtools excluded unless opted in, closed-window
 *     metadata kept until its slot is needed, samples keep their window id.
 *
 * STROBE_TEST_NEEDS: jansson reports
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "support/session_util.h"

static json_t *sample_at(json_t *doc, size_t i) {
  json_t *s = json_array_get(jreq(doc, "samples"), i);
  REQUIRE(s != NULL);
  return s;
}

static json_t *unfinished_at(json_t *doc, size_t i) {
  json_t *u = json_array_get(jreq(doc, "unfinished"), i);
  REQUIRE(u != NULL);
  return u;
}

/* >>boundary */
/* A pass that crosses the start boundary is excluded, even if it later
 * finishes; the exclusion is counted once it completes while the session is active. */
static void test_crossing_pass_excluded(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL); /* no session yet */
  su_start(c, 0, id);
  json_t *doc;
  strobe_report_free(su_read(c, id, &doc)); /* still running: not yet an exclusion */
  CHECK_EQ_INT(jint(doc, "counts.boundary_excluded"), 0);
  CHECK_EQ_INT(jint(doc, "counts.unfinished"), 1);
  CHECK(jbool(unfinished_at(doc, 0), "started_before_session"));
  json_decref(doc);
  strobe_op_end(op, 1);
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "counts.boundary_excluded"), 1);
  CHECK_EQ_INT(jint(doc, "counts.completed"), 0);
  CHECK_EQ_INT(jint(doc, "counts.returned"), 0);
  CHECK(!strcmp(jstr(doc, "status"), "empty"));
  json_decref(doc);

  /* The same with another session already active when the pass began (so the
   * pass is captured in detail): the older session admits it, the newer excludes it. */
  char old_id[STROBE_SESSION_ID_MAX], new_id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, old_id);
  op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  su_start(c, 0, new_id);
  strobe_op_end(op, 1);
  json_t *dn, *dold;
  strobe_report_free(su_end(c, new_id, &dn));
  strobe_report_free(su_end(c, old_id, &dold));
  CHECK_EQ_INT(jint(dn, "counts.boundary_excluded"), 1);
  CHECK_EQ_INT(jint(dn, "counts.returned"), 0);
  CHECK_EQ_INT(jint(dold, "counts.boundary_excluded"), 0);
  CHECK_EQ_INT(jint(dold, "counts.returned"), 1);
  json_decref(dn);
  json_decref(dold);

  /* A crossing pass that completes after the session ended is never counted. */
  op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  su_start(c, 0, id);
  strobe_report *r = su_end(c, id, &doc);
  strobe_op_end(op, 1);
  CHECK_EQ_INT(jint(doc, "counts.boundary_excluded"), 0);
  CHECK_EQ_INT(strobe_report_query_counts(r).boundary_excluded, 0);
  json_decref(doc);
  strobe_report_free(r);
  strobe_collector_release(c);
}

/* Nested rebuilds that fit entirely inside the session can still appear as separate samples. */
static void test_nested_rebuild_inside_crossing_pass(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  strobe_op pass = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  su_start(c, 0, id);
  strobe_op rebuild = strobe_op_begin(c, w, STROBE_OP_REBUILD, NULL);
  strobe_op_end(rebuild, 1);
  strobe_op_end(pass, 1);
  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "counts.completed"), 1);
  CHECK_EQ_INT(jint(doc, "counts.boundary_excluded"), 1);
  CHECK_EQ_INT(jint(doc, "counts.completed_by_kind.rebuild"), 1);
  CHECK_EQ_INT(jint(doc, "counts.completed_by_kind.pass"), 0);
  CHECK(!strcmp(jstr(sample_at(doc, 0), "kind"), "rebuild"));
  CHECK(jnull(sample_at(doc, 0), "frame_id"));
  CHECK(!strcmp(jstr(doc, "status"), "complete"));
  json_decref(doc);
  strobe_collector_release(c);
}

/* >>unfinished */
/* An end during a stall reports current unfinished work separately: window,
 * prospective frame id, current phase, elapsed so far, phase elapsed so far,
 * and whether it began before the session. */
static void test_unfinished_at_end(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  strobe_window w1 = su_window(c, "w1", 0);
  su_op(c, w1, STROBE_OP_PASS, 1); /* frame 1 of w1, before the session */
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  strobe_op op = strobe_op_begin(c, w1, STROBE_OP_PASS, NULL); /* prospective frame 2 */
  json_t *doc;
  strobe_report *r;
  {
    STROBE_STAGE("update", NULL);
    fx_sleep_ms(15);
  }
  {
    STROBE_STAGE("raster", NULL);
    fx_sleep_ms(25);
    r = su_end(c, id, &doc);
  }
  strobe_op_end(op, 1);
  CHECK(!strcmp(jstr(doc, "status"), "unfinished"));
  CHECK_EQ_INT(jint(doc, "counts.returned"), 0);
  CHECK_EQ_INT(jint(doc, "counts.completed"), 0);
  CHECK_EQ_INT(jlen(doc, "unfinished"), 1);
  json_t *u = unfinished_at(doc, 0);
  CHECK(!strcmp(jstr(u, "window"), "w1"));
  CHECK(!strcmp(jstr(u, "kind"), "pass"));
  CHECK_EQ_INT(jint(u, "prospective_frame_id"), 2);
  CHECK(!strcmp(jstr(u, "phase"), "raster"));
  CHECK(jnum(u, "phase_elapsed_ms") >= 25.0);
  CHECK(jnum(u, "elapsed_ms") >= 40.0);
  CHECK(jnum(u, "elapsed_ms") - jnum(u, "phase_elapsed_ms") >= 15.0 - RC_MS_EPS);
  CHECK(!jbool(u, "started_before_session"));
  CHECK(jnull(doc, "sample_age_ms")); /* no fabricated sample */
  CHECK_EQ_INT(strobe_report_query_status(r), STROBE_REPORT_UNFINISHED);
  CHECK_EQ_INT(strobe_report_query_counts(r).unfinished, 1);
  json_decref(doc);
  strobe_report_free(r);

  /* Outside any stage the phase is null, never invented. */
  su_start(c, 0, id);
  op = strobe_op_begin(c, w, STROBE_OP_INPUT, NULL);
  r = su_read(c, id, &doc);
  u = unfinished_at(doc, 0);
  CHECK(jnull(u, "phase"));
  CHECK(jnull(u, "phase_elapsed_ms"));
  CHECK(jnull(u, "prospective_frame_id"));
  CHECK(!strcmp(jstr(u, "kind"), "input"));
  json_decref(doc);
  strobe_report_free(r);
  strobe_op_end(op, 1);
  strobe_report_free(su_end(c, id, &doc));
  CHECK(!strcmp(jstr(doc, "status"), "complete"));
  json_decref(doc);
  strobe_collector_release(c);
}

/* A session begun in the middle of a slow frame can report that slow
 * unfinished frame, even though no completed pass qualifies. */
static void test_session_begun_mid_slow_frame(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  CHECK_EQ_INT(strobe_op_detailed(), 0); /* no session at entry */
  json_t *doc;
  strobe_report *r;
  {
    STROBE_STAGE("render_encode", NULL);
    fx_sleep_ms(10);
    su_start(c, 0, id);
    CHECK_EQ_INT(strobe_op_detailed(), 0); /* decided once, at entry */
    fx_sleep_ms(20);
    r = su_end(c, id, &doc);
  }
  strobe_op_end(op, 1);
  CHECK(!strcmp(jstr(doc, "status"), "unfinished"));
  CHECK(strstr(jstr(doc, "status_note"), "not a fast") != NULL);
  CHECK_EQ_INT(jlen(doc, "samples"), 0);
  json_t *u = unfinished_at(doc, 0);
  CHECK(jbool(u, "started_before_session"));
  CHECK(!strcmp(jstr(u, "phase"), "render_encode"));
  CHECK_EQ_INT(jint(u, "prospective_frame_id"), 1);
  CHECK(jnum(u, "elapsed_ms") >= 30.0);
  /* Unfinished time is never added to completed durations. */
  CHECK_EQ_INT(jlen(doc, "kind_summary"), 0);
  CHECK_EQ_INT(jlen(doc, "stage_summary"), 0);
  json_decref(doc);
  strobe_report_free(r);
  strobe_collector_release(c);
}

/* An empty session has an explicit status; it does not imply a fast frame. */
static void test_empty_and_partial_status(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  json_t *doc;
  strobe_report *r = su_end(c, id, &doc);
  CHECK(!strcmp(jstr(doc, "status"), "empty"));
  CHECK(strstr(jstr(doc, "status_note"), "not fast") != NULL);
  CHECK_EQ_INT(strobe_report_query_status(r), STROBE_REPORT_EMPTY);
  CHECK(jnull(doc, "sample_age_ms"));
  CHECK(jnull(doc, "frame_rate.passes_per_second"));
  json_decref(doc);
  strobe_report_free(r);

  su_start(c, 0, id);
  su_op(c, w, STROBE_OP_PASS, 1);
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  r = su_read(c, id, &doc);
  CHECK(!strcmp(jstr(doc, "status"), "partial"));
  CHECK_EQ_INT(strobe_report_query_status(r), STROBE_REPORT_PARTIAL);
  json_decref(doc);
  strobe_report_free(r);
  strobe_op_end(op, 1);
  r = su_end(c, id, &doc);
  CHECK(!strcmp(jstr(doc, "status"), "complete"));
  CHECK_EQ_INT(strobe_report_query_status(r), STROBE_REPORT_COMPLETE);
  json_decref(doc);
  strobe_report_free(r);
  strobe_collector_release(c);
}

/* >>kinds */
/* Input activity is a different sample kind and never counted as a rendered
 * frame; frame_rate is (passes - 1) over the first-to-last pass span. */
static void test_input_and_frame_rate(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  for (int i = 0; i < 5; i++) su_op(c, w, STROBE_OP_INPUT, 1);
  su_op(c, w, STROBE_OP_REQUEST, 1);
  json_t *doc;
  strobe_report_free(su_read(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "frame_rate.passes"), 0);
  CHECK(jnull(doc, "frame_rate.passes_per_second"));
  CHECK_EQ_INT(jint(doc, "counts.completed_by_kind.input"), 5);
  CHECK_EQ_INT(jint(doc, "counts.completed_by_kind.request"), 1);
  CHECK_EQ_INT(jint(doc, "counts.completed_by_kind.pass"), 0);
  json_decref(doc);

  for (int i = 0; i < 3; i++) {
    su_op(c, w, STROBE_OP_PASS, 1);
    su_op(c, w, STROBE_OP_INPUT, 1);
    fx_sleep_ms(10);
  }
  su_op(c, w, STROBE_OP_PASS, 0); /* never committed: not a rendered frame */
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "frame_rate.passes"), 3);
  CHECK(jnum(doc, "frame_rate.first_to_last_span_ms") >= 20.0);
  CHECK_NEAR(jnum(doc, "frame_rate.passes_per_second"),
             2.0 / (jnum(doc, "frame_rate.first_to_last_span_ms") / 1000.0), 0.05);
  CHECK_EQ_INT(jint(doc, "counts.completed_by_kind.input"), 8);
  CHECK_EQ_INT(jint(doc, "counts.completed_by_kind.pass"), 4);
  /* Per-kind summaries, each with its own n. */
  size_t i;
  json_t *e;
  int seen_input = 0;
  json_array_foreach(jreq(doc, "kind_summary"), i, e) {
    if (!strcmp(jstr(e, "kind"), "input")) {
      seen_input = 1;
      CHECK_EQ_INT(jint(e, "n"), 8);
    }
    if (!strcmp(jstr(e, "kind"), "pass")) CHECK_EQ_INT(jint(e, "n"), 4);
  }
  CHECK(seen_input);
  json_decref(doc);
  strobe_collector_release(c);
}

/* docs/sessions.md §The frame model: frames that are never committed are recorded with committed:false rather than discarded. */
static void test_uncommitted_kept(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  su_op(c, w, STROBE_OP_PASS, 1);
  su_op(c, w, STROBE_OP_PASS, 0);
  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "counts.completed"), 2);
  CHECK(!jbool(sample_at(doc, 0), "committed"));
  CHECK(jbool(sample_at(doc, 1), "committed"));
  json_decref(doc);
  strobe_collector_release(c);
}

/* >>stages */
static void prepare_frame(int with_taps) {
  STROBE_STAGE("prepare", NULL);
  fx_sleep_ms(2);
  if (with_taps) {
    STROBE_STAGE("register_tap", "prepare");
    fx_sleep_ms(1);
  }
  strobe_op_counter_add("taps", with_taps ? 3 : 0);
}

/* docs/sessions.md §The frame model: each percentile carries its n; a nested
 * stage says what it is nested in; raw records newest first. */
static void test_stage_populations(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  for (int i = 0; i < 4; i++) {
    strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
    CHECK_EQ_INT(strobe_op_detailed(), 1);
    prepare_frame(i == 1);
    strobe_op_end(op, 1);
  }
  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  json_t *sum = jreq(doc, "stage_summary");
  json_t *prep = su_named(sum, "prepare"), *tap = su_named(sum, "register_tap");
  CHECK(prep && tap);
  CHECK_EQ_INT(jint(prep, "n"), 4);
  CHECK_EQ_INT(jint(tap, "n"), 1);
  CHECK(jnull(prep, "nested_in"));
  CHECK(!strcmp(jstr(tap, "nested_in"), "prepare"));
  CHECK(strstr(jstr(tap, "note"), "do not sum") != NULL);
  CHECK(jnum(prep, "p50_ms") >= 2.0);
  CHECK(jpath(prep, "mean_ms") == NULL); /* percentiles, not a mean */
  /* Newest first: frames 4, 3, 2, 1; frame 2 carries the nested stage and the counter. */
  for (int i = 0; i < 4; i++) CHECK_EQ_INT(jint(sample_at(doc, (size_t)i), "frame_id"), 4 - i);
  json_t *f2 = sample_at(doc, 2);
  json_t *st = su_named(jreq(f2, "stages"), "register_tap");
  REQUIRE(st != NULL);
  CHECK(!strcmp(jstr(st, "nested_in"), "prepare"));
  CHECK_EQ_INT(jint(st, "count"), 1);
  CHECK(jnum(st, "total_ms") >= 1.0);
  json_t *counter = json_array_get(jreq(f2, "counters"), 0);
  CHECK(!strcmp(jstr(counter, "name"), "taps"));
  CHECK_NEAR(jnum(counter, "value"), 3, 1e-9);
  CHECK(su_named(jreq(sample_at(doc, 0), "stages"), "register_tap") == NULL);
  json_decref(doc);
  strobe_collector_release(c);
}

/* Stages aggregate per operation (count, total, min, max); the phase is the
 * innermost open stage and the outer one is restored when it ends. */
static void test_stage_aggregation_and_phase(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  json_t *doc;
  {
    STROBE_STAGE("layout", NULL);
    for (int i = 0; i < 3; i++) {
      STROBE_STAGE("layout_compute", "layout");
      fx_sleep_ms(1 + i);
      if (i == 0) {
        strobe_report_free(su_read(c, id, &doc));
        CHECK(!strcmp(jstr(unfinished_at(doc, 0), "phase"), "layout_compute"));
        json_decref(doc);
      }
    }
    strobe_report_free(su_read(c, id, &doc));
    CHECK(!strcmp(jstr(unfinished_at(doc, 0), "phase"), "layout"));
    json_decref(doc);
  }
  strobe_report_free(su_read(c, id, &doc));
  CHECK(jnull(unfinished_at(doc, 0), "phase"));
  json_decref(doc);
  strobe_op_end(op, 1);
  strobe_report_free(su_end(c, id, &doc));
  json_t *lc = su_named(jreq(sample_at(doc, 0), "stages"), "layout_compute");
  REQUIRE(lc != NULL);
  CHECK_EQ_INT(jint(lc, "count"), 3);
  CHECK(jnum(lc, "min_ms") >= 1.0);
  CHECK(jnum(lc, "max_ms") >= 3.0);
  CHECK(jnum(lc, "total_ms") >= 6.0);
  CHECK(jnum(lc, "min_ms") < jnum(lc, "max_ms"));
  json_decref(doc);
  strobe_collector_release(c);
}

/* >>nesting */
/* A nested pass/update restores its outer activity phase on completion. */
static void test_nested_ops_restore_outer(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  json_t *doc;
  strobe_op input = strobe_op_begin(c, w, STROBE_OP_INPUT, NULL);
  {
    STROBE_STAGE("dispatch", NULL);
    strobe_op pass = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
    {
      STROBE_STAGE("layout", NULL);
      fx_sleep_ms(1);
    }
    strobe_op_counter_add("nodes", 7);
    strobe_op_end(pass, 1);
    /* The input is current again, in its own phase. */
    strobe_report_free(su_read(c, id, &doc));
    CHECK_EQ_INT(jlen(doc, "unfinished"), 1);
    CHECK(!strcmp(jstr(unfinished_at(doc, 0), "kind"), "input"));
    CHECK(!strcmp(jstr(unfinished_at(doc, 0), "phase"), "dispatch"));
    json_decref(doc);
  }
  {
    STROBE_STAGE("after_pass", NULL); /* publishes to the input, not to the ended pass */
    strobe_report_free(su_read(c, id, &doc));
    CHECK(!strcmp(jstr(unfinished_at(doc, 0), "phase"), "after_pass"));
    json_decref(doc);
  }
  strobe_op_counter_add("handlers", 2);
  strobe_op_end(input, 1);
  strobe_report_free(su_end(c, id, &doc));
  json_t *in = sample_at(doc, 0), *pass = sample_at(doc, 1);
  CHECK(!strcmp(jstr(in, "kind"), "input"));
  CHECK(!strcmp(jstr(pass, "kind"), "pass"));
  CHECK(su_named(jreq(in, "stages"), "dispatch") && su_named(jreq(in, "stages"), "after_pass"));
  CHECK(su_named(jreq(in, "stages"), "layout") == NULL);
  REQUIRE(su_named(jreq(pass, "stages"), "layout") != NULL);
  CHECK_EQ_INT(jlen(pass, "stages"), 1);
  CHECK(!strcmp(jstr(json_array_get(jreq(pass, "counters"), 0), "name"), "nodes"));
  CHECK(!strcmp(jstr(json_array_get(jreq(in, "counters"), 0), "name"), "handlers"));
  CHECK_EQ_INT(jlen(in, "counters"), 1);
  /* The inner pass lies inside the outer input. */
  CHECK(jnum(pass, "start_ms") >= jnum(in, "start_ms"));
  CHECK(jnum(pass, "end_ms") <= jnum(in, "end_ms"));
  json_decref(doc);
  strobe_collector_release(c);
}

/* >>handoff: take / hand off / resume (docs/sessions.md §The frame model). */
typedef struct handoff {
  strobe_collector *c;
  strobe_op op;
} handoff;

static void *finish_on_other_thread(void *arg) {
  handoff *h = arg;
  strobe_op_resume(h->op);
  {
    STROBE_STAGE("set_root", NULL);
    fx_sleep_ms(2);
  }
  strobe_op_counter_add("bytes", 100);
  strobe_op_end(h->op, 1);
  return NULL;
}

static void *drop_on_other_thread(void *arg) {
  handoff *h = arg;
  strobe_op_resume(h->op);
  strobe_op_end(h->op, 0); /* superseded by a newer tree */
  return NULL;
}

static void test_handoff_across_threads(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  CHECK_EQ_INT(strobe_op_take().id, 0); /* nothing to take: inert */

  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  {
    STROBE_STAGE("render_user", NULL);
    fx_sleep_ms(2);
  }
  strobe_op_counter_add("bytes", 1);
  handoff h = {c, strobe_op_take()};
  CHECK_EQ_INT(h.op.id, op.id);
  CHECK_EQ_INT(strobe_op_detailed(), 0); /* this thread no longer has it */
  strobe_op_counter_add("bytes", 1000);           /* so this goes nowhere */
  json_t *doc;
  strobe_report_free(su_read(c, id, &doc)); /* in flight between threads: still unfinished */
  CHECK_EQ_INT(jlen(doc, "unfinished"), 1);
  json_decref(doc);
  pthread_t t;
  REQUIRE_EQ_INT(pthread_create(&t, NULL, finish_on_other_thread, &h), 0);
  CHECK_EQ_INT(pthread_join(t, NULL), 0);

  /* A second frame handed off and dropped by the receiver: kept, committed:false. */
  strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  h.op = strobe_op_take();
  CHECK(h.op.id != 0);
  REQUIRE_EQ_INT(pthread_create(&t, NULL, drop_on_other_thread, &h), 0);
  CHECK_EQ_INT(pthread_join(t, NULL), 0);

  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "counts.completed"), 2);
  json_t *dropped = sample_at(doc, 0), *s = sample_at(doc, 1);
  CHECK(jbool(dropped, "handed_off"));
  CHECK(!jbool(dropped, "committed"));
  CHECK(jbool(s, "handed_off"));
  CHECK(jbool(s, "committed"));
  REQUIRE(su_named(jreq(s, "stages"), "render_user") != NULL);
  REQUIRE(su_named(jreq(s, "stages"), "set_root") != NULL);
  CHECK(jnum(s, "total_ms") >= 4.0);
  json_t *bytes = json_array_get(jreq(s, "counters"), 0);
  CHECK_NEAR(jnum(bytes, "value"), 101, 1e-9);
  json_decref(doc);
  strobe_collector_release(c);
}

/* >>devtools */
/* DevTools windows are excluded by default and opt in through include_devtools. */
static void test_devtools_excluded_by_default(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  strobe_window dev = su_window(c, "devtools", STROBE_WINDOW_DEVTOOLS);
  char plain[STROBE_SESSION_ID_MAX], with[STROBE_SESSION_ID_MAX];
  su_start(c, 0, plain);
  strobe_session_desc o = {.max_samples = 0, .include_devtools = 1, .owner = 0};
  REQUIRE_EQ_INT(strobe_session_start(c, &o, with), 0);
  su_op(c, dev, STROBE_OP_PASS, 1);
  su_op(c, w, STROBE_OP_PASS, 1);
  strobe_op running = strobe_op_begin(c, dev, STROBE_OP_PASS, NULL);
  json_t *dp, *dw;
  strobe_report_free(su_end(c, plain, &dp));
  strobe_report_free(su_end(c, with, &dw));
  strobe_op_end(running, 1);
  CHECK(!jbool(dp, "session.include_devtools"));
  CHECK_EQ_INT(jint(dp, "counts.completed"), 1);
  CHECK_EQ_INT(jint(dp, "counts.devtools_excluded"), 1);
  CHECK(!strcmp(jstr(sample_at(dp, 0), "window"), "main"));
  CHECK_EQ_INT(jint(dp, "counts.unfinished"), 0);
  CHECK(jbool(dw, "session.include_devtools"));
  CHECK_EQ_INT(jint(dw, "counts.completed"), 2);
  CHECK_EQ_INT(jint(dw, "counts.devtools_excluded"), 0);
  CHECK(!strcmp(jstr(sample_at(dw, 1), "window"), "devtools"));
  CHECK_EQ_INT(jint(dw, "counts.unfinished"), 1);
  json_decref(dp);
  json_decref(dw);
  strobe_collector_release(c);
}

/* >>windows */
/* IDs are limited to 256 UTF-8 bytes; windows that exceed this or the
 * metadata bound are counted as untracked. */
static void test_window_ids(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id256[257], id257[258];
  memset(id256, 'a', 256);
  id256[256] = 0;
  memset(id257, 'a', 257);
  id257[257] = 0;
  strobe_window out;
  REQUIRE_EQ_INT(strobe_window_register(c, id256, 0, &out), 0);
  REQUIRE_EQ_INT(strobe_window_register(c, "w1/popup", 0, &out), 0); /* hierarchical ids */
  REQUIRE_EQ_INT(strobe_window_register(c, "w2.tab:3-a", 0, &out), 0); /* the window-id rule's punctuation */
  /* The label rule: a title, text with spaces, anything beyond ASCII is refused. */
  const char *bad[] = {id257, "", "\xff", "w\xc3\xa9", "w\xc3", "\xc0\xaf", "\xed\xa0\x80", "My Document", "w1?x"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    out.id = 99;
    CHECK_EQ_INT(strobe_window_register(c, bad[i], 0, &out), STROBE_ELABEL);
    CHECK_EQ_INT(out.id, 0);
  }
  CHECK_EQ_INT(strobe_window_register(c, "main", 0, &out), STROBE_EBUSY); /* already open */
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "counts.untracked_windows"), (long long)(sizeof bad / sizeof *bad));
  json_decref(doc);
  strobe_collector_release(c);
}

/* At most 64 tracked windows; closed-window metadata remains until its
 * bounded slot is needed; retained samples keep their identities. */
static void test_window_slots(void) {
  strobe_window main_w;
  strobe_collector *c = su_collector(&main_w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);

  /* With free slots, a closed window's slot is not taken. */
  strobe_window w1 = su_window(c, "w1", 0);
  su_op(c, w1, STROBE_OP_PASS, 1);
  CHECK_EQ_INT(strobe_window_close(c, w1), 0);
  CHECK_EQ_INT(strobe_window_close(c, w1), STROBE_EWINDOW); /* already closed */
  strobe_window found;
  CHECK_EQ_INT(strobe_window_find(c, "w1", &found), STROBE_EWINDOW);
  CHECK_EQ_INT(strobe_window_find(c, "main", &found), 0);
  CHECK_EQ_INT(found.id, main_w.id);
  strobe_window w2 = su_window(c, "w2", 0);
  CHECK((w2.id & 0xffu) != (w1.id & 0xffu));
  int st = 0;
  strobe_op_begin(c, w1, STROBE_OP_PASS, &st);
  CHECK_EQ_INT(st, STROBE_EWINDOW); /* a closed window's handle is dead */

  /* Fill the 64 slots: main, w1 (closed), w2, w3..w63. */
  strobe_window ws[64];
  for (int i = 3; i < 64; i++) {
    char name[16];
    snprintf(name, sizeof name, "w%d", i);
    ws[i] = su_window(c, name, 0);
  }
  /* The 65th takes the only closed slot, w1's, now that it is needed. */
  strobe_window w64 = su_window(c, "w64", 0);
  CHECK_EQ_INT(w64.id & 0xffu, w1.id & 0xffu);
  CHECK(w64.id != w1.id);
  strobe_window out;
  CHECK_EQ_INT(strobe_window_register(c, "w65", 0, &out), STROBE_ELIMIT);
  CHECK_EQ_INT(out.id, 0);
  su_op(c, w64, STROBE_OP_PASS, 1);
  su_op(c, ws[63], STROBE_OP_PASS, 1);

  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "counts.untracked_windows"), 1);
  CHECK_EQ_INT(jint(doc, "counts.completed"), 3);
  CHECK(!strcmp(jstr(sample_at(doc, 0), "window"), "w63"));
  CHECK(!strcmp(jstr(sample_at(doc, 1), "window"), "w64"));
  CHECK(!strcmp(jstr(sample_at(doc, 2), "window"), "w1")); /* kept its identity */
  json_decref(doc);
  strobe_collector_release(c);
}

/* Closing a window abandons its live operation: never admitted, never listed. */
static void test_window_close_abandons_op(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  strobe_window w1 = su_window(c, "w1", 0);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  strobe_op op = strobe_op_begin(c, w1, STROBE_OP_PASS, NULL);
  CHECK_EQ_INT(strobe_window_close(c, w1), 0);
  json_t *doc;
  strobe_report_free(su_read(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "counts.unfinished"), 0);
  json_decref(doc);
  strobe_op_end(op, 1);
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "counts.completed"), 0);
  CHECK_EQ_INT(jint(doc, "counts.abandoned"), 1); /* never a sample, never nothing */
  CHECK(!strcmp(jstr(doc, "status"), "empty"));
  json_decref(doc);
  strobe_collector_release(c);
}

/* Refusals never stop the caller: inert operations, with a reason. */
static void test_op_refusals(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  int st = 0;
  strobe_op op = strobe_op_begin(NULL, w, STROBE_OP_PASS, &st);
  CHECK_EQ_INT(st, STROBE_EINVAL);
  op = strobe_op_begin(c, w, (strobe_op_kind)9, &st);
  CHECK_EQ_INT(st, STROBE_EINVAL);
  op = strobe_op_begin(c, (strobe_window){0}, STROBE_OP_PASS, &st);
  CHECK_EQ_INT(st, STROBE_EWINDOW);
  CHECK_EQ_INT(op.id, 0);
  strobe_op_end(op, 1);
  /* STROBE_MAX_LIVE_OPS live operations at once in the collector's table, then refusal. Counted while a
   * session listens: begun while nothing listens, the first 8 on a thread are kept on it instead
   * (docs/sessions.md §Cost when nothing listens). */
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  strobe_op live[STROBE_MAX_LIVE_OPS];
  for (int i = 0; i < STROBE_MAX_LIVE_OPS; i++) {
    live[i] = strobe_op_begin(c, w, STROBE_OP_REBUILD, &st);
    CHECK_EQ_INT(st, 0);
  }
  op = strobe_op_begin(c, w, STROBE_OP_REBUILD, &st);
  CHECK_EQ_INT(st, STROBE_ELIMIT);
  CHECK_EQ_INT(op.id, 0);
  for (int i = STROBE_MAX_LIVE_OPS; i-- > 0;) strobe_op_end(live[i], 1);
  su_end_free(c, id);
  /* A second end is ignored, also once the slot holds another operation. */
  su_start(c, 0, id);
  op = strobe_op_begin(c, w, STROBE_OP_REBUILD, &st);
  CHECK_EQ_INT(st, 0);
  strobe_op_end(op, 1);
  strobe_op_end(op, 1);
  strobe_op next = strobe_op_begin(c, w, STROBE_OP_INPUT, &st); /* the lowest free slot: op's */
  CHECK_EQ_INT(st, 0);
  CHECK_EQ_INT(next.id & 0xffu, op.id & 0xffu);
  strobe_op_end(op, 0);
  json_t *doc;
  strobe_report_free(su_read(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "counts.completed"), 1);
  CHECK_EQ_INT(jint(doc, "counts.unfinished"), 1); /* next is still running */
  CHECK_STR_EQ(jstr(json_array_get(jreq(doc, "unfinished"), 0), "kind"), "input");
  json_decref(doc);
  strobe_op_end(next, 1);
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "counts.completed"), 2);
  CHECK(jbool(json_array_get(jreq(doc, "samples"), 0), "committed")); /* its own end, not op's stale one */
  json_decref(doc);
  strobe_collector_release(c);
}

#define CASES(X)                         \
  X(crossing_pass_excluded)              \
  X(nested_rebuild_inside_crossing_pass) \
  X(unfinished_at_end)                   \
  X(session_begun_mid_slow_frame)        \
  X(empty_and_partial_status)            \
  X(input_and_frame_rate)                \
  X(uncommitted_kept)                    \
  X(stage_populations)                   \
  X(stage_aggregation_and_phase)         \
  X(nested_ops_restore_outer)            \
  X(handoff_across_threads)              \
  X(devtools_excluded_by_default)        \
  X(window_ids)                          \
  X(window_slots)                        \
  X(window_close_abandons_op)            \
  X(op_refusals)                        
HARNESS_MAIN(CASES)
