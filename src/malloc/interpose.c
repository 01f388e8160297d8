/*
 * interpose.c — libstrobe_malloc, the opt-in allocator interposer
 * (docs/memory.md §The interposer): malloc, calloc, realloc, free,
 * posix_memalign, aligned_alloc, memalign, valloc and pvalloc, each passed
 * to the allocator underneath (the next definition in the lookup order,
 * found with dlsym(RTLD_NEXT)) and, while a capture records, recorded as an
 * allocation or free of pool "malloc" on the calling thread's ring.
 *
 * Owns: finding the allocator underneath (and a small static arena for the
 * allocations dlsym makes while it is being found), the per-thread guard
 * that keeps Strobe's own allocations, and a signal handler interrupting a
 * recording, out of the record, and the fork rule (a child records no
 * allocations: it has no drain).
 *
 * Must never: take a lock or allocate on the path of an allocation, record
 * while the calling thread is already inside Strobe, or free arena memory
 * into the allocator underneath (once the arena is used, free goes through
 * arena_free). With nothing recording an allocation costs
 * one relaxed load and a branch beyond the allocator's own
 * (bench/bench_malloc.c).
 *
 * Contents: >>underneath >>record >>api
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "malloc/interpose.h"
#include "probe/probe.h"

/* >>underneath */
/* The arena dlsym's own allocations come from while the allocator underneath
 * is being found (glibc's dlsym may call calloc for its error state). 64 KiB
 * is far more than that takes; past it such an allocation fails (NULL). Its
 * memory is never reused or freed. */
#define ARENA_BYTES (64u * 1024u)
static _Alignas(64) char g_arena[ARENA_BYTES];
static size_t g_arena_used; /* atomic */

static void arena_in_use(void);
static void arena_in_use(void);
static int arena_holds(const void *p) { return (uintptr_t)p - (uintptr_t)g_arena < ARENA_BYTES; }

/* An arena block: its size in the 16 bytes before it (realloc copies that
 * much), aligned to `align` (a power of two, at least 16). */
static void *arena_take(size_t n, size_t align) {
  if (align < 16) align = 16;
  if (n > ARENA_BYTES || align > ARENA_BYTES) return NULL;
  size_t want = n + align + 16;
  size_t at = __atomic_fetch_add(&g_arena_used, want, __ATOMIC_RELAXED);
  arena_in_use();
  if (at + want > ARENA_BYTES) return NULL;
  uintptr_t p = ((uintptr_t)g_arena + at + 16 + align - 1) & ~(uintptr_t)(align - 1);
  memcpy((char *)p - 16, &n, sizeof n);
  return (void *)p;
}
static size_t arena_size(const void *p) {
  size_t n;
  memcpy(&n, (const char *)p - 16, sizeof n);
  return n;
}

static void *boot_malloc(size_t n);
static void boot_free(void *p);
static void *boot_calloc(size_t k, size_t n);
static void *boot_realloc(void *p, size_t n);
static void *boot_memalign(size_t align, size_t n);

/* The allocator underneath; until found, the boot_* functions, which find
 * it. Loaded and stored relaxed: every thread finds the same functions. */
static struct {
  void *(*malloc)(size_t);
  void (*free)(void *);
  void *(*calloc)(size_t, size_t);
  void *(*realloc)(void *, size_t);
  void *(*memalign)(size_t, size_t);
  size_t (*usable)(void *);
} g_real = {boot_malloc, boot_free, boot_calloc, boot_realloc, boot_memalign, NULL};

#define REAL(fn) (__atomic_load_n(&g_real.fn, __ATOMIC_RELAXED))
static void (*g_libc_free)(void *); /* the allocator's free, whatever g_real.free is */

/* 1 while this thread runs dlsym: its allocations come from the arena. */
static __thread int t_finding __attribute__((tls_model("initial-exec")));

static void *next_symbol(const char *name) {
  void *f = dlsym(RTLD_NEXT, name);
  if (!f) abort(); /* no allocator underneath: nothing can work (cannot happen with a libc) */
  return f;
}

/* Finds the allocator underneath. Returns 0 when this thread is already
 * finding it (the caller then takes arena memory). */
