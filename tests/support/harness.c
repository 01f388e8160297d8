/*
 * harness.c — the runner behind tests/support/harness.h. Owns: argument
 * parsing (--list, case names), running each selected case with a jump
 * point REQUIRE can return to, the per-case failure tally, and the closing
 * "N passed, N failed" line. Must never fork, catch signals or retry a case:
 * a crash is the test's verdict and stays visible to CTest, debuggers and the
 * sanitizers; isolation between cases comes from CTest running each case in
 * its own process (tests/CMakeLists.txt).
 *
 * Output: failed checks go to stderr as they happen ("file:line: failed:
 * ..."), case results and the closing line to stdout, line-buffered so the
 * two interleave in order when CTest merges them.
 */
#include "harness.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* Failed checks printed per case; the rest are counted, and the count is
 * printed, so a check failing in a loop cannot flood the log. */
#define HARNESS_MAX_PRINTED 100

static jmp_buf harness_jump;         /* where REQUIRE returns to: the runner, on the case's thread */
static pthread_t harness_thread;     /* the thread running the case */
static atomic_int harness_in_case;   /* 1 while a case runs */
static atomic_int harness_failures;  /* failed checks in the running case, from any thread */

static struct {
  void (*fn)(void *);
  void *arg;
} harness_cleanups[HARNESS_MAX_DEFER]; /* the running case's, in registration order */
static int harness_ncleanups;

int harness_case_failures(void) { return atomic_load(&harness_failures); }

void harness_defer(void (*fn)(void *), void *arg) {
  if (!atomic_load(&harness_in_case) || !pthread_equal(pthread_self(), harness_thread)) {
    fn(arg);
    return;
  }
  if (harness_ncleanups == HARNESS_MAX_DEFER) {
    harness_fail(__FILE__, __LINE__, 0, "harness_defer: more than %d cleanups in one case", HARNESS_MAX_DEFER);
    fn(arg);
    return;
  }
  harness_cleanups[harness_ncleanups].fn = fn;
  harness_cleanups[harness_ncleanups].arg = arg;
  harness_ncleanups++;
}

void harness_fail(const char *file, int line, int stop, const char *fmt, ...) {
  char what[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (!atomic_load(&harness_in_case)) {
    fprintf(stderr, "%s:%d: failed: %s (outside a case: exiting)\n", file, line, what);
    fflush(stdout);
    exit(1);
  }
  int n = atomic_fetch_add(&harness_failures, 1) + 1;
  if (n <= HARNESS_MAX_PRINTED) fprintf(stderr, "%s:%d: failed: %s\n", file, line, what);
  if (!stop) return;
  if (pthread_equal(pthread_self(), harness_thread)) longjmp(harness_jump, 1);
  /* Another thread cannot unwind the case's thread: end the process; CTest sees exit status 1. */
  fprintf(stderr, "%s:%d: REQUIRE failed off the case's thread: ending the process\n", file, line);
  fflush(stdout);
  _exit(1);
}

static double harness_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Runs one case; returns its failed-check count. Nothing local changes
 * between setjmp and a longjmp back, so no local needs to be volatile. */
static int harness_run_case(const harness_case *c) {
  printf("RUN  %s\n", c->name);
  atomic_store(&harness_failures, 0);
  harness_thread = pthread_self();
  double t0 = harness_now_ms();
  harness_ncleanups = 0;
  atomic_store(&harness_in_case, 1);
  if (setjmp(harness_jump) == 0) c->run();
  /* Each cleanup is taken off the list before it runs, so a REQUIRE inside
   * one lands here again and carries on with the next. */
  setjmp(harness_jump);
  while (harness_ncleanups > 0) {
    harness_ncleanups--;
    harness_cleanups[harness_ncleanups].fn(harness_cleanups[harness_ncleanups].arg);
  }
  atomic_store(&harness_in_case, 0);
  int failed = atomic_load(&harness_failures);
  double ms = harness_now_ms() - t0;
  if (failed > HARNESS_MAX_PRINTED)
    fprintf(stderr, "%s: %d more failed checks not printed (at most %d per case)\n", c->name,
            failed - HARNESS_MAX_PRINTED, HARNESS_MAX_PRINTED);
  if (failed)
    printf("FAIL %s: %d failed check%s (%.0f ms)\n", c->name, failed, failed == 1 ? "" : "s", ms);
  else
    printf("ok   %s (%.0f ms)\n", c->name, ms);
  return failed;
}

static int harness_usage(const char *argv0, const char *why) {
  if (why) fprintf(stderr, "%s: %s\n", argv0, why);
  fprintf(stderr, "usage: %s [--list] [case...]\n  no case: run every case; --list: print the case names\n", argv0);
  return 2;
}

int harness_main(int argc, char **argv, const harness_case *cases, size_t count, void (*setup)(void)) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char *argv0 = argc > 0 ? argv[0] : "test";
  for (size_t i = 0; i < count; i++)
    for (size_t j = 0; j < i; j++)
      if (!strcmp(cases[i].name, cases[j].name)) {
        fprintf(stderr, "%s: case %s is listed twice\n", argv0, cases[i].name);
        return 2;
      }

  /* Select: every case, or the named ones in the order given. */
  size_t *run = calloc(count + (size_t)argc, sizeof *run);
  if (!run) {
    fprintf(stderr, "%s: out of memory\n", argv0);
    return 2;
  }
  size_t nrun = 0;
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--list")) {
      for (size_t i = 0; i < count; i++) printf("%s\n", cases[i].name);
      free(run);
      return 0;
    }
    if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
      free(run);
      harness_usage(argv0, NULL);
      return 0;
    }
    if (argv[a][0] == '-') {
      free(run);
      char why[256];
      snprintf(why, sizeof why, "unknown option %s", argv[a]);
      return harness_usage(argv0, why);
    }
    size_t i = 0;
    while (i < count && strcmp(cases[i].name, argv[a])) i++;
    if (i == count) {
      fprintf(stderr, "%s: no case named %s (--list prints the cases)\n", argv0, argv[a]);
      free(run);
      return 2;
    }
    run[nrun++] = i;
  }
  if (argc <= 1)
    for (size_t i = 0; i < count; i++) run[nrun++] = i;

  if (setup) setup();
  int passed = 0, failed = 0;
  for (size_t k = 0; k < nrun; k++) {
    if (harness_run_case(&cases[run[k]]))
      failed++;
    else
      passed++;
  }
  free(run);
  printf("%d passed, %d failed\n", passed, failed);
  fflush(stdout);
  return failed ? 1 : 0;
}
