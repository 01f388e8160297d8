// theme.js — owns the viewer's themes (dark, the default, and light): the
// colours canvases draw with (the page's own come from viewer.css's variables
// under html[data-theme]), switching (the header's settings), and remembering
// the choice in this browser (localStorage). Canvas views read colors() when
// they draw and redraw on the 'theme' event; nothing else names a theme colour
// for a canvas. Bar colours (a hue per site name, fmt.siteRGB) and the
// duration colours stay the same in both themes.

import { emit } from './state.js';

const KEY = 'strobe.theme';

// Per theme: bg (page), panel, line, fg, dim, ink (text on coloured bars),
// shade (outside the selected frame), label (text backdrop on the strip),
// accent (r,g,b of the flame chart's range), select (selected-frame outline),
// mark (the selected frame on a counter plot), cursor (the hover line there),
// dimBar (r,g,b a bar that is not a search match fades towards: near the
// page, so its label in `dim` stays readable and it never reads as emphasis).
export const THEMES = {
  dark: { bg: '#0d1117', panel: '#161b22', line: '#30363d', fg: '#c9d1d9', dim: '#8b949e', ink: '#0d1117',
    shade: 'rgba(0,0,0,0.28)', label: 'rgba(13,17,23,0.75)', accent: '88,166,255', select: '#ffffff',
    mark: 'rgba(255,255,255,0.25)', cursor: 'rgba(255,255,255,0.6)', dimBar: [33, 38, 46] },
  light: { bg: '#ffffff', panel: '#f6f8fa', line: '#d0d7de', fg: '#1f2328', dim: '#59636e', ink: '#0d1117',
    shade: 'rgba(31,35,40,0.10)', label: 'rgba(255,255,255,0.85)', accent: '9,105,218', select: '#1f2328',
    mark: 'rgba(31,35,40,0.15)', cursor: 'rgba(31,35,40,0.6)', dimBar: [228, 232, 236] },
};

let current = 'dark';

export function name() { return current; }
export function colors() { return THEMES[current]; }

// [r, g, b] in 0..1 of the page background (WebGL's clear colour).
export function bgRGB() {
  const h = THEMES[current].bg;
  return [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16) / 255);
}

export function setTheme(t) {
  if (!THEMES[t]) return false;
  current = t;
  document.documentElement.dataset.theme = t;
  try { localStorage.setItem(KEY, t); } catch { /* not kept */ }
  emit('theme', t);
  return true;
}

// The remembered theme, else dark; applied before the views draw.
export function initTheme() {
  let t = 'dark';
  try { t = localStorage.getItem(KEY) || 'dark'; } catch { /* storage unavailable */ }
  current = THEMES[t] ? t : 'dark';
  document.documentElement.dataset.theme = current;
}
