// flame.js — owns the flame chart: every thread as a lane of depth rows on
// one time axis, for the selected frame or any time range.
//
// Each redraw culls the model to the visible set once: per lane and depth
// row, a binary search finds the visible spans, and spans narrower than a
// pixel are merged into one bar per pixel (another binary search jumps past
// them), so the work is bounded by pixels, not spans. That one culled set
// feeds both the GPU (gl.js: one instance buffer upload and one draw call
// per lane; canvas2d.js when WebGL2 is missing) and the CPU hit-test arrays,
// so hover and click always agree with what is drawn.
//
// Interaction: wheel or pinch zooms at the pointer (a wheel notch, plain or
// with Ctrl, by the keys' step: WHEEL_RATE), keys as shortcuts.js's
// FLAME_KEYS say (+/- and W/S zoom at the pointer when it is over the chart,
// A/D/arrows pan, 0 the whole capture, Escape clears), drag pans, Shift+wheel scrolls lanes, click selects a span,
// a lane header click collapses it. Tooltip: name, file:line,
// duration, self, values, loop statistics, site totals.

import { state, emit, on } from './state.js';
import { inDurations, lowerBound, spanInfo } from './data.js';
import { GLBars } from './gl.js';
import { FLAG, BAR_KIND, GPU_OVERLAY, STRIDE, WORD } from './bars.js';
import { Canvas2DBars } from './canvas2d.js';
import * as fmt from './fmt.js';
import { colors } from './theme.js';
import { flameAction } from './shortcuts.js';
import { drawThreadRecords, samplerThreads } from './offcpu.js';

const RULER = 22;     // px: time axis
const HEADER = 18;    // px: lane header
const ROW = 18;       // px: one depth row (16 px bar + 2 px gap)
const ZOOM_STEP = 1.25;                       // one zoom key press (W/S, +/-)
const WHEEL_RATE = Math.log(ZOOM_STEP) / 100; // per px of wheel: a 100 px notch is one key step, with Ctrl or not
const EDGE = 0.05;    // the margin past either end of the capture a view may show, as a fraction of the view
const BAR = 16;
const LANE_GAP = 6;
const MINW = 1;       // px: narrower spans are merged per pixel
const LABEL_MIN = 28; // px: bars at least this wide carry their name
const FLOATS = STRIDE; // 32-bit words per bar (bars.js layout)

export class Flame {
  // forceCanvas: Canvas 2D whatever WebGL2 is; forceGL: WebGL2 even when it runs on the CPU.
  constructor(root, { forceCanvas = false, forceGL = false } = {}) {
    this.root = root;
    this.glCanvas = document.createElement('canvas');
    this.ovCanvas = document.createElement('canvas');
    this.glCanvas.className = 'flame-bars';
    this.ovCanvas.className = 'flame-overlay';
    this.tip = document.createElement('div');
    this.tip.className = 'tooltip follow';
    this.tip.hidden = true;
    this.tipSide = -1;
    this.hoverBox = document.createElement('div');   // the hover outline: moved, never redrawn
    this.hoverBox.className = 'hoverbox';
    this.hoverBox.hidden = true;
    root.append(this.glCanvas, this.ovCanvas, this.hoverBox);
    document.body.append(this.tip);   // above every column: never clipped by the flame chart's edges
    this.origin = [0, 0];             // the overlay's client position at the last pointer event
    this.renderer = null;
    this.why = forceCanvas ? 'asked for' : 'WebGL2 unavailable';   // why Canvas 2D draws the bars
    if (!forceCanvas) {   // WebGL on the CPU: Canvas 2D costs it half (gl.js softwareRenderer)
      try { this.renderer = new GLBars(this.glCanvas, { allowSoftware: forceGL }); } catch (e) {
        this.renderer = null;
        if (e.software) this.why = e.message;
      }
    }
    if (!this.renderer) {
      // A canvas that failed to give WebGL2 cannot give 2D either: use a fresh one.
      const c = document.createElement('canvas');
      c.className = 'flame-bars';
      this.glCanvas.replaceWith(c);
      this.glCanvas = c;
      this.renderer = new Canvas2DBars(c);
    }
    this.ov = this.ovCanvas.getContext('2d');
    this.model = null;
    this.lanes = [];
    this.collapsed = new Set();
    this.scrollY = 0;
    this.t0 = 0;
    this.npp = 1;          // ns per CSS px
    this.w = 1;
    this.h = 1;
    this.dpr = 1;
    this.inst = new Float32Array(FLOATS * 4096);
    this.instU = new Uint32Array(this.inst.buffer);
    this.hit = { x: new Float32Array(4096), w: new Float32Array(4096), idx: new Int32Array(4096),
                 cnt: new Int32Array(4096), kind: new Uint8Array(4096) };
    this.n = 0;
    this.rowRuns = [];     // per lane: [[y, from, to] per depth row] in instance indexes
    this.labels = [];
    this.hover = -1;       // instance index under the pointer
    this.dirty = true;
    this.hitStats = { n: 0, totalUs: 0, lastUs: 0, all: [] };   // all: each move's µs (the bench's median)
    this.frameStats = { frames: 0 };
    this.colorOf = new Uint32Array(65536);
    this.match = new Uint8Array(65536);
    this.nameW = new Float32Array(65536);
    this._bind();
    on('search', () => { this._updateMatch(); this.invalidate(); });
    on('span', () => this.invalidate());
    on('theme', () => this.invalidate());
    on('reveal', (i) => this.reveal(i));
    new ResizeObserver(() => this.resize()).observe(root);
    this.resize();
  }

