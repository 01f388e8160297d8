// gl.js — owns drawing flame-chart bars with WebGL2: one instanced draw call
// per lane, after one upload of that lane's bars.
//
// The bars of a lane (STRIDE below: 8 x 32-bit each = x, y, w, h as f32
// bits, rgba8, flags) go into the lane's RGBA32UI texture with one
// texSubImage2D: WebGL2's stand-in for a storage buffer (docs/viewer.md
// §Flame chart).
// One drawArraysInstanced then draws them all: each instance expands BATCH
// bars, each bar a quad of two triangles placed from gl_VertexID, its data
// read with texelFetch. Why BATCH bars per instance rather than one: on
// machines without a GPU, Chromium draws WebGL with SwiftShader, whose fixed
// cost per instance (~25 µs) made 1,100 one-bar instances take 35 ms a
// frame; 64 bars per instance take 2-3 ms. On a GPU both are free. BATCH = 1
// is the one-quad-per-instance form.
//
// The fragment shader shades a rounded box by its signed distance field,
// antialiased with fwidth, with rims for the selected span and search
// matches, dimming for non-matches, grey for clusters of sub-pixel spans and
// a hatch for open (unfinished) spans. The flag bits are bars.js's FLAG; the
// shader gets them as constants generated from it (glslFlags).

import { glslFlags, glslBarFields, STRIDE } from './bars.js';
import { bgRGB, colors } from './theme.js';

const BATCH = 64;         // bars per instance
const TEX_W = 2048;       // texels per texture row: 1024 bars
const RING = 3;           // textures per lane, used in turn (never rewrite one a frame in flight may read)

const BAR = glslBarFields(); // the bar layout's colour and flags words (bars.js)
const VS = `#version 300 es
uniform highp usampler2D u_bars;
uniform int u_count;
uniform vec2 u_size;
out vec2 v_local;
out vec2 v_half;
out vec4 v_color;
flat out int v_flags;
const vec2 CORNER[6] = vec2[6](vec2(0.0, 0.0), vec2(1.0, 0.0), vec2(0.0, 1.0),
                               vec2(1.0, 0.0), vec2(1.0, 1.0), vec2(0.0, 1.0));
void main() {
  int bar = gl_InstanceID * ${BATCH} + gl_VertexID / 6;
  if (bar >= u_count) { gl_Position = vec4(2.0, 2.0, 2.0, 1.0); return; } // past the last bar: culled
  int t = bar * 2;
  uvec4 a = texelFetch(u_bars, ivec2(t % ${TEX_W}, t / ${TEX_W}), 0);
  uvec4 b = texelFetch(u_bars, ivec2((t + 1) % ${TEX_W}, (t + 1) / ${TEX_W}), 0);
  vec4 rect = uintBitsToFloat(a);
  vec2 corner = CORNER[gl_VertexID % 6];
  vec2 p = rect.xy + corner * rect.zw;
  v_half = 0.5 * rect.zw;
  v_local = (corner - 0.5) * rect.zw;
  uint rgba = ${BAR.color};
  v_color = vec4(float(rgba & 255u), float((rgba >> 8) & 255u), float((rgba >> 16) & 255u), 255.0) / 255.0;
  v_flags = int(${BAR.flags});
  gl_Position = vec4(p.x / u_size.x * 2.0 - 1.0, 1.0 - p.y / u_size.y * 2.0, 0.0, 1.0);
}`;

