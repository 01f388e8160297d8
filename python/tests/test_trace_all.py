"""test_trace_all.py — seed 003's API as python/README.md states it:
@strobe.trace_all on a class wraps its methods in place and returns the
class, with or without exclude=[...]; methods, classmethods, staticmethods,
properties and async methods each record a span per call; a module's
exclude leaves functions out of the hook; current_span().set(name, number)
puts a number on the innermost open span and refuses one no longer
innermost; a cumulative reused across a loop exposes count, total, min,
max and mean."""
import asyncio
import time

import pytest

import strobe
from conftest import load_module, qual


@strobe.trace_all(exclude=["skipped"])
class Grid:
    def __init__(self):
        self._rows = 3

    def render(self):
        return self.cells() + self.skipped()

    def cells(self):
        return 2

    def skipped(self):
        return 1

    @classmethod
    def make(cls):
        return cls()

    @staticmethod
    def scale(n):
        return n * 10

    @property
    def rows(self):
        return self._rows

    @rows.setter
    def rows(self, n):
        self._rows = n

    async def fetch(self):
        await asyncio.sleep(0.005)
        return 7

    def walk(self):
        yield 1

    def __repr__(self):
        return "Grid"


@strobe.trace_all
class Plain:
    def go(self):
        return 1


def test_decorated_classes_are_returned_and_wrapped(record):
    assert isinstance(Grid, type) and isinstance(Plain, type)
    with record() as r:
        g = Grid.make()
        assert g.render() == 3 and Grid.scale(2) == 20 and g.rows == 3
        g.rows = 5
        assert asyncio.run(g.fetch()) == 7
        assert list(g.walk()) == [1] and repr(g) == "Grid" and Plain().go() == 1
    names = [e[2] for e in r.capture.ends()]
    prefix = "Grid."
    for member in ("__init__", "make", "render", "cells", "scale", "rows", "fetch"):
        assert prefix + member in names, member
    assert names.count("Grid.rows") == 2  # the getter and the setter
    assert "Plain.go" in names
    for left_out in ("Grid.skipped", "Grid.walk", "Grid.__repr__"):
        assert left_out not in names
    fetch = [e for e in r.capture.ends("Grid.fetch")]
    assert len(fetch) == 1 and fetch[0][5] / 1e6 >= 5.0  # the whole await
    assert r.capture.clean()


def test_trace_all_twice_does_not_wrap_twice(record):
    strobe.trace_all(Plain)
    with record() as r:
        Plain().go()
    assert [e[2] for e in r.capture.ends()] == ["Plain.go"]


def test_trace_all_refuses_bad_excludes():
    class Thing:
        def a(self):
            pass
    with pytest.raises(ValueError):
        strobe.trace_all(Thing, exclude=["b"])
    with pytest.raises(TypeError):
        strobe.trace_all(exclude="a")
    with pytest.raises(TypeError):
        strobe.trace_all(lambda: 1, exclude=["a"])


MODULE = '''
def entry():
    return helper() + quiet()

def helper():
    return 1

def quiet():
    return 2
'''


def test_module_exclude(record, tmp_path):
    mod = load_module(tmp_path, "mod_exclude", MODULE)
    with pytest.raises(ValueError):
        strobe.trace_all(mod, exclude=["missing"])
    with record() as r:
        assert strobe.trace_all(mod, exclude=["quiet"]) is mod
        try:
            assert mod.entry() == 3
        finally:
            strobe.trace_all_stop()
    assert [(qual(e[2]), e[3]) for e in r.capture.ends()] == [("helper", 2), ("entry", 1)]


def test_current_span_set(record):
    assert strobe.current_span().name is None  # nothing records
    with record() as r:
        with strobe.span("outer"):
            cur = strobe.current_span()
            assert cur.name == "outer"
            cur.set("rows", 42)
            with strobe.span("inner"):
                with pytest.raises(RuntimeError):
                    cur.set("rows", 1)  # outer is not the innermost any more
                strobe.current_span().set("cells", 2.5)
            with pytest.raises(TypeError):
                cur.set("rows", "many")
    values = [(r_[2], r_[3], r_[6]) for r_ in r.capture.records if r_[0] == "value"]
    assert values == [("rows", 1, 42.0), ("cells", 2, 2.5)]


def test_cumulative_exposes_its_statistics(record):
    loop = strobe.cumulative("row")
    assert (loop.count, loop.total_ms, loop.min_ms, loop.max_ms, loop.mean_ms) == (0, 0.0, None, None, None)
    with record() as r:
        with strobe.span("table"):
            for ms in (1, 3, 2):
                with loop:
                    time.sleep(ms / 1000)
    assert loop.count == 3
    assert loop.min_ms >= 1.0 and loop.max_ms >= 3.0 and loop.min_ms <= loop.mean_ms <= loop.max_ms
    assert loop.total_ms >= 6.0 and loop.mean_ms == pytest.approx(loop.total_ms / 3)
    cum = [x for x in r.capture.records if x[0] == "cumulative"]
    assert [(x[2], x[6]) for x in cum] == [("row", 3.0)]
    with record():
        with pytest.raises(RuntimeError):
            with loop:
                with loop:  # a loop body does not nest in itself
                    pass
    loop.reset()
    assert loop.count == 0
