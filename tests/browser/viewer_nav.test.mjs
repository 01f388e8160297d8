// viewer_nav.test.mjs — the viewer's navigation and drawing as a person
// meets them (issue 33, items 5 and 6 of what bothered a user, and item 2's
// counter names), in Debian's Chromium at 1600×900 against `strobe view` on a
// make_capture capture (a `spike` in frame 120, counters and gauges by kind):
//   - search: Enter at whole-capture zoom zooms the flame chart to fit the
//     match (it fills most of the view), not only centres it;
//   - pan: dragging or panning far past either end stops at the capture with
//     a margin of at most 5 % of the view; zoomed out, the view is at most the
//     capture and 5 % on each side;
//   - zoom: one wheel notch zooms by the same step with Ctrl as without (and
//     as the W/S keys); W and S zoom at the pointer (the time under it stays);
//   - header: typing a search neither changes the header's height nor moves
//     the tabs, and the result list does not cover the detail panel;
//   - light theme: a bar a search dims is light, its label's colour readable
//     on it (contrast >= 4.5:1);
//   - counters: no y axis says one value twice;
//   - the frame list shows its start column at the default width, inside the list;
//   - the detail panel names each counter and gauge with its kind
//     ("draw_calls: quads"), no name twice;
//   - the detail panel's duration histogram of a span's site (issue 33 item
//     5): its bars count every span of the site, on a log scale, the
//     selected span's bar and the bars over the budget marked, and a click
//     on a bar lights exactly its spans;
//   - a GPU span's detail names the CPU pass that submitted it (its frame id);
//   - a merged capture's GPU lanes name their process once, its header no
//     "cost ?/event".
// Screenshots go to --work.
//
// usage: node viewer_nav.test.mjs --strobe BIN --make-capture BIN --chromium PATH --work DIR
import fs from 'node:fs';
import path from 'node:path';
import { arg, check, finish, launch, openViewer, run, startView } from './strobe_view.mjs';

const strobe = arg('--strobe');
const makeCapture = arg('--make-capture');
const chromiumPath = arg('--chromium', '/usr/bin/chromium');
const work = arg('--work');

async function section(name, fn) {
  try {
    await fn();
  } catch (e) {
    check(false, `${name}: ${e.message.split('\n')[0]}`);
  }
}

const view = (page) => page.evaluate(() => window.__strobe.view());
const whole = (page) => page.evaluate(() => { const r = window.__strobe.range(); window.__strobe.setRange(r.lo, r.hi); return r; });

async function search(page) {
  const r = await whole(page);
  await page.fill('#search', 'spike');
  await page.press('#search', 'Enter');
  const v = await view(page);
  const i = await page.evaluate(() => window.__strobe.selected());
  const s = await page.evaluate((k) => window.__strobe.spanInfo(k), i);
  const width = v.t1 - v.t0;
  check(s.name === 'spike' && v.t0 <= s.start && v.t1 >= s.start + s.dur && width <= s.dur * 2 && width < (r.hi - r.lo) / 20,
    `Enter zooms to fit the match: ${s.name} ${s.dur} ns at ${s.start} in a view of ${width.toFixed(0)} ns (${v.t0}…${v.t1}; capture ${r.hi - r.lo} ns)`);
  await page.screenshot({ path: path.join(work, 'search-fit.png') });
  await page.press('#search', 'Escape');
}

async function pan(page) {
  const r = await whole(page);
  await page.evaluate(() => window.__strobe.zoom(100));   // zoom out as far as it goes
  let v = await view(page);
  const span = r.hi - r.lo;
  check(v.t1 - v.t0 <= span * 1.1 + 1e-6, `zoomed out, the view is at most the capture and 5 % a side (${((v.t1 - v.t0) / span).toFixed(3)} of it)`);
  await page.evaluate(() => window.__strobe.zoom(0.1));
  await page.evaluate(() => window.__strobe.pan(-1e7));
  v = await view(page);
  check(v.t0 >= r.lo - 0.05 * (v.t1 - v.t0) - 1e-6, `panned far left, the view stops within 5 % of the capture's start (${(v.t0 - r.lo).toFixed(0)} ns)`);
  await page.evaluate(() => window.__strobe.pan(1e7));
  v = await view(page);
  check(v.t1 <= r.hi + 0.05 * (v.t1 - v.t0) + 1e-6, `panned far right, the view stops within 5 % past its end (${(v.t1 - r.hi).toFixed(0)} ns)`);
}

