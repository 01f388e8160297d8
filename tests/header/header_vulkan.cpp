/* header_vulkan.cpp — include/strobe/vulkan.h alone and first compiles as
 * C++17 and links with libstrobe_vulkan (its declarations are extern "C"):
 * its contract for a NULL object holds. */
#include "strobe/vulkan.h"

int main() {
  strobe_vulkan *vk = reinterpret_cast<strobe_vulkan *>(1);
  bool bad = strobe_vulkan_create(nullptr, &vk) != STROBE_EINVAL || vk != nullptr;
  strobe_vulkan_stats st = strobe_vulkan_query_stats(nullptr);
  bad = bad || st.frames_begun != 0 || st.memory_bytes != 0;
  return bad ? 1 : 0;
}
