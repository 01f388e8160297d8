#!/usr/bin/env python3
"""locks_test.py — lock contention end to end (docs/locks.md): locks_app.c records a capture with known lock
events (14 acquisitions of "assets", one of them after a wait while thread loader held it in its scope
load_assets; "cache" annotated by hand: 4 acquisitions, a wait no hold covers, one acquisition never released);
`strobe report` must give exactly those counts and that holder, in JSON and in text, carry them through
`strobe merge`, and refuse standard input with a reason rather than figures; `strobe query`'s lock_events table
(when the CLI has SQLite: CI requires it) must count the same events.

usage: locks_test.py --strobe BIN --app BIN --work DIR [--query]
"""
import argparse
import json
import os
import subprocess
import sys


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def run(*argv, stdin=None):
    p = subprocess.run([ARGS.strobe, *argv], stdin=stdin, capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"strobe {' '.join(argv)}: exit {p.returncode}\n{p.stderr}")
    return p.stdout


def locks_of(path):
    rows = json.loads(run("report", "--json", "--quiet", path))["locks"]
    check(rows["available"], f"lock figures available: {rows}")
    return {r["name"]: r for r in rows["rows"]}, rows


def expect(path, what):
    by, whole = locks_of(path)
    check(sorted(by) == ["assets", "cache"], f"{what}: two locks: {sorted(by)}")
    a, c = by["assets"], by["cache"]
    check((a["acquisitions"], a["waits"], a["holds"], a["unmatched"]) == (14, 1, 14, 0), f"{what}: assets {a}")
    check(len(a["holders"]) == 1, f"{what}: one holder of assets while ui waited: {a['holders']}")
    h = a["holders"][0]
    check((h["thread_name"], h["scope"], h["waits"]) == ("loader", "load_assets", 1), f"{what}: the holder {h}")
    check(0 < h["wait_ns"] == a["wait_ns"] and a["wait_max_ns"] == a["wait_ns"], f"{what}: the one wait {a}")
    check((c["acquisitions"], c["waits"], c["holds"], c["unmatched"]) == (4, 1, 3, 1), f"{what}: cache {c}")
    check(c["holders"] == [] and whole["waits_no_holder"] == 1 and whole["waits_unmatched"] == 0 and whole["waits_holders_cut"] == 0,
          f"{what}: cache's wait has no holder: {c} {whole}")
    check(list(by) == [r["name"] for r in whole["rows"]] and whole["rows"][0]["wait_ns"] >= whole["rows"][1]["wait_ns"],
          f"{what}: by total wait {whole['rows']}")


def main():
    os.makedirs(ARGS.work, exist_ok=True)
    path = os.path.join(ARGS.work, "locks.strobe")
    p = subprocess.run([ARGS.app, path], timeout=120)
    check(p.returncode == 0, f"locks_app exit {p.returncode}")
    expect(path, "capture")
    text = run("report", "--quiet", path)
    line = [l for l in text.splitlines() if l.strip().startswith("assets")]
    check(len(line) == 1 and "loader in load_assets (1 waits" in line[0] and " 14 " in line[0],
          f"the text row names the holder:\n{text}")
    check("1 lock events without their pair" in text and "1 waits began while no recorded hold covered them" in text,
          f"the text says what it could not pair:\n{text}")
    merged = os.path.join(ARGS.work, "merged.strobe")
    other = os.path.join(ARGS.work, "other.strobe")
    p = subprocess.run([ARGS.app, other], timeout=120)
    check(p.returncode == 0, f"locks_app (second run) exit {p.returncode}")
    run("merge", "--quiet", path, other, "-o", merged)
    by, _ = locks_of(merged)
    check(by["assets"]["acquisitions"] == 28 and by["assets"]["waits"] == 2, f"merged: both inputs' {by['assets']}")
    if ARGS.query:
        rows = run("query", "--quiet", "--csv", path,
                   "SELECT name, event, count(*) FROM lock_events GROUP BY name, event ORDER BY name, event")
        want = "name,event,count(*)\nassets,acquired,14\nassets,released,14\nassets,wait,1\n" \
               "cache,acquired,4\ncache,released,3\ncache,wait,1\n"
        check(rows.replace("\r", "") == want, f"strobe query's lock_events:\n{rows}")
    with open(path, "rb") as f:
        j = json.loads(run("report", "--json", "--quiet", "-", stdin=f))["locks"]
    check(not j["available"] and "standard input" in j["why"], f"standard input: no figures, a reason: {j}")
    print("ok")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--strobe", required=True)
    ap.add_argument("--app", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--query", action="store_true", help="the CLI has strobe query: check its lock_events table")
    ARGS = ap.parse_args()
    main()
