"""demo.py — the Python binding in `make demo` (python/README.md): a short
program that loads and parses records in two asyncio tasks (each on its own
fiber lane), sums them in a loop scope, explores its parser with trace_calls,
answers a few commands as operations with stages under a profiling session
(whose report it writes beside the capture and summarises), runs a small
Starlette service under uvicorn with strobe.asgi's middleware and drives it
with its own HTTP client under a second session (its per-route report is
written beside the capture and printed), and writes the capture given on the
command line for `strobe report`.

Usage: PYTHONPATH=build/python /usr/bin/python3 examples/python/demo.py OUT.strobe
"""
import asyncio
import json
import os
import sys
import threading
import time

import strobe
import strobe.asgi


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


def web_app():
    """A small Starlette service: three routes, one awaiting a (simulated) database."""
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def item(request):
        await asyncio.sleep(0.002)  # the database; the handler stage times the await
        return JSONResponse({"id": request.path_params["id"]})

    async def search(request):
        with strobe.stage("rank", parent="handler"):
            ranked = sorted(range(300), key=lambda i: (i * 7919) % 300)
        return JSONResponse(ranked[:10])

    async def health(request):
        return JSONResponse("ok")

    routes = [Route("/items/{id}", item), Route("/search", search), Route("/health", health)]
    return Starlette(routes=routes, middleware=[Middleware(strobe.asgi.Middleware)])


def serve_web(report_path, requests=150):
    """Runs the service under uvicorn on a free port, sends it `requests`
    requests over its routes under a session, and prints the report per route."""
    import httpx
    import uvicorn
    server = uvicorn.Server(uvicorn.Config(web_app(), host="127.0.0.1", port=0, log_level="warning",
                                           lifespan="off", loop="asyncio", http="h11", access_log=False))
    server.install_signal_handlers = lambda: None  # it runs on a thread of its own
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    paths = ("/items/{n}?user=someone", "/search?q=private", "/health")
    try:
        with strobe.Session(kinds="request", max_samples=240) as session, \
                httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
            for n in range(requests):
                client.get(paths[n % 3].format(n=n)).raise_for_status()
            while session.read()["counts"]["completed"] < requests:  # the last may end after its answer
                time.sleep(0.005)
    finally:
        server.should_exit = True
        thread.join(30)
    report = session.report
    with open(report_path, "w") as f:
        json.dump(report, f, indent=1)
    print(f"wrote {report_path}: a Starlette service under uvicorn, {report['counts']['completed']} requests "
          "as operations (strobe.asgi), per route (no URL or query string in the report):")
    for p in report["population_summary"]:
        print(f"  {p['population']:<10} n {p['n']:>3}  p50 {adaptive(p['p50_ms']):>8}  p95 {adaptive(p['p95_ms']):>8}")
    stages = ", ".join(f"{s['name']}{' in ' + s['nested_in'] if s['nested_in'] else ''} p50 "
                       f"{adaptive(s['p50_ms'] or 0)}" for s in report["stage_summary"])
    print(f"  stages: {stages}")


def run(path):
    strobe.set_process("python_demo")  # its session report's process, as the C demo's "screen" and "sender"
    with strobe.Recorder(path):
        with strobe.span("startup"):
            strobe.trace_calls(parse)(["1,2,3"] * 3)  # every call below parse, as spans
        totals = asyncio.run(main())
        serve_commands(os.path.splitext(path)[0] + "-session.json")
        serve_web(os.path.splitext(path)[0] + "-web-session.json")
    print(f"wrote {path}: two asyncio tasks on their own fiber lanes (checksums {totals[0]:.0f}, {totals[1]:.0f})")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: demo.py OUT.strobe")
    run(sys.argv[1])
