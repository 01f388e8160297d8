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
//   - tooltip: never cut off, wherever the pointer is in the flame chart.
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
    '--stage-tree', '--pass-category', '--worker-marks']);
  const report = JSON.parse(run(strobe, ['report', '--json', '--top', '3', cap]));
  const view = await startView(strobe, [cap]);
  const browser = await launch(chromiumPath);
  try {
    const meta = await (await fetch(`http://127.0.0.1:${view.port}/api/capture/meta`, { headers: { Authorization: `Bearer ${view.token}` } })).json();
    const { page, errors } = await openViewer(browser, view.url);
    page.setDefaultTimeout(10000);
    await section('pie', () => pie(page));
    await section('strip', () => strip(page, report));
    await section('stages', () => stages(page, meta));
    await section('tooltip', () => tooltip(page));
    await page.setViewportSize({ width: 1024, height: 768 });
    await page.waitForTimeout(200);
    await section('strip at 1024 px', () => strip(page, report, '1024'));
    await section('tooltip at 1024 px', () => tooltip(page, '1024'));
    check(errors.length === 0, `no console or page errors (${errors.join(' | ')})`);
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

finish(main);
