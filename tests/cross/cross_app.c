/*
 * cross_app.c — a small instrumented program whose capture must read the
 * same on every platform: built natively and for each cross target
 * (tests/cross/CMakeLists.txt), it records a fixed workload to the file its
 * argument names through the real library (rings, drain, block encoder),
 * and tests/cross/compare_reports.py checks that the native `strobe report
 * --json` finds the same sites with the same counts in both captures.
 * Every count is fixed by the code; only durations depend on the machine.
 *
 * Must never: depend on timing for what it records (no time-bounded loops,
 * no sampling), or write anything but its capture.
 *
 * What it records: thread "main", 40 frames (scope `frame` with `update`
 * holding 3 `work`, `render` with VALUE `triangles` = k and COUNTER `draws`
 * += 2, a GAUGE `queue` = k % 5, then a FRAME mark); thread "worker", 40
 * `job` scopes each with a 10-iteration CUMULATIVE `iter` loop and an
 * explicit BEGIN/END `io`.
 */
#include <pthread.h>
#include <stdio.h>

#include "strobe/record.h"
#include "strobe/strobe.h"

#define FRAMES 40 /* enough for every site to appear many times, small enough for qemu (milliseconds) */
#define LOOP 10

static volatile unsigned g_sink; /* keeps the work loops from being optimized away */

static void burn(unsigned n) {
  for (unsigned i = 0; i < n * 100u; i++) g_sink += i;
}

static void *worker(void *arg) {
  (void)arg;
  strobe_thread_set_name("worker");
  for (unsigned k = 0; k < FRAMES; k++) {
    STROBE_SCOPE("job");
    for (unsigned i = 0; i < LOOP; i++) {
      STROBE_CUMULATIVE("iter");
      burn(1);
    }
    STROBE_BEGIN("io");
    burn(2);
    STROBE_END();
  }
  return NULL;
}

static void frame(unsigned k) {
  STROBE_SCOPE("frame");
  {
    STROBE_SCOPE("update");
    for (int i = 0; i < 3; i++) {
      STROBE_SCOPE_CAT("work", "sim");
      burn(1 + k % 4);
    }
  }
  {
    STROBE_SCOPE("render");
    STROBE_VALUE("triangles", k);
    STROBE_COUNTER_ADD("draws", 2);
    burn(2);
  }
  STROBE_GAUGE_SET("queue", k % 5);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: cross_app OUT.strobe\n");
    return 2;
  }
  strobe_recorder *rec;
  int rc = strobe_record_start(&(strobe_record_desc){.path = argv[1]}, &rec);
  if (rc) {
    fprintf(stderr, "cross_app: strobe_record_start(%s): %s\n", argv[1], strobe_strerror(rc));
    return 1;
  }
  strobe_thread_set_name("main");
  pthread_t th;
  if (pthread_create(&th, NULL, worker, NULL)) {
    fprintf(stderr, "cross_app: pthread_create failed\n");
    return 1;
  }
  for (unsigned k = 0; k < FRAMES; k++) {
    frame(k);
    STROBE_FRAME_MARK();
  }
  pthread_join(th, NULL);
  rc = strobe_record_stop(rec);
  if (rc) {
    fprintf(stderr, "cross_app: strobe_record_stop: %s\n", strobe_strerror(rc));
    return 1;
  }
  return 0;
}
