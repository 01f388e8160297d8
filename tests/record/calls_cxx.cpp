/*
 * calls_cxx.cpp — an unmodified C++ program of known call counts for
 * `strobe record` (record_test.py), built with -finstrument-functions and
 * never linked to Strobe: `run N` makes shape::Grid::cell N*N calls,
 * shape::Grid::row N, shape::sum<int> N and shape::Grid::Grid once, named
 * demangled in the capture. `throw N` makes N std::out_of_range exceptions
 * thrown inside a library call (vector::at's throw helper) and N memcmp
 * calls after them, for --libcalls (built with -fno-builtin: memcmp stays a
 * call through the PLT).
 * Must never: link Strobe or call anything of it.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#if defined(__clang__)
#define KEEP __attribute__((noinline))
#else
#define KEEP __attribute__((noinline, noipa))
#endif

namespace shape {
template <typename T> KEEP T sum(const std::vector<T> &v) {
  T s = 0;
  for (const T &x : v) s += x;
  return s;
}

class Grid {
 public:
  KEEP explicit Grid(int n) : n_(n) {}
  KEEP int cell(int r, int c) const { return r * n_ + c; }
  KEEP std::vector<int> row(int r) const {
    std::vector<int> v;
    for (int c = 0; c < n_; c++) v.push_back(cell(r, c));
    return v;
  }

 private:
  int n_;
};
}  // namespace shape

volatile int offset; /* read on every call: no memcmp is folded */

static int throws(int n) {
  std::vector<int> v(3, 1);
  char a[8] = "abc", b[8] = "abd";
  int s = 0;
  for (int i = 0; i < n; i++) {
    try {
      s += v.at(3 + (size_t)offset);
    } catch (const std::out_of_range &) {
      s += std::memcmp(a + offset, b, 3) < 0;
    }
  }
  return s;
}

int main(int argc, char **argv) {
  int n = argc > 2 ? std::atoi(argv[2]) : 10;
  if (argc > 1 && !std::strcmp(argv[1], "throw")) {
    std::printf("%d\n", throws(n));
    return 0;
  }
  shape::Grid g(n);
  long total = 0;
  for (int r = 0; r < n; r++) total += shape::sum(g.row(r));
  std::printf("%ld\n", total);
  return 0;
}
