/*
 * strobe.h — Strobe's instrumentation API: sites, scopes, values, cumulative
 * loop scopes, counters, gauges, frame marks, thread names, fibers, errors, version.
 *
 * Thread rule: every function and macro here is safe to call from any thread
 * unless its comment says otherwise. Instrumentation never blocks the calling
 * thread and never allocates on the hot path; the first event of a thread
 * allocates that thread's ring once.
 *
 * Cost rule: with no consumer active (no capture recording, no session) a
 * site costs one relaxed atomic load and an untaken branch. Compiled with
 * STROBE_DISABLE defined, every macro expands to no code at all.
 *
 * Content rule: Strobe records static source labels and numbers only. Names
 * passed to the macros must be string literals (or other static storage);
 * they are referenced, never copied, and never include application data.
 * The one exception is a name known only at run time, given to
 * strobe_site_intern: it is copied, flagged as content (STROBE_SITE_INTERNED),
 * kept in local captures, and left out of session reports and MCP unless the
 * application opts in (strobe_desc.report_interned_names).
 *
 * Everything named strobe__* below is implementation detail that the inline
 * hot path needs to see; it is not API and may change in any release.
 *
 * API conventions, for every header in include/strobe/ (docs/api.md says
 * the same, with every renamed name and its successor):
 *  - Configuration is a `strobe_<object>_desc` struct whose zero fields mean
 *    "default"; the values in force are read back with `*_query_desc`.
 *  - A read-only getter, one that copies state into a caller's struct or
 *    returns a count, a borrowed pointer or a status without changing
 *    anything, is `strobe_<object>_query_<thing>` (`strobe_query_<thing>`
 *    for process-wide state), after sokol's sg_query_*. Predicates that
 *    answer 1 or 0 read as the statement they test (strobe_op_detailed).
 *  - Lifetimes have one verb pair each: create/destroy (or retain/release
 *    when reference counted) for heavy objects, open/close for capture
 *    files, start/stop for running things (recorders, streams, sessions,
 *    servers), begin/end for spans (scopes, operations, application
 *    scopes). `_free` releases what a call handed to the caller.
 *  - A function is declared in the header of the part it belongs to:
 *    server functions in server.h, capture reading in capture.h.
 *  - Renamed functions keep their old names as deprecated inline aliases
 *    for one release (each header's >>deprecated section); they warn when
 *    used, and STROBE_NO_DEPRECATED hides them.
 */
#ifndef STROBE_STROBE_H
#define STROBE_STROBE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* >>version */
#define STROBE_VERSION_MAJOR 0
#define STROBE_VERSION_MINOR 1
#define STROBE_VERSION_PATCH 0
#define STROBE_VERSION_STRING "0.1.0"
/* Encoded as major*10000 + minor*100 + patch, comparable with strobe_version_number(). */
#define STROBE_VERSION_NUMBER (STROBE_VERSION_MAJOR * 10000 + STROBE_VERSION_MINOR * 100 + STROBE_VERSION_PATCH)

#if defined(_WIN32)
#define STROBE_API
#else
#define STROBE_API __attribute__((visibility("default")))
#endif

/* Marks an old name kept for one release; the message names its successor. */
#if defined(__GNUC__)
#define STROBE_DEPRECATED(msg) __attribute__((deprecated(msg)))
#else
#define STROBE_DEPRECATED(msg)
#endif

/* Version of the library actually linked ("0.1.0"); compare with STROBE_VERSION_STRING. */
STROBE_API const char *strobe_version(void);
STROBE_API int strobe_version_number(void);

/* >>errors
 * Every fallible function returns 0 (or a non-negative count) on success and
 * one of these negative codes on failure. */
#define STROBE_ERRNO_MAP(XX)                                                              \
  XX(EINVAL, -1, "invalid argument")                                                     \
  XX(ENOMEM, -2, "out of memory")                                                        \
  XX(EFEATURE_DISABLED, -3, "profiling was compiled out of this build of libstrobe")     \
  XX(EIO, -4, "input/output error")                                                      \
  XX(EBUSY, -5, "resource busy: a consumer of this kind is already active")              \
  XX(EBADMAGIC, -6, "not a Strobe capture file (bad magic)")                             \
  XX(EVERSION, -7, "unsupported capture format version")                                 \
  XX(ETRUNCATED, -8, "capture file is cut short inside a block")                         \
  XX(ECORRUPT, -9, "capture block is corrupt (checksum or compressed data)")             \
  XX(ERANGE, -10, "capture refers to an id that is out of range")                        \
  XX(ECLOSED, -11, "the collector is closed")                                            \
  XX(EUNKNOWN_ID, -12, "unknown session id")                                             \
  XX(EENDED, -13, "session already ended")                                               \
  XX(ELIMIT, -14, "limit reached")                                                       \
  XX(ELABEL, -15, "invalid label: a name is 1-64 of [A-Za-z0-9_], a window id 1-256 of [A-Za-z0-9_./:-]")\
  XX(EWINDOW, -16, "unknown, closed or untracked window")                                \
  XX(EPARENT, -17, "parent scope token is not live in this collector")                   \
  XX(ENOTOWNER, -18, "the caller does not own this session")                             \
  XX(EPERM, -19, "permission denied")                                                    \
  XX(ECANCELLED, -20, "session was cancelled")                                           \
  XX(ESTATE, -21, "operation not valid in the current state")                          \
  XX(ETOKEN, -22, "operation token is malformed, cut short, corrupt or of another version") \
  XX(EREPLAY, -23, "operation token was already resumed (replayed) or is older than the replay window") \
  XX(EFOREIGN, -24, "operation token is from another host or boot, or addressed to another process") \
  XX(ENOTFOUND, -25, "not found in the capture (no such frame, deep capture or resource)")\
  XX(EPEER, -26, "the peer's answer is not a Strobe clock reply (GET /api/clock)")              \
  XX(EUNSUPPORTED, -27, "not available on this platform (docs/platforms.md)")

enum {
#define STROBE__ERR_ENUM(name, value, text) STROBE_##name = (value),
  STROBE_ERRNO_MAP(STROBE__ERR_ENUM)
#undef STROBE__ERR_ENUM
};

/* Human text for an error code ("invalid argument"); "unknown error" for other values. Never NULL. */
STROBE_API const char *strobe_strerror(int err);
/* Symbolic name for an error code ("STROBE_EINVAL"); "STROBE_E?" for other values. Never NULL. */
STROBE_API const char *strobe_err_name(int err);

/* >>setup
 * Optional process-wide configuration. Zero fields mean "default". Call it
 * before the first instrumented event of any thread; afterwards it fails with
 * STROBE_EBUSY and changes nothing. */
/* What a thread does when its ring is full (docs/recording.md, Overflow):
 * the one table. X(ID, number, name) gives STROBE_OVERFLOW_<ID> = number;
 * `name` is what captures' readers, the CLI and the viewer call the mode. */
#define STROBE_OVERFLOW_MODES(X)                                                           \
  X(DROP, 0, "drop") /* drop new events, count them and say so (the default) */           \
  X(GROW, 1, "grow") /* double the thread's ring, up to ring_events_max, then drop */     \
  X(WAIT, 2, "wait") /* the producer waits for the drain: bounded memory, no loss */

typedef enum strobe_overflow {
#define STROBE__OVERFLOW_ENUM(id, number, name) STROBE_OVERFLOW_##id = number,
  STROBE_OVERFLOW_MODES(STROBE__OVERFLOW_ENUM)
#undef STROBE__OVERFLOW_ENUM
} strobe_overflow;

/* The name of an overflow mode ("drop", ...), or NULL for a number that is
 * no mode. Safe to call from any thread. */
static inline const char *strobe_overflow_name(uint32_t mode) {
  switch (mode) {
#define STROBE__OVERFLOW_CASE(id, number, name) \
  case number: return name;
    STROBE_OVERFLOW_MODES(STROBE__OVERFLOW_CASE)
#undef STROBE__OVERFLOW_CASE
    default: return (const char *)0;
  }
}

/* Events lost while recording, as the drain thread reports them at run time
 * (at most once per second, and only while events are being lost). */
typedef struct strobe_loss_report {
  uint64_t lost;       /* events lost since the previous report */
  uint64_t lost_total; /* events lost since the library loaded */
  uint32_t threads;    /* threads that lost events since the previous report */
  uint32_t overflow;   /* the strobe_overflow mode in force */
} strobe_loss_report;
/* Called on the drain thread; must not block for long nor record events (what it
 * records while the drain runs is dropped when its ring is full). */
typedef void (*strobe_loss_fn)(const strobe_loss_report *report, void *user);

typedef struct strobe_desc {
  uint32_t ring_events;      /* events per thread ring, power of two, 1024..16777216; default 262144 (4 MiB) */
  uint32_t drain_interval_ms; /* how often the drain thread empties rings, 1..1000; default 2 */
  uint32_t overflow;         /* strobe_overflow; default STROBE_OVERFLOW_DROP */
  uint32_t ring_events_max;  /* GROW: the most events a ring grows to, power of two, ring_events..16777216;
                              * default 16777216 (256 MiB), the bound: grown only while the drain lags */
  strobe_loss_fn on_loss;    /* run-time loss reports; NULL: one line on stderr, at most once a second */
  void *on_loss_user;        /* passed to on_loss */
  uint32_t report_interned_names; /* 1: session reports and MCP carry the names of interned sites
                                   * (strobe_site_intern) that follow the report label rule (1-64
                                   * letters, digits, underscores); 0 (default): they show
                                   * "interned_<site id>" and a count instead, since those names are
                                   * application content. 0 or 1, else STROBE_EINVAL */
  uint32_t crash_handler;    /* 1: while a capture file records (strobe/record.h), a SIGSEGV, SIGBUS, SIGILL,
                              * SIGFPE or SIGABRT first writes where the process died into it (a CRASH block:
                              * the signal, the thread, every thread's open scopes, the open operation and
                              * stage), then goes to the handler that was there before (docs/recording.md
                              * §Crashes); 0 (default): no handler. 0 or 1, else STROBE_EINVAL; 1 on
                              * Windows, where it is not ported: STROBE_EUNSUPPORTED (docs/platforms.md) */
} strobe_desc;

STROBE_API int strobe_setup(const strobe_desc *desc);
/* The configuration in force, defaults resolved. */
STROBE_API strobe_desc strobe_query_desc(void);
/* 1 when this library was built with profiling (STROBE_PROFILING=ON), else 0. */
STROBE_API int strobe_profiling_available(void);

/* >>sites
 * A site is the static metadata of one instrumentation point. It lives in
 * static storage at the call site and receives a small integer id the first
 * time it fires; streams carry only that id. */
