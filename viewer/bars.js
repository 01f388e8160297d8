// bars.js — owns the vocabulary of flame-chart bars: the flag bits each bar
// carries (flame.js sets them; gl.js's shader and canvas2d.js draw them) and
// the kinds of bar hit-testing tells apart. One definition: gl.js builds its
// GLSL constants from FLAG with glslFlags(), so the shader's numbers are
// derived from here, never restated. A new flag is one line in FLAG.

// The bar layout: STRIDE 32-bit words per bar, each field at its WORD. gl.js
// uploads bars as they are and its shader reads words 0-3 (the rect, as
// floats) as one texel and 4-7 as the next (glslBarFields); flame.js writes
// them and canvas2d.js reads them by these names.
export const STRIDE = 8;
export const WORD = Object.freeze({
  X: 0, Y: 1, W: 2, H: 3, // the rect, CSS px (f32)
  COLOR: 4,               // 0xAABBGGRR (u32)
  FLAGS: 5,               // FLAG bits (u32)
});

// Bits of a bar's flags word (WORD.FLAGS).
export const FLAG = Object.freeze({
  SELECTED: 1, // the selected span: a white rim
  MATCH: 2,    // matches the search: a yellow rim
  DIM: 4,      // a search is on and this does not match: dimmed
  MERGED: 8,   // a cluster of sub-pixel spans (or one span drawn 1 px wide): grey
  OPEN: 16,    // a scope with no duration (unfinished, END lost, or unwound): hatched
});

// What a bar stands for, as hit-testing reports it.
export const BAR_KIND = Object.freeze({
  SPAN: 0,  // one span: the row index of the model's span
  DENSE: 1, // spans [idx, idx + cnt) of one row, merged
  OPEN: 2,  // one open scope: the row index of the model's open table
});

// A GPU lane's overlay (docs/gpu.md, flame.js >>gpu): each frame's two gaps,
// shaded apart from GPU work, and its host instants as 1 px ticks.
export const GPU_OVERLAY = Object.freeze({
  backlog: 'rgba(227,179,65,0.30)', // queue backlog: submit to GPU start (amber)
  polling: 'rgba(88,166,255,0.30)', // polling latency: GPU end to fence seen (blue)
  cpu_end: '#d2a8ff',               // the CPU finished the frame's command buffers
  submit: '#e3b341',                // handed to the queue
  fence_seen: '#58a6ff',            // the poll saw the fence
  violation: '#f85149',             // a frame whose instants are out of order: every tick in red
});

// The shader's reads of a bar's colour and flags from its second texel `b`
// (words 4-7): `b.x` for word 4, and so on.
export function glslBarFields() {
  if (WORD.X !== 0 || WORD.Y !== 1 || WORD.W !== 2 || WORD.H !== 3 || WORD.COLOR < 4 || WORD.FLAGS < 4
      || WORD.COLOR >= STRIDE || WORD.FLAGS >= STRIDE || STRIDE !== 8) {
    throw new Error('bars.js: the shader reads the rect from words 0-3 and colour and flags from words 4-7 of 8');
  }
  return { color: `b.${'xyzw'[WORD.COLOR - 4]}`, flags: `b.${'xyzw'[WORD.FLAGS - 4]}` };
}

// GLSL `const int FLAG_<NAME> = <bit>;` lines for every flag.
export function glslFlags() {
  return Object.entries(FLAG).map(([name, bit]) => `const int FLAG_${name} = ${bit};`).join('\n');
}
