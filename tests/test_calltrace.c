/*
 * test_calltrace.c — call tracing (include/strobe/trace.h,
 * docs/exploration.md): a program of known shape (tests/calltrace/, built
 * with strobe_trace_calls) run inside a region gives exactly its call tree,
 * named from the symbol tables (a static function, a demangled C++ name);
 * the depth limit and the exclude list cut what they say and count it;
 * with tracing off, or no region on the thread, nothing is recorded and no
 * function is even looked up; trace_all follows every thread; an address
 * with no symbol says so. Each case reads its capture back.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "calltrace/traced.h"
#include "collect/collect.h"
#include "probe/probe.h"
#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/trace.h"
#include "support/fixtures.h"
#include "support/harness.h"

/* >>fixture */
typedef struct run {
  char path[64];
  strobe_recorder *rec;
} run;

static void run_start(run *r, const char *tag) {
  REQUIRE(fx_temp_file(r->path, sizeof r->path, tag) == 0);
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = r->path}, &r->rec), 0);
}

#define TREE_MAX 4096
#define THREADS_MAX 4
/* Each thread's scopes as one line, "a(b,c(d))", and what the capture says about them. */
typedef struct tree {
  char text[THREADS_MAX][TREE_MAX];
  uint32_t scopes;        /* BEGIN records, every thread */
  uint32_t call_sites;    /* sites flagged STROBE_SITE_CALL */
  uint32_t unflagged;     /* BEGINs of sites without the flag */
  strobe_capture_totals totals;
} tree;

static void append(char *dst, const char *s) {
  size_t n = strlen(dst);
  snprintf(dst + n, TREE_MAX - n, "%s", s);
}

static void run_read(run *r, tree *t) {
  REQUIRE_EQ_INT(strobe_record_stop(r->rec), 0);
  memset(t, 0, sizeof *t);
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(r->path, &cap), 0);
  uint32_t children[THREADS_MAX][STROBE_MAX_DEPTH + 2] = {{0}}, depth[THREADS_MAX] = {0};
  strobe_capture_record rec;
  int rc;
  while ((rc = strobe_capture_next(cap, &rec)) > 0) {
    if (rec.type == STROBE_REC_SITE && (strobe_capture_query_site(cap, rec.site)->flags & STROBE_SITE_CALL))
      t->call_sites++;
    if (rec.type != STROBE_REC_BEGIN && rec.type != STROBE_REC_END) continue;
    REQUIRE(rec.thread < THREADS_MAX);
    char *text = t->text[rec.thread];
    uint32_t *d = &depth[rec.thread], *c = children[rec.thread];
    if (rec.type == STROBE_REC_BEGIN) {
      const strobe_capture_site *s = strobe_capture_query_site(cap, rec.site);
      t->scopes++;
      if (!(s->flags & STROBE_SITE_CALL)) t->unflagged++;
      append(text, c[*d] ? "," : *d ? "(" : *text ? " " : "");
      append(text, s->name);
      c[*d]++;
      c[++*d] = 0;
    } else {
      CHECK_EQ_INT(rec.unwound, 0);
      if (c[*d]) append(text, ")");
      if (*d) --*d;
    }
  }
  CHECK_EQ_INT(rc, 0);
  t->totals = strobe_capture_query_totals(cap);
  strobe_capture_close(cap);
  unlink(r->path);
}

/* The tree traced_root(3) makes (tests/calltrace/traced.c). */
#define ROOT_TREE                                                                                    \
  "traced_root(leaf_static,leaf_static,traced_cxx_entry(calltrace_demo::Shape::area(int))," \
  "traced_excluded_helper(leaf_static))"

/* >>tree: a region gives exactly the calls made in it, named from the symbol
 * tables: a static function, an extern "C" one, a demangled C++ member. */
static void test_call_tree_exact(void) {
  run r;
  run_start(&r, "calltrace_tree");
  REQUIRE_EQ_INT(strobe_trace_calls_begin(), 0);
  (void)traced_root(3);
  REQUIRE_EQ_INT(strobe_trace_calls_end(), 0);
  (void)traced_root(3); /* after the region: not recorded */
  tree t;
  run_read(&r, &t);
  CHECK_STR_EQ(t.text[0], ROOT_TREE);
  CHECK_EQ_INT(t.unflagged, 0);
  CHECK_EQ_INT(t.call_sites, 4 + 1); /* traced_root, leaf_static, the two C++ functions, the helper */
  CHECK_EQ_INT(t.scopes, 7);
  strobe_trace_stats s = strobe_trace_query_stats();
  CHECK_EQ_INT(s.resolved, 5);
  CHECK_EQ_INT(s.unresolved, 0);
  CHECK_EQ_INT(s.cut_depth + s.excluded + s.cut_stack + s.cut_functions, 0);
  CHECK_EQ_INT(t.totals.calls_functions, 5);
  CHECK_EQ_INT(t.totals.calls_unresolved, 0);
  CHECK_EQ_INT(strobe_trace_calls_end(), STROBE_ESTATE); /* no region open */
}

