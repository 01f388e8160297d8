// frames.js — owns the frame strip and the frames list.
//
// Strip: every frame and operation as a bar over the capture's time axis,
// height by duration, colour by the duration thresholds (green, orange, red:
// fmt.durClass), a cap in its kind's colour (frame, pass, input, rebuild,
// app_scope, request, scope), the budget line and the thresholds' lines, and
// the flame chart's current range as a window. Where frames are narrower
// than a pixel, each pixel column shows its slowest. Click selects the frame
// under the pointer; drag selects a time range for the flame chart.
//
// A capture without frames (no FRAME marks, no pass operations: a batch
// program) has no frame strip and no budget: the strip is an activity strip
// instead, one lane per thread, each time bucket as tall as the share of it
// the thread spent inside top-level scopes (the model's meta.activity,
// docs/viewer.md §Programs without frames). Drag still selects a range.
//
// List: the frames of the kinds and the thread shown, sortable by duration,
// number, start, kind or excess over the norm (each frame's duration less the
// p50 of its peers', as the library computes it: GET
// /api/capture/explain?excess=1, docs/explain.md §Norms; frames it has no
// norm for come last); click (or Up/Down) selects. Every row is reachable:
// only the rows in view (and a margin) are in the DOM, the rest is spacer.
// Frames of FRAME marks are numbered per thread, so the list shows one
// thread's at a time (the frame thread first; a selector when several threads
// mark frames). A top-level scope of category pass that lies inside a frame
// of its thread is that frame's own pass: listed once, as the frame (the note
// counts them) — docs/viewer.md §Frames and operations.

import { state, emit, on } from './state.js';
import * as fmt from './fmt.js';
import { colors } from './theme.js';
import { FRAME_FLAG } from './data.js';
import * as api from './api.js';

const ROW_H = 21;     // px: one list row (viewer.css table.frames td height)
const OVERSCAN = 12;  // rows built above and below the visible ones

