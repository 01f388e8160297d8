#!/usr/bin/env bash
# bench-read-callgrind.sh — what reading a capture costs, counted exactly by
# callgrind rather than timed, so the figure is repeatable on a loaded
# machine where bench_cli's report_events_per_s and
# export_perfetto_scopes_per_s are not (docs/cli.md §Speed). Runs the built
# `strobe` under callgrind on bench_cli's synthetic capture (written once by
# `bench_cli --generate-only`, 18 events and 7 scopes a frame) and prints:
#   BENCH report_instructions_per_event     `strobe report --quiet`, whole process, per event
#   BENCH report_read_instructions_per_event  of which the reader (strobe_capture_next_batch)
#   BENCH report_zstd_instructions_per_event  of which zstd decompressing blocks
#   BENCH report_end_instructions_per_event   of which the figures after the read (percentiles, frame rates, text)
#   BENCH perfetto_instructions_per_scope   `strobe export --format perfetto`, every thread, per scope
#   BENCH perfetto_reading_instructions_per_scope of which the thread that reads and encodes (on two
#                                        free cores the export's time is this thread's)
#   BENCH perfetto_zstd_instructions_per_scope of which its output's compression (its own thread)
# Builds nothing; prints a SKIP line and succeeds when valgrind is missing
# (scripts/callgrind-lib.sh).
#
# Usage: scripts/bench-read-callgrind.sh [build-dir]   (default: build; STROBE_CALLGRIND_EVENTS, default 2000000)
set -euo pipefail
CALLGRIND_NAME=bench-read-callgrind
. "$(dirname "$0")/callgrind-lib.sh"

build_dir=${1:-build}
n=${STROBE_CALLGRIND_EVENTS:-2000000}
cli="$build_dir/tools/strobe"
gen="$build_dir/bench/bench_cli"
callgrind_require
callgrind_need "$cli"
callgrind_need "$gen"
read -r _ capture events < <("$gen" --events "$n" --generate-only | grep '^capture ')
[ -n "${events:-}" ] && [ "$events" -gt 0 ] || { echo "bench-read-callgrind: bench_cli wrote no capture" >&2; exit 1; }
scopes=$((events / 18 * 7))

callgrind_tmp
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }
ir_of() { callgrind_ir "$1" || echo 0; }
total() { awk '/PROGRAM TOTALS/ { v = $1; gsub(",", "", v); print v; exit }' "$out.log"; }

callgrind_run "$cli" report --quiet "$capture"
all=$(total)
read=$(ir_of strobe_capture_next_batch)
zstd=$(ir_of ZSTD_decompressDCtx)
end=$(( $(ir_of cmd_report) - $(ir_of agg_read_all) ))
echo "BENCH report_instructions_per_event $(ratio "$all" "$events") instructions"
echo "BENCH report_read_instructions_per_event $(ratio "$read" "$events") instructions"
echo "BENCH report_zstd_instructions_per_event $(ratio "$zstd" "$events") instructions"
echo "BENCH report_end_instructions_per_event $(ratio "$end" "$events") instructions"

callgrind_run "$cli" export --quiet --format perfetto -o /dev/null "$capture"
all=$(total)
zstd=$(ir_of ZSTD_compress2)
compressor=$(ir_of compressor)
echo "BENCH perfetto_instructions_per_scope $(ratio "$all" "$scopes") instructions"
echo "BENCH perfetto_reading_instructions_per_scope $(ratio $((all - compressor)) "$scopes") instructions"
echo "BENCH perfetto_zstd_instructions_per_scope $(ratio "$zstd" "$scopes") instructions"
echo "(capture $capture: $events events, $scopes scopes; strobe under callgrind)"
