/*
 * otel_app.c — records the capture the OTLP tests export (docs/otel.md,
 * tests/otel/otlp.test.mjs), with the real API and a known shape:
 *
 *   pass 101 (committed): stage layout { stage measure, scope helper },
 *                         stage paint; counter rows = 12
 *   pass 102 (committed, handed off): stage encode on main, taken, resumed
 *                         on thread "sender", stage present there
 *   pass 103 (dropped: committed 0): stage layout
 *   outside every operation: stage orphan_stage, scope idle_work
 *   input 104 (rebuild-free input dispatch): stage dispatch
 *
 * usage: otel_app OUT.strobe
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "strobe/record.h"
#include "strobe/session.h"

static void spin_us(unsigned us) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do clock_gettime(CLOCK_MONOTONIC, &t);
  while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < (long)us);
}

static strobe_op g_handed;

static void *sender(void *arg) {
  (void)arg;
  strobe_thread_set_name("sender");
  strobe_op_resume(g_handed);
  {
    STROBE_STAGE("present", NULL);
    spin_us(300);
  }
  strobe_op_end(g_handed, 1);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: otel_app OUT.strobe\n");
    return 2;
  }
  strobe_thread_set_name("main");
  strobe_collector *c;
  strobe_window w;
  strobe_recorder *rec;
  if (strobe_collector_create(&c) || strobe_window_register(c, "main", 0, &w) ||
      strobe_record_start(&(strobe_record_desc){.path = argv[1]}, &rec)) {
    fprintf(stderr, "otel_app: setup failed\n");
    return 1;
  }
  {
    STROBE_STAGE("orphan_stage", NULL); /* no operation around it: no span */
    STROBE_SCOPE("idle_work");
    spin_us(100);
  }
  strobe_op op = strobe_op_begin_frame(c, w, 101, NULL);
  {
    STROBE_STAGE("layout", NULL);
    {
      STROBE_STAGE("measure", "layout");
      spin_us(200);
    }
    {
      STROBE_SCOPE("helper");
      spin_us(100);
    }
  }
  {
    STROBE_STAGE("paint", NULL);
    spin_us(200);
  }
  strobe_op_counter_add("rows", 12);
  strobe_op_end(op, 1);

  g_handed = strobe_op_begin_frame(c, w, 102, NULL);
  {
    STROBE_STAGE("encode", NULL);
    spin_us(200);
  }
  g_handed = strobe_op_take();
  pthread_t t;
  pthread_create(&t, NULL, sender, NULL);
  pthread_join(t, NULL);

  op = strobe_op_begin_frame(c, w, 103, NULL);
  {
    STROBE_STAGE("layout", NULL);
    spin_us(100);
  }
  strobe_op_end(op, 0);

  op = strobe_op_begin(c, w, STROBE_OP_INPUT, NULL);
  {
    STROBE_STAGE("dispatch", NULL);
    spin_us(50);
  }
  strobe_op_end(op, 1);

  int rc = strobe_record_stop(rec);
  strobe_collector_release(c);
  return rc ? 1 : 0;
}
