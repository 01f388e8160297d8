// detail.js — owns the detail panel for the selected span or frame:
//   - a span tree merged by name path (siblings of the same name become one
//     row) with bars proportional to the root, and ×N · min/avg/max badges
//     for repeated spans and for loop statistics (STROBE_CUMULATIVE);
//   - a pie of time by child at the focused level (click a tree row to focus);
//   - stage timings with their declared nesting ("nested in X: do not sum");
//   - the frame's counters, gauges and values;
//   - for an operation (a pass, input, rebuild or request the capture
//     recorded): its kind, window, frame id, committed flag and hand-off, its
//     own stage table and counters; for one handed between processes, both
//     processes' spans, each stage and counter with the process it ran in,
//     and the hand-off gap (in the total: docs/sessions.md §Across processes).
//   - for a frame, first its explanation (explain.js: why it took so long);
//     a stage's link there selects that stage's span in the frame.
// Everything is derived from the model on selection; nothing is cached but
// the explanations the server gave.

import { state, on, emit } from './state.js';
import { kindedName, lowerBound, spanTooltip } from './data.js';
import { histogramHtml, siteHistogram } from './histogram.js';
import * as fmt from './fmt.js';
import { Explanations } from './explain.js';

const OPEN_LEVELS = 3;   // tree levels expanded at first

export class Detail {
  constructor(el) {
    this.el = el;
    this.mode = 'tree';
    this.focus = null;     // path of the focused node
    this.toggled = new Set(); // paths whose open/closed state the user flipped
    this.explanations = new Explanations(() => this.render());
    on('span', () => { this.focus = null; this.render(); });
    on('frame', () => { if (state.span < 0) { this.focus = null; this.render(); } });
    on('budget', () => this.render());
    on('thresholds', () => this.render());
    el.addEventListener('click', (e) => {
      const ex = e.target.closest('[data-ex-stage]');
      if (ex) { this._selectStage(ex.dataset.exStage); return; }
      const b = e.target.closest('[data-mode]');
      if (b) { this.mode = b.dataset.mode; this.render(); return; }
      const slice = e.target.closest('path[data-path]');   // a pie slice: one level down
      if (slice) { this.focus = slice.dataset.path; this.render(); return; }
      const up = e.target.closest('button[data-up]');
      if (up) { this.focus = up.dataset.up || null; this.render(); return; }
      const caret = e.target.closest('.caret');
      const row = e.target.closest('[data-path]');
      if (caret && row) {
        const p = row.dataset.path;
        if (this.toggled.has(p)) this.toggled.delete(p); else this.toggled.add(p);
        this.render();
        return;
      }
      if (row) { this.focus = row.dataset.path; this.render(); return; }
      const ef = e.target.closest('[data-element]');
      if (ef) { state.element = ef.dataset.element || null; emit('search', state.search); this.render(); return; }
      const bar = e.target.closest('[data-hbin]');   // a histogram bar: light its spans (app.js hands it to search.js)
      if (bar && this.model && state.span >= 0) {
        const r = this.model.range;
        emit('focus-site', { site: this.model.site[state.span], scope: { t0: r.lo, t1: r.hi, dur: [Number(bar.dataset.lo), Number(bar.dataset.hi)] } });
        return;
      }
      const clr = e.target.closest('[data-clear]');
      if (clr) { state.span = -1; emit('span', -1); }
    });
  }

  setModel(model) {
    this.model = model;
    this.hist = null;   // the last site's histogram: {site, h}
    this.focus = null;
    this.toggled.clear();
    this.render();
  }

