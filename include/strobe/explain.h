/*
 * explain.h — why one frame took as long as it did (docs/explain.md): its
 * wall time decomposed into parts (each stage's self time, the time outside
 * any stage, the hand-off gap to another process, the GPU's queue backlog
 * and the host's polling latency), each stage's self time split into
 * on-CPU, blocked and preempted from the capture's context switches, each
 * part compared with the same series' typical frame (per part: its p50 and
 * n over the frames of the same kind and series that had it), the parts
 * that exceeded their norm named with their excess, and the sampled
 * functions that dominate an exceeding stage's on-CPU time.
 *
 * Built on the frame model (strobe/frames.h): frames, stages and run-time
 * parents are the model's; this module adds what the capture says about the
 * time inside them. Honest about coverage: a part or split the capture has
 * no data for is `known` 0 ("unknown"), never zero.
 *
 * Errors are negative STROBE_E* codes. Memory: the explainer owns
 * everything it returns (strings included). Thread rule: a strobe_explain
 * is used by one thread at a time; different ones may be used concurrently.
 */
#ifndef STROBE_EXPLAIN_H
#define STROBE_EXPLAIN_H

#include <stdint.h>

#include "strobe/frames.h"
#include "strobe/strobe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(ID, value, name): what a part of a frame's wall time is. */
#define STROBE_EXPLAIN_PARTS(X)                                                                        \
  X(STAGE, 0, "stage")             /* a stage's self time: its runs minus its child stages' runs */  \
  X(OUTSIDE, 1, "outside stages")  /* the wall time in no top-level stage (and no hand-off gap); for a \
                                    * mark interval or top-level scope, which have no stages, its wall */ \
  X(HANDOFF, 2, "hand-off gap")    /* from the hand-off in one process to the resume in the other */ \
  X(GPU_BACKLOG, 3, "GPU backlog") /* from submit to the GPU's first span of the frame */            \
  X(GPU_POLLING, 4, "GPU polling") /* from the GPU's last span to the host seeing the fence */
enum {
#define STROBE__EXPLAIN_PART_ENUM(id, value, name) STROBE_EXPLAIN_##id = value,
  STROBE_EXPLAIN_PARTS(STROBE__EXPLAIN_PART_ENUM)
#undef STROBE__EXPLAIN_PART_ENUM
  STROBE_EXPLAIN_PART_LIMIT
};

/* X(ID, value, name): what dominates a stage's excess over its norm. */
#define STROBE_EXPLAIN_CAUSES(X)                                                        \
  X(NONE, 0, "none")            /* the part did not exceed its norm */                   \
  X(ON_CPU, 1, "on CPU")        /* running: its on-CPU time grew the most */             \
  X(BLOCKED, 2, "blocked")      /* asleep or waiting (a lock, I/O, a sleep, a fence) */  \
  X(PREEMPTED, 3, "preempted")  /* runnable without a CPU */                             \
  X(UNKNOWN, 4, "unknown")      /* no context switches cover it: the split is unknown */
enum {
#define STROBE__EXPLAIN_CAUSE_ENUM(id, value, name) STROBE_EXPLAIN_CAUSE_##id = value,
  STROBE_EXPLAIN_CAUSES(STROBE__EXPLAIN_CAUSE_ENUM)
#undef STROBE__EXPLAIN_CAUSE_ENUM
  STROBE_EXPLAIN_CAUSE_LIMIT
};

/* The name of a part kind or a cause; "unknown" past the known ones. Static; safe to call from any thread. */
STROBE_API const char *strobe_explain_part_name(uint32_t kind);
STROBE_API const char *strobe_explain_cause_name(uint32_t cause);

/* A figure and its norm: the p50 over the n frames of the same kind and series that had it. */
typedef struct strobe_explain_figure {
  int known;       /* 0: the capture has no data for it in this frame ("unknown"; ns is then 0, not a zero) */
  double ns;       /* this frame's */
  double p50_ns;   /* nearest rank over n frames; 0 when n is 0 */
  uint64_t n;      /* frames with the figure known (this one included) */
} strobe_explain_figure;

/* One sampled function inside a stage's on-CPU time. */
typedef struct strobe_explain_function {
  const char *name;  /* as the capture names it (application content: keep it local) */
  uint64_t samples;  /* samples with it as the leaf, inside the stage's self time in this frame */
  double cpu_ns;     /* samples / the sampler's rate: the CPU time they stand for */
} strobe_explain_function;

