/*
 * frames_check.h — what frames.c offers besides the public frame model
 * (include/strobe/frames.h): the check of the invariants a finished index
 * keeps (docs/invariants.md §The frame model).
 *
 * Must never: stand for an error a capture can cause. Any capture, damaged
 * or hostile, gives an index that keeps them; a breach is a bug in frames.c.
 */
#ifndef STROBE_ANALYZE_FRAMES_CHECK_H
#define STROBE_ANALYZE_FRAMES_CHECK_H

#include "strobe/frames.h"

/* Asserts (STROBE_ASSERT, platform/invariant.h) what a finished index
 * promises: each frame's state is a known one, an unfinished frame has no
 * end (end_thread NONE, end_ns 0), only completed, presented and handed-off
 * frames count towards the rates, frames are in begin order and their stages
 * lie inside the stage table; each series' frames by state sum to its frames,
 * of which at most all are counted; the owner tables strobe_frames_owner
 * searches are in order (per thread, segments by open time, each nested in
 * one opened before it; marks' and scopes' frames by begin). An unfinished or
 * failed index has nothing to check. strobe_frames_finish calls it in
 * checking builds; elsewhere it checks nothing. */
void strobe__frames_check(const strobe_frames *f);

#endif
