#!/usr/bin/env bash
# dist-windows.sh — owns the Windows package (make dist-windows): builds the
# library (libstrobe.dll, its import library libstrobe.dll.a, the static
# libstrobe.a with zstd's libzstd.a beside it) and strobe.exe with
# cmake/toolchain-x86_64-w64-mingw32.cmake in <build dir> (configuring it
# when it has no cache yet; an existing one, such as the cross_windows
# test's, is reused), installs them with the headers, strobe.pc and the CMake
# package into a staging directory, adds README.md and docs/platforms.md, and
# zips it as <out.zip> (one top directory, strobe-<version>-windows-x86_64).
# Must never: put a host (Linux) file into the package, or leave a zip that
# was not written whole (it is written beside, then renamed).
#
# usage: dist-windows.sh <source dir> <build dir> <out.zip>
#   env: STROBE_DIST_JOBS  build parallelism, default 2
set -euo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 <source dir> <build dir> <out.zip>" >&2
  exit 2
fi
src=$(cd "$1" && pwd) dir=$2
mkdir -p "$(dirname "$3")"
out="$(cd "$(dirname "$3")" && pwd)/$(basename "$3")"
jobs=${STROBE_DIST_JOBS:-2}
if [ ! -f "$dir/CMakeCache.txt" ]; then
  launcher=()
  if command -v ccache > /dev/null; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S "$src" -B "$dir" -DCMAKE_TOOLCHAIN_FILE="$src/cmake/toolchain-x86_64-w64-mingw32.cmake" \
    -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" -DSTROBE_BUILD_TESTS=OFF -DSTROBE_BUILD_EXAMPLES=OFF \
    -DSTROBE_BUILD_BENCH=OFF -DSTROBE_BUILD_VULKAN=OFF -DSTROBE_SANITIZER_TESTS=OFF > "$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log" >&2; exit 1; }
fi
cmake --build "$dir" -j"$jobs" --target strobe strobe_static strobe_cli
version=$(sed -n 's/^#define STROBE_VERSION_STRING "\([0-9.]*\)"/\1/p' "$src/include/strobe/strobe.h")
name="strobe-$version-windows-x86_64"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cmake --install "$dir" --prefix "$stage/$name" > /dev/null
cp "$src/README.md" "$stage/$name/README.md"
mkdir -p "$stage/$name/docs"
cp "$src/docs/platforms.md" "$stage/$name/docs/platforms.md"
for f in bin/strobe.exe bin/libstrobe.dll lib/libstrobe.dll.a lib/libstrobe.a lib/libzstd.a include/strobe/strobe.h \
         lib/cmake/strobe/strobeConfig.cmake lib/pkgconfig/strobe.pc; do
  [ -f "$stage/$name/$f" ] || { echo "$0: the install lacks $f" >&2; exit 1; }
done
rm -f "$out.part"
(cd "$stage" && python3 -m zipfile -c "$out.part" "$name")
mv "$out.part" "$out"
echo "dist-windows: $out ($(du -k "$out" | cut -f1) KiB: $name/{bin,lib,include,share,docs,README.md})"