/* >>depth: calls deeper than max_depth below the region's start are cut and counted. */
static void test_depth_limit(void) {
  REQUIRE_EQ_INT(strobe_trace_setup(&(strobe_trace_desc){.max_depth = 3}), 0);
  CHECK_EQ_INT(strobe_trace_query_desc().max_depth, 3);
  run r;
  run_start(&r, "calltrace_depth");
  REQUIRE_EQ_INT(strobe_trace_calls_begin(), 0);
  CHECK_EQ_INT(traced_recurse(10), 10); /* 11 nested calls */
  REQUIRE_EQ_INT(strobe_trace_calls_end(), 0);
  tree t;
  run_read(&r, &t);
  CHECK_STR_EQ(t.text[0], "traced_recurse(traced_recurse(traced_recurse))");
  CHECK_EQ_INT(strobe_trace_query_stats().cut_depth, 8);
  /* The capture says so too (its CALLS block, docs/capture-format.md). */
  CHECK_EQ_U64(t.totals.calls_cut_depth, 8);
  CHECK_EQ_INT(t.totals.calls_functions, 1);
  CHECK_EQ_INT(strobe_trace_setup(&(strobe_trace_desc){.max_depth = STROBE_MAX_DEPTH + 1}), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_trace_query_desc().max_depth, 3); /* refused: nothing changed */
}

/* >>exclude: an excluded function is not recorded (by its plain or its
 * demangled name); its callees still are, nested in what encloses it. */
static void test_exclude_list(void) {
  const char *const names[] = {"traced_excluded_helper", "calltrace_demo::Shape::area(int)",
                               "no_such_function_anywhere", NULL};
  REQUIRE_EQ_INT(strobe_trace_setup(&(strobe_trace_desc){.exclude = names}), 0);
  run r;
  run_start(&r, "calltrace_exclude");
  REQUIRE_EQ_INT(strobe_trace_calls_begin(), 0);
  (void)traced_root(3);
  REQUIRE_EQ_INT(strobe_trace_calls_end(), 0);
  tree t;
  run_read(&r, &t);
  CHECK_STR_EQ(t.text[0], "traced_root(leaf_static,leaf_static,traced_cxx_entry,leaf_static)");
  strobe_trace_stats s = strobe_trace_query_stats();
  CHECK_EQ_INT(s.excluded, 2);
  CHECK_EQ_INT(s.exclude_unmatched, 1);
  CHECK_EQ_U64(t.totals.calls_excluded, 2);
}

/* >>off: with tracing off nothing is recorded and no function is looked up,
 * nor with a region on another thread only, nor in a region while nothing
 * records. */
static pthread_barrier_t g_barrier;

static void *region_elsewhere(void *arg) {
  (void)arg;
  strobe_trace_calls_begin();
  pthread_barrier_wait(&g_barrier); /* the region is open: the main thread calls now */
  pthread_barrier_wait(&g_barrier); /* the main thread is done */
  traced_loop(1);
  return NULL;
}

static void test_off_by_default_records_nothing(void) {
  run r;
  run_start(&r, "calltrace_off");
  (void)traced_root(3);
  traced_loop(100);
  REQUIRE_EQ_INT(strobe_trace_calls_begin(), 0); /* an empty region: this thread has its tracer now */
  REQUIRE_EQ_INT(strobe_trace_calls_end(), 0);
  REQUIRE_EQ_INT(pthread_barrier_init(&g_barrier, NULL, 2), 0);
  pthread_t th;
  REQUIRE_EQ_INT(pthread_create(&th, NULL, region_elsewhere, NULL), 0);
  pthread_barrier_wait(&g_barrier);
  (void)traced_root(3); /* while another thread's region is open: not this thread's */
  pthread_barrier_wait(&g_barrier);
  REQUIRE_EQ_INT(pthread_join(th, NULL), 0);
  pthread_barrier_destroy(&g_barrier);
  (void)traced_root(3); /* another thread's region ended with its thread; this one has none */
  tree t;
  run_read(&r, &t);
  /* The other thread's region recorded its own calls only: the main thread
   * recorded nothing, so the other one is the capture's only thread. */
  CHECK_STR_EQ(t.text[0], "traced_loop(leaf_static)");
  CHECK_STR_EQ(t.text[1], "");
  CHECK_EQ_INT(t.scopes, 2);
  CHECK_EQ_INT(strobe_trace_query_stats().functions, 2);

  /* A region while nothing records: the calls are followed, nothing is looked up. */
  REQUIRE_EQ_INT(strobe_trace_calls_begin(), 0);
  (void)traced_root(3);
  REQUIRE_EQ_INT(strobe_trace_calls_end(), 0);
  CHECK_EQ_INT(strobe_trace_query_stats().functions, 2);
}

