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
//   viewer_pan_cpu_ms_per_frame  CPU time of every browser process (renderer,
//                             GPU process: SwiftShader and the compositor) per
//                             frame drawn while panning, from /proc: what a
//                             frame costs whatever else runs on the machine
//   viewer_pan_js_ms_per_frame   time in JavaScript per frame (Chromium's
//                             sampling profiler over the same pan, through the
//                             DevTools protocol; wall time, so a loaded machine
//                             inflates it); the rest is raster and compositing
//   viewer_pan_fps_webgl2, viewer_pan_cpu_ms_per_frame_webgl2  the same pan
//                             with WebGL2 forced (#renderer=webgl2): the
//                             instanced path a GPU gets, here on SwiftShader
// and, in the same run, the floor those frames stand on:
//   viewer_floor_frame_ms     one frame of a bare canvas of the flame chart's
//                             size (the renderer the viewer chose: Canvas 2D
//                             on SwiftShader, else WebGL2) cleared and covered
//                             by one rectangle, paced by animation frames as
//                             the viewer is (the pixels' cost alone)
//   viewer_pan_frame_ratio_*  the pan's median frame time over that floor
// Prints `BENCH name value unit`, `BUDGET name value <=|>= limit ok|OVER` and
// the machine's load average beside every figure (a loaded machine is slower:
// read the ratio and the CPU per frame). Also prints the model's size in
// memory (strobe view's own figure).
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
  console.log(`BENCH ${name} ${value.toFixed(value < 10 ? 2 : 1)} ${unit}\n  (${note ? `${note}; ` : ''}load average ${load()})`);
}

function budget(name, value, op, limit, unit, note = '') {
  bench(name, value, unit, note);
  const ok = op === '<=' ? value <= limit : value >= limit;
  console.log(`BUDGET ${name} ${value.toFixed(1)} ${op} ${limit} ${ok ? 'ok' : 'OVER'}  (load average ${load()})`);
}

// CPU time (ms) of this process's descendants (the browser's processes and strobe view), from /proc.
function childrenCpuMs() {
  const kids = new Map(), cpu = new Map();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      const ppid = Number(f[1]);
      cpu.set(Number(d), Number(f[11]) + Number(f[12]));
      if (!kids.has(ppid)) kids.set(ppid, []);
      kids.get(ppid).push(Number(d));
    } catch { /* gone meanwhile */ }
  }
  let ticks = 0;
  const walk = (p) => { for (const k of kids.get(p) || []) { ticks += cpu.get(k) || 0; walk(k); } };
  walk(process.pid);
  return ticks * (1000 / CLK_TCK);
}
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

// JavaScript's share of a profile (Chromium's sampling profiler): ms outside (program), (idle) and (garbage collector).
function jsMs(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  let us = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const f = byId.get(profile.samples[i]).callFrame.functionName;
    if (f !== '(program)' && f !== '(idle)' && f !== '(garbage collector)') us += profile.timeDeltas[i] || 0;
  }
  return us / 1000;
}

const pct = (a, p) => { const s = a.slice().sort((x, y) => x - y); return s.length ? s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))] : NaN; };

// One animation-frame loop for 2 s moving the view each frame: {fps, gaps, bars, frames, cpuMs (the browser's
// processes per frame), jsMs (JavaScript per frame, from the profiler)}.
async function animate(page, kind, div) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 250 });
  await cdp.send('Profiler.start');
  const cpu0 = childrenCpuMs();
  const r = await animateLoop(page, kind, div);
  const cpu1 = childrenCpuMs();
  const { profile } = await cdp.send('Profiler.stop');
  await cdp.detach();
  return { ...r, cpuMs: (cpu1 - cpu0) / Math.max(1, r.frames), jsMs: jsMs(profile) / Math.max(1, r.frames) };
}

