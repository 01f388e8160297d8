#!/usr/bin/env python3
"""readme-demo-sample.py — README.md's sample of what `make demo` prints comes
from the demo, and stays its shape.

Owns the block of README.md between `<!-- demo-sample begin -->` and
`<!-- demo-sample end -->`:
  --write runs `make demo` (or reads a saved copy of its output, --from FILE)
    and puts what it printed there, from the end of its build up to the
    Python demo's `strobe report`, with the viewer's token masked;
  --check compares the block with a run of the demo (`strobe-demo --headless`,
    the run of CTest demo_headless: its standard output and --out directory)
    line by line by *kind*, never by number (timings are the machine's): each
    kind of line the demo printed is in the sample, and each line of the
    sample's demo part is a kind the demo still prints, or one only a served
    run prints (SERVED_ONLY) or only some machines (MACHINE_ONLY).
A line's kind is its label (the words before its first ':'), or for a stage
table row "stage row", or else its first three words, numbers masked.

Must never: change README.md outside that block, or write in --check mode.
Exit status 0 when the block holds, 1 when it drifted (each difference
printed), 2 on bad usage or when the block or `make demo`'s output is missing.

Usage: readme-demo-sample.py --write [--from FILE] [--root DIR]
       readme-demo-sample.py --check --stdout FILE --out-dir DIR [--root DIR]
"""
import argparse
import os
import re
import subprocess
import sys

BEGIN = "<!-- demo-sample begin: scripts/readme-demo-sample.py --write makes it -->"
END = "<!-- demo-sample end -->"
LAST_BEFORE = "capture  out/python-demo.strobe"  # the Python demo's `strobe report` starts here: left out
# Lines the demo prints only when it serves (make demo: --seconds, the server, OTLP push, the producer).
SERVED_ONLY = {"viewer", "MCP endpoint", "OTLP push", "producer"}
# Lines whose presence depends on the machine (a Vulkan device).
MACHINE_ONLY = {"gpu memory"}
# The build `make demo` runs first: its last line of this kind ends it, and the demo's output begins.
BUILD = re.compile(r"^(?:g?make(?:\[\d+\])?: |\[ *\d+%\] |-- |cmake |\s+-D)")
STAGE_ROW = re.compile(r"^\S+\s+\S+\s+\d+(?:\s+[\d.]+ \S+){4}$")
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")


def kind(line):
    line = line.strip()
    if STAGE_ROW.match(line):
        return "stage row"
    head = line.split(":", 1)[0]
    if ":" in line and len(head) <= 40:
        return NUMBER.sub("#", head).strip()
    return NUMBER.sub("#", " ".join(line.split()[:3]))


def read_block(text):
    b, e = text.find(BEGIN), text.find(END)
    if b < 0 or e < b:
        return None
    body = text[b + len(BEGIN):e]
    return [l for l in body.split("\n") if not l.startswith("```")]


def sample_of(output):
    lines = [l.rstrip() for l in output.split("\n")]
    start = max((i + 1 for i, l in enumerate(lines) if BUILD.match(l)), default=0)
    end = next((i for i, l in enumerate(lines) if l.startswith(LAST_BEFORE)), len(lines))
    lines = lines[start:end]
    while lines and not lines[-1].strip():
        lines.pop()
    return [re.sub(r"#token=[0-9a-f]{64}", "#token=<64 hex digits>", l) for l in lines]


def write(root, source):
    if source:
        output = open(source, encoding="utf-8").read()
    else:
        r = subprocess.run(["make", "--no-print-directory", "demo"], cwd=root, capture_output=True, text=True)
        sys.stderr.write(r.stderr[-4000:])
        if r.returncode:
            print(f"readme-demo-sample: make demo failed (exit {r.returncode})", file=sys.stderr)
            return 2
        output = r.stdout
    sample = sample_of(output)
    if not sample:
        print("readme-demo-sample: make demo printed nothing after its build", file=sys.stderr)
        return 2
    path = os.path.join(root, "README.md")
    text = open(path, encoding="utf-8").read()
    if read_block(text) is None:
        print(f"readme-demo-sample: README.md has no {BEGIN} ... {END} block", file=sys.stderr)
        return 2
    b, e = text.find(BEGIN) + len(BEGIN), text.find(END)
    text = text[:b] + "\n```\n" + "\n".join(sample) + "\n```\n" + text[e:]
    open(path, "w", encoding="utf-8").write(text)
    print(f"readme-demo-sample: README.md's sample is {len(sample)} lines of make demo's output")
    return 0


def check(root, stdout, out_dir):
    block = read_block(open(os.path.join(root, "README.md"), encoding="utf-8").read())
    if block is None:
        print(f"readme-demo-sample: README.md has no {BEGIN} ... {END} block")
        return 2
    prefix = os.path.abspath(out_dir).rstrip("/") + "/"  # the run's paths, as make demo's out/ names them
    ran = [l.replace(prefix, "out/") for l in open(stdout, encoding="utf-8").read().split("\n") if l.strip()]
    if not ran:
        print(f"readme-demo-sample: {stdout} is empty: no demo output to compare with")
        return 2
    printed = {kind(l) for l in ran}
    # The sample's demo part: up to its line of the demo's last kind; make demo's own steps follow.
    last = kind(ran[-1])
    demo = [l for l in block if l.strip()]
    cut = max((i for i, l in enumerate(demo) if kind(l) == last), default=len(demo) - 1)
    shown = {kind(l) for l in demo[:cut + 1]}
    problems = [f"the demo prints a line of kind '{k}' that README.md's sample lacks: "
                f"'{next(l for l in ran if kind(l) == k)}'"
                for k in sorted(printed - shown)]
    problems += [f"README.md's sample shows a line of kind '{k}' that the demo no longer prints: "
                 f"'{next(l for l in demo if kind(l) == k)}'" for k in sorted(shown - printed - SERVED_ONLY - MACHINE_ONLY)]
    for p in problems:
        print(f"DRIFT {p}")
    if problems:
        print(f"readme-demo-sample: {len(problems)} difference(s); `python3 scripts/readme-demo-sample.py --write` "
              "runs make demo and rewrites the sample")
        return 1
    print(f"readme-demo-sample: the sample's {len(shown)} kinds of line are the demo's ({len(printed)} printed)")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--from", dest="source")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--stdout")
    ap.add_argument("--out-dir", default="out")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    if args.write == args.check or (args.check and not args.stdout):
        ap.print_usage(sys.stderr)
        return 2
    return write(root, args.source) if args.write else check(root, args.stdout, args.out_dir)


if __name__ == "__main__":
    sys.exit(main())
