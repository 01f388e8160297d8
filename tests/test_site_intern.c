/*
 * test_site_intern.c — run-time names (strobe_site_intern; docs/recording.md
 * §Run-time names):
 *   - a name is copied once and found again as the same site, per name,
 *     category and kind; invalid names and kinds get a fallback site of the
 *     same kind with STROBE_EINVAL, a full table one with STROBE_ELIMIT, and
 *     each refusal is counted as misuse;
 *   - threads interning the same names at once all get the same sites
 *     (ThreadSanitizer runs this test: lookups take no lock);
 *   - an interned number site carries the unit it was interned with
 *     (strobe_site_intern_unit) into captures; the unit is part of the key;
 *   - a capture keeps interned names, flagged STROBE_SITE_INTERNED, with
 *     scopes, values, counters, gauges and loops recorded on them, and its
 *     footer counts the refusals;
 *   - a session report names an interned stage "interned_<site id>" and
 *     counts it, unless the application opted in at setup
 *     (strobe_desc.report_interned_names), and then carries the name.
 *
 * malloc goes through __wrap_malloc below, which can fail (STROBE_ENOMEM) or
 * dawdle (so that threads meet inside an insertion).
 *
 * STROBE_TEST_NEEDS: jansson reports
 * STROBE_TEST_LINK_OPTIONS: -Wl,--wrap=malloc
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/strobe.h"
#include "support/session_util.h"

void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);
enum { MALLOC_NORMAL, MALLOC_SLOW, MALLOC_FAIL };
static int g_malloc_mode; /* atomic */

void *__wrap_malloc(size_t size) {
  int mode = __atomic_load_n(&g_malloc_mode, __ATOMIC_RELAXED);
  if (mode == MALLOC_FAIL) return NULL;
  if (mode == MALLOC_SLOW) usleep(300);
  return __real_malloc(size);
}

/* >>lookup */
static void test_same_name_same_site(void) {
  char buf[16];
  memcpy(buf, "alpha-and-more", 14);
  strobe_site *a = strobe_site_intern(buf, 5, NULL, STROBE_SITE_SCOPE); /* not terminated at 5 */
  REQUIRE(a != NULL);
  CHECK_EQ_INT(strobe_site_query_error(a), 0);
  CHECK_STR_EQ(a->name, "alpha");
  CHECK_EQ_INT(a->kind, STROBE_SITE_SCOPE);
  CHECK_EQ_INT(a->flags, STROBE_SITE_INTERNED);
  memcpy(buf, "omega", 5); /* the site kept its own copy */
  CHECK_STR_EQ(a->name, "alpha");
  CHECK(strobe_site_intern("alpha", 5, NULL, STROBE_SITE_SCOPE) == a);
  /* Kind and category are part of the key; the name's bytes all count. */
  strobe_site *v = strobe_site_intern("alpha", 5, NULL, STROBE_SITE_VALUE);
  strobe_site *cat = strobe_site_intern("alpha", 5, "lua", STROBE_SITE_SCOPE);
  strobe_site *longer = strobe_site_intern("alphas", 6, NULL, STROBE_SITE_SCOPE);
  CHECK(v != a && cat != a && longer != a && cat != v);
  CHECK_EQ_INT(v->kind, STROBE_SITE_VALUE);
  CHECK_STR_EQ(cat->category, "lua");
  char lua[] = "lua"; /* categories compare by content */
  CHECK(strobe_site_intern("alpha", 5, lua, STROBE_SITE_SCOPE) == cat);
  CHECK(strobe_site_intern("alphas", 6, NULL, STROBE_SITE_SCOPE) == longer);
  /* The longest name there may be, and multi-byte UTF-8. */
  char big[STROBE_MAX_INTERNED_NAME];
  memset(big, 'x', sizeof big);
  strobe_site *b = strobe_site_intern(big, sizeof big, NULL, STROBE_SITE_COUNTER);
  CHECK_EQ_INT(strobe_site_query_error(b), 0);
  CHECK_EQ_U64(strlen(b->name), STROBE_MAX_INTERNED_NAME);
  strobe_site *u = strobe_site_intern("caf\xc3\xa9 \xe2\x82\xac", 9, NULL, STROBE_SITE_GAUGE);
  CHECK_EQ_INT(strobe_site_query_error(u), 0);
  CHECK(strobe_site_register(a) > 0);
  static strobe_site declared = {"declared", NULL, NULL, __FILE__, "f", 1, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0};
  CHECK_EQ_INT(strobe_site_query_error(&declared), 0);
  CHECK_EQ_INT(strobe_site_query_error(NULL), STROBE_EINVAL);
  strobe_misuse m = strobe_query_misuse();
  CHECK_EQ_U64(m.intern_invalid, 0);
  CHECK_EQ_U64(m.intern_full, 0);
}

