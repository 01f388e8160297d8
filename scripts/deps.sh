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
#   deps.sh --check cross    only the cross group below (and zstd built for
#                            mingw-w64): names what is missing and fails,
#                            never installs
# Everything (no argument) includes the cross group, whose :arm64 packages
# need the arm64 architecture added to dpkg first (done here, once).
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
  python3-dev                       # the Python binding (python/): headers
  python3-pytest python3-pip        # its tests, and `pip install ./python`
  python3-starlette python3-uvicorn # strobe.asgi's tests, bench and demo: a real ASGI app and server
  python3-flask python3-httpx       # strobe.wsgi's tests (a real WSGI app); their HTTP client
  protobuf-compiler zstd            # the perfetto export's test: protoc --decode, zstd -d
  nodejs npm                        # MCP SDK client tests
  chromium                          # viewer tests
  libgtk-4-dev libxtst-dev          # examples/gtk (strobe-gtk): GTK 4; XTEST, its --drive-input
  xvfb xauth                        # tests/gtk runs strobe-gtk under xvfb-run
)

# The cross group: Linux aarch64 built here and run under qemu-user
# (scripts/cross-run.sh, CTest test cross_aarch64, docs/platforms.md). The
# :arm64 packages are Debian multiarch: they install beside the amd64 ones
# (same versions) into /usr/lib/aarch64-linux-gnu, where
# cmake/toolchain-aarch64-linux-gnu.cmake points pkg-config.
cross=(
  crossbuild-essential-arm64        # aarch64-linux-gnu-gcc/g++ and the target's libc
  qemu-user                         # qemu-aarch64 runs the aarch64 programs (explicitly: no binfmt needed)
  libzstd-dev:arm64                 # the library, for the target: capture compression
  zlib1g-dev:arm64                  # the CLI's perfetto export
  libdw-dev:arm64 libelf-dev:arm64  # call tracing's symbol tables
  libjansson-dev:arm64              # the server and its tests: JSON in
  libmicrohttpd-dev:arm64           # the server: HTTP
  # Windows x86-64 built here with mingw-w64 and run under wine64 (CTest
  # cross_windows, make dist-windows): the -posix compilers (winpthreads),
  # zlib for the CLI, and wine64 (its launcher is /usr/lib/wine/wine64).
  # zstd has no mingw package: scripts/mingw-zstd.sh builds Debian's source
  # package into /opt/strobe-mingw64 after these are installed.
  gcc-mingw-w64-x86-64-posix g++-mingw-w64-x86-64-posix
  libz-mingw-w64-dev
  wine64
)

installed() {
  case "$1" in
    # Node.js from another source (e.g. NodeSource's nodejs, which bundles
    # npm) satisfies these; installing Debian's npm beside it would conflict.
    nodejs) command -v node > /dev/null && return 0 ;;
    npm) command -v npm > /dev/null && return 0 ;;
  esac
  # A name without :arch means this machine's own architecture (or an
  # architecture-independent package): with arm64 added, dpkg-query lists
  # both libzstd-dev:amd64 and libzstd-dev:arm64 for "libzstd-dev", and the
  # :arm64 one must not count for the native build.
  local want=${1#*:}
  [ "$want" = "$1" ] && want=$(dpkg --print-architecture)
  dpkg-query -W -f='${Status} ${Architecture}\n' "$1" 2> /dev/null |
    grep -Eq "^install ok installed ($want|all)\$"
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
elif [ "${1:-}" = --check ] && [ "${2:-}" = cross ]; then
  missing=()
  for p in "${cross[@]}"; do installed "$p" || missing+=("$p"); done
  if [ ${#missing[@]} -ne 0 ]; then
    echo "deps.sh: the cross builds (aarch64, Windows) need these Debian packages: ${missing[*]}" >&2
    echo "deps.sh: run 'make deps' as root (it adds the arm64 architecture first)" >&2
    exit 1
  fi
  if [ ! -f /opt/strobe-mingw64/lib/pkgconfig/libzstd.pc ]; then
    echo "deps.sh: the Windows build needs zstd for mingw-w64: run 'make deps' as root (scripts/mingw-zstd.sh)" >&2
    exit 1
  fi
  exit 0
elif [ $# -ne 0 ]; then
  echo "usage: deps.sh [--check library|cross]" >&2
  exit 2
fi

missing=()
for p in "${packages[@]}" "${cross[@]}"; do
  installed "$p" || missing+=("$p")
done
# zstd for mingw-w64, once its compiler is there (silent when it is built).
mingw_zstd() {
  if [ ! -f /opt/strobe-mingw64/lib/pkgconfig/libzstd.pc ]; then
    if [ "$(id -u)" -ne 0 ]; then
      echo "deps.sh: zstd for mingw-w64 is missing: run scripts/mingw-zstd.sh as root" >&2
      return 1
    fi
    bash "$(dirname "$0")/mingw-zstd.sh"
  fi
}
if [ ${#missing[@]} -eq 0 ]; then
  mingw_zstd
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "deps.sh: missing Debian packages: ${missing[*]}" >&2
  echo "deps.sh: install them as root: apt-get install ${missing[*]}" >&2
  exit 1
fi

# The :arm64 packages come from the arm64 architecture's package lists:
# added once (dpkg keeps it; adding it again is harmless but skipped).
case " ${missing[*]}" in
  *:arm64*)
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
      echo "deps.sh: adding the arm64 architecture (multiarch) for the cross build's :arm64 packages"
      dpkg --add-architecture arm64
    fi
    ;;
esac
echo "deps.sh: installing ${missing[*]}"
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
mingw_zstd
