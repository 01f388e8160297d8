/*
 * frames.h — the frame model of a capture (docs/frames.md): one index, built
 * once from a capture (a file, a merged file, a flight-recorder dump, a
 * stream) through the capture reader, which every consumer asks instead of
 * deriving frames itself. For each operation (and, in a capture without
 * operations, each frame-mark interval or top-level scope) it holds the
 * kind, window, process, threads, frame id, begin and end, its state across
 * processes, its stages under their run-time parents and, when asked, its
 * own spans; per series (a process's window, or a thread) the two frame
 * rates; per (stage, run-time parent, process) the stage's n, p50, p95 and
 * max over the operations that ran it.
 *
 * A frame handed from one process to another in a merged capture is one
 * entry: the origin's begin, window and process, the finisher's end and
 * state, both processes' stages, each with the process it ran in.
 *
 * Building: strobe_frames_create, then strobe_frames_add for the records of
 * one read of the capture (in the reader's order), then strobe_frames_finish;
 * or strobe_frames_open, which does it all from a file and, with
 * desc.spans, reads it a second time to count each frame's own spans.
 *
 * Errors are negative STROBE_E* codes. Memory: the index owns everything its
 * queries return (strings included), valid until strobe_frames_destroy; it
 * keeps nothing of the capture, which may be closed once finish returned.
 *
 * Thread rule: a strobe_frames is built (create, add, finish, count_span) by
 * one thread at a time. Once finished, its queries change nothing and may be
 * called from any thread at once, while no thread calls
 * strobe_frames_count_span.
 */
#ifndef STROBE_FRAMES_H
#define STROBE_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "strobe/capture.h"
#include "strobe/strobe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(ID, value, name): where a capture's frames come from, the first that
 * applies (docs/frames.md §Which frames). */
#define STROBE_FRAME_SOURCES(X)                                                         \
  X(NONE, 0, "none")                   /* no pass operation, frame mark or top-level scope */ \
  X(PASSES, 1, "pass operations")      /* the capture has operations (of any kind) */   \
  X(MARKS, 2, "frame marks")           /* else a thread marked two frames or more */    \
  X(TOP_SCOPES, 3, "top-level scopes") /* else each top-level scope (no frame rate) */
enum {
#define STROBE__FRAME_SOURCE_ENUM(id, value, name) STROBE_FRAME_SOURCE_##id = value,
  STROBE_FRAME_SOURCES(STROBE__FRAME_SOURCE_ENUM)
#undef STROBE__FRAME_SOURCE_ENUM
  STROBE_FRAME_SOURCE_LIMIT
};

/* X(ID, value, name): an operation's state across threads and processes
 * (docs/frames.md §States). Frames from marks and top-level scopes are
 * COMPLETED. */
#define STROBE_FRAME_STATES(X)                                                                              \
  X(COMPLETED, 0, "completed")   /* committed in the process it began in */                                 \
  X(PRESENTED, 1, "presented")   /* resumed from another process and committed there */                      \
  X(HANDED_OFF, 2, "handed off") /* handed to a process whose capture this one does not hold */              \
  X(SUPERSEDED, 3, "superseded") /* resumed from another process and ended there uncommitted */              \
  X(DROPPED, 4, "dropped")       /* ended uncommitted in the process it began in, never handed to another */ \
  X(ABANDONED, 5, "abandoned")   /* handed to a process this merged capture holds, which never resumed it */ \
  X(UNFINISHED, 6, "unfinished") /* began (or resumed) and never ended in this capture */
enum {
#define STROBE__FRAME_STATE_ENUM(id, value, name) STROBE_FRAME_##id = value,
  STROBE_FRAME_STATES(STROBE__FRAME_STATE_ENUM)
#undef STROBE__FRAME_STATE_ENUM
  STROBE_FRAME_STATE_LIMIT
};

/* The name of a source or a state ("pass operations", "handed off"); "unknown" past the known ones. Static;
 * safe to call from any thread. */
