/*
 * work.c — bench_calltrace's call-heavy workload: a naive Fibonacci, whose
 * every call does almost nothing but call, so a call's cost is all there is
 * to see. Compiled twice (bench/CMakeLists.txt): once with call tracing
 * (WORK_FN = work_traced, strobe_trace_calls) and once without
 * (WORK_FN = work_plain), so one run compares the two.
 */
#include <stdint.h>

uint64_t WORK_FN(uint32_t n);

#if defined(__clang__)
#define KEEP __attribute__((noinline))
#else
#define KEEP __attribute__((noinline, noipa))
#endif

KEEP uint64_t WORK_FN(uint32_t n) { return n < 2 ? n : WORK_FN(n - 1) + WORK_FN(n - 2); }
