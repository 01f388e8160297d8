/*
 * gpu.c — the demo's GPU path (see gpu.h). Owns one Vulkan device, two
 * compute pipelines (shaders/filter.comp and shaders/composite.comp,
 * compiled to SPIR-V by glslc at build time: shaders.h), GPU_FRAMES sets
 * of per-frame buffers, command buffers and fences, and the
 * libstrobe_vulkan object whose zones time each pass.
 * Must never: wait on a fence on the sender thread (it polls), make the
 * render thread wait for the GPU (a frame whose slot is still busy goes
 * without GPU passes, counted), or reuse a frame slot before the sender released it (the fence is the sender's to
 * observe; resetting it first would hide the completion).
 *
 * Contents: >>open >>render >>poll
 */
#include "gpu.h"

#include <cairo.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#include "shaders.h"


/* GPU memory by kind (docs/recording.md §Counters and gauges by kind): what
 * each buffer's vkAllocateMemory asked for. The demo keeps its images in
 * storage buffers: the device-side ones the passes read and write (src,
 * blurred) count as textures, the host-visible staging and readback ones
 * (upload, out) as buffers. It renders offscreen and has no swapchain, so
 * it reports no swapchain_estimate rather than an invented one. */
enum { MEM_BUFFERS, MEM_TEXTURES, MEM_KINDS };

typedef struct buffer {
  VkBuffer buf;
  VkDeviceMemory mem;
  void *map;          /* host-visible buffers: mapped for their lifetime */
  int kind;           /* MEM_* */
  VkDeviceSize bytes; /* allocated */
} buffer;

typedef struct frame_slot {
  VkCommandBuffer cmd;
  VkFence fence;
  VkDescriptorSet set;
  buffer upload, src, blurred, out; /* upload and out host-visible; src and blurred device-local where there is such memory */
  int busy;                         /* under gpu.lock: submitted and not yet released by the sender */
  uint64_t frame_id;                /* the frame in it (gpu.h frame ids: > 0) */
  uint64_t seen;                    /* sender thread: host ticks when its poll saw the fence */
} frame_slot;

struct gpu {
  VkInstance instance;
  VkPhysicalDevice physical;
  VkDevice device;
  VkQueue queue;
  uint32_t family;
  char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
  int width, height;
  VkDeviceSize bytes;
  VkCommandPool pool;
  VkDescriptorPool dpool;
  VkDescriptorSetLayout layout;
  VkPipelineLayout pipeline_layout;
  VkPipeline filter, composite;
  frame_slot slot[GPU_FRAMES];
  strobe_vulkan *vk;
  VkDeviceSize memory[MEM_KINDS]; /* render thread (open, close): allocated now, by kind */
  pthread_mutex_t lock;
  pthread_cond_t released;
  uint64_t frames, skipped, polls;
};

static strobe_site upload_site = STROBE_GPU_SITE("gpu_upload");
static strobe_site filter_site = STROBE_GPU_SITE("gpu_filter");
static strobe_site composite_site = STROBE_GPU_SITE("gpu_composite");

/* >>open */

static int fail(char *why, size_t len, const char *what, VkResult r) {
  snprintf(why, len, "%s failed (VkResult %d)", what, (int)r);
  return -1;
}

static int make_buffer(gpu *g, VkDeviceSize size, VkBufferUsageFlags usage, int host, int kind, buffer *b) {
  VkBufferCreateInfo bc = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = size, .usage = usage,
                           .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  if (vkCreateBuffer(g->device, &bc, NULL, &b->buf) != VK_SUCCESS) return -1;
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(g->device, b->buf, &req);
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(g->physical, &mp);
  VkMemoryPropertyFlags want = host ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                                    : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  uint32_t type = UINT32_MAX;
  for (int pass = 0; pass < 2 && type == UINT32_MAX; pass++) /* device-local is a preference, host-visible a need */
    for (uint32_t i = 0; i < mp.memoryTypeCount && type == UINT32_MAX; i++)
      if ((req.memoryTypeBits & (1u << i)) && (pass || (mp.memoryTypes[i].propertyFlags & want) == want)) type = i;
  if (type == UINT32_MAX) return -1;
  VkMemoryAllocateInfo ma = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size,
                             .memoryTypeIndex = type};
  if (vkAllocateMemory(g->device, &ma, NULL, &b->mem) != VK_SUCCESS) return -1;
  b->kind = kind;
  b->bytes = req.size;
  g->memory[kind] += req.size;
  if (vkBindBufferMemory(g->device, b->buf, b->mem, 0) != VK_SUCCESS) return -1;
  if (host && vkMapMemory(g->device, b->mem, 0, VK_WHOLE_SIZE, 0, &b->map) != VK_SUCCESS) return -1;
  return 0;
}

