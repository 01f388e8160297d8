/*
 * codec.h — the capture format's primitives (docs/capture-format.md):
 * varints, zigzag, strings, CRC-32C, block header layout, magic and tags.
 * Shared by the writer and the reader so the two cannot drift apart.
 */
#ifndef STROBE_FORMAT_CODEC_H
#define STROBE_FORMAT_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "strobe/capture.h"

#define STROBE__MAGIC "\x89STRB\r\n\x1a"
#define STROBE__MAGIC_LEN 8
#define STROBE__FORMAT_VERSION STROBE_CAPTURE_FORMAT_VERSION
/* Misuse counters a FOOTER before version 3 holds: the first ones of STROBE_MISUSE_MAP,
 * up to cumulative_overflow (docs/capture-format.md, Compatibility). */
#define STROBE__MISUSE_BEFORE_V3 6u
#define STROBE__BLOCK_HEADER 16
#define STROBE__MAX_BLOCK_RAW (64u << 20) /* 64 MiB: writers stay far below; readers reject more */
#define STROBE__MAX_STR 4096u
#define STROBE__MAX_READER_DEPTH 256u

enum {
  STROBE__TAG_CLOCK_SOURCE = 1,
  STROBE__TAG_CLOCK_INVARIANT = 2,
  STROBE__TAG_NS_PER_TICK = 3,
  STROBE__TAG_EPOCH_TICKS = 4,
  STROBE__TAG_EPOCH_MONO_NS = 5,
  STROBE__TAG_START_TICKS = 6,
  STROBE__TAG_OVERHEAD_NS = 7,
  STROBE__TAG_STROBE_VERSION = 8,
  STROBE__TAG_OS = 9,
  STROBE__TAG_ARCH = 10,
  STROBE__TAG_FEATURES = 11,
  STROBE__TAG_ASSERTIONS = 12,
  STROBE__TAG_PID = 13,
  STROBE__TAG_RING_EVENTS = 14,
  STROBE__TAG_FLUSH_MS = 15,
  STROBE__TAG_KIND = 16,
  STROBE__TAG_EVENT_COST_NS = 17,
  STROBE__TAG_OVERFLOW = 18,
  STROBE__TAG_RING_EVENTS_MAX = 19,
  STROBE__TAG_TREE_MAX_NODES = 24,    /* u32: nodes kept per UI-tree snapshot */
  STROBE__TAG_TREE_MAX_SNAPSHOTS = 25, /* u32: UI-tree snapshots kept per capture */
  STROBE__TAG_ATTACH_MAX_BYTES = 26,  /* u32: content bytes of one attachment (strobe/deep.h) */
  STROBE__TAG_DEEP_MAX_CALLS = 27,    /* u32: draw calls kept per deep capture */
  STROBE__TAG_BOOT_ID = 28,           /* string: the host's boot id, 32 hex digits (docs/sessions.md §Across processes) */
  STROBE__TAG_EPOCH_UNIX_NS = 30,     /* u64: CLOCK_REALTIME (Unix ns) at the epoch, as the writer read it */
  STROBE__TAG_JOURNAL_ID = 40,        /* u64: the crash journal beside the file (docs/capture-format.md §Journal) */
  STROBE__TAG_JOURNAL = 41,           /* string: "on", or why there is none */
  STROBE__TAG_EXPLICIT_COST_NS = 42   /* f64: the calibrated cost per scope written with STROBE_BEGIN/STROBE_END */
};

/* Block types (docs/capture-format.md, Blocks): the one table. A reader
 * skips a type not listed here; a new type is one line.
 * X(NAME, type): STROBE__BLK_<NAME> = type. */
