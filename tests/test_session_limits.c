/*
 * test_session_limits.c — every bound that cuts session data counts what it
 * cut and the report says so (docs/sessions.md "Per-thread bounds", §Stages
 * nest at run time, §Bounds and lifecycle):
 *   - a 9th operation nested on one thread is still a sample, flagged
 *     nesting_overflow and counted, and its stages and counters never land
 *     on the 8th: they are counted in its stages_dropped and counters_dropped;
 *   - 20 stages open at once keep 16, and stages_dropped says 4;
 *   - 160 distinct stages: the JSON's stage_summary keeps 128 and
 *     counts.stage_summary_dropped says 32; the accessor returns 160;
 *   - a nested stage whose parent never completed in the operation is
 *     flagged parent_incomplete, never "already included, do not sum";
 *   - a pass whose window closes mid-pass is counted as abandoned, never
 *     nothing.
 *
 * STROBE_TEST_NEEDS: jansson reports
 */
#include <stdio.h>
#include <string.h>

#include "support/session_util.h"

/* n stage sites named <prefix><i> in static storage (names 8 bytes each). */
static void make_sites(strobe_site *sites, char (*names)[8], int n, const char *prefix) {
  for (int i = 0; i < n; i++) {
    snprintf(names[i], sizeof names[i], "%s%d", prefix, i);
    sites[i] = (strobe_site)STROBE_STAGE_SITE(names[i], NULL);
  }
}

/* A collector, its main window and a session with the default bound. */
static strobe_collector *with_session(strobe_window *w, char id[STROBE_SESSION_ID_MAX]) {
  strobe_collector *c = su_collector(w);
  su_start(c, 0, id);
  return c;
}

/* >>operations nested deeper than 8 on one thread */
static void test_ninth_nested_operation(void) {
  strobe_window w;
  char id[STROBE_SESSION_ID_MAX];
  strobe_collector *c = with_session(&w, id);
  strobe_op ops[9];
  for (int i = 0; i < 9; i++) {
    int st = -1;
    ops[i] = strobe_op_begin(c, w, STROBE_OP_REBUILD, &st);
    CHECK_EQ_INT(st, 0);
    REQUIRE(ops[i].id != 0);
  }
  {
    STROBE_STAGE("ninth_work", NULL); /* the 9th's: the thread has no operation it may attach to */
    strobe_op_counter_add("ninth_rows", 9);
    CHECK_EQ_INT(strobe_op_detailed(), 0);
  }
  strobe_op_end(ops[8], 1);
  {
    STROBE_STAGE("eighth_work", NULL); /* back in the 8th */
    strobe_op_counter_add("eighth_rows", 8);
  }
  for (int i = 7; i >= 0; i--) strobe_op_end(ops[i], 1);
  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "counts.completed"), 9);
  CHECK_EQ_INT(jint(doc, "counts.nesting_overflow"), 1);
  /* Newest first: the 9th ended first, so it is the last sample. */
  json_t *samples = jreq(doc, "samples");
  json_t *ninth = json_array_get(samples, 8), *eighth = json_array_get(samples, 7);
  REQUIRE(ninth && eighth);
  CHECK(jbool(ninth, "nesting_overflow"));
  CHECK_EQ_INT(json_array_size(jreq(ninth, "stages")), 0);
  CHECK_EQ_INT(json_array_size(jreq(ninth, "counters")), 0);
  CHECK_EQ_INT(jint(ninth, "stages_dropped"), 1); /* not kept, but counted where they belong */
  CHECK_EQ_INT(jint(ninth, "counters_dropped"), 1);
  CHECK_EQ_INT(jint(eighth, "stages_dropped"), 0);
  CHECK_EQ_INT(jint(eighth, "counters_dropped"), 0);
  CHECK(!jbool(eighth, "nesting_overflow"));
  CHECK(su_named(jreq(eighth, "stages"), "ninth_work") == NULL);
  CHECK(su_named(jreq(eighth, "stages"), "eighth_work") != NULL);
  CHECK_EQ_INT(json_array_size(jreq(eighth, "counters")), 1);
  json_decref(doc);

  /* The thread recovers: a later operation records its stages again. */
  su_start(c, 0, id);
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  { STROBE_STAGE("later_work", NULL); }
  strobe_op_end(op, 1);
  strobe_report_free(su_end(c, id, &doc));
  CHECK(su_named(jreq(json_array_get(jreq(doc, "samples"), 0), "stages"), "later_work") != NULL);
  CHECK_EQ_INT(jint(doc, "counts.nesting_overflow"), 0);
  json_decref(doc);
  strobe_collector_release(c);
}

