/*
 * report_check.h — what every session test does with every report it gets:
 * serialize it (strobe_report_json), save the JSON under
 * STROBE_REPORT_OUT_DIR for the `report_schema` CTest test (which validates
 * each file against docs/report-schema.json), parse it with jansson, and check
 * the rules that hold for any report of JSON version 1:
 *   - serializing the same report twice gives the same bytes (an immutable
 *     snapshot);
 *   - counts agree with the arrays and the accessors (returned = completed -
 *     dropped, per-kind counts sum to completed, status follows from
 *     returned and unfinished work);
 *   - samples are newest first, lie inside the session's bounds (start at or
 *     after its start, end at or before its end or read), and a nested stage
 *     never exceeds the stage it ran in (its entries under every parent);
 *     runs counted outside a declared parent never exceed the stage's count;
 *   - every stage_summary and kind_summary entry carries its n, and n is the
 *     number of samples it was computed over (docs/sessions.md §The frame model:
 *     stages do not share a population); a stage summary is per stage and
 *     run-time parent; nested stages carry nested_in and say "do not sum";
 *   - frame_rate counts committed passes only, and passes handed off to
 *     another process (whose outcome is there) (input never counts as a
 *     rendered frame), per window, never summed across windows (the top
 *     level is the only window's, or null); the first-to-last rate covers
 *     every pass the session counted (the returned ones when nothing was
 *     dropped, at least those otherwise), the steady rate (median interval
 *     between pass starts) agrees with the returned samples;
 *   - each unfinished entry's baseline is its kind's kind_summary entry, and
 *     its state (in_flight / stalled / no_baseline) follows the documented
 *     factor (STROBE_STALL_FACTOR x that p95); stalled entries are counted;
 *   - sample ages are the age of the newest returned completion;
 *   - a stage or counter declared unavailable is null with available false,
 *     never a number, and coverage counts those samples; counter_summary's
 *     n, mean and max and population_summary's n agree with the samples
 *     (a kind's populations add up to its kind_summary n);
 *   - gauges attached to a sample were sampled inside it;
 *   - truncated is true exactly when some bound's count is non-zero, and
 *     truncated_by names exactly those bounds;
 *   - after a reset, samples start at or after reset_ms;
 *   - content-free: every string is a window id, a static label, a session
 *     id, an enum value or the library's own fixed text.
 *
 * A test that includes this declares, on a line of its own,
 *   STROBE_TEST_NEEDS: jansson reports
 * so tests/CMakeLists.txt links jansson, defines STROBE_REPORT_OUT_DIR and
 * STROBE_TEST_NAME, and requires the file count in report_schema.
 */
#ifndef STROBE_TESTS_REPORT_CHECK_H
#define STROBE_TESTS_REPORT_CHECK_H

#include <errno.h>
#include <jansson.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "strobe/frames.h"
#include "strobe/session.h"

#ifndef STROBE_REPORT_OUT_DIR
#error "STROBE_REPORT_OUT_DIR is defined by tests/CMakeLists.txt for tests that declare STROBE_TEST_NEEDS: reports"
#endif
#ifndef STROBE_TEST_NAME
#define STROBE_TEST_NAME "test"
#endif

/* Milliseconds are printed with 3 decimals; differences of two rounded values are off by up to 0.001. */
#define RC_MS_EPS 0.0021

static int rc_reports_written;

/* >>json access: "a.b.c" paths into objects. */
static inline json_t *jpath(json_t *doc, const char *path) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", path);
  json_t *cur = doc;
  for (char *save = NULL, *key = strtok_r(buf, ".", &save); key && cur; key = strtok_r(NULL, ".", &save))
    cur = json_object_get(cur, key);
  return cur;
}

static inline json_t *jreq(json_t *doc, const char *path) {
  json_t *v = jpath(doc, path);
  REQUIREF(v != NULL, "report_check: missing %s", path);
  return v;
}

static inline long long jint(json_t *doc, const char *path) {
  json_t *v = jreq(doc, path);
  REQUIREF(json_is_integer(v), "report_check: %s is not an integer", path);
  return (long long)json_integer_value(v);
}

static inline double jnum(json_t *doc, const char *path) {
  json_t *v = jreq(doc, path);
  REQUIREF(json_is_number(v), "report_check: %s is not a number", path);
  return json_number_value(v);
}

static inline const char *jstr(json_t *doc, const char *path) {
  json_t *v = jreq(doc, path);
  REQUIREF(json_is_string(v), "report_check: %s is not a string", path);
  return json_string_value(v);
}

static inline int jbool(json_t *doc, const char *path) {
  json_t *v = jreq(doc, path);
  REQUIREF(json_is_boolean(v), "report_check: %s is not a boolean", path);
  return json_is_true(v);
}

static inline int jnull(json_t *doc, const char *path) { return json_is_null(jreq(doc, path)); }

static inline size_t jlen(json_t *doc, const char *path) {
  json_t *v = jreq(doc, path);
  REQUIREF(json_is_array(v), "report_check: %s is not an array", path);
  return json_array_size(v);
}

static inline int rc_matches(const char *pattern, const char *s) {
  regex_t re;
  REQUIRE(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) == 0);
  int ok = regexec(&re, s, 0, NULL, 0) == 0;
  regfree(&re);
  return ok;
}

