/*
 * test_explain.c — the frame explanation's API (include/strobe/explain.h,
 * docs/explain.md) on a capture this test records: ten passes of window
 * "main" with the stages `build` and `draw` (no work to speak of), where
 * pass 5's `draw` sleeps 300 ms: far above anything a loaded machine's
 * scheduling adds to the others. The explainer names draw as pass 5's worst part against a
 * norm over the ten passes, says its cause unknown (no sampler: no context
 * switches), finds the slowest frames in order, and refuses bad arguments
 * with the documented codes, leaving nothing behind. Recorded again with
 * the sampler on, draw's 300 ms are blocked; every frame's excess over its
 * norm at once (what the viewer sorts by) is the explanation's; with max_runs 9 the runs past
 * are counted and pass 5's splits are unknown, never partial.
 * A pass left running when the recording stops (its thread blocked on a
 * condition variable inside `draw`, nested in `build`) is an unfinished
 * frame whose stall names draw under build, its elapsed time against the
 * finished passes' p95, and its thread blocked (unknown without the
 * sampler); the JSON says the same and keeps function names to the content
 * flag. (`strobe explain` on a capture with switches: tests/cli/analysis_test.py.)
 *
 * STROBE_TEST_LABELS: sampler
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <string.h>
#include <unistd.h>

#include "strobe/explain.h"
#include "strobe/lock.h"
#include "strobe/record.h"
#include "strobe/sample.h"
#include "strobe/session.h"
#include "support/fixtures.h"
#include "support/harness.h"

static char g_path[256];

/* With the sampler (and its context switches) on when `switches`. */
static void record(int switches) {
  REQUIRE(fx_temp_file(g_path, sizeof g_path, "explain") == 0);
  if (switches) REQUIRE(strobe_sampler_start(NULL) == 0);
  strobe_collector *c;
  strobe_window w;
  REQUIRE(strobe_collector_create(&c) == 0 && strobe_window_register(c, "main", 0, &w) == 0);
  strobe_recorder *rec = NULL;
  REQUIRE(strobe_record_start(&(strobe_record_desc){.path = g_path}, &rec) == 0);
  /* A switch before the passes: the thread's switches cover them from there (analyze/samples.h). */
  if (switches) fx_sleep_ms(2);
  for (uint64_t id = 1; id <= 10; id++) {
    strobe_op op = strobe_op_begin_frame(c, w, id, NULL);
    {
      STROBE_STAGE("build", NULL);
    }
    {
      STROBE_STAGE("draw", NULL);
      if (id == 5) fx_sleep_ms(300);
    }
    strobe_op_end(op, 1);
  }
  REQUIRE(strobe_record_stop(rec) == 0);
  if (switches) REQUIRE(strobe_sampler_stop() == 0);
  strobe_collector_release(c);
}

