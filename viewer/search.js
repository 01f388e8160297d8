// search.js — owns finding spans and stepping through them: the header's
// search box (a name substring), the statistics table's focused site (one
// site's instances, in the table's scope: stats.js) and the detail panel's
// element filter all light a set of spans in the flame chart; this module
// lists that set in time order and steps through it (Enter / Shift+Enter in
// the search box, n / N elsewhere, the header's ◀ ▶): each step selects the
// span and shows it in the flame chart ('reveal'). The result list under the
// search box gives each match's duration, start and thread; it holds at most
// LIST_ROWS rows from the current match on and says how many it left out.
// Escape in the search box clears the search (the text, the focused site,
// the element filter), not only the box. It never changes the model.

import { state, on, emit } from './state.js';
import { inDurations, lowerBound } from './data.js';
import * as fmt from './fmt.js';

const LIST_ROWS = 100;   // rows of the result list shown at once

export class Search {
  constructor(box, matchesEl, stepperEl, listEl) {
    this.box = box;
    this.matchesEl = matchesEl;
    this.stepperEl = stepperEl;
    this.listEl = listEl;
    this.list = null;      // Uint32Array of matching spans by start, built on demand
    this.cur = -1;         // position in this.list of the selected match
    box.addEventListener('input', () => {
      state.search = box.value.trim().toLowerCase();
      state.element = null;     // a search replaces the element filter
      state.focusSite = null;   // ... and the statistics table's focused site
      emit('search', state.search);
    });
    box.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') { this.step(e.shiftKey ? -1 : 1); e.preventDefault(); }
      else if (e.key === 'Escape') { this.clear(); box.blur(); e.preventDefault(); e.stopPropagation(); }
    });
    box.addEventListener('focus', () => this._showList(true));
    box.addEventListener('blur', () => setTimeout(() => { if (!listEl.matches(':hover')) this._showList(false); }, 150));
    stepperEl.addEventListener('click', (e) => {
      const b = e.target.closest('[data-step]');
      if (b) this.step(Number(b.dataset.step));
    });
    listEl.addEventListener('click', (e) => {
      const r = e.target.closest('[data-k]');
      if (r) { this.goTo(Number(r.dataset.k)); this._showList(false); }
    });
    on('search', () => { this.list = null; this.cur = -1; this.render(); });
    on('model', () => { this.list = null; this.cur = -1; this.render(); });
    on('span', (i) => {   // a span selected elsewhere: the steps go on from it when it is a match
      if (!this.list || i < 0) return;
      const k = this.list.indexOf(i);
      if (k >= 0 && k !== this.cur) { this.cur = k; this.render(); }
    });
  }

  // Whether anything is being searched: text, a focused site or an element.
  get active() { return !!state.model && (!!state.search || state.focusSite != null || !!state.element); }

  // What lights: a site test, or for the element filter a span test.
  _test() {
    const m = state.model;
    if (state.element) return { span: (i) => { const e = m.elementOf(i); return !!e && e.id === state.element; } };
    const lit = new Uint8Array(65536);
    if (state.focusSite != null) lit[state.focusSite] = 1;
    else for (const s of m.meta.sites) if (s.name.toLowerCase().includes(state.search)) lit[s.id] = 1;
    return { lit };
  }

  // The matching spans, by start time (ties by index), inside the focused
  // site's scope when it has one ({t0, t1, thread}: spans lying wholly inside).
  matches() {
    if (this.list) return this.list;
    const m = state.model;
    if (!this.active) { this.list = new Uint32Array(0); return this.list; }
    const t = this._test(), scope = state.focusSite != null ? state.focusScope : null;
    const out = [];
    const S = m.start, site = m.site;
    if (t.span) {
      const E = m.elements;
      for (let k = 0; k < E.rows; k++) if (t.span(E.span[k])) out.push(E.span[k]);
    } else if (scope && scope.runs) { // a frame's own spans (data.js frameScope)
      for (const [from, to] of scope.runs) for (let i = from; i < to; i++) if (t.lit[site[i]]) out.push(i);
    } else {
      for (const th of m.threads) {
        if (!th) continue;
        if (scope && scope.thread != null && th.index !== scope.thread) continue;
        const parts = scope && scope.parts ? scope.parts.filter((p) => p.thread === th.index) : null; // across processes
        if (parts && !parts.length) continue;
        const ranges = parts ? parts.flatMap((p) => m.spansInside(p.thread, p.t0, p.t1))
          : scope ? m.spansInside(th.index, scope.t0, scope.t1) : th.rows.map((r) => [r.first, r.first + r.count]);
        for (const [from, to] of ranges) for (let i = from; i < to; i++) if (t.lit[site[i]]) out.push(i);
      }
    }
    const D = m.dur;   // a histogram bar's scope: its duration range alone
    this.list = Uint32Array.from(scope && scope.dur ? out.filter((i) => inDurations(scope, D[i])) : out).sort((a, b) => S[a] - S[b] || a - b);
    return this.list;
  }

  // The next (dir 1) or previous (dir -1) match after the selected one, or
  // after the flame chart's left edge when none is selected.
  step(dir) {
    const list = this.matches();
    if (!list.length) { this.render(); return -1; }
    let k;
    if (this.cur >= 0) k = (this.cur + dir + list.length) % list.length;
    else {
      const S = state.model.start;
      k = lowerBound(0, list.length, state.view.t0, (x) => S[list[x]]);
      if (dir < 0) k--;
      k = (k + list.length) % list.length;
    }
    return this.goTo(k);
  }

  goTo(k) {
    const list = this.matches();
    if (k < 0 || k >= list.length) return -1;
    this.cur = k;
    const i = list[k];
    state.span = i;
    emit('span', i);
    emit('tab-request', 'timeline');
    emit('reveal', i);
    this.render();
    return i;
  }

  clear() { this.focusSite(null, null); }

  // Lights one site's instances lying inside scope ({t0, t1, thread} or null: the whole capture);
  // site null: nothing (the search cleared).
  focusSite(site, scope) {
    this.box.value = '';
    state.search = '';
    state.element = null;
    state.focusSite = site;
    state.focusScope = site == null ? null : scope;
    emit('search', '');
  }

  render() {
    const m = state.model;
    this.stepperEl.hidden = !this.active;
    if (!this.active) { this.matchesEl.textContent = ''; this._showList(false); return; }
    // Counting is cheap for a name search (the sites' totals); the list is built on the first step.
    let text;
    if (state.element || state.focusSite != null || this.list) {
      const n = this.matches().length;
      const what = state.element ? `spans of element ${state.element}` : state.focusSite != null ? `× ${m.sites[state.focusSite]?.name ?? '?'}` : 'spans match';
      text = `${this.cur >= 0 ? `${fmt.count(this.cur + 1)} / ` : ''}${fmt.count(n)} ${what}`;
    } else {
      let n = 0;
      for (const s of m.meta.sites) if (s.name.toLowerCase().includes(state.search)) n += s.count;
      text = `${fmt.count(n)} spans match`;
    }
    this.matchesEl.textContent = text;
    if (document.activeElement === this.box || !this.listEl.hidden) this._showList(true);
  }

  _showList(on) {
    on = on && this.active && !!state.search;
    this.listEl.hidden = !on;
    if (on) this._renderList();
  }

  // The result list: LIST_ROWS matches from the current one on (in time order), each with its duration.
  _renderList() {
    const m = state.model, list = this.matches();
    const from = Math.max(0, this.cur), to = Math.min(list.length, from + LIST_ROWS);
    const rows = [];
    for (let k = from; k < to; k++) {
      const i = list[k];
      rows.push(`<tr data-k="${k}" class="${k === this.cur ? 'sel' : ''}"><td class="num dim">${k + 1}</td><td>${fmt.esc(m.name(i))}</td>` +
        `<td class="num">${fmt.dur(m.dur[i])}</td><td class="num dim">${fmt.at(m.start[i])}</td><td class="dim">${fmt.esc(m.threadName(m.threadOf(i)))}</td></tr>`);
    }
    const left = list.length - (to - from);
    this.listEl.innerHTML = list.length
      ? `<table class="grid"><tr><th class="num">#</th><th>span</th><th class="num">duration</th><th class="num">start</th><th>thread</th></tr>${rows.join('')}</table>` +
        (left ? `<div class="dim small">${fmt.count(left)} more not listed: Enter steps on, Shift+Enter back</div>` : '')
      : '<div class="dim small">no span matches</div>';
  }
}