/* >>content-free: every string is at a key whose values Strobe controls. */
/* 1 when s names a unit of the STROBE_UNITS table (strobe.h). */
static inline int rc_unit_name(const char *s) {
  for (uint32_t u = 0; u < STROBE_UNIT_LIMIT; u++)
    if (!strcmp(strobe_unit_name(u), s)) return 1;
  return 0;
}

/* 1 when s names a state of the frame model's STROBE_FRAME_STATES table (frames.h). */
static inline int rc_frame_state_name(const char *s) {
  for (uint32_t i = 0; i < STROBE_FRAME_STATE_LIMIT; i++)
    if (!strcmp(strobe_frames_state_name(i), s)) return 1;
  return 0;
}

static inline void rc_content_free(json_t *v, const char *key, const char *parent) {
  if (json_is_object(v)) {
    const char *k;
    json_t *child;
    json_object_foreach(v, k, child) rc_content_free(child, k, key);
    return;
  }
  if (json_is_array(v)) {
    size_t i;
    json_t *child;
    json_array_foreach(v, i, child) rc_content_free(child, key, parent);
    return;
  }
  if (!json_is_string(v)) return;
  const char *s = json_string_value(v);
  const char *label = "^[A-Za-z0-9_]{1,64}$";
  int ok;
  if (!key)
    ok = 0;
  else if (!strcmp(key, "window"))
    ok = rc_matches("^[A-Za-z0-9_./:-]{1,256}$", s); /* the window-id rule: main, w1, w1/popup */
  else if (!strcmp(key, "label") || !strcmp(key, "name") || !strcmp(key, "phase") || !strcmp(key, "nested_in") ||
           !strcmp(key, "declared_parent") || !strcmp(key, "population") || !strcmp(key, "process") ||
           !strcmp(key, "handed_off_to"))
    ok = rc_matches(label, s);
  else if (!strcmp(key, "collector"))
    ok = rc_matches("^[0-9a-f]{16}$", s); /* a collector's random id (docs/sessions.md §Across processes) */
  else if (!strcmp(key, "id"))
    ok = rc_matches("^profile_[1-9][0-9]*$", s);
  else if (!strcmp(key, "kind") && parent &&
           (!strcmp(parent, "counters") || !strcmp(parent, "memory") || !strcmp(parent, "gauges") ||
            !strcmp(parent, "counter_summary")))
    ok = rc_matches(label, s); /* a counter's or gauge's kind in its family: a static label */
  else if (!strcmp(key, "kind") || !strcmp(key, "kinds"))
    ok = rc_matches("^(pass|rebuild|input|request)$", s);
  else if (!strcmp(key, "status"))
    ok = rc_matches("^(complete|empty|unfinished|partial)$", s);
  else if (!strcmp(key, "state"))
    ok = rc_matches("^(in_flight|stalled|no_baseline)$", s);
  else if (!strcmp(key, "frame_state"))
    ok = rc_frame_state_name(s);
  else if (!strcmp(key, "overflow"))
    ok = rc_matches("^(drop|grow|wait)$", s); /* strobe_overflow_name */
  else if (!strcmp(key, "lane"))
    ok = rc_matches("^(ui|worker)$", s);
  else if (!strcmp(key, "what"))
    ok = rc_matches("^(stage|counter)$", s);
  else if (!strcmp(key, "truncated_by"))
    ok = rc_matches("^(counts|samples|application_scopes|memory|frame_rate)\\.[a-z_]+$", s);
  else if (!strcmp(key, "features"))
    ok = rc_matches("^(profiling|zstd)$", s);
  else if (!strcmp(key, "unit"))
    ok = rc_unit_name(s);
  else if (parent && !strcmp(parent, "run"))
    ok = rc_matches("^[A-Za-z0-9_]{1,64}$", key) && rc_matches("^[A-Za-z0-9_./:-]{1,256}$", s); /* free text stays beside */
  else if (parent && (!strcmp(parent, "units") || !strcmp(parent, "build")))
    ok = 1; /* the library's fixed text */
  else
    ok = !strcmp(key, "status_note") || !strcmp(key, "note") || !strcmp(key, "definition") ||
         !strcmp(key, "null_reason") || !strcmp(key, "units") || !strcmp(key, "unfinished_state");
  CHECKF(ok, "report_check: string \"%s\" at key \"%s\" is not content-free report text", s,
         key ? key : "(none)");
}

