// viewer_bench.mjs — the web viewer's CPU-only speed budgets (issue 18): in
// headless Chromium at 1400×900 with WebGL2 on SwiftShader (no GPU: the case
// of machines where WebGL runs on the CPU), for two captures:
//   demo  the demo application's own capture (strobe-demo --seconds 4)
//   1m    1,000,000 spans (make_capture --frames 100000: 10 spans a frame)
// it measures, per capture (suffix _demo or _1m):
//   viewer_load_ms            navigation → first full render (strip and flame
//                             chart drawn with the data), best of 3; budget
//                             for 1m: ≤ 1500 ms
//   viewer_first_paint_ms     navigation → first contentful paint
//   viewer_pan_fps            frames drawn per second while panning for 2 s,
//                             one pan step per animation frame, where every
//                             span is a bar of its own (a thousandth of the
//                             1m capture in view); budget ≥ 30
//   viewer_pan_frame_ms_p95   the 95th percentile of the time between those frames
//   viewer_zoom_fps           the same while zooming in and out one step a frame; budget ≥ 30
//   viewer_hit_test_us        one pointer move over the flame chart (hit-test,
//                             tooltip, hover outline), mean over 400 moves; budget ≤ 200
// and, in the same run, the floor those frames stand on:
//   viewer_floor_frame_ms     one frame of a bare WebGL2 canvas of the flame
//                             chart's size cleared and covered by one quad, on the same
//                             SwiftShader, paced by animation frames as the
//                             viewer is (the pixels' cost alone)
//   viewer_pan_frame_ratio_*  the pan's median frame time over that floor
// Prints `BENCH name value unit`, `BUDGET name value <=|>= limit ok|OVER` and
// the machine's load average beside them (a loaded machine is slower: read the
// ratio). Also prints the model's size in memory (strobe view's own figure).
// These are budgets, not tests: the browser tests assert no timing.
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
const demo = path.join(build, 'examples', 'strobe-demo');
const VIEWPORT = { width: 1400, height: 900 };

const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

function bench(name, value, unit, note = '') {
  console.log(`BENCH ${name} ${value.toFixed(value < 10 ? 2 : 1)} ${unit}${note ? `\n  (${note})` : ''}`);
}

function budget(name, value, op, limit, unit) {
  bench(name, value, unit);
  const ok = op === '<=' ? value <= limit : value >= limit;
  console.log(`BUDGET ${name} ${value.toFixed(1)} ${op} ${limit} ${ok ? 'ok' : 'OVER'}  (load average ${load()})`);
}

const pct = (a, p) => { const s = a.slice().sort((x, y) => x - y); return s.length ? s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))] : NaN; };

// One animation-frame loop for 2 s calling `move(dir)` each frame: {fps, frameMs (the gaps), bars}.
function animate(page, kind, div) {
  return page.evaluate(([kind, div]) => new Promise((resolve) => {
    const r = window.__strobe;
    const v = r.view(), full = v.t1 - v.t0;
    r.setRange(v.t0 + full / 3, v.t0 + full / 3 + full / div);
    const before = r.renders(), gaps = [];
    const t0 = performance.now();
    let last = t0, dir = 1, k = 0;
    const step = () => {
      const now = performance.now();
      gaps.push(now - last);
      last = now;
      if (now - t0 >= 2000) {
        const fps = (r.renders() - before) / ((now - t0) / 1000);
        const bars = r.glStats().instances;
        r.setRange(v.t0, v.t1);
        resolve({ fps, gaps: gaps.slice(1), bars });
        return;
      }
      if (kind === 'pan') {
        const w = r.view();
        if (w.t1 > v.t1 - full / 50) dir = -1;
        if (w.t0 < v.t0 + full / 50) dir = 1;
        r.pan(dir * 6);
      } else {
        r.zoom(k++ % 20 < 10 ? 0.9 : 1 / 0.9);
      }
      requestAnimationFrame(step);
    };
    requestAnimationFrame(step);
  }), [kind, div]);
}

// The floor: a bare WebGL2 canvas of the flame chart's size, cleared and covered by one quad each frame.
async function floorFrameMs(browser, size) {
  const page = await browser.newPage({ viewport: VIEWPORT });
  try {
    await page.goto('about:blank');
    return await page.evaluate(({ width, height }) => new Promise((resolve) => {
      const c = document.createElement('canvas');
      c.width = width; c.height = height;
      document.body.style.margin = '0';
      document.body.append(c);
      const gl = c.getContext('webgl2');
      const sh = (type, src) => { const s = gl.createShader(type); gl.shaderSource(s, src); gl.compileShader(s); return s; };
      const p = gl.createProgram();
      gl.attachShader(p, sh(gl.VERTEX_SHADER, '#version 300 es\nvoid main(){vec2 v=vec2(gl_VertexID&1,gl_VertexID>>1)*2.0-1.0;gl_Position=vec4(v,0,1);}'));
      gl.attachShader(p, sh(gl.FRAGMENT_SHADER, '#version 300 es\nprecision mediump float;out vec4 o;void main(){o=vec4(0.2,0.4,0.6,1);}'));
      gl.linkProgram(p);
      gl.useProgram(p);
      const gaps = [];
      let last = performance.now(), t0 = last;
      const step = () => {
        gl.clearColor(0, 0, 0, 1);
        gl.clear(gl.COLOR_BUFFER_BIT);
        gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
        const now = performance.now();
        gaps.push(now - last);
        last = now;
        if (now - t0 < 2000) requestAnimationFrame(step);
        else { gaps.shift(); gaps.sort((a, b) => a - b); resolve(gaps[gaps.length >> 1]); }
      };
      requestAnimationFrame(step);
    }), size);
  } finally {
    await page.close();
  }
}

