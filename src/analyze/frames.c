/*
 * frames.c — the frame model of a capture (strobe/frames.h, docs/frames.md).
 *
 * Owns: the rules that make a frame out of a capture's records: which
 * operations (or marks, or top-level scopes) are frames, how the two halves
 * of an operation handed between processes join into one, each frame's
 * state, series and rates, the stages it ran under their run-time parents
 * and processes, and which operation a span belongs to (the innermost one
 * open on its thread at its begin). Every consumer asks this file; none
 * writes these rules again.
 *
 * Must never: attribute a span by time interval alone, count an operation
 * twice (a joined hand-off is one frame), fabricate an end for unfinished
 * work, or keep memory per span: spans are counted against the index as
 * they are read, and only marks and top-level scopes are kept, each up to
 * max_frames.
 *
 * Contents: >>tables >>add >>processes >>join >>frames >>segments >>series
 * >>stages >>checks >>owner >>open >>queries
 */
#include "strobe/frames.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/frame_rate.h"
#include "analyze/frames_check.h"
#include "analyze/frame_rules.h"
#include "analyze/percentile.h"
#include "platform/invariant.h"

/* >>tables */
enum { EV_BEGIN, EV_RESUME, EV_TAKE, EV_END }; /* what an operation did on a thread, in time order there */

typedef struct op_ev {
  double t;
  uint64_t seq;    /* the record's place in the read: orders events of one instant */
  uint32_t thread, op, type;
} op_ev;

typedef struct op_rec {
  uint64_t collector, id, frame_id;
  uint32_t kind, window, input; /* window: a string index; input: the merged input (collector >> 8) */
  int app_frame_id, has_begin, has_end, committed, detail, stage_parents, idle;
  double begin_ns, end_ns;
  uint32_t begin_thread, end_thread;
  int out, in;                  /* handed to another process; resumed from one */
  uint64_t out_uid, origin_uid, origin_id;
  uint32_t peer, from;          /* string indexes: where it went; where it came from */
  uint32_t population;          /* string index of its END's population; STROBE_FRAMES_NONE before its END */
  double out_ns, in_ns;
  uint32_t stage0, nstages;     /* into stages_raw */
  uint32_t frame;               /* its frame, at finish; STROBE_FRAMES_NONE for none */
  int joined;                   /* an origin half whose finisher is in the capture: the finisher's frame */
} op_rec;

typedef struct raw_stage {
  uint32_t site, parent, count;
  int remote;
  double total_ns, min_ns, max_ns;
} raw_stage;

typedef struct keyed { double t; uint32_t key; } keyed; /* a mark (key: its thread), or a series' boundary */
typedef keyed tmark;
typedef struct ttop { double begin, end; uint32_t thread; } ttop;

typedef struct segment { /* an operation open on one thread from open to close */
  double open, close;
  uint32_t frame, parent; /* parent: the segment open around it when it opened (STROBE_FRAMES_NONE: none) */
  uint32_t op;            /* the operation (a frame handed between processes has two) */
} segment;

struct strobe_frames {
  strobe_frames_desc desc;
  int finished, failed;
  uint64_t seq;
  op_rec *ops; uint32_t nops, cap_ops;
  uint32_t *hash; uint32_t hash_cap; /* ops by (collector, id): open addressing, indexes + 1 */
  uint32_t recent[8];                /* the last operations looked up, indexes + 1: an operation's records are
                                      * usually close together, and the table, cold (docs/cli.md §Speed) */
  struct { uint64_t collector, max_id; } newest[16]; /* per collector seen (the first 16): the largest operation id
                                      * of it added, so a newer one (ids grow per collector) is new without a probe */
  uint32_t nnewest;
  op_ev *evs; uint64_t nevs, cap_evs;
  raw_stage *stages_raw; uint64_t nstages_raw, cap_stages_raw;
  char **strs; uint32_t nstrs, cap_strs;   /* windows and process labels */
  const char *last_ptr; uint32_t last_str; /* the reader hands one label the same pointer: a one-entry cache */
  uint32_t self_label;                     /* this capture's process label; STROBE_FRAMES_NONE until a record names it */
  tmark *marks; uint32_t nmarks, cap_marks, nmarks_read; /* nmarks_read: the marks, once turned into boundaries */
  int marking;                             /* a thread marked two frames in a row: scopes will never be frames */
  ttop *tops; uint32_t ntops, cap_tops;
  strobe_frames_cut cut;
  uint32_t source, passes;
  strobe_frame *frames; uint32_t nframes;
  strobe_frame_stage *fstages; uint32_t *fstage0; /* per frame: its first stage in fstages */
  uint64_t nfstages;
  strobe_frame_series *series; uint32_t nseries;
  strobe_frames_stage_summary *sums; uint32_t nsums;
  uint32_t *procs; uint32_t nprocs, cap_procs; /* string indexes of the processes */
  segment *segs; uint64_t nsegs, cap_segs;
  uint64_t *thread_seg0; uint32_t nthreads; /* per thread: its segments (or frames) start here; +1 entry */
  uint32_t *thread_frames;                  /* marks and scopes: frame indexes sorted by thread, then begin */
};

/* qsort, after one pass that finds most inputs sorted already (marks and scopes come in order per thread,
 * and most captures have one frame thread): n - 1 comparisons instead of n log n. */
static void sort_if_needed(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *)) {
  const char *b = base;
  for (size_t i = 1; i < n; i++)
    if (cmp(b + (i - 1) * size, b + i * size) > 0) {
      qsort(base, n, size, cmp);
      return;
    }
}

static int grow(void **p, uint64_t *cap, uint64_t need, size_t size) {
  if (need <= *cap) return 0;
  uint64_t c = *cap ? *cap : 64;
  while (c < need) c *= 2;
  void *q = realloc(*p, (size_t)c * size);
  if (!q) return -1;
  *p = q;
  *cap = c;
  return 0;
}
static int grow32(void **p, uint32_t *cap, uint32_t need, size_t size) {
  uint64_t c = *cap;
  int r = grow(p, &c, need, size);
  *cap = (uint32_t)c;
  return r;
}

static uint32_t str_of(strobe_frames *f, const char *s) {
  if (!s) s = "";
  if (s == f->last_ptr) return f->last_str;
  for (uint32_t i = 0; i < f->nstrs; i++)
    if (!strcmp(f->strs[i], s)) return f->last_ptr = s, f->last_str = i;
  char *copy = strdup(s);
  if (!copy || grow32((void **)&f->strs, &f->cap_strs, f->nstrs + 1, sizeof *f->strs)) {
    free(copy);
    f->failed = 1;
    return STROBE_FRAMES_NONE;
  }
  f->strs[f->nstrs] = copy;
  f->last_ptr = s;
  return f->last_str = f->nstrs++;
}
static const char *str_at(const strobe_frames *f, uint32_t i) { return i < f->nstrs ? f->strs[i] : ""; }

static uint64_t mix(uint64_t collector, uint64_t id) {
  uint64_t h = collector * 0x9e3779b97f4a7c15ull ^ id * 0xc2b2ae3d27d4eb4full;
  return h ^ h >> 29;
}

static int rehash(strobe_frames *f) {
  uint32_t cap = f->hash_cap ? f->hash_cap * 2 : 1024;
  uint32_t *h = calloc(cap, sizeof *h);
  if (!h) return -1;
  for (uint32_t i = 0; i < f->nops; i++) {
    uint32_t k = (uint32_t)mix(f->ops[i].collector, f->ops[i].id) & (cap - 1);
    while (h[k]) k = (k + 1) & (cap - 1);
    h[k] = i + 1;
  }
  free(f->hash);
  f->hash = h;
  f->hash_cap = cap;
  return 0;
}

