/*
 * batch_check.h — strobe_capture_next_batch against strobe_capture_next
 * (include/strobe/capture.h) on the same bytes, for the reader's tests and
 * its fuzz target: the same records in the same order, every field the same
 * (pointers compared as present or not: each capture owns its own), the
 * same final code, sticky, and the same totals; a batch at most
 * STROBE_CAPTURE_BATCH_MAX long, any record but an event's its last.
 * Returns 0 when all holds, else a line number of this file (the first
 * difference), so a test reports it and a fuzz target aborts. Must never
 * judge what the records say: the reader's own tests do.
 */
#ifndef STROBE_TESTS_BATCH_CHECK_H
#define STROBE_TESTS_BATCH_CHECK_H

#include <stddef.h>
#include <string.h>

#include "strobe/capture.h"

static inline int batch_same_f64(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* 1 when a and b are the same record (read from two captures of the same bytes). */
static inline int batch_same_record(const strobe_capture_record *a, const strobe_capture_record *b) {
  return a->type == b->type && a->thread == b->thread && a->site == b->site && a->depth == b->depth &&
         a->ticks == b->ticks && batch_same_f64(a->time_ns, b->time_ns) &&
         batch_same_f64(a->duration_ns, b->duration_ns) && batch_same_f64(a->self_ns, b->self_ns) &&
         batch_same_f64(a->value, b->value) && a->count == b->count && batch_same_f64(a->total_ns, b->total_ns) &&
         batch_same_f64(a->min_ns, b->min_ns) && batch_same_f64(a->max_ns, b->max_ns) && a->lost == b->lost &&
         a->unwound == b->unwound && a->element == b->element && a->address == b->address && a->bytes == b->bytes &&
         !a->op == !b->op && !a->device == !b->device &&
         !a->tree == !b->tree && !a->sample == !b->sample && !a->attachment == !b->attachment && !a->deep == !b->deep;
}

/* The records an EVENTS block yields, which a batch may hold several of. */
static inline int batch_event_record(strobe_capture_record_type t) {
  return (t >= STROBE_REC_BEGIN && t <= STROBE_REC_LOST) || t == STROBE_REC_ELEMENT || t == STROBE_REC_ALLOC ||
         t == STROBE_REC_FREE || t == STROBE_REC_MESSAGE;
}

/* Reads data both ways; 0 when they agree, else the line of the first difference. *records: how many were read. */
static inline int batch_check(const void *data, size_t len, size_t *records) {
  strobe_capture *one = NULL, *many = NULL;
  *records = 0;
  int ro = strobe_capture_open_memory(data, len, &one), rm = strobe_capture_open_memory(data, len, &many);
  int bad = ro != rm ? __LINE__ : 0;
  for (int n = 1; !bad && !ro && n > 0;) {
    const strobe_capture_record *recs = NULL;
    n = strobe_capture_next_batch(many, &recs);
    if (n > STROBE_CAPTURE_BATCH_MAX || (n > 0) != (recs != NULL)) bad = __LINE__;
    strobe_capture_record r;
    for (int i = 0; i < n && !bad; i++) {
      if (strobe_capture_next(one, &r) != 1 || !batch_same_record(&r, &recs[i])) bad = __LINE__;
      else if (i < n - 1 && !batch_event_record(recs[i].type)) bad = __LINE__; /* only events before the last */
      ++*records;
    }
    if (!bad && n <= 0) {
      if (strobe_capture_next(one, &r) != n || strobe_capture_next_batch(many, &recs) != n || recs) bad = __LINE__;
      strobe_capture_totals a = strobe_capture_query_totals(one), b = strobe_capture_query_totals(many);
      if (a.events != b.events || a.scopes != b.scopes || a.unwound != b.unwound || a.orphan_ends != b.orphan_ends ||
          a.unfinished != b.unfinished || a.lost_scopes != b.lost_scopes || a.end_ticks != b.end_ticks ||
          a.blocks != b.blocks || a.cut_short != b.cut_short || a.footer != b.footer || a.lost != b.lost)
        bad = __LINE__;
      for (uint32_t i = 0; i < strobe_capture_query_thread_count(one) && !bad; i++) {
        const strobe_capture_thread *x = strobe_capture_query_thread(one, i), *y = strobe_capture_query_thread(many, i);
        if (!x != !y || (x && (x->events != y->events || x->lost != y->lost || x->ended != y->ended))) bad = __LINE__;
      }
    }
  }
  strobe_capture_close(one);
  strobe_capture_close(many);
  return bad;
}

#endif
