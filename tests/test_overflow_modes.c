/*
 * test_overflow_modes.c — what a full ring does under each
 * strobe_desc.overflow mode (docs/recording.md, Overflow), and that loss is
 * never silent:
 *  - DROP counts exactly: the events a capture holds plus the count it
 *    reports lost are the events written;
 *  - GROW doubles a thread's ring (the drain follows the swaps) and loses
 *    nothing until ring_events_max, then counts exactly like DROP;
 *  - WAIT makes the producer wait for the drain and loses nothing; it never
 *    waits for a drain that cannot come (the caller runs the drain pass
 *    itself, or the drain is stuck): those events are dropped and counted;
 *  - the capture says how often its rings grew and its producers waited
 *    (the RINGS block, strobe_capture_totals), as the process counts them;
 *  - while events are lost the application's callback hears of it at most
 *    once a second, with counts that add up; without one, stderr does.
 * The drain is stalled the way test_ring_overflow.c does it: the capture
 * goes to a FIFO that nobody reads yet, so its write() blocks.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/collect.h"
#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/strobe.h"
#include "support/fixtures.h"
#include "support/harness.h"

#define THREADS 2
#define SCOPES 100000 /* per thread: 200,000 events, far past a 1024-event ring */

/* >>fifo: a capture whose drain blocks until release() */
typedef struct fifo_capture {
  char dir[64], path[256];
  int hold;
  pthread_t reader;
  uint8_t *data;
  size_t len;
  strobe_recorder *rec;
} fifo_capture;

static void *read_fifo(void *arg) {
  fifo_capture *f = arg;
  int fd = open(f->path, O_RDONLY);
  if (fd < 0) return NULL;
  size_t cap = 1 << 20;
  f->data = malloc(cap);
  for (;;) {
    if (f->len == cap) f->data = realloc(f->data, cap *= 2);
    ssize_t n = read(fd, f->data + f->len, cap - f->len);
    if (n <= 0) break;
    f->len += (size_t)n;
  }
  close(fd);
  return NULL;
}

static void stall(fifo_capture *f) {
  REQUIRE(fx_temp_dir(f->dir, sizeof f->dir, "overflow") == 0);
  snprintf(f->path, sizeof f->path, "%s/fifo", f->dir);
  REQUIRE(mkfifo(f->path, 0600) == 0);
  /* Held open for reading so the recorder's open() succeeds, never read. */
  f->hold = open(f->path, O_RDONLY | O_NONBLOCK);
  REQUIRE(f->hold >= 0);
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = f->path, .flush_interval_ms = 1}, &f->rec), 0);
}

static void release(fifo_capture *f) {
  pthread_create(&f->reader, NULL, read_fifo, f);
  fx_sleep_ms(100); /* the reader opens the FIFO before the holder lets go */
  close(f->hold);
}

/* Stops the recording and counts what the capture holds. */
typedef struct counts {
  uint64_t begins, ends, lost;
  uint64_t rings_grown, producer_waits; /* as the capture says (RINGS) */
  int footer;
} counts;

static counts finish(fifo_capture *f) {
  counts c = {0};
  CHECK_EQ_INT(strobe_record_stop(f->rec), 0);
  pthread_join(f->reader, NULL);
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open_memory(f->data, f->len, &cap), 0);
  strobe_capture_record r;
  int rc;
  while ((rc = strobe_capture_next(cap, &r)) > 0) {
    if (r.type == STROBE_REC_BEGIN) c.begins++;
    if (r.type == STROBE_REC_END) c.ends++;
  }
  CHECK_EQ_INT(rc, 0);
  strobe_capture_totals t = strobe_capture_query_totals(cap);
  c.lost = t.lost;
  c.footer = t.footer;
  c.rings_grown = t.rings_grown;
  c.producer_waits = t.producer_waits;
  CHECK_EQ_U64(t.orphan_ends, 0);
  strobe_capture_close(cap);
  free(f->data);
  unlink(f->path);
  rmdir(f->dir);
  return c;
}

/* >>producers */
static void *scopes(void *arg) {
  (void)arg;
  for (int i = 0; i < SCOPES; i++) {
    STROBE_SCOPE("overflow_scope");
  }
  return NULL;
}

