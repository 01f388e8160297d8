/*
 * probe.h — the probe layer's internal interface: per-thread state behind
 * the hot path (each thread's ring and scope stack), the site registry, the
 * thread list, misuse counts and the calibrated cost per event. The layers
 * above it (collect, and the consumers for the registry and the cost
 * figures) include this header; the probe never includes theirs
 * (docs/layers.md).
 *
 * Threading: a thread's ring has one producer (its owner) and one consumer
 * (the drain thread, src/collect/drain.c).
 */
#ifndef STROBE_PROBE_H
#define STROBE_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "strobe/gpu.h"
#include "strobe/sample.h"
#include "strobe/strobe.h"
#include "strobe/trace.h"

/* 0 in a library built with STROBE_PROFILING=OFF: consumers then refuse to
 * start with STROBE_EFEATURE_DISABLED. A constant, not #ifdefs, so every
 * line still compiles (and is warned about) in both builds. */
#ifdef STROBE_PROFILING_OFF
#define STROBE__PROFILING 0
#else
#define STROBE__PROFILING 1
#endif

#define STROBE__MAX_CUMULATIVE 16 /* loop accumulators open at once per thread */
#define STROBE__THREAD_NAME_MAX 64
#define STROBE__MAX_GROWS 15 /* doublings from the smallest ring (1024) to the largest (16777216) is 14 */

typedef struct strobe__cumulative {
  uint32_t site;  /* site id */
  uint32_t depth; /* depth of the enclosing scope's frame (0: thread top level) */
  uint64_t count, total, min, max; /* ticks */
} strobe__cumulative;

/* What the drain released of a journaled thread's ring (docs/capture-format.md
 * §Journal): every event before `read` is in the capture file, `count` is the
 * thread's `drained` there, and the scope stack and last time are the drain's
 * at that point, so recovery can decode what follows without the process. */
typedef struct strobe__journal_mark {
  uint64_t count;   /* ring slots delivered before `read` */
  strobe__event *read; /* an address in the writing process */
  uint64_t last_ts; /* the time a VALUE after `read` takes */
  uint32_t open;    /* open scopes at `read` (may exceed STROBE_MAX_DEPTH: only that many ids are kept) */
  uint32_t open_site[STROBE_MAX_DEPTH];
} strobe__journal_mark;

/* A thread's full state. `hot` must stay first: strobe__tls points at it.
 *
 * The ring is the array [ring, ring_end). The producer writes at hot.cur and
 * publishes by moving it; near the end, its slow path stores `wrap_at` and
 * carries on from `ring`. The drain reads from `read` up to a snapshot of
 * hot.cur: when that snapshot lies below `read`, the producer has wrapped,
 * so the drain reads [read, wrap_at) and then [ring, snapshot). The producer
 * never lets hot.cur reach `read` from below, so equal means empty; and it
 * cannot wrap a second time before the drain has moved `read`, so one
 * `wrap_at` is enough. */
