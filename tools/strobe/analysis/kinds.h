/*
 * kinds.h — counters and gauges by kind, per frame, for `strobe report`
 * (docs/recording.md §Counters and gauges by kind): a family is the counter
 * or gauge sites sharing a name whose category is their kind label. Each
 * kind is summarised over the frames of the capture's busiest frame series
 * (the series `strobe report` computes its frame rates from): per frame the
 * mean and the max, and which frame held the max.
 *
 * Records of different threads arrive out of time order, so the frames are
 * known only once the whole capture was read: the capture is read a second
 * time (a file only, never standard input), keeping one running sum per
 * kind and thread. Memory is bounded by sites and threads, never by events.
 * A kind counted by two threads in one frame gets one per-frame sum per
 * thread (the max is then the larger of them; the mean is exact).
 */
#ifndef STROBE_CLI_KINDS_H
#define STROBE_CLI_KINDS_H

#include <stdint.h>

#include "aggregate.h"

typedef struct kind_row {
  uint32_t site;           /* the site of this (family, kind) */
  uint64_t events;         /* counter deltas or gauge samples inside the frames */
  uint64_t outside;        /* events before the first frame began or after the last ended: in no frame */
  double total;            /* counters: deltas summed; gauges: levels summed (for the mean) */
  double max;              /* counters: the largest per-frame sum; gauges: the highest level */
  uint64_t max_frame;      /* 0-based frame index of the max */
  uint64_t frames_with;    /* counters: frames (per thread) that counted it at all */
} kind_row;

typedef struct kind_bucket { /* a running per-frame sum of one kind on one thread */
  uint32_t row, thread;
  int64_t frame;           /* -1: none yet */
  double sum;
} kind_bucket;

typedef struct kinds {
  int available;           /* 1: rows hold per-frame figures; else `why` says why not */
  const char *why;
  int source;              /* STROBE_FRAME_SOURCE_* of the capture (strobe/frames.h) */
  uint32_t key;            /* the series (strobe_frames_query_series): a window's passes or a thread's marks */
  double *starts;          /* the series' frame starts, ascending; frames are [starts[i], starts[i+1]) */
  uint64_t n_starts;       /* frames: n_starts - 1 */
  kind_row *rows;
  uint32_t n_rows;
  uint32_t *row_of;        /* site id -> row + 1, 0: not a kind */
  uint32_t n_row_of;
  kind_bucket *b;
  uint32_t nb, cap_b;
  int failed;              /* out of memory */
} kinds;

/* 1 when the site is one kind of a family: a counter or gauge with a category. */
int kinds_site_is_kind(const strobe_capture_site *s);
/* After the first read (a->fx finished): reads `path` again and fills k.
 * Returns CLI_OK (k->available may still be 0, with k->why) or the exit code
 * of a second read that failed (after a message). */
struct cli_input;
int kinds_collect(kinds *k, agg *a, const strobe_capture *c, const char *path, int is_stdin);
void kinds_free(kinds *k);
/* Frames in the series (0 when none). */
static inline uint64_t kinds_frames(const kinds *k) { return k->n_starts > 1 ? k->n_starts - 1 : 0; }

#endif
