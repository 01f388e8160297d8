/*
 * operation.c — operations (passes, rebuilds, input dispatch, requests) and
 * their stages: the live-operation table a session reads for unfinished
 * work, the per-thread operation context (nesting restores the outer one;
 * take / resume moves one between threads), stage aggregation, per-operation
 * counters, and completion into a sample allocated once and shared.
 *
 * Also writes each operation's events into the calling thread's ring while
 * an event consumer is active (>>capture), so captures, the flight recorder
 * and the live stream see the same operations, stages and counters as
 * sessions (docs/capture-format.md, OPS block).
 *
 * Must never: allocate or aggregate for an operation that neither a session
 * can admit nor a capture records (one that began with neither active), or
 * hold the collector lock around anything but a bounded slot update.
 *
 * While nothing listens (no session on any collector, no event consumer:
 * collect.h >>op-gate), counters and stages outside operations cost one
 * relaxed load, and an operation is kept in a record of its own thread
 * without the collector's lock, which a session's snapshot reads
 * (>>idle-records, >>idle; docs/sessions.md §Cost when nothing listens).
 * Lock order: a collector's lock, then g_ctx_lock.
 *
 * Contents: >>context >>idle-records >>idle >>capture >>begin-end >>handoff >>park >>remote >>marks >>stages
 * >>abandon >>crash
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "platform/clock.h"
#include "platform/host.h"
#include "probe/probe.h"
#include "session/session_internal.h"
#include "strobe/gpu.h"

/* >>context: what the calling thread is working on. */
#define MAX_OP_NEST 8     /* operations nested on one thread (input → pass → rebuild …) */
#define MAX_STAGE_NEST STROBE__MAX_STAGE_NEST

/* An open stage. Frames are kept in begin order; one that ends out of order
 * is removed from the middle, so a handle names its frame by token, not by
 * position. */
typedef strobe__stage_frame stage_frame;

/* >>idle-records: an operation begun while nothing listens (collect.h
 * >>op-gate) takes no slot of the collector's table and no lock: it is kept
 * here, on its thread (docs/sessions.md §Cost when nothing listens). Other
 * threads read a record only under g_ctx_lock (a session's snapshot, a
 * window's close), through its version word: odd while the owner writes
 * it, IDLE_LIVE while it holds an operation, so a reader that sees the
 * version change under it skips the record. Every field another thread reads
 * is accessed with relaxed atomics on both sides. */
#define IDLE_BIT 0x80000000u /* an op handle id kept in a record: live slots' generations wrap below it */
#define IDLE_LIVE 2u
typedef struct idle_rec {
  uint32_t ver;                 /* atomic: bit 0 writing, bit 1 IDLE_LIVE, a count above */
  uint32_t id;                  /* atomic: its handle's id (IDLE_BIT set) */
  uint32_t window;              /* atomic: its window's handle, checked again by whoever reads it */
  uint32_t kind;                /* atomic: strobe_op_kind */
  strobe_collector *collector;  /* atomic: compared, never followed, by a reader of another collector */
  uint64_t uid;                 /* atomic: the collector's uid, so a later collector at a released one's address
                                 * never reads a record left open under the old one */
  uint64_t seq, frame_id, start; /* atomic: its operation id, frame id (passes), start (ticks) */
  uint64_t phase;               /* atomic: strobe__phase_pack of its innermost open stage; 0 = none */
  uint8_t app_frame;            /* owner only: frame_id was the application's */
  uint8_t marked_idle;          /* owner only: strobe_op_mark_idle */
  char population[STROBE_MAX_LABEL + 1]; /* owner only: strobe_op_set_population; "" = none */
} idle_rec;

typedef struct op_context {
  strobe_op ops[MAX_OP_NEST];
  uint32_t anchor[MAX_OP_NEST]; /* the stage token whose end ends ops[i] (strobe_op_begin_in_phase); 0 = none */
  uint32_t nops;
  uint32_t overflow;            /* operations begun (or resumed) past MAX_OP_NEST and not yet ended: while
                                 * any is open, the thread has no current operation to attach work to */
  strobe_op overflow_op;        /* the last of those begun, while open: what it is not given is counted on it */
  stage_frame stages[MAX_STAGE_NEST];
  uint32_t nstages;
  uint32_t next_token;
  uint32_t idle_used;           /* owner only: bit i set while idle[i] holds an operation (0xff: no room) */
  uint32_t idle_gen;            /* owner only: makes each idle handle id new on this thread */
  uint32_t number;              /* this context's number (12 bits), in its idle handles' ids */
  idle_rec idle[MAX_OP_NEST];
  struct op_context *next, **prevp; /* g_ctx_lock: every thread's context, for readers of idle records */
} op_context;

/* The thread's context, reached through one initial-exec pointer: a plain
 * %fs-relative load in libstrobe.so too, never a __tls_get_addr call on a
 * per-event path, and 8 bytes of static TLS where the context itself (about
 * 1 KiB) could exhaust what glibc keeps for a dlopen'ed library (a Python
 * extension). Until the thread's first operation it points at an empty,
 * read-only context (whose records are all taken, so an idle begin goes the
 * way that makes it one); own_context() gives it its own, freed at thread exit. */
static const op_context g_no_context = {.idle_used = 0xffu};
static _Thread_local op_context *tls_ctx_p __attribute__((tls_model("initial-exec"))) = (op_context *)&g_no_context;
#define tls_ctx (*tls_ctx_p)

static pthread_once_t g_ctx_once = PTHREAD_ONCE_INIT;
static pthread_key_t g_ctx_key;
static int g_ctx_key_ok;
static strobe__mutex g_ctx_lock = STROBE__MUTEX_INIT; /* the list below and every read of another thread's record */
static op_context *g_ctx_head;
static uint32_t g_ctx_numbers;  /* g_ctx_lock */

static void context_free(void *p) {
  op_context *x = p;
  if (tls_ctx_p == p) tls_ctx_p = (op_context *)&g_no_context;
  strobe__mutex_lock(&g_ctx_lock);
  *x->prevp = x->next;
  if (x->next) x->next->prevp = x->prevp;
  strobe__mutex_unlock(&g_ctx_lock);
  free(p);
}

static void context_key_make(void) { g_ctx_key_ok = pthread_key_create(&g_ctx_key, context_free) == 0; }

/* The calling thread's own context, allocated at its first operation; NULL
 * when out of memory (the operation is then as one past the nesting bound). */
static op_context *own_context(void) {
  if (tls_ctx_p != &g_no_context) return tls_ctx_p;
  pthread_once(&g_ctx_once, context_key_make);
  op_context *x = calloc(1, sizeof *x);
  if (!x) return NULL;
  /* Without a key it lives as long as the process; without a key there is no
   * free either, so it stays on the list safely. */
  if (g_ctx_key_ok) (void)pthread_setspecific(g_ctx_key, x);
  strobe__mutex_lock(&g_ctx_lock);
  x->number = g_ctx_numbers++ & 0xfffu;
  x->next = g_ctx_head;
  x->prevp = &g_ctx_head;
  if (g_ctx_head) g_ctx_head->prevp = &x->next;
  g_ctx_head = x;
  strobe__mutex_unlock(&g_ctx_lock);
  tls_ctx_p = x;
  return x;
}

static inline int is_idle(strobe_op op) { return (op.id & IDLE_BIT) != 0; }
static inline idle_rec *rec_of(strobe_op op) { return &tls_ctx.idle[op.id & 7u]; } /* an idle op of this thread */

/* The operation stages and counters attach to: none while an operation that
 * did not fit the stack is open, so its work never lands on the one below. */
static strobe_op current_op(void) {
  return tls_ctx.nops && !tls_ctx.overflow ? tls_ctx.ops[tls_ctx.nops - 1] : (strobe_op){0, NULL};
}

/* Returns 0 when the stack is full (or already overflowed): the operation is
 * still timed and published, flagged nesting_overflow, with no stages or
 * counters (docs/sessions.md "Per-thread bounds"). */
static int crash_op(const char **kind, uint64_t *frame_id, const char **stage); /* >>crash */

static int push_op(strobe_op op, uint32_t anchor) {
  /* Installed once, by whichever thread gets here first; every thread stores the same pointer (atomic: TSan saw
   * the plain check and store race between two threads' first operations). A crash record asks it. */
  if (!__atomic_load_n(&strobe__crash_op, __ATOMIC_RELAXED)) __atomic_store_n(&strobe__crash_op, crash_op, __ATOMIC_RELAXED);
  if (!own_context()) return 0; /* the empty context is never written */
  if (tls_ctx.nops == MAX_OP_NEST || tls_ctx.overflow) {
    tls_ctx.overflow++;
    tls_ctx.overflow_op = op;
    return 0;
  }
  tls_ctx.anchor[tls_ctx.nops] = anchor;
  tls_ctx.ops[tls_ctx.nops++] = op;
  return 1;
}

static int same_op(strobe_op a, strobe_op b) { return a.id == b.id && a.collector == b.collector; }

/* Where op is on this thread's operation stack, or -1. */
static int op_position(strobe_op op) {
  for (uint32_t i = tls_ctx.nops; i-- > 0;)
    if (same_op(tls_ctx.ops[i], op)) return (int)i;
  return -1;
}

static int on_this_thread(strobe_op op) { return op_position(op) >= 0; }

/* Removes op from this thread's context wherever it is (normally the top). */
static void pop_op(strobe_op op) {
  int i = op_position(op);
  if (i < 0) return;
  uint32_t after = tls_ctx.nops - (uint32_t)i - 1;
  if (after) { /* the top one (the usual case) moves nothing: no call */
    memmove(&tls_ctx.ops[i], &tls_ctx.ops[i + 1], after * sizeof op);
    memmove(&tls_ctx.anchor[i], &tls_ctx.anchor[i + 1], after * sizeof tls_ctx.anchor[0]);
  }
  tls_ctx.nops--;
}