/* >>samples */
static inline void rc_check_samples(json_t *doc, double at_ms) {
  json_t *samples = jreq(doc, "samples");
  double start_ms = jnum(doc, "session.start_ms");
  if (!jnull(doc, "session.reset_ms")) start_ms = jnum(doc, "session.reset_ms"); /* it admits from its last reset */
  double prev_end = 1e300, newest = -1;
  size_t i;
  json_t *s;
  json_array_foreach(samples, i, s) {
    const char *kind = jstr(s, "kind");
    double st = jnum(s, "start_ms"), en = jnum(s, "end_ms");
    /* Whole operations inside the session's bounds (rounding is monotonic, so exact). */
    CHECK(st >= start_ms);
    CHECK(en <= at_ms);
    CHECK(st <= en);
    CHECK_NEAR(jnum(s, "total_ms"), en - st, RC_MS_EPS);
    CHECK(en <= prev_end); /* newest first */
    prev_end = en;
    if (en > newest) newest = en;
    if (!strcmp(kind, "pass"))
      CHECK(jint(s, "frame_id") >= 0); /* the application's own frame ids may start at 0 */
    else
      CHECK(jnull(s, "frame_id"));
    jbool(s, "committed");
    jbool(s, "handed_off");
    jbool(s, "ended_implicitly");
    /* Across processes: handed off here ends uncommitted; resumed from elsewhere,
     * the hand-off and resume lie inside the whole operation and the gap is
     * their difference; each stage ran in this process or in the origin. */
    json_t *from = jreq(s, "from");
    if (!jnull(s, "handed_off_to")) {
      CHECK(!jbool(s, "committed"));
      CHECK(json_is_null(from));
    }
    if (!json_is_null(from)) {
      double off = jnum(from, "handed_off_ms"), on = jnum(from, "resumed_ms");
      CHECK(st <= off + RC_MS_EPS);
      CHECK(off <= on + RC_MS_EPS);
      CHECK(on <= en + RC_MS_EPS);
      CHECK_NEAR(jnum(from, "gap_ms"), on - off, 2 * RC_MS_EPS);
      CHECK(jbool(s, "handed_off"));
    }
    {
      size_t k;
      json_t *st_k;
      json_array_foreach(jreq(s, "stages"), k, st_k) {
        const char *proc = jstr(st_k, "process");
        CHECKF(!strcmp(proc, jstr(doc, "process.name")) || (!json_is_null(from) && !strcmp(proc, jstr(from, "process"))),
               "report_check: stage process %s is neither this process nor the origin", proc);
      }
    }
    CHECK(jint(s, "stages_dropped") >= 0 && jint(s, "counters_dropped") >= 0);
    json_t *stages = jreq(s, "stages");
    size_t k;
    json_t *st_k;
    json_array_foreach(stages, k, st_k) {
      if (!jbool(st_k, "available")) { /* declared unavailable: no measurement, which is not zero */
        CHECK(jnull(st_k, "count") && jnull(st_k, "total_ms") && jnull(st_k, "min_ms") && jnull(st_k, "max_ms"));
        CHECK(jnull(st_k, "nested_in") && jnull(st_k, "declared_parent_not_open"));
        continue;
      }
      CHECK(jint(st_k, "count") >= 1);
      CHECK(jnum(st_k, "min_ms") <= jnum(st_k, "max_ms"));
      CHECK(jnum(st_k, "max_ms") <= jnum(st_k, "total_ms"));
      CHECK(jnum(st_k, "total_ms") <= jnum(s, "total_ms") + RC_MS_EPS);
      /* A declared parent is checked, never trusted: runs outside it are counted. */
      CHECK(jint(st_k, "declared_parent_not_open") <= jint(st_k, "count"));
      if (jnull(st_k, "declared_parent")) CHECK_EQ_INT(jint(st_k, "declared_parent_not_open"), 0);
      json_t *parent = jreq(st_k, "nested_in");
      CHECK_EQ_INT(json_is_null(parent), jnull(st_k, "parent_incomplete"));
      if (json_is_null(parent)) continue;
      /* A nested stage ran inside its parent (the stage open at run time),
       * whose entries under all its own parents hold its time: never more. */
      size_t m;
      json_t *other;
      double parent_total = 0;
      int parent_found = 0;
      json_array_foreach(stages, m, other) {
        if (strcmp(jstr(other, "name"), json_string_value(parent)) || !jbool(other, "available")) continue;
        parent_total += jnum(other, "total_ms");
        parent_found = 1;
      }
      /* Unless flagged parent_incomplete (a parent run still open at the
       * operation's end, or cut by the stage bound), every run was inside a
       * run of its parent that the sample holds: the parent is there and
       * holds at least its time. */
      if (!jbool(st_k, "parent_incomplete")) {
        CHECKF(parent_found, "report_check: stage %s is nested in %s, which the sample does not hold, and is not "
                             "flagged parent_incomplete", jstr(st_k, "name"), json_string_value(parent));
        CHECK(jnum(st_k, "total_ms") <= parent_total + RC_MS_EPS);
      }
    }
    json_t *counters = jreq(s, "counters");
    json_t *c_k;
    json_array_foreach(counters, k, c_k) {
      if (jbool(c_k, "available"))
        jnum(c_k, "value");
      else
        CHECK(jnull(c_k, "value"));
    }
    json_t *pop = jreq(s, "population");
    CHECK(json_is_null(pop) || json_is_string(pop));
    /* Gauges attached to a sample were sampled while it ran. */
    json_array_foreach(jreq(s, "memory"), k, c_k) {
      CHECK(jnum(c_k, "sampled_ms") >= st - RC_MS_EPS);
      CHECK(jnum(c_k, "sampled_ms") <= en + RC_MS_EPS);
      jnum(c_k, "value");
    }
  }
  if (json_array_size(samples)) {
    CHECK(jnum(doc, "sample_age_ms") >= 0);
    CHECK_NEAR(jnum(doc, "sample_age_ms"), at_ms - newest, RC_MS_EPS);
  } else {
    CHECK(jnull(doc, "sample_age_ms"));
  }
}

