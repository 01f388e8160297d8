// range.js — owns the summary of the range selected in the flame chart
// (Shift+drag: flame.js sets state.range and emits 'range-select'): a box
// over the flame chart's corner with the range's length, its bounds, how many
// spans lie wholly inside it and the names with the most time in it, by the
// statistics table's own computation (aggregate.js siteStats, the rule of
// `strobe report --from/--to`); its button opens the Statistics tab on the
// range, × (or Escape in the flame chart) clears it.

import { state, on, emit } from './state.js';
import { siteStats } from './aggregate.js';
import * as fmt from './fmt.js';

const TOP = 5;   // names listed in the box

export class RangeSummary {
  constructor(root, openStats) {
    this.el = document.createElement('div');
    this.el.className = 'range-box';
    this.el.hidden = true;
    root.append(this.el);
    on('range-select', () => this.render());
    on('model', () => { state.range = null; this.render(); });
    this.el.addEventListener('click', (e) => {
      if (e.target.closest('[data-stats]')) openStats('range');
      else if (e.target.closest('[data-clear-range]')) { state.range = null; emit('range-select', null); }
    });
  }

  render() {
    const m = state.model, r = state.range;
    this.el.hidden = !m || !r;
    if (this.el.hidden) return;
    const { rows, spans } = siteStats(m, { t0: r.t0, t1: r.t1 });
    rows.sort((a, b) => b.total - a.total || a.site - b.site);
    const top = rows.slice(0, TOP).map((x) => `<tr><td>${fmt.esc(x.name)}</td><td class="num">${fmt.dur(x.total)}</td><td class="num dim">×${fmt.count(x.count)}</td></tr>`).join('');
    this.el.innerHTML = `<div><b>range ${fmt.dur(r.t1 - r.t0)}</b> <span class="dim">${fmt.at(r.t0)} → ${fmt.at(r.t1)}</span>` +
      ` <button data-clear-range title="clear the range (Escape)">×</button></div>` +
      `<div class="dim">${fmt.count(spans)} spans lie wholly inside, ${fmt.count(rows.length)} names${rows.length > TOP ? `; the ${TOP} with the most time:` : ''}</div>` +
      `<table class="grid">${top}</table><button data-stats>Statistics of the range ›</button>`;
  }
}
