/*
 * calltrace_absent.c — call tracing where it is not ported (Windows, chosen
 * by CMakeLists.txt in place of calltrace.c, which names functions from ELF
 * symbol tables through libdw; docs/platforms.md §Windows): the library
 * defines no -finstrument-functions hooks there, so a program compiled with
 * them does not link, and every entry point returns STROBE_EUNSUPPORTED.
 *
 * Must never: claim to trace, or count a call.
 */
#include "probe/probe.h"

#include <string.h>

#include "strobe/strobe.h"
#include "strobe/trace.h"

int strobe_trace_setup(const strobe_trace_desc *desc) {
  (void)desc;
  return STROBE_EUNSUPPORTED;
}

strobe_trace_desc strobe_trace_query_desc(void) {
  strobe_trace_desc none;
  memset(&none, 0, sizeof none);
  return none;
}

int strobe_trace_calls_begin(void) { return STROBE_EUNSUPPORTED; }

int strobe_trace_calls_end(void) { return STROBE_EUNSUPPORTED; }

strobe_trace_stats strobe_trace_query_stats(void) {
  strobe_trace_stats none;
  memset(&none, 0, sizeof none);
  return none;
}

strobe_trace_stats strobe__trace_stats_since(const strobe_trace_stats *base) {
  (void)base;
  return strobe_trace_query_stats();
}

int strobe__trace_grows(void) { return 0; }

/* Only call tracing makes call sites, so there is never one to name. */
void strobe__call_site_name(strobe_site *site) { (void)site; }
