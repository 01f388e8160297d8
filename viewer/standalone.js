// standalone.js — owns opening the self-contained report that `strobe export
// FILE --format html` writes (docs/viewer.md §One file): a classic script
// inlined into that file, never served by the server nor imported. It
// decodes the page's one base64 block (a gzip stream: a u32 length, an index
// in JSON, then the viewer's modules and the /api answers of one capture back
// to back, the spans' start column as xor8), makes each module a blob: URL, maps the modules' relative imports
// onto them with an import map, hands the /api answers to api.js (its report
// shim, `globalThis.strobeReport`) and starts app.js. It must never fetch
// anything: the page's Content-Security-Policy allows no connection at all,
// and the data is all in the page.
'use strict';

(() => {
  const fail = (what) => {
    document.body.innerHTML = '';
    const h = document.createElement('h2');
    h.textContent = `This Strobe report cannot be opened: ${what}`;
    document.body.append(h);
  };

  // The base64 text into bytes, then through the browser's own gzip decoder.
  async function unpack() {
    const text = document.getElementById('strobe-report-data').textContent.replace(/\s+/g, '');
    const bin = atob(text);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    return new Response(stream).arrayBuffer();
  }

  // An f64 column stored as xor8 (export_html.c xor8_copy: each value's bits XOR the previous one's, its 8
  // bytes in 8 planes) back to plain little-endian doubles, in place.
  function unxor8(bytes, at, rows) {
    const planes = bytes.slice(at, at + 8 * rows), out = new Uint8Array(8 * rows);
    for (let k = 0; k < 8; k++) for (let i = 0; i < rows; i++) out[i * 8 + k] = planes[k * rows + i];
    const u = new Uint32Array(out.buffer);
    for (let i = 1; i < rows; i++) { u[2 * i] ^= u[2 * i - 2]; u[2 * i + 1] ^= u[2 * i - 1]; }
    bytes.set(out, at);
  }

  // Relative imports ('./fmt.js') become bare names the import map resolves: a blob: URL is no base for a relative one.
  const bare = (src) => src.replace(/(\bfrom\s*|\bimport\s*)(['"])\.\/([\w-]+\.js)\2/g, '$1$2$3$2');

  async function start() {
    const buf = await unpack();
    const indexLen = new DataView(buf).getUint32(0, true);
    const index = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, 4, indexLen)));
    const base = 4 + indexLen;
    const files = new Map();
    for (const [name, off, len, how, at, rows] of index.files) {
      const bytes = new Uint8Array(buf, base + off, len);
      if (how === 'xor8') unxor8(bytes, at, rows);
      files.set(name, bytes);
    }
    // api.js answers the viewer's /api requests from these (its report shim).
    globalThis.strobeReport = { files };
    const imports = {};
    const utf8 = new TextDecoder();
    for (const [name, bytes] of files) {
      if (name.startsWith('/')) continue;   // an /api answer, not a module
      imports[name] = URL.createObjectURL(new Blob([bare(utf8.decode(bytes))], { type: 'text/javascript' }));
    }
    if (!imports['app.js']) throw new Error('the report holds no app.js');
    const map = document.createElement('script');
    map.type = 'importmap';
    map.textContent = JSON.stringify({ imports });
    document.head.append(map);
    const app = document.createElement('script');
    app.type = 'module';
    app.src = imports['app.js'];
    document.head.append(app);
  }

  // The body (the viewer's panels) is parsed before app.js starts.
  const go = () => start().catch((e) => fail(e && e.message ? e.message : String(e)));
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', go);
  else go();
})();
