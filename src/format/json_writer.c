/*
 * json_writer.c — streaming JSON output (see json_writer.h). Escapes every
 * control character and the two JSON specials; passes valid UTF-8 through.
 */
#include "format/json_writer.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { HAS_ITEMS = 1, IS_ARRAY = 2 };

static void put_string(strobe__json *j, const char *s, size_t n) {
  strobe__buf_put(&j->out, "\"", 1);
  size_t run = 0; /* unescaped bytes waiting to be copied */
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch != '"' && ch != '\\' && ch >= 0x20) {
      run++;
      continue;
    }
    strobe__buf_put(&j->out, s + i - run, run);
    run = 0;
    char e[8];
    if (ch == '"' || ch == '\\') {
      e[0] = '\\';
      e[1] = (char)ch;
      strobe__buf_put(&j->out, e, 2);
    } else {
      snprintf(e, sizeof e, "\\u%04x", ch);
      strobe__buf_put(&j->out, e, 6);
    }
  }
  strobe__buf_put(&j->out, s + n - run, run);
  strobe__buf_put(&j->out, "\"", 1);
}

/* Comma before every item but the first of its container, then the key. */
static void item(strobe__json *j, const char *key) {
  if (j->depth > 0 && j->depth <= STROBE__JSON_MAX_DEPTH) {
    uint8_t *f = &j->has_items[j->depth - 1];
    if (*f & HAS_ITEMS) strobe__buf_put(&j->out, ",", 1);
    *f |= HAS_ITEMS;
  }
  if (key) {
    put_string(j, key, strlen(key));
    strobe__buf_put(&j->out, ":", 1);
  }
}

static void open_container(strobe__json *j, const char *key, uint8_t kind) {
  item(j, key);
  strobe__buf_put(&j->out, kind == IS_ARRAY ? "[" : "{", 1);
  if (j->depth < STROBE__JSON_MAX_DEPTH) j->has_items[j->depth] = kind;
  j->depth++;
}

void strobe__json_object(strobe__json *j, const char *key) { open_container(j, key, 0); }
void strobe__json_array(strobe__json *j, const char *key) { open_container(j, key, IS_ARRAY); }

void strobe__json_end(strobe__json *j) {
  if (j->depth == 0) return;
  j->depth--;
  int array = j->depth < STROBE__JSON_MAX_DEPTH && (j->has_items[j->depth] & IS_ARRAY);
  strobe__buf_put(&j->out, array ? "]" : "}", 1);
}

void strobe__json_strn(strobe__json *j, const char *key, const char *value, size_t len) {
  item(j, key);
  put_string(j, value, len);
}

void strobe__json_str(strobe__json *j, const char *key, const char *value) {
  if (!value) {
    strobe__json_null(j, key);
    return;
  }
  strobe__json_strn(j, key, value, strlen(value));
}

/* Fixed-point formatting by hand: reports write tens of thousands of numbers,
 * and snprintf("%.*f") was most of an export's time. Values too large for
 * the integer path fall back to snprintf. */
void strobe__json_num(strobe__json *j, const char *key, double value, int decimals) {
  static const double scale[] = {1, 10, 100, 1000, 10000, 100000, 1000000};
  if (!isfinite(value)) {
    strobe__json_null(j, key);
    return;
  }
  item(j, key);
  if (decimals < 0) decimals = 0;
  if (decimals > 6) decimals = 6;
  double scaled = value * scale[decimals];
  char tmp[64];
  if (fabs(scaled) >= 9e15) {
    int n = snprintf(tmp, sizeof tmp, "%.*f", decimals, value);
    strobe__buf_put(&j->out, tmp, (size_t)n);
    return;
  }
  int64_t q = (int64_t)(scaled < 0 ? scaled - 0.5 : scaled + 0.5);
  int neg = q < 0; /* a value that rounds to zero prints as 0, never -0.000 */
  uint64_t u = neg ? (uint64_t)-q : (uint64_t)q;
  char *p = tmp + sizeof tmp;
  for (int d = 0; d < decimals; d++) {
    *--p = (char)('0' + u % 10);
    u /= 10;
  }
  if (decimals) *--p = '.';
  do {
    *--p = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (neg) *--p = '-';
  strobe__buf_put(&j->out, p, (size_t)(tmp + sizeof tmp - p));
}

void strobe__json_int(strobe__json *j, const char *key, int64_t value) {
  item(j, key);
  char tmp[32];
  int n = snprintf(tmp, sizeof tmp, "%" PRId64, value);
  strobe__buf_put(&j->out, tmp, (size_t)n);
}

void strobe__json_uint(strobe__json *j, const char *key, uint64_t value) {
  item(j, key);
  char tmp[32];
  int n = snprintf(tmp, sizeof tmp, "%" PRIu64, value);
  strobe__buf_put(&j->out, tmp, (size_t)n);
}

void strobe__json_bool(strobe__json *j, const char *key, int value) {
  item(j, key);
  strobe__buf_put(&j->out, value ? "true" : "false", value ? 4 : 5);
}

void strobe__json_null(strobe__json *j, const char *key) {
  item(j, key);
  strobe__buf_put(&j->out, "null", 4);
}
