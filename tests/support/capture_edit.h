/*
 * capture_edit.h — rewrites a capture file block by block for tests that
 * need a capture missing something (docs/capture-format.md): copies the
 * header and every whole block, leaving out the ATTACH blocks of one
 * resource id. Owns nothing; never changes a block it keeps.
 */
#ifndef STROBE_TEST_CAPTURE_EDIT_H
#define STROBE_TEST_CAPTURE_EDIT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "format/codec.h"

/* Copies `in` to `out` without the ATTACH blocks of `resource`. Returns the
 * blocks left out, or -1 when a file cannot be read or written. */
static inline int ce_drop_resource(const char *in, const char *out, uint64_t resource) {
  FILE *f = fopen(in, "rb");
  if (!f) return -1;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc((size_t)n + 1);
  if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
    fclose(f);
    free(b);
    return -1;
  }
  fclose(f);
  FILE *o = fopen(out, "wb");
  if (!o) {
    free(b);
    return -1;
  }
  /* magic, version u32, fields_len u32, fields */
  size_t p = STROBE__MAGIC_LEN + 4;
  uint32_t fields = (uint32_t)b[p] | (uint32_t)b[p + 1] << 8 | (uint32_t)b[p + 2] << 16 | (uint32_t)b[p + 3] << 24;
  p += 4 + fields;
  fwrite(b, 1, p, o);
  int dropped = 0;
  while (p + STROBE__BLOCK_HEADER <= (size_t)n) {
    strobe__block_header h;
    strobe__block_header_decode(b + p, &h);
    size_t whole = STROBE__BLOCK_HEADER + h.stored_len;
    if (p + whole > (size_t)n) break;
    int drop = 0;
    if (h.type == STROBE__BLK_ATTACH) {
      const uint8_t *payload = b + p + STROBE__BLOCK_HEADER;
      uint8_t *raw = NULL;
      if (h.codec == STROBE__CODEC_ZSTD) {
        raw = malloc(h.raw_len ? h.raw_len : 1);
        if (raw && ZSTD_isError(ZSTD_decompress(raw, h.raw_len, payload, h.stored_len))) {
          free(raw);
          raw = NULL;
        }
        payload = raw;
      }
      if (payload) {
        strobe__cur c = {payload, payload + h.raw_len, 0};
        (void)strobe__cur_varint(&c); /* frame */
        drop = strobe__cur_varint(&c) == resource && !c.bad;
      }
      free(raw);
    }
    if (drop)
      dropped++;
    else
      fwrite(b + p, 1, whole, o);
    p += whole;
  }
  free(b);
  return fclose(o) == 0 ? dropped : -1;
}

#endif