  // The selection as {title, html, thread, ranges, t0, t1, rootDepth}.
  _selection() {
    const m = this.model;
    if (state.span >= 0 && state.span < m.n) {
      const i = state.span, th = m.threadOf(i);
      const ranges = m.spansInside(th, m.start[i], m.end(i));
      for (let d = 0; d < m.depth[i]; d++) ranges[d] = [0, 0];
      return { kind: 'span', i, thread: th, ranges, t0: m.start[i], t1: m.end(i), total: m.dur[i] };
    }
    if (state.frame >= 0 && state.frame < m.frames.rows) {
      const f = m.frame(state.frame);
      if (m.owns(f.index)) // its own spans (docs/frames.md §Own spans), on whichever threads they ran
        return { kind: 'frame', f, thread: f.thread, ranges: m.frameRuns(f.index), nodes: m.frameTree(f.index), t0: f.start, t1: f.end, total: f.dur };
      if (f.remote) { // both processes' spans, each thread inside its part of the operation
        const segs = m.frameSegments(f.index);
        const ranges = segs.flatMap((s) => m.spansInside(s.thread, s.t0, s.t1));
        return { kind: 'frame', f, thread: f.thread, ranges, nodes: m.frameTree(f.index), t0: f.start, t1: f.end, total: f.dur };
      }
      return { kind: 'frame', f, thread: f.thread, ranges: m.spansInside(f.thread, f.start, f.end), t0: f.start, t1: f.end, total: f.dur };
    }
    return null;
  }

  render() {
    const m = this.model;
    if (!m) { this.el.innerHTML = ''; return; }
    const sel = this._selection();
    if (!sel) {
      this.el.innerHTML = '<div class="empty">Select a frame in the strip or the list, or a span in the flame chart.</div>';
      return;
    }
    const nodes = sel.nodes || m.pathTotals(sel.ranges, [sel.thread]);
    const tree = buildTree(nodes);
    let head;
    if (sel.kind === 'span') {
      const el = m.elementOf(sel.i);
      const filter = !el ? '' : state.element === el.id
        ? '<button data-element="" title="light every span again">all spans</button>'
        : `<button data-element="${el.id}" title="light only the spans attributed to element ${el.type} ${el.id}">only this element's spans</button>`;
      head = `<div class="detail-head"><button data-clear title="back to the frame">×</button>${spanTooltip(m, sel.i)}${filter}</div>`;
    } else {
      const f = sel.f, framed = !m.meta.activity; /* a program without frames has no budget */
      const cls = framed ? fmt.durClass(f.dur, state.thresholds) : '';
      head = `<div class="detail-head"><div class="big"><span class="kdot" style="background:${fmt.KIND_COLORS[f.kind]}"></span>${f.kind} ${f.number}` +
        ` · <span class="dur ${cls}">${fmt.dur(f.dur)}</span></div><div class="dim">${fmt.esc(m.frameWhere(f.index))} · at ${fmt.at(f.start)}` +
        `${framed ? ` · ${(f.dur / (state.budgetMs * 1e6)).toFixed(2)}× the ${state.budgetMs} ms budget` : ''}</div>${f.op ? opLine(f) : ''}` +
        `${f.remote ? handoffLine(m, f) : ''}</div>` + (framed ? this.explanations.html(m, f) : '');
    }
    const tabs = `<div class="seg"><button data-mode="tree" class="${this.mode === 'tree' ? 'on' : ''}">Tree</button>` +
      `<button data-mode="pie" class="${this.mode === 'pie' ? 'on' : ''}">Pie</button></div>`;
    const body = this.mode === 'tree' ? this._tree(tree, sel) : this._pie(tree, sel);
    const stages = sel.kind === 'frame' && sel.f.op ? this._opStages(sel.f) : this._stages(nodes);
    this.el.innerHTML = head + `<h3>Spans ${tabs}</h3>` + body + stages + this._counters(sel);
    if (sel.kind === 'span') this.el.querySelector('.detail-head').insertAdjacentHTML('afterend', this._histogram(sel.i));
  }

  // Selects the first span named `stage` that begins inside the selected frame (the explanation's link).
  _selectStage(stage) {
    const m = this.model, f = state.frame >= 0 ? m.frame(state.frame) : null;
    if (!f) return;
    for (let i = 0; i < m.n; i++) {
      if (m.start[i] >= f.start && m.start[i] < f.end && m.name(i) === stage) { state.span = i; emit('span', i); return; }
    }
  }

