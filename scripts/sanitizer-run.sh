#!/usr/bin/env bash
# sanitizer-run.sh — owns one sanitizer pass: configures and builds the
# project with STROBE_SANITIZE=<mode> in its own build directory, then runs
# that build's tests (minus those labelled nosan). Exit status is CTest's, so
# the outer CTest test (sanitizer_asan / sanitizer_tsan) fails if any inner
# test fails.
#
# usage: sanitizer-run.sh <address|thread> <source dir> <build dir>
# env:   STROBE_SAN_CTEST_ARGS  ctest selection, default "-LE nosan"
#        STROBE_SAN_JOBS        build and ctest parallelism, default 2
set -euo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 <address|thread> <source dir> <build dir>" >&2
  exit 2
fi
mode=$1 src=$2 dir=$3
case "$mode" in
  address | thread) ;;
  *) echo "$0: mode must be address or thread, not '$mode'" >&2; exit 2 ;;
esac

jobs=${STROBE_SAN_JOBS:-2}
read -r -a select <<< "${STROBE_SAN_CTEST_ARGS:--LE nosan}"

# Clang when present: it has both sanitizers and libFuzzer (fuzz/ is built
# only with Clang). The compiler is fixed at first configure of a build dir.
if command -v clang > /dev/null; then cc=clang cxx=clang++; else cc=gcc cxx=g++; fi

# Stop at the first report, with a stack, instead of carrying on.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}

# Debug keeps assert() live in the library too, and STROBE_SANITIZE turns on
# the library's invariant checks (STROBE_ASSERT, docs/invariants.md);
# test_invariants fails if they are off. -O2 -g come from CMakeLists.
# No test runs a benchmark under a sanitizer (their budgets are the plain
# build's): the ASan build still compiles them, so Clang checks their code
# once; the TSan build skips them.
benches=ON
[ "$mode" = thread ] && benches=OFF
CC=$cc CXX=$cxx cmake -S "$src" -B "$dir" \
  -DCMAKE_BUILD_TYPE=Debug \
  -DSTROBE_SANITIZE="$mode" \
  -DSTROBE_BUILD_TESTS=ON \
  -DSTROBE_BUILD_BENCH="$benches" \
  -DSTROBE_SANITIZER_TESTS=OFF
cmake --build "$dir" -j"$jobs"
# An empty selection is a failure: a sanitizer pass that ran nothing proves nothing.
rc=0
ctest --test-dir "$dir" --output-on-failure --no-tests=error -j"$jobs" "${select[@]}" || rc=$?
# A failing test's output is printed where it failed, in the middle of a long
# log; its last lines are repeated here, at the end, where a log cut to its
# head and tail still shows why.
if [ "$rc" -ne 0 ] && [ -f "$dir/Testing/Temporary/LastTest.log" ]; then
  awk '/^[0-9]+\/[0-9]+ Test: / { name = $3; n = 0; out = 0; next }
       /^Output:$/ { out = 1; next }
       out && /^<end of output>$/ { out = 0; next }
       out && !/^-+$/ { buf[n++ % 25] = $0 }
       /^Test Failed\.$/ || /^Test Failed\./ {
         print "== " name " failed; its last lines:"
         for (i = (n > 25 ? n - 25 : 0); i < n; i++) print "   " buf[i % 25]
       }' "$dir/Testing/Temporary/LastTest.log"
fi
exit "$rc"
