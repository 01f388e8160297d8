/*
 * thread.c — per-thread recording state and the probe's slow paths.
 *
 * Owns: attaching a thread (its ring, allocated once on its first event),
 * the thread list the drain walks, thread names, the scope stack's misuse
 * rules, cumulative loop accumulators, numeric events, frame marks, the
 * thread-exit hook, and the self-measured overhead loop.
 *
 * Must never: block on anything the drain holds while the hot path runs,
 * allocate after a thread is attached, or write another thread's state
 * (each ring has exactly one producer).
 *
 * Contents: @globals @attach @ring @scopes @numbers @cumulative @exit @queries @overhead
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collect/collect.h"
#include "platform/clock.h"

/* @globals */
uint32_t strobe__active;
_Thread_local strobe__thread *strobe__tls __attribute__((tls_model("initial-exec")));

static _Thread_local int tls_exiting; /* set by the exit hook: no re-attach while TLS is torn down */

#define DEFAULT_RING_EVENTS 262144u /* 4 MiB per thread: ~2.5 ms of a thread scoping flat out, and
                                     * ~250 ms of a thread doing real work between scopes */
#define DEFAULT_DRAIN_MS 2u

static strobe_desc g_desc;
static int g_desc_frozen;
static pthread_mutex_t g_desc_lock = PTHREAD_MUTEX_INITIALIZER;

static pthread_mutex_t g_threads_lock = PTHREAD_MUTEX_INITIALIZER;
static strobe__tstate *g_threads;
static uint32_t g_threads_seen;
static strobe_misuse g_misuse_dead; /* from freed threads, under g_threads_lock */
static uint64_t g_written_dead, g_lost_dead;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_key_t g_key;

static void resolve_desc(strobe_desc *d) {
  if (!d->ring_events) d->ring_events = DEFAULT_RING_EVENTS;
  if (!d->drain_interval_ms) d->drain_interval_ms = DEFAULT_DRAIN_MS;
}

int strobe_setup(const strobe_desc *desc) {
  if (!desc) return STROBE_EINVAL;
  strobe_desc d = *desc;
  resolve_desc(&d);
  if (d.ring_events < 1024 || d.ring_events > 16777216 || (d.ring_events & (d.ring_events - 1)))
    return STROBE_EINVAL;
  if (d.drain_interval_ms > 1000) return STROBE_EINVAL;
  pthread_mutex_lock(&g_desc_lock);
  int rc = g_desc_frozen ? STROBE_EBUSY : 0;
  if (!rc) g_desc = d;
  pthread_mutex_unlock(&g_desc_lock);
  return rc;
}

strobe_desc strobe_query_desc(void) {
  pthread_mutex_lock(&g_desc_lock);
  strobe_desc d = g_desc;
  pthread_mutex_unlock(&g_desc_lock);
  resolve_desc(&d);
  return d;
}

int strobe_profiling_available(void) { return STROBE__PROFILING; }

/* @attach */
static void on_thread_exit(void *arg);

static void init_once(void) { (void)pthread_key_create(&g_key, on_thread_exit); }

static void refresh_limit(strobe__tstate *t) {
  uint64_t read = __atomic_load_n(&t->read, __ATOMIC_ACQUIRE);
  uint64_t half = read + t->ring_events / 2;
  /* Stopping at the half mark sends the producer through the slow path once,
   * where it wakes the drain before the ring can fill. */
  t->hot.limit = t->hot.pos < half ? half : read + t->ring_events;
}