/* Site kinds: the one table, numbered as captures store them
 * (docs/capture-format.md, SITES). X(ID, number, name, timed) gives
 * STROBE_SITE_<ID> = number; `name` is what reports, exports and the CLI
 * call the kind; `timed` is 1 for kinds whose events are BEGIN/END scopes. */
#define STROBE_SITE_KINDS(X)                                                                        \
  X(SCOPE, 1, "scope", 1)           /* a timed span: begin/end */                                  \
  X(VALUE, 2, "value", 0)           /* a number attached to the innermost open scope */            \
  X(CUMULATIVE, 3, "cumulative", 0) /* a loop body aggregated per enclosing scope */               \
  X(COUNTER, 4, "counter", 0)       /* a monotonic sum of deltas */                                \
  X(GAUGE, 5, "gauge", 0)           /* a sampled level */                                          \
  X(FRAME, 6, "frame", 0)           /* a frame boundary mark */                                    \
  X(STAGE, 7, "stage", 1)           /* a scope that is also a stage of the current operation (session.h) */ \
  X(ELEMENT, 8, "element", 0)       /* an element type: its name attributes scopes (>>elements) and names tree nodes */ \
  X(ALLOC, 9, "alloc", 0)           /* a memory pool's allocations (>>allocations): the name is the pool */ \
  X(FREE, 10, "free", 0)            /* the same pool's frees (>>allocations) */                    \
  X(MESSAGE, 11, "message", 0)      /* a log message: the name is its text (>>messages) */ \
  X(LOCK, 12, "lock", 0)            /* a lock: its name is the lock's static label (strobe/lock.h) */

typedef enum strobe_site_kind {
#define STROBE__SITE_ENUM(id, number, name, timed) STROBE_SITE_##id = number,
  STROBE_SITE_KINDS(STROBE__SITE_ENUM)
#undef STROBE__SITE_ENUM
} strobe_site_kind;

/* For the tables below whose rows are X(ID, number, name, ...): a row
 * counts one (the size of a per-row table), and a row is the switch case
 * that returns its name. */
#define STROBE__ROW_COUNT(id, number, ...) +1
#define STROBE__ROW_NAME(id, number, name, ...) \
  case number: return name;

/* Units a site declares for its numbers: the one table, numbered as
 * captures store them (docs/capture-format.md, SITES). X(ID, number, name):
 * STROBE_UNIT_<ID> = number; `name` is what reports, exports, the viewer and
 * `strobe report` call the unit. Printing follows the unit, never the name:
 * bytes as B/KiB/MiB/GiB, ns and ms as adaptive durations (ns, µs, ms, s),
 * percent with a % sign, count and none as plain numbers. */
#define STROBE_UNITS(X)                                                    \
  X(NONE, 0, "none")       /* a plain number (the default) */              \
  X(COUNT, 1, "count")     /* a number of things */                        \
  X(BYTES, 2, "bytes")     /* a size in bytes */                           \
  X(NS, 3, "ns")           /* a duration in nanoseconds */                 \
  X(MS, 4, "ms")           /* a duration in milliseconds */                \
  X(PERCENT, 5, "percent") /* 0..100 */

typedef enum strobe_unit {
#define STROBE__UNIT_ENUM(id, number, name) STROBE_UNIT_##id = number,
  STROBE_UNITS(STROBE__UNIT_ENUM)
#undef STROBE__UNIT_ENUM
} strobe_unit;

/* One past the largest unit number: the size of a per-unit table. */
enum { STROBE_UNIT_LIMIT = 0 STROBE_UNITS(STROBE__ROW_COUNT) };

/* The name of a unit ("bytes", ...), or NULL for a number that is no unit
 * (a capture from a newer writer). Safe to call from any thread. */
static inline const char *strobe_unit_name(uint32_t unit) {
  switch (unit) {
    STROBE_UNITS(STROBE__ROW_NAME)
    default: return NULL;
  }
}

/* Writes `v` in `unit` as people read it (the texts `strobe report` prints):
 * ns and ms as a duration in the unit that fits it with three significant
 * digits ("712 ns", "14.2 µs", "3.10 ms", "1.25 s"), bytes as "512 B",
 * "1.50 KiB", "3.20 MiB", percent as "99.5%", count and none (and numbers
 * that are no unit) as plain numbers; "-" for NaN and infinities. At most
 * `cap` bytes including the terminator (32 always suffice; UTF-8: "µ" is
 * two bytes); returns buf. Pure: safe from any thread. */
STROBE_API const char *strobe_unit_format(char *buf, size_t cap, double v, uint32_t unit);

typedef struct strobe_site {
  const char *name;     /* static label; never copied (an interned site's own copy) */
  const char *category; /* static label or NULL */
  const char *parent;   /* stages: the name of the stage this one is nested in, or NULL */
  const char *file;     /* __FILE__ */
  const char *function; /* __func__ */
  uint32_t line;        /* __LINE__ */
  uint32_t kind;        /* strobe_site_kind */
  uint32_t id;          /* 0 until first recorded, then 1..STROBE_MAX_SITES-1; written once, atomically */
  uint32_t unit;        /* low 8 bits: the strobe_unit of its numbers (values, counters, gauges), 0: none;
                         * the bits above are the hot path's (STROBE__NUM_*: how it stores the number) */
  uint32_t flags;       /* STROBE_SITE_* flags below; 0 for every site declared in source */
} strobe_site;

/* Site flags. Captures store them with the site (docs/capture-format.md, SITES). */
enum {
  STROBE_SITE_INTERNED = 1, /* made by strobe_site_intern: the name is run-time content, copied */
  STROBE_SITE_CALL = 2      /* a traced function's (strobe/trace.h): named from the symbol tables, content */
};

#define STROBE_MAX_SITES 65536 /* ids are below this; the last one is kept for "strobe: unregistered site" */

/* Registers a site (normally done on its first event). Returns its id (>0) or a negative error
 * (STROBE_ELIMIT when STROBE_MAX_SITES - 2 are registered; scopes of sites that cannot be registered are
 * recorded under the site "strobe: unregistered site"). Idempotent. */
STROBE_API int strobe_site_register(strobe_site *site);

/* >>interned sites (docs/recording.md §Run-time names)
 * A site for a name known only at run time (an interpreter's functions, a
 * table's columns). The first call with a name copies it into a new site;
 * every later call with the same name, category and kind returns that same
 * site, found without a lock or an allocation (so it may be called on every
 * use, though keeping the pointer is cheaper). The site lives until the
 * process exits. Use it with the *_SITE macros below; scopes, values and
 * counters on it cost what they cost on a site declared in source.
 *
 *   name      `len` bytes of UTF-8, 1..STROBE_MAX_INTERNED_NAME, no NUL byte;
 *             copied, need not be terminated.
 *   category  a static label or NULL, like STROBE_SCOPE_CAT's; referenced, not copied.
 *   kind      any strobe_site_kind but STROBE_SITE_FRAME.
 *
 * Never returns NULL. When the name cannot be interned it returns a fallback
 * site of the same kind (STROBE_SITE_SCOPE for an invalid kind), shared by
 * every refused name, so instrumented code needs no error branch, and counts
 * the refusal as misuse (strobe_query_misuse: intern_invalid for invalid
 * arguments, intern_full when STROBE_MAX_INTERNED names are interned or
 * memory ran out), which captures, `strobe info`, `strobe report` and the
 * viewer show. strobe_site_query_error says which error gave a fallback.
 *
 * Interned names are application content: captures keep them, flagged
 * STROBE_SITE_INTERNED; session reports and MCP never carry them unless
 * strobe_desc.report_interned_names is 1.
 *
 * Thread rule: any thread, concurrently; inserting a new name takes a short
 * lock, finding an existing one never does. */
#define STROBE_MAX_INTERNED 8192      /* distinct interned names per process */
#define STROBE_MAX_INTERNED_NAME 255  /* bytes of one interned name */
STROBE_API strobe_site *strobe_site_intern(const char *name, size_t len, const char *category, strobe_site_kind kind);
/* strobe_site_intern with the unit of the site's numbers (docs/recording.md
 * §Units): one of STROBE_UNITS for a STROBE_SITE_VALUE, _COUNTER or _GAUGE
 * site, which captures carry and every report, export and the viewer print
 * by; STROBE_UNIT_NONE for any other kind. The unit is part of the interned
 * key, as a source site's unit is its own: the same name, category and kind
 * with another unit is another site. strobe_site_intern(...) is this with
 * STROBE_UNIT_NONE. A unit outside STROBE_UNITS, or one on a kind that has
 * no numbers, is refused like an invalid name: the fallback site, counted in
 * intern_invalid, strobe_site_query_error says STROBE_EINVAL. Thread rule as
 * strobe_site_intern. */
STROBE_API strobe_site *strobe_site_intern_unit(const char *name, size_t len, const char *category,
                                                strobe_site_kind kind, strobe_unit unit);

/* 0 for a site that records under its own name (declared in source or
 * interned); for a fallback site strobe_site_intern handed out instead, the
 * reason: STROBE_EINVAL (invalid name or kind), STROBE_ELIMIT
 * (STROBE_MAX_INTERNED names interned) or STROBE_ENOMEM. STROBE_EINVAL for NULL. */
STROBE_API int strobe_site_query_error(const strobe_site *site);

/* >>threads
 * Names the calling thread in captures ("render"). The name must be static storage; at most
 * 63 bytes are kept. Returns 0 or STROBE_EINVAL. */
STROBE_API int strobe_thread_set_name(const char *name);

/* The innermost open scope of the calling thread, or NULL when none is open or nothing records.
 * The site belongs to its call site (static storage). */
STROBE_API const strobe_site *strobe_thread_query_scope(void);

/* >>fibers (docs/recording.md §Fibers)
 * A fiber is a scope stack of its own for code that suspends and resumes,
 * possibly on another thread (a ucontext coroutine, a green thread, an
 * asyncio task): between strobe_fiber_enter and strobe_fiber_leave, every
 * scope, number and loop scope the calling thread records goes to the
 * fiber, so a coroutine's spans nest under the coroutine wherever it
 * resumes. Captures give each fiber a lane of its own, like a thread's
 * (os_tid 0, named after the fiber); the threads keep theirs.
 *
 * strobe_fiber_create: a new fiber named `name` (`len` bytes, 1..63, no NUL
 *   byte; copied; a run-time name is application content, kept in captures
 *   only). Allocates its ring (an eighth of strobe_desc.ring_events, at least
 *   1024 events), like a thread's first event, and freezes strobe_setup.
 *   Returns 0 with *out set; STROBE_EINVAL (bad name or NULL out),
 *   STROBE_ENOMEM (then *out is NULL).
 * strobe_fiber_enter: the calling thread records into `fiber` until it
 *   leaves. Entering a fiber from inside another leaves that one first;
 *   entering the one it is in does nothing. Returns 0; STROBE_EBUSY when
 *   another thread is inside it (one thread at a time: each fiber's ring has
 *   one producer); STROBE_EINVAL for NULL; STROBE_ESTATE while the thread
 *   exits. The hand-off of a fiber between threads must be ordered by the
 *   application (as its coroutine's is: a queue, a lock).
 * strobe_fiber_leave: back to the thread's own scope stack. Scopes opened in
 *   the fiber stay open in it. Returns 0; STROBE_ESTATE when the thread is in
 *   no fiber. A thread that exits inside a fiber leaves it when it exits, if
 *   it ever recorded (leave first otherwise).
 * strobe_fiber_query_current: the fiber the calling thread is inside, or NULL.
 * strobe_fiber_destroy: ends the fiber: block scopes still open in it are
 *   closed as unwound, STROBE_BEGIN scopes counted open_at_exit, like a
 *   thread's exit; its lane ends and the drain frees it after delivering its
 *   last events (the pointer is invalid after 0). STROBE_EBUSY when a thread
 *   is inside it (nothing changes); NULL: returns 0.
 * Thread rule: any thread; enter and leave act on the calling thread. */
