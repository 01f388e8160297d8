// histogram.js — owns a site's duration histogram (docs/viewer.md §Duration
// histogram): every span of one site in the model, counted into buckets of
// equal width on a log scale of duration, drawn as SVG bars with the frame
// budget's line and the buckets at or over it marked, the selected span's
// bucket outlined. Each bar carries its duration range (data-lo, data-hi:
// ns, hi exclusive but for the last), which a click turns into the lit set
// (detail.js emits it, search.js lights and steps through it through
// data.js's inDurations). It never selects or emits anything itself.

import * as fmt from './fmt.js';

const BUCKETS = 32;       // bars between the shortest and the longest span of the site
const W = 300, H = 64;    // the SVG's viewBox: the panel scales it to its width

// The site's durations (ns, sorted) and their log-scaled buckets: {durs, edges (BUCKETS + 1 ascending), counts}.
export function siteHistogram(m, site) {
  const durs = [];
  for (let i = 0; i < m.n; i++) if (m.site[i] === site) durs.push(m.dur[i]);
  durs.sort((a, b) => a - b);
  if (!durs.length) return null;
  const lo = Math.max(durs[0], 1), hi = Math.max(durs[durs.length - 1], lo * 1.0001);
  const edges = [];
  for (let k = 0; k <= BUCKETS; k++) edges.push(lo * (hi / lo) ** (k / BUCKETS));
  edges[0] = 0;   // the shortest (a zero-length span too) in the first bar
  edges[BUCKETS] = Number.MAX_VALUE;   // the longest in the last (finite: a deep link keeps it)
  const counts = new Array(BUCKETS).fill(0);
  let k = 0;
  for (const d of durs) {
    while (k < BUCKETS - 1 && d >= edges[k + 1]) k++;
    counts[k]++;
  }
  return { durs, edges, counts, lo: durs[0], hi: durs[durs.length - 1] };
}

// The histogram as HTML: its SVG bars and the axis' two ends. `budgetNs` marks the bars at or over it;
// `selected` (ns) outlines the bar holding that duration.
export function histogramHtml(h, name, budgetNs, selected) {
  const max = Math.max(...h.counts), bw = W / BUCKETS, lo = Math.max(h.lo, 1), hi = Math.max(h.hi, lo * 1.0001);
  const x = (d) => (Math.log(Math.max(d, lo) / lo) / Math.log(hi / lo)) * W;
  const bars = h.counts.map((n, k) => {
    if (!n) return '';
    const from = h.edges[k], to = h.edges[k + 1], over = budgetNs > 0 && from >= budgetNs;
    const sel = selected >= from && selected < to;
    const y = H - Math.max(2, (n / max) * (H - 4));
    return `<rect class="hbar${over ? ' over' : ''}${sel ? ' sel' : ''}" data-hbin="${k}" data-lo="${from}" data-hi="${to}" data-n="${n}"` +
      ` x="${(k * bw + 0.5).toFixed(1)}" y="${y.toFixed(1)}" width="${(bw - 1).toFixed(1)}" height="${(H - y).toFixed(1)}">` +
      `<title>${fmt.count(n)} × ${fmt.esc(name)} from ${fmt.dur(from)} to ${to === Number.MAX_VALUE ? fmt.dur(h.hi) : fmt.dur(to)}${over ? ' (over the frame budget)' : ''}: click to light them</title></rect>`;
  }).join('');
  const budget = budgetNs > lo && budgetNs < hi
    ? `<line class="hbudget" x1="${x(budgetNs).toFixed(1)}" x2="${x(budgetNs).toFixed(1)}" y1="0" y2="${H}"><title>frame budget ${fmt.dur(budgetNs)}</title></line>` : '';
  return `<div class="histogram"><svg viewBox="0 0 ${W} ${H}" preserveAspectRatio="none">${bars}${budget}</svg>` +
    `<div class="haxis dim small"><span>${fmt.dur(h.lo)}</span><span>log scale · ${fmt.count(h.durs.length)} spans${budget ? ` · budget ${fmt.dur(budgetNs)}` : ''}</span><span>${fmt.dur(h.hi)}</span></div></div>`;
}
