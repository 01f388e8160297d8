// tree.js — owns the UI-tree tab (docs/viewer.md §UI tree): the capture's
// UI-tree snapshots (meta.trees, docs/recording.md §UI-tree snapshots), one
// of them rebuilt from its flat preorder list in one pass with a stack (pop
// while the top is as deep or deeper; what is left on top is the parent),
// shown indented under its parents with each node's type, id, bounds and
// style properties. Hovering a node outlines its bounds on a wireframe of the
// snapshot and lists the spans attributed to its element (the model's
// elements table); a click on one selects it in the timeline. In a live view
// the button asks the application for a snapshot (POST /api/tree): it lands
// in the capture and shows after the next refresh. When the snapshot's frame
// has a screenshot attached (strobe/deep.h), the outline is drawn over it.

import * as api from './api.js';
import { state, emit } from './state.js';
import * as fmt from './fmt.js';
import { hex64 } from './data.js';

const MAX_SPANS_LISTED = 200;   // spans listed for a hovered node; the rest are counted

// The one linear pass: parent index of every node (-1 for roots), or null
// when a node is more than one deeper than the node before it.
export function rebuildParents(depths) {
  const parent = new Int32Array(depths.length);
  const stack = [];
  for (let i = 0; i < depths.length; i++) {
    const d = depths[i];
    if (i === 0 ? d !== 0 : d > depths[i - 1] + 1) return null;
    while (stack.length && depths[stack[stack.length - 1]] >= d) stack.pop();
    parent[i] = stack.length ? stack[stack.length - 1] : -1;
    stack.push(i);
  }
  return parent;
}

export class UiTree {
  constructor(el) {
    this.el = el;
    this.model = null;
    this.snap = 0;          // index into meta.trees
    this.hover = -1;        // hovered node
    this.status = '';       // the last request's answer
    el.addEventListener('change', (e) => {
      if (e.target.id === 'tree-snap') { this.snap = Number(e.target.value); this.hover = -1; this.render(); }
    });
    el.addEventListener('click', async (e) => {
      if (e.target.id === 'tree-request') { await this.request(); return; }
      const s = e.target.closest('[data-span]');
      if (s) {
        state.span = Number(s.dataset.span);
        emit('span', state.span);
        emit('tab-request', 'timeline');
      }
    });
    el.addEventListener('mouseover', (e) => {
      const row = e.target.closest('[data-node]');
      if (row && Number(row.dataset.node) !== this.hover) this.hoverNode(Number(row.dataset.node));
    });
  }

  setModel(model) {
    this.model = model;
    this.shots = null;
    this.snap = 0;
    this.hover = -1;
    this.byId = null;
    this.render();
  }

  // Element id (16 hex digits) -> attributed span indexes, built once per model.
  _spansById() {
    if (this.byId) return this.byId;
    const m = this.model, E = m.elements, map = new Map();
    for (let k = 0; E && k < E.rows; k++) {
      const id = hex64(E.id_hi[k], E.id_lo[k]);
      let a = map.get(id);
      if (!a) map.set(id, (a = []));
      a.push(E.span[k]);
    }
    this.byId = map;
    return map;
  }

  // The frame a snapshot was taken in: the innermost frame row holding its time.
  _frameOf(t) {
    const m = this.model, F = m.frames;
    let best = -1;
    for (let k = 0; k < F.rows; k++)
      if (F.start[k] <= t && t <= F.start[k] + F.dur[k] && (best < 0 || F.start[k] >= F.start[best])) best = k;
    return best;
  }

  async request() {
    try {
      const r = await api.post('/api/tree', {});
      this.status = `requested: the next layout pass records a snapshot into the capture (${r.written} written so far); refresh to see it`;
    } catch (e) {
      this.status = e.message;
    }
    this.render();
  }

