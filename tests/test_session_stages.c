/*
 * test_session_stages.c — stages and operations as a toolkit whose phases
 * are signals drives them (docs/sessions.md §Stages nest at run time,
 * §Stages opened and closed in different callbacks, §Input inside a pass):
 *   - explicit stage handles begun in one callback and ended in another, in
 *     order, out of order (a stage whose parent ended first is re-parented),
 *     and across reentrancy (the same stage open inside itself); misuse of a
 *     handle (ended twice, ended on another thread, a non-stage site) is an
 *     error that changes nothing;
 *   - a stage's parent is the stage actually open when it ran: work declared
 *     inside `layout` that ran inside `update` and inside a model update is
 *     reported once per real parent, each with its n, never as nested in
 *     `layout`; every run outside its declared parent is counted;
 *   - input dispatched inside a frame's phase ends implicitly when that
 *     phase (or its pass) ends; an operation left open across the end of
 *     the operation it began in is counted as interleaved.
 *
 * STROBE_TEST_NEEDS: jansson reports
 */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "support/session_util.h"

/* The stage_summary entry for name under parent (NULL: directly in the operation), or NULL. */
static json_t *summary_entry(json_t *doc, const char *name, const char *parent) {
  size_t i;
  json_t *e;
  json_array_foreach(jreq(doc, "stage_summary"), i, e) {
    if (strcmp(jstr(e, "name"), name)) continue;
    json_t *p = jreq(e, "nested_in");
    if (parent ? (json_is_string(p) && !strcmp(json_string_value(p), parent)) : json_is_null(p)) return e;
  }
  return NULL;
}

static int summary_entries_named(json_t *doc, const char *name) {
  int n = 0;
  size_t i;
  json_t *e;
  json_array_foreach(jreq(doc, "stage_summary"), i, e) n += !strcmp(jstr(e, "name"), name);
  return n;
}

/* The sample of the given kind (newest first: index-th of that kind). */
static json_t *sample_of_kind(json_t *doc, const char *kind, int index) {
  size_t i;
  json_t *s;
  json_array_foreach(jreq(doc, "samples"), i, s) {
    if (strcmp(jstr(s, "kind"), kind)) continue;
    if (index-- == 0) return s;
  }
  return NULL;
}

static json_t *sample_stage(json_t *sample, const char *name) {
  size_t i;
  json_t *st;
  json_array_foreach(jreq(sample, "stages"), i, st) if (!strcmp(jstr(st, "name"), name)) return st;
  return NULL;
}

/* >>a frame clock: each phase is a signal; a handler ends the previous
 * phase's stage and begins the next, so no stage closes in the function
 * that opened it. */
typedef struct frame_clock {
  strobe_collector *c;
  strobe_window w;
  strobe_op pass;
  strobe_stage phase;
} frame_clock;

static strobe_site s_update = STROBE_STAGE_SITE("update", NULL);
static strobe_site s_layout = STROBE_STAGE_SITE("layout", NULL);
static strobe_site s_paint = STROBE_STAGE_SITE("paint", NULL);

static void on_before_paint(frame_clock *fc) {
  fc->pass = strobe_op_begin(fc->c, fc->w, STROBE_OP_PASS, NULL);
  fc->phase = strobe_stage_begin(&s_update);
}
static void on_layout(frame_clock *fc) {
  CHECK_EQ_INT(strobe_stage_end(&fc->phase), 0);
  fc->phase = strobe_stage_begin(&s_layout);
  fx_sleep_ms(4);
}
static void on_paint(frame_clock *fc) {
  CHECK_EQ_INT(strobe_stage_end(&fc->phase), 0);
  STROBE_STAGE_BEGIN(fc->phase, "paint", NULL);
}
static void on_after_paint(frame_clock *fc) {
  CHECK_EQ_INT(STROBE_STAGE_END(fc->phase), 0);
  strobe_op_end(fc->pass, 1);
}

