// aggregate.js — owns the viewer's aggregations of a model's spans over a
// scope (null: every span; {t0, t1, thread?}: the spans lying wholly inside
// [t0, t1], on that thread only when given — the rule of `strobe report
// --from/--to`, with the tolerance of data.js spansInside; {parts: [{thread,
// t0, t1}]}: each part's thread inside its interval, as a frame handed
// between processes ran: data.js frameSegments):
//   - siteStats: per site, count, total, self, mean, nearest-rank p50 / p95
//     and max over every duration (the Statistics tab, the range summary);
//   - callTree: the spans by call path from each thread's outermost scope,
//     merged across threads (the Flame graph tab; flamegraph.js draws it);
//   - sandwich: a name's callers and callees in a call tree.
// Pure functions of the model: no state, no DOM.

// Nearest rank (docs/viewer.md §Statistics, src/analyze/percentile.c): the value at rank ceil(p·n).
function rank(sorted, p) {
  const n = sorted.length;
  return sorted[Math.min(n, Math.max(1, Math.ceil(p * n))) - 1];
}

// The scope's spans, as [from, to) runs of the model's span rows.
// scope: null (every span) or {t0, t1, thread?} (spans lying wholly inside [t0, t1], on that thread only when given).
function runs(m, scope) {
  if (scope && scope.runs) return scope.runs;
  const out = [];
  if (scope && scope.parts) {
    for (const p of scope.parts) out.push(...m.spansInside(p.thread, p.t0, p.t1));
    return out;
  }
  for (const th of m.threads) {
    if (!th) continue;
    if (scope && scope.thread != null && th.index !== scope.thread) continue;
    if (scope) out.push(...m.spansInside(th.index, scope.t0, scope.t1));
    else for (const r of th.rows) out.push([r.first, r.first + r.count]);
  }
  return out;
}

// Per site: {site, name, count, total, self, mean, p50, p95, max} (ns) over the scope's spans; and how many spans in all.
export function siteStats(m, scope) {
  const site = m.site, dur = m.dur, self = m.self;
  const rs = runs(m, scope);
  const count = new Uint32Array(65536);
  let n = 0;
  for (const [from, to] of rs) for (let i = from; i < to; i++) count[site[i]]++;
  const offset = new Uint32Array(65537);
  for (let s = 0; s < 65536; s++) offset[s + 1] = offset[s] + count[s];
  n = offset[65536];
  const durs = new Float64Array(n), fill = offset.slice(0, 65536);
  const selfSum = new Float64Array(65536);
  for (const [from, to] of rs) {
    for (let i = from; i < to; i++) {
      const s = site[i];
      durs[fill[s]++] = dur[i];
      selfSum[s] += self[i];
    }
  }
  const rows = [];
  for (let s = 0; s < 65536; s++) {
    if (!count[s]) continue;
    const d = durs.subarray(offset[s], offset[s + 1]).sort();
    let total = 0;
    for (let k = 0; k < d.length; k++) total += d[k];
    const meta = m.sites[s];
    rows.push({ site: s, name: meta ? meta.name : '?', count: d.length, total, self: selfSum[s], mean: total / d.length,
      p50: rank(d, 0.5), p95: rank(d, 0.95), max: d[d.length - 1] });
  }
  return { rows, spans: n };
}

// The call-path tree of the scope's spans: {name, path, total, self, count, kids, parent}, root named `rootName`.
// scope: null (every span); {thread} or {cpu: true}: every span of that lane, or of the CPU threads only
// (GPU queues and producer lanes run beside them: summed with them, the total would exceed the capture's
// time); with t0, t1: the spans lying wholly inside; {frame, runs}: a frame's own spans (data.js frameScope).
export function callTree(m, scope, rootName = 'all threads') {
  const threads = m.threads.filter((t) => t && (!scope || (scope.thread != null ? t.index === scope.thread : !scope.cpu || m.isCpu(t.index))))
    .map((t) => t.index);
  const timed = scope && scope.t0 != null;
  const maps = scope && scope.frame != null ? [m.frameTree(scope.frame)] : scope && scope.parts ? scope.parts.map((p) => m.pathTotals(m.spansInside(p.thread, p.t0, p.t1), [p.thread]))
    : timed ? threads.map((th) => m.pathTotals(m.spansInside(th, scope.t0, scope.t1), [th])) : [m.pathTotals(null, threads)];
  const root = { name: rootName, path: '', total: 0, self: 0, count: 0, kids: [], parent: null };
  const byPath = new Map([['', root]]);
  for (const nodes of maps) {
    for (const n of nodes.values()) {    // parents come before their children (ids ascend from the roots)
      let t = byPath.get(n.path);
      if (!t) {
        const cut = n.path.lastIndexOf('/');
        const parent = byPath.get(cut < 0 ? '' : n.path.slice(0, cut));
        t = { name: n.name, path: n.path, total: 0, self: 0, count: 0, kids: [], parent: parent || root };
        byPath.set(n.path, t);
        t.parent.kids.push(t);
      }
      t.total += n.total;
      t.self += n.self;
      t.count += n.count;
    }
  }
  for (const k of root.kids) root.total += k.total;
  return root;
}

// The outermost nodes named `name` (none of their ancestors has that name).
function outermost(root, name) {
  const out = [];
  const walk = (n) => { for (const k of n.kids) { if (k.name === name) out.push(k); else walk(k); } };
  walk(root);
  return out;
}

function mergeInto(dst, kids) {
  for (const k of kids) {
    let d = dst.kids.find((x) => x.name === k.name);
    if (!d) { d = { name: k.name, path: dst.path + '/' + k.name, total: 0, self: 0, count: 0, kids: [] }; dst.kids.push(d); }
    d.total += k.total;
    d.self += k.self;
    d.count += k.count;
    mergeInto(d, k.kids);
  }
}

// {callers, callees} trees of `name` in a call tree of callTree (null when the name is not in it).
export function sandwich(root, name) {
  const hits = outermost(root, name);
  if (!hits.length) return null;
  const sum = (f) => hits.reduce((s, h) => s + f(h), 0);
  const top = () => ({ name, path: name, total: sum((h) => h.total), self: sum((h) => h.self), count: sum((h) => h.count), kids: [] });
  const callees = top();
  for (const h of hits) mergeInto(callees, h.kids);
  const callers = top();
  callers.self = 0;
  for (const h of hits) {
    let d = callers;
    for (let p = h.parent; p && p !== root; p = p.parent) {
      let c = d.kids.find((x) => x.name === p.name);
      if (!c) { c = { name: p.name, path: d.path + ' ← ' + p.name, total: 0, self: 0, count: 0, kids: [] }; d.kids.push(c); }
      c.total += h.total;
      c.count += h.count;
      d = c;
    }
    d.self += h.total;   // called from here with no caller further out: X's time ends its chain here
  }
  return { callers, callees };
}

