/*
 * test_session_never_blocks.c — proves that reading and ending sessions never
 * wait for application work (docs/sessions.md: "Read/end take only the bounded
 * collector lock, never an application/core lock or UI completion wait";
 * "These tools execute on the server thread even if the UI is blocked"):
 * while a UI thread sits 2 s inside a long pass and an application scope
 * (holding no Strobe lock), another thread's read and end return in well
 * under that time and report the pass as unfinished with its phase. Also
 * that JSON export takes no collector lock ("JSON export occurs after the
 * collector lock is released"): a report serializes while the collector's
 * lock is held by another thread. And that reads racing a thread which
 * publishes phases continuously always see sane elapsed-so-far values.
 *
 * STROBE_TEST_NEEDS: jansson reports
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "session/report.h"
#include "support/session_util.h"

#define STALL_MS 2000

typedef struct ui {
  strobe_collector *c;
  strobe_window w;
  int inside; /* atomic: the thread is in its long stage */
  int done;   /* atomic: the pass completed */
} ui;

static void *ui_thread(void *arg) {
  ui *u = arg;
  strobe_op op = strobe_op_begin(u->c, u->w, STROBE_OP_PASS, NULL);
  strobe_app_scope save = strobe_app_scope_begin(u->c, "main", "blocking_save", STROBE_LANE_UI);
  {
    STROBE_STAGE("render_present", NULL);
    __atomic_store_n(&u->inside, 1, __ATOMIC_RELEASE);
    fx_sleep_ms(STALL_MS); /* a stalled present: no Strobe lock held */
  }
  strobe_app_scope_end(&save);
  strobe_op_end(op, 1);
  __atomic_store_n(&u->done, 1, __ATOMIC_RELEASE);
  return NULL;
}

static void check_stalled(json_t *doc) {
  CHECK(!strcmp(jstr(doc, "status"), "unfinished"));
  CHECK_EQ_INT(jlen(doc, "unfinished"), 1);
  json_t *u = json_array_get(jreq(doc, "unfinished"), 0);
  CHECK(!strcmp(jstr(u, "phase"), "render_present"));
  CHECK(!strcmp(jstr(u, "window"), "main"));
  CHECK(!jbool(u, "started_before_session"));
  CHECK(jnum(u, "elapsed_ms") >= jnum(u, "phase_elapsed_ms"));
  CHECK_EQ_INT(jlen(doc, "application_scopes.unfinished"), 1);
  CHECK_EQ_INT(jlen(doc, "samples"), 0);
}

static void test_read_and_end_during_stall(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char keep[STROBE_SESSION_ID_MAX], id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, keep);
  su_start(c, 0, id);
  ui u = {c, w, 0, 0};
  pthread_t t;
  REQUIRE_EQ_INT(pthread_create(&t, NULL, ui_thread, &u), 0);
  while (!__atomic_load_n(&u.inside, __ATOMIC_ACQUIRE)) fx_sleep_ms(1);

  /* From this (server) thread, while the UI thread is stuck. */
  double t0 = fx_now_ms();
  strobe_report *r = NULL;
  REQUIRE_EQ_INT(strobe_session_read(c, id, 0, &r), 0);
  double read_ms = fx_now_ms() - t0;
  CHECK(!__atomic_load_n(&u.done, __ATOMIC_ACQUIRE));
  json_t *doc = check_report_json(r);
  check_stalled(doc);
  json_decref(doc);
  strobe_report_free(r);

  t0 = fx_now_ms();
  REQUIRE_EQ_INT(strobe_session_stop(c, id, 0, &r), 0);
  double end_ms = fx_now_ms() - t0;
  CHECK(!__atomic_load_n(&u.done, __ATOMIC_ACQUIRE));
  doc = check_report_json(r);
  check_stalled(doc);
  json_decref(doc);
  strobe_report_free(r);
  /* Well under the stall: neither waited for the pass. */
  CHECK(read_ms < STALL_MS / 2);
  CHECK(end_ms < STALL_MS / 2);

  CHECK_EQ_INT(pthread_join(t, NULL), 0);
  /* The session that kept running gets the pass once it completes. */
  strobe_report_free(su_end(c, keep, &doc));
  CHECK_EQ_INT(jint(doc, "counts.completed"), 1);
  CHECK(jnum(json_array_get(jreq(doc, "samples"), 0), "total_ms") >= STALL_MS);
  CHECK_EQ_INT(jint(doc, "application_scopes.completed"), 1);
  json_decref(doc);
  strobe_collector_release(c);
}

/* Serialization runs with no collector lock: it completes while another thread holds it. */
typedef struct holder {
  strobe_collector *c;
  int locked, release; /* atomic */
} holder;

