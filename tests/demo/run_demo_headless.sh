#!/usr/bin/env bash
# run_demo_headless.sh — the demo's headless test: 120 frames, then its report
# validates against docs/report-schema.json, shows everything the demo
# instruments (check_demo.py), and its capture and spike files read back
# with `strobe info`.
# usage: run_demo_headless.sh <strobe-demo> <strobe> <source dir> <work dir>
set -euo pipefail
demo=$1 strobe=$2 src=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
"$demo" --frames 120 --headless --out "$work"
python3 "$src/tests/support/validate_report.py" "$work/demo-report.json" "$work/demo-frames-report.json"
if [ -f "$work/demo-stall-read.json" ]; then
  python3 "$src/tests/support/validate_report.py" "$work/demo-stall-read.json"
fi
python3 "$src/tests/demo/check_demo.py" "$work"
"$strobe" info "$work/demo.strobe" > "$work/info.txt"
for f in "$work"/spikes/*.strobe; do "$strobe" info "$f" > /dev/null; done
grep -q "footer" "$work/info.txt" || { echo "run_demo_headless: strobe info printed no footer line" >&2; exit 1; }
echo "run_demo_headless: ok"