typedef struct strobe_fiber strobe_fiber;
STROBE_API int strobe_fiber_create(const char *name, size_t len, strobe_fiber **out);
STROBE_API int strobe_fiber_enter(strobe_fiber *fiber);
STROBE_API int strobe_fiber_leave(void);
STROBE_API strobe_fiber *strobe_fiber_query_current(void);
STROBE_API int strobe_fiber_destroy(strobe_fiber *fiber);

/* >>unwinding
 * A scope whose END never runs — a longjmp or a C++ exception through C code
 * compiled without -fexceptions skipped it, or its thread exited with
 * pthread_exit or was cancelled — is closed as *unwound* by the first BEGIN
 * or END of its thread that proves its C frame gone, or when the thread
 * exits; the END written then is flagged, and reports and the viewer show it
 * apart, never as a duration (docs/recording.md, Unwinding). These two calls
 * do it explicitly, for code that longjmps:
 *
 *   int depth = strobe_depth();
 *   if (setjmp(env)) strobe_unwind_to(depth);   (the longjmp landed)
 *
 * strobe_depth: the number of scopes open on the calling thread (block,
 * explicit and stage scopes; 0 when nothing records). Never fails.
 * strobe_unwind_to: closes as unwound the calling thread's innermost open
 * scopes until `depth` remain, at the time of the call. A depth at or above
 * the current one, a negative depth, or a thread that never recorded:
 * nothing happens. Only for scopes whose END will never run: a scope closed
 * here whose END runs later counts as misuse (`unbalanced`). Both are for
 * the calling thread only. */
STROBE_API int strobe_depth(void);
STROBE_API void strobe_unwind_to(int depth);

/* >>elements (docs/recording.md §Elements)
 * An element is a piece of an application's UI (a row, a cell, a button):
 * a static type name and a 64-bit id, the hash of the application's own
 * stable identity for it. A scope attributed to an element
 * (STROBE_SCOPE_ELEMENT, STROBE_ELEMENT below) carries both, and the UI-tree
 * snapshots of strobe/tree.h name their nodes the same way, so a span and a
 * tree node of one element compare directly.
 *
 * The id hash is 64-bit FNV-1a (offset basis 0xcbf29ce484222325, prime
 * 0x100000001b3) over the identity's bytes; strobe_element_id_more folds more
 * bytes into an id (a path of keys: a row's id, then the cell's column).
 * Every consumer uses these two and nothing else. Pure: any thread. */
#define STROBE_ELEMENT_ID_BASIS 0xcbf29ce484222325ull
static inline uint64_t strobe_element_id_more(uint64_t id, const void *bytes, size_t len) {
  const unsigned char *p = (const unsigned char *)bytes;
  for (size_t i = 0; i < len; i++) id = (id ^ p[i]) * 0x100000001b3ull;
  return id;
}
static inline uint64_t strobe_element_id(const void *bytes, size_t len) {
  return strobe_element_id_more(STROBE_ELEMENT_ID_BASIS, bytes, len);
}

/* >>operation-kinds
 * The operation kinds (session.h starts operations, captures carry them), one
 * line each: enum name, number (dense from 1), and the name reports,
 * `strobe report`, exports and the viewer print. A new kind is one line here. */
#define STROBE_OP_KINDS(X)                                                              \
  X(PASS, 1, "pass")       /* a frame: update, layout, raster, render, present */      \
  X(REBUILD, 2, "rebuild") /* root rebuild / subtree refresh */                        \
  X(INPUT, 3, "input")     /* input dispatch: never counted as a rendered frame */     \
  X(REQUEST, 4, "request") /* one command handled by a server */

typedef enum strobe_op_kind {
#define STROBE__OP_KIND_ENUM(id, number, name) STROBE_OP_##id = number,
  STROBE_OP_KINDS(STROBE__OP_KIND_ENUM)
#undef STROBE__OP_KIND_ENUM
} strobe_op_kind;

/* One past the largest kind (kinds are 1..N): the size of a per-kind table. */
enum { STROBE_OP_KIND_LIMIT = 1 STROBE_OP_KINDS(STROBE__ROW_COUNT) };

/* The name of an operation kind ("pass", ...), or NULL for a number that is
 * no kind (a capture from a newer writer). Safe to call from any thread. */
static inline const char *strobe_op_kind_name(uint32_t kind) {
  switch (kind) {
    STROBE_OP_KINDS(STROBE__ROW_NAME)
    default: return NULL;
  }
}

/* The misuse counters: the one list, in the order a capture's footer stores
 * them (docs/capture-format.md, Totals). X(name): a field of strobe_misuse
 * and the key every report, export and viewer uses for it. */
#define STROBE_MISUSE_MAP(X)                                                                      \
  X(end_without_begin)   /* STROBE_END with no open scope: ignored */                            \
  X(unbalanced)          /* scopes closed out of order: inner ones closed first */               \
  X(open_at_exit)        /* STROBE_BEGIN scopes open when their thread exited: left unfinished */ \
  X(depth_overflow)      /* scopes deeper than STROBE_MAX_DEPTH: not recorded */                 \
  X(value_without_scope) /* STROBE_VALUE with no open scope: ignored */                          \
  X(cumulative_overflow) /* more than 16 distinct loop sites open at once on a thread: ignored */      \
  X(intern_invalid)      /* strobe_site_intern with an invalid name or kind: given a fallback site */    \
  X(intern_full)         /* strobe_site_intern past STROBE_MAX_INTERNED names (or memory): fallback */

/* Misuse counters of the calling process, summed over all threads; one
 * uint64_t per STROBE_MISUSE_MAP entry, in its order. */
typedef struct strobe_misuse {
#define STROBE__MISUSE_FIELD(name) uint64_t name;
  STROBE_MISUSE_MAP(STROBE__MISUSE_FIELD)
#undef STROBE__MISUSE_FIELD
} strobe_misuse;
STROBE_API strobe_misuse strobe_query_misuse(void);

/* Process-wide event statistics since the library loaded. */
typedef struct strobe_event_stats {
  uint64_t events_written; /* events stored into thread rings */
  uint64_t events_lost;    /* events dropped because a ring was full */
  uint64_t scopes_unwound; /* scopes closed as unwound: their END never ran (strobe_unwind_to, docs/recording.md) */
  uint32_t threads_seen;   /* threads that ever recorded */
  uint32_t rings_grown;    /* STROBE_OVERFLOW_GROW: times a ring doubled */
  uint64_t producer_waits; /* STROBE_OVERFLOW_WAIT: times a producer waited for the drain */
} strobe_event_stats;
STROBE_API strobe_event_stats strobe_query_event_stats(void);

/* >>clock
 * The clock every capture and report uses, calibrated on first call (~5 ms once). */
typedef struct strobe_clock_info {
  const char *source;     /* "tsc", "cntvct" or "monotonic"; static storage */
  int invariant;          /* 1 when the tick rate is constant across cores and sleep states */
  double ns_per_tick;     /* calibrated against CLOCK_MONOTONIC */
  uint64_t epoch_mono_ns; /* CLOCK_MONOTONIC at the clock's epoch (not calendar time) */
} strobe_clock_info;
STROBE_API strobe_clock_info strobe_query_clock(void);

/* >>hosts
 * This host's clock as other processes see it, and what it is known to be
 * against other hosts' clocks (docs/sessions.md §Across hosts). Captures of
 * one host share CLOCK_MONOTONIC (its boot id says which); captures of two
 * hosts align through clock-offset samples, which libstrobe_server measures
 * (strobe_clock_offset_measure, include/strobe/server.h) and every capture
 * this process writes afterwards carries (CLOCK_OFFSETS block). */
typedef struct strobe_clock_offset {
  char peer[64];          /* the peer's name (its URL's host:port, or the caller's); may be empty */
  char peer_boot_id[33];  /* the peer host's boot id: 32 hex digits */
  int64_t offset_ns;      /* the peer's CLOCK_MONOTONIC minus this host's, at the same instant */
  uint64_t error_ns;      /* the true offset lies within offset_ns +- error_ns (half the round trip
                             less the peer's own time answering), at at_mono_ns: clocks drift after it */
  uint64_t rtt_ns;        /* that round trip */
  uint64_t at_mono_ns;    /* this host's CLOCK_MONOTONIC at the sample (the round trip's middle) */
  uint32_t rounds;        /* round trips taken; the one with the lowest round trip is kept */
} strobe_clock_offset;
#define STROBE_CLOCK_OFFSETS_MAX 64 /* samples kept per process, newest first: older ones are replaced (counted) */

/* This host's boot id (32 hex digits and a NUL) and its CLOCK_MONOTONIC now,
 * as captures and tokens show it. Either pointer may be NULL. Returns 0, or
 * STROBE_EIO when the host names no boot (boot_id empty, *mono_ns still set).
 * Any thread. */
STROBE_API int strobe_query_host_clock(char boot_id[33], uint64_t *mono_ns);
/* Keeps a clock-offset sample of this host against a peer: every capture
 * this process finishes afterwards carries it (the newest
 * STROBE_CLOCK_OFFSETS_MAX; older ones are replaced and counted). The sample
 * is copied. Returns 0, or STROBE_EINVAL (NULL, a peer_boot_id that is not 32
 * hex digits, rounds 0, error_ns 0 or above rtt_ns, or
 * an at_mono_ns in this host's future), keeping nothing. Any thread. */
STROBE_API int strobe_clock_offset_add(const strobe_clock_offset *sample);

/* >>deprecated: old names, kept for one release (see the conventions above). */
#if !defined(STROBE_NO_DEPRECATED)
STROBE_DEPRECATED("use strobe_query_misuse")
static inline strobe_misuse strobe_misuse_counts(void) { return strobe_query_misuse(); }
STROBE_DEPRECATED("use strobe_thread_query_scope")
static inline const strobe_site *strobe_current_scope(void) { return strobe_thread_query_scope(); }
#endif

