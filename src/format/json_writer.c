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

void strobe__json_num(strobe__json *j, const char *key, double value, int decimals) {
  if (!isfinite(value)) {
    strobe__json_null(j, key);
    return;
  }
  item(j, key);
  if (fabs(value) < 0.5 * pow(10.0, -decimals)) value = 0.0; /* never print "-0.000" */
  char tmp[64];
  int n = snprintf(tmp, sizeof tmp, "%.*f", decimals, value);
  strobe__buf_put(&j->out, tmp, (size_t)n);
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
