/*
 * fixtures.h — what the tests and the benches (bench/) both need, in one
 * place: a monotonic clock, a sleep that survives signals, the process's
 * resident set size, temporary files and directories under /tmp, and spin
 * work the compiler cannot fold away. Owns no checks: every function returns
 * a value or an error the caller judges (tests with REQUIRE, benches by
 * printing and exiting), so a bench links no test harness. Must never touch
 * the library's state.
 */
#ifndef STROBE_TESTS_FIXTURES_H
#define STROBE_TESTS_FIXTURES_H

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* >>clock: CLOCK_MONOTONIC, the clock the library's own ticks follow. */
static inline uint64_t fx_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline double fx_now_ms(void) { return (double)fx_now_ns() / 1e6; }

/* This thread's CPU time: a spin of so much CPU stays that long on a loaded machine that preempts it. */
static inline uint64_t fx_thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Sleeps ms milliseconds; a signal does not cut it short. */
static inline void fx_sleep_ms(unsigned ms) {
  struct timespec ts = {(time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* >>memory: resident set size of this process in bytes, or -1. */
static inline long fx_rss_bytes(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long size = 0, resident = -1;
  if (f) {
    if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = -1;
    fclose(f);
  }
  return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

/* >>files: names under /tmp that no other process or run can share. */

/* Creates an empty file /tmp/strobe-<tag>-XXXXXX and writes its path to
 * path[0..n). Returns 0, or -1 with errno set (path then holds no file). */
static inline int fx_temp_file(char *path, size_t n, const char *tag) {
  if (snprintf(path, n, "/tmp/strobe-%s-XXXXXX", tag) >= (int)n) {
    errno = ENAMETOOLONG;
    return -1;
  }
  int fd = mkstemp(path);
  if (fd < 0) return -1;
  close(fd);
  return 0;
}

/* Creates an empty directory /tmp/strobe-<tag>-XXXXXX; as fx_temp_file. */
static inline int fx_temp_dir(char *path, size_t n, const char *tag) {
  if (snprintf(path, n, "/tmp/strobe-%s-XXXXXX", tag) >= (int)n) {
    errno = ENAMETOOLONG;
    return -1;
  }
  return mkdtemp(path) ? 0 : -1;
}

/* Removes a directory and the files directly in it (the fixtures never make
 * deeper trees). Best effort: what cannot be removed stays. */
static inline void fx_remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  char p[1200];
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    unlink(p);
  }
  closedir(d);
  rmdir(dir);
}

/* >>work: a deterministic workload with a data dependency per step. */

/* xorshift64: state must be nonzero; returns the next value. */
static inline uint64_t fx_xorshift(uint64_t *state) {
  uint64_t x = *state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *state = x;
}

/* n dependent adds, in registers only, that the compiler must perform (the
 * empty asm makes each result opaque); returns the sum for a sink. */
static inline uint64_t fx_spin(uint64_t n, uint64_t seed) {
  uint64_t x = seed;
  for (uint64_t i = 0; i < n; i++) {
    x += i;
    __asm__ __volatile__("" : "+r"(x));
  }
  return x;
}

#endif
