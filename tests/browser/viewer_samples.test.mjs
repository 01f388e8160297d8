// viewer_samples.test.mjs — the Samples tab in a real browser (docs/viewer.md
// §Samples): `strobe view` serves a capture with the sampler's records
// (fuzz/corpus/fuzz_capture_reader/ok-v4-samples.strb: one thread, two busy
// `work` scopes around a 5 ms `nap`, sampled at 300 Hz with switches) and the
// test checks what a person sees against `strobe report --samples --json` of
// the same file:
//   - the header says the capture's samples, rate and switches;
//   - the thread's strip has the off-CPU gap of the nap, drawn blocked
//     (grey), and a tick per sample of that thread;
//   - the strips follow the timeline's zoom: zoomed onto the nap, its gap
//     fills most of the strip; over the whole capture it is narrow again;
//   - on the timeline, the nap's blocked gap is shaded grey over the thread's
//     lane in the flame chart (off-CPU time inside its span);
//   - the sampled flame graph (flamegraph.js) has every sample at its root,
//     and hovering the hottest function by self samples names it with its
//     samples and self count.
// Any console or page error fails the test. A screenshot goes to --work.
//
// usage: node viewer_samples.test.mjs --strobe BIN --capture FILE --chromium PATH --work DIR
import fs from 'node:fs';
import path from 'node:path';
import { arg, check, finish, launch, openViewer, run, startView } from './strobe_view.mjs';

const strobe = arg('--strobe');
const file = arg('--capture');
const chromiumPath = arg('--chromium', '/usr/bin/chromium');
const work = arg('--work');

