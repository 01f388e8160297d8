/*
 * drain.c — the drain thread: empties every thread's ring, completes the
 * events the inline hot path writes in short form (site pointers, END
 * without a site; docs/recording.md) — or lets its only consumer, a capture
 * file, complete the usual ones itself in one pass (collect.h >>ring runs)
 * — and fans them out to the active
 * consumers (capture files, flight recorder, live streams), delivering site,
 * label and thread metadata before the first event that needs it. Reaps the state
 * of threads that exited once their last events are delivered.
 *
 * Also owns the run-time loss reports (strobe_desc.on_loss, or a line on
 * stderr), the wait of STROBE_OVERFLOW_WAIT producers, the end of a GROW
 * swap (docs/recording.md, Overflow), and the drain's own CPU cost.
 *
 * Must never: make an instrumented thread wait unless its overflow mode
 * asks for it (then only for a pass, never while that thread runs passes
 * itself, and never longer than STROBE__WAIT_STALL_MS without one) or it
 * joins a journal (ADOPT_WAIT_MS at most per try: drain_trylock), or call
 * a consumer from any thread other than the one holding the drain lock.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect/collect.h"
#include "platform/clock.h"
#include "platform/host.h"
#include "platform/invariant.h"

static strobe__mutex g_lock = STROBE__MUTEX_INIT; /* consumers + passes */
static strobe__consumer *g_consumers[STROBE__MAX_CONSUMERS];
static int g_nconsumers;
static uint64_t g_recording_since; /* ticks when the consumers last went from none to one; atomic */
static uint32_t g_sites_delivered = 1;
static uint32_t g_labels_delivered = 1;

static strobe__mutex g_wake_lock = STROBE__MUTEX_INIT;
static pthread_cond_t g_wake_cond;
static int g_wake_flag;
static pthread_cond_t g_pass_cond; /* broadcast, with g_wake_lock, when a pass completes */
static uint64_t g_pass_gen;        /* passes completed; under g_wake_lock */
static uint64_t g_stalled_gen = UINT64_MAX; /* g_pass_gen when a waiter last gave up; under g_wake_lock */
static int g_started; /* atomic; set under g_lock: a drain thread runs in this process */
static _Thread_local int tls_drain_role __attribute__((tls_model("initial-exec"))); /* this thread holds g_lock: it runs passes, so it must never wait for one */

/* The drain's own cost (docs/recording.md, Cost): CPU time of the threads
 * running passes, measured per pass with CLOCK_THREAD_CPUTIME_ID, and the
 * events those passes delivered. Atomic: read by consumers and queries. */
static uint64_t g_cost_cpu_ns, g_cost_events, g_cost_passes;
static uint64_t g_pass_events; /* under g_lock: events delivered by the pass running */
static int g_pass_found;       /* under g_lock: the pass running found work from another thread than its own */

/* Run-time loss reports (strobe.h, strobe_loss_report): losses the passes
 * saw and have not reported yet, under g_lock; reported by the drain
 * thread alone, with no lock held, at most once per LOSS_REPORT_NS.
 * g_loss_threads counts distinct threads: each thread remembers the report
 * (g_loss_report, from 1) it was last counted in, so a thread losing events
 * in every pass of the second is one thread, not one per pass. */
#define LOSS_REPORT_NS 1000000000ull
static uint64_t g_loss_unreported, g_loss_total, g_loss_last_ns;
static uint64_t g_loss_report = 1; /* the report being gathered */
static uint32_t g_loss_threads;

/* Strobe's own footprint (collect.h >>footprint): what upper layers hold,
 * atomic, and when the drain thread last recorded it (drain thread only). */
#define FOOTPRINT_EVERY_NS 1000000000ull
static int64_t g_foot_held[STROBE__FOOT_COUNT];
static uint64_t g_foot_last_ns;

static void drain_lock(void) {
  strobe__mutex_lock(&g_lock);
  tls_drain_role = 1;
}

static void drain_unlock(void) {
  tls_drain_role = 0;
  strobe__mutex_unlock(&g_lock);
}

/* The probe's hook (probe.h, strobe__probe_set_drain_trylock): the lock between passes, waited for (the
 * drain's own thread takes it again at once when it is busy, so a mere try would rarely find it free) up
 * to ADOPT_WAIT_MS, the bound STROBE_OVERFLOW_WAIT puts on a drain that does not pass. Never by a thread
 * in the drain role. */
#define ADOPT_WAIT_MS STROBE__WAIT_STALL_MS
static int drain_trylock(void) {
  if (tls_drain_role) return 0;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts); /* pthread_mutex_timedlock's clock */
  ts.tv_nsec += ADOPT_WAIT_MS * 1000000L;
  ts.tv_sec += ts.tv_nsec / 1000000000L;
  ts.tv_nsec %= 1000000000L;
  if (pthread_mutex_timedlock(&g_lock.m, &ts)) return 0;
  strobe__mutex_set_owner(&g_lock, strobe__thread_self());
  tls_drain_role = 1;
  return 1;
}

static uint64_t clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void loss_seen(strobe__tstate *t, uint64_t n) {
  g_loss_unreported += n;
  g_loss_total += n;
  if (t->loss_report != g_loss_report) { /* first loss of this thread in this report */
    t->loss_report = g_loss_report;
    g_loss_threads++;
  }
}

