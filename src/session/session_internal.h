/*
 * session_internal.h — the state behind session.h shared by the session
 * layer's files: collector (collector.c), operations and stages
 * (operation.c), application scopes (app_scope.c), sessions and report
 * snapshots (session.c), and the JSON export (report_json.c).
 *
 * Locking: everything in a collector is guarded by its one short mutex
 * `lock`, held only for bounded table updates and copies, never around
 * application work, allocation-heavy report building or JSON.
 */
#ifndef STROBE_SESSION_INTERNAL_H
#define STROBE_SESSION_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "analyze/frame_rules.h"
#include "collect/collect.h"
#include "platform/invariant.h"
#include "strobe/session.h"

/* A window id shared by reference: samples keep their identity after the window closes. */
typedef struct strobe__name {
  uint32_t refs; /* atomic */
  uint32_t len;
  char text[];
} strobe__name;

strobe__name *strobe__name_new(const char *s, size_t len);
strobe__name *strobe__name_ref(strobe__name *n);
void strobe__name_unref(strobe__name *n);

/* One stage under one run-time parent in one operation (docs/sessions.md
 * §Stages nest at run time): the same site under two parents is two entries. */
typedef struct strobe__stage_agg {
  uint32_t site;                  /* stage site id */
  uint32_t parent;                /* site id of the stage open around it when it ran; 0 = directly in the operation */
  uint32_t count;
  uint32_t not_in_declared;       /* runs whose declared parent (strobe_site.parent) was not open */
  uint64_t total, min, max;       /* ticks */
  uint32_t parent_incomplete;     /* 1: in some run, its parent did not complete in the operation (still open
                                   * at its end, or cut by STROBE_MAX_STAGES): that time is in no listed stage */
  uint32_t remote;                /* 1: ran in the process the operation came from (strobe_op_resume_remote) */
} strobe__stage_agg;

/* One run of a stage inside an operation, with its times (docs/sessions.md
 * §Stage runs): the first STROBE_MAX_STAGE_RUNS runs that completed inside
 * it, in the order they ended. */
typedef struct strobe__stage_run {
  uint32_t entry;                 /* its stage entry: an index into the operation's stages */
  uint32_t reserved;
  uint64_t begin, end;            /* ticks */
} strobe__stage_run;

/* Where an operation resumed from another process came from
 * (docs/sessions.md §Across processes). */
typedef struct strobe__remote_from {
  char process[STROBE_MAX_LABEL + 1]; /* the origin's process label */
  char peer[STROBE_MAX_LABEL + 1];    /* handed off: the peer it went to (this side: the label it was addressed to) */
  uint32_t pid;
  uint64_t collector;             /* the origin collector's random id */
  uint64_t op;                    /* the operation's id there */
  uint64_t taken;                 /* local ticks: when the origin handed it off */
  uint64_t resumed;               /* local ticks: when this process resumed it */
} strobe__remote_from;

typedef struct strobe__counter_agg {
  double value;
  char name[STROBE_MAX_LABEL + 1]; /* a copy (the label rule): never the caller's pointer */
  char kind[STROBE_MAX_LABEL + 1]; /* its kind in the family `name` (strobe_op_counter_add_kind); "" none */
  uint32_t unit;                   /* strobe_unit of its first add that named one; 0: none */
} strobe__counter_agg;

/* A stage or counter an operation declared it cannot measure
 * (strobe_op_mark_unavailable): reported as null with available: false. */
typedef struct strobe__unavailable {
  uint8_t what;                        /* strobe_coverage */
  char name[STROBE_MAX_LABEL + 1];     /* copied: a report never points into application memory */
} strobe__unavailable;

/* A memory gauge sampled while an operation ran (docs/sessions.md §Counter
 * summaries and memory per sample): the gauge's slot in the collector (slots
 * are never reused) and the level. */
typedef struct strobe__gauge_sample {
  uint32_t gauge;
  double value;
  uint64_t sampled;                    /* ticks */
} strobe__gauge_sample;

/* A completed operation, allocated once and shared read-only by every
 * session that admitted it. */
