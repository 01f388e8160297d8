/*
 * producer_batch.h — the parser of POST /api/producer/spans's body, the
 * compact batch a process in another language sends to add its spans to a
 * live capture (docs/server.md §External producers). Pure: it touches no
 * global state, so the fuzzer (fuzz/fuzz_producer_batch.c) drives it alone.
 *
 * A batch is one JSON object, every key required but `clock`, no other key:
 *   {"v": 1, "clock": "monotonic_ns", "lanes": ["audio"], "names": ["mix", "decode"],
 *    "spans": [[lane, name, begin, end], ...]}
 * lane and name index `lanes` and `names`; begin and end are CLOCK_MONOTONIC
 * nanoseconds of the server's host (integers, 1 <= begin <= end).
 */
#ifndef STROBE_SERVER_PRODUCER_BATCH_H
#define STROBE_SERVER_PRODUCER_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "strobe/producer.h"

#define STROBE__BATCH_VERSION 1
#define STROBE__BATCH_MAX_LANES 16     /* lanes one batch names (the process holds STROBE_MAX_PRODUCER_LANES) */
#define STROBE__BATCH_MAX_NAMES 256    /* distinct span names one batch names */
#define STROBE__BATCH_NAME_MAX 128     /* bytes of a span name (UTF-8, no NUL) */
#define STROBE__BATCH_MAX_SPANS STROBE_PRODUCER_BATCH_MAX

typedef struct strobe__batch_span {
  uint32_t lane, name;   /* indices into the batch's lanes and names */
  uint64_t begin, end;   /* CLOCK_MONOTONIC ns, 1 <= begin <= end */
} strobe__batch_span;

typedef struct strobe__batch {
  uint32_t n_lanes, n_names, n_spans;
  char lanes[STROBE__BATCH_MAX_LANES][STROBE_PRODUCER_LANE_NAME_MAX + 1];  /* each follows the lane rule */
  char names[STROBE__BATCH_MAX_NAMES][STROBE__BATCH_NAME_MAX + 1];
  uint32_t name_len[STROBE__BATCH_MAX_NAMES];                     /* bytes, 1..STROBE__BATCH_NAME_MAX */
  strobe__batch_span spans[STROBE__BATCH_MAX_SPANS];
} strobe__batch;

/* Parses `len` bytes of `body` into *out (about 136 KiB: allocate it).
 * Returns 0; STROBE_EINVAL for a malformed batch (not JSON, a missing,
 * unknown or mistyped key, an index out of range, a name breaking its rule,
 * a span ending before it begins), STROBE_ELIMIT for one past a count
 * limit (lanes, names, spans per batch), or STROBE_EVERSION for a `v` other
 * than 1: then `why` (cap bytes) says what and where ("spans[3]: end before
 * begin") and *out is unspecified. */
int strobe__batch_parse(const char *body, size_t len, strobe__batch *out, char *why, size_t cap);

#endif
