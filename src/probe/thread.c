/*
 * thread.c — per-thread recording state and the probe's slow paths.
 *
 * Owns: attaching a thread (its ring, allocated once on its first event),
 * the limit the inline BEGIN checks and the ring's wrap (docs/recording.md),
 * the thread list the drain walks, thread names, the scope stack's misuse
 * rules, cumulative loop accumulators, numeric events, frame marks, the
 * operation events, the thread-exit hook, fibers (thread states no OS
 * thread owns, entered and left by the threads that run them), the cost calibration,
 * and the hook through which it asks the collect layer's drain for a pass
 * (probe.h >>wake).
 *
 * Must never: block on anything the drain holds while the hot path runs (but
 * for a pass's length when its thread joins a journal, once, >>adopt),
 * allocate after a thread is attached, or write another thread's state
 * (each ring has exactly one producer).
 *
 * Contents: >>globals >>attach >>ring >>adopt >>cumulative >>scopes >>depth >>numbers >>exit >>fibers >>fork >>queries
 * >>cost
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "platform/altstack.h"
#include "platform/clock.h"
#include "platform/host.h"
#include "platform/invariant.h"
#include "probe/probe.h"

/* >>globals */
/* The frame words and the inline BEGIN's ring word keep flags in the low
 * three bits of a site pointer. */
_Static_assert(_Alignof(strobe_site) >= 8, "strobe_site must be 8-byte aligned");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the ring word overlays kind (low half) and data");

uint32_t strobe__active;
/* What strobe__tls points at before a thread attaches and after it exits:
 * limit 0 sends every BEGIN to the slow path, and no guard is its top. Its
 * cursor is not NULL: a counter or gauge checks `cur > num_limit` (0), so a
 * thread whose first event is one goes the slow way too (a NULL cursor sent
 * it inline, to a store at address 0). Nothing is ever written there. */
static strobe__event g_no_ring[1];
static strobe__thread g_detached = {
    .cur = g_no_ring, .top = &g_detached.stack[0], .stack = {{STROBE__FRAME_BOOKKEEPING, STROBE__SP_HELD}}};
_Thread_local strobe__thread *strobe__tls __attribute__((tls_model("initial-exec"))) = &g_detached;

static _Thread_local int tls_exiting __attribute__((tls_model("initial-exec"))); /* set by the exit hook: no re-attach while TLS is torn down */
static _Thread_local void *tls_altstack __attribute__((tls_model("initial-exec"))); /* strobe__thread_altstack's, or NULL */
static _Thread_local int tls_altstack_tried __attribute__((tls_model("initial-exec")));
static _Thread_local strobe__tstate *tls_own __attribute__((tls_model("initial-exec"))); /* its state once attached */
static _Thread_local uint32_t tls_adopt_seen __attribute__((tls_model("initial-exec"))); /* journal generation last tried */
static _Thread_local uint32_t tls_adopt_waited __attribute__((tls_model("initial-exec"))); /* ...whose wait ran out */
_Thread_local int strobe__tls_own __attribute__((tls_model("initial-exec"))); /* one of Strobe's threads (probe.h) */

#define DEFAULT_RING_EVENTS 262144u /* 4 MiB per thread: ~2.5 ms of a thread scoping flat out, and
                                     * ~250 ms of a thread doing real work between scopes */
#define DEFAULT_DRAIN_MS 2u
#define DEFAULT_RING_EVENTS_MAX 16777216u /* GROW: 256 MiB per thread at most, only while the drain lags
                                          * (docs/recording.md §Overflow: 2 x 20 M back-to-back scopes need it) */
#define MAX_RING_EVENTS 16777216u        /* 256 MiB: ring_events' and ring_events_max's bound */

static strobe_desc g_desc;
static int g_desc_frozen;
static strobe__mutex g_desc_lock = STROBE__MUTEX_INIT;

static strobe__mutex g_threads_lock = STROBE__MUTEX_INIT;
static strobe__tstate *g_threads;
static uint32_t g_threads_seen;
static strobe_misuse g_misuse_dead; /* from freed threads, under g_threads_lock */
static uint64_t g_written_dead, g_lost_dead, g_unwound_dead;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_key_t g_key;

static void (*g_wake)(void); /* atomic: installed by the drain when it starts (probe.h) */
static int (*g_wait)(void);  /* atomic: likewise */
static int (*g_drain_trylock)(void);   /* atomic: likewise (>>adopt) */
static void (*g_drain_unlock)(void);   /* set before g_drain_trylock */
static uint32_t g_rings_grown; /* atomic */
static uint64_t g_producer_waits; /* atomic */

void strobe__probe_set_wake(void (*wake)(void)) { __atomic_store_n(&g_wake, wake, __ATOMIC_RELEASE); }
void strobe__probe_overflow_counts(uint64_t *rings_grown, uint64_t *producer_waits) {
  *rings_grown = __atomic_load_n(&g_rings_grown, __ATOMIC_RELAXED);
  *producer_waits = __atomic_load_n(&g_producer_waits, __ATOMIC_RELAXED);
}
void strobe__probe_set_wait(int (*wait)(void)) { __atomic_store_n(&g_wait, wait, __ATOMIC_RELEASE); }
void strobe__probe_set_drain_trylock(int (*trylock)(void), void (*unlock)(void)) {
  __atomic_store_n(&g_drain_unlock, unlock, __ATOMIC_RELEASE);
  __atomic_store_n(&g_drain_trylock, trylock, __ATOMIC_RELEASE);
}

/* Slow paths only: the inline hot path never asks for a pass. */
static void wake_drain(void) {
  void (*wake)(void) = __atomic_load_n(&g_wake, __ATOMIC_ACQUIRE);
  if (wake) wake();
}

static int g_resting; /* atomic: the drain sleeps long and waits for a slow path's wake (probe.h >>wake) */

/* A slow path published events: the first one while the drain rests wakes it. */
static void wake_if_resting(void) {
  if (__atomic_load_n(&g_resting, __ATOMIC_RELAXED) && __atomic_exchange_n(&g_resting, 0, __ATOMIC_ACQ_REL))
    wake_drain();
}

int strobe__probe_rest_disarm(void) { return __atomic_exchange_n(&g_resting, 0, __ATOMIC_ACQ_REL); }

static void resolve_desc(strobe_desc *d) {
  if (!d->ring_events) d->ring_events = DEFAULT_RING_EVENTS;
  if (!d->drain_interval_ms) d->drain_interval_ms = DEFAULT_DRAIN_MS;
  if (!d->ring_events_max) d->ring_events_max = d->ring_events > DEFAULT_RING_EVENTS_MAX ? d->ring_events : DEFAULT_RING_EVENTS_MAX;
}

static int power_of_two(uint32_t n) { return n && !(n & (n - 1)); }

int strobe_setup(const strobe_desc *desc) {
  if (!desc) return STROBE_EINVAL;
  strobe_desc d = *desc;
  resolve_desc(&d);
  if (d.ring_events < 1024 || d.ring_events > MAX_RING_EVENTS || !power_of_two(d.ring_events)) return STROBE_EINVAL;
  if (d.drain_interval_ms > 1000 || d.report_interned_names > 1 || d.crash_handler > 1) return STROBE_EINVAL;
  if (d.crash_handler && !strobe__host_crash_signals()) return STROBE_EUNSUPPORTED; /* docs/platforms.md §Windows */
  if (!strobe_overflow_name(d.overflow)) return STROBE_EINVAL;
  if (d.ring_events_max < d.ring_events || d.ring_events_max > MAX_RING_EVENTS || !power_of_two(d.ring_events_max))
    return STROBE_EINVAL;
  strobe__mutex_lock(&g_desc_lock);
  int rc = g_desc_frozen ? STROBE_EBUSY : 0;
  if (!rc) g_desc = d;
  strobe__mutex_unlock(&g_desc_lock);
  return rc;
}

strobe_desc strobe_query_desc(void) {
  strobe__mutex_lock(&g_desc_lock);
  strobe_desc d = g_desc;
  strobe__mutex_unlock(&g_desc_lock);
  resolve_desc(&d);
  return d;
}

int strobe_profiling_available(void) { return STROBE__PROFILING; }

/* >>attach */
static void on_thread_exit(void *arg);

static void init_once(void) { (void)pthread_key_create(&g_key, on_thread_exit); }

/* The thread state behind strobe__tls, or NULL when it is not attached. */
static strobe__tstate *attached(void) {
  strobe__thread *h = strobe__tls;
  return h == &g_detached ? NULL : (strobe__tstate *)h;
}

static uint32_t depth_of(const strobe__tstate *t) { return (uint32_t)(t->hot.top - t->hot.stack); }

