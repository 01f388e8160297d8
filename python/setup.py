"""setup.py — owns building and installing the strobe package (python/strobe)
with setuptools: `pip install ./python` from a checkout, no registry. The
extension links libstrobe.so, found in this order: STROBE_PREFIX (an
installed prefix, `make install PREFIX=...`), pkg-config's strobe.pc, or the
checkout's own build directory (STROBE_BUILD_DIR, default ../build, made by
`make build`). It never builds its own copy of libstrobe: Python spans must
land in the same rings as the process's C scopes."""
import os
import shlex
import subprocess

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(HERE)


def _library():
    prefix = os.environ.get("STROBE_PREFIX")
    if prefix:
        libdir = next((d for d in (os.path.join(prefix, "lib"), os.path.join(prefix, "lib64"))
                       if os.path.exists(os.path.join(d, "libstrobe.so"))), None)
        if not libdir:
            raise SystemExit(f"strobe: no libstrobe.so under STROBE_PREFIX={prefix} (make install PREFIX={prefix})")
        return [os.path.join(prefix, "include")], [libdir]
    build = os.environ.get("STROBE_BUILD_DIR")
    if not build:
        try:
            flags = subprocess.run(["pkg-config", "--cflags-only-I", "--libs-only-L", "strobe"], check=True,
                                   capture_output=True, text=True).stdout
            words = shlex.split(flags)
            return [w[2:] for w in words if w.startswith("-I")], [w[2:] for w in words if w.startswith("-L")]
        except (OSError, subprocess.CalledProcessError):
            build = os.path.join(CHECKOUT, "build")
    build = os.path.abspath(build)
    if not os.path.exists(os.path.join(build, "libstrobe.so")):
        raise SystemExit(f"strobe: no libstrobe.so in {build}: run `make build` in the checkout first, or set "
                         "STROBE_BUILD_DIR (a build directory) or STROBE_PREFIX (an installed prefix)")
    return [os.path.join(CHECKOUT, "include")], [build]


includes, libdirs = _library()

setup(
    name="strobe",
    version=open(os.path.join(CHECKOUT, "include", "strobe", "strobe.h")).read()
    .split('#define STROBE_VERSION_STRING "')[1].split('"')[0],
    description="Strobe's in-process profiler for Python code: spans, values, loop scopes, call tracing",
    packages=["strobe"],
    ext_modules=[Extension("strobe._strobe", ["strobe/_strobe.c"], include_dirs=includes, library_dirs=libdirs,
                           runtime_library_dirs=libdirs, libraries=["strobe"],
                           extra_compile_args=["-std=c11", "-D_GNU_SOURCE"])],
    python_requires=">=3.11",
)
