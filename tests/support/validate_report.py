#!/usr/bin/env python3
"""validate_report.py — validates Strobe report JSON (version 1) against
docs/report-schema.json (JSON Schema draft 2020-12).

    validate_report.py [--schema SCHEMA] [--dir DIR] [--expect PREFIX]... [FILE]...

Every FILE given, and every *.json file in DIR, must validate; the first
failure of each file is printed with its JSON path, and the exit status is 1.
Each --expect PREFIX must name at least one checked file ("PREFIX-*.json"),
and with --dir the directory must hold at least one report: a test that
silently stopped producing reports fails here instead of passing unchecked.

Used by the CTest test `report_schema` (tests/CMakeLists.txt) after the
session tests saved their reports (tests/support/report_check.h).
"""
import argparse
import glob
import json
import os
import sys

from jsonschema import Draft202012Validator


def json_path(error):
    path = "$"
    for part in error.absolute_path:
        path += "[%d]" % part if isinstance(part, int) else ".%s" % part
    return path


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schema", default=os.path.join(here, "..", "..", "docs", "report-schema.json"))
    parser.add_argument("--dir", help="validate every *.json file in this directory (at least one)")
    parser.add_argument("--expect", action="append", default=[],
                        help="a file prefix (test name) that must have produced at least one report")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()

    with open(args.schema, encoding="utf-8") as f:
        schema = json.load(f)
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)

    files = list(args.files)
    if args.dir is not None:
        found = sorted(glob.glob(os.path.join(args.dir, "*.json")))
        if not found:
            print("validate_report: no report in %s" % args.dir, file=sys.stderr)
            return 1
        files += found
    if not files:
        print("validate_report: no report given", file=sys.stderr)
        return 1

    failed = 0
    for name in files:
        try:
            with open(name, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            print("%s: not JSON: %s" % (name, e), file=sys.stderr)
            failed += 1
            continue
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        for error in errors[:5]:
            print("%s: %s: %s" % (name, json_path(error), error.message), file=sys.stderr)
        failed += bool(errors)

    basenames = [os.path.basename(f) for f in files]
    for prefix in args.expect:
        if not any(b.startswith(prefix + "-") for b in basenames):
            print("validate_report: %s produced no report" % prefix, file=sys.stderr)
            failed += 1

    print("validate_report: %d report(s), %d failed" % (len(files), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
