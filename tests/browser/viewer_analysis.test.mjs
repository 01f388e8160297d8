// viewer_analysis.test.mjs — the viewer's analysis views (issue 18), in
// Debian's Chromium through playwright-core against `strobe view` on a
// capture written by make_capture (tests/cli: 1 ns per tick, every duration
// known), each checked as a person sees it and against `strobe report
// --json` where the report has the numbers:
//   - statistics: the Statistics tab's rows (count, total, self, mean, p50,
//     p95, max as the viewer prints them) equal the report's for the whole
//     capture, the selected frame (`--thread main --from --to`) and the flame
//     chart's view (`--from --to`); sorting by a column orders the rows by it
//     and a second click reverses them; a row click lights exactly that
//     name's spans in the scope and n / N step through them in time order;
//   - flame graph: the whole capture by call path, every level left-heavy,
//     nodes as wide as their totals (the report's), hover and click-to-zoom;
//     the sandwich of a name: its callers and callees with their totals;
//   - range selection: a plain drag pans, Shift+drag selects a range whose
//     box gives its length, span count and top name as the report
//     (`--from --to`) has them, its Statistics equal the report's, Escape
//     clears it;
//   - counters: each row's y axis in its unit (bytes as KiB) from the
//     minimum to the maximum in view, said beside it; the x axis follows the
//     flame chart's zoom (the y axis then spans the samples in that range),
//     or shows the whole capture when asked;
//   - deep links: the view (tab, statistics scope, frame, flame chart range,
//     span, selected range, search) is in the URL fragment without the
//     token, a reload keeps it, and the link opened in a new tab asks for the
//     token and then shows the same view; the flame graph tab's scope,
//     focused node and sandwich name likewise;
//   - search: Enter / Shift+Enter step to the next / previous matching span
//     (selected, shown in the flame chart), the result list gives each
//     match's duration, and Escape clears the search, not only the box.
// Screenshots go to --work. Any console error or page error fails the test.
//
// usage: node viewer_analysis.test.mjs --strobe BIN --make-capture BIN --chromium PATH --work DIR
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { arg, check, finish, launch, openViewer, repo, run, startView } from './strobe_view.mjs';

const strobe = arg('--strobe');
const makeCapture = arg('--make-capture');
const chromiumPath = arg('--chromium', '/usr/bin/chromium');
const work = arg('--work');

// viewer/fmt.js, imported by node (viewer/ has no package.json: copied to a .mjs).
async function importFmt() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strobe-fmt-'));
  fs.copyFileSync(path.join(repo, 'viewer', 'fmt.js'), path.join(dir, 'fmt.mjs'));
  return import(pathToFileURL(path.join(dir, 'fmt.mjs')).href);
}

async function section(name, fn) {
  try {
    await fn();
  } catch (e) {
    check(false, `${name}: ${e.message.split('\n')[0]}`);
  }
}

// The statistics table as shown: [{name, count, total, self, mean, p50, p95, max}] (cell texts) in row order.
function statsRows(page) {
  return page.$$eval('#view-stats tr[data-site]', (trs) => trs.map((tr) => {
    const c = [...tr.cells].map((td) => td.textContent.trim());
    return { name: c[0], count: c[1], total: c[2], self: c[3], mean: c[4], p50: c[5], p95: c[6], max: c[7] };
  }));
}

// The report's sites as the viewer would print them, by name.
function reportRows(fmt, report) {
  const out = new Map();
  for (const s of report.sites) {
    if (s.kind !== 'scope' && s.kind !== 'stage') continue;
    out.set(s.name, { name: s.name, count: fmt.count(s.count), total: fmt.dur(s.total_ns), self: fmt.dur(s.self_ns),
      mean: fmt.dur(s.mean_ns), p50: fmt.dur(s.p50.ns), p95: fmt.dur(s.p95.ns), max: fmt.dur(s.max.ns) });
  }
  return out;
}