static void free_buffer(gpu *g, buffer *b) {
  if (b->map) vkUnmapMemory(g->device, b->mem);
  if (b->buf) vkDestroyBuffer(g->device, b->buf, NULL);
  if (b->mem) {
    vkFreeMemory(g->device, b->mem, NULL);
    g->memory[b->kind] -= b->bytes;
  }
}

static int make_pipeline(gpu *g, const uint32_t *code, size_t size, VkPipeline *out) {
  VkShaderModuleCreateInfo sm = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = size, .pCode = code};
  VkShaderModule mod;
  if (vkCreateShaderModule(g->device, &sm, NULL, &mod) != VK_SUCCESS) return -1;
  VkComputePipelineCreateInfo pc = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = mod, .pName = "main"},
      .layout = g->pipeline_layout};
  VkResult r = vkCreateComputePipelines(g->device, VK_NULL_HANDLE, 1, &pc, NULL, out);
  vkDestroyShaderModule(g->device, mod, NULL);
  return r == VK_SUCCESS ? 0 : -1;
}

static int open_device(gpu *g, char *why, size_t len) {
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "strobe-demo",
                           .apiVersion = VK_API_VERSION_1_1};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
  VkResult r = vkCreateInstance(&ici, NULL, &g->instance);
  if (r != VK_SUCCESS) return fail(why, len, "vkCreateInstance (no Vulkan driver?)", r);
  VkPhysicalDevice pds[8];
  uint32_t n = 8;
  r = vkEnumeratePhysicalDevices(g->instance, &n, pds);
  if (r < 0) return fail(why, len, "vkEnumeratePhysicalDevices", r);
  for (uint32_t i = 0; i < n && !g->physical; i++) {
    VkQueueFamilyProperties fam[16];
    uint32_t nf = 16;
    vkGetPhysicalDeviceQueueFamilyProperties(pds[i], &nf, fam);
    for (uint32_t f = 0; f < nf; f++)
      if ((fam[f].queueFlags & VK_QUEUE_COMPUTE_BIT) && fam[f].timestampValidBits > 0) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(pds[i], &p);
        g->physical = pds[i];
        g->family = f;
        memcpy(g->name, p.deviceName, sizeof g->name);
        break;
      }
  }
  if (!g->physical) {
    snprintf(why, len, "no Vulkan device with a timestamped compute queue (%u devices)", n);
    return -1;
  }
  return 0;
}

void gpu_close(gpu *g) {
  if (!g) return;
  if (g->device) {
    vkDeviceWaitIdle(g->device);
    strobe_vulkan_destroy(g->vk);
    for (int i = 0; i < GPU_FRAMES; i++) {
      frame_slot *s = &g->slot[i];
      if (s->fence) vkDestroyFence(g->device, s->fence, NULL);
      free_buffer(g, &s->upload);
      free_buffer(g, &s->src);
      free_buffer(g, &s->blurred);
      free_buffer(g, &s->out);
    }
    if (g->filter) vkDestroyPipeline(g->device, g->filter, NULL);
    if (g->composite) vkDestroyPipeline(g->device, g->composite, NULL);
    if (g->pipeline_layout) vkDestroyPipelineLayout(g->device, g->pipeline_layout, NULL);
    if (g->layout) vkDestroyDescriptorSetLayout(g->device, g->layout, NULL);
    if (g->dpool) vkDestroyDescriptorPool(g->device, g->dpool, NULL);
    if (g->pool) vkDestroyCommandPool(g->device, g->pool, NULL);
    vkDestroyDevice(g->device, NULL);
  }
  if (g->instance) vkDestroyInstance(g->instance, NULL);
  pthread_mutex_destroy(&g->lock);
  pthread_cond_destroy(&g->released);
  free(g);
}

