// client.test.mjs — CTest `mcp_sdk_client`: the official MCP TypeScript SDK
// (Client + StreamableHTTPClientTransport with the bearer header) against a
// running instrumented application (mcp_app.c): initialize, list tools,
// start, read while frames run (structuredContent validated by the SDK
// against the tool's outputSchema), end, the error paths, and a missing or
// wrong token failing the connection with 401.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startApp, sleep } from './app.mjs';

let app;
before(async () => {
  app = await startApp();
});
after(async () => {
  assert.equal(await app.stop(), 0);
});

async function connect(token = app.token) {
  const headers = token === null ? {} : { Authorization: `Bearer ${token}` };
  const transport = new StreamableHTTPClientTransport(new URL(app.url), { requestInit: { headers } });
  const client = new Client({ name: 'strobe-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

test('initialize: server info, version, tools capability', async () => {
  const { client, transport } = await connect();
  const info = client.getServerVersion();
  assert.equal(info.name, 'strobe');
  assert.match(info.version, /^\d+\.\d+\.\d+$/);
  assert.deepEqual(client.getServerCapabilities().tools, { listChanged: false });
  assert.ok(transport.sessionId && /^[\x21-\x7e]+$/.test(transport.sessionId));
  assert.equal(transport.protocolVersion, '2025-11-25');
  await transport.terminateSession();
  await client.close();
});

test('tools/list: every tool with schemas and annotations', async () => {
  const { client } = await connect();
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), ['strobe_deep_capture_request', 'strobe_profile_end',
    'strobe_profile_explain', 'strobe_profile_read', 'strobe_profile_reset', 'strobe_profile_start',
    'strobe_ui_tree_request']);
  for (const t of tools) {
    assert.equal(t.inputSchema.type, 'object');
    assert.equal(t.outputSchema.type, 'object');
    assert.ok(t.description.length > 20);
  }
  const read = tools.find((t) => t.name === 'strobe_profile_read');
  assert.equal(read.annotations.readOnlyHint, true);
  const start = tools.find((t) => t.name === 'strobe_profile_start');
  assert.equal(start.inputSchema.properties.max_samples.maximum, 240);
  assert.deepEqual(start.inputSchema.properties.kinds.items.enum, ['pass', 'rebuild', 'input', 'request']);
  await client.close();
});

test('strobe_ui_tree_request answers a status or a named error, never a node', async () => {
  const { client } = await connect();
  await client.listTools(); // the SDK validates the answer against the declared output schema
  const status = await client.callTool({ name: 'strobe_ui_tree_request', arguments: { request: false } });
  assert.ok(!status.isError);
  assert.equal(status.structuredContent.requested, false);
  assert.equal(typeof status.structuredContent.written, 'number');
  assert.deepEqual(Object.keys(status.structuredContent.last).sort(), ['bytes', 'nodes', 'nodes_dropped']);
  // mcp_app records nothing (no capture file, flight recorder or stream): the request is refused by name and
  // leaves nothing pending.
  const asked = await client.callTool({ name: 'strobe_ui_tree_request', arguments: {} });
  assert.equal(asked.isError, true);
  assert.equal(asked.structuredContent.error, 'nothing_recording');
  const after = await client.callTool({ name: 'strobe_ui_tree_request', arguments: { request: false } });
  assert.equal(after.structuredContent.pending, false);
  assert.equal(after.structuredContent.requests, status.structuredContent.requests);
  await client.close();
});

test('strobe_deep_capture_request answers a status or a named error, never a call or a byte', async () => {
  const { client } = await connect();
  await client.listTools(); // the SDK validates the answer against the declared output schema
  const status = await client.callTool({ name: 'strobe_deep_capture_request', arguments: { request: false } });
  assert.ok(!status.isError);
  assert.equal(status.structuredContent.requested, false);
  assert.equal(typeof status.structuredContent.written, 'number');
  assert.deepEqual(Object.keys(status.structuredContent.last).sort(), ['bytes', 'calls', 'calls_dropped', 'frame', 'resources']);
  // mcp_app records no capture file: refused by name, nothing pending.
  const asked = await client.callTool({ name: 'strobe_deep_capture_request', arguments: {} });
  assert.equal(asked.isError, true);
  assert.equal(asked.structuredContent.error, 'nothing_recording');
  const after = await client.callTool({ name: 'strobe_deep_capture_request', arguments: { request: false } });
  assert.equal(after.structuredContent.pending, false);
  assert.equal(after.structuredContent.requests, status.structuredContent.requests);
  await client.close();
});

test('a frames-only session keeps passes and counts the other kinds', async () => {
  const { client } = await connect();
  await client.listTools();
  const started = await client.callTool({ name: 'strobe_profile_start', arguments: { kinds: ['pass'] } });
  assert.ok(!started.isError);
  assert.deepEqual(started.structuredContent.kinds, ['pass']);
  await sleep(300);
  const ended = await client.callTool({ name: 'strobe_profile_end', arguments: { id: started.structuredContent.id } });
  assert.ok(!ended.isError);
  const rep = ended.structuredContent;
  assert.deepEqual(rep.session.kinds, ['pass']);
  assert.ok(rep.samples.length > 0);
  assert.ok(rep.samples.every((s) => s.kind === 'pass'));
  for (const u of rep.unfinished) assert.ok(['in_flight', 'stalled', 'no_baseline'].includes(u.state));
  await client.close();
});

test('start, read while frames run, end', async () => {
  const { client, transport } = await connect();
  await client.listTools(); // caches the output schemas the SDK validates against
  const started = await client.callTool({ name: 'strobe_profile_start', arguments: { max_samples: 60 } });
  assert.ok(!started.isError);
  const id = started.structuredContent.id;
  assert.match(id, /^profile_\d+$/);
  assert.equal(started.structuredContent.max_samples, 60);
  await sleep(300);

  const read = await client.callTool({ name: 'strobe_profile_read', arguments: { id } });
  assert.ok(!read.isError);
  const rep = read.structuredContent;
  assert.equal(rep.id, id);
  assert.equal(rep.final, false);
  assert.ok(rep.samples.length > 0, 'frames completed while the session ran');
  assert.ok(rep.samples.length <= 60);
  assert.deepEqual(JSON.parse(read.content[0].text), rep);

  const ended = await client.callTool({ name: 'strobe_profile_end', arguments: { id } });
  assert.ok(!ended.isError);
  assert.equal(ended.structuredContent.final, true);
  assert.ok(ended.structuredContent.samples.length > 0);
  // Frame rates per window, never summed (docs/sessions.md §Frame rate); each
  // window's first-to-last rate over every pass the session counted, more
  // than the 60 samples it returns.
  for (const r of [rep, ended.structuredContent]) {
    const fr = r.frame_rate;
    assert.deepEqual(fr.by_window.map((w) => w.window).sort(), ['main', 'popup']);
    assert.equal(fr.windows, 2);
    assert.equal(fr.passes_per_second, null, 'two windows: no summed rate');
    assert.equal(fr.passes, fr.by_window.reduce((a, w) => a + w.passes, 0));
  }
  const main = ended.structuredContent.frame_rate.by_window.find((w) => w.window === 'main');
  const kept = ended.structuredContent.samples.filter((s) => s.window === 'main' && s.kind === 'pass').length;
  assert.ok(main.passes > kept, `main: ${main.passes} passes counted, ${kept} returned`);
  assert.ok(main.passes_per_second > 0 && main.steady_passes_per_second > 0);
  assert.equal(main.intervals_n, kept - 1);

  // the error paths are results with stable names
  const again = await client.callTool({ name: 'strobe_profile_end', arguments: { id } });
  assert.equal(again.isError, true);
  assert.equal(again.structuredContent.error, 'ended');
  const unknown = await client.callTool({ name: 'strobe_profile_read', arguments: { id: 'profile_987654' } });
  assert.equal(unknown.isError, true);
  assert.equal(unknown.structuredContent.error, 'unknown_id');
  assert.match(unknown.content[0].text, /^unknown_id: /);
  const bad = await client.callTool({ name: 'strobe_profile_start', arguments: { max_samples: 0 } });
  assert.equal(bad.isError, true);
  assert.equal(bad.structuredContent.error, 'invalid_arguments');
  // an unknown tool is a JSON-RPC error (-32602), which the SDK throws
  await assert.rejects(client.callTool({ name: 'strobe_profile_nope', arguments: {} }), /-32602/);
  await transport.terminateSession();
  await client.close();
});

test('availability: read with {}', async () => {
  const { client } = await connect();
  await client.listTools();
  const r = await client.callTool({ name: 'strobe_profile_read', arguments: {} });
  assert.ok(!r.isError);
  const a = r.structuredContent;
  assert.equal(a.feature_enabled, true);
  assert.equal(a.mcp_enabled, true);
  assert.equal(a.observe_granted, true);
  assert.equal(a.tools.strobe_profile_start, true);
  assert.equal(a.limits.max_sessions, 8);
  assert.equal(a.limits.max_samples, 240);
  assert.equal(a.limits.default_samples, 120);
  assert.equal(a.build.name, 'strobe');
  await client.close();
});

test('ownership: another client cannot read or end a session', async () => {
  const a = await connect();
  const b = await connect();
  const started = await a.client.callTool({ name: 'strobe_profile_start', arguments: {} });
  const id = started.structuredContent.id;
  const stolen = await b.client.callTool({ name: 'strobe_profile_end', arguments: { id } });
  assert.equal(stolen.isError, true);
  assert.equal(stolen.structuredContent.error, 'not_owner');
  // ending A's MCP session cancels what it started
  await a.transport.terminateSession();
  await a.client.close();
  await b.client.close();
});

test('missing or wrong token: connect fails with 401', async () => {
  await assert.rejects(connect(null), (e) => /401/.test(String(e?.message ?? e)) || e?.code === 401);
  await assert.rejects(connect('wrong-token-wrong-token-wrong'), (e) => /401/.test(String(e?.message ?? e)) || e?.code === 401);
});
