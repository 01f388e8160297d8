/*
 * alloc_count.c — the allocation-counting shim (alloc_count.h): every
 * allocator entry libstrobe could use is wrapped (the program is linked with
 * --wrap for each: cmake/alloc_count.cmake), so an allocation cannot escape
 * the count; each wrapper counts when its thread is counting and calls the
 * real function.
 *
 * Owns: the wrappers and the per-thread count. Must never: change what the
 * real allocator returns, or count an allocation of a thread that is not
 * counting.
 */
#include <stddef.h>

#include "support/alloc_count.h"

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
int __real_posix_memalign(void **p, size_t align, size_t size);
void *__real_aligned_alloc(size_t align, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
int __wrap_posix_memalign(void **p, size_t align, size_t size);
void *__wrap_aligned_alloc(size_t align, size_t size);

/* volatile: the compiler assumes malloc touches no global state, so it would
 * otherwise keep these in registers across the calls being counted. */
static _Thread_local volatile int counting;
static _Thread_local volatile long allocations;

void alloc_count_start(void) {
  allocations = 0;
  counting = 1;
}

long alloc_count_stop(void) {
  counting = 0;
  return allocations;
}

void *__wrap_malloc(size_t size) {
  if (counting) allocations++;
  return __real_malloc(size);
}
void *__wrap_calloc(size_t n, size_t size) {
  if (counting) allocations++;
  return __real_calloc(n, size);
}
void *__wrap_realloc(void *p, size_t size) {
  if (counting) allocations++;
  return __real_realloc(p, size);
}
char *__wrap_strdup(const char *s) {
  if (counting) allocations++;
  return __real_strdup(s);
}
char *__wrap_strndup(const char *s, size_t n) {
  if (counting) allocations++;
  return __real_strndup(s, n);
}
int __wrap_posix_memalign(void **p, size_t align, size_t size) {
  if (counting) allocations++;
  return __real_posix_memalign(p, align, size);
}
void *__wrap_aligned_alloc(size_t align, size_t size) {
  if (counting) allocations++;
  return __real_aligned_alloc(align, size);
}
