/*
 * calltrace.c — call tracing (include/strobe/trace.h, docs/exploration.md):
 * the -finstrument-functions hooks, which turn each traced call into a scope
 * on the calling thread's ordinary scope stack, so captures, the flight
 * recorder, `strobe report` and the viewer show them like any scope.
 *
 * Owns: the mode word the hooks load (0: off), the configuration (depth
 * limit, exclude list), the function table (function address -> its site,
 * one entry per function, found without a lock), each tracing thread's
 * tracer stack (which calls of its region are open and whether each was
 * recorded), the subtree filters (notrace, filter roots, the name match), the
 * cut counts, and naming a function's site from the symbol
 * tables (symbols.c) when the drain first streams it.
 * Must never: resolve a symbol, take a lock or allocate on a traced call
 * that met its function before (the first call of a function inserts it
 * under a short lock, like strobe_site_intern); be instrumented itself
 * (every hook and helper is no_instrument_function, and the file is never
 * compiled with -finstrument-functions); record anything while the mode
 * word is 0 (docs/exploration.md §Cost).
 *
 * Contents: >>state >>table >>threads >>hooks >>deferred >>regions >>setup >>names
 */
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform/invariant.h"
#include "probe/probe.h"
#include "strobe/trace.h"

#define NOINSTR __attribute__((no_instrument_function))

/* >>state */
/* Bit 0: trace_all; the bits above it count the threads in a region. Read
 * relaxed by every traced call's enter hook: the whole cost when off. */
#define MODE_ALL 1u
#define MODE_REGION 2u
static uint32_t g_mode;

static uint32_t g_max_depth = 64; /* atomic (relaxed); below TRACER_STACK, so the inline enter's one bound */
static uint32_t g_keep_overflow;  /* atomic (relaxed): strobe_trace_desc.keep_overflow */
#define TRACER_STACK 1024u        /* a thread's open traced calls the tracer follows (trace.h: cut_stack) */

static uint64_t g_cut_depth, g_cut_stack, g_cut_functions, g_excluded; /* atomic (relaxed) */
static uint64_t g_notraced, g_filtered;                               /* atomic (relaxed) */
static uint32_t g_roots;   /* atomic (relaxed): filter roots set; > 0: only their subtrees record */
static uint64_t g_min_ticks; /* atomic (relaxed): strobe_trace_desc.min_ns in ticks; 0: every call records */
static uint64_t g_cut_short, g_cut_order; /* atomic (relaxed): calls shorter than min_ns; long ones not recorded
                                           * because the thread wrote other events while they were pending */
static uint32_t g_subtrees; /* atomic (relaxed): notrace names or filter roots set */
static uint32_t g_match_selected; /* atomic (relaxed): functions the last match selected */
static uint32_t g_matching; /* atomic (relaxed): 1: a function met for the first time that the name
                             * match did not select is excluded (strobe_trace_desc.match) */
static uint32_t g_resolved, g_unresolved, g_exclude_unmatched;        /* atomic (relaxed) */

/* A placeholder until the drain names the site (names below): a site must
 * always have a name (strobe_thread_query_scope hands it out). */
static const char k_unnamed[] = "strobe: traced call not yet named";

/* >>table
 * Open addressing on the function's address, at most half full, so a probe
 * always meets an empty slot; slots only go from NULL to an entry. */
#define SLOTS (2u * STROBE_TRACE_MAX_FUNCTIONS)

typedef struct fn_entry {
  strobe_site site; /* first: a call site's pointer is its entry's (names below) */
  uintptr_t addr;   /* the function's address, as the hooks get it */
  uint32_t excluded; /* EXCL_* bits; any: the enter takes the slow path */
  uint32_t named;    /* under g_name_lock: the name was resolved */
} fn_entry;

/* fn_entry.excluded bits: why a function's calls are not all recorded. */
#define EXCL_SELF 1u    /* never recorded (strobe_trace_desc.exclude, or not matched) */
#define EXCL_SUBTREE 2u /* never recorded, nor any call below it (strobe_trace_desc.notrace) */
#define EXCL_ROOT 4u    /* a filter root: recorded, and so is its subtree (strobe_trace_desc.filter) */

