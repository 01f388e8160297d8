/*
 * aborts.h — the invariant tests' one way to see a check fire: run the
 * violation in a forked child and read what it said (tests/invariants/).
 * Owns: aborts_with. Must never: be used where the child's abort is not the
 * point (a child that returns or hangs fails the check).
 */
#ifndef STROBE_TESTS_INVARIANTS_ABORTS_H
#define STROBE_TESTS_INVARIANTS_ABORTS_H

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/harness.h"

/* Runs fn in a child with stderr captured; returns 1 when the child died of
 * SIGABRT and its output names both `cond` and `func`. A child that
 * returns, exits or hangs (10 s) is reported and fails the check. */
static inline int aborts_with(void (*fn)(void), const char *name, const char *cond, const char *func) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  fflush(NULL);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], STDERR_FILENO);
    alarm(10);
    fn();
    _exit(0); /* the invariant was not checked */
  }
  close(fds[1]);
  char out[4096];
  size_t n = 0;
  ssize_t k;
  while (n < sizeof out - 1 && (k = read(fds[0], out + n, sizeof out - 1 - n)) > 0) n += (size_t)k;
  out[n] = 0;
  close(fds[0]);
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid);
  int ok = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT && strstr(out, cond) && strstr(out, func);
  if (!ok)
    fprintf(stderr, "%s: child %s %d, said: %s\n", name, WIFSIGNALED(status) ? "died of signal" : "exited with",
            WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), out);
  return ok;
}

#endif