/* The command pool, descriptor pool and layout, and the filter and composite compute pipelines. Returns 0,
 * or -1 with why (len bytes) said (gpu_close undoes what was made). */
static int create_pipelines(gpu *g, char *why, size_t len) {
  VkCommandPoolCreateInfo cp = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, .queueFamilyIndex = g->family};
  VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 3 * GPU_FRAMES};
  VkDescriptorPoolCreateInfo dp = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, .maxSets = GPU_FRAMES,
                                   .poolSizeCount = 1, .pPoolSizes = &ps};
  VkDescriptorSetLayoutBinding bind[3];
  for (uint32_t i = 0; i < 3; i++)
    bind[i] = (VkDescriptorSetLayoutBinding){i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL};
  VkDescriptorSetLayoutCreateInfo dl = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                        .bindingCount = 3, .pBindings = bind};
  if (vkCreateCommandPool(g->device, &cp, NULL, &g->pool) != VK_SUCCESS ||
      vkCreateDescriptorPool(g->device, &dp, NULL, &g->dpool) != VK_SUCCESS ||
      vkCreateDescriptorSetLayout(g->device, &dl, NULL, &g->layout) != VK_SUCCESS) {
    snprintf(why, len, "creating the command pool and descriptor layout failed");
    return -1;
  }
  VkPushConstantRange push = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 2 * sizeof(uint32_t)};
  VkPipelineLayoutCreateInfo pl = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1,
                                   .pSetLayouts = &g->layout, .pushConstantRangeCount = 1,
                                   .pPushConstantRanges = &push};
  if (vkCreatePipelineLayout(g->device, &pl, NULL, &g->pipeline_layout) != VK_SUCCESS ||
      make_pipeline(g, demo_filter_spv, demo_filter_spv_size, &g->filter) ||
      make_pipeline(g, demo_composite_spv, demo_composite_spv_size, &g->composite)) {
    snprintf(why, len, "creating the compute pipelines failed");
    return -1;
  }
  return 0;
}

/* One frame slot: its command buffer, fence, descriptor set and four buffers (upload, source, blurred,
 * output), the set bound to the last three. Returns 0, or -1 with why said. */
static int create_frame_slot(gpu *g, frame_slot *s, char *why, size_t len) {
  VkCommandBufferAllocateInfo ca = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = g->pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
  VkFenceCreateInfo fc = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkDescriptorSetAllocateInfo da = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                    .descriptorPool = g->dpool, .descriptorSetCount = 1, .pSetLayouts = &g->layout};
  const VkBufferUsageFlags storage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  if (vkAllocateCommandBuffers(g->device, &ca, &s->cmd) != VK_SUCCESS ||
      vkCreateFence(g->device, &fc, NULL, &s->fence) != VK_SUCCESS ||
      vkAllocateDescriptorSets(g->device, &da, &s->set) != VK_SUCCESS ||
      make_buffer(g, g->bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, 1, MEM_BUFFERS, &s->upload) ||
      make_buffer(g, g->bytes, storage | VK_BUFFER_USAGE_TRANSFER_DST_BIT, 0, MEM_TEXTURES, &s->src) ||
      make_buffer(g, g->bytes, storage, 0, MEM_TEXTURES, &s->blurred) ||
      make_buffer(g, g->bytes, storage, 1, MEM_BUFFERS, &s->out)) {
    snprintf(why, len, "allocating the frame buffers (%d x %.1f MiB) failed", 4, (double)g->bytes / 1048576.0);
    return -1;
  }
  VkDescriptorBufferInfo bi[3] = {{s->src.buf, 0, VK_WHOLE_SIZE},
                                  {s->blurred.buf, 0, VK_WHOLE_SIZE},
                                  {s->out.buf, 0, VK_WHOLE_SIZE}};
  VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = s->set, .dstBinding = 0,
                            .descriptorCount = 3, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                            .pBufferInfo = bi};
  vkUpdateDescriptorSets(g->device, 1, &w, 0, NULL);
  return 0;
}