static fn_entry *g_slots[SLOTS];
static uint32_t g_functions; /* under g_table_lock */
static strobe__mutex g_table_lock = STROBE__MUTEX_INIT;

static inline NOINSTR uint32_t slot_of(uintptr_t addr) {
  return (uint32_t)(((uint64_t)addr * 0x9e3779b97f4a7c15ull) >> 40) & (SLOTS - 1);
}

static inline NOINSTR fn_entry *find(uintptr_t addr, uint32_t *empty) {
  for (uint32_t i = slot_of(addr);; i = (i + 1) & (SLOTS - 1)) {
    fn_entry *e = __atomic_load_n(&g_slots[i], __ATOMIC_ACQUIRE);
    if (!e) {
      *empty = i;
      return NULL;
    }
    if (e->addr == addr) return e;
  }
}

/* The entry of `addr`, inserted now if need be; NULL when the table is full
 * or memory ran out (the call is cut and counted). */
static NOINSTR fn_entry *insert(uintptr_t addr, uint32_t excluded) {
  int fresh = 0;
  uint32_t slot;
  strobe__mutex_lock(&g_table_lock);
  fn_entry *e = find(addr, &slot);
  if (!e && g_functions < STROBE_TRACE_MAX_FUNCTIONS && (e = calloc(1, sizeof *e)) != NULL) {
    e->addr = addr;
    fresh = 1;
    /* A function the name match never selected (setup inserts those first). */
    e->excluded = excluded | (__atomic_load_n(&g_matching, __ATOMIC_RELAXED) ? EXCL_SELF : 0u);
    e->site = (strobe_site){k_unnamed, "call", NULL, "", "", 0, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE,
                            STROBE_SITE_CALL};
    g_functions++;
    __atomic_store_n(&g_slots[slot], e, __ATOMIC_RELEASE);
  }
  if (e && !fresh && excluded) __atomic_fetch_or(&e->excluded, excluded, __ATOMIC_RELAXED);
  strobe__mutex_unlock(&g_table_lock);
  return e;
}

static inline NOINSTR fn_entry *lookup(uintptr_t addr) {
  uint32_t slot;
  fn_entry *e = find(addr, &slot);
  return e ? e : insert(addr, 0);
}

/* >>threads
 * A thread's tracer stack: one frame per traced call open in its region
 * (recorded or not), so each exit finds whether its enter recorded a scope.
 * `cfa` is the caller's stack pointer at the hook call: frames of calls
 * whose exit never ran (a longjmp, an exception through C) lie deeper than
 * a later enter and are dropped there. */
typedef struct tframe {
  uintptr_t fn;    /* the function's address */
  uintptr_t cfa;   /* its frame, as above */
  uintptr_t guard; /* the scope's guard (strobe__begin_slow), 0: not recorded */
  uint32_t opens;  /* F_*: the subtree state this call opened, or F_PENDING (its fn is stored as ~fn,
                    * so its exit misses the inline path and closes that state in leave_slow) */
} tframe; /* 32 bytes: the inline hooks index it with a shift */

/* A held-back call's start, beside its frame (tracer.pend[i] for f[i]):
 * apart, so the frames the inline hooks touch stay 32 bytes. */
typedef struct tpend {
  uint64_t ts;               /* F_PENDING: when the call began (ticks) */
  const strobe__event *mark; /* F_PENDING: the thread's ring cursor then */
} tpend;
#define F_MUTES 1u   /* a notrace function: calls below it are not recorded */
#define F_ROOT 2u    /* a filter root: calls below it are recorded */
#define F_PENDING 4u /* min_ns: a call to record once it proved long enough; guard holds its site */