export class Frames {
  constructor(stripEl, listEl, kindsEl) {
    this.stripEl = stripEl;
    this.listEl = listEl;
    this.kindsEl = kindsEl;
    this.canvas = document.createElement('canvas');
    stripEl.append(this.canvas);
    this.ctx = this.canvas.getContext('2d');
    this.model = null;
    this.sort = { key: 'dur', desc: true };
    this.order = null;
    new ResizeObserver(() => this.draw()).observe(stripEl);
    on('view', () => this.drawSoon());
    on('budget', () => { this.draw(); this.renderList(); });
    on('thresholds', () => { this.draw(); this.renderList(); });
    on('theme', () => this.draw());
    on('frame', (k) => {
      this.draw();
      const r = this.model && k >= 0 ? this._order().indexOf(k) : -1;
      if (r >= 0 && this.listEl.offsetParent) this.scrollToRow(r);
      this.markSelected();
    });
    this._bindStrip();
    listEl.addEventListener('click', (e) => {
      const th = e.target.closest('[data-key]');
      if (th) {
        const key = th.dataset.key;
        if (key === 'excess') this._loadExcess();
        this.sort = { key, desc: this.sort.key === key ? !this.sort.desc : key === 'dur' || key === 'excess' };
        this.order = null;
        this.renderList();
        return;
      }
      const tr = e.target.closest('tr[data-frame]');
      if (tr) this.select(Number(tr.dataset.frame));
    });
    listEl.addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
      const order = this._order();
      const at = order.indexOf(state.frame);
      const r = Math.max(0, Math.min(order.length - 1, at + (e.key === 'ArrowDown' ? 1 : -1)));
      if (order.length) { this.select(order[r]); this.scrollToRow(r); }
      e.preventDefault();
    });
    listEl.addEventListener('scroll', () => {
      if (this.listRaf) return;
      this.listRaf = requestAnimationFrame(() => { this.listRaf = 0; this.renderRows(); });
    });
    listEl.addEventListener('change', (e) => {
      if (e.target.id !== 'frame-thread') return;
      state.frameThread = e.target.value === 'all' ? null : Number(e.target.value);
      this.order = null;
      emit('kinds');
      this.draw();
      this.renderList();
    });
  }

  setModel(model) {
    this.model = model;
    this.excess = null; // per frame index, once the server said (NaN: no norm)
    this.excessError = '';
    this.mode = model.meta.activity ? 'activity' : 'frames';
    this.stripEl.dataset.mode = this.mode;
    // No frames, no budget: the budget control goes with the frame strip.
    const budget = document.getElementById('budget');
    if (budget && budget.closest('label')) budget.closest('label').hidden = this.mode === 'activity';
    this.stripEl.title = this.mode === 'activity'
      ? 'activity: the share of each time bucket each thread spent in top-level scopes (this capture has no frames); drag to zoom the flame chart'
      : 'frames and operations over time: click to select, drag to zoom the flame chart';
    const present = new Set();
    for (let k = 0; k < model.frames.rows; k++) present.add(model.frameKinds[model.frames.kind[k]]);
    state.kinds = new Set(present);
    this.kindsEl.innerHTML = [...present].map((k) =>
      `<label class="kind"><input type="checkbox" data-kind="${k}" checked><i style="background:${fmt.KIND_COLORS[k]}"></i>${k}</label>`).join('');
    this.kindsEl.onchange = (e) => {
      const k = e.target.dataset.kind;
      if (e.target.checked) state.kinds.add(k);
      else state.kinds.delete(k);
      this.order = null;
      emit('kinds');
      this.draw();
      this.renderList();
    };
    this._frameThreads(model);
    this.order = null;
    this.draw();
    this.renderList();
  }

  // Which threads have frames, which passes are their frames' own, and the thread shown first.
  _frameThreads(model) {
    const F = model.frames, kinds = model.frameKinds;
    this.ownPass = new Uint8Array(F.rows);
    this.ownPasses = 0;
    const byThread = new Map();   // thread -> frame rows of kind `frame`, by start
    for (let k = 0; k < F.rows; k++) {
      if (kinds[F.kind[k]] !== 'frame') continue;
      if (!byThread.has(F.thread[k])) byThread.set(F.thread[k], []);
      byThread.get(F.thread[k]).push(k);
    }
    if (model.meta.frames_are === 'marks') {
      for (let k = 0; k < F.rows; k++) {
        if (kinds[F.kind[k]] !== 'pass' || (F.flags[k] & FRAME_FLAG.OP)) continue;   // a pass-category scope, not an operation
        const rows = byThread.get(F.thread[k]);
        if (!rows) continue;
        let lo = 0, hi = rows.length;   // the last frame starting at or before the pass
        while (lo < hi) { const mid = (lo + hi) >>> 1; if (F.start[rows[mid]] <= F.start[k]) lo = mid + 1; else hi = mid; }
        const f = lo ? rows[lo - 1] : -1;
        if (f >= 0 && F.start[k] + F.dur[k] <= F.start[f] + F.dur[f] + 1e-6) { this.ownPass[k] = 1; this.ownPasses++; }
      }
    }
    const counts = new Map();
    for (let k = 0; k < F.rows; k++) if (!this.ownPass[k]) counts.set(F.thread[k], (counts.get(F.thread[k]) || 0) + 1);
    this.threadCounts = counts;
    // Marks are numbered per thread: one thread at a time, the frame thread first.
    const ft = model.meta.frame_thread;
    state.frameThread = model.meta.frames_are === 'marks' && byThread.size > 1 && counts.has(ft) ? ft : null;
  }

  shown(k) {
    if (this.ownPass && this.ownPass[k]) return false;
    if (state.frameThread != null && this.model.frames.thread[k] !== state.frameThread) return false;
    return state.kinds.has(this.model.frameKinds[this.model.frames.kind[k]]);
  }

  select(k) {
    state.frame = k;
    emit('frame', k);
  }

  // >>strip
  _x(t) {
    const r = this.model.range;
    return ((t - r.lo) / (r.hi - r.lo)) * this.w;
  }

  drawSoon() {
    if (this.raf) return;
    this.raf = requestAnimationFrame(() => { this.raf = 0; this.draw(true); });
  }

  // The strip: its bars, lines and labels (the base, kept in an offscreen
  // canvas and redrawn only when they change) under the flame chart's window
  // and the brush. viewOnly: only the window moved (a pan or zoom of the
  // flame chart), so the kept base is copied, not redrawn: a capture of
  // 100,000 frames otherwise cost every frame of a pan a walk over them all.
  draw(viewOnly = false) {
    const el = this.stripEl, c = this.ctx;
    const rect = el.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    this.w = Math.max(1, Math.floor(rect.width));
    this.h = Math.max(1, Math.floor(rect.height));
    if (this.canvas.width !== Math.round(this.w * dpr) || this.canvas.height !== Math.round(this.h * dpr)) {
      this.canvas.width = Math.round(this.w * dpr);
      this.canvas.height = Math.round(this.h * dpr);
      this.canvas.style.width = this.w + 'px';
      this.canvas.style.height = this.h + 'px';
    }
    if (!this.base) this.base = document.createElement('canvas');
    const b = this.base;
    if (!viewOnly || b.width !== this.canvas.width || b.height !== this.canvas.height || this.baseModel !== this.model) {
      b.width = this.canvas.width;
      b.height = this.canvas.height;
      this.baseModel = this.model;
      this._drawBase(b.getContext('2d'), dpr);
    }
    c.setTransform(1, 0, 0, 1, 0, 0);
    c.clearRect(0, 0, this.canvas.width, this.canvas.height);
    c.drawImage(b, 0, 0);
    c.setTransform(dpr, 0, 0, dpr, 0, 0);
    if (this.model) this._drawOverlay(c, this.model, this.h - 14);
  }

  _drawBase(c, dpr) {
    c.setTransform(dpr, 0, 0, dpr, 0, 0);
    c.clearRect(0, 0, this.w, this.h);
    const m = this.model;
    if (!m) return;
    if (this.mode === 'activity') {
      this._drawActivity(c, m);
      return;
    }
    const F = m.frames, budget = state.budgetMs * 1e6;
    const top = 4, base = this.h - 14, hgt = base - top;
    // One pass over the frames (a capture may hold 100,000): the slowest shown, and per pixel column the slowest
    // shown frame; shown() inlined through a table of the kinds shown.
    const kindShown = m.frameKinds.map((k) => state.kinds.has(k)), own = this.ownPass, ft = state.frameThread;
    const cols = new Float64Array(this.w).fill(-1);
    const colFrame = new Int32Array(this.w).fill(-1);
    const wide = [];
    const lo = m.range.lo, span = m.range.hi - m.range.lo, w = this.w;   // x as _x() computes it
    let maxDur = 0;
    for (let k = 0; k < F.rows; k++) {
      if ((own && own[k]) || (ft != null && F.thread[k] !== ft) || !kindShown[F.kind[k]]) continue;
      const d = F.dur[k];
      if (d > maxDur) maxDur = d;
      const x0 = ((F.start[k] - lo) / span) * w, x1 = ((F.start[k] + d - lo) / span) * w;
      if (x1 - x0 >= 3) { wide.push(k); continue; }
      const cx = Math.min(this.w - 1, Math.max(0, Math.floor(x0)));
      if (d > cols[cx]) { cols[cx] = d; colFrame[cx] = k; }
    }
    const y = this._scale(maxDur, budget, base, hgt);
    this.colFrame = colFrame;
    this.wide = wide;
    const kinds = m.frameKinds;
    for (let cx = 0; cx < this.w; cx++) {
      if (cols[cx] < 0) continue;
      c.fillStyle = fmt.BUDGET_COLORS[fmt.durClass(cols[cx], state.thresholds)];
      const yy = y(cols[cx]);
      c.fillRect(cx, yy, 1, base - yy);
    }
    for (const k of wide) {
      const x0 = this._x(F.start[k]), x1 = this._x(F.start[k] + F.dur[k]);
      const yy = y(F.dur[k]);
      c.fillStyle = fmt.BUDGET_COLORS[fmt.durClass(F.dur[k], state.thresholds)];
      c.fillRect(x0 + 0.5, yy, Math.max(1, x1 - x0 - 1), base - yy);
      c.fillStyle = fmt.KIND_COLORS[kinds[F.kind[k]]];
      c.fillRect(x0 + 0.5, yy, Math.max(1, x1 - x0 - 1), 2);
    }
    // selected frame
    if (state.frame >= 0 && state.frame < F.rows) {
      const f = m.frame(state.frame);
      const x0 = this._x(f.start), x1 = Math.max(x0 + 2, this._x(f.end));
      c.strokeStyle = colors().select;
      c.lineWidth = 1.5;
      c.strokeRect(x0 - 1, top - 2, x1 - x0 + 2, base - top + 4);
    }
    // budget and 5x budget lines
    c.lineWidth = 1;
    c.font = '10px system-ui, sans-serif';
    c.textBaseline = 'alphabetic';
    this.budgetY = null;
    // The budget (solid) and the colour thresholds (dashed, in the colour they start).
    const T = state.thresholds;
    const lines = [[budget, [], 'rgba(63,185,80,0.9)', `budget ${fmt.dur(budget)}`, this.w - 96],
      [T.ok * 1e6, [4, 3], 'rgba(210,153,34,0.8)', `orange from ${fmt.dur(T.ok * 1e6)}`, this.w - 230],
      [T.over * 1e6, [4, 3], 'rgba(248,81,73,0.8)', `red over ${fmt.dur(T.over * 1e6)}`, this.w - 230]];
    for (const [ns, dash, color, text, lx] of lines) {
      const yy = Math.round(y(ns)) + 0.5;
      if (ns === budget && budget <= this.scale) this.budgetY = yy;
      if (ns > this.scale) {
        if (ns === budget) label(c, `budget ${fmt.dur(budget)} is above every frame`, this.w - 200, top + 9);
        continue;
      }
      c.strokeStyle = color;
      c.setLineDash(dash);
      c.beginPath();
      c.moveTo(0, yy);
      c.lineTo(this.w, yy);
      c.stroke();
      c.setLineDash([]);
      label(c, text, lx, yy - 3);
    }
    // The top of the scale: the slowest frame shown (readable over the bars).
    if (maxDur > 0) label(c, `${this.log ? 'log scale · ' : ''}slowest ${fmt.dur(maxDur)}`, 4, top + 9);
  }

  // Bar height for a duration (docs/viewer.md §Frames, detail, counters, diff). When every
  // frame is under the budget: linear up to the slowest, so their shape shows.
  // Otherwise logarithmic, h ∝ log(1 + d / (budget/4)), up to the slowest:
  // nothing is clipped, frames 14x and 31x the budget stand visibly apart,
  // and the budget line stays at about a third of the height.
  _scale(maxDur, budget, base, hgt) {
    this.log = maxDur > budget;
    if (!this.log) {
      this.scale = Math.max(maxDur, 1) * 1.08;
      this.yOf = (ns) => base - Math.min(1, ns / this.scale) * hgt;
    } else {
      const u = budget / 4, top = Math.log1p((maxDur * 1.04) / u);
      this.scale = maxDur * 1.04;
      this.yOf = (ns) => base - Math.min(1, Math.log1p(Math.max(0, ns) / u) / top) * hgt;
    }
    return this.yOf;
  }

  // The activity strip: one lane per thread, a bar per time bucket as tall
  // as the thread's top-level scope time in it over the bucket's length.
  _drawActivity(c, m) {
    const A = m.meta.activity, lanes = A.threads;
    this.colFrame = null;
    this.wide = [];
    const top = 2, base = this.h - 14;
    const laneH = lanes.length ? (base - top) / lanes.length : 0;
    this.lanes = lanes.map((l, i) => ({ thread: l.thread, y0: top + i * laneH, y1: top + (i + 1) * laneH }));
    c.font = '10px system-ui, sans-serif';
    lanes.forEach((l, i) => {
      const y1 = top + (i + 1) * laneH - 1, h = Math.max(1, laneH - 2);
      c.fillStyle = `rgba(${colors().accent},0.08)`;
      c.fillRect(0, y1 - h, this.w, h);
      c.fillStyle = `rgb(${colors().accent})`;
      for (let k = 0; k < l.busy_ns.length; k++) {
        const share = Math.min(1, l.busy_ns[k] / A.bucket_ns);
        if (share <= 0) continue;
        const x0 = this._x(A.lo + k * A.bucket_ns), x1 = this._x(A.lo + (k + 1) * A.bucket_ns);
        c.fillRect(x0, y1 - share * h, Math.max(1, x1 - x0 - 0.5), share * h);
      }
      if (laneH >= 10) label(c, m.threadName(l.thread), 3, y1 - h + 10);
    });
    const cut = A.threads_cut ? ` · ${A.threads_cut} more threads not shown` : '';
    const note = `activity per thread: scope time per ${fmt.dur(A.bucket_ns)} (no frames in this capture)${cut}`;
    label(c, note, this.w - c.measureText(note).width - 6, top + 10);
  }

  // What the strip shows, for the tests: its mode and, for activity, each lane's figures.
  stripInfo() {
    const m = this.model, A = m && m.meta.activity;
    const budget = document.getElementById('budget');
    return {
      mode: this.mode,
      range: m ? { lo: m.range.lo, hi: m.range.hi } : null,
      budgetShown: !!(budget && budget.offsetParent !== null),
      budgetY: this.mode === 'frames' && this.budgetY != null ? this.budgetY : null, // px from the strip's top, null when not drawn
      bucketNs: A ? A.bucket_ns : null,
      lanes: A ? A.threads.map((l) => ({ thread: l.thread, name: m.threadName(l.thread), buckets: l.busy_ns.length,
        busyNs: l.busy_ns.reduce((a, b) => a + b, 0), maxShare: Math.max(0, ...l.busy_ns) / A.bucket_ns })) : [],
    };
  }

  // The flame chart's range as a window, the time axis and the brush.
  _drawOverlay(c, m, base) {
    // the flame chart's range
    const v = state.view;
    const vx0 = this._x(v.t0), vx1 = this._x(v.t1);
    const C = colors();
    c.fillStyle = `rgba(${C.accent},0.12)`;
    c.fillRect(vx0, 0, Math.max(1, vx1 - vx0), base);
    c.strokeStyle = `rgba(${C.accent},0.7)`;
    c.strokeRect(vx0 + 0.5, 0.5, Math.max(1, vx1 - vx0 - 1), base - 1);
    // axis
    c.fillStyle = C.dim;
    c.font = '10px system-ui, sans-serif';
    c.textBaseline = 'alphabetic';
    c.fillText(fmt.at(m.range.lo), 2, this.h - 2);
    const endLabel = fmt.at(m.range.hi);
    c.fillText(endLabel, this.w - c.measureText(endLabel).width - 2, this.h - 2);
    if (this.brush) {
      c.fillStyle = C.mark;
      c.fillRect(Math.min(this.brush[0], this.brush[1]), 0, Math.abs(this.brush[1] - this.brush[0]), base);
    }
  }

  // The frame a person points at: the bars at x (and, for thin bars, up to 3
  // px either side); of those whose drawn bar reaches the pointer's height y,
  // the nearest (the slowest at equal distance); when none reaches it (the
  // pointer above them), the tallest. Without y: the nearest.
  frameAtX(x, y = null) {
    const m = this.model;
    if (!m || !this.yOf) return -1;
    const F = m.frames, cand = [];
    for (const k of this.wide || []) {
      if (this._x(F.start[k]) <= x && x < this._x(F.start[k] + F.dur[k])) cand.push([k, 0]);
    }
    for (let dx = -3; dx <= 3 && this.colFrame; dx++) {   // a few pixels of slack for thin bars
      const cx = Math.floor(x) + dx;
      if (cx >= 0 && cx < this.w && this.colFrame[cx] >= 0) cand.push([this.colFrame[cx], Math.abs(dx)]);
    }
    if (!cand.length) return -1;
    const reach = y == null ? cand : cand.filter(([k]) => this.yOf(F.dur[k]) <= y + 1);
    const pool = reach.length ? reach : cand;
    const byNear = (a, b) => a[1] - b[1] || F.dur[b[0]] - F.dur[a[0]];
    const byTall = (a, b) => F.dur[b[0]] - F.dur[a[0]] || a[1] - b[1];
    return pool.sort(reach.length ? byNear : byTall)[0][0];
  }

  activityTitle(x, y) {
    const m = this.model, A = m && m.meta.activity;
    const lane = A && (this.lanes || []).find((l) => y >= l.y0 && y < l.y1);
    if (!lane) return '';
    const k = Math.floor(((m.range.lo + (x / this.w) * (m.range.hi - m.range.lo)) - A.lo) / A.bucket_ns);
    const l = A.threads.find((t) => t.thread === lane.thread);
    if (!l || k < 0 || k >= l.busy_ns.length) return '';
    return `${m.threadName(lane.thread)} · ${fmt.at(A.lo + k * A.bucket_ns)}: ${fmt.dur(l.busy_ns[k])} in scopes ` +
      `(${Math.round((l.busy_ns[k] / A.bucket_ns) * 100)}% of ${fmt.dur(A.bucket_ns)})`;
  }

  _bindStrip() {
    const el = this.canvas;
    let down = null;
    const lx = (e) => e.clientX - el.getBoundingClientRect().left;
    const ly = (e) => e.clientY - el.getBoundingClientRect().top;
    el.addEventListener('pointerdown', (e) => { down = lx(e); el.setPointerCapture(e.pointerId); });
    el.addEventListener('pointermove', (e) => {
      const x = lx(e);
      if (down !== null && Math.abs(x - down) > 4) { this.brush = [down, x]; this.draw(true); }
      if (this.mode === 'activity') { el.title = this.activityTitle(x, e.clientY - el.getBoundingClientRect().top); return; }
      const k = this.frameAtX(x, ly(e));
      el.title = k >= 0 ? frameTitle(this.model, k, state.budgetMs) : '';
    });
    el.addEventListener('pointerup', (e) => {
      const x = lx(e);
      if (this.brush) {
        const r = this.model.range, span = r.hi - r.lo;
        const t0 = r.lo + (Math.min(this.brush[0], this.brush[1]) / this.w) * span;
        const t1 = r.lo + (Math.max(this.brush[0], this.brush[1]) / this.w) * span;
        this.brush = null;
        emit('range', { t0, t1 });
      } else {
        const k = this.frameAtX(x, ly(e));
        if (k >= 0) this.select(k);
      }
      down = null;
      this.draw();
    });
  }

  // >>list
  // Each frame's excess over its norm, from the server (the library's rule); renders again when it arrives.
  _loadExcess() {
    if (this.excess || this.excessLoading) return;
    const m = this.model;
    const why = 'nothing to explain from: the recording stopped (its last snapshot is shown); record again or open a capture';
    this.excessLoading = api.explainable().then((ok) => {
      if (!ok) throw new Error(why);
      return api.json('/api/capture/explain?excess=1');
    }).then((x) => {
      const by = new Map(x.frames.map(([kind, number, thread, ns]) => [`${kind}:${number}:${thread}`, ns]));
      const F = m.frames, ex = new Float64Array(F.rows);
      for (let k = 0; k < F.rows; k++) {
        const f = m.frame(k);
        ex[k] = by.get(`${f.kind}:${f.number}:${f.beginThread}`) ?? NaN;
      }
      if (m === this.model) this.excess = ex;
    }).catch((e) => { this.excessError = e.message || String(e); })
      .then(() => { this.excessLoading = null; if (m === this.model) { this.order = null; this.renderList(); } });
  }

  _order() {
    if (this.order) return this.order;
    const F = this.model.frames;
    const idx = [];
    for (let k = 0; k < F.rows; k++) if (this.shown(k)) idx.push(k);
    const { key, desc } = this.sort;
    const ex = this.excess, byExcess = (k) => (ex && !Number.isNaN(ex[k]) ? ex[k] : desc ? -Infinity : Infinity);
    const val = key === 'excess' ? byExcess : key === 'dur' ? (k) => F.dur[k] : key === 'start' ? (k) => F.start[k]
      : key === 'number' ? (k) => F.number[k] * 4096 + F.thread[k] : (k) => F.kind[k] * 1e12 - F.dur[k];
    idx.sort((a, b) => (desc ? val(b) - val(a) : val(a) - val(b)) || a - b);
    this.order = idx;
    return idx;
  }

  renderList() {
    const m = this.model;
    if (!m) return;
    const order = this._order();
    const arrow = (k) => (this.sort.key === k ? (this.sort.desc ? ' ▾' : ' ▴') : '');
    const F = m.frames;
    let frames = 0;
    for (const k of order) frames += m.frameKinds[F.kind[k]] === m.frameKind();
    const others = order.length - frames;
    const whose = state.frameThread != null ? ` of ${fmt.esc(m.threadName(state.frameThread))}` : '';
    const what = m.meta.frames_are !== 'marks' ? `${fmt.count(order.length)} ${LIST_WHAT[m.meta.frames_are] || ''}${whose}`
      : others ? `${fmt.count(order.length)} rows${whose}: ${fmt.count(frames)} frames (FRAME-mark intervals) and ${fmt.count(others)} operation${others > 1 ? 's' : ''}`
        : `${fmt.count(frames)} frames (FRAME-mark intervals)${whose}`;
    const own = (this.ownPasses ? ` · ${fmt.count(this.ownPasses)} pass scopes are their frames' own: listed once, as the frame` : '') +
      (m.meta.operations_unfinished ? ` · ${fmt.count(m.meta.operations_unfinished)} unfinished (begun, never ended in the capture: not listed)` : '');
    let pick = '';
    if (this.threadCounts.size > 1) {
      const opts = [...this.threadCounts.entries()].sort((a, b) => a[0] - b[0]).map(([t, n]) =>
        `<option value="${t}"${state.frameThread === t ? ' selected' : ''}>${fmt.esc(m.threadName(t))} (${fmt.count(n)})</option>`);
      pick = `<div class="list-head">thread <select id="frame-thread" title="frames of marks are numbered per thread: one thread at a time, or all">` +
        `${opts.join('')}<option value="all"${state.frameThread == null ? ' selected' : ''}>all threads</option></select></div>`;
    }
    const exNote = this.sort.key !== 'excess' ? '' : this.excessError ? ` · no excess: ${fmt.esc(this.excessError)}`
      : !this.excess ? ' · asking for each frame\'s excess…' : ' · sorted by excess over the norm (duration less its peers\' p50)';
    const exButton = this.mode === 'activity' ? '' : ` <button class="link" data-key="excess" title="sort by excess over the norm: ` +
      `each frame's duration less the p50 of the frames of its kind and window (docs/explain.md)">excess${arrow('excess')}</button>`;
    this.listEl.innerHTML =
      `<div class="list-note">${what}${own}${rates(m)}${exButton}${exNote}</div>${pick}` +
      `<table class="frames"><colgroup><col class="c-number"><col class="c-dur"><col class="c-kind"><col class="c-thread"><col class="c-start"></colgroup>` +
      `<thead><tr><th data-key="number" class="num c-number">#${arrow('number')}</th><th data-key="dur" class="num c-dur">duration${arrow('dur')}</th>` +
      `<th data-key="kind" class="c-kind">kind${arrow('kind')}</th><th class="c-thread">thread</th><th data-key="start" class="num c-start">start${arrow('start')}</th></tr></thead>` +
      `<tbody></tbody></table>`;
    this.tbody = this.listEl.querySelector('tbody');
    this.rowsKey = '';
    this.renderRows();
  }

  // The rows in view (and OVERSCAN either side) between two spacers as tall as the rest.
  renderRows() {
    const m = this.model, order = this._order(), tb = this.tbody;
    if (!m || !tb) return;
    const top = tb.offsetTop;   // the body's offset in the scrolled list
    const first = Math.max(0, Math.floor((this.listEl.scrollTop - top) / ROW_H) - OVERSCAN);
    const last = Math.min(order.length, first + Math.ceil(this.listEl.clientHeight / ROW_H) + 2 * OVERSCAN);
    const key = `${first}:${last}:${state.frame}:${state.thresholds.ok}:${state.thresholds.over}`;
    if (key === this.rowsKey) return;
    this.rowsKey = key;
    const pad = (n) => (n > 0 ? `<tr class="pad"><td colspan="5" style="height:${n * ROW_H}px"></td></tr>` : '');
    const rows = [pad(first)];
    for (let r = first; r < last; r++) {
      const f = m.frame(order[r]);
      const cls = this.mode === 'activity' ? '' : fmt.durClass(f.dur, state.thresholds);
      const ex = this.excess && !Number.isNaN(this.excess[f.index]) ? ` title="${this.excess[f.index] >= 0 ? '+' : '−'}${fmt.dur(Math.abs(this.excess[f.index]))} over the norm"` : '';
      rows.push(`<tr data-frame="${f.index}"${f.index === state.frame ? ' class="sel"' : ''}>` +
        `<td class="num c-number">${f.number}</td><td class="num dur c-dur ${cls}"${ex}>${fmt.dur(f.dur)}</td>` +
        `<td class="c-kind"><i class="kdot" style="background:${fmt.KIND_COLORS[f.kind]}"></i>${f.kind}${stateMark(f)}</td>` +
        `<td class="c-thread">${fmt.esc(m.frameWhere(f.index))}</td><td class="num c-start">${fmt.at(f.start)}</td></tr>`);
    }
    rows.push(pad(order.length - last));
    tb.innerHTML = rows.join('');
  }

  // Scrolls the list so that row r (of the order) is in view.
  scrollToRow(r) {
    const y = this.tbody.offsetTop + r * ROW_H, l = this.listEl;
    const head = this.listEl.querySelector('thead').offsetHeight;
    if (y - head < l.scrollTop) l.scrollTop = y - head;
    else if (y + ROW_H > l.scrollTop + l.clientHeight) l.scrollTop = y + ROW_H - l.clientHeight;
    this.renderRows();
  }

  // How many rows the list holds (every one reachable by scrolling).
  listLength() { return this.model ? this._order().length : 0; }

  markSelected() {
    this.rowsKey = '';
    this.renderRows();
  }
}

