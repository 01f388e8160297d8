# toolchain-x86_64-w64-mingw32.cmake — owns how Strobe is cross-compiled for
# 64-bit Windows on a Debian host: Debian's mingw-w64 compilers
# (gcc-mingw-w64-x86-64, the "posix" thread model, so C11 code gets
# winpthreads), the mingw sysroot /usr/x86_64-w64-mingw32 (libz-mingw-w64-dev
# installs zlib there) and the prefix where scripts/mingw-zstd.sh builds zstd
# from Debian's source package, and wine64 as the emulator that runs what it
# builds. Must never let a host (Linux) library, header or pkg-config file
# into the build. docs/platforms.md §Windows.
#
#   cmake -S . -B build-windows -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-x86_64-w64-mingw32.cmake
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(_strobe_triple x86_64-w64-mingw32)

# The -posix compilers: C11 threads and std::thread sit on winpthreads
# (the -win32 ones have no pthread.h-backed runtime).
set(CMAKE_C_COMPILER ${_strobe_triple}-gcc-posix)
set(CMAKE_CXX_COMPILER ${_strobe_triple}-g++-posix)
set(CMAKE_RC_COMPILER ${_strobe_triple}-windres)

set(STROBE_MINGW_PREFIX "/opt/strobe-mingw64" CACHE PATH "Where scripts/mingw-zstd.sh installed zstd for mingw-w64")
set(CMAKE_FIND_ROOT_PATH /usr/${_strobe_triple} ${STROBE_MINGW_PREFIX})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config reads only the target's .pc files: zlib's from the sysroot and
# zstd's from the prefix; none of the host's.
set(ENV{PKG_CONFIG_LIBDIR} "${STROBE_MINGW_PREFIX}/lib/pkgconfig:/usr/${_strobe_triple}/lib/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")

# Programs link the C and C++ runtimes and winpthreads statically, so a
# built .exe runs under wine (or on Windows) with no mingw DLL beside it;
# the library's own DLL is the only one (docs/platforms.md §Windows).
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static")

# wine64: Debian's wine64 package puts its launcher outside PATH.
find_program(STROBE_WINE64 NAMES wine64 PATHS /usr/lib/wine NO_DEFAULT_PATH)
find_program(STROBE_WINE64 NAMES wine64)
if(STROBE_WINE64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${STROBE_WINE64}")
endif()
