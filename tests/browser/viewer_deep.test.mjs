// viewer_deep.test.mjs — the deep-capture tab and the UI-tree outline on the
// frame's screenshot, in a real browser (docs/viewer.md §Deep capture):
//   - on a make_capture --deep capture, the tab lists frame 4's six draw calls
//     in order with the replay status `strobe calls --json` gives each (three
//     ok, then missing_surface_geometry, missing_texture, missing_geometry),
//     and every frame's attachments (frame 9's cut one said so);
//   - on a merge of two make_capture --deep --ui-tree captures of pids 101 and
//     202 (both have frame 4), the deep-capture picker and the UI-tree picker
//     name each one's process, the second's calls are its own (its resources
//     moved up by 2^48, as `strobe calls --process pid_202` gives them), and
//     the attachments are grouped by frame and process;
//   - on the demo's capture (frame 12: a deep capture, its PNG screenshot and
//     a UI-tree snapshot), every call is ok, the thumbnail is the 960 x 682
//     screenshot, and in the UI-tree tab hovering a Cell outlines its bounds
//     over that screenshot.
// Any console or page error fails the test. Screenshots go to --work.
//
// usage: node viewer_deep.test.mjs --strobe BIN --make-capture BIN --demo BIN --chromium PATH --work DIR
import fs from 'node:fs';
import path from 'node:path';
import { arg, check, finish, launch, openViewer, run, startView } from './strobe_view.mjs';

const strobe = arg('--strobe');
const makeCapture = arg('--make-capture');
const demo = arg('--demo');
const chromiumPath = arg('--chromium', '/usr/bin/chromium');
const work = arg('--work');

