/*
 * interpose_new.cpp — libstrobe_malloc's operator new and delete
 * (docs/memory.md §The interposer): every replaceable form (plain, array,
 * nothrow, sized, aligned), each taking its memory from the allocator
 * underneath and, while a capture records, recorded as an allocation or
 * free of pool "new". The C functions and the recording rules are
 * interpose.c's.
 *
 * Must never: record a block twice (new takes the allocator underneath
 * directly, not the interposed malloc), or return NULL from a throwing form
 * (it calls the new-handler, then throws std::bad_alloc, as the standard's).
 */
#include <cstddef>
#include <new>

#include "malloc/interpose.h"

namespace {

void *take(std::size_t n, std::size_t align) {
  if (n == 0) n = 1;
  for (;;) {
    void *p = align > alignof(std::max_align_t) ? strobe__real_memalign(align, n) : strobe__real_malloc(n);
    if (p) {
      if (strobe__is_active()) strobe__record_alloc(STROBE__POOL_NEW, p, n);
      return p;
    }
    std::new_handler h = std::get_new_handler();
    if (!h) return nullptr;
    h();
  }
}

void *take_or_throw(std::size_t n, std::size_t align) {
  void *p = take(n, align);
  if (!p) throw std::bad_alloc();
  return p;
}

void give(void *p) {
  if (!p) return;
  if (strobe__is_active()) strobe__record_free(STROBE__POOL_NEW, p);
  strobe__real_free(p);
}

}  // namespace

#define EXPORT __attribute__((visibility("default")))

EXPORT void *operator new(std::size_t n) { return take_or_throw(n, 0); }
EXPORT void *operator new[](std::size_t n) { return take_or_throw(n, 0); }
EXPORT void *operator new(std::size_t n, const std::nothrow_t &) noexcept { return take(n, 0); }
EXPORT void *operator new[](std::size_t n, const std::nothrow_t &) noexcept { return take(n, 0); }
EXPORT void *operator new(std::size_t n, std::align_val_t a) { return take_or_throw(n, static_cast<std::size_t>(a)); }
EXPORT void *operator new[](std::size_t n, std::align_val_t a) { return take_or_throw(n, static_cast<std::size_t>(a)); }
EXPORT void *operator new(std::size_t n, std::align_val_t a, const std::nothrow_t &) noexcept {
  return take(n, static_cast<std::size_t>(a));
}
EXPORT void *operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t &) noexcept {
  return take(n, static_cast<std::size_t>(a));
}

EXPORT void operator delete(void *p) noexcept { give(p); }
EXPORT void operator delete[](void *p) noexcept { give(p); }
EXPORT void operator delete(void *p, std::size_t) noexcept { give(p); }
EXPORT void operator delete[](void *p, std::size_t) noexcept { give(p); }
EXPORT void operator delete(void *p, const std::nothrow_t &) noexcept { give(p); }
EXPORT void operator delete[](void *p, const std::nothrow_t &) noexcept { give(p); }
EXPORT void operator delete(void *p, std::align_val_t) noexcept { give(p); }
EXPORT void operator delete[](void *p, std::align_val_t) noexcept { give(p); }
EXPORT void operator delete(void *p, std::size_t, std::align_val_t) noexcept { give(p); }
EXPORT void operator delete[](void *p, std::size_t, std::align_val_t) noexcept { give(p); }
EXPORT void operator delete(void *p, std::align_val_t, const std::nothrow_t &) noexcept { give(p); }
EXPORT void operator delete[](void *p, std::align_val_t, const std::nothrow_t &) noexcept { give(p); }
