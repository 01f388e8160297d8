/*
 * frame_rate.c — first-to-last and steady (median interval) frame rates of
 * a series of frame boundaries (frame_rate.h). Pure arithmetic: no
 * allocation, no knowledge of where the boundaries came from.
 */
#include "analyze/frame_rate.h"

#include "analyze/percentile.h"

strobe__frame_rate strobe__frame_rate_of(const double *t, size_t n, double *scratch) {
  strobe__frame_rate r = {0};
  if (n < 2) return r;
  for (size_t i = 1; i < n; i++) scratch[i - 1] = t[i] - t[i - 1];
  r.frames = (uint64_t)(n - 1);
  r.span_ns = t[n - 1] - t[0];
  r.fps_first_to_last = r.span_ns > 0 ? (double)r.frames / (r.span_ns / 1e9) : 0;
  r.median_interval_ns = strobe__rank_of(scratch, n - 1, 0.50);
  r.fps_steady = r.median_interval_ns > 0 ? 1e9 / r.median_interval_ns : 0;
  return r;
}
