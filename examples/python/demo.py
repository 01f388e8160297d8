"""demo.py — the Python binding in `make demo` (python/README.md): a short
program that loads and parses records in two asyncio tasks (each on its own
fiber lane), sums them in a loop scope, explores its parser with trace_calls,
answers a few commands as operations with stages under a profiling session
(whose report it writes beside the capture and summarises), and writes the
capture given on the command line for `strobe report`.

Usage: PYTHONPATH=build/python /usr/bin/python3 examples/python/demo.py OUT.strobe
"""
import asyncio
import json
import os
import sys

import strobe


def tokenize(line):
    return line.split(",")


def convert(fields):
    return [float(f) for f in fields]


def parse(lines):
    return [convert(tokenize(line)) for line in lines]


@strobe.traced
def checksum(rows):
    total = 0.0
    for row in rows:
        with strobe.cumulative("checksum_row"):
            total += sum(row)
    return total


async def load(source, count):
    with strobe.span("load"):
        lines = []
        for i in range(count):
            with strobe.span("read_chunk"):
                lines.extend(f"{i},{j},{i * j}" for j in range(50))
                await asyncio.sleep(0.001)  # the other task runs meanwhile
        strobe.value("lines", len(lines))
        with strobe.span("parse"):
            rows = parse(lines)
        return checksum(rows)


async def main():
    a = asyncio.create_task(load("orders", 8), name="load_orders")
    b = asyncio.create_task(load("stock", 6), name="load_stock")
    return await asyncio.gather(a, b)


def handle_command(window, rows, n):
    """One command of a server (seed-style "Level A"): an operation of kind
    request, its phases as stages; names are static labels."""
    with strobe.operation(window, "request", population="navigate_cell"):
        with strobe.stage("lookup"):
            row = rows[n % len(rows)]
        with strobe.stage("callback"):
            with strobe.stage("render_cells", parent="callback"):
                cells = [f"{v:.1f}" for v in row for _ in range(40)]
            strobe.op_counter("cells", len(cells))
        with strobe.stage("oob_swap"):
            return ",".join(cells)


def adaptive(ms):
    """A session report's duration (whole µs: its resolution) in the unit that shows it (14 µs, 3.10 ms)."""
    us = round(ms * 1e3)
    if us == 0:
        return "< 1 µs"
    return f"{us} µs" if us < 1000 else f"{us / 1e3:.3g} ms"


def serve_commands(report_path):
    rows = parse([f"{i},{i * 2},{i * 3}" for i in range(200)])
    with strobe.Window("main") as window, strobe.Session(kinds="request") as session:
        for n in range(30):
            handle_command(window, rows, n)
    report = session.report
    with open(report_path, "w") as f:
        json.dump(report, f, indent=1)
    stages = ", ".join(f"{s['name']} p50 {adaptive(s['p50_ms'] or 0)}" for s in report["stage_summary"])
    print(f"wrote {report_path}: {report['counts']['completed']} commands as operations with stages ({stages})")


def run(path):
    strobe.set_process("python_demo")  # its session report's process, as the C demo's "screen" and "sender"
    with strobe.Recorder(path):
        with strobe.span("startup"):
            strobe.trace_calls(parse)(["1,2,3"] * 3)  # every call below parse, as spans
        totals = asyncio.run(main())
        serve_commands(os.path.splitext(path)[0] + "-session.json")
    print(f"wrote {path}: two asyncio tasks on their own fiber lanes (checksums {totals[0]:.0f}, {totals[1]:.0f})")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: demo.py OUT.strobe")
    run(sys.argv[1])