const FS = `#version 300 es
precision mediump float;
in vec2 v_local;
in vec2 v_half;
in vec4 v_color;
flat in int v_flags;
uniform vec3 u_dim;
out vec4 o;
${glslFlags()}
float roundBox(vec2 p, vec2 b, float r) {
  vec2 q = abs(p) - b + r;
  return length(max(q, 0.0)) + min(max(q.x, q.y), 0.0) - r;
}
void main() {
  float r = min(3.0, min(v_half.x, v_half.y));
  float d = roundBox(v_local, v_half, r);
  float aa = max(fwidth(d), 1e-3);
  float alpha = clamp(0.5 - d / aa, 0.0, 1.0);
  if (alpha <= 0.0) discard;
  vec3 c = v_color.rgb;
  c *= 1.04 - 0.12 * (v_local.y / max(v_half.y, 1.0) + 1.0) * 0.5;   // top-lit
  c *= mix(1.0, 0.72, smoothstep(-1.2 * aa, 0.0, d));                  // darker rim
  if ((v_flags & FLAG_MERGED) != 0) c = mix(c, vec3(0.45), 0.55);                // clusters of sub-pixel spans
  if ((v_flags & FLAG_OPEN) != 0) {                                            // open: hatched
    float h = step(0.5, fract((gl_FragCoord.x + gl_FragCoord.y) / 10.0));
    c = mix(c, c * 0.5, h);
  }
  if ((v_flags & FLAG_DIM) != 0) c = mix(c, u_dim, 0.78);   // not a search match: towards the theme's dimBar
  bool rim = d > -1.6 * aa - 0.6;
  if ((v_flags & FLAG_MATCH) != 0 && rim) c = vec3(1.0, 0.83, 0.25);            // search match
  if ((v_flags & FLAG_SELECTED) != 0 && rim) c = vec3(1.0);                        // selected
  o = vec4(c * alpha, alpha);
}`;

function compile(gl, type, src) {
  const s = gl.createShader(type);
  gl.shaderSource(s, src);
  gl.compileShader(s);
  if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error('shader: ' + gl.getShaderInfoLog(s));
  return s;
}

// The renderer's name when WebGL runs on the CPU (SwiftShader, llvmpipe,
// softpipe, WARP), else null. There every pixel of a WebGL frame is shaded,
// read back and composited by the CPU, which costs twice the CPU of drawing
// the same bars with Canvas 2D (docs/viewer.md §Speed without a GPU), so the
// flame chart uses Canvas 2D there.
export function softwareRenderer(gl) {
  const ext = gl.getExtension('WEBGL_debug_renderer_info');
  const name = String(gl.getParameter(ext ? ext.UNMASKED_RENDERER_WEBGL : gl.RENDERER) || '');
  const m = /SwiftShader|llvmpipe|softpipe|Software Rasterizer|Microsoft Basic Render/i.exec(name);
  return m ? m[0] : null;
}

export class GLBars {
  // Throws when WebGL2 is unavailable (the caller falls back to Canvas 2D),
  // and, unless allowSoftware, when it runs on the CPU: then before any
  // shader is compiled, the context given back, and the error's `software`
  // names the renderer.
  constructor(canvas, { allowSoftware = true } = {}) {
    // Opaque: it is cleared to the page background, and an opaque canvas composites cheaper.
    const gl = canvas.getContext('webgl2', { antialias: false, premultipliedAlpha: true, alpha: false });
    if (!gl) throw new Error('WebGL2 unavailable');
    this.kind = 'webgl2';
    this.gl = gl;
    this.software = softwareRenderer(gl);
    if (this.software && !allowSoftware) {
      this.dispose();
      throw Object.assign(new Error(`WebGL2 runs on the CPU (${this.software})`), { software: this.software });
    }
    this.canvas = canvas;
    const p = gl.createProgram();
    gl.attachShader(p, compile(gl, gl.VERTEX_SHADER, VS));
    gl.attachShader(p, compile(gl, gl.FRAGMENT_SHADER, FS));
    gl.linkProgram(p);
    if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error('link: ' + gl.getProgramInfoLog(p));
    this.prog = p;
    this.u = { size: gl.getUniformLocation(p, 'u_size'), count: gl.getUniformLocation(p, 'u_count'),
               bars: gl.getUniformLocation(p, 'u_bars'), dim: gl.getUniformLocation(p, 'u_dim') };
    this.vao = gl.createVertexArray(); // no attributes: everything comes from gl_VertexID, gl_InstanceID and the texture
    this.lanes = [];
    this.stats = { drawCalls: 0, uploads: 0, instances: 0 };
    this.w = 1;
    this.h = 1;
    this.dpr = 1;
  }

