"""test_sessions_async.py — operations follow the asyncio task, not the
thread (python/README.md §Sessions, docs/sessions.md §Parked operations):
100 concurrent requests on one event loop each end as an operation of its
own with its own stages, parents, counters and population, a stage open
across an await timing the await; idle and unavailable marks reach the
report; every report validates against docs/report-schema.json; and
strobe.serve() starts the embedded server, token required, through which an
agent (an MCP client) profiles the Python requests."""
import asyncio
import json
import os
import urllib.error
import urllib.request

import jsonschema
import pytest

import strobe

SCHEMA = json.load(open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "report-schema.json")))
ROUTES = ("items_id", "items", "users_id", "health")
N = 100


def valid(report):
    jsonschema.Draft202012Validator(SCHEMA).validate(report)
    return report


def stages_of(sample):
    return {(s["name"], s["nested_in"]): s for s in sample["stages"]}


async def request(w, i):
    with strobe.operation("request", window=w, population=ROUTES[i % 4]):
        with strobe.stage("handler"):
            await asyncio.sleep(0.002)  # every other request runs meanwhile
            with strobe.stage("query", parent="handler"):
                await asyncio.sleep(0)
                strobe.op_counter("rows", i)
        await respond()


@strobe.stage("response")
async def respond():
    await asyncio.sleep(0)


def test_concurrent_requests_on_one_loop_keep_their_own_operations():
    async def main(w):
        await asyncio.gather(*(request(w, i) for i in range(N)))

    with strobe.Window("app") as w, strobe.Session(kinds="request", max_samples=240) as s:
        asyncio.run(main(w))
    report = valid(s.report)
    assert report["counts"]["completed"] == N
    samples = report["samples"]
    assert len(samples) == N
    rows = []
    for sample in samples:
        assert (sample["kind"], sample["window"], sample["committed"]) == ("request", "app", True)
        stages = stages_of(sample)
        assert set(stages) == {("handler", None), ("query", "handler"), ("response", None)}
        assert all(st["count"] == 1 for st in stages.values())
        assert stages[("query", "handler")]["declared_parent_not_open"] == 0
        assert stages[("handler", None)]["total_ms"] >= 2.0  # its await, wall time
        assert sample["total_ms"] >= stages[("handler", None)]["total_ms"]
        assert sample["stages_dropped"] == 0
        [counter] = sample["counters"]
        rows.append(counter["value"])
    assert sorted(rows) == list(range(N))  # each counter on its own request
    populations = {p["population"]: p["n"] for p in report["population_summary"]}
    assert populations == {r: N // 4 for r in ROUTES}


def test_a_task_without_an_operation_sees_none():
    async def bystander():
        await asyncio.sleep(0)
        with strobe.stage("stray"):  # a capture scope only: no operation in this task
            await asyncio.sleep(0.001)

    async def main(w):
        await asyncio.gather(request(w, 0), bystander())

    with strobe.Window("app") as w, strobe.Session() as s:
        asyncio.run(main(w))
    [sample] = valid(s.report)["samples"]
    assert "stray" not in {name for name, _ in stages_of(sample)}


def test_idle_and_unavailable_marks():
    with strobe.Window("app") as w, strobe.Session() as s:
        with strobe.operation("request", window=w) as op:
            assert op.mark_idle() is True
        with strobe.operation("request", window=w) as op:
            assert op.mark_unavailable("stage", "render") is True
            assert op.mark_unavailable("counter", "cache_hits") is True
            with pytest.raises(ValueError):
                op.mark_unavailable("frame", "render")
            with pytest.raises(ValueError):
                op.mark_unavailable("stage", "/items/42")
    report = valid(s.report)
    assert report["counts"]["idle"] == 1
    [sample] = report["samples"]
    render = [st for st in sample["stages"] if st["name"] == "render"]
    assert render and render[0]["available"] is False and render[0]["total_ms"] is None
    hits = [c for c in sample["counters"] if c["name"] == "cache_hits"]
    assert hits and hits[0]["available"] is False and hits[0]["value"] is None


def test_operation_arguments():
    with strobe.Window("app") as w:
        with pytest.raises(TypeError):
            strobe.operation("request")  # no window
        with pytest.raises(ValueError):
            strobe.operation("frame", window=w)
        assert strobe.operation(w, "pass", frame_id=3).status is None


def test_serve_answers_with_the_token_only():
    token = "t" * 32
    with strobe.serve(token=token, quiet=True) as server:
        assert server.port > 0 and server.token_file is None
        url = f"http://127.0.0.1:{server.port}/api/sessions"
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url, timeout=30)
        assert refused.value.code == 401
        req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(req, timeout=30) as answer:
            assert answer.status == 200
            json.load(answer)
    assert server.port is None
    with pytest.raises(ValueError):
        strobe.serve(token="short", quiet=True)


