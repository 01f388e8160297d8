/*
 * test_numbers.c — values, counter deltas and gauge levels as the inline hot
 * path writes them (strobe.h, strobe__number; docs/recording.md, Numbers):
 * recorded to a file and read back, every number is exactly what the
 * application passed, for every argument type the macros take (signed,
 * unsigned, floating, through the drain's conversion), on the scope it was
 * recorded in, with its site's unit; over a small ring that wraps many
 * times, so the inline path, its room check and the slow path that takes
 * over near the ring's middle and end all run; a value's time lies within
 * its scope; values under bookkeeping frames (a loop accumulator's holder)
 * and without a scope take the slow path, which keeps the same rules; a
 * thread whose first event is a counter or a gauge records it.
 */
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "support/fixtures.h"
#include "support/harness.h"
#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/strobe.h"

#define ROUNDS 4000 /* × 12 numbers, 2 events each: the 4096-event ring wraps ~50 times */
#define BATCH 100   /* rounds between flushes, so the drain keeps up and nothing is lost */

/* The numbers of round i, by site name, as the application passes them. */
static double expected(const char *name, uint32_t i) {
  if (!strcmp(name, "neg_int")) return (double)(-(int)i - 7);
  if (!strcmp(name, "big_u64")) return (double)(UINT64_MAX - i);
  if (!strcmp(name, "neg_i64")) return (double)(-((int64_t)1 << 40)) - (double)i;
  if (!strcmp(name, "half")) return (double)i + 0.5;
  if (!strcmp(name, "tenth_f")) return (double)(0.1f * (float)i);
  if (!strcmp(name, "flag")) return (double)(i % 2 == 0);
  if (!strcmp(name, "byte")) return (double)(unsigned char)i;
  if (!strcmp(name, "bytes_sent")) return 512.0;
  if (!strcmp(name, "cost")) return -0.25;
  if (!strcmp(name, "heap")) return (double)(i * 4096u);
  if (!strcmp(name, "load")) return (double)(i % 101) * 0.99;
  if (!strcmp(name, "depth_hint")) return (double)(short)(-(short)(i % 300));
  return NAN;
}

static const struct {
  const char *name;
  uint32_t kind, unit;
} g_want[] = {
    {"neg_int", STROBE_SITE_VALUE, STROBE_UNIT_COUNT},    {"big_u64", STROBE_SITE_VALUE, STROBE_UNIT_NONE},
    {"neg_i64", STROBE_SITE_VALUE, STROBE_UNIT_NS},       {"half", STROBE_SITE_VALUE, STROBE_UNIT_MS},
    {"tenth_f", STROBE_SITE_VALUE, STROBE_UNIT_NONE},     {"flag", STROBE_SITE_VALUE, STROBE_UNIT_NONE},
    {"byte", STROBE_SITE_VALUE, STROBE_UNIT_BYTES},       {"bytes_sent", STROBE_SITE_COUNTER, STROBE_UNIT_BYTES},
    {"cost", STROBE_SITE_COUNTER, STROBE_UNIT_NONE},      {"heap", STROBE_SITE_GAUGE, STROBE_UNIT_BYTES},
    {"load", STROBE_SITE_GAUGE, STROBE_UNIT_PERCENT},     {"depth_hint", STROBE_SITE_GAUGE, STROBE_UNIT_NONE},
};
#define NWANT (sizeof g_want / sizeof *g_want)

static void one_round(uint32_t i) {
  STROBE_SCOPE("round");
  {
    STROBE_SCOPE("inner");
    STROBE_VALUE_UNIT("neg_int", -(int)i - 7, STROBE_UNIT_COUNT);
    STROBE_VALUE("big_u64", UINT64_MAX - i);
    STROBE_VALUE_UNIT("neg_i64", (-((int64_t)1 << 40)) - (int64_t)i, STROBE_UNIT_NS);
    STROBE_VALUE_UNIT("half", (double)i + 0.5, STROBE_UNIT_MS);
    STROBE_VALUE("tenth_f", 0.1f * (float)i);
    STROBE_VALUE("flag", (bool)(i % 2 == 0));
    STROBE_VALUE_UNIT("byte", (unsigned char)i, STROBE_UNIT_BYTES);
  }
  STROBE_COUNTER_ADD_UNIT("bytes_sent", 512, STROBE_UNIT_BYTES);
  STROBE_COUNTER_ADD("cost", -0.25);
  STROBE_GAUGE_SET_UNIT("heap", i * 4096u, STROBE_UNIT_BYTES);
  STROBE_GAUGE_SET_UNIT("load", (double)(i % 101) * 0.99, STROBE_UNIT_PERCENT);
  STROBE_GAUGE_SET("depth_hint", (short)(-(short)(i % 300)));
}

