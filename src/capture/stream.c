/*
 * stream.c — the live-stream consumer: receives drained events on the drain
 * thread, encodes them with the capture writer and appends each whole block
 * to a bounded in-memory queue that a reader (the server's HTTP response)
 * empties at its own pace.
 *
 * Owns: the queue, the drop filter that keeps the stream well formed while
 * the queue is full, the loss accounting for what it dropped, and flush and
 * clock-pair timing.
 * Must never: block the drain thread on the reader (the queue lock is held
 * only to link or unlink a block), hand the writer half of an event, or let
 * the queue grow past its bound plus one flush.
 *
 * Contents: >>filter >>queue >>consumer >>lifecycle
 */
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include "collect/collect.h"
#include "format/capture_writer.h"
#include "platform/clock.h"
#include "platform/invariant.h"
#include "strobe/record.h"

#define DEFAULT_QUEUE_BYTES (8u << 20) /* about a second of a busy renderer's compressed events */
#define MIN_QUEUE_BYTES (64u << 10)
#define MAX_QUEUE_BYTES ((size_t)1 << 30)
#define DEFAULT_FLUSH_MS 50u  /* the viewer's latency budget: well under a frame of a human's attention */
#define DEFAULT_LEVEL 1       /* live data: speed over ratio */
#define CLOCK_PAIR_NS 1000000000ull /* also the stream's heartbeat: a block at least once a second */
/* Worst-case raw bytes one event adds to the writer before a flush (ops
 * varint, time varint, an 8-byte payload). Used to bound what is not yet in
 * the queue but will be at the next flush. */
#define EVENT_BYTES_BOUND 24u
#define TRACK_DEPTH 256u /* producers record at most STROBE_MAX_DEPTH (128) */

/* >>filter state of one thread, as this stream has seen it. */
typedef struct sthread {
  int defined;
  uint64_t producer_lost;  /* process-lifetime ring losses, as last reported by the drain */
  uint64_t dropped;        /* events this stream dropped */
  uint64_t pending;        /* dropped since the last LOST marker was passed on */
  uint64_t lost_reported;  /* producer_lost + dropped as last given to the writer */
  uint64_t last_ts;
  uint32_t depth;          /* open scopes whose BEGIN this stream saw */
  uint32_t payload_left;   /* payload slots still owed to the last head event */
  int payload_drop;        /* ...and whether they go with it into the bin */
  uint64_t unrec[TRACK_DEPTH / 64]; /* bit d: the scope at depth d was dropped (its END is withheld) */
} sthread;

typedef struct qblock {
  struct qblock *next;
  size_t len, off;
  unsigned char data[];
} qblock;

struct strobe_stream {
  strobe__consumer consumer;
  strobe__writer *writer;
  strobe_stream_desc desc;
  size_t max_queue;
  /* drain-thread state */
  sthread *threads;
  uint32_t nthreads;
  int dropping;
  uint64_t pending_bytes;  /* bound on encoded-but-unflushed bytes */
  uint64_t flush_ticks, clock_ticks, last_flush, last_clock;
  int appended;            /* the sink queued something during this pass */
  strobe_misuse misuse_base;
  strobe_trace_stats trace_base; /* call tracing's counts when it started (CALLS blocks) */
  strobe__drain_cost drain_base; /* the drain's cost when the stream started */
  int attached;            /* set before the consumer is added, cleared once stop removed it: while set,
                            * the state above is the drain's; after, the stopping thread's */
  /* >>queue, guarded by qlock */
  strobe__mutex qlock;
  qblock *head, *tail;
  /* counters: atomics */
  uint64_t queued, produced, read, events_dropped, episodes;
  int error, stopped;
};

/* >>queue */
static int sink(void *ctx, const void *data, size_t len) {
  strobe_stream *s = ctx;
  /* The filter keeps the queue near max_queue; twice that plus slack can only
   * mean one flush carried more than the whole queue's worth. Refusing it
   * ends the stream (sticky writer error) rather than breaking the bound. */
  uint64_t queued = __atomic_load_n(&s->queued, __ATOMIC_RELAXED);
  if (queued + len > 2 * (uint64_t)s->max_queue + (1u << 20) && !s->stopped) return STROBE_ELIMIT;
  qblock *b = malloc(sizeof *b + len);
  if (!b) return STROBE_ENOMEM;
  b->next = NULL;
  b->len = len;
  b->off = 0;
  memcpy(b->data, data, len);
  strobe__mutex_lock(&s->qlock);
  if (s->tail)
    s->tail->next = b;
  else
    s->head = b;
  s->tail = b;
  __atomic_fetch_add(&s->queued, len, __ATOMIC_RELAXED);
  strobe__mutex_unlock(&s->qlock);
  __atomic_fetch_add(&s->produced, len, __ATOMIC_RELAXED);
  s->appended = 1;
  return 0;
}

