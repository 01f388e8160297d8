/*
 * vulkan.c — libstrobe_vulkan (include/strobe/vulkan.h): timestamp zones in
 * command buffers, the ring of query pools read back without waiting, and
 * the two calibration methods (docs/gpu.md §Vulkan).
 *
 * Every zone read back becomes a GPU span (gpu.h) of the frame that issued
 * it, on the object's queue lane, in raw device ticks of its clock domain;
 * every calibration pair feeds that domain.
 *
 * Owns: the ring's slots (FREE → RECORDING → PENDING → FREE), each a query
 * pool of 2 queries per zone and a region of one host-visible, coherent
 * buffer; the submit-and-wait calibration's own command buffer, fence and
 * query. A frame's command buffer resets its slot's queries first and, last,
 * copies their results into the slot's region (vkCmdCopyQueryPoolResults)
 * and then writes the frame's sequence number there (vkCmdFillBuffer, after
 * a barrier). The host reads the region only when it holds the sequence
 * number of the frame it expects: plain memory, no driver call, so reading
 * never waits, on any driver (vkGetQueryPoolResults may: lavapipe's waits
 * for the device to go idle), and a previous frame's results left in the
 * region can never be taken for a new frame's.
 * Must never: call vkGetQueryPoolResults on the ring, or block the
 * recording thread on anything but its own short lock.
 *
 * Contents: >>create >>frames >>collect >>calibrate >>stats
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "vulkan_internal.h"

enum { SLOT_FREE, SLOT_RECORDING, SLOT_PENDING };

typedef struct zone_rec {
  strobe_site *site;
  const char *pass;
  int open; /* begin written, end not yet */
} zone_rec;

typedef struct slot {
  VkQueryPool pool;
  uint32_t state;    /* SLOT_*; changed under vk->lock */
  uint32_t zones;    /* zones recorded in this frame */
  uint32_t seq;      /* the frame's sequence number, never 0: the region holds it once the copy is done */
  uint64_t frame_id;
  zone_rec *zone;    /* zones_per_frame entries */
  VkDeviceSize offset; /* of its region in vk->results: the sequence word, then (value, availability) per query */
} slot;

#define RESULTS_AT 16 /* the query results' offset in a region: after the sequence word, 8-byte aligned */

struct strobe_vulkan {
  strobe_vulkan_desc desc; /* defaults resolved; calibration resolved to EXT or SUBMIT_WAIT */
  double ns_per_tick;
  uint64_t valid_mask;
  uint32_t valid_bits;
  PFN_vkGetCalibratedTimestampsEXT get_calibrated;
  strobe_clock_domain domain; /* the device's timestamp clock (gpu.h) */
  strobe_gpu_queue queue;     /* the lane its spans are on */
  pthread_mutex_t lock;       /* slot states and the sink */
  pthread_mutex_t calib_lock; /* the submit-and-wait objects */
  slot slots[STROBE_VULKAN_MAX_SLOTS];
  uint32_t next;              /* recording thread: the slot the next frame claims */
  slot *cur;                  /* recording thread: the frame being recorded, NULL when none or unrecorded */
  int in_frame;               /* recording thread: a frame is begun */
  uint32_t seq;               /* recording thread: the last frame's sequence number */
  VkBuffer results;           /* every slot's region */
  VkDeviceMemory results_mem;
  unsigned char *mapped;      /* results_mem, mapped for the object's lifetime */
  strobe__vulkan_sink sink;
  void *sink_user;
  /* submit-and-wait calibration */
  VkCommandPool cal_pool;
  VkCommandBuffer cal_cmd;
  VkFence cal_fence;
  VkQueryPool cal_query;
  /* counters: relaxed atomics, read by strobe_vulkan_query_stats from any thread */
  uint64_t frames_begun, frames_unrecorded, frames_resolved, frames_pending;
  uint64_t zones_recorded, spans_refused, zones_dropped, zones_unclosed, zones_misused, collect_not_ready;
  uint64_t calibrations, last_pair_width_ns;
  uint64_t memory_bytes; /* set once by create_results */
};

#define COUNT(field, n) __atomic_fetch_add(&(field), (n), __ATOMIC_RELAXED)
#define LOAD(field) __atomic_load_n(&(field), __ATOMIC_RELAXED)

/* >>create */

