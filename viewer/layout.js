// layout.js — owns the timeline's side columns (the frames list on the left,
// the detail panel on the right): their widths, the splitters between them and
// the flame chart (drag to resize, double-click for the default width, the
// button to collapse and restore), and remembering them in this browser
// (localStorage). Defaults follow the window's width so the flame chart keeps
// about half of it at 1024 px (docs/viewer.md §Layout). Nothing else sets the
// timeline's column widths; views only react to their own element's size.

const KEY = 'strobe.columns';
const SPLIT = 6;          // px: a splitter's width
const MIN = { list: 150, detail: 200 };
const FLAME_MIN = 240;    // px the flame chart keeps however wide the side columns are dragged

const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, v));

// The default widths at a window width: the list 21 % (all five of its columns at 1600 px), the detail a quarter (within bounds).
export function defaultWidths(vw) {
  return { list: Math.round(clamp(0.21 * vw, 190, 360)), detail: Math.round(clamp(0.26 * vw, 250, 460)) };
}

export class Columns {
  constructor(root) {
    this.root = root;
    this.width = { list: null, detail: null };        // null: the default for the window
    this.collapsed = { list: false, detail: false };
    try {
      const saved = JSON.parse(localStorage.getItem(KEY) || 'null');
      if (saved) for (const side of ['list', 'detail']) {
        if (Number.isFinite(saved.width?.[side])) this.width[side] = saved.width[side];
        this.collapsed[side] = !!saved.collapsed?.[side];
      }
    } catch { /* storage unavailable or malformed: the defaults */ }
    for (const el of root.querySelectorAll('.splitter')) this._bind(el, el.dataset.side);
    window.addEventListener('resize', () => this.apply());
    this.apply();
  }

  // The width a side column gets now (0 when collapsed), leaving the flame chart FLAME_MIN.
  current(side) {
    if (this.collapsed[side]) return 0;
    const vw = this.root.clientWidth || window.innerWidth;
    const other = side === 'list' ? 'detail' : 'list';
    const otherW = this.collapsed[other] ? 0 : (this.width[other] ?? defaultWidths(vw)[other]);
    const w = this.width[side] ?? defaultWidths(vw)[side];
    return Math.round(clamp(w, MIN[side], Math.max(MIN[side], vw - 2 * SPLIT - FLAME_MIN - Math.min(otherW, vw / 2))));
  }

  apply() {
    const list = this.current('list'), detail = this.current('detail');
    this.root.style.gridTemplateColumns = `${list}px ${SPLIT}px minmax(0, 1fr) ${SPLIT}px ${detail}px`;
    document.documentElement.style.setProperty('--detail-w', `${detail + SPLIT}px`);   // the search results keep clear of it
    for (const side of ['list', 'detail']) {
      const el = document.getElementById(side);
      el.hidden = this.collapsed[side];
      const b = this.root.querySelector(`.splitter[data-side="${side}"] button`);
      const toLeft = (side === 'list') !== this.collapsed[side];   // the way the column goes
      b.textContent = toLeft ? '‹' : '›';
      b.title = `${this.collapsed[side] ? 'show' : 'hide'} the ${side === 'list' ? 'frames list' : 'detail panel'}`;
    }
    try { localStorage.setItem(KEY, JSON.stringify({ width: this.width, collapsed: this.collapsed })); } catch { /* not kept */ }
  }

  toggle(side) {
    this.collapsed[side] = !this.collapsed[side];
    this.apply();
  }

  _bind(el, side) {
    const btn = document.createElement('button');
    btn.type = 'button';
    el.append(btn);
    btn.addEventListener('click', (e) => { e.stopPropagation(); this.toggle(side); });
    btn.addEventListener('pointerdown', (e) => e.stopPropagation());
    let drag = null;
    el.addEventListener('pointerdown', (e) => {
      if (this.collapsed[side]) return;
      drag = { x: e.clientX, w: this.current(side) };
      el.setPointerCapture(e.pointerId);
      el.classList.add('dragging');
      e.preventDefault();
    });
    el.addEventListener('pointermove', (e) => {
      if (!drag) return;
      const dx = e.clientX - drag.x;
      this.width[side] = drag.w + (side === 'list' ? dx : -dx);
      this.width[side] = this.current(side);   // kept within bounds
      this.apply();
    });
    const end = () => { drag = null; el.classList.remove('dragging'); };
    el.addEventListener('pointerup', end);
    el.addEventListener('pointercancel', end);
    el.addEventListener('dblclick', () => { this.width[side] = null; this.collapsed[side] = false; this.apply(); });
  }
}
