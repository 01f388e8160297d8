/*
 * vk_device.h — the Vulkan tests' device: an instance and a logical device
 * on the first physical device with a compute queue that has timestamps
 * (Mesa's lavapipe on the test machines: scripts/deps.sh installs
 * mesa-vulkan-drivers), VK_EXT_calibrated_timestamps
 * enabled when asked for and offered, and a command pool. A test that finds
 * no device fails: it is never skipped (docs/conventions.md §Tests).
 * Must never: be used by the library itself.
 */
#ifndef STROBE_TESTS_VK_DEVICE_H
#define STROBE_TESTS_VK_DEVICE_H

#include <string.h>
#include <vulkan/vulkan.h>

#include "strobe/vulkan.h"
#include "support/harness.h"

typedef struct vk_device {
  VkInstance instance;
  VkPhysicalDevice physical;
  VkDevice device;
  VkQueue queue;
  uint32_t family;
  VkCommandPool pool;
  int calibrated; /* VK_EXT_calibrated_timestamps enabled */
  char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
} vk_device;

/* 0 and *d set up, or -1 (and a message on stderr) when no usable device. */
static inline int vk_device_open(vk_device *d, int want_calibrated) {
  memset(d, 0, sizeof *d);
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "strobe-test",
                           .apiVersion = VK_API_VERSION_1_2};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
  if (vkCreateInstance(&ici, NULL, &d->instance) != VK_SUCCESS) {
    fprintf(stderr, "vk_device: vkCreateInstance failed: no Vulkan driver (install mesa-vulkan-drivers)\n");
    return -1;
  }
  VkPhysicalDevice pds[8];
  uint32_t n = 8;
  if (vkEnumeratePhysicalDevices(d->instance, &n, pds) < 0) n = 0;
  for (uint32_t i = 0; i < n && !d->physical; i++) {
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(pds[i], &p);
    if (p.apiVersion < VK_API_VERSION_1_2) continue;
    VkQueueFamilyProperties fam[16];
    uint32_t nf = 16;
    vkGetPhysicalDeviceQueueFamilyProperties(pds[i], &nf, fam);
    for (uint32_t f = 0; f < nf; f++)
      if ((fam[f].queueFlags & VK_QUEUE_COMPUTE_BIT) && fam[f].timestampValidBits > 0) {
        d->physical = pds[i];
        d->family = f;
        memcpy(d->name, p.deviceName, sizeof d->name);
        break;
      }
  }
  if (!d->physical) {
    fprintf(stderr, "vk_device: no Vulkan 1.2 device with a timestamped compute queue (install mesa-vulkan-drivers)\n");
    return -1;
  }
  d->calibrated = want_calibrated && strobe_vulkan_calibration_supported(d->instance, d->physical);
  float prio = 1.0f;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = d->family,
                                 .queueCount = 1, .pQueuePriorities = &prio};
  const char *ext[] = {VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &qci, .enabledExtensionCount = d->calibrated ? 1u : 0u,
                            .ppEnabledExtensionNames = ext};
  if (vkCreateDevice(d->physical, &dci, NULL, &d->device) != VK_SUCCESS) {
    fprintf(stderr, "vk_device: vkCreateDevice failed on %s\n", d->name);
    return -1;
  }
  vkGetDeviceQueue(d->device, d->family, 0, &d->queue);
  VkCommandPoolCreateInfo cp = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, .queueFamilyIndex = d->family};
  if (vkCreateCommandPool(d->device, &cp, NULL, &d->pool) != VK_SUCCESS) return -1;
  return 0;
}

static inline void vk_device_close(vk_device *d) {
  if (d->device) {
    vkDeviceWaitIdle(d->device);
    if (d->pool) vkDestroyCommandPool(d->device, d->pool, NULL);
    vkDestroyDevice(d->device, NULL);
  }
  if (d->instance) vkDestroyInstance(d->instance, NULL);
  memset(d, 0, sizeof *d);
}

static inline strobe_vulkan_desc vk_device_desc(const vk_device *d) {
  return (strobe_vulkan_desc){.instance = d->instance, .physical_device = d->physical, .device = d->device,
                              .queue = d->queue, .queue_family = d->family,
                              .calibrated_timestamps_enabled = d->calibrated};
}

#endif