static int has_device_extension(VkPhysicalDevice pd, const char *name) {
  uint32_t n = 0;
  if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS || n == 0) return 0;
  VkExtensionProperties *ext = calloc(n, sizeof *ext);
  if (!ext) return 0;
  int found = 0;
  if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, ext) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; i++) found = strcmp(ext[i].extensionName, name) == 0;
  free(ext);
  return found;
}

int strobe_vulkan_calibration_supported(VkInstance instance, VkPhysicalDevice pd) {
  if (!instance || !pd || !has_device_extension(pd, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME)) return 0;
  PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT domains =
      (PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT)vkGetInstanceProcAddr(
          instance, "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT");
  if (!domains) return 0;
  VkTimeDomainEXT d[16];
  uint32_t n = 16;
  VkResult r = domains(pd, &n, d);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) return 0;
  for (uint32_t i = 0; i < n; i++)
    if (d[i] == VK_TIME_DOMAIN_DEVICE_EXT) return 1;
  return 0;
}

static int create_calibration_objects(strobe_vulkan *vk) {
  VkDevice dev = vk->desc.device;
  VkCommandPoolCreateInfo cp = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                .queueFamilyIndex = vk->desc.queue_family};
  if (vkCreateCommandPool(dev, &cp, NULL, &vk->cal_pool) != VK_SUCCESS) return STROBE_EIO;
  VkCommandBufferAllocateInfo ca = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .commandPool = vk->cal_pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                    .commandBufferCount = 1};
  if (vkAllocateCommandBuffers(dev, &ca, &vk->cal_cmd) != VK_SUCCESS) return STROBE_EIO;
  VkFenceCreateInfo fc = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if (vkCreateFence(dev, &fc, NULL, &vk->cal_fence) != VK_SUCCESS) return STROBE_EIO;
  VkQueryPoolCreateInfo qp = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                              .queryType = VK_QUERY_TYPE_TIMESTAMP,
                              .queryCount = 1};
  if (vkCreateQueryPool(dev, &qp, NULL, &vk->cal_query) != VK_SUCCESS) return STROBE_EIO;
  return 0;
}

void strobe_vulkan_destroy(strobe_vulkan *vk) {
  if (!vk) return;
  VkDevice dev = vk->desc.device;
  for (uint32_t i = 0; i < STROBE_VULKAN_MAX_SLOTS; i++) {
    if (vk->slots[i].pool) vkDestroyQueryPool(dev, vk->slots[i].pool, NULL);
    free(vk->slots[i].zone);
  }
  if (vk->mapped) vkUnmapMemory(dev, vk->results_mem);
  if (vk->results) vkDestroyBuffer(dev, vk->results, NULL);
  if (vk->results_mem) vkFreeMemory(dev, vk->results_mem, NULL);
  if (vk->cal_query) vkDestroyQueryPool(dev, vk->cal_query, NULL);
  if (vk->cal_fence) vkDestroyFence(dev, vk->cal_fence, NULL);
  if (vk->cal_pool) vkDestroyCommandPool(dev, vk->cal_pool, NULL); /* frees cal_cmd */
  pthread_mutex_destroy(&vk->lock);
  pthread_mutex_destroy(&vk->calib_lock);
  free(vk);
}

/* The results buffer: host-visible and coherent, so the GPU's copies are seen
 * by plain loads without a flush or invalidate call. */
static int create_results(strobe_vulkan *vk, VkDeviceSize size) {
  VkDevice dev = vk->desc.device;
  VkBufferCreateInfo bc = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = size,
                           .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT, .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  if (vkCreateBuffer(dev, &bc, NULL, &vk->results) != VK_SUCCESS) return STROBE_EIO;
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(dev, vk->results, &req);
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(vk->desc.physical_device, &mp);
  const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  uint32_t type = UINT32_MAX;
  for (uint32_t i = 0; i < mp.memoryTypeCount && type == UINT32_MAX; i++)
    if ((req.memoryTypeBits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) type = i;
  if (type == UINT32_MAX) return STROBE_EIO; /* every Vulkan device has one (the spec requires it) */
  VkMemoryAllocateInfo ma = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size,
                             .memoryTypeIndex = type};
  if (vkAllocateMemory(dev, &ma, NULL, &vk->results_mem) != VK_SUCCESS) return STROBE_ENOMEM;
  vk->memory_bytes = req.size;
  if (vkBindBufferMemory(dev, vk->results, vk->results_mem, 0) != VK_SUCCESS) return STROBE_EIO;
  void *p = NULL;
  if (vkMapMemory(dev, vk->results_mem, 0, VK_WHOLE_SIZE, 0, &p) != VK_SUCCESS) return STROBE_EIO;
  vk->mapped = p;
  memset(vk->mapped, 0, (size_t)size); /* sequence 0: no frame */
  return 0;
}

