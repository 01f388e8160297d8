#!/usr/bin/env bash
# check_callgrind_budgets.sh — the instruction budgets of the hot path
# (scripts/bench-callgrind.sh; docs/recording.md, Cost), as a test: runs the
# script on a smaller N and fails unless each budget line below is there and
# ok. Instruction counts are exact, not timed, so this cannot flake under load.
# A missing valgrind fails the test (the script's SKIP line), it never passes.
#
# Usage: check_callgrind_budgets.sh <source-dir> <build-dir>
set -euo pipefail
src=$1
build=$2
out=$(STROBE_CALLGRIND_N=100000 bash "$src/scripts/bench-callgrind.sh" "$build")
echo "$out"
if grep -q '^SKIP' <<<"$out"; then
  echo "check_callgrind_budgets: valgrind is missing (Debian package valgrind)" >&2
  exit 1
fi
status=0
for name in scope_instructions_recording value_instructions_recording counter_instructions_recording \
            gauge_instructions_recording nested_scope_instructions_recording \
            explicit_scope_instructions_ratio explicit_interned_scope_instructions_ratio \
            alloc_instructions_recording free_instructions_recording malloc_free_idle_instructions_ratio; do
  if ! grep -Eq "^BUDGET $name [0-9.]+ <= [0-9.]+ ok$" <<<"$out"; then
    echo "check_callgrind_budgets: no 'BUDGET $name ... ok' line" >&2
    status=1
  fi
done
# The operation API (scripts/bench-op-callgrind.sh, docs/sessions.md §Cost
# when nothing listens, docs/recording.md §Thread-locals).
ops=$(STROBE_CALLGRIND_N=20000 bash "$src/scripts/bench-op-callgrind.sh" "$build")
echo "$ops"
for name in op_counter_idle_instructions op_counter_idle_instructions_shared stage_pair_shared_ratio \
            explicit_pair_idle_instructions explicit_pair_idle_instructions_shared \
            op_idle_mutex_instructions op_idle_mutex_instructions_shared; do
  if ! grep -Eq "^BUDGET $name [0-9.]+ <= [0-9.]+ ok$" <<<"$ops"; then
    echo "check_callgrind_budgets: no 'BUDGET $name ... ok' line" >&2
    status=1
  fi
done
for name in scope_instructions_ratio value_instructions_ratio; do
  if ! grep -Eq "^BENCH $name [0-9.]+ ratio$" <<<"$out"; then
    echo "check_callgrind_budgets: no 'BENCH $name ... ratio' line" >&2
    status=1
  fi
done
exit $status