#define NUM_ROOM (2u + STROBE_MAX_DEPTH) /* slots the inline number's check keeps free (strobe.h) */

/* The drain's position as the producer must see it. After a GROW swap the
 * drain may still be in the old ring; it will start the new one at its
 * start, so until it gets there that is where it is (and the producer
 * cannot wrap the new ring: nothing before its start is free). Rings are
 * allocated one slot larger than they are used, so no ring's end is
 * another's start and the range check is never ambiguous. */
static strobe__event *drain_pos(const strobe__tstate *t) {
  strobe__event *r = __atomic_load_n(&t->read, __ATOMIC_ACQUIRE);
  uintptr_t a = (uintptr_t)r;
  return a >= (uintptr_t)t->ring && a <= (uintptr_t)t->ring_end ? r : t->ring;
}

/* Recomputes the inline BEGIN's limit (strobe.h: cur + 4 * top <= limit):
 * - room: up to `bound`, the ring's end (or, once wrapped, the slot before
 *   the drain's position), with the BEGIN's slot and its END's kept, and
 *   64 bytes per open frame, four times the 16 its END needs;
 * - depth: measured from the cursor now, since the cursor only grows until
 *   the next slow path, 64 bytes per frame stop the stack at
 *   STROBE_MAX_DEPTH. At depth d that forces a slow path at most every
 *   2 * (STROBE_MAX_DEPTH - 1 - d) scopes.
 * Below the ring's middle, `bound` stops there: the slow path that crosses
 * it wakes the drain before the ring can fill. */
/* limit and num_limit are stored atomically (relaxed): the drain lowers them
 * when it rests (strobe__probe_rest_arm), the owner recomputes them here.
 * The fence orders the owner's stores before its look at g_resting, as the
 * drain sets g_resting before lowering them: an owner whose store overwrote
 * the lowered limit sees the rest and wakes the drain, so no thread records
 * through a rest unseen (ENDs aside, which never check a limit). */
