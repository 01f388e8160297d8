/*
 * clock_fit.h — fitting an external clock onto the host timeline
 * (docs/gpu.md §Clock domains): offset and drift from calibration pairs,
 * each a device time read between two host times, weighted by its width,
 * with an error bound. Pure functions over arrays: the live domains
 * (src/probe/gpu.c) fit their sliding window with them, and the capture
 * reader (src/format/capture_reader.c) fits the pairs around each device
 * time it maps, so a later, better fit improves old data.
 *
 * Must never: allocate, lock or read a clock; every input is an argument.
 */
#ifndef STROBE_PROBE_CLOCK_FIT_H
#define STROBE_PROBE_CLOCK_FIT_H

#include <stdint.h>

/* One calibration pair: the device read `device` between host ticks
 * `before` and `after` (after >= before). */
typedef struct strobe__clock_pair {
  uint64_t device;
  uint64_t before, after;
} strobe__clock_pair;

/* host(device) = host0 + offset + rate * (device - device0), in host ticks. */
typedef struct strobe__clock_fit {
  uint64_t device0;      /* anchor: the first pair's device time */
  uint64_t host0;        /* anchor: the first pair's `before` */
  double offset;         /* host ticks at device0, relative to host0 */
  double rate;           /* host ticks per device tick */
  double bound;          /* host ticks: the fit's error bound inside [device_min, device_max] */
  uint64_t device_min, device_max; /* the device range the pairs cover */
  uint32_t pairs;        /* pairs fitted (0: no fit) */
} strobe__clock_fit;

/* Relative drift allowed past the pairs with a single pair, when no rate
 * was fitted: 1000 ppm, above any crystal's tolerance (typically 20-100 ppm). */
#define STROBE__CLOCK_DRIFT_ALLOWANCE 1e-3

/* Fits the n pairs (n >= 1, in increasing device order) with `nominal_rate`
 * host ticks per device tick as the rate when they cannot give one (one
 * pair, or all at the same device time). Weighted least squares of each
 * pair's midpoint, weight 1 / half-width^2 (half a tick at least); the
 * bound is the largest of |residual| + half-width over the pairs: where
 * the true relation is a line through every pair's interval, the error of
 * the fitted line is linear in the device time, so inside the pairs' range
 * it is at most its value at one of them. Returns 0, or -1 for n == 0 or a
 * rate that is not > 0 (then *fit is zeroed). */
int strobe__clock_fit_pairs(const strobe__clock_pair *p, uint32_t n, double nominal_rate, strobe__clock_fit *fit);

/* Maps a device time with a fit: host ticks (rounded; clamped at 0) and,
 * in *bound (may be NULL), its error bound in host ticks: the fit's own
 * inside the pairs' range, growing with the distance past it (by the
 * fitted slope's uncertainty, 2 * bound / range, or by
 * STROBE__CLOCK_DRIFT_ALLOWANCE for a single pair). */
uint64_t strobe__clock_fit_map(const strobe__clock_fit *fit, uint64_t device, double *bound);

#endif
