// explain.js — owns the explanation at the top of a frame's detail panel
// (docs/viewer.md §Explanation): why the selected frame took as long as it
// did, as the library says it (GET /api/capture/explain, strobe_explain_json:
// the same JSON `strobe explain --json` prints): one line naming the parts
// that exceeded their norm, each with its excess and what grew (coloured by
// kind: on CPU, blocked, preempted) and a link to the stage's span; folded
// under it, each part's split against its norms, then "rest as usual" and
// the parts the capture has no data for ("unknown", never zero).
// Must never: decide what exceeded or why (the library does), or show an
// unknown figure as zero. Answers are kept per (model, frame number).

import * as api from './api.js';
import * as fmt from './fmt.js';

const KIND_CLASS = { 'on CPU': 'ex-cpu', blocked: 'ex-blocked', preempted: 'ex-preempted', unknown: 'ex-unknown' };

const fig = (g) => (g.ns === null ? 'unknown' : fmt.dur(g.ns));

// One exceeding part: its time against its norm and its split, the stage a link to its span.
function partHtml(p) {
  const name = fmt.esc(p.name === null ? '(run-time name)' : p.name);
  let html = `<div class="ex-part ${KIND_CLASS[p.cause] || ''}" data-ex-part="${name}">${name} ${fig(p.time)} vs p50 ${p.time.p50_ns === null ? '—' : fmt.dur(p.time.p50_ns)}` +
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

// One line that names each exceeding part, its excess and what grew, the stage a link to its span; the
// details (each part's split against its norms, functions, unknown parts) fold under it, so the panel stays short.
export function explanationHtml(x) {
  const f = x.frames[0];
  if (!f) return '';
  const wall = f.wall.ns === null ? 'still running' : `${fmt.dur(f.wall.ns)} vs p50 ${f.wall.p50_ns === null ? '—' : fmt.dur(f.wall.p50_ns)} over ${f.wall.n} frames`;
  const over = f.parts.filter((p) => p.exceeded);
  const unknown = f.parts.filter((p) => p.time.ns === null);
  if (!over.length && !unknown.length) return `<div class="explain dim" title="${wall}">Every part as usual</div>`;
  const name = (p) => fmt.esc(p.name === null ? '(run-time name)' : p.name);
  const named = over.map((p) => `${p.kind === 'stage' ? `<button class="ex-link" data-ex-stage="${name(p)}" title="select this stage's span">${name(p)}</button>` : name(p)}` +
    ` +${fmt.dur(p.excess_ns)}${p.cause && p.cause !== 'none' ? ` <span class="${KIND_CLASS[p.cause] || ''}">${fmt.esc(p.cause)}</span>` : ''}`);
  let html = `<details class="explain"><summary title="${wall}"><span class="ex-head">Why:</span> ${over.length ? named.join(', ') : 'every part as usual'}` +
    `${unknown.length ? ` <span class="dim">(${unknown.length} unknown)</span>` : ''}</summary><div class="dim small">${wall}</div>`;
  html += over.map(partHtml).join('');
  const rest = [];
  if (over.length) rest.push(`rest as usual (${f.parts.length - over.length - unknown.length} parts within their norm)`);
  for (const p of unknown) rest.push(`${name(p)}: unknown (no data in this capture)`);
  if (!x.coverage.switches && over.length) rest.push('no context switches recorded: on CPU, blocked and preempted are unknown');
  return html + `<div class="dim small">${rest.join(' · ')}</div></details>`;
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
    const key = `${f.number}:${f.beginThread}`;
    const got = this.cache.get(key);
    if (got === undefined) {
      this.cache.set(key, null);
      api.explainable()
        .then((ok) => {
          if (!ok) throw new Error('nothing to explain from: the recording stopped (its last snapshot is shown); record again or open a capture');
          return api.json(`/api/capture/explain?number=${encodeURIComponent(f.number)}&thread=${f.beginThread}`);
        })
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