/* The open stage with this token, or -1. */
static int frame_of_token(uint32_t token) {
  for (uint32_t i = 0; i < tls_ctx.nstages; i++)
    if (tls_ctx.stages[i].token == token) return (int)i;
  return -1;
}

/* The innermost open stage of op on this thread (its phase), or -1. */
static int innermost_frame(strobe_op op) {
  for (uint32_t i = tls_ctx.nstages; i-- > 0;)
    if (same_op(tls_ctx.stages[i].op, op)) return (int)i;
  return -1;
}

static void remove_frame(uint32_t i) {
  if (i + 1 < tls_ctx.nstages) /* the innermost one (the usual case) moves nothing */
    memmove(&tls_ctx.stages[i], &tls_ctx.stages[i + 1], (tls_ctx.nstages - i - 1) * sizeof tls_ctx.stages[0]);
  tls_ctx.nstages--;
}

/* The slot of an operation the calling thread owns: it stays allocated until
 * the owner ends it (abandonment only flags it), so no lock is needed. */
static strobe__live_op *own_slot(strobe_op op) {
  return &op.collector->ops[strobe__handle_slot(op.id) % STROBE_MAX_LIVE_OPS];
}

/* The live slot of an operation handle; the generation must still match. Lock held. */
static strobe__live_op *live_op(strobe_op op) {
  uint32_t slot = strobe__handle_slot(op.id);
  if (!op.collector || op.id == 0 || slot >= STROBE_MAX_LIVE_OPS) return NULL;
  STROBE_ASSERT(strobe__mutex_held(&op.collector->lock));
  strobe__live_op *l = &op.collector->ops[slot];
  return l->used && l->gen == strobe__handle_gen(op.id) ? l : NULL;
}

/* A run that is never aggregated (still open when its operation ended, or
 * cut by the table bound) holds time its children's entries say is "already
 * included": flag them instead (docs/sessions.md §Stages nest at run time). */
static void flag_children(strobe__live_op *l, uint32_t mask) {
  for (uint32_t i = 0; mask && i < l->nstages; i++)
    if (mask & (1u << i)) l->stages[i].parent_incomplete = 1;
}

/* >>idle: calls made while nothing listens (collect.h >>op-gate; docs/sessions.md
 * §Cost when nothing listens). A stage begun then outside any operation has
 * nothing to publish or record: its handle is idle and ends for nothing.
 * Inside an operation a stage still publishes its phase, which a session
 * started later reports (an unfinished frame's phase), so only the work
 * nobody can use is skipped. */
#define IDLE_STAGE 2u /* strobe_stage.state of a stage begun while nothing listened, outside any operation */

static inline int nothing_listens(void) { return __atomic_load_n(&strobe__op_gate, __ATOMIC_RELAXED) == 0; }

/* Begins an operation while nothing listens, into a record of the thread's
 * own (>>idle-records): checks its window and counts its pass with one
 * compare-and-swap on the window's frames_key, takes its id with one atomic
 * add, no lock. Returns 0 when it cannot (no record free, the stack full, an
 * argument or window to refuse, the collector closed): the locked way then
 * does it, or refuses it, as before. */