/* ======================================================================
 * >>hot path internals (not API)
 * ====================================================================== */
/* An unfinished operation is reported "stalled" when it has run longer than
 * this many times the p95 of the report's completed operations of its kind,
 * "in_flight" otherwise (docs/sessions.md §In flight or stalled): an ordinary
 * frame caught mid-way by a read or end is at most about 1x. Here, below the
 * sessions, so that the explanation of an unfinished frame (strobe/explain.h)
 * applies the same rule. */
#define STROBE_STALL_FACTOR 2
#define STROBE_MAX_DEPTH 256 /* open scopes per thread (the capture format's bound); deeper ones are counted, not recorded */

/* Event kinds as consumers see them and as capture files number them
 * (docs/capture-format.md, EVENTS payload): the one table. A new kind is one
 * line here; tests/test_capture_vocab.c writes every line through a capture
 * and reads it back, so a kind without its encoding or its record fails.
 *   NAME      STROBE__EV_<NAME>
 *   number    the kind byte of a ring event and the `kind` of a capture op,
 *             1..255 (the word's high bits carry LOST's depth); no kind that
 *             can sit in a ring is a multiple of 8 (see STROBE__EV_RING_LOST)
 *   slots     PAYLOAD events that follow it, each carrying one 8-byte word in
 *             `ts`; a consumer never sees an event split from its slots (OP
 *             says its own number in its data: strobe__payload_slots)
 *   operands  its encoding in an EVENTS block (STROBE__OPERANDS_<operands>,
 *             src/format/codec.h)
 *   record    what a capture reader returns for it (strobe/capture.h), 0: none */
#define STROBE__EVENT_KINDS(X)                                                                             \
  X(BEGIN, 1, 0, BEGIN, STROBE_REC_BEGIN)     /* data: site id */                                          \
  X(END, 2, 0, END, STROBE_REC_END)           /* data: the site id of the scope it closes */               \
  X(VALUE, 3, 1, SITE_F64S, STROBE_REC_VALUE) /* data: site; slot: the double */                           \
  X(COUNTER, 4, 1, SITE_F64S, STROBE_REC_COUNTER) /* data: site; slot: the double delta */                 \
  X(GAUGE, 5, 1, SITE_F64S, STROBE_REC_GAUGE) /* data: site; slot: the double level */                     \
  X(FRAME, 6, 0, SITE_VARINTS, STROBE_REC_FRAME) /* data: site */                                          \
  X(CUMULATIVE, 7, 4, SITE_VARINTS, STROBE_REC_CUMULATIVE) /* data: site; slots: count, total, min, max */ \
  X(LOST, 8, 0, LOST, STROBE_REC_LOST) /* data: events lost before this point; high bits: depth after */   \
  X(PAYLOAD, 9, 0, NONE, 0)            /* one slot of the event before it */                                 \
  X(OP, 10, 0, OPS, 0) /* an operation event (src/session/operation.c): data = sub-kind in the low 8 bits,  \
                        * its payload slots above them (strobe__payload_slots, src/probe/probe.h); read     \
                        * back from the OPS block as operation records */                                   \
  X(UNWOUND, 11, 0, UNWOUND, STROBE_REC_END) /* an END the scope's code never ran (longjmp, exception,      \
                        * thread exit), written when that was detected; data: the site id like END's.        \
                        * Read back as an END record with `unwound` set */                                    \
  X(ELEMENT, 13, 0, ELEMENT, STROBE_REC_ELEMENT) /* the innermost open scope's element (>>elements): data:   \
                        * the element type's site id; `ts` is the 64-bit element id, not a time (the event    \
                        * belongs to its scope, like a VALUE) */                                               \
  X(GPU, 14, 0, DEVICE, 0) /* a clock-domain or GPU event (src/probe/gpu.c, include/strobe/gpu.h): data =     \
                        * sub-kind in the low 8 bits, its payload slots above them, like OP; read back from  \
                        * the DEVICE block as pair, span and instant records */                            \
  X(ALLOC, 15, 2, SITE_VARINTS, STROBE_REC_ALLOC) /* data: the pool's site (kind alloc); slots: address,     \
                        * bytes (>>allocations) */                                                          \
  X(FREE, 17, 1, SITE_VARINTS, STROBE_REC_FREE) /* data: the pool's site (kind free); slot: address */        \
  X(MESSAGE, 19, 0, SITE_VARINTS, STROBE_REC_MESSAGE) /* data: the message's site (kind message): its text */ \
  X(LOCK_WAIT, 20, 0, SITE_VARINTS, STROBE_REC_LOCK_WAIT) /* data: the lock's site (kind lock): this thread  \
                        * began to wait for it (strobe/lock.h) */                                              \
  X(LOCK_ACQUIRED, 21, 0, SITE_VARINTS, STROBE_REC_LOCK_ACQUIRED) /* data: the lock's site: this thread holds \
                        * it from here */                                                                     \
  X(LOCK_RELEASED, 22, 0, SITE_VARINTS, STROBE_REC_LOCK_RELEASED) /* data: the lock's site: this thread let \
                        * it go */

enum {
#define STROBE__EV_ENUM(name, number, slots, operands, record) STROBE__EV_##name = number,
  STROBE__EVENT_KINDS(STROBE__EV_ENUM)
#undef STROBE__EV_ENUM
  /* Only inside a ring, rewritten by the drain before consumers see it: a
   * LOST marker whose depth the drain fills in. No in-ring kind may be a
   * multiple of 8, because an 8-byte-aligned site pointer in place of kind
   * and data is how the inline BEGIN writes itself. */
  STROBE__EV_RING_LOST = 12
};

/* Each kind's payload slots as a constant (STROBE__SLOTS_<NAME>), for code
 * that writes or checks them at compile time. */
enum {
#define STROBE__SLOTS_ENUM(name, number, slots, operands, record) STROBE__SLOTS_##name = slots,
  STROBE__EVENT_KINDS(STROBE__SLOTS_ENUM)
#undef STROBE__SLOTS_ENUM
  STROBE__EV_MAX_SLOTS = 4 /* the most any kind has (CUMULATIVE's); src/collect/drain.c checks */
};

/* Payload slots that follow an event of this kind (0 for unknown kinds). */
static inline uint32_t strobe__ev_slots(uint32_t kind) {
  switch (kind) {
#define STROBE__EV_SLOTS(name, number, slots, operands, record) \
  case number: return slots;
    STROBE__EVENT_KINDS(STROBE__EV_SLOTS)
#undef STROBE__EV_SLOTS
    default: return 0;
  }
}

/* Whether an event of this kind closes the innermost scope (END, UNWOUND). */
static inline int strobe__ev_closes(uint32_t kind) { return kind == STROBE__EV_END || kind == STROBE__EV_UNWOUND; }

/* 16 bytes. In a ring, the inline BEGIN stores its site pointer over kind
 * and data (one 8-byte store; the drain turns it into BEGIN + site id), and
 * the inline END stores kind END with data 0 (the drain fills in the site). */
typedef struct strobe__event {
  uint64_t ts;   /* ticks of the collector clock */
  uint32_t kind; /* STROBE__EV_* */
  uint32_t data; /* site id, or kind-specific */
} strobe__event;

/* A frame of the scope stack is two words. `word` is the site pointer
 * (8-byte aligned) with these flags in its low bits; words below 8 are the
 * slow path's bookkeeping (src/probe/thread.c), never scopes. `sp` is the C
 * stack pointer where the scope began (docs/recording.md, Unwinding): a
 * BEGIN from a shallower C frame proves every frame deeper than it dead. */
enum {
  STROBE__FRAME_EXPLICIT = 1,    /* opened by STROBE_BEGIN, closed by STROBE_END */
  STROBE__FRAME_UNRECORDED = 2,  /* its BEGIN was dropped (ring full): its END is withheld too */
  STROBE__FRAME_BOOKKEEPING = 4, /* set in every word below 8 (the slow path's) and in stack[0] */
  STROBE__FRAME_FLAGS = 7
};
/* A top frame word with none of these bits is a recorded scope: the inline
 * VALUE writes its number on it; any other top goes the slow way. */
#define STROBE__FRAME_NOT_VALUE_HOLDER ((uintptr_t)(STROBE__FRAME_UNRECORDED | STROBE__FRAME_BOOKKEEPING))
typedef struct strobe__frame {
  uintptr_t word; /* site | flags, or bookkeeping below 8 */
  uintptr_t sp;   /* C stack pointer at its BEGIN, | STROBE__SP_NESTED; STROBE__SP_HELD: no C frame owns it */
} strobe__frame;
/* Set by the slow path in the `sp` of a frame it found alive under a BEGIN
 * from the same C frame: further scopes nested in that C frame (a loop body,
 * an inlined function) then stay inline. Stack pointers are 8-byte aligned. */
#define STROBE__SP_NESTED ((uintptr_t)1)
/* `sp` of a frame no C frame owns (explicit scopes, stages, the stack's base):
 * above every stack address, so no BEGIN ever finds it dead. */
#define STROBE__SP_HELD (~(uintptr_t)0)
/* A guard (what a BEGIN returns, what its END takes) is the address of the
 * scope's frame, 0 when nothing was opened. This bit in a guard sends the
 * END through the slow path (the frame is UNRECORDED). A frame's slot is
 * never reused while its guard is out, so the inline END, which only checks
 * that its guard is the stack top, can only ever pop its own frame. */
#define STROBE__GUARD_SLOW ((uintptr_t)1)

/* The part of a thread's state the inline hot path touches.
 *
 * The ring is a plain array: `cur` moves forward by one event per write and
 * only the slow path wraps it back to the start. `limit` folds every check
 * a BEGIN needs into one comparison, cur + 4 * top <= limit: it holds only
 * while the ring has room for the BEGIN and for the END of every open scope
 * (so an END never checks for room), and while the stack is below
 * STROBE_MAX_DEPTH; the slow path recomputes it. The BEGIN's second check,
 * its C stack pointer below the top frame's `sp`, sends every BEGIN that may
 * prove frames dead (an unwound longjmp or exception) to the slow path. A
 * thread that is not attached points at a shared state whose limit is 0, so
 * its first BEGIN takes the slow path, which attaches it. */
typedef struct strobe__thread {
  strobe__event *cur;  /* next slot to write; published with a release store */
  strobe__frame *top;  /* innermost frame; &stack[0] (never a scope, sp HELD) when none is open */
  uint64_t limit;      /* see above; 0 when detached */
  uint64_t num_limit;  /* a number (two events) fits inline while cur <= num_limit: room for it and the
                        * ENDs of STROBE_MAX_DEPTH open scopes; 0 when detached or dropping */
  strobe__frame stack[STROBE_MAX_DEPTH + 2]; /* [0] is never a scope; the last slot only ever holds bookkeeping */
} strobe__thread;

