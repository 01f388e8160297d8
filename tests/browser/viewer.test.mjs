// viewer.test.mjs — the web viewer in a real browser (issue 6, item 9):
// `strobe view` serves known captures (tests/cli/make_capture.c: 1 ns per
// tick, every duration known), Debian's Chromium opens the printed URL
// through playwright-core, and the test checks what a person would see:
//   - the token: the page works only with it, and never puts it in a URL;
//   - the frame list shows the 49 frames (50 FRAME marks) and selects one;
//   - hovering the `spike` bar of frame 20 shows its tooltip (name, file:line,
//     50.0 µs: durations in the unit that fits, three significant digits), at the position the viewer reports for that span;
//   - zoom (keys and wheel) and pan change the visible range as they should;
//   - search counts the matching spans;
//   - the diff view's top row for frames 19 → 20 is the span that grew the
//     most, and agrees with `strobe diff FILE --frames 19 20 --json`;
//   - the two-capture diff (--compare, every `work` 50 % longer) puts `work`
//     first;
//   - counters are plotted; on SwiftShader (software WebGL) the flame chart
//     draws with Canvas 2D, WebGL2 when asked (#renderer=webgl2: the checks
//     above run there), and the Canvas 2D fallback (#fallback=1) draws and
//     hit-tests the same spans;
//   - a capture of operations only (make_capture --ops: passes with stages
//     and counters, no scope on their thread, no frame mark) shows its passes
//     as the frames, numbered by the application's frame ids, both frame
//     rates labelled, the selected pass's window, frame id, committed flag,
//     stage table and counters, and its counter plotted per operation;
//   - counters and gauges by kind (make_capture --kinds) are one row per
//     family, its kinds stacked per frame, with a legend, and the readout
//     over a frame gives each kind's count in that frame (as strobe report);
//   - a program without frames (make_capture --no-marks) gets an activity
//     strip (a lane per thread, its top-level scope time per bucket) and no
//     budget or frame rate; a capture with frames keeps the frame strip.
// Screenshots go to --work. Any console error or page error fails the test.
//
// usage: node viewer.test.mjs --strobe BIN --make-capture BIN --chromium PATH --work DIR
import fs from 'node:fs';
import path from 'node:path';
import { arg, check, finish, launch, openViewer, run, startView, startViewOpened } from './strobe_view.mjs';

const strobe = arg('--strobe');
const makeCapture = arg('--make-capture');
const chromiumPath = arg('--chromium', '/usr/bin/chromium');
const work = arg('--work');

async function hoverSpan(page, name) {
  const i = await page.evaluate((n) => __strobe.findSpan(n), name);
  const rect = await page.evaluate((k) => __strobe.spanRect(k), i);
  if (!rect) return { i, rect, tip: null };
  await page.mouse.move(rect.x + rect.w / 2, rect.y + rect.h / 2);
  await page.waitForTimeout(50);
  return { i, rect, tip: await page.evaluate(() => __strobe.tooltip()) };
}

