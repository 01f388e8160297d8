"""bench_python.py — the Python binding's own cost (python/README.md, Cost):
what `with strobe.span("name"):` costs per span while a capture records,
against the cheapest `with` block (a reused contextlib.nullcontext) measured
in the same run, and with no consumer active. Run by `make bench` through
build/bench/bench_python (python/CMakeLists.txt), with the system python3.

  python_loop_ns                one bare loop iteration (`for _ in range(N): pass`)
  python_empty_with_ns          one empty `with nullcontext:` block, loop included
  python_span_ns_idle           one `with strobe.span("x"):` with nothing recording
  python_span_ns_recording      the same while a capture records (the figure)
  python_span_cost_ns           recording less the bare loop: what one span statement costs
  python_span_overhead_ns       recording less the empty with: what the binding adds over a with block
  python_span_ratio_empty_with  python_span_ns_recording / python_empty_with_ns
  python_value_ns_recording     one strobe.value() inside a recorded span, over the span alone
  python_span_events_lost       events lost by the recorded runs (budget 0)
  python_asgi_median_us         median latency of a Starlette request under uvicorn, no middleware
  python_asgi_strobe_median_us  the same app with strobe.asgi.Middleware, a session admitting its operations
  python_asgi_overhead_pct      what the middleware adds at the median, in percent of the plain app's

Budgets: python_span_cost_ns <= 1000 (1 us per span); python_asgi_overhead_pct
<= 5. Each span figure is the best of 7 runs of N spans (the machine is
shared: the best run is the one least disturbed), timed with
time.perf_counter_ns. The ASGI figures come from one run: two uvicorn
servers in this process, the plain app and the wrapped one, each sent
ASGI_REQUESTS sequential requests by a keep-alive httpx client of its own,
one to each in turn, so both meet the same machine; the median is over
every request of each.
"""
import contextlib
import os
import statistics
import sys
import tempfile
import threading
import time

import strobe

N = 100_000
RUNS = 7
ASGI_REQUESTS = 2000


def best(fn):
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t0)
    return min(times) / N


def bare_loop():
    for _ in range(N):
        pass


def empty_with():
    nc = contextlib.nullcontext()
    for _ in range(N):
        with nc:
            pass


def spans():
    span = strobe.span
    for _ in range(N):
        with span("bench_span"):
            pass


def spans_with_value():
    span, value = strobe.span, strobe.value
    for i in range(N):
        with span("bench_span"):
            value("i", i)


def asgi_servers():
    """Two uvicorn servers in threads: the plain Starlette app and the same
    app wrapped in strobe.asgi.Middleware. Returns [(name, port, server, thread)]."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    import strobe.asgi

    async def item(request):
        return PlainTextResponse("item " + request.path_params["id"])

    out = []
    for name, middleware in (("plain", []), ("strobe", [Middleware(strobe.asgi.Middleware)])):
        app = Starlette(routes=[Route("/items/{id}", item)], middleware=middleware)
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off",
                                               loop="asyncio", http="h11", access_log=False))
        server.install_signal_handlers = lambda: None
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.01)
        out.append((name, server.servers[0].sockets[0].getsockname()[1], server, thread))
    return out


def asgi_overhead():
    """(plain median us, wrapped median us, overhead %)."""
    import httpx
    servers = asgi_servers()
    latencies = {name: [] for name, *_ in servers}
    clients = {name: httpx.Client(base_url=f"http://127.0.0.1:{port}") for name, port, *_ in servers}
    try:
        with strobe.Window("bench_app"), strobe.Session(kinds="request"):
            for i in range(ASGI_REQUESTS):
                for name, client in clients.items():  # one request to each in turn: the same machine for both
                    t0 = time.perf_counter_ns()
                    client.get(f"/items/{i}")
                    latencies[name].append(time.perf_counter_ns() - t0)
    finally:
        for client in clients.values():
            client.close()
        for _, _, server, thread in servers:
            server.should_exit = True
            thread.join(30)
    plain = statistics.median(latencies["plain"]) / 1000
    wrapped = statistics.median(latencies["strobe"]) / 1000
    return plain, wrapped, (wrapped - plain) / plain * 100


def main():
    loop = best(bare_loop)
    empty = best(empty_with)
    idle = best(spans)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "bench.strobe")
        with strobe.Recorder(path):
            recording = best(spans)
            with_value = best(spans_with_value)
        _, _, totals = strobe.read_capture(path)
    overhead = recording - empty
    cost = recording - loop
    print(f"BENCH python_loop_ns {loop:.1f} ns")
    print(f"BENCH python_empty_with_ns {empty:.1f} ns")
    print(f"BENCH python_span_ns_idle {idle:.1f} ns")
    print(f"BENCH python_span_ns_recording {recording:.1f} ns")
    print(f"BENCH python_span_cost_ns {cost:.1f} ns")
    print(f"BENCH python_span_overhead_ns {overhead:.1f} ns")
    print(f"BENCH python_span_ratio_empty_with {recording / empty:.2f} x")
    print(f"BENCH python_value_ns_recording {with_value - recording:.1f} ns")
    print(f"BENCH python_span_events_lost {totals['lost']} events")
    print(f"BUDGET python_span_cost_ns {cost:.3f} <= 1000.000 {'ok' if cost <= 1000.0 else 'OVER'}")
    print(f"BUDGET python_span_events_lost {totals['lost']:.3f} <= 0.000 {'ok' if totals['lost'] == 0 else 'OVER'}")
    plain, wrapped, pct = asgi_overhead()
    print(f"BENCH python_asgi_median_us {plain:.1f} us")
    print(f"BENCH python_asgi_strobe_median_us {wrapped:.1f} us")
    print(f"BENCH python_asgi_overhead_pct {pct:.2f} %")
    print(f"BUDGET python_asgi_overhead_pct {pct:.3f} <= 5.000 {'ok' if pct <= 5.0 else 'OVER'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
