// viewer_frames.test.mjs — the viewer shows the library's frame model
// (docs/frames.md), in Debian's Chromium through playwright-core, on the
// captures tests/cli/frame_states records:
//   - tree.strobe: pass 12 stays open (taken off its thread to be handed
//     off) while passes 13–15 lay out the same elements. Its span tree holds
//     the spans it owns (`strobe info --frames --json` counts them), not the
//     next passes' that ran inside its interval; the Diff tab's "n after"
//     equals the tree's counts; the frame list, the detail panel and the
//     Diff tab name the same threads for it;
//   - states.strobe: every state a frame can be in; a pass handed between
//     collectors is one entry, and the frame list marks each pass that is
//     not plainly completed with the model's state (superseded, dropped,
//     handed off, presented), as `strobe info --frames --json` gives it;
//   - gtk.strobe: stages opened and closed in different callbacks, row_bind
//     declared inside layout but run inside update and model_update: a
//     pass's stage table nests each stage under the stage it ran inside (the
//     model's run-time parent), with the model's n per (stage, parent); the
//     frame list's rates are the model's, per window (main and w1, never
//     added together);
//   - a merged two-process capture (tests/cli two_processes, `strobe merge`;
//     and the demo's, strobe-demo and its sender process, when the demo is built):
//     each pass one entry (the one handed from screen to sender too), with
//     the model's state, its own spans, its stages per process and, for one
//     that crossed processes, the hand-off as the model joined it (origin and
//     finisher processes, joined or not resumed), all as `strobe info
//     --frames --json` gives them, and frames per state as `strobe report
//     --json` counts them;
// and on a make_capture --gpu capture (CPU threads beside a GPU queue):
//   - the flame graph shows one thread at a time, by default the thread with
//     the most frame time; "all CPU threads" sums only the CPU threads and
//     says so (a GPU queue runs beside them: summed, the total exceeds the
//     capture's time); the deep link keeps the choice over a reload.
//
// usage: node viewer_frames.test.mjs --strobe BIN --frame-states BIN --make-capture BIN --two-processes BIN
//        [--demo BIN] --chromium PATH --work DIR
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { arg, run, check, finish, startView, launch, openViewer } from './strobe_view.mjs';

const strobe = arg('--strobe');
const frameStates = arg('--frame-states');
const makeCapture = arg('--make-capture');
const twoProcesses = arg('--two-processes');
const demo = process.argv.includes('--demo') ? arg('--demo') : null; // strobe-demo, when built
const chromium = arg('--chromium');
const work = arg('--work');

// `strobe info --frames --json`'s frame list, by number.
function infoFrames(cap) {
  const list = JSON.parse(run(strobe, ['info', '--frames', '--json', cap])).frames.list;
  return new Map(list.map((f) => [f.number, f]));
}

async function withView(browser, args, body) {
  const view = await startView(strobe, args);
  try {
    const { page, errors } = await openViewer(browser, view.url);
    await body(page);
    check(errors.length === 0, `no console or page errors (${errors.join('; ')})`);
    await page.close();
  } finally {
    await view.stop();
  }
}

// The frame-list rows as shown: {number: {kind, where}}.
async function listRows(page) {
  const rows = await page.$$eval('table.frames tbody tr[data-frame]', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent.trim())));
  return new Map(rows.map((c) => [Number(c[0]), { kind: c[2], where: c[3] }]));
}

