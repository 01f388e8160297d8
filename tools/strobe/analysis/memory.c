/*
 * memory.c — a capture's allocations and messages for `strobe report`
 * (memory.h; docs/memory.md §In strobe report).
 *
 * Owns: the pools by name, the table of blocks live while the capture is
 * read (and of frees read before their allocation), the per-frame counts
 * through the frame model's owner rule, live bytes at each frame's end, the
 * leaks and the largest of them, the messages kept for --messages, and what
 * `strobe explain`'s frames allocated inside their worst stage.
 *
 * Must never: decide which frame a record belongs to itself (the frame
 * model's strobe_frames_owner does), grow past its bounds (counted instead),
 * or read a capture from standard input twice.
 *
 * Contents: >>table >>pools >>records >>finish >>explain >>queries
 */
#include "memory.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* >>table: open addressing by address, linear probing, backward-shift deletion. Address 0 is the empty key
 * (no allocation is recorded at NULL; a capture that says so anyway has the record counted untracked). */
typedef struct mem_slot {
  uint64_t key;
  mem_block_info v;
} mem_slot;
typedef struct mem_table {
  mem_slot *s;
  uint32_t cap, n; /* cap a power of two */
} mem_table;

/* A block is an address in a process: a merged capture holds several processes' heaps (mem_process). */
static uint32_t slot_of(const mem_table *t, uint64_t key, uint32_t proc) {
  return (uint32_t)(((key ^ (uint64_t)proc << 56) * 0x9e3779b97f4a7c15ull) >> 32) & (t->cap - 1);
}

static mem_slot *table_find(mem_table *t, uint64_t key, uint32_t proc) {
  if (!t->cap || !key) return NULL;
  for (uint32_t i = slot_of(t, key, proc);; i = (i + 1) & (t->cap - 1)) {
    if (t->s[i].key == key && t->s[i].v.proc == proc) return &t->s[i];
    if (!t->s[i].key) return NULL;
  }
}

static int table_grow(mem_table *t) {
  uint32_t cap = t->cap ? t->cap * 2 : 4096;
  mem_slot *s = calloc(cap, sizeof *s), *old = t->s;
  if (!s) return -1;
  uint32_t ocap = t->cap;
  t->s = s, t->cap = cap;
  for (uint32_t i = 0; i < ocap; i++)
    if (old[i].key) {
      uint32_t j = slot_of(t, old[i].key, old[i].v.proc);
      while (s[j].key) j = (j + 1) & (cap - 1);
      s[j] = old[i];
    }
  free(old);
  return 0;
}

/* Finds or makes the slot of key (the caller fills its value); returns the slot, or NULL when full (MEM_MAX_BLOCKS) or out of memory. */
static mem_slot *table_put(mem_table *t, uint64_t key, uint32_t proc, int *replaced) {
  *replaced = 0;
  mem_slot *e = table_find(t, key, proc);
  if (e) {
    *replaced = 1;
  } else {
    if (!key || t->n >= MEM_MAX_BLOCKS) return NULL;
    if ((t->n + 1) * 2 > t->cap && table_grow(t)) return NULL;
    uint32_t i = slot_of(t, key, proc);
    while (t->s[i].key) i = (i + 1) & (t->cap - 1);
    e = &t->s[i];
    e->key = key;
    e->v.proc = proc;
    t->n++;
  }
  return e;
}

static void table_remove(mem_table *t, mem_slot *e) {
  uint32_t i = (uint32_t)(e - t->s), mask = t->cap - 1;
  for (uint32_t j = (i + 1) & mask; t->s[j].key; j = (j + 1) & mask) {
    uint32_t home = slot_of(t, t->s[j].key, t->s[j].v.proc);
    /* j's entry may move to the hole at i when its home is not cyclically in (i, j]. */
    if (((j - home) & mask) >= ((j - i) & mask)) {
      t->s[i] = t->s[j];
      i = j;
    }
  }
  t->s[i].key = 0;
  t->n--;
}

