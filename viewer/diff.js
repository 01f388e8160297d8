// diff.js — owns the diff view: which spans grew, by name path ("frame/
// update/work": names from the thread's root, so depth is part of the key),
// largest change first (growth or shrink).
//   - Two frames of one capture: the spans that begin and end inside each
//     frame on its thread, the same rule and the same paths as
//     `strobe diff FILE --frames N M` (status grew / shrank / appeared /
//     vanished / same, inclusive totals summed over calls).
//   - Two captures (`strobe view A --compare B`): every span of every thread,
//     as the mean per frame of each capture (totals when a capture has no
//     frames), so captures of different lengths compare fairly.

import { state, on } from './state.js';
import * as fmt from './fmt.js';
import { FRAME_FLAG } from './data.js';

export function diffRows(before, after, scaleA = 1, scaleB = 1) {
  const rows = [];
  const keys = new Set([...before.keys(), ...after.keys()]);
  for (const k of keys) {
    const a = before.get(k), b = after.get(k);
    const ca = a ? a.count : 0, cb = b ? b.count : 0;
    if (!ca && !cb) continue;
    const ta = a ? a.total / scaleA : 0, tb = b ? b.total / scaleB : 0;
    const status = !ca ? 'appeared' : !cb ? 'vanished' : tb > ta ? 'grew' : tb < ta ? 'shrank' : 'same';
    rows.push({ path: k, depth: (a || b).depth, name: (a || b).name, site: (b || a).site, before: ca ? ta : null,
                after: cb ? tb : null, change: tb - ta, countBefore: ca, countAfter: cb, status });
  }
  // Largest change first, growth or shrink (as `strobe diff --frames` orders them);
  // among equal sizes the deeper path (the cause) first.
  rows.sort((x, y) => Math.abs(y.change) - Math.abs(x.change) || y.depth - x.depth || (x.path < y.path ? -1 : 1));
  return rows;
}

export class Diff {
  constructor(el) {
    this.el = el;
    this.model = null;
    this.compare = null;
    this.mode = 'frames';
    this.a = -1;   // frame rows
    this.b = -1;
    this.rows = [];
    on('frame', () => { if (this.el.offsetParent) this.render(); });
    el.addEventListener('change', (e) => this._change(e));
    el.addEventListener('click', (e) => this._click(e));
  }

  setModels(model, compare) {
    this.model = model;
    this.compare = compare;
    this.mode = compare ? 'captures' : 'frames';
    this.a = this.b = -1;
  }

  // The frame numbered `number` of frame `ref`'s series: an operation's declared window (a pass is
  // identified by its window and frame id), else its thread (marks and scopes are numbered per thread).
  _frameRow(ref, number) {
    const F = this.model.frames, op = (k) => (F.flags[k] & FRAME_FLAG.OP) !== 0;
    const same = op(ref) ? (k) => op(k) && F.window[k] === F.window[ref] : (k) => !op(k) && F.thread[k] === F.thread[ref];
    for (let k = 0; k < F.rows; k++) if (F.kind[k] === F.kind[ref] && F.number[k] === number && same(k)) return k;
    return -1;
  }

  // Defaults: B is the selected frame (or the slowest), A the one before it.
  _defaults() {
    const m = this.model, F = m.frames;
    if (this.b < 0) {
      let b = state.frame;
      if (b < 0) for (let k = 0; k < F.rows; k++) if (b < 0 || F.dur[k] > F.dur[b]) b = k;
      this.b = b;
    }
    if (this.a < 0 && this.b >= 0) {
      const a = this._frameRow(this.b, F.number[this.b] - 1);
      this.a = a >= 0 ? a : this._frameRow(this.b, F.number[this.b] + 1);
    }
  }

  compute() {
    const m = this.model;
    if (this.mode === 'captures' && this.compare) {
      const all = (x) => x.threads.filter(Boolean).map((t) => t.index);
      const A = m.pathTotals(null, all(m)), B = this.compare.pathTotals(null, all(this.compare));
      this.scaleNote = 'mean per frame';
      const fa = m.frameCount() || 1, fb = this.compare.frameCount() || 1;
      this.rows = diffRows(A, B, fa, fb);
      return this.rows;
    }
    this._defaults();
    if (this.a < 0 || this.b < 0) { this.rows = []; return this.rows; }
    // Each frame's spans (data.js frameTree: a frame handed between processes, each part on its thread).
    const A = m.frameTree(this.a), B = m.frameTree(this.b);
    this.rows = diffRows(A, B);
    return this.rows;
  }

