// otlp_check.mjs — decodes an OTLP/JSON trace request with the protobuf
// definitions of the official @opentelemetry/otlp-transformer package and
// checks it survives unchanged (tests/otel/otlp.test.mjs and the push test
// share it). A missing package is an error naming it, never a skip.
import assert from 'node:assert/strict';

const PKG = '@opentelemetry/otlp-transformer';

export function loadOtlp(require) {
  let root;
  try {
    root = require(`${PKG}/build/src/generated/root`);
  } catch (e) {
    throw new Error(`the npm package ${PKG} is missing (scripts/npm-deps.sh installs it): ${e.message}`);
  }
  return root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
}

const ID_KEYS = new Set(['traceId', 'spanId', 'parentSpanId']);

// OTLP/JSON writes trace and span ids as hex (not base64 like other bytes).
function idsToBytes(v, key) {
  if (Array.isArray(v)) return v.map((x) => idsToBytes(x));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, idsToBytes(x, k)]));
  if (ID_KEYS.has(key)) {
    assert.match(v, /^[0-9a-f]*$/, `${key} is lowercase hex`);
    return Buffer.from(v, 'hex');
  }
  return v;
}
function idsToHex(v, key) {
  if (Array.isArray(v)) return v.map((x) => idsToHex(x));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, idsToHex(x, k)]));
  if (ID_KEYS.has(key)) return Buffer.from(v, 'base64').toString('hex');
  return v;
}
// The int64 fields of a trace request: proto3's JSON mapping writes them as
// decimal strings (numbers are accepted too).
const INT64 = (k) => k === 'intValue' || /UnixNano$/.test(k);
// Compares them as strings; nothing else changes type.
function norm(v, key) {
  if (Array.isArray(v)) return v.map((x) => norm(x));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, norm(x, k)]));
  return INT64(key) && typeof v === 'number' ? String(v) : v;
}
// For verify, which wants numbers (or Longs) there: each must be a decimal integer.
function int64AsNumber(v, key) {
  if (Array.isArray(v)) return v.map((x) => int64AsNumber(x));
  if (v && typeof v === 'object' && !Buffer.isBuffer(v))
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, int64AsNumber(x, k)]));
  if (INT64(key) && typeof v === 'string') {
    assert.match(v, /^-?[0-9]+$/, `${key} is a decimal integer`);
    return Number(v);
  }
  return v;
}

export function checkRequest(Req, doc) {
  const obj = idsToBytes(doc);
  assert.equal(Req.verify(int64AsNumber(obj)), null, 'verify against ExportTraceServiceRequest');
  const bytes = Req.encode(Req.fromObject(obj)).finish();
  const back = Req.toObject(Req.decode(bytes), { longs: String, enums: Number, bytes: String, defaults: false });
  assert.deepEqual(norm(idsToHex(back)), norm(doc), 'the request survives binary encode and decode unchanged');
  for (const rs of doc.resourceSpans)
    for (const ss of rs.scopeSpans)
      for (const s of ss.spans) {
        assert.equal(s.traceId.length, 32, 'a trace id is 16 bytes');
        assert.equal(s.spanId.length, 16, 'a span id is 8 bytes');
        assert.notEqual(s.traceId, '0'.repeat(32));
        assert.notEqual(s.spanId, '0'.repeat(16));
        if (s.parentSpanId) assert.equal(s.parentSpanId.length, 16);
      }
  return bytes.length;
}