async function main() {
  fs.mkdirSync(work, { recursive: true });
  const spike = path.join(work, 'spike.strobe'), grown = path.join(work, 'grown.strobe');
  run(makeCapture, [spike, '--frames', '50', '--spike', '20']);
  run(makeCapture, [grown, '--frames', '50', '--grow', '50']);
  const cliDiff = JSON.parse(run(strobe, ['diff', spike, '--frames', '19', '20', '--json']));
  const cliTop = cliDiff.spans.reduce((a, b) => (b.change_ns > a.change_ns ? b : a));

  const view = await startView(strobe, [spike, '--compare', grown]);
  const browser = await launch(chromiumPath);
  try {
    // >>token: the data needs it, the static files do not, a URL never carries it.
    const base = `http://127.0.0.1:${view.port}`;
    check((await fetch(`${base}/api/capture/meta`)).status === 401, 'meta without the token is 401');
    check((await fetch(`${base}/api/capture/meta?token=${view.token}`)).status === 400, 'a token in the query string is refused (400)');
    check((await fetch(`${base}/`)).status === 200, 'the viewer page itself needs no token');
    check((await fetch(`${base}/app.js`)).headers.get('content-type').startsWith('text/javascript'), 'app.js is served as JavaScript');

    // The browser `strobe view` starts gets a one-time code, never the token (a command line is public to ps):
    // the viewer trades it on load, drops it from the address bar, and a second tab cannot use it again.
    const opened = await startViewOpened(strobe, [spike], work);
    try {
      check(/^http:\/\/127\.0\.0\.1:\d+\/#code=[0-9a-f]{32}$/.test(opened.url), `the browser is opened on a code (${opened.url})`);
      const first = await openViewer(browser, opened.url);
      const got = await first.page.evaluate(() => ({ form: !!document.getElementById('token-form'), url: location.href,
        spans: __strobe.findSpan('frame') >= 0 }));
      check(!got.form && got.spans, `the viewer opened on the code shows the capture (${JSON.stringify(got)})`);
      check(!got.url.includes('code='), `the code is removed from the address bar (${got.url})`);
      check(first.errors.length === 0, `no error opening on the code: ${first.errors}`);
      const second = await openViewer(browser, opened.url);
      check(await second.page.evaluate(() => !!document.getElementById('token-form')), 'a spent code opens nothing (the token form)');
      await first.page.close();
      await second.page.close();
    } finally {
      await opened.stop();
    }

    // A capture a crash handler ended (docs/recording.md §Crashes): the header says where it died, as strobe info.
    const crashed = path.join(work, 'crashed.strobe');
    run(makeCapture, [crashed, '--crash']);
    const crashView = await startView(strobe, [crashed]);
    try {
      const c = await openViewer(browser, crashView.url);
      const said = await c.page.evaluate(() => document.getElementById('identity').textContent);
      check(said.includes('crashed: SIGSEGV on thread main in pass 394 › layout_compute'), `the header says where it crashed: ${said}`);
      check(c.errors.length === 0, `no error on a crashed capture: ${c.errors}`);
      await c.page.close();
    } finally {
      await crashView.stop();
    }

    // WebGL2 is SwiftShader here (no GPU): by default the flame chart draws with Canvas 2D, which costs the
    // CPU half as much; #renderer=webgl2 keeps WebGL2 (what a machine with a GPU gets), checked below.
    const soft = await openViewer(browser, view.url);
    const why = await soft.page.evaluate(() => [__strobe.renderer(), __strobe.rendererWhy()]);
    check(why[0] === 'canvas2d' && /SwiftShader/.test(why[1]), `on software WebGL the flame chart draws with Canvas 2D (${why})`);
    // index.html preloads every module the page loads (first render: all fetched at once, not level by level).
    const mods = await soft.page.evaluate(() => ({
      preloaded: [...document.querySelectorAll('link[rel=modulepreload]')].map((l) => new URL(l.href).pathname).sort(),
      loaded: performance.getEntriesByType('resource').map((r) => new URL(r.name).pathname).filter((p) => p.endsWith('.js') && p !== '/app.js').sort() }));
    check(mods.loaded.length > 10 && JSON.stringify(mods.preloaded) === JSON.stringify(mods.loaded),
      `index.html preloads exactly the modules the page loads (missing: ${mods.loaded.filter((x) => !mods.preloaded.includes(x))}; extra: ${mods.preloaded.filter((x) => !mods.loaded.includes(x))})`);
    await soft.page.close();
    const { page, errors } = await openViewer(browser, view.url + '&renderer=webgl2');
    check(!page.url().includes(view.token), `the token is removed from the address bar (${page.url()})`);
    check(await page.evaluate(() => __strobe.renderer()) === 'webgl2', 'the flame chart draws with WebGL2 when asked to');

    // >>frames: 50 marks make 49 frames
    check(await page.evaluate(() => __strobe.frameCount()) === 49, 'the model has 49 frames');
    check(await page.evaluate(() => __strobe.listRows()) === 49, 'the frame list shows 49 rows');
    check(/^49 frames/.test(await page.textContent('.list-note')), 'the list says 49 frames');
    // The slowest frame is listed first by default: frame 20, with the spike.
    const firstRow = await page.textContent('#list tbody tr:first-child td:first-child');
    check(firstRow.trim() === '20', `the slowest frame (20) is first in the list (got ${firstRow})`);
    await page.click('#list tbody tr:first-child');
    await page.waitForTimeout(100);
    check(/frame 20/.test(await page.textContent('#detail .detail-head')), 'clicking the row selects frame 20 (detail panel)');
    const frameRange = await page.evaluate(() => __strobe.view());
    check(frameRange.t0 < 1439500 && frameRange.t1 > 1439500 + 64600, `the flame chart shows frame 20 (${JSON.stringify(frameRange)})`);
    const tree = await page.textContent('#detail .tree');
    check(/spike/.test(tree) && /×3/.test(tree), 'the span tree shows spike and the ×3 badge of work');
    await page.screenshot({ path: path.join(work, 'viewer-frame.png') });

    // >>hover: the spike bar's tooltip
    let h = await hoverSpan(page, 'spike');
    check(h.rect && h.rect.w > 10, `the spike bar is visible (${JSON.stringify(h.rect)})`);
    check(h.tip && /spike/.test(h.tip) && /duration\s+50\.0 µs/.test(h.tip) && /self\s+50\.0 µs/.test(h.tip) && /app\/loop\.c:130/.test(h.tip),
      `hovering spike shows its name, file:line, duration and self time 50.0 µs (${h.tip})`);
    const hits = await page.evaluate(() => __strobe.hitStats());
    check(hits.n > 0, `the hover was hit-tested (${hits.n} moves; its cost is bench/viewer_bench.mjs's viewer_hit_test_us, never a test's)`);
    h = await hoverSpan(page, 'draw');
    check(h.tip && /triangles/.test(h.tip) && /2\.00 µs/.test(h.tip), `a draw bar's tooltip has its value and duration (${h.tip})`);
    const gl = await page.evaluate(() => __strobe.glStats());
    check(gl.drawCalls >= 1 && gl.drawCalls <= 2 && gl.drawCalls === gl.uploads, `one upload and one draw call per lane (${JSON.stringify(gl)})`);
    await page.screenshot({ path: path.join(work, 'viewer-tooltip.png') });

    // >>zoom and pan
    const before = await page.evaluate(() => __strobe.view());
    await page.focus('.flame-overlay');
    await page.keyboard.press('=');
    await page.keyboard.press('=');
    await page.waitForTimeout(50);
    const zoomed = await page.evaluate(() => __strobe.view());
    const w0 = before.t1 - before.t0, w1 = zoomed.t1 - zoomed.t0;
    check(Math.abs(w1 / w0 - 0.64) < 0.02, `'+' twice zooms in by 1.25² (${w0} → ${w1} ns)`);
    const box = await page.locator('#flame').boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.wheel(0, 400);
    await page.waitForTimeout(100);
    const wheeled = await page.evaluate(() => __strobe.view());
    check(wheeled.t1 - wheeled.t0 > w1 * 1.2, `the wheel zooms out (${w1} → ${wheeled.t1 - wheeled.t0} ns)`);
    await page.keyboard.press('ArrowRight');
    await page.waitForTimeout(50);
    const panned = await page.evaluate(() => __strobe.view());
    check(panned.t0 > wheeled.t0 && Math.abs((panned.t1 - panned.t0) - (wheeled.t1 - wheeled.t0)) < 1e-6 * (wheeled.t1 - wheeled.t0),
      'the right arrow pans without zooming');
    await page.mouse.move(box.x + 300, box.y + 200);
    await page.mouse.down();
    await page.mouse.move(box.x + 400, box.y + 200, { steps: 4 });
    await page.mouse.up();
    const dragged = await page.evaluate(() => __strobe.view());
    check(dragged.t0 < panned.t0, 'dragging right pans back in time');

    // >>search
    await page.fill('#search', 'work');
    await page.waitForTimeout(50);
    check(/^150 spans match/.test(await page.textContent('#matches')), 'searching "work" counts its 150 spans');
    await page.fill('#search', '');

    // >>frame diff: frames 19 → 20, as `strobe diff --frames 19 20`
    await page.click('#list tbody tr:first-child');
    await page.click('#tabs button[data-tab="diff"]');
    await page.click('input[name="mode"][value="frames"]');
    await page.waitForTimeout(100);
    const top = await page.$$eval('table.diff tr:nth-child(2) td', (tds) => tds.map((t) => t.textContent.trim()));
    check(top[0] === 'frame/spike' && /\+50\.0 µs/.test(top[3]) && top[7] === 'appeared', `the diff's top row is spike +50 µs appeared (${top})`);
    const rows = await page.evaluate(() => __strobe.diffFrames(19, 20));
    check(rows[0].path === cliTop.path && Math.abs(rows[0].change - cliTop.change_ns) < 1,
      `the viewer's largest growth (${rows[0].path} ${rows[0].change}) is strobe diff's (${cliTop.path} ${cliTop.change_ns})`);
    const cliPaths = new Map(cliDiff.spans.map((s) => [s.path, s]));
    check(rows.length === cliDiff.spans.length && rows.every((r) => cliPaths.has(r.path) && Math.abs(cliPaths.get(r.path).change_ns - r.change) < 1 && cliPaths.get(r.path).status === r.status),
      'every path, change and status agrees with strobe diff --frames --json');
    await page.screenshot({ path: path.join(work, 'viewer-diff.png') });

    // >>capture diff: grown.strobe's work is 50 % longer
    await page.click('input[name="mode"][value="captures"]');
    await page.waitForTimeout(100);
    const capTop = await page.$$eval('table.diff tr:nth-child(2) td', (tds) => tds.map((t) => t.textContent.trim()));
    check(capTop[0] === 'frame/update/work' && capTop[7] === 'grew', `the capture diff puts frame/update/work first (${capTop})`);
    await page.screenshot({ path: path.join(work, 'viewer-diff-captures.png') });

    // >>counters
    await page.click('#tabs button[data-tab="counters"]');
    await page.waitForTimeout(100);
    const series = await page.$$eval('.series-head b', (bs) => bs.map((b) => b.textContent));
    check(series.includes('draw_calls') && series.includes('queue_depth'), `counters and gauges are plotted (${series})`);
    await page.screenshot({ path: path.join(work, 'viewer-counters.png') });
    check(errors.length === 0, `no console or page errors (${errors.join(' | ')})`);

    // >>Canvas 2D fallback: the same spans, drawn and hit-tested without WebGL2
    const fb = await openViewer(browser, view.url + '&fallback=1');
    check(await fb.page.evaluate(() => __strobe.renderer()) === 'canvas2d', 'the fallback flag selects Canvas 2D');
    await fb.page.evaluate(() => __strobe.selectFrame(20));
    await fb.page.waitForTimeout(100);
    h = await hoverSpan(fb.page, 'spike');
    check(h.tip && /spike/.test(h.tip) && /duration\s+50\.0 µs/.test(h.tip), `the fallback's spike tooltip (${h.tip})`);
    const pixel = await fb.page.evaluate(({ x, y }) => {
      const c = document.querySelector('.flame-bars');
      const r = c.getBoundingClientRect(), d = window.devicePixelRatio || 1;
      return [...c.getContext('2d').getImageData((x - r.left) * d, (y - r.top) * d, 1, 1).data];
    }, { x: h.rect.x + h.rect.w / 2, y: h.rect.y + h.rect.h / 2 });
    check(pixel[3] > 200, `the fallback drew the spike bar (pixel ${pixel})`);
    await fb.page.screenshot({ path: path.join(work, 'viewer-fallback.png') });
    check(fb.errors.length === 0, `no console or page errors in the fallback (${fb.errors.join(' | ')})`);

    // A capture with frame marks: a frame strip with its budget.
    const marked = await page.evaluate(() => __strobe.strip());
    check(marked.mode === 'frames' && marked.budgetShown, `a capture with frames has a frame strip (${JSON.stringify(marked)})`);

    await operationsOnly(browser);
    await withoutFrames(browser);
    await countersByKind(browser);
  } finally {
    await browser.close();
    const code = await view.stop();
    check(code === 0, `strobe view exits 0 on SIGTERM (${code})`);
  }
}

// >>operations only: frames from pass operations (docs/viewer.md)
async function operationsOnly(browser) {
  const ops = path.join(work, 'ops.strobe');
  run(makeCapture, [ops, '--ops', '--frames', '100', '--stall', '50']);
  const view = await startView(strobe, [ops]);
  try {
    const { page, errors } = await openViewer(browser, view.url);
    check(await page.evaluate(() => __strobe.frameCount()) === 100, 'the 100 passes are the frames');
    const note = await page.textContent('.list-note');
    check(/passes are the frames/.test(note), `the list says where frames come from (${note})`);
    check(/27\.3 fps first-to-last/.test(note) && /62\.5 fps steady/.test(note),
      `both frame rates, labelled: one 2 s stall pulls only first-to-last down (${note})`);
    check(await page.evaluate(() => __strobe.selectFrame(200)) >= 0, 'frame 200 (the application\'s id) is in the model');
    await page.waitForTimeout(100);
    const head = await page.textContent('#detail .detail-head');
    check(/pass 200/.test(head) && /window main/.test(head) && /frame id 200 \(the application's\)/.test(head) &&
      /dropped/.test(head), `the detail panel says what the operation is, in the frame model's state (${head})`);
    const stages = await page.$$eval('#detail table.opstages tr td:first-child', (tds) => tds.map((t) => t.textContent));
    check(stages.includes('layout') && stages.includes('paint'), `its own stage table (${stages})`);
    const detail = await page.textContent('#detail');
    check(/rows\s*operation counter\s*7/.test(detail), 'its counter, as it counted it');
    await page.click('#tabs button[data-tab="counters"]');
    await page.waitForTimeout(100);
    const series = await page.$$eval('.series-head b', (bs) => bs.map((b) => b.textContent));
    check(series.includes('rows'), `the operation counter is plotted (${series})`);
    await page.screenshot({ path: path.join(work, 'viewer-operations.png') });
    check(errors.length === 0, `no console or page errors with operations (${errors.join(' | ')})`);
  } finally {
    const code = await view.stop();
    check(code === 0, `strobe view of the operations capture exits 0 (${code})`);
  }
}

// >>counters by kind: one row per family, stacked per frame (make_capture --kinds)
async function countersByKind(browser) {
  const kinds = path.join(work, 'kinds.strobe');
  run(makeCapture, [kinds, '--kinds', '--frames', '20']);
  const view = await startView(strobe, [kinds]);
  try {
    const { page, errors } = await openViewer(browser, view.url);
    await page.click('#tabs button[data-tab="counters"]');
    await page.waitForTimeout(100);
    const fams = await page.$$eval('.series.family .series-head b', (bs) => bs.map((b) => b.textContent));
    check(fams.length === 2 && fams.includes('draw_calls') && fams.includes('gpu_memory'), `one row per family (${fams})`);
    const heads = await page.$$eval('.series-head b', (bs) => bs.map((b) => b.textContent));
    check(heads.filter((n) => n === 'draw_calls').length === 2, `the plain draw_calls counter keeps its own row (${heads})`);
    const legend = await page.$$eval('.series.family', (rows) => rows.map((r) => [...r.querySelectorAll('.kind-key')].map((k) => k.textContent).join(',')));
    check(legend.includes('quads,text') && legend.includes('textures'), `each family's kinds in its legend (${legend})`);
    // Frame 4 (from the 4th FRAME mark to the 5th) holds loop iteration k = 4's draw calls (k % 5 + 1 = 5 quads,
    // 3 text) and the level set at the 4th mark (k = 3: 3000 bytes).
    const f = await page.evaluate(() => __strobe.frameBounds(4));
    const r = await page.evaluate(() => { const a = __strobe.counterAxes()[0]; return { lo: a.t0, hi: a.t1, left: a.left }; });
    check(f !== null, 'frame 4 is in the model');
    const readout = async (family) => {
      const rows = await page.$$('.series.family');
      for (const el of rows) {
        if ((await el.$eval('b', (b) => b.textContent)) !== family) continue;
        const box = await (await el.$('canvas')).boundingBox();
        const x = box.x + r.left + ((f.start + f.end) / 2 - r.lo) / (r.hi - r.lo) * (box.width - r.left);
        await page.mouse.move(x, box.y + box.height / 2);
        await page.waitForTimeout(50);
        return el.$eval('.readout', (e) => e.textContent);
      }
      return '';
    };
    const dc = await readout('draw_calls');
    check(/^quads 5 · text 3 at /.test(dc), `frame 4's draw calls by kind (${dc})`);
    const gm = await readout('gpu_memory');
    check(/^textures 2\.93 KiB at /.test(gm), `frame 4's texture memory (${gm})`);
    await page.screenshot({ path: path.join(work, 'viewer-kinds.png') });
    check(errors.length === 0, `no console or page errors with kinds (${errors.join(' | ')})`);
  } finally {
    const code = await view.stop();
    check(code === 0, `strobe view of the kinds capture exits 0 (${code})`);
  }
}

// >>programs without frames: no FRAME mark, no operation (make_capture --no-marks)
async function withoutFrames(browser) {
  const batch = path.join(work, 'frameless.strobe');
  run(makeCapture, [batch, '--no-marks']);
  const view = await startView(strobe, [batch]);
  try {
    const { page, errors } = await openViewer(browser, view.url);
    const strip = await page.evaluate(() => __strobe.strip());
    check(strip.mode === 'activity' && !strip.budgetShown, `an activity strip and no budget (${JSON.stringify(strip)})`);
    check(await page.getAttribute('#strip', 'data-mode') === 'activity', 'the strip element says activity');
    // One lane per thread; each lane's scope time is its top-level scopes' total (main: 50 frames of
    // 1.075 ms in all; worker: 50 jobs of 8 µs), spread over the buckets without loss.
    const lanes = Object.fromEntries(strip.lanes.map((l) => [l.name, l]));
    check(strip.lanes.length === 2 && lanes.main && lanes.worker, `a lane per thread (${JSON.stringify(strip.lanes)})`);
    check(Math.abs(lanes.main.busyNs - 1075000) < 1 && Math.abs(lanes.worker.busyNs - 400000) < 1,
      `scope time per thread (${lanes.main.busyNs}, ${lanes.worker.busyNs})`);
    check(lanes.main.maxShare > 0 && lanes.main.maxShare <= 1 + 1e-9, `shares of a bucket (${lanes.main.maxShare})`);
    const note = await page.textContent('.list-note');
    check(/top-level scopes/.test(note) && !/fps/.test(note), `no frame rate for a program without frames (${note})`);
    // Drag on the strip still zooms the flame chart.
    const box = await page.locator('#strip canvas').boundingBox();
    await page.mouse.move(box.x + box.width * 0.25, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2, { steps: 5 });
    await page.mouse.up();
    await page.waitForTimeout(100);
    const v = await page.evaluate(() => __strobe.view()), span = strip.range.hi - strip.range.lo;
    check(Math.abs(v.t0 - (strip.range.lo + 0.25 * span)) < 0.03 * span && Math.abs(v.t1 - (strip.range.lo + 0.5 * span)) < 0.03 * span,
      `dragging over the second quarter of the strip zooms the flame chart there (${JSON.stringify(v)}, ${JSON.stringify(strip.range)})`);
    await page.screenshot({ path: path.join(work, 'viewer-frameless.png') });
    check(errors.length === 0, `no console or page errors without frames (${errors.join(' | ')})`);
  } finally {
    const code = await view.stop();
    check(code === 0, `strobe view of the frameless capture exits 0 (${code})`);
  }
}

finish(main);