async function ownSpans(browser, dir) {
  const cap = path.join(dir, 'tree.strobe'), info = infoFrames(cap);
  await withView(browser, [cap], async (page) => {
    const row = await page.evaluate(() => __strobe.selectFrame(12));
    check(row >= 0, 'pass 12 is in the model');
    const tree = await page.evaluate((k) => [...__strobe.model().frameTree(k).values()].map((n) => [n.path, n.count]), row);
    const n = tree.reduce((a, [, c]) => a + c, 0);
    check(n === info.get(12).spans && n > 0,
      `pass 12's span tree holds the ${info.get(12).spans} spans it owns, not the next passes' inside its interval (${JSON.stringify(tree)})`);
    for (const k of [13, 14, 15]) {
      const r = await page.evaluate((x) => __strobe.selectFrame(x), k);
      const m = await page.evaluate((x) => [...__strobe.model().frameTree(x).values()].reduce((a, q) => a + q.count, 0), r);
      check(m === info.get(k).spans, `pass ${k}'s tree: its ${info.get(k).spans} own spans (${m})`);
    }
    // The Diff tab: 13 before, 12 after; its "n after" column is pass 12's tree.
    await page.evaluate(() => __strobe.setTab('diff'));
    await page.evaluate(() => __strobe.selectFrame(13));
    await page.click('#view-diff button[data-use="a"]');
    await page.evaluate(() => __strobe.selectFrame(12));
    await page.click('#view-diff button[data-use="b"]');
    const diff = await page.$$eval('#view-diff table.diff tr', (trs) => trs.slice(1).map((tr) => [tr.cells[0].textContent.trim(), tr.cells[6].textContent.trim()]));
    const counts = new Map(tree.map(([p, c]) => [p, c]));
    const bad = diff.filter(([p, c]) => String(counts.get(p) ?? 0) !== c);
    check(diff.length > 0 && bad.length === 0, `the Diff tab's n after is pass 12's own spans, path for path (${JSON.stringify(bad.length ? bad : diff)})`);
    // One label per thread: the list, the detail panel and the Diff tab name the same threads for pass 12.
    const where = (await listRows(page)).get(12).where;
    const head = await page.textContent('#view-diff .toolbar');
    await page.evaluate(() => __strobe.setTab('timeline'));
    const detail = await page.textContent('#detail .detail-head');
    check(where.includes('→') && head.includes(`on ${where};`) && detail.includes(where),
      `pass 12 runs on "${where}" in the frame list, the Diff tab (${head.slice(head.indexOf(' on '), head.indexOf(';'))}) and the detail panel`);
  });
}

async function states(browser, dir) {
  const cap = path.join(dir, 'states.strobe'), info = infoFrames(cap);
  await withView(browser, [cap], async (page) => {
    const entries = await page.evaluate(() => __strobe.entries('pass').map((e) => e.number));
    check(JSON.stringify([...entries].sort()) === JSON.stringify([...info.keys()].filter((k) => info.get(k).state !== 'unfinished').sort()),
      `each pass is one entry, the one handed between collectors too (${entries})`);
    const rows = await listRows(page);
    const bad = [];
    for (const [number, f] of info) {
      if (f.state === 'unfinished') continue;
      const kind = rows.get(number) ? rows.get(number).kind : '';
      const want = f.state === 'completed' ? 'pass' : `pass ${f.state}`;
      if (kind !== want) bad.push(`${number}: "${kind}", the model says ${f.state}`);
    }
    check(rows.size >= 6 && bad.length === 0, `the frame list marks each pass's state as the frame model gives it (${bad.join('; ')})`);
    check([...info.values()].some((f) => f.state === 'superseded') && [...info.values()].some((f) => f.state === 'dropped'),
      'the capture has a superseded and a dropped pass');
    const unfinished = [...info.values()].filter((f) => f.state === 'unfinished').length;
    const note = await page.textContent('.list-note');
    check(unfinished > 0 && note.includes(`${unfinished} unfinished`), `the list's note counts the ${unfinished} unfinished pass it cannot list (${note})`);
  });
}

