/*
 * test_session_races.c — the orderings the collector lock must get right
 * (docs/sessions.md §Bounds and lifecycle):
 *   - an operation's (and an application scope's) end time is taken before
 *     the lock; a session that starts between that time and the
 *     publication never counts it as a boundary exclusion (it completed
 *     before the session existed);
 *   - a second strobe_op_end of the same handle checks the generation
 *     before it reads the slot, which by then may be another thread's
 *     operation (the TSan build reports the unsynchronized read otherwise);
 *   - operations begun while nothing listens are kept on their threads
 *     without the lock (docs/sessions.md §Cost when nothing listens): a
 *     session started on another thread still reports one unfinished, with
 *     its phase, and counts it excluded at its end; threads beginning
 *     passes that way at once count every pass (frame ids), while sessions
 *     start, read and end beside them.
 * White box: holds the collector's lock and moves a session's start.
 *
 * STROBE_TEST_NEEDS: jansson reports
 */
#include <pthread.h>
#include <string.h>

#include "platform/clock.h"
#include "session/session_internal.h"
#include "support/session_util.h"

typedef struct ender {
  strobe_collector *c;
  strobe_window w;
  int about_to_end;   /* atomic */
  int begun;          /* atomic */
  int go;             /* atomic */
  strobe_app_scope scope;
} ender;

static void wait_flag(int *flag) {
  while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) fx_sleep_ms(1);
}

static void *end_op_while_locked(void *arg) {
  ender *e = arg;
  strobe_op op = strobe_op_begin(e->c, e->w, STROBE_OP_PASS, NULL);
  __atomic_store_n(&e->begun, 1, __ATOMIC_RELEASE);
  wait_flag(&e->go);
  __atomic_store_n(&e->about_to_end, 1, __ATOMIC_RELEASE);
  strobe_op_end(op, 1); /* takes its end time, then blocks on the lock */
  return NULL;
}

static void *end_scope_while_locked(void *arg) {
  ender *e = arg;
  wait_flag(&e->go);
  __atomic_store_n(&e->about_to_end, 1, __ATOMIC_RELEASE);
  strobe_app_scope_end(&e->scope);
  return NULL;
}

/* The session at slot k starts now, under the lock the ender waits for: as if
 * it had started between the ender's end time and its publication. */
static void restart_now(strobe_collector *c, const char *id) {
  for (int k = 0; k < STROBE_MAX_SESSIONS; k++) {
    strobe__session *s = &c->sessions[k];
    char name[STROBE_SESSION_ID_MAX];
    snprintf(name, sizeof name, "profile_%llu", (unsigned long long)s->number);
    if (s->active && !strcmp(name, id)) s->start = strobe__now();
  }
}

static void test_end_before_start_not_excluded(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  ender e = {.c = c, .w = w};
  pthread_t t;
  REQUIRE_EQ_INT(pthread_create(&t, NULL, end_op_while_locked, &e), 0);
  wait_flag(&e.begun);
  su_start(c, 0, id); /* after the operation began: it will not be admitted */
  strobe__mutex_lock(&c->lock);
  __atomic_store_n(&e.go, 1, __ATOMIC_RELEASE);
  wait_flag(&e.about_to_end);
  fx_sleep_ms(200); /* the ender has its end time and waits for the lock */
  restart_now(c, id);
  strobe__mutex_unlock(&c->lock);
  CHECK_EQ_INT(pthread_join(t, NULL), 0);
  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "counts.boundary_excluded"), 0);
  CHECK_EQ_INT(jint(doc, "counts.completed"), 0);
  json_decref(doc);

  /* The same for an application scope. */
  ender s = {.c = c, .w = w};
  s.scope = strobe_app_scope_begin(c, "main", "worker_save", STROBE_LANE_WORKER);
  su_start(c, 0, id);
  REQUIRE_EQ_INT(pthread_create(&t, NULL, end_scope_while_locked, &s), 0);
  strobe__mutex_lock(&c->lock);
  __atomic_store_n(&s.go, 1, __ATOMIC_RELEASE);
  wait_flag(&s.about_to_end);
  fx_sleep_ms(200);
  restart_now(c, id);
  strobe__mutex_unlock(&c->lock);
  CHECK_EQ_INT(pthread_join(t, NULL), 0);
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "application_scopes.boundary_excluded"), 0);
  CHECK_EQ_INT(jint(doc, "application_scopes.completed"), 0);
  json_decref(doc);
  strobe_collector_release(c);
}

/* >>a second end: thread A ends its operation twice; in between, thread B's
 * operation took the same slot and is working in it. */
typedef struct reuser {
  strobe_collector *c;
  strobe_window w;
  int ended;    /* atomic: A ended its operation once */
  int done;     /* atomic: A's second end returned */
} reuser;

static void *work_in_reused_slot(void *arg) {
  reuser *u = arg;
  wait_flag(&u->ended);
  strobe_op op = strobe_op_begin(u->c, u->w, STROBE_OP_PASS, NULL); /* the lowest free slot: A's old one */
  while (!__atomic_load_n(&u->done, __ATOMIC_ACQUIRE)) {
    STROBE_STAGE("reused_work", NULL);
    strobe_op_counter_add("reused_rows", 1);
  }
  strobe_op_end(op, 1);
  return NULL;
}