// Every row of the table equals the report's row of that name, and the same names are there.
function sameAsReport(rows, want, what) {
  const bad = [];
  for (const r of rows) {
    const w = want.get(r.name);
    if (!w) { bad.push(`${r.name}: not in the report`); continue; }
    for (const k of ['count', 'total', 'self', 'mean', 'p50', 'p95', 'max']) if (r[k] !== w[k]) bad.push(`${r.name} ${k} ${r[k]} != ${w[k]}`);
  }
  for (const name of want.keys()) if (!rows.some((r) => r.name === name)) bad.push(`${name}: missing`);
  check(rows.length > 0 && bad.length === 0, `${what}: ${rows.length} rows equal strobe report's (${bad.slice(0, 6).join('; ')})`);
}

async function setScope(page, kind) {
  await page.selectOption('#stats-scope', kind);
  await page.waitForSelector('#view-stats tr[data-site]');
}

async function statistics(page, fmt, cap) {
  await page.click('#tabs button[data-tab="stats"]');
  await page.waitForSelector('#view-stats tr[data-site]');
  sameAsReport(await statsRows(page), reportRows(fmt, JSON.parse(run(strobe, ['report', '--json', cap]))), 'whole capture');
  await page.screenshot({ path: path.join(work, 'stats-capture.png') });

  // Sorting: by count, largest first; again: smallest first.
  await page.click('#view-stats th[data-key="count"]');
  let rows = await statsRows(page);
  const n = (s) => Number(s.replace(/[^0-9]/g, ''));
  const desc = rows.every((r, k) => k === 0 || n(rows[k - 1].count) >= n(r.count));
  await page.click('#view-stats th[data-key="count"]');
  rows = await statsRows(page);
  const asc = rows.every((r, k) => k === 0 || n(rows[k - 1].count) <= n(r.count));
  check(desc && asc && n(rows[0].count) < n(rows[rows.length - 1].count), `sorting by count orders the rows, both ways (${rows.map((r) => r.count)})`);

  // The selected frame: frame 20 of main (the spike's), as `strobe report --thread main --from --to`.
  const f = await page.evaluate(() => __strobe.frameAt(20, 'frame', 'main'));
  await page.evaluate(() => __strobe.selectFrame(20, 'frame', 'main'));
  await page.click('#tabs button[data-tab="stats"]');
  await setScope(page, 'frame');
  const frameReport = JSON.parse(run(strobe, ['report', '--json', '--thread', 'main', '--from', String(f.start / 1e6), '--to', String((f.start + f.dur) / 1e6), cap]));
  rows = await statsRows(page);
  sameAsReport(rows, reportRows(fmt, frameReport), 'frame 20');
  check(rows.some((r) => r.name === 'spike'), 'frame 20 has its spike');

  // The flame chart's view: a range cutting frames in two, every thread.
  const r = await page.evaluate(() => __strobe.range());
  const t0 = r.lo + (r.hi - r.lo) * 0.3137, t1 = r.lo + (r.hi - r.lo) * 0.6251;
  await page.evaluate(([a, b]) => { __strobe.setTab('timeline'); __strobe.setRange(a, b); }, [t0, t1]);
  const v = await page.evaluate(() => __strobe.view());
  await page.click('#tabs button[data-tab="stats"]');
  await setScope(page, 'view');
  const viewReport = JSON.parse(run(strobe, ['report', '--json', '--from', String(v.t0 / 1e6), '--to', String(v.t1 / 1e6), cap]));
  rows = await statsRows(page);
  sameAsReport(rows, reportRows(fmt, viewReport), "the flame chart's view");
  await page.screenshot({ path: path.join(work, 'stats-view.png') });

  // A row: its spans in the scope alone are lit; n / N step through them in time order.
  await page.click('#view-stats tr[data-site] >> text=work');
  const want = n(reportRows(fmt, viewReport).get('work').count);
  const lit = await page.evaluate(([a, b]) => {
    const m = [];
    for (const i of __strobe.spansNamed('work')) {
      const s = __strobe.spanInfo(i);
      m.push({ lit: __strobe.isLit(i), inside: s.start >= a && s.start + s.dur <= b });
    }
    const other = __strobe.findSpan('render', 0);
    return { m, otherLit: __strobe.isLit(other), matches: document.querySelector('#matches').textContent };
  }, [v.t0, v.t1]);
  check(lit.m.filter((x) => x.lit).length === want && lit.m.every((x) => x.lit === x.inside) && !lit.otherLit,
    `the work row lights its ${want} spans in the view and nothing else (${lit.m.filter((x) => x.lit).length} lit, render lit: ${lit.otherLit})`);
  check(new RegExp(`^${want} × work`).test(lit.matches), `the header counts them (${lit.matches})`);
  const steps = [];
  for (let k = 0; k < 3; k++) {
    await page.keyboard.press('n');
    steps.push(await page.evaluate(() => ({ i: __strobe.selected(), tab: __strobe.tab() })));
  }
  await page.keyboard.press('N');
  const back = await page.evaluate(() => __strobe.selected());
  const info = await page.evaluate((is) => is.map((i) => __strobe.spanInfo(i)), steps.map((s) => s.i));
  check(info.every((s) => s.name === 'work' && s.start >= v.t0 && s.start + s.dur <= v.t1) && info[0].start < info[1].start && info[1].start < info[2].start &&
    steps.every((s) => s.tab === 'timeline') && back === steps[1].i,
    `n steps through the row's spans in time order on the timeline, N steps back (${JSON.stringify(info.map((s) => s.start))})`);
  const rect = await page.evaluate((i) => __strobe.spanRect(i), back);
  check(rect && rect.w >= 1, `the stepped-to span is shown in the flame chart (${JSON.stringify(rect)})`);
  await page.screenshot({ path: path.join(work, 'stats-step.png') });
}

