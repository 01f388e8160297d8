// viewer_merge.test.mjs — the viewer opening several captures at once
// (`strobe view --merge`, docs/viewer.md §Across processes), in Debian's
// Chromium through playwright-core, on real processes of this machine:
//   - two processes (tests/cli/two_processes: "screen" begins frame 7, runs
//     the stage render and hands the frame over a pipe to "sender", which
//     resumes it, runs present and commits it; then screen hands off frame 8,
//     which nobody resumes). Each wrote the CLOCK_MONOTONIC times just before
//     and after the calls that timed the operation. Merged and opened:
//       * frame 7 is one entry of the frames list (not one per half), from
//         the origin's begin to the finisher's end: its start, end, hand-off
//         and resume lie inside what the processes measured, so its total
//         includes the hand-off gap; render is attributed to screen, present
//         to sender, each once; frame 8 stays a handed-off entry, counted;
//       * selecting frame 7 outlines its origin part on screen's lane and its
//         finisher part on sender's lane, and hatches the gap across both
//         (the bands the overlay drew, and its pixels there); the frames
//         list's row names both threads; the stage table has a process
//         column; the selection survives a reload through the deep link;
//       * the header's merge line: the widest bound of the inputs, and per
//         input (tooltip) its process, pid, alignment and bound;
//       * `strobe view A B C` (three files) merges them;
//   - two hosts: tests/cli/clock_hosts runs "peer" under STROBE_TEST_FAKE_HOST
//     (another boot id, its clock SHIFT ahead); the host's server keeps a
//     clock-offset sample of it (`strobe clock-offset --via`); merged and
//     opened, the peer's marker lies where it ran (its real CLOCK_MONOTONIC)
//     within the sample's bound, and the header says that bound and the
//     peer's shift.
// Screenshots go to --work. Any console error or page error fails the test.
//
// usage: node viewer_merge.test.mjs --strobe BIN --make-capture BIN --two-processes BIN
//        --clock-hosts BIN --chromium PATH --work DIR
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { arg, check, finish, launch, openViewer, run, startView } from './strobe_view.mjs';

const strobe = arg('--strobe');
const makeCapture = arg('--make-capture');
const twoProcesses = arg('--two-processes');
const clockHosts = arg('--clock-hosts');
const chromiumPath = arg('--chromium', '/usr/bin/chromium');
const work = arg('--work');

const CALIBRATION_NS = 20e3; // ticks to CLOCK_MONOTONIC: the writer's calibration, well under this

// "LO HI" as written by two_processes: the time a call took lies between.
const bracket = (dir, name) => fs.readFileSync(path.join(dir, name), 'utf8').trim().split(/\s+/).map(Number);
const inside = (t, [lo, hi]) => t >= lo - CALIBRATION_NS && t <= hi + CALIBRATION_NS;

// A duration as the viewer prints it ("26.1 µs", "0 ns", "−34.3 h"... ) back to ns; null if none.
const UNIT = { ns: 1, 'µs': 1e3, us: 1e3, ms: 1e6, s: 1e9, min: 60e9, h: 3600e9 };
function parseDur(text) {
  const m = /([−-]?)([\d.,]+)\s*(ns|µs|us|ms|s|min|h)\b/.exec(text);
  if (!m) return null;
  return (m[1] ? -1 : 1) * Number(m[2].replace(/,/g, '')) * UNIT[m[3]];
}
// Equal to three significant digits (how the viewer prints durations).
const sig3 = (a, b) => Math.abs(a - b) <= Math.max(Math.abs(b) * 0.006, 1);

async function meta(view) {
  const r = await fetch(`http://127.0.0.1:${view.port}/api/capture/meta`, { headers: { Authorization: `Bearer ${view.token}` } });
  return r.json();
}

// The CLOCK_MONOTONIC ns of a model time (ns since the merged capture's start), on the merged clock.
const monoOf = (m) => (t) => m.header.epoch_mono_ns + m.start_ns + t;

