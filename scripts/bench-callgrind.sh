#!/usr/bin/env bash
# bench-callgrind.sh — instructions per recorded scope, counted exactly by
# callgrind rather than timed, so the figure is repeatable on any machine and
# a hot-path regression of a single instruction shows. Runs the already built
# bench_instructions under callgrind and prints, per begin+end pair:
#   BENCH scope_instructions_recording  inclusive Ir of record_loop / N  (budget <= 35)
#   BENCH scope_instructions_floor      inclusive Ir of floor_loop / N   (two tick reads, two stores)
#   BENCH scope_instructions_ratio      the two above, divided: this run's ratio to the floor
# and per number (docs/recording.md, Numbers), what one STROBE_VALUE,
# STROBE_COUNTER_ADD or STROBE_GAUGE_SET adds to its loop (inclusive Ir of
# value_loop, counter_loop, gauge_loop / N, less empty_loop's / N, the same
# loop doing nothing):
#   BENCH value_instructions_recording    STROBE_VALUE           (budget <= 16)
#   BENCH counter_instructions_recording  STROBE_COUNTER_ADD     (budget <= 16)
#   BENCH gauge_instructions_recording    STROBE_GAUGE_SET       (budget <= 16)
#   BENCH value_instructions_ratio        the worst of the three over the floor's per event (floor / 2)
# and the same on sites made at run time (strobe_site_intern, docs/recording.md
# Run-time names), under the same budgets:
#   BENCH scope_instructions_interned     a STROBE_SCOPE_SITE pair (budget <= 35)
#   BENCH value_instructions_interned     a STROBE_VALUE_SITE      (budget <= 16)
# and scopes nested in the same C frame as their parent (three in one function):
#   BENCH nested_scope_instructions_recording  inclusive Ir of nested_loop / 3N (budget <= 50: a
#         recorded pair plus the same-frame check, docs/recording.md Unwinding; 302 before it)
# and element attribution (docs/recording.md §Elements): an attributed scope
# costs at most a recorded scope plus one 16-byte event, whose budget is a
# number's:
#   BENCH element_instructions_recording       one STROBE_ELEMENT_SITE on an open scope (budget <= 16)
#   BENCH attributed_scope_instructions_recording  a STROBE_SCOPE_ELEMENT pair (budget <= 35 + 16)
#   BENCH attributed_scope_instructions_ratio  the latter over this run's plain scope
# and allocations (docs/memory.md §Allocations), what one STROBE_ALLOC or STROBE_FREE adds to its loop:
#   BENCH alloc_instructions_recording    STROBE_ALLOC  (budget <= 30)
#   BENCH free_instructions_recording     STROBE_FREE   (budget <= 30)
# and libstrobe_malloc idle, malloc+free through it over libc's, in one process (bench_malloc --count):
#   BENCH malloc_free_idle_instructions_ratio   (budget <= 1.05)
# and explicit pairs (STROBE_BEGIN + STROBE_END, by name and on an interned site):
#   BENCH explicit_scope_instructions_recording, explicit_interned_scope_instructions_recording
#   BENCH explicit_scope_instructions_ratio, explicit_interned_scope_instructions_ratio
#         each over this run's block scope (budget <= 1.2)
# and locks: BENCH lock_pair_instructions_recording, what recording adds to an
# uncontended strobe_mutex lock+unlock over pthread's, and its ratio to this
# run's scope pair (budget <= 1: two events, a scope's two);
# Only the loops' own call trees are counted: the drain thread's work is not.
# Builds nothing; prints a SKIP line and succeeds when valgrind is missing
# (scripts/callgrind-lib.sh).
#
# Usage: scripts/bench-callgrind.sh [build-dir]   (default: build)
set -euo pipefail
CALLGRIND_NAME=bench-callgrind
. "$(dirname "$0")/callgrind-lib.sh"

build_dir=${1:-build}
n=${STROBE_CALLGRIND_N:-1000000}
exe="$build_dir/bench/bench_instructions"

callgrind_start "$exe" "$n"
cat "$out.txt" # the program's own note (events lost, if any)

per_n() { # function -> inclusive Ir / N
  local ir
  if ! ir=$(callgrind_ir "$1"); then
    echo "bench-callgrind: $1 not found in callgrind_annotate output" >&2
    exit 1
  fi
  awk -v ir="$ir" -v n="$n" 'BEGIN { printf "%.4f", ir / n }'
}

line() { # name value budget
  awk -v name="$1" -v v="$2" -v limit="$3" -v unit="${4:-instr}" 'BEGIN {
    printf "BENCH %s %.2f %s\n", name, v, unit
    if (limit != "") printf "BUDGET %s %.2f <= %s %s\n", name, v, limit, (v <= limit + 0 ? "ok" : "OVER")
  }'
}

