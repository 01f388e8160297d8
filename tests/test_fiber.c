/*
 * test_fiber.c — fibers (strobe.h >>fibers, docs/recording.md §Fibers): a
 * ucontext coroutine that yields inside open scopes and is resumed by two
 * threads in turn keeps its scopes on its own lane, nested under it, none
 * lost, unwound or unbalanced, while the threads' own scopes stay on
 * theirs; destroying a fiber closes what it left open like a thread exit;
 * the calls' errors; a thread that exits inside a fiber leaves it.
 */
#include <pthread.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "support/fixtures.h"
#include "support/harness.h"
#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/strobe.h"

/* >>fixture: one recording per case, read back into per-lane counts. */
typedef struct run {
  char path[64];
  strobe_recorder *rec;
} run;

static void run_start(run *r, const char *tag) {
  (void)strobe_setup(&(strobe_desc){.ring_events = 1u << 20});
  REQUIRE(fx_temp_file(r->path, sizeof r->path, tag) == 0);
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = r->path}, &r->rec), 0);
}

#define MAX_NAMES 8
#define MAX_LANES 16
/* Per lane (thread index): ENDs per name and depth, unwound ENDs, values. */
typedef struct lanes {
  const char *names[MAX_NAMES];
  uint64_t ends[MAX_LANES][MAX_NAMES];
  uint32_t depth_max[MAX_LANES][MAX_NAMES], depth_min[MAX_LANES][MAX_NAMES];
  uint64_t unwound[MAX_LANES][MAX_NAMES];
  uint64_t values[MAX_LANES];
  uint64_t os_tid[MAX_LANES];
  int ended[MAX_LANES];
  char lane_name[MAX_LANES][64];
  uint32_t nlanes;
  strobe_capture_totals totals;
} lanes;
#define LANES(...) {.names = {__VA_ARGS__}}

static int name_index(const lanes *l, const char *name) {
  for (int i = 0; i < MAX_NAMES && l->names[i]; i++)
    if (!strcmp(l->names[i], name)) return i;
  return -1;
}

static void run_read(run *r, lanes *l) {
  REQUIRE_EQ_INT(strobe_record_stop(r->rec), 0);
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(r->path, &cap), 0);
  for (uint32_t t = 0; t < MAX_LANES; t++)
    for (int i = 0; i < MAX_NAMES; i++) l->depth_min[t][i] = UINT32_MAX;
  strobe_capture_record rec;
  int rc;
  while ((rc = strobe_capture_next(cap, &rec)) > 0) {
    if (rec.thread >= MAX_LANES) continue;
    if (rec.type == STROBE_REC_VALUE) l->values[rec.thread]++;
    if (rec.type != STROBE_REC_END) continue;
    int i = name_index(l, strobe_capture_query_site(cap, rec.site)->name);
    if (i < 0) continue;
    if (rec.unwound) {
      l->unwound[rec.thread][i]++;
      continue;
    }
    l->ends[rec.thread][i]++;
    if (rec.depth > l->depth_max[rec.thread][i]) l->depth_max[rec.thread][i] = rec.depth;
    if (rec.depth < l->depth_min[rec.thread][i]) l->depth_min[rec.thread][i] = rec.depth;
  }
  CHECK_EQ_INT(rc, 0);
  l->nlanes = strobe_capture_query_thread_count(cap);
  for (uint32_t t = 0; t < l->nlanes && t < MAX_LANES; t++) {
    const strobe_capture_thread *th = strobe_capture_query_thread(cap, t);
    l->os_tid[t] = th->os_tid;
    l->ended[t] = th->ended;
    snprintf(l->lane_name[t], sizeof l->lane_name[t], "%s", th->name);
  }
  l->totals = strobe_capture_query_totals(cap);
  strobe_capture_close(cap);
  unlink(r->path);
}

/* The lane named `name`, or -1. */
static int lane_of(const lanes *l, const char *name) {
  for (uint32_t t = 0; t < l->nlanes && t < MAX_LANES; t++)
    if (!strcmp(l->lane_name[t], name)) return (int)t;
  return -1;
}

/* >>switch: swapcontext, told to ThreadSanitizer (which otherwise loses
 * track of the stacks) through its fiber interface; a no-op elsewhere. */