  _tree(tree, sel) {
    const m = this.model;
    const loops = loopsByPath(m, sel.ranges);
    const rows = [];
    const total = sel.total || 1;
    const walk = (n, level) => {
      const open = (level < OPEN_LEVELS) !== this.toggled.has(n.path);
      const kids = n.kids.length + (loops.get(n.path) || []).length;
      const pct = Math.min(100, (100 * n.total) / total);
      const badge = n.count > 1 ? `<span class="badge">×${fmt.count(n.count)} · ${fmt.dur(n.min)} / ${fmt.dur(n.total / n.count)} / ${fmt.dur(n.max)}</span>` : '';
      const color = fmt.css(m.siteRGB[n.site] || [128, 128, 128]);
      rows.push(`<div class="trow${this.focus === n.path ? ' focus' : ''}" data-path="${fmt.esc(n.path)}" style="--lvl:${level}">` +
        `<span class="caret">${kids ? (open ? '▾' : '▸') : ''}</span><span class="tname" title="${fmt.esc(n.path)}">${fmt.esc(n.name)}</span>${badge}` +
        `<span class="tbar"><i style="width:${pct.toFixed(2)}%;background:${color}"></i></span>` +
        `<span class="tdur">${fmt.dur(n.total)}</span><span class="tself dim">self ${fmt.dur(n.self)}</span></div>`);
      if (!open) return;
      for (const c of n.kids) walk(c, level + 1);
      for (const lp of loops.get(n.path) || []) {
        rows.push(`<div class="trow loop" style="--lvl:${level + 1}"><span class="caret">↻</span><span class="tname">${fmt.esc(lp.name)}</span>` +
          `<span class="badge">×${fmt.count(lp.count)} · ${fmt.dur(lp.min)} / ${fmt.dur(lp.count ? lp.total / lp.count : 0)} / ${fmt.dur(lp.max)}</span>` +
          `<span class="tbar"><i style="width:${Math.min(100, (100 * lp.total) / total).toFixed(2)}%"></i></span>` +
          `<span class="tdur">${fmt.dur(lp.total)}</span><span class="tself dim">loop</span></div>`);
      }
    };
    for (const r of tree.roots) walk(r, 0);
    if (!rows.length) return '<div class="empty">No span begins and ends inside this frame on its thread.</div>';
    return `<div class="tree">${rows.join('')}</div>`;
  }

  _pie(tree, sel) {
    const m = this.model;
    const focus = (this.focus && tree.byPath.get(this.focus)) || (tree.roots.length === 1 ? tree.roots[0] : null);
    const parts = [];
    let whole;
    if (focus) {
      whole = focus.total;
      for (const c of focus.kids) parts.push({ name: c.name, v: c.total, site: c.site, path: c.kids.length ? c.path : null });
      parts.push({ name: 'self', v: Math.max(0, focus.self), site: -1 });
    } else {
      whole = sel.total;
      let sum = 0;
      for (const r of tree.roots) { parts.push({ name: r.name, v: r.total, site: r.site, path: r.kids.length ? r.path : null }); sum += r.total; }
      parts.push({ name: 'outside spans', v: Math.max(0, whole - sum), site: -1 });
    }
    parts.sort((a, b) => b.v - a.v);
    const sum = parts.reduce((s, p) => s + p.v, 0) || 1;
    let a0 = -Math.PI / 2;
    const R = 70, C = 80;
    const paths = [];
    const legend = [];
    for (const p of parts) {
      if (p.v <= 0) continue;
      const a1 = a0 + (2 * Math.PI * p.v) / sum;
      const color = p.site >= 0 ? fmt.css(m.siteRGB[p.site]) : '#30363d';
      const large = a1 - a0 > Math.PI ? 1 : 0;
      const d = a1 - a0 >= 2 * Math.PI - 1e-9
        ? `M ${C} ${C - R} A ${R} ${R} 0 1 1 ${C - 0.01} ${C - R} Z`
        : `M ${C} ${C} L ${C + R * Math.cos(a0)} ${C + R * Math.sin(a0)} A ${R} ${R} 0 ${large} 1 ${C + R * Math.cos(a1)} ${C + R * Math.sin(a1)} Z`;
      paths.push(`<path d="${d}" fill="${color}"${p.path ? ` data-path="${fmt.esc(p.path)}"` : ''}><title>${fmt.esc(p.name)} ${fmt.dur(p.v)}</title></path>`);
      legend.push(`<div data-name="${fmt.esc(p.name)}"><i style="background:${color}"></i>${fmt.esc(p.name)} <b>${(100 * p.v / sum).toFixed(1)}%</b> <span class="ldur">${fmt.dur(p.v)}</span></div>`);
      a0 = a1;
    }
    const title = focus ? `time inside <b>${fmt.esc(focus.path)}</b> by child` : 'time by top-level span';
    const up = focus && (focus.path.includes('/') || tree.roots.length > 1)
      ? `<button data-up="${fmt.esc(focus.path.includes('/') ? focus.path.slice(0, focus.path.lastIndexOf('/')) : '')}" title="one level up">↑</button> ` : '';
    return `<div class="pie"><svg viewBox="0 0 160 160" width="160" height="160">${paths.join('')}</svg>` +
      `<div class="legend"><div class="dim">${up}${title} (${fmt.dur(whole)}); click a slice or a tree row to change level</div>${legend.join('')}</div></div>`;
  }

