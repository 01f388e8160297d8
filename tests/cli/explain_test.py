#!/usr/bin/env python3
"""explain_test.py — `strobe explain` (docs/explain.md) on a real capture recorded with the sampler and context
switches on (explain_app.c): frame 20's layout stage sleeps (blocked), frame 30's paint stage spins on CPU; the
explanation must name the right stage and the right kind for each, name the spinning function, say unknown (never
zero) where the capture has no switches, and refuse what it cannot explain.

usage: explain_test.py --strobe BIN --app BIN --make-capture BIN --work DIR
"""
import argparse
import json
import os
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
    ops = os.path.join(ARGS.work, "ops.strobe")
    subprocess.run([ARGS.make_capture, ops, "--ops"], check=True, timeout=120)
    oj = explain_json(ops, "--slowest", "2")
    check(len(oj["frames"]) == 2 and oj["frames"][0]["parts"], f"a capture of operations only is explained {oj}")
    run("explain", path, "--frame", "999", expect=2)
    run("explain", path, "--frame", "1", "--slowest", "2", expect=2)
    run("explain", os.path.join(ARGS.work, "missing.strobe"), expect=1)


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--strobe", required=True)
    ap.add_argument("--app", required=True)
    ap.add_argument("--make-capture", required=True)
    ap.add_argument("--work", required=True)
    ARGS = ap.parse_args()
    cli_test.ARGS = ARGS  # cli_test.run reads ARGS.strobe
    shutil.rmtree(ARGS.work, ignore_errors=True)
    os.makedirs(ARGS.work)
    try:
        case_explain()
    except Fail as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
