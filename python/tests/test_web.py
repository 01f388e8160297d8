"""test_web.py — strobe.asgi and strobe.wsgi against real frameworks
(python/README.md §Web frameworks): Starlette under uvicorn and Flask under
Werkzeug's threaded server, each sent 2,000 requests over 4 routes by an
httpx client. Every request is an operation of kind request on the window
"app" with the stages routing, handler and response; the session reports'
request count per route (population, from the route template) equals what
was sent, each percentile carries its n, and no URL, path parameter, query
string or header the client sent appears in any report."""
import json
import threading
import time

import httpx
import pytest

import strobe
import strobe.asgi
import strobe.wsgi

TOTAL = 2000
BATCH = 200  # requests per session: under its 240 samples, so every one is kept
SECRETS = ("pathsecret", "querysecret", "headersecret")


def requests_for(batch):
    """(path, population) of one batch: 4 routes in turn, each path carrying
    content that must never reach a report."""
    out = []
    for i in range(batch):
        k = i % 4
        if k == 0:
            out.append((f"/items/pathsecret{i}?q=querysecret", "items_id"))
        elif k == 1:
            out.append((f"/users/pathsecret{i}/posts", "users_name_posts"))
        elif k == 2:
            out.append(("/health?querysecret=1", "health"))
        else:
            out.append(("/", "root"))
    return out


def wait_for(cond, what, cap_s=60.0):
    deadline = time.monotonic() + cap_s
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


def drive(base_url):
    """Sends TOTAL requests in sessions of BATCH; returns (reports, sent per route)."""
    reports, sent = [], {}
    with httpx.Client(base_url=base_url, headers={"X-Token": "headersecret"}, timeout=30) as client:
        for _ in range(TOTAL // BATCH):
            with strobe.Session(kinds="request", max_samples=240) as session:
                for path, population in requests_for(BATCH):
                    answer = client.get(path)
                    assert answer.status_code == 200, (path, answer.status_code)
                    sent[population] = sent.get(population, 0) + 1
                # The last answer may reach the client before its operation ends on the server.
                wait_for(lambda: session.read()["counts"]["completed"] >= BATCH, "the batch's operations")
            reports.append(session.report)
    return reports, sent


def check(reports, sent):
    per_route = {}
    for report in reports:
        assert report["counts"]["completed"] == BATCH and report["counts"]["dropped"] == 0
        for p in report["population_summary"]:
            assert p["kind"] == "request" and p["n"] > 0 and p["p50_ms"] <= p["p95_ms"] <= p["max_ms"]
            per_route[p["population"]] = per_route.get(p["population"], 0) + p["n"]
        for sample in report["samples"]:
            assert (sample["kind"], sample["window"], sample["committed"]) == ("request", "app", True)
            names = [(s["name"], s["nested_in"], s["count"]) for s in sample["stages"]]
            assert sorted(names) == [("handler", None, 1), ("response", None, 1), ("routing", None, 1)]
            assert [(c["name"], c["kind"], c["value"]) for c in sample["counters"]] == [("status", "s2xx", 1)]
    assert per_route == sent and sum(sent.values()) == TOTAL
    text = json.dumps(reports)
    for secret in SECRETS:
        assert secret not in text
    assert "/items" not in text and "?" not in text


def starlette_app():
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    async def item(request):
        return PlainTextResponse("item " + request.path_params["id"])

    async def posts(request):
        return PlainTextResponse("posts")

    async def health(request):
        return PlainTextResponse("ok")

    async def root(request):
        return PlainTextResponse("root")

    routes = [Route("/items/{id}", item), Route("/users/{name}/posts", posts), Route("/health", health),
              Route("/", root)]
    return Starlette(routes=routes, middleware=[Middleware(strobe.asgi.Middleware)])


def test_starlette_under_uvicorn():
    import uvicorn
    config = uvicorn.Config(starlette_app(), host="127.0.0.1", port=0, log_level="warning", lifespan="off",
                            loop="asyncio", http="h11", access_log=False)
    server = uvicorn.Server(config)
    server.install_signal_handlers = lambda: None  # not the main thread
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        wait_for(lambda: server.started, "uvicorn to start")
        port = server.servers[0].sockets[0].getsockname()[1]
        check(*drive(f"http://127.0.0.1:{port}"))
    finally:
        server.should_exit = True
        thread.join(30)


def flask_app():
    import flask
    app = flask.Flask("strobe_test")

    @app.route("/items/<id>")
    def item(id):
        return "item " + id

    @app.route("/users/<name>/posts")
    def posts(name):
        return "posts"

    @app.route("/health")
    def health():
        return "ok"

    @app.route("/")
    def root():
        return "root"

    return app


def test_flask_under_werkzeug():
    from werkzeug.serving import WSGIRequestHandler, make_server

    class KeepAlive(WSGIRequestHandler):
        protocol_version = "HTTP/1.1"  # one connection for the whole run, as the client keeps it

    server = make_server("127.0.0.1", 0, strobe.wsgi.Middleware(flask_app()), threaded=True,
                         request_handler=KeepAlive)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        check(*drive(f"http://127.0.0.1:{server.server_port}"))
    finally:
        server.shutdown()
        thread.join(30)


def test_route_labels_and_unmatched():
    from strobe._web import route_label
    assert route_label("/items/{id}") == "items_id"
    assert route_label("/items/<int:id>") == "items_id"
    assert route_label("/") == "root"
    assert len(route_label("/" + "a" * 100)) == 64
    with strobe.Window("other") as w:
        with pytest.raises(ValueError):
            with strobe.operation("request", window=w) as op:
                op.set_population("/items/42")
