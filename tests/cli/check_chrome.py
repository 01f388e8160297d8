#!/usr/bin/env python3
"""check_chrome.py — validates a `strobe export --format chrome` file against
the documented fields of the Trace Event Format (JSON object form):

  - the top level is an object with a "traceEvents" array, "displayTimeUnit"
    "ns" and an "otherData" object;
  - every event has ph, ts, pid, tid and name; ph is one Strobe writes
    (X, B, E, M, C, i); ts is a number;
  - X (complete) events have a numeric dur >= 0;
  - M events are process_name / thread_name / thread_sort_index with args,
    and every tid that has X/B/E/C/i events has a thread_name;
  - C (counter) events carry numeric args; i (instant) events have s in g/p/t;
  - per thread, B/E events appear in non-decreasing ts order and every E
    closes a B of the same name.

usage: check_chrome.py FILE [--expect-names a,b,...] [--expect-unfinished N]
Exit 0 when valid; otherwise prints every problem found and exits 1.
"""
import argparse
import json
import numbers
import sys


def check(doc, expect_names=None, expect_unfinished=None):
    errors = []
    if not isinstance(doc, dict):
        return ["top level is not an object"]
    events = doc.get("traceEvents")
    if not isinstance(events, list) or not events:
        return ["traceEvents is missing, not an array, or empty"]
    if doc.get("displayTimeUnit") != "ns":
        errors.append("displayTimeUnit is not 'ns'")
    if not isinstance(doc.get("otherData"), dict):
        errors.append("otherData is missing or not an object")

    named_tids = set()
    used_tids = set()
    last_be_ts = {}
    be_stack = {}
    names = set()
    unfinished = 0
    for i, e in enumerate(events):
        where = f"event {i} ({json.dumps(e)[:120]})"
        for key in ("ph", "ts", "pid", "tid", "name"):
            if key not in e:
                errors.append(f"{where}: missing '{key}'")
        ph = e.get("ph")
        if ph not in ("X", "B", "E", "M", "C", "i"):
            errors.append(f"{where}: unexpected ph {ph!r}")
            continue
        if not isinstance(e.get("ts"), numbers.Number):
            errors.append(f"{where}: ts is not a number")
            continue
        tid = (e.get("pid"), e.get("tid"))
        if ph == "M":
            if e.get("name") not in ("process_name", "thread_name", "thread_sort_index"):
                errors.append(f"{where}: unknown metadata name")
            if not isinstance(e.get("args"), dict):
                errors.append(f"{where}: metadata without args")
            elif e["name"] == "thread_name":
                if not isinstance(e["args"].get("name"), str) or not e["args"]["name"]:
                    errors.append(f"{where}: thread_name without args.name")
                named_tids.add(tid)
            continue
        used_tids.add(tid)
        if ph == "X":
            dur = e.get("dur")
            if not isinstance(dur, numbers.Number) or dur < 0:
                errors.append(f"{where}: X without a dur >= 0")
            names.add(e.get("name"))
        elif ph in ("B", "E"):
            if e["ts"] < last_be_ts.get(tid, float("-inf")):
                errors.append(f"{where}: B/E ts goes backwards on thread {tid}")
            last_be_ts[tid] = e["ts"]
            stack = be_stack.setdefault(tid, [])
            if ph == "B":
                stack.append(e.get("name"))
                names.add(e.get("name"))
                if (e.get("args") or {}).get("strobe", "").startswith("unfinished"):
                    unfinished += 1
            elif not stack or stack.pop() != e.get("name"):
                errors.append(f"{where}: E does not close the innermost open B")
        elif ph == "C":
            args = e.get("args")
            if not isinstance(args, dict) or not args or not all(isinstance(v, numbers.Number) for v in args.values()):
                errors.append(f"{where}: C without numeric args")
        elif ph == "i":
            if e.get("s") not in ("g", "p", "t"):
                errors.append(f"{where}: instant event scope {e.get('s')!r} is not g/p/t")
    for tid in sorted(used_tids - named_tids, key=str):
        errors.append(f"thread {tid} has events but no thread_name metadata")
    if expect_names:
        for n in expect_names:
            if n not in names:
                errors.append(f"expected a scope named {n!r}; found {sorted(map(str, names))}")
    if expect_unfinished is not None and unfinished != expect_unfinished:
        errors.append(f"expected {expect_unfinished} unfinished B events, found {unfinished}")
    return errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--expect-names", default="")
    ap.add_argument("--expect-unfinished", type=int)
    a = ap.parse_args()
    with open(a.file, encoding="utf-8") as f:
        doc = json.load(f)
    errors = check(doc, [n for n in a.expect_names.split(",") if n], a.expect_unfinished)
    for e in errors:
        print(f"check_chrome: {a.file}: {e}", file=sys.stderr)
    if not errors:
        print(f"check_chrome: {a.file}: {len(doc['traceEvents'])} events valid")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
