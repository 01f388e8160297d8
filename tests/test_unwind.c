/*
 * test_unwind.c — scopes whose END never runs are closed as unwound and
 * recording goes on (docs/recording.md, Unwinding): longjmps out of nested
 * scopes under a long-lived one, a longjmp from a callee with no scopes of
 * its own, pthread_exit and cancellation with scopes open, and the explicit
 * pair strobe_depth / strobe_unwind_to. Each case reads its capture back and
 * counts, per site, the ENDs that are unwound and those that are not.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <string.h>
#include <unistd.h>

#include "support/fixtures.h"
#include "support/harness.h"
#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/strobe.h"

#define ERRORS 100000
#define ORDINARY 1000

/* >>fixture: a recording with a ring that holds every event of a case, so
 * the counts are exact whatever the drain's pace. */
typedef struct run {
  char path[64];
  strobe_recorder *rec;
  uint64_t unwound_before;
} run;

static void run_start(run *r, const char *tag) {
  REQUIRE_EQ_INT(strobe_setup(&(strobe_desc){.ring_events = 1u << 21}), 0);
  REQUIRE(fx_temp_file(r->path, sizeof r->path, tag) == 0);
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = r->path}, &r->rec), 0);
  r->unwound_before = strobe_query_event_stats().scopes_unwound;
}

#define MAX_NAMES 8
typedef struct counts {
  const char *names[MAX_NAMES];
  uint64_t ends[MAX_NAMES], unwound[MAX_NAMES];
  strobe_capture_totals totals;
} counts;
#define COUNTS(...) {.names = {__VA_ARGS__}}

static int name_index(counts *c, const char *name) {
  for (int i = 0; i < MAX_NAMES && c->names[i]; i++)
    if (!strcmp(c->names[i], name)) return i;
  return -1;
}

/* Stops the recording and counts ENDs per site name (the names listed in c). */
static void run_read(run *r, counts *c) {
  REQUIRE_EQ_INT(strobe_record_stop(r->rec), 0);
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(r->path, &cap), 0);
  strobe_capture_record rec;
  int rc;
  while ((rc = strobe_capture_next(cap, &rec)) > 0) {
    if (rec.type != STROBE_REC_END) {
      CHECK_EQ_INT(rec.unwound, 0);
      continue;
    }
    int i = name_index(c, strobe_capture_query_site(cap, rec.site)->name);
    if (i < 0) continue;
    if (rec.unwound)
      c->unwound[i]++;
    else
      c->ends[i]++;
  }
  CHECK_EQ_INT(rc, 0);
  c->totals = strobe_capture_query_totals(cap);
  strobe_capture_close(cap);
  unlink(r->path);
}

/* >>longjmp: three nested scopes, each in its own function, left by a longjmp. */
static jmp_buf g_env;

static volatile int g_raise = 1; /* so the compiler cannot tell raise_error never returns */

__attribute__((noinline)) static void raise_error(void) {
  if (g_raise) longjmp(g_env, 1);
}

__attribute__((noinline)) static void level3(void) {
  STROBE_SCOPE("level3");
  raise_error();
}
__attribute__((noinline)) static void level2(void) {
  STROBE_SCOPE("level2");
  level3();
}
__attribute__((noinline)) static void level1(void) {
  STROBE_SCOPE("level1");
  level2();
}

static void test_longjmp_out_of_nested_scopes(void) {
  run r;
  run_start(&r, "unwind-longjmp");
  {
    STROBE_SCOPE("interp_loop");
    for (volatile int i = 0; i < ERRORS; i++)
      if (!setjmp(g_env)) level1();
    CHECK_EQ_INT(strobe_depth(), 1 + 3); /* the last error's scopes are still open... */
    for (int i = 0; i < ORDINARY; i++) {
      STROBE_SCOPE("ordinary"); /* ...until the first BEGIN from this shallower C frame */
      CHECK_EQ_INT(strobe_depth(), 2);
    }
  }
  CHECK_EQ_U64(strobe_query_event_stats().scopes_unwound - r.unwound_before, 3u * ERRORS);
  CHECK_EQ_U64(strobe_query_misuse().depth_overflow, 0);
  counts c = COUNTS("interp_loop", "level1", "level2", "level3", "ordinary");
  run_read(&r, &c);
  CHECK_EQ_U64(c.ends[4], ORDINARY);
  CHECK_EQ_U64(c.unwound[4], 0);
  CHECK_EQ_U64(c.ends[0], 1);
  CHECK_EQ_U64(c.unwound[0], 0);
  for (int i = 1; i <= 3; i++) {
    CHECK_EQ_U64(c.unwound[i], ERRORS);
    CHECK_EQ_U64(c.ends[i], 0);
  }
  CHECK_EQ_U64(c.totals.unwound, 3u * ERRORS);
  CHECK_EQ_U64(c.totals.scopes, 1u + ORDINARY);
  CHECK_EQ_U64(c.totals.misuse.depth_overflow, 0);
  CHECK_EQ_U64(c.totals.misuse.unbalanced, 0);
  CHECK_EQ_U64(c.totals.lost, 0);
  CHECK_EQ_U64(c.totals.unfinished, 0);
}