static void run_producers(void) {
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, scopes, NULL);
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
}

/* Every scope written is in the capture or counted lost, one event each
 * for its BEGIN and END (an END whose BEGIN was dropped is withheld and
 * counted too), and the process-wide count agrees. */
static void check_exact(const counts *c) {
  CHECK_EQ_INT(c->footer, 1);
  CHECK_EQ_U64(c->begins, c->ends);
  CHECK_EQ_U64(c->begins + c->ends + c->lost, (uint64_t)THREADS * SCOPES * 2);
  CHECK_EQ_U64(c->lost, strobe_query_event_stats().events_lost);
}

/* >>cases */
static void test_setup_checks_overflow(void) {
  CHECK_EQ_INT(strobe_setup(&(strobe_desc){.overflow = 3}), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_setup(&(strobe_desc){.ring_events = 8192, .ring_events_max = 4096}), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_setup(&(strobe_desc){.ring_events_max = 5000000}), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_setup(&(strobe_desc){.ring_events_max = 33554432}), STROBE_EINVAL);
  strobe_desc d = strobe_query_desc();
  CHECK_EQ_INT(d.overflow, STROBE_OVERFLOW_DROP);
  CHECK_EQ_U64(d.ring_events_max, 16777216); /* 256 MiB of 16-byte events */
  CHECK(d.on_loss == NULL);
  CHECK_EQ_INT(strobe_setup(&(strobe_desc){.overflow = STROBE_OVERFLOW_GROW, .ring_events = 8388608}), 0);
  d = strobe_query_desc();
  CHECK_EQ_INT(d.overflow, STROBE_OVERFLOW_GROW);
  CHECK_EQ_U64(d.ring_events_max, 16777216); /* the default is the bound: never below ring_events */
}

static void test_drop_counts_exactly(void) {
  REQUIRE_EQ_INT(strobe_setup(&(strobe_desc){.ring_events = 1024}), 0);
  fifo_capture f = {0};
  stall(&f);
  run_producers();
  release(&f);
  counts c = finish(&f);
  CHECK(c.lost > 0); /* 1024-event rings cannot hold 200,000 scopes with the drain stalled */
  check_exact(&c);
  CHECK_EQ_U64(strobe_query_event_stats().rings_grown, 0);
  CHECK_EQ_U64(c.rings_grown, 0);
  CHECK_EQ_U64(c.producer_waits, 0);
}

static void test_grow_loses_nothing(void) {
  REQUIRE_EQ_INT(strobe_setup(&(strobe_desc){.ring_events = 1024, .overflow = STROBE_OVERFLOW_GROW,
                                             .ring_events_max = 262144}),
                 0);
  fifo_capture f = {0};
  stall(&f);
  run_producers(); /* 200,000 events each, all held while the drain is stuck: 1024 -> 262144 */
  strobe_event_stats st = strobe_query_event_stats();
  CHECK_EQ_U64(st.events_lost, 0);
  CHECK(st.rings_grown >= THREADS); /* each thread outgrew its first ring */
  release(&f);
  counts c = finish(&f);
  CHECK_EQ_U64(c.lost, 0);
  CHECK_EQ_U64(c.begins, (uint64_t)THREADS * SCOPES);
  check_exact(&c);
}

static void test_grow_then_drops_counted(void) {
  REQUIRE_EQ_INT(strobe_setup(&(strobe_desc){.ring_events = 1024, .overflow = STROBE_OVERFLOW_GROW,
                                             .ring_events_max = 4096}),
                 0);
  fifo_capture f = {0};
  stall(&f);
  run_producers();
  CHECK_EQ_U64(strobe_query_event_stats().rings_grown, THREADS * 2); /* 1024 -> 2048 -> 4096, no further */
  release(&f);
  counts c = finish(&f);
  CHECK(c.lost > 0);
  check_exact(&c);
  CHECK_EQ_U64(c.rings_grown, THREADS * 2); /* the capture says so: every doubling happened while it recorded */
  CHECK_EQ_U64(c.producer_waits, 0);
}

