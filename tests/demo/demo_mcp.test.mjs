// demo_mcp.test.mjs — CTest `demo_mcp`: the official MCP TypeScript SDK
// against `strobe-demo --serve`: start a session, read it while the grid
// renders (the report names the demo's stages and windows), end it, and the
// demo shuts down cleanly on SIGINT.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let demo, url, token;

before(async () => {
  const out = mkdtempSync(join(tmpdir(), 'strobe-demo-mcp-'));
  const tokenFile = join(out, 'token');
  demo = spawn(process.env.STROBE_DEMO, ['--serve', '--port', '0', '--token-file', tokenFile, '--out', out], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  demo.stdout.on('data', (d) => (stdout += d));
  for (let i = 0; i < 200 && !/MCP endpoint: (\S+)/.test(stdout); i++) await sleep(50);
  const m = /MCP endpoint: (\S+)/.exec(stdout);
  assert.ok(m, `the demo printed its MCP endpoint (stdout: ${stdout})`);
  url = m[1];
  token = readFileSync(tokenFile, 'utf8').trim();
  assert.ok(token.length >= 16);
  assert.ok(!stdout.includes(`Bearer ${token}`), 'the token is never printed as a header value');
});

after(async () => {
  demo.kill('SIGINT');
  const code = await new Promise((r) => demo.on('exit', (c) => r(c)));
  assert.equal(code, 0);
});

test('start, read while the grid renders, end', async () => {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'strobe-demo-test', version: '1.0.0' });
  await client.connect(transport);
  await client.listTools();
  const started = await client.callTool({ name: 'strobe_profile_start', arguments: { max_samples: 120 } });
  assert.ok(!started.isError);
  const id = started.structuredContent.id;
  // Read until the frames completed while the session ran include the pass's
  // stages: a bounded wait on that condition, not a fixed sleep (the GPU path
  // on lavapipe shares the CPU with the grid's rendering; a busy machine slows both).
  const want = ['layout_update', 'layout_compute', 'raster', 'encode'];
  let read;
  for (let waited = 0; ; waited += 500) {
    await sleep(500);
    read = await client.callTool({ name: 'strobe_profile_read', arguments: { id } });
    assert.ok(!read.isError);
    const seen = new Set((read.structuredContent.stage_summary || []).map((s) => s.name));
    if (read.structuredContent.samples.length > 0 && want.every((s) => seen.has(s))) break;
    assert.ok(waited < 60000, 'frames with every stage completed within 60 s while the session ran');
  }
  const ended = await client.callTool({ name: 'strobe_profile_end', arguments: { id } });
  assert.ok(!ended.isError);
  const rep = ended.structuredContent;
  assert.equal(rep.final, true);
  const stages = new Set(rep.stage_summary.map((s) => s.name));
  for (const s of want) assert.ok(stages.has(s), `stage ${s}`);
  const windows = new Set(rep.samples.map((s) => s.window));
  assert.ok(windows.has('main'));
  assert.ok(!windows.has('devtools'), 'devtools excluded by default');
  await transport.terminateSession();
  await client.close();
});