static void test_names_the_slow_stage(void) {
  record(0);
  strobe_explain *e = NULL;
  REQUIRE(strobe_explain_open(g_path, NULL, &e) == 0 && e);
  const strobe_frames *fx = strobe_explain_query_frames(e);
  uint32_t slow[3];
  REQUIRE(strobe_explain_slowest(e, 3, slow) == 3);
  CHECK(strobe_frames_query_frame(fx, slow[0])->number == 5);
  for (int i = 1; i < 3; i++) {
    const strobe_frame *a = strobe_frames_query_frame(fx, slow[i - 1]), *b = strobe_frames_query_frame(fx, slow[i]);
    CHECK(a->end_ns - a->begin_ns >= b->end_ns - b->begin_ns);
  }
  strobe_frame_explanation x;
  REQUIRE(strobe_explain_frame(e, slow[0], &x) == 0);
  /* The median frame is no longer than the second slowest: a rule of the ranks, not of how fast the machine is. */
  const strobe_frame *second = strobe_frames_query_frame(fx, slow[1]);
  CHECK(x.wall.known && x.wall.n == 10 && x.wall.ns >= 300e6 && x.wall.p50_ns <= second->end_ns - second->begin_ns);
  REQUIRE(x.worst != STROBE_FRAMES_NONE && x.worst < x.nparts);
  const strobe_explain_part *p = &x.parts[x.worst];
  CHECK(p->kind == STROBE_EXPLAIN_STAGE && !strcmp(p->name, "draw") && p->exceeded);
  CHECK(p->wall.n == 10 && p->wall.ns >= 300e6 && p->excess_ns > 200e6);
  CHECK(p->cause == STROBE_EXPLAIN_CAUSE_UNKNOWN && !p->on_cpu.known && !p->blocked.known && p->causes == 0);
  CHECK(!strobe_explain_query_coverage(e).switches);
  uint32_t builds = 0;
  for (uint32_t i = 0; i < x.nparts; i++)
    if (x.parts[i].kind == STROBE_EXPLAIN_STAGE && !strcmp(x.parts[i].name, "build")) {
      builds++;
      CHECK(x.parts[i].wall.known && x.parts[i].wall.n == 10);
    }
  CHECK(builds == 1);
  /* Every frame's excess at once is the explanation's wall against its norm; pass 5's is the largest. */
  uint32_t count = strobe_frames_query_count(fx), most = 0;
  double *excess = calloc(count, sizeof *excess);
  REQUIRE(excess && strobe_explain_excess(e, excess) == 0);
  CHECK(excess[slow[0]] == x.wall.ns - x.wall.p50_ns);
  for (uint32_t i = 1; i < count; i++)
    if (excess[i] > excess[most]) most = i;
  CHECK(most == slow[0]);
  CHECK(strobe_explain_excess(e, NULL) == STROBE_EINVAL);
  free(excess);
  strobe_explain_destroy(e);
  unlink(g_path);
}

/* Past max_runs the runs are counted, and a frame that lost one has its splits unknown, never partial. */
static void test_runs_cut(void) {
  record(1);
  strobe_explain *e = NULL;
  REQUIRE(strobe_explain_open(g_path, NULL, &e) == 0);
  uint32_t slow;
  REQUIRE(strobe_explain_slowest(e, 1, &slow) == 1);
  strobe_frame_explanation x;
  REQUIRE(strobe_explain_frame(e, slow, &x) == 0 && x.worst < x.nparts);
  CHECK(strobe_explain_query_coverage(e).switches && strobe_explain_query_coverage(e).runs_cut == 0);
  CHECK(x.parts[x.worst].blocked.known && x.parts[x.worst].blocked.ns >= 250e6);
  CHECK(x.parts[x.worst].cause == STROBE_EXPLAIN_CAUSE_BLOCKED);
  strobe_explain_destroy(e);
  /* Runs in END order: pass 5 keeps build (the 9th) and loses draw, so its time outside stages would count draw's
   * 300 ms as blocked if its top-level runs were taken as complete. */
  REQUIRE(strobe_explain_open(g_path, &(strobe_explain_desc){.max_runs = 9}, &e) == 0);
  CHECK(strobe_explain_query_coverage(e).runs == 20 && strobe_explain_query_coverage(e).runs_cut == 11);
  REQUIRE(strobe_explain_frame(e, slow, &x) == 0 && x.worst < x.nparts);
  CHECK(!strcmp(x.parts[x.worst].name, "draw") && x.parts[x.worst].wall.known);
  for (uint32_t i = 0; i < x.nparts; i++) CHECK(!x.parts[i].on_cpu.known && !x.parts[i].blocked.known);
  CHECK(x.parts[x.worst].cause == STROBE_EXPLAIN_CAUSE_UNKNOWN);
  strobe_explain_destroy(e);
  unlink(g_path);
}

/* >>stall: a pass blocked inside draw (nested in build) while the recording stops. */
static strobe_collector *g_c;
static strobe_window g_w;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_release; /* under g_mu */
static long g_tid;    /* atomic: the blocked thread's OS id, once it runs */

