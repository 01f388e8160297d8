// app.js — owns start-up and wiring: reads the token, learns from
// /api/capture/state whether it shows files (`strobe view`) or a live
// application, loads the model(s), creates the views, routes the shared
// events between them (frame → flame range, strip brush → flame range,
// counters click → frame), the tabs, the header, the live Record / Refresh
// loop, global keys, and the test hook `window.__strobe` that the browser
// tests and the benchmark drive (docs/viewer.md lists it).

import * as api from './api.js';
import { state, on, emit } from './state.js';
import { loadModel, lowerBound } from './data.js';
import { Flame } from './flame.js';
import { Frames } from './frames.js';
import { Detail } from './detail.js';
import { Counters } from './counters.js';
import { Sessions } from './sessions.js';
import { Diff } from './diff.js';
import { UiTree } from './tree.js';
import { Samples } from './samples.js';
import { DeepTab } from './deep.js';
import { Columns } from './layout.js';
import { initTheme, setTheme, name as themeName } from './theme.js';
import { Settings } from './settings.js';
import { Shortcuts } from './shortcuts.js';
import { Search } from './search.js';
import { Stats } from './stats.js';
import { AggView } from './aggview.js';
import { RangeSummary } from './range.js';
import * as link from './link.js';
import * as live from './live.js';
import { AUTO_REFRESH_S, renderHeader } from './header.js';
import * as fmt from './fmt.js';

const $ = (id) => document.getElementById(id);
const hook = { ready: false, loadMs: null, errors: [] };
window.__strobe = hook;