def mcp(port, token, session, method, params, ident=1):
    """One JSON-RPC request to the server's MCP endpoint: (result, the Mcp-Session-Id)."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
               "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    if session:
        headers["Mcp-Session-Id"] = session
    body = json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", data=body, headers=headers, method="POST")
    with urllib.request.urlopen(req, timeout=30) as answer:
        reply = json.load(answer)
        assert "error" not in reply, reply
        return reply["result"], answer.headers.get("Mcp-Session-Id") or session


def test_an_agent_profiles_python_requests_over_mcp():
    token = "m" * 32
    with strobe.serve(token=token, quiet=True) as server, strobe.Window("app") as w:
        _, sid = mcp(server.port, token, None, "initialize",
                     {"protocolVersion": "2025-11-25", "capabilities": {},
                      "clientInfo": {"name": "test", "version": "1"}})
        started, _ = mcp(server.port, token, sid, "tools/call",
                         {"name": "strobe_profile_start", "arguments": {"kinds": ["request"]}}, 2)
        profile = started["structuredContent"]["id"]

        async def main():
            await asyncio.gather(*(request(w, i) for i in range(8)))
        asyncio.run(main())
        read, _ = mcp(server.port, token, sid, "tools/call",
                      {"name": "strobe_profile_read", "arguments": {"id": profile}}, 3)
    report = valid(read["structuredContent"])
    assert report["counts"]["completed"] == 8
    assert {p["population"]: p["n"] for p in report["population_summary"]} == {r: 2 for r in ROUTES}


def render(n):
    return [str(i) for i in range(n)]


def test_trace_calls_inside_requests_nests_on_each_tasks_lane(tmp_path):
    async def handle(w, i):
        with strobe.operation("request", window=w, population="items"):
            await asyncio.sleep(0)
            with strobe.stage("handler"):
                strobe.trace_calls(render)(i + 1)  # its calls on this task's lane, inside the stage
                await asyncio.sleep(0)

    async def main(w):
        await asyncio.gather(*(asyncio.create_task(handle(w, i), name=f"req{i}") for i in range(3)))

    path = tmp_path / "tasks.strobe"
    with strobe.Window("app") as w, strobe.Session() as s, strobe.Recorder(str(path)):
        asyncio.run(main(w))
    assert valid(s.report)["counts"]["completed"] == 3
    threads, records, totals = strobe.read_capture(str(path))
    lanes = {t[0]: t[2] for t in threads}
    renders = [(lanes[r[1]], r[3]) for r in records if r[0] == "end" and r[2].startswith("render (")]
    handlers = {lanes[r[1]]: r[3] for r in records if r[0] == "end" and r[2] == "handler"}
    assert sorted(lane for lane, _ in renders) == ["req0", "req1", "req2"]
    assert all(depth == handlers[lane] + 1 for lane, depth in renders)
    assert (totals["unbalanced"], totals["end_without_begin"], totals["unfinished"]) == (0, 0, 0)
