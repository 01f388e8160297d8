/*
 * locks.c — lock contention per lock for `strobe report` (locks.h): waits,
 * holds, and the holders waits began under.
 *
 * Owns: naming a lock by its sites' name, pairing each thread's LOCK_WAIT
 * with its next LOCK_ACQUIRED and each LOCK_ACQUIRED with its next
 * LOCK_RELEASED, the innermost scope a holder took the lock in (from the
 * thread's BEGIN and END records), and matching waits to holds by time.
 * Must never: attribute a wait to a holder whose hold did not cover the
 * wait's start, or let a bound cut a wait without counting it.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/locks.h"
#include "cli.h"
#include "format/json_writer.h"

#define MAX_HOLDERS 64u /* (thread, scope) pairs kept per lock; waits under others are counted (waits_holders_cut) */

typedef struct wait_rec {
  uint32_t lock;
  uint32_t holder; /* 1 + index into its row's holders once matched; 0: not yet */
  double start_ns, dur_ns;
} wait_rec;

typedef struct lthread {
  uint32_t depth;                    /* open scopes */
  uint32_t stack[STROBE_MAX_DEPTH];  /* their sites, outermost first */
  double *wait_since;                /* per lock: when its open wait began; < 0: none */
  double *held_since;                /* per lock: when its open hold began; < 0: none */
  uint32_t *held_scope;              /* per lock: the innermost scope when it was taken */
} lthread;

typedef struct lctx {
  locks *l;
  const strobe_capture *c;
  uint32_t *lock_of_site; /* site id -> 1 + lock index; 0: not a lock */
  uint32_t nsites;
  lthread **threads;
  uint32_t nthreads;
  wait_rec *waits;
  size_t nwaits;
  int failed;
} lctx;

static int name_locks(lctx *x) {
  x->nsites = strobe_capture_query_site_limit(x->c);
  x->lock_of_site = calloc(x->nsites ? x->nsites : 1, sizeof *x->lock_of_site);
  if (!x->lock_of_site) return -1;
  for (uint32_t id = 1; id < x->nsites; id++) {
    const strobe_capture_site *s = strobe_capture_query_site(x->c, id);
    if (!s || s->kind != STROBE_SITE_LOCK) continue;
    uint32_t k = 0;
    while (k < x->l->n && strcmp(x->l->rows[k].name, s->name)) k++;
    if (k == x->l->n) {
      lock_row *rows = realloc(x->l->rows, (k + 1) * sizeof *rows);
      if (!rows) return -1;
      x->l->rows = rows;
      memset(&rows[k], 0, sizeof rows[k]);
      rows[k].name = s->name;
      x->l->n++;
    }
    x->lock_of_site[id] = k + 1;
  }
  return 0;
}

static lthread *thread_of(lctx *x, uint32_t index) {
  lthread *t = cli_entry(&x->threads, &x->nthreads, index, sizeof *t);
  if (t && !t->wait_since) {
    uint32_t n = x->l->n;
    t->wait_since = malloc(n * sizeof *t->wait_since);
    t->held_since = malloc(n * sizeof *t->held_since);
    t->held_scope = calloc(n, sizeof *t->held_scope);
    if (!t->wait_since || !t->held_since || !t->held_scope) return NULL;
    for (uint32_t k = 0; k < n; k++) t->wait_since[k] = t->held_since[k] = -1;
  }
  return t;
}

static void reset_threads(lctx *x) {
  for (uint32_t i = 0; i < x->nthreads; i++) {
    lthread *t = x->threads[i];
    if (!t || !t->wait_since) continue;
    t->depth = 0;
    for (uint32_t k = 0; k < x->l->n; k++) t->wait_since[k] = t->held_since[k] = -1;
  }
}

static void follow_scopes(lthread *t, const strobe_capture_record *r) {
  if (r->type == STROBE_REC_BEGIN && r->depth >= 1 && r->depth <= STROBE_MAX_DEPTH) {
    t->stack[r->depth - 1] = r->site;
    t->depth = r->depth;
  } else if (r->type == STROBE_REC_END && r->depth >= 1) {
    t->depth = r->depth - 1;
  } else if (r->type == STROBE_REC_LOST && r->depth < t->depth) {
    t->depth = r->depth;
  }
}