  // An operation frame's stage table as the capture recorded it (every thread it ran on).
  _opStages(f) {
    const m = this.model;
    const list = m.opStagesOf(f.index);
    if (!f.detail) return '<h3>Stages</h3><div class="dim small">This operation began before the capture: its stages and counters are unknown, not zero.</div>';
    if (!list.length) return '';
    // Nested under the stage it ran inside (the frame model's run-time parent), or, in a capture from before
    // run-time parents, under its declared parent.
    const declared = list.some((a) => !a.parentKnown);
    const rows = nestStages(list.map((a) => {
      const s = m.sites[a.site] || { name: '?', parent: '' };
      const p = a.parentKnown ? (a.parent && m.sites[a.parent] ? m.sites[a.parent].name : '') : s.parent;
      return { ...a, name: s.name, parent: p };
    }));
    const across = list.some((a) => a.process !== null);
    return `<h3>Stages</h3><div class="dim small">the operation's own stage table${across ? ', each stage in the process it ran in' : ''}; an indented stage ran inside the stage above it${declared ? ' (its declared parent: this capture predates run-time parents)' : ''}: already included there, do not sum</div>` +
      stageTable(rows, 'opstages', across);
  }

  _stages(nodes) {
    const m = this.model;
    const agg = new Map();
    for (const n of nodes.values()) {
      const s = m.sites[n.site];
      if (!s || s.kind !== 7 || !n.count) continue;
      const a = agg.get(s.name) || { name: s.name, parent: s.parent, count: 0, total: 0, min: Infinity, max: 0 };
      a.count += n.count; a.total += n.total; a.min = Math.min(a.min, n.min); a.max = Math.max(a.max, n.max);
      agg.set(s.name, a);
    }
    if (!agg.size) return '';
    return `<h3>Stages</h3><div class="dim small">an indented stage is nested in its declared parent above it: already included there, do not sum</div>` +
      stageTable(nestStages([...agg.values()]), '');
  }

  // The duration histogram of span i's site over the whole capture (histogram.js), kept for the next render.
  _histogram(i) {
    const m = this.model, site = m.site[i];
    if (!this.hist || this.hist.site !== site) this.hist = { site, h: siteHistogram(m, site) };
    if (!this.hist.h || this.hist.h.durs.length < 2) return '';
    return `<h3>Durations of ${fmt.esc(m.name(i))}</h3>` + histogramHtml(this.hist.h, m.name(i), state.budgetMs * 1e6, m.dur[i]);
  }

