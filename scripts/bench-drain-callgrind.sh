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
#   BENCH drain_ring_instructions_per_event    of which completing and encoding the usual events
#                                        in one pass (encode_ring: a file, the drain's only consumer)
#   BENCH drain_convert_instructions_per_event of which completing the short forms of the others (convert_run)
#   BENCH drain_encode_instructions_per_event  of which encoding converted EVENTS (encode_scopes)
#   BENCH capture_bytes_per_event        the file's size per event, what zstd buys
#   BENCH producer_instructions_per_scope  the workload thread's instructions per scope of the mix
#   BENCH process_instructions_per_scope   those and the drain's (budget <= 100), and their ratio to the
#                                        producer's alone (process_instructions_ratio, the same run)
# Builds nothing; prints a SKIP line and succeeds when valgrind is missing
# (scripts/callgrind-lib.sh).
#
# Usage: scripts/bench-drain-callgrind.sh [build-dir]   (default: build; STROBE_CALLGRIND_N scopes, default 1000000)
set -euo pipefail
CALLGRIND_NAME=bench-drain-callgrind
. "$(dirname "$0")/callgrind-lib.sh"

build_dir=${1:-build}
n=${STROBE_CALLGRIND_N:-1000000}
exe="$build_dir/bench/bench_cost"

callgrind_start "$exe" "$n"

# The events the drain delivered: bench_cost prints those of its timed run (BENCH
# cost_events_drained); its untimed first 1000 units (227 events each) went through the same passes.
events=$(awk '$1 == "BENCH" && $2 == "cost_events_drained" { print $3 + 227000 }' "$out.txt")
bytes=$(awk '$1 == "BENCH" && $2 == "capture_bytes_per_event" { print $3 }' "$out.txt")
[ -n "$events" ] && [ "$events" -gt 0 ] || { echo "bench-drain-callgrind: bench_cost printed no cost_events_drained" >&2; cat "$out.txt" >&2; exit 1; }

ir_of() { callgrind_ir "$1" || echo 0; } # 0: the function did not run (zstd's entry point differs by version)
per_event() { awk -v a="$1" -v e="$events" 'BEGIN { printf "%.1f", a / e }'; }
drain=$(ir_of pass)
zstd=$(ir_of ZSTD_compressCCtx); [ "$zstd" = 0 ] && zstd=$(ir_of ZSTD_compress2)
ring=$(ir_of encode_ring)
convert=$(ir_of convert_run)
encode=$(ir_of encode_scopes)
echo "BENCH drain_instructions_per_event $(per_event "$drain") instructions"
echo "BENCH drain_zstd_instructions_per_event $(per_event "$zstd") instructions"
echo "BENCH drain_ring_instructions_per_event $(per_event "$ring") instructions"
echo "BENCH drain_convert_instructions_per_event $(per_event "$convert") instructions"
echo "BENCH drain_encode_instructions_per_event $(per_event "$encode") instructions"
[ -n "$bytes" ] && echo "BENCH capture_bytes_per_event $bytes bytes"
# The whole process per scope of the mix (227 events per 100 scopes): the workload thread's unit()
# calls (the producer, the same run's baseline) and the drain's passes (budget <= 100 a scope).
producer=$(ir_of unit)
awk -v p="$producer" -v d="$drain" -v e="$events" 'BEGIN {
  s = e * 100 / 227
  printf "BENCH producer_instructions_per_scope %.1f instructions\n", p / s
  printf "BENCH process_instructions_per_scope %.1f instructions\n", (p + d) / s
  printf "BENCH process_instructions_ratio %.2f ratio\n", (p > 0 ? (p + d) / p : 0)
  printf "BUDGET process_instructions_per_scope %.1f <= 100 %s\n", (p + d) / s, ((p + d) / s <= 100 ? "ok" : "OVER")
}'
echo "(events drained: $events; bench_cost $n scopes under callgrind)"