async function synthetic(browser) {
  const file = path.join(work, 'deep.strobe');
  run(makeCapture, [file, '--deep', '--frames', '12']);
  const cli = JSON.parse(run(strobe, ['calls', file, '--frame', '4', '--json']));
  const view = await startView(strobe, [file]);
  try {
    const { page, errors } = await openViewer(browser, view.url);
    await page.click('#tabs button[data-tab="deep"]');
    await page.waitForTimeout(100);
    const rows = await page.evaluate(() => __strobe.deepRows());
    const want = cli.calls.map((c) => ({ seq: c.seq, kind: c.kind, status: c.status }));
    check(JSON.stringify(rows) === JSON.stringify(want), `the calls and their statuses as strobe calls gives them (${JSON.stringify(rows)})`);
    check(rows.filter((r) => r.status !== 'ok').length === 3, 'three calls miss something');
    const text = await page.textContent('#view-deep .deep-attachments');
    check(/frame 4: 3 attachments/.test(text) && /frame 9: 2 attachments/.test(text) && /stored in an earlier frame/.test(text) &&
      /cut by the capture's bound/.test(text), `attachments listed per frame (${text})`);
    const empty = await page.textContent('#view-deep .deep-side');
    check(/No screenshot/.test(empty) || (await page.$('#view-deep .deep-thumb')) !== null, 'the side says whether there is a screenshot');
    await page.screenshot({ path: path.join(work, 'viewer-deep-synthetic.png') });
    check(errors.length === 0, `no console or page errors (${errors.join(' | ')})`);
  } finally {
    const code = await view.stop();
    check(code === 0, `strobe view exits 0 (${code})`);
  }
}

async function merged(browser) {
  const files = ['101', '202'].map((pid) => {
    const f = path.join(work, `proc_${pid}.strobe`);
    run(makeCapture, [f, '--deep', '--ui-tree', '--frames', '12', '--pid', pid]);
    return f;
  });
  const file = path.join(work, 'two.strobe');
  run(strobe, ['merge', '--quiet', '--same-host', ...files, '-o', file]);
  const cli = JSON.parse(run(strobe, ['calls', file, '--frame', '4', '--process', 'pid_202', '--json']));
  const view = await startView(strobe, [file]);
  try {
    const { page, errors } = await openViewer(browser, view.url);
    await page.click('#tabs button[data-tab="deep"]');
    await page.waitForTimeout(100);
    const opts = await page.$$eval('#deep-pick option', (os) => os.map((o) => o.textContent));
    check(opts.length === 2 && opts[0].startsWith('frame 4 of pid_101 at') && opts[1].startsWith('frame 4 of pid_202 at'),
      `the deep captures name their processes (${opts})`);
    await page.selectOption('#deep-pick', '1');
    await page.waitForTimeout(100);
    const ids = await page.$$eval('#view-deep tr[data-call] td:nth-child(8)', (tds) => tds.map((t) => t.textContent));
    const want = cli.calls.map((c) => c.resources.map((r) => `${r.role} ${r.id}`).join(''));
    check(JSON.stringify(ids) === JSON.stringify(want), `pid_202's calls, its resources moved (${JSON.stringify(ids)})`);
    const groups = await page.$$eval('#view-deep .deep-frame', (ds) => ds.map((d) => d.textContent.split(':')[0]));
    check(JSON.stringify(groups) === JSON.stringify(['frame 4 of pid_101', 'frame 9 of pid_101', 'frame 4 of pid_202', 'frame 9 of pid_202']),
      `attachments grouped by frame and process (${groups})`);
    await page.click('#tabs button[data-tab="uitree"]');
    await page.waitForTimeout(100);
    const snaps = await page.$$eval('#tree-snap option', (os) => os.map((o) => o.textContent.split(' at ')[0]));
    check(JSON.stringify(snaps) === JSON.stringify(['#1 of pid_101', '#2 of pid_101', '#3 of pid_202', '#4 of pid_202']),
      `the snapshots name their processes (${snaps})`);
    await page.screenshot({ path: path.join(work, 'viewer-deep-merged.png') });
    check(errors.length === 0, `no console or page errors (${errors.join(' | ')})`);
  } finally {
    const code = await view.stop();
    check(code === 0, `strobe view exits 0 (${code})`);
  }
}

async function demoCapture(browser) {
  const out = path.join(work, 'demo');
  run(demo, ['--frames', '16', '--headless', '--out', out]);
  const file = path.join(out, 'demo.strobe');
  const view = await startView(strobe, [file]);
  try {
    const { page, errors } = await openViewer(browser, view.url);
    await page.click('#tabs button[data-tab="deep"]');
    await page.waitForTimeout(100);
    const rows = await page.evaluate(() => __strobe.deepRows());
    check(rows.length > 100 && rows.every((r) => r.status === 'ok'), `every call of frame 12 is complete (${rows.length})`);
    await page.waitForFunction(() => document.querySelector('#view-deep .deep-thumb')?.dataset.loaded === '1', null, { timeout: 10000 });
    const size = await page.$eval('#view-deep .deep-thumb', (c) => [c.width, c.height]);
    check(size[0] === 960 && size[1] === 682, `the thumbnail is the frame's screenshot (${size})`);
    await page.screenshot({ path: path.join(work, 'viewer-deep-demo.png') });
    // The UI-tree tab: the snapshot of frame 12 outlined over its screenshot.
    await page.click('#tabs button[data-tab="uitree"]');
    await page.waitForFunction(() => document.querySelector('#view-uitree .tree-bounds')?.dataset.screenshot === 'drawn', null, { timeout: 10000 });
    await page.hover('#view-uitree .unode[data-node="3"]');
    await page.waitForTimeout(100);
    const px = await page.evaluate(() => {
      const c = document.querySelector('#view-uitree .tree-bounds');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let orange = 0, light = 0;
      for (let k = 0; k < d.length; k += 4) {
        orange += d[k] > 200 && d[k + 1] > 100 && d[k + 1] < 160 && d[k + 2] < 100;
        light += d[k] > 230 && d[k + 1] > 230 && d[k + 2] > 230; // the grid's light background, from the screenshot
      }
      return { orange, light };
    });
    check(px.orange > 20 && px.light > 1000, `the hovered node outlined over the screenshot (${JSON.stringify(px)})`);
    await page.screenshot({ path: path.join(work, 'viewer-uitree-screenshot.png') });
    check(errors.length === 0, `no console or page errors (${errors.join(' | ')})`);
  } finally {
    const code = await view.stop();
    check(code === 0, `strobe view exits 0 (${code})`);
  }
}

async function main() {
  fs.mkdirSync(work, { recursive: true });
  const browser = await launch(chromiumPath);
  try {
    await synthetic(browser);
    await merged(browser);
    await demoCapture(browser);
  } finally {
    await browser.close();
  }
}

finish(main);
