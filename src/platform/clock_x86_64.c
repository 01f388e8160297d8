/*
 * clock_x86_64.c — the TSC as collector clock. The hot path reads it with
 * plain rdtsc (strobe__now in strobe.h); this file only reports whether the
 * CPU declares it invariant (CPUID leaf 0x80000007, EDX bit 8).
 */
#include <cpuid.h>

#include "clock.h"

const char *strobe__clock_source(int *invariant) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  *invariant = 0;
  if ((unsigned)__get_cpuid_max(0x80000000u, 0) >= 0x80000007u) {
    __cpuid(0x80000007u, a, b, c, d);
    *invariant = (d >> 8) & 1u;
  }
  return "tsc";
}

/* None stated: the TSC's rate is measured against CLOCK_MONOTONIC. */
double strobe__clock_stated_ns_per_tick(void) { return 0.0; }
