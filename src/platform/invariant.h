/*
 * invariant.h — internal invariants that are checked, not just stated
 * (docs/invariants.md): STROBE_ASSERT, and the mutex every file of
 * libstrobe and libstrobe_server locks, which in checking builds knows
 * which thread holds it, so "lock held" and "drain thread only" become
 * assertions beside the comments that state them.
 *
 * Checking builds define STROBE_DEBUG_ASSERTS: CMake does for Debug and for
 * every STROBE_SANITIZE build (so the ASan+UBSan and TSan runs check them
 * all). Elsewhere STROBE_ASSERT compiles to no code (its condition is not
 * evaluated) and strobe__mutex is a pthread mutex with inline calls.
 *
 * Must never: be used for what a caller can get wrong through the public
 * API (that is a documented error code, never an abort), or change what a
 * release build does.
 */
#ifndef STROBE_PLATFORM_INVARIANT_H
#define STROBE_PLATFORM_INVARIANT_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#ifdef STROBE_DEBUG_ASSERTS
#include <stdio.h>
#include <stdlib.h>

#define STROBE__ASSERTIONS 1

/* Prints which invariant broke and where, then aborts (a core, a stack in
 * the sanitizers' reports). */
__attribute__((noreturn, cold, unused)) static void strobe__assert_fail(const char *cond, const char *file, int line,
                                                                      const char *func) {
  fprintf(stderr, "strobe: invariant violated: %s (%s:%d, %s)\n", cond, file, line, func);
  fflush(stderr);
  abort();
}
#define STROBE_ASSERT(cond) ((cond) ? (void)0 : strobe__assert_fail(#cond, __FILE__, __LINE__, __func__))

#else

#define STROBE__ASSERTIONS 0
/* Not evaluated, but still compiled: a condition that stops compiling, or
 * names a variable that is gone, breaks the release build too. */
#define STROBE_ASSERT(cond) ((void)sizeof(!(cond)))

#endif

/* >>mutex: a pthread mutex that, in checking builds, records its holder
 * (set after locking, cleared before unlocking) so code can assert that it
 * holds a lock, and that it does not take one it already holds (which
 * would deadlock silently). The owner is read and written with relaxed
 * atomics: a thread only ever compares it with itself, and it always sees
 * its own last store. */
typedef struct strobe__mutex {
  pthread_mutex_t m;
#ifdef STROBE_DEBUG_ASSERTS
  uintptr_t owner; /* atomic: the holding thread's pthread_self(), 0 when free */
#endif
} strobe__mutex;

#ifdef STROBE_DEBUG_ASSERTS
#define STROBE__MUTEX_INIT {PTHREAD_MUTEX_INITIALIZER, 0}
_Static_assert(sizeof(pthread_t) <= sizeof(uintptr_t), "pthread_t must fit a word to name a mutex's holder");
static inline uintptr_t strobe__thread_self(void) { return (uintptr_t)pthread_self(); }
/* 1 when the calling thread holds m. For assertions only. */
static inline int strobe__mutex_held(const strobe__mutex *m) {
  return __atomic_load_n(&m->owner, __ATOMIC_RELAXED) == strobe__thread_self();
}
static inline void strobe__mutex_set_owner(strobe__mutex *m, uintptr_t owner) {
  __atomic_store_n(&m->owner, owner, __ATOMIC_RELAXED);
}
#else
#define STROBE__MUTEX_INIT {PTHREAD_MUTEX_INITIALIZER}
int strobe__mutex_held(const strobe__mutex *m); /* never defined: only inside STROBE_ASSERT, never evaluated */
static inline void strobe__mutex_set_owner(strobe__mutex *m, uintptr_t owner) {
  (void)m;
  (void)owner;
}
static inline uintptr_t strobe__thread_self(void) { return 0; }
#endif

static inline void strobe__mutex_init(strobe__mutex *m) {
  pthread_mutex_init(&m->m, NULL);
  strobe__mutex_set_owner(m, 0);
}
static inline void strobe__mutex_destroy(strobe__mutex *m) {
  STROBE_ASSERT(!strobe__mutex_held(m));
  pthread_mutex_destroy(&m->m);
}
static inline void strobe__mutex_lock(strobe__mutex *m) {
  STROBE_ASSERT(!strobe__mutex_held(m)); /* not recursive: this lock would never return */
  pthread_mutex_lock(&m->m);
  strobe__mutex_set_owner(m, strobe__thread_self());
}
static inline void strobe__mutex_unlock(strobe__mutex *m) {
  STROBE_ASSERT(strobe__mutex_held(m)); /* only its holder unlocks it */
  strobe__mutex_set_owner(m, 0);
  pthread_mutex_unlock(&m->m);
}
/* pthread_cond_wait / _timedwait on m: the lock is given up while waiting,
 * and so is its recorded holder. */
static inline int strobe__cond_wait(pthread_cond_t *c, strobe__mutex *m) {
  STROBE_ASSERT(strobe__mutex_held(m));
  strobe__mutex_set_owner(m, 0);
  int rc = pthread_cond_wait(c, &m->m);
  strobe__mutex_set_owner(m, strobe__thread_self());
  return rc;
}
static inline int strobe__cond_timedwait(pthread_cond_t *c, strobe__mutex *m, const struct timespec *abstime) {
  STROBE_ASSERT(strobe__mutex_held(m));
  strobe__mutex_set_owner(m, 0);
  int rc = pthread_cond_timedwait(c, &m->m, abstime);
  strobe__mutex_set_owner(m, strobe__thread_self());
  return rc;
}

#endif