typedef struct strobe__tstate {
  strobe__thread hot;
  strobe__event *ring, *ring_end; /* the producer's ring; stored atomically when it grows (in_ring reads them) */
  uint64_t ring_events;   /* capacity; atomic store when it grows */
  uint64_t ring_events_first; /* capacity when the thread attached (the footprint's "rings"; the rest grew) */
  uint32_t overflow;      /* strobe_overflow, as set up when the thread attached */
  uint32_t ring_events_max; /* GROW's bound */
  /* GROW (docs/recording.md, Overflow): the rings the producer left for
   * bigger ones, in order. The producer fills retire[retired] and then
   * bumps `retired` (release) before it publishes a cursor in the new ring;
   * the drain reads each old ring up to `final` (through `wrap_at` when it
   * had wrapped), frees it and moves `read` to the next. A ring only
   * doubles, so a thread swaps at most STROBE__MAX_GROWS times. */
  struct {
    strobe__event *ring, *final, *wrap_at, *next, *next_end;
  } retire[STROBE__MAX_GROWS];
  uint32_t retired;       /* atomic: swaps so far */
  strobe__event *read;    /* drain's position; release-stored by the drain, acquire-loaded by the producer */
  strobe__event *wrap_at; /* atomic (relaxed): where the producer last wrapped; ordered by hot.cur's release */
  uint32_t index;         /* 0-based, in order of first event; names the thread in captures */
  uint64_t os_tid;        /* 0 for a fiber (strobe_fiber_create): no OS thread owns it */
  uint32_t fiber;         /* 1: a fiber's state, entered by whichever thread runs it (thread.c, >>fibers) */
  uint32_t fiber_busy;    /* atomic, fibers only: 1 while a thread is inside it (or destroys it) */
  char name[STROBE__THREAD_NAME_MAX];
  uint32_t name_gen;      /* bumped (atomically) on rename; the drain compares */
  int exited;             /* set (release) by the thread's exit hook; then the drain frees it */
  uint64_t pending_lost;  /* producer-private: events dropped since the last LOST marker */
  uint64_t lost;          /* atomic: events dropped in total */
  uint64_t unwound;       /* atomic: scopes closed as unwound */
  strobe_misuse misuse;   /* atomic adds */
  uint32_t no_end;        /* producer-private: frames on the stack that owe no END (thread.c) */
  uint32_t ncum;
  strobe__cumulative cum[STROBE__MAX_CUMULATIVE];
  /* drain-private */
  uint32_t name_seen;     /* last name_gen delivered */
  int announced;          /* consumers have seen this thread */
  int snap_exited;        /* `exited` as of this pass */
  strobe__event *snap_cur; /* `hot.cur` as of this pass */
  uint32_t snap_retired;  /* `retired` as of this pass, loaded after snap_cur */
  uint32_t retired_done;  /* swaps whose old ring the drain has read and freed */
  strobe__event *dring, *dring_end; /* the ring the drain reads (the producer's, but for a GROW swap in flight) */
  uint64_t lost_seen;     /* `lost` as last delivered */
  uint64_t loss_report;   /* the run-time loss report (drain.c, from 1) this thread's losses were last counted in */
  char snap_name[STROBE__THREAD_NAME_MAX]; /* `name` as of this pass */
  uint32_t snap_name_gen; /* `name_gen` as of this pass */
  uint64_t drained;       /* atomic (relaxed): events delivered so far */
  uint64_t last_ts;       /* time of the last event converted: a VALUE's time (strobe.h, strobe__number) */
  uint32_t open;          /* the stream's open scopes... */
  uint32_t open_site[STROBE_MAX_DEPTH]; /* ...and their site ids, to fill in END events */
  struct strobe__tstate *next; /* global list, guarded by the thread list lock */
  /* >>journal (docs/recording.md §Crash journal): a state made while a capture's journal was open lives
   * in it, ring and all, so the kernel keeps what the thread wrote when the process dies. */
  struct strobe__journal *jnl;  /* the journal holding this state, NULL: the heap */
  uint32_t jregion;             /* its region in jnl's directory */
  uint32_t jmark_cur;           /* atomic (release): which of jmark is current */
  strobe__journal_mark jmark[2]; /* the drain's released position, written by the drain alone */
  strobe__event *jread;         /* drain-private: the position this pass releases once it flushed */
  int jrelease;                 /* drain-private: jread is set */
} strobe__tstate;

/* >>crash: the calling thread's open operation, for a crash record (src/capture/crash.c). The session layer
 * installs it when it first begins an operation (a lower layer's hook, README.md "Layout"); NULL before. It
 * must be async-signal-safe: it reads only the calling thread's own state. Returns 1 and fills kind, frame id
 * and innermost stage ("" when none), or 0 when no operation is open. */
typedef int (*strobe__crash_op_fn)(const char **kind, uint64_t *frame_id, const char **stage);
extern strobe__crash_op_fn strobe__crash_op;
/* Gives the calling thread an alternate signal stack (platform/altstack.h) once, unless it has its own, so the
 * crash handler runs when it overflows its stack. Every thread that attaches while strobe_desc.crash_handler
 * is 1 gets one (freed at its exit); the crash handler's installation gives the installing thread one. */
void strobe__thread_altstack(void);

/* >>sites */
uint32_t strobe__site_count(void); /* ids 1..count-1 are registered (acquire) */
const strobe_site *strobe__site_get(uint32_t id);
/* The id of a site met in a ring (the inline BEGIN does not register): its
 * own, registered now if need be, or, when it cannot be registered (the
 * registry is full, or it has no name), the id of a fallback site named
 * "strobe: unregistered site", so the stream stays balanced. */
uint32_t strobe__site_id_for_stream(strobe_site *site);

/* The ring event kind of a number site's events (STROBE__EV_VALUE,
 * _COUNTER, _GAUGE), or 0 for a site kind that has no numbers. */
static inline uint32_t strobe__number_event(uint32_t site_kind) {
  switch (site_kind) {
    case STROBE_SITE_VALUE: return STROBE__EV_VALUE;
    case STROBE_SITE_COUNTER: return STROBE__EV_COUNTER;
    case STROBE_SITE_GAUGE: return STROBE__EV_GAUGE;
    default: return 0;
  }
}