static strobe__tstate *attach(void) {
  if (strobe__tls) return (strobe__tstate *)strobe__tls;
  if (tls_exiting) return NULL;
  pthread_once(&g_once, init_once);
  pthread_mutex_lock(&g_desc_lock);
  g_desc_frozen = 1;
  resolve_desc(&g_desc);
  uint32_t cap = g_desc.ring_events;
  pthread_mutex_unlock(&g_desc_lock);

  strobe__tstate *t = calloc(1, sizeof *t);
  strobe__event *ring = malloc((size_t)cap * sizeof *ring);
  if (!t || !ring) {
    free(t);
    free(ring);
    return NULL;
  }
  t->hot.ring = ring;
  t->hot.mask = cap - 1u;
  t->ring_events = cap;
  t->os_tid = (uint64_t)syscall(SYS_gettid);
  pthread_mutex_lock(&g_threads_lock);
  t->index = g_threads_seen++;
  t->next = g_threads;
  g_threads = t;
  pthread_mutex_unlock(&g_threads_lock);
  (void)pthread_setspecific(g_key, t);
  refresh_limit(t);
  strobe__tls = &t->hot;
  return t;
}

void strobe__threads_lock(void) { pthread_mutex_lock(&g_threads_lock); }
void strobe__threads_unlock(void) { pthread_mutex_unlock(&g_threads_lock); }
strobe__tstate *strobe__threads_head(void) { return g_threads; }

static void misuse_add(strobe_misuse *into, const strobe_misuse *m) {
  into->end_without_begin += __atomic_load_n(&m->end_without_begin, __ATOMIC_RELAXED);
  into->unbalanced += __atomic_load_n(&m->unbalanced, __ATOMIC_RELAXED);
  into->open_at_exit += __atomic_load_n(&m->open_at_exit, __ATOMIC_RELAXED);
  into->depth_overflow += __atomic_load_n(&m->depth_overflow, __ATOMIC_RELAXED);
  into->value_without_scope += __atomic_load_n(&m->value_without_scope, __ATOMIC_RELAXED);
  into->cumulative_overflow += __atomic_load_n(&m->cumulative_overflow, __ATOMIC_RELAXED);
}

void strobe__threads_unlink(strobe__tstate *t) {
  for (strobe__tstate **p = &g_threads; *p; p = &(*p)->next) {
    if (*p == t) {
      *p = t->next;
      break;
    }
  }
  misuse_add(&g_misuse_dead, &t->misuse);
  g_written_dead += __atomic_load_n(&t->hot.pos, __ATOMIC_ACQUIRE);
  g_lost_dead += __atomic_load_n(&t->lost, __ATOMIC_RELAXED);
}

void strobe__thread_free(strobe__tstate *t) {
  if (!t) return;
  free(t->hot.ring);
  free(t);
}

#define BUMP(t, field) __atomic_fetch_add(&(t)->misuse.field, 1, __ATOMIC_RELAXED)

/* @ring
 * The slow path writes at t->hot.pos onwards and publishes once, so a
 * multi-slot event (a number and its payload) becomes visible whole. */
static void drop(strobe__tstate *t, uint32_t n) {
  t->pending_lost += n;
  __atomic_fetch_add(&t->lost, n, __ATOMIC_RELAXED);
  strobe__drain_wake();
}

/* Depth as the reader sees it: open frames whose BEGIN is in the stream. */
static uint32_t recorded_depth(const strobe__tstate *t) {
  uint32_t d = 0;
  for (uint32_t i = 0; i < t->hot.depth; i++) d += !(t->hot.stack[i].flags & STROBE__FRAME_UNRECORDED);
  return d;
}

static void put(strobe__tstate *t, uint64_t *pos, uint64_t ts, uint32_t kind, uint32_t data) {
  strobe__event *e = &t->hot.ring[*pos & t->hot.mask];
  e->ts = ts;
  e->kind = kind;
  e->data = data;
  (*pos)++;
}

/* Reserves n slots (plus a LOST marker when events were dropped since the
 * last one) while keeping `keep` more free for the ENDs of open scopes, so
 * the inline END path never lacks room. Returns the position to write at
 * plus one, or 0 with the loss counted. */
