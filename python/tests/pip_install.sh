#!/bin/sh
# pip_install.sh PYTHON CHECKOUT BUILD — `pip install ./python` from the
# checkout into a scratch directory, without the registry (--no-index, no
# build isolation: setuptools is the system's), linking the build's
# libstrobe.so; then the installed package records a capture and reads it
# back. Fails on any step. Registered by python/CMakeLists.txt.
set -eu
PYTHON=$1 CHECKOUT=$2 BUILD=$3
work=$(mktemp -d /tmp/strobe-pip-XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -r "$CHECKOUT/python" "$work/python"
mkdir -p "$work/include" && cp -r "$CHECKOUT/include/strobe" "$work/include/"
STROBE_BUILD_DIR=$BUILD "$PYTHON" -m pip install --quiet --no-index --no-build-isolation --no-warn-script-location \
  --target "$work/site" "$work/python"
cd "$work"
PYTHONPATH="$work/site" "$PYTHON" - <<'PY'
import os, strobe
assert os.path.dirname(strobe.__file__).endswith("site/strobe"), strobe.__file__
with strobe.Recorder("pip.strobe"):
    with strobe.span("installed_span"):
        strobe.value("n", 3)
threads, records, totals = strobe.read_capture("pip.strobe")
ends = [r for r in records if r[0] == "end" and r[2] == "installed_span"]
values = [r for r in records if r[0] == "value" and r[2] == "n"]
assert len(ends) == 1 and len(values) == 1 and values[0][6] == 3.0, (ends, values)
print("pip install ./python: recorded and read back", len(records), "records")
PY