int gpu_open(gpu **out, int width, int height, uint32_t calibration, char *why, size_t len) {
  *out = NULL;
  gpu *g = calloc(1, sizeof *g);
  if (!g) return fail(why, len, "calloc", VK_ERROR_OUT_OF_HOST_MEMORY);
  pthread_mutex_init(&g->lock, NULL);
  pthread_cond_init(&g->released, NULL);
  g->width = width;
  g->height = height;
  g->bytes = (VkDeviceSize)width * (VkDeviceSize)height * 4;
  if (open_device(g, why, len)) goto bad;
  int calibrated = strobe_vulkan_calibration_supported(g->instance, g->physical);
  float prio = 1.0f;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = g->family,
                                 .queueCount = 1, .pQueuePriorities = &prio};
  const char *ext[] = {VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &qci, .enabledExtensionCount = calibrated ? 1u : 0u,
                            .ppEnabledExtensionNames = ext};
  VkResult r = vkCreateDevice(g->physical, &dci, NULL, &g->device);
  if (r != VK_SUCCESS) {
    fail(why, len, "vkCreateDevice", r);
    goto bad;
  }
  vkGetDeviceQueue(g->device, g->family, 0, &g->queue);

  if (create_pipelines(g, why, len)) goto bad;
  for (int i = 0; i < GPU_FRAMES; i++)
    if (create_frame_slot(g, &g->slot[i], why, len)) goto bad;
  strobe_vulkan_desc vd = {.instance = g->instance, .physical_device = g->physical, .device = g->device,
                           .queue = g->queue, .queue_family = g->family, .slots = GPU_FRAMES + 1,
                           .zones_per_frame = 8, .calibration = calibration,
                           .calibrated_timestamps_enabled = calibrated, .domain_name = "demo_gpu",
                           .queue_name = "compute"};
  int rc = strobe_vulkan_create(&vd, &g->vk);
  if (rc) {
    snprintf(why, len, "strobe_vulkan_create: %s", strobe_strerror(rc));
    goto bad;
  }
  *out = g;
  return 0;
bad:
  gpu_close(g);
  return -1;
}

const char *gpu_device_name(const gpu *g) { return g->name; }

const char *gpu_calibration_name(const gpu *g) {
  return strobe_vulkan_query_desc(g->vk).calibration == STROBE_VULKAN_CALIBRATION_EXT ? "VK_EXT_calibrated_timestamps"
                                                                                         : "submit-and-wait";
}

/* >>render */

static void barrier(VkCommandBuffer cmd, VkPipelineStageFlags src, VkAccessFlags src_access, VkAccessFlags dst_access) {
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = src_access,
                        .dstAccessMask = dst_access};
  vkCmdPipelineBarrier(cmd, src, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
}