typedef struct strobe_explain_part {
  uint32_t kind;                 /* STROBE_EXPLAIN_* */
  uint32_t site, parent;         /* STAGE: the stage's and its run-time parent's site ids (strobe/frames.h) */
  const char *name;              /* STAGE: the stage's name; otherwise the kind's name */
  int content;                   /* 1: name is a run-time (interned) name, application content (STROBE_SITE_INTERNED) */
  strobe_explain_figure wall;    /* its time: a stage's self time, or the gap */
  strobe_explain_figure total;   /* STAGE: its total (child stages included) vs the model's stage summary */
  strobe_explain_figure on_cpu, blocked, preempted; /* STAGE: its self time split (known only when switches
                                  * cover every run of it and of its child stages in this frame); OUTSIDE: the
                                  * frame's time on its thread less its top-level stage runs there (known for a
                                  * frame that stayed on one thread of one process, switches covering it) */
  double blocked_lock_ns;        /* STAGE, blocked known: of its blocked time, waiting for a lock (strobe/lock.h: between a
                                  * LOCK_WAIT and its LOCK_ACQUIRED); the rest is of no known kind (docs/explain.md §Parts) */
  double excess_ns;              /* wall.ns - wall.p50_ns when both are known, else 0 */
  int exceeded;                  /* 1: it exceeded its norm (docs/explain.md §Exceeding) */
  uint32_t cause;                /* STROBE_EXPLAIN_CAUSE_*: for an exceeding stage or OUTSIDE, what grew most */
  uint32_t causes;               /* bits 1 << STROBE_EXPLAIN_CAUSE_ON_CPU, _BLOCKED, _PREEMPTED: each kind of its
                                  * split that exceeded its own norm (the rule of the part's) */
  uint32_t nfunctions;           /* STAGE, exceeded, on CPU known: the top sampled functions, most samples first */
  const strobe_explain_function *functions;
} strobe_explain_part;

typedef struct strobe_frame_explanation {
  uint32_t frame;                /* its index in the model (strobe_explain_query_frames) */
  strobe_explain_figure wall;    /* its wall time vs the p50 of ended frames of its kind and series */
  uint32_t nparts;               /* stages (in the model's order), then the other kinds that apply */
  const strobe_explain_part *parts;
  uint32_t exceeded;             /* parts that exceeded their norm */
  uint32_t worst;                /* the part with the largest excess among them; STROBE_FRAMES_NONE when none */
} strobe_frame_explanation;

/* What the capture covers, for every frame of it. */
typedef struct strobe_explain_coverage {
  int switches;          /* 1: the capture recorded context switches (the split can be known) */
  int samples;           /* 1: it holds sampled stacks (top functions can be named) */
  uint32_t sample_rate_hz; /* the sampler's rate; 0 when unknown */
  int gpu;               /* 1: it holds GPU spans or frame instants */
  uint64_t runs;         /* stage runs read */
  uint64_t runs_cut;     /* stage runs past desc.max_runs: their stages' splits are unknown */
  uint64_t samples_cut;  /* samples past desc.max_samples: not in any top function */
  int lock_waits;        /* 1: the capture recorded lock waits (strobe/lock.h): blocked time in them has a kind */
  uint64_t waits_cut;    /* lock waits past desc.max_runs: their blocked time is of no known kind */
} strobe_explain_coverage;

typedef struct strobe_explain_desc {
  uint32_t max_runs;      /* stage runs kept; 0: 1 << 19 (about 80 MiB at most: 156 bytes a run with its row;
                           * 15 minutes of ten stages a frame at 60 fps) */
  uint32_t max_samples;   /* sampled stacks kept; 0: 1 << 21 (48 MiB at most: 24 bytes a sample) */
  uint32_t top_functions; /* functions named per exceeding stage, 1..16; 0: 3 */
} strobe_explain_desc;

typedef struct strobe_explain strobe_explain;

/* Reads the capture file at path three times (the frame model, then its stage runs, context switches, samples and
 * GPU data, whose records may come after the spans they cover) and keeps what explaining any frame needs. On
 * success *out owns it (strobe_explain_destroy). Errors: those of strobe_frames_open (a damaged file is refused),
 * STROBE_EINVAL (NULL path or out, desc out of range), STROBE_ENOMEM; *out is NULL then. */
STROBE_API int strobe_explain_open(const char *path, const strobe_explain_desc *desc, strobe_explain **out);
/* Frees everything. Accepts NULL. */
STROBE_API void strobe_explain_destroy(strobe_explain *e);
/* The frame model it explains; owned by e. */
STROBE_API const strobe_frames *strobe_explain_query_frames(const strobe_explain *e);
STROBE_API strobe_explain_coverage strobe_explain_query_coverage(const strobe_explain *e);
/* Explains frame `frame` (an index of the model) into *out, whose arrays e owns until the next call on e or its
 * destruction. Returns 0; STROBE_EINVAL (NULL argument), STROBE_ERANGE (no such frame; *out zeroed), STROBE_ENOMEM
 * (*out zeroed). */