// The zoom factor of one input at the flame chart's point (x, y).
async function zoomBy(page, x, y, act) {
  const r = await whole(page);
  await page.evaluate(({ lo, hi }) => window.__strobe.setRange(lo + (hi - lo) * 0.3, lo + (hi - lo) * 0.5), r);
  const before = await view(page);
  await act();
  const after = await view(page);
  return { factor: (after.t1 - after.t0) / (before.t1 - before.t0), before, after };
}

async function zoom(page) {
  const box = await page.$eval('#flame canvas', (c) => { const b = c.getBoundingClientRect(); return { x: b.left, y: b.top, w: b.width, h: b.height }; });
  const x = box.x + box.w * 0.25, y = box.y + 60;
  await page.mouse.move(x, y);
  const plain = await zoomBy(page, x, y, () => page.mouse.wheel(0, 100));
  await page.keyboard.down('Control');
  const ctrl = await zoomBy(page, x, y, () => page.mouse.wheel(0, 100));
  await page.keyboard.up('Control');
  check(Math.abs(plain.factor - ctrl.factor) < 0.01 && Math.abs(plain.factor - 1.25) < 0.01,
    `a wheel notch zooms by ${plain.factor.toFixed(3)}, with Ctrl by ${ctrl.factor.toFixed(3)} (the keys' 1.25)`);
  await page.mouse.move(x, y);
  await page.focus('#flame');
  for (const key of ['w', 's']) {
    const k = await zoomBy(page, x, y, () => page.keyboard.press(key));
    const at = (v) => v.t0 + (v.t1 - v.t0) * ((x - box.x) / box.w);
    const drift = Math.abs(at(k.after) - at(k.before)) / (k.before.t1 - k.before.t0);
    check(drift < 0.002 && Math.abs(k.factor - (key === 'w' ? 0.8 : 1.25)) < 0.01,
      `${key.toUpperCase()} zooms at the pointer: the time under it moved ${(drift * 100).toFixed(3)} % of the view (factor ${k.factor.toFixed(3)})`);
  }
}

async function header(page) {
  await whole(page);
  await page.evaluate(() => window.__strobe.selectFrame(120));
  const measure = () => page.evaluate(() => ({ h: document.querySelector('header').offsetHeight, tabs: document.querySelector('#tabs').getBoundingClientRect().top,
    controls: document.querySelector('header .controls').offsetWidth }));
  const before = await measure();
  await page.click('#search');
  await page.keyboard.type('work', { delay: 20 });
  await page.keyboard.press('Enter');
  await page.waitForSelector('#search-results:not([hidden])');
  const after = await measure();
  // The search's controls keep their width: the header's other half (which wraps) never loses room to them.
  check(after.h === before.h && after.tabs === before.tabs && after.controls === before.controls,
    `typing a search keeps the header at ${before.h} px (now ${after.h}), the tabs in place (${before.tabs} → ${after.tabs}) and the controls ${before.controls} px wide (now ${after.controls})`);
  const overlap = await page.evaluate(() => {
    const a = document.querySelector('#search-results').getBoundingClientRect(), b = document.querySelector('#detail').getBoundingClientRect();
    return Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left)) * Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top));
  });
  check(overlap === 0, `the search results do not cover the detail panel (${overlap} px² overlap)`);
  await page.screenshot({ path: path.join(work, 'search-header.png') });
}

const lum = ([r, g, b]) => {
  const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
  return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
};
const contrast = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };

async function lightTheme(page) {
  await page.evaluate(() => window.__strobe.theme('light'));
  await page.evaluate(() => window.__strobe.selectFrame(120));
  await page.evaluate(() => window.__strobe.search('spike'));
  // A `work` bar of frame 120 (not a match: dimmed), the pixel at its middle, and the dim label colour.
  const px = await page.evaluate(() => {
    const h = window.__strobe, i = h.findSpan('work'), r = h.spanRect(i);
    const c = document.querySelector('#flame canvas'), b = c.getBoundingClientRect(), dpr = window.devicePixelRatio || 1;
    const ctx = c.getContext('2d');
    if (!ctx || !r) return null;
    const d = ctx.getImageData(Math.round((r.x - b.left + r.w / 2) * dpr), Math.round((r.y - b.top + r.h - 3) * dpr), 1, 1).data;
    const dim = getComputedStyle(document.documentElement).getPropertyValue('--dim').trim();
    return { bar: [d[0], d[1], d[2]], dim, lit: h.isLit(i) };
  });
  check(px && !px.lit, `a bar the search dims found (${JSON.stringify(px)})`);
  if (px) {
    const hex = px.dim.startsWith('#') ? px.dim : '#59636e';
    const dim = [1, 3, 5].map((k) => parseInt(hex.slice(k, k + 2), 16));
    check(lum(px.bar) > 0.5 && contrast(px.bar, dim) >= 4.5,
      `light theme: a dimmed bar is light (rgb ${px.bar}) and its label readable on it (contrast ${contrast(px.bar, dim).toFixed(2)}:1)`);
  }
  await page.screenshot({ path: path.join(work, 'light-dimmed.png') });
  await page.evaluate(() => { window.__strobe.search(''); window.__strobe.theme('dark'); });
}

async function counters(page) {
  await page.evaluate(() => window.__strobe.selectFrame(120));
  const rows = await page.evaluate(() => [...document.querySelectorAll('#detail table.values tr')].map((tr) => [tr.cells[0].textContent, tr.cells[1].textContent]));
  const names = rows.filter(([, k]) => k === 'counter' || k === 'gauge').map(([n]) => n);
  check(names.length >= 4 && new Set(names).size === names.length && names.includes('draw_calls: quads'),
    `the detail panel names counters and gauges with their kind, none twice (${names.join(', ')})`);
  // Values close together (3.06 MiB give or take 3 KiB) get as many decimals as tell them apart.
  const labels = await page.evaluate(async () => {
    const fmt = await import('/fmt.js'), v = [3.0625, 3.0595, 3.0565].map((x) => x * 2 ** 20);
    return { plain: v.map((x) => fmt.unit(x, 'bytes')), axis: fmt.unitLabels ? fmt.unitLabels(v, 'bytes') : [] };
  });
  check(new Set(labels.plain).size === 1 && labels.axis.length === 3 && new Set(labels.axis).size === 3 && labels.axis.every((t) => / MiB$/.test(t)),
    `an axis of 3.06 MiB ± 3 KiB says ${labels.axis.join(' / ')} (not ${labels.plain.join(' / ')})`);
  // Each counter row's y axis over a narrow view (values close together) says no value twice.
  const f = await page.evaluate(() => window.__strobe.frameBounds(120));
  await page.evaluate(({ start, end }) => { window.__strobe.setRange(start, end); window.__strobe.setTab('counters'); }, f);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(r)));
  const axes = await page.evaluate(() => window.__strobe.counterAxes());
  const repeated = axes.filter((a) => new Set(a.labels).size !== a.labels.length);
  check(axes.length > 0 && repeated.length === 0, `no counter y axis repeats a value (${repeated.map((a) => `${a.name}: ${a.labels.join(' / ')}`).join('; ')})`);
  await page.screenshot({ path: path.join(work, 'counters.png') });
  await page.evaluate(() => window.__strobe.setTab('timeline'));
}

