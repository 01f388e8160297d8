#!/usr/bin/env python3
"""cli_test.py — end-to-end tests of the `strobe` command-line tool.

Each CTest test `cli_<case>` runs one case below. Captures come from
make_capture (deterministic: 1 ns per tick, known durations), so counts are
checked exactly, and percentiles exactly against durations recomputed
independently from the chrome export, or plausibly where sampled.

usage: cli_test.py --strobe BIN --make-capture BIN --work DIR [--schema JSON] [--disabled-app BIN] CASE
"""
import argparse
import http.server
import json
import math
import os
import pty
import re
import resource
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ARGS = None


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


def run(*argv, expect=0, stdin=None):
    """Runs strobe with argv; checks the exit code; returns (stdout, stderr)."""
    p = subprocess.run([ARGS.strobe, *argv], capture_output=True, text=True, stdin=stdin, timeout=120)
    if expect is not None and p.returncode != expect:
        raise Fail(f"strobe {' '.join(argv)}: exit {p.returncode}, expected {expect}\nstdout:\n{p.stdout[-3000:]}"
                   f"\nstderr:\n{p.stderr[-3000:]}")
    return p.stdout, p.stderr


def run_json(*argv, expect=0):
    out, err = run(*argv, "--json", expect=expect)
    try:
        return json.loads(out), err
    except json.JSONDecodeError as e:
        raise Fail(f"strobe {' '.join(argv)} --json is not JSON: {e}\n{out[:2000]}")


def capture(name, *opts):
    path = os.path.join(ARGS.work, name + ".strobe")
    subprocess.run([ARGS.make_capture, path, *opts], check=True, timeout=120)
    return path


def has_keys(obj, keys, where):
    for k in keys:
        check(k in obj, f"{where}: key {k!r} missing (has {sorted(obj)})")


def site(report, name):
    for s in report["sites"]:
        if s["name"] == name:
            return s
    raise Fail(f"no site {name!r} in report: {[s['name'] for s in report['sites']]}")


def nearest_rank(values, p):
    v = sorted(values)
    r = max(1, min(len(v), math.ceil(p * len(v))))
    return v[r - 1]


def chrome_durations(path):
    """Scope durations in ns per name, from the chrome export (an independent path)."""
    out = os.path.join(ARGS.work, os.path.basename(path) + ".chrome.json")
    run("export", path, "--format", "chrome", "-o", out, "--quiet")
    with open(out) as f:
        doc = json.load(f)
    d = {}
    for e in doc["traceEvents"]:
        if e["ph"] == "X":
            d.setdefault(e["name"], []).append((e["ts"] * 1000, e["dur"] * 1000))
    return d


# >>cases

def case_info():
    base = capture("base")
    out, _ = run("info", base)
    for want in ("state       complete", "clock       monotonic, invariant, 1.000000 ns/tick", "kind file",
                 "pid 4242", "ring 262144 events", "flush every 100 ms", "19.5 ns per scope", "threads     2",
                 "main", "worker", "1300 events", "500 scopes", "footer      present", "misuse      end_without_begin 0",
                 "sites       14 (9 scope, 1 value, 1 cumulative, 1 counter, 1 gauge, 1 frame)"):
        check(want in out, f"info output lacks {want!r}:\n{out}")
    j, _ = run_json("info", base)
    has_keys(j, ["file", "bytes", "state", "header", "span", "threads", "sites", "totals", "misuse"], "info --json")
    check(j["state"]["complete"] and not j["state"]["cut_short"], "state should be complete")
    h = j["header"]
    check(h["clock_source"] == "monotonic" and h["ns_per_tick"] == 1.0 and h["kind"] == "file", f"header {h}")
    check(h["version"] == 5 and h["os"] == "linux" and h["pid"] == 4242 and h["ring_events"] == 262144, f"header {h}")
    # The two cost figures: the writer's calibration, and the drain's CPU per event from its DRAIN block.
    check(h["event_cost_ns"] == 8.6 and h["overflow"] == "drop", f"header {h}")
    check(h["drain"]["cpu_ns"] == 2600 and h["drain"]["events"] == 1300 and h["drain"]["ns_per_event"] == 2.0,
          f"drain {h['drain']}")
    th = {t["name"]: t for t in j["threads"]}
    check(th["main"]["events"] == 1050 and th["main"]["ended"] and th["main"]["tid"] == 1000, f"main {th['main']}")
    check(th["worker"]["events"] == 250 and not th["worker"]["ended"], f"worker {th['worker']}")
    t = j["totals"]
    check(t["events"] == 1300 and t["scopes"] == 500 and t["lost"] == 0 and t["unfinished"] == 0, f"totals {t}")
    check(j["sites"]["count"] == 14 and j["sites"]["scope"] == 9, f"sites {j['sites']}")

    # Losses, unfinished work and misuse are reported.
    unf = capture("unfinished", "--unfinished", "--lost")
    j, _ = run_json("info", unf)
    t = j["totals"]
    check(t["unfinished"] == 1 and t["lost_scopes"] == 1 and t["lost"] == 4, f"totals {t}")
    check(j["misuse"]["open_at_exit"] == 1, f"misuse {j['misuse']}")
    check({x["name"]: x["lost"] for x in j["threads"]}["worker"] == 4, "worker lost 4")

    # Cut short (no footer): said plainly, exit 0, misuse unknown.
    cut = capture("nofooter", "--no-footer")
    out, _ = run("info", cut)
    check("cut short: no footer (the process was killed or is still recording)" in out, out)
    j, _ = run_json("info", cut)
    check(j["state"]["cut_short"] and not j["state"]["footer"] and j["misuse"] is None, f"state {j['state']}")


def case_report():
    base = capture("base")
    j, _ = run_json("report", base)
    has_keys(j, ["file", "state", "capture", "filters", "sampling", "sites", "frames", "counters", "gauges", "values",
                 "loops", "overhead", "not_included"], "report --json")
    names = [s["name"] for s in j["sites"]]
    check(names == ["frame", "update", "work", "job", "io", "render", "draw"], f"sorted by total: {names}")
    counts = {s["name"]: s["count"] for s in j["sites"]}
    check(counts == {"frame": 50, "update": 50, "work": 150, "job": 50, "io": 50, "render": 50, "draw": 100},
          f"counts {counts}")
    work = site(j, "work")
    check(work["total_ns"] == 825000 and work["self_ns"] == 825000 and work["min_ns"] == 1000, f"work {work}")
    check(site(j, "update")["self_ns"] == 845000 - 825000, "update self = total - children")
    # Percentiles against durations recomputed from the chrome export.
    durs = chrome_durations(base)
    for name in ("work", "frame", "update", "draw", "job"):
        s = site(j, name)
        d = [x[1] for x in durs[name]]
        for p, key in ((0.5, "p50"), (0.95, "p95"), (0.99, "p99")):
            check(abs(s[key]["ns"] - nearest_rank(d, p)) < 0.5 and s[key]["n"] == len(d),
                  f"{name} {key}: {s[key]} vs nearest rank {nearest_rank(d, p)} of {len(d)}")
        check(s["max"]["ns"] == max(d) and s["max"]["n"] == s["count"] and not s["sampled"], f"{name} max {s}")
    check(work["p50"]["ns"] == 5000 and work["p95"]["ns"] == 10000, "work p50/p95 from the generator's formula")

    fr = j["frames"]
    check(fr["source"] == "marks" and len(fr["series"]) == 1, f"frames {fr}")
    main = fr["series"][0]
    check(main["name"] == "main" and main["frames"] == 49 and main["fps_first_to_last"] > 0, f"frame rate {main}")
    check(abs(main["fps_first_to_last"] - 49 / (main["span_ns"] / 1e9)) < 1e-3 * main["fps_first_to_last"],
          "fps over the first-to-last span")
    check(abs(main["fps_steady_median_interval"] - 1e9 / main["median_interval_ns"]) < 1e-3 * main["fps_steady_median_interval"],
          "steady fps from the median interval")
    slow = fr["slowest"]
    check(len(slow) == 10 and all(slow[i]["duration_ns"] >= slow[i + 1]["duration_ns"] for i in range(9)), "slowest")
    check(slow[0]["frame"] % 10 == 9, f"the slowest frames hold k % 10 == 9 (longest work): {slow[0]}")
    c = {x["name"]: x for x in j["counters"]}
    check(c["draw_calls"]["sum"] == 100 and c["draw_calls"]["count"] == 50, f"counters {c}")
    # Units come from the sites (make_capture declares draw_calls and triangles as counts).
    check(c["draw_calls"]["unit"] == "count", f"counter unit {c}")
    g = {x["name"]: x for x in j["gauges"]}["queue_depth"]
    check(g["last"] == 49 % 7 and g["min"] == 0 and g["max"] == 6 and g["count"] == 50, f"gauge {g}")
    v = {x["name"]: x for x in j["values"]}["triangles"]
    check(v["count"] == 100 and v["mean"] == 150 and v["min"] == 100 and v["max"] == 200, f"value {v}")
    check(v["unit"] == "count" and g["unit"] == "none", f"value and gauge units {v} {g}")
    loop = {x["name"]: x for x in j["loops"]}["iter"]
    check(loop["iterations"] == 500 and loop["min_ns"] == 200 and loop["max_ns"] == 400, f"loop {loop}")
    check(j["overhead"]["per_scope_ns"] == 19.5 and j["overhead"]["scopes"] == 500, f"overhead {j['overhead']}")

    out, _ = run("report", base)
    for want in ("scopes (sorted by total", "p50", "frames: FRAME marks", "fps over the first-to-last frame span",
                 "slowest 10", "counters (sum of deltas)", "draw_calls", "gauges", "queue_depth", "overhead 19.5 ns"):
        check(want in out, f"report text lacks {want!r}:\n{out}")
    # Durations in the unit that fits each, three significant digits (sub-µs never as 0.0001 ms).
    check(re.search(r"^  work +150 +825 µs +825 µs +5\.00 µs +10\.0 µs +10\.0 µs +10\.0 µs +150$", out, re.M),
          f"work row:\n{out}")
    check(re.search(r"^  iter +50 +500 +150 µs +300 ns +200 ns +400 ns$", out, re.M), f"loop row:\n{out}")
    check(re.search(r"^  triangles +150 +100 +200 +200 +100 +count$", out, re.M), f"value row:\n{out}")

    # Without frame marks, frames are the top-level scopes, and the output says so.
    unf = capture("unfinished", "--unfinished", "--lost")
    j, _ = run_json("report", unf, "--thread", "worker")
    check(j["frames"]["source"] == "top_level_scopes", f"frames {j['frames']['source']}")
    check(j["not_included"]["unfinished_scopes"] == 1 and j["not_included"]["lost_scopes"] == 1, "not included")
    check(site(j, "job")["count"] == 49, "the job whose END was lost is not counted")
    out, _ = run("report", unf, "--thread", "worker")
    check("1 unfinished scopes" in out, out)
    # Loss is said in the first lines, before any figure that misses it; a capture without loss has no such line.
    lossy = [l for l in out.splitlines()[:4] if re.search(r"\b4 events lost\b", l, re.I)]
    check(len(lossy) == 1, f"the loss is not in the first lines:\n{out}")
    out, _ = run("report", capture("base"))
    check(not [l for l in out.splitlines() if re.search(r"events lost\b", l, re.I)], f"a loss line without loss:\n{out}")
    out, _ = run("info", unf)
    check([l for l in out.splitlines()[:4] if re.search(r"\b4 events lost\b", l, re.I)], f"info: loss not first:\n{out}")
    j, _ = run_json("report", unf)
    check(j["overhead"]["event_ns"] == 8.6 and j["overhead"]["drain_ns_per_event"] == 2.0, f"cost {j['overhead']}")
    # A program without frames (no marks, no operations): no frame rate at all, in text or JSON.
    for path, argv in ((unf, ["--thread", "worker"]), (capture("frameless", "--no-marks"), [])):
        j, _ = run_json("report", path, *argv)
        check(j["frames"]["source"] == "top_level_scopes" and j["frames"]["series"] == [], f"frameless {j['frames']}")
        check(len(j["frames"]["slowest"]) == 10, "the slowest top-level scopes are still listed")
        out, _ = run("report", path, *argv)
        check("fps" not in out and "slowest 10 top-level scopes" in out, f"frameless report:\n{out}")


def case_report_sort():
    """--sort orders the sites by self, total, count or p95 (ties by site id); --correct-overhead subtracts
    calls x a call's two events at the header's calibrated cost per event (make_capture writes 8.6 ns) and says so."""
    base = capture("base")
    order = lambda j: [s["name"] for s in j["sites"]]
    expected = {"total": ["frame", "update", "work", "job", "io", "render", "draw"],
                "self": ["work", "io", "draw", "job", "update", "frame", "render"],
                "count": ["work", "draw", "frame", "update", "render", "job", "io"],
                "p95": ["frame", "update", "work", "job", "io", "render", "draw"]}
    for key, names in expected.items():
        j, _ = run_json("report", "--sort", key, base)
        check(j["sort"] == key and order(j) == names, f"--sort {key}: {j['sort']} {order(j)}")
        check(j["overhead_correction"] is None and all(s["self_corrected_ns"] is None for s in j["sites"]),
              f"--sort {key}: no correction unless asked")
    j, _ = run_json("report", "--sort", "count", "--top", "2", base)
    check(order(j) == ["work", "draw"], f"--top after --sort count: {order(j)}")
    out, _ = run("report", "--sort", "p95", base)
    check("sorted by p95" in out and "corrected" not in out, "the text says the order")
    lines = [l.split()[0] for l in out.split("scopes (sorted by p95")[1].split("\n")[2:9]]
    check(lines == expected["p95"], f"text order {lines}")

    j, _ = run_json("report", "--correct-overhead", "--sort", "self", base)
    oc = j["overhead_correction"]
    check(oc["per_call_ns"] == 17.2 and oc["event_ns"] == 8.6 and oc["events_per_call"] == 2
          and oc["sites_floored_at_zero"] == 0, f"correction {oc}")
    for s in j["sites"]:
        check(abs(s["self_corrected_ns"] - (s["self_ns"] - s["count"] * 17.2)) < 0.06, f"corrected self of {s['name']}: {s}")
    check(site(j, "work")["self_corrected_ns"] == 822420, "work: 825 us self - 150 calls x 17.2 ns")
    out, _ = run("report", "--correct-overhead", base)
    check("minus 17.2 ns per call (2 events at the writer's calibrated 8.60 ns)" in out, "the header states it")
    check(" 822 µs" in [l for l in out.split("\n") if l.split()[:1] == ["work"]][0], "text shows corrected self")

    # A cost larger than a site's self time per call floors its corrected self at 0, and says how many.
    dear = capture("dear", "--event-cost", "250")
    j, _ = run_json("report", "--correct-overhead", dear)
    floored = sorted(s["name"] for s in j["sites"] if s["self_ns"] - s["count"] * 500 < 0)
    check(floored == ["frame", "render", "update"] and j["overhead_correction"]["sites_floored_at_zero"] == 3,
          f"floored {floored} {j['overhead_correction']}")
    check(all(s["self_corrected_ns"] == max(0, s["self_ns"] - s["count"] * 500) for s in j["sites"]), "floor at 0")
    out, _ = run("report", "--correct-overhead", dear)
    check("minus 500 ns per call" in out and "3 sites floored at 0" in out, "the header says what was floored")
    free = capture("free", "--event-cost", "0")
    _, err = run("report", "--correct-overhead", free, expect=1)
    check("records no calibrated cost" in err, f"no cost, no correction: {err}")

    for bad in ("bogus", "", "Self"):
        _, err = run("report", "--sort", bad, base, expect=2)
        check("--sort takes self, total, count or p95" in err, f"--sort {bad!r}: {err}")


def case_report_graph():
    """--callers/--callees FUNC: exact call counts and times per caller and callee, from the enclosing scope."""
    st = capture("stages", "--stages")
    j, _ = run_json("report", "--callers", "row_bind", "--correct-overhead", st)
    g = j["graph"]
    rows = {r["name"]: (r["calls"], r["total_ns"], r["self_ns"]) for r in g["callers"]}
    check(g["function"] == "row_bind" and g["callees"] is None, f"graph {g}")
    check(rows == {"phase_update": (100, 30000, 30000), "model_update": (25, 12500, 12500)}, f"callers {rows}")
    check([r["name"] for r in g["callers"]] == ["phase_update", "model_update"], "callers sorted by total")
    for r in g["callers"]:
        check(abs(r["self_corrected_ns"] - (r["self_ns"] - r["calls"] * 17.2)) < 0.06, f"corrected caller row {r}")
    j, _ = run_json("report", "--callees", "frame", st)
    rows = {r["name"]: (r["calls"], r["total_ns"], r["self_ns"]) for r in j["graph"]["callees"]}
    check(rows == {"update": (50, 845000, 20000), "render": (50, 215000, 15000), "phase_update": (50, 45000, 15000),
                   "model_update": (25, 17500, 5000)}, f"callees of frame {rows}")
    check(j["graph"]["callers"] is None, "callers only when asked")
    j, _ = run_json("report", "--callers", "job", "--callees", "job", st)
    check([(r["name"], r["id"], r["calls"]) for r in j["graph"]["callers"]] == [("(top level)", None, 50)],
          f"a top-level function's caller {j['graph']['callers']}")
    check([(r["name"], r["calls"], r["total_ns"]) for r in j["graph"]["callees"]] == [("io", 50, 250000)],
          f"callees of job {j['graph']['callees']}")
    j, _ = run_json("report", "--callees", "draw", st)
    check(j["graph"]["callees"] == [], "a leaf has no callees")
    out, _ = run("report", "--callers", "row_bind", st)
    check("callers of row_bind" in out and "phase_update" in out.split("callers of row_bind")[1], out)
    j, _ = run_json("report", st)
    check(j["graph"] is None, "no graph unless asked")

    _, err = run("report", "--callers", "no_such_function", st, expect=2)
    check("--callers no_such_function: no site in the capture has that name" in err, err)
    _, err = run("report", "--callees", "row_bin", st, expect=2)
    check("no site in the capture has that name" in err, "FUNC is an exact name, not a substring")
    _, err = run("report", "--callers", "job", "--callees", "io", st, expect=2)
    check("take the same FUNC" in err, err)


def case_unwound():
    # One job's END never ran (UNWOUND): reported apart in the first lines, never a duration,
    # marked in every export; depth overflow is said there too.
    base = capture("base")
    unw = capture("unwound", "--unwound")
    out, _ = run("report", unw)
    head = "\n".join(out.splitlines()[:5])
    check(re.search(r"\b1 scopes unwound\b.*\bjob 1\b", head) and re.search(r"\b3 scopes deeper than 256\b", head),
          f"first lines:\n{head}")
    out, _ = run("report", base)
    check("scopes unwound" not in out and "depth overflow" not in out, f"nothing to say without them:\n{out[:600]}")
    j, _ = run_json("report", unw)
    jb, _ = run_json("report", base)
    check(j["capture"]["unwound_scopes"] == 1 and j["capture"]["depth_overflow"] == 3, f"{j['capture']}")
    check(j["not_included"]["unwound_by_site"] == [{"name": "job", "unwound": 1}], f"{j['not_included']}")
    check(site(j, "job")["count"] == site(jb, "job")["count"] - 1, "the unwound job is no duration")
    check(site(j, "io")["count"] == site(jb, "io")["count"], "its completed child still counts")
    # Chrome: an X event flagged in args; the count in otherData.
    out = os.path.join(ARGS.work, "unw.json")
    run("export", unw, "--format", "chrome", "-o", out)
    with open(out) as f:
        doc = json.load(f)
    flagged = [e for e in doc["traceEvents"] if "unwound" in str(e.get("args", {}).get("strobe", ""))]
    check(len(flagged) == 1 and flagged[0]["name"] == "job" and flagged[0]["ph"] == "X", f"{flagged}")
    check(doc["otherData"]["unwound_scopes"] == 1, f"{doc['otherData']}")
    # strobe info: beside the losses, the unwound scope; no ring grew and no producer waited (no RINGS block).
    ji, _ = run_json("info", unw)
    check(ji["totals"]["unwound"] == 1 and ji["totals"]["rings_grown"] == 0 and ji["totals"]["producer_waits"] == 0,
          f"info totals {ji['totals']}")
    text, _ = run("info", unw)
    check(re.search(r"^losses .*, 1 unwound \(END never ran\)$", text, re.M) and
          re.search(r"^rings +0 grown .*, 0 producer waits", text, re.M), f"info text:\n{text}")
    # Speedscope: a frame of its own; folded: no self time from it; CSV: not counted.
    out = os.path.join(ARGS.work, "unw.speedscope.json")
    run("export", unw, "--format", "speedscope", "-o", out)
    with open(out) as f:
        names = [fr["name"] for fr in json.load(f)["shared"]["frames"]]
    check(sum(1 for n in names if n.startswith("job [unwound")) == 1 and "job" in names, f"{names}")
    def folded(path):
        o, _ = run("export", path, "--format", "folded")
        return {l.rsplit(" ", 1)[0]: int(l.rsplit(" ", 1)[1]) for l in o.splitlines()}
    fb, fu = folded(base), folded(unw)
    check(fu["worker;job;io"] == fb["worker;job;io"] and fu["worker;job"] < fb["worker;job"], f"{fu} {fb}")
    def csv_counts(path):
        o, _ = run("export", path, "--format", "csv")
        return {r.split(",")[0].strip('"'): int(r.split(",")[5]) for r in o.splitlines()[1:]}
    check(csv_counts(unw)["job"] == csv_counts(base)["job"] - 1, "csv counts")