typedef struct tracer {
  uint32_t region; /* strobe_trace_calls_begin pairs open on this thread */
  uint32_t n;      /* frames on the stack */
  uint32_t over;   /* calls open beyond TRACER_STACK (cut_stack) */
  uint32_t muted;  /* open F_MUTES frames */
  uint32_t inside; /* open F_ROOT frames */
  uint32_t gate;   /* 1: every enter takes the slow path (muted, or filter roots set and none open) */
  tframe f[TRACER_STACK];
  tpend pend[TRACER_STACK];
} tracer;

static __thread tracer *t_tracer __attribute__((tls_model("initial-exec")));
static pthread_key_t g_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;

static NOINSTR void tracer_free(void *p) {
  tracer *t = p;
  if (t && t->region) __atomic_fetch_sub(&g_mode, MODE_REGION, __ATOMIC_RELAXED);
  t_tracer = NULL;
  free(t);
}
static NOINSTR void key_init(void) { (void)pthread_key_create(&g_key, tracer_free); }

/* 1: every enter of t takes the slow path (tracer.gate). */
static inline NOINSTR uint32_t gate_of(const tracer *t) {
  return t->muted || (__atomic_load_n(&g_roots, __ATOMIC_RELAXED) && !t->inside) ||
         __atomic_load_n(&g_min_ticks, __ATOMIC_RELAXED);
}

static NOINSTR tracer *tracer_get(void) {
  tracer *t = t_tracer;
  if (t) return t;
  pthread_once(&g_key_once, key_init);
  if (!(t = calloc(1, sizeof *t))) return NULL;
  if (pthread_setspecific(g_key, t) != 0) {
    free(t);
    return NULL;
  }
  t->gate = gate_of(t);
  return t_tracer = t;
}

/* A frame leaves the tracer stack (its exit, or frames whose exits never
 * ran): undoes the subtree state it opened. */
static inline NOINSTR void frame_gone(tracer *t, const tframe *f) {
  if (STROBE__LIKELY(!f->opens)) return;
  if (f->opens & F_MUTES) t->muted--;
  if (f->opens & F_ROOT) t->inside--;
  t->gate = gate_of(t);
}

/* Whether frame f is fn's call (a frame that opened subtree state keeps ~fn). */
static inline NOINSTR int frame_is(const tframe *f, uintptr_t fn) { return f->fn == fn || f->fn == ~fn; }

/* >>hooks */
/* Opens a scope whose C frame is the traced function's: `sp` just above the
 * stack pointer it had when it called the hook, so scopes opened in its body
 * nest inside it and its callees' traced scopes below those (the BEGIN's C
 * stack rule, docs/recording.md §Unwinding). As strobe__begin, with that sp. */
static inline NOINSTR uintptr_t open_scope(strobe_site *site, uintptr_t sp) {
  strobe__thread *h = strobe__tls;
  strobe__event *e = h->cur;
  strobe__frame *top = h->top;
  if (STROBE__UNLIKELY((uint64_t)(uintptr_t)e + 4u * (uint64_t)(uintptr_t)top > STROBE__LIMIT(h, limit)) ||
      STROBE__UNLIKELY(sp >= top->sp))
    return strobe__begin_slow(site, 0, sp);
  strobe__stamp(&e->ts);
  strobe__put_word(e, (uintptr_t)site);
  top[1].word = (uintptr_t)site;
  top[1].sp = sp;
  h->top = top + 1;
  strobe__advance(h, e);
  return (uintptr_t)(top + 1);
}

/* Whether the calling thread traces now: trace_all, or its own region. */
static inline NOINSTR int tracing(const tracer *t, uint32_t mode) { return (mode & MODE_ALL) || t->region; }

/* Every enter the inline one below does not take: the thread's first traced
 * call, a stack or depth bound, frames left by calls whose exits never ran,
 * nothing recording, a function met for the first time or excluded. */