/* Each invalid call gets the EINVAL fallback of its kind and is counted once. */
static void test_invalid_names(void) {
  char big[STROBE_MAX_INTERNED_NAME + 1];
  memset(big, 'x', sizeof big);
  struct {
    const char *name;
    size_t len;
    int kind;
  } bad[] = {
      {NULL, 3, STROBE_SITE_SCOPE},
      {"x", 0, STROBE_SITE_SCOPE},
      {big, sizeof big, STROBE_SITE_VALUE},
      {"a\0b", 3, STROBE_SITE_COUNTER},
      {"\xc3", 1, STROBE_SITE_SCOPE},         /* cut short */
      {"\xc0\xaf", 2, STROBE_SITE_SCOPE},     /* overlong */
      {"\xed\xa0\x80", 3, STROBE_SITE_GAUGE}, /* a surrogate */
      {"\xff", 1, STROBE_SITE_SCOPE},
      {"frame", 5, STROBE_SITE_FRAME},
      {"nine", 4, 99},
      {"zero", 4, 0},
  };
  int n = (int)(sizeof bad / sizeof bad[0]);
  strobe_site *first = NULL;
  for (int i = 0; i < n; i++) {
    strobe_site *s = strobe_site_intern(bad[i].name, bad[i].len, NULL, (strobe_site_kind)bad[i].kind);
    REQUIRE(s != NULL);
    CHECKF(strobe_site_query_error(s) == STROBE_EINVAL, "case %d", i);
    CHECK_EQ_INT(s->flags, 0); /* a fallback's name is the library's, not content */
    int want_kind = bad[i].kind >= STROBE_SITE_SCOPE && bad[i].kind <= STROBE_SITE_STAGE && bad[i].kind != STROBE_SITE_FRAME
                        ? bad[i].kind
                        : STROBE_SITE_SCOPE;
    CHECKF((int)s->kind == want_kind, "case %d: kind %u", i, s->kind);
    if (want_kind == STROBE_SITE_SCOPE) {
      if (!first) first = s;
      CHECK(s == first); /* one fallback per reason and kind */
    }
  }
  CHECK_EQ_U64(strobe_query_misuse().intern_invalid, (uint64_t)n);
  CHECK_EQ_U64(strobe_query_misuse().intern_full, 0);
}

/* No memory for a new name: ENOMEM fallback, counted with the full table's
 * refusals; the same name is interned once memory is back. */
static void test_out_of_memory(void) {
  __atomic_store_n(&g_malloc_mode, MALLOC_FAIL, __ATOMIC_RELAXED);
  strobe_site *s = strobe_site_intern("starved", 7, NULL, STROBE_SITE_GAUGE);
  __atomic_store_n(&g_malloc_mode, MALLOC_NORMAL, __ATOMIC_RELAXED);
  CHECK_EQ_INT(strobe_site_query_error(s), STROBE_ENOMEM);
  CHECK_EQ_INT(s->kind, STROBE_SITE_GAUGE);
  CHECK_EQ_U64(strobe_query_misuse().intern_full, 1);
  strobe_site *again = strobe_site_intern("starved", 7, NULL, STROBE_SITE_GAUGE);
  CHECK_EQ_INT(strobe_site_query_error(again), 0);
  CHECK_STR_EQ(again->name, "starved");
}