static void *stalled_pass(void *arg) {
  (void)arg;
  __atomic_store_n(&g_tid, (long)syscall(SYS_gettid), __ATOMIC_RELEASE);
  strobe_op op = strobe_op_begin_frame(g_c, g_w, 11, NULL);
  {
    STROBE_STAGE("build", NULL);
    STROBE_STAGE("draw", NULL);
    pthread_mutex_lock(&g_mu);
    while (!g_release) pthread_cond_wait(&g_cv, &g_mu);
    pthread_mutex_unlock(&g_mu);
  }
  strobe_op_end(op, 1);
  return NULL;
}

/* 1 once OS thread tid sleeps (state S in /proc): blocked, off its CPU. */
static int asleep(long tid) {
  char path[64], buf[256];
  snprintf(path, sizeof path, "/proc/self/task/%ld/stat", tid);
  FILE *f = fopen(path, "r");
  size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
  if (f) fclose(f);
  buf[n] = 0;
  const char *paren = strrchr(buf, ')');
  return paren && paren[1] == ' ' && paren[2] == 'S';
}

static void record_stall(int switches) {
  REQUIRE(fx_temp_file(g_path, sizeof g_path, "explain-stall") == 0);
  if (switches) REQUIRE(strobe_sampler_start(NULL) == 0);
  REQUIRE(strobe_collector_create(&g_c) == 0 && strobe_window_register(g_c, "main", 0, &g_w) == 0);
  strobe_recorder *rec = NULL;
  REQUIRE(strobe_record_start(&(strobe_record_desc){.path = g_path}, &rec) == 0);
  for (uint64_t id = 1; id <= 10; id++) {
    strobe_op op = strobe_op_begin_frame(g_c, g_w, id, NULL);
    STROBE_STAGE("build", NULL);
    strobe_op_end(op, 1);
  }
  g_release = 0;
  __atomic_store_n(&g_tid, 0, __ATOMIC_RELEASE);
  pthread_t t;
  REQUIRE(pthread_create(&t, NULL, stalled_pass, NULL) == 0);
  while (!__atomic_load_n(&g_tid, __ATOMIC_ACQUIRE) || !asleep(__atomic_load_n(&g_tid, __ATOMIC_ACQUIRE)))
    fx_sleep_ms(1);
  fx_sleep_ms(300); /* the stall, and time for the sampler's reads (every 10 ms) to deliver the switch out */
  REQUIRE(strobe_record_stop(rec) == 0);
  pthread_mutex_lock(&g_mu);
  g_release = 1;
  pthread_cond_signal(&g_cv);
  pthread_mutex_unlock(&g_mu);
  pthread_join(t, NULL);
  if (switches) REQUIRE(strobe_sampler_stop() == 0);
  strobe_collector_release(g_c);
}

