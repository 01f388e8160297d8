/*
 * bench_calltrace.c — what call tracing costs per traced call
 * (docs/exploration.md §Cost), on a call-heavy workload (bench/calltrace/work.c:
 * naive Fibonacci, compiled once with call tracing and once without), in one
 * run on one thread:
 *
 *   calltrace_ns_plain        ns per call of the untraced build
 *   calltrace_ns_off          ns per call of the traced build with tracing off:
 *                             what building with tracing costs while it is off
 *   calltrace_ns_recording    ns per call of the traced build in a region while
 *                             a capture records
 *   calltrace_ns_per_call     recording minus plain: what tracing adds to a call
 *   scope_ns_floor            the floor scope (bench/floor.h), measured alternately
 *   calltrace_ratio           calltrace_ns_per_call / scope_ns_floor (budget <= 3)
 *   calltrace_events_lost     events lost while the workload runs on, recorded at
 *                             the default settings with no pause (budget: 0):
 *                             the traced thread's ring grows when the drain
 *                             falls behind (trace.h keep_overflow)
 *   calltrace_rings_grown     the doublings that took
 *   calltrace_events_lost_keep_overflow  the same run on a fresh thread that
 *                             keeps strobe_desc.overflow (DROP): what it would lose
 *
 * Cost rounds are short (fib(18): 8,361 calls) and the ring is flushed between
 * them outside the timed window, so they measure the producer's cost, as
 * bench_scope does; each figure is the minimum over the rounds. The loss run
 * is not: fib(27) ten times in a row (6.4 million calls), at whatever pace the
 * drain keeps up with. Budgets are printed, never asserted.
 *
 * `bench_calltrace callgrind N` runs fib(N) once untraced (run_plain) and
 * once traced while recording (run_traced) and nothing else, for
 * scripts/bench-callgrind.sh to count instructions per traced call.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floor.h"
#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/strobe.h"
#include "strobe/trace.h"

uint64_t work_traced(uint32_t n);
uint64_t work_plain(uint32_t n);

#define ROUND_N 18u         /* fib(18): 8,361 calls, 16,722 events per round */
#define ROUNDS 300
#define LOSS_N 27u          /* fib(27): 635,621 calls */
#define LOSS_REPEAT 10
#define FLOOR_SCOPES 20000u

static volatile uint64_t g_sink;

static double time_calls(uint64_t (*fn)(uint32_t), uint32_t n, double calls) {
  uint64_t a = fx_now_ns();
  g_sink += fn(n);
  uint64_t b = fx_now_ns();
  return (double)(b - a) / calls;
}

/* Fibonacci's calls for n (fib(n) calls itself this many times in all). */
static double calls_of(uint32_t n) {
  double a = 1, b = 1; /* calls for 0 and 1 */
  for (uint32_t i = 2; i <= n; i++) {
    double c = a + b + 1;
    a = b;
    b = c;
  }
  return n == 0 ? 1 : b;
}

/* The loss run on its own thread, which starts with a fresh ring. */
static void *loss_run_drop(void *arg) {
  (void)arg;
  strobe_trace_calls_begin();
  for (int i = 0; i < LOSS_REPEAT; i++) g_sink += work_traced(LOSS_N);
  strobe_trace_calls_end();
  return NULL;
}

__attribute__((noinline)) static void run_plain(uint32_t n) { g_sink += work_plain(n); }
__attribute__((noinline)) static void run_traced(uint32_t n) { g_sink += work_traced(n); }

