/*
 * work_main.c — bench_record's workload program, never linked to Strobe:
 * times fib(N) (bench/calltrace/work.c, built with -finstrument-functions in
 * bench_record_traced, without in bench_record_plain) and prints
 * "ns_per_call X calls Y", so `strobe record` can be timed on the work alone:
 * the thread's CPU time (user and system: page faults count), not wall time,
 * which on a loaded machine measures the scheduler.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

uint64_t work_record(uint32_t n);

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv) {
  uint32_t n = argc > 1 ? (uint32_t)atoi(argv[1]) : 30;
  double calls = 1, a = 1, b = 1; /* fib(n)'s calls: 1 for n < 2, else calls(n-1) + calls(n-2) + 1 */
  for (uint32_t i = 2; i <= n; i++, a = b, b = calls) calls = a + b + 1;
  uint64_t t0 = now_ns();
  volatile uint64_t sink = work_record(n);
  uint64_t t1 = now_ns();
  (void)sink;
  printf("ns_per_call %.4f calls %.0f\n", (double)(t1 - t0) / calls, calls);
  return 0;
}