static NOINSTR __attribute__((noinline)) void enter_slow(tracer *t, uint32_t mode, uintptr_t fn, uintptr_t cfa) {
  if (!t) {
    if (!(mode & MODE_ALL) || !(t = tracer_get())) return;
  }
  if (!tracing(t, mode)) return;
  if (t->over || t->n == TRACER_STACK) {
    t->over++;
    __atomic_fetch_add(&g_cut_stack, 1, __ATOMIC_RELAXED);
    return;
  }
  while (t->n && t->f[t->n - 1].cfa < cfa) frame_gone(t, &t->f[--t->n]); /* their exits never ran */
  tframe *f = &t->f[t->n++];
  f->fn = fn;
  f->cfa = cfa;
  f->guard = 0;
  f->opens = 0;
  int active = strobe__is_active();
  /* Subtree filters follow every call, recorded or not, so that a recording
   * starting inside a filtered subtree knows it is inside. */
  fn_entry *e = active || __atomic_load_n(&g_subtrees, __ATOMIC_RELAXED) ? lookup(fn) : NULL;
  uint32_t x = e ? __atomic_load_n(&e->excluded, __ATOMIC_RELAXED) : 0;
  if ((x & (EXCL_SUBTREE | EXCL_ROOT)) && !t->muted) {
    f->opens = x & EXCL_SUBTREE ? F_MUTES : F_ROOT;
    f->fn = ~fn;
    *(f->opens == F_MUTES ? &t->muted : &t->inside) += 1;
    t->gate = gate_of(t);
  }
  if (t->muted || (!t->inside && __atomic_load_n(&g_roots, __ATOMIC_RELAXED))) {
    if (active) __atomic_fetch_add(t->muted ? &g_notraced : &g_filtered, 1, __ATOMIC_RELAXED);
    return;
  }
  if (!active) return;
  if (t->n > __atomic_load_n(&g_max_depth, __ATOMIC_RELAXED)) {
    __atomic_fetch_add(&g_cut_depth, 1, __ATOMIC_RELAXED);
    return;
  }
  if (!e) {
    __atomic_fetch_add(&g_cut_functions, 1, __ATOMIC_RELAXED);
    return;
  }
  if (x & EXCL_SELF) {
    __atomic_fetch_add(&g_excluded, 1, __ATOMIC_RELAXED);
    return;
  }
  if (__atomic_load_n(&g_min_ticks, __ATOMIC_RELAXED)) { /* recorded at its exit, if long enough */
    f->opens |= F_PENDING;
    f->fn = ~fn;
    f->guard = (uintptr_t)&e->site;
    t->pend[t->n - 1].mark = strobe__tls->cur;
    t->pend[t->n - 1].ts = strobe__now();
    return;
  }
  f->guard = open_scope(&e->site, cfa + sizeof(void *));
}

/* >>deferred: strobe_trace_desc.min_ns. A traced call is pending until its
 * exit; a long one is recorded then, after the pending calls that enclose
 * it (all longer still), each BEGIN stamped with its call's start. A
 * pending call before which the thread wrote another event (a hand-placed
 * scope, a value) cannot be put back in order: it is not recorded, and
 * counted (cut_order). */
static NOINSTR void emit_pending(tracer *t, uint32_t upto) {
  uint32_t lo = upto;
  while (lo && (t->f[lo - 1].opens & F_PENDING || !t->f[lo - 1].guard)) lo--;
  const strobe__event *cur = strobe__tls->cur;
  for (uint32_t i = lo; i <= upto; i++) {
    tframe *f = &t->f[i];
    if (!(f->opens & F_PENDING)) continue;
    strobe_site *site = (strobe_site *)f->guard;
    f->opens &= ~F_PENDING;
    f->guard = 0;
    if (t->pend[i].mark != cur) { /* all held back since one cursor, or the thread wrote meanwhile */
      __atomic_fetch_add(&g_cut_order, 1, __ATOMIC_RELAXED);
      continue;
    }
    f->guard = strobe__begin_at(site, f->cfa + sizeof(void *), t->pend[i].ts);
  }
}

/* The exit of a pending call (frame k): recorded with the pending calls
 * around it when it lasted min_ns, else cut and counted. */
