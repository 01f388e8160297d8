/*
 * session.h — collectors, windows, operations (frames, rebuilds, input
 * dispatch, requests), stages, application scopes, and bounded profiling
 * sessions that report on them (JSON v1, docs/report-schema.json).
 *
 * Semantics follow docs/sessions.md sentence by sentence. In short:
 *  - A collector owns one root tree's windows, live operations and sessions.
 *    It is reference counted: the owner creates and closes it; any number of
 *    handles (strobe_collector_retain) may outlive the close, and may then
 *    read and end existing sessions but not start new ones.
 *  - A session admits only whole operations that started at or after its
 *    start and finished while it was active. Work still running at a read or
 *    end is reported apart, as unfinished, never as a duration.
 *  - Read and end take only the collector's short lock, never wait for
 *    application work, and build JSON after releasing it.
 *
 *  - Operations, their stages and counters, and hand-offs are also written
 *    into captures, the flight recorder and the live stream while one of
 *    them records (docs/capture-format.md, OPS block): one instrumentation
 *    feeds every consumer.
 *
 * Thread rule: every function here is safe to call from any thread. A
 * strobe_op or strobe_app_scope value is used by one thread at a time
 * (hand an operation to another thread with strobe_op_take/strobe_op_resume).
 */
#ifndef STROBE_SESSION_H
#define STROBE_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "strobe/strobe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* >>bounds (docs/sessions.md §Bounds and lifecycle) */
#define STROBE_MAX_SESSIONS 8            /* concurrent sessions per collector, all consumers together */
#define STROBE_MAX_SAMPLES 240           /* retained samples per session */
#define STROBE_DEFAULT_SAMPLES 120
#define STROBE_MAX_WINDOWS 64            /* tracked windows per collector */
#define STROBE_MAX_WINDOW_ID 256         /* bytes of UTF-8 in a window id */
#define STROBE_MAX_LIVE_OPS 128          /* operations running at once per collector (an event loop's requests in flight); at most 255 */
#define STROBE_MAX_LIVE_APP_SCOPES 64    /* application scopes running at once per collector */
#define STROBE_MAX_APP_SCOPE_HISTORY 128 /* completed application scopes per session: min(max_samples, 128) */
#define STROBE_MAX_ENDED_IDS 64          /* ended session ids remembered as "ended" */
#define STROBE_MAX_STAGES 32             /* distinct stages per operation */
#define STROBE_MAX_STAGE_RUNS 64         /* runs with their times per operation (strobe_session_desc.stage_runs) */
#define STROBE_MAX_OP_COUNTERS 16        /* distinct counters per operation */
#define STROBE_MAX_GAUGES 16             /* memory gauges per collector */
#define STROBE_MAX_UNAVAILABLE 8         /* stages and counters declared unavailable per operation */
#define STROBE_MAX_LABEL 64              /* bytes of a label: letters, digits and underscore */
#define STROBE_SESSION_ID_MAX 32         /* bytes of a session id, with terminator */
#define STROBE_MAX_STAGE_SUMMARY 128     /* stage_summary entries a report's JSON carries (the rest counted) */
/* The label rule (docs/sessions.md §The label rule): every label that can
 * leave the process in a report or over MCP is a name, 1..64 bytes of
 * [A-Za-z0-9_], or a window id, 1..256 bytes of [A-Za-z0-9_./:-] (no spaces).
 * A call that can return an error refuses anything else with STROBE_ELABEL; one
 * that cannot (a macro, a void call) records it under this placeholder and
 * the report counts it (counts.labels_replaced). */
#define STROBE_INVALID_LABEL "invalid_label"
/* 1 when `label` follows the name rule above (1-64 bytes of [A-Za-z0-9_]), 0
 * otherwise (NULL too): the check every call here makes, for a binding or
 * tool that refuses a bad label before it first uses it (python/: a stage
 * name raises ValueError). Any thread. */
STROBE_API int strobe_label_valid(const char *label);
/* STROBE_STALL_FACTOR (strobe.h): when an unfinished operation is "stalled". */

/* >>collector */
typedef struct strobe_collector strobe_collector;

/* Creates a collector for one root tree (epoch = now). Returns 0, STROBE_ENOMEM or
 * STROBE_EFEATURE_DISABLED. The caller owns one reference. */
STROBE_API int strobe_collector_create(strobe_collector **out);
/* The process's default collector, created on first use; never closed. NULL if profiling is compiled out. */
STROBE_API strobe_collector *strobe_default_collector(void);
/* Another handle to the same collector (for a server or diagnostic thread). */
STROBE_API strobe_collector *strobe_collector_retain(strobe_collector *c);
/* Drops a handle; the collector is freed with its last handle. Accepts NULL. */
STROBE_API void strobe_collector_release(strobe_collector *c);
/* Closes the root tree: live operations and application scopes are abandoned
 * (counted, never completed), no session can start, existing sessions can
 * still be read and ended. Idempotent. */
STROBE_API void strobe_collector_close(strobe_collector *c);

/* >>windows */
typedef struct strobe_window {
  uint32_t id; /* slot index + 1 in the low 8 bits, generation above; 0 = none */
} strobe_window;

enum { STROBE_WINDOW_DEVTOOLS = 1 }; /* excluded from sessions unless include_devtools */

