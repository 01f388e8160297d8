// shortcuts.js — owns the viewer's keyboard and pointer vocabulary, defined
// once: FLAME_KEYS maps each flame-chart key to its action (flame.js looks
// keys up here, so the list cannot drift from what the keys do), OTHER_INPUT
// lists the rest (search, frames list, strip, splitters, the pointer), and
// the `?` overlay shows both. Escape or `?` closes the overlay.

import { esc } from './fmt.js';

// Flame chart keys: [keys, action (flame.js), what a person reads].
export const FLAME_KEYS = [
  [['+', '=', 'w', 'W'], 'zoomIn', 'zoom in'],
  [['-', '_', 's', 'S'], 'zoomOut', 'zoom out'],
  [['ArrowLeft', 'a', 'A'], 'panLeft', 'pan left'],
  [['ArrowRight', 'd', 'D'], 'panRight', 'pan right'],
  [['ArrowUp'], 'scrollUp', 'scroll the lanes up'],
  [['ArrowDown'], 'scrollDown', 'scroll the lanes down'],
  [['0', 'Home'], 'whole', 'show the whole capture'],
  [['Escape'], 'clear', 'clear the selected span, then the selected range'],
];

const BY_KEY = new Map(FLAME_KEYS.flatMap(([keys, act]) => keys.map((k) => [k, act])));

// The flame chart's action for a key, or null.
export function flameAction(key) {
  return BY_KEY.get(key) || null;
}

// Everything else: [what to press, where, what it does].
export const OTHER_INPUT = [
  ['/', 'anywhere', 'search spans'],
  ['Enter, Shift + Enter', 'search box', 'next / previous match (selected and shown in the flame chart)'],
  ['n, N', 'anywhere', 'next / previous match of the search or the statistics row'],
  ['Escape', 'search box', 'clear the search (text, statistics row, element filter)'],
  ['click, double-click', 'statistics row', "light the name's spans in the scope; go to the first"],
  ['↑ ↓', 'frames list', 'previous / next frame'],
  ['?', 'anywhere', 'show or hide this list'],
  ['wheel, pinch', 'flame chart', 'zoom at the pointer'],
  ['Shift + wheel', 'flame chart', 'scroll the lanes'],
  ['drag', 'flame chart', 'pan'],
  ['Shift + drag', 'flame chart', 'select a time range: its statistics'],
  ['click', 'flame graph', 'zoom into a node (a faded bar above: back up) and show its sandwich'],
  ['click', 'flame chart', 'select a span (a grey dense bar: zoom into it); a lane header: collapse the lane'],
  ['click, drag', 'frame strip', 'select a frame; zoom the flame chart to a range'],
  ['drag, double-click', 'column splitter', 'resize a side column; its default width'],
  ['click', 'detail pie', 'one level down into a slice (↑ one level up)'],
];

const KEY_NAMES = { ArrowLeft: '←', ArrowRight: '→', ArrowUp: '↑', ArrowDown: '↓', Escape: 'Esc' };

export class Shortcuts {
  constructor(el) {
    this.el = el;
    const keys = FLAME_KEYS.map(([ks, act, what]) => `<tr data-act="${act}"><td>${ks.map((k) => `<kbd data-key="${esc(k)}">${esc(KEY_NAMES[k] || k)}</kbd>`).join(' ')}</td>` +
      `<td class="dim">flame chart</td><td>${esc(what)}</td></tr>`).join('');
    const other = OTHER_INPUT.map(([k, where, what]) => `<tr><td><kbd>${esc(k)}</kbd></td><td class="dim">${esc(where)}</td><td>${esc(what)}</td></tr>`).join('');
    el.innerHTML = `<div class="overlay-box" role="dialog" aria-label="keyboard shortcuts"><h3>Keyboard and pointer <button data-close title="close (Esc)">×</button></h3>` +
      `<table class="grid shortcuts">${keys}${other}</table></div>`;
    el.addEventListener('click', (e) => { if (e.target === el || e.target.closest('[data-close]')) this.show(false); });
  }

  get open() { return !this.el.hidden; }

  show(on = !this.open) {
    this.el.hidden = !on;
  }
}
