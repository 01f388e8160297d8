#!/usr/bin/env bash
# run_demo_headless.sh — the demo's headless test: 120 frames, then its report
# validates against docs/report-schema.json, shows everything the demo
# instruments (check_demo.py), its capture and spike files read back
# with `strobe info`, and `strobe report` counts the unwound scopes of the
# edits its input handler rejected with a longjmp; its perfetto export
# decodes and holds every scope; the render process's sample of the sender
# process's clock is in its capture and shown by `strobe merge`, whose merge
# answers `strobe tree` and `strobe calls` as the capture does.
# usage: run_demo_headless.sh <strobe-demo> <strobe> <source dir> <work dir>
set -euo pipefail
demo=$1 strobe=$2 src=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
"$demo" --frames 120 --headless --out "$work" | tee "$work/stdout.txt"
# `strobe report --json` on the capture, read once: the checks below share it.
"$strobe" report --json "$work/demo.strobe" > "$work/report.json"
# The GPU path (docs/gpu.md §Vulkan): said once; with libstrobe_vulkan
# (STROBE_DEMO_GPU=1) every frame ran its three passes on the Vulkan device,
# each a zone read back without waiting, or was counted as going without (the
# GPU three frames behind: the render thread never waits for it), and the GPU's composite was
# written; without a Vulkan device (no driver: VK_ICD_FILENAMES points
# nowhere) the demo says so once and its report says null, never zero.
[ "$(grep -c '^gpu: [0-9]' "$work/stdout.txt")" -le 1 ] && [ "$(grep -c '^gpu:  ' "$work/stdout.txt")" = 1 ] \
  || { echo "run_demo_headless: the GPU path should be announced once" >&2; exit 1; }
if [ "${STROBE_DEMO_GPU:-0}" = 1 ]; then
  python3 - "$work/stdout.txt" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
if not re.search(r"^gpu: +\S.*\(Vulkan; calibration by ", text, re.M):
    sys.exit("run_demo_headless: the demo found no Vulkan device (lavapipe: mesa-vulkan-drivers)")
m = re.search(r"^gpu: (\d+) frames submitted, (\d+) GPU zones read back without waiting \((\d+) frames unrecorded"
              r".*?, (\d+) frames without GPU passes", text, re.M)
if not m:
    sys.exit("run_demo_headless: no GPU summary line")
frames, zones, unrecorded, skipped = map(int, m.groups())
if frames + skipped != 119 or frames < 1 or zones != 3 * (frames - unrecorded):
    sys.exit("run_demo_headless: %d GPU frames, %d without, %d zones (%d unrecorded): want frames 1-119, each submitted "
             "with 3 zones or counted as without" % (frames, skipped, zones, unrecorded))
PY
  # The session report's passes and the capture's GPU frames agree frame by frame: a main pass
  # declares gpu_timestamps unavailable exactly when the capture has no submit for its frame.
  "$strobe" export "$work/demo.strobe" --format chrome --quiet -o "$work/demo-gpu.json"
  python3 - "$work/demo-gpu.json" "$work/demo-report.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rep = json.load(open(sys.argv[2]))
names = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
submitted = {e["args"]["frame_id"] for e in doc["traceEvents"]
             if e["ph"] == "i" and e["name"] == "submit" and names.get(e["tid"], "").startswith("GPU frames")}
main = [s for s in rep["samples"] if s["window"] == "main" and s["kind"] == "pass"]
wrong = [s["frame_id"] for s in main
         if any(st["name"] == "gpu_timestamps" and not st["available"] for st in s["stages"]) == (s["frame_id"] in submitted)]
if not submitted or not main or wrong:
    sys.exit("run_demo_headless: passes whose gpu_timestamps marker disagrees with the capture's GPU frames: %s "
             "(%d frames submitted)" % (wrong[:10], len(submitted)))
PY
  # GPU memory by kind from the path's own allocations (docs/recording.md): the capture's
  # gpu_memory gauges hold what the demo printed, and at least its 3 frames x 2 images per kind.
  python3 - "$work/stdout.txt" "$work/report.json" "$work/last-frame-gpu.png" <<'PY'
