// strobe_view.mjs — what the browser tests and bench/viewer_bench.mjs share:
// command-line arguments, running a tool, running `strobe view` (or reading
// an application's viewer URL) and waiting for the URL it prints, launching
// Debian's Chromium through playwright-core with WebGL2 on SwiftShader,
// collecting every console error and page error (a test fails on any), and
// the tests' tally of checks.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repo = path.resolve(here, '..', '..');
const require = createRequire(path.join(repo, 'package.json'));

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--use-angle=swiftshader', '--enable-unsafe-swiftshader'];

export function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  if (i < 0 || i + 1 >= process.argv.length) {
    if (fallback !== undefined) return fallback;
    throw new Error(`missing ${name}`);
  }
  return process.argv[i + 1];
}

// Runs a tool to completion; its stdout, or an error naming how it failed.
export function run(bin, args) {
  const p = spawnSync(bin, args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (p.status !== 0) throw new Error(`${bin} ${args.join(' ')} exited ${p.status}: ${p.stderr}`);
  return p.stdout;
}

// The tally of a test's checks: check() counts one and prints a failure;
// finish(main) runs the test (a throw counts as one more failure), prints
// "N passed, M failed" and exits 1 on any failure, and also when no check
// ran at all (a test that checked nothing proves nothing).
const tally = { passes: 0, failures: 0 };

export function check(cond, what) {
  if (cond) tally.passes++;
  else {
    tally.failures++;
    console.error(`FAIL: ${what}`);
  }
}

export async function finish(main) {
  try {
    await main();
  } catch (e) {
    console.error(e);
    tally.failures++;
  }
  console.log(`${tally.passes} passed, ${tally.failures} failed`);
  if (tally.passes + tally.failures === 0) console.error('FAIL: no check ran');
  process.exit(tally.failures || tally.passes === 0 ? 1 : 0);
}

// Starts `strobe view ARGS --no-open` and resolves once it printed its URL.
export function startView(strobe, args, { timeoutMs = 60000 } = {}) {
  return new Promise((resolve, reject) => {
    const proc = spawn(strobe, ['view', '--no-open', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`strobe view printed no URL: ${err}`)); }, timeoutMs);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /(http:\/\/127\.0\.0\.1:(\d+)\/#token=([0-9a-f]+))/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], port: Number(m[2]), token: m[3], proc, stderr: () => err, stop: () => stopProc(proc) });
      }
    });
    proc.stderr.on('data', (d) => { err += d; });
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`strobe view exited ${code}: ${err}`)); });
  });
}

// Starts `strobe view ARGS` letting it open a browser: xdg-open is a stand-in in work/bin that writes its
// arguments down. Resolves with the URL the browser was given (a one-time #code=…) once it ran.
export function startViewOpened(strobe, args, work, { timeoutMs = 60000 } = {}) {
  const bin = path.join(work, 'bin'), opened = path.join(work, 'opened.txt');
  fs.mkdirSync(bin, { recursive: true });
  fs.rmSync(opened, { force: true });
  fs.writeFileSync(path.join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s\\n' "$@" > "${opened}.tmp" && mv "${opened}.tmp" "${opened}"\n`,
    { mode: 0o755 });
  const env = { ...process.env, PATH: `${bin}:${process.env.PATH}`, DISPLAY: ':99' };
  const proc = spawn(strobe, ['view', '--quiet', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = setInterval(() => {
      if (fs.existsSync(opened)) {
        clearInterval(poll);
        resolve({ url: fs.readFileSync(opened, 'utf8').trim(), proc, stop: () => stopProc(proc) });
      } else if (Date.now() - started > timeoutMs || proc.exitCode !== null) {
        clearInterval(poll);
        proc.kill('SIGKILL');
        reject(new Error('strobe view opened no browser'));
      }
    }, 100);
  });
}

export function stopProc(proc) {
  return new Promise((resolve) => {
    if (proc.exitCode !== null) return resolve(proc.exitCode);
    proc.removeAllListeners('exit');
    proc.on('exit', (code, sig) => resolve(code ?? sig));
    proc.kill('SIGTERM');
    setTimeout(() => proc.kill('SIGKILL'), 5000).unref();
  });
}

export async function launch(executablePath) {
  const { chromium } = require('playwright-core');
  return chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}

// Records console errors and uncaught page errors into `errors`.
export function watchErrors(page, errors) {
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`page: ${e.message}`));
}

export async function openViewer(browser, url, { width = 1500, height = 900 } = {}) {
  const page = await browser.newPage({ viewport: { width, height } });
  const errors = [];
  watchErrors(page, errors);
  await page.goto(url);
  await page.waitForFunction(() => window.__strobe && window.__strobe.ready, null, { timeout: 60000 });
  return { page, errors };
}
