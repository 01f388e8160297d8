// otlp.test.mjs — `strobe export --format otlp` checked against the official
// OpenTelemetry JavaScript packages (docs/otel.md): the export is decoded
// with the OTLP protobuf definitions @opentelemetry/otlp-transformer ships
// (ExportTraceServiceRequest, protobufjs), after the OTLP/JSON rule that ids
// are hex: every key and value must survive verify, fromObject, binary
// encode and decode unchanged, so a misspelt key or a wrong type fails.
// Then the shape of tests/otel/otel_app.c's capture: one trace per
// operation, stages as child spans under the innermost enclosing stage, the
// handed-off pass's stage on its second thread, no span outside an
// operation, scopes only with --otlp-scopes, ids deterministic.
//
// Environment: STROBE_CLI (the strobe tool), OTEL_APP (tests/otel/otel_app.c).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadOtlp, checkRequest } from './otlp_check.mjs';

const cli = process.env.STROBE_CLI, app = process.env.OTEL_APP;
const dir = mkdtempSync(join(tmpdir(), 'strobe-otlp-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const cap = join(dir, 'app.strobe');
execFileSync(app, [cap]);

function exportOtlp(name, ...extra) {
  const out = join(dir, name);
  execFileSync(cli, ['export', cap, '--format', 'otlp', '-o', out, '--quiet', ...extra]);
  return readFileSync(out, 'utf8');
}

const attrs = (list) => Object.fromEntries((list || []).map((a) => [a.key, Object.values(a.value)[0]]));

test('the export decodes with the OTLP definitions, unchanged', () => {
  const Req = loadOtlp(createRequire(import.meta.url));
  const text = exportOtlp('a.json', '--service', 'grid-app', '--resource', 'host.name=test-host',
                          '--resource', 'service.version=1.2.3');
  const doc = JSON.parse(text);
  checkRequest(Req, doc);
  const rs = doc.resourceSpans;
  assert.equal(rs.length, 1);
  const ra = attrs(rs[0].resource.attributes);
  assert.equal(ra['service.name'], 'grid-app');
  assert.equal(ra['host.name'], 'test-host');
  assert.equal(ra['service.version'], '1.2.3');
  assert.equal(ra['telemetry.sdk.name'], 'strobe');
  assert.match(String(ra['process.pid']), /^[1-9][0-9]*$/);
});

test('one trace per operation, stages under their enclosing stage', () => {
  const doc = JSON.parse(exportOtlp('b.json'));
  const spans = doc.resourceSpans[0].scopeSpans[0].spans;
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  assert.equal(byId.size, spans.length, 'span ids are unique');
  const roots = spans.filter((s) => !s.parentSpanId);
  const frame = (r) => attrs(r.attributes)['strobe.frame_id'];
  assert.deepEqual(roots.map((r) => r.name).sort(), ['input', 'pass', 'pass', 'pass']);
  assert.equal(new Set(roots.map((r) => r.traceId)).size, 4, 'a trace per operation');
  const root = (f) => roots.find((r) => frame(r) === String(f));
  const kids = (r) => spans.filter((s) => s.traceId === r.traceId && s !== r);
  const name = (s) => s.name;
  // pass 101: layout { measure }, paint; the plain scope helper only with --otlp-scopes
  const r101 = root(101);
  const k101 = kids(r101);
  assert.deepEqual(k101.map(name).sort(), ['layout', 'measure', 'paint']);
  const layout = k101.find((s) => s.name === 'layout');
  assert.equal(layout.parentSpanId, r101.spanId);
  assert.equal(k101.find((s) => s.name === 'measure').parentSpanId, layout.spanId);
  assert.equal(k101.find((s) => s.name === 'paint').parentSpanId, r101.spanId);
  assert.equal(attrs(r101.attributes)['strobe.counter.rows'], 12);
  assert.equal(attrs(r101.attributes)['strobe.committed'], true);
  // pass 102: handed off; its stages on both threads
  const r102 = root(102);
  assert.equal(attrs(r102.attributes)['strobe.handed_off'], true);
  const k102 = kids(r102);
  assert.deepEqual(k102.map(name).sort(), ['encode', 'present']);
  assert.equal(attrs(k102.find((s) => s.name === 'present').attributes)['thread.name'], 'sender');
  assert.equal(attrs(k102.find((s) => s.name === 'encode').attributes)['thread.name'], 'main');
  // pass 103 was dropped: kept, flagged
  assert.equal(attrs(root(103).attributes)['strobe.committed'], false);
  assert.deepEqual(kids(root(103)).map(name), ['layout']);
  // nothing outside an operation
  assert.ok(!spans.some((s) => s.name === 'orphan_stage' || s.name === 'idle_work'));
  // children lie inside their root, and the times are Unix ns of today
  for (const s of spans) {
    const r = roots.find((x) => x.traceId === s.traceId);
    assert.ok(BigInt(s.startTimeUnixNano) >= BigInt(r.startTimeUnixNano), `${s.name} starts inside`);
    assert.ok(BigInt(s.endTimeUnixNano) <= BigInt(r.endTimeUnixNano), `${s.name} ends inside`);
    assert.ok(BigInt(s.endTimeUnixNano) >= BigInt(s.startTimeUnixNano));
    const now = BigInt(Date.now()) * 1000000n;
    assert.ok(BigInt(s.startTimeUnixNano) > now - 86400000000000n && BigInt(s.startTimeUnixNano) <= now);
  }
});

test('--otlp-scopes adds the scopes inside operations; ids are deterministic', () => {
  const Req = loadOtlp(createRequire(import.meta.url));
  const plain = exportOtlp('c.json');
  assert.equal(exportOtlp('d.json'), plain, 'the same capture exports the same ids');
  const doc = JSON.parse(exportOtlp('e.json', '--otlp-scopes'));
  checkRequest(Req, doc);
  const spans = doc.resourceSpans[0].scopeSpans[0].spans;
  const helper = spans.filter((s) => s.name === 'helper');
  assert.equal(helper.length, 1);
  const layout = spans.find((s) => s.spanId === helper[0].parentSpanId);
  assert.equal(layout.name, 'layout');
  assert.equal(attrs(helper[0].attributes)['strobe.site.kind'], 'scope');
  assert.ok(!spans.some((s) => s.name === 'idle_work'));
  // the stages keep the ids they had without the flag
  const ids = (t) => JSON.parse(t).resourceSpans[0].scopeSpans[0].spans.map((s) => s.spanId).sort();
  assert.ok(ids(plain).every((id) => spans.some((s) => s.spanId === id)));
});