/* The kind_summary entry of a kind, or NULL. */
static inline json_t *rc_kind_entry(json_t *doc, const char *kind) {
  size_t i;
  json_t *e;
  json_array_foreach(jreq(doc, "kind_summary"), i, e) if (!strcmp(jstr(e, "kind"), kind)) return e;
  return NULL;
}

static inline void rc_check_unfinished(json_t *doc) {
  size_t i;
  json_t *u;
  long long stalled = 0;
  json_array_foreach(jreq(doc, "unfinished"), i, u) {
    if (!strcmp(jstr(u, "kind"), "pass"))
      CHECK(jint(u, "prospective_frame_id") >= 0);
    else
      CHECK(jnull(u, "prospective_frame_id"));
    double elapsed = jnum(u, "elapsed_ms");
    CHECK(elapsed >= 0);
    if (jnull(u, "phase")) {
      CHECK(jnull(u, "phase_elapsed_ms"));
    } else {
      CHECK(jnum(u, "phase_elapsed_ms") >= 0);
      CHECK(jnum(u, "phase_elapsed_ms") <= elapsed + RC_MS_EPS);
    }
    jbool(u, "started_before_session");
    jbool(u, "handed_off");
    /* In flight or stalled: judged against the completed samples of its kind
     * in this report (their kind_summary entry), by the documented factor. */
    const char *state = jstr(u, "state");
    stalled += !strcmp(state, "stalled");
    json_t *base = rc_kind_entry(doc, jstr(u, "kind"));
    if (!base) {
      CHECK_EQ_INT(jint(u, "baseline_n"), 0);
      CHECK(jnull(u, "baseline_p95_ms") && jnull(u, "elapsed_vs_p95"));
      CHECK(!strcmp(state, "no_baseline"));
      continue;
    }
    double p95 = jnum(base, "p95_ms");
    CHECK_EQ_INT(jint(u, "baseline_n"), jint(base, "n"));
    CHECK_NEAR(jnum(u, "baseline_p95_ms"), p95, 1e-9);
    /* The ratio is of unrounded times: compare only where microsecond rounding cannot dominate it. */
    if (p95 >= 0.05 && elapsed >= 0.05)
      CHECK_NEAR(jnum(u, "elapsed_vs_p95"), elapsed / p95,
                 0.002 + (elapsed / p95) * (0.0011 / p95 + 0.0011 / elapsed));
    /* Rounded to microseconds: only a run clear of the threshold decides it here. */
    if (elapsed > STROBE_STALL_FACTOR * p95 + RC_MS_EPS * 3) CHECK(!strcmp(state, "stalled"));
    if (elapsed < STROBE_STALL_FACTOR * p95 - RC_MS_EPS * 3) CHECK(!strcmp(state, "in_flight"));
  }
  CHECK_EQ_INT(jint(doc, "counts.unfinished_stalled"), stalled);
}

static int rc_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* A frame_rate object (or one of its by_window entries) of one window:
 * passes and span over every pass the session counted (exactly the returned
 * ones when `all_returned`, at least those otherwise); the steady rate
 * recomputed from the returned samples of `window`. */
static inline void rc_check_rates(json_t *fr, json_t *samples, const char *window, int all_returned) {
  double starts[STROBE_MAX_SAMPLES];
  size_t n = 0, k;
  json_t *s;
  json_array_foreach(samples, k, s) {
    if (strcmp(jstr(s, "kind"), "pass") || (!jbool(s, "committed") && jnull(s, "handed_off_to"))) continue;
    if (strcmp(jstr(s, "window"), window)) continue;
    starts[n++] = jnum(s, "start_ms");
  }
  if (all_returned)
    CHECK_EQ_INT(jint(fr, "passes"), (long long)n);
  else
    CHECK(jint(fr, "passes") >= (long long)n);
  if (jnull(fr, "passes_per_second")) {
    CHECK(jnull(fr, "first_to_last_span_ms") && jnull(fr, "median_interval_ms"));
    CHECK(jnull(fr, "steady_passes_per_second"));
    CHECK_EQ_INT(jint(fr, "intervals_n"), 0);
    jstr(fr, "null_reason");
    return;
  }
  CHECK(jint(fr, "passes") >= 2);
  CHECK(jnull(fr, "null_reason"));
  qsort(starts, n, sizeof *starts, rc_cmp_double);
  if (all_returned) CHECK_NEAR(jnum(fr, "first_to_last_span_ms"), starts[n - 1] - starts[0], RC_MS_EPS);
  else if (n >= 2) CHECK(jnum(fr, "first_to_last_span_ms") >= starts[n - 1] - starts[0] - RC_MS_EPS);
  CHECK_NEAR(jnum(fr, "passes_per_second"),
             (double)(jint(fr, "passes") - 1) / (jnum(fr, "first_to_last_span_ms") / 1000.0),
             0.0006 + jnum(fr, "passes_per_second") * RC_MS_EPS / jnum(fr, "first_to_last_span_ms"));
  CHECK_EQ_INT(jint(fr, "intervals_n"), n ? (long long)n - 1 : 0);
  if (n < 2) {
    CHECK(jnull(fr, "median_interval_ms") && jnull(fr, "steady_passes_per_second"));
    return;
  }
  /* The median interval between consecutive starts (nearest rank), within rounding. */
  double intervals[STROBE_MAX_SAMPLES];
  for (size_t i = 1; i < n; i++) intervals[i - 1] = starts[i] - starts[i - 1];
  qsort(intervals, n - 1, sizeof *intervals, rc_cmp_double);
  size_t rank = (50 * (n - 1) + 99) / 100;
  double median = intervals[rank ? rank - 1 : 0];
  CHECK_NEAR(jnum(fr, "median_interval_ms"), median, 2 * RC_MS_EPS);
  /* steady = 1000 / median, each printed rounded: the product is off by at most
   * 1000 x (the median's rounding) / median + (the rate's rounding, 0.0005) x median. */
  if (!jnull(fr, "steady_passes_per_second"))
    CHECK_NEAR(jnum(fr, "steady_passes_per_second") * jnum(fr, "median_interval_ms"), 1000.0,
               1000.0 * 0.0011 / jnum(fr, "median_interval_ms") + 0.0006 * jnum(fr, "median_interval_ms") + 0.01);
}

