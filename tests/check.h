/*
 * check.h — the tests' assertion macros. A failed check prints file:line and
 * what it compared, then exits 1, so CTest reports the test as failed. They
 * stay on whatever NDEBUG says (unlike assert) and must never be used in the
 * library itself.
 */
#ifndef STROBE_TESTS_CHECK_H
#define STROBE_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                    \
  do {                                                                 \
    if (!(cond)) {                                                     \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                         \
    }                                                                  \
  } while (0)

/* Integers of any type, compared and printed as long long. */
#define CHECK_EQ_INT(a, b)                                                          \
  do {                                                                              \
    long long check_a_ = (long long)(a), check_b_ = (long long)(b);                 \
    if (check_a_ != check_b_) {                                                     \
      fprintf(stderr, "%s:%d: CHECK_EQ_INT(%s, %s) failed: %lld != %lld\n", __FILE__, \
              __LINE__, #a, #b, check_a_, check_b_);                                \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

/* Unsigned 64-bit counts, compared and printed as unsigned long long. */
#define CHECK_EQ_U64(a, b)                                                               \
  do {                                                                                   \
    unsigned long long check_a_ = (unsigned long long)(a), check_b_ = (unsigned long long)(b); \
    if (check_a_ != check_b_) {                                                          \
      fprintf(stderr, "%s:%d: CHECK_EQ_U64(%s, %s) failed: %llu != %llu\n", __FILE__,    \
              __LINE__, #a, #b, check_a_, check_b_);                                     \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

/* Doubles within an absolute tolerance (NaN never passes). */
#define CHECK_NEAR(a, b, eps)                                                          \
  do {                                                                                 \
    double check_a_ = (double)(a), check_b_ = (double)(b);                             \
    double check_d_ = check_a_ > check_b_ ? check_a_ - check_b_ : check_b_ - check_a_; \
    if (!(check_d_ <= (double)(eps))) { /* no fabs: tests need not link libm */         \
      fprintf(stderr, "%s:%d: CHECK_NEAR(%s, %s, %s) failed: %.17g vs %.17g\n", __FILE__, \
              __LINE__, #a, #b, #eps, check_a_, check_b_);                             \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)

#endif
