/*
 * test_capture_stream.c — live capture streams (record.h, strobe_stream_*):
 *   - a stream read to the end is a complete capture: header, every event,
 *     footer, nothing lost;
 *   - a reader too slow for the producer loses events, counted in the
 *     stream's stats, but the stream stays well formed: no reader error, no
 *     orphan END, every VALUE still attached to the scope it was written in
 *     (so no BEGIN/END was paired wrongly), and the capture's loss total
 *     equals what the stream dropped plus what the rings dropped;
 *   - the producing thread never waits for the reader.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support/harness.h"
#include "strobe/capture.h"
#include "strobe/record.h"
#include "collect/collect.h" /* strobe__drain_now */
#include "strobe/strobe.h"

static int g_run;        /* atomic */
static uint64_t g_outer; /* atomic: outer scopes completed */

static void *producer(void *arg) {
  long limit = (long)(intptr_t)arg; /* 0: until g_run is cleared */
  for (long i = 0; limit == 0 ? __atomic_load_n(&g_run, __ATOMIC_ACQUIRE) : i < limit; i++) {
    STROBE_SCOPE("outer");
    for (int k = 0; k < 3; k++) {
      STROBE_SCOPE("inner");
      STROBE_VALUE("in", k);
      STROBE_COUNTER_ADD("items", 1);
    }
    STROBE_VALUE("out", i);
    __atomic_fetch_add(&g_outer, 1, __ATOMIC_RELAXED);
  }
  return NULL;
}

typedef struct bytes {
  unsigned char *data;
  size_t len, cap;
} bytes;

static void drain_into(strobe_stream *s, bytes *b, size_t max) {
  size_t got = 0;
  for (;;) {
    if (b->cap - b->len < 65536) {
      b->cap = b->cap ? b->cap * 2 : 1 << 20;
      b->data = realloc(b->data, b->cap);
      REQUIRE(b->data);
    }
    size_t want = b->cap - b->len;
    if (max && want > max - got) want = max - got;
    size_t n = strobe_stream_read(s, b->data + b->len, want);
    b->len += n;
    got += n;
    if (n == 0 || (max && got >= max)) return;
  }
}

static void sleep_ms(unsigned ms) {
  struct timespec ts = {0, (long)ms * 1000000L};
  nanosleep(&ts, NULL);
}

typedef struct tally {
  uint64_t outer_ends, inner_ends, values;
} tally;

/* Reads the whole capture and checks it is well formed: the reader's view
 * of each thread's open scopes (BEGIN pushes, END pops, LOST closes down to
 * its depth) always has the right scope innermost when a VALUE arrives, and
 * every END closes the scope its BEGIN opened. Returns the totals. */
#define MAX_T 8
static strobe_capture_totals check_capture(const bytes *b, tally *t) {
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open_memory(b->data, b->len, &cap), 0);
  CHECK(!strcmp(strobe_capture_query_header(cap)->kind, "stream"));
  strobe_capture_record r;
  int rc;
  static uint32_t stack[MAX_T][300];
  uint32_t sp[MAX_T] = {0};
  memset(t, 0, sizeof *t);
  while ((rc = strobe_capture_next(cap, &r)) > 0) {
    if (r.thread >= MAX_T) continue;
    uint32_t *st = stack[r.thread], *n = &sp[r.thread];
    const strobe_capture_site *site = strobe_capture_query_site(cap, r.site);
    switch (r.type) {
      case STROBE_REC_BEGIN:
        CHECK(*n < 300);
        st[(*n)++] = r.site;
        CHECK_EQ_INT(r.depth, *n);
        break;
      case STROBE_REC_END:
        CHECK(*n > 0 && st[*n - 1] == r.site);
        CHECK_EQ_INT(r.depth, *n);
        (*n)--;
        if (!strcmp(site->name, "outer")) {
          CHECK_EQ_INT(r.depth, 1); /* nothing is ever opened around it */
          t->outer_ends++;
        } else {
          t->inner_ends++;
        }
        break;
      case STROBE_REC_LOST:
        CHECK(r.depth <= *n);
        *n = r.depth;
        break;
      case STROBE_REC_THREAD_END:
        *n = 0;
        break;
      case STROBE_REC_VALUE: {
        /* a value sits on the scope it was written in */
        const char *want = !strcmp(site->name, "in") ? "inner" : "outer";
        CHECK(*n > 0);
        CHECK_EQ_INT(r.depth, *n);
        CHECK(!strcmp(strobe_capture_query_site(cap, st[*n - 1])->name, want));
        t->values++;
        break;
      }
      default: break;
    }
  }
  CHECK_EQ_INT(rc, 0);
  strobe_capture_totals tot = strobe_capture_query_totals(cap);
  CHECK_EQ_INT(tot.footer, 1);
  CHECK_EQ_U64(tot.orphan_ends, 0);
  strobe_capture_close(cap);
  return tot;
}