/* Registers a toolkit window identity ("main", "w1", "w1/popup"): never an
 * application title. Returns 0 and *out, or STROBE_ELABEL (the id breaks the
 * window-id rule, STROBE_INVALID_LABEL above: counted as untracked),
 * STROBE_ELIMIT (64 tracked and no closed slot to reuse: counted as
 * untracked), STROBE_EBUSY (id already open), STROBE_ECLOSED, STROBE_EINVAL
 * (NULL arguments). */
STROBE_API int strobe_window_register(strobe_collector *c, const char *id, uint32_t flags, strobe_window *out);
/* Closes a window: its live work is abandoned; its metadata stays until the slot is needed. */
STROBE_API int strobe_window_close(strobe_collector *c, strobe_window w);
/* Looks up an open window by id. */
STROBE_API int strobe_window_find(strobe_collector *c, const char *id, strobe_window *out);

/* >>operations */
/* strobe_op_kind and STROBE_OP_KINDS are in strobe.h: captures carry the kinds too. */

typedef struct strobe_op {
  uint32_t id; /* live slot + generation; 0 = inert (refused or profiling off) */
  strobe_collector *collector;
} strobe_op;

/* Begins an operation on the calling thread and makes it the thread's current
 * one (the outer one, if any, is restored when this one ends). Takes one
 * timestamp and the collector's short lock. Never fails the caller's work: on
 * refusal (closed collector, unknown window, 128 live) the result is inert and
 * *status (if not NULL) says why. */
STROBE_API strobe_op strobe_op_begin(strobe_collector *c, strobe_window w, strobe_op_kind kind, int *status);
/* Begins a pass (STROBE_OP_PASS) whose frame id is the application's own
 * frame counter (GDK's frame clock counter, a game's frame number) instead of
 * Strobe's per-window count, so session reports, captures, the viewer,
 * `strobe report` and flight-recorder dumps name a frame exactly as the
 * toolkit does (docs/sessions.md "Frame ids"). Any value is accepted, in any
 * order; the window's pass count still grows by one. Otherwise exactly
 * strobe_op_begin(c, w, STROBE_OP_PASS, status). */
STROBE_API strobe_op strobe_op_begin_frame(strobe_collector *c, strobe_window w, uint64_t frame_id, int *status);
/* Begins an operation dispatched inside the phase of the calling thread's
 * current operation (its innermost open stage): input that a toolkit
 * delivers inside a frame, where a handler may stop the signal and nothing
 * marks the end of dispatch. It ends like any operation, or implicitly
 * (committed, at that moment) when that stage ends or its operation ends,
 * whichever comes first; the sample then says ended_implicitly. With no stage
 * open it is an ordinary operation. Refusals as strobe_op_begin.
 * (docs/sessions.md §Input inside a pass) */
STROBE_API strobe_op strobe_op_begin_in_phase(strobe_collector *c, strobe_window w, strobe_op_kind kind,
                                              int *status);
/* Ends it: committed = 1 for a completed unit; 0 for superseded or dropped
 * work, which is still kept as a sample with committed: false. Operations
 * begun inside it on this thread and still open are left running (sessions
 * count the end as interleaved), except those begun in the phase of one of
 * its stages, which end with it. Its stages still open are dropped. */
STROBE_API void strobe_op_end(strobe_op op, int committed);
/* Detaches the calling thread's current operation so another thread can
 * resume it (take / hand off / resume: docs/sessions.md §The frame model). Returns the operation
 * (inert if none). */
STROBE_API strobe_op strobe_op_take(void);
/* Makes op the calling thread's current operation. */
STROBE_API void strobe_op_resume(strobe_op op);
/* Sets the calling thread's current operation aside with its open stages,
 * for a thread that suspends it and runs other work meanwhile (an event
 * loop's task awaiting: docs/sessions.md §Parked operations). It stays live
 * (sessions see it unfinished), the outer operation becomes current, and
 * strobe_op_unpark makes it current again on this thread with its stages as
 * they were, their times running on; unlike strobe_op_take it is no hand-off
 * and records no event. Its stages' handles still end only on this thread,
 * and their capture scopes stay on the scope stack they began on: code that
 * interleaves operations on one thread gives each its own fiber (strobe.h
 * >>fibers) so those scopes nest. Returns the operation (inert if none). */
STROBE_API strobe_op strobe_op_park(void);
/* Makes a parked operation the calling thread's current one again, with its
 * stages. Stages that no longer fit the thread's 16 open stages are dropped,
 * counted in the sample's stages_dropped. Returns 0; STROBE_ESTATE when op is
 * not parked (ended, abandoned, never parked or already unparked: nothing
 * changes); STROBE_EINVAL for an inert op or one parked by another thread. */
STROBE_API int strobe_op_unpark(strobe_op op);
/* >>across processes (docs/sessions.md §Across processes; the token's layout
 * is in docs/sessions.md §The operation token). A frame that spans two
 * processes (a screen process times its stages and hands the partial frame
 * to a sender process, which resumes it and commits or drops it) travels as
 * a token: a small versioned byte string naming the originating process (its
 * process label, pid and its collector's random id), the host's boot (so a
 * receiver on the same host aligns times exactly through CLOCK_MONOTONIC),
 * the operation's kind, frame id, start and hand-off times and the stages it
 * ran there. The origin's session reports show the operation as handed off to
 * the named peer; the finisher's show the whole frame, with the stages of
 * both sides, each attributed to its process, and a total that includes the
 * hand-off gap. */
