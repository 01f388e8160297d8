// viewer_live.test.mjs — the web viewer served live by a running instrumented
// application (strobe-demo --serve: libstrobe_server at `/`), in Debian's
// Chromium through playwright-core:
//   - before recording, the viewer says so and offers Record; the Sessions tab
//     lists the collector's sessions (the demo's own in-process one);
//   - a session started from the viewer appears as the viewer's, its live
//     report renders (status, samples with their n, a frame rate per
//     window), Reset discards what it kept (the report says reset 1×; the
//     in-process sessions keep their resets), the report shows the demo's idle passes, its population split
//     and its unavailable stage, every column header lines up with its
//     values, and End gives the final;
//   - Record starts the server's flight recorder, Refresh loads a snapshot
//     (frames and spans of the running demo in the flame chart; the frames
//     are its pass operations, with both frame rates), Stop keeps the last
//     one;
//   - a refresh moves the timeline on: the selected span and range are kept
//     (same name, thread and absolute start), a view at the newest data
//     follows it (new data in at the right), a view elsewhere keeps its
//     instants;
//   - a refresh appends: the second fetch of the spans carries only the spans
//     that ended after what the shown snapshot held (and each lane row's
//     first), the merged spans equal the whole table the server holds, and
//     the spans newer than the previous snapshot are there and drawn.
// Screenshots go to --work. Any console error or page error fails the test.
//
// usage: node viewer_live.test.mjs --demo BIN --chromium PATH --work DIR
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { arg, check, finish, launch, openViewer, stopProc } from './strobe_view.mjs';

const demo = arg('--demo');
const chromiumPath = arg('--chromium', '/usr/bin/chromium');
const work = arg('--work');