/* The operation (collector, id), added when new; NULL out of memory. */
static op_rec *op_find(strobe_frames *f, const strobe_capture_op *o);
static op_rec *op_of(strobe_frames *f, const strobe_capture_op *o) {
  uint32_t slot = (uint32_t)(o->id ^ o->collector) & 7u;
  if (f->recent[slot]) {
    op_rec *x = &f->ops[f->recent[slot] - 1];
    if (x->collector == o->collector && x->id == o->id) return x;
  }
  op_rec *x = op_find(f, o);
  if (x) f->recent[slot] = (uint32_t)(x - f->ops) + 1;
  return x;
}

/* 1 when operation (collector, id) cannot be in the table yet: its id is above every id of its collector added. */
static int op_is_new(strobe_frames *f, const strobe_capture_op *o) {
  for (uint32_t i = 0; i < f->nnewest; i++)
    if (f->newest[i].collector == o->collector) {
      int fresh = o->id > f->newest[i].max_id;
      if (fresh) f->newest[i].max_id = o->id;
      return fresh;
    }
  if (f->nnewest == 16) return 0;
  int any = 0; /* a collector seen first here (at most 16 times): its largest id so far, from the table */
  uint64_t max = 0;
  for (uint32_t i = 0; i < f->nops; i++)
    if (f->ops[i].collector == o->collector && (!any || f->ops[i].id > max)) any = 1, max = f->ops[i].id;
  int fresh = !any || o->id > max;
  f->newest[f->nnewest].collector = o->collector;
  f->newest[f->nnewest++].max_id = fresh ? o->id : max;
  return fresh;
}

static op_rec *op_find(strobe_frames *f, const strobe_capture_op *o) {
  int fresh = op_is_new(f, o);
  if (f->hash_cap && !fresh) {
    uint32_t k = (uint32_t)mix(o->collector, o->id) & (f->hash_cap - 1);
    for (; f->hash[k]; k = (k + 1) & (f->hash_cap - 1)) {
      op_rec *x = &f->ops[f->hash[k] - 1];
      if (x->collector == o->collector && x->id == o->id) return x;
    }
  }
  if ((uint64_t)(f->nops + 1) * 2 > f->hash_cap && rehash(f)) return NULL;
  if (grow32((void **)&f->ops, &f->cap_ops, f->nops + 1, sizeof *f->ops)) return NULL;
  op_rec *x = &f->ops[f->nops];
  memset(x, 0, sizeof *x);
  x->collector = o->collector;
  x->id = o->id;
  x->input = o->collector >> 8;
  x->begin_thread = x->end_thread = STROBE_FRAMES_NONE;
  x->peer = x->from = x->population = STROBE_FRAMES_NONE;
  uint32_t k = (uint32_t)mix(o->collector, o->id) & (f->hash_cap - 1);
  while (f->hash[k]) k = (k + 1) & (f->hash_cap - 1);
  f->hash[k] = ++f->nops;
  return x;
}

/* >>add */
static int add_ev(strobe_frames *f, uint32_t thread, uint32_t op, double t, uint32_t type) {
  if (grow((void **)&f->evs, &f->cap_evs, f->nevs + 1, sizeof *f->evs)) return -1;
  f->evs[f->nevs++] = (op_ev){t, f->seq, thread, op, type};
  return 0;
}

static void op_ids(strobe_frames *f, op_rec *x, const strobe_capture_op *o) {
  x->kind = o->kind;
  x->frame_id = o->frame_id;
  x->app_frame_id = o->app_frame_id;
  x->window = str_of(f, o->window);
}

static int op_end(strobe_frames *f, op_rec *x, const strobe_capture_record *r) {
  const strobe_capture_op *o = r->op;
  op_ids(f, x, o);
  x->has_end = 1;
  x->committed = o->committed;
  x->idle = o->idle;
  x->detail = o->detail;
  x->stage_parents = o->stage_parents;
  x->population = str_of(f, o->population);
  x->begin_ns = o->start_ns; /* the whole operation's start, the origin's for one resumed from another process */
  x->end_ns = r->time_ns;
  x->end_thread = r->thread;
  if (grow((void **)&f->stages_raw, &f->cap_stages_raw, f->nstages_raw + o->nstages, sizeof *f->stages_raw))
    return -1;
  x->stage0 = (uint32_t)f->nstages_raw;
  x->nstages = o->nstages;
  for (uint32_t i = 0; i < o->nstages; i++) {
    const strobe_capture_stage *s = &o->stages[i];
    f->stages_raw[f->nstages_raw++] =
        (raw_stage){s->site, s->parent, s->count, s->remote, s->total_ns, s->min_ns, s->max_ns};
  }
  return 0;
}

static int add_op(strobe_frames *f, const strobe_capture_record *r) {
  const strobe_capture_op *o = r->op;
  op_rec *x = op_of(f, o);
  if (!x) return -1;
  uint32_t index = (uint32_t)(x - f->ops), type = EV_END;
  if (o->remote && o->process && o->process[0] && f->self_label == STROBE_FRAMES_NONE)
    f->self_label = str_of(f, o->process);
  switch (r->type) {
    case STROBE_REC_OP_BEGIN:
      op_ids(f, x, o);
      x->has_begin = 1;
      if (!x->has_end) x->begin_ns = r->time_ns;
      x->begin_thread = r->thread;
      type = EV_BEGIN;
      break;
    case STROBE_REC_OP_TAKE:
      if (o->remote) {
        x->out = 1;
        x->out_uid = o->origin_collector;
        x->peer = str_of(f, o->peer);
        x->out_ns = r->time_ns;
      }
      type = EV_TAKE;
      break;
    case STROBE_REC_OP_RESUME:
      if (o->remote) {
        x->in = 1;
        x->origin_uid = o->origin_collector;
        x->origin_id = o->origin_id;
        x->from = str_of(f, o->peer);
        x->in_ns = r->time_ns;
        x->out_ns = r->time_ns - o->gap_ns;
        if (x->begin_thread == STROBE_FRAMES_NONE) x->begin_thread = r->thread;
      }
      type = EV_RESUME;
      break;
    default:
      if (op_end(f, x, r)) return -1;
  }
  if (x->begin_thread == STROBE_FRAMES_NONE && !x->has_end) { /* a TAKE or RESUME is all it has so far (a dump
                                                                  * that lost its BEGIN): placed there until more */
    x->begin_thread = r->thread;
    x->begin_ns = r->time_ns;
  }
  return add_ev(f, r->thread, index, r->time_ns, type);
}

int strobe_frames_add(strobe_frames *f, const strobe_capture *c, const strobe_capture_record *r) {
  (void)c;
  if (!f || !r) return STROBE_EINVAL;
  if (f->finished) return STROBE_ESTATE;
  f->seq++;
  int rc = 0;
  switch (r->type) {
    case STROBE_REC_OP_BEGIN:
    case STROBE_REC_OP_END:
    case STROBE_REC_OP_TAKE:
    case STROBE_REC_OP_RESUME: rc = add_op(f, r); break;
    case STROBE_REC_FRAME:
      if (f->nmarks / 8 == f->desc.max_frames) f->cut.marks++; /* 16 bytes a mark: rates over 8x the frames listed */
      else if (grow32((void **)&f->marks, &f->cap_marks, f->nmarks + 1, sizeof *f->marks)) rc = -1;
      else f->marks[f->nmarks++] = (tmark){r->time_ns, r->thread};
      f->marking |= f->nmarks > 1 && f->marks[f->nmarks - 2].key == r->thread; /* two on one thread: marks win */
      break;
    case STROBE_REC_END:
      if (r->depth != 1 || r->unwound || f->marking) break; /* scopes are frames only where nothing marks them */
      if (f->ntops == f->desc.max_frames) f->cut.scopes++;
      else if (grow32((void **)&f->tops, &f->cap_tops, f->ntops + 1, sizeof *f->tops)) rc = -1;
      else f->tops[f->ntops++] = (ttop){r->time_ns - r->duration_ns, r->time_ns, r->thread};
      break;
    default: break;
  }
  if (rc) {
    f->failed = 1;
    return STROBE_ENOMEM;
  }
  return 0;
}