  hoverNode(i) {
    this.hover = i;
    for (const r of this.el.querySelectorAll('.unode.hover')) r.classList.remove('hover');
    const row = this.el.querySelector(`[data-node="${i}"]`);
    if (row) row.classList.add('hover');
    this._drawBounds();
    this._listSpans();
  }

  render() {
    const m = this.model;
    const trees = m ? m.meta.trees || [] : [];
    const button = state.live ? '<button id="tree-request" title="ask the application for a snapshot of its next layout pass">Request snapshot</button>' : '';
    const cut = m && (m.meta.trees_cut || m.meta.trees_refused)
      ? `<span class="warn"> · ${fmt.count(m.meta.trees_refused || 0)} refused by the capture's bound, ${fmt.count(m.meta.trees_cut || 0)} past the viewer's</span>` : '';
    let head = `<div class="tree-head"><b>UI tree</b> ${button} <span class="dim">${fmt.esc(this.status)}</span>${cut}</div>`;
    if (!m || !trees.length) {
      this.el.innerHTML = head + '<div class="empty">No UI-tree snapshot in this capture. An application records one with strobe_tree_request (docs/recording.md, UI-tree snapshots)' +
        (state.live ? ', or press Request snapshot while recording.' : '.') + '</div>';
      return;
    }
    if (this.snap >= trees.length) this.snap = 0;
    const t = trees[this.snap];
    const opts = trees.map((x, k) => {
      const f = this._frameOf(x.time);
      const frame = f >= 0 ? ` · ${m.frameKinds[m.frames.kind[f]]} ${m.frames.number[f]}` : '';
      const proc = fmt.processOf(m.meta, x.origin); // a merge: its process
      return `<option value="${k}"${k === this.snap ? ' selected' : ''}>#${x.seq}${proc ? ` of ${fmt.esc(proc)}` : ''} at ${fmt.at(x.time)}${frame} · ${x.nodes.length} nodes</option>`;
    }).join('');
    head += `<div class="tree-pick"><select id="tree-snap">${opts}</select>` +
      (t.nodes_dropped || t.props_dropped ? ` <span class="warn">${fmt.count(t.nodes_dropped)} nodes and ${fmt.count(t.props_dropped)} properties cut by the bounds</span>` : '') + '</div>';
    const parent = rebuildParents(t.nodes.map((n) => n[0]));
    if (!parent) { this.el.innerHTML = head + '<div class="empty">This snapshot does not rebuild (a node more than one deeper than the one before it).</div>'; return; }
    this.parent = parent;
    const level = new Int32Array(t.nodes.length);
    const spans = this._spansById();
    const rows = [];
    for (let i = 0; i < t.nodes.length; i++) {
      const [, type, id, x, y, w, h, props] = t.nodes[i];
      level[i] = parent[i] < 0 ? 0 : level[parent[i]] + 1;
      const s = m.sites[type];
      const n = (spans.get(id) || []).length;
      const p = Object.entries(props).map(([k, v]) => `${fmt.esc(k)}=${v}`).join(' ');
      rows.push(`<div class="unode" data-node="${i}" data-parent="${parent[i]}" style="--lvl:${level[i]}">` +
        `<span class="utype">${fmt.esc(s ? s.name : '?')}</span> <span class="uid dim">${id}</span> ` +
        `<span class="ubounds">[${x}, ${y}, ${w} × ${h}]</span> <span class="uprops dim">${p}</span>` +
        `<span class="uspans">${n ? `${fmt.count(n)} span${n > 1 ? 's' : ''}` : ''}</span></div>`);
    }
    this.el.innerHTML = head + `<div class="tree-body"><div class="tree-nodes">${rows.join('')}</div>` +
      '<div class="tree-side"><canvas class="tree-bounds" width="320" height="220"></canvas><div class="tree-spans"></div></div></div>';
    this._drawBounds();
    this._listSpans();
  }

