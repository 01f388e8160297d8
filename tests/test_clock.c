/*
 * test_clock.c — the collector clock's rate (docs/platforms.md §Linux
 * aarch64): the rate the platform states (CNTFRQ_EL0 on aarch64) is used when
 * it agrees with CLOCK_MONOTONIC, the measured one when it is absent or
 * wrong, and either way the ticks convert to CLOCK_MONOTONIC's nanoseconds.
 * Runs natively and under qemu-aarch64 (tests/cross/CMakeLists.txt).
 */
#include <math.h>
#include <string.h>
#include <time.h>

#include "platform/clock.h"
#include "support/harness.h"
#include "strobe/strobe.h"

static void test_pick_rate(void) {
  const char *how = NULL;
  /* Stated and agreeing (0.5 % off, a rough measurement): the stated rate, exactly. */
  CHECK(strobe__clock_pick_rate(16.0, 16.08, &how) == 16.0);
  CHECK(!strcmp(how, "stated"));
  /* None stated (firmware left CNTFRQ_EL0 at 0, or a TSC): the measured rate. */
  CHECK(strobe__clock_pick_rate(0.0, 0.37, &how) == 0.37);
  CHECK(!strcmp(how, "measured"));
  /* Stated wrongly (a board claiming 24 MHz whose counter runs at 19.2 MHz): measured. */
  CHECK(strobe__clock_pick_rate(1e9 / 24e6, 1e9 / 19.2e6, &how) == 1e9 / 19.2e6);
  CHECK(!strcmp(how, "measured"));
  CHECK(strobe__clock_pick_rate(10.0, 9.8, &how) == 9.8); /* 2 % off: beyond the 1 % tolerance */
  CHECK(!strcmp(how, "measured"));
}

/* What this processor's clock must use. */
static void test_platform_rate(void) {
  const strobe__clock_info *c = strobe__clock();
  CHECK(c->ns_per_tick > 0);
#if defined(__aarch64__)
  uint64_t hz;
  __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(hz));
  hz &= 0xffffffffu;
  printf("clock: cntvct, CNTFRQ_EL0 %llu Hz, %.6f ns per tick (%s)\n", (unsigned long long)hz, c->ns_per_tick, strobe__clock_rate());
  CHECK(!strcmp(c->source, "cntvct"));
  CHECK(c->invariant == 1);
  REQUIRE(hz != 0); /* Linux requires the firmware to program it; qemu does */
  CHECK(!strcmp(strobe__clock_rate(), "stated"));
  CHECK(c->ns_per_tick == 1e9 / (double)hz);
#elif defined(__x86_64__)
  printf("clock: tsc, %.6f ns per tick (%s)\n", c->ns_per_tick, strobe__clock_rate());
  CHECK(!strcmp(c->source, "tsc"));
  CHECK(!strcmp(strobe__clock_rate(), "measured"));
#else
  CHECK(!strcmp(c->source, "monotonic"));
  CHECK(c->ns_per_tick == 1.0);
#endif
}

/* A (ticks, ns) pair bracketed by two tick reads; returns the bracket's width in ticks. */
static uint64_t pair(uint64_t *ticks, uint64_t *ns) {
  uint64_t a = strobe__now(), m = strobe__mono_ns(), b = strobe__now();
  *ticks = a + (b - a) / 2;
  *ns = m;
  return b - a;
}

/* Ticks never go back on one thread, and over 50 ms they convert to
 * CLOCK_MONOTONIC's elapsed time within 1 %, beyond the error the two
 * readings' brackets allow (a preempted reading widens its bracket, and so
 * its allowance: the verdict does not depend on the scheduler). */
static void test_ticks_follow_monotonic(void) {
  const strobe__clock_info *c = strobe__clock();
  uint64_t prev = strobe__now();
  for (int i = 0; i < 100000; i++) {
    uint64_t now = strobe__now();
    CHECK(now >= prev);
    prev = now;
  }
  uint64_t t0, n0, t1, n1;
  uint64_t w0 = pair(&t0, &n0);
  struct timespec d = {0, 50000000};
  nanosleep(&d, NULL);
  uint64_t w1 = pair(&t1, &n1);
  double ticks_ns = (double)(t1 - t0) * c->ns_per_tick, mono_ns = (double)(n1 - n0);
  double allowed = 0.01 * mono_ns + (double)(w0 + w1) * c->ns_per_tick;
  printf("clock: %.0f ns by ticks, %.0f ns by CLOCK_MONOTONIC (allowed difference %.0f ns)\n", ticks_ns, mono_ns,
         allowed);
  CHECK(fabs(ticks_ns - mono_ns) <= allowed);
}

#define CASES(X) X(pick_rate) X(platform_rate) X(ticks_follow_monotonic)
HARNESS_MAIN(CASES)