typedef struct strobe__sample {
  uint32_t refs; /* atomic */
  uint8_t kind;
  uint8_t committed;
  uint8_t handed_off;             /* resumed on another thread at least once */
  uint8_t devtools;
  uint8_t ended_implicitly;       /* ended because the phase it was dispatched in moved on */
  uint8_t nesting_overflow;       /* begun deeper than 8 operations on its thread: stages and counters not recorded */
  strobe__name *window;
  uint64_t seq;                   /* operation id, monotonic per collector */
  uint64_t frame_id;              /* passes: per-window frame number; 0 otherwise */
  uint64_t start, end;            /* ticks */
  uint32_t nstages, ncounters;
  uint32_t stages_dropped;        /* distinct stages past STROBE_MAX_STAGES: timings not kept */
  uint32_t counters_dropped;      /* distinct counters past STROBE_MAX_OP_COUNTERS: not kept */
  uint32_t nunavailable, ngauges;
  uint32_t nruns, runs_dropped;   /* stage runs kept with their times, and those past STROBE_MAX_STAGE_RUNS */
  strobe__stage_run *runs;
  strobe__stage_agg *stages;      /* point into the same allocation */
  strobe__counter_agg *counters;
  strobe__unavailable *unavailable;
  strobe__gauge_sample *gauges;   /* room for STROBE_MAX_GAUGES, filled under the lock at completion */
  char population[STROBE_MAX_LABEL + 1]; /* strobe_op_set_population; "" = none */
  char peer[STROBE_MAX_LABEL + 1]; /* handed off to this process (strobe_op_hand_off_remote); "" = not */
  uint8_t remote;                 /* 1: resumed from another process; `from` says which */
  strobe__remote_from from;
} strobe__sample;

void strobe__sample_unref(strobe__sample *s);
/* Its state across processes, by the frame model's rule (analyze/frame_rules.h, docs/frames.md §States): a session
 * sees one process, so none is abandoned. */
static inline uint32_t strobe__sample_state(const strobe__sample *s) {
  strobe__op_facts k = {1, s->committed, s->remote, s->peer[0] != 0, 0};
  return strobe__op_state(&k);
}
/* A pass that counts in frame rates, by the frame model's rule: committed here, or handed off to another process,
 * where its outcome is (docs/sessions.md §Frame rate, §Across processes); samples are never idle ones. */
static inline int strobe__sample_rendered(const strobe__sample *s) { return strobe__pass_counts(strobe__sample_state(s), 0); }

/* A completed application scope, shared like samples. */
typedef struct strobe__app_record {
  uint32_t refs; /* atomic */
  uint8_t lane;
  uint32_t depth;
  char label[STROBE_MAX_LABEL + 1]; /* a copy: never the caller's pointer */
  strobe__name *window;
  uint64_t id, parent_id;
  uint64_t start, end;            /* ticks */
} strobe__app_record;

void strobe__app_record_unref(strobe__app_record *r);

typedef struct strobe__window_slot {
  uint32_t gen;
  int open;                       /* registered and not closed */
  int used;                       /* holds metadata (open, or closed and not yet reused) */
  uint32_t flags;
  uint64_t frames_key;            /* atomic: passes begun (low 40 bits; the next prospective frame id is that + 1)
                                   * and, while open, its handle's generation (high 24 bits; 0 = closed), so an
                                   * operation begun without the lock checks its window and counts its pass in one
                                   * compare-and-swap (operation.c >>idle) */
  uint32_t label;                 /* the id as a capture label (probe/probe.h >>labels); 0 until first captured */
  uint64_t closed_seq;            /* reuse the longest-closed slot first */
  strobe__name *name;
} strobe__window_slot;

/* An open stage of an operation on its thread (operation.c); kept in the
 * operation's slot while the operation is parked (strobe_op_park). */
#define STROBE__MAX_STAGE_NEST 16 /* stages open at once on one thread */
typedef struct strobe__stage_frame {
  strobe_op op;                 /* the operation it belongs to */
  const strobe_site *site;
  uint32_t token;               /* what the handle carries; never 0 */
  uint32_t site_id;
  uint32_t parent_id;           /* run-time parent: the stage of the same operation open around it; 0 = none */
  uint32_t parent_token;        /* that stage's frame, to re-parent when it ends first */
  uint32_t not_in_declared;     /* 1: the site declares a parent that was not open when it began */
  uint32_t child_aggs;          /* stage-table entries of children that completed inside this run: flagged
                                 * parent_incomplete if this run is never aggregated */
  uint64_t t0;
} strobe__stage_frame;