int gpu_render(gpu *g, const unsigned char *argb, int stride, uint64_t frame) {
  frame_slot *s = &g->slot[frame % GPU_FRAMES];
  if (frame == 0) return -1; /* gpu.h frame ids start at 1 */
  pthread_mutex_lock(&g->lock);
  int busy = s->busy; /* the sender has not seen this slot's fence yet: the GPU is behind */
  if (busy) g->skipped++;
  pthread_mutex_unlock(&g->lock);
  if (busy) return -1; /* this frame goes without GPU passes: the render thread never waits for the GPU */
  {
    STROBE_SCOPE("gpu_upload_copy"); /* the CPU half of the upload: into host-visible memory */
    for (int y = 0; y < g->height; y++)
      memcpy((unsigned char *)s->upload.map + (size_t)y * (size_t)g->width * 4, argb + (size_t)y * (size_t)stride,
             (size_t)g->width * 4);
  }
  STROBE_SCOPE("gpu_record_submit");
  VkCommandBuffer cmd = s->cmd;
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  if (vkResetFences(g->device, 1, &s->fence) != VK_SUCCESS || vkBeginCommandBuffer(cmd, &bi) != VK_SUCCESS) return -1;
  strobe_vulkan_frame_begin(g->vk, cmd, frame); /* EBUSY: every ring slot in flight, this frame's zones are counted lost */

  strobe_vulkan_zone z = strobe_vulkan_zone_begin(g->vk, cmd, &upload_site, STROBE_GPU_PASS_MAIN);
  VkBufferCopy copy = {0, 0, g->bytes};
  vkCmdCopyBuffer(cmd, s->upload.buf, s->src.buf, 1, &copy);
  strobe_vulkan_zone_end(g->vk, cmd, z);
  barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_SHADER_READ_BIT);

  const uint32_t size[2] = {(uint32_t)g->width, (uint32_t)g->height};
  const uint32_t gx = (size[0] + 15) / 16, gy = (size[1] + 15) / 16; /* 16x16 invocations a group (the shaders) */
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, g->pipeline_layout, 0, 1, &s->set, 0, NULL);
  vkCmdPushConstants(cmd, g->pipeline_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof size, size);
  z = strobe_vulkan_zone_begin(g->vk, cmd, &filter_site, STROBE_GPU_PASS_FILTER_GROUP);
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, g->filter);
  vkCmdDispatch(cmd, gx, gy, 1);
  strobe_vulkan_zone_end(g->vk, cmd, z);
  barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_ACCESS_SHADER_READ_BIT);

  z = strobe_vulkan_zone_begin(g->vk, cmd, &composite_site, STROBE_GPU_PASS_MAIN);
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, g->composite);
  vkCmdDispatch(cmd, gx, gy, 1);
  strobe_vulkan_zone_end(g->vk, cmd, z);
  VkMemoryBarrier to_host = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                             .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, NULL,
                       0, NULL);
  strobe_vulkan_frame_end(g->vk, cmd);
  if (vkEndCommandBuffer(cmd) != VK_SUCCESS) return -1;
  strobe_gpu_frame_mark(frame, STROBE_GPU_CPU_END, 0); /* the first of the frame's four instants (docs/gpu.md) */
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cmd};
  strobe_gpu_frame_mark(frame, STROBE_GPU_SUBMIT, 0); /* before the call: the GPU may start before it returns */
  if (vkQueueSubmit(g->queue, 1, &si, s->fence) != VK_SUCCESS) return -1;
  pthread_mutex_lock(&g->lock);
  s->frame_id = frame;
  s->busy = 1;
  g->frames++;
  pthread_mutex_unlock(&g->lock);
  return (int)(frame % GPU_FRAMES);
}

int gpu_calibrate(gpu *g) { return strobe_vulkan_calibrate(g->vk, NULL); }

gpu_memory gpu_query_memory(const gpu *g) {
  return (gpu_memory){.buffers = (double)g->memory[MEM_BUFFERS] + (double)strobe_vulkan_query_stats(g->vk).memory_bytes,
                      .textures = (double)g->memory[MEM_TEXTURES]};
}

/* >>poll */

int gpu_poll(gpu *g, int slot) {
  __atomic_fetch_add(&g->polls, 1, __ATOMIC_RELAXED);
  if (vkGetFenceStatus(g->device, g->slot[slot].fence) != VK_SUCCESS) return 0;
  g->slot[slot].seen = strobe_clock_now(); /* the fence-seen instant: when this poll noticed */
  return 1;
}

void gpu_release(gpu *g, int slot, const char *png_path) {
  frame_slot *s = &g->slot[slot];
  strobe_vulkan_collect(g->vk); /* the frame's spans first: the fence-seen mark closes the frame */
  strobe_gpu_frame_mark(s->frame_id, STROBE_GPU_FENCE_SEEN, s->seen);
  if (png_path) { /* the composite, as the GPU left it */
    cairo_surface_t *img = cairo_image_surface_create_for_data(s->out.map, CAIRO_FORMAT_ARGB32, g->width, g->height,
                                                               g->width * 4);
    cairo_surface_write_to_png(img, png_path);
    cairo_surface_destroy(img);
  }
  pthread_mutex_lock(&g->lock);
  s->busy = 0;
  pthread_cond_broadcast(&g->released);
  pthread_mutex_unlock(&g->lock);
}

gpu_stats gpu_query_stats(gpu *g) {
  gpu_stats st;
  pthread_mutex_lock(&g->lock);
  st.frames = g->frames;
  st.skipped = g->skipped;
  pthread_mutex_unlock(&g->lock);
  st.polls = __atomic_load_n(&g->polls, __ATOMIC_RELAXED);
  st.vk = strobe_vulkan_query_stats(g->vk);
  return st;
}
