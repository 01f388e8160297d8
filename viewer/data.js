// data.js — owns the capture model in the browser: fetches the meta JSON and
// the packed tables the C side built (docs/viewer.md), wraps each column in a
// typed array over the fetched buffer (no copy, no parsing), and answers the
// structural questions every view asks: a span's end, thread, parent,
// children, values and loop statistics; a lane row's visible range; the
// spans of a frame; the span tree of any set of spans by name path; and what
// a span's tooltip says (the flame chart and the detail panel both show it).
//
// Spans are sorted by (thread, depth, start): each (thread, depth) run is
// contiguous and both its starts and ends ascend, so every lookup is a
// binary search.

import * as api from './api.js';
import * as fmt from './fmt.js';

// The frames table's flags (what an operation entry says of itself; 0 for
// marks and scopes): src/viewer/viewer_model.c's FF_* enum, name for name
// (CTest viewer_vocab compares them).
export const FRAME_FLAG = Object.freeze({
  OP: 1,          // an operation (pass, rebuild, input, request), not a FRAME mark or pass-category scope
  COMMITTED: 2,   // the operation committed
  HANDED_OFF: 4,  // handed to another thread or process
  APP_FRAME: 8,   // its frame id is the application's own
  DETAIL: 16,     // its stages and counters were kept from its beginning (absent, not zero, without)
  REMOTE: 32,     // it crossed processes (the handoffs table says how)
});

const CTOR = { f64: Float64Array, f32: Float32Array, u32: Uint32Array, u16: Uint16Array, u8: Uint8Array };

function wrap(buf, desc) {
  const t = { rows: desc.rows };
  for (const [name, [type, offset]] of Object.entries(desc.columns)) {
    t[name] = new CTOR[type](buf, offset, desc.rows);
  }
  return t;
}

// Loads slot 0 (the shown capture) or 1 (the compared one). With `prev`, the
// live snapshot shown until now, the spans (the bulk of a model) are appended:
// only those ending after what `prev` holds are fetched and the rest taken
// from `prev` (appendSpans); the other tables, small, are fetched whole.
// model.fetched says which way its spans came and how many rows were fetched.
export async function loadModel(slot = 0, prev = null) {
  const q = slot ? '?capture=1' : '';
  const meta = await api.json('/api/capture/meta' + q);
  const tables = {};
  const since = prev && !slot ? appendSince(prev) : null;
  let fetched = { spans: 'whole', rows: meta.tables.spans ? meta.tables.spans.rows : 0, since: null };
  await Promise.all(Object.entries(meta.tables).map(async ([name, desc]) => {
    if (name === 'spans' && since != null && desc.rows) {
      const rel = since - meta.start_ns;
      const delta = await api.bin(`/api/capture/table/spans?gen=${meta.generation}&since=${rel}`);
      const merged = appendSpans(prev, meta, unpackSince(delta), rel);
      if (!merged.refused) {
        tables.spans = merged.spans;
        fetched = { spans: 'appended', rows: merged.fetched, since: rel, bytes: delta.byteLength };
        return;
      }
      fetched = { spans: 'whole', rows: desc.rows, since: rel, fallback: merged.refused };
    }
    const buf = desc.bytes ? await api.bin(`/api/capture/table/${name}?gen=${meta.generation}${slot ? '&capture=1' : ''}`)
                           : new ArrayBuffer(8);
    tables[name] = wrap(buf, desc);
  }));
  const m = new Model(meta, tables);
  m.fetched = fetched;
  return m;
}

// >>append (docs/viewer.md §Live append)
// The instant (ns since the clock's epoch) up to which `prev` holds every
// span: the earliest of its lanes' last span ends. A lane's events reach the
// recorder in order, so what ended before its last span ended is there.
function appendSince(prev) {
  if (!prev || prev.meta.origin !== 'live' || !prev.n) return null;
  let t = Infinity;
  for (const th of prev.threads) {
    if (!th || !th.depths.length) continue;
    let last = -Infinity;
    for (const r of th.rows) if (r.count) last = Math.max(last, prev.end(r.first + r.count - 1));
    t = Math.min(t, last);
  }
  return Number.isFinite(t) ? t + prev.meta.start_ns : null;
}

// The server's ?since= answer: {rows, total, start, dur, self, index, site, depth, frame} (viewer_model.h's
// layout; frame: the owning frames row of every span of the snapshot, not only of those sent).
export function unpackSince(buf) {
  const head = new Uint32Array(buf, 0, 2), n = head[0];
  const out = { rows: n, total: head[1] };
  let at = 8;
  for (const [name, C, rows] of [['start', Float64Array, n], ['dur', Float32Array, n], ['self', Float32Array, n], ['index', Uint32Array, n],
    ['site', Uint16Array, n], ['depth', Uint8Array, n], ['frame', Uint32Array, head[1]]]) {
    out[name] = new C(buf, at, rows);
    at += Math.ceil((rows * C.BYTES_PER_ELEMENT) / 8) * 8;
  }
  return out;
}

