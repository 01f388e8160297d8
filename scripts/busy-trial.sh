#!/usr/bin/env bash
# busy-trial.sh — issue 31 item 4's proof that test verdicts do not depend on
# the scheduler (docs/conventions.md §Loaded machine): runs CTest beside two busy
# loops, each pinned with taskset to one of the first two CPUs, so every test
# shares its cores with a process that never yields. The loops are this
# script's children, stopped by their own process ids when CTest returns (or
# the script is interrupted); nothing else is touched.
#
# usage: busy-trial.sh BUILD_DIR [CTEST_ARGS...]
#   e.g. busy-trial.sh build -R '^(test_crash|test_fork|test_session)'
#        busy-trial.sh build              (the whole suite: the lead's run)
# env:   BUSY_TRIAL_CPUS  the two CPUs to pin to, default "0 1"
# Exit status: CTest's. Prints the loops' CPUs, the load average before and
# after, and the wall time.
set -euo pipefail

if [ $# -lt 1 ] || [ ! -d "$1" ]; then
  echo "usage: $0 BUILD_DIR [CTEST_ARGS...]" >&2
  exit 2
fi
build=$1
shift
command -v taskset > /dev/null || { echo "$0: taskset is missing (Debian package util-linux)" >&2; exit 2; }
read -r -a cpus <<< "${BUSY_TRIAL_CPUS:-0 1}"
[ "${#cpus[@]}" -eq 2 ] || { echo "$0: BUSY_TRIAL_CPUS must name two CPUs" >&2; exit 2; }

pids=()
stop_loops() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2> /dev/null || true; done
  pids=()
}
trap stop_loops EXIT INT TERM

for c in "${cpus[@]}"; do
  taskset -c "$c" bash -c 'while :; do :; done' &
  pids+=("$!")
done
echo "busy-trial: two busy loops pinned to CPUs ${cpus[*]} (pids ${pids[*]}); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
rc=0
ctest --test-dir "$build" --output-on-failure "$@" || rc=$?
echo "busy-trial: ctest exit $rc after $(( $(date +%s) - start )) s; load after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$rc"
