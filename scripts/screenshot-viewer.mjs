// screenshot-viewer.mjs — regenerates the README's and docs/viewer.md's
// screenshots from the demo's own capture, so they show what the viewer
// shows today: it runs strobe-demo for a few seconds (its capture), serves it
// with `strobe view`, and in headless Chromium (playwright-core) at 1400×900
// selects the slowest frame, hovers a span of its second row for the tooltip
// (docs/viewer.png), then opens the Flame graph tab on the demo's busiest
// name with its sandwich (docs/viewer-flamegraph.png). The flame chart is
// drawn with WebGL2 (#renderer=webgl2), as a machine with a GPU shows it:
// headless Chromium's WebGL is SwiftShader, where the viewer would choose
// Canvas 2D. Nothing here is a test: it writes PNGs and says where, with the
// demo's frame rates as this run measured them (a loaded machine makes the
// demo's frames slow, and the pictures show it).
//
// usage: node scripts/screenshot-viewer.mjs --build BUILD_DIR [--chromium PATH] [--out DIR (default docs)]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { arg, launch, openViewer, repo, startView } from '../tests/browser/strobe_view.mjs';

const build = arg('--build', 'build');
const chromiumPath = arg('--chromium', '/usr/bin/chromium');
const out = arg('--out', path.join(repo, 'docs'));
const strobe = path.join(build, 'tools', 'strobe');
const demo = path.join(build, 'examples', 'strobe-demo');

async function main() {
  for (const f of [strobe, demo]) if (!fs.existsSync(f)) throw new Error(`${f} is missing: build first (make build)`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strobe-shot-'));
  const g = spawnSync(demo, ['--seconds', '4', '--out', dir], { encoding: 'utf8' });
  const cap = path.join(dir, 'demo.strobe');
  if (g.status !== 0 || !fs.existsSync(cap)) throw new Error(`strobe-demo exited ${g.status}: ${g.stderr.slice(-400)}`);
  const view = await startView(strobe, [cap]);
  const browser = await launch(chromiumPath);
  try {
    const { page, errors } = await openViewer(browser, view.url + '&renderer=webgl2', { width: 1400, height: 900 });
    console.log(`the demo's capture: ${await page.evaluate(() => document.querySelector('.list-note')?.textContent || '')}; load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
    // The slowest frame: the list is sorted slowest first.
    await page.click('#list tr[data-frame]');
    await page.waitForSelector('#detail .detail-head');
    // A tooltip: the first bar with one, scanning the first lane's second row from the middle.
    const box = await page.locator('#flame canvas.flame-overlay').boundingBox();
    for (let k = 0; k < 40; k++) {
      await page.mouse.move(box.x + box.width * (0.35 + 0.01 * k), box.y + 22 + 18 + 18 + 8);
      if (await page.evaluate(() => __strobe.tooltip())) break;
    }
    await page.waitForTimeout(200);
    const shot = path.join(out, 'viewer.png');
    await page.screenshot({ path: shot });
    console.log(`wrote ${shot}`);
    await page.click('#tabs button[data-tab="flamegraph"]');
    await page.waitForFunction(() => __strobe.flameGraph().main.length > 0);
    const busiest = await page.evaluate(() => {
      const d = __strobe.flameGraph().main.filter((r) => r.y === 36);   // the second level under the root
      return d.length ? d[0].name : null;
    });
    if (busiest) await page.evaluate((n) => __strobe.sandwich(n), busiest);
    await page.waitForTimeout(200);
    const shot2 = path.join(out, 'viewer-flamegraph.png');
    await page.screenshot({ path: shot2 });
    console.log(`wrote ${shot2}`);
    if (errors.length) throw new Error(`page errors: ${errors.join(' | ')}`);
  } finally {
    await browser.close();
    await view.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => { console.error(`screenshot-viewer: ${e.message}`); process.exit(1); });