static void set_limits(strobe__tstate *t, uint64_t limit, uint64_t num_limit) {
  __atomic_store_n(&t->hot.limit, limit, __ATOMIC_RELAXED);
  __atomic_store_n(&t->hot.num_limit, num_limit, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  wake_if_resting();
}

/* >>adopt (journal.c): the calling thread's own state, outside the open journal, not yet tried there. */
static int adopt_pending(const strobe__tstate *t) {
  uint32_t gen = strobe__journal_adopt_gen();
  return gen && gen != tls_adopt_seen && t == tls_own && !t->jnl && !t->fiber;
}

/* At a slow path, before anything is written: the drain lock, waited for ADOPT_WAIT_MS at most
 * (drain.c), then the thread list's; then the journal takes the state in. Tried once per journal
 * unless the drain lock was not had. Until then every BEGIN and number takes the slow path
 * (refresh_limit), but only until a first wait runs out: after that only the ring's own slow paths
 * (its middle, its wrap) try again, so a drain busy for long costs the thread one wait per half
 * ring, not one per event. */
static void adopt_maybe(strobe__tstate *t) {
  if (!adopt_pending(t)) return;
  int (*trylock)(void) = __atomic_load_n(&g_drain_trylock, __ATOMIC_ACQUIRE);
  uint32_t gen = strobe__journal_adopt_gen();
  if (!trylock || !trylock()) {
    tls_adopt_waited = gen;
    return;
  }
  strobe__mutex_lock(&g_threads_lock);
  (void)strobe__journal_adopt(t); /* a state that cannot join is counted there, and stays as it was */
  strobe__mutex_unlock(&g_threads_lock);
  __atomic_load_n(&g_drain_unlock, __ATOMIC_ACQUIRE)();
  tls_adopt_seen = gen;
}

/* adopt_pending, and no wait for this journal has run out yet: every event goes the slow way. */
static int adopt_forced(const strobe__tstate *t) {
  return adopt_pending(t) && tls_adopt_waited != strobe__journal_adopt_gen();
}

/* As the rest's (set_limits): the journal's generation is stored before this fence and the limits after
 * it; an owner stores its limits, fences, then reads the generation. So an owner whose store overwrote
 * the lowered limits sees the generation and lowers them again (refresh_limit). */
void strobe__threads_adopt_arm(void) {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  strobe__mutex_lock(&g_threads_lock);
  for (strobe__tstate *t = g_threads; t; t = t->next)
    if (!t->jnl && !t->fiber && !__atomic_load_n(&t->exited, __ATOMIC_RELAXED)) {
      __atomic_store_n(&t->hot.limit, 1, __ATOMIC_RELAXED); /* its next BEGIN or number is slow (adopt_maybe) */
      __atomic_store_n(&t->hot.num_limit, 0, __ATOMIC_RELAXED);
    }
  strobe__mutex_unlock(&g_threads_lock);
}

static void refresh_limit(strobe__tstate *t) {
  if (t->pending_lost || adopt_forced(t)) { /* every BEGIN goes slow until the LOST marker is out, or it joined
                                               * the journal (not 0: that means detached) */
    set_limits(t, 1, 0);
    return;
  }
  strobe__event *cur = t->hot.cur;
  strobe__event *read = drain_pos(t);
  strobe__event *bound = cur >= read ? t->ring_end : read - 1;
  strobe__event *mid = t->ring + t->ring_events / 2;
  if (cur < mid && mid < bound) bound = mid;
  _Static_assert(4u * sizeof(strobe__frame) == 64u, "4 * top moves by 64 bytes per frame");
  uint64_t base4 = 4u * (uint64_t)(uintptr_t)t->hot.stack;
  uint64_t room = (uint64_t)(uintptr_t)bound - 2u * sizeof(strobe__event) + base4;
  uint64_t deep = (uint64_t)(uintptr_t)cur + base4 + 64u * (STROBE_MAX_DEPTH - 1);
  uint64_t limit = room < deep ? room : deep;
  /* The inline number's: its two events and the ENDs of as many open scopes as there can be.
   * The middle is only a wake-up point: numbers that would stop just short of it go on to the
   * real bound. */
  if (bound == mid && bound - cur <= (ptrdiff_t)NUM_ROOM) bound = cur >= read ? t->ring_end : read - 1;
  set_limits(t, limit, bound - cur > (ptrdiff_t)NUM_ROOM ? (uint64_t)(uintptr_t)(bound - NUM_ROOM) : 0);
  if (adopt_forced(t)) set_limits(t, 1, 0); /* a journal opened meanwhile (strobe__threads_adopt_arm) */
}

/* A thread's state with an empty ring of cap events (one spare slot: see
 * drain_pos) and its scope stack's bookkeeping frame; NULL when out of memory.
 * attach() and the cost calibration build theirs the same way. */
static strobe__tstate *tstate_new(uint32_t cap, int journal) {
  /* While a capture's journal is open, the state goes there (>>journal in probe.h). */
  strobe__tstate *t = journal ? strobe__journal_tstate(cap) : NULL;
  if (t) goto ready;
  t = strobe__tstate_map(cap); /* laid out as a journal region, so a later journal can adopt it */
  if (!t) return NULL;
ready:
  t->hot.top = t->hot.stack;
  t->hot.stack[0].word = STROBE__FRAME_BOOKKEEPING; /* never a scope: the inline VALUE goes slow here (strobe.h) */
  t->hot.stack[0].sp = STROBE__SP_HELD;
  return t;
}

static strobe__tstate *attach(void) {
  strobe__tstate *a = attached();
  if (a) return a;
  if (tls_exiting) return NULL;
  pthread_once(&g_once, init_once);
  strobe__mutex_lock(&g_desc_lock);
  g_desc_frozen = 1;
  resolve_desc(&g_desc);
  uint32_t cap = g_desc.ring_events;
  uint32_t overflow = g_desc.overflow, ring_max = g_desc.ring_events_max, crash = g_desc.crash_handler;
  strobe__mutex_unlock(&g_desc_lock);
  if (crash) strobe__thread_altstack(); /* the crash handler then runs when this thread overflows its stack */

  strobe__tstate *t = tstate_new(cap, 1);
  if (!t) return NULL;
  t->overflow = overflow;
  t->ring_events_max = ring_max;
  t->os_tid = strobe__host_tid();
  strobe__mutex_lock(&g_threads_lock);
  t->index = g_threads_seen++;
  t->next = g_threads;
  g_threads = t;
  strobe__mutex_unlock(&g_threads_lock);
  strobe__journal_tstate_ready(t); /* numbered now: recovery may read its region (before its first event) */
  (void)pthread_setspecific(g_key, t);
  tls_own = t;
  tls_adopt_seen = strobe__journal_adopt_gen(); /* made now: in the journal open now, if there is one */
  refresh_limit(t);
  strobe__tls = &t->hot;
  return t;
}

void strobe__threads_lock(void) { strobe__mutex_lock(&g_threads_lock); }
void strobe__threads_unlock(void) { strobe__mutex_unlock(&g_threads_lock); }
strobe__tstate *strobe__threads_head(void) {
  STROBE_ASSERT(strobe__mutex_held(&g_threads_lock));
  return g_threads;
}

strobe__tstate *strobe__threads_head_unlocked(void) { return __atomic_load_n(&g_threads, __ATOMIC_ACQUIRE); }

static void misuse_add(strobe_misuse *into, const strobe_misuse *m) {
#define ADD(name) into->name += __atomic_load_n(&m->name, __ATOMIC_RELAXED);
  STROBE_MISUSE_MAP(ADD)
#undef ADD
}

void strobe__threads_unlink(strobe__tstate *t) {
  STROBE_ASSERT(strobe__mutex_held(&g_threads_lock)); /* and g_misuse_dead and the totals with it */
  for (strobe__tstate **p = &g_threads; *p; p = &(*p)->next) {
    if (*p == t) {
      *p = t->next;
      break;
    }
  }
  misuse_add(&g_misuse_dead, &t->misuse);
  g_written_dead += __atomic_load_n(&t->drained, __ATOMIC_RELAXED);
  g_unwound_dead += __atomic_load_n(&t->unwound, __ATOMIC_RELAXED);
  g_lost_dead += __atomic_load_n(&t->lost, __ATOMIC_RELAXED);
}

void strobe__thread_free(strobe__tstate *t) {
  if (!t) return;
  /* Old rings of GROW swaps the drain never finished (it finishes them first). */
  /* The ring it was made with is in its own mapping (its journal region, or journal.c >>heap). */
  strobe__event *jring = strobe__journal_ring(t);
  for (uint32_t i = t->retired_done; i < t->retired; i++)
    if (t->retire[i].ring != jring) free(t->retire[i].ring);
  if (t->ring != jring) free(t->ring);
  if (t->jnl)
    strobe__journal_tstate_free(t);
  else
    strobe__tstate_unmap(t);
}

#define BUMP(t, field) __atomic_fetch_add(&(t)->misuse.field, 1, __ATOMIC_RELAXED)

/* >>ring
 * The slow path writes at the slot reserve() returns and publishes once, so
 * a multi-slot event (a number and its payload) becomes visible whole.
 *
 * Memory ordering, as a weakly ordered CPU (aarch64) needs it; x86-64's
 * stores are ordered anyway (docs/platforms.md §Memory ordering):
 * - publish: an event's plain stores, then hot.cur stored with release
 *   (strobe__advance: stlr on aarch64; on x86-64 a plain add after a
 *   compiler barrier). The drain loads hot.cur with acquire, so every slot
 *   below the cursor it sees is whole.
 * - wrap: `wrap_at` is stored relaxed before the events at the ring's start
 *   and is published by the same release of hot.cur; the drain reads it only
 *   after its acquire of a cursor below `read`, i.e. after the wrap.
 * - reuse: the drain stores `read` with release once it has read (and, in
 *   the single-consumer run, rewritten) the slots below it; drain_pos loads
 *   it with acquire, so this thread's next stores into those slots cannot
 *   overtake the drain's loads or stores of them.
 * - grow: retire[] is filled, `retired` stored with release, then hot.cur
 *   moved into the new ring with release; the drain loads hot.cur, then
 *   `retired` (acquire both), so a cursor in the new ring brings the swap.
 * - exit: the last publish, then `exited` with release; the drain loads
 *   `exited` before hot.cur (acquire both), so an exited thread's cursor is
 *   final. Counters (`lost`, `drained`, misuse) are relaxed: they order nothing. */
static void drop(strobe__tstate *t, uint32_t n) {
  t->pending_lost += n;
  __atomic_fetch_add(&t->lost, n, __ATOMIC_RELAXED);
  wake_drain();
}

/* ENDs the ring must keep room for: open scopes whose BEGIN is in the
 * stream, which is also the depth the drain and readers see. */
static uint32_t owed(const strobe__tstate *t) { return depth_of(t) - t->no_end; }

static void put(strobe__event **at, uint64_t ts, uint32_t kind, uint32_t data) {
  strobe__event *e = (*at)++;
  e->ts = ts;
  e->kind = kind;
  e->data = data;
}

/* GROW: moves the producer to a ring twice the size, leaving the unread
 * events of the old one to the drain (probe.h, `retire`). Returns 0 when it
 * cannot: at ring_events_max or out of memory. The only allocation after a
 * thread attached, and only in this mode, which asks for it. */
static int grow(strobe__tstate *t) {
  uint64_t cap = 2u * t->ring_events;
  /* A journaled thread whose ring grows leaves its journal: recovery leaves it as the file has it
   * (docs/recording.md §Crash journal). */
  if (cap > t->ring_events_max || t->retired == STROBE__MAX_GROWS) return 0;
  strobe__event *ring = malloc(((size_t)cap + 1) * sizeof *ring); /* one spare slot: see drain_pos */
  if (!ring) return 0;
  STROBE_ASSERT(t->retired < STROBE__MAX_GROWS);
  __typeof__(t->retire[0]) *r = &t->retire[t->retired];
  r->ring = t->ring;
  r->final = t->hot.cur;
  r->wrap_at = t->wrap_at;
  r->next = ring;
  r->next_end = ring + cap;
  __atomic_store_n(&t->retired, t->retired + 1, __ATOMIC_RELEASE);
  __atomic_store_n(&t->ring, ring, __ATOMIC_RELAXED);
  __atomic_store_n(&t->ring_end, ring + cap, __ATOMIC_RELAXED);
  __atomic_store_n(&t->ring_events, cap, __ATOMIC_RELAXED);
  /* `wrap_at` keeps the old ring's value: a pass that took its snapshot
   * before this swap may still read it, and the new ring cannot wrap (and
   * store its own) before the drain has moved into it. */
  /* The drain, reading the cursor with acquire, then sees `retired` too. */
  __atomic_store_n(&t->hot.cur, ring, __ATOMIC_RELEASE);
  __atomic_fetch_add(&g_rings_grown, 1, __ATOMIC_RELAXED);
  wake_drain();
  return 1;
}

/* The ring is full: what strobe_desc.overflow says to do, here in the
 * slow path only, so the inline hot path never looks at the mode. Returns 1
 * when there may be room now (try again), 0 to drop. */
static int make_room(strobe__tstate *t) {
  /* A thread tracing calls grows its ring under DROP too (trace.h, keep_overflow). */
  if (t->overflow == STROBE_OVERFLOW_GROW || (t->overflow == STROBE_OVERFLOW_DROP && strobe__trace_grows()))
    return grow(t);
  if (t->overflow != STROBE_OVERFLOW_WAIT) return 0;
  int (*wait)(void) = __atomic_load_n(&g_wait, __ATOMIC_ACQUIRE);
  int rc = wait ? wait() : 0;
  if (rc) __atomic_fetch_add(&g_producer_waits, 1, __ATOMIC_RELAXED);
  return rc > 0;
}

/* Finds n contiguous slots while keeping `keep` more free after them for
 * the ENDs of open scopes, so the inline END never lacks room. Wraps to the
 * ring's start when its end is too near; when the ring is full, grows it or
 * waits for the drain if the overflow mode says so. When events were
 * dropped since the last LOST marker, writes one first if it fits too (an
 * END must never wait for it). Returns where to write, or NULL with the n
 * events counted lost. */
static strobe__event *reserve(strobe__tstate *t, uint32_t n, uint32_t keep, uint64_t now) {
  strobe__event *read, *cur;
  size_t need = (size_t)n + keep, want, room;
  for (;;) {
    read = drain_pos(t);
    cur = t->hot.cur;
    want = need + (t->pending_lost ? 1u : 0u);
    /* cur must stay below read once wrapped: equal means empty */
    room = cur >= read ? (size_t)(t->ring_end - cur) : (size_t)(read - cur) - 1;
    if (room < want && cur >= read && (size_t)(read - t->ring) > need) {
      __atomic_store_n(&t->wrap_at, cur, __ATOMIC_RELAXED);
      cur = t->ring;
      room = (size_t)(read - cur) - 1;
    }
    if (room >= need) break;
    if (!make_room(t)) {
      drop(t, n);
      refresh_limit(t);
      return NULL;
    }
  }
  size_t used = cur >= read ? (size_t)(cur - read) : t->ring_events - (size_t)(read - cur);
  if (used >= t->ring_events / 2) wake_drain();
  if (t->pending_lost && room >= want) {
    uint32_t lost = t->pending_lost > UINT32_MAX ? UINT32_MAX : (uint32_t)t->pending_lost;
    put(&cur, now, STROBE__EV_RING_LOST | (owed(t) << 8), lost);
    t->pending_lost = 0;
  }
  return cur;
}

static void publish(strobe__tstate *t, strobe__event *next) {
  __atomic_store_n(&t->hot.cur, next, __ATOMIC_RELEASE);
  refresh_limit(t);
}

int strobe__probe_rest_arm(void) {
  int pending = 0;
  __atomic_store_n(&g_resting, 1, __ATOMIC_SEQ_CST);
  strobe__threads_lock();
  for (strobe__tstate *t = g_threads; t; t = t->next) /* not the caller's own: the drain's gauges never wake it */
    if (&t->hot != strobe__tls && __atomic_load_n(&t->hot.limit, __ATOMIC_RELAXED) > 1) {
      __atomic_store_n(&t->hot.limit, 1, __ATOMIC_RELAXED);
      __atomic_store_n(&t->hot.num_limit, 0, __ATOMIC_RELAXED);
    }
  /* Events written inline since the drain's last pass, before the limits dropped, take no slow path. */
  for (strobe__tstate *t = g_threads; t && !pending; t = t->next)
    pending = &t->hot != strobe__tls &&
              __atomic_load_n(&t->hot.cur, __ATOMIC_ACQUIRE) != __atomic_load_n(&t->read, __ATOMIC_RELAXED);
  strobe__threads_unlock();
  return pending;
}

/* Frame words below 8 hold no scope (strobe.h). A slot whose guard is out
 * is never freed, so a stale guard can never match a later frame. */
enum {
  FRAME_HOLDER = 4, /* loop accumulators belong to the scope below: its END must take the slow path */
  FRAME_ORPHAN = 5, /* a block scope closed early (misuse); its slot waits for its guard's END */
  FRAME_COVER = 6,  /* above an ORPHAN on top, where its guard would otherwise match */
  FRAME_DONE = 7    /* closed; freed once nothing above it waits */
};

_Static_assert((FRAME_HOLDER & FRAME_ORPHAN & FRAME_COVER & FRAME_DONE & STROBE__FRAME_BOOKKEEPING) != 0,
               "every bookkeeping word sends the inline VALUE to the slow path");

static int is_scope(uintptr_t word) { return word > STROBE__FRAME_FLAGS; }

/* The innermost open scope's frame (bookkeeping skipped), or &stack[0]. */
static strobe__frame *innermost(const strobe__thread *h) {
  strobe__frame *f = h->top;
  while (f > h->stack && !is_scope(f->word)) f--;
  return f;
}

/* Bookkeeping takes the `sp` of the frame below it, so a BEGIN meets the
 * same C stack check as it would with that frame on top. */
static void push_bookkeeping(strobe__tstate *t, uintptr_t word) {
  strobe__frame *f = ++t->hot.top;
  f->word = word;
  f->sp = f[-1].sp;
  t->no_end++;
}

/* >>cumulative
 * Accumulators belong to the innermost scope (0: the thread's top level)
 * and are flushed just before its END, which the slow path writes: when
 * that scope is the stack top, the first accumulator pushes a HOLDER above
 * it so its END no longer matches. Top-level ones are flushed by frame
 * marks and at exit. */
static void flush_cumulative(strobe__tstate *t, uint32_t depth, uint64_t now, int emit) {
  for (uint32_t i = 0; i < t->ncum;) {
    strobe__cumulative *c = &t->cum[i];
    if (c->depth != depth) {
      i++;
      continue;
    }
    strobe__event *e;
    _Static_assert(STROBE__SLOTS_CUMULATIVE == 4, "CUMULATIVE carries count, total, min and max");
    if (emit && (e = reserve(t, 1 + STROBE__SLOTS_CUMULATIVE, owed(t), now)) != NULL) {
      put(&e, now, STROBE__EV_CUMULATIVE, c->site);
      put(&e, c->count, STROBE__EV_PAYLOAD, 0);
      put(&e, c->total, STROBE__EV_PAYLOAD, 0);
      put(&e, c->min, STROBE__EV_PAYLOAD, 0);
      put(&e, c->max, STROBE__EV_PAYLOAD, 0);
      publish(t, e);
    }
    t->cum[i] = t->cum[--t->ncum];
  }
}

static int owns_accumulators(const strobe__tstate *t, uint32_t depth) {
  for (uint32_t i = 0; i < t->ncum; i++)
    if (t->cum[i].depth == depth) return 1;
  return 0;
}

void strobe__cumulative_add(strobe_site *site, uint64_t t0, uint64_t t1) {
  strobe__tstate *t = attach();
  if (!t) return;
  int id = strobe_site_register(site);
  if (id < 0) return;
  strobe__frame *owner = innermost(&t->hot);
  uint32_t depth = (uint32_t)(owner - t->hot.stack);
  uint64_t d = t1 - t0;
  strobe__cumulative *c = NULL;
  for (uint32_t i = 0; i < t->ncum; i++)
    if (t->cum[i].site == (uint32_t)id && t->cum[i].depth == depth) c = &t->cum[i];
  if (!c) {
    int holder = depth && owner == t->hot.top;
    if (t->ncum == STROBE__MAX_CUMULATIVE || (holder && depth_of(t) >= STROBE_MAX_DEPTH)) {
      BUMP(t, cumulative_overflow);
      return;
    }
    if (holder) push_bookkeeping(t, FRAME_HOLDER);
    c = &t->cum[t->ncum++];
    *c = (strobe__cumulative){(uint32_t)id, depth, 0, 0, UINT64_MAX, 0};
  }
  c->count++;
  c->total += d;
  if (d < c->min) c->min = d;
  if (d > c->max) c->max = d;
}

/* >>scopes */

/* C stack pointers further apart than this are not one stack (a coroutine's,
 * a signal stack): no proof either way, the frame is taken as alive. */
#define SP_SPAN ((uintptr_t)1 << 26)

/* Whether a BEGIN or END at C stack pointer `sp` proves the frame's C frame
 * gone: it began strictly deeper on the same stack (docs/recording.md,
 * Unwinding). Explicit scopes and stages (sp HELD) are never proven dead. */
static int dead_below(const strobe__frame *f, uintptr_t sp) {
  uintptr_t at = f->sp & ~STROBE__SP_NESTED;
  return f->sp != STROBE__SP_HELD && at < sp && sp - at <= SP_SPAN;
}

/* Closes the frame at f in the stream: a scope gets the loop accumulators
 * it owns, then its END (`end_kind`: STROBE__EV_END, or STROBE__EV_UNWOUND
 * when its END will never run; withheld when its BEGIN was dropped). Its
 * slot becomes DONE, or ORPHAN for a block scope whose guard is still out
 * (`guard_back` 0: it is being closed early). Unwound frames are never
 * ORPHANs: their guards are gone with their C frames. */
static void close_frame(strobe__tstate *t, strobe__frame *f, uint64_t now, int guard_back, uint32_t end_kind) {
  uintptr_t word = f->word;
  int unwound = end_kind == STROBE__EV_UNWOUND;
  if (!is_scope(word)) {
    if (word != FRAME_ORPHAN || guard_back || unwound) f->word = FRAME_DONE;
    return;
  }
  int recorded = !(word & STROBE__FRAME_UNRECORDED);
  if (t->ncum) flush_cumulative(t, (uint32_t)(f - t->hot.stack), now, recorded);
  if (recorded) {
    strobe__event *e = reserve(t, 1, owed(t) - 1, now); /* its slot was kept free since its BEGIN */
    if (e) {
      e->ts = now;
      strobe__put_word(e, end_kind);
      publish(t, e + 1);
    }
    t->no_end++;
  } else {
    /* The BEGIN was dropped, so its END is withheld too: the stream stays balanced. */
    __atomic_fetch_add(&t->lost, 1, __ATOMIC_RELAXED);
  }
  if (unwound) __atomic_fetch_add(&t->unwound, 1, __ATOMIC_RELAXED);
  f->word = guard_back || unwound || (word & STROBE__FRAME_EXPLICIT) ? FRAME_DONE : FRAME_ORPHAN;
}

/* Frees the slots on top that nothing waits for, covers an ORPHAN left on
 * top, and gives a scope on top again whose accumulators were added under
 * bookkeeping its holder. */
static void settle_top(strobe__tstate *t) {
  while (t->hot.top > t->hot.stack && (t->hot.top->word == FRAME_DONE || t->hot.top->word == FRAME_COVER)) {
    t->hot.top--;
    t->no_end--;
  }
  if (t->hot.top->word == FRAME_ORPHAN) push_bookkeeping(t, FRAME_COVER);
  uint32_t depth = depth_of(t);
  if (is_scope(t->hot.top->word) && owns_accumulators(t, depth)) push_bookkeeping(t, FRAME_HOLDER);
}

/* Closes every frame from the top down to f (included) as unwound. */
static void unwind_down_to(strobe__tstate *t, strobe__frame *f, uint64_t now) {
  for (strobe__frame *p = t->hot.top; p >= f; p--) close_frame(t, p, now, 0, STROBE__EV_UNWOUND);
  settle_top(t);
}

static uintptr_t site_of(const strobe__frame *f) { return f->word & ~(uintptr_t)STROBE__FRAME_FLAGS; }

/* Whether a frame below f, down to `low`, is another instance of f's scope. */
static int repeated_below(const strobe__frame *f, const strobe__frame *low) {
  for (const strobe__frame *g = f - 1; g >= low; g--)
    if (is_scope(g->word) && site_of(g) == site_of(f)) return 1;
  return 0;
}

/* A BEGIN of `site` at C stack pointer `sp` closes as unwound the frames it
 * proves dead (docs/recording.md, Unwinding): from the top, frames that
 * began in deeper C frames; then, among frames of the BEGIN's own C frame,
 * an earlier instance of the same site (its BEGIN runs again, so its END
 * never will) and everything above it. The search ends at an explicit scope
 * or a stage, and at a scope repeated lower in the same C frame: that one
 * began after an unwinding the fast path did not see (a NESTED frame let it
 * through), so it and what is above it may be alive. Then, when the BEGIN
 * nests in a live frame of its own C frame, that frame is marked NESTED. */
static void unwind_dead(strobe__tstate *t, strobe_site *site, uintptr_t sp) {
  strobe__frame *cut = NULL, *f = t->hot.top, *low;
  for (; f > t->hot.stack && dead_below(f, sp); f--) cut = f;
  for (low = f; low > t->hot.stack + 1 && (low[-1].sp & ~STROBE__SP_NESTED) == sp; low--) {}
  for (; f >= low && f > t->hot.stack && (f->sp & ~STROBE__SP_NESTED) == sp; f--) {
    if (is_scope(f->word) && repeated_below(f, low)) break;
    if (is_scope(f->word) && site_of(f) == (uintptr_t)site) cut = f;
  }
  if (cut) unwind_down_to(t, cut, strobe__now());
  strobe__frame *top = t->hot.top;
  if (top > t->hot.stack && top->sp == sp) top->sp |= STROBE__SP_NESTED;
}

static uintptr_t begin_with(strobe_site *site, uint32_t flags, uintptr_t sp, uint64_t now);

uintptr_t strobe__begin_slow(strobe_site *site, uint32_t flags, uintptr_t sp) {
  return begin_with(site, flags, sp, strobe__now());
}

/* A BEGIN stamped `ts`, no later than now nor earlier than the thread's
 * last event (calltrace.c's deferred calls: probe.h). */
uintptr_t strobe__begin_at(strobe_site *site, uintptr_t sp, uint64_t ts) { return begin_with(site, 0, sp, ts); }

static uintptr_t begin_with(strobe_site *site, uint32_t flags, uintptr_t sp, uint64_t now) {
  strobe__tstate *t = attach();
  if (!t) return 0;
  adopt_maybe(t);
  if (sp != STROBE__SP_HELD) unwind_dead(t, site, sp);
  if (depth_of(t) >= STROBE_MAX_DEPTH) {
    BUMP(t, depth_overflow);
    return 0;
  }
  strobe__event *e = reserve(t, 1, owed(t) + 1, now);
  if (e) {
    e->ts = now;
    strobe__put_word(e, (uintptr_t)site); /* as the inline BEGIN writes it: the drain registers the site */
    publish(t, e + 1);
  } else {
    flags |= STROBE__FRAME_UNRECORDED;
    t->no_end++;
  }
  strobe__frame *f = ++t->hot.top;
  f->word = (uintptr_t)site | flags;
  f->sp = sp;
  return (uintptr_t)f | (flags & STROBE__FRAME_UNRECORDED ? STROBE__GUARD_SLOW : 0);
}

/* Closes the frames above f early, then f. Above f, a block scope that a
 * block's END (`block_end`) overtook was unwound (blocks end innermost
 * first, so only a longjmp or an exception skips one), and so was one that
 * began in a C frame deeper than an explicit END's `sp`; an explicit scope,
 * a stage, or a block scope of a live C frame is closed early as misuse. */
static void close_down_to(strobe__tstate *t, strobe__frame *f, int block_end, uintptr_t sp) {
  uint64_t now = strobe__now();
  for (strobe__frame *p = t->hot.top; p > f; p--) {
    /* Explicit scopes, stages and their bookkeeping (sp HELD) belong to no C frame. */
    if (p->sp != STROBE__SP_HELD && (block_end || dead_below(p, sp))) {
      close_frame(t, p, now, 0, STROBE__EV_UNWOUND);
      continue;
    }
    if (is_scope(p->word)) BUMP(t, unbalanced);
    close_frame(t, p, now, 0, STROBE__EV_END);
  }
  close_frame(t, f, now, 1, STROBE__EV_END);
  settle_top(t);
}

void strobe__end_slow(uintptr_t guard) {
  strobe__tstate *t = attached();
  if (!t) return;
  strobe__frame *f = (strobe__frame *)(guard & ~STROBE__GUARD_SLOW);
  if (f <= t->hot.stack || f > t->hot.top || !(is_scope(f->word) || f->word == FRAME_ORPHAN)) {
    BUMP(t, unbalanced); /* not a guard of this thread's open scopes */
    return;
  }
  if (f->word == FRAME_ORPHAN) BUMP(t, unbalanced); /* a STROBE_END closed this scope early */
  close_down_to(t, f, 1, 0);
}

void strobe__end_explicit(uintptr_t sp) {
  strobe__tstate *t = attached();
  if (!t) return;
  strobe__frame *f = t->hot.top;
  while (f > t->hot.stack && !(is_scope(f->word) && (f->word & STROBE__FRAME_EXPLICIT))) f--;
  if (f == t->hot.stack) {
    BUMP(t, end_without_begin);
    return;
  }
  close_down_to(t, f, 0, sp); /* block scopes of live C frames opened after the BEGIN are closed early: misuse */
}

/* >>depth: the explicit pair for setjmp users (strobe.h). */
int strobe_depth(void) {
  const strobe__thread *h = strobe__tls;
  int n = 0;
  for (const strobe__frame *f = h->stack + 1; f <= h->top; f++) n += is_scope(f->word);
  return n;
}

void strobe_unwind_to(int depth) {
  strobe__tstate *t = attached();
  if (!t || depth < 0) return;
  /* The lowest frame above the first `depth` scopes. */
  strobe__frame *f = t->hot.stack + 1;
  for (int n = 0; f <= t->hot.top; f++)
    if (is_scope(f->word) && n++ == depth) break;
  if (f <= t->hot.top) unwind_down_to(t, f, strobe__now());
}

/* >>numbers
 * The inline path (strobe__number, strobe.h) writes most numbers; this one
 * takes what it cannot: a full or wrapping ring, a value whose top frame is
 * bookkeeping or an unrecorded scope, a thread not attached yet. */
void strobe__number_slow(strobe_site *site, uint64_t bits) {
  strobe__tstate *t = attach();
  if (!t) return;
  adopt_maybe(t);
  uint32_t kind = site->kind == STROBE_SITE_FREE ? STROBE__EV_FREE : strobe__number_event(site->kind);
  if (!kind || (kind == STROBE__EV_FREE && strobe__tls_own)) return; /* not a number site: cannot come from the macros */
  if (kind == STROBE__EV_VALUE) {
    const strobe__frame *f = innermost(&t->hot);
    if (f == t->hot.stack) BUMP(t, value_without_scope);
    if (f == t->hot.stack || (f->word & STROBE__FRAME_UNRECORDED)) return;
  }
  uint64_t now = strobe__now();
  _Static_assert(STROBE__SLOTS_VALUE == 1 && STROBE__SLOTS_COUNTER == 1 && STROBE__SLOTS_GAUGE == 1 &&
                     STROBE__SLOTS_FREE == 1,
                 "a number carries its double (a free its address) in one slot");
  /* Near the ring's end, wrap now when the start has room, rather than come here for every
   * number that still fits before the end (the inline check keeps NUM_ROOM free). */
  strobe__event *read = drain_pos(t), *cur = t->hot.cur;
  uint32_t keep = owed(t);
  if (cur >= read && (size_t)(t->ring_end - cur) <= NUM_ROOM && (size_t)(read - t->ring) > NUM_ROOM + 1)
    keep = NUM_ROOM;
  strobe__event *e = reserve(t, 1 + STROBE__SLOTS_VALUE, keep, now);
  if (!e) return;
  /* As the inline path writes it: the drain registers the site, or counts the number lost when it cannot. */
  e->ts = now;
  strobe__put_word(e++, (uintptr_t)site);
  put(&e, bits, STROBE__EV_PAYLOAD, 0);
  publish(t, e);
}

/* An allocation (strobe.h >>allocations) the inline path could not write:
 * as a number's slow path, with the size in a second slot. Not on Strobe's
 * own threads (strobe__probe_own_thread): the drain's buffers are not the
 * application's memory, and recording them would feed the drain its own
 * work. */
void strobe__alloc_slow(strobe_site *pool, uint64_t addr, uint64_t size) {
  if (strobe__tls_own || pool->kind != STROBE_SITE_ALLOC) return; /* another kind cannot come from the macros */
  strobe__tstate *t = attach();
  if (!t) return;
  uint64_t now = strobe__now();
  _Static_assert(STROBE__SLOTS_ALLOC == 2, "an allocation carries its address and size");
  strobe__event *read = drain_pos(t), *cur = t->hot.cur;
  uint32_t keep = owed(t);
  if (cur >= read && (size_t)(t->ring_end - cur) <= NUM_ROOM + 1 && (size_t)(read - t->ring) > NUM_ROOM + 2)
    keep = NUM_ROOM + 1;
  strobe__event *e = reserve(t, 1 + STROBE__SLOTS_ALLOC, keep, now);
  if (!e) return;
  e->ts = now;
  strobe__put_word(e++, (uintptr_t)pool);
  put(&e, addr, STROBE__EV_PAYLOAD, 0);
  put(&e, size, STROBE__EV_PAYLOAD, 0);
  publish(t, e);
}

void strobe__message(strobe_site *site) {
  if (site && site->kind == STROBE_SITE_MESSAGE) strobe__site_event(site, STROBE__EV_MESSAGE); /* others cannot
                                                                                                 * come from the macros */
}

void strobe__probe_own_thread(void) { strobe__tls_own = 1; }

/* Mirrors of strobe__active (probe.h): the interposer's own copy, one load
 * nearer than the library's variable. */
#define MAX_MIRRORS 4
static uint32_t *g_mirrors[MAX_MIRRORS];
static uint32_t g_nmirrors;
static strobe__mutex g_mirrors_lock = STROBE__MUTEX_INIT;

int strobe__active_mirror(uint32_t *mirror) {
  int rc = STROBE_ELIMIT;
  strobe__mutex_lock(&g_mirrors_lock);
  if (g_nmirrors < MAX_MIRRORS) {
    g_mirrors[g_nmirrors++] = mirror;
    __atomic_store_n(mirror, __atomic_load_n(&strobe__active, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    rc = 0;
  }
  strobe__mutex_unlock(&g_mirrors_lock);
  return rc;
}

void strobe__active_changed(void) {
  strobe__mutex_lock(&g_mirrors_lock);
  for (uint32_t i = 0; i < g_nmirrors; i++)
    __atomic_store_n(g_mirrors[i], __atomic_load_n(&strobe__active, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
  strobe__mutex_unlock(&g_mirrors_lock);
}

/* An element attribution (strobe.h >>elements) the inline path could not
 * write: like a VALUE, it needs a recorded scope on top, and is one event
 * whose `ts` carries the id. */
void strobe__element_slow(strobe_site *type, uint64_t id) {
  strobe__tstate *t = attach();
  if (!t || type->kind != STROBE_SITE_ELEMENT) return; /* another kind cannot come from the macros */
  const strobe__frame *f = innermost(&t->hot);
  if (f == t->hot.stack) BUMP(t, value_without_scope);
  if (f == t->hot.stack || (f->word & STROBE__FRAME_UNRECORDED)) return;
  uint64_t now = strobe__now();
  strobe__event *e = reserve(t, 1, owed(t), now);
  if (!e) return;
  e->ts = id;
  strobe__put_word(e++, (uintptr_t)type);
  publish(t, e);
}

void strobe__site_event(strobe_site *site, uint32_t kind) {
  strobe__tstate *t = attach();
  if (!t) return;
  int id = strobe_site_register(site);
  if (id < 0) return;
  uint64_t now = strobe__now();
  strobe__event *e = reserve(t, 1, owed(t), now);
  if (!e) return;
  put(&e, now, kind, (uint32_t)id);
  publish(t, e);
}

void strobe__frame_mark(strobe_site *site) {
  strobe__tstate *t = attach();
  if (!t) return;
  int id = strobe_site_register(site);
  if (id < 0) return;
  uint64_t now = strobe__now();
  /* Loop bodies outside any scope are reported once per frame. */
  if (t->ncum) flush_cumulative(t, 0, now, 1);
  strobe__event *e = reserve(t, 1, owed(t), now);
  if (!e) return;
  put(&e, now, STROBE__EV_FRAME, (uint32_t)id);
  publish(t, e);
}

/* An operation event: its head and payload slots are reserved and
 * published together, so the drain never sees half of one. */
static void emit_slotted(uint32_t kind, uint64_t ts, uint32_t sub, const uint64_t *words, const uint32_t *datas,
                         uint32_t n) {
  strobe__tstate *t = attach();
  if (!t) return;
  strobe__event *e = reserve(t, 1 + n, owed(t), ts);
  if (!e) return;
  put(&e, ts, kind, sub | n << 8);
  for (uint32_t i = 0; i < n; i++) put(&e, words[i], STROBE__EV_PAYLOAD, datas[i]);
  publish(t, e);
}

void strobe__emit_op_event(uint64_t ts, uint32_t sub, const uint64_t *words, const uint32_t *datas, uint32_t n) {
  if (n <= STROBE__OPEV_MAX_SLOTS) emit_slotted(STROBE__EV_OP, ts, sub, words, datas, n);
}

void strobe__emit_gpu_event(uint64_t ts, uint32_t sub, const uint64_t *words, const uint32_t *datas, uint32_t n) {
  if (n <= STROBE__GPUEV_MAX_SLOTS) emit_slotted(STROBE__EV_GPU, ts, sub, words, datas, n);
}

/* `count` GPU events of one sub-kind with `slots` payload slots each, in one
 * reservation: a reader gets all of them or, when the ring is full, none
 * (each counted lost). */
int strobe__emit_gpu_batch(uint64_t ts, uint32_t sub, uint32_t slots, uint32_t count,
                           void (*fill)(void *ctx, uint32_t k, uint64_t *words, uint32_t *datas), void *ctx) {
  if (slots > STROBE__GPUEV_MAX_SLOTS || !count) return STROBE_EINVAL;
  strobe__tstate *t = attach();
  if (!t) return STROBE_ENOMEM;
  strobe__event *e = reserve(t, count * (1 + slots), owed(t), ts);
  if (!e) return STROBE_ELIMIT;
  uint64_t w[STROBE__GPUEV_MAX_SLOTS];
  uint32_t x[STROBE__GPUEV_MAX_SLOTS];
  for (uint32_t k = 0; k < count; k++) {
    fill(ctx, k, w, x);
    put(&e, ts, STROBE__EV_GPU, sub | slots << 8);
    for (uint32_t i = 0; i < slots; i++) put(&e, w[i], STROBE__EV_PAYLOAD, x[i]);
  }
  publish(t, e);
  return 0;
}

/* >>exit
 * A thread that exits (pthread_exit, cancellation) with block scopes open
 * skipped their ENDs: they are closed as unwound, from the top down to the
 * first explicit scope. Scopes of STROBE_BEGIN left open are misuse and stay
 * unfinished in the stream, with everything below them. */
/* Closes what a thread (or a destroyed fiber) leaves open: block scopes as
 * unwound, top-level loop accumulators flushed, STROBE_BEGIN scopes counted. */
static void close_at_exit(strobe__tstate *t) {
  strobe__frame *f = t->hot.top;
  while (f > t->hot.stack && !(is_scope(f->word) && (f->word & STROBE__FRAME_EXPLICIT))) f--;
  if (f < t->hot.top) unwind_down_to(t, f + 1, strobe__now());
  if (t->ncum) flush_cumulative(t, 0, strobe__now(), 1);
  uint32_t open = 0;
  for (const strobe__frame *p = t->hot.stack + 1; p <= t->hot.top; p++) open += is_scope(p->word);
  __atomic_fetch_add(&t->misuse.open_at_exit, open, __ATOMIC_RELAXED);
}

static void fiber_release_current(void);

void strobe__thread_altstack(void) {
  if (tls_altstack_tried) return;
  tls_altstack_tried = 1;
  tls_altstack = strobe__altstack_add();
}

static void on_thread_exit(void *arg) {
  strobe__tstate *t = arg;
  fiber_release_current(); /* a thread that exits inside a fiber leaves it (>>fibers) */
  close_at_exit(t);
  strobe__altstack_free(tls_altstack);
  tls_altstack = NULL;
  strobe__tls = &g_detached;
  tls_exiting = 1;
  __atomic_store_n(&t->exited, 1, __ATOMIC_RELEASE);
  wake_drain();
}

/* >>fibers (docs/recording.md §Fibers)
 * A fiber is a thread state of its own (its ring, scope stack, loop
 * accumulators, misuse counts) that no OS thread owns: the drain walks it
 * like a thread's and captures give it a lane of its own (os_tid 0).
 * Entering one points strobe__tls at it, so the inline hot path is the same
 * instructions whoever runs it; leaving points strobe__tls back at the
 * thread's own state. `fiber_busy` (a compare-and-swap) keeps one thread at
 * a time inside a fiber, so each ring still has exactly one producer; the
 * application's own hand-off of the coroutine between threads (a queue, a
 * lock) orders one thread's events before the next's. */
static _Thread_local strobe__tstate *tls_fiber __attribute__((tls_model("initial-exec"))); /* the fiber it is inside, or NULL */
static _Thread_local strobe__thread *tls_fiber_saved __attribute__((tls_model("initial-exec"))); /* strobe__tls before */

#define FIBER_RING_DIVISOR 8u /* a fiber's ring: the thread ring's eighth, at least 1024 events */

static void fiber_release_current(void) {
  strobe__tstate *f = tls_fiber;
  if (!f) return;
  strobe__tls = tls_fiber_saved;
  tls_fiber = NULL;
  __atomic_store_n(&f->fiber_busy, 0, __ATOMIC_RELEASE);
}

int strobe_fiber_create(const char *name, size_t len, strobe_fiber **out) {
  if (!out) return STROBE_EINVAL;
  *out = NULL;
  if (!name || len == 0 || len >= STROBE__THREAD_NAME_MAX || memchr(name, 0, len)) return STROBE_EINVAL;
  pthread_once(&g_once, init_once);
  strobe__mutex_lock(&g_desc_lock);
  g_desc_frozen = 1;
  resolve_desc(&g_desc);
  uint32_t cap = g_desc.ring_events / FIBER_RING_DIVISOR;
  uint32_t overflow = g_desc.overflow, ring_max = g_desc.ring_events_max, crash = g_desc.crash_handler;
  strobe__mutex_unlock(&g_desc_lock);
  if (crash) strobe__thread_altstack(); /* the crash handler then runs when this thread overflows its stack */
  if (cap < 1024u) cap = 1024u;
  strobe__tstate *t = tstate_new(cap, 1);
  if (!t) return STROBE_ENOMEM;
  t->overflow = overflow;
  t->ring_events_max = ring_max;
  t->os_tid = 0;
  t->fiber = 1;
  memcpy(t->name, name, len);
  t->name[len] = 0;
  refresh_limit(t);
  strobe__mutex_lock(&g_threads_lock);
  t->index = g_threads_seen++;
  t->name_gen = 1;
  t->next = g_threads;
  g_threads = t;
  strobe__mutex_unlock(&g_threads_lock);
  strobe__journal_tstate_ready(t);
  *out = (strobe_fiber *)t;
  return 0;
}

int strobe_fiber_enter(strobe_fiber *fiber) {
  strobe__tstate *f = (strobe__tstate *)fiber;
  if (!f || !f->fiber) return STROBE_EINVAL;
  if (f == tls_fiber) return 0;
  if (tls_exiting) return STROBE_ESTATE;
  uint32_t idle = 0;
  if (!__atomic_compare_exchange_n(&f->fiber_busy, &idle, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
    return STROBE_EBUSY;
  strobe__thread *saved = tls_fiber ? tls_fiber_saved : strobe__tls;
  fiber_release_current(); /* from one fiber straight into another */
  tls_fiber_saved = saved;
  tls_fiber = f;
  strobe__tls = &f->hot;
  return 0;
}

int strobe_fiber_leave(void) {
  if (!tls_fiber) return STROBE_ESTATE;
  fiber_release_current();
  return 0;
}

strobe_fiber *strobe_fiber_query_current(void) { return (strobe_fiber *)tls_fiber; }

int strobe_fiber_destroy(strobe_fiber *fiber) {
  strobe__tstate *f = (strobe__tstate *)fiber;
  if (!f) return 0;
  if (!f->fiber) return STROBE_EINVAL;
  uint32_t idle = 0;
  if (!__atomic_compare_exchange_n(&f->fiber_busy, &idle, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
    return STROBE_EBUSY;
  close_at_exit(f);
  __atomic_store_n(&f->exited, 1, __ATOMIC_RELEASE); /* the drain delivers what is left, then frees it */
  wake_drain();
  return 0;
}

/* >>fork (probe.h; docs/recording.md §Fork) */
void strobe__threads_fork(int phase) {
  if (phase == STROBE__FORK_PREPARE) {
    strobe__mutex_lock(&g_threads_lock);
    strobe__mutex_lock(&g_desc_lock);
    return;
  }
  if (phase == STROBE__FORK_CHILD) {
    /* Only the caller's state (its own, or the fiber it is in) and idle fibers stay. The others' threads
     * are not in the child, and fork copied their rings while they wrote: a cursor may be ahead of the
     * slots the child got. Left unread and unfreed (their memory is the parent's copy-on-write pages). */
    const strobe__thread *own = tls_fiber ? tls_fiber_saved : strobe__tls;
    strobe__tstate **p = &g_threads;
    while (*p) {
      strobe__tstate *t = *p;
      int keep = &t->hot == own || t == tls_fiber || (t->fiber && !__atomic_load_n(&t->fiber_busy, __ATOMIC_RELAXED));
      if (keep) {
        if (&t->hot == own) t->os_tid = strobe__host_tid();
        p = &t->next;
      } else {
        *p = t->next;
      }
    }
  }
  strobe__mutex_unlock(&g_desc_lock);
  strobe__mutex_unlock(&g_threads_lock);
}

/* >>queries */
int strobe_thread_set_name(const char *name) {
  if (!name || !name[0]) return STROBE_EINVAL;
  strobe__tstate *t = attach();
  if (!t) return STROBE_ENOMEM;
  /* The drain reads the name under the thread list lock. */
  strobe__mutex_lock(&g_threads_lock);
  strncpy(t->name, name, sizeof t->name - 1);
  t->name[sizeof t->name - 1] = 0;
  t->name_gen++;
  strobe__mutex_unlock(&g_threads_lock);
  return 0;
}

const strobe_site *strobe_thread_query_scope(void) {
  const strobe__frame *f = innermost(strobe__tls);
  return f == strobe__tls->stack ? NULL : (const strobe_site *)(f->word & ~(uintptr_t)STROBE__FRAME_FLAGS);
}

strobe_misuse strobe_query_misuse(void) {
  strobe_misuse m = {0};
  strobe__mutex_lock(&g_threads_lock);
  m = g_misuse_dead;
  for (strobe__tstate *t = g_threads; t; t = t->next) misuse_add(&m, &t->misuse);
  strobe__mutex_unlock(&g_threads_lock);
  strobe__intern_misuse(&m);
  return m;
}

strobe_misuse strobe__misuse_since(const strobe_misuse *base) {
  strobe_misuse m = strobe_query_misuse();
#define SUB(name) m.name -= base->name;
  STROBE_MISUSE_MAP(SUB)
#undef SUB
  return m;
}

/* Events published but not yet drained. The three positions are read at
 * slightly different moments, so this is a close estimate, never negative. */
static uint64_t in_ring(strobe__tstate *t) {
  strobe__event *read = __atomic_load_n(&t->read, __ATOMIC_ACQUIRE);
  strobe__event *cur = __atomic_load_n(&t->hot.cur, __ATOMIC_ACQUIRE);
  strobe__event *wrap = __atomic_load_n(&t->wrap_at, __ATOMIC_RELAXED);
  uintptr_t ring = (uintptr_t)__atomic_load_n(&t->ring, __ATOMIC_RELAXED);
  uintptr_t end = (uintptr_t)__atomic_load_n(&t->ring_end, __ATOMIC_RELAXED);
  /* In the middle of a GROW swap the positions are in different rings. */
  if ((uintptr_t)read < ring || (uintptr_t)read > end || (uintptr_t)cur < ring || (uintptr_t)cur > end) return 0;
  if (cur >= read) return (uint64_t)(cur - read);
  return wrap >= read ? (uint64_t)(wrap - read) + (uint64_t)((uintptr_t)cur - ring) / sizeof *cur : 0;
}

strobe_event_stats strobe_query_event_stats(void) {
  strobe_event_stats s = {0};
  strobe__mutex_lock(&g_threads_lock);
  s.events_written = g_written_dead;
  s.events_lost = g_lost_dead;
  s.scopes_unwound = g_unwound_dead;
  s.threads_seen = g_threads_seen;
  s.rings_grown = __atomic_load_n(&g_rings_grown, __ATOMIC_RELAXED);
  s.producer_waits = __atomic_load_n(&g_producer_waits, __ATOMIC_RELAXED);
  for (strobe__tstate *t = g_threads; t; t = t->next) {
    s.events_written += __atomic_load_n(&t->drained, __ATOMIC_RELAXED) + in_ring(t);
    s.events_lost += __atomic_load_n(&t->lost, __ATOMIC_RELAXED);
    s.scopes_unwound += __atomic_load_n(&t->unwound, __ATOMIC_RELAXED);
  }
  strobe__mutex_unlock(&g_threads_lock);
  return s;
}

/* >>cost
 * The producer's cost per event (docs/recording.md, Cost): a mixed sequence
 * run through the real hot path into a scratch thread state whose ring has
 * the real ring's size, so the figure carries what a recording thread
 * pays: the ring's memory traffic (a lap streams through megabytes, not one
 * cache-hot page), the slow paths the limit forces (depth, ring middle,
 * wrap), and values, counters and gauges beside the scopes. The drain is
 * played by moving the scratch ring's read position after each unit; the
 * drain's own cost is measured where it runs (src/collect/drain.c).
 *
 * The unit is the bench's mixed workload (bench/bench_cost.c): 25 times a
 * scope holding a scope that holds a scope with a value and a sibling
 * scope, then a counter and a gauge: 100 scopes, 227 events. It calls what
 * the macros call (strobe.h >>macros); the two must stay in step. */
#define COST_UNIT_SCOPES 100u
#define COST_UNIT_EVENTS 227u
#define COST_UNIT_SLOTS 254u /* 200 scope events, and 27 numbers of 2 slots each */
#define COST_LAPS 5          /* the figure is the median lap's */
#define COST_RING_MAX 1048576u /* events: a larger configured ring is calibrated at this size (16 MiB) */

#define COST_SITE(name, kind) \
  {(name), "strobe", NULL, __FILE__, "strobe__measure_cost", __LINE__, (kind), 0, STROBE_UNIT_NONE | STROBE__NUM_F64 << STROBE__NUM_SHIFT, 0}
static strobe_site g_cost_sites[6] = {COST_SITE("strobe_calibration_outer", STROBE_SITE_SCOPE),
                                      COST_SITE("strobe_calibration_mid", STROBE_SITE_SCOPE),
                                      COST_SITE("strobe_calibration_leaf", STROBE_SITE_SCOPE),
                                      COST_SITE("strobe_calibration_value", STROBE_SITE_VALUE),
                                      COST_SITE("strobe_calibration_counter", STROBE_SITE_COUNTER),
                                      COST_SITE("strobe_calibration_gauge", STROBE_SITE_GAUGE)};

/* What STROBE_SCOPE, STROBE_VALUE, STROBE_COUNTER_ADD and STROBE_GAUGE_SET
 * call once their gate is open (strobe.h >>macros). */
__attribute__((noinline)) static void cost_unit(strobe__tstate *t, uint32_t k) {
  strobe_site *s = g_cost_sites;
  for (uint32_t i = 0; i < 25; i++) {
    uintptr_t a = strobe__begin(&s[0]);
    uintptr_t b = strobe__begin(&s[1]);
    uintptr_t c = strobe__begin(&s[2]);
    strobe__number(&s[3], strobe__f64_bits((double)(k + i)), 1);
    strobe__end(c);
    c = strobe__begin(&s[2]);
    strobe__end(c);
    strobe__end(b);
    strobe__end(a);
  }
  strobe__number(&s[4], strobe__f64_bits(1.0), 0);
  strobe__number(&s[5], strobe__f64_bits((double)k), 0);
  /* The drain has read everything: the next unit finds the ring free. */
  __atomic_store_n(&t->read, t->hot.cur, __ATOMIC_RELEASE);
}

/* The same unit with the explicit forms, as STROBE_BEGIN and STROBE_END call
 * them once their gate is open (strobe.h >>macros): what a capture that an
 * interpreter writes from its call and return hooks pays per scope. */
__attribute__((noinline)) static void cost_unit_explicit(strobe__tstate *t, uint32_t k) {
  strobe_site *s = g_cost_sites;
  for (uint32_t i = 0; i < 25; i++) {
    strobe__begin_explicit(&s[0]);
    strobe__begin_explicit(&s[1]);
    strobe__begin_explicit(&s[2]);
    strobe__number(&s[3], strobe__f64_bits((double)(k + i)), 1);
    strobe__end_explicit_inline();
    strobe__begin_explicit(&s[2]);
    strobe__end_explicit_inline();
    strobe__end_explicit_inline();
    strobe__end_explicit_inline();
  }
  strobe__number(&s[4], strobe__f64_bits(1.0), 0);
  strobe__number(&s[5], strobe__f64_bits((double)k), 0);
  __atomic_store_n(&t->read, t->hot.cur, __ATOMIC_RELEASE);
}

/* CPU time, not wall time: a lap preempted by other work on a busy machine
 * is not charged for the time it did not run. */
static uint64_t thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

strobe__cost strobe__measure_cost(void) {
  /* The clock's calibration too, while the caller is setting up: a session's
   * first read must not pay it between two of its timestamps. */
  (void)strobe__clock();
  static strobe__mutex lock = STROBE__MUTEX_INIT;
  static strobe__cost cached; /* measured once per process, under `lock` */
  strobe__mutex_lock(&lock);
  strobe__cost out = cached;
  if (out.event_ns > 0 || !STROBE__PROFILING) goto done;
  for (int i = 0; i < 6; i++)
    if (strobe_site_register(&g_cost_sites[i]) < 0) goto done;
  uint32_t cap = strobe_query_desc().ring_events;
  if (cap > COST_RING_MAX) cap = COST_RING_MAX;
  strobe__tstate *t = tstate_new(cap, 0);
  if (!t) goto done;
  refresh_limit(t);
  strobe__thread *saved = strobe__tls;
  strobe__tls = &t->hot; /* never linked into the thread list: no drain sees it */
  uint32_t units = cap / COST_UNIT_SLOTS;
  uint64_t lap[COST_LAPS + 1], xlap[COST_LAPS + 1];
  for (int l = 0; l <= COST_LAPS; l++) { /* lap 0 touches the ring's pages once, untimed */
    uint64_t a = thread_cpu_ns();
    for (uint32_t u = 0; u < units; u++) cost_unit(t, u);
    uint64_t b = thread_cpu_ns();
    for (uint32_t u = 0; u < units; u++) cost_unit_explicit(t, u); /* laps alternate: one machine state for both */
    xlap[l] = thread_cpu_ns() - b;
    lap[l] = b - a;
  }
  strobe__tls = saved;
  uint64_t lost = t->lost;
  strobe__tstate_unmap(t);
  if (lost) goto done; /* the scratch ring is emptied after every unit: cannot happen */
  qsort(lap + 1, COST_LAPS, sizeof lap[0], cmp_u64);
  qsort(xlap + 1, COST_LAPS, sizeof xlap[0], cmp_u64);
  double ns = (double)lap[1 + COST_LAPS / 2];
  out.explicit_scope_ns = (double)xlap[1 + COST_LAPS / 2] / ((double)units * COST_UNIT_SCOPES);
  out.event_ns = ns / ((double)units * COST_UNIT_EVENTS);
  out.scope_ns = ns / ((double)units * COST_UNIT_SCOPES);
  out.events_per_scope = (double)COST_UNIT_EVENTS / COST_UNIT_SCOPES;
  cached = out;
done:
  strobe__mutex_unlock(&lock);
  return out;
}