typedef struct strobe__live_op {
  uint32_t gen;
  int used;
  int abandoned;                  /* window or collector closed under it: never admitted */
  uint8_t kind, detailed, handed_off, devtools;
  uint8_t captured;               /* an event consumer was active at begin: stages and counters kept for it */
  uint8_t app_frame;              /* frame_id was given by the application (strobe_op_begin_frame) */
  uint8_t nesting_overflow;       /* owner-thread: not on its thread's operation stack (8 deep already) */
  uint32_t window_slot;
  uint32_t window_label;          /* capture label of the window; 0 when not captured at begin */
  strobe__name *window;
  uint64_t seq, frame_id, start;
  uint64_t phase;                 /* atomic: current stage, strobe__phase_pack(); 0 = none */
  uint32_t nstages, ncounters;    /* owner-thread only, until end */
  uint32_t stages_dropped, counters_dropped; /* owner-thread only: past the bounds, counted */
  strobe__stage_agg stages[STROBE_MAX_STAGES];
  uint32_t nruns, runs_dropped;   /* owner-thread only, until end */
  strobe__stage_run runs[STROBE_MAX_STAGE_RUNS];
  strobe__counter_agg counters[STROBE_MAX_OP_COUNTERS];
  uint8_t idle;                   /* owner-thread only: strobe_op_mark_idle, never a sample */
  uint32_t nunavailable;          /* owner-thread only */
  strobe__unavailable unavailable[STROBE_MAX_UNAVAILABLE];
  char population[STROBE_MAX_LABEL + 1]; /* owner-thread only; "" = none */
  char peer[STROBE_MAX_LABEL + 1]; /* owner-thread only: set by strobe_op_hand_off_remote just before its end */
  uint8_t remote;                 /* resumed from another process (strobe_op_resume_remote) */
  strobe__remote_from from;       /* when remote */
  uint32_t alias;                 /* the idle handle id it had before it moved here (operation.c materialize); 0 none */
  const void *parked_by;          /* owner-thread: the thread that parked it (strobe_op_park), NULL: not parked */
  uint32_t nparked;               /* owner-thread: its stages open when parked, kept below */
  strobe__stage_frame parked[STROBE__MAX_STAGE_NEST];
} strobe__live_op;

typedef struct strobe__live_app {
  uint32_t gen;
  int used;
  uint8_t lane;
  uint8_t devtools;               /* on a devtools window: only sessions with include_devtools see it */
  uint32_t depth;
  uint32_t window_slot;
  char label[STROBE_MAX_LABEL + 1]; /* a copy: never the caller's pointer */
  strobe__name *window;
  uint64_t id, parent_id, start;
} strobe__live_app;

/* One window's passes in one session (docs/sessions.md §Frame rate): every
 * pass that counts in frame rates it admitted since its start or reset, kept
 * or not, so a rate spans the window's own first to last pass in the session. */
typedef struct strobe__window_rate {
  strobe__name *window;           /* a reference: its declared id */
  uint64_t passes;                /* passes counted (strobe__sample_rendered) */
  uint64_t first, last;           /* ticks: the earliest and the latest of their starts */
} strobe__window_rate;

/* Per-session application-scope accounting (docs/sessions.md §Synchronous application scopes). */
typedef struct strobe__app_counts {
  uint64_t started, completed, dropped, boundary_excluded;
  uint64_t devtools_excluded;     /* completed on a devtools window while the session excludes devtools */
  uint64_t refused_label, refused_window, refused_closed, refused_slots, refused_parent;
  uint64_t abandoned_window_closed, abandoned_producer_closed;
} strobe__app_counts;