static NOINSTR void leave_pending(tracer *t, uint32_t k) {
  tframe *f = &t->f[k];
  if (!strobe__is_active() || strobe__now() - t->pend[k].ts < __atomic_load_n(&g_min_ticks, __ATOMIC_RELAXED)) {
    __atomic_fetch_add(&g_cut_short, 1, __ATOMIC_RELAXED);
    f->opens &= ~F_PENDING;
    f->guard = 0;
    return;
  }
  emit_pending(t, k);
  if (f->guard) strobe__end(f->guard);
  f->guard = 0;
}

/* An exit whose function is not the top frame's: frames above its own are
 * calls whose exits never ran, closed with it (strobe__end_slow closes their
 * scopes as unwound); a function not on the stack was entered before the
 * region began. */
static NOINSTR __attribute__((noinline)) void leave_slow(tracer *t, uintptr_t fn) {
  if (t->over) {
    t->over--;
    return;
  }
  uint32_t k = t->n;
  while (k && !frame_is(&t->f[k - 1], fn)) k--;
  if (!k) return;
  while (t->n > k) frame_gone(t, &t->f[--t->n]); /* calls whose exits never ran: never recorded if pending */
  if (t->f[k - 1].opens & F_PENDING) leave_pending(t, k - 1);
  uintptr_t guard = t->f[k - 1].guard;
  frame_gone(t, &t->f[--t->n]);
  if (guard) strobe__end(guard);
}

NOINSTR void __cyg_profile_func_enter(void *fn, void *call_site);
NOINSTR void __cyg_profile_func_exit(void *fn, void *call_site);

/* The inline enter: a recorded call of a function met before, within the
 * bounds, nested in the thread's previous traced call (docs/exploration.md §Cost). */
STROBE_API NOINSTR void __cyg_profile_func_enter(void *fn, void *call_site) {
  (void)call_site;
  uint32_t mode = __atomic_load_n(&g_mode, __ATOMIC_RELAXED);
  if (STROBE__LIKELY(mode == 0)) return;
  tracer *t = t_tracer;
  uintptr_t cfa = (uintptr_t)__builtin_dwarf_cfa();
  if (STROBE__UNLIKELY(!t)) goto slow;
  uint32_t n = t->n;
  fn_entry *e = __atomic_load_n(&g_slots[slot_of((uintptr_t)fn)], __ATOMIC_ACQUIRE);
  if (STROBE__UNLIKELY(t->gate || n >= __atomic_load_n(&g_max_depth, __ATOMIC_RELAXED) || (n && t->f[n - 1].cfa < cfa) || !e || e->addr != (uintptr_t)fn ||
                       e->excluded || !tracing(t, mode) || !strobe__is_active()))
    goto slow;
  tframe *f = &t->f[n];
  f->fn = (uintptr_t)fn;
  f->cfa = cfa;
  f->guard = open_scope(&e->site, cfa + sizeof(void *));
  t->n = n + 1;
  return;
slow:
  enter_slow(t, mode, (uintptr_t)fn, cfa);
}

STROBE_API NOINSTR void __cyg_profile_func_exit(void *fn, void *call_site) {
  (void)call_site;
  tracer *t = t_tracer; /* NULL on every thread that never traced */
  if (STROBE__LIKELY(t == NULL)) return;
  uint32_t n = t->n;
  if (STROBE__LIKELY(n && t->f[n - 1].fn == (uintptr_t)fn && !t->over)) {
    t->n = n - 1;
    uintptr_t guard = t->f[n - 1].guard;
    if (guard) strobe__end(guard);
    return;
  }
  if (n || t->over) leave_slow(t, (uintptr_t)fn);
}

/* A tracing thread's ring grows when full (trace.h, keep_overflow): asked by
 * the producer's slow path on its own thread (thread.c, make_room). */
NOINSTR int strobe__trace_grows(void) {
  tracer *t = t_tracer;
  return t && tracing(t, __atomic_load_n(&g_mode, __ATOMIC_RELAXED)) && !__atomic_load_n(&g_keep_overflow, __ATOMIC_RELAXED);
}

