/*
 * bench_crash_loss.c — how much recent data a kill -9 of a recording process
 * loses on a loaded machine (docs/recording.md §Crash loss): 20 kills with
 * the default flush interval (100 ms) while two busy processes run beside the
 * child (tests/support/crash_loss.h, shared with tests/test_crash_loss.c,
 * which checks the bound). Budget: crash_loss_ms_max <= flush interval +
 * one drain period; the ratio to the flush interval is printed too.
 */
#include "floor.h"
#include "support/crash_loss.h"

int main(void) {
  crash_loss cl = crash_loss_measure(20, 2, 0);
  if (cl.runs == 0) {
    fprintf(stderr, "bench_crash_loss: no run could be measured\n");
    return 1;
  }
  printf("BENCH crash_loss_ms_max %.1f ms\n", cl.max_ms);
  printf("BENCH crash_loss_ms_mean %.1f ms\n", cl.mean_ms);
  printf("BENCH crash_loss_kills %d kills\n", cl.runs);
  printf("BENCH crash_loss_ratio_to_flush %.3f x\n", cl.max_ms / (double)cl.flush_ms);
  printf("BENCH crash_loss_disturbed_kills %d kills\n", cl.disturbed);
  printf("BENCH crash_loss_disturbed_ms_max %.1f ms\n", cl.disturbed_max_ms);
  bench_budget_le("crash_loss_ms_max", cl.max_ms, (double)cl.flush_ms + (double)cl.drain_ms);
  return 0;
}