async function measure(browser, cap, tag, { panDiv, budgets }) {
  const view = await startView(strobe, [cap]);
  try {
    const m = /(\d+) spans, (\d+) frames, ([0-9.]+) MiB in memory, loaded in (\d+) ms/.exec(view.stderr());
    if (m) bench(`viewer_model_mib_${tag}`, Number(m[3]), 'MiB', `${m[1]} spans, ${m[2]} frames, built in ${m[4]} ms by strobe view`);
    let loadMs = Infinity, paint = Infinity, page, errors;
    for (let k = 0; k < 3; k++) {   // best of 3 navigations (the first also warms Chromium's caches)
      if (page) await page.close();
      ({ page, errors } = await openViewer(browser, view.url, VIEWPORT));
      loadMs = Math.min(loadMs, await page.evaluate(() => __strobe.loadMs));
      paint = Math.min(paint, await page.evaluate(() => (performance.getEntriesByName('first-contentful-paint')[0] || { startTime: NaN }).startTime));
    }
    const renderer = await page.evaluate(() => __strobe.renderer());
    const fb = await page.locator('#flame').boundingBox();
    const floor = await floorFrameMs(browser, { width: Math.round(fb.width), height: Math.round(fb.height) });
    bench(`viewer_floor_frame_ms_${tag}`, floor, 'ms', `a bare WebGL2 canvas of the flame chart's ${Math.round(fb.width)}×${Math.round(fb.height)} px cleared and covered by one quad, same SwiftShader, same run`);
    if (budgets) budget(`viewer_load_ms_${tag}`, loadMs, '<=', 1500, 'ms');
    else bench(`viewer_load_ms_${tag}`, loadMs, 'ms');
    bench(`viewer_first_paint_ms_${tag}`, paint, 'ms');
    await page.evaluate(() => { const v = __strobe.view(); __strobe._range0 = { t0: v.t0, t1: v.t1 }; });
    const pan = await animate(page, 'pan', panDiv);
    if (budgets) budget(`viewer_pan_fps_${tag}`, pan.fps, '>=', 30, 'fps'); else bench(`viewer_pan_fps_${tag}`, pan.fps, 'fps');
    bench(`viewer_pan_frame_ms_p95_${tag}`, pct(pan.gaps, 0.95), 'ms', `${pan.bars} bars, ${renderer}`);
    const zoom = await animate(page, 'zoom', panDiv);
    if (budgets) budget(`viewer_zoom_fps_${tag}`, zoom.fps, '>=', 30, 'fps'); else bench(`viewer_zoom_fps_${tag}`, zoom.fps, 'fps');
    bench(`viewer_zoom_frame_ms_p95_${tag}`, pct(zoom.gaps, 0.95), 'ms');
    // Hover: 400 pointer moves over the flame chart, half where spans are bars, half over dense clusters.
    const box = await page.locator('#flame').boundingBox();
    await page.evaluate(() => __strobe.resetHitStats());
    for (const div of [panDiv * 2, 20]) {
      await page.evaluate((div) => { const v = __strobe.view(); __strobe.setRange(v.t0 + (v.t1 - v.t0) / 3, v.t0 + (v.t1 - v.t0) / 3 + (v.t1 - v.t0) / div); }, div);
      for (let k = 0; k < 200; k++) await page.mouse.move(box.x + 5 + ((k * 37) % Math.floor(box.width - 10)), box.y + 24 + ((k * 13) % 120));
      await page.evaluate(() => { const s = window.__strobe; s.setRange(...Object.values(s._range0)); });
    }
    const hs = await page.evaluate(() => __strobe.hitStats());
    if (budgets) budget(`viewer_hit_test_us_${tag}`, hs.totalUs / Math.max(1, hs.n), '<=', 200, 'us');
    else bench(`viewer_hit_test_us_${tag}`, hs.totalUs / Math.max(1, hs.n), 'us');
    if (errors.length) console.log(`viewer_bench: page errors (${tag}): ${errors.join(' | ')}`);
    await page.close();
    bench(`viewer_pan_frame_ratio_${tag}`, pct(pan.gaps, 0.5) / floor, 'x', 'the pan\'s median frame over the floor frame');
    return { pan };
  } finally {
    await view.stop();
  }
}

async function main() {
  for (const f of [strobe, makeCapture]) {
    if (!fs.existsSync(f)) { console.log(`viewer_bench: ${f} is missing (build with the server and tests)`); return; }
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strobe-viewer-bench-'));
  const browser = await launch(chromiumPath);
  try {
    console.log(`viewer_bench: ${VIEWPORT.width}×${VIEWPORT.height}, WebGL2 on SwiftShader, ${os.cpus().length} CPUs, load average ${load()}`);
    if (fs.existsSync(demo)) {
      const g = spawnSync(demo, ['--seconds', '4', '--out', dir], { encoding: 'utf8' });
      const cap = path.join(dir, 'demo.strobe');
      if (g.status === 0 && fs.existsSync(cap)) {
        await measure(browser, cap, 'demo', { panDiv: 10, budgets: false });
      } else console.log(`viewer_bench: strobe-demo failed (${g.status}): ${g.stderr.slice(-300)}`);
    } else console.log(`viewer_bench: ${demo} is missing: no demo figures`);
    const cap = path.join(dir, '1m.strobe');
    const g = spawnSync(makeCapture, [cap, '--frames', '100000'], { encoding: 'utf8' });
    if (g.status !== 0) throw new Error(`make_capture: ${g.stderr}`);
    await measure(browser, cap, '1m', { panDiv: 1000, budgets: true });
  } finally {
    await browser.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => { console.error(`viewer_bench: ${e.stack || e}`); process.exit(1); });
