/*
 * bench_cost.c — what recording costs the whole program, not one scope in a
 * cache-hot loop (docs/recording.md, Cost). One thread runs the realistic
 * mixed workload (the calibration's unit: nested scopes three deep, a value
 * on every fourth scope, a counter and a gauge per 100 scopes: 227 events
 * per 100 scopes) while a capture file records every event, with
 * STROBE_OVERFLOW_WAIT so that nothing is lost and every event is paid for.
 * Printed, each with its same-run ratio to scope_ns_floor (bench/floor.h,
 * measured here as bench_scope does):
 *
 *   drain_ns_per_event     the drain's CPU time (CLOCK_THREAD_CPUTIME_ID
 *                          around each pass) per event it drained: budget
 *                          <= 0.5 x the floor scope;
 *   drain_events_per_s     the same as a rate on one core: budget >= 100 M;
 *   program_ns_per_scope   process CPU time (CLOCK_PROCESS_CPUTIME_ID: the
 *                          workload thread and the drain) per scope of the
 *                          mixed workload: budget <= 2.5 x the floor scope;
 *   producer_ns_per_event  the workload thread's CPU time per event, and
 *   event_cost_ns          what the capture header says it costs (the
 *                          setup calibration), to compare with it;
 *   explicit_scope_ns, explicit_scope_cost_ratio  the header's figure per
 *                          scope written with STROBE_BEGIN/STROBE_END, and
 *                          its ratio to the block scope's (callgrind's is
 *                          explicit_scope_instructions_ratio).
 *
 * Usage: bench_cost [scopes]   (default 5,000,000)
 * Budgets are printed, never asserted: the exit status is 0 whatever is measured.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/collect.h"
#include "floor.h"
#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/strobe.h"

#define UNIT_SCOPES 100u
#define UNIT_EVENTS 227u
#define FLOOR_ROUND 20000u
#define FLOOR_ROUNDS 200

static uint64_t cpu_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The unit: 100 scopes, 25 values, a counter and a gauge. */
__attribute__((noinline)) static void unit(uint32_t k) {
  for (uint32_t i = 0; i < 25; i++) {
    STROBE_SCOPE("cost_outer");
    {
      STROBE_SCOPE("cost_mid");
      {
        STROBE_SCOPE("cost_leaf");
        STROBE_VALUE("cost_value", k + i);
      }
      {
        STROBE_SCOPE("cost_leaf2");
      }
    }
  }
  STROBE_COUNTER_ADD("cost_counter", 1);
  STROBE_GAUGE_SET("cost_gauge", k);
}

int main(int argc, char **argv) {
  uint64_t scopes = argc > 1 ? strtoull(argv[1], NULL, 10) : 5000000u;
  uint32_t units = (uint32_t)(scopes / UNIT_SCOPES);
  if (!units) units = 1;
  int rc = strobe_setup(&(strobe_desc){.overflow = STROBE_OVERFLOW_WAIT});
  if (rc) {
    fprintf(stderr, "bench_cost: strobe_setup: %s\n", strobe_strerror(rc));
    return 1;
  }
  if (floor_setup()) {
    fprintf(stderr, "bench_cost: out of memory\n");
    return 1;
  }
  double floor_ns = 1e300;
  for (int r = 0; r < FLOOR_ROUNDS; r++) {
    double f = bench_time_round(floor_loop, FLOOR_ROUND);
    if (f < floor_ns) floor_ns = f;
  }

  char path[64];
  if (fx_temp_file(path, sizeof path, "bench-cost")) return 1;
  strobe_recorder *rec;
  rc = strobe_record_start(&(strobe_record_desc){.path = path}, &rec);
  if (rc) {
    fprintf(stderr, "bench_cost: cannot record to %s: %s\n", path, strobe_strerror(rc));
    return 1;
  }
  for (uint32_t u = 0; u < 1000; u++) unit(u); /* attaches, registers the sites */
  strobe_record_flush(rec);

  strobe__drain_cost d0 = strobe__drain_query_cost();
  uint64_t p0 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID), t0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
  for (uint32_t u = 0; u < units; u++) unit(u);
  uint64_t t1 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
  strobe_record_flush(rec); /* the drain has delivered every event of the run */
  uint64_t p1 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
  strobe__drain_cost d = strobe__drain_cost_since(&d0);

  rc = strobe_record_stop(rec);
  if (rc) fprintf(stderr, "bench_cost: strobe_record_stop: %s\n", strobe_strerror(rc));
  double header_event_ns = 0, header_scope_ns = 0, header_explicit_ns = 0;
  strobe_capture *cap;
  if (strobe_capture_open(path, &cap) == 0) {
    header_event_ns = strobe_capture_query_header(cap)->event_cost_ns;
    header_scope_ns = strobe_capture_query_header(cap)->overhead_per_scope_ns;
    header_explicit_ns = strobe_capture_query_header(cap)->explicit_scope_ns;
    strobe_capture_close(cap);
  }
  struct stat st;
  double file_bytes = stat(path, &st) == 0 ? (double)st.st_size : 0;
  unlink(path);
  free(floor_ring);

  double events = (double)units * UNIT_EVENTS, n_scopes = (double)units * UNIT_SCOPES;
  double drain_ns = d.events ? (double)d.cpu_ns / (double)d.events : 0;
  double program_ns = (double)(p1 - p0) / n_scopes;
  printf("BENCH scope_ns_floor %.3f ns\n", floor_ns);
  printf("BENCH drain_ns_per_event %.3f ns\n", drain_ns);
  printf("BENCH drain_ratio_per_event %.3f ratio\n", drain_ns / floor_ns);
  bench_budget_le("drain_ratio_per_event", drain_ns / floor_ns, 0.5);
  printf("BENCH drain_events_per_s %.1f M/s\n", drain_ns > 0 ? 1e3 / drain_ns : 0);
  printf("BUDGET drain_events_per_s %.1f >= 100.0 %s\n", drain_ns > 0 ? 1e3 / drain_ns : 0,
         drain_ns > 0 && 1e3 / drain_ns >= 100.0 ? "ok" : "OVER");
  printf("BENCH program_ns_per_scope %.3f ns\n", program_ns);
  printf("BENCH program_ratio_per_scope %.3f ratio\n", program_ns / floor_ns);
  bench_budget_le("program_ratio_per_scope", program_ns / floor_ns, 2.5);
  printf("BENCH producer_ns_per_event %.3f ns\n", (double)(t1 - t0) / events);
  printf("BENCH event_cost_ns %.3f ns\n", header_event_ns);
  /* The header's explicit-form figure over its block-scope one, the same calibration's two mixes: to read
   * beside callgrind's explicit_scope_instructions_ratio (scripts/bench-callgrind.sh). */
  printf("BENCH explicit_scope_ns %.3f ns\n", header_explicit_ns);
  printf("BENCH explicit_scope_cost_ratio %.3f ratio\n", header_scope_ns > 0 ? header_explicit_ns / header_scope_ns : 0);
  /* What the compression level trades the drain's time for (every event of the run and its warm-up). */
  printf("BENCH capture_bytes_per_event %.3f bytes\n", file_bytes / (events + 1000.0 * UNIT_EVENTS));
  printf("BENCH cost_events_drained %llu events\n", (unsigned long long)d.events);
  printf("BENCH cost_events_lost %llu events\n", (unsigned long long)strobe_query_event_stats().events_lost);
  return 0;
}
