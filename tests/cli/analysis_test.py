#!/usr/bin/env python3
"""analysis_test.py — the analyses of captures. Case explain: `strobe explain` (docs/explain.md) on a real
capture recorded with the sampler and context switches on (explain_app.c): frame 20's layout stage sleeps
(blocked), frame 30's paint stage spins on CPU, frame 25's GPU work waits 80 ms in its queue; the explanation
must name the right stage and the right kind for each, name the spinning function, say unknown (never zero) where
the capture has no switches, and refuse what it cannot explain. Case query, `strobe query`
(docs/query.md): every one of the ten worked questions of docs/query.md, read from that file, runs on the capture
its "Capture:" line names and gives the answer those captures hold (deterministic, but for explain_app's, whose
deliberate slow frames are checked); CSV and JSON output; the errors.

usage: analysis_test.py --strobe BIN --app BIN --make-capture BIN --two-processes BIN --docs DIR --work DIR
                        explain|query
"""
import argparse
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys

import cli_test
from cli_test import Fail, check, run

ARGS = None


def explain_json(*argv):
    out, _ = run("explain", *argv, "--json")
    return json.loads(out)


def worst(frame):
    check(frame["worst"] is not None, f"frame {frame['number']}: no part exceeded its norm: {frame}")
    return frame["parts"][frame["worst"]]


