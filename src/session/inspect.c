/*
 * inspect.c — read-only listings of a collector's sessions and windows for
 * diagnostic consumers (libstrobe_server's /api/info and /api/sessions).
 *
 * Owns nothing: it copies bounded tables under the collector's short lock.
 * Must never: change a session or window, hand out pointers into the
 * collector, or do more than a bounded copy while holding the lock.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "platform/clock.h"
#include "session/session_internal.h"

int strobe_collector_query_sessions(strobe_collector *c, strobe_session_info *out, int max) {
  if (!c || (!out && max > 0) || max < 0) return STROBE_EINVAL;
  int n = 0;
  double ns_per_tick = strobe__clock()->ns_per_tick; /* outside the lock: may calibrate once */
  strobe__mutex_lock(&c->lock);
  /* Oldest first: session numbers are handed out in start order. */
  uint64_t after = 0;
  for (;;) {
    const strobe__session *next = NULL;
    for (int k = 0; k < STROBE_MAX_SESSIONS; k++) {
      const strobe__session *s = &c->sessions[k];
      if (s->active && s->number > after && (!next || s->number < next->number)) next = s;
    }
    if (!next) break;
    after = next->number;
    if (n < max) {
      strobe_session_info *i = &out[n];
      memset(i, 0, sizeof *i);
      snprintf(i->id, sizeof i->id, "profile_%" PRIu64, next->number);
      i->owner = next->owner;
      i->max_samples = next->max_samples;
      i->include_devtools = next->include_devtools;
      i->kinds = next->kinds;
      i->started_ms = next->created >= c->epoch ? (double)(next->created - c->epoch) * ns_per_tick / 1e6 : 0.0;
      i->resets = next->resets;
      i->completed = next->completed;
      i->retained = next->count;
      i->dropped = next->dropped;
      i->boundary_excluded = next->boundary_excluded;
    }
    n++;
  }
  strobe__mutex_unlock(&c->lock);
  return n;
}

int strobe_collector_query_windows(strobe_collector *c, strobe_window_info *out, int max) {
  if (!c || (!out && max > 0) || max < 0) return STROBE_EINVAL;
  int n = 0;
  strobe__mutex_lock(&c->lock);
  for (int k = 0; k < STROBE_MAX_WINDOWS; k++) {
    const strobe__window_slot *ws = &c->windows[k];
    if (!ws->used || !ws->name) continue;
    if (n < max) {
      strobe_window_info *i = &out[n];
      size_t len = ws->name->len <= STROBE_MAX_WINDOW_ID ? ws->name->len : STROBE_MAX_WINDOW_ID;
      memcpy(i->id, ws->name->text, len);
      i->id[len] = 0;
      i->flags = ws->flags;
      i->open = ws->open;
      i->passes = __atomic_load_n(&ws->frames_key, __ATOMIC_RELAXED) & STROBE__FK_PASSES;
    }
    n++;
  }
  strobe__mutex_unlock(&c->lock);
  return n;
}

uint64_t strobe_collector_query_untracked_windows(strobe_collector *c) {
  if (!c) return 0;
  strobe__mutex_lock(&c->lock);
  uint64_t n = c->untracked_windows;
  strobe__mutex_unlock(&c->lock);
  return n;
}
