#!/usr/bin/env bash
# run.sh — owns the install_consumer test: installs an already-built Strobe
# into a scratch prefix, then builds and runs tests/install/consumer.c against
# it twice: with `cc $(pkg-config --cflags --libs strobe)`, and as a CMake
# project using find_package(strobe).
#
# usage: run.sh <strobe build dir> <scratch dir> [cmake]
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 <strobe build dir> <scratch dir> [cmake]" >&2
  exit 2
fi
build=$1 work=$2 cmake=${3:-cmake}
here=$(cd "$(dirname "$0")" && pwd)
prefix=$work/prefix

rm -rf "$work"
mkdir -p "$work"
"$cmake" --install "$build" --prefix "$prefix" > "$work/install.log"

# GNUInstallDirs may have chosen lib, lib64 or lib/<multiarch>: find the
# library directory from where strobe.pc landed.
pc=$(find "$prefix" -name strobe.pc -path '*/pkgconfig/*' -print -quit)
if [ -z "$pc" ]; then
  echo "strobe.pc was not installed under $prefix" >&2
  exit 1
fi
pcdir=$(dirname "$pc")
libdir=$(dirname "$pcdir")

echo "== pkg-config consumer"
flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs strobe)
echo "pkg-config: $flags"
# shellcheck disable=SC2086  # the flags are meant to split into words
"${CC:-cc}" -std=c11 -Wall -Wextra -Werror -o "$work/consumer-pc" "$here/consumer.c" $flags
LD_LIBRARY_PATH=$libdir "$work/consumer-pc"

echo "== find_package consumer"
"$cmake" -S "$here" -B "$work/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" > "$work/configure.log" \
  || { cat "$work/configure.log"; exit 1; }
"$cmake" --build "$work/consumer-build"
LD_LIBRARY_PATH=$libdir "$work/consumer-build/consumer"
"$work/consumer-build/consumer_static"