#define STROBE_OP_TOKEN_MAX 8192u    /* bytes a token can take (32 stages with 64-byte names and parents) */
#define STROBE_OP_TOKEN_VERSION 2u   /* the layout this library writes and the only one it reads */
#define STROBE_MAX_REMOTE_ORIGINS 16 /* origin collectors whose tokens a collector tracks for replay */
#define STROBE_REMOTE_REPLAY_WINDOW 64 /* operation ids per origin below its newest still accepted */
/* The `file` of the stage sites a finishing process registers for the stages
 * the origin ran (their names come in the token): a capture keeps it with the
 * site, so a reader tells the origin's stages in the finisher's END from the
 * finisher's own (docs/sessions.md §Across processes). */
#define STROBE_REMOTE_STAGE_FILE "(another process)"

/* Names this collector's process in tokens and reports ("screen", "sender";
 * a static label under the label rule). Until set it is "pid_<pid>". A token
 * handed to a peer is accepted only by a collector whose process label is
 * that peer. Returns 0, STROBE_ELABEL (nothing changes) or STROBE_EINVAL. */
STROBE_API int strobe_collector_set_process(strobe_collector *c, const char *label);

/* Ends op in this process by handing it to the process labelled `peer`:
 * writes its token into buf (at most cap bytes; *len is its length) and
 * completes the operation here as handed off (a sample with committed: false
 * and handed_off_to: peer; its total runs to the hand-off). op is the calling
 * thread's current operation or one taken with strobe_op_take; stages of it
 * still open on this thread are dropped, as at an end. Only closed stages
 * travel, and only when the operation kept detail (a session or a capture was
 * active at its start): otherwise the token carries none and says so. The
 * counters stay in this process's sample. Returns 0; STROBE_EINVAL (inert or
 * ended op, NULL buf or len); STROBE_ELABEL (peer breaks the label rule);
 * STROBE_ELIMIT (cap too small: *len is the size needed); STROBE_ESTATE (op
 * was itself resumed from another process: a token is handed on once). On
 * error the operation is unchanged. Thread rule: the thread that holds op. */
STROBE_API int strobe_op_hand_off_remote(strobe_op op, const char *peer, void *buf, size_t cap, size_t *len);

/* Resumes, in collector c on window w, an operation another process handed
 * off: it becomes the calling thread's current operation, with the origin's
 * start (so its total includes the hand-off gap), window id, frame id, kind,
 * population and stages (attributed to the origin's process): one frame in
 * both processes, named by the origin's window id whatever w is called (w
 * bounds its life here: closing w abandons it; a resumed pass is no pass
 * begun on w). Add stages and end it with
 * strobe_op_end (committed or dropped) as usual. A token is refused, counted
 * (strobe_collector_query_remote_stats, and each report's cross_process) and
 * the result inert, with *status: STROBE_ETOKEN (malformed, cut short,
 * corrupt: its checksum fails, or of another version), STROBE_EREPLAY
 * (already resumed here, or more than STROBE_REMOTE_REPLAY_WINDOW operations
 * older than the newest resumed from its origin), STROBE_EFOREIGN (from
 * another host or boot, whose clock this one cannot align, or addressed to a
 * process label other than this collector's), STROBE_ELIMIT (a new origin past
 * STROBE_MAX_REMOTE_ORIGINS, or STROBE_MAX_LIVE_OPS (128) live operations),
 * STROBE_ENOMEM (nothing changed, the token may be tried again), or what
 * strobe_op_begin refuses (STROBE_ECLOSED, STROBE_EWINDOW, STROBE_EINVAL). */
STROBE_API strobe_op strobe_op_resume_remote(strobe_collector *c, strobe_window w, const void *token, size_t len,
                                             int *status);

/* What a collector did with tokens since its creation. */
typedef struct strobe_remote_stats {
  uint64_t handed_off;        /* operations handed to another process */
  uint64_t resumed;           /* tokens accepted */
  uint64_t refused_malformed; /* bad magic, lengths, labels, times or stage table */
  uint64_t refused_truncated; /* shorter than the length the token states */
  uint64_t refused_version;   /* a layout version this library does not read */
  uint64_t refused_corrupt;   /* checksum mismatch */
  uint64_t refused_replayed;  /* already resumed, or older than the replay window */
  uint64_t refused_foreign;   /* another host or boot, or addressed to another process */
  uint64_t refused_limit;     /* a new origin past STROBE_MAX_REMOTE_ORIGINS, or no live slot */
} strobe_remote_stats;
/* Fills *out. Returns 0 or STROBE_EINVAL (NULL argument). */
STROBE_API int strobe_collector_query_remote_stats(strobe_collector *c, strobe_remote_stats *out);

/* 1 when the calling thread's current operation began while a session that
 * can admit it was active (for a devtools window, one with include_devtools):
 * gate expensive detail capture on this, checked once at entry. */
STROBE_API int strobe_op_detailed(void);
/* Adds to a named counter of the calling thread's current operation. The
 * name is copied; one that breaks the label rule (or NULL) is summed under
 * STROBE_INVALID_LABEL and counted (counts.labels_replaced). Nothing happens
 * while the thread has no current operation (none, or one nested past 8). */
STROBE_API void strobe_op_counter_add(const char *name, double delta);
/* Adds to one kind of a counter family of the calling thread's current
 * operation (docs/recording.md §Counters and gauges by kind): as
 * strobe_op_counter_add, with a static kind label beside the family name
 * ("draw_calls", "quads"). Each (family, kind) pair is its own counter under
 * the same bound (STROBE_MAX_OP_COUNTERS); reports carry the kind beside the
 * name, and summarise each pair per sample (mean, max). Both are copied; one
 * that breaks the label rule (or NULL) is replaced by STROBE_INVALID_LABEL
 * and counted (counts.labels_replaced). Thread rule as strobe_op_counter_add. */