STROBE_API const char *strobe_frames_source_name(uint32_t source);
STROBE_API const char *strobe_frames_state_name(uint32_t state);

#define STROBE_FRAMES_NONE UINT32_MAX /* an index that names nothing (no series, no frame, no thread) */

/* One stage of one frame: its aggregate over the frame, under one run-time
 * parent, in one process. */
typedef struct strobe_frame_stage {
  uint32_t site;        /* the stage's site id (strobe_capture_query_site): the lowest of the stage sites of its name */
  uint32_t parent;      /* the run-time parent's site id, likewise; 0: none (or not known: parent_known 0) */
  int parent_known;     /* 0: the capture predates run-time parents; the site's declared parent is all there is */
  uint32_t process;     /* the process it ran in (strobe_frames_query_process) */
  uint32_t count;       /* runs in this frame */
  double total_ns, min_ns, max_ns;
} strobe_frame_stage;

/* One frame (or, for source PASSES, one operation of any kind). */
typedef struct strobe_frame {
  uint32_t kind;         /* strobe_op_kind (session.h) for operations; 0 for marks and top-level scopes */
  uint32_t state;        /* STROBE_FRAME_* */
  int counted;           /* 1: it counts towards its series' rates (a pass completed, presented or handed off, and
                          * not idle; every mark interval) */
  int idle;              /* operations: 1 when the application marked it idle (strobe_op_mark_idle: nothing to do);
                          * listed, never in a rate, as sessions count it (0 in captures from before the flag) */
  uint32_t series;       /* strobe_frames_query_series; STROBE_FRAMES_NONE for operations that are not passes */
  const char *window;    /* operations: the window id where it began ("" when unknown); "" for marks and scopes */
  uint32_t process;      /* the process it began in (strobe_frames_query_process) */
  uint32_t end_process;  /* the process it ended in: process, unless handed between processes */
  uint32_t thread;       /* the capture thread it began on (the one it ended on when its begin predates the capture) */
  uint32_t end_thread;   /* the thread it ended on; STROBE_FRAMES_NONE when unfinished */
  uint64_t number;       /* passes: the frame id (the application's when it gave one, app_frame_id); other
                          * operations: their operation id; marks and top-level scopes: 1-based on their thread */
  int app_frame_id;      /* 1 when number is the application's frame id */
  double begin_ns;       /* since the capture's epoch */
  double end_ns;         /* since the epoch; 0 when unfinished */
  double handed_off_ns;  /* handed between processes: when the origin handed it off; 0 otherwise */
  double resumed_ns;     /* ... when the other process resumed it; 0 when it was not (or not in this capture) */
  const char *handed_to; /* handed between processes: the label of the process the origin handed it to (its take
                          * named it); "" otherwise, and for a half resumed here whose origin is not in the capture */
  uint64_t collector, id; /* the operation's collector number and id where it began; 0 for marks and scopes */
  uint32_t nstages;      /* its stages (strobe_frames_query_stages) */
  int detail;            /* 1: stages were kept from its beginning; 0: they are unknown, not zero */
  uint64_t spans;        /* its own spans (docs/frames.md §Own spans), once counted (strobe_frames_open with
                          * desc.spans, or strobe_frames_count_span); 0 before */
  double spans_self_ns;  /* the sum of their self times: each instant of its own spans counted once */
  const char *population; /* operations: its population (transition label, strobe_op_set_population) as its END
                          * carried it, the finisher's for one handed between processes; "" for none, for a capture
                          * from before populations, and for marks and top-level scopes */
} strobe_frame;

/* A series of frames: a process's window for passes, a thread for marks and
 * top-level scopes; with both its rates over its counted frames. */
