/*
 * export.h — the exporters behind `strobe export` and the fast text writer
 * they share. Each exporter streams the capture: memory is bounded by sites,
 * threads and stack depth, never by events (speedscope additionally spools
 * each thread's events to a temporary file, because its format groups events
 * by thread and a capture interleaves threads).
 *
 * The writer (ob_*) formats numbers by hand into a 256 KiB buffer: the chrome
 * export writes one JSON object per scope, millions per second, and printf
 * would be most of its cost.
 */
#ifndef STROBE_CLI_EXPORT_H
#define STROBE_CLI_EXPORT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define OB_SIZE (256u << 10)
#define OB_SLACK 512u /* the most one unchecked ob_* sequence may write after ob_room */

typedef struct ob {
  FILE *f;
  size_t len;
  int failed; /* a write failed: the output is incomplete */
  char buf[OB_SIZE];
} ob;

void ob_flush(ob *o);
/* Makes room for n more bytes (n <= OB_SIZE). */
static inline void ob_room(ob *o, size_t n) {
  if (OB_SIZE - o->len < n) ob_flush(o);
}
static inline void ob_mem(ob *o, const void *p, size_t n) {
  if (n > OB_SIZE - o->len) {
    ob_flush(o);
    if (n > OB_SIZE) {
      if (fwrite(p, 1, n, o->f) != n) o->failed = 1;
      return;
    }
  }
  memcpy(o->buf + o->len, p, n);
  o->len += n;
}
static inline void ob_str(ob *o, const char *s) { ob_mem(o, s, strlen(s)); }
static inline void ob_ch(ob *o, char c) {
  ob_room(o, 1);
  o->buf[o->len++] = c;
}
/* Decimal integer; the caller has made room (ob_room) for 21 bytes. */
void ob_u64(ob *o, uint64_t v);
void ob_i64(ob *o, int64_t v);
/* v / 1000 with exactly three decimals ("12.345", "-0.001"): ns as us. */
void ob_milli(ob *o, int64_t v);
/* A double as JSON (shortest round-trip form, "null" when not finite). */
void ob_double(ob *o, double v);
/* A JSON string literal, escaped, with its quotes. */
void ob_json_str(ob *o, const char *s);

/* Nearest integer of a non-huge double (durations and times in ns). */
static inline int64_t round_i64(double v) { return (int64_t)(v < 0 ? v - 0.5 : v + 0.5); }

/* >>exporters: each reads the whole capture from in (opened by cli_open)
 * and writes to out. Return CLI_OK, or the exit code after a message. */
int export_chrome(cli_input *in, FILE *out);
/* Speedscope reads the capture more than once (see export_speedscope.c), so it
 * takes the path and options and opens the capture itself. */
int export_speedscope(const char *path, int quiet, FILE *out);
int export_folded(cli_input *in, FILE *out);
int export_csv(cli_input *in, FILE *out);

#endif
