// explain.test.mjs — CTest `mcp_explain`: the official MCP SDK client (as
// client.test.mjs connects) asks strobe_profile_explain about
// frame_clock_app, a GTK-shaped frame clock (update, layout, paint) whose
// slow passes are known: pass 30's layout sleeps 100 ms (blocked), pass 40's
// paint spins 100 ms of CPU (on CPU, in spin_paint), pass 50's layout waits
// until the test ends (the unfinished, stalled frame). The SDK validates
// each answer against the tool's outputSchema; the explanation must name the
// right stage and kind for each, and carry no function name.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startApp, sleep } from './app.mjs';

let app;
let client;
before(async () => {
  app = await startApp(process.env.STROBE_FRAME_CLOCK_APP);
  const transport = new StreamableHTTPClientTransport(new URL(app.url), {
    requestInit: { headers: { Authorization: `Bearer ${app.token}` } },
  });
  client = new Client({ name: 'strobe-explain-test', version: '1.0.0' });
  await client.connect(transport);
  await client.listTools(); // the SDK validates structuredContent against the listed outputSchema from now on
});
after(async () => {
  await client.close();
  assert.equal(await app.stop(), 0);
});

const explain = async (args) => {
  const r = await client.callTool({ name: 'strobe_profile_explain', arguments: args });
  assert.ok(!r.isError, JSON.stringify(r.structuredContent));
  assert.ok(!JSON.stringify(r).includes('spin_paint'), 'a sampled function name reached MCP');
  return r.structuredContent;
};

// Waits (polling, cap 400 calls) until pass 50 is stuck: every slow pass is then in the recording.
async function untilStalled() {
  for (let i = 0; i < 400; i++) {
    const sc = await explain({});
    const u = sc.unfinished.find((f) => f.number === 50);
    if (u && u.stall === 'stalled' && u.thread_now === 'blocked') return sc;
    await sleep(50);
  }
  throw new Error('pass 50 never showed as stalled and blocked');
}

const worst = (frame) => frame.parts[frame.worst];

test('the stalled pass: stuck in layout, blocked, past twice its p95', async () => {
  const sc = await untilStalled();
  assert.equal(sc.source, 'live');
  assert.equal(sc.coverage.switches, true);
  const u = sc.unfinished.find((f) => f.number === 50);
  assert.equal(u.kind, 'pass');
  assert.equal(u.series, 'main');
  assert.equal(u.stage, 'layout');
  assert.equal(u.stage_parent, null);
  assert.ok(u.n >= 40 && u.elapsed_ns > 2 * u.p95_ns);
  assert.ok(u.stage_elapsed_ns > 0 && u.stage_elapsed_ns <= u.elapsed_ns && u.thread_since_ns > 0);
});

test('the slow passes: layout blocked in 30, paint on CPU in 40', async () => {
  await untilStalled();
  const sc = await explain({ slowest: 8 });
  const byNumber = new Map(sc.frames.map((f) => [f.number, f]));
  const blocked = byNumber.get(30);
  const spun = byNumber.get(40);
  assert.ok(blocked && spun, `frames 30 and 40 among the slowest: ${[...byNumber.keys()]}`);
  assert.equal(worst(blocked).name, 'layout');
  assert.equal(worst(blocked).cause, 'blocked');
  assert.ok(worst(blocked).causes.includes('blocked') && !worst(blocked).causes.includes('on CPU'));
  assert.ok(worst(blocked).blocked.ns >= 90e6);
  assert.equal(worst(spun).name, 'paint');
  assert.ok(worst(spun).causes.includes('on CPU') && !worst(spun).causes.includes('blocked'));
  assert.ok(worst(spun).on_cpu.ns >= 90e6);
  assert.ok(worst(spun).functions_withheld >= 1 && !('functions' in worst(spun)));
  for (const f of [blocked, spun]) assert.ok(f.wall.n >= 40 && f.wall.ns > f.wall.p50_ns);
  // One frame by its operation id, as a session report's samples name it.
  const one = await explain({ sample: blocked.op });
  assert.equal(one.sample_found, true);
  assert.equal(one.frames.length, 1);
  assert.equal(one.frames[0].number, 30);
});

test('a session report\'s unfinished entry and the explanation name the same operation', async () => {
  const sc = await untilStalled();
  const started = await client.callTool({ name: 'strobe_profile_start', arguments: {} });
  const id = started.structuredContent.id;
  const report = (await client.callTool({ name: 'strobe_profile_read', arguments: { id } })).structuredContent;
  await client.callTool({ name: 'strobe_profile_end', arguments: { id } });
  const stuck = report.unfinished.find((u) => u.prospective_frame_id === 50);
  assert.ok(stuck, `the session lists pass 50 as unfinished: ${JSON.stringify(report.unfinished)}`);
  assert.equal(stuck.phase, 'layout');
  assert.equal(sc.unfinished.find((f) => f.number === 50).op, stuck.id);
  const one = await explain({ sample: stuck.id }); // the unfinished operation by its id: explained as far as it got
  assert.equal(one.sample_found, true);
  assert.equal(one.frames[0].number, 50);
  assert.equal(one.frames[0].state, 'unfinished');
});

test('bad arguments are invalid_arguments', async () => {
  const r = await client.callTool({ name: 'strobe_profile_explain', arguments: { slowest: 9 } });
  assert.equal(r.isError, true);
  assert.equal(r.structuredContent.error, 'invalid_arguments');
});