/* >>interned sites (src/probe/intern.c) */
/* Adds strobe_site_intern's refusals (intern_invalid, intern_full) to m:
 * process-wide counts, not any thread's. */
void strobe__intern_misuse(strobe_misuse *m);
/* Bytes strobe_site_intern has allocated for the names it copied (the
 * footprint's interned_names). Safe from any thread. */
uint64_t strobe__intern_bytes(void);
/* >>hosts: the clock-offset samples this process keeps (clock_offsets.c),
 * oldest first, into out (STROBE_CLOCK_OFFSETS_MAX entries), and how many
 * were replaced since the process started. Returns how many it copied. */
uint32_t strobe__clock_offsets_copy(strobe_clock_offset *out, uint64_t *replaced);
/* The name a session report or MCP may show for a site: its own, unless it
 * is interned and the application did not opt in
 * (strobe_desc.report_interned_names), then a placeholder "interned_<id>"
 * and *withheld = 1 (else 0; withheld may be NULL). Static or interned
 * storage: valid for the life of the process. NULL for NULL. */
const char *strobe__site_report_name(const strobe_site *s, int *withheld);

/* >>call tracing (src/probe/calltrace.c, src/probe/symbols.c; docs/exploration.md) */
/* Names a STROBE_SITE_CALL site from the symbol tables, once (later calls
 * return at once). The drain calls it before it first streams the site
 * (strobe__site_id_for_stream); never from a recording thread's hot path. */
void strobe__call_site_name(strobe_site *site);
/* strobe_trace_query_stats() less `base` (an earlier one): what a capture
 * that started at `base` reports (its CALLS blocks). */
strobe_trace_stats strobe__trace_stats_since(const strobe_trace_stats *base);
/* 1 when the calling thread traces calls now and call tracing lets its ring
 * grow (strobe_trace_desc.keep_overflow 0): the producer's slow path asks it
 * when a DROP ring is full (thread.c, make_room), never the inline path. */
int strobe__trace_grows(void);
/* strobe__begin_slow with the BEGIN stamped `ts` instead of now: a traced
 * call recorded only once it proved long enough (strobe_trace_desc.min_ns).
 * ts must be no earlier than the thread's last event and no later than now. */
uintptr_t strobe__begin_at(strobe_site *site, uintptr_t sp, uint64_t ts);
/* The name of the function at `addr` (demangled) in *name and the path of
 * its object in *module (NULL when none), both malloc'd for the caller.
 * Returns 1 when a symbol named it, 0 when none did (*name then says so:
 * "?? object+0xoffset" or "?? 0xaddress"), -1 when out of memory (both
 * NULL). Takes a lock and reads files: off the hot path only. */
int strobe__symbol_name(uintptr_t addr, char **name, char **module);
/* The function containing code address `addr` (a sampled instruction or a
 * return address less one): as strobe__symbol_name, but named by the symbol
 * that covers it, whose start goes to *start; an address no symbol covers is
 * named by its object alone ("?? object", *start its load base; "?? (no
 * object)", *start 0), so one object's unnamed code is one function. */
int strobe__symbol_function(uintptr_t addr, char **name, char **module, uintptr_t *start);
/* Calls fn(address, user) for every function symbol spelled `name` (as the
 * table spells it, or demangled) in the objects loaded now. Returns the
 * number of matches, -1 when the symbol tables could not be read. */
int strobe__symbol_find(const char *name, void (*fn)(uintptr_t addr, void *user), void *user);
/* As strobe__symbol_find, for every function symbol whose name (as the
 * table spells it, or demangled) want(name, user) accepts; want and fn run
 * under the symbol lock and must not call back into this file. */
int strobe__symbol_find_if(int (*want)(const char *name, void *user), void (*fn)(uintptr_t addr, void *user),
                           void *user);

/* >>sampler (src/probe/sampler.c, strobe/sample.h; docs/exploration.md
 * §Sampling): records read from the kernel's buffers, handed to the drain's
 * consumers sorted by thread, then time. Kinds and flags are those of the
 * capture's SAMPLES entries (docs/capture-format.md). */
