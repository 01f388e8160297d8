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

#define STROBE__MAGIC "\x89STRB\r\n\x1a"
#define STROBE__MAGIC_LEN 8
#define STROBE__FORMAT_VERSION 1u
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
  STROBE__TAG_KIND = 16
};

enum {
  STROBE__BLK_SITES = 1,
  STROBE__BLK_THREAD = 2,
  STROBE__BLK_EVENTS = 3,
  STROBE__BLK_THREAD_END = 4,
  STROBE__BLK_CLOCK = 5,
  STROBE__BLK_LOST = 6,
  STROBE__BLK_FOOTER = 7,
  STROBE__BLK_OPS = 8,   /* operation events of one thread; readers before it skip the block */
  STROBE__BLK_LABELS = 9 /* window ids and operation counter names, by id */
};

enum { STROBE__CODEC_RAW = 0, STROBE__CODEC_ZSTD = 1 };

/* ops entries of an EVENTS block */
#define STROBE__OP_BEGIN 0u
#define STROBE__OP_END 1u
#define STROBE__OP_OTHER 2u

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
void strobe__buf_u64(strobe__buf *b, uint64_t v);
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
/* Inline for the common one-byte case: readers decode a few per event. */
static inline uint64_t strobe__cur_varint(strobe__cur *c) {
  if (c->p < c->end && *c->p < 0x80) return *c->p++;
  return strobe__cur_varint_slow(c);
}
uint16_t strobe__cur_u16(strobe__cur *c);
uint32_t strobe__cur_u32(strobe__cur *c);
uint64_t strobe__cur_u64(strobe__cur *c);
double strobe__cur_f64(strobe__cur *c);
/* A str: returns a pointer into the input and its length (not terminated). */
const uint8_t *strobe__cur_str(strobe__cur *c, size_t *len);
const uint8_t *strobe__cur_bytes(strobe__cur *c, size_t n);

uint32_t strobe__crc32c(uint32_t crc, const void *data, size_t n);

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
