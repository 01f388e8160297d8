#!/usr/bin/env python3
"""check-layers.py — checks that the include graph agrees with the layers.

Owns: deriving the include graph of src/, include/, tools/, examples/ (C
`#include`) and viewer/*.js (ES module `import`/`export ... from`), and
checking every edge against the layer table in README.md's Layout section,
the one place the rule is written (docs/layers.md explains it). It reads that
table; it keeps no copy of its own.

The rule, as the README states it: a file may use files of its own layer and
of layers with a lower rank; never a higher rank, never another layer of the
same rank. A header named *_internal.h is private to its layer. Every file
scanned must belong to a layer, and every path the table names must exist,
so neither the code nor the table can drift away from the other unnoticed.

Must never: change a file, or pass when it could not read the table.

Usage: check-layers.py [--root DIR] [--extra-edge FILE=INCLUDE ...] [--self-test]
  --extra-edge adds an edge as if FILE held `#include "INCLUDE"` (or, for a
  .js file, an import of INCLUDE), to see a back edge caught without editing
  the tree.
  --self-test adds one back edge of each kind the rule forbids (SELF_TEST),
  one at a time, and passes only if each is reported naming its file, its
  include and the rule, and nothing else changes (CTest: layers_self_test).
Exit status: 0 when every edge keeps the rule, 1 when one does not (each
offending edge printed with the file, the include and the rule it breaks),
2 when the table cannot be read.
"""
import argparse
import os
import re
import sys

TABLE_FILE = "README.md"
SECTION = "## Layout"
C_EXT = (".c", ".h", ".hpp")
SCAN = [("src", C_EXT), ("include", C_EXT), ("tools", C_EXT), ("examples", C_EXT), ("viewer", (".js",))]
# Where a quoted or angled include is looked for after the including file's
# own directory: the include paths the build gives (CMakeLists.txt).
C_INCLUDE_DIRS = ["src", "include", "tools/strobe"]


class TableError(Exception):
    pass


def read_table(root):
    """[(path, rank, layer)] from the Markdown tables of README.md's Layout
    section whose header row starts with `| rank | layer |`."""
    path = os.path.join(root, TABLE_FILE)
    try:
        text = open(path, encoding="utf-8").read()
    except OSError as e:
        raise TableError(f"{TABLE_FILE}: {e.strerror}")
    start = text.find("\n" + SECTION + "\n")
    if start < 0:
        raise TableError(f"{TABLE_FILE}: no '{SECTION}' section")
    end = text.find("\n## ", start + 1)
    section = text[start:end if end > 0 else len(text)]
    rows, in_table = [], False
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else None
        if cells is None:
            in_table = False
            continue
        if [c.lower() for c in cells[:2]] == ["rank", "layer"]:
            in_table = True
            continue
        if not in_table or set(cells[0]) <= set("-: "):
            continue
        if len(cells) < 3 or not cells[0].isdigit() or not cells[1]:
            raise TableError(f"{TABLE_FILE}: bad layer row: {line.strip()}")
        paths = re.findall(r"`([^`]+)`", cells[2])
        if not paths:
            raise TableError(f"{TABLE_FILE}: layer {cells[1]} names no `path`")
        for p in paths:
            rows.append((p, int(cells[0]), cells[1]))
    if not rows:
        raise TableError(f"{TABLE_FILE}: no '| rank | layer | files |' table in the '{SECTION}' section")
    return rows


def layer_of(rel, table):
    """The (rank, layer) of the longest table path that is rel or a directory above it."""
    best = None
    for path, rank, layer in table:
        hit = rel == path or (path.endswith("/") and rel.startswith(path))
        if hit and (best is None or len(path) > len(best[0])):
            best = (path, rank, layer)
    return (best[1], best[2]) if best else None


def strip_comments(text):
    # Keeps line numbers: a comment becomes the newlines it held.
    def keep_lines(m):
        return "\n" * m.group(0).count("\n")
    return re.sub(r"/\*.*?\*/|//[^\n]*", keep_lines, text, flags=re.S)


C_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.M)
JS_IMPORT = re.compile(r"""\b(?:import|export)\b[^'";]*?\bfrom\s*(['"])(.+?)\1|\bimport\s*\(?\s*(['"])(.+?)\3""", re.S)


def edges_of(root, rel):
    """[(line, spelled, resolved-or-None, system)] for one file."""
    text = strip_comments(open(os.path.join(root, rel), encoding="utf-8", errors="replace").read())
    here = os.path.dirname(rel)
    out = []
    if rel.endswith(".js"):
        for m in JS_IMPORT.finditer(text):
            spec = m.group(2) or m.group(4)
            line = text.count("\n", 0, m.start()) + 1
            if not spec.startswith("."):
                out.append((line, spec, None, True))  # a bare specifier: not a file of this tree
                continue
            target = os.path.normpath(os.path.join(here, spec))
            out.append((line, spec, target if os.path.isfile(os.path.join(root, target)) else None, False))
        return out
    for m in C_INCLUDE.finditer(text):
        quoted, spec = m.group(1) == '"', m.group(2).strip()
        line = text.count("\n", 0, m.start()) + 1
        dirs = ([here] if quoted else []) + C_INCLUDE_DIRS
        target = None
        for d in dirs:
            cand = os.path.normpath(os.path.join(d, spec))
            if os.path.isfile(os.path.join(root, cand)):
                target = cand
                break
        # An angled include that is not in the tree is a system header.
        out.append((line, spec, target, not quoted and target is None))
    return out


