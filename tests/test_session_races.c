/*
 * test_session_races.c — the orderings the collector lock must get right
 * (docs/sessions.md §Bounds and lifecycle):
 *   - an operation's (and an application scope's) end time is taken before
 *     the lock; a session that starts between that time and the
 *     publication never counts it as a boundary exclusion (it completed
 *     before the session existed);
 *   - a second strobe_op_end of the same handle checks the generation
 *     before it reads the slot, which by then may be another thread's
 *     operation (the TSan build reports the unsynchronized read otherwise).
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

#define CASES(X) X(end_before_start_not_excluded) X(second_end_checks_generation)
HARNESS_MAIN(CASES)