/* >>stages open at once: 16 are tracked, the rest are counted. */
static void test_twenty_nested_stages(void) {
  static strobe_site sites[20];
  static char names[20][8];
  make_sites(sites, names, 20, "nest");
  strobe_window w;
  char id[STROBE_SESSION_ID_MAX];
  strobe_collector *c = with_session(&w, id);
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  strobe_stage h[20];
  for (int i = 0; i < 20; i++) h[i] = strobe_stage_begin(&sites[i]);
  for (int i = 19; i >= 0; i--) CHECK_EQ_INT(strobe_stage_end(&h[i]), 0);
  strobe_op_end(op, 1);
  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  json_t *s = json_array_get(jreq(doc, "samples"), 0);
  REQUIRE(s != NULL);
  CHECK_EQ_INT(json_array_size(jreq(s, "stages")), 16);
  CHECK_EQ_INT(jint(s, "stages_dropped"), 4);
  json_decref(doc);
  strobe_collector_release(c);
}

/* >>stage summary: 160 distinct stages, 32 per operation over 5 operations. */
static void test_summary_bound_counted(void) {
  static strobe_site sites[160];
  static char names[160][8];
  make_sites(sites, names, 160, "st");
  strobe_window w;
  char id[STROBE_SESSION_ID_MAX];
  strobe_collector *c = with_session(&w, id);
  for (int op_i = 0; op_i < 5; op_i++) {
    strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
    for (int k = 0; k < 32; k++) {
      strobe_stage h = strobe_stage_begin(&sites[op_i * 32 + k]);
      CHECK_EQ_INT(strobe_stage_end(&h), 0);
    }
    strobe_op_end(op, 1);
  }
  json_t *doc;
  strobe_report *r = su_end(c, id, &doc);
  CHECK_EQ_INT(json_array_size(jreq(doc, "stage_summary")), STROBE_MAX_STAGE_SUMMARY);
  CHECK_EQ_INT(jint(doc, "counts.stage_summary_dropped"), 160 - STROBE_MAX_STAGE_SUMMARY);
  CHECK_EQ_INT(strobe_report_query_stages(r, NULL, 0), 160);
  json_decref(doc);
  strobe_report_free(r);
  strobe_collector_release(c);
}

/* >>nesting is checked: a child whose parent stage never completed in the
 * operation is not "already included" anywhere. */
