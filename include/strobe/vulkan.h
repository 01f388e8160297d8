/*
 * vulkan.h — GPU timestamp zones for a Vulkan renderer (libstrobe_vulkan, a
 * companion library built when the Vulkan headers and loader are present).
 *
 * Owns: timestamp zones written around regions of a command buffer, a ring
 * of query pools (one per frame in flight) read back without ever waiting,
 * and calibration pairs between the device's timestamp clock and Strobe's
 * host clock, by VK_EXT_calibrated_timestamps when the device has it and by
 * a submit-and-wait pair when it does not (docs/gpu.md §Vulkan). It is built
 * on include/strobe/gpu.h: the object declares a clock domain (the device's
 * timestamp counter) and a queue lane, feeds the domain its calibration
 * pairs, and adds each zone read back as a GPU span of the frame that
 * issued it (strobe_gpu_span_add). The frame's host instants (CPU end,
 * submit, fence seen) are the application's to mark (strobe_gpu_frame_mark),
 * the fence seen after collecting that frame's zones.
 * Must never: wait for the GPU outside strobe_vulkan_calibrate's
 * submit-and-wait path, reset a query the GPU may still write, or read a
 * query's stale result as a new one.
 *
 * How a frame goes (docs/gpu.md §Vulkan has the whole loop):
 *
 *   strobe_vulkan_frame_begin(vk, cmd, frame_id);    // claims a ring slot, resets its queries
 *   strobe_vulkan_zone z = strobe_vulkan_zone_begin(vk, cmd, &filter_site, STROBE_GPU_PASS_MAIN);
 *   vkCmdDispatch(cmd, ...);
 *   strobe_vulkan_zone_end(vk, cmd, z);
 *   strobe_vulkan_frame_end(vk, cmd);                // closes what is open, copies the results out
 *   vkQueueSubmit(...);
 *   ...
 *   strobe_vulkan_collect(vk);                       // any later time: never waits
 *
 * The frame's command buffer itself copies its results into host-visible
 * memory at its end (vkCmdCopyQueryPoolResults), followed by the frame's
 * sequence number. strobe_vulkan_collect reads that memory: a slot whose
 * sequence number has arrived is resolved, its zones attached to the frame
 * that issued them, and the slot freed; one still in flight is left for a
 * later call. No driver call is made, so collect never waits, on any driver
 * (vkGetQueryPoolResults without its wait bit still waits for the device to
 * go idle on some, lavapipe among them). When every slot is still in
 * flight, the new frame records no zones and is counted (frames_unrecorded):
 * the ring never waits and never overwrites.
 *
 * Requirements on the device the application creates: a queue family with
 * timestampValidBits > 0 (compute or graphics), and, for the calibrated
 * path, the device extension VK_EXT_calibrated_timestamps enabled
 * (strobe_vulkan_calibration_supported says whether the physical device
 * offers it). frame_begin and frame_end record transfer commands: call them
 * outside a render pass.
 *
 * Thread rule: one thread records (frame_begin, zone_begin/end, frame_end:
 * the thread that records the command buffers); strobe_vulkan_collect,
 * strobe_vulkan_query_* are safe from any thread (the sender thread that
 * polls fences, typically). strobe_vulkan_calibrate with the submit-and-wait
 * method submits to the queue: call it where queue submissions are
 * externally synchronised (the submitting thread). Error codes are
 * strobe.h's STROBE_E*.
 */
#ifndef STROBE_VULKAN_H
#define STROBE_VULKAN_H

#include <stdint.h>
#include <vulkan/vulkan.h>

#include "strobe/gpu.h"
#include "strobe/strobe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a calibration pair is taken. */
typedef enum strobe_vulkan_calibration {
  STROBE_VULKAN_CALIBRATION_AUTO = 0,        /* calibrated timestamps when enabled and offered, else submit-and-wait */
  STROBE_VULKAN_CALIBRATION_EXT = 1,         /* vkGetCalibratedTimestampsEXT, bracketed by two host reads */
  STROBE_VULKAN_CALIBRATION_SUBMIT_WAIT = 2  /* a timestamp written by a submitted command buffer, waited for */
} strobe_vulkan_calibration;

#define STROBE_VULKAN_MAX_SLOTS 16    /* query pools in the ring */
#define STROBE_VULKAN_MAX_ZONES 1024  /* zones per frame */