/* First read: waits (kept for matching) and the figures of waits and holds. */
static void first_read(lctx *x, lthread *t, uint32_t k, const strobe_capture_record *r) {
  lock_row *row = &x->l->rows[k];
  double now = r->time_ns;
  if (r->type == STROBE_REC_LOCK_WAIT) {
    if (t->wait_since[k] >= 0) row->unmatched++; /* a wait that never ended in an acquisition */
    t->wait_since[k] = now;
  } else if (r->type == STROBE_REC_LOCK_ACQUIRED) {
    row->acquisitions++;
    if (t->held_since[k] >= 0) row->unmatched++; /* taken again without a release */
    t->held_since[k] = now;
    if (t->wait_since[k] < 0) return;
    double d = now - t->wait_since[k];
    row->waits++;
    row->wait_ns += d;
    if (d > row->wait_max_ns) row->wait_max_ns = d;
    if (x->nwaits < LOCKS_MAX_WAITS) {
      if ((x->nwaits & (x->nwaits - 1)) == 0) { /* grow at powers of two */
        wait_rec *w = realloc(x->waits, (x->nwaits ? 2 * x->nwaits : 1) * sizeof *w);
        if (!w) {
          x->failed = 1;
          return;
        }
        x->waits = w;
      }
      x->waits[x->nwaits++] = (wait_rec){k, 0, t->wait_since[k], d};
    } else {
      x->l->waits_unmatched++;
    }
    t->wait_since[k] = -1;
  } else if (r->type == STROBE_REC_LOCK_RELEASED) {
    if (t->held_since[k] < 0) {
      row->unmatched++;
      return;
    }
    double d = now - t->held_since[k];
    row->holds++;
    row->hold_ns += d;
    if (d > row->hold_max_ns) row->hold_max_ns = d;
    t->held_since[k] = -1;
  }
}

static int wait_order(const void *a, const void *b) {
  const wait_rec *p = a, *q = b;
  if (p->lock != q->lock) return p->lock < q->lock ? -1 : 1;
  return (p->start_ns > q->start_ns) - (p->start_ns < q->start_ns);
}

static lock_holder *holder_of(lock_row *row, uint32_t thread, uint32_t scope) {
  for (uint32_t i = 0; i < row->nholders; i++)
    if (row->holders[i].thread == thread && row->holders[i].scope == scope) return &row->holders[i];
  if (row->nholders == MAX_HOLDERS) return NULL;
  if (!row->holders && !(row->holders = calloc(MAX_HOLDERS, sizeof *row->holders))) return NULL; /* x->failed */
  row->holders[row->nholders] = (lock_holder){thread, scope, 0, 0};
  return &row->holders[row->nholders++];
}

/* A hold of lock k by thread `thread` from `from` to `to` claims the waits
 * of k that began inside it. */
static void claim_waits(lctx *x, uint32_t k, uint32_t thread, uint32_t scope, double from, double to) {
  size_t lo = 0, hi = x->nwaits;
  while (lo < hi) { /* the first wait of lock k starting at or after `from` */
    size_t mid = lo + (hi - lo) / 2;
    const wait_rec *w = &x->waits[mid];
    if (w->lock < k || (w->lock == k && w->start_ns < from)) lo = mid + 1;
    else hi = mid;
  }
  lock_row *row = &x->l->rows[k];
  for (size_t i = lo; i < x->nwaits && x->waits[i].lock == k && x->waits[i].start_ns < to; i++) {
    wait_rec *w = &x->waits[i];
    if (w->holder) continue;
    lock_holder *h = holder_of(row, thread, scope);
    w->holder = h ? (uint32_t)(h - row->holders) + 1 : UINT32_MAX;
    if (!h && !row->holders) x->failed = 1; /* out of memory, not the bound */
    if (!h) {
      x->l->waits_holders_cut++;
      continue;
    }
    h->waits++;
    h->wait_ns += w->dur_ns;
  }
}

/* Second read: each hold, with the scope it began in, claims its waits. */
static void second_read(lctx *x, lthread *t, uint32_t k, const strobe_capture_record *r) {
  if (r->type == STROBE_REC_LOCK_ACQUIRED) {
    t->held_since[k] = r->time_ns;
    t->held_scope[k] = t->depth ? t->stack[t->depth - 1] : 0;
  } else if (r->type == STROBE_REC_LOCK_RELEASED && t->held_since[k] >= 0) {
    claim_waits(x, k, r->thread, t->held_scope[k], t->held_since[k], r->time_ns);
    t->held_since[k] = -1;
  }
}

