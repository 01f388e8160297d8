/*
 * producer_batch.c — parses the compact batch of POST /api/producer/spans
 * (producer_batch.h, docs/server.md §External producers) with jansson.
 *
 * Owns: nothing beyond one call. Must never: accept a batch with any bad
 * part (the caller writes a batch whole or not at all, so every check is
 * here, before anything is written), read past `len`, or keep state between
 * calls (the fuzzer runs it alone).
 */
#include "server/producer_batch.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int fail(char *why, size_t cap, int rc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (why && cap) vsnprintf(why, cap, fmt, ap);
  va_end(ap);
  return rc;
}

/* The lane rule of strobe_producer_lane_create (producer.h): 1-64 bytes of [A-Za-z0-9_./:-]. */
static int lane_ok(const char *s, size_t n) {
  if (n < 1 || n > STROBE_PRODUCER_LANE_NAME_MAX) return 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
          c == '/' || c == ':' || c == '-'))
      return 0;
  }
  return 1;
}

/* An array under `key` of 1..max entries; 0, or an error with why filled. */
static int array_of(json_t *root, const char *key, size_t max, json_t **out, char *why, size_t cap) {
  *out = json_object_get(root, key);
  if (!json_is_array(*out)) return fail(why, cap, STROBE_EINVAL, "`%s` must be an array", key);
  size_t n = json_array_size(*out);
  if (n == 0) return fail(why, cap, STROBE_EINVAL, "`%s` is empty", key);
  if (n > max) return fail(why, cap, STROBE_ELIMIT, "`%s` has %zu entries, at most %zu", key, n, max);
  return 0;
}

static int parse(json_t *root, strobe__batch *b, char *why, size_t cap) {
  if (!json_is_object(root)) return fail(why, cap, STROBE_EINVAL, "the body must be a JSON object");
  const char *key;
  json_t *v;
  json_object_foreach(root, key, v) {
    if (strcmp(key, "v") && strcmp(key, "clock") && strcmp(key, "lanes") && strcmp(key, "names") &&
        strcmp(key, "spans"))
      return fail(why, cap, STROBE_EINVAL, "unknown key `%.64s`", key);
  }
  v = json_object_get(root, "v");
  if (!json_is_integer(v)) return fail(why, cap, STROBE_EINVAL, "`v` (the format version, 1) is missing");
  if (json_integer_value(v) != STROBE__BATCH_VERSION)
    return fail(why, cap, STROBE_EVERSION, "batch version %lld; this server reads version 1",
                (long long)json_integer_value(v));
  v = json_object_get(root, "clock");
  if (v && (!json_is_string(v) || strcmp(json_string_value(v), "monotonic_ns")))
    return fail(why, cap, STROBE_EINVAL, "`clock` must be \"monotonic_ns\" (the host's CLOCK_MONOTONIC)");

  json_t *lanes, *names, *spans;
  int rc;
  if ((rc = array_of(root, "lanes", STROBE__BATCH_MAX_LANES, &lanes, why, cap)) ||
      (rc = array_of(root, "names", STROBE__BATCH_MAX_NAMES, &names, why, cap)) ||
      (rc = array_of(root, "spans", STROBE__BATCH_MAX_SPANS, &spans, why, cap)))
    return rc;
  size_t i;
  json_array_foreach(lanes, i, v) {
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);
    if (!s || !lane_ok(s, n))
      return fail(why, cap, STROBE_EINVAL, "lanes[%zu]: a lane name is 1-64 bytes of [A-Za-z0-9_./:-]", i);
    memcpy(b->lanes[i], s, n);
    b->lanes[i][n] = '\0';
  }
  b->n_lanes = (uint32_t)json_array_size(lanes);
  json_array_foreach(names, i, v) {
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);
    if (!s || n < 1 || n > STROBE__BATCH_NAME_MAX || memchr(s, '\0', n))
      return fail(why, cap, STROBE_EINVAL, "names[%zu]: a span name is 1-%d bytes of UTF-8 without NUL", i,
                  STROBE__BATCH_NAME_MAX);
    memcpy(b->names[i], s, n);
    b->names[i][n] = '\0';
    b->name_len[i] = (uint32_t)n;
  }
  b->n_names = (uint32_t)json_array_size(names);
  json_array_foreach(spans, i, v) {
    json_t *f[4];
    if (!json_is_array(v) || json_array_size(v) != 4)
      return fail(why, cap, STROBE_EINVAL, "spans[%zu]: a span is [lane, name, begin, end]", i);
    for (size_t k = 0; k < 4; k++) {
      f[k] = json_array_get(v, k);
      if (!json_is_integer(f[k]) || json_integer_value(f[k]) < 0)
        return fail(why, cap, STROBE_EINVAL, "spans[%zu][%zu]: not an integer >= 0", i, k);
    }
    strobe__batch_span *sp = &b->spans[i];
    json_int_t lane = json_integer_value(f[0]), name = json_integer_value(f[1]);
    if (lane >= (json_int_t)b->n_lanes) return fail(why, cap, STROBE_EINVAL, "spans[%zu]: no lane %lld", i, (long long)lane);
    if (name >= (json_int_t)b->n_names) return fail(why, cap, STROBE_EINVAL, "spans[%zu]: no name %lld", i, (long long)name);
    sp->lane = (uint32_t)lane;
    sp->name = (uint32_t)name;
    sp->begin = (uint64_t)json_integer_value(f[2]);
    sp->end = (uint64_t)json_integer_value(f[3]);
    if (!sp->begin) return fail(why, cap, STROBE_EINVAL, "spans[%zu]: begin is 0", i);
    if (sp->end < sp->begin) return fail(why, cap, STROBE_EINVAL, "spans[%zu]: end before begin", i);
  }
  b->n_spans = (uint32_t)json_array_size(spans);
  return 0;
}

int strobe__batch_parse(const char *body, size_t len, strobe__batch *out, char *why, size_t cap) {
  if (why && cap) why[0] = '\0';
  if (!out || (!body && len)) return fail(why, cap, STROBE_EINVAL, "no body");
  out->n_lanes = out->n_names = out->n_spans = 0;
  json_error_t e;
  json_t *root = json_loadb(body ? body : "", len, JSON_REJECT_DUPLICATES, &e);
  if (!root) return fail(why, cap, STROBE_EINVAL, "not JSON: %s (byte %d)", e.text, e.position);
  int rc = parse(root, out, why, cap);
  json_decref(root);
  if (rc) out->n_lanes = out->n_names = out->n_spans = 0;
  return rc;
}