/* >>same frame: the error is raised by a callee with no scopes, so the
 * innermost open scope belongs to the C frame that opens the next ones. The
 * eval frame also holds a nested scope and a loop of scopes, which stay
 * inline once it is known alive. */
__attribute__((noinline)) static void fail_plainly(int i) {
  if (i % 2 == 0) longjmp(g_env, 1);
}

__attribute__((noinline)) static void eval(int i) {
  STROBE_SCOPE("eval");
  for (int k = 0; k < 3; k++) {
    STROBE_SCOPE("step");
  }
  STROBE_SCOPE("dispatch");
  fail_plainly(i);
}

static void test_longjmp_from_callee_without_scopes(void) {
  run r;
  run_start(&r, "unwind-callee");
  {
    STROBE_SCOPE("interp_loop");
    for (volatile int i = 0; i < ERRORS; i++)
      if (!setjmp(g_env)) eval(i);
    /* eval's next BEGIN, from the same C frame, proved the previous error's
     * scopes dead; the last error's are closed by the loop's END. */
  }
  CHECK_EQ_U64(strobe_query_event_stats().scopes_unwound - r.unwound_before, 2u * (ERRORS / 2));
  CHECK_EQ_U64(strobe_query_misuse().depth_overflow, 0);
  counts c = COUNTS("interp_loop", "eval", "dispatch", "step");
  run_read(&r, &c);
  CHECK_EQ_U64(c.ends[0], 1);
  CHECK_EQ_U64(c.unwound[1], ERRORS / 2);
  CHECK_EQ_U64(c.ends[1], ERRORS / 2);
  CHECK_EQ_U64(c.unwound[2], ERRORS / 2);
  CHECK_EQ_U64(c.ends[2], ERRORS / 2);
  CHECK_EQ_U64(c.ends[3], 3u * ERRORS);
  CHECK_EQ_U64(c.unwound[3], 0);
  CHECK_EQ_U64(c.totals.misuse.unbalanced, 0);
  CHECK_EQ_U64(c.totals.lost, 0);
}

/* >>setjmp beside the scopes: the loop that catches the errors opens its
 * scopes in its own C frame, so an error leaves open scopes of that very
 * frame, two deep or three deep, under the same stack pointer as the next
 * BEGIN. That BEGIN, the first scope's again, proves them dead; scopes nested
 * in one C frame are otherwise taken inline (strobe.h, strobe__nests_inline),
 * which must not let this one through. */
__attribute__((noinline)) static void errors_in_own_frame(int n) {
  for (volatile int i = 0; i < n; i++) {
    if (setjmp(g_env)) continue;
    STROBE_SCOPE("frame_a");
    {
      STROBE_SCOPE("frame_b");
      if (i % 2) raise_error(); /* leaves a and b */
      {
        STROBE_SCOPE("frame_c");
        if (i >= 0) raise_error(); /* leaves a, b and c */
      }
    }
  }
  for (int i = 0; i < ORDINARY; i++) { /* the same nesting, completed */
    STROBE_SCOPE("frame_a");
    {
      STROBE_SCOPE("frame_b");
      {
        STROBE_SCOPE("frame_c");
      }
    }
  }
}

static void test_longjmp_into_the_scopes_frame(void) {
  run r;
  run_start(&r, "unwind-own-frame");
  {
    STROBE_SCOPE("interp_loop");
    errors_in_own_frame(ERRORS);
  }
  CHECK_EQ_U64(strobe_query_event_stats().scopes_unwound - r.unwound_before, 2u * ERRORS + ERRORS / 2);
  CHECK_EQ_U64(strobe_query_misuse().depth_overflow, 0);
  counts c = COUNTS("interp_loop", "frame_a", "frame_b", "frame_c");
  run_read(&r, &c);
  CHECK_EQ_U64(c.ends[0], 1);
  CHECK_EQ_U64(c.unwound[1], ERRORS);
  CHECK_EQ_U64(c.unwound[2], ERRORS);
  CHECK_EQ_U64(c.unwound[3], ERRORS / 2);
  for (int i = 1; i <= 3; i++) CHECK_EQ_U64(c.ends[i], ORDINARY);
  CHECK_EQ_U64(c.totals.misuse.depth_overflow, 0);
  CHECK_EQ_U64(c.totals.misuse.unbalanced, 0);
  CHECK_EQ_U64(c.totals.lost, 0);
  CHECK_EQ_U64(c.totals.unfinished, 0);
}

/* >>thread exit: pthread_exit and cancellation leave block scopes open. */
static pthread_barrier_t g_cancel_ready;

__attribute__((noinline)) static void exit_deep(void) {
  STROBE_SCOPE("exit_inner");
  pthread_exit(NULL);
}

