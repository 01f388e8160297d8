/*
 * aggregate.h — per-site statistics over one pass of a capture, shared by
 * report, diff, compare and the CSV export; and, for report, the frame
 * model (strobe/frames.h) fed from the same read.
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
#include "strobe/frames.h"

#define AGG_RESERVOIR 4096u /* durations kept per site: 32 KiB; p99 over 4096 has ~41 samples above it */

/* >>call graph: one (caller, callee) pair's calls, as `uftrace graph` gives them. */
typedef struct agg_edge {
  uint64_t count;
  double total_ns, self_ns; /* the callee's inclusive and self time in those calls */
} agg_edge;

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
  agg_edge caller;         /* --callers: the graph function's calls made from this site (site 0: from the top level) */
  agg_edge callee;         /* --callees: this site's calls made from the graph function */
  int graph;               /* its name is the graph function's */
} agg_site;

typedef struct agg_filter {
  const char *thread;   /* NULL: every thread; all digits: a thread index; else a thread name */
  const char *name;     /* NULL, or a substring every reported site name must contain */
  int has_range;        /* --from/--to given */
  double from_ns, to_ns;/* since the capture start; scopes must lie wholly inside */
  const char *graph;    /* NULL, or the function (site name, exact) whose callers and callees are counted */
} agg_filter;

/* >>operations: what the capture's operation ENDs say beside the frame
 * model (strobe/frames.h, which owns their kinds, states and stages): their
 * counters, and what the per-operation bounds cut. */
#define AGG_MAX_OP_COUNTERS 256u /* distinct operation counter names; the rest are counted */
typedef struct agg_op_counter {
  char *name;
  char *kind;             /* its kind in the family `name`; NULL for none */
  uint64_t n;             /* operations that counted it */
  double sum, min, max;   /* over those operations' totals */
  uint32_t unit;          /* strobe_unit: the first an operation's counter declared (strobe_op_counter_add_unit) */
} agg_op_counter;

typedef struct agg_ops {
  uint64_t handed_off;     /* END records of operations resumed on another thread at least once */
  uint64_t stages_dropped, counters_dropped; /* past the per-operation bounds, summed */
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
  strobe_frames *fx;       /* the frame model (report only; NULL otherwise), finished by agg_read_all */
  agg_ops ops;
  int track_frames;
  int track_stage_parents;  /* the capture has stage sites: BEGINs are read to know what is open */
  uint32_t *open_sites;     /* per thread, AGG_MAX_DEPTH + 1 site ids by depth */
  uint32_t n_open_threads;
  agg_stage_parent *stage_parents;
  uint32_t n_stage_parents;
  uint64_t stage_parents_cut; /* stage scopes whose (stage, parent) pair did not fit */
  int track_calls;          /* filter.graph set: BEGINs are read to know each END's caller */
  uint64_t graph_cut;       /* calls deeper than AGG_MAX_DEPTH: their caller is unknown, not counted as edges */
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
/* Sorts ids in place by key[id] descending, ties by id ascending. */
void agg_sort_by(uint32_t *ids, uint32_t n, const double *key);

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
