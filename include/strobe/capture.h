/*
 * capture.h — reading Strobe capture files (docs/capture-format.md).
 *
 * A reader streams: memory is bounded by the number of sites and threads plus
 * one block, whatever the number of events. Hostile input is expected: every
 * malformation yields a specific negative STROBE_E* code, never a crash, and
 * everything before the bad spot has already been returned.
 *
 * Thread rule: a strobe_capture is used by one thread at a time. Different
 * captures may be used concurrently.
 */
#ifndef STROBE_CAPTURE_H
#define STROBE_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "strobe/deep.h"
#include "strobe/strobe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The capture format version this library writes, and the oldest it still
 * reads (docs/capture-format.md, Compatibility); other versions fail with
 * STROBE_EVERSION. Version 2 added each site's unit, version 3 its flags and
 * the misuse counters of strobe_site_intern, version 4 element attribution
 * (the ELEMENT event kind and site kind), version 5 locks (the LOCK site kind
 * and the LOCK_* event kinds). */
#define STROBE_CAPTURE_FORMAT_VERSION 5u
#define STROBE_CAPTURE_FORMAT_OLDEST 1u

typedef struct strobe_capture strobe_capture;

typedef struct strobe_capture_header {
  uint32_t version;              /* format version: STROBE_CAPTURE_FORMAT_VERSION */
  char kind[16];                 /* "file", "flight-recorder", "stream" */
  char clock_source[16];         /* "tsc", "cntvct", "monotonic" */
  int clock_invariant;           /* 1 when the tick source is constant-rate */
  double ns_per_tick;            /* calibration against CLOCK_MONOTONIC */
  uint64_t epoch_ticks;          /* times are reported relative to this tick */
  uint64_t epoch_mono_ns;        /* CLOCK_MONOTONIC at the epoch (not calendar time) */
  uint64_t start_ticks;          /* when the capture started */
  double overhead_per_scope_ns;  /* the writer's calibrated cost per scope, its share of values and counters
                                  * included (docs/recording.md, Cost), with block scopes (STROBE_SCOPE) */
  char strobe_version[16];
  char os[32];
  char arch[32];
  char features[128];
  int assertions;                /* 1 when the writer was built with its invariant checks on (docs/invariants.md) */
  uint64_t pid;
  uint32_t ring_events;          /* per-thread ring capacity of the writer */
  uint32_t flush_interval_ms;
  double event_cost_ns;          /* the writer's calibrated cost per event on a recording thread
                                  * (docs/recording.md, Cost); 0 when absent (older writers) */
  uint32_t overflow;             /* the writer's strobe_overflow mode */
  uint32_t ring_events_max;      /* its STROBE_OVERFLOW_GROW bound; 0 when absent */
  uint32_t tree_max_nodes;       /* the writer's nodes per UI-tree snapshot; 0 when absent (older writers) */
  uint32_t tree_max_snapshots;   /* the writer's UI-tree snapshots per capture; 0 when absent */
  char boot_id[33];              /* the writer's host boot, 32 hex digits: captures with the same one share
                                  * CLOCK_MONOTONIC (`strobe merge` aligns them exactly); "" when absent */
  uint32_t attach_max_bytes;     /* the writer's content bytes per attachment (strobe/deep.h); 0 when absent */
  uint32_t deep_max_calls;       /* the writer's draw calls per deep capture; 0 when absent */
  uint64_t epoch_unix_ns;        /* the epoch on the wall clock (CLOCK_REALTIME, ns since 1970) as the writer read it
                                  * when the capture started: a record's Unix time is this plus its time_ns (the
                                  * OTLP export's); 0 when absent (older writers) */
  uint64_t journal_id;           /* the crash journal the writer kept beside the file (docs/recording.md §Crash
                                  * journal); 0: none */
  char journal[96];              /* "on", or why the writer kept none ("off: ..."); "" when absent */
  double explicit_scope_ns;      /* the same calibration's cost per scope opened and closed by STROBE_BEGIN and
                                  * STROBE_END (docs/recording.md §What a capture says it cost); 0 when absent */
} strobe_capture_header;

typedef struct strobe_capture_site {
  uint32_t id;          /* 1..65535 */
  uint32_t kind;        /* strobe_site_kind */
  uint32_t line;
  const char *name;     /* owned by the capture; valid until strobe_capture_close */
  const char *category; /* "" when none */
  const char *file;
  const char *function;
  const char *parent;   /* stages: the stage it is nested in; "" when none */
  uint32_t unit;        /* strobe_unit of its numbers (strobe_unit_name; NULL for a newer writer's unit);
                         * STROBE_UNIT_NONE in version 1 captures */
  uint32_t flags;       /* STROBE_SITE_* flags (strobe.h): STROBE_SITE_INTERNED marks a run-time name;
                         * 0 before version 3 */
} strobe_capture_site;

typedef struct strobe_capture_thread {
  uint32_t index;       /* 0-based, in order of first event */
  uint64_t os_tid;      /* 0 for a fiber: no OS thread owns its lane */
  const char *name;     /* "" when unnamed; owned by the capture */
  uint64_t events;      /* events read so far for this thread */
  uint64_t lost;        /* events the writer dropped (ring full), as recorded so far */
  int ended;            /* the thread exited during the capture (a fiber: it was destroyed) */
  int fiber;            /* 1: a fiber's lane (strobe.h >>fibers), written with os_tid 0; 0: an OS thread's */
} strobe_capture_thread;