  // The next texture of lane k's ring, with room for `count` bars.
  _texture(k, count) {
    const gl = this.gl;
    while (this.lanes.length <= k) this.lanes.push({ ring: [], next: 0 });
    const lane = this.lanes[k];
    const slot = lane.next;
    lane.next = (lane.next + 1) % RING;
    const rows = Math.max(1, Math.ceil((count * 2) / TEX_W));
    let t = lane.ring[slot];
    if (!t || t.rows < rows) {
      if (t) gl.deleteTexture(t.tex);
      const grown = Math.max(rows, t ? t.rows * 2 : 4);
      const tex = gl.createTexture();
      gl.bindTexture(gl.TEXTURE_2D, tex);
      gl.texStorage2D(gl.TEXTURE_2D, 1, gl.RGBA32UI, TEX_W, grown);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
      t = lane.ring[slot] = { tex, rows: grown };
    }
    return t;
  }

  resize(w, h, dpr) {
    this.w = w;
    this.h = h;
    this.dpr = dpr;
    this.canvas.width = Math.max(1, Math.round(w * dpr));
    this.canvas.height = Math.max(1, Math.round(h * dpr));
  }

  begin() {
    const gl = this.gl;
    gl.viewport(0, 0, this.canvas.width, this.canvas.height);
    gl.disable(gl.SCISSOR_TEST);
    const [r, g, b] = bgRGB();
    gl.clearColor(r, g, b, 1); // the page background (theme.js)
    gl.clear(gl.COLOR_BUFFER_BIT);
    gl.enable(gl.BLEND);
    gl.blendFunc(gl.ONE, gl.ONE_MINUS_SRC_ALPHA);
    gl.useProgram(this.prog);
    gl.uniform2f(this.u.size, this.w, this.h);
    gl.uniform1i(this.u.bars, 0);
    const [dr, dg, db] = colors().dimBar;
    gl.uniform3f(this.u.dim, dr / 255, dg / 255, db / 255);
    gl.activeTexture(gl.TEXTURE0);
    gl.bindVertexArray(this.vao);
    gl.enable(gl.SCISSOR_TEST);
    this.stats = { drawCalls: 0, uploads: 0, instances: 0 };
  }

  // Draws `count` bars of `u32` (STRIDE words each) clipped to rows [clipY, clipY + clipH) in CSS px:
  // one texture upload and one instanced draw call.
  drawLane(k, u32, count, clipY, clipH) {
    if (!count) return;
    const gl = this.gl, d = this.dpr;
    const y0 = Math.max(0, Math.floor(clipY * d)), y1 = Math.min(this.canvas.height, Math.ceil((clipY + clipH) * d));
    if (y1 <= y0) return;
    gl.scissor(0, this.canvas.height - y1, this.canvas.width, y1 - y0);
    const t = this._texture(k, count);
    gl.bindTexture(gl.TEXTURE_2D, t.tex);
    const rows = Math.ceil((count * 2) / TEX_W);
    // Whole rows: pad the lane's bars to a multiple of TEX_W texels (a copy of just this lane).
    const words = rows * TEX_W * 4;
    const data = new Uint32Array(words);
    data.set(u32.subarray(0, count * STRIDE));
    gl.texSubImage2D(gl.TEXTURE_2D, 0, 0, 0, TEX_W, rows, gl.RGBA_INTEGER, gl.UNSIGNED_INT, data);
    gl.uniform1i(this.u.count, count);
    gl.drawArraysInstanced(gl.TRIANGLES, 0, 6 * BATCH, Math.ceil(count / BATCH));
    this.stats.uploads++;
    this.stats.drawCalls++;
    this.stats.instances += count;
  }

  end() {
    this.gl.bindVertexArray(null);
  }

  // Gives the context back (the flame chart chose Canvas 2D instead).
  dispose() {
    const lose = this.gl.getExtension('WEBGL_lose_context');
    if (lose) lose.loseContext();
  }
}
