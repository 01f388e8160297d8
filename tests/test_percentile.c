/*
 * test_percentile.c — nearest-rank order statistics (src/analyze/
 * percentile.h): strobe__dist_of sorts its values in place and returns the
 * value at rank ceil(p·n) for p50, p95 and p99, with min, max, total and
 * mean. Large sets take the radix sort and small ones qsort: both must give
 * the numbers' order exactly (negative values, -0 and +0, duplicates,
 * infinities, values a bit apart) and the same figures. strobe__rank_of
 * selects one rank without sorting and gives the same value bit for bit.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/percentile.h"
#include "support/harness.h"

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_u64(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* 1..n in a shuffled order: every rank is known. */
static void ranks_of(size_t n) {
  double *v = malloc(n * sizeof *v);
  CHECK(v != NULL);
  if (!v) return;
  for (size_t i = 0; i < n; i++) v[i] = (double)(i + 1);
  for (size_t i = n; i > 1; i--) {
    size_t j = next_u64() % i;
    double t = v[i - 1];
    v[i - 1] = v[j];
    v[j] = t;
  }
  strobe__dist d = strobe__dist_of(v, n);
  CHECK_EQ_INT(d.n, n);
  CHECK(d.p50 == ceil(0.50 * (double)n));
  CHECK(d.p95 == ceil(0.95 * (double)n));
  CHECK(d.p99 == ceil(0.99 * (double)n));
  CHECK(d.min == 1 && d.max == (double)n);
  CHECK(d.total == (double)n * (double)(n + 1) / 2);
  for (size_t i = 0; i < n; i++) CHECK(v[i] == (double)(i + 1));
  free(v);
}

static void test_ranks_small(void) {
  ranks_of(1);
  ranks_of(12);
  ranks_of(1000);
}

static void test_ranks_large(void) {
  ranks_of(1024);
  ranks_of(100003);
}

/* Mixed signs, both zeros, duplicates, infinities and close values: in place,
 * in exactly the order a comparison sort gives, bit for bit. */
static void test_order_exact(void) {
  size_t n = 50000;
  double *v = malloc(n * sizeof *v), *want = malloc(n * sizeof *want);
  CHECK(v != NULL && want != NULL);
  if (!v || !want) return;
  for (size_t i = 0; i < n; i++) {
    uint64_t r = next_u64();
    switch (r % 8) {
      case 0: v[i] = -(double)(r >> 20) * 1e-3; break;
      case 1: v[i] = 0.0; break;
      case 2: v[i] = (double)(r % 5); break; /* duplicates */
      case 3: v[i] = r % 2 ? INFINITY : -INFINITY; break;
      case 4: v[i] = 1.0 + (double)(r % 1000) * 1e-15; break; /* a few ulps apart */
      case 5: v[i] = -1e300 * (double)(r % 3 + 1); break;
      default: v[i] = (double)(r >> 11) * 1e-6; break;
    }
  }
  memcpy(want, v, n * sizeof *v);
  qsort(want, n, sizeof *want, by_value);
  strobe__dist d = strobe__dist_of(v, n);
  size_t wrong = 0;
  for (size_t i = 0; i < n; i++) wrong += v[i] != want[i];
  CHECK_EQ_INT(wrong, 0);
  CHECK(d.min == want[0] && d.max == want[n - 1]);
  CHECK(d.p50 == want[(size_t)ceil(0.50 * (double)n) - 1]);
  CHECK(d.p95 == want[(size_t)ceil(0.95 * (double)n) - 1]);
  CHECK(d.p99 == want[(size_t)ceil(0.99 * (double)n) - 1]);
  free(v);
  free(want);
}

/* strobe__rank_of: the value strobe__dist_of's sort puts at rank ceil(p·n),
 * bit for bit, for every p, on shuffled, sorted, reversed, zig-zag and
 * few-valued sets, small (sorted) and large (selected). */
static void rank_of_set(double *v, size_t n, double *sorted, double *scratch) {
  memcpy(sorted, v, n * sizeof *v);
  strobe__dist_of(sorted, n);
  static const double ps[] = {0.001, 0.25, 0.5, 0.95, 0.99, 1.0};
  for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
    memcpy(scratch, v, n * sizeof *v);
    size_t r = (size_t)ceil(ps[k] * (double)n);
    double got = strobe__rank_of(scratch, n, ps[k]), want = sorted[(r ? r : 1) - 1];
    CHECK(memcmp(&got, &want, sizeof got) == 0);
  }
}

static void test_rank_of(void) {
  size_t max = 200000;
  double *v = malloc(max * sizeof *v), *sorted = malloc(max * sizeof *v), *scratch = malloc(max * sizeof *v);
  REQUIRE(v && sorted && scratch);
  static const size_t sizes[] = {1, 2, 3, 17, 1023, 1024, 1025, 4096, 100003};
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
    size_t n = sizes[si];
    for (int shape = 0; shape < 5; shape++) {
      for (size_t i = 0; i < n; i++) {
        uint64_t r = next_u64();
        v[i] = shape == 0   ? (double)(r >> 11) * 1e-3 - 4e12 /* shuffled, both signs */
               : shape == 1 ? (double)i                      /* sorted */
               : shape == 2 ? (double)(n - i)                /* reversed */
               : shape == 3 ? (double)(r % 3) - 1.0          /* three values: long runs of ties */
                            : (r % 4 ? 0.0 : -0.0);          /* both zeros only */
      }
      rank_of_set(v, n, sorted, scratch);
    }
  }
  /* A zig-zag of the smallest and largest values left. */
  size_t n = max;
  for (size_t i = 0; i < n; i++) v[i] = (double)(i % 2 ? n - i : i);
  rank_of_set(v, n, sorted, scratch);
  CHECK(strobe__rank_of(v, 0, 0.5) == 0);
  free(v);
  free(sorted);
  free(scratch);
}

static void test_empty(void) {
  strobe__dist d = strobe__dist_of(NULL, 0);
  CHECK(d.n == 0 && d.p50 == 0 && d.max == 0 && d.total == 0);
}

#define CASES(X) X(ranks_small) X(ranks_large) X(order_exact) X(rank_of) X(empty)
HARNESS_MAIN(CASES)