typedef enum strobe_capture_record_type {
  STROBE_REC_SITE = 1,       /* a site definition: `site` */
  STROBE_REC_THREAD = 2,     /* a thread definition or rename: `thread` */
  STROBE_REC_BEGIN = 3,      /* scope opened: site, depth, time */
  STROBE_REC_END = 4,        /* scope closed: site, depth, time, duration, self */
  STROBE_REC_VALUE = 5,      /* number on the innermost scope: site (the key), depth, value */
  STROBE_REC_COUNTER = 6,    /* counter delta: site, time, value */
  STROBE_REC_GAUGE = 7,      /* gauge level: site, time, value */
  STROBE_REC_FRAME = 8,      /* frame mark: site, time */
  STROBE_REC_CUMULATIVE = 9, /* loop statistics: site, depth of the enclosing scope (0: top level), count, totals */
  STROBE_REC_LOST = 10,      /* events dropped here: lost; open scopes deeper than depth were closed as lost */
  STROBE_REC_THREAD_END = 11, /* the thread exited; its still-open scopes count as unfinished */
  STROBE_REC_OP_BEGIN = 12,  /* an operation began on this thread: op (no stages, counters or end yet) */
  STROBE_REC_OP_END = 13,    /* an operation completed on this thread: op, whole (times, stages, counters) */
  STROBE_REC_OP_TAKE = 14,   /* an operation was taken off this thread to be handed off: op (id fields) */
  STROBE_REC_OP_RESUME = 15, /* a handed-off operation resumed on this thread: op (id fields) */
  STROBE_REC_CLOCK_PAIR = 16, /* a clock domain's calibration pair (gpu.h): device (domain, device_ticks, host
                               * ticks before and after); ticks = host after */
  STROBE_REC_GPU_SPAN = 17,   /* a GPU span: site, device (domain, queue, pass, frame_id, device begin and end,
                               * raw: map them with strobe_capture_map_device); ticks = when it was recorded */
  STROBE_REC_GPU_MARK = 18,   /* a frame instant (cpu_end, submit, fence_seen): device (frame_id, instant); ticks =
                               * the instant */
  STROBE_REC_ELEMENT = 19,   /* the innermost open scope's element (strobe.h >>elements): site (the element
                              * type, kind STROBE_SITE_ELEMENT), depth (the scope's), element (its id), time
                              * (the previous event's: an attribution has none of its own) */
  STROBE_REC_TREE = 20,      /* a UI-tree snapshot (strobe/tree.h): tree, ticks and time when its pass began */
  STROBE_REC_SAMPLE = 21,    /* a sampled call stack (strobe/sample.h): sample (its frames), thread (by its OS thread),
                              * time */
  STROBE_REC_SWITCH = 22,    /* the sampled thread left its CPU (sample->out 1) or came back (0): sample, thread, time */
  STROBE_REC_ATTACHMENT = 23, /* an attachment (strobe/deep.h): attachment, ticks and time when it was attached */
  STROBE_REC_DEEP = 24,      /* a deep capture of one frame (strobe/deep.h): deep, ticks and time when it began */
  STROBE_REC_LANE_SPAN = 25, /* an external producer's span (strobe/producer.h): site, device (queue = the lane,
                              * domain = its clock, "" for host ticks; device begin and end, raw: map them with
                              * strobe_capture_map_device, which takes "" too); ticks = when it was recorded */
  STROBE_REC_ALLOC = 26,     /* an allocation (strobe.h >>allocations): site (the pool, kind STROBE_SITE_ALLOC),
                              * time, address, bytes. Since version 5 */
  STROBE_REC_FREE = 27,      /* a free: site (the pool, kind STROBE_SITE_FREE), time, address. Since version 5 */
  STROBE_REC_MESSAGE = 28,   /* a message (strobe.h >>messages): site (kind STROBE_SITE_MESSAGE: its name is the
                              * text, content when flagged STROBE_SITE_INTERNED), time. Since version 5 */
  STROBE_REC_LOCK_WAIT = 29,     /* this thread began to wait for a lock (strobe/lock.h): site (kind STROBE_SITE_LOCK),
                                  * time. Since version 5 */
  STROBE_REC_LOCK_ACQUIRED = 30, /* this thread holds the lock from here: site, time. Since version 5 */
  STROBE_REC_LOCK_RELEASED = 31  /* this thread let the lock go: site, time. Since version 5 */
} strobe_capture_record_type;
/* Every record type as strobe_capture_set_records takes them: bit (1 << type) for each. */
#define STROBE_CAPTURE_ALL_RECORDS ((((uint64_t)1) << (STROBE_REC_LOCK_RELEASED + 1)) - 2)

/* A thread of a SAMPLE or SWITCH record that no THREAD block named (it never
 * recorded an event while the capture ran): sample->os_tid says which. */
#define STROBE_CAPTURE_NO_THREAD UINT32_MAX

/* What a SAMPLE or SWITCH record carries (docs/capture-format.md, SAMPLES).
 * Valid until the next strobe_capture_next call. */
typedef struct strobe_capture_sample {
  uint64_t os_tid;         /* the sampled OS thread */
  uint32_t nframes;        /* SAMPLE: at most STROBE_SAMPLE_MAX_FRAMES (sample.h) */
  const uint32_t *frames;  /* SAMPLE: function ids, leaf first (strobe_capture_query_function) */
  int cut;                 /* SAMPLE: 1 when deeper frames were cut at the writer's bound */
  int out;                 /* SWITCH: 1 switched out, 0 switched back in */
  int preempted;           /* SWITCH out: 1 when it was still runnable (preempted), 0 when it blocked */
} strobe_capture_sample;

/* A sampled function (docs/exploration.md §Sampling): named from the
 * writer's symbol tables once per function. Owned by the capture. */
typedef struct strobe_capture_function {
  uint32_t id;          /* 1.. */
  const char *name;     /* demangled; "?? object" when no symbol covered the address */
  const char *module;   /* path of its object; "" when none */
  int resolved;         /* 1 when a symbol named it */
} strobe_capture_function;

/* What a CLOCK_PAIR, GPU_SPAN, GPU_MARK or LANE_SPAN record carries (docs/gpu.md,
 * docs/capture-format.md DEVICE). Device times are raw: the reader maps
 * them with every pair of the capture (strobe_capture_map_device). Names
 * are owned by the capture; valid until strobe_capture_close. */
