/*
 * frame_clock.h — the start of the demo's main pass as a signal-driven
 * toolkit runs it (docs/toolkit-frame-loop.md): each phase is a callback, so
 * a stage opened in one callback is closed in the next through a handle, and
 * pointer input is dispatched inside the pass's flush-events phase by a
 * handler that may stop the signal without ever saying dispatch is over.
 */
#ifndef STROBE_DEMO_FRAME_CLOCK_H
#define STROBE_DEMO_FRAME_CLOCK_H

#include "grid.h"
#include "strobe/session.h"

typedef struct frame_clock {
  strobe_collector *collector;
  strobe_window window;
  strobe_stage phase; /* the stage the last callback opened */
} frame_clock;

/* The flush-events signal: opens the flush_events stage of the thread's
 * current pass and delivers a pointer event (if any) inside it. */
void frame_clock_flush_events(frame_clock *fc, grid *g, input_event pointer);
/* The before-paint signal: closes flush_events. Input still being dispatched
 * in it ends here, implicitly. */
void frame_clock_before_paint(frame_clock *fc);

#endif
