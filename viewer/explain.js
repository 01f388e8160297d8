// explain.js — owns the explanation at the top of a frame's detail panel
// (docs/viewer.md §Explanation): why the selected frame took as long as it
// did, as the library says it (GET /api/capture/explain, strobe_explain_json:
// the same JSON `strobe explain --json` prints). The parts that exceeded
// their norm come first, each with its split coloured by kind (on CPU,
// blocked, preempted) and a link to the stage's span; then "rest as usual"
// and the parts the capture has no data for ("unknown", never zero).
// Must never: decide what exceeded or why (the library does), or show an
// unknown figure as zero. Answers are kept per (model, frame number).

import * as api from './api.js';
import * as fmt from './fmt.js';

const KIND_CLASS = { 'on CPU': 'ex-cpu', blocked: 'ex-blocked', preempted: 'ex-preempted', unknown: 'ex-unknown' };

const fig = (g) => (g.ns === null ? 'unknown' : fmt.dur(g.ns));

// One exceeding part: its time against its norm and its split, the stage a link to its span.
function partHtml(p) {
  const name = fmt.esc(p.name === null ? '(run-time name)' : p.name);
  const label = p.kind === 'stage' ? `<button class="ex-link" data-ex-stage="${name}" title="select this stage's span">${name}</button>` : name;
  let html = `<div class="ex-part ${KIND_CLASS[p.cause] || ''}">${label} ${fig(p.time)} vs p50 ${p.time.p50_ns === null ? '—' : fmt.dur(p.time.p50_ns)}` +
    ` (n ${p.time.n})${p.kind === 'stage' ? ' self' : ''}, +${fmt.dur(p.excess_ns)}`;
  if (p.on_cpu) {
    if (p.on_cpu.ns === null) {
      html += ' <span class="ex-unknown">on CPU / blocked / preempted unknown (no context switches cover it)</span>';
    } else {
      const kinds = [['on CPU', p.on_cpu], ['blocked', p.blocked], ['preempted', p.preempted]];
      html += ': ' + kinds.map(([k, g]) => `<span class="ex-kind ${KIND_CLASS[k]}${p.causes.includes(k) ? ' ex-over' : ''}" ` +
        `title="p50 ${g.p50_ns === null ? '—' : fmt.dur(g.p50_ns)}">${k} ${fmt.dur(g.ns)}</span>`).join(' · ');
      html += ` — grew most: <b class="${KIND_CLASS[p.cause] || ''}">${fmt.esc(p.cause)}</b>`;
    }
    if (p.functions && p.functions.length) {
      html += `<div class="dim small">top on CPU: ${p.functions.map((f) => `${fmt.esc(f.name)} ${fmt.dur(f.cpu_ns)}`).join(', ')}</div>`;
    }
  }
  return html + '</div>';
}

export function explanationHtml(x) {
  const f = x.frames[0];
  if (!f) return '';
  const wall = f.wall.ns === null ? 'still running' : `${fmt.dur(f.wall.ns)} vs p50 ${f.wall.p50_ns === null ? '—' : fmt.dur(f.wall.p50_ns)} over ${f.wall.n} frames`;
  const over = f.parts.filter((p) => p.exceeded);
  const unknown = f.parts.filter((p) => p.time.ns === null);
  let html = `<div class="explain"><div class="ex-head">Why this frame took ${wall}</div>`;
  html += over.length ? over.map(partHtml).join('') : '<div class="dim">every part as usual</div>';
  if (over.length) html += `<div class="dim small">rest as usual (${f.parts.length - over.length - unknown.length} parts within their norm)</div>`;
  for (const p of unknown) html += `<div class="dim small">${fmt.esc(p.name === null ? '(run-time name)' : p.name)}: unknown (no data in this capture)</div>`;
  if (!x.coverage.switches) html += '<div class="dim small">no context switches recorded: on CPU, blocked and preempted are unknown</div>';
  return html + '</div>';
}

export class Explanations {
  constructor(onReady) {
    this.onReady = onReady; // called when an answer arrives, to render again
    this.cache = new Map();
    this.model = null;
  }

  // The panel's HTML for frame f of model m: the answer, "explaining…", or why there is none.
  html(m, f) {
    if (m !== this.model) { this.model = m; this.cache.clear(); }
    const key = `${f.number}`;
    const got = this.cache.get(key);
    if (got === undefined) {
      this.cache.set(key, null);
      api.json(`/api/capture/explain?number=${encodeURIComponent(f.number)}`)
        .then((x) => { this.cache.set(key, x); })
        .catch((e) => { this.cache.set(key, { error: e.message || String(e) }); })
        .then(() => { if (m === this.model) this.onReady(); });
      return '<div class="explain dim">explaining…</div>';
    }
    if (got === null) return '<div class="explain dim">explaining…</div>';
    if (got.error) return `<div class="explain dim small">no explanation: ${fmt.esc(got.error)}</div>`;
    return explanationHtml(got);
  }
}
