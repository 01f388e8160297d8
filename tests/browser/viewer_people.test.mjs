// viewer_people.test.mjs — the viewer as a person uses it (issue 18's
// defects), in Debian's Chromium through playwright-core against `strobe
// view` on captures written by make_capture (tests/cli: 1 ns per tick, every
// duration known). Each section checks what is on the screen, and numbers
// against `strobe report --json` where the report has them:
//   - pie: the detail panel's pie is drawn (a slice under the pointer), its
//     shares are the tree's, and clicking a slice goes one level down;
//   - strip: frames of 238 ms and 515 ms (14x and 31x the 16.7 ms budget)
//     stand at different heights with the budget line still visible, and
//     clicking the tallest bar selects the report's slowest frame, at 1500
//     and at 1024 px;
//   - stages: every indented stage sits under its declared parent
//     (component_after_layout under layout_update, not under text_shaping);
//   - tooltip: never cut off, wherever the pointer is in the flame chart;
//   - columns: at 1024 px the flame chart gets half the width; the frames
//     list's duration and the stages' max columns are never cut; dragging a
//     splitter resizes, a click collapses and restores a side column;
//   - frames list: each frame once (a pass scope that is a frame's own is not
//     listed again), one thread's frames at a time (numbered per thread, as
//     `strobe report` counts them), every row reachable by scrolling;
//   - diff: rows by the size of the change, shrinks included (the capture
//     diff's largest shrink first when it is the largest change), the frame
//     diff in the order of `strobe diff --frames --json`;
//   - colours: frame rows and strip bars green under 20 ms, orange to 100 ms,
//     red above by default, following thresholds set in the settings panel
//     (a red threshold under the green one is refused and changes nothing);
//   - themes: the light theme turns the page and the canvases light, stays
//     readable and is kept over a reload; the `?` overlay lists the keys, and
//     the keys it lists do what it says;
//   - header: for a capture with losses, site units and cost figures, the
//     loss line, the units (KiB) and the measured costs, equal to `strobe
//     report`'s.
// Screenshots go to --work. Any console error or page error fails the test.
//
// usage: node viewer_people.test.mjs --strobe BIN --make-capture BIN --chromium PATH --work DIR
import fs from 'node:fs';
import path from 'node:path';
import { arg, check, finish, launch, openViewer, run, startView } from './strobe_view.mjs';

const strobe = arg('--strobe');
const makeCapture = arg('--make-capture');
const chromiumPath = arg('--chromium', '/usr/bin/chromium');
const work = arg('--work');

// How many px of an element a person cannot see, per side: its box minus
// what the viewport and every ancestor that clips its overflow leave of it.
function hiddenPx(page, sel) {
  return page.evaluate((s) => {
    const el = typeof s === 'string' ? document.querySelector(s) : s;
    if (!el) return null;
    const r = el.getBoundingClientRect();
    let l = 0, t = 0, rr = innerWidth, b = innerHeight;
    for (let a = el.parentElement; a; a = a.parentElement) {
      const cs = getComputedStyle(a), ar = a.getBoundingClientRect();
      if (cs.overflowX !== 'visible') { l = Math.max(l, ar.left); rr = Math.min(rr, ar.right); }
      if (cs.overflowY !== 'visible') { t = Math.max(t, ar.top); b = Math.min(b, ar.bottom); }
    }
    return { left: Math.max(0, l - r.left), right: Math.max(0, r.right - rr), top: Math.max(0, t - r.top),
      bottom: Math.max(0, r.bottom - b), width: r.width, height: r.height };
  }, sel);
}
const fullyShown = (h) => h && h.width > 0 && h.height > 0 && h.left < 1 && h.right < 1 && h.top < 1 && h.bottom < 1;

// The topmost strip pixel at client x whose colour is the budget red (a bar
// over 5x the budget): its client y, or null when the column has none.
function redTop(page, x) {
  return page.evaluate((cx) => {
    const c = document.querySelector('#strip canvas');
    const r = c.getBoundingClientRect(), d = window.devicePixelRatio || 1;
    const px = Math.round((cx - r.left) * d);
    const col = c.getContext('2d').getImageData(px, 0, 1, c.height).data;
    for (let y = 0; y < c.height; y++) {
      const [R, G, B] = [col[4 * y], col[4 * y + 1], col[4 * y + 2]];
      if (R > 180 && G < 130 && B < 130) return r.top + y / d;
    }
    return null;
  }, x);
}