typedef struct strobe_capture_device {
  const char *domain;        /* CLOCK_PAIR, GPU_SPAN, LANE_SPAN: the clock domain's name ("" for a lane in host ticks) */
  double ticks_per_second;   /* CLOCK_PAIR: the domain's nominal rate */
  uint64_t device_ticks;     /* CLOCK_PAIR: the device time read */
  uint64_t host_before;      /* CLOCK_PAIR: host ticks just before the read */
  uint64_t host_after;       /* CLOCK_PAIR: host ticks just after it (the record's ticks) */
  const char *queue;         /* GPU_SPAN: the queue lane's name; LANE_SPAN: the producer lane's name */
  const char *pass;          /* GPU_SPAN: the pass kind; "" when none */
  uint64_t frame_id;         /* GPU_SPAN: the issuing frame (0: none); GPU_MARK: the frame */
  uint64_t device_begin;     /* GPU_SPAN, LANE_SPAN: ticks of the domain */
  uint64_t device_end;       /* GPU_SPAN, LANE_SPAN: ticks of the domain, >= device_begin */
  uint32_t instant;          /* GPU_MARK: strobe_gpu_instant (gpu.h); a newer writer's numbers are kept */
} strobe_capture_device;

/* One stage of an operation (session.h STROBE_STAGE), aggregated over the
 * operation: how often it ran in it and for how long. */
typedef struct strobe_capture_stage {
  uint32_t site;        /* the stage's site id (kind STROBE_SITE_STAGE; parent names what it is nested in) */
  uint32_t count;       /* times it ran in this operation */
  double total_ns, min_ns, max_ns; /* summed, fastest, slowest run */
  uint32_t parent;      /* its run-time parent: the stage site of the same operation open around it when it ran
                         * (docs/sessions.md §Stages nest at run time); 0: none, or not known (op->stage_parents 0) */
  int remote;           /* 1: it ran in the process the operation was resumed from (docs/sessions.md §Across
                         * processes); 0 also when not known */
} strobe_capture_stage;

/* One counter of an operation (strobe_op_counter_add): its sum over the operation. */
typedef struct strobe_capture_op_counter {
  const char *name;     /* static label; "" when the writer's label table was full */
  double value;
  const char *kind;     /* its kind in the family `name` (strobe_op_counter_add_kind); "" for none */
  uint32_t unit;        /* strobe_unit of its value (strobe_op_counter_add_unit; strobe_unit_name NULL for a
                           newer writer's unit); STROBE_UNIT_NONE for none and for captures before units */
} strobe_capture_op_counter;

/* An operation (session.h): a pass (frame), rebuild, input dispatch or request.
 * Pointed at by OP_* records; valid until the next strobe_capture_next call. */
typedef struct strobe_capture_op {
  uint32_t collector;   /* which collector of the process (1-based); ids are per collector */
  uint64_t id;          /* operation id: monotonic per collector, as in session reports */
  uint32_t kind;        /* strobe_op_kind (session.h): 1 pass, 2 rebuild, 3 input, 4 request */
  const char *window;   /* the window's toolkit id ("main"); "" when unknown */
  uint64_t frame_id;    /* passes: the frame id every consumer shows (the application's own when given) */
  int app_frame_id;     /* 1 when frame_id was given by the application (strobe_op_begin_frame) */
  int devtools;         /* 1 for a devtools window's operation */
  /* OP_END only: */
  int committed;        /* 0 for superseded or dropped work (kept, flagged) */
  int idle;             /* OP_END: the application marked it idle (strobe_op_mark_idle); 0 before the flag */
  int handed_off;       /* resumed on another thread at least once */
  int detail;           /* 1 when stages and counters were kept from its beginning; 0: they are absent, not zero */
  uint64_t start_ticks; /* OP_BEGIN, OP_END: when it began (OP_END: the record's ticks are its end) */
  double start_ns;      /* ns since the epoch */
  double duration_ns;   /* OP_END: end minus start */
  uint32_t nstages;     /* at most 32 */
  uint32_t stages_dropped;   /* distinct stages past the per-operation bound: not kept, counted */
  const strobe_capture_stage *stages;
  int stage_parents;    /* 1: the END carried each stage's run-time parent and process (stages[].parent, .remote);
                         * 0: a writer from before them, whose stages say only their declared parent */
  uint32_t ncounters;   /* at most 16 */
  uint32_t counters_dropped; /* distinct counters past the per-operation bound: not kept, counted */
  const strobe_capture_op_counter *counters;
  /* OP_TAKE and OP_RESUME between processes (docs/sessions.md §Across
   * processes); 0, NULL or "" otherwise. A merge joins the two sides of an
   * operation by (origin_collector, origin_id). */
  int remote;           /* 1: handed to (TAKE) or resumed from (RESUME) another process */
  const char *process;  /* this process's label ("" when the writer's label table was full) */
  const char *peer;     /* TAKE: the process it was handed to; RESUME: the process it came from */
  uint64_t origin_collector; /* the originating collector's random id (TAKE: this one's) */
  uint64_t origin_id;   /* the operation's id in the originating collector (TAKE: = id) */
  uint32_t origin_pid;  /* the originating process's pid (TAKE: this one's) */
  uint64_t handed_off_ticks; /* when the origin handed it off, in this capture's ticks (TAKE: the record's) */
  double gap_ns;        /* RESUME: from the hand-off in the origin to the resume here; TAKE: 0 */
  /* OP_END: its population, the transition label it was given (strobe_op_set_population; static, content-free);
   * "" for none, for a capture from before populations and when the writer's label table was full. NULL for
   * the other records. */
  const char *population;
} strobe_capture_op;

