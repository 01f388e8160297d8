"""test_strobe.py — the Python binding's behaviour, read back from real
captures (libstrobe's reader, strobe.read_capture): spans nest, values land
on their span, the decorators and cumulative record what they say, call
tracing follows the call tree and stops where it should, asyncio tasks
interleaving on one thread keep their spans on their own lanes, threads and
the flight recorder get the same events, and bad input is refused."""
import asyncio
import json
import os
import subprocess
import threading
import time

import pytest

import strobe
from conftest import load_module, qual


def test_span_nests_and_value_lands_on_it(record):
    with record() as r:
        with strobe.span("outer"):
            strobe.value("rows", 42)
            with strobe.span("inner"):
                strobe.value("ratio", 0.5)
    c = r.capture
    assert [(e[2], e[3]) for e in c.ends()] == [("inner", 2), ("outer", 1)]
    values = {v[2]: (v[3], v[6]) for v in c.records if v[0] == "value"}
    assert values == {"rows": (1, 42.0), "ratio": (2, 0.5)}
    inner, outer = c.ends()
    assert outer[5] >= inner[5] > 0
    assert c.clean()


def test_span_closes_on_exception(record):
    with record() as r:
        with pytest.raises(KeyError):
            with strobe.span("outer"):
                with strobe.span("raises"):
                    raise KeyError("x")
    assert [e[2] for e in r.capture.ends()] == ["raises", "outer"]
    assert r.capture.clean()


def test_traced_decorator_names_calls(record):
    @strobe.traced
    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    @strobe.traced(name="renamed")
    def other():
        return 1

    with record() as r:
        assert fib(5) == 5
        other()
    c = r.capture
    fibs = c.ends("test_traced_decorator_names_calls.<locals>.fib")
    assert len(fibs) == 15  # the calls of fib(5)
    assert max(e[3] for e in fibs) == 5
    assert len(c.ends("renamed")) == 1
    assert c.clean()


def test_span_as_decorator_and_cumulative_loop(record):
    @strobe.span("decorated")
    def work(n):
        total = 0
        for i in range(n):
            with strobe.cumulative("body"):
                total += i
        return total

    with record() as r:
        assert work(100) == 4950
    c = r.capture
    assert len(c.ends("decorated")) == 1
    cums = [x for x in c.records if x[0] == "cumulative" and x[2] == "body"]
    assert len(cums) == 1 and cums[0][6] == 100.0 and cums[0][3] == 1  # one entry, count 100, on the span
    assert c.clean()


def test_value_takes_numbers_only(record):
    with record() as r:
        with strobe.span("s"):
            for bad in ("42", b"1", None, [1], object()):
                with pytest.raises(TypeError):
                    strobe.value("k", bad)
            with pytest.raises(TypeError):
                strobe.value(3, 1)
            strobe.value("big", 2**70)
            strobe.value("flag", True)
    values = [(v[2], v[6]) for v in r.capture.records if v[0] == "value"]
    assert values == [("big", float(2**70)), ("flag", 1.0)]


def test_bad_names_are_refused():
    for bad in (None, 3, b"x"):
        with pytest.raises(TypeError):
            strobe.span(bad)
        with pytest.raises(TypeError):
            strobe.cumulative(bad)
    with pytest.raises(TypeError):
        strobe.span()
    with pytest.raises(TypeError):
        strobe.traced(3)


def test_span_reuse_is_refused(record):
    with record():
        s = strobe.span("once")
        with s:
            with pytest.raises(RuntimeError):
                s.__enter__()


def test_nothing_recorded_without_a_consumer(record):
    assert not strobe.recording()
    with strobe.span("unrecorded"):
        strobe.value("v", 1)
    with record() as r:
        assert strobe.recording()
        with strobe.span("recorded"):
            pass
    assert [e[2] for e in r.capture.ends()] == ["recorded"]


def _a(n):
    return _b(n) + _b(n)


def _b(n):
    return _c(n) * 2


def _c(n):
    return n


def _untraced():
    return _c(1)


def _raises():
    _c(1)
    raise ValueError("in a traced call")


def test_trace_calls_follows_the_call_tree(record):
    traced = strobe.trace_calls(_a)
    with record() as r:
        assert traced(3) == 12
        _untraced()  # after the region: not traced
    c = r.capture
    names = [(qual(e[2]), e[3]) for e in c.ends()]
    assert names == [("_c", 3), ("_b", 2), ("_c", 3), ("_b", 2), ("_a", 1)]
    assert c.clean()