async function main() {
  fs.mkdirSync(work, { recursive: true });
  const cli = JSON.parse(run(strobe, ['report', file, '--samples', '--json']));
  const view = await startView(strobe, [file]);
  const browser = await launch(chromiumPath);
  try {
    const { page, errors } = await openViewer(browser, view.url);
    await page.click('#tabs button[data-tab="samples"]');
    await page.waitForTimeout(150);
    const head = await page.textContent('#view-samples .samples-head');
    check(head.includes(`${cli.samples.samples} samples`) && head.includes(`${cli.samples.rate_hz} Hz`)
      && head.includes(`${cli.samples.switches} context switches`), `the header counts (${head})`);
    const meta = await page.evaluate(() => window.__strobe.model().meta.sampler);
    const lane = meta.threads.find((t) => t.thread === 0);
    check(lane && lane.t.length > 0, `the scopes' thread has sample ticks (${lane && lane.t.length})`);
    // The nap: a blocked gap of about 5 ms (the report's split says how much).
    const nap = cli.cpu_split.find((x) => x.site === 'nap');
    let blocked = 0;
    for (let k = 0; k + 2 < lane.off.length; k += 3) if (!lane.off[k + 2]) blocked += lane.off[k + 1] - lane.off[k];
    check(nap && Math.abs(blocked - nap.blocked_ns) < 0.2 * nap.blocked_ns + 1e5,
      `the strip's blocked gaps (${blocked} ns) hold the nap's blocked time (${nap && nap.blocked_ns} ns)`);
    // Pixels of a blocked gap in the scopes' thread's strip (18 CSS pixels
    // high, 4 apart, in the order of the meta's threads with records): the
    // viewer's blocked shade over the strip's panel, composited as the strip
    // draws it (offcpu.js, theme.js).
    const strip = () => page.evaluate(async () => {
      const rows = window.__strobe.model().meta.sampler.threads.filter((t) => t.t.length || t.off.length);
      const row = rows.findIndex((t) => t.thread === 0);
      const { OFFCPU } = await import('./offcpu.js');
      const { colors } = await import('./theme.js');
      const one = document.createElement('canvas');
      one.width = one.height = 1;
      const g = one.getContext('2d');
      g.fillStyle = colors().panel;
      g.fillRect(0, 0, 1, 1);
      g.fillStyle = OFFCPU.blocked;
      g.fillRect(0, 0, 1, 1);
      const want = g.getImageData(0, 0, 1, 1).data;
      const c = document.querySelector('#view-samples .samples-lanes');
      const top = Math.round(row * 22 * devicePixelRatio), h = Math.round(18 * devicePixelRatio);
      const px = c.getContext('2d').getImageData(0, top, c.width, h).data;
      let n = 0;
      for (let k = 0; k < px.length; k += 4)
        n += Math.abs(px[k] - want[0]) <= 2 && Math.abs(px[k + 1] - want[1]) <= 2 && Math.abs(px[k + 2] - want[2]) <= 2;
      return { grey: n, inview: document.querySelector('#view-samples .samples-inview').textContent };
    });
    const grey = (await strip()).grey;
    check(grey > 0, `the blocked gap is drawn (${grey} px)`);
    // The flame graph: the root is every sample; the hottest function by self samples is named on hover.
    const drawn = await page.evaluate(() => window.__strobe.samplesFlame());
    const root = drawn.find((d) => d.name === 'all samples');
    check(root && root.total === cli.samples.samples, `the flame graph's root holds every sample (${root && root.total})`);
    const hottest = cli.samples.functions.slice().sort((a, b) => b.self - a.self)[0];
    const box = drawn.filter((d) => d.name === hottest.name).sort((a, b) => b.w - a.w)[0];
    check(box, `the hottest function (${hottest.name}) has a box`);
    if (box && box.total === hottest.inclusive) {
      const r = await page.evaluate(() => {
        const c = document.querySelector('#view-samples .fg-canvas').getBoundingClientRect();
        return { x: c.left, y: c.top };
      });
      await page.mouse.move(r.x + box.x + box.w / 2, r.y + box.y + 8);
      await page.waitForTimeout(100);
      const tip = await page.evaluate(() => [...document.querySelectorAll('.tooltip')].filter((t) => !t.hidden).map((t) => t.innerText).join('|'));
      check(tip.startsWith(hottest.name) && tip.includes(`${hottest.inclusive} samples`) && tip.includes(`self\t${hottest.self} samples`),
        `hovering it names it with its samples (${JSON.stringify(tip)})`);
    } else {
      check(false, `one box of ${hottest.name} holds its ${hottest.inclusive} samples (${JSON.stringify(box)})`);
    }
    await page.screenshot({ path: path.join(work, 'viewer-samples.png') });
    // The longest blocked gap of the thread (the nap).
    let gap = null;
    for (let k = 0; k + 2 < lane.off.length; k += 3)
      if (!lane.off[k + 2] && (!gap || lane.off[k + 1] - lane.off[k] > gap[1] - gap[0])) gap = [lane.off[k], lane.off[k + 1]];
    // The strips follow the timeline's zoom: zoomed onto the nap (a tenth of
    // its length each side), its grey gap fills most of the strip; over the
    // whole capture (the tab's other choice) it shrinks back.
    const before = await strip();
    const pad = (gap[1] - gap[0]) / 10;
    const shown = await page.evaluate(([a, b]) => { window.__strobe.setRange(a, b); return window.__strobe.view(); },
      [gap[0] - pad, gap[1] + pad]);
    await page.waitForTimeout(150);
    const zoomed = await strip();
    check(zoomed.inview !== before.inview, `the strips' range follows the zoom (${before.inview} -> ${zoomed.inview})`);
    check(zoomed.grey > 2 * before.grey, `zoomed onto the nap, its gap widens in the strip (${before.grey} -> ${zoomed.grey} px)`);
    const stripW = await page.evaluate(() => document.querySelector('#view-samples .samples-lanes').width);
    check(shown.t1 - shown.t0 < 1.5 * (gap[1] - gap[0]), `the timeline shows the nap (${JSON.stringify(shown)})`);
    // At least half the strip's width, 8 device pixels high (a gap is the strip's 18 CSS pixels).
    check(zoomed.grey > 0.5 * stripW * 8, `the nap's gap spans most of the strip's width (${zoomed.grey} px of ${stripW} wide)`);
    await page.selectOption('#view-samples .samples-x', 'capture');
    await page.waitForTimeout(100);
    const whole = await strip();
    check(whole.grey < zoomed.grey / 2 && whole.grey > 0, `over the whole capture the gap is narrow again (${whole.grey} px)`);
    await page.selectOption('#view-samples .samples-x', 'view');
    await page.click('#tabs button[data-tab="timeline"]');
    await page.waitForTimeout(150);
    const px = await page.evaluate((t) => window.__strobe.lanePixel(0, t, 6), (gap[0] + gap[1]) / 2);
    check(px && px[3] > 0 && Math.abs(px[0] - px[2]) < 30, `the nap's gap is shaded grey over the lane (${px})`);
    check(errors.length === 0, `no console or page errors (${errors.join('; ')})`);
  } finally {
    await browser.close();
    const code = await view.stop();
    check(code === 0, `strobe view exits 0 (${code})`);
  }
}

finish(main);
