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
# run the same two ways, through `pkg-config strobe_server`; when it has
# libstrobe_vulkan (fifth argument ON), vulkan_consumer.c the same two ways,
# through `pkg-config strobe_vulkan` and find_package(strobe COMPONENTS
# vulkan), and a component the install lacks fails find_package.
#
# usage: run.sh <strobe source dir> <scratch dir> [cmake] [server ON|OFF] [vulkan ON|OFF]
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 <strobe source dir> <scratch dir> [cmake] [server ON|OFF] [vulkan ON|OFF]" >&2
  exit 2
fi
src=$1 work=$2 cmake=${3:-cmake} with_server=${4:-OFF} with_vulkan=${5:-OFF}
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
  '^bin/strobe$|^include/strobe/[a-z_]+\.(h|hpp)$|^lib[^/]*(/[^/]+)?/libstrobe(_server|_vulkan|_malloc)?\.(a|so(\.[0-9]+)*)$|^lib[^/]*(/[^/]+)?/libstrobe_(record|audit)\.so$|^lib[^/]*(/[^/]+)?/pkgconfig/strobe(_server|_vulkan)?\.pc$|^lib[^/]*(/[^/]+)?/cmake/strobe/strobe[A-Za-z-]*\.cmake$' || true)
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
# The line docs/api.md gives to copy, with PKG_CONFIG_PATH relative as a
# user may set it; the program must then start from any directory.
# shellcheck disable=SC2046  # the flags are meant to split into words
(cd "$(dirname "$pcdir")" && export PKG_CONFIG_PATH=pkgconfig &&
  "${CC:-cc}" -std=c11 -Wall -Wextra -Werror -o "$work/consumer-pc" "$here/consumer.c" \
  $(pkg-config --cflags --libs strobe) -Wl,-rpath,"$(realpath "$(pkg-config --variable=libdir strobe)")")
loads_from_prefix "$work/consumer-pc" libstrobe
(cd / && "$work/consumer-pc") || fail "the consumer does not start from another directory"

echo "== strobe record (docs/exploration.md §Recording a program)"
# The installed tool finds the libraries it preloads next to itself, in the prefix.
"$prefix/bin/strobe" record -o "$work/consumer.capture" -- "$work/consumer-pc" \
  || fail "the installed strobe record failed"
"$prefix/bin/strobe" info "$work/consumer.capture" > /dev/null || fail "strobe record left no readable capture"

# A companion library's consumer through its .pc file: built with the flags
# it gives (which must bring in each library named after it) and the rpath
# line, loading the prefix's library, and run.
# usage: pc_consumer <pc name> <source> <required -l flag>...
pc_consumer() {
  local pc=$1 source=$2 flags flag
  shift 2
  echo "== pkg-config $pc consumer"
  flags=$(pkg-config --cflags --libs "$pc")
  echo "pkg-config: $flags"
  for flag in "$@"; do
    case " $flags " in *" $flag "*) ;; *) fail "$pc.pc does not bring in $flag" ;; esac
  done
  # shellcheck disable=SC2086  # the flags are meant to split into words
  "${CC:-cc}" -std=c11 -Wall -Wextra -Werror -o "$work/$pc-consumer-pc" "$here/$source" $flags \
    -Wl,-rpath,"$(pkg-config --variable=libdir "$pc")"
  loads_from_prefix "$work/$pc-consumer-pc" "lib$pc"
  "$work/$pc-consumer-pc"
}

server=0
if [ "$with_server" = ON ]; then
  server=1
  [ -f "$pcdir/strobe_server.pc" ] || fail "the server was built but strobe_server.pc was not installed in $pcdir"
  pc_consumer strobe_server server_consumer.c -lstrobe
else
  echo "== this build has no server: server consumer skipped"
fi

vulkan=0
if [ "$with_vulkan" = ON ]; then
  vulkan=1
  [ -f "$pcdir/strobe_vulkan.pc" ] || fail "libstrobe_vulkan was built but strobe_vulkan.pc was not installed in $pcdir"
  pc_consumer strobe_vulkan vulkan_consumer.c -lstrobe -lvulkan
else
  echo "== this build has no libstrobe_vulkan: vulkan consumer skipped"
  [ ! -f "$pcdir/strobe_vulkan.pc" ] || fail "strobe_vulkan.pc installed without libstrobe_vulkan"
fi

echo "== find_package consumer"
components=""
[ "$server" = 1 ] && components="server"
[ "$vulkan" = 1 ] && components="$components;vulkan"
"$cmake" -S "$here" -B "$work/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" -DSTROBE_COMPONENTS="${components#;}" \
  > "$work/configure.log" || { cat "$work/configure.log"; exit 1; }
# A component the install lacks is a configure error that names it.
if "$cmake" -S "$here" -B "$work/consumer-missing" -DCMAKE_PREFIX_PATH="$prefix" -DSTROBE_COMPONENTS=nonesuch \
  > "$work/configure-missing.log" 2>&1; then
  fail "find_package(strobe COMPONENTS nonesuch) succeeded"
fi
grep -q "nonesuch" "$work/configure-missing.log" || fail "the missing component is not named: $(tail -5 "$work/configure-missing.log")"
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
if [ "$vulkan" = 1 ]; then
  loads_from_prefix "$work/consumer-build/vulkan_consumer" libstrobe_vulkan
  "$work/consumer-build/vulkan_consumer"
  "$work/consumer-build/vulkan_consumer_static"
fi
echo "install_consumer: ok"