async function twoProcessesCase(browser) {
  const dir = path.join(work, 'two');
  fs.mkdirSync(dir, { recursive: true });
  run(twoProcesses, [dir]);
  const a = path.join(dir, 'a.strobe'), b = path.join(dir, 'b.strobe');
  const pid = (f) => JSON.parse(run(strobe, ['info', '--json', f])).header.pid;
  const [pidA, pidB] = [pid(a), pid(b)];
  const begin = bracket(dir, 'a.begin'), handed = bracket(dir, 'a.handed'), handed8 = bracket(dir, 'a.handed8');
  const resumed = bracket(dir, 'b.resumed'), end = bracket(dir, 'b.end');
  const markA = Number(fs.readFileSync(path.join(dir, 'a.mono'), 'utf8'));

  const view = await startView(strobe, ['--merge', a, b]);
  try {
    const M = await meta(view), mono = monoOf(M);
    const { page, errors } = await openViewer(browser, view.url);
    // The conversion above, checked on a marker: marker_a began where screen measured it.
    const mk = await page.evaluate(() => { const i = __strobe.findSpan('marker_a', 0); return i >= 0 ? __strobe.spanInfo(i) : null; });
    check(mk && Math.abs(mono(mk.start) - markA) < 200e3, `marker_a at ${mk && mono(mk.start)} ns, screen measured ${markA}`);

    const entries = await page.evaluate(() => __strobe.entries('pass'));
    const seven = entries.filter((e) => e.number === 7), eight = entries.filter((e) => e.number === 8);
    check(seven.length === 1, `frame 7 is one entry of the list, not one per process: ${seven.length}`);
    check(eight.length === 1, `frame 8 (never resumed) is an entry: ${eight.length}`);
    const f = seven[0] || {}, h = f.handoff || {};
    check(h.state === 'joined' && h.origin === 'screen' && h.finisher === 'sender', `frame 7 joined from screen to sender: ${JSON.stringify(h)}`);
    check(inside(mono(f.start), begin), `frame 7 starts at the origin's begin: ${mono(f.start)} in [${begin}]`);
    check(inside(mono(f.start + f.dur), end), `frame 7 ends at the finisher's end: ${mono(f.start + f.dur)} in [${end}]`);
    check(f.dur >= end[0] - begin[1] - 2 * CALIBRATION_NS && f.dur <= end[1] - begin[0] + 2 * CALIBRATION_NS,
      `frame 7's total ${f.dur} ns runs from the origin's begin to the finisher's end, the hand-off gap included: [${end[0] - begin[1]}, ${end[1] - begin[0]}]`);
    check(inside(mono(h.handed), handed) && inside(mono(h.resumed), resumed),
      `hand-off ${mono(h.handed)} in [${handed}], resume ${mono(h.resumed)} in [${resumed}]`);
    check(h.gap > 0 && Math.abs(h.gap - (h.resumed - h.handed)) < 1, `the gap is the resume less the hand-off: ${h.gap}`);
    check(f.committed && f.thread === 'sender/main' && h.originThread === 'screen/main',
      `ended committed on sender/main, begun on screen/main: ${f.thread}, ${h.originThread}`);
    const st = (name) => (f.stages || []).filter((s) => s.name === name);
    check(st('render').length === 1 && st('render')[0].process === 'screen' && st('render')[0].total >= 3e6,
      `render once, in screen, ≥ 3 ms: ${JSON.stringify(st('render'))}`);
    check(st('present').length === 1 && st('present')[0].process === 'sender' && st('present')[0].total >= 4e6,
      `present once, in sender, ≥ 4 ms: ${JSON.stringify(st('present'))}`);
    const e8 = eight[0] || {}, h8 = e8.handoff || {};
    check(h8.state === 'not_resumed' && h8.origin === 'screen' && h8.finisher === 'sender' && h8.resumed === null &&
      inside(mono(h8.handed), handed8) && e8.thread === 'screen/main',
      `frame 8: handed by screen to sender, not resumed: ${JSON.stringify(e8)}`);
    check(M.cross_process && M.cross_process.joined === 1 && M.cross_process.not_resumed === 1 &&
      M.cross_process.resumed_without_origin === 0, `counted: ${JSON.stringify(M.cross_process)}`);

    // Selected: its parts on both processes' lanes, the gap across them.
    const row = await page.evaluate(() => __strobe.selectFrame(7, 'pass'));
    check(row === f.row, `frame 7 selected (row ${row})`);
    await page.evaluate(() => { const r = __strobe.frameBounds(7, 'pass'), w = r.end - r.start; __strobe.setRange(r.start - w * 0.1, r.end + w * 0.1); });
    const lanes = await page.evaluate(() => __strobe.lanes());
    const bands = await page.evaluate(() => __strobe.frameBands());
    const lane = (n) => lanes.find((l) => l.name === n);
    const band = (p) => bands.find((x) => x.part === p);
    const o = band('origin'), fin = band('finisher'), gap = band('gap');
    // (the origin's part ends where it was taken off its thread, just before the hand-off: both inside the bracket)
    check(o && o.thread === 'screen/main' && Math.abs(o.t0 - f.start) < 1e3 && o.t1 <= h.handed && inside(mono(o.t1), handed) && lane('screen/main') &&
      o.y0 === lane('screen/main').y0 && o.y1 === lane('screen/main').y1, `origin part outlined on screen's lane: ${JSON.stringify(o)}`);
    check(fin && fin.thread === 'sender/main' && fin.t0 === h.resumed && fin.t1 === f.start + f.dur && lane('sender/main') &&
      fin.y0 === lane('sender/main').y0 && fin.y1 === lane('sender/main').y1, `finisher part outlined on sender's lane: ${JSON.stringify(fin)}`);
    check(gap && gap.t0 === h.handed && gap.t1 === h.resumed && o && fin &&
      gap.y0 <= Math.min(o.y0, fin.y0) && gap.y1 >= Math.max(o.y1, fin.y1), `the gap across both lanes: ${JSON.stringify(gap)}`);
    if (gap && o && fin) { // drawn: the gap's middle is tinted on both lanes, an instant before the frame is not
      const px = await page.evaluate(([x, ys]) => {
        const c = document.querySelector('.flame-overlay'), d = window.devicePixelRatio || 1;
        return ys.map((y) => Array.from(c.getContext('2d').getImageData(Math.round(x * d), Math.round(y * d), 1, 1).data));
      }, [(gap.x0 + gap.x1) / 2, [(o.y0 + o.y1) / 2 + 9, (fin.y0 + fin.y1) / 2 + 9]]);
      check(px.every((p) => p[3] > 0), `the gap drawn on both lanes at its middle: ${JSON.stringify(px)}`);
    }
    // The list names both threads; the detail's stage table says where each stage ran.
    const listed = await page.evaluate((r) => { const tr = document.querySelector(`#list tr[data-frame="${r}"] .c-thread`); return tr ? tr.textContent : null; }, f.row);
    check(listed && listed.includes('screen/main') && listed.includes('sender/main'), `the list's row names both threads: ${listed}`);
    const stageRows = await page.evaluate(() => [...document.querySelectorAll('table.stages.opstages tr')].slice(1)
      .map((tr) => [...tr.children].slice(0, 2).map((td) => td.textContent.trim())));
    check(JSON.stringify(stageRows.map((r) => r.join('@')).sort()) === JSON.stringify(['present@sender', 'render@screen']),
      `the stage table's process column: ${JSON.stringify(stageRows)}`);
    await page.screenshot({ path: path.join(work, 'merge-frame7.png') });
    // The Statistics of the frame: each process's spans inside its part (frame 8's render, on screen
    // after the hand-off, is not frame 7's).
    await page.evaluate(() => __strobe.statsShow('frame'));
    await page.waitForSelector('#view-stats tr[data-site]');
    const statRows = await page.$$eval('#view-stats tr[data-site]', (trs) => trs.map((tr) => [...tr.cells].slice(0, 2).map((td) => td.textContent.trim()).join(' ×')));
    check(JSON.stringify(statRows.sort()) === JSON.stringify(['marker_a ×1', 'marker_b ×1', 'present ×1', 'render ×1']),
      `the frame's statistics hold both processes' spans of its parts: ${JSON.stringify(statRows)}`);
    await page.evaluate(() => __strobe.setTab('timeline'));

    // The header: the widest bound, and per input its process, pid, alignment and bound.
    const head = await page.evaluate(() => { const s = document.querySelector('#identity .merged'); return s ? { text: s.textContent, title: s.title } : null; });
    check(head && parseDur(head.text.split('within')[1] || '') === M.merge.error_ns && M.merge.error_ns === 0,
      `the header's bound is the merge's (same boot: exact): ${head && head.text}`);
    const lines = head ? head.title.split('\n') : [];
    for (const [proc, p] of [['screen', pidA], ['sender', pidB]]) {
      const line = lines.find((l) => l.startsWith(`${proc} pid ${p}:`));
      const input = M.merge.inputs.find((i) => i.pid === p);
      check(line && input && line.includes(input.alignment) && parseDur(line.split('within')[1] || '') === input.error_ns,
        `the tooltip's line for ${proc} (pid ${p}): ${line}`);
    }

    // The deep link keeps the selected cross-process frame over a reload.
    await page.waitForFunction((r) => __strobe.link().includes(`frame=${r}`), f.row, { timeout: 5000 });
    await page.reload();
    await page.waitForFunction(() => window.__strobe && window.__strobe.ready, null, { timeout: 60000 });
    const again = await page.evaluate(() => ({ frame: __strobe.state().frame, bands: __strobe.frameBands().map((b) => b.part).sort() }));
    check(again.frame === f.row && JSON.stringify(again.bands) === JSON.stringify(['finisher', 'gap', 'origin']),
      `after a reload: ${JSON.stringify(again)}`);
    check(errors.length === 0, `no console or page errors: ${errors.join('; ')}`);
    await page.close();
  } finally {
    await view.stop();
  }

  // Three files: merged at once (the third written by a tool, vouched for with --same-host).
  const c = path.join(dir, 'c.strobe');
  run(makeCapture, [c, '--frames', '5']);
  const three = await startView(strobe, ['--same-host', a, b, c]);
  try {
    const M3 = await meta(three);
    check(M3.merge && M3.merge.inputs.length === 3, `strobe view A B C: merged ${M3.merge && M3.merge.inputs.length} captures`);
  } finally {
    await three.stop();
  }
}

