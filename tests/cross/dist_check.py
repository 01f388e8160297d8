#!/usr/bin/env python3
"""dist_check.py — owns the test of the Windows package (CTest dist_zip in
the Windows cross pass, tests/cross/CMakeLists.txt): scripts/dist-windows.sh
makes the zip from this build, the zip is unpacked into a fresh directory,
and the unpacked strobe.exe, run under wine from there (no build directory
on its path), prints the version include/strobe/strobe.h states, and says
the commands Windows has no port of are not available; strobe.exe and
libstrobe.dll import no DLL but Windows' own. Must never
accept a zip that lacks a part docs/platforms.md §Windows lists.

Exit 0 when it does, 1 saying what is wrong.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
import zipfile

# What Windows itself provides: the package's programs import nothing else
# (the C runtime's msvcrt.dll ships with Windows; zlib, zstd and winpthreads
# are linked in statically).
SYSTEM_DLLS = {"kernel32.dll", "msvcrt.dll", "bcrypt.dll", "ntdll.dll"}

PARTS = ("bin/strobe.exe", "bin/libstrobe.dll", "lib/libstrobe.dll.a", "lib/libstrobe.a", "lib/libzstd.a",
         "include/strobe/strobe.h", "include/strobe/strobe.hpp", "lib/cmake/strobe/strobeConfig.cmake",
         "lib/pkgconfig/strobe.pc", "README.md", "share/licenses/zstd/LICENSE")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--emulator", required=True, help="the emulator's command line, one argument")
    ap.add_argument("--objdump", required=True, help="the target's objdump (its import tables)")
    a = ap.parse_args()
    header = open(os.path.join(a.src, "include", "strobe", "strobe.h")).read()
    version = re.search(r'#define STROBE_VERSION_STRING "([0-9.]+)"', header).group(1)
    out = os.path.join(a.build, "dist", "strobe-windows-x86_64.zip")
    subprocess.run(["bash", os.path.join(a.src, "scripts", "dist-windows.sh"), a.src, a.build, out], check=True,
                   stdout=subprocess.DEVNULL)
    top = f"strobe-{version}-windows-x86_64"
    with zipfile.ZipFile(out) as z, tempfile.TemporaryDirectory() as tmp:
        names = set(z.namelist())
        missing = [p for p in PARTS if f"{top}/{p}" not in names]
        if missing:
            sys.exit(f"dist_check: {out} lacks {', '.join(missing)}")
        z.extractall(tmp)
        exe = os.path.join(tmp, top, "bin", "strobe.exe")
        for part in ("bin/strobe.exe", "bin/libstrobe.dll"):
            dump = subprocess.run([a.objdump, "-p", os.path.join(tmp, top, part)], capture_output=True, text=True,
                                  check=True).stdout
            dlls = {m.lower() for m in re.findall(r"DLL Name: (\S+)", dump)}
            if not dlls or dlls - SYSTEM_DLLS:
                sys.exit(f"dist_check: {part} imports {sorted(dlls - SYSTEM_DLLS)} beyond Windows' own "
                         f"{sorted(SYSTEM_DLLS)}: it would not start where they are absent")
        r = subprocess.run([*shlex.split(a.emulator), exe, "--version"], capture_output=True, text=True, cwd=tmp)
        said = r.stdout.strip()
        if r.returncode != 0 or not said.startswith(f"strobe {version} "):
            sys.exit(f"dist_check: the unpacked strobe.exe --version exited {r.returncode} saying {said!r} "
                     f"(want 'strobe {version} ...'): {r.stderr}")
        # The commands Windows has no port of say so and fail (tools/strobe/commands/cmd_absent.c).
        for cmd in ("view", "record", "mcp", "clock-offset"):
            r = subprocess.run([*shlex.split(a.emulator), exe, cmd, "x.strobe"], capture_output=True, text=True,
                               cwd=tmp)
            if r.returncode != 2 or "not available on Windows" not in r.stderr:
                sys.exit(f"dist_check: strobe.exe {cmd} exited {r.returncode} saying {r.stderr.strip()!r} "
                         "(want exit 2, 'not available on Windows')")
        print(f"dist_check: {os.path.basename(out)}, {len(names)} entries; unpacked strobe.exe says {said!r}; "
              "view, record, mcp and clock-offset say they are not available")
    return 0


if __name__ == "__main__":
    sys.exit(main())
