"""test_sessions.py — Python work reaches session reports (docs/sessions.md,
python/README.md §Sessions): an operation and its stages, begun from Python
on a window of the default collector, come back in the session's
content-free report with their kind, window, population, nesting, times
and counters; an exception or drop() ends it not committed; labels that
break the label rule are refused with ValueError before anything records;
a refused operation is inert and says why, and the block still runs;
session options and limits are checked as C checks them. The stages are
capture scopes too. set_process names the process in reports, and the
binding's demo (examples/python/demo.py) names its own, and its Starlette
service's requests reach its second report per route."""
import json
import os
import subprocess
import sys
import time

import pytest

import strobe


def only_sample(report):
    assert len(report["samples"]) == 1, report["samples"]
    return report["samples"][0]


def stages_of(sample):
    return {(s["name"], s["nested_in"]): s for s in sample["stages"]}


def test_operation_and_stages_reach_the_report():
    with strobe.Window("main") as w, strobe.Session(kinds="request") as s:
        with strobe.operation(w, "request", population="navigate_cell") as op:
            assert op.status is None
            with strobe.stage("lookup"):
                time.sleep(0.002)
            with strobe.stage("render"):
                for _ in range(2):
                    with strobe.stage("render_rows", parent="render"):
                        time.sleep(0.003)
                strobe.op_counter("rows", 40)
                strobe.op_counter("rows", 2)
        live = s.read()
        assert live["final"] is False
        assert live["counts"]["completed"] == 1
    report = s.report
    assert report["final"] is True
    sample = only_sample(report)
    assert (sample["kind"], sample["window"], sample["committed"], sample["population"]) == \
        ("request", "main", True, "navigate_cell")
    stages = stages_of(sample)
    assert set(stages) == {("lookup", None), ("render", None), ("render_rows", "render")}
    rows = stages[("render_rows", "render")]
    assert rows["count"] == 2 and rows["declared_parent"] == "render" and rows["declared_parent_not_open"] == 0
    assert rows["total_ms"] >= 6.0 and rows["min_ms"] >= 3.0
    assert stages[("render", None)]["total_ms"] >= rows["total_ms"]
    assert stages[("lookup", None)]["total_ms"] >= 2.0
    assert sample["total_ms"] >= stages[("render", None)]["total_ms"] + stages[("lookup", None)]["total_ms"]
    assert [(c["name"], c["value"]) for c in sample["counters"]] == [("rows", 42)]


def test_decorated_stage_and_a_parent_not_open():
    @strobe.stage("prepare")
    def prepare():
        with strobe.stage("encode", parent="serialize"):  # declared under a stage that is not open
            pass

    with strobe.Window("main") as w, strobe.Session() as s:
        with strobe.operation(w, "pass", frame_id=1234):
            prepare()
            prepare()
    sample = only_sample(s.report)
    assert (sample["kind"], sample["frame_id"]) == ("pass", 1234)
    stages = stages_of(sample)
    assert stages[("prepare", None)]["count"] == 2
    assert stages[("encode", "prepare")]["declared_parent_not_open"] == 2


def test_exception_or_drop_ends_it_not_committed():
    with strobe.Window("main") as w, strobe.Session() as s:
        with pytest.raises(KeyError):
            with strobe.operation(w):
                with strobe.stage("lookup"):
                    raise KeyError("x")
        with strobe.operation(w) as op:
            op.drop()
    samples = s.report["samples"]
    assert [x["committed"] for x in samples] == [False, False]
    assert all(stages_of(x).keys() <= {("lookup", None)} for x in samples)