/* One style property of a tree node: a static name and its number. */
typedef struct strobe_capture_tree_prop {
  const char *name;     /* owned by the capture; valid until the next strobe_capture_next call */
  double value;
} strobe_capture_tree_prop;

/* One node of a UI-tree snapshot (strobe/tree.h), in the order its layout
 * pass visited it. */
typedef struct strobe_capture_tree_node {
  uint32_t depth;       /* 0 for a root; never more than one deeper than the node before it */
  uint32_t type;        /* the element type: a site id of kind STROBE_SITE_ELEMENT */
  uint64_t id;          /* the element id (strobe_element_id), as ELEMENT records carry it */
  float x, y, width, height; /* resolved bounds, in the application's units */
  uint32_t nprops;      /* at most STROBE_TREE_MAX_PROPS */
  const strobe_capture_tree_prop *props;
} strobe_capture_tree_node;

/* A UI-tree snapshot: a flat preorder list (docs/capture-format.md, TREE).
 * Pointed at by TREE records; valid until the next strobe_capture_next call. */
typedef struct strobe_capture_tree {
  uint64_t seq;         /* the process's snapshot number, from 1 */
  uint64_t ticks;       /* when its layout pass began (strobe_tree_begin) */
  double time_ns;       /* ns since the epoch */
  uint32_t nnodes;
  uint64_t nodes_dropped; /* nodes past STROBE_TREE_MAX_NODES: not kept, counted */
  uint64_t props_dropped; /* properties past STROBE_TREE_MAX_PROPS per node (or the key table): counted */
  const strobe_capture_tree_node *nodes;
} strobe_capture_tree;

/* Rebuilds a snapshot's tree in one linear pass with a stack: for each node,
 * pop while the top is as deep or deeper; what is left on top is its parent.
 * Writes parent[i] (the index of node i's parent, -1 for a root) for each of
 * tree->nnodes nodes. Returns 0, STROBE_EINVAL for NULL arguments, or
 * STROBE_ECORRUPT when a node is more than one deeper than the one before it
 * (parent is then partly written). Pure: any thread. */
STROBE_API int strobe_capture_tree_parents(const strobe_capture_tree *tree, int32_t *parent);

/* Where an attachment's content is (docs/capture-format.md, ATTACH). */
enum {
  STROBE_CAPTURE_ATTACH_STORED = 0,  /* here: `bytes` */
  STROBE_CAPTURE_ATTACH_EARLIER = 1, /* in an earlier ATTACH record of the same resource id (once per resource) */
  STROBE_CAPTURE_ATTACH_CUT = 2      /* nowhere: the capture's content bound was reached (counted in totals) */
};

/* An attachment (strobe/deep.h). Pointed at by ATTACHMENT records; it and
 * its strings and bytes are valid until the next strobe_capture_next call. */
typedef struct strobe_capture_attachment {
  uint64_t frame;         /* the application's frame id it belongs to */
  uint64_t resource;      /* its resource id (never 0) */
  uint64_t ticks;         /* when it was attached */
  double time_ns;
  const char *media_type; /* 1-64 bytes */
  uint32_t width, height; /* images: pixels; 0 otherwise */
  uint32_t state;         /* STROBE_CAPTURE_ATTACH_STORED, _EARLIER or _CUT */
  uint64_t size;          /* its content's bytes (rows packed), stored here or not */
  const void *bytes;      /* STORED: `size` bytes; NULL otherwise */
} strobe_capture_attachment;

/* One draw call of a deep capture, in the order the renderer issued it. */
typedef struct strobe_capture_draw_call {
  uint32_t seq;           /* its sequence number in the frame, from 0 */
  const char *kind, *pipeline, *pass; /* labels, owned by the capture */
  uint32_t vertex_first, vertex_count, instance_first, instance_count;
  int has_geometry;       /* 1: bounds and clip are its surface geometry */
  float bounds[4], clip[4]; /* x, y, width, height */
  uint32_t nrefs;         /* at most STROBE_DEEP_MAX_REFS */
  const strobe_draw_ref *refs; /* the resources it reads (strobe/deep.h roles) */
} strobe_capture_draw_call;

/* A deep capture: one frame's command stream (docs/capture-format.md,
 * DEEP). Pointed at by DEEP records; valid until the next
 * strobe_capture_next call. Resource contents are ATTACHMENT records. */
typedef struct strobe_capture_deep {
  uint64_t seq;           /* the process's deep capture number, from 1 */
  uint64_t frame;         /* the application's frame id */
  uint64_t ticks;         /* when the frame's rendering began (strobe_deep_begin) */
  double time_ns;
  uint32_t ncalls;        /* at most STROBE_DEEP_MAX_CALLS */
  uint64_t calls_dropped; /* calls past it: not kept, counted */
  const strobe_capture_draw_call *calls;
} strobe_capture_deep;

typedef struct strobe_capture_record {
  strobe_capture_record_type type;
  uint32_t thread;      /* thread index */
  uint32_t site;        /* site id, where the type has one */
  uint32_t depth;       /* BEGIN/END: the scope's depth, 1 = outermost */
  uint64_t ticks;       /* raw ticks, where the type has a time */
  double time_ns;       /* ns since the collector epoch */
  double duration_ns;   /* END: inclusive duration */
  double self_ns;       /* END: duration minus its direct children's durations */
  double value;         /* VALUE, COUNTER (delta), GAUGE (level) */
  uint64_t count;       /* CUMULATIVE: iterations */
  double total_ns, min_ns, max_ns; /* CUMULATIVE */
  uint64_t lost;        /* LOST: events dropped */
  int unwound;          /* END: 1 when the scope's END never ran (longjmp, exception, thread exit) and this END
                         * was written when that was found: its duration is an upper bound, not a measurement */
  const strobe_capture_op *op; /* OP_*: the operation; NULL for other types */
  const strobe_capture_device *device; /* CLOCK_PAIR, GPU_SPAN, GPU_MARK; NULL for other types. Valid until the
                                        * next strobe_capture_next call */
  uint64_t element;     /* ELEMENT: the element id (strobe_element_id) */
  uint64_t address;     /* ALLOC, FREE: the address the application gave (an id: never dereferenced) */
  uint64_t bytes;       /* ALLOC: its size in bytes */
  const strobe_capture_tree *tree; /* TREE: the snapshot; NULL for other types */
  const strobe_capture_sample *sample; /* SAMPLE, SWITCH; NULL for other types */
  const strobe_capture_attachment *attachment; /* ATTACHMENT; NULL for other types */
  const strobe_capture_deep *deep; /* DEEP; NULL for other types */
  uint32_t origin;      /* TREE, ATTACHMENT, DEEP of a merged capture: 1 + the index of the input it came from in
                         * strobe_capture_query_merge()->inputs (read at the end: check it against ninputs); 0 in
                         * a capture not merged, or merged before merges recorded it (docs/capture-format.md, ORIGIN) */
} strobe_capture_record;

