// sessions.js — owns the live sessions view: the profiling sessions the
// application's collector holds (in-process, MCP and viewer-owned; bounded as
// docs/sessions.md §Bounds and lifecycle says), starting one from the viewer, and reading,
// resetting (docs/sessions.md §Reset) or ending the viewer's own, as the JSON v1 report
// rendered for people: status, counts (idle passes apart), what a bound cut,
// per-kind, per-population and per-stage percentiles each with its n,
// counter means and maxima, coverage (unavailable is not zero), samples
// newest first with duration colours and the memory sampled in them,
// unfinished work apart, memory gauges, losses and cost.
// Only served by a running application (not by `strobe view`).

import * as api from './api.js';
import { state } from './state.js';
import * as fmt from './fmt.js';

const ms = (v) => (v == null ? '—' : fmt.dur(v * 1e6));

export class Sessions {
  constructor(el) {
    this.el = el;
    this.report = null;
    this.reportId = null;
    this.timer = 0;
    el.addEventListener('click', (e) => this._click(e));
  }

  show(active) {
    clearInterval(this.timer);
    this.timer = 0;
    if (!active) return;
    this.refresh();
    this.timer = setInterval(() => this.refresh(), 1000);
  }

  // One request at a time: the periodic refresh and a button's action never
  // overlap, so a refresh never asks for a session that the action is ending
  // (the server answers 410 for an ended id). A refresh already waiting in
  // the queue stands for the next one, so a slow server never builds a backlog.
  refresh() {
    if (this.refreshQueued) return this.pending;
    this.refreshQueued = true;
    this.pending = (this.pending || Promise.resolve()).then(() => {
      this.refreshQueued = false;
      return this._refresh();
    });
    return this.pending;
  }

  async _refresh() {
    try {
      const list = await api.json('/api/sessions');
      if (this.reportId && (!this.report || !this.report.final)) {
        try { this.report = await api.json(`/api/sessions/${encodeURIComponent(this.reportId)}`); } catch (e) { this.error = e.message; }
      }
      this.render(list);
    } catch (e) {
      this.el.innerHTML = `<div class="empty">Sessions are not available: ${fmt.esc(e.message)}</div>`;
    }
  }

  _click(e) {
    const b = e.target.closest('button[data-act]');
    if (!b) return;
    this.pending = (this.pending || Promise.resolve()).then(() => this._act(b));
  }

  async _act(b) {
    const id = b.dataset.id;
    try {
      this.error = '';
      if (b.dataset.act === 'start') {
        const n = Number(this.el.querySelector('#sess-max').value) || 120;
        const dev = this.el.querySelector('#sess-dev').checked;
        const r = await api.post('/api/sessions', { max_samples: n, include_devtools: dev });
        this.reportId = r.id;
        this.report = null;
      } else if (b.dataset.act === 'read') {
        this.reportId = id;
        this.report = await api.json(`/api/sessions/${encodeURIComponent(id)}`);
      } else if (b.dataset.act === 'reset') {
        this.reportId = id;
        this.report = await api.post(`/api/sessions/${encodeURIComponent(id)}/reset`);
      } else if (b.dataset.act === 'end') {
        this.reportId = id;
        this.report = await api.del(`/api/sessions/${encodeURIComponent(id)}`);
      }
    } catch (err) {
      this.error = `${err.name}: ${err.message}`;
    }
    await this._refresh();
  }

  render(list) {
    const rows = list.sessions.map((s) => `<tr><td>${fmt.esc(s.id)}</td><td>${s.owner}</td><td class="num">${s.max_samples}</td>` +
      `<td class="num">${fmt.count(s.completed)}</td><td class="num">${fmt.count(s.retained)}</td><td class="num">${fmt.count(s.dropped)}</td>` +
      `<td class="num">${fmt.count(s.boundary_excluded)}</td><td class="num">${fmt.count(s.resets || 0)}</td><td class="num">${(s.started_ms / 1000).toFixed(3)} s</td><td>` +
      (s.owner === 'viewer' ? `<button data-act="read" data-id="${fmt.esc(s.id)}">Read</button> ` +
        `<button data-act="reset" data-id="${fmt.esc(s.id)}" title="discard what it kept so far; it keeps running">Reset</button> ` +
        `<button data-act="end" data-id="${fmt.esc(s.id)}">End</button>`
        : '<span class="dim">not the viewer\'s</span>') + '</td></tr>');
    this.el.innerHTML =
      `<div class="toolbar"><button data-act="start" class="primary">Start session</button>` +
      `<label>max samples <input id="sess-max" type="number" min="1" max="240" value="120"></label>` +
      `<label><input id="sess-dev" type="checkbox"> include devtools windows</label>` +
      `<span class="dim">${list.sessions.length} of ${list.max_sessions} sessions active · a session keeps whole operations that start after it</span>` +
      (this.error ? `<span class="warn">${fmt.esc(this.error)}</span>` : '') + '</div>' +
      `<table class="grid sessions"><tr><th>id</th><th>owner</th><th class="num">max</th><th class="num">completed</th><th class="num">retained</th><th class="num">dropped</th>` +
      `<th class="num">boundary excl.</th><th class="num">resets</th><th class="num">started</th><th></th></tr>` +
      (rows.join('') || '<tr><td colspan="10" class="dim">no active session</td></tr>') + '</table>' +
      (this.report ? renderReport(this.report) : '');
  }
}

