/*
 * mix.h — one 64-bit mixer (splitmix64's finalizer over a running hash)
 * for identifiers derived from others: deterministic, well mixed, the same
 * everywhere it is used (the server's OTLP push and the `strobe export
 * --format otlp` trace and span ids, docs/otel.md). Header only, no state.
 *
 * Must never: stand in for a random identifier (host.h gives those) or be
 * changed: ids already exported would no longer match ids derived again.
 */
#ifndef STROBE_PLATFORM_MIX_H
#define STROBE_PLATFORM_MIX_H

#include <stdint.h>

/* h with v mixed in. */
static inline uint64_t strobe__mix64(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

#endif
