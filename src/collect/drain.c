/*
 * drain.c — the drain thread: empties every thread's ring, completes the
 * events the inline hot path writes in short form (site pointers, END
 * without a site; docs/recording.md), and fans them out to the active
 * consumers (capture files, flight recorder, live streams), delivering site,
 * label and thread metadata before the first event that needs it. Reaps the state
 * of threads that exited once their last events are delivered.
 *
 * Must never: make an instrumented thread wait (producers only ever signal
 * it), or call a consumer from any thread other than the one holding the
 * drain lock.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "collect/collect.h"
#include "platform/invariant.h"

static strobe__mutex g_lock = STROBE__MUTEX_INIT; /* consumers + passes */
static strobe__consumer *g_consumers[STROBE__MAX_CONSUMERS];
static int g_nconsumers;
static uint32_t g_sites_delivered = 1;
static uint32_t g_labels_delivered = 1;

static strobe__mutex g_wake_lock = STROBE__MUTEX_INIT;
static pthread_cond_t g_wake_cond;
static int g_wake_flag;
static pthread_once_t g_start_once = PTHREAD_ONCE_INIT;
static int g_started;

/* No consumer: wake rarely, just to discard stray events and reap exited threads. */
#define IDLE_INTERVAL_MS 200u

void strobe__drain_wake(void) {
  if (!__atomic_load_n(&g_started, __ATOMIC_ACQUIRE)) return;
  __atomic_store_n(&g_wake_flag, 1, __ATOMIC_RELAXED);
  pthread_cond_signal(&g_wake_cond);
}

static void deliver_sites(strobe__consumer **cs, int n, uint32_t from, uint32_t to) {
  for (uint32_t id = from; id < to; id++) {
    const strobe_site *s = strobe__site_get(id);
    for (int i = 0; i < n; i++) cs[i]->site(cs[i]->ctx, id, s);
  }
}

static void deliver_labels(strobe__consumer **cs, int n, uint32_t from, uint32_t to) {
  for (uint32_t id = from; id < to; id++) {
    const char *text = strobe__label_get(id);
    for (int i = 0; i < n; i++) cs[i]->label(cs[i]->ctx, id, text);
  }
}

/* `lost_base` is the loss count the consumers should treat as zero: 0 for a
 * thread they have watched since it attached, its current count for a
 * consumer joining later. */
static void deliver_thread(strobe__consumer **cs, int n, strobe__tstate *t, const char *name, uint64_t lost_base) {
  for (int i = 0; i < n; i++) cs[i]->thread(cs[i]->ctx, t->index, t->os_tid, name, lost_base);
}

/* Site pointer -> what the drain needs of it, drain-private, so the usual
 * BEGIN costs the drain no atomic load (which ThreadSanitizer makes
 * expensive). Direct-mapped. `ev` is BEGIN for timed sites, the number's
 * kind for number sites, 0 for a number site that cannot be registered;
 * `num` is how the hot path stored a number site's number (STROBE__NUM_*). */
#define SITE_CACHE 256u
typedef struct site_info {
  const strobe_site *site;
  uint32_t id, ev, num;
} site_info;
static site_info g_site_cache[SITE_CACHE];

static const site_info *site_of(strobe_site *site) {
  site_info *c = &g_site_cache[(uint32_t)((uintptr_t)site >> 3) % SITE_CACHE];
  if (c->site != site) {
    uint32_t number = strobe__number_event(site->kind);
    int rc = number ? strobe_site_register(site) : 0;
    c->id = number ? (rc > 0 ? (uint32_t)rc : 0) : strobe__site_id_for_stream(site);
    c->ev = number ? (rc > 0 ? number : 0) : STROBE__EV_BEGIN;
    c->num = site->unit >> STROBE__NUM_SHIFT;
    c->site = site;
  }
  return c;
}