// A section that throws counts as one failure; the next section still runs.
async function section(name, fn) {
  try {
    await fn();
  } catch (e) {
    check(false, `${name}: ${e.message.split('\n')[0]}`);
  }
}

async function selectFrame(page, number, kind, thread = 'main') {
  await page.evaluate(([n, k, t]) => __strobe.selectFrame(n, k, t), [number, kind, thread]);
  await page.waitForFunction((n) => new RegExp(`\\b${n}\\b`).test(document.querySelector('#detail .detail-head')?.textContent || ''), number,
    { timeout: 10000 });
}

async function main() {
  fs.mkdirSync(work, { recursive: true });
  const cap = path.join(work, 'people.strobe');
  run(makeCapture, [cap, '--frames', '600', '--spike', '20', '--slow', '10:237900000', '--slow', '300:515100000',
    '--slow', '50:45000000', '--stage-tree', '--pass-category', '--worker-marks']);
  const shrunk = path.join(work, 'shrunk.strobe');   // every `work` 60 % shorter, no slow frame, no spike
  run(makeCapture, [shrunk, '--frames', '600', '--grow', '-60', '--stage-tree', '--pass-category', '--worker-marks']);
  const report = JSON.parse(run(strobe, ['report', '--json', '--top', '3', cap]));
  const cliDiff = JSON.parse(run(strobe, ['diff', cap, '--thread', 'main', '--frames', '19', '20', '--json'])); // the viewer diffs main's marks
  const view = await startView(strobe, [cap, '--compare', shrunk]);
  const browser = await launch(chromiumPath);
  try {
    const meta = await (await fetch(`http://127.0.0.1:${view.port}/api/capture/meta`, { headers: { Authorization: `Bearer ${view.token}` } })).json();
    const { page, errors } = await openViewer(browser, view.url);
    page.setDefaultTimeout(10000);
    await section('pie', () => pie(page));
    await section('strip', () => strip(page, report));
    await section('stages', () => stages(page, meta));
    await section('tooltip', () => tooltip(page));
    await section('frames list', () => framesList(page, report));
    await section('columns at 1500 px', () => columns(page, '1500'));
    await page.setViewportSize({ width: 1280, height: 800 });
    await section('columns at 1280 px', () => columns(page, '1280'));
    await page.setViewportSize({ width: 1024, height: 768 });
    await page.waitForTimeout(200);
    await section('columns at 1024 px', () => columns(page, '1024'));
    await section('resizing columns', () => resizing(page));
    await section('strip at 1024 px', () => strip(page, report, '1024'));
    await section('tooltip at 1024 px', () => tooltip(page, '1024'));
    await section('diff order', () => diffOrder(page, cliDiff));
    await section('shortcuts overlay', () => overlay(page));
    await page.setViewportSize({ width: 1500, height: 900 });
    await section('colour thresholds', () => thresholds(page));
    await section('light theme', () => lightTheme(page, view.url));
    check(errors.length === 0, `no console or page errors (${errors.join(' | ')})`);
    await section('header', () => header(browser));
  } finally {
    await browser.close();
    const code = await view.stop();
    check(code === 0, `strobe view exits 0 on SIGTERM (${code})`);
  }
}