enum {
  STROBE__SAMPLE_CPU = 1,        /* a sample: its frames, leaf first */
  STROBE__SAMPLE_SWITCH_OUT = 2, /* the thread left its CPU */
  STROBE__SAMPLE_SWITCH_IN = 3   /* it was back on a CPU */
};
enum {
  STROBE__SAMPLE_CUT = 1,       /* CPU: frames past STROBE_SAMPLE_MAX_FRAMES were cut */
  STROBE__SAMPLE_PREEMPTED = 2  /* SWITCH_OUT: it was still runnable (preempted), not blocked */
};
typedef struct strobe__cpu_sample {
  uint64_t ticks;   /* when, on the capture clock */
  uint64_t tid;     /* the OS thread */
  uint32_t kind, flags;
  uint32_t nframes; /* CPU: function ids at frames[frame0 .. frame0 + nframes) */
  uint32_t frame0;
} strobe__cpu_sample;
typedef void (*strobe__sample_sink)(void *ctx, const strobe__cpu_sample *s, size_t n, const uint32_t *frames);
/* Reads the kernel's buffers and hands `sink` (called once, without the
 * sampler's lock) every record older than the last millisecond, sorted by
 * (tid, time), their frames resolved to function ids; newer ones wait for
 * the next call so that no thread's records arrive out of order across CPU
 * buffers. `final` hands everything. `deliver` 0 reads and drops (nobody
 * records). The drain thread only: it names functions (symbols.c). */
void strobe__sampler_poll(int deliver, int final, strobe__sample_sink sink, void *ctx);
/* 1 while the sampler runs: its records arrive without a slow path, so the
 * drain polls for them instead of resting (docs/recording.md §The drain). */
int strobe__sampler_running(void);
/* The calling thread is one of Strobe's own (the drain thread): the sampler
 * samples it but records none of its context switches (it records no scope
 * to split, and it switches at every pass). */
void strobe__sampler_quiet_thread(void);
/* One past the largest function id given out; a function's name and object
 * path ("" when none), owned by the sampler for the life of the process.
 * Returns 1 (named by a symbol), 0 (unresolved: "?? object"), -1 (no such id). */
uint32_t strobe__sample_function_count(void);
int strobe__sample_function(uint32_t id, const char **name, const char **module);
/* strobe_sampler_query_stats() less `base` for the counts (the table sizes
 * are the process's): what a capture that started at `base` reports. */
strobe_sampler_stats strobe__sampler_stats_since(const strobe_sampler_stats *base);

/* >>labels (src/probe/label.c): short texts that operation events name (a
 * window id, an operation counter's name), interned once and referenced by
 * id. Consumers get each label once, before the first event naming it. */
#define STROBE__MAX_LABELS 4096      /* distinct labels per process; past it a label is counted and gets id 0 */
#define STROBE__MAX_LABEL_BYTES 256  /* bytes kept of a label (a window id's bound) */
/* The id of `text` (1..STROBE__MAX_LABELS-1), interned now if need be; 0 for
 * NULL or "", or when the registry is full or out of memory (counted). Takes
 * the registry's short lock: never call it on the inline hot path. */
uint32_t strobe__label_id(const char *text);
uint32_t strobe__label_count(void);          /* ids 1..count-1 are defined (acquire) */
const char *strobe__label_get(uint32_t id);  /* NULL for ids not defined */
uint64_t strobe__labels_refused(void);       /* labels that got id 0 because the registry was full */
/* The label rule (docs/sessions.md §The label rule): the length of s when it
 * is 1..max bytes of [A-Za-z0-9_] (and of . / : - with window_chars, the
 * window id rule), else 0 (also for NULL). Pure. */
size_t strobe__label_rule_len(const char *s, size_t max, int window_chars);
#define STROBE__LABEL_NAME_MAX 64 /* = STROBE_MAX_LABEL (session.h): a name's bound */

/* >>operation events: one head event STROBE__EV_OP whose data holds the
 * sub-kind (low 8 bits) and the number of payload slots that follow it.
 * Every payload slot carries a 64-bit word (its ts field) and a 32-bit one
 * (its data field); the layout per sub-kind is in docs/capture-format.md
 * (OPS block) and src/session/operation.c. */