/* Under g_lock: takes the report that is due now, if any. */
static int loss_report_due(strobe_loss_report *r) {
  if (!g_loss_unreported) return 0;
  uint64_t now = clock_ns(CLOCK_MONOTONIC);
  if (g_loss_last_ns && now - g_loss_last_ns < LOSS_REPORT_NS) return 0;
  g_loss_last_ns = now;
  *r = (strobe_loss_report){g_loss_unreported, g_loss_total, g_loss_threads, 0};
  g_loss_unreported = 0;
  g_loss_threads = 0;
  g_loss_report++;
  return 1;
}

/* On the drain thread, no lock held: the application's callback, or one line on stderr. */
static void loss_report(strobe_loss_report *r) {
  strobe_desc d = strobe_query_desc();
  r->overflow = d.overflow;
  if (d.on_loss) {
    d.on_loss(r, d.on_loss_user);
    return;
  }
  const char *why = r->overflow == STROBE_OVERFLOW_GROW   ? "at ring_events_max"
                    : r->overflow == STROBE_OVERFLOW_WAIT ? "and the drain could not be waited for (stuck, or on this thread)"
                                                          : "(STROBE_OVERFLOW_GROW or _WAIT, or a larger ring_events, keeps them)";
  fprintf(stderr, "strobe: %llu events lost (%llu in all) on %u thread(s): rings full with overflow=%s %s; "
          "docs/recording.md, Overflow\n",
          (unsigned long long)r->lost, (unsigned long long)r->lost_total, r->threads, strobe_overflow_name(r->overflow),
          why);
}

strobe__drain_cost strobe__drain_query_cost(void) {
  strobe__drain_cost c = {__atomic_load_n(&g_cost_cpu_ns, __ATOMIC_RELAXED),
                          __atomic_load_n(&g_cost_events, __ATOMIC_RELAXED),
                          __atomic_load_n(&g_cost_passes, __ATOMIC_RELAXED), 0, 0};
  strobe__probe_overflow_counts(&c.rings_grown, &c.producer_waits);
  return c;
}

strobe__drain_cost strobe__drain_cost_since(const strobe__drain_cost *base) {
  strobe__drain_cost d = strobe__drain_query_cost();
  return (strobe__drain_cost){d.cpu_ns - base->cpu_ns, d.events - base->events, d.passes - base->passes,
                              d.rings_grown - base->rings_grown, d.producer_waits - base->producer_waits};
}

/* STROBE_OVERFLOW_WAIT (probe.h >>wake): waits for the next completed pass. */
static int drain_wait(void) {
  if (tls_drain_role || !__atomic_load_n(&g_started, __ATOMIC_ACQUIRE)) return 0;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  ts.tv_nsec += (long)STROBE__WAIT_STALL_MS % 1000 * 1000000L;
  ts.tv_sec += STROBE__WAIT_STALL_MS / 1000 + ts.tv_nsec / 1000000000L;
  ts.tv_nsec %= 1000000000L;
  strobe__mutex_lock(&g_wake_lock);
  uint64_t gen = g_pass_gen;
  int passed = 0, waited = gen != g_stalled_gen;
  if (waited) { /* a drain known stuck since this pass is not waited for again */
    __atomic_store_n(&g_wake_flag, 1, __ATOMIC_RELAXED);
    pthread_cond_signal(&g_wake_cond);
    while (g_pass_gen == gen)
      if (strobe__cond_timedwait(&g_pass_cond, &g_wake_lock, &ts) == ETIMEDOUT) break;
    passed = g_pass_gen != gen;
    if (!passed) g_stalled_gen = gen;
  }
  strobe__mutex_unlock(&g_wake_lock);
  return passed ? 1 : waited ? -1 : 0;
}

/* No consumer: wake rarely, just to discard stray events and reap exited threads. */
#define IDLE_INTERVAL_MS 200u
/* Consumers but nothing to drain: each pass that finds nothing doubles the
 * wait, from drain_interval_ms up to REST_MS (docs/recording.md §The drain).
 * From ARM_MS the producers are armed (strobe__probe_rest_arm): the first
 * BEGIN or number any thread records then wakes the drain at once. Shorter
 * waits just run out: a thread recording every few milliseconds would
 * otherwise pay a slow path and a wake-up for most of its scopes.
 * REST_MS bounds what waits for the rest's end: the ENDs of scopes open
 * across it, and the consumers' ticks (clock pairs are once a second). A
 * wake-up costs the drain thread 50-75 us of CPU with cold caches on a busy
 * machine, so 4 a second keep it under 0.3 ms a second. */
#define REST_MS 250u
#define ARM_MS 16u
static uint64_t g_rests, g_rests_woken; /* atomic: strobe__drain_query_rests */
static int g_in_rest;                  /* atomic */

strobe__drain_rests strobe__drain_query_rests(void) {
  return (strobe__drain_rests){__atomic_load_n(&g_rests, __ATOMIC_RELAXED),
                               __atomic_load_n(&g_rests_woken, __ATOMIC_RELAXED),
                               __atomic_load_n(&g_in_rest, __ATOMIC_RELAXED)};
}

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

/* The site cache (collect.h >>ring runs): filled here, read here and by a
 * consumer taking ring runs. */
static strobe__site_info g_site_cache[STROBE__SITE_CACHE];