  _counters(sel) {
    const m = this.model;
    const rows = [];
    if (sel.kind === 'frame' && sel.f.op) { // the operation's own counters (strobe_op_counter_add), whichever thread counted
      for (const k of m.opCountersOf(sel.f.index)) {
        rows.push(`<tr><td>${fmt.esc(k.name)}</td><td class="dim">operation counter${k.process !== null ? ` · ${fmt.esc(k.process)}` : ''}</td><td class="num">${fmt.unit(k.value, k.unit)}</td><td class="num dim">this operation's total</td></tr>`);
      }
    }
    for (const s of m.meta.series) {
      if (s.kind === 'op_counter') continue;
      const site = m.sites[s.site];
      const u = (v) => fmt.unit(v, site.unit);
      const before = m.seriesValueAt(s, sel.t0 - 1e-6), after = m.seriesValueAt(s, sel.t1);
      if (s.kind === 'counter') {
        const delta = (after ?? 0) - (before ?? 0);
        rows.push(`<tr><td>${fmt.esc(m.seriesName(s))}</td><td class="dim">counter</td><td class="num">+${u(delta)}</td><td class="num dim">total ${u(after)}</td></tr>`);
      } else if (after != null) {
        rows.push(`<tr><td>${fmt.esc(m.seriesName(s))}</td><td class="dim">gauge</td><td class="num">${u(after)}</td><td class="num dim">level at the end</td></tr>`);
      }
    }
    // STROBE_VALUE numbers on the spans of the selection, by key
    const vals = new Map();
    const V = m.values;
    for (const [from, to] of sel.ranges) {
      for (let k = lowerBound(0, V.rows, from, (x) => V.span[x]); k < V.rows && V.span[k] < to; k++) {
        const a = vals.get(V.site[k]) || { n: 0, sum: 0, min: Infinity, max: -Infinity };
        const v = V.value[k];
        a.n++; a.sum += v; a.min = Math.min(a.min, v); a.max = Math.max(a.max, v);
        vals.set(V.site[k], a);
      }
    }
    for (const [site, a] of vals) {
      const s = m.sites[site], u = (v) => fmt.unit(v, s ? s.unit : 'none');
      rows.push(`<tr><td>${fmt.esc(kindedName(s))}</td><td class="dim">value ×${a.n}</td>` +
        `<td class="num">Σ ${u(a.sum)}</td><td class="num dim">${u(a.min)} … ${u(a.max)}</td></tr>`);
    }
    if (!rows.length) return '';
    return `<h3>Counters and values</h3><table class="grid values">${rows.join('')}</table>`;
  }
}

// A stage table's rows in the tree their declared parents make (docs/viewer.md
// §Frames, detail): each stage right under its parent when the parent is in the
// table, siblings by total, largest first, so nesting never depends on row
// order. items: [{name, parent, total, ...}] -> [{...item, level}]. A stage whose
// parent is absent (or in a cycle, from a broken capture) is a root.
export function nestStages(items) {
  const byName = new Map(items.map((a) => [a.name, a]));
  const kids = new Map(), roots = [];
  for (const a of items) {
    const p = a.parent && a.parent !== a.name ? byName.get(a.parent) : null;
    if (p) { if (!kids.has(p)) kids.set(p, []); kids.get(p).push(a); } else roots.push(a);
  }
  const out = [], seen = new Set();
  const byTotal = (a, b) => b.total - a.total;
  const walk = (a, level) => {
    if (seen.has(a)) return;
    seen.add(a);
    out.push({ ...a, level });
    for (const c of (kids.get(a) || []).sort(byTotal)) walk(c, level + 1);
  };
  for (const r of roots.sort(byTotal)) walk(r, 0);
  for (const a of items.slice().sort(byTotal)) walk(a, 0);   // cycles: shown, at the top level
  return out;
}

// across: a process column (an operation handed between processes: where each stage ran).
function stageTable(rows, cls, across = false) {
  const body = rows.map((a) =>
    `<tr><td style="padding-left:${6 + 14 * a.level}px" title="${a.parent ? `nested in ${fmt.esc(a.parent)}: included there, do not sum` : 'directly in the operation'}">${fmt.esc(a.name)}</td>` +
    `${across ? `<td class="proc">${fmt.esc(a.process ?? '')}</td>` : ''}` +
    `<td class="num c-n">${fmt.count(a.count)}</td><td class="num">${fmt.dur(a.total)}</td><td class="num c-min">${fmt.dur(a.min)}</td><td class="num">${fmt.dur(a.max)}</td></tr>`).join('');
  return `<table class="grid stages ${cls}"><colgroup><col>${across ? '<col class="c-p">' : ''}<col class="c-n"><col class="c-d"><col class="c-min"><col class="c-d"></colgroup>` +
    `<tr><th>stage</th>${across ? '<th>process</th>' : ''}<th class="num c-n">n</th><th class="num">total</th><th class="num c-min">min</th><th class="num">max</th></tr>${body}</table>`;
}