/* Past STROBE_MAX_INTERNED names: ELIMIT fallbacks, counted; the names in keep working. */
static void test_full_table(void) {
  static strobe_site *sites[STROBE_MAX_INTERNED];
  char name[32];
  for (int i = 0; i < STROBE_MAX_INTERNED; i++) {
    int len = snprintf(name, sizeof name, "fn_%d", i);
    sites[i] = strobe_site_intern(name, (size_t)len, NULL, STROBE_SITE_SCOPE);
    REQUIRE(strobe_site_query_error(sites[i]) == 0);
  }
  strobe_site *over = strobe_site_intern("one_more", 8, NULL, STROBE_SITE_SCOPE);
  CHECK_EQ_INT(strobe_site_query_error(over), STROBE_ELIMIT);
  CHECK_EQ_INT(over->kind, STROBE_SITE_SCOPE);
  strobe_site *over_v = strobe_site_intern("one_more", 8, NULL, STROBE_SITE_VALUE);
  CHECK_EQ_INT(strobe_site_query_error(over_v), STROBE_ELIMIT);
  CHECK_EQ_INT(over_v->kind, STROBE_SITE_VALUE);
  CHECK(over_v != over);
  CHECK_EQ_U64(strobe_query_misuse().intern_full, 2);
  CHECK_EQ_U64(strobe_query_misuse().intern_invalid, 0);
  for (int i = 0; i < STROBE_MAX_INTERNED; i += 97) {
    int len = snprintf(name, sizeof name, "fn_%d", i);
    CHECK(strobe_site_intern(name, (size_t)len, NULL, STROBE_SITE_SCOPE) == sites[i]);
  }
  CHECK_EQ_U64(strobe_query_misuse().intern_full, 2); /* finding is never refused */
}

/* >>threads: every thread interns the same names in its own order, while
 * the others insert; all must agree on every site. */
#define RACE_THREADS 4
#define RACE_NAMES 601 /* prime: every thread's order is a permutation */
static strobe_site *g_race[RACE_THREADS][RACE_NAMES];
#define LOCKSTEP_NAMES 300
static strobe_site *g_lockstep[RACE_THREADS][LOCKSTEP_NAMES];
static pthread_barrier_t g_start;

static void *race(void *arg) {
  int t = (int)(intptr_t)arg;
  char name[32];
  /* First every thread asks for each new name at the same moment (a
   * barrier per name), so that two of them often miss it and insert it at once. */
  for (int i = 0; i < LOCKSTEP_NAMES; i++) {
    pthread_barrier_wait(&g_start);
    int len = snprintf(name, sizeof name, "lockstep_%d", i);
    g_lockstep[t][i] = strobe_site_intern(name, (size_t)len, NULL, STROBE_SITE_SCOPE);
  }
  for (int k = 0; k < RACE_NAMES; k++) {
    int i = (k * (2 * t + 1) + 13 * t) % RACE_NAMES; /* a different order per thread */
    int len = snprintf(name, sizeof name, "race_%d", i);
    strobe_site *s = strobe_site_intern(name, (size_t)len, "race", i % 2 ? STROBE_SITE_SCOPE : STROBE_SITE_COUNTER);
    g_race[t][i] = s;
    /* Read the site as an instrumented thread would. */
    if (s->kind == STROBE_SITE_SCOPE) {
      STROBE_SCOPE_SITE(s);
    }
  }
  return NULL;
}

static void test_threads_agree(void) {
  pthread_t th[RACE_THREADS];
  REQUIRE(pthread_barrier_init(&g_start, NULL, RACE_THREADS) == 0);
  __atomic_store_n(&g_malloc_mode, MALLOC_SLOW, __ATOMIC_RELAXED);
  for (int t = 0; t < RACE_THREADS; t++) REQUIRE(pthread_create(&th[t], NULL, race, (void *)(intptr_t)t) == 0);
  for (int t = 0; t < RACE_THREADS; t++) pthread_join(th[t], NULL);
  pthread_barrier_destroy(&g_start);
  __atomic_store_n(&g_malloc_mode, MALLOC_NORMAL, __ATOMIC_RELAXED);
  char name[32];
  for (int i = 0; i < LOCKSTEP_NAMES; i++)
    for (int t = 1; t < RACE_THREADS; t++)
      CHECKF(g_lockstep[t][i] == g_lockstep[0][i], "lockstep name %d, thread %d", i, t);
  for (int i = 0; i < RACE_NAMES; i++) {
    snprintf(name, sizeof name, "race_%d", i);
    REQUIRE(g_race[0][i] != NULL);
    CHECK_EQ_INT(strobe_site_query_error(g_race[0][i]), 0);
    CHECK_STR_EQ(g_race[0][i]->name, name);
    for (int t = 1; t < RACE_THREADS; t++) CHECKF(g_race[t][i] == g_race[0][i], "name %d, thread %d", i, t);
    for (int j = 0; j < i; j++) CHECKF(g_race[0][j] != g_race[0][i], "names %d and %d share a site", j, i);
  }
  CHECK_EQ_U64(strobe_query_misuse().intern_full, 0);
}

