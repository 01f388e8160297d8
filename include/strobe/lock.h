/*
 * lock.h — lock contention (docs/locks.md): who waited for which lock, for
 * how long, and who held it meanwhile. A lock is a static label ("assets",
 * "glyph_cache"); each thread records three instants about it: it began to
 * wait, it holds it, it let it go. Captures keep them as LOCK_WAIT,
 * LOCK_ACQUIRED and LOCK_RELEASED records (strobe/capture.h); `strobe
 * report` turns them into waits and holds per lock, with the thread (and
 * the scope it was in) that held the lock while another waited.
 *
 * Two ways in. strobe_mutex wraps a pthread_mutex_t: its lock tries first,
 * and records a wait only when the try failed, so an uncontended lock and
 * unlock cost two events (an acquisition and a release). For a lock of
 * your own (a spin lock, a reader-writer lock's write side, a lock inside a
 * library you call), the STROBE_LOCK_* annotations record the same three
 * instants around it.
 *
 * Content rule: lock names are static labels, like scope names; a run-time
 * name (strobe_mutex_init's) is interned and flagged like any run-time site
 * name (strobe_site_intern) and stays in local captures.
 *
 * Cost: an event is one 16-byte store inline, like a scope's END, once its
 * site has an id (strobe_mutex_init gives it one; an annotation's first
 * event goes the slow way to get it); an uncontended lock and unlock add
 * at most a scope's two events to pthread's pair (bench/bench_instructions.c,
 * BENCH lock_pair_instructions_recording). When nothing records
 * (strobe__is_active() false: no capture, session or flight recorder) each
 * annotation is one load and the mutex is the plain pthread mutex plus that
 * load.
 *
 * Thread rule: any thread. A release recorded on another thread than the
 * acquisition is recorded as that thread's release (the holder is the last
 * thread that acquired it).
 */
#ifndef STROBE_LOCK_H
#define STROBE_LOCK_H

#include <errno.h>
#include <pthread.h>

#include "strobe/strobe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A mutex whose waits and holds are recorded under its name. Initialise it
 * with strobe_mutex_init, or statically with STROBE_MUTEX_INITIALIZER. */
typedef struct strobe_mutex {
  pthread_mutex_t mutex;
  strobe_site *site; /* the lock's site, kind STROBE_SITE_LOCK */
} strobe_mutex;

/* A static mutex named `site`, a site declared with STROBE_LOCK_SITE at
 * file scope: static strobe_mutex m = STROBE_MUTEX_INITIALIZER(&my_lock). */
#define STROBE_MUTEX_INITIALIZER(site) {PTHREAD_MUTEX_INITIALIZER, (site)}

/* Declares `var`, the site of a lock named `name` (a string literal), in
 * static storage, at file scope or in a function: for
 * STROBE_MUTEX_INITIALIZER and the annotations. */
#define STROBE_LOCK_SITE(var, name)                                                                                  \
  static strobe_site var = {(name), (const char *)0, (const char *)0, __FILE__, (const char *)0, (uint32_t)__LINE__, \
                            (uint32_t)STROBE_SITE_LOCK, 0, 0, 0}

/* Initialises `m` as a default pthread mutex named `name` (a label:
 * strobe_site_intern's rules; static text is best). Returns 0;
 * STROBE_EINVAL for a NULL `m` or an invalid name (nothing initialised;
 * counted as intern_invalid misuse); STROBE_ENOMEM when pthread_mutex_init
 * failed. A valid name the registry could not take (STROBE_ELIMIT) records
 * under the shared fallback site, counted as misuse (strobe_site_intern). */
STROBE_API int strobe_mutex_init(strobe_mutex *m, const char *name);
/* pthread_mutex_destroy's result (0, or its errno); STROBE_EINVAL for NULL. */
STROBE_API int strobe_mutex_destroy(strobe_mutex *m);

/* One lock event of `kind` (STROBE__EV_LOCK_*) on `site`, now: inline once
 * the site has an id, the slow path (which registers it) before. */
static inline void strobe__lock_event(strobe_site *site, uint32_t kind) {
  strobe__thread *t = strobe__tls;
  strobe__event *e = t->cur;
  uint32_t id = __atomic_load_n(&site->id, __ATOMIC_RELAXED);
  if (STROBE__UNLIKELY(id == 0 || (uint64_t)(uintptr_t)e > STROBE__LIMIT(t, num_limit))) {
    strobe__site_event(site, kind);
    return;
  }
  strobe__stamp(&e->ts);
  strobe__put_word(e, (uint64_t)kind | (uint64_t)id << 32);
  strobe__advance(t, e);
}

/* Locks `m`: a wait is recorded only when the lock was taken by another
 * thread (its try failed), then the acquisition. Returns 0, or
 * pthread_mutex_lock's errno (nothing recorded after a failed lock but the
 * wait); STROBE_EINVAL for NULL. */
static inline int strobe_mutex_lock(strobe_mutex *m) {
  if (!m) return STROBE_EINVAL;
  if (!strobe__is_active()) return pthread_mutex_lock(&m->mutex);
  int rc = pthread_mutex_trylock(&m->mutex);
  if (rc == EBUSY) {
    strobe__lock_event(m->site, STROBE__EV_LOCK_WAIT);
    rc = pthread_mutex_lock(&m->mutex);
  }
  if (rc == 0) strobe__lock_event(m->site, STROBE__EV_LOCK_ACQUIRED);
  return rc;
}
/* Takes `m` if free: 0 and an acquisition recorded; EBUSY (the errno) and
 * nothing recorded when it is held; STROBE_EINVAL for NULL. */
static inline int strobe_mutex_trylock(strobe_mutex *m) {
  if (!m) return STROBE_EINVAL;
  int rc = pthread_mutex_trylock(&m->mutex);
  if (rc == 0 && strobe__is_active()) strobe__lock_event(m->site, STROBE__EV_LOCK_ACQUIRED);
  return rc;
}
/* Records the release, then unlocks (so that no waiter's acquisition can
 * precede it in time). pthread_mutex_unlock's result; STROBE_EINVAL for NULL. */
static inline int strobe_mutex_unlock(strobe_mutex *m) {
  if (!m) return STROBE_EINVAL;
  if (strobe__is_active()) strobe__lock_event(m->site, STROBE__EV_LOCK_RELEASED);
  return pthread_mutex_unlock(&m->mutex);
}

/* Annotations for a lock Strobe does not wrap: call WAIT just before a
 * blocking acquisition (skip it when a try succeeded), ACQUIRED once it is
 * held, RELEASED just before letting it go. `site` is a STROBE_LOCK_SITE.
 * No errors: a full ring drops and counts the event like any other. */
#define STROBE_LOCK_WAIT(site) STROBE__LOCK_EVENT(site, STROBE__EV_LOCK_WAIT)
#define STROBE_LOCK_ACQUIRED(site) STROBE__LOCK_EVENT(site, STROBE__EV_LOCK_ACQUIRED)
#define STROBE_LOCK_RELEASED(site) STROBE__LOCK_EVENT(site, STROBE__EV_LOCK_RELEASED)

#if defined(STROBE_DISABLE)
#define STROBE__LOCK_EVENT(site, kind) ((void)sizeof(site))
#else
#define STROBE__LOCK_EVENT(site, kind)                   \
  do {                                                   \
    if (strobe__is_active()) strobe__lock_event((site), (kind)); \
  } while (0)
#endif

#ifdef __cplusplus
}
#endif

#endif