/* >>all: trace_all records every thread's calls without a region. */
static void *plain_thread(void *arg) {
  (void)arg;
  traced_loop(2);
  return NULL;
}

static void test_trace_all_every_thread(void) {
  REQUIRE_EQ_INT(strobe_trace_setup(&(strobe_trace_desc){.all = 1}), 0);
  CHECK_EQ_INT(strobe_trace_query_desc().all, 1);
  run r;
  run_start(&r, "calltrace_all");
  (void)traced_recurse(1);
  pthread_t th;
  REQUIRE_EQ_INT(pthread_create(&th, NULL, plain_thread, NULL), 0);
  REQUIRE_EQ_INT(pthread_join(th, NULL), 0);
  REQUIRE_EQ_INT(strobe_trace_setup(NULL), 0); /* off again */
  (void)traced_recurse(1);
  tree t;
  run_read(&r, &t);
  CHECK_STR_EQ(t.text[0], "traced_recurse(traced_recurse)");
  CHECK_STR_EQ(t.text[1], "traced_loop(leaf_static,leaf_static)");
}

/* >>grow: a thread tracing calls under DROP grows its ring when the drain
 * falls behind (trace.h, keep_overflow), so a burst of traced calls loses
 * nothing; keep_overflow 1 keeps DROP, which loses and counts. The drain is
 * held at the end of a pass by a consumer whose tick waits for the test. */
static pthread_mutex_t g_gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_gate_cond = PTHREAD_COND_INITIALIZER;
static int g_gate_closed, g_gate_held;

static void gate_tick(void *ctx, uint64_t now) {
  (void)ctx, (void)now;
  pthread_mutex_lock(&g_gate_lock);
  g_gate_held = 1;
  pthread_cond_broadcast(&g_gate_cond);
  for (int i = 0; g_gate_closed && i < 200; i++) { /* at most 10 s: a broken test fails, never hangs */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 50000000;
    if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
    pthread_cond_timedwait(&g_gate_cond, &g_gate_lock, &ts);
  }
  pthread_mutex_unlock(&g_gate_lock);
}
static void gate_site(void *ctx, uint32_t id, const strobe_site *s) { (void)ctx, (void)id, (void)s; }
static void gate_label(void *ctx, uint32_t id, const char *t) { (void)ctx, (void)id, (void)t; }
static void gate_thread(void *ctx, uint32_t i, uint64_t tid, const char *n, uint64_t l) {
  (void)ctx, (void)i, (void)tid, (void)n, (void)l;
}
static void gate_lost(void *ctx, uint32_t i, uint64_t l) { (void)ctx, (void)i, (void)l; }
static void gate_events(void *ctx, uint32_t i, const strobe__event *e, size_t n) { (void)ctx, (void)i, (void)e, (void)n; }
static void gate_end(void *ctx, uint32_t i) { (void)ctx, (void)i; }

#define BURST 20000u /* traced_loop(BURST): BURST + 1 calls, 2 events each, far past a 1024-event ring */

/* Runs the burst with the drain held, on a 1024-event DROP ring; returns the capture read back. */
static void held_burst(uint32_t keep_overflow, tree *t) {
  REQUIRE_EQ_INT(strobe_setup(&(strobe_desc){.ring_events = 1024}), 0);
  REQUIRE_EQ_INT(strobe_trace_setup(&(strobe_trace_desc){.keep_overflow = keep_overflow}), 0);
  CHECK_EQ_INT(strobe_trace_query_desc().keep_overflow, keep_overflow);
  run r;
  run_start(&r, "calltrace_grow");
  strobe__consumer gate = {NULL, gate_site, gate_label, gate_thread, gate_lost, gate_events,
                           gate_end, gate_tick, NULL, NULL, NULL, NULL};
  g_gate_closed = 1;
  REQUIRE_EQ_INT(strobe__consumer_add(&gate), 0);
  pthread_mutex_lock(&g_gate_lock);
  for (int i = 0; !g_gate_held && i < 200; i++) {
    pthread_mutex_unlock(&g_gate_lock);
    fx_sleep_ms(50);
    pthread_mutex_lock(&g_gate_lock);
  }
  REQUIRE(g_gate_held); /* the drain thread waits in the gate's tick */
  pthread_mutex_unlock(&g_gate_lock);
  REQUIRE_EQ_INT(strobe_trace_calls_begin(), 0);
  traced_loop(BURST);
  REQUIRE_EQ_INT(strobe_trace_calls_end(), 0);
  pthread_mutex_lock(&g_gate_lock);
  g_gate_closed = 0;
  pthread_cond_broadcast(&g_gate_cond);
  pthread_mutex_unlock(&g_gate_lock);
  strobe__consumer_remove(&gate);
  run_read(&r, t);
}

