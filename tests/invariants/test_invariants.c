/*
 * test_invariants.c — the internal invariants are checked, not only stated
 * (docs/invariants.md, src/platform/invariant.h). Built against a library
 * that checks them: this build's own in Debug and sanitizer builds, else
 * the same sources compiled again with STROBE_DEBUG_ASSERTS
 * (tests/CMakeLists.txt), so it runs in every build.
 *   - each broken invariant, in a forked child, aborts it with a message
 *     naming the condition and the function that checks it: walking the
 *     thread list without its lock, taking a lock the thread already holds
 *     (which would otherwise hang), unlocking a lock it does not hold, and
 *     asking the session layer for admission without the collector lock;
 *   - the same calls made the right way do not abort;
 *   - "the drain thread" is whoever holds the drain lock: consumers are
 *     called only while strobe__drain_held() says so, and nowhere else;
 *   - a capture written by this library says assertions are on.
 * The forking cases come first in the list, so a run of every case forks
 * before any thread starts (TSan does not follow a fork of a multithreaded
 * process); under CTest each case is a process of its own anyway.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/collect.h"
#include "platform/invariant.h"
#include "probe/probe.h"
#include "session/session_internal.h"
#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/strobe.h"
#include "support/harness.h"
#include "invariants/aborts.h"

#ifndef STROBE_DEBUG_ASSERTS
#error "test_invariants must be built with STROBE_DEBUG_ASSERTS, against a library built with it"
#endif

/* >>violations: each runs in a child that must not return. */
static void walk_unlocked(void) { (void)strobe__threads_head(); }

static void lock_twice(void) {
  strobe__threads_lock();
  strobe__threads_lock();
}

static void unlock_unheld(void) { strobe__threads_unlock(); }

static void admit_unlocked(void) {
  strobe_collector *c = NULL;
  CHECK_EQ_INT(strobe_collector_create(&c), 0);
  (void)strobe__admissible(c, STROBE_OP_PASS, 0, 0);
}

/* >>drain role: a consumer of our own records what the drain says. */
typedef struct probe_consumer {
  strobe__consumer c;
  int calls, off_drain;
} probe_consumer;

static void note(probe_consumer *p) {
  p->calls++;
  if (!strobe__drain_held()) p->off_drain++;
}
static void p_site(void *ctx, uint32_t id, const strobe_site *s) {
  (void)id, (void)s;
  note(ctx);
}
static void p_label(void *ctx, uint32_t id, const char *text) {
  (void)id, (void)text;
  note(ctx);
}
static void p_thread(void *ctx, uint32_t index, uint64_t tid, const char *name, uint64_t lost) {
  (void)index, (void)tid, (void)name, (void)lost;
  note(ctx);
}
static void p_lost(void *ctx, uint32_t index, uint64_t lost) {
  (void)index, (void)lost;
  note(ctx);
}
static void p_events(void *ctx, uint32_t index, const strobe__event *ev, size_t n) {
  (void)index, (void)ev, (void)n;
  note(ctx);
}
static void p_thread_end(void *ctx, uint32_t index) {
  (void)index;
  note(ctx);
}
static void p_tick(void *ctx, uint64_t now) {
  (void)now;
  note(ctx);
}

static void test_drain_role(void) {
  probe_consumer p = {{NULL, p_site, p_label, p_thread, p_lost, p_events, p_thread_end, p_tick, NULL, NULL, NULL, NULL}, 0, 0};
  p.c.ctx = &p;
  CHECK(!strobe__drain_held());
  CHECK_EQ_INT(strobe__consumer_add(&p.c), 0);
  CHECK(!strobe__drain_held());
  {
    STROBE_SCOPE("invariants_scope");
  }
  strobe__drain_now(); /* a pass on this thread: the role is ours while it runs */
  CHECK(!strobe__drain_held());
  strobe__consumer_remove(&p.c);
  CHECK(p.calls > 0);
  CHECK_EQ_INT(p.off_drain, 0);
}

/* >>right way: the same calls with the locks held. */
static void test_held(void) {
  strobe__threads_lock();
  (void)strobe__threads_head();
  strobe__threads_unlock();
  strobe_collector *c = NULL;
  CHECK_EQ_INT(strobe_collector_create(&c), 0);
  strobe__mutex_lock(&c->lock);
  CHECK(strobe__mutex_held(&c->lock));
  CHECK_EQ_INT(strobe__admissible(c, STROBE_OP_PASS, 0, 0), 0); /* no session: nothing admits */
  strobe__mutex_unlock(&c->lock);
  CHECK(!strobe__mutex_held(&c->lock));
  strobe_collector_release(c);
}

/* A capture this library writes (its drain-thread callbacks asserting all
 * the way) says assertions are on. */
static void test_capture_says_checked(void) {
  char path[] = "/tmp/strobe-invariants-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  strobe_record_desc d = {path, 10, 1, 0, 0};
  strobe_recorder *r = NULL;
  CHECK_EQ_INT(strobe_record_start(&d, &r), 0);
  for (int i = 0; i < 100; i++) {
    STROBE_SCOPE("invariants_capture");
  }
  CHECK_EQ_INT(strobe_record_stop(r), 0);
  strobe_capture *cap = NULL;
  CHECK_EQ_INT(strobe_capture_open(path, &cap), 0);
  CHECK_EQ_INT(strobe_capture_query_header(cap)->assertions, 1);
  strobe_capture_close(cap);
  unlink(path);
}

/* >>cases: the forking ones first, while this process has no other thread. */
static void test_threads_head_needs_lock(void) {
  CHECK(aborts_with(walk_unlocked, "walk_unlocked", "strobe__mutex_held(&g_threads_lock)", "strobe__threads_head"));
}
static void test_lock_is_not_recursive(void) {
  CHECK(aborts_with(lock_twice, "lock_twice", "!strobe__mutex_held(m)", "strobe__mutex_lock"));
}
static void test_unlock_needs_holder(void) {
  CHECK(aborts_with(unlock_unheld, "unlock_unheld", "strobe__mutex_held(m)", "strobe__mutex_unlock"));
}
static void test_admission_needs_collector_lock(void) {
  CHECK(aborts_with(admit_unlocked, "admit_unlocked", "strobe__mutex_held(&c->lock)", "strobe__admissible"));
}

#define CASES(X)                          \
  X(threads_head_needs_lock)              \
  X(lock_is_not_recursive)                \
  X(unlock_needs_holder)                  \
  X(admission_needs_collector_lock)       \
  X(held)                                 \
  X(drain_role)                           \
  X(capture_says_checked)
HARNESS_MAIN(CASES)