/* Rings that grow while the drain reads them: swaps during live passes,
 * and past ring_events_max, drops that are counted exactly. */
static void grow_live(uint32_t ring_events_max, int expect_loss) {
  REQUIRE_EQ_INT(strobe_setup(&(strobe_desc){.ring_events = 1024, .overflow = STROBE_OVERFLOW_GROW,
                                             .ring_events_max = ring_events_max}),
                 0);
  char path[256];
  REQUIRE(fx_temp_file(path, sizeof path, "grow") == 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  run_producers();
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  strobe_capture_record r;
  uint64_t begins = 0, ends = 0;
  while (strobe_capture_next(cap, &r) > 0) {
    begins += r.type == STROBE_REC_BEGIN;
    ends += r.type == STROBE_REC_END;
  }
  uint64_t lost = strobe_capture_query_totals(cap).lost;
  CHECK_EQ_U64(lost, strobe_query_event_stats().events_lost);
  CHECK_EQ_U64(begins, ends);
  CHECK_EQ_U64(begins + ends + lost, (uint64_t)THREADS * SCOPES * 2);
  if (expect_loss)
    CHECK(lost > 0);
  else
    CHECK_EQ_U64(lost, 0);
  strobe_capture_close(cap);
  unlink(path);
}

static void test_grow_with_live_drain(void) { grow_live(1048576, 0); }
/* 4096-event rings cannot hold what two threads scoping flat out write between passes. */
static void test_grow_live_then_drops_counted(void) { grow_live(4096, 1); }

static void test_wait_loses_nothing(void) {
  REQUIRE_EQ_INT(strobe_setup(&(strobe_desc){.ring_events = 1024, .overflow = STROBE_OVERFLOW_WAIT}), 0);
  fifo_capture f = {0};
  stall(&f);
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, scopes, NULL);
  fx_sleep_ms(200); /* the producers fill their rings and wait for the stuck drain */
  release(&f);
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  counts c = finish(&f);
  CHECK_EQ_U64(c.lost, 0);
  CHECK_EQ_U64(c.begins, (uint64_t)THREADS * SCOPES);
  check_exact(&c);
  CHECK(strobe_query_event_stats().producer_waits > 0);
  CHECK_EQ_U64(c.producer_waits, strobe_query_event_stats().producer_waits); /* each wait, in the capture */
  CHECK_EQ_U64(c.rings_grown, 0);
}

/* A consumer that records scopes while the drain delivers to it: its ring
 * fills inside the drain pass, and waiting there would wait for itself. */
#define CONSUMER_SCOPES 20000
static int g_recorded_in_drain;
static void nop_site(void *ctx, uint32_t id, const strobe_site *s) { (void)ctx, (void)id, (void)s; }
static void nop_label(void *ctx, uint32_t id, const char *t) { (void)ctx, (void)id, (void)t; }
static void nop_thread(void *ctx, uint32_t i, uint64_t tid, const char *n, uint64_t l) {
  (void)ctx, (void)i, (void)tid, (void)n, (void)l;
}
static void nop_lost(void *ctx, uint32_t i, uint64_t l) { (void)ctx, (void)i, (void)l; }
static void nop_end(void *ctx, uint32_t i) { (void)ctx, (void)i; }
static void nop_tick(void *ctx, uint64_t now) { (void)ctx, (void)now; }
static void recording_events(void *ctx, uint32_t index, const strobe__event *ev, size_t n) {
  (void)ctx, (void)index, (void)ev, (void)n;
  if (__atomic_exchange_n(&g_recorded_in_drain, 1, __ATOMIC_RELAXED)) return;
  for (int i = 0; i < CONSUMER_SCOPES; i++) {
    STROBE_SCOPE("in_drain");
  }
}

/* A drain stuck for longer than STROBE__WAIT_STALL_MS (here: a consumer
 * blocked until the producers are done) releases its waiters: the
 * producers finish while it is still stuck, their loss counted exactly. */
