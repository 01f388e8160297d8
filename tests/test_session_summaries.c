/*
 * test_session_summaries.c — what a report says beyond single samples
 * (docs/sessions.md §Idle passes, §Coverage apart from zero, §Populations,
 * §Counter summaries and memory per sample, §Truncated):
 *   - a pass marked idle is never a sample: counted apart (counts.idle),
 *     not in completed, returned or the frame rate; a crossing idle pass is
 *     still a boundary exclusion;
 *   - a stage or counter declared unavailable is null with available false
 *     in its sample, never 0 or absent, and coverage counts it apart from
 *     the samples that measured it;
 *   - percentiles per kind x population, each with its n, the label copied;
 *   - counter mean and max over the samples that carry the counter, and a
 *     gauge sampled during an operation shows in that sample only;
 *   - the top-level truncated says whether a bound cut the report and which.
 *
 * STROBE_TEST_NEEDS: jansson reports
 */
#include <string.h>

#include "support/session_util.h"

/* The k-th completed sample in order of completion (samples are newest first), or NULL. */
static json_t *nth_completed(json_t *doc, size_t k) {
  size_t n = jlen(doc, "samples");
  return k < n ? json_array_get(jreq(doc, "samples"), n - 1 - k) : NULL;
}

/* The entry named `name` in a sample's stages or counters array, or NULL. */
static json_t *entry(json_t *sample, const char *array, const char *name) {
  size_t i;
  json_t *e;
  json_array_foreach(jreq(sample, array), i, e) if (!strcmp(jstr(e, "name"), name)) return e;
  return NULL;
}