typedef struct strobe_capture_totals {
  uint64_t blocks;        /* blocks read */
  uint64_t events;        /* events read */
  uint64_t scopes;        /* END records returned for completed scopes (unwound ones not included) */
  uint64_t unwound;       /* END records returned with `unwound` set (docs/recording.md, Unwinding) */
  uint64_t lost;          /* events the writer dropped */
  uint64_t orphan_ends;   /* ENDs whose BEGIN predates the capture: skipped */
  uint64_t unfinished;    /* scopes still open at thread end or end of file */
  uint64_t lost_scopes;   /* open scopes closed by a LOST marker (their END was dropped) */
  uint64_t ops;           /* OP_END records returned (completed operations) */
  uint64_t op_events;     /* OP_* records returned */
  int footer;             /* 1 when the file has its FOOTER (a clean stop) */
  int cut_short;          /* 1 when the file ends without a footer or inside a block */
  uint64_t end_ticks;     /* from the footer, else the last event's */
  strobe_misuse misuse;   /* from the footer */
  uint64_t drain_cpu_ns;  /* the drain's CPU time while this capture recorded (last DRAIN block); 0: none */
  uint64_t drain_events;  /* the events it drained meanwhile (for every consumer at once) */
  uint64_t clock_pairs;   /* CLOCK_PAIR records returned */
  uint64_t clock_pairs_dropped; /* pairs past the reader's bound per domain (STROBE_CAPTURE_MAX_PAIRS): returned as
                                 * records but not used by strobe_capture_map_device */
  uint64_t gpu_spans;     /* GPU_SPAN records returned */
  uint64_t gpu_marks;     /* GPU_MARK records returned */
  uint64_t trees;         /* TREE records returned */
  uint64_t trees_dropped; /* snapshots the writer refused past its per-capture bound (TREE_TOTALS) */
  uint64_t attachments;   /* ATTACHMENT records returned */
  uint64_t deeps;         /* DEEP records returned */
  /* From the CONTENT_TOTALS block (all 0 without it: no attachment or deep capture was written). */
  uint64_t attach_limit;        /* the writer's content bytes per capture */
  uint64_t attach_stored;       /* attachments whose content is stored */
  uint64_t attach_stored_bytes; /* their content bytes (before compression) */
  uint64_t attach_earlier;      /* attachments of a resource stored earlier (content not repeated) */
  uint64_t attach_cut;          /* attachments cut by the bound: content not stored */
  uint64_t attach_cut_bytes;    /* their content bytes */
  uint64_t deeps_dropped;       /* deep captures refused past STROBE_DEEP_MAX_FRAMES */
  /* Call tracing while this capture recorded (last CALLS block, docs/exploration.md); all 0: none. */
  uint64_t calls_cut_depth;     /* traced calls not recorded: deeper than max_depth */
  uint64_t calls_cut_stack;     /* ... deeper than the tracer's stack (1024 open calls per thread) */
  uint64_t calls_cut_functions; /* ... their function came after STROBE_TRACE_MAX_FUNCTIONS */
  uint64_t calls_excluded;      /* ... excluded by name */
  uint32_t calls_functions;     /* distinct traced functions met */
  uint32_t calls_unresolved;    /* of them, with no symbol at their address */
  uint64_t calls_cut_short;     /* ... shorter than min_ns (strobe/trace.h) */
  uint64_t calls_cut_order;     /* ... long enough, but held back while the thread wrote other events */
  /* The sampler while this capture recorded (strobe/sample.h; last SAMPLER block); all 0: none. */
  uint64_t samples;             /* SAMPLE records returned */
  uint64_t switches;            /* SWITCH records returned */
  uint32_t sample_rate_hz;      /* the sampler's rate (0: it was not running when last written) */
  int sample_switches;          /* 1 when it recorded context switches */
  uint64_t samples_written;     /* samples and switch records the writer's sampler read meanwhile... */
  uint64_t switches_written;
  uint64_t samples_lost;        /* ...and records the kernel dropped (a full buffer) */
  uint64_t sample_frames_cut;   /* frames cut past STROBE_SAMPLE_MAX_FRAMES */
  uint64_t sample_addresses_cut; /* frames named "(address table full)" */
  uint32_t sample_functions;    /* functions the writer's process had named by then */
  uint32_t sample_unresolved;   /* of them, "?? object" */
  uint64_t lane_spans;    /* LANE_SPAN records returned (strobe/producer.h) */
  uint64_t attach_damaged;    /* attachment blocks skipped as damaged (strobe_capture_set_skip_damaged_content)... */
  uint64_t attach_damaged_at; /* ...and the byte where the first began (0: none) */
  /* From the RECOVERY block strobe_capture_recover writes (docs/recording.md §Crash journal). */
  int recovered;               /* 1: the writer crashed and its journal's events were added */
  uint64_t recovered_events;   /* ring events taken from the journal */
  uint64_t recovered_threads;  /* threads they belong to */
  uint64_t unrecoverable;      /* journal events that could not be decoded (a site the drain never met) */
  /* The overflow modes while this capture recorded (last RINGS block, docs/capture-format.md); both 0 for none,
   * and for a writer from before the block. */
  uint64_t rings_grown;        /* rings its producers doubled (overflow mode grow) */
  uint64_t producer_waits;     /* times its producers waited for the drain (overflow mode wait) */
} strobe_capture_totals;

