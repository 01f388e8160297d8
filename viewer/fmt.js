// fmt.js — owns how numbers, names and colours look everywhere in the viewer:
// durations (ns in, "1.23 ms" out), times since the capture start, counts,
// HTML escaping, each site's colour (a stable hue from its name), and the
// budget colour rule (green under budget, orange up to 5x, red above).

export function dur(ns) {
  if (ns == null || !Number.isFinite(ns)) return '—';
  const a = Math.abs(ns);
  if (a >= 1e9) return (ns / 1e9).toFixed(a >= 1e10 ? 2 : 3) + ' s';
  if (a >= 1e6) return (ns / 1e6).toFixed(a >= 1e8 ? 1 : a >= 1e7 ? 2 : 3) + ' ms';
  if (a >= 1e3) return (ns / 1e3).toFixed(a >= 1e5 ? 1 : a >= 1e4 ? 2 : 3) + ' µs';
  return ns.toFixed(a >= 100 || Number.isInteger(ns) ? 0 : 1) + ' ns';
}

export function signedDur(ns) {
  return (ns > 0 ? '+' : ns < 0 ? '−' : '±') + dur(Math.abs(ns));
}

// A time on the capture's axis (ns since its start) as ms with enough digits.
export function at(ns) {
  return (ns / 1e6).toFixed(3) + ' ms';
}

// 1234567 -> "1,234,567" (by hand: toLocaleString costs tens of µs a call,
// too much for a tooltip that follows the pointer).
// A ruler tick: ns since the capture start, with only the digits its step needs.
export function tick(ns, stepNs) {
  const ms = ns / 1e6, stepMs = stepNs / 1e6;
  const decimals = Math.max(0, Math.min(6, -Math.floor(Math.log10(stepMs) + 1e-9)));
  return ms.toFixed(decimals) + ' ms';
}

export function count(n) {
  const v = Math.round(Number(n));
  if (!Number.isFinite(v)) return '—';
  const s = String(Math.abs(v));
  let out = '';
  for (let i = s.length; i > 0; i -= 3) out = s.slice(Math.max(0, i - 3), i) + (out ? ',' + out : '');
  return (v < 0 ? '-' : '') + out;
}

export function bytes(n) {
  if (n >= 1 << 30) return (n / (1 << 30)).toFixed(2) + ' GiB';
  if (n >= 1 << 20) return (n / (1 << 20)).toFixed(1) + ' MiB';
  if (n >= 1 << 10) return (n / (1 << 10)).toFixed(1) + ' KiB';
  return n + ' B';
}

export function num(v) {
  if (v == null || !Number.isFinite(v)) return '—';
  if (Number.isInteger(v)) return count(v);
  return Math.abs(v) >= 100 ? v.toFixed(1) : v.toPrecision(4);
}

const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ESC[c]);
}

// FNV-1a: the same name gets the same colour in every capture and session.
function hash(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

function hsl(h, s, l) {
  const a = s * Math.min(l, 1 - l);
  const f = (n) => {
    const k = (n + h / 30) % 12;
    return Math.round(255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
  };
  return [f(0), f(8), f(4)];
}

// [r, g, b] for a site name: warm-to-cool hues, never the budget red.
export function siteRGB(name) {
  const h = hash(name);
  const hue = 20 + (h % 280);
  const light = 0.5 + ((h >>> 9) % 12) / 100;
  return hsl(hue, 0.55, light);
}

export function css([r, g, b], a = 1) {
  return a === 1 ? `rgb(${r},${g},${b})` : `rgba(${r},${g},${b},${a})`;
}

export const BUDGET_COLORS = { ok: '#3fb950', slow: '#d29922', over: '#f85149' };

// 'ok' under the budget, 'slow' up to 5x the budget, 'over' above.
export function budgetClass(ns, budgetMs) {
  const b = budgetMs * 1e6;
  return ns < b ? 'ok' : ns <= 5 * b ? 'slow' : 'over';
}

export const KIND_COLORS = {
  frame: '#8b949e', pass: '#58a6ff', input: '#bc8cff', rebuild: '#39c5cf',
  app_scope: '#f778ba', request: '#e3b341', scope: '#8b949e',
};