size_t strobe_stream_read(strobe_stream *s, void *buf, size_t max) {
  if (!s || !buf) return 0;
  size_t n = 0;
  qblock *done = NULL;
  strobe__mutex_lock(&s->qlock);
  while (n < max && s->head) {
    qblock *b = s->head;
    size_t k = b->len - b->off;
    if (k > max - n) k = max - n;
    memcpy((unsigned char *)buf + n, b->data + b->off, k);
    b->off += k;
    n += k;
    if (b->off == b->len) {
      s->head = b->next;
      if (!s->head) s->tail = NULL;
      b->next = done;
      done = b;
    }
  }
  __atomic_fetch_sub(&s->queued, n, __ATOMIC_RELAXED);
  strobe__mutex_unlock(&s->qlock);
  __atomic_fetch_add(&s->read, n, __ATOMIC_RELAXED);
  while (done) {
    qblock *next = done->next;
    free(done);
    done = next;
  }
  return n;
}

/* >>filter */
static sthread *thread_slot(strobe_stream *s, uint32_t index) {
  if (index >= s->nthreads) {
    uint32_t n = s->nthreads ? s->nthreads : 16;
    while (n <= index) n *= 2;
    sthread *p = realloc(s->threads, n * sizeof *p);
    if (!p) return NULL;
    memset(p + s->nthreads, 0, (n - s->nthreads) * sizeof *p);
    s->threads = p;
    s->nthreads = n;
  }
  return &s->threads[index];
}

static int is_unrec(const sthread *t, uint32_t d) { return (int)((t->unrec[d / 64] >> (d % 64)) & 1u); }

static void set_unrec(sthread *t, uint32_t d, int v) {
  uint64_t bit = (uint64_t)1 << (d % 64);
  if (v)
    t->unrec[d / 64] |= bit;
  else
    t->unrec[d / 64] &= ~bit;
}

/* Open scopes the reader knows of: the ones whose BEGIN was passed on. */
static uint32_t recorded_depth(const sthread *t) {
  uint32_t d = 0;
  for (uint32_t i = 0; i < t->depth; i++) d += !is_unrec(t, i);
  return d;
}

/* Passes on a LOST marker: `lost` events dropped just before ts, after which
 * the reader's stack must be recorded_depth() deep. */
/* The drain-thread state above is the drain's while the consumer is
 * attached and the stopping thread's after (the helpers below serve both). */
#define ASSERT_DRAIN_STATE(s) STROBE_ASSERT(strobe__drain_held() || !(s)->attached)

static void emit_marker(strobe_stream *s, uint32_t index, sthread *t, uint64_t ts, uint64_t lost) {
  ASSERT_DRAIN_STATE(s);
  strobe__event e;
  e.ts = ts;
  e.kind = STROBE__EV_LOST | (recorded_depth(t) << 8);
  e.data = lost > UINT32_MAX ? UINT32_MAX : (uint32_t)lost;
  strobe__writer_events(s->writer, index, &e, 1);
  s->pending_bytes += EVENT_BYTES_BOUND;
  t->pending = 0;
}

static void update_mode(strobe_stream *s) {
  uint64_t used = __atomic_load_n(&s->queued, __ATOMIC_RELAXED) + s->pending_bytes;
  if (!s->dropping && used >= s->max_queue) {
    s->dropping = 1;
    __atomic_fetch_add(&s->episodes, 1, __ATOMIC_RELAXED);
  } else if (s->dropping && used <= s->max_queue / 2) {
    s->dropping = 0; /* hysteresis: resume once half the queue has been read */
  }
}

static void drop_one(strobe_stream *s, sthread *t) {
  t->dropped++;
  t->pending++;
  __atomic_fetch_add(&s->events_dropped, 1, __ATOMIC_RELAXED);
}

static void flush_now(strobe_stream *s);

/* >>consumer callbacks (drain thread) */

/* The events of one on_events call that pass on unchanged are handed to
 * the writer in runs: ev[from..i) is the run being gathered. */
typedef struct run {
  strobe_stream *s;
  uint32_t index;
  const strobe__event *ev;
  size_t from;
} run;

