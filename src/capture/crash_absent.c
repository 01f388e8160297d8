/*
 * crash_absent.c — the crash handler where it is not ported (Windows, chosen
 * by CMakeLists.txt in place of crash.c, whose handler is POSIX signals;
 * docs/platforms.md §Windows): strobe_init refuses strobe_desc.crash_handler
 * there with STROBE_EUNSUPPORTED (strobe__host_crash_signals), so no file is
 * ever watched; a sink's claim on its own file always succeeds, since no
 * handler competes for it.
 *
 * Must never: watch a file, or write a CRASH block.
 */
#include "capture/crash.h"

void strobe__crash_watch(int fd, int *sink_state) { (void)fd, (void)sink_state; }

void strobe__crash_unwatch(const int *sink_state) { (void)sink_state; }

int strobe__crash_sink_enter(int *sink_state) {
  (void)sink_state;
  return 1;
}

void strobe__crash_sink_leave(int *sink_state) { (void)sink_state; }
