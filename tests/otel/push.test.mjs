// push.test.mjs — the server's OTLP/HTTP push (docs/otel.md §Push from the
// server) against a receiver on 127.0.0.1: every body is an OTLP/JSON
// ExportTraceServiceRequest that the official @opentelemetry/otlp-transformer
// definitions decode unchanged (otlp_check.mjs); every pass arrives once;
// a batch the endpoint did not take (503) is sent again after a backoff; a
// refused one (400) is dropped and counted, never sent again; a full queue
// drops its oldest, counted; no run-time (interned) name leaves the process;
// each operation is a root span and each of its stage runs a child span with
// its own times, a nested stage under the stage it ran in; with more
// operations than the push's session keeps (240), each is counted once:
// sent ones are exactly those that arrived, and sent, queued, dropped, missed
// and refused add up to those completed.
//
// Environment: PUSH_APP (tests/otel/push_app.c).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { loadOtlp, checkRequest } from './otlp_check.mjs';

const Req = loadOtlp(createRequire(import.meta.url));
const attrs = (list) => Object.fromEntries((list || []).map((a) => [a.key, Object.values(a.value)[0]]));

// A receiver answering each POST /v1/traces with answer(n) (n counts from 0); it keeps the bodies.
function receiver(answer) {
  const got = { bodies: [], posts: 0 };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      assert.equal(req.method, 'POST');
      assert.equal(req.url, '/v1/traces');
      assert.equal(req.headers['content-type'], 'application/json');
      const status = answer(got.posts++);
      if (status === 200) got.bodies.push(body);
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(status === 200 ? '{}' : '{"code":14}');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, got })));
}

function run(port, n, queue, interval, wait) {
  return new Promise((resolve, reject) => {
    execFile(process.env.PUSH_APP, [`http://127.0.0.1:${port}/v1/traces`, String(n), String(queue), String(interval), wait],
             { timeout: 60000 }, (err, stdout, stderr) => {
               if (err) reject(new Error(`push_app: ${err.message}\n${stderr}`));
               else resolve(JSON.parse(stdout));
             });
  });
}