/* >>regions */
int strobe_trace_calls_begin(void) {
  tracer *t = tracer_get();
  if (!t) return STROBE_ENOMEM;
  if (t->region++ == 0) {
    __atomic_fetch_add(&g_mode, MODE_REGION, __ATOMIC_RELAXED);
  }
  return 0;
}

int strobe_trace_calls_end(void) {
  tracer *t = t_tracer;
  if (!t || !t->region) return STROBE_ESTATE;
  if (--t->region) return 0;
  __atomic_fetch_sub(&g_mode, MODE_REGION, __ATOMIC_RELAXED);
  if (__atomic_load_n(&g_mode, __ATOMIC_RELAXED) & MODE_ALL) return 0; /* trace_all follows them on */
  /* Calls still open (the end is deeper than its begin) end here. */
  while (t->n) {
    const tframe *f = &t->f[--t->n];
    frame_gone(t, f);
    if (f->guard && !(f->opens & F_PENDING)) strobe__end(f->guard);
  }
  t->over = 0;
  return 0;
}

/* >>setup */
static NOINSTR void mark_one(uintptr_t addr, void *user) { (void)insert(addr, *(const uint32_t *)user); }
static NOINSTR int regex_wants(const char *name, void *user) { return regexec(user, name, 0, NULL, 0) == 0; }
static NOINSTR void select_one(uintptr_t addr, void *user) {
  (void)user;
  (void)insert(addr, 0);
}

#define MAX_MIN_NS 3600000000000ull /* an hour: strobe_trace_desc.min_ns */

static NOINSTR size_t count_names(const char *const *names) {
  size_t n = 0;
  while (names && names[n] && n <= STROBE_TRACE_MAX_EXCLUDE) n++;
  for (size_t i = 0; i < n; i++)
    if (!names[i][0]) return STROBE_TRACE_MAX_EXCLUDE + 1;
  return n;
}

/* Marks every function a list names with `bits`; returns the names that
 * matched nothing. */
static NOINSTR uint32_t mark_names(const char *const *names, uint32_t bits) {
  uint32_t unmatched = 0;
  for (size_t i = 0; names && names[i]; i++)
    if (strobe__symbol_find(names[i], mark_one, &bits) <= 0) unmatched++;
  return unmatched;
}

static NOINSTR int apply(const strobe_trace_desc *d) {
  size_t n_ex = count_names(d->exclude), n_no = count_names(d->notrace), n_fi = count_names(d->filter);
  if (d->all > 1 || d->max_depth > STROBE_MAX_DEPTH || d->keep_overflow > 1 || n_ex > STROBE_TRACE_MAX_EXCLUDE ||
      d->min_ns > MAX_MIN_NS ||
      n_no > STROBE_TRACE_MAX_EXCLUDE || n_fi > STROBE_TRACE_MAX_EXCLUDE || (d->match && !d->match[0]))
    return STROBE_EINVAL;
  regex_t re;
  if (d->match && regcomp(&re, d->match, REG_EXTENDED | REG_NOSUB) != 0) return STROBE_EINVAL;
  /* The match selects functions before they are met: those it names are
   * inserted unmarked, and every function met later is excluded. */
  if (d->match) {
    int found = strobe__symbol_find_if(regex_wants, select_one, &re);
    regfree(&re);
    __atomic_store_n(&g_match_selected, found > 0 ? (uint32_t)found : 0u, __ATOMIC_RELAXED);
    __atomic_store_n(&g_matching, 1, __ATOMIC_RELAXED);
  }
  /* An exclusion, a notrace or a filter root is never undone by a later
   * setup: a scope open on another thread may still be waiting for its exit. */
  uint32_t unmatched = mark_names(d->exclude, EXCL_SELF) + mark_names(d->notrace, EXCL_SUBTREE) +
                       mark_names(d->filter, EXCL_ROOT);
  if (n_no || n_fi) __atomic_store_n(&g_subtrees, 1, __ATOMIC_RELAXED);
  if (n_fi) __atomic_fetch_add(&g_roots, (uint32_t)n_fi, __ATOMIC_RELAXED);
  __atomic_store_n(&g_exclude_unmatched, unmatched, __ATOMIC_RELAXED);
  __atomic_store_n(&g_max_depth, d->max_depth ? d->max_depth : 64u, __ATOMIC_RELAXED);
  __atomic_store_n(&g_keep_overflow, d->keep_overflow, __ATOMIC_RELAXED);
  double ns_per_tick = strobe_query_clock().ns_per_tick;
  uint64_t ticks = d->min_ns ? (uint64_t)((double)d->min_ns / (ns_per_tick > 0 ? ns_per_tick : 1.0)) : 0;
  __atomic_store_n(&g_min_ticks, d->min_ns && !ticks ? 1u : ticks, __ATOMIC_RELAXED);
  if (d->all)
    __atomic_fetch_or(&g_mode, MODE_ALL, __ATOMIC_RELAXED);
  else
    __atomic_fetch_and(&g_mode, ~MODE_ALL, __ATOMIC_RELAXED);
  return 0;
}

