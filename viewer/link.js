// link.js — owns the view's deep link: what a person looks at (the capture,
// the tab (and the statistics' scope), the selected frame, the flame chart's range, the selected span,
// the selected range, the search text or the statistics row, the flame graph
// tab's scope, focused node and sandwich name) lives in the
// URL fragment beside the token (`#token=…&tab=…`: a fragment never reaches a
// server, docs/viewer.md §Deep links). encode() writes the state as
// fragment parameters, decode() reads them back (unknown or malformed ones
// are dropped, never trusted: numbers must be finite, rows in range when
// applied). app.js applies a decoded link after a capture loads and writes
// the fragment (history.replaceState, debounced) whenever the view changes,
// so a reload keeps the view and a copied link opens it elsewhere once the
// token is given. The token itself is never written here (api.js drops it
// from the address bar).

const NUM = /^-?\d+(\.\d+)?(e[-+]?\d+)?$/i;

// The state's link parameters as a fragment body (no '#').
export function encode(s) {
  const p = new URLSearchParams();
  if (s.capture) p.set('cap', s.capture);
  if (s.tab && s.tab !== 'timeline') p.set('tab', s.tab);
  if (s.statsScope && s.statsScope !== 'capture') p.set('ss', s.statsScope);
  if (s.frame >= 0) p.set('frame', String(s.frame));
  if (s.view) { p.set('t0', s.view.t0.toFixed(1)); p.set('t1', s.view.t1.toFixed(1)); }
  if (s.span >= 0) p.set('span', String(s.span));
  if (s.range) { p.set('r0', s.range.t0.toFixed(1)); p.set('r1', s.range.t1.toFixed(1)); }
  if (s.search) p.set('q', s.search);
  if (s.focusSite != null) {
    p.set('site', String(s.focusSite));
    const f = s.focusScope;
    if (f) p.set('in', [f.t0.toFixed(1), f.t1.toFixed(1), f.thread == null ? '' : f.thread].join(','));
  }
  const g = s.flameGraph;   // the flame graph tab: scope, focused node's call path, sandwich name
  if (g) {
    if (g.scope && g.scope !== 'capture') p.set('fg', g.scope);
    if (g.focus) p.set('fgf', g.focus);
    if (g.name) p.set('fgs', g.name);
    if (g.thread != null) p.set('fgt', String(g.thread));
  }
  return p.toString();
}

// A fragment ('#…' or its body) back into link state; only well-formed fields are kept.
export function decode(hash) {
  const p = new URLSearchParams(hash.replace(/^#/, ''));
  const num = (k) => (p.has(k) && NUM.test(p.get(k)) ? Number(p.get(k)) : null);
  const int = (k) => { const v = num(k); return v != null && Number.isInteger(v) && v >= 0 ? v : null; };
  const out = {};
  if (p.get('cap')) out.capture = p.get('cap');
  if (/^[a-z0-9_-]{1,32}$/.test(p.get('tab') || '')) out.tab = p.get('tab');
  if (/^(frame|view|range)$/.test(p.get('ss') || '')) out.statsScope = p.get('ss');
  if (int('frame') != null) out.frame = int('frame');
  if (num('t0') != null && num('t1') != null && num('t1') > num('t0')) out.view = { t0: num('t0'), t1: num('t1') };
  if (int('span') != null) out.span = int('span');
  if (num('r0') != null && num('r1') != null && num('r1') > num('r0')) out.range = { t0: num('r0'), t1: num('r1') };
  if (p.get('q')) out.search = p.get('q').slice(0, 200);
  if (int('site') != null) {
    out.focusSite = int('site');
    const f = (p.get('in') || '').split(',');
    if (f.length === 3 && NUM.test(f[0]) && NUM.test(f[1])) {
      out.focusScope = { t0: Number(f[0]), t1: Number(f[1]), thread: NUM.test(f[2]) ? Number(f[2]) : null };
    }
  }
  const fg = {};
  if (/^(frame|range)$/.test(p.get('fg') || '')) fg.scope = p.get('fg');
  if (p.get('fgf') && p.get('fgf').length <= 4096) fg.focus = p.get('fgf');
  if (p.get('fgs') && p.get('fgs').length <= 512) fg.name = p.get('fgs');
  if (/^(all|\d{1,9})$/.test(p.get('fgt') || '')) fg.thread = p.get('fgt') === 'all' ? 'all' : Number(p.get('fgt'));
  if (Object.keys(fg).length) out.flameGraph = fg;
  return out;
}

const KEYS = ['cap', 'tab', 'ss', 'frame', 't0', 't1', 'span', 'r0', 'r1', 'q', 'site', 'in', 'fg', 'fgf', 'fgs', 'fgt'];

// The fragment body for state `s`, keeping every parameter of `hash` that is not the view's
// (e.g. fallback=1, or another module's), before the view's own.
export function merge(hash, s) {
  const p = new URLSearchParams(hash.replace(/^#/, ''));
  for (const k of KEYS) p.delete(k);
  p.delete('token');
  p.delete('code');
  const rest = p.toString(), mine = encode(s);
  return rest && mine ? `${rest}&${mine}` : rest || mine;
}

// Whether a fragment holds any view state (beside the token and the renderer flag).
export function hasView(hash) {
  return Object.keys(decode(hash)).length > 0;
}
