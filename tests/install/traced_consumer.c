/*
 * traced_consumer.c — a program outside the Strobe tree built with call
 * tracing the documented way (find_package(strobe), strobe_trace_calls;
 * docs/exploration.md): a region around a static function's call must give
 * one traced scope named after it, read back from the capture. Built and run
 * by tests/install/run.sh, linked shared and static.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <strobe/capture.h>
#include <strobe/record.h>
#include <strobe/trace.h>

static volatile int sink;

__attribute__((noinline)) static void traced_leaf(int x) { sink += x; }

int main(void) {
  char path[64];
  snprintf(path, sizeof path, "/tmp/strobe-traced-consumer-%ld.strobe", (long)getpid());
  strobe_recorder *rec;
  if (strobe_record_start(&(strobe_record_desc){.path = path}, &rec) != 0) return 1;
  strobe_trace_calls_begin();
  traced_leaf(1);
  strobe_trace_calls_end();
  strobe_record_stop(rec);
  strobe_capture *cap;
  if (strobe_capture_open(path, &cap) != 0) return 1;
  int found = 0;
  strobe_capture_record r;
  while (strobe_capture_next(cap, &r) > 0) {
    if (r.type != STROBE_REC_END) continue;
    const strobe_capture_site *s = strobe_capture_query_site(cap, r.site);
    found += (s->flags & STROBE_SITE_CALL) && !strcmp(s->name, "traced_leaf");
  }
  strobe_capture_close(cap);
  unlink(path);
  if (found != 1) {
    fprintf(stderr, "traced_consumer: %d traced calls of traced_leaf in the capture, want 1\n", found);
    return 1;
  }
  printf("traced_consumer: ok\n");
  return 0;
}