  setModel(model) {
    this.model = model;
    this.colorOf.fill(0);
    this.nameW.fill(0);
    for (const s of model.meta.sites) {
      const [r, g, b] = model.siteRGB[s.id];
      this.colorOf[s.id] = (r | (g << 8) | (b << 16) | (255 << 24)) >>> 0;
    }
    this._updateMatch();
    this._layout();
    this.scrollY = 0;
    this.setRange(model.range.lo, model.range.hi);
  }

  _updateMatch() {
    this.match.fill(0);
    this.searching = !!state.search || !!state.element || state.focusSite != null;
    if (this.model && state.focusSite != null) { this.match[state.focusSite] = 1; return; }  // the statistics table's row (search.js)
    if (!this.model || !state.search) return;
    for (const s of this.model.meta.sites) if (s.name.toLowerCase().includes(state.search)) this.match[s.id] = 1;
  }

  _layout() {
    const m = this.model;
    this.lanes = [];
    let y = 0;
    for (const th of m.threads) {
      if (!th || !th.rows.length) continue;
      const collapsed = this.collapsed.has(th.index);
      const rows = collapsed ? 0 : th.rows.length;
      const h = HEADER + rows * ROW + LANE_GAP;
      this.lanes.push({ thread: th.index, y, h, rows, collapsed, name: m.threadName(th.index) });
      y += h;
    }
    this.contentH = y;
  }

  // Where each lane is drawn now: [{thread, name, y0, y1}], px from the canvas top (the test hook's lanes()).
  laneBoxes() {
    return this.lanes.map((l) => ({ thread: l.thread, name: l.name, y0: RULER + l.y - this.scrollY, y1: RULER + l.y - this.scrollY + l.h - LANE_GAP }));
  }

  // >>view
  setRange(t0, t1) {
    const span = Math.max(t1 - t0, 1e-3);
    this.t0 = t0;
    this.npp = span / Math.max(1, this.w);
    this._clamp();
    this.invalidate();
  }

  // Shows span i (a search match stepped to): the view zooms to fit it, a quarter
  // of its length spare on each side; its lane is scrolled into view.
  reveal(i) {
    const m = this.model;
    if (!m || i < 0 || i >= m.n) return;
    const s = m.start[i], e = m.end(i);
    this.setRange(s - (e - s) * 0.25, e + (e - s) * 0.25);
    if (this.collapsed.delete(m.threadOf(i))) this._layout();
    const lane = this.lanes.find((l) => l.thread === m.threadOf(i));
    if (lane) {
      const y = lane.y + HEADER + m.depth[i] * ROW, top = this.scrollY, bottom = this.scrollY + this.h - RULER - ROW;
      if (y < top || y > bottom) this.scrollY = y - (this.h - RULER) / 3;
      this._clamp();
    }
    this.invalidate();
  }

  visibleRange() { return { t0: this.t0, t1: this.t0 + this.npp * this.w }; }

  zoom(factor, x = this.w / 2) {
    const t = this.t0 + x * this.npp;
    this.npp *= factor;
    this.t0 = t - x * this.npp;
    this._clamp();
    this.invalidate();
  }

  pan(dx, dy = 0) {
    this.t0 += dx * this.npp;
    this.scrollY += dy;
    this._clamp();
    this.invalidate();
  }

  _clamp() {
    if (!this.model) return;
    const r = this.model.range, span = r.hi - r.lo;
    // Zoomed out, the whole capture with EDGE on each side; panned, at most EDGE of the view past an end.
    const maxNpp = (span * (1 + 2 * EDGE)) / Math.max(1, this.w);
    this.npp = Math.min(Math.max(this.npp, 0.02), Math.max(maxNpp, 0.02));
    const vis = this.npp * this.w;
    const lo = r.lo - EDGE * vis, hi = r.hi + EDGE * vis - vis;
    this.t0 = Math.min(Math.max(this.t0, lo), Math.max(lo, hi));
    const maxScroll = Math.max(0, this.contentH - (this.h - RULER) + 20);
    this.scrollY = Math.min(Math.max(this.scrollY, 0), maxScroll);
    state.view = this.visibleRange();
  }

  resize() {
    const r = this.root.getBoundingClientRect();
    const keep = this.model ? this.visibleRange() : null;
    this.w = Math.max(1, Math.floor(r.width));
    this.h = Math.max(1, Math.floor(r.height));
    this.dpr = window.devicePixelRatio || 1;
    this.renderer.resize(this.w, this.h, this.dpr);
    this.ovCanvas.width = Math.round(this.w * this.dpr);
    this.ovCanvas.height = Math.round(this.h * this.dpr);
    for (const c of [this.glCanvas, this.ovCanvas]) {
      c.style.width = this.w + 'px';
      c.style.height = this.h + 'px';
    }
    if (keep) this.setRange(keep.t0, keep.t1);
    this.invalidate();
  }

  invalidate() {
    if (this.dirty && this.raf) return;
    this.dirty = true;
    if (!this.raf) this.raf = requestAnimationFrame(() => { this.raf = 0; this.render(); });
  }

  // >>cull: the visible set, into this.inst (GPU) and this.hit (CPU)
  _grow(need) {
    if (need <= this.hit.x.length) return;
    let n = this.hit.x.length;
    while (n < need) n *= 2;
    const inst = new Float32Array(n * FLOATS);
    inst.set(this.inst);
    this.inst = inst;
    this.instU = new Uint32Array(inst.buffer);
    for (const [k, C] of [['x', Float32Array], ['w', Float32Array], ['idx', Int32Array], ['cnt', Int32Array], ['kind', Uint8Array]]) {
      const a = new C(n);
      a.set(this.hit[k]);
      this.hit[k] = a;
    }
  }