  // The screenshot attached to the snapshot's frame (docs/viewer.md §Deep
  // capture), as a bitmap: loaded once per snapshot, null when there is none.
  _shot(t) {
    const m = this.model, f = this._frameOf(t.time);
    const frame = f >= 0 ? m.frames.number[f] : -1;
    let k = -1, a = null;
    for (const x of m.meta.attachments || []) if (x.frame === frame && x.origin === t.origin && x.image !== null) { k = x.image; a = x; break; }
    if (k < 0) return null;
    if (!this.shots) this.shots = new Map();
    if (!this.shots.has(k)) {
      this.shots.set(k, null);
      api.bin(`/api/capture/image/${k}`).then((buf) => createImageBitmap(new Blob([buf], { type: 'image/png' })))
        .then((bmp) => { this.shots.set(k, { bmp, w: a.width, h: a.height }); this._drawBounds(); })
        .catch(() => {});
    }
    return this.shots.get(k);
  }

  // Every node's bounds as a wireframe, scaled to fit, over the frame's
  // screenshot when one is attached; the hovered one outlined.
  _drawBounds() {
    const cv = this.el.querySelector('.tree-bounds');
    const t = this.model && (this.model.meta.trees || [])[this.snap];
    if (!cv || !t) return;
    const c = cv.getContext('2d');
    let x1 = 1, y1 = 1;
    for (const n of t.nodes) { x1 = Math.max(x1, n[3] + n[5]); y1 = Math.max(y1, n[4] + n[6]); }
    const shot = this._shot(t);
    if (shot) { x1 = Math.max(x1, shot.w); y1 = Math.max(y1, shot.h); }
    const k = Math.min(cv.width / x1, cv.height / y1);
    c.clearRect(0, 0, cv.width, cv.height);
    if (shot) c.drawImage(shot.bmp, 0, 0, shot.w * k, shot.h * k);
    cv.dataset.screenshot = shot ? 'drawn' : 'none';
    c.strokeStyle = 'rgba(139, 148, 158, 0.5)';
    c.lineWidth = 1;
    for (const n of t.nodes) c.strokeRect(n[3] * k + 0.5, n[4] * k + 0.5, n[5] * k, n[6] * k);
    if (this.hover >= 0 && this.hover < t.nodes.length) {
      const n = t.nodes[this.hover];
      c.strokeStyle = '#f0883e';
      c.lineWidth = 2;
      c.strokeRect(n[3] * k + 1, n[4] * k + 1, Math.max(1, n[5] * k - 1), Math.max(1, n[6] * k - 1));
    }
  }

  // The spans attributed to the hovered node's element, slowest first.
  _listSpans() {
    const el = this.el.querySelector('.tree-spans');
    const m = this.model, t = m && (m.meta.trees || [])[this.snap];
    if (!el || !t) return;
    if (this.hover < 0 || this.hover >= t.nodes.length) {
      el.innerHTML = '<div class="dim">Hover a node: its bounds are outlined above and the spans attributed to its element listed here.</div>';
      return;
    }
    const [, type, id] = t.nodes[this.hover];
    const s = m.sites[type];
    const list = (this._spansById().get(id) || []).slice().sort((a, b) => m.dur[b] - m.dur[a]);
    const shown = list.slice(0, MAX_SPANS_LISTED);
    el.innerHTML = `<div><b>${fmt.esc(s ? s.name : '?')}</b> <span class="dim">${id}</span>: ${fmt.count(list.length)} attributed span${list.length === 1 ? '' : 's'}` +
      (list.length > shown.length ? ` <span class="dim">(the ${shown.length} slowest listed)</span>` : '') + '</div><table class="uspanlist">' +
      shown.map((i) => `<tr data-span="${i}"><td>${fmt.esc(m.name(i))}</td><td class="num">${fmt.dur(m.dur[i])}</td><td class="dim">${fmt.at(m.start[i])} · ${fmt.esc(m.threadName(m.threadOf(i)))}</td></tr>`).join('') +
      '</table>';
  }
}
