/*
 * basic.c — the smallest complete use of Strobe: instrument a few functions,
 * record them from two threads into a capture file, then read the file back
 * and print what it holds.
 *
 * Usage: strobe-basic [capture-path]   (default: basic.strobe)
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/strobe.h"

static double work(int n) {
  STROBE_FUNCTION();
  double acc = 0;
  for (int i = 0; i < n; i++) {
    STROBE_CUMULATIVE("term");
    acc += sqrt((double)i + 1.0);
  }
  STROBE_VALUE("terms", n);
  return acc;
}

static void *worker(void *arg) {
  strobe_thread_set_name((const char *)arg);
  double sink = 0;
  for (int frame = 0; frame < 100; frame++) {
    STROBE_SCOPE("frame");
    {
      STROBE_SCOPE("update");
      sink += work(200 + frame);
    }
    {
      STROBE_SCOPE("render");
      sink += work(100);
      STROBE_COUNTER_ADD("draw_calls", 3);
    }
    STROBE_GAUGE_SET("sink", sink);
  }
  return NULL;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "basic.strobe";
  strobe_recorder *rec;
  int rc = strobe_record_start(&(strobe_record_desc){.path = path}, &rec);
  if (rc) {
    fprintf(stderr, "strobe-basic: cannot record to %s: %s\n", path, strobe_strerror(rc));
    return 1;
  }
  pthread_t a, b;
  pthread_create(&a, NULL, worker, "worker_a");
  pthread_create(&b, NULL, worker, "worker_b");
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  rc = strobe_record_stop(rec);
  if (rc) {
    fprintf(stderr, "strobe-basic: writing %s failed: %s\n", path, strobe_strerror(rc));
    return 1;
  }

  strobe_capture *cap;
  rc = strobe_capture_open(path, &cap);
  if (rc) {
    fprintf(stderr, "strobe-basic: cannot read %s: %s\n", path, strobe_strerror(rc));
    return 1;
  }
  /* Completed scopes per site: count and total time. */
  static uint64_t count[STROBE_MAX_SITES];
  static double total_ns[STROBE_MAX_SITES];
  strobe_capture_record r;
  while ((rc = strobe_capture_next(cap, &r)) > 0) {
    if (r.type == STROBE_REC_END) {
      count[r.site]++;
      total_ns[r.site] += r.duration_ns;
    }
  }
  if (rc < 0) fprintf(stderr, "strobe-basic: %s: %s\n", path, strobe_strerror(rc));
  const strobe_capture_header *h = strobe_capture_query_header(cap);
  strobe_capture_totals t = strobe_capture_query_totals(cap);
  printf("recorded %s: clock %s (%.4f ns/tick), overhead %.1f ns per scope\n", path, h->clock_source,
         h->ns_per_tick, h->overhead_per_scope_ns);
  printf("%llu events, %llu scopes, %llu lost, %u threads\n", (unsigned long long)t.events,
         (unsigned long long)t.scopes, (unsigned long long)t.lost, strobe_capture_query_thread_count(cap));
  printf("%-12s %10s %14s\n", "scope", "count", "total ms");
  for (uint32_t id = 1; id < strobe_capture_query_site_limit(cap); id++) {
    const strobe_capture_site *s = strobe_capture_query_site(cap, id);
    if (s && count[id]) printf("%-12s %10llu %14.3f\n", s->name, (unsigned long long)count[id], total_ns[id] / 1e6);
  }
  strobe_capture_close(cap);
  return rc < 0 ? 1 : 0;
}