static inline __attribute__((always_inline)) int idle_begin(strobe_collector *c, strobe_window w,
                                                            strobe_op_kind kind, int app_frame, uint64_t frame_id,
                                                            uint32_t anchor, int *status, strobe_op *out) {
  op_context *x = tls_ctx_p;
  uint32_t room = ~x->idle_used & 0xffu;
  uint32_t ws = strobe__handle_slot(w.id);
  if (!STROBE__PROFILING || !room || x->nops >= MAX_OP_NEST || x->overflow || !c || kind < STROBE_OP_PASS ||
      (int)kind >= STROBE_OP_KIND_LIMIT || ws >= STROBE_MAX_WINDOWS)
    return 0;
  uint64_t *fkp = &c->windows[ws].frames_key;
  uint64_t fk = __atomic_load_n(fkp, __ATOMIC_RELAXED);
  do {
    if (fk >> STROBE__FK_SHIFT != strobe__handle_gen(w.id) || !(fk >> STROBE__FK_SHIFT)) return 0; /* closed or another window's */
    if (kind != STROBE_OP_PASS) break;
  } while (!__atomic_compare_exchange_n(fkp, &fk, fk + 1, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  if (kind == STROBE_OP_PASS && !app_frame) frame_id = (fk & STROBE__FK_PASSES) + 1;
  else if (kind != STROBE_OP_PASS) frame_id = 0;
  uint32_t i = (uint32_t)__builtin_ctz(room);
  idle_rec *r = &x->idle[i];
  uint32_t v = (r->ver | 3u) + 1u; /* the next count, neither writing nor live */
  uint32_t id = IDLE_BIT | x->number << 18 | (++x->idle_gen & 0x7fffu) << 3 | i;
  __atomic_store_n(&r->ver, v | 1u, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  __atomic_store_n(&r->id, id, __ATOMIC_RELAXED);
  __atomic_store_n(&r->window, w.id, __ATOMIC_RELAXED);
  __atomic_store_n(&r->kind, (uint32_t)kind, __ATOMIC_RELAXED);
  __atomic_store_n(&r->collector, c, __ATOMIC_RELAXED);
  __atomic_store_n(&r->uid, c->uid, __ATOMIC_RELAXED);
  __atomic_store_n(&r->seq, __atomic_fetch_add(&c->next_seq, 1, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
  __atomic_store_n(&r->frame_id, frame_id, __ATOMIC_RELAXED);
  __atomic_store_n(&r->start, strobe__now(), __ATOMIC_RELAXED);
  __atomic_store_n(&r->phase, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&r->ver, v | IDLE_LIVE, __ATOMIC_RELEASE);
  r->app_frame = (uint8_t)(app_frame != 0);
  r->marked_idle = 0;
  r->population[0] = 0;
  x->idle_used |= 1u << i;
  x->anchor[x->nops] = anchor;
  x->ops[x->nops++] = (strobe_op){id, c};
  if (status) *status = 0;
  *out = (strobe_op){id, c};
  return 1;
}

/* Frees the record of an idle operation of this thread (it left the stack). */
static void idle_release(strobe_op op) {
  idle_rec *r = rec_of(op);
  __atomic_store_n(&r->ver, r->ver & ~IDLE_LIVE, __ATOMIC_RELEASE);
  tls_ctx.idle_used &= ~(1u << (op.id & 7u));
}

/* A consistent copy of another thread's record (g_ctx_lock held), or 0 when
 * it holds no operation of c or changed while read. */
typedef struct idle_view {
  uint32_t window, kind;
  uint64_t seq, frame_id, start, phase;
} idle_view;

static int idle_read(const idle_rec *r, const strobe_collector *c, idle_view *v) {
  uint32_t v1 = __atomic_load_n(&r->ver, __ATOMIC_ACQUIRE);
  if ((v1 & 3u) != IDLE_LIVE) return 0;
  int mine = __atomic_load_n(&r->collector, __ATOMIC_RELAXED) == c && __atomic_load_n(&r->uid, __ATOMIC_RELAXED) == c->uid;
  v->window = __atomic_load_n(&r->window, __ATOMIC_RELAXED);
  v->kind = __atomic_load_n(&r->kind, __ATOMIC_RELAXED);
  v->seq = __atomic_load_n(&r->seq, __ATOMIC_RELAXED);
  v->frame_id = __atomic_load_n(&r->frame_id, __ATOMIC_RELAXED);
  v->start = __atomic_load_n(&r->start, __ATOMIC_RELAXED);
  v->phase = __atomic_load_n(&r->phase, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  return mine && __atomic_load_n(&r->ver, __ATOMIC_RELAXED) == v1;
}

/* Calls fn for every idle operation of c on any thread (the caller holds c's lock; the order is c->lock, then
 * g_ctx_lock). A record the owner rewrites meanwhile is skipped: that operation ended or began during the call. */
void strobe__idle_ops_visit(strobe_collector *c, void (*fn)(void *arg, const strobe__idle_op *op), void *arg) {
  STROBE_ASSERT(strobe__mutex_held(&c->lock));
  strobe__mutex_lock(&g_ctx_lock);
  for (const op_context *x = g_ctx_head; x; x = x->next)
    for (int i = 0; i < MAX_OP_NEST; i++) {
      idle_view v;
      if (!idle_read(&x->idle[i], c, &v)) continue;
      int ws = strobe__window_slot_of(c, (strobe_window){v.window});
      if (ws < 0) continue; /* abandoned: its window (or the collector) closed under it */
      strobe__idle_op op = {(uint8_t)v.kind, (uint32_t)ws, v.seq, v.frame_id, v.start, v.phase};
      fn(arg, &op);
    }
  strobe__mutex_unlock(&g_ctx_lock);
}

/* >>capture: operation events for the rings (probe/probe.h >>operation events),
 * written only while an event consumer (capture, flight recorder, live
 * stream) is active, from these out-of-line paths: once per operation, take
 * and resume, never per scope. */
static uint32_t op_flags(const strobe__live_op *l) {
  return l->kind | (l->app_frame ? STROBE__OPF_APP_FRAME : 0u) | (l->devtools ? STROBE__OPF_DEVTOOLS : 0u);
}

static void emit_begin(const strobe_collector *c, const strobe__live_op *l) {
  uint64_t w[3] = {l->seq, l->frame_id, 0};
  uint32_t d[3] = {c->number, l->window_label, op_flags(l)};
  strobe__emit_op_event(l->start, STROBE__OPEV_BEGIN, w, d, 3);
}

static void emit_move(strobe_op op, uint32_t sub, uint64_t now) {
  const strobe__live_op *l = own_slot(op);
  uint64_t w[1] = {l->seq};
  uint32_t d[1] = {op.collector->number};
  strobe__emit_op_event(now, sub, w, d, 1);
}

/* Hand-offs between processes (docs/capture-format.md, OPS block): what a
 * merge joins the two sides of an operation by. */
static void emit_remote_out(strobe_op op, const char *peer, uint64_t now) {
  const strobe__live_op *l = own_slot(op);
  const strobe_collector *c = op.collector;
  uint64_t w[3] = {l->seq, c->uid, c->pid};
  uint32_t d[3] = {c->number, strobe__label_id(peer), strobe__label_id(c->process)};
  strobe__emit_op_event(now, STROBE__OPEV_REMOTE_OUT, w, d, 3);
}

static void emit_remote_in(const strobe_collector *c, const strobe__live_op *l) {
  uint64_t w[4] = {l->seq, l->from.collector, l->from.op, l->from.taken};
  uint32_t d[4] = {c->number, strobe__label_id(l->from.process), l->from.pid, strobe__label_id(c->process)};
  strobe__emit_op_event(l->from.resumed, STROBE__OPEV_REMOTE_IN, w, d, 4);
}

/* The whole completed operation in one event, so a capture that holds its
 * END and not its BEGIN (a flight-recorder dump, a recording started in the
 * middle) still has all of it. */
static void emit_end(const strobe_collector *c, strobe__live_op *l, uint64_t end, int committed) {
  uint64_t w[STROBE__OPEV_MAX_SLOTS];
  uint32_t d[STROBE__OPEV_MAX_SLOTS];
  int kept = l->detailed || l->captured;
  uint32_t ns = kept ? l->nstages : 0, nc = kept ? l->ncounters : 0, n = 0;
  if (!l->window_label) l->window_label = strobe__label_id(l->window->text);
  uint32_t flags = op_flags(l) | (committed ? STROBE__OPF_COMMITTED : 0u) | (l->handed_off ? STROBE__OPF_HANDED_OFF : 0u) |
                   (kept ? STROBE__OPF_DETAIL : 0u) | (l->idle ? STROBE__OPF_IDLE : 0u);
  w[n] = l->seq, d[n++] = c->number;
  w[n] = l->frame_id, d[n++] = l->window_label;
  /* Its population (transition label) beside the flags: label ids are below 4096 (probe.h >>operation events). */
  uint32_t population = l->population[0] ? strobe__label_id(l->population) : 0;
  w[n] = l->start, d[n++] = flags | population << 16;
  w[n] = (uint64_t)l->stages_dropped << 32 | l->counters_dropped, d[n++] = ns | nc << 16;
  for (uint32_t i = 0; i < ns; i++) {
    const strobe__stage_agg *a = &l->stages[i];
    w[n] = a->total, d[n++] = a->site;
    w[n] = a->min, d[n++] = a->count;
    w[n] = a->max, d[n++] = a->parent | (a->remote ? STROBE__OPEV_STAGE_REMOTE : 0u); /* its run-time parent */
  }
  for (uint32_t i = 0; i < nc; i++) {
    memcpy(&w[n], &l->counters[i].value, sizeof w[n]);
    /* Both labels and the unit in one word: label ids are below 4096 (probe.h >>operation events). */
    uint32_t kind = l->counters[i].kind[0] ? strobe__label_id(l->counters[i].kind) : 0;
    d[n++] = strobe__label_id(l->counters[i].name) | l->counters[i].unit << 12 | kind << 16;
  }
  strobe__emit_op_event(end, STROBE__OPEV_END, w, d, n);
}

/* The END of an idle operation (end_idle): emit_end's first four slots, no detail. */
static void emit_end_idle(const strobe_collector *c, const idle_rec *r, uint32_t window_label, int devtools,
                          uint64_t end, int committed) {
  uint32_t flags = r->kind | (r->app_frame ? STROBE__OPF_APP_FRAME : 0u) | (devtools ? STROBE__OPF_DEVTOOLS : 0u) |
                   (committed ? STROBE__OPF_COMMITTED : 0u);
  uint32_t population = r->population[0] ? strobe__label_id(r->population) : 0;
  uint64_t w[4] = {r->seq, r->frame_id, r->start, 0};
  uint32_t d[4] = {c->number, window_label, flags | population << 16, 0};
  strobe__emit_op_event(end, STROBE__OPEV_END, w, d, 4);
}

/* >>begin-end */
/* Fills a free slot for an operation on window slot ws (lock held): all but
 * its id, detail and capture flags, which the caller sets. */
static void init_slot(strobe_collector *c, strobe__live_op *l, int ws, strobe_op_kind kind, int app_frame,
                      uint64_t frame_id, uint64_t start) {
  STROBE_ASSERT(strobe__mutex_held(&c->lock));
  strobe__window_slot *win = &c->windows[ws];
  l->gen = (l->gen + 1) & 0x7fffffu; /* handles stay below IDLE_BIT */
  l->used = 1;
  l->abandoned = 0;
  l->kind = (uint8_t)kind;
  l->handed_off = 0;
  l->devtools = (win->flags & STROBE_WINDOW_DEVTOOLS) != 0;
  l->window_slot = (uint32_t)ws;
  l->window = strobe__name_ref(win->name);
  l->app_frame = (uint8_t)(app_frame != 0);
  l->frame_id = frame_id;
  l->start = start;
  __atomic_store_n(&l->phase, 0, __ATOMIC_RELAXED);
  l->nstages = l->ncounters = l->stages_dropped = l->counters_dropped = 0;
  l->nruns = l->runs_dropped = 0;
  l->idle = 0;
  l->alias = 0;
  l->parked_by = NULL;
  l->nparked = 0;
  l->nunavailable = 0;
  l->population[0] = 0;
  l->peer[0] = 0;
  l->remote = 0;
}

/* tok: an operation resumed from another process (>>remote), whose start is
 * the origin's (start, in local ticks); NULL for one that begins here. */
static strobe_op begin_op(strobe_collector *c, strobe_window w, strobe_op_kind kind, int app_frame, uint64_t frame_id,
                          uint32_t anchor, const strobe__token *tok, uint64_t start, int *status) {
  strobe_op op = {0, c};
  int rc = 0;
  int captured = strobe__is_active();
  if (!STROBE__PROFILING) {
    rc = STROBE_EFEATURE_DISABLED;
    goto out;
  }
  if (!c || kind < STROBE_OP_PASS || (int)kind >= STROBE_OP_KIND_LIMIT) {
    rc = STROBE_EINVAL;
    goto out;
  }
  uint64_t now = strobe__now();
  if (!tok) start = now;
  strobe__mutex_lock(&c->lock);
  int ws = c->closed ? -1 : strobe__window_slot_of(c, w);
  int slot = -1;
  for (int i = 0; i < STROBE_MAX_LIVE_OPS && slot < 0; i++)
    if (!c->ops[i].used) slot = i;
  if (c->closed)
    rc = STROBE_ECLOSED;
  else if (ws < 0)
    rc = STROBE_EWINDOW;
  else if (slot < 0) {
    rc = STROBE_ELIMIT;
    if (tok) c->remote.refused_limit++;
  } else if (tok && (rc = strobe__remote_admit(c, tok)) != 0) {
    /* refused and counted by strobe__remote_admit */
  } else {
    strobe__live_op *l = &c->ops[slot];
    strobe__window_slot *win = &c->windows[ws];
    /* A resumed pass was begun, and counted, where it came from. */
    uint64_t passes = __atomic_load_n(&win->frames_key, __ATOMIC_RELAXED) & STROBE__FK_PASSES;
    if (kind == STROBE_OP_PASS && !tok) passes = __atomic_add_fetch(&win->frames_key, 1, __ATOMIC_RELAXED) & STROBE__FK_PASSES;
    /* The application's own frame counter when it gives one (GDK's), so
     * every consumer names a frame as the toolkit does. */
    init_slot(c, l, ws, kind, app_frame, kind != STROBE_OP_PASS ? 0 : app_frame ? frame_id : passes, start);
    /* Some active session can admit it (its kind, and a devtools window's
     * work only when a session includes devtools): only then is detail worth
     * capturing. */
    l->detailed = (uint8_t)(c->nactive && strobe__admissible(c, (uint8_t)kind, l->devtools, start));
    l->captured = (uint8_t)captured;
    if (captured && !win->label) win->label = strobe__label_id(win->name->text);
    l->window_label = captured ? win->label : 0;
    l->seq = __atomic_fetch_add(&c->next_seq, 1, __ATOMIC_RELAXED); /* idle begins take theirs without the lock */
    l->remote = tok != NULL;
    if (tok) {
      c->remote.resumed++;
      l->handed_off = 1;
      l->from = (strobe__remote_from){"", "", tok->pid, tok->collector, tok->op, 0, now};
      memcpy(l->from.process, tok->process, sizeof l->from.process);
      memcpy(l->from.peer, tok->peer, sizeof l->from.peer);
    }
    op.id = strobe__handle((uint32_t)slot, l->gen);
  }
  strobe__mutex_unlock(&c->lock);
  if (op.id) {
    own_slot(op)->nesting_overflow = (uint8_t)!push_op(op, anchor);
    if (captured && !tok) emit_begin(c, own_slot(op));
  }
out:
  if (status) *status = rc;
  return op;
}

strobe_op strobe_op_begin(strobe_collector *c, strobe_window w, strobe_op_kind kind, int *status) {
  strobe_op op;
  if (STROBE__LIKELY(nothing_listens()) && idle_begin(c, w, kind, 0, 0, 0, status, &op)) return op;
  return begin_op(c, w, kind, 0, 0, 0, NULL, 0, status);
}

strobe_op strobe_op_begin_frame(strobe_collector *c, strobe_window w, uint64_t frame_id, int *status) {
  strobe_op op;
  if (STROBE__LIKELY(nothing_listens()) && idle_begin(c, w, STROBE_OP_PASS, 1, frame_id, 0, status, &op)) return op;
  return begin_op(c, w, STROBE_OP_PASS, 1, frame_id, 0, NULL, 0, status);
}

strobe_op strobe_op_begin_in_phase(strobe_collector *c, strobe_window w, strobe_op_kind kind, int *status) {
  /* The phase it is dispatched in: the innermost open stage of the thread's current operation. */
  strobe_op outer = current_op();
  int f = outer.id && tls_ctx.nstages ? innermost_frame(outer) : -1;
  uint32_t anchor = f >= 0 ? tls_ctx.stages[f].token : 0;
  strobe_op op;
  if (STROBE__LIKELY(nothing_listens()) && idle_begin(c, w, kind, 0, 0, anchor, status, &op)) return op;
  return begin_op(c, w, kind, 0, 0, anchor, NULL, 0, status);
}

/* Whether the operation measured a stage (by site name) or counter of this name. */
static int measured(const strobe__live_op *l, const strobe__unavailable *u) {
  if (u->what == STROBE_COVERAGE_COUNTER) {
    for (uint32_t i = 0; i < l->ncounters; i++)
      if (!strcmp(l->counters[i].name, u->name)) return 1;
    return 0;
  }
  for (uint32_t i = 0; i < l->nstages; i++) {
    const strobe_site *site = strobe__site_get(l->stages[i].site);
    if (site && !strcmp(site->name, u->name)) return 1;
  }
  return 0;
}

/* The payload, in one allocation: stages, counters, what was declared
 * unavailable (unless measured anyway) and room for every gauge, which
 * end_op fills under the lock. */
static strobe__sample *make_sample(const strobe__live_op *l, uint64_t end, int committed, int implicit) {
  uint32_t nunavailable = 0;
  for (uint32_t i = 0; i < l->nunavailable; i++) nunavailable += !measured(l, &l->unavailable[i]);
  size_t size = sizeof(strobe__sample) + STROBE_MAX_GAUGES * sizeof(strobe__gauge_sample) +
                l->nstages * sizeof(strobe__stage_agg) + l->nruns * sizeof(strobe__stage_run) +
                l->ncounters * sizeof(strobe__counter_agg) +
                nunavailable * sizeof(strobe__unavailable);
  strobe__sample *s = malloc(size);
  if (!s) return NULL;
  memset(s, 0, sizeof *s);
  s->kind = l->kind;
  s->committed = (uint8_t)(committed != 0);
  s->handed_off = l->handed_off;
  s->ended_implicitly = (uint8_t)(implicit != 0);
  s->nesting_overflow = l->nesting_overflow;
  s->devtools = l->devtools;
  s->seq = l->seq;
  s->frame_id = l->frame_id;
  s->start = l->start;
  s->end = end;
  s->nstages = l->nstages;
  s->stages_dropped = l->stages_dropped;
  s->counters_dropped = l->counters_dropped;
  s->ncounters = l->ncounters;
  s->gauges = (strobe__gauge_sample *)(s + 1);
  s->stages = (strobe__stage_agg *)(s->gauges + STROBE_MAX_GAUGES);
  s->runs = (strobe__stage_run *)(s->stages + l->nstages);
  s->nruns = l->nruns;
  s->runs_dropped = l->runs_dropped;
  memcpy(s->runs, l->runs, l->nruns * sizeof *s->runs);
  s->counters = (strobe__counter_agg *)(s->runs + l->nruns);
  s->unavailable = (strobe__unavailable *)(s->counters + l->ncounters);
  memcpy(s->stages, l->stages, l->nstages * sizeof *s->stages);
  memcpy(s->counters, l->counters, l->ncounters * sizeof *s->counters);
  for (uint32_t i = 0; i < l->nunavailable; i++)
    if (!measured(l, &l->unavailable[i])) s->unavailable[s->nunavailable++] = l->unavailable[i];
  memcpy(s->population, l->population, sizeof s->population);
  memcpy(s->peer, l->peer, sizeof s->peer);
  s->remote = l->remote;
  s->from = l->from;
  return s;
}

/* Gauges sampled while the operation ran, from its start to its end: a
 * memory spike and a slow frame are then the same sample (lock held). */
static void attach_gauges(const strobe_collector *c, strobe__sample *s) {
  STROBE_ASSERT(strobe__mutex_held(&c->lock));
  for (uint32_t g = 0; g < c->ngauges && s->ngauges < STROBE_MAX_GAUGES; g++) {
    const strobe__gauge *gauge = &c->gauges[g];
    if (gauge->sampled && gauge->sampled >= s->start && gauge->sampled <= s->end)
      s->gauges[s->ngauges++] = (strobe__gauge_sample){g, gauge->value, gauge->sampled};
  }
}

void strobe__sample_unref(strobe__sample *s) {
  if (s && __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) == 0) {
    strobe__name_unref(s->window);
    free(s);
  }
}

/* The live slot an idle operation moved into when it was taken, parked or
 * handed off (materialize), found by the id it had; {0} when none: it ended. */
static strobe_op moved_idle(strobe_op op) {
  strobe_collector *c = op.collector;
  strobe_op out = {0, NULL};
  strobe__mutex_lock(&c->lock);
  for (uint32_t i = 0; i < STROBE_MAX_LIVE_OPS && !out.id; i++)
    if (c->ops[i].used && c->ops[i].alias == op.id) out = (strobe_op){strobe__handle(i, c->ops[i].gen), c};
  strobe__mutex_unlock(&c->lock);
  return out;
}

/* Ends an idle operation of this thread: its stages still open here are
 * dropped with it. If something listens now, it is accounted as one that
 * began before every session (a boundary exclusion, never a sample) and a
 * capture gets its END without detail (docs/sessions.md §Cost when nothing
 * listens). Its window closed under it: abandoned, counted at the close. */
static void end_idle(strobe_op op, int committed, uint64_t now, int interleaved) {
  for (uint32_t i = tls_ctx.nstages; i-- > 0;)
    if (same_op(tls_ctx.stages[i].op, op)) remove_frame(i);
  pop_op(op);
  idle_rec *r = rec_of(op);
  idle_rec copy = *r;
  idle_release(op);
  if (STROBE__LIKELY(nothing_listens())) return;
  strobe_collector *c = op.collector;
  uint32_t window_label = 0;
  int devtools = 0;
  strobe__mutex_lock(&c->lock);
  int ws = c->closed ? -1 : strobe__window_slot_of(c, (strobe_window){copy.window});
  if (ws >= 0) {
    strobe__window_slot *win = &c->windows[ws];
    devtools = (win->flags & STROBE_WINDOW_DEVTOOLS) != 0;
    uint8_t kind = (uint8_t)copy.kind;
    if (interleaved) strobe__count_interleaved(c, kind, devtools);
    /* Start 0: it began before every active session, which none admits. */
    if (c->nactive && copy.marked_idle)
      strobe__publish_idle(c, kind, devtools, 0, now);
    else if (c->nactive)
      strobe__publish_unbuilt(c, kind, devtools, 0, now, win->name, committed);
    if (strobe__is_active()) {
      if (!win->label) win->label = strobe__label_id(win->name->text);
      window_label = win->label;
    }
  }
  strobe__mutex_unlock(&c->lock);
  if (window_label) emit_end_idle(c, &copy, window_label, devtools, now, committed);
}

/* Ends op at `now`. On the calling thread, operations above it on the stack
 * began inside it and are still open: one begun in the phase of one of its
 * stages ends with it (implicitly, at the same time); any other is left
 * running and the end is counted as interleaving (docs/sessions.md §Input
 * inside a pass). Its stages still open here are unfinished: dropped, never
 * a fabricated duration. */
static void end_op(strobe_op op, int committed, uint64_t now, int implicit) {
  if (!op.id || !op.collector) return;
  if (is_idle(op) && op_position(op) < 0 && !(op = moved_idle(op)).id) return; /* ended already */
  strobe_collector *c = op.collector;
  int pos = op_position(op);
  if (pos < 0) {
    /* Not on this thread's stack: ended already (its slot may be another
     * operation's now), taken and not resumed, or past the nesting bound.
     * Check its generation before reading the slot. */
    strobe__mutex_lock(&c->lock);
    int live = live_op(op) != NULL;
    strobe__mutex_unlock(&c->lock);
    if (!live) return;
    if (own_slot(op)->nesting_overflow && tls_ctx.overflow) tls_ctx.overflow--;
    if (same_op(op, tls_ctx.overflow_op)) tls_ctx.overflow_op = (strobe_op){0, NULL};
  }
  int interleaved = 0;
  for (int k = (int)tls_ctx.nops - 1; pos >= 0 && k > pos; k--) {
    int f = tls_ctx.anchor[k] ? frame_of_token(tls_ctx.anchor[k]) : -1;
    if (f >= 0 && same_op(tls_ctx.stages[f].op, op))
      end_op(tls_ctx.ops[k], 1, now, 1); /* removes entry k only: lower ones keep their places */
    else
      interleaved = 1;
    pos = op_position(op);
  }
  if (is_idle(op)) {
    end_idle(op, committed, now, interleaved);
    return;
  }
  strobe__live_op *l = own_slot(op);
  for (uint32_t i = 0; i < l->nparked; i++) flag_children(l, l->parked[i].child_aggs); /* ended while parked */
  l->nparked = 0;
  l->parked_by = NULL;
  for (uint32_t i = tls_ctx.nstages; i-- > 0;)
    if (same_op(tls_ctx.stages[i].op, op)) {
      flag_children(l, tls_ctx.stages[i].child_aggs); /* still open: dropped, so its children's time is in no stage */
      remove_frame(i);
    }
  pop_op(op);
  strobe__sample *s = NULL;
  if (strobe__is_active()) emit_end(c, l, now, committed);
  /* Stage and counter tables belong to the owning thread until now, so the
   * payload is built outside the lock, and only for operations a session
   * could admit (one was active when it began, and one still is). An idle
   * operation is never a sample: it needs none. */
  if (l->detailed && !l->idle && __atomic_load_n(&c->nactive, __ATOMIC_RELAXED) > 0)
    s = make_sample(l, now, committed, implicit);

  strobe__mutex_lock(&c->lock);
  if (live_op(op)) {
    if (interleaved && !l->abandoned) strobe__count_interleaved(c, l->kind, l->devtools);
    if (l->idle) {
      if (!l->abandoned) strobe__publish_idle(c, l->kind, l->devtools, l->start, now);
    } else if (s) {
      s->window = strobe__name_ref(l->window);
      attach_gauges(c, s);
      if (!l->abandoned && strobe__publish_sample(c, s) > 0) s = NULL;
    } else if (!l->abandoned && c->nactive) { /* no payload: sessions still count why they did not keep it */
      strobe__op_facts k = {1, committed, l->remote, l->peer[0] != 0, 0}; /* the frame model's rule */
      strobe__publish_unbuilt(c, l->kind, l->devtools, l->start, now, l->window, strobe__pass_counts(strobe__op_state(&k), 0));
    }
    strobe__name_unref(l->window);
    l->window = NULL;
    l->used = 0;
  }
  strobe__mutex_unlock(&c->lock);
  if (s) { /* nobody admitted it */
    s->refs = 1;
    strobe__sample_unref(s);
  }
}

void strobe_op_end(strobe_op op, int committed) {
  op_context *x = tls_ctx_p;
  /* An idle operation on top of its thread's stack, no stage of it open and
   * still nothing listening: only its record to free (>>idle-records). */
  if (STROBE__LIKELY(is_idle(op)) && x->nops && x->ops[x->nops - 1].id == op.id &&
      x->ops[x->nops - 1].collector == op.collector && (!x->nstages || x->stages[x->nstages - 1].op.id != op.id) &&
      STROBE__LIKELY(nothing_listens())) {
    x->nops--;
    idle_release(op);
    return;
  }
  end_op(op, committed, strobe__now(), 0); /* the time is taken before the lock: the wait is not the operation's */
}

/* >>handoff */
/* An idle operation of this thread that leaves the thread's own keeping
 * (taken, parked, handed to another process) moves into the collector's
 * table first, with its start, id, frame id and phase, and never any
 * detail: it is still one that began before every session. The stack and
 * its stage frames then name the slot; its idle handle still finds it
 * (moved_idle). Returns the slot's handle, or {0} when the table is full or
 * its window closed: it is then dropped, as an abandoned one. */
static strobe_op materialize(strobe_op op) {
  int pos = op_position(op);
  if (pos < 0) return (strobe_op){0, NULL};
  idle_rec *r = rec_of(op);
  strobe_collector *c = op.collector;
  strobe_op live = {0, c};
  strobe__mutex_lock(&c->lock);
  int ws = c->closed ? -1 : strobe__window_slot_of(c, (strobe_window){r->window});
  int slot = -1;
  for (int i = 0; ws >= 0 && i < STROBE_MAX_LIVE_OPS && slot < 0; i++)
    if (!c->ops[i].used) slot = i;
  if (slot >= 0) {
    strobe__live_op *l = &c->ops[slot];
    init_slot(c, l, ws, (strobe_op_kind)r->kind, r->app_frame, r->frame_id, r->start);
    l->detailed = l->captured = 0;
    l->window_label = 0;
    l->seq = r->seq;
    l->idle = r->marked_idle;
    l->alias = op.id;
    memcpy(l->population, r->population, sizeof l->population);
    __atomic_store_n(&l->phase, __atomic_load_n(&r->phase, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    live.id = strobe__handle((uint32_t)slot, l->gen);
  }
  strobe__mutex_unlock(&c->lock);
  for (uint32_t i = 0; i < tls_ctx.nstages; i++)
    if (same_op(tls_ctx.stages[i].op, op)) tls_ctx.stages[i].op = live;
  if (live.id) {
    tls_ctx.ops[pos] = live;
    own_slot(live)->nesting_overflow = 0;
  } else {
    pop_op(op);
  }
  idle_release(op);
  return live.id ? live : (strobe_op){0, NULL};
}

/* A handle passed back by the caller: an idle one that moved names its slot now. */
static strobe_op passed(strobe_op op) {
  return is_idle(op) && op.collector && op_position(op) < 0 ? moved_idle(op) : op;
}

strobe_op strobe_op_take(void) {
  strobe_op op = current_op();
  if (is_idle(op)) op = materialize(op);
  if (op.id) {
    pop_op(op); /* its phase anchor stays behind: moved work ends explicitly */
    if (strobe__is_active()) emit_move(op, STROBE__OPEV_TAKE, strobe__now());
  }
  return op;
}

void strobe_op_resume(strobe_op op) {
  if (!op.id || !op.collector) return;
  op = passed(op);
  if (!op.id) return;
  strobe__mutex_lock(&op.collector->lock);
  strobe__live_op *l = live_op(op);
  if (l) l->handed_off = 1;
  strobe__mutex_unlock(&op.collector->lock);
  if (!l) return;
  own_slot(op)->nesting_overflow = (uint8_t)!push_op(op, 0);
  if (strobe__is_active()) emit_move(op, STROBE__OPEV_RESUME, strobe__now());
}

static int evict_stale(void); /* >>stages */

/* >>park: an operation set aside on its thread with its open stages, while
 * the thread runs other work (docs/sessions.md §Parked operations). */
strobe_op strobe_op_park(void) {
  strobe_op op = current_op();
  if (is_idle(op)) op = materialize(op);
  if (!op.id) return op;
  strobe__live_op *l = own_slot(op);
  l->nparked = 0;
  for (uint32_t i = 0; i < tls_ctx.nstages;) {
    if (same_op(tls_ctx.stages[i].op, op)) {
      l->parked[l->nparked++] = tls_ctx.stages[i]; /* at most MAX_STAGE_NEST: they all fit */
      remove_frame(i);
    } else {
      i++;
    }
  }
  l->parked_by = &tls_ctx;
  pop_op(op);
  return op;
}

int strobe_op_unpark(strobe_op op) {
  if (!op.id || !op.collector) return STROBE_EINVAL;
  op = passed(op);
  if (!op.id) return STROBE_ESTATE; /* ended */
  strobe__mutex_lock(&op.collector->lock);
  strobe__live_op *l = live_op(op);
  strobe__mutex_unlock(&op.collector->lock);
  if (!l || !l->parked_by) return STROBE_ESTATE;
  if (l->parked_by != (const void *)&tls_ctx) return STROBE_EINVAL;
  l->parked_by = NULL;
  for (uint32_t i = 0; i < l->nparked; i++) {
    if (tls_ctx.nstages == MAX_STAGE_NEST && !evict_stale()) {
      l->stages_dropped += l->nparked - i; /* no room: their runs are not kept, counted on the sample */
      break;
    }
    tls_ctx.stages[tls_ctx.nstages++] = l->parked[i];
  }
  l->nparked = 0;
  l->nesting_overflow = (uint8_t)!push_op(op, 0);
  return 0;
}

/* >>remote: operations handed between processes (docs/sessions.md §Across
 * processes). Times travel as CLOCK_MONOTONIC nanoseconds: on one host
 * (one boot) both processes read the same clock, so the receiver places the
 * origin's start exactly. */
static uint64_t ticks_to_mono_ns(const strobe__clock_info *ck, uint64_t ticks) {
  double d = ((double)(int64_t)(ticks - ck->epoch_ticks)) * ck->ns_per_tick;
  double r = (double)ck->epoch_mono_ns + d;
  return r <= 0 ? 0 : (uint64_t)(r + 0.5);
}

/* A duration another process measured, in our ticks (a hostile one saturates: never an overflowing conversion). */
static uint64_t ns_to_ticks(const strobe__clock_info *ck, uint64_t ns) {
  double t = (double)ns / ck->ns_per_tick + 0.5;
  return t >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)t; /* 2^64 */
}

static void copy_stage_name(char out[STROBE_MAX_LABEL + 1], uint32_t site_id) {
  const strobe_site *site = strobe__site_get(site_id);
  const char *name = site && strobe__label_valid(site->name) ? site->name : STROBE_INVALID_LABEL;
  size_t n = strlen(name);
  memcpy(out, name, n + 1);
}

int strobe_op_hand_off_remote(strobe_op op, const char *peer, void *buf, size_t cap, size_t *len) {
  if (!op.id || !op.collector || !buf || !len) return STROBE_EINVAL;
  op = is_idle(op) && op_position(op) >= 0 ? materialize(op) : passed(op);
  if (!op.id) return STROBE_EINVAL;
  strobe_collector *c = op.collector;
  if (!strobe__label_valid(peer)) {
    strobe__label_refused(c);
    return STROBE_ELABEL;
  }
  const strobe__clock_info *ck = strobe__clock(); /* calibrated once, before any lock */
  strobe__token *t = calloc(1, sizeof *t);
  if (!t) return STROBE_ENOMEM;
  strobe__mutex_lock(&c->lock);
  int live = live_op(op) != NULL;
  memcpy(t->process, c->process, sizeof t->process);
  strobe__mutex_unlock(&c->lock);
  if (!live) {
    free(t);
    return STROBE_EINVAL;
  }
  strobe__live_op *l = own_slot(op); /* ours: the caller holds it */
  if (l->remote) {
    free(t);
    return STROBE_ESTATE;
  }
  uint64_t now = strobe__now();
  t->kind = l->kind;
  t->app_frame = l->app_frame;
  t->detail = (uint8_t)(l->detailed || l->captured);
  t->pid = c->pid;
  (void)strobe__host_boot_id(t->boot); /* zeroes without one: no receiver takes it as same-host */
  t->collector = c->uid;
  t->op = l->seq;
  t->frame_id = l->frame_id;
  t->start_mono_ns = ticks_to_mono_ns(ck, l->start);
  t->taken_mono_ns = ticks_to_mono_ns(ck, now);
  if (t->taken_mono_ns < t->start_mono_ns) t->taken_mono_ns = t->start_mono_ns;
  memcpy(t->peer, peer, strlen(peer) + 1);
  /* What makes it one frame on both sides: its window's declared id (the frame
   * is (window, frame id)), and its population. */
  memcpy(t->window, l->window->text, l->window->len);
  t->window[l->window->len] = 0;
  memcpy(t->population, l->population, sizeof t->population);
  for (uint32_t i = 0; t->detail && i < l->nstages; i++) {
    const strobe__stage_agg *a = &l->stages[i];
    strobe__token_stage *ts = &t->stages[t->nstages++];
    copy_stage_name(ts->name, a->site);
    if (a->parent) copy_stage_name(ts->parent, a->parent);
    ts->parent_incomplete = (uint8_t)(a->parent_incomplete != 0);
    ts->count = a->count;
    ts->total_ns = (uint64_t)((double)a->total * ck->ns_per_tick + 0.5);
    ts->min_ns = (uint64_t)((double)a->min * ck->ns_per_tick + 0.5);
    ts->max_ns = (uint64_t)((double)a->max * ck->ns_per_tick + 0.5);
    if (ts->min_ns > ts->max_ns) ts->min_ns = ts->max_ns;
    if (ts->max_ns > ts->total_ns) ts->max_ns = ts->total_ns;
  }
  size_t need = strobe__token_encode(t, buf, cap);
  free(t);
  *len = need;
  if (need > cap) return STROBE_ELIMIT;
  /* Done here: a sample that ends at the hand-off, naming the peer. */
  memcpy(l->peer, peer, strlen(peer) + 1);
  if (strobe__is_active()) emit_remote_out(op, peer, now);
  strobe__mutex_lock(&c->lock);
  c->remote.handed_off++;
  strobe__mutex_unlock(&c->lock);
  end_op(op, 0, now, 0);
  return 0;
}

/* A resumed operation's window id is the origin's: it replaces the id of the
 * window it runs under here (whose slot still decides its lifetime) under
 * the lock, since reads copy it from there. Takes the reference. */
static void adopt_window(strobe_collector *c, strobe__live_op *l, strobe__name *window) {
  strobe__mutex_lock(&c->lock);
  strobe__name *old = l->window;
  l->window = window;
  l->window_label = 0; /* named again at its end (emit_end) */
  strobe__mutex_unlock(&c->lock);
  strobe__name_unref(old);
}

static void count_refusal(strobe_collector *c, int why) {
  strobe__mutex_lock(&c->lock);
  switch (why) {
    case STROBE__REFUSED_TRUNCATED: c->remote.refused_truncated++; break;
    case STROBE__REFUSED_VERSION: c->remote.refused_version++; break;
    case STROBE__REFUSED_CORRUPT: c->remote.refused_corrupt++; break;
    default: c->remote.refused_malformed++; break;
  }
  strobe__mutex_unlock(&c->lock);
}

strobe_op strobe_op_resume_remote(strobe_collector *c, strobe_window w, const void *token, size_t len, int *status) {
  strobe_op op = {0, c};
  int rc, why = 0;
  if (!STROBE__PROFILING || !c) {
    if (status) *status = !STROBE__PROFILING ? STROBE_EFEATURE_DISABLED : STROBE_EINVAL;
    return op;
  }
  strobe__token *t = malloc(sizeof *t);
  if (!t) {
    if (status) *status = STROBE_ENOMEM;
    return op;
  }
  rc = strobe__token_decode(token, len, t, &why);
  const strobe__clock_info *ck = strobe__clock(); /* calibrated once, before any lock */
  if (!rc) {
    /* Another boot's clock is not ours: nothing to place its times on. On
     * ours, a hand-off in our future is a forged or damaged token; so the
     * times converted below lie between 0 and now. */
    uint8_t boot[16];
    if (strobe__host_boot_id(boot) || memcmp(boot, t->boot, 16)) {
      rc = STROBE_EFOREIGN;
    } else if (t->taken_mono_ns > (uint64_t)((int64_t)strobe__mono_ns() + strobe__host_mono_shift_ns())) {
      why = STROBE__REFUSED_MALFORMED;
      rc = STROBE_ETOKEN;
    }
  }
  if (rc == STROBE_EFOREIGN) {
    strobe__mutex_lock(&c->lock);
    c->remote.refused_foreign++;
    strobe__mutex_unlock(&c->lock);
  } else if (rc) {
    count_refusal(c, why);
  }
  if (rc) {
    free(t);
    if (status) *status = rc;
    return op;
  }
  uint64_t start = strobe_clock_ticks_from_mono_ns(t->start_mono_ns);
  /* The frame keeps the origin's window id: one frame, (window, frame id), in both processes. */
  strobe__name *window = strobe__name_new(t->window, strlen(t->window));
  op = window ? begin_op(c, w, (strobe_op_kind)t->kind, t->kind == STROBE_OP_PASS, t->frame_id, 0, t, start, &rc)
              : (strobe_op){0, c};
  if (!window) rc = STROBE_ENOMEM;
  if (op.id) {
    strobe__live_op *l = own_slot(op);
    adopt_window(c, l, window);
    window = NULL;
    memcpy(l->population, t->population, sizeof l->population);
    l->from.taken = strobe_clock_ticks_from_mono_ns(t->taken_mono_ns);
    /* The origin's stages, attributed to it; kept like local ones, only where a session or capture can use them. */
    for (uint32_t i = 0; (l->detailed || l->captured) && i < t->nstages; i++) {
      const strobe__token_stage *ts = &t->stages[i];
      uint32_t site = strobe__remote_stage_site(ts->name);
      uint32_t parent = ts->parent[0] ? strobe__remote_stage_site(ts->parent) : 0;
      if (!site || (ts->parent[0] && !parent) || l->nstages == STROBE_MAX_STAGES) {
        l->stages_dropped++; /* no site for it: its time is not kept, counted */
        continue;
      }
      l->stages[l->nstages++] = (strobe__stage_agg){site,
                                                    parent,
                                                    ts->count,
                                                    0,
                                                    ns_to_ticks(ck, ts->total_ns),
                                                    ns_to_ticks(ck, ts->min_ns),
                                                    ns_to_ticks(ck, ts->max_ns),
                                                    ts->parent_incomplete,
                                                    1};
    }
    if (l->captured) emit_remote_in(c, l);
  }
  strobe__name_unref(window); /* not begun: refused */
  free(t);
  if (status) *status = rc;
  return op;
}

int strobe_op_detailed(void) {
  strobe_op op = current_op();
  if (!op.id || is_idle(op)) return 0; /* idle: begun while nothing listened */
  return own_slot(op)->detailed;
}

/* >>crash (probe.h): the calling thread's innermost operation and stage, read from its own context only, as a
 * signal handler may (no lock: the slot is this thread's own open operation). */
static int crash_op(const char **kind, uint64_t *frame_id, const char **stage) {
  strobe_op op = current_op();
  if (!op.id) return 0;
  if (is_idle(op)) {
    *kind = strobe_op_kind_name((strobe_op_kind)rec_of(op)->kind);
    *frame_id = rec_of(op)->frame_id;
  } else {
    *kind = strobe_op_kind_name(own_slot(op)->kind);
    *frame_id = own_slot(op)->frame_id;
  }
  *stage = "";
  for (uint32_t i = tls_ctx.nstages; i-- > 0;)
    if (same_op(tls_ctx.stages[i].op, op) && tls_ctx.stages[i].site) {
      *stage = tls_ctx.stages[i].site->name;
      break;
    }
  return 1;
}

/* A stage (or counter) met while an operation past the nesting bound is open: it attaches to none, so it is
 * counted dropped on that operation, beside its nesting_overflow (docs/sessions.md "Per-thread bounds"). Only
 * the last one begun is known; one further out, after it ended, counts nothing. */
static void dropped_past_nesting(int stage) {
  strobe_op op = tls_ctx.overflow ? tls_ctx.overflow_op : (strobe_op){0, NULL};
  if (!op.id || is_idle(op)) return; /* an idle one keeps no detail */
  strobe__live_op *l = own_slot(op); /* this thread's own open operation: its slot is live */
  if (!l->detailed && !l->captured) return;
  if (stage) l->stages_dropped++;
  else l->counters_dropped++;
}

/* A label under the rule, or the placeholder (counted); its length in *n. */
static const char *counter_label(strobe_op op, const char *label, size_t *n) {
  *n = strobe__label_len(label, STROBE__RULE_NAME);
  if (*n) return label;
  strobe__label_replaced(op.collector);
  *n = sizeof STROBE_INVALID_LABEL - 1;
  return STROBE_INVALID_LABEL;
}

/* Adds to the counter (name, kind) of the current operation; kind NULL: none.
 * Its unit is the first one an add named (docs/recording.md §Units). */
static void counter_add(const char *name, const char *kind, double delta, uint32_t unit) {
  strobe_op op = current_op();
  if (!op.id) {
    dropped_past_nesting(0);
    return;
  }
  if (is_idle(op)) return; /* begun while nothing listened: keeps no counters */
  strobe__live_op *l = own_slot(op);
  if (!l->detailed && !l->captured) return;
  if (unit >= STROBE_UNIT_LIMIT) { /* not a unit: none, counted like a replaced label */
    strobe__label_replaced(op.collector);
    unit = STROBE_UNIT_NONE;
  }
  /* The label rule: a label that breaks it is counted under the placeholder;
   * labels are copied, so the report never reads the caller's buffer. */
  size_t n, nk = 0;
  name = counter_label(op, name, &n);
  if (kind) kind = counter_label(op, kind, &nk);
  else kind = "";
  for (uint32_t i = 0; i < l->ncounters; i++) {
    if (!memcmp(l->counters[i].name, name, n + 1) && !memcmp(l->counters[i].kind, kind, nk + 1)) {
      l->counters[i].value += delta;
      if (!l->counters[i].unit) l->counters[i].unit = unit;
      return;
    }
  }
  if (l->ncounters < STROBE_MAX_OP_COUNTERS) {
    strobe__counter_agg *a = &l->counters[l->ncounters++];
    a->value = delta;
    a->unit = unit;
    memcpy(a->name, name, n + 1);
    memcpy(a->kind, kind, nk + 1);
  } else {
    l->counters_dropped++;
  }
}

void strobe_op_counter_add(const char *name, double delta) {
  if (STROBE__LIKELY(nothing_listens())) return;
  counter_add(name, NULL, delta, STROBE_UNIT_NONE);
}

void strobe_op_counter_add_kind(const char *family, const char *kind, double delta) {
  if (STROBE__LIKELY(nothing_listens())) return;
  counter_add(family, kind ? kind : "", delta, STROBE_UNIT_NONE); /* NULL breaks the rule like any bad label */
}

_Static_assert(STROBE_UNIT_LIMIT <= 16, "a counter's unit has 4 bits of its END payload word (probe.h)");

void strobe_op_counter_add_unit(const char *name, double delta, strobe_unit unit) {
  if (STROBE__LIKELY(nothing_listens())) return;
  counter_add(name, NULL, delta, (uint32_t)unit);
}

void strobe_op_counter_add_kind_unit(const char *family, const char *kind, double delta, strobe_unit unit) {
  if (STROBE__LIKELY(nothing_listens())) return;
  counter_add(family, kind ? kind : "", delta, (uint32_t)unit);
}

/* >>marks: idle, population and coverage, on the thread's current operation.
 * Like counters, they are kept only where a session or a capture could use
 * them; the label rule is checked either way, so a bad label is refused
 * whether or not anything records. */
int strobe_op_mark_idle(void) {
  strobe_op op = current_op();
  if (!op.id) return STROBE_ESTATE;
  if (is_idle(op))
    rec_of(op)->marked_idle = 1;
  else
    own_slot(op)->idle = 1;
  return 0;
}

int strobe_op_set_population(const char *label) {
  strobe_op op = current_op();
  if (!strobe__label_valid(label)) {
    strobe__label_refused(op.collector); /* counted by the rule (counts.labels_refused) */
    return STROBE_ELABEL;
  }
  if (!op.id) return STROBE_ESTATE;
  char *population = is_idle(op) ? rec_of(op)->population : own_slot(op)->population;
  memcpy(population, label, strlen(label) + 1);
  return 0;
}

int strobe_op_mark_unavailable(strobe_coverage what, const char *name) {
  if (what != STROBE_COVERAGE_STAGE && what != STROBE_COVERAGE_COUNTER) return STROBE_EINVAL;
  strobe_op op = current_op();
  if (!strobe__label_valid(name)) {
    strobe__label_refused(op.collector);
    return STROBE_ELABEL;
  }
  if (!op.id) return STROBE_ESTATE;
  if (is_idle(op)) return 0; /* never a sample: nothing to say it in */
  strobe__live_op *l = own_slot(op);
  for (uint32_t i = 0; i < l->nunavailable; i++)
    if (l->unavailable[i].what == what && !strcmp(l->unavailable[i].name, name)) return 0;
  if (l->nunavailable == STROBE_MAX_UNAVAILABLE) {
    if (what == STROBE_COVERAGE_STAGE)
      l->stages_dropped++;
    else
      l->counters_dropped++;
    return STROBE_ELIMIT;
  }
  strobe__unavailable *u = &l->unavailable[l->nunavailable++];
  u->what = (uint8_t)what;
  memcpy(u->name, name, strlen(name) + 1);
  return 0;
}

/* >>stages */
static uint32_t next_token(void) {
  if (++tls_ctx.next_token == 0) tls_ctx.next_token = 1;
  return tls_ctx.next_token;
}

/* Frames left by operations that ended or moved away from this thread while
 * their stages were open; dropped to make room. Returns 1 if room was made. */
static int evict_stale(void) {
  int freed = 0;
  for (uint32_t i = tls_ctx.nstages; i-- > 0;)
    if (!on_this_thread(tls_ctx.stages[i].op)) {
      remove_frame(i);
      freed = 1;
    }
  return freed;
}

/* The label rule for stages (docs/sessions.md §The label rule): a stage is
 * a macro, so a site whose name (or declared parent) breaks the rule is not
 * refused but aggregated as the placeholder stage and counted on every run.
 * Each site is judged once. Returns the site id to aggregate under (0: the
 * placeholder could not be registered; the stage is then not tracked). */
enum { LABEL_UNJUDGED, LABEL_OK, LABEL_BAD_NAME, LABEL_BAD_PARENT };
static uint8_t g_site_label[STROBE_MAX_SITES]; /* atomic bytes, by site id */
static strobe_site g_invalid_stage = STROBE_STAGE_SITE(STROBE_INVALID_LABEL, NULL);

static uint32_t stage_label(strobe_collector *c, const strobe_site *site, uint32_t id) {
  uint8_t state = __atomic_load_n(&g_site_label[id], __ATOMIC_RELAXED);
  if (state == LABEL_UNJUDGED) {
    state = !strobe__label_len(site->name, STROBE__RULE_NAME) ? LABEL_BAD_NAME
            : site->parent && !strobe__label_len(site->parent, STROBE__RULE_NAME) ? LABEL_BAD_PARENT
                                                                                 : LABEL_OK;
    __atomic_store_n(&g_site_label[id], state, __ATOMIC_RELAXED);
  }
  if (state == LABEL_OK) return id;
  strobe__label_replaced(c);
  if (state == LABEL_BAD_PARENT) return id; /* its declared parent is shown as the placeholder (report.h) */
  uint32_t bad = __atomic_load_n(&g_invalid_stage.id, __ATOMIC_ACQUIRE);
  if (!bad) {
    int rc = strobe_site_register(&g_invalid_stage);
    bad = rc > 0 ? (uint32_t)rc : 0;
  }
  return bad;
}

/* A stage of an idle operation (>>idle-records): its frame, for the phase it
 * publishes in the record (what a session started now reports), and no
 * aggregation, which nothing could use. */
static strobe_stage idle_stage_begin(strobe_stage h, strobe_site *site, strobe_op op) {
  if (tls_ctx.nstages == MAX_STAGE_NEST && !evict_stale()) return h;
  uint32_t id = __atomic_load_n(&site->id, __ATOMIC_ACQUIRE);
  if (!id) {
    int rc = strobe_site_register(site);
    if (rc < 0) return h;
    id = (uint32_t)rc;
  }
  uint64_t now = strobe__now();
  stage_frame *f = &tls_ctx.stages[tls_ctx.nstages++];
  *f = (stage_frame){op, site, next_token(), id, 0, 0, 0, 0, now};
  idle_rec *r = rec_of(op);
  __atomic_store_n(&r->phase, strobe__phase_pack(now - r->start, id), __ATOMIC_RELAXED);
  h.token = f->token;
  return h;
}

/* A stage begun while something listens, or inside an operation (see >>idle). */
static __attribute__((noinline)) strobe_stage stage_begin(strobe_site *site) {
  strobe_stage h = {0, 0, 0, NULL};
  if (!site || site->kind != STROBE_SITE_STAGE) return h;
  /* Held: the stage outlives this function's C frame (docs/recording.md, Unwinding). */
  h.guard = strobe__is_active() ? strobe__begin_slow(site, 0, STROBE__SP_HELD) : 0u;
  h.state = 1;
  h.owner = &tls_ctx_p; /* the thread's own variable: its address differs per thread */
  strobe_op op = current_op();
  if (!op.id) {
    dropped_past_nesting(1);
    return h;
  }
  if (is_idle(op)) return idle_stage_begin(h, site, op);
  strobe__live_op *l = own_slot(op);
  if (tls_ctx.nstages == MAX_STAGE_NEST && !evict_stale()) {
    if (l->detailed || l->captured) l->stages_dropped++; /* its timing is not kept: counted on the sample */
    return h;
  }
  uint32_t id = __atomic_load_n(&site->id, __ATOMIC_ACQUIRE);
  if (!id) {
    int rc = strobe_site_register(site);
    if (rc < 0) return h;
    id = (uint32_t)rc;
  }
  id = stage_label(op.collector, site, id);
  if (!id) return h;
  /* Its parent is whatever stage of this operation is open now, wherever the
   * code declared it; the declaration is only checked. */
  int p = innermost_frame(op);
  uint32_t violated = 0;
  if (site->parent) {
    violated = 1;
    for (int i = p; i >= 0 && violated; i--)
      if (same_op(tls_ctx.stages[i].op, op) && !strcmp(tls_ctx.stages[i].site->name, site->parent)) violated = 0;
  }
  uint64_t now = strobe__now();
  stage_frame *f = &tls_ctx.stages[tls_ctx.nstages++];
  *f = (stage_frame){op, site, next_token(), id, p >= 0 ? tls_ctx.stages[p].site_id : 0,
                     p >= 0 ? tls_ctx.stages[p].token : 0, violated, 0, now};
  /* One store publishes the phase: a session read sees it without any lock. */
  __atomic_store_n(&l->phase, strobe__phase_pack(now - l->start, id), __ATOMIC_RELEASE);
  h.token = f->token;
  return h;
}

/* The usual stage of an idle operation: the thread's current operation is
 * idle, the stage's site registered, nothing recording scopes, room on the
 * stack. Its frame and phase only (idle_stage_begin), inline. */
static inline __attribute__((always_inline)) strobe_stage stage_begin_fast(strobe_site *site) {
  op_context *x = tls_ctx_p;
  if (!x->nops) {
    if (STROBE__LIKELY(nothing_listens())) return (strobe_stage){0, 0, IDLE_STAGE, NULL};
    return stage_begin(site);
  }
  strobe_op op = x->ops[x->nops - 1];
  uint32_t id;
  if (!is_idle(op) || x->overflow || x->nstages == MAX_STAGE_NEST || !site || site->kind != STROBE_SITE_STAGE ||
      !(id = __atomic_load_n(&site->id, __ATOMIC_ACQUIRE)) || strobe__is_active())
    return stage_begin(site);
  uint64_t now = strobe__now();
  idle_rec *r = &x->idle[op.id & 7u];
  if (++x->next_token == 0) x->next_token = 1;
  stage_frame *f = &x->stages[x->nstages++];
  f->op = op;
  f->site = site;
  f->token = x->next_token;
  f->site_id = id;
  f->parent_id = f->parent_token = f->not_in_declared = f->child_aggs = 0;
  f->t0 = now;
  __atomic_store_n(&r->phase, strobe__phase_pack(now - r->start, id), __ATOMIC_RELAXED);
  return (strobe_stage){0, x->next_token, 1, &tls_ctx_p};
}

strobe_stage strobe__stage_begin(strobe_site *site) { return stage_begin_fast(site); }

strobe_stage strobe_stage_begin(strobe_site *site) { return stage_begin_fast(site); }

/* Adds one run of frame f to the operation's stage table; returns its entry, or -1 when the table is full. */
static int aggregate(strobe__live_op *l, const stage_frame *f, uint64_t d) {
  for (uint32_t i = 0; i < l->nstages; i++) {
    strobe__stage_agg *a = &l->stages[i];
    if (a->site == f->site_id && a->parent == f->parent_id) {
      a->count++;
      a->not_in_declared += f->not_in_declared;
      a->total += d;
      if (d < a->min) a->min = d;
      if (d > a->max) a->max = d;
      return (int)i;
    }
  }
  if (l->nstages == STROBE_MAX_STAGES) {
    l->stages_dropped++;
    return -1;
  }
  l->stages[l->nstages] = (strobe__stage_agg){f->site_id, f->parent_id, 1, f->not_in_declared, d, d, d, 0, 0};
  return (int)l->nstages++;
}

static void end_stage(strobe_stage *h) {
  if (h->guard) strobe__end(h->guard);
  uint32_t token = h->token;
  *h = (strobe_stage){0, 0, 0, NULL};
  int i = token ? frame_of_token(token) : -1;
  if (i < 0) return; /* not a stage of an operation, or its operation ended first */
  uint64_t now = strobe__now();
  /* The phase moves on: operations dispatched inside it end first, now. */
  for (int k = (int)tls_ctx.nops - 1; k >= 0; k--)
    if (k < (int)tls_ctx.nops && tls_ctx.anchor[k] == token) end_op(tls_ctx.ops[k], 1, now, 1);
  i = frame_of_token(token);
  if (i < 0) return;
  stage_frame f = tls_ctx.stages[i];
  remove_frame((uint32_t)i);
  /* Stages that began inside it and are still open were not wholly inside it. */
  for (uint32_t k = 0; k < tls_ctx.nstages; k++) {
    if (tls_ctx.stages[k].parent_token != token) continue;
    tls_ctx.stages[k].parent_token = f.parent_token;
    tls_ctx.stages[k].parent_id = f.parent_id;
  }
  if (!on_this_thread(f.op)) return; /* its operation moved: nothing to update */
  int inner = innermost_frame(f.op);
  if (is_idle(f.op)) {
    idle_rec *r = rec_of(f.op);
    uint64_t phase = inner < 0 ? 0 : strobe__phase_pack(tls_ctx.stages[inner].t0 - r->start, tls_ctx.stages[inner].site_id);
    __atomic_store_n(&r->phase, phase, __ATOMIC_RELAXED);
    return;
  }
  strobe__live_op *l = own_slot(f.op);
  uint64_t phase = inner < 0 ? 0
                             : strobe__phase_pack(tls_ctx.stages[inner].t0 - l->start, tls_ctx.stages[inner].site_id);
  __atomic_store_n(&l->phase, phase, __ATOMIC_RELEASE);
  if (!l->detailed && !l->captured) return;
  int entry = aggregate(l, &f, now - f.t0);
  if (entry < 0) {
    flag_children(l, f.child_aggs);
    return;
  }
  if (l->nruns < STROBE_MAX_STAGE_RUNS) /* its times, for sessions that want runs (docs/sessions.md §Stage runs) */
    l->runs[l->nruns++] = (strobe__stage_run){(uint32_t)entry, 0, f.t0, now};
  else
    l->runs_dropped++;
  int parent = f.parent_token ? frame_of_token(f.parent_token) : -1;
  if (parent >= 0) tls_ctx.stages[parent].child_aggs |= 1u << entry;
}

int strobe_stage_end(strobe_stage *h) {
  if (!h) return STROBE_EINVAL;
  if (h->state == IDLE_STAGE) { /* nothing was begun: nothing to end, wherever it is ended */
    h->state = 0;
    return 0;
  }
  if (!h->state) return STROBE_ESTATE;
  if (h->owner != (const void *)&tls_ctx_p) return STROBE_EINVAL;
  op_context *x = tls_ctx_p;
  uint32_t n = x->nstages;
  /* The innermost stage of the idle operation on top (none above it, so no
   * operation dispatched in its phase and no stage begun inside it): its
   * frame goes, and the phase is the one around it. */
  if (n && !h->guard && x->stages[n - 1].token == h->token && x->nops && !x->overflow &&
      is_idle(x->ops[x->nops - 1]) && x->stages[n - 1].op.id == x->ops[x->nops - 1].id) {
    strobe_op op = x->ops[x->nops - 1];
    idle_rec *r = &x->idle[op.id & 7u];
    const stage_frame *outer = n > 1 && x->stages[n - 2].op.id == op.id ? &x->stages[n - 2] : NULL;
    x->nstages = n - 1;
    *h = (strobe_stage){0, 0, 0, NULL};
    __atomic_store_n(&r->phase, outer ? strobe__phase_pack(outer->t0 - r->start, outer->site_id) : 0, __ATOMIC_RELAXED);
    return 0;
  }
  end_stage(h);
  return 0;
}

void strobe__stage_cleanup(strobe_stage *h) {
  if (h->state == 1) end_stage(h);
}

/* >>abandon (lock held) */
typedef struct abandon_arg {
  strobe_collector *c;
  int window_slot;                /* < 0: every window */
} abandon_arg;

static void abandon_idle(void *arg, const strobe__idle_op *op) {
  const abandon_arg *a = arg;
  if (a->window_slot >= 0 && (int)op->window_slot != a->window_slot) return;
  /* Its record is its owner's: from now on its closed window says abandoned (end_idle, the snapshot). */
  strobe__count_abandoned(a->c, op->kind, (a->c->windows[op->window_slot].flags & STROBE_WINDOW_DEVTOOLS) != 0);
}

void strobe__abandon_live(strobe_collector *c, int window_slot, int producer_closed) {
  STROBE_ASSERT(strobe__mutex_held(&c->lock));
  if (c->nactive) strobe__idle_ops_visit(c, abandon_idle, &(abandon_arg){c, window_slot});
  for (int i = 0; i < STROBE_MAX_LIVE_OPS; i++) {
    strobe__live_op *l = &c->ops[i];
    if (!l->used || l->abandoned || (window_slot >= 0 && (int)l->window_slot != window_slot)) continue;
    l->abandoned = 1;
    strobe__count_abandoned(c, l->kind, l->devtools); /* never a sample, never nothing: counted */
  }
  for (int i = 0; i < STROBE_MAX_LIVE_APP_SCOPES; i++) {
    strobe__live_app *a = &c->apps[i];
    if (!a->used || (window_slot >= 0 && (int)a->window_slot != window_slot)) continue;
    for (int k = 0; k < STROBE_MAX_SESSIONS; k++) {
      strobe__session *s = &c->sessions[k];
      if (!strobe__session_sees_app(s, a->devtools)) continue;
      if (producer_closed)
        s->app.abandoned_producer_closed++;
      else
        s->app.abandoned_window_closed++;
      if (a->start < s->start) s->app.boundary_excluded++;
    }
    strobe__name_unref(a->window);
    a->window = NULL;
    a->used = 0;
  }
}
