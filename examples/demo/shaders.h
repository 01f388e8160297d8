/*
 * shaders.h — the demo's compute shaders as SPIR-V words, compiled from
 * shaders/filter.comp and shaders/composite.comp by glslc at build time and turned into C by
 * cmake/spirv-c.cmake (examples/CMakeLists.txt). Sizes are in bytes.
 */
#ifndef STROBE_DEMO_SHADERS_H
#define STROBE_DEMO_SHADERS_H

#include <stddef.h>
#include <stdint.h>

extern const uint32_t demo_filter_spv[];
extern const size_t demo_filter_spv_size;
extern const uint32_t demo_composite_spv[];
extern const size_t demo_composite_spv_size;

#endif
