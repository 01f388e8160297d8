// aggview.js — owns the Flame graph tab: the spans of the whole capture (or
// of the selected frame, or of the range selected in the flame chart)
// aggregated by call path — every path from a thread's outermost scope,
// merged across threads and instances (data.js pathTotals) — and drawn
// left-heavy by flamegraph.js; and the sandwich of one name: its callers
// (the paths that lead to it, X on top, each row one caller further out) and
// its callees (everything under it, merged), both weighted by X's own time.
// Click a node to zoom into it and make its name the sandwich's; the name
// box picks any name. Only the outermost instance of a recursive name counts,
// so no time is counted twice. Its state (the scope, the focused node's path,
// the sandwich's name) is part of the deep link (link.js): a change emits
// 'flamegraph', and apply() takes a link's state back, focusing the node
// once the tree of its scope is built.

import { state, on, emit } from './state.js';
import { FlameGraph } from './flamegraph.js';
import { callTree, sandwich } from './aggregate.js';
import * as fmt from './fmt.js';

export class AggView {
  constructor(el) {
    this.el = el;
    this.scopeKind = 'capture';
    this.thread = null;         // the lane shown (a thread index), 'all' (the CPU threads), null: not chosen yet
    this.pendingThread = null;  // a link's lane, taken once the model has it
    this.name = null;           // the sandwich's name
    this.tree = null;
    this.pendingFocus = null;   // a link's focused path, applied when the tree is built
    el.innerHTML = '<div class="toolbar"><label>scope <select id="fg-scope"><option value="capture">whole capture</option>' +
      '<option value="frame">selected frame</option><option value="range">selected range</option></select></label>' +
      '<label title="one thread or lane at a time: threads, GPU queues and producer lanes run side by side, so their sum exceeds the time">thread <select id="fg-thread"></select></label>' +
      '<label>sandwich of <input id="fg-name" list="fg-names" spellcheck="false" placeholder="a name (or click a node)"></label><datalist id="fg-names"></datalist>' +
      '<span id="fg-status" class="dim"></span></div>' +
      '<h3>Flame graph <span class="dim small">aggregated by call path, left-heavy (largest first): click a node to zoom in and see its sandwich</span></h3><div id="fg-main" class="fg"></div>' +
      '<div id="fg-sandwich"><h3>Callers of <span class="fg-x"></span> <span class="dim small">the name on top, each row one caller further out, widths its time through that path</span></h3><div id="fg-callers" class="fg"></div>' +
      '<h3>Callees of <span class="fg-x"></span> <span class="dim small">everything it called, merged over its instances</span></h3><div id="fg-callees" class="fg"></div></div>';
    const $ = (id) => el.querySelector('#' + id);
    this.main = new FlameGraph($('fg-main'), { onPick: (n) => { if (n.path) this.setName(n.name); else emit('flamegraph'); } });
    this.callers = new FlameGraph($('fg-callers'));
    this.callees = new FlameGraph($('fg-callees'));
    $('fg-scope').addEventListener('change', (e) => { this.scopeKind = e.target.value; this.tree = null; this.render(); emit('flamegraph'); });
    $('fg-thread').addEventListener('change', (e) => {
      this.thread = e.target.value === 'all' ? 'all' : Number(e.target.value);
      this.tree = null;
      this.render();
      emit('flamegraph');
    });
    $('fg-name').addEventListener('change', (e) => this.setName(e.target.value.trim()));
    on('model', () => { this.tree = null; this.name = null; this.thread = null; if (this.shown) this.render(); });
    on('frame', () => { if (this.scopeKind === 'frame') { this.tree = null; if (this.shown) this.render(); } });
    on('range-select', () => { if (this.scopeKind === 'range') { this.tree = null; if (this.shown) this.render(); } });
  }

  get shown() { return !this.el.hidden; }

  // What the deep link keeps: {scope, focus (a node's path, '' the root), name (the sandwich's, or null),
  // thread (the lane shown: an index, 'all', or null before the tab was first drawn)}.
  linkState() {
    const focus = this.pendingFocus != null ? this.pendingFocus : this.main.focus ? this.main.focus.path || '' : '';
    return { scope: this.scopeKind, focus, name: this.name, thread: this.pendingThread ?? this.thread };
  }

  // A link's state (link.js decode: fgScope, fgFocus, fgName, fgThread): any part may be absent.
  apply({ scope, focus, name, thread }) {
    if (thread != null) { this.pendingThread = thread; this.tree = null; }
    if (scope && scope !== this.scopeKind && /^(capture|frame|range)$/.test(scope)) {
      this.scopeKind = scope;
      this.el.querySelector('#fg-scope').value = scope;
      this.tree = null;
    }
    if (focus != null) this.pendingFocus = focus;
    if (name !== undefined) { this.name = name || null; this.el.querySelector('#fg-name').value = name || ''; }
    if (this.shown) this.render();
  }