function startDemo() {
  return new Promise((resolve, reject) => {
    const p = spawn(demo, ['--serve', '--port', '0', '--out', path.join(work, 'demo')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    const timer = setTimeout(() => { p.kill('SIGKILL'); reject(new Error(`no viewer URL: ${out} ${err}`)); }, 30000);
    p.stdout.on('data', (d) => {
      out += d;
      const m = /viewer:\s+(http:\/\/127\.0\.0\.1:\d+\/#token=\S+)/.exec(out);
      if (m) { clearTimeout(timer); resolve({ url: m[1], proc: p }); }
    });
    p.stderr.on('data', (d) => { err += d; });
    p.on('exit', (code) => { clearTimeout(timer); reject(new Error(`strobe-demo exited ${code}: ${err}`)); });
  });
}

// The columns of the report's tables whose header does not line up with its
// values (issue 18, defect 7): per table, per named column, the header's text
// and the first row's text must share their left edge or their right edge
// (2 px), as a reader scanning down the column expects.
function misaligned(page, sel) {
  return page.$$eval(sel, (tables) => {
    const extent = (el) => {
      const r = document.createRange();
      r.selectNodeContents(el);
      const b = r.getBoundingClientRect();
      return b.width ? b : null;
    };
    const out = [];
    for (const t of tables) {
      const rows = [...t.querySelectorAll('tr')];
      const head = rows.find((r) => r.querySelector('th'));
      const body = rows.find((r) => r.querySelector('td') && r.children.length === head?.children.length);
      if (!head || !body) continue;
      [...head.children].forEach((th, c) => {
        const a = extent(th), b = extent(body.children[c]);
        if (!a || !b) return;
        if (Math.abs(a.left - b.left) > 2 && Math.abs(a.right - b.right) > 2) out.push(`${th.textContent} (${t.className})`);
      });
    }
    return out;
  });
}

const until = async (page, fn, arg, what, timeout = 30000) => {
  try {
    await page.waitForFunction(fn, arg, { timeout, polling: 100 });
    return true;
  } catch {
    check(false, `timed out waiting for ${what}`);
    return false;
  }
};

async function main() {
  fs.mkdirSync(work, { recursive: true });
  const app = await startDemo();
  const browser = await launch(chromiumPath);
  try {
    const { page, errors } = await openViewer(browser, app.url);
    check(/Not recording/.test(await page.textContent('#message')), 'before Record, the viewer says it is not recording');
    check(await page.isVisible('#rec'), 'the header offers Record');
    check(await page.isVisible('#tab-sessions'), 'the Sessions tab is shown when live');

    // >>sessions
    await page.click('#tab-sessions');
    await until(page, () => document.querySelector('table.sessions'), null, 'the sessions table');
    const owners = await page.$$eval('table.sessions tr td:nth-child(2)', (tds) => tds.map((t) => t.textContent));
    check(owners.includes('in-process'), `the demo's own session is listed (${owners})`);
    await page.click('button[data-act="start"]');
    await until(page, () => [...document.querySelectorAll('table.sessions td:nth-child(2)')].some((t) => t.textContent === 'viewer'),
      null, 'the viewer-owned session');
    await until(page, () => /Report profile_\d+ \(live read\)/.test(document.querySelector('.report h3')?.textContent || ''), null, 'a live report');
    await until(page, () => /completed [1-9]/.test(document.querySelector('.report')?.textContent || '') &&
      /By kind/.test(document.querySelector('.report')?.textContent || ''), null, 'completed operations and per-kind percentiles in the report');
    // Frame rates per window, never one summed rate (docs/sessions.md §Frame rate): the demo renders main and w1.
    await until(page, () => /frame rate: .*(main|w1): [0-9.]+ passes\/s.* · (main|w1): [0-9.]+ passes\/s/
      .test(document.querySelector('.report')?.textContent || ''), null, 'a frame rate for each window in the report');
    const head = await page.$$eval('.report table:first-of-type th', (ths) => ths.map((t) => t.textContent));
    check(head.includes('n') && head.includes('p95'), `per-kind percentiles carry their n (${head})`);
    await page.screenshot({ path: path.join(work, 'live-sessions.png') });
    const id = await page.$$eval('table.sessions tr', (trs) => {
      const tr = trs.find((r) => r.children[1] && r.children[1].textContent === 'viewer');
      return tr ? tr.children[0].textContent : null;
    });

    // >>reset: the viewer's Reset discards what its own session kept, never another's.
    const resetsOf = () => page.$$eval('table.sessions tr', (trs) => Object.fromEntries(trs.filter((r) => r.children.length > 8 && r.children[0].tagName === 'TD')
      .map((r) => [r.children[0].textContent, { owner: r.children[1].textContent, resets: Number(r.children[7].textContent) }])));
    const resetsBefore = await resetsOf();
    check(!!resetsBefore[id] && resetsBefore[id].resets === 0, `the viewer's session starts with no reset (${JSON.stringify(resetsBefore[id])})`);
    check(!(await page.isVisible('button[data-act="reset"]:not([data-id="' + id + '"])')), 'Reset is offered on the viewer\'s own session only');
    await page.click(`button[data-act="reset"][data-id="${id}"]`);
    await until(page, () => /reset 1×/.test(document.querySelector('.report .resets')?.textContent || ''), null, 'the report of the reset session');
    await until(page, (sid) => [...document.querySelectorAll('table.sessions tr')].some((r) => r.children[0]?.textContent === sid && r.children[7]?.textContent === '1'),
      id, 'the sessions table counting the reset');
    const after = await resetsOf();
    for (const [sid, v] of Object.entries(resetsBefore)) {
      if (sid !== id) check(after[sid] && after[sid].resets === v.resets, `${sid} (${v.owner}) is untouched by the viewer's reset`);
    }
    // The demo's passes after the reset: its idle passes apart, a population split, GPU timestamps unavailable.
    // The live report refreshes as passes complete: wait until the first pass with no transition ("none")
    // after the reset has completed, rather than reading the first table that appears.
    await until(page, () => /idle [1-9]/.test(document.querySelector('.report .idle')?.textContent || '') &&
      [...document.querySelectorAll('.report table.populations tr td:nth-child(2)')].some((td) => td.textContent === 'none') &&
      document.querySelector('.report table.coverage'),
      null, 'idle passes, a "none" population and coverage in the report');
    const cov = await page.textContent('.report table.coverage');
    check(/gpu_timestamps/.test(cov), `the unavailable stage is listed apart (${cov})`);
    const pops = await page.$$eval('.report table.populations tr td:nth-child(2)', (tds) => tds.map((t) => t.textContent));
    check(pops.includes('none'), `per-transition percentiles (${pops})`);
    const off = await misaligned(page, '.report table, table.sessions');
    const tables = await page.$$eval('.report table', (ts) => ts.length);
    check(tables >= 4 && off.length === 0, `every column header of the report's ${tables} tables lines up with its values (off: ${off.join(', ')})`);
    await page.screenshot({ path: path.join(work, 'live-session-reset.png') });
    await page.click(`button[data-act="end"][data-id="${id}"]`);
    await until(page, () => /\(final\)/.test(document.querySelector('.report h3')?.textContent || ''), null, 'the final report');

    // >>record, refresh, stop
    await page.click('#tabs button[data-tab="timeline"]');
    await page.click('#rec');
    await until(page, () => document.querySelector('#rec')?.classList.contains('recording'), null, 'the recording state');
    // The demo's frames are its pass operations (it has no frame marks); on a
    // loaded machine a frame can take far longer than 16 ms, so snapshots are
    // taken until more than 10 are in (at most 20 s).
    let live = { frames: 0 };
    for (let k = 1; k <= 20 && live.frames <= 10; k++) {
      await page.waitForTimeout(1000);
      await page.click('#refresh');
      await until(page, (g) => window.__strobe.generation() >= g, k, 'a live snapshot');
      live = await page.evaluate(() => ({ frames: __strobe.frameCount(), text: document.querySelector('#identity').textContent,
        note: document.querySelector('.list-note')?.textContent || '' }));
    }
    check(live.frames > 10, `the snapshot holds the demo's frames (${live.frames})`);
    // The demo has frames (pass operations): a frame strip with its budget, never the activity strip.
    const strip = await page.evaluate(() => __strobe.strip());
    check(strip.mode === 'frames' && strip.budgetShown && strip.lanes.length === 0,
      `the demo's strip is a frame strip with a budget (${JSON.stringify(strip)})`);
    check(/passes are the frames/.test(live.note) && /fps first-to-last/.test(live.note) && /fps steady/.test(live.note),
      `the live frames are the demo's pass operations, with both frame rates (${live.note})`);
    check(/live · pid/.test(live.text) && /[1-9][0-9,]* spans/.test(live.text), `the header shows the live application (${live.text})`);
    await page.click('#list tbody tr:first-child');
    await page.waitForTimeout(200);
    const bars = await page.evaluate(() => __strobe.glStats());
    check(bars.instances > 0 && bars.drawCalls >= 1, `the flame chart draws the snapshot (${JSON.stringify(bars)})`);
    await page.screenshot({ path: path.join(work, 'live-timeline.png') });
    // >>streaming: a refresh moves the timeline on and keeps what is shown (absolute times: live.js).
    const look = () => page.evaluate(() => {
      const abs = __strobe.startNs(), i = __strobe.selected(), v = __strobe.view(), r = __strobe.range(), st = __strobe.state();
      const s = i >= 0 ? __strobe.spanInfo(i) : null;
      return { abs, v, lo: r.lo, hi: r.hi, range: st.range, gen: __strobe.generation(),
        span: s ? { name: s.name, thread: s.thread, depth: s.depth, start: s.start + abs } : null };
    });
    const pick = () => page.evaluate(() => {   // the newest span of the first one's name, at the newest data
      const name = __strobe.spanInfo(0).name, all = __strobe.spansNamed(name);
      let i = all[0];
      for (const k of all) if (__strobe.spanInfo(k).start > __strobe.spanInfo(i).start) i = k;
      const r = __strobe.range(), w = (r.hi - r.lo) / 4;
      __strobe.setRange(r.hi - w, r.hi);
      __strobe.selectRange(r.hi - w * 0.8, r.hi - w * 0.6);
      __strobe.select(i);
      return i;
    });
    await pick();
    const a = await look();
    await page.click('#refresh');
    await until(page, (g) => window.__strobe.generation() > g, a.gen, 'the next live snapshot');
    const b = await look();
    const near = (x, y, tol) => Math.abs(x - y) <= tol;
    check(b.span && a.span && b.span.name === a.span.name && b.span.thread === a.span.thread && near(b.span.start, a.span.start, 2),
      `a refresh keeps the selected span (${JSON.stringify(a.span)} → ${JSON.stringify(b.span)})`);
    check(b.hi + b.abs > a.hi + a.abs && near(b.v.t1, b.hi, 0.01 * (b.v.t1 - b.v.t0)) && near(b.v.t1 - b.v.t0, a.v.t1 - a.v.t0, 1),
      `the view at the newest data follows it: new data comes in at the right (newest ${a.hi + a.abs} → ${b.hi + b.abs} ns, view ends ${b.v.t1} of ${b.hi})`);
    check(b.range && near(b.range.t0 + b.abs, a.range.t0 + a.abs, 2) && near(b.range.t1 + b.abs, a.range.t1 + a.abs, 2),
      'the selected range stays on the same instants');
    // >>append: only the new spans were fetched, and merged they are the server's whole table. An append is
    // refused (the whole table fetched, liveFetch().fallback says why) when the recorder's left edge cut a span
    // whose children stay, so they moved up a row: then the next refreshes are tried, at most 4.
    let hiAbs = a.hi + a.abs;
    for (let k = 0; k < 4 && (await page.evaluate(() => __strobe.liveFetch().spans)) !== 'appended'; k++) {
      const g = await page.evaluate(() => { const r = __strobe.range(); return { gen: __strobe.generation(), hi: r.hi + __strobe.startNs() }; });
      hiAbs = g.hi;
      await page.click('#refresh');
      await until(page, (x) => window.__strobe.generation() > x, g.gen, 'a snapshot that appends');
    }
    const ap = await page.evaluate(async (oldHiAbs) => {
      const m = __strobe.model(), f = __strobe.liveFetch(), abs = __strobe.startNs();
      const res = await fetch(`/api/capture/table/spans?gen=${m.meta.generation}`,
        { headers: { Authorization: `Bearer ${sessionStorage.getItem('strobe-token')}` }, cache: 'no-store' });
      const buf = await res.arrayBuffer(), c = m.meta.tables.spans.columns, n = m.meta.tables.spans.rows;
      const S = new Float64Array(buf, c.start[1], n), D = new Float32Array(buf, c.dur[1], n), F = new Float32Array(buf, c.self[1], n);
      const T = new Uint16Array(buf, c.site[1], n), P = new Uint8Array(buf, c.depth[1], n);
      let differ = 0, ended = 0, newer = 0, drawn = 0;
      for (let i = 0; i < n; i++) {
        if (Math.abs(S[i] - m.start[i]) > 1 || D[i] !== m.dur[i] || F[i] !== m.self[i] || T[i] !== m.site[i] || P[i] !== m.depth[i]) differ++;
        if (f.since != null && S[i] + D[i] > f.since) ended++;
        if (S[i] + abs > oldHiAbs) { newer++; if (drawn < 1 && __strobe.spanRect(i)) drawn++; }
      }
      const lanes = m.meta.threads.reduce((a, t) => a + t.depths.length, 0);
      // GPU queues' and producers' lanes come whole (their times move with each calibration pair).
      const mapped = m.meta.threads.filter((t) => t.gpu_lane || t.producer_lane).reduce((a, t) => a + t.depths.reduce((b, d) => b + d[2], 0), 0);
      return { f, n, differ, ended, newer, drawn, lanes: lanes + mapped, whole: buf.byteLength };
    }, hiAbs);
    check(ap.f.spans === 'appended' && ap.f.rows >= ap.ended && ap.f.rows <= ap.ended + ap.lanes && ap.f.rows < ap.n,
      `the refresh fetched only the ${ap.ended} spans that ended after the last snapshot (+ at most ${ap.lanes}: lane rows' first, GPU lanes): ${ap.f.rows} of ${ap.n} rows, ${ap.f.bytes} of ${ap.whole} bytes (${JSON.stringify(ap.f)})`);
    check(ap.n > 0 && ap.differ === 0, `the appended spans equal the server's whole table (${ap.differ} of ${ap.n} differ)`);
    check(ap.newer > 0 && ap.drawn > 0, `the ${ap.newer} spans newer than the last snapshot are in the model and drawn`);
    // A view away from the newest data keeps its instants.
    await page.evaluate(() => { const r = __strobe.range(), w = (r.hi - r.lo) / 10; __strobe.setRange(r.hi - 3 * w, r.hi - 2 * w); });
    const c = await look();
    await page.click('#refresh');
    await until(page, (g) => window.__strobe.generation() > g, c.gen, 'another live snapshot');
    const d = await look();
    check(near(d.v.t0 + d.abs, c.v.t0 + c.abs, 2) && near(d.v.t1 + d.abs, c.v.t1 + c.abs, 2),
      `a view away from the newest data stays on the same instants (${c.v.t0 + c.abs} → ${d.v.t0 + d.abs})`);
    await page.screenshot({ path: path.join(work, 'live-streaming.png') });
    // The header's controls are kept across its redraw every second (viewer/header.js): the same
    // nodes after 2.5 s, so a click that straddles a redraw still lands.
    await page.evaluate(() => { window.__kept = ['rec', 'refresh', 'auto'].map((id) => document.getElementById(id)); });
    await page.waitForTimeout(2500);
    const kept = await page.evaluate(() => ['rec', 'refresh', 'auto'].map((id, k) => document.getElementById(id) === window.__kept[k]));
    check(kept.every(Boolean), `the header's Record, Refresh and auto controls are kept over its redraws: ${kept}`);
    // auto-refresh: fresh snapshots arrive without clicking Refresh; one click each way.
    const toggleAuto = async (on) => {
      await page.click('#auto');
      try {
        await page.waitForFunction((want) => document.querySelector('#auto')?.checked === want, on, { timeout: 3000, polling: 100 });
      } catch {
        check(false, `one click switched auto-refresh ${on ? 'on' : 'off'}`);
      }
    };
    const before = await page.evaluate(() => __strobe.generation());
    await toggleAuto(true);
    await until(page, (g) => window.__strobe.generation() > g, before, 'an automatic snapshot');
    await toggleAuto(false);
    const gen = await page.evaluate(() => __strobe.generation());
    await page.click('#rec');
    await until(page, (g) => window.__strobe.generation() > g && !document.querySelector('#rec')?.classList.contains('recording'),
      gen, 'stop with a last snapshot');
    check(await page.evaluate(() => __strobe.frameCount()) > 10, 'after Stop the last snapshot stays');
    check(errors.length === 0, `no console or page errors (${errors.join(' | ')})`);
  } finally {
    await browser.close();
    await stopProc(app.proc);
  }
}

finish(main);
