/*
 * bench_scope.c — what one STROBE_SCOPE costs on the calling thread, in ns per
 * begin+end pair, measured in one run on one thread so the figures share the
 * same machine state:
 *
 *   scope_ns_floor      the hardware floor of any recorded scope: two tick
 *                       reads and two 16-byte stores into a thread-local,
 *                       power-of-two ring (no state, no checks);
 *   scope_ns_idle       STROBE_SCOPE with no consumer active: the cost every
 *                       instrumented build pays all the time (one relaxed
 *                       load and an untaken branch; budget <= 1 ns);
 *   scope_ns_recording  STROBE_SCOPE while a capture file records, and its
 *                       ratio to the floor (budget <= 1.25): how much the
 *                       real hot path adds to the unavoidable work;
 *   overhead_per_scope_ns  the library's own estimate, as written into the
 *                       capture header, for comparison.
 *
 * Every figure is the minimum over many rounds (timed with CLOCK_MONOTONIC,
 * independently of Strobe's own clock calibration), which filters out
 * preemption and interrupts. Recording rounds are 20,000 scopes (40,000
 * events, well under the default ring), and the ring is drained with
 * strobe_record_flush() between rounds, outside the timed window, so no round
 * ever hits a full ring: the figure is the producer's cost, not the cost of
 * losing events. Floor and recording rounds alternate so both see the same
 * frequency and cache conditions, and the floor ring has the real ring's size
 * so both stream through the same amount of memory.
 *
 * Budgets are printed, never asserted: this program exits 0 whatever it measures.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "floor.h"
#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/strobe.h"

#define ROUND_SCOPES 20000u   /* 40,000 events: below the half-ring drain wake of the default ring */
#define ROUNDS 300            /* per measured loop; the minimum is reported */
#define IDLE_ROUND_SCOPES 250000u
#define IDLE_ROUNDS 400       /* many short rounds: at ~1 cycle per scope the idle loop is the first
                                 figure to suffer from other work on the machine */

/* >>loops */

/* The measured STROBE_SCOPE loop, used both idle and recording. */
__attribute__((noinline)) static void scope_loop(uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    STROBE_SCOPE("bench_scope");
  }
}

int main(void) {
  /* Idle first: no consumer has ever been active, this thread is not even attached. */
  scope_loop(IDLE_ROUND_SCOPES); /* warm-up */
  double idle = 1e300;
  for (int r = 0; r < IDLE_ROUNDS; r++) {
    double ns = bench_time_round(scope_loop, IDLE_ROUND_SCOPES);
    if (ns < idle) idle = ns;
  }

  uint32_t ring_events = strobe_query_desc().ring_events;
  if (floor_setup()) {
    fprintf(stderr, "bench_scope: out of memory\n");
    return 1;
  }

  char path[64];
  snprintf(path, sizeof path, "/tmp/strobe-bench-scope-%ld.strobe", (long)getpid());
  strobe_recorder *rec;
  int rc = strobe_record_start(&(strobe_record_desc){.path = path}, &rec);
  if (rc) {
    fprintf(stderr, "bench_scope: cannot record to %s: %s\n", path, strobe_strerror(rc));
    return 1;
  }

  /* Warm-up: attaches this thread (allocates its ring), registers the site,
   * and touches both rings once. */
  for (uint32_t done = 0; done < ring_events; done += ROUND_SCOPES) {
    scope_loop(ROUND_SCOPES);
    strobe_record_flush(rec);
    floor_loop(ROUND_SCOPES);
  }

  double floor_ns = 1e300, rec_ns = 1e300;
  for (int r = 0; r < ROUNDS; r++) {
    double f = bench_time_round(floor_loop, ROUND_SCOPES);
    if (f < floor_ns) floor_ns = f;
    double s = bench_time_round(scope_loop, ROUND_SCOPES);
    if (s < rec_ns) rec_ns = s;
    strobe_record_flush(rec); /* untimed: the next round starts with an empty ring */
  }

  rc = strobe_record_stop(rec);
  if (rc) fprintf(stderr, "bench_scope: strobe_record_stop: %s\n", strobe_strerror(rc));
  strobe_event_stats st = strobe_query_event_stats();

  double header_overhead = -1.0;
  strobe_capture *cap;
  rc = strobe_capture_open(path, &cap);
  if (rc == 0) {
    header_overhead = strobe_capture_query_header(cap)->overhead_per_scope_ns;
    strobe_capture_close(cap);
  } else {
    fprintf(stderr, "bench_scope: cannot read back %s: %s\n", path, strobe_strerror(rc));
  }
  unlink(path);
  free(floor_ring);

  printf("BENCH scope_ns_floor %.3f ns\n", floor_ns);
  printf("BENCH scope_ns_idle %.3f ns\n", idle);
  bench_budget_le("scope_ns_idle", idle, 1.0);
  printf("BENCH scope_ns_recording %.3f ns\n", rec_ns);
  printf("BENCH scope_ratio_recording %.3f ratio\n", rec_ns / floor_ns);
  bench_budget_le("scope_ratio_recording", rec_ns / floor_ns, 1.25);
  printf("BENCH overhead_per_scope_ns %.3f ns\n", header_overhead);
  /* A recording round that lost events would have measured the drop path. */
  printf("BENCH scope_events_lost %llu events\n", (unsigned long long)st.events_lost);
  return 0;
}