static uint64_t reserve(strobe__tstate *t, uint32_t n, uint32_t keep, uint64_t now) {
  uint64_t read = __atomic_load_n(&t->read, __ATOMIC_ACQUIRE);
  uint64_t pos = t->hot.pos;
  uint32_t need = n + keep + (t->pending_lost ? 1u : 0u);
  if (pos + need - read > t->ring_events) {
    drop(t, n);
    refresh_limit(t);
    return 0;
  }
  if (pos - read >= t->ring_events / 2) strobe__drain_wake();
  if (t->pending_lost) {
    uint32_t lost = t->pending_lost > UINT32_MAX ? UINT32_MAX : (uint32_t)t->pending_lost;
    put(t, &pos, now, STROBE__EV_LOST | (recorded_depth(t) << 8), lost);
    t->pending_lost = 0;
  }
  return pos + 1;
}

static void publish(strobe__tstate *t, uint64_t pos) {
  __atomic_store_n(&t->hot.pos, pos, __ATOMIC_RELEASE);
  refresh_limit(t);
}

/* @cumulative */
static void flush_cumulative(strobe__tstate *t, uint32_t depth, uint64_t now, int emit) {
  for (uint32_t i = 0; i < t->ncum;) {
    strobe__cumulative *c = &t->cum[i];
    if (c->depth != depth) {
      i++;
      continue;
    }
    uint64_t pos;
    if (emit && (pos = reserve(t, 5, t->hot.depth, now)) != 0) {
      pos--;
      put(t, &pos, now, STROBE__EV_CUMULATIVE, c->site);
      put(t, &pos, c->count, STROBE__EV_PAYLOAD, 0);
      put(t, &pos, c->total, STROBE__EV_PAYLOAD, 0);
      put(t, &pos, c->min, STROBE__EV_PAYLOAD, 0);
      put(t, &pos, c->max, STROBE__EV_PAYLOAD, 0);
      publish(t, pos);
    }
    t->cum[i] = t->cum[--t->ncum];
  }
}

void strobe__cumulative_add(strobe_site *site, uint64_t t0, uint64_t t1) {
  strobe__tstate *t = attach();
  if (!t) return;
  int id = strobe_site_register(site);
  if (id < 0) return;
  uint32_t depth = t->hot.depth;
  uint64_t d = t1 - t0;
  strobe__cumulative *c = NULL;
  for (uint32_t i = 0; i < t->ncum; i++)
    if (t->cum[i].site == (uint32_t)id && t->cum[i].depth == depth) c = &t->cum[i];
  if (!c) {
    if (t->ncum == STROBE__MAX_CUMULATIVE) {
      BUMP(t, cumulative_overflow);
      return;
    }
    c = &t->cum[t->ncum++];
    *c = (strobe__cumulative){(uint32_t)id, depth, 0, 0, UINT64_MAX, 0};
    if (depth) t->hot.stack[depth - 1].flags |= STROBE__FRAME_HAS_CUMULATIVE;
  }
  c->count++;
  c->total += d;
  if (d < c->min) c->min = d;
  if (d > c->max) c->max = d;
}

/* @scopes */
uint32_t strobe__begin_slow(strobe_site *site, uint32_t flags) {
  strobe__tstate *t = attach();
  if (!t) return 0;
  int id = strobe_site_register(site);
  if (id < 0) return 0;
  if (t->hot.depth >= STROBE_MAX_DEPTH) {
    BUMP(t, depth_overflow);
    return 0;
  }
  uint64_t now = strobe__now();
  uint64_t pos = reserve(t, 1, t->hot.depth + 1, now);
  if (pos) {
    pos--;
    put(t, &pos, now, STROBE__EV_BEGIN, (uint32_t)id);
    publish(t, pos);
  } else {
    flags |= STROBE__FRAME_UNRECORDED;
  }
  t->hot.stack[t->hot.depth] = (strobe__frame){(uint32_t)id, flags};
  return ++t->hot.depth;
}

