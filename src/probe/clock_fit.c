/*
 * clock_fit.c — offset and drift of an external clock from calibration
 * pairs (clock_fit.h; docs/gpu.md §Clock domains).
 *
 * Owns: the arithmetic only. Every difference is taken in 64-bit integers
 * against an anchor before it becomes a double, so a TSC in the 10^15s and
 * a GPU counter in the 10^12s lose no precision.
 * Must never: allocate, lock or read a clock.
 */
#include "probe/clock_fit.h"

#include <math.h>
#include <string.h>

static double diff(uint64_t a, uint64_t b) { return a >= b ? (double)(a - b) : -(double)(b - a); }

int strobe__clock_fit_pairs(const strobe__clock_pair *p, uint32_t n, double nominal_rate, strobe__clock_fit *fit) {
  memset(fit, 0, sizeof *fit);
  if (n == 0 || !(nominal_rate > 0) || !isfinite(nominal_rate)) return -1;
  fit->device0 = p[0].device;
  fit->host0 = p[0].before;
  fit->device_min = fit->device_max = p[0].device;
  double sw = 0, sx = 0, sy = 0;
  for (uint32_t i = 0; i < n; i++) {
    double x = diff(p[i].device, fit->device0);
    double hw = 0.5 * (double)(p[i].after - p[i].before);
    double y = diff(p[i].before, fit->host0) + hw;
    double w = 1.0 / (hw < 0.5 ? 0.25 : hw * hw);
    sw += w;
    sx += w * x;
    sy += w * y;
    if (p[i].device < fit->device_min) fit->device_min = p[i].device;
    if (p[i].device > fit->device_max) fit->device_max = p[i].device;
  }
  double mx = sx / sw, my = sy / sw, sxx = 0, sxy = 0;
  for (uint32_t i = 0; i < n; i++) {
    double x = diff(p[i].device, fit->device0) - mx;
    double hw = 0.5 * (double)(p[i].after - p[i].before);
    double y = diff(p[i].before, fit->host0) + hw - my;
    double w = 1.0 / (hw < 0.5 ? 0.25 : hw * hw);
    sxx += w * x * x;
    sxy += w * x * y;
  }
  /* A rate needs two device times apart; otherwise the nominal one. */
  fit->rate = sxx > 0 && fit->device_max > fit->device_min ? sxy / sxx : nominal_rate;
  if (!(fit->rate > 0)) fit->rate = nominal_rate; /* pairs that contradict a running clock */
  fit->offset = my - fit->rate * mx;
  double bound = 0;
  for (uint32_t i = 0; i < n; i++) {
    double hw = 0.5 * (double)(p[i].after - p[i].before);
    double y = diff(p[i].before, fit->host0) + hw;
    double r = fabs(y - (fit->offset + fit->rate * diff(p[i].device, fit->device0)));
    if (r + hw > bound) bound = r + hw;
  }
  fit->bound = bound < 0.5 ? 0.5 : bound; /* a tick's rounding at least */
  fit->pairs = n;
  return 0;
}

uint64_t strobe__clock_fit_map(const strobe__clock_fit *fit, uint64_t device, double *bound) {
  if (!fit->pairs) {
    if (bound) *bound = INFINITY;
    return 0;
  }
  double h = diff(fit->host0, 0) + fit->offset + fit->rate * diff(device, fit->device0);
  if (bound) {
    double past = 0;
    if (device < fit->device_min) past = diff(fit->device_min, device);
    if (device > fit->device_max) past = diff(device, fit->device_max);
    double range = diff(fit->device_max, fit->device_min);
    double slope_err = range > 0 ? 2.0 * fit->bound / range : STROBE__CLOCK_DRIFT_ALLOWANCE * fit->rate;
    *bound = fit->bound + past * slope_err;
  }
  if (!(h > 0)) return 0;
  if (h >= 18446744073709551615.0) return UINT64_MAX;
  /* Whole ticks near 2^64 are beyond a double's precision: add the
   * fractional part to the anchor in integers. */
  double rel = fit->offset + fit->rate * diff(device, fit->device0);
  double r = floor(rel + 0.5);
  return r >= 0 ? fit->host0 + (uint64_t)r : fit->host0 - (uint64_t)(-r);
}
