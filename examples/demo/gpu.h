/*
 * gpu.h — the demo's GPU path on Vulkan (lavapipe on a machine without a
 * GPU): each frame uploads the cairo image and runs three passes with a GPU
 * zone each — upload (a buffer copy), filter (a compute blur) and composite
 * (a compute vignette and frosted header) — submitted by the render thread
 * and polled, never waited for, by the sender thread (docs/gpu.md §Vulkan).
 * Without a Vulkan device gpu_open fails with a reason and the demo runs
 * without GPU data.
 */
#ifndef STROBE_DEMO_GPU_H
#define STROBE_DEMO_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "strobe/vulkan.h"

#define GPU_FRAMES 3 /* frames in flight: beyond that a frame goes without GPU passes (counted), never waits */

typedef struct gpu gpu;

typedef struct gpu_stats {
  uint64_t frames;        /* submitted */
  uint64_t skipped;       /* frames that went without GPU passes: their slot was still in flight */
  uint64_t polls;         /* non-blocking fence polls by the sender */
  strobe_vulkan_stats vk; /* the zones' ring */
} gpu_stats;

/* Opens the first Vulkan device with a compute queue that has timestamps.
 * calibration: a strobe_vulkan_calibration (AUTO, or forced). Returns 0 and
 * *out, or -1 with a one-line reason in why. */
int gpu_open(gpu **out, int width, int height, uint32_t calibration, char *why, size_t why_len);
void gpu_close(gpu *g);
/* The device's name and the calibration method in force (static text). */
const char *gpu_device_name(const gpu *g);
const char *gpu_calibration_name(const gpu *g);

/* Render thread: uploads the frame (cairo ARGB32, `stride` bytes a row),
 * records upload → filter → composite with a GPU zone each and submits it,
 * marking the frame's CPU end and submit instants (gpu.h; frame > 0, the id
 * the frame's pass has). Returns the frame's slot (>= 0) for the sender, or
 * -1 when the frame has no GPU work: its slot is still in flight (counted
 * in skipped; never waits) or Vulkan failed. */
int gpu_render(gpu *g, const unsigned char *argb, int stride, uint64_t frame);
/* Sender thread: 1 when the slot's fence has signalled (vkGetFenceStatus:
 * never waits; the moment is the frame's fence-seen instant), 0 when not yet. */
int gpu_poll(gpu *g, int slot);
/* Sender thread, after gpu_poll said 1: reads the frames' GPU zones back
 * (strobe_vulkan_collect: GPU spans), marks the fence-seen instant, writes
 * the composite to png_path when not NULL, and releases the slot to the
 * render thread. */
void gpu_release(gpu *g, int slot, const char *png_path);
/* GPU memory by kind, in bytes, as allocated now: `buffers` (staging and
 * readback, with libstrobe_vulkan's own results buffer) and `textures` (the
 * device-side image data the passes read and write). No swapchain: the demo
 * renders offscreen. Render thread. */
typedef struct gpu_memory {
  double buffers, textures;
} gpu_memory;
gpu_memory gpu_query_memory(const gpu *g);
/* Render thread: one calibration pair (the submit-and-wait method waits for the queue). */
int gpu_calibrate(gpu *g);
gpu_stats gpu_query_stats(gpu *g);

#endif