static void test_parent_never_completed(void) {
  static strobe_site outer = STROBE_STAGE_SITE("outer_open", NULL);
  static strobe_site inner = STROBE_STAGE_SITE("inner_done", NULL);
  static strobe_site whole = STROBE_STAGE_SITE("outer_whole", NULL);
  strobe_window w;
  char id[STROBE_SESSION_ID_MAX];
  strobe_collector *c = with_session(&w, id);
  /* Pass 1: outer stays open when the pass ends; inner completed inside it. */
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  strobe_stage o = strobe_stage_begin(&outer);
  strobe_stage i = strobe_stage_begin(&inner);
  fx_sleep_ms(2);
  CHECK_EQ_INT(strobe_stage_end(&i), 0);
  strobe_op_end(op, 1);
  CHECK_EQ_INT(strobe_stage_end(&o), 0); /* after its operation: nothing to add to */
  /* Pass 2: the same pair, with outer complete. */
  op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  o = strobe_stage_begin(&whole);
  i = strobe_stage_begin(&inner);
  CHECK_EQ_INT(strobe_stage_end(&i), 0);
  CHECK_EQ_INT(strobe_stage_end(&o), 0);
  strobe_op_end(op, 1);
  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  json_t *s1 = json_array_get(jreq(doc, "samples"), 1), *s2 = json_array_get(jreq(doc, "samples"), 0);
  REQUIRE(s1 && s2);
  CHECK(su_named(jreq(s1, "stages"), "outer_open") == NULL);
  json_t *orphan = su_named(jreq(s1, "stages"), "inner_done");
  REQUIRE(orphan != NULL);
  CHECK_STR_EQ(jstr(orphan, "nested_in"), "outer_open");
  CHECK(jbool(orphan, "parent_incomplete"));
  json_t *kept = su_named(jreq(s2, "stages"), "inner_done");
  REQUIRE(kept != NULL);
  CHECK(!jbool(kept, "parent_incomplete"));
  json_t *sum = su_named(jreq(doc, "stage_summary"), "inner_done");
  REQUIRE(sum != NULL);
  /* Each pair is its own summary entry; the one under outer_open says where its time went. */
  size_t k;
  json_t *e;
  int flagged = 0, clean = 0;
  json_array_foreach(jreq(doc, "stage_summary"), k, e) {
    if (strcmp(jstr(e, "name"), "inner_done")) continue;
    if (!strcmp(jstr(e, "nested_in"), "outer_open")) {
      CHECK_EQ_INT(jint(e, "parent_incomplete"), 1);
      CHECK(strstr(jstr(e, "note"), "do not sum") == NULL);
      flagged++;
    } else {
      CHECK_EQ_INT(jint(e, "parent_incomplete"), 0);
      clean++;
    }
  }
  CHECK_EQ_INT(flagged, 1);
  CHECK_EQ_INT(clean, 1);
  json_decref(doc);
  strobe_collector_release(c);
}

/* >>abandoned: a pass whose window closes mid-pass is counted, never nothing. */
static void test_window_closed_mid_pass(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  strobe_window popup = su_window(c, "popup", 0);
  char all[STROBE_SESSION_ID_MAX], inputs[STROBE_SESSION_ID_MAX];
  su_start(c, 0, all);
  strobe_session_desc o = {.kinds = STROBE_KIND_BIT(STROBE_OP_INPUT)};
  REQUIRE_EQ_INT(strobe_session_start(c, &o, inputs), 0);
  strobe_op pass = strobe_op_begin(c, popup, STROBE_OP_PASS, NULL);
  CHECK_EQ_INT(strobe_window_close(c, popup), 0);
  strobe_op_end(pass, 1);
  json_t *doc;
  strobe_report_free(su_end(c, all, &doc));
  CHECK_EQ_INT(jint(doc, "counts.abandoned"), 1);
  CHECK_EQ_INT(jint(doc, "counts.completed"), 0);
  json_decref(doc);
  strobe_report_free(su_end(c, inputs, &doc));
  CHECK_EQ_INT(jint(doc, "counts.abandoned"), 0);
  CHECK_EQ_INT(jint(doc, "counts.kind_excluded"), 1); /* not its kind: counted as such */
  json_decref(doc);
  /* The collector closing abandons too. */
  su_start(c, 0, all);
  pass = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  strobe_collector_close(c);
  strobe_op_end(pass, 1);
  strobe_report_free(su_end(c, all, &doc));
  CHECK_EQ_INT(jint(doc, "counts.abandoned"), 1);
  json_decref(doc);
  strobe_collector_release(c);
}

#define CASES(X)                                                                                       \
  X(ninth_nested_operation) X(twenty_nested_stages) X(summary_bound_counted) X(parent_never_completed) \
  X(window_closed_mid_pass)
HARNESS_MAIN(CASES)
