// viewer_report.test.mjs — the self-contained report (docs/viewer.md §One
// file): `strobe export CAP --format html -o report.html` on a make_capture
// capture with frame marks, stages, counters by kind and a GPU lane, opened
// from disk (file://) in Debian's Chromium with every request but the file's
// own aborted and recorded. It checks:
//   - the export: exit 0 and a file; --format html without -o, or with a
//     filter (--from), is a usage error (exit 2) that writes nothing; a
//     missing capture exits 1 writing nothing, a truncated one exits 1 with
//     the report of what was read;
//   - --max-spans N: a report of the first N spans (of the demo's capture,
//     demo_headless's, when built), the header counting the rest, its range
//     ending inside the capture's;
//   - the page makes no request but its own file (none leaves the page,
//     blocked or not) and logs no error;
//   - the same panels as `strobe view` of the same capture: the frame list's
//     entries and the Statistics tab's rows equal the served viewer's; the
//     flame chart draws the frame's spans; a span selected fills the detail
//     panel with its name; the flame graph has boxes; the Counters tab draws
//     an axis per series; the header says it is a report.
// Screenshots go to --work.
//
// usage: node viewer_report.test.mjs --strobe BIN --make-capture BIN [--demo-capture FILE] --chromium PATH --work DIR
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { arg, check, finish, launch, openViewer, run, startView, watchErrors } from './strobe_view.mjs';

const strobe = arg('--strobe');
const makeCapture = arg('--make-capture');
const chromiumPath = arg('--chromium', '/usr/bin/chromium');
const work = arg('--work');
const demoCapture = arg('--demo-capture', '');   // demo_headless's 10 s capture, when the demo is built

// What a viewer shows of one capture, through the test hook and the DOM.
async function panels(page) {
  return page.evaluate(async () => {
    const h = window.__strobe;
    const entries = h.entries().map((e) => ({ number: e.number, start: e.start, dur: e.dur, committed: e.committed, stages: e.stages }));
    h.setTab('stats');
    await new Promise((r) => requestAnimationFrame(r));
    const stats = [...document.querySelectorAll('#view-stats tr[data-site]')].map((tr) => [...tr.cells].map((td) => td.textContent.trim()).join('|'));
    h.setTab('timeline');
    // Every span's start, bit for bit (the report stores them transformed: standalone.js undoes it).
    const m = h.model(), u = new Uint32Array(m.start.buffer, m.start.byteOffset, m.n * 2);
    let starts = 0;
    for (let k = 0; k < u.length; k++) starts = (Math.imul(starts, 31) + u[k]) >>> 0;
    return { entries, stats, listRows: h.listRows(), n: m.n, starts };
  });
}

// --max-spans: a report of the capture's first spans (the demo's 10 s capture when given, else a make_capture
// one with elements), its header counting the spans cut and its time range ending inside the capture's.
async function cutReport(browser) {
  const cap = path.join(work, 'elements.strobe'), whole = path.join(work, 'whole.html'), cut = path.join(work, 'cut-spans.html');
  if (!demoCapture) run(makeCapture, [cap, '--frames', '50', '--ui-tree']);
  const src = demoCapture || cap;
  run(strobe, ['export', src, '--format', 'html', '-o', whole, '--quiet']);
  const open = async (file) => {
    const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
    const errors = [];
    watchErrors(page, errors);
    await page.goto(pathToFileURL(file).href);
    await page.waitForFunction(() => window.__strobe && window.__strobe.ready, null, { timeout: 60000 });
    const got = await page.evaluate(() => { const m = window.__strobe.model(); return { range: window.__strobe.range(), n: m.n, cut: m.meta.spans_cut,
      head: document.querySelector('#identity').innerText }; });
    await page.close();
    return { ...got, errors };
  };
  const w = await open(whole), keep = Math.floor(w.n / 2);   // cut mid-frame, where elements and open scopes are
  const p = spawnSync(strobe, ['export', src, '--format', 'html', '-o', cut, '--max-spans', String(keep)], { encoding: 'utf8' });
  check(p.status === 0 && fs.existsSync(cut), `--max-spans ${keep} of ${demoCapture ? "the demo's capture" : 'a make_capture one'}: exit ${p.status}, a report written`);
  const c = await open(cut);
  check(c.n === keep && c.cut > 0 && c.head.includes(String(c.cut).replace(/\B(?=(\d{3})+(?!\d))/g, ',')), `the cut report holds ${keep} spans of ${w.n} and its header counts the ${c.cut} cut (${c.n})`);
  check(Number.isFinite(c.range.hi) && c.range.hi <= w.range.hi && c.range.hi > c.range.lo,
    `the cut report's range ends inside the capture's (${c.range.lo} … ${c.range.hi}, whole ${w.range.hi})`);
  check(w.errors.length + c.errors.length === 0, `no error opening either report (${[...w.errors, ...c.errors].slice(0, 3).join('; ')})`);
}