/* >>processes: a merged capture's inputs, else the one process (named by its
 * remote records, "" when none), then origins named only by a resume. */
static uint32_t proc_of_str(strobe_frames *f, uint32_t s) {
  for (uint32_t i = 0; i < f->nprocs; i++)
    if (f->procs[i] == s) return i;
  if (grow32((void **)&f->procs, &f->cap_procs, f->nprocs + 1, sizeof *f->procs)) return f->failed = 1, 0;
  f->procs[f->nprocs] = s;
  return f->nprocs++;
}

static uint32_t proc_of_op(const op_rec *x, const strobe_capture_merge *m) {
  return m && x->input < m->ninputs ? x->input : 0;
}

static int set_processes(strobe_frames *f, const strobe_capture_merge *m) {
  if (m) {
    for (uint32_t i = 0; i < m->ninputs; i++) {
      uint32_t s = str_of(f, m->inputs[i].process);
      if (s == STROBE_FRAMES_NONE || grow32((void **)&f->procs, &f->cap_procs, f->nprocs + 1, sizeof *f->procs))
        return -1;
      f->procs[f->nprocs++] = s; /* by input, even when two inputs share a label */
    }
  } else {
    uint32_t s = f->self_label != STROBE_FRAMES_NONE ? f->self_label : str_of(f, "");
    if (s == STROBE_FRAMES_NONE) return -1;
    proc_of_str(f, s);
  }
  return f->failed ? -1 : 0;
}

/* >>join: the finisher of an operation handed between processes finds its
 * origin half by (origin collector's random id, origin operation id). */
typedef struct out_key { uint64_t uid, id; uint32_t op; } out_key;

static int by_out_key(const void *x, const void *y) {
  const out_key *a = x, *b = y;
  if (a->uid != b->uid) return a->uid < b->uid ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

/* origin[i]: the origin half of finisher i, STROBE_FRAMES_NONE when none is in the capture. */
static int join_halves(strobe_frames *f, uint32_t *origin) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < f->nops; i++) n += (uint32_t)f->ops[i].out;
  out_key *k = malloc((n ? n : 1) * sizeof *k);
  if (!k) return -1;
  n = 0;
  for (uint32_t i = 0; i < f->nops; i++)
    if (f->ops[i].out) k[n++] = (out_key){f->ops[i].out_uid, f->ops[i].id, i};
  if (n) qsort(k, n, sizeof *k, by_out_key);
  for (uint32_t i = 0; i < f->nops; i++) {
    origin[i] = STROBE_FRAMES_NONE;
    op_rec *x = &f->ops[i];
    if (!x->in) continue;
    out_key want = {x->origin_uid, x->origin_id, 0};
    out_key *hit = bsearch(&want, k, n, sizeof *k, by_out_key);
    if (!hit || f->ops[hit->op].joined) continue; /* a token resumed twice: the second is its own frame */
    f->ops[hit->op].joined = 1;
    origin[i] = hit->op;
  }
  free(k);
  return 0;
}

/* >>frames */
static int peer_in_capture(const strobe_frames *f, uint32_t peer, const strobe_capture_merge *m) {
  if (!m || peer == STROBE_FRAMES_NONE) return 0;
  for (uint32_t i = 0; i < m->ninputs; i++)
    if (!strcmp(m->inputs[i].process, str_at(f, peer))) return 1;
  return 0;
}

static uint32_t state_of(const strobe_frames *f, const op_rec *x, const strobe_capture_merge *m) {
  strobe__op_facts k = {x->has_end, x->committed, x->in, x->out, x->out && peer_in_capture(f, x->peer, m)};
  return strobe__op_state(&k); /* analyze/frame_rules.h: the sessions' rule too */
}

/* The frame of finisher (or lone operation) x, whose origin half is o (NULL: none in the capture). */
static strobe_frame frame_of_op(strobe_frames *f, const op_rec *x, const op_rec *o, const strobe_capture_merge *m) {
  strobe_frame fr = {0};
  const op_rec *b = o ? o : x; /* where it began */
  fr.kind = x->kind;
  fr.state = state_of(f, x, m);
  fr.idle = x->idle;
  fr.counted = x->kind == STROBE_OP_PASS && strobe__pass_counts(fr.state, fr.idle);
  fr.end_process = proc_of_op(x, m);
  fr.process = o ? proc_of_op(o, m) : x->in && x->from != STROBE_FRAMES_NONE ? proc_of_str(f, x->from) : fr.end_process;
  fr.thread = b->begin_thread != STROBE_FRAMES_NONE ? b->begin_thread : b->end_thread;
  fr.end_thread = x->has_end ? x->end_thread : STROBE_FRAMES_NONE;
  fr.number = b->kind == STROBE_OP_PASS ? b->frame_id : b->id;
  fr.app_frame_id = b->kind == STROBE_OP_PASS && b->app_frame_id;
  fr.begin_ns = (o && (o->has_begin || o->has_end)) ? o->begin_ns : x->begin_ns;
  fr.end_ns = x->has_end ? x->end_ns : 0;
  if (x->in || x->out) fr.handed_off_ns = o ? o->out_ns : x->out_ns;
  if (x->in) fr.resumed_ns = x->in_ns;
  const op_rec *out = o ? o : x->out ? x : NULL; /* the half that handed it off */
  fr.handed_to = out ? str_at(f, out->peer) : "";
  fr.collector = b->collector;
  fr.id = b->id;
  fr.series = STROBE_FRAMES_NONE;
  fr.window = str_at(f, b->window);
  /* The finisher's END carries the population (a resumed operation keeps its origin's); else the origin's END. */
  fr.population = str_at(f, x->has_end || !o ? x->population : o->population);
  return fr;
}

static void frame_stages(strobe_frames *f, strobe_frame *fr, const op_rec *x, const op_rec *o,
                         const strobe_capture_merge *m) {
  const op_rec *s = o && !x->detail && o->detail ? o : x; /* the finisher's END holds both sides' stages */
  fr->detail = s->detail;
  fr->nstages = s->nstages;
  uint32_t here = proc_of_op(s, m);
  for (uint32_t i = 0; i < s->nstages; i++) {
    const raw_stage *r = &f->stages_raw[s->stage0 + i];
    f->fstages[f->nfstages++] = (strobe_frame_stage){r->site,  r->parent,   s->stage_parents, r->remote ? fr->process : here,
                                                     r->count, r->total_ns, r->min_ns,        r->max_ns};
  }
}

typedef struct order { double t; uint32_t process, thread, i; uint64_t number; } order;
static int by_begin(const void *x, const void *y) {
  const order *a = x, *b = y;
  if (a->t != b->t) return a->t < b->t ? -1 : 1;
  if (a->process != b->process) return a->process < b->process ? -1 : 1;
  if (a->thread != b->thread) return a->thread < b->thread ? -1 : 1;
  return a->number < b->number ? -1 : a->number > b->number;
}

