/*
 * test_session_rates.c — what a report says so an agent can read it without
 * guessing (docs/sessions.md §In flight or stalled, §Frame rate):
 *   - each unfinished operation is compared with the session's completed
 *     operations of its kind: elapsed_vs_p95 and a state that tells an
 *     ordinary operation in flight from a stall by STROBE_STALL_FACTOR, or
 *     says there is nothing to compare with; stalled ones are counted;
 *   - the frame rate after a stall: the first-to-last rate keeps its
 *     meaning, and the steady rate from the median pass interval stays at
 *     the frame rate the stall interrupted, overall and per window;
 *   - frame rates are per window, never summed: the top level has a rate
 *     only when one window had passes; a window's first-to-last rate spans
 *     every pass of it the session counted, not only the returned samples,
 *     and the steady rate says how many intervals (of the returned samples)
 *     its median is over; a window is its declared id (closed and
 *     registered again, one window); window ids past the tracked bound are
 *     counted, in no rate;
 *   - a session can admit only some kinds (frames only), so its 240 samples
 *     are all frames; the other kinds are counted, never kept, and not
 *     listed as unfinished, while a session beside it sees everything.
 *
 * STROBE_TEST_NEEDS: jansson reports
 */
#include <stdio.h>
#include <string.h>

#include "support/session_util.h"

static json_t *unfinished_of_kind(json_t *doc, const char *kind) {
  size_t i;
  json_t *u;
  json_array_foreach(jreq(doc, "unfinished"), i, u) if (!strcmp(jstr(u, "kind"), kind)) return u;
  return NULL;
}

static void pass_of(strobe_collector *c, strobe_window w, long ms) {
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  fx_sleep_ms(ms);
  strobe_op_end(op, 1);
}

