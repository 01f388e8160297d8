/*
 * test_session_labels.c — the label rule at every entry (docs/sessions.md
 * §The label rule) and reports that never point into application memory:
 *   - a window id, a run info key, an application scope label that breaks
 *     the rule is refused with STROBE_ELABEL and counted; a stage name (a
 *     macro), an operation counter name and a gauge name (void calls) are
 *     kept under STROBE_INVALID_LABEL and counted; none of the text reaches
 *     the JSON;
 *   - counter, gauge, scope and stage labels are copied: after the
 *     application frees or rewrites its buffers, the same report serializes
 *     to the same bytes (and, under ASan, reads no freed memory);
 *   - run info that is free text stays out of the JSON and is read beside it
 *     (strobe_report_query_run_info).
 *
 * STROBE_TEST_NEEDS: jansson reports
 */
#include <stdlib.h>
#include <string.h>

#include "support/session_util.h"

/* Text an application must never export: each test checks none of it is in the JSON. */
static const char *const k_content[] = {"Quarterly", "secret", "hunter2", "alice", "typed", "cmake"};

static void check_no_content(const char *json) {
  for (size_t i = 0; i < sizeof k_content / sizeof *k_content; i++)
    CHECKF(strstr(json, k_content[i]) == NULL, "\"%s\" leaked into the report", k_content[i]);
}

/* Every entry: refused where the call returns an error, placeholder and count where it cannot. */
static void test_rule_at_every_entry(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);

  /* Window ids: 1..256 of [A-Za-z0-9_./:-]. */
  strobe_window out;
  const char *good_windows[] = {"w1/popup", "main.2:editor-a", "W_9"};
  for (size_t i = 0; i < 3; i++) CHECK_EQ_INT(strobe_window_register(c, good_windows[i], 0, &out), 0);
  const char *bad_windows[] = {"Quarterly Report.docx \xe2\x80\x94 /home/alice/secret", "w 1", "w\xc3\xa9", "tab\t",
                               "a,b", ""};
  for (size_t i = 0; i < sizeof bad_windows / sizeof *bad_windows; i++) {
    out.id = 7;
    CHECK_EQ_INT(strobe_window_register(c, bad_windows[i], 0, &out), STROBE_ELABEL);
    CHECK_EQ_INT(out.id, 0);
  }
  long long refused = (long long)(sizeof bad_windows / sizeof *bad_windows);

  /* Run info keys are names. */
  CHECK_EQ_INT(strobe_collector_set_run_info(c, "source sha", "0123abc"), STROBE_ELABEL);
  CHECK_EQ_INT(strobe_collector_set_run_info(c, "secret/key", "x"), STROBE_ELABEL);
  refused += 2;

  /* Application scope labels are names (refused: an inert guard, counted twice: by scopes and by the rule). */
  strobe_app_scope bad = strobe_app_scope_begin(c, "main", "user typed: hunter2", STROBE_LANE_UI);
  CHECK_EQ_INT(strobe_app_scope_query_status(&bad), STROBE_ELABEL);
  strobe_app_scope_end(&bad);
  refused += 1;

  /* Stages (a macro), counters and gauges (void) keep the placeholder and count. */
  static strobe_site typed = STROBE_STAGE_SITE("user typed: hunter2", NULL);
  static strobe_site bad_parent = STROBE_STAGE_SITE("child_ok", "secret parent");
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  strobe_stage h = strobe_stage_begin(&typed);
  strobe_stage k = strobe_stage_begin(&bad_parent);
  CHECK_EQ_INT(strobe_stage_end(&k), 0);
  CHECK_EQ_INT(strobe_stage_end(&h), 0);
  strobe_op_counter_add("/home/alice/secret.txt", 3);
  strobe_op_counter_add("rows_ok", 2);
  strobe_op_counter_add("typed words", 4);
  strobe_op_counter_add(NULL, 1);
  strobe_op_end(op, 1);
  strobe_collector_gauge_set(c, "heap of alice", 100);
  strobe_collector_gauge_set(c, "heap_bytes", 50);
  long long replaced = 2 /* stages */ + 3 /* counters */ + 1 /* gauge */;

  strobe_report *r = NULL;
  REQUIRE_EQ_INT(strobe_session_stop(c, id, 0, &r), 0);
  json_t *doc = check_report_json(r); /* rc_content_free: every name follows the rule */
  char *json = su_json(r);
  check_no_content(json);
  free(json);
  CHECK_EQ_INT(jint(doc, "counts.labels_refused"), refused);
  CHECK_EQ_INT(jint(doc, "counts.labels_replaced"), replaced);
  CHECK_EQ_INT(jint(doc, "counts.untracked_windows"), (long long)(sizeof bad_windows / sizeof *bad_windows));
  CHECK_EQ_INT(jint(doc, "application_scopes.refused.invalid_label"), 1);
  json_t *s = json_array_get(jreq(doc, "samples"), 0);
  REQUIRE(s != NULL);
  json_t *placeholder = su_named(jreq(s, "stages"), STROBE_INVALID_LABEL);
  REQUIRE(placeholder != NULL);
  CHECK(jnull(placeholder, "nested_in"));
  json_t *child = su_named(jreq(s, "stages"), "child_ok");
  REQUIRE(child != NULL);
  CHECK_STR_EQ(jstr(child, "nested_in"), STROBE_INVALID_LABEL); /* it ran in the placeholder stage */
  CHECK_STR_EQ(jstr(child, "declared_parent"), STROBE_INVALID_LABEL);
  /* Three bad counter names are one placeholder counter holding their sum; the good one is itself. */
  CHECK_NEAR(jnum(su_named(jreq(s, "counters"), STROBE_INVALID_LABEL), "value"), 3 + 4 + 1, 1e-9);
  CHECK_NEAR(jnum(su_named(jreq(s, "counters"), "rows_ok"), "value"), 2, 1e-9);
  CHECK_EQ_INT(json_array_size(jreq(s, "counters")), 2);
  json_t *gauges = jreq(doc, "memory.gauges");
  CHECK_EQ_INT(json_array_size(gauges), 2);
  CHECK_STR_EQ(jstr(json_array_get(gauges, 0), "name"), STROBE_INVALID_LABEL);
  CHECK_STR_EQ(jstr(json_array_get(gauges, 1), "name"), "heap_bytes");
  json_decref(doc);
  strobe_report_free(r);
  strobe_collector_release(c);
}