// The detail panel's duration histogram of a `work` span's site (docs/viewer.md §Duration histogram).
async function histogram(page) {
  await page.evaluate(() => {
    const h = window.__strobe;
    h.setTab('timeline');
    h.search('');
    h.selectFrame(120);
    h.select(h.findSpan('work'));
  });
  const bars = () => page.$$eval('#detail .histogram rect.hbar', (rs) => rs.map((r) => ({ lo: +r.dataset.lo, hi: +r.dataset.hi, n: +r.dataset.n,
    over: r.classList.contains('over'), sel: r.classList.contains('sel') })));
  let b = await bars();
  const durs = await page.evaluate(() => window.__strobe.spansNamed('work').map((i) => window.__strobe.spanInfo(i).dur));
  const sel = await page.evaluate(() => window.__strobe.spanInfo(window.__strobe.selected()).dur);
  const wrong = b.filter((x) => x.n !== durs.filter((d) => d >= x.lo && d < x.hi).length);
  check(b.length >= 2 && wrong.length === 0 && b.reduce((a, x) => a + x.n, 0) === durs.length,
    `the histogram's ${b.length} bars count the ${durs.length} work spans by duration (${wrong.length} bars miscounted)`);
  const inner = b.filter((x) => x.lo > 0 && x.hi < 1e300).map((x) => x.hi / x.lo);
  check(inner.length > 0 && inner.every((r) => Math.abs(r - inner[0]) < 1e-6 * inner[0]), `its buckets are log-scaled: each ${inner[0]?.toFixed(4)} times the last`);
  check(b.filter((x) => x.sel).length === 1 && b.some((x) => x.sel && sel >= x.lo && sel < x.hi), `the selected span's bar (${sel} ns) is marked`);
  // A budget of 6 µs: the bars at or over it are marked, the others not.
  await page.fill('#budget', '0.006');
  await page.press('#budget', 'Tab');   // its change, as a person leaves the box
  b = await bars();
  const misjudged = b.filter((x) => x.over !== (x.lo >= 6000));
  check(b.some((x) => x.over) && misjudged.length === 0, `with a 6 µs budget the bars over it are marked (${misjudged.length} wrong)`);
  await page.screenshot({ path: path.join(work, 'histogram.png') });
  // A click on the longest bar lights its spans alone, and stepping goes through them.
  const last = b[b.length - 1];
  await page.click('#detail .histogram rect.hbar:last-of-type');
  const lit = await page.evaluate(({ lo, hi }) => {
    const h = window.__strobe, all = h.spansNamed('work');
    const inBar = all.filter((i) => { const d = h.spanInfo(i).dur; return d >= lo && d < hi; });
    return { inBar: inBar.length, litIn: inBar.filter((i) => h.isLit(i)).length, litOut: all.filter((i) => !inBar.includes(i) && h.isLit(i)).length,
      matches: document.querySelector('#matches').textContent };
  }, last);
  check(lit.inBar === last.n && lit.litIn === last.n && lit.litOut === 0 && new RegExp(`\\b${last.n} × work`).test(lit.matches),
    `a click on the longest bar lights its ${last.n} spans alone (${JSON.stringify(lit)})`);
  await page.fill('#budget', '16.7');
  await page.press('#budget', 'Tab');
  await page.evaluate(() => window.__strobe.search(''));
}

async function frameList(page) {
  const col = await page.evaluate(() => {
    const list = document.querySelector('#list'), th = list.querySelector('th.c-start');
    // No column's head cut short either (a head is one line: its text wider than its cell is cut).
    const cut = [...list.querySelectorAll('thead th')].filter((h) => h.offsetWidth > 0 && h.scrollWidth > h.clientWidth).map((h) => h.textContent);
    return { shown: !!th && th.offsetWidth > 0, right: th ? th.getBoundingClientRect().right : null, listRight: list.getBoundingClientRect().right,
      overflow: list.scrollWidth - list.clientWidth, cut };
  });
  check(col.shown && col.right <= col.listRight && col.overflow <= 0 && col.cut.length === 0,
    `at 1600 px the frame list shows its start column inside the list (${JSON.stringify(col)})`);
}

