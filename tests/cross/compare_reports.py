#!/usr/bin/env python3
"""compare_reports.py — owns the cross tests' capture checks
(tests/cross/CMakeLists.txt): a capture written on the target reads on the
host exactly as the host's own does. Must never compare what the machine
decides (durations, rates, the clock): only what the program's code fixes.

  roundtrip  the target's cross_app writes a capture; the target's `strobe
             report --json` and the host's give identical reports of it
             (apart from the file name they print), and their `strobe info`
             prints the same lines
  portable   cross_app's capture from the target and from the host: the
             host's `strobe report --json` finds the same sites (name,
             category, file, line, function, kind) with the same counts, the
             same counter sums, values, loops, frames and threads; and
             make_capture's files (fixed header facts, chosen timestamps)
             from both are byte for byte the same and report identically

Exit 0 when they agree, 1 with each difference printed.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"compare_reports: {' '.join(cmd)} exited {r.returncode}:\n{r.stderr}")
    return r.stdout


def report(strobe, path, emulator=()):
    d = json.loads(run([*emulator, strobe, "report", "--json", "--quiet", path]))
    d.pop("file", None)
    return d


def source_path(p):
    """A site's file as the source tree names it (tests/cross/cross_app.c):
    each build passes the compiler its own path to the one source file
    (absolute, or relative to a build directory whose depth differs under
    ccache's CCACHE_BASEDIR), so only its last three parts are the program's."""
    return "/".join([x for x in p.split("/") if x not in ("", ".", "..")][-3:])


def counts(rep):
    """What the program's code fixes, keyed so that order does not matter."""
    out = {}
    for s in rep["sites"]:
        key = (s["name"], s["category"], source_path(s["file"]), s["line"], s["function"], s["kind"])
        out["site " + repr(key)] = s["count"]
    for sec in ("counters", "gauges", "values", "loops"):
        for row in rep.get(sec) or []:
            keep = {k: v for k, v in row.items()
                    if not (k.endswith("_ns") or k.endswith("_ms") or k in ("p50", "p95", "p99", "id"))}
            keep["file"] = source_path(row["file"])
            out[f"{sec} {row.get('name')}"] = keep
    cap = rep["capture"]
    for k in ("events", "scopes", "threads", "unwound_scopes", "depth_overflow"):
        out["capture " + k] = cap[k]
    out["state"] = rep["state"]
    out["frames"] = sorted((f["name"], f["frames"]) for f in rep["frames"]["series"])
    return out


def diff(a, b, what_a, what_b):
    bad = 0
    for k in sorted(set(a) | set(b), key=str):
        if a.get(k) != b.get(k):
            print(f"differs: {k}: {what_a} {a.get(k)!r}, {what_b} {b.get(k)!r}")
            bad += 1
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("roundtrip", "portable"))
    ap.add_argument("--emulator", required=True, help="the emulator's command line, one argument")
    ap.add_argument("--out", required=True)
    ap.add_argument("--app", required=True)
    ap.add_argument("--strobe")
    ap.add_argument("--host-strobe", required=True)
    ap.add_argument("--host-app")
    ap.add_argument("--make-capture")
    ap.add_argument("--host-make-capture")
    a = ap.parse_args()
    for p in [a.host_strobe] + ([a.host_app, a.host_make_capture] if a.mode == "portable" else []):
        if not p or not os.access(p, os.X_OK):
            sys.exit(f"compare_reports: the host's program {p!r} is missing (scripts/cross-run.sh passes the native build's)")
    os.makedirs(a.out, exist_ok=True)
    emu = shlex.split(a.emulator)
    target_cap = os.path.join(a.out, "target.strobe")
    run([*emu, a.app, target_cap])
    bad = 0
    if a.mode == "roundtrip":
        on_target = report(a.strobe, target_cap, emu)
        on_host = report(a.host_strobe, target_cap)
        if on_target != on_host:
            bad += diff({"report": on_target}, {"report": on_host}, "target strobe", "host strobe")
        # Text read back in universal-newline mode: a Windows strobe's CRLF reads as LF.
        info_t = run([*emu, a.strobe, "info", target_cap]).splitlines()
        info_h = run([a.host_strobe, "info", target_cap]).splitlines()
        if info_t != info_h:
            bad += diff(dict(enumerate(info_t)), dict(enumerate(info_h)), "target strobe info", "host strobe info")
        print(f"roundtrip: {on_host['capture']['events']} events, {len(on_host['sites'])} sites; "
              f"target and host reports {'identical' if not bad else 'differ'}; strobe info, {len(info_h)} lines")
    else:
        host_cap = os.path.join(a.out, "host.strobe")
        run([a.host_app, host_cap])
        t, h = counts(report(a.host_strobe, target_cap)), counts(report(a.host_strobe, host_cap))
        sites = sum(1 for k in h if k.startswith("site "))
        if sites < 6:
            print(f"the host's capture has {sites} scope sites, cross_app records 6")
            bad += 1
        bad += diff(t, h, "target", "host")
        print(f"portable: cross_app, {sites} sites and {h['capture events']} events compared")
        mt, mh = os.path.join(a.out, "make-target.strobe"), os.path.join(a.out, "make-host.strobe")
        run([*emu, a.make_capture, mt, "--stages", "--units"])
        run([a.host_make_capture, mh, "--stages", "--units"])
        with open(mt, "rb") as f1, open(mh, "rb") as f2:
            bt, bh = f1.read(), f2.read()
        if bt != bh:
            first = next((i for i in range(min(len(bt), len(bh))) if bt[i] != bh[i]), min(len(bt), len(bh)))
            print(f"make_capture's files differ: {len(bt)} and {len(bh)} bytes, first at byte {first}")
            bad += 1
        rt, rh = report(a.host_strobe, mt), report(a.host_strobe, mh)
        if rt != rh:
            bad += diff({"report": rt}, {"report": rh}, "target", "host")
        print(f"portable: make_capture, {len(bh)} bytes, files and reports {'identical' if bt == bh and rt == rh else 'differ'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