/* A miss: fills the entry (out of line, so that the hit keeps its registers). */
__attribute__((noinline)) static void site_fill(strobe__site_info *c, strobe_site *site) {
  uint32_t number = site->kind == STROBE_SITE_ELEMENT ? STROBE__EV_ELEMENT
                    : site->kind == STROBE_SITE_ALLOC  ? STROBE__EV_ALLOC
                    : site->kind == STROBE_SITE_FREE   ? STROBE__EV_FREE
                                                       : strobe__number_event(site->kind);
  int rc = number ? strobe_site_register(site) : 0;
  c->id = number ? (rc > 0 ? (uint32_t)rc : 0) : strobe__site_id_for_stream(site);
  c->ev = (uint16_t)(number ? (rc > 0 ? number : 0) : STROBE__EV_BEGIN);
  c->num = (uint16_t)(site->unit >> STROBE__NUM_SHIFT);
  c->site = site;
}

static inline const strobe__site_info *site_of(strobe_site *site) {
  strobe__site_info *c = &g_site_cache[strobe__site_slot((uintptr_t)site)];
  if (__builtin_expect(c->site != site, 0)) site_fill(c, site);
  return c;
}

static int site_is_element(const strobe__site_info *si) { return si->site->kind == STROBE_SITE_ELEMENT; }

/* An allocation or a free (strobe.h >>allocations) at e: its slots (an
 * address; an allocation's size after it) are plain words, not a number's
 * bits. A pool site that could not be registered makes them all payloads,
 * counted lost. Returns the last slot; when they are not all before `end`
 * (cannot happen: the producer publishes them together) the event becomes a
 * payload and the run's last event is returned, which ends it. */
static strobe__event *convert_memory(strobe__tstate *t, const strobe__site_info *si, strobe__event *e,
                                     strobe__event *end) {
  uint32_t kind = si->site->kind == STROBE_SITE_ALLOC ? STROBE__EV_ALLOC : STROBE__EV_FREE;
  uint32_t slots = strobe__ev_slots(kind);
  if ((size_t)(end - e) <= slots) {
    e->kind = STROBE__EV_PAYLOAD;
    return end - 1;
  }
  e->kind = si->ev ? si->ev : STROBE__EV_PAYLOAD;
  e->data = si->id;
  for (uint32_t i = 1; i <= slots; i++) {
    e[i].kind = STROBE__EV_PAYLOAD;
    e[i].data = 0;
  }
  if (!si->ev) __atomic_fetch_add(&t->lost, 1 + slots, __ATOMIC_RELAXED);
  return e + slots;
}

