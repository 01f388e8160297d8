#!/usr/bin/env python3
"""record_test.py — `strobe record` end to end (docs/exploration.md §Recording a program).

Owns: running the unmodified programs of tests/record/ through `strobe record` and checking
what their captures hold against the call counts the programs make by construction (calls.c,
calls_cxx.cpp), the record-time filters exactly, the ends of a run (signal, exec, fork), a
program that starts its own recorder, and every bad input (exit 2, no file). One case per run
(CTest registers each, tests/record/CMakeLists.txt).
Must never: accept two answers where the tool gives one, or wait on time.
"""
import argparse
import json
import os
import re
import shutil
import stat
import subprocess
import sys


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


def strobe(*argv, expect=0):
    p = subprocess.run([ARGS.strobe, *argv], capture_output=True, text=True, timeout=240)
    if expect is not None and p.returncode != expect:
        raise Fail(f"strobe {' '.join(argv)}: exit {p.returncode}, expected {expect}\n"
                   f"stdout:\n{p.stdout[-3000:]}\nstderr:\n{p.stderr[-3000:]}")
    return p


def record(*argv, out="run.capture", expect=0):
    path = os.path.join(ARGS.work, out)
    p = strobe("record", "-o", path, *argv, expect=expect)
    return path, p


def counts(path):
    """{site name: count} of the capture's scopes, and its call-tracing totals."""
    j = json.loads(strobe("report", "--json", path).stdout)
    return {s["name"]: s["count"] for s in j["sites"] if "count" in s}, j


def totals(path):
    return json.loads(strobe("info", "--json", path).stdout)["totals"]


def expect_counts(path, want, where):
    got, _ = counts(path)
    check(got == want, f"{where}: counts {got}, expected exactly {want}")


def run_counts(n):
    """calls.c's `run N`: main 1, top 1, mid N+1, leaf 3(N+1)+1, skip 1."""
    return {"main": 1, "top": 1, "mid": n + 1, "leaf": 3 * (n + 1) + 1, "skip": 1}


def case_calls_c():
    path, p = record("--", ARGS.traced, "run", "10")
    expect_counts(path, run_counts(10), "calls.c run 10")
    t = totals(path)
    check(t["footer"] and not t["cut_short"], f"the capture was closed at exit: {t}")
    check("exited with status 0" in p.stderr and "48 scopes of 5 traced functions and 0 library" in p.stderr,
          f"summary line: {p.stderr}")
    out = strobe("report", path).stdout
    check("leaf" in out and "34" in out, f"strobe report shows it:\n{out}")


def case_report():
    """strobe report's --sort, --callers/--callees and --correct-overhead on a traced run of known calls:
    top calls mid 10 times and skip once, mid calls leaf 3 times, skip calls mid and leaf once."""
    path, _ = record("--", ARGS.traced, "run", "10")
    j = json.loads(strobe("report", "--json", "--sort", "count", "--correct-overhead", path).stdout)
    check([s["name"] for s in j["sites"]][:2] == ["leaf", "mid"], f"--sort count: {[s['name'] for s in j['sites']]}")
    cost = j["overhead_correction"]["per_call_ns"]
    check(cost > 0 and abs(cost - 2 * j["overhead"]["event_ns"]) < 0.01, f"a call's two events: {j['overhead_correction']}")
    for s in j["sites"]:
        want = max(0.0, s["self_ns"] - s["count"] * cost)
        check(abs(s["self_corrected_ns"] - want) < 0.2, f"{s['name']}: corrected {s['self_corrected_ns']}, want {want}")
    graph = lambda *a: json.loads(strobe("report", "--json", *a, path).stdout)["graph"]
    rows = lambda g, k: {r["name"]: r["calls"] for r in g[k]}
    g = graph("--callers", "mid", "--callees", "mid")
    check(rows(g, "callers") == {"top": 10, "skip": 1} and rows(g, "callees") == {"leaf": 33}, f"mid: {g}")
    g = graph("--callers", "leaf", "--callees", "leaf")
    check(rows(g, "callers") == {"mid": 33, "skip": 1} and rows(g, "callees") == {}, f"leaf: {g}")
    g = graph("--callers", "top", "--callees", "top")
    check(rows(g, "callers") == {"main": 1} and rows(g, "callees") == {"mid": 10, "skip": 1}, f"top: {g}")
    check(rows(graph("--callers", "main"), "callers") == {"(top level)": 1}, "main is called from the top level")
    strobe("report", "--callees", "nothing_of_that_name", path, expect=2)