// Path nodes (count > 0) into a tree; roots are nodes whose parent is outside the selection.
function buildTree(nodes) {
  const byId = [];
  for (const n of nodes.values()) byId[n.id] = n;
  const byPath = new Map();
  const roots = [];
  for (const n of nodes.values()) {
    n.kids = [];
  }
  for (const n of nodes.values()) {
    if (!n.count) continue;
    byPath.set(n.path, n);
    const p = n.parent >= 0 ? byId[n.parent] : null;
    if (p && p.count) p.kids.push(n);
    else roots.push(n);
  }
  for (const n of byPath.values()) n.kids.sort((a, b) => b.total - a.total);
  roots.sort((a, b) => b.total - a.total);
  return { roots, byPath };
}

// Loop statistics recorded inside the selection, grouped by the path of the
// span they were recorded in plus the loop's name.
function loopsByPath(m, ranges) {
  const out = new Map();
  const C = m.cumul;
  if (!C.rows) return out;
  const memo = new Map();
  const pathOf = (i) => {
    if (memo.has(i)) return memo.get(i);
    const p = m.parent(i);
    const s = (p >= 0 ? pathOf(p) + '/' : '') + m.name(i);
    memo.set(i, s);
    return s;
  };
  for (const [from, to] of ranges) {
    for (let k = lowerBound(0, C.rows, from, (x) => C.span[x]); k < C.rows && C.span[k] < to; k++) {
      const path = pathOf(C.span[k]);
      const list = out.get(path) || [];
      const name = m.sites[C.site[k]] ? m.sites[C.site[k]].name : '?';
      let e = list.find((x) => x.name === name);
      if (!e) { e = { name, count: 0, total: 0, min: Infinity, max: 0 }; list.push(e); }
      e.count += C.count[k]; e.total += C.total[k]; e.min = Math.min(e.min, C.min[k]); e.max = Math.max(e.max, C.max[k]);
      out.set(path, list);
    }
  }
  return out;
}

// How an operation crossed processes: who handed it to whom, when, and the gap its total includes.
function handoffLine(m, f) {
  const h = m.handoffOf(f.index);
  if (!h) return '';
  const who = (p) => `<b>${fmt.esc(p ?? '?')}</b>`;
  if (h.state === 'not_resumed')
    return `<div class="handoff dim">handed off by ${who(h.origin)} to ${who(h.finisher)} at ${fmt.at(h.handed)}: <span class="warn">not resumed in this capture</span> (its end is in ${fmt.esc(h.finisher ?? '?')}'s capture, or it was lost)</div>`;
  const origin = h.state === 'joined' ? '' : ' (its half is not in this capture: the stages it ran came in the token)';
  return `<div class="handoff dim">from ${who(h.origin)}${origin} to ${who(h.finisher)}: handed off at ${fmt.at(h.handed)}, resumed at ${fmt.at(h.resumed)} · ` +
    `<span class="gap">hand-off gap ${fmt.dur(h.gap)}</span>, included in the total (a span across two processes, not a frame's cost: the stages are)</div>`;
}

// What an operation says of itself: kind, window, frame id, committed, hand-off.
function opLine(f) {
  const idNote = f.kind === 'pass' ? ` · frame id ${f.number}${f.appFrameId ? ' (the application\'s)' : ''}` : '';
  return `<div class="opline dim">operation ${f.id} · ${fmt.esc(f.kind)} · window <b>${fmt.esc(f.window ?? '')}</b>${idNote} · ` +
    `${f.state ? `<b>${fmt.esc(f.state)}</b>` : f.committed ? 'committed' : '<b>not committed</b>'}${f.handedOff && !f.remote ? ' · handed off between threads' : ''}</div>`;
}