/* Hands ev[from..end) to the writer; the next run starts at `next`. */
static void run_cut(run *r, size_t end, size_t next) {
  if (end > r->from) {
    strobe__writer_events(r->s->writer, r->index, r->ev + r->from, end - r->from);
    r->s->pending_bytes += (uint64_t)(end - r->from) * EVENT_BYTES_BOUND;
  }
  r->from = next;
}

/* Every 1024 events: enter or leave dropping, and flush once a quarter of
 * the queue is pending, so one long call cannot overshoot the bound. */
static void pace(run *r, size_t i) {
  update_mode(r->s);
  if (r->s->pending_bytes >= r->s->max_queue / 4) {
    run_cut(r, i, i);
    flush_now(r->s);
  }
}

/* A PAYLOAD travels with its head event, or goes into the bin with it; one
 * whose head this stream never saw is cut from the run. */
static void filter_payload(run *r, sthread *t, size_t i) {
  if (t->payload_left && !t->payload_drop) {
    t->payload_left--;
    return;
  }
  int owed = t->payload_left != 0;
  if (owed) t->payload_left--;
  run_cut(r, i, i + 1);
  if (owed) drop_one(r->s, t);
}

/* The producer dropped events (ring full): its recorded stack is now
 * kind >> 8 deep. Mirror that, then pass the marker on with the depth this
 * stream's reader will have, folding in this stream's own drops. */
static void filter_lost(run *r, sthread *t, size_t i) {
  const strobe__event *e = &r->ev[i];
  uint32_t pdepth = e->kind >> 8;
  while (t->depth > pdepth) t->depth--;
  run_cut(r, i, i + 1);
  if (r->s->dropping)
    drop_one(r->s, t); /* pending > 0: a marker with the new depth follows */
  else
    emit_marker(r->s, r->index, t, e->ts, (uint64_t)e->data + t->pending);
}

/* Whether an event must be withheld, while not dropping, to keep the
 * reader's nesting right. */
static int withheld(const sthread *t, uint32_t kind) {
  switch (kind) {
    case STROBE__EV_BEGIN: return t->depth >= TRACK_DEPTH; /* cannot come from a well-behaved producer */
    case STROBE__EV_END:
    case STROBE__EV_UNWOUND: return t->depth && is_unrec(t, t->depth - 1); /* its BEGIN was dropped: withheld too */
    case STROBE__EV_VALUE:
    case STROBE__EV_CUMULATIVE:
      /* Both belong to the innermost open scope: withheld with it when its
       * BEGIN was dropped, or the reader would pin them on its parent. */
      return t->depth && t->depth <= TRACK_DEPTH && is_unrec(t, t->depth - 1);
    default: return 0;
  }
}

/* Any other event: passed on, or dropped with its payload slots; a marker
 * for earlier drops goes in front of it, so its depth is the reader's
 * before the event. Then the stack follows it. */
static void filter_event(run *r, sthread *t, size_t i, uint32_t kind) {
  const strobe__event *e = &r->ev[i];
  int drop = r->s->dropping || withheld(t, kind);
  t->payload_left = strobe__payload_slots(e->kind, e->data); /* whole, with its payload slots, or not at all */
  t->payload_drop = drop;
  if (drop) {
    run_cut(r, i, i + 1);
    drop_one(r->s, t);
  } else if (t->pending) {
    run_cut(r, i, i);
    emit_marker(r->s, r->index, t, e->ts, t->pending);
  }
  if (kind == STROBE__EV_BEGIN && t->depth < TRACK_DEPTH) set_unrec(t, t->depth++, drop);
  if (strobe__ev_closes(kind) && t->depth) t->depth--;
}

static void on_events(void *ctx, uint32_t index, const strobe__event *ev, size_t n) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_stream *s = ctx;
  if (s->stopped) return;
  sthread *t = thread_slot(s, index);
  if (!t) {
    __atomic_fetch_add(&s->events_dropped, n, __ATOMIC_RELAXED);
    return;
  }
  run r = {s, index, ev, 0};
  for (size_t i = 0; i < n; i++) {
    if ((i & 1023u) == 0) pace(&r, i);
    uint32_t kind = ev[i].kind & 0xffu;
    if (kind == STROBE__EV_PAYLOAD) {
      filter_payload(&r, t, i);
      continue;
    }
    t->payload_left = 0;
    t->last_ts = ev[i].ts;
    if (kind == STROBE__EV_LOST)
      filter_lost(&r, t, i);
    else
      filter_event(&r, t, i, kind);
  }
  run_cut(&r, n, n);
}