#define STROBE__BLOCK_KINDS(X) \
  X(SITES, 1)                  \
  X(THREAD, 2)                 \
  X(EVENTS, 3)                 \
  X(THREAD_END, 4)             \
  X(CLOCK, 5)                  \
  X(LOST, 6)                   \
  X(FOOTER, 7)                 \
  X(OPS, 8)    /* operation events of one thread; readers before it skip the block */ \
  X(LABELS, 9) /* window ids and operation counter names, by id */ \
  X(DRAIN, 10) /* the drain's CPU time and events since the capture started; readers before it skip it */ \
  X(DEVICE, 11) /* clock-domain pairs, GPU spans and frame instants of one thread (docs/gpu.md) */ \
  X(SAMPLE_FUNCS, 12) /* the sampler's functions by id (docs/exploration.md §Sampling): application content */ \
  X(SAMPLES, 13) /* sampled call stacks and context switches of one OS thread; readers before it skip it */ \
  X(SAMPLER, 14) /* the sampler's rate and counts since the capture started; readers before it skip it */ \
  X(TREE, 18)  /* one UI-tree snapshot (strobe/tree.h): application content; readers before it skip it */ \
  X(TREE_TOTALS, 19) /* snapshots written and refused past the capture's bound; readers before it skip it */ \
  X(CALLS, 20) /* call tracing's cuts since the capture started (docs/exploration.md); readers before it skip it */ \
  X(ATTACH, 21) /* one attachment (strobe/deep.h): application content; readers before it skip it */ \
  X(DEEP, 22)   /* one deep capture's draw calls (strobe/deep.h): application content; readers before it skip it */ \
  X(CONTENT_TOTALS, 23) /* attachments stored, referenced, cut; deep captures written, refused */ \
  X(CLOCK_OFFSETS, 24) /* clock-offset samples against other hosts (docs/sessions.md §Across hosts) */ \
  X(MERGE, 25) /* a merged capture's inputs, how each was aligned, and the records not merged */ \
  X(ORIGIN, 26) /* a merged capture: the input the content blocks after it came from; readers before it skip it */ \
  X(RINGS, 27) /* rings grown and producers' waits for the drain since the capture started; readers before it skip it */ \
  X(JOURNAL_POS, 40) /* how far the file holds each journaled thread's events (docs/capture-format.md §Journal) */ \
  X(RECOVERY, 41) /* what `strobe recover` added from the journal after a crash */ \
  X(CRASH, 43) /* where the process died: signal, thread, open scopes and operation (docs/capture-format.md §CRASH) */

enum {
#define STROBE__BLK_ENUM(name, type) STROBE__BLK_##name = type,
  STROBE__BLOCK_KINDS(STROBE__BLK_ENUM)
#undef STROBE__BLK_ENUM
};

/* Whether this reader knows a block type (else it skips the block). */
static inline int strobe__block_known(uint32_t type) {
  switch (type) {
#define STROBE__BLK_KNOWN(name, type) case type:
    STROBE__BLOCK_KINDS(STROBE__BLK_KNOWN)
#undef STROBE__BLK_KNOWN
    return 1;
    default: return 0;
  }
}

enum { STROBE__CODEC_RAW = 0, STROBE__CODEC_ZSTD = 1 };

/* The low two bits of an ops entry of an EVENTS block (docs/capture-format.md,
 * EVENTS payload): the one table. X(NAME, code): STROBE__OP_<NAME> = code. */
#define STROBE__OP_CODES(X) \
  X(BEGIN, 0) /* varint(site << 2 | 0) */ \
  X(END, 1)   /* varint(1): closes the innermost scope */ \
  X(OTHER, 2) /* varint(kind << 2 | 2), then the kind's operands */
#define STROBE__OP_BITS 2u

enum {
#define STROBE__OP_ENUM(name, code) STROBE__OP_##name = code,
  STROBE__OP_CODES(STROBE__OP_ENUM)
#undef STROBE__OP_ENUM
};

/* How an EVENTS block encodes an event: the `operands` column of
 * STROBE__EVENT_KINDS (strobe/strobe.h). Slots are the event's payload
 * slots, in order. */
