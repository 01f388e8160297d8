// viewer_tree.test.mjs — element attribution and the UI-tree tab in a real
// browser (docs/viewer.md §UI tree): `strobe view` serves a capture whose
// frames' render and draw scopes are attributed to a Row and two Cells and
// which holds two UI-tree snapshots (tests/cli/make_capture --ui-tree), and
// the test checks what a person sees:
//   - the tab lists both snapshots with the frame each was taken in, and
//     shows the first rebuilt: the Row at the root, its two Cells one level
//     under it (parent indexes from the one-pass stack rebuild), ids, bounds
//     and properties as `strobe tree --json` gives them;
//   - each node says how many spans are attributed to its element, and
//     hovering a Cell lists its span (draw, 2.00 µs) and outlines its bounds;
//   - a draw span's tooltip names its element (Cell and its id);
//   - the element filter lights exactly that element's spans and counts them.
// Any console or page error fails the test. Screenshots go to --work.
//
// usage: node viewer_tree.test.mjs --strobe BIN --make-capture BIN --chromium PATH --work DIR
import fs from 'node:fs';
import path from 'node:path';
import { arg, check, finish, launch, openViewer, run, startView } from './strobe_view.mjs';

const strobe = arg('--strobe');
const makeCapture = arg('--make-capture');
const chromiumPath = arg('--chromium', '/usr/bin/chromium');
const work = arg('--work');

async function main() {
  fs.mkdirSync(work, { recursive: true });
  const file = path.join(work, 'ui_tree.strobe');
  run(makeCapture, [file, '--ui-tree', '--frames', '12']);
  const cli = JSON.parse(run(strobe, ['tree', file, '--snapshot', '1', '--json']));
  const view = await startView(strobe, [file]);
  const browser = await launch(chromiumPath);
  try {
    const { page, errors } = await openViewer(browser, view.url);
    // >>tab: the snapshots and the first one's tree.
    await page.click('#tabs button[data-tab="uitree"]');
    await page.waitForTimeout(100);
    const options = await page.$$eval('#tree-snap option', (o) => o.map((x) => x.textContent));
    check(options.length === 2 && /^#1 .* frame 4 · 3 nodes$/.test(options[0]) && /^#2 .* frame 9 · 3 nodes$/.test(options[1]),
      `both snapshots listed with their frames (${JSON.stringify(options)})`);
    const rows = await page.evaluate(() => __strobe.uiTreeRows());
    const want = cli.nodes.map((n) => ({ parent: n.parent, type: n.type, id: n.id }));
    check(JSON.stringify(rows.map((r) => ({ parent: r.parent, type: r.type, id: r.id }))) === JSON.stringify(want),
      `the tree rebuilt as strobe tree gives it (${JSON.stringify(rows)} vs ${JSON.stringify(want)})`);
    check(rows.map((r) => r.level).join() === '0,1,1', `the cells sit one level under the row (${rows.map((r) => r.level)})`);
    check(rows.every((r) => r.spans === '1 span'), `one attributed span per element (${rows.map((r) => r.spans)})`);
    const text = await page.textContent('#view-uitree .tree-nodes');
    check(text.includes('[150, 80, 150 × 20]') && text.includes('padding=1.5') && text.includes('height=20'),
      `bounds and properties shown (${text})`);
    // >>hover: a Cell's span listed, its bounds outlined.
    await page.hover('#view-uitree .unode[data-node="2"]');
    await page.waitForTimeout(100);
    const listed = await page.textContent('#view-uitree .tree-spans');
    check(/Cell/.test(listed) && /1 attributed span/.test(listed) && /draw\s*2\.00 µs/.test(listed),
      `hovering the second Cell lists its draw span (${listed})`);
    const outlined = await page.evaluate(() => {
      const c = document.querySelector('#view-uitree .tree-bounds');
      const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let orange = 0;
      for (let k = 0; k < px.length; k += 4) orange += px[k] > 200 && px[k + 1] > 100 && px[k + 1] < 160 && px[k + 2] < 100;
      return orange;
    });
    check(outlined > 50, `the hovered node's bounds are outlined (${outlined} px)`);
    await page.screenshot({ path: path.join(work, 'viewer-uitree.png') });
    // >>attribution: the tooltip and the filter, on the timeline.
    await page.click('#tabs button[data-tab="timeline"]');
    await page.waitForTimeout(100);
    const draw = await page.evaluate(() => __strobe.findSpan('draw', 9)); /* frame 4's second draw: Cell 42 */
    const el = await page.evaluate((i) => __strobe.element(i), draw);
    check(el && el.type === 'Cell' && el.id === '000000000000002a', `the span's element (${JSON.stringify(el)})`);
    const rect = await page.evaluate((i) => __strobe.spanRect(i), draw);
    if (rect) {
      await page.mouse.move(rect.x + rect.w / 2, rect.y + rect.h / 2);
      await page.waitForTimeout(50);
      const tip = await page.evaluate(() => __strobe.tooltip());
      check(tip && /element\s+Cell 000000000000002a/.test(tip), `the tooltip names the element (${tip})`);
    } else {
      await page.evaluate(() => __strobe.setRange(0, 2e6));
    }
    const matches = await page.evaluate(() => __strobe.elementFilter('000000000000002a'));
    check(matches === '1 spans of element 000000000000002a', `the filter counts the element's spans (${matches})`);
    const lit = await page.evaluate((i) => {
      const out = [];
      for (const k of [i, __strobe.findSpan('draw', 8), __strobe.findSpan('render', 4)]) out.push(__strobe.isLit(k));
      return out;
    }, draw);
    check(lit.join() === 'true,false,false', `only that element's span is lit (${lit})`);
    await page.evaluate(() => __strobe.elementFilter(null));
    check(errors.length === 0, `no console or page errors (${errors.join(' | ')})`);
  } finally {
    await browser.close();
    const code = await view.stop();
    check(code === 0, `strobe view exits 0 (${code})`);
  }
}

finish(main);
