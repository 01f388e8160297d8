/*
 * vulkan_consumer.c — a program outside the Strobe tree that times GPU work
 * with libstrobe_vulkan as a renderer would, using only what an installed
 * Strobe provides: built by tests/install/run.sh through
 * `pkg-config strobe_vulkan` and through find_package(strobe COMPONENTS
 * vulkan) (strobe::strobe_vulkan). It opens the first Vulkan device with a
 * timestamped compute queue (lavapipe on the test machines), records one
 * frame with one zone, submits it, waits, collects the zone and takes a
 * calibration pair. Exit 0 only when the zone was read back.
 */
#include <stdio.h>
#include <string.h>

#include <strobe/vulkan.h>

static strobe_site zone_site = STROBE_GPU_SITE("consumer_zone");

int main(void) {
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_1};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
  VkInstance inst;
  if (vkCreateInstance(&ici, NULL, &inst) != VK_SUCCESS) {
    fprintf(stderr, "vulkan_consumer: no Vulkan driver\n");
    return 1;
  }
  VkPhysicalDevice pds[8], pd = VK_NULL_HANDLE;
  uint32_t n = 8, family = 0;
  if (vkEnumeratePhysicalDevices(inst, &n, pds) < 0) n = 0;
  for (uint32_t i = 0; i < n && !pd; i++) {
    VkQueueFamilyProperties fam[16];
    uint32_t nf = 16;
    vkGetPhysicalDeviceQueueFamilyProperties(pds[i], &nf, fam);
    for (uint32_t f = 0; f < nf && !pd; f++)
      if ((fam[f].queueFlags & VK_QUEUE_COMPUTE_BIT) && fam[f].timestampValidBits > 0) {
        pd = pds[i];
        family = f;
      }
  }
  if (!pd) {
    fprintf(stderr, "vulkan_consumer: no device with a timestamped compute queue\n");
    return 1;
  }
  float prio = 1.0f;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = family,
                                 .queueCount = 1, .pQueuePriorities = &prio};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &qci};
  VkDevice dev;
  if (vkCreateDevice(pd, &dci, NULL, &dev) != VK_SUCCESS) return 1;
  VkQueue queue;
  vkGetDeviceQueue(dev, family, 0, &queue);
  VkCommandPoolCreateInfo cp = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = family};
  VkCommandPool pool;
  VkCommandBuffer cmd;
  VkFence fence;
  VkFenceCreateInfo fc = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if (vkCreateCommandPool(dev, &cp, NULL, &pool) != VK_SUCCESS || vkCreateFence(dev, &fc, NULL, &fence) != VK_SUCCESS)
    return 1;
  VkCommandBufferAllocateInfo ca = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
  if (vkAllocateCommandBuffers(dev, &ca, &cmd) != VK_SUCCESS) return 1;

  strobe_vulkan *vk = NULL;
  strobe_vulkan_desc desc = {.instance = inst, .physical_device = pd, .device = dev, .queue = queue,
                             .queue_family = family, .domain_name = "consumer_gpu"};
  int rc = strobe_vulkan_create(&desc, &vk);
  if (rc) {
    fprintf(stderr, "vulkan_consumer: strobe_vulkan_create: %s\n", strobe_strerror(rc));
    return 1;
  }
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  if (vkBeginCommandBuffer(cmd, &bi) != VK_SUCCESS) return 1;
  strobe_vulkan_frame_begin(vk, cmd, 1);
  strobe_vulkan_zone z = strobe_vulkan_zone_begin(vk, cmd, &zone_site, STROBE_GPU_PASS_MAIN);
  strobe_vulkan_zone_end(vk, cmd, z);
  strobe_vulkan_frame_end(vk, cmd);
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cmd};
  if (vkEndCommandBuffer(cmd) != VK_SUCCESS || vkQueueSubmit(queue, 1, &si, fence) != VK_SUCCESS ||
      vkWaitForFences(dev, 1, &fence, VK_TRUE, 10000000000ull) != VK_SUCCESS)
    return 1;
  int frames = strobe_vulkan_collect(vk);
  strobe_vulkan_pair pair;
  int cal = strobe_vulkan_calibrate(vk, &pair);
  strobe_vulkan_stats st = strobe_vulkan_query_stats(vk);
  printf("strobe_vulkan %s: %d frame(s) collected, %llu zone(s), calibration %s\n", strobe_version(), frames,
         (unsigned long long)st.zones_recorded, cal ? strobe_strerror(cal) : "ok");
  strobe_vulkan_destroy(vk);
  vkDestroyFence(dev, fence, NULL);
  vkDestroyCommandPool(dev, pool, NULL);
  vkDestroyDevice(dev, NULL);
  vkDestroyInstance(inst, NULL);
  return frames == 1 && st.zones_recorded == 1 && cal == 0 ? 0 : 1;
}