static void test_idle_passes(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  CHECK_EQ_INT(strobe_op_mark_idle(), STROBE_ESTATE); /* nothing to mark */
  strobe_op crossing = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  CHECK_EQ_INT(strobe_op_mark_idle(), 0);
  strobe_op_end(crossing, 1); /* idle, but it crossed the start: a boundary exclusion, not idle */

  for (int i = 0; i < 6; i++) {
    strobe_op pass = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
    {
      STROBE_STAGE("damage_check", NULL);
    }
    if (i % 2) CHECK_EQ_INT(strobe_op_mark_idle(), 0); /* nothing was damaged */
    strobe_op_end(pass, 1);
  }
  strobe_op input = strobe_op_begin(c, w, STROBE_OP_INPUT, NULL);
  CHECK_EQ_INT(strobe_op_mark_idle(), 0);
  strobe_op_end(input, 1);

  json_t *doc;
  strobe_report *r = su_end(c, id, &doc);
  CHECK_EQ_INT(jint(doc, "counts.idle"), 4);
  CHECK_EQ_INT(strobe_report_query_counts(r).idle, 4);
  CHECK_EQ_INT(jint(doc, "counts.completed"), 3);
  CHECK_EQ_INT(jint(doc, "counts.returned"), 3);
  CHECK_EQ_INT(jint(doc, "counts.completed_by_kind.input"), 0);
  CHECK_EQ_INT(jint(doc, "counts.boundary_excluded"), 1);
  CHECK_EQ_INT(jint(doc, "frame_rate.passes"), 3);
  json_t *sm = jreq(doc, "stage_summary");
  REQUIRE_EQ_INT(json_array_size(sm), 1);
  CHECK_EQ_INT(jint(json_array_get(sm, 0), "n"), 3); /* the idle passes' stages are not in it either */
  json_decref(doc);
  strobe_report_free(r);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

static void test_coverage_null_not_zero(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  CHECK_EQ_INT(strobe_op_mark_unavailable(STROBE_COVERAGE_STAGE, "gpu_timestamps"), STROBE_ESTATE);

  /* A custom renderer with no profile: no GPU timings, no upload counter. */
  strobe_op a = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  {
    STROBE_STAGE("layout", NULL);
  }
  CHECK_EQ_INT(strobe_op_mark_unavailable(STROBE_COVERAGE_STAGE, "gpu_timestamps"), 0);
  CHECK_EQ_INT(strobe_op_mark_unavailable(STROBE_COVERAGE_STAGE, "gpu_timestamps"), 0); /* one declaration */
  CHECK_EQ_INT(strobe_op_mark_unavailable(STROBE_COVERAGE_COUNTER, "uploaded_bytes"), 0);
  CHECK_EQ_INT(strobe_op_mark_unavailable(STROBE_COVERAGE_STAGE, "user typed: hunter2"), STROBE_ELABEL);
  CHECK_EQ_INT(strobe_op_mark_unavailable((strobe_coverage)7, "gpu_timestamps"), STROBE_EINVAL);
  strobe_op_end(a, 1);

  /* The built-in backend measures both; a declaration it contradicts loses to the measurement. */
  strobe_op b = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  {
    STROBE_STAGE("gpu_timestamps", NULL);
    fx_sleep_ms(1);
  }
  strobe_op_counter_add("uploaded_bytes", 0); /* a real zero: measured, nothing uploaded */
  CHECK_EQ_INT(strobe_op_mark_unavailable(STROBE_COVERAGE_STAGE, "gpu_timestamps"), 0);
  strobe_op_end(b, 1);

  /* Past the bound: refused and counted on the sample, which is then truncated. */
  strobe_op d = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  static const char *const names[] = {"u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8"};
  for (int i = 0; i < STROBE_MAX_UNAVAILABLE; i++)
    CHECK_EQ_INT(strobe_op_mark_unavailable(STROBE_COVERAGE_STAGE, names[i]), 0);
  CHECK_EQ_INT(strobe_op_mark_unavailable(STROBE_COVERAGE_STAGE, names[8]), STROBE_ELIMIT);
  strobe_op_end(d, 1);

  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  json_t *sa = nth_completed(doc, 0), *sb = nth_completed(doc, 1), *sd = nth_completed(doc, 2);
  REQUIRE(sa && sb && sd);
  json_t *gpu = entry(sa, "stages", "gpu_timestamps");
  REQUIRE(gpu != NULL);
  CHECK(!jbool(gpu, "available"));
  CHECK(jnull(gpu, "total_ms") && jnull(gpu, "count") && jnull(gpu, "max_ms"));
  CHECK(jbool(entry(sa, "stages", "layout"), "available"));
  json_t *up = entry(sa, "counters", "uploaded_bytes");
  REQUIRE(up != NULL);
  CHECK(!jbool(up, "available") && jnull(up, "value"));
  CHECK_EQ_INT(jlen(sa, "stages"), 2); /* the refused label is nowhere */
  gpu = entry(sb, "stages", "gpu_timestamps");
  REQUIRE(gpu != NULL);
  CHECK(jbool(gpu, "available") && jnum(gpu, "total_ms") >= 1.0);
  up = entry(sb, "counters", "uploaded_bytes");
  CHECK(jbool(up, "available") && jnum(up, "value") == 0.0);
  CHECK_EQ_INT(jint(sd, "stages_dropped"), 1);
  CHECK_EQ_INT(jlen(sd, "stages"), STROBE_MAX_UNAVAILABLE);

  size_t i;
  json_t *cov;
  int seen = 0;
  json_array_foreach(jreq(doc, "coverage"), i, cov) {
    if (!strcmp(jstr(cov, "name"), "gpu_timestamps")) {
      CHECK(!strcmp(jstr(cov, "what"), "stage"));
      CHECK_EQ_INT(jint(cov, "unavailable_n"), 1);
      CHECK_EQ_INT(jint(cov, "available_n"), 1);
      seen |= 1;
    } else if (!strcmp(jstr(cov, "name"), "uploaded_bytes")) {
      CHECK(!strcmp(jstr(cov, "what"), "counter"));
      CHECK_EQ_INT(jint(cov, "unavailable_n"), 1);
      CHECK_EQ_INT(jint(cov, "available_n"), 1);
      seen |= 2;
    }
  }
  CHECK_EQ_INT(seen, 3);
  CHECK_EQ_INT(jlen(doc, "coverage"), 2 + STROBE_MAX_UNAVAILABLE);
  CHECK(jbool(doc, "truncated"));
  json_decref(doc);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

static void pass_in(strobe_collector *c, strobe_window w, const char *population, long ms) {
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  if (population) CHECK_EQ_INT(strobe_op_set_population(population), 0);
  if (ms) fx_sleep_ms(ms);
  strobe_op_end(op, 1);
}

static void test_populations(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  CHECK_EQ_INT(strobe_op_set_population("push"), STROBE_ESTATE);
  /* Steady re-renders are cheap; a navigation rebuilds the whole tree. (No
   * sleep in the cheap ones: on a loaded machine a 1 ms sleep can outlast
   * the 12 ms ones.) */
  for (int i = 0; i < 4; i++) pass_in(c, w, "none", 0);
  char label[16];
  strcpy(label, "push");
  for (int i = 0; i < 2; i++) pass_in(c, w, label, 12);
  strcpy(label, "XXXX"); /* the report copied the label: it never points here */
  pass_in(c, w, NULL, 1);
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  CHECK_EQ_INT(strobe_op_set_population("pop"), 0);
  CHECK_EQ_INT(strobe_op_set_population("/home/alice"), STROBE_ELABEL); /* refused: "pop" stays */
  CHECK_EQ_INT(strobe_op_set_population(""), STROBE_ELABEL);
  CHECK_EQ_INT(strobe_op_set_population(NULL), STROBE_ELABEL);
  strobe_op_end(op, 1);
  su_op(c, w, STROBE_OP_INPUT, 1); /* a kind without populations has no entry */

  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  size_t i;
  json_t *e;
  double none_p50 = -1, push_p50 = -1;
  int entries = 0;
  json_array_foreach(jreq(doc, "population_summary"), i, e) {
    CHECK(!strcmp(jstr(e, "kind"), "pass"));
    entries++;
    if (jnull(e, "population")) {
      CHECK_EQ_INT(jint(e, "n"), 1);
      continue;
    }
    const char *p = jstr(e, "population");
    if (!strcmp(p, "none")) {
      CHECK_EQ_INT(jint(e, "n"), 4);
      none_p50 = jnum(e, "p50_ms");
    } else if (!strcmp(p, "push")) {
      CHECK_EQ_INT(jint(e, "n"), 2);
      push_p50 = jnum(e, "p50_ms");
    } else {
      CHECKF(!strcmp(p, "pop"), "unexpected population %s", p);
      CHECK_EQ_INT(jint(e, "n"), 1);
    }
  }
  CHECK_EQ_INT(entries, 4);
  CHECK(push_p50 >= 12.0 && none_p50 >= 0 && none_p50 < push_p50);
  json_t *popped = nth_completed(doc, 7);
  REQUIRE(popped != NULL);
  CHECK(!strcmp(jstr(popped, "population"), "pop"));
  CHECK(!strcmp(jstr(nth_completed(doc, 4), "population"), "push"));
  json_decref(doc);

  /* Nobody labels: no entry at all. */
  su_start(c, 0, id);
  pass_in(c, w, NULL, 0);
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jlen(doc, "population_summary"), 0);
  json_decref(doc);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

static void test_counter_summary_and_memory(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  static const double nodes[] = {10, 20, 60};
  strobe_op ops[4];
  for (int i = 0; i < 4; i++) {
    ops[i] = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
    if (i < 3) strobe_op_counter_add("nodes", nodes[i]);
    if (i < 2) strobe_op_counter_add("scroll_rows", -3.0 - i); /* negative values: the max is -3, never 0 */
    strobe_op_counter_add("taps", 1);
    /* The slow frame is where memory jumps: the gauge is sampled inside it. */
    if (i == 2) strobe_collector_gauge_set(c, "image_cache_bytes", 5e6);
    fx_sleep_ms(1);
    strobe_op_end(ops[i], 1);
  }
  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  size_t i;
  json_t *e;
  int seen = 0;
  json_array_foreach(jreq(doc, "counter_summary"), i, e) {
    if (!strcmp(jstr(e, "name"), "nodes")) {
      CHECK_EQ_INT(jint(e, "n"), 3);
      CHECK_NEAR(jnum(e, "mean"), 30.0, 1e-9);
      CHECK_NEAR(jnum(e, "max"), 60.0, 1e-9);
      seen |= 1;
    } else if (!strcmp(jstr(e, "name"), "scroll_rows")) {
      CHECK_EQ_INT(jint(e, "n"), 2);
      CHECK_NEAR(jnum(e, "mean"), -3.5, 1e-9);
      CHECK_NEAR(jnum(e, "max"), -3.0, 1e-9);
      seen |= 4;
    } else if (!strcmp(jstr(e, "name"), "taps")) {
      CHECK_EQ_INT(jint(e, "n"), 4);
      CHECK_NEAR(jnum(e, "mean"), 1.0, 1e-9);
      seen |= 2;
    }
  }
  CHECK_EQ_INT(seen, 7);
  for (int k = 0; k < 4; k++) {
    json_t *s = nth_completed(doc, (size_t)k);
    REQUIRE(s != NULL);
    if (k != 2) {
      CHECK_EQ_INT(jlen(s, "memory"), 0);
      continue;
    }
    REQUIRE_EQ_INT(jlen(s, "memory"), 1);
    json_t *g = json_array_get(jreq(s, "memory"), 0);
    CHECK(!strcmp(jstr(g, "name"), "image_cache_bytes"));
    CHECK_NEAR(jnum(g, "value"), 5e6, 1e-6);
  }
  json_decref(doc);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

/* Counters and gauges by kind (docs/sessions.md §Counters and gauges by
 * kind): each (family, kind) pair is its own counter, summarised apart, and
 * a counter of the family's name without a kind stays apart from its kinds;
 * a gauge by kind is in the sample it was sampled in, with its kind. */
static void test_counters_and_gauges_by_kind(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  static const double quads[] = {5, 9, 1};
  for (int i = 0; i < 3; i++) {
    strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
    strobe_op_counter_add_kind("draw_calls", "quads", quads[i]);
    strobe_op_counter_add_kind("draw_calls", "quads", 1); /* the same pair: summed */
    strobe_op_counter_add_kind("draw_calls", "text", 2);
    strobe_op_counter_add("draw_calls", 100);             /* no kind: a counter of its own */
    if (i == 1) strobe_collector_gauge_set_kind(c, "gpu_memory", "textures", 4096, STROBE_UNIT_BYTES);
    fx_sleep_ms(1);
    strobe_op_end(op, 1);
  }
  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  size_t i;
  json_t *e;
  int seen = 0;
  json_array_foreach(jreq(doc, "counter_summary"), i, e) {
    REQUIRE(!strcmp(jstr(e, "name"), "draw_calls"));
    json_t *kind = json_object_get(e, "kind");
    REQUIRE(kind != NULL);
    CHECK_EQ_INT(jint(e, "n"), 3);
    if (json_is_null(kind)) {
      CHECK_NEAR(jnum(e, "max"), 100.0, 1e-9);
      seen |= 1;
    } else if (!strcmp(json_string_value(kind), "quads")) {
      CHECK_NEAR(jnum(e, "mean"), (6.0 + 10.0 + 2.0) / 3.0, 1e-9);
      CHECK_NEAR(jnum(e, "max"), 10.0, 1e-9);
      seen |= 2;
    } else if (!strcmp(json_string_value(kind), "text")) {
      CHECK_NEAR(jnum(e, "max"), 2.0, 1e-9);
      seen |= 4;
    }
  }
  CHECK_EQ_INT(seen, 7);
  CHECK_EQ_INT(i, 3);
  json_t *s = nth_completed(doc, 1);
  REQUIRE(s != NULL);
  REQUIRE_EQ_INT(jlen(s, "memory"), 1);
  json_t *g = json_array_get(jreq(s, "memory"), 0);
  CHECK(!strcmp(jstr(g, "name"), "gpu_memory") && !strcmp(jstr(g, "kind"), "textures"));
  CHECK(!strcmp(jstr(g, "unit"), "bytes"));
  CHECK_NEAR(jnum(g, "value"), 4096, 1e-9);
  json_t *counters = jreq(s, "counters");
  int kinds = 0;
  json_array_foreach(counters, i, e) kinds += json_is_string(json_object_get(e, "kind"));
  CHECK_EQ_INT(kinds, 2);
  json_decref(doc);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

static void test_truncated(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char small[STROBE_SESSION_ID_MAX], roomy[STROBE_SESSION_ID_MAX];
  su_start(c, 2, small);
  su_start(c, 0, roomy);
  for (int i = 0; i < 3; i++) su_op(c, w, STROBE_OP_PASS, 1);
  json_t *doc;
  strobe_report_free(su_end(c, small, &doc));
  CHECK(jbool(doc, "truncated"));
  REQUIRE_EQ_INT(jlen(doc, "truncated_by"), 1);
  CHECK(!strcmp(json_string_value(json_array_get(jreq(doc, "truncated_by"), 0)), "counts.dropped"));
  json_decref(doc);
  strobe_report_free(su_end(c, roomy, &doc));
  CHECK(!jbool(doc, "truncated"));
  CHECK_EQ_INT(jlen(doc, "truncated_by"), 0);
  json_decref(doc);

  /* A per-operation table cut: 17 distinct counters. */
  su_start(c, 0, roomy);
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  static const char *const names[] = {"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8",
                                      "c9", "c10", "c11", "c12", "c13", "c14", "c15", "c16"};
  for (int i = 0; i < 17; i++) strobe_op_counter_add(names[i], 1);
  strobe_op_end(op, 1);
  strobe_report_free(su_end(c, roomy, &doc));
  CHECK(jbool(doc, "truncated"));
  REQUIRE_EQ_INT(jlen(doc, "truncated_by"), 1);
  CHECK(!strcmp(json_string_value(json_array_get(jreq(doc, "truncated_by"), 0)), "samples.counters_dropped"));
  json_decref(doc);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

#define CASES(X) X(idle_passes) X(coverage_null_not_zero) X(populations) X(counter_summary_and_memory) X(counters_and_gauges_by_kind) X(truncated)
HARNESS_MAIN(CASES)
