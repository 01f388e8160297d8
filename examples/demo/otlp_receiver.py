#!/usr/bin/env python3
"""otlp_receiver.py — a small OTLP/HTTP receiver for `make demo`: it stands
in for the OpenTelemetry Collector (or Jaeger, Tempo) a fleet would run
(docs/otel.md §Push from the server), so the demo shows what its server's
push sends.

It listens on 127.0.0.1 (an ephemeral port, written to --port-file once it
listens), takes POST /v1/traces with Content-Type application/json (OTLP/JSON:
an ExportTraceServiceRequest), answers 200 {} and keeps what arrived; anything
else is answered 400 or 404 and counted. On SIGTERM or SIGINT, or after
--max-seconds (the demo's bound: it never outlives a stuck demo), it writes
--summary (JSON) and prints what it received: POSTs, traces, root spans by
operation kind, stage spans by name with their total time, and the slowest
operation's trace as a tree of its stage spans with their own start and end.

Keeps counts and the slowest trace only, never every body: bounded memory.
Standard library only.
"""
import argparse
import os
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 64 << 20


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.posts = 0
        self.refused = 0
        self.traces = set()
        self.roots = {}       # operation kind -> count
        self.stages = {}      # stage name -> [spans, total ns]
        self.orphans = 0      # child spans whose parent never arrived in their body
        self.slowest = None   # (duration ns, root span, its child spans)

    def add(self, doc):
        spans = [s for rs in doc.get("resourceSpans", []) for ss in rs.get("scopeSpans", [])
                 for s in ss.get("spans", [])]
        ids = {s["spanId"] for s in spans}
        with self.lock:
            self.posts += 1
            for s in spans:
                self.traces.add(s["traceId"])
                dur = int(s["endTimeUnixNano"]) - int(s["startTimeUnixNano"])
                if not s.get("parentSpanId"):
                    self.roots[s["name"]] = self.roots.get(s["name"], 0) + 1
                    if self.slowest is None or dur > self.slowest[0]:
                        kids = [k for k in spans if k["traceId"] == s["traceId"] and k is not s]
                        self.slowest = (dur, s, kids)
                    continue
                if s["parentSpanId"] not in ids:
                    self.orphans += 1
                st = self.stages.setdefault(s["name"], [0, 0])
                st[0] += 1
                st[1] += dur


def attrs(span):
    return {a["key"]: next(iter(a["value"].values())) for a in span.get("attributes", [])}


def handler(state):
    class H(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self, code, body):
            try:
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the push reads the status line and closes: the rest of the answer is not awaited

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            if self.path != "/v1/traces":
                with state.lock:
                    state.refused += 1
                return self.answer(404, b'{"message":"not found"}')
            if n > MAX_BODY or not self.headers.get("Content-Type", "").startswith("application/json"):
                with state.lock:
                    state.refused += 1
                return self.answer(400, b'{"message":"OTLP/JSON only"}')
            try:
                state.add(json.loads(self.rfile.read(n)))
            except (ValueError, KeyError, TypeError):
                with state.lock:
                    state.refused += 1
                return self.answer(400, b'{"message":"not an ExportTraceServiceRequest"}')
            self.answer(200, b"{}")

    return H


def ms(ns):
    return f"{ns / 1e6:.2f} ms"


def tree(root, kids):
    """The slowest trace's lines: each span under its parent, times from the root's start."""
    t0 = int(root["startTimeUnixNano"])
    by_parent = {}
    for k in kids:
        by_parent.setdefault(k["parentSpanId"], []).append(k)
    lines = []

    def walk(span, depth):
        a = attrs(span)
        b, e = int(span["startTimeUnixNano"]) - t0, int(span["endTimeUnixNano"]) - t0
        label = span["name"] if depth else (f"{span['name']} {a.get('strobe.frame_id', a.get('strobe.operation.id', ''))}"
                                            f" ({a.get('strobe.window', '')})")
        lines.append(f"  {'  ' * depth}{label}: {ms(b)} .. {ms(e)} ({ms(e - b)})")
        for k in sorted(by_parent.get(span["spanId"], []), key=lambda x: int(x["startTimeUnixNano"])):
            walk(k, depth + 1)

    walk(root, 0)
    return lines


def summary(state, path):
    with state.lock:
        doc = {
            "posts": state.posts,
            "refused": state.refused,
            "traces": len(state.traces),
            "operations": state.roots,
            "stage_spans": {k: {"spans": v[0], "total_ms": round(v[1] / 1e6, 3)} for k, v in state.stages.items()},
            "child_spans_without_parent": state.orphans,
        }
        slow = state.slowest
    if path:
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
    print(f"OTLP receiver (examples/demo/otlp_receiver.py): {doc['posts']} POSTs, {doc['traces']} traces "
          f"({', '.join(f'{n} {k}' for k, n in sorted(doc['operations'].items())) or 'none'}), "
          f"{sum(v['spans'] for v in doc['stage_spans'].values())} stage spans, {doc['refused']} refused")
    top = sorted(doc["stage_spans"].items(), key=lambda kv: -kv[1]["total_ms"])[:6]
    if top:
        print("  stage spans by total: " + ", ".join(f"{k} {v['spans']}x {v['total_ms']:.1f} ms" for k, v in top))
    if slow:
        print("  the slowest operation's trace, as a tracing backend shows it:")
        print("\n".join(tree(slow[1], slow[2])[:24]))
    if path:
        print(f"wrote {path}: what the server's OTLP push delivered (docs/otel.md)")
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--summary")
    ap.add_argument("--max-seconds", type=float, default=600)
    args = ap.parse_args()
    state = State()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(state))
    server.daemon_threads = True
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: done.set())
    signal.signal(signal.SIGINT, lambda *a: done.set())
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(args.port_file + ".tmp", args.port_file)
    done.wait(args.max_seconds)
    server.shutdown()
    summary(state, args.summary)


if __name__ == "__main__":
    main()
