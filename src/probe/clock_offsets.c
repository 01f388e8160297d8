/*
 * clock_offsets.c — this host's clock as other processes see it, and the
 * clock-offset samples taken against other hosts (strobe.h >>hosts,
 * docs/sessions.md §Across hosts): a process-wide table of the newest
 * STROBE_CLOCK_OFFSETS_MAX samples, which every capture this process
 * finishes copies into its CLOCK_OFFSETS block (capture_writer.c).
 *
 * Owns the table and its lock. Must never: keep a sample it would not write
 * (every field is checked on the way in), block a recording thread (nothing
 * here is on the hot path), or lose a replaced sample without counting it.
 */
#include <pthread.h>
#include <string.h>

#include "platform/clock.h"
#include "platform/host.h"
#include "probe/probe.h"
#include "strobe/strobe.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static strobe_clock_offset g_samples[STROBE_CLOCK_OFFSETS_MAX];
static uint32_t g_next, g_count;
static uint64_t g_replaced;

int strobe_query_host_clock(char boot_id[33], uint64_t *mono_ns) {
  char hex[33];
  int rc = strobe__host_boot_hex(hex);
  if (boot_id) memcpy(boot_id, hex, sizeof hex);
  if (mono_ns) *mono_ns = (uint64_t)((int64_t)strobe__mono_ns() + strobe__host_mono_shift_ns());
  return rc;
}

static int is_hex32(const char *s) {
  for (int i = 0; i < 32; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
  return s[32] == 0;
}

int strobe_clock_offset_add(const strobe_clock_offset *s) {
  if (!s || !memchr(s->peer, 0, sizeof s->peer) || !memchr(s->peer_boot_id, 0, sizeof s->peer_boot_id) ||
      !is_hex32(s->peer_boot_id) || !s->rounds || !s->error_ns || s->error_ns > s->rtt_ns)
    return STROBE_EINVAL;
  uint64_t now;
  (void)strobe_query_host_clock(NULL, &now);
  if (s->at_mono_ns > now) return STROBE_EINVAL;
  pthread_mutex_lock(&g_lock);
  if (g_count == STROBE_CLOCK_OFFSETS_MAX) g_replaced++;
  else g_count++;
  g_samples[g_next] = *s;
  g_next = (g_next + 1) % STROBE_CLOCK_OFFSETS_MAX;
  pthread_mutex_unlock(&g_lock);
  return 0;
}

uint32_t strobe__clock_offsets_copy(strobe_clock_offset *out, uint64_t *replaced) {
  pthread_mutex_lock(&g_lock);
  uint32_t first = (g_next + STROBE_CLOCK_OFFSETS_MAX - g_count) % STROBE_CLOCK_OFFSETS_MAX;
  for (uint32_t i = 0; i < g_count; i++) out[i] = g_samples[(first + i) % STROBE_CLOCK_OFFSETS_MAX];
  uint32_t n = g_count;
  *replaced = g_replaced;
  pthread_mutex_unlock(&g_lock);
  return n;
}