/* Bit set of active consumers; read relaxed on every site. Sessions do not
 * set it: they observe operations and stages (session.h), not scope events. */
#define STROBE__ACTIVE_EVENTS 1u   /* a capture, flight recorder or live stream wants events */
extern STROBE_API uint32_t strobe__active;
/* initial-exec: one %fs-relative load, no __tls_get_addr call, even when the
 * instrumented code is itself a shared library. Never NULL. */
#if defined(__cplusplus)
extern STROBE_API thread_local strobe__thread *strobe__tls __attribute__((tls_model("initial-exec")));
#else
extern STROBE_API _Thread_local strobe__thread *strobe__tls __attribute__((tls_model("initial-exec")));
#endif

/* `sp`: the caller's C stack pointer (strobe__sp), or STROBE__SP_HELD. */
STROBE_API uintptr_t strobe__begin_slow(strobe_site *site, uint32_t flags, uintptr_t sp);
STROBE_API void strobe__end_slow(uintptr_t guard);
STROBE_API void strobe__end_explicit(uintptr_t sp);
STROBE_API void strobe__number_slow(strobe_site *site, uint64_t bits);
STROBE_API void strobe__frame_mark(strobe_site *site);
/* One event of `kind` whose data is the site's id and whose time is now
 * (a lock's wait, acquisition or release: strobe/lock.h). Out of line. */
STROBE_API void strobe__site_event(strobe_site *site, uint32_t kind);
STROBE_API void strobe__cumulative_add(strobe_site *site, uint64_t t0, uint64_t t1);

#if defined(__GNUC__)
#define STROBE__LIKELY(x) __builtin_expect(!!(x), 1)
#define STROBE__UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define STROBE__LIKELY(x) (x)
#define STROBE__UNLIKELY(x) (x)
#endif

/* Ticks of the collector clock. rdtsc is deliberately unordered: ordering
 * fences would double the cost of every scope and buy nothing at this scale. */
static inline uint64_t strobe__now(void) {
#if defined(__x86_64__)
  uint32_t lo, hi;
  __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
  return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
  uint64_t v;
  __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
  return v;
#else
  extern STROBE_API uint64_t strobe__now_monotonic(void);
  return strobe__now_monotonic();
#endif
}

/* Stores the current tick at *dst. On x86-64 the two halves rdtsc returns go
 * out as two 32-bit stores, which is cheaper than combining them first. */
static inline void strobe__stamp(uint64_t *dst) {
#if defined(__x86_64__)
  uint32_t lo, hi;
  __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
  uint32_t *half = (uint32_t *)dst;
  half[0] = lo;
  half[1] = hi;
#else
  *dst = strobe__now();
#endif
}

/* Writes an event's kind and data as one 8-byte word. */
static inline void strobe__put_word(strobe__event *e, uint64_t word) { __builtin_memcpy(&e->kind, &word, sizeof word); }

/* Publishes the event at t->cur by moving the cursor past it, with release
 * order: the drain, reading cur with acquire, sees the event whole. On
 * x86-64 every store already has release order, so a compiler barrier and
 * one add to memory do it; ThreadSanitizer builds use the C11 store it can
 * check. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define STROBE__TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define STROBE__TSAN 1
#endif
/* A thread's limits: its slow paths and the resting drain store them with
 * relaxed atomics (src/probe/thread.c); ThreadSanitizer builds load them
 * the same way. Elsewhere a plain load, the same instruction. */
#if defined(STROBE__TSAN)
#define STROBE__LIMIT(t, field) __atomic_load_n(&(t)->field, __ATOMIC_RELAXED)
#else
#define STROBE__LIMIT(t, field) ((t)->field)
#endif
static inline void strobe__advance(strobe__thread *t, strobe__event *e) {
#if defined(__x86_64__) && !defined(STROBE__TSAN)
  (void)e;
  __asm__ __volatile__("addq %1, %0" : "+m"(t->cur) : "i"(sizeof(strobe__event)) : "memory");
#else
  __atomic_store_n(&t->cur, e + 1, __ATOMIC_RELEASE);
#endif
}
/* The same for a number: its event and its payload slot, published at once. */
static inline void strobe__advance_number(strobe__thread *t, strobe__event *e) {
#if defined(__x86_64__) && !defined(STROBE__TSAN)
  (void)e;
  __asm__ __volatile__("addq %1, %0" : "+m"(t->cur) : "i"(2 * sizeof(strobe__event)) : "memory");
#else
  __atomic_store_n(&t->cur, e + 2, __ATOMIC_RELEASE);
#endif
}

/* Whether any event consumer is active: a relaxed load and a branch. On
 * x86-64 one compare with memory does it, where the compiler would load,
 * test and branch (one instruction more on every site, recording or not). */
static inline int strobe__is_active(void) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(STROBE__TSAN)
  __asm__ goto("cmpl $0, %0\n\tjne %l[active]" : : "m"(strobe__active) : "cc" : active);
  return 0;
active:
  return 1;
#else
  return STROBE__UNLIKELY(__atomic_load_n(&strobe__active, __ATOMIC_RELAXED) != 0);
#endif
}

/* The C stack pointer of the function this is inlined into: what a frame's
 * `sp` holds. Every reader of it is always_inline, so at any optimisation
 * level all scopes of one C frame see the same value. */
#if defined(__x86_64__)
#define STROBE__SP_STORE(dst) __asm__("movq %%rsp, %0" : "=m"(*(dst)))
#define STROBE__SP_READ(v) __asm__ __volatile__("movq %%rsp, %0" : "=r"(v))
#elif defined(__aarch64__)
/* A64 cannot store sp directly (register 31 in a store is xzr), so it goes
 * through a register: one mov more than x86-64's single store. */
#define STROBE__SP_READ(v) __asm__ __volatile__("mov %0, sp" : "=r"(v))
#define STROBE__SP_STORE(dst)         \
  do {                                \
    uintptr_t strobe__sp_;            \
    STROBE__SP_READ(strobe__sp_);     \
    *(dst) = strobe__sp_;             \
  } while (0)
#else
#define STROBE__SP_STORE(dst) (*(dst) = (uintptr_t)__builtin_frame_address(0))
#define STROBE__SP_READ(v) ((v) = (uintptr_t)__builtin_frame_address(0))
#endif
/* The read is volatile: a plain asm may be hoisted out of a loop, even above
 * the function's prologue (GCC did, for a slow path's call), and then is not
 * the stack pointer the pushes store. */
static inline __attribute__((always_inline)) uintptr_t strobe__sp(void) {
  uintptr_t v;
  STROBE__SP_READ(v);
  return v;
}

/* Whether a BEGIN of `site` at stack pointer `sp`, equal to the top frame's,
 * nests in it without proving any frame dead, decided inline: it does when
 * neither the top frame nor the one below it is another instance of `site`
 * and no third frame of that C frame lies below them, so the slow path's
 * search of that C frame's frames (docs/recording.md, Unwinding) would end
 * there having found nothing. Deeper chains of one C frame, and every other
 * case, go the slow way. stack[0]'s `sp` is HELD, never a stack pointer, so
 * p[-1] is only read when p is above it. */
static inline __attribute__((always_inline)) int strobe__nests_inline(const strobe__frame *top, uintptr_t site,
                                                                      uintptr_t sp) {
  const uintptr_t mask = ~(uintptr_t)STROBE__FRAME_FLAGS, at = ~STROBE__SP_NESTED;
  const strobe__frame *p = top - 1;
  return top->sp == sp && (top->word & mask) != site && ((p->sp & at) != sp || ((p->word & mask) != site && (p[-1].sp & at) != sp));
}

/* Writes a BEGIN of `site` at e and pushes its frame above top. */
static inline __attribute__((always_inline)) uintptr_t strobe__push(strobe__thread *t, strobe__event *e,
                                                                    strobe__frame *top, strobe_site *site) {
  strobe__stamp(&e->ts);
  strobe__put_word(e, (uintptr_t)site);
  top[1].word = (uintptr_t)site;
  STROBE__SP_STORE(&top[1].sp);
  t->top = top + 1;
  strobe__advance(t, e);
  return (uintptr_t)(top + 1);
}

/* Opens a scope; returns its guard, or 0 when nothing was opened. Slow when
 * the ring, the depth or the C stack say so: a BEGIN whose stack pointer is
 * not below the top frame's (a shallower C frame, or the same one) may prove
 * frames dead (docs/recording.md, Unwinding), unless it is from the top
 * frame's own C frame and strobe__nests_inline clears it. That check runs
 * only after the stack pointer's, with a push of its own, so that the usual
 * path's code is the same instructions as without it. */
static inline __attribute__((always_inline)) uintptr_t strobe__begin(strobe_site *site) {
  strobe__thread *t = strobe__tls;
  strobe__event *e = t->cur;
  strobe__frame *top = t->top;
  if (STROBE__UNLIKELY((uint64_t)(uintptr_t)e + 4u * (uint64_t)(uintptr_t)top > STROBE__LIMIT(t, limit))) goto slow;
#if defined(__x86_64__) && !defined(STROBE__TSAN)
  __asm__ goto("cmpq %%rsp, %0\n\tjbe %l[same]" : : "m"(top->sp) : "cc" : same);
#else
  if (STROBE__UNLIKELY(strobe__sp() >= top->sp)) goto same;
#endif
push:
  return strobe__push(t, e, top, site);
same: {
  /* Volatile, so that GCC reads it here rather than keep a copy in a register
   * across the caller's loop, which costs the usual path an instruction. */
  uintptr_t s = (uintptr_t)site, sp = strobe__sp();
  __asm__ __volatile__("" : "+r"(s));
  if (strobe__nests_inline(top, s, sp)) goto push;
}
  return strobe__begin_slow(site, 0, strobe__sp());
slow:
  return strobe__begin_slow(site, 0, strobe__sp());
}

static inline void strobe__end(uintptr_t guard) {
  strobe__thread *t = strobe__tls;
  if (STROBE__UNLIKELY((uintptr_t)t->top != guard)) {
    strobe__end_slow(guard); /* misuse, an unrecorded scope, or loop accumulators to flush */
    return;
  }
  strobe__event *e = t->cur;
  strobe__stamp(&e->ts);
  strobe__put_word(e, STROBE__EV_END);
  t->top--; /* to guard - 1, which GCC otherwise computes in a register first */
  strobe__advance(t, e);
}

/* STROBE_BEGIN's inline path: a BEGIN like strobe__begin's, whose frame is
 * marked explicit and held (its sp HELD: it belongs to no C frame, so no
 * stack-pointer check and nothing it could prove dead). Slow (and then
 * attached, counted, or dropped) only when the limit says so. */