typedef struct strobe__session {
  int active;
  uint64_t number;                /* the N of profile_N */
  uint64_t owner;
  uint32_t max_samples, max_app;
  int include_devtools;
  int stage_runs;                 /* strobe_session_desc.stage_runs */
  uint32_t kinds;                 /* STROBE_KIND_BIT of each admitted kind; never 0 */
  uint64_t created;               /* ticks: when it started */
  uint64_t start;                 /* ticks: what it admits from: its start, or its last reset */
  uint32_t resets;                /* strobe_collector_reset calls that reset it */
  strobe__sample **ring;          /* max_samples, oldest at head */
  uint32_t head, count;
  uint64_t completed, dropped, boundary_excluded, devtools_excluded;
  uint64_t kind_excluded;         /* completed while active, of a kind it does not admit */
  uint64_t interleaved;           /* operations of its kinds that ended with an operation begun inside them still open */
  uint64_t idle;                  /* operations marked idle it would have kept (docs/sessions.md §Idle passes) */
  uint64_t nesting_overflow;      /* admitted samples begun deeper than 8 nested operations on their thread */
  uint64_t abandoned;             /* operations it covers abandoned by a window or collector close while running */
  uint64_t kind_completed[STROBE_OP_KIND_LIMIT];
  strobe__app_record **app_ring;  /* max_app */
  uint32_t app_head, app_count;
  strobe__app_counts app;
  uint64_t events_lost_base;      /* strobe_query_event_stats().events_lost at start */
  strobe__drain_cost drain_base;  /* the drain's cost at start (docs/recording.md, Cost) */
  strobe__window_rate rates[STROBE_MAX_WINDOWS]; /* by window id, in order of each one's first counted pass */
  uint32_t nrates;
  uint64_t passes_untracked;      /* counted passes of window ids past the STROBE_MAX_WINDOWS it tracks: in no rate */
  uint64_t gpu_seq;               /* the first closed GPU frame it reports (strobe__gpu_frames_seq at start or
                                   * reset); an active session holds the live GPU table open (docs/gpu.md) */
} strobe__session;

typedef struct strobe__ended_id {
  uint64_t number;
  uint64_t owner;                 /* another owner asking is told not_owner, never that it ended */
  int cancelled;
} strobe__ended_id;

typedef struct strobe__gauge {
  char name[STROBE_MAX_LABEL + 1]; /* a copy: reports never point into the caller's memory */
  char kind[STROBE_MAX_LABEL + 1]; /* its kind in the family `name` (strobe_collector_gauge_set_kind); "" none */
  uint32_t unit;                  /* strobe_unit, from the first call that named the gauge */
  double value;
  uint64_t sampled;               /* ticks; 0 = never */
  uint64_t sampled_mono_ns;       /* CLOCK_MONOTONIC of the same sample, for the once-a-second limit */
} strobe__gauge;

#define STROBE__MAX_RUN_INFO 16

/* Replay tracking per origin collector (docs/sessions.md §Across processes):
 * the newest operation id resumed from it and a bitmap of the 64 below. */
typedef struct strobe__remote_origin {
  uint64_t collector;             /* 0 = free */
  uint64_t newest;
  uint64_t seen;                  /* bit k: operation newest - k was resumed */
} strobe__remote_origin;

struct strobe_collector {
  uint32_t refs;                  /* atomic */
  uint32_t number;                /* 1-based in order of creation: names the collector in captures */
  strobe__mutex lock;
  int closed;
  uint64_t epoch;                 /* ticks at creation */
  double overhead_ns;             /* 0 until measured */
  uint64_t next_seq, next_session, next_app_id, close_seq;
  uint64_t untracked_windows;
  strobe__window_slot windows[STROBE_MAX_WINDOWS];
  strobe__live_op ops[STROBE_MAX_LIVE_OPS];
  strobe__live_app apps[STROBE_MAX_LIVE_APP_SCOPES];
  strobe__session sessions[STROBE_MAX_SESSIONS];
  int nactive;
  strobe__ended_id ended[STROBE_MAX_ENDED_IDS];
  uint32_t ended_next;
  strobe__gauge gauges[STROBE_MAX_GAUGES];
  uint32_t ngauges;
  uint64_t gauges_dropped;        /* samples of gauges past STROBE_MAX_GAUGES: not kept */
  char run_keys[STROBE__MAX_RUN_INFO][STROBE_MAX_LABEL + 1];
  char run_values[STROBE__MAX_RUN_INFO][256];
  uint32_t nrun;
  uint64_t labels_replaced;       /* atomic: labels that broke the rule where the call returns nothing, kept as STROBE_INVALID_LABEL */
  uint64_t labels_refused;        /* atomic: labels refused with STROBE_ELABEL */
  uint64_t uid;                   /* random, names the collector in operation tokens; never 0 */
  uint32_t pid;
  char process[STROBE_MAX_LABEL + 1]; /* strobe_collector_set_process; "pid_<pid>" until set */
  strobe__remote_origin origins[STROBE_MAX_REMOTE_ORIGINS];
  strobe_remote_stats remote;     /* lock held */
};

