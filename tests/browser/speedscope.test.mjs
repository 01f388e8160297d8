// speedscope.test.mjs — the real consumer test of `strobe export` (issue 4,
// item 2): speedscope's own static app (npm package `speedscope`,
// dist/release) loads Strobe's speedscope export and its Chrome Trace Event
// export in Debian's Chromium, driven by playwright-core, and the test reads
// what speedscope shows: the page title, the profile (thread) names, and in
// the Sandwich view (a DOM table, unlike the canvas flame charts) each
// frame's total time, which must equal what `strobe report --json` computes.
// Unfinished and lost scopes must appear under their honest names.
//
// The app and the exported files are served on 127.0.0.1 by a small HTTP
// server here; the profile is passed as #profileURL=.
//
// usage: node speedscope.test.mjs --strobe BIN --make-capture BIN
//                                 --chromium PATH --work DIR
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { arg, check, finish, launch, repo, run } from './strobe_view.mjs';

const strobe = arg('--strobe');
const makeCapture = arg('--make-capture');
const chromiumPath = arg('--chromium');
const work = arg('--work');

// speedscope shows times like "825.00µs (77%)", "1.07ms", "0.00ns".
function parseTime(text) {
  const m = /^([0-9.]+)\s*(ns|µs|us|ms|s|min|h)\b/.exec(text.trim());
  if (!m) return NaN;
  const scale = { ns: 1, 'µs': 1e3, us: 1e3, ms: 1e6, s: 1e9, min: 60e9, h: 3600e9 }[m[2]];
  return parseFloat(m[1]) * scale;
}

// Three significant digits are shown: within 1 % (plus half a unit of the last digit).
function close(shown, want) {
  return Math.abs(shown - want) <= Math.max(0.01 * want, 5);
}

const types = {
  '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json',
  '.wasm': 'application/wasm', '.png': 'image/png', '.woff2': 'font/woff2', '.ico': 'image/x-icon',
  '.txt': 'text/plain',
};