static inline __attribute__((always_inline)) void strobe__begin_explicit(strobe_site *site) {
  strobe__thread *t = strobe__tls;
  strobe__event *e = t->cur;
  strobe__frame *top = t->top;
  if (STROBE__UNLIKELY((uint64_t)(uintptr_t)e + 4u * (uint64_t)(uintptr_t)top > STROBE__LIMIT(t, limit))) {
    (void)strobe__begin_slow(site, STROBE__FRAME_EXPLICIT, STROBE__SP_HELD);
    return;
  }
  strobe__stamp(&e->ts);
  strobe__put_word(e, (uintptr_t)site);
  top[1].word = (uintptr_t)site | STROBE__FRAME_EXPLICIT;
  top[1].sp = STROBE__SP_HELD;
  t->top = top + 1;
  strobe__advance(t, e);
}

/* STROBE_END's inline path: when the top frame is a recorded explicit scope
 * (the usual case), its END is written here as strobe__end writes a block's;
 * anything else (block scopes above it, an unrecorded BEGIN, no scope at
 * all, a thread not attached) goes to strobe__end_explicit. */
static inline __attribute__((always_inline)) void strobe__end_explicit_inline(void) {
  strobe__thread *t = strobe__tls;
  strobe__frame *top = t->top;
  if (STROBE__UNLIKELY((top->word & STROBE__FRAME_FLAGS) != STROBE__FRAME_EXPLICIT)) {
    strobe__end_explicit(strobe__sp());
    return;
  }
  strobe__event *e = t->cur;
  strobe__stamp(&e->ts);
  strobe__put_word(e, STROBE__EV_END);
  t->top = top - 1;
  strobe__advance(t, e);
}

/* How the hot path stores a number in its payload slot, chosen at compile
 * time from the argument's type and kept in its site's unit bits, so that
 * no conversion runs inline: the drain turns the bits into the double that
 * consumers see (src/collect/drain.c). */