/* >>captures */
static void test_capture_keeps_names(void) {
  char path[64];
  REQUIRE(fx_temp_file(path, sizeof path, "intern") == 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  strobe_site *fn = strobe_site_intern("sum_rows", 8, "interp", STROBE_SITE_SCOPE);
  strobe_site *col = strobe_site_intern("price (EUR)", 11, NULL, STROBE_SITE_VALUE);
  strobe_site *calls = strobe_site_intern("calls:sum_rows", 14, NULL, STROBE_SITE_COUNTER);
  strobe_site *depth = strobe_site_intern("stack depth", 11, NULL, STROBE_SITE_GAUGE);
  strobe_site *loop = strobe_site_intern("row loop", 8, NULL, STROBE_SITE_CUMULATIVE);
  strobe_site *cb = strobe_site_intern("on_tick", 7, NULL, STROBE_SITE_SCOPE);
  strobe_site *neg = strobe_site_intern("delta", 5, NULL, STROBE_SITE_VALUE);
  (void)strobe_site_intern("x", 0, NULL, STROBE_SITE_SCOPE); /* refused while recording: the footer counts it */
  for (int i = 0; i < 10; i++) {
    STROBE_SCOPE_SITE(fn);
    /* One site, call sites of every argument type: each number says its encoding. */
    STROBE_VALUE_SITE(col, i * 1.5);
    STROBE_VALUE_SITE(col, (unsigned)i + 1000u);
    STROBE_VALUE_SITE(neg, -i);
    STROBE_COUNTER_ADD_SITE(calls, 1);
    STROBE_GAUGE_SET_SITE(depth, (uint64_t)i);
    for (int k = 0; k < 3; k++) {
      STROBE_CUMULATIVE_SITE(loop);
    }
    STROBE_VALUE_SITE(neg, -100 - i); /* the loop's holder is on top: the slow path */
    STROBE_BEGIN_SITE(cb);
    STROBE_END();
  }
  { STROBE_SCOPE("static_scope"); }
  CHECK_EQ_INT(strobe_record_stop(rec), 0);

  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  CHECK_EQ_INT(strobe_capture_query_header(cap)->version, STROBE_CAPTURE_FORMAT_VERSION);
  strobe_capture_record r;
  int rc;
  uint64_t begins[7] = {0}, numbers[7] = {0}, cumulative = 0, static_begins = 0;
  double sums[7] = {0};
  strobe_site *want[7] = {fn, col, calls, depth, loop, cb, neg};
  while ((rc = strobe_capture_next(cap, &r)) > 0) {
    if (r.type != STROBE_REC_BEGIN && r.type != STROBE_REC_VALUE && r.type != STROBE_REC_COUNTER &&
        r.type != STROBE_REC_GAUGE && r.type != STROBE_REC_CUMULATIVE)
      continue;
    const strobe_capture_site *s = strobe_capture_query_site(cap, r.site);
    REQUIRE(s != NULL);
    if (!strcmp(s->name, "static_scope")) {
      CHECK_EQ_INT(s->flags, 0);
      static_begins++;
      continue;
    }
    int k = 0;
    while (k < 7 && strcmp(s->name, want[k]->name)) k++;
    REQUIREF(k < 7, "unexpected site %s", s->name);
    CHECK_EQ_INT(s->flags, STROBE_SITE_INTERNED);
    CHECK_EQ_INT(s->kind, want[k]->kind);
    CHECK_STR_EQ(s->category, k == 0 ? "interp" : "");
    if (r.type == STROBE_REC_BEGIN) begins[k]++;
    else if (r.type == STROBE_REC_CUMULATIVE) cumulative += r.count;
    else {
      numbers[k]++;
      sums[k] += r.value;
    }
  }
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_U64(begins[0], 10);
  CHECK_EQ_U64(begins[5], 10);
  CHECK_EQ_U64(numbers[1], 20);
  CHECK(sums[1] == 1.5 * 45 + 10000 + 45); /* doubles and unsigned integers on one site, exact */
  CHECK_EQ_U64(numbers[6], 20);
  CHECK(sums[6] == -45.0 - 1000 - 45); /* signed integers, inline and through the slow path */
  CHECK_EQ_U64(numbers[2], 10);
  CHECK(sums[2] == 10.0);
  CHECK_EQ_U64(numbers[3], 10);
  CHECK(sums[3] == 45.0);
  CHECK_EQ_U64(cumulative, 30);
  CHECK_EQ_U64(static_begins, 1);
  strobe_capture_totals t = strobe_capture_query_totals(cap);
  CHECK(t.footer);
  CHECK_EQ_U64(t.misuse.intern_invalid, 1);
  CHECK_EQ_U64(t.misuse.intern_full, 0);
  strobe_capture_close(cap);
  unlink(path);
}

/* Units on interned number sites (strobe_site_intern_unit): part of the key,
 * refused on kinds without numbers and outside STROBE_UNITS, carried into the
 * capture's site table while every number keeps its own encoding. */
static void test_units(void) {
  strobe_site *bytes = strobe_site_intern_unit("column_bytes", 12, NULL, STROBE_SITE_GAUGE, STROBE_UNIT_BYTES);
  strobe_site *plain = strobe_site_intern("column_bytes", 12, NULL, STROBE_SITE_GAUGE);
  strobe_site *ms = strobe_site_intern_unit("query_time", 10, NULL, STROBE_SITE_VALUE, STROBE_UNIT_MS);
  CHECK_EQ_INT(strobe_site_query_error(bytes), 0);
  CHECK_EQ_INT(strobe_site_query_error(plain), 0);
  CHECK(bytes != plain); /* another unit, another site */
  CHECK(strobe_site_intern_unit("column_bytes", 12, NULL, STROBE_SITE_GAUGE, STROBE_UNIT_BYTES) == bytes);
  CHECK(strobe_site_intern_unit("column_bytes", 12, NULL, STROBE_SITE_GAUGE, STROBE_UNIT_NONE) == plain);
  CHECK_EQ_INT(bytes->unit & STROBE__UNIT_MASK, STROBE_UNIT_BYTES);
  CHECK_EQ_INT(plain->unit & STROBE__UNIT_MASK, STROBE_UNIT_NONE);
  strobe_misuse m0 = strobe_query_misuse();
  strobe_site *scope = strobe_site_intern_unit("a_scope", 7, NULL, STROBE_SITE_SCOPE, STROBE_UNIT_BYTES);
  strobe_site *bad = strobe_site_intern_unit("bad_unit", 8, NULL, STROBE_SITE_GAUGE, (strobe_unit)STROBE_UNIT_LIMIT);
  CHECK_EQ_INT(strobe_site_query_error(scope), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_site_query_error(bad), STROBE_EINVAL);
  CHECK_EQ_INT(bad->kind, STROBE_SITE_GAUGE);
  CHECK_EQ_U64(strobe_query_misuse().intern_invalid - m0.intern_invalid, 2);

  char path[64];
  REQUIRE(fx_temp_file(path, sizeof path, "intern-units") == 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  {
    STROBE_SCOPE("units_scope");
    STROBE_GAUGE_SET_SITE(bytes, (uint64_t)3 << 20);
    STROBE_GAUGE_SET_SITE(plain, 7);
    STROBE_VALUE_SITE(ms, 2.5);
  }
  CHECK_EQ_INT(strobe_record_stop(rec), 0);
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  strobe_capture_record r;
  int rc, seen = 0;
  while ((rc = strobe_capture_next(cap, &r)) > 0) {
    if (r.type != STROBE_REC_GAUGE && r.type != STROBE_REC_VALUE) continue;
    const strobe_capture_site *s = strobe_capture_query_site(cap, r.site);
    REQUIRE(s != NULL);
    CHECK_EQ_INT(s->flags, STROBE_SITE_INTERNED);
    if (r.type == STROBE_REC_VALUE) {
      CHECK_EQ_INT(s->unit, STROBE_UNIT_MS);
      CHECK(r.value == 2.5);
      seen |= 1;
    } else if (r.value == (double)(3 << 20)) {
      CHECK_EQ_INT(s->unit, STROBE_UNIT_BYTES);
      seen |= 2;
    } else {
      CHECK_EQ_INT(s->unit, STROBE_UNIT_NONE);
      CHECK(r.value == 7.0);
      seen |= 4;
    }
  }
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_INT(seen, 7);
  strobe_capture_close(cap);
  unlink(path);
}

/* >>session reports: one pass whose stage is named at run time. */
static json_t *report_with_interned_stage(const char *name, uint32_t *site_id) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  strobe_site *stage = strobe_site_intern(name, strlen(name), NULL, STROBE_SITE_STAGE);
  REQUIRE_EQ_INT(strobe_site_query_error(stage), 0);
  *site_id = stage->id;
  for (int i = 0; i < 2; i++) {
    strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
    strobe_stage s = strobe_stage_begin(stage);
    fx_spin(1000, 1);
    CHECK_EQ_INT(strobe_stage_end(&s), 0);
    strobe_op_end(op, 1);
  }
  /* A live read while the stage runs names it as the phase too. */
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  strobe_stage s = strobe_stage_begin(stage);
  json_t *live;
  strobe_report_free(su_read(c, id, &live));
  CHECK_EQ_INT(strobe_stage_end(&s), 0);
  strobe_op_end(op, 1);
  json_t *doc;
  strobe_report *r = su_end(c, id, &doc);
  strobe_stage_summary sums[4];
  REQUIRE_EQ_INT(strobe_report_query_stages(r, sums, 4), 1);
  CHECK_STR_EQ(sums[0].name, jstr(json_array_get(jreq(doc, "stage_summary"), 0), "name"));
  strobe_report_free(r);
  json_object_set_new(doc, "live", live); /* the caller checks both */
  strobe_collector_close(c);
  strobe_collector_release(c);
  return doc;
}

static int text_contains(json_t *doc, const char *needle) {
  char *text = json_dumps(doc, 0);
  int found = text && strstr(text, needle) != NULL;
  free(text);
  return found;
}

static void test_report_withholds_names(void) {
  CHECK_EQ_INT(strobe_query_desc().report_interned_names, 0);
  uint32_t site_id;
  json_t *doc = report_with_interned_stage("lua_fn_secret", &site_id);
  char placeholder[32];
  snprintf(placeholder, sizeof placeholder, "interned_%u", site_id);
  CHECK(site_id > 0);
  CHECK(!text_contains(doc, "lua_fn_secret"));
  CHECK_STR_EQ(jstr(json_array_get(jreq(doc, "stage_summary"), 0), "name"), placeholder);
  CHECK_STR_EQ(jstr(json_array_get(jreq(json_array_get(jreq(doc, "samples"), 0), "stages"), 0), "name"), placeholder);
  CHECK(!jbool(doc, "interned_names.included"));
  CHECK_EQ_INT(jint(doc, "interned_names.withheld"), 1);
  json_t *live = jreq(doc, "live");
  CHECK_STR_EQ(jstr(json_array_get(jreq(live, "unfinished"), 0), "phase"), placeholder);
  CHECK_EQ_INT(jint(live, "interned_names.withheld"), 1);
  json_decref(doc);
}

static void test_report_carries_names_when_opted_in(void) {
  CHECK_EQ_INT(strobe_setup(&(strobe_desc){.report_interned_names = 2}), STROBE_EINVAL);
  REQUIRE_EQ_INT(strobe_setup(&(strobe_desc){.report_interned_names = 1}), 0);
  CHECK_EQ_INT(strobe_query_desc().report_interned_names, 1);
  uint32_t site_id;
  json_t *doc = report_with_interned_stage("lua_fn_shared", &site_id);
  CHECK_STR_EQ(jstr(json_array_get(jreq(doc, "stage_summary"), 0), "name"), "lua_fn_shared");
  CHECK(jbool(doc, "interned_names.included"));
  CHECK_EQ_INT(jint(doc, "interned_names.withheld"), 0);
  CHECK_STR_EQ(jstr(json_array_get(jreq(jreq(doc, "live"), "unfinished"), 0), "phase"), "lua_fn_shared");
  json_decref(doc);
  /* Opted in, a name outside the report label rule still never appears. */
  doc = report_with_interned_stage("fn(a, b)", &site_id);
  CHECK(!text_contains(doc, "fn(a, b)"));
  json_decref(doc);
}

#define CASES(X)                  \
  X(same_name_same_site)          \
  X(invalid_names)                \
  X(out_of_memory)                \
  X(full_table)                   \
  X(threads_agree)                \
  X(capture_keeps_names)          \
  X(units)                        \
  X(report_withholds_names)       \
  X(report_carries_names_when_opted_in)
HARNESS_MAIN(CASES)