typedef struct strobe_frame_series {
  const char *name;      /* the window id, or the thread's name ("" when unnamed) */
  uint32_t process;      /* passes: the window's process; marks and scopes: STROBE_FRAMES_NONE */
  uint32_t thread;       /* marks and scopes: the thread; passes: STROBE_FRAMES_NONE */
  uint64_t frames;       /* frames of it in the index */
  uint64_t by_state[STROBE_FRAME_STATE_LIMIT];
  uint64_t counted;      /* of them counted towards the rates */
  int has_rate;          /* 1 with two boundaries or more (never for top-level scopes) */
  uint64_t intervals;    /* the intervals between the first and the last boundary (counted begins, or marks) */
  double span_ns;        /* first boundary to last */
  double fps_first_to_last; /* intervals / span: what one long stall pulls down */
  double median_interval_ns;
  double fps_steady;     /* 1 / the median interval: what one long stall does not */
} strobe_frame_series;

/* A stage's figures over the operations that ran it, for one run-time parent and one process. */
typedef struct strobe_frames_stage_summary {
  uint32_t site, parent; /* as strobe_frame_stage */
  int parent_known;
  uint32_t process;
  uint64_t n;            /* operations that ran it */
  uint64_t runs;         /* its runs in them */
  double total_ns;       /* summed over them */
  double p50_ns, p95_ns, max_ns; /* nearest-rank over its per-operation totals (n of them); max is exact */
} strobe_frames_stage_summary;

typedef struct strobe_frames_desc {
  int spans;             /* strobe_frames_open: 1 reads the file twice to count each frame's own spans */
  /* NULL: every operation is a frame of the index. Else called by strobe_frames_finish for each operation with
   * what the model knows of it (the whole operation, both halves of a hand-off joined): 0 leaves it out of the
   * index (frames, series, rates, stages; spans it owns are owned by none), as `strobe report --thread --from
   * --to` does. On the finishing thread; it must not call the index. */
  int (*keep)(void *ctx, const strobe_frame *frame);
  void *keep_ctx;
  uint32_t max_frames;   /* frames listed from marks, and top-level scopes kept; 0: STROBE_FRAMES_MAX_DEFAULT; the
                          * rest counted. Marks for the rates: 8 times as many */
} strobe_frames_desc;
#define STROBE_FRAMES_MAX_DEFAULT (1u << 17) /* 131,072 frames (36 min at 60 fps): about 24 MiB with their entries,
                                              * so `strobe report` stays within its 64 MiB (docs/cli.md §Speed) */

typedef struct strobe_frames strobe_frames;

/* A new, empty index (desc NULL: all defaults). Returns 0; STROBE_EINVAL (out NULL); STROBE_ENOMEM (*out NULL). */
STROBE_API int strobe_frames_create(const strobe_frames_desc *desc, strobe_frames **out);
/* Takes one record of the capture c, read in the reader's order (batches included). Records of types it does not
 * use are ignored, so a reader may leave out all but OP_*, FRAME and END. Returns 0; STROBE_EINVAL (NULL f or r);
 * STROBE_ENOMEM (the record is lost and the index says so: strobe_frames_query_cut); STROBE_ESTATE after finish. */
STROBE_API int strobe_frames_add(strobe_frames *f, const strobe_capture *c, const strobe_capture_record *r);
/* Joins, orders and summarises what was added: call once, after the capture's last record (its MERGE block and
 * thread names are read by then). Returns 0; STROBE_EINVAL (NULL argument); STROBE_ENOMEM (the index is then
 * empty, never half-built, and says failed); STROBE_ESTATE when called twice. */
STROBE_API int strobe_frames_finish(strobe_frames *f, const strobe_capture *c);
/* Builds the index of the capture file at path; with desc->spans, reads it again to count each frame's own spans.
 * On success *out owns it (strobe_frames_destroy). Errors: those of strobe_capture_open and strobe_capture_next
 * (STROBE_ETRUNCATED and STROBE_ECORRUPT too: the index of a damaged file is refused, not guessed),
 * STROBE_ENOMEM, STROBE_EINVAL (NULL path or out); *out is NULL then. */