// >>pie (defect 1): the pie is drawn, its shares are the tree's, a slice goes a level down.
async function pie(page) {
  await selectFrame(page, 20, 'frame');
  const treeRows = await page.$$eval('#detail .tree .trow', (rs) => rs.map((r) => [r.querySelector('.tname').textContent, r.querySelector('.tdur').textContent]));
  await page.click('#detail button[data-mode="pie"]');
  await page.waitForSelector('#detail .pie svg path');
  const box = await page.locator('#detail .pie svg').boundingBox();
  check(box && box.width >= 100 && box.height >= 100, `the pie is drawn at a readable size (${JSON.stringify(box)})`);
  const hit = await page.evaluate(({ x, y }) => document.elementFromPoint(x, y)?.tagName, { x: box.x + box.width * 0.7, y: box.y + box.height * 0.5 });
  check(hit === 'path', `a slice is under the pointer in the pie (${hit})`);
  const legend = await page.$$eval('#detail .pie .legend div[data-name]', (ds) => ds.map((d) => [d.dataset.name, d.querySelector('b').textContent, d.querySelector('.ldur').textContent]));
  const tree = new Map(treeRows);
  check(legend.length >= 3 && legend.filter(([n]) => n !== 'self').every(([n, , dur]) => tree.get(n) === dur),
    `each slice's duration is its tree row's (${JSON.stringify(legend)} vs ${JSON.stringify(treeRows)})`);
  const sum = legend.reduce((s, [, pct]) => s + parseFloat(pct), 0);
  check(Math.abs(sum - 100) < 0.5, `the shares add up to 100 % (${sum})`);
  await page.screenshot({ path: path.join(work, 'people-pie.png') });
  // Clicking the `update` slice shows the time inside it: its `work` children and its self time.
  await page.click('#detail .pie svg path[data-path$="/update"]');
  await page.waitForFunction(() => /update/.test(document.querySelector('#detail .pie .legend .dim')?.textContent || ''), null, { timeout: 5000 });
  const inner = await page.$$eval('#detail .pie .legend div[data-name]', (ds) => ds.map((d) => d.dataset.name));
  check(inner.includes('work') && inner.includes('self') && !inner.includes('render'), `a slice click shows the level below it (${inner})`);
  await page.click('#detail button[data-mode="tree"]');
}

// >>strip (defect 2): the slowest frames are told apart, the budget line is visible, a click gets the tallest.
async function strip(page, report, label = '1500') {
  const [slowest, second] = report.frames.slowest;
  const cv = await page.locator('#strip canvas').boundingBox();
  const info = await page.evaluate(() => __strobe.strip());
  const xOf = async (f) => {
    const fr = await page.evaluate(([n, t]) => __strobe.frameAt(n, 'frame', t), [f.frame, f.thread_name]);
    return cv.x + ((fr.start + fr.dur / 2 - info.range.lo) / (info.range.hi - info.range.lo)) * cv.width;
  };
  const x1 = await xOf(slowest), x2 = await xOf(second);
  const y1 = await redTop(page, x1), y2 = await redTop(page, x2);
  check(y1 != null && y2 != null && y1 < y2 - 4,
    `${label}: the ${(slowest.duration_ns / 1e6).toFixed(1)} ms bar stands taller than the ${(second.duration_ns / 1e6).toFixed(1)} ms one (tops at ${y1}, ${y2})`);
  check(info.budgetY != null && info.budgetY > 0 && cv.y + info.budgetY > y2, `${label}: the budget line is inside the strip, below the slow bars (${info.budgetY})`);
  const green = await page.evaluate(({ x, y }) => {
    const c = document.querySelector('#strip canvas'), r = c.getBoundingClientRect(), d = window.devicePixelRatio || 1;
    return [...c.getContext('2d').getImageData(Math.round((x - r.left) * d), Math.round((y - r.top) * d), 1, 1).data];
  }, { x: x1, y: cv.y + Math.floor(info.budgetY) });
  check(green[1] > green[0] && green[1] > green[2], `${label}: the budget line is drawn across the slow bar (${green})`);
  await page.screenshot({ path: path.join(work, `people-strip-${label}.png`) });
  for (const [f, x, y] of [[slowest, x1, y1], [second, x2, y2]]) {
    await page.mouse.click(x, y + 2);
    const ok = await page.waitForFunction(({ n, th }) => {
      const t = document.querySelector('#detail .detail-head')?.textContent || '';
      return new RegExp(`frame ${n}\\b`).test(t) && t.includes(th);
    }, { n: f.frame, th: f.thread_name }, { timeout: 5000 }).then(() => true, () => false);
    const head = await page.textContent('#detail .detail-head');
    const ms = `${(f.duration_ns / 1e6).toPrecision(3)} ms`;
    check(ok && head.includes(ms), `${label}: clicking the top of its bar selects ${f.thread_name} frame ${f.frame} of ${ms}, as strobe report lists it (${head})`);
  }
}

