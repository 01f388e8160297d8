#!/usr/bin/env python3
"""run_doc_commands.py — runs the commands README.md and docs/*.md show
against the demo's outputs, so the docs cannot promise what the tools no
longer do (CTest: docs_commands; docs/conventions.md §Docs that run).

Owns: finding those commands, running them in a scratch copy of a demo run's
out/ directory, and judging what they print. A command is one the docs show
in a code block (`$ CMD`, the lines under it its output) or in inline code,
that runs `strobe`, `build/tools/strobe`, `strobe-demo` or
`build/examples/strobe-demo` on a file under out/. A placeholder written in
capitals (DIR) becomes a scratch directory. A command marked in its document
with `<!-- docs-test skip "COMMAND PREFIX": REASON -->` (one that needs a
display or a network) is skipped, the reason printed; a count the run
decides (how many spans one frame gave an element) is marked with
`<!-- docs-test varies "WORD": REASON -->` and the count after WORD is not
compared.

A command fails when it exits non-zero, when it says it matched nothing
("no thread matches", "matches no thread"), or when the doc shows its output
and a shown line is missing: for each shown line the command must print a
line of the same shape (numbers with their units masked, so timings may
differ), holding the same counts (integers without a unit: nodes, frames,
calls), which do not depend on the machine.

It also checks two lists the docs keep by hand: the export formats
docs/cli.md describes (its `### NAME — ` headings under strobe export) are
each named by its synopsis and by `strobe --help`, and README's MCP example
names every tool of STROBE_SERVER_TOOLS.

Must never: write outside its work directory, or pass a command that did not
run (a doc without one runnable command fails: the extraction broke).

Usage: run_doc_commands.py --src DIR --strobe PATH --demo PATH --out DEMO_OUT_DIR --work DIR
"""
import argparse
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys

PROGRAMS = {"strobe": "strobe", "build/tools/strobe": "strobe", "strobe-demo": "demo",
            "build/examples/strobe-demo": "demo"}
VARIES = re.compile(r'<!--\s*docs-test varies "([^"]+)":\s*(.*?)\s*-->', re.S)
SKIP = re.compile(r'<!--\s*docs-test skip "([^"]+)":\s*(.*?)\s*-->', re.S)
NOTHING = re.compile(r"no \w+ matches|matches no \w+|matched nothing", re.I)
UNIT = r"(?:\s?(?:ns|µs|us|ms|s|KiB|MiB|GiB|B|%|x|passes/s|/s))?"
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?" + UNIT + r"(?![\w.])")
COUNT = re.compile(r"(?<![\w.+-])\d+(?![\w.]|\s?(?:ns|µs|us|ms|s|KiB|MiB|GiB|B|%)\b)")
PLACEHOLDER = re.compile(r"^[A-Z][A-Z_]+$")


def shape(line):
    return " ".join(NUMBER.sub("#", line).split())


def counts(line):
    return COUNT.findall(NUMBER.sub(lambda m: m.group(0) if re.fullmatch(r"\d+", m.group(0)) else "#", line))


def docs(src):
    return ["README.md"] + sorted(os.path.relpath(p, src) for p in glob.glob(os.path.join(src, "docs", "*.md")))


def program(cmd):
    words = cmd.split()
    return PROGRAMS.get(words[0]) if words else None


def extract(src, rel):
    """[(line, command, shown output lines)] of one document."""
    text = open(os.path.join(src, rel), encoding="utf-8").read()
    found, lines, block = [], text.split("\n"), None
    for i, line in enumerate(lines, 1):
        if line.startswith("```"):
            block = None if block is not None else []
            continue
        if block is not None:
            if line.startswith("$ "):
                block = [i, line[2:].strip(), []]
                found.append(block)
            elif block:
                block[2].append(line)
            continue
    # Inline code, which may wrap across lines inside a paragraph.
    prose = re.sub(r"```.*?```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    for m in re.finditer(r"`([^`]+)`", prose):
        cmd = " ".join(m.group(1).split())
        if program(cmd):
            found.append([prose.count("\n", 0, m.start()) + 1, cmd, []])
    return [(i, c, [o for o in out if o.strip()]) for i, c, out in found if program(c) and " out/" in " " + c]


def skips(src, rel):
    return SKIP.findall(open(os.path.join(src, rel), encoding="utf-8").read())


def compare(shown, printed, varies=()):
    """What the shown output claims that the printed output contradicts. The
    count after a word the doc says varies (`spans 3`) is not compared."""
    for word in varies:
        mask = re.compile(r"\b(" + re.escape(word) + r") \d+\b")
        shown = [mask.sub(r"\1 #", s) for s in shown]
        printed = mask.sub(r"\1 #", printed)
    problems = []
    by_shape = {}
    for p in printed.split("\n"):
        by_shape.setdefault(shape(p), []).append(p)
    for s in shown:
        same = by_shape.get(shape(s))
        if not same:
            problems.append(f"shows '{s.strip()}', but no printed line has its shape")
        elif not any(counts(p) == counts(s) for p in same):
            problems.append(f"shows '{s.strip()}' (counts {counts(s)}), but prints '{same[0].strip()}' "
                            f"(counts {counts(same[0])})")
    return problems


def run(cmd, exe, work, scratch):
    words = shlex.split(cmd)
    words[0] = exe[program(cmd)]
    words = [os.path.join(scratch, w.lower()) if PLACEHOLDER.match(w) else w for w in words]
    try:
        r = subprocess.run(words, cwd=work, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired as e:  # a server, say, that the doc forgot to mark
        return "timeout", f"still running after {e.timeout} s: mark it in the doc if it needs a display or a network"
    return r.returncode, r.stdout + r.stderr


def check_formats(src, strobe):
    """The export formats docs/cli.md describes, against its synopsis and `strobe --help`."""
    cli = open(os.path.join(src, "docs", "cli.md"), encoding="utf-8").read()
    section = cli[cli.index("\n## strobe export"):]
    section = section[:section.index("\n## ", 1)]
    formats = re.findall(r"^### (\w+) — ", section, re.M)
    synopsis = re.search(r"^strobe export +FILE --format (\S+)", cli, re.M)
    helptext = subprocess.run([strobe, "--help"], capture_output=True, text=True).stdout
    line = next((l for l in helptext.split("\n") if l.strip().startswith("export ")), "").lower()
    problems = [] if formats else ["docs/cli.md: no `### NAME — ` format headings under strobe export"]
    for f in formats:
        if not synopsis or f not in synopsis.group(1).split("|"):
            problems.append(f"docs/cli.md: the synopsis' --format list lacks {f}, which §strobe export describes")
        if f not in line:
            problems.append(f"strobe --help: the export line lacks {f} ('{line.strip()}')")
    return problems