typedef struct strobe_vulkan_desc {
  VkInstance instance;                 /* required: the instance the device was created from */
  VkPhysicalDevice physical_device;    /* required */
  VkDevice device;                     /* required */
  VkQueue queue;                       /* required: the queue the zones' command buffers are submitted to */
  uint32_t queue_family;               /* that queue's family index */
  uint32_t slots;                      /* query pools in the ring: frames whose results may be pending; 2..16, default 4 */
  uint32_t zones_per_frame;            /* zones one frame may record; 1..1024, default 64; more are counted, not recorded */
  uint32_t calibration;                /* strobe_vulkan_calibration; default AUTO */
  int calibrated_timestamps_enabled;   /* 1: the application enabled VK_EXT_calibrated_timestamps on the device */
  const char *domain_name;             /* the clock domain (gpu.h) of the device's timestamps: static label; default "vulkan" */
  const char *queue_name;              /* the queue lane its zones are drawn on: static label; default "queue" */
} strobe_vulkan_desc;

typedef struct strobe_vulkan strobe_vulkan;

/* Creates the ring (desc->slots query pools of 2 * zones_per_frame timestamp
 * queries each) and, for the submit-and-wait method, a command pool, command
 * buffer, fence and query pool of its own. Returns 0 and sets *out; or
 * STROBE_EINVAL (a required handle is missing, a bound is out of range, the
 * queue family has no timestamps, or CALIBRATION_EXT was asked for on a
 * device that did not enable or does not offer it), STROBE_ELABEL (a name
 * breaks the label rule), STROBE_EBUSY (domain_name is declared with
 * another rate), STROBE_ELIMIT (gpu.h's domain or queue bound reached),
 * STROBE_ENOMEM, STROBE_EIO (a Vulkan call failed). On error nothing is left allocated and
 * *out is NULL. The device, queue and instance stay the application's: they
 * must outlive the object. */
STROBE_API int strobe_vulkan_create(const strobe_vulkan_desc *desc, strobe_vulkan **out);
/* Destroys the object's Vulkan objects and frees it. The GPU must have
 * finished every frame recorded with it (vkDeviceWaitIdle or the frames'
 * fences). Accepts NULL. */
STROBE_API void strobe_vulkan_destroy(strobe_vulkan *vk);
/* The desc in force, defaults resolved, calibration AUTO resolved to the method used. */
STROBE_API strobe_vulkan_desc strobe_vulkan_query_desc(const strobe_vulkan *vk);
/* The clock domain the object feeds and the queue lane its spans are on ({0} for NULL). */
STROBE_API strobe_clock_domain strobe_vulkan_query_domain(const strobe_vulkan *vk);
STROBE_API strobe_gpu_queue strobe_vulkan_query_queue(const strobe_vulkan *vk);
/* 1 when the physical device offers VK_EXT_calibrated_timestamps with the
 * device time domain (enable the extension at vkCreateDevice to use it), 0
 * when it does not. Safe from any thread. */
STROBE_API int strobe_vulkan_calibration_supported(VkInstance instance, VkPhysicalDevice physical_device);

/* >>frames and zones */
/* Begins the frame `frame_id` (the application's own frame number: its
 * results attach to it) in the next ring slot and records the reset of the
 * slot's queries into `cmd`. Call before any zone of the frame, outside a
 * render pass. Returns 0; STROBE_EBUSY when every slot still waits for the GPU: the frame
 * is begun but records nothing (counted as frames_unrecorded; its zone
 * calls do nothing; end it with frame_end as usual); STROBE_ESTATE when a
 * frame is already begun (nothing changes); STROBE_EINVAL for NULL. */
STROBE_API int strobe_vulkan_frame_begin(strobe_vulkan *vk, VkCommandBuffer cmd, uint64_t frame_id);

typedef struct strobe_vulkan_zone {
  uint32_t index; /* 1 + the zone's index in its frame; 0: not recorded (no frame, ring full or zones_per_frame reached) */
} strobe_vulkan_zone;

/* Writes the zone's begin timestamp into `cmd` (vkCmdWriteTimestamp, top of
 * pipe). `site` is a static GPU site (STROBE_GPU_SITE), `pass` a static pass
 * label (STROBE_GPU_PASS_*, or NULL): both become the span's when the zone
 * is read back. Never fails: a zone that cannot be recorded (no frame begun,
 * ring full, zones_per_frame reached) is counted and returns index 0, which
 * zone_end ignores. */
STROBE_API strobe_vulkan_zone strobe_vulkan_zone_begin(strobe_vulkan *vk, VkCommandBuffer cmd, strobe_site *site,
                                                       const char *pass);