#if defined(STROBE__TSAN)
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
#define TSAN_FIBER(var) void *var
#define TSAN_CREATE(var) ((var) = __tsan_create_fiber(0))
#define TSAN_DESTROY(var) __tsan_destroy_fiber(var)
#define TSAN_CURRENT(var) ((var) = __tsan_get_current_fiber())
#define TSAN_SWITCH(var) __tsan_switch_to_fiber((var), 0)
#else
#define TSAN_FIBER(var) int var __attribute__((unused))
#define TSAN_CREATE(var) ((void)0)
#define TSAN_DESTROY(var) ((void)0)
#define TSAN_CURRENT(var) ((void)0)
#define TSAN_SWITCH(var) ((void)0)
#endif

/* >>coroutine: one ucontext coroutine, resumed by whichever thread's turn it is. */
#define STEPS 200
#define CORO_STACK (256 * 1024)
static ucontext_t g_coro;
static ucontext_t *g_resume; /* the context of the thread that resumed it: where it yields to */
static char g_coro_stack[CORO_STACK] __attribute__((aligned(16)));
static volatile int g_coro_done;

static TSAN_FIBER(g_coro_tsan);
static TSAN_FIBER(g_resume_tsan);

static __attribute__((noinline)) void coro_yield(void) {
  TSAN_SWITCH(g_resume_tsan);
  swapcontext(&g_coro, g_resume);
}

static __attribute__((noinline)) void coro_step(int i) {
  STROBE_SCOPE("coro_step");
  STROBE_VALUE("step", i);
  if (i % 2) coro_yield(); /* suspended inside the step: resumed on the other thread */
}

static void coro_main(void) {
  {
    STROBE_SCOPE("coro_outer");
    for (int i = 0; i < STEPS; i++) {
      coro_step(i);
      if (i % 2 == 0) coro_yield(); /* suspended between steps */
    }
  }
  g_coro_done = 1;
  coro_yield();
}

typedef struct turns {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int turn; /* whose turn: 0 or 1 */
  strobe_fiber *fiber;
  int busy_seen; /* a worker found the fiber entered by the other one: must never happen here */
} turns;

typedef struct worker_arg {
  turns *t;
  int me;
} worker_arg;

static void *worker(void *arg) {
  turns *t = ((worker_arg *)arg)->t;
  int me = ((worker_arg *)arg)->me;
  strobe_thread_set_name(me ? "worker_b" : "worker_a");
  ucontext_t here;
  for (;;) {
    pthread_mutex_lock(&t->lock);
    while (t->turn != me && !g_coro_done) pthread_cond_wait(&t->cond, &t->lock);
    pthread_mutex_unlock(&t->lock);
    if (g_coro_done) break;
    {
      STROBE_SCOPE("worker_turn");
      if (strobe_fiber_enter(t->fiber) != 0) t->busy_seen++;
      g_resume = &here;
      TSAN_CURRENT(g_resume_tsan);
      TSAN_SWITCH(g_coro_tsan);
      swapcontext(&here, &g_coro);
      CHECK_EQ_INT(strobe_fiber_leave(), 0);
    }
    pthread_mutex_lock(&t->lock);
    t->turn = !me;
    pthread_cond_broadcast(&t->cond);
    pthread_mutex_unlock(&t->lock);
  }
  return NULL;
}

/* A coroutine yielding inside and between its scopes, resumed by two threads
 * in turn, 201 resumptions: its lane holds every one of its scopes nested
 * under it, the threads' lanes only their own. */