/* What strobe_capture_recover did (docs/recording.md §Crash journal). */
typedef struct strobe_capture_recovery {
  uint64_t events;          /* ring events (slots) added from the journal */
  uint64_t threads;         /* journaled threads found */
  uint64_t unnamed;         /* of `events`, scopes whose site the drain never met (first entered after its last
                             * pass): recorded on a placeholder site, "strobe: site first met after the drain's
                             * last pass" */
  uint64_t unrecoverable;   /* journal slots not added: numbers of such sites (their kind is not known), and
                             * operation and GPU events that name a label or site the journal's log lacks */
  uint64_t replaced_blocks; /* the file's event, operation and device blocks after its last JOURNAL_POS that the
                             * journal's events replace (whole or not, they were not yet counted as in the file) */
  uint64_t left_threads;    /* threads that had left the journal (their ring grew onto the heap: overflow=grow,
                             * call tracing): the file keeps what it has of them, nothing is added */
} strobe_capture_recovery;

/* Recovers a capture whose writer died while it recorded: reads `path` and
 * the journal `path`.journal beside it, and writes to `out` (which may be
 * `path`: a new file is written beside it, then renamed over it) the capture
 * with every event its journaled threads had written, each exactly once,
 * followed by a RECOVERY block; no footer (the writer never stopped). Running
 * it again on its own result gives the same events. The journal is left
 * where it is. On error nothing is written: STROBE_ENOTFOUND (no journal),
 * STROBE_EFOREIGN (the journal is not the one the capture's header names,
 * or the capture names none), STROBE_EBADMAGIC, STROBE_EVERSION (another
 * journal version, or a library whose thread state is laid out otherwise),
 * STROBE_ETRUNCATED, STROBE_ECORRUPT (the journal is cut short or
 * inconsistent), STROBE_EIO (errno says why), STROBE_ENOMEM, and the errors
 * of strobe_capture_open for the capture. *stats (may be NULL) is filled on
 * success. Any thread. */
STROBE_API int strobe_capture_recover(const char *path, const char *out, strobe_capture_recovery *stats);

/* Opens a capture file and reads its header. On success *out owns the file
 * (close with strobe_capture_close). On error *out is NULL and the code is
 * STROBE_EIO (errno says why the file could not be opened), STROBE_EBADMAGIC,
 * STROBE_EVERSION, STROBE_ETRUNCATED, STROBE_ECORRUPT or STROBE_ENOMEM;
 * STROBE_EINVAL when path or out is NULL, or when path is not a regular file
 * (a directory, FIFO, socket or device): those are refused without blocking,
 * never waited on. A pipe or FIFO is read with strobe_capture_open_fd. */
STROBE_API int strobe_capture_open(const char *path, strobe_capture **out);
/* Reads a capture as a stream from descriptor fd (a pipe, FIFO, socket or
 * file, from its current position), e.g. standard input. The capture reads
 * its own duplicate of fd: the caller keeps fd, on success and on error, and
 * may close it at once. Reading blocks while the writer is silent; the
 * reader never seeks, so every record comes in one pass. Errors as
 * strobe_capture_open (STROBE_EINVAL for a negative fd or a NULL out). */
STROBE_API int strobe_capture_open_fd(int fd, strobe_capture **out);
/* Same over bytes in memory; the bytes must outlive the capture. */
STROBE_API int strobe_capture_open_memory(const void *data, size_t len, strobe_capture **out);
/* Frees everything. Accepts NULL. */
STROBE_API void strobe_capture_close(strobe_capture *c);

/* The header read at open; owned by the capture, valid until strobe_capture_close. */
STROBE_API const strobe_capture_header *strobe_capture_query_header(const strobe_capture *c);

/* Reads the next record into *rec. Returns 1 when a record was produced, 0 at
 * the clean end of the file, or a negative error (STROBE_ETRUNCATED,
 * STROBE_ECORRUPT, STROBE_ERANGE, STROBE_EIO, STROBE_ENOMEM). Errors are
 * sticky: later calls return the same error. */
STROBE_API int strobe_capture_next(strobe_capture *c, strobe_capture_record *rec);

/* Which records strobe_capture_next and _next_batch return: bit
 * (1 << type) for each strobe_capture_record_type wanted;
 * STROBE_CAPTURE_ALL_RECORDS, every type, is the default. Records of the
 * other types are still read (sites, threads, scope stacks, durations and
 * totals are the same), only not returned: a reader that never looks at
 * BEGIN records (`strobe report`) saves writing them and skipping them.
 * Takes effect from the next record. Returns 0, or STROBE_EINVAL (c NULL,
 * types 0 or with bits that name no type; nothing changes). */
STROBE_API int strobe_capture_set_records(strobe_capture *c, uint64_t types);

/* Opt-in for readers of content (replay, strobe calls): an attachment block
 * whose checksum or compressed data fails (one resource's content or one
 * screenshot, self-contained: nothing after it depends on it) is skipped and
 * counted in totals.attach_damaged, with where the first began, instead of
 * ending the read; any other damaged block still ends it with its error.
 * Takes effect from the next block. Returns 0, or STROBE_EINVAL (c NULL). */
STROBE_API int strobe_capture_set_skip_damaged_content(strobe_capture *c, int on);

