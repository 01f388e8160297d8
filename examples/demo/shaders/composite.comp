// composite.comp — the demo's composite pass (examples/demo/gpu.c): the
// sharp frame in the middle, the blurred one darkened towards the edges (a
// vignette), and a frosted header row, written to the output buffer.
// Compiled by glslc at build time.
#version 450
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) readonly buffer Src { uint px[]; } src;
layout(std430, binding = 1) readonly buffer Blurred { uint px[]; } blurred;
layout(std430, binding = 2) writeonly buffer Out { uint px[]; } result;
layout(push_constant) uniform Size { uint width; uint height; } size;

vec4 unpack_argb(uint p) {
  return vec4(float((p >> 16) & 255u), float((p >> 8) & 255u), float(p & 255u), float(p >> 24)) / 255.0;
}

uint pack_argb(vec4 c) {
  uvec4 u = uvec4(clamp(c, 0.0, 1.0) * 255.0 + 0.5);
  return (u.a << 24) | (u.r << 16) | (u.g << 8) | u.b;
}

const uint HEADER_ROWS = 22u; // the grid's header row (examples/demo/view.c ROW_HEIGHT)

void main() {
  uvec2 g = gl_GlobalInvocationID.xy;
  if (g.x >= size.width || g.y >= size.height) return;
  uint i = g.y * size.width + g.x;
  vec4 sharp = unpack_argb(src.px[i]);
  vec4 soft = unpack_argb(blurred.px[i]);
  vec2 uv = (vec2(g) + 0.5) / vec2(size.width, size.height);
  float keep = smoothstep(0.75, 0.35, length(uv - 0.5)); // 1 in the middle, 0 in the corners
  vec4 c = mix(vec4(soft.rgb * 0.8, soft.a), sharp, keep);
  if (g.y < HEADER_ROWS) c = vec4(mix(soft.rgb, vec3(0.2, 0.24, 0.32), 0.35), 1.0);
  result.px[i] = pack_argb(c);
}