/* The double a number's payload bits stand for (strobe.h, STROBE__NUM_*). */
static uint64_t number_bits(uint64_t bits, uint32_t num) {
  double d;
  if (num == STROBE__NUM_I64)
    d = (double)(int64_t)bits;
  else if (num == STROBE__NUM_U64)
    d = (double)bits;
  else
    return bits;
  memcpy(&bits, &d, sizeof bits);
  return bits;
}

/* What the drain and every consumer rely on in the event-kind table (strobe.h). */
#define CHECK_KIND(name, number, slots, operands, record)                                                     \
  _Static_assert((number) > 0 && (number) < 256, #name ": a kind is the low byte of its word");              \
  _Static_assert((number) % 8 != 0 || (number) == STROBE__EV_LOST, #name ": an in-ring kind is never a multiple of 8"); \
  _Static_assert((number) != STROBE__EV_RING_LOST, #name ": the number is RING_LOST's");                     \
  _Static_assert((slots) <= STROBE__EV_MAX_SLOTS, #name ": more payload slots than STROBE__EV_MAX_SLOTS");
STROBE__EVENT_KINDS(CHECK_KIND)
#undef CHECK_KIND

/* Turns a run of ring events into the form consumers see (strobe.h): a
 * site pointer becomes BEGIN with the site's id, an END gets the id of the
 * scope it closes, a ring LOST marker gets the stream's depth. The drain
 * keeps the stack of open scopes for that; it sees every event a thread
 * publishes, and an END of a recorded BEGIN is never dropped. */
static void convert_run(strobe__tstate *t, strobe__event *e, strobe__event *end) {
  for (; e < end; e++) {
    uint32_t kind = e->kind;
    if ((kind & 7u) == 0) { /* no in-ring kind is a multiple of 8 (strobe.h) */
      uint64_t word = (uint64_t)e->data << 32 | kind; /* the inline BEGIN's or number's site pointer */
      const site_info *si = site_of((strobe_site *)(uintptr_t)word);
      if (si->ev == STROBE__EV_BEGIN) {
        if (t->open < STROBE_MAX_DEPTH) t->open_site[t->open] = si->id;
        t->open++;
        e->kind = STROBE__EV_BEGIN;
        e->data = si->id;
        t->last_ts = e->ts;
        continue;
      }
      /* A number and its payload slot, published together (strobe__number): the producer
       * leaves the slot's kind, the double and a VALUE's time to us. A site that cannot be
       * registered makes both slots payloads that every consumer skips, and the number is
       * counted lost. */
      if (e + 1 == end) { /* cannot happen: a number is never published without its slot */
        e->kind = STROBE__EV_PAYLOAD;
        break;
      }
      if (si->ev == STROBE__EV_VALUE)
        e->ts = t->last_ts;
      else
        t->last_ts = e->ts;
      e->kind = si->ev ? si->ev : STROBE__EV_PAYLOAD;
      e->data = si->id;
      e++;
      e->ts = number_bits(e->ts, si->num);
      e->kind = STROBE__EV_PAYLOAD;
      e->data = 0;
      if (!si->ev) __atomic_fetch_add(&t->lost, 1 + STROBE__SLOTS_VALUE, __ATOMIC_RELAXED);
    } else if (kind == STROBE__EV_PAYLOAD) {
      /* a slot of the event before it: its ts is no time */
    } else if (kind == STROBE__EV_END) {
      if (t->open) t->open--;
      e->data = t->open < STROBE_MAX_DEPTH ? t->open_site[t->open] : 0;
      t->last_ts = e->ts;
    } else if ((kind & 0xffu) == STROBE__EV_RING_LOST) {
      uint32_t depth = kind >> 8; /* the producer's count: trusted only to be smaller */
      if (depth < t->open) t->open = depth;
      e->kind = STROBE__EV_LOST | t->open << 8;
      t->last_ts = e->ts;
    } else {
      t->last_ts = e->ts;
    }
  }
}

/* Converts [e, end), delivers the sites it registered, then the events. */
static void deliver_run(strobe__tstate *t, strobe__event *e, strobe__event *end) {
  if (e >= end) return;
  convert_run(t, e, end);
  /* Sites registered by producers before publishing, or by convert_run. */
  uint32_t nsites = strobe__site_count();
  deliver_sites(g_consumers, g_nconsumers, g_sites_delivered, nsites);
  g_sites_delivered = nsites;
  /* Labels are interned before the operation event naming them is published. */
  uint32_t nlabels = strobe__label_count();
  deliver_labels(g_consumers, g_nconsumers, g_labels_delivered, nlabels);
  g_labels_delivered = nlabels;
  for (int i = 0; i < g_nconsumers; i++) g_consumers[i]->events(g_consumers[i]->ctx, t->index, e, (size_t)(end - e));
  __atomic_store_n(&t->drained, t->drained + (uint64_t)(end - e), __ATOMIC_RELAXED);
}

/* One pass over every thread. Called with g_lock held. The thread list lock
 * is held only to snapshot the list and to unlink exited threads, never while
 * consumers encode or write: a thread attaching (its first event) must not
 * wait for a disk. Walking the list without that lock is safe because only
 * this thread unlinks or frees states, and attaching pushes new ones in
 * front of the head taken here. */
static void pass(void) {
  STROBE_ASSERT(strobe__mutex_held(&g_lock));
  strobe__threads_lock();
  strobe__tstate *head = strobe__threads_head();
  /* `exited` before `cur`, so that an exited thread's snapshot is final. */
  for (strobe__tstate *t = head; t; t = t->next) {
    t->snap_exited = __atomic_load_n(&t->exited, __ATOMIC_ACQUIRE);
    t->snap_cur = __atomic_load_n(&t->hot.cur, __ATOMIC_ACQUIRE);
    if (!t->announced || t->snap_name_gen != t->name_gen) {
      memcpy(t->snap_name, t->name, sizeof t->snap_name);
      t->snap_name_gen = t->name_gen;
    }
  }
  strobe__threads_unlock();

  int any_exited = 0;
  for (strobe__tstate *t = head; t; t = t->next) {
    if (!t->announced || t->name_seen != t->snap_name_gen) {
      deliver_thread(g_consumers, g_nconsumers, t, t->snap_name, t->announced ? t->lost_seen : 0);
      t->announced = 1;
      t->name_seen = t->snap_name_gen;
    }
    uint64_t lost = __atomic_load_n(&t->lost, __ATOMIC_RELAXED);
    if (lost != t->lost_seen) {
      for (int i = 0; i < g_nconsumers; i++) g_consumers[i]->lost(g_consumers[i]->ctx, t->index, lost);
      t->lost_seen = lost;
    }
    strobe__event *read = t->read, *end = t->snap_cur;
    if (end < read) { /* the producer wrapped */
      deliver_run(t, read, __atomic_load_n(&t->wrap_at, __ATOMIC_RELAXED));
      read = t->ring;
    }
    deliver_run(t, read, end);
    __atomic_store_n(&t->read, end, __ATOMIC_RELEASE);
    if (t->snap_exited) {
      for (int i = 0; i < g_nconsumers; i++) g_consumers[i]->thread_end(g_consumers[i]->ctx, t->index);
      any_exited = 1;
    }
  }

  strobe__tstate *dead = NULL;
  if (any_exited) {
    strobe__threads_lock();
    for (strobe__tstate *t = strobe__threads_head(), *next; t; t = next) {
      next = t->next;
      if (!t->snap_exited) continue;
      strobe__threads_unlink(t);
      t->next = dead;
      dead = t;
    }
    strobe__threads_unlock();
  }
  while (dead) {
    strobe__tstate *next = dead->next;
    strobe__thread_free(dead);
    dead = next;
  }
  uint64_t now = strobe__now();
  for (int i = 0; i < g_nconsumers; i++) g_consumers[i]->tick(g_consumers[i]->ctx, now);
}

static void *drain_main(void *arg) {
  (void)arg;
  uint32_t interval = strobe_query_desc().drain_interval_ms;
  for (;;) {
    strobe__mutex_lock(&g_lock);
    pass();
    uint32_t wait_ms = g_nconsumers ? interval : IDLE_INTERVAL_MS;
    strobe__mutex_unlock(&g_lock);

    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += (long)wait_ms * 1000000L;
    ts.tv_sec += ts.tv_nsec / 1000000000L;
    ts.tv_nsec %= 1000000000L;
    strobe__mutex_lock(&g_wake_lock);
    while (!__atomic_load_n(&g_wake_flag, __ATOMIC_RELAXED)) {
      if (strobe__cond_timedwait(&g_wake_cond, &g_wake_lock, &ts) == ETIMEDOUT) break;
    }
    __atomic_store_n(&g_wake_flag, 0, __ATOMIC_RELAXED);
    strobe__mutex_unlock(&g_wake_lock);
  }
  return NULL;
}

static void start_once(void) {
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&g_wake_cond, &ca);
  pthread_condattr_destroy(&ca);
  pthread_t th;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&th, &attr, drain_main, NULL) == 0) {
    __atomic_store_n(&g_started, 1, __ATOMIC_RELEASE);
    strobe__probe_set_wake(strobe__drain_wake); /* the probe's slow paths call up only through this */
  }
  pthread_attr_destroy(&attr);
}

int strobe__consumer_add(strobe__consumer *c) {
  pthread_once(&g_start_once, start_once);
  if (!__atomic_load_n(&g_started, __ATOMIC_ACQUIRE)) return STROBE_ENOMEM;
  strobe__mutex_lock(&g_lock);
  if (g_nconsumers == STROBE__MAX_CONSUMERS) {
    strobe__mutex_unlock(&g_lock);
    return STROBE_ELIMIT;
  }
  /* Events already in the rings belong to the consumers that were active
   * when they were written; the newcomer starts with the next pass. */
  pass();
  strobe__consumer *self[1] = {c};
  deliver_sites(self, 1, 1, g_sites_delivered);
  deliver_labels(self, 1, 1, g_labels_delivered);
  strobe__threads_lock();
  for (strobe__tstate *t = strobe__threads_head(); t; t = t->next)
    if (t->announced) deliver_thread(self, 1, t, t->snap_name, __atomic_load_n(&t->lost, __ATOMIC_RELAXED));
  strobe__threads_unlock();
  g_consumers[g_nconsumers++] = c;
  __atomic_fetch_or(&strobe__active, STROBE__ACTIVE_EVENTS, __ATOMIC_RELAXED);
  strobe__mutex_unlock(&g_lock);
  /* The drain thread may be in its idle wait (IDLE_INTERVAL_MS, chosen when
   * there was no consumer): the newcomer's first events must not wait that
   * long (docs/recording.md §Crash loss). */
  strobe__drain_wake();
  return 0;
}

void strobe__consumer_remove(strobe__consumer *c) {
  strobe__mutex_lock(&g_lock);
  pass();
  for (int i = 0; i < g_nconsumers; i++) {
    if (g_consumers[i] == c) {
      g_consumers[i] = g_consumers[--g_nconsumers];
      break;
    }
  }
  if (g_nconsumers == 0) __atomic_fetch_and(&strobe__active, ~STROBE__ACTIVE_EVENTS, __ATOMIC_RELAXED);
  strobe__mutex_unlock(&g_lock);
}

#ifdef STROBE_DEBUG_ASSERTS
int strobe__drain_held(void) { return strobe__mutex_held(&g_lock); }
#endif

void strobe__drain_now(void) {
  strobe__mutex_lock(&g_lock);
  pass();
  strobe__mutex_unlock(&g_lock);
}