STROBE_API void strobe_op_counter_add_kind(const char *family, const char *kind, double delta);
/* strobe_op_counter_add and strobe_op_counter_add_kind with the unit of the
 * counter's value (one of STROBE_UNITS, docs/recording.md §Units): session
 * reports carry it beside the counter ("unit": its name, null for none),
 * captures keep it with the operation, and `strobe report`, the exports and
 * the viewer print the counter by it. A counter keeps the unit of the first
 * add that named one: a later add with another unit is still summed into
 * it (one counter, one unit, as a site's). A unit outside STROBE_UNITS is
 * taken as STROBE_UNIT_NONE and counted (counts.labels_replaced). Thread
 * rule as strobe_op_counter_add. */
STROBE_API void strobe_op_counter_add_unit(const char *name, double delta, strobe_unit unit);
STROBE_API void strobe_op_counter_add_kind_unit(const char *family, const char *kind, double delta, strobe_unit unit);
/* Marks the calling thread's current operation idle: it had nothing to do (a
 * pass with no damage, a request answered from a cache the application does
 * not want timed). An idle operation is never a sample: each session that
 * would have kept it counts it in counts.idle instead, apart from completed
 * (docs/sessions.md §Idle passes); captures still record it, since it ran.
 * Returns 0 or STROBE_ESTATE (no current operation on this thread). */
STROBE_API int strobe_op_mark_idle(void);
/* Puts the calling thread's current operation in a population: a static
 * label (1-64 bytes of letters, digits and underscore: "push", "pop") that
 * splits its kind's percentiles in the report (population_summary), as a
 * steady-state re-render and a rebuild from a navigation answer different
 * questions. A second call replaces the first. Returns 0, STROBE_ELABEL (the
 * label breaks the rule; nothing changes) or STROBE_ESTATE (no current
 * operation on this thread). */
STROBE_API int strobe_op_set_population(const char *label);

/* What strobe_op_mark_unavailable declares missing. */
typedef enum strobe_coverage {
  STROBE_COVERAGE_STAGE = 1,  /* a stage the operation cannot time (a renderer with no profile) */
  STROBE_COVERAGE_COUNTER = 2 /* a counter it cannot count */
} strobe_coverage;

/* Declares that the calling thread's current operation has no measurement
 * of the stage or counter `name` (a static label): the report then shows it
 * as null with available: false, never as 0 or absent, and counts it in
 * `coverage` (docs/sessions.md §Coverage apart from zero). A stage or
 * counter the operation measured anyway is reported as measured. Declaring
 * the same one twice is one declaration. Returns 0, STROBE_EINVAL (`what` is
 * not a strobe_coverage), STROBE_ELABEL (name breaks the label rule),
 * STROBE_ESTATE (no current operation on this thread) or STROBE_ELIMIT
 * (STROBE_MAX_UNAVAILABLE already declared: counted in the sample's
 * stages_dropped or counters_dropped). On error nothing is declared. */
STROBE_API int strobe_op_mark_unavailable(strobe_coverage what, const char *name);

/* >>stages
 * A stage: a scope (recorded like STROBE_SCOPE) that, inside an operation,
 * publishes itself as the operation's current phase and is aggregated per
 * operation (count, total, min, max). Its parent is decided at run time: the
 * stage of the same operation open on this thread when it began
 * (docs/sessions.md §Stages nest at run time). A stage that ran under two
 * parents is reported once per parent. The parent a site declares (the
 * `parent` of STROBE_STAGE, or strobe_site.parent) is checked, never trusted:
 * each run whose declared parent was not open is counted in the report
 * (`declared_parent_not_open`). Costs a function call when nothing is active.
 * A stage name (or declared parent) that breaks the label rule is reported as
 * STROBE_INVALID_LABEL and counted; the report copies the names it shows.
 *
 * STROBE_STAGE closes at the end of the enclosing block. A toolkit whose
 * phases are signals opens and closes stages in different callbacks instead,
 * with a handle: strobe_stage_begin / strobe_stage_end, or the
 * STROBE_STAGE_BEGIN macro that declares the site for you. */
typedef struct strobe_stage {
  uintptr_t guard;   /* private: the capture scope's guard (0: not recorded) */
  uint32_t token;    /* private: this thread's stage slot + generation; 0: not a stage of an operation */
  uint32_t state;    /* private: 1 while open, 0 when inert or ended */
  const void *owner; /* private: the thread that began it */
} strobe_stage;

/* The initializer of a stage site in static storage, at file scope or in a
 * function (no function name is recorded):
 *   static strobe_site paint = STROBE_STAGE_SITE("paint", NULL); */
#define STROBE_STAGE_SITE(name, parent) \
  {(name), (const char *)0, (parent), __FILE__, (const char *)0, (uint32_t)__LINE__, STROBE_SITE_STAGE, 0, STROBE_UNIT_NONE, 0}
#define STROBE__STAGE_SITE_HERE(name, parent) \
  {(name), (const char *)0, (parent), __FILE__, __func__, (uint32_t)__LINE__, STROBE_SITE_STAGE, 0, STROBE_UNIT_NONE, 0}

/* Opens a stage of the calling thread's current operation (or only a capture
 * scope when no operation is current). `site` is static storage of kind
 * STROBE_SITE_STAGE (STROBE_STAGE_SITE); any other site gives an inert
 * handle. Never fails the caller's work: a handle that cannot be tracked
 * (16 stages already open on this thread: counted on the operation's
 * stages_dropped) is ended like any other. The handle may be ended in another
 * function, in any order relative to other stages, but on this thread. */
