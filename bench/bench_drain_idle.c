/*
 * bench_drain_idle.c — what the drain thread costs when there is nothing to
 * drain (docs/recording.md §The drain): a capture file open, no event
 * recorded for 2 s. Read from the kernel's accounts of the drain thread
 * (named "strobe-drain"): its context switches (/proc/self/task/<tid>/status,
 * voluntary + involuntary: each is one wake-up) and its CPU time
 * (/proc/self/task/<tid>/schedstat, ns). Printed beside the same figures
 * measured the same way in the same run with a thread recording one scope a
 * millisecond (the drain then runs every drain_interval_ms), as a ratio:
 *
 *   BENCH drain_idle_wakeups_per_s        (budget <= 10)
 *   BENCH drain_idle_cpu_ms_per_s         (budget <= 0.3)
 *   BENCH drain_busy_wakeups_per_s, drain_busy_cpu_ms_per_s   the baseline
 *   BENCH drain_idle_wakeup_ratio         idle over busy
 *   BENCH drain_rest_wake_latency_ms      from the first scope after 1 s of
 *         rest to the drain having delivered it (the producer's wake; the
 *         rest's own bound is 100 ms), median of 9
 *
 * Usage: bench_drain_idle   (about 10 s)
 */
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/collect.h"
#include "strobe/record.h"
#include "strobe/strobe.h"
#include "support/fixtures.h"

typedef struct thread_acct {
  uint64_t switches; /* voluntary + involuntary context switches */
  uint64_t cpu_ns;
} thread_acct;

/* The drain thread's id, by name; 0 when not found. */
static long drain_tid(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return 0;
  long tid = 0;
  for (struct dirent *e; !tid && (e = readdir(d));) {
    char p[300], name[32] = "";
    snprintf(p, sizeof p, "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(p, "r");
    if (!f) continue;
    if (fgets(name, sizeof name, f) && !strncmp(name, "strobe-drain", 12)) tid = strtol(e->d_name, NULL, 10);
    fclose(f);
  }
  closedir(d);
  return tid;
}

static int read_acct(long tid, thread_acct *a) {
  char p[64], line[256];
  *a = (thread_acct){0, 0};
  snprintf(p, sizeof p, "/proc/self/task/%ld/status", tid);
  FILE *f = fopen(p, "r");
  if (!f) return -1;
  while (fgets(line, sizeof line, f)) {
    unsigned long long v;
    if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1) a->switches += v;
    if (sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1) a->switches += v;
  }
  fclose(f);
  snprintf(p, sizeof p, "/proc/self/task/%ld/schedstat", tid);
  f = fopen(p, "r");
  if (!f) return -1;
  unsigned long long ns = 0;
  int ok = fscanf(f, "%llu", &ns) == 1;
  fclose(f);
  a->cpu_ns = ns;
  return ok ? 0 : -1;
}

static volatile int g_busy_run;

static void *busy(void *arg) {
  (void)arg;
  while (g_busy_run) {
    STROBE_SCOPE("bench_drain_busy");
    fx_sleep_ms(1);
  }
  return NULL;
}

/* Wake-ups and CPU per second of the drain thread over `ms`. */
static int measure(long tid, unsigned ms, double *wakeups, double *cpu_ms) {
  thread_acct a, b;
  double t0 = fx_now_ms();
  if (read_acct(tid, &a)) return -1;
  fx_sleep_ms(ms);
  if (read_acct(tid, &b)) return -1;
  double s = (fx_now_ms() - t0) / 1000.0;
  *wakeups = (double)(b.switches - a.switches) / s;
  *cpu_ms = (double)(b.cpu_ns - a.cpu_ns) / 1e6 / s;
  return 0;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

int main(void) {
  char path[256];
  if (fx_temp_file(path, sizeof path, "bench-drain-idle")) return 1;
  strobe_recorder *rec;
  if (strobe_record_start(&(strobe_record_desc){.path = path}, &rec)) {
    fprintf(stderr, "bench_drain_idle: cannot record to %s\n", path);
    return 1;
  }
  {
    STROBE_SCOPE("bench_drain_attach");
  }
  strobe_record_flush(rec);
  long tid = 0;
  for (int i = 0; i < 5000 && !(tid = drain_tid()); i++) fx_sleep_ms(1); /* it names itself when it starts */
  if (!tid) {
    fprintf(stderr, "bench_drain_idle: no thread named strobe-drain\n");
    return 1;
  }
  fx_sleep_ms(500); /* backs off into its rest */
  double idle_w, idle_cpu, busy_w, busy_cpu;
  if (measure(tid, 2000, &idle_w, &idle_cpu)) return 1;

  g_busy_run = 1;
  pthread_t th;
  if (pthread_create(&th, NULL, busy, NULL)) return 1;
  fx_sleep_ms(200);
  int rc = measure(tid, 2000, &busy_w, &busy_cpu);
  g_busy_run = 0;
  pthread_join(th, NULL);
  if (rc) return 1;

  enum { LAT = 9 };
  double lat[LAT];
  for (int i = 0; i < LAT; i++) {
    fx_sleep_ms(600);
    uint64_t events = strobe__drain_query_cost().events;
    double t0 = fx_now_ms();
    {
      STROBE_SCOPE("bench_drain_first");
    }
    while (strobe__drain_query_cost().events == events && fx_now_ms() - t0 < 5000) {
    }
    lat[i] = fx_now_ms() - t0;
  }
  qsort(lat, LAT, sizeof lat[0], cmp_double);
  strobe_record_stop(rec);
  remove(path);

  printf("BENCH drain_idle_wakeups_per_s %.2f per_s\n", idle_w);
  printf("BUDGET drain_idle_wakeups_per_s %.2f <= 10 %s\n", idle_w, idle_w <= 10 ? "ok" : "OVER");
  printf("BENCH drain_idle_cpu_ms_per_s %.4f ms_per_s\n", idle_cpu);
  printf("BUDGET drain_idle_cpu_ms_per_s %.4f <= 0.3 %s\n", idle_cpu, idle_cpu <= 0.3 ? "ok" : "OVER");
  printf("BENCH drain_busy_wakeups_per_s %.2f per_s\n", busy_w);
  printf("BENCH drain_busy_cpu_ms_per_s %.4f ms_per_s\n", busy_cpu);
  printf("BENCH drain_idle_wakeup_ratio %.4f ratio\n", busy_w > 0 ? idle_w / busy_w : 0.0);
  printf("BENCH drain_rest_wake_latency_ms %.3f ms\n", lat[LAT / 2]);
  return 0;
}