def case_interned():
    """Run-time names: info counts them and the refusals, report shows the names and flags them."""
    base = capture("base")
    j, _ = run_json("info", base)
    check(j["sites"]["interned"] == 0 and j["misuse"]["intern_invalid"] == 0, f"base sites {j['sites']}")
    j, _ = run_json("report", base)
    check(not site(j, "work")["interned"] and j["interned_names"]["sites"] == 0, f"base {j['interned_names']}")
    out, _ = run("report", base)
    check("run-time names" not in out, "no run-time names line without interned sites")

    path = capture("interned", "--interned")
    j, _ = run_json("info", path)
    check(j["sites"]["interned"] == 1 and j["sites"]["count"] == 14, f"sites {j['sites']}")
    check(j["misuse"]["intern_invalid"] == 2 and j["misuse"]["intern_full"] == 1, f"misuse {j['misuse']}")
    out, _ = run("info", path)
    check("1 named at run time" in out and "intern_invalid 2" in out and "intern_full 1" in out, out)
    j, _ = run_json("report", path)
    w = site(j, "eval sum_rows(x, y)")
    check(w["interned"] and w["count"] == 150 and w["file"] == "" and w["line"] == 0, f"interned site {w}")
    check(not site(j, "frame")["interned"], "a static site is not interned")
    n = j["interned_names"]
    check(n["sites"] == 1 and n["refused_invalid"] == 2 and n["refused_full"] == 1, f"interned_names {n}")
    out, _ = run("report", path)
    check("eval sum_rows(x, y)" in out, f"report text lacks the interned name:\n{out}")
    check(re.search(r"^run-time names: 1 sites.*3 names refused \(2 invalid, 1 past", out, re.M), out)
    # Cut short: the refusals are unknown, never shown as 0.
    j, _ = run_json("report", capture("interned_cut", "--interned", "--no-footer"))
    check(j["interned_names"]["refused_full"] is None and j["interned_names"]["sites"] == 1, f"{j['interned_names']}")


def case_kinds():
    """Counters and gauges by kind: listed as family/kind, and per frame (mean, max, the frame of the max)."""
    n = 50
    path = capture("kinds", "--kinds", "--frames", str(n))
    j, _ = run_json("report", path, "--top", "1000")
    quads = [x for x in j["counters"] if x["name"] == "draw_calls" and x["kind"] == "quads"]
    check(len(quads) == 1 and quads[0]["sum"] == sum(k % 5 + 1 for k in range(n)), f"counters {j['counters']}")
    plain = [x for x in j["counters"] if x["name"] == "draw_calls" and x["kind"] is None]
    check(len(plain) == 1 and plain[0]["sum"] == 2 * n, f"the plain draw_calls counter has no kind {plain}")
    k = j["kinds"]
    check(k["available"] and k["frames"]["source"] == "marks" and k["frames"]["n"] == n - 1, f"frames {k}")
    fam = {f["family"]: f for f in k["families"]}
    check(sorted(fam) == ["draw_calls", "gpu_memory"] and fam["draw_calls"]["site_kind"] == "counter" and
          fam["gpu_memory"]["site_kind"] == "gauge", f"families {sorted(fam)}")
    dc = {x["kind"]: x for x in fam["draw_calls"]["kinds"]}
    # Frame k's draw calls come before its mark: they are in frame k - 1; frame 0's are before every frame.
    want = [k % 5 + 1 for k in range(1, n)]
    q = dc["quads"]
    check(q["total"] == sum(want) and q["n"] == n - 1 and abs(q["mean_per_frame"] - sum(want) / (n - 1)) < 1e-6,
          f"quads {q}")
    check(q["max_per_frame"] == 5 and q["outside_frames"] == 2 and q["events"] == 2 * (n - 1) and
          q["frames_counted"] == n - 1, f"quads per frame {q}")
    starts = sorted(x["start_ms"] for x in j["frames"]["slowest"])
    check(abs(q["max_frame_start_ms"] - starts[want.index(5)]) < 1e-6, f"the frame of the max {q} {starts[:6]}")
    t = dc["text"]
    check(t["total"] == 3 * (n - 1) and t["max_per_frame"] == 3 and t["mean_per_frame"] == 3, f"text {t}")
    # A gauge's level is in the frame it was sampled in: frame k's at its mark, the start of frame k.
    g = fam["gpu_memory"]["kinds"][0]
    levels = [1000 * (k % 4) for k in range(n - 1)]
    check(g["kind"] == "textures" and g["unit"] == "bytes" and g["n"] == n - 1 and g["outside_frames"] == 1 and
          abs(g["mean"] - sum(levels) / len(levels)) < 1e-6 and g["max"] == 3000, f"gauge {g}")
    check(abs(g["max_frame_start_ms"] - starts[3]) < 1e-6, f"the gauge's max frame {g}")
    out, _ = run("report", path)
    for want_text in ("draw_calls/quads", "gpu_memory/textures", "counters and gauges by kind, per frame (49 frames"):
        check(want_text in out, f"report text lacks {want_text!r}:\n{out}")
    # Standard input is read once: the per-frame figures say why they are absent.
    with open(path, "rb") as f:
        j, _ = run_json_stdin(f)
    check(not j["kinds"]["available"] and "standard input" in j["kinds"]["null_reason"], f"stdin {j['kinds']}")
    # Without kinds: absent, saying so; the time filter cuts numbers too.
    j, _ = run_json("report", capture("plain"))
    check(not j["kinds"]["available"], f"plain {j['kinds']}")
    j, _ = run_json("report", path, "--to", "1.0")
    check(not j["kinds"]["available"] or all(x["events"] == 0 for f in j["kinds"]["families"] for x in f["kinds"]),
          f"--to before the frames {j['kinds']}")


def case_memory():
    """Allocations and messages (docs/memory.md; make_capture --memory): per pool over the capture, per frame (the
    frame model's frames: frame k holds its update's free of frame k-1's 100-byte block, its render's 100 + 28
    bytes and the 28's free; frame 5 also 4096 bytes of glyphs never freed), the worker's io_buffers outside every
    frame, the leaks (the last 100-byte block and the glyphs), the peak at a frame's end, and --messages in time
    order, the run-time one marked as content."""
    n = 12
    path = capture("memory", "--memory", "--frames", str(n))
    j, _ = run_json("report", path, "--messages")
    a = j["allocations"]
    check(a["available"], f"allocations {a}")
    pools = {p["name"]: p for p in a["pools"]}
    dl, gl, io = pools["display_list"], pools["glyphs"], pools["io_buffers"]
    check(dl["allocs"] == 2 * n and dl["bytes"] == 128 * n and dl["frees"] == 2 * n - 1 and
          dl["freed_bytes"] == 28 * n + 100 * (n - 1) and dl["live_blocks"] == 1 and dl["live_bytes"] == 100, f"{dl}")
    check(gl["allocs"] == 1 and gl["bytes"] == 4096 and gl["frees"] == 0 and gl["live_bytes"] == 4096, f"{gl}")
    check(io["allocs"] == n and io["frees"] == n and io["live_bytes"] == 0, f"{io}")
    # Each handoff block's free is read before its allocation (main's events come first in the file).
    ho = pools["handoff"]
    check(ho["allocs"] == n and ho["frees"] == n - 1 and ho["freed_bytes"] == 256 * (n - 1) and
          ho["live_blocks"] == 1 and ho["live_bytes"] == 256, f"{ho}")
    frames = {f["number"]: f for f in a["frames"]}
    check(sorted(frames) == list(range(1, n)), f"frames {sorted(frames)}")
    for k in range(1, n):
        f = {p["name"]: p for p in frames[k]["pools"]}
        d, g = f["display_list"], f["glyphs"]
        check(d["allocs"] == 2 and d["bytes"] == 128 and d["frees"] == 2 and d["freed_bytes"] == 128 and
              d["live_end_bytes"] == 100, f"frame {k}: {d}")
        check(g["allocs"] == (k == 5) and g["live_end_bytes"] == (4096 if k >= 5 else 0), f"frame {k}: {g}")
        check(f["handoff"]["frees"] == 1 and f["handoff"]["freed_bytes"] == 256, f"frame {k}: {f['handoff']}")
    # Frame 0's allocations come before the first mark, and the worker's are on a thread with no frame.
    o = a["outside_frames"]
    check(o["allocs"] == 2 + 2 * n and o["bytes"] == 128 + (512 + 256) * n and o["frees"] == 1 + n, f"outside {o}")
    sizes = sorted(b["bytes"] for b in a["largest_live"])
    check(sizes == [100, 256, 4096], f"leaks {a['largest_live']}")
    peak = max(range(1, n), key=lambda k: (frames[k]["live_end_bytes"], -k))
    check(a["peak_frame"] == peak and a["peak_live_bytes"] == frames[peak]["live_end_bytes"] and peak >= 5,
          f"peak {a['peak_live_bytes']} {a['peak_frame']}")
    check(a["unmatched_frees"] == 0 and a["frees_missing"] == 0 and a["messages"] == 2 and
          a["messages_content"] == 1, f"counts {a}")
    m = j["messages"]
    check([x["text"] for x in m] == ["frame loop started", "loaded 42 items"] and [x["content"] for x in m] ==
          [False, True] and m[0]["at_ns"] < m[1]["at_ns"], f"messages {m}")
    out, _ = run("report", path, "--messages")
    for want in ("allocations (docs/memory.md)", "display_list", "peak live: ",
                 "loaded 42 items  [content]"):
        check(want in out, f"report text lacks {want!r}:\n{out}")
    # strobe explain says what a frame allocated: frame 5 owns its two display_list blocks and the glyphs.
    out, _ = run("explain", path, "--frame", "5")
    check("allocations: 3 (4.12 KiB) in this frame" in out, f"explain's line:\n{out}")
    out, _ = run("explain", capture("plain_explain"), "--frame", "5")
    check("allocations:" not in out, f"explain on a capture without allocations:\n{out}")
    # strobe merge carries them: two processes' allocations and messages, each pool's figures summed.
    merged = os.path.join(ARGS.work, "memory_merged.strb")
    run("merge", "--same-host", path, capture("memory_b", "--memory", "--frames", str(n), "--pid", "202"), "-o",
        merged, "--quiet")
    j, _ = run_json("report", merged)
    mp = {p["name"]: p for p in j["allocations"]["pools"]}
    check(mp["display_list"]["allocs"] == 4 * n and mp["glyphs"]["live_bytes"] == 2 * 4096 and
          j["allocations"]["messages"] == 4, f"merged {j['allocations']['pools']}")
    # Without --messages no log is listed; a capture without allocations shows no section.
    j, _ = run_json("report", path)
    check("messages" not in j, "messages listed without --messages")
    out, _ = run("report", capture("plain_memory"))
    check("allocations" not in out and "messages:" not in out, f"a capture without allocations:\n{out}")
    with open(path, "rb") as f:
        j, _ = run_json_stdin(f)
    check(not j["allocations"]["available"] and "standard input" in j["allocations"]["why"], f"{j['allocations']}")


def run_json_stdin(f):
    p = subprocess.run([ARGS.strobe, "report", "--json", "-"], capture_output=True, text=True, stdin=f, timeout=120)
    check(p.returncode == 0, f"report - exited {p.returncode}: {p.stderr}")
    return json.loads(p.stdout), p.stderr


def case_interp():
    """examples/interp: a script's functions, named at run time, recorded exactly and shown by strobe report."""
    check(ARGS.interp, "--interp (the strobe-interp example) is required for this case")
    path = os.path.join(ARGS.work, "interp.strobe")
    script = os.path.join(ARGS.work, "script.txt")
    with open(script, "w", encoding="utf-8") as f:  # names no source file holds
        f.write("def tok_3f9: work 10\n"
                "def ln_\u00e9t\u00e9: loop 7 tok_3f9\n"
                "main: loop 11 ln_\u00e9t\u00e9; call tok_3f9\n")
    p = subprocess.run([ARGS.interp, path, script], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"strobe-interp failed: {p.stderr}")
    j, _ = run_json("report", path)
    want = {"tok_3f9": 78, "ln_\u00e9t\u00e9": 11, "main": 1}
    for name, count in want.items():
        s = site(j, name)
        check(s["interned"] and s["count"] == count and s["category"] == "script", f"{name}: {s}")
    calls = {c["name"]: c["sum"] for c in j["counters"]}
    check(all(calls.get(n) == c for n, c in want.items()), f"call counters {calls}")
    check(j["interned_names"]["sites"] == 6 and j["interned_names"]["refused_invalid"] == 0, f"{j['interned_names']}")


def case_ops():
    # Operations only (no scope on main, no frame mark): frames are the passes, named by the
    # application's frame ids, with both frame rates; stages and counters come from the operations.
    ops = capture("ops", "--ops", "--frames", "100", "--stall", "50")
    j, _ = run_json("report", ops)
    fr = j["frames"]
    check(fr["source"] == "pass_operations" and fr["passes"] == 100 and fr["uncommitted"] == 1, f"frames {fr}")
    check(len(fr["series"]) == 1 and fr["series"][0]["window"] == "main", f"series {fr['series']}")
    main = fr["series"][0]
    # 99 committed passes: 98 intervals from the first start to the last, one of them 2 s longer.
    first, last = 1000000, 1000000 + 16000000 * 99 + 2000000000
    check(main["frames"] == 98 and abs(main["span_ns"] - (last - first)) < 1, f"span {main}")
    check(abs(main["fps_first_to_last"] - 98 / ((last - first) / 1e9)) < 1e-3, f"first-to-last {main}")
    check(main["median_interval_ns"] == 16000000 and abs(main["fps_steady_median_interval"] - 62.5) < 1e-6,
          f"steady {main}")
    check(main["fps_first_to_last"] < 30 < main["fps_steady_median_interval"], f"the stall pulls only one rate down {main}")
    slow = fr["slowest"]
    check([x["frame"] for x in slow[:3]] == [193 + 9, 193 + 19, 193 + 29], f"slowest by the application's ids {slow[:3]}")
    check(all(x["window"] == "main" for x in slow), "slowest frames name their window")
    every = run_json("report", ops, "--top", "100")[0]["frames"]["slowest"]
    check(len(every) == 100 and [(x["frame"], x["state"], x["counted"]) for x in every if x["state"] != "completed"]
          == [(193 + 7, "dropped", False)], "the uncommitted pass is listed, flagged as dropped, not counted")
    check(j["frames"]["by_state"]["COMPLETED"] == 99 and j["frames"]["by_state"]["DROPPED"] == 1, f"{j['frames']}")
    o = j["operations"]
    check(o["by_kind"]["pass"] == 100 and o["uncommitted"] == 1 and o["without_detail"] == 0, f"operations {o}")
    st = {x["name"]: x for x in o["stages"]}
    check(st["layout"]["n"] == 100 and st["layout"]["p50"]["ns"] == 3000 and st["layout"]["nested_in"] is None, f"{st}")
    check(st["paint"]["n"] == 100 and st["paint"]["nested_in"] == "layout" and st["paint"]["nested_in_from"] == "run-time",
          f"{st}")
    rows = {x["name"]: x for x in o["counters"]}["rows"]
    check(rows["n"] == 100 and rows["sum"] == sum(range(100)) and rows["max"] == 99, f"counter {rows}")
    check(site(j, "job")["count"] == 100, "the worker's scopes are still reported")
    out, _ = run("report", ops)
    for want in ("frames: pass operations", "fps_first_to_last", "fps_steady_median_interval", "62.50 fps steady",
                 "operations: 100 pass", "layout", "rows", "99 completed, 1 dropped"):
        check(want in out, f"report text lacks {want!r}:\n{out}")
    # Chrome/Perfetto: every operation is an async slice named by its frame id, its stages and counters as args.
    out_json = os.path.join(ARGS.work, "ops.chrome.json")
    run("export", ops, "--format", "chrome", "-o", out_json)
    with open(out_json) as f:
        events = json.load(f)["traceEvents"]
    begins = [e for e in events if e["ph"] == "b" and e.get("cat") == "operation"]
    ends = [e for e in events if e["ph"] == "e" and e.get("cat") == "operation"]
    check(len(begins) == 100 and len(ends) == 100, f"{len(begins)} operation slices")
    b0 = next(e for e in begins if e["name"] == "pass 200")
    check(b0["args"]["frame_id"] == 200 and b0["args"]["window"] == "main" and b0["args"]["committed"] is False and
          b0["args"]["stage layout ms"] == 0.003 and b0["args"]["counter rows"] == 7, f"operation args {b0}")
    e0 = next(e for e in ends if e["id2"] == b0["id2"])
    check(abs((e0["ts"] - b0["ts"]) - 4.7) < 1e-6, f"its duration {b0['ts']} .. {e0['ts']}")
    j, _ = run_json("info", ops)
    check(j["totals"]["operations"] == 100 and j["totals"]["operation_events"] == 200, f"info totals {j['totals']}")
    # Frame marks only: both rates too, per thread.
    j, _ = run_json("report", capture("marks"))
    check(j["frames"]["source"] == "marks" and "operations" in j and j["operations"]["by_kind"]["pass"] == 0,
          f"marks-only capture {j['frames']['source']}")


def case_filters():
    base = capture("base")
    j, _ = run_json("report", base, "--thread", "worker")
    check([s["name"] for s in j["sites"]] == ["job", "io"], f"--thread worker: {[s['name'] for s in j['sites']]}")
    j2, _ = run_json("report", base, "--thread", "1")
    check(j2["sites"] == j["sites"], "--thread 1 is the same thread as --thread worker")
    j, _ = run_json("report", base, "--name", "or")
    check([s["name"] for s in j["sites"]] == ["work"], f"--name or: {[s['name'] for s in j['sites']]}")
    j, _ = run_json("report", base, "--top", "2")
    check(len(j["sites"]) == 2 and len(j["frames"]["slowest"]) == 2, "--top 2")
    # --from/--to: scopes wholly inside, counted independently from the chrome export.
    durs = chrome_durations(base)
    lo, hi = 1.2, 1.6  # ms since the capture start (0)
    j, _ = run_json("report", base, "--from", str(lo), "--to", str(hi))
    for name, spans in durs.items():
        want = sum(1 for ts, dur in spans if ts >= lo * 1e6 and ts + dur <= hi * 1e6)
        got = next((s["count"] for s in j["sites"] if s["name"] == name), 0)
        check(got == want, f"--from {lo} --to {hi}: {name} count {got}, expected {want}")
    check(0 < site(j, "work")["count"] < 150, "the range selects some work scopes")
    _, err = run("report", base, "--thread", "nosuch")
    check("no thread matches --thread nosuch" in err, err)


def case_sampling():
    big = capture("big", "--frames", "2000")
    j, _ = run_json("report", big)
    work = site(j, "work")
    check(work["count"] == 6000 and work["sampled"] and work["n_sampled"] == 4096, f"work {work}")
    check(work["p50"]["n"] == 4096 and work["max"]["n"] == 6000 and work["max"]["ns"] == 10000, f"work {work}")
    # Durations are 1000..10000 ns uniformly: a uniform sample puts p50 near 5000-6000, p95/p99 at 10000.
    check(4000 <= work["p50"]["ns"] <= 6000 and work["p95"]["ns"] == 10000 and work["p99"]["ns"] == 10000, f"{work}")
    check(site(j, "frame")["sampled"] is False and site(j, "frame")["p50"]["n"] == 2000, "under the bound: exact")
    j2, _ = run_json("report", big)
    check(site(j2, "work") == work, "the fixed seed gives the same figures every run")
    out, _ = run("report", big)
    check("4096*" in out and "uniform random sample" in out, f"sampling is stated:\n{out}")


def case_json():
    """Every --json output parses with python's json.tool and carries its keys."""
    base = capture("base")
    grown = capture("grown", "--grow", "50")
    spike = capture("spike", "--spike", "5")
    for argv in (["info", base], ["report", base], ["diff", base, grown], ["diff", spike, "--frames", "4", "5"],
                 ["compare", base, base, "--max-regression", "5"]):
        out, _ = run(*argv, "--json")
        p = subprocess.run([sys.executable, "-m", "json.tool"], input=out, capture_output=True, text=True)
        check(p.returncode == 0, f"json.tool rejects strobe {' '.join(argv)} --json: {p.stderr}")
    out, _ = run("--help")
    check("usage: strobe <command>" in out and "export" in out, out)
    for cmd in ("info", "report", "diff", "compare", "export"):
        out, _ = run(cmd, "--help")
        check(out.startswith(f"usage: strobe {cmd}") and "Exit:" in out, f"{cmd} --help:\n{out}")


def case_diff():
    base = capture("base")
    grown = capture("grown", "--grow", "50")
    spike = capture("spike", "--spike", "5")
    j, _ = run_json("diff", base, grown)
    has_keys(j, ["a", "b", "clock_mismatch", "sites"], "diff --json")
    first = j["sites"][0]
    check(first["name"] == "work" and first["status"] == "grew", f"the grown span comes first: {first}")
    check(first["total_change_ns"] == 412500 and abs(first["total_change_pct"] - 50) < 1e-9, f"{first}")
    check(first["a"]["p50"]["ns"] == 5000 and first["b"]["p50"]["ns"] == 7500, f"{first}")
    check(all(s["status"] == "same" for s in j["sites"] if s["name"] in ("io", "job", "draw", "render")), "unchanged")
    out, _ = run("diff", base, grown)
    lines = [l for l in out.splitlines() if re.match(r"^  \w", l) and not l.startswith("  site ")]
    check(lines and lines[0].split()[0] == "work" and lines[0].rstrip().endswith("grew"), f"diff text:\n{out}")
    # A site only in B appeared; only in A vanished.
    j, _ = run_json("diff", base, spike)
    check({s["name"]: s["status"] for s in j["sites"]}["spike"] == "appeared", "spike appeared")
    j, _ = run_json("diff", spike, base)
    sp = next(s for s in j["sites"] if s["name"] == "spike")
    check(sp["status"] == "vanished" and sp["b"] is None and sp["total_change_ns"] == -50000, f"vanished: {sp}")
    growth = [s["total_change_ns"] for s in j["sites"]]
    check(growth == sorted(growth, reverse=True), f"sorted by growth of total: {growth}")


def case_frames():
    spike = capture("spike", "--spike", "5")
    j, _ = run_json("diff", spike, "--frames", "4", "5")
    has_keys(j, ["file", "thread", "frames_are", "a", "b", "spans"], "diff --frames --json")
    check(j["frames_are"] == "marks" and j["thread"]["name"] == "main", f"{j['thread']} {j['frames_are']}")
    spans = {s["path"]: s for s in j["spans"]}
    check(spans["frame/spike"]["status"] == "appeared" and spans["frame/spike"]["after_ns"] == 50000, f"{spans}")
    w = spans["frame/update/work"]
    check(w["status"] == "grew" and w["before_ns"] == 15000 and w["after_ns"] == 54000, f"work {w}")
    check(w["count_before"] == 3 and w["count_after"] == 3, f"work counts {w}")
    check(spans["frame/render/draw"]["status"] == "same", "draw unchanged")
    changes = [abs(s["change_ns"]) for s in j["spans"]]
    check(changes == sorted(changes, reverse=True), "largest change first")
    j, _ = run_json("diff", spike, "--frames", "5", "4")
    check({s["path"]: s["status"] for s in j["spans"]}["frame/spike"] == "vanished", "spike vanished")
    out, _ = run("diff", spike, "--frames", "4", "5")
    check("frame/spike" in out and "appeared" in out and "frames are FRAME marks" in out, out)
    # Frames are the capture's, not a thread's (docs/frames.md §Which frames): with marks, a thread that marks
    # none has no frames.
    _, err = run("diff", spike, "--frames", "3", "4", "--thread", "worker", expect=2)
    check("no thread worker has frames" in err and "(its frames are frame marks)" in err, err)
    # Without marks: the nth top-level scope of the thread.
    frameless = capture("frameless", "--no-marks")
    j, _ = run_json("diff", frameless, "--frames", "3", "4", "--thread", "worker")
    check(j["frames_are"] == "top_level_scopes" and j["thread"]["name"] == "worker", f"{j['frames_are']}")
    check({s["path"]: s["status"] for s in j["spans"]} == {"job": "same", "job/io": "same"}, f"{j['spans']}")
    _, err = run("diff", spike, "--frames", "4", "500", expect=2)
    check("frame 500 does not exist" in err, err)
    _, err = run("diff", spike, "--frames", "4", expect=2)
    check("--frames expects FILE --frames N M" in err, err)