  _emit(x, y, w, color, flags, idx, cnt, kind) {
    const k = this.n++;
    if (k >= this.hit.x.length) this._grow(k + 1);
    const o = k * FLOATS;
    const f = this.inst;
    f[o + WORD.X] = x; f[o + WORD.Y] = y; f[o + WORD.W] = w; f[o + WORD.H] = BAR;
    this.instU[o + WORD.COLOR] = color;
    this.instU[o + WORD.FLAGS] = flags;
    this.hit.x[k] = x; this.hit.w[k] = w; this.hit.idx[k] = idx; this.hit.cnt[k] = cnt; this.hit.kind[k] = kind;
  }

  _flags(i, site) {
    let f = 0;
    if (i === state.span) f |= FLAG.SELECTED;
    if (this.searching) f |= this._matches(i, site) ? FLAG.MATCH : FLAG.DIM;
    return f;
  }

  // Whether span i is lit: of the filtered element, or of a site the search matches.
  _matches(i, site) {
    if (state.element) { const e = this.model.elementOf(i); return !!e && e.id === state.element; }
    const sc = state.focusScope;   // a statistics row lights its site's spans inside its scope alone
    if (sc && this.match[site] && i >= 0) {
      const m = this.model, eps = 1e-6 * Math.max(1, sc.t1 - sc.t0);
      if (!inDurations(sc, m.dur[i])) return false;   // a histogram bar's spans alone
      if (sc.parts) { // a frame handed between processes: each part on its thread (aggregate.js)
        const th = m.threadOf(i);
        return sc.parts.some((p) => p.thread === th && m.start[i] >= p.t0 - eps && m.end(i) <= p.t1 + eps);
      }
      return m.start[i] >= sc.t0 - eps && m.end(i) <= sc.t1 + eps && (sc.thread == null || m.threadOf(i) === sc.thread);
    }
    return !!this.match[site];
  }

  // One row: spans at least MINW px wide are bars of their own; narrower ones
  // are merged per pixel, and merged pixels that touch coalesce into one
  // "dense" bar (kind 1: spans [idx, idx + cnt) of this row), as Tracy draws
  // zone clusters. So a row costs at most one bar per visible span >= 1 px
  // plus one per dense stretch, whatever the number of spans in it.
  _cullRow(thread, depth, y) {
    const m = this.model, S = m.start, D = m.dur, SITE = m.site;
    const t0 = this.t0, npp = this.npp, tEnd = t0 + npp * this.w;
    const [from, to] = m.rowRange(thread, depth, t0, tEnd);
    const hit = this.hit;
    let dense = -1;              // instance index of the dense bar being extended, or -1
    let i = from;
    while (i < to) {
      const st = S[i];
      const x0 = (st - t0) / npp, x1 = (st + D[i] - t0) / npp;
      if (x1 - x0 >= MINW) {
        const cx0 = Math.max(x0, -4), cx1 = Math.min(x1, this.w + 4);
        this._emit(cx0, y, cx1 - cx0, this.colorOf[SITE[i]], this._flags(i, SITE[i]), i, 1, BAR_KIND.SPAN);
        if (cx1 - cx0 >= LABEL_MIN) this.labels.push(this.n - 1);
        dense = -1;
        i++;
        continue;
      }
      // Narrower than a pixel: take every span that starts before the next pixel boundary.
      const tNext = t0 + (Math.floor(x0) + 1) * npp;
      let j = lowerBound(i + 1, to, tNext, (k) => S[k]);
      if (j - 1 > i && D[j - 1] / npp >= MINW) j--; // the last may be wide: it gets its own bar
      const xe = Math.max(x0 + MINW, (S[j - 1] + D[j - 1] - t0) / npp);
      let flags = FLAG.MERGED;
      if (this.searching) {
        let any = 0;
        for (let k = i; k < j && !any; k++) any = this._matches(k, SITE[k]);
        flags |= any ? FLAG.MATCH : FLAG.DIM;
      }
      const last = this.n - 1;
      if (dense >= 0 && dense === last && x0 <= hit.x[last] + hit.w[last] + 1) {
        // touches the dense bar before it: extend that one
        hit.w[last] = xe - hit.x[last];
        this.inst[last * FLOATS + WORD.W] = hit.w[last];
        hit.cnt[last] += j - i;
        const fw = last * FLOATS + WORD.FLAGS;
        if (flags & FLAG.MATCH) this.instU[fw] = (this.instU[fw] & ~FLAG.DIM) | FLAG.MATCH;
      } else if (j === i + 1) {
        // a lone narrow span: 1 px, still selectable as itself
        this._emit(x0, y, MINW, this.colorOf[SITE[i]], this._flags(i, SITE[i]) | FLAG.MERGED, i, 1, BAR_KIND.SPAN);
        dense = this.n - 1;
      } else {
        this._emit(x0, y, xe - x0, this.colorOf[SITE[i]], flags, i, j - i, BAR_KIND.DENSE);
        dense = this.n - 1;
      }
      if (dense === last && hit.kind[last] === BAR_KIND.SPAN) hit.kind[last] = BAR_KIND.DENSE; // a lone span that grew into a dense bar
      i = j;
    }
  }