def case_calls_cxx():
    path, _ = record("--", ARGS.cxx, "run", "7")
    got, _ = counts(path)
    want = {"main": 1, "shape::Grid::Grid(int)": 1, "shape::Grid::row(int) const": 7,
            "shape::Grid::cell(int, int) const": 49, "int shape::sum<int>(std::vector<int, std::allocator<int> > const&)": 7}
    mine = {k: v for k, v in got.items() if k in want}
    check(mine == want, f"C++ counts {mine}, expected {want} (all: {sorted(got)})")
    # --trace matches demangled names.
    path, _ = record("--trace", r"^shape::Grid::(cell|row)\(", "--", ARGS.cxx, "run", "7", out="regex.capture")
    expect_counts(path, {"shape::Grid::row(int) const": 7, "shape::Grid::cell(int, int) const": 49}, "--trace on C++")


def case_sampled():
    # Without -finstrument-functions: the sampler, with stacks, and no traced call.
    path, p = record("--", ARGS.plain, "spin", "10")
    t = totals(path)
    got, j = counts(path)
    check(got == {}, f"an untraced program records no scopes: {got}")
    samples = json.loads(strobe("report", "--samples", "--json", path).stdout)
    text = json.dumps(samples)
    check(t["footer"] and "spin" in text, f"samples name the spinning function: {p.stderr}\n{text[:2000]}")
    # --sample off: nothing at all; a traced run with --sample HZ: calls and samples.
    path, _ = record("--sample", "off", "--", ARGS.plain, "spin", "10", out="off.capture")
    check("spin" not in json.dumps(json.loads(strobe("report", "--samples", "--json", path).stdout)),
          "--sample off samples nothing")
    path, _ = record("--sample", "499", "--", ARGS.traced, "spin", "10", out="both.capture")
    expect_counts(path, {**run_counts(10), "spin": 1}, "traced and sampled")
    check("spin" in json.dumps(json.loads(strobe("report", "--samples", "--json", path).stdout)),
          "--sample HZ samples a traced run too")


def case_options():
    # --overflow reaches the recording process; drop is the default.
    path, _ = record("--", ARGS.traced, "run", "10")
    header = json.loads(strobe("info", "--json", path).stdout)["header"]
    check(header["overflow"] == "drop", f"default overflow: {header}")
    path, _ = record("--overflow", "wait", "--", ARGS.traced, "run", "10", out="wait.capture")
    header = json.loads(strobe("info", "--json", path).stdout)["header"]
    check(header["overflow"] == "wait", f"--overflow wait: {header}")
    expect_counts(path, run_counts(10), "--overflow wait")

    # --switches: the sampler records each time the thread leaves its CPU (timed sleeps twice).
    def switches(path):
        out = strobe("report", path).stdout
        m = re.search(r"sampler: \d+ samples, (\d+) context switches", out)
        check(m, f"the report names the sampler's figures:\n{out}")
        return int(m.group(1))
    path, _ = record("--switches", "--", ARGS.plain, "timed", "10", out="switches.capture")
    check(switches(path) >= 2, "--switches records the two sleeps at least")
    # Without it: samples (a CPU-bound run has them), and not one switch record.
    path, _ = record("--", ARGS.plain, "spin", "10", out="noswitches.capture")
    check(switches(path) == 0, "no --switches, no switch records")


def case_filters():
    def excluded(path):
        return counts(path)[1]["call_tracing"]

    cases = [
        (["--notrace", "skip"], {"main": 1, "top": 1, "mid": 10, "leaf": 30}, 6),
        (["--notrace", "mid"], {"main": 1, "top": 1, "skip": 1, "leaf": 1}, 44),
        (["--filter", "mid"], {"mid": 11, "leaf": 33}, 4),
        (["--filter", "skip"], {"skip": 1, "mid": 1, "leaf": 4}, 42),
        (["--filter", "top", "--notrace", "skip"], {"top": 1, "mid": 10, "leaf": 30}, 7),
        (["--depth", "2"], {"main": 1, "top": 1}, 0),
        (["--trace", "^(mid|skip)$"], {"mid": 11, "skip": 1}, 36),
    ]
    for i, (opts, want, n_excluded) in enumerate(cases):
        path, _ = record(*opts, "--", ARGS.traced, "run", "10", out=f"f{i}.capture")
        expect_counts(path, want, " ".join(opts))
        ct = excluded(path)
        check(ct["excluded"] == n_excluded, f"{' '.join(opts)}: {ct} (expected {n_excluded} excluded)")
    path, _ = record("--depth", "2", "--", ARGS.traced, "run", "10", out="depth.capture")
    ct = excluded(path)
    check(ct["cut_depth"] == 46, f"--depth 2 cuts the 46 deeper calls and counts them: {ct}")


