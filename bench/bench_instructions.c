/*
 * bench_instructions.c — the subject of scripts/bench-callgrind.sh, which
 * runs it under callgrind and divides inclusive instruction counts by N:
 *
 *   record_loop  N recorded STROBE_SCOPEs (a capture file is recording), so
 *                Ir(record_loop)/N is the hot path's instructions per
 *                begin+end pair, including its share of the slow-path calls
 *                it makes (the one the depth check forces every few
 *                hundred scopes, the half-ring drain wake);
 *   value_loop   N recorded STROBE_VALUEs of a loop index on an open scope
 *                (opened outside the loop); counter_loop and gauge_loop
 *                the same for STROBE_COUNTER_ADD of a constant and
 *                STROBE_GAUGE_SET of an integer level (docs/recording.md,
 *                Numbers). Each is the same loop as empty_loop, which does
 *                nothing, so Ir(value_loop)/N - Ir(empty_loop)/N is what
 *                one number adds to the code it is in;
 *   interned_loop, interned_value_loop  record_loop and value_loop on sites
 *                made at run time by strobe_site_intern (STROBE_SCOPE_SITE,
 *                STROBE_VALUE_SITE): an interned site is the same kind of
 *                object, so it must cost the same (docs/recording.md,
 *                Run-time names);
 *   nested_loop  N times a scope holding a scope holding a scope, all three
 *                opened in the same C frame (one function): Ir/(3N) is one
 *                begin+end pair that must stay inline although its stack
 *                pointer equals its parent's (docs/recording.md, Unwinding),
 *                about 11 instructions more than record_loop's;
 *   element_loop N STROBE_ELEMENT_SITEs (element attribution, docs/recording.md
 *                §Elements) on an open scope, less empty_loop: what one
 *                attribution (one 16-byte event) adds;
 *   attributed_loop  N STROBE_SCOPE_ELEMENTs: an attributed scope whole,
 *                next to record_loop's plain one;
 *   explicit_loop, explicit_interned_loop  N STROBE_BEGIN + STROBE_END
 *                pairs (an interpreter's call and return: docs/recording.md
 *                §Explicit begin and end), by name and on a site from
 *                strobe_site_intern (STROBE_BEGIN_SITE): at most 1.2 times
 *                record_loop's block scope;
 *   alloc_loop, free_loop  N STROBE_ALLOCs and STROBE_FREEs of made-up
 *                addresses (docs/memory.md §Allocations): at most 30 each;
 *   lock_loop, plain_lock_loop  N uncontended strobe_mutex lock+unlock pairs
 *                (strobe/lock.h: an acquisition and a release recorded) and
 *                N plain pthread_mutex pairs: the difference is what
 *                recording adds to a lock, at most two scope events' cost
 *                (record_loop's pair);
 *   floor_loop   N iterations of the hardware floor: two tick reads and two
 *                16-byte stores into a thread-local power-of-two ring.
 *
 * Instruction counts, unlike times, are exact and repeatable on any machine,
 * so they catch hot-path regressions that timing noise would hide.
 *
 * The loops run in batches of BATCH scopes with strobe_record_flush() in
 * between, outside record_loop, because valgrind serialises threads: the
 * drain thread might otherwise not run before the ring fills, and the count
 * would include the drop path. BATCH * 2 events stays below the default ring.
 *
 * Usage: bench_instructions [N]   (default 1,000,000). Run natively it only
 * exercises the loops; the figures come from the callgrind script.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "floor.h"
#include "strobe/lock.h"
#include "strobe/record.h"
#include "strobe/strobe.h"

#define DEFAULT_N 1000000u
#define BATCH 50000u /* 100,000 events (a number is two): well inside the default ring (262,144 events) */

/* Extern and noinline so callgrind sees exactly this name, uncloned.
 * floor_loop comes from floor.h, the floor every bench compares against. */