// Frame rates per window, never summed across windows (docs/sessions.md §Frame rate):
// first to last over the session's passes of the window, steady from the returned samples.
function frameRates(fr, ms) {
  const one = (w) => w.passes_per_second != null
    ? `${w.passes_per_second.toFixed(1)} passes/s over the first-to-last span ${ms(w.first_to_last_span_ms)} (${w.passes} passes)` +
      ` · steady ${w.steady_passes_per_second != null ? w.steady_passes_per_second.toFixed(1) + ' passes/s from the median interval ' + ms(w.median_interval_ms) + ' (n=' + w.intervals_n + ')' : '—'}`
    : 'null — ' + fmt.esc(w.null_reason || '');
  const by = fr.by_window || [];
  if (by.length <= 1) return one(fr);
  return by.map((w) => `${fmt.esc(w.window)}: ${one(w)}`).join(' · ');
}

export function renderReport(r) {
  const c = r.counts;
  const byKind = Object.entries(c.completed_by_kind || {}).map(([k, v]) => `${k} ${fmt.count(v)}`).join(' · ');
  const dist = (rows, first) => rows.map((d) => `<tr><td>${first(d)}</td><td class="num">${d.n}</td><td class="num">${ms(d.p50_ms)}</td>` +
    `<td class="num">${ms(d.p95_ms)}</td><td class="num">${ms(d.p99_ms)}</td><td class="num">${ms(d.max_ms)}</td></tr>`).join('');
  const head = '<tr><th></th><th class="num">n</th><th class="num">p50</th><th class="num">p95</th><th class="num">p99</th><th class="num">max</th></tr>';
  const samples = (r.samples || []).slice(0, 60).map((s) => {
    const cls = fmt.durClass(s.total_ms * 1e6, state.thresholds);
    const stages = (s.stages || []).map((st) => st.available === false
      ? `${fmt.esc(st.name)} <span class="unavailable">unavailable</span>`
      : `${fmt.esc(st.name)}${st.nested_in ? '⊂' + fmt.esc(st.nested_in) : ''} ${ms(st.total_ms)}${st.count > 1 ? ' ×' + st.count : ''}`).join(', ');
    const mem = (s.memory || []).map((g) => `${fmt.esc(g.name)} ${fmt.num(g.value)}`).join(' · ');
    return `<tr><td class="num">${s.id}</td><td><i class="kdot" style="background:${fmt.KIND_COLORS[s.kind] || '#888'}"></i>${s.kind}</td><td>${fmt.esc(s.window)}</td>` +
      `<td class="num">${s.frame_id ?? ''}</td><td class="num dur ${cls}">${ms(s.total_ms)}</td><td>${s.committed ? '' : '<span class="warn">not committed</span>'}${s.handed_off ? ' handed off' : ''}${s.population ? ' <span class="pop">' + fmt.esc(s.population) + '</span>' : ''}</td>` +
      `<td class="dim small">${stages}${mem ? ' · <span class="mem">memory: ' + mem + '</span>' : ''}</td></tr>`;
  }).join('');
  const unfinished = (r.unfinished || []).map((u) => `<tr><td class="num">${u.id}</td><td>${u.kind}</td><td>${fmt.esc(u.window)}</td>` +
    `<td>${u.phase ? fmt.esc(u.phase) + ' for ' + ms(u.phase_elapsed_ms) : '—'}</td><td class="num">${ms(u.elapsed_ms)} so far</td>` +
    `<td>${u.state === 'stalled' ? 'stalled: ' + u.elapsed_vs_p95 + '× its kind\'s p95' : u.state === 'in_flight' ? 'in flight' : 'no completed ' + u.kind + ' to compare'}</td>` +
    `<td>${u.started_before_session ? 'began before the session' : ''}</td></tr>`).join('');
  const fr = r.frame_rate || {};
  const gauges = (r.memory && r.memory.gauges || []).map((g) => `${fmt.esc(g.name)} ${fmt.unit(g.value, g.unit)}`).join(' · ');
  const ses = r.session || {};
  const popHead = '<tr><th>kind</th><th>population</th><th class="num">n</th><th class="num">p50</th><th class="num">p95</th><th class="num">p99</th><th class="num">max</th></tr>';
  const pops = (r.population_summary || []).map((d) => `<tr><td>${d.kind}</td><td>${d.population != null ? fmt.esc(d.population) : '<span class="dim">unlabelled</span>'}</td>` +
    `<td class="num">${d.n}</td><td class="num">${ms(d.p50_ms)}</td><td class="num">${ms(d.p95_ms)}</td><td class="num">${ms(d.p99_ms)}</td><td class="num">${ms(d.max_ms)}</td></tr>`).join('');
  const ctrs = (r.counter_summary || []).map((d) => `<tr><td>${fmt.esc(d.name)}</td><td class="num">${d.n}</td><td class="num">${fmt.num(d.mean)}</td><td class="num">${fmt.num(d.max)}</td></tr>`).join('');
  const cov = (r.coverage || []).map((d) => `<tr class="coverage"><td>${d.what}</td><td>${fmt.esc(d.name)}</td><td class="num">${d.unavailable_n}</td><td class="num">${d.available_n}</td></tr>`).join('');
  // What the bounds and the label rule cut, said whenever it is not nothing (docs/sessions.md "Per-thread bounds").
  const cuts = [['abandoned (window closed mid-operation)', c.abandoned], ['nested past 8 (no stages kept)', c.nesting_overflow],
    ['stage summaries not listed', c.stage_summary_dropped], ['labels replaced by invalid_label', c.labels_replaced],
    ['labels refused', c.labels_refused], ['gauge samples not kept', r.memory && r.memory.gauges_dropped]]
    .filter(([, n]) => n > 0).map(([what, n]) => `${what} ${fmt.count(n)}`).join(' · ');
  const nested = (d) => !d.nested_in ? '' : d.parent_incomplete > 0
    ? ` <span class="warn">nested in ${fmt.esc(d.nested_in)}, which did not complete in ${d.parent_incomplete} of ${d.n} samples: there it is in no listed stage</span>`
    : ` <span class="dim">nested in ${fmt.esc(d.nested_in)}: do not sum</span>`;
  return `<section class="report"><h3>Report ${fmt.esc(r.id)} ${r.final ? '(final)' : '(live read)'} — ${fmt.esc(r.status)}</h3>` +
    (r.loss && r.loss.events_lost ? `<div class="warn">⚠ ${fmt.count(r.loss.events_lost)} ring events lost while this session ran (overflow ${fmt.esc(r.loss.overflow)}): captures and streams miss them; these samples are complete</div>` : '') +
    `<div class="dim">${fmt.esc(r.status_note || '')}</div>` +
    `<div>completed ${fmt.count(c.completed)} (${byKind || 'none'}) · returned ${c.returned} · dropped ${c.dropped} · boundary-excluded ${c.boundary_excluded} · <span class="idle">idle ${fmt.count(c.idle || 0)} (not samples)</span> · unfinished ${c.unfinished}</div>` +
    (cuts ? `<div class="warn">${cuts}</div>` : '') +
    (ses.resets ? `<div class="resets">reset ${ses.resets}× — the last at ${(ses.reset_ms / 1000).toFixed(3)} s: everything above counts from then</div>` : '') +
    (r.truncated ? `<div class="warn truncated">truncated by ${(r.truncated_by || []).map(fmt.esc).join(', ')}</div>` : '') +
    `<div>frame rate: ${frameRates(fr, ms)}` +
    ` · cost ${r.cost && r.cost.event_ns != null ? r.cost.event_ns.toFixed(1) + ' ns/event' : 'not measured'} on recording threads (${r.overhead_per_scope_ns != null ? r.overhead_per_scope_ns.toFixed(1) + ' ns' : '?'}/scope) · drain ${r.cost && r.cost.drain_ns_per_event != null ? r.cost.drain_ns_per_event.toFixed(1) + ' ns/event' : 'idle'}${gauges ? ' · memory: ' + gauges : ''}</div>` +
    ((r.kind_summary || []).length ? `<h4>By kind</h4><table class="grid">${head}${dist(r.kind_summary, (d) => d.kind)}</table>` : '') +
    ((r.stage_summary || []).length ? `<h4>Stages (distribution of per-sample totals)</h4><table class="grid">${head}${dist(r.stage_summary, (d) => fmt.esc(d.name) + nested(d))}</table>` : '') +
    (pops ? `<h4>By kind and population (each with its n; do not pool them)</h4><table class="grid populations">${popHead}${pops}</table>` : '') +
    (ctrs ? `<h4>Counters (over the samples that carry each)</h4><table class="grid counters"><tr><th></th><th class="num">n</th><th class="num">mean</th><th class="num">max</th></tr>${ctrs}</table>` : '') +
    (cov ? `<h4>Coverage: unavailable, not zero</h4><table class="grid coverage"><tr><th></th><th>name</th><th class="num">unavailable in</th><th class="num">measured in</th></tr>${cov}</table>` : '') +
    (unfinished ? `<h4>Unfinished work (never a completed sample)</h4><table class="grid unfinished"><tr><th class="num">id</th><th>kind</th><th>window</th>` +
      `<th>phase</th><th class="num">elapsed</th><th>state</th><th></th></tr>${unfinished}</table>` : '') +
    `<h4>Samples, newest first${(r.samples || []).length > 60 ? ' (first 60)' : ''}</h4>` +
    (samples ? `<table class="grid samples"><tr><th class="num">id</th><th>kind</th><th>window</th><th class="num">frame</th><th class="num">total</th><th></th><th>stages</th></tr>${samples}</table>` : '<div class="dim">no samples: empty is not fast</div>') +
    '</section>';
}