def test_trace_calls_closes_on_exceptions(record):
    traced = strobe.trace_calls(_raises)
    with record() as r:
        with strobe.span("around"):
            with pytest.raises(ValueError):
                traced()
    assert [(qual(e[2]), e[3]) for e in r.capture.ends()] == [("_c", 3), ("_raises", 2), ("around", 1)]
    assert r.capture.clean()


def test_trace_calls_refuses_coroutines():
    async def co():
        pass
    with pytest.raises(TypeError):
        strobe.trace_calls(co)


MODULE = '''
def entry(n):
    return helper(n) + helper(n + 1)

def helper(n):
    return n * 2

class Thing:
    def method(self):
        return helper(1)
'''


def test_trace_all_module_then_stop(record, tmp_path):
    mod = load_module(tmp_path, "traced_mod", MODULE)
    with record() as r:
        strobe.trace_all(mod)
        try:
            mod.entry(1)
            mod.Thing().method()
            _untraced()  # not the module's: not traced
            seen = []
            t = threading.Thread(target=lambda: seen.append(mod.helper(5)))
            t.start()
            t.join()
        finally:
            strobe.trace_all_stop()
        mod.entry(2)  # stopped: not traced
    c = r.capture
    entry = [e for e in c.ends() if qual(e[2]) == "entry"]
    main = [(qual(e[2]), e[3]) for e in c.ends() if e[1] == entry[0][1]]
    assert main == [("helper", 2), ("helper", 2), ("entry", 1), ("helper", 2), ("Thing.method", 1)]
    other_lanes = [e for e in c.ends() if qual(e[2]) == "helper" and e[1] != entry[0][1]]
    assert len(other_lanes) == 1 and other_lanes[0][3] == 1  # the new thread's call
    assert c.clean()


def test_trace_all_class(record):
    class Shape:
        def area(self):
            return self.side() ** 2

        def side(self):
            return 3

    with record() as r:
        strobe.trace_all(Shape)
        try:
            assert Shape().area() == 9
        finally:
            strobe.trace_all_stop()
    assert [(qual(e[2]), e[3]) for e in r.capture.ends()] == [
        ("test_trace_all_class.<locals>.Shape.side", 2), ("test_trace_all_class.<locals>.Shape.area", 1)]


def test_trace_all_refuses_what_it_cannot_trace():
    for bad in (3, "module"):
        with pytest.raises(TypeError):
            strobe.trace_all(bad)
    with pytest.raises(TypeError):
        strobe.trace_all(len)  # no Python code


async def _fetch(i):
    with strobe.span("fetch"):
        await asyncio.sleep(0)
        return i


async def _worker(steps):
    with strobe.span("task_outer"):
        for i in range(steps):
            with strobe.span("task_step"):
                strobe.value("i", i)
                await _fetch(i)  # awaited directly: nests under the step, in this task
                await asyncio.sleep(0)  # the other task runs here


def test_asyncio_tasks_interleaving_keep_their_own_lanes(record):
    async def main():
        with strobe.span("main_span"):
            a = asyncio.create_task(_worker(5), name="alpha")
            b = asyncio.create_task(_worker(5), name="beta")
            await asyncio.gather(a, b)

    with record() as r:
        asyncio.run(main())
    c = r.capture
    alpha, beta = c.lane("alpha"), c.lane("beta")
    assert {alpha, beta} <= c.fibers
    for lane in (alpha, beta):
        assert [e[3] for e in c.ends("task_outer", lane)] == [1]
        assert [e[3] for e in c.ends("task_step", lane)] == [2] * 5
        assert [e[3] for e in c.ends("fetch", lane)] == [3] * 5
        assert len([v for v in c.records if v[0] == "value" and v[1] == lane]) == 5
    main_lane = c.ends("main_span")[0][1]
    assert main_lane not in (alpha, beta)
    assert [e[2] for e in c.ends(lane=main_lane)] == ["main_span"]
    # They really interleaved: each task's outer span overlaps the other's.
    (ab, ae), (bb, be) = [(e[4] - e[5], e[4]) for e in c.ends("task_outer", alpha) + c.ends("task_outer", beta)]
    assert ab < be and bb < ae
    assert c.clean()