/* Writes the zone's end timestamp (bottom of pipe). A zone ended twice or
 * not of the current frame is counted as misuse and ignored. */
STROBE_API void strobe_vulkan_zone_end(strobe_vulkan *vk, VkCommandBuffer cmd, strobe_vulkan_zone zone);
/* Ends the frame's recording: zones still open are ended here (counted as
 * zones_unclosed), then the copy of the results and the frame's sequence
 * number are recorded into `cmd` (outside a render pass). The command buffer
 * must then be submitted: the slot is read back once the GPU has executed
 * it. Returns the number of zones recorded (>= 0), STROBE_ESTATE when no
 * frame is begun, STROBE_EINVAL when cmd is NULL (the frame stays begun). */
STROBE_API int strobe_vulkan_frame_end(strobe_vulkan *vk, VkCommandBuffer cmd);

/* >>read back */
/* Reads every slot whose frame the GPU has executed (its results copied to
 * host memory), adds its zones as GPU spans of the frame that issued them
 * (strobe_gpu_span_add, raw device ticks), and frees the slot. Returns the number of frames resolved (>= 0), STROBE_EINVAL for
 * NULL. Safe from any thread; never calls the driver, never waits. */
STROBE_API int strobe_vulkan_collect(strobe_vulkan *vk);

/* One calibration pair: the device's timestamp counter read at a moment
 * between two reads of the host clock (strobe_clock_now, gpu.h). The narrower the bracket, the better the pair. */
typedef struct strobe_vulkan_pair {
  uint64_t device_ticks;  /* device timestamp (multiply by ns_per_device_tick for ns) */
  uint64_t host_before;   /* host ticks (strobe_clock_now) just before the device read */
  uint64_t host_after;    /* collector-clock ticks just after it; host_after - host_before is the pair's uncertainty */
  uint32_t method;        /* strobe_vulkan_calibration: EXT or SUBMIT_WAIT */
} strobe_vulkan_pair;

/* Takes one calibration pair with the method in force (the narrowest of a
 * few tries), feeds it to the object's clock domain
 * (strobe_clock_domain_calibrate) and, when `out` is not NULL, copies it
 * there. The EXT method
 * never waits; SUBMIT_WAIT submits a timestamp write to the queue and waits
 * for its fence (up to one second): call it from the thread that submits to
 * the queue, not per frame. Returns 0; STROBE_EIO when a Vulkan call fails
 * or the wait times out (nothing recorded); STROBE_EINVAL when the domain
 * refused the pair (its device time not after the previous one's: counted
 * in strobe_clock_domain_stats.refused; *out still gets it). */
STROBE_API int strobe_vulkan_calibrate(strobe_vulkan *vk, strobe_vulkan_pair *out);

typedef struct strobe_vulkan_stats {
  double ns_per_device_tick;     /* VkPhysicalDeviceLimits.timestampPeriod */
  uint32_t timestamp_valid_bits; /* of the queue family */
  uint32_t method;               /* strobe_vulkan_calibration in force */
  uint64_t frames_begun;         /* frame_begin calls that claimed a slot */
  uint64_t frames_unrecorded;    /* frame_begin calls that found every slot in flight: no zones recorded */
  uint64_t frames_resolved;      /* frames whose zones were read back */
  uint64_t frames_pending;       /* slots submitted and not yet read back, now */
  uint64_t zones_recorded;       /* zones written and read back */
  uint64_t spans_refused;        /* zones read back that strobe_gpu_span_add refused (a site of an untimed kind) */
  uint64_t zones_dropped;        /* zone_begin beyond zones_per_frame, or in an unrecorded frame */
  uint64_t zones_unclosed;       /* zones frame_end had to end */
  uint64_t zones_misused;        /* zone_end of a zone not open in the current frame */
  uint64_t collect_not_ready;    /* slots collect found not yet available (it never waits) */
  uint64_t calibrations;         /* pairs taken */
  uint64_t last_pair_width_ns;   /* uncertainty of the last pair, ns */
  uint64_t memory_bytes;         /* device memory this object allocated (its results buffer, as vkAllocateMemory
                                    was asked: the size the driver required); an application that reports GPU
                                    memory by kind adds it to its buffers (docs/gpu.md §GPU memory) */
} strobe_vulkan_stats;

/* Counters since create. Safe from any thread. */
STROBE_API strobe_vulkan_stats strobe_vulkan_query_stats(const strobe_vulkan *vk);

#ifdef __cplusplus
}
#endif

#endif
