/*
 * floor.h — the baseline every scope budget is a ratio against, shared by the
 * benches: two tick reads and two 16-byte stores into a thread-local,
 * power-of-two ring per begin+end pair, and nothing else. Also the timing
 * and budget-printing helpers the benches share; clocks, memory, temporary
 * files and spin work are tests/support/fixtures.h's, shared with the tests.
 */
#ifndef STROBE_BENCH_FLOOR_H
#define STROBE_BENCH_FLOOR_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "strobe/strobe.h"
#include "support/fixtures.h" /* clock, RSS, temp files, spin work: shared with tests/ */

/* One event as the floor writes it: the same 16 bytes as a ring event. */
typedef struct floor_slot {
  uint64_t ts;   /* ticks */
  uint32_t kind; /* 1 = begin, 2 = end */
  uint32_t data; /* a constant site id */
} floor_slot;

static _Thread_local floor_slot *floor_ring; /* ring_events slots, like the real ring */
static _Thread_local uint64_t floor_mask;
static _Thread_local uint64_t floor_pos;

/* Allocates the floor ring with the real ring's size, so both stream through
 * the same amount of memory. Returns 0 or -1. */
static inline int floor_setup(void) {
  uint32_t ring_events = strobe_query_desc().ring_events;
  floor_ring = (floor_slot *)calloc(ring_events, sizeof *floor_ring);
  floor_mask = ring_events - 1u;
  return floor_ring ? 0 : -1;
}

__attribute__((noinline, unused)) static void floor_loop(uint32_t n) {
  floor_slot *ring = floor_ring;
  uint64_t mask = floor_mask, pos = floor_pos;
  /* The compiler no longer knows where `ring` points, so it must perform
   * every store through it: nothing here can be proven dead. */
  __asm__ __volatile__("" : "+r"(ring));
  for (uint32_t i = 0; i < n; i++) {
    uint64_t t0 = strobe__now();
    floor_slot *b = &ring[pos++ & mask];
    b->ts = t0;
    b->kind = 1;
    b->data = 7;
    uint64_t t1 = strobe__now();
    floor_slot *e = &ring[pos++ & mask];
    e->ts = t1;
    e->kind = 2;
    e->data = 7;
  }
  __asm__ __volatile__("" ::: "memory");
  floor_pos = pos;
}

/* ns per iteration of loop(n). */
static inline double bench_time_round(void (*loop)(uint32_t), uint32_t n) {
  uint64_t a = fx_now_ns();
  loop(n);
  uint64_t b = fx_now_ns();
  return (double)(b - a) / n;
}

static inline void bench_budget_le(const char *name, double value, double limit) {
  printf("BUDGET %s %.3f <= %.3f %s\n", name, value, limit, value <= limit ? "ok" : "OVER");
}

#endif