static void *hold_lock(void *arg) {
  holder *h = arg;
  strobe__mutex_lock(&h->c->lock); /* white box: the collector's short lock */
  __atomic_store_n(&h->locked, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(&h->release, __ATOMIC_ACQUIRE)) fx_sleep_ms(1);
  strobe__mutex_unlock(&h->c->lock);
  return NULL;
}

static void test_json_without_lock(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  su_op(c, w, STROBE_OP_PASS, 1);
  strobe_report *live = su_read(c, id, NULL);
  strobe_report *final = su_end(c, id, NULL);
  holder h = {c, 0, 0};
  pthread_t t;
  REQUIRE_EQ_INT(pthread_create(&t, NULL, hold_lock, &h), 0);
  while (!__atomic_load_n(&h.locked, __ATOMIC_ACQUIRE)) fx_sleep_ms(1);
  alarm(60); /* if serializing took the lock, this would hang: fail instead */
  char *a = su_json(live), *b = su_json(final);
  strobe_report_free(live); /* freeing takes no lock either */
  strobe_report_free(final);
  alarm(0);
  __atomic_store_n(&h.release, 1, __ATOMIC_RELEASE);
  CHECK_EQ_INT(pthread_join(t, NULL), 0);
  CHECK(strstr(a, "\"final\":false") != NULL);
  CHECK(strstr(b, "\"final\":true") != NULL);
  free(a);
  free(b);
  strobe_collector_release(c);
}

/* Reads racing a thread that publishes phases as fast as it can: every
 * observation is elapsed-so-far, never negative, and a phase never began
 * before its operation nor after the read. */
typedef struct busy {
  strobe_collector *c;
  strobe_window w;
  int running, stop; /* atomic */
} busy;

static void *busy_thread(void *arg) {
  busy *b = arg;
  strobe_op op = strobe_op_begin(b->c, b->w, STROBE_OP_PASS, NULL);
  __atomic_store_n(&b->running, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE)) {
    STROBE_STAGE("busy_outer", NULL);
    STROBE_STAGE("busy_inner", "busy_outer");
  }
  strobe_op_end(op, 1);
  return NULL;
}

static void test_reads_racing_phases(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  busy b = {c, w, 0, 0};
  pthread_t t;
  REQUIRE_EQ_INT(pthread_create(&t, NULL, busy_thread, &b), 0);
  while (!__atomic_load_n(&b.running, __ATOMIC_ACQUIRE)) fx_sleep_ms(1);
  /* The phase is one atomic word the busy thread rewrites at every stage
   * begin and end: each read sees a whole one (a stage of this operation, or
   * none), and successive reads see it move. (Its start is clamped to the
   * read time by construction, so that bound is not what is checked here.) */
  uint32_t sites[3] = {0, 0, 0};
  int nsites = 0, with_phase = 0, moved = 0;
  uint64_t last_phase_start = 0;
  /* 20000 reads, and on until the phase moved twice: a loaded machine may
   * not run the busy thread during the first ones (60 s: a hang). */
  double t0 = fx_now_ms();
  for (int i = 0; i < 20000 || (moved <= 1 && fx_now_ms() - t0 < 60000); i++) {
    strobe_report *r = NULL;
    REQUIRE_EQ_INT(strobe_session_read(c, id, 0, &r), 0);
    CHECK_EQ_INT(r->nunfinished, 1);
    const strobe__unfinished_op *u = &r->unfinished[0];
    CHECK(u->start <= r->at);
    if (u->phase_site) {
      with_phase++;
      int known = 0;
      for (int k = 0; k < nsites; k++) known |= sites[k] == u->phase_site;
      if (!known && nsites < 3) sites[nsites++] = u->phase_site;
      const char *name = strobe__report_site_of(r, u->phase_site)->name;
      CHECKF(!strcmp(name, "busy_outer") || !strcmp(name, "busy_inner"), "phase %s is not a stage of the operation",
             name);
      moved += u->phase_start != last_phase_start;
      last_phase_start = u->phase_start;
    }
    if (i % 5000 == 0) check_report(r);
    strobe_report_free(r);
  }
  CHECK(with_phase > 0);
  CHECK(moved > 1);
  CHECK(nsites >= 1 && nsites <= 2); /* busy_outer and busy_inner, nothing torn */
  __atomic_store_n(&b.stop, 1, __ATOMIC_RELEASE);
  CHECK_EQ_INT(pthread_join(t, NULL), 0);
  su_end_free(c, id);
  strobe_collector_release(c);
}

#define CASES(X)               \
  X(read_and_end_during_stall) \
  X(json_without_lock)         \
  X(reads_racing_phases)      
HARNESS_MAIN(CASES)