def case_tree():
    """UI-tree snapshots (docs/cli.md §strobe tree): listed with their frames, one rebuilt into its tree
    with every node's parent, bounds, properties and the spans attributed to its element in that frame."""
    path = capture("ui_tree", "--ui-tree", "--frames", "12")
    j, _ = run_json("tree", path)
    snaps = j["snapshots"]
    check([(s["snapshot"], s["frame"], s["nodes"]) for s in snaps] == [(1, 4, 3), (2, 9, 3)], f"{snaps}")
    j, _ = run_json("tree", path, "--frame", "4")
    check(j["snapshot"]["frame"] == 4 and j["snapshot"]["spans_in"] == "frame", f"{j['snapshot']}")
    nodes = j["nodes"]
    check([(n["type"], n["parent"], n["depth"]) for n in nodes] == [("Row", -1, 0), ("Cell", 0, 1), ("Cell", 0, 1)],
          f"{nodes}")
    check([int(n["id"], 16) for n in nodes] == [1004, 41, 42], f"{nodes}")
    check(nodes[0]["bounds"] == [0, 80, 300, 20] and nodes[2]["bounds"] == [150, 80, 150, 20], f"{nodes}")
    check(nodes[0]["props"] == {"height": 20} and nodes[2]["props"] == {"padding": 1.5}, f"{nodes}")
    # render (4,300 ns) is the Row's span, each draw (2,000 ns) its Cell's: once each in frame 4.
    check([(n["spans"]["count"], n["spans"]["total_ns"]) for n in nodes] == [(1, 4300), (1, 2000), (1, 2000)],
          f"{nodes}")
    out, _ = run("tree", path, "--snapshot", "2")
    lines = out.splitlines()
    check(lines[0].startswith("snapshot 2 at") and "frame 9" in lines[0], out)
    check(lines[2].startswith("Row 00000000000003f1 [0, 180, 300 x 20] height=20  spans 1 (4.30"), out)
    check(lines[3].startswith("  Cell 000000000000005b [0, 180, 150 x 20] padding=0.5  spans 1 (2.00"), out)
    _, err = run("tree", path, "--frame", "5", expect=2)
    check("no UI-tree snapshot was taken in frame 5" in err, err)
    _, err = run("tree", path, "--snapshot", "3", expect=2)
    check("no snapshot 3" in err, err)
    run("tree", path, "--frame", "4", "--snapshot", "1", expect=2)
    run("tree", "-", expect=2, stdin=open(path, "rb"))
    # A capture without snapshots says so; the other subcommands read attributed captures as before.
    out, _ = run("tree", capture("plain"))
    check("no UI-tree snapshots" in out, out)
    j, _ = run_json("info", path)
    check(j["header"]["version"] == 5, f"{j['header']}")
    run("report", path)


def case_attachments():
    """`strobe export --attachments DIR` (docs/cli.md §strobe export): one file per attachment named by frame and
    resource, content stored once per resource (a later frame's use is a hard link), the bound's cuts reported,
    and a DIR that exists as anything but a directory refused."""
    path = capture("deep", "--deep", "--frames", "12")
    out_dir = os.path.join(ARGS.work, "attachments")
    _, err = run("export", path, "--attachments", out_dir)
    names = sorted(os.listdir(out_dir))
    check(names == ["frame-4-resource-0000000000000001.png", "frame-4-resource-0000000000000010.bin",
                    "frame-4-resource-0000000000000020.a8", "frame-9-resource-0000000000000010.bin", "index.tsv"],
          f"{names}")
    with open(os.path.join(out_dir, "frame-4-resource-0000000000000020.a8"), "rb") as f:
        check(f.read() == bytes([0, 255, 255, 0, 128, 64, 32, 16]), "the mask's bytes")
    with open(os.path.join(out_dir, "frame-4-resource-0000000000000001.png"), "rb") as f:
        check(f.read()[:4] == b"\x89PNG", "the screenshot's bytes")
    first = os.stat(os.path.join(out_dir, "frame-4-resource-0000000000000010.bin"))
    again = os.stat(os.path.join(out_dir, "frame-9-resource-0000000000000010.bin"))
    check(first.st_size == 96 and first.st_ino == again.st_ino, "stored once: frame 9's is a link to frame 4's")
    rows = [line.split("\t") for line in open(os.path.join(out_dir, "index.tsv")).read().splitlines()[1:]]
    check([(r[0], r[1][-2:], r[6]) for r in rows] ==
          [("4", "10", "stored"), ("4", "20", "stored"), ("4", "01", "stored"), ("9", "10", "earlier"), ("9", "30", "cut")],
          f"{rows}")
    check("1 attachments (500 bytes) were cut" in err, err)
    # Again into the same DIR: refused, as it holds files, unless --force replaces its own files.
    _, err = run("export", path, "--attachments", out_dir, expect=2)
    check("not empty" in err and "--force" in err, err)
    # Hard links planted in DIR to files elsewhere: --force replaces the names, never writes through them.
    victims = {}
    for name in ("index.tsv", "frame-4-resource-0000000000000001.png"):
        victim = os.path.join(ARGS.work, "victim-" + name)
        with open(victim, "wb") as f:
            f.write(b"victim")
        os.remove(os.path.join(out_dir, name))
        os.link(victim, os.path.join(out_dir, name))
        victims[victim] = name
    run("export", path, "--attachments", out_dir, "--force")
    check(os.stat(os.path.join(out_dir, "frame-9-resource-0000000000000010.bin")).st_nlink == 2, "relinked")
    for victim, name in victims.items():
        check(open(victim, "rb").read() == b"victim" and os.stat(victim).st_nlink == 1,
              f"{victim}, linked as {name} in DIR, was written through")
        check(os.path.getsize(os.path.join(out_dir, name)) > 6, f"{name} rewritten")
    run("export", path, "--format", "chrome", "--force", "-o", os.path.join(ARGS.work, "x.json"), expect=2)
    fifo = os.path.join(ARGS.work, "a-fifo")
    os.mkfifo(fifo)
    _, err = run("export", path, "--attachments", fifo, expect=2)
    check("FIFO" in err and "not a directory" in err, err)
    regular = os.path.join(ARGS.work, "a-file")
    open(regular, "w").close()
    _, err = run("export", path, "--attachments", regular, expect=2)
    check("regular file" in err, err)
    check(os.path.getsize(regular) == 0, "the file is left alone")
    run("export", path, "--attachments", out_dir, "--format", "chrome", expect=2)
    # A capture without attachments writes only the index.
    empty_dir = os.path.join(ARGS.work, "none")
    run("export", capture("plain"), "--attachments", empty_dir)
    check(os.listdir(empty_dir) == ["index.tsv"], f"{os.listdir(empty_dir)}")


def case_calls():
    """`strobe calls` (docs/cli.md §strobe calls): the deep captures listed with every frame's attachments, and one
    frame's draw calls in order with their resources and replay status: exactly the calls whose geometry buffer,
    texture or surface geometry the capture lacks say which."""
    path = capture("deep", "--deep", "--frames", "12")
    j, _ = run_json("calls", path)
    check([(d["frame"], d["calls"]) for d in j["deep_captures"]] == [(4, 6)], f"{j['deep_captures']}")
    check([(f["frame"], f["stored"], f["earlier"], f["cut"]) for f in j["attachments_by_frame"]] ==
          [(4, 3, 0, 0), (9, 0, 1, 1)], f"{j['attachments_by_frame']}")
    check(j["attachments_cut"] == 1 and j["attachment_bytes_cut"] == 500, f"{j}")
    j, _ = run_json("calls", path, "--frame", "4")
    calls = j["calls"]
    check([c["seq"] for c in calls] == list(range(6)), f"{calls}")
    check([c["status"] for c in calls] == ["ok", "ok", "ok", "missing_surface_geometry", "missing_texture",
                                            "missing_geometry"], f"{[c['status'] for c in calls]}")
    # One flipped byte in an attachment block (the mask 0x20 a call samples, or the screenshot): that block is skipped
    # and said, the deep capture still replays, and exactly the calls needing a content not read say so.
    raw = open(path, "rb").read()
    for magic, want in ((bytes([0, 255, 255, 0, 128, 64, 32, 16]),
                         ["ok", "ok", "damaged_content", "missing_surface_geometry", "damaged_content", "damaged_content"]),
                        (b"\x89PNG", ["ok", "ok", "ok", "damaged_content", "damaged_content", "damaged_content"])):
        at = raw.find(magic)
        check(at > 0, f"{magic} in the capture")
        damaged = os.path.join(ARGS.work, "damaged.strobe")
        with open(damaged, "wb") as f:
            f.write(raw[:at + 3] + bytes([raw[at + 3] ^ 1]) + raw[at + 4:])
        jd, err = run_json("calls", damaged, "--frame", "4", expect=1)
        check([c["status"] for c in jd["calls"]] == want and "1 damaged attachment blocks skipped" in err,
              f"{magic}: {[c['status'] for c in jd['calls']]}\n{err}")
    check([(c["kind"], c["pipeline"], c["pass"]) for c in calls[:3]] ==
          [("clear", "solid", "main"), ("quad", "solid", "main"), ("sprite", "sprite_a8", "main")], f"{calls}")
    check(calls[1]["bounds"] == [10, 20, 100, 22] and calls[1]["clip"] == [0, 0, 300, 200], f"{calls[1]}")
    check(calls[3]["bounds"] is None and calls[2]["instance_first"] == 2, f"{calls[3]}")
    check([(r["id"][-2:], r["role"], r["content"]) for r in calls[4]["resources"]] ==
          [("10", "geometry", True), ("30", "texture", False)], f"{calls[4]}")
    check(j["kinds_checked"] is False, "kinds are the backend's")
    check([(a["resource"][-2:], a["media_type"], a["bytes"]) for a in j["attachments"]] ==
          [("10", "application/x-strobe-demo-prims", 96), ("20", "image/x-strobe-a8", 8), ("01", "image/png", 16)],
          f"{j['attachments']}")
    out, _ = run("calls", path, "--frame", "4")
    check("6 draw calls, 3 with everything to redraw them, 3 missing something" in out, out)
    _, err = run("calls", path, "--frame", "5", expect=2)
    check("no deep capture of frame 5" in err, err)
    run("calls", "-", expect=2, stdin=open(path, "rb"))
    out, _ = run("calls", capture("plain"))
    check("no deep captures" in out, out)


def case_compare():
    base = capture("base")
    grown = capture("grown", "--grow", "50")
    out, err = run("compare", base, grown, "--max-regression", "10", expect=1)
    check("FAIL" in out and "regression: work (app/sim.c:30) p95" in err, f"{out}\n{err}")
    j, _ = run_json("compare", base, grown, "--max-regression", "10", expect=1)
    has_keys(j, ["base", "new", "metric", "max_regression_pct", "min_n", "passed", "regressed", "sites"], "compare")
    bad = sorted(s["name"] for s in j["sites"] if s["status"] == "regressed")
    check(not j["passed"] and bad == ["frame", "update", "work"], f"offenders {bad}")
    out, _ = run("compare", base, base, "--max-regression", "0")
    check("PASS" in out, out)
    run("compare", base, grown, "--max-regression", "60")  # +50 % is within 60 %
    j, _ = run_json("compare", base, grown, "--max-regression", "10", "--metric", "p50", expect=1)
    check(j["metric"] == "p50" and site_status(j, "work") == ("regressed", 50.0), f"p50 {j['sites']}")
    # --min-n: sites with fewer durations are skipped, not gated (and when that is every site, it fails: below).
    j, _ = run_json("compare", base, grown, "--max-regression", "60", "--min-n", "101", "--metric", "p50")
    check(j["passed"] and j["compared"] == 1 and j["skipped"]["count"] == 6, f"min-n {j['sites']}")
    check(all(s["status"] == "skipped" and s["why"] == "n below --min-n in both" for s in j["sites"] if s["name"] != "work"),
          f"min-n {j['sites']}")
    j, _ = run_json("compare", base, grown, "--max-regression", "10", "--min-n", "150", expect=1)
    check([s["name"] for s in j["sites"] if s["status"] == "regressed"] == ["work"], "only work has n >= 150")
    # An improvement never fails the gate.
    run("compare", grown, base, "--max-regression", "1")
    _, err = run("compare", base, grown, expect=2)
    check("--max-regression PCT is required" in err, err)
    _, err = run("compare", base, grown, "--max-regression", "ten", expect=2)
    check("--max-regression needs a percentage" in err, err)
    _, err = run("compare", base, grown, "--max-regression", "5", "--metric", "p90", expect=2)
    check("--metric must be p50, p95 or p99" in err, err)


def case_compare_gate():
    """The gate never passes on nothing: no site in common, a candidate compiled with -DSTROBE_DISABLE,
    --min-n skipping every site, sites of BASE missing from NEW, events lost; each said on stderr, and
    the summary counts compared, skipped (and why) and missing apart."""
    base = capture("base")
    # No site in common.
    other = capture("other", "--other-file")
    out, err = run("compare", base, other, "--max-regression", "10", expect=1)
    check("nothing was compared" in err and out.rstrip().splitlines()[-1].startswith("FAIL: 0 compared"), f"{out}\n{err}")
    j, _ = run_json("compare", base, other, "--max-regression", "10", "--allow-missing", expect=1)
    check(not j["passed"] and j["compared"] == 0 and j["only_in_new"] == 7 and j["missing"] == 7, f"{j}")
    # A candidate compiled with -DSTROBE_DISABLE: a real capture with no event.
    disabled = os.path.join(ARGS.work, "disabled.strobe")
    subprocess.run([ARGS.disabled_app, disabled], check=True, timeout=60)
    check(run_json("info", disabled)[0]["totals"]["events"] == 0, "the disabled build records no event")
    j, err = run_json("compare", base, disabled, "--max-regression", "10", "--allow-clock-mismatch", expect=1)
    check(not j["passed"] and j["compared"] == 0 and j["missing"] == 7, f"{j}")
    check("nothing was compared" in err and "coverage lost: work (app/sim.c:30) has 150 durations in BASE and none in NEW"
          in err, err)
    # --min-n above every site's n: everything skipped, which is nothing compared.
    out, err = run("compare", base, base, "--max-regression", "10", "--min-n", "151", expect=1)
    last = out.rstrip().splitlines()[-1]
    check(last.startswith("FAIL: 0 compared") and "7 skipped (n < 151: 0 in base, 0 in new, 7 in both)" in last, last)
    check("nothing was compared" in err, err)
    j, _ = run_json("compare", base, capture("big", "--frames", "200"), "--max-regression", "1000", "--min-n", "150")
    check(j["passed"] and j["skipped"]["n_short_in_base"] == 6 and j["compared"] == 1, f"{j['skipped']}")
    # Coverage loss: a site BASE has with n >= --min-n, absent from NEW; --allow-missing accepts it.
    spike = capture("spike", "--spike", "5")
    j, err = run_json("compare", spike, base, "--max-regression", "1000", "--min-n", "1", expect=1)
    check(j["missing"] == 1 and [s["name"] for s in j["sites"] if s["status"] == "missing"] == ["spike"], f"{j}")
    check("coverage lost: spike (app/loop.c:130)" in err, err)
    out, _ = run("compare", spike, base, "--max-regression", "1000", "--min-n", "1", "--allow-missing")
    check("PASS" in out and "1 missing from NEW (allowed)" in out, out)
    # Below --min-n in BASE, a missing site is not coverage the gate had: counted, not failed.
    j, _ = run_json("compare", spike, base, "--max-regression", "1000")
    check(j["passed"] and j["missing"] == 0 and j["missing_below_min_n"] == 1, f"{j}")
    # Lost events, in either capture, beyond --max-lost (default 0).
    lossy = capture("lossy", "--lost")
    for a, b in ((base, lossy), (lossy, base)):
        j, err = run_json("compare", a, b, "--max-regression", "1000", expect=1)
        check(not j["passed"] and j["compared"] == 7 and j["regressed"] == 0, f"{j}")
        check(f"{lossy} lost 4 events (allowed 0: --max-lost)" in err, err)
        j, _ = run_json("compare", a, b, "--max-regression", "1000", "--max-lost", "4")
        check(j["passed"] and j["lost_events"] == {"base": 4 if a == lossy else 0, "new": 4 if b == lossy else 0,
                                                   "max_lost": 4}, f"{j['lost_events']}")
    _, err = run("compare", base, base, "--max-regression", "1", "--max-lost", "-1", expect=2)
    check("--max-lost needs a count" in err, err)


def site_status(j, name):
    s = next(s for s in j["sites"] if s["name"] == name)
    return s["status"], s["change_pct"]


def case_clocks():
    base = capture("base")
    tsc = capture("tsc", "--clock", "tsc", "--ns-per-tick", "0.4")
    near = capture("near", "--ns-per-tick", "1.005")
    _, err = run("compare", base, tsc, "--max-regression", "10", expect=2)
    check("different clocks" in err and "monotonic" in err and "tsc" in err and "--allow-clock-mismatch" in err, err)
    out, err = run("compare", base, tsc, "--max-regression", "10", "--allow-clock-mismatch")
    check("different clocks" in err and "PASS" in out, f"{out}\n{err}")
    _, err = run("diff", base, tsc)
    check("warning: the captures come from different clocks" in err, err)
    j, _ = run_json("diff", base, tsc)
    check(j["clock_mismatch"] is True, "clock_mismatch in diff JSON")
    # Within 1 % of each other: the same clock.
    _, err = run("compare", base, near, "--max-regression", "10")
    check("different clocks" not in err, err)
    ns_per_tick_2 = capture("fast", "--ns-per-tick", "1.02")
    run("compare", base, ns_per_tick_2, "--max-regression", "10", expect=2)


