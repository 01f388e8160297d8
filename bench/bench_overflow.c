/*
 * bench_overflow.c — what each overflow mode (strobe_desc.overflow,
 * docs/recording.md, Overflow) loses under the worst load: 2 threads × 20 M
 * back-to-back scopes while a capture file records, with default rings.
 * Each mode runs in its own child process (strobe_setup is once per
 * process); the capture is then read back and its scopes counted:
 *
 *   events_lost_2x20M_<mode>   events the library counted lost (budget: 0
 *                              for grow and wait);
 *   events_missing_2x20M_<mode> events written minus events read back;
 *   loss_count_exact_<mode>    1 when the two agree (budget: 1 for every
 *                              mode: a loss is never silent nor overstated);
 *   rings_grown_<mode>, producer_waits_<mode>, ns_per_scope_<mode> (wall
 *                              time per scope on one thread) for context;
 *   peak_rss_<mode>            the child's peak resident memory (getrusage
 *                              ru_maxrss), MiB: what GROW's rings cost.
 *
 * Every mode runs with the default settings: GROW with the default
 * ring_events_max (16,777,216 events, 256 MiB a thread at most:
 * docs/recording.md §Overflow) unless STROBE_BENCH_RING_EVENTS_MAX names
 * another. 2 × 20 M back-to-back scopes are 80 M events, written far faster
 * than one drain thread encodes them, so what the drain has not read must
 * fit in the grown rings.
 *
 * Usage: bench_overflow [scopes-per-thread [drop|grow|wait]]   (default 20,000,000, every mode)
 * Budgets are printed, never asserted: the exit status is 0 whatever is measured.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "floor.h"
#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/strobe.h"

#define THREADS 2

static uint32_t g_scopes = 20000000u;

__attribute__((noinline)) static void scope_loop(uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    STROBE_SCOPE("overflow_bench");
  }
}

static uint64_t g_thread_ns[THREADS];

static void *worker(void *arg) {
  int i = (int)(intptr_t)arg;
  uint64_t a = fx_now_ns();
  scope_loop(g_scopes);
  g_thread_ns[i] = fx_now_ns() - a;
  return NULL;
}

/* One mode, in a child: prints its BENCH lines, exits 0, or 1 on a setup failure. */
static int run_mode(uint32_t mode, const char *name) {
  const char *max_env = getenv("STROBE_BENCH_RING_EVENTS_MAX");
  uint32_t ring_max = mode == STROBE_OVERFLOW_GROW && max_env ? (uint32_t)strtoul(max_env, NULL, 10) : 0; /* 0: the default */
  int rc = strobe_setup(&(strobe_desc){.overflow = mode, .ring_events_max = ring_max});
  if (rc) {
    fprintf(stderr, "bench_overflow: strobe_setup: %s\n", strobe_strerror(rc));
    return 1;
  }
  char path[64];
  if (fx_temp_file(path, sizeof path, "bench-overflow")) return 1;
  strobe_recorder *rec;
  rc = strobe_record_start(&(strobe_record_desc){.path = path}, &rec);
  if (rc) {
    fprintf(stderr, "bench_overflow: cannot record to %s: %s\n", path, strobe_strerror(rc));
    return 1;
  }
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  rc = strobe_record_stop(rec);
  if (rc) fprintf(stderr, "bench_overflow: strobe_record_stop: %s\n", strobe_strerror(rc));
  strobe_event_stats st = strobe_query_event_stats();

  strobe_capture *cap;
  rc = strobe_capture_open(path, &cap);
  if (rc) {
    fprintf(stderr, "bench_overflow: cannot read back %s: %s\n", path, strobe_strerror(rc));
    unlink(path);
    return 1;
  }
  uint64_t read_back = 0;
  strobe_capture_record r;
  while (strobe_capture_next(cap, &r) > 0) read_back += r.type == STROBE_REC_BEGIN || r.type == STROBE_REC_END;
  uint64_t lost_in_capture = strobe_capture_query_totals(cap).lost;
  strobe_capture_close(cap);
  unlink(path);

  uint64_t written = (uint64_t)THREADS * g_scopes * 2u;
  uint64_t missing = written - read_back;
  int exact = missing == st.events_lost && lost_in_capture == st.events_lost;
  double ns = (double)(g_thread_ns[0] > g_thread_ns[1] ? g_thread_ns[0] : g_thread_ns[1]) / g_scopes;
  const char *label = g_scopes == 20000000u ? "2x20M" : "2xN";
  printf("BENCH events_lost_%s_%s %llu events\n", label, name, (unsigned long long)st.events_lost);
  if (mode != STROBE_OVERFLOW_DROP) {
    char budget[64];
    snprintf(budget, sizeof budget, "events_lost_%s_%s", label, name);
    bench_budget_le(budget, (double)st.events_lost, 0.0);
  }
  printf("BENCH events_missing_%s_%s %llu events\n", label, name, (unsigned long long)missing);
  printf("BENCH loss_count_exact_%s %d bool\n", name, exact);
  printf("BUDGET loss_count_exact_%s %d == 1 %s\n", name, exact, exact ? "ok" : "OVER");
  printf("BENCH rings_grown_%s %u rings\n", name, st.rings_grown);
  printf("BENCH producer_waits_%s %llu waits\n", name, (unsigned long long)st.producer_waits);
  printf("BENCH ns_per_scope_%s %.3f ns\n", name, ns);
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) == 0) printf("BENCH peak_rss_%s %.1f MiB\n", name, (double)ru.ru_maxrss / 1024.0);
  if (mode == STROBE_OVERFLOW_GROW) printf("BENCH ring_events_max_%s %u events\n", name, strobe_query_desc().ring_events_max);
  fflush(stdout);
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1) g_scopes = (uint32_t)strtoul(argv[1], NULL, 10);
  if (!g_scopes) g_scopes = 20000000u;
  static const struct {
    uint32_t mode;
    const char *name;
  } modes[] = {{STROBE_OVERFLOW_DROP, "drop"}, {STROBE_OVERFLOW_GROW, "grow"}, {STROBE_OVERFLOW_WAIT, "wait"}};
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
    if (argc > 2 && strcmp(argv[2], modes[i].name) != 0) continue;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) _exit(run_mode(modes[i].mode, modes[i].name));
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status)) fprintf(stderr, "bench_overflow: the %s run failed\n", modes[i].name);
  }
  return 0;
}