// >>stages (defect 3): each indented stage sits under its declared parent.
async function stages(page, meta) {
  await selectFrame(page, 20, 'frame');
  const parentOf = new Map(meta.sites.filter((s) => s.kind === 7 || s.parent).map((s) => [s.name, s.parent || null]));
  const rows = await page.$$eval('#detail table.stages tr', (trs) => trs.filter((tr) => tr.querySelector('td'))
    .map((tr) => { const td = tr.querySelector('td'); return [td.textContent, td.getBoundingClientRect().left + parseFloat(getComputedStyle(td).paddingLeft)]; }));
  check(rows.some(([n]) => n === 'component_after_layout'), `the stage table lists component_after_layout (${JSON.stringify(rows)})`);
  const shown = new Set(rows.map(([n]) => n));
  for (let i = 0; i < rows.length; i++) {
    const [name, x] = rows[i];
    let above = null;
    for (let j = i - 1; j >= 0; j--) if (rows[j][1] < x - 1) { above = rows[j][0]; break; }
    const declared = parentOf.get(name);
    const want = declared && shown.has(declared) ? declared : null;
    check(above === want, `stage ${name} sits under ${want || 'nothing'} (its declared parent), not ${above || 'nothing'}`);
  }
}

// >>tooltip (defect 4): wherever the pointer is, the whole tooltip is on screen.
async function tooltip(page, label = '1500') {
  await selectFrame(page, 20, 'frame');
  await page.waitForTimeout(100);
  const i = await page.evaluate(() => __strobe.findSpan('frame'));
  const r = await page.evaluate((k) => __strobe.spanRect(k), i);
  const flame = await page.locator('#flame').boundingBox();
  for (const at of [0.3, 0.59, 0.75, 0.95]) {
    const x = flame.x + flame.width * at;
    if (!r || x < r.x || x > r.x + r.w) { check(false, `${label}: the frame bar reaches ${at} of the flame chart (${JSON.stringify(r)})`); continue; }
    await page.mouse.move(x, r.y + r.h / 2);
    await page.waitForFunction(() => __strobe.tooltip() !== null, null, { timeout: 5000 }).catch(() => {});
    const h = await hiddenPx(page, '.tooltip');
    check(fullyShown(h), `${label}: the tooltip at ${at} of the flame chart's width is fully shown (${JSON.stringify(h)})`);
  }
  await page.screenshot({ path: path.join(work, `people-tooltip-${label}.png`) });
  await page.mouse.move(1, 1);
}

// >>frames list (defect 6): each frame once, one thread's numbers at a time, every row reachable.
async function framesList(page, report) {
  const series = Object.fromEntries(report.frames.series.map((r) => [r.name, r.frames]));
  const rowsNow = () => page.$$eval('#list tbody tr[data-frame]', (trs) => trs.map((tr) => {
    const c = (k) => tr.querySelector(`td.c-${k}`)?.textContent.trim();
    return { number: c('number'), kind: c('kind'), thread: c('thread'), start: c('start'), dur: c('dur') };
  }));
  // The note says what the list holds; the list holds it.
  const note = await page.textContent('.list-note');
  const held = await page.evaluate(() => __strobe.listRows());
  check(new RegExp(`${series.main} frames`).test(note.replace(/,/g, '')) && /main/.test(note),
    `the list says it holds main's ${series.main} frames, as strobe report counts them (${note})`);
  // Scrolling through the whole list meets every row once. The list draws its rows in the
  // animation frame after a scroll (viewer/frames.js): two frames later they are there, however
  // loaded the machine (a fixed pause missed a screenful now and then).
  const settled = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const seen = new Map();
  await page.evaluate(() => { document.querySelector('#list').scrollTop = 0; });
  await settled();
  for (let k = 0; k < 200; k++) {
    for (const r of await rowsNow()) seen.set(`${r.kind} ${r.number} ${r.thread}`, r);
    const done = await page.evaluate(() => {
      const l = document.querySelector('#list');
      if (l.scrollTop + l.clientHeight >= l.scrollHeight - 1) return true;
      l.scrollTop += l.clientHeight * 0.8;
      return false;
    });
    if (done) { for (const r of await rowsNow()) seen.set(`${r.kind} ${r.number} ${r.thread}`, r); break; }
    await settled();
  }
  const rows = [...seen.values()];
  check(rows.length === held && note.replace(/,/g, '').includes(String(held)), `scrolling the list meets all ${held} rows it says it holds (${rows.length}; ${note})`);
  const frames = rows.filter((r) => r.kind === 'frame');
  check(frames.length === series.main && frames.every((r) => r.thread === 'main'),
    `main's ${series.main} frames, each once, no other thread's (${frames.length}: ${[...new Set(frames.map((r) => r.thread))]})`);
  const passes = rows.filter((r) => r.kind === 'pass');
  check(!passes.some((p) => frames.some((f) => f.start === p.start)),
    `no pass is listed again beside the frame it is (${passes.length} passes listed: ${passes.map((p) => p.start)})`);
  // The other thread's frames are one choice away, numbered as the report numbers them.
  const pick = (name) => page.$eval('#frame-thread', (sel, n) => [...sel.options].find((o) => o.textContent.startsWith(n)).value, name);
  await page.selectOption('#frame-thread', await pick('worker'));
  await page.waitForFunction(() => /worker/.test(document.querySelector('.list-note')?.textContent || ''));
  const held2 = await page.evaluate(() => __strobe.listRows());
  const first = (await rowsNow())[0];
  check(held2 === series.worker && first && first.thread === 'worker', `choosing worker lists its ${series.worker} frames (${held2}, ${JSON.stringify(first)})`);
  await page.selectOption('#frame-thread', await pick('main'));
  await page.evaluate(() => { document.querySelector('#list').scrollTop = 0; });
}