const APPEND_TOL = 2;   // ns: one instant read through two snapshots' starts

// The new snapshot's spans table from `prev`'s spans and the `delta` (the
// spans ending after `since`, ns since the new start, and each row's first):
// every row of the new table is its spans carried from `prev` (found from the
// row's first span, which the delta holds) followed by the delta's. Null when
// any row cannot be made exactly so (a lane whose spans arrived out of time
// order, a renamed thread): {refused: why}, and the caller fetches the whole table.
function appendSpans(prev, meta, delta, since) {
  const n = meta.tables.spans.rows;
  if (delta.total !== n) return { refused: 'the answer is of another snapshot' };
  const start = new Float64Array(n), dur = new Float32Array(n), self = new Float32Array(n);
  const site = new Uint16Array(n), depth = new Uint8Array(n), got = new Uint8Array(n);
  for (let k = 0; k < delta.rows; k++) {
    const i = delta.index[k];
    if (i >= n) return { refused: 'an index past the table' };
    start[i] = delta.start[k]; dur[i] = delta.dur[k]; self[i] = delta.self[k]; site[i] = delta.site[k]; depth[i] = delta.depth[k];
    got[i] = 1;
  }
  // Sites by what they are: a site named at run time may have another id in the new snapshot.
  const siteKey = (x) => `${x.kind}\u0000${x.name}\u0000${x.category || ''}\u0000${x.file || ''}\u0000${x.line || 0}`;
  const newSite = new Map(meta.sites.map((x) => [siteKey(x), x.id]));
  const siteMap = new Map();
  for (const x of prev.meta.sites) if (newSite.has(siteKey(x))) siteMap.set(x.id, newSite.get(siteKey(x)));
  const shift = prev.meta.start_ns - meta.start_ns, sincePrev = since - shift;
  const key = (name, tid) => `${name}\u0000${tid}`;
  const before = new Map();
  for (const th of prev.threads) if (th) before.set(key(th.name, th.os_tid), th);
  for (const th of meta.threads) {
    const was = before.get(key(th.name, th.os_tid));
    for (const [d, first, count] of th.depths) {
      // The row's fetched spans: a suffix (those ending after `since`), the whole row for a lane mapped from
      // another clock (a GPU queue's: its times move as calibration pairs arrive), and always its first.
      let sfx = first + count;
      while (sfx > first && got[sfx - 1]) sfx--;
      const need = sfx - first;
      if (!need) continue;
      const where = `${th.name} depth ${d}`;
      if (!got[first] || !was || !was.rows[d]) return { refused: `${where}: not in the shown snapshot` };
      const r = was.rows[d], end = r.first + r.count;
      const j0 = lowerBound(r.first, end, start[first] + shift - APPEND_TOL, (x) => prev.start[x]);
      if (j0 + need > end || Math.abs(prev.start[j0] - shift - start[first]) > APPEND_TOL || siteMap.get(prev.site[j0]) !== site[first]) {
        return { refused: `${where}: its first span is not where the shown snapshot has it` };
      }
      if (prev.end(j0 + need - 1) > sincePrev + APPEND_TOL) return { refused: `${where}: a span ended after the instant` };
      if (j0 + need < end && prev.end(j0 + need) <= sincePrev - APPEND_TOL) return { refused: `${where}: a span arrived out of time order` };
      for (let k = 1; k < need; k++) {                // k = 0: the row's first, as the delta has it
        const i = first + k, j = j0 + k;
        const sj = siteMap.get(prev.site[j]);
        if (got[i] || sj == null) return { refused: `${where}: a site or span of the shown snapshot is not in the new one` };
        start[i] = prev.start[j] - shift; dur[i] = prev.dur[j]; self[i] = prev.self[j]; site[i] = sj; depth[i] = prev.depth[j];
        got[i] = 1;
      }
    }
  }
  for (let i = 0; i < n; i++) if (!got[i]) return { refused: 'a span neither carried nor fetched' };
  return { spans: { rows: n, start, dur, self, site, depth, frame: delta.frame }, fetched: delta.rows };
}

// A 64-bit element id from its two 32-bit halves, as 16 hex digits (as `strobe tree` prints it).
const HANDOFF_STATES = [null, 'joined', 'resumed', 'not_resumed']; // handoffs.state codes (viewer_model.c)