enum {
  STROBE__OPEV_BEGIN = 1,  /* [seq | collector] [frame_id | window label] [0 | kind and flags] */
  STROBE__OPEV_END = 2,    /* [seq | collector] [frame_id | window label] [start ticks | kind and flags
                            * | population label << 16 (0: none)]
                            * [stages_dropped << 32 | counters_dropped, nstages | ncounters << 16]
                            * per stage: [total | site] [min | count] [max | run-time parent site,
                            * STROBE__OPEV_STAGE_REMOTE when it ran in the process the operation came from]
                            * per counter: [value bits | label | unit << 12 | kind label << 16] (kind 0:
                            * none; labels are below STROBE__MAX_LABELS, 4096; unit: strobe_unit, < 16) */
  STROBE__OPEV_TAKE = 3,   /* [seq | collector]: detached from this thread (hand-off) */
  STROBE__OPEV_RESUME = 4, /* [seq | collector]: resumed on this thread */
  STROBE__OPEV_REMOTE_OUT = 5, /* [seq | collector] [collector uid | peer label] [pid | process label]:
                                * handed to another process (docs/sessions.md §Across processes) */
  STROBE__OPEV_REMOTE_IN = 6   /* [seq | collector] [origin collector uid | origin process label]
                                * [origin operation id | origin pid] [hand-off ticks (local) | process label]:
                                * resumed from another process */
};
#define STROBE__OPEV_MAX_SLOTS (4u + 3u * STROBE__OPEV_STAGES_MAX + STROBE__OPEV_COUNTERS_MAX)
#define STROBE__OPEV_STAGES_MAX 32   /* = STROBE_MAX_STAGES (session.h) */
#define STROBE__OPEV_STAGE_REMOTE (1u << 31) /* beside a stage's parent site id (ids are below 65536) */
#define STROBE__OPEV_COUNTERS_MAX 16 /* = STROBE_MAX_OP_COUNTERS (session.h) */
/* Flags beside the operation kind (low 8 bits) in BEGIN and END. */
enum {
  STROBE__OPF_COMMITTED = 1u << 8,  /* END: committed */
  STROBE__OPF_HANDED_OFF = 1u << 9, /* END: resumed on another thread at least once */
  STROBE__OPF_DETAIL = 1u << 10,    /* END: stages and counters were kept since the beginning */
  STROBE__OPF_APP_FRAME = 1u << 11, /* the frame id was given by the application */
  STROBE__OPF_DEVTOOLS = 1u << 12,  /* a devtools window's operation */
  STROBE__OPF_IDLE = 1u << 13       /* END: marked idle (strobe_op_mark_idle): in no frame rate */
};
static inline uint32_t strobe__opev_sub(uint32_t data) { return data & 0xffu; }
static inline uint32_t strobe__opev_slots(uint32_t data) { return data >> 8; }
/* Payload slots that follow a head event of this kind word and data. */
static inline uint32_t strobe__payload_slots(uint32_t kind, uint32_t data) {
  kind &= 0xffu;
  return kind == STROBE__EV_OP || kind == STROBE__EV_GPU ? strobe__opev_slots(data)
                                                         : strobe__ev_slots(kind); /* the table's (strobe.h) */
}
/* Writes one operation event (head + n payload slots, n <= STROBE__OPEV_MAX_SLOTS)
 * into the calling thread's ring at time `ts`, whole or not at all (a full ring
 * counts it lost). Only while an event consumer is active; never from the
 * inline hot path. */
void strobe__emit_op_event(uint64_t ts, uint32_t sub, const uint64_t *words, const uint32_t *datas, uint32_t n);

/* >>gpu events: one head event STROBE__EV_GPU, its data the sub-kind (low 8
 * bits) and payload slot count like an operation event's; the layout per
 * sub-kind is in docs/capture-format.md (DEVICE block) and src/probe/gpu.c.
 * Domains, queues and passes travel as labels (>>labels above). */
enum {
  STROBE__GPUEV_PAIR = 1, /* head ts: host_after. [device | domain label] [host_before | 0] [rate bits | 0]:
                           * rate = the domain's nominal ticks per second, a double */
  STROBE__GPUEV_SPAN = 2, /* head ts: when recorded. [begin | domain label] [end | queue label] [frame_id | site]
                           * [0 | pass label] */
  STROBE__GPUEV_MARK = 3, /* head ts: the instant. [frame_id | which (strobe_gpu_instant)] */
  STROBE__GPUEV_LANE_SPAN = 4 /* a producer span (src/probe/producer.c). head ts: when recorded.
                               * [begin | domain label, 0 for host ticks] [end | lane label] [0 | site] */
};
#define STROBE__GPUEV_MAX_SLOTS 4u
/* Writes one GPU event (head + n payload slots) into the calling thread's
 * ring, whole or not at all (a full ring counts it lost). Only while an
 * event consumer is active. */
void strobe__emit_gpu_event(uint64_t ts, uint32_t sub, const uint64_t *words, const uint32_t *datas, uint32_t n);
/* `count` events of sub-kind `sub` with `slots` payload slots each, in one
 * reservation of the calling thread's ring: all written, or none (counted
 * lost; STROBE_ELIMIT). fill(ctx, k, words, datas) gives event k's slots;
 * it runs while the reservation is held and must not record events. Only
 * while an event consumer is active. */
int strobe__emit_gpu_batch(uint64_t ts, uint32_t sub, uint32_t slots, uint32_t count,
                           void (*fill)(void *ctx, uint32_t k, uint64_t *words, uint32_t *datas), void *ctx);
