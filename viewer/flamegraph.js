// flamegraph.js — owns the aggregated flame graph component: a tree of
// call paths drawn as an icicle (root on top, children below), each node as
// wide as its total, children left-heavy (largest first, as speedscope's
// "left heavy" view), so where time goes reads left to right whatever the
// order things ran in. It knows nothing of captures: it draws any tree of
// {name, total, self, count, kids, colour?} (totals in ns for spans, in
// samples for a sampled flame graph: the `value` option formats them), so the
// whole-capture view (aggview.js), the sandwich's callers and callees and a
// sampled flame graph all use it. Click a node: it fills the width (its
// ancestors stay above it, full width; click one to go back up); hover: a
// tooltip with the total, self, share of the root and count. Nodes narrower
// than MIN_PX are not drawn; the graph says how many it left out. Canvas 2D:
// at most one rectangle per node wide enough to see.

import * as fmt from './fmt.js';
import { colors } from './theme.js';

const ROW = 18;       // px per level
const BAR = 16;
const MIN_PX = 0.5;   // narrower nodes are not drawn (counted in `hidden`)
const LABEL_MIN = 30; // px: wide enough to carry its name

// Sorts every level of a tree left-heavy (largest total first; ties by name) and sets each node's parent.
export function leftHeavy(node, parent = null) {
  node.parent = parent;
  node.kids.sort((a, b) => b.total - a.total || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const k of node.kids) leftHeavy(k, node);
  return node;
}

export class FlameGraph {
  // el: the container; opts.value(v): text of a total (default: a duration);
  // opts.colour(node): CSS colour (default: by name, as the flame chart's sites);
  // opts.onPick(node): called on a click (after the zoom).
  constructor(el, opts = {}) {
    this.el = el;
    this.value = opts.value || fmt.dur;
    this.colour = opts.colour || ((n) => fmt.css(fmt.siteRGB(n.name)));
    this.onPick = opts.onPick || null;
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'fg-canvas';
    this.note = document.createElement('div');
    this.note.className = 'fg-note dim small';
    this.tip = document.createElement('div');
    this.tip.className = 'tooltip';
    this.tip.hidden = true;
    el.append(this.note, this.canvas);
    document.body.append(this.tip);
    this.root = null;
    this.focus = null;     // the node filling the width
    this.rects = [];       // drawn: {node, x, y, w}
    this.hidden = 0;
    this.canvas.addEventListener('pointermove', (e) => this._hover(e.offsetX, e.offsetY, e.clientX, e.clientY));
    this.canvas.addEventListener('pointerleave', () => { this.tip.hidden = true; });
    this.canvas.addEventListener('click', (e) => {
      const r = this.at(e.offsetX, e.offsetY);
      if (!r) return;
      this.focus = r.node === this.focus && r.node.parent ? r.node.parent : r.node;
      this.draw();
      if (this.onPick) this.onPick(r.node);
    });
    new ResizeObserver(() => this.draw()).observe(el);
  }

  // tree: {name, total, self, count, kids} (made left-heavy here).
  setTree(root) {
    this.root = root ? leftHeavy(root) : null;
    this.focus = this.root;
    this.draw();
  }

  // The drawn node under (x, y) in canvas CSS px, or null.
  at(x, y) {
    for (const r of this.rects) if (x >= r.x && x < r.x + Math.max(r.w, 1) && y >= r.y && y < r.y + BAR) return r;
    return null;
  }

  draw() {
    const c = this.canvas, root = this.root;
    const w = Math.max(1, Math.floor(this.el.clientWidth));
    this.rects = [];
    this.hidden = 0;
    if (!root || !(root.total > 0)) {
      c.width = c.height = 0;
      this.note.textContent = root ? 'nothing to show: no time in this tree' : '';
      return;
    }
    // The focus's ancestors on top (full width), then the focus's subtree scaled to the width.
    const chain = [];
    for (let n = this.focus; n; n = n.parent) chain.unshift(n);
    let depth = 0;
    const levels = [];
    const walk = (n, x, d, scale) => {
      const bw = n.total * scale;
      if (bw < MIN_PX) { this.hidden++; return; }
      levels[d] = true;
      this.rects.push({ node: n, x, y: d * ROW, w: bw });
      let cx = x;
      for (const k of n.kids) { walk(k, cx, d + 1, scale); cx += k.total * scale; }
    };
    for (const n of chain.slice(0, -1)) { this.rects.push({ node: n, x: 0, y: depth * ROW, w, ancestor: true }); depth++; }
    walk(this.focus, 0, depth, w / this.focus.total);
    const h = Math.max(levels.length, depth + 1) * ROW + 2;
    const dpr = window.devicePixelRatio || 1;
    c.width = Math.round(w * dpr);
    c.height = Math.round(h * dpr);
    c.style.width = w + 'px';
    c.style.height = h + 'px';
    const g = c.getContext('2d'), C = colors();
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    g.font = '11px system-ui, sans-serif';
    g.textBaseline = 'middle';
    for (const r of this.rects) {
      g.globalAlpha = r.ancestor ? 0.45 : 1;
      g.fillStyle = this.colour(r.node);
      g.fillRect(r.x, r.y, Math.max(r.w - 1, 0.5), BAR);
      g.globalAlpha = 1;
      if (r.w >= LABEL_MIN) {
        g.fillStyle = C.ink;
        const text = `${r.node.name} ${this.value(r.node.total)}`;
        const chars = Math.floor((r.w - 8) / 6.2);
        g.fillText(text.length > chars ? text.slice(0, Math.max(0, chars - 1)) + '…' : text, r.x + 4, r.y + BAR / 2 + 0.5);
      }
    }
    this.note.textContent = `${this.focus === root ? root.name : `${this.focus.name} (click a faded bar above to go up)`} · ${this.value(this.focus.total)}` +
      (this.hidden ? ` · ${fmt.count(this.hidden)} nodes narrower than half a pixel not drawn` : '');
  }

  _hover(x, y, cx, cy) {
    const r = this.at(x, y);
    if (!r) { this.tip.hidden = true; return; }
    const n = r.node, root = this.root;
    this.tip.innerHTML = `<b>${fmt.esc(n.name)}</b><div class="dim">${fmt.esc(n.path || n.name)}</div><table>` +
      `<tr><td>total</td><td>${this.value(n.total)} · ${(100 * n.total / root.total).toFixed(1)}% of ${fmt.esc(root.name)}</td></tr>` +
      `<tr><td>self</td><td>${this.value(n.self)}</td></tr>${n.count != null ? `<tr><td>count</td><td>${fmt.count(n.count)}</td></tr>` : ''}</table>`;
    this.tip.hidden = false;
    this.tip.style.transform = `translate(clamp(4px, ${cx + 14}px, calc(100vw - 100% - 4px)), clamp(4px, ${cy + 14}px, calc(100vh - 100% - 4px)))`;
  }

  // What is drawn, for the tests: [{name, path, x, y, w, total, ancestor}].
  drawn() {
    return this.rects.map((r) => ({ name: r.node.name, path: r.node.path || r.node.name, x: r.x, y: r.y, w: r.w, total: r.node.total, ancestor: !!r.ancestor }));
  }
}
