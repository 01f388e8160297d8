/*
 * app_scope.c — synchronous application scopes (docs/sessions.md §Synchronous
 * application scopes): opt-in scopes an
 * application opens on a registered window, with a lane declared at the call
 * site, explicit children (directly or through a parent token usable from
 * another thread), and refusal that yields an inert guard instead of ever
 * stopping the application's work.
 *
 * Must never: intern anything but a validated static label, allocate per
 * scope when no session will keep it, or take the completion time after the
 * lock (a worker's wait for the lock is not its scope's time).
 */
#include <stdlib.h>
#include <string.h>

#include "probe/probe.h"
#include "session/session_internal.h"

void strobe__count_app_refusal(strobe_collector *c, int reason) {
  STROBE_ASSERT(strobe__mutex_held(&c->lock));
  for (int k = 0; k < STROBE_MAX_SESSIONS; k++) {
    strobe__session *s = &c->sessions[k];
    if (!s->active) continue;
    switch (reason) {
      case STROBE_ELABEL: s->app.refused_label++; break;
      case STROBE_EWINDOW: s->app.refused_window++; break;
      case STROBE_ECLOSED: s->app.refused_closed++; break;
      case STROBE_ELIMIT: s->app.refused_slots++; break;
      default: s->app.refused_parent++; break;
    }
  }
}

/* The live slot of an application-scope handle and id, or NULL. Lock held. */
static strobe__live_app *live_app(strobe_collector *c, uint32_t handle, uint64_t id) {
  uint32_t slot = strobe__handle_slot(handle);
  if (!c || handle == 0 || slot >= STROBE_MAX_LIVE_APP_SCOPES) return NULL;
  STROBE_ASSERT(strobe__mutex_held(&c->lock));
  strobe__live_app *a = &c->apps[slot];
  return a->used && a->gen == strobe__handle_gen(handle) && a->id == id ? a : NULL;
}

/* Opens a scope on window slot `ws` (or the parent's window). Lock held. */
static strobe_app_scope open_scope(strobe_collector *c, int ws, const strobe__live_app *parent, const char *label,
                                   strobe_lane lane, uint64_t now) {
  STROBE_ASSERT(strobe__mutex_held(&c->lock));
  strobe_app_scope out = {c, 0, 0, 0};
  int slot = -1;
  for (int i = 0; i < STROBE_MAX_LIVE_APP_SCOPES && slot < 0; i++)
    if (!c->apps[i].used) slot = i;
  if (slot < 0) {
    out.status = STROBE_ELIMIT;
    strobe__count_app_refusal(c, STROBE_ELIMIT);
    return out;
  }
  strobe__live_app *a = &c->apps[slot];
  a->gen++;
  a->used = 1;
  a->lane = (uint8_t)lane;
  strcpy(a->label, label); /* valid_label: at most STROBE_MAX_LABEL bytes */
  a->window_slot = parent ? parent->window_slot : (uint32_t)ws;
  a->devtools = (c->windows[a->window_slot].flags & STROBE_WINDOW_DEVTOOLS) != 0;
  a->window = strobe__name_ref(parent ? parent->window : c->windows[ws].name);
  a->id = c->next_app_id++;
  a->parent_id = parent ? parent->id : 0;
  a->depth = parent ? parent->depth + 1 : 1;
  a->start = now;
  for (int k = 0; c->nactive && k < STROBE_MAX_SESSIONS; k++) /* none active: nothing to count */
    if (strobe__session_sees_app(&c->sessions[k], a->devtools)) c->sessions[k].app.started++;
  out.slot = strobe__handle((uint32_t)slot, a->gen);
  out.id = a->id;
  return out;
}

static strobe_app_scope refuse(strobe_collector *c, int reason, int counted) {
  if (reason == STROBE_ELABEL) strobe__label_refused(c);
  if (c && counted) {
    strobe__mutex_lock(&c->lock);
    strobe__count_app_refusal(c, reason);
    strobe__mutex_unlock(&c->lock);
  }
  return (strobe_app_scope){c, 0, 0, reason};
}

static int lane_ok(strobe_lane lane) { return lane == STROBE_LANE_UI || lane == STROBE_LANE_WORKER; }

strobe_app_scope strobe_app_scope_begin(strobe_collector *c, const char *window, const char *label,
                                        strobe_lane lane) {
  if (!STROBE__PROFILING) return (strobe_app_scope){c, 0, 0, STROBE_EFEATURE_DISABLED};
  if (!c) return refuse(NULL, STROBE_EINVAL, 0);
  if (!strobe__label_valid(label) || !lane_ok(lane)) return refuse(c, STROBE_ELABEL, 1);
  uint64_t now = strobe__now();
  size_t n = window ? strnlen(window, STROBE_MAX_WINDOW_ID + 1) : 0;
  strobe__mutex_lock(&c->lock);
  strobe_app_scope out = {c, 0, 0, 0};
  int ws = -1;
  for (int i = 0; window && i < STROBE_MAX_WINDOWS && !c->closed && ws < 0; i++) {
    strobe__window_slot *w = &c->windows[i];
    if (w->open && w->name->len == n && !memcmp(w->name->text, window, n)) ws = i;
  }
  if (c->closed || ws < 0) {
    out.status = c->closed ? STROBE_ECLOSED : STROBE_EWINDOW;
    strobe__count_app_refusal(c, out.status);
  } else {
    out = open_scope(c, ws, NULL, label, lane, now);
  }
  strobe__mutex_unlock(&c->lock);
  return out;
}

