// offcpu.js — owns how a thread's sampler records are drawn on a time axis
// (docs/viewer.md §Samples): its off-CPU gaps from context switches as
// shaded bands (blocked: grey, asleep or waiting; preempted: amber, runnable
// without a CPU) and a tick per sample. The flame chart draws them over each
// thread's lane, so a span's off-CPU time shows inside it; the Samples tab
// draws them as one strip per thread. Only what falls in view is visited
// (binary search over the sorted times).

import { samplerThreads, firstAtOrAfter } from './data.js';

export { samplerThreads };

export const OFFCPU = { blocked: 'rgba(139,148,158,0.30)', preempted: 'rgba(210,153,34,0.28)', tick: 'rgba(88,166,255,0.95)' };

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