int strobe_vulkan_create(const strobe_vulkan_desc *desc, strobe_vulkan **out) {
  if (!out) return STROBE_EINVAL;
  *out = NULL;
  if (!desc || !desc->instance || !desc->physical_device || !desc->device || !desc->queue) return STROBE_EINVAL;
  strobe_vulkan_desc d = *desc;
  if (!d.domain_name) d.domain_name = "vulkan";
  if (!d.queue_name) d.queue_name = "queue";
  if (!d.slots) d.slots = 4; /* a frame's results are read 1-3 frames later; 4 leaves room for a slow poll */
  if (!d.zones_per_frame) d.zones_per_frame = 64;
  if (d.slots < 2 || d.slots > STROBE_VULKAN_MAX_SLOTS || d.zones_per_frame > STROBE_VULKAN_MAX_ZONES ||
      d.calibration > STROBE_VULKAN_CALIBRATION_SUBMIT_WAIT)
    return STROBE_EINVAL;

  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(desc->physical_device, &props);
  uint32_t nfam = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(desc->physical_device, &nfam, NULL);
  if (d.queue_family >= nfam || props.limits.timestampPeriod <= 0) return STROBE_EINVAL;
  VkQueueFamilyProperties *fam = calloc(nfam, sizeof *fam);
  if (!fam) return STROBE_ENOMEM;
  vkGetPhysicalDeviceQueueFamilyProperties(desc->physical_device, &nfam, fam);
  uint32_t valid_bits = fam[d.queue_family].timestampValidBits;
  free(fam);
  if (valid_bits == 0) return STROBE_EINVAL;

  PFN_vkGetCalibratedTimestampsEXT get_calibrated = NULL;
  int ext_ok = d.calibrated_timestamps_enabled &&
               strobe_vulkan_calibration_supported(desc->instance, desc->physical_device);
  if (ext_ok)
    get_calibrated = (PFN_vkGetCalibratedTimestampsEXT)vkGetDeviceProcAddr(d.device, "vkGetCalibratedTimestampsEXT");
  if (!get_calibrated) ext_ok = 0;
  if (d.calibration == STROBE_VULKAN_CALIBRATION_EXT && !ext_ok) return STROBE_EINVAL;
  if (d.calibration == STROBE_VULKAN_CALIBRATION_AUTO)
    d.calibration = ext_ok ? STROBE_VULKAN_CALIBRATION_EXT : STROBE_VULKAN_CALIBRATION_SUBMIT_WAIT;

  strobe_vulkan *vk = calloc(1, sizeof *vk);
  if (!vk) return STROBE_ENOMEM;
  pthread_mutex_init(&vk->lock, NULL);
  pthread_mutex_init(&vk->calib_lock, NULL);
  vk->desc = d;
  vk->ns_per_tick = props.limits.timestampPeriod;
  vk->valid_bits = valid_bits;
  vk->valid_mask = valid_bits >= 64 ? ~0ull : (1ull << valid_bits) - 1;
  vk->get_calibrated = d.calibration == STROBE_VULKAN_CALIBRATION_EXT ? get_calibrated : NULL;
  /* The device's clock and lane on Strobe's timeline (gpu.h): the rate is the device's nominal one. */
  int rc = strobe_clock_domain_create(
      &(strobe_clock_domain_desc){.name = d.domain_name, .ticks_per_second = 1e9 / (double)props.limits.timestampPeriod},
      &vk->domain);
  if (!rc) rc = strobe_gpu_queue_create(vk->domain, d.queue_name, &vk->queue);
  if (rc) goto fail;
  /* A region: the sequence word, then 2 queries per zone of 2 words each; 64-byte stride. */
  VkDeviceSize region = (RESULTS_AT + (VkDeviceSize)d.zones_per_frame * 32 + 63) & ~(VkDeviceSize)63;
  rc = create_results(vk, region * d.slots);
  if (rc) goto fail;
  for (uint32_t i = 0; i < d.slots; i++) {
    rc = STROBE_ENOMEM;
    vk->slots[i].zone = calloc(d.zones_per_frame, sizeof *vk->slots[i].zone);
    if (!vk->slots[i].zone) goto fail;
    vk->slots[i].offset = region * i;
    VkQueryPoolCreateInfo qp = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                .queryCount = 2 * d.zones_per_frame};
    rc = STROBE_EIO;
    if (vkCreateQueryPool(d.device, &qp, NULL, &vk->slots[i].pool) != VK_SUCCESS) goto fail;
  }
  if (d.calibration == STROBE_VULKAN_CALIBRATION_SUBMIT_WAIT && (rc = create_calibration_objects(vk)) != 0)
    goto fail;
  *out = vk;
  return 0;
