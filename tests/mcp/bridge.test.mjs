// bridge.test.mjs — CTest `mcp_stdio_bridge`: the official MCP SDK's
// StdioClientTransport running `strobe mcp --url URL --token-file FILE`
// ($STROBE_CLI) against a running instrumented application: initialize,
// list tools, start, read, end and an error path through the bridge; a
// wrong token answers every request with an error instead of hanging.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startApp, sleep } from './app.mjs';

let app;
before(async () => {
  if (!process.env.STROBE_CLI) throw new Error('STROBE_CLI is not set (CTest sets it)');
  app = await startApp();
});
after(async () => {
  assert.equal(await app.stop(), 0);
});

function bridge(tokenFile) {
  return new StdioClientTransport({
    command: process.env.STROBE_CLI,
    args: ['mcp', '--url', app.url, '--token-file', tokenFile],
    stderr: 'pipe',
  });
}

test('the SDK talks to the application through strobe mcp', async () => {
  const transport = bridge(app.tokenFile);
  const client = new Client({ name: 'strobe-bridge-test', version: '1.0.0' });
  await client.connect(transport);
  assert.equal(client.getServerVersion().name, 'strobe');
  const { tools } = await client.listTools();
  assert.equal(tools.length, 7);
  const started = await client.callTool({ name: 'strobe_profile_start', arguments: { max_samples: 30 } });
  assert.ok(!started.isError);
  const id = started.structuredContent.id;
  await sleep(250);
  const read = await client.callTool({ name: 'strobe_profile_read', arguments: { id } });
  assert.ok(!read.isError);
  assert.ok(read.structuredContent.samples.length > 0);
  const ended = await client.callTool({ name: 'strobe_profile_end', arguments: { id } });
  assert.equal(ended.structuredContent.final, true);
  const again = await client.callTool({ name: 'strobe_profile_end', arguments: { id } });
  assert.equal(again.isError, true);
  assert.equal(again.structuredContent.error, 'ended');
  await client.ping();
  await client.close(); // closes the bridge's stdin: it ends the MCP session and exits
});

test('a wrong token is an error, not a hang', async () => {
  const bad = join(dirname(app.tokenFile), 'bad-token');
  writeFileSync(bad, 'not-the-token-not-the-token\n', { mode: 0o600 });
  const client = new Client({ name: 'strobe-bridge-test', version: '1.0.0' });
  await assert.rejects(client.connect(bridge(bad)), /401|token/i);
  await client.close();
});
