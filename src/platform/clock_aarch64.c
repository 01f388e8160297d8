/*
 * clock_aarch64.c — the generic timer's virtual count (CNTVCT_EL0) as
 * collector clock; the hot path reads it with `mrs` (strobe__now in
 * strobe.h). The architecture defines it as a constant-rate, system-wide
 * counter, so it is invariant by construction, and CNTFRQ_EL0 states its
 * frequency in Hz: that is the rate used, unless it is 0 (firmware must
 * program it and some does not) or disagrees with the calibration against
 * CLOCK_MONOTONIC, which is then used instead (strobe__clock_pick_rate,
 * docs/platforms.md §Linux aarch64).
 *
 * Must never: be compiled for another processor (CMakeLists.txt picks one
 * clock file per target), or touch the hot path.
 */
#include <stdint.h>

#include "clock.h"

const char *strobe__clock_source(int *invariant) {
  *invariant = 1;
  return "cntvct";
}

double strobe__clock_stated_ns_per_tick(void) {
  uint64_t hz;
  __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(hz));
  /* Only the low 32 bits are the frequency (the register is 64 bits wide). */
  hz &= 0xffffffffu;
  return hz ? 1e9 / (double)hz : 0.0;
}