fail:
  strobe_vulkan_destroy(vk);
  return rc;
}

strobe_vulkan_desc strobe_vulkan_query_desc(const strobe_vulkan *vk) {
  strobe_vulkan_desc d = {0};
  return vk ? vk->desc : d;
}

strobe_clock_domain strobe_vulkan_query_domain(const strobe_vulkan *vk) {
  strobe_clock_domain d = {0};
  return vk ? vk->domain : d;
}

strobe_gpu_queue strobe_vulkan_query_queue(const strobe_vulkan *vk) {
  strobe_gpu_queue q = {0};
  return vk ? vk->queue : q;
}

void strobe__vulkan_set_sink(strobe_vulkan *vk, strobe__vulkan_sink sink, void *user) {
  pthread_mutex_lock(&vk->lock);
  vk->sink = sink;
  vk->sink_user = user;
  pthread_mutex_unlock(&vk->lock);
}

/* >>frames: the recording thread owns vk->cur between frame_begin and
 * frame_end; collect never touches a RECORDING slot. */

static int read_slot_locked(strobe_vulkan *vk, slot *s);

int strobe_vulkan_frame_begin(strobe_vulkan *vk, VkCommandBuffer cmd, uint64_t frame_id) {
  if (!vk || !cmd) return STROBE_EINVAL;
  if (vk->in_frame) return STROBE_ESTATE;
  vk->in_frame = 1;
  pthread_mutex_lock(&vk->lock);
  slot *s = &vk->slots[vk->next];
  if (s->state == SLOT_PENDING) read_slot_locked(vk, s); /* the oldest frame may have finished since the last collect */
  int rc = 0;
  if (s->state != SLOT_FREE) {
    vk->cur = NULL; /* every slot waits for the GPU: this frame records nothing (never wait, never overwrite) */
    COUNT(vk->frames_unrecorded, 1);
    rc = STROBE_EBUSY;
  } else {
    s->state = SLOT_RECORDING;
    s->frame_id = frame_id;
    s->zones = 0;
    if (++vk->seq == 0) vk->seq = 1; /* 0 is "no frame" */
    s->seq = vk->seq;
    vk->cur = s;
    vk->next = (vk->next + 1) % vk->desc.slots;
    COUNT(vk->frames_begun, 1);
  }
  pthread_mutex_unlock(&vk->lock);
  if (!rc) vkCmdResetQueryPool(cmd, s->pool, 0, 2 * vk->desc.zones_per_frame);
  return rc;
}

strobe_vulkan_zone strobe_vulkan_zone_begin(strobe_vulkan *vk, VkCommandBuffer cmd, strobe_site *site,
                                            const char *pass) {
  strobe_vulkan_zone z = {0};
  if (!vk) return z;
  slot *s = vk->cur;
  if (!s || !cmd || !site || s->zones == vk->desc.zones_per_frame) {
    COUNT(vk->zones_dropped, 1);
    return z;
  }
  uint32_t i = s->zones++;
  s->zone[i] = (zone_rec){site, pass, 1};
  vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, s->pool, 2 * i);
  z.index = i + 1;
  return z;
}

void strobe_vulkan_zone_end(strobe_vulkan *vk, VkCommandBuffer cmd, strobe_vulkan_zone zone) {
  if (!vk || zone.index == 0) return; /* a zone that was not recorded */
  slot *s = vk->cur;
  if (!s || !cmd || zone.index > s->zones || !s->zone[zone.index - 1].open) {
    COUNT(vk->zones_misused, 1);
    return;
  }
  uint32_t i = zone.index - 1;
  vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s->pool, 2 * i + 1);
  s->zone[i].open = 0;
}

