#!/usr/bin/env python3
"""check-comments.py — checks that comments point into the repository.

Owns three checks over the project's source, tests, scripts and docs, each a
rule docs/conventions.md states:
  - no comment cites a document that is not in the repository: the seed
    documents the project started from ("seed 000") are not, so the rule a
    comment relies on is cited as the docs/ section that states it;
  - every citation `docs/NAME.md §Heading` names a file in docs/ and one of
    its sections (a comment may wrap the heading across lines): a heading,
    whole or by its short name (what comes before " (", ": " or " — ", or a
    command heading's command, `strobe merge` for "strobe merge A B -o OUT"),
    or a bold term opening a paragraph or list item (`- **Samples** ...`);
  - section markers have one style, `>>name` (a file's "Contents:" line lists
    them, and each one listed is in the file); the other style, `@name`, is
    refused.

Must never: change a file. Exit status 0 when all hold, 1 otherwise (each
finding printed with file, line and the rule), 2 on bad usage.

Usage: check-comments.py [--root DIR] [--self-test]
  --self-test checks the tree with SELF_TEST's lines added as one more file:
  passes only if each line that breaks a rule is reported with that rule, and
  each line that keeps them is not (CTest: comments_self_test).
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


BOLD_LEAD = re.compile(r"^(?:[ \t]*[-*][ \t]+)?\*\*([^*]+?):?\*\*")
COMMAND_ARG = re.compile(r"^(?:[A-Z][A-Z0-9_.]*|\[.*|-.*)$")


def short_names(heading):
    """The names a section may be cited by: its heading, the heading before
    " (", ": " or " — ", and for a command heading (`strobe merge A B -o OUT`)
    the command words before its first argument."""
    names = {heading}
    for cut in (" (", ": ", " — "):
        if cut in heading:
            names.add(heading.split(cut, 1)[0])
    words = heading.split()
    if len(words) > 1 and words[0] == "strobe":
        cmd = []
        for w in words:
            if COMMAND_ARG.match(w):
                break
            cmd.append(w)
        names.add(" ".join(cmd))
    return {n for n in names if n}


def sections(root, doc, cache):
    """Every name a citation of docs/DOC may use, or None when DOC is missing."""
    if doc not in cache:
        path = os.path.join(root, "docs", doc)
        names = set()
        if os.path.isfile(path):
            in_code = False
            for line in open(path, encoding="utf-8"):
                if line.startswith("```"):
                    in_code = not in_code
                elif in_code:
                    continue
                elif re.match(r"#{1,6} ", line):
                    names |= short_names(line.lstrip("#").strip().replace("`", ""))
                elif BOLD_LEAD.match(line):
                    names.add(BOLD_LEAD.match(line).group(1).replace("`", "").strip())
        cache[doc] = names if os.path.isfile(path) else None
    return cache[doc]


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


TREE = {}  # root -> [(rel, text)]: read once, so --self-test's passes do not read the tree again


def texts(root, extra):
    if root not in TREE:
        TREE[root] = [(rel, open(os.path.join(root, rel), encoding="utf-8", errors="replace").read())
                      for rel in files(root) if rel != SELF]
    yield from TREE[root]
    yield from extra.items()


def check(root, extra=None):
    problems, cache = [], {}
    for rel, text in texts(root, extra or {}):
        for m in SEED.finditer(text):
            problems.append(f"{rel}:{line_of(text, m.start())}: cites '{m.group(0)}', a document outside the "
                            "repository: cite the docs/ section that states the rule")
        for m in DOC_FILE.finditer(text):
            if not os.path.isfile(os.path.join(root, "docs", m.group(1))):
                problems.append(f"{rel}:{line_of(text, m.start())}: names docs/{m.group(1)}, which does not exist")
        for m in CITE.finditer(text):
            names = sections(root, m.group(1), cache)
            if names is None:
                continue  # reported above as a missing file
            after = LEADER.sub(" ", text[m.end():m.end() + 240]).replace("`", "").lstrip()
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


# (line, words its finding must hold, or None when the line keeps every rule).
SELF_TEST = [
    ("/* see docs/cli.md §merge */", "which is no heading of that file"),
    ("/* see docs/viewer.md §Deep captures */", "which is no heading of that file"),
    ("/* see docs/no-such-doc.md */", "which does not exist"),
    ("/* as seed 003 says */", "a document outside the repository"),
    ("/* @globals */", "uses '@'"),
    ("/* Contents: >>nowhere_in_this_file */", "marks no section of the file"),
    ("/* see docs/cli.md §strobe merge (its origins) */", None),
    ("/* see docs/cli.md §strobe merge A B [...] -o OUT */", None),
    ("/* see docs/cli.md §otlp */", None),
    ("/* see docs/sessions.md §Content, the rule */", None),
    ("/* see docs/viewer.md §The model */", None),
    ("/* see docs/viewer.md §Samples: bold lead */", None),
]


def self_test(root):
    rel = "self-test.c"
    base = set(check(root))
    failed = 0
    for i, (line, words) in enumerate(SELF_TEST):
        text = "\n" * i + line + "\n"
        new = [p for p in check(root, {rel: text}) if p not in base]
        ok = (not new) if words is None else (len(new) == 1 and new[0].startswith(f"{rel}:{i + 1}:")
                                              and words in new[0])
        print(f"{'ok' if ok else 'FAIL'}: {line}: {new if new else 'no finding'}")
        failed += not ok
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    if not os.path.isdir(os.path.join(root, "docs")):
        print(f"check-comments: {root} has no docs/", file=sys.stderr)
        return 2
    if args.self_test:
        return self_test(root)
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
