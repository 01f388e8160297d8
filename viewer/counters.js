// counters.js — owns the counters and memory view: every counter (running
// total of its deltas) and gauge (sampled level; memory is a gauge) plotted
// over the flame chart's range (following its zoom and pan), or over the
// capture's whole time range (the strip's x axis) with the flame chart's
// range marked; the selected frame marked either way. Each row has a y axis
// in its unit, scaled to the minimum and maximum in view (said beside it).
// Operation counters (strobe_op_counter_add) are plotted per operation: each
// point is one operation's total, at its end.
// Hover reads the value at that time; click selects the frame there.
// Counters and gauges by kind (docs/recording.md §Counters and gauges by
// kind: sites of one family name whose category is their kind) are one row
// per family, stacked by kind: per frame (a counter's deltas in the frame, a
// gauge's level at its end), or per pixel column when there are no frames.

import { state, on, emit } from './state.js';
import * as fmt from './fmt.js';
import { colors } from './theme.js';

const PLOT_H = 56;
const AXIS_W = 70;    // px: the y axis' labels, left of the plot
const KIND_COLORS = ['#58a6ff', '#3fb950', '#d29922', '#f778ba', '#a371f7', '#39c5cf', '#ff7b72', '#8b949e'];

// Series of kinded sites grouped by (family, counter or gauge), in order of
// first appearance; every other series stays a row of its own.
export function groupByKind(model, series) {
  const rows = [], families = new Map();
  for (const s of series) {
    const site = s.kind === 'op_counter' ? null : model.sites[s.site];
    if (!site || !site.category) { rows.push({ s }); continue; }
    const key = `${s.kind}\u0000${site.name}`;
    let fam = families.get(key);
    if (!fam) {
      fam = { family: site.name, kind: s.kind, kinds: [] };
      families.set(key, fam);
      rows.push({ fam });
    }
    fam.kinds.push({ label: site.category, s });
  }
  return rows;
}

// The frames a family is stacked on: the frame kind's, of the window with
// the most of them (windows nest, and their frames overlap), by start.
function stackFrames(m) {
  const kind = m.frameKinds.indexOf(m.frameKind()), f = m.frames, count = new Map();
  for (let k = 0; k < f.rows; k++) if (f.kind[k] === kind) count.set(f.window[k], (count.get(f.window[k]) || 0) + 1);
  let best = null, most = 0;
  for (const [w, n] of count) if (n > most) { best = w; most = n; }
  const out = [];
  for (let k = 0; k < f.rows; k++) if (f.kind[k] === kind && f.window[k] === best) out.push(k);
  return out;   // by start already: the frames table is (docs/viewer.md §Tables)
}

// A series' last sample strictly before t (a counter's running total, a gauge's level), or null.
function before(m, s, t) {
  const k = firstAt(m, s, t);
  return k > s.first ? m.samples.value[k - 1] : null;
}

// The first sample of a series at or after t (its end when none).
function firstAt(m, s, t) {
  const T = m.samples.time;
  let lo = s.first, hi = s.first + s.count;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (T[mid] < t) lo = mid + 1; else hi = mid;
  }
  return lo;
}

// One family's stacked values: per bucket [t0, t1), the value of each kind
// (a counter: its deltas inside; a gauge: the last level sampled before t1),
// so a number at a frame's boundary belongs to the frame it begins, as in
// `strobe report`.
export function familyBuckets(m, fam, bounds) {
  return bounds.map(([t0, t1]) => fam.kinds.map(({ s }) => {
    if (s.kind === 'gauge') return before(m, s, t1) ?? 0;
    return (before(m, s, t1) ?? 0) - (before(m, s, t0) ?? 0); // running totals
  }));
}

// The unit a series declares, said once beside its range ("count" and "none" say nothing more).
function unitNote(u) {
  return u === 'bytes' || u === 'ns' || u === 'ms' || u === 'percent' ? ` · in ${u}` : '';
}

export class Counters {
  constructor(el) {
    this.el = el;
    this.model = null;
    this.follow = true;   // the x axis follows the flame chart's range; false: the whole capture
    el.addEventListener('change', (e) => {
      if (e.target.id === 'counters-x') { this.follow = e.target.value === 'view'; this.draw(); }
    });
    on('frame', () => this.draw());
    on('view', () => this.drawSoon());
    on('theme', () => this.drawSoon());
    new ResizeObserver(() => this.draw()).observe(el);
  }

