/*
 * bench_burst.c — what the default overflow policy loses on the bursty
 * pattern of a real program (docs/recording.md, Overflow): an interpreter's
 * calls and returns come in bursts, not as a steady stream. Two threads each
 * record bursts of 2.5 M explicit scopes (STROBE_BEGIN/STROBE_END, nested
 * four deep, a few instructions of work between them: 5 M scopes a burst in
 * all), three bursts a second apart, while a third thread spins beside them
 * for the whole run and a capture file records. Each mode runs in its own
 * child (strobe_setup is once per process): the defaults (a zero
 * strobe_desc), then GROW and WAIT as the same run's baselines. Printed per
 * mode:
 *
 *   burst_events_lost_<mode>  events the library counted lost (budget 0 for
 *                             the defaults: docs/recording.md, Overflow);
 *   burst_peak_rss_<mode>     the child's peak resident memory, MiB (budget
 *                             <= 64 for the defaults);
 *   burst_ns_per_scope_<mode> wall time per scope of the slower thread's
 *                             bursts, and its ratio to GROW's
 *                             (burst_ns_ratio_<mode>, same run).
 *
 * Must never: assert anything (budgets are printed; the exit status is 0
 * whatever is measured), or read a capture it did not write.
 *
 * Usage: bench_burst [scopes-per-thread-per-burst [default|grow|wait]]   (default 2,500,000)
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
#include "strobe/record.h"
#include "strobe/strobe.h"

#define THREADS 2
#define BURSTS 3
#define PAUSE_MS 1000

static uint32_t g_scopes = 2500000u;
static uint64_t g_burst_ns[THREADS];
static int g_stop; /* atomic: the spinner stops */
static volatile uint32_t g_work; /* what a burst's calls compute, kept so they are not optimised away */
static volatile uint64_t g_spins;

/* One burst: calls four deep, as an interpreter's call and return hooks write them. */
__attribute__((noinline)) static void burst(uint32_t n) {
  for (uint32_t i = 0; i < n; i += 4) {
    STROBE_BEGIN("burst_call");
    STROBE_BEGIN("burst_callee");
    g_work += i;
    STROBE_BEGIN("burst_leaf");
    STROBE_BEGIN("burst_builtin");
    g_work += i;
    STROBE_END();
    STROBE_END();
    STROBE_END();
    STROBE_END();
  }
}

static void *worker(void *arg) {
  int k = (int)(intptr_t)arg;
  for (int b = 0; b < BURSTS; b++) {
    uint64_t a = fx_now_ns();
    burst(g_scopes);
    g_burst_ns[k] += fx_now_ns() - a;
    if (b + 1 < BURSTS) fx_sleep_ms(PAUSE_MS);
  }
  return NULL;
}

static void *spinner(void *arg) {
  (void)arg;
  while (!__atomic_load_n(&g_stop, __ATOMIC_RELAXED)) g_spins++;
  return NULL;
}

static int run_mode(uint32_t mode, int defaults, const char *name) {
  strobe_desc d = {0};
  if (!defaults) d.overflow = mode;
  int rc = strobe_setup(&d);
  if (rc) {
    fprintf(stderr, "bench_burst: strobe_setup: %s\n", strobe_strerror(rc));
    return 1;
  }
  char path[64];
  if (fx_temp_file(path, sizeof path, "bench-burst")) return 1;
  strobe_recorder *rec;
  rc = strobe_record_start(&(strobe_record_desc){.path = path}, &rec);
  if (rc) {
    fprintf(stderr, "bench_burst: cannot record to %s: %s\n", path, strobe_strerror(rc));
    return 1;
  }
  pthread_t spin, th[THREADS];
  pthread_create(&spin, NULL, spinner, NULL);
  for (int i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  __atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
  pthread_join(spin, NULL);
  rc = strobe_record_stop(rec);
  if (rc) fprintf(stderr, "bench_burst: strobe_record_stop: %s\n", strobe_strerror(rc));
  unlink(path);
  strobe_event_stats st = strobe_query_event_stats();
  double ns = (double)(g_burst_ns[0] > g_burst_ns[1] ? g_burst_ns[0] : g_burst_ns[1]) / ((double)g_scopes * BURSTS);
  printf("BENCH burst_events_lost_%s %llu events\n", name, (unsigned long long)st.events_lost);
  printf("BENCH burst_ns_per_scope_%s %.3f ns\n", name, ns);
  struct rusage ru;
  double rss = getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss / 1024.0 : 0;
  printf("BENCH burst_peak_rss_%s %.1f MiB\n", name, rss);
  if (defaults) {
    bench_budget_le("burst_events_lost_default", (double)st.events_lost, 0.0);
    bench_budget_le("burst_peak_rss_default", rss, 64.0);
  }
  fflush(stdout);
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1) g_scopes = (uint32_t)strtoul(argv[1], NULL, 10);
  if (!g_scopes) g_scopes = 2500000u;
  static const struct {
    uint32_t mode;
    int defaults;
    const char *name;
  } modes[] = {{0, 1, "default"}, {STROBE_OVERFLOW_GROW, 0, "grow"}, {STROBE_OVERFLOW_WAIT, 0, "wait"}};
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
    if (argc > 2 && strcmp(argv[2], modes[i].name) != 0) continue;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) _exit(run_mode(modes[i].mode, modes[i].defaults, modes[i].name));
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status)) fprintf(stderr, "bench_burst: the %s run failed\n", modes[i].name);
  }
  return 0;
}
