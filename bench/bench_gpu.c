/*
 * bench_gpu.c — the GPU budgets of docs/gpu.md, in one run:
 *
 *   gpu_span_ns_recording  CPU cost of recording one GPU span
 *                          (strobe_gpu_span_add, the driver call that read
 *                          the timestamps excluded) while a capture records,
 *                          and its ratio to the floor scope measured in the
 *                          same run (budget <= 2);
 *   gpu_span_ns_idle       the same call with nothing recording and no
 *                          session open (two relaxed loads);
 *   clock_fit_error_ns     the worst mapped error of a synthetic device 1 s
 *                          ahead of the host with +200 ppm drift, read once
 *                          every 16 ms between host reads 1 us apart (the
 *                          read anywhere inside), over 60 simulated seconds,
 *                          at the midpoint between pairs; and its ratio to
 *                          the pairs' width (budget <= 1: within the pairs'
 *                          own uncertainty);
 *   clock_fit_drift_error_ppm  |fitted drift - 200 ppm|.
 *
 * Span rounds alternate with floor rounds (bench/floor.h) and are the
 * minimum over many rounds; the ring is flushed between rounds, untimed.
 * Budgets are printed, never asserted: this program exits 0 whatever it measures.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "floor.h"
#include "strobe/gpu.h"
#include "strobe/record.h"
#include "strobe/strobe.h"

#define ROUND_SPANS 5000u /* 5 ring events each: 25,000 events, below the default ring's half */
#define ROUNDS 200

static strobe_gpu_queue g_queue;
static uint64_t g_frame = 1;

__attribute__((noinline)) static void span_loop(uint32_t n) {
  static strobe_site site = STROBE_GPU_SITE("bench_gpu_span");
  for (uint32_t i = 0; i < n; i++) {
    uint64_t f = g_frame++;
    strobe_gpu_span_add(&(strobe_gpu_span){g_queue, &site, STROBE_GPU_PASS_MAIN, f, 1000 * f, 1000 * f + 500});
  }
}

/* >>fit: the synthetic device of tests/test_gpu.c, fixed LCG. */
static uint64_t g_rng = 88172645463325252ull;
static double uniform(void) {
  g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(g_rng >> 11) / 9007199254740992.0;
}

static void fit_bench(void) {
  const double ahead = 1e9, drift = 200e-6, width = 1000.0, period = 16e6, seconds = 60;
  strobe_clock_domain d;
  if (strobe_clock_domain_create(&(strobe_clock_domain_desc){.name = "bench_synthetic", .ticks_per_second = 1e9},
                                 &d)) {
    fprintf(stderr, "bench_gpu: cannot declare the domain\n");
    return;
  }
  double npt = strobe_query_clock().ns_per_tick;
  uint64_t host0 = strobe_clock_now();
  double worst = 0, worst_bound = 0;
  for (double t = 0; t < seconds * 1e9; t += period) {
    double lead = uniform() * width;
    uint64_t dev = (uint64_t)llround((t + ahead) * (1 + drift));
    strobe_clock_domain_calibrate(d, dev, host0 + (uint64_t)llround((t - lead) / npt),
                                  host0 + (uint64_t)llround((t - lead + width) / npt));
    if (t < 2 * period) continue;
    uint64_t probe = (uint64_t)llround((t - period / 2 + ahead) * (1 + drift));
    strobe_clock_mapping m;
    if (strobe_clock_domain_map(d, probe, &m)) continue;
    double truth = (double)host0 * npt + (double)probe / (1 + drift) - ahead;
    double err = fabs((double)m.host_ticks * npt - truth);
    if (err > worst) worst = err;
    if (m.bound_ns > worst_bound) worst_bound = m.bound_ns;
  }
  strobe_clock_domain_stats st;
  strobe_clock_domain_query_stats(d, &st);
  printf("BENCH clock_fit_error_ns %.1f ns\n", worst);
  printf("BENCH clock_fit_pair_width_ns %.1f ns\n", width);
  printf("BENCH clock_fit_error_ratio %.3f ratio\n", worst / width);
  bench_budget_le("clock_fit_error_ratio", worst / width, 1.0);
  printf("BENCH clock_fit_bound_ns %.1f ns\n", worst_bound);
  printf("BENCH clock_fit_drift_error_ppm %.3f ppm\n", fabs(st.drift_ppm - 200.0));
}

int main(void) {
  strobe_clock_domain d;
  if (strobe_clock_domain_create(&(strobe_clock_domain_desc){.name = "bench_gpu", .ticks_per_second = 1e9}, &d) ||
      strobe_gpu_queue_create(d, "graphics", &g_queue)) {
    fprintf(stderr, "bench_gpu: cannot declare the domain or queue\n");
    return 1;
  }
  strobe_clock_domain_calibrate(d, 1000, strobe_clock_now(), strobe_clock_now() + 10);
  span_loop(ROUND_SPANS); /* warm-up, idle */
  double idle = 1e300;
  for (int r = 0; r < ROUNDS; r++) {
    double ns = bench_time_round(span_loop, ROUND_SPANS);
    if (ns < idle) idle = ns;
  }
  uint32_t ring_events = strobe_query_desc().ring_events;
  if (floor_setup()) {
    fprintf(stderr, "bench_gpu: out of memory\n");
    return 1;
  }
  char path[64];
  snprintf(path, sizeof path, "/tmp/strobe-bench-gpu-%ld.strobe", (long)getpid());
  strobe_recorder *rec;
  int rc = strobe_record_start(&(strobe_record_desc){.path = path}, &rec);
  if (rc) {
    fprintf(stderr, "bench_gpu: cannot record to %s: %s\n", path, strobe_strerror(rc));
    return 1;
  }
  for (uint32_t done = 0; done < ring_events / 5; done += ROUND_SPANS) {
    span_loop(ROUND_SPANS);
    strobe_record_flush(rec);
    floor_loop(ROUND_SPANS);
  }
  double floor_ns = 1e300, rec_ns = 1e300;
  for (int r = 0; r < ROUNDS; r++) {
    double f = bench_time_round(floor_loop, ROUND_SPANS);
    if (f < floor_ns) floor_ns = f;
    double s = bench_time_round(span_loop, ROUND_SPANS);
    if (s < rec_ns) rec_ns = s;
    strobe_record_flush(rec);
  }
  rc = strobe_record_stop(rec);
  if (rc) fprintf(stderr, "bench_gpu: strobe_record_stop: %s\n", strobe_strerror(rc));
  unlink(path);
  free(floor_ring);
  strobe_event_stats st = strobe_query_event_stats();
  printf("BENCH gpu_span_ns_floor %.3f ns\n", floor_ns);
  printf("BENCH gpu_span_ns_idle %.3f ns\n", idle);
  printf("BENCH gpu_span_ns_recording %.3f ns\n", rec_ns);
  printf("BENCH gpu_span_ratio_recording %.3f ratio\n", rec_ns / floor_ns);
  bench_budget_le("gpu_span_ratio_recording", rec_ns / floor_ns, 2.0);
  printf("BENCH gpu_span_events_lost %llu events\n", (unsigned long long)st.events_lost);
  fit_bench();
  return 0;
}
