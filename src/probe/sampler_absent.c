/*
 * sampler_absent.c — the sampler where it is not ported (Windows, chosen by
 * CMakeLists.txt in place of sampler.c, which needs Linux's perf_event_open;
 * docs/platforms.md §Windows): starting it fails with STROBE_EUNSUPPORTED
 * and its status says why; it never runs, so it records, reads and names
 * nothing.
 *
 * Must never: claim to have started, or report a sample.
 */
#include "probe/probe.h"

#include <string.h>

#include "strobe/sample.h"
#include "strobe/strobe.h"

static const char g_reason[] = "no sampler on this platform: it needs Linux's perf_event_open (docs/platforms.md)";

int strobe_sampler_start(const strobe_sampler_desc *desc) {
  (void)desc;
  return STROBE_EUNSUPPORTED;
}

int strobe_sampler_stop(void) { return STROBE_ESTATE; }

strobe_sampler_status strobe_sampler_query_status(void) {
  strobe_sampler_status st;
  memset(&st, 0, sizeof st);
  st.error = STROBE_EUNSUPPORTED;
  st.paranoid = -100;
  st.reason = g_reason;
  return st;
}

strobe_sampler_stats strobe_sampler_query_stats(void) {
  strobe_sampler_stats none;
  memset(&none, 0, sizeof none);
  return none;
}

strobe_sampler_stats strobe__sampler_stats_since(const strobe_sampler_stats *base) {
  (void)base;
  return strobe_sampler_query_stats();
}

int strobe__sampler_running(void) { return 0; }

void strobe__sampler_quiet_thread(void) {}

void strobe__sampler_poll(int deliver, int final, strobe__sample_sink sink, void *ctx) {
  (void)deliver, (void)final, (void)sink, (void)ctx;
}

uint32_t strobe__sample_function_count(void) { return 0; }

int strobe__sample_function(uint32_t id, const char **name, const char **module) {
  (void)id, (void)name, (void)module;
  return -1;
}
