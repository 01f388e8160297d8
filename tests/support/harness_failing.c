/*
 * harness_failing.c — cases that fail on purpose, for test_harness (which
 * runs this program as a child process and checks what it reports). Owns
 * nothing else; it is built but never registered as a test of its own, since
 * its failing is the point. Its cases allocate nothing, so a REQUIRE that
 * unwinds past them leaks nothing under the sanitizers.
 */
#include <pthread.h>
#include <stdint.h>

#include "harness.h"

static volatile int one = 1, two = 2; /* volatile: the compiler cannot fold the checks away */

static void test_passes(void) {
  CHECK(one == 1);
  CHECK_EQ_INT(two, 2);
  CHECK_STR_EQ("strobe", "strobe");
}

/* Three checks fail; the case goes on past each one to the last. */
static void test_three_checks_fail(void) {
  CHECK_EQ_INT(one, two);
  CHECK(one > two);
  const char *word = one ? "probe" : "strobe";
  CHECK_STR_EQ(word, "strobe");
  CHECK(two == 2); /* holds: not reported */
}

/* The first check fails and the case goes on; the REQUIRE fails and stops it. */
static void test_require_stops(void) {
  uint64_t five = (uint64_t)one + 3;
  CHECK_EQ_U64(five, 5);
  const char *handle = one ? NULL : "handle";
  REQUIRE(handle != NULL);
  CHECK(!"unreachable"); /* never reached */
}

static void *fail_on_thread(void *arg) {
  (void)arg;
  CHECK_EQ_INT(one + two, 4);
  return NULL;
}

/* A check that fails on another thread counts against the running case. */
static void test_fails_on_thread(void) {
  pthread_t th;
  REQUIRE(pthread_create(&th, NULL, fail_on_thread, NULL) == 0);
  pthread_join(th, NULL);
}

/* 150 failures: the first 100 are printed, the rest counted and said so. */
static void test_flood(void) {
  for (int i = 0; i < 150; i++) CHECK(i < 0);
}

static void say_cleaned(void *what) { printf("cleanup %s ran\n", (const char *)what); }

static void fail_in_cleanup(void *arg) {
  (void)arg;
  REQUIRE(one == two); /* ends this cleanup only */
  printf("after the cleanup's REQUIRE\n");
}

/* Cleanups run after a REQUIRE stopped the case, last registered first, and
 * a REQUIRE inside one does not skip the others. */
static void test_cleanup_after_require(void) {
  harness_defer(say_cleaned, "first");
  harness_defer(fail_in_cleanup, NULL);
  harness_defer(say_cleaned, "second");
  REQUIRE(one == 0);
}

static void test_passes_after_failures(void) { CHECK(two > one); }

#define CASES(X) \
  X(passes)      \
  X(three_checks_fail) \
  X(require_stops) \
  X(fails_on_thread) \
  X(flood) \
  X(cleanup_after_require) \
  X(passes_after_failures)
HARNESS_MAIN(CASES)