  _cull() {
    this.n = 0;
    this.labels.length = 0;
    this.rowRuns = [];
    this.laneRuns = [];
    const m = this.model;
    const t0 = this.t0, tEnd = t0 + this.npp * this.w;
    for (let L = 0; L < this.lanes.length; L++) {
      const lane = this.lanes[L];
      const top = RULER + lane.y - this.scrollY;
      const runs = [];
      const laneFrom = this.n;
      if (top < this.h && top + lane.h > RULER) {
        for (let d = 0; d < lane.rows; d++) {
          const y = top + HEADER + d * ROW;
          const from = this.n;
          if (y + ROW > RULER && y < this.h) this._cullRow(lane.thread, d, y);
          runs.push([y, from, this.n]);
        }
        // Open scopes (unfinished, END lost, or unwound): hatched, from begin to the last time known open.
        const op = m.open;
        for (let k = 0; k < op.rows; k++) {
          if (op.thread[k] !== lane.thread || lane.collapsed) continue;
          const s = op.start[k], u = Math.max(op.until[k], s);
          if (u < t0 || s > tEnd) continue;
          const y = top + HEADER + op.depth[k] * ROW;
          const x0 = Math.max((s - t0) / this.npp, -4), x1 = Math.min((u - t0) / this.npp, this.w + 4);
          this._emit(x0, y, Math.max(MINW, x1 - x0), this.colorOf[op.site[k]], FLAG.OPEN | this._flags(-2, op.site[k]), k, 1, BAR_KIND.OPEN);
        }
      }
      this.rowRuns.push(runs);
      this.laneRuns.push([laneFrom, this.n, Math.max(top, RULER), Math.min(top + lane.h, this.h) - Math.max(top, RULER)]);
    }
  }

  // >>render
  render() {
    if (!this.model) return;
    this.dirty = false;
    this.hover = -1;            // instance indexes change with every cull
    this.tipK = -1;
    this._cull();
    const r = this.renderer;
    r.begin();
    for (let L = 0; L < this.laneRuns.length; L++) {
      const [from, to, clipY, clipH] = this.laneRuns[L];
      if (to > from && clipH > 0) r.drawLane(L, this.instU.subarray(from * FLOATS, to * FLOATS), to - from, clipY, clipH);
    }
    r.end();
    this._overlay();
    this.frameStats.frames++;
    emit('view', this.visibleRange());
  }

  _overlay() {
    const c = this.ov, w = this.w, h = this.h;
    c.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    c.clearRect(0, 0, w, h);
    const m = this.model, C = colors();
    // selected frame: shade outside it
    this.frameBands = [];
    if (state.frame >= 0 && state.frame < m.frames.rows) {
      const f = m.frame(state.frame);
      const x0 = (f.start - this.t0) / this.npp, x1 = (f.end - this.t0) / this.npp;
      c.fillStyle = C.shade;
      if (x0 > 0) c.fillRect(0, RULER, Math.min(x0, w), h);
      if (x1 < w) c.fillRect(Math.max(x1, 0), RULER, w, h);
      if (f.remote) this._handoffBands(c, m, f, w, h, C);
    }
    // labels
    c.font = '11px system-ui, sans-serif';
    c.textBaseline = 'middle';
    c.fillStyle = C.ink;
    const f = this.inst;
    for (const k of this.labels) {
      const i = this.hit.idx[k];
      const site = m.site[i];
      const o = k * FLOATS;
      const x = Math.max(f[o + WORD.X], 0), bw = f[o + WORD.X] + f[o + WORD.W] - x;
      if (bw < LABEL_MIN) continue;
      let text = m.sites[site] ? m.sites[site].name : '?';
      if (!this.nameW[site]) this.nameW[site] = c.measureText(text).width || 1;
      const avail = bw - 8;
      if (this.nameW[site] > avail) {
        const chars = Math.floor(avail / 6.2);
        if (chars < 2) continue;
        text = text.slice(0, chars - 1) + '…';
      }
      c.fillStyle = this.searching && !this.match[site] ? C.dim : C.ink;
      c.fillText(text, x + 4, f[o + WORD.Y] + BAR / 2 + 0.5);
    }
    this._gpuFrames(c, w, h);
    this._samplerRecords(c, w, h, false);
    this._rangeBand(c, w, h, C);
    // lane headers
    for (const lane of this.lanes) {
      const top = RULER + lane.y - this.scrollY;
      if (top + HEADER < RULER || top > h) continue;
      c.fillStyle = C.panel;
      c.fillRect(0, top, w, HEADER - 2);
      c.fillStyle = C.fg;
      c.font = '600 11px system-ui, sans-serif';
      const th = m.threads[lane.thread];
      const extra = th.lost ? `  ·  ${fmt.count(th.lost)} events lost` : '';
      const who = th.gpu_lane ? 'GPU queue, shaded: queue backlog (amber), polling latency (blue)'
        : th.fiber ? 'fiber: its own scope stack, resumed on any thread'
        : th.producer_lane ? 'external producer' : `tid ${th.os_tid}`;
      c.fillText(`${lane.collapsed ? '▸' : '▾'} ${lane.name}  ·  ${who}${extra}`, 6, top + HEADER / 2);
      c.font = '11px system-ui, sans-serif';
    }
    this._samplerRecords(c, w, h, true);
    this._ruler(c, w);
    this._hoverBox();
  }