static void test_stages_across_callbacks(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  frame_clock fc = {c, w, {0, NULL}, {0, 0, 0, NULL}};
  for (int frame = 0; frame < 3; frame++) {
    on_before_paint(&fc);
    on_layout(&fc);
    if (frame == 2) { /* a live read mid-frame sees the phase a callback opened */
      json_t *doc;
      strobe_report_free(su_read(c, id, &doc));
      CHECK(!strcmp(jstr(json_array_get(jreq(doc, "unfinished"), 0), "phase"), "layout"));
      json_decref(doc);
    }
    on_paint(&fc);
    on_after_paint(&fc);
  }
  CHECK_EQ_INT(strobe_stage_end(&fc.phase), STROBE_ESTATE); /* ended already: nothing changes */
  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "counts.returned"), 3);
  const char *names[] = {"update", "layout", "paint"};
  for (int i = 0; i < 3; i++) {
    json_t *e = summary_entry(doc, names[i], NULL);
    CHECK(e != NULL);
    CHECK_EQ_INT(jint(e, "n"), 3);
  }
  CHECK(jnum(summary_entry(doc, "layout", NULL), "p50_ms") >= 4.0);
  CHECK(jnum(summary_entry(doc, "update", NULL), "max_ms") < 4.0); /* ended when layout began */
  json_decref(doc);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

/* >>out of order: a parent that ends before its child leaves the child
 * re-parented to the parent's own parent; the phase is the innermost stage
 * still open. */
static strobe_site s_a = STROBE_STAGE_SITE("stage_a", NULL);
static strobe_site s_b = STROBE_STAGE_SITE("stage_b", NULL);
static strobe_site s_c = STROBE_STAGE_SITE("stage_c", NULL);
static strobe_site s_outer = STROBE_STAGE_SITE("outer", NULL);

static void test_out_of_order(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);

  /* outer > a > b, then a ends first: b was not inside a, but inside outer. */
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  strobe_stage outer = strobe_stage_begin(&s_outer);
  strobe_stage a = strobe_stage_begin(&s_a);
  strobe_stage b = strobe_stage_begin(&s_b);
  fx_sleep_ms(2);
  CHECK_EQ_INT(strobe_stage_end(&a), 0);
  fx_sleep_ms(3);
  json_t *doc;
  strobe_report_free(su_read(c, id, &doc));
  CHECK(!strcmp(jstr(json_array_get(jreq(doc, "unfinished"), 0), "phase"), "stage_b"));
  json_decref(doc);
  CHECK_EQ_INT(strobe_stage_end(&b), 0);
  strobe_report_free(su_read(c, id, &doc)); /* b ended: outer is the phase again */
  CHECK(!strcmp(jstr(json_array_get(jreq(doc, "unfinished"), 0), "phase"), "outer"));
  json_decref(doc);

  /* a > b > c, then b ends in the middle: c stays inside a. */
  a = strobe_stage_begin(&s_a);
  b = strobe_stage_begin(&s_b);
  strobe_stage cc = strobe_stage_begin(&s_c);
  CHECK_EQ_INT(strobe_stage_end(&b), 0);
  CHECK_EQ_INT(strobe_stage_end(&cc), 0);
  CHECK_EQ_INT(strobe_stage_end(&a), 0);
  CHECK_EQ_INT(strobe_stage_end(&outer), 0);
  strobe_op_end(op, 1);

  strobe_report_free(su_end(c, id, &doc));
  json_t *b_outer = summary_entry(doc, "stage_b", "outer");
  json_t *b_a = summary_entry(doc, "stage_b", "stage_a");
  CHECK(b_outer != NULL && b_a != NULL);
  CHECK(jnum(b_outer, "max_ms") >= 5.0); /* longer than a: it could never be "nested in a" */
  CHECK(jnum(summary_entry(doc, "stage_a", "outer"), "max_ms") < jnum(b_outer, "max_ms"));
  CHECK(summary_entry(doc, "stage_c", "stage_a") != NULL);
  CHECK(summary_entry(doc, "stage_c", "stage_b") == NULL);
  json_decref(doc);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

