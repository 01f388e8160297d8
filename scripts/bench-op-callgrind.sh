#!/usr/bin/env bash
# bench-op-callgrind.sh — what the operation API costs per call, counted
# exactly by callgrind (docs/sessions.md §Cost when nothing listens). Runs the
# already built bench_op_instructions (static library) and
# bench_op_instructions_shared (libstrobe.so) and prints, per call, the
# inclusive Ir of each loop of bench/bench_op_instructions.c over N, less the
# empty loop's:
#   BENCH op_pair_idle_instructions[_shared]       strobe_op_begin + strobe_op_end, nothing listening
#   BENCH op_phase_pair_idle_instructions[_shared] strobe_op_begin_in_phase + strobe_op_end
#   BENCH stage_pair_idle_instructions[_shared]    a stage pair inside an operation
#   BENCH bare_stage_pair_idle_instructions[_shared]  a stage pair outside any operation
#   BENCH op_counter_idle_instructions[_shared]    one strobe_op_counter_add (budget <= 10)
#   BENCH app_pair_idle_instructions[_shared]      strobe_app_scope_begin + strobe_app_scope_end
#   BENCH explicit_pair_idle_instructions[_shared] STROBE_BEGIN + STROBE_END on a named thread (budget <= 10)
#   BENCH op_pair_session_instructions[_shared]    an operation pair with a session open
#   BENCH stage_pair_session_instructions[_shared] a stage pair with a session open
#   BENCH op_counter_session_instructions[_shared] a counter add with a session open
#   BENCH op_pair_idle_ratio[_shared]              the idle operation pair over the idle explicit scope
#                                                  pair of the same run (budget <= 20 instructions a pair,
#                                                  printed; not met: docs/sessions.md §Cost when nothing listens)
#   BENCH op_idle_mutex_instructions[_shared]      instructions spent in pthread_mutex_lock and _unlock by the
#                                                  idle operation, phase and stage loops (budget 0: no lock)
# and the shared library's figure over the static one for the stage pair
# (stage_pair_shared_ratio, budget <= 1.05: a thread-local reached through
# __tls_get_addr shows as a ratio above 1; it was 1.5, docs/recording.md
# §Thread-locals).
# Builds nothing; prints a SKIP line and succeeds when valgrind is missing.
#
# Usage: scripts/bench-op-callgrind.sh [build-dir]   (default: build)
set -euo pipefail
CALLGRIND_NAME=bench-op-callgrind
. "$(dirname "$0")/callgrind-lib.sh"

build_dir=${1:-build}
n=${STROBE_CALLGRIND_N:-200000}

line() { # name value budget
  awk -v name="$1" -v v="$2" -v limit="$3" 'BEGIN {
    printf "BENCH %s %.2f instr\n", name, v
    if (limit != "") printf "BUDGET %s %.2f <= %s %s\n", name, v, limit, (v <= limit + 0 ? "ok" : "OVER")
  }'
}

per_n() { # function -> inclusive Ir / N less the empty loop's
  local ir empty
  ir=$(callgrind_ir "$1") || { echo "bench-op-callgrind: $1 not found" >&2; exit 1; }
  empty=$(callgrind_ir empty_op_loop) || { echo "bench-op-callgrind: empty_op_loop not found" >&2; exit 1; }
  awk -v ir="$ir" -v e="$empty" -v n="$n" 'BEGIN { printf "%.4f", (ir - e) / n }'
}

stage_static=""
for variant in "" _shared; do
  callgrind_start "$build_dir/bench/bench_op_instructions$variant" "$n"
  line op_pair_idle_instructions$variant "$(per_n idle_op_loop)" ""
  line op_phase_pair_idle_instructions$variant "$(per_n idle_phase_loop)" ""
  stage=$(per_n idle_stage_loop)
  line stage_pair_idle_instructions$variant "$stage" ""
  line bare_stage_pair_idle_instructions$variant "$(per_n idle_bare_stage_loop)" ""
  line op_counter_idle_instructions$variant "$(per_n idle_counter_loop)" 10
  line app_pair_idle_instructions$variant "$(per_n idle_app_loop)" ""
  line explicit_pair_idle_instructions$variant "$(per_n idle_explicit_loop)" 10
  line op_pair_session_instructions$variant "$(per_n session_op_loop)" ""
  line stage_pair_session_instructions$variant "$(per_n session_stage_loop)" ""
  line op_counter_session_instructions$variant "$(per_n session_counter_loop)" ""
  awk -v op="$(per_n idle_op_loop)" -v sc="$(per_n idle_explicit_loop)" -v name=op_pair_idle_ratio$variant \
    -v v="$variant" 'BEGIN {
    printf "BENCH %s %.2f ratio\n", name, op / sc
    printf "BUDGET op_pair_idle_instructions%s %.2f <= 20 %s\n", v, op, (op <= 20 ? "ok" : "OVER")
  }'
  rm -f "$out" "$out.log" "$out.txt"
  # Only the idle loops, collected apart: what the mutex calls in them cost.
  callgrind_run --toggle-collect=idle_op_loop --toggle-collect=idle_phase_loop --toggle-collect=idle_stage_loop \
    "$build_dir/bench/bench_op_instructions$variant" "$n"
  # glibc names them pthread_mutex_lock@@GLIBC_2.2.5 and the like: any suffix.
  locks=$(awk '/=>|>  / { next }
    /:_*pthread_mutex_(lock|unlock)([@ ]|$)/ { v = $1; gsub(",", "", v); s += v }
    END { print s + 0 }' "$out.log")
  line op_idle_mutex_instructions$variant "$locks" 0
  if [ -z "$variant" ]; then
    stage_static=$stage
  else
    awk -v a="$stage" -v b="$stage_static" 'BEGIN {
      r = a / b
      printf "BENCH stage_pair_shared_ratio %.3f ratio\n", r
      printf "BUDGET stage_pair_shared_ratio %.3f <= 1.05 %s\n", r, (r <= 1.05 ? "ok" : "OVER")
    }'
  fi
  rm -f "$out" "$out.log" "$out.txt"
done