/* Orders frames by begin (then process, thread, number) and moves their stages with them; remap[old] = new. */
static int order_frames(strobe_frames *f, uint32_t *remap) {
  int sorted = 1;
  for (uint32_t i = 1; i < f->nframes && sorted; i++) {
    order a = {f->frames[i - 1].begin_ns, f->frames[i - 1].process, f->frames[i - 1].thread, 0, f->frames[i - 1].number};
    order b = {f->frames[i].begin_ns, f->frames[i].process, f->frames[i].thread, 0, f->frames[i].number};
    sorted = by_begin(&a, &b) <= 0;
  }
  if (sorted) { /* the usual case: frames end in the order they began; each keeps its stages where they are */
    for (uint32_t i = 0; i < f->nframes; i++) remap[i] = i;
    return 0;
  }
  order *o = malloc(((size_t)f->nframes + 1) * sizeof *o);
  strobe_frame *nf = malloc(((size_t)f->nframes + 1) * sizeof *nf);
  strobe_frame_stage *ns = malloc(((size_t)f->nfstages + 1) * sizeof *ns);
  uint32_t *n0 = malloc(((size_t)f->nframes + 1) * sizeof *n0);
  if (!o || !nf || !ns || !n0) {
    free(o), free(nf), free(ns), free(n0);
    return -1;
  }
  for (uint32_t i = 0; i < f->nframes; i++)
    o[i] = (order){f->frames[i].begin_ns, f->frames[i].process, f->frames[i].thread, i, f->frames[i].number};
  if (f->nframes) qsort(o, f->nframes, sizeof *o, by_begin);
  uint64_t k = 0;
  for (uint32_t i = 0; i < f->nframes; i++) {
    uint32_t old = o[i].i;
    remap[old] = i;
    nf[i] = f->frames[old];
    n0[i] = (uint32_t)k;
    if (f->fstage0) memcpy(ns + k, f->fstages + f->fstage0[old], nf[i].nstages * sizeof *ns);
    k += nf[i].nstages;
  }
  free(o);
  free(f->frames), free(f->fstages), free(f->fstage0);
  f->frames = nf, f->fstages = ns, f->fstage0 = n0;
  return 0;
}

static int op_frames(strobe_frames *f, const strobe_capture_merge *m) {
  uint32_t *origin = malloc(((size_t)f->nops + 1) * sizeof *origin);
  f->frames = calloc((size_t)f->nops + 1, sizeof *f->frames);
  f->fstages = malloc(((size_t)f->nstages_raw + 1) * sizeof *f->fstages);
  f->fstage0 = malloc(((size_t)f->nops + 1) * sizeof *f->fstage0);
  uint32_t *remap = malloc(((size_t)f->nops + 1) * sizeof *remap);
  if (!origin || !f->frames || !f->fstages || !f->fstage0 || !remap || join_halves(f, origin)) {
    free(origin), free(remap);
    return -1;
  }
  for (uint32_t i = 0; i < f->nops; i++) {
    op_rec *x = &f->ops[i];
    if (x->joined) continue; /* its finisher makes the frame */
    const op_rec *o = origin[i] != STROBE_FRAMES_NONE ? &f->ops[origin[i]] : NULL;
    f->fstage0[f->nframes] = (uint32_t)f->nfstages;
    f->frames[f->nframes] = frame_of_op(f, x, o, m);
    uint32_t at = f->nframes;
    if (f->desc.keep && !f->desc.keep(f->desc.keep_ctx, &f->frames[at])) at = STROBE_FRAMES_NONE; /* left out */
    else frame_stages(f, &f->frames[f->nframes++], x, o, m);
    x->frame = at;
    if (o) f->ops[origin[i]].frame = at;
  }
  int rc = order_frames(f, remap);
  if (!rc)
    for (uint32_t i = 0; i < f->nops; i++)
      if (f->ops[i].frame != STROBE_FRAMES_NONE) f->ops[i].frame = remap[f->ops[i].frame];
  free(origin), free(remap);
  return rc;
}

static int by_thread_time(const void *x, const void *y) { /* marks by thread, then time; boundaries by series */
  const keyed *a = x, *b = y;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  return a->t < b->t ? -1 : a->t > b->t;
}
static int tops_by_thread(const void *x, const void *y) {
  const ttop *a = x, *b = y;
  if (a->thread != b->thread) return a->thread < b->thread ? -1 : 1;
  return a->begin < b->begin ? -1 : a->begin > b->begin;
}

/* Marks: frame k of a thread runs from its kth mark to the next. Scopes: each top-level scope. */
static int plain_frames(strobe_frames *f) {
  int marks = f->source == STROBE_FRAME_SOURCE_MARKS;
  uint32_t n = marks ? f->nmarks : f->ntops;
  if (marks) sort_if_needed(f->marks, f->nmarks, sizeof *f->marks, by_thread_time);
  else sort_if_needed(f->tops, f->ntops, sizeof *f->tops, tops_by_thread);
  f->frames = calloc((size_t)n + 1, sizeof *f->frames);
  uint32_t *remap = malloc(((size_t)n + 1) * sizeof *remap);
  if (!f->frames || !remap) return free(remap), -1;
  uint64_t k = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t thread = marks ? f->marks[i].key : f->tops[i].thread;
    k = i && thread == (marks ? f->marks[i - 1].key : f->tops[i - 1].thread) ? k + 1 : 1;
    if (marks && (i + 1 == n || f->marks[i + 1].key != thread)) continue; /* a thread's last mark opens none */
    if (f->nframes == f->desc.max_frames) { /* in the rates (they read the marks), not in the list */
      f->cut.listed++;
      continue;
    }
    strobe_frame *fr = &f->frames[f->nframes++];
    fr->state = STROBE_FRAME_COMPLETED;
    fr->counted = marks;
    fr->process = fr->end_process = 0;
    fr->thread = fr->end_thread = thread;
    fr->number = k;
    fr->begin_ns = marks ? f->marks[i].t : f->tops[i].begin;
    fr->end_ns = marks ? f->marks[i + 1].t : f->tops[i].end;
    fr->series = STROBE_FRAMES_NONE;
    fr->window = fr->population = "";
  }
  int rc = order_frames(f, remap);
  free(remap);
  return rc;
}

/* >>segments: where each operation was open on each thread, from its events
 * there in time order (docs/frames.md §Own spans). An END with no BEGIN or
 * RESUME anywhere (the operation began before the capture) opens at its
 * start on the thread that ended it. */