STROBE_API int strobe_frames_open(const char *path, const strobe_frames_desc *desc, strobe_frames **out);
/* Frees everything. Accepts NULL. */
STROBE_API void strobe_frames_destroy(strobe_frames *f);

/* The frame a span belongs to (docs/frames.md §Own spans): the innermost operation open on `thread` at
 * `begin_ns` (passes; of any kind, so an input inside a pass owns its spans), the mark interval holding it
 * (marks), the top-level scope holding it (scopes). Returns its index, or STROBE_FRAMES_NONE (none open there,
 * or not finished). */
STROBE_API uint32_t strobe_frames_owner(const strobe_frames *f, uint32_t thread, double begin_ns);
/* Counts one completed span (an END record: begin = time_ns - duration_ns, and its self_ns) in its owner's
 * spans and spans_self_ns. Returns the owner's index, or STROBE_FRAMES_NONE (counted nowhere). After finish. */
STROBE_API uint32_t strobe_frames_count_span(strobe_frames *f, uint32_t thread, double begin_ns, double self_ns);

/* >>queries: valid once finished; before, counts are 0 and lookups NULL. */
STROBE_API uint32_t strobe_frames_query_source(const strobe_frames *f); /* STROBE_FRAME_SOURCE_* */
/* Frames (operations of every kind for PASSES), ordered by begin, then process, thread and number. */
STROBE_API uint32_t strobe_frames_query_count(const strobe_frames *f);
STROBE_API const strobe_frame *strobe_frames_query_frame(const strobe_frames *f, uint32_t index);
/* The stages of frame `index`: *n of them; NULL for none. */
STROBE_API const strobe_frame_stage *strobe_frames_query_stages(const strobe_frames *f, uint32_t index, uint32_t *n);
STROBE_API uint32_t strobe_frames_query_series_count(const strobe_frames *f);
STROBE_API const strobe_frame_series *strobe_frames_query_series(const strobe_frames *f, uint32_t index);
/* Stage summaries ordered by process, then site, then run-time parent. */
STROBE_API uint32_t strobe_frames_query_stage_count(const strobe_frames *f);
STROBE_API const strobe_frames_stage_summary *strobe_frames_query_stage_summary(const strobe_frames *f, uint32_t i);
/* Processes: a merged capture's inputs in its order, else the capture's one process (its label, "" when it never
 * named itself), then processes named only as where an operation came from; NULL past the count. */
STROBE_API uint32_t strobe_frames_query_process_count(const strobe_frames *f);
STROBE_API const char *strobe_frames_query_process(const strobe_frames *f, uint32_t index);
/* The first frame numbered `number` (a pass's frame id; a mark interval's or scope's 1-based number) in series
 * `series` (STROBE_FRAMES_NONE: any); STROBE_FRAMES_NONE when there is none. Only passes, for source PASSES. */
STROBE_API uint32_t strobe_frames_find(const strobe_frames *f, uint64_t number, uint32_t series);
/* The frame of operation `id` of collector `collector` (as OP_* records name it: either half of an operation
 * handed between processes gives the one frame); STROBE_FRAMES_NONE when the index has no such operation. */
STROBE_API uint32_t strobe_frames_find_op(const strobe_frames *f, uint64_t collector, uint64_t id);
/* What the index could not keep: marks and scopes past max_frames (each), and whether memory ran out. */
typedef struct strobe_frames_cut {
  uint64_t marks, scopes; /* not kept, so in no frame and no rate */
  uint64_t listed;        /* mark intervals in the rates but past max_frames: not listed as frames */
  int failed;             /* 1: memory ran out while building: the index is incomplete */
} strobe_frames_cut;
STROBE_API strobe_frames_cut strobe_frames_query_cut(const strobe_frames *f);

#ifdef __cplusplus
}
#endif

#endif /* STROBE_FRAMES_H */
