/*
 * fix_crcs.h — shared by the capture fuzzers: rewrites the CRC of every whole
 * block of a mutated capture, so mutations get past the checksum and reach
 * the decoders behind it.
 */
#ifndef STROBE_FUZZ_FIX_CRCS_H
#define STROBE_FUZZ_FIX_CRCS_H

#include <stddef.h>
#include <stdint.h>

#include "format/codec.h"

/* Rewrites the CRC of every whole block after the header, in place.
 * Returns 1 when it changed one. */
static inline int fix_crcs(uint8_t *p, size_t n) {
  if (n < 16) return 0;
  uint32_t fields = (uint32_t)p[12] | (uint32_t)p[13] << 8 | (uint32_t)p[14] << 16 | (uint32_t)p[15] << 24;
  if (fields > n - 16) return 0;
  int changed = 0;
  for (size_t off = 16 + fields; n - off >= STROBE__BLOCK_HEADER;) {
    strobe__block_header h;
    strobe__block_header_decode(p + off, &h);
    if (h.stored_len > n - off - STROBE__BLOCK_HEADER) break;
    uint32_t crc = strobe__block_crc(p + off, p + off + STROBE__BLOCK_HEADER, h.stored_len);
    if (crc != h.crc) {
      h.crc = crc;
      strobe__block_header_encode(p + off, &h); /* also zeroes `reserved` */
      crc = strobe__block_crc(p + off, p + off + STROBE__BLOCK_HEADER, h.stored_len);
      h.crc = crc;
      strobe__block_header_encode(p + off, &h);
      changed = 1;
    }
    off += STROBE__BLOCK_HEADER + h.stored_len;
  }
  return changed;
}

#endif