def test_threads_record_on_their_own_lanes(record):
    def work(name):
        with strobe.span(name):
            with strobe.span("child"):
                pass

    with record() as r:
        threads = [threading.Thread(target=work, args=(f"t{i}",)) for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    c = r.capture
    lanes = {c.ends(f"t{i}")[0][1] for i in range(3)}
    assert len(lanes) == 3
    assert sorted(e[1] for e in c.ends("child")) == sorted(lanes)
    assert all(e[3] == 2 for e in c.ends("child"))


def test_flight_recorder_dump(tmp_path):
    fr = strobe.FlightRecorder(max_mib=4)
    path = tmp_path / "flight.strobe"
    try:
        with strobe.span("remembered"):
            strobe.value("n", 7)
        # A dump holds what the drain delivered before it (every 2 ms): dump
        # until the span is in, for at most 10 s.
        deadline = time.monotonic() + 10
        while True:
            fr.dump(str(path))
            threads, records, totals = strobe.read_capture(str(path))
            ends = [x[2] for x in records if x[0] == "end"]
            if ends or time.monotonic() > deadline:
                break
            time.sleep(0.01)
    finally:
        fr.stop()
    assert ends == ["remembered"]
    with pytest.raises(RuntimeError):
        fr.dump(str(path))


def test_recorder_errors_are_clear(tmp_path):
    with pytest.raises(OSError, match="cannot record"):
        strobe.Recorder(str(tmp_path / "no" / "such" / "dir.strobe"))
    with pytest.raises(OSError, match="cannot read"):
        strobe.read_capture(str(tmp_path / "missing.strobe"))


def test_cli_and_exports_show_fiber_lanes(record, tmp_path):
    """strobe info, report and the chrome, speedscope and perfetto exports
    name an asyncio task's lane as a fiber (os_tid 0 in the capture)."""
    cli = os.environ.get("STROBE_CLI")
    if not cli:
        pytest.fail("STROBE_CLI is not set: run through CTest (python/CMakeLists.txt sets it)")

    async def main():
        await asyncio.gather(asyncio.create_task(_worker(2), name="cli_alpha"),
                             asyncio.create_task(_worker(2), name="cli_beta"))

    with record() as r:
        asyncio.run(main())
    path = str(r.path)
    info = json.loads(subprocess.run([cli, "info", path, "--json"], check=True, capture_output=True,
                                     text=True).stdout)
    fibers = {t["name"] for t in info["threads"] if t["fiber"]}
    assert {"cli_alpha", "cli_beta"} <= fibers
    assert all(t["tid"] == 0 for t in info["threads"] if t["fiber"])
    assert all(t["tid"] != 0 for t in info["threads"] if not t["fiber"])
    text = subprocess.run([cli, "info", path], check=True, capture_output=True, text=True).stdout
    assert any(line.split()[1:3] == ["fiber", "cli_alpha"] for line in text.splitlines() if line.strip())
    chrome = json.loads(subprocess.run([cli, "export", path, "--format", "chrome", "-o", "-"], check=True,
                                       capture_output=True, text=True).stdout)
    names = {e["tid"]: e["args"]["name"] for e in chrome["traceEvents"] if e.get("name") == "thread_name"}
    alpha_tids = [tid for tid, n in names.items() if n == "fiber cli_alpha"]
    assert len(alpha_tids) == 1 and "fiber cli_beta" in names.values()
    steps = [e for e in chrome["traceEvents"] if e.get("ph") == "X" and e["name"] == "task_step"
             and e["tid"] == alpha_tids[0]]
    assert len(steps) == 2
    speedscope = json.loads(subprocess.run([cli, "export", path, "--format", "speedscope", "-o", "-"], check=True,
                                           capture_output=True, text=True).stdout)
    assert {"fiber cli_alpha", "fiber cli_beta"} <= {p["name"] for p in speedscope["profiles"]}
    perfetto = tmp_path / "t.pftrace"
    subprocess.run([cli, "export", path, "--format", "perfetto", "--compression", "none", "-o", str(perfetto)],
                   check=True, capture_output=True)
    assert b"fiber cli_alpha" in perfetto.read_bytes()
    report = subprocess.run([cli, "report", path, "--thread", "cli_alpha"], check=True, capture_output=True,
                            text=True).stdout
    assert "task_step" in report