static int read_once(lctx *x, const char *path, int second) {
  cli_input in;
  int rc = cli_open(&in, "report", path, 1);
  if (rc) return rc;
  uint64_t want = 1ull << STROBE_REC_LOCK_WAIT | 1ull << STROBE_REC_LOCK_ACQUIRED | 1ull << STROBE_REC_LOCK_RELEASED;
  if (second) want |= 1ull << STROBE_REC_BEGIN | 1ull << STROBE_REC_END | 1ull << STROBE_REC_LOST;
  strobe_capture_set_records(in.cap, want);
  const strobe_capture_record *r;
  while (!x->failed && (r = cli_next_ref(&in))) {
    lthread *t = thread_of(x, r->thread);
    if (!t) {
      x->failed = 1;
      break;
    }
    uint32_t k = r->site < x->nsites ? x->lock_of_site[r->site] : 0;
    if (r->type == STROBE_REC_BEGIN || r->type == STROBE_REC_END || r->type == STROBE_REC_LOST) follow_scopes(t, r);
    else if (k && second) second_read(x, t, k - 1, r);
    else if (k) first_read(x, t, k - 1, r);
  }
  rc = in.rc < 0 ? CLI_FAIL : CLI_OK;
  cli_close(&in);
  return rc;
}

static int row_order(const void *a, const void *b) {
  const lock_row *p = a, *q = b;
  if (p->wait_ns != q->wait_ns) return p->wait_ns < q->wait_ns ? 1 : -1;
  return p->acquisitions < q->acquisitions ? 1 : p->acquisitions > q->acquisitions ? -1 : strcmp(p->name, q->name);
}

static void finish(lctx *x) {
  locks *l = x->l;
  for (size_t i = 0; i < x->nwaits; i++) l->waits_no_holder += x->waits[i].holder == 0;
  for (uint32_t k = 0; k < l->n; k++) {
    lock_row *row = &l->rows[k];
    for (uint32_t i = 0; i < x->nthreads; i++) { /* still waiting or holding when the capture ended */
      const lthread *t = x->threads[i];
      if (t && t->wait_since) row->unmatched += (t->wait_since[k] >= 0) + (t->held_since[k] >= 0);
    }
    for (uint32_t i = 0; i < row->nholders; i++)
      if (row->holders[i].wait_ns > row->top.wait_ns) row->top = row->holders[i];
  }
  if (l->n) qsort(l->rows, l->n, sizeof *l->rows, row_order);
}

int locks_collect(locks *l, const strobe_capture *c, const char *path, int is_stdin) {
  memset(l, 0, sizeof *l);
  lctx x = {.l = l, .c = c};
  int rc = CLI_OK;
  if (name_locks(&x)) {
    x.failed = 1;
  } else if (!l->n) {
    l->why = "the capture recorded no locks (strobe/lock.h)";
  } else if (is_stdin) {
    l->why = "lock figures read the capture twice more: give a file, not standard input";
  } else if ((rc = read_once(&x, path, 0)) == CLI_OK && !x.failed && x.nwaits) {
    qsort(x.waits, x.nwaits, sizeof *x.waits, wait_order);
    reset_threads(&x);
    rc = read_once(&x, path, 1);
  }
  if (l->n && !l->why && rc == CLI_OK && !x.failed) {
    finish(&x);
    l->available = 1;
  } else if (x.failed) {
    l->why = "out of memory";
    rc = CLI_FAIL;
  } else if (rc != CLI_OK) {
    l->why = "the capture could not be read to its end";
  }
  for (uint32_t i = 0; i < x.nthreads; i++) {
    if (!x.threads[i]) continue;
    free(x.threads[i]->wait_since);
    free(x.threads[i]->held_since);
    free(x.threads[i]->held_scope);
    free(x.threads[i]);
  }
  free(x.threads);
  free(x.waits);
  free(x.lock_of_site);
  return rc;
}

static const char *scope_name(const strobe_capture *c, uint32_t site) {
  const strobe_capture_site *s = site ? strobe_capture_query_site(c, site) : NULL;
  return s ? s->name : "(no scope)";
}