static void close_top(strobe__tstate *t, uint64_t now) {
  uint32_t d = t->hot.depth;
  strobe__frame *f = &t->hot.stack[d - 1];
  int recorded = !(f->flags & STROBE__FRAME_UNRECORDED);
  if (f->flags & STROBE__FRAME_HAS_CUMULATIVE) flush_cumulative(t, d, now, recorded);
  if (recorded) {
    uint64_t pos = reserve(t, 1, d - 1, now); /* its own slot was kept free since its BEGIN */
    if (pos) {
      pos--;
      put(t, &pos, now, STROBE__EV_END, f->site);
      publish(t, pos);
    }
  } else {
    /* The BEGIN was dropped, so its END is withheld too: the stream stays balanced. */
    __atomic_fetch_add(&t->lost, 1, __ATOMIC_RELAXED);
  }
  t->hot.depth = d - 1;
}

void strobe__end_slow(uint32_t guard) {
  strobe__tstate *t = (strobe__tstate *)strobe__tls;
  if (!t) return;
  if (t->hot.depth < guard) {
    BUMP(t, unbalanced); /* a stray STROBE_END already closed this scope */
    return;
  }
  uint64_t now = strobe__now();
  while (t->hot.depth > guard) {
    BUMP(t, unbalanced); /* a STROBE_BEGIN inside this block was never ended */
    close_top(t, now);
  }
  close_top(t, now);
}

void strobe__end_explicit(void) {
  strobe__tstate *t = (strobe__tstate *)strobe__tls;
  if (!t) return;
  uint32_t k = t->hot.depth;
  while (k > 0 && !(t->hot.stack[k - 1].flags & STROBE__FRAME_EXPLICIT)) k--;
  if (k == 0) {
    BUMP(t, end_without_begin);
    return;
  }
  uint64_t now = strobe__now();
  while (t->hot.depth > k) {
    BUMP(t, unbalanced); /* a block scope opened after the BEGIN is closed early */
    close_top(t, now);
  }
  close_top(t, now);
}

/* @numbers */
void strobe__emit_number(strobe_site *site, double number) {
  strobe__tstate *t = attach();
  if (!t) return;
  int id = strobe_site_register(site);
  if (id < 0) return;
  uint32_t kind = site->kind == STROBE_SITE_VALUE     ? STROBE__EV_VALUE
                  : site->kind == STROBE_SITE_COUNTER ? STROBE__EV_COUNTER
                                                      : STROBE__EV_GAUGE;
  if (kind == STROBE__EV_VALUE && (t->hot.depth == 0 ||
                                   (t->hot.stack[t->hot.depth - 1].flags & STROBE__FRAME_UNRECORDED))) {
    if (t->hot.depth == 0) BUMP(t, value_without_scope);
    return;
  }
  uint64_t now = strobe__now();
  uint64_t pos = reserve(t, 2, t->hot.depth, now);
  if (!pos) return;
  pos--;
  uint64_t bits;
  memcpy(&bits, &number, sizeof bits);
  put(t, &pos, now, kind, (uint32_t)id);
  put(t, &pos, bits, STROBE__EV_PAYLOAD, 0);
  publish(t, pos);
}

void strobe__frame_mark(strobe_site *site) {
  strobe__tstate *t = attach();
  if (!t) return;
  int id = strobe_site_register(site);
  if (id < 0) return;
  uint64_t now = strobe__now();
  /* Loop bodies outside any scope are reported once per frame. */
  if (t->ncum) flush_cumulative(t, 0, now, 1);
  uint64_t pos = reserve(t, 1, t->hot.depth, now);
  if (!pos) return;
  pos--;
  put(t, &pos, now, STROBE__EV_FRAME, (uint32_t)id);
  publish(t, pos);
}

/* @exit */
static void on_thread_exit(void *arg) {
  strobe__tstate *t = arg;
  if (t->ncum) flush_cumulative(t, 0, strobe__now(), 1);
  /* Open scopes stay unfinished in the stream: no END is fabricated. */
  __atomic_fetch_add(&t->misuse.open_at_exit, t->hot.depth, __ATOMIC_RELAXED);
  strobe__tls = NULL;
  tls_exiting = 1;
  __atomic_store_n(&t->exited, 1, __ATOMIC_RELEASE);
  strobe__drain_wake();
}

