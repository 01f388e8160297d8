// viewer_bench.mjs — the web viewer's budgets (issue 6), measured in
// headless Chromium with WebGL2 on SwiftShader (no GPU), on a capture of
// 1,000,000 spans (make_capture --frames 100000: 10 spans a frame):
//   viewer_load_ms_1m_spans  navigation → first full render (strip + flame
//                            chart drawn with the data), ≤ 2000 ms
//   viewer_pan_fps_1m_spans  frames drawn per second while panning for 2 s,
//                            one pan step per animation frame, where every
//                            span is its own bar (a thousandth of the
//                            capture in view: ~1,100 bars), ≥ 50
//   viewer_hit_test_us       cost of one pointer move over the flame chart
//                            (hit-test, tooltip, hover outline), measured in
//                            the page over 400 moves, ≤ 200 µs
// Prints `BENCH name value unit` and `BUDGET name value <=|>= limit ok|OVER`.
// Also prints the model's size in memory (strobe view's own figure).
//
// usage: node bench/viewer_bench.mjs --build BUILD_DIR [--chromium PATH]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { arg, startView, launch, openViewer } from '../tests/browser/strobe_view.mjs';

const build = arg('--build', 'build');
const chromiumPath = arg('--chromium', '/usr/bin/chromium');
const strobe = path.join(build, 'tools', 'strobe');
const makeCapture = path.join(build, 'tests', 'cli', 'make_capture');

function budget(name, value, op, limit, unit) {
  const ok = op === '<=' ? value <= limit : value >= limit;
  console.log(`BENCH ${name} ${value.toFixed(1)} ${unit}`);
  console.log(`BUDGET ${name} ${value.toFixed(1)} ${op} ${limit} ${ok ? 'ok' : 'OVER'}`);
}

async function main() {
  for (const f of [strobe, makeCapture]) {
    if (!fs.existsSync(f)) { console.log(`viewer_bench: ${f} is missing (build with the server and tests)`); return; }
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strobe-viewer-bench-'));
  const cap = path.join(dir, '1m.strobe');
  const g = spawnSync(makeCapture, [cap, '--frames', '100000'], { encoding: 'utf8' });
  if (g.status !== 0) throw new Error(`make_capture: ${g.stderr}`);
  const view = await startView(strobe, [cap]);
  const browser = await launch(chromiumPath);
  try {
    const m = /(\d+) spans, (\d+) frames, ([0-9.]+) MiB in memory, loaded in (\d+) ms/.exec(view.stderr());
    if (m) console.log(`BENCH viewer_model_mib_1m_spans ${m[3]} MiB\n  (${m[1]} spans, ${m[2]} frames, built in ${m[4]} ms by strobe view)`);
    // Load: best of 3 navigations (the first also warms Chromium's caches).
    let load = Infinity, page, errors;
    for (let k = 0; k < 3; k++) {
      if (page) await page.close();
      ({ page, errors } = await openViewer(browser, view.url, { width: 1600, height: 900 }));
      load = Math.min(load, await page.evaluate(() => __strobe.loadMs));
    }
    const spans = await page.evaluate(() => document.querySelector('#identity').textContent);
    if (!/1,000,000 spans/.test(spans)) throw new Error(`expected 1,000,000 spans: ${spans}`);
    budget('viewer_load_ms_1m_spans', load, '<=', 2000, 'ms');
    await page.evaluate(() => { const v = __strobe.view(); __strobe._range0 = { t0: v.t0, t1: v.t1 }; });

    // Pan: one pan step per animation frame for 2 s. The budget is taken
    // where every span is a bar of its own (a thousandth of the capture:
    // ~100 frames, ~1,100 bars); a tenth (100,000 spans, drawn as dense
    // clusters) is printed beside it.
    const pan = (div) => page.evaluate((div) => new Promise((resolve) => {
      const r = window.__strobe;
      const v = r.view();
      const full = v.t1 - v.t0;
      r.setRange(v.t0 + full / 3, v.t0 + full / 3 + full / div);
      const before = r.renders();
      const t0 = performance.now();
      let dir = 1;
      const step = () => {
        const now = performance.now();
        if (now - t0 >= 2000) {
          const fps = (r.renders() - before) / ((now - t0) / 1000);
          const bars = r.glStats().instances;
          r.setRange(v.t0, v.t1);
          resolve({ fps, bars });
          return;
        }
        const w = r.view();
        if (w.t1 > v.t1 - full / 50) dir = -1;
        if (w.t0 < v.t0 + full / 50) dir = 1;
        r.pan(dir * 6);
        requestAnimationFrame(step);
      };
      requestAnimationFrame(step);
    }), div);
    const fine = await pan(1000), wide = await pan(10);
    budget('viewer_pan_fps_1m_spans', fine.fps, '>=', 50, 'fps');
    const gl = await page.evaluate(() => __strobe.glStats());
    console.log(`BENCH viewer_pan_bars ${fine.bars} bars\n  (${gl.drawCalls} draw calls, ${gl.uploads} uploads per frame, ${await page.evaluate(() => __strobe.renderer())})`);
    console.log(`BENCH viewer_pan_fps_1m_spans_tenth_in_view ${wide.fps.toFixed(1)} fps\n  (${wide.bars} bars: 100,000 spans as dense clusters)`);

    // Hit-test: 400 pointer moves over the flame chart, half where every
    // span is a bar (1/2000 of the capture), half over dense clusters (1/20).
    const box = await page.locator('#flame').boundingBox();
    await page.evaluate(() => __strobe.resetHitStats());
    for (const div of [2000, 20]) {
      await page.evaluate((div) => { const v = __strobe.view(); __strobe.setRange(v.t0 + (v.t1 - v.t0) / 3, v.t0 + (v.t1 - v.t0) / 3 + (v.t1 - v.t0) / div); }, div);
      for (let k = 0; k < 200; k++) {
        const x = box.x + 5 + ((k * 37) % Math.floor(box.width - 10));
        const y = box.y + 24 + ((k * 13) % 120);
        await page.mouse.move(x, y);
      }
      await page.evaluate(() => { const s = window.__strobe; s.setRange(...Object.values(s._range0)); });
    }
    const hs = await page.evaluate(() => __strobe.hitStats());
    budget('viewer_hit_test_us', hs.totalUs / Math.max(1, hs.n), '<=', 200, 'us');
    if (errors.length) console.log(`viewer_bench: page errors: ${errors.join(' | ')}`);
  } finally {
    await browser.close();
    await view.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => { console.error(`viewer_bench: ${e.stack || e}`); process.exit(1); });
