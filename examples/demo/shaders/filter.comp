// filter.comp — the demo's filter pass (examples/demo/gpu.c): a 3x3 box
// blur of the uploaded cairo frame (ARGB32, premultiplied, one uint a
// pixel), written to the blurred buffer. Compiled by glslc at build time.
#version 450
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) readonly buffer Src { uint px[]; } src;
layout(std430, binding = 1) writeonly buffer Blurred { uint px[]; } blurred;
layout(push_constant) uniform Size { uint width; uint height; } size;

vec4 unpack_argb(uint p) {
  return vec4(float((p >> 16) & 255u), float((p >> 8) & 255u), float(p & 255u), float(p >> 24)) / 255.0;
}

uint pack_argb(vec4 c) {
  uvec4 u = uvec4(clamp(c, 0.0, 1.0) * 255.0 + 0.5);
  return (u.a << 24) | (u.r << 16) | (u.g << 8) | u.b;
}

void main() {
  uvec2 g = gl_GlobalInvocationID.xy;
  if (g.x >= size.width || g.y >= size.height) return;
  ivec2 last = ivec2(int(size.width) - 1, int(size.height) - 1);
  vec4 sum = vec4(0.0);
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++) {
      ivec2 q = clamp(ivec2(g) + ivec2(dx, dy), ivec2(0), last);
      sum += unpack_argb(src.px[uint(q.y) * size.width + uint(q.x)]);
    }
  blurred.px[g.y * size.width + g.x] = pack_argb(sum / 9.0);
}
