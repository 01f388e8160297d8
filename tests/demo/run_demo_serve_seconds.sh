#!/usr/bin/env bash
# run_demo_serve_seconds.sh — `strobe-demo --serve --seconds S` honours S: it
# serves (prints the viewer URL), then stops by itself and writes its
# capture, well before a bound of S + 120 s that only a demo ignoring
# --seconds would reach (it used to serve until interrupted). The bound is a
# hang detector, not a timing assertion. Its Python producer (examples/demo/producer.py)
# fed the capture a lane over HTTP. Its server pushed its operations over
# OTLP/HTTP to examples/demo/otlp_receiver.py (as `make demo` runs it): passes
# arrived as traces, each with stage spans under it.
# usage: run_demo_serve_seconds.sh <strobe-demo> <strobe> <work dir>
set -euo pipefail
demo=$1 strobe=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
python3 "$here/../../examples/demo/otlp_receiver.py" --port-file "$work/receiver.port" \
  --summary "$work/otlp-received.json" --max-seconds 280 > "$work/receiver.txt" 2>&1 &
rpid=$!
trap 'kill -TERM $rpid 2>/dev/null || true' EXIT
for _ in $(seq 300); do [ -s "$work/receiver.port" ] && break; sleep 0.1; done
[ -s "$work/receiver.port" ] || { echo "run_demo_serve_seconds: the OTLP receiver did not start" >&2; exit 1; }
seconds=2
rc=0
timeout --signal=KILL $((seconds + 120)) "$demo" --serve --port 0 --seconds "$seconds" --out "$work" \
  --otlp-endpoint "http://127.0.0.1:$(cat "$work/receiver.port")/v1/traces" \
  > "$work/stdout.txt" 2> "$work/stderr.txt" || rc=$?
kill -TERM $rpid && wait $rpid || true
trap - EXIT
if [ "$rc" -ne 0 ]; then
  echo "run_demo_serve_seconds: strobe-demo --serve --seconds $seconds exited $rc (137: still serving, killed)" >&2
  tail -20 "$work/stderr.txt" >&2
  exit 1
fi
grep -q '^viewer: *http://127\.0\.0\.1:[0-9]*/#token=' "$work/stdout.txt" \
  || { echo "run_demo_serve_seconds: the demo did not serve (no viewer URL)" >&2; exit 1; }
"$strobe" info "$work/demo.strobe" > "$work/info.txt"
grep -q "footer      present" "$work/info.txt" \
  || { echo "run_demo_serve_seconds: the capture was not closed cleanly" >&2; exit 1; }
# The external producer (examples/demo/producer.py) fed its lane over HTTP: every span the server
# took is in the capture, on lane py/audio, at least one callback with its mix and limiter.
sent=$(sed -n 's/^producer: \([0-9]*\) spans in [0-9]* batches over HTTP on lane py\/audio, 0 batches refused.*/\1/p' \
  "$work/stdout.txt")
[ -n "$sent" ] || { echo "run_demo_serve_seconds: the demo did not say what the producer sent" >&2; exit 1; }
"$strobe" report --json "$work/demo.strobe" > "$work/report.json"
python3 - "$work/report.json" "$sent" <<'PY' || { echo "run_demo_serve_seconds: the capture's producer lane is not what the server took ($sent spans)" >&2; exit 1; }
import json, sys
p = json.load(open(sys.argv[1]))["producers"]
lanes = {l["lane"]: l for l in (p or {}).get("lanes", [])}
assert "py/audio" in lanes and lanes["py/audio"]["spans"] == int(sys.argv[2]) >= 3, p
assert lanes["py/audio"]["domain"] == "", p
PY
# The push: every pass the session saw went out at stop at the latest; each arrived as a trace whose stage
# runs are child spans of it, none left without its parent.
python3 - "$work/otlp-received.json" <<'PY' || { echo "run_demo_serve_seconds: the OTLP push did not deliver (receiver: $(cat "$work/receiver.txt"))" >&2; exit 1; }
import json, sys
r = json.load(open(sys.argv[1]))
assert r["posts"] >= 1 and r["refused"] == 0, r
assert r["operations"].get("pass", 0) >= 1, r
assert sum(v["spans"] for v in r["stage_spans"].values()) >= r["operations"]["pass"], r
assert r["child_spans_without_parent"] == 0, r
PY
if grep -Eq "operations sent, [1-9][0-9]* not sent at stop" "$work/stderr.txt"; then
  echo "run_demo_serve_seconds: the push left operations unsent: $(grep 'OTLP push' "$work/stderr.txt")" >&2
  exit 1
fi
echo "run_demo_serve_seconds: ok"