async function runtimeParents(browser, dir) {
  const cap = path.join(dir, 'gtk.strobe');
  const json = JSON.parse(run(strobe, ['info', '--frames', '--json', cap])).frames;
  const info = new Map(json.list.map((f) => [f.number, f]));
  const pass = json.list.find((f) => f.window === 'main' && f.stages.some((st) => st.name === 'row_bind'));
  await withView(browser, [cap], async (page) => {
    await page.evaluate((n) => __strobe.selectFrame(n), pass.number);
    await page.waitForSelector('#detail table.opstages');
    const rows = await page.$$eval('#detail table.opstages tr', (trs) => trs.slice(1).map((tr) => {
      const t = tr.cells[0].title;
      return `${tr.cells[0].textContent.trim()} in ${t.startsWith('nested in ') ? t.slice(10, t.indexOf(':')) : '-'} n=${tr.querySelector('td.c-n').textContent.trim()}`;
    }));
    const want = pass.stages.map((st) => `${st.name} in ${st.nested_in || '-'} n=${st.count}`);
    check(JSON.stringify([...rows].sort()) === JSON.stringify([...want].sort()) && rows.some((r) => r.startsWith('row_bind in update')),
      `pass ${pass.number}'s stage table nests each stage under the stage it ran inside, n as the model (${rows.join(', ')}; model: ${want.join(', ')})`);
    const note = await page.textContent('.list-note');
    for (const s of json.series) {
      const re = new RegExp(`window ${s.label}: ${s.fps_first_to_last.toFixed(1)} fps first-to-last .* ${s.fps_steady_median_interval.toFixed(1)} fps steady`);
      check(note.split('window ').some((part) => re.test(`window ${part}`)), `the frame list's rate of window ${s.label} is the model's (${note})`);
    }
    const w1 = json.list.find((f) => f.window === 'w1');
    await page.evaluate((n) => __strobe.selectFrame(n, 'pass', null, 'w1'), w1.number);
    const head = await page.textContent('#detail .detail-head');
    check(/window w1/.test(head) && info.get(w1.number).window === 'w1', `a w1 pass is in window w1 in the detail panel as in the rates (${head})`);
  });
}

// The viewer's answers on a merged capture (two_processes', or the demo's) are the frame model's, as strobe info and
// strobe report give them.
async function merged(browser, kind) {
  const dir = path.join(work, kind);
  fs.mkdirSync(dir, { recursive: true });
  const cap = path.join(dir, 'all.strobe');
  if (kind === 'demo') {
    const p = spawnSync(demo, ['--frames', '16', '--headless', '--out', dir], { encoding: 'utf8', maxBuffer: 64 << 20,
      env: { ...process.env, VK_ICD_FILENAMES: '/nonexistent/strobe-no-driver.json' } }); // the CPU path: quick
    if (p.status !== 0) throw new Error(`${demo} exited ${p.status}: ${p.stderr}`);
    run(strobe, ['merge', path.join(dir, 'demo.strobe'), path.join(dir, 'sender.strobe'), '-o', cap]);
  } else {
    run(twoProcesses, [dir]);
    run(strobe, ['merge', path.join(dir, 'a.strobe'), path.join(dir, 'b.strobe'), '-o', cap]);
  }
  const info = JSON.parse(run(strobe, ['info', '--frames', '--json', cap])).frames.list.filter((f) => f.kind === 'pass');
  const report = JSON.parse(run(strobe, ['report', '--json', cap])).frames;
  check(info.some((f) => f.process !== f.end_process), `a pass crossed processes (${JSON.stringify(info)})`);
  await withView(browser, [cap], async (page) => {
    const got = await page.evaluate(() => __strobe.entries('pass').map((e) => {
      const m = __strobe.model(), f = m.frame(e.row);
      return { number: e.number, state: f.state, spans: [...m.frameTree(e.row).values()].reduce((a, n) => a + n.count, 0),
        stages: e.stages.map((st) => `${st.name}@${st.process ?? ''} n=${st.count}`).sort(),
        handoff: e.handoff && { state: e.handoff.state, origin: e.handoff.origin, finisher: e.handoff.finisher } };
    }));
    const want = info.filter((f) => f.state !== 'unfinished').map((f) => {
      const crossed = f.state === 'presented' || f.state === 'superseded' || f.state === 'abandoned' || f.state === 'handed off';
      return { number: f.number, state: f.state, spans: f.spans,
        stages: f.stages.map((st) => `${st.name}@${f.process !== f.end_process ? st.process : ''} n=${st.count}`).sort(),
        handoff: crossed ? { state: f.process !== f.end_process ? 'joined' : 'not_resumed', origin: f.process,
          finisher: f.process !== f.end_process ? f.end_process : 'sender' } : null };
    });
    const key = (x) => JSON.stringify([...x].sort((a, b) => a.number - b.number));
    check(key(got) === key(want), `the viewer's passes are the model's: state, own spans, stages per process, hand-off (viewer ${key(got)}; strobe info ${key(want)})`);
    const byState = {};
    for (const g of got) byState[g.state.toUpperCase().replace(' ', '_')] = (byState[g.state.toUpperCase().replace(' ', '_')] || 0) + 1;
    const rs = Object.fromEntries(Object.entries(report.by_state).filter(([, v]) => v));
    check(JSON.stringify(Object.entries(byState).sort()) === JSON.stringify(Object.entries(rs).sort()),
      `frames per state: the viewer ${JSON.stringify(byState)}, strobe report ${JSON.stringify(rs)}`);
  });
}

