# toolchain-aarch64-linux-gnu.cmake — owns how Strobe is cross-compiled for
# 64-bit ARM Linux on an x86-64 Debian host: the cross compilers from
# crossbuild-essential-arm64, the target's sysroot (/usr/aarch64-linux-gnu,
# where they find libc) and pkg-config pointed at the :arm64 multiarch -dev
# packages (libzstd-dev:arm64 and the rest: scripts/deps.sh, group cross).
# Must never let a host (x86-64) library or pkg-config file into the build:
# a library found for the wrong machine links nothing or, worse, the wrong ABI.
# The programs it builds run here under qemu-aarch64 (docs/platforms.md).
#
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(_strobe_triple aarch64-linux-gnu)

set(CMAKE_C_COMPILER ${_strobe_triple}-gcc)
set(CMAKE_CXX_COMPILER ${_strobe_triple}-g++)

# Debian's cross toolchain keeps libc in /usr/aarch64-linux-gnu and the
# multiarch libraries in /usr/lib/aarch64-linux-gnu: both are the target's.
set(CMAKE_FIND_ROOT_PATH /usr/${_strobe_triple} /usr/lib/${_strobe_triple})
set(CMAKE_LIBRARY_ARCHITECTURE ${_strobe_triple})
# Programs (python3, node, cmake itself) are the host's; libraries, headers
# and CMake packages are the target's only.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config reads only the :arm64 packages' .pc files (the host's
# /usr/lib/x86_64-linux-gnu/pkgconfig is left out, not merely put second).
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/${_strobe_triple}/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")

# try_run and the test runner: a built program runs under qemu-user with the
# target's loader and libc (QEMU_LD_PREFIX does the same for a plain run).
# The prefix is /, where libc6:arm64 (pulled in by the :arm64 -dev packages)
# puts /lib/ld-linux-aarch64.so.1 and /lib/aarch64-linux-gnu: the cross
# toolchain's own copy in /usr/aarch64-linux-gnu (libc6-arm64-cross
# 2.36-8cross1) hangs in the first pthread_create under Debian 12's
# qemu-user 7.2, where libc6:arm64 2.36-9+deb12u14 runs (docs/platforms.md
# §Linux aarch64). The compilers still link against the cross sysroot.
set(STROBE_CROSS_RUN_PREFIX "/" CACHE PATH "qemu-user's -L: where the target's loader and shared libraries are")
find_program(STROBE_QEMU_AARCH64 qemu-aarch64)
if(STROBE_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${STROBE_QEMU_AARCH64};-L;${STROBE_CROSS_RUN_PREFIX}")
endif()