/* @queries */
int strobe_thread_set_name(const char *name) {
  if (!name || !name[0]) return STROBE_EINVAL;
  strobe__tstate *t = attach();
  if (!t) return STROBE_ENOMEM;
  /* The drain reads the name under the thread list lock. */
  pthread_mutex_lock(&g_threads_lock);
  strncpy(t->name, name, sizeof t->name - 1);
  t->name[sizeof t->name - 1] = 0;
  t->name_gen++;
  pthread_mutex_unlock(&g_threads_lock);
  return 0;
}

const strobe_site *strobe_current_scope(void) {
  strobe__thread *h = strobe__tls;
  if (!h || h->depth == 0) return NULL;
  return strobe__site_get(h->stack[h->depth - 1].site);
}

strobe_misuse strobe_misuse_counts(void) {
  strobe_misuse m = {0};
  pthread_mutex_lock(&g_threads_lock);
  m = g_misuse_dead;
  for (strobe__tstate *t = g_threads; t; t = t->next) misuse_add(&m, &t->misuse);
  pthread_mutex_unlock(&g_threads_lock);
  return m;
}

strobe_misuse strobe__misuse_since(const strobe_misuse *base) {
  strobe_misuse m = strobe_misuse_counts();
  m.end_without_begin -= base->end_without_begin;
  m.unbalanced -= base->unbalanced;
  m.open_at_exit -= base->open_at_exit;
  m.depth_overflow -= base->depth_overflow;
  m.value_without_scope -= base->value_without_scope;
  m.cumulative_overflow -= base->cumulative_overflow;
  return m;
}

strobe_event_stats strobe_query_event_stats(void) {
  strobe_event_stats s = {0};
  pthread_mutex_lock(&g_threads_lock);
  s.events_written = g_written_dead;
  s.events_lost = g_lost_dead;
  s.threads_seen = g_threads_seen;
  for (strobe__tstate *t = g_threads; t; t = t->next) {
    s.events_written += __atomic_load_n(&t->hot.pos, __ATOMIC_ACQUIRE);
    s.events_lost += __atomic_load_n(&t->lost, __ATOMIC_RELAXED);
  }
  pthread_mutex_unlock(&g_threads_lock);
  return s;
}

/* @overhead
 * Runs the real inline begin/end against a private scratch ring that nobody
 * drains (it simply wraps), so the figure is the hot path's own cost. */
#define OVERHEAD_PAIRS 2000
#define OVERHEAD_ROUNDS 5

double strobe__measure_overhead(void) {
  static strobe_site site = {"strobe_overhead_calibration", "strobe", NULL, __FILE__, "strobe__measure_overhead",
                             __LINE__, STROBE_SITE_SCOPE, 0};
  static strobe__event scratch_ring[4096];
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  if (strobe_site_register(&site) < 0) return 0.0;
  const strobe__clock_info *clk = strobe__clock();
  strobe__thread *scratch = calloc(1, sizeof *scratch);
  if (!scratch) return 0.0;
  pthread_mutex_lock(&lock);
  scratch->ring = scratch_ring;
  scratch->mask = 4095;
  scratch->limit = UINT64_MAX;
  strobe__thread *saved = strobe__tls;
  strobe__tls = scratch;
  uint64_t best = UINT64_MAX;
  for (int r = 0; r < OVERHEAD_ROUNDS; r++) {
    uint64_t a = strobe__now();
    for (int i = 0; i < OVERHEAD_PAIRS; i++) strobe__end(strobe__begin(&site));
    uint64_t b = strobe__now();
    if (b - a < best) best = b - a;
  }
  strobe__tls = saved;
  pthread_mutex_unlock(&lock);
  free(scratch);
  return (double)best * clk->ns_per_tick / OVERHEAD_PAIRS;
}