STROBE_API int strobe_explain_frame(strobe_explain *e, uint32_t frame, strobe_frame_explanation *out);
/* The k slowest ended frames (passes for source PASSES), slowest first, into frames[0..k); returns how many. */
STROBE_API uint32_t strobe_explain_slowest(const strobe_explain *e, uint32_t k, uint32_t *frames);

/* Each frame's excess over its norm (docs/explain.md §Norms): its wall time less the p50 of its peers' (the
 * wall figure of strobe_explain_frame), into excess_ns[i] for every frame i of the model; NAN for a frame that
 * never ended. What the viewer's frame list sorts by. Returns 0; STROBE_EINVAL (NULL argument), STROBE_ENOMEM
 * (excess_ns untouched). Changes nothing in e. */
STROBE_API int strobe_explain_excess(const strobe_explain *e, double *excess_ns);

/* Where a frame that never ended in the capture (state STROBE_FRAME_UNFINISHED: for a live snapshot, the frame in
 * progress) is at the capture's end (docs/explain.md §Unfinished frames): how long it has run, against the p95 of
 * its ended peers, the stage open now and what its thread is doing. Elapsed times are so far, never durations. */
typedef struct strobe_frame_stall {
  uint32_t frame;          /* its index in the model */
  double elapsed_ns;       /* from its begin to the capture's end */
  double p95_ns;           /* nearest rank over the n ended peers' wall times (docs/explain.md §Norms); 0 when n is 0 */
  uint64_t n;
  int stalled;             /* 1: n > 0 and elapsed_ns > STROBE_STALL_FACTOR (strobe/session.h) x p95_ns */
  uint32_t stage;          /* the innermost stage of it open at the end (the model's site id); 0: none open */
  uint32_t stage_parent;   /* the stage open around that one; 0: none */
  const char *stage_name, *stage_parent_name; /* their names (owned by the explainer); NULL for none */
  int stage_content, stage_parent_content;    /* 1: that name is a run-time (interned) name: application content */
  double stage_elapsed_ns; /* how long that stage has run so far; 0 when stage is 0 */
  double stage_p95_ns;     /* p95 of that stage's total (child stages included) over the peers that ran it */
  uint64_t stage_n;        /* those peers; stage_p95_ns is 0 when it is 0 */
  uint32_t thread_now;     /* STROBE_EXPLAIN_CAUSE_ON_CPU, _BLOCKED or _PREEMPTED: the thread of the open stage (else
                            * the one it began on) at the end; _UNKNOWN when no context switches cover that time */
  double thread_since_ns;  /* how long it has been so at the end; 0 when unknown */
} strobe_frame_stall;

/* Fills *out for frame `frame`. Returns 0; STROBE_EINVAL (NULL argument), STROBE_ERANGE (no such frame, or it
 * ended: *out zeroed). Changes nothing in e: safe beside strobe_explain_frame's results. */
STROBE_API int strobe_explain_stall(const strobe_explain *e, uint32_t frame, strobe_frame_stall *out);

/* What strobe_explain_json writes. */
#define STROBE_EXPLAIN_JSON_CONTENT 1u    /* sampled function names (application content: local callers only) */
#define STROBE_EXPLAIN_JSON_UNFINISHED 2u /* "unfinished": every unfinished frame's stall (at most 64, the rest counted
                                           * in "unfinished_cut"), after "frames" */
/* The JSON of docs/explain.md §JSON for frames[0..n) (indices of the model): {"coverage", "frames"[, "unfinished",
 * "unfinished_cut"]}. Without STROBE_EXPLAIN_JSON_CONTENT it holds static labels and numbers only (stage names
 * named at run time, STROBE_SITE_INTERNED, and thread names are written null; function names are withheld). On success *json is NUL-terminated, *len bytes,
 * and the caller frees it with free(). Returns 0; STROBE_EINVAL (NULL e, json or len; frames NULL with n > 0;
 * unknown flags), STROBE_ERANGE (an index past the model's frames), STROBE_ENOMEM; *json is NULL on error. Calls
 * strobe_explain_frame: earlier results of it on e are invalidated. */
STROBE_API int strobe_explain_json(strobe_explain *e, const uint32_t *frames, uint32_t n, uint32_t flags, char **json,
                                   size_t *len);

#ifdef __cplusplus
}
#endif

#endif /* STROBE_EXPLAIN_H */
