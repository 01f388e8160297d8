// viewer_explain.test.mjs — the frame's explanation in the detail panel
// (docs/viewer.md §Explanation), in Debian's Chromium through playwright-core,
// on the capture tests/cli/explain_app records (a GTK-shaped frame loop with
// the sampler on): pass 20's layout sleeps 100 ms, pass 30's paint spins
// 100 ms of CPU. The panel of pass 20 names layout, blocked, as
// `strobe explain --json` does, and its link selects layout's span, whose
// tooltip splits its self time (about 100 ms blocked); pass 30's
// names paint on CPU with spin_paint on top (the viewer is local: function
// names are shown); a pass strobe explain finds as usual says so. The frame list
// sorted by excess over the norm puts first the frame `strobe explain
// --slowest` names, its excess (wall less p50) as the CLI gives it.
//
// usage: node viewer_explain.test.mjs --strobe BIN --explain-app BIN --chromium PATH --work DIR
import fs from 'node:fs';
import path from 'node:path';
import { arg, run, check, finish, startView, launch, openViewer } from './strobe_view.mjs';

const strobe = arg('--strobe');
const explainApp = arg('--explain-app');
const chromium = arg('--chromium');
const work = arg('--work');

// A duration as fmt.dur prints it ("549 ms", "1.02 s", "81.5 µs"), in ms.
function ms(text) {
  const m = /([\d.]+) (ns|µs|ms|s)\b/.exec(text);
  return m ? parseFloat(m[1]) * { ns: 1e-6, 'µs': 1e-3, ms: 1, s: 1e3 }[m[2]] : NaN;
}

// The panel's explanation once the server answered (its folded details read from the DOM).
async function explanationOf(page, number) {
  const row = await page.evaluate((n) => __strobe.selectFrame(n), number);
  check(row >= 0, `pass ${number} is in the model`);
  await page.waitForFunction(() => {
    const el = document.querySelector('#detail .explain');
    return el && !el.textContent.includes('explaining');
  }, null, { timeout: 60000 });
  return page.$eval('#detail .explain', (el) => ({
    text: el.textContent,
    parts: [...el.querySelectorAll('.ex-part')].map((p) => ({
      cls: p.className, text: p.textContent, link: p.dataset.exPart,
      over: [...p.querySelectorAll('.ex-kind.ex-over')].map((k) => k.className.split(' ')[1]), // kinds over their norms
    })),
  }));
}

await finish(async () => {
  fs.mkdirSync(work, { recursive: true });
  const cap = path.join(work, 'explain.strobe');
  run(explainApp, [cap]);
  const cli = JSON.parse(run(strobe, ['explain', '--json', '--frame', '20', cap])).frames[0];
  const cliWorst = cli.parts[cli.worst];
  const view = await startView(strobe, [cap]);
  const browser = await launch(chromium);
  try {
    const { page, errors } = await openViewer(browser, view.url);
    const blocked = await explanationOf(page, 20);
    // (On a loaded machine a short stage may also exceed: the slow one is looked up by name.)
    const p = blocked.parts.find((x) => x.link === 'layout') || { cls: '', text: '', over: [] };
    check(p.link === 'layout' && p.link === cliWorst.name, `pass 20's exceeding part is layout, as strobe explain says (${p.link}, ${cliWorst.name})`);
    check(p.cls.includes('ex-blocked') && p.text.includes('grew most: blocked') && p.over.includes('ex-blocked') &&
      !p.over.includes('ex-cpu'), `layout's extra time is coloured and named blocked (${p.cls}: ${p.text})`);
    await page.click('#detail .explain [data-ex-stage="layout"]');
    const span = await page.evaluate(() => { const s = __strobe.state().span; return s >= 0 ? __strobe.model().name(s) : null; });
    check(span === 'layout', `the link selects layout's span (${span})`);
    // Its tooltip (the detail panel's head) splits its self time: about 100 ms blocked, little on CPU.
    const self = await page.$$eval('#detail .detail-head tr', (trs) => trs.map((tr) => tr.textContent).find((t) => t.startsWith('self')) || '');
    const blockedMs = ms(self.slice(self.indexOf('blocked')));
    check(blockedMs >= 90 && ms(self.slice(self.indexOf('on CPU'))) < blockedMs && self.includes('preempted'),
      `layout's self time split in its tooltip: ${self}`);
    await page.evaluate(() => __strobe.clearSpan());
    const spun = await explanationOf(page, 30);
    const q = spun.parts.find((x) => x.link === 'paint') || { cls: '', text: '', over: [] };
    // On a loaded machine the spin is also preempted for longer than it ran (docs/explain.md §Exceeding): on CPU is
    // over its norm whichever grew more, blocked never.
    check(q.link === 'paint' && q.over.includes('ex-cpu') && !q.over.includes('ex-blocked'),
      `pass 30: paint, over its norm on CPU (${JSON.stringify(spun.parts)})`);
    check(q.text.includes('spin_paint'), `pass 30: spin_paint on top of paint's CPU time (${q.text})`);
    // A pass strobe explain finds as usual (which one depends on the machine's load) says so in one line.
    const asUsual = [...Array(40).keys()].map((k) => k + 1).find((n) => {
      const f = JSON.parse(run(strobe, ['explain', '--json', '--frame', String(n), cap])).frames[0];
      return f.exceeded === 0 && f.parts.every((q) => q.time.ns !== null);
    });
    check(asUsual !== undefined, 'strobe explain finds a pass with every part as usual');
    const usual = await explanationOf(page, asUsual);
    check(usual.parts.length === 0 && /every part as usual/i.test(usual.text), `pass ${asUsual}: every part as usual (${usual.text})`);
    // The list sorted by excess over the norm: the library's figure, the largest first.
    await page.click('.list-note [data-key="excess"]');
    await page.waitForFunction(() => document.querySelector('.list-note').textContent.includes('sorted by excess'), null, { timeout: 60000 });
    const top = await page.$eval('table.frames tbody tr[data-frame]', (tr) => ({ number: Number(tr.cells[0].textContent), title: tr.cells[1].title }));
    const slowest = JSON.parse(run(strobe, ['explain', '--json', cap])).frames[0];
    const excessMs = (slowest.wall.ns - slowest.wall.p50_ns) / 1e6;
    check(top.number === slowest.number && top.title.startsWith('+') && top.title.endsWith(' over the norm') &&
      Math.abs(ms(top.title) - excessMs) < 0.01 * excessMs,
      `sorted by excess, pass ${slowest.number} comes first, ${excessMs.toFixed(1)} ms over its norm (${JSON.stringify(top)})`);
    await page.screenshot({ path: path.join(work, 'explain.png') });
    check(errors.length === 0, `no console or page errors (${errors.join('; ')})`);
  } finally {
    await browser.close();
    await view.stop();
  }
});
