// samples.js — owns the Samples tab (docs/viewer.md §Samples): the
// sampler's records (meta.sampler, docs/exploration.md §Sampling). Under
// each thread's lane name, a strip over the flame chart's time range
// (following its zoom and pan, as the counters do; or over the whole
// capture, the tab's choice) shows a
// tick per sample and its off-CPU gaps from context switches (blocked:
// asleep or waiting; preempted: runnable without a CPU); below, the whole
// capture's samples as one sampled flame graph (flamegraph.js, the
// whole-capture flame graph's component: root at the top, each function as
// wide as its share of the samples, left-heavy; hover says its samples, a
// click zooms). What the model or the writer cut is said in the header line.

import { state, on } from './state.js';
import * as fmt from './fmt.js';
import { colors } from './theme.js';
import { FlameGraph } from './flamegraph.js';
import { drawThreadRecords, OFFCPU } from './offcpu.js';

const STRIP_H = 18;
const LABEL_W = 160;

// The meta's call tree (parallel arrays, node 0 the root) as flamegraph.js's {name, total, self, kids}.
export function sampleTree(s) {
  const f = s.flame, n = f.func.length;
  if (!n) return null;
  const nodes = [];
  for (let k = 0; k < n; k++) {
    nodes.push({ name: k ? s.functions[f.func[k]] || '?' : 'all samples', total: f.total[k], self: f.self[k], kids: [] });
  }
  for (let k = 1; k < n; k++) {
    nodes[k].path = `${f.parent[k] > 0 ? nodes[f.parent[k]].path : ''}${f.parent[k] > 0 ? ' > ' : ''}${nodes[k].name}`;
    nodes[f.parent[k]].kids.push(nodes[k]);
  }
  return nodes[0];
}

export class Samples {
  constructor(el) {
    this.el = el;
    this.model = null;
    this.graph = null;  // FlameGraph, made at the first render with samples
    this.follow = true; // the strips span the flame chart's range; false: the whole capture
    el.addEventListener('change', (e) => {
      if (e.target.classList.contains('samples-x')) { this.follow = e.target.value === 'view'; this.drawLanes(); }
    });
    on('view', () => this.drawSoon());
  }

  // The strips' time range: the flame chart's (following it), or the whole capture.
  range() {
    if (this.follow && state.view && state.view.t1 > state.view.t0) return { lo: state.view.t0, hi: state.view.t1 };
    return this.model.range;
  }

  drawSoon() {
    if (this.raf || !this.lanes || state.tab !== 'samples') return;
    this.raf = requestAnimationFrame(() => { this.raf = 0; this.drawLanes(); });
  }

  setModel(model) {
    this.model = model;
    if (state.tab === 'samples') this.render();
  }

  render() {
    const m = this.model;
    const s = m && m.meta.sampler;
    if (!s) {
      this.el.innerHTML = '<p class="samples-none">No sampler records in this capture: start the sampler '
        + '(<code>strobe_sampler_start</code>, or <code>STROBE_SAMPLE=on</code>) while it records.</p>';
      return;
    }
    const cut = [];
    if (s.lost) cut.push(`${fmt.count(s.lost)} records dropped by the kernel`);
    if (s.frames_cut) cut.push(`${fmt.count(s.frames_cut)} frames past 64 per stack`);
    if (s.addresses_cut) cut.push(`${fmt.count(s.addresses_cut)} frames past the address table`);
    if (s.ticks_cut) cut.push(`${fmt.count(s.ticks_cut)} sample ticks not drawn`);
    if (s.flame_cut) cut.push(`${fmt.count(s.flame_cut)} stacks cut at the flame graph's node bound`);
    if (s.intervals_cut) cut.push(`${fmt.count(s.intervals_cut)} off-CPU gaps not drawn`);
    this.el.innerHTML = `<div class="samples-head">${fmt.count(s.samples)} samples`
      + `${s.rate_hz ? ` at ${s.rate_hz} Hz of CPU time` : ''}, ${fmt.count(s.switches)} context switches`
      + `${cut.length ? ` · cut: ${cut.join(', ')}` : ''}</div>`
      + `<div class="samples-legend"><span style="background:${OFFCPU.tick};width:2px"></span> sample `
      + `<span style="background:${OFFCPU.blocked}"></span> blocked <span style="background:${OFFCPU.preempted}"></span> `
      + 'preempted (also shaded over each lane of the timeline)</div>'
      + `<div class="toolbar samples-bar"><label>strips over <select class="samples-x"><option value="view"${this.follow ? ' selected' : ''}>`
      + `the flame chart's range</option><option value="capture"${this.follow ? '' : ' selected'}>the whole capture</option></select></label> `
      + '<span class="samples-inview dim"></span></div>'
      + '<canvas class="samples-lanes"></canvas><div class="samples-flame"></div>';
    this.lanes = this.el.querySelector('.samples-lanes');
    if (this.graph) this.graph.tip.remove();
    this.graph = new FlameGraph(this.el.querySelector('.samples-flame'), { value: (v) => `${fmt.count(v)} samples` });
    this.drawLanes();
    this.graph.setTree(sampleTree(s));
  }

  laneName(th) {
    return th.thread >= 0 ? this.model.threadName(th.thread) : `tid ${th.tid} (no scopes)`;
  }

  drawLanes() {
    if (!this.lanes || !this.model) return;
    const s = this.model.meta.sampler, c = this.lanes, col = colors();
    const w = this.el.clientWidth || 800;
    const threads = s.threads.filter((t) => t.t.length || t.off.length);
    c.width = w * devicePixelRatio;
    c.height = Math.max(1, threads.length) * (STRIP_H + 4) * devicePixelRatio;
    c.style.width = `${w}px`;
    c.style.height = `${c.height / devicePixelRatio}px`;
    const g = c.getContext('2d');
    g.scale(devicePixelRatio, devicePixelRatio);
    const { lo, hi } = this.range();
    const span = w - LABEL_W - 4;
    g.font = '11px sans-serif';
    const inview = this.el.querySelector('.samples-inview');
    if (inview) inview.textContent = `${fmt.at(lo)} to ${fmt.at(hi)} (${fmt.dur(hi - lo)})`;
    threads.forEach((th, i) => {
      const y = i * (STRIP_H + 4);
      g.fillStyle = col.fg;
      g.fillText(this.laneName(th), 4, y + 13, LABEL_W - 8);
      g.fillStyle = col.panel;
      g.fillRect(LABEL_W, y, span, STRIP_H);
      g.save(); // zoomed in, a gap that began before the range must not cover the label
      g.beginPath();
      g.rect(LABEL_W, y, span, STRIP_H);
      g.clip();
      drawThreadRecords(g, th, LABEL_W, y, y + STRIP_H, lo, (hi - lo) / span, span, STRIP_H - 6);
      g.restore();
    });
    this.laneRows = threads;
  }

}