/* >>reentrancy: a handler re-entered from inside itself opens the same stage
 * again; each run is attributed to the stage really open around it. */
static strobe_site s_measure = STROBE_STAGE_SITE("measure", NULL);

static void on_measure(int depth) {
  strobe_stage st = strobe_stage_begin(&s_measure);
  if (depth < 2) on_measure(depth + 1); /* a signal emitted from inside its own handler */
  CHECK_EQ_INT(strobe_stage_end(&st), 0);
}

static void *end_elsewhere(void *arg) {
  return (void *)(intptr_t)strobe_stage_end((strobe_stage *)arg);
}

/* Outside any operation, with no session and no capture, a stage is idle
 * (docs/sessions.md §Cost when nothing listens): nothing was begun, so its
 * handle ends on any thread, once; a session started during it changes
 * nothing. With a session active it is an ordinary handle again: another
 * thread's end is refused. */
static void test_idle_stage_outside_operations(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  strobe_stage st = strobe_stage_begin(&s_paint);
  pthread_t t;
  void *rc;
  CHECK_EQ_INT(pthread_create(&t, NULL, end_elsewhere, &st), 0);
  CHECK_EQ_INT(pthread_join(t, &rc), 0);
  CHECK_EQ_INT((intptr_t)rc, 0);
  CHECK_EQ_INT(strobe_stage_end(&st), STROBE_ESTATE);
  st = strobe_stage_begin(&s_paint);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  CHECK_EQ_INT(strobe_stage_end(&st), 0);
  strobe_stage live = strobe_stage_begin(&s_paint);
  CHECK_EQ_INT(pthread_create(&t, NULL, end_elsewhere, &live), 0);
  CHECK_EQ_INT(pthread_join(t, &rc), 0);
  CHECK_EQ_INT((intptr_t)rc, STROBE_EINVAL);
  CHECK_EQ_INT(strobe_stage_end(&live), 0);
  su_end_free(c, id);
  strobe_collector_release(c);
}

