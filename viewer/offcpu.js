// offcpu.js — owns how a thread's sampler records are drawn on a time axis
// (docs/viewer.md §Samples): its off-CPU gaps from context switches as
// shaded bands (blocked: grey, asleep or waiting; preempted: amber, runnable
// without a CPU) and a tick per sample. The flame chart draws them over each
// thread's lane, so a span's off-CPU time shows inside it; the Samples tab
// draws them as one strip per thread. Only what falls in view is visited
// (binary search over the sorted times).

export const OFFCPU = { blocked: 'rgba(139,148,158,0.30)', preempted: 'rgba(210,153,34,0.28)', tick: 'rgba(88,166,255,0.95)' };

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

function firstAtOrAfter(a, t, stride, field) {
  let lo = 0, hi = Math.floor(a.length / stride);
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid * stride + field] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// Draws thread record `th` on 2D context g between y0 and y1: gaps over the
// whole height, ticks in the last `tickH` px (0: none), for times t0..t0+npp*w (ns per px).
export function drawThreadRecords(g, th, x0, y0, y1, t0, npp, w, tickH) {
  const t1 = t0 + npp * w, x = (t) => x0 + (t - t0) / npp;
  const off = th.off;
  for (let k = firstAtOrAfter(off, t0, 3, 1); k * 3 + 2 < off.length; k++) {
    const a = off[k * 3], b = off[k * 3 + 1];
    if (a > t1) break;
    g.fillStyle = off[k * 3 + 2] ? OFFCPU.preempted : OFFCPU.blocked;
    g.fillRect(x(a), y0, Math.max(1, x(b) - x(a)), y1 - y0);
  }
  if (!tickH) return;
  g.fillStyle = OFFCPU.tick;
  for (let k = firstAtOrAfter(th.t, t0, 1, 0); k < th.t.length && th.t[k] <= t1; k++)
    g.fillRect(Math.round(x(th.t[k])), y1 - tickH, 1, tickH);
}
