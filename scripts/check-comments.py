#!/usr/bin/env python3
"""check-comments.py — checks that comments point into the repository.

Owns three checks over the project's source, tests, scripts and docs, each a
rule docs/conventions.md states:
  - no comment cites a document that is not in the repository: the seed
    documents the project started from ("seed 000") are not, so the rule a
    comment relies on is cited as the docs/ section that states it;
  - every citation `docs/NAME.md §Heading` names a file in docs/ and one of
    its headings (a comment may wrap the heading across lines);
  - section markers have one style, `>>name` (a file's "Contents:" line lists
    them, and each one listed is in the file); the other style, `@name`, is
    refused.

Must never: change a file. Exit status 0 when all hold, 1 otherwise (each
finding printed with file, line and the rule), 2 on bad usage.

Usage: check-comments.py [--root DIR]
"""
import argparse
import os
import re
import sys

SCAN_DIRS = ["src", "include", "tools", "examples", "tests", "bench", "fuzz", "viewer", "scripts", "cmake", "docs"]
SCAN_FILES = ["README.md", "CMakeLists.txt", "Makefile"]
EXTS = (".c", ".h", ".hpp", ".cpp", ".js", ".mjs", ".py", ".sh", ".cmake", ".txt", ".md", ".in", ".json")
SKIP_DIRS = {"node_modules", "corpus", ".git"}
SELF = os.path.join("scripts", "check-comments.py")

SEED = re.compile(r"\bseeds?[ -]?0\d\d\b|\bseed[ -]?0\d\d's\b", re.I)
CITE = re.compile(r"docs/([A-Za-z0-9_.-]+\.md)\s*§")
DOC_FILE = re.compile(r"\bdocs/([A-Za-z0-9_-]+\.(?:md|json|png))")
AT_MARKER = re.compile(r"(?:/\*|//|#)\s*@[a-z][a-z0-9_-]*\b|Contents:.*\s@[a-z]")
CONTENTS = re.compile(r"Contents:((?:\s*>>[A-Za-z0-9_-]+)+)")
LEADER = re.compile(r"\n[ \t]*(?:\*(?!/)|//|#)?[ \t]*")


def files(root):
    for d in SCAN_DIRS:
        for top, subdirs, names in os.walk(os.path.join(root, d)):
            subdirs[:] = sorted(s for s in subdirs if s not in SKIP_DIRS)
            for n in sorted(names):
                if n.endswith(EXTS) or n == "CMakeLists.txt":
                    yield os.path.relpath(os.path.join(top, n), root)
    for f in SCAN_FILES:
        if os.path.isfile(os.path.join(root, f)):
            yield f


def headings(root, doc, cache):
    if doc not in cache:
        path = os.path.join(root, "docs", doc)
        hs = []
        if os.path.isfile(path):
            in_code = False
            for line in open(path, encoding="utf-8"):
                if line.startswith("```"):
                    in_code = not in_code
                elif not in_code and re.match(r"#{1,6} ", line):
                    hs.append(line.lstrip("#").strip().replace("`", ""))
        cache[doc] = hs if os.path.isfile(path) else None
    return cache[doc]


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def check(root):
    problems, cache = [], {}
    for rel in files(root):
        if rel == SELF:
            continue
        text = open(os.path.join(root, rel), encoding="utf-8", errors="replace").read()
        for m in SEED.finditer(text):
            problems.append(f"{rel}:{line_of(text, m.start())}: cites '{m.group(0)}', a document outside the "
                            "repository: cite the docs/ section that states the rule")
        for m in DOC_FILE.finditer(text):
            if not os.path.isfile(os.path.join(root, "docs", m.group(1))):
                problems.append(f"{rel}:{line_of(text, m.start())}: names docs/{m.group(1)}, which does not exist")
        for m in CITE.finditer(text):
            hs = headings(root, m.group(1), cache)
            if hs is None:
                continue  # reported above as a missing file
            after = LEADER.sub(" ", text[m.end():m.end() + 240]).replace("`", "").lstrip()
            # A heading may be cited without its parenthesised tail: §The model for "The model (`src/...`)".
            names = {n for h in hs for n in (h, re.sub(r"\s*\(.*\)$", "", h)) if n}
            if not any(after.startswith(n) and not after[len(n):len(n) + 1].isalnum() for n in names):
                problems.append(f"{rel}:{line_of(text, m.start())}: cites docs/{m.group(1)} §"
                                f"'{after[:40].strip()}...', which is no heading of that file")
        for m in AT_MARKER.finditer(text):
            if rel.endswith((".md", ".json")):
                continue
            problems.append(f"{rel}:{line_of(text, m.start())}: section marker '{m.group(0).strip()}' uses '@': "
                            "markers are '>>name' (docs/conventions.md §Section markers)")
        for m in CONTENTS.finditer(text):
            for tag in re.findall(r">>[A-Za-z0-9_-]+", m.group(1)):
                rest = text[:m.start()] + text[m.end():]
                if not re.search(re.escape(tag) + r"(?![A-Za-z0-9_-])", rest):
                    problems.append(f"{rel}:{line_of(text, m.start())}: Contents lists {tag}, "
                                    "which marks no section of the file")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    if not os.path.isdir(os.path.join(root, "docs")):
        print(f"check-comments: {root} has no docs/", file=sys.stderr)
        return 2
    problems = check(root)
    for p in problems:
        print(f"COMMENT {p}")
    if problems:
        print(f"check-comments: {len(problems)} finding(s); the rules: docs/conventions.md")
        return 1
    print("check-comments: every citation points into the repository, one section-marker style")
    return 0


if __name__ == "__main__":
    sys.exit(main())
