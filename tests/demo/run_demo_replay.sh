#!/usr/bin/env bash
# run_demo_replay.sh — the demo's deep capture replayed in another process
# (docs/recording.md §Replay): frame 12's draw calls are all complete in the
# capture (`strobe calls`), `strobe-demo --replay` redraws the frame equal to
# its attached screenshot pixel for pixel, and with one glyph mask removed
# from the capture exactly the calls that sample it say missing_texture;
# `strobe export --attachments` writes the frame's screenshots.
# usage: run_demo_replay.sh <strobe-demo> <strobe> <drop_resource> <work dir>
set -euo pipefail
demo=$1 strobe=$2 drop=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
"$demo" --frames 16 --headless --out "$work" > "$work/stdout.txt"
grep -q '^deep capture: 1 written, frame 12: ' "$work/stdout.txt" \
  || { echo "run_demo_replay: no deep capture of frame 12" >&2; cat "$work/stdout.txt" >&2; exit 1; }
"$strobe" calls --json --frame 12 "$work/demo.strobe" > "$work/calls.json"
"$demo" --replay "$work/demo.strobe" --frame 12 --out "$work/replay.png" > "$work/replay.txt" \
  || { echo "run_demo_replay: the replay failed" >&2; cat "$work/replay.txt" >&2; exit 1; }
python3 - "$work/calls.json" "$work/replay.txt" <<'PY'
import json, re, sys
j = json.load(open(sys.argv[1]))
calls = j["calls"]
kinds = {c["kind"] for c in calls}
if kinds != {"clear", "quad", "sprite"} or len(calls) < 100:
    sys.exit(f"run_demo_replay: {len(calls)} calls of kinds {kinds}")
bad = [c for c in calls if c["status"] != "ok"]
if bad:
    sys.exit(f"run_demo_replay: calls not complete in the capture: {bad[:3]}")
media = {a["media_type"] for a in j["attachments"]}
if not {"image/png", "image/x-strobe-argb32", "image/x-strobe-a8", "application/x-strobe-demo-prims"} <= media:
    sys.exit(f"run_demo_replay: frame 12's attachments are {media}")
text = open(sys.argv[2]).read()
m = re.search(r"^screenshot: (\d+) of (\d+) pixels differ", text, re.M)
if not m or m.group(1) != "0" or m.group(2) != str(960 * 682):
    sys.exit(f"run_demo_replay: the replay is not the screenshot: {text}")
if f"replayed frame 12: {len(calls)} calls, {len(calls)} ok" not in text:
    sys.exit(f"run_demo_replay: {text}")
# The mask the first sprite samples, and every call that samples it.
mask = next(r["id"] for c in calls if c["kind"] == "sprite" for r in c["resources"] if r["role"] == "texture")
users = [c["seq"] for c in calls if any(r["id"] == mask for r in c["resources"])]
open(sys.argv[1] + ".mask", "w").write(f"{mask}\n{' '.join(map(str, users))}\n")
PY
head -c 8 "$work/replay.png" | od -c | grep -q 'P   N   G' || { echo "run_demo_replay: no replay.png" >&2; exit 1; }
mask=$(sed -n 1p "$work/calls.json.mask")
users=$(sed -n 2p "$work/calls.json.mask")
[ "$("$drop" "$work/demo.strobe" "$work/cut.strobe" "$mask")" = 1 ] \
  || { echo "run_demo_replay: mask $mask should be stored once" >&2; exit 1; }
set +e
"$demo" --replay "$work/cut.strobe" --frame 12 --calls > "$work/cut.txt"
rc=$?
set -e
[ "$rc" = 1 ] || { echo "run_demo_replay: a replay missing a mask exited $rc, want 1" >&2; exit 1; }
python3 - "$work/cut.txt" "$users" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
users = sorted(map(int, sys.argv[2].split()))
missing = sorted(int(m.group(1)) for m in re.finditer(r"^call (\d+) \S+ \S+: missing_texture$", text, re.M))
other = [l for l in text.splitlines() if l.startswith("call ") and not l.endswith(": ok") and "missing_texture" not in l]
if missing != users or other:
    sys.exit(f"run_demo_replay: without the mask, missing {missing}, want exactly {users}; other: {other[:3]}")
PY
"$strobe" export "$work/demo.strobe" --attachments "$work/attachments" 2> "$work/export.txt"
[ -f "$work/attachments/frame-12-resource-706e67000000000c.png" ] \
  && [ -f "$work/attachments/frame-12-resource-726762000000000c.argb32" ] \
  || { echo "run_demo_replay: the screenshots were not exported" >&2; exit 1; }
echo "run_demo_replay: frame 12 replayed pixel for pixel; without mask $mask exactly its $(echo $users | wc -w) calls miss it"
