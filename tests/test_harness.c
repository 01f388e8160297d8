/*
 * test_harness.c — the test harness (tests/support/harness.h) tested the way
 * CI uses it: harness_failing, whose cases fail on purpose, runs as a child
 * process, and its exit status and output must show every failed check with
 * file:line and values, the checks a REQUIRE skipped must be absent, the
 * closing line must count passed and failed cases, and a case run by name
 * must run alone.
 */
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/harness.h"

#ifndef HARNESS_FAILING_PATH
#error "HARNESS_FAILING_PATH is defined by tests/CMakeLists.txt"
#endif

extern char **environ;

typedef struct child_run {
  int status;   /* exit status, or -1 if it did not exit normally */
  char out[64 * 1024]; /* stdout and stderr together, NUL-terminated */
  size_t len;
} child_run;

/* Runs harness_failing with up to two arguments, stdout and stderr into one pipe. */
static void run_failing(child_run *r, const char *arg1, const char *arg2) {
  int p[2];
  REQUIRE(pipe(p) == 0);
  posix_spawn_file_actions_t fa;
  REQUIRE(posix_spawn_file_actions_init(&fa) == 0);
  posix_spawn_file_actions_adddup2(&fa, p[1], 1);
  posix_spawn_file_actions_adddup2(&fa, p[1], 2);
  posix_spawn_file_actions_addclose(&fa, p[0]);
  char *argv[] = {(char *)HARNESS_FAILING_PATH, (char *)arg1, (char *)arg2, NULL};
  pid_t pid;
  int rc = posix_spawn(&pid, HARNESS_FAILING_PATH, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(p[1]);
  REQUIRE_EQ_INT(rc, 0);
  r->len = 0;
  ssize_t n;
  while ((n = read(p[0], r->out + r->len, sizeof r->out - 1 - r->len)) > 0) r->len += (size_t)n;
  close(p[0]);
  r->out[r->len] = 0;
  int status;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  r->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* How many times needle occurs in the output. */
static int count_of(const child_run *r, const char *needle) {
  int n = 0;
  for (const char *s = strstr(r->out, needle); s; s = strstr(s + 1, needle)) n++;
  return n;
}

/* The output's last line, without its newline. */
static const char *last_line(child_run *r) {
  if (r->len && r->out[r->len - 1] == '\n') r->out[--r->len] = 0;
  const char *nl = strrchr(r->out, '\n');
  return nl ? nl + 1 : r->out;
}

static child_run run; /* 64 KiB: not on the stack */

static void test_every_failed_check_reported(void) {
  run_failing(&run, NULL, NULL);
  CHECK_EQ_INT(run.status, 1);
  /* Each failed check: file:line, the check as written, and its values. */
  CHECK_EQ_INT(count_of(&run, "harness_failing.c:"), 3 + 2 + 1 + 100 + 2);
  CHECK_EQ_INT(count_of(&run, ": failed: CHECK_EQ_INT(one, two): 1 != 2\n"), 1);
  CHECK_EQ_INT(count_of(&run, ": failed: CHECK(one > two)\n"), 1);
  CHECK_EQ_INT(count_of(&run, ": failed: CHECK_STR_EQ(word, \"strobe\"): \"probe\" != \"strobe\"\n"), 1);
  CHECK_EQ_INT(count_of(&run, "FAIL three_checks_fail: 3 failed checks"), 1);
  /* Up to the REQUIRE, the case went on; after it, nothing ran. */
  CHECK_EQ_INT(count_of(&run, ": failed: CHECK_EQ_U64(five, 5): 4 != 5\n"), 1);
  CHECK_EQ_INT(count_of(&run, ": failed: REQUIRE(handle != NULL)\n"), 1);
  CHECK_EQ_INT(count_of(&run, "unreachable"), 0);
  CHECK_EQ_INT(count_of(&run, "FAIL require_stops: 2 failed checks"), 1);
  /* A check on another thread counts against the case. */
  CHECK_EQ_INT(count_of(&run, ": failed: CHECK_EQ_INT(one + two, 4): 3 != 4\n"), 1);
  CHECK_EQ_INT(count_of(&run, "FAIL fails_on_thread: 1 failed check "), 1);
  /* A flood is cut at 100 printed, and the cut is counted. */
  CHECK_EQ_INT(count_of(&run, ": failed: CHECK(i < 0)\n"), 100);
  CHECK_EQ_INT(count_of(&run, "flood: 50 more failed checks not printed"), 1);
  CHECK_EQ_INT(count_of(&run, "FAIL flood: 150 failed checks"), 1);
  /* Cleanups ran after the REQUIRE, last registered first, past a REQUIRE of their own. */
  const char *second = strstr(run.out, "cleanup second ran\n"), *first = strstr(run.out, "cleanup first ran\n");
  CHECK(second != NULL && first != NULL && second < first);
  CHECK_EQ_INT(count_of(&run, ": failed: REQUIRE(one == two)\n"), 1);
  CHECK_EQ_INT(count_of(&run, "after the cleanup's REQUIRE"), 0);
  CHECK_EQ_INT(count_of(&run, "FAIL cleanup_after_require: 2 failed checks"), 1);
  /* Every case ran, failures did not stop the run, and the closing line counts cases. */
  CHECK_EQ_INT(count_of(&run, "RUN  "), 7);
  CHECK_EQ_INT(count_of(&run, "ok   passes ("), 1);
  CHECK_EQ_INT(count_of(&run, "ok   passes_after_failures ("), 1);
  CHECK_STR_EQ(last_line(&run), "2 passed, 5 failed");
}

static void test_one_case_by_name(void) {
  run_failing(&run, "passes", NULL);
  CHECK_EQ_INT(run.status, 0);
  CHECK_EQ_INT(count_of(&run, "RUN  "), 1);
  CHECK_EQ_INT(count_of(&run, "ok   passes ("), 1);
  CHECK_STR_EQ(last_line(&run), "1 passed, 0 failed");

  run_failing(&run, "require_stops", NULL);
  CHECK_EQ_INT(run.status, 1);
  CHECK_EQ_INT(count_of(&run, "RUN  "), 1);
  CHECK_EQ_INT(count_of(&run, "RUN  require_stops"), 1);
  CHECK_STR_EQ(last_line(&run), "0 passed, 1 failed");

  /* Two names: both, in the order given. */
  run_failing(&run, "passes_after_failures", "three_checks_fail");
  CHECK_EQ_INT(run.status, 1);
  const char *a = strstr(run.out, "RUN  passes_after_failures"), *b = strstr(run.out, "RUN  three_checks_fail");
  CHECK(a != NULL && b != NULL && a < b);
  CHECK_STR_EQ(last_line(&run), "1 passed, 1 failed");
}

static void test_list_and_bad_arguments(void) {
  run_failing(&run, "--list", NULL);
  CHECK_EQ_INT(run.status, 0);
  CHECK_STR_EQ(run.out, "passes\nthree_checks_fail\nrequire_stops\nfails_on_thread\nflood\ncleanup_after_require\n"
                        "passes_after_failures\n");

  run_failing(&run, "no_such_case", NULL);
  CHECK_EQ_INT(run.status, 2);
  CHECK(strstr(run.out, "no_such_case") != NULL);
  CHECK_EQ_INT(count_of(&run, "RUN  "), 0);

  run_failing(&run, "--bogus", NULL);
  CHECK_EQ_INT(run.status, 2);
  CHECK_EQ_INT(count_of(&run, "RUN  "), 0);
}

#define CASES(X)                  \
  X(every_failed_check_reported) \
  X(one_case_by_name)             \
  X(list_and_bad_arguments)
HARNESS_MAIN(CASES)
