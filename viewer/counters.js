// counters.js — owns the counters and memory view: every counter (running
// total of its deltas) and gauge (sampled level; memory is a gauge) plotted
// over the capture's whole time range, on the same x axis as the frame strip
// above it, with the selected frame and the flame chart's range marked.
// Operation counters (strobe_op_counter_add) are plotted per operation: each
// point is one operation's total, at its end.
// Hover reads the value at that time; click selects the frame there.

import { state, on, emit } from './state.js';
import * as fmt from './fmt.js';
import { colors } from './theme.js';

const PLOT_H = 56;

// The unit a series declares, said once beside its range ("count" and "none" say nothing more).
function unitNote(u) {
  return u === 'bytes' || u === 'ns' || u === 'ms' || u === 'percent' ? ` · in ${u}` : '';
}

export class Counters {
  constructor(el) {
    this.el = el;
    this.model = null;
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
    this.el.innerHTML = series.map((s, k) => {
      const name = model.seriesName(s);
      const unit = (v) => fmt.unit(v, model.seriesUnit(s));
      const kind = s.kind === 'op_counter' ? 'operation counter (its total per operation, at its end)'
        : s.kind === 'counter' ? 'counter (running total)' : s.kind;
      return `<div class="series" data-k="${k}"><div class="series-head"><b>${fmt.esc(name)}</b> <span class="dim">${kind}` +
        ` · ${fmt.count(s.count)} samples · min ${unit(s.min)} · max ${unit(s.max)}${unitNote(model.seriesUnit(s))}</span>` +
        `<span class="readout"></span></div><canvas height="${PLOT_H}"></canvas></div>`;
    }).join('');
    this.rows = [...this.el.querySelectorAll('.series')].map((div) => {
      const s = series[Number(div.dataset.k)];
      const canvas = div.querySelector('canvas');
      const readout = div.querySelector('.readout');
      const row = { s, canvas, readout, div, hoverX: -1 };
      canvas.addEventListener('pointermove', (e) => { row.hoverX = e.offsetX; this.drawRow(row); });
      canvas.addEventListener('pointerleave', () => { row.hoverX = -1; row.readout.textContent = ''; this.drawRow(row); });
      canvas.addEventListener('click', (e) => emit('pickTime', this._t(e.offsetX, canvas.clientWidth)));
      return row;
    });
    this.draw();
  }

  _t(x, w) {
    const r = this.model.range;
    return r.lo + (x / w) * (r.hi - r.lo);
  }

  drawSoon() {
    if (this.raf || this.el.hidden) return;
    this.raf = requestAnimationFrame(() => { this.raf = 0; this.draw(); });
  }

  draw() {
    if (!this.model || !this.rows || this.el.offsetParent === null) return;
    for (const row of this.rows) this.drawRow(row);
  }

  drawRow(row) {
    const m = this.model, { s, canvas } = row;
    const w = Math.max(1, canvas.clientWidth), h = PLOT_H, dpr = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(w * dpr)) canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    const c = canvas.getContext('2d');
    c.setTransform(dpr, 0, 0, dpr, 0, 0);
    c.clearRect(0, 0, w, h);
    const r = m.range, span = r.hi - r.lo;
    const X = (t) => ((t - r.lo) / span) * w;
    const lo = s.min, hi = s.max === s.min ? s.min + 1 : s.max;
    const Y = (v) => h - 4 - ((v - lo) / (hi - lo)) * (h - 8);
    // flame range and selected frame behind the line
    const v = state.view;
    const C = colors();
    c.fillStyle = `rgba(${C.accent},0.10)`;
    c.fillRect(X(v.t0), 0, Math.max(1, X(v.t1) - X(v.t0)), h);
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
    for (let k = s.first; k < s.first + s.count; k++) {
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
    if (row.hoverX >= 0) {
      const t = this._t(row.hoverX, w), val = m.seriesValueAt(s, t);
      c.fillStyle = C.cursor;
      c.fillRect(row.hoverX, 0, 1, h);
      row.readout.textContent = `${fmt.unit(val ?? NaN, m.seriesUnit(s))} at ${fmt.at(t)}`;
    }
  }
}
