#!/usr/bin/env python3
"""producer.py — an external producer in another language, as the demo runs it
(docs/server.md §External producers): a stand-in for an audio engine that
times its own callbacks and sends them to the demo's server, which puts them
on the lane `py/audio` of the live capture.

Every 10 ms it runs an "audio callback" (mixing two 256-sample buffers and a
soft limiter, in plain Python: real work, timed with time.monotonic_ns()),
and every 100 ms it posts what it timed as one batch to
POST /api/producer/spans. Standard library only. It stops on SIGTERM or
SIGINT (sending what it has) and prints one summary line to stderr.

usage: producer.py [--lane py/audio] < "URL TOKEN" line
(the demo writes the line on its standard input once its server runs: the
token never appears on a command line or in the environment; a script that
reads end of input first just ends)
"""
import argparse
import json
import math
import signal
import sys
import time
import urllib.error
import urllib.request

NAMES = ["audio_callback", "mix", "limiter"]
CALLBACK, MIX, LIMITER = range(3)
PERIOD_NS = 10_000_000      # one callback every 10 ms
BATCH_NS = 100_000_000      # one batch every 100 ms
SAMPLES = 256

stopping = False


def on_signal(_sig, _frame):
    global stopping
    stopping = True


def callback(phase, spans):
    """One audio callback: its three spans go to `spans` as (name, begin, end)."""
    t0 = time.monotonic_ns()
    a = [math.sin((phase + i) * 0.031) for i in range(SAMPLES)]
    b = [math.sin((phase + i) * 0.017) for i in range(SAMPLES)]
    m0 = time.monotonic_ns()
    mixed = [0.6 * x + 0.4 * y for x, y in zip(a, b)]
    m1 = time.monotonic_ns()
    out = [math.tanh(1.5 * x) for x in mixed]
    l1 = time.monotonic_ns()
    spans += [(CALLBACK, t0, l1), (MIX, m0, m1), (LIMITER, m1, l1)]
    return out[0]


def post(url, token, lane, spans):
    body = json.dumps({"v": 1, "clock": "monotonic_ns", "lanes": [lane], "names": NAMES,
                       "spans": [[0, n, b, e] for n, b, e in spans]}, separators=(",", ":")).encode()
    req = urllib.request.Request(url + "/api/producer/spans", data=body, method="POST",
                                 headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, json.load(r).get("recorded", 0)
    except urllib.error.HTTPError as e:
        return e.code, 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lane", default="py/audio")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        url, token = sys.stdin.readline().split()
    except ValueError:  # end of input: the demo runs without a server
        return 0
    args.url = url
    spans, recorded, batches, refused = [], 0, 0, {}
    phase, next_cb, next_batch = 0, time.monotonic_ns(), time.monotonic_ns() + BATCH_NS
    while not stopping:
        now = time.monotonic_ns()
        if now >= next_cb:
            callback(phase, spans)
            phase += SAMPLES
            next_cb += PERIOD_NS
        if now >= next_batch and spans:
            try:
                status, n = post(args.url, token, args.lane, spans)
            except OSError:  # the server went away: the demo is ending
                break
            if status == 200:
                recorded += n
                batches += 1
            else:
                refused[status] = refused.get(status, 0) + 1
            spans = []
            next_batch = now + BATCH_NS
        time.sleep(max(0, min(next_cb, next_batch) - time.monotonic_ns()) / 1e9)
    if spans:
        try:
            status, n = post(args.url, token, args.lane, spans)
            if status == 200:
                recorded += n
                batches += 1
            else:
                refused[status] = refused.get(status, 0) + 1
        except OSError:
            pass
    why = ", ".join(f"{n} answered {s}" for s, n in sorted(refused.items())) or "none refused"
    print(f"producer.py: {recorded} spans in {batches} batches on lane {args.lane} ({why})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
