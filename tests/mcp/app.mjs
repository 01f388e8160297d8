// app.mjs — starts tests/mcp/mcp_app (path in $STROBE_MCP_APP; or another
// application that takes --token-file and prints its port the same way,
// such as frame_clock_app) with a token file in a fresh temporary directory, waits for its "PORT n" line, and
// stops it by closing its stdin. Shared by the SDK tests.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export async function startApp(bin = process.env.STROBE_MCP_APP) {
  if (!bin) throw new Error('the application\'s path is not set (CTest sets STROBE_MCP_APP, STROBE_FRAME_CLOCK_APP)');
  const dir = mkdtempSync(join(tmpdir(), 'strobe-mcp-'));
  const tokenFile = join(dir, 'token');
  const child = spawn(bin, ['--token-file', tokenFile], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('mcp_app did not print its port')), 20000);
    child.on('exit', (code) => reject(new Error(`mcp_app exited early (${code})`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = /^PORT (\d+)$/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
  });
  const token = readFileSync(tokenFile, 'utf8').trim();
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    token,
    tokenFile,
    async stop() {
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.stdin.end();
      const code = await exited;
      rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
