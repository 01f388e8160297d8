/*
 * bench_bytes.c — what a number and a scope take on disk (docs/capture-format.md,
 * EVENTS): a capture of 1 M small integer values (0..127, as a counter or
 * an index gives) inside one scope, and one of 1 M scopes, each less an
 * empty capture's bytes, per event. Printed:
 *
 *   value_bytes_on_disk   bytes per value (budget <= 4 where the value is small);
 *   scope_bytes_on_disk   bytes per scope, the same run's baseline;
 *   value_bytes_ratio     the first over the second.
 *
 * Must never: assert anything (budgets are printed; the exit status is 0
 * whatever is measured).
 *
 * Usage: bench_bytes
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "floor.h"
#include "strobe/record.h"
#include "strobe/strobe.h"

/* Bytes on disk per event of kind `what` (0: a scope, 1: a value inside one open scope): a capture of
 * SIZE_N of them less an empty capture's bytes. */
#define SIZE_N 1000000u
static double bytes_per(int what) {
  double bytes[2] = {0, 0};
  for (int full = 0; full < 2; full++) {
    char path[64];
    strobe_recorder *rec;
    if (fx_temp_file(path, sizeof path, "bench-cost-size") ||
        strobe_record_start(&(strobe_record_desc){.path = path}, &rec))
      return 0;
    if (full && what) {
      STROBE_SCOPE("size_around");
      for (uint32_t i = 0; i < SIZE_N; i++) STROBE_VALUE("size_value", i & 127u);
    } else if (full) {
      for (uint32_t i = 0; i < SIZE_N; i++) {
        STROBE_SCOPE("size_scope");
      }
    }
    (void)strobe_record_stop(rec);
    struct stat st;
    bytes[full] = stat(path, &st) == 0 ? (double)st.st_size : 0;
    unlink(path);
  }
  return (bytes[1] - bytes[0]) / SIZE_N;
}

int main(void) {
  int rc = strobe_setup(&(strobe_desc){.overflow = STROBE_OVERFLOW_WAIT}); /* every event on disk */
  if (rc) {
    fprintf(stderr, "bench_bytes: strobe_setup: %s\n", strobe_strerror(rc));
    return 1;
  }
  double value_bytes = bytes_per(1), scope_bytes = bytes_per(0);
  printf("BENCH value_bytes_on_disk %.3f bytes\n", value_bytes);
  printf("BENCH scope_bytes_on_disk %.3f bytes\n", scope_bytes);
  printf("BENCH value_bytes_ratio %.3f ratio\n", scope_bytes > 0 ? value_bytes / scope_bytes : 0);
  bench_budget_le("value_bytes_on_disk", value_bytes, 4.0);
  return 0;
}
