/*
 * clock_aarch64.c — the generic timer's virtual count (CNTVCT_EL0) as
 * collector clock. The architecture defines it as a constant-rate,
 * system-wide counter, so it is invariant by construction.
 */
#include "clock.h"

const char *strobe__clock_source(int *invariant) {
  *invariant = 1;
  return "cntvct";
}