static void test_complete(void) {
  strobe_stream *s;
  REQUIRE_EQ_INT(strobe_stream_start(NULL, &s), 0);
  uint64_t lost0 = strobe_query_event_stats().events_lost;
  pthread_t th;
  REQUIRE(pthread_create(&th, NULL, producer, (void *)(intptr_t)2000) == 0);
  pthread_join(th, NULL); /* the thread exits: its THREAD_END is in the stream */
  CHECK_EQ_INT(strobe_stream_stop(s), 0);
  CHECK_EQ_INT(strobe_stream_stop(s), 0); /* idempotent */
  bytes b = {0};
  drain_into(s, &b, 0);
  strobe_stream_stats st = strobe_stream_query_stats(s);
  CHECK(st.stopped);
  CHECK_EQ_U64(st.events_dropped, 0);
  CHECK_EQ_U64(st.bytes_read, st.bytes_produced);
  CHECK_EQ_U64(st.bytes_queued, 0);
  CHECK_EQ_U64(b.len, st.bytes_produced);
  strobe_stream_free(s);
  tally t;
  strobe_capture_totals tot = check_capture(&b, &t);
  CHECK_EQ_U64(tot.lost, strobe_query_event_stats().events_lost - lost0);
  if (tot.lost == 0) {
    CHECK_EQ_U64(t.outer_ends, 2000);
    CHECK_EQ_U64(t.inner_ends, 6000);
    CHECK_EQ_U64(t.values, 8000);
    CHECK_EQ_U64(tot.unfinished, 0);
  }
  free(b.data);
}

static void test_slow_reader(void) {
  strobe_stream_desc d = {.max_queue_bytes = 64u << 10, .flush_interval_ms = 5};
  strobe_stream *s;
  REQUIRE_EQ_INT(strobe_stream_start(&d, &s), 0);
  uint64_t lost0 = strobe_query_event_stats().events_lost;
  __atomic_store_n(&g_run, 1, __ATOMIC_RELEASE);
  __atomic_store_n(&g_outer, 0, __ATOMIC_RELAXED);
  pthread_t th;
  REQUIRE(pthread_create(&th, NULL, producer, NULL) == 0);
  bytes b = {0};
  size_t peak = 0;
  for (int i = 0; i < 60; i++) { /* 16 KiB every 20 ms: far slower than the producer */
    sleep_ms(20);
    strobe_stream_stats st = strobe_stream_query_stats(s);
    if (st.bytes_queued > peak) peak = st.bytes_queued;
    drain_into(s, &b, 16384);
  }
  __atomic_store_n(&g_run, 0, __ATOMIC_RELEASE);
  pthread_join(th, NULL);
  uint64_t produced = __atomic_load_n(&g_outer, __ATOMIC_RELAXED);
  CHECK_EQ_INT(strobe_stream_stop(s), 0);
  drain_into(s, &b, 0);
  strobe_stream_stats st = strobe_stream_query_stats(s);
  strobe_stream_free(s);
  /* it dropped, it said so, and it kept its bound (plus one flush's worth) */
  CHECK(st.events_dropped > 0);
  CHECK(st.drop_episodes >= 1);
  CHECK(peak <= (64u << 10) + (64u << 10) / 4 + (256u << 10));
  /* the producer was never held back by the reader */
  CHECK(produced > 10000);
  tally t;
  strobe_capture_totals tot = check_capture(&b, &t);
  uint64_t ring_lost = strobe_query_event_stats().events_lost - lost0;
  CHECK_EQ_U64(tot.lost, st.events_dropped + ring_lost);
  CHECK(t.outer_ends > 0 && t.outer_ends < produced);
  free(b.data);
}

static void test_desc(void) {
  strobe_stream *s = (strobe_stream *)1;
  strobe_stream_desc d = {.max_queue_bytes = 1000};
  CHECK_EQ_INT(strobe_stream_start(&d, &s), STROBE_EINVAL);
  CHECK(s == NULL);
  d = (strobe_stream_desc){.compression_level = 40};
  CHECK_EQ_INT(strobe_stream_start(&d, &s), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_stream_start(NULL, NULL), STROBE_EINVAL);
  strobe_stream_free(NULL);
  CHECK_EQ_U64(strobe_stream_read(NULL, NULL, 0), 0);
  strobe_clock_info c = strobe_query_clock();
  CHECK(c.source && c.ns_per_tick > 0);
}

/* A scope that outlives a drop episode: after the reader catches up, the
 * first event passed on is that scope's END. The LOST marker in front of it
 * must leave the scope open for the END to close, not close it as lost and
 * turn the END into an orphan. */
static void test_scope_across_drops(void) {
  strobe_stream_desc d = {.max_queue_bytes = 64u << 10, .flush_interval_ms = 1};
  strobe_stream *s;
  REQUIRE_EQ_INT(strobe_stream_start(&d, &s), 0);
  bytes b = {0};
  {
    STROBE_SCOPE("outer");
    strobe__drain_now(); /* outer's BEGIN goes out while the queue is empty */
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 100000; i++) {
      STROBE_SCOPE("inner");
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      STROBE_VALUE("in", (double)x); /* incompressible: the queue fills */
      /* Drained often, the thread's ring never overflows: only the stream,
         which nobody reads, can drop. */
      if ((i & 1023) == 1023) strobe__drain_now();
    }
    strobe__drain_now();
    CHECK(strobe_stream_query_stats(s).events_dropped > 0); /* nobody read: the stream dropped */
    drain_into(s, &b, 0);                             /* the reader catches up */
  }
  CHECK_EQ_INT(strobe_stream_stop(s), 0);
  drain_into(s, &b, 0);
  strobe_stream_free(s);
  tally t;
  strobe_capture_totals tot = check_capture(&b, &t); /* no orphan END, every END on its own scope */
  CHECK_EQ_U64(t.outer_ends, 1);
  CHECK(tot.lost > 0);
  free(b.data);
}

#define CASES(X)        \
  X(desc)               \
  X(complete)           \
  X(slow_reader)        \
  X(scope_across_drops)
HARNESS_MAIN(CASES)
