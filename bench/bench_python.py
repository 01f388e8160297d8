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

Budget: python_span_cost_ns <= 1000 (1 us per span). Each figure is the
best of 7 runs of N spans (the machine is shared: the best run is the one
least disturbed), timed with time.perf_counter_ns.
"""
import contextlib
import os
import sys
import tempfile
import time

import strobe

N = 100_000
RUNS = 7


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
    return 0


if __name__ == "__main__":
    sys.exit(main())