strobe_app_scope strobe_app_scope_begin_child_of(strobe_collector *c, strobe_app_parent parent, const char *label,
                                                 strobe_lane lane) {
  if (!STROBE__PROFILING) return (strobe_app_scope){c, 0, 0, STROBE_EFEATURE_DISABLED};
  if (!c) return refuse(NULL, STROBE_EINVAL, 0);
  if (!strobe__label_valid(label) || !lane_ok(lane)) return refuse(c, STROBE_ELABEL, 1);
  uint64_t now = strobe__now();
  strobe__mutex_lock(&c->lock);
  strobe_app_scope out = {c, 0, 0, 0};
  const strobe__live_app *p = parent.collector == c ? live_app(c, parent.slot, parent.id) : NULL;
  if (c->closed) {
    out.status = STROBE_ECLOSED;
    strobe__count_app_refusal(c, out.status);
  } else if (!p) {
    out.status = STROBE_EPARENT; /* ended, abandoned, or another collector's */
    strobe__count_app_refusal(c, out.status);
  } else {
    out = open_scope(c, -1, p, label, lane, now);
  }
  strobe__mutex_unlock(&c->lock);
  return out;
}

strobe_app_scope strobe_app_scope_begin_child(const strobe_app_scope *parent, const char *label, strobe_lane lane) {
  if (!parent || !parent->collector) return (strobe_app_scope){NULL, 0, 0, STROBE_EPARENT};
  return strobe_app_scope_begin_child_of(parent->collector, strobe_app_scope_query_parent(parent), label, lane);
}

strobe_app_parent strobe_app_scope_query_parent(const strobe_app_scope *s) {
  if (!s || !s->slot) return (strobe_app_parent){s ? s->collector : NULL, 0, 0};
  return (strobe_app_parent){s->collector, s->slot, s->id};
}

int strobe_app_scope_query_status(const strobe_app_scope *s) {
  if (!s) return STROBE_EINVAL;
  if (!s->slot) return s->status;
  strobe_collector *c = s->collector;
  strobe__mutex_lock(&c->lock);
  int live = live_app(c, s->slot, s->id) != NULL;
  int closed = c->closed;
  strobe__mutex_unlock(&c->lock);
  if (live) return 0;
  return closed ? STROBE_ECLOSED : STROBE_EWINDOW; /* abandoned under it */
}

void strobe__app_record_unref(strobe__app_record *r) {
  if (r && __atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) == 0) {
    strobe__name_unref(r->window);
    free(r);
  }
}

void strobe_app_scope_end(strobe_app_scope *s) {
  if (!s || !s->slot) return;
  uint64_t now = strobe__now(); /* completion time before the lock */
  strobe_collector *c = s->collector;
  uint32_t handle = s->slot;
  uint64_t id = s->id;
  s->slot = 0; /* idempotent, and late drops cannot resurrect it */
  s->status = STROBE_ESTATE;
  /* Allocated only when some session is active; freed below if none admits it. */
  strobe__app_record *r = __atomic_load_n(&c->nactive, __ATOMIC_RELAXED) ? malloc(sizeof *r) : NULL;
  strobe__mutex_lock(&c->lock);
  strobe__live_app *a = live_app(c, handle, id);
  if (a) {
    uint32_t admitted = 0;
    for (int k = 0; c->nactive && k < STROBE_MAX_SESSIONS; k++) {
      strobe__session *ss = &c->sessions[k];
      /* Finished (now, taken before the lock) before this session started: not its business. */
      if (!ss->active || now < ss->start) continue;
      if (!strobe__session_sees_app(ss, a->devtools)) {
        ss->app.devtools_excluded++;
        continue;
      }
      if (a->start < ss->start) {
        ss->app.boundary_excluded++;
        continue;
      }
      ss->app.completed++;
      if (!r) { /* out of memory: admitted but not kept */
        ss->app.dropped++;
        continue;
      }
      if (ss->app_count == ss->max_app) { /* drop the earliest published */
        strobe__app_record_unref(ss->app_ring[ss->app_head]);
        ss->app_head = (ss->app_head + 1) % ss->max_app;
        ss->app_count--;
        ss->app.dropped++;
      }
      ss->app_ring[(ss->app_head + ss->app_count++) % ss->max_app] = r;
      admitted++;
    }
    if (admitted) {
      *r = (strobe__app_record){admitted, a->lane, a->depth, "", strobe__name_ref(a->window),
                                a->id, a->parent_id, a->start, now};
      memcpy(r->label, a->label, sizeof r->label);
      r = NULL;
    }
    strobe__name_unref(a->window);
    a->window = NULL;
    a->used = 0;
  }
  strobe__mutex_unlock(&c->lock);
  free(r);
}