/* The top level of frame_rate: the only window's figures, or none when
 * several windows had passes (rates are never summed across windows). */
static inline void rc_check_top_rate(json_t *fr) {
  json_t *by = jreq(fr, "by_window");
  CHECK_EQ_INT(jint(fr, "windows"), (long long)json_array_size(by));
  const char *keys[] = {"first_to_last_span_ms", "passes_per_second", "intervals_n", "median_interval_ms",
                        "steady_passes_per_second", "null_reason"};
  if (json_array_size(by) == 1) {
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
      CHECK(json_equal(jreq(fr, keys[k]), jreq(json_array_get(by, 0), keys[k])));
    return;
  }
  CHECK(jnull(fr, "passes_per_second") && jnull(fr, "steady_passes_per_second") && jnull(fr, "median_interval_ms"));
  jstr(fr, "null_reason");
}

/* >>summaries: n is the population each figure was computed over. */
static inline void rc_check_summaries(json_t *doc) {
  json_t *samples = jreq(doc, "samples");
  size_t i, k;
  json_t *e, *s, *st;
  json_array_foreach(jreq(doc, "stage_summary"), i, e) {
    /* One entry per stage and run-time parent: n counts the samples that ran
     * this stage under this parent. */
    const char *name = jstr(e, "name");
    json_t *nested_in = jreq(e, "nested_in");
    long long n = 0, not_open = 0, incomplete = 0;
    json_array_foreach(samples, k, s) {
      size_t m;
      json_array_foreach(jreq(s, "stages"), m, st) {
        if (strcmp(jstr(st, "name"), name) || !jbool(st, "available") || !json_equal(jreq(st, "nested_in"), nested_in))
          continue;
        n++;
        not_open += jint(st, "declared_parent_not_open");
        if (!json_is_null(nested_in)) incomplete += jbool(st, "parent_incomplete");
        CHECK(json_equal(jreq(st, "declared_parent"), jreq(e, "declared_parent")));
      }
    }
    CHECK(n >= 1);
    CHECK_EQ_INT(jint(e, "n"), n);
    CHECK_EQ_INT(jint(e, "declared_parent_not_open"), not_open);
    CHECK(jnum(e, "p50_ms") <= jnum(e, "p95_ms"));
    CHECK(jnum(e, "p95_ms") <= jnum(e, "p99_ms"));
    CHECK(jnum(e, "p99_ms") <= jnum(e, "max_ms"));
    if (!jnull(e, "nested_in")) {
      CHECK_EQ_INT(jint(e, "parent_incomplete"), incomplete);
      /* "do not sum" only where every run's parent is in the sample. */
      CHECK_EQ_INT(strstr(jstr(e, "note"), "do not sum") != NULL, incomplete == 0);
    } else {
      CHECK(jnull(e, "parent_incomplete"));
    }
  }
  /* Every distinct (stage, run-time parent) pair is listed or counted as dropped. */
  long long pairs = 0;
  json_t *seen = json_array();
  json_array_foreach(samples, k, s) {
    size_t m;
    json_array_foreach(jreq(s, "stages"), m, st) {
      if (!jbool(st, "available")) continue; /* declared unavailable: in coverage, not in stage_summary */
      json_t *key = json_pack("[O,O]", jreq(st, "name"), jreq(st, "nested_in"));
      size_t q;
      json_t *prev;
      int dup = 0;
      json_array_foreach(seen, q, prev) dup |= json_equal(prev, key);
      if (!dup) {
        json_array_append(seen, key);
        pairs++;
      }
      json_decref(key);
    }
  }
  json_decref(seen);
  CHECK_EQ_INT((long long)json_array_size(jreq(doc, "stage_summary")) + jint(doc, "counts.stage_summary_dropped"),
               pairs);
  long long kinds_total = 0;
  json_array_foreach(jreq(doc, "kind_summary"), i, e) {
    const char *kind = jstr(e, "kind");
    long long n = 0;
    json_array_foreach(samples, k, s) n += !strcmp(jstr(s, "kind"), kind);
    CHECK(n >= 1);
    CHECK_EQ_INT(jint(e, "n"), n);
    CHECK(jnum(e, "p50_ms") <= jnum(e, "max_ms"));
    kinds_total += n;
  }
  CHECK_EQ_INT(kinds_total, (long long)json_array_size(samples));

  /* Populations: per kind x population, each n the samples of that pair; a
   * kind with a labelled sample lists all its samples across its entries. */
  json_array_foreach(jreq(doc, "kind_summary"), i, e) {
    const char *kind = jstr(e, "kind");
    long long labelled = 0, listed = 0;
    json_array_foreach(samples, k, s) labelled += !strcmp(jstr(s, "kind"), kind) && !jnull(s, "population");
    size_t m;
    json_t *p;
    json_array_foreach(jreq(doc, "population_summary"), m, p) {
      if (strcmp(jstr(p, "kind"), kind)) continue;
      long long n = 0;
      json_array_foreach(samples, k, s) n += !strcmp(jstr(s, "kind"), kind) && json_equal(jreq(s, "population"), jreq(p, "population"));
      CHECK(n >= 1);
      CHECK_EQ_INT(jint(p, "n"), n);
      CHECK(jnum(p, "p50_ms") <= jnum(p, "p95_ms") && jnum(p, "p95_ms") <= jnum(p, "max_ms"));
      listed += n;
    }
    CHECK_EQ_INT(listed, labelled ? jint(e, "n") : 0);
  }
  json_array_foreach(jreq(doc, "population_summary"), i, e) CHECK(rc_kind_entry(doc, jstr(e, "kind")) != NULL);

  /* Counters: mean and max over the samples that carry each (name, kind). */
  json_array_foreach(jreq(doc, "counter_summary"), i, e) {
    long long n = 0;
    double sum = 0, max = -1e300;
    json_t *ekind = json_object_get(e, "kind");
    REQUIRE(ekind != NULL);
    json_array_foreach(samples, k, s) {
      size_t m;
      json_t *c;
      json_array_foreach(jreq(s, "counters"), m, c) {
        if (strcmp(jstr(c, "name"), jstr(e, "name")) || !jbool(c, "available")) continue;
        json_t *ckind = json_object_get(c, "kind"); /* null or a label; absent only where unavailable */
        if (!ckind || !json_equal(ckind, ekind)) continue;
        double v = jnum(c, "value");
        n++;
        sum += v;
        if (v > max) max = v;
      }
    }
    CHECK(n >= 1);
    CHECK_EQ_INT(jint(e, "n"), n);
    CHECK_NEAR(jnum(e, "max"), max, 0.0011 + 1e-9 * (max < 0 ? -max : max));
    CHECK_NEAR(jnum(e, "mean"), sum / (double)(n ? n : 1), 0.0011 + 1e-9 * (sum < 0 ? -sum : sum));
  }

  /* Coverage: every name some sample declared unavailable, with both counts. */
  long long declared_total = 0, listed_total = 0;
  json_array_foreach(samples, k, s) {
    size_t m;
    json_t *x;
    json_array_foreach(jreq(s, "stages"), m, x) declared_total += !jbool(x, "available");
    json_array_foreach(jreq(s, "counters"), m, x) declared_total += !jbool(x, "available");
  }
  json_array_foreach(jreq(doc, "coverage"), i, e) {
    int stage = !strcmp(jstr(e, "what"), "stage");
    long long unavailable = 0, available = 0;
    json_array_foreach(samples, k, s) {
      size_t m;
      json_t *x;
      int declared = 0, measured = 0;
      json_array_foreach(jreq(s, stage ? "stages" : "counters"), m, x) {
        if (strcmp(jstr(x, "name"), jstr(e, "name"))) continue;
        if (jbool(x, "available"))
          measured = 1;
        else
          declared++;
      }
      CHECK(declared <= 1 && !(declared && measured)); /* measured wins; one declaration each */
      unavailable += declared;
      available += measured;
    }
    CHECK(unavailable >= 1);
    CHECK_EQ_INT(jint(e, "unavailable_n"), unavailable);
    CHECK_EQ_INT(jint(e, "available_n"), available);
    listed_total += unavailable;
  }
  CHECK_EQ_INT(listed_total, declared_total);

  /* Frame rate: committed passes only; input never counts as a rendered frame; per window, never summed. */
  int all_returned = jint(doc, "counts.dropped") == 0;
  long long passes = 0;
  json_array_foreach(samples, k, s) {
    if (strcmp(jstr(s, "kind"), "pass") || (!jbool(s, "committed") && jnull(s, "handed_off_to"))) continue;
    passes++;
  }
  if (all_returned) /* every pass counted is returned, but those of windows past the tracked bound */
    CHECK_EQ_INT(jint(doc, "frame_rate.passes") + jint(doc, "frame_rate.passes_untracked"), passes);
  else
    CHECK(jint(doc, "frame_rate.passes") >= passes);
  rc_check_top_rate(jreq(doc, "frame_rate"));
  long long by_window = 0;
  json_t *w;
  json_array_foreach(jreq(doc, "frame_rate.by_window"), i, w) {
    rc_check_rates(w, samples, jstr(w, "window"), all_returned);
    CHECK(jint(w, "passes") >= 1);
    by_window += jint(w, "passes");
  }
  CHECK_EQ_INT(by_window, jint(doc, "frame_rate.passes"));
}