void record_loop(uint32_t n);
void value_loop(uint32_t n);
void counter_loop(uint32_t n);
void gauge_loop(uint32_t n);
void empty_loop(uint32_t n);
void interned_loop(uint32_t n, strobe_site *site);
void nested_loop(uint32_t n);
void interned_value_loop(uint32_t n, strobe_site *site);
void element_loop(uint32_t n);
void attributed_loop(uint32_t n);
void explicit_loop(uint32_t n);
void explicit_interned_loop(uint32_t n, strobe_site *site);
void alloc_loop(uint32_t n);
void free_loop(uint32_t n);

/* Allocations and frees (docs/memory.md §Allocations): addresses a loop
 * makes up (never NULL), sizes the index; the allocator's own cost is the
 * application's. */
__attribute__((noinline)) void alloc_loop(uint32_t n) {
  for (uint32_t i = 0; i < n; i++) STROBE_ALLOC((void *)(uintptr_t)(16u * i + 16u), i, "bench_pool");
}
__attribute__((noinline)) void free_loop(uint32_t n) {
  for (uint32_t i = 0; i < n; i++) STROBE_FREE((void *)(uintptr_t)(16u * i + 16u), "bench_pool");
}

void lock_loop(uint32_t n, strobe_mutex *m);
void plain_lock_loop(uint32_t n, pthread_mutex_t *m);

__attribute__((noinline)) void lock_loop(uint32_t n, strobe_mutex *m) {
  for (uint32_t i = 0; i < n; i++) {
    strobe_mutex_lock(m);
    strobe_mutex_unlock(m);
  }
}

__attribute__((noinline)) void plain_lock_loop(uint32_t n, pthread_mutex_t *m) {
  for (uint32_t i = 0; i < n; i++) {
    pthread_mutex_lock(m);
    pthread_mutex_unlock(m);
  }
}

STROBE_ELEMENT_TYPE(g_bench_type, "BenchCell");

/* The id is the loop index: hashing the application's identity is the application's cost. */
__attribute__((noinline)) void element_loop(uint32_t n) {
  for (uint32_t i = 0; i < n; i++) STROBE_ELEMENT_SITE(&g_bench_type, (uint64_t)i);
}

__attribute__((noinline)) void attributed_loop(uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    STROBE_SCOPE_ELEMENT("bench_attributed", &g_bench_type, (uint64_t)i);
  }
}

__attribute__((noinline)) void record_loop(uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    STROBE_SCOPE("bench_instructions");
  }
}

__attribute__((noinline)) void explicit_loop(uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    STROBE_BEGIN("bench_explicit");
    STROBE_END();
  }
}

__attribute__((noinline)) void explicit_interned_loop(uint32_t n, strobe_site *site) {
  for (uint32_t i = 0; i < n; i++) {
    STROBE_BEGIN_SITE(site);
    STROBE_END();
  }
}

/* Three scopes in one C frame, as a function with a nested block writes them. */
__attribute__((noinline)) void nested_loop(uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    STROBE_SCOPE("bench_nested_outer");
    {
      STROBE_SCOPE("bench_nested_mid");
      {
        STROBE_SCOPE("bench_nested_inner");
      }
    }
  }
}

/* The numbers an application records: a loop index, a fixed delta, a level. */
__attribute__((noinline)) void value_loop(uint32_t n) {
  for (uint32_t i = 0; i < n; i++) STROBE_VALUE_UNIT("rows", i, STROBE_UNIT_COUNT);
}

__attribute__((noinline)) void counter_loop(uint32_t n) {
  for (uint32_t i = 0; i < n; i++) STROBE_COUNTER_ADD_UNIT("bytes_sent", 512, STROBE_UNIT_BYTES);
}

__attribute__((noinline)) void gauge_loop(uint32_t n) {
  for (uint32_t i = 0; i < n; i++) STROBE_GAUGE_SET_UNIT("queue_bytes", i, STROBE_UNIT_BYTES);
}

/* The loop alone: the empty asm keeps it from being removed. */
__attribute__((noinline)) void empty_loop(uint32_t n) {
  for (uint32_t i = 0; i < n; i++) __asm__ __volatile__("" : : "r"(i));
}

