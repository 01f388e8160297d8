#!/usr/bin/env bash
# run.sh — owns the install_consumer test: `make install PREFIX=<scratch>`
# from the source tree, exactly as a user runs it, then checks that it built
# and installed only the library: no system package installed (apt-get and
# npm are traps on PATH here), no test, fuzzer, demo or benchmark built, and
# nothing installed but the static and shared libraries, the headers, the
# `strobe` CLI, strobe.pc (strobe_server.pc) and the CMake package. Then it
# builds tests/install/consumer.c against the prefix twice and runs it
# without LD_LIBRARY_PATH: with pkg-config and the rpath line docs/api.md
# gives to copy, and as a CMake project using find_package(strobe). When the
# build has the server (fourth argument ON), server_consumer.c is built and
# run the same two ways, through `pkg-config strobe_server`.
#
# usage: run.sh <strobe source dir> <scratch dir> [cmake] [server ON|OFF]
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 <strobe source dir> <scratch dir> [cmake] [server ON|OFF]" >&2
  exit 2
fi
src=$1 work=$2 cmake=${3:-cmake} with_server=${4:-OFF}
here=$(cd "$(dirname "$0")" && pwd)
prefix=$work/prefix
fail() { echo "install_consumer: $*" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work/traps"
# Installing the library must never install system or npm packages.
for tool in apt-get apt npm npx; do
  printf '#!/bin/sh\necho "%s $*" >> "%s/trapped.log"\nexit 1\n' "$tool" "$work" > "$work/traps/$tool"
  chmod +x "$work/traps/$tool"
done

echo "== make install PREFIX=$prefix"
cmake_dir=$(dirname "$(command -v "$cmake")")
PATH="$work/traps:$cmake_dir:$PATH" make -C "$src" install PREFIX="$prefix" BUILD_DIR="$work/build" JOBS=2 \
  > "$work/install.log" 2>&1 || { tail -40 "$work/install.log"; fail "make install failed"; }
[ ! -e "$work/trapped.log" ] || fail "make install ran a package manager: $(cat "$work/trapped.log")"

# Only the library and the CLI were configured and built: no test, fuzzer,
# demo or benchmark executable anywhere in the build, and no test registered.
built=$(find "$work/build" -type f -perm -u+x \( -name 'test_*' -o -name 'fuzz_*' -o -name 'bench_*' \
  -o -name 'strobe-demo' -o -name 'make_capture' \) | head -5)
[ -z "$built" ] || fail "make install built more than the library: $built"
ctest=$cmake_dir/ctest
[ -x "$ctest" ] || ctest=ctest
caches=$(find "$work/build" -name CMakeCache.txt)
[ -n "$caches" ] || fail "make install did not configure a build under $work/build"
for cache in $caches; do
  n=$("$ctest" --test-dir "$(dirname "$cache")" -N | sed -n 's/^Total Tests: //p')
  [ "$n" = 0 ] || fail "make install registered $n tests in $(dirname "$cache")"
done

# Only the library's files were installed.
unexpected=$(cd "$prefix" && find . -type f -o -type l | sed 's|^\./||' | grep -Ev \
  '^bin/strobe$|^include/strobe/[a-z_]+\.(h|hpp)$|^lib[^/]*(/[^/]+)?/libstrobe(_server|_vulkan)?\.(a|so(\.[0-9]+)*)$|^lib[^/]*(/[^/]+)?/pkgconfig/strobe(_server)?\.pc$|^lib[^/]*(/[^/]+)?/cmake/strobe/strobe[A-Za-z-]*\.cmake$' || true)
[ -z "$unexpected" ] || fail "make install installed more than the library: $unexpected"
"$prefix/bin/strobe" --version | grep -q "^strobe " || fail "the installed strobe does not run"

# GNUInstallDirs may have chosen lib, lib64 or lib/<multiarch>: find the
# library directory from where strobe.pc landed.
pc=$(find "$prefix" -name strobe.pc -path '*/pkgconfig/*' -print -quit)
[ -n "$pc" ] || fail "strobe.pc was not installed under $prefix"
pcdir=$(dirname "$pc")
libdir=$(cd "$(dirname "$pcdir")" && pwd -P)
export PKG_CONFIG_PATH=$pcdir
unset LD_LIBRARY_PATH

# The shared library a program loads must be the prefix's, found through its rpath.
loads_from_prefix() {
  local so
  so=$(ldd "$1" | awk -v lib="$2" '$1 ~ "^"lib"\\.so" { print $3 }')
  [ -n "$so" ] || fail "$1 does not load $2 ($(ldd "$1" | tr '\n' ' '))"
  [ "$(cd "$(dirname "$so")" && pwd -P)" = "$libdir" ] || fail "$1 loads $so, not the one in $libdir"
}

echo "== pkg-config consumer (docs/api.md §Linking against a non-system prefix)"
# The line docs/api.md gives to copy:
# shellcheck disable=SC2046  # the flags are meant to split into words
"${CC:-cc}" -std=c11 -Wall -Wextra -Werror -o "$work/consumer-pc" "$here/consumer.c" \
  $(pkg-config --cflags --libs strobe) -Wl,-rpath,"$(pkg-config --variable=libdir strobe)"
loads_from_prefix "$work/consumer-pc" libstrobe
"$work/consumer-pc"

server=0
if [ "$with_server" = ON ] && [ ! -f "$pcdir/strobe_server.pc" ]; then
  fail "the server was built but strobe_server.pc was not installed in $pcdir"
fi
if [ "$with_server" = ON ]; then
  server=1
  echo "== pkg-config server consumer"
  sflags=$(pkg-config --cflags --libs strobe_server)
  echo "pkg-config: $sflags"
  case " $sflags " in *" -lstrobe "*) ;; *) fail "strobe_server.pc does not bring in -lstrobe" ;; esac
  # shellcheck disable=SC2086
  "${CC:-cc}" -std=c11 -Wall -Wextra -Werror -o "$work/server-consumer-pc" "$here/server_consumer.c" $sflags \
    -Wl,-rpath,"$(pkg-config --variable=libdir strobe_server)"
  loads_from_prefix "$work/server-consumer-pc" libstrobe_server
  "$work/server-consumer-pc"
else
  echo "== this build has no server: server consumer skipped"
fi

echo "== find_package consumer"
"$cmake" -S "$here" -B "$work/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" > "$work/configure.log" \
  || { cat "$work/configure.log"; exit 1; }
"$cmake" --build "$work/consumer-build"
loads_from_prefix "$work/consumer-build/consumer" libstrobe
"$work/consumer-build/consumer"
"$work/consumer-build/consumer_static"
"$work/consumer-build/traced_consumer"
"$work/consumer-build/traced_consumer_static"
if [ "$server" = 1 ]; then
  "$work/consumer-build/server_consumer"
  "$work/consumer-build/server_consumer_static"
fi
echo "install_consumer: ok"