import json, re, struct, sys
m = re.search(r"^gpu memory: (\d+) bytes in buffers, (\d+) in textures", open(sys.argv[1]).read(), re.M)
rep = json.load(open(sys.argv[2]))
levels = {g["kind"]: (g["min"], g["max"]) for g in rep["gauges"] if g["name"] == "gpu_memory"}
want = {"buffers": int(m.group(1)), "textures": int(m.group(2))} if m else {}
w, h = struct.unpack(">II", open(sys.argv[3], "rb").read()[16:24])  # the PNG's IHDR: the frame's extent
image = w * h * 4
if levels != {k: (v, v) for k, v in want.items()} or want["textures"] < 6 * image or want["buffers"] <= 6 * image:
    sys.exit("run_demo_headless: gpu_memory gauges %s, the demo printed %s; want the 3 frames' two %dx%d images "
             "per kind (buffers with libstrobe_vulkan's own)" % (levels, want, w, h))
PY
  head -c 8 "$work/last-frame-gpu.png" | od -c | grep -q 'P   N   G' \
    || { echo "run_demo_headless: no last-frame-gpu.png from the GPU's composite" >&2; exit 1; }
fi
VK_ICD_FILENAMES=/nonexistent/strobe-no-driver.json "$demo" --frames 12 --headless --out "$work/no-gpu" > "$work/no-gpu.txt"
[ "$(grep -c '^gpu:' "$work/no-gpu.txt")" = 1 ] && grep -q '^gpu: .*no Vulkan device\|^gpu: .*built without' "$work/no-gpu.txt" \
  || { echo "run_demo_headless: without a Vulkan device the demo should say so once:" >&2; grep '^gpu' "$work/no-gpu.txt" >&2; exit 1; }
# A run that ends before frame 12 takes no UI-tree snapshot nor deep capture and says so; the run
# info holds the frames each run ran (make demo replays frame 12 only when a run reached it).
grep -q '^ui tree and deep capture: none taken: the run ended after 12 frames, before frame 12' "$work/no-gpu.txt" \
  && grep -qx 'frames=12' "$work/no-gpu/demo-report-run.txt" && grep -qx 'frames=120' "$work/demo-report-run.txt" \
  || { echo "run_demo_headless: a 12-frame run should say it took no deep capture, each run's info its frames:" >&2
       grep '^ui tree\|^deep capture' "$work/no-gpu.txt" >&2; cat "$work/no-gpu/demo-report-run.txt" >&2; exit 1; }
python3 - "$work/no-gpu/demo-report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
main = [s for s in r["samples"] if s["window"] == "main" and s["kind"] == "pass"]
gpu = [st for s in main for st in s["stages"] if st["name"] == "gpu_timestamps"]
if not main or len(gpu) != len(main) or any(st["available"] or st["total_ms"] is not None for st in gpu):
    sys.exit("run_demo_headless: without a device every main pass should say gpu_timestamps unavailable (null): %s" % gpu[:2])
if r["gpu"] is not None:
    sys.exit("run_demo_headless: without a device the session report's gpu key should be null, not %s" % r["gpu"])
PY
stall_read=()
[ -f "$work/demo-stall-read.json" ] && stall_read=("$work/demo-stall-read.json")
python3 "$src/tests/support/validate_report.py" "$work/demo-report.json" "$work/demo-frames-report.json" \
  "$work/sender-report.json" "${stall_read[@]}"
python3 "$src/tests/demo/check_demo.py" "$work"
"$strobe" info "$work/demo.strobe" > "$work/info.txt"
# The sampler (docs/exploration.md §Sampling): on during the demo, its samples
# in the capture and the demo's own functions among them; or, when the kernel
# refused, one line saying why and no samples.
"$strobe" report --samples --top 200 --json "$work/demo.strobe" > "$work/samples.json"
python3 - "$work/samples.json" "$work/stdout.txt" <<'PY'
import json, re, sys
report = json.load(open(sys.argv[1]))
text = open(sys.argv[2], encoding="utf-8").read()
on = re.search(r"^sampler: on at (\d+) Hz", text, re.M)
if not on:
    if not re.search(r"^sampler: not started: \S", text, re.M):
        sys.exit("run_demo_headless: the demo should say whether the sampler runs")
    if report.get("samples", {}).get("samples", 0):
        sys.exit("run_demo_headless: samples in the capture of a refused sampler")
    sys.exit(0)
