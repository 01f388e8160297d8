// fmt.js — owns how numbers, names and colours look everywhere in the viewer:
// durations (ns in, "712 ns", "14.2 µs", "3.10 ms" out: the unit that fits,
// three significant digits), numbers in their site's unit (unit(): bytes,
// ns, ms, percent, plain; never guessed from a name), times since the
// capture start, counts, HTML escaping, each site's colour (a stable hue
// from its name), and the duration colour rule (green under the user's first
// threshold, orange up to the second, red above: docs/viewer.md §Colours). The same rules as src/analyze/units.c, which prints for
// the `strobe` tool; tests/viewer/fmt.test.mjs checks these.

const DURATIONS = [[1, ' ns'], [1e3, ' µs'], [1e6, ' ms'], [1e9, ' s']];
const BINARY = [[1, ' B'], [1024, ' KiB'], [1024 ** 2, ' MiB'], [1024 ** 3, ' GiB'], [1024 ** 4, ' TiB']];

// Decimals that give three significant digits to a in [0, 1000).
function decimals(a) {
  return a >= 99.95 ? 0 : a >= 9.995 ? 1 : 2;
}

// v in the largest scale it reaches, three significant digits; a value that
// rounds up to 1000 of one scale moves to the next. The first scale prints
// whole numbers without decimals ("712 ns", "512 B").
function scaled(v, scales) {
  if (v == null || !Number.isFinite(v)) return '—';
  const a = Math.abs(v);
  let k = 0;
  while (k + 1 < scales.length && a >= scales[k + 1][0]) k++;
  let x = a / scales[k][0];
  if (k + 1 < scales.length && x >= 999.5) x = a / scales[++k][0];
  let d = decimals(x);
  if (k === 0 && Number.isInteger(x)) d = 0;
  return (v < 0 ? '-' : '') + x.toFixed(d) + scales[k][1];
}

export function dur(ns) {
  return scaled(ns, DURATIONS);
}

// A number in its site's unit (the site's `unit` in the model's meta:
// "bytes", "ns", "ms", "percent", "count", "none", or null for a unit this
// viewer has no name for).
export function unit(v, name) {
  if (v == null || !Number.isFinite(v)) return '—';
  if (name === 'bytes') return bytes(v);
  if (name === 'ns') return dur(v);
  if (name === 'ms') return dur(v * 1e6);
  if (name === 'percent') return v.toFixed(Math.abs(v) >= 1000 ? 0 : decimals(Math.abs(v))) + '%';
  return num(v);
}

// An axis' values in their unit, all in the scale of the largest, each with
// the fewest decimals (up to 6) that tell them apart: "3.062 / 3.056 / 3.050
// MiB", where unit() gives "3.06 MiB" three times. Values unit() already
// tells apart keep its text.
export function unitLabels(values, name) {
  const plain = values.map((v) => unit(v, name));
  if (new Set(plain).size === new Set(values).size) return plain;
  const scales = name === 'bytes' ? BINARY : name === 'ns' || name === 'ms' ? DURATIONS : [[1, name === 'percent' ? '%' : '']];
  const xs = name === 'ms' ? values.map((v) => v * 1e6) : values;
  const a = Math.max(...xs.map(Math.abs));
  let k = 0;
  while (k + 1 < scales.length && a >= scales[k + 1][0]) k++;
  for (let d = 1; ; d++) {
    const out = xs.map((v) => (v / scales[k][0]).toFixed(d) + scales[k][1]);
    if (d === 6 || new Set(out).size === new Set(values).size) return out;
  }
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
  return scaled(n, BINARY);
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

// The process a merged capture's snapshot, attachment or deep capture came from (its `origin`, docs/cli.md
// §strobe merge): its input's label, LABEL#K when two inputs share it, '?' when the merge did not record it;
// '' for a capture that is no merge.
export function processOf(meta, origin) {
  const inputs = meta && meta.merge ? meta.merge.inputs : null;
  if (!inputs) return '';
  const input = origin > 0 ? inputs[origin - 1] : null;
  if (!input) return '?';
  return inputs.some((x, k) => k !== origin - 1 && x.process === input.process) ? `${input.process}#${origin}` : input.process;
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

// The duration colour thresholds by default (ms): green under 20, orange from
// 20 to 100, red over 100. The header's settings change them (state.thresholds).
export const THRESHOLDS_MS = { ok: 20, over: 100 };

// 'ok' under t.ok ms, 'slow' from t.ok up to t.over ms, 'over' above.
export function durClass(ns, t = THRESHOLDS_MS) {
  return ns < t.ok * 1e6 ? 'ok' : ns <= t.over * 1e6 ? 'slow' : 'over';
}

export const KIND_COLORS = {
  frame: '#8b949e', pass: '#58a6ff', input: '#bc8cff', rebuild: '#39c5cf',
  app_scope: '#f778ba', request: '#e3b341', scope: '#8b949e',
};
