// deep.js — owns the deep-capture tab (docs/viewer.md §Deep capture): the
// capture's deep captures (meta.deep, docs/recording.md §Deep capture), one
// frame's draw calls in order with their kind, pipeline, pass, ranges,
// surface geometry, the resources each reads and its replay status (ok, or
// what the capture lacks to redraw it: the model computed it with the
// replay engine's own check, strobe/replay.h), a thumbnail of the frame (its
// attached PNG screenshot), and every frame's attachments. In a live view
// the button asks the application for a deep capture of its next frame
// (POST /api/deep): it lands in the application's capture file (flight
// recorders take none), which `strobe view FILE` shows.

import * as api from './api.js';
import { state } from './state.js';
import * as fmt from './fmt.js';

const ROLES = ['', 'geometry', 'texture', 'surface'];
const MAX_ROWS = 2000;  // calls listed at once; the rest are counted

export class DeepTab {
  constructor(el) {
    this.el = el;
    this.model = null;
    this.pick = 0;        // index into meta.deep
    this.status = '';     // the last request's answer
    this.thumbs = new Map(); // image index -> ImageBitmap
    el.addEventListener('change', (e) => {
      if (e.target.id === 'deep-pick') { this.pick = Number(e.target.value); this.render(); }
    });
    el.addEventListener('click', async (e) => {
      if (e.target.id === 'deep-request') await this.request();
    });
  }

  setModel(model) {
    for (const b of this.thumbs.values()) b.close();
    this.thumbs = new Map();
    this.model = model;
    this.pick = 0;
    this.render();
  }

  async request() {
    try {
      const r = await api.post('/api/deep', {});
      this.status = `requested: the next frame records its draw calls into the application's capture file (${r.written} written so far); ` +
        'a live view\'s flight recorder takes none: open that file with strobe view';
    } catch (e) {
      this.status = e.message;
    }
    this.render();
  }

  // The frame's screenshot: the image index of its PNG attachment, or -1.
  static imageOf(meta, frame, origin) {
    for (const a of meta.attachments || []) if (a.frame === frame && a.origin === origin && a.image !== null) return a.image;
    return -1;
  }

  // The image as a bitmap (the page's policy allows no blob: images, so
  // the thumbnail is a canvas), fetched once per model.
  async _thumb(k) {
    if (this.thumbs.has(k)) return this.thumbs.get(k);
    const buf = await api.bin(`/api/capture/image/${k}`);
    const bmp = await createImageBitmap(new Blob([buf], { type: 'image/png' }));
    this.thumbs.set(k, bmp);
    return bmp;
  }