static void report_losses(strobe_stream *s) {
  ASSERT_DRAIN_STATE(s);
  for (uint32_t i = 0; i < s->nthreads; i++) {
    sthread *t = &s->threads[i];
    if (!t->defined) continue;
    uint64_t total = t->producer_lost + t->dropped;
    if (total != t->lost_reported) {
      strobe__writer_lost(s->writer, i, total);
      t->lost_reported = total;
    }
  }
}

static void flush_now(strobe_stream *s) {
  report_losses(s);
  strobe__writer_flush(s->writer);
  s->pending_bytes = 0;
  s->last_flush = strobe__now();
}

static void on_site(void *ctx, uint32_t id, const strobe_site *site) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_stream *s = ctx;
  if (!s->stopped) strobe__writer_site(s->writer, id, site);
}

static void on_label(void *ctx, uint32_t id, const char *text) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_stream *s = ctx;
  if (!s->stopped) strobe__writer_label(s->writer, id, text);
}

static void on_thread(void *ctx, uint32_t index, uint64_t tid, const char *name, uint64_t lost) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_stream *s = ctx;
  if (s->stopped) return;
  sthread *t = thread_slot(s, index);
  if (t && !t->defined) {
    t->defined = 1;
    t->producer_lost = t->lost_reported = lost;
  }
  strobe__writer_thread(s->writer, index, tid, name, lost);
}

static void on_lost(void *ctx, uint32_t index, uint64_t lost) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_stream *s = ctx;
  sthread *t = thread_slot(s, index);
  if (t && t->defined) t->producer_lost = lost;
}

static void on_thread_end(void *ctx, uint32_t index) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_stream *s = ctx;
  if (s->stopped) return;
  sthread *t = thread_slot(s, index);
  /* One small marker even while dropping, so the reader closes the scopes
   * whose ENDs were dropped as lost rather than calling them unfinished. */
  if (t && t->pending) emit_marker(s, index, t, t->last_ts, t->pending);
  strobe__writer_thread_end(s->writer, index);
}

/* Calls the reader's ready callback: on the drain thread, or once from the
 * stopping thread for the footer. */
static void notify(strobe_stream *s) {
  ASSERT_DRAIN_STATE(s);
  if (s->appended) {
    s->appended = 0;
    if (s->desc.ready) s->desc.ready(s->desc.ready_ctx);
  }
}

static void on_tick(void *ctx, uint64_t now) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_stream *s = ctx;
  if (s->stopped) return;
  if (now - s->last_clock >= s->clock_ticks) {
    strobe__writer_clock(s->writer, strobe__now(), strobe__mono_ns());
    strobe__writer_drain_cost(s->writer, strobe__drain_cost_since(&s->drain_base));
    strobe__writer_calls(s->writer, strobe__trace_stats_since(&s->trace_base));
    s->last_clock = now;
    s->last_flush = 0; /* the pair is the heartbeat: send it now */
  }
  if (now - s->last_flush >= s->flush_ticks) flush_now(s);
  int err = strobe__writer_error(s->writer);
  if (err) __atomic_store_n(&s->error, err, __ATOMIC_RELAXED);
  notify(s);
}

/* >>lifecycle */
static void free_queue(strobe_stream *s) {
  for (qblock *b = s->head, *next; b; b = next) {
    next = b->next;
    free(b);
  }
  s->head = s->tail = NULL;
}