STROBE_API strobe_stage strobe_stage_begin(strobe_site *site);
/* Ends a stage: its time is added to the operation it began in (if that
 * operation is still this thread's and its session detail is on). Stages
 * that began inside it and are still open are re-parented to its own parent
 * (they were not wholly inside it). Input operations begun with
 * strobe_op_begin_in_phase inside it end first (docs/sessions.md §Input
 * inside a pass). Returns 0; STROBE_ESTATE when the handle is already ended
 * or inert (nothing changes); STROBE_EINVAL when it was begun on another
 * thread (nothing changes: end it there) or is NULL. */
STROBE_API int strobe_stage_end(strobe_stage *stage);

STROBE_API strobe_stage strobe__stage_begin(strobe_site *site);
STROBE_API void strobe__stage_cleanup(strobe_stage *stage);
#if defined(STROBE_DISABLE)
#define STROBE_STAGE(name, parent) ((void)0)
#define STROBE_STAGE_BEGIN(stage, name, parent) ((void)(stage))
#define STROBE_STAGE_END(stage) ((void)(stage), 0)
#else
#define STROBE_STAGE(name, parent)                                                                   \
  static strobe_site STROBE__UNIQUE(strobe__site_) = STROBE__STAGE_SITE_HERE((name), (parent));     \
  strobe_stage STROBE__UNIQUE(strobe__stage_) __attribute__((cleanup(strobe__stage_cleanup), unused)) = \
      strobe__stage_begin(&STROBE__UNIQUE(strobe__site_))
/* Opens a stage into the strobe_stage lvalue `stage` (end it with strobe_stage_end). */
#define STROBE_STAGE_BEGIN(stage, name, parent)                                \
  do {                                                                         \
    static strobe_site strobe__stage_site_ = STROBE__STAGE_SITE_HERE((name), (parent)); \
    (stage) = strobe__stage_begin(&strobe__stage_site_);                       \
  } while (0)
/* strobe_stage_end(&stage), compiled out with STROBE_DISABLE like the BEGIN. */
#define STROBE_STAGE_END(stage) strobe_stage_end(&(stage))
#endif

/* Samples a memory gauge of the collector (bytes or any level); kept at most
 * once a second per gauge, later calls within the second are ignored. The
 * name is copied; one that breaks the label rule is kept as
 * STROBE_INVALID_LABEL and counted. At most STROBE_MAX_GAUGES gauges: samples
 * of others are counted (memory.gauges_dropped). The _unit form names the
 * level's unit (STROBE_UNITS in strobe.h; the first call for a name decides,
 * a number that is no unit counts as none), which reports carry by name;
 * without it the unit is none. */
STROBE_API void strobe_collector_gauge_set(strobe_collector *c, const char *name, double value);
STROBE_API void strobe_collector_gauge_set_unit(strobe_collector *c, const char *name, double value, strobe_unit unit);
/* One kind of a gauge family (memory by kind: "memory", "text_caches";
 * GPU memory: "gpu_memory", "textures"), as strobe_collector_gauge_set_unit:
 * each (family, kind) pair is its own gauge under STROBE_MAX_GAUGES, sampled
 * at most once a second, correlated with the samples it was taken in;
 * reports carry the kind beside the name. Labels as strobe_op_counter_add_kind. */
STROBE_API void strobe_collector_gauge_set_kind(strobe_collector *c, const char *family, const char *kind, double value,
                                                strobe_unit unit);
/* Sets the overhead figure reports carry (measured by a recorder, or by
 * strobe_collector_measure_overhead). */
STROBE_API double strobe_collector_measure_overhead(strobe_collector *c);
/* Run metadata for reports (source SHA, build command, fixture): key and
 * value copied; at most 16 keys. The key is a name (the label rule). A value
 * that follows the window-id rule (a SHA, "fixture_1", "v1.2") is in the
 * report's JSON `run`; free text (a build command with spaces) is null there
 * and is read with strobe_report_query_run_info, to be written beside the
 * report (docs/sessions.md §The label rule). Returns 0, STROBE_EINVAL (NULL,
 * or a value of 256 bytes or more), STROBE_ELABEL (key breaks the rule),
 * STROBE_ELIMIT (a 17th key). Setting a key again replaces its value. */
STROBE_API int strobe_collector_set_run_info(strobe_collector *c, const char *key, const char *value);

/* >>application scopes (docs/sessions.md §Synchronous application scopes) */
typedef enum strobe_lane { STROBE_LANE_UI = 1, STROBE_LANE_WORKER = 2 } strobe_lane;

typedef struct strobe_app_scope {
  strobe_collector *collector;
  uint32_t slot;   /* live slot + generation; 0 = inert */
  uint64_t id;     /* monotonically increasing scope id; 0 when inert */
  int status;      /* 0, or why the guard is inert (STROBE_ELABEL, EWINDOW, ECLOSED, ELIMIT, EPARENT, EFEATURE_DISABLED) */
} strobe_app_scope;

/* An opaque token naming a live scope, usable from any thread to open an explicit child. */
typedef struct strobe_app_parent {
  strobe_collector *collector;
  uint32_t slot;
  uint64_t id;
} strobe_app_parent;

/* Opens a synchronous application scope on a registered window ("main").
 * label: 1–64 bytes of [A-Za-z0-9_], a static source label. Refusal never
 * stops the caller: the guard is inert and its status says why. */