static void test_reentrancy_and_misuse(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  on_measure(0);

  /* A handle belongs to its thread: ending it elsewhere is refused and changes nothing. */
  strobe_stage st = strobe_stage_begin(&s_paint);
  pthread_t t;
  void *rc;
  CHECK_EQ_INT(pthread_create(&t, NULL, end_elsewhere, &st), 0);
  CHECK_EQ_INT(pthread_join(t, &rc), 0);
  CHECK_EQ_INT((intptr_t)rc, STROBE_EINVAL);
  CHECK_EQ_INT(strobe_stage_end(&st), 0);
  CHECK_EQ_INT(strobe_stage_end(&st), STROBE_ESTATE);
  CHECK_EQ_INT(strobe_stage_end(NULL), STROBE_EINVAL);
  /* A site that is not a stage gives an inert handle. */
  static strobe_site not_a_stage = {"not_a_stage", NULL, NULL, __FILE__, __func__, __LINE__, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0};
  strobe_stage inert = strobe_stage_begin(&not_a_stage);
  CHECK_EQ_INT(strobe_stage_end(&inert), STROBE_ESTATE);
  strobe_op_end(op, 1);

  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(summary_entries_named(doc, "measure"), 2);
  CHECK(summary_entry(doc, "measure", NULL) != NULL);
  json_t *sample = sample_of_kind(doc, "pass", 0);
  size_t i;
  json_t *e;
  long long inner_runs = 0;
  json_array_foreach(jreq(sample, "stages"), i, e) {
    if (strcmp(jstr(e, "name"), "measure")) continue;
    if (jnull(e, "nested_in"))
      CHECK_EQ_INT(jint(e, "count"), 1);
    else
      inner_runs = jint(e, "count");
  }
  CHECK_EQ_INT(inner_runs, 2); /* depth 1 and 2 ran inside measure */
  CHECK(sample_stage(sample, "not_a_stage") == NULL);
  CHECK_EQ_INT(jint(sample_stage(sample, "paint"), "count"), 1);
  json_decref(doc);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

/* >>run-time nesting: row binding declared in layout runs under update and
 * under a model update, never under layout. */
static void bind_row(void) { STROBE_STAGE("row_bind", "layout"); }

static void test_runtime_parents(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  for (int frame = 0; frame < 4; frame++) {
    strobe_op pass = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
    {
      STROBE_STAGE("update", NULL);
      bind_row();
      bind_row();
    }
    if (frame % 2 == 0) {
      STROBE_STAGE("model_update", NULL);
      bind_row();
    }
    {
      STROBE_STAGE("layout", NULL);
      STROBE_STAGE("measure", "layout");
      { STROBE_STAGE("cell_size", "layout"); } /* declared parent open, though not innermost */
    }
    strobe_op_end(pass, 1);
  }
  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  json_t *in_update = summary_entry(doc, "row_bind", "update");
  json_t *in_model = summary_entry(doc, "row_bind", "model_update");
  CHECK(in_update != NULL && in_model != NULL);
  CHECK_EQ_INT(jint(in_update, "n"), 4);
  CHECK_EQ_INT(jint(in_model, "n"), 2);
  CHECK(summary_entry(doc, "row_bind", "layout") == NULL); /* never "nested in layout" */
  CHECK_EQ_INT(summary_entries_named(doc, "row_bind"), 2);
  CHECK(!strcmp(jstr(in_update, "declared_parent"), "layout"));
  CHECK_EQ_INT(jint(in_update, "declared_parent_not_open"), 8); /* two runs in each of 4 frames */
  CHECK_EQ_INT(jint(in_model, "declared_parent_not_open"), 2);
  json_t *cell = summary_entry(doc, "cell_size", "measure");
  CHECK(cell != NULL);
  CHECK_EQ_INT(jint(cell, "declared_parent_not_open"), 0);
  CHECK_EQ_INT(jint(summary_entry(doc, "measure", "layout"), "declared_parent_not_open"), 0);
  /* Per sample too: the newest frame (odd) ran row_bind twice under update only. */
  json_t *st = sample_stage(sample_of_kind(doc, "pass", 0), "row_bind");
  CHECK(!strcmp(jstr(st, "nested_in"), "update"));
  CHECK_EQ_INT(jint(st, "count"), 2);
  CHECK_EQ_INT(jint(st, "declared_parent_not_open"), 2);

  /* The accessor says the same. */
  strobe_report *r = NULL;
  char id2[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id2);
  strobe_op pass = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  {
    STROBE_STAGE("update", NULL);
    bind_row();
  }
  strobe_op_end(pass, 1);
  CHECK_EQ_INT(strobe_session_stop(c, id2, 0, &r), 0);
  strobe_stage_summary sums[8];
  int n = strobe_report_query_stages(r, sums, 8);
  int found = 0;
  for (int i = 0; i < n && i < 8; i++) {
    if (strcmp(sums[i].name, "row_bind")) continue;
    found = 1;
    CHECK(sums[i].nested_in && !strcmp(sums[i].nested_in, "update"));
    CHECK(sums[i].declared_parent && !strcmp(sums[i].declared_parent, "layout"));
    CHECK_EQ_INT(sums[i].declared_parent_not_open, 1);
  }
  CHECK(found);
  strobe_report_free(r);
  json_decref(doc);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

/* >>input inside a pass: dispatched in the flush-events phase, a handler
 * stops the signal and nothing ends the input operation. */
static strobe_site s_flush = STROBE_STAGE_SITE("flush_events", NULL);
static strobe_site s_before = STROBE_STAGE_SITE("before_paint", NULL);

static strobe_op deliver_event(strobe_collector *c, strobe_window w) {
  strobe_op input = strobe_op_begin_in_phase(c, w, STROBE_OP_INPUT, NULL);
  CHECK(input.id != 0);
  STROBE_STAGE("pointer_handler", NULL);
  fx_sleep_ms(1);
  return input; /* the handler stopped the signal: no end here */
}

static void test_input_inside_pass(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);

  /* 1: the phase moves on: the input ends with it. */
  strobe_op pass = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  strobe_stage phase = strobe_stage_begin(&s_flush);
  deliver_event(c, w);
  CHECK_EQ_INT(strobe_stage_end(&phase), 0);
  phase = strobe_stage_begin(&s_before); /* the pass's next phase, not the input's */
  fx_sleep_ms(3);
  CHECK_EQ_INT(strobe_stage_end(&phase), 0);
  strobe_op_end(pass, 1);

  /* 2: the pass ends with its phase still open: the input ends with the pass. */
  pass = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  phase = strobe_stage_begin(&s_flush);
  deliver_event(c, w);
  strobe_op_end(pass, 1);
  CHECK_EQ_INT(strobe_stage_end(&phase), 0); /* its pass ended: nothing left to time */

  /* 3: a handler that does end its input: an ordinary nested sample. */
  pass = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  phase = strobe_stage_begin(&s_flush);
  strobe_op_end(deliver_event(c, w), 1);
  CHECK_EQ_INT(strobe_stage_end(&phase), 0);
  strobe_op_end(pass, 1);

  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "counts.completed_by_kind.input"), 3);
  CHECK_EQ_INT(jint(doc, "counts.interleaved"), 0);
  json_t *explicit_in = sample_of_kind(doc, "input", 0), *with_pass = sample_of_kind(doc, "input", 1),
         *with_phase = sample_of_kind(doc, "input", 2);
  json_t *pass3 = sample_of_kind(doc, "pass", 0), *pass2 = sample_of_kind(doc, "pass", 1),
         *pass1 = sample_of_kind(doc, "pass", 2);
  CHECK(!jbool(explicit_in, "ended_implicitly"));
  CHECK(jbool(with_pass, "ended_implicitly"));
  CHECK(jbool(with_phase, "ended_implicitly"));
  /* Case 1: the input ended when flush_events did, before the pass's next phase. */
  CHECK(jnum(with_phase, "end_ms") <= jnum(pass1, "end_ms") - 3.0 + RC_MS_EPS);
  CHECK(sample_stage(with_phase, "before_paint") == NULL);
  CHECK(sample_stage(with_phase, "pointer_handler") != NULL);
  CHECK(sample_stage(pass1, "before_paint") != NULL);
  CHECK(sample_stage(pass1, "pointer_handler") == NULL);
  /* Case 2: the input ended at the pass's end, inside it. */
  CHECK(jnum(with_pass, "end_ms") <= jnum(pass2, "end_ms"));
  CHECK(jnum(with_pass, "start_ms") >= jnum(pass2, "start_ms"));
  (void)pass3;
  json_decref(doc);

  /* Without begin_in_phase, an input left open across its pass's end interleaves: counted. */
  su_start(c, 0, id);
  pass = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  strobe_op input = strobe_op_begin(c, w, STROBE_OP_INPUT, NULL);
  strobe_op_end(pass, 1);
  strobe_op next = strobe_op_begin(c, w, STROBE_OP_PASS, NULL); /* now nested in the input */
  strobe_op_end(next, 1);
  strobe_op_end(input, 1);
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "counts.interleaved"), 1);
  CHECK(!jbool(sample_of_kind(doc, "input", 0), "ended_implicitly"));
  json_decref(doc);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