  setModel(model) {
    this.model = model;
    const series = model.meta.series;
    if (!series.length) {
      this.el.innerHTML = '<div class="empty">This capture has no counters or gauges (STROBE_COUNTER, STROBE_GAUGE, strobe_op_counter_add).</div>';
      this.rows = [];
      return;
    }
    this.groups = groupByKind(model, series);
    this.frameList = stackFrames(model);
    this.el.innerHTML = '<div class="toolbar counters-bar"><label>x axis <select id="counters-x"><option value="view"' +
      `${this.follow ? ' selected' : ''}>the flame chart's range</option><option value="capture"${this.follow ? '' : ' selected'}>the whole capture</option></select></label>` +
      '<span class="dim">each y axis spans the minimum to the maximum in view</span></div>' + this.groups.map((g, k) => {
      if (g.fam) {
        const unit = model.seriesUnit(g.fam.kinds[0].s);
        const legend = g.fam.kinds.map((x, i) =>
          `<span class="kind-key"><i style="background:${KIND_COLORS[i % KIND_COLORS.length]}"></i>${fmt.esc(x.label)}</span>`).join(' ');
        const what = g.fam.kind === 'counter' ? 'counter by kind (each frame\'s count, stacked)' : 'gauge by kind (the last level before each frame\'s end, stacked)';
        return `<div class="series family" data-k="${k}"><div class="series-head"><b>${fmt.esc(g.fam.family)}</b> <span class="dim">${what}` +
          `${unitNote(unit)}</span> ${legend}<span class="inview dim"></span><span class="readout"></span></div><canvas height="${PLOT_H}"></canvas></div>`;
      }
      const s = g.s;
      const name = model.seriesName(s);
      const unit = (v) => fmt.unit(v, model.seriesUnit(s));
      const kind = s.kind === 'op_counter' ? 'operation counter (its total per operation, at its end)'
        : s.kind === 'counter' ? 'counter (running total)' : s.kind;
      return `<div class="series" data-k="${k}"><div class="series-head"><b>${fmt.esc(name)}</b> <span class="dim">${kind}` +
        ` · ${fmt.count(s.count)} samples · min ${unit(s.min)} · max ${unit(s.max)}${unitNote(model.seriesUnit(s))}</span>` +
        `<span class="inview dim"></span><span class="readout"></span></div><canvas height="${PLOT_H}"></canvas></div>`;
    }).join('');
    this.rows = [...this.el.querySelectorAll('.series')].map((div) => {
      const g = this.groups[Number(div.dataset.k)];
      const canvas = div.querySelector('canvas');
      const readout = div.querySelector('.readout');
      const row = { s: g.s, fam: g.fam, canvas, readout, inview: div.querySelector('.inview'), div, hoverX: -1 };
      canvas.addEventListener('pointermove', (e) => { row.hoverX = e.offsetX; this.drawRow(row); });
      canvas.addEventListener('pointerleave', () => { row.hoverX = -1; row.readout.textContent = ''; this.drawRow(row); });
      canvas.addEventListener('click', (e) => emit('pickTime', this._t(e.offsetX, canvas.clientWidth)));
      return row;
    });
    this.draw();
  }

  // The x axis' time range: the flame chart's (following it), or the whole capture.
  range() {
    if (this.follow && state.view && state.view.t1 > state.view.t0) return { lo: state.view.t0, hi: state.view.t1 };
    return this.model.range;
  }

  _t(x, w) {
    const r = this.range();
    return r.lo + (Math.max(0, x - AXIS_W) / Math.max(1, w - AXIS_W)) * (r.hi - r.lo);
  }

  drawSoon() {
    if (this.raf || this.el.hidden) return;
    this.raf = requestAnimationFrame(() => { this.raf = 0; this.draw(); });
  }

  draw() {
    // Hidden (another tab): nothing to draw, and no layout forced to find that out.
    if (!this.model || !this.rows || this.el.hidden || this.el.offsetParent === null) return;
    for (const row of this.rows) this.drawRow(row);
  }

