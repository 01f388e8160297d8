// api.js — owns talking to the Strobe server: the bearer token (read once
// from the URL fragment `#token=…`, which browsers never send to a server,
// or traded once for the one-time `#code=…` a browser started by `strobe
// view` is given, then removed from the address bar) and authenticated
// fetches of JSON and binary tables. The token is sent only as
// `Authorization: Bearer`. In the self-contained report (`strobe export
// --format html`, docs/viewer.md §One file) it answers the same requests
// from the data the page holds instead (standalone.js put it in
// `globalThis.strobeReport`): no server, no token, no request.

let token = '';
const report = globalThis.strobeReport || null;   // {files: Map(path → bytes)} in the report, else null

// Drops `key=…` from the address bar's fragment, keeping its other parts (e.g. &fallback=1).
function dropFromHash(key) {
  const rest = location.hash.replace(new RegExp(`(^#|&)${key}=[^&]+`), '$1').replace(/^#&/, '#');
  history.replaceState(null, '', location.pathname + (rest === '#' ? '' : rest));
}

// The one-time code (docs/server.md §Opening the viewer) traded for the token: POST /api/open answers it once.
async function tradeCode(code) {
  const res = await fetch('/api/open', { method: 'POST', headers: { 'X-Strobe-Open-Code': code }, cache: 'no-store' });
  if (!res.ok) return false;
  const j = await res.json();
  if (typeof j.token !== 'string' || !j.token) return false;
  token = j.token;
  sessionStorage.setItem('strobe-token', token);
  return true;
}

export async function initToken() {
  if (report) return true;
  const c = /(?:^#|&)code=([0-9a-f]+)/.exec(location.hash);
  if (c) {
    dropFromHash('code');
    if (await tradeCode(c[1])) return true; // used or expired: a token this tab holds still opens it
  }
  const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (m) {
    token = decodeURIComponent(m[1]);
    sessionStorage.setItem('strobe-token', token);
    dropFromHash('token');
  } else {
    token = sessionStorage.getItem('strobe-token') || '';
  }
  return token !== '';
}

// A token given by hand (the viewer's form, for a link opened without one):
// the token itself or a URL holding `#token=…`. False when there is none in it.
export function giveToken(text) {
  const m = /(?:#|&)token=([^&\s]+)/.exec(text) || /^\s*([0-9a-zA-Z_-]{8,})\s*$/.exec(text);
  if (!m) return false;
  token = decodeURIComponent(m[1]);
  sessionStorage.setItem('strobe-token', token);
  return true;
}

export function hasToken() {
  return token !== '';
}

export class ApiError extends Error {
  constructor(status, name, message) {
    super(message || name || `HTTP ${status}`);
    this.status = status;
    this.name = name || 'http_error';
  }
}

// An /api answer of the report: its path without the query (but a compared capture's `capture=1`, which no
// report holds, and an explanation's whole query: a report explains its slowest frames one by one), a GET only;
// else the 404 a server gives for what it does not have.
function fromReport(path, opts) {
  const [p, q = ''] = path.split('?');
  const key = p === '/api/capture/explain' ? path : /(^|&)capture=1(&|$)/.test(q) ? `${p}?capture=1` : p;
  const bytes = (opts.method || 'GET') === 'GET' && !/(^|&)since=/.test(q) ? report.files.get(key) : undefined;
  if (!bytes) throw new ApiError(404, 'not_in_report', `this report holds no ${p} (it holds one capture, exported by strobe export --format html)`);
  return new Response(bytes, { status: 200 });
}

async function request(path, opts = {}) {
  if (report) return fromReport(path, opts);
  const headers = { Authorization: `Bearer ${token}`, ...(opts.headers || {}) };
  const res = await fetch(path, { ...opts, headers, cache: 'no-store' });
  if (!res.ok && res.status !== 202) {
    let name = '', message = '';
    try {
      const j = await res.json();
      name = j.error;
      message = j.message;
    } catch { /* not JSON */ }
    throw new ApiError(res.status, name, message);
  }
  return res;
}

// Whether /api/capture/explain has something to read now (the server's state says: a recording or a file shown,
// not a stopped recording's last snapshot), so the viewer asks only then. One answer per call.
export async function explainable() {
  const st = await json('/api/capture/state');
  return st.explainable !== false;
}

export async function json(path, opts) {
  const res = await request(path, opts);
  const body = await res.json();
  return res.status === 202 ? { accepted: true, ...body } : body;
}

export async function bin(path) {
  return (await request(path)).arrayBuffer();
}

export function post(path, body) {
  return json(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? '' : JSON.stringify(body),
  });
}

export function del(path) {
  return json(path, { method: 'DELETE' });
}