/* The capture label of declared clock domain `id` (src/probe/gpu.c); 0 for none. */
uint32_t strobe__clock_domain_label(uint32_t id);
/* Live GPU frames for sessions (src/probe/gpu.c): a session holds the live
 * table open while it runs (+1 at start, -1 at its end), and copies the
 * frames closed (FENCE_SEEN) since a sequence number it keeps. */
void strobe__gpu_live_hold(int delta);
uint64_t strobe__gpu_frames_seq(void); /* the sequence number the next closed frame gets */
/* Copies closed frames with sequence >= *seq, oldest first, up to max into
 * out (out may be NULL with max 0 to count); returns how many were copied;
 * *missed (may be NULL) gets how many such frames the table evicted before
 * they could be copied. */
uint32_t strobe__gpu_frames_since(uint64_t seq, strobe_gpu_frame *out, uint32_t max, uint64_t *missed);

/* >>threads */
/* The live thread list. The drain walks it with the lock held, delivers an
 * exited thread's last events, then unlinks and frees it. */
void strobe__threads_lock(void);
void strobe__threads_unlock(void);
strobe__tstate *strobe__threads_head(void); /* with the lock held */
/* The same without the lock, for a crash handler only (src/capture/crash.c): the list may change under it. */
strobe__tstate *strobe__threads_head_unlocked(void);
void strobe__thread_free(strobe__tstate *t); /* unlinked already */
void strobe__threads_unlink(strobe__tstate *t); /* with the lock held */
/* Misuse counted since `base` (an earlier strobe_query_misuse()): what a
 * capture that started at `base` reports in its footer. */
strobe_misuse strobe__misuse_since(const strobe_misuse *base);

/* >>journal (src/probe/journal.c; docs/recording.md §Crash journal, docs/capture-format.md §Journal)
 * A capture file's journal: a file beside it, mapped MAP_SHARED, that holds
 * the thread states (scope stacks, cursors, rings) of threads that attach
 * while it is open, and a log of the sites and labels their events name. The
 * kernel keeps its pages when the process dies, so `strobe recover` finds
 * there what the drain had not written yet. Its on-disk layout: */
#define STROBE__JOURNAL_MAGIC "STRBJNL1"
#define STROBE__JOURNAL_VERSION 1u
#define STROBE__JOURNAL_REGIONS 1024u        /* thread states per journal; later ones live on the heap (counted) */
#define STROBE__JOURNAL_LOG_BYTES (16u << 20) /* site and label records; past it they are counted, not kept */
typedef struct strobe__journal_region {
  uint64_t offset; /* in the file, page-aligned */
  uint64_t size;   /* bytes: the state, then its ring */
  uint64_t base;   /* where the writing process mapped it */
  uint32_t state;  /* STROBE__JREGION_* */
  uint32_t ring_events;
} strobe__journal_region;
enum {
  STROBE__JREGION_UNUSED = 0,
  STROBE__JREGION_LIVE = 1,  /* a thread's state, its index given: recovery reads it */
  STROBE__JREGION_FREED = 2, /* its thread is gone: reused by the next one */
  STROBE__JREGION_MAKING = 3 /* handed out, its thread not yet numbered: recovery skips it */
};
typedef struct strobe__journal_head {
  char magic[8];
  uint32_t version;
  uint32_t head_bytes;    /* sizeof this struct: where the log starts, page-rounded */
  uint64_t journal_id;    /* random; the capture's header names it (field 40) */
  uint64_t pid;
  char boot_id[40];       /* 32 hex digits, terminated; empty when unknown */
  uint32_t tstate_bytes;  /* sizeof(strobe__tstate): a reader of another layout refuses the journal */
  uint32_t layout;        /* strobe__journal_layout(): offsets of the fields recovery reads */
  uint32_t regions;       /* atomic (release): directory entries in use */
  uint32_t pad;
  uint64_t log_offset;    /* where the log starts in the file */
  uint64_t log_len;       /* atomic (release): bytes of whole records */
  uint64_t log_dropped;   /* records that did not fit */
  uint64_t heap_threads;  /* threads that attached (or were to join) while it was open but got no region (full, disk full) */
  uint64_t adopted;       /* threads that attached before it opened and joined it (journal.c >>adopt) */
  strobe__journal_region region[STROBE__JOURNAL_REGIONS];
} strobe__journal_head;
/* Log records: u32 bytes (the whole record, a multiple of 8), u32 type, then the body. */
enum {
  STROBE__JLOG_SITE = 1, /* u64 address, u32 id kind line unit flags, then name category file function parent,
                          * each u32 length + bytes */
  STROBE__JLOG_LABEL = 2 /* u32 id, u32 length + bytes */
};
uint32_t strobe__journal_layout(void);
/* Where a journal region's ring starts, after the state (cache-line aligned). */
#define STROBE__JOURNAL_RING_AT ((((uint64_t)sizeof(strobe__tstate)) + 63u) / 64u * 64u)
/* The ring a state was made with: right after it, in its region or in its own mapping (journal.c >>heap). */
static inline strobe__event *strobe__journal_ring(const strobe__tstate *t) {
  return (strobe__event *)((char *)(uintptr_t)t + STROBE__JOURNAL_RING_AT);
}
struct strobe__journal;
/* Creates `path` (refused when it exists) and maps it: from now on threads
 * that attach get their state there. One journal at a time per process:
 * STROBE_EBUSY while another is open. STROBE_EIO (errno kept) when the file
 * cannot be made or filled (a full disk: nothing is left behind). *id gets
 * its id. Any thread. */