static void *exits_in_scopes(void *arg) {
  (void)arg;
  STROBE_SCOPE("exit_outer");
  exit_deep();
  return NULL;
}

/* Cancelled where a real program's thread would be, blocked in pause().
 * Under ThreadSanitizer it is cancelled at pthread_testcancel instead: a
 * thread cancelled inside a blocking call TSan intercepts leaves that call's
 * bookkeeping set (its runtime is not unwound), and TSan then ignores the
 * thread's atomics, so the release that publishes its exit ENDs to the drain
 * is lost to it and the drain's read of them looks like a race. */
static void *cancelled_in_scopes(void *arg) {
  (void)arg;
  STROBE_SCOPE("cancel_outer");
  {
    STROBE_SCOPE("cancel_inner");
    pthread_barrier_wait(&g_cancel_ready);
#if defined(STROBE__TSAN)
    for (;;) {
      pthread_testcancel();
      sched_yield();
    }
#else
    for (;;) pause(); /* a cancellation point */
#endif
  }
  return NULL;
}

static void test_thread_exit_with_open_scopes(void) {
  run r;
  run_start(&r, "unwind-exit");
  pthread_t th;
  REQUIRE_EQ_INT(pthread_create(&th, NULL, exits_in_scopes, NULL), 0);
  pthread_join(th, NULL);
  REQUIRE_EQ_INT(pthread_barrier_init(&g_cancel_ready, NULL, 2), 0);
  REQUIRE_EQ_INT(pthread_create(&th, NULL, cancelled_in_scopes, NULL), 0);
  pthread_barrier_wait(&g_cancel_ready);
  pthread_cancel(th);
  pthread_join(th, NULL);
  pthread_barrier_destroy(&g_cancel_ready);
  CHECK_EQ_U64(strobe_query_event_stats().scopes_unwound - r.unwound_before, 4);
  counts c = COUNTS("exit_outer", "exit_inner", "cancel_outer", "cancel_inner");
  run_read(&r, &c);
  for (int i = 0; i < 4; i++) {
    CHECK_EQ_U64(c.unwound[i], 1);
    CHECK_EQ_U64(c.ends[i], 0);
  }
  CHECK_EQ_U64(c.totals.unfinished, 0);
  CHECK_EQ_U64(c.totals.misuse.open_at_exit, 0);
}

/* >>explicit pair: the interpreter pattern of docs/recording.md. */
__attribute__((noinline)) static void deep_then_raise(int n) {
  STROBE_SCOPE("guarded");
  if (n > 1)
    deep_then_raise(n - 1);
  else
    raise_error();
}

static void test_depth_and_unwind_to(void) {
  CHECK_EQ_INT(strobe_depth(), 0);
  strobe_unwind_to(0); /* a thread that never recorded: nothing happens */
  run r;
  run_start(&r, "unwind-explicit");
  STROBE_BEGIN("explicit_outer");
  CHECK_EQ_INT(strobe_depth(), 1);
  for (int i = 0; i < 10; i++) {
    int depth = strobe_depth();
    if (setjmp(g_env)) {
      CHECK_EQ_INT(strobe_depth(), depth + 5);
      strobe_unwind_to(depth);
      CHECK_EQ_INT(strobe_depth(), depth);
      continue;
    }
    deep_then_raise(5);
  }
  strobe_unwind_to(5);  /* above the depth: nothing happens */
  strobe_unwind_to(-1); /* not a depth: nothing happens */
  CHECK_EQ_INT(strobe_depth(), 1);
  STROBE_BEGIN("explicit_inner");
  STROBE_BEGIN("explicit_innermost");
  strobe_unwind_to(1); /* explicit scopes too */
  CHECK_EQ_INT(strobe_depth(), 1);
  STROBE_END(); /* explicit_outer, normally */
  CHECK_EQ_INT(strobe_depth(), 0);
  CHECK_EQ_U64(strobe_query_event_stats().scopes_unwound - r.unwound_before, 52);
  counts c = COUNTS("explicit_outer", "guarded", "explicit_inner", "explicit_innermost");
  run_read(&r, &c);
  CHECK_EQ_U64(c.ends[0], 1);
  CHECK_EQ_U64(c.unwound[1], 50);
  CHECK_EQ_U64(c.ends[1], 0);
  CHECK_EQ_U64(c.unwound[2], 1);
  CHECK_EQ_U64(c.unwound[3], 1);
  CHECK_EQ_U64(c.totals.misuse.unbalanced + c.totals.misuse.end_without_begin, 0);
}

#define CASES(X)                          \
  X(longjmp_out_of_nested_scopes)         \
  X(longjmp_from_callee_without_scopes)   \
  X(longjmp_into_the_scopes_frame)        \
  X(thread_exit_with_open_scopes)         \
  X(depth_and_unwind_to)
HARNESS_MAIN(CASES)
