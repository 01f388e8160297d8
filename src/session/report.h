/*
 * report.h — an immutable report snapshot (strobe_report): what a session's
 * read or end copied under the collector lock, holding references to the
 * shared samples. Built by session.c, exported by report_json.c.
 */
#ifndef STROBE_SESSION_REPORT_H
#define STROBE_SESSION_REPORT_H

#include "session/session_internal.h"

typedef struct strobe__unfinished_op {
  uint8_t kind, handed_off;
  strobe__name *window;
  uint64_t seq, frame_id;
  uint32_t phase_site;     /* 0: no stage running */
  uint64_t start, phase_start; /* ticks */
  int started_before_session;
} strobe__unfinished_op;

typedef struct strobe__unfinished_app {
  char label[STROBE_MAX_LABEL + 1];
  uint8_t lane;
  uint32_t depth;
  strobe__name *window;
  uint64_t id, parent_id, start;
  int started_before_session;
} strobe__unfinished_app;

/* A stage's labels, copied when the report was built (docs/sessions.md §The
 * label rule): the report never reads a site, which is the application's memory. */
typedef struct strobe__report_site {
  uint32_t id;
  char name[STROBE_MAX_LABEL + 1];
  char declared[STROBE_MAX_LABEL + 1]; /* its declared parent; "" when none */
  uint8_t withheld; /* 1: named at run time, name replaced by interned_<id> (docs/recording.md §Run-time names) */
} strobe__report_site;

struct strobe_report {
  char id[STROBE_SESSION_ID_MAX];
  int final;                       /* from end (1) or a live read (0) */
  uint32_t max_samples, max_app;
  int include_devtools;
  int stage_runs;                  /* the session's stage_runs: samples' stages carry their runs */
  uint32_t kinds;                  /* STROBE_KIND_BIT of each admitted kind */
  uint64_t created, start, at;     /* ticks: session start; what it admits from (its last reset); snapshot time (= end for finals) */
  uint32_t resets;                 /* strobe_collector_reset calls that reset the session */
  uint64_t epoch;
  double ns_per_tick;
  double overhead_ns;
  double event_cost_ns;            /* the calibration's ns per event; 0 when not measured */
  uint64_t drain_cpu_ns, drain_events; /* the drain's cost while the session ran */
  uint64_t events_lost;            /* ring events this process lost while the session ran */
  uint32_t overflow;               /* strobe_desc.overflow */
  uint64_t completed, dropped, boundary_excluded, devtools_excluded, untracked_windows;
  uint64_t interleaved, kind_excluded, idle;
  uint64_t nesting_overflow, abandoned;
  uint64_t labels_replaced, labels_refused; /* the collector's, since its creation */
  uint64_t kind_completed[STROBE_OP_KIND_LIMIT];
  strobe__sample **samples;        /* newest first */
  uint32_t nsamples;
  strobe__window_rate rates[STROBE_MAX_WINDOWS]; /* the session's per-window pass counts, window ids referenced */
  uint32_t nrates;
  uint64_t passes_untracked;       /* strobe__session.passes_untracked */
  strobe__unfinished_op *unfinished;
  uint32_t nunfinished;
  strobe__app_counts app;
  strobe__app_record **apps;       /* newest first */
  uint32_t napps;
  strobe__unfinished_app *app_unfinished;
  uint32_t napp_unfinished;
  strobe__report_site *sites;      /* every stage site the samples and unfinished phases name, by id */
  uint32_t nsites;
  strobe__gauge gauges[STROBE_MAX_GAUGES];
  uint32_t ngauges;
  uint64_t gauges_dropped;
  char run_keys[STROBE__MAX_RUN_INFO][STROBE_MAX_LABEL + 1];
  char run_values[STROBE__MAX_RUN_INFO][256];
  uint32_t nrun;
  strobe_gpu_frame *gpu_frames;    /* GPU frames closed (FENCE_SEEN) while the session ran, oldest first (docs/gpu.md) */
  uint32_t ngpu;                   /* <= STROBE__REPORT_GPU_FRAMES */
  uint64_t gpu_missed;             /* closed frames the live table evicted before this report copied them */
  char process[STROBE_MAX_LABEL + 1]; /* the collector's process label (docs/sessions.md §Across processes) */
  uint32_t pid;
  uint64_t uid;                    /* the collector's random id in operation tokens */
  strobe_remote_stats remote;      /* the collector's, since its creation */
};
#define STROBE__REPORT_GPU_FRAMES 1024u /* the live table's ring of closed frames (src/probe/gpu.c) */

/* The copied labels of a stage site id (name "unknown" for an id the report did not copy). */
const strobe__report_site *strobe__report_site_of(const strobe_report *r, uint32_t id);

/* In flight or stalled (docs/sessions.md §In flight or stalled): an
 * unfinished operation against the report's completed samples of its kind. */
typedef struct strobe__kind_baseline {
  size_t n;   /* returned samples of the kind */
  double p95; /* ms, of their total_ms */
} strobe__kind_baseline;

enum { STROBE__NO_BASELINE, STROBE__IN_FLIGHT, STROBE__STALLED };

/* Fills base[kind] for every kind; scratch holds nsamples doubles (or 1). */
void strobe__kind_baselines(const strobe_report *r, double *scratch, strobe__kind_baseline base[STROBE_OP_KIND_LIMIT]);
int strobe__unfinished_state(const strobe__kind_baseline *b, double elapsed_ms);
uint64_t strobe__count_stalled(const strobe_report *r, const strobe__kind_baseline base[STROBE_OP_KIND_LIMIT]);

/* Frame rate of one window's passes (docs/sessions.md §Frame rate): first to
 * last over every pass the session counted, steady from the returned
 * samples, by analyze/frame_rate.h. window NULL: the only window's, none
 * (valid 0) when passes of several windows were counted: rates are never
 * summed across windows. Returns 0 or STROBE_ENOMEM (*out zeroed). */
int strobe__report_frame_rate(const strobe_report *r, const char *window, size_t window_len,
                              strobe_frame_rate *out);

static inline double strobe__report_ms(const strobe_report *r, uint64_t ticks) {
  return ((double)(int64_t)(ticks - r->epoch)) * r->ns_per_tick / 1e6;
}

static inline double strobe__ticks_ms(const strobe_report *r, uint64_t ticks) {
  return (double)ticks * r->ns_per_tick / 1e6;
}

#endif
