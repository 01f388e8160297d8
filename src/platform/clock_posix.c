/*
 * clock_posix.c — CLOCK_MONOTONIC as collector clock, for platforms without a
 * known cycle counter (and builds with STROBE_FORCE_MONOTONIC). One tick is
 * one nanosecond.
 */
#include "clock.h"

const char *strobe__clock_source(int *invariant) {
  *invariant = 1;
  return "monotonic";
}

/* Exact: a tick is a nanosecond. */
double strobe__clock_stated_ns_per_tick(void) { return 1.0; }