  // An operation handed between processes (docs/viewer.md §Across processes): its part on each
  // process's lane outlined (the origin's from its start to the hand-off, the finisher's from the
  // resume to its end) and the hand-off gap between them hatched across both lanes, labelled.
  // What is drawn is kept in this.frameBands (the test hook's frameBands()).
  _handoffBands(c, m, f, w, h, C) {
    const segs = m.frameSegments(f.index), ho = m.handoffOf(f.index);
    const laneBox = (thread) => {
      const lane = this.lanes.find((l) => l.thread === thread);
      return lane ? { y0: RULER + lane.y - this.scrollY, y1: RULER + lane.y - this.scrollY + lane.h - LANE_GAP } : null;
    };
    const xs = (t) => (t - this.t0) / this.npp;
    const boxes = [];
    c.save();
    c.beginPath();
    c.rect(0, RULER, w, h - RULER);
    c.clip();
    c.strokeStyle = C.select;
    c.lineWidth = 2;
    c.font = '11px system-ui, sans-serif';
    c.textBaseline = 'middle';
    for (const s of segs) {
      const b = laneBox(s.thread);
      if (!b) continue;
      const x0 = xs(s.t0), x1 = xs(s.t1);
      c.strokeRect(x0, b.y0 + 1, Math.max(1, x1 - x0), b.y1 - b.y0 - 2);
      boxes.push(b);
      this.frameBands.push({ part: s.part, thread: s.thread, t0: s.t0, t1: s.t1, x0, x1, y0: b.y0, y1: b.y1 });
    }
    if (ho && ho.resumed !== null && boxes.length) {
      const y0 = Math.min(...boxes.map((b) => b.y0)), y1 = Math.max(...boxes.map((b) => b.y1));
      const x0 = xs(ho.handed), x1 = xs(ho.resumed);
      c.fillStyle = `rgba(${C.accent},0.18)`;
      c.fillRect(x0, y0, Math.max(1, x1 - x0), y1 - y0);
      c.strokeStyle = `rgba(${C.accent},0.7)`;
      c.lineWidth = 1;
      c.beginPath();
      for (let x = x0 - (y1 - y0); x < x1; x += 8) { // hatch, clipped to the gap
        c.moveTo(Math.max(x, x0), y1 - Math.max(0, x0 - x));
        c.lineTo(Math.min(x + (y1 - y0), x1), y0 + Math.max(0, x + (y1 - y0) - x1));
      }
      c.stroke();
      const label = `hand-off gap ${fmt.dur(ho.gap)} (${ho.origin ?? '?'} → ${ho.finisher ?? '?'})`;
      const fb = laneBox(f.thread); // on the finisher's first row, before it resumed
      if (fb && x1 - x0 > c.measureText(label).width + 8) {
        c.fillStyle = C.ink;
        c.fillText(label, Math.max(x0, 0) + 4, fb.y0 + HEADER + BAR / 2 + 1);
      }
      this.frameBands.push({ part: 'gap', thread: null, t0: ho.handed, t1: ho.resumed, x0, x1, y0, y1 });
    }
    c.restore();
  }

  // >>gpu (docs/gpu.md): on the first GPU lane, each visible frame's queue
  // backlog (submit to GPU start) and polling latency (GPU end to fence seen)
  // shaded apart from the GPU work, and its cpu_end, submit and fence_seen
  // instants as ticks; a frame whose instants are out of order ticks in red.
  // Rows of meta.gpu.frames: [frame_id, cpu_end, submit, gpu_begin, gpu_end,
  // fence_seen, bound, violations], ns since the capture start, null unknown.
  _gpuFrames(c, w, h) {
    const m = this.model, g = m.meta.gpu;
    if (!g || !g.frames.length) return;
    const lane = this.lanes.find((l) => m.threads[l.thread] && m.threads[l.thread].gpu_lane);
    if (!lane) return;
    const top = Math.max(RULER, RULER + lane.y - this.scrollY + HEADER);
    const bottom = Math.min(h, RULER + lane.y - this.scrollY + lane.h - LANE_GAP);
    if (bottom <= top) return;
    const t1 = this.t0 + this.npp * w, x = (t) => (t - this.t0) / this.npp;
    const shade = (from, to, colour) => {
      if (from == null || to == null || !(to > from) || to < this.t0 || from > t1) return;
      c.fillStyle = colour;
      c.fillRect(x(from), top, Math.max(1, x(to) - x(from)), bottom - top);
    };
    for (const [, cpuEnd, submit, gpuBegin, gpuEnd, fence, , bad] of g.frames) {
      shade(submit, gpuBegin, GPU_OVERLAY.backlog);
      shade(gpuEnd, fence, GPU_OVERLAY.polling);
      for (const [t, colour] of [[cpuEnd, GPU_OVERLAY.cpu_end], [submit, GPU_OVERLAY.submit], [fence, GPU_OVERLAY.fence_seen]]) {
        if (t == null || t < this.t0 || t > t1) continue;
        c.fillStyle = bad ? GPU_OVERLAY.violation : colour;
        c.fillRect(Math.round(x(t)), top, 1, bottom - top);
      }
    }
  }

  // >>samples (docs/viewer.md §Samples, offcpu.js): each lane's off-CPU gaps
  // shaded over its spans, and (ticks, after the headers) its sample ticks
  // along the foot of its header.
  _samplerRecords(c, w, h, ticks) {
    const by = samplerThreads(this.model);
    if (!by) return;
    for (const lane of this.lanes) {
      const th = by.get(lane.thread);
      const top = RULER + lane.y - this.scrollY;
      if (!th || top > h || top + lane.h < RULER) continue;
      c.save();
      c.beginPath();
      c.rect(0, RULER, w, h - RULER);
      c.clip();
      if (ticks) drawThreadRecords(c, { t: th.t, off: [] }, 0, top, top + HEADER - 2, this.t0, this.npp, w, 4);
      else drawThreadRecords(c, th, 0, top + HEADER, top + lane.h - LANE_GAP, this.t0, this.npp, w, 0);
      c.restore();
    }
  }

