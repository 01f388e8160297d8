#!/usr/bin/env python3
"""check_standalone.py — every public header compiles on its own.

For each include/strobe/*.h, a translation unit holding nothing but
`#include "strobe/<name>"` is compiled with -fsyntax-only as C11 and as
C++17 (each .hpp as C++17 only), with the project's warnings as errors: a
header that leans on another one being included first, or that C++ cannot
read, fails here, naming the header and the language. Headers found by
glob, so a new one is covered the day it lands; the number compiled is
printed and must match the directory.

usage: check_standalone.py CC CXX INCLUDE_DIR [--without NAME]...
(--without: a header of a companion library this build does not have, such
as vulkan.h without the Vulkan headers; said in the summary line.)
"""
import os
import pathlib
import subprocess
import sys
import tempfile

WARN = ["-Wall", "-Wextra", "-Werror", "-Wshadow"]  # the project's warnings (CMakeLists.txt)


def compile_one(compiler, lang, std, include_dir, header, work):
    src = pathlib.Path(work, f"{header.replace('.', '_')}_{lang}.{'c' if lang == 'c' else 'cpp'}")
    src.write_text(f'#include "strobe/{header}"\n')
    cmd = [compiler, "-x", "c" if lang == "c" else "c++", f"-std={std}", *WARN, "-fsyntax-only",
           "-I", include_dir, str(src)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stderr


def main():
    args = sys.argv[1:]
    without = set()
    while len(args) > 3 and args[-2] == "--without":
        without.add(args[-1])
        args = args[:-2]
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    cc, cxx, include_dir = args
    present = {p.name for p in pathlib.Path(include_dir, "strobe").iterdir() if p.suffix in (".h", ".hpp")}
    if without - present:
        print(f"check_standalone: --without names no header: {sorted(without - present)}", file=sys.stderr)
        return 2
    headers = sorted(present - without)
    if not headers:
        print(f"check_standalone: no headers in {include_dir}/strobe", file=sys.stderr)
        return 1
    failed = 0
    units = 0
    with tempfile.TemporaryDirectory() as work:
        for h in headers:
            langs = [("c++", cxx, "c++17")] if h.endswith(".hpp") else [("c", cc, "c11"), ("c++", cxx, "c++17")]
            for lang, compiler, std in langs:
                units += 1
                rc, err = compile_one(compiler, lang, std, include_dir, h, work)
                if rc:
                    failed += 1
                    print(f"check_standalone: strobe/{h} does not compile alone as {std}:\n{err[:3000]}", file=sys.stderr)
    left = f" (left out: {', '.join(sorted(without))})" if without else ""
    print(f"check_standalone: {len(headers)} headers, {units} translation units, {failed} failed{left}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
