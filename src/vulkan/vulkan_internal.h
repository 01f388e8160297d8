/*
 * vulkan_internal.h — what libstrobe_vulkan's tests reach beyond
 * include/strobe/vulkan.h: a sink that sees every zone as it is read back
 * (its frame, site and raw device ticks) beside its GPU span (gpu.h).
 * Must never: be included outside src/vulkan/ and tests/.
 */
#ifndef STROBE_VULKAN_INTERNAL_H
#define STROBE_VULKAN_INTERNAL_H

#include "strobe/vulkan.h"

typedef struct strobe__vulkan_zone_result {
  uint64_t frame_id;       /* the frame that issued the zone (strobe_vulkan_frame_begin) */
  const strobe_site *site;
  uint64_t device_begin;   /* raw device ticks, masked to timestamp_valid_bits */
  uint64_t device_end;
  uint32_t index;          /* the zone's order in its frame, from 0 */
} strobe__vulkan_zone_result;

/* Called by strobe_vulkan_collect for each zone read back, in frame then
 * zone order, on the collecting thread, with the object's lock held: it must
 * not call back into the object. */
typedef void (*strobe__vulkan_sink)(const strobe__vulkan_zone_result *zone, void *user);
void strobe__vulkan_set_sink(strobe_vulkan *vk, strobe__vulkan_sink sink, void *user);

#endif
