// viewer_gpu.test.mjs — the viewer's GPU lane (docs/gpu.md, docs/viewer.md),
// in Debian's Chromium through playwright-core against `strobe view` on a
// capture with GPU frames written by make_capture --gpu (tests/cli: 20 frames
// 500..519 on the queue lane gpu0/graphics, a composite and a blur span each,
// queue backlog 2000 + 100 (k mod 10) ns, polling latency 300 (1 + k mod 5)
// ns, frame 503's fence seen 1000 ns before its GPU end: an order violation).
// What is on the screen, read back from the flame chart's overlay canvas:
//   - the GPU lane is drawn under every CPU thread's lane;
//   - the lane's spans are where the frames' GPU start and end are;
//   - for a frame: its cpu_end, submit and fence_seen instants are 1 px ticks
//     in their colours at their times, its queue backlog (submit to GPU start)
//     is shaded amber and its polling latency (GPU end to fence seen) blue,
//     and the GPU work between them is not shaded: the frame's four instants
//     (cpu_end, submit, GPU start and end, fence seen) bound what is drawn;
//   - the frame out of order has its ticks in red;
//   - the model's frames agree with `strobe report --json`'s gaps.
// Screenshots go to --work. Any console error or page error fails the test.
//
// usage: node viewer_gpu.test.mjs --strobe BIN --make-capture BIN --chromium PATH --work DIR
import fs from 'node:fs';
import path from 'node:path';
import { arg, check, finish, launch, openViewer, run, startView } from './strobe_view.mjs';

const strobe = arg('--strobe');
const makeCapture = arg('--make-capture');
const chromiumPath = arg('--chromium', '/usr/bin/chromium');
const work = arg('--work');

// viewer/bars.js GPU_OVERLAY, as RGBA the overlay canvas holds (not premultiplied).
const BACKLOG = [227, 179, 65, 0.3], POLLING = [88, 166, 255, 0.3];
const TICK = { cpu_end: [0xd2, 0xa8, 0xff], submit: [0xe3, 0xb3, 0x41], fence_seen: [0x58, 0xa6, 0xff] };
const RED = [0xf8, 0x51, 0x49];

const near = (px, rgb, tol = 12) => px && rgb.every((v, i) => Math.abs(px[i] - v) <= tol);
const shaded = (px, [r, g, b, a]) => px && near(px, [r, g, b], 16) && Math.abs(px[3] - a * 255) <= 16;

// The overlay canvas's pixel at client (x, y), as [r, g, b, a].
function overlayPixel(page, x, y) {
  return page.evaluate(([cx, cy]) => {
    const c = document.querySelector('.flame-overlay');
    const r = c.getBoundingClientRect(), d = window.devicePixelRatio || 1;
    return Array.from(c.getContext('2d').getImageData(Math.round((cx - r.left) * d), Math.round((cy - r.top) * d), 1, 1).data);
  }, [x, y]);
}

// Client x of model time t, from the view's range and the overlay's box.
async function clientX(page, t) {
  const [v, box] = await Promise.all([page.evaluate(() => __strobe.view()), page.locator('.flame-overlay').boundingBox()]);
  return box.x + (t - v.t0) / (v.t1 - v.t0) * box.width;
}