/* Free a buffer and take the same size again: glibc hands the same chunk back
 * (ASan keeps it in quarantine and reports any read of the freed one). */
static char *reuse(char *buf, size_t n, char fill) {
  free(buf);
  char *again = malloc(n);
  REQUIRE(again != NULL);
  memset(again, fill, n - 1);
  again[n - 1] = 0;
  return again;
}

/* A report is an immutable snapshot: its labels are copies, never pointers
 * into the application's buffers. */
static void test_report_owns_its_labels(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  char *counter = strdup("rows_bound");
  char *gauge = strdup("heap_bytes");
  char *label = strdup("save_write");
  char *stage_name = strdup("paint_stage");
  REQUIRE(counter && gauge && label && stage_name);
  strobe_site *site = calloc(1, sizeof *site);
  REQUIRE(site != NULL);
  *site = (strobe_site)STROBE_STAGE_SITE(NULL, NULL);
  site->name = stage_name; /* the site outlives the test (the registry keeps it); its name is rewritten below */

  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  strobe_stage h = strobe_stage_begin(site);
  strobe_op_counter_add(counter, 5);
  CHECK_EQ_INT(strobe_stage_end(&h), 0);
  strobe_op_end(op, 1);
  strobe_collector_gauge_set(c, gauge, 42);
  strobe_app_scope done = strobe_app_scope_begin(c, "main", label, STROBE_LANE_WORKER);
  strobe_app_scope_end(&done);
  strobe_app_scope running = strobe_app_scope_begin(c, "main", label, STROBE_LANE_UI);

  strobe_report *r = su_read(c, id, NULL);
  char *before = su_json(r);
  CHECK(strstr(before, "\"rows_bound\"") && strstr(before, "\"heap_bytes\"") && strstr(before, "\"save_write\"") &&
        strstr(before, "\"paint_stage\""));

  /* The application frees and reuses every buffer it named things with. */
  counter = reuse(counter, strlen("rows_bound") + 1, 'X');
  gauge = reuse(gauge, strlen("heap_bytes") + 1, 'Y');
  label = reuse(label, strlen("save_write") + 1, 'Z');
  memset(stage_name, 'Q', strlen(stage_name));

  char *after = su_json(r);
  CHECK_STR_EQ(after, before);
  strobe_stage_summary sum[4];
  REQUIRE_EQ_INT(strobe_report_query_stages(r, sum, 4), 1);
  CHECK_STR_EQ(sum[0].name, "paint_stage");
  free(before);
  free(after);
  strobe_report_free(r);
  strobe_app_scope_end(&running);
  su_end_free(c, id);
  free(counter);
  free(gauge);
  free(label);
  strobe_collector_release(c);
}

