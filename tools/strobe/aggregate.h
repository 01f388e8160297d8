/*
 * aggregate.h — per-site statistics over one pass of a capture, shared by
 * report, diff, compare and the CSV export; and the frame tracker (slowest
 * frames, frame rate) that report uses.
 *
 * Memory is bounded by sites and threads, never by events: each scope site
 * keeps at most AGG_RESERVOIR durations, a uniform random sample (reservoir
 * sampling, fixed seed, so the same file always gives the same figures) once
 * it has more scopes than that. Percentiles then say so through n_sample
 * versus count; max and min are exact, over every scope.
 */
#ifndef STROBE_CLI_AGGREGATE_H
#define STROBE_CLI_AGGREGATE_H

#include <stdint.h>

#include "analyze/percentile.h"
#include "strobe/capture.h"

#define AGG_RESERVOIR 4096u /* durations kept per site: 32 KiB; p99 over 4096 has ~41 samples above it */

typedef struct agg_site {
  uint64_t count;       /* scope sites: completed scopes; others: events */
  double total_ns;      /* scopes: inclusive durations summed; counters: sum of deltas */
  double self_ns;       /* scopes: duration minus direct children's */
  double min_ns, max_ns;/* scopes: exact over every scope */
  double shift, sumsq;  /* scopes: the first duration, and the sum of (duration - shift)^2 (ns^2):
                           shifted sums keep the variance exact when it is small next to the mean */
  double *sample;       /* scopes: reservoir of durations, n_sample <= AGG_RESERVOIR */
  uint32_t n_sample, cap_sample;
  double last, vmin, vmax; /* gauges and values: last, lowest, highest number */
  uint64_t iterations;     /* cumulative: loop iterations over all entries */
  double loop_min, loop_max; /* cumulative: fastest/slowest iteration, ns */
  int included;            /* passes the --name filter */
} agg_site;

typedef struct agg_filter {
  const char *thread;   /* NULL: every thread; all digits: a thread index; else a thread name */
  const char *name;     /* NULL, or a substring every reported site name must contain */
  int has_range;        /* --from/--to given */
  double from_ns, to_ns;/* since the capture start; scopes must lie wholly inside */
} agg_filter;

/* >>frames: a frame is the interval between consecutive FRAME marks on a
 * thread; when the capture has no marks, each top-level scope is one. */
typedef struct frame_entry {
  double dur_ns, start_ns; /* start since the epoch */
  uint32_t thread;
  uint64_t number;         /* 1-based frame number on its thread */
} frame_entry;

typedef struct frame_heap { /* the top_n slowest, as a min-heap on dur_ns */
  frame_entry *e;
  uint32_t n;
} frame_heap;

typedef struct frame_thread {
  uint64_t marks, tops;            /* FRAME marks seen; top-level scopes completed */
  double first_mark, last_mark;    /* ns since the epoch */
  double first_top, last_top;      /* begin of the first and last top-level scope */
} frame_thread;

typedef struct frames {
  uint32_t top_n;             /* slowest frames kept, 1..1000 */
  frame_heap by_mark, by_top; /* both are tracked; which one counts is known at the end */
  frame_thread *t;
  uint32_t n_threads;
  int failed;                 /* out of memory */
} frames;

int frames_init(frames *f, uint32_t top_n);
void frames_free(frames *f);
void frames_mark(frames *f, uint32_t thread, double t_ns);
void frames_top(frames *f, uint32_t thread, double begin_ns, double dur_ns);
/* 1 when any thread had at least two FRAME marks (so marks define frames). */
int frames_use_marks(const frames *f);
/* The slowest frames of the chosen kind, slowest first (sorts the heap in place). */
const frame_entry *frames_slowest(frames *f, uint32_t *n);

/* >>aggregate */
typedef struct agg {
  agg_filter filter;
  double start_ns;        /* capture start since the epoch: the origin of --from/--to */
  agg_site *sites;        /* indexed by site id */
  uint32_t n_sites;
  uint8_t *thread_in;     /* per thread index: 1 when it passes --thread */
  uint32_t n_threads;
  int thread_matched;     /* some thread passed --thread */
  uint64_t rng;           /* reservoir sampling, fixed seed */
  frames fr;
  int track_frames;
  int failed;             /* out of memory: figures are incomplete */
} agg;

int agg_init(agg *a, const strobe_capture *c, const agg_filter *filter, uint32_t top_frames);
void agg_free(agg *a);
void agg_record(agg *a, const strobe_capture *c, const strobe_capture_record *r);
/* Population standard deviation of one scope site's durations, ns. */
double agg_stddev(const agg_site *s);
/* Percentiles of one scope site (sorts its sample in place). */
strobe__dist agg_dist(agg_site *s);
/* Scope site ids with count > 0 that pass the filter, sorted by total
 * descending; *n gets their number. Caller frees. */
uint32_t *agg_sorted_scopes(const agg *a, const strobe_capture *c, uint32_t *n);

/* Runs a whole capture through an aggregate (opened by cli_open): the
 * read loop shared by report, diff, compare and csv. */
struct cli_input;
void agg_read_all(agg *a, struct cli_input *in);

/* >>pairs (pairs.c): scope sites of two captures matched by name, file and
 * line, for diff and compare. A site present in one capture only (or with no
 * completed scope in the other) has NULL on the other side. */
typedef struct site_pair {
  const strobe_capture_site *a, *b; /* site metadata; NULL where absent */
  agg_site *sa, *sb;                /* statistics; NULL where absent */
  strobe__dist da, db;              /* percentiles (zero where absent) */
} site_pair;

/* Opens and reads one capture into a fresh aggregate (cmd_diff.c), for diff
 * and compare. Returns CLI_OK with *read_status set by cli_finish_read, or
 * the exit code of a failed open (after a message). */
int diff_load(const char *cmd, const char *path, int quiet, struct cli_input *in, agg *a, int *read_status);

/* Pairs every scope site with a completed scope in either aggregate.
 * Returns the number of pairs (*out to be freed), or -1 out of memory. */
long pair_sites(agg *a, const strobe_capture *ca, agg *b, const strobe_capture *cb, site_pair **out);

#endif
