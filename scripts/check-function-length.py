#!/usr/bin/env python3
"""check-function-length.py — checks that no C function is longer than 80 lines.

Owns: finding every function definition in the C sources of src/, tools/ and
examples/ and measuring it, signature to closing brace inclusive, against
the house rule (docs/conventions.md §Function length): at most MAX_LINES.
A function starts at a statement that begins in column 0 and whose first
`{` (at the end of a line) follows a `(`; it ends at the matching brace,
counted with comments, strings, character literals and preprocessor lines
blanked out.

Must never: change a file, or pass when a file it should read cannot be
read or a function's braces do not match.

Usage: check-function-length.py [--root DIR] [--self-test]
  --self-test feeds the checker functions of MAX_LINES and MAX_LINES + 1
  lines (with braces in strings, comments and character literals, a
  signature over two lines and a brace on a line of its own) and passes
  only if the longer ones alone are refused, naming file, line and length
  (CTest: function_length_self_test).
Exit status: 0 when every function keeps the rule, 1 when one does not
(each printed as FILE:LINE: NAME is N lines, more than 80), 2 when a file
cannot be read or parsed.
"""
import argparse
import os
import re
import sys
import tempfile

MAX_LINES = 80
# Functions that were over the rule when the check arrived and are not split
# yet (issue 29 item 5), as (file name, function): reported apart, not
# failed. The list only shrinks: an entry whose function is now short, or
# gone, fails the check until it is removed here.
KNOWN_LONG = {
    ("capture_writer.c", "finish_op"),
    ("producer.c", "strobe__api_producer"),
    ("operation.c", "begin_op"),
    ("report_json.c", "write_sample"),
    ("cmd_calls.c", "cmd_calls"),
    ("cmd_compare.c", "cmd_compare"),
    ("cmd_export.c", "cmd_export"),
    ("cmd_info.c", "write_json"),
    ("cmd_info.c", "write_text"),
    ("cmd_mcp.c", "cmd_mcp"),
    ("cmd_merge.c", "cli_merge_files"),
    ("cmd_report.c", "write_json"),
    ("cmd_report.c", "write_text"),
    ("cmd_tree.c", "cmd_tree"),
    ("export_attachments.c", "export_attachments"),
    ("export_perfetto.c", "export_perfetto"),
    ("http_client.c", "cli_http_request"),
    ("gpu.c", "gpu_open"),
    ("replay.c", "demo_replay"),
    ("sender.c", "sender_process_main"),
}
SCAN_DIRS = ["src", "tools", "examples"]
C_EXT = (".c", ".h", ".cpp", ".hpp")


class ParseError(Exception):
    pass


def blank(text):
    """The text with comments, string and character literals and
    preprocessor lines (with their continuations) replaced by spaces,
    newlines kept, so braces can be counted and lines still line up."""
    out, i, n = [], 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if at_line_start and c == "#":  # a directive, to its last continuation
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        at_line_start = False
        if c == "\n":
            out.append(c)
            at_line_start = True
            i += 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else " ")
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