STROBE_API strobe_app_scope strobe_app_scope_begin(strobe_collector *c, const char *window, const char *label,
                                                   strobe_lane lane);
/* A child of a live scope: inherits its window; gets its own id, parent id and depth. */
STROBE_API strobe_app_scope strobe_app_scope_begin_child(const strobe_app_scope *parent, const char *label,
                                                         strobe_lane lane);
/* The parent token of a live scope (id 0 when the scope is inert). */
STROBE_API strobe_app_parent strobe_app_scope_query_parent(const strobe_app_scope *s);
/* A child through a token: refused (EPARENT) when the parent has ended, was
 * abandoned, or belongs to another collector. */
STROBE_API strobe_app_scope strobe_app_scope_begin_child_of(strobe_collector *c, strobe_app_parent parent,
                                                            const char *label, strobe_lane lane);
/* 0 when live and recording, else the refusal or abandonment reason (ECLOSED, EWINDOW...). */
STROBE_API int strobe_app_scope_query_status(const strobe_app_scope *s);
/* Ends the scope (completion time is taken before any lock). Idempotent; an inert guard is ignored. */
STROBE_API void strobe_app_scope_end(strobe_app_scope *s);

/* >>sessions */
/* The bit of an operation kind in strobe_session_desc.kinds. */
#define STROBE_KIND_BIT(kind) (1u << (unsigned)(kind))
/* Every kind's bit: derived from STROBE_OP_KINDS, so a new kind is still one line there. */
#define STROBE__KIND_BIT_OR(id, number, name) | STROBE_KIND_BIT(STROBE_OP_##id)
#define STROBE_KINDS_ALL (0u STROBE_OP_KINDS(STROBE__KIND_BIT_OR))

typedef struct strobe_session_desc {
  uint32_t max_samples;   /* 1..240, 0 = default 120 */
  int include_devtools;   /* admit operations of devtools windows */
  uint64_t owner;         /* who may read/end it: 0 for in-process consumers; the MCP server uses its own */
  uint32_t kinds;         /* STROBE_KIND_BIT of each kind admitted; 0 = every kind. Frames only:
                           * STROBE_KIND_BIT(STROBE_OP_PASS). Other kinds are counted (kind_excluded),
                           * never kept, and not listed as unfinished. */
  int stage_runs;         /* 1: each sample's stages carry their runs' start and end (the report's
                           * stages[].runs), the first STROBE_MAX_STAGE_RUNS of each operation, the rest
                           * counted (stage_runs_dropped); 0: totals only (docs/sessions.md §Stage runs) */
} strobe_session_desc;

typedef struct strobe_report strobe_report;

/* Starts a session (desc may be NULL: every default); writes its id
 * ("profile_7") to id_out. Never requests a frame, layout or input. Returns
 * 0, STROBE_EINVAL (bad desc: max_samples over 240, kinds with a bit outside
 * STROBE_KINDS_ALL), STROBE_ELIMIT (8 active), STROBE_ECLOSED,
 * STROBE_EFEATURE_DISABLED. */
STROBE_API int strobe_session_start(strobe_collector *c, const strobe_session_desc *desc,
                                    char id_out[STROBE_SESSION_ID_MAX]);
/* An immutable snapshot; the session keeps running. *out is owned by the
 * caller (strobe_report_free). Errors: STROBE_EUNKNOWN_ID, STROBE_EENDED,
 * STROBE_ECANCELLED, STROBE_ENOTOWNER, STROBE_ENOMEM. */
STROBE_API int strobe_session_read(strobe_collector *c, const char *id, uint64_t owner, strobe_report **out);
/* Stops (finalizes) only this session and returns its report; later
 * completions never reach it. Errors as strobe_session_read. */
STROBE_API int strobe_session_stop(strobe_collector *c, const char *id, uint64_t owner, strobe_report **out);
/* Cancels every active session of `owner` and discards their reports; their
 * ids then answer STROBE_ECANCELLED. Returns how many were cancelled. */
STROBE_API int strobe_session_cancel_owner(strobe_collector *c, uint64_t owner);
/* Resets sessions of `owner` (docs/sessions.md §Reset): session `id`, or
 * every active session of that owner when id is NULL. Each loses its
 * retained samples, its application-scope history and every count, and from
 * now on admits only whole operations that start after the reset, as if it
 * had just started; it keeps its id, options and start time, and counts the
 * reset (session.resets, session.reset_ms). Other owners' sessions, other
 * collectors, windows, gauges and the application's live operations are
 * untouched (a live operation that began before the reset is excluded when
 * it completes, like one crossing a session's start). Returns how many
 * sessions were reset (0 when the owner has none), or with an id the errors
 * of strobe_session_read (STROBE_EUNKNOWN_ID, STROBE_EENDED,
 * STROBE_ECANCELLED, STROBE_ENOTOWNER; nothing is reset); STROBE_EINVAL for
 * a NULL collector. */
STROBE_API int strobe_collector_reset(strobe_collector *c, const char *id, uint64_t owner);

/* >>listing, for diagnostic consumers (libstrobe_server's /api): copies
 * taken under the collector's short lock. */