enum {
  STROBE__OPERANDS_NONE = 0,     /* not written (a PAYLOAD travels inside its event's operands) */
  STROBE__OPERANDS_BEGIN,        /* op BEGIN carrying the site */
  STROBE__OPERANDS_END,          /* op END alone */
  STROBE__OPERANDS_SITE_VARINTS, /* op OTHER, site:varint, then each slot as a varint */
  STROBE__OPERANDS_SITE_F64S,    /* op OTHER, site:varint, then each slot as 8 bytes (a double's bits) */
  STROBE__OPERANDS_LOST,         /* op OTHER, lost:varint (data), depth:varint (the kind word's high bits) */
  STROBE__OPERANDS_OPS,          /* not in EVENTS: an entry of the thread's OPS block (its sub-kind's layout) */
  STROBE__OPERANDS_UNWOUND,      /* op OTHER alone: closes the innermost scope like END, flagged unwound */
  STROBE__OPERANDS_DEVICE,       /* not in EVENTS: an entry of the thread's DEVICE block (its sub-kind's layout) */
  STROBE__OPERANDS_ELEMENT       /* op OTHER, type:varint (data), id as 8 bytes (the event's ts); no time of its own */
};

/* An event kind's operands (STROBE__OPERANDS_NONE for unknown kinds). */
static inline uint32_t strobe__ev_operands(uint32_t kind) {
  switch (kind) {
#define STROBE__EV_OPERANDS(name, number, slots, operands, record) \
  case number: return STROBE__OPERANDS_##operands;
    STROBE__EVENT_KINDS(STROBE__EV_OPERANDS)
#undef STROBE__EV_OPERANDS
    default: return STROBE__OPERANDS_NONE;
  }
}

/* Site kinds (STROBE_SITE_KINDS in strobe/strobe.h): the name of one
 * ("unknown" for numbers not in the table), whether it is a kind at all, and
 * whether its events are timed BEGIN/END scopes. */
static inline const char *strobe__site_kind_name(uint32_t kind) {
  switch (kind) {
#define STROBE__SITE_NAME(id, number, name, timed) \
  case number: return name;
    STROBE_SITE_KINDS(STROBE__SITE_NAME)
#undef STROBE__SITE_NAME
    default: return "unknown";
  }
}
static inline int strobe__site_kind_known(uint32_t kind) {
  switch (kind) {
#define STROBE__SITE_KNOWN(id, number, name, timed) case number:
    STROBE_SITE_KINDS(STROBE__SITE_KNOWN)
#undef STROBE__SITE_KNOWN
    return 1;
    default: return 0;
  }
}
static inline int strobe__site_timed(uint32_t kind) {
  switch (kind) {
#define STROBE__SITE_TIMED(id, number, name, timed) \
  case number: return timed;
    STROBE_SITE_KINDS(STROBE__SITE_TIMED)
#undef STROBE__SITE_TIMED
    default: return 0;
  }
}
/* One past the largest site kind number (the size of an array indexed by kind). */
#define STROBE__SITE_SLOT(id, number, name, timed) [number] = 0,
#define STROBE__SITE_KIND_LIMIT ((uint32_t)sizeof((const char[]){STROBE_SITE_KINDS(STROBE__SITE_SLOT)}))

/* A growable byte buffer. Functions report allocation failure through `failed`. */
typedef struct strobe__buf {
  uint8_t *data;
  size_t len, cap;
  int failed;
} strobe__buf;

void strobe__buf_free(strobe__buf *b);
int strobe__buf_reserve(strobe__buf *b, size_t extra);
int strobe__buf_grow(strobe__buf *b, size_t extra); /* the slow half of strobe__buf_reserve */

/* Inline: exports append small pieces millions of times. */
static inline void strobe__buf_put(strobe__buf *b, const void *p, size_t n) {
  if (n == 0 || (b->cap - b->len < n && strobe__buf_grow(b, n))) return;
  memcpy(b->data + b->len, p, n);
  b->len += n;
}