static pthread_mutex_t g_block_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_block_cond = PTHREAD_COND_INITIALIZER;
static int g_blocked = 1;
static uint64_t g_seen_scope_events; /* BEGINs and ENDs the blocking consumer received */
static void blocking_events(void *ctx, uint32_t index, const strobe__event *ev, size_t n) {
  (void)ctx, (void)index;
  pthread_mutex_lock(&g_block_lock);
  while (g_blocked) pthread_cond_wait(&g_block_cond, &g_block_lock);
  pthread_mutex_unlock(&g_block_lock);
  for (size_t i = 0; i < n; i++)
    if (ev[i].kind == STROBE__EV_BEGIN || ev[i].kind == STROBE__EV_END) g_seen_scope_events++;
}

static void test_wait_never_waits_forever(void) {
  REQUIRE_EQ_INT(strobe_setup(&(strobe_desc){.ring_events = 1024, .overflow = STROBE_OVERFLOW_WAIT}), 0);
  strobe__consumer c = {NULL, nop_site, nop_label, nop_thread, nop_lost, blocking_events, nop_end, nop_tick, NULL, NULL, NULL, NULL};
  REQUIRE_EQ_INT(strobe__consumer_add(&c), 0);
  run_producers(); /* returns only because the waits gave up on the stuck drain */
  pthread_mutex_lock(&g_block_lock);
  g_blocked = 0;
  pthread_cond_broadcast(&g_block_cond);
  pthread_mutex_unlock(&g_block_lock);
  strobe__consumer_remove(&c); /* its final pass delivers the rest */
  strobe_event_stats st = strobe_query_event_stats();
  CHECK(st.events_lost > 0);
  CHECK(st.producer_waits >= 1);
  CHECK_EQ_U64(g_seen_scope_events + st.events_lost, (uint64_t)THREADS * SCOPES * 2);
}

static void test_wait_not_in_drain_pass(void) {
  REQUIRE_EQ_INT(strobe_setup(&(strobe_desc){.ring_events = 1024, .overflow = STROBE_OVERFLOW_WAIT}), 0);
  strobe__consumer c = {NULL, nop_site, nop_label, nop_thread, nop_lost, recording_events, nop_end, nop_tick, NULL, NULL, NULL, NULL};
  REQUIRE_EQ_INT(strobe__consumer_add(&c), 0);
  {
    STROBE_SCOPE("trigger"); /* gives the consumer events to receive */
  }
  strobe__drain_now(); /* this thread runs the pass: the consumer records on it */
  CHECK(__atomic_load_n(&g_recorded_in_drain, __ATOMIC_RELAXED));
  strobe__consumer_remove(&c);
  strobe_event_stats st = strobe_query_event_stats();
  CHECK(st.events_lost > 0); /* 40,000 events into 1024 slots, nobody to wait for */
  CHECK(st.events_lost < 2 * CONSUMER_SCOPES);
  CHECK_EQ_U64(st.producer_waits, 0); /* refused at once: not even one stalled wait */
}

/* >>loss reports */
typedef struct heard {
  pthread_mutex_t lock;
  int calls;
  uint64_t lost_sum, last_total;
  uint64_t at_ns[64];
  int totals_ordered;
  uint32_t threads_max;   /* the most threads one report named */
} heard;
static heard g_heard = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, {0}, 1, 0};

static void on_loss(const strobe_loss_report *r, void *user) {
  heard *h = user;
  pthread_mutex_lock(&h->lock);
  if (h->calls < 64) h->at_ns[h->calls] = fx_now_ns();
  h->calls++;
  h->lost_sum += r->lost;
  if (r->lost_total < h->last_total || r->lost == 0 || r->threads == 0) h->totals_ordered = 0;
  h->last_total = r->lost_total;
  if (r->threads > h->threads_max) h->threads_max = r->threads;
  pthread_mutex_unlock(&h->lock);
}

/* Scopes flat out into a 1024-event ring for `ms`: the drain, waking every
 * few ms, cannot keep up, so events are lost all along. */
static void lose_for(unsigned ms) {
  uint64_t until = fx_now_ns() + (uint64_t)ms * 1000000u;
  while (fx_now_ns() < until)
    for (int i = 0; i < 10000; i++) {
      STROBE_SCOPE("lossy");
    }
}