typedef struct strobe_session_info {
  char id[STROBE_SESSION_ID_MAX];
  uint64_t owner;             /* 0: in-process; otherwise the owner passed at start */
  uint32_t max_samples;
  int include_devtools;
  uint32_t kinds;             /* STROBE_KIND_BIT of each admitted kind (never 0) */
  double started_ms;          /* since the collector's creation (not calendar time) */
  uint64_t completed;         /* operations admitted so far */
  uint64_t retained;          /* samples held now (<= max_samples) */
  uint64_t dropped;           /* admitted but pushed out by newer ones */
  uint64_t boundary_excluded; /* completed while active but started before the session */
  uint32_t resets;            /* strobe_collector_reset calls that reset it */
} strobe_session_info;
/* Fills out[0..max) with the active sessions, oldest first, and returns how
 * many there are (at most STROBE_MAX_SESSIONS; more than max means the list
 * was cut). STROBE_EINVAL when c is NULL or out is NULL with max > 0. */
STROBE_API int strobe_collector_query_sessions(strobe_collector *c, strobe_session_info *out, int max);
/* Number of active sessions (0 for a NULL collector). */
STROBE_API int strobe_collector_query_session_count(strobe_collector *c);

typedef struct strobe_window_info {
  char id[STROBE_MAX_WINDOW_ID + 1]; /* the toolkit identity, NUL-terminated */
  uint32_t flags;                    /* STROBE_WINDOW_* */
  int open;                          /* 0: closed, metadata kept until the slot is needed */
  uint64_t passes;                   /* passes begun on it */
} strobe_window_info;
/* Fills out[0..max) with the tracked windows (open and closed) and returns how
 * many there are (at most STROBE_MAX_WINDOWS), like strobe_collector_query_sessions. */
STROBE_API int strobe_collector_query_windows(strobe_collector *c, strobe_window_info *out, int max);
/* Window registrations refused (over 256 bytes, not UTF-8, or no slot left); 0 for NULL. */
STROBE_API uint64_t strobe_collector_query_untracked_windows(strobe_collector *c);

/* Frees a report from strobe_session_read or strobe_session_stop. Accepts NULL. */
STROBE_API void strobe_report_free(strobe_report *r);
/* The report as content-free JSON version 1 (docs/report-schema.json). *json
 * is NUL-terminated and owned by the caller (free()). Returns 0 or STROBE_ENOMEM. */
STROBE_API int strobe_report_json(const strobe_report *r, char **json, size_t *len);

/* Report summary accessors, for callers that do not want JSON. */
typedef enum strobe_report_status {
  STROBE_REPORT_COMPLETE = 1,    /* samples, nothing unfinished */
  STROBE_REPORT_EMPTY = 2,       /* no samples, nothing unfinished: not "fast", empty */
  STROBE_REPORT_UNFINISHED = 3,  /* no completed sample, but work is running */
  STROBE_REPORT_PARTIAL = 4      /* samples, and work still running */
} strobe_report_status;

typedef struct strobe_report_counts {
  uint64_t completed;         /* operations admitted */
  uint64_t returned;          /* samples in this report */
  uint64_t dropped;           /* admitted but pushed out by newer ones (oldest first) */
  uint64_t boundary_excluded; /* completed while active but started before the session */
  uint64_t unfinished;        /* operations running at read/end */
  uint64_t kind_excluded;     /* completed while active, of a kind the session does not admit */
  uint64_t unfinished_stalled; /* of those unfinished, running longer than STROBE_STALL_FACTOR x the p95 of the
                                * report's completed operations of their kind (0 if that could not be
                                * computed for lack of memory) */
  uint64_t idle;               /* operations marked idle (strobe_op_mark_idle) it would have kept: never samples */
} strobe_report_counts;

/* What the report holds (r must not be NULL). */
STROBE_API strobe_report_status strobe_report_query_status(const strobe_report *r);
/* Its admission counts (r must not be NULL). */
STROBE_API strobe_report_counts strobe_report_query_counts(const strobe_report *r);
/* Its session id ("profile_7"); owned by the report (r must not be NULL). */
STROBE_API const char *strobe_report_query_id(const strobe_report *r);

/* The index-th run info entry the report copied (strobe_collector_set_run_info),
 * free text included: what the JSON leaves out, for the caller to keep
 * beside it. *key and *value are owned by the report. Returns 0, or
 * STROBE_ERANGE past the last entry, STROBE_EINVAL for NULL arguments. */
STROBE_API int strobe_report_query_run_info(const strobe_report *r, uint32_t index, const char **key,
                                            const char **value);

/* Frame rate of the report's committed passes, two ways (docs/sessions.md
 * §Frame rate): over the first-to-last pass span, which one stall lowers for
 * the whole session, and from the median interval between consecutive pass
 * starts, which a stall does not move. */
typedef struct strobe_frame_rate {
  uint64_t passes;                 /* passes the session counted (committed, or handed off to another process),
                                    * since its start or last reset: every one, not only the returned samples */
  int valid;                       /* 0 with fewer than two passes, all on one tick, or several windows (window
                                    * NULL): then the first-to-last rate is 0 */
  double first_to_last_span_ms;    /* start of the last counted pass minus start of the first */
  double passes_per_second;        /* (passes - 1) / first_to_last_span */
  double median_interval_ms;       /* nearest-rank median of consecutive start intervals among the returned samples */
  double steady_passes_per_second; /* 1000 / median_interval_ms; 0 when that is 0 or there is no interval */
  uint64_t intervals;              /* the intervals the median is over: 0 (always when not valid), no steady rate */
  uint32_t windows;                /* windows whose passes `passes` counts: more than one only for window NULL */
} strobe_frame_rate;