/* >>remote: the operation token's codec (remote.c, docs/sessions.md §The
 * operation token). A decoded token, its stages' names copied. */
typedef struct strobe__token_stage {
  char name[STROBE_MAX_LABEL + 1];
  char parent[STROBE_MAX_LABEL + 1]; /* the stage it ran in; "" = directly in the operation */
  uint8_t parent_incomplete;      /* strobe__stage_agg.parent_incomplete */
  uint32_t count;
  uint64_t total_ns, min_ns, max_ns;
} strobe__token_stage;

typedef struct strobe__token {
  uint8_t kind, app_frame, detail, nstages;
  uint32_t pid;
  uint8_t boot[16];
  uint64_t collector, op, frame_id, start_mono_ns, taken_mono_ns;
  char process[STROBE_MAX_LABEL + 1];
  char peer[STROBE_MAX_LABEL + 1];
  char window[STROBE_MAX_WINDOW_ID + 1];  /* the origin's window id: the frame is (window, frame id) on both sides */
  char population[STROBE_MAX_LABEL + 1]; /* strobe_op_set_population at the origin; "" = none */
  strobe__token_stage stages[STROBE_MAX_STAGES];
} strobe__token;

/* Encodes t into buf; returns its length, or the length needed (> cap) when
 * it does not fit (nothing written then). */
size_t strobe__token_encode(const strobe__token *t, uint8_t *buf, size_t cap);
/* Decodes and checks a token's layout. Returns 0 or the refusal:
 * STROBE_ETOKEN with *why one of the STROBE__REFUSED_* below. */
enum { STROBE__REFUSED_MALFORMED, STROBE__REFUSED_TRUNCATED, STROBE__REFUSED_VERSION, STROBE__REFUSED_CORRUPT };
int strobe__token_decode(const uint8_t *buf, size_t len, strobe__token *t, int *why);
/* Checks that token t may be resumed in c (same boot, addressed to c's
 * process, not replayed) and records it as resumed; counts a refusal in
 * c->remote. Lock held. Returns 0, STROBE_EFOREIGN, STROBE_EREPLAY or
 * STROBE_ELIMIT. */
int strobe__remote_admit(strobe_collector *c, const strobe__token *t);
/* The site id of a stage the origin ran, registered in this process under
 * its name (a static label: the origin's site name); 0 when the table of
 * such names is full. Any thread. */
uint32_t strobe__remote_stage_site(const char *name);

/* >>labels: the label rule (docs/sessions.md §The label rule). A name (stage,
 * counter, gauge, application scope, run info key) is 1..STROBE_MAX_LABEL
 * bytes of [A-Za-z0-9_]; a window id 1..STROBE_MAX_WINDOW_ID bytes of
 * [A-Za-z0-9_./:-]. */
enum { STROBE__RULE_NAME, STROBE__RULE_WINDOW };
/* The length of s when it follows the rule, else 0 (also for NULL). */
size_t strobe__label_len(const char *s, int rule);
/* Counts a label recorded as STROBE_INVALID_LABEL (any thread, no lock). */
void strobe__label_replaced(strobe_collector *c);
/* Counts a label refused with STROBE_ELABEL (any thread, no lock). */
void strobe__label_refused(strobe_collector *c);
/* 1 when s is a name under the label rule (strobe__label_len(s, STROBE__RULE_NAME) > 0). */
int strobe__label_valid(const char *s);

/* The current phase of a live operation in one word, so the owner publishes
 * it with a single atomic store and readers never need the lock for it:
 * ticks since the operation started (high 48 bits) and the stage site id
 * (low 16 bits; site ids are below STROBE_MAX_SITES = 65536). */
static inline uint64_t strobe__phase_pack(uint64_t since_op_start, uint32_t site) {
  return (since_op_start << 16) | (site & 0xffffu);
}
static inline uint32_t strobe__phase_site(uint64_t phase) { return (uint32_t)(phase & 0xffffu); }
static inline uint64_t strobe__phase_since(uint64_t phase) { return phase >> 16; }

