// canvas2d.js — owns drawing flame-chart bars with Canvas 2D, used when
// WebGL2 is unavailable, when it runs on the CPU (SwiftShader, llvmpipe: gl.js
// softwareRenderer; #renderer=webgl2 keeps WebGL2 there), or when forced with
// #fallback=1 / ?fallback=1. Same
// interface and instance layout as gl.js, so culling, hit-testing and labels
// are shared; it draws each lane's bars with fillRect/roundRect instead of an
// instanced draw call, so it is slower on dense views but looks the same.

import { FLAG, STRIDE, WORD } from './bars.js';
import { colors } from './theme.js';

export class Canvas2DBars {
  constructor(canvas) {
    this.kind = 'canvas2d';
    this.canvas = canvas;
    this.ctx = canvas.getContext('2d', { alpha: true });
    this.stats = { drawCalls: 0, uploads: 0, instances: 0 };
    this.css = new Map();   // colour → its CSS text (no string built per bar)
    this.w = 1;
    this.h = 1;
    this.dpr = 1;
  }

  resize(w, h, dpr) {
    this.w = w;
    this.h = h;
    this.dpr = dpr;
    this.canvas.width = Math.max(1, Math.round(w * dpr));
    this.canvas.height = Math.max(1, Math.round(h * dpr));
  }

  begin() {
    const c = this.ctx;
    c.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    c.clearRect(0, 0, this.w, this.h);
    this.stats = { drawCalls: 0, uploads: 0, instances: 0 };
  }

  drawLane(k, u32, count, clipY, clipH) {
    if (!count) return;
    const c = this.ctx;
    const f32 = new Float32Array(u32.buffer, u32.byteOffset, count * STRIDE);
    c.save();
    c.beginPath();
    c.rect(0, clipY, this.w, clipH);
    c.clip();
    let lastColor = -1;
    const [dr, dg, db] = colors().dimBar;   // where a bar that is not a search match fades (theme.js)
    for (let i = 0; i < count; i++) {
      const o = i * STRIDE;
      const x = f32[o + WORD.X], y = f32[o + WORD.Y], w = f32[o + WORD.W], h = f32[o + WORD.H];
      const flags = u32[o + WORD.FLAGS];
      const rgba = u32[o + WORD.COLOR];
      let r = rgba & 255, g = (rgba >>> 8) & 255, b = (rgba >>> 16) & 255;
      if (flags & FLAG.MERGED) { r = (r + 115) >> 1; g = (g + 115) >> 1; b = (b + 115) >> 1; }
      if (flags & FLAG.DIM) { r = (r * 22 + dr * 78) / 100 | 0; g = (g * 22 + dg * 78) / 100 | 0; b = (b * 22 + db * 78) / 100 | 0; }
      const color = (r << 16) | (g << 8) | b;
      if (color !== lastColor) {
        let css = this.css.get(color);
        if (!css) { css = `rgb(${r},${g},${b})`; this.css.set(color, css); }
        c.fillStyle = css;
        lastColor = color;
      }
      if (w >= 6) {
        c.beginPath();
        c.roundRect(x, y, w, h, 3);
        c.fill();
      } else {
        c.fillRect(x, y, w, h);
      }
      if (flags & FLAG.OPEN) {
        c.fillStyle = 'rgba(0,0,0,0.35)';
        for (let hx = x; hx < x + w; hx += 10) c.fillRect(hx, y, 4, h);
        lastColor = -1;
      }
      if (flags & (FLAG.SELECTED | FLAG.MATCH)) {
        c.strokeStyle = flags & FLAG.SELECTED ? '#fff' : '#ffd340';
        c.lineWidth = 1.5;
        c.strokeRect(x + 0.75, y + 0.75, Math.max(0, w - 1.5), h - 1.5);
      }
    }
    c.restore();
    this.stats.drawCalls++;
    this.stats.instances += count;
  }

  end() {}
}
