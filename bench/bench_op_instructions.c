/*
 * bench_op_instructions.c — the subject of scripts/bench-op-callgrind.sh,
 * which runs it under callgrind and divides inclusive instruction counts by
 * N: what the operation API (session.h: operations, stages, per-operation
 * counters, application scopes) costs per call, first with nothing listening
 * (no session, no capture: docs/sessions.md §Cost when nothing listens), then
 * with a session open on the collector.
 *
 *   idle_op_loop        N strobe_op_begin + strobe_op_end pairs;
 *   idle_phase_loop     N strobe_op_begin_in_phase + strobe_op_end pairs;
 *   idle_stage_loop     N strobe_stage_begin + strobe_stage_end pairs inside
 *                       an open operation (it publishes its phase, which a
 *                       session started later reports);
 *   idle_bare_stage_loop  the same outside any operation;
 *   idle_counter_loop   N strobe_op_counter_add on an open operation;
 *   idle_app_loop       N strobe_app_scope_begin + strobe_app_scope_end;
 *   idle_explicit_loop  N STROBE_BEGIN + STROBE_END on a thread named with
 *                       strobe_thread_set_name (attached): gated on whether
 *                       anything records, not on the thread's state
 *                       (docs/recording.md §Explicit begin and end);
 *   session_op_loop, session_stage_loop, session_counter_loop
 *                       the first, third and fifth with a session open;
 *   empty_op_loop       the loop alone (subtracted from each).
 *
 * Built twice (bench/CMakeLists.txt): linked to strobe_static and, as
 * bench_op_instructions_shared, to libstrobe.so, so the script prints the
 * shared library's figures beside the static ones (a thread-local reached
 * through __tls_get_addr shows there only).
 *
 * Usage: bench_op_instructions [N]   (default 200,000). Run natively it only
 * exercises the loops; the figures come from the callgrind script.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "strobe/session.h"
#include "strobe/strobe.h"

#define DEFAULT_N 200000u

void idle_op_loop(strobe_collector *c, strobe_window w, uint32_t n);
void idle_phase_loop(strobe_collector *c, strobe_window w, uint32_t n);
void idle_stage_loop(uint32_t n);
void idle_bare_stage_loop(uint32_t n);
void idle_counter_loop(uint32_t n);
void idle_app_loop(strobe_collector *c, uint32_t n);
void idle_explicit_loop(uint32_t n);
void session_op_loop(strobe_collector *c, strobe_window w, uint32_t n);
void session_stage_loop(uint32_t n);
void session_counter_loop(uint32_t n);
void empty_op_loop(uint32_t n);

static strobe_site g_stage = STROBE_STAGE_SITE("bench_stage", NULL);

static void op_pairs(strobe_collector *c, strobe_window w, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    int st;
    strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, &st);
    strobe_op_end(op, 1);
  }
}

static void stage_pairs(uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    strobe_stage s = strobe_stage_begin(&g_stage);
    (void)strobe_stage_end(&s);
  }
}

static void counter_adds(uint32_t n) {
  for (uint32_t i = 0; i < n; i++) strobe_op_counter_add("bench_items", 1.0);
}

/* Extern and noinline so callgrind sees exactly these names. */
__attribute__((noinline)) void idle_op_loop(strobe_collector *c, strobe_window w, uint32_t n) { op_pairs(c, w, n); }

__attribute__((noinline)) void idle_phase_loop(strobe_collector *c, strobe_window w, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    int st;
    strobe_op op = strobe_op_begin_in_phase(c, w, STROBE_OP_INPUT, &st);
    strobe_op_end(op, 1);
  }
}

__attribute__((noinline)) void idle_stage_loop(uint32_t n) { stage_pairs(n); }
__attribute__((noinline)) void idle_bare_stage_loop(uint32_t n) { stage_pairs(n); }
__attribute__((noinline)) void idle_counter_loop(uint32_t n) { counter_adds(n); }

__attribute__((noinline)) void idle_app_loop(strobe_collector *c, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    strobe_app_scope s = strobe_app_scope_begin(c, "main", "bench_app", STROBE_LANE_UI);
    strobe_app_scope_end(&s);
  }
}

__attribute__((noinline)) void idle_explicit_loop(uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    STROBE_BEGIN("bench_explicit");
    STROBE_END();
  }
}

__attribute__((noinline)) void session_op_loop(strobe_collector *c, strobe_window w, uint32_t n) { op_pairs(c, w, n); }
__attribute__((noinline)) void session_stage_loop(uint32_t n) { stage_pairs(n); }
__attribute__((noinline)) void session_counter_loop(uint32_t n) { counter_adds(n); }

__attribute__((noinline)) void empty_op_loop(uint32_t n) {
  for (uint32_t i = 0; i < n; i++) __asm__ __volatile__("" : : "r"(i));
}

int main(int argc, char **argv) {
  unsigned long arg = argc > 1 ? strtoul(argv[1], NULL, 10) : DEFAULT_N;
  if (arg == 0 || arg > 100000000ul) {
    fprintf(stderr, "usage: %s [N]   (1..100000000)\n", argv[0]);
    return 2;
  }
  uint32_t n = (uint32_t)arg;
  strobe_collector *c;
  strobe_window w;
  if (strobe_collector_create(&c) || strobe_window_register(c, "main", 0, &w)) {
    fprintf(stderr, "bench_op_instructions: cannot set up a collector and a window\n");
    return 1;
  }
  strobe_thread_set_name("bench_op_instructions"); /* attaches the thread, as an application naming it does */
  /* Warm: the stage site's registration and the thread's first calls are one-offs. */
  op_pairs(c, w, 16);
  (void)strobe_site_register(&g_stage); /* once, under the site table's lock: not a per-call cost */
  empty_op_loop(n);
  idle_op_loop(c, w, n);
  idle_phase_loop(c, w, n);
  idle_bare_stage_loop(n);
  idle_app_loop(c, n);
  idle_explicit_loop(n);
  int st;
  strobe_op outer = strobe_op_begin(c, w, STROBE_OP_PASS, &st);
  idle_stage_loop(n);
  idle_counter_loop(n);
  strobe_op_end(outer, 1);

  char id[STROBE_SESSION_ID_MAX];
  if (strobe_session_start(c, NULL, id)) {
    fprintf(stderr, "bench_op_instructions: cannot start a session\n");
    return 1;
  }
  session_op_loop(c, w, n);
  outer = strobe_op_begin(c, w, STROBE_OP_PASS, &st);
  session_stage_loop(n);
  session_counter_loop(n);
  strobe_op_end(outer, 1);
  strobe_report *r = NULL;
  (void)strobe_session_stop(c, id, 0, &r);
  strobe_report_free(r);
  strobe_collector_close(c);
  strobe_collector_release(c);
  printf("ops %u\n", n);
  return 0;
}
