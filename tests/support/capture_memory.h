/*
 * capture_memory.h — what tests that write captures through the library's own
 * writer (format/capture_writer.h) share: a sink into the codec's growable
 * buffer, and a double's bits as an event payload. Owns nothing else; never
 * reads captures.
 */
#ifndef STROBE_TEST_CAPTURE_MEMORY_H
#define STROBE_TEST_CAPTURE_MEMORY_H

#include <stdint.h>
#include <string.h>

#include "format/codec.h"
#include "strobe/strobe.h"

/* A strobe__writer_desc sink: appends to the strobe__buf given as ctx. */
static inline int cm_sink(void *ctx, const void *data, size_t len) {
  strobe__buf *b = ctx;
  strobe__buf_put(b, data, len);
  return b->failed ? STROBE_ENOMEM : 0;
}

/* A double as the 64-bit payload of a VALUE or GPU event. */
static inline uint64_t cm_f64_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

#endif
