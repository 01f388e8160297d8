/*
 * traced_cxx.cpp — the C++ part of test_calltrace's traced program: a
 * function in a namespace with a C++ signature, whose symbol is mangled, so
 * the capture must show it demangled ("calltrace_demo::Shape::area(int)").
 */
#include "calltrace/traced.h"

namespace calltrace_demo {
struct Shape {
  __attribute__((noinline)) static int area(int side) { return side * side; }
};
}  // namespace calltrace_demo

extern "C" __attribute__((noinline)) int traced_cxx_entry(int x) { return calltrace_demo::Shape::area(x); }