def scanned_files(root):
    for top, exts in SCAN:
        base = os.path.join(root, top)
        for d, subdirs, files in os.walk(base):
            subdirs[:] = sorted(s for s in subdirs if s != "node_modules")
            for f in sorted(files):
                if f.endswith(exts):
                    yield os.path.relpath(os.path.join(d, f), root)


def check(root, table, extra):
    problems = []
    for path, _, layer in table:
        if not os.path.exists(os.path.join(root, path)):
            problems.append(f"{TABLE_FILE}: layer {layer} names `{path}`, which does not exist")
    files = list(scanned_files(root))
    nedges = 0
    for rel in files:
        mine = layer_of(rel, table)
        if mine is None:
            problems.append(f"{rel}: in no layer of {TABLE_FILE}'s Layout table (add its directory to a layer)")
            continue
        edges = edges_of(root, rel)
        for spec in extra.get(rel, []):
            target = spec if os.path.isfile(os.path.join(root, spec)) else None
            for d in ([os.path.dirname(rel)] + C_INCLUDE_DIRS) if target is None else []:
                cand = os.path.normpath(os.path.join(d, spec))
                if os.path.isfile(os.path.join(root, cand)):
                    target = cand
                    break
            edges.append((0, spec, target, False))
        for line, spec, target, system in edges:
            where = f"{rel}:{line}" if line else f"{rel} (--extra-edge)"
            if system:
                continue
            if target is None:
                problems.append(f'{where}: includes "{spec}", which is no file of this repository')
                continue
            nedges += 1
            theirs = layer_of(target, table)
            if theirs is None:
                problems.append(f'{where}: includes "{spec}" ({target}), which is in no layer')
                continue
            (rank, layer), (trank, tlayer) = mine, theirs
            if layer == tlayer:
                continue
            if os.path.basename(target).endswith("_internal.h"):
                problems.append(f'{where}: includes "{spec}" ({target}): a *_internal.h header is private '
                                f"to its layer ({tlayer}), and this file is in {layer}")
            elif trank > rank:
                problems.append(f'{where}: includes "{spec}" ({target}): {layer} (rank {rank}) may not use '
                                f"{tlayer} (rank {trank}): a layer uses only layers of lower rank")
            elif trank == rank:
                problems.append(f'{where}: includes "{spec}" ({target}): {layer} and {tlayer} share rank {rank}, '
                                f"and layers of the same rank never use each other")
    return problems, len(files), nedges


# (file, include, words the report must hold): one edge per kind of breach.
SELF_TEST = [
    ("src/probe/thread.c", "collect/collect.h", "probe (rank 2) may not use collect (rank 3)"),
    ("src/platform/clock_common.c", "probe/probe.h", "platform (rank 1) may not use probe (rank 2)"),
    ("src/session/session.c", "strobe/record.h", "session and capture share rank 6"),
    ("src/server/api.c", "session/session_internal.h", "private to its layer (session)"),
    ("viewer/detail.js", "./flame.js", "viewer-detail and viewer-flame share rank 4"),
    ("src/probe/site.c", "collect/no_such_header.h", "no file of this repository"),
    ("tools/strobe/io/input.c", "analysis/aggregate.h", "cli-io (rank 10) may not use cli-analysis (rank 11)"),
    ("tools/strobe/exports/export_csv.c", "commands/cmd_report.c", "cli-exports (rank 12) may not use cli-commands"),
]


def self_test(root, table):
    base, _, _ = check(root, table, {})
    failed = 0
    for f, inc, words in SELF_TEST:
        got, _, _ = check(root, table, {f: [inc]})
        new = [p for p in got if p not in base]
        ok = len(new) == 1 and new[0].startswith(f) and inc in new[0] and words in new[0]
        print(f"{'ok' if ok else 'FAIL'}: {f} -> {inc}: {new[0] if len(new) == 1 else new}")
        failed += not ok
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--extra-edge", action="append", default=[], metavar="FILE=INCLUDE")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    extra = {}
    for e in args.extra_edge:
        f, sep, inc = e.partition("=")
        if not sep or not f or not inc:
            print(f"check-layers: --extra-edge wants FILE=INCLUDE, got '{e}'", file=sys.stderr)
            return 2
        if not os.path.isfile(os.path.join(root, f)):
            print(f"check-layers: --extra-edge: no file {f}", file=sys.stderr)
            return 2
        extra.setdefault(os.path.normpath(f), []).append(inc)
    try:
        table = read_table(root)
    except TableError as e:
        print(f"check-layers: {e}", file=sys.stderr)
        return 2
    if args.self_test:
        return self_test(root, table)
    problems, nfiles, nedges = check(root, table, extra)
    for p in problems:
        print(f"LAYER VIOLATION {p}")
    rule = f"the layer table in {TABLE_FILE} ({SECTION[3:]}); why: docs/layers.md"
    if problems:
        print(f"check-layers: {len(problems)} violation(s) of {rule}")
        return 1
    print(f"check-layers: {nfiles} files, {nedges} includes and imports, all following {rule}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
