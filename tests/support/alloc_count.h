/*
 * alloc_count.h — counts the calling thread's allocations, for the tests and
 * benches that check how often the library allocates (docs/sessions.md
 * §Cost and interpretation: a completed payload is allocated once).
 *
 * Owns: the count, per thread, between alloc_count_start and alloc_count_stop.
 * A program gets it by linking tests/support/alloc_count.c with the linker's
 * --wrap for every allocator entry the library could use: the CMake function
 * strobe_count_allocations (cmake/alloc_count.cmake), which a test asks for
 * with `STROBE_TEST_NEEDS: alloc_count` and a bench with
 * `STROBE_BENCH_NEEDS: alloc-count`.
 * Must never: change what an allocation returns, fail one, or count another
 * thread's.
 */
#ifndef STROBE_TEST_ALLOC_COUNT_H
#define STROBE_TEST_ALLOC_COUNT_H

/* Starts counting this thread's allocations from zero. */
void alloc_count_start(void);
/* Stops counting; returns how many allocations this thread made since alloc_count_start. */
long alloc_count_stop(void);

#endif