// >>columns (defect 5): the flame chart's share, and the columns a person needs never cut.
async function columns(page, label) {
  await page.waitForTimeout(150);
  await selectFrame(page, 20, 'frame');
  const vw = page.viewportSize().width;
  const flame = await page.locator('#flame').boundingBox();
  check(flame.width >= 0.45 * vw, `${label}: the flame chart gets ${Math.round(flame.width)} px of ${vw} (at least 45 %)`);
  check(fullyShown(await hiddenPx(page, '#list th.c-dur')) && fullyShown(await hiddenPx(page, '#list tbody tr[data-frame] td.c-dur')),
    `${label}: the frames list's duration column is not cut`);
  const maxTh = await page.$('#detail table.stages th:last-child');
  const maxTd = await page.$('#detail table.stages tr:last-child td:last-child');
  check(maxTh && fullyShown(await hiddenPx(page, maxTh)) && fullyShown(await hiddenPx(page, maxTd)) && /max/.test(await maxTh.textContent()),
    `${label}: the stages' max column is not cut`);
  const notes = await page.$$('#detail table.values tr td:last-child');
  let cut = 0;
  for (const td of notes) {   // across: the panel scrolls down, never sideways to read a row
    const h = await hiddenPx(page, td);
    if (!h || h.width <= 0 || h.left >= 1 || h.right >= 1) cut++;
  }
  check(notes.length >= 3 && cut === 0, `${label}: the counters and values table is not cut at the right (${cut} of ${notes.length} cells)`);
  await page.screenshot({ path: path.join(work, `people-columns-${label}.png`) });
}

// >>resizing (defect 5): drag a splitter, collapse and restore a side column.
async function resizing(page) {
  const box = (sel) => page.locator(sel).boundingBox();
  const list0 = await box('#list'), flame0 = await box('#flame');
  const sp = await box('.splitter[data-side="list"]');
  await page.mouse.move(sp.x + sp.width / 2, sp.y + 200);
  await page.mouse.down();
  await page.mouse.move(sp.x + sp.width / 2 + 80, sp.y + 200, { steps: 5 });
  await page.mouse.up();
  await page.waitForTimeout(150);
  const list1 = await box('#list'), flame1 = await box('#flame');
  check(Math.abs(list1.width - list0.width - 80) < 3 && Math.abs(flame0.width - flame1.width - 80) < 3,
    `dragging the splitter 80 px widens the list by 80 px (${list0.width} → ${list1.width}) and narrows the flame chart (${flame0.width} → ${flame1.width})`);
  const canvasW = await page.evaluate(() => document.querySelector('.flame-overlay').getBoundingClientRect().width);
  check(Math.abs(canvasW - flame1.width) < 2, `the flame chart redraws at its new width (${canvasW})`);
  const detail0 = await box('#detail');
  await page.click('.splitter[data-side="detail"] button');
  await page.waitForTimeout(150);
  const flame2 = await box('#flame');
  const detailShown = await page.isVisible('#detail');
  check(!detailShown && flame2.width >= flame1.width + detail0.width - 2,
    `collapsing the detail panel gives its ${detail0.width} px to the flame chart (${flame1.width} → ${flame2.width})`);
  await page.click('.splitter[data-side="detail"] button');
  await page.waitForTimeout(150);
  const detail3 = await box('#detail');
  check(detail3 && Math.abs(detail3.width - detail0.width) < 2, `restoring it brings back its width (${detail3 && detail3.width})`);
  await page.dblclick('.splitter[data-side="list"]');   // double-click: the default width again
  await page.waitForTimeout(150);
  const list4 = await box('#list');
  check(Math.abs(list4.width - list0.width) < 3, `a double-click restores the list's default width (${list4.width}, ${list0.width})`);
}