static int find_real(void) {
  if (t_finding) return 0;
  t_finding = 1;
  void *m = next_symbol("malloc"), *f = next_symbol("free"), *c = next_symbol("calloc");
  void *r = next_symbol("realloc"), *a = next_symbol("memalign");
  void *u = dlsym(RTLD_NEXT, "malloc_usable_size"); /* optional: a failed realloc's block (>>api) */
  __atomic_store_n(&g_real.usable, (size_t(*)(void *))u, __ATOMIC_RELAXED);
  __atomic_store_n(&g_real.memalign, (void *(*)(size_t, size_t))a, __ATOMIC_RELAXED);
  __atomic_store_n(&g_real.realloc, (void *(*)(void *, size_t))r, __ATOMIC_RELAXED);
  __atomic_store_n(&g_real.calloc, (void *(*)(size_t, size_t))c, __ATOMIC_RELAXED);
  __atomic_store_n(&g_libc_free, (void (*)(void *))f, __ATOMIC_RELAXED);
  /* The allocator's free itself, unless the arena was used meanwhile (then arena_free stays). */
  void (*boot)(void *) = boot_free;
  __atomic_compare_exchange_n(&g_real.free, &boot, (void (*)(void *))f, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  __atomic_store_n(&g_real.malloc, (void *(*)(size_t))m, __ATOMIC_RELAXED);
  t_finding = 0;
  return 1;
}

/* free once the arena was used: arena memory is never the allocator's. Only
 * then is it free's target, so that free's idle path tests nothing for it. */
static void arena_free(void *p) {
  if (!arena_holds(p)) __atomic_load_n(&g_libc_free, __ATOMIC_RELAXED)(p);
}
static void arena_in_use(void) { __atomic_store_n(&g_real.free, arena_free, __ATOMIC_RELAXED); }

static void *boot_malloc(size_t n) { return find_real() ? REAL(malloc)(n) : arena_take(n, 16); }
static void boot_free(void *p) {
  if (arena_holds(p)) return;
  if (find_real()) REAL(free)(p);
}
static void *boot_calloc(size_t k, size_t n) {
  if (find_real()) return REAL(calloc)(k, n);
  if (n && k > SIZE_MAX / n) return NULL;
  return arena_take(k * n, 16); /* zeroed: the arena is never reused */
}
static void *boot_realloc(void *p, size_t n) { return find_real() ? REAL(realloc)(p, n) : NULL; }
static void *boot_memalign(size_t align, size_t n) {
  return find_real() ? REAL(memalign)(align, n) : arena_take(n, align);
}

void *strobe__real_malloc(size_t n) { return REAL(malloc)(n); }
void *strobe__real_memalign(size_t align, size_t n) { return REAL(memalign)(align, n); }
void strobe__real_free(void *p) { REAL(free)(p); }

/* >>record */
/* The calling thread is inside a recording (or inside Strobe's slow path,
 * which may allocate: its ring, a grown ring): anything it allocates now is
 * not recorded. Also what a signal handler interrupting a recording sees. */
static __thread int t_busy __attribute__((tls_model("initial-exec")));
static int g_child; /* a child of fork(): records nothing */

static strobe_site g_sites[2][2] = {
    {{"malloc", NULL, NULL, __FILE__, "malloc", __LINE__, STROBE_SITE_ALLOC, 0, 0, 0},
     {"malloc", NULL, NULL, __FILE__, "free", __LINE__, STROBE_SITE_FREE, 0, 0, 0}},
    {{"new", NULL, NULL, __FILE__, "operator new", __LINE__, STROBE_SITE_ALLOC, 0, 0, 0},
     {"new", NULL, NULL, __FILE__, "operator delete", __LINE__, STROBE_SITE_FREE, 0, 0, 0}}};

static int may_record(void) {
  return !t_busy && !strobe__tls_own && !__atomic_load_n(&g_child, __ATOMIC_RELAXED);
}

void strobe__record_alloc(int pool, void *p, size_t n) {
  if (!p || !may_record()) return;
  t_busy = 1;
  __atomic_signal_fence(__ATOMIC_SEQ_CST); /* set before the ring is touched, for a handler that interrupts */
  strobe__alloc(&g_sites[pool][0], (uint64_t)(uintptr_t)p, (uint64_t)n);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  t_busy = 0;
}

void strobe__record_free(int pool, void *p) {
  if (!p || !may_record()) return;
  t_busy = 1;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  strobe__number(&g_sites[pool][1], (uint64_t)(uintptr_t)p, 0);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  t_busy = 0;
}

static void in_child(void) { __atomic_store_n(&g_child, 1, __ATOMIC_RELAXED); }

/* strobe__active's copy (probe.h, strobe__active_mirror): the idle path
 * compares this one, in this library, rather than load the library's
 * address first. Registering copies the flag as it is then, so a capture
 * started before the constructor ran is seen too. */
static uint32_t g_active;
static inline int active(void) {
#if defined(__x86_64__) && !defined(STROBE__TSAN)
  __asm__ goto("cmpl $0, %0\n\tjne %l[on]" : : "m"(g_active) : "cc" : on); /* one compare with memory */
  return 0;
on:
  return 1;
#else
  return __builtin_expect(__atomic_load_n(&g_active, __ATOMIC_RELAXED) != 0, 0);
#endif
}

__attribute__((constructor)) static void start(void) {
  (void)strobe__active_mirror(&g_active); /* the only mirror there is (of four allowed): it cannot be refused */
  pthread_atfork(NULL, NULL, in_child);
}

/* >>api: the C functions. Idle, each is the allocator's call behind one load
 * and a branch; recording, a free is recorded before the block goes back (so
 * no other thread can be handed the address first) and an allocation after. */
#define EXPORT __attribute__((visibility("default")))

/* The recording halves, out of line, so that the idle path is two tail calls' worth of code. */
__attribute__((noinline)) static void *malloc_recorded(size_t n) {
  void *p = REAL(malloc)(n);
  strobe__record_alloc(STROBE__POOL_MALLOC, p, n);
  return p;
}
__attribute__((noinline)) static void free_recorded(void *p) {
  strobe__record_free(STROBE__POOL_MALLOC, p);
  REAL(free)(p);
}
__attribute__((noinline)) static void *calloc_recorded(size_t k, size_t n) {
  void *p = REAL(calloc)(k, n);
  strobe__record_alloc(STROBE__POOL_MALLOC, p, k * n); /* k * n cannot overflow: calloc checked it */
  return p;
}

EXPORT void *malloc(size_t n) {
  if (active()) return malloc_recorded(n);
  return REAL(malloc)(n);
}

EXPORT void free(void *p) {
  if (active()) return free_recorded(p);
  REAL(free)(p);
}

EXPORT void *calloc(size_t k, size_t n) {
  if (active()) return calloc_recorded(k, n);
  return REAL(calloc)(k, n);
}

/* realloc: the old block's free, then the new block's allocation. When it
 * fails the old block stays: its allocation is recorded again, at its
 * usable size (the size asked for is not known here). */
EXPORT void *realloc(void *p, size_t n) {
  if (arena_holds(p)) {
    void *q = malloc(n);
    if (q) memcpy(q, p, arena_size(p) < n ? arena_size(p) : n);
    return q;
  }
  if (!active()) return REAL(realloc)(p, n);
  strobe__record_free(STROBE__POOL_MALLOC, p);
  void *q = REAL(realloc)(p, n);
  if (q)
    strobe__record_alloc(STROBE__POOL_MALLOC, q, n);
  else if (p && n && REAL(usable))
    strobe__record_alloc(STROBE__POOL_MALLOC, p, REAL(usable)(p));
  return q;
}

static void *aligned(size_t align, size_t n) {
  void *p = REAL(memalign)(align, n);
  if (active()) strobe__record_alloc(STROBE__POOL_MALLOC, p, n);
  return p;
}

EXPORT int posix_memalign(void **out, size_t align, size_t n) {
  if (align < sizeof(void *) || (align & (align - 1))) return EINVAL;
  void *p = aligned(align, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

EXPORT void *aligned_alloc(size_t align, size_t n) {
  if (!align || (align & (align - 1))) {
    errno = EINVAL;
    return NULL;
  }
  return aligned(align, n);
}

EXPORT void *memalign(size_t align, size_t n) { return aligned(align, n); }

EXPORT void *valloc(size_t n) { return aligned((size_t)sysconf(_SC_PAGESIZE), n); }

EXPORT void *pvalloc(size_t n) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (n > SIZE_MAX - page) {
    errno = ENOMEM;
    return NULL;
  }
  return aligned(page, n ? (n + page - 1) / page * page : page);
}
