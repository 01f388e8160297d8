/*
 * disabled_app.c — a program instrumented like any other but compiled with
 * -DSTROBE_DISABLE, so its macros are no code: it records a capture (the
 * recorder is a function, still linked) that holds a header, its threads and
 * no event. `strobe compare` must never pass a candidate like this one
 * (tests/cli/cli_test.py, case compare_gate).
 *
 * Usage: disabled_app OUT
 */
#include <stdio.h>

#include "strobe/record.h"
#include "strobe/strobe.h"

#ifndef STROBE_DISABLE
#error "disabled_app.c is built with -DSTROBE_DISABLE"
#endif

static volatile unsigned g_sink;

static void work(unsigned i) {
  STROBE_SCOPE("work");
  g_sink += i * 2654435761u;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: disabled_app OUT\n");
    return 2;
  }
  strobe_recorder *rec;
  int rc = strobe_record_start(&(strobe_record_desc){.path = argv[1]}, &rec);
  if (rc) {
    fprintf(stderr, "disabled_app: %s\n", strobe_strerror(rc));
    return 1;
  }
  for (unsigned i = 0; i < 1000; i++) {
    STROBE_SCOPE("frame");
    work(i);
    STROBE_FRAME_MARK();
  }
  rc = strobe_record_stop(rec);
  return rc ? 1 : 0;
}