// A GPU span's detail names the CPU pass that submitted it (make_capture --ops --gpu-pass-ids: GPU frame k has
// pass k's frame id, 193 + k), as the model's gpuspans table has it.
async function gpuFrame(browser) {
  const cap = path.join(work, 'gpu.strobe');
  run(makeCapture, [cap, '--frames', '20', '--ops', '--gpu-pass-ids']);
  const v = await startView(strobe, [cap]);
  try {
    const { page, errors } = await openViewer(browser, v.url, { width: 1600, height: 900 });
    const got = await page.evaluate(() => {
      const h = window.__strobe, out = [];
      for (const k of [0, 7, 19]) {
        const i = h.spansNamed('composite')[k];
        h.select(i);
        const line = document.querySelector('#detail .detail-head').innerText.split('\n').find((l) => /^submitted in/.test(l)) || '';
        out.push({ start: h.spanInfo(i).start, line });
      }
      return out;
    });
    // composite k runs after pass k (193 + k) ends: the one pass of that id, of window main.
    const bad = got.filter((g, n) => !new RegExp(`^submitted in\\s+frame ${193 + [0, 7, 19][n]} · pass ${193 + [0, 7, 19][n]} of window main on main$`).test(g.line));
    check(bad.length === 0, `a GPU span's detail names the pass that submitted it (${got.map((g) => g.line).join(' | ')})`);
    await page.screenshot({ path: path.join(work, 'gpu-frame.png') });
    check(errors.length === 0, `no console or page error on the GPU capture (${errors.slice(0, 3).join('; ')})`);
  } finally {
    await v.stop();
  }
}

// Two captures with GPU lanes merged (strobe merge --same-host): each GPU lane names its process once, and the
// header says no unknown cost ("?/event") for the merge, which carries none of its own.
async function merged(browser) {
  const a = path.join(work, 'ga.strobe'), b = path.join(work, 'gb.strobe'), ab = path.join(work, 'gab.strobe');
  run(makeCapture, [a, '--frames', '10', '--gpu', '--pid', '111']);
  run(makeCapture, [b, '--frames', '10', '--gpu', '--pid', '222']);
  run(strobe, ['merge', a, b, '-o', ab, '--same-host', '--quiet']);
  const v = await startView(strobe, [ab]);
  try {
    const { page, errors } = await openViewer(browser, v.url, { width: 1600, height: 900 });
    const got = await page.evaluate(() => ({ lanes: window.__strobe.lanes().map((l) => l.name).filter((n) => /^GPU /.test(n)),
      head: document.querySelector('#identity').innerText }));
    const once = (name, p) => name.split(p).length === 2;
    check(got.lanes.length === 2 && once(got.lanes[0], 'pid_111') && once(got.lanes[1], 'pid_222') && got.lanes.every((n) => /gpu0/.test(n) && /graphics/.test(n)),
      `a merged capture's GPU lanes name their process once (${got.lanes.join(', ')})`);
    check(/\bmerged\b/.test(got.head) && !/\?\/event/.test(got.head), `a merged capture's header says no unknown cost per event (${got.head.replace(/\n/g, ' | ')})`);
    await page.screenshot({ path: path.join(work, 'merged-gpu.png') });
    check(errors.length === 0, `no console or page error on the merged capture (${errors.slice(0, 3).join('; ')})`);
  } finally {
    await v.stop();
  }
}

async function main() {
  fs.mkdirSync(work, { recursive: true });
  const cap = path.join(work, 'nav.strobe');
  run(makeCapture, [cap, '--frames', '200', '--spike', '120', '--kinds', '--units', '--stages']);
  const browser = await launch(chromiumPath);
  const v = await startView(strobe, [cap]);
  try {
    const { page, errors } = await openViewer(browser, v.url, { width: 1600, height: 900 });
    await page.evaluate(() => localStorage.clear());   // the default column widths
    await page.reload();
    await page.waitForFunction(() => window.__strobe && window.__strobe.ready, null, { timeout: 60000 });
    await section('frame list', () => frameList(page));
    await section('search', () => search(page));
    await section('pan', () => pan(page));
    await section('zoom', () => zoom(page));
    await section('header', () => header(page));
    await section('light theme', () => lightTheme(page));
    await section('counters', () => counters(page));
    await section('histogram', () => histogram(page));
    check(errors.length === 0, `no console or page error (${errors.slice(0, 3).join('; ')})`);
    await section('gpu frame', () => gpuFrame(browser));
    await section('merged', () => merged(browser));
  } finally {
    await v.stop();
    await browser.close();
  }
}

finish(main);
