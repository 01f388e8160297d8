/*
 * test_fork.c — fork() while Strobe records (docs/recording.md §Fork): a
 * process whose drain thread is busy (two threads scoping flat out into a
 * capture) forks many times, and each child starts a capture of its own,
 * records into it, stops it and reads it back. Without the library's
 * pthread_atfork handlers a child forked while the drain held its lock waits
 * for it forever. Each child's capture holds its own scopes, exactly, and none
 * of the parent's threads (they are not in the child); the parent's capture holds none of the children's
 * scopes. The parent waits for each child's exit, the condition, with a
 * generous cap after which it names the deadlock instead of hanging.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "support/fixtures.h"
#include "support/harness.h"
#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/strobe.h"

/* A child starts threads (the drain) after a multi-threaded fork: ThreadSanitizer
 * allows it when told (the child here only records and exits). */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void) { return "die_after_fork=0"; }

#define FORKS 30
#define CHILD_SCOPES 1000
#define CHILD_WAIT_CAP_S 120 /* a child that has not exited by then is stuck, not slow */

static int g_stop; /* atomic: the busy threads stop */
static uint64_t g_busy_scopes; /* atomic */

static void *busy(void *arg) {
  (void)arg;
  strobe_thread_set_name("parent_busy");
  while (!__atomic_load_n(&g_stop, __ATOMIC_RELAXED)) {
    for (int i = 0; i < 256; i++) {
      STROBE_SCOPE("parent_unit");
    }
    __atomic_fetch_add(&g_busy_scopes, 256, __ATOMIC_RELAXED);
  }
  return NULL;
}

static void child_units(int n) {
  for (int i = 0; i < n; i++) {
    STROBE_SCOPE("child_unit");
  }
}

/* ENDs of site `name` in path, and how many threads named "parent_busy" it has; UINT64_MAX when it cannot
 * be read. */
static uint64_t ends_named(const char *path, const char *name, uint32_t *threads) {
  strobe_capture *cap;
  if (strobe_capture_open(path, &cap)) return UINT64_MAX;
  strobe_capture_record r;
  uint64_t n = 0;
  while (strobe_capture_next(cap, &r) > 0) {
    if (r.type != STROBE_REC_END) continue;
    const strobe_capture_site *s = strobe_capture_query_site(cap, r.site);
    n += s && strcmp(s->name, name) == 0;
  }
  if (threads) { /* the parent's busy threads it names (indexes are the process's: they may have gaps) */
    *threads = 0;
    for (uint32_t i = 0; i < strobe_capture_query_thread_count(cap); i++) {
      const strobe_capture_thread *t = strobe_capture_query_thread(cap, i);
      *threads += t && strcmp(t->name, "parent_busy") == 0;
    }
  }
  strobe_capture_close(cap);
  return n;
}

/* The child: its own capture, its scopes in it, nothing else. Its exit status says what went wrong. */
static int child_main(const char *path) {
  strobe_recorder *rec;
  if (strobe_record_start(&(strobe_record_desc){.path = path}, &rec)) return 2;
  child_units(CHILD_SCOPES);
  if (strobe_record_stop(rec)) return 3;
  uint32_t threads = 0;
  if (ends_named(path, "child_unit", &threads) != CHILD_SCOPES) return 4;
  if (ends_named(path, "parent_unit", NULL) != 0) return 5;
  return threads == 0 ? 0 : 6;
}

/* waitpid, polled: the child's exit is the condition; past the cap it is killed and reported stuck. */
static int wait_child(pid_t pid, int *status) {
  struct timespec nap = {0, 1000000};
  for (long i = 0; i < CHILD_WAIT_CAP_S * 1000L; i++) {
    pid_t r = waitpid(pid, status, WNOHANG);
    if (r == pid) return 0;
    if (r < 0) return -1;
    nanosleep(&nap, NULL);
  }
  kill(pid, SIGKILL);
  waitpid(pid, status, 0);
  return -1;
}

static void test_child_records_after_fork_during_drain(void) {
  char path[64], cpath[80];
  REQUIRE(fx_temp_file(path, sizeof path, "fork") == 0);
  snprintf(cpath, sizeof cpath, "%s.child", path);
  REQUIRE_EQ_INT(strobe_setup(&(strobe_desc){.ring_events = 16384}), 0); /* small journal regions for each child to copy */
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  pthread_t th[2];
  for (int i = 0; i < 2; i++) REQUIRE(pthread_create(&th[i], NULL, busy, NULL) == 0);
  while (strobe_record_query_stats(rec).bytes == 0) sched_yield(); /* the drain is at work */
  int stuck = 0, failed = 0;
  for (int k = 0; k < FORKS; k++) {
    uint64_t before = __atomic_load_n(&g_busy_scopes, __ATOMIC_RELAXED);
    while (__atomic_load_n(&g_busy_scopes, __ATOMIC_RELAXED) == before) sched_yield(); /* still recording */
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) _exit(child_main(cpath));
    int status = 0;
    if (wait_child(pid, &status)) {
      printf("fork %d: child stuck\n", k);
      stuck++;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
      printf("fork %d: child %s %d\n", k, WIFEXITED(status) ? "exited" : "killed by signal",
             WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
      failed++;
    }
    unlink(cpath);
  }
  __atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
  printf("%d forks: %d children stuck, %d failed\n", FORKS, stuck, failed);
  CHECK_EQ_INT(stuck, 0);
  CHECK_EQ_INT(failed, 0);
  CHECK_EQ_U64(ends_named(path, "child_unit", NULL), 0);
  CHECK(ends_named(path, "parent_unit", NULL) > 0);
  unlink(path);
}

#define CASES(X) X(child_records_after_fork_during_drain)
HARNESS_MAIN(CASES)