int strobe_vulkan_frame_end(strobe_vulkan *vk, VkCommandBuffer cmd) {
  if (!vk || !vk->in_frame) return STROBE_ESTATE;
  if (!cmd) return STROBE_EINVAL;
  slot *s = vk->cur;
  vk->in_frame = 0;
  vk->cur = NULL;
  if (!s) return 0; /* an unrecorded frame */
  for (uint32_t i = 0; i < s->zones; i++)
    if (s->zone[i].open) { /* every query of the slot must be written before the copy */
      vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s->pool, 2 * i + 1);
      s->zone[i].open = 0;
      COUNT(vk->zones_unclosed, 1);
    }
  /* The results (the GPU waits for its own queries: WAIT here is device-side),
   * then, once they are written, the frame's sequence number, then visibility
   * to the host. */
  if (s->zones)
    vkCmdCopyQueryPoolResults(cmd, s->pool, 0, 2 * s->zones, vk->results, s->offset + RESULTS_AT,
                              2 * sizeof(uint64_t),
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
  VkMemoryBarrier copied = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                            .dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT};
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &copied, 0, NULL, 0,
                       NULL);
  vkCmdFillBuffer(cmd, vk->results, s->offset, sizeof(uint32_t), s->seq);
  VkMemoryBarrier to_host = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                             .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, NULL, 0,
                       NULL);
  pthread_mutex_lock(&vk->lock);
  s->state = SLOT_PENDING;
  COUNT(vk->frames_pending, 1);
  pthread_mutex_unlock(&vk->lock);
  return (int)s->zones;
}

/* >>collect */

/* Reads one PENDING slot: 1 when it was resolved (and is FREE again), 0 when
 * the GPU has not yet written the frame's sequence number into its region. */
static int read_slot_locked(strobe_vulkan *vk, slot *s) {
  const unsigned char *region = vk->mapped + s->offset;
  uint32_t seq = __atomic_load_n((const uint32_t *)region, __ATOMIC_ACQUIRE);
  if (seq != s->seq) { /* not yet executed (the region may still hold an earlier frame's results) */
    COUNT(vk->collect_not_ready, 1);
    return 0;
  }
  const uint64_t *q = (const uint64_t *)(region + RESULTS_AT); /* (value, availability) per query */
  for (uint32_t i = 0; i < s->zones; i++) {
    strobe__vulkan_zone_result z = {s->frame_id, s->zone[i].site, q[4 * i] & vk->valid_mask,
                                    q[4 * i + 2] & vk->valid_mask, i};
    if (!q[4 * i + 1] || !q[4 * i + 3]) { /* not expected: the copy waited for every query */
      COUNT(vk->zones_dropped, 1);
      continue;
    }
    strobe_gpu_span span = {vk->queue, s->zone[i].site, s->zone[i].pass, s->frame_id, z.device_begin, z.device_end};
    if (strobe_gpu_span_add(&span)) COUNT(vk->spans_refused, 1);
    if (vk->sink) vk->sink(&z, vk->sink_user);
  }
  COUNT(vk->zones_recorded, s->zones);
  COUNT(vk->frames_resolved, 1);
  __atomic_fetch_sub(&vk->frames_pending, 1, __ATOMIC_RELAXED);
  s->state = SLOT_FREE;
  s->zones = 0;
  return 1;
}

int strobe_vulkan_collect(strobe_vulkan *vk) {
  if (!vk) return STROBE_EINVAL;
  int resolved = 0;
  pthread_mutex_lock(&vk->lock);
  /* Oldest first: the slot the next frame will claim is the oldest one. */
  for (uint32_t k = 0; k < vk->desc.slots; k++) {
    slot *s = &vk->slots[(vk->next + k) % vk->desc.slots];
    if (s->state == SLOT_PENDING) resolved += read_slot_locked(vk, s);
  }
  pthread_mutex_unlock(&vk->lock);
  return resolved;
}

/* >>calibrate */

static int pair_ext(strobe_vulkan *vk, strobe_vulkan_pair *p) {
  VkCalibratedTimestampInfoEXT info = {.sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT,
                                       .timeDomain = VK_TIME_DOMAIN_DEVICE_EXT};
  uint64_t ts = 0, deviation = 0;
  p->host_before = strobe_clock_now();
  VkResult r = vk->get_calibrated(vk->desc.device, 1, &info, &ts, &deviation);
  p->host_after = strobe_clock_now();
  p->device_ticks = ts & vk->valid_mask;
  p->method = STROBE_VULKAN_CALIBRATION_EXT;
  return r == VK_SUCCESS ? 0 : STROBE_EIO;
}