/* What the drain and every consumer rely on in the event-kind table (strobe.h). */
#define CHECK_KIND(name, number, slots, operands, record)                                                     \
  _Static_assert((number) > 0 && (number) < 256, #name ": a kind is the low byte of its word");              \
  _Static_assert((number) % 8 != 0 || (number) == STROBE__EV_LOST, #name ": an in-ring kind is never a multiple of 8"); \
  _Static_assert((number) != STROBE__EV_RING_LOST, #name ": the number is RING_LOST's");                     \
  _Static_assert((slots) <= STROBE__EV_MAX_SLOTS, #name ": more payload slots than STROBE__EV_MAX_SLOTS");
STROBE__EVENT_KINDS(CHECK_KIND)
#undef CHECK_KIND

/* Turns ring events into the form consumers see (strobe.h): a site pointer
 * becomes BEGIN with the site's id, an END gets the id of the scope it
 * closes, a ring LOST marker gets the stream's depth. The drain keeps the
 * stack of open scopes for that; it sees every event a thread publishes,
 * and an END of a recorded BEGIN is never dropped. Converts from e up to
 * `stop`, and up to two events past it when a number's or an allocation's
 * slots lie there (never past `end`, the run's end); returns where it stopped. */
__attribute__((noinline)) /* a function of its own in scripts/bench-drain-callgrind.sh's counts */
static strobe__event *convert_run(strobe__tstate *t, strobe__event *e, strobe__event *stop, strobe__event *end) {
  uint32_t open = t->open;
  uint64_t last_ts = t->last_ts;
  uint32_t *open_site = t->open_site;
  for (; e < stop; e++) {
    uint32_t kind = e->kind;
    if ((kind & 7u) == 0) { /* no in-ring kind is a multiple of 8 (strobe.h) */
      uint64_t word = (uint64_t)e->data << 32 | kind; /* the inline BEGIN's or number's site pointer */
      const strobe__site_info *si = site_of((strobe_site *)(uintptr_t)word);
      if (si->ev == STROBE__EV_BEGIN) {
        if (open < STROBE_MAX_DEPTH) open_site[open] = si->id;
        open++;
        e->kind = STROBE__EV_BEGIN;
        e->data = si->id;
        last_ts = e->ts;
        continue;
      }
      if (si->site->kind == STROBE_SITE_ALLOC || si->site->kind == STROBE_SITE_FREE) {
        last_ts = e->ts;
        e = convert_memory(t, si, e, end);
        continue;
      }
      if (site_is_element(si)) { /* an element attribution: one event, its id in ts (strobe__element) */
        e->kind = si->ev ? STROBE__EV_ELEMENT : STROBE__EV_PAYLOAD;
        e->data = si->id;
        if (!si->ev) __atomic_fetch_add(&t->lost, 1, __ATOMIC_RELAXED);
        continue;
      }
      /* A number and its payload slot, published together (strobe__number): the producer
       * leaves the slot's kind, the double and a VALUE's time to us. A site that cannot be
       * registered makes both slots payloads that every consumer skips, and the number is
       * counted lost. */
      if (e + 1 == end) { /* cannot happen: a number is never published without its slot */
        e->kind = STROBE__EV_PAYLOAD;
        e++;
        break;
      }
      if (si->ev == STROBE__EV_VALUE)
        e->ts = last_ts;
      else
        last_ts = e->ts;
      e->kind = si->ev ? si->ev : STROBE__EV_PAYLOAD;
      e->data = si->id;
      e++;
      /* An interned site's numbers say their encoding in the slot (strobe__number_coded). */
      e->ts = strobe__number_bits(e->ts, si->num == STROBE__NUM_IN_SLOT ? e->data : si->num);
      e->kind = STROBE__EV_PAYLOAD;
      e->data = 0;
      if (!si->ev) __atomic_fetch_add(&t->lost, 1 + STROBE__SLOTS_VALUE, __ATOMIC_RELAXED);
    } else if (kind == STROBE__EV_PAYLOAD) {
      /* a slot of the event before it: its ts is no time */
    } else if (strobe__ev_closes(kind)) { /* END, or UNWOUND written by the slow path */
      if (open) open--;
      e->data = open < STROBE_MAX_DEPTH ? open_site[open] : 0;
      last_ts = e->ts;
    } else if ((kind & 0xffu) == STROBE__EV_RING_LOST) {
      uint32_t depth = kind >> 8; /* the producer's count: trusted only to be smaller */
      if (depth < open) open = depth;
      e->kind = STROBE__EV_LOST | open << 8;
      last_ts = e->ts;
    } else {
      last_ts = e->ts;
    }
  }
  t->open = open;
  t->last_ts = last_ts;
  return e;
}

/* Ring events converted and delivered at a time (32 KiB): the consumers
 * then read what convert_run just wrote from the cache, not from memory
 * (a run can be the whole ring, megabytes). */
#define DELIVER_CHUNK 2048
/* Ring events converted after a ring_events consumer stopped: the event it
 * left (a site not cached yet, an operation, a loss marker...) and those
 * after it, so that an uncommon stretch does not cost a call per event. */
#define RING_FALLBACK 256

static void delivered(strobe__tstate *t, size_t n) {
  __atomic_store_n(&t->drained, t->drained + (uint64_t)n, __ATOMIC_RELAXED);
  g_pass_events += (uint64_t)n;
}

/* The only consumer, when it takes ring runs (collect.h >>ring runs): it
 * completes and encodes the usual events in one pass, without the drain's
 * converted copy in between (docs/recording.md §What a capture says it cost). */
static strobe__consumer *ring_consumer(void) {
  return g_nconsumers == 1 && g_consumers[0]->ring_events ? g_consumers[0] : NULL;
}

static void deliver_converted(strobe__tstate *t, strobe__event *e, size_t n);
/* A journaled ring's chunk, converted here rather than in place: under g_lock. */
static strobe__event g_copy[DELIVER_CHUNK + 2]; /* an allocation's two slots past the chunk */

/* Converts [e, end) a chunk at a time; delivers the sites each chunk
 * registered, then its events. A ring_events consumer takes what it can
 * first, the rest is converted for it. */
static void deliver_run(strobe__tstate *t, strobe__event *e, strobe__event *end) {
  strobe__consumer *ring = ring_consumer();
  while (e < end) {
    if (ring) {
      strobe__ring_run run = {e, (size_t)(end - e), g_site_cache, t->open, t->open_site, t->last_ts};
      size_t k = ring->ring_events(ring->ctx, t->index, &run);
      STROBE_ASSERT(k <= (size_t)(end - e));
      t->open = run.open;
      t->last_ts = run.last_ts;
      delivered(t, k);
      e += k;
      if (e == end) break;
    }
    size_t chunk = ring ? RING_FALLBACK : DELIVER_CHUNK;
    strobe__event *run_end = (size_t)(end - e) > chunk ? e + chunk : end;
    if (t->jnl) { /* a journaled ring keeps the hot path's form (docs/capture-format.md §Journal) */
      /* A number's slot, or an allocation's two, may lie past run_end. */
      size_t n = (size_t)(run_end - e) + ((size_t)(end - run_end) < 2 ? (size_t)(end - run_end) : 2);
      memcpy(g_copy, e, n * sizeof *e);
      size_t k = (size_t)(convert_run(t, g_copy, g_copy + (run_end - e), g_copy + n) - g_copy);
      deliver_converted(t, g_copy, k);
      e += k;
      continue;
    }
    strobe__event *stop = convert_run(t, e, run_end, end);
    deliver_converted(t, e, (size_t)(stop - e));
    e = stop;
  }
}

/* Delivers n converted events: first the sites and labels they may name. */
static void deliver_converted(strobe__tstate *t, strobe__event *e, size_t n) {
  /* Sites registered by producers before publishing, or by convert_run. */
  uint32_t nsites = strobe__site_count();
  if (nsites != g_sites_delivered) {
    deliver_sites(g_consumers, g_nconsumers, g_sites_delivered, nsites);
    g_sites_delivered = nsites;
  }
  /* Labels are interned before the operation event naming them is published. */
  uint32_t nlabels = strobe__label_count();
  if (nlabels != g_labels_delivered) {
    deliver_labels(g_consumers, g_nconsumers, g_labels_delivered, nlabels);
    g_labels_delivered = nlabels;
  }
  for (int i = 0; i < g_nconsumers; i++) g_consumers[i]->events(g_consumers[i]->ctx, t->index, e, n);
  delivered(t, n);
}

/* GROW swaps (probe.h, `retire`): delivers the rest of each old ring,
 * frees it and moves to the next. Returns the end to read the newest ring
 * up to: the snapshot when it lies there, else (it was taken before the
 * last swap) that ring's start, so nothing more this pass. */
static strobe__event *finish_retired(strobe__tstate *t, strobe__event *end) {
  for (; t->retired_done < t->snap_retired; t->retired_done++) {
    const __typeof__(t->retire[0]) *r = &t->retire[t->retired_done];
    strobe__event *read = t->read;
    if (r->final < read) { /* the old ring had wrapped */
      deliver_run(t, read, r->wrap_at);
      read = t->dring;
    }
    deliver_run(t, read, r->final);
    STROBE_ASSERT(t->dring == r->ring);
    t->dring = r->next;
    t->dring_end = r->next_end;
    /* `read` moves before the old ring is freed: were it left pointing
     * there, a ring the producer allocates later could reuse that memory
     * and mistake the stale position for one of its own (drain_pos). */
    __atomic_store_n(&t->read, t->dring, __ATOMIC_RELEASE);
    if (r->ring != strobe__journal_ring(t)) free(r->ring); /* a journal's ring goes with its region */
  }
  uintptr_t e = (uintptr_t)end;
  return e >= (uintptr_t)t->dring && e <= (uintptr_t)t->dring_end ? end : t->dring;
}

/* One pass over every thread. Called with g_lock held. The thread list lock
 * is held only to snapshot the list and to unlink exited threads, never while
 * consumers encode or write: a thread attaching (its first event) must not
 * wait for a disk. Walking the list without that lock is safe because only
 * this thread unlinks or frees states, and attaching pushes new ones in
 * front of the head taken here. */
static int g_final_pass; /* under g_lock: a consumer is being removed: hand it every sample */

static void deliver_samples(void *ctx, const strobe__cpu_sample *smp, size_t n, const uint32_t *frames) {
  (void)ctx;
  for (int i = 0; i < g_nconsumers; i++)
    if (g_consumers[i]->samples) g_consumers[i]->samples(g_consumers[i]->ctx, smp, n, frames);
}

/* The snapshot that opens a pass, under the threads lock: each thread's
 * `exited`, cursor and `retired` (in that order: see pass), and its name
 * when it changed. Returns the list's head. */
static strobe__tstate *snapshot_threads(void) {
  strobe__threads_lock();
  strobe__tstate *head = strobe__threads_head();
  /* `exited` before `cur`, so that an exited thread's snapshot is final. */
  for (strobe__tstate *t = head; t; t = t->next) {
    t->snap_exited = __atomic_load_n(&t->exited, __ATOMIC_ACQUIRE);
    t->snap_cur = __atomic_load_n(&t->hot.cur, __ATOMIC_ACQUIRE);
    t->snap_retired = __atomic_load_n(&t->retired, __ATOMIC_ACQUIRE); /* after the cursor (probe.h) */
    if (!t->announced || t->snap_name_gen != t->name_gen) {
      memcpy(t->snap_name, t->name, sizeof t->snap_name);
      t->snap_name_gen = t->name_gen;
    }
  }
  strobe__threads_unlock();
  return head;
}

/* One thread's share of a pass: its announcement (or new name), its losses,
 * its events up to the snapshot's cursor (both runs when the producer
 * wrapped), and its end when it exited. Returns 1 when it exited. */
static int drain_thread(strobe__tstate *t) {
  if (!t->announced || t->name_seen != t->snap_name_gen) {
    deliver_thread(g_consumers, g_nconsumers, t, t->snap_name, t->announced ? t->lost_seen : 0);
    t->announced = 1;
    t->name_seen = t->snap_name_gen;
  }
  uint64_t lost = __atomic_load_n(&t->lost, __ATOMIC_RELAXED);
  if (lost != t->lost_seen) {
    for (int i = 0; i < g_nconsumers; i++) g_consumers[i]->lost(g_consumers[i]->ctx, t->index, lost);
    loss_seen(t, lost - t->lost_seen);
    g_pass_found = 1;
    t->lost_seen = lost;
  }
  strobe__event *read = t->read, *end = t->snap_cur;
  if (t->snap_retired != t->retired_done) end = finish_retired(t, end);
  read = t->read;
  if (end < read) { /* the producer wrapped */
    deliver_run(t, read, __atomic_load_n(&t->wrap_at, __ATOMIC_RELAXED));
    read = t->dring;
  }
  uint64_t before = g_pass_events;
  deliver_run(t, read, end);
  if (t->jnl) { /* released once the consumers' ticks have written them (release_journals) */
    t->jread = end;
    t->jrelease = 1;
  } else {
    __atomic_store_n(&t->read, end, __ATOMIC_RELEASE);
  }
  if (g_pass_events != before && &t->hot != strobe__tls) g_pass_found = 1; /* not the drain's own gauges */
  if (!t->snap_exited) return 0;
  for (int i = 0; i < g_nconsumers; i++) g_consumers[i]->thread_end(g_consumers[i]->ctx, t->index);
  g_pass_found = 1;
  return 1;
}

/* UI-tree snapshots (tree.c), with the sites of their element types first,
 * then attachments and deep captures (deep.c): each handed to every
 * consumer that takes it, and done with the largest size one wrote. */
static void deliver_trees_and_content(void) {
  for (strobe__tree *tr = strobe__tree_take(), *next; tr; tr = next) {
    next = tr->next;
    uint32_t nsites = strobe__site_count(); /* their element types, registered at push */
    deliver_sites(g_consumers, g_nconsumers, g_sites_delivered, nsites);
    g_sites_delivered = nsites;
    uint64_t bytes = 0;
    for (int i = 0; i < g_nconsumers; i++) {
      uint64_t b = g_consumers[i]->tree ? g_consumers[i]->tree(g_consumers[i]->ctx, tr) : 0;
      if (b > bytes) bytes = b;
    }
    strobe__tree_done(tr, bytes);
    g_pass_found = 1;
  }
  for (strobe__content *ct = strobe__content_take(), *next; ct; ct = next) {
    next = ct->next;
    uint64_t bytes = 0;
    for (int i = 0; i < g_nconsumers; i++) {
      uint64_t b = g_consumers[i]->content ? g_consumers[i]->content(g_consumers[i]->ctx, ct) : 0;
      if (b > bytes) bytes = b;
    }
    strobe__content_done(ct, bytes);
    g_pass_found = 1;
  }
}

/* The consumers' ticks: a capture with a journal writes everything delivered now (recorder.c). Only
 * then may a journaled thread's producer write over it (its ring released here), and only then is
 * an exited one freed (free_exited). */
static void tick_and_release_journals(strobe__tstate *head, int any_exited) {
  uint64_t now = strobe__now();
  for (int i = 0; i < g_nconsumers; i++) g_consumers[i]->tick(g_consumers[i]->ctx, now);
  if (g_nconsumers) strobe__journal_die_point(any_exited ? 3 : 2);
  for (strobe__tstate *t = head; t; t = t->next) {
    if (!t->jrelease) continue;
    strobe__journal_release(t, t->jread);
    t->jrelease = 0;
  }
}

/* Unlinks the threads this pass saw exit (under the threads lock) and frees them (outside it). */
static void free_exited(void) {
  strobe__tstate *dead = NULL;
  strobe__threads_lock();
  for (strobe__tstate *t = strobe__threads_head(), *next; t; t = next) {
    next = t->next;
    if (!t->snap_exited) continue;
    strobe__threads_unlink(t);
    t->next = dead;
    dead = t;
  }
  strobe__threads_unlock();
  while (dead) {
    strobe__tstate *next = dead->next;
    strobe__thread_free(dead);
    dead = next;
  }
}

/* Memory ordering of a pass, the consumer's half of thread.c's >>ring (docs/platforms.md
 * §Memory ordering): `exited`, then hot.cur, then `retired` are loaded with acquire, in
 * that order, so the slots below the cursor, the retire[] entries and an exited
 * thread's final cursor are all visible before they are read; `wrap_at` is loaded
 * (relaxed) only after a cursor below `read` was acquired. Once a run is delivered,
 * `read` is stored with release, after every load and store of those slots, so the
 * producer, acquiring it, reuses them only after this pass is done with them. */
static void pass(void) {
  STROBE_ASSERT(strobe__mutex_held(&g_lock));
  uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  g_pass_events = 0;
  g_pass_found = 0;
  strobe__tstate *head = snapshot_threads();
  int any_exited = 0;
  for (strobe__tstate *t = head; t; t = t->next) any_exited |= drain_thread(t);
  deliver_trees_and_content();
  /* Sampler records (probe.h >>sampler): after the events of the same pass. */
  int takers = 0;
  for (int i = 0; i < g_nconsumers; i++) takers += g_consumers[i]->samples != NULL;
  strobe__sampler_poll(takers > 0, g_final_pass, deliver_samples, NULL);
  tick_and_release_journals(head, any_exited);
  if (any_exited) free_exited();

  __atomic_fetch_add(&g_cost_cpu_ns, clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0, __ATOMIC_RELAXED);
  __atomic_fetch_add(&g_cost_events, g_pass_events, __ATOMIC_RELAXED);
  __atomic_fetch_add(&g_cost_passes, 1, __ATOMIC_RELAXED);
  if (__atomic_load_n(&g_started, __ATOMIC_ACQUIRE)) { /* waiters (drain_wait) need the condition */
    strobe__mutex_lock(&g_wake_lock);
    g_pass_gen++;
    pthread_cond_broadcast(&g_pass_cond);
    strobe__mutex_unlock(&g_wake_lock);
  }
}

void strobe__footprint_add(uint32_t kind, int64_t bytes) {
  if (kind < STROBE__FOOT_COUNT) __atomic_fetch_add(&g_foot_held[kind], bytes, __ATOMIC_RELAXED);
}

strobe__footprint strobe__footprint_query(void) {
  strobe__footprint f = {{0}};
  int lock = !tls_drain_role; /* retired_done is the drain's: read under its lock */
  if (lock) drain_lock();
  strobe__threads_lock();
  for (strobe__tstate *t = strobe__threads_head(); t; t = t->next) {
    uint64_t now = __atomic_load_n(&t->ring_events, __ATOMIC_RELAXED), first = t->ring_events_first;
    uint32_t retired = __atomic_load_n(&t->retired, __ATOMIC_ACQUIRE);
    f.bytes[STROBE__FOOT_RINGS] += sizeof *t + (first + 1) * sizeof(strobe__event);
    f.bytes[STROBE__FOOT_RINGS_GROWN] += (now > first ? now - first : 0) * sizeof(strobe__event);
    /* Old rings the drain has not freed yet: each half the size of the one after it. */
    for (uint32_t i = t->retired_done; i < retired && i < STROBE__MAX_GROWS; i++)
      f.bytes[STROBE__FOOT_RINGS_GROWN] += ((first << i) + 1) * sizeof(strobe__event);
  }
  strobe__threads_unlock();
  if (lock) drain_unlock();
  for (uint32_t k = 0; k < STROBE__FOOT_COUNT; k++) {
    int64_t held = __atomic_load_n(&g_foot_held[k], __ATOMIC_RELAXED);
    if (held > 0) f.bytes[k] += (uint64_t)held;
  }
  f.bytes[STROBE__FOOT_INTERNED_NAMES] += strobe__intern_bytes();
  return f;
}

/* The drain thread records the footprint as gauges of its own (it is then
 * an instrumented thread, named "strobe drain"), at most once a second and
 * only while a consumer records: the first a second after recording began.
 * Called with no lock held: the query and recording take locks. */
static void footprint_record(void) {
  strobe__footprint f = strobe__footprint_query();
  static _Thread_local int named __attribute__((tls_model("initial-exec"))); /* a forked child's drain is a new thread */
  if (!named) named = strobe_thread_set_name("strobe drain") == 0;
#define FOOT_GAUGE(id, label) \
  STROBE_GAUGE_SET_KIND_UNIT(STROBE__FOOTPRINT_FAMILY, label, f.bytes[STROBE__FOOT_##id], STROBE_UNIT_BYTES);
  STROBE__FOOTPRINT_KINDS(FOOT_GAUGE)
#undef FOOT_GAUGE
}

static void *drain_main(void *arg) {
  (void)arg;
  strobe__sampler_quiet_thread();
  strobe__probe_own_thread();
  (void)pthread_setname_np(pthread_self(), "strobe-drain"); /* top -H, and bench_drain_idle, find it */
  uint32_t interval = strobe_query_desc().drain_interval_ms;
  uint32_t rest = interval; /* the next wait while passes find nothing (REST_MS) */
  for (;;) {
    drain_lock();
    pass();
    int footprint = 0;
    if (g_nconsumers) {
      uint64_t now = clock_ns(CLOCK_MONOTONIC);
      if (!g_foot_last_ns) g_foot_last_ns = now;
      if (now - g_foot_last_ns >= FOOTPRINT_EVERY_NS) footprint = 1, g_foot_last_ns = now;
    } else {
      g_foot_last_ns = 0;
    }
    /* Busy: every interval. Idle: back off, doubling, to REST_MS (the
     * sampler's records come from the kernel, not a slow path: no rest). */
    if (g_pass_found || !g_nconsumers || strobe__sampler_running())
      rest = interval;
    else if (rest < REST_MS)
      rest = rest * 2 < REST_MS ? rest * 2 : REST_MS;
    uint32_t wait_ms = g_nconsumers ? rest : IDLE_INTERVAL_MS;
    int resting = g_nconsumers && wait_ms > interval && wait_ms >= ARM_MS; /* read under the drain lock */
    strobe_loss_report loss;
    int report = loss_report_due(&loss);
    drain_unlock();
    if (report) loss_report(&loss);
    if (footprint) footprint_record();
    if (resting) { /* after the footprint's gauges: they are the drain's own */
      if (strobe__probe_rest_arm()) __atomic_store_n(&g_wake_flag, 1, __ATOMIC_RELAXED); /* drain those first */
      __atomic_fetch_add(&g_rests, 1, __ATOMIC_RELAXED);
      __atomic_store_n(&g_in_rest, 1, __ATOMIC_RELAXED);
    }

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
    if (resting) {
      __atomic_store_n(&g_in_rest, 0, __ATOMIC_RELAXED);
      if (!strobe__probe_rest_disarm()) __atomic_fetch_add(&g_rests_woken, 1, __ATOMIC_RELAXED);
    }
  }
  return NULL;
}

uint32_t strobe__op_gate; /* collect.h >>op-gate */

static int g_content_consumers; /* atomic: consumers with a `content` callback (capture files) */

/* The drain thread, started by the first consumer (g_lock held: it waits for it). Returns 0 when it runs. */
static int drain_start(void) {
  STROBE_ASSERT(strobe__mutex_held(&g_lock));
  if (__atomic_load_n(&g_started, __ATOMIC_RELAXED)) return 0;
  pthread_t th;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  int rc = pthread_create(&th, &attr, drain_main, NULL);
  pthread_attr_destroy(&attr);
  if (rc) return STROBE_ENOMEM;
  __atomic_store_n(&g_started, 1, __ATOMIC_RELEASE);
  strobe__probe_set_wake(strobe__drain_wake); /* the probe's slow paths call up only through these */
  strobe__probe_set_wait(drain_wait);
  strobe__probe_set_drain_trylock(drain_trylock, drain_unlock);
  return 0;
}

static void conds_init(void) {
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&g_wake_cond, &ca);
  pthread_cond_init(&g_pass_cond, &ca);
  pthread_condattr_destroy(&ca);
}

/* >>fork (docs/recording.md §Fork): fork() waits until the drain lock and
 * the probe's locks are free, taken in the order the code takes them
 * (drain, thread list, journal, sites, labels, wake), so the child finds
 * every structure whole. The child has none of the parent's threads: no
 * drain thread (its first consumer starts one), and none of the parent's
 * consumers (a capture file of the parent's is its parent's to write; the
 * child starts its own). */
static void fork_prepare(void) {
  strobe__mutex_lock(&g_lock);
  strobe__threads_fork(STROBE__FORK_PREPARE);
  strobe__journal_fork(STROBE__FORK_PREPARE);
  strobe__sites_fork(STROBE__FORK_PREPARE);
  strobe__labels_fork(STROBE__FORK_PREPARE);
  strobe__mutex_lock(&g_wake_lock);
}

static void fork_release(int phase) {
  strobe__mutex_unlock(&g_wake_lock);
  strobe__labels_fork(phase);
  strobe__sites_fork(phase);
  strobe__journal_fork(phase);
  strobe__threads_fork(phase);
  strobe__mutex_unlock(&g_lock);
}

static void fork_parent(void) { fork_release(STROBE__FORK_PARENT); }

static void fork_child(void) {
  strobe__probe_set_wake(NULL);
  strobe__probe_set_wait(NULL);
  strobe__probe_set_drain_trylock(NULL, NULL);
  __atomic_store_n(&g_started, 0, __ATOMIC_RELEASE);
  conds_init(); /* the parent's waiters are not in this process */
  g_wake_flag = 0;
  g_in_rest = 0;
  g_stalled_gen = UINT64_MAX;
  g_foot_last_ns = 0;
  g_nconsumers = 0;
  __atomic_store_n(&g_content_consumers, 0, __ATOMIC_RELEASE);
  __atomic_fetch_and(&strobe__active, ~STROBE__ACTIVE_EVENTS, __ATOMIC_RELAXED);
  __atomic_fetch_and(&strobe__op_gate, ~STROBE__OPGATE_EVENTS, __ATOMIC_RELAXED);
  fork_release(STROBE__FORK_CHILD);
}

__attribute__((constructor)) static void drain_init(void) {
  conds_init();
  (void)strobe__host_atfork(fork_prepare, fork_parent, fork_child);
}

int strobe__content_consumers(void) { return __atomic_load_n(&g_content_consumers, __ATOMIC_ACQUIRE); }

int strobe__consumer_add(strobe__consumer *c) {
  drain_lock();
  int rc = g_nconsumers == STROBE__MAX_CONSUMERS ? STROBE_ELIMIT : drain_start();
  if (rc) {
    drain_unlock();
    return rc;
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
  if (g_nconsumers == 0) __atomic_store_n(&g_recording_since, strobe__now(), __ATOMIC_RELEASE);
  g_consumers[g_nconsumers++] = c;
  if (c->content) __atomic_fetch_add(&g_content_consumers, 1, __ATOMIC_RELEASE);
  __atomic_fetch_or(&strobe__active, STROBE__ACTIVE_EVENTS, __ATOMIC_RELAXED);
  strobe__active_changed();
  __atomic_fetch_or(&strobe__op_gate, STROBE__OPGATE_EVENTS, __ATOMIC_RELAXED);
  drain_unlock();
  /* The drain thread may be in its idle wait (IDLE_INTERVAL_MS, chosen when
   * there was no consumer): the newcomer's first events must not wait that
   * long (docs/recording.md §Crash loss). */
  strobe__drain_wake();
  return 0;
}

uint64_t strobe__recording_since_mono_ns(void) {
  uint64_t since = __atomic_load_n(&g_recording_since, __ATOMIC_ACQUIRE);
  const strobe__clock_info *ck = strobe__clock();
  double ns = (double)ck->epoch_mono_ns + ((double)since - (double)ck->epoch_ticks) * ck->ns_per_tick;
  return ns > 0 ? (uint64_t)ns : 0;
}

void strobe__consumer_remove(strobe__consumer *c) {
  drain_lock();
  g_final_pass = 1;
  pass();
  g_final_pass = 0;
  for (int i = 0; i < g_nconsumers; i++) {
    if (g_consumers[i] == c) {
      g_consumers[i] = g_consumers[--g_nconsumers];
      if (c->content) __atomic_fetch_sub(&g_content_consumers, 1, __ATOMIC_RELEASE);
      break;
    }
  }
  if (g_nconsumers == 0) {
    __atomic_fetch_and(&strobe__active, ~STROBE__ACTIVE_EVENTS, __ATOMIC_RELAXED);
    strobe__active_changed();
    __atomic_fetch_and(&strobe__op_gate, ~STROBE__OPGATE_EVENTS, __ATOMIC_RELAXED);
  }
  drain_unlock();
}

#ifdef STROBE_DEBUG_ASSERTS
int strobe__drain_held(void) { return strobe__mutex_held(&g_lock); }
#endif

void strobe__drain_now(void) {
  drain_lock();
  pass();
  drain_unlock();
}