  render() {
    const m = this.model;
    const meta = m ? m.meta : {};
    const deeps = meta.deep || [];
    const button = state.live ? '<button id="deep-request" title="ask the application to record its next frame\'s draw calls">Request deep capture</button>' : '';
    const refused = (meta.deep_refused || 0) + (meta.deep_cut || 0);
    const cutBy = meta.attachments_cut_by_capture || { count: 0, bytes: 0 };
    let head = `<div class="deep-head"><b>Deep capture</b> ${button} <span class="dim">${fmt.esc(this.status)}</span>` +
      (refused ? `<span class="warn"> · ${fmt.count(refused)} deep captures refused or past the viewer's bound</span>` : '') +
      (cutBy.count ? `<span class="warn"> · ${fmt.count(cutBy.count)} attachments (${fmt.count(cutBy.bytes)} bytes) cut by the capture's content bound</span>` : '') +
      '</div>';
    const attachments = this._attachmentsHtml(meta);
    if (!m || !deeps.length) {
      this.el.innerHTML = head + '<div class="empty">No deep capture in this capture. An application records one with strobe_deep_request (docs/recording.md, Deep capture)' +
        (state.live ? ', or press Request deep capture while recording.' : '.') + '</div>' + attachments;
      return;
    }
    if (this.pick >= deeps.length) this.pick = 0;
    const d = deeps[this.pick];
    const counts = {};
    for (const c of d.calls) counts[c[11]] = (counts[c[11]] || 0) + 1;
    const of = (x) => (fmt.processOf(meta, x.origin) ? ` of ${fmt.processOf(meta, x.origin)}` : ''); // a merge: its process
    const opts = deeps.map((x, k) => `<option value="${k}"${k === this.pick ? ' selected' : ''}>frame ${x.frame}${fmt.esc(of(x))} at ${fmt.at(x.time)} · ${x.calls.length} calls</option>`).join('');
    const summary = Object.entries(counts).map(([s, n]) => `<span class="deep-st st-${s}">${fmt.count(n)} ${fmt.esc(s)}</span>`).join(' ');
    head += `<div class="deep-pick"><select id="deep-pick">${opts}</select> ${summary}` +
      (d.calls_dropped || d.calls_cut ? ` <span class="warn">${fmt.count(d.calls_dropped)} calls past the capture's bound, ${fmt.count(d.calls_cut)} past the viewer's</span>` : '') +
      ' <span class="dim">kinds are the renderer\'s replay backend\'s to judge (strobe-demo --replay)</span></div>';
    const rows = d.calls.slice(0, MAX_ROWS).map((c) => {
      const [seq, kind, pipeline, pass, vf, vc, inf, ic, bounds, clip, refs, st] = c;
      const geo = bounds ? `[${bounds.join(', ')}] clip [${clip.join(', ')}]` : '<span class="dim">no geometry</span>';
      const res = refs.map(([id, role]) => `${ROLES[role] || role} <span class="dim">${id}</span>`).join('<br>');
      return `<tr class="st-${st}" data-call="${seq}"><td class="num">${seq}</td><td>${fmt.esc(kind)}</td><td>${fmt.esc(pipeline)}</td>` +
        `<td>${fmt.esc(pass)}</td><td class="num">${vf}+${vc}</td><td class="num">${inf}+${ic}</td><td>${geo}</td><td>${res}</td>` +
        `<td class="deep-status">${fmt.esc(st)}</td></tr>`;
    }).join('');
    const more = d.calls.length > MAX_ROWS ? `<div class="dim">${fmt.count(d.calls.length - MAX_ROWS)} more calls not listed</div>` : '';
    const k = DeepTab.imageOf(meta, d.frame, d.origin);
    this.el.innerHTML = head + '<div class="deep-body"><div class="deep-calls"><table class="deep-table"><thead><tr>' +
      '<th>#</th><th>kind</th><th>pipeline</th><th>pass</th><th>vertices</th><th>instances</th><th>surface geometry</th><th>resources</th><th>replay</th>' +
      `</tr></thead><tbody>${rows}</tbody></table>${more}</div>` +
      `<div class="deep-side">${k >= 0 ? '<canvas class="deep-thumb" title="the frame\'s screenshot"></canvas>' : '<div class="empty">No screenshot attached to this frame.</div>'}</div></div>` +
      attachments;
    if (k >= 0) {
      const cv = this.el.querySelector('.deep-thumb');
      this._thumb(k).then((bmp) => {
        if (!cv.isConnected) return;
        cv.width = bmp.width;
        cv.height = bmp.height;
        cv.getContext('2d').drawImage(bmp, 0, 0);
        cv.dataset.loaded = '1';
      }).catch((e) => { this.status = e.message; });
    }
  }

  // Every frame's attachments, grouped by frame (and in a merge by process: two processes may have one frame id).
  _attachmentsHtml(meta) {
    const list = meta.attachments || [];
    if (!list.length) return '';
    const byFrame = new Map();
    for (const a of list) {
      const key = `${a.frame} ${a.origin}`;
      if (!byFrame.has(key)) byFrame.set(key, []);
      byFrame.get(key).push(a);
    }
    let html = '<div class="deep-attachments"><b>Attachments by frame</b>' +
      (meta.attachments_cut ? ` <span class="warn">${fmt.count(meta.attachments_cut)} past the viewer's bound</span>` : '');
    for (const as of byFrame.values()) {
      const frame = as[0].frame, proc = fmt.processOf(meta, as[0].origin);
      html += `<div class="deep-frame" data-frame="${frame}"${proc ? ` data-process="${fmt.esc(proc)}"` : ''}><span class="dim">frame</span> ${frame}` +
        `${proc ? ` <span class="dim">of</span> ${fmt.esc(proc)}` : ''}: ${as.length} attachment${as.length === 1 ? '' : 's'}<ul>` +
        as.map((a) => `<li>${fmt.esc(a.media_type)} <span class="dim">${a.resource}</span> ${a.width ? `${a.width} × ${a.height} ` : ''}` +
          `${fmt.count(a.bytes)} bytes · ${a.state === 'stored' ? 'stored' : a.state === 'earlier' ? 'stored in an earlier frame' : '<span class="warn">cut by the capture\'s bound</span>'}</li>`).join('') +
        '</ul></div>';
    }
    return html + '</div>';
  }
}
