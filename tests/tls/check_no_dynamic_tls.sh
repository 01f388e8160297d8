#!/usr/bin/env bash
# check_no_dynamic_tls.sh — no function of libstrobe.so reaches a
# thread-local through __tls_get_addr (docs/recording.md §Thread-locals):
# every _Thread_local of the library uses the initial-exec model, so a scope,
# a number, a stage or an operation reads its thread's state with one
# %fs-relative load in the shared library as in the static one. Disassembles
# the library (objdump -d) and fails naming each function that calls it.
#
# Usage: check_no_dynamic_tls.sh <libstrobe.so>
set -euo pipefail
lib=$1
command -v objdump >/dev/null || { echo "check_no_dynamic_tls: objdump is missing (Debian package binutils)" >&2; exit 1; }
[ -f "$lib" ] || { echo "check_no_dynamic_tls: $lib not found" >&2; exit 1; }
dis=$(objdump -d --no-show-raw-insn "$lib")
# A disassembly with no function in it would pass vacuously.
grep -q '<strobe_op_begin>:' <<<"$dis" || { echo "check_no_dynamic_tls: no strobe_op_begin in $lib" >&2; exit 1; }
callers=$(awk '/^[0-9a-f]+ <.*>:$/ { fn = $2 } /call.*<__tls_get_addr/ { n[fn]++ } END { for (f in n) print f, n[f] }' <<<"$dis")
if [ -n "$callers" ]; then
  echo "check_no_dynamic_tls: functions of $lib calling __tls_get_addr (a _Thread_local without tls_model(\"initial-exec\")):" >&2
  echo "$callers" >&2
  exit 1
fi
echo "check_no_dynamic_tls: no __tls_get_addr call in $lib"
