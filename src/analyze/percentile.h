/*
 * percentile.h — order statistics that always travel with their n.
 */
#ifndef STROBE_ANALYZE_PERCENTILE_H
#define STROBE_ANALYZE_PERCENTILE_H

#include <stddef.h>

typedef struct strobe__dist {
  size_t n;                      /* population the figures were computed over */
  double p50, p95, p99, max, min, mean, total;
} strobe__dist;

/* Sorts values in place and summarizes them (nearest-rank percentiles). n == 0 gives all zeros. */
strobe__dist strobe__dist_of(double *values, size_t n);
/* The nearest-rank p-quantile (0 < p <= 1) of values alone, the value
 * strobe__dist_of's sort puts at that rank, in linear time: values are
 * reordered, not sorted. n == 0 gives 0. */
double strobe__rank_of(double *values, size_t n, double p);

#endif