static int callgrind_mode(uint32_t n) {
  char path[64];
  snprintf(path, sizeof path, "/tmp/strobe-bench-calltrace-%ld.strobe", (long)getpid());
  strobe_recorder *rec;
  /* A ring that holds every event: the count is of the hot path, never of a loss. */
  int rc = strobe_setup(&(strobe_desc){.ring_events = 1u << 24});
  if (rc == 0) rc = strobe_record_start(&(strobe_record_desc){.path = path}, &rec);
  if (rc) {
    fprintf(stderr, "bench_calltrace: cannot record to %s: %s\n", path, strobe_strerror(rc));
    return 1;
  }
  strobe_trace_calls_begin();
  g_sink += work_traced(3); /* the sites, the ring: not counted */
  run_plain(n);
  run_traced(n);
  strobe_trace_calls_end();
  strobe_record_stop(rec);
  unlink(path);
  printf("calls %.0f\n", calls_of(n));
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "callgrind")) return callgrind_mode((uint32_t)atoi(argv[2]));
  if (floor_setup()) {
    fprintf(stderr, "bench_calltrace: out of memory\n");
    return 1;
  }
  double plain = 1e300, off = 1e300, on = 1e300, floor_ns = 1e300;
  for (int r = 0; r < ROUNDS; r++) {
    double p = time_calls(work_plain, ROUND_N, calls_of(ROUND_N)), o = time_calls(work_traced, ROUND_N, calls_of(ROUND_N));
    if (p < plain) plain = p;
    if (o < off) off = o;
  }

  char path[64];
  snprintf(path, sizeof path, "/tmp/strobe-bench-calltrace-%ld.strobe", (long)getpid());
  strobe_recorder *rec;
  int rc = strobe_record_start(&(strobe_record_desc){.path = path}, &rec);
  if (rc) {
    fprintf(stderr, "bench_calltrace: cannot record to %s: %s\n", path, strobe_strerror(rc));
    return 1;
  }
  strobe_trace_calls_begin();
  g_sink += work_traced(ROUND_N); /* warm-up: the functions' sites, the ring, the floor ring */
  strobe_record_flush(rec);
  floor_loop(FLOOR_SCOPES);
  for (int r = 0; r < ROUNDS; r++) {
    double t = time_calls(work_traced, ROUND_N, calls_of(ROUND_N));
    strobe_record_flush(rec);
    double f = bench_time_round(floor_loop, FLOOR_SCOPES);
    if (t < on) on = t;
    if (f < floor_ns) floor_ns = f;
  }

  /* The loss run: the default settings (a traced thread's ring grows when
   * the drain falls behind: trace.h keep_overflow), no pauses. */
  strobe_event_stats st0 = strobe_query_event_stats();
  uint64_t t0 = fx_now_ns();
  for (int i = 0; i < LOSS_REPEAT; i++) g_sink += work_traced(LOSS_N);
  double run_ms = (double)(fx_now_ns() - t0) / 1e6;
  strobe_trace_calls_end();
  strobe_record_flush(rec);
  strobe_event_stats st1 = strobe_query_event_stats();
  uint64_t lost = st1.events_lost - st0.events_lost;
  /* The same run on a fresh thread that keeps DROP (keep_overflow 1): what growing saves. */
  strobe_trace_setup(&(strobe_trace_desc){.keep_overflow = 1});
  pthread_t th;
  uint64_t lost_drop = 0;
  if (pthread_create(&th, NULL, loss_run_drop, NULL) == 0) pthread_join(th, NULL);
  strobe_record_flush(rec);
  lost_drop = strobe_query_event_stats().events_lost - st1.events_lost;
  strobe_trace_setup(NULL);
  strobe_record_stop(rec);
  unlink(path);

  double per_call = on - plain;
  printf("BENCH calltrace_ns_plain %.3f ns\n", plain);
  printf("BENCH calltrace_ns_off %.3f ns\n", off);
  printf("BENCH calltrace_ns_recording %.3f ns\n", on);
  printf("BENCH calltrace_ns_per_call %.3f ns\n", per_call);
  printf("BENCH scope_ns_floor %.3f ns\n", floor_ns);
  printf("BENCH calltrace_ratio %.3f x\n", per_call / floor_ns);
  printf("BENCH calltrace_loss_run_ms %.1f ms\n", run_ms);
  printf("BENCH calltrace_events_lost %llu events\n", (unsigned long long)lost);
  printf("BENCH calltrace_rings_grown %u doublings\n", st1.rings_grown - st0.rings_grown);
  printf("BENCH calltrace_events_lost_keep_overflow %llu events\n", (unsigned long long)lost_drop);
  bench_budget_le("calltrace_ratio", per_call / floor_ns, 3.0);
  bench_budget_le("calltrace_events_lost", (double)lost, 0.0);
  return 0;
}
