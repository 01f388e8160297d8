#!/usr/bin/env python3
"""check_gtk_frames.py — runs strobe-gtk (examples/gtk/) under Xvfb for a
bounded number of frames with input it sends itself, then checks that the
instrumentation docs/toolkit-frame-loop.md describes is right on GTK 4's real
frame clock, from three sources the run writes: GDK's own log (the frame
counter at each after-paint, each event delivered), the session report, and
the capture (read back through `strobe export --format chrome`).

  - every frame has its pass: the committed passes' frame ids, in order, are
    GDK's counters, in order (F1, F2), each pass holding its before_paint
    and after_paint stages; the report counts as many passes and
    inputs as GDK painted frames and delivered events, none interleaved; each
    cycle that flushed input and painted nothing is an idle pass (no
    before_paint, id = counter + 1, counted in counts.idle);
  - each phase stage times its own phase (F3): every gtk_snapshot scope
    (opened inside GTK's snapshot vfunc) lies inside a paint stage and every
    gtk_size_allocate scope inside a layout stage, none inside another
    phase's stage, and every paint stage holds a snapshot;
  - input operations end with their phase (F4, F5): one begun inside
    flush_events or between frames ends before the next phase begins, and
    none holds a phase stage; at least one
    flush_events stage dispatched several events and at least one event came
    between frames, so both cases ran.

Then it redoes the run's own data as each mistake of the old guide would
have recorded it (F1 to F5, a flush-only cycle not marked idle) and fails if
the checks accept any of them: they stay able to fail.

usage: check_gtk_frames.py STROBE_GTK STROBE_CLI WORKDIR [--frames N]
Exit 0 when every check passes; otherwise prints each failure and exits 1.
"""
import argparse
import bisect
import json
import os
import shutil
import subprocess
import sys

PHASES = ["flush_events", "before_paint", "update", "layout", "paint", "after_paint"]
FRAME_STAGES = ["before_paint", "after_paint"]  # GDK emits these in every frame; paint only when damaged
VFUNC_PHASE = {"gtk_snapshot": "paint", "gtk_size_allocate": "layout"}
RUN_CAP_S = 120  # a cap on a hung run, far above the ~2 s it takes: never an assertion


def run(args):
    os.makedirs(args.workdir, exist_ok=True)
    paths = {k: os.path.join(args.workdir, f) for k, f in
             [("report", "report.json"), ("capture", "gtk.strobe"), ("log", "gdk.log"), ("chrome", "gtk.json")]}
    for p in paths.values():
        if os.path.exists(p):
            os.remove(p)
    env = dict(os.environ, GDK_BACKEND="x11", GSK_RENDERER="cairo", GTK_A11Y="none", NO_AT_BRIDGE="1")
    cmd = [shutil.which("xvfb-run") or "xvfb-run", "-a", "-s", "-screen 0 640x480x24",
           args.strobe_gtk, "--frames", str(args.frames), "--drive-input",
           "--report", paths["report"], "--capture", paths["capture"], "--gdk-log", paths["log"]]
    done = subprocess.run(cmd, env=env, timeout=RUN_CAP_S, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"strobe-gtk failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr}")
    done = subprocess.run([args.strobe_cli, "export", paths["capture"], "--format", "chrome", "-o", paths["chrome"]],
                          timeout=RUN_CAP_S, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"strobe export failed ({done.returncode}):\n{done.stderr}")
    return paths


def read_gdk_log(path):
    """GDK's counter per painted frame, the type per event, and the counter of
    each cycle that ran flush-events and resume-events with no frame between."""
    frames, events, idle, flushed = [], [], [], None
    with open(path) as f:
        for line in f:
            what, value = line.split()
            if what == "frame":
                frames.append(int(value))
                flushed = None
            elif what == "event":
                events.append(int(value))
            elif what == "flush":
                flushed = int(value)
            elif what == "resume" and flushed is not None:
                idle.append(flushed)
                flushed = None
    return frames, events, idle


