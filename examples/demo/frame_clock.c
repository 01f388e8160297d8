/*
 * frame_clock.c — the flush-events and before-paint callbacks of the demo's
 * frame (see frame_clock.h). Owns nothing but the open phase's handle; never
 * ends the pointer's input operation itself: the toolkit has no hook for it.
 */
#include "frame_clock.h"

static strobe_site s_flush_events = STROBE_STAGE_SITE("flush_events", NULL);

/* A pointer handler that stops the signal: its input operation is never
 * ended here, and ends with the flush_events phase instead. */
static void on_pointer(frame_clock *fc, grid *g, input_event e) {
  STROBE_SCOPE_CAT("pointer_event", "input");
  strobe_op_begin_in_phase(fc->collector, fc->window, STROBE_OP_INPUT, NULL);
  STROBE_STAGE("pointer_dispatch", NULL);
  grid_apply(g, e);
}

void frame_clock_flush_events(frame_clock *fc, grid *g, input_event pointer) {
  fc->phase = strobe_stage_begin(&s_flush_events);
  if (pointer.kind != INPUT_NONE) on_pointer(fc, g, pointer);
}

void frame_clock_before_paint(frame_clock *fc) { strobe_stage_end(&fc->phase); }
