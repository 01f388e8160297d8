#!/usr/bin/env bash
# run_demo_serve_seconds.sh — `strobe-demo --serve --seconds S` honours S: it
# serves (prints the viewer URL), then stops by itself and writes its
# capture, well before a bound of S + 120 s that only a demo ignoring
# --seconds would reach (it used to serve until interrupted). The bound is a
# hang detector, not a timing assertion.
# usage: run_demo_serve_seconds.sh <strobe-demo> <strobe> <work dir>
set -euo pipefail
demo=$1 strobe=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
seconds=2
rc=0
timeout --signal=KILL $((seconds + 120)) "$demo" --serve --port 0 --seconds "$seconds" --out "$work" \
  > "$work/stdout.txt" 2> "$work/stderr.txt" || rc=$?
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
echo "run_demo_serve_seconds: ok"