static int by_thread_then_time(const void *x, const void *y) {
  const op_ev *a = x, *b = y;
  if (a->thread != b->thread) return a->thread < b->thread ? -1 : 1;
  if (a->t != b->t) return a->t < b->t ? -1 : 1;
  return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int begin_before_capture(strobe_frames *f) {
  uint8_t *opened = calloc((size_t)f->nops + 1, 1);
  if (!opened) return -1;
  for (uint64_t i = 0; i < f->nevs; i++)
    if (f->evs[i].type == EV_BEGIN || f->evs[i].type == EV_RESUME) opened[f->evs[i].op] = 1;
  uint64_t n = f->nevs;
  int rc = 0;
  for (uint64_t i = 0; i < n && !rc; i++) {
    op_ev e = f->evs[i];
    if (e.type != EV_END || opened[e.op]) continue;
    rc = add_ev(f, e.thread, e.op, f->ops[e.op].begin_ns, EV_BEGIN);
    if (!rc) f->evs[f->nevs - 1].seq = 0; /* before anything else at that instant */
  }
  free(opened);
  return rc;
}

static int sweep_thread(strobe_frames *f, uint64_t a, uint64_t b, uint32_t **stack, uint32_t *cap) {
  uint32_t depth = 0;
  for (uint64_t i = a; i < b; i++) {
    const op_ev *e = &f->evs[i];
    uint32_t frame = f->ops[e->op].frame;
    if (e->type == EV_BEGIN || e->type == EV_RESUME) {
      if (grow((void **)&f->segs, &f->cap_segs, f->nsegs + 1, sizeof *f->segs) ||
          grow32((void **)stack, cap, depth + 1, sizeof **stack))
        return -1;
      f->segs[f->nsegs] = (segment){e->t, INFINITY, frame, depth ? (*stack)[depth - 1] : STROBE_FRAMES_NONE, e->op};
      (*stack)[depth++] = (uint32_t)f->nsegs++;
      continue;
    }
    for (uint32_t k = depth; k-- > 0;) { /* TAKE or END: close its segment here, wherever it is on the stack */
      if (f->segs[(*stack)[k]].op != e->op) continue;
      f->segs[(*stack)[k]].close = e->t;
      memmove(*stack + k, *stack + k + 1, (depth - k - 1) * sizeof **stack);
      depth--;
      break;
    }
  }
  return 0;
}

static int thread_table(strobe_frames *f, uint32_t nthreads) {
  f->nthreads = nthreads;
  f->thread_seg0 = calloc((size_t)nthreads + 1, sizeof *f->thread_seg0);
  return f->thread_seg0 ? 0 : -1;
}

/* The events by thread (a counting pass: threads are few), then each thread's in time order (they arrive so,
 * block by block, but for the ones added for operations begun before the capture). */
static int order_events(strobe_frames *f, uint32_t *nthreads) {
  *nthreads = 0;
  for (uint64_t i = 0; i < f->nevs; i++)
    if (f->evs[i].thread + 1 > *nthreads) *nthreads = f->evs[i].thread + 1;
  uint64_t *at = calloc((size_t)*nthreads + 1, sizeof *at);
  op_ev *out = malloc(((size_t)f->nevs + 1) * sizeof *out);
  if (!at || !out) return free(at), free(out), -1;
  for (uint64_t i = 0; i < f->nevs; i++) at[f->evs[i].thread + 1]++;
  for (uint32_t t = 0; t < *nthreads; t++) at[t + 1] += at[t];
  for (uint64_t i = 0; i < f->nevs; i++) out[at[f->evs[i].thread]++] = f->evs[i];
  free(f->evs);
  f->evs = out;
  f->cap_evs = f->nevs + 1;
  for (uint64_t a = 0, b; a < f->nevs; a = b) {
    for (b = a; b < f->nevs && f->evs[b].thread == f->evs[a].thread; b++) {}
    sort_if_needed(f->evs + a, (size_t)(b - a), sizeof *f->evs, by_thread_then_time);
  }
  free(at);
  return 0;
}

static int build_segments(strobe_frames *f) {
  uint32_t nthreads;
  if (begin_before_capture(f) || order_events(f, &nthreads) || thread_table(f, nthreads)) return -1;
  uint32_t *stack = NULL, cap = 0;
  int rc = 0;
  for (uint64_t a = 0, b; a < f->nevs && !rc; a = b) {
    uint32_t t = f->evs[a].thread;
    for (b = a; b < f->nevs && f->evs[b].thread == t; b++) {}
    for (uint32_t k = t; k > 0 && !f->thread_seg0[k] && k <= t; k--) f->thread_seg0[k] = f->nsegs; /* empty threads */
    f->thread_seg0[t] = f->nsegs;
    rc = sweep_thread(f, a, b, &stack, &cap);
    for (uint32_t k = t + 1; k <= nthreads; k++) f->thread_seg0[k] = f->nsegs;
  }
  free(stack);
  return rc;
}

/* Marks and scopes: frame indexes by thread, then begin, for strobe_frames_owner. */
static int thread_frame_table(strobe_frames *f) {
  uint32_t nthreads = 0;
  for (uint32_t i = 0; i < f->nframes; i++)
    if (f->frames[i].thread + 1 > nthreads) nthreads = f->frames[i].thread + 1;
  f->thread_frames = malloc(((size_t)f->nframes + 1) * sizeof *f->thread_frames);
  if (!f->thread_frames || thread_table(f, nthreads)) return -1;
  for (uint32_t i = 0; i < f->nframes; i++) f->thread_seg0[f->frames[i].thread + 1]++;
  for (uint32_t t = 0; t < nthreads; t++) f->thread_seg0[t + 1] += f->thread_seg0[t];
  uint64_t *at = calloc((size_t)nthreads + 1, sizeof *at);
  if (!at) return -1;
  for (uint32_t i = 0; i < f->nframes; i++) { /* frames are in begin order: each thread's stay so */
    uint32_t t = f->frames[i].thread;
    f->thread_frames[f->thread_seg0[t] + at[t]++] = i;
  }
  free(at);
  return 0;
}

/* >>series: passes by (process, window), marks and scopes by thread. */
static uint32_t series_of(strobe_frames *f, uint32_t process, uint32_t thread, const char *name, uint32_t *cap) {
  uint32_t own = str_of(f, name); /* a thread's name is the capture's: the index keeps its own copy */
  if (own == STROBE_FRAMES_NONE) return STROBE_FRAMES_NONE;
  name = str_at(f, own);
  for (uint32_t i = 0; i < f->nseries; i++)
    if (f->series[i].process == process && f->series[i].thread == thread && !strcmp(f->series[i].name, name)) return i;
  if (grow32((void **)&f->series, cap, f->nseries + 1, sizeof *f->series)) return STROBE_FRAMES_NONE;
  strobe_frame_series *s = &f->series[f->nseries];
  memset(s, 0, sizeof *s);
  s->name = name;
  s->process = process;
  s->thread = thread;
  return f->nseries++;
}

/* Both rates of each series over its boundaries: counted passes' begins, or every kept mark. */
static int series_rates(strobe_frames *f, keyed *bd, uint64_t n) {
  sort_if_needed(bd, (size_t)n, sizeof *bd, by_thread_time);
  double *t = malloc(((size_t)n + 1) * sizeof *t), *scratch = malloc(((size_t)n + 1) * sizeof *scratch);
  if (!t || !scratch) return free(t), free(scratch), -1;
  for (uint64_t a = 0, b; a < n; a = b) {
    for (b = a; b < n && bd[b].key == bd[a].key; b++) t[b - a] = bd[b].t;
    strobe_frame_series *s = &f->series[bd[a].key];
    if (b - a < 2) continue;
    strobe__frame_rate r = strobe__frame_rate_of(t, (size_t)(b - a), scratch);
    s->has_rate = 1;
    s->intervals = r.frames;
    s->span_ns = r.span_ns;
    s->fps_first_to_last = r.fps_first_to_last;
    s->median_interval_ns = r.median_interval_ns;
    s->fps_steady = r.fps_steady;
  }
  free(t), free(scratch);
  return 0;
}

static int build_series(strobe_frames *f, const strobe_capture *c) {
  uint32_t cap = 0;
  int passes = f->source == STROBE_FRAME_SOURCE_PASSES, marks = f->source == STROBE_FRAME_SOURCE_MARKS;
  uint64_t n = 0;
  /* Marks become their series' boundaries in place (n never passes i); passes' counted begins get an array. */
  keyed *bd = marks ? f->marks : malloc(((size_t)f->nframes + 1) * sizeof *bd);
  if (!bd) return -1;
  if (marks) f->marks = NULL, f->nmarks_read = f->nmarks, f->nmarks = 0;
  const strobe_frame *prev = NULL; /* most frames are in their predecessor's series: one lookup for a run */
  for (uint32_t i = 0; i < f->nframes; i++) {
    strobe_frame *fr = &f->frames[i];
    if (passes && fr->kind != STROBE_OP_PASS) continue;
    if (prev && (passes ? prev->process == fr->process && prev->window == fr->window : prev->thread == fr->thread)) {
      fr->series = prev->series;
    } else {
      const strobe_capture_thread *th = passes ? NULL : strobe_capture_query_thread(c, fr->thread);
      const char *name = passes ? fr->window : th ? th->name : "";
      fr->series = series_of(f, passes ? fr->process : STROBE_FRAMES_NONE, passes ? STROBE_FRAMES_NONE : fr->thread,
                             name, &cap);
    }
    prev = fr;
    if (fr->series == STROBE_FRAMES_NONE) return free(bd), -1;
    strobe_frame_series *s = &f->series[fr->series];
    s->frames++;
    s->by_state[fr->state]++;
    s->counted += (uint64_t)fr->counted;
    if (passes && fr->counted) bd[n++] = (keyed){fr->begin_ns, fr->series};
  }
  uint32_t k = STROBE_FRAMES_NONE, nm = f->nmarks_read, last = STROBE_FRAMES_NONE;
  for (uint32_t i = 0; marks && i < nm; i++) { /* every kept mark of a thread with frames bounds them */
    uint32_t t = bd[i].key;
    int first = t != last; /* bd[i - 1] may be a boundary already; bd[i + 1] is still a mark */
    last = t;
    if (first && (i + 1 == nm || bd[i + 1].key != t)) continue; /* alone: no frame */
    if (first) {
      const strobe_capture_thread *th = strobe_capture_query_thread(c, t);
      k = series_of(f, STROBE_FRAMES_NONE, t, th ? th->name : "", &cap);
    }
    if (k == STROBE_FRAMES_NONE) return free(bd), -1;
    keyed m = bd[i];
    bd[n++] = (keyed){m.t, k};
  }
  int rc = series_rates(f, bd, n);
  free(bd);
  return rc;
}

/* >>stages: per (process, stage, run-time parent), over the frames that ran it: the rows grouped by key through
 * a small hash (keys are few, rows one per frame and stage), then each key's per-frame totals summarised. */
typedef struct stage_key { uint32_t process, site, parent, known; uint64_t n, at, runs; } stage_key;
static int by_stage_key(const void *x, const void *y) {
  const stage_key *a = x, *b = y;
  if (a->process != b->process) return a->process < b->process ? -1 : 1;
  if (a->site != b->site) return a->site < b->site ? -1 : 1;
  if (a->parent != b->parent) return a->parent < b->parent ? -1 : 1;
  return a->known < b->known ? -1 : a->known > b->known;
}

typedef struct key_table { stage_key *k; uint32_t n, cap; uint32_t *slot; uint32_t nslot; } key_table;

/* The key of stage s, added when new; STROBE_FRAMES_NONE out of memory. */
static uint32_t key_of(key_table *t, const strobe_frame_stage *s) {
  if ((t->n + 1) * 2 > t->nslot) {
    uint32_t ns = t->nslot ? t->nslot * 2 : 256, *sl = calloc(ns, sizeof *sl);
    if (!sl) return STROBE_FRAMES_NONE;
    for (uint32_t i = 0; i < t->n; i++) {
      uint32_t h = (uint32_t)mix(t->k[i].site | (uint64_t)t->k[i].process << 32, t->k[i].parent << 1 | t->k[i].known);
      while (sl[h & (ns - 1)]) h++;
      sl[h & (ns - 1)] = i + 1;
    }
    free(t->slot);
    t->slot = sl, t->nslot = ns;
  }
  uint32_t known = (uint32_t)s->parent_known;
  uint32_t h = (uint32_t)mix(s->site | (uint64_t)s->process << 32, (uint64_t)s->parent << 1 | known);
  for (;; h++) {
    uint32_t i = t->slot[h & (t->nslot - 1)];
    if (!i) break;
    const stage_key *k = &t->k[i - 1];
    if (k->site == s->site && k->process == s->process && k->parent == s->parent && k->known == known) return i - 1;
  }
  if (grow32((void **)&t->k, &t->cap, t->n + 1, sizeof *t->k)) return STROBE_FRAMES_NONE;
  t->k[t->n] = (stage_key){s->process, s->site, s->parent, known, 0, 0, 0};
  t->slot[h & (t->nslot - 1)] = t->n + 1;
  return t->n++;
}

/* Key k's figures from its per-frame totals v (n of them). */
static void summarise(strobe_frames *f, const stage_key *k, double *v) {
  strobe_frames_stage_summary *s = &f->sums[f->nsums++];
  *s = (strobe_frames_stage_summary){k->site, k->parent, (int)k->known, k->process, k->n, k->runs, 0, 0, 0, 0};
  for (uint64_t i = 0; i < k->n; i++) s->total_ns += v[i];
  strobe__dist d = strobe__dist_of(v, (size_t)k->n);
  s->p50_ns = d.p50, s->p95_ns = d.p95, s->max_ns = d.max;
}

static int build_stage_summaries(strobe_frames *f) {
  key_table t = {0};
  uint32_t *which = malloc(((size_t)f->nfstages + 1) * sizeof *which), *last = NULL;
  double *v = malloc(((size_t)f->nfstages + 1) * sizeof *v);
  int rc = -1;
  if (!which || !v) goto done;
  for (uint32_t i = 0; i < f->nframes; i++) /* pass 1: each row's key */
    for (uint32_t k = 0; k < f->frames[i].nstages; k++) {
      uint64_t r = f->fstage0[i] + k;
      if ((which[r] = key_of(&t, &f->fstages[r])) == STROBE_FRAMES_NONE) goto done;
    }
  last = malloc(((size_t)t.n + 1) * sizeof *last);
  f->sums = malloc(((size_t)t.n + 1) * sizeof *f->sums);
  if (!last || !f->sums) goto done;
  for (int round = 0; round < 2; round++) { /* 0: each key's n (frames that ran it); 1: its per-frame totals */
    for (uint32_t k = 0, at = 0; k < t.n; k++) {
      if (round) t.k[k].at = at, at += (uint32_t)t.k[k].n, t.k[k].n = 0;
      last[k] = STROBE_FRAMES_NONE;
    }
    for (uint32_t i = 0; i < f->nframes; i++)
      for (uint32_t k = 0; k < f->frames[i].nstages; k++) {
        uint32_t key = which[f->fstage0[i] + k];
        stage_key *x = &t.k[key];
        int first = last[key] != i;
        last[key] = i;
        if (!round) {
          x->n += (uint64_t)first;
          continue;
        }
        if (first) v[x->at + x->n++] = 0; /* one figure per frame: its runs there summed */
        v[x->at + x->n - 1] += f->fstages[f->fstage0[i] + k].total_ns;
        x->runs += f->fstages[f->fstage0[i] + k].count;
      }
  }
  if (t.n) qsort(t.k, t.n, sizeof *t.k, by_stage_key); /* t.k is NULL without stages */
  for (uint32_t k = 0; k < t.n; k++) summarise(f, &t.k[k], v + t.k[k].at);
  rc = 0;
done:
  free(which), free(v), free(last), free(t.k), free(t.slot);
  return rc;
}

/* One id per stage name: sessions tell stages apart by name, so two call
 * sites of one stage (or one stage of two merged inputs) are one stage;
 * processes keep them apart where they ran in different ones. */
typedef struct named { const char *name; uint32_t id; } named;
static int by_name_id(const void *x, const void *y) {
  const named *a = x, *b = y;
  int d = strcmp(a->name, b->name);
  return d ? d : (a->id < b->id ? -1 : a->id > b->id);
}

static int canonical_stages(strobe_frames *f, const strobe_capture *c) {
  uint32_t limit = strobe_capture_query_site_limit(c), n = 0;
  uint32_t *canon = calloc((size_t)limit + 1, sizeof *canon);
  named *v = malloc(((size_t)limit + 1) * sizeof *v);
  if (!canon || !v) return free(canon), free(v), -1;
  for (uint32_t id = 1; id < limit; id++) {
    const strobe_capture_site *s = strobe_capture_query_site(c, id);
    canon[id] = id;
    if (s && s->kind == STROBE_SITE_STAGE) v[n++] = (named){s->name, id};
  }
  if (n) qsort(v, n, sizeof *v, by_name_id);
  for (uint32_t i = 1; i < n; i++)
    if (!strcmp(v[i].name, v[i - 1].name)) canon[v[i].id] = canon[v[i - 1].id];
  for (uint64_t i = 0; i < f->nstages_raw; i++) {
    raw_stage *r = &f->stages_raw[i];
    if (r->site < limit) r->site = canon[r->site];
    if (r->parent < limit) r->parent = canon[r->parent];
  }
  free(canon), free(v);
  return 0;
}

/* >>finish */
static int choose_source(strobe_frames *f) {
  if (f->nops) return STROBE_FRAME_SOURCE_PASSES; /* a capture with operations: its frames are its passes, if any */
  sort_if_needed(f->marks, f->nmarks, sizeof *f->marks, by_thread_time);
  for (uint32_t i = 1; i < f->nmarks; i++)
    if (f->marks[i].key == f->marks[i - 1].key) return STROBE_FRAME_SOURCE_MARKS;
  return f->ntops ? STROBE_FRAME_SOURCE_TOP_SCOPES : STROBE_FRAME_SOURCE_NONE;
}

static int finish(strobe_frames *f, const strobe_capture *c) {
  const strobe_capture_merge *m = strobe_capture_query_merge(c);
  if (m && !m->ninputs) m = NULL;
  f->source = (uint32_t)choose_source(f);
  if (set_processes(f, m) || canonical_stages(f, c)) return -1;
  if (f->source == STROBE_FRAME_SOURCE_PASSES) {
    if (op_frames(f, m) || build_segments(f)) return -1;
    free(f->evs), free(f->stages_raw); /* in the segments and the frames' stages now */
    f->evs = NULL, f->stages_raw = NULL;
    f->nevs = f->cap_evs = f->nstages_raw = f->cap_stages_raw = 0;
  } else if (f->source != STROBE_FRAME_SOURCE_NONE) {
    if (plain_frames(f) || thread_frame_table(f)) return -1;
  }
  if (build_series(f, c) || build_stage_summaries(f)) return -1;
  return f->failed ? -1 : 0;
}

int strobe_frames_finish(strobe_frames *f, const strobe_capture *c) {
  if (!f || !c) return STROBE_EINVAL;
  if (f->finished) return STROBE_ESTATE;
  f->finished = 1;
  if (finish(f, c)) {
    f->failed = 1;
    f->nframes = f->nseries = f->nsums = 0; /* empty, never half-built */
    f->nsegs = 0;
    f->nthreads = 0;
    return STROBE_ENOMEM;
  }
  if (STROBE__ASSERTIONS) strobe__frames_check(f);
  return 0;
}

/* >>checks: what a finished index promises (analyze/frames_check.h, docs/invariants.md §The frame model). */
static void check_frames(const strobe_frames *f) {
  for (uint32_t i = 0; i < f->nframes; i++) {
    const strobe_frame *fr = &f->frames[i];
    STROBE_ASSERT(fr->state < STROBE_FRAME_STATE_LIMIT);
    STROBE_ASSERT(fr->state != STROBE_FRAME_UNFINISHED || (fr->end_thread == STROBE_FRAMES_NONE && fr->end_ns == 0));
    STROBE_ASSERT(!fr->counted || fr->state == STROBE_FRAME_COMPLETED || fr->state == STROBE_FRAME_PRESENTED ||
                  fr->state == STROBE_FRAME_HANDED_OFF);
    STROBE_ASSERT(i == 0 || !(fr->begin_ns < f->frames[i - 1].begin_ns)); /* by begin (a NaN stays where it is) */
    STROBE_ASSERT(!fr->nstages || (f->fstage0 && f->fstage0[i] + (uint64_t)fr->nstages <= f->nfstages));
    STROBE_ASSERT(fr->series == STROBE_FRAMES_NONE || fr->series < f->nseries);
  }
  for (uint32_t k = 0; k < f->nseries; k++) {
    const strobe_frame_series *s = &f->series[k];
    uint64_t sum = 0;
    for (uint32_t st = 0; st < STROBE_FRAME_STATE_LIMIT; st++) sum += s->by_state[st];
    STROBE_ASSERT(sum == s->frames && s->counted <= s->frames);
  }
}

/* The owner tables: per thread a run of segments (passes) or of frame indexes (marks, scopes), in order. */
static void check_owner_tables(const strobe_frames *f) {
  int ops = f->source == STROBE_FRAME_SOURCE_PASSES;
  if (!f->nthreads) return;
  STROBE_ASSERT(f->thread_seg0[f->nthreads] == (ops ? f->nsegs : f->nframes));
  for (uint32_t t = 0; t < f->nthreads; t++) {
    uint64_t a = f->thread_seg0[t], b = f->thread_seg0[t + 1];
    STROBE_ASSERT(a <= b);
    for (uint64_t i = a; i < b; i++) {
      if (ops) {
        const segment *s = &f->segs[i];
        STROBE_ASSERT(i == a || !(s->open < f->segs[i - 1].open));
        STROBE_ASSERT(s->parent == STROBE_FRAMES_NONE || (s->parent >= a && s->parent < i)); /* the chain ends */
        STROBE_ASSERT(s->frame == STROBE_FRAMES_NONE || s->frame < f->nframes);
      } else {
        const strobe_frame *fr = &f->frames[f->thread_frames[i]];
        STROBE_ASSERT(fr->thread == t);
        STROBE_ASSERT(i == a || !(fr->begin_ns < f->frames[f->thread_frames[i - 1]].begin_ns));
      }
    }
  }
}

void strobe__frames_check(const strobe_frames *f) {
  if (!f || !f->finished || f->failed) return;
  check_frames(f);
  check_owner_tables(f);
}

/* >>owner */
uint32_t strobe_frames_owner(const strobe_frames *f, uint32_t thread, double begin_ns) {
  if (!f || !f->finished || thread >= f->nthreads) return STROBE_FRAMES_NONE;
  uint64_t lo = f->thread_seg0[thread], hi = f->thread_seg0[thread + 1];
  int ops = f->source == STROBE_FRAME_SOURCE_PASSES;
  while (lo < hi) { /* the first entry opened after begin_ns */
    uint64_t mid = lo + (hi - lo) / 2;
    double open = ops ? f->segs[mid].open : f->frames[f->thread_frames[mid]].begin_ns;
    if (open <= begin_ns) lo = mid + 1;
    else hi = mid;
  }
  if (lo == f->thread_seg0[thread]) return STROBE_FRAMES_NONE;
  if (!ops) {
    const strobe_frame *fr = &f->frames[f->thread_frames[lo - 1]];
    return begin_ns < fr->end_ns ? f->thread_frames[lo - 1] : STROBE_FRAMES_NONE;
  }
  /* The innermost open one: the latest opened, or the one open around it when it opened, and so on. */
  for (uint32_t s = (uint32_t)(lo - 1); s != STROBE_FRAMES_NONE; s = f->segs[s].parent)
    if (begin_ns < f->segs[s].close) return f->segs[s].frame;
  return STROBE_FRAMES_NONE;
}

uint32_t strobe_frames_count_span(strobe_frames *f, uint32_t thread, double begin_ns, double self_ns) {
  uint32_t i = strobe_frames_owner(f, thread, begin_ns);
  if (i == STROBE_FRAMES_NONE) return i;
  f->frames[i].spans++;
  f->frames[i].spans_self_ns += self_ns;
  return i;
}

/* >>open */
int strobe_frames_create(const strobe_frames_desc *desc, strobe_frames **out) {
  if (!out) return STROBE_EINVAL;
  *out = NULL;
  strobe_frames *f = calloc(1, sizeof *f);
  if (!f) return STROBE_ENOMEM;
  if (desc) f->desc = *desc;
  if (!f->desc.max_frames) f->desc.max_frames = STROBE_FRAMES_MAX_DEFAULT;
  f->self_label = STROBE_FRAMES_NONE;
  *out = f;
  return 0;
}

void strobe_frames_destroy(strobe_frames *f) {
  if (!f) return;
  for (uint32_t i = 0; i < f->nstrs; i++) free(f->strs[i]);
  free(f->strs), free(f->ops), free(f->hash), free(f->evs), free(f->stages_raw), free(f->marks), free(f->tops);
  free(f->frames), free(f->fstages), free(f->fstage0), free(f->series), free(f->sums), free(f->procs);
  free(f->segs), free(f->thread_seg0), free(f->thread_frames);
  free(f);
}

/* One read of the file: every record to add, or, after finish, every span to count. */
static int read_file(strobe_frames *f, const char *path, int spans) {
  strobe_capture *c;
  int rc = strobe_capture_open(path, &c);
  if (rc) return rc;
  const strobe_capture_record *r;
  int n;
  while (rc == 0 && (n = strobe_capture_next_batch(c, &r)) != 0) {
    if (n < 0) {
      rc = n;
      break;
    }
    for (int i = 0; i < n && rc == 0; i++) {
      if (!spans) rc = strobe_frames_add(f, c, &r[i]);
      else if (r[i].type == STROBE_REC_END && !r[i].unwound)
        strobe_frames_count_span(f, r[i].thread, r[i].time_ns - r[i].duration_ns, r[i].self_ns);
    }
  }
  if (!rc && !spans) rc = strobe_frames_finish(f, c);
  strobe_capture_close(c);
  return rc;
}

int strobe_frames_open(const char *path, const strobe_frames_desc *desc, strobe_frames **out) {
  if (!path || !out) return STROBE_EINVAL;
  int rc = strobe_frames_create(desc, out);
  if (rc) return rc;
  rc = read_file(*out, path, 0);
  if (!rc && (*out)->desc.spans) rc = read_file(*out, path, 1);
  if (rc) {
    strobe_frames_destroy(*out);
    *out = NULL;
  }
  return rc;
}

/* >>queries */
static const char *const g_sources[] = {
#define STROBE__FRAME_SOURCE_NAME(id, value, name) [value] = name,
    STROBE_FRAME_SOURCES(STROBE__FRAME_SOURCE_NAME)
#undef STROBE__FRAME_SOURCE_NAME
};
static const char *const g_states[] = {
#define STROBE__FRAME_STATE_NAME(id, value, name) [value] = name,
    STROBE_FRAME_STATES(STROBE__FRAME_STATE_NAME)
#undef STROBE__FRAME_STATE_NAME
};
const char *strobe_frames_source_name(uint32_t source) {
  return source < STROBE_FRAME_SOURCE_LIMIT ? g_sources[source] : "unknown";
}
const char *strobe_frames_state_name(uint32_t state) {
  return state < STROBE_FRAME_STATE_LIMIT ? g_states[state] : "unknown";
}

uint32_t strobe_frames_query_source(const strobe_frames *f) { return f && f->finished ? f->source : 0; }
uint32_t strobe_frames_query_count(const strobe_frames *f) { return f && f->finished ? f->nframes : 0; }
const strobe_frame *strobe_frames_query_frame(const strobe_frames *f, uint32_t index) {
  return f && f->finished && index < f->nframes ? &f->frames[index] : NULL;
}
const strobe_frame_stage *strobe_frames_query_stages(const strobe_frames *f, uint32_t index, uint32_t *n) {
  const strobe_frame *fr = strobe_frames_query_frame(f, index);
  if (n) *n = fr ? fr->nstages : 0;
  return fr && fr->nstages ? &f->fstages[f->fstage0[index]] : NULL;
}
uint32_t strobe_frames_query_series_count(const strobe_frames *f) { return f && f->finished ? f->nseries : 0; }
const strobe_frame_series *strobe_frames_query_series(const strobe_frames *f, uint32_t index) {
  return f && f->finished && index < f->nseries ? &f->series[index] : NULL;
}
uint32_t strobe_frames_query_stage_count(const strobe_frames *f) { return f && f->finished ? f->nsums : 0; }
const strobe_frames_stage_summary *strobe_frames_query_stage_summary(const strobe_frames *f, uint32_t i) {
  return f && f->finished && i < f->nsums ? &f->sums[i] : NULL;
}
uint32_t strobe_frames_query_process_count(const strobe_frames *f) { return f && f->finished ? f->nprocs : 0; }
const char *strobe_frames_query_process(const strobe_frames *f, uint32_t index) {
  return f && f->finished && index < f->nprocs ? str_at(f, f->procs[index]) : NULL;
}
uint32_t strobe_frames_find(const strobe_frames *f, uint64_t number, uint32_t series) {
  for (uint32_t i = 0; f && f->finished && i < f->nframes; i++) {
    const strobe_frame *fr = &f->frames[i];
    if (fr->number != number || (series != STROBE_FRAMES_NONE && fr->series != series)) continue;
    if (f->source == STROBE_FRAME_SOURCE_PASSES && fr->kind != STROBE_OP_PASS) continue;
    return i;
  }
  return STROBE_FRAMES_NONE;
}
uint32_t strobe_frames_find_op(const strobe_frames *f, uint64_t collector, uint64_t id) {
  if (!f || !f->finished || f->source != STROBE_FRAME_SOURCE_PASSES || !f->hash_cap) return STROBE_FRAMES_NONE;
  uint32_t k = (uint32_t)mix(collector, id) & (f->hash_cap - 1);
  for (; f->hash[k]; k = (k + 1) & (f->hash_cap - 1)) {
    const op_rec *x = &f->ops[f->hash[k] - 1];
    if (x->collector == collector && x->id == id) return x->frame < f->nframes ? x->frame : STROBE_FRAMES_NONE;
  }
  return STROBE_FRAMES_NONE;
}

strobe_frames_cut strobe_frames_query_cut(const strobe_frames *f) {
  strobe_frames_cut c = {0};
  if (f) c = f->cut, c.failed = f->failed;
  return c;
}