// >>diff order (defect 7): by the size of the change, shrinks included.
async function diffOrder(page, cliDiff) {
  await page.click('#tabs button[data-tab="diff"]');
  const rows = await page.evaluate(() => __strobe.diffCaptures());
  const sorted = rows.every((r, i) => i === 0 || Math.abs(rows[i - 1].change) >= Math.abs(r.change) - 1e-6);
  check(sorted, `the capture diff lists rows by the size of their change (${rows.slice(0, 5).map((r) => `${r.path} ${r.change}`)})`);
  const biggestShrink = rows.reduce((a, b) => (b.change < a.change ? b : a));
  check(rows.length > 2 && rows[0].change < 0 && rows[0].path === biggestShrink.path,
    `the largest shrink, larger than every growth, comes first (${rows[0].path} ${rows[0].change})`);
  const shown = await page.$$eval('table.diff tr:nth-child(2) td', (tds) => tds.map((t) => t.textContent.trim()));
  check(shown[0] === rows[0].path && /shrank|vanished/.test(shown[7]), `the table's first row is that shrink (${shown})`);
  await page.screenshot({ path: path.join(work, 'people-diff-captures.png') });
  const fr = await page.evaluate(() => { __strobe.selectFrame(20, 'frame', 'main'); return __strobe.diffFrames(19, 20); });
  const cli = cliDiff.spans.map((r) => Math.abs(r.change_ns)), mine = fr.map((r) => Math.abs(r.change));
  check(fr.length === cli.length && mine.every((v, i) => Math.abs(v - cli[i]) < 1),
    `the frame diff's rows come in strobe diff's order of change size (${mine} vs ${cli})`);
  await page.click('#tabs button[data-tab="timeline"]');
}

// A colour as a person names it: green, orange, red, or other.
function hue([r, g, b]) {
  if (g > r + 30 && g > b) return 'green';
  if (r > 140 && g < r * 0.55 && b < r * 0.6) return 'red';
  if (r > 140 && g >= r * 0.55 && g < r * 0.9 && b < g) return 'orange';
  return 'other';
}
const rgbOf = (css) => (css.match(/\d+/g) || []).slice(0, 3).map(Number);

// The colour of each listed frame's duration, by its duration text.
async function rowColours(page) {
  const rows = await page.$$eval('#list tbody tr[data-frame] td.c-dur', (tds) => tds.map((td) => [td.textContent, getComputedStyle(td).color]));
  return new Map(rows.map(([t, c]) => [t, hue(rgbOf(c))]));
}

// The colour of the strip's bar for the frame numbered n on main, just above the axis.
async function stripColour(page, n) {
  const cv = await page.locator('#strip canvas').boundingBox();
  const info = await page.evaluate(() => __strobe.strip());
  const fr = await page.evaluate((k) => __strobe.frameAt(k, 'frame', 'main'), n);
  const x = ((fr.start + fr.dur / 2 - info.range.lo) / (info.range.hi - info.range.lo)) * cv.width;
  const px = await page.evaluate(({ x, y }) => {
    const c = document.querySelector('#strip canvas'), d = window.devicePixelRatio || 1;
    return [...c.getContext('2d').getImageData(Math.round(x * d), Math.round(y * d), 1, 1).data];
  }, { x, y: cv.height - 16 });
  return hue(px);
}

async function setThresholds(page, ok, over) {
  if (await page.isHidden('#settings')) await page.click('#settings-btn');
  await page.fill('#thr-ok', String(ok));
  await page.fill('#thr-over', String(over));
  await page.dispatchEvent('#thr-over', 'change');
  await page.waitForTimeout(100);
}

