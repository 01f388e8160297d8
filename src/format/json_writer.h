/*
 * json_writer.h — a small streaming JSON writer into a growable buffer, for
 * reports and exports. Keys are the caller's static strings; string values
 * are escaped. Numbers are written with a fixed number of decimals so output
 * is stable and diffable.
 */
#ifndef STROBE_FORMAT_JSON_WRITER_H
#define STROBE_FORMAT_JSON_WRITER_H

#include <stdint.h>

#include "format/codec.h"

#define STROBE__JSON_MAX_DEPTH 32

typedef struct strobe__json {
  strobe__buf out;
  uint32_t depth;
  uint8_t has_items[STROBE__JSON_MAX_DEPTH];
} strobe__json;

/* `key` is NULL inside arrays and for the top-level value. */
void strobe__json_object(strobe__json *j, const char *key);
void strobe__json_array(strobe__json *j, const char *key);
void strobe__json_end(strobe__json *j); /* closes the innermost object or array */
void strobe__json_str(strobe__json *j, const char *key, const char *value); /* NULL value writes null */
void strobe__json_strn(strobe__json *j, const char *key, const char *value, size_t len);
void strobe__json_num(strobe__json *j, const char *key, double value, int decimals); /* non-finite writes null */
void strobe__json_int(strobe__json *j, const char *key, int64_t value);
void strobe__json_uint(strobe__json *j, const char *key, uint64_t value);
void strobe__json_bool(strobe__json *j, const char *key, int value);
void strobe__json_null(strobe__json *j, const char *key);

#endif