  // What each row's y axis says now, for the tests: [{name, lo, hi, labels, t0, t1 (the x axis' range), left (the plot's x in px)}].
  axes() {
    return (this.rows || []).map((r) => ({ name: r.fam ? r.fam.family : this.model.seriesName(r.s), ...r.axis }));
  }

  // Buckets of a family row: the stacked frames inside the visible range, else pixel columns.
  _bounds(w) {
    const m = this.model, r = this.range(), out = [];
    for (const k of this.frameList) {
      const f = m.frame(k);
      if (f.end >= r.lo && f.start <= r.hi) out.push([f.start, f.end]);
    }
    if (out.length) return out;
    const pw = w - AXIS_W, cols = Math.max(1, Math.min(pw, 400));
    for (let i = 0; i < cols; i++) out.push([this._t(AXIS_W + (i * pw) / cols, w), this._t(AXIS_W + ((i + 1) * pw) / cols, w)]);
    return out;
  }

  // A row's canvas sized and cleared for this frame, with its time-to-x mapping.
  _plot(canvas) {
    const w = Math.max(1, canvas.clientWidth), h = PLOT_H, dpr = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(w * dpr)) canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    const c = canvas.getContext('2d');
    c.setTransform(dpr, 0, 0, dpr, 0, 0);
    c.clearRect(0, 0, w, h);
    c.save();   // the plot stays right of the y axis (_axis restores)
    c.beginPath();
    c.rect(AXIS_W, 0, w - AXIS_W, h);
    c.clip();
    const r = this.range(), span = r.hi - r.lo;
    return { c, w, h, X: (t) => AXIS_W + ((t - r.lo) / span) * (w - AXIS_W) };
  }

  // The y axis: the top, middle and bottom values in the row's unit, with ticks; what it says is kept for the tests.
  _axis(row, c, h, lo, hi, unit, Y) {
    const C = colors();
    c.restore();
    c.clearRect(0, 0, AXIS_W, h);
    c.fillStyle = C.line;
    c.fillRect(AXIS_W - 1, 0, 1, h);
    c.font = '10px system-ui, sans-serif';
    c.textAlign = 'right';
    c.textBaseline = 'middle';
    const vals = hi === lo ? [hi] : [hi, (lo + hi) / 2, lo];
    const labels = fmt.unitLabels(vals, unit);   // as many decimals as tell them apart: never one value twice
    for (let k = 0; k < vals.length; k++) {
      const v = vals[k], text = labels[k];
      const y = Math.min(h - 6, Math.max(6, Y(v)));
      c.fillStyle = C.line;
      c.fillRect(AXIS_W - 5, Math.round(Y(v)), 4, 1);
      c.fillStyle = C.dim;
      c.fillText(text, AXIS_W - 7, y);
    }
    c.textAlign = 'left';
    const r = this.range();
    row.axis = { lo, hi, labels, t0: r.lo, t1: r.hi, left: AXIS_W };
    row.inview.textContent = `in view: min ${fmt.unit(lo, unit)} · max ${fmt.unit(hi, unit)}`;
  }

  // A series' lowest and highest value over [t0, t1] (the level carried in from before t0 counts).
  _extent(s, t0, t1) {
    const m = this.model, T = m.samples.time, V = m.samples.value;
    let lo = Infinity, hi = -Infinity;
    const carried = before(m, s, t0);
    if (carried != null) { lo = hi = carried; }
    for (let k = firstAt(m, s, t0); k < s.first + s.count && T[k] <= t1; k++) { lo = Math.min(lo, V[k]); hi = Math.max(hi, V[k]); }
    return lo <= hi ? { lo, hi } : null;
  }

  drawFamily(row) {
    const m = this.model, { fam, canvas } = row;
    const { c, w, h, X } = this._plot(canvas);
    const bounds = this._bounds(w), vals = familyBuckets(m, fam, bounds);
    let top = 0;
    for (const v of vals) top = Math.max(top, v.reduce((a, b) => a + Math.max(0, b), 0));
    const shown = top;
    if (top <= 0) top = 1;
    if (state.frame >= 0 && state.frame < m.frames.rows) {
      const f = m.frame(state.frame);
      c.fillStyle = 'rgba(255,255,255,0.25)';
      c.fillRect(X(f.start), 0, Math.max(1.5, X(f.end) - X(f.start)), h);
    }
    bounds.forEach(([t0, t1], b) => {
      const x0 = X(t0), bw = Math.max(1, X(t1) - x0 - (bounds.length > 1 ? 0.5 : 0));
      let y = h;
      vals[b].forEach((v, i) => {
        const bh = (Math.max(0, v) / top) * (h - 4);
        c.fillStyle = KIND_COLORS[i % KIND_COLORS.length];
        c.fillRect(x0, y - bh, bw, bh);
        y -= bh;
      });
    });
    row.buckets = { bounds, vals };
    this._axis(row, c, h, 0, shown, m.seriesUnit(fam.kinds[0].s), (v) => h - (v / top) * (h - 4));
    if (row.hoverX >= AXIS_W) {
      const t = this._t(row.hoverX, w);
      c.fillStyle = 'rgba(255,255,255,0.6)';
      c.fillRect(row.hoverX, 0, 1, h);
      const b = bounds.findIndex(([t0, t1]) => t >= t0 && t < t1);
      const unit = m.seriesUnit(fam.kinds[0].s);
      row.readout.textContent = b < 0 ? `no frame at ${fmt.at(t)}`
        : fam.kinds.map((x, i) => `${x.label} ${fmt.unit(vals[b][i], unit)}`).join(' · ') + ` at ${fmt.at(t)}`;
    }
  }

  drawRow(row) {
    if (row.fam) return this.drawFamily(row);
    const m = this.model, { s, canvas } = row;
    const { c, w, h, X } = this._plot(canvas);
    const r = this.range(), ext = this._extent(s, r.lo, r.hi) || { lo: s.min, hi: s.max };
    const lo = ext.lo, hi = ext.hi === ext.lo ? ext.lo + 1 : ext.hi;
    const Y = (v) => h - 4 - ((v - lo) / (hi - lo)) * (h - 8);
    const C = colors();
    if (!this.follow) {   // the flame chart's range behind the line
      const v = state.view;
      c.fillStyle = `rgba(${C.accent},0.10)`;
      c.fillRect(X(v.t0), 0, Math.max(1, X(v.t1) - X(v.t0)), h);
    }
    if (state.frame >= 0 && state.frame < m.frames.rows) {
      const f = m.frame(state.frame);
      c.fillStyle = C.mark;
      c.fillRect(X(f.start), 0, Math.max(1.5, X(f.end) - X(f.start)), h);
    }
    const T = m.samples.time, V = m.samples.value;
    c.strokeStyle = s.kind === 'counter' ? '#58a6ff' : '#3fb950';
    c.lineWidth = 1.25;
    c.beginPath();
    // Per pixel column: first, min, max, last, so dense series keep their peaks.
    let col = -1, cmin = 0, cmax = 0, last = 0;
    const flush = () => {
      if (col < 0) return;
      c.lineTo(col + 0.5, Y(cmin));
      c.lineTo(col + 0.5, Y(cmax));
      c.lineTo(col + 0.5, Y(last));
    };
    const end = s.first + s.count;
    const k0 = Math.max(s.first, firstAt(m, s, r.lo) - 1), k1 = Math.min(end, firstAt(m, s, r.hi) + 1);
    for (let k = k0; k < k1; k++) {
      const x = Math.floor(X(T[k])), val = V[k];
      if (x !== col) {
        if (col < 0) c.moveTo(x + 0.5, Y(val));
        else { flush(); if (s.kind === 'gauge') c.lineTo(x + 0.5, Y(last)); }
        col = x; cmin = cmax = val;
      }
      cmin = Math.min(cmin, val); cmax = Math.max(cmax, val); last = val;
    }
    flush();
    c.lineTo(w, Y(last));
    c.stroke();
    this._axis(row, c, h, ext.lo, ext.hi, m.seriesUnit(s), Y);
    if (row.hoverX >= AXIS_W) {
      const t = this._t(row.hoverX, w), val = m.seriesValueAt(s, t);
      c.fillStyle = C.cursor;
      c.fillRect(row.hoverX, 0, 1, h);
      row.readout.textContent = `${fmt.unit(val ?? NaN, m.seriesUnit(s))} at ${fmt.at(t)}`;
    }
  }
}
