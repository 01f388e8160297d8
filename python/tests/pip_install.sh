#!/bin/sh
# pip_install.sh CHECKOUT BUILD PYTHON... — `pip install ./python` from a copy
# of the checkout with each interpreter given, offline (--no-index) and with
# pip's default build isolation: the in-tree backend (python/strobe_build.py)
# needs neither setuptools nor wheel. Each install links the build's
# libstrobe.so, must leave the copied source tree exactly as it was (no
# egg-info, no build directory), and the installed package records a
# capture and reads it back. Fails on any step. Registered by
# python/CMakeLists.txt.
set -eu
CHECKOUT=$1 BUILD=$2
shift 2
work=$(mktemp -d /tmp/strobe-pip-XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -r "$CHECKOUT/python" "$work/python"
find "$work/python" \( -name __pycache__ -o -name '*.so' \) -prune -exec rm -rf {} +
mkdir -p "$work/include" && cp -r "$CHECKOUT/include/strobe" "$work/include/"
(cd "$work/python" && find . | sort) > "$work/tree.before"
n=0
for PYTHON in "$@"; do
  n=$((n + 1))
  site="$work/site-$n"
  STROBE_BUILD_DIR=$BUILD PIP_NO_INDEX=1 PIP_ROOT_USER_ACTION=ignore "$PYTHON" -m pip install --quiet --no-index --no-warn-script-location \
    --disable-pip-version-check --target "$site" "$work/python"
  (cd "$work/python" && find . | sort) > "$work/tree.after"
  if ! cmp -s "$work/tree.before" "$work/tree.after"; then
    echo "pip install ./python with $PYTHON changed the source tree:" >&2
    diff "$work/tree.before" "$work/tree.after" >&2 || true
    exit 1
  fi
  (cd "$work" && PYTHONPATH="$site" "$PYTHON" - "$site" <<'PY'
import os, sys, strobe
assert os.path.dirname(strobe.__file__) == os.path.join(sys.argv[1], "strobe"), strobe.__file__
with strobe.Recorder("pip.strobe"):
    with strobe.span("installed_span"):
        strobe.value("n", 3)
threads, records, totals = strobe.read_capture("pip.strobe")
ends = [r for r in records if r[0] == "end" and r[2] == "installed_span"]
values = [r for r in records if r[0] == "value" and r[2] == "n"]
assert len(ends) == 1 and len(values) == 1 and values[0][6] == 3.0, (ends, values)
print("pip install ./python with", sys.executable, sys.version.split()[0], ": recorded and read back",
      len(records), "records")
PY
  )
done