/* >>stage runs (docs/sessions.md §Stage runs): a session that asks for them
 * gets each run's times, nested runs inside their parent's, bounded at
 * STROBE_MAX_STAGE_RUNS per operation with the rest counted; a session
 * beside it that did not ask gets totals only. */
static strobe_site s_runs_outer = STROBE_STAGE_SITE("runs_outer", NULL);
static strobe_site s_runs_inner = STROBE_STAGE_SITE("runs_inner", NULL);
static strobe_site s_runs_loop = STROBE_STAGE_SITE("runs_loop", NULL);

static void test_stage_runs(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char with[STROBE_SESSION_ID_MAX], without[STROBE_SESSION_ID_MAX];
  REQUIRE_EQ_INT(strobe_session_start(c, &(strobe_session_desc){.stage_runs = 1}, with), 0);
  su_start(c, 0, without);
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  strobe_stage outer = strobe_stage_begin(&s_runs_outer);
  for (int i = 0; i < 3; i++) {
    strobe_stage in = strobe_stage_begin(&s_runs_inner);
    fx_sleep_ms(1);
    strobe_stage_end(&in);
  }
  strobe_stage_end(&outer);
  const int loops = STROBE_MAX_STAGE_RUNS + 6; /* 4 runs above: 60 of these keep their times, 10 do not */
  for (int i = 0; i < loops; i++) {
    strobe_stage l = strobe_stage_begin(&s_runs_loop);
    strobe_stage_end(&l);
  }
  strobe_op_end(op, 1);
  json_t *doc;
  strobe_report_free(su_end(c, with, &doc));
  CHECK(jbool(doc, "session.stage_runs"));
  json_t *sm = sample_of_kind(doc, "pass", 0);
  REQUIRE(sm != NULL);
  CHECK_EQ_INT(jint(sm, "stage_runs_dropped"), loops + 4 - STROBE_MAX_STAGE_RUNS);
  json_t *o = jreq(sample_stage(sm, "runs_outer"), "runs"), *in = jreq(sample_stage(sm, "runs_inner"), "runs");
  json_t *lp = jreq(sample_stage(sm, "runs_loop"), "runs");
  CHECK_EQ_INT(json_array_size(o), 1);
  CHECK_EQ_INT(json_array_size(in), 3);
  CHECK_EQ_INT(json_array_size(lp), STROBE_MAX_STAGE_RUNS - 4);
  CHECK_EQ_INT(jint(sample_stage(sm, "runs_loop"), "count"), loops); /* every run in the total */
  double s0 = jnum(sm, "start_ms"), s1 = jnum(sm, "end_ms");
  double ob = json_number_value(json_array_get(json_array_get(o, 0), 0));
  double oe = json_number_value(json_array_get(json_array_get(o, 0), 1));
  CHECK(s0 <= ob && ob < oe && oe <= s1);
  double prev_end = ob, sum = 0;
  size_t i;
  json_t *r;
  json_array_foreach(in, i, r) { /* inside the outer run, in order, each about 1 ms */
    double b = json_number_value(json_array_get(r, 0)), e = json_number_value(json_array_get(r, 1));
    CHECK(b >= prev_end && e >= b + 0.9 && e <= oe);
    prev_end = e;
    sum += e - b;
  }
  CHECK(fabs(sum - jnum(sample_stage(sm, "runs_inner"), "total_ms")) < 0.01); /* the runs are the total */
  json_array_foreach(lp, i, r) CHECK(json_number_value(json_array_get(r, 0)) >= oe);
  json_decref(doc);
  strobe_report_free(su_end(c, without, &doc));
  CHECK(!jbool(doc, "session.stage_runs"));
  sm = sample_of_kind(doc, "pass", 0);
  REQUIRE(sm != NULL);
  CHECK(json_object_get(sm, "stage_runs_dropped") == NULL);
  CHECK(json_object_get(sample_stage(sm, "runs_inner"), "runs") == NULL);
  CHECK_EQ_INT(jint(sample_stage(sm, "runs_inner"), "count"), 3);
  json_decref(doc);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

#define CASES(X) X(stages_across_callbacks) X(out_of_order) X(idle_stage_outside_operations) \
  X(reentrancy_and_misuse) X(runtime_parents) X(input_inside_pass) \
  X(stage_runs)
HARNESS_MAIN(CASES)