/* >>application scopes */
static inline void rc_check_application(json_t *doc, double at_ms) {
  json_t *a = jreq(doc, "application_scopes");
  long long max_samples = jint(doc, "session.max_samples");
  CHECK_EQ_INT(jint(a, "max_scopes"), max_samples < 128 ? max_samples : 128);
  size_t returned = jlen(a, "scopes");
  CHECK_EQ_INT(jint(a, "returned"), (long long)returned);
  CHECK(returned <= (size_t)jint(a, "max_scopes"));
  CHECK_EQ_INT(jint(a, "completed") - jint(a, "dropped"), (long long)returned);
  CHECK_EQ_INT(jbool(a, "truncated"), jint(a, "dropped") > 0);
  double start_ms = jnum(doc, "session.start_ms"), newest = -1;
  size_t i;
  json_t *s;
  json_array_foreach(jreq(a, "scopes"), i, s) {
    CHECK(jint(s, "depth") >= 1);
    CHECK_EQ_INT(jnull(s, "parent_id"), jint(s, "depth") == 1);
    double st = jnum(s, "start_ms"), en = jnum(s, "end_ms");
    CHECK(st >= start_ms);
    CHECK(en <= at_ms);
    CHECK(st <= en);
    CHECK_NEAR(jnum(s, "wall_timings_ms.total"), en - st, RC_MS_EPS);
    if (en > newest) newest = en;
  }
  /* Age of the latest completion among the returned records, not of the last published. */
  if (returned)
    CHECK_NEAR(jnum(a, "sample_age_ms"), at_ms - newest, RC_MS_EPS);
  else
    CHECK(jnull(a, "sample_age_ms"));
  json_array_foreach(jreq(a, "unfinished"), i, s) {
    CHECK(jnum(s, "elapsed_ms") >= 0);
    CHECK_EQ_INT(jnull(s, "parent_id"), jint(s, "depth") == 1);
    jbool(s, "started_before_session");
  }
}

