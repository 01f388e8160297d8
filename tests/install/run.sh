#!/usr/bin/env bash
# run.sh — owns the install_consumer test: installs an already-built Strobe
# into a scratch prefix, then builds and runs tests/install/consumer.c against
# it twice: with `cc $(pkg-config --cflags --libs strobe)`, and as a CMake
# project using find_package(strobe). When the build has the server (fourth
# argument ON), strobe_server.pc must be installed, and server_consumer.c is
# built and run the same two ways, through `pkg-config strobe_server`.
#
# usage: run.sh <strobe build dir> <scratch dir> [cmake] [server ON|OFF]
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 <strobe build dir> <scratch dir> [cmake]" >&2
  exit 2
fi
build=$1 work=$2 cmake=${3:-cmake} with_server=${4:-OFF}
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

server=0
if [ "$with_server" = ON ] && [ ! -f "$pcdir/strobe_server.pc" ]; then
  echo "the server was built but strobe_server.pc was not installed in $pcdir" >&2
  exit 1
fi
if [ "$with_server" = ON ]; then
  server=1
  echo "== pkg-config server consumer"
  sflags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs strobe_server)
  echo "pkg-config: $sflags"
  case " $sflags " in *" -lstrobe "*) ;; *) echo "strobe_server.pc does not bring in -lstrobe" >&2; exit 1 ;; esac
  # shellcheck disable=SC2086
  "${CC:-cc}" -std=c11 -Wall -Wextra -Werror -o "$work/server-consumer-pc" "$here/server_consumer.c" $sflags
  LD_LIBRARY_PATH=$libdir "$work/server-consumer-pc"
else
  echo "== this build has no server: server consumer skipped"
fi

echo "== find_package consumer"
"$cmake" -S "$here" -B "$work/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" > "$work/configure.log" \
  || { cat "$work/configure.log"; exit 1; }
"$cmake" --build "$work/consumer-build"
LD_LIBRARY_PATH=$libdir "$work/consumer-build/consumer"
"$work/consumer-build/consumer_static"
if [ "$server" = 1 ]; then
  LD_LIBRARY_PATH=$libdir "$work/consumer-build/server_consumer"
  "$work/consumer-build/server_consumer_static"
fi