  // The selected range: a tinted band with its edges and length on the ruler.
  _rangeBand(c, w, h, C) {
    const r = state.range;
    if (!r) return;
    const x0 = (r.t0 - this.t0) / this.npp, x1 = (r.t1 - this.t0) / this.npp;
    if (x1 < 0 || x0 > w) return;
    c.fillStyle = `rgba(${C.accent},0.16)`;
    c.fillRect(x0, RULER, x1 - x0, h - RULER);
    c.fillStyle = `rgba(${C.accent},0.9)`;
    c.fillRect(Math.round(x0), RULER, 1, h - RULER);
    c.fillRect(Math.round(x1), RULER, 1, h - RULER);
  }

  _hoverBox() {
    const k = this.hover, b = this.hoverBox;
    if (k < 0 || k >= this.n) { b.hidden = true; return; }
    const o = k * FLOATS, f = this.inst;
    b.hidden = false;
    b.style.transform = `translate(${f[o + WORD.X]}px, ${f[o + WORD.Y]}px)`;
    b.style.width = `${Math.max(1, f[o + WORD.W])}px`;
  }

  _ruler(c, w) {
    const C = colors();
    c.fillStyle = C.bg;
    c.fillRect(0, 0, w, RULER);
    c.strokeStyle = C.line;
    c.beginPath();
    c.moveTo(0, RULER - 0.5);
    c.lineTo(w, RULER - 0.5);
    c.stroke();
    // a "nice" step: 1, 2 or 5 x 10^k ns, about 110 px apart
    const raw = this.npp * 110;
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = raw / p < 2 ? p : raw / p < 5 ? 2 * p : 5 * p;
    const first = Math.ceil(this.t0 / step) * step;
    c.fillStyle = C.dim;
    c.font = '10px system-ui, sans-serif';
    c.textBaseline = 'middle';
    for (let t = first; t < this.t0 + this.npp * w; t += step) {
      const x = Math.round((t - this.t0) / this.npp) + 0.5;
      c.fillRect(x, RULER - 6, 1, 6);
      c.fillText(fmt.tick(t, step), x + 3, RULER / 2 - 1);
    }
    const r = state.range;
    if (r) {   // the selected range on the ruler, with its length
      const x0 = Math.max(0, (r.t0 - this.t0) / this.npp), x1 = Math.min(w, (r.t1 - this.t0) / this.npp);
      if (x1 > x0) {
        c.fillStyle = `rgba(${C.accent},0.85)`;
        c.fillRect(x0, RULER - 5, x1 - x0, 5);
        const text = fmt.dur(r.t1 - r.t0);
        c.fillStyle = C.fg;
        c.fillText(text, Math.min(w - 60, Math.max(2, (x0 + x1) / 2 - 20)), RULER / 2 - 1);
      }
    }
  }

