#!/usr/bin/env python3
"""check_demo.py — what the demo's headless run must show (issue: the demo
application). Given the --out directory of `strobe-demo --frames 120
--headless`, checks that the session report names every stage, window and
operation kind the demo instruments, keeps devtools out, carries the shape
cache counters and the worker's application scopes, and that the spike
recorder caught the deliberate slow frame. The frame opens like a
signal-driven toolkit's: wheel input dispatched inside its flush_events phase
ends implicitly when the phase moves on, and nothing interleaves. The
frames-only session beside it kept passes only and counted the rest; the
watchdog's first stalled live read (when it caught one) says which frame
stalled. Main's passes are split by transition (population_summary) and
declare GPU timestamps unavailable (null, not zero) unless they had GPU work,
whose frames the report's `gpu` key holds; the details window's
passes with nothing to do are idle (counted, never samples), the memory gauge
sits in the pass it was sampled in, and the steady-state session was reset
after the warm-up. Schema validity and capture read-back are checked by the CTest
script around it.
"""
import json
import re
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

    # Run info: identifiers in the JSON, free text (the command line) only beside it.
    with open(os.path.join(out, "demo-report-run.txt")) as f:
        beside = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)
    command = beside.get("command_line", "")
    if "strobe-demo" not in command:
        fail("demo-report-run.txt should hold the command line, got %s" % beside)
    inside = report["run"].get("command_line", 0)
    if report["run"].get("fixture") != "datagrid-200x8-scripted" or inside != (None if " " in command else command):
        fail("run should hold the fixture, and the command line only when it has no spaces, got %s" % report["run"])

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
                "encode": None, "input_dispatch": None, "rebuild_tree": None,
                "flush_events": None, "pointer_dispatch": None}
    for name, parent in expected.items():
        if name not in stages:
            fail("stage %s missing from stage_summary" % name)
        if stages[name]["nested_in"] != parent:
            fail("stage %s should be nested in %s, got %s" % (name, parent, stages[name]["nested_in"]))
        if stages[name]["n"] < 1:
            fail("stage %s has no n" % name)

    # Edits are stages named at run time after their column: the report withholds the names.
    interned = [st for st in report["stage_summary"] if re.match(r"^interned_[0-9]+$", st["name"])]
    if not interned or any(st["nested_in"] != "input_dispatch" for st in interned):
        fail("the edit stages (named at run time) should appear as interned_<id> inside input_dispatch: %s"
             % sorted(stages))
    if report["interned_names"]["included"] or report["interned_names"]["withheld"] != len(interned):
        fail("interned_names should count the %d withheld edit stages: %s" % (len(interned), report["interned_names"]))
    if any(name.startswith("edit_") for name in stages):
        fail("a run-time name reached the session report: %s" % sorted(stages))
    # The capture keeps them, flagged, under the names the demo made.
    with open(os.path.join(out, "report.json")) as f:
        capture_sites = {s["name"]: s for s in json.load(f)["sites"]}
    edits = [n for n, s in capture_sites.items() if n.startswith("edit_") and s["interned"]]
    if len(edits) < len(interned):  # the report keeps the newest samples only; the capture has every edit
        fail("the capture should hold an interned edit_<column> site per withheld stage: %s" % sorted(capture_sites))

    # Counters and gauges by kind (docs/recording.md §Counters and gauges by kind), from what the demo did.
    with open(os.path.join(out, "report.json")) as f:
        capture = json.load(f)
    kinds = {}
    for c in capture["counters"] + capture["gauges"]:
        if c["kind"] is not None:
            kinds.setdefault(c["name"], {})[c["kind"]] = c
    want_kinds = {"draw_calls": {"clears", "quads", "text"}, "shape_cache": {"hits", "misses", "evictions"},
                  "input_events": {"key", "scroll", "edit"}, "memory": {"surfaces", "png_buffers", "text_caches"},
                  "strobe_memory": {"rings", "rings_grown", "flight_recorder", "interned_names"}}
    for family, want in want_kinds.items():
        if set(kinds.get(family, {})) != want:
            fail("%s should have the kinds %s, got %s" % (family, sorted(want), sorted(kinds.get(family, {}))))
    # Real numbers: one clear per render, and as many shape-cache lookups as the op counters saw.
    dc = kinds["draw_calls"]
    if dc["clears"]["sum"] != dc["clears"]["count"] or dc["quads"]["sum"] <= 0 or dc["text"]["sum"] <= 0:
        fail("draw calls by kind: one clear per render, some quads and text: %s" % dc)
    if kinds["strobe_memory"]["flight_recorder"]["max"] <= 0 or kinds["strobe_memory"]["rings"]["min"] <= 0:
        fail("Strobe's own footprint should hold its rings and the flight recorder: %s" % kinds["strobe_memory"])
    per_frame = capture["kinds"]
    if not per_frame["available"] or per_frame["frames"]["source"] != "pass_operations":
        fail("the capture's kinds should be summarised per pass: %s" % per_frame.get("null_reason"))

    # The session side: draw calls per frame by kind (mean, max per sample), memory by kind in its samples.
    dc_kinds = {c["kind"] for c in report["counter_summary"] if c["name"] == "draw_calls"}
    if dc_kinds != {"clears", "quads", "text"}:
        fail("counter_summary should summarise draw_calls by kind, got %s" % sorted(map(str, dc_kinds)))
    mem_kinds = {g["kind"] for g in report["memory"]["gauges"] if g["name"] == "memory"}
    if mem_kinds != {"surfaces", "text_caches"}:
        fail("memory.gauges should hold memory by kind, got %s" % sorted(map(str, mem_kinds)))

    # Frames span two processes (docs/sessions.md §Across processes): here each
    # main pass ends handed off to "sender"; the sender process's report has
    # the whole frame, screen's stages and its own, each attributed, with the
    # hand-off gap inside its total.
    if report["process"]["name"] != "screen":
        fail("the demo's process should be labelled screen: %s" % report["process"])
    handed = [s for s in samples if s["handed_off_to"] == "sender"]
    if not handed or any(s["committed"] or s["from"] is not None or s["window"] != "main" for s in handed):
        fail("main passes should end here handed off to the sender process (committed false here)")
    if report["cross_process"]["handed_off"] < len(handed):
        fail("cross_process.handed_off should count every frame handed off: %s" % report["cross_process"])
    if any(st["name"] == "present" for s in samples for st in s["stages"]):
        fail("present runs in the sender process: it cannot be in this process's samples")
    with open(os.path.join(out, "sender-report.json")) as f:
        sender = json.load(f)
    if sender["process"]["name"] != "sender" or sender["process"]["pid"] == report["process"]["pid"]:
        fail("the sender's report should come from another process labelled sender: %s" % sender["process"])
    whole = [s for s in sender["samples"] if s["from"] is not None]
    if not whole or any(s["from"]["process"] != "screen" or s["from"]["collector"] != report["process"]["collector"]
                        for s in whole):
        fail("the sender's frames should be resumed from the screen process's collector")
    if sender["cross_process"]["refused"] != 0 or sender["cross_process"]["resumed"] < len(whole):
        fail("the sender should resume every token and refuse none: %s" % sender["cross_process"])
    by_origin = {s["from"]["op"]: s for s in whole}
    joined = [(h, by_origin[h["id"]]) for h in handed if h["id"] in by_origin]
    if not joined:
        fail("no frame is in both reports (the origin's id as the sender's from.op)")
    for h, s in joined:
        if s["frame_id"] != h["frame_id"] or s["kind"] != "pass":
            fail("frame %s is %s in the sender's report" % (h["frame_id"], s["frame_id"]))
        # One frame in both processes: its window and population travel with it (docs/sessions.md §Across processes).
        if s["window"] != h["window"] or s["population"] != h["population"] or h["population"] is None:
            fail("frame %s: window %s / population %s here, %s / %s in the sender's report" %
                 (h["frame_id"], h["window"], h["population"], s["window"], s["population"]))
        procs = {(st["name"], st["process"]) for st in s["stages"]}
        mine = {(st["name"], "screen") for st in h["stages"] if st["available"]}
        if not mine <= procs:
            fail("the sender's frame %s should hold screen's stages %s, has %s" % (h["frame_id"], mine, procs))
        present = [st for st in s["stages"] if st["name"] == "present"]
        if s["committed"] and (len(present) != 1 or present[0]["process"] != "sender"):
            fail("a presented frame should have the sender's present stage: %s" % sorted(procs))
        own = sum(st["total_ms"] for st in s["stages"] if st["process"] == "sender" and st["nested_in"] is None)
        if s["total_ms"] + 0.002 < h["total_ms"] + s["from"]["gap_ms"] + own:
            fail("frame %s: total %.3f ms should include screen's %.3f, the gap %.3f and the sender's %.3f" %
                 (h["frame_id"], s["total_ms"], h["total_ms"], s["from"]["gap_ms"], own))
    counters = {c["name"] for s in samples for c in s["counters"]}
    for name in ("shape_cache_hit", "shape_cache_miss", "shape_cache_eviction"):
        if name not in counters:
            fail("counter %s missing" % name)
    stall = max(st["max_ms"] for st in report["stage_summary"] if st["name"] == "layout_compute")
    if stall < 200:
        fail("the deliberate slow frame (250 ms in layout_compute) is missing: max %.1f ms" % stall)

    pointer = [s for s in samples if s["kind"] == "input" and s["ended_implicitly"]]
    if not pointer or not all(any(st["name"] == "pointer_dispatch" for st in s["stages"]) for s in pointer):
        fail("wheel input dispatched inside flush_events should end implicitly with it")
    if report["counts"]["interleaved"] != 0:
        fail("nothing in the demo should interleave: %d" % report["counts"]["interleaved"])

    with open(os.path.join(out, "demo-frames-report.json")) as f:
        frames = json.load(f)
    if frames["session"]["kinds"] != ["pass"] or any(s["kind"] != "pass" for s in frames["samples"]):
        fail("the frames-only session should keep passes only")
    if frames["counts"]["kind_excluded"] == 0 or frames["counts"]["completed_by_kind"]["input"] != 0:
        fail("the frames-only session should count input and rebuilds as kind_excluded")
    main_rate = [w for w in frames["frame_rate"]["by_window"] if w["window"] == "main"]
    if not main_rate or main_rate[0]["steady_passes_per_second"] is None:
        fail("the frames-only session should give main's steady frame rate")
    stall_read = os.path.join(out, "demo-stall-read.json")
    if os.path.exists(stall_read):  # only when the watchdog caught the slow frame (timing-dependent)
        with open(stall_read) as f:
            read = json.load(f)
        stalled = [u for u in read["unfinished"] if u["state"] == "stalled"]
        if read["final"] or not stalled or read["counts"]["unfinished_stalled"] != len(stalled):
            fail("the watchdog's stalled read should list the stalled frame")

    # Issue 12's rules: idle passes apart, a population split, an unavailable stage, memory per sample.
    if report["counts"]["idle"] == 0:
        fail("the details window's passes with nothing to do should be counted idle")
    if any(s["window"] == "w1" and s["kind"] == "pass" and not s["stages"] for s in samples):
        fail("an idle w1 pass (no stage) was kept as a sample")
    pops = {(p["kind"], p["population"]): p["n"] for p in report["population_summary"]}
    main_passes = [s for s in samples if s["kind"] == "pass" and s["window"] == "main"]
    for name in ("none", "key", "edit"):
        want = sum(1 for s in main_passes if s["population"] == name)
        if want == 0 or pops.get(("pass", name)) != want:
            fail("population %s: n %s, expected %d main passes" % (name, pops.get(("pass", name)), want))
    # GPU frames (docs/gpu.md): with a Vulkan device the session report's `gpu` key has every frame
    # the demo submitted (the sender saw each fence before the report), in order, and only the
    # main passes that went without GPU work (frame 0, the GPU behind) say gpu_timestamps unavailable;
    # without one, `gpu` is null and every main pass says so: null, never zero. The details window
    # (w1) renders on the CPU alone: every pass of it that rendered says so too.
    with open(os.path.join(out, "stdout.txt")) as f:
        m = re.search(r"^gpu: (\d+) frames submitted, .*?, (\d+) frames without GPU passes", f.read(), re.M)
    submitted, without = (int(m.group(1)), int(m.group(2))) if m else (0, None)
    cov = {(c["what"], c["name"]): c for c in report["coverage"]}
    gpu = cov.get(("stage", "gpu_timestamps"))
    unavailable = [s for s in main_passes
                   if any(x["name"] == "gpu_timestamps" and not x["available"] and x["total_ms"] is None
                          for x in s["stages"])]
    if any(len([x for x in s["stages"] if x["name"] == "gpu_timestamps"]) > 1 for s in main_passes):
        fail("a main pass declares gpu_timestamps twice")
    details = [s for s in samples if s["window"] == "w1" and s["kind"] == "pass"]
    details_marked = [s for s in details if any(x["name"] == "gpu_timestamps" and not x["available"] and
                                                x["total_ms"] is None for x in s["stages"])]
    if not details or len(details_marked) != len(details):
        fail("every rendering w1 pass should say gpu_timestamps unavailable: %d of %d" % (len(details_marked), len(details)))
    g = report["gpu"]
    if m:
        if not g or g["frames"] != submitted or g["frames_not_kept"] != 0 or g["queue_backlog_ms"] is None:
            fail("with a Vulkan device the session report's gpu key should hold the %d frames submitted: %s"
                 % (submitted, g))
        if g["order"]["frames_checked"] != submitted or g["order"]["start_before_submit"] != 0:
            fail("every GPU frame checked, none starting before its submit (marked before vkQueueSubmit): %s"
                 % g["order"])
        # Which passes exactly: run_demo_headless.sh matches them to the capture's GPU frames.
        with_gpu = len(main_passes) - len(unavailable)
        if not gpu or gpu["unavailable_n"] != len(unavailable) + len(details) or not 0 < with_gpu <= submitted or \
                len(unavailable) > without + 1:
            fail("only passes without GPU work (%d frames of 120) should declare gpu_timestamps unavailable: "
                 "%s, %d of %d passes" % (without + 1, gpu, len(unavailable), len(main_passes)))
    else:
        if g is not None:
            fail("without a Vulkan device the session report's gpu key should be null, not %s" % g)
        if not gpu or gpu["unavailable_n"] != len(main_passes) + len(details) or gpu["available_n"] != 0 or \
                len(unavailable) != len(main_passes):
            fail("main passes should declare gpu_timestamps unavailable: %s" % gpu)
    if not any(g["name"] == "surface_and_text_cache_bytes" for s in main_passes for g in s["memory"]):
        fail("the memory gauge is sampled inside main's pass: some main pass should carry it")
    if not any(c["name"] == "shape_cache_hit" and c["n"] > 0 for c in report["counter_summary"]):
        fail("counter_summary should summarise shape_cache_hit")
    # Operation counters with a unit (strobe_op_counter_add_kind_unit): the draw calls are counts.
    draws = [c for c in report["counter_summary"] if c["name"] == "draw_calls"]
    if not draws or any(c["unit"] != "count" for c in draws) or \
            any(c["unit"] != "none" for c in report["counter_summary"] if c["name"] == "shape_cache_hit"):
        fail("draw_calls should carry unit count and shape_cache_hit none: %s" % report["counter_summary"])

    with open(os.path.join(out, "demo-steady-report.json")) as f:
        steady = json.load(f)
    if steady["session"]["resets"] != 1 or steady["session"]["reset_ms"] is None:
        fail("the steady-state session should say it was reset once: %s" % steady["session"])
    if any(s["start_ms"] < steady["session"]["reset_ms"] for s in steady["samples"]):
        fail("the steady-state session kept an operation that began before its reset")
    if not steady["samples"] or steady["counts"]["completed"] >= report["counts"]["completed"]:
        fail("the reset should have discarded the warm-up: %d vs %d completed" %
             (steady["counts"]["completed"], report["counts"]["completed"]))

    app = report["application_scopes"]
    labels = {(s["label"], s["lane"], s["parent_id"] is None) for s in app["scopes"]}
    if ("local_save_write", "worker", True) not in labels or ("container_encode", "worker", False) not in labels:
        fail("application scopes local_save_write > container_encode on the worker lane missing: %s" % labels)
    if not report["memory"]["gauges"]:
        fail("no memory gauge")
    units = {g["name"]: g["unit"] for g in report["memory"]["gauges"]}
    if units.get("surface_and_text_cache_bytes") != "bytes":
        fail("the memory gauge should carry the unit the demo declared (bytes), got %s" % units)

    spikes = os.listdir(os.path.join(out, "spikes"))
    if not spikes:
        fail("the flight recorder wrote no spike capture for the slow frame")
    print("check_demo: report has every stage, window, kind, counter and scope; %d spike file(s)" % len(spikes))


if __name__ == "__main__":
    main()