function exportFails(args, what) {
  const out = path.join(work, 'refused.html');
  fs.rmSync(out, { force: true });
  const p = spawnSync(strobe, ['export', ...args], { encoding: 'utf8' });
  check(p.status === 2 && !fs.existsSync(out), `${what}: exit ${p.status} (want 2), no file written: ${p.stderr.trim()}`);
}

async function main() {
  fs.mkdirSync(work, { recursive: true });
  const cap = path.join(work, 'cap.strobe'), html = path.join(work, 'report.html');
  run(makeCapture, [cap, '--frames', '200', '--stages', '--kinds', '--units', '--gpu']);
  fs.rmSync(html, { force: true });
  const p = spawnSync(strobe, ['export', cap, '--format', 'html', '-o', html], { encoding: 'utf8' });
  check(p.status === 0 && fs.existsSync(html), `strobe export --format html exits 0 and writes the file (exit ${p.status}: ${p.stderr.trim()})`);
  exportFails([cap, '--format', 'html'], '--format html without -o');
  exportFails([cap, '--format', 'html', '--from', '10', '-o', path.join(work, 'refused.html')], '--format html with --from');
  exportFails([cap, '--format', 'chrome', '--max-spans', '5', '-o', path.join(work, 'refused.html')], '--max-spans with another format');
  exportFails([cap, '--format', 'html', '--max-spans', '0', '-o', path.join(work, 'refused.html')], '--max-spans 0');
  // Bad input (docs/cli.md §Damaged captures): a missing capture writes nothing (exit 1); a truncated one
  // writes the report of what was read and exits 1.
  const missing = path.join(work, 'missing.html'), cut = path.join(work, 'cut.html'), trunc = path.join(work, 'trunc.strobe');
  fs.rmSync(missing, { force: true });
  fs.rmSync(cut, { force: true });
  let q = spawnSync(strobe, ['export', path.join(work, 'no-such.strobe'), '--format', 'html', '-o', missing], { encoding: 'utf8' });
  check(q.status === 1 && !fs.existsSync(missing), `a missing capture: exit ${q.status} (want 1), nothing written`);
  fs.writeFileSync(trunc, fs.readFileSync(cap).subarray(0, Math.floor(fs.statSync(cap).size / 2)));
  q = spawnSync(strobe, ['export', trunc, '--format', 'html', '-o', cut], { encoding: 'utf8' });
  check(q.status === 1 && fs.existsSync(cut), `a truncated capture: exit ${q.status} (want 1), the report of what was read written`);

  const browser = await launch(chromiumPath);
  try {
    // The served viewer of the same capture: what the report must show too.
    const view = await startView(strobe, [cap]);
    let served;
    try {
      const v = await openViewer(browser, view.url, { width: 1600, height: 900 });
      served = await panels(v.page);
      await v.page.close();
    } finally {
      await view.stop();
    }

    const url = pathToFileURL(html).href;
    const context = await browser.newContext({ viewport: { width: 1600, height: 900 } });
    const requests = [], aborted = [];
    await context.route('**/*', (route) => {
      const u = route.request().url();
      if (u === url) return route.continue();
      aborted.push(u);
      return route.abort();
    });
    const page = await context.newPage();
    const errors = [];
    watchErrors(page, errors);
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(url);
    await page.waitForFunction(() => window.__strobe && window.__strobe.ready, null, { timeout: 60000 });
    const shown = await panels(page);
    check(shown.entries.length > 0 && JSON.stringify(shown.entries) === JSON.stringify(served.entries),
      `the frame list's ${shown.entries.length} entries equal strobe view's ${served.entries.length}`);
    check(shown.n === served.n && shown.starts === served.starts, `the ${shown.n} spans' starts are strobe view's, bit for bit (hash ${shown.starts} vs ${served.starts})`);
    check(shown.listRows === served.listRows && shown.listRows > 0, `the list holds ${shown.listRows} rows, strobe view's ${served.listRows}`);
    check(shown.stats.length > 0 && JSON.stringify(shown.stats) === JSON.stringify(served.stats),
      `the Statistics tab's ${shown.stats.length} rows equal strobe view's ${served.stats.length}`);
    const note = await page.$eval('#identity', (el) => { const n = el.querySelector('.report-note'); return n ? n.textContent : null; });
    check(note === 'report', `the header says it is a report (${note})`);

    // The explanation of the slowest frame (one the report explains) atop the detail panel, as strobe explain
    // words it; a frame the report does not explain says so.
    const slowest = JSON.parse(run(strobe, ['explain', '--json', cap])).frames[0];
    const explained = async (n) => {
      await page.evaluate((k) => window.__strobe.selectFrame(k), n);
      await page.waitForFunction(() => {
        const el = document.querySelector('#detail .explain');
        return el && !el.textContent.includes('explaining');
      }, null, { timeout: 60000 });
      return page.$eval('#detail .explain', (el) => el.textContent);
    };
    const text = await explained(slowest.number);
    check(!text.includes('no explanation') && text.length > 0, `the slowest frame ${slowest.number} is explained in the report (${text.slice(0, 120)})`);

    // The flame chart and the detail panel: a frame, then a span inside it.
    const drawn = await page.evaluate(() => {
      const h = window.__strobe;
      const row = h.selectFrame(h.entries()[5].number);
      const i = h.findSpan('update');
      h.select(i);
      const r = h.spanRect(i);
      return { row, i, rect: r, name: i >= 0 ? h.spanInfo(i).name : null, bars: h.glStats() };
    });
    check(drawn.row >= 0 && drawn.i >= 0 && drawn.rect && drawn.rect.w > 0, `a frame's span drawn in the flame chart (${JSON.stringify(drawn.rect)})`);
    check((await page.textContent('#detail')).includes('update'), 'the detail panel shows the selected span');
    await page.screenshot({ path: path.join(work, 'timeline.png') });

    const boxes = await page.evaluate(() => { window.__strobe.setTab('flamegraph'); return window.__strobe.flameGraph().main.length; });
    check(boxes > 0, `the flame graph draws ${boxes} boxes`);
    await page.screenshot({ path: path.join(work, 'flamegraph.png') });
    const axes = await page.evaluate(async () => {
      window.__strobe.setTab('counters');
      await new Promise((r) => requestAnimationFrame(r));
      return window.__strobe.counterAxes();
    });
    check(Array.isArray(axes) && axes.length > 0, `the Counters tab draws ${axes.length} series with axes`);
    await page.screenshot({ path: path.join(work, 'counters.png') });

    check(requests.length > 0 && requests.every((u) => u === url), `no request but the file itself (${requests.filter((u) => u !== url).slice(0, 3).join(', ')})`);
    check(aborted.length === 0, `nothing was blocked: the page asked for nothing (${aborted.slice(0, 3).join(', ')})`);
    check(errors.length === 0, `no console or page error (${errors.slice(0, 3).join('; ')})`);
    await context.close();
    await cutReport(browser);
  } finally {
    await browser.close();
  }
}

finish(main);