// Several pathTotals maps as one, by name path (ids renumbered, each parent before its children).
export function mergePathMaps(maps) {
  const out = new Map();
  for (const nodes of maps) {
    const byId = [];
    for (const n of nodes.values()) byId[n.id] = n;
    for (const n of nodes.values()) {
      let o = out.get(n.path);
      if (!o) {
        const p = n.parent >= 0 ? out.get(byId[n.parent].path) : null;
        o = { ...n, id: out.size, parent: p ? p.id : -1, total: 0, self: 0, count: 0, min: Infinity, max: 0 };
        out.set(n.path, o);
      }
      o.total += n.total; o.self += n.self; o.count += n.count;
      if (n.count) { o.min = Math.min(o.min, n.min); o.max = Math.max(o.max, n.max); }
    }
  }
  return out;
}

export function hex64(hi, lo) {
  return (hi >>> 0).toString(16).padStart(8, '0') + (lo >>> 0).toString(16).padStart(8, '0');
}

// First index in [lo, hi) whose key is >= x (key(i) ascending).
export function lowerBound(lo, hi, x, key) {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (key(mid) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class Model {
  constructor(meta, t) {
    this.meta = meta;
    this.spans = t.spans;
    this.values = t.values;
    this.cumul = t.cumulative;
    this.frames = t.frames;
    this.samples = t.samples;
    this.open = t.open;
    this.opstages = t.opstages;     // operations' stage tables, by frame row (docs/viewer.md)
    this.opcounters = t.opcounters; // operations' counters, by frame row
    this.handoffs = t.handoffs;     // operations handed between processes, by frame row (docs/viewer.md §Across processes)
    this.opruns = t.opruns;         // where each of them ran: its stretches on each thread, by frame row
    this.elements = t.elements;     // element attribution by span (docs/recording.md, Elements)
    this.gpuspans = t.gpuspans;     // each GPU queue span's frame id (docs/viewer.md §Tables)
    this.n = t.spans.rows;
    this.start = t.spans.start;
    this.dur = t.spans.dur;
    this.self = t.spans.self;
    this.site = t.spans.site;
    this.depth = t.spans.depth;
    // The frames row owning each span (the frame model's rule: the innermost operation open on its thread at
    // its begin, docs/frames.md §Own spans); null when the capture's frames are marks or scopes.
    this.owner = meta.frames_are === 'pass_operations' && t.spans.frame ? t.spans.frame : null;
    this.sites = [];        // by id
    this.siteRGB = [];      // by id: [r, g, b]
    for (const s of meta.sites) {
      this.sites[s.id] = s;
      this.siteRGB[s.id] = fmt.siteRGB(s.name);
    }
    // Lanes: one per thread with spans or open scopes; rows[d] = {first, count}.
    // By thread index (meta lists threads by index, not necessarily from 0 without gaps).
    this.threads = [];
    for (const th of meta.threads) {
      const rows = [];
      for (const [d, first, count] of th.depths) rows[d] = { first, count };
      for (let d = 0; d < rows.length; d++) if (!rows[d]) rows[d] = { first: 0, count: 0 };
      this.threads[th.index] = { ...th, rows, first: th.depths.length ? th.depths[0][1] : 0 };
    }
    for (let i = 0; i < this.open.rows; i++) {
      const th = this.threads[this.open.thread[i]];
      if (th && th.rows.length <= this.open.depth[i]) {
        while (th.rows.length <= this.open.depth[i]) th.rows.push({ first: 0, count: 0 });
      }
    }
    // Thread of a span: the thread whose first span index is the last <= i.
    this.threadStarts = this.threads.filter((th) => th && th.depths.length)
      .map((th) => [th.first, th.index]).sort((a, b) => a[0] - b[0]);
    this.frameKinds = meta.frame_kinds;
    this.openReasons = meta.open_reasons; // { unfinished, lost, cut, unwound }: codes of open.reason
    this.range = { lo: meta.range[0], hi: Math.max(meta.range[1], meta.range[0] + 1) };
  }

  end(i) { return this.start[i] + this.dur[i]; }
  name(i) { const s = this.sites[this.site[i]]; return s ? s.name : '?'; }
  siteOf(i) { return this.sites[this.site[i]]; }

  threadOf(i) {
    const a = this.threadStarts;
    let lo = 0, hi = a.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (a[mid][0] <= i) lo = mid + 1;
      else hi = mid;
    }
    return lo ? a[lo - 1][1] : 0;
  }

  // The CPU thread with the most frame time: the time of its top-level spans that frames own (a capture of
  // pass operations), else of all its top-level spans (marks, or no frames); null without spans.
  busiestThread() {
    let best = null, most = -1;
    for (const th of this.threads) {
      if (!th || !this.isCpu(th.index) || !th.rows.length) continue;
      const r = th.rows[0], o = this.owner;
      let t = 0;
      for (let i = r.first; i < r.first + r.count; i++) if (!o || o[i] !== 0xFFFFFFFF) t += this.dur[i];
      if (t > most) { most = t; best = th.index; }
    }
    return best;
  }

  // Whether lane t is a thread of the capture (not a GPU queue's or an external producer's lane).
  isCpu(t) {
    const th = this.threads[t];
    return !!th && !th.gpu_lane && !th.producer_lane;
  }

  threadName(t) {
    const th = this.threads[t];
    return th && th.name ? th.name : `thread ${t}`;
  }

  row(thread, depth) {
    const th = this.threads[thread];
    return th && th.rows[depth] ? th.rows[depth] : { first: 0, count: 0 };
  }

  // Spans of one row overlapping [t0, t1): [from, to) indexes.
  rowRange(thread, depth, t0, t1) {
    const r = this.row(thread, depth);
    const s = this.start, d = this.dur;
    const from = lowerBound(r.first, r.first + r.count, t0, (i) => s[i] + d[i]);
    const to = lowerBound(from, r.first + r.count, t1, (i) => s[i]);
    return [from, to];
  }

  parent(i) {
    const d = this.depth[i];
    if (d === 0) return -1;
    const r = this.row(this.threadOf(i), d - 1);
    const s = this.start;
    const j = lowerBound(r.first, r.first + r.count, s[i] + 1e-9, (k) => s[k]) - 1;
    return j >= r.first ? j : -1;
  }

  // Direct children of span i, in start order.
  children(i) {
    const r = this.row(this.threadOf(i), this.depth[i] + 1);
    const s = this.start, e = this.end(i) + Math.max(1, this.dur[i] * 1e-6);
    const out = [];
    for (let k = lowerBound(r.first, r.first + r.count, s[i] - 1e-9, (x) => s[x]); k < r.first + r.count && s[k] < e; k++) {
      out.push(k);
    }
    return out;
  }

  // [[site, value], ...] attached to span i with STROBE_VALUE.
  // The element span i is attributed to: {type (its name), id (16 hex digits)}, or null.
  elementOf(i) {
    const e = this.elements;
    if (!e || !e.rows) return null;
    const k = lowerBound(0, e.rows, i, (x) => e.span[x]);
    if (k >= e.rows || e.span[k] !== i) return null;
    const s = this.sites[e.type[k]];
    return { type: s ? s.name : '?', id: hex64(e.id_hi[k], e.id_lo[k]) };
  }

  valuesOf(i) {
    const v = this.values, out = [];
    for (let k = lowerBound(0, v.rows, i, (x) => v.span[x]); k < v.rows && v.span[k] === i; k++) {
      out.push([v.site[k], v.value[k]]);
    }
    return out;
  }

  // Loop statistics (STROBE_CUMULATIVE) recorded inside span i.
  cumulOf(i) {
    const c = this.cumul, out = [];
    for (let k = lowerBound(0, c.rows, i, (x) => c.span[x]); k < c.rows && c.span[k] === i; k++) {
      out.push({ site: c.site[k], count: c.count[k], total: c.total[k], min: c.min[k], max: c.max[k] });
    }
    return out;
  }

  frame(k) {
    const f = this.frames;
    return {
      index: k, start: f.start[k], dur: f.dur[k], end: f.start[k] + f.dur[k],
      thread: f.thread[k], beginThread: f.begin_thread ? f.begin_thread[k] : f.thread[k], number: f.number[k], kind: this.frameKinds[f.kind[k]],
      state: f.state && this.meta.frame_states ? this.meta.frame_states[f.state[k]] : null,
      op: (f.flags[k] & FRAME_FLAG.OP) !== 0, committed: (f.flags[k] & FRAME_FLAG.COMMITTED) !== 0,
      handedOff: (f.flags[k] & FRAME_FLAG.HANDED_OFF) !== 0, appFrameId: (f.flags[k] & FRAME_FLAG.APP_FRAME) !== 0,
      detail: (f.flags[k] & FRAME_FLAG.DETAIL) !== 0, remote: (f.flags[k] & FRAME_FLAG.REMOTE) !== 0, id: f.id[k],
      window: f.window[k] < this.meta.windows.length ? this.meta.windows[f.window[k]] : null,
    };
  }

  // The process label of a process index of the handoffs, opstages and opcounters tables (null: none).
  processName(p) { return p < (this.meta.processes || []).length ? this.meta.processes[p] : null; }

  // An operation frame's own stage table, as the frame model gives it: [{site, count, total, min, max,
  // process, parent, parentKnown}] (its rows are one run; process: where the stage ran, for an operation that
  // crossed processes, else null; parent: the stage site it ran under, 0 none; parentKnown false: a capture
  // from before run-time parents, where only the declared parent is known).
  opStagesOf(k) {
    const o = this.opstages, out = [];
    for (let i = lowerBound(0, o.rows, k, (x) => o.frame[x]); i < o.rows && o.frame[i] === k; i++) {
      out.push({ site: o.site[i], count: o.count[i], total: o.total[i], min: o.min[i], max: o.max[i],
        process: o.process ? this.processName(o.process[i]) : null, parent: o.parent ? o.parent[i] : 0,
        parentKnown: !!(o.parent_known && o.parent_known[i]) });
    }
    return out;
  }

  // An operation frame's counters: [{name, value, unit, process}].
  opCountersOf(k) {
    const o = this.opcounters, out = [], units = this.meta.op_counter_units || [];
    for (let i = lowerBound(0, o.rows, k, (x) => o.frame[x]); i < o.rows && o.frame[i] === k; i++) {
      out.push({ name: this.meta.op_counter_names[o.name[i]], value: o.value[i], unit: units[o.name[i]] || 'none',
        process: o.process ? this.processName(o.process[i]) : null });
    }
    return out;
  }

  // How operation frame k crossed processes, or null when it never left its process:
  // {state: joined | resumed | not_resumed, origin, finisher (process labels; not_resumed: the peer
  // it was handed to), handed, resumed (ns; null when not resumed here), originThread (null when
  // the origin's half is not in this capture), gap (ns, null when not resumed here)}.
  handoffOf(k) {
    const h = this.handoffs;
    if (!h || !h.rows) return null;
    const i = lowerBound(0, h.rows, k, (x) => h.frame[x]);
    if (i >= h.rows || h.frame[i] !== k) return null;
    const resumed = Number.isFinite(h.resumed[i]) ? h.resumed[i] : null;
    return {
      state: HANDOFF_STATES[h.state[i]] || '?', origin: this.processName(h.origin[i]), finisher: this.processName(h.finisher[i]),
      handed: h.handed[i], resumed, gap: resumed === null ? null : resumed - h.handed[i],
      originThread: h.origin_thread[i] === 0xFFFFFFFF ? null : h.origin_thread[i],
    };
  }

  // Where frame k ran, as [{thread, t0, t1, part}]: one segment for a frame of one thread; for an
  // operation joined across processes the origin's (its start to the hand-off) and the finisher's
  // (the resume to its end), `part` origin / finisher; the hand-off gap lies between them.
  // With the opruns table, each stretch it ran on one thread (an operation may move between threads of
  // a process before it is handed to the other: the demo's screen renders on ui, hands off on link).
  frameSegments(k) {
    const f = this.frame(k), h = f.remote ? this.handoffOf(k) : null;
    const R = this.opruns;
    if (h && R && R.rows) {
      const out = [];
      for (let i = lowerBound(0, R.rows, k, (x) => R.frame[x]); i < R.rows && R.frame[i] === k; i++)
        out.push({ thread: R.thread[i], t0: R.t0[i], t1: R.t1[i], part: R.part[i] === 1 ? 'origin' : 'finisher' });
      if (out.length) return out;
    }
    if (!h || h.state !== 'joined') return [{ thread: f.thread, t0: f.start, t1: f.end, part: h ? (h.state === 'not_resumed' ? 'origin' : 'finisher') : null }];
    return [{ thread: h.originThread, t0: f.start, t1: h.handed, part: 'origin' },
      { thread: f.thread, t0: h.resumed, t1: f.end, part: 'finisher' }];
  }

  // Where frame k ran: its thread, or for an operation joined across processes both threads.
  frameWhere(k) {
    const f = this.frame(k);
    if (!f.remote) return f.beginThread !== f.thread ? `${this.threadName(f.beginThread)} → ${this.threadName(f.thread)}` : this.threadName(f.thread);
    const names = [];
    for (const s of this.frameSegments(k)) { const n = this.threadName(s.thread); if (names[names.length - 1] !== n) names.push(n); }
    return names.join(' → ');
  }

  // Whether frame k's spans are those it owns (an operation of a capture whose frames are passes), not
  // those inside its interval (marks, top-level scopes).
  owns(k) { return this.owner !== null && (this.frames.flags[k] & FRAME_FLAG.OP) !== 0; }

  // Per thread, per depth, the [from, to) rows of the spans that begin inside frame k's interval: every
  // span it may own (an operation owns only spans that begin while it is open).
  _beginRanges(k) {
    const t0 = this.frames.start[k], t1 = t0 + this.frames.dur[k], s = this.start;
    const eps = 1e-6 * Math.max(1, t1 - t0), out = [];
    for (const th of this.threads) {
      if (!th || !this.isCpu(th.index)) continue;
      const ranges = th.rows.map((r) => {
        const from = lowerBound(r.first, r.first + r.count, t0 - eps, (i) => s[i]);
        return [from, lowerBound(from, r.first + r.count, t1 + eps, (i) => s[i])];
      });
      if (ranges.some(([a, b]) => b > a)) out.push({ thread: th.index, ranges });
    }
    return out;
  }

  // The spans frame k owns as [from, to) runs of span rows (owns(k)), for the aggregations.
  frameRuns(k) {
    const o = this.owner, out = [];
    for (const { ranges } of this._beginRanges(k)) {
      for (const [from, to] of ranges) {
        for (let i = from; i < to; i++) {
          if (o[i] !== k) continue;
          const a = i;
          while (i < to && o[i] === k) i++;
          out.push([a, i]);
        }
      }
    }
    return out;
  }

  // The scope of frame k as aggregate.js, stats.js and search.js take it: its own spans (owns(k)), else
  // each part's thread inside its interval.
  frameScope(k) {
    const f = this.frame(k);
    if (this.owns(k)) return { t0: f.start, t1: f.end, frame: k, runs: this.frameRuns(k) };
    return f.remote ? { t0: f.start, t1: f.end, parts: this.frameSegments(k) } : { t0: f.start, t1: f.end, thread: f.thread };
  }

  // The span tree (pathTotals) of frame k: the spans it owns (owns(k)), else each segment's thread inside
  // its interval, merged by name path.
  frameTree(k) {
    if (this.owns(k)) {
      const o = this.owner, keep = (i) => o[i] === k;
      const maps = this._beginRanges(k).map(({ thread, ranges }) => this.pathTotals(ranges, [thread], keep));
      return maps.length === 1 ? maps[0] : mergePathMaps(maps);
    }
    const maps = this.frameSegments(k).map((s) => this.pathTotals(this.spansInside(s.thread, s.t0, s.t1), [s.thread]));
    return maps.length === 1 ? maps[0] : mergePathMaps(maps);
  }

  // A series' unit (fmt.unit): its site's, or an operation counter's own (strobe_op_counter_add_unit).
  seriesUnit(s) {
    if (s.kind === 'op_counter') return s.unit || 'none';
    const site = this.sites[s.site];
    return site ? site.unit : 'none';
  }

  // A GPU queue's span i: the application's frame id it was recorded in (the model's gpuspans table) and the
  // frame-list rows of the passes with that frame id (operations numbered by the application's frame id:
  // the CPU frames that submitted it); null for any other span.
  gpuFrameOf(i) {
    const G = this.gpuspans;
    if (!G || !G.rows) return null;
    if (!this._gpuFrame) {
      this._gpuFrame = new Map();
      for (let k = 0; k < G.rows; k++) this._gpuFrame.set(G.span[k], G.frame_id[k]);
    }
    const id = this._gpuFrame.get(i);
    if (id === undefined) return null;
    const F = this.frames, rows = [];
    for (let k = 0; k < F.rows; k++) if (F.number[k] === id && (F.flags[k] & FRAME_FLAG.APP_FRAME)) rows.push(k);
    return { id, rows };
  }

  // A series' name: its site's with its kind (docs/recording.md §Counters and gauges by kind: the kind is the
  // site's category), "draw_calls: quads" as the Counters tab's legend and `strobe export` name it; or an
  // operation counter's own.
  seriesName(s) {
    if (s.kind === 'op_counter') return s.name;
    return kindedName(this.sites[s.site]);
  }

  // Spans of `thread` that begin and end inside [t0, t1] (the rule of
  // `strobe diff --frames`), as a list of [from, to) ranges per depth.
  spansInside(thread, t0, t1) {
    const th = this.threads[thread];
    if (!th) return [];
    const out = [];
    const s = this.start, d = this.dur;
    const eps = 1e-6 * Math.max(1, t1 - t0);
    for (let depth = 0; depth < th.rows.length; depth++) {
      const r = th.rows[depth];
      const from = lowerBound(r.first, r.first + r.count, t0 - eps, (i) => s[i]);
      let to = lowerBound(from, r.first + r.count, t1 + eps, (i) => s[i]);
      while (to > from && s[to - 1] + d[to - 1] > t1 + eps) to--;
      out.push([from, to]);
    }
    return out;
  }

  // The span tree of a set of spans, merged by name path from the thread's
  // root: Map key "a/b/c" -> {path, name, depth, site, total, self, count,
  // min, max}. `ranges` is one list of [from, to) per depth (spansInside) or
  // null for every span of the capture. Parents are found by walking each
  // row beside the row above it, so the cost is linear in the spans.
  pathTotals(ranges, threads, keep = null) {
    const nodes = new Map();      // numeric key -> node
    const byId = [];              // node id -> node
    const s = this.start, d = this.dur, site = this.site;
    for (const th of threads) {
      const rows = this.threads[th] ? this.threads[th].rows : [];
      let prevIds = null, prevFrom = 0, prevTo = 0;
      for (let depth = 0; depth < rows.length; depth++) {
        const [from, to] = ranges ? (ranges[depth] || [0, 0]) : [rows[depth].first, rows[depth].first + rows[depth].count];
        const ids = new Int32Array(Math.max(0, to - from));
        if (keep) ids.fill(-1);   // spans left out: their children find their path through _ancestorPathId
        // The parent row is the whole row above (ancestors may lie outside a frame).
        const pr = depth ? rows[depth - 1] : null;
        const pEnd = pr ? pr.first + pr.count : 0;
        let p = pr && to > from ? Math.max(pr.first, lowerBound(pr.first, pEnd, s[from] + 1e-9, (k) => s[k]) - 1) : 0;
        for (let i = from; i < to; i++) {
          let parentId = -1;
          if (pr) {
            while (p + 1 < pEnd && s[p + 1] <= s[i]) p++;
            parentId = p >= prevFrom && p < prevTo && prevIds[p - prevFrom] >= 0 ? prevIds[p - prevFrom] : this._ancestorPathId(p, nodes, byId);
          }
          if (keep && !keep(i)) continue;
          const key = (parentId + 1) * 65536 + site[i];
          let n = nodes.get(key);
          if (!n) {
            const parentNode = parentId >= 0 ? byId[parentId] : null;
            const nm = this.name(i);
            n = { id: byId.length, key, path: parentNode ? parentNode.path + '/' + nm : nm, name: nm, depth,
                  site: site[i], parent: parentId, total: 0, self: 0, count: 0, min: Infinity, max: 0 };
            nodes.set(key, n);
            byId.push(n);
          }
          const du = d[i];
          n.total += du;
          n.self += this.self[i];
          n.count++;
          if (du < n.min) n.min = du;
          if (du > n.max) n.max = du;
          ids[i - from] = n.id;
        }
        prevIds = ids;
        prevFrom = from;
        prevTo = to;
      }
    }
    const out = new Map();
    for (const n of byId) out.set(n.path, n);
    return out;
  }

  // Path node id of span p, creating zero-count nodes for ancestors outside the set.
  _ancestorPathId(p, nodes, byId) {
    const chain = [];
    for (let x = p; x >= 0; x = this.parent(x)) chain.push(x);
    let parentId = -1;
    for (let k = chain.length - 1; k >= 0; k--) {
      const i = chain[k];
      const key = (parentId + 1) * 65536 + this.site[i];
      let n = nodes.get(key);
      if (!n) {
        const parentNode = parentId >= 0 ? byId[parentId] : null;
        const nm = this.name(i);
        n = { id: byId.length, key, path: parentNode ? parentNode.path + '/' + nm : nm, name: nm,
              depth: this.depth[i], site: this.site[i], parent: parentId, total: 0, self: 0, count: 0,
              min: Infinity, max: 0 };
        nodes.set(key, n);
        byId.push(n);
      }
      parentId = n.id;
    }
    return parentId;
  }

  // The kind whose entries are this capture's frames: passes when it has pass operations.
  frameKind() { return this.meta.frames_are === 'pass_operations' ? 'pass' : 'frame'; }

  // Number of frames of the frame kind (or every entry when there are none).
  frameCount() {
    const kind = this.frameKinds.indexOf(this.frameKind());
    let n = 0;
    for (let k = 0; k < this.frames.rows; k++) n += this.frames.kind[k] === kind;
    return n || this.frames.rows;
  }

  seriesValueAt(series, t) {
    const sa = this.samples;
    const k = lowerBound(series.first, series.first + series.count, t + 1e-9, (i) => sa.time[i]) - 1;
    return k >= series.first ? sa.value[k] : null;
  }
}

// The meta.sampler.threads entry of each capture thread index (cached on the model).
export function samplerThreads(model) {
  const s = model && model.meta.sampler;
  if (!s) return null;
  if (!model._samplerByThread) {
    model._samplerByThread = new Map();
    for (const th of s.threads) if (th.thread >= 0) model._samplerByThread.set(th.thread, th);
  }
  return model._samplerByThread;
}

// Off-CPU time of thread record `th` inside [t0, t1): {off, blocked}, or null when its switches do not cover all of
// it (meta.sampler.threads[].cover, the library's rule: unknown, never zero).
export function offIn(th, t0, t1) {
  if (!th || !th.cover || t0 < th.cover[0] || t1 > th.cover[1]) return null;
  const off = th.off;
  let sum = 0, blocked = 0;
  for (let k = firstAtOrAfter(off, t0, 3, 1); k * 3 + 2 < off.length && off[k * 3] < t1; k++) {
    const d = Math.min(off[k * 3 + 1], t1) - Math.max(off[k * 3], t0);
    if (d <= 0) continue;
    sum += d;
    if (!off[k * 3 + 2]) blocked += d;
  }
  return { off: sum, blocked };
}

// The first of the a.length / stride records whose `field` is at least t (binary search).
export function firstAtOrAfter(a, t, stride, field) {
  let lo = 0, hi = Math.floor(a.length / stride);
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid * stride + field] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// Span i's self time split into on CPU / blocked / preempted from the thread's context switches (docs/viewer.md
// §Samples): its interval's off-CPU time less its children's; '' when the switches do not cover it all.
function selfSplit(m, i) {
  const by = samplerThreads(m), th = by && by.get(m.threadOf(i));
  const t0 = m.start[i], t1 = t0 + m.dur[i], all = offIn(th, t0, t1);
  if (!all) return '';
  let off = all.off, blocked = all.blocked;
  const kids = m.spansInside(m.threadOf(i), t0, t1)[m.depth[i] + 1];
  for (let c = kids ? kids[0] : 0; kids && c < kids[1]; c++) {
    const k = offIn(th, m.start[c], m.start[c] + m.dur[c]);
    if (!k) return '';
    off -= k.off;
    blocked -= k.blocked;
  }
  off = Math.max(0, off);
  blocked = Math.max(0, Math.min(off, blocked));
  const cpu = Math.max(0, m.self[i] - off);
  return ` · on CPU ${fmt.dur(cpu)} · blocked ${fmt.dur(blocked)} · preempted ${fmt.dur(off - blocked)}`;
}

// What a span's tooltip says, as data: {title, cat, where, rows: [[label, value]]}.
// Rendered by the flame chart into reused DOM (fast, pointer-rate) and by
// the detail panel as HTML (spanTooltip).
// Whether a span of duration d (ns) is in a lit scope's duration range: a histogram bar's [lo, hi)
// (histogram.js, docs/viewer.md §Duration histogram); every duration when the scope has none.
export function inDurations(scope, d) {
  return !scope || !scope.dur || (d >= scope.dur[0] && d < scope.dur[1]);
}

// A counter's, gauge's or value's name with its kind when its site has one ("draw_calls: quads"), so
// kinds of one family stay apart wherever they are listed.
export function kindedName(site) {
  if (!site) return '?';
  return site.category ? `${site.name}: ${site.category}` : site.name;
}

export function spanInfo(m, i) {
  const s = m.siteOf(i) || { name: '?', file: '', line: 0, function: '', category: '' };
  const parent = m.parent(i);
  const pct = parent >= 0 && m.dur[parent] > 0 ? ` · ${(100 * m.dur[i] / m.dur[parent]).toFixed(1)}% of ${m.name(parent)}` : '';
  const rows = [
    ['duration', fmt.dur(m.dur[i]) + pct],
    ['self', fmt.dur(m.self[i]) + selfSplit(m, i)],
    ['start', `${fmt.at(m.start[i])} · ${m.threadName(m.threadOf(i))} · depth ${m.depth[i] + 1}`],
  ];
  const el = m.elementOf(i);
  if (el) rows.push(['element', `${el.type} ${el.id}`]);
  const gf = m.gpuFrameOf(i);   // GPU work: the CPU frame that submitted it
  if (gf) {
    const passes = gf.rows.map((k) => { const f = m.frame(k); return `${f.kind} ${gf.id}${f.window ? ` of window ${f.window}` : ''} on ${m.frameWhere(k)}`; });
    rows.push(['submitted in', `frame ${gf.id} · ${passes.length ? passes.join(', ') : 'no pass of that frame id in this capture'}`]);
  }
  for (const [site, v] of m.valuesOf(i)) {
    const s = m.sites[site];
    rows.push([s ? s.name : '?', fmt.unit(v, s ? s.unit : 'none')]);
  }
  for (const c of m.cumulOf(i)) {
    rows.push([m.sites[c.site] ? m.sites[c.site].name : '?',
      `loop ×${fmt.count(c.count)} · ${fmt.dur(c.min)} / ${fmt.dur(c.count ? c.total / c.count : 0)} / ${fmt.dur(c.max)} · ${fmt.dur(c.total)} in all`]);
  }
  if (s.count) {
    rows.push([`all ${s.name}`, `×${fmt.count(s.count)} · ${fmt.dur(s.min_ns)} / ${fmt.dur(s.total_ns / s.count)} / ${fmt.dur(s.max_ns)} (min/avg/max)`]);
  }
  // A site named at run time (strobe_site_intern) has no source location.
  const where = s.interned ? 'named at run time' : s.traced_call ? `traced call · ${s.file}`
    : `${s.file}:${s.line}${s.function ? ` · ${s.function}()` : ''}`;
  return { title: s.name, cat: s.category || '', where, rows };
}

// The same as HTML (the detail panel's header).
export function spanTooltip(m, i) {
  const t = spanInfo(m, i);
  return `<b>${fmt.esc(t.title)}</b>${t.cat ? ` <span class="dim">${fmt.esc(t.cat)}</span>` : ''}` +
    `<div class="dim">${fmt.esc(t.where)}</div><table>` +
    t.rows.map(([k, v]) => `<tr><td>${fmt.esc(k)}</td><td>${fmt.esc(v)}</td></tr>`).join('') + '</table>';
}