async function search(page, fmt) {
  await page.evaluate(() => __strobe.setTab('timeline'));
  await page.keyboard.press('Escape');
  await page.click('#search');
  await page.fill('#search', 'spike');
  await page.press('#search', 'Enter');
  const first = await page.evaluate(() => __strobe.selected());
  await page.evaluate(() => { const r = __strobe.range(); __strobe.setRange(r.lo, r.hi); });   // Enter zoomed to the spike: steps start at the view's left edge
  await page.fill('#search', 'job');
  const jobs = [];
  for (let k = 0; k < 3; k++) {
    await page.press('#search', 'Enter');
    jobs.push(await page.evaluate(() => __strobe.selected()));
  }
  await page.press('#search', 'Shift+Enter');
  const back = await page.evaluate(() => __strobe.selected());
  const info = await page.evaluate((is) => is.map((i) => __strobe.spanInfo(i)), [first, ...jobs]);
  check(info[0].name === 'spike', `Enter goes to the one spike (${info[0].name})`);
  check(info.slice(1).every((s) => s.name === 'job') && info[1].start < info[2].start && info[2].start < info[3].start && back === jobs[1],
    `Enter steps through the jobs in time order, Shift+Enter steps back (${JSON.stringify(info.slice(1).map((s) => s.start))})`);
  const list = await page.$$eval('#search-results tr[data-k]', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
  const want = await page.evaluate((is) => is.map((i) => __strobe.spanInfo(i)), jobs);
  check(await page.isVisible('#search-results') && list.length > 3 && list[0][1] === 'job' && list.every((r) => r[2] === fmt.dur(want[0].dur)) &&
    /^2 \/ \d/.test(await page.textContent('#matches')),
    `the result list shows each job with its duration ${fmt.dur(want[0].dur)}, from the current one (${JSON.stringify(list.slice(0, 2))})`);
  await page.screenshot({ path: path.join(work, 'search.png') });
  await page.press('#search', 'Escape');
  const after = await page.evaluate(() => ({ box: document.querySelector('#search').value, matches: document.querySelector('#matches').textContent,
    lit: __strobe.isLit(__strobe.findSpan('render', 0)), stepper: document.querySelector('#stepper').hidden, list: document.querySelector('#search-results').hidden }));
  check(after.box === '' && after.matches === '' && after.lit && after.stepper && after.list,
    `Escape clears the search: the box, the count, the dimming, the stepper and the list (${JSON.stringify(after)})`);
}

// The flame graph's drawn node with this path, in client coordinates.
async function nodeRect(page, graph, p) {
  const box = await page.locator(`#fg-${graph} canvas`).boundingBox();
  const d = await page.evaluate(() => __strobe.flameGraph());
  const r = d[graph].find((x) => x.path === p);
  return r ? { ...r, cx: box.x + r.x + r.w / 2, cy: box.y + r.y + 8 } : null;
}

async function flameGraph(page, fmt, cap) {
  const report = reportRows(fmt, JSON.parse(run(strobe, ['report', '--json', cap])));
  await page.click('#tabs button[data-tab="flamegraph"]');
  await page.waitForFunction(() => __strobe.flameGraph().main.length > 0);
  await page.selectOption('#fg-thread', 'all');   // job runs on another thread than the frames: all of them
  let d = await page.evaluate(() => __strobe.flameGraph());
  const root = d.main.find((r) => r.y === 0);
  // Left-heavy: under every parent, children from the left by total, largest first, side by side.
  const byParent = new Map();
  for (const r of d.main) {
    if (r === root) continue;
    const parent = r.path.includes('/') ? r.path.slice(0, r.path.lastIndexOf('/')) : '';
    if (!byParent.has(parent)) byParent.set(parent, []);
    byParent.get(parent).push(r);
  }
  let heavy = true;
  for (const kids of byParent.values()) {
    kids.sort((a, b) => a.x - b.x);
    for (let k = 1; k < kids.length; k++) if (kids[k - 1].total < kids[k].total || Math.abs(kids[k - 1].x + kids[k - 1].w - kids[k].x) > 0.01) heavy = false;
  }
  check(heavy && byParent.size > 3, `every level is left-heavy: children by total, largest first (${byParent.size} parents)`);
  const wk = d.main.find((r) => r.path === 'frame/update/work'), job = d.main.find((r) => r.path === 'job');
  check(wk && job && fmt.dur(wk.total) === report.get('work').total && fmt.dur(job.total) === report.get('job').total &&
    Math.abs(wk.w / root.w - wk.total / root.total) < 1e-6,
    `frame/update/work and job are as wide as their totals, equal to strobe report's ${report.get('work').total} and ${report.get('job').total}`);
  await page.screenshot({ path: path.join(work, 'flamegraph.png') });

  // Hover: the node's tooltip; click: it fills the width, its ancestors above; its sandwich below.
  let u = await nodeRect(page, 'main', 'frame/update');
  await page.mouse.move(u.cx, u.cy);
  const tip = await page.evaluate(() => [...document.querySelectorAll('.tooltip')].filter((t) => !t.hidden).map((t) => t.innerText).join('|'));
  check(/update/.test(tip) && tip.includes(fmt.dur(u.total)), `hovering update shows its name and total ${fmt.dur(u.total)} (${tip.replace(/\n/g, ' ')})`);
  await page.mouse.click(u.cx, u.cy);
  d = await page.evaluate(() => __strobe.flameGraph());
  const full = d.main.find((r) => r.path === 'frame/update' && !r.ancestor), anc = d.main.find((r) => r.path === 'frame');
  const width = (await page.locator('#fg-main canvas').boundingBox()).width;
  check(full && full.x === 0 && Math.abs(full.w - width) < 1 && anc && anc.ancestor, `clicking update zooms: it fills the ${width} px, frame stays above`);
  const callees = d.callees.filter((r) => r.y === 18).map((r) => [r.name, fmt.dur(r.total)]);
  const callers = d.callers.filter((r) => r.y === 18).map((r) => [r.name, fmt.dur(r.total)]);
  check(d.name === 'update' && JSON.stringify(callees) === JSON.stringify([['work', report.get('work').total]]) &&
    JSON.stringify(callers) === JSON.stringify([['frame', report.get('update').total]]),
    `update's sandwich: callee work ${report.get('work').total}, caller frame ${report.get('update').total} (${JSON.stringify({ callers, callees })})`);
  // A name under two parents: both are its callers, their widths summing to its total.
  d = await page.evaluate(() => __strobe.sandwich('row_bind'));
  const rb = d.callers.filter((r) => r.y === 18);   // the first row under the name: its direct callers
  const sum = rb.reduce((a, r) => a + r.total, 0);
  check(rb.map((r) => r.name).sort().join() === 'model_update,phase_update' && fmt.dur(sum) === report.get('row_bind').total && d.callees.length === 1 &&
    rb[0].total > rb[1].total && rb[0].x < rb[1].x,
    `row_bind's callers are phase_update and model_update, left-heavy, together its ${report.get('row_bind').total} (${JSON.stringify(rb.map((r) => [r.name, r.total]))})`);
  await page.screenshot({ path: path.join(work, 'sandwich.png') });
}

async function rangeSelection(page, fmt, cap) {
  await page.evaluate(() => { __strobe.setTab('timeline'); const r = __strobe.range(); __strobe.setRange(r.lo, r.hi); });
  const box = await page.locator('#flame canvas.flame-overlay').boundingBox();
  const y = box.y + box.height - 20;
  // A plain drag pans and selects no range.
  const before = await page.evaluate(() => __strobe.zoom(0.5));
  await page.mouse.move(box.x + 300, y);
  await page.mouse.down();
  await page.mouse.move(box.x + 200, y, { steps: 4 });
  await page.mouse.up();
  const panned = await page.evaluate(() => ({ v: __strobe.view(), range: __strobe.rangeBox() }));
  check(panned.v.t0 > before.t0 && panned.range === null, `a plain drag pans (${before.t0} → ${panned.v.t0}) and selects no range`);
  // Shift+drag: the range, its summary.
  await page.keyboard.down('Shift');
  await page.mouse.move(box.x + box.width * 0.21, y);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.67, y, { steps: 6 });
  await page.mouse.up();
  await page.keyboard.up('Shift');
  const r = await page.evaluate(() => __strobe.state().range);
  const text = await page.evaluate(() => __strobe.rangeBox());
  const rep = JSON.parse(run(strobe, ['report', '--json', '--from', String(r.t0 / 1e6), '--to', String(r.t1 / 1e6), cap]));
  const want = reportRows(fmt, rep);
  const spans = [...want.values()].reduce((a, w) => a + Number(w.count.replace(/[^0-9]/g, '')), 0);
  const topName = [...want.values()].sort((a, b) => rep.sites.find((s) => s.name === b.name).total_ns - rep.sites.find((s) => s.name === a.name).total_ns)[0];
  check(r && r.t1 > r.t0 && text && text.includes(`range ${fmt.dur(r.t1 - r.t0)}`) && text.includes(`${fmt.count(spans)} spans lie wholly inside`) &&
    text.includes(`${topName.name}\t${topName.total}`),
    `Shift+drag selects a range; its box gives its length, ${spans} spans and ${topName.name} ${topName.total} first (${text && text.replace(/\s+/g, ' ')})`);
  await page.screenshot({ path: path.join(work, 'range.png') });
  await page.click('.range-box [data-stats]');
  await page.waitForSelector('#view-stats tr[data-site]');
  check(await page.inputValue('#stats-scope') === 'range', 'its button opens the statistics of the range');
  sameAsReport(await statsRows(page), want, 'the selected range');
  await page.evaluate(() => __strobe.setTab('timeline'));
  await page.evaluate(() => __strobe.clearSpan());
  await page.focus('#flame canvas.flame-overlay');
  await page.keyboard.press('Escape');
  check(await page.evaluate(() => __strobe.rangeBox() === null && __strobe.state().range === null), 'Escape clears the range');
}