// Text on a backdrop of the theme, readable over the bars.
function label(c, text, x, y) {
  const w = c.measureText(text).width, C = colors();
  c.fillStyle = C.label;
  c.fillRect(x - 2, y - 9, w + 4, 12);
  c.fillStyle = C.fg;
  c.fillText(text, x, y);
}

const LIST_WHAT = {
  pass_operations: 'operations (passes are the frames, numbered by frame id)',
  marks: 'frames (FRAME-mark intervals) and operations',
  top_level_scopes: 'top-level scopes',
};

// Both frame rates of each series of the frame model (a process's window, or a thread), labelled as
// `strobe report` labels them.
function rates(m) {
  const shown = (r) => state.frameThread == null || r.window != null || r.thread === state.frameThread;
  const out = (m.meta.frame_rates || []).filter(shown).map((r) => {
    const who = r.window != null ? `window ${fmt.esc(r.window)}${r.process != null ? ` (process ${fmt.esc(r.process)})` : ''}` : fmt.esc(m.threadName(r.thread));
    return `<div class="rates" title="fps_first_to_last: frames over the first-to-last frame span (one long stall pulls it down); ` +
      `fps_steady_median_interval: 1 / the median interval between frames">${who}: ` +
      `<b>${r.fps_first_to_last.toFixed(1)}</b> fps first-to-last (${fmt.count(r.frames)} frames in ${fmt.dur(r.span_ns)}) · ` +
      `<b>${r.fps_steady_median_interval.toFixed(1)}</b> fps steady (median interval ${fmt.dur(r.median_interval_ns)})</div>`;
  });
  return out.join('');
}

// An operation's state across threads and processes (the frame model's, docs/frames.md §States) when it
// is not plainly completed: superseded, dropped, handed off, abandoned, presented.
function stateMark(f) {
  return f.op && f.state && f.state !== 'completed' ? ` <span class="fstate fstate-${f.state.replace(/ /g, '-')}" title="docs/frames.md §States">${fmt.esc(f.state)}</span>` : '';
}

export function frameTitle(m, k, budgetMs) {
  const f = m.frame(k);
  const state = f.state && f.state !== 'completed' ? f.state : f.committed ? '' : 'not committed';
  const where = f.op ? `window ${f.window} · ${m.frameWhere(k)}${state ? ` · ${state}` : ''}` : m.threadName(f.thread);
  return `${f.kind} ${f.number} · ${where} · ${fmt.dur(f.dur)} (${(f.dur / (budgetMs * 1e6)).toFixed(2)}× budget) at ${fmt.at(f.start)}`;
}