// >>colours (docs/viewer.md §Colours): rows and bars follow thresholds the user sets.
async function thresholds(page) {
  await page.evaluate(() => { document.querySelector('#list').scrollTop = 0; });
  await page.waitForTimeout(100);
  let c = await rowColours(page);
  check(c.get('515 ms') === 'red' && c.get('45.0 ms') === 'orange' && c.get('70.4 µs') === 'green',
    `by default a 515 ms frame is red, 45.0 ms orange, 70.4 µs green (${JSON.stringify([...c].slice(0, 6))})`);
  check(await stripColour(page, 50) === 'orange' && await stripColour(page, 300) === 'red',
    'the strip draws the 45 ms frame orange and the 515 ms frame red');
  await setThresholds(page, 50, 200);
  c = await rowColours(page);
  check(c.get('45.0 ms') === 'green' && c.get('238 ms') === 'red', `green under 50 ms, red over 200 ms (${JSON.stringify([...c].slice(0, 4))})`);
  check(await stripColour(page, 50) === 'green', 'the strip follows: the 45 ms bar is green');
  await setThresholds(page, 50, 300);
  c = await rowColours(page);
  check(c.get('238 ms') === 'orange' && c.get('515 ms') === 'red', `red over 300 ms: 238 ms turns orange (${JSON.stringify([...c].slice(0, 4))})`);
  await setThresholds(page, 100, 50);
  const err = await page.textContent('#settings .thr-error');
  c = await rowColours(page);
  check(await page.isVisible('#settings .thr-error') && /below/.test(err) && c.get('238 ms') === 'orange' && c.get('45.0 ms') === 'green',
    `a red threshold under the green one is refused, nothing changes (${err})`);
  await page.screenshot({ path: path.join(work, 'people-thresholds.png') });
  await setThresholds(page, 20, 100);
  await page.keyboard.press('Escape');
}

const luminance = ([r, g, b]) => {
  const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
};
const contrast = (a, b) => { const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };

// >>light theme: page and canvases light, text readable, kept over a reload.
async function lightTheme(page, url) {
  const look = () => page.evaluate(() => {
    const px = (sel, x, y) => {
      const c = document.querySelector(sel), d = window.devicePixelRatio || 1;
      if (c.getContext('webgl2')) return null;
      return [...c.getContext('2d').getImageData(Math.round(x * d), Math.round(y * d), 1, 1).data];
    };
    const cs = getComputedStyle(document.body);
    const list = document.querySelector('#list td.c-number');
    return { bg: cs.backgroundColor, fg: cs.color, listFg: list ? getComputedStyle(list).color : null,
      listBg: getComputedStyle(document.querySelector('#list')).backgroundColor, ruler: px('.flame-overlay', 3, 3) };
  });
  const dark = await look();
  await page.click('#settings-btn');
  await page.selectOption('#theme', 'light');
  await page.waitForTimeout(150);
  const light = await look();
  check(luminance(rgbOf(dark.bg)) < 0.1 && luminance(rgbOf(light.bg)) > 0.8, `the light theme turns the page light (${dark.bg} → ${light.bg})`);
  check(light.ruler && luminance(light.ruler) > 0.8, `the flame chart's ruler is drawn light too (${light.ruler})`);
  check(contrast(rgbOf(light.fg), rgbOf(light.bg)) >= 7 && contrast(rgbOf(light.listFg), rgbOf(light.listBg)) >= 4.5,
    `text stays readable (${light.fg} on ${light.bg}; ${light.listFg} on ${light.listBg})`);
  const c = await rowColours(page);
  check(c.get('515 ms') === 'red' && c.get('45.0 ms') === 'orange' && c.get('70.4 µs') === 'green', 'the duration colours keep their meaning in the light theme');
  await page.keyboard.press('Escape');
  await page.screenshot({ path: path.join(work, 'people-light.png') });
  await page.goto(url);
  await page.waitForFunction(() => window.__strobe && window.__strobe.ready);
  check(await page.evaluate(() => document.documentElement.dataset.theme) === 'light', 'the theme is kept over a reload');
  await page.evaluate(() => __strobe.theme('dark'));
}

