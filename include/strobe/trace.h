/*
 * trace.h — call tracing (docs/exploration.md): every call of a function in a
 * unit compiled with -finstrument-functions becomes a scope named after the
 * function, without hand-placed scopes. The compiler calls the hooks
 * __cyg_profile_func_enter/exit, which libstrobe defines; this header turns
 * them on and off and says what they cut.
 *
 * Cost rule: with call tracing off (the default) a traced call costs the
 * compiler's two hook calls and one relaxed load each. On, a traced call is
 * one scope, its site found by the function's address without a lock;
 * function names are resolved from the binary's own symbol tables once per
 * address off the recording thread (by the drain, before a capture first
 * names the site), never on the hot path.
 *
 * Content rule: a traced function's name is run-time content, like an
 * interned name: captures keep it (sites flagged STROBE_SITE_CALL); session
 * reports and MCP do not carry it unless strobe_desc.report_interned_names
 * is 1.
 *
 * Thread rule: as strobe.h: any thread, unless a function says otherwise.
 */
#ifndef STROBE_TRACE_H
#define STROBE_TRACE_H

#include <stdint.h>

#include "strobe/strobe.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STROBE_TRACE_MAX_FUNCTIONS 16384 /* distinct traced functions per process; more are cut and counted */
#define STROBE_TRACE_MAX_EXCLUDE 64      /* names in strobe_trace_desc.exclude */

/* Call tracing's configuration. Zero fields mean "default". The environment
 * sets the same at load time, for programs that never call
 * strobe_trace_setup: STROBE_TRACE=all (trace_all), STROBE_TRACE_DEPTH=N,
 * STROBE_TRACE_EXCLUDE=name,name,..., STROBE_TRACE_KEEP_OVERFLOW=1,
 * STROBE_TRACE_NOTRACE=name,..., STROBE_TRACE_FILTER=name,...,
 * STROBE_TRACE_MATCH=regex, STROBE_TRACE_MIN_NS=N (docs/exploration.md
 * §Configuration). */
typedef struct strobe_trace_desc {
  uint32_t all;       /* 1: trace every traced call on every thread (trace_all); 0 (default): only
                       * between strobe_trace_calls_begin and _end on a thread. 0 or 1, else STROBE_EINVAL */
  uint32_t max_depth; /* traced calls nested below where tracing began (the thread's start for `all`),
                       * 1..STROBE_MAX_DEPTH, default 64; deeper calls are cut and counted (cut_depth) */
  const char *const *exclude; /* NULL-terminated function names never recorded (their callees still are):
                               * as the symbol table spells them or demangled ("ns::f(int)"); at most
                               * STROBE_TRACE_MAX_EXCLUDE; copied; NULL: none */
  uint32_t keep_overflow; /* 0 (default): while a thread traces calls and strobe_desc.overflow is
                           * STROBE_OVERFLOW_DROP, its full ring grows as under STROBE_OVERFLOW_GROW (up
                           * to strobe_desc.ring_events_max), since traced calls come faster than one
                           * drain thread reads them; 1: traced threads keep strobe_desc.overflow.
                           * 0 or 1, else STROBE_EINVAL */
  const char *const *notrace; /* NULL-terminated function names never recorded, nor any call made below
                               * them (a subtree, as `strobe record --notrace`); spelled as `exclude`,
                               * at most STROBE_TRACE_MAX_EXCLUDE; copied; NULL: none */
  const char *const *filter;  /* NULL-terminated function names: when set, only their calls and the
                               * calls below them are recorded (subtrees, `strobe record --filter`);
                               * spelled as `exclude`, at most STROBE_TRACE_MAX_EXCLUDE; NULL: none.
                               * Threads already tracing keep the state they had (set it first) */
  const char *match; /* POSIX extended regular expression: only functions whose name (as the symbol
                      * table spells it, or demangled) matches are recorded; the others are excluded
                      * (their callees still recorded); selected in the objects loaded now; NULL: all.
                      * Empty or not compiling: STROBE_EINVAL */
  uint64_t min_ns; /* 0 (default): every call records; else a traced call is recorded only when it lasts at
                    * least min_ns (nanoseconds, at most 3600e9): it is held back until its exit, then recorded
                    * with the held-back calls around it, each at its own start (docs/exploration.md
                    * §Configuration); shorter calls are cut and counted (cut_short). Threads already tracing
                    * keep the state they had (set it first) */
} strobe_trace_desc;

/* Sets call tracing's configuration; NULL restores every default. Exclude
 * names are looked up in the symbol tables of every object loaded now (one
 * name may match several functions, e.g. static ones of different files);
 * a name that matches nothing is counted (exclude_unmatched), not an error.
 * notrace and filter names, and the match, are never undone by a later
 * setup either (their subtrees may be open on other threads).
 * Returns 0; STROBE_EINVAL for fields out of range (nothing changes);
 * STROBE_ENOMEM. Takes effect for calls that begin after it returns; a
 * call already recorded still ends as a scope. */
STROBE_API int strobe_trace_setup(const strobe_trace_desc *desc);
/* The configuration in force, defaults resolved; `exclude`, `notrace`,
 * `filter` and `match` are NULL (the names live in the library). */
STROBE_API strobe_trace_desc strobe_trace_query_desc(void);

/* Traces the calls the calling thread makes from now until
 * strobe_trace_calls_end (seed's trace_calls: the call tree below one
 * point). Pairs nest; the outermost pair counts. Calls are recorded while an
 * event consumer records (a capture, the flight recorder, a live stream),
 * like every scope. Returns 0. Calling thread only. */
STROBE_API int strobe_trace_calls_begin(void);
/* Ends the calling thread's region. Traced calls still open here (the end
 * was called deeper than its begin) are closed now. Returns 0;
 * STROBE_ESTATE when no region is open on this thread (nothing changes). */
STROBE_API int strobe_trace_calls_end(void);

/* What call tracing cut and resolved since the library loaded (process-wide). */
typedef struct strobe_trace_stats {
  uint64_t cut_depth;         /* calls not recorded: deeper than max_depth */
  uint64_t cut_stack;         /* calls not recorded: deeper than the tracer's own stack (1024 per thread) */
  uint64_t cut_functions;     /* calls not recorded: their function came after STROBE_TRACE_MAX_FUNCTIONS */
  uint64_t excluded;          /* calls not recorded: excluded by name (or not selected by the match) */
  uint64_t notraced;          /* calls not recorded: a notrace function or below one */
  uint64_t filtered;          /* calls not recorded: outside every filter root's subtree */
  uint64_t cut_short;         /* calls not recorded: shorter than min_ns */
  uint64_t cut_order;         /* calls not recorded: long enough, but the thread wrote another event (a
                               * hand-placed scope, a value) while they were held back */
  uint32_t functions;         /* distinct functions met */
  uint32_t resolved;          /* of them, named from a symbol table */
  uint32_t unresolved;        /* of them, with no symbol at their address (named "?? module+0xoffset") */
  uint32_t exclude_unmatched; /* exclude, notrace and filter names that matched no symbol */
  uint32_t match_selected;    /* functions the match selected when it was set */
} strobe_trace_stats;
STROBE_API strobe_trace_stats strobe_trace_query_stats(void);

#ifdef __cplusplus
}
#endif

#endif
