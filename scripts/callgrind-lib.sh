# callgrind-lib.sh — what the callgrind benches share (bench-callgrind.sh,
# bench-drain-callgrind.sh): the valgrind check, the built program check, a
# temporary output removed on exit, one callgrind run with its annotation,
# and reading a function's inclusive instruction count from it.
#
# Sourced, never run. Each function speaks as $CALLGRIND_NAME (the calling
# script's name, set before use) and exits the calling script on failure.
# Must never: build anything, or print to stdout but the SKIP line (the
# callers' stdout is their BENCH lines).

# Exits the caller with success and a SKIP line when valgrind is missing.
callgrind_require() {
  if ! command -v valgrind >/dev/null 2>&1 || ! command -v callgrind_annotate >/dev/null 2>&1; then
    echo "SKIP $CALLGRIND_NAME: valgrind is not installed"
    exit 0
  fi
}

# callgrind_need EXE: exits the caller when the bench program was not built.
callgrind_need() {
  [ -x "$1" ] || { echo "$CALLGRIND_NAME: $1 not found; build first (make build)" >&2; exit 1; }
}

# Sets $out, the callgrind output file ($out.txt: the program's stdout;
# $out.log: valgrind's stderr, then the annotation), all removed on exit.
callgrind_tmp() {
  out=$(mktemp "/tmp/strobe-$CALLGRIND_NAME.XXXXXX")
  trap 'rm -f "$out" "$out.log" "$out.txt"' EXIT
}

# callgrind_run EXE ARGS...: runs the program under callgrind (its stdout in
# $out.txt) and annotates the result with inclusive counts into $out.log;
# on failure prints valgrind's messages and exits the caller.
callgrind_run() {
  if ! valgrind --tool=callgrind --callgrind-out-file="$out" "$@" >"$out.txt" 2>"$out.log"; then
    echo "$CALLGRIND_NAME: valgrind failed on $(basename "$1"):" >&2
    cat "$out.log" >&2
    exit 1
  fi
  callgrind_annotate --inclusive=yes --threshold=100 --auto=no "$out" >"$out.log"
}

# callgrind_start EXE ARGS...: the above in order, for the bench program EXE:
# SKIP without valgrind, fail when EXE was not built, then one run.
callgrind_start() {
  callgrind_require
  callgrind_need "$1"
  callgrind_tmp
  callgrind_run "$@"
}

# callgrind_ir FUNCTION: its inclusive Ir in $out.log; status 1 and no
# output when the annotation does not name it.
# Summary lines look like "  12,345,678 (41.2%)  /path/file.c:record_loop [/path/exe]"
# (older callgrind_annotate prints no percentage; GCC may suffix clones such as
# .constprop.0, callgrind recursion levels as 'N). Code inlined from strobe.h
# gets an entry of its own, "strobe.h:record_loop", which is part of the
# function's inclusive count, so the largest entry for the name is the
# function's inclusive total; call-graph lines (=>, >) are not totals.
callgrind_ir() {
  awk -v fn="$1" '
    /=>|>  / { next }
    $0 ~ ("[:( ]" fn "(\\.[a-z]+\\.[0-9]+)?( |'"'"'|$)") {
      v = $1; gsub(",", "", v)
      if (v ~ /^[0-9]+$/ && v + 0 > best) best = v + 0
      found = 1
    }
    END { if (found) print best; else exit 1 }' "$out.log"
}