  // >>hit: the same culled set the GPU drew
  hitTest(x, y) {
    if (y < RULER) return -1;
    let L = -1;
    for (let k = 0; k < this.lanes.length; k++) {
      const top = RULER + this.lanes[k].y - this.scrollY;
      if (y >= top && y < top + this.lanes[k].h) { L = k; break; }
    }
    if (L < 0) return -1;
    const top = RULER + this.lanes[L].y - this.scrollY;
    if (y < top + HEADER) return { header: L };
    const d = Math.floor((y - top - HEADER) / ROW);
    if (y - top - HEADER - d * ROW > BAR) return -1;
    const runs = this.rowRuns[L];
    if (runs && runs[d]) {
      const [, from, to] = runs[d];
      const hx = this.hit.x, hw = this.hit.w;
      // bars of a row ascend in x: last bar starting at or before x
      let lo = from, hi = to;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (hx[mid] <= x) lo = mid + 1;
        else hi = mid;
      }
      const k = lo - 1;
      if (k >= from && x < hx[k] + Math.max(hw[k], MINW)) return k;
    }
    // open scopes of this lane (few): linear
    const [lf, lt] = this.laneRuns[L];
    for (let k = lf; k < lt; k++) {
      if (this.hit.kind[k] !== BAR_KIND.OPEN) continue;
      const o = k * FLOATS;
      if (Math.abs(this.inst[o + WORD.Y] - (top + HEADER + d * ROW)) < 1 && x >= this.hit.x[k] && x < this.hit.x[k] + this.hit.w[k]) return k;
    }
    return -1;
  }

  // The tooltip of instance k at pointer (px, py). Its text is rebuilt only
  // when the bar changes, and it is placed without measuring it (CSS
  // percentages of its own size flip it left or up near the edges), so a
  // pointer move never forces a layout.
  _tooltip(k, px, py) {
    if (k !== this.tipK) {
      this._tipShow(this._tooltipInfo(k));
      this.tipK = k;
    }
    if (this.tip.hidden) this.tip.hidden = false;
    // Client coordinates, right of / below the pointer in the flame chart's
    // left part / upper part, else left of / above it; then clamped to the
    // window (CSS clamp() of the tooltip's own size: no layout read). The
    // expression is viewer.css's (.tooltip.follow): a move sets the pointer's
    // position as two plain lengths and the side only when it flips, so no
    // CSS expression is parsed per move.
    const s = this.tip.style;
    s.setProperty('--px', `${this.origin[0] + px}px`);
    s.setProperty('--py', `${this.origin[1] + py}px`);
    const side = (px < this.w * 0.6 ? 1 : 0) | (py < this.h * 0.55 ? 2 : 0);
    if (side !== this.tipSide) {
      s.setProperty('--ox', side & 1 ? '14px' : 'calc(-100% - 10px)');
      s.setProperty('--oy', side & 2 ? '14px' : 'calc(-100% - 10px)');
      this.tipSide = side;
    }
  }

  // Fills the tooltip's DOM, built once and reused: only text that changed
  // is written (a pointer move must stay well under 200 µs).
  _tipShow(t) {
    // Each element holds one text node whose data is replaced (cheaper than textContent, which replaces the node).
    const text = (el) => { el.append(document.createTextNode('')); return el; };
    if (!this.tipEl) {
      this.tip.innerHTML = '<b></b> <span class="dim"></span><div class="dim"></div><div class="warn"></div><table></table>';
      const [title, cat, where, warn, table] = this.tip.children;
      this.tipEl = { title: text(title), cat: text(cat), where: text(where), warn: text(warn), table, rows: [] };
    }
    const e = this.tipEl;
    const put = (el, s) => { const n = el.firstChild; if (n.data !== s) n.data = s; };
    put(e.title, t.title);
    put(e.cat, t.cat || '');
    put(e.where, t.where || '');
    put(e.warn, t.warn || '');
    if (e.warn.hidden !== !t.warn) e.warn.hidden = !t.warn;
    while (e.rows.length < t.rows.length) {
      const tr = e.table.insertRow();
      e.rows.push([tr, text(tr.insertCell()), text(tr.insertCell())]);
    }
    for (let r = 0; r < e.rows.length; r++) {
      const [tr, a, b] = e.rows[r];
      const show = r < t.rows.length;
      if (tr.hidden === show) tr.hidden = !show;
      if (show) {
        put(a, t.rows[r][0]);
        put(b, t.rows[r][1]);
      }
    }
  }

  _tooltipInfo(k) {
    const m = this.model, h = this.hit;
    const kind = h.kind[k], i = h.idx[k];
    if (kind === BAR_KIND.DENSE) {
      // Summed only for small clusters: a dense bar may hold a million spans.
      const n = h.cnt[k], last = i + n - 1;
      let total = -1;
      if (n <= 256) {
        total = 0;
        for (let j = i; j <= last; j++) total += m.dur[j];
      }
      return { title: `${fmt.count(n)} spans`, cat: 'narrower than a pixel', where: 'click to zoom in',
               rows: [...(total >= 0 ? [['in spans', fmt.dur(total)]] : []), ['from', fmt.at(m.start[i])], ['to', fmt.at(m.end(last))]] };
    }
    if (kind === BAR_KIND.OPEN) {
      const op = m.open, s = m.sites[op.site[i]];
      const R = m.openReasons;
      const why = op.reason[i] === R.lost ? 'its END was lost (events dropped)'
        : op.reason[i] === R.cut ? 'cut: past --max-spans'
        : op.reason[i] === R.unwound ? 'unwound: a longjmp, exception or thread exit skipped its END; closed when found'
        : 'unfinished: still open when the capture ended';
      return { title: s ? s.name : '?', where: s ? `${s.file}:${s.line}` : '', warn: `no duration — ${why}`,
               rows: [['open from', fmt.at(op.start[i])], ['until at least', fmt.at(op.until[i])]] };
    }
    return spanInfo(m, i);
  }

  // >>input
  _bind() {
    const el = this.ovCanvas;
    el.tabIndex = 0;
    let drag = null;
    const pointers = new Map();
    const local = (e) => {
      const r = el.getBoundingClientRect();
      this.origin[0] = r.left;
      this.origin[1] = r.top;
      return [e.clientX - r.left, e.clientY - r.top];
    };
    el.addEventListener('wheel', (e) => {
      e.preventDefault();
      const [x] = local(e);
      const px = e.deltaMode === 1 ? 33 : e.deltaMode === 2 ? this.h : 1;   // lines or pages as px
      // Ctrl+wheel (and a trackpad's pinch, which browsers send as one) zooms by the same rate as the wheel.
      if (e.ctrlKey) this.zoom(Math.exp(e.deltaY * px * WHEEL_RATE), x);
      else if (e.shiftKey) this.pan(0, e.deltaY * px);
      else if (Math.abs(e.deltaX) > Math.abs(e.deltaY)) this.pan(e.deltaX * px);
      else this.zoom(Math.exp(e.deltaY * px * WHEEL_RATE), x);
    }, { passive: false });
    el.addEventListener('pointerdown', (e) => {
      el.focus();
      pointers.set(e.pointerId, local(e));
      el.setPointerCapture(e.pointerId);
      const [x, y] = local(e);
      // Shift+drag selects a time range (range.js shows its statistics) instead of panning.
      const range = e.shiftKey && pointers.size === 1 ? this.t0 + x * this.npp : null;
      drag = { x, y, moved: false, pinch: pointers.size === 2 ? this._pinchDist(pointers) : 0, range };
    });
    el.addEventListener('pointermove', (e) => {
      const [x, y] = local(e);
      this.pointerX = x;   // the zoom keys zoom here (key)
      if (pointers.has(e.pointerId)) pointers.set(e.pointerId, [x, y]);
      if (drag && pointers.size === 2) {                              // touch pinch
        const d = this._pinchDist(pointers);
        if (drag.pinch > 0 && d > 0) this.zoom(drag.pinch / d, x);
        drag.pinch = d;
        drag.moved = true;
        return;
      }
      if (drag && drag.range != null && pointers.has(e.pointerId)) {
        if (Math.abs(x - drag.x) > 3) drag.moved = true;
        if (drag.moved) this.selectRange(drag.range, this.t0 + x * this.npp, false);
        return;
      }
      if (drag && pointers.has(e.pointerId)) {
        const dx = x - drag.x, dy = y - drag.y;
        if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
        if (drag.moved) {
          this.pan(-dx, -dy);
          drag.x = x;
          drag.y = y;
          this.tip.hidden = true;
        }
        return;
      }
      this.pointerMove(x, y);
    });
    const up = (e) => {
      pointers.delete(e.pointerId);
      if (drag && drag.range != null && drag.moved) {
        const [x] = local(e);
        this.selectRange(drag.range, this.t0 + x * this.npp, true);
      } else if (drag && !drag.moved && pointers.size === 0) {
        const [x, y] = local(e);
        this.click(x, y);
      }
      if (pointers.size === 0) drag = null;
    };
    el.addEventListener('pointerup', up);
    el.addEventListener('pointercancel', up);
    el.addEventListener('pointerleave', () => {
      this.pointerX = null;
      this.tip.hidden = true;
      if (this.hover >= 0) { this.hover = -1; this._hoverBox(); }
    });
    el.addEventListener('keydown', (e) => this.key(e));
  }

  _pinchDist(p) {
    const [a, b] = [...p.values()];
    return Math.hypot(a[0] - b[0], a[1] - b[1]);
  }

  // Hover: hit-test and tooltip; its cost is what viewer_hit_test_us measures.
  pointerMove(x, y) {
    const t = performance.now();
    const k = this.hitTest(x, y);
    const hk = typeof k === 'number' ? k : -1;
    if (hk >= 0) this._tooltip(hk, x, y);
    else this.tip.hidden = true;
    if (hk !== this.hover) {
      this.hover = hk;
      this._hoverBox();
    }
    const us = (performance.now() - t) * 1000;
    this.hitStats.n++;
    this.hitStats.totalUs += us;
    this.hitStats.lastUs = us;
    if (this.hitStats.all && this.hitStats.all.length < 4096) this.hitStats.all.push(us);
    return hk;
  }

  click(x, y) {
    const k = this.hitTest(x, y);
    if (k && typeof k === 'object') {
      const lane = this.lanes[k.header];
      if (this.collapsed.has(lane.thread)) this.collapsed.delete(lane.thread);
      else this.collapsed.add(lane.thread);
      this._layout();
      this._clamp();
      this.invalidate();
      return;
    }
    let span = -1;
    if (k >= 0 && this.hit.kind[k] === BAR_KIND.SPAN) span = this.hit.idx[k];
    else if (k >= 0 && this.hit.kind[k] === BAR_KIND.DENSE) {          // merged: zoom into it
      const i = this.hit.idx[k], j = i + this.hit.cnt[k] - 1;
      const m = this.model;
      this.setRange(m.start[i] - (m.end(j) - m.start[i]) * 0.1, m.end(j) + (m.end(j) - m.start[i]) * 0.1);
      return;
    }
    state.span = span;
    emit('span', span);
  }

  // The selected range (state.range): [a, b] in either order, or null to clear it;
  // `done` when the drag ended ('range-select' is emitted then, and on clearing).
  selectRange(a, b, done = true) {
    state.range = a == null ? null : { t0: Math.min(a, b), t1: Math.max(a, b) };
    this._overlay();
    if (done || a == null) emit('range-select', state.range);
  }

  // Keys by their action in shortcuts.js's FLAME_KEYS (the `?` overlay lists the same table).
  key(e) {
    const act = flameAction(e.key);
    if (!act || e.ctrlKey || e.metaKey || e.altKey) return;
    const step = this.w * 0.1;
    const at = this.pointerX ?? this.w / 2;   // at the pointer over the chart, else the centre
    if (act === 'zoomIn') this.zoom(1 / ZOOM_STEP, at);
    else if (act === 'zoomOut') this.zoom(ZOOM_STEP, at);
    else if (act === 'panLeft') this.pan(-step);
    else if (act === 'panRight') this.pan(step);
    else if (act === 'scrollUp') this.pan(0, -ROW * 3);
    else if (act === 'scrollDown') this.pan(0, ROW * 3);
    else if (act === 'clear') {   // the selected span first, then the selected range
      if (state.span >= 0 || !state.range) { state.span = -1; emit('span', -1); } else this.selectRange(null);
    }
    else if (act === 'whole') this.setRange(this.model.range.lo, this.model.range.hi);
    e.preventDefault();
  }

  // >>test hooks: where span i is drawn now, in client coordinates (null when not visible)
  rectOfSpan(i) {
    const m = this.model;
    const th = m.threadOf(i);
    const lane = this.lanes.find((l) => l.thread === th);
    if (!lane || lane.collapsed) return null;
    const x0 = (m.start[i] - this.t0) / this.npp, x1 = (m.end(i) - this.t0) / this.npp;
    const y = RULER + lane.y - this.scrollY + HEADER + m.depth[i] * ROW;
    const r = this.ovCanvas.getBoundingClientRect();
    const cx0 = Math.max(0, x0), cx1 = Math.min(this.w, x1);
    if (cx1 <= cx0 || y < RULER || y + BAR > this.h) return null;
    return { x: r.left + cx0, y: r.top + y, w: cx1 - cx0, h: BAR };
  }
}
