#!/usr/bin/env python3
"""check_deprecated.py — every deprecated alias in include/strobe/ warns.

Reads the alias names from the public headers' >>deprecated sections (every
name declared inside `#if !defined(STROBE_NO_DEPRECATED)`), compiles
tests/header/deprecated.c with -fsyntax-only and checks that the compiler
warned about each of them by name, and that the file uses no alias the
headers do not declare. Then compiles it again with STROBE_NO_DEPRECATED,
which must fail: the aliases are hidden.

usage: check_deprecated.py CC INCLUDE_DIR SOURCE [EXTRA_CFLAGS...]
"""
import os
import pathlib
import re
import subprocess
import sys


def aliases(include_dir):
    """Every name declared in a header's STROBE_NO_DEPRECATED block, whether or
    not it carries its STROBE_DEPRECATED mark (a lost mark must fail here)."""
    names = {}
    block = re.compile(r"#if !defined\(STROBE_NO_DEPRECATED\)\n(.*?)\n#endif", re.S)
    decl = re.compile(r"static inline [^(;]*?\b(\w+)\(|typedef \w+ (\w+)\b")
    for h in sorted(pathlib.Path(include_dir, "strobe").glob("*.h")):
        for b in block.finditer(h.read_text()):
            for m in decl.finditer(b.group(1)):
                names[m.group(1) or m.group(2)] = h.name
    return names


def main():
    cc, inc, src, *extra = sys.argv[1:]
    declared = aliases(inc)
    if len(declared) < 2:
        sys.exit(f"found only {len(declared)} aliases in {inc}/strobe: the header pattern changed?")
    base = [cc, "-fsyntax-only", "-std=gnu11", "-I", inc, *extra, src]
    env = dict(os.environ, LC_ALL="C")  # plain quotes around names in diagnostics
    out = subprocess.run(base + ["-Wdeprecated-declarations"], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"{src} does not compile:\n{out.stderr}")
    warned = set(re.findall(r"['\u2018`](\w+)['\u2019] is deprecated", out.stderr))
    failed = False
    for old, header in sorted(declared.items()):
        if old not in warned:
            print(f"{header}: {old} did not warn where {src} uses it (unused there, or not STROBE_DEPRECATED)")
            failed = True
    for old in sorted(warned - declared.keys()):
        print(f"{old} warned but is not a STROBE_DEPRECATED alias in {inc}/strobe")
        failed = True
    hidden = subprocess.run(base + ["-DSTROBE_NO_DEPRECATED"], capture_output=True, text=True, env=env)
    if hidden.returncode == 0:
        print("STROBE_NO_DEPRECATED did not hide the aliases: the file still compiles")
        failed = True
    if failed:
        sys.exit(1)
    print(f"{len(declared)} deprecated aliases, each warns; STROBE_NO_DEPRECATED hides them")


if __name__ == "__main__":
    main()