function animateLoop(page, kind, div) {
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
        const frames = r.renders() - before, fps = frames / ((now - t0) / 1000);
        const bars = r.glStats().instances;
        r.setRange(v.t0, v.t1);
        resolve({ fps, frames, gaps: gaps.slice(1), bars });
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

// The floor: a bare canvas of the flame chart's size (Canvas 2D or WebGL2, as the viewer draws), cleared and
// covered by one rectangle each frame.
async function floorFrameMs(browser, size, kind) {
  const page = await browser.newPage({ viewport: VIEWPORT });
  try {
    await page.goto('about:blank');
    return await page.evaluate(({ width, height, kind }) => new Promise((resolve) => {
      const c = document.createElement('canvas');
      c.width = width; c.height = height;
      document.body.style.margin = '0';
      document.body.append(c);
      let draw;
      if (kind === 'canvas2d') {
        const g = c.getContext('2d');
        draw = () => {
          g.clearRect(0, 0, width, height);
          g.fillStyle = '#3366aa';
          g.fillRect(0, 0, width, height);
        };
      } else {
        const gl = c.getContext('webgl2');
        const sh = (type, src) => { const s = gl.createShader(type); gl.shaderSource(s, src); gl.compileShader(s); return s; };
        const p = gl.createProgram();
        gl.attachShader(p, sh(gl.VERTEX_SHADER, '#version 300 es\nvoid main(){vec2 v=vec2(gl_VertexID&1,gl_VertexID>>1)*2.0-1.0;gl_Position=vec4(v,0,1);}'));
        gl.attachShader(p, sh(gl.FRAGMENT_SHADER, '#version 300 es\nprecision mediump float;out vec4 o;void main(){o=vec4(0.2,0.4,0.6,1);}'));
        gl.linkProgram(p);
        gl.useProgram(p);
        draw = () => {
          gl.clearColor(0, 0, 0, 1);
          gl.clear(gl.COLOR_BUFFER_BIT);
          gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
        };
      }
      const gaps = [];
      let last = performance.now(), t0 = last;
      const step = () => {
        draw();
        const now = performance.now();
        gaps.push(now - last);
        last = now;
        if (now - t0 < 2000) requestAnimationFrame(step);
        else { gaps.shift(); gaps.sort((a, b) => a - b); resolve(gaps[gaps.length >> 1]); }
      };
      requestAnimationFrame(step);
    }), { ...size, kind });
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
    const floor = await floorFrameMs(browser, { width: Math.round(fb.width), height: Math.round(fb.height) }, renderer);
    bench(`viewer_floor_frame_ms_${tag}`, floor, 'ms', `a bare ${renderer} canvas of the flame chart's ${Math.round(fb.width)}×${Math.round(fb.height)} px cleared and covered by one rectangle, same browser, same run`);
    if (budgets) budget(`viewer_load_ms_${tag}`, loadMs, '<=', 1500, 'ms');
    else bench(`viewer_load_ms_${tag}`, loadMs, 'ms');
    bench(`viewer_first_paint_ms_${tag}`, paint, 'ms');
    await page.evaluate(() => { const v = __strobe.view(); __strobe._range0 = { t0: v.t0, t1: v.t1 }; });
    const pan = await animate(page, 'pan', panDiv);
    if (budgets) budget(`viewer_pan_fps_${tag}`, pan.fps, '>=', 30, 'fps'); else bench(`viewer_pan_fps_${tag}`, pan.fps, 'fps');
    bench(`viewer_pan_frame_ms_p95_${tag}`, pct(pan.gaps, 0.95), 'ms', `${pan.bars} bars, ${renderer}`);
    bench(`viewer_pan_cpu_ms_per_frame_${tag}`, pan.cpuMs, 'ms', `every browser process, ${pan.frames} frames`);
    bench(`viewer_pan_js_ms_per_frame_${tag}`, pan.jsMs, 'ms', 'time in JavaScript, from the profiler (wall time: preemption on a loaded machine counts)');
    const zoom = await animate(page, 'zoom', panDiv);
    if (budgets) budget(`viewer_zoom_fps_${tag}`, zoom.fps, '>=', 30, 'fps'); else bench(`viewer_zoom_fps_${tag}`, zoom.fps, 'fps');
    bench(`viewer_zoom_frame_ms_p95_${tag}`, pct(zoom.gaps, 0.95), 'ms');
    bench(`viewer_zoom_cpu_ms_per_frame_${tag}`, zoom.cpuMs, 'ms', `every browser process, ${zoom.frames} frames`);
    // Hover: 400 pointer moves over the flame chart, half where spans are bars, half over dense clusters.
    const box = await page.locator('#flame').boundingBox();
    await page.evaluate(() => __strobe.resetHitStats());
    for (const div of [panDiv * 2, 20]) {
      await page.evaluate((div) => { const v = __strobe.view(); __strobe.setRange(v.t0 + (v.t1 - v.t0) / 3, v.t0 + (v.t1 - v.t0) / 3 + (v.t1 - v.t0) / div); }, div);
      for (let k = 0; k < 200; k++) await page.mouse.move(box.x + 5 + ((k * 37) % Math.floor(box.width - 10)), box.y + 24 + ((k * 13) % 120));
      await page.evaluate(() => { const s = window.__strobe; s.setRange(...Object.values(s._range0)); });
    }
    const hs = await page.evaluate(() => __strobe.hitStats());
    const hoverNote = `${hs.n} moves; median ${pct(hs.all, 0.5).toFixed(0)} µs, p95 ${pct(hs.all, 0.95).toFixed(0)} µs (a preempted move counts whole in the mean)`;
    if (budgets) budget(`viewer_hit_test_us_${tag}`, hs.totalUs / Math.max(1, hs.n), '<=', 200, 'us', hoverNote);
    else bench(`viewer_hit_test_us_${tag}`, hs.totalUs / Math.max(1, hs.n), 'us', hoverNote);
    if (errors.length) console.log(`viewer_bench: page errors (${tag}): ${errors.join(' | ')}`);
    await page.close();
    bench(`viewer_pan_frame_ratio_${tag}`, pct(pan.gaps, 0.5) / floor, 'x', 'the pan\'s median frame over the floor frame');
    if (renderer !== 'webgl2') {   // the WebGL2 path (a GPU's) on this software renderer, for comparison
      const gl = await openViewer(browser, view.url + '&renderer=webgl2', VIEWPORT);
      try {
        const p = await animate(gl.page, 'pan', panDiv);
        bench(`viewer_pan_fps_webgl2_${tag}`, p.fps, 'fps', 'WebGL2 forced (#renderer=webgl2) on SwiftShader');
        bench(`viewer_pan_cpu_ms_per_frame_webgl2_${tag}`, p.cpuMs, 'ms', `every browser process, ${p.frames} frames`);
      } finally {
        await gl.page.close();
      }
    }
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