static void test_loss_callback_rate_limited(void) {
  REQUIRE_EQ_INT(strobe_setup(&(strobe_desc){.ring_events = 1024, .drain_interval_ms = 20, .on_loss = on_loss,
                                             .on_loss_user = &g_heard}),
                 0);
  char path[256];
  REQUIRE(fx_temp_file(path, sizeof path, "loss") == 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  lose_for(2500);
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
  uint64_t lost = strobe_query_event_stats().events_lost;
  REQUIRE(lost > 0);
  /* The last losses are reported within a second of the previous report. */
  for (int i = 0; i < 500; i++) {
    pthread_mutex_lock(&g_heard.lock);
    uint64_t sum = g_heard.lost_sum;
    pthread_mutex_unlock(&g_heard.lock);
    if (sum == lost) break;
    fx_sleep_ms(10);
  }
  pthread_mutex_lock(&g_heard.lock);
  CHECK_EQ_U64(g_heard.lost_sum, lost);
  CHECK_EQ_U64(g_heard.last_total, lost);
  CHECK(g_heard.totals_ordered);
  /* One thread lost events, in every drain pass of each second: one thread per report, not one per pass. */
  CHECK_EQ_U64(g_heard.threads_max, 1);
  CHECK(g_heard.calls >= 2);  /* 2.5 s of losses */
  CHECK(g_heard.calls <= 4);  /* ... reported at most once a second */
  for (int i = 1; i < g_heard.calls && i < 64; i++)
    CHECKF(g_heard.at_ns[i] - g_heard.at_ns[i - 1] >= 900000000u, "reports %d and %d are %.3f s apart", i - 1, i,
           (double)(g_heard.at_ns[i] - g_heard.at_ns[i - 1]) / 1e9);
  uint64_t reported_total = g_heard.last_total;
  pthread_mutex_unlock(&g_heard.lock);
  /* The reports' total is the capture's: this process lost nothing before it began. */
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  strobe_capture_record rec_;
  while (strobe_capture_next(cap, &rec_) > 0) {
  }
  CHECK_EQ_U64(strobe_capture_query_totals(cap).lost, reported_total);
  strobe_capture_close(cap);
  unlink(path);
}

/* Without a callback the report is a line on stderr, at most one a second. */
static void test_loss_stderr_rate_limited(void) {
  REQUIRE_EQ_INT(strobe_setup(&(strobe_desc){.ring_events = 1024, .drain_interval_ms = 20}), 0);
  char err[256], path[256];
  REQUIRE(fx_temp_file(err, sizeof err, "stderr") == 0);
  REQUIRE(fx_temp_file(path, sizeof path, "loss") == 0);
  fflush(stderr);
  int saved = dup(2);
  int fd = open(err, O_WRONLY | O_TRUNC);
  REQUIRE(saved >= 0 && fd >= 0);
  dup2(fd, 2);
  close(fd);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  uint64_t t0 = fx_now_ns();
  lose_for(2200);
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
  fx_sleep_ms(1300); /* a report still due comes within a second */
  double seconds = (double)(fx_now_ns() - t0) / 1e9;
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  CHECK(strobe_query_event_stats().events_lost > 0);
  FILE *in = fopen(err, "r");
  REQUIRE(in != NULL);
  char line[1024];
  int lines = 0;
  while (fgets(line, sizeof line, in)) lines++;
  fclose(in);
  CHECKF(lines >= 2, "%d lines", lines);
  CHECKF(lines <= (int)seconds + 1, "%d lines in %.1f s", lines, seconds);
  unlink(err);
  unlink(path);
}

#define CASES(X)                      \
  X(setup_checks_overflow)            \
  X(drop_counts_exactly)              \
  X(grow_loses_nothing)               \
  X(grow_then_drops_counted)          \
  X(grow_with_live_drain)             \
  X(grow_live_then_drops_counted)     \
  X(wait_loses_nothing)               \
  X(wait_never_waits_forever)         \
  X(wait_not_in_drain_pass)           \
  X(loss_callback_rate_limited)       \
  X(loss_stderr_rate_limited)
HARNESS_MAIN(CASES)