NAME = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)\s*\(")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "defined", "__attribute__", "alignas"}


def function_name(signature):
    """The name before the signature's parameter list: the last identifier
    followed by `(` at parenthesis depth 0, skipping attributes."""
    depth, best = 0, None
    for i, c in enumerate(signature):
        if c == "(":
            if depth == 0:
                m = re.search(r"([A-Za-z_][A-Za-z_0-9]*)\s*$", signature[:i])
                if m and m.group(1) not in KEYWORDS and not m.group(1).startswith("__"):
                    best = m.group(1)
            depth += 1
        elif c == ")":
            depth -= 1
    return best


def outside_parens(text):
    """text without what stands inside parentheses (an `=` there is a
    default or a comparison, not an initializer)."""
    out, depth = [], 0
    for c in text:
        depth += c == "("
        if depth == 0:
            out.append(c)
        depth -= c == ")" and depth > 0
    return "".join(out)


def functions(text, path):
    """[(name, first line, last line)] of every function defined in text
    (1-based lines, inclusive)."""
    lines = blank(text).split("\n")
    found, i, n = [], 0, len(lines)
    while i < n:
        line = lines[i]
        if not line or line[0] in " \t}" or not line.strip():
            i += 1
            continue
        # A statement begins in column 0: gather it up to its first `{` or `;`.
        start, sig = i, ""
        while i < n:
            cut = re.search(r"[{;]", lines[i])
            if cut:
                sig += " " + lines[i][:cut.start()]
                break
            sig += " " + lines[i]
            i += 1
        if i >= n:
            break
        opens = lines[i][cut.start()] == "{"
        is_function = (opens and "(" in sig and "=" not in outside_parens(sig) and function_name(sig)
                       and not re.match(r"\s*(typedef|struct|union|enum|extern\s+\"C\"|namespace)\b", sig))
        if not opens or not is_function:
            # Skip a braced non-function (a struct, an initializer) to its end.
            if opens:
                i = match_brace(lines, i, cut.start(), path)
            i += 1
            continue
        end = match_brace(lines, i, cut.start(), path)
        found.append((function_name(sig), start + 1, end + 1))
        i = end + 1
    return found


def match_brace(lines, row, col, path):
    """The line of the brace matching the `{` at lines[row][col]."""
    depth = 0
    for r in range(row, len(lines)):
        for c in lines[r][col if r == row else 0:]:
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    return r
    raise ParseError(f"{path}:{row + 1}: no brace matches this one")


def sources(root):
    for top in SCAN_DIRS:
        for base, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for f in sorted(files):
                if f.endswith(C_EXT):
                    yield os.path.join(base, f)


def check(root, paths):
    """[(path, line, name, length)] of the functions over MAX_LINES."""
    long_ones = []
    for path in paths:
        try:
            text = open(path, encoding="utf-8", errors="replace").read()
        except OSError as e:
            raise ParseError(f"{path}: {e.strerror}")
        rel = os.path.relpath(path, root)
        for name, first, last in functions(text, rel):
            if last - first + 1 > MAX_LINES:
                long_ones.append((rel, first, name, last - first + 1))
    return long_ones


def body(lines):
    """Lines of a function body whose comments, strings and character
    literals hold braces the checker must not count."""
    return "  x += 1; /* { */ s = \"}\"; c = '{';\n" * lines


def self_test():
    """Functions of exactly MAX_LINES lines pass, and of MAX_LINES + 1 are
    refused, in three signature shapes."""
    shapes = {
        "one_line": ("static int one_line(int x) {\n", "}\n"),
        "two_lines": ("static int\ntwo_lines(int x,\n          int y) {\n", "}\n"),
        "brace_alone": ("int brace_alone(void)\n{\n", "}\n"),
    }
    failures = []
    with tempfile.TemporaryDirectory() as root:
        os.mkdir(os.path.join(root, "src"))
        for name, (head, tail) in shapes.items():
            for extra in (0, 1):
                inner = MAX_LINES + extra - head.count("\n") - tail.count("\n")
                path = os.path.join(root, "src", f"{name}_{extra}.c")
                with open(path, "w") as f:
                    f.write("/* a file */\nstatic const int table[] = {\n  1, 2,\n};\n" + head + body(inner) + tail)
                got = check(root, [path])
                want = [(os.path.relpath(path, root), 5, name, MAX_LINES + 1)] if extra else []
                if got != want:
                    failures.append(f"{name} with {MAX_LINES + extra} lines: reported {got}, expected {want}")
    for f in failures:
        print("self-test:", f)
    print("self-test: %s" % ("failed" if failures else f"{len(shapes)} shapes: {MAX_LINES} lines kept, "
                                                         f"{MAX_LINES + 1} refused"))
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    root = os.path.abspath(args.root)
    try:
        long_ones = check(root, sources(root))
    except ParseError as e:
        print(f"check-function-length: {e}", file=sys.stderr)
        return 2
    known = [x for x in long_ones if (os.path.basename(x[0]), x[2]) in KNOWN_LONG]
    new = [x for x in long_ones if x not in known]
    stale = sorted(KNOWN_LONG - {(os.path.basename(x[0]), x[2]) for x in known})
    for rel, line, name, length in new:
        print(f"{rel}:{line}: {name} is {length} lines, more than {MAX_LINES}")
    for f, name in stale:
        print(f"{f}: {name} is listed in KNOWN_LONG but no longer over {MAX_LINES} lines: remove it from the list")
    if known:
        print(f"{len(known)} functions over {MAX_LINES} lines still listed in KNOWN_LONG (to split)")
    if new:
        print(f"{len(new)} functions over {MAX_LINES} lines (docs/conventions.md §Function length)")
    return 1 if new or stale else 0


if __name__ == "__main__":
    sys.exit(main())