async function flameThreads(browser) {
  const cap = path.join(work, 'gpu.strobe');
  run(makeCapture, [cap, '--gpu']);
  await withView(browser, [cap], async (page) => {
    await page.evaluate(() => __strobe.setTab('flamegraph'));
    await page.waitForFunction(() => __strobe.flameGraph().main.length > 0);
    const want = await page.evaluate(() => {
      const m = __strobe.model(), frameTime = new Map();
      for (const th of m.threads) {
        if (!th || !m.isCpu(th.index) || !th.rows.length) continue;
        let t = 0;
        for (let i = th.rows[0].first; i < th.rows[0].first + th.rows[0].count; i++) t += m.dur[i];
        frameTime.set(th.index, t);
      }
      const busiest = [...frameTime.entries()].sort((a, b) => b[1] - a[1])[0];
      const lanes = m.threads.filter((th) => th && th.depths.length && !m.isCpu(th.index)).length;
      return { busiest: String(busiest[0]), name: m.threadName(busiest[0]), cpu: [...frameTime.values()].reduce((a, b) => a + b, 0), lanes };
    });
    check(want.lanes > 0, `the capture has a GPU queue lane beside its threads (${want.lanes})`);
    const picked = await page.inputValue('#fg-thread');
    let root = (await page.evaluate(() => __strobe.flameGraph())).main.find((r) => r.y === 0);
    check(picked === want.busiest && root.name.startsWith(want.name),
      `the flame graph shows one thread by default, the one with the most frame time: ${want.name} (picked ${picked}, root "${root.name}")`);
    await page.selectOption('#fg-thread', 'all');
    root = (await page.evaluate(() => __strobe.flameGraph())).main.find((r) => r.y === 0);
    check(Math.abs(root.total - want.cpu) <= 1e-6 * want.cpu && /CPU threads/.test(root.name) && /not summed/.test(root.name),
      `"all CPU threads" sums the CPU threads only (${root.total} ns, theirs ${want.cpu}) and says so ("${root.name}")`);
    await page.screenshot({ path: path.join(work, 'flame-threads.png') });
    // The link keeps the lane: a reload shows all CPU threads again, not the default thread.
    await page.waitForFunction(() => /fgt=all/.test(location.hash));
    await page.reload();
    await page.waitForFunction(() => __strobe.ready && __strobe.state().tab === 'flamegraph' && __strobe.flameGraph().main.length > 0, null, { timeout: 30000 });
    const again = (await page.evaluate(() => __strobe.flameGraph())).main.find((r) => r.y === 0);
    check(await page.inputValue('#fg-thread') === 'all' && again.total === root.total, `a reload keeps "all CPU threads" (${again.name})`);
  });
}

await finish(async () => {
  fs.mkdirSync(work, { recursive: true });
  const dir = path.join(work, 'fs');
  fs.mkdirSync(dir, { recursive: true });
  run(frameStates, [dir]);
  const browser = await launch(chromium);
  try {
    await ownSpans(browser, dir);
    await states(browser, dir);
    await runtimeParents(browser, dir);
    await merged(browser, 'tp');
    if (demo) await merged(browser, 'demo');
    else console.log('strobe-demo is not built: the demo\'s merged capture is not checked here');
    await flameThreads(browser);
  } finally {
    await browser.close();
  }
});