void locks_text(FILE *f, const locks *l, const strobe_capture *c) {
  if (!l->n) return;
  fprintf(f, "\nLocks (docs/locks.md): by total wait\n");
  if (!l->available) {
    fprintf(f, "  not available: %s\n", l->why);
    return;
  }
  fprintf(f, "  %-20s %9s %9s %10s %10s %10s %10s  %s\n", "lock", "taken", "waited", "wait", "wait max", "held",
          "held max", "held while others waited, by");
  for (uint32_t k = 0; k < l->n; k++) {
    const lock_row *r = &l->rows[k];
    fprintf(f, "  %-20s %9llu %9llu %10s", r->name, (unsigned long long)r->acquisitions, (unsigned long long)r->waits,
            cli_dur(r->wait_ns));
    fprintf(f, " %10s", cli_dur(r->wait_max_ns));
    fprintf(f, " %10s", cli_dur(r->hold_ns));
    fprintf(f, " %10s", cli_dur(r->hold_max_ns));
    if (r->top.waits) {
      char buf[CLI_THREAD_LABEL_MAX];
      fprintf(f, "  %s in %s (%llu waits, %s)", cli_thread_label(c, r->top.thread, buf, sizeof buf),
              scope_name(c, r->top.scope), (unsigned long long)r->top.waits, cli_dur(r->top.wait_ns));
    }
    fputc('\n', f);
    if (r->unmatched)
      fprintf(f, "  %-20s %llu lock events without their pair (a wait or hold still open at the end, or begun "
                 "before the capture)\n", "", (unsigned long long)r->unmatched);
  }
  if (l->waits_unmatched)
    fprintf(f, "  %llu waits past the %u kept were matched to no holder (counted above)\n",
            (unsigned long long)l->waits_unmatched, LOCKS_MAX_WAITS);
  if (l->waits_holders_cut)
    fprintf(f, "  %llu waits began under a holder (thread, scope) past the %u kept per lock (counted above)\n",
            (unsigned long long)l->waits_holders_cut, MAX_HOLDERS);
  if (l->waits_no_holder)
    fprintf(f, "  %llu waits began while no recorded hold covered them (the holder took the lock before the "
               "capture, or without recording)\n", (unsigned long long)l->waits_no_holder);
}

static void holder_json(strobe__json *j, const char *key, const lock_holder *h, const strobe_capture *c) {
  strobe__json_object(j, key);
  char buf[CLI_THREAD_LABEL_MAX];
  strobe__json_uint(j, "thread", h->thread);
  strobe__json_str(j, "thread_name", cli_thread_label(c, h->thread, buf, sizeof buf));
  strobe__json_str(j, "scope", h->scope ? scope_name(c, h->scope) : NULL);
  strobe__json_uint(j, "waits", h->waits);
  strobe__json_num(j, "wait_ns", h->wait_ns, 0);
  strobe__json_end(j);
}

void locks_json(strobe__json *j, const locks *l, const strobe_capture *c) {
  strobe__json_object(j, "locks");
  strobe__json_bool(j, "available", l->available);
  if (!l->available) strobe__json_str(j, "why", l->why);
  strobe__json_uint(j, "waits_unmatched", l->waits_unmatched);
  strobe__json_uint(j, "waits_no_holder", l->waits_no_holder);
  strobe__json_uint(j, "waits_holders_cut", l->waits_holders_cut);
  strobe__json_array(j, "rows");
  for (uint32_t k = 0; l->available && k < l->n; k++) {
    const lock_row *r = &l->rows[k];
    strobe__json_object(j, NULL);
    strobe__json_str(j, "name", r->name);
    strobe__json_uint(j, "acquisitions", r->acquisitions);
    strobe__json_uint(j, "waits", r->waits);
    strobe__json_num(j, "wait_ns", r->wait_ns, 0);
    strobe__json_num(j, "wait_max_ns", r->wait_max_ns, 0);
    strobe__json_uint(j, "holds", r->holds);
    strobe__json_num(j, "hold_ns", r->hold_ns, 0);
    strobe__json_num(j, "hold_max_ns", r->hold_max_ns, 0);
    strobe__json_uint(j, "unmatched", r->unmatched);
    strobe__json_array(j, "holders");
    for (uint32_t i = 0; i < r->nholders; i++) holder_json(j, NULL, &r->holders[i], c);
    strobe__json_end(j);
    strobe__json_end(j);
  }
  strobe__json_end(j);
  strobe__json_end(j);
}

void locks_free(locks *l) {
  for (uint32_t k = 0; k < l->n; k++) free(l->rows[k].holders);
  free(l->rows);
  memset(l, 0, sizeof *l);
}
