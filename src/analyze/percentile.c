/*
 * percentile.c — nearest-rank percentiles: the value at rank ceil(p·n), an
 * actual observation rather than an interpolation, so a p99 over 12 samples
 * is honestly the maximum and says so through its n.
 */
#include "analyze/percentile.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* A double's bits as a key whose unsigned order is the numbers' order. */
static inline uint64_t key_of(double v) {
  uint64_t k;
  memcpy(&k, &v, sizeof k);
  return k >> 63 ? ~k : k | (1ull << 63);
}
static inline double value_of(uint64_t k) {
  k = k >> 63 ? k & ~(1ull << 63) : ~k;
  double v;
  memcpy(&v, &k, sizeof v);
  return v;
}

#define RADIX_BITS 11
#define RADIX_PASSES 6 /* 66 bits >= 64 */
#define RADIX_MIN 1024 /* below it qsort is as fast */

/* Sorts doubles ascending by their keys: an LSD radix sort, 11 bits a pass,
 * passes where every key has the same digit skipped. A report sorts a
 * capture's frame intervals and durations here (hundreds of thousands), where
 * qsort's comparison calls were a sixth of `strobe report`'s time. Returns
 * nonzero when its scratch could not be allocated (nothing changed). */
static int radix_sort(double *values, size_t n) {
  uint64_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  size_t(*count)[1u << RADIX_BITS] = calloc(RADIX_PASSES, sizeof *count);
  if (!a || !b || !count) {
    free(a), free(b), free(count);
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    uint64_t k = a[i] = key_of(values[i]);
    for (int p = 0; p < RADIX_PASSES; p++) count[p][(k >> (p * RADIX_BITS)) & ((1u << RADIX_BITS) - 1)]++;
  }
  for (int p = 0; p < RADIX_PASSES; p++) {
    size_t *c = count[p], sum = 0;
    if (c[(a[0] >> (p * RADIX_BITS)) & ((1u << RADIX_BITS) - 1)] == n) continue; /* one digit: order unchanged */
    for (size_t d = 0; d < (1u << RADIX_BITS); d++) {
      size_t k = c[d];
      c[d] = sum;
      sum += k;
    }
    for (size_t i = 0; i < n; i++) b[c[(a[i] >> (p * RADIX_BITS)) & ((1u << RADIX_BITS) - 1)]++] = a[i];
    uint64_t *t = a;
    a = b;
    b = t;
  }
  for (size_t i = 0; i < n; i++) values[i] = value_of(a[i]);
  free(a), free(b), free(count);
  return 0;
}

/* The radix sort's order: by key (-0 before +0, NaNs by their bits). */
static int cmp_key(const void *a, const void *b) {
  uint64_t x = key_of(*(const double *)a), y = key_of(*(const double *)b);
  return (x > y) - (x < y);
}

/* Sorts values ascending: radix for large sets, qsort below RADIX_MIN (or
 * when the radix sort's scratch could not be allocated). */
static void sort_values(double *values, size_t n) {
  if (n < RADIX_MIN || radix_sort(values, n)) qsort(values, n, sizeof *values, cmp_double);
}

double strobe__rank_of(double *values, size_t n, double p) {
  if (n < RADIX_MIN) { /* sorted as strobe__dist_of sorts them */
    sort_values(values, n);
    return n ? rank(values, n, p) : 0;
  }
  size_t r = (size_t)ceil(p * (double)n); /* as rank() */
  if (r < 1) r = 1;
  if (r > n) r = n;
  /* Quickselect on the radix sort's keys, so the element is the one its
   * order puts at rank r (equal keys are equal doubles); the pivot is the
   * median of the range's first, middle and last. About 3n key reads; past
   * 64 rounds (an input built against the pivot rule) the range left is
   * sorted instead, in that order. */
  size_t lo = 0, hi = n - 1, want = r - 1;
  for (int rounds = 0; lo < hi; rounds++) {
    if (rounds == 64) {
      qsort(values + lo, hi - lo + 1, sizeof *values, cmp_key);
      break;
    }
    size_t mid = lo + (hi - lo) / 2;
    uint64_t a = key_of(values[lo]), b = key_of(values[mid]), c = key_of(values[hi]);
    uint64_t pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
    size_t i = lo, j = hi;
    for (;;) { /* Hoare: then [lo, j] <= pivot <= [j + 1, hi], lo <= j < hi */
      while (key_of(values[i]) < pivot) i++;
      while (key_of(values[j]) > pivot) j--;
      if (i >= j) break;
      double t = values[i];
      values[i] = values[j];
      values[j] = t;
      i++, j--;
    }
    if (want <= j) hi = j;
    else lo = j + 1;
  }
  return values[want];
}

strobe__dist strobe__dist_of(double *values, size_t n) {
  strobe__dist d = {0};
  if (n == 0) return d;
  sort_values(values, n);
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
