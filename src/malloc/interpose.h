/*
 * interpose.h — what the interposer's two files share (src/malloc/): the
 * allocator underneath (the next malloc in the lookup order) and the
 * recording of one allocation or free. Private to libstrobe_malloc; never
 * part of libstrobe, so that linking Strobe never replaces the allocator.
 */
#ifndef STROBE_MALLOC_INTERPOSE_H
#define STROBE_MALLOC_INTERPOSE_H

#include <stddef.h>

#include "strobe/strobe.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STROBE__MALLOC_API __attribute__((visibility("hidden")))

/* The allocator underneath: no recording. Safe from any thread. */
STROBE__MALLOC_API void *strobe__real_malloc(size_t n);
STROBE__MALLOC_API void *strobe__real_memalign(size_t align, size_t n);
STROBE__MALLOC_API void strobe__real_free(void *p);

/* The pools the interposer records into: "malloc" (the C functions) and
 * "new" (operator new and delete), each an ALLOC and a FREE site. */
enum { STROBE__POOL_MALLOC = 0, STROBE__POOL_NEW = 1 };
/* Records one allocation (p not NULL) or free, when a capture records and
 * the calling thread is neither inside Strobe (the per-thread guard: the
 * library's own allocations, a signal handler interrupting a recording) nor
 * one of Strobe's threads. Takes no lock on the inline path. */
STROBE__MALLOC_API void strobe__record_alloc(int pool, void *p, size_t n);
STROBE__MALLOC_API void strobe__record_free(int pool, void *p);

#ifdef __cplusplus
}
#endif

#endif
