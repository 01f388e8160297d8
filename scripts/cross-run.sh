#!/usr/bin/env bash
# cross-run.sh — owns one cross pass: configures and builds Strobe for
# another processor or OS in its own build directory with that target's
# toolchain file (cmake/toolchain-<triple>.cmake), building only what its
# tests need (the library, the server where it builds, the CLI and
# tests/cross's programs), then runs those tests under the target's emulator.
# Exit status is CTest's, so the outer CTest test (cross_aarch64,
# cross_windows) fails if any inner test fails. Like
# scripts/sanitizer-run.sh for the sanitizers.
#
# The Windows pass (x86_64-w64-mingw32) runs its programs under wine64 in a
# prefix inside <build dir> (tests/cross/CMakeLists.txt >>wine).
#
# usage: cross-run.sh <triple> <source dir> <build dir> <host strobe> <host make_capture> <host cross_app>
#   the three host programs are the native build's: the host's `strobe`
#   reads the target's captures, the other two write the host's captures
#   they are compared with (tests/cross/compare_reports.py)
# env:   STROBE_CROSS_JOBS  build and ctest parallelism, default 2
set -euo pipefail

if [ $# -ne 6 ]; then
  echo "usage: $0 <triple> <source dir> <build dir> <host strobe> <host make_capture> <host cross_app>" >&2
  exit 2
fi
triple=$1 src=$2 dir=$3
toolchain="$src/cmake/toolchain-$triple.cmake"
if [ ! -f "$toolchain" ]; then
  echo "$0: no toolchain file for '$triple' ($toolchain)" >&2
  exit 2
fi
jobs=${STROBE_CROSS_JOBS:-2}
mkdir -p "$dir"

# ccache when the native build uses it: a second run recompiles nothing.
launcher=()
if command -v ccache > /dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# Test dependencies are the outer build's to require (tests/CMakeLists.txt
# >>cross); the examples, benches, Vulkan library and Python binding are
# not what this pass tests.
cmake -S "$src" -B "$dir" \
  -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "${launcher[@]}" \
  -DSTROBE_BUILD_TESTS=ON \
  -DSTROBE_BUILD_EXAMPLES=OFF \
  -DSTROBE_BUILD_BENCH=OFF \
  -DSTROBE_BUILD_VULKAN=OFF \
  -DSTROBE_SANITIZER_TESTS=OFF \
  -DSTROBE_REQUIRE_TEST_DEPS=OFF \
  -DSTROBE_CROSS_HOST_STROBE="$4" \
  -DSTROBE_CROSS_HOST_MAKE_CAPTURE="$5" \
  -DSTROBE_CROSS_HOST_APP="$6" > "$dir/configure.log" 2>&1 || { cat "$dir/configure.log" >&2; exit 1; }
t0=$(date +%s)
cmake --build "$dir" -j"$jobs"
t1=$(date +%s)
echo "cross-run: $triple built in $((t1 - t0)) s"
# An empty selection is a failure: a cross pass that ran nothing proves nothing.
rc=0
ctest --test-dir "$dir" --output-on-failure --no-tests=error -j"$jobs" || rc=$?
echo "cross-run: $triple tests ran in $(($(date +%s) - t1)) s"
exit "$rc"