static void test_inline_numbers_exact(void) {
  REQUIRE_EQ_INT(strobe_setup(&(strobe_desc){.ring_events = 4096}), 0);
  char path[64];
  REQUIRE(fx_temp_file(path, sizeof path, "numbers") == 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  for (uint32_t i = 0; i < ROUNDS; i++) {
    one_round(i);
    if (i % BATCH == BATCH - 1) CHECK_EQ_INT(strobe_record_flush(rec), 0);
  }
  CHECK_EQ_INT(strobe_record_stop(rec), 0);
  CHECK_EQ_U64(strobe_query_event_stats().events_lost, 0);

  strobe_capture *c;
  REQUIRE_EQ_INT(strobe_capture_open(path, &c), 0);
  strobe_capture_record r;
  int rc;
  uint32_t seen[NWANT] = {0}, rounds = 0, wrong = 0, wrong_depth = 0, wrong_time = 0;
  uint32_t inner_begin_depth = 0;
  double inner_begin_ns = 0, last_value_ns = -1;
  int units_ok = 1;
  while ((rc = strobe_capture_next(c, &r)) > 0) {
    const strobe_capture_site *s = strobe_capture_query_site(c, r.site);
    if (r.type == STROBE_REC_BEGIN && !strcmp(s->name, "inner")) {
      inner_begin_depth = r.depth;
      inner_begin_ns = r.time_ns;
    }
    if (r.type == STROBE_REC_END && !strcmp(s->name, "inner")) {
      if (last_value_ns > r.time_ns) wrong_time++;
    }
    if (r.type == STROBE_REC_END && !strcmp(s->name, "round")) rounds++;
    if (r.type != STROBE_REC_VALUE && r.type != STROBE_REC_COUNTER && r.type != STROBE_REC_GAUGE) continue;
    uint32_t k = 0;
    while (k < NWANT && strcmp(g_want[k].name, s->name)) k++;
    REQUIRE(k < NWANT);
    if (s->kind != g_want[k].kind || s->unit != g_want[k].unit) units_ok = 0;
    /* Numbers of one site come in round order: the n-th is round n's. */
    if (r.value != expected(s->name, seen[k])) wrong++;
    if (wrong == 1 && r.value != expected(s->name, seen[k]))
      fprintf(stderr, "first wrong: %s round %u: %.17g, want %.17g\n", s->name, seen[k], r.value,
              expected(s->name, seen[k]));
    if (r.type == STROBE_REC_VALUE) {
      if (r.depth != inner_begin_depth) wrong_depth++;
      if (r.time_ns < inner_begin_ns) wrong_time++;
      last_value_ns = r.time_ns;
    }
    seen[k]++;
  }
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_INT(rounds, ROUNDS);
  for (uint32_t k = 0; k < NWANT; k++) CHECK_EQ_INT(seen[k], ROUNDS);
  CHECK_EQ_INT(wrong, 0);
  CHECK_EQ_INT(wrong_depth, 0);
  CHECK_EQ_INT(wrong_time, 0);
  CHECK(units_ok);
  strobe_capture_totals t = strobe_capture_query_totals(c);
  CHECK_EQ_U64(t.lost, 0);
  CHECK_EQ_U64(t.misuse.value_without_scope, 0);
  strobe_capture_close(c);
  unlink(path);
}

/* A value whose top frame is a loop accumulator's holder goes the slow way
 * and still lands on its scope; one with no scope open is misuse, counted
 * at once and not recorded. */
static void test_slow_path_numbers(void) {
  char path[64];
  REQUIRE(fx_temp_file(path, sizeof path, "numbers-slow") == 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  {
    STROBE_SCOPE("owner");
    for (int i = 0; i < 3; i++) {
      STROBE_CUMULATIVE("iteration");
    }
    STROBE_VALUE("after_loop", -42); /* the holder is on top now */
  }
  STROBE_VALUE("no_scope", 1);
  CHECK_EQ_U64(strobe_query_misuse().value_without_scope, 1);
  CHECK_EQ_INT(strobe_record_stop(rec), 0);

  strobe_capture *c;
  REQUIRE_EQ_INT(strobe_capture_open(path, &c), 0);
  strobe_capture_record r;
  int rc, after = 0, none = 0;
  while ((rc = strobe_capture_next(c, &r)) > 0) {
    if (r.type != STROBE_REC_VALUE) continue;
    const char *name = strobe_capture_query_site(c, r.site)->name;
    if (!strcmp(name, "after_loop")) {
      CHECK(r.value == -42.0);
      CHECK_EQ_INT(r.depth, 1);
      after++;
    }
    if (!strcmp(name, "no_scope")) none++;
  }
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_INT(after, 1);
  CHECK_EQ_INT(none, 0);
  CHECK_EQ_U64(strobe_capture_query_totals(c).misuse.value_without_scope, 1);
  strobe_capture_close(c);
  unlink(path);
}

/* A thread whose very first event is a counter (and one whose first is a gauge): before it attaches its
 * cursor is the detached state's, which must send a number to the slow path, where it attaches. */
static void *first_is_counter(void *arg) {
  (void)arg;
  STROBE_COUNTER_ADD("first_counter", 3);
  return NULL;
}

static void *first_is_gauge(void *arg) {
  (void)arg;
  STROBE_GAUGE_SET("first_gauge", 5);
  return NULL;
}

static void test_first_event_a_number(void) {
  char path[64];
  REQUIRE(fx_temp_file(path, sizeof path, "numbers-first") == 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  void *(*fns[2])(void *) = {first_is_counter, first_is_gauge};
  for (int i = 0; i < 2; i++) {
    pthread_t th;
    REQUIRE(pthread_create(&th, NULL, fns[i], NULL) == 0);
    pthread_join(th, NULL);
  }
  CHECK_EQ_INT(strobe_record_stop(rec), 0);
  strobe_capture *c;
  REQUIRE_EQ_INT(strobe_capture_open(path, &c), 0);
  strobe_capture_record r;
  int counter = 0, gauge = 0;
  while (strobe_capture_next(c, &r) > 0) {
    const char *name = r.type == STROBE_REC_COUNTER || r.type == STROBE_REC_GAUGE ? strobe_capture_query_site(c, r.site)->name : "";
    counter += !strcmp(name, "first_counter") && r.value == 3.0;
    gauge += !strcmp(name, "first_gauge") && r.value == 5.0;
  }
  CHECK_EQ_INT(counter, 1);
  CHECK_EQ_INT(gauge, 1);
  strobe_capture_close(c);
  unlink(path);
}

#define CASES(X) X(inline_numbers_exact) X(slow_path_numbers) X(first_event_a_number)
HARNESS_MAIN(CASES)