int strobe__journal_open(const char *path, uint64_t *id);
/* Stops making states there and removes the file (a clean stop); the states
 * in it live on in the mapping until their threads are gone. Any thread. */
void strobe__journal_close(void);
/* Whether t's state is in the open journal (not on the heap, not in an earlier capture's). */
int strobe__journal_holds(const strobe__tstate *t);
/* The open journal's id, 0 when none. */
uint64_t strobe__journal_id(void);
/* The drain thread, as it delivers a site or a label to the journal's capture:
 * logged once, before any event naming it can be released. */
void strobe__journal_site(uint32_t id, const strobe_site *s);
void strobe__journal_label(uint32_t id, const char *text);
/* For each live state of the open journal that has delivered events: its
 * thread index and `drained` count (the JOURNAL_POS block). Returns how many,
 * at most max. The drain thread. */
uint32_t strobe__journal_positions(uint32_t *index, uint64_t *count, uint32_t max);
/* A thread state with a ring of cap events outside any journal, laid out as a
 * region in a mapping of its own (so a journal can adopt it); NULL when out
 * of memory. Freed with strobe__tstate_unmap. */
strobe__tstate *strobe__tstate_map(uint32_t cap);
void strobe__tstate_unmap(strobe__tstate *t);
/* Adoption (docs/recording.md §Crash journal): the open journal's generation
 * (nonzero, new at every open), 0 while none is open. A thread whose state
 * is outside it joins it at its next slow path: strobe__journal_adopt, called
 * by the state's owner holding the drain lock and the thread list lock,
 * moves the state and its ring into a region at the same address. Returns 0,
 * STROBE_ESTATE (no journal, or a state that cannot join: a fiber's, one in a
 * journal, one whose ring grew), STROBE_ELIMIT or STROBE_EIO (no region:
 * counted in the journal's heap_threads; the state is as it was). */
uint32_t strobe__journal_adopt_gen(void);
int strobe__journal_adopt(strobe__tstate *t);
/* Called by strobe__journal_open: every thread state outside the journal
 * takes the slow path at its next BEGIN or number, where it joins. */
void strobe__threads_adopt_arm(void);
/* Installed by the collect layer (as the wake hook): takes the drain lock
 * without waiting, 1 when taken; and gives it back. */
void strobe__probe_set_drain_trylock(int (*trylock)(void), void (*unlock)(void));
/* A thread state with a ring of cap events in the open journal; NULL when
 * none is open or it has no room (counted). Under no lock of the drain's. */
strobe__tstate *strobe__journal_tstate(uint32_t cap);
void strobe__journal_tstate_free(strobe__tstate *t);
/* t has its thread index: recovery may read its region now. No-op for a state on the heap. */
void strobe__journal_tstate_ready(strobe__tstate *t);
/* Fault injection for the recovery rule's tests (tests/test_crash_journal.c): when
 * strobe__journal_die_at is `point`, the process kills itself there with SIGKILL.
 * Point 1: the capture wrote a pass's events, not yet its JOURNAL_POS block;
 * point 2: it wrote that block, the drain has not yet released the slots; point 3:
 * the same in a pass that delivered a thread's end, before its state is freed.
 * 0 (the default): never. */
extern int strobe__journal_die_at;
void strobe__journal_die_point(int point);
/* The drain, after the capture holds every event of t before `read`: records
 * the mark, then lets the producer reuse the slots. */
void strobe__journal_release(strobe__tstate *t, strobe__event *read);