  // Focuses the node whose path is `p` (the root when none has it).
  _focusPath(p) {
    let found = null;
    (function walk(n) { if (found) return; if ((n.path || '') === p) { found = n; return; } for (const k of n.kids) walk(k); })(this.tree);
    this.main.focus = found || this.tree;
    this.main.draw();
  }

  // The lane chosen (default: the thread with the most frame time), and the picker's options.
  _lane() {
    const m = state.model;
    if (this.pendingThread != null && (this.pendingThread === 'all' || m.threads[this.pendingThread])) {
      this.thread = this.pendingThread;   // a link's, once its model is here
      this.pendingThread = null;
    }
    if (this.thread === null || (this.thread !== 'all' && !m.threads[this.thread])) this.thread = m.busiestThread() ?? 'all';
    const sel = this.el.querySelector('#fg-thread');
    const opts = m.threads.filter((t) => t && t.depths.length).map((t) => `<option value="${t.index}"${this.thread === t.index ? ' selected' : ''}>` +
      `${fmt.esc(m.threadName(t.index))}${m.isCpu(t.index) ? '' : t.gpu_lane ? ' (GPU queue)' : ' (producer lane)'}</option>`);
    opts.push(`<option value="all"${this.thread === 'all' ? ' selected' : ''}>all CPU threads</option>`);
    sel.innerHTML = opts.join('');
    const cpus = m.threads.filter((t) => t && t.depths.length && m.isCpu(t.index)).length;
    const lanes = m.threads.filter((t) => t && t.depths.length && !m.isCpu(t.index)).length;
    return this.thread === 'all'
      ? { lane: { cpu: true }, label: `all ${cpus} CPU threads${lanes ? ` (${lanes} GPU queue and producer lane${lanes > 1 ? 's' : ''} not summed)` : ''}` }
      : { lane: { thread: this.thread }, label: m.threadName(this.thread) };
  }

  _scope() {
    const m = state.model;
    if (this.scopeKind !== 'frame') {
      const { lane, label } = this._lane();
      if (this.scopeKind === 'range') {
        if (!state.range) return { none: 'no range is selected (Shift+drag in the flame chart)' };
        return { scope: { ...lane, t0: state.range.t0, t1: state.range.t1 }, label: `${label}, ${fmt.at(state.range.t0)} to ${fmt.at(state.range.t1)}` };
      }
      return { scope: lane, label: `${label}, whole capture` };
    }
    if (state.frame < 0) return { none: 'no frame is selected' };
    const f = m.frame(state.frame);
    return { scope: m.frameScope(f.index), label: `${f.kind} ${f.number} on ${m.frameWhere(f.index)}` };
  }

  setName(name) {
    this.name = name || null;
    this.el.querySelector('#fg-name').value = name || '';
    this._sandwich();
    emit('flamegraph');
  }

  render() {
    const m = state.model;
    if (!m) return;
    const sc = this._scope();
    const status = this.el.querySelector('#fg-status');
    if (sc.none) { status.textContent = sc.none; this.main.setTree(null); this.tree = null; this._sandwich(); return; }
    if (!this.tree) {
      const t = performance.now();
      this.tree = callTree(m, sc.scope, sc.label);
      this.main.setTree(this.tree);
      status.textContent = `${fmt.count(m.meta.sites.length)} sites · built in ${(performance.now() - t).toFixed(0)} ms`;
      const names = new Set();
      (function walk(n) { for (const k of n.kids) { names.add(k.name); walk(k); } })(this.tree);
      this.el.querySelector('#fg-names').innerHTML = [...names].sort().map((n) => `<option value="${fmt.esc(n)}">`).join('');
    } else this.main.draw();
    if (this.pendingFocus != null) { this._focusPath(this.pendingFocus); this.pendingFocus = null; }
    this._sandwich();
  }

  _sandwich() {
    const box = this.el.querySelector('#fg-sandwich');
    const sw = this.tree && this.name ? sandwich(this.tree, this.name) : null;
    box.hidden = !sw;
    for (const x of box.querySelectorAll('.fg-x')) x.textContent = this.name || '';
    if (this.name && !sw && this.tree) this.el.querySelector('#fg-status').textContent = `no span named ${this.name} in this scope`;
    this.callers.setTree(sw ? sw.callers : null);
    this.callees.setTree(sw ? sw.callees : null);
  }

  // For the tests: what each graph draws.
  drawn() { return { main: this.main.drawn(), callers: this.callers.drawn(), callees: this.callees.drawn(), name: this.name }; }
}
