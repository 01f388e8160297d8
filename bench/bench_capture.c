/*
 * bench_capture.c — what recording a realistic workload costs in file size,
 * lost events and memory. Two threads run a nested workload (50 distinct
 * scope sites, call trees 3–5 deep, leaves spinning a deterministic
 * xorshift-chosen 0–2000 iterations, a few hundred ns per scope on average)
 * while a capture file records every event with default settings. Then the
 * file is read back and:
 *
 *   capture_bytes_per_scope   file size / completed scopes read back (budget <= 4):
 *                             the disk cost of recording, header included;
 *   events_lost               events the library dropped (ring full), from
 *                             strobe_query_event_stats(); the capture's own
 *                             count is printed as events_lost_in_capture and
 *                             the budget (0) applies to the larger of the two;
 *   rss_growth_bytes_per_million_scopes
 *                             resident memory after the whole run minus
 *                             after the first 1M scopes per thread, per
 *                             million scopes recorded in between (both
 *                             threads): ~0, since memory must not grow with
 *                             the number of events.
 *
 * Also printed for context: capture_scopes (completed scopes read back),
 * capture_scopes_missing (scopes run but not read back; 0 when nothing was
 * lost), capture_ns_per_scope (wall time per scope on one worker thread, the
 * workload's realistic cost) and capture_read_ns_per_event (reader speed).
 *
 * Usage: bench_capture [scopes-per-thread]   (default 20,000,000: about 10–20 s on 2 cores)
 * Budgets are printed, never asserted: the exit status is 0 whatever is measured.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "floor.h"
#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/strobe.h"

#define NTHREADS 2
#define NSITES 50
#define DEFAULT_SCOPES_PER_THREAD 20000000ull
#define EARLY_SAMPLE_SCOPES 1000000ull /* per thread: rings, encode buffers and zstd state are warm by then */
#define MAX_SPIN 2000u                 /* leaf spin iterations: 0..MAX_SPIN, uniformly */

/* >>workload */
typedef struct worker {
  uint64_t rng;        /* xorshift64 state; nonzero, distinct per thread */
  uint64_t scopes;     /* scopes completed by this thread */
  uint64_t target;     /* stop after the tree that crosses this */
  uint64_t progress;   /* atomic mirror of `scopes`, published after each tree */
  uint64_t sink;       /* keeps the spins alive */
  uint64_t wall_ns;    /* time spent in the workload */
  const char *name;    /* thread name, static */
} worker;

static uint64_t xorshift(worker *w) { return fx_xorshift(&w->rng); }

static void work(worker *w, int depth);

/* The 50 sites: one function each, so every site has its own name and function. */
#define SITE_LIST(X)                                                                                 \
  X(00) X(01) X(02) X(03) X(04) X(05) X(06) X(07) X(08) X(09) X(10) X(11) X(12) X(13) X(14) X(15) \
  X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31) \
  X(32) X(33) X(34) X(35) X(36) X(37) X(38) X(39) X(40) X(41) X(42) X(43) X(44) X(45) X(46) X(47) \
  X(48) X(49)

#define DEFINE_SITE(n)                      \
  static void site_##n(worker *w, int depth) { \
    STROBE_SCOPE("site_" #n);               \
    w->scopes++;                            \
    work(w, depth);                         \
  }
SITE_LIST(DEFINE_SITE)
#undef DEFINE_SITE

#define SITE_PTR(n) site_##n,
static void (*const g_sites[NSITES])(worker *, int) = {SITE_LIST(SITE_PTR)};
#undef SITE_PTR

/* A leaf spins; an inner scope calls 1–3 children one level down. */
static void work(worker *w, int depth) {
  if (depth <= 1) {
    w->sink = fx_spin(xorshift(w) % (MAX_SPIN + 1u), w->sink); /* one dependent add per iteration */
    return;
  }
  int children = 1 + (int)(xorshift(w) % 3u);
  for (int c = 0; c < children; c++) g_sites[xorshift(w) % NSITES](w, depth - 1);
}

static pthread_barrier_t g_finished, g_release;

static void *worker_main(void *arg) {
  worker *w = arg;
  strobe_thread_set_name(w->name);
  uint64_t t0 = fx_now_ns();
  while (w->scopes < w->target) {
    g_sites[xorshift(w) % NSITES](w, 3 + (int)(xorshift(w) % 3u)); /* a tree 3–5 deep */
    __atomic_store_n(&w->progress, w->scopes, __ATOMIC_RELAXED);
  }
  w->wall_ns = fx_now_ns() - t0;
  /* Stay alive until the final RSS sample: an exiting thread's ring is freed. */
  pthread_barrier_wait(&g_finished);
  pthread_barrier_wait(&g_release);
  return NULL;
}

/* >>measuring */
static uint64_t progress_min(worker *ws, uint64_t *sum) {
  uint64_t lo = UINT64_MAX;
  *sum = 0;
  for (int i = 0; i < NTHREADS; i++) {
    uint64_t p = __atomic_load_n(&ws[i].progress, __ATOMIC_RELAXED);
    if (p < lo) lo = p;
    *sum += p;
  }
  return lo;
}

static void budget_u64(const char *name, uint64_t value, uint64_t limit) {
  printf("BUDGET %s %llu <= %llu %s\n", name, (unsigned long long)value, (unsigned long long)limit,
         value <= limit ? "ok" : "OVER");
}