/* >>fork (docs/recording.md §Fork): the collect layer's pthread_atfork
 * handlers (src/collect/drain.c) call these in one order, so that fork()
 * finds every lock free and the data behind it whole. PREPARE takes the
 * file's locks (the thread list, then the desc; the journal's; the site
 * registry's; the label registry's), PARENT releases them, CHILD puts the
 * child in order (below) and releases them. */
enum { STROBE__FORK_PREPARE = 0, STROBE__FORK_PARENT = 1, STROBE__FORK_CHILD = 2 };
/* CHILD: the states of the parent's other threads, which do not exist in the
 * child, leave the thread list unread (fork copied their rings while they
 * wrote); the calling thread's state keeps its ring and stack, with the
 * child's tid. */
void strobe__threads_fork(int phase);
/* CHILD: the mappings become private copies; no journal is open. */
void strobe__journal_fork(int phase);
void strobe__sites_fork(int phase);
void strobe__labels_fork(int phase);

/* >>cost */
/* The producer's cost of recording (docs/recording.md, Cost), calibrated on
 * the calling thread the first time (a few ms: a mixed sequence of scopes,
 * values, counters and gauges through a scratch ring of the real ring's
 * size), then the same figures for the life of the process. All 0 when it
 * could not be measured (no memory, the site registry full, profiling
 * compiled out). */
typedef struct strobe__cost {
  double event_ns;         /* ns per event on the recording thread */
  double scope_ns;         /* ns per scope, its share of the values and counters included */
  double events_per_scope; /* of the calibration's mix */
  double explicit_scope_ns; /* ns per scope of the same mix opened and closed by STROBE_BEGIN and STROBE_END */
} strobe__cost;
strobe__cost strobe__measure_cost(void);

/* >>allocations: the calling thread is one of Strobe's own (the drain): its
 * allocations and frees are not recorded (strobe.h >>allocations; the
 * interposer, src/malloc/interpose.c, sees the drain's buffers too). */
void strobe__probe_own_thread(void);
/* A copy of strobe__active kept up to date in `mirror` (the interposer's, so
 * that its idle path reads its own variable: docs/memory.md §The
 * interposer). Returns 0, or STROBE_ELIMIT past 4 mirrors. Any thread. */
STROBE_API int strobe__active_mirror(uint32_t *mirror);
/* The collect layer, after each change of strobe__active: copies it to every mirror. */
void strobe__active_changed(void);
/* 1 on Strobe's own threads: what the interposer checks before recording. */
extern STROBE_API _Thread_local int strobe__tls_own __attribute__((tls_model("initial-exec")));

/* >>wake */
/* The probe asks for a drain pass (a ring passed its middle, events were
 * dropped, a thread exited) through this hook, which the collect layer
 * installs when it starts the drain thread: the probe never calls up into
 * collect by name. NULL (no drain yet) makes the request a no-op. Safe from
 * any thread; `wake` must never block for long. */
void strobe__probe_set_wake(void (*wake)(void));
/* STROBE_OVERFLOW_WAIT: a producer whose ring is full waits for a drain pass
 * through this hook (installed with the wake hook). It returns 1 once a pass
 * completed after the call; 0 at once, without waiting, when waiting could
 * deadlock or never end: the caller itself runs drain passes (a consumer
 * recording), no drain thread runs, or the drain is known stuck since its
 * last pass; -1 when no pass completed within STROBE__WAIT_STALL_MS (the
 * drain is stuck, perhaps on a lock the caller holds: later waiters do not
 * wait for it until it passes again). Otherwise than on 1 the event is
 * dropped and counted. NULL (no drain yet) means 0. */
#define STROBE__WAIT_STALL_MS 1000
void strobe__probe_set_wait(int (*wait)(void));
/* The overflow modes' counts since the library loaded (strobe_stats' rings_grown and producer_waits, without
 * its walk of the threads): for the captures' RINGS block (docs/capture-format.md). Safe from any thread. */
void strobe__probe_overflow_counts(uint64_t *rings_grown, uint64_t *producer_waits);
/* The drain's rest (docs/recording.md §The drain): before a long sleep the
 * drain arms every thread's state so that its next BEGIN or number takes the
 * slow path (limit 1, num_limit 0, as while a LOST marker is owed); the
 * first slow path to run after that, on any thread, disarms and wakes the
 * drain. The inline hot path is unchanged: it already sends an event past its
 * limit to the slow path. Disarm when the drain wakes for any other reason. */
/* Returns 1 when a thread wrote events since the drain's last pass (before
 * its limits dropped): the drain then passes again before resting. */
int strobe__probe_rest_arm(void);
/* Returns 1 when the drain was still armed, 0 when a slow path had disarmed it (and woken it). */
int strobe__probe_rest_disarm(void);

#endif