/* The most records strobe_capture_next_batch returns at once. */
#define STROBE_CAPTURE_BATCH_MAX 128
/* Reads the next records at once, for a reader that goes through millions
 * (`strobe report` reads this way): the same records strobe_capture_next
 * returns one by one, in the same order, every field the same, without a
 * call and a cleared record each. On success *recs points at the first of
 * the returned count (1..STROBE_CAPTURE_BATCH_MAX) in an array the capture
 * owns, valid until the next strobe_capture_next, _next_batch or _close
 * call. Returns 0 at the clean end of the file, or a negative error as
 * strobe_capture_next (*recs NULL both times); an error met after some
 * records returns them first and the error at the next call. Errors are
 * sticky. The two calls may be mixed.
 *
 * A batch holds the scopes, numbers and frames of one thread's events; any
 * other record (SITE, THREAD, OP_*, GPU, SAMPLE, TREE, ...) ends its batch,
 * so what a record points at (op, device, tree, sample, attachment, deep)
 * and the capture's queries (threads, totals, position) are as of the
 * batch's last record while it is read. */
STROBE_API int strobe_capture_next_batch(strobe_capture *c, const strobe_capture_record **recs);

/* Sites and threads defined so far (all of them once strobe_capture_next returned <= 0).
 * Lookups return NULL for ids not defined; what they return is owned by the
 * capture and valid until strobe_capture_close. */
STROBE_API uint32_t strobe_capture_query_site_limit(const strobe_capture *c); /* one past the largest defined id */
STROBE_API const strobe_capture_site *strobe_capture_query_site(const strobe_capture *c, uint32_t id);
STROBE_API uint32_t strobe_capture_query_thread_count(const strobe_capture *c);
STROBE_API const strobe_capture_thread *strobe_capture_query_thread(const strobe_capture *c, uint32_t index);

/* Sampled functions defined so far (SAMPLE_FUNCS blocks): one past the
 * largest id, and one by id (NULL when not defined). */
STROBE_API uint32_t strobe_capture_query_function_limit(const strobe_capture *c);
STROBE_API const strobe_capture_function *strobe_capture_query_function(const strobe_capture *c, uint32_t id);

/* Totals as read so far; final once strobe_capture_next returned <= 0. */
STROBE_API strobe_capture_totals strobe_capture_query_totals(const strobe_capture *c);

/* >>hosts: clock-offset samples (CLOCK_OFFSETS blocks, docs/sessions.md
 * §Across hosts): the writing host's samples against other hosts, or, in a
 * merged capture, those of its inputs. At most
 * STROBE_CAPTURE_MAX_CLOCK_OFFSETS are kept; more are counted in
 * clock_offsets_cut. */
#define STROBE_CAPTURE_MAX_CLOCK_OFFSETS 4096
typedef struct strobe_capture_clock_offset {
  char local_boot_id[33]; /* the host that took the sample (32 hex digits) */
  strobe_clock_offset sample; /* its peer, the peer's boot, the offset (peer minus local) and its bound */
} strobe_capture_clock_offset;
typedef struct strobe_capture_clock_offsets {
  uint32_t count;                          /* samples read so far */
  const strobe_capture_clock_offset *samples; /* count of them, oldest first; owned by the capture */
  uint64_t replaced;                       /* samples the writing process replaced (past STROBE_CLOCK_OFFSETS_MAX) */
  uint64_t cut;                            /* samples this reader did not keep (past the bound above) */
} strobe_capture_clock_offsets;
/* The clock-offset samples read so far (all of them once strobe_capture_next
 * returned <= 0; writers put them before the FOOTER). Valid until the next
 * strobe_capture_next or strobe_capture_close. */
STROBE_API strobe_capture_clock_offsets strobe_capture_query_clock_offsets(const strobe_capture *c);

/* >>merged: how a merged capture (strobe merge, MERGE block) was made. */
#define STROBE_CAPTURE_ALIGNMENTS(X)                                                       \
  X(REFERENCE, 0, "reference")   /* the clock the others were placed on */                \
  X(SAME_BOOT, 1, "same boot")   /* one host and boot: one CLOCK_MONOTONIC, exact */      \
  X(CLOCK_OFFSET, 2, "clock offset") /* another host, through clock-offset samples */    \
  X(VOUCHED, 3, "vouched")       /* no boot id; the user said same host (--same-host) */
enum {
#define STROBE__ALIGN_ENUM(name, value, text) STROBE_ALIGN_##name = value,
  STROBE_CAPTURE_ALIGNMENTS(STROBE__ALIGN_ENUM)
#undef STROBE__ALIGN_ENUM
};
#define STROBE_CAPTURE_MAX_MERGED 64
#define STROBE_CAPTURE_REC_TYPES 32 /* not_merged is indexed by strobe_capture_record_type */
typedef struct strobe_capture_merge_input {
  char process[80];     /* its process label */
  char boot_id[33];     /* its host boot (empty: none) */
  uint64_t pid;
  uint32_t alignment;   /* STROBE_ALIGN_* */
  uint32_t hops;        /* clock-offset samples chained to reach the reference (0 unless CLOCK_OFFSET) */
  int64_t shift_ns;     /* added to its CLOCK_MONOTONIC times to place them on the merged clock */
  uint64_t error_ns;    /* its times lie within error_ns of where they belong */
} strobe_capture_merge_input;
typedef struct strobe_capture_merge {
  uint32_t ninputs;     /* 0: not a merged capture (no MERGE block read yet) */
  strobe_capture_merge_input inputs[STROBE_CAPTURE_MAX_MERGED];
  uint64_t error_ns;    /* the widest of the inputs' */
  uint64_t not_merged[STROBE_CAPTURE_REC_TYPES]; /* input records the merge could not carry, by record type */
} strobe_capture_merge;
/* A record type's name in snake case ("gpu_span", "tree", "sample"), for
 * counts by type such as not_merged; "unknown" past the known ones. Static. */
