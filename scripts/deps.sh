#!/usr/bin/env bash
# deps.sh — owns the list of Debian 12 packages that building, testing and
# demoing Strobe need, and installs the missing ones. Idempotent and silent
# when everything is present. As root it installs; otherwise it names what is
# missing and fails.
#
#   deps.sh                  everything (make deps, build, test, demo)
#   deps.sh --check library  only what building the library and the `strobe`
#                            tool needs (make install): never installs
#                            anything, names what is missing and fails; says
#                            when the optional server library will be left out
set -euo pipefail

# The library and the CLI: a compiler, CMake, pkg-config, zstd; zlib for the
# CLI's perfetto export (deflate-compressed packets); libdw/libelf (call
# tracing names functions from the symbol tables).
library=(cmake pkg-config gcc g++ libzstd-dev zlib1g-dev libdw-dev libelf-dev)
# libstrobe_server (and `strobe view`): built and installed when present.
server=(libjansson-dev libmicrohttpd-dev)

packages=(
  cmake pkg-config gcc g++          # build
  clang libclang-rt-14-dev          # sanitizers and libFuzzer with Clang
  libzstd-dev                       # capture compression
  zlib1g-dev                        # the perfetto export's deflate packets
  libdw-dev libelf-dev              # call tracing: symbol tables
  libjansson-dev libmicrohttpd-dev  # server: JSON in, HTTP
  libcairo2-dev libpango1.0-dev     # demo rendering
  libpng-dev                        # the demo's frames, encoded for speed
  fonts-dejavu-core                 # the demo's font
  libvulkan-dev glslc               # libstrobe_vulkan; the demo's compute shaders
  mesa-vulkan-drivers vulkan-tools  # lavapipe, the CPU Vulkan device its tests and the demo run on; vulkaninfo
  valgrind                          # bench-callgrind
  python3 python3-jsonschema        # report schema checks
  python3-dev python3-setuptools    # the Python binding (python/): headers, setup.py
  python3-pytest python3-pip        # its tests, and `pip install ./python`
  protobuf-compiler zstd            # the perfetto export's test: protoc --decode, zstd -d
  nodejs npm                        # MCP SDK client tests
  chromium                          # viewer tests
  libgtk-4-dev libxtst-dev          # examples/gtk (strobe-gtk): GTK 4; XTEST, its --drive-input
  xvfb xauth                        # tests/gtk runs strobe-gtk under xvfb-run
)

installed() {
  case "$1" in
    # Node.js from another source (e.g. NodeSource's nodejs, which bundles
    # npm) satisfies these; installing Debian's npm beside it would conflict.
    nodejs) command -v node > /dev/null && return 0 ;;
    npm) command -v npm > /dev/null && return 0 ;;
  esac
  [ "$(dpkg-query -W -f='${Status}' "$1" 2> /dev/null)" = "install ok installed" ]
}

if [ "${1:-}" = --check ] && [ "${2:-}" = library ]; then
  missing=()
  for p in "${library[@]}"; do installed "$p" || missing+=("$p"); done
  if [ ${#missing[@]} -ne 0 ]; then
    echo "deps.sh: building the library needs these Debian packages: ${missing[*]}" >&2
    echo "deps.sh: install them (apt-get install ${missing[*]}) or run 'make deps' as root" >&2
    exit 1
  fi
  absent=()
  for p in "${server[@]}"; do installed "$p" || absent+=("$p"); done
  if [ ${#absent[@]} -ne 0 ]; then
    echo "deps.sh: without ${absent[*]}, libstrobe_server and strobe_server.pc are not built or installed" >&2
  fi
  exit 0
elif [ $# -ne 0 ]; then
  echo "usage: deps.sh [--check library]" >&2
  exit 2
fi

missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "deps.sh: missing Debian packages: ${missing[*]}" >&2
  echo "deps.sh: install them as root: apt-get install ${missing[*]}" >&2
  exit 1
fi

echo "deps.sh: installing ${missing[*]}"
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
