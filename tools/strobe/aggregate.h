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

#include "analyze/gpu_frames.h"
#include "analyze/percentile.h"
#include "analyze/samples.h"
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
  uint64_t unwound;        /* scopes: closed as unwound (docs/recording.md, Unwinding): counted, never a duration */
} agg_site;

typedef struct agg_filter {
  const char *thread;   /* NULL: every thread; all digits: a thread index; else a thread name */
  const char *name;     /* NULL, or a substring every reported site name must contain */
  int has_range;        /* --from/--to given */
  double from_ns, to_ns;/* since the capture start; scopes must lie wholly inside */
} agg_filter;

/* >>frames: a frame is a pass operation (session.h) when the capture has
 * any; otherwise the interval between consecutive FRAME marks on a thread;
 * when it has neither, each top-level scope is one. */
typedef struct frame_entry {
  double dur_ns, start_ns; /* start since the epoch */
  uint32_t thread;         /* passes: the thread that ended it */
  uint64_t number;         /* passes: the frame id (the application's when it gave one); else 1-based on its thread */
  uint32_t window;         /* passes: index into frames.windows */
  int committed;           /* passes: 0 for superseded or dropped work */
} frame_entry;

enum { FRAMES_FROM_OPS, FRAMES_FROM_MARKS, FRAMES_FROM_TOPS, FRAMES_SOURCES };

/* Frame start times of one source, kept to derive the steady frame rate
 * (from the median interval), at most FRAMES_MAX_TIMES per source: the
 * rest are counted in `cut`. */
#define FRAMES_MAX_TIMES (1u << 20) /* 16 MiB per source; an hour at 290 fps */
#define FRAMES_MAX_WINDOWS 256u     /* windows whose passes are told apart; the rest are counted */
typedef struct frame_time {
  uint32_t key;            /* ops: window index; marks and tops: thread */
  double t_ns;             /* pass or top-level scope start, or mark time */
} frame_time;

typedef struct frame_times {
  frame_time *e;
  uint64_t n, cap, cut;
} frame_times;

/* One series of frames (a window's committed passes, a thread's marks or
 * top-level scopes) and both of its rates. */
typedef struct frame_series {
  uint32_t key;
  uint64_t frames;         /* frames counted between the first and the last boundary (n - 1) */
  double span_ns;          /* first to last frame start (marks: mark to mark) */
  double fps_first_to_last;/* frames / span: what an outlier (a 2 s stall) pulls down */
  double median_interval_ns; /* of consecutive starts */
  double fps_steady;       /* 1 / median interval: the rate the frame loop keeps outside stalls */
} frame_series;

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
  frame_heap by_mark, by_top, by_op; /* all are tracked; which one counts is known at the end */
  frame_times times[FRAMES_SOURCES];
  char *windows[FRAMES_MAX_WINDOWS]; /* window ids of passes, in order of first appearance */
  uint32_t n_windows;
  uint64_t windows_cut;       /* passes of windows past FRAMES_MAX_WINDOWS: not counted in any series */
  uint64_t passes, uncommitted; /* pass operations completed; of them not committed */
  frame_thread **t;            /* per thread index, created on first use (cli_entry) */
  uint32_t n_threads;
  int failed;                 /* out of memory */
} frames;

int frames_init(frames *f, uint32_t top_n);
void frames_free(frames *f);
void frames_mark(frames *f, uint32_t thread, double t_ns);
void frames_top(frames *f, uint32_t thread, double begin_ns, double dur_ns);
/* A completed operation (OP_END record); only passes are frames. */
void frames_op(frames *f, uint32_t thread, const strobe_capture_op *op);
/* 1 when any thread had at least two FRAME marks (so marks define frames). */
int frames_use_marks(const frames *f);
/* Where frames come from: pass operations when the capture has any, else marks, else top-level scopes. */
int frames_source(const frames *f);
/* The series of that source with at least two frames, each with both rates;
 * *n gets their number. Caller frees; NULL with *n 0 when there are none (or out of memory: f->failed). */
frame_series *frames_series(frames *f, uint32_t *n);
/* The slowest frames of the chosen kind, slowest first (sorts the heap in place). */
const frame_entry *frames_slowest(frames *f, uint32_t *n);

/* >>operations: what the capture's operations say (OP_END records), beside
 * the scopes: how many of each kind, their stages (each with its own n: the
 * operations that ran it) and their counters. */
#define AGG_MAX_OP_COUNTERS 256u /* distinct operation counter names; the rest are counted */
typedef struct agg_op_counter {
  char *name;
  char *kind;             /* its kind in the family `name`; NULL for none */
  uint64_t n;             /* operations that counted it */
  double sum, min, max;   /* over those operations' totals */
  uint32_t unit;          /* strobe_unit: the first an operation's counter declared (strobe_op_counter_add_unit) */
} agg_op_counter;

typedef struct agg_ops {
  uint64_t by_kind[STROBE_OP_KIND_LIMIT]; /* completed operations by strobe_op_kind ([0]: unknown kinds) */
  uint64_t uncommitted, handed_off;
  uint64_t without_detail;   /* began before anything recorded: no stages or counters, not zero */
  uint64_t stages_dropped, counters_dropped; /* past the per-operation bounds, summed */
  agg_site *stages;       /* by stage site id: count = operations that ran it, durations = its total per operation */
  uint32_t n_stages;
  agg_op_counter counters[AGG_MAX_OP_COUNTERS];
  uint32_t n_counters;
  uint64_t counters_cut;  /* counter values of names past AGG_MAX_OP_COUNTERS: not kept */
} agg_ops;

/* >>stage parents: a stage site's completed scopes split by the stage that
 * was open around them on their thread (docs/sessions.md §Stages nest at run
 * time), so `strobe report` can show which parent each ran under. */
#define AGG_MAX_STAGE_PARENTS 1024u /* (stage, parent) pairs kept; more are counted in stage_parents_cut */
#define AGG_MAX_DEPTH 256u          /* scope depths a capture carries (STROBE_MAX_DEPTH) */

typedef struct agg_stage_parent {
  uint32_t site, parent; /* stage site ids; parent 0: no stage open around it */
  uint64_t count;
  double total_ns, max_ns;
} agg_stage_parent;

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
  agg_ops ops;
  int track_frames;
  int track_stage_parents;  /* the capture has stage sites: BEGINs are read to know what is open */
  uint32_t *open_sites;     /* per thread, AGG_MAX_DEPTH + 1 site ids by depth */
  uint32_t n_open_threads;
  agg_stage_parent *stage_parents;
  uint32_t n_stage_parents;
  uint64_t stage_parents_cut; /* stage scopes whose (stage, parent) pair did not fit */
  strobe__gpu_data gpu;           /* GPU spans, frame instants and clock pairs (gpu.h), resolved by strobe__gpu_resolve */
  strobe__samples smp;            /* sampler records (strobe/sample.h): functions' counts, off-CPU intervals */
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