const forceCanvas = /[?&#]fallback=1/.test(location.search + location.hash);
const forceGL = /[?&#]renderer=webgl2/.test(location.search + location.hash);   // WebGL2 even on a software renderer
let flame, frames, detail, counters, sessions, diff, columns, settings, shortcuts, uitree, search, stats, aggview, samples, deeptab;
let rec = null;          // last /api/capture/state
let liveTimer = 0;

function message(html) {
  const el = $('message');
  el.innerHTML = html;
  el.hidden = !html;
}

async function main() {
  if (!(await api.initToken())) { askToken(); return; }
  // The state is asked for at once, while the views are built (first render, docs/viewer.md §Speed without a GPU).
  const early = api.json('/api/capture/state');
  early.catch(() => {});   // awaited below; its failure is reported there
  initTheme();
  settings = new Settings($('settings-btn'), $('settings'));
  shortcuts = new Shortcuts($('shortcuts'));
  columns = new Columns($('view-timeline'));
  flame = new Flame($('flame'), { forceCanvas, forceGL });
  frames = new Frames($('strip'), $('list'), $('kinds'));
  detail = new Detail($('detail'));
  counters = new Counters($('view-counters'));
  sessions = new Sessions($('view-sessions'));
  diff = new Diff($('view-diff'));
  uitree = new UiTree($('view-uitree'));
  search = new Search($('search'), $('matches'), $('stepper'), $('search-results'));
  stats = new Stats($('view-stats'), search);
  aggview = new AggView($('view-flamegraph'));
  new RangeSummary($('flame'), (kind) => { setTab('stats'); stats.show(kind); });
  samples = new Samples($('view-samples'));
  deeptab = new DeepTab($('view-deep'));
  $('renderer').textContent = flame.renderer.kind === 'webgl2' ? 'WebGL2 · instanced' : 'Canvas 2D';
  $('renderer').title = flame.renderer.kind === 'webgl2' ? '' : `Canvas 2D: ${flame.why}`;
  wire();
  try {
    rec = await early;
  } catch (e) {
    message(`<h2>Cannot reach the Strobe server</h2><p>${fmt.esc(e.message)}</p>`);
    hook.ready = true;
    return;
  }
  state.live = rec.show === 'live';
  $('tab-sessions').hidden = !state.live;
  if (rec.has_capture) await load();
  else {
    renderHeader($('identity'), null, state.live, rec);
    message(state.live ? '<h2>Not recording</h2><p>Press <b>● Record</b> to keep the last 10 seconds of this application in a flight recorder, then look at them here. The <b>Sessions</b> tab shows profiling sessions meanwhile.</p>'
      : '<h2>Nothing to show</h2>');
  }
  if (state.live) startLiveLoop();
  applyLink(link.decode(location.hash));
  for (const ev of ['tab', 'frame', 'span', 'view', 'search', 'range-select', 'stats-scope', 'flamegraph']) on(ev, writeLink);
  on('focus-site', ({ site, scope }) => { search.focusSite(site, scope); flame.render(); });   // a histogram bar (detail.js)
  window.addEventListener('hashchange', async () => {   // a link pasted into this tab's address bar
    if (/(^#|&)(token|code)=/.test(location.hash)) await api.initToken();
    applyLink(link.decode(location.hash));
  });
  hook.ready = true;
}

// No token (a link pasted into a new tab): a form takes it, or the URL that
// holds it; the view in the fragment is kept and opened once it is given.
function askToken() {
  message('<h2>No access token</h2><p>Open the URL that <code>strobe view FILE</code> printed, or the application\'s viewer URL with <code>#token=…</code>: the token travels in the URL fragment.</p>' +
    `<form id="token-form"><p>${link.hasView(location.hash) ? 'This link holds a view; it opens once the token is given. ' : ''}Paste the token, or the URL that holds it:</p>` +
    '<input id="token-input" size="48" spellcheck="false" autocomplete="off"> <button type="submit">Open</button> <span id="token-error" class="warn"></span></form>');
  $('token-form').addEventListener('submit', (e) => {
    e.preventDefault();
    if (!api.giveToken($('token-input').value)) { $('token-error').textContent = 'no token in that text'; return; }
    message('');
    main().catch(fail);
  });
  hook.ready = true;
}

// >>link: the view in the URL fragment (link.js, docs/viewer.md §Deep links)
let applyingLink = false, linkTimer = 0;
const captureId = (m) => (m.meta.origin === 'live' ? 'live' : m.meta.label);

function linkState() {
  const m = state.model;
  return { capture: m ? captureId(m) : null, tab: state.tab, statsScope: state.tab === 'stats' ? stats.scopeKind : null,
    frame: state.frame, view: m ? flame.visibleRange() : null, span: state.span, range: state.range,
    search: state.search, focusSite: state.focusSite, focusScope: state.focusScope, flameGraph: aggview.linkState() };
}

function writeLink() {
  if (applyingLink || !state.model) return;
  clearTimeout(linkTimer);
  linkTimer = setTimeout(() => {
    const body = link.merge(location.hash, linkState());
    history.replaceState(null, '', location.pathname + location.search + (body ? '#' + body : ''));
  }, 200);
}

// Opens the view a link names. Rows (frame, span, site) only for the capture it was made for.
function applyLink(L) {
  const m = state.model;
  if (!m || !Object.keys(L).length) return;
  applyingLink = true;
  try {
    const same = !L.capture || L.capture === captureId(m);
    if (same && L.frame != null && L.frame < m.frames.rows) { state.frame = L.frame; emit('frame', L.frame); }
    if (L.view) flame.setRange(L.view.t0, L.view.t1);
    if (L.range) flame.selectRange(L.range.t0, L.range.t1);
    if (L.search) { $('search').value = L.search; $('search').dispatchEvent(new Event('input')); }
    else if (same && L.focusSite != null && m.sites[L.focusSite]) search.focusSite(L.focusSite, L.focusScope || null);
    if (same && L.span != null && L.span < m.n) { state.span = L.span; emit('span', L.span); }
    // The flame graph's scope, focus and sandwich: its rows are names and call paths, so any capture may take them.
    if (L.flameGraph) aggview.apply({ scope: L.flameGraph.scope || 'capture', focus: L.flameGraph.focus || '', name: L.flameGraph.name || null, thread: L.flameGraph.thread ?? null });
    if (L.tab && $('view-' + L.tab)) setTab(L.tab);
    if (L.tab === 'stats' && L.statsScope) stats.show(L.statsScope);
    $('link-note').textContent = same ? '' : `this link was made for ${L.capture}: its frame, span and name are not applied`;
    $('link-note').hidden = same;
  } finally {
    applyingLink = false;
  }
  flame.render();
}

async function load() {
  const t = performance.now();
  // Live: the spans are appended to the snapshot shown (data.js §append), not fetched again.
  const model = await loadModel(0, state.live && state.model && state.model.meta.origin === 'live' ? state.model : null);
  const compare = rec && rec.has_compare ? await loadModel(1) : null;
  // A live view moves on from snapshot to snapshot (live.js): what is shown is found again in the new one.
  const before = state.live && state.model ? { mem: live.remember(state.model, { view: flame.visibleRange(), span: state.span, frame: state.frame,
    range: state.range, focusScope: state.focusScope }), site: state.focusSite, scrollY: flame.scrollY } : null;
  state.model = model;
  state.compare = compare;
  state.frame = -1;
  state.span = -1;
  message('');
  renderHeader($('identity'), model, state.live, rec, state.autoRefresh);
  frames.setModel(model);
  flame.setModel(model);
  detail.setModel(model);
  counters.setModel(model);
  diff.setModels(model, compare);
  state.element = null;
  state.focusSite = null;
  uitree.setModel(model);
  samples.setModel(model);
  deeptab.setModel(model);
  emit('model', model);
  if (before) carryLive(model, before);
  // First full render: the flame chart and the strip drawn with the data.
  flame.render();
  frames.draw();
  await new Promise((r) => requestAnimationFrame(() => r()));
  hook.loadMs = hook.loadMs ?? performance.now();   // since navigation start
  hook.lastLoadMs = performance.now() - t;
}

function carryLive(model, before) {
  const c = live.carry(model, before.mem);
  if (before.site != null && model.sites[before.site]) search.focusSite(before.site, c.focusScope);
  if (c.frame >= 0) { state.frame = c.frame; emit('frame', c.frame); }
  flame.setRange(c.view.t0, c.view.t1);
  flame.scrollY = before.scrollY;
  flame.pan(0, 0);
  if (c.range) flame.selectRange(c.range.t0, c.range.t1);
  if (c.span >= 0) { state.span = c.span; emit('span', c.span); }
}

function wire() {
  on('frame', (k) => {
    if (k < 0 || !state.model) return;
    const f = state.model.frame(k);
    const pad = Math.max(f.dur * 0.04, 1);
    flame.setRange(f.start - pad, f.end + pad);
    if (state.span >= 0) { state.span = -1; emit('span', -1); }
  });
  on('range', ({ t0, t1 }) => flame.setRange(t0, t1));
  on('pickTime', (t) => {
    const F = state.model.frames;
    const k = lowerBound(0, F.rows, t, (i) => F.start[i] + F.dur[i]);
    if (k < F.rows && F.start[k] <= t) { state.frame = k; emit('frame', k); }
  });
  $('budget').addEventListener('change', (e) => {
    const v = Number(e.target.value);
    if (v > 0) { state.budgetMs = v; emit('budget', v); }
  });
  on('tab-request', (tab) => { if (state.tab !== tab) setTab(tab); });
  $('tabs').addEventListener('click', (e) => {
    const b = e.target.closest('button[data-tab]');
    if (b) setTab(b.dataset.tab);
  });
  $('identity').addEventListener('click', async (e) => {
    if (e.target.id === 'rec') await toggleRecording();
    if (e.target.id === 'refresh') await refreshLive();
    if (e.target.id === 'auto') state.autoRefresh = e.target.checked;
  });
  $('help-btn').addEventListener('click', () => shortcuts.show());
  window.addEventListener('keydown', (e) => {
    const inInput = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName);
    if (e.key === '?' && !inInput) { shortcuts.show(); e.preventDefault(); return; }
    if (e.key === 'Escape' && (shortcuts.open || !$('settings').hidden)) { shortcuts.show(false); settings.show(false); e.preventDefault(); return; }
    if (shortcuts.open) return;   // the overlay is modal
    if (e.key === '/' && !inInput) { $('search').focus(); e.preventDefault(); return; }
    if ((e.key === 'n' || e.key === 'N') && !inInput && !e.ctrlKey && !e.metaKey && !e.altKey && search.active) { search.step(e.key === 'n' ? 1 : -1); e.preventDefault(); return; }
    // The flame chart handles its own keys while focused; elsewhere on the timeline they go to it too.
    const el = document.activeElement;
    if (!inInput && state.tab === 'timeline' && flame && state.model && el !== $('list') && el !== flame.ovCanvas) flame.key(e);
  });
  window.addEventListener('error', (e) => hook.errors.push(String(e.message)));
}

function setTab(tab) {
  state.tab = tab;
  for (const b of document.querySelectorAll('#tabs button')) b.classList.toggle('on', b.dataset.tab === tab);
  for (const v of document.querySelectorAll('main > .view')) v.hidden = v.id !== 'view-' + tab;
  if (tab === 'uitree') uitree.render();
  if (tab === 'stats') stats.render();
  if (tab === 'flamegraph') aggview.render();
  if (tab === 'samples') samples.render();
  if (tab === 'deep') deeptab.render();
  sessions.show(tab === 'sessions');
  if (tab === 'counters') counters.draw();
  if (tab === 'diff') diff.render();
  if (tab === 'timeline') flame.resize();
  emit('tab', tab);
}

// >>live
async function toggleRecording() {
  const on = !(rec && rec.recording);
  try {
    rec = await api.post('/api/capture/recorder', { recording: on });
  } catch (e) {
    message(`<h2>Recording failed</h2><p>${fmt.esc(e.message)}</p>`);
    return;
  }
  renderHeader($('identity'), state.model, true, rec, state.autoRefresh);
  if (!on) await waitForGeneration(rec.generation + 1);
}

async function refreshLive() {
  const before = rec ? rec.generation : 0;
  const r = await api.json('/api/capture/meta?live=1');
  if (r.accepted) await waitForGeneration(before + 1);
}

// Polls the state until a model of at least generation `g` is there, then loads it.
async function waitForGeneration(g) {
  for (let k = 0; k < 600; k++) {
    rec = await api.json('/api/capture/state');
    if (rec.generation >= g && !rec.building) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  if (rec.has_capture && (!state.model || state.model.meta.generation !== rec.generation)) await load();
  renderHeader($('identity'), state.model, true, rec, state.autoRefresh);
}

// Every second: the recorder's state for the header; with auto-refresh on,
// a fresh snapshot every AUTO_REFRESH_S seconds while recording (one at a time).
let lastAuto = 0, refreshing = false;
function startLiveLoop() {
  clearInterval(liveTimer);
  liveTimer = setInterval(async () => {
    try {
      rec = await api.json('/api/capture/state');
      renderHeader($('identity'), state.model, true, rec, state.autoRefresh);
      const now = Date.now();
      if (state.autoRefresh && rec.recording && !rec.building && !refreshing && now - lastAuto >= AUTO_REFRESH_S * 1000) {
        lastAuto = now;
        refreshing = true;
        try { await refreshLive(); } finally { refreshing = false; }
      }
    } catch { /* server gone: keep what is shown */ }
  }, 1000);
}

// >>test hook: what the browser tests and bench/viewer_bench.mjs use.
Object.assign(hook, {
  renderer() { return flame ? flame.renderer.kind : null; },
  rendererWhy() { return flame && flame.renderer.kind !== 'webgl2' ? flame.why : null; },
  // kind: the capture's frame kind by default (pass when it has pass operations, else frame).
  frameCount(kind) {
    const m = state.model;
    if (!m) return 0;
    kind = kind || m.frameKind();
    let n = 0;
    for (let k = 0; k < m.frames.rows; k++) n += m.frameKinds[m.frames.kind[k]] === kind;
    return n;
  },
  listRows() { return frames.listLength(); },   // rows the list holds (the DOM keeps only those in view)
  // threadName: only a frame of that thread (frames of marks are numbered per thread); window: only a pass
  // of that declared window (a pass is identified by its window and frame id).
  selectFrame(number, kind, threadName, window) {
    const f = hook.frameAt(number, kind, threadName, window);
    if (!f) return -1;
    state.frame = f.row;
    emit('frame', f.row);
    flame.render();
    return f.row;
  },
  // The frame numbered `number` of that kind (on the thread of that name, when given): its row and times.
  frameAt(number, kind, threadName, window) {
    const m = state.model, F = m.frames;
    kind = kind || m.frameKind();
    for (let k = 0; k < F.rows; k++) {
      if (F.number[k] !== number || m.frameKinds[F.kind[k]] !== kind) continue;
      if (threadName != null && m.threadName(F.thread[k]) !== threadName) continue;
      if (window != null && m.frame(k).window !== window) continue;
      return { row: k, start: F.start[k], dur: F.dur[k], thread: m.threadName(F.thread[k]) };
    }
    return null;
  },
  // Every frame-list entry of that kind as the model has it (docs/viewer.md §Across processes):
  // [{row, number, start, dur, committed, where, handoff (handoffOf, thread names for threads), stages
  // [{name, process, total, count}]}].
  entries(kind) {
    const m = state.model, F = m.frames, out = [];
    kind = kind || m.frameKind();
    for (let k = 0; k < F.rows; k++) {
      if (m.frameKinds[F.kind[k]] !== kind) continue;
      const f = m.frame(k), h = f.remote ? m.handoffOf(k) : null;
      if (h) h.originThread = h.originThread === null ? null : m.threadName(h.originThread);
      out.push({ row: k, number: f.number, start: f.start, dur: f.dur, committed: f.committed, where: m.frameWhere(k),
        thread: m.threadName(f.thread), handoff: h, segments: m.frameSegments(k).map((s) => ({ ...s, thread: m.threadName(s.thread) })),
        stages: m.opStagesOf(k).map((a) => ({ name: m.sites[a.site] ? m.sites[a.site].name : '?', process: a.process, total: a.total, count: a.count })) });
    }
    return out;
  },
  // What the flame chart drew for the selected frame across processes: [{part, thread (name), t0, t1, x0, x1, y0, y1}].
  frameBands() { return (flame.frameBands || []).map((b) => ({ ...b, thread: b.thread === null ? null : state.model.threadName(b.thread) })); },
  // The lanes of the flame chart now: [{name, y0, y1}] (px from the flame chart's canvas top).
  lanes() { return flame.laneBoxes(); },
  // A frame's [start, end] by its number (as selectFrame), and the capture's time range.
  frameBounds(number, kind) {
    const m = state.model, F = m.frames;
    kind = kind || m.frameKind();
    for (let k = 0; k < F.rows; k++) {
      if (F.number[k] === number && m.frameKinds[F.kind[k]] === kind) { const f = m.frame(k); return { start: f.start, end: f.end }; }
    }
    return null;
  },
  range() { return { lo: state.model.range.lo, hi: state.model.range.hi }; },
  strip() { return frames.stripInfo(); },
  theme(t) { if (t) setTheme(t); return themeName(); },
  columns() { return { list: columns.current('list'), detail: columns.current('detail') }; },
  view() { return flame.visibleRange(); },
  setRange(t0, t1) { flame.setRange(t0, t1); flame.render(); },
  zoom(f, x) { flame.zoom(f, x); flame.render(); return flame.visibleRange(); },
  pan(dx) { flame.pan(dx); },
  render() { flame.render(); },
  // The n-th (0-based) span named `name` that lies inside the selected frame (or anywhere).
  findSpan(name, nth = 0) {
    const m = state.model;
    const f = state.frame >= 0 ? m.frame(state.frame) : null;
    let seen = 0;
    for (let i = 0; i < m.n; i++) {
      if (m.name(i) !== name) continue;
      if (f && (m.start[i] < f.start || m.end(i) > f.end + 1e-6)) continue;
      if (seen++ === nth) return i;
    }
    return -1;
  },
  spansNamed(name) { const m = state.model, out = []; for (let i = 0; i < m.n; i++) if (m.name(i) === name) out.push(i); return out; },
  spanInfo(i) { const m = state.model; return { name: m.name(i), start: m.start[i], dur: m.dur[i], self: m.self[i], depth: m.depth[i], thread: m.threadOf(i) }; },
  spanRect(i) { return flame.rectOfSpan(i); },
  tooltip() { const t = flame.tip; return t.hidden ? null : t.innerText; },
  hitStats() { return { ...flame.hitStats, all: flame.hitStats.all.slice() }; },
  resetHitStats() { flame.hitStats = { n: 0, totalUs: 0, lastUs: 0, all: [] }; },
  glStats() { return { ...flame.renderer.stats }; },
  renders() { return flame.frameStats.frames; },
  setTab,
  tab() { return state.tab; },
  selected() { return state.span; },
  state() { return { range: state.range, frame: state.frame, span: state.span, tab: state.tab, search: state.search, focusSite: state.focusSite }; },
  clearSpan() { state.span = -1; emit('span', -1); },
  select(i) { state.span = i; emit('span', i); flame.render(); return i; },
  statsShow(kind) { setTab('stats'); stats.show(kind); },
  flameGraph() { return aggview.drawn(); },
  flameGraphState() { return aggview.linkState(); },
  selectRange(t0, t1) { flame.selectRange(t0, t1); return state.range; },
  link() { return location.hash; },
  startNs() { return state.model.meta.start_ns; },
  counterAxes() { return counters.axes(); },
  // A counter's or gauge's samples straight from the model's table: [[time, value], …].
  samples(name) {
    const m = state.model, s = m.meta.series.find((x) => x.kind !== 'op_counter' && m.sites[x.site].name === name && !m.sites[x.site].category);
    const out = [];
    for (let k = s.first; k < s.first + s.count; k++) out.push([m.samples.time[k], m.samples.value[k]]);
    return out;
  },
  counterFollow(on) { counters.follow = on; counters.draw(); return counters.axes(); },
  rangeBox() { const b = $('flame').querySelector('.range-box'); return b.hidden ? null : b.innerText; },
  sandwich(name) { aggview.setName(name); return aggview.drawn(); },
  diffFrames(a, b) {
    const ref = state.frame >= 0 ? state.frame : 0;   // numbers of the selected frame's series (diff.js _frameRow)
    return diff.setFrames(diff._frameRow(ref, a), diff._frameRow(ref, b)).map((r) => ({ ...r }));
  },
  diffCaptures() { diff.mode = 'captures'; diff.render(); return diff.rows.map((r) => ({ ...r })); },
  search(text) { const el = $('search'); el.value = text; el.dispatchEvent(new Event('input')); flame.render(); },
  toggleRecording, refreshLive,
  // Element attribution and the UI-tree tab (docs/viewer.md §UI tree).
  element(i) { return state.model.elementOf(i); },
  elementFilter(id) { state.element = id || null; emit('search', state.search); detail.render(); flame.render(); return $('matches').textContent; },
  isLit(i) { return !flame.searching || flame._matches(i, state.model.site[i]); },
  uiTreeRows() {
    return [...document.querySelectorAll('#view-uitree .unode')].map((r) => ({
      node: Number(r.dataset.node), parent: Number(r.dataset.parent), level: Number(r.style.getPropertyValue('--lvl')),
      type: r.querySelector('.utype').textContent, id: r.querySelector('.uid').textContent, spans: r.querySelector('.uspans').textContent }));
  },
  // The deep-capture tab (docs/viewer.md §Deep capture): its call rows as shown.
  deepRows() {
    return [...document.querySelectorAll('#view-deep tr[data-call]')].map((r) => ({
      seq: Number(r.dataset.call), kind: r.children[1].textContent, status: r.querySelector('.deep-status').textContent }));
  },
  generation() { return state.model ? state.model.meta.generation : 0; },
  // How the shown model's spans were fetched: {spans: 'whole'|'appended', rows fetched, since (ns), bytes, fallback}.
  liveFetch() { return state.model ? state.model.fetched : null; },
  // The Samples tab (docs/viewer.md §Samples): the meta's sampler and the flame graph's boxes as drawn.
  model() { return state.model; },
  samplesFlame() { return samples.graph ? samples.graph.drawn() : []; },
  // The flame chart's overlay pixel (RGBA) at time t (ns since the capture start) in lane `thread`, `below` px
  // under its header: where the sampler's off-CPU gaps are shaded.
  lanePixel(thread, t, below) {
    const lane = flame.lanes.find((l) => l.thread === thread);
    if (!lane) return null;
    const dpr = window.devicePixelRatio || 1;
    const x = (t - flame.t0) / flame.npp, y = 22 + 18 + lane.y - flame.scrollY + below; // flame.js: RULER + HEADER
    return [...flame.ov.getImageData(Math.round(x * dpr), Math.round(y * dpr), 1, 1).data];
  },
});

function fail(e) {
  hook.errors.push(String(e && e.stack || e));
  message(`<h2>The viewer failed to start</h2><pre>${fmt.esc(String(e && e.stack || e))}</pre>`);
  hook.ready = true;
  throw e;
}

main().catch(fail);