def case_min_time():
    path, _ = record("--min-time", "200ms", "--", ARGS.traced, "timed", "10")
    got, j = counts(path)
    check(got == {"main": 1, "timed_root": 1, "slow": 2}, f"--min-time 200ms keeps the three long functions: {got}")
    ct = j["call_tracing"]
    # top(10)'s 47 calls, fast 5, their leaves 5, slow's leaves 4.
    check(ct["cut_short"] == 61 and ct["cut_order"] == 0, f"every short call is cut and counted: {ct}")
    slow = [s for s in j["sites"] if s["name"] == "slow"][0]
    check(slow["max"]["ns"] >= 300e6 and slow["p50"]["ns"] >= 300e6, f"held-back calls keep their start: {slow}")
    root = [s for s in j["sites"] if s["name"] == "timed_root"][0]
    check(root["self_ns"] < 0.5 * root["total_ns"], f"slow nests inside timed_root: {root}")


def case_libcalls():
    path, p = record("--libcalls", "--", ARGS.libcalls, "1000")
    _, j = counts(path)
    lib = {s["name"]: s["count"] for s in j["sites"] if s.get("category") == "libcall"}
    calls = {s["name"]: s["count"] for s in j["sites"] if s.get("traced_call")}
    check(lib.get("memcmp") == 1000 and lib.get("strlen") == 7, f"library calls named and counted: {lib}")
    check(f"of 2 traced functions and {len(lib)} library functions" in p.stderr, f"counted apart: {p.stderr}")
    check(calls == {"main": 1, "compare_three": 1}, f"traced calls apart from them: {calls}")
    check(not any(n.startswith(("__cyg_profile", "strobe")) for n in lib), f"Strobe's own calls are not library calls: {lib}")
    tree = strobe("export", path, "--format", "folded", "-o", "-").stdout
    check("thread 0;main;compare_three;memcmp " in tree, f"a library call nests in the traced call that made it:\n{tree}")
    # Exceptions thrown through library calls (300, more than the 256 a thread may hold open): the
    # calls they skipped are closed as unwound, and every memcmp after them is still recorded.
    path, p = record("--libcalls", "--", ARGS.cxx, "throw", "300", out="throw.capture")
    _, j = counts(path)
    lib = {s["name"]: s["count"] for s in j["sites"] if s.get("category") == "libcall"}
    check(lib.get("memcmp") == 300 and "not recorded" not in p.stderr, f"memcmp after 300 exceptions: {lib} {p.stderr}")
    # Off by default: the same run without --libcalls records no library call.
    path, _ = record("--", ARGS.libcalls, "1000", out="off.capture")
    _, j = counts(path)
    check(not [s for s in j["sites"] if s.get("category") == "libcall"], "no --libcalls, no library calls")


def case_double_start():
    own = os.path.join(ARGS.work, "own.capture")
    path, p = record("--", ARGS.own, own, "1000")
    check("exited with status 0" in p.stderr, f"the program ran as without strobe record: {p.stderr}")
    expect_counts(path, {"own_work": 1000}, "strobe record's capture")
    expect_counts(own, {"own_work": 1000}, "the program's own capture")
    # Strobe linked in statically: a copy of its own, which strobe record says it cannot see.
    path, p = record("--", ARGS.own_static, own, "10", out="static.capture")
    check("linked in statically" in p.stderr, f"said: {p.stderr}")
    expect_counts(path, {}, "a static copy's scopes are not in strobe record's capture")
    expect_counts(own, {"own_work": 10}, "the static program's own capture")
    path, p = record("--", ARGS.own, own, "10", out="shared.capture")
    check("statically" not in p.stderr, f"not said of a program linking libstrobe.so: {p.stderr}")


def case_signal():
    path, p = record("--", ARGS.traced, "signal", "10")
    check("killed by signal 15" in p.stderr, f"summary: {p.stderr}")
    t = totals(path)
    check(t["footer"] and not t["cut_short"], f"closed on SIGTERM: {t}")
    want = run_counts(10)
    del want["main"]  # main never returned: its scope stays open
    expect_counts(path, want, "signal")


def case_exec():
    path, _ = record("--", ARGS.traced, "exec", "10")
    t = totals(path)
    check(t["footer"] and not t["cut_short"], f"closed before the exec: {t}")
    want = run_counts(10)
    del want["main"]
    expect_counts(path, want, "exec, first image")
    check(sorted(os.listdir(ARGS.work)) == ["run.capture"], f"not followed: one file: {os.listdir(ARGS.work)}")
    path, p = record("--follow-fork", "--", ARGS.traced, "exec", "10", out="follow.capture")
    others = [f for f in os.listdir(ARGS.work) if f.startswith("follow.capture.")]
    check(len(others) == 1 and others[0].endswith(".1"), f"followed: FILE.PID.1: {others}")
    expect_counts(os.path.join(ARGS.work, others[0]), run_counts(2), "exec, second image")