def check_tools(src):
    """README's MCP example names every tool of STROBE_SERVER_TOOLS (include/strobe/server.h)."""
    header = open(os.path.join(src, "include", "strobe", "server.h"), encoding="utf-8").read()
    tools = re.findall(r'^\s*X\(\w+, \d+, "(\w+)"\)', header, re.M)
    readme = open(os.path.join(src, "README.md"), encoding="utf-8").read()
    m = re.search(r"/\* tools at [^:]+:\S+: (.*?)\*/", readme, re.S)
    if not tools or not m:
        return ["README.md: no `/* tools at URL: ... */` comment in the MCP example, or no STROBE_SERVER_TOOLS"]
    named = set(re.findall(r"\w+", m.group(1)))
    return [f"README.md: the MCP example's tool list lacks {t} (STROBE_SERVER_TOOLS)" for t in tools if t not in named]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for a in ("--src", "--strobe", "--demo", "--out", "--work"):
        ap.add_argument(a, required=True)
    args = ap.parse_args()
    exe = {"strobe": os.path.abspath(args.strobe), "demo": os.path.abspath(args.demo)}
    work = os.path.abspath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    out = os.path.join(work, "out")
    os.makedirs(out)
    for name in os.listdir(args.out):  # a scratch copy of the demo's outputs: commands may write there
        if name.endswith((".strobe", ".json", ".txt", ".png")):
            shutil.copy(os.path.join(args.out, name), out)
    # What `make demo` adds to the demo's own outputs, made as it makes them.
    setup = [[exe["strobe"], "merge", "out/demo.strobe", "out/sender.strobe", "-o", "out/all.strobe"],
             [exe["strobe"], "export", "out/demo.strobe", "--format", "perfetto", "--quiet", "-o",
              "out/demo.perfetto-trace"]]
    for s in setup:
        r = subprocess.run(s, cwd=work, capture_output=True, text=True)
        if r.returncode:
            print(f"FAIL setup: {' '.join(s[1:])}: exit {r.returncode}\n{r.stdout}{r.stderr}")
            return 1
    failed = ran = 0
    for rel in docs(args.src):
        skip = skips(args.src, rel)
        varies = [w for w, _ in VARIES.findall(open(os.path.join(args.src, rel), encoding="utf-8").read())]
        for n, (line, cmd, shown) in enumerate(extract(args.src, rel)):
            reason = next((why for prefix, why in skip if cmd.startswith(prefix)), None)
            where = f"{rel}:{line}: {cmd}"
            if reason:
                print(f"skip {where}: {reason}")
                continue
            scratch = os.path.join(work, f"scratch-{rel.replace('/', '_')}-{n}")
            os.makedirs(scratch)
            rc, printed = run(cmd, exe, work, scratch)
            problems = [f"exit {rc}" if rc != "timeout" else "did not finish"] if rc else []
            problems += [f"says it matched nothing: '{m.group(0)}'" for m in NOTHING.finditer(printed)]
            problems += compare(shown, printed, varies)
            ran += 1
            print(f"{'FAIL' if problems else 'ok'} {where}")
            for p in problems:
                print(f"    {p}")
            if problems:
                print("    printed: " + printed.strip().replace("\n", "\n             ")[:2000])
            failed += bool(problems)
    for p in check_formats(args.src, exe["strobe"]) + check_tools(args.src):
        print(f"FAIL {p}")
        failed += 1
    if not ran:
        print("FAIL no command of the docs ran: the extraction found none")
        return 1
    print(f"run_doc_commands: {ran} command(s) run, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