/* >>pools */
static int pool_of(mem_report *m, const strobe_capture *c, uint32_t site) {
  const strobe_capture_site *s = strobe_capture_query_site(c, site);
  if (!s) return -1;
  for (uint32_t p = 0; p < m->npools; p++)
    if (!strcmp(m->pools[p].name, s->name)) return (int)p;
  if (m->npools == MEM_MAX_POOLS) return -1;
  mem_pool *p = &m->pools[m->npools];
  uint32_t n = m->nframes ? m->nframes : 1;
  p->frame = calloc(n, sizeof *p->frame);
  p->delta = calloc((size_t)m->nends + 1, sizeof *p->delta);
  p->live_end = malloc(n * sizeof *p->live_end);
  p->name = strdup(s->name); /* the second read's capture is closed before the report is written */
  if (!p->frame || !p->delta || !p->live_end || !p->name) {
    free(p->frame), free(p->delta), free(p->live_end), free((char *)p->name);
    memset(p, 0, sizeof *p);
    m->failed = 1;
    return -1;
  }
  return (int)m->npools++;
}

/* The first frame end at or after t (m->nends: after the last). */
static uint32_t end_bucket(const mem_report *m, double t) {
  uint32_t lo = 0, hi = m->nends;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (m->ends[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static const strobe_frames *g_order_fx; /* for end_order's qsort */
static double frame_end(uint32_t i) { return strobe_frames_query_frame(g_order_fx, i)->end_ns; }
static int by_end(const void *a, const void *b) {
  double x = frame_end(*(const uint32_t *)a), y = frame_end(*(const uint32_t *)b);
  return x < y ? -1 : x > y;
}

/* The frames that ended, by end time. */
static int order_ends(mem_report *m, const strobe_frames *fx) {
  m->nframes = strobe_frames_query_count(fx);
  m->end_order = malloc((m->nframes ? m->nframes : 1) * sizeof *m->end_order);
  m->ends = malloc((m->nframes ? m->nframes : 1) * sizeof *m->ends);
  if (!m->end_order || !m->ends) return -1;
  for (uint32_t i = 0; i < m->nframes; i++)
    if (strobe_frames_query_frame(fx, i)->end_ns > 0) m->end_order[m->nends++] = i;
  g_order_fx = fx;
  if (m->nends) qsort(m->end_order, m->nends, sizeof *m->end_order, by_end);
  for (uint32_t k = 0; k < m->nends; k++) m->ends[k] = frame_end(m->end_order[k]);
  return 0;
}

/* >>records */
/* The process a thread belongs to: in a merged capture the input whose process label prefixes its name
 * (`PROCESS/THREAD`, docs/cli.md §strobe merge), from 1; 0 in a capture of one process or when none matches.
 * Read from the first read's capture, which knows the MERGE block (it comes last). */
static uint32_t mem_process(mem_report *m, const strobe_capture *first, uint32_t thread) {
  const strobe_capture_merge *mg = strobe_capture_query_merge(first);
  const strobe_capture_thread *t = strobe_capture_query_thread(first, thread);
  if (!mg || !mg->ninputs || !t) return 0;
  if (thread < m->nproc_of && m->proc_of[thread]) return m->proc_of[thread] - 1;
  uint32_t proc = 0;
  const char *slash = strchr(t->name, '/');
  for (uint32_t i = 0; slash && i < mg->ninputs && !proc; i++)
    if (strlen(mg->inputs[i].process) == (size_t)(slash - t->name) &&
        !strncmp(mg->inputs[i].process, t->name, (size_t)(slash - t->name)))
      proc = i + 1;
  if (thread >= m->nproc_of) {
    uint32_t n = thread + 64;
    uint32_t *p = realloc(m->proc_of, n * sizeof *p);
    if (!p) return proc; /* not cached: asked again next time */
    memset(p + m->nproc_of, 0, (n - m->nproc_of) * sizeof *p);
    m->proc_of = p, m->nproc_of = n;
  }
  m->proc_of[thread] = proc + 1;
  return proc;
}

static mem_counts *counts_at(mem_report *m, uint32_t pool, uint32_t frame) {
  return frame == STROBE_FRAMES_NONE ? &m->outside : &m->pools[pool].frame[frame];
}

static void block_gone(mem_report *m, const mem_block_info *b, double t, uint32_t frame) {
  mem_pool *p = &m->pools[b->pool];
  p->all.frees++, p->all.freed += b->bytes;
  mem_counts *k = counts_at(m, b->pool, frame);
  k->frees++, k->freed += b->bytes;
  p->delta[end_bucket(m, t)] -= (int64_t)b->bytes;
}

static void on_alloc(mem_report *m, const strobe_frames *fx, uint32_t pool, uint32_t proc,
                     const strobe_capture_record *r) {
  mem_pool *p = &m->pools[pool];
  uint32_t frame = strobe_frames_owner(fx, r->thread, r->time_ns);
  mem_block_info b = {r->bytes, pool, r->thread, r->time_ns, frame, proc};
  p->all.allocs++, p->all.bytes += r->bytes;
  mem_counts *k = counts_at(m, pool, frame);
  k->allocs++, k->bytes += r->bytes;
  p->delta[end_bucket(m, r->time_ns)] += (int64_t)r->bytes;
  mem_slot *early = table_find(m->early, r->address, proc);
  if (early && early->v.time_ns >= r->time_ns) { /* its free was read first (another thread's block) */
    mem_block_info f = early->v;
    table_remove(m->early, early);
    block_gone(m, &b, f.time_ns, f.frame);
    return;
  }
  int replaced;
  mem_slot *e = table_put(m->live, r->address, proc, &replaced);
  if (!e) {
    m->untracked++;
    return;
  }
  if (replaced) { /* allocated again with no free between: that free was not recorded (lost, or before
                   * the interposer loaded); the old block counts as gone from here on */
    m->frees_missing++;
    m->pools[e->v.pool].delta[end_bucket(m, r->time_ns)] -= (int64_t)e->v.bytes;
  }
  e->v = b;
}

static void on_free(mem_report *m, const strobe_frames *fx, uint32_t pool, uint32_t proc,
                    const strobe_capture_record *r) {
  uint32_t frame = strobe_frames_owner(fx, r->thread, r->time_ns);
  mem_slot *e = table_find(m->live, r->address, proc);
  if (e) {
    mem_block_info b = e->v;
    table_remove(m->live, e);
    block_gone(m, &b, r->time_ns, frame);
    return;
  }
  mem_block_info f = {0, pool, r->thread, r->time_ns, frame, proc};
  int replaced;
  mem_slot *w = table_put(m->early, r->address, proc, &replaced);
  if (w) w->v = f;
  else m->unmatched_frees++;
}

static void on_message(mem_report *m, const strobe_capture *c, const strobe_capture_record *r) {
  const strobe_capture_site *s = strobe_capture_query_site(c, r->site);
  m->messages_total++;
  m->messages_content += s && (s->flags & STROBE_SITE_INTERNED);
  if (!m->messages_wanted || m->nmessages >= MEM_MAX_MESSAGES) return;
  if (!m->messages && !(m->messages = malloc(MEM_MAX_MESSAGES * sizeof *m->messages))) {
    m->failed = 1;
    return;
  }
  m->messages[m->nmessages++] = (mem_message){r->site, r->thread, r->time_ns};
}

/* >>finish */
static void keep_largest(mem_report *m, const mem_block_info *b) {
  uint32_t i = m->nlargest < MEM_LARGEST ? m->nlargest++ : MEM_LARGEST - 1;
  if (i == MEM_LARGEST - 1 && m->nlargest == MEM_LARGEST && m->largest[i].bytes >= b->bytes) return;
  m->largest[i] = *b;
  for (; i > 0 && m->largest[i - 1].bytes < m->largest[i].bytes; i--) {
    mem_block_info t = m->largest[i - 1];
    m->largest[i - 1] = m->largest[i];
    m->largest[i] = t;
  }
}

static void finish(mem_report *m) {
  for (uint32_t i = 0; m->live && i < m->live->cap; i++) {
    const mem_slot *e = &m->live->s[i];
    if (!e->key) continue;
    m->pools[e->v.pool].live_blocks++;
    m->pools[e->v.pool].live_bytes += e->v.bytes;
    keep_largest(m, &e->v);
  }
  m->unmatched_frees += m->early ? m->early->n : 0;
  m->peak_frame = STROBE_FRAMES_NONE;
  for (uint32_t p = 0; p < m->npools; p++)
    for (uint32_t f = 0; f < m->nframes; f++) m->pools[p].live_end[f] = NAN;
  double live[MEM_MAX_POOLS] = {0};
  for (uint32_t k = 0; k < m->nends; k++) {
    double sum = 0;
    for (uint32_t p = 0; p < m->npools; p++) {
      live[p] += (double)m->pools[p].delta[k];
      m->pools[p].live_end[m->end_order[k]] = live[p];
      sum += live[p];
    }
    if (m->peak_frame == STROBE_FRAMES_NONE || sum > m->peak_bytes) m->peak_bytes = sum, m->peak_frame = m->end_order[k];
  }
}

static int has_memory_sites(const strobe_capture *c) {
  for (uint32_t id = 1; id < strobe_capture_query_site_limit(c); id++) {
    const strobe_capture_site *s = strobe_capture_query_site(c, id);
    if (s && (s->kind == STROBE_SITE_ALLOC || s->kind == STROBE_SITE_FREE || s->kind == STROBE_SITE_MESSAGE)) return 1;
  }
  return 0;
}

int mem_collect(mem_report *m, agg *a, const strobe_capture *c, const char *path, int is_stdin) {
  int wanted = m->messages_wanted;
  memset(m, 0, sizeof *m);
  m->messages_wanted = wanted;
  if (!has_memory_sites(c)) {
    m->why = "the capture records no allocations or messages (docs/memory.md)";
    return CLI_OK;
  }
  m->recorded = 1;
  if (is_stdin) {
    m->why = "allocations and messages read the capture twice: give a file, not standard input";
    return CLI_OK;
  }
  m->live = calloc(1, sizeof *m->live);
  m->early = calloc(1, sizeof *m->early);
  if (!m->live || !m->early || !a->fx || order_ends(m, a->fx)) {
    m->why = a->fx ? "out of memory" : "no frame model";
    m->failed = 1;
    return CLI_OK;
  }
  cli_input in;
  int rc = cli_open(&in, "report", path, 1);
  if (rc) return rc;
  strobe_capture_record r;
  while (cli_next(&in, &r) > 0) {
    if (r.type == STROBE_REC_MESSAGE) on_message(m, in.cap, &r);
    if (r.type != STROBE_REC_ALLOC && r.type != STROBE_REC_FREE) continue;
    int pool = pool_of(m, in.cap, r.site);
    if (pool < 0) m->pools_cut++;
    else if (r.type == STROBE_REC_ALLOC) on_alloc(m, a->fx, (uint32_t)pool, mem_process(m, c, r.thread), &r);
    else on_free(m, a->fx, (uint32_t)pool, mem_process(m, c, r.thread), &r);
  }
  rc = in.rc < 0 ? CLI_FAIL : CLI_OK; /* the first read said how the file ends */
  cli_close(&in);
  finish(m);
  m->available = !m->failed;
  if (m->failed) m->why = "out of memory";
  return rc;
}

void mem_free(mem_report *m) {
  for (uint32_t p = 0; p < m->npools; p++) {
    free(m->pools[p].frame);
    free(m->pools[p].delta);
    free(m->pools[p].live_end);
    free((char *)m->pools[p].name);
  }
  if (m->live) free(m->live->s);
  if (m->early) free(m->early->s);
  free(m->live);
  free(m->early);
  free(m->end_order);
  free(m->ends);
  free(m->messages);
  free(m->proc_of);
  memset(m, 0, sizeof *m);
}

/* >>explain: a stage's runs on a frame's threads, counted open per target and thread slot (its first and last). */
typedef struct stage_watch {
  const strobe_frame *f;
  const char *stage;
  uint32_t open[2];
} stage_watch;

static int watch_slot(const stage_watch *w, uint32_t thread) {
  return thread == w->f->thread ? 0 : thread == w->f->end_thread ? 1 : -1;
}

static void watch_record(stage_watch *w, mem_in_frame *o, const strobe_capture *c, const strobe_frames *fx,
                         uint32_t frame, const strobe_capture_record *r) {
  int slot = watch_slot(w, r->thread);
  if (r->type == STROBE_REC_ALLOC) {
    o->known = 1;
    if (strobe_frames_owner(fx, r->thread, r->time_ns) != frame) return;
    o->allocs++, o->bytes += r->bytes;
    if (slot >= 0 && w->open[slot]) o->stage_allocs++, o->stage_bytes += r->bytes;
    return;
  }
  if (slot < 0 || !w->stage || r->time_ns < w->f->begin_ns || (w->f->end_ns > 0 && r->time_ns > w->f->end_ns + 1))
    return;
  const strobe_capture_site *s = strobe_capture_query_site(c, r->site);
  if (!s || strcmp(s->name, w->stage)) return;
  if (r->type == STROBE_REC_BEGIN) w->open[slot]++;
  else if (w->open[slot]) w->open[slot]--;
}

int mem_in_frames(const char *cmd, const char *path, const strobe_frames *fx, const uint32_t *frames,
                  const char *const *stages, uint32_t n, mem_in_frame *out) {
  memset(out, 0, n * sizeof *out);
  stage_watch *w = calloc(n ? n : 1, sizeof *w);
  if (!w) return CLI_FAIL;
  for (uint32_t i = 0; i < n; i++) w[i] = (stage_watch){strobe_frames_query_frame(fx, frames[i]), stages[i], {0, 0}};
  cli_input in;
  int rc = cli_open(&in, cmd, path, 1);
  if (rc) {
    free(w);
    return rc;
  }
  const strobe_capture_record *r;
  while ((r = cli_next_ref(&in)) != NULL) {
    if (r->type != STROBE_REC_ALLOC && r->type != STROBE_REC_BEGIN && r->type != STROBE_REC_END) continue;
    for (uint32_t i = 0; i < n; i++) watch_record(&w[i], &out[i], in.cap, fx, frames[i], r);
  }
  int known = 0;
  for (uint32_t i = 0; i < n; i++) known |= out[i].known;
  for (uint32_t i = 0; i < n; i++) out[i].known = known;
  rc = in.rc < 0 ? CLI_FAIL : CLI_OK;
  cli_close(&in);
  free(w);
  return rc;
}

/* >>queries */
mem_counts mem_frame_counts(const mem_report *m, uint32_t frame) {
  mem_counts s = {0, 0, 0, 0};
  for (uint32_t p = 0; p < m->npools; p++) {
    const mem_counts *k = &m->pools[p].frame[frame];
    s.allocs += k->allocs, s.bytes += k->bytes, s.frees += k->frees, s.freed += k->freed;
  }
  return s;
}

double mem_frame_live(const mem_report *m, uint32_t frame) {
  double s = 0;
  for (uint32_t p = 0; p < m->npools; p++) s += m->pools[p].live_end[frame];
  return s;
}

static const mem_report *g_top_m; /* for mem_top_frames' qsort */
static int by_bytes(const void *a, const void *b) {
  uint64_t x = mem_frame_counts(g_top_m, *(const uint32_t *)a).bytes;
  uint64_t y = mem_frame_counts(g_top_m, *(const uint32_t *)b).bytes;
  if (x != y) return x > y ? -1 : 1;
  return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

uint32_t mem_top_frames(const mem_report *m, uint32_t *out, uint32_t n) {
  uint32_t *all = malloc((m->nframes ? m->nframes : 1) * sizeof *all);
  if (!all) return 0;
  uint32_t k = 0;
  for (uint32_t f = 0; f < m->nframes; f++)
    if (mem_frame_counts(m, f).allocs || mem_frame_counts(m, f).frees) all[k++] = f;
  g_top_m = m;
  if (k) qsort(all, k, sizeof *all, by_bytes);
  if (n > k) n = k;
  memcpy(out, all, n * sizeof *out);
  free(all);
  return n;
}
