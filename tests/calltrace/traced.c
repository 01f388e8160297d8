/*
 * traced.c — a small program of known shape, compiled with call tracing
 * (strobe_trace_calls, tests/CMakeLists.txt) for test_calltrace: a public
 * function calling a static one twice and the C++ unit's namespaced
 * function, recursion to a known depth, and a function the tests exclude by
 * name. Only the calls matter; the arithmetic keeps the compiler from
 * folding them away.
 */
#include "calltrace/traced.h"

volatile int traced_sink;

/* GCC may clone a static function it can see every call of (leaf_static.isra.0):
 * noipa keeps the one function the test names. */
#if defined(__clang__)
#define KEEP __attribute__((noinline))
#else
#define KEEP __attribute__((noinline, noipa))
#endif

KEEP static int leaf_static(int x) {
  traced_sink += x;
  return x + 1;
}

KEEP int traced_excluded_helper(int x) { return leaf_static(x) * 2; }

KEEP int traced_root(int x) {
  int a = leaf_static(x);
  int b = leaf_static(a);
  return traced_cxx_entry(b) + traced_excluded_helper(a);
}

/* The store after the call keeps it a real recursion: Clang turns `1 + f(n - 1)`
 * into a loop, which would leave one call to trace. */
KEEP int traced_recurse(int n) {
  if (n <= 0) return 0;
  int depth = 1 + traced_recurse(n - 1);
  traced_sink += depth;
  return depth;
}

KEEP void traced_loop(unsigned n) {
  for (unsigned i = 0; i < n; i++) traced_sink += leaf_static((int)i);
}

KEEP int traced_call_back(void (*fn)(void), int x) {
  fn();
  return leaf_static(x);
}