static int pair_submit_wait(strobe_vulkan *vk, strobe_vulkan_pair *p) {
  VkDevice dev = vk->desc.device;
  if (vkResetCommandBuffer(vk->cal_cmd, 0) != VK_SUCCESS || vkResetFences(dev, 1, &vk->cal_fence) != VK_SUCCESS)
    return STROBE_EIO;
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  if (vkBeginCommandBuffer(vk->cal_cmd, &bi) != VK_SUCCESS) return STROBE_EIO;
  vkCmdResetQueryPool(vk->cal_cmd, vk->cal_query, 0, 1);
  vkCmdWriteTimestamp(vk->cal_cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, vk->cal_query, 0);
  if (vkEndCommandBuffer(vk->cal_cmd) != VK_SUCCESS) return STROBE_EIO;
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &vk->cal_cmd};
  /* The timestamp is written after the submit starts and before the fence is
   * seen: the two host reads bracket it (a wide bracket, hence a weak pair). */
  p->host_before = strobe_clock_now();
  if (vkQueueSubmit(vk->desc.queue, 1, &si, vk->cal_fence) != VK_SUCCESS) return STROBE_EIO;
  VkResult w = vkWaitForFences(dev, 1, &vk->cal_fence, VK_TRUE, 1000000000ull);
  p->host_after = strobe_clock_now();
  if (w != VK_SUCCESS) return STROBE_EIO;
  uint64_t ts = 0;
  if (vkGetQueryPoolResults(dev, vk->cal_query, 0, 1, sizeof ts, &ts, sizeof ts,
                            VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) != VK_SUCCESS)
    return STROBE_EIO;
  p->device_ticks = ts & vk->valid_mask;
  p->method = STROBE_VULKAN_CALIBRATION_SUBMIT_WAIT;
  return 0;
}

int strobe_vulkan_calibrate(strobe_vulkan *vk, strobe_vulkan_pair *out) {
  if (!vk) return STROBE_EINVAL;
  int ext = vk->desc.calibration == STROBE_VULKAN_CALIBRATION_EXT;
  /* The narrowest bracket of a few tries: a preempted read widens one, not all. */
  int tries = ext ? 8 : 3;
  strobe_vulkan_pair best = {0}, p;
  int have = 0;
  pthread_mutex_lock(&vk->calib_lock);
  for (int t = 0; t < tries; t++) {
    int rc = ext ? pair_ext(vk, &p) : pair_submit_wait(vk, &p);
    if (rc) {
      pthread_mutex_unlock(&vk->calib_lock);
      return rc;
    }
    if (!have || p.host_after - p.host_before < best.host_after - best.host_before) best = p;
    have = 1;
  }
  pthread_mutex_unlock(&vk->calib_lock);
  __atomic_store_n(&vk->last_pair_width_ns, (uint64_t)strobe_clock_ticks_to_ns(best.host_after - best.host_before),
                   __ATOMIC_RELAXED);
  COUNT(vk->calibrations, 1);
  if (out) *out = best;
  return strobe_clock_domain_calibrate(vk->domain, best.device_ticks, best.host_before, best.host_after);
}

/* >>stats */

strobe_vulkan_stats strobe_vulkan_query_stats(const strobe_vulkan *vk) {
  strobe_vulkan_stats st = {0};
  if (!vk) return st;
  st.ns_per_device_tick = vk->ns_per_tick;
  st.timestamp_valid_bits = vk->valid_bits;
  st.method = vk->desc.calibration;
  st.frames_begun = LOAD(vk->frames_begun);
  st.frames_unrecorded = LOAD(vk->frames_unrecorded);
  st.frames_resolved = LOAD(vk->frames_resolved);
  st.frames_pending = LOAD(vk->frames_pending);
  st.zones_recorded = LOAD(vk->zones_recorded);
  st.spans_refused = LOAD(vk->spans_refused);
  st.zones_dropped = LOAD(vk->zones_dropped);
  st.zones_unclosed = LOAD(vk->zones_unclosed);
  st.zones_misused = LOAD(vk->zones_misused);
  st.collect_not_ready = LOAD(vk->collect_not_ready);
  st.calibrations = LOAD(vk->calibrations);
  st.last_pair_width_ns = LOAD(vk->last_pair_width_ns);
  st.memory_bytes = vk->memory_bytes; /* written before create returned the object */
  return st;
}