def case_explain():
    path = os.path.join(ARGS.work, "app.strobe")
    subprocess.run([ARGS.app, path], check=True, timeout=120)
    j = explain_json(path, "--slowest", "3")
    check(j["coverage"]["switches"] and j["coverage"]["samples"], f"the capture has switches and samples {j}")
    walls = [f["wall"]["ns"] for f in j["frames"]]
    check(len(walls) == 3 and walls == sorted(walls, reverse=True), f"the 3 slowest, slowest first: {walls}")
    # A loaded machine may preempt any stage, so the checks are on the deliberate parts, not on the others.
    by = {n: explain_json(path, "--frame", str(n))["frames"][0] for n in (20, 30)}
    blocked, spin = worst(by[20]), worst(by[30])
    check(blocked["name"] == "layout" and blocked["exceeded"] and "blocked" in blocked["causes"] and
          "on CPU" not in blocked["causes"], f"frame 20: layout, blocked: {blocked}")
    check(blocked["blocked"]["ns"] >= 90e6 and blocked["blocked"]["p50_ns"] < 10e6, f"frame 20's split {blocked}")
    check(blocked["time"]["n"] == 40 and blocked["time"]["p50_ns"] < 10e6, f"layout's norm {blocked['time']}")
    check(spin["name"] == "paint" and spin["exceeded"] and "on CPU" in spin["causes"] and
          "blocked" not in spin["causes"], f"frame 30: paint, on CPU: {spin}")
    check(spin["on_cpu"]["ns"] >= 90e6, f"frame 30's split {spin}")
    check(spin["functions"] and "spin_paint" in spin["functions"][0]["name"], f"spin_paint on top {spin['functions']}")
    gpu = explain_json(path, "--frame", "25")["frames"][0]
    bl = worst(gpu)
    check(bl["kind"] == "GPU backlog" and bl["time"]["ns"] >= 79e6 and bl["time"]["p50_ns"] < 1e6 and
          bl["time"]["n"] == 40, f"frame 25: the GPU's queue backlog {bl}")
    polling = [p for p in gpu["parts"] if p["kind"] == "GPU polling"]
    check(len(polling) == 1 and not polling[0]["exceeded"] and polling[0]["time"]["ns"] < 1e6, f"polling {polling}")
    outside = [p for p in by[20]["parts"] if p["kind"] == "outside stages"]
    check(len(outside) == 1 and outside[0]["on_cpu"]["ns"] is not None and outside[0]["on_cpu"]["n"] >= 20 and
          outside[0]["blocked"]["ns"] < 10e6, f"frame 20's time outside stages, split, not blocked {outside}")
    text, _ = run("explain", path, "--frame", "20")
    check(text.startswith("pass 20 (main,") and "layout" in text and "blocked" in text and "rest as usual" in text,
          f"the text names the stage and the kind:\n{text}")
    usual = explain_json(path, "--frame", "5")["frames"][0]
    check(all(p["time"]["n"] == 40 for p in usual["parts"] if p["kind"] == "stage"), f"40 peers {usual}")
    # No context switches: the split is unknown, never zero.
    plain = os.path.join(ARGS.work, "plain.strobe")
    subprocess.run([ARGS.app, plain, "--no-switches"], check=True, timeout=120)
    pj = explain_json(plain, "--frame", "20")
    check(not pj["coverage"]["switches"] and pj["coverage"]["stage_runs"] >= 120, f"runs, no switches {pj['coverage']}")
    stages = [p for f in pj["frames"] for p in f["parts"] if p["kind"] == "stage"]
    check(len(stages) == 3 and all(p["on_cpu"]["ns"] is None and p["blocked"]["ns"] is None for p in stages),
          f"without switches every split is unknown: {stages}")
    check(worst(pj["frames"][0])["name"] == "layout" and worst(pj["frames"][0])["cause"] == "unknown",
          f"the slow stage is still named, its kind unknown {pj}")
    marks = os.path.join(ARGS.work, "marks.strobe")
    subprocess.run([ARGS.make_capture, marks], check=True, timeout=120)
    mf = explain_json(marks)["frames"][0]
    check(mf["kind"] == "frame" and [p["kind"] for p in mf["parts"]] == ["outside stages"] and
          mf["parts"][0]["time"]["ns"] == mf["wall"]["ns"] and mf["parts"][0]["on_cpu"]["ns"] is None,
          f"a mark interval has no stages: all its time is outside them, its split unknown without switches {mf}")
    # A frame handed between two real processes (merged): its hand-off gap is the frame model's, as strobe query
    # gives it, and its parts are its two processes' stages, the gap and the time outside stages.
    tp = os.path.join(ARGS.work, "tp")
    os.makedirs(tp)
    subprocess.run([ARGS.two_processes, tp], check=True, timeout=120)
    merged = os.path.join(tp, "all.strobe")
    run("merge", os.path.join(tp, "a.strobe"), os.path.join(tp, "b.strobe"), "-o", merged)
    hf = explain_json(merged, "--frame", "7")["frames"][0]
    gap = [p for p in hf["parts"] if p["kind"] == "hand-off gap"]
    out, _ = run("query", merged, "SELECT resumed_ns - handed_off_ns AS gap FROM frames WHERE number = 7", "--csv")
    check(len(gap) == 1 and abs(gap[0]["time"]["ns"] - float(out.split()[1])) < 2, f"frame 7's hand-off gap {gap} {out}")
    check(sorted(p["name"] for p in hf["parts"] if p["kind"] == "stage") == ["present", "render"], f"both stages {hf}")
    ops = os.path.join(ARGS.work, "ops.strobe")
    subprocess.run([ARGS.make_capture, ops, "--ops"], check=True, timeout=120)
    oj = explain_json(ops, "--slowest", "2")
    check(len(oj["frames"]) == 2 and oj["frames"][0]["parts"], f"a capture of operations only is explained {oj}")
    run("explain", path, "--frame", "999", expect=2)
    run("explain", path, "--frame", "1", "--slowest", "2", expect=2)
    run("explain", os.path.join(ARGS.work, "missing.strobe"), expect=1)
    cut = os.path.join(ARGS.work, "cut.strobe")
    data = open(path, "rb").read()
    open(cut, "wb").write(data[:len(data) // 2])
    out, err = run("explain", cut, expect=1)
    check(out == "" and "cut.strobe" in err, f"a damaged capture is refused, said so: {out!r} {err!r}")


def questions():
    doc = open(os.path.join(ARGS.docs, "query.md")).read()
    found = re.findall(r"### (\d+)\. [^\n]*\n.*?Capture: ([^\n]*)\n\n```sql\n(.*?)```", doc, re.S)
    check(len(found) == 10, f"docs/query.md has ten worked questions, each with its capture: {len(found)}")
    return [(int(n), cap.split(), sql) for n, cap, sql in found]


def captures():
    w = ARGS.work
    paths = {name: os.path.join(w, name + ".strobe") for name in ("app", "ops", "ops2", "gpu", "base", "interned")}
    subprocess.run([ARGS.app, paths["app"]], check=True, timeout=120)
    for name, opts in (("ops", ["--ops"]), ("ops2", ["--ops", "--ns-per-tick", "2"]), ("gpu", ["--gpu"]),
                       ("base", []), ("interned", ["--interned"])):
        subprocess.run([ARGS.make_capture, paths[name], *opts], check=True, timeout=120)
    return paths


def ask(paths, cap, sql):
    argv = ["query", paths[cap[0]]]
    for a in cap[1:]:
        if a != "--attach":
            name, other = a.split("=")
            argv += ["--attach", f"{name}={paths[other]}"]
    out, _ = run(*argv, sql, "--json")
    return json.loads(out)["rows"]


# What each question's answer must be, on the captures docs/query.md names.
def check_answer(n, rows):
    names = lambda: [r["name"] for r in rows]
    if n == 1:
        check({r["number"] for r in rows[:2]} == {20, 30} and len(rows) == 3 and rows[1]["ms"] >= 100, f"Q1 {rows}")
    elif n == 2:
        check(sorted(names()) == ["layout", "paint", "update"] and all(r["n"] == 40 for r in rows) and
              all(r["p50_ns"] <= r["p95_ns"] for r in rows), f"Q2 {rows}")
    elif n == 3:
        check(sorted(names()) == ["layout", "paint"] and all(r["ratio"] == 2 for r in rows) and
              rows[0]["after_ns"] == 2 * rows[0]["before_ns"], f"Q3: every stage doubled with the tick {rows}")
    elif n == 4:
        check(rows and "spin_paint" in rows[0]["function"] and rows[0]["samples"] >= 50, f"Q4 {rows}")
    elif n == 5:  # make_capture --gpu: 6000 ns of GPU, 500 ns of CPU before cpu_end, backlog 2000 + 100 (k % 10)
        check(len(rows) == 5 and all(r["gpu_ns"] == 6000 and r["cpu_ns"] == 500 for r in rows), f"Q5 {rows}")
    elif n == 6:
        # layout's 100 ms sleep and paint's 100 ms spin come first in either order (which overshoots more is
        # the scheduler's), each at least 100 ms of self time; update's short spins last.
        check(sorted(names()) == ["layout", "paint", "update"] and all(r["n"] == 40 for r in rows) and
              sorted(names()[:2]) == ["layout", "paint"] and all(r["self_ms"] >= 100 for r in rows[:2]),
              f"Q6 {rows}")
    elif n == 7:
        check(any(r["number"] == 20 and r["blocked"] >= 1 for r in rows), f"Q7: frame 20 blocked {rows}")
    elif n == 8:
        check(len(rows) == 1 and rows[0]["frames"] == 40 and rows[0]["over_budget"] >= 2, f"Q8 {rows}")
    elif n == 9:  # make_capture: draw_calls += k % 5 and += 1 in frame k's render
        check(len(rows) == 3 and rows[0]["draw_calls"] >= rows[-1]["draw_calls"] > 0, f"Q9 {rows}")
    elif n == 10:
        check(rows == [{"name": "eval sum_rows(x, y)", "kind": "scope", "spans": 150}], f"Q10 {rows}")


def case_query():
    paths = captures()
    for n, cap, sql in questions():
        check_answer(n, ask(paths, cap, sql))
    app = paths["app"]
    # Each event's frame is the frame model's owner: inside that frame's interval (marks), on its thread (passes).
    rows = ask(paths, ["base"], "SELECT count(c.frame) AS owned, sum(c.time_ns NOT BETWEEN f.begin_ns AND f.end_ns) "
               "AS outside FROM counters c LEFT JOIN frames f ON f.id = c.frame")
    check(rows == [{"owned": 98, "outside": 0}], f"counters in the frames holding them {rows}")
    rows = ask(paths, ["app"], "SELECT count(*) AS n, sum(f.number = 30) AS in30 FROM spans s JOIN frames f ON "
               "f.id = s.frame WHERE s.name = 'paint' AND s.dur_ns > 50e6")
    check(rows == [{"n": 1, "in30": 1}], f"frame 30's paint span is frame 30's {rows}")
    out, _ = run("query", app, "SELECT name, count(*) AS n FROM spans GROUP BY name ORDER BY name", "--csv")
    check(list(csv.reader(io.StringIO(out))) == [["name", "n"], ["layout", "40"], ["paint", "40"], ["update", "40"]],
          f"CSV with a header:\n{out}")
    out, _ = run("query", app, "SELECT count(*) FROM frames; SELECT count(*) FROM switches WHERE out = 1")
    check(out.startswith("count(*)\n40\ncount(*)\n"), f"two statements, two results:\n{out}")
    _, err = run("query", app, "SELECT * FROM nope", expect=2)
    check("no such table" in err, err)
    run("query", os.path.join(ARGS.work, "missing.strobe"), "SELECT 1", expect=1)
    cut = os.path.join(ARGS.work, "cut.strobe")
    data = open(app, "rb").read()
    open(cut, "wb").write(data[:len(data) // 2])
    out, err = run("query", cut, "SELECT count(*) FROM frames", expect=1)
    check(out == "" and "cut.strobe" in err, f"a damaged capture is refused: {out!r} {err!r}")
    run("query", app, "--attach", "main=" + app, "SELECT 1", expect=2)
    run("query", app, "SELECT 1", "--csv", "--json", expect=2)


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    for a in ("--strobe", "--app", "--make-capture", "--two-processes", "--docs", "--work"):
        ap.add_argument(a, required=True)
    ap.add_argument("case", choices=("explain", "query"))
    ARGS = ap.parse_args()
    cli_test.ARGS = ARGS  # cli_test.run reads ARGS.strobe
    shutil.rmtree(ARGS.work, ignore_errors=True)
    os.makedirs(ARGS.work)
    try:
        case_explain() if ARGS.case == "explain" else case_query()
    except Fail as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