static void test_coroutine_hops_threads(void) {
  run r;
  run_start(&r, "fiber-hops");
  turns t = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
  REQUIRE_EQ_INT(strobe_fiber_create("coroutine", 9, &t.fiber), 0);
  g_coro_done = 0;
  REQUIRE(getcontext(&g_coro) == 0);
  g_coro.uc_stack.ss_sp = g_coro_stack;
  g_coro.uc_stack.ss_size = sizeof g_coro_stack;
  g_coro.uc_link = NULL;
  makecontext(&g_coro, coro_main, 0);
  TSAN_CREATE(g_coro_tsan);
  pthread_t a, b;
  worker_arg wa_arg = {&t, 0}, wb_arg = {&t, 1};
  REQUIRE(pthread_create(&a, NULL, worker, &wa_arg) == 0);
  REQUIRE(pthread_create(&b, NULL, worker, &wb_arg) == 0);
  REQUIRE(pthread_join(a, NULL) == 0);
  REQUIRE(pthread_join(b, NULL) == 0);
  CHECK_EQ_INT(t.busy_seen, 0);
  TSAN_DESTROY(g_coro_tsan);
  CHECK_EQ_INT(strobe_fiber_destroy(t.fiber), 0);

  lanes l = LANES("coro_outer", "coro_step", "worker_turn");
  run_read(&r, &l);
  int f = lane_of(&l, "coroutine"), wa = lane_of(&l, "worker_a"), wb = lane_of(&l, "worker_b");
  REQUIRE(f >= 0 && wa >= 0 && wb >= 0);
  CHECK_EQ_U64(l.os_tid[f], 0); /* a fiber's lane: no OS thread */
  CHECK(l.os_tid[wa] != 0 && l.os_tid[wb] != 0);
  CHECK_EQ_INT(l.ended[f], 1); /* destroyed: its lane ended */
  /* The coroutine's scopes, all on its lane, nested under it. */
  CHECK_EQ_U64(l.ends[f][0], 1);
  CHECK_EQ_U64(l.depth_max[f][0], 1);
  CHECK_EQ_U64(l.ends[f][1], STEPS);
  CHECK_EQ_U64(l.depth_min[f][1], 2);
  CHECK_EQ_U64(l.depth_max[f][1], 2);
  CHECK_EQ_U64(l.values[f], STEPS);
  CHECK_EQ_U64(l.ends[f][2], 0);
  /* The threads' lanes: their own turns only, at depth 1. Turns: one per resumption. */
  uint64_t turns_total = l.ends[wa][2] + l.ends[wb][2];
  CHECK_EQ_U64(turns_total, STEPS + 1); /* a yield per step, one more at the end */
  CHECK(l.ends[wa][2] > 0 && l.ends[wb][2] > 0);
  CHECK_EQ_U64(l.depth_max[wa][2], 1);
  CHECK_EQ_U64(l.depth_max[wb][2], 1);
  CHECK_EQ_U64(l.ends[wa][0] + l.ends[wa][1] + l.ends[wb][0] + l.ends[wb][1], 0);
  CHECK_EQ_U64(l.values[wa] + l.values[wb], 0);
  /* Nothing unwound, lost, unfinished or misused anywhere. */
  for (uint32_t i = 0; i < l.nlanes && i < MAX_LANES; i++)
    for (int n = 0; n < 3; n++) CHECK_EQ_U64(l.unwound[i][n], 0);
  CHECK_EQ_U64(l.totals.unwound, 0);
  CHECK_EQ_U64(l.totals.lost, 0);
  CHECK_EQ_U64(l.totals.unfinished, 0);
  CHECK_EQ_U64(l.totals.misuse.unbalanced + l.totals.misuse.end_without_begin + l.totals.misuse.value_without_scope, 0);
}

/* A fiber destroyed with scopes open (its coroutine suspended inside a
 * block scope, never resumed): the block scope ends unwound, an explicit one
 * is counted open at exit; the thread's own scope is untouched. */
static ucontext_t g_left, g_left_back;
static TSAN_FIBER(g_left_tsan);
static TSAN_FIBER(g_left_back_tsan);
static char g_left_stack[64 * 1024] __attribute__((aligned(16)));

static void left_main(void) {
  STROBE_BEGIN("explicit_left");
  STROBE_SCOPE("block_left");
  TSAN_SWITCH(g_left_back_tsan);
  swapcontext(&g_left, &g_left_back); /* never resumed */
}

static void test_destroy_closes_what_is_open(void) {
  run r;
  run_start(&r, "fiber-destroy");
  strobe_misuse before = strobe_query_misuse();
  strobe_fiber *f;
  REQUIRE_EQ_INT(strobe_fiber_create("left_open", 9, &f), 0);
  STROBE_BEGIN("thread_scope");
  REQUIRE_EQ_INT(strobe_fiber_enter(f), 0);
  CHECK(strobe_fiber_query_current() == f);
  CHECK_EQ_INT(strobe_depth(), 0); /* the fiber's own stack */
  REQUIRE(getcontext(&g_left) == 0);
  g_left.uc_stack.ss_sp = g_left_stack;
  g_left.uc_stack.ss_size = sizeof g_left_stack;
  makecontext(&g_left, left_main, 0);
  TSAN_CREATE(g_left_tsan);
  TSAN_CURRENT(g_left_back_tsan);
  TSAN_SWITCH(g_left_tsan);
  swapcontext(&g_left_back, &g_left);
  TSAN_DESTROY(g_left_tsan);
  CHECK_EQ_INT(strobe_depth(), 2);
  CHECK_EQ_INT(strobe_fiber_destroy(f), STROBE_EBUSY); /* this thread is inside it */
  CHECK_EQ_INT(strobe_fiber_leave(), 0);
  CHECK(strobe_fiber_query_current() == NULL);
  CHECK_EQ_INT(strobe_depth(), 1); /* the thread's stack again */
  CHECK_EQ_INT(strobe_fiber_destroy(f), 0);
  STROBE_END(); /* thread_scope */
  strobe_misuse after = strobe_query_misuse();
  CHECK_EQ_U64(after.open_at_exit - before.open_at_exit, 1);
  lanes l = LANES("thread_scope", "explicit_left", "block_left");
  run_read(&r, &l);
  int fl = lane_of(&l, "left_open");
  REQUIRE(fl >= 0);
  CHECK_EQ_U64(l.unwound[fl][2], 1); /* the block scope */
  CHECK_EQ_U64(l.totals.unwound, 1);
  CHECK_EQ_U64(l.ends[fl][1], 0);
  CHECK_EQ_U64(l.totals.unfinished, 1); /* the explicit one, left open */
  uint64_t thread_scope_ends = 0;
  for (uint32_t i = 0; i < l.nlanes && i < MAX_LANES; i++) thread_scope_ends += l.ends[i][0];
  CHECK_EQ_U64(thread_scope_ends, 1);
  CHECK_EQ_U64(l.ends[fl][0], 0);
}

