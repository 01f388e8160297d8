/*
 * codec.c — capture format primitives: byte buffers, varints, bounded
 * cursors, CRC-32C and block headers. No knowledge of what blocks mean.
 */
#include "format/codec.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

/* >>buf */
void strobe__buf_free(strobe__buf *b) {
  free(b->data);
  *b = (strobe__buf){0};
}

int strobe__buf_grow(strobe__buf *b, size_t extra) {
  if (b->failed) return -1;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra) cap *= 2;
  uint8_t *p = realloc(b->data, cap);
  if (!p) {
    b->failed = 1;
    return -1;
  }
  b->data = p;
  b->cap = cap;
  return 0;
}

int strobe__buf_reserve(strobe__buf *b, size_t extra) {
  if (b->failed) return -1;
  return b->len + extra <= b->cap ? 0 : strobe__buf_grow(b, extra);
}


void strobe__buf_str(strobe__buf *b, const char *s) {
  size_t n = s ? strlen(s) : 0;
  if (n > STROBE__MAX_STR) n = STROBE__MAX_STR;
  strobe__buf_varint(b, n);
  strobe__buf_put(b, s, n);
}

void strobe__buf_u16(strobe__buf *b, uint16_t v) {
  uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
  strobe__buf_put(b, x, 2);
}

void strobe__buf_u32(strobe__buf *b, uint32_t v) {
  uint8_t x[4];
  for (int i = 0; i < 4; i++) x[i] = (uint8_t)(v >> (8 * i));
  strobe__buf_put(b, x, 4);
}


void strobe__buf_f64(strobe__buf *b, double v) {
  uint64_t u;
  memcpy(&u, &v, 8);
  strobe__buf_u64(b, u);
}

/* >>cursor */
uint64_t strobe__cur_varint_slow(strobe__cur *c) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (c->p >= c->end) break;
    uint8_t byte = *c->p++;
    v |= (uint64_t)(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return v;
  }
  c->bad = 1;
  return 0;
}

const uint8_t *strobe__cur_bytes(strobe__cur *c, size_t n) {
  if (c->bad || (size_t)(c->end - c->p) < n) {
    c->bad = 1;
    return NULL;
  }
  const uint8_t *p = c->p;
  c->p += n;
  return p;
}

static uint64_t cur_le(strobe__cur *c, int n) {
  const uint8_t *p = strobe__cur_bytes(c, (size_t)n);
  uint64_t v = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (p) memcpy(&v, p, (size_t)n); /* the same bytes in the same order: one load (a value's 8 bytes per event) */
#else
  if (p)
    for (int i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
#endif
  return v;
}

uint16_t strobe__cur_u16(strobe__cur *c) { return (uint16_t)cur_le(c, 2); }
uint32_t strobe__cur_u32(strobe__cur *c) { return (uint32_t)cur_le(c, 4); }
uint64_t strobe__cur_u64(strobe__cur *c) { return cur_le(c, 8); }

double strobe__cur_f64(strobe__cur *c) {
  uint64_t u = cur_le(c, 8);
  double d;
  memcpy(&d, &u, 8);
  return d;
}

const uint8_t *strobe__cur_str(strobe__cur *c, size_t *len) {
  uint64_t n = strobe__cur_varint(c);
  if (n > STROBE__MAX_STR) {
    c->bad = 1;
    *len = 0;
    return NULL;
  }
  *len = (size_t)n;
  return strobe__cur_bytes(c, (size_t)n);
}

/* >>crc32c: reflected polynomial 0x82F63B78. Where the CPU has SSE4.2 its
 * crc32 instruction computes exactly this CRC, eight bytes an instruction;
 * elsewhere tables built on first use take eight bytes a step
 * (slicing-by-8): table k maps a byte to its CRC after k more zero bytes,
 * so one step folds eight bytes with eight lookups instead of eight
 * dependent ones. A block's CRC is part of the drain's cost per event
 * (docs/recording.md, Cost). */
static uint32_t g_crc_table[8][256];
static pthread_once_t g_crc_once = PTHREAD_ONCE_INIT;
#if defined(__x86_64__)
static int g_crc_hw; /* written once, under g_crc_once */
#endif

static void crc_init(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    g_crc_table[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (int k = 1; k < 8; k++)
      g_crc_table[k][i] = (g_crc_table[k - 1][i] >> 8) ^ g_crc_table[0][g_crc_table[k - 1][i] & 0xff];
#if defined(__x86_64__)
  g_crc_hw = __builtin_cpu_supports("sse4.2");
#endif
}

#if defined(__x86_64__)
/* `crc` is the running (inverted) value, as in the tables' loop. */
__attribute__((target("sse4.2"))) static uint32_t crc32c_sse42(uint32_t crc, const uint8_t *p, size_t n) {
  uint64_t c = crc;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t v;
    memcpy(&v, p, sizeof v);
    c = _mm_crc32_u64(c, v);
  }
  uint32_t c32 = (uint32_t)c;
  while (n--) c32 = _mm_crc32_u8(c32, *p++);
  return c32;
}
#endif

uint32_t strobe__crc32c(uint32_t crc, const void *data, size_t n) {
#if defined(__x86_64__)
  pthread_once(&g_crc_once, crc_init);
  if (g_crc_hw) return ~crc32c_sse42(~crc, data, n);
#endif
  return strobe__crc32c_tables(crc, data, n);
}

uint32_t strobe__crc32c_tables(uint32_t crc, const void *data, size_t n) {
  pthread_once(&g_crc_once, crc_init);
  const uint8_t *p = data;
  crc = ~crc;
  for (; n >= 8; n -= 8, p += 8) {
    uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
    crc = g_crc_table[7][lo & 0xff] ^ g_crc_table[6][(lo >> 8) & 0xff] ^ g_crc_table[5][(lo >> 16) & 0xff] ^
          g_crc_table[4][lo >> 24] ^ g_crc_table[3][p[4]] ^ g_crc_table[2][p[5]] ^ g_crc_table[1][p[6]] ^
          g_crc_table[0][p[7]];
  }
  while (n--) crc = g_crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return ~crc;
}

/* >>block header */
void strobe__block_header_encode(uint8_t out[STROBE__BLOCK_HEADER], const strobe__block_header *h) {
  out[0] = h->type;
  out[1] = h->codec;
  out[2] = out[3] = 0;
  for (int i = 0; i < 4; i++) {
    out[4 + i] = (uint8_t)(h->stored_len >> (8 * i));
    out[8 + i] = (uint8_t)(h->raw_len >> (8 * i));
    out[12 + i] = (uint8_t)(h->crc >> (8 * i));
  }
}

void strobe__block_header_decode(const uint8_t in[STROBE__BLOCK_HEADER], strobe__block_header *h) {
  h->type = in[0];
  h->codec = in[1];
  h->stored_len = h->raw_len = h->crc = 0;
  for (int i = 0; i < 4; i++) {
    h->stored_len |= (uint32_t)in[4 + i] << (8 * i);
    h->raw_len |= (uint32_t)in[8 + i] << (8 * i);
    h->crc |= (uint32_t)in[12 + i] << (8 * i);
  }
}

uint32_t strobe__block_crc(const uint8_t header[STROBE__BLOCK_HEADER], const void *payload, size_t n) {
  return strobe__crc32c(strobe__crc32c(0, header, 12), payload, n);
}
