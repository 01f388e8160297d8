// live.js — owns carrying what a person looks at from one live snapshot to
// the next, so a live view is a timeline that moves on rather than a page
// that reloads: each snapshot is a model of its own, with times in ns since
// its own start (meta.start_ns, ns since the clock's epoch), so everything
// is taken over in absolute time: the flame chart's range (when its right
// edge was at the newest data, it stays there, so new data comes in at the
// right as it arrives; otherwise the same instants stay in view), the
// selected span (found again by thread name, depth, site name and start),
// the selected frame (kind and start), the selected range and a statistics
// row's scope. What the recorder no longer holds (older than its retention)
// is gone from the new snapshot and is dropped, never guessed.

import { lowerBound } from './data.js';

const EDGE = 0.02;   // a view whose right edge is this close (share of its width) to the newest data follows it

// What to find again in the next snapshot: absolute times and names, no row numbers.
export function remember(m, st) {
  const abs = m.meta.start_ns, v = st.view, width = v.t1 - v.t0;
  const out = { view: { t0: v.t0 + abs, t1: v.t1 + abs }, atEdge: v.t1 >= m.range.hi - EDGE * width, width, span: null, frame: null,
    range: st.range ? { t0: st.range.t0 + abs, t1: st.range.t1 + abs } : null,
    focusScope: st.focusScope ? { ...st.focusScope, t0: st.focusScope.t0 + abs, t1: st.focusScope.t1 + abs, threadName: st.focusScope.thread == null ? null : m.threadName(st.focusScope.thread) } : null };
  if (st.span >= 0 && st.span < m.n) {
    const i = st.span;
    out.span = { thread: m.threadName(m.threadOf(i)), depth: m.depth[i], name: m.name(i), start: m.start[i] + abs };
  }
  if (st.frame >= 0 && st.frame < m.frames.rows) {
    const f = m.frame(st.frame);
    out.frame = { kind: f.kind, thread: m.threadName(f.thread), start: f.start + abs };
  }
  return out;
}

const threadNamed = (m, name) => m.threads.find((t) => t && m.threadName(t.index) === name);
const TOL = 2;   // ns: the same instant read from two snapshots of one clock

// The remembered view in the new model `m`: {view, span (-1 gone), frame (-1 gone), range, focusScope}.
export function carry(m, r) {
  const abs = m.meta.start_ns, out = { span: -1, frame: -1, range: null, focusScope: null };
  out.view = r.atEdge ? { t0: m.range.hi - r.width, t1: m.range.hi } : { t0: r.view.t0 - abs, t1: r.view.t1 - abs };
  if (r.span) {
    const th = threadNamed(m, r.span.thread), t = r.span.start - abs;
    if (th && th.rows[r.span.depth]) {
      const row = th.rows[r.span.depth], S = m.start;
      const k = lowerBound(row.first, row.first + row.count, t - TOL, (x) => S[x]);
      if (k < row.first + row.count && Math.abs(S[k] - t) <= TOL && m.name(k) === r.span.name) out.span = k;
    }
  }
  if (r.frame) {
    const F = m.frames, t = r.frame.start - abs;
    for (let k = lowerBound(0, F.rows, t - TOL, (x) => F.start[x]); k < F.rows && F.start[k] <= t + TOL; k++) {
      if (m.frameKinds[F.kind[k]] === r.frame.kind && m.threadName(F.thread[k]) === r.frame.thread) { out.frame = k; break; }
    }
  }
  if (r.range) out.range = { t0: r.range.t0 - abs, t1: r.range.t1 - abs };
  if (r.focusScope) {
    const th = r.focusScope.threadName == null ? null : threadNamed(m, r.focusScope.threadName);
    out.focusScope = { t0: r.focusScope.t0 - abs, t1: r.focusScope.t1 - abs, thread: th ? th.index : r.focusScope.thread };
  }
  return out;
}
