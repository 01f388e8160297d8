#!/usr/bin/env bash
# bench-drain-callgrind.sh — the drain's instructions per event, counted
# exactly by callgrind rather than timed (docs/recording.md §What a capture
# says it cost), so the figure is repeatable on a loaded machine where the
# timed drain_ns_per_event is not. Runs the already built bench_cost (the
# mixed workload: 227 events per 100 scopes, a file recording every event)
# under callgrind and prints, per event the drain delivered:
#   BENCH drain_instructions_per_event  inclusive Ir of the drain's pass() / events (every pass:
#                                        the drain thread's and the ones strobe_record_flush runs)
#   BENCH drain_zstd_instructions_per_event    of which zstd compressing blocks
#   BENCH drain_convert_instructions_per_event of which completing the short forms (convert_run)
#   BENCH drain_encode_instructions_per_event  of which encoding EVENTS (encode_scopes)
#   BENCH capture_bytes_per_event        the file's size per event, what zstd buys
# Builds nothing; prints a SKIP line and succeeds when valgrind is missing.
#
# Usage: scripts/bench-drain-callgrind.sh [build-dir]   (default: build; STROBE_CALLGRIND_N scopes, default 1000000)
set -euo pipefail

build_dir=${1:-build}
n=${STROBE_CALLGRIND_N:-1000000}
exe="$build_dir/bench/bench_cost"

if ! command -v valgrind >/dev/null 2>&1 || ! command -v callgrind_annotate >/dev/null 2>&1; then
  echo "SKIP bench-drain-callgrind: valgrind is not installed"
  exit 0
fi
[ -x "$exe" ] || { echo "bench-drain-callgrind: $exe not found; build first (make build)" >&2; exit 1; }

out=$(mktemp /tmp/strobe-drain-callgrind.XXXXXX)
trap 'rm -f "$out" "$out.log" "$out.txt"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$out" "$exe" "$n" >"$out.txt" 2>"$out.log" \
  || { cat "$out.log" >&2; exit 1; }
callgrind_annotate --inclusive=yes --threshold=100 --auto=no "$out" >"$out.log"

# The events the drain delivered: bench_cost prints those of its timed run (BENCH
# cost_events_drained); its untimed first 1000 units (227 events each) went through the same passes.
events=$(awk '$1 == "BENCH" && $2 == "cost_events_drained" { print $3 + 227000 }' "$out.txt")
bytes=$(awk '$1 == "BENCH" && $2 == "capture_bytes_per_event" { print $3 }' "$out.txt")
[ -n "$events" ] && [ "$events" -gt 0 ] || { echo "bench-drain-callgrind: bench_cost printed no cost_events_drained" >&2; cat "$out.txt" >&2; exit 1; }

ir_of() { # the largest inclusive count of a function (its own entry, not call-graph lines)
  awk -v fn="$1" '
    /=>|>  / { next }
    $0 ~ ("[:( ]" fn "(\\.[a-z]+\\.[0-9]+)?( |'"'"'|$)") {
      v = $1; gsub(",", "", v)
      if (v ~ /^[0-9]+$/ && v + 0 > best) best = v + 0
      found = 1
    }
    END { if (found) print best; else print 0 }' "$out.log"
}
per_event() { awk -v a="$1" -v e="$events" 'BEGIN { printf "%.1f", a / e }'; }
drain=$(ir_of pass)
zstd=$(ir_of ZSTD_compressCCtx); [ "$zstd" = 0 ] && zstd=$(ir_of ZSTD_compress2)
convert=$(ir_of convert_run)
encode=$(ir_of encode_scopes)
echo "BENCH drain_instructions_per_event $(per_event "$drain") instructions"
echo "BENCH drain_zstd_instructions_per_event $(per_event "$zstd") instructions"
echo "BENCH drain_convert_instructions_per_event $(per_event "$convert") instructions"
echo "BENCH drain_encode_instructions_per_event $(per_event "$encode") instructions"
[ -n "$bytes" ] && echo "BENCH capture_bytes_per_event $bytes bytes"
echo "(events drained: $events; bench_cost $n scopes under callgrind)"
