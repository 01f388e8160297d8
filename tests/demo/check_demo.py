#!/usr/bin/env python3
"""check_demo.py — what the demo's headless run must show (issue: the demo
application). Given the --out directory of `strobe-demo --frames 120
--headless`, checks that the session report names every stage, window and
operation kind the demo instruments, keeps devtools out, carries the shape
cache counters and the worker's application scopes, and that the spike
recorder caught the deliberate slow frame. Schema validity and capture
read-back are checked by the CTest script around it.
"""
import json
import os
import sys


def fail(msg):
    print("check_demo: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    out = sys.argv[1]
    with open(os.path.join(out, "demo-report.json")) as f:
        report = json.load(f)
    if report["version"] != 1 or not report["final"] or report["status"] != "complete":
        fail("expected a final, complete version-1 report, got %s/%s" % (report["final"], report["status"]))

    samples = report["samples"]
    kinds = {s["kind"] for s in samples}
    for kind in ("pass", "input", "rebuild"):
        if kind not in kinds:
            fail("no %s sample" % kind)
    windows = {s["window"] for s in samples}
    if windows != {"main", "w1"}:
        fail("windows should be main and w1 (devtools excluded by default), got %s" % sorted(windows))
    if report["counts"]["devtools_excluded"] == 0:
        fail("the devtools window's passes should be counted as excluded")

    stages = {st["name"]: st for st in report["stage_summary"]}
    expected = {"update": None, "layout_update": None, "layout_compute": "layout_update",
                "component_after_layout": "layout_update", "text_shaping": None, "raster": None,
                "encode": None, "present": None, "input_dispatch": None, "rebuild_tree": None}
    for name, parent in expected.items():
        if name not in stages:
            fail("stage %s missing from stage_summary" % name)
        if stages[name]["nested_in"] != parent:
            fail("stage %s should be nested in %s, got %s" % (name, parent, stages[name]["nested_in"]))
        if stages[name]["n"] < 1:
            fail("stage %s has no n" % name)

    handed = [s for s in samples if s["handed_off"]]
    if not handed or not all(any(st["name"] == "present" for st in s["stages"]) for s in handed if s["committed"]):
        fail("main passes should be handed off to the sender and presented there")
    counters = {c["name"] for s in samples for c in s["counters"]}
    for name in ("shape_cache_hit", "shape_cache_miss", "shape_cache_eviction"):
        if name not in counters:
            fail("counter %s missing" % name)
    stall = max(st["max_ms"] for st in report["stage_summary"] if st["name"] == "layout_compute")
    if stall < 200:
        fail("the deliberate slow frame (250 ms in layout_compute) is missing: max %.1f ms" % stall)

    app = report["application_scopes"]
    labels = {(s["label"], s["lane"], s["parent_id"] is None) for s in app["scopes"]}
    if ("local_save_write", "worker", True) not in labels or ("container_encode", "worker", False) not in labels:
        fail("application scopes local_save_write > container_encode on the worker lane missing: %s" % labels)
    if not report["memory"]["gauges"]:
        fail("no memory gauge")

    spikes = os.listdir(os.path.join(out, "spikes"))
    if not spikes:
        fail("the flight recorder wrote no spike capture for the slow frame")
    print("check_demo: report has every stage, window, kind, counter and scope; %d spike file(s)" % len(spikes))


if __name__ == "__main__":
    main()
