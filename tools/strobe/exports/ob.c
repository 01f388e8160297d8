/*
 * ob.c — the exporters' output buffer (export.h): hand-written integer and
 * fixed-point formatting, JSON string escaping, and buffered writes to the
 * output FILE. A failed write marks the buffer failed and the exporter's
 * caller reports it (exit 3); nothing here prints.
 */
#include <math.h>
#include <stdlib.h>

#include "export.h"

void ob_flush(ob *o) {
  if (o->len && fwrite(o->buf, 1, o->len, o->f) != o->len) o->failed = 1;
  o->len = 0;
}

static const char g_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

void ob_u64(ob *o, uint64_t v) {
  char tmp[24];
  char *p = tmp + sizeof tmp;
  while (v >= 100) {
    unsigned r = (unsigned)(v % 100);
    v /= 100;
    p -= 2;
    memcpy(p, g_pairs + 2 * r, 2);
  }
  if (v >= 10) {
    p -= 2;
    memcpy(p, g_pairs + 2 * v, 2);
  } else {
    *--p = (char)('0' + v);
  }
  size_t n = (size_t)(tmp + sizeof tmp - p);
  memcpy(o->buf + o->len, p, n);
  o->len += n;
}

void ob_i64(ob *o, int64_t v) {
  if (v < 0) {
    o->buf[o->len++] = '-';
    ob_u64(o, (uint64_t)0 - (uint64_t)v);
  } else {
    ob_u64(o, (uint64_t)v);
  }
}

void ob_milli(ob *o, int64_t v) {
  uint64_t a;
  if (v < 0) {
    o->buf[o->len++] = '-';
    a = (uint64_t)0 - (uint64_t)v;
  } else {
    a = (uint64_t)v;
  }
  ob_u64(o, a / 1000);
  unsigned f = (unsigned)(a % 1000);
  char *p = o->buf + o->len;
  p[0] = '.';
  p[1] = (char)('0' + f / 100);
  memcpy(p + 2, g_pairs + 2 * (f % 100), 2);
  o->len += 4;
}

void ob_double(ob *o, double v) {
  ob_room(o, 32);
  if (!isfinite(v)) {
    memcpy(o->buf + o->len, "null", 4);
    o->len += 4;
    return;
  }
  if (v == floor(v) && fabs(v) < 9e15) {
    ob_i64(o, (int64_t)v);
    return;
  }
  /* Shortest of 15 or 17 significant digits that reads back exactly. */
  char *p = o->buf + o->len;
  int n = snprintf(p, 32, "%.15g", v);
  if (strtod(p, NULL) != v) n = snprintf(p, 32, "%.17g", v);
  o->len += (size_t)n;
}

void ob_json_str(ob *o, const char *s) {
  ob_ch(o, '"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    ob_room(o, 8);
    if (c == '"' || c == '\\') {
      o->buf[o->len++] = '\\';
      o->buf[o->len++] = (char)c;
    } else if (c < 0x20) {
      o->len += (size_t)snprintf(o->buf + o->len, 8, "\\u%04x", c);
    } else {
      o->buf[o->len++] = (char)c;
    }
  }
  ob_ch(o, '"');
}