scope=$(per_n record_loop)
floor=$(per_n floor_loop)
empty=$(per_n empty_loop)
line scope_instructions_recording "$scope" 35
line scope_instructions_floor "$floor" ""
line scope_instructions_ratio "$(awk -v a="$scope" -v b="$floor" 'BEGIN { print a / b }')" "" ratio
worst=0
for kind in value counter gauge; do
  v=$(awk -v a="$(per_n ${kind}_loop)" -v e="$empty" 'BEGIN { print a - e }')
  line ${kind}_instructions_recording "$v" 16
  worst=$(awk -v a="$v" -v w="$worst" 'BEGIN { print (a > w ? a : w) }')
done
line value_instructions_ratio "$(awk -v a="$worst" -v b="$floor" 'BEGIN { print a / (b / 2) }')" "" ratio
line nested_scope_instructions_recording "$(awk -v a="$(per_n nested_loop)" 'BEGIN { print a / 3 }')" 50
# Sites made at run time (strobe_site_intern) under the same budgets.
line scope_instructions_interned "$(per_n interned_loop)" 35
line value_instructions_interned "$(awk -v a="$(per_n interned_value_loop)" -v e="$empty" 'BEGIN { print a - e }')" 16
# Explicit begin and end (docs/recording.md §Explicit begin and end): at most 1.2 times a block scope.
for form in explicit explicit_interned; do
  v=$(per_n ${form}_loop)
  line ${form}_scope_instructions_recording "$v" ""
  r=$(awk -v a="$v" -v b="$scope" 'BEGIN { print a / b }')
  line ${form}_scope_instructions_ratio "$r" 1.2 ratio
done
# Element attribution: one event more than a plain scope.
line element_instructions_recording "$(awk -v a="$(per_n element_loop)" -v e="$empty" 'BEGIN { print a - e }')" 16
attributed=$(per_n attributed_loop)
line attributed_scope_instructions_recording "$attributed" 51
line attributed_scope_instructions_ratio "$(awk -v a="$attributed" -v b="$scope" 'BEGIN { print a / b }')" "" ratio
# Allocations and frees (docs/memory.md §Allocations): three and two events, under 30 instructions each.
line alloc_instructions_recording "$(awk -v a="$(per_n alloc_loop)" -v e="$empty" 'BEGIN { print a - e }')" 30
line free_instructions_recording "$(awk -v a="$(per_n free_loop)" -v e="$empty" 'BEGIN { print a - e }')" 30

# The interposer idle (docs/memory.md §The interposer): malloc+free through libstrobe_malloc over the same
# pair on libc's, nothing recording, counted in one process (bench_malloc --count runs itself preloaded).
bm="$build_dir/bench/bench_malloc"
if [ -x "$bm" ]; then
  n=${STROBE_CALLGRIND_MALLOC_N:-200000}
  # Preloaded here, not by its own exec: callgrind follows no exec (the annotation then runs preloaded
  # too, which changes nothing for it: nothing records there).
  STROBE_BENCH_MALLOC_CHILD=1 LD_PRELOAD="$build_dir/libstrobe_malloc.so" callgrind_run "$bm" --count "$n"
  line malloc_free_idle_instructions_ratio \
    "$(awk -v a="$(per_n malloc_idle_loop)" -v b="$(per_n malloc_plain_loop)" 'BEGIN { print a / b }')" 1.05 ratio
fi

# Locks (docs/locks.md): what recording adds to an uncontended strobe_mutex
# lock+unlock (an acquisition and a release) over the plain pthread pair,
# at most two scope events' cost (this run's scope pair).
lock=$(awk -v a="$(per_n lock_loop)" -v b="$(per_n plain_lock_loop)" 'BEGIN { print a - b }')
line lock_pair_instructions_recording "$lock" "$scope"
line lock_pair_instructions_ratio "$(awk -v a="$lock" -v b="$scope" 'BEGIN { print a / b }')" 1 ratio

# Call tracing (docs/exploration.md §Cost): what a traced call adds, counted
# on bench_calltrace's Fibonacci (inclusive Ir of run_traced less run_plain's,
# per call), and its ratio to the floor's. A figure, not a budget: call
# tracing's budget is in time (bench_calltrace: calltrace_ratio <= 3), where
# the floor's two tick reads weigh what they cost, not one instruction each.
ct="$build_dir/bench/bench_calltrace"
if [ -x "$ct" ]; then
  ctn=${STROBE_CALLGRIND_FIB:-22}
  callgrind_run "$ct" callgrind "$ctn"
  calls=$(awk '/^calls / { print $2 }' "$out.txt")
  n=$calls
  per_call=$(awk -v a="$(per_n run_traced)" -v b="$(per_n run_plain)" 'BEGIN { print a - b }')
  line calltrace_instructions_per_call "$per_call" ""
  line calltrace_instructions_ratio "$(awk -v a="$per_call" -v b="$floor" 'BEGIN { print a / b }')" "" ratio
fi
