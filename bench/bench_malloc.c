/*
 * bench_malloc.c — what libstrobe_malloc costs (docs/memory.md §The
 * interposer). STROBE_BENCH_NEEDS: malloc-interposer
 *
 * It runs itself again with the interposer preloaded, then times, in that
 * one process, malloc+free of 64 bytes through the interposer against the
 * same pair called straight on the allocator underneath (libc's, found with
 * dlopen), both through function pointers, best of 9 alternating rounds:
 *   BENCH malloc_free_plain_ns         the allocator underneath, per pair
 *   BENCH malloc_free_idle_ns          through the interposer, nothing recording
 *   BENCH malloc_free_idle_ratio       the two, divided (budget <= 1.05)
 *   BENCH malloc_free_recording_ns     through the interposer while a capture records
 *   BENCH malloc_free_recording_ratio  over the plain pair (a figure, not a budget)
 * Times on a machine shared with other work are noisy; the same ratio in
 * instructions, exact, is scripts/bench-callgrind.sh's (BENCH
 * malloc_free_idle_instructions_ratio), from `bench_malloc --count N`,
 * which runs malloc_plain_loop and malloc_idle_loop once each.
 * Usage: bench_malloc [pairs per round, default 2000000] | --count N
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "strobe/record.h"
#include "strobe/strobe.h"
#include "support/fixtures.h"

typedef void *(*malloc_fn)(size_t);
typedef void (*free_fn)(void *);

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ns per malloc+free pair. The pointers are volatile so the compiler can
 * neither inline nor drop the pair. */
static double round_ns(malloc_fn volatile m, free_fn volatile f, unsigned n) {
  double t0 = now_ns();
  for (unsigned i = 0; i < n; i++) {
    void *p = m(64);
    *(volatile char *)p = (char)i;
    f(p);
  }
  return (now_ns() - t0) / n;
}

/* --count: the two loops callgrind counts, extern and noinline so it sees these names. */
void malloc_plain_loop(malloc_fn m, free_fn f, unsigned n);
void malloc_idle_loop(malloc_fn m, free_fn f, unsigned n);
__attribute__((noinline)) void malloc_plain_loop(malloc_fn m, free_fn f, unsigned n) { (void)round_ns(m, f, n); }
__attribute__((noinline)) void malloc_idle_loop(malloc_fn m, free_fn f, unsigned n) { (void)round_ns(m, f, n); }

static double best(malloc_fn m, free_fn f, unsigned n, double *other, malloc_fn m2, free_fn f2) {
  double a = 1e30, b = 1e30;
  for (int r = 0; r < 9; r++) { /* alternating: drift in the machine's speed hits both alike */
    double x = round_ns(m, f, n), y = round_ns(m2, f2, n);
    if (x < a) a = x;
    if (y < b) b = y;
  }
  *other = b;
  return a;
}

int main(int argc, char **argv) {
  int count = argc > 2 && !strcmp(argv[1], "--count");
  unsigned n = argc > 1 ? (unsigned)strtoul(argv[count ? 2 : 1], NULL, 10) : 2000000u;
  if (!getenv("STROBE_BENCH_MALLOC_CHILD")) { /* run again with the interposer loaded */
    setenv("STROBE_BENCH_MALLOC_CHILD", "1", 1);
    setenv("LD_PRELOAD", STROBE_MALLOC_PATH, 1);
    execv("/proc/self/exe", argv);
    perror("bench_malloc: exec");
    return 1;
  }
  void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  malloc_fn plain_m = libc ? (malloc_fn)dlsym(libc, "malloc") : NULL;
  free_fn plain_f = libc ? (free_fn)dlsym(libc, "free") : NULL;
  malloc_fn ours_m = (malloc_fn)dlsym(RTLD_DEFAULT, "malloc");
  free_fn ours_f = (free_fn)dlsym(RTLD_DEFAULT, "free");
  if (!plain_m || !plain_f || ours_m == plain_m) {
    fprintf(stderr, "bench_malloc: the interposer is not loaded ahead of libc\n");
    return 1;
  }
  if (count) {
    malloc_plain_loop(plain_m, plain_f, n);
    malloc_idle_loop(ours_m, ours_f, n);
    return 0;
  }
  double plain, idle = best(ours_m, ours_f, n, &plain, plain_m, plain_f);
  printf("BENCH malloc_free_plain_ns %.2f ns\n", plain);
  printf("BENCH malloc_free_idle_ns %.2f ns\n", idle);
  printf("BENCH malloc_free_idle_ratio %.3f ratio\n", idle / plain);
  printf("BUDGET malloc_free_idle_ratio %.3f <= 1.05 %s\n", idle / plain, idle / plain <= 1.05 ? "ok" : "OVER");

  char path[64];
  strobe_recorder *rec = NULL;
  if (fx_temp_file(path, sizeof path, "benchmalloc") || strobe_record_start(&(strobe_record_desc){.path = path}, &rec))
    return 1;
  double plain2, recording = best(ours_m, ours_f, n / 40, &plain2, plain_m, plain_f); /* about a ring's worth per round */
  strobe_record_stop(rec);
  unlink(path);
  printf("BENCH malloc_free_recording_ns %.2f ns\n", recording);
  printf("BENCH malloc_free_recording_ratio %.3f ratio\n", recording / plain2);
  return 0;
}