/* Fills *out for the passes of the window with that id (docs/sessions.md
 * §Frame rate), or, window NULL, of the report's only window: with passes of
 * several windows, `passes` is their sum and no rate is given (valid 0,
 * `windows` how many): rates are per window, never summed. Returns 0,
 * STROBE_EINVAL (r or out NULL) or STROBE_ENOMEM (*out zeroed). */
STROBE_API int strobe_report_query_frame_rate(const strobe_report *r, const char *window, strobe_frame_rate *out);

/* One stage's distribution over the report's samples (docs/sessions.md §The
 * frame model: stages do not share a population, so each carries its own n). */
typedef struct strobe_stage_summary {
  const char *name;       /* label copied into the report (the label rule); valid until strobe_report_free */
  const char *nested_in;  /* the stage that was open around it when it ran, or NULL: never sum a nested stage into its parent */
  uint64_t n;             /* samples that ran this stage under this parent */
  double p50_ms, p95_ms, p99_ms, max_ms; /* nearest-rank, of the per-sample stage totals */
  const char *declared_parent;       /* the parent its site declares, or NULL; checked, never trusted */
  uint64_t declared_parent_not_open; /* runs (over those samples) whose declared parent was not open */
  uint64_t parent_incomplete;        /* of the n samples, those where in some run the parent did not complete
                                      * in the operation (still open at its end, or cut by the stage bound):
                                      * there its time is in no listed stage */
} strobe_stage_summary;

/* Fills up to `max` summaries, one per stage and run-time parent (a stage
 * that ran under two parents has two entries, each with its n), in order of
 * first appearance (newest sample first), and returns how many entries there
 * are: every distinct pair, never cut, so a result above max says how many
 * were left out. Strings are owned by the report. STROBE_EINVAL for a NULL
 * report or out; STROBE_ENOMEM (out unchanged). */
STROBE_API int strobe_report_query_stages(const strobe_report *r, strobe_stage_summary *out, int max);

/* >>deprecated: old names, kept for one release (strobe.h states the conventions). */
#if !defined(STROBE_NO_DEPRECATED)
typedef strobe_session_desc strobe_session_options STROBE_DEPRECATED("use strobe_session_desc");
STROBE_DEPRECATED("use strobe_session_stop")
static inline int strobe_session_end(strobe_collector *c, const char *id, uint64_t owner, strobe_report **out) {
  return strobe_session_stop(c, id, owner, out);
}
STROBE_DEPRECATED("use strobe_collector_query_session_count")
static inline int strobe_session_count(strobe_collector *c) { return strobe_collector_query_session_count(c); }
STROBE_DEPRECATED("use strobe_collector_query_sessions")
static inline int strobe_session_list(strobe_collector *c, strobe_session_info *out, int max) {
  return strobe_collector_query_sessions(c, out, max);
}
STROBE_DEPRECATED("use strobe_collector_query_windows")
static inline int strobe_window_list(strobe_collector *c, strobe_window_info *out, int max) {
  return strobe_collector_query_windows(c, out, max);
}
STROBE_DEPRECATED("use strobe_collector_query_untracked_windows")
static inline uint64_t strobe_collector_untracked_windows(strobe_collector *c) {
  return strobe_collector_query_untracked_windows(c);
}
STROBE_DEPRECATED("use strobe_collector_gauge_set")
static inline void strobe_collector_gauge(strobe_collector *c, const char *name, double value) {
  strobe_collector_gauge_set(c, name, value);
}
STROBE_DEPRECATED("use strobe_op_counter_add")
static inline void strobe_op_count(const char *name, double delta) { strobe_op_counter_add(name, delta); }
STROBE_DEPRECATED("use strobe_app_scope_begin_child")
static inline strobe_app_scope strobe_app_scope_child(const strobe_app_scope *parent, const char *label,
                                                      strobe_lane lane) {
  return strobe_app_scope_begin_child(parent, label, lane);
}
STROBE_DEPRECATED("use strobe_app_scope_begin_child_of")
static inline strobe_app_scope strobe_app_scope_child_of(strobe_collector *c, strobe_app_parent parent,
                                                         const char *label, strobe_lane lane) {
  return strobe_app_scope_begin_child_of(c, parent, label, lane);
}
STROBE_DEPRECATED("use strobe_app_scope_query_parent")
static inline strobe_app_parent strobe_app_scope_parent(const strobe_app_scope *s) {
  return strobe_app_scope_query_parent(s);
}
STROBE_DEPRECATED("use strobe_app_scope_query_status")
static inline int strobe_app_scope_status(const strobe_app_scope *s) { return strobe_app_scope_query_status(s); }
STROBE_DEPRECATED("use strobe_app_scope_end")
static inline void strobe_app_scope_finish(strobe_app_scope *s) { strobe_app_scope_end(s); }
STROBE_DEPRECATED("use strobe_report_query_status")
static inline strobe_report_status strobe_report_get_status(const strobe_report *r) {
  return strobe_report_query_status(r);
}
STROBE_DEPRECATED("use strobe_report_query_counts")
static inline strobe_report_counts strobe_report_get_counts(const strobe_report *r) {
  return strobe_report_query_counts(r);
}
STROBE_DEPRECATED("use strobe_report_query_id")
static inline const char *strobe_report_id(const strobe_report *r) { return strobe_report_query_id(r); }
STROBE_DEPRECATED("use strobe_report_query_stages")
static inline int strobe_report_stage_summary(const strobe_report *r, strobe_stage_summary *out, int max) {
  return strobe_report_query_stages(r, out, max);
}
#endif

#ifdef __cplusplus
}
#endif

#endif