static void check_stall(int switches) {
  record_stall(switches);
  strobe_explain *e = NULL;
  REQUIRE(strobe_explain_open(g_path, NULL, &e) == 0);
  const strobe_frames *fx = strobe_explain_query_frames(e);
  uint32_t open = strobe_frames_find(fx, 11, STROBE_FRAMES_NONE), done = strobe_frames_find(fx, 10, STROBE_FRAMES_NONE);
  REQUIRE(open != STROBE_FRAMES_NONE && strobe_frames_query_frame(fx, open)->state == STROBE_FRAME_UNFINISHED);
  strobe_frame_stall st;
  CHECK(strobe_explain_stall(e, done, &st) == STROBE_ERANGE && st.stage == 0);
  REQUIRE(strobe_explain_stall(e, open, &st) == 0);
  CHECK(st.frame == open && st.n == 10 && st.elapsed_ns >= 300e6 && st.stalled);
  CHECK(st.elapsed_ns > STROBE_STALL_FACTOR * st.p95_ns);
  CHECK(st.stage && st.stage_name && !strcmp(st.stage_name, "draw"));
  CHECK(st.stage_parent_name && !strcmp(st.stage_parent_name, "build"));
  CHECK(st.stage_elapsed_ns >= 300e6 && st.stage_elapsed_ns <= st.elapsed_ns && st.stage_n == 0);
  if (switches) CHECK(st.thread_now == STROBE_EXPLAIN_CAUSE_BLOCKED && st.thread_since_ns >= 300e6);
  else CHECK(st.thread_now == STROBE_EXPLAIN_CAUSE_UNKNOWN && st.thread_since_ns == 0);
  char *json = NULL;
  size_t len = 0;
  REQUIRE(strobe_explain_json(e, &done, 1, STROBE_EXPLAIN_JSON_UNFINISHED, &json, &len) == 0);
  CHECK(len == strlen(json) && strstr(json, "\"stall\":\"stalled\"") && strstr(json, "\"stage\":\"draw\""));
  CHECK(strstr(json, switches ? "\"thread_now\":\"blocked\"" : "\"thread_now\":\"unknown\""));
  CHECK(strstr(json, "\"functions_withheld\"") && !strstr(json, "\"functions\""));
  free(json);
  REQUIRE(strobe_explain_json(e, &done, 1, STROBE_EXPLAIN_JSON_CONTENT, &json, &len) == 0);
  CHECK(strstr(json, "\"functions\"") && !strstr(json, "\"unfinished\""));
  free(json);
  uint32_t past = strobe_frames_query_count(fx);
  CHECK(strobe_explain_json(e, &past, 1, 0, &json, &len) == STROBE_ERANGE && !json);
  CHECK(strobe_explain_json(e, &done, 1, 4, &json, &len) == STROBE_EINVAL && !json);
  strobe_explain_destroy(e);
  unlink(g_path);
}

/* >>lock: pass 5's draw waits 300 ms for a strobe_mutex another thread holds: blocked, and of that, waiting for a
 * lock; the same wait as a sleep (record(1)) is blocked of no known kind. */
static strobe_mutex g_lock;
static int g_held; /* atomic: the holder has the lock */

static void *hold_lock(void *arg) {
  (void)arg;
  /* Registered first: a thread whose first event is a lock event, on a site with an id already, writes through the
   * detached sentinel (strobe/lock.h's strobe__lock_event checks num_limit, which the sentinel leaves 0). */
  strobe_thread_set_name("holder");
  strobe_mutex_lock(&g_lock);
  __atomic_store_n(&g_held, 1, __ATOMIC_RELEASE);
  fx_sleep_ms(300);
  strobe_mutex_unlock(&g_lock);
  return NULL;
}