int strobe_trace_setup(const strobe_trace_desc *desc) {
  strobe_trace_desc d = desc ? *desc : (strobe_trace_desc){0};
  return apply(&d);
}

strobe_trace_desc strobe_trace_query_desc(void) {
  strobe_trace_desc d = {0};
  d.all = (__atomic_load_n(&g_mode, __ATOMIC_RELAXED) & MODE_ALL) != 0;
  d.max_depth = __atomic_load_n(&g_max_depth, __ATOMIC_RELAXED);
  d.keep_overflow = __atomic_load_n(&g_keep_overflow, __ATOMIC_RELAXED);
  return d;
}

strobe_trace_stats strobe_trace_query_stats(void) {
  strobe_trace_stats s;
  s.cut_depth = __atomic_load_n(&g_cut_depth, __ATOMIC_RELAXED);
  s.cut_stack = __atomic_load_n(&g_cut_stack, __ATOMIC_RELAXED);
  s.cut_functions = __atomic_load_n(&g_cut_functions, __ATOMIC_RELAXED);
  s.excluded = __atomic_load_n(&g_excluded, __ATOMIC_RELAXED);
  s.notraced = __atomic_load_n(&g_notraced, __ATOMIC_RELAXED);
  s.filtered = __atomic_load_n(&g_filtered, __ATOMIC_RELAXED);
  s.cut_short = __atomic_load_n(&g_cut_short, __ATOMIC_RELAXED);
  s.cut_order = __atomic_load_n(&g_cut_order, __ATOMIC_RELAXED);
  s.match_selected = __atomic_load_n(&g_match_selected, __ATOMIC_RELAXED);
  strobe__mutex_lock(&g_table_lock);
  s.functions = g_functions;
  strobe__mutex_unlock(&g_table_lock);
  s.resolved = __atomic_load_n(&g_resolved, __ATOMIC_RELAXED);
  s.unresolved = __atomic_load_n(&g_unresolved, __ATOMIC_RELAXED);
  s.exclude_unmatched = __atomic_load_n(&g_exclude_unmatched, __ATOMIC_RELAXED);
  return s;
}

strobe_trace_stats strobe__trace_stats_since(const strobe_trace_stats *base) {
  strobe_trace_stats s = strobe_trace_query_stats();
  s.cut_depth -= base->cut_depth;
  s.cut_stack -= base->cut_stack;
  s.cut_functions -= base->cut_functions;
  s.excluded -= base->excluded;
  s.notraced -= base->notraced;
  s.filtered -= base->filtered;
  s.cut_short -= base->cut_short;
  s.cut_order -= base->cut_order;
  s.functions -= base->functions;
  s.resolved -= base->resolved;
  s.unresolved -= base->unresolved;
  return s;
}

/* A comma-separated environment list, split into `names` (at most
 * STROBE_TRACE_MAX_EXCLUDE + 1, so one too many is refused by apply); the
 * returned copy holds the strings. */