// >>overlay: `?` lists the shortcuts, and the keys it lists do what it says.
async function overlay(page) {
  await page.click('#flame');
  await page.keyboard.press('?');
  await page.waitForSelector('#shortcuts .overlay-box', { state: 'visible' });
  const box = await hiddenPx(page, '#shortcuts .overlay-box');
  check(fullyShown(box), `the overlay is fully shown at ${page.viewportSize().width} px (${JSON.stringify(box)})`);
  const rows = await page.$$eval('#shortcuts tr', (trs) => trs.map((tr) => ({ act: tr.dataset.act || null, text: tr.textContent,
    keys: [...tr.querySelectorAll('kbd[data-key]')].map((k) => k.dataset.key) })));
  check(rows.length >= 12 && rows.some((r) => /search/.test(r.text)) && rows.some((r) => /zoom in/.test(r.text)), `it lists the keys and the pointer (${rows.length} rows)`);
  await page.screenshot({ path: path.join(work, 'people-shortcuts.png') });
  await page.keyboard.press('Escape');
  check(await page.isHidden('#shortcuts'), 'Escape closes the overlay');
  const keyOf = (act) => rows.find((r) => r.act === act)?.keys;
  const zin = keyOf('zoomIn'), zout = keyOf('zoomOut'), whole = keyOf('whole');
  check(zin && zout && whole, 'the overlay names the zoom and whole-capture keys');
  for (const [keys, want, what] of [[zin, 0.8, 'zooms in by 1.25'], [zout, 1.25, 'zooms out by 1.25']]) {
    for (const k of keys || []) {
      const a = await page.evaluate(() => __strobe.view());
      await page.focus('.flame-overlay');
      await page.keyboard.press(k);
      const b = await page.evaluate(() => __strobe.view());
      check(Math.abs((b.t1 - b.t0) / (a.t1 - a.t0) - want) < 0.01, `the listed key ${k} ${what} (${a.t1 - a.t0} → ${b.t1 - b.t0})`);
    }
  }
  await page.keyboard.press(whole[0]);
  const v = await page.evaluate(() => __strobe.view()), r = (await page.evaluate(() => __strobe.strip())).range;
  check(Math.abs(v.t0 - r.lo) < 1 && Math.abs(v.t1 - r.hi) < 1, `the listed key ${whole[0]} shows the whole capture (${JSON.stringify(v)})`);
}

// >>header (issue 11): units, the loss line and the measured costs, equal to strobe report's.
async function header(browser) {
  const cap = path.join(work, 'costs.strobe');
  run(makeCapture, [cap, '--frames', '30', '--lost', '--units']);
  const rep = JSON.parse(run(strobe, ['report', '--json', cap]));
  const text = run(strobe, ['report', cap]);
  const view = await startView(strobe, [cap]);
  try {
    const { page, errors } = await openViewer(browser, view.url);
    const head = await page.textContent('#identity');
    const lost = rep.not_included.lost_events;
    const pct = (/LOSS\s+\d+ events LOST \(([\d.]+) %/.exec(text) || [])[1];
    check(lost > 0 && pct && head.includes(`lost ${lost} events (${pct} %)`),
      `the header's loss line says the ${lost} events (${pct} %) strobe report counts lost (${head})`);
    check(head.indexOf('lost') < head.indexOf('pid'), 'the loss comes first in the header');
    const o = rep.overhead;
    check(head.includes(`cost ${o.event_ns.toFixed(1)} ns/event`) && head.includes(`drain ${o.drain_ns_per_event.toFixed(1)} ns/event`),
      `the header's cost figures are the report's (${o.event_ns} ns/event, drain ${o.drain_ns_per_event}) (${head})`);
    await page.evaluate(() => __strobe.selectFrame(3, 'frame', 'main'));
    await page.waitForSelector('#detail table.grid');
    const row = await page.$$eval('#detail table.grid tr', (trs) => trs.map((tr) => tr.textContent).find((t) => t.startsWith('triangles')));
    const line = text.split('\n').find((l) => /^\s*triangles\s/.test(l)) || '';
    const inReport = (line.match(/\d[\d.,]*\s*(?:KiB|MiB|B)\b/g) || []);
    check(/1\.50 KiB … 3\.00 KiB/.test(row || '') && inReport.includes('1.50 KiB') && inReport.includes('3.00 KiB'),
      `a bytes value shows in KiB, as strobe report prints it (viewer: ${row}; report: ${line.trim()})`);
    await page.screenshot({ path: path.join(work, 'people-header.png') });
    check(errors.length === 0, `no console or page errors on the costs capture (${errors.join(' | ')})`);
  } finally {
    const code = await view.stop();
    check(code === 0, `strobe view of the costs capture exits 0 (${code})`);
  }
}

finish(main);