static void test_in_flight_or_stalled(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  for (int i = 0; i < 10; i++) pass_of(c, w, 4);

  /* A frame caught just after it began: in flight, well under its kind's p95. */
  strobe_op pass = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  strobe_op input = strobe_op_begin(c, w, STROBE_OP_INPUT, NULL); /* no completed input to compare with */
  json_t *doc;
  strobe_report_free(su_read(c, id, &doc));
  CHECK(!strcmp(jstr(doc, "status"), "partial"));
  json_t *u = unfinished_of_kind(doc, "pass");
  CHECK(!strcmp(jstr(u, "state"), "in_flight"));
  CHECK_EQ_INT(jint(u, "baseline_n"), 10);
  CHECK(jnum(u, "baseline_p95_ms") >= 4.0);
  CHECK(jnum(u, "elapsed_vs_p95") < 1.0);
  json_t *in = unfinished_of_kind(doc, "input");
  CHECK(!strcmp(jstr(in, "state"), "no_baseline"));
  CHECK(jnull(in, "elapsed_vs_p95"));
  CHECK_EQ_INT(jint(doc, "counts.unfinished_stalled"), 0);
  double p95 = jnum(u, "baseline_p95_ms");
  json_decref(doc);

  /* The same frame, long past its kind's p95 times the documented factor: a stall. */
  fx_sleep_ms((long)(STROBE_STALL_FACTOR * p95) + 20);
  strobe_report_free(su_end(c, id, &doc));
  u = unfinished_of_kind(doc, "pass");
  CHECK(!strcmp(jstr(u, "state"), "stalled"));
  CHECK(jnum(u, "elapsed_vs_p95") > STROBE_STALL_FACTOR);
  CHECK_EQ_INT(jint(doc, "counts.unfinished_stalled"), 1);
  CHECK(!strcmp(jstr(unfinished_of_kind(doc, "input"), "state"), "no_baseline"));
  json_decref(doc);
  strobe_op_end(input, 1);
  strobe_op_end(pass, 1);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

static void test_rate_after_stall(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  strobe_window popup = su_window(c, "w1", 0);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  for (int i = 0; i < 41; i++) {
    /* One long stall between two frames: 2 s, so that the steady rate stays above
     * 1.4x the first-to-last rate for any median interval under 100 ms (checked
     * below), however slowly a loaded machine sleeps 5 ms. */
    if (i == 20) fx_sleep_ms(2000);
    strobe_op pass = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
    if (i % 4 == 0) pass_of(c, popup, 0); /* a nested window now and then */
    fx_sleep_ms(5);
    strobe_op_end(pass, 1);
  }
  json_t *doc;
  strobe_report *r = su_end(c, id, &doc);
  json_t *main_rates = NULL, *popup_rates = NULL;
  size_t i;
  json_t *e;
  json_array_foreach(jreq(doc, "frame_rate.by_window"), i, e) {
    if (!strcmp(jstr(e, "window"), "main")) main_rates = e;
    if (!strcmp(jstr(e, "window"), "w1")) popup_rates = e;
  }
  CHECK(main_rates != NULL && popup_rates != NULL);
  CHECK_EQ_INT(jint(main_rates, "passes"), 41);
  CHECK_EQ_INT(jint(popup_rates, "passes"), 11);
  /* First-to-last: 40 intervals over >= 40 x 5 ms + 2 s. Steady: one interval of >= 5 ms. */
  double first_to_last = jnum(main_rates, "passes_per_second");
  double steady = jnum(main_rates, "steady_passes_per_second");
  double median = jnum(main_rates, "median_interval_ms");
  CHECK(first_to_last <= 40.0 / 2.2 + 0.01);
  CHECK(median >= 5.0 && median < 100.0);
  CHECK(steady > 1.4 * first_to_last); /* the stall moved one, not the other */
  CHECK(jnum(popup_rates, "median_interval_ms") >= 4 * 5.0);
  /* The accessor gives the same figures as the JSON. */
  strobe_frame_rate fr;
  CHECK_EQ_INT(strobe_report_query_frame_rate(r, "main", &fr), 0);
  CHECK(fr.valid);
  CHECK_EQ_U64(fr.passes, 41);
  CHECK_NEAR(fr.steady_passes_per_second, steady, 0.001);
  CHECK_NEAR(fr.passes_per_second, first_to_last, 0.001);
  CHECK_EQ_INT(strobe_report_query_frame_rate(r, NULL, &fr), 0);
  CHECK_EQ_U64(fr.passes, 52); /* both windows' passes, and no rate: never summed */
  CHECK(!fr.valid);
  CHECK_EQ_INT(fr.windows, 2);
  CHECK(jnull(doc, "frame_rate.passes_per_second"));
  CHECK_EQ_INT(strobe_report_query_frame_rate(r, "nowhere", &fr), 0);
  CHECK(!fr.valid && fr.passes == 0);
  CHECK_EQ_INT(strobe_report_query_frame_rate(r, NULL, NULL), STROBE_EINVAL);
  strobe_report_free(r);
  json_decref(doc);

  /* One pass: no rate, and the reason says so. */
  su_start(c, 0, id);
  pass_of(c, w, 0);
  strobe_report_free(su_end(c, id, &doc));
  CHECK(jnull(doc, "frame_rate.steady_passes_per_second"));
  CHECK(jnull(doc, "frame_rate.median_interval_ms"));
  CHECK_EQ_INT(jint(json_array_get(jreq(doc, "frame_rate.by_window"), 0), "passes"), 1);
  json_decref(doc);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

static void test_frames_only(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char frames[STROBE_SESSION_ID_MAX], all[STROBE_SESSION_ID_MAX], bad[STROBE_SESSION_ID_MAX];
  strobe_session_desc o = {.max_samples = 4, .kinds = STROBE_KIND_BIT(STROBE_OP_PASS)};
  CHECK_EQ_INT(strobe_session_start(c, &o, frames), 0);
  su_start(c, 4, all);
  /* Kinds outside the four are refused, and nothing starts. */
  o.kinds = STROBE_KIND_BIT(STROBE_OP_PASS) | STROBE_KIND_BIT(5);
  CHECK_EQ_INT(strobe_session_start(c, &o, bad), STROBE_EINVAL);
  o.kinds = STROBE_KIND_BIT(0);
  CHECK_EQ_INT(strobe_session_start(c, &o, bad), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_collector_query_session_count(c), 2);
  strobe_session_info infos[4];
  CHECK_EQ_INT(strobe_collector_query_sessions(c, infos, 4), 2);
  CHECK_EQ_U64(infos[0].kinds, STROBE_KIND_BIT(STROBE_OP_PASS));
  CHECK_EQ_U64(infos[1].kinds, STROBE_KINDS_ALL);

  for (int i = 0; i < 6; i++) {
    su_op(c, w, STROBE_OP_INPUT, 1);
    su_op(c, w, STROBE_OP_REBUILD, 1);
    su_op(c, w, STROBE_OP_PASS, 1);
  }
  strobe_op input = strobe_op_begin(c, w, STROBE_OP_INPUT, NULL);
  json_t *doc;
  strobe_report_free(su_end(c, frames, &doc));
  CHECK_EQ_INT(jint(doc, "counts.returned"), 4);
  CHECK_EQ_INT(jint(doc, "counts.completed"), 6);
  CHECK_EQ_INT(jint(doc, "counts.completed_by_kind.pass"), 6);
  CHECK_EQ_INT(jint(doc, "counts.kind_excluded"), 12);
  CHECK_EQ_INT(jint(doc, "counts.boundary_excluded"), 0);
  CHECK_EQ_INT(jlen(doc, "session.kinds"), 1);
  CHECK(!strcmp(json_string_value(json_array_get(jreq(doc, "session.kinds"), 0)), "pass"));
  CHECK_EQ_INT(jlen(doc, "unfinished"), 0); /* the running input is not its business */
  CHECK(!strcmp(jstr(doc, "status"), "complete"));
  json_decref(doc);

  strobe_report_free(su_end(c, all, &doc));
  CHECK_EQ_INT(jint(doc, "counts.returned"), 4);
  CHECK_EQ_INT(jint(doc, "counts.completed"), 18);
  CHECK_EQ_INT(jint(doc, "counts.kind_excluded"), 0);
  CHECK_EQ_INT(jlen(doc, "session.kinds"), 4);
  CHECK_EQ_INT(jlen(doc, "unfinished"), 1);
  json_decref(doc);
  strobe_op_end(input, 1);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

/* A window's rate spans every pass of it the session counted, not the 4 it
 * returns; two windows are two rates, never one sum. */
static void test_rates_per_window_over_the_session(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  strobe_window popup = su_window(c, "w1", 0);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 4, id);
  uint64_t t0 = fx_now_ns();
  for (int i = 0; i < 20; i++) {
    strobe_op pass = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
    if (i % 2 == 0) pass_of(c, popup, 0);
    fx_sleep_ms(5);
    strobe_op_end(pass, 1);
    su_op(c, w, STROBE_OP_PASS, 0); /* dropped: never counted */
  }
  double elapsed_ms = (double)(fx_now_ns() - t0) / 1e6;
  /* The popup's id again, on a new registration: the same window. */
  CHECK_EQ_INT(strobe_window_close(c, popup), 0);
  popup = su_window(c, "w1", 0);
  pass_of(c, popup, 0);
  json_t *doc;
  strobe_report *r = su_end(c, id, &doc);
  CHECK_EQ_INT(jlen(doc, "samples"), 4);
  CHECK_EQ_INT(jint(doc, "frame_rate.windows"), 2);
  CHECK_EQ_INT(jint(doc, "frame_rate.passes"), 31);
  CHECK(jnull(doc, "frame_rate.passes_per_second") && jnull(doc, "frame_rate.steady_passes_per_second"));
  /* In order of each window's first counted pass: the popup's, nested, ended first. */
  json_t *popup_rates = json_array_get(jreq(doc, "frame_rate.by_window"), 0);
  json_t *main_rates = json_array_get(jreq(doc, "frame_rate.by_window"), 1);
  REQUIRE(main_rates && popup_rates);
  CHECK_STR_EQ(jstr(main_rates, "window"), "main");
  CHECK_STR_EQ(jstr(popup_rates, "window"), "w1");
  CHECK_EQ_INT(jint(main_rates, "passes"), 20);
  CHECK_EQ_INT(jint(popup_rates, "passes"), 11);
  /* 19 intervals of at least 5 ms each, inside the loop's time. */
  double span = jnum(main_rates, "first_to_last_span_ms");
  CHECKF(span >= 19 * 5.0 && span <= elapsed_ms, "span %.3f ms of %.3f", span, elapsed_ms);
  CHECK_NEAR(jnum(main_rates, "passes_per_second"), 19.0 / (span / 1000.0), 0.01);
  /* Of the 4 returned samples, main's committed pass is one at most: no interval, no steady rate. */
  CHECK(jint(main_rates, "intervals_n") <= 1);
  strobe_frame_rate fr;
  CHECK_EQ_INT(strobe_report_query_frame_rate(r, "main", &fr), 0);
  CHECK(fr.valid);
  CHECK_EQ_U64(fr.passes, 20);
  CHECK_EQ_INT(fr.windows, 1);
  CHECK_NEAR(fr.first_to_last_span_ms, span, 0.001);
  strobe_report_free(r);
  json_decref(doc);

  /* One window: the top level is its figures. */
  su_start(c, 0, id);
  for (int i = 0; i < 3; i++) pass_of(c, w, 2);
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "frame_rate.windows"), 1);
  CHECK(json_equal(jreq(doc, "frame_rate.passes_per_second"),
                   jreq(json_array_get(jreq(doc, "frame_rate.by_window"), 0), "passes_per_second")));
  CHECK(jnum(doc, "frame_rate.passes_per_second") > 0);
  json_decref(doc);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

/* Window ids past the STROBE_MAX_WINDOWS a session tracks: their passes are counted, in no rate. */
static void test_rate_windows_bound(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  for (int i = 0; i < STROBE_MAX_WINDOWS + 2; i++) {
    char name[16];
    snprintf(name, sizeof name, "w%d", i);
    strobe_window x = su_window(c, name, 0);
    pass_of(c, x, 0);
    CHECK_EQ_INT(strobe_window_close(c, x), 0);
  }
  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jlen(doc, "frame_rate.by_window"), STROBE_MAX_WINDOWS);
  CHECK_EQ_INT(jint(doc, "frame_rate.passes_untracked"), 2);
  CHECK_EQ_INT(jint(doc, "frame_rate.passes"), STROBE_MAX_WINDOWS);
  CHECK(jbool(doc, "truncated"));
  json_decref(doc);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

#define CASES(X)                              \
  X(frames_only) X(in_flight_or_stalled)      \
  X(rate_after_stall)                         \
  X(rates_per_window_over_the_session)        \
  X(rate_windows_bound)
HARNESS_MAIN(CASES)
