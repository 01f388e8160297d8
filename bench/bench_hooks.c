/*
 * bench_hooks.c — what building with -finstrument-functions costs while call
 * tracing is off (docs/exploration.md §Cost): the compiler's two hook calls
 * per call and libstrobe's hooks returning after one relaxed load. The
 * call-heavy workload (bench/calltrace/work.c: naive Fibonacci, every call
 * almost nothing but a call) is built plain and with the hooks by the
 * project's compiler (GCC here) and, when clang is installed, by clang, plain,
 * with -finstrument-functions and with -finstrument-functions-after-inlining
 * (bench/CMakeLists.txt). One run, one thread, tracing off:
 *
 *   hooks_off_ns_plain_CC / hooks_off_ns_CC    ns per call, plain and with the hooks
 *   hooks_off_ratio_CC                         their ratio (CC: cc, the project's compiler;
 *                                              clang; clang_after_inlining)
 *
 * Each figure is the minimum over ROUNDS rounds of fib(ROUND_N); nothing
 * is asserted (the ratio is the documented figure, not a budget).
 */
#include <stdint.h>
#include <stdio.h>

#include "floor.h"
#include "strobe/trace.h"

uint64_t work_cc_plain(uint32_t n);
uint64_t work_cc_hooks(uint32_t n);
#if defined(STROBE_BENCH_CLANG)
uint64_t work_clang_plain(uint32_t n);
uint64_t work_clang_hooks(uint32_t n);
uint64_t work_clang_after(uint32_t n);
#endif

#define ROUND_N 22u /* fib(22): 57,313 calls */
#define ROUNDS 200

static volatile uint64_t g_sink;

static double min_ns_per_call(uint64_t (*fn)(uint32_t)) {
  double calls = 0, a = 1, b = 1;
  for (uint32_t i = 2; i <= ROUND_N; i++, a = b, b = calls) calls = a + b + 1;
  double best = 1e300;
  for (int r = 0; r < ROUNDS; r++) {
    uint64_t t0 = fx_now_ns();
    g_sink += fn(ROUND_N);
    double ns = (double)(fx_now_ns() - t0) / calls;
    if (ns < best) best = ns;
  }
  return best;
}

static void pair(const char *cc, uint64_t (*plain)(uint32_t), uint64_t (*hooks)(uint32_t)) {
  double p = min_ns_per_call(plain), h = min_ns_per_call(hooks);
  printf("BENCH hooks_off_ns_plain_%s %.3f ns\n", cc, p);
  printf("BENCH hooks_off_ns_%s %.3f ns\n", cc, h);
  printf("BENCH hooks_off_ratio_%s %.3f x\n", cc, h / p);
}

int main(void) {
  if (strobe_trace_query_desc().all) {
    fprintf(stderr, "bench_hooks: STROBE_TRACE=all is set; this bench measures tracing off\n");
    return 1;
  }
  pair("cc", work_cc_plain, work_cc_hooks);
#if defined(STROBE_BENCH_CLANG)
  pair("clang", work_clang_plain, work_clang_hooks);
  pair("clang_after_inlining", work_clang_plain, work_clang_after);
#else
  printf("bench_hooks: clang not found at configure time: no clang figures\n");
#endif
  return 0;
}