/* The calls' errors change nothing. */
static void test_errors(void) {
  strobe_fiber *f = (strobe_fiber *)1;
  CHECK_EQ_INT(strobe_fiber_create(NULL, 3, &f), STROBE_EINVAL);
  CHECK(f == NULL);
  CHECK_EQ_INT(strobe_fiber_create("x", 0, &f), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_fiber_create("a\0b", 3, &f), STROBE_EINVAL);
  char longname[80];
  memset(longname, 'n', sizeof longname);
  CHECK_EQ_INT(strobe_fiber_create(longname, 64, &f), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_fiber_create("x", 1, NULL), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_fiber_enter(NULL), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_fiber_leave(), STROBE_ESTATE);
  CHECK_EQ_INT(strobe_fiber_destroy(NULL), 0);
  REQUIRE_EQ_INT(strobe_fiber_create(longname, 63, &f), 0);
  CHECK_EQ_INT(strobe_fiber_enter(f), 0);
  CHECK_EQ_INT(strobe_fiber_enter(f), 0); /* already inside: nothing */
  CHECK_EQ_INT(strobe_fiber_leave(), 0);
  CHECK_EQ_INT(strobe_fiber_leave(), STROBE_ESTATE);
  CHECK_EQ_INT(strobe_fiber_destroy(f), 0);
}

/* One fiber, held by one thread, refused to another until it leaves; a
 * thread that exits inside a fiber leaves it. */
typedef struct held {
  strobe_fiber *f;
  int rc;
} held;

static void *enter_only(void *arg) {
  held *h = arg;
  {
    STROBE_SCOPE("attach_me"); /* the thread recorded: its exit hook runs */
  }
  h->rc = strobe_fiber_enter(h->f);
  return NULL;
}

static void *enter_and_leave(void *arg) {
  held *h = arg;
  h->rc = strobe_fiber_enter(h->f);
  if (h->rc == 0) (void)strobe_fiber_leave();
  return NULL;
}

static void test_one_thread_at_a_time(void) {
  run r;
  run_start(&r, "fiber-busy");
  held h = {0};
  REQUIRE_EQ_INT(strobe_fiber_create("shared", 6, &h.f), 0);
  REQUIRE_EQ_INT(strobe_fiber_enter(h.f), 0);
  pthread_t th;
  REQUIRE(pthread_create(&th, NULL, enter_and_leave, &h) == 0);
  REQUIRE(pthread_join(th, NULL) == 0);
  CHECK_EQ_INT(h.rc, STROBE_EBUSY);
  CHECK_EQ_INT(strobe_fiber_leave(), 0);
  REQUIRE(pthread_create(&th, NULL, enter_only, &h) == 0); /* exits inside it */
  REQUIRE(pthread_join(th, NULL) == 0);
  CHECK_EQ_INT(h.rc, 0);
  CHECK_EQ_INT(strobe_fiber_enter(h.f), 0); /* released by that thread's exit */
  CHECK_EQ_INT(strobe_fiber_leave(), 0);
  CHECK_EQ_INT(strobe_fiber_destroy(h.f), 0);
  lanes l = LANES("attach_me");
  run_read(&r, &l);
  CHECK_EQ_U64(l.totals.unwound, 0);
}

#define CASES(X)              \
  X(coroutine_hops_threads)   \
  X(destroy_closes_what_is_open) \
  X(errors)                   \
  X(one_thread_at_a_time)
HARNESS_MAIN(CASES)