static void test_traced_ring_grows(void) {
  tree t;
  held_burst(0, &t);
  CHECK_EQ_INT(t.scopes, BURST + 1);
  CHECK_EQ_U64(t.totals.lost, 0);
  CHECK(strobe_query_event_stats().rings_grown >= 5); /* 1024 -> 32768 at least, for 40,002 events */
}

static void test_keep_overflow_drops_counted(void) {
  tree t;
  held_burst(1, &t);
  CHECK(t.scopes < BURST + 1);
  CHECK_EQ_U64(t.totals.lost, 2ull * (BURST + 1 - t.scopes)); /* each dropped call: its BEGIN and END */
  CHECK_EQ_INT(strobe_query_event_stats().rings_grown, 0);
  CHECK_EQ_INT(strobe_trace_setup(&(strobe_trace_desc){.keep_overflow = 2}), STROBE_EINVAL);
}

/* >>unresolved: an address no symbol covers gets a name that says so, with the address. */
static void test_unresolved_address_says_so(void) {
  void *page = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(page != MAP_FAILED);
  char *name = NULL, *module = NULL;
  CHECK_EQ_INT(strobe__symbol_name((uintptr_t)page + 16, &name, &module), 0);
  char hex[32];
  snprintf(hex, sizeof hex, "%llx", (unsigned long long)((uintptr_t)page + 16));
  CHECK(name && strstr(name, hex) != NULL);
  free(name);
  free(module);
  /* A function of this executable resolves, with this executable as its object. */
  CHECK_EQ_INT(strobe__symbol_name((uintptr_t)&traced_root, &name, &module), 1);
  CHECK_STR_EQ(name, "traced_root");
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  REQUIRE(n > 0);
  exe[n] = '\0';
  CHECK(module && !strcmp(module, exe));
  free(name);
  free(module);
  munmap(page, 4096);
}

/* >>min_time: with min_ns a call is recorded at its exit, when it lasted
 * that long, in order with the calls around it; one held back while the
 * thread wrote another event (a hand-placed scope) cannot be, and is
 * counted. Long and short are 20 ms sleeps against calls of nanoseconds,
 * around a 10 ms bound. */
static void nap(void) {
  struct timespec ts = {0, 20 * 1000 * 1000};
  while (nanosleep(&ts, &ts) != 0) {
  }
}
static void hand_scope(void) {
  STROBE_SCOPE("hand");
  nap();
}

static void test_min_time_order(void) {
  REQUIRE_EQ_INT(strobe_trace_setup(&(strobe_trace_desc){.min_ns = 10 * 1000 * 1000}), 0);
  run r;
  run_start(&r, "calltrace_min_time");
  REQUIRE_EQ_INT(strobe_trace_calls_begin(), 0);
  (void)traced_root(3);                  /* 7 short calls */
  (void)traced_call_back(hand_scope, 1); /* long, but "hand" came while it was held back */
  (void)traced_call_back(nap, 1);        /* long: recorded, its short leaf not */
  REQUIRE_EQ_INT(strobe_trace_calls_end(), 0);
  tree t;
  run_read(&r, &t);
  CHECK_STR_EQ(t.text[0], "hand,traced_call_back");
  strobe_trace_stats s = strobe_trace_query_stats();
  CHECK_EQ_U64(s.cut_order, 1);
  CHECK_EQ_U64(s.cut_short, 7 + 1 + 1);
  CHECK_EQ_U64(t.totals.calls_cut_order, 1);
  CHECK_EQ_U64(t.totals.calls_cut_short, 9);
  CHECK_EQ_INT(strobe_trace_setup(&(strobe_trace_desc){.min_ns = 3600000000001ull}), STROBE_EINVAL);
}

#define CASES(X)                     \
  X(call_tree_exact)                 \
  X(min_time_order)                  \
  X(depth_limit)                     \
  X(exclude_list)                    \
  X(off_by_default_records_nothing)  \
  X(trace_all_every_thread)          \
  X(traced_ring_grows)               \
  X(keep_overflow_drops_counted)     \
  X(unresolved_address_says_so)
HARNESS_MAIN(CASES)
