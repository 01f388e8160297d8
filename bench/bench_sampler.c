/*
 * bench_sampler.c — what the sampler costs (docs/exploration.md §Sampling)
 * at its default rate (997 Hz, context switches on), on a workload of scopes
 * around short spins on one thread while a capture records, in one run:
 *
 *   sampler_cpu_ms_off     process CPU time of one round without the sampler
 *   sampler_cpu_ms_on      the same round with it (the kernel's sampling in
 *                          the thread's timer interrupt, the drain reading the
 *                          buffers and naming new addresses: all of it is the
 *                          process's CPU time)
 *   sampler_ratio          on / off (budget <= 1.05)
 *   sampler_ratio_no_switches  the same with switches off (samples only): the
 *                          share of the switch records in the cost, which
 *                          grows with how often the machine switches threads
 *   sampler_cpu_ms_rest_off, _on  the part of the above outside the
 *                          workload's thread (the drain thread: reading,
 *                          naming and writing the records)
 *   sampler_samples        samples the rounds with the sampler took
 *   sampler_switches       switch records they took
 *   sampler_lost           records the kernel dropped meanwhile (budget: 0)
 *
 * Rounds alternate off and on and each figure is the minimum over the
 * rounds, so a loaded machine's noise falls on both sides alike. The
 * workload runs in process CPU time, not wall time. When the kernel refuses
 * perf events the bench says why and prints no figures.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "floor.h"
#include "strobe/record.h"
#include "strobe/sample.h"
#include "strobe/strobe.h"

#define ROUNDS 9
#define SCOPES_PER_ROUND 20000u
#define SPIN 20000u /* ~10-20 us of work per scope */

static volatile uint64_t g_sink;

static uint64_t cpu_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static uint64_t work(uint64_t seed) {
  STROBE_SCOPE("bench_sampler_work");
  return fx_spin(SPIN, seed);
}

/* sampling: 0 off, 1 the default (switches on), 2 samples only. *rest_ms:
 * the process's CPU time outside the workload's thread (the drain). */
static double round_ms(int sampling, uint64_t *samples, uint64_t *switches, uint64_t *lost, double *rest_ms) {
  strobe_sampler_stats before = strobe_sampler_query_stats();
  if (sampling && strobe_sampler_start(&(strobe_sampler_desc){.no_switches = sampling == 2}) != 0) return -1;
  uint64_t a = cpu_ns(CLOCK_PROCESS_CPUTIME_ID), at = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
  for (uint32_t i = 0; i < SCOPES_PER_ROUND; i++) g_sink += work(i);
  uint64_t b = cpu_ns(CLOCK_PROCESS_CPUTIME_ID), bt = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
  if (sampling) strobe_sampler_stop();
  strobe_sampler_stats after = strobe_sampler_query_stats();
  *samples += after.samples - before.samples;
  *switches += after.switches - before.switches;
  *lost += after.lost - before.lost;
  *rest_ms = (double)((b - a) - (bt - at)) / 1e6;
  return (double)(b - a) / 1e6;
}

int main(void) {
  char path[] = "/tmp/strobe-bench-sampler-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return 1;
  close(fd);
  strobe_recorder *rec;
  if (strobe_record_start(&(strobe_record_desc){.path = path}, &rec)) return 1;
  double off = 1e300, on = 1e300, bare = 1e300, rest_off = 1e300, rest_on = 1e300, ra, rb, rc;
  uint64_t samples = 0, switches = 0, lost = 0, scratch = 0;
  for (int r = 0; r < ROUNDS; r++) {
    double a = round_ms(0, &scratch, &scratch, &scratch, &ra);
    double b = round_ms(1, &samples, &switches, &lost, &rb);
    if (b < 0) {
      strobe_sampler_status st = strobe_sampler_query_status();
      printf("bench_sampler: the kernel refused the sampler: %s (%s; perf_event_paranoid %d): no figures\n",
             st.reason, strobe_strerror(st.error), st.paranoid);
      strobe_record_stop(rec);
      remove(path);
      return 0;
    }
    double c = round_ms(2, &scratch, &scratch, &scratch, &rc);
    if (a < off) off = a;
    if (b < on) on = b;
    if (ra < rest_off) rest_off = ra;
    if (rb < rest_on) rest_on = rb;
    if (c >= 0 && c < bare) bare = c;
  }
  strobe_record_stop(rec);
  remove(path);
  printf("BENCH sampler_cpu_ms_off %.3f ms\n", off);
  printf("BENCH sampler_cpu_ms_on %.3f ms\n", on);
  printf("BENCH sampler_ratio %.4f x\n", on / off);
  printf("BENCH sampler_ratio_no_switches %.4f x\n", bare / off);
  printf("BENCH sampler_cpu_ms_rest_off %.3f ms\n", rest_off);
  printf("BENCH sampler_cpu_ms_rest_on %.3f ms\n", rest_on);
  printf("BENCH sampler_samples %llu samples\n", (unsigned long long)samples);
  printf("BENCH sampler_switches %llu records\n", (unsigned long long)switches);
  printf("BENCH sampler_lost %llu records\n", (unsigned long long)lost);
  bench_budget_le("sampler_ratio", on / off, 1.05);
  bench_budget_le("sampler_lost", (double)lost, 0.0);
  return 0;
}
