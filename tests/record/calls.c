/*
 * calls.c — an unmodified C program of known call counts for `strobe
 * record` (record_test.py): built once with -finstrument-functions and once
 * without, never linked to Strobe. top(n) calls mid n times and skip once;
 * mid calls leaf 3 times; skip calls mid and leaf once each. So `run N`
 * makes main 1, top 1, mid N+1, leaf 3(N+1)+1, skip 1 calls. The other
 * modes end the run the ways the starter must close a capture on: a
 * signal, an exec, a fork, a child that execs (`spawn`); `timed` adds
 * calls of known length.
 * Must never: link Strobe or call anything of it.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__clang__)
#define KEEP __attribute__((noinline))
#else
#define KEEP __attribute__((noinline, noipa))
#endif

volatile long sink;

KEEP int leaf(int x) {
  sink += x;
  return x * 3 + 1;
}

KEEP int mid(int x) {
  int s = 0;
  for (int i = 0; i < 3; i++) s += leaf(x + i);
  return s;
}

KEEP int skip(int x) { return mid(x) + leaf(x); }

KEEP int top(int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s += mid(i);
  return s + skip(n);
}

/* `timed`: timed_root calls fast 5 times (one leaf each) and slow twice
 * (two leaves around a 300 ms sleep), for --min-time: only main,
 * timed_root and slow last 200 ms. */
KEEP int fast(int x) { return leaf(x); }

KEEP int slow(int x) {
  int s = leaf(x);
  struct timespec ts = {0, 300 * 1000 * 1000};
  while (nanosleep(&ts, &ts) != 0) {
  }
  return s + leaf(x);
}

KEEP int timed_root(void) {
  int s = 0;
  for (int i = 0; i < 5; i++) s += fast(i);
  for (int i = 0; i < 2; i++) s += slow(i);
  return s;
}

/* A CPU-bound loop the sampler can see in the untraced build. */
KEEP long spin(long n) {
  long s = 0;
  for (long i = 0; i < n; i++) s += i ^ sink;
  return s;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "run";
  int n = argc > 2 ? atoi(argv[2]) : 10;
  sink += top(n);
  if (!strcmp(mode, "spin")) sink += spin(400000000L);
  if (!strcmp(mode, "timed")) sink += timed_root();
  if (!strcmp(mode, "signal")) raise(SIGTERM); /* default action: the process ends here */
  if (!strcmp(mode, "exec")) {
    fflush(stdout);
    execl(argv[0], argv[0], "run", "2", (char *)NULL);
    return 3;
  }
  if (!strcmp(mode, "spawn")) { /* a child that execs this program: `run 3` */
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
      execl(argv[0], argv[0], "run", "3", (char *)NULL);
      _exit(3);
    }
    int st;
    waitpid(c, &st, 0);
  }
  if (!strcmp(mode, "fork")) {
    pid_t c = fork();
    if (c == 0) {
      sink += top(n); /* the child's calls: in no capture of its parent */
      exit(0);
    }
    int st;
    waitpid(c, &st, 0);
  }
  printf("%ld\n", sink);
  return 0;
}
