// gl.js — owns drawing flame-chart bars with WebGL2: one instanced draw call
// per lane. Each lane has its own instance buffer; drawLane() uploads that
// lane's culled bars once (bufferData) and issues ONE drawArraysInstanced.
// The vertex shader expands each instance into a quad from gl_VertexID (no
// vertex buffer); the fragment shader shades a rounded box by its signed
// distance field, antialiased with fwidth, with rims for the selected span
// and search matches, dimming for non-matches, and a hatch for open spans.
//
// Instance layout (bars.js builds it): 6 x 32-bit per bar = x, y, w, h (CSS
// px, f32), rgba (4 x u8), flags (f32: 1 selected, 2 match, 4 dim, 8 merged,
// 16 open/unfinished).

const VS = `#version 300 es
layout(location = 0) in vec4 a_rect;
layout(location = 1) in vec4 a_color;
layout(location = 2) in float a_flags;
uniform vec2 u_size;
out vec2 v_local;
out vec2 v_half;
out vec4 v_color;
flat out int v_flags;
void main() {
  vec2 corner = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1));
  vec2 p = a_rect.xy + corner * a_rect.zw;
  v_half = 0.5 * a_rect.zw;
  v_local = (corner - 0.5) * a_rect.zw;
  v_color = a_color;
  v_flags = int(a_flags);
  gl_Position = vec4(p.x / u_size.x * 2.0 - 1.0, 1.0 - p.y / u_size.y * 2.0, 0.0, 1.0);
}`;

const FS = `#version 300 es
precision mediump float;
in vec2 v_local;
in vec2 v_half;
in vec4 v_color;
flat in int v_flags;
out vec4 o;
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
  if ((v_flags & 8) != 0) c = mix(c, vec3(0.45), 0.55);                // merged sub-pixel spans
  if ((v_flags & 16) != 0) {                                            // open: hatched
    float h = step(0.5, fract((gl_FragCoord.x + gl_FragCoord.y) / 10.0));
    c = mix(c, c * 0.5, h);
  }
  if ((v_flags & 4) != 0) c = mix(c, vec3(0.13, 0.15, 0.18), 0.78);   // not a search match
  bool rim = d > -1.6 * aa - 0.6;
  if ((v_flags & 2) != 0 && rim) c = vec3(1.0, 0.83, 0.25);            // search match
  if ((v_flags & 1) != 0 && rim) c = vec3(1.0);                        // selected
  o = vec4(c * alpha, alpha);
}`;

function compile(gl, type, src) {
  const s = gl.createShader(type);
  gl.shaderSource(s, src);
  gl.compileShader(s);
  if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error('shader: ' + gl.getShaderInfoLog(s));
  return s;
}

export class GLBars {
  // Throws when WebGL2 is unavailable (the caller falls back to Canvas 2D).
  constructor(canvas) {
    const gl = canvas.getContext('webgl2', { antialias: false, premultipliedAlpha: true, alpha: true });
    if (!gl) throw new Error('WebGL2 unavailable');
    this.kind = 'webgl2';
    this.gl = gl;
    this.canvas = canvas;
    const p = gl.createProgram();
    gl.attachShader(p, compile(gl, gl.VERTEX_SHADER, VS));
    gl.attachShader(p, compile(gl, gl.FRAGMENT_SHADER, FS));
    gl.linkProgram(p);
    if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error('link: ' + gl.getProgramInfoLog(p));
    this.prog = p;
    this.uSize = gl.getUniformLocation(p, 'u_size');
    this.lanes = [];           // per lane: {vao, buf}
    this.stats = { drawCalls: 0, uploads: 0, instances: 0 };
    this.w = 1;
    this.h = 1;
    this.dpr = 1;
  }

  _lane(k) {
    const gl = this.gl;
    while (this.lanes.length <= k) {
      const vao = gl.createVertexArray();
      const buf = gl.createBuffer();
      gl.bindVertexArray(vao);
      gl.bindBuffer(gl.ARRAY_BUFFER, buf);
      gl.enableVertexAttribArray(0);
      gl.vertexAttribPointer(0, 4, gl.FLOAT, false, 24, 0);
      gl.vertexAttribDivisor(0, 1);
      gl.enableVertexAttribArray(1);
      gl.vertexAttribPointer(1, 4, gl.UNSIGNED_BYTE, true, 24, 16);
      gl.vertexAttribDivisor(1, 1);
      gl.enableVertexAttribArray(2);
      gl.vertexAttribPointer(2, 1, gl.FLOAT, false, 24, 20);
      gl.vertexAttribDivisor(2, 1);
      gl.bindVertexArray(null);
      this.lanes.push({ vao, buf });
    }
    return this.lanes[k];
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
    gl.clearColor(0, 0, 0, 0);
    gl.clear(gl.COLOR_BUFFER_BIT);
    gl.enable(gl.BLEND);
    gl.blendFunc(gl.ONE, gl.ONE_MINUS_SRC_ALPHA);
    gl.useProgram(this.prog);
    gl.uniform2f(this.uSize, this.w, this.h);
    gl.enable(gl.SCISSOR_TEST);
    this.stats = { drawCalls: 0, uploads: 0, instances: 0 };
  }

  // Draws `count` bars of `f32` (6 floats each) clipped to rows [clipY, clipY + clipH) in CSS px.
  drawLane(k, f32, count, clipY, clipH) {
    if (!count) return;
    const gl = this.gl, lane = this._lane(k), d = this.dpr;
    const y0 = Math.max(0, Math.floor(clipY * d)), y1 = Math.min(this.canvas.height, Math.ceil((clipY + clipH) * d));
    if (y1 <= y0) return;
    gl.scissor(0, this.canvas.height - y1, this.canvas.width, y1 - y0);
    gl.bindVertexArray(lane.vao);
    gl.bindBuffer(gl.ARRAY_BUFFER, lane.buf);
    gl.bufferData(gl.ARRAY_BUFFER, f32.subarray(0, count * 6), gl.DYNAMIC_DRAW);
    gl.drawArraysInstanced(gl.TRIANGLE_STRIP, 0, 4, count);
    this.stats.uploads++;
    this.stats.drawCalls++;
    this.stats.instances += count;
  }

  end() {
    this.gl.bindVertexArray(null);
  }
}
