/*
 * clock.h — the collector clock: which source the hot path reads, and how its
 * ticks convert to nanoseconds. One implementation file per platform, chosen
 * by the build (clock_x86_64.c, clock_aarch64.c, clock_posix.c).
 *
 * Calibration runs once, off the hot path, the first time any consumer needs
 * it (about 5 ms of measuring against CLOCK_MONOTONIC). It never runs on an
 * instrumented thread's scope path.
 */
#ifndef STROBE_PLATFORM_CLOCK_H
#define STROBE_PLATFORM_CLOCK_H

#include <stdint.h>
#include <time.h>

typedef struct strobe__clock_info {
  const char *source;      /* "tsc", "cntvct", "monotonic" */
  int invariant;           /* 1 when the source is known to tick at a constant rate across cores and sleep */
  double ns_per_tick;      /* the stated rate when it agrees with CLOCK_MONOTONIC, else measured against it
                            * (strobe__clock_pick_rate; strobe__clock_rate says which) */
  uint64_t epoch_ticks;    /* ticks at the collector epoch (process clock creation) */
  uint64_t epoch_mono_ns;  /* CLOCK_MONOTONIC at the same instant */
} strobe__clock_info;

/* Calibrates on first call (thread-safe); afterwards returns the stored result. */
const strobe__clock_info *strobe__clock(void);
/* Where strobe__clock()'s ns_per_tick came from: "stated" (CNTFRQ_EL0, or
 * exact for "monotonic") or "measured"; static storage. Calibrates too. */
const char *strobe__clock_rate(void);
/* CLOCK_MONOTONIC in nanoseconds, and in milliseconds. Inline, so that
 * libstrobe_server, which sees none of libstrobe's hidden symbols, reads the
 * same clock without a copy of its own. */
static inline uint64_t strobe__mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static inline uint64_t strobe__mono_ms(void) { return strobe__mono_ns() / 1000000u; }
/* The clock's epoch on the wall clock: CLOCK_REALTIME (ns since 1970) read
 * beside CLOCK_MONOTONIC now, moved back by the monotonic time since the
 * epoch (a capture's header carries it: docs/capture-format.md, tag 30).
 * Correct to the wall clock's own accuracy at the time of the call. */
static inline uint64_t strobe__unix_ns_at_mono(uint64_t mono_ns) {
  struct timespec rt;
  uint64_t m0 = strobe__mono_ns();
  clock_gettime(CLOCK_REALTIME, &rt);
  uint64_t m1 = strobe__mono_ns();
  uint64_t real = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec, mid = m0 + (m1 - m0) / 2;
  return mid >= mono_ns ? real - (mid - mono_ns) : real + (mono_ns - mid);
}
/* Source-specific facts: name and invariance. Implemented per platform. */
const char *strobe__clock_source(int *invariant);
/* The rate the platform states for its tick source, in ns per tick, or 0
 * when it states none: aarch64's CNTFRQ_EL0 (0 when firmware left it 0),
 * exactly 1 for CLOCK_MONOTONIC, none for the TSC (its rate is not reliably
 * stated: CPUID leaf 0x15 is often absent). Implemented per platform. */
double strobe__clock_stated_ns_per_tick(void);
/* The rate to use, given the stated one (0: none) and one measured against
 * CLOCK_MONOTONIC over the calibration: the stated rate when it is within
 * STROBE__CLOCK_RATE_TOLERANCE of the measurement (it is exact; the
 * measurement carries clock_gettime's jitter), else the measured one, since
 * firmware that programs CNTFRQ_EL0 wrongly exists. *how says which,
 * "stated" or "measured" (docs/platforms.md §Linux aarch64). */
#define STROBE__CLOCK_RATE_TOLERANCE 0.01 /* 1 %: a 5 ms calibration is good to ~1e-5; wrong firmware values are off by far more */
double strobe__clock_pick_rate(double stated, double measured, const char **how);

#endif