async function main() {
  fs.mkdirSync(work, { recursive: true });
  const cap = path.join(work, 'gpu.strobe');
  run(makeCapture, [cap, '--frames', '20', '--gpu', '--gpu-bad', '3']);
  const report = JSON.parse(run(strobe, ['report', '--json', cap]));
  const view = await startView(strobe, [cap]);
  const browser = await launch(chromiumPath);
  try {
    const meta = await (await fetch(`http://127.0.0.1:${view.port}/api/capture/meta`,
      { headers: { Authorization: `Bearer ${view.token}` } })).json();
    const { page, errors } = await openViewer(browser, view.url);
    const gpuThreads = meta.threads.filter((t) => t.gpu_lane);
    check(gpuThreads.length === 1 && gpuThreads[0].gpu_lane.domain === 'gpu0' && gpuThreads[0].gpu_lane.queue === 'graphics',
      `one GPU lane, gpu0/graphics: ${JSON.stringify(meta.threads.map((t) => t.gpu_lane || t.name))}`);
    const frames = meta.gpu && meta.gpu.frames;
    check(frames && frames.length === 20, `meta.gpu has the 20 frames: ${frames && frames.length}`);
    // The model's gaps are the report's (nearest-rank p50 over the same frames).
    const backlog = frames.map((f) => f[3] - f[2]).sort((a, b) => a - b);
    check(Math.abs(backlog[Math.ceil(0.5 * backlog.length) - 1] - report.gpu.queue_backlog.p50_ns) < 1 &&
      Math.abs(backlog[backlog.length - 1] - report.gpu.queue_backlog.max_ns) < 1,
      `backlog ${backlog} vs the report's ${JSON.stringify(report.gpu.queue_backlog)}`);

    // The lane under the CPU threads: a GPU span's bar below one span of every CPU thread.
    const f0 = frames.find((f) => f[0] === 500);
    const [, cpuEnd, submit, gpuBegin, gpuEnd, fence] = f0;
    await page.evaluate(([a, b]) => __strobe.setRange(a, b), [cpuEnd - 1000, fence + 1000]);
    const spanRect = async (name) => page.evaluate((n) => { const i = __strobe.findSpan(n); return i < 0 ? null : { info: __strobe.spanInfo(i), rect: __strobe.spanRect(i) }; }, name);
    const comp = await spanRect('composite');
    check(comp && comp.rect && Math.abs(comp.info.start - gpuBegin) < 1, `the first composite span starts at frame 500's GPU start: ${JSON.stringify(comp)}`);
    const cpuThreads = meta.threads.filter((t) => !t.gpu_lane);
    const rows = await page.evaluate(() => {
      // Every thread's first span, scrolled into the range that holds it: its bar's y.
      const seen = {};
      const names = ['frame', 'update', 'work', 'render', 'draw', 'job', 'io'];
      for (const n of names) {
        for (let k = 0; ; k++) {
          const i = __strobe.findSpan(n, k);
          if (i < 0) break;
          const s = __strobe.spanInfo(i);
          if (seen[s.thread] !== undefined) continue;
          __strobe.setRange(s.start, s.start + Math.max(s.dur, 1));
          const r = __strobe.spanRect(i);
          if (r) seen[s.thread] = r.y;
        }
      }
      return seen;
    });
    await page.evaluate(([a, b]) => __strobe.setRange(a, b), [cpuEnd - 1000, fence + 1000]);
    const gpuRect = (await spanRect('composite')).rect;
    const cpuYs = Object.values(rows);
    check(cpuYs.length === cpuThreads.length && cpuYs.every((y) => y < gpuRect.y),
      `the GPU lane (bar at y ${gpuRect.y}) is under every CPU thread (${JSON.stringify(rows)}, ${cpuThreads.length} threads)`);

    // Frame 500: ticks, shading and GPU work where its instants are.
    const y = gpuRect.y + gpuRect.h / 2;
    const px = async (t) => overlayPixel(page, await clientX(page, t), y);
    const tickPx = async (t) => { // the 1 px tick: the column nearest t, or its neighbour after rounding
      const x = Math.round(await clientX(page, t) - (await page.locator('.flame-overlay').boundingBox()).x);
      const box = await page.locator('.flame-overlay').boundingBox();
      return [await overlayPixel(page, box.x + x, y), await overlayPixel(page, box.x + x + 1, y), await overlayPixel(page, box.x + x - 1, y)];
    };
    for (const [name, t] of [['cpu_end', cpuEnd], ['submit', submit], ['fence_seen', fence]]) {
      const cols = await tickPx(t);
      check(cols.some((c) => near(c, TICK[name])), `frame 500's ${name} tick at ${t} ns: ${JSON.stringify(cols)}`);
    }
    check(shaded(await px((submit + gpuBegin) / 2), BACKLOG), `queue backlog shaded amber: ${await px((submit + gpuBegin) / 2)}`);
    check(shaded(await px((gpuEnd + fence) / 2), POLLING), `polling latency shaded blue: ${await px((gpuEnd + fence) / 2)}`);
    const mid = await px((gpuBegin + gpuEnd) / 2);
    check(mid && mid[3] === 0, `the GPU work itself is not shaded: ${mid}`);
    const before = await px((cpuEnd + submit) / 2);
    check(before && before[3] === 0, `nothing shaded between cpu_end and submit: ${before}`);
    await page.screenshot({ path: path.join(work, 'gpu-frame-500.png') });

    // Frame 503, out of order (fence seen before GPU end): its ticks in red.
    const f3 = frames.find((f) => f[0] === 503);
    check(f3 && f3[7] !== 0, `frame 503 carries its violation: ${JSON.stringify(f3)}`);
    await page.evaluate(([a, b]) => __strobe.setRange(a, b), [f3[1] - 1000, f3[4] + 1000]);
    for (const [name, t] of [['cpu_end', f3[1]], ['submit', f3[2]], ['fence_seen', f3[5]]]) {
      const cols = await tickPx(t);
      check(cols.some((c) => near(c, RED)), `frame 503's ${name} tick in red: ${JSON.stringify(cols)}`);
    }
    await page.screenshot({ path: path.join(work, 'gpu-frame-503.png') });
    check(errors.length === 0, `no console or page errors: ${errors.join('; ')}`);
  } finally {
    await browser.close();
    await view.stop();
  }
}

finish(main);