enum {
  STROBE__NUM_F64 = 0,  /* a double's bits (floating arguments) */
  STROBE__NUM_I64 = 1,  /* a signed integer, sign-extended */
  STROBE__NUM_U64 = 2,  /* an unsigned integer */
  STROBE__NUM_IN_SLOT = 3, /* each number says which of the above in its payload slot's data: the sites
                            * of strobe_site_intern, which the *_SITE forms write to from any call site */
  STROBE__NUM_SHIFT = 8, /* where the code sits in strobe_site.unit */
  STROBE__UNIT_MASK = (1 << STROBE__NUM_SHIFT) - 1 /* the strobe_unit below it */
};
static inline uint64_t strobe__f64_bits(double d) {
  uint64_t u;
  __builtin_memcpy(&u, &d, sizeof u);
  return u;
}
#if defined(__cplusplus)
} /* extern "C" */
/* C++: overloads pick the code and the bits (decltype keeps the code a constant). */
template <int N> struct strobe__num_code { static const uint32_t value = (uint32_t)N; };
strobe__num_code<STROBE__NUM_F64> strobe__num_tag(double);
strobe__num_code<STROBE__NUM_F64> strobe__num_tag(float);
strobe__num_code<STROBE__NUM_F64> strobe__num_tag(long double);
strobe__num_code<STROBE__NUM_I64> strobe__num_tag(signed char);
strobe__num_code<STROBE__NUM_I64> strobe__num_tag(short);
strobe__num_code<STROBE__NUM_I64> strobe__num_tag(int);
strobe__num_code<STROBE__NUM_I64> strobe__num_tag(long);
strobe__num_code<STROBE__NUM_I64> strobe__num_tag(long long);
strobe__num_code<STROBE__NUM_U64> strobe__num_tag(bool);
strobe__num_code<STROBE__NUM_U64> strobe__num_tag(unsigned char);
strobe__num_code<STROBE__NUM_U64> strobe__num_tag(unsigned short);
strobe__num_code<STROBE__NUM_U64> strobe__num_tag(unsigned);
strobe__num_code<STROBE__NUM_U64> strobe__num_tag(unsigned long);
strobe__num_code<STROBE__NUM_U64> strobe__num_tag(unsigned long long);
strobe__num_code<(char)-1 < 0 ? STROBE__NUM_I64 : STROBE__NUM_U64> strobe__num_tag(char);
static inline uint64_t strobe__num_bits(double x) { return strobe__f64_bits(x); }
static inline uint64_t strobe__num_bits(float x) { return strobe__f64_bits((double)x); }
static inline uint64_t strobe__num_bits(long double x) { return strobe__f64_bits((double)x); }
static inline uint64_t strobe__num_bits(signed char x) { return (uint64_t)(int64_t)x; }
static inline uint64_t strobe__num_bits(short x) { return (uint64_t)(int64_t)x; }
static inline uint64_t strobe__num_bits(int x) { return (uint64_t)(int64_t)x; }
static inline uint64_t strobe__num_bits(long x) { return (uint64_t)(int64_t)x; }
static inline uint64_t strobe__num_bits(long long x) { return (uint64_t)(int64_t)x; }
static inline uint64_t strobe__num_bits(bool x) { return (uint64_t)x; }
static inline uint64_t strobe__num_bits(unsigned char x) { return (uint64_t)x; }
static inline uint64_t strobe__num_bits(unsigned short x) { return (uint64_t)x; }
static inline uint64_t strobe__num_bits(unsigned x) { return (uint64_t)x; }
static inline uint64_t strobe__num_bits(unsigned long x) { return (uint64_t)x; }
static inline uint64_t strobe__num_bits(unsigned long long x) { return (uint64_t)x; }
static inline uint64_t strobe__num_bits(char x) { return (char)-1 < 0 ? (uint64_t)(int64_t)x : (uint64_t)x; }
#define STROBE__NUM_CODE(x) (decltype(strobe__num_tag(x))::value)
#define STROBE__NUM_BITS(x) strobe__num_bits(x)
extern "C" {
#else
#define STROBE__NUM_CODE(x)                                                                            \
  _Generic((x), float: STROBE__NUM_F64, double: STROBE__NUM_F64, long double: STROBE__NUM_F64,          \
           _Bool: STROBE__NUM_U64, unsigned char: STROBE__NUM_U64, unsigned short: STROBE__NUM_U64,      \
           unsigned int: STROBE__NUM_U64, unsigned long: STROBE__NUM_U64, unsigned long long: STROBE__NUM_U64, \
           char: ((char)-1 < 0 ? STROBE__NUM_I64 : STROBE__NUM_U64), default: STROBE__NUM_I64)
#define STROBE__NUM_BITS(x)                                                                            \
  _Generic((x), float: strobe__f64_bits((double)(x)), double: strobe__f64_bits((double)(x)),            \
           long double: strobe__f64_bits((double)(x)), _Bool: (uint64_t)(x), unsigned char: (uint64_t)(x), \
           unsigned short: (uint64_t)(x), unsigned int: (uint64_t)(x), unsigned long: (uint64_t)(x),     \
           unsigned long long: (uint64_t)(x), char: ((char)-1 < 0 ? (uint64_t)(int64_t)(x) : (uint64_t)(x)), \
           default: (uint64_t)(int64_t)(x))
#endif

/* Writes a number (a value, a counter delta or a gauge level) inline, like
 * a BEGIN: its site pointer, then its bits (STROBE__NUM_*) in the payload
 * slot after it, published together. The drain reads the site to tell it
 * from a BEGIN, writes the payload slot's kind and the double
 * (src/collect/drain.c). A counter or gauge stamps its time; a VALUE has
 * none of its own (it belongs to its scope), so the drain gives it the time
 * of the thread's previous event. The room check is num_limit's. A VALUE
 * (`on_scope`) also needs a recorded scope on top; anything else goes the
 * slow way, which counts misuse, drops and wraps like every other event
 * (src/probe/thread.c). */
static inline void strobe__number(strobe_site *site, uint64_t bits, int on_scope) {
  strobe__thread *t = strobe__tls;
  strobe__event *e = t->cur;
  if (STROBE__UNLIKELY((uint64_t)(uintptr_t)e > STROBE__LIMIT(t, num_limit)) ||
      (on_scope && STROBE__UNLIKELY((t->top->word & STROBE__FRAME_NOT_VALUE_HOLDER) != 0))) {
    strobe__number_slow(site, bits);
    return;
  }
  if (!on_scope) strobe__stamp(&e->ts);
  strobe__put_word(e, (uintptr_t)site);
  __builtin_memcpy(&e[1].ts, &bits, sizeof bits);
  strobe__advance_number(t, e);
}

/* strobe__number for a site whose numbers say their own encoding
 * (STROBE__NUM_IN_SLOT): `code` (a constant, STROBE__NUM_CODE of the
 * argument) goes into the payload slot's data, one store more. The slow
 * path takes a double's bits, so the conversion is there, not inline. */
static inline void strobe__number_coded(strobe_site *site, uint64_t bits, uint32_t code, int on_scope) {
  strobe__thread *t = strobe__tls;
  strobe__event *e = t->cur;
  if (STROBE__UNLIKELY((uint64_t)(uintptr_t)e > STROBE__LIMIT(t, num_limit)) ||
      (on_scope && STROBE__UNLIKELY((t->top->word & STROBE__FRAME_NOT_VALUE_HOLDER) != 0))) {
    double d = code == STROBE__NUM_I64 ? (double)(int64_t)bits : code == STROBE__NUM_U64 ? (double)bits : 0.0;
    strobe__number_slow(site, code == STROBE__NUM_F64 ? bits : strobe__f64_bits(d));
    return;
  }
  if (!on_scope) strobe__stamp(&e->ts);
  strobe__put_word(e, (uintptr_t)site);
  __builtin_memcpy(&e[1].ts, &bits, sizeof bits);
  e[1].data = code;
  strobe__advance_number(t, e);
}

/* An element attribution (>>elements): one 16-byte event, the element
 * type's site pointer over kind and data and the id in `ts`, on the
 * innermost open scope. The drain tells it from a BEGIN by the site's kind
 * (src/collect/drain.c). The room check is a number's (it needs less); a
 * top frame that is no recorded scope goes the slow way, which counts
 * misuse (value_without_scope) or drops it with its unrecorded scope. */
STROBE_API void strobe__element_slow(strobe_site *type, uint64_t id);
static inline void strobe__element(strobe_site *type, uint64_t id) {
  strobe__thread *t = strobe__tls;
  strobe__event *e = t->cur;
  if (STROBE__UNLIKELY((uint64_t)(uintptr_t)e > STROBE__LIMIT(t, num_limit)) ||
      STROBE__UNLIKELY((t->top->word & STROBE__FRAME_NOT_VALUE_HOLDER) != 0)) {
    strobe__element_slow(type, id);
    return;
  }
  e->ts = id;
  strobe__put_word(e, (uintptr_t)type);
  strobe__advance(t, e);
}

/* An allocation (>>allocations, docs/memory.md): three events, the pool
 * site's pointer over kind and data, then the address and the size in the
 * `ts` of two payload slots, published together. The drain tells it from a
 * BEGIN by the site's kind and completes the slots (src/collect/drain.c).
 * The room check is a number's, one slot further. A free is a number whose
 * slot is the address (strobe__number on a STROBE_SITE_FREE site). */
STROBE_API void strobe__alloc_slow(strobe_site *pool, uint64_t addr, uint64_t size);
static inline void strobe__alloc(strobe_site *pool, uint64_t addr, uint64_t size) {
  strobe__thread *t = strobe__tls;
  strobe__event *e = t->cur;
  /* In integers: e is NULL on a thread not attached yet (its limit 0 sends it to the slow path). */
  if (STROBE__UNLIKELY((uint64_t)(uintptr_t)e + sizeof(strobe__event) > STROBE__LIMIT(t, num_limit))) {
    strobe__alloc_slow(pool, addr, size);
    return;
  }
  strobe__stamp(&e->ts);
  strobe__put_word(e, (uintptr_t)pool);
  e[1].ts = addr;
  e[2].ts = size;
#if defined(__x86_64__) && !defined(STROBE__TSAN)
  __asm__ __volatile__("addq %1, %0" : "+m"(t->cur) : "i"(3 * sizeof(strobe__event)) : "memory");
#else
  __atomic_store_n(&t->cur, e + 3, __ATOMIC_RELEASE);
#endif
}

/* A message (>>messages): one event, its site's pointer over kind and data
 * and its time; out of line (messages are rare, and the site is registered
 * there). */
STROBE_API void strobe__message(strobe_site *site);

static inline void strobe__scope_cleanup(uintptr_t *guard) {
  if (STROBE__UNLIKELY(*guard != 0)) strobe__end(*guard);
}

typedef struct strobe__cumulative_guard {
  strobe_site *site;
  uint64_t t0;
} strobe__cumulative_guard;

static inline void strobe__cumulative_cleanup(strobe__cumulative_guard *g) {
  if (STROBE__UNLIKELY(g->site != 0)) strobe__cumulative_add(g->site, g->t0, strobe__now());
}

/* ======================================================================
 * >>macros
 * ====================================================================== */
#define STROBE__CAT2(a, b) a##b
#define STROBE__CAT(a, b) STROBE__CAT2(a, b)
#define STROBE__UNIQUE(prefix) STROBE__CAT(prefix, __LINE__)

#define STROBE__SITE_UNIT(var, kind_, name_, cat_, unit_)                                                   \
  static strobe_site var = {(name_),   (cat_),           (const char *)0, __FILE__, __func__, (uint32_t)__LINE__, \
                            (uint32_t)(kind_), 0, (uint32_t)(unit_), 0}
/* A number's site: its unit and, above it, how the hot path stores `x`. */
#define STROBE__NUM_SITE(var, kind_, name_, unit_, x) \
  STROBE__SITE_UNIT(var, kind_, name_, (const char *)0, (uint32_t)(unit_) | (uint32_t)STROBE__NUM_CODE(x) << STROBE__NUM_SHIFT)
#define STROBE__SITE(var, kind_, name_, cat_) STROBE__SITE_UNIT(var, kind_, name_, cat_, STROBE_UNIT_NONE)

/* The *_SITE forms take a site pointer instead of a name: a site from
 * strobe_site_intern, or one the application declared itself. The site's
 * kind must be the macro's (a STROBE_SITE_SCOPE site for STROBE_SCOPE_SITE).
 * The named scope, begin and loop forms declare their site in static storage
 * and use these, so both cost the same. The number forms (STROBE_VALUE_SITE,
 * STROBE_COUNTER_ADD_SITE, STROBE_GAUGE_SET_SITE) take sites from
 * strobe_site_intern only: their numbers say their own encoding, one store
 * more than the named forms. */
#if defined(STROBE_DISABLE)

#define STROBE_SCOPE_SITE(site) ((void)sizeof(site))
#define STROBE_SCOPE(name) ((void)0)
#define STROBE_SCOPE_CAT(name, category) ((void)0)
#define STROBE_FUNCTION() ((void)0)
#define STROBE_BEGIN_SITE(site) ((void)sizeof(site))
#define STROBE_BEGIN(name) ((void)0)
#define STROBE_BEGIN_CAT(name, category) ((void)0)
#define STROBE_END() ((void)0)
#define STROBE_VALUE_SITE(site, number) ((void)sizeof(site), (void)sizeof(number))
#define STROBE_VALUE(key, number) ((void)0)
#define STROBE_VALUE_UNIT(key, number, unit) ((void)0)
#define STROBE_CUMULATIVE_SITE(site) ((void)sizeof(site))
#define STROBE_CUMULATIVE(name) ((void)0)
#define STROBE_COUNTER_ADD_SITE(site, delta) ((void)sizeof(site), (void)sizeof(delta))
#define STROBE_COUNTER_ADD(name, delta) ((void)0)
#define STROBE_COUNTER_ADD_UNIT(name, delta, unit) ((void)0)
#define STROBE_GAUGE_SET_SITE(site, value) ((void)sizeof(site), (void)sizeof(value))
#define STROBE_GAUGE_SET(name, value) ((void)0)
#define STROBE_GAUGE_SET_UNIT(name, value, unit) ((void)0)
#define STROBE_COUNTER_ADD_KIND(family, kind, delta) ((void)0)
#define STROBE_COUNTER_ADD_KIND_UNIT(family, kind, delta, unit) ((void)0)
#define STROBE_GAUGE_SET_KIND(family, kind, value) ((void)0)
#define STROBE_GAUGE_SET_KIND_UNIT(family, kind, value, unit) ((void)0)
#define STROBE_FRAME_MARK() ((void)0)
#define STROBE_ELEMENT_TYPE(var, type_name) \
  static strobe_site var __attribute__((unused)) = {(type_name), 0, 0, 0, 0, 0, STROBE_SITE_ELEMENT, 0, 0, 0}
#define STROBE_ELEMENT_SITE(type, id) ((void)sizeof(type), (void)sizeof(id))
#define STROBE_ELEMENT(type_name, id) ((void)sizeof(id))
#define STROBE_SCOPE_ELEMENT(name, type, id) ((void)sizeof(type), (void)sizeof(id))
#define STROBE_ALLOC(ptr, size, pool) ((void)sizeof(ptr), (void)sizeof(size))
#define STROBE_FREE(ptr, pool) ((void)sizeof(ptr))
#define STROBE_MESSAGE(text) ((void)0)
#define STROBE_MESSAGE_TEXT(text, len) ((void)sizeof(text), (void)sizeof(len))

#else

#if !defined(__GNUC__) && !defined(__cplusplus)
#error "STROBE_SCOPE needs the cleanup attribute (GCC or Clang); use STROBE_BEGIN/STROBE_END or strobe.hpp"
#endif

/* A scope that closes when the enclosing block ends. */
#define STROBE_SCOPE_SITE(site)                                                                     \
  uintptr_t STROBE__UNIQUE(strobe__guard_) __attribute__((cleanup(strobe__scope_cleanup), unused)) = \
      strobe__is_active() ? strobe__begin(site) : 0u
#define STROBE_SCOPE_CAT(name, category)                                          \
  STROBE__SITE(STROBE__UNIQUE(strobe__site_), STROBE_SITE_SCOPE, name, category); \
  STROBE_SCOPE_SITE(&STROBE__UNIQUE(strobe__site_))
#define STROBE_SCOPE(name) STROBE_SCOPE_CAT(name, (const char *)0)
/* A scope named after the enclosing function. */
#define STROBE_FUNCTION() STROBE_SCOPE(__func__)

/* An explicit begin, closed by the next STROBE_END() on the same thread, so
 * the end may be in another function (a callback). With a category, like
 * STROBE_SCOPE_CAT. */
#define STROBE_BEGIN_SITE(site)                         \
  do {                                                  \
    if (strobe__is_active()) strobe__begin_explicit(site); \
  } while (0)
#define STROBE_BEGIN_CAT(name, category)                                 \
  do {                                                                   \
    STROBE__SITE(strobe__site_b, STROBE_SITE_SCOPE, name, category);     \
    STROBE_BEGIN_SITE(&strobe__site_b);                                  \
  } while (0)
#define STROBE_BEGIN(name) STROBE_BEGIN_CAT(name, (const char *)0)
/* Closes the innermost scope opened by STROBE_BEGIN; counted as misuse when there is none.
 * Gated like a scope, on whether anything records; with nothing recording
 * it still closes what the thread has open (a BEGIN made while a recording
 * ran, which stopped since: its frame must not stay on the stack), and does
 * nothing, without a call, on a thread with nothing open. */
#define STROBE_END()                                                                 \
  do {                                                                               \
    if (strobe__is_active() || STROBE__UNLIKELY(strobe__tls->top != strobe__tls->stack)) \
      strobe__end_explicit_inline();                                                 \
  } while (0)

/* Numbers: written inline like a BEGIN (docs/recording.md, Numbers). The
 * _UNIT forms declare the site's unit, one of STROBE_UNITS
 * (STROBE_UNIT_BYTES, ...): captures carry it and every report, export and
 * the viewer print the number by it. A site keeps the unit of its first
 * declaration: one site, one unit. */

/* A number on a site from strobe_site_intern (the *_SITE forms): such a
 * site is shared by call sites whose arguments differ in type, so each
 * number carries its own encoding (STROBE__NUM_IN_SLOT). */
#define STROBE__NUMBER_SITE(site, number, on_scope)                                                      \
  do {                                                                                                   \
    if (strobe__is_active())                                                                             \
      strobe__number_coded((site), STROBE__NUM_BITS(number), (uint32_t)STROBE__NUM_CODE(number), (on_scope)); \
  } while (0)

/* Attaches a number to the innermost open scope ("rows", 42); with no open
 * scope it is counted as misuse (value_without_scope) and ignored. */
#define STROBE_VALUE_SITE(site, number) STROBE__NUMBER_SITE(site, number, 1)
#define STROBE_VALUE_UNIT(key, number, unit)                                          \
  do {                                                                                \
    STROBE__NUM_SITE(strobe__site_v, STROBE_SITE_VALUE, key, unit, number);               \
    if (strobe__is_active()) strobe__number(&strobe__site_v, STROBE__NUM_BITS(number), 1);\
  } while (0)
#define STROBE_VALUE(key, number) STROBE_VALUE_UNIT(key, number, STROBE_UNIT_NONE)

/* Times the rest of the block as one iteration of a loop body; the enclosing
 * scope gets one entry with count, total, min, max and mean. */
#define STROBE_CUMULATIVE_SITE(site)                                           \
  strobe__cumulative_guard STROBE__UNIQUE(strobe__cguard_)                     \
      __attribute__((cleanup(strobe__cumulative_cleanup), unused)) = {         \
          strobe__is_active() ? (site) : (strobe_site *)0,                     \
          strobe__is_active() ? strobe__now() : 0u}
#define STROBE_CUMULATIVE(name)                                                               \
  STROBE__SITE(STROBE__UNIQUE(strobe__site_), STROBE_SITE_CUMULATIVE, name, (const char *)0); \
  STROBE_CUMULATIVE_SITE(&STROBE__UNIQUE(strobe__site_))

/* Adds a delta to a counter (a monotonic sum). */
#define STROBE_COUNTER_ADD_SITE(site, delta) STROBE__NUMBER_SITE(site, delta, 0)
#define STROBE_COUNTER_ADD_UNIT(name, delta, unit)                                          \
  do {                                                                                      \
    STROBE__NUM_SITE(strobe__site_c, STROBE_SITE_COUNTER, name, unit, delta);             \
    if (strobe__is_active()) strobe__number(&strobe__site_c, STROBE__NUM_BITS(delta), 0); \
  } while (0)
#define STROBE_COUNTER_ADD(name, delta) STROBE_COUNTER_ADD_UNIT(name, delta, STROBE_UNIT_NONE)

/* Sets a gauge's level (a sampled value). */
#define STROBE_GAUGE_SET_SITE(site, value) STROBE__NUMBER_SITE(site, value, 0)
#define STROBE_GAUGE_SET_UNIT(name, value, unit)                                            \
  do {                                                                                      \
    STROBE__NUM_SITE(strobe__site_g, STROBE_SITE_GAUGE, name, unit, value);               \
    if (strobe__is_active()) strobe__number(&strobe__site_g, STROBE__NUM_BITS(value), 0); \
  } while (0)
#define STROBE_GAUGE_SET(name, value) STROBE_GAUGE_SET_UNIT(name, value, STROBE_UNIT_NONE)

/* Counters and gauges by kind (docs/recording.md §Counters and gauges by
 * kind): one family, such as "draw_calls", split by a static kind label
 * ("quads", "text", ...). Each (family, kind) pair at a call site is its own
 * site, named after the family with the kind as its category, so recording
 * costs what STROBE_COUNTER_ADD and STROBE_GAUGE_SET cost. Both labels are
 * static strings (never run-time content). Reports, the viewer and
 * `strobe report` group a family's kinds: stacked, and per frame (mean and
 * max per kind). */
#define STROBE_COUNTER_ADD_KIND_UNIT(family, kind, delta, unit)                                        \
  do {                                                                                                 \
    STROBE__SITE_UNIT(strobe__site_ck, STROBE_SITE_COUNTER, family, kind,                              \
                      (uint32_t)(unit) | (uint32_t)STROBE__NUM_CODE(delta) << STROBE__NUM_SHIFT);      \
    if (strobe__is_active()) strobe__number(&strobe__site_ck, STROBE__NUM_BITS(delta), 0);             \
  } while (0)
#define STROBE_COUNTER_ADD_KIND(family, kind, delta) STROBE_COUNTER_ADD_KIND_UNIT(family, kind, delta, STROBE_UNIT_NONE)
#define STROBE_GAUGE_SET_KIND_UNIT(family, kind, value, unit)                                          \
  do {                                                                                                 \
    STROBE__SITE_UNIT(strobe__site_gk, STROBE_SITE_GAUGE, family, kind,                                \
                      (uint32_t)(unit) | (uint32_t)STROBE__NUM_CODE(value) << STROBE__NUM_SHIFT);      \
    if (strobe__is_active()) strobe__number(&strobe__site_gk, STROBE__NUM_BITS(value), 0);             \
  } while (0)
#define STROBE_GAUGE_SET_KIND(family, kind, value) STROBE_GAUGE_SET_KIND_UNIT(family, kind, value, STROBE_UNIT_NONE)

/* Marks the end of a frame in a simple frame loop. */
#define STROBE_FRAME_MARK()                                                        \
  do {                                                                             \
    STROBE__SITE(strobe__site_f, STROBE_SITE_FRAME, "frame", (const char *)0);     \
    if (strobe__is_active()) strobe__frame_mark(&strobe__site_f);                  \
  } while (0)

/* Element attribution (>>elements, docs/recording.md §Elements).
 * STROBE_ELEMENT_TYPE declares an element type (a site of kind
 * STROBE_SITE_ELEMENT) in static storage, for STROBE_ELEMENT_SITE,
 * STROBE_SCOPE_ELEMENT and tree nodes (strobe/tree.h) to share; its name is
 * a static label. STROBE_ELEMENT_SITE attributes the innermost open scope
 * to the element (type, id), where `id` is a strobe_element_id; with no
 * open scope it is counted as misuse (value_without_scope) and ignored.
 * STROBE_ELEMENT does the same with a type declared in place from its name.
 * STROBE_SCOPE_ELEMENT opens a block scope (like STROBE_SCOPE) attributed
 * to the element: the floor scope and one 16-byte event. */
#define STROBE_ELEMENT_TYPE(var, type_name)                                                              \
  static strobe_site var __attribute__((unused)) = {(type_name), (const char *)0, (const char *)0, __FILE__, (const char *)0,    \
                            (uint32_t)__LINE__, STROBE_SITE_ELEMENT, 0, STROBE_UNIT_NONE, 0}
#define STROBE_ELEMENT_SITE(type, id)                          \
  do {                                                         \
    if (strobe__is_active()) strobe__element((type), (id));    \
  } while (0)
#define STROBE_ELEMENT(type_name, id)                                    \
  do {                                                                   \
    STROBE__SITE(strobe__site_e, STROBE_SITE_ELEMENT, type_name, (const char *)0); \
    STROBE_ELEMENT_SITE(&strobe__site_e, (id));                          \
  } while (0)
#define STROBE_SCOPE_ELEMENT(name, type, id)                                                        \
  STROBE__SITE(STROBE__UNIQUE(strobe__site_), STROBE_SITE_SCOPE, name, (const char *)0);           \
  uintptr_t STROBE__UNIQUE(strobe__guard_) __attribute__((cleanup(strobe__scope_cleanup), unused)) = \
      strobe__is_active() ? strobe__begin(&STROBE__UNIQUE(strobe__site_)) : 0u;                     \
  if (STROBE__UNIQUE(strobe__guard_)) strobe__element((type), (id))

/* >>allocations (docs/memory.md): memory a pool hands out and takes back.
 * STROBE_ALLOC records that `ptr` now holds `size` bytes of pool `pool`,
 * STROBE_FREE that `ptr` went back to it. `pool` is a static label ("heap",
 * "glyph_cache"); each call site declares its own site of that name, and
 * captures add up every site of one pool. A NULL `ptr` records nothing (a
 * failed allocation, free(NULL)). The free names the same pool as the
 * allocation; a reader matches the two by address, so a free of an address
 * it never saw allocated (allocated before the capture began) counts as
 * such, not as freed bytes. Each argument is evaluated once. Thread rule:
 * any thread; a free may run on another thread than its allocation. Cost: a
 * number's, one payload slot more (bench/bench_instructions.c); idle, one
 * relaxed load. No errors: a full ring drops and counts the event, like any
 * other (docs/recording.md, Overflow), and a pool site the registry cannot
 * take counts it lost. */
#define STROBE_ALLOC(ptr, size, pool)                                                                    \
  do {                                                                                                   \
    STROBE__SITE(strobe__site_al, STROBE_SITE_ALLOC, pool, (const char *)0);                             \
    if (strobe__is_active()) {                                                                           \
      const void *strobe__p_al = (const void *)(ptr);                                                    \
      if (strobe__p_al) strobe__alloc(&strobe__site_al, (uint64_t)(uintptr_t)strobe__p_al, (uint64_t)(size)); \
    }                                                                                                    \
  } while (0)
#define STROBE_FREE(ptr, pool)                                                                           \
  do {                                                                                                   \
    STROBE__SITE(strobe__site_fr, STROBE_SITE_FREE, pool, (const char *)0);                              \
    if (strobe__is_active()) {                                                                           \
      const void *strobe__p_fr = (const void *)(ptr);                                                    \
      if (strobe__p_fr) strobe__number(&strobe__site_fr, (uint64_t)(uintptr_t)strobe__p_fr, 0);          \
    }                                                                                                    \
  } while (0)

/* >>messages (docs/memory.md §Messages): a timestamped log line on the
 * calling thread's lane. STROBE_MESSAGE's text is a static label, like a
 * scope's name. STROBE_MESSAGE_TEXT takes text made at run time (`len`
 * bytes, 1..STROBE_MAX_INTERNED_NAME, no NUL): it is application content,
 * interned like strobe_site_intern's names (one site per distinct text,
 * bounded by STROBE_MAX_INTERNED, refusals counted in intern_invalid and
 * intern_full and recorded on a fallback site), kept in local captures
 * flagged STROBE_SITE_INTERNED, and never in session reports or MCP. Thread
 * rule: any thread; STROBE_MESSAGE_TEXT takes the interning lock the first
 * time it meets a text. Idle, one relaxed load. */
#define STROBE_MESSAGE(text)                                                          \
  do {                                                                                \
    STROBE__SITE(strobe__site_msg, STROBE_SITE_MESSAGE, text, (const char *)0);       \
    if (strobe__is_active()) strobe__message(&strobe__site_msg);                      \
  } while (0)
#define STROBE_MESSAGE_TEXT(text, len)                                                                  \
  do {                                                                                                  \
    if (strobe__is_active()) strobe__message(strobe_site_intern((text), (len), (const char *)0, STROBE_SITE_MESSAGE)); \
  } while (0)

#endif /* STROBE_DISABLE */

/* GPU memory by kind (docs/recording.md §Counters and gauges by kind): the
 * family a renderer feeds with its buffers, textures and swapchain estimate
 * in bytes, e.g. STROBE_GPU_MEMORY_SET("textures", atlas_bytes). `kind` is a
 * static label; "buffers", "textures" and "swapchain_estimate" are the kinds
 * the docs name. Costs what STROBE_GAUGE_SET costs; nothing with STROBE_DISABLE. */
#define STROBE_GPU_MEMORY "gpu_memory"
#define STROBE_GPU_MEMORY_SET(kind, bytes) STROBE_GAUGE_SET_KIND_UNIT(STROBE_GPU_MEMORY, kind, bytes, STROBE_UNIT_BYTES)

#ifdef __cplusplus
}
#endif

#endif /* STROBE_STROBE_H */