static inline void rc_save(const char *json, size_t len) {
  REQUIREF(mkdir(STROBE_REPORT_OUT_DIR, 0777) == 0 || errno == EEXIST, "report_check: mkdir %s: %s",
           STROBE_REPORT_OUT_DIR, strerror(errno));
  char path[1024];
  snprintf(path, sizeof path, "%s/%s-%ld-%d.json", STROBE_REPORT_OUT_DIR, STROBE_TEST_NAME, (long)getpid(),
           rc_reports_written++);
  FILE *f = fopen(path, "w");
  REQUIRE(f != NULL);
  CHECK(fwrite(json, 1, len, f) == len);
  CHECK(fclose(f) == 0);
}

/* Serializes, saves and checks a report; returns the parsed document (json_decref it). */
static inline json_t *check_report_json(const strobe_report *r) {
  char *json = NULL, *again = NULL;
  size_t len = 0, len2 = 0;
  REQUIRE_EQ_INT(strobe_report_json(r, &json, &len), 0);
  REQUIRE(json != NULL && strlen(json) == len);
  rc_save(json, len);
  REQUIRE_EQ_INT(strobe_report_json(r, &again, &len2), 0);
  CHECK(len == len2 && !memcmp(json, again, len)); /* an immutable snapshot */
  free(again);

  json_error_t err;
  json_t *doc = json_loadb(json, len, JSON_REJECT_DUPLICATES, &err);
  if (!doc) fprintf(stderr, "%s\n", json);
  REQUIREF(doc != NULL, "report_check: invalid JSON at %d:%d: %s", err.line, err.column, err.text);
  free(json);

  CHECK_EQ_INT(jint(doc, "version"), 1);
  CHECK(!strcmp(jstr(doc, "id"), strobe_report_query_id(r)));
  int final = jbool(doc, "final");
  double at_ms;
  if (final) {
    CHECK(jnull(doc, "session.read_ms"));
    at_ms = jnum(doc, "session.end_ms");
  } else {
    CHECK(jnull(doc, "session.end_ms"));
    at_ms = jnum(doc, "session.read_ms");
  }
  CHECK(jnum(doc, "session.start_ms") >= 0);
  CHECK(at_ms >= jnum(doc, "session.start_ms"));
  { /* cross_process.refused is the sum of its reasons */
    long long by = 0;
    const char *k;
    json_t *v;
    json_object_foreach(jreq(doc, "cross_process.refused_by"), k, v) by += json_integer_value(v);
    CHECK_EQ_INT(jint(doc, "cross_process.refused"), by);
  }
  long long max_samples = jint(doc, "session.max_samples");
  CHECK(max_samples >= 1 && max_samples <= STROBE_MAX_SAMPLES);

  strobe_report_counts counts = strobe_report_query_counts(r);
  size_t nsamples = jlen(doc, "samples"), nunfinished = jlen(doc, "unfinished");
  CHECK_EQ_INT(jint(doc, "counts.returned"), (long long)nsamples);
  CHECK(nsamples <= (size_t)max_samples);
  CHECK_EQ_INT(jint(doc, "counts.completed") - jint(doc, "counts.dropped"), (long long)nsamples);
  CHECK_EQ_INT(jint(doc, "counts.unfinished"), (long long)nunfinished);
  CHECK_EQ_INT(counts.completed, jint(doc, "counts.completed"));
  CHECK_EQ_INT(counts.returned, (long long)nsamples);
  CHECK_EQ_INT(counts.dropped, jint(doc, "counts.dropped"));
  CHECK_EQ_INT(counts.boundary_excluded, jint(doc, "counts.boundary_excluded"));
  CHECK_EQ_INT(counts.unfinished, (long long)nunfinished);
  CHECK(jint(doc, "counts.interleaved") >= 0);
  CHECK_EQ_INT(counts.unfinished_stalled, jint(doc, "counts.unfinished_stalled"));
  CHECK_EQ_INT(counts.kind_excluded, jint(doc, "counts.kind_excluded"));
  CHECK(jint(doc, "counts.kind_excluded") >= 0);
  /* A session admits only its kinds: nothing else is kept, completed or unfinished. */
  static const char *const kind_names[] = {"pass", "rebuild", "input", "request"};
  for (int k = 0; k < 4; k++) {
    int admitted = 0;
    size_t m;
    json_t *v;
    json_array_foreach(jreq(doc, "session.kinds"), m, v) admitted |= !strcmp(json_string_value(v), kind_names[k]);
    char path[64];
    snprintf(path, sizeof path, "counts.completed_by_kind.%s", kind_names[k]);
    if (!admitted) CHECK_EQ_INT(jint(doc, path), 0);
    json_array_foreach(jreq(doc, "unfinished"), m, v) if (!admitted) CHECK(strcmp(jstr(v, "kind"), kind_names[k]));
  }
  CHECK_EQ_INT(jint(doc, "counts.completed_by_kind.pass") + jint(doc, "counts.completed_by_kind.rebuild") +
                   jint(doc, "counts.completed_by_kind.input") + jint(doc, "counts.completed_by_kind.request"),
               jint(doc, "counts.completed"));

  /* Status: explicit for empty and unfinished-only sessions; never implies "fast". */
  size_t done = nsamples + jlen(doc, "application_scopes.scopes");
  size_t running = nunfinished + jlen(doc, "application_scopes.unfinished");
  const char *status = jstr(doc, "status");
  const char *want = done ? (running ? "partial" : "complete") : (running ? "unfinished" : "empty");
  CHECKF(!strcmp(status, want), "report_check: status %s, expected %s", status, want);
  static const char *const names[] = {"", "complete", "empty", "unfinished", "partial"};
  CHECK(!strcmp(names[strobe_report_query_status(r)], status));

  /* Resets: reset_ms is set exactly when the session was reset, inside its bounds. */
  CHECK(jint(doc, "session.resets") >= 0);
  CHECK_EQ_INT(jnull(doc, "session.reset_ms"), jint(doc, "session.resets") == 0);
  if (!jnull(doc, "session.reset_ms"))
    CHECK(jnum(doc, "session.reset_ms") >= jnum(doc, "session.start_ms") && jnum(doc, "session.reset_ms") <= at_ms);
  CHECK(jint(doc, "counts.idle") >= 0);
  CHECK_EQ_INT(counts.idle, jint(doc, "counts.idle"));

  /* Truncated: exactly the bounds whose counts are non-zero. */
  {
    long long stages_dropped = 0, counters_dropped = 0;
    size_t k;
    json_t *s;
    json_array_foreach(jreq(doc, "samples"), k, s) {
      stages_dropped += jint(s, "stages_dropped");
      counters_dropped += jint(s, "counters_dropped");
    }
    const struct {
      const char *name;
      long long count;
    } bounds[] = {{"counts.dropped", jint(doc, "counts.dropped")},
                  {"samples.stages_dropped", stages_dropped},
                  {"samples.counters_dropped", counters_dropped},
                  {"application_scopes.dropped", jint(doc, "application_scopes.dropped")},
                  {"counts.untracked_windows", jint(doc, "counts.untracked_windows")},
                  {"counts.nesting_overflow", jint(doc, "counts.nesting_overflow")},
                  {"counts.stage_summary_dropped", jint(doc, "counts.stage_summary_dropped")},
                  {"memory.gauges_dropped", jint(doc, "memory.gauges_dropped")},
                  {"frame_rate.passes_untracked", jint(doc, "frame_rate.passes_untracked")}};
    size_t cut = 0;
    for (size_t b = 0; b < sizeof bounds / sizeof *bounds; b++) {
      int listed = 0;
      json_t *v;
      json_array_foreach(jreq(doc, "truncated_by"), k, v) listed |= !strcmp(json_string_value(v), bounds[b].name);
      CHECKF(listed == (bounds[b].count > 0), "report_check: truncated_by and %s = %lld disagree", bounds[b].name,
             bounds[b].count);
      cut += bounds[b].count > 0;
    }
    CHECK_EQ_INT(jlen(doc, "truncated_by"), cut);
    CHECK_EQ_INT(jbool(doc, "truncated"), cut > 0);
  }

  rc_check_samples(doc, at_ms);
  rc_check_unfinished(doc);
  rc_check_summaries(doc);
  rc_check_application(doc, at_ms);

  size_t i;
  json_t *g;
  json_array_foreach(jreq(doc, "memory.gauges"), i, g) CHECK(jnum(g, "sampled_ms_ago") >= 0);
  CHECK(!strcmp(jstr(doc, "build.strobe_version"), strobe_version()));
  jbool(doc, "build.assertions");
  rc_content_free(doc, NULL, NULL);
  return doc;
}

static inline void check_report(const strobe_report *r) { json_decref(check_report_json(r)); }

/* How many reports this process saved (a test can assert it produced some). */
static inline int reports_checked(void) { return rc_reports_written; }

#endif