// What a deep link must bring back: tab, statistics scope, frame, span, range, view, search text.
function viewState(page) {
  return page.evaluate(() => ({ ...__strobe.state(), view: __strobe.view(), box: document.querySelector('#search').value,
    scope: document.querySelector('#stats-scope') ? document.querySelector('#stats-scope').value : null }));
}

function sameView(a, b) {
  const close = (x, y, span) => Math.abs(x - y) <= 1e-3 * span;
  const vs = a.view.t1 - a.view.t0, rs = a.range ? a.range.t1 - a.range.t0 : 1;
  return a.tab === b.tab && a.scope === b.scope && a.frame === b.frame && a.span === b.span && a.box === b.box &&
    !!a.range === !!b.range && (!a.range || (close(a.range.t0, b.range.t0, rs) && close(a.range.t1, b.range.t1, rs))) &&
    close(a.view.t0, b.view.t0, vs) && close(a.view.t1, b.view.t1, vs);
}

async function deepLinks(page, browser, view) {
  await page.evaluate(() => { __strobe.setTab('timeline'); __strobe.selectFrame(30, 'frame', 'main'); });
  const f = await page.evaluate(() => __strobe.frameAt(30, 'frame', 'main'));
  await page.evaluate(([a, b]) => { __strobe.setRange(a, b); __strobe.selectRange(a + (b - a) * 0.2, a + (b - a) * 0.7); }, [f.start - f.dur, f.start + 2 * f.dur]);
  await page.fill('#search', 'draw');
  await page.press('#search', 'Enter');
  await page.press('#search', 'Enter');
  await page.evaluate(() => __strobe.statsShow('range'));
  await page.waitForFunction(() => /tab=stats/.test(location.hash) && /ss=range/.test(location.hash) && /span=\d/.test(location.hash));
  const want = await viewState(page);
  const url = page.url();
  check(!/token/.test(url) && want.span >= 0 && want.range && want.frame >= 0, `the view is in the fragment, without the token (${url.replace(/^[^#]*/, '')})`);
  await page.reload();
  await page.waitForFunction(() => __strobe.ready && __strobe.generation() > 0 && __strobe.state().tab === 'stats', null, { timeout: 30000 });
  const reloaded = await viewState(page);
  check(sameView(reloaded, want), `a reload keeps the view (${JSON.stringify(reloaded)} vs ${JSON.stringify(want)})`);
  // A new tab has no token: the link asks for it, then opens the same view.
  const other = await browser.newPage({ viewport: { width: 1500, height: 900 } });
  const errs = [];
  other.on('pageerror', (e) => errs.push(e.message));
  await other.goto(url);
  await other.waitForSelector('#token-form');
  await other.fill('#token-input', view.url);
  await other.click('#token-form button');
  await other.waitForFunction(() => __strobe.generation() > 0 && __strobe.state().tab === 'stats', null, { timeout: 30000 });
  const opened = await viewState(other);
  check(sameView(opened, want) && errs.length === 0, `the link pasted into a new tab opens the same view once the token is given (${JSON.stringify(opened)}; ${errs.join('|')})`);
  await other.screenshot({ path: path.join(work, 'deep-link.png') });
  await other.close();
}