test('every pass arrives once, decodable, after a retry; no run-time name is sent', async () => {
  const { server, got } = await receiver((i) => (i === 0 ? 503 : 200));
  const n = 40;
  const stats = await run(server.address().port, n, 4096, 50, 'sent');
  server.close();
  assert.equal(stats.spans, n, JSON.stringify(stats));
  assert.ok(stats.retries >= 1, 'the 503 was retried');
  assert.equal(stats.dropped + stats.missed + stats.rejected, 0);
  const ids = [];
  const ns = (t) => BigInt(t);
  for (const body of got.bodies) {
    assert.doesNotMatch(body, /customer_invoice/, 'an interned name never leaves the process');
    const doc = JSON.parse(body);
    checkRequest(Req, doc);
    const rs = doc.resourceSpans[0];
    assert.equal(attrs(rs.resource.attributes)['service.name'], 'push_app');
    const spans = rs.scopeSpans[0].spans;
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    assert.equal(byId.size, spans.length, 'span ids unique');
    for (const s of spans.filter((x) => !x.parentSpanId)) {
      const a = attrs(s.attributes);
      assert.equal(s.name, 'pass');
      ids.push(Number(a['strobe.frame_id']));
      assert.ok(!Object.keys(a).some((k) => k.startsWith('strobe.stage.')), 'every run sent as a span: no totals left on the root');
      assert.ok(ns(s.endTimeUnixNano) > ns(s.startTimeUnixNano));
      const now = BigInt(Date.now()) * 1000000n;
      assert.ok(ns(s.startTimeUnixNano) > now - 120000000000n && ns(s.endTimeUnixNano) <= now + 1000000000n,
                'Unix times of now');
      // Its stages: child spans of the operation's trace with their own times inside it; measure under layout.
      const kids = spans.filter((x) => x.traceId === s.traceId && x !== s);
      const named = (n) => kids.filter((x) => x.name === n);
      assert.deepEqual(kids.map((x) => x.name).sort(),
                       ['layout', 'measure', 'paint', 'paint', `interned_${stats.secret_site}`].sort(), 'one span per stage run');
      for (const k of kids) {
        assert.ok(ns(k.startTimeUnixNano) >= ns(s.startTimeUnixNano) && ns(k.endTimeUnixNano) <= ns(s.endTimeUnixNano),
                  `${k.name} inside its operation`);
        assert.equal(attrs(k.attributes)['strobe.stage'], k.name);
      }
      const [layout] = named('layout'), [measure] = named('measure'), paints = named('paint');
      assert.equal(layout.parentSpanId, s.spanId);
      assert.equal(measure.parentSpanId, layout.spanId, 'a nested stage under the stage it ran in');
      assert.ok(ns(measure.startTimeUnixNano) >= ns(layout.startTimeUnixNano) &&
                ns(measure.endTimeUnixNano) <= ns(layout.endTimeUnixNano));
      assert.ok(ns(layout.endTimeUnixNano) - ns(layout.startTimeUnixNano) >= 300000n, 'layout slept 0.3 ms');
      assert.ok(ns(measure.endTimeUnixNano) - ns(measure.startTimeUnixNano) >= 100000n, 'measure slept 0.1 ms');
      paints.sort((x, y) => (ns(x.startTimeUnixNano) < ns(y.startTimeUnixNano) ? -1 : 1));
      assert.ok(paints.every((p) => p.parentSpanId === s.spanId) &&
                ns(paints[0].endTimeUnixNano) <= ns(paints[1].startTimeUnixNano) &&
                ns(layout.endTimeUnixNano) <= ns(paints[0].startTimeUnixNano), 'paint ran twice, after layout, in order');
    }
  }
  assert.deepEqual(ids.sort((a, b) => a - b), Array.from({ length: n }, (_, i) => 1000 + i), 'each pass once');
});

test('a refused batch (400) is dropped and counted, never sent again', async () => {
  const { server, got } = await receiver(() => 400);
  const n = 10;
  const stats = await run(server.address().port, n, 4096, 50, 'sent');
  server.close();
  assert.equal(stats.rejected, n, JSON.stringify(stats));
  assert.equal(stats.spans + stats.retries, 0);
  assert.ok(got.posts >= 1 && got.posts <= n);
});

test('an endpoint that never takes them: the queue keeps its newest, drops counted', async () => {
  const { server } = await receiver(() => 503);
  const n = 60;
  const stats = await run(server.address().port, n, 8, 20, 'stuck');
  server.close();
  assert.equal(stats.spans, 0, JSON.stringify(stats));
  assert.ok(stats.retries >= 1);
  assert.equal(stats.queued, 8, 'the queue is full, never more');
  assert.equal(stats.dropped + stats.queued + stats.missed, n, 'every pass is sent, queued or counted');
});

test('more operations than its session keeps: each counted once, sent exactly what arrived', async () => {
  const { server, got } = await receiver(() => 200);
  const n = 600;
  const stats = await run(server.address().port, n, 4096, 50, 'sent');
  server.close();
  const ids = got.bodies.flatMap((b) => JSON.parse(b).resourceSpans[0].scopeSpans[0].spans
    .filter((s) => !s.parentSpanId).map((s) => Number(attrs(s.attributes)['strobe.frame_id'])));
  assert.equal(new Set(ids).size, ids.length, 'no operation sent twice');
  assert.equal(stats.spans, ids.length, `sent is what arrived: ${JSON.stringify(stats)}`);
  assert.equal(stats.completed, n, 'its session admitted every pass');
  assert.equal(stats.spans + stats.queued + stats.dropped + stats.missed + stats.rejected, n,
               `each operation in exactly one count: ${JSON.stringify(stats)}`);
  assert.equal(stats.dropped + stats.rejected, 0);
});