def test_bad_labels_are_refused_and_record_nothing():
    with strobe.Window("main") as w, strobe.Session() as s:
        for bad in ("two words", "x" * 65, "", "naïve", "path/to"):
            with pytest.raises(ValueError):
                strobe.stage(bad)
            with pytest.raises(ValueError):
                strobe.stage("ok", parent=bad)
            with pytest.raises(ValueError):
                strobe.operation(w, population=bad)
        with pytest.raises(TypeError):
            strobe.stage(42)
        with pytest.raises(ValueError):
            strobe.operation(w, "frame")
        with pytest.raises(ValueError):
            strobe.operation(w, "request", frame_id=3)  # a frame id is a pass's
        with pytest.raises(ValueError):
            strobe.Window("a window title")
        with strobe.operation(w):
            with pytest.raises(ValueError):
                strobe.op_counter("user input", 1)
            strobe.op_counter("ok", 1)
    report = s.report
    sample = only_sample(report)
    assert sample["stages"] == []
    assert [c["name"] for c in sample["counters"]] == ["ok"]
    assert report["counts"]["labels_replaced"] == 0


def test_refused_operation_is_inert_and_the_work_runs():
    w = strobe.Window("w1")
    w.close()
    ran = []
    with strobe.Session() as s:
        with strobe.operation(w) as op:
            with strobe.stage("lookup"):
                ran.append(1)
        assert op.status == "STROBE_EWINDOW"
        assert op.mark_idle() is False
    assert ran == [1]
    assert s.report["samples"] == [] and s.report["counts"]["completed"] == 0
    with strobe.Window("main") as w:
        with pytest.raises(strobe.Error) as e:
            strobe.Window("main")  # already open
        assert e.value.name == "STROBE_EBUSY"


def test_session_options_and_limits():
    with strobe.Window("main") as w, strobe.Session(kinds=["pass"]) as frames, strobe.Session(max_samples=1) as one:
        for _ in range(3):
            with strobe.operation(w, "request"):
                pass
        with strobe.operation(w, "pass"):
            pass
    assert [x["kind"] for x in frames.report["samples"]] == ["pass"]
    assert frames.report["counts"]["kind_excluded"] == 3
    assert len(one.report["samples"]) == 1 and one.report["counts"]["dropped"] == 3
    assert one.stop() is one.report
    with pytest.raises(ValueError):
        strobe.Session(max_samples=241)
    with pytest.raises(ValueError):
        strobe.Session(kinds=["frames"])
    sessions = []
    with pytest.raises(strobe.Error) as e:
        for _ in range(strobe_max_sessions() + 1):
            sessions.append(strobe.Session())
    assert e.value.name == "STROBE_ELIMIT" and len(sessions) == strobe_max_sessions()
    for x in sessions:
        x.stop()
    with pytest.raises(strobe.Error) as e:
        sessions[0].read()
    assert e.value.name == "STROBE_EENDED"


def test_set_process_names_the_process_in_reports():
    strobe.set_process("py_tests")
    with pytest.raises(ValueError):
        strobe.set_process("py tests")  # breaks the label rule: nothing changes
    with pytest.raises(TypeError):
        strobe.set_process(None)
    with strobe.Session() as s:
        pass
    assert (s.report["process"]["name"], s.report["process"]["pid"]) == ("py_tests", os.getpid())


def test_the_demo_names_its_process(tmp_path):
    demo = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python", "demo.py")
    subprocess.run([sys.executable, demo, str(tmp_path / "demo.strobe")], check=True, capture_output=True)
    with open(tmp_path / "demo-session.json") as f:
        report = json.load(f)
    assert report["process"]["name"] == "python_demo" and report["counts"]["completed"] == 30
    with open(tmp_path / "demo-web-session.json") as f:  # its Starlette service, driven by its own client
        web = json.load(f)
    assert {p["population"]: p["n"] for p in web["population_summary"]} == {"items_id": 50, "search": 50,
                                                                            "health": 50}
    text = json.dumps(web)
    assert "someone" not in text and "private" not in text


def strobe_max_sessions():
    return 8  # STROBE_MAX_SESSIONS (session.h): every consumer's sessions together


def test_stages_are_capture_scopes_too(record):
    with strobe.Window("main") as w:
        with record() as r:
            with strobe.operation(w):
                with strobe.stage("lookup"):
                    with strobe.span("inside"):
                        pass
            with strobe.stage("no_operation"):  # outside an operation: a capture scope only
                pass
    c = r.capture
    assert [(e[2], e[3]) for e in c.ends()] == [("inside", 2), ("lookup", 1), ("no_operation", 1)]
    assert c.clean()