// The flame graph tab's state in the link: its scope, the focused node and the sandwich's name.
async function flameGraphLink(page, browser, view) {
  await page.evaluate(() => __strobe.setTab('flamegraph'));
  await page.selectOption('#fg-scope', 'range');   // the range deepLinks left selected
  await page.waitForFunction(() => __strobe.flameGraph().main.some((r) => r.path === 'frame/update'));
  const u = await nodeRect(page, 'main', 'frame/update');
  await page.mouse.click(u.cx, u.cy);
  await page.evaluate(() => __strobe.sandwich('work'));
  await page.waitForFunction(() => /fg=range/.test(location.hash) && /fgf=frame%2Fupdate/.test(location.hash) && /fgs=work/.test(location.hash));
  const want = await page.evaluate(() => __strobe.flameGraph());
  const focused = (d) => d.main.find((r) => r.path === 'frame/update' && !r.ancestor && r.x === 0);
  check(focused(want) && want.name === 'work' && want.callers.length > 0, `update focused and work's sandwich shown (${page.url().replace(/^[^#]*/, '')})`);
  const url = page.url();
  const same = (d) => JSON.stringify(d) === JSON.stringify(want);
  await page.reload();
  await page.waitForFunction(() => __strobe.ready && __strobe.generation() > 0 && __strobe.state().tab === 'flamegraph' && __strobe.flameGraph().main.length > 0, null, { timeout: 30000 });
  let got = await page.evaluate(() => __strobe.flameGraph());
  check(same(got) && await page.inputValue('#fg-scope') === 'range' && await page.inputValue('#fg-name') === 'work',
    `a reload keeps the flame graph's range scope, update focused and work's sandwich (${JSON.stringify(got.main.filter((r) => !r.ancestor).slice(0, 2))})`);
  const other = await browser.newPage({ viewport: { width: 1500, height: 900 } });
  try {
    await other.goto(url);
    await other.waitForSelector('#token-form');
    await other.fill('#token-input', view.url);
    await other.click('#token-form button');
    await other.waitForFunction(() => __strobe.generation() > 0 && __strobe.state().tab === 'flamegraph' && __strobe.flameGraph().main.length > 0, null, { timeout: 30000 });
    got = await other.evaluate(() => __strobe.flameGraph());
    check(same(got), 'the link opened in a new tab shows the same flame graph, focus and sandwich');
  } finally {
    await other.close();
  }
  // Back to the whole capture: the link drops the scope.
  await page.selectOption('#fg-scope', 'capture');
  await page.waitForFunction(() => !/fg=/.test(location.hash));
}

