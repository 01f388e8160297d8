/*
 * percentile.c — nearest-rank percentiles: the value at rank ceil(p·n), an
 * actual observation rather than an interpolation, so a p99 over 12 samples
 * is honestly the maximum and says so through its n.
 */
#include "analyze/percentile.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double rank(const double *sorted, size_t n, double p) {
  size_t r = (size_t)ceil(p * (double)n);
  if (r < 1) r = 1;
  if (r > n) r = n;
  return sorted[r - 1];
}

strobe__dist strobe__dist_of(double *values, size_t n) {
  strobe__dist d = {0};
  if (n == 0) return d;
  qsort(values, n, sizeof *values, cmp_double);
  d.n = n;
  d.p50 = rank(values, n, 0.50);
  d.p95 = rank(values, n, 0.95);
  d.p99 = rank(values, n, 0.99);
  d.min = values[0];
  d.max = values[n - 1];
  for (size_t i = 0; i < n; i++) d.total += values[i];
  d.mean = d.total / (double)n;
  return d;
}
