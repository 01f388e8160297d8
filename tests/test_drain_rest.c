/*
 * test_drain_rest.c — the drain rests when there is nothing to drain
 * (docs/recording.md §The drain): with a capture open and no event recorded,
 * each pass that finds nothing doubles the wait up to its rest, in which it
 * takes one pass per rest and nothing between; the first event any thread
 * records then ends the rest through the producer's slow path, not the
 * rest's running out. Counts only (the drain's passes and rests), never
 * times: a loaded machine makes rests longer, never more passes per rest.
 * The wake-ups per second and the CPU a rest costs are bench figures
 * (bench/bench_drain_idle.c).
 */
#include <stdint.h>
#include <stdio.h>

#include "collect/collect.h"
#include "strobe/record.h"
#include "strobe/strobe.h"
#include "support/fixtures.h"
#include "support/harness.h"

#define CAP_MS 20000 /* generous: the drain backs off within about 200 ms when not starved of CPU */

/* Waits (in 1 ms steps, at most CAP_MS) until the drain has begun `n` rests after `base`. */
static int wait_rests(uint64_t base, uint64_t n) {
  for (unsigned ms = 0; ms < CAP_MS; ms++) {
    if (strobe__drain_query_rests().rests >= base + n) return 1;
    fx_sleep_ms(1);
  }
  return 0;
}

static void test_rest_and_wake(void) {
  char path[256];
  REQUIRE(fx_temp_file(path, sizeof path, "drain-rest") == 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  {
    STROBE_SCOPE("attach"); /* attaches this thread: its ring is one the drain arms */
  }
  strobe_record_flush(rec);

  /* Nothing recorded: it backs off into rests, one pass each. */
  REQUIRE(wait_rests(0, 2));
  strobe__drain_rests r0 = strobe__drain_query_rests();
  strobe__drain_cost c0 = strobe__drain_query_cost();
  REQUIRE(wait_rests(r0.rests, 5));
  strobe__drain_rests r1 = strobe__drain_query_rests();
  strobe__drain_cost c1 = strobe__drain_query_cost();
  /* Each rest ends in one pass; none runs between two rests (+1: the one under way at c0). */
  CHECK(c1.passes - c0.passes <= r1.rests - r0.rests + 1);

  /* The first event ends the rest: its BEGIN's slow path wakes the drain. */
  for (unsigned ms = 0; ms < CAP_MS && !strobe__drain_query_rests().resting; ms++) fx_sleep_ms(1);
  uint64_t woken = strobe__drain_query_rests().woken;
  uint64_t events = strobe__drain_query_cost().events;
  {
    STROBE_SCOPE("first_after_rest");
  }
  int seen = 0;
  for (unsigned ms = 0; ms < CAP_MS && !seen; ms++) {
    seen = strobe__drain_query_rests().woken > woken;
    if (!seen) fx_sleep_ms(1);
  }
  CHECK(seen);
  for (unsigned ms = 0; ms < CAP_MS && strobe__drain_query_cost().events == events; ms++) fx_sleep_ms(1);
  CHECK(strobe__drain_query_cost().events > events);
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
  remove(path);
}

#define CASES(X) X(rest_and_wake)
HARNESS_MAIN(CASES)