async function counters(page, fmt) {
  await page.evaluate(() => { __strobe.setTab('timeline'); const r = __strobe.range(); __strobe.setRange(r.lo, r.hi); __strobe.setTab('counters'); });
  await page.waitForSelector('.series canvas');
  const axis = (name) => page.evaluate((n) => __strobe.counterAxes().find((a) => a.name === n), name);
  const head = (name) => page.evaluate((n) => [...document.querySelectorAll('.series')].find((d) => d.querySelector('b').textContent === n).querySelector('.inview').textContent, name);
  let q = await axis('queue_depth');
  check(q.lo === 0 && q.hi === 6 && q.labels[0] === '6' && q.labels[2] === '0' && /min 0 · max 6/.test(await head('queue_depth')),
    `over the whole capture queue_depth's y axis runs 0 to 6, said beside it (${JSON.stringify(q)})`);
  const g = await axis('gpu_memory');
  check(g.labels[0] === fmt.unit(3000, 'bytes') && /max 2\.93 KiB/.test(await head('gpu_memory')), `gpu_memory's axis is in its unit, bytes (${g.labels})`);
  // Zoomed in: the x axis is the flame chart's range, the y axis the extent of the samples in it.
  const f = await page.evaluate(() => [__strobe.frameAt(40, 'frame', 'main'), __strobe.frameAt(41, 'frame', 'main')]);
  const t0 = f[0].start + f[0].dur / 3, t1 = f[1].start + f[1].dur / 2;
  await page.evaluate(([a, b]) => { __strobe.setRange(a, b); }, [t0, t1]);
  await page.waitForFunction((a) => Math.abs(__strobe.counterAxes()[0].t0 - a) < 1, t0);
  const v = await page.evaluate(() => __strobe.view());
  const smp = await page.evaluate(() => __strobe.samples('queue_depth'));
  const inView = smp.filter(([t]) => t >= v.t0 && t <= v.t1).map(([, x]) => x);
  const carried = smp.filter(([t]) => t < v.t0).pop();
  if (carried) inView.push(carried[1]);
  q = await axis('queue_depth');
  check(Math.abs(q.t0 - v.t0) < 1 && Math.abs(q.t1 - v.t1) < 1 && q.lo === Math.min(...inView) && q.hi === Math.max(...inView) && q.hi - q.lo < 6,
    `zoomed to two frames, queue_depth's axes follow the flame chart: x ${fmt.at(q.t0)}–${fmt.at(q.t1)}, y ${q.lo} to ${q.hi} (samples in view: ${inView})`);
  await page.screenshot({ path: path.join(work, 'counters-zoomed.png') });
  await page.selectOption('#counters-x', 'capture');
  const r = await page.evaluate(() => __strobe.range());
  q = await axis('queue_depth');
  check(q.t0 === r.lo && q.t1 === r.hi && q.hi === 6, `"the whole capture" puts the capture on the x axis again (${fmt.at(q.t0)}–${fmt.at(q.t1)})`);
  await page.selectOption('#counters-x', 'view');
}

async function main() {
  fs.mkdirSync(work, { recursive: true });
  const fmt = await importFmt();
  const cap = path.join(work, 'analysis.strobe');
  run(makeCapture, [cap, '--frames', '200', '--spike', '20', '--stages', '--kinds']);
  const view = await startView(strobe, [cap]);
  const browser = await launch(chromiumPath);
  try {
    const { page, errors } = await openViewer(browser, view.url);
    page.setDefaultTimeout(15000);
    await section('statistics', () => statistics(page, fmt, cap));
    await section('search', () => search(page, fmt));
    await section('flame graph', () => flameGraph(page, fmt, cap));
    await section('range selection', () => rangeSelection(page, fmt, cap));
    await section('counters', () => counters(page, fmt));
    await section('deep links', () => deepLinks(page, browser, view));
    await section('flame graph link', () => flameGraphLink(page, browser, view));
    check(errors.length === 0, `no console or page errors (${errors.join(' | ')})`);
  } finally {
    await browser.close();
    await view.stop();
  }
}

await finish(main);