static void test_second_end_checks_generation(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  reuser u = {.c = c, .w = w};
  pthread_t t;
  REQUIRE_EQ_INT(pthread_create(&t, NULL, work_in_reused_slot, &u), 0);
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  strobe_op_end(op, 1);
  __atomic_store_n(&u.ended, 1, __ATOMIC_RELEASE);
  fx_sleep_ms(20); /* B begins in the same slot */
  strobe_op_end(op, 1); /* a stale handle: must change and read nothing */
  strobe_op_end(op, 0);
  __atomic_store_n(&u.done, 1, __ATOMIC_RELEASE);
  CHECK_EQ_INT(pthread_join(t, NULL), 0);
  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "counts.completed"), 2);
  json_t *b = json_array_get(jreq(doc, "samples"), 0);
  REQUIRE(b != NULL);
  CHECK(jbool(b, "committed"));
  CHECK_EQ_INT(json_array_size(jreq(b, "stages")), 1);
  json_decref(doc);
  strobe_collector_release(c);
}

/* >>idle-records */
typedef struct stalled {
  strobe_collector *c;
  strobe_window w;
  int in_stage;       /* atomic */
  int release;        /* atomic */
} stalled;

static strobe_site g_stall_stage = STROBE_STAGE_SITE("stalled_stage", NULL);
static strobe_site g_inner_stage = STROBE_STAGE_SITE("inner_stage", "stalled_stage");

static void *stall_in_idle_pass(void *arg) {
  stalled *st = arg;
  su_op(st->c, st->w, STROBE_OP_REBUILD, 1); /* a thread's first operation gives it its context, under the lock */
  strobe_op op = strobe_op_begin(st->c, st->w, STROBE_OP_PASS, NULL);
  strobe_stage s = strobe_stage_begin(&g_stall_stage);
  strobe_stage inner = strobe_stage_begin(&g_inner_stage); /* ended before the session: the phase is the outer one again */
  (void)strobe_stage_end(&inner);
  __atomic_store_n(&st->in_stage, 1, __ATOMIC_RELEASE);
  wait_flag(&st->release);
  (void)strobe_stage_end(&s);
  strobe_op_end(op, 1);
  return NULL;
}

static void test_idle_op_seen_from_another_thread(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  su_op(c, w, STROBE_OP_PASS, 1); /* the main thread's context, and frame 1 */
  stalled st = {.c = c, .w = w};
  pthread_t t;
  REQUIRE_EQ_INT(pthread_create(&t, NULL, stall_in_idle_pass, &st), 0);
  wait_flag(&st.in_stage);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  json_t *doc;
  strobe_report_free(su_read(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "counts.unfinished"), 1);
  json_t *u = json_array_get(jreq(doc, "unfinished"), 0);
  REQUIRE(u != NULL);
  CHECK(jbool(u, "started_before_session"));
  CHECK_STR_EQ(jstr(u, "phase"), "stalled_stage");
  CHECK_EQ_INT(jint(u, "prospective_frame_id"), 2);
  json_decref(doc);
  __atomic_store_n(&st.release, 1, __ATOMIC_RELEASE);
  CHECK_EQ_INT(pthread_join(t, NULL), 0);
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "counts.unfinished"), 0);
  CHECK_EQ_INT(jint(doc, "counts.boundary_excluded"), 1);
  CHECK_EQ_INT(jint(doc, "counts.completed"), 0);
  json_decref(doc);
  strobe_collector_release(c);
}

#define PASSES_PER_THREAD 20000
#define PASS_THREADS 3

typedef struct passer {
  strobe_collector *c;
  strobe_window w;
  int done;           /* atomic */
} passer;

static void *begin_passes(void *arg) {
  passer *p = arg;
  for (int i = 0; i < PASSES_PER_THREAD; i++) {
    strobe_op op = strobe_op_begin(p->c, p->w, STROBE_OP_PASS, NULL);
    strobe_stage s = strobe_stage_begin(&g_stall_stage);
    (void)strobe_stage_end(&s);
    strobe_op_end(op, 1);
  }
  __atomic_fetch_add(&p->done, 1, __ATOMIC_RELEASE);
  return NULL;
}

static void test_idle_passes_counted_beside_sessions(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  passer p = {.c = c, .w = w};
  pthread_t t[PASS_THREADS];
  for (int i = 0; i < PASS_THREADS; i++) REQUIRE_EQ_INT(pthread_create(&t[i], NULL, begin_passes, &p), 0);
  int rounds = 0;
  while (__atomic_load_n(&p.done, __ATOMIC_ACQUIRE) < PASS_THREADS || rounds < 3) {
    char id[STROBE_SESSION_ID_MAX];
    su_start(c, 0, id);
    json_t *doc;
    strobe_report_free(su_read(c, id, &doc));
    size_t n = json_array_size(jreq(doc, "unfinished"));
    CHECK(n <= PASS_THREADS);
    for (size_t i = 0; i < n; i++) CHECK_STR_EQ(jstr(json_array_get(jreq(doc, "unfinished"), i), "window"), "main");
    json_decref(doc);
    su_end_free(c, id);
    rounds++;
  }
  for (int i = 0; i < PASS_THREADS; i++) CHECK_EQ_INT(pthread_join(t[i], NULL), 0);
  strobe_window_info info;
  REQUIRE_EQ_INT(strobe_collector_query_windows(c, &info, 1), 1);
  CHECK_EQ_INT(info.passes, (uint64_t)PASSES_PER_THREAD * PASS_THREADS);
  strobe_collector_release(c);
}

#define CASES(X)                       \
  X(end_before_start_not_excluded)     \
  X(second_end_checks_generation)      \
  X(idle_op_seen_from_another_thread)  \
  X(idle_passes_counted_beside_sessions)
HARNESS_MAIN(CASES)