def case_fork():
    path, _ = record("--", ARGS.traced, "fork", "10")
    t = totals(path)
    check(t["footer"] and not t["cut_short"], f"the parent's capture is whole: {t}")
    expect_counts(path, run_counts(10), "fork: the parent's calls only")
    # A child that execs: recorded only with --follow-fork, to FILE.PID.0.
    path, _ = record("--", ARGS.traced, "spawn", "10", out="spawn.capture")
    expect_counts(path, run_counts(10), "spawn: the parent")
    check(not [f for f in os.listdir(ARGS.work) if f.startswith("spawn.capture.")], "not followed: no child file")
    # Followed, a child that execs records twice: from the fork to its exec (FILE.PID.0: no calls, it
    # execs at once) and its new image (FILE.PID.1, its first exec).
    path, _ = record("--follow-fork", "--", ARGS.traced, "spawn", "10", out="follow.capture")
    expect_counts(path, run_counts(10), "followed spawn: the parent")
    children = sorted(f for f in os.listdir(ARGS.work) if f.startswith("follow.capture.") and f[-2:] in (".0", ".1"))
    check(len(children) == 2 and children[0][:-2] == children[1][:-2], f"followed: FILE.PID.0 and .1: {children}")
    expect_counts(os.path.join(ARGS.work, children[0]), {}, "followed spawn: the child before its exec")
    expect_counts(os.path.join(ARGS.work, children[1]), run_counts(3), "followed spawn: the child's new image")
    # Followed, a child that forks without exec records its own calls from the fork on (FILE.PID.0): top(10)
    # again, and none of its parent's.
    path, _ = record("--follow-fork", "--", ARGS.traced, "fork", "10", out="forked.capture")
    expect_counts(path, run_counts(10), "followed fork: the parent's calls only")
    children = [f for f in os.listdir(ARGS.work) if f.startswith("forked.capture.") and not f.endswith(".journal")]
    check(len(children) == 1 and children[0].endswith(".0"), f"followed fork: FILE.PID.0: {children}")
    want = run_counts(10)
    del want["main"]  # entered before the fork, in the parent's capture; the child never returns from it
    expect_counts(os.path.join(ARGS.work, children[0]), want, "followed fork: the child's own calls")
    t = totals(os.path.join(ARGS.work, children[0]))
    check(t["footer"] and not t["cut_short"], f"the child's capture was closed at its exit: {t}")


def case_bad_input():
    work = ARGS.work
    fifo = os.path.join(work, "fifo")
    os.mkfifo(fifo)
    bad = [
        (["--bogus", "--", ARGS.traced], "--bogus"),
        ([], "PROGRAM"),
        (["-o", os.path.join(work, "missing", "x.capture"), "--", ARGS.traced], "cannot create"),
        (["-o", fifo, "--", ARGS.traced], "not a regular file"),
        (["-o", work, "--", ARGS.traced], "not a regular file"),
        (["--depth", "0", "--", ARGS.traced], "--depth"),
        (["--sample", "0", "--", ARGS.traced], "--sample"),
        (["--overflow", "often", "--", ARGS.traced], "--overflow"),
        (["--compression", "20", "--", ARGS.traced], "--compression"),
        (["--trace", "(", "--", ARGS.traced], "--trace"),
        (["--filter", "", "--", ARGS.traced], "--filter"),
        (["--", os.path.join(work, "no-such-program")], "no such program"),
        (["--min-time", "1 hour", "--", ARGS.traced], "--min-time"),
    ]
    for argv, says in bad:
        out = [] if argv and argv[0] == "-o" else ["-o", os.path.join(work, "bad.capture")]
        p = strobe("record", *out, *argv, expect=2)
        check(says in p.stderr, f"strobe record {' '.join(argv)}: the error names {says!r}: {p.stderr}")
    check(sorted(os.listdir(work)) == ["fifo"], f"nothing written: {os.listdir(work)}")
    check(stat.S_ISFIFO(os.stat(fifo).st_mode), "the FIFO is left as it was")


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    for opt in ("--strobe", "--traced", "--plain", "--cxx", "--own", "--own-static", "--libcalls", "--work"):
        ap.add_argument(opt, required=True)
    ap.add_argument("case", choices=sorted(CASES))
    ARGS = ap.parse_args()
    shutil.rmtree(ARGS.work, ignore_errors=True)
    os.makedirs(ARGS.work)
    try:
        CASES[ARGS.case]()
    except (Fail, subprocess.CalledProcessError, KeyError) as e:
        print(f"record_{ARGS.case}: FAILED: {e!r}", file=sys.stderr)
        return 1
    print(f"record_{ARGS.case}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