static void test_lock_wait(void) {
  REQUIRE(fx_temp_file(g_path, sizeof g_path, "explain-lock") == 0);
  REQUIRE(strobe_sampler_start(NULL) == 0 && strobe_mutex_init(&g_lock, "frame_lock") == 0);
  strobe_collector *c;
  strobe_window w;
  REQUIRE(strobe_collector_create(&c) == 0 && strobe_window_register(c, "main", 0, &w) == 0);
  strobe_recorder *rec = NULL;
  REQUIRE(strobe_record_start(&(strobe_record_desc){.path = g_path}, &rec) == 0);
  fx_sleep_ms(2); /* a switch before the passes: they are covered from there */
  pthread_t t;
  for (uint64_t id = 1; id <= 10; id++) {
    if (id == 5) {
      REQUIRE(pthread_create(&t, NULL, hold_lock, NULL) == 0);
      while (!__atomic_load_n(&g_held, __ATOMIC_ACQUIRE)) fx_sleep_ms(1);
    }
    strobe_op op = strobe_op_begin_frame(c, w, id, NULL);
    {
      STROBE_STAGE("draw", NULL);
      strobe_mutex_lock(&g_lock); /* pass 5: held by the other thread for 300 ms */
      strobe_mutex_unlock(&g_lock);
    }
    strobe_op_end(op, 1);
  }
  pthread_join(t, NULL);
  REQUIRE(strobe_record_stop(rec) == 0 && strobe_sampler_stop() == 0);
  strobe_collector_release(c);
  strobe_explain *e = NULL;
  REQUIRE(strobe_explain_open(g_path, NULL, &e) == 0);
  uint32_t slow;
  strobe_frame_explanation x;
  REQUIRE(strobe_explain_slowest(e, 1, &slow) == 1 && strobe_explain_frame(e, slow, &x) == 0 && x.worst < x.nparts);
  const strobe_explain_part *p = &x.parts[x.worst];
  CHECK(strobe_explain_query_coverage(e).lock_waits && !strcmp(p->name, "draw") && p->blocked.known);
  CHECK(p->blocked.ns >= 200e6 && p->blocked_lock_ns >= 200e6 && p->blocked_lock_ns <= p->blocked.ns);
  strobe_explain_destroy(e);
  unlink(g_path);
  strobe_mutex_destroy(&g_lock);
  /* A sleep is blocked too, and of no known kind: no lock wait covers it. */
  record(1);
  REQUIRE(strobe_explain_open(g_path, NULL, &e) == 0);
  REQUIRE(strobe_explain_slowest(e, 1, &slow) == 1 && strobe_explain_frame(e, slow, &x) == 0 && x.worst < x.nparts);
  CHECK(x.parts[x.worst].blocked.ns >= 200e6 && x.parts[x.worst].blocked_lock_ns == 0);
  char *json = NULL;
  size_t len;
  REQUIRE(strobe_explain_json(e, &slow, 1, 0, &json, &len) == 0);
  CHECK(strstr(json, "\"blocked_on\":{\"lock\":0,\"unknown\":") && strstr(json, "\"wait_reason\":false"));
  free(json);
  strobe_explain_destroy(e);
  unlink(g_path);
}

static void test_unfinished_frame(void) { check_stall(1); }
static void test_unfinished_frame_without_switches(void) { check_stall(0); }

static void test_refuses_bad_arguments(void) {
  record(0);
  strobe_explain *e = (strobe_explain *)&e;
  CHECK(strobe_explain_open(NULL, NULL, &e) == STROBE_EINVAL);
  CHECK(strobe_explain_open(g_path, NULL, NULL) == STROBE_EINVAL);
  CHECK(strobe_explain_open(g_path, &(strobe_explain_desc){.top_functions = 17}, &e) == STROBE_EINVAL && !e);
  CHECK(strobe_explain_open("/nonexistent/strobe-explain", NULL, &e) == STROBE_EIO && !e);
  REQUIRE(strobe_explain_open(g_path, NULL, &e) == 0);
  strobe_frame_explanation x;
  memset(&x, 0xff, sizeof x);
  CHECK(strobe_explain_frame(e, strobe_frames_query_count(strobe_explain_query_frames(e)), &x) == STROBE_ERANGE);
  CHECK(x.nparts == 0 && x.parts == NULL);
  CHECK(strobe_explain_frame(e, 0, NULL) == STROBE_EINVAL);
  uint32_t none[1];
  CHECK(strobe_explain_slowest(e, 0, none) == 0 && strobe_explain_slowest(NULL, 1, none) == 0);
  CHECK(!strcmp(strobe_explain_part_name(STROBE_EXPLAIN_PART_LIMIT), "unknown"));
  CHECK(!strcmp(strobe_explain_cause_name(STROBE_EXPLAIN_CAUSE_LIMIT), "unknown"));
  strobe_explain_destroy(e);
  strobe_explain_destroy(NULL);
  unlink(g_path);
}

#define CASES(X)                                                                                            \
  X(names_the_slow_stage) X(runs_cut) X(lock_wait) X(unfinished_frame) X(unfinished_frame_without_switches)  \
  X(refuses_bad_arguments)
HARNESS_MAIN(CASES)