int main(int argc, char **argv) {
  uint64_t per_thread = DEFAULT_SCOPES_PER_THREAD;
  if (argc > 1) {
    char *end;
    per_thread = strtoull(argv[1], &end, 10);
    if (*end || per_thread == 0) {
      fprintf(stderr, "usage: %s [scopes-per-thread]\n", argv[0]);
      return 2;
    }
  }
  uint64_t early = per_thread / 20 < EARLY_SAMPLE_SCOPES ? per_thread / 20 : EARLY_SAMPLE_SCOPES;

  char path[64];
  snprintf(path, sizeof path, "/tmp/strobe-bench-capture-%ld.strobe", (long)getpid());
  strobe_recorder *rec;
  int rc = strobe_record_start(&(strobe_record_desc){.path = path}, &rec);
  if (rc) {
    fprintf(stderr, "bench_capture: cannot record to %s: %s\n", path, strobe_strerror(rc));
    return 1;
  }

  static const char *const names[NTHREADS] = {"worker_0", "worker_1"};
  worker ws[NTHREADS] = {{0}};
  pthread_t th[NTHREADS];
  pthread_barrier_init(&g_finished, NULL, NTHREADS + 1);
  pthread_barrier_init(&g_release, NULL, NTHREADS + 1);
  for (int i = 0; i < NTHREADS; i++) {
    ws[i].rng = 0x9E3779B97F4A7C15ull * ((uint64_t)i + 1u);
    ws[i].target = per_thread;
    ws[i].name = names[i];
    if (pthread_create(&th[i], NULL, worker_main, &ws[i]) != 0) {
      fprintf(stderr, "bench_capture: pthread_create failed\n");
      return 1;
    }
  }

  /* Early sample: once every thread has done `early` scopes. */
  uint64_t early_total = 0;
  while (progress_min(ws, &early_total) < early) nanosleep(&(struct timespec){0, 200000}, NULL);
  long rss_early = fx_rss_bytes();

  pthread_barrier_wait(&g_finished); /* every worker is done and still alive */
  uint64_t final_total = 0;
  (void)progress_min(ws, &final_total);
  long rss_final = fx_rss_bytes();
  pthread_barrier_wait(&g_release);
  for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);

  rc = strobe_record_stop(rec);
  if (rc) fprintf(stderr, "bench_capture: strobe_record_stop: %s\n", strobe_strerror(rc));
  strobe_event_stats st = strobe_query_event_stats();

  struct stat sb;
  uint64_t file_bytes = stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;

  /* Read everything back. */
  strobe_capture *cap;
  rc = strobe_capture_open(path, &cap);
  if (rc) {
    fprintf(stderr, "bench_capture: cannot open %s: %s\n", path, strobe_strerror(rc));
    unlink(path);
    return 1;
  }
  strobe_capture_record r;
  uint64_t records = 0, t0 = fx_now_ns();
  while ((rc = strobe_capture_next(cap, &r)) > 0) records++;
  uint64_t read_ns = fx_now_ns() - t0;
  if (rc < 0) fprintf(stderr, "bench_capture: reading %s: %s\n", path, strobe_strerror(rc));
  strobe_capture_totals tot = strobe_capture_query_totals(cap);
  strobe_capture_close(cap);
  unlink(path);

  uint64_t ran = 0, wall = 0;
  for (int i = 0; i < NTHREADS; i++) {
    ran += ws[i].scopes;
    if (ws[i].wall_ns > wall) wall = ws[i].wall_ns;
  }
  uint64_t lost = st.events_lost > tot.lost ? st.events_lost : tot.lost;
  double growth = final_total > early_total
                      ? (double)(rss_final - rss_early) / ((double)(final_total - early_total) / 1e6)
                      : 0.0;

  printf("BENCH capture_scopes %llu scopes\n", (unsigned long long)tot.scopes);
  printf("BENCH capture_scopes_missing %lld scopes\n", (long long)(ran - tot.scopes));
  printf("BENCH capture_ns_per_scope %.1f ns\n", (double)wall / (double)(ran / NTHREADS));
  printf("BENCH capture_read_ns_per_event %.2f ns\n", tot.events ? (double)read_ns / (double)tot.events : 0.0);
  double bps = tot.scopes ? (double)file_bytes / (double)tot.scopes : 0.0;
  printf("BENCH capture_bytes_per_scope %.3f bytes\n", bps);
  printf("BUDGET capture_bytes_per_scope %.3f <= 4.000 %s\n", bps, bps <= 4.0 ? "ok" : "OVER");
  printf("BENCH events_lost %llu events\n", (unsigned long long)st.events_lost);
  printf("BENCH events_lost_in_capture %llu events\n", (unsigned long long)tot.lost);
  budget_u64("events_lost", lost, 0);
  printf("BENCH rss_growth_bytes_per_million_scopes %.0f bytes\n", growth);
  printf("# bench_capture: %llu scopes/thread x %d threads, %llu records read, file %llu bytes, "
         "rss %ld -> %ld bytes, lost_scopes %llu, unfinished %llu, footer %d\n",
         (unsigned long long)per_thread, NTHREADS, (unsigned long long)records, (unsigned long long)file_bytes,
         rss_early, rss_final, (unsigned long long)tot.lost_scopes, (unsigned long long)tot.unfinished, tot.footer);
  return 0;
}