__attribute__((noinline)) void interned_loop(uint32_t n, strobe_site *site) {
  for (uint32_t i = 0; i < n; i++) {
    STROBE_SCOPE_SITE(site);
  }
}

__attribute__((noinline)) void interned_value_loop(uint32_t n, strobe_site *site) {
  for (uint32_t i = 0; i < n; i++) STROBE_VALUE_SITE(site, i);
}

int main(int argc, char **argv) {
  uint32_t n = DEFAULT_N;
  if (argc > 1) {
    long v = strtol(argv[1], NULL, 10);
    if (v <= 0 || v > 1000000000L) {
      fprintf(stderr, "usage: %s [N]\n", argv[0]);
      return 2;
    }
    n = (uint32_t)v;
  }
  if (floor_setup()) return 1;

  char path[64];
  snprintf(path, sizeof path, "/tmp/strobe-bench-instructions-%ld.strobe", (long)getpid());
  strobe_recorder *rec;
  int rc = strobe_record_start(&(strobe_record_desc){.path = path}, &rec);
  if (rc) {
    fprintf(stderr, "bench_instructions: cannot record to %s: %s\n", path, strobe_strerror(rc));
    return 1;
  }
  /* Attach this thread (allocate its ring) outside record_loop: a one-off, not per-scope, cost. */
  strobe_thread_set_name("bench_instructions");
  strobe_record_flush(rec);
  char name[] = "bench_interned";
  strobe_site *interned = strobe_site_intern(name, sizeof name - 1, NULL, STROBE_SITE_SCOPE);
  strobe_site *interned_value = strobe_site_intern(name, sizeof name - 1, NULL, STROBE_SITE_VALUE);
  strobe_mutex lock;
  pthread_mutex_t plain_lock = PTHREAD_MUTEX_INITIALIZER;
  if (strobe_mutex_init(&lock, "bench_lock")) return 1;

  for (uint32_t done = 0; done < n;) {
    uint32_t b = n - done < BATCH ? n - done : BATCH;
    record_loop(b);
    strobe_record_flush(rec);
    nested_loop(b / 2); /* three pairs each: in two halves, to stay inside the ring */
    strobe_record_flush(rec);
    nested_loop(b - b / 2);
    strobe_record_flush(rec);
    STROBE_BEGIN("bench_numbers"); /* the scope the values attach to */
    value_loop(b);
    STROBE_END();
    strobe_record_flush(rec);
    counter_loop(b);
    strobe_record_flush(rec);
    gauge_loop(b);
    strobe_record_flush(rec);
    interned_loop(b, interned);
    strobe_record_flush(rec);
    explicit_loop(b);
    strobe_record_flush(rec);
    explicit_interned_loop(b, interned);
    strobe_record_flush(rec);
    STROBE_BEGIN("bench_numbers");
    interned_value_loop(b, interned_value);
    STROBE_END();
    strobe_record_flush(rec);
    STROBE_BEGIN("bench_elements"); /* the scope the attributions go to */
    element_loop(b);
    STROBE_END();
    strobe_record_flush(rec);
    attributed_loop(b);
    strobe_record_flush(rec);
    alloc_loop(b); /* three events each: 150,000, inside the ring */
    strobe_record_flush(rec);
    free_loop(b);
    strobe_record_flush(rec);
    lock_loop(b, &lock);
    strobe_record_flush(rec);
    plain_lock_loop(b, &plain_lock);
    empty_loop(b);
    floor_loop(b);
    done += b;
  }
  rc = strobe_record_stop(rec);
  unlink(path);
  free(floor_ring);
  strobe_event_stats st = strobe_query_event_stats();
  /* Not a figure: a recording that dropped events would have counted the drop path. */
  printf("# bench_instructions: %u pairs, events_lost %llu, stop %s\n", n, (unsigned long long)st.events_lost,
         rc ? strobe_err_name(rc) : "ok");
  return 0;
}