def read_capture(path):
    """Passes and inputs as (begin, end, args), stages and scopes as (begin, end), in µs."""
    doc = json.load(open(path))
    ops, opened = {"pass": [], "input": []}, {}
    spans = {name: [] for name in PHASES + list(VFUNC_PHASE)}
    for e in doc["traceEvents"]:
        if e.get("cat") == "operation":
            key = e["id2"]["local"]
            if e["ph"] == "b":
                opened[key] = e
            elif e["ph"] == "e":
                b = opened.pop(key)
                ops[b["name"].split(" ")[0]].append((b["ts"], e["ts"], b.get("args", {})))
        elif e["ph"] == "X" and e["name"] in spans:
            spans[e["name"]].append((e["ts"], e["ts"] + e["dur"]))
    for v in list(ops.values()) + list(spans.values()):
        v.sort(key=lambda s: s[0])
    return ops, spans


def inside(inner, outer):
    return outer[0] <= inner[0] and inner[1] <= outer[1]


def enclosing(spans, t0, t1):
    """The span of a sorted, non-overlapping list that holds [t0, t1], or None."""
    i = bisect.bisect_right(spans, (t0, float("inf"))) - 1
    return spans[i] if i >= 0 and inside((t0, t1), spans[i]) else None


def check_frames(frames, idle, ops, spans, report, errors):
    committed = [p for p in ops["pass"] if p[2].get("committed")]
    # A cycle that only flushed input has no before_paint: an idle pass,
    # named by the frame that did not come (the counter + 1).
    passes = [p for p in committed if any(inside(x, p[:2]) for x in spans["before_paint"])]
    idle_ids = [p[2].get("frame_id") for p in committed if p not in passes]
    if idle_ids != [c + 1 for c in idle] or report["counts"]["idle"] != len(idle):
        errors.append(f"GDK ran {len(idle)} cycles with no frame (counters {idle[:5]}); the capture has "
                      f"{len(idle_ids)} passes without before_paint (ids {idle_ids[:5]}), the report "
                      f"{report['counts']['idle']} idle")
    if not idle:
        errors.append("GDK ran no cycle without a frame: the idle case did not run")
    ids = [p[2].get("frame_id") for p in passes]
    if ids != frames:
        first = next((i for i, (a, b) in enumerate(zip(ids, frames)) if a != b), min(len(ids), len(frames)))
        errors.append(f"pass frame ids differ from GDK's counters at frame #{first}: passes "
                      f"{ids[first:first + 5]}, GDK {frames[first:first + 5]} ({len(ids)} passes, {len(frames)} frames)")
    for b, e, a in passes:
        missing = [s for s in FRAME_STAGES if not any(inside(x, (b, e)) for x in spans[s])]
        if missing:
            errors.append(f"pass {a.get('frame_id')} lacks stages {missing} inside it")
            break
    counts = report["counts"]
    if counts["completed_by_kind"]["pass"] != len(frames):
        errors.append(f"the report counts {counts['completed_by_kind']['pass']} passes, GDK painted {len(frames)}")
    if counts["interleaved"]:
        errors.append(f"the report counts {counts['interleaved']} interleaved ends: an operation outlived its parent")
    for s in report["samples"]:
        names = {st["name"] for st in s["stages"]}
        if s["kind"] == "pass" and not set(FRAME_STAGES) <= names:
            errors.append(f"report sample of pass {s['frame_id']} lacks {sorted(set(FRAME_STAGES) - names)}")
            break


def check_phases(spans, errors):
    for vfunc, phase in VFUNC_PHASE.items():
        if not spans[vfunc]:
            errors.append(f"no {vfunc} scope was recorded: the run exercised nothing")
        for v in spans[vfunc]:
            if not enclosing(spans[phase], *v):
                errors.append(f"{vfunc} at {v[0]:.3f} us lies in no {phase} stage: the stage does not time its phase")
                break
        for other in PHASES:
            if other != phase and any(enclosing(spans[other], *v) for v in spans[vfunc]):
                errors.append(f"a {vfunc} scope lies inside a {other} stage: that stage times GTK's {phase}")
    starts = [v[0] for v in spans["gtk_snapshot"]]
    for p in spans["paint"]:
        i = bisect.bisect_left(starts, p[0])
        if i == len(starts) or not inside(spans["gtk_snapshot"][i], p):
            errors.append(f"the paint stage at {p[0]:.3f} us holds no gtk_snapshot: it timed another phase")
            break


