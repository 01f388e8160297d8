#!/usr/bin/env python3
"""check_speedscope.py — validates a `strobe export --format speedscope` file
against speedscope's file format (file-format-spec.ts):

  - "$schema" is https://www.speedscope.app/file-format-schema.json, and
    "shared.frames" is an array of objects with a string "name";
  - every profile is "evented" with a name, a unit, and numeric startValue
    <= endValue;
  - in each profile, events are O/C with a valid frame index, "at" never
    decreases and stays within [startValue, endValue], and opens and closes
    are balanced (each C closes the innermost open frame);
  - with --schema (speedscope's published JSON schema, shipped in the npm
    package as dist/release/file-format-schema.json), the file also
    validates against it; a missing schema file or a missing Python
    jsonschema module (Debian python3-jsonschema) is an error, never a
    silent pass.

usage: check_speedscope.py FILE [--schema SCHEMA.json] [--expect-frames a,b]
Exit 0 when valid; otherwise prints the problems and exits 1.
"""
import argparse
import json
import numbers
import os
import sys

SCHEMA_URL = "https://www.speedscope.app/file-format-schema.json"


def check(doc, expect_frames=()):
    errors = []
    if doc.get("$schema") != SCHEMA_URL:
        errors.append("$schema is not the speedscope schema URL")
    frames = (doc.get("shared") or {}).get("frames")
    if not isinstance(frames, list):
        return errors + ["shared.frames is missing"]
    for i, fr in enumerate(frames):
        if not isinstance(fr, dict) or not isinstance(fr.get("name"), str):
            errors.append(f"frame {i} has no string name")
    profiles = doc.get("profiles")
    if not isinstance(profiles, list) or not profiles:
        return errors + ["profiles is missing or empty"]
    for p, prof in enumerate(profiles):
        where = f"profile {p} ({prof.get('name')!r})"
        if prof.get("type") != "evented":
            errors.append(f"{where}: type is not 'evented'")
        if not isinstance(prof.get("name"), str):
            errors.append(f"{where}: no name")
        if prof.get("unit") not in ("none", "nanoseconds", "microseconds", "milliseconds", "seconds", "bytes"):
            errors.append(f"{where}: bad unit")
        start, end = prof.get("startValue"), prof.get("endValue")
        if not isinstance(start, numbers.Number) or not isinstance(end, numbers.Number) or start > end:
            errors.append(f"{where}: startValue/endValue missing or start > end")
            continue
        stack, last = [], float("-inf")
        for i, e in enumerate(prof.get("events") or []):
            ew = f"{where} event {i}"
            if e.get("type") not in ("O", "C"):
                errors.append(f"{ew}: type is not O or C")
                break
            fr, at = e.get("frame"), e.get("at")
            if not isinstance(fr, int) or not 0 <= fr < len(frames):
                errors.append(f"{ew}: frame index {fr!r} is not in shared.frames")
                break
            if not isinstance(at, numbers.Number) or at < last or at < start or at > end:
                errors.append(f"{ew}: at {at!r} decreases or lies outside [{start}, {end}]")
                break
            last = at
            if e["type"] == "O":
                stack.append(fr)
            elif not stack or stack.pop() != fr:
                errors.append(f"{ew}: C does not close the innermost open frame")
                break
        if stack:
            errors.append(f"{where}: {len(stack)} frames left open (events unbalanced)")
    names = {fr.get("name") for fr in frames if isinstance(fr, dict)}
    for n in expect_frames:
        if n not in names:
            errors.append(f"expected a frame named {n!r}; found {sorted(map(str, names))}")
    return errors


def schema_errors(doc, schema_path):
    if not schema_path:
        return [], "no schema asked for"
    if not os.path.exists(schema_path):
        return [f"schema {schema_path} not found (scripts/npm-deps.sh installs speedscope)"], ""
    try:
        import jsonschema
    except ImportError:
        return ["python jsonschema not installed (Debian package python3-jsonschema)"], ""
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    v = jsonschema.Draft7Validator(schema)
    return [f"schema: {e.message[:200]} at {list(e.path)[:6]}" for e in v.iter_errors(doc)][:20], "validated against the schema"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--schema")
    ap.add_argument("--expect-frames", default="")
    a = ap.parse_args()
    with open(a.file, encoding="utf-8") as f:
        doc = json.load(f)
    errors = check(doc, [n for n in a.expect_frames.split(",") if n])
    serr, how = schema_errors(doc, a.schema)
    errors += serr
    for e in errors:
        print(f"check_speedscope: {a.file}: {e}", file=sys.stderr)
    if not errors:
        n = sum(len(p.get("events", [])) for p in doc["profiles"])
        print(f"check_speedscope: {a.file}: {len(doc['profiles'])} profiles, {n} events valid ({how})")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