int strobe_stream_start(const strobe_stream_desc *desc, strobe_stream **out) {
  if (!out) return STROBE_EINVAL;
  *out = NULL;
  if (!STROBE__PROFILING) return STROBE_EFEATURE_DISABLED;
  strobe_stream_desc d = desc ? *desc : (strobe_stream_desc){0};
  size_t max_queue = d.max_queue_bytes ? d.max_queue_bytes : DEFAULT_QUEUE_BYTES;
  uint32_t flush_ms = d.flush_interval_ms ? d.flush_interval_ms : DEFAULT_FLUSH_MS;
  int level = d.compression_level ? d.compression_level : DEFAULT_LEVEL;
  if (max_queue < MIN_QUEUE_BYTES || max_queue > MAX_QUEUE_BYTES || flush_ms > 10000 || level < 1 || level > 19)
    return STROBE_EINVAL;
  const strobe__clock_info *clk = strobe__clock();
  strobe_stream *s = calloc(1, sizeof *s);
  if (!s) return STROBE_ENOMEM;
  strobe__mutex_init(&s->qlock);
  s->desc = d;
  s->max_queue = max_queue;
  s->flush_ticks = (uint64_t)((double)flush_ms * 1e6 / clk->ns_per_tick);
  s->clock_ticks = (uint64_t)((double)CLOCK_PAIR_NS / clk->ns_per_tick);
  s->last_flush = s->last_clock = strobe__now();
  s->misuse_base = strobe_query_misuse();
  s->drain_base = strobe__drain_query_cost();
  s->trace_base = strobe_trace_query_stats();
  strobe__writer_desc wd = {.kind = "stream",
                            .flush_interval_ms = flush_ms,
                            .compression_level = level,
                            .overhead_per_scope_ns = strobe__measure_cost().scope_ns,
                            .event_cost_ns = strobe__measure_cost().event_ns,
                            .sink = sink,
                            .sink_ctx = s};
  int rc = strobe__writer_create(&wd, &s->writer);
  if (rc) goto fail;
  s->appended = 0; /* the header is readable now; nobody needs telling */
  s->consumer = (strobe__consumer){s, on_site, on_label, on_thread, on_lost, on_events, on_thread_end, on_tick,
                                  NULL /* no application content on a stream (strobe/tree.h) */,
                                  NULL /* nor sampled function names (strobe/sample.h) */,
                                  NULL /* nor attachments or deep captures (strobe/deep.h) */,
                                  NULL /* events are converted for it (collect.h >>ring runs) */};
  s->attached = 1; /* before the drain can call it: from then on its state is the drain's */
  rc = strobe__consumer_add(&s->consumer);
  if (rc) goto fail;
  *out = s;
  return 0;
fail:
  strobe__writer_destroy(s->writer);
  free_queue(s);
  strobe__mutex_destroy(&s->qlock);
  free(s);
  return rc;
}

int strobe_stream_stop(strobe_stream *s) {
  if (!s) return STROBE_EINVAL;
  if (!s->attached) return __atomic_load_n(&s->error, __ATOMIC_RELAXED);
  strobe__consumer_remove(&s->consumer); /* after this, only this thread touches the writer */
  s->attached = 0;
  for (uint32_t i = 0; i < s->nthreads; i++) {
    sthread *t = &s->threads[i];
    if (t->defined && t->pending) emit_marker(s, i, t, t->last_ts, t->pending);
  }
  report_losses(s);
  __atomic_store_n(&s->stopped, 1, __ATOMIC_RELAXED); /* the footer goes in whatever the queue holds */
  strobe__writer_drain_cost(s->writer, strobe__drain_cost_since(&s->drain_base));
  strobe__writer_calls(s->writer, strobe__trace_stats_since(&s->trace_base));
  strobe_misuse m = strobe__misuse_since(&s->misuse_base);
  int rc = strobe__writer_finish(s->writer, strobe__now(), &m);
  if (rc) __atomic_store_n(&s->error, rc, __ATOMIC_RELAXED);
  notify(s);
  return __atomic_load_n(&s->error, __ATOMIC_RELAXED);
}

void strobe_stream_free(strobe_stream *s) {
  if (!s) return;
  strobe_stream_stop(s);
  strobe__writer_destroy(s->writer);
  free(s->threads);
  free_queue(s);
  strobe__mutex_destroy(&s->qlock);
  free(s);
}

strobe_stream_stats strobe_stream_query_stats(strobe_stream *s) {
  strobe_stream_stats st = {0};
  if (!s) return st;
  st.bytes_produced = __atomic_load_n(&s->produced, __ATOMIC_RELAXED);
  st.bytes_read = __atomic_load_n(&s->read, __ATOMIC_RELAXED);
  st.bytes_queued = __atomic_load_n(&s->queued, __ATOMIC_RELAXED);
  st.events_dropped = __atomic_load_n(&s->events_dropped, __ATOMIC_RELAXED);
  st.drop_episodes = __atomic_load_n(&s->episodes, __ATOMIC_RELAXED);
  st.error = __atomic_load_n(&s->error, __ATOMIC_RELAXED);
  st.stopped = __atomic_load_n(&s->stopped, __ATOMIC_RELAXED);
  return st;
}

strobe_clock_info strobe_query_clock(void) {
  const strobe__clock_info *c = strobe__clock();
  return (strobe_clock_info){c->source, c->invariant, c->ns_per_tick, c->epoch_mono_ns};
}