STROBE_API const char *strobe_capture_record_type_name(uint32_t type);
/* The MERGE block as read so far (NULL when none was read): final once
 * strobe_capture_next returned <= 0. Owned by the capture. */
STROBE_API const strobe_capture_merge *strobe_capture_query_merge(const strobe_capture *c);

/* >>crash: where a process that recorded with strobe_desc.crash_handler died (docs/capture-format.md §CRASH). */
typedef struct strobe_capture_crash_thread {
  uint32_t index;          /* the thread's index (strobe_capture_query_thread) */
  const char *name;
  uint32_t nscopes;        /* its open scopes kept: scopes[0] outermost, scopes[nscopes - 1] innermost */
  uint32_t scopes_cut;     /* open scopes further out than those kept */
  const char *const *scopes; /* site names */
} strobe_capture_crash_thread;
typedef struct strobe_capture_crash {
  int signal;              /* SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT (this host's numbers) */
  const char *signal_name; /* "SIGSEGV", ...; "signal N" for another */
  double time_ns;          /* when the handler ran, ns since the epoch */
  int fault_thread_known;  /* 1: the signal came on a recorded thread, fault_thread */
  uint32_t fault_thread;
  const char *fault_thread_name; /* "" when unknown */
  const char *op_kind;     /* its open operation's kind ("pass", "rebuild", "input", ...); NULL: none open */
  uint64_t frame_id;       /* that operation's frame id (a pass) */
  const char *stage;       /* its innermost open stage; "" when none */
  uint32_t nthreads;       /* threads described... */
  uint32_t threads_cut;    /* ...and those past the bound (64) */
  const strobe_capture_crash_thread *threads;
} strobe_capture_crash;
/* The CRASH block as read (NULL when none was: the process did not crash, or
 * had no crash handler). Owned by the capture, valid until strobe_capture_close. */
STROBE_API const strobe_capture_crash *strobe_capture_query_crash(const strobe_capture *c);
/* Where it died in one sentence, as strobe info, strobe report and the viewer say it: "SIGSEGV on thread ui in
 * pass 394 › layout_compute" (UTF-8), cut to cap - 1 bytes; returns buf. Pure: any thread. */
STROBE_API const char *strobe_capture_crash_text(const strobe_capture_crash *k, char *buf, size_t cap);

/* Bytes of the file (or memory) consumed so far: the header, every block
 * read, and the part of a block read before it turned out truncated. For
 * progress display; 0 for NULL. */
STROBE_API uint64_t strobe_capture_query_position(const strobe_capture *c);

/* Converts ticks of this capture to ns since its epoch. */
STROBE_API double strobe_capture_ticks_to_ns(const strobe_capture *c, uint64_t ticks);

/* >>device time (docs/gpu.md §Captures store raw pairs; readers map) */
#define STROBE_CAPTURE_MAX_PAIRS 262144u /* calibration pairs kept per clock domain (~73 min at 60 a second) */
#define STROBE_CAPTURE_MAX_DOMAINS 64u   /* clock domains a reader tells apart */

/* A device time on the capture's timeline. */
typedef struct strobe_capture_mapping {
  double time_ns;      /* ns since the capture's epoch, like every record's time_ns */
  double bound_ns;     /* +- error bound of the fit (gpu.h strobe_clock_mapping) */
  uint32_t pairs;      /* pairs the fit used */
} strobe_capture_mapping;

/* Maps device ticks of clock domain `domain` onto the capture's timeline
 * with the calibration pairs read so far (all of them once
 * strobe_capture_next returned <= 0, which is when to map: pairs written
 * after a span improve its mapping). The fit takes the
 * STROBE_CLOCK_FIT_PAIRS (gpu.h: 32) pairs nearest in device time, as the
 * writer's live fit would have with its window centred there. Domain ""
 * is the host clock (a producer lane in host ticks, strobe/producer.h):
 * its ticks map as they are, bound 0, pairs 0. Returns 0;
 * STROBE_EINVAL (NULL argument) or STROBE_ESTATE (no pair of that domain
 * read); *out is zeroed on error. Not const: it sorts the pairs it has on
 * first use after new ones were read. */
STROBE_API int strobe_capture_map_device(strobe_capture *c, const char *domain, uint64_t device_ticks,
                                         strobe_capture_mapping *out);

/* >>deprecated: old names, kept for one release (strobe.h states the conventions). */
#if !defined(STROBE_NO_DEPRECATED)
STROBE_DEPRECATED("use strobe_capture_query_header")
static inline const strobe_capture_header *strobe_capture_get_header(const strobe_capture *c) {
  return strobe_capture_query_header(c);
}
STROBE_DEPRECATED("use strobe_capture_query_site_limit")
static inline uint32_t strobe_capture_site_limit(const strobe_capture *c) { return strobe_capture_query_site_limit(c); }
STROBE_DEPRECATED("use strobe_capture_query_site")
static inline const strobe_capture_site *strobe_capture_get_site(const strobe_capture *c, uint32_t id) {
  return strobe_capture_query_site(c, id);
}
STROBE_DEPRECATED("use strobe_capture_query_thread_count")
static inline uint32_t strobe_capture_thread_count(const strobe_capture *c) {
  return strobe_capture_query_thread_count(c);
}
STROBE_DEPRECATED("use strobe_capture_query_thread")
static inline const strobe_capture_thread *strobe_capture_get_thread(const strobe_capture *c, uint32_t index) {
  return strobe_capture_query_thread(c, index);
}
STROBE_DEPRECATED("use strobe_capture_query_totals")
static inline strobe_capture_totals strobe_capture_get_totals(const strobe_capture *c) {
  return strobe_capture_query_totals(c);
}
STROBE_DEPRECATED("use strobe_capture_query_position")
static inline uint64_t strobe_capture_position(const strobe_capture *c) { return strobe_capture_query_position(c); }
#endif

#ifdef __cplusplus
}
#endif

#endif /* STROBE_CAPTURE_H */