s = report["samples"]
if s["rate_hz"] != int(on.group(1)) or s["samples"] < 50:
    sys.exit("run_demo_headless: %d samples at %d Hz in the capture" % (s["samples"], s["rate_hz"]))
names = {f["name"] for f in s["functions"] if f["module"].endswith("/strobe-demo")}
if "main" not in names:
    sys.exit("run_demo_headless: the sampled stacks should reach the demo's main: %s" % sorted(names))
if report["cpu_split"] is None or not any(x["covered"] for x in report["cpu_split"]):
    sys.exit("run_demo_headless: no scope split into on- and off-CPU time: %s" % report["cpu_split"])
PY
for f in "$work"/spikes/*.strobe; do "$strobe" info "$f" > /dev/null; done
grep -q "footer" "$work/info.txt" || { echo "run_demo_headless: strobe info printed no footer line" >&2; exit 1; }
# The input handler's rejected edits (frames 22, 58, 94 of 120) longjmp out of
# three nested scopes: the capture has them as unwound, never timed.
python3 - "$work/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
got = {s["name"]: s["unwound"] for s in r["not_included"]["unwound_by_site"]}
want = {"handle_input": 3, "parse_edit": 3, "check_cell_text": 3}
if got != want or r["capture"]["unwound_scopes"] != 9 or r["capture"]["depth_overflow"] != 0:
    sys.exit(f"run_demo_headless: unwound scopes {got} ({r['capture']}), want {want}")
PY
# Allocations and messages (docs/memory.md): the display list and the glyph masks are allocated
# in the frames, the start is logged with static text and accepted edits with run-time text.
python3 - "$work/report.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["allocations"]
pools = {p["name"]: p for p in a["pools"]}
framed = [f for f in a["frames"] if f["allocs"]]
if not a["available"] or sorted(pools) != ["display_list", "glyph_masks"] or len(framed) < 100 or \
        a["messages"] < 2 or a["messages_content"] < 1:
    sys.exit(f"run_demo_headless: allocations {sorted(pools)} in {len(framed)} frames, {a['messages']} messages")
PY
# The save worker traces its calls while it saves (docs/exploration.md): the capture names its
# functions from the symbol tables, static ones included, and cuts nothing.
python3 - "$work/report.json" <<'PY'
import json, os, sys
r = json.load(open(sys.argv[1]))
traced = {s["name"] for s in r["sites"] if s.get("traced_call")}
want = {"write_snapshot", "encode_snapshot", "grid_serialize", "serialize_row", "write_file"}
ct = r["call_tracing"]
# Clang instruments after inlining, so it traces only what it kept out of line (docs/exploration.md).
named = (traced and traced <= want) if os.environ.get("STROBE_TRACE_AFTER_INLINING") == "1" else want <= traced
if not named or ct["cut_depth"] + ct["cut_stack"] + ct["cut_functions"] or ct["unresolved"]:
    sys.exit(f"run_demo_headless: traced functions {sorted(traced)}, call tracing {ct}; want {sorted(want)} and no cuts")
PY
# The demo's numbers declare units: `strobe report` prints bytes in binary multiples and the
# budget share in percent, and its JSON names each unit (docs/recording.md, Units).
"$strobe" report "$work/demo.strobe" > "$work/report.txt"
python3 - "$work/report.txt" "$work/report.json" <<'PY'
import json, re, sys
text = open(sys.argv[1], encoding="utf-8").read()
rep = json.load(open(sys.argv[2]))
units = {x["name"]: x["unit"] for k in ("counters", "gauges", "values") for x in rep[k]}
want = {"surface_and_text_cache": "bytes", "frame_budget_used": "percent", "png_size": "bytes"}
for name, unit in want.items():
    if units.get(name) != unit:
        sys.exit("run_demo_headless: %s has unit %r in the report, want %r" % (name, units.get(name), unit))
# A value site made at run time has the unit it was interned with (strobe_site_intern_unit): the edits'.
edits = [x for x in rep["values"] if x["name"].startswith("edit_")]
if not edits or any(x["unit"] != "bytes" for x in edits):
    sys.exit("run_demo_headless: the edits' run-time value sites should have unit bytes: %s" % edits)
for name, pattern in (("surface_and_text_cache", r"[0-9.]+ (KiB|MiB|GiB)"), ("frame_budget_used", r"[0-9.]+%"),
                      ("png_size", r"[0-9.]+ (B|KiB|MiB)")):
    line = next((l for l in text.splitlines() if l.strip().startswith(name + " ")), "")
    if not re.search(pattern, line):
        sys.exit("run_demo_headless: the report's %s line does not print its unit: %r" % (name, line))
PY
# The capture in Perfetto's format (`make demo` writes it too): decoded with
# protoc and replayed (tests/cli/check_perfetto.py), every completed scope a
# closed slice, the unwound ones flagged, passes on operation lanes, stages on
# their own tracks.
"$strobe" export "$work/demo.strobe" --format perfetto --quiet -o "$work/demo.perfetto-trace"
python3 - "$src/tests/cli" "$work/demo.perfetto-trace" "$work/report.json" <<'PY'
import json, os, sys
sys.path.insert(0, sys.argv[1])
import check_perfetto
r = check_perfetto.load(sys.argv[2], "protoc", "zstd")
rep = json.load(open(sys.argv[3]))
scopes = sum(s["count"] for s in rep["sites"])
unwound = [s for s in r["slices"] if s["end_args"].get("strobe", "").startswith("unwound")]
tracks = r["tracks"]
lanes = [s for s in r["slices"] if tracks[s["track"]]["name"].startswith("operations ")]
stages = [s for s in r["slices"] if tracks[s["track"]]["name"] == "stages"]
gpu = [s for s in r["slices"] if tracks[s["track"]]["name"].startswith("GPU ")]  # spans and gaps (docs/cli.md)
closed = len(r["slices"]) - len(unwound) - len(lanes) - len(gpu)
if os.environ.get("STROBE_DEMO_GPU") == "1" and not any(tracks[s["track"]]["name"] == "GPU demo_gpu/compute" for s in gpu):
    sys.exit(f"run_demo_headless: perfetto export: no GPU spans on the demo_gpu/compute lane")
counters = [t["name"] for t in tracks.values() if t["counter"] is not None]
if len(set(counters)) != len(counters) or not any(": " in n for n in counters):  # kinds apart: "draw_calls: quads"
    sys.exit(f"run_demo_headless: perfetto export: counter tracks by kind {sorted(counters)}")
if closed != scopes or len(unwound) != 9 or not stages or not any(s["name"].startswith("pass ") for s in lanes):
    sys.exit(f"run_demo_headless: perfetto export: {closed} closed slices for {scopes} scopes, {len(unwound)} unwound, "
             f"{len(stages)} stage slices, {len(lanes)} operations")
PY
# The sender process's capture: each frame from its start in screen to its
# present, so a frame presented while the next ones ran overlaps them (a lane each).
"$strobe" export "$work/sender.strobe" --format perfetto --quiet -o "$work/sender.perfetto-trace"
python3 - "$src/tests/cli" "$work/sender.perfetto-trace" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import check_perfetto
r = check_perfetto.load(sys.argv[2], "protoc", "zstd")
tracks = r["tracks"]
lanes = [s for s in r["slices"] if tracks[s["track"]]["name"].startswith("operations main")]
if len({s["track"] for s in lanes}) < 2:  # the sender presents a pass while the next one runs: they overlap
    sys.exit(f"run_demo_headless: sender perfetto export: overlapping passes on one lane: {len(lanes)} passes")
PY
# The render process sampled the sender process's clock over their socket before the first frame
# (docs/sessions.md §Across hosts): one boot, so 0 within the sample's bound; its capture carries the
# sample and `strobe merge` shows it. The merge carries the UI-tree snapshot and the deep capture:
# `strobe tree` and `strobe calls` answer on it as on the render process's capture, naming its process (screen).
grep -q '^clock: .*sender process.*kept in this capture' "$work/stdout.txt" \
  || { echo "run_demo_headless: the demo should say it sampled the sender process's clock" >&2; exit 1; }
"$strobe" merge "$work/demo.strobe" "$work/sender.strobe" -o "$work/all.strobe" > "$work/merge.txt"
for args in "info" "tree --snapshot 1" "calls --frame 12" "calls"; do
  for f in demo all; do "$strobe" $args --json "$work/$f.strobe" > "$work/$f-${args// /_}.json"; done
done
python3 - "$work" <<'PY'
import json, os, re, sys
w = sys.argv[1]
def load(name):
    j = json.load(open(os.path.join(w, name)))
    j.pop("file", None)
    return j
info = load("demo-info.json")
mine = [s for s in info["clock_offsets"]["samples"] if s["peer"] == "sender"]
if len(mine) != 1 or mine[0]["peer_boot_id"] != info["header"]["boot_id"] or mine[0]["local_boot_id"] != mine[0]["peer_boot_id"] \
        or abs(mine[0]["offset_ns"]) > mine[0]["error_ns"] or not 0 < mine[0]["error_ns"] <= mine[0]["rtt_ns"]:
    sys.exit(f"run_demo_headless: the capture's sample of the sender process's clock: {info['clock_offsets']}")
merge = open(os.path.join(w, "merge.txt")).read()
if not re.search(r"clock-offset sample of sender within boot [0-9a-f]{8}: [-+]\d+\.\d{3} ms \+- \d+\.\d{3} ms", merge):
    sys.exit(f"run_demo_headless: strobe merge should show the sample:\n{merge}")
if load("all-info.json")["header"]["boot_id"] != info["header"]["boot_id"]:
    sys.exit("run_demo_headless: the merge of one boot's captures should carry its boot id")
t0, t1 = load("demo-tree_--snapshot_1.json"), load("all-tree_--snapshot_1.json")
bare = lambda t: [{k: v for k, v in n.items() if k != "spans"} for n in t["nodes"]]
# (its time: the same on the merged clock, whose epoch is the earlier process's, the render process's)
if not t0["nodes"] or bare(t0) != bare(t1) or abs(t1["snapshot"]["time_ns"] - t0["snapshot"]["time_ns"]) > 1000:
    sys.exit(f"run_demo_headless: the merge's UI-tree snapshot differs from the capture's: {t0['snapshot']} vs "
             f"{t1['snapshot']}")
def procs(j):  # every "process" key taken out: none in the capture, the render process's in the merge
    out = set()
    if isinstance(j, dict):
        if "process" in j:
            out.add(j.pop("process"))
        for v in j.values():
            out |= procs(v)
    elif isinstance(j, list):
        for v in j:
            out |= procs(v)
    return out
for name in ("calls_--frame_12", "calls"):
    a, b = load(f"demo-{name}.json"), load(f"all-{name}.json")
    pa, pb = procs(a), procs(b)
    if a != b or pa != {None} or pb != {"screen"}:
        sys.exit(f"run_demo_headless: strobe {name.replace('_', ' ')} differs on the merge (processes {pa}, {pb})")
PY
echo "run_demo_headless: ok"
# The grid's rows and cells are elements: the one UI-tree snapshot the demo
# requests (before frame 12) is in the capture, rebuilt by `strobe tree`
# with the Grid at its root, its visible rows under it and eight cells under
# each row, every one with spans attributed in that frame; and neither the
# snapshot nor an element id reaches the session report (docs/sessions.md §Content).
"$strobe" tree --json --frame 12 "$work/demo.strobe" > "$work/tree.json"
python3 - "$work/tree.json" "$work/demo-report.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
nodes = t["nodes"]
types = [n["type"] for n in nodes]
if t["snapshot"]["frame"] != 12 or t["snapshot"]["window"] != "main" or types[0] != "Grid" or nodes[0]["parent"] != -1:
    sys.exit(f"run_demo_headless: tree snapshot {t['snapshot']}, root {nodes[:1]}")
rows = [i for i, n in enumerate(nodes) if n["type"] == "Row"]
if not rows or any(nodes[i]["parent"] != 0 for i in rows) or types.count("Cell") != 8 * len(rows):
    sys.exit(f"run_demo_headless: {len(rows)} rows, {types.count('Cell')} cells in the tree")
if any(nodes[n["parent"]]["type"] != "Row" for n in nodes if n["type"] == "Cell"):
    sys.exit("run_demo_headless: a cell outside a row")
if any(n["spans"]["count"] == 0 for n in nodes if n["type"] in ("Row", "Cell")):
    sys.exit("run_demo_headless: an element of the snapshot without attributed spans in its frame")
report = open(sys.argv[2]).read()
if any(n["id"] in report for n in nodes) or '"Cell"' in report or "text_width" in report:
    sys.exit("run_demo_headless: the session report carries snapshot content")
PY