def check_inputs(events, ops, spans, report, errors):
    inputs = ops["input"]
    if len(inputs) != len(events) or report["counts"]["completed_by_kind"]["input"] != len(events):
        errors.append(f"GDK delivered {len(events)} events; the capture has {len(inputs)} input operations, "
                      f"the report {report['counts']['completed_by_kind']['input']}")
    phase_starts = sorted(s[0] for name in PHASES for s in spans[name])
    per_flush, between = {}, 0
    for b, e, a in inputs:
        flush = enclosing(spans["flush_events"], b, b)
        if flush:
            per_flush[flush] = per_flush.get(flush, 0) + 1
        else:
            between += 1
        # It ends with the phase it began in (its implicit end is taken just
        # after the stage's own end) or, between frames, with its dispatch:
        # before the next phase begins, in both cases.
        i = bisect.bisect_right(phase_starts, b)
        if i < len(phase_starts) and e > phase_starts[i]:
            where = "in flush_events" if flush else "between frames"
            errors.append(f"input {a.get('operation_id')} began {where} and ran into the next phase "
                          f"({e - phase_starts[i]:.3f} us past its start)")
        for name in PHASES:
            if any(inside(s, (b, e)) for s in spans[name]):
                errors.append(f"input {a.get('operation_id')} holds a {name} stage: it swallowed the frame")
                break
    if not per_flush or max(per_flush.values()) < 2:
        errors.append("no flush_events stage dispatched several events: that case did not run")
    if not between:
        errors.append("no event came between frames: that case did not run")
    return max(per_flush.values(), default=0), between


def all_checks(frames, events, idle, ops, spans, report):
    errors = []
    check_frames(frames, idle, ops, spans, report, errors)
    check_phases(spans, errors)
    most, between = check_inputs(events, ops, spans, report, errors)
    return errors, most, between


def mistakes(ops, spans, report):
    """The run's own data redone as each mistake of the old guide would have
    recorded it: the checks must refuse every one (so they can fail)."""
    def pass_holds(p, name):
        return any(inside(x, p[:2]) for x in spans[name])

    def late(name, vfunc):  # a stage opened by an ordinary handler: after GTK's work
        out = []
        for b, e in spans[name]:
            ends = [v[1] for v in spans[vfunc] if inside(v, (b, e))]
            out.append((max(ends, default=b), e))
        return dict(spans, **{name: out})

    f1 = [p for p in ops["pass"] if pass_holds(p, "flush_events")]
    yield "F1 pass begun only in flush-events", dict(ops, **{"pass": f1}), spans, report
    f2 = [(b, e, dict(a, frame_id=a["frame_id"] - 1) if pass_holds((b, e), "flush_events") else a)
          for b, e, a in ops["pass"]]
    yield "F2 frame id without +1 in flush-events", dict(ops, **{"pass": f2}), spans, report
    f3 = dict(late("paint", "gtk_snapshot"), layout=late("layout", "gtk_size_allocate")["layout"])
    yield "F3 ordinary handlers", ops, f3, report
    later = [p[1] for p in ops["pass"]]
    stuck = [(b, next((x for x in later if x > e), e + 1e6), a) for b, e, a in ops["input"][:1]] + ops["input"][1:]
    yield "F4/F5 an input left running into the next frame", dict(ops, input=stuck), spans, report
    yield "a cycle without a frame not counted idle", ops, spans, dict(report, counts=dict(report["counts"], idle=0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("strobe_gtk")
    ap.add_argument("strobe_cli")
    ap.add_argument("workdir")
    ap.add_argument("--frames", type=int, default=60)
    args = ap.parse_args()
    paths = run(args)
    frames, events, idle = read_gdk_log(paths["log"])
    ops, spans = read_capture(paths["chrome"])
    report = json.load(open(paths["report"]))
    errors, most, between = all_checks(frames, events, idle, ops, spans, report)
    for name, m_ops, m_spans, m_report in mistakes(ops, spans, report):
        if not all_checks(frames, events, idle, m_ops, m_spans, m_report)[0]:
            errors.append(f"the checks accept this run redone with the mistake '{name}'")
    for e in errors:
        print("FAIL:", e)
    print(f"{len(frames)} frames, {len(spans['flush_events']) - len(idle)} began in flush_events, {len(idle)} cycles "
          f"flushed input and painted nothing; {len(events)} events "
          f"({between} between frames, up to {most} in one flush_events); {len(spans['gtk_snapshot'])} snapshots, "
          f"{len(spans['gtk_size_allocate'])} size allocations")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
