/* header_vulkan.c — include/strobe/vulkan.h alone and first compiles as C11
 * and links with libstrobe_vulkan: its contract for a NULL object holds
 * (stats all zero, create refuses a NULL desc and leaves *out NULL). */
#include "strobe/vulkan.h"

int main(void) {
  strobe_vulkan *vk = (strobe_vulkan *)1;
  int bad = strobe_vulkan_create(NULL, &vk) != STROBE_EINVAL || vk != NULL;
  strobe_vulkan_stats st = strobe_vulkan_query_stats(NULL);
  bad |= st.frames_begun != 0 || st.memory_bytes != 0;
  return bad;
}