/* Handles pack a slot index (low 8 bits, +1 so 0 is "none") with the slot's generation. */
static inline uint32_t strobe__handle(uint32_t slot, uint32_t gen) { return (gen << 8) | (slot + 1); }
static inline uint32_t strobe__handle_slot(uint32_t h) { return (h & 0xffu) - 1; }
static inline uint32_t strobe__handle_gen(uint32_t h) { return h >> 8; }

/* A window slot's frames_key: its handle generation (0 while closed) and its passes. */
#define STROBE__FK_SHIFT 40
#define STROBE__FK_PASSES ((UINT64_C(1) << STROBE__FK_SHIFT) - 1)
static inline uint64_t strobe__fk(uint32_t window_handle, uint64_t passes) {
  return (uint64_t)strobe__handle_gen(window_handle) << STROBE__FK_SHIFT | (passes & STROBE__FK_PASSES);
}

/* An operation begun while nothing listened, kept on its thread without the
 * collector's lock (operation.c >>idle-records), as a reader sees it. */
typedef struct strobe__idle_op {
  uint8_t kind;
  uint32_t window_slot;           /* its window, open (checked under the lock) */
  uint64_t seq, frame_id, start;  /* start: ticks */
  uint64_t phase;                 /* strobe__phase_pack; 0 = no stage */
} strobe__idle_op;
/* Calls fn for each idle operation of c on any thread whose window is open. Lock held. */
void strobe__idle_ops_visit(strobe_collector *c, void (*fn)(void *arg, const strobe__idle_op *op), void *arg);

/* Window slot of a live handle, or -1. With the lock held. */
int strobe__window_slot_of(strobe_collector *c, strobe_window w);
/* Abandons live operations and application scopes of a window slot (or all, slot < 0). With the lock held. */
void strobe__abandon_live(strobe_collector *c, int window_slot, int producer_closed);
/* 1 when some active session would admit a completed operation of that
 * window kind and start (lock held): only then is a payload worth building. */
int strobe__admissible(const strobe_collector *c, uint8_t kind, int devtools, uint64_t start);
/* Offers a completed sample to every active session (lock held): each that
 * admits it keeps a reference, each that does not counts why (boundary or
 * devtools); a session that started after the sample's end ignores it. Returns how many admitted it; with 0 the caller still owns the
 * sample and frees it after unlocking. */
uint32_t strobe__publish_sample(strobe_collector *c, strobe__sample *s);
/* Accounts for a completed operation that has no payload (lock held): it
 * began before every active session (so each counts a boundary exclusion,
 * docs/sessions.md §Bounds and lifecycle: "Reports count exclusions once those
 * operations complete while a session remains active"), or its payload could not be allocated (a session
 * that admits it counts it completed and dropped, and a pass that counts in
 * frame rates, `rendered`, in its window's rate). */
void strobe__publish_unbuilt(strobe_collector *c, uint8_t kind, int devtools, uint64_t start, uint64_t end,
                             strobe__name *window, int rendered);
/* Accounts for a completed operation marked idle (lock held): each session
 * that would have kept it counts it idle, the others count why they would
 * not have (kind, devtools, boundary). Never a sample. A session that started
 * after its end ignores it. */
void strobe__publish_idle(strobe_collector *c, uint8_t kind, int devtools, uint64_t start, uint64_t end);
/* Counts, in every active session that covers the kind and window, an
 * operation that ended while one begun inside it on the same thread was still
 * open: they interleave instead of nesting (lock held). */
void strobe__count_interleaved(strobe_collector *c, uint8_t kind, int devtools);
/* Whether session s looks at an application scope (a devtools window's only
 * with include_devtools, docs/sessions.md §Bounds and lifecycle). */
static inline int strobe__session_sees_app(const strobe__session *s, int devtools) {
  return s->active && (!devtools || s->include_devtools);
}
/* Counts, in every active session, a live operation abandoned by a window
 * or collector close: under kind_excluded or devtools_excluded when the
 * session does not cover it, else as abandoned (lock held). */
void strobe__count_abandoned(strobe_collector *c, uint8_t kind, int devtools);
/* Counts an application-scope refusal in every active session (lock held). */
void strobe__count_app_refusal(strobe_collector *c, int reason);

#endif
