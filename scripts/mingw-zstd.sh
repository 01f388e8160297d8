#!/usr/bin/env bash
# mingw-zstd.sh — owns the one library the Windows build needs that Debian
# ships no mingw-w64 package of: zstd (capture compression). It builds
# libzstd.a for x86_64-w64-mingw32 from Debian's own libzstd source package
# (apt-get source, the version of the installed libzstd-dev, or the nearest
# one the archive still serves) with the cross compiler, and installs it with
# zstd.h and a libzstd.pc into a prefix that
# cmake/toolchain-x86_64-w64-mingw32.cmake points pkg-config at.
# Must never: install into the compiler's own sysroot (/usr/x86_64-w64-mingw32
# belongs to Debian's packages), or take a source from anywhere but the
# Debian archive. scripts/deps.sh runs it (group cross); docs/platforms.md
# §Windows.
#
# usage: mingw-zstd.sh [prefix]     default /opt/strobe-mingw64
set -euo pipefail

prefix=${1:-/opt/strobe-mingw64}
cc=x86_64-w64-mingw32-gcc
ar=x86_64-w64-mingw32-ar
if [ -f "$prefix/lib/libzstd.a" ] && [ -f "$prefix/lib/pkgconfig/libzstd.pc" ] && [ -f "$prefix/share/licenses/zstd/LICENSE" ]; then
  exit 0
fi
command -v "$cc" > /dev/null || { echo "$0: $cc not found: install gcc-mingw-w64-x86-64" >&2; exit 1; }

# apt-get source reads deb-src entries: added once, beside the deb ones,
# from the same archive (Debian 12's debian.sources).
if ! apt-cache showsrc libzstd 2> /dev/null | grep '^Version:' > /dev/null; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "$0: apt has no deb-src entries; as root this script adds them" >&2
    exit 1
  fi
  src_list=/etc/apt/sources.list.d/debian.sources
  [ -f "$src_list" ] || { echo "$0: $src_list not found: add deb-src entries for the Debian archive" >&2; exit 1; }
  echo "mingw-zstd.sh: adding deb-src entries (/etc/apt/sources.list.d/strobe-deb-src.sources)"
  sed 's/^Types: deb$/Types: deb-src/' "$src_list" > /etc/apt/sources.list.d/strobe-deb-src.sources
  apt-get update > /dev/null
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
want=$(dpkg-query -W -f='${source:Version}' libzstd-dev 2> /dev/null || true)
got=""
for v in $want $(apt-cache showsrc libzstd | sed -n 's/^Version: //p'); do
  if (cd "$work" && apt-get source --download-only "libzstd=$v" > /dev/null 2>&1); then
    got=$v
    break
  fi
done
[ -n "$got" ] || { echo "$0: could not download Debian's libzstd source package" >&2; exit 1; }
for t in "$work"/libzstd_*.orig.tar.*; do
  case "$t" in *.asc) ;; *) tar -xf "$t" -C "$work" ;; esac
done
lib=$(echo "$work"/zstd-*/lib)
[ -d "$lib" ] || { echo "$0: no lib/ in the libzstd source" >&2; exit 1; }

# The library proper (common, compress, decompress), single-threaded, without
# its x86-64 assembly (written for ELF); the static archive only.
mkdir -p "$work/obj" "$prefix/lib/pkgconfig" "$prefix/include"
for c in "$lib"/common/*.c "$lib"/compress/*.c "$lib"/decompress/*.c; do
  "$cc" -O2 -DZSTD_DISABLE_ASM -I"$lib" -I"$lib/common" -c "$c" -o "$work/obj/$(basename "${c%.c}").o"
done
rm -f "$prefix/lib/libzstd.a"
"$ar" rcs "$prefix/lib/libzstd.a" "$work"/obj/*.o
cp "$lib/zstd.h" "$lib/zstd_errors.h" "$lib/zdict.h" "$prefix/include/"
# Its licence travels with it: make dist-windows ships libzstd.a beside libstrobe.a.
mkdir -p "$prefix/share/licenses/zstd"
cp "$lib/../LICENSE" "$prefix/share/licenses/zstd/LICENSE"
version=$(sed -n 's/^#define ZSTD_VERSION_\(MAJOR\|MINOR\|RELEASE\) *\([0-9]*\).*/\2/p' "$lib/zstd.h" | paste -sd.)
cat > "$prefix/lib/pkgconfig/libzstd.pc" << EOF
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: zstd
Description: zstd $version for x86_64-w64-mingw32, built from Debian's libzstd $got by scripts/mingw-zstd.sh
Version: $version
Libs: -L\${libdir} -lzstd
Cflags: -I\${includedir}
EOF
echo "mingw-zstd.sh: libzstd $version (Debian $got) for x86_64-w64-mingw32 in $prefix"