def case_gpu():
    # GPU frames (docs/gpu.md): both gaps per frame as p50/p95/max with n, the order violation
    # counted, lanes and passes; the exports put the lane and the frames' gaps on tracks of their own.
    g = capture("gpu", "--gpu", "--frames", "20", "--gpu-bad", "3")
    j, _ = run_json("report", g)
    gp = j["gpu"]
    check(gp["frames"] == 20 and gp["spans"] == 40 and gp["calibration_pairs"] == 20, f"gpu {gp}")
    check(gp["spans_unmapped"] == 0 and gp["spans_cut"] == 0 and 50 <= gp["worst_bound_ns"] <= 100, f"gpu {gp}")
    backlog = [2000 + 100 * (k % 10) for k in range(20)]
    polling = [-1000 if k == 3 else 300 * (1 + k % 5) for k in range(20)]
    for key, vals in (("queue_backlog", backlog), ("polling_latency", polling), ("gpu_time", [6000] * 20)):
        d = gp[key]
        check(d["n"] == 20, f"{key} n {d}")
        for p, name in ((0.5, "p50_ns"), (0.95, "p95_ns")):
            check(abs(d[name] - nearest_rank(vals, p)) < 0.5, f"{key} {name} {d} vs {nearest_rank(vals, p)}")
        check(abs(d["max_ns"] - max(vals)) < 0.5, f"{key} max {d}")
    o = gp["order"]
    check(o["frames_checked"] == 20 and o["frames_violating"] == 1 and o["fence_before_end"] == 1 and
          o["start_before_submit"] == 0 and o["end_after_submit"] == 0, f"order {o}")
    check(gp["lanes"] == [{"domain": "gpu0", "queue": "graphics", "spans": 40, "total_ns": 120000, "max_ns": 5000}],
          f"lanes {gp['lanes']}")
    passes = {p["pass"]: p["spans"] for p in gp["passes"]}
    check(passes == {"main": 20, "filter_group": 20}, f"passes {passes}")
    text, _ = run("report", g)
    check("queue backlog" in text and "polling latency" in text and "1 of 20 frames" in text, text[-2500:])
    # strobe merge carries GPU spans, frame instants and calibration pairs (docs/cli.md §strobe merge): the
    # merged capture's GPU frames are the input's, to the nanosecond, its lanes named after the process.
    merged = os.path.join(ARGS.work, "gpu_merged.strobe")
    run("merge", "--same-host", g, capture("base"), "-o", merged, "--quiet")
    mj, _ = run_json("report", merged)
    mg = mj["gpu"]
    for key in ("frames", "spans", "calibration_pairs", "spans_unmapped", "queue_backlog", "polling_latency", "gpu_time",
                "order", "passes"):
        check(mg[key] == gp[key], f"merged gpu {key}: {mg[key]} vs the input's {gp[key]}")
    check([(l["domain"], l["queue"], l["spans"]) for l in mg["lanes"]] == [("pid_4242/gpu0", "pid_4242/graphics", 40)],
          f"merged lanes {mg['lanes']}")
    mi, _ = run_json("info", merged)
    check(not any(k.startswith("gpu") or k == "clock_pair" for k in mi["merge"]["not_merged"]),
          f"nothing GPU left behind: {mi['merge']['not_merged']}")
    # Without GPU data: null, and said, never zeros.
    base = capture("base")
    check(run_json("report", base)[0]["gpu"] is None, "no GPU data: gpu is null")
    check("gpu: unavailable" in run("report", base)[0], "no GPU data: the text says unavailable")
    # chrome: the lane is a thread of its own; the backlog is exactly GPU start - submit.
    out = os.path.join(ARGS.work, "gpu.json")
    run("export", g, "--format", "chrome", "-o", out)
    with open(out) as f:
        doc = json.load(f)
    ev = doc["traceEvents"]
    names = {e["args"]["name"]: e["tid"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    check("GPU gpu0/graphics" in names and "main" in names, f"tracks {names}")
    lane = [e for e in ev if e["ph"] == "X" and e["tid"] == names["GPU gpu0/graphics"]]
    check(len(lane) == 40 and {e["name"] for e in lane} == {"composite", "blur"}, f"lane events {len(lane)}")
    frames_tid = [t for n, t in names.items() if n.startswith("GPU frames")]
    check(len(frames_tid) == 1, f"a GPU frames track {names}")
    fx = [e for e in ev if e["tid"] == frames_tid[0] and e["ph"] == "X"]
    bl = sorted(round(e["dur"] * 1000) for e in fx if e["name"] == "queue backlog")
    pl = [e for e in fx if e["name"] == "polling latency"]
    check(bl == sorted(backlog) and len(pl) == 19, f"gap slices {bl} {len(pl)}")
    check(doc["otherData"]["gpu_order_violations"] == 1 and doc["otherData"]["gpu_spans"] == 40, f"{doc['otherData']}")
    f0 = [e for e in lane if e["args"]["frame_id"] == 500 and e["name"] == "composite"][0]
    sub0 = [e for e in ev if e["tid"] == frames_tid[0] and e["ph"] == "i" and e["name"] == "submit"
            and e["args"]["frame_id"] == 500][0]
    check(round((f0["ts"] - sub0["ts"]) * 1000) == 2000, f"mapped GPU start - submit {f0} {sub0}")
    # perfetto: the lane is a track of its own under the process, each span a slice matching chrome's
    # to the ns with its pass and frame; the gaps on their own tracks; the four instants of each frame
    # (cpu_end, submit, GPU start and end, fence_seen) on "GPU frames"; the violation counted.
    _, pr = perfetto_export(g, "gpu.pftrace")
    ptracks = pr["tracks"]
    proc = [t["uuid"] for t in ptracks.values() if t["process"]]
    glane = [t for t in ptracks.values() if t["name"].startswith("GPU gpu0/graphics")]
    check(len(glane) == 1 and glane[0]["parent"] == proc[0], f"perfetto GPU lane tracks {[t['name'] for t in glane]}")
    pl_sl = sorted((s["name"], s["begin"], s["end"], s["args"]["pass"], s["args"]["frame_id"])
                   for s in pr["slices"] if s["track"] == glane[0]["uuid"])
    cw_sl = sorted((e["name"], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["args"]["pass"], e["args"]["frame_id"])
                   for e in lane)
    check(len(pl_sl) == 40 and pl_sl == cw_sl, f"perfetto GPU spans differ from chrome's: {pl_sl[:2]} vs {cw_sl[:2]}")
    def gap_durs(track_name, slice_name):
        return sorted(s["end"] - s["begin"] for s in pr["slices"]
                      if ptracks[s["track"]]["name"].startswith(track_name) and s["name"] == slice_name)
    check(gap_durs("GPU queue backlog", "queue backlog") == sorted(backlog), f"perfetto backlog {gap_durs('GPU queue backlog', 'queue backlog')}")
    check(gap_durs("GPU polling latency", "polling latency") == sorted(p for p in polling if p >= 0),
          f"perfetto polling latency {gap_durs('GPU polling latency', 'polling latency')}")
    gi = [i for i in pr["instants"] if ptracks[i["track"]]["name"] == "GPU frames"]
    by = {}
    for i in gi:
        by.setdefault(i["args"]["frame_id"], {})[i["name"]] = i["ts"]
    kinds = {"cpu_end", "submit", "gpu_start", "gpu_end", "fence_seen"}
    check(len(gi) == 100 and sorted(by) == list(range(500, 520)) and all(set(v) == kinds for v in by.values()),
          f"perfetto GPU instants {len(gi)} {sorted(by)[:3]}")
    check(by[500]["submit"] == ns(sub0["ts"]) and by[500]["gpu_start"] - by[500]["submit"] == 2000 and
          by[503]["fence_seen"] - by[503]["gpu_end"] == -1000, f"perfetto frame 500/503 instants {by[500]} {by[503]}")
    psum = next(i for i in pr["instants"] if i["name"] == "strobe export")["args"]
    check(psum["gpu_spans"] == 40 and psum["gpu_order_violations"] == 1 and psum["gpu_slices_not_placed"] == 0,
          f"perfetto summary {psum}")
    # speedscope: one more profile for the lane.
    sout = os.path.join(ARGS.work, "gpu.speedscope.json")
    run("export", g, "--format", "speedscope", "-o", sout)
    with open(sout) as f:
        sdoc = json.load(f)
    gprof = [p for p in sdoc["profiles"] if p["name"] == "GPU gpu0/graphics"]
    check(len(gprof) == 1 and len(gprof[0]["events"]) == 80, f"speedscope GPU profile {[p['name'] for p in sdoc['profiles']]}")


def case_producer():
    # External producers' spans (docs/recording.md §External producers): their own lane in the report,
    # the chrome and speedscope exports, nested spans kept apart; never counted as GPU work.
    frames = 10
    p = capture("producer", "--producer", "--frames", str(frames))
    j, _ = run_json("report", p)
    check(j["gpu"] is None, f"producer spans are no GPU data: {j['gpu']}")
    pr = j["producers"]
    check(pr["spans"] == 2 * frames and pr["spans_unmapped"] == 0, f"producers {pr}")
    check(pr["lanes"] == [{"domain": "", "lane": "audio", "spans": 2 * frames, "total_ns": frames * 800,
                           "max_ns": 600}], f"producer lanes {pr['lanes']}")
    check(run_json("report", capture("base"))[0]["producers"] is None, "no producer spans: producers is null")
    text, _ = run("report", p)
    check("external producers" in text and "producer audio: 20 spans" in text, text[-1500:])
    out = os.path.join(ARGS.work, "producer.json")
    run("export", p, "--format", "chrome", "-o", out)
    with open(out) as f:
        ev = json.load(f)["traceEvents"]
    names = {e["args"]["name"]: e["tid"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    check("producer audio" in names and not any(n.startswith("GPU") for n in names), f"tracks {names}")
    lane = [e for e in ev if e["ph"] == "X" and e["tid"] == names["producer audio"]]
    check(len(lane) == 2 * frames and {e["cat"] for e in lane} == {"producer"}, f"lane events {lane[:3]}")
    mix = sorted((e for e in lane if e["name"] == "mix"), key=lambda e: e["ts"])
    dec = sorted((e for e in lane if e["name"] == "decode"), key=lambda e: e["ts"])
    check(len(mix) == frames and all(round(e["dur"] * 1000) == 600 for e in mix), f"mix {mix[:2]}")
    check(all(round((d["ts"] - m["ts"]) * 1000) == 100 and round(d["dur"] * 1000) == 200 for m, d in zip(mix, dec)),
          f"decode nested in mix {mix[:1]} {dec[:1]}")
    sout = os.path.join(ARGS.work, "producer.speedscope.json")
    run("export", p, "--format", "speedscope", "-o", sout)
    with open(sout) as f:
        sdoc = json.load(f)
    prof = [q for q in sdoc["profiles"] if q["name"] == "producer audio"]
    check(len(prof) == 1 and len(prof[0]["events"]) == 4 * frames, f"speedscope {[q['name'] for q in sdoc['profiles']]}")


def case_export_perfetto_producer():
    # Producer lanes in the perfetto export (docs/cli.md §perfetto): a track "producer <lane>" under the process,
    # each span a slice equal to the chrome export's to the ns, nested as recorded, with bound_ns and no frame or
    # pass; counted in the summary; --from/--to keep the spans wholly inside, as chrome does; --thread leaves the
    # lane out, counted.
    frames = 10
    p = capture("producer_pf", "--producer", "--frames", str(frames))

    def chrome_lane(*opts):
        doc, _ = chrome_events(p, *opts)
        ev = doc["traceEvents"]
        tids = {e["tid"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"
                and e["args"]["name"] == "producer audio"}
        return sorted((e["name"], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in ev
                      if e["ph"] == "X" and e["tid"] in tids), doc["otherData"]

    def perfetto_lane(*opts):
        _, r = perfetto_export(p, "producer.pftrace", *opts)
        proc = [t["uuid"] for t in r["tracks"].values() if t["process"]]
        lanes = [t for t in r["tracks"].values() if t["name"].startswith("producer audio")]
        check(all(t["parent"] == proc[0] for t in lanes), f"producer tracks under the process {lanes}")
        uu = {t["uuid"] for t in lanes}
        sl = [s for s in r["slices"] if s["track"] in uu]
        summary = next(i for i in r["instants"] if i["name"] == "strobe export")["args"]
        return lanes, sl, summary

    want, _ = chrome_lane()
    check(len(want) == 2 * frames, f"chrome lane {len(want)} spans")
    lanes, sl, summary = perfetto_lane()
    check([t["name"] for t in lanes] == ["producer audio"], f"perfetto producer tracks {[t['name'] for t in lanes]}")
    got = sorted((s["name"], s["begin"], s["end"]) for s in sl)
    check(got == want, f"perfetto producer slices differ from chrome's: {got[:3]} vs {want[:3]}")
    depth = {s["name"]: set() for s in sl}
    for s in sl:
        depth[s["name"]].add(s["depth"])
    check(depth == {"mix": {0}, "decode": {1}}, f"decode nested in mix: depths {depth}")
    check(all("bound_ns" in s["args"] and "frame_id" not in s["args"] and "pass" not in s["args"] for s in sl),
          f"producer slice args {sl[0]['args']}")
    check(summary["producer_spans"] == 2 * frames and summary["producer_spans_unmapped"] == 0 and
          summary["producer_slices_not_placed"] == 0 and "gpu_spans" not in summary, f"summary {summary}")
    # --from/--to: the spans wholly inside, the same as chrome's.
    mid = sorted(b for _, b, _ in want)
    frm, to = mid[4] - 1, mid[13] + 650  # from just before one mix to just after a later one's end
    rng = ["--from", f"{frm / 1e6:.6f}", "--to", f"{to / 1e6:.6f}"]
    cw, _ = chrome_lane(*rng)
    _, sl, summary = perfetto_lane(*rng)
    got = sorted((s["name"], s["begin"], s["end"]) for s in sl)
    check(got == cw and 0 < len(got) < len(want), f"perfetto {rng}: {len(got)} spans, chrome {len(cw)}")
    # --thread: a CPU thread only; the lane is left out and counted.
    lanes, sl, summary = perfetto_lane("--thread", "main")
    check(not lanes and not sl and summary["left_out_by_filters"] >= 2 * frames, f"--thread main: {lanes} {summary}")


def case_export_otlp():
    # OTLP/JSON (docs/otel.md): one trace per operation at exact Unix times (the header's wall-clock anchor plus
    # the capture's times), the operation's facts as attributes; refused without an anchor, never invented.
    # tests/otel/otlp.test.mjs decodes it with the official OpenTelemetry packages.
    frames, unix0 = 10, 1764633600000000000
    # A capture without operations: a file without spans, said (UBSan, in the sanitizer build, saw qsort given NULL).
    _, err = run("export", capture("no_ops"), "--format", "otlp", "-o", os.path.join(ARGS.work, "none.otlp.json"))
    check("no completed operation" in err, f"otlp export without operations: {err}")
    p = capture("otlp", "--ops", "--frames", str(frames))
    out = os.path.join(ARGS.work, "ops.otlp.json")
    run("export", p, "--format", "otlp", "-o", out, "--service", "grid", "--resource", "host.name=h1")
    with open(out) as f:
        doc = json.load(f)
    rs = doc["resourceSpans"][0]
    ra = {a["key"]: list(a["value"].values())[0] for a in rs["resource"]["attributes"]}
    check(ra["service.name"] == "grid" and ra["host.name"] == "h1" and ra["process.pid"] == "4242", f"resource {ra}")
    spans = rs["scopeSpans"][0]["spans"]
    check(len(spans) == frames and all("parentSpanId" not in s for s in spans), f"{len(spans)} spans")
    check(len({s["traceId"] for s in spans}) == frames, "a trace per operation")
    for s in spans:
        a = {x["key"]: list(x["value"].values())[0] for x in s["attributes"]}
        k = int(a["strobe.frame_id"]) - 193
        start = unix0 + 1000000 + 16000000 * k
        check(s["name"] == "pass" and s["kind"] == 1, f"span {s['name']}")
        check(int(s["startTimeUnixNano"]) == start and int(s["endTimeUnixNano"]) == start + 4000 + 100 * (k % 10),
              f"frame {k}: {s['startTimeUnixNano']} .. {s['endTimeUnixNano']}")
        check(a["strobe.committed"] is (k != 7) and a["strobe.window"] == "main", f"frame {k}: {a}")
        check(a["strobe.counter.rows"] == k, f"frame {k}: counter {a.get('strobe.counter.rows')}")
    # --from/--to keep the operations wholly inside; --thread those that ended on it
    run("export", p, "--format", "otlp", "-o", out, "--from", "16", "--to", "45")
    with open(out) as f:
        kept = json.load(f)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    check(len(kept) == 2, f"--from 16 --to 45 kept {len(kept)} operations, want frames 1 and 2")
    _, err = run("export", capture("otlp-old", "--ops", "--no-unix-epoch"), "--format", "otlp", "-o", out, expect=1)
    check("wall-clock" in err, err)
    run("export", p, "--format", "chrome", "--otlp-scopes", "-o", out, expect=2)
    run("export", p, "--format", "otlp", "--resource", "novalue", "-o", out, expect=2)


def case_export_chrome():
    base = capture("base")
    out = os.path.join(ARGS.work, "base.json")
    run("export", base, "--format", "chrome", "-o", out)
    checker = [sys.executable, os.path.join(HERE, "check_chrome.py")]
    subprocess.run(checker + [out, "--expect-names", "frame,update,work,render,draw,job,io", "--expect-unfinished", "0"],
                   check=True)
    with open(out) as f:
        doc = json.load(f)
    ev = doc["traceEvents"]
    x = [e for e in ev if e["ph"] == "X"]
    check(len(x) == 500, f"one X per completed scope: {len(x)}")
    names = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    check(names == {"main", "worker"}, f"thread names {names}")
    work = [e for e in x if e["name"] == "work"]
    check(work[0]["ts"] == 1000.2 and work[0]["dur"] == 1.0 and work[0]["cat"] == "sim", f"first work {work[0]}")
    draws = [e for e in x if e["name"] == "draw"]
    check(draws[0]["args"] == {"triangles": 100} and draws[1]["args"] == {"triangles": 200}, "values as args")
    counters = [e for e in ev if e["ph"] == "C" and e["name"] == "draw_calls"]
    check(len(counters) == 50 and counters[-1]["args"]["count"] == 100, "counter running sum, its arg named by its unit")
    check(len([e for e in ev if e["ph"] == "C" and e["name"] == "queue_depth"]) == 50, "gauge as C events")
    marks = [e for e in ev if e["ph"] == "i" and e["name"] == "frame"]
    check(len(marks) == 50 and all(e["s"] in ("g", "p") for e in marks), "frame marks as instant events")
    # To stdout as well, byte for byte.
    so, _ = run("export", base, "--format", "chrome")
    with open(out) as f:
        check(so == f.read(), "stdout and -o give the same export")
    # Unfinished and lost scopes: B without E, never an invented end.
    unf = capture("unfinished", "--unfinished", "--lost")
    out2 = os.path.join(ARGS.work, "unf.json")
    run("export", unf, "--format", "chrome", "-o", out2)
    subprocess.run(checker + [out2, "--expect-unfinished", "1"], check=True)
    with open(out2) as f:
        doc = json.load(f)
    b = [e for e in doc["traceEvents"] if e["ph"] == "B"]
    check(sorted((e["name"], e["args"]["strobe"]) for e in b) ==
          [("job", "end lost"), ("stalled", "unfinished: never ended")], f"B events {b}")
    check(not any(e["ph"] == "E" for e in doc["traceEvents"]), "no fabricated E")
    check(doc["otherData"]["unfinished_scopes"] == 1 and doc["otherData"]["lost_scopes"] == 1, f"{doc['otherData']}")


def case_export_speedscope():
    base = capture("base")
    out = os.path.join(ARGS.work, "base.speedscope.json")
    run("export", base, "--format", "speedscope", "-o", out)
    checker = [sys.executable, os.path.join(HERE, "check_speedscope.py")]
    schema = ["--schema", ARGS.schema] if ARGS.schema else []
    subprocess.run(checker + [out, *schema, "--expect-frames", "frame,update,work,render,draw,job,io"], check=True)
    with open(out) as f:
        doc = json.load(f)
    check(doc["exporter"].startswith("strobe ") and doc["name"] == "base.strobe", f"{doc['exporter']} {doc['name']}")
    profs = {p["name"]: p for p in doc["profiles"]}
    check(set(profs) == {"main", "worker"} and profs["main"]["unit"] == "nanoseconds", f"profiles {list(profs)}")
    check(len(profs["main"]["events"]) == 2 * 400 and len(profs["worker"]["events"]) == 2 * 100, "O+C per scope")
    frames = doc["shared"]["frames"]
    work = next(i for i, fr in enumerate(frames) if fr["name"] == "work")
    check(frames[work]["file"] == "app/sim.c" and frames[work]["line"] == 30, f"work frame {frames[work]}")
    ev = profs["main"]["events"]
    opens = {}
    total = 0
    for e in ev:  # the work frames' time, from O/C pairs
        if e["type"] == "O":
            opens.setdefault(e["frame"], []).append(e["at"])
        elif e["frame"] == work:
            total += e["at"] - opens[work].pop()
    check(total == 825000, f"work total from the speedscope events: {total}")
    unf = capture("unfinished", "--unfinished", "--lost")
    out2 = os.path.join(ARGS.work, "unf.speedscope.json")
    run("export", unf, "--format", "speedscope", "-o", out2)
    subprocess.run(checker + [out2, *schema, "--expect-frames", "stalled [unfinished: never ended],job [end lost]"],
                   check=True)


# >>perfetto: the export decoded by protoc against tests/cli/perfetto_subset.proto
# (check_perfetto.py), every event compared with the chrome export of the same
# capture, an independent writer whose output Python reads as JSON.

def chrome_events(path, *opts):
    out = os.path.join(ARGS.work, os.path.basename(path) + "".join(o.strip("-") for o in opts) + ".json")
    run("export", path, "--format", "chrome", "-o", out, "--quiet", *opts)
    with open(out) as f:
        doc = json.load(f)
    threads = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
    return doc, threads


def ns(us):
    return round(us * 1000)


def chrome_scopes(doc, threads):
    """(thread, name, begin ns, end ns) -> args, for every X event."""
    d = {}
    for e in doc["traceEvents"]:
        if e["ph"] == "X":
            key = (threads[e["tid"]], e["name"], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]))
            check(key not in d, f"two identical X events {key}")
            d[key] = (e["cat"], e.get("args", {}))
    return d


def depths(keys):
    """Nesting depth of each (thread, name, begin, end) from the intervals alone."""
    out = {}
    by_thread = {}
    for k in keys:
        by_thread.setdefault(k[0], []).append(k)
    for t, ks in by_thread.items():
        stack = []
        for k in sorted(ks, key=lambda k: (k[2], -k[3])):
            while stack and stack[-1][3] <= k[2] and not (stack[-1][2] == k[2] == k[3]):
                stack.pop()
            out[k] = len(stack)
            stack.append(k)
    return out


def perfetto_load(path):
    sys.path.insert(0, HERE)
    import check_perfetto
    try:
        return check_perfetto.load(path, ARGS.protoc, ARGS.zstd)
    except check_perfetto.Bad as e:
        raise Fail(f"{path}: {e}")


def perfetto_scopes(r, track_names=None):
    """(thread, name, begin, end) -> (category, args) of every closed slice on a thread or stage track."""
    d = {}
    for sl in r["slices"]:
        tr = r["tracks"][sl["track"]]
        if tr["thread"] is None and tr["name"] != "stages":
            continue
        thread = tr["name"] if tr["thread"] is not None else r["tracks"][tr["parent"]]["name"]
        key = (thread, sl["name"], sl["begin"], sl["end"])
        check(key not in d, f"two identical slices {key}")
        d[key] = (sl["cat"], {**sl["args"], **sl["end_args"]}, sl["depth"], tr["name"])
    return d


def perfetto_export(path, name, *opts):
    out = os.path.join(ARGS.work, name)
    run("export", path, "--format", "perfetto", "-o", out, "--quiet", *opts)
    return out, perfetto_load(out)


def case_export_perfetto():
    base = capture("base")
    doc, threads = chrome_events(base)
    want = chrome_scopes(doc, threads)
    check(len(want) == 500, f"chrome has the 500 scopes: {len(want)}")
    loads = {}
    for comp in ("zstd", "deflate", "none"):
        path, r = perfetto_export(base, f"base.{comp}.pftrace", "--compression", comp)
        loads[comp] = (os.path.getsize(path), r)
    sizes = {c: v[0] for c, v in loads.items()}
    check(loads["zstd"][1]["kinds"]["zstd"] >= 1 and loads["zstd"][1]["kinds"]["plain"] == 0, "zstd packets")
    check(loads["deflate"][1]["kinds"]["deflate"] >= 1 and loads["deflate"][1]["kinds"]["plain"] == 0, "deflate packets")
    check(loads["none"][1]["kinds"]["zstd"] == loads["none"][1]["kinds"]["deflate"] == 0, "plain packets")
    check(sizes["zstd"] < sizes["none"] / 4 and sizes["deflate"] < sizes["none"] / 4, f"compressed sizes {sizes}")
    _, plain = perfetto_export(base, "default.pftrace")
    for comp, (_, r) in loads.items():
        check(r["slices"] == plain["slices"] and r["counters"] == plain["counters"] and r["instants"] == plain["instants"],
              f"--compression {comp} decodes to the same events as the default")
    r = plain
    # Tracks: the process, each thread (pid, OS tid, name), a counter track per counter and gauge.
    procs = [t for t in r["tracks"].values() if t["process"]]
    check(len(procs) == 1 and procs[0]["process"]["pid"] == [4242], f"process track {procs}")
    thr = {t["name"]: t for t in r["tracks"].values() if t["thread"]}
    check(set(thr) == {"main", "worker"} and thr["main"]["thread"]["tid"] == [1000] and
          thr["worker"]["thread"]["tid"] == [1001] and thr["main"]["thread"]["pid"] == [4242], f"thread tracks {thr}")
    # Every scope: thread, name, category, begin and end to the ns, nesting, the numbers on it.
    got = perfetto_scopes(r)
    check(set(got) == set(want), f"slices differ from the chrome export: only in perfetto "
          f"{sorted(set(got) - set(want))[:5]}, only in chrome {sorted(set(want) - set(got))[:5]}")
    dep = depths(want)
    for k, (cat, args) in want.items():
        gcat, gargs, gdepth, _ = got[k]
        check(gcat == (cat if cat in ("sim", "gfx") else ""), f"{k}: category {gcat!r}, chrome {cat!r}")
        check(gargs == args, f"{k}: numbers {gargs}, chrome {args}")
        check(gdepth == dep[k], f"{k}: depth {gdepth}, from the intervals {dep[k]}")
    check(not r["open"], f"nothing left open: {r['open'][:3]}")
    # Counters (running sums) and gauges, by time and value, on their own tracks with their units.
    cw = sorted((e["name"], ns(e["ts"]), list(e["args"].values())[0]) for e in doc["traceEvents"] if e["ph"] == "C")
    cg = sorted((r["tracks"][c["track"]]["name"], c["ts"], c["value"]) for c in r["counters"])
    check(cw == cg and len(cg) == 100, f"counter samples differ: {cw[:3]} vs {cg[:3]}")
    units = {t["name"]: t["counter"] for t in r["tracks"].values() if t["counter"] is not None}
    check(units["draw_calls"].get("unit") == [2] and "unit" not in units["queue_depth"], f"counter units {units}")
    # Frame marks: numbered instants on a "frames" track under the marking thread.
    mw = sorted(ns(e["ts"]) for e in doc["traceEvents"] if e["ph"] == "i" and e["name"] == "frame")
    fr = [i for i in r["instants"] if i["name"] == "frame"]
    check(all(r["tracks"][i["track"]]["name"] == "frames" and r["tracks"][i["track"]]["parent"] == thr["main"]["uuid"]
              for i in fr), "frame marks on main's frames track")
    check(sorted(i["ts"] for i in fr) == mw and len(mw) == 50, f"frame marks {fr[:3]} vs {mw[:3]}")
    check([i["args"]["mark"] for i in sorted(fr, key=lambda i: i["ts"])] == list(range(1, 51)), "frame marks numbered")
    summary = [i for i in r["instants"] if i["name"] == "strobe export"]
    check(len(summary) == 1 and summary[0]["args"]["scopes"] == 500 and summary[0]["args"]["unfinished_scopes"] == 0 and
          summary[0]["args"]["capture_state"] == "complete", f"summary {summary}")
    with open(os.path.join(ARGS.work, "default.pftrace"), "rb") as f:
        data = f.read()
    p = subprocess.run([ARGS.strobe, "export", base, "--format", "perfetto"], capture_output=True, timeout=60)
    check(p.returncode == 0 and p.stdout == data, "stdout and -o give the same bytes")

    # Many chunks (compressed by a thread of its own while the capture is read):
    # in order, the same from run to run, every scope there.
    big = capture("big", "--frames", "3000")
    doc, threads = chrome_events(big)
    want = chrome_scopes(doc, threads)
    runs = []
    for comp in ("zstd", "zstd", "deflate"):
        path, r = perfetto_export(big, f"big.{len(runs)}.pftrace", "--compression", comp)
        with open(path, "rb") as f:
            runs.append((f.read(), r))
    check(runs[0][0] == runs[1][0], "the same bytes from run to run")
    for data, r in runs:
        check(max(r["kinds"].values()) >= 3, f"several compressed chunks: {r['kinds']}")
        check(set(perfetto_scopes(r)) == set(want) and len(want) == 30000, "every scope of the big capture")
    check(runs[0][1]["counters"] == runs[2][1]["counters"], "zstd and deflate decode to the same counters")

    # Unfinished, lost and unwound scopes: never given an end silently.
    odd = capture("odd", "--unfinished", "--lost", "--unwound")
    doc, threads = chrome_events(odd)
    _, r = perfetto_export(odd, "odd.pftrace")
    check([(s["name"], r["tracks"][s["track"]]["name"]) for s in r["open"]] == [("stalled", "worker")],
          f"only the unfinished scope stays open: {[s['name'] for s in r['open']]}")
    lost = [s for s in r["slices"] if s["end_args"].get("strobe", "").startswith("end lost")]
    unw = [s for s in r["slices"] if s["end_args"].get("strobe", "").startswith("unwound")]
    cl = [e for e in doc["traceEvents"] if e["ph"] == "B" and e["args"]["strobe"] == "end lost"]
    cu = [e for e in doc["traceEvents"] if e["ph"] == "X" and e.get("args", {}).get("strobe", "").startswith("unwound")]
    check(len(lost) == 1 and lost[0]["name"] == "job" and lost[0]["begin"] == ns(cl[0]["ts"]),
          f"the lost job closed where the loss was recorded, flagged: {lost}")
    check(len(unw) == len(cu) == 1 and unw[0]["begin"] == ns(cu[0]["ts"]) and unw[0]["end"] == ns(cu[0]["ts"]) + ns(cu[0]["dur"]),
          f"the unwound job flagged: {unw} vs {cu}")
    summary = next(i for i in r["instants"] if i["name"] == "strobe export")["args"]
    check(summary["unfinished_scopes"] == 1 and summary["lost_scopes"] == 1 and summary["unwound_scopes"] == 1,
          f"summary counts {summary}")
    lostmark = [i for i in r["instants"] if i["name"] == "strobe: events lost"]
    check(len(lostmark) == 1 and lostmark[0]["args"]["lost"] > 0, f"the loss marked {lostmark}")

    # Stages: their own track under the thread, nested among themselves.
    st = capture("stages", "--stages")
    doc, threads = chrome_events(st)
    want = chrome_scopes(doc, threads)
    _, r = perfetto_export(st, "stages.pftrace")
    got = perfetto_scopes(r)
    check(set(got) == set(want), "stage capture: every scope round-trips")
    stage_names = {"phase_update", "model_update", "row_bind"}
    on_stages = {k[1] for k, v in got.items() if v[3] == "stages"}
    check(on_stages == stage_names, f"stage scopes on the stages track: {on_stages}")
    check(all(v[3] == "main" for k, v in got.items() if k[1] not in stage_names and k[0] == "main"), "others on the thread")
    stages_track = [t for t in r["tracks"].values() if t["name"] == "stages"]
    main_uuid = next(u for u, t in r["tracks"].items() if t["name"] == "main")
    check(len(stages_track) == 1 and stages_track[0]["parent"] == main_uuid, f"the stages track is main's: {stages_track}")
    rb = [v[2] for k, v in got.items() if k[1] == "row_bind"]
    check(rb and all(d == 1 for d in rb), f"row_bind nested one deep on the stages track: {set(rb)}")

    # Operations: one slice per completed operation on its window's lane, with its facts.
    ops = capture("ops", "--ops")
    doc, _ = chrome_events(ops)
    _, r = perfetto_export(ops, "ops.pftrace")
    cb = {e["id2"]["local"]: e for e in doc["traceEvents"] if e["ph"] == "b"}
    ce = {e["id2"]["local"]: e for e in doc["traceEvents"] if e["ph"] == "e"}
    lanes = {u: t for u, t in r["tracks"].items() if t["name"].startswith("operations ")}
    got = sorted((s["name"], s["begin"], s["end"], tuple(sorted(s["args"].items()))) for s in r["slices"] if s["track"] in lanes)
    want = sorted((cb[k]["name"], ns(cb[k]["ts"]), ns(ce[k]["ts"]),
                   tuple(sorted((a, v) for a, v in cb[k]["args"].items()))) for k in cb)
    check(len(got) == 50 and got == want, f"operations differ: {got[:2]} vs {want[:2]}")
    check({t["name"] for t in lanes.values()} == {"operations main"}, f"one lane for main: {lanes}")
    check(sum(1 for g in got if ("committed", False) in g[3]) == 1, "frame 7 not committed")


def case_export_filters():
    base = capture("filters", "--frames", "40", "--unfinished")
    doc, threads = chrome_events(base)
    full = chrome_scopes(doc, threads)
    frames = sorted(k for k in full if k[1] == "frame")
    # --from inside frame 10 (after its start: frame 10 is left out, its later
    # children kept), --to inside frame 30 (frame 30 is open then: left out).
    frm = frames[10][2] + 500
    to = frames[30][2] + 1500
    check(any(k[2] < frm < k[3] for k in full) and any(k[2] < to < k[3] for k in full), "the bounds cut scopes")
    rng = ["--from", f"{frm / 1e6:.6f}", "--to", f"{to / 1e6:.6f}"]

    def expect(thread=None):
        return {k for k in full if k[2] >= frm and k[3] <= to and (thread is None or k[0] == thread)}

    # chrome
    for opts, thread in ((rng, None), (rng + ["--thread", "worker"], "worker"), (["--thread", "1"], "worker")):
        d, th = chrome_events(base, *opts)
        got = set(chrome_scopes(d, th))
        want = expect(thread) if "--from" in opts else {k for k in full if k[0] == thread}
        check(got == want, f"chrome {opts}: {len(got)} scopes, expected {len(want)}: "
              f"extra {sorted(got - want)[:3]}, missing {sorted(want - got)[:3]}")
        check(set(th.values()) == ({thread} if thread else {"main", "worker"}), f"chrome {opts} threads {th}")
        cs = [ns(e["ts"]) for e in d["traceEvents"] if e["ph"] == "C"]
        if "--from" in opts:  # main's counters and gauges by time; worker has none
            check(bool(cs) == (thread is None) and all(frm <= t <= to for t in cs), f"chrome {opts}: counters by time")
    # perfetto
    for opts, thread in ((rng, None), (rng + ["--thread", "worker"], "worker"), (["--thread", "worker"], "worker")):
        _, r = perfetto_export(base, "f.pftrace", *opts)
        got = set(perfetto_scopes(r))
        want = expect(thread) if "--from" in opts else {k for k in full if k[0] == thread}
        check(got == want, f"perfetto {opts}: {len(got)} scopes, expected {len(want)}: "
              f"extra {sorted(got - want)[:3]}, missing {sorted(want - got)[:3]}")
        names = {t["name"] for t in r["tracks"].values() if t["thread"]}
        check(names == ({thread} if thread else {"main", "worker"}), f"perfetto {opts} thread tracks {names}")
        if "--from" in opts:
            check(bool(r["counters"]) == (thread is None) and all(frm <= c["ts"] <= to for c in r["counters"]),
                  f"perfetto {opts}: counters by time")
            check(not r["open"], f"perfetto {opts}: the unfinished scope began before --to and was open at it: left out")
        else:
            check([s["name"] for s in r["open"]] == ["stalled"], f"perfetto {opts}: the unfinished scope kept")
    # speedscope: O/C pairs per profile
    out = os.path.join(ARGS.work, "f.speedscope.json")
    run("export", base, "--format", "speedscope", "-o", out, "--quiet", *rng)
    with open(out) as f:
        sd = json.load(f)
    got = set()
    for prof in sd["profiles"]:
        stack = []
        for e in prof["events"]:
            if e["type"] == "O":
                stack.append(e)
            else:
                o = stack.pop()
                got.add((prof["name"], sd["shared"]["frames"][o["frame"]]["name"], o["at"], e["at"]))
    check(got == expect(), f"speedscope: {len(got)} scopes, expected {len(expect())}: "
          f"extra {sorted(got - expect())[:3]}, missing {sorted(expect() - got)[:3]}")
    # folded: the self time of the scopes inside the range
    out = os.path.join(ARGS.work, "f.folded")
    run("export", base, "--format", "folded", "-o", out, "--quiet", *rng, "--thread", "main")
    with open(out) as f:
        total = sum(int(line.rsplit(" ", 1)[1]) for line in f)
    selfs = {}
    dep = depths(full)
    for k in full:  # self = duration minus the direct children's
        selfs[k] = k[3] - k[2] - sum(c[3] - c[2] for c in full if c[0] == k[0] and dep[c] == dep[k] + 1 and
                                     c[2] >= k[2] and c[3] <= k[3])
    want_total = sum(selfs[k] for k in expect("main"))
    check(total == want_total, f"folded self total {total}, expected {want_total}")
    # csv: counts and totals per site
    out = os.path.join(ARGS.work, "f.csv")
    run("export", base, "--format", "csv", "-o", out, "--quiet", *rng)
    with open(out) as f:
        rows = {row.split(",")[0]: row.split(",") for row in f.read().splitlines()[1:]}
    for name in {k[1] for k in expect()}:
        ks = [k for k in expect() if k[1] == name]
        check(int(rows[name][5]) == len(ks) and float(rows[name][3]) == sum(k[3] - k[2] for k in ks),
              f"csv {name}: {rows[name]} vs {len(ks)} scopes")
    # Bad values: a clear error, exit 2, for every format.
    for fmt in ("chrome", "speedscope", "perfetto", "folded", "csv"):
        for opts, msg in ((["--from", "abc"], "--from needs a number of ms"), (["--to", "-1"], "--to is ms since"),
                          (["--from", "5", "--to", "2"], "--to (2 ms) must be later than --from (5 ms)"),
                          (["--thread", ""], "--thread needs a thread name or index")):
            _, err = run("export", base, "--format", fmt, *opts, expect=2)
            check(msg in err, f"{fmt} {opts}: {err!r}")
        _, err = run("export", base, "--format", fmt, "--thread", "nosuch", "-o", os.devnull)
        check("no thread matches --thread nosuch" in err, f"{fmt}: --thread matching nothing is said: {err!r}")
    _, err = run("export", base, "--format", "chrome", "--compression", "zstd", expect=2)
    check("--compression applies to --format perfetto only" in err, err)
    _, err = run("export", base, "--format", "perfetto", "--compression", "lz4", expect=2)
    check("unknown --compression 'lz4'" in err, err)
    with open(base, "rb") as f:
        _, err = run("export", "-", "--format", "perfetto", "--to", "1", stdin=f, expect=2)
    check("cannot read standard input" in err, f"perfetto --to from stdin: {err!r}")


def case_export_folded():
    base = capture("base")
    out, _ = run("export", base, "--format", "folded")
    lines = out.splitlines()
    rx = re.compile(r"^[^;\n]+(;[^;\n]+)* \d+$")
    check(lines and all(rx.match(l) for l in lines), f"folded lines parse:\n{out}")
    got = {l.rsplit(" ", 1)[0]: int(l.rsplit(" ", 1)[1]) for l in lines}
    check(got["main;frame;update;work"] == 825000 and got["main;frame;render;draw"] == 200000, f"{got}")
    check(got["worker;job;io"] == 250000 and got["worker;job"] == 150000, f"{got}")
    check(got["main;frame;update"] == 845000 - 825000, "self time of update")
    check(sum(v for k, v in got.items() if k.startswith("main;")) == 1075000, "main's self times sum to its frames")


def case_export_csv():
    base = capture("base")
    out, _ = run("export", base, "--format", "csv")
    rows = out.splitlines()
    check(rows[0] == "name,src_file,src_line,total_ns,total_perc,counts,mean_ns,min_ns,max_ns,std_ns", rows[0])
    check(len(rows) == 1 + 7, f"one row per scope site:\n{out}")
    r = {x.split(",")[0]: x.split(",") for x in rows[1:]}
    w = r["work"]
    check(w[1:4] == ["app/sim.c", "30", "825000"] and w[5] == "150" and w[6] == "5500.0", f"work {w}")
    check(w[7] == "1000" and w[8] == "10000" and abs(float(w[9]) - 2872.3) < 0.1, f"work {w}")
    check(r["io"][9] == "0.0", "constant durations: std 0")
    span_ns = 2.1e6  # from info: the capture spans 0 .. 2.1 ms
    check(abs(float(w[4]) - 825000 / span_ns * 100) < 1e-3, f"total_perc {w[4]}")


def flip_byte(src, dst, offset):
    data = bytearray(open(src, "rb").read())
    data[offset] ^= 0x5A
    open(dst, "wb").write(data)


def limit_file_size():
    """In the child: files may not grow past 64 KiB, and writes past it fail (EFBIG) instead of killing."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))


def case_bad_input():
    base = capture("base")
    w = ARGS.work
    # Missing file, a directory, not a capture, empty file.
    for argv in (["info"], ["report"], ["export", "--format", "csv"]):
        _, err = run(*argv, os.path.join(w, "missing.strobe"), expect=1)
        check("cannot open" in err and "No such file or directory" in err and err.startswith(f"strobe {argv[0]}: "), err)
    _, err = run("report", w, expect=2)
    check("is a directory, not a regular file" in err, err)
    garbage = os.path.join(w, "garbage.strobe")
    with open(garbage, "wb") as f:
        f.write(b"this is not a capture file at all, just text\n" * 20)
    _, err = run("report", garbage, expect=1)
    check("not a Strobe capture file" in err, err)
    empty = os.path.join(w, "empty.strobe")
    open(empty, "wb").close()
    _, err = run("info", empty, expect=1)
    check("truncated inside its header" in err, err)
    # An epoch past 2^62 ns of CLOCK_MONOTONIC (a damaged header): the perfetto export, which places every time on
    # that clock, says so and fails, where its sums overflowed (UBSan) and wrapped.
    far = capture("far", "--epoch-mono", str(2**63 - 1000))
    _, err = run("export", far, "--format", "perfetto", "-o", os.path.join(w, "far.pftrace"), expect=1)
    check("out of range" in err, err)
    # Wrong version.
    ver = os.path.join(w, "v7.strobe")
    data = bytearray(open(base, "rb").read())
    data[8] = 7
    open(ver, "wb").write(data)
    _, err = run("report", ver, expect=1)
    check("capture format version 7 is not supported" in err, err)
    # Truncated inside a block: info describes it, report reports what it read; both exit 1 (the one rule).
    size = os.path.getsize(base)
    trunc = os.path.join(w, "trunc.strobe")
    with open(trunc, "wb") as f:
        f.write(subprocess.run(["head", "-c", str(size - 40), base], capture_output=True, check=True).stdout)
    out, err = run("info", trunc, expect=1)
    check("truncated inside a block" in out and "truncated inside a block (file ends at byte" in err, out + err)
    j, err = run_json("report", trunc, expect=1)
    check("truncated inside a block" in err and j["cut_short"] and j["sites"], f"{err}\n{j['state']}")
    _, err = run("export", trunc, "--format", "chrome", "-o", os.path.join(w, "t.json"), expect=1)
    check("truncated inside a block" in err, err)
    # A corrupt byte in a block: the reader's error, exit 1, what was read is still printed.
    corrupt = os.path.join(w, "corrupt.strobe")
    flip_byte(base, corrupt, size - 60)
    out, err = run("info", corrupt, expect=1)
    check("corrupt" in err and "state" in out, f"{out}\n{err}")
    _, err = run("report", corrupt, expect=1)
    check("corrupt" in err, err)
    # Usage errors: exit 2.
    _, err = run("export", base, "--format", "svg", expect=2)
    check("unknown format 'svg'" in err, err)
    _, err = run("export", base, expect=2)
    check("--format is required" in err, err)
    _, err = run("report", base, "--bogus", expect=2)
    check("--bogus" in err and "Try 'strobe report --help'" in err, err)
    _, err = run("report", base, "--from", "abc", expect=2)
    check("--from needs a number" in err, err)
    _, err = run("report", base, "--from", "5", "--to", "1", expect=2)
    check("--to must be later than --from" in err, err)
    _, err = run("report", expect=2)
    check("expected one capture FILE" in err, err)
    _, err = run("frobnicate", expect=2)
    check("unknown command 'frobnicate'" in err and "usage: strobe" in err, err)
    _, err = run(expect=2)
    check("usage: strobe" in err, err)
    # Output that cannot be written: exit 3, no partial file.
    _, err = run("export", base, "--format", "chrome", "-o", "/proc/nonexistent/x", expect=3)
    check("cannot write /proc/nonexistent/x" in err, err)
    # A write that fails part-way (file size limit: EFBIG): exit 3, the partial -o file removed.
    big = capture("big", "--frames", "2000")
    part = os.path.join(w, "part.json")
    p = subprocess.run([ARGS.strobe, "export", big, "--format", "chrome", "-o", part], capture_output=True, text=True,
                       preexec_fn=limit_file_size)
    check(p.returncode == 3 and "writing " + part + " failed: File too large" in p.stderr, f"{p.returncode} {p.stderr}")
    check(not os.path.exists(part), "the partial output file is removed")
    with open(os.path.join(w, "stdout.txt"), "w") as so:
        p = subprocess.run([ARGS.strobe, "export", big, "--format", "csv"], stdout=so, stderr=subprocess.PIPE,
                           text=True, preexec_fn=limit_file_size)
    # csv is small: fits. The chrome export to stdout does not.
    check(p.returncode == 0, p.stderr)
    with open(os.path.join(w, "stdout.txt"), "w") as so:
        p = subprocess.run([ARGS.strobe, "export", big, "--format", "chrome"], stdout=so, stderr=subprocess.PIPE,
                           text=True, preexec_fn=limit_file_size)
    check(p.returncode == 3 and "writing standard output failed" in p.stderr, f"{p.returncode} {p.stderr}")
    # A missing input does not leave an output file behind.
    dst = os.path.join(w, "never.json")
    run("export", os.path.join(w, "missing.strobe"), "--format", "chrome", "-o", dst, expect=1)
    check(not os.path.exists(dst), "no output file for a missing input")


def case_prefixes():
    """Every command on prefixes of a capture (cut anywhere): never a crash or a sanitizer
    report; exit 0 or 1 with a message; exports stay valid JSON covering what was read."""
    base = capture("base", "--unfinished", "--lost")
    data = open(base, "rb").read()
    pre = os.path.join(ARGS.work, "prefix.strobe")
    cuts = sorted(set(list(range(0, len(data), max(1, len(data) // 40))) + [8, 12, 15, 16, len(data) - 1]))
    for cut in cuts:
        with open(pre, "wb") as f:
            f.write(data[:cut])
        for argv in (["info"], ["report"], ["diff", pre], ["compare", pre, "--max-regression", "5"],
                     ["export", "--format", "folded"], ["export", "--format", "csv"],
                     ["export", "--format", "perfetto", "-o", os.devnull]):
            p = subprocess.run([ARGS.strobe, argv[0], pre, *argv[1:]], capture_output=True, text=True, timeout=60)
            check(p.returncode in (0, 1) and "Sanitizer" not in p.stderr and "runtime error" not in p.stderr,
                  f"cut at {cut}: strobe {' '.join(argv)}: exit {p.returncode}\n{p.stderr[-2000:]}")
            check(p.returncode == 0 or p.stderr.startswith(f"strobe {argv[0]}: "), f"cut at {cut}: {p.stderr}")
        for fmt in ("chrome", "speedscope"):
            out = os.path.join(ARGS.work, "prefix." + fmt)
            if os.path.exists(out):
                os.remove(out)
            p = subprocess.run([ARGS.strobe, "export", pre, "--format", fmt, "-o", out], capture_output=True,
                               text=True, timeout=60)
            check(p.returncode in (0, 1) and "runtime error" not in p.stderr, f"cut at {cut}: {fmt}: {p.stderr}")
            # A capture that opened gives an output, complete up to where reading stopped.
            check(os.path.exists(out) == (p.returncode == 0 or "the output covers" in p.stderr),
                  f"cut at {cut}: {fmt}: output file present only when the capture opened: {p.stderr}")
            if os.path.exists(out):
                with open(out) as f:
                    try:
                        json.load(f)
                    except json.JSONDecodeError as e:
                        raise Fail(f"cut at {cut}: the {fmt} export of what was read is not JSON: {e}")


def damaged_copies(src):
    """A copy cut inside its last block and a copy with a corrupt byte there."""
    size = os.path.getsize(src)
    trunc = os.path.join(ARGS.work, "damaged-trunc.strobe")
    with open(src, "rb") as f, open(trunc, "wb") as g:
        g.write(f.read()[:size - 40])
    corrupt = os.path.join(ARGS.work, "damaged-corrupt.strobe")
    flip_byte(src, corrupt, size - 60)
    return {"truncated": (trunc, "truncated inside a block (file ends at byte "),
            "corrupt": (corrupt, "capture block is corrupt")}


def view_until_served(argv, timeout=60):
    """Starts `strobe view ARGV --no-open`, waits for its URL, interrupts it; returns (rc, url, stderr).
    A view that exits before serving returns its exit code with url None."""
    p = subprocess.Popen([ARGS.strobe, "view", "--no-open", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    url = None
    try:
        r, _, _ = select.select([p.stdout], [], [], timeout)
        if r:
            url = p.stdout.readline().strip() or None
        if url:
            p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=timeout)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return p.returncode, url, err


def case_damaged():
    """One rule for every subcommand (docs/cli.md §Damaged captures): a capture truncated inside a block
    or corrupt gives everything read before the bad spot, a line on stderr saying where, and exit 1,
    even when the part a subcommand needed (frames 4 and 5 for diff --frames) lies before the damage."""
    spike = capture("spike", "--spike", "5")
    good = capture("good")
    for how, (bad, said) in damaged_copies(spike).items():
        cmds = [(["info", bad], True), (["report", bad], True), (["diff", bad, good], True),
                (["diff", good, bad], True), (["diff", bad, "--frames", "4", "5"], True),
                (["compare", bad, good, "--max-regression", "10"], False),
                (["compare", good, bad, "--max-regression", "10"], False)]
        cmds += [(["export", bad, "--format", f], True) for f in ("chrome", "speedscope", "folded", "csv")]
        for argv, prints in cmds:
            out, err = run(*argv, expect=1)
            check(err.startswith(f"strobe {argv[0]}: ") and f"{bad}: {said}" in err,
                  f"{how}: strobe {' '.join(argv)} says where reading stopped:\n{err}")
            check(not prints or out.strip(), f"{how}: strobe {' '.join(argv)} still prints what it read")
        # The perfetto export of what was read is a whole trace (binary: to a file).
        pf = os.path.join(ARGS.work, how + ".pftrace")
        _, err = run("export", bad, "--format", "perfetto", "-o", pf, expect=1)
        check(err.startswith("strobe export: ") and f"{bad}: {said}" in err, f"{how}: perfetto export: {err}")
        if shutil.which(ARGS.protoc) and shutil.which(ARGS.zstd):  # else not registered: CMake said so (cli_export_perfetto)
            r = perfetto_load(pf)
            check(r["slices"] and r["instants"][-1]["args"]["capture_state"] != "complete",
                  f"{how}: perfetto export of what was read")
        # The frames it compares lie before the damage: the same spans as on the whole file.
        j, _ = run_json("diff", bad, "--frames", "4", "5", expect=1)
        whole, _ = run_json("diff", spike, "--frames", "4", "5")
        check(j["spans"] == whole["spans"], f"{how}: diff --frames of what was read")
        # The viewer shows what was read, says so in the same words, and exits 1 once stopped.
        rc, url, err = view_until_served(["--quiet", bad])
        check(url and url.startswith("http://127.0.0.1:"), f"{how}: view serves what was read: {url} {err}")
        check(rc == 1 and f"strobe view: {bad}: {said}" in err, f"{how}: view: exit {rc}\n{err}")


def case_view_messages():
    """`strobe view` words a bad input as every other subcommand does (only the command name differs)."""
    w = ARGS.work
    garbage = os.path.join(w, "garbage.strobe")
    with open(garbage, "wb") as f:
        f.write(b"not a capture\n" * 10)
    empty = os.path.join(w, "empty.strobe")
    open(empty, "wb").close()
    fifo = os.path.join(w, "fifo")
    os.mkfifo(fifo)
    for bad, code in ((os.path.join(w, "missing.strobe"), 1), (garbage, 1), (empty, 1), (w, 2), (fifo, 2)):
        _, want = run("report", bad, expect=code)
        rc, url, err = view_until_served([bad], timeout=20)
        check(rc == code and url is None, f"view {bad}: exit {rc}, url {url}")
        check(err == want.replace("strobe report: ", "strobe view: "), f"view {bad}:\n{err}\nreport:\n{want}")


# The commands the mutants go through (every command that reads a capture); M is the mutant, B a valid base,
# G a valid capture with a gap in its thread indexes, O an output path. Each mutant runs two of them, in turn, and every 30th `view` too.
MUTANT_COMMANDS = [
    ["report", "--json", "M"], ["report", "--samples", "M"], ["diff", "B", "M"], ["diff", "M", "--frames", "1", "2"],
    ["compare", "B", "M", "--max-regression", "10"], ["tree", "M"], ["tree", "M", "--frame", "4"], ["calls", "M"],
    ["calls", "M", "--frame", "4"], ["export", "M", "--format", "chrome", "-o", "O"],
    ["export", "M", "--format", "speedscope", "-o", "O"], ["export", "M", "--format", "perfetto", "-o", "O"],
    ["export", "M", "--format", "otlp", "-o", "O"], ["export", "M", "--format", "folded", "-o", "O"],
    ["export", "M", "--format", "csv", "-o", "O"], ["export", "M", "--attachments", "O", "--force"],
    ["merge", "--same-host", "--quiet", "M", "G", "-o", "O"], ["info", "M"], ["info", "--json", "M"],
]
SANITIZER_REPORT = re.compile(r"runtime error:|ERROR: AddressSanitizer|ERROR: LeakSanitizer|"
                              r"SUMMARY: (Address|Undefined|Leak)Sanitizer")


def _run_mutant(argv, mutant, bases, out):
    """One command on one mutant: None when it ended as it must (exit 0, 1 or 2, no sanitizer report), else why."""
    argv = [mutant if a == "M" else out if a == "O" else bases.get(a, a) for a in argv]
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:exitcode=86", UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    try:
        p = subprocess.run([ARGS.strobe, *argv], capture_output=True, text=True, errors="replace", timeout=120, env=env)
    except subprocess.TimeoutExpired:
        return f"strobe {' '.join(argv)}: still running after 120 s"
    if p.returncode in (0, 1, 2) and not SANITIZER_REPORT.search(p.stderr):
        return None
    how = f"signal {-p.returncode}" if p.returncode < 0 else f"exit {p.returncode}"
    return f"strobe {' '.join(argv)}: {how}\n{p.stderr[-2000:]}"


def _view_mutant(mutant):
    """`strobe view` on a mutant: it serves (then stops on SIGINT) or refuses, with exit 0, 1 or 2."""
    p = subprocess.Popen([ARGS.strobe, "view", "--no-open", "--quiet", mutant], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, errors="replace")
    try:
        r, _, _ = select.select([p.stdout], [], [], 120)
        if r and p.stdout.readline():
            p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)
    finally:
        reap(p)
    if p.returncode in (0, 1, 2) and not SANITIZER_REPORT.search(err):
        return None
    return f"strobe view {mutant}: exit {p.returncode}\n{err[-2000:]}"


def case_mutants():
    """Structured mutants of every block kind (scripts/make-fuzz-seeds.py --mutants: lengths, counts, offsets,
    ORIGIN/MERGE, DEEP, OPS, GPU, samples, headers, cut files) through every command that reads a capture: each ends
    with exit 0, 1 or 2, never a signal, a hang or a sanitizer report (the ASan+UBSan build runs this test too).
    Bounded: 300 mutants, 2 commands each (each command meets 31 to 32 of them), two at a time."""
    import concurrent.futures
    import importlib.util
    w = ARGS.work
    spec = importlib.util.spec_from_file_location("seeds", os.path.join(HERE, "..", "..", "scripts", "make-fuzz-seeds.py"))
    seeds = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(seeds)
    made = [capture("m_ops", "--ops", "--stages", "--gpu", "--producer", "--frames", "12"),
            capture("m_content", "--deep", "--ui-tree", "--samples", "--frames", "12"),
            capture("m_merge", "--merge-block", "--thread-gap", "--frames", "6"),
            capture("m_crash", "--crash", "--frames", "6")]
    bases = [(os.path.basename(p), open(p, "rb").read()) for p in seeds.default_bases() + made]
    zstd = ARGS.zstd if ARGS.zstd and shutil.which(ARGS.zstd) else None
    mutants = []
    os.makedirs(os.path.join(w, "mutants"))
    for name, data in seeds.mutants(bases, 300, 31, zstd):
        path = os.path.join(w, "mutants", name)
        with open(path, "wb") as f:
            f.write(data)
        mutants.append(path)
    jobs = []
    for i, m in enumerate(mutants):
        for k in range(2):
            jobs.append((MUTANT_COMMANDS[(2 * i + k) % len(MUTANT_COMMANDS)], m))
    valid = {"B": made[0], "G": made[2]}
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        futures = [pool.submit(_run_mutant, argv, m, valid, os.path.join(w, f"out-{n}")) for n, (argv, m) in
                   enumerate(jobs)]
        futures += [pool.submit(_view_mutant, m) for m in mutants[::30]]
        failures = [f.result() for f in futures if f.result()]
    check(not failures, f"{len(failures)} of {len(futures)} runs ended badly; the first:\n" + "\n".join(failures[:3]))


def case_crash():
    """A capture a crash handler ended (docs/recording.md §Crashes; make_capture --crash writes its CRASH block as
    the handler does): strobe info and strobe report say where it died, in text and JSON; a capture without one
    says nothing (null)."""
    p = capture("crashed", "--crash")
    where = "SIGSEGV on thread main in pass 394 \u203a layout_compute"
    info, _ = run("info", p)
    check(f"crashed     {where} (2.100 ms" in info and "thread 0 main: frame \u203a layout_compute \u203a measure_row" in info
          and "thread 1 worker: job \u203a io" in info, info)
    report, _ = run("report", p)
    check(f"crashed: {where}" in report, report)
    for cmd in ("info", "report"):
        j, _ = run_json(cmd, p)
        k = j["crash"]
        check(k["message"] == where and k["signal"] == "SIGSEGV" and k["thread_name"] == "main" and
              k["operation"] == {"kind": "pass", "frame_id": 394, "stage": "layout_compute"} and
              [t["open_scopes"] for t in k["threads"]] == [["frame", "layout_compute", "measure_row"], ["job", "io"]],
              f"{cmd} --json: {k}")
        j, _ = run_json(cmd, capture("whole"))
        check(j["crash"] is None, f"{cmd} --json without a crash: {j['crash']}")


def interrupt(p, what):
    """Stops a serving `strobe view` with SIGINT: it must exit 0."""
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=30)
    check(p.returncode == 0, f"{what}: exit {p.returncode}")


def reap(p):
    """Kills a process still running (a failed check left it)."""
    if p.poll() is None:
        p.kill()
        p.wait()


def case_view_open():
    """`strobe view` starts the browser (xdg-open, here a stand-in that writes down its arguments) on a one-time
    code, never on the token: a command line is readable by every local user (ps). The code trades once for the
    token (POST /api/open), which is the one printed on standard output."""
    import urllib.error
    import urllib.request
    w = ARGS.work
    bindir, opened = os.path.join(w, "bin"), os.path.join(w, "opened.txt")
    os.makedirs(bindir, exist_ok=True)
    opener = os.path.join(bindir, "xdg-open")
    with open(opener, "w") as f:
        f.write('#!/bin/sh\nprintf \'%s\\n\' "$@" > "$STROBE_TEST_OPENED.tmp" && mv "$STROBE_TEST_OPENED.tmp" '
                '"$STROBE_TEST_OPENED"\n')
    os.chmod(opener, 0o755)
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""), DISPLAY=":99",
               STROBE_TEST_OPENED=opened)
    p = subprocess.Popen([ARGS.strobe, "view", "--quiet", capture("base")], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    try:
        r, _, _ = select.select([p.stdout], [], [], 60)
        url = p.stdout.readline().strip() if r else ""
        m = re.match(r"^http://127\.0\.0\.1:(\d+)/#token=([0-9a-f]+)$", url)
        check(m, f"view: no URL ({url!r})")
        port, token = m.group(1), m.group(2)
        for _ in range(600):  # the opener runs in a child: wait for it (60 s at most)
            if os.path.exists(opened):
                break
            time.sleep(0.1)
        argv = open(opened).read().split()
        check(len(argv) == 1 and token not in argv[0], f"the browser's command line holds the token: {argv}")
        c = re.match(r"^http://127\.0\.0\.1:" + port + r"/#code=([0-9a-f]{32})$", argv[0])
        check(c, f"the browser's command line: {argv}")

        def trade():
            req = urllib.request.Request(f"http://127.0.0.1:{port}/api/open", data=b"", method="POST",
                                         headers={"X-Strobe-Open-Code": c.group(1)})
            try:
                with urllib.request.urlopen(req, timeout=30) as res:
                    return res.status, json.load(res)
            except urllib.error.HTTPError as e:
                return e.code, None
        status, got = trade()
        check(status == 200 and got["token"] == token, f"the code traded for the token: {status} {got}")
        status, got = trade()
        check(status == 403, f"the code traded twice: {status} {got}")
        interrupt(p, "view")
    finally:
        reap(p)


def run_bounded(argv, stdin=None, timeout=15):
    """Runs strobe; a run that does not end within timeout fails the test (a hang), never stalls it."""
    try:
        return subprocess.run([ARGS.strobe, *argv], capture_output=True, text=True, stdin=stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Fail(f"strobe {' '.join(argv)}: still running after {timeout} s (blocked on its input)")


def case_fifo():
    """A FIFO (or a device) given as any input of any subcommand is refused at once, exit 2; the
    FIFO has no writer, so a blocking open would hang until the timeout."""
    base = capture("base")
    w = ARGS.work
    fifo = os.path.join(w, "fifo")
    os.mkfifo(fifo)
    cmds = [["info", fifo], ["report", fifo], ["diff", fifo, base], ["diff", base, fifo],
            ["diff", fifo, "--frames", "1", "2"], ["compare", fifo, base, "--max-regression", "5"],
            ["compare", base, fifo, "--max-regression", "5"], ["view", "--no-open", fifo],
            ["view", "--no-open", base, fifo], ["mcp", "--url", "http://127.0.0.1:1/mcp", "--token-file", fifo]]
    cmds += [["export", fifo, "--format", f] for f in ("chrome", "speedscope", "perfetto", "folded", "csv")]
    for argv in cmds:
        p = run_bounded(argv)
        check(p.returncode == 2, f"strobe {' '.join(argv)}: exit {p.returncode}\n{p.stderr}")
        check(p.stderr.startswith(f"strobe {argv[0]}: {fifo} is a FIFO (named pipe), not a regular file"),
              f"strobe {' '.join(argv)}:\n{p.stderr}")
    # A character device is refused the same way (it is not a capture however long it is read).
    p = run_bounded(["report", "/dev/zero"])
    check(p.returncode == 2 and "/dev/zero is a character device, not a regular file" in p.stderr, p.stderr)


def case_stdin():
    """'-' reads standard input as a stream (a pipe or a redirect) where the subcommand reads once,
    with the same results as the file; subcommands that read twice, and a terminal, are refused."""
    base = capture("base")
    grown = capture("grown", "--grow", "50")
    data = open(base, "rb").read()
    for argv in (["info", "--json"], ["report", "--json"], ["export", "--format", "chrome"],
                 ["export", "--format", "folded"], ["export", "--format", "csv"]):
        want = run(argv[0], base, *argv[1:])[0]
        p = subprocess.run([ARGS.strobe, argv[0], "-", *argv[1:]], input=data, capture_output=True, timeout=60)
        check(p.returncode == 0, f"strobe {argv[0]} - (pipe): exit {p.returncode}\n{p.stderr}")
        got = p.stdout.decode()
        if argv[0] in ("info", "report"):  # the file's name differs, nothing else
            a, b = json.loads(want), json.loads(got)
            check(b["file"] == "standard input", f"{argv[0]}: file {b['file']}")
            a.pop("file"); b.pop("file")
            check(a == b, f"strobe {argv[0]} - gives what the file gives")
        else:
            check(got == want.replace(base, "standard input"), f"strobe {' '.join(argv)} - gives what the file gives")
    with open(grown, "rb") as f:  # a redirect: stdin is the file itself
        p = run_bounded(["compare", base, "-", "--max-regression", "10", "--json"], stdin=f)
    check(p.returncode == 1 and json.loads(p.stdout)["regressed"] == 3, f"compare BASE - <grown: {p.stderr}")
    p = subprocess.run([ARGS.strobe, "diff", "-", grown, "--json"], input=data, capture_output=True, timeout=60)
    check(p.returncode == 0 and json.loads(p.stdout)["sites"][0]["name"] == "work", p.stderr)
    for argv in (["diff", "-", "--frames", "1", "2"], ["export", "-", "--format", "speedscope"],
                 ["view", "--no-open", "-"], ["diff", "-", "-"], ["compare", "-", "-", "--max-regression", "1"]):
        p = subprocess.run([ARGS.strobe, *argv], input=data, capture_output=True, timeout=30)
        check(p.returncode == 2 and p.stderr.decode().startswith(f"strobe {argv[0]}: "), f"{argv}: {p.stderr}")
    # A terminal on standard input: refused, never waited on.
    master, slave = pty.openpty()
    try:
        p = run_bounded(["report", "-"], stdin=slave)
    finally:
        os.close(slave)
        os.close(master)
    check(p.returncode == 2 and "standard input is a terminal" in p.stderr, p.stderr)


def tty_stderr(argv):
    """Runs strobe with stderr on a pseudo-terminal; returns what it wrote there."""
    master, slave = pty.openpty()
    p = subprocess.Popen([ARGS.strobe, *argv], stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        r, _, _ = select.select([master], [], [], 60)
        if not r:
            break
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    p.wait(timeout=60)
    os.close(master)
    return p.returncode, b"".join(chunks).decode("utf-8", "replace")


def case_stage_parents():
    """A stage that ran under two parents gets a row per parent; nothing else does."""
    path = capture("stages", "--frames", "10", "--stages")
    j, _ = run_json("report", path)
    rows = {(e["name"], e["nested_in"]): e for e in j["stage_parents"]}
    check(set(rows) == {("row_bind", "phase_update"), ("row_bind", "model_update")}, f"stage_parents {rows}")
    check(rows[("row_bind", "phase_update")]["count"] == 20, f"{rows}")
    check(rows[("row_bind", "phase_update")]["total_ns"] == 6000, f"{rows}")
    check(rows[("row_bind", "model_update")]["count"] == 5, f"{rows}")
    check(rows[("row_bind", "model_update")]["max_ns"] == 500, f"{rows}")
    check(j["stage_parents_cut"] == 0, "nothing cut")
    check(site(j, "row_bind")["count"] == 25, "the site row still counts every run")
    out, _ = run("report", path)
    check("stages that ran under several parents" in out, out)
    lines = [l.split() for l in out.splitlines() if l.strip().startswith("row_bind ")]
    check(["row_bind", "phase_update", "20"] in [l[:3] for l in lines], f"{lines}")
    check(["row_bind", "model_update", "5"] in [l[:3] for l in lines], f"{lines}")
    # A capture whose stages each ran under one parent has no such section.
    j, _ = run_json("report", capture("base"))
    check(j["stage_parents"] == [], f"{j['stage_parents']}")


def case_progress():
    big = capture("progress", "--frames", "100000")
    rc, err = tty_stderr(["report", big])
    check(rc == 0 and re.search(r"\rstrobe report: progress.strobe \[[#-]{30}\] +\d+% ", err) and err.endswith("\x1b[K"),
          f"a progress bar on a terminal: {err[-300:]!r}")
    rc, err = tty_stderr(["report", "--quiet", big])
    check(rc == 0 and err == "", f"--quiet: no bar: {err!r}")
    _, err = run("report", big)  # stderr is a pipe here
    check(err == "", f"no bar when stderr is not a terminal: {err!r}")


def case_merge():
    """`strobe merge` (docs/cli.md §strobe merge): two real processes of this host (two_processes: screen
    hands frame 7 to sender, whose clock's epoch is 30 ms later) merge onto one timeline through
    CLOCK_MONOTONIC: each marker lands where the processes measured it, threads are named after
    their process, both sides of the frame are there and joinable; hostile inputs get clear errors."""
    w = ARGS.work
    subprocess.run([ARGS.two_processes, w], check=True, timeout=120)
    a, b, out = os.path.join(w, "a.strobe"), os.path.join(w, "b.strobe"), os.path.join(w, "all.strobe")
    stdout, _ = run("merge", a, b, "-o", out)
    check("screen" in stdout and "sender" in stdout and "same boot (one CLOCK_MONOTONIC: exact)" in stdout
          and "within 0.000 ms" in stdout, f"merge summary: {stdout}")
    doc, threads = chrome_events(out)
    names = set(threads.values())
    check({"screen/main", "sender/main"} <= names, f"merged threads {sorted(names)}")
    starts = {}
    for e in doc["traceEvents"]:
        if e["ph"] == "X" and e["name"] in ("marker_a", "marker_b"):
            starts[(threads[e["tid"]], e["name"])] = e["ts"] * 1000
    check(set(starts) == {("screen/main", "marker_a"), ("sender/main", "marker_b")}, f"markers {starts}")
    mono = {n: int(open(os.path.join(w, n + ".mono")).read()) for n in ("a", "b")}
    want = mono["b"] - mono["a"]
    got = starts[("sender/main", "marker_b")] - starts[("screen/main", "marker_a")]
    # One clock: the distance between the markers is what the processes measured (to the
    # microsecond of the export and the calibration), though their epochs are 30 ms apart.
    check(abs(got - want) < 200e3 and want > 5e6, f"marker distance {got} ns in the merge, {want} ns measured")
    info, _ = run("info", out)
    check("screen/main" in info and "sender/main" in info, f"strobe info on the merge:\n{info}")
    boots = [re.search(r"^host boot +([0-9a-f]{32})$", run("info", f)[0], re.M) for f in (a, b)]
    check(all(boots) and boots[0].group(1) == boots[1].group(1), f"strobe info: one host boot for both: {boots}")
    # Hostile inputs: clear errors, nothing written over an input.
    size_a = os.path.getsize(a)
    p = run_bounded(["merge", a, b, "-o", a])
    check(p.returncode == 2 and "is the input" in p.stderr and os.path.getsize(a) == size_a, p.stderr)
    p = run_bounded(["merge", a, "-o", out])
    check(p.returncode == 2 and "two captures or more" in p.stderr, p.stderr)
    p = run_bounded(["merge", a, a, "-o", out])
    check(p.returncode == 2 and "same capture" in p.stderr, p.stderr)
    # One recording given twice, known by its content (process, boot, first event): a copy, or a merge with one of
    # its inputs, is refused, never merged with its events doubled.
    copy, ab0 = os.path.join(w, "copy.strobe"), os.path.join(w, "ab0.strobe")
    shutil.copyfile(b, copy)
    run("merge", "--quiet", a, b, "-o", ab0)
    for argv in ((a, b, copy), (ab0, b), (a, ab0)):
        p = run_bounded(["merge", *argv, "-o", out])
        check(p.returncode == 2 and "merged twice" in p.stderr, f"merge {argv}: exit {p.returncode} {p.stderr}")
    # A gap in the thread indexes (thread 1 never defined), and every prefix of a merge holding it: merged, or
    # refused with exit 1 and a message, never a signal.
    gap, gapped = capture("gap", "--thread-gap"), os.path.join(w, "gapped.strobe")
    run("merge", "--quiet", "--same-host", gap, a, "-o", gapped)
    raw_gapped = open(gapped, "rb").read()
    cut = os.path.join(w, "cut.strobe")
    for n in range(64, len(raw_gapped), max(1, len(raw_gapped) // 150)):
        with open(cut, "wb") as f:
            f.write(raw_gapped[:n])
        p = run_bounded(["merge", "--quiet", "--same-host", cut, b, "-o", out])
        check(p.returncode in (0, 1, 2) and (p.returncode == 0 or p.stderr.strip()),
              f"merge of {n} bytes of a gapped merge: exit {p.returncode} {p.stderr[-500:]}")
    fifo = os.path.join(w, "fifo")
    os.mkfifo(fifo)
    p = run_bounded(["merge", a, fifo, "-o", out])
    check(p.returncode == 2 and "is a FIFO (named pipe), not a regular file" in p.stderr, p.stderr)
    junk = os.path.join(w, "junk.strobe")
    with open(junk, "wb") as f:
        f.write(b"not a capture at all")
    p = run_bounded(["merge", a, junk, "-o", out])
    check(p.returncode == 1 and "not a Strobe capture" in p.stderr, p.stderr)
    raw = open(b, "rb").read()
    newer = os.path.join(w, "newer.strobe")
    with open(newer, "wb") as f:
        f.write(raw[:8] + (99).to_bytes(4, "little") + raw[12:])
    p = run_bounded(["merge", a, newer, "-o", out])
    check(p.returncode == 1 and "version 99 is not supported" in p.stderr, p.stderr)
    # Another host (its boot id differs): its clock is not this one; refused, never misaligned.
    boot = re.search(rb"[0-9a-f]{32}", raw[:512]).group(0)
    other = os.path.join(w, "other_host.strobe")
    with open(other, "wb") as f:
        f.write(raw.replace(boot, bytes(reversed(boot)), 1))
    p = run_bounded(["merge", a, other, "-o", out])
    check(p.returncode == 1 and "different hosts or boots" in p.stderr, p.stderr)
    # The viewer opens several captures at once, merged (strobe view --merge): one lane per thread of each.
    help_view = run_bounded(["view", "--help"])
    if help_view.returncode == 0:  # built with libstrobe_server
        import urllib.request
        p = subprocess.Popen([ARGS.strobe, "view", "--no-open", "--quiet", "--merge", a, b], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        try:
            r, _, _ = select.select([p.stdout], [], [], 60)
            url = p.stdout.readline().strip() if r else ""
            m = re.match(r"^http://127\.0\.0\.1:(\d+)/#token=([0-9a-f]+)$", url)
            check(m, f"view --merge: no URL ({url!r})")
            req = urllib.request.Request(f"http://127.0.0.1:{m.group(1)}/api/capture/meta",
                                         headers={"Authorization": "Bearer " + m.group(2)})
            meta = json.load(urllib.request.urlopen(req, timeout=30))
            lanes = {t["name"] for t in meta["threads"]}
            check({"screen/main", "sender/main"} <= lanes, f"view --merge: viewer lanes {sorted(lanes)}")
            interrupt(p, "view --merge")
        finally:
            reap(p)
        check(not [f for f in os.listdir(os.environ.get("TMPDIR") or "/tmp") if f.startswith("strobe-view-merge-")
                   and os.path.getmtime(os.path.join(os.environ.get("TMPDIR") or "/tmp", f)) > os.path.getmtime(a)],
              "view --merge left its temporary capture behind")
    # The merge is on that boot's clock and says so: merged again with a third process of the host, without
    # --same-host, it is the merge of the three at once.
    ab = os.path.join(w, "ab.strobe")
    run("merge", "--quiet", a, b, "-o", ab)
    info, _ = run("info", ab)
    check(re.search(r"^host boot +" + boots[0].group(1) + "$", info, re.M), f"the merge's host boot:\n{info}")
    third = os.path.join(w, "third")
    os.makedirs(third, exist_ok=True)
    subprocess.run([ARGS.two_processes, third], check=True, timeout=120)
    c, once, again = os.path.join(third, "a.strobe"), os.path.join(w, "once.strobe"), os.path.join(w, "again.strobe")
    run("merge", "--quiet", a, b, c, "-o", once)
    run("merge", "--quiet", ab, c, "-o", again)
    for argv in (("info",), ("report",)):
        same, x, y = _same_json(once, again, *argv)
        check(same, f"strobe {argv[0]}: at once {x}\nmerged again {y}")
    check(chrome_events(once)[0] == chrome_events(again)[0], "chrome export of the two")
    # A capture without a boot id (written by a tool) is aligned only when --same-host vouches for it.
    tool = capture("base")
    p = run_bounded(["merge", a, tool, "-o", out])
    check(p.returncode == 1 and "no boot id" in p.stderr, p.stderr)
    stdout, _ = run("merge", "--same-host", a, tool, "-o", out)
    check("pid_4242" in stdout, f"the tool's capture, named by its pid: {stdout}")
    # A header time past 2^62 ns (a damaged header): refused with a clear error, never merged at shifted times.
    far = capture("far", "--epoch-mono", str(2**63 - 1000))
    os.remove(out)
    p = run_bounded(["merge", "--same-host", far, tool, "-o", out])
    check(p.returncode == 1 and "out of range" in p.stderr and not os.path.exists(out), f"merge of {far}: {p.stderr}")
    check(os.path.getsize(a) == size_a and os.path.getsize(b) == len(raw), "the inputs are untouched")


def _same_json(a, b, *argv, drop=()):
    """`strobe ARGV` on captures a and b gives the same JSON, but for the file names and the keys `drop` (at any
    depth)."""
    ja, _ = run_json(*argv, a)
    jb, _ = run_json(*argv, b)
    for j in (ja, jb):
        j.pop("file", None)
        _drop(j, drop)
    return ja == jb, ja, jb


def _drop(obj, keys):
    """Removes keys from every object in obj, at any depth."""
    if isinstance(obj, dict):
        for k in keys:
            obj.pop(k, None)
        for v in obj.values():
            _drop(v, keys)
    elif isinstance(obj, list):
        for v in obj:
            _drop(v, keys)


def case_merge_content():
    """`strobe merge` carries content (docs/cli.md §strobe merge): UI-tree snapshots, sampled stacks and context switches,
    attachments and deep captures come out of the merge as from each input (strobe tree, strobe calls, strobe
    export --attachments, strobe report --samples), their ids renumbered where two inputs' collide; a merged
    capture merged again is the merge of every input at once; what a merge could not carry is said by report."""
    w = ARGS.work
    tree, deep, smp = capture("ui_tree", "--ui-tree", "--frames", "12"), capture("deep", "--deep", "--frames", "12"), \
        capture("samples", "--samples", "--frames", "12")
    out = os.path.join(w, "all.strobe")
    stdout, _ = run("merge", "--same-host", smp, tree, deep, "-o", out)
    check("2 UI-tree snapshots, 1 deep captures, 3 sampled functions" in stdout, stdout)
    # Snapshots: listed with their frames and rebuilt node for node, as from the input (which names no process:
    # the merge names each by its input, the three of one pid told apart by their places).
    same, a, b = _same_json(tree, out, "tree", drop=("process",))
    check(same, f"strobe tree: input {a} merged {b}")
    j, _ = run_json("tree", out)
    check([s["process"] for s in j["snapshots"]] == ["pid_4242#2"] * 2, f"{j['snapshots']}")
    for k in ("1", "2"):
        same, a, b = _same_json(tree, out, "tree", "--snapshot", k, drop=("process",))
        check(same, f"strobe tree --snapshot {k}: input {a} merged {b}")
    # Deep captures and attachments: every call, resource and byte.
    for argv in (("calls",), ("calls", "--frame", "4")):
        same, a, b = _same_json(deep, out, *argv, drop=("process",))
        check(same, f"strobe {' '.join(argv)}: input {a} merged {b}")
    j, _ = run_json("calls", deep)
    check([d["process"] for d in j["deep_captures"]] == [None], f"a capture not merged names no process: {j}")
    dirs = {}
    for name, path in (("in", deep), ("merged", out)):
        dirs[name] = os.path.join(w, "attachments-" + name)
        run("export", path, "--attachments", dirs[name])
    files = sorted(os.listdir(dirs["in"]))
    check(files == sorted(os.listdir(dirs["merged"])), f"{files} vs {sorted(os.listdir(dirs['merged']))}")
    for f in files:
        check(open(os.path.join(dirs["in"], f), "rb").read() == open(os.path.join(dirs["merged"], f), "rb").read(), f)
    # Samples and switches: on the sampled process's threads (all three inputs have OS threads 1000 and 1001:
    # the later inputs' move), so the on/off-CPU split and the hot functions are the input's.
    ja, _ = run_json("report", "--samples", smp)
    jb, _ = run_json("report", "--samples", out)
    check(ja["samples"] == jb["samples"], f"samples: input {ja['samples']} merged {jb['samples']}")
    split = [s for s in jb["cpu_split"] if s["covered"]]
    check(split == ja["cpu_split"] and len(ja["cpu_split"]) == 7, f"cpu split: input {ja['cpu_split']} merged {split}")
    check(ja["merge"] is None and jb["merge"] == {"inputs": 3, "error_ns": 0, "not_merged": {}}, f"{jb['merge']}")
    info, _ = run_json("info", out)
    tids = [t["tid"] for t in info["threads"]]
    check(tids[:2] == [1000, 1001] and len(set(tids)) == 6, f"merged OS thread ids {tids}")
    # Two inputs with the same resource ids: the second's move, each deep capture keeps its own contents.
    twin = os.path.join(w, "twin.strobe")
    shutil.copy(deep, twin)
    both = os.path.join(w, "both.strobe")
    run("merge", "--quiet", "--same-host", deep, twin, "-o", both)
    j, _ = run_json("calls", both)
    check([(d["seq"], d["frame"], d["calls"]) for d in j["deep_captures"]] == [(1, 4, 6), (2, 4, 6)],
          f"numbered in the merge: {j['deep_captures']}")
    check(j["attachments_cut"] == 2 and j["attachment_bytes_cut"] == 1000, f"both inputs' cut attachments: {j}")
    d2 = os.path.join(w, "attachments-both")
    run("export", both, "--attachments", d2)
    rows = [r.split("\t") for r in open(os.path.join(d2, "index.tsv")).read().splitlines()[1:]]
    res = [r[1] for r in rows if r[6] == "stored"]
    check(len(res) == 6 and len(set(res)) == 6, f"stored resources of both inputs, apart: {res}")
    # Two inputs' snapshots, each numbered from 1: numbered in the merge, in input order.
    shutil.copy(tree, twin)
    run("merge", "--quiet", "--same-host", tree, twin, "-o", both)
    j, _ = run_json("tree", both)
    check([s["snapshot"] for s in j["snapshots"]] == [1, 2, 3, 4], f"{j['snapshots']}")
    ja, _ = run_json("tree", tree, "--snapshot", "1")
    jb, _ = run_json("tree", both, "--snapshot", "3")
    # (the spans of its elements: both twins' in that interval, the element ids being the same)
    bare = [[{k: v for k, v in n.items() if k != "spans"} for n in j["nodes"]] for j in (ja, jb)]
    check(bare[0] == bare[1], f"the second input's first snapshot: {bare[0]} vs {bare[1]}")
    _merge_processes(w)
    # Merged again: the same capture as merging every input at once (each snapshot's and deep capture's process
    # too).
    half, again = os.path.join(w, "half.strobe"), os.path.join(w, "again.strobe")
    run("merge", "--quiet", "--same-host", smp, tree, "-o", half)
    run("merge", "--quiet", "--same-host", half, deep, "-o", again)
    for argv in (("info",), ("report", "--samples"), ("tree",), ("tree", "--snapshot", "2"), ("calls",)):
        same, a, b = _same_json(out, again, *argv)
        check(same, f"strobe {' '.join(argv)}: at once {a}\nmerged again {b}")
    check(chrome_events(out)[0] == chrome_events(again)[0], "chrome export of the merge and of the merge merged again")
    # What a merge could not carry is said by report, and carried by a merge of the merge.
    told = capture("told", "--merge-block", "--frames", "4")
    text, _ = run("report", told)
    check(re.search(r"^merged: 1 captures.*not merged: 5 sample records", text, re.M), text)
    _, err = run("merge", "--same-host", told, smp, "-o", again)
    check("5 sample" in err, err)
    j, _ = run_json("report", again)
    check(j["merge"]["not_merged"] == {"sample": 5} and j["merge"]["inputs"] == 2, f"{j['merge']}")


def _merge_processes(w):
    """Two processes' snapshots and deep captures of the same frame ids (docs/cli.md §strobe merge): each listed with its
    process; --frame N is refused while several processes have one of it, naming them; --process picks each
    one's own content (the second's resources moved up by 2^48, its attachments of the frame only); a process
    without one, or --process on a capture not merged or without --frame, is refused."""
    pa, pb = (capture("proc_" + p, "--ui-tree", "--deep", "--frames", "12", "--pid", p) for p in ("101", "202"))
    two = os.path.join(w, "two.strobe")
    run("merge", "--quiet", "--same-host", pa, pb, "-o", two)
    j, _ = run_json("calls", two)
    check([(d["seq"], d["frame"], d["process"]) for d in j["deep_captures"]] == [(1, 4, "pid_101"), (2, 4, "pid_202")],
          f"deep captures: {j['deep_captures']}")
    check([(a["frame"], a["process"]) for a in j["attachments_by_frame"]] ==
          [(4, "pid_101"), (9, "pid_101"), (4, "pid_202"), (9, "pid_202")], f"{j['attachments_by_frame']}")
    j, _ = run_json("tree", two)
    check([(s["snapshot"], s["frame"], s["process"]) for s in j["snapshots"]] ==
          [(1, 4, "pid_101"), (2, 9, "pid_101"), (3, 4, "pid_202"), (4, 9, "pid_202")], f"snapshots: {j['snapshots']}")
    for cmd in ("calls", "tree"):
        text, _ = run(cmd, two)
        rows = [r for r in text.splitlines() if re.match(r"^ +\d", r)]
        check([r.split()[-1] for r in rows[:2]] == ["pid_101", "pid_101" if cmd == "tree" else "pid_202"],
              f"strobe {cmd}: the process, last on each row:\n{text}")
        p = run_bounded([cmd, two, "--frame", "4"])
        check(p.returncode == 2 and "from several processes (pid_101, pid_202)" in p.stderr and "--process NAME" in
              p.stderr and not p.stdout, f"strobe {cmd} --frame 4 on two processes: exit {p.returncode} {p.stderr}")
        p = run_bounded([cmd, two, "--frame", "4", "--process", "pid_303"])
        check(p.returncode == 2 and "no " in p.stderr and "process 'pid_303'" in p.stderr and "pid_101, pid_202" in
              p.stderr and not p.stdout, f"strobe {cmd} --process pid_303: exit {p.returncode} {p.stderr}")
        for argv, why in (([pa, "--frame", "4", "--process", "pid_101"], "not a merged capture"),
                          ([two, "--process", "pid_101"], "goes with --frame")):
            p = run_bounded([cmd, *argv])
            check(p.returncode == 2 and why in p.stderr, f"strobe {cmd} {argv}: exit {p.returncode} {p.stderr}")
    moved = lambda x: "%016x" % (int(x, 16) + (1 << 48))
    for proc, src, seq in (("pid_101", pa, 1), ("pid_202", pb, 3)):
        want, _ = run_json("calls", src, "--frame", "4")
        if proc == "pid_202":  # the second input's resource ids collide with the first's: moved up by 2^48
            for c in want["calls"]:
                for r in c["resources"]:
                    r["id"] = moved(r["id"])
            for a in want["attachments"]:
                a["resource"] = moved(a["resource"])
        got, _ = run_json("calls", two, "--frame", "4", "--process", proc)
        check(got["process"] == proc and got["calls"] == want["calls"] and got["attachments"] == want["attachments"],
              f"calls --process {proc}: {got}\nits input's: {want}")
        text, _ = run("calls", two, "--frame", "4", "--process", proc)
        check(text.startswith(f"process {proc}, frame 4:"), text)
        got, _ = run_json("tree", two, "--frame", "4", "--process", proc)
        want, _ = run_json("tree", src, "--frame", "4")
        check(got["snapshot"]["snapshot"] == seq and got["snapshot"]["process"] == proc, f"{got['snapshot']}")
        _drop(got["nodes"], ("spans",)), _drop(want["nodes"], ("spans",))  # spans: both processes' elements of an id
        check(got["nodes"] == want["nodes"], f"tree --process {proc}: {got['nodes']}\nits input's: {want['nodes']}")


class _FakeClock(http.server.BaseHTTPRequestHandler):
    """A peer whose GET /api/clock answers badly, by path of the server it was started for."""
    mode = "malformed"

    def do_GET(self):
        mode = type(self).mode
        if mode == "slow":
            time.sleep(0.4)
        t = time.monotonic_ns()
        body = {"malformed": b'{"boot_id": "not hex", "recv_mono_ns": 1}',
                "slow": json.dumps({"boot_id": "f" * 32, "recv_mono_ns": t, "reply_mono_ns": t}).encode(),
                # The peer says it took 10 s to answer a request that came back in milliseconds.
                "absurd": json.dumps({"boot_id": "f" * 32, "recv_mono_ns": t,
                                      "reply_mono_ns": t + 10_000_000_000}).encode()}[mode]
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


def _fake_peer(mode):
    handler = type("FakeClock_" + mode, (_FakeClock,), {"mode": mode})
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.handle_error = lambda *a: None  # a client that gave up on a slow answer is what the test wants
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def case_clock_offset():
    """Clock offsets between hosts (docs/sessions.md §Across hosts): clock_hosts runs "host" on this
    machine's clock and "peer" under STROBE_TEST_FAKE_HOST (another boot id, its clock SHIFT ahead),
    each recording and serving /api/clock. `strobe clock-offset` measures the peer (the offset is
    SHIFT within its error bound), `--via` has the host's server keep a sample, which its capture
    carries; `strobe merge` aligns the two captures through it, says so with the bound, and places
    the peer's marker within that bound of where it belongs. Bad peers (unreachable, wrong token,
    malformed or absurd answers, too slow) get clear errors and store nothing; captures of two hosts
    with no sample between them are refused."""
    w = ARGS.work
    shift = 123_456_789_012_345  # the peer's clock, 34 h ahead of this one
    p = subprocess.Popen([ARGS.clock_hosts, w, str(shift)], stdin=subprocess.PIPE, text=True)
    fakes = []
    try:
        deadline = time.monotonic() + 60
        while not all(os.path.exists(os.path.join(w, n + ".port")) for n in ("host", "peer")):
            check(time.monotonic() < deadline and p.poll() is None, "clock_hosts did not start its servers")
            time.sleep(0.05)
        port = {n: int(open(os.path.join(w, n + ".port")).read()) for n in ("host", "peer")}
        peer, host = f"http://127.0.0.1:{port['peer']}", f"http://127.0.0.1:{port['host']}"
        peer_token, host_token = os.path.join(w, "peer.token"), os.path.join(w, "host.token")
        open(peer_token, "w").write("peer-token-0123456789abcdef\n")
        open(host_token, "w").write("host-token-0123456789abcdef\n")
        # Measured from this process (the real host's clock): the offset is the shift, within the bound.
        out, _ = run("clock-offset", peer, "--token-file", peer_token, "--json")
        o = json.loads(out)
        check(o["peer_boot_id"] == "0123456789abcdef0123456789abcdef", f"peer boot {o}")
        check(0 < o["error_ns"] <= o["rtt_ns"] and abs(o["offset_ns"] - shift) <= o["error_ns"],
              f"offset {o['offset_ns']} ns +- {o['error_ns']} for a shift of {shift} ns")
        check(o["kept_by"] is None, f"a sample measured by the CLI is kept nowhere: {o}")
        # Bad peers: clear errors, exit 1, nothing kept (the host's capture is checked at the end).
        closed = socket.socket()
        closed.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{closed.getsockname()[1]}"
        closed.close()
        wrong = os.path.join(w, "wrong.token")
        open(wrong, "w").write("not-the-token-0123456789\n")
        fakes = {m: _fake_peer(m) for m in ("malformed", "slow", "absurd")}
        bad = [([dead], "unreachable"), ([peer, "--token-file", wrong], "refused the token"),
               ([f"http://127.0.0.1:{fakes['malformed'].server_address[1]}"], "not a Strobe clock reply"),
               ([f"http://127.0.0.1:{fakes['absurd'].server_address[1]}"], "not a Strobe clock reply"),
               ([f"http://127.0.0.1:{fakes['slow'].server_address[1]}", "--max-rtt-ms", "100", "--rounds", "2"],
                "no round trip came back within")]
        for argv, want in bad:
            args = argv if "--token-file" in argv else argv + ["--token-file", peer_token]
            r = run_bounded(["clock-offset", *args], timeout=30)
            check(r.returncode == 1 and want in r.stderr and not r.stdout, f"clock-offset {argv}: {r.stderr}")
            # The same through the application's server: refused (502) and nothing kept.
            r = run_bounded(["clock-offset", *args, "--via", host, "--via-token-file", host_token], timeout=30)
            check(r.returncode == 1 and "answered 502" in r.stderr, f"clock-offset --via {argv}: {r.stderr}")
        r = run_bounded(["clock-offset", peer, "--token-file", peer_token, "--via", host, "--via-token-file", wrong])
        check(r.returncode == 1 and "answered 401" in r.stderr, f"--via with a wrong token: {r.stderr}")
        # The host's server samples the peer and keeps it: its capture carries it.
        out, _ = run("clock-offset", peer, "--token-file", peer_token, "--via", host, "--via-token-file", host_token,
                     "--peer", "peer_host", "--json")
        kept = json.loads(out)
        check(kept["peer"] == "peer_host" and abs(kept["offset_ns"] - shift) <= kept["error_ns"], f"kept {kept}")
        p.stdin.write("go\n")
        p.stdin.close()
        check(p.wait(timeout=120) == 0, f"clock_hosts exited {p.returncode}")
    finally:
        for f in (fakes.values() if isinstance(fakes, dict) else []):
            f.shutdown()
        if p.poll() is None:
            p.stdin.close()  # its processes stop when their go pipes close
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    a, b, out = (os.path.join(w, n) for n in ("a.strobe", "b.strobe", "all.strobe"))
    info, _ = run_json("info", a)
    samples = info["clock_offsets"]["samples"]
    check(len(samples) == 1 and samples[0]["peer"] == "peer_host" and samples[0]["offset_ns"] == kept["offset_ns"],
          f"the host's capture carries exactly the one sample kept: {samples}")
    text, _ = run("info", a)
    check(re.search(r"^clock offsets 1 sample", text, re.M) and "peer_host (boot 01234567)" in text, text)
    stdout, _ = run("merge", a, b, "-o", out)
    m = re.search(r"each within ([0-9.]+) ms", stdout)
    check(m and "clock offset (1 clock-offset sample)" in stdout, f"merge summary: {stdout}")
    minfo, _ = run_json("info", out)
    mg = minfo["merge"]
    check(mg and [i["alignment"] for i in mg["inputs"]] == ["reference", "clock offset"]
          and mg["error_ns"] == kept["error_ns"] == mg["inputs"][1]["error_ns"], f"merge block: {mg}")
    check(len(minfo["clock_offsets"]["samples"]) == 1, "the merge carries the sample that aligned it")
    doc, threads = chrome_events(out)
    starts = {e["name"]: e["ts"] * 1000 for e in doc["traceEvents"] if e["ph"] == "X" and e["name"].startswith("marker_")}
    mono = {n: int(open(os.path.join(w, n + ".mono")).read()) for n in ("a", "b")}
    want = mono["b"] - mono["a"]  # both read on this machine's real clock
    got = starts["marker_b"] - starts["marker_a"]
    # The peer's clock was placed within the sample's bound of the true shift...
    check(abs(-mg["inputs"][1]["shift_ns"] - shift) <= mg["error_ns"], f"shift {mg['inputs'][1]['shift_ns']} ns "
          f"for a true {shift} ns, bound {mg['error_ns']} ns")
    # ...and so its events: within the bound plus the slack of each capture's own tick calibration (the same
    # as for two processes of one host, case merge), though the peer's clock reads 34 h ahead.
    check(abs(got - want) <= mg["error_ns"] + 200e3, f"marker distance {got} ns merged, {want} ns measured, "
          f"bound {mg['error_ns']} ns")
    # Two hosts and no sample between them: refused, nothing written.
    real = os.path.join(w, "real")
    os.makedirs(real)
    subprocess.run([ARGS.two_processes, real], check=True, timeout=120)  # captures of this host, no sample
    os.remove(out)
    r = run_bounded(["merge", os.path.join(real, "a.strobe"), b, "-o", out])
    check(r.returncode == 1 and "no clock-offset sample links them" in r.stderr and not os.path.exists(out), r.stderr)

# >>frames truth: every consumer of the frame model gives the same answers (docs/frames.md).
def nearest_rank(values, p):
    v = sorted(values)
    return v[max(0, math.ceil(p * len(v)) - 1)]


def truth_answers(path):
    """Each consumer's answers to the same questions about one capture: frames per series and state, rates per
    series, each frame's own spans, and stage n/p50/p95 per (stage, run-time parent, process)."""
    info, _ = run_json("info", "--frames", path)
    report, _ = run_json("report", path, "--top", "1000000")
    fr, lst = info["frames"], info["frames"]["list"]
    got = {"info": {}, "info_list": {}, "report": {}, "diff": {}}
    # 1. Frames per series and state.
    got["info"]["states"] = {s["label"]: {k: v for k, v in s["by_state"].items() if v} for s in fr["series"]}
    by = {}
    for f in lst:
        if f["series"]:
            by.setdefault(f["series"], {}).setdefault(f["state"].upper().replace(" ", "_"), 0)
            by[f["series"]][f["state"].upper().replace(" ", "_")] += 1
    got["info_list"]["states"] = by
    # 5. Populations per frame (passes and other operations; unfinished ones have no END, so none).
    if report["frames"]["source"] == "pass_operations":
        got["info"]["populations"] = {(f["series"], f["number"]): f["population"]
                                      for f in lst if f["series"] and f["state"] != "unfinished"}
        got["report"]["populations"] = {(x["series"], x["frame"]): x["population"] for x in report["frames"]["slowest"]}
    rs = {}
    for x in report["frames"]["slowest"]:  # every frame with a duration (--top): unfinished ones have none
        label = x["series"]
        key = x.get("state", "completed").upper().replace(" ", "_")
        rs.setdefault(label, {}).setdefault(key, 0)
        rs[label][key] += 1
    for label, states in by.items():  # the report lists no unfinished frame (it has no duration): add them back
        if states.get("UNFINISHED"):
            rs.setdefault(label, {})["UNFINISHED"] = states["UNFINISHED"]
    got["report"]["states"] = rs
    if report["frames"]["source"] == "pass_operations":
        total = {}
        for states in got["info"]["states"].values():
            for k, v in states.items():
                total[k] = total.get(k, 0) + v
        got["report"]["states_total"] = {k: v for k, v in report["frames"]["by_state"].items() if v}
        got["info"]["states_total"] = total
    # 2. Rates per series (the series with two boundaries or more).
    got["info"]["rates"] = {s["label"]: (s["fps_first_to_last"], s["fps_steady_median_interval"])
                            for s in fr["series"] if s["fps_first_to_last"] is not None}
    got["report"]["rates"] = {x["series"]: (x["fps_first_to_last"], x["fps_steady_median_interval"])
                              for x in report["frames"]["series"]}
    # 3. Each frame's own spans, from the list and from diff --frames (each frame against the next of its series).
    frames = [f for f in lst if f["series"] and f["state"] != "unfinished"]
    got["info"]["spans"] = {(f["series"], f["number"]): f["spans"] for f in frames}
    ordered = sorted(frames, key=lambda f: f["series"])  # stable: each series in its own order
    for a, b in zip(ordered, ordered[1:]):
        if a["series"] != b["series"]:
            continue
        opt = ["--window", a["series"]] if report["frames"]["source"] == "pass_operations" else ["--thread", a["thread"]]
        d, _ = run_json("diff", path, "--frames", str(a["number"]), str(b["number"]), *opt)
        for side, f in (("a", a), ("b", b)):
            counted = sum(x["count_before" if side == "a" else "count_after"] for x in d["spans"])
            check(counted == d[side]["spans"], f"diff of {path}: its span list holds {counted}, its header {d[side]}")
            got["diff"].setdefault("spans", {})[(f["series"], f["number"])] = d[side]["spans"]
    # The OTLP export: one trace per operation, a root span per frame with its state, and (--otlp-scopes) a child
    # span for each of its own spans. Unfinished frames are not exported.
    if report["frames"]["source"] == "pass_operations":
        out = path + ".otlp.json"
        run("export", path, "--format", "otlp", "--otlp-scopes", "-o", out)
        with open(out) as fh:
            spans = json.load(fh)["resourceSpans"][0]["scopeSpans"][0]["spans"]
        roots, children = {}, {}
        for sp in spans:
            if "parentSpanId" in sp:
                children[sp["traceId"]] = children.get(sp["traceId"], 0) + 1
                continue
            a = {x["key"]: list(x["value"].values())[0] for x in sp["attributes"]}
            if "strobe.frame_id" in a:
                label = (a["strobe.process"] + "/" if "strobe.process" in a else "") + a["strobe.window"]
                roots[sp["traceId"]] = (label, int(a["strobe.frame_id"]), a["strobe.state"], a.get("strobe.population"))
        got["otlp"] = {"spans": {(label, n): children.get(t, 0) for t, (label, n, _, _) in roots.items()},
                       "populations": {(label, n): pop for label, n, _, pop in roots.values()}}
        st = {}
        for label, _, state, _ in roots.values():
            st.setdefault(label, {}).setdefault(state.upper().replace(" ", "_"), 0)
            st[label][state.upper().replace(" ", "_")] += 1
        got["otlp"]["states"] = st
        for label, states in by.items():  # as the report: unfinished frames are in no export
            if states.get("UNFINISHED"):
                got["otlp"]["states"].setdefault(label, {})["UNFINISHED"] = states["UNFINISHED"]
    # The Chrome and Perfetto exports: one slice per pass that ended (a frame handed between processes is one), its
    # state and population among its args.
    if report["frames"]["source"] == "pass_operations":
        doc, _ = chrome_events(path)
        _, pf = perfetto_export(path, os.path.basename(path) + ".pftrace")
        lanes = {u for u, t in pf["tracks"].items() if t["name"].startswith("operations ")}
        for name, slices in (("chrome", [e["args"] for e in doc["traceEvents"] if e["ph"] == "b" and e.get("cat") == "operation"]),
                             ("perfetto", [x["args"] for x in pf["slices"] if x["track"] in lanes])):
            st, pops = {}, {}
            for a in slices:
                if "frame_id" not in a:  # not a pass
                    continue
                label = (a["process"] + "/" if "process" in a else "") + a["window"]
                key = a["state"].upper().replace(" ", "_")
                st.setdefault(label, {}).setdefault(key, 0)
                st[label][key] += 1
                pops[(label, a["frame_id"])] = a.get("population")
            for label, states in by.items():  # unfinished frames have no end to draw
                if states.get("UNFINISHED"):
                    st.setdefault(label, {})["UNFINISHED"] = states["UNFINISHED"]
            got[name] = {"states": st, "populations": pops}
    # 4. Stages per (stage, run-time parent, process): the report's rows, and recomputed from the list's frames.
    rows = {}
    for f in lst:
        per = {}
        for st in f["stages"]:
            key = (st["name"], st["nested_in"], st["process"])
            per[key] = per.get(key, 0) + st["total_ns"]
        for key, total in per.items():
            rows.setdefault(key, []).append(total)
    got["info"]["stages"] = {k: (len(v), round(nearest_rank(v, 0.5)), round(nearest_rank(v, 0.95))) for k, v in rows.items()}
    got["report"]["stages"] = {(x["name"], x["nested_in"] if x["nested_in_from"] == "run-time" else None, x["process"]):
                               (x["n"], round(x["p50"]["ns"]), round(x["p95"]["ns"]))
                               for x in report["operations"]["stages"]}
    return got, lst


def truth_agree(path, got):
    """Every pair of consumers that answered a question gives one answer."""
    for q in ("states", "states_total", "rates", "spans", "stages", "populations"):
        answers = {f"{consumer}.{q}": a[q] for consumer, a in got.items() if q in a}
        first = next(iter(answers.items()), None)
        for name, v in answers.items():
            check(v == first[1], f"{path}: {q}: {name} says {v}, {first[0]} says {first[1]}")
    return got


def case_frames_truth():
    """One frame, one truth (docs/frames.md): strobe info (the model's frame list), strobe report, strobe
    diff --frames, strobe tree, the OTLP, Chrome and Perfetto exports agree on the frames per window and state, the rates per window, each frame's own spans,
    the stages per (stage, run-time parent, process) and the populations per frame, on captures with every frame state (frame_states), a
    GTK-shaped frame loop, a merged two-process capture and a frameless batch capture; and each holds what its
    program did."""
    w = ARGS.work
    subprocess.run([ARGS.frame_states, w], check=True, timeout=120)
    states = os.path.join(w, "states.strobe")
    got, lst = truth_answers(states)
    truth_agree(states, got)
    check([(f["number"], f["state"]) for f in lst] == [(1, "completed"), (2, "dropped"), (3, "completed"),
          (4, "presented"), (5, "superseded"), (6, "handed off"), (7, "unfinished")], f"states {lst}")
    check([f["spans"] for f in lst] == [2, 2, 4, 4, 4, 2, 1], f"own spans {[f['spans'] for f in lst]}")
    pops = [f["population"] for f in lst]
    check(pops == ["cold", None, "warm", "scroll", "scroll", "fling", None], f"populations {pops}")
    text, _ = run("info", "--frames", states)
    check(re.search(r"^  main +4 +presented .* scroll$", text, re.M), f"info --frames prints populations: {text}")
    # --thread keeps whole operations that ended on the thread, never half of one (frame 3 moved to the worker).
    for thread, want in (("main", [(1, "completed"), (2, "dropped"), (4, "presented"), (5, "superseded"),
                                   (6, "handed off")]), ("worker", [(3, "completed")])):
        j, _ = run_json("report", states, "--thread", thread, "--top", "100")
        got_f = sorted((x["frame"], x["state"]) for x in j["frames"]["slowest"])
        check(got_f == want and j["frames"]["passes"] == len(want), f"--thread {thread}: {got_f} {j['frames']}")
    check(got["report"]["rates"] and list(got["info"]["states"]["main"].items()) and
          sum(1 for f in lst if f["counted"]) == 4, "completed, presented and handed-off passes count")
    gtk = os.path.join(w, "gtk.strobe")
    got, lst = truth_answers(gtk)
    truth_agree(gtk, got)
    check(set(got["report"]["rates"]) == {"main", "w1"}, f"two windows, two rates {got['report']['rates']}")
    parents = {k[1] for k in got["report"]["stages"] if k[0] == "row_bind"}
    check(parents == {"update", "model_update"}, f"row_bind under where it ran, never its declared layout: {parents}")
    inputs = [f for f in lst if f["kind"] == "input"]
    check(len(inputs) == 6 and all(f["spans"] == 1 for f in inputs), "an input inside a pass owns its click")
    check(all(f["spans"] == 11 for f in lst if f["kind"] == "pass" and f["window"] == "main"), "main passes own 11")
    # strobe tree counts a frame's own spans too: pass 12, open while 13-15 laid out the same elements, owns one
    # span of each (by time interval it would be credited with four).
    tree = os.path.join(w, "tree.strobe")
    got, lst = truth_answers(tree)
    truth_agree(tree, got)
    t, _ = run_json("tree", tree, "--frame", "12")
    counts = [n["spans"]["count"] for n in t["nodes"]]
    own = {f["number"]: f["spans"] for f in lst}
    check(counts == [1, 1, 1, 1] and sum(counts) == own[12], f"tree frame 12: {counts}, its own spans {own[12]}")
    tp = os.path.join(w, "tp")
    os.makedirs(tp)
    subprocess.run([ARGS.two_processes, tp], check=True, timeout=120)
    merged = os.path.join(tp, "all.strobe")
    run("merge", os.path.join(tp, "a.strobe"), os.path.join(tp, "b.strobe"), "-o", merged)
    got, lst = truth_answers(merged)
    truth_agree(merged, got)
    check([(f["number"], f["state"], f["process"], f["end_process"], f["spans"]) for f in lst] ==
          [(7, "presented", "screen", "sender", 4), (8, "abandoned", "screen", "screen", 1)], f"merged {lst}")
    check([f["population"] for f in lst] == ["scroll", "fling"], f"the merge carries populations {lst}")
    check(set(got["report"]["stages"]) == {("render", None, "screen"), ("present", None, "sender")},
          f"each stage once, in the process it ran in {got['report']['stages']}")
    for path in (capture("frameless", "--no-marks", "--frames", "6"), capture("marks", "--frames", "6")):
        got, lst = truth_answers(path)
        truth_agree(path, got)
        check(lst, f"{path}: frames")
    check(got["report"]["rates"], "the marks capture has a rate")


def session_vs_capture(cap, rep):
    """A run's session report against its capture: per window the passes that count and both rates, and each
    sample's state against its frame's (docs/sessions.md §Frame rate: the rules are one copy, frame_rules.h)."""
    info, _ = run_json("info", "--frames", cap)
    with open(rep) as fh:
        report = json.load(fh)
    series = {s["label"].split("/")[-1]: s for s in info["frames"]["series"]}
    windows = {x["window"]: x for x in report["frame_rate"]["by_window"]}
    check(set(series) - {"devtools"} == set(windows), f"{cap}: windows {sorted(series)}, the session's {sorted(windows)}")
    all_kept = report["counts"]["returned"] == report["counts"]["completed"]
    for name, x in windows.items():
        s = series[name]
        check(x["passes"] == s["counted"], f"{cap}: window {name}: the session counts {x['passes']} passes, the capture "
              f"{s['counted']} of {s['frames']} ({s['by_state']})")
        check(abs(x["passes_per_second"] - s["fps_first_to_last"]) <= 2e-3,
              f"{cap}: window {name}: first to last {x['passes_per_second']} / {s['fps_first_to_last']}")
        if all_kept:
            check(abs(x["steady_passes_per_second"] - s["fps_steady_median_interval"]) <= 2e-3,
                  f"{cap}: window {name}: steady {x['steady_passes_per_second']} / {s['fps_steady_median_interval']}")
    frames = {(f["window"], f["number"]): f["state"] for f in info["frames"]["list"] if f["kind"] == "pass"}
    samples = [s for s in report["samples"] if s["kind"] == "pass"]
    wrong = [(s["window"], s["frame_id"], s["frame_state"], frames.get((s["window"], s["frame_id"])))
             for s in samples if frames.get((s["window"], s["frame_id"])) != s["frame_state"]]
    check(samples and not wrong, f"{cap}: samples whose state is not their frame's: {wrong[:5]}")
    return info, report


def case_frames_truth_demo():
    """The demo's run (tests/demo), its captures and its session reports tell one story (docs/frames.md): every
    consumer of the truth test agrees on the demo's capture, the sender's and their merge; the merge holds each
    frame handed from screen to sender once; strobe tree credits each element of pass 12 with its own span only;
    and each process's session report agrees with its capture on the
    passes that count per window, both rates and each sample's state, idle passes (the w1 window's) left out of
    both."""
    w = ARGS.work
    env = dict(os.environ, VK_ICD_FILENAMES="/nonexistent/strobe-no-driver.json")  # the CPU path: quick, the same frames
    subprocess.run([ARGS.demo, "--frames", "16", "--headless", "--out", w], check=True, timeout=240, env=env,
                   stdout=subprocess.DEVNULL)
    demo, sender, merged = (os.path.join(w, n) for n in ("demo.strobe", "sender.strobe", "all.strobe"))
    run("merge", demo, sender, "-o", merged)
    lists = {}
    for path in (demo, sender, merged):
        got, lists[path] = truth_answers(path)
        truth_agree(path, got)
    main = [f for f in lists[demo] if f["kind"] == "pass" and f["window"] == "main"]
    both = [f for f in lists[merged] if f["kind"] == "pass" and f["window"] == "main"]
    check(len(main) == 16 and all(f["state"] == "handed off" for f in main), f"the demo hands its 16 main passes off")
    check(len(both) == 16 and all(f["process"] == "screen" and f["end_process"] == "sender" for f in both) and
          {f["state"] for f in both} <= {"presented", "superseded"}, f"the merge: each once, screen to sender {both[:2]}")
    # strobe tree: the UI-tree snapshot's pass (12) lays each element out once, so each node is credited with the one
    # span its pass owns, never with the next passes' that ran while 12 waited for its hand-off; none past its own.
    t, _ = run_json("tree", demo, "--frame", "12")
    counts = [n["spans"]["count"] for n in t["nodes"] if n.get("spans") and n["spans"]["count"]]
    own = [f["spans"] for f in main if f["number"] == 12]
    check(t["snapshot"]["frame"] == 12 and counts and set(counts) == {1} and own and sum(counts) <= own[0],
          f"tree --frame 12: node span counts {sorted(set(counts))}, {sum(counts)} in all, pass 12 owns {own}")
    info, report = session_vs_capture(demo, os.path.join(w, "demo-report.json"))
    idle = [f for f in lists[demo] if f["kind"] == "pass" and f["idle"]]
    check(report["counts"]["idle"] > 0 and len(idle) == report["counts"]["idle"] and
          all(f["window"] == "w1" and f["state"] == "completed" and not f["counted"] for f in idle),
          f"the capture flags the {report['counts']['idle']} idle passes the session left out ({len(idle)})")
    session_vs_capture(sender, os.path.join(w, "sender-report.json"))


CASES = {k[5:]: v for k, v in globals().items() if k.startswith("case_")}


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--strobe", required=True)
    ap.add_argument("--make-capture", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--schema")
    ap.add_argument("--disabled-app")
    ap.add_argument("--interp")
    ap.add_argument("--protoc", default="protoc")
    ap.add_argument("--zstd", default="zstd")
    ap.add_argument("--two-processes")
    ap.add_argument("--clock-hosts")
    ap.add_argument("--frame-states")
    ap.add_argument("--demo")
    ap.add_argument("case", choices=sorted(CASES))
    ARGS = ap.parse_args()
    shutil.rmtree(ARGS.work, ignore_errors=True)
    os.makedirs(ARGS.work)
    try:
        CASES[ARGS.case]()
    except (Fail, subprocess.CalledProcessError) as e:
        print(f"cli_{ARGS.case}: FAILED: {e}", file=sys.stderr)
        print("0 passed, 1 failed")
        return 1
    print(f"cli_{ARGS.case}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
