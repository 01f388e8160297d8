// stats.js — owns the Statistics tab: per site (a name and its source
// location), count, total, self, mean, p50, p95 and max of the spans lying
// wholly inside a scope — the whole capture, the selected frame (its
// thread's spans, as the detail panel takes them), the flame chart's visible
// range or the range selected in it (range.js) — by the rule of `strobe
// report` (`--from/--to`: scopes wholly inside; nearest-rank percentiles over
// every duration, never a sample: aggregate.js siteStats). Sortable by any column. Clicking a row
// lights every instance of its site in that scope in the flame chart and
// hands them to search.js, whose ◀ ▶ (Enter / Shift+Enter, n / N) step
// through them; a double-click goes to the first. The numbers come from
// aggregate.js siteStats, which the range selection's summary (range.js) uses too.

import { state, on, emit } from './state.js';
import * as fmt from './fmt.js';
import { siteStats } from './aggregate.js';

const COLUMNS = [
  ['name', 'name', false], ['count', 'count', true], ['total', 'total', true], ['self', 'self', true],
  ['mean', 'mean', true], ['p50', 'p50', true], ['p95', 'p95', true], ['max', 'max', true],
];

export class Stats {
  constructor(el, search) {
    this.el = el;
    this.search = search;
    this.scopeKind = 'capture';   // capture | frame | view | range
    this.sort = { key: 'total', desc: true };
    this.result = null;           // {rows, spans, scope, ms} of the last computation
    on('model', () => { this.result = null; if (this.shown) this.render(); });
    on('frame', () => { if (this.scopeKind === 'frame') this._stale(); });
    on('range-select', () => { if (this.scopeKind === 'range') this._stale(); });
    on('search', () => { if (this.shown) this._markFocus(); });
    el.addEventListener('change', (e) => {
      if (e.target.id === 'stats-scope') this.show(e.target.value);
    });
    el.addEventListener('click', (e) => {
      const th = e.target.closest('th[data-key]');
      if (th) {
        const key = th.dataset.key;
        this.sort = { key, desc: this.sort.key === key ? !this.sort.desc : key !== 'name' };
        this.render();
        return;
      }
      if (e.target.id === 'stats-refresh') { this.result = null; this.render(); return; }
      const tr = e.target.closest('tr[data-site]');
      if (tr) this.search.focusSite(Number(tr.dataset.site), this.result.scope);
    });
    el.addEventListener('dblclick', (e) => {
      const tr = e.target.closest('tr[data-site]');
      if (tr) { this.search.focusSite(Number(tr.dataset.site), this.result.scope); this.search.goTo(0); }
    });
  }

  get shown() { return !this.el.hidden; }

  _stale() { this.result = null; if (this.shown) this.render(); }

  // The scope as siteStats takes it, or a reason there is none.
  scope(kind = this.scopeKind) {
    const m = state.model;
    if (kind === 'capture') return { scope: null, label: 'the whole capture' };
    if (kind === 'frame') {
      if (state.frame < 0 || state.frame >= m.frames.rows) return { none: 'no frame is selected' };
      const f = m.frame(state.frame);
      return { scope: m.frameScope(f.index), label: `${f.kind} ${f.number} on ${m.frameWhere(f.index)}` };
    }
    if (kind === 'view') return { scope: { t0: state.view.t0, t1: state.view.t1 }, label: `the flame chart's view, ${fmt.at(state.view.t0)} to ${fmt.at(state.view.t1)}` };
    if (!state.range) return { none: 'no range is selected (Shift+drag in the flame chart)' };
    return { scope: { t0: state.range.t0, t1: state.range.t1 }, label: `the selected range, ${fmt.at(state.range.t0)} to ${fmt.at(state.range.t1)}` };
  }

  // Shows the table for a scope kind (the Statistics tab, or the range summary's link).
  show(kind) {
    this.scopeKind = kind;
    this.result = null;
    this.render();
    emit('stats-scope', kind);
  }

  render() {
    const m = state.model;
    if (!m) { this.el.innerHTML = ''; return; }
    const sc = this.scope();
    const opts = [['capture', 'whole capture'], ['frame', 'selected frame'], ['view', "flame chart's view"], ['range', 'selected range']]
      .map(([v, t]) => `<option value="${v}"${v === this.scopeKind ? ' selected' : ''}>${t}</option>`).join('');
    let body;
    if (sc.none) body = `<div class="empty">${fmt.esc(sc.none)}</div>`;
    else {
      if (!this.result) {
        const t = performance.now();
        const r = siteStats(m, sc.scope);
        this.result = { ...r, scope: sc.scope, ms: performance.now() - t };
      }
      body = this._table();
    }
    const note = sc.none ? '' : `<span class="dim">${fmt.esc(sc.label)}: ${fmt.count(this.result.spans)} spans lying wholly inside, ${fmt.count(this.result.rows.length)} names` +
      ` · click a row to light its spans, then ◀ ▶ (Enter, n) step through them; double-click: the first</span>`;
    this.el.innerHTML = `<div class="toolbar"><label>scope <select id="stats-scope">${opts}</select></label>` +
      `${this.scopeKind === 'view' ? '<button id="stats-refresh" title="the flame chart\'s view now">⟳</button>' : ''}${note}</div>${body}`;
    this._markFocus();
  }

  _table() {
    const { key, desc } = this.sort;
    const rows = this.result.rows.slice().sort((a, b) => {
      const c = key === 'name' ? a.name.localeCompare(b.name) : a[key] - b[key];
      return (desc ? -c : c) || a.site - b.site;
    });
    const head = COLUMNS.map(([k, label, num]) =>
      `<th data-key="${k}" class="${num ? 'num' : ''}${k === key ? ' sorted' : ''}">${label}${k === key ? (desc ? ' ▾' : ' ▴') : ''}</th>`).join('');
    const body = rows.map((r) => {
      const colour = fmt.css(state.model.siteRGB[r.site] || [128, 128, 128]);
      return `<tr data-site="${r.site}"><td><i class="kdot" style="background:${colour}"></i>${fmt.esc(r.name)}</td>` +
        `<td class="num">${fmt.count(r.count)}</td><td class="num">${fmt.dur(r.total)}</td><td class="num">${fmt.dur(r.self)}</td>` +
        `<td class="num">${fmt.dur(r.mean)}</td><td class="num">${fmt.dur(r.p50)}</td><td class="num">${fmt.dur(r.p95)}</td><td class="num">${fmt.dur(r.max)}</td></tr>`;
    }).join('');
    return `<table class="grid stats-table"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
  }

  _markFocus() {
    for (const tr of this.el.querySelectorAll('tr[data-site]')) tr.classList.toggle('sel', Number(tr.dataset.site) === state.focusSite);
  }
}
