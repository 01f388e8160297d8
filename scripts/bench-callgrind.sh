#!/usr/bin/env bash
# bench-callgrind.sh — instructions per recorded scope, counted exactly by
# callgrind rather than timed, so the figure is repeatable on any machine and
# a hot-path regression of a single instruction shows. Runs the already built
# bench_instructions under callgrind and prints, per begin+end pair:
#   BENCH scope_instructions_recording  inclusive Ir of record_loop / N  (budget <= 35)
#   BENCH scope_instructions_floor      inclusive Ir of floor_loop / N   (two tick reads, two stores)
# Only record_loop's own call tree is counted: the drain thread's work is not.
# Builds nothing; prints a SKIP line and succeeds when valgrind is missing.
#
# Usage: scripts/bench-callgrind.sh [build-dir]   (default: build)
set -euo pipefail

build_dir=${1:-build}
n=1000000
exe="$build_dir/bench/bench_instructions"

if ! command -v valgrind >/dev/null 2>&1 || ! command -v callgrind_annotate >/dev/null 2>&1; then
  echo "SKIP bench-callgrind: valgrind is not installed"
  exit 0
fi
if [ ! -x "$exe" ]; then
  echo "bench-callgrind: $exe not found; build first (make build)" >&2
  exit 1
fi

out=$(mktemp /tmp/strobe-callgrind.XXXXXX)
trap 'rm -f "$out" "$out.log" "$out.txt"' EXIT

if ! valgrind --tool=callgrind --callgrind-out-file="$out" "$exe" "$n" >"$out.txt" 2>"$out.log"; then
  echo "bench-callgrind: valgrind failed:" >&2
  cat "$out.log" >&2
  exit 1
fi
cat "$out.txt" # the program's own note (events lost, if any)

callgrind_annotate --inclusive=yes --threshold=100 --auto=no "$out" >"$out.log"

# Summary lines look like "  12,345,678 (41.2%)  /path/file.c:record_loop [/path/exe]"
# (older callgrind_annotate prints no percentage; GCC may suffix clones such as
# .constprop.0). Code inlined from strobe.h gets an entry of its own,
# "strobe.h:record_loop", which is part of the function's inclusive count, so
# the largest entry for the name is the function's inclusive total.
ir_of() {
  awk -v fn="$1" '
    /=>|>  / { next }  # call-graph lines, not per-function totals
    $0 ~ (":" fn "(\\.[a-z]+\\.[0-9]+)?( |$)") {
      v = $1; gsub(",", "", v)
      if (v ~ /^[0-9]+$/ && v + 0 > best) best = v + 0
      found = 1
    }
    END { if (found) print best; else exit 1 }' "$out.log"
}

report() { # name function budget
  local ir
  if ! ir=$(ir_of "$2"); then
    echo "bench-callgrind: $2 not found in callgrind_annotate output" >&2
    exit 1
  fi
  awk -v name="$1" -v ir="$ir" -v n="$n" -v limit="$3" 'BEGIN {
    v = ir / n
    printf "BENCH %s %.2f instr\n", name, v
    if (limit != "") printf "BUDGET %s %.2f <= %s %s\n", name, v, limit, (v <= limit + 0 ? "ok" : "OVER")
  }'
}

report scope_instructions_recording record_loop 35
report scope_instructions_floor floor_loop ""