  setFrames(a, b) {
    this.mode = 'frames';
    this.a = a;
    this.b = b;
    this.render();
    return this.rows;
  }

  _change(e) {
    const t = e.target;
    if (t.name === 'mode') { this.mode = t.value; this.render(); return; }
    if (t.name === 'fa' || t.name === 'fb') {
      const ref = t.name === 'fa' ? this.a : this.b;
      const F = this.model.frames;
      const k = ref >= 0 ? this._frameRow(ref, Number(t.value)) : -1;
      if (k >= 0) { if (t.name === 'fa') this.a = k; else this.b = k; }
      this.render();
    }
  }

  _click(e) {
    const b = e.target.closest('button[data-use]');
    if (!b || state.frame < 0) return;
    if (b.dataset.use === 'a') this.a = state.frame; else this.b = state.frame;
    this.render();
  }

  render() {
    const m = this.model;
    if (!m) return;
    this.compute();
    const cap = !!this.compare;
    let head = `<div class="toolbar"><label><input type="radio" name="mode" value="frames"${this.mode === 'frames' ? ' checked' : ''}> two frames</label>` +
      `<label title="${cap ? '' : 'open two files: strobe view A --compare B'}"><input type="radio" name="mode" value="captures"${this.mode === 'captures' ? ' checked' : ''}${cap ? '' : ' disabled'}> two captures</label>`;
    if (this.mode === 'frames') {
      const F = m.frames;
      const fa = this.a >= 0 ? m.frame(this.a) : null, fb = this.b >= 0 ? m.frame(this.b) : null;
      head += ` <label>before: ${fa ? fa.kind : 'frame'} <input name="fa" type="number" min="0" value="${fa ? fa.number : ''}"></label>` +
        `<button data-use="a">use selected</button>` +
        ` <label>after: ${fb ? fb.kind : 'frame'} <input name="fb" type="number" min="0" value="${fb ? fb.number : ''}"></label>` +
        `<button data-use="b">use selected</button>`;
      if (fa && fb) head += `<span class="dim">${fmt.dur(fa.dur)} → ${fmt.dur(fb.dur)} (${fmt.signedDur(fb.dur - fa.dur)}) on ${fmt.esc(m.frameWhere(fb.index))}; ${m.owns(fb.index) ? 'the spans each frame owns (docs/frames.md)' : 'spans that begin and end inside each frame'}</span>`;
      void F;
    } else {
      head += `<span class="dim">${fmt.esc(m.meta.label)} (${m.frameCount()} frames) → ${fmt.esc(this.compare.meta.label)} (${this.compare.frameCount()} frames): ${this.scaleNote}</span>`;
    }
    head += '</div>';
    const maxAbs = this.rows.reduce((s, r) => Math.max(s, Math.abs(r.change)), 0) || 1;
    const body = this.rows.map((r) => {
      const w = (50 * Math.abs(r.change)) / maxAbs;
      const bar = r.change >= 0 ? `<i class="grow" style="left:50%;width:${w}%"></i>` : `<i class="shrink" style="left:${50 - w}%;width:${w}%"></i>`;
      const prefix = r.path.slice(0, r.path.length - r.name.length);
      return `<tr class="${r.status}"><td class="path" title="depth ${r.depth + 1}"><span class="dim">${fmt.esc(prefix)}</span>${fmt.esc(r.name)}</td>` +
        `<td class="num">${r.before == null ? '—' : fmt.dur(r.before)}</td><td class="num">${r.after == null ? '—' : fmt.dur(r.after)}</td>` +
        `<td class="num chg">${fmt.signedDur(r.change)}</td><td class="dbar">${bar}</td><td class="num">${fmt.num(r.countBefore)}</td>` +
        `<td class="num">${fmt.num(r.countAfter)}</td><td class="st">${r.status}</td></tr>`;
    }).join('');
    this.el.innerHTML = head + (this.rows.length
      ? `<table class="grid diff"><tr><th>span path (by name and depth)</th><th>before</th><th>after</th><th>change</th><th></th><th>n before</th><th>n after</th><th>status</th></tr>${body}</table>`
      : '<div class="empty">Pick two frames: select one in the strip or list and press “use selected”.</div>');
  }
}