// Two hosts: the peer's capture placed through the clock-offset sample the host kept.
async function twoHostsCase(browser) {
  const dir = path.join(work, 'hosts');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const shift = 123456789012345; // the peer's clock, 34 h ahead of this one
  const p = spawn(clockHosts, [dir, String(shift)], { stdio: ['pipe', 'inherit', 'inherit'] });
  let kept;
  try {
    const deadline = Date.now() + 60000;
    while (!['host', 'peer'].every((n) => fs.existsSync(path.join(dir, `${n}.port`)))) {
      if (Date.now() > deadline || p.exitCode !== null) throw new Error('clock_hosts did not start its servers');
      await new Promise((r) => setTimeout(r, 50));
    }
    const port = (n) => Number(fs.readFileSync(path.join(dir, `${n}.port`), 'utf8'));
    fs.writeFileSync(path.join(dir, 'peer.token'), 'peer-token-0123456789abcdef\n');
    fs.writeFileSync(path.join(dir, 'host.token'), 'host-token-0123456789abcdef\n');
    kept = JSON.parse(run(strobe, ['clock-offset', `http://127.0.0.1:${port('peer')}`, '--token-file', path.join(dir, 'peer.token'),
      '--via', `http://127.0.0.1:${port('host')}`, '--via-token-file', path.join(dir, 'host.token'), '--peer', 'peer_host', '--json']));
    p.stdin.end('go\n');
    const code = await new Promise((r) => (p.exitCode !== null ? r(p.exitCode) : p.on('exit', r)));
    check(code === 0, `clock_hosts exited ${code}`);
  } finally {
    if (p.exitCode === null) { p.stdin.destroy(); p.kill('SIGKILL'); }
  }
  const a = path.join(dir, 'a.strobe'), b = path.join(dir, 'b.strobe');
  const mono = (n) => Number(fs.readFileSync(path.join(dir, `${n}.mono`), 'utf8'));
  const view = await startView(strobe, ['--merge', a, b]);
  try {
    const M = await meta(view);
    const { page, errors } = await openViewer(browser, view.url);
    const at = await page.evaluate(() => ['marker_a', 'marker_b'].map((n) => { const i = __strobe.findSpan(n, 0); return i >= 0 ? __strobe.spanInfo(i) : null; }));
    check(at[0] && at[1], `both markers on the merged timeline: ${JSON.stringify(at)}`);
    if (at[0] && at[1]) {
      // The distance between the markers is the one their processes measured on the real clock, within the bound.
      const got = at[1].start - at[0].start, want = mono('b') - mono('a');
      check(Math.abs(got - want) <= kept.error_ns + 200e3,
        `the peer's marker ${got} ns after the host's on the merged timeline, ${want} ns measured (bound ${kept.error_ns} ns)`);
    }
    check(M.merge && M.merge.error_ns === kept.error_ns, `the merge's bound is the sample's: ${M.merge && M.merge.error_ns} vs ${kept.error_ns}`);
    const head = await page.evaluate(() => { const s = document.querySelector('#identity .merged'); return s ? { text: s.textContent, title: s.title } : null; });
    check(head && sig3(parseDur(head.text.split('within')[1] || ''), kept.error_ns), `the header says the sample's bound: ${head && head.text} (${kept.error_ns} ns)`);
    const peer = M.merge ? M.merge.inputs.find((i) => i.alignment === 'clock offset') : null;
    const line = head && peer ? head.title.split('\n').find((l) => l.startsWith(`${peer.process} pid ${peer.pid}:`)) : null;
    check(line && sig3(parseDur(line.split('shifted')[1] || ''), -kept.offset_ns) && sig3(parseDur(line.split('within')[1] || ''), kept.error_ns),
      `the peer's tooltip line: shifted by minus the offset ${kept.offset_ns}, within the bound: ${line}`);
    await page.screenshot({ path: path.join(work, 'merge-hosts.png') });
    check(errors.length === 0, `no console or page errors: ${errors.join('; ')}`);
    await page.close();
  } finally {
    await view.stop();
  }
}

async function main() {
  fs.mkdirSync(work, { recursive: true });
  const browser = await launch(chromiumPath);
  try {
    await twoProcessesCase(browser);
    await twoHostsCase(browser);
  } finally {
    await browser.close();
  }
}

finish(main);