/* Run info that is an identifier is in the JSON; free text is null there and is read beside the report. */
static void test_run_info_beside_the_report(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  CHECK_EQ_INT(strobe_collector_set_run_info(c, "source_sha", "0123abc"), 0);
  CHECK_EQ_INT(strobe_collector_set_run_info(c, "fixture", "dense_list.v2"), 0);
  CHECK_EQ_INT(strobe_collector_set_run_info(c, "build_command", "cmake -DCMAKE_BUILD_TYPE=Release .. && make -j2"),
               0);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  json_t *doc;
  strobe_report *r = su_end(c, id, &doc);
  CHECK_STR_EQ(jstr(doc, "run.source_sha"), "0123abc");
  CHECK_STR_EQ(jstr(doc, "run.fixture"), "dense_list.v2");
  CHECK(jnull(doc, "run.build_command"));
  char *json = su_json(r);
  check_no_content(json);
  free(json);
  const char *key, *value;
  int found = 0;
  for (uint32_t i = 0; strobe_report_query_run_info(r, i, &key, &value) == 0; i++)
    if (!strcmp(key, "build_command")) found = !strcmp(value, "cmake -DCMAKE_BUILD_TYPE=Release .. && make -j2");
  CHECK(found);
  CHECK_EQ_INT(strobe_report_query_run_info(r, 3, &key, &value), STROBE_ERANGE);
  CHECK_EQ_INT(strobe_report_query_run_info(r, 0, NULL, &value), STROBE_EINVAL);
  json_decref(doc);
  strobe_report_free(r);
  strobe_collector_release(c);
}

/* strobe_label_valid answers the name rule every call applies: 1-64 of [A-Za-z0-9_]. */
static void test_label_valid_is_the_name_rule(void) {
  char longest[66];
  memset(longest, 'a', 64);
  longest[64] = '\0';
  CHECK_EQ_INT(strobe_label_valid("render_rows_2"), 1);
  CHECK_EQ_INT(strobe_label_valid(longest), 1);
  longest[64] = 'a';
  longest[65] = '\0';
  CHECK_EQ_INT(strobe_label_valid(longest), 0);
  const char *bad[] = {"", "two words", "a-b", "w1/popup", "caf\xc3\xa9", "x\n"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) CHECK_EQ_INT(strobe_label_valid(bad[i]), 0);
  CHECK_EQ_INT(strobe_label_valid(NULL), 0);
}

#define CASES(X) X(rule_at_every_entry) X(report_owns_its_labels) X(run_info_beside_the_report) \
  X(label_valid_is_the_name_rule)
HARNESS_MAIN(CASES)