static NOINSTR char *split_names(const char *list, const char **names) {
  char *copy = list ? strdup(list) : NULL;
  size_t n = 0;
  for (char *save = NULL, *tok = copy ? strtok_r(copy, ",", &save) : NULL; tok; tok = strtok_r(NULL, ",", &save))
    if (n < STROBE_TRACE_MAX_EXCLUDE + 1) names[n++] = tok;
  names[n] = NULL;
  return copy;
}

/* The environment's configuration (trace.h), read once at load time, so a
 * program built with tracing needs no code to trace everything (and
 * `strobe record` configures it: docs/exploration.md §Configuration). Bad
 * values are said on stderr and leave the defaults. */
__attribute__((constructor)) static NOINSTR void from_environment(void) {
  const char *all = getenv("STROBE_TRACE"), *depth = getenv("STROBE_TRACE_DEPTH"),
             *keep = getenv("STROBE_TRACE_KEEP_OVERFLOW"), *match = getenv("STROBE_TRACE_MATCH"),
             *min = getenv("STROBE_TRACE_MIN_NS");
  const char *lists[3] = {getenv("STROBE_TRACE_EXCLUDE"), getenv("STROBE_TRACE_NOTRACE"), getenv("STROBE_TRACE_FILTER")};
  if (!all && !depth && !keep && !match && !min && !lists[0] && !lists[1] && !lists[2]) return;
  const char *names[3][STROBE_TRACE_MAX_EXCLUDE + 2];
  char *copies[3];
  for (int i = 0; i < 3; i++) copies[i] = split_names(lists[i], names[i]);
  char *end = NULL;
  unsigned long md = depth ? strtoul(depth, &end, 10) : 0;
  char *min_end = NULL;
  unsigned long long min_ns = min ? strtoull(min, &min_end, 10) : 0;
  strobe_trace_desc d = {.all = all && !strcmp(all, "all"), .max_depth = (uint32_t)md,
                         .exclude = lists[0] ? names[0] : NULL, .keep_overflow = keep && !strcmp(keep, "1"),
                         .notrace = lists[1] ? names[1] : NULL, .filter = lists[2] ? names[2] : NULL, .match = match,
                         .min_ns = min_ns};
  int rc = (all && !d.all && strcmp(all, "off")) || (depth && (*end || md == 0 || md > STROBE_MAX_DEPTH)) ||
                   (keep && strcmp(keep, "0") && strcmp(keep, "1")) || (min && (!*min || *min_end))
               ? STROBE_EINVAL
               : apply(&d);
  if (rc)
    fprintf(stderr,
            "strobe: call tracing environment refused (%s): STROBE_TRACE=all|off, STROBE_TRACE_DEPTH=1..%d, "
            "STROBE_TRACE_EXCLUDE, STROBE_TRACE_NOTRACE, STROBE_TRACE_FILTER=name,... (at most %d each), "
            "STROBE_TRACE_MATCH=extended regex, STROBE_TRACE_MIN_NS=0..3600000000000, STROBE_TRACE_KEEP_OVERFLOW=0|1\n",
            strobe_strerror(rc), STROBE_MAX_DEPTH, STROBE_TRACE_MAX_EXCLUDE);
  for (int i = 0; i < 3; i++) free(copies[i]);
}

/* >>names
 * The drain names a call site before it first streams it (site.c): once per
 * function, off every recording thread. */
static strobe__mutex g_name_lock = STROBE__MUTEX_INIT;

void strobe__call_site_name(strobe_site *site) {
  fn_entry *e = (fn_entry *)site;
  strobe__mutex_lock(&g_name_lock);
  if (!e->named) {
    char *name = NULL, *module = NULL;
    int rc = strobe__symbol_name(e->addr, &name, &module);
    if (rc >= 0) {
      e->site.file = module ? module : "";
      e->site.function = name;
      __atomic_store_n(&e->site.name, name, __ATOMIC_RELEASE);
      __atomic_fetch_add(rc ? &g_resolved : &g_unresolved, 1, __ATOMIC_RELAXED);
      e->named = 1;
    }
  }
  strobe__mutex_unlock(&g_name_lock);
}
