/*
 * bench_record.c — `strobe record` on a call-heavy workload (docs/exploration.md
 * §Cost): a program that never links Strobe (bench/record/work_main.c, naive
 * Fibonacci built with -finstrument-functions) run plain and through
 * `strobe record` at the defaults, against the floor scope of this run
 * (bench/floor.h):
 *
 *   record_ns_plain          ns per call of the untraced build, run alone
 *   record_ns_recording      ns per call of the traced build under strobe record
 *   record_ns_per_call       their difference: what recording adds to a call
 *   scope_ns_floor           the floor scope, measured here
 *   record_ratio             record_ns_per_call / scope_ns_floor (budget <= 1.2)
 *   record_bytes_per_call    the capture's bytes per traced call (budget <= 1.5)
 *   record_events_lost       events the capture lost (budget 0)
 *
 * Times are the workload's own (its thread's CPU time around fib(N) in the
 * child; the drain thread's work is not in it), the minimum over RUNS runs
 * each; budgets are printed, never asserted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "floor.h"
#include "strobe/capture.h"

#define RUNS 5
#define N "31" /* fib(31): 4,356,617 calls */
#define FLOOR_SCOPES 20000u

/* Runs a command, returns the ns per call the workload printed (or -1). */
static double run_ns(const char *cmd, double *calls) {
  FILE *p = popen(cmd, "r");
  if (!p) return -1;
  char line[256];
  double ns = -1;
  while (fgets(line, sizeof line, p))
    if (sscanf(line, "ns_per_call %lf calls %lf", &ns, calls) == 2) break;
  int rc = pclose(p);
  return rc == 0 ? ns : -1;
}

int main(void) {
  if (floor_setup()) return 1;
  char path[64], cmd[1024];
  snprintf(path, sizeof path, "/tmp/strobe-bench-record-%ld.capture", (long)getpid());
  double plain = 1e300, rec = 1e300, calls = 0, floor_ns = 1e300;
  for (int r = 0; r < RUNS; r++) {
    snprintf(cmd, sizeof cmd, "%s %s", STROBE_BENCH_WORK_PLAIN, N);
    double p = run_ns(cmd, &calls);
    snprintf(cmd, sizeof cmd, "%s record -q -o %s -- %s %s", STROBE_CLI_PATH, path, STROBE_BENCH_WORK_TRACED, N);
    double t = run_ns(cmd, &calls);
    if (p < 0 || t < 0) {
      fprintf(stderr, "bench_record: a run failed: %s\n", cmd);
      return 1;
    }
    plain = p < plain ? p : plain;
    rec = t < rec ? t : rec;
    for (int k = 0; k < 20; k++) {
      double f = bench_time_round(floor_loop, FLOOR_SCOPES);
      floor_ns = f < floor_ns ? f : floor_ns;
    }
  }
  struct stat st;
  strobe_capture *c = NULL;
  if (stat(path, &st) != 0 || strobe_capture_open(path, &c) != 0) {
    fprintf(stderr, "bench_record: no capture at %s\n", path);
    return 1;
  }
  strobe_capture_record r;
  int rc;
  while ((rc = strobe_capture_next(c, &r)) > 0) {
  }
  strobe_capture_totals t = strobe_capture_query_totals(c);
  strobe_capture_close(c);
  unlink(path);
  double per_call = rec - plain, bytes = (double)st.st_size / calls;
  printf("BENCH record_ns_plain %.3f ns\n", plain);
  printf("BENCH record_ns_recording %.3f ns\n", rec);
  printf("BENCH record_ns_per_call %.3f ns\n", per_call);
  printf("BENCH scope_ns_floor %.3f ns\n", floor_ns);
  printf("BENCH record_ratio %.3f x\n", per_call / floor_ns);
  printf("BENCH record_bytes_per_call %.3f bytes\n", bytes);
  printf("BENCH record_events_lost %llu events\n", (unsigned long long)t.lost);
  printf("BENCH record_scopes %llu scopes\n", (unsigned long long)t.scopes);
  bench_budget_le("record_ratio", per_call / floor_ns, 1.2);
  bench_budget_le("record_bytes_per_call", bytes, 1.5);
  bench_budget_le("record_events_lost", (double)t.lost, 0.0);
  return rc < 0 || t.scopes != (uint64_t)calls;
}