/* Inline: the capture writer calls this for every event on the drain thread. */
static inline void strobe__buf_varint(strobe__buf *b, uint64_t v) {
  if (b->cap - b->len < 10 && strobe__buf_grow(b, 10)) return;
  uint8_t *p = b->data + b->len;
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  b->len = (size_t)(p - b->data);
}
void strobe__buf_str(strobe__buf *b, const char *s); /* NULL writes an empty string */
void strobe__buf_u16(strobe__buf *b, uint16_t v);
void strobe__buf_u32(strobe__buf *b, uint32_t v);
/* Inline: every value, counter and gauge carries one. Little-endian. */
static inline void strobe__buf_u64(strobe__buf *b, uint64_t v) {
  uint8_t x[8];
  for (int i = 0; i < 8; i++) x[i] = (uint8_t)(v >> (8 * i));
  strobe__buf_put(b, x, 8);
}
void strobe__buf_f64(strobe__buf *b, double v);

/* Sign bit smeared without shifting a signed value (implementation-defined in C). */
static inline uint64_t strobe__zigzag(int64_t d) { return ((uint64_t)d << 1) ^ (0 - ((uint64_t)d >> 63)); }
static inline int64_t strobe__unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* A bounds-checked cursor over bytes. Any overrun sets `bad` and yields zeros. */
typedef struct strobe__cur {
  const uint8_t *p, *end;
  int bad;
} strobe__cur;

uint64_t strobe__cur_varint_slow(strobe__cur *c);
/* A varint into *v: 1, or 0 when it runs past the bytes or past 10 bytes
 * (`bad` then set, *v 0; an earlier failure is the caller's to have seen in
 * `bad`). Inline for the
 * common one- and two-byte cases (time deltas of a few thousand ticks take
 * two): readers decode a few per event. The rest goes through a copy of the
 * cursor, so a caller's cursor never has its address taken and stays in
 * registers in a decoding loop. */
static inline int strobe__cur_take_varint(strobe__cur *c, uint64_t *v) {
  if (c->end - c->p >= 2) {
    if (c->p[0] < 0x80) {
      *v = *c->p++;
      return 1;
    }
    if (c->p[1] < 0x80) {
      *v = (uint64_t)(c->p[0] & 0x7f) | (uint64_t)c->p[1] << 7;
      c->p += 2;
      return 1;
    }
  } else if (c->p < c->end && *c->p < 0x80) {
    *v = *c->p++;
    return 1;
  }
  strobe__cur slow = *c;
  *v = strobe__cur_varint_slow(&slow);
  *c = slow;
  return !slow.bad;
}
static inline uint64_t strobe__cur_varint(strobe__cur *c) {
  uint64_t v;
  (void)strobe__cur_take_varint(c, &v);
  return v;
}
uint16_t strobe__cur_u16(strobe__cur *c);
uint32_t strobe__cur_u32(strobe__cur *c);
uint64_t strobe__cur_u64(strobe__cur *c);
double strobe__cur_f64(strobe__cur *c);
/* A str: returns a pointer into the input and its length (not terminated). */
const uint8_t *strobe__cur_str(strobe__cur *c, size_t *len);
const uint8_t *strobe__cur_bytes(strobe__cur *c, size_t n);

/* CRC-32C (docs/capture-format.md, Blocks): `crc` the value so far (0 to
 * start), continued over n bytes. The SSE4.2 instruction where the CPU has
 * it, else tables; strobe__crc32c_tables is the tables alone (for tests). */
uint32_t strobe__crc32c(uint32_t crc, const void *data, size_t n);
uint32_t strobe__crc32c_tables(uint32_t crc, const void *data, size_t n);

/* Block header <-> bytes. */
typedef struct strobe__block_header {
  uint8_t type, codec;
  uint32_t stored_len, raw_len, crc;
} strobe__block_header;

void strobe__block_header_encode(uint8_t out[STROBE__BLOCK_HEADER], const strobe__block_header *h);
void strobe__block_header_decode(const uint8_t in[STROBE__BLOCK_HEADER], strobe__block_header *h);
/* CRC over the first 12 header bytes and the stored payload. */
uint32_t strobe__block_crc(const uint8_t header[STROBE__BLOCK_HEADER], const void *payload, size_t n);

#endif