function serve(appDir, files) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    const name = decodeURIComponent(url.pathname.slice(1)) || 'index.html';
    const file = files[name] || path.join(appDir, path.normalize(name).replace(/^(\.\.[/\\])+/, ''));
    fs.readFile(file, (err, data) => {
      if (err) {
        res.writeHead(404);
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': types[path.extname(file)] || 'application/octet-stream' });
      res.end(data);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function sandwichRows(page) {
  return page.$$eval('table tr', (trs) =>
    trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => td.textContent.trim())).filter((r) => r.length === 3));
}

// Opens one exported file; returns {title, profiles: [names], rows: {profileName: [[total, self, name]]}}.
async function show(browser, port, file) {
  const page = await browser.newPage();
  const logs = [];
  page.on('console', (m) => logs.push(m.text()));
  await page.goto(`http://127.0.0.1:${port}/index.html#profileURL=${encodeURIComponent(`http://127.0.0.1:${port}/${file}`)}`);
  // Loaded when the toolbar names the profile: "main (1/2)".
  await page.waitForFunction(() => /\(\d+\/\d+\)/.test(document.body.innerText), null, { timeout: 30000 });
  const title = await page.title();
  await page.locator('div', { hasText: /^🥪Sandwich$/ }).last().click();
  await page.waitForFunction(() => document.body.innerText.includes('Symbol Name'), null, { timeout: 10000 });
  const result = { title, rows: {}, logs };
  const count = parseInt((await page.evaluate(() => /\(\d+\/(\d+)\)/.exec(document.body.innerText)[1])), 10);
  result.profiles = [];
  for (let i = 0; i < count; i++) {
    const rows = await sandwichRows(page);
    // The first table lists the profiles (#, name, total weight); the sandwich rows follow.
    const profileRows = rows.filter((r) => /^\d+$/.test(r[0]));
    if (i === 0) result.profiles = profileRows.map((r) => r[1]);
    const current = await page.evaluate(() => /([^\n]*) \(\d+\/\d+\)/.exec(document.body.innerText)[1].trim());
    result.rows[current] = rows.filter((r) => !/^\d+$/.test(r[0]));
    await page.keyboard.press('n'); // next profile
    await page.waitForTimeout(300);
  }
  await page.close();
  return result;
}

function totalOf(rows, name, withArgs) {
  // In the chrome import, speedscope names a frame "name {args}" when the event has args.
  const match = rows.filter((r) => r[2] === name || (withArgs && r[2].startsWith(`${name} {`)));
  if (!match.length) return NaN;
  return match.reduce((sum, r) => sum + parseTime(r[0]), 0);
}

async function main() {
  for (const [what, p] of [['chromium', chromiumPath], ['speedscope app', path.join(repo, 'node_modules/speedscope/dist/release/index.html')]]) {
    if (!fs.existsSync(p)) throw new Error(`${what} not found at ${p} (scripts/deps.sh and scripts/npm-deps.sh install it)`);
  }
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(work, { recursive: true });
  const base = path.join(work, 'base.strobe');
  const unf = path.join(work, 'unfinished.strobe');
  run(makeCapture, [base]);
  run(makeCapture, [unf, '--unfinished', '--lost']);
  const files = {};
  for (const [cap, stem] of [[base, 'base'], [unf, 'unfinished']]) {
    // Not "*.chrome.json": speedscope takes that suffix for a DevTools CPU profile.
    for (const [fmt, suffix] of [['speedscope', 'speedscope.json'], ['chrome', 'trace.json']]) {
      const out = path.join(work, `${stem}.${suffix}`);
      run(strobe, ['export', cap, '--format', fmt, '-o', out, '--quiet']);
      files[`${stem}.${suffix}`] = out;
    }
  }
  // What speedscope must show: strobe's own per-thread totals.
  const expected = {};
  for (const thread of ['main', 'worker']) {
    const j = JSON.parse(run(strobe, ['report', base, '--json', '--quiet', '--thread', thread]));
    expected[thread] = Object.fromEntries(j.sites.map((s) => [s.name, s.total_ns]));
  }

  const server = await serve(path.join(repo, 'node_modules/speedscope/dist/release'), files);
  const port = server.address().port;
  const browser = await launch(chromiumPath);
  try {
    // >>speedscope format: profiles named by thread, frames by site.
    let r = await show(browser, port, 'base.speedscope.json');
    check(r.title === 'base.strobe - speedscope', `speedscope export: title is the capture name (${r.title})`);
    check(JSON.stringify(r.profiles) === '["main","worker"]', `speedscope export: one profile per thread (${r.profiles})`);
    check(r.logs.some((l) => l.includes('Importing as speedscope json file')), 'speedscope export: imported as speedscope JSON');
    for (const thread of ['main', 'worker']) {
      const rows = r.rows[thread] || [];
      for (const [name, ns] of Object.entries(expected[thread])) {
        const shown = totalOf(rows, name, false);
        check(close(shown, ns), `speedscope export: ${thread} ${name} total shown ${shown} ns, strobe report ${ns} ns`);
      }
    }
    // >>chrome format: speedscope groups by pid/tid and names profiles by thread_name.
    r = await show(browser, port, 'base.trace.json');
    check(r.logs.some((l) => l.includes('Trace Event Format')), 'chrome export: imported as Trace Event Format');
    check(r.profiles.length === 2 && /main \(tid 1000\)/.test(r.profiles[0]) && /worker \(tid 1001\)/.test(r.profiles[1]),
      `chrome export: threads named by thread_name (${r.profiles})`);
    for (const [key, rows] of Object.entries(r.rows)) {
      const thread = /main/.test(key) ? 'main' : 'worker';
      for (const [name, ns] of Object.entries(expected[thread])) {
        const shown = totalOf(rows, name, true);
        check(close(shown, ns), `chrome export: ${thread} ${name} total shown ${shown} ns, strobe report ${ns} ns`);
      }
    }
    // >>unfinished and lost scopes keep their honest names in both.
    r = await show(browser, port, 'unfinished.speedscope.json');
    let names = Object.values(r.rows).flat().map((row) => row[2]);
    check(names.includes('stalled [unfinished: never ended]'), `speedscope export: unfinished scope named so (${names})`);
    check(names.includes('job [end lost]'), `speedscope export: lost scope named so (${names})`);
    r = await show(browser, port, 'unfinished.trace.json');
    names = Object.values(r.rows).flat().map((row) => row[2]);
    check(names.includes('stalled {"strobe":"unfinished: never ended"}'), `chrome export: unfinished B event shown (${names})`);
    check(names.includes('job {"strobe":"end lost"}'), `chrome export: lost B event shown (${names})`);
  } finally {
    await browser.close();
    server.close();
  }
}

finish(main);
