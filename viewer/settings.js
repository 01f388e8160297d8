// settings.js — owns the header's settings panel (⚙): the duration colour
// thresholds (green under the first, orange up to the second, red above;
// docs/viewer.md §Colours) and the theme (dark or light, theme.js). Values are
// checked before they apply: a threshold that is not a positive number, or a
// red threshold below the green one, is refused with a message and changes
// nothing. Both are remembered in this browser (localStorage).

import { state, emit } from './state.js';
import * as fmt from './fmt.js';
import { THEMES, name as themeName, setTheme } from './theme.js';

const KEY = 'strobe.thresholds';

export class Settings {
  constructor(button, el) {
    this.button = button;
    this.el = el;
    try {
      const t = JSON.parse(localStorage.getItem(KEY) || 'null');
      if (t && t.ok > 0 && t.over >= t.ok) state.thresholds = { ok: t.ok, over: t.over };
    } catch { /* storage unavailable or malformed: the defaults */ }
    this.render();
    button.addEventListener('click', () => this.show(el.hidden));
    el.addEventListener('change', (e) => this._change(e));
    el.addEventListener('click', (e) => { if (e.target.closest('[data-close]')) this.show(false); });
  }

  show(on) {
    if (on) this.render();
    this.el.hidden = !on;
    this.button.classList.toggle('on', on);
  }

  render() {
    const t = state.thresholds;
    const themes = Object.keys(THEMES).map((k) => `<option value="${k}"${k === themeName() ? ' selected' : ''}>${k}</option>`).join('');
    this.el.innerHTML = `<h3>Settings <button data-close title="close">×</button></h3>` +
      `<div class="row">duration colours: <span class="dur ok">green</span> under <input id="thr-ok" type="number" min="0" step="any" value="${t.ok}"> ms,` +
      ` <span class="dur slow">orange</span> up to <input id="thr-over" type="number" min="0" step="any" value="${t.over}"> ms, <span class="dur over">red</span> above</div>` +
      `<div class="row dim small">frames in the strip and the list, the detail panel, session samples (default ${fmt.THRESHOLDS_MS.ok} and ${fmt.THRESHOLDS_MS.over} ms)</div>` +
      `<div class="row thr-error warn" hidden></div>` +
      `<div class="row">theme <select id="theme">${themes}</select></div>`;
  }

  _change(e) {
    if (e.target.id === 'theme') { setTheme(e.target.value); return; }
    if (e.target.id !== 'thr-ok' && e.target.id !== 'thr-over') return;
    const ok = Number(this.el.querySelector('#thr-ok').value), over = Number(this.el.querySelector('#thr-over').value);
    const err = this.el.querySelector('.thr-error');
    const why = !(ok > 0) || !(over > 0) ? 'each threshold must be a positive number of ms'
      : over < ok ? `the red threshold (${over} ms) is below the green one (${ok} ms)` : '';
    err.hidden = !why;
    err.textContent = why ? `not applied: ${why}` : '';
    if (why) return;
    state.thresholds = { ok, over };
    try { localStorage.setItem(KEY, JSON.stringify(state.thresholds)); } catch { /* not kept */ }
    emit('thresholds', state.thresholds);
  }
}
