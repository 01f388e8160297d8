/*
 * clock_common.c — calibration of the platform tick source against
 * CLOCK_MONOTONIC. Owns the process clock epoch. Must never be called from
 * the instrumentation hot path (it may spin for a few milliseconds once).
 */
#include "clock.h"
#include "host.h"

#include <pthread.h>
#include <time.h>

#include "strobe/strobe.h"

/* Long enough that clock_gettime's ~50 ns jitter is a 1e-5 relative error,
 * short enough to be unnoticeable at start-up. */
#define CALIBRATION_NS 5000000ull

static strobe__clock_info g_clock;
static const char *g_clock_rate; /* strobe__clock_rate: written once, under g_clock_once */

/* The hot path's tick source on platforms without a cycle counter. */
STROBE_API uint64_t strobe__now_monotonic(void);
uint64_t strobe__now_monotonic(void) { return strobe__mono_ns(); }
static pthread_once_t g_clock_once = PTHREAD_ONCE_INIT;

/* A (ticks, ns) pair taken as close together as possible: the ns reading is
 * bracketed by two tick readings and the narrowest bracket of a few wins. */
static void sample_pair(uint64_t *ticks, uint64_t *ns) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 8; i++) {
    uint64_t a = strobe__now();
    uint64_t m = strobe__mono_ns();
    uint64_t b = strobe__now();
    if (b - a < best) {
      best = b - a;
      *ticks = a + (b - a) / 2;
      *ns = m;
    }
  }
}

static void calibrate(void) {
  g_clock.source = strobe__clock_source(&g_clock.invariant);
  sample_pair(&g_clock.epoch_ticks, &g_clock.epoch_mono_ns);
  uint64_t t1 = g_clock.epoch_ticks, n1 = g_clock.epoch_mono_ns;
  while (strobe__mono_ns() - g_clock.epoch_mono_ns < CALIBRATION_NS) {
  }
  sample_pair(&t1, &n1);
  double measured = (t1 > g_clock.epoch_ticks)
                        ? (double)(n1 - g_clock.epoch_mono_ns) / (double)(t1 - g_clock.epoch_ticks)
                        : 1.0;
  g_clock.ns_per_tick = strobe__clock_pick_rate(strobe__clock_stated_ns_per_tick(), measured, &g_clock_rate);
  /* The clock this process shows others (host.h): CLOCK_MONOTONIC but under a test's stand-in host. */
  g_clock.epoch_mono_ns = (uint64_t)((int64_t)g_clock.epoch_mono_ns + strobe__host_mono_shift_ns());
}

double strobe__clock_pick_rate(double stated, double measured, const char **how) {
  double ratio = stated > 0 ? measured / stated : 0;
  if (ratio >= 1.0 - STROBE__CLOCK_RATE_TOLERANCE && ratio <= 1.0 + STROBE__CLOCK_RATE_TOLERANCE) {
    *how = "stated";
    return stated;
  }
  *how = "measured";
  return measured;
}

const strobe__clock_info *strobe__clock(void) {
  pthread_once(&g_clock_once, calibrate);
  return &g_clock;
}

const char *strobe__clock_rate(void) {
  pthread_once(&g_clock_once, calibrate);
  return g_clock_rate;
}
