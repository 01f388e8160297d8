/*
 * cmd_merge.c — `strobe merge A.strobe B.strobe ... -o all.strobe`: puts the
 * processes of several captures side by side on one timeline (docs/cli.md
 * §strobe merge, docs/sessions.md §Across processes). Captures of one host (one
 * boot: the header's boot_id) share CLOCK_MONOTONIC, so each event's time is
 * its capture's epoch_mono_ns plus its time since that epoch, exactly; the
 * merged capture counts in nanoseconds of that clock. Every thread keeps its
 * lane, named after its process ("screen/ui"), every site, label, scope,
 * number, frame mark and operation is re-encoded through the library's own
 * writer, and both sides of an operation handed between processes are kept,
 * joinable by origin collector and operation id.
 *
 * Captures of other boots are placed through clock-offset samples
 * (docs/sessions.md §Across hosts; >>alignment); GPU and producer records
 * are carried with their domains and lanes named after their process;
 * UI-tree snapshots, sampled stacks and context switches, attachments and
 * deep captures are carried as the content they are (>>content), their ids
 * renumbered where two inputs' would collide (>>ids), each marked with the
 * input it came from (>>origin). A merged capture is
 * merged again as the inputs it holds (>>flattened): the same capture as
 * merging them all at once. One recording given twice (a copy, or a merge
 * with one of its inputs) is known by its content and refused (>>duplicates).
 *
 * Must never: write over one of its inputs, wait on a FIFO, merge captures
 * whose clocks it cannot align (another boot no sample links, or no boot id)
 * without saying so and stopping, or drop a record without counting it
 * (what the merged capture cannot hold is counted by type in the MERGE
 * block and named).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "collect/collect.h"
#include "format/capture_writer.h"
#include "format/json_writer.h"
#include "probe/probe.h"
#include "strobe/sample.h"

#define CMD "merge"
#define MAX_INPUTS 64
#define MAX_LABELS 4095u /* label ids fit 12 bits in an operation counter's word (probe/probe.h) */
#define MAX_FUNCTIONS 1048576u /* sampled function ids a reader takes (docs/capture-format.md, SAMPLE_FUNCS) */

static int usage(FILE *f) {
  fprintf(f,
          "usage: strobe merge A.strobe B.strobe [...] -o OUT.strobe [--same-host] [--quiet]\n"
          "Puts the processes of several captures side by side on one timeline, aligned through their\n"
          "shared monotonic clock (one boot_id) or the clock-offset samples they carry (other hosts).\n"
          "Threads are named PROCESS/THREAD; operations handed between the processes keep both sides;\n"
          "UI-tree snapshots, samples, attachments and deep captures are carried, each snapshot, attachment\n"
          "and deep capture marked with its process (strobe tree and strobe calls name it; --process picks\n"
          "one of a frame id two processes share). A merged capture can be merged again.\n"
          "  -o, --output FILE  the merged capture (never one of the inputs)\n"
          "      --same-host    take captures without a boot id (older, or written by a tool) as written on\n"
          "                     the same host and boot as the others: their epoch_mono_ns is that clock\n"
          "  -q, --quiet        no progress bar, no summary line\n");
  return f == stdout ? CLI_OK : CLI_USAGE;
}

/* A sorted set of 64-bit ids (OS thread ids, resource ids). */
typedef struct id_set {
  uint64_t *v;
  uint32_t n, cap;
} id_set;

typedef struct merge_input {
  const char *path;
  strobe_capture_header h;
  char process[80];        /* its process label, from its operations handed across processes; else pid_<pid>;
                            * a merged input: its inputs' labels */
  int merged;              /* >>flattened: a merged capture, whose lanes are named and collectors numbered already */
  strobe_capture_merge sub; /* its MERGE block, when merged */
  uint32_t flat;           /* its first input in the flattened list (the MERGE block's inputs) */
  strobe_capture_totals t; /* its totals, from the first read */
  id_set tids, res;        /* >>ids: the OS thread ids and resource ids it names... */
  id_set tids_to, res_to;  /* ...and what each becomes in the merge, same order */
  uint32_t *funcs;         /* its sampled function id -> the merged one (0: not yet) */
  uint32_t nfuncs;
  uint32_t *sites;         /* its site id -> the merged one (0: not yet) */
  uint32_t nsites;
  uint32_t thread_base;    /* its thread i is merged thread thread_base + i */
  uint32_t nthreads;
  const strobe_capture *cap; /* while it is being merged */
  uint32_t alignment;      /* STROBE_ALIGN_* */
  uint32_t hops;           /* clock-offset samples chained to reach the reference clock */
  int64_t shift_ns;        /* its CLOCK_MONOTONIC + shift_ns = the merged clock */
  uint64_t error_ns;       /* the bound of that shift */
  double *tfirst;          /* >>duplicates: per thread index, its first event's time since the epoch (ns; INFINITY: none) */
  uint32_t ntfirst;
  double first[STROBE_CAPTURE_MAX_MERGED]; /* per recording it holds (1, or a merge's inputs): the CLOCK_MONOTONIC
                                            * ns of its first event; INFINITY when it has none */
} merge_input;

/* Every input's clock-offset samples, with the host that took each (strobe.h >>hosts). */
typedef struct offset_pool {
  strobe_capture_clock_offset *s;
  uint32_t n, cap;
  uint64_t replaced;
} offset_pool;

typedef struct merger {
  strobe__writer *w;
  uint32_t next_site, next_thread;
  uint32_t next_func;      /* sampled functions defined */
  uint64_t next_tree, next_deep; /* snapshots and deep captures written: their merged numbers */
  uint32_t origin;         /* the last ORIGIN written: the content's flattened input + 1; UINT32_MAX: none yet */
  strobe__tree_node *tnodes; /* scratch: one snapshot or deep capture being re-encoded */
  strobe__tree_prop *tprops;
  uint32_t cap_tnodes, cap_tprops;
  strobe__draw *calls;
  strobe_draw_ref *refs;
  uint32_t cap_calls, cap_refs;
  char *labels[MAX_LABELS + 1]; /* merged label id -> text */
  uint32_t nlabels;
  uint64_t end_ns;
  uint64_t not_merged[STROBE_CAPTURE_REC_TYPES]; /* by record type: counted in the MERGE block */
  strobe_misuse misuse;
} merger;

/* The merged label id of text (defined on first use); 0 when the table is full or text is empty. */
static uint32_t label_of(merger *m, const char *text) {
  if (!text || !text[0]) return 0;
  for (uint32_t i = 1; i <= m->nlabels; i++)
    if (!strcmp(m->labels[i], text)) return i;
  if (m->nlabels == MAX_LABELS) return 0;
  char *copy = strdup(text);
  if (!copy) return 0;
  m->labels[++m->nlabels] = copy;
  strobe__writer_label(m->w, m->nlabels, copy);
  return m->nlabels;
}

/* A time of input `in` on the merged clock: CLOCK_MONOTONIC nanoseconds. */
static uint64_t mono_ns(const merge_input *in, double time_ns) {
  double t = (double)in->h.epoch_mono_ns + (double)in->shift_ns + time_ns;
  return t <= 0 ? 0 : (uint64_t)llround(t);
}

static uint64_t span_ns(double ns) { return ns <= 0 ? 0 : (uint64_t)llround(ns); }

static uint64_t f64_bits(double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return u;
}

/* >>events: one record as the ring events that make it (strobe.h STROBE__EVENT_KINDS). */
typedef struct batch {
  strobe__event ev[4 + 3 * STROBE__OPEV_MAX_SLOTS];
  size_t n;
} batch;

static void put(batch *b, uint64_t ts, uint32_t kind, uint32_t data) { b->ev[b->n++] = (strobe__event){ts, kind, data}; }

static void put_op(batch *b, uint64_t ts, uint32_t sub, const uint64_t *w, const uint32_t *d, uint32_t n) {
  put(b, ts, STROBE__EV_OP, sub | n << 8);
  for (uint32_t i = 0; i < n; i++) put(b, w[i], STROBE__EV_PAYLOAD, d[i]);
}

static uint32_t op_flags(const strobe_capture_op *op, int end) {
  uint32_t f = op->kind & 0xffu;
  if (op->app_frame_id) f |= STROBE__OPF_APP_FRAME;
  if (op->devtools) f |= STROBE__OPF_DEVTOOLS;
  if (end) {
    if (op->committed) f |= STROBE__OPF_COMMITTED;
    if (op->handed_off) f |= STROBE__OPF_HANDED_OFF;
    if (op->detail) f |= STROBE__OPF_DETAIL;
    if (op->idle) f |= STROBE__OPF_IDLE;
  }
  return f;
}

/* An operation record as the operation event it was written from (docs/capture-format.md, OPS). */
static int op_events(merger *m, merge_input *in, const strobe_capture_record *r, uint64_t ts, batch *b) {
  const strobe_capture_op *op = r->op;
  /* Merged collector numbers are input << 8 | collector, the input's place in the flattened list: a merged
   * input's numbers already are, of its own list. */
  uint32_t sub = in->merged ? op->collector >> 8 : 0, own = in->merged ? op->collector & 0xffu : op->collector;
  if (own > 0xffu || (in->merged && sub >= in->sub.ninputs)) return -1;
  uint32_t collector = (in->flat + sub) << 8 | own;
  uint64_t w[STROBE__OPEV_MAX_SLOTS];
  uint32_t d[STROBE__OPEV_MAX_SLOTS];
  w[0] = op->id, d[0] = collector;
  switch (r->type) {
    case STROBE_REC_OP_BEGIN:
      w[1] = op->frame_id, d[1] = label_of(m, op->window);
      w[2] = 0, d[2] = op_flags(op, 0);
      put_op(b, ts, STROBE__OPEV_BEGIN, w, d, 3);
      return 0;
    case STROBE_REC_OP_TAKE:
    case STROBE_REC_OP_RESUME:
      if (!op->remote) {
        put_op(b, ts, r->type == STROBE_REC_OP_TAKE ? STROBE__OPEV_TAKE : STROBE__OPEV_RESUME, w, d, 1);
      } else if (r->type == STROBE_REC_OP_TAKE) {
        w[1] = op->origin_collector, d[1] = label_of(m, op->peer);
        w[2] = op->origin_pid, d[2] = label_of(m, op->process);
        put_op(b, ts, STROBE__OPEV_REMOTE_OUT, w, d, 3);
      } else {
        w[1] = op->origin_collector, d[1] = label_of(m, op->peer);
        w[2] = op->origin_id, d[2] = op->origin_pid;
        w[3] = mono_ns(in, strobe_capture_ticks_to_ns(in->cap, op->handed_off_ticks)), d[3] = label_of(m, op->process);
        put_op(b, ts, STROBE__OPEV_REMOTE_IN, w, d, 4);
      }
      return 0;
    case STROBE_REC_OP_END: break;
    default: return -1;
  }
  uint32_t n = 0;
  w[n] = op->id, d[n++] = collector;
  w[n] = op->frame_id, d[n++] = label_of(m, op->window);
  w[n] = mono_ns(in, op->start_ns), d[n++] = op_flags(op, 1) | label_of(m, op->population) << 16;
  w[n] = (uint64_t)op->stages_dropped << 32 | op->counters_dropped, d[n++] = op->nstages | op->ncounters << 16;
  for (uint32_t i = 0; i < op->nstages; i++) {
    const strobe_capture_stage *s = &op->stages[i];
    uint32_t site = s->site < in->nsites ? in->sites[s->site] : 0;
    if (!site) return -1;
    w[n] = span_ns(s->total_ns), d[n++] = site;
    w[n] = span_ns(s->min_ns), d[n++] = s->count;
    uint32_t parent = s->parent < in->nsites ? in->sites[s->parent] : 0;
    if (s->parent && !parent) return -1;
    w[n] = span_ns(s->max_ns), d[n++] = parent | (s->remote ? STROBE__OPEV_STAGE_REMOTE : 0u);
  }
  for (uint32_t i = 0; i < op->ncounters; i++) {
    w[n] = f64_bits(op->counters[i].value);
    d[n++] = label_of(m, op->counters[i].name) | label_of(m, op->counters[i].kind) << 16;
  }
  put_op(b, ts, STROBE__OPEV_END, w, d, n);
  return 0;
}

/* A site of input `in`, defined in the merged capture on first sight. */
static void merge_site(merger *m, merge_input *in, uint32_t id) {
  const strobe_capture_site *cs = strobe_capture_query_site(in->cap, id);
  if (!cs) return;
  if (id >= in->nsites) {
    uint32_t n = id + 256;
    uint32_t *grown = realloc(in->sites, n * sizeof *grown);
    if (!grown) return;
    memset(grown + in->nsites, 0, (n - in->nsites) * sizeof *grown);
    in->sites = grown;
    in->nsites = n;
  }
  if (in->sites[id]) return;
  in->sites[id] = ++m->next_site;
  strobe_site site = {cs->name, cs->category[0] ? cs->category : NULL, cs->parent[0] ? cs->parent : NULL, cs->file,
                      cs->function, cs->line, cs->kind, 0, cs->unit, cs->flags};
  strobe__writer_site(m->w, in->sites[id], &site);
}

static uint32_t site_of(const merge_input *in, uint32_t id) { return id < in->nsites ? in->sites[id] : 0; }

/* A label naming one input's clock domain or lane, kept apart from another process's of the same name. */
static uint32_t own_label(merger *m, const merge_input *in, const char *name) {
  if (!name || !name[0]) return 0;
  if (in->merged) return label_of(m, name); /* named after their processes already */
  char text[256];
  snprintf(text, sizeof text, "%s/%s", in->process, name);
  return label_of(m, text);
}

/* A clock-domain pair, GPU span, frame instant or producer span as the GPU event it was written from
 * (docs/capture-format.md, DEVICE): host ticks become merged ns, device ticks stay the device's (its pairs,
 * carried too, map them), domains and lanes are named after their process. 0, or -1 when a label could not
 * be defined (counted). */
static int device_events(merger *m, merge_input *in, const strobe_capture_record *r, uint64_t ts, batch *b) {
  const strobe_capture_device *d = r->device;
  uint64_t w[STROBE__GPUEV_MAX_SLOTS] = {0};
  uint32_t x[STROBE__GPUEV_MAX_SLOTS] = {0};
  uint32_t sub, n;
  switch (r->type) {
    case STROBE_REC_CLOCK_PAIR:
      w[0] = d->device_ticks, x[0] = own_label(m, in, d->domain);
      w[1] = mono_ns(in, strobe_capture_ticks_to_ns(in->cap, d->host_before));
      w[2] = f64_bits(d->ticks_per_second);
      ts = mono_ns(in, strobe_capture_ticks_to_ns(in->cap, d->host_after));
      if (!x[0]) return -1;
      sub = STROBE__GPUEV_PAIR, n = 3;
      break;
    case STROBE_REC_GPU_SPAN:
      w[0] = d->device_begin, x[0] = own_label(m, in, d->domain);
      w[1] = d->device_end, x[1] = own_label(m, in, d->queue);
      w[2] = d->frame_id, x[2] = site_of(in, r->site);
      x[3] = label_of(m, d->pass);
      if (!x[0] || !x[1] || !x[2]) return -1;
      sub = STROBE__GPUEV_SPAN, n = 4;
      break;
    case STROBE_REC_GPU_MARK:
      w[0] = d->frame_id, x[0] = d->instant;
      sub = STROBE__GPUEV_MARK, n = 1;
      break;
    case STROBE_REC_LANE_SPAN:
      x[0] = d->domain && d->domain[0] ? own_label(m, in, d->domain) : 0;
      if (x[0]) { /* a device domain's ticks: its pairs map them */
        w[0] = d->device_begin, w[1] = d->device_end;
      } else { /* host ticks: onto the merged clock like every host time */
        w[0] = mono_ns(in, strobe_capture_ticks_to_ns(in->cap, d->device_begin));
        w[1] = mono_ns(in, strobe_capture_ticks_to_ns(in->cap, d->device_end));
        if (w[1] < w[0]) w[1] = w[0];
      }
      x[1] = own_label(m, in, d->queue), x[2] = site_of(in, r->site);
      if (!x[1] || !x[2] || (d->domain && d->domain[0] && !x[0])) return -1;
      sub = STROBE__GPUEV_LANE_SPAN, n = 3;
      break;
    default: return -1;
  }
  put(b, ts, STROBE__EV_GPU, sub | n << 8);
  for (uint32_t i = 0; i < n; i++) put(b, w[i], STROBE__EV_PAYLOAD, x[i]);
  return 0;
}

/* >>ids: sorted sets of ids, and what an input's ids become. */
static int set_add(id_set *s, uint64_t v) { /* unsorted append; set_sort sorts and drops repeats */
  if (s->n && s->v[s->n - 1] == v) return 0;
  if (strobe__grow((void **)&s->v, &s->cap, s->n + 1, sizeof *s->v, 64)) return STROBE_ENOMEM;
  s->v[s->n++] = v;
  return 0;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void set_sort(id_set *s) {
  if (!s->n) return;
  if (s->n) qsort(s->v, s->n, sizeof *s->v, cmp_u64); /* v is NULL when empty */
  uint32_t k = 1;
  for (uint32_t i = 1; i < s->n; i++)
    if (s->v[i] != s->v[k - 1]) s->v[k++] = s->v[i];
  s->n = k;
}

static int set_index(const id_set *s, uint64_t v) {
  uint32_t lo = 0, hi = s->n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (s->v[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo < s->n && s->v[lo] == v ? (int)lo : -1;
}

/* What input id `v` of set `from` became (its position in `to`); v itself when the set does not hold it. */
static uint64_t remapped(const id_set *from, const id_set *to, uint64_t v) {
  int i = set_index(from, v);
  return i < 0 || (uint32_t)i >= to->n ? v : to->v[i];
}

static void set_free(id_set *s) { free(s->v); memset(s, 0, sizeof *s); }

/* Each input's ids kept unless an earlier input already holds them: then moved by `step` times its flattened
 * index (and again while taken), so inputs cannot collide and a merge of merges numbers them as merging every
 * input at once does. `used` collects what every input's ids became. 0 or STROBE_ENOMEM. */
static int plan_ids(merge_input *in, int n, size_t off_from, size_t off_to, uint64_t step) {
  id_set used = {0};
  int rc = 0;
  for (int i = 0; i < n && !rc; i++) {
    const id_set *from = (const id_set *)((const char *)&in[i] + off_from);
    id_set *to = (id_set *)((char *)&in[i] + off_to);
    id_set mine = {0};
    for (uint32_t k = 0; k < from->n && !rc; k++) {
      uint64_t v = from->v[k];
      if (v && set_index(&used, v) >= 0) { /* 0 is no id (a fiber's lane): kept */
        v += (uint64_t)in[i].flat * step;
        while (set_index(&used, v) >= 0 || set_index(from, v) >= 0) v += step;
      }
      rc = set_add(to, v) ? STROBE_ENOMEM : 0;
      if (!rc) rc = set_add(&mine, v) ? STROBE_ENOMEM : 0;
    }
    for (uint32_t k = 0; k < mine.n && !rc; k++) rc = set_add(&used, mine.v[k]) ? STROBE_ENOMEM : 0;
    set_sort(&used);
    set_free(&mine);
  }
  set_free(&used);
  return rc;
}

/* >>content: a sampled function of input `in`, defined in the merged capture on first use; 0 past the bound. */
static uint32_t func_of(merger *m, merge_input *in, uint32_t id) {
  if (id >= in->nfuncs) {
    uint32_t n = id + 256;
    uint32_t *grown = realloc(in->funcs, n * sizeof *grown);
    if (!grown) return 0;
    memset(grown + in->nfuncs, 0, (n - in->nfuncs) * sizeof *grown);
    in->funcs = grown;
    in->nfuncs = n;
  }
  if (in->funcs[id]) return in->funcs[id];
  const strobe_capture_function *f = strobe_capture_query_function(in->cap, id);
  if (!f || m->next_func == MAX_FUNCTIONS) return 0;
  in->funcs[id] = ++m->next_func;
  strobe__writer_sample_function(m->w, m->next_func, f->name, f->module, f->resolved);
  return in->funcs[id];
}

/* A SAMPLE or SWITCH record as the sampler record it was written from (docs/capture-format.md, SAMPLES): its
 * thread by its (moved) OS thread id, its frames by merged function ids. 0, or -1 (counted). */
static int merge_sample(merger *m, merge_input *in, const strobe_capture_record *r, uint64_t ts) {
  const strobe_capture_sample *s = r->sample;
  uint32_t frames[STROBE_SAMPLE_MAX_FRAMES];
  strobe__cpu_sample cs = {ts, remapped(&in->tids, &in->tids_to, s->os_tid), 0, 0, 0, 0};
  if (r->type == STROBE_REC_SAMPLE) {
    if (s->nframes > STROBE_SAMPLE_MAX_FRAMES) return -1;
    for (uint32_t k = 0; k < s->nframes; k++)
      if (!(frames[k] = func_of(m, in, s->frames[k]))) return -1;
    cs.kind = STROBE__SAMPLE_CPU, cs.flags = s->cut ? STROBE__SAMPLE_CUT : 0, cs.nframes = s->nframes;
  } else {
    cs.kind = s->out ? STROBE__SAMPLE_SWITCH_OUT : STROBE__SAMPLE_SWITCH_IN;
    cs.flags = s->out && s->preempted ? STROBE__SAMPLE_PREEMPTED : 0;
  }
  strobe__writer_samples(m->w, &cs, 1, frames);
  return 0;
}

/* Index of `name` in a table of n names (appended when new, up to max); -1 when full. Names are the capture's
 * own strings: most repeats are the same pointer. */
static int name_index(const char **names, uint32_t *n, uint32_t max, const char *name) {
  for (uint32_t i = 0; i < *n; i++)
    if (names[i] == name || !strcmp(names[i], name)) return (int)i;
  if (*n == max) return -1;
  names[*n] = name;
  return (int)(*n)++;
}

/* A TREE record as the snapshot it was written from (docs/capture-format.md, TREE): numbered in the merge, its
 * time on the merged clock, its element types as merged sites. 0, or -1 (counted). */
static int merge_tree(merger *m, merge_input *in, const strobe_capture_tree *ct, uint64_t ts) {
  uint32_t nprops = 0;
  for (uint32_t i = 0; i < ct->nnodes; i++) nprops += ct->nodes[i].nprops;
  if (strobe__grow((void **)&m->tnodes, &m->cap_tnodes, ct->nnodes + 1, sizeof *m->tnodes, 64) ||
      strobe__grow((void **)&m->tprops, &m->cap_tprops, nprops + 1, sizeof *m->tprops, 64))
    return -1;
  strobe__tree t;
  memset(&t, 0, sizeof t);
  t.seq = m->next_tree + 1, t.ticks = ts, t.nnodes = ct->nnodes;
  t.nodes_dropped = ct->nodes_dropped, t.props_dropped = ct->props_dropped;
  t.nodes = m->tnodes, t.props = m->tprops;
  for (uint32_t i = 0; i < ct->nnodes; i++) {
    const strobe_capture_tree_node *cn = &ct->nodes[i];
    strobe__tree_node *n = &m->tnodes[i];
    *n = (strobe__tree_node){cn->id, {cn->x, cn->y, cn->width, cn->height}, cn->depth, site_of(in, cn->type),
                             t.nprops, cn->nprops};
    if (!n->type) return -1;
    for (uint32_t k = 0; k < cn->nprops; k++) {
      int key = name_index(t.keys, &t.nkeys, STROBE_TREE_MAX_KEYS, cn->props[k].name);
      if (key < 0) return -1;
      m->tprops[t.nprops++] = (strobe__tree_prop){(uint32_t)key, cn->props[k].value};
    }
  }
  if (!strobe__writer_tree(m->w, &t)) return -1;
  m->next_tree++;
  return 0;
}

/* An ATTACHMENT or DEEP record as the content it was written from (docs/capture-format.md, ATTACH, DEEP): its
 * time on the merged clock, its resources moved where they would collide, deep captures numbered in the merge;
 * frame ids kept, as operations keep theirs. An attachment whose content the input does not hold (stored
 * earlier, or cut) is written without it: the writer says stored earlier or cut. 0, or -1 (counted). */
static int merge_content(merger *m, merge_input *in, const strobe_capture_record *r, uint64_t ts) {
  strobe__content c;
  memset(&c, 0, sizeof c);
  if (r->type == STROBE_REC_ATTACHMENT) {
    const strobe_capture_attachment *a = r->attachment;
    c.type = STROBE__CONTENT_ATTACH, c.frame = a->frame, c.ticks = ts;
    c.resource = remapped(&in->res, &in->res_to, a->resource);
    snprintf(c.media_type, sizeof c.media_type, "%s", a->media_type);
    c.width = a->width, c.height = a->height, c.size = (size_t)a->size;
    c.bytes = a->state == STROBE_CAPTURE_ATTACH_STORED ? (uint8_t *)(uintptr_t)a->bytes : NULL;
    return strobe__writer_content(m->w, &c) ? 0 : -1;
  }
  const strobe_capture_deep *d = r->deep;
  uint32_t nrefs = 0;
  for (uint32_t i = 0; i < d->ncalls; i++) nrefs += d->calls[i].nrefs;
  if (strobe__grow((void **)&m->calls, &m->cap_calls, d->ncalls + 1, sizeof *m->calls, 64) ||
      strobe__grow((void **)&m->refs, &m->cap_refs, nrefs + 1, sizeof *m->refs, 64))
    return -1;
  c.type = STROBE__CONTENT_DEEP, c.frame = d->frame, c.ticks = ts, c.seq = m->next_deep + 1;
  c.ncalls = d->ncalls, c.calls_dropped = d->calls_dropped, c.calls = m->calls, c.refs = m->refs;
  for (uint32_t i = 0; i < d->ncalls; i++) {
    const strobe_capture_draw_call *cc = &d->calls[i];
    int kind = name_index(c.labels, &c.nlabels, STROBE_DEEP_MAX_LABELS, cc->kind);
    int pipeline = name_index(c.labels, &c.nlabels, STROBE_DEEP_MAX_LABELS, cc->pipeline);
    int pass = name_index(c.labels, &c.nlabels, STROBE_DEEP_MAX_LABELS, cc->pass);
    if (kind < 0 || pipeline < 0 || pass < 0) return -1;
    strobe__draw *dc = &m->calls[i];
    *dc = (strobe__draw){(uint32_t)kind, (uint32_t)pipeline, (uint32_t)pass, cc->vertex_first, cc->vertex_count,
                         cc->instance_first, cc->instance_count, c.nrefs, cc->nrefs, (uint32_t)cc->has_geometry,
                         {0}, {0}};
    memcpy(dc->bounds, cc->bounds, sizeof dc->bounds);
    memcpy(dc->clip, cc->clip, sizeof dc->clip);
    for (uint32_t k = 0; k < cc->nrefs; k++)
      m->refs[c.nrefs++] = (strobe_draw_ref){remapped(&in->res, &in->res_to, cc->refs[k].resource), cc->refs[k].role};
  }
  if (!strobe__writer_content(m->w, &c)) return -1;
  m->next_deep++;
  return 0;
}

/* >>origin: the flattened input a TREE, ATTACHMENT or DEEP record of input `in` came from, + 1 (0: a merged input's
 * own merge did not record it), written as an ORIGIN block before the content when it changes, so `strobe tree` and
 * `strobe calls` can name each snapshot's and deep capture's process (docs/capture-format.md, ORIGIN). */
static void note_origin(merger *m, const merge_input *in, const strobe_capture_record *r) {
  uint32_t origin = !in->merged ? in->flat + 1 : r->origin && r->origin <= in->sub.ninputs ? in->flat + r->origin : 0;
  if (origin == m->origin) return;
  strobe__writer_origin(m->w, origin);
  m->origin = origin;
}

/* An allocation, free or message (docs/memory.md) or a lock event (docs/locks.md) as the drain hands it on: its
 * site, then an allocation's or free's address and an allocation's size in payload slots. */
static void site_events(batch *b, const merge_input *in, const strobe_capture_record *r, uint64_t ts) {
  uint32_t kind = r->type == STROBE_REC_ALLOC           ? STROBE__EV_ALLOC
                  : r->type == STROBE_REC_FREE          ? STROBE__EV_FREE
                  : r->type == STROBE_REC_MESSAGE       ? STROBE__EV_MESSAGE
                  : r->type == STROBE_REC_LOCK_WAIT     ? STROBE__EV_LOCK_WAIT
                  : r->type == STROBE_REC_LOCK_ACQUIRED ? STROBE__EV_LOCK_ACQUIRED
                                                        : STROBE__EV_LOCK_RELEASED;
  put(b, ts, kind, site_of(in, r->site));
  if (kind != STROBE__EV_ALLOC && kind != STROBE__EV_FREE) return;
  put(b, r->address, STROBE__EV_PAYLOAD, 0);
  if (kind == STROBE__EV_ALLOC) put(b, r->bytes, STROBE__EV_PAYLOAD, 0);
}

/* A thread of input `in` (its index there) as the merge's `thread`, named PROCESS/THREAD (a merged input's
 * threads keep their names). */
static void merge_thread(merger *m, merge_input *in, uint32_t index, uint32_t thread) {
  const strobe_capture_thread *t = strobe_capture_query_thread(in->cap, index);
  if (!t) return;
  char name[256];
  if (in->merged)
    snprintf(name, sizeof name, "%s", t->name);
  else
    snprintf(name, sizeof name, "%s/%s", in->process, t->name[0] ? t->name : "thread");
  if (index + 1 > in->nthreads) in->nthreads = index + 1;
  strobe__writer_thread(m->w, thread, remapped(&in->tids, &in->tids_to, t->os_tid), name, t->lost);
}

/* One record of input `in` into the merged capture. Returns 0, or 1 when it was not merged (counted). */
static int merge_record(merger *m, merge_input *in, const strobe_capture_record *r) {
  uint32_t thread = in->thread_base + r->thread;
  uint64_t ts = mono_ns(in, r->time_ns);
  batch b = {.n = 0};
  switch (r->type) {
    case STROBE_REC_SITE: merge_site(m, in, r->site); return 0;
    case STROBE_REC_THREAD: merge_thread(m, in, r->thread, thread); return 0;
    case STROBE_REC_THREAD_END: strobe__writer_thread_end(m->w, thread); return 0;
    case STROBE_REC_BEGIN: put(&b, ts, STROBE__EV_BEGIN, site_of(in, r->site)); goto merged;
    case STROBE_REC_END: put(&b, ts, r->unwound ? STROBE__EV_UNWOUND : STROBE__EV_END, site_of(in, r->site)); goto merged;
    case STROBE_REC_VALUE:
    case STROBE_REC_COUNTER:
    case STROBE_REC_GAUGE:
      put(&b, ts, r->type == STROBE_REC_VALUE ? STROBE__EV_VALUE : r->type == STROBE_REC_COUNTER ? STROBE__EV_COUNTER
                                                                                                   : STROBE__EV_GAUGE,
          site_of(in, r->site));
      put(&b, f64_bits(r->value), STROBE__EV_PAYLOAD, 0);
      goto merged;
    case STROBE_REC_FRAME: put(&b, ts, STROBE__EV_FRAME, site_of(in, r->site)); goto merged;
    case STROBE_REC_CUMULATIVE:
      put(&b, ts, STROBE__EV_CUMULATIVE, site_of(in, r->site));
      put(&b, r->count, STROBE__EV_PAYLOAD, 0);
      put(&b, span_ns(r->total_ns), STROBE__EV_PAYLOAD, 0);
      put(&b, span_ns(r->min_ns), STROBE__EV_PAYLOAD, 0);
      put(&b, span_ns(r->max_ns), STROBE__EV_PAYLOAD, 0);
      goto merged;
    case STROBE_REC_LOST:
      if (r->lost > UINT32_MAX) break;
      put(&b, ts, STROBE__EV_LOST | r->depth << 8, (uint32_t)r->lost);
      goto merged;
    case STROBE_REC_ELEMENT: put(&b, r->element, STROBE__EV_ELEMENT, site_of(in, r->site)); goto merged;
    case STROBE_REC_ALLOC:
    case STROBE_REC_FREE:
    case STROBE_REC_MESSAGE:
    case STROBE_REC_LOCK_WAIT:
    case STROBE_REC_LOCK_ACQUIRED:
    case STROBE_REC_LOCK_RELEASED: site_events(&b, in, r, ts); goto merged;
    case STROBE_REC_OP_BEGIN:
    case STROBE_REC_OP_END:
    case STROBE_REC_OP_TAKE:
    case STROBE_REC_OP_RESUME:
      if (op_events(m, in, r, ts, &b)) break;
      goto merged;
    case STROBE_REC_CLOCK_PAIR:
    case STROBE_REC_GPU_SPAN:
    case STROBE_REC_GPU_MARK:
    case STROBE_REC_LANE_SPAN:
      if (!r->device || device_events(m, in, r, ts, &b)) break;
      goto merged;
    case STROBE_REC_TREE:
      note_origin(m, in, r);
      if (!r->tree || merge_tree(m, in, r->tree, ts)) break;
      goto content;
    case STROBE_REC_SAMPLE:
    case STROBE_REC_SWITCH:
      if (!r->sample || merge_sample(m, in, r, ts)) break;
      goto content;
    case STROBE_REC_ATTACHMENT:
    case STROBE_REC_DEEP:
      note_origin(m, in, r);
      if ((r->type == STROBE_REC_DEEP ? !r->deep : !r->attachment) || merge_content(m, in, r, ts)) break;
      goto content;
    default: break;
  }
  if (r->type < STROBE_CAPTURE_REC_TYPES) m->not_merged[r->type]++;
  return 1;
merged:
  strobe__writer_events(m->w, thread, b.ev, b.n);
content:
  if (ts > m->end_ns) m->end_ns = ts;
  return 0;
}

/* >>duplicates: one recording given twice (a copy of an input, or a merged capture with one of its inputs)
 * would double its events. A recording is known by its content: its process (pid), its host boot and the
 * CLOCK_MONOTONIC time of its first event, which no other recording of that process shares. */
static int note_first(merge_input *in, uint32_t thread, double time_ns) {
  if (thread >= in->ntfirst) {
    uint32_t n = thread + 64;
    double *grown = realloc(in->tfirst, n * sizeof *grown);
    if (!grown) return 1;
    for (uint32_t i = in->ntfirst; i < n; i++) grown[i] = INFINITY;
    in->tfirst = grown, in->ntfirst = n;
  }
  if (time_ns < in->tfirst[thread]) in->tfirst[thread] = time_ns;
  return 0;
}

/* Each recording's first event, on its own CLOCK_MONOTONIC: a merged capture's threads are named
 * PROCESS/THREAD after the input they came from, whose shift is taken off again. */
static void first_events(merge_input *in, const strobe_capture *c) {
  uint32_t nrec = in->merged ? in->sub.ninputs : 1;
  for (uint32_t k = 0; k < nrec; k++) in->first[k] = INFINITY;
  for (uint32_t t = 0; t < in->ntfirst; t++) {
    const strobe_capture_thread *th = strobe_capture_query_thread(c, t);
    if (!th || in->tfirst[t] == INFINITY) continue;
    for (uint32_t k = 0; k < nrec; k++) {
      size_t len = in->merged ? strlen(in->sub.inputs[k].process) : 0;
      if (in->merged && (strncmp(th->name, in->sub.inputs[k].process, len) || th->name[len] != '/')) continue;
      double mono = (double)in->h.epoch_mono_ns + in->tfirst[t] - (in->merged ? (double)in->sub.inputs[k].shift_ns : 0);
      if (mono < in->first[k]) in->first[k] = mono;
      break;
    }
  }
}

/* Recording k of input a and recording l of input b are one: same boot (captures without a boot id are not
 * judged), same pid, first events within 1 µs (the merge rounds each time to the ns; two recordings of one
 * process never start together). */
static int same_recording(const merge_input *a, uint32_t k, const merge_input *b, uint32_t l) {
  const char *boot_a = a->merged ? a->sub.inputs[k].boot_id : a->h.boot_id;
  const char *boot_b = b->merged ? b->sub.inputs[l].boot_id : b->h.boot_id;
  uint64_t pid_a = a->merged ? a->sub.inputs[k].pid : a->h.pid, pid_b = b->merged ? b->sub.inputs[l].pid : b->h.pid;
  return boot_a[0] && !strcmp(boot_a, boot_b) && pid_a == pid_b && a->first[k] != INFINITY &&
         fabs(a->first[k] - b->first[l]) <= 1000.0;
}

/* Refuses a recording given twice; returns 0, or prints which and returns CLI_USAGE. */
static int refuse_duplicates(const char *cmd, const merge_input *in, int n) {
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      for (uint32_t k = 0; k < (in[i].merged ? in[i].sub.ninputs : 1); k++)
        for (uint32_t l = 0; l < (in[j].merged ? in[j].sub.ninputs : 1); l++)
          if (same_recording(&in[i], k, &in[j], l))
            return cli_usage_error(cmd, "%s and %s both hold the recording of process %s (pid %llu, boot %.8s, the "
                                   "same first event): it would be merged twice; give it once",
                                   in[i].path, in[j].path,
                                   in[i].merged ? in[i].sub.inputs[k].process : in[i].process,
                                   (unsigned long long)(in[i].merged ? in[i].sub.inputs[k].pid : in[i].h.pid),
                                   in[i].merged ? in[i].sub.inputs[k].boot_id : in[i].h.boot_id);
  return 0;
}

/* The process label of a capture: the one its operations handed across
 * processes carry, else pid_<pid>. Reads it once through. */
static int scan_input(merge_input *in, offset_pool *pool, const char *cmd, int quiet) {
  cli_input ci;
  int rc = cli_open(&ci, cmd, in->path, quiet);
  if (rc) return rc;
  in->h = *strobe_capture_query_header(ci.cap);
  snprintf(in->process, sizeof in->process, "pid_%llu", (unsigned long long)in->h.pid);
  const strobe_capture_record *r;
  int found = 0, nomem = 0;
  while ((r = cli_next_ref(&ci))) {
    if (!found && r->op && r->op->remote && r->op->process && r->op->process[0]) {
      snprintf(in->process, sizeof in->process, "%s", r->op->process);
      found = 1;
    }
    if (r->type >= STROBE_REC_BEGIN && r->type <= STROBE_REC_FRAME && r->type != STROBE_REC_VALUE)
      nomem |= note_first(in, r->thread, r->time_ns);
    /* >>ids: what this input names, to keep apart from the other inputs' */
    if (r->sample) nomem |= set_add(&in->tids, r->sample->os_tid);
    if (r->attachment) nomem |= set_add(&in->res, r->attachment->resource);
    if (r->deep)
      for (uint32_t i = 0; i < r->deep->ncalls; i++)
        for (uint32_t k = 0; k < r->deep->calls[i].nrefs; k++)
          nomem |= set_add(&in->res, r->deep->calls[i].refs[k].resource);
  }
  rc = cli_finish_read(&ci);
  if (!rc) rc = cli_times_in_range(cmd, in->path, ci.cap); /* the shifts and sums below stay within 64 bits */
  for (uint32_t i = 0; i < strobe_capture_query_thread_count(ci.cap); i++) {
    const strobe_capture_thread *t = strobe_capture_query_thread(ci.cap, i); /* NULL: an index never defined */
    if (t) nomem |= set_add(&in->tids, t->os_tid);
  }
  set_sort(&in->tids);
  set_sort(&in->res);
  in->t = strobe_capture_query_totals(ci.cap);
  const strobe_capture_merge *mg = strobe_capture_query_merge(ci.cap);
  if (mg && mg->ninputs) { /* >>flattened: merged again as the inputs it holds */
    in->merged = 1;
    in->sub = *mg;
    in->process[0] = 0;
    for (uint32_t i = 0; i < mg->ninputs; i++) {
      size_t len = strlen(in->process);
      snprintf(in->process + len, sizeof in->process - len, "%s%s", i ? "+" : "", mg->inputs[i].process);
    }
  }
  first_events(in, ci.cap);
  if (!rc && nomem) {
    cli_error(cmd, "out of memory for %s's thread and resource ids", in->path);
    rc = CLI_FAIL;
  }
  strobe_capture_clock_offsets co = strobe_capture_query_clock_offsets(ci.cap);
  pool->replaced += co.replaced + co.cut;
  if (!rc && co.count) {
    if (pool->n + co.count > pool->cap) {
      uint32_t cap = pool->n + co.count + 64;
      strobe_capture_clock_offset *grown = realloc(pool->s, cap * sizeof *grown);
      if (!grown) {
        cli_error(cmd, "out of memory for %s's clock offsets", in->path);
        rc = CLI_FAIL;
      } else {
        pool->s = grown, pool->cap = cap;
      }
    }
    if (!rc) {
      memcpy(pool->s + pool->n, co.samples, co.count * sizeof *co.samples);
      pool->n += co.count;
    }
  }
  cli_close(&ci);
  return rc;
}

/* >>alignment: every input placed on the first input's clock (docs/sessions.md §Across hosts). Inputs of
 * one boot share CLOCK_MONOTONIC (shift 0 between them, exact); another boot's shift comes from the
 * clock-offset samples of any input, chained from the reference boot through the samples whose bounds add up
 * to the least (a sample links its two boots both ways). Returns 0, or prints why and returns CLI_FAIL. */
static int align_inputs(const char *cmd, merge_input *in, int n, const offset_pool *pool, int same_host) {
  const char *boots[MAX_INPUTS];
  int64_t shift[MAX_INPUTS];
  uint64_t err[MAX_INPUTS];
  uint32_t hops[MAX_INPUTS];
  int nb = 0, ref = -1;
  for (int i = 0; i < n; i++) {
    if (!in[i].h.boot_id[0]) {
      if (same_host) { /* the caller vouches for it: the reference boot's clock */
        in[i].alignment = STROBE_ALIGN_VOUCHED;
        continue;
      }
      cli_error(cmd, "%s has no boot id (written before strobe recorded one, or by a tool): its clock cannot be "
                "shown to be the others' (--same-host vouches for it)", in[i].path);
      return CLI_FAIL;
    }
    if (ref < 0) ref = i;
    int k = 0;
    while (k < nb && strcmp(boots[k], in[i].h.boot_id)) k++;
    if (k == nb) boots[nb] = in[i].h.boot_id, err[nb] = UINT64_MAX, shift[nb] = 0, hops[nb] = 0, nb++;
  }
  if (nb == 0) return 0; /* every input vouched for: one clock */
  err[0] = 0; /* boots[0] is the reference input's */
  for (int round = 0; round < nb; round++) { /* relax along the samples until nothing improves */
    int changed = 0;
    for (uint32_t k = 0; k < pool->n; k++) {
      const strobe_capture_clock_offset *o = &pool->s[k];
      int l = -1, p = -1;
      for (int b = 0; b < nb; b++) {
        if (!strcmp(boots[b], o->local_boot_id)) l = b;
        if (!strcmp(boots[b], o->sample.peer_boot_id)) p = b;
      }
      if (l < 0 || p < 0 || l == p) continue;
      /* peer's clock = local's + offset: a peer time t is local time t - offset */
      if (err[l] != UINT64_MAX && err[l] + o->sample.error_ns < err[p]) {
        err[p] = err[l] + o->sample.error_ns, shift[p] = shift[l] - o->sample.offset_ns, hops[p] = hops[l] + 1;
        changed = 1;
      }
      if (err[p] != UINT64_MAX && err[p] + o->sample.error_ns < err[l]) {
        err[l] = err[p] + o->sample.error_ns, shift[l] = shift[p] + o->sample.offset_ns, hops[l] = hops[p] + 1;
        changed = 1;
      }
    }
    if (!changed) break;
  }
  for (int i = 0; i < n; i++) {
    if (!in[i].h.boot_id[0]) continue;
    int b = 0;
    while (strcmp(boots[b], in[i].h.boot_id)) b++;
    if (err[b] == UINT64_MAX) {
      cli_error(cmd, "%s (boot %.8s) and %s (boot %.8s) come from different hosts or boots, and no clock-offset "
                "sample links them: their monotonic clocks cannot be aligned. Take one while both run "
                "(strobe clock-offset, or POST /api/clock; docs/sessions.md §Across hosts) and record again",
                in[ref].path, in[ref].h.boot_id, in[i].path, in[i].h.boot_id);
      return CLI_FAIL;
    }
    in[i].alignment = i == ref ? STROBE_ALIGN_REFERENCE : b == 0 ? STROBE_ALIGN_SAME_BOOT : STROBE_ALIGN_CLOCK_OFFSET;
    in[i].shift_ns = shift[b], in[i].error_ns = err[b], in[i].hops = hops[b];
  }
  return 0;
}

const char *cli_alignment_name(uint32_t a) {
  switch (a) {
#define ALIGN(name, value, text) \
  case value: return text;
    STROBE_CAPTURE_ALIGNMENTS(ALIGN)
#undef ALIGN
  }
  return "?";
}

/* >>flattened: the MERGE block's inputs, a merged input's own inputs in its place, their shifts and bounds
 * composed with its own (a merge of merges says what merging every input at once says), and what it could not
 * carry, with what its merged inputs could not. */
static void flatten(const merge_input *in, int n, const uint64_t *not_merged, strobe_capture_merge *mb) {
  memset(mb, 0, sizeof *mb);
  for (int i = 0; i < n; i++) {
    strobe_capture_merge_input self = {{0}, {0}, in[i].h.pid, STROBE_ALIGN_REFERENCE, 0, 0, 0};
    snprintf(self.process, sizeof self.process, "%s", in[i].process);
    memcpy(self.boot_id, in[i].h.boot_id, sizeof self.boot_id);
    const strobe_capture_merge_input *subs = in[i].merged ? in[i].sub.inputs : &self;
    uint32_t nsubs = in[i].merged ? in[i].sub.ninputs : 1;
    for (uint32_t k = 0; k < nsubs && mb->ninputs < STROBE_CAPTURE_MAX_MERGED; k++) {
      strobe_capture_merge_input *mi = &mb->inputs[mb->ninputs++];
      *mi = subs[k];
      uint32_t a = in[i].alignment;
      if (a != STROBE_ALIGN_REFERENCE && (mi->alignment == STROBE_ALIGN_REFERENCE || a != STROBE_ALIGN_SAME_BOOT))
        mi->alignment = mi->alignment == STROBE_ALIGN_CLOCK_OFFSET && a == STROBE_ALIGN_VOUCHED ? mi->alignment : a;
      mi->hops += in[i].hops;
      mi->shift_ns += in[i].shift_ns, mi->error_ns += in[i].error_ns;
      if (mi->error_ns > mb->error_ns) mb->error_ns = mi->error_ns;
    }
    if (in[i].merged)
      for (uint32_t t = 0; t < STROBE_CAPTURE_REC_TYPES; t++) mb->not_merged[t] += in[i].sub.not_merged[t];
  }
  for (uint32_t t = 0; t < STROBE_CAPTURE_REC_TYPES; t++) mb->not_merged[t] += not_merged[t];
}

/* The sampler's and call tracing's counts of every input, summed (SAMPLER, CALLS: docs/capture-format.md). */
static void carry_totals(strobe__writer *w, const merge_input *in, int n) {
  strobe_sampler_status st = {0};
  strobe_sampler_stats ss = {0};
  strobe_trace_stats ts = {0};
  for (int i = 0; i < n; i++) {
    const strobe_capture_totals *t = &in[i].t;
    if (t->sample_rate_hz > st.rate_hz) st.rate_hz = t->sample_rate_hz; /* the one still sampling at the end */
    st.switches |= t->sample_switches;
    ss.samples += t->samples_written, ss.switches += t->switches_written, ss.lost += t->samples_lost;
    ss.frames_cut += t->sample_frames_cut, ss.addresses_cut += t->sample_addresses_cut;
    ss.functions += t->sample_functions, ss.unresolved += t->sample_unresolved;
    ts.cut_depth += t->calls_cut_depth, ts.cut_stack += t->calls_cut_stack;
    ts.cut_functions += t->calls_cut_functions, ts.excluded += t->calls_excluded;
    ts.functions += t->calls_functions, ts.unresolved += t->calls_unresolved;
  }
  st.running = st.rate_hz > 0;
  strobe__writer_sampler(w, &st, ss);
  strobe__writer_calls(w, ts);
}

static void free_inputs(merge_input *in, int n) {
  for (int i = 0; i < n; i++) {
    free(in[i].sites);
    free(in[i].funcs);
    free(in[i].tfirst);
    set_free(&in[i].tids), set_free(&in[i].res), set_free(&in[i].tids_to), set_free(&in[i].res_to);
  }
}

void cli_merge_text(FILE *f, const strobe_capture *c) {
  const strobe_capture_merge *m = strobe_capture_query_merge(c);
  if (!m) return;
  fprintf(f, "merged: %u captures, each within %.3f ms of where it belongs (strobe info lists them)", m->ninputs,
          (double)m->error_ns / 1e6);
  const char *sep = "; not merged: ";
  for (uint32_t t = 0; t < STROBE_CAPTURE_REC_TYPES; t++)
    if (m->not_merged[t]) {
      fprintf(f, "%s%llu %s", sep, (unsigned long long)m->not_merged[t], strobe_capture_record_type_name(t));
      sep = ", ";
    }
  fprintf(f, "%s\n", sep[0] == ',' ? " records of the inputs, not in this report (read them in the inputs)" : "");
}

void cli_merge_json(strobe__json *j, const strobe_capture *c) {
  const strobe_capture_merge *m = strobe_capture_query_merge(c);
  if (!m) {
    strobe__json_null(j, "merge");
    return;
  }
  strobe__json_object(j, "merge");
  strobe__json_uint(j, "inputs", m->ninputs);
  strobe__json_uint(j, "error_ns", m->error_ns);
  cli_not_merged_json(j, m);
  strobe__json_end(j);
}

void cli_not_merged_json(strobe__json *j, const strobe_capture_merge *m) {
  strobe__json_object(j, "not_merged");
  for (uint32_t t = 0; t < STROBE_CAPTURE_REC_TYPES; t++)
    if (m->not_merged[t]) strobe__json_uint(j, strobe_capture_record_type_name(t), m->not_merged[t]);
  strobe__json_end(j);
}

/* >>origin, read back */
const char *cli_origin_process(const strobe_capture *c, uint32_t origin, char *buf, size_t cap) {
  const strobe_capture_merge *m = strobe_capture_query_merge(c);
  if (!m) return NULL;
  if (!origin || origin > m->ninputs) return "?";
  const char *label = m->inputs[origin - 1].process;
  for (uint32_t i = 0; i < m->ninputs; i++)
    if (i != origin - 1 && !strcmp(m->inputs[i].process, label)) { /* two inputs of one label: told apart */
      snprintf(buf, cap, "%s#%u", label, origin);
      return buf;
    }
  return label;
}

int cli_pick_origin(const char *cmd, const strobe_capture *c, const char *path, const char *what, uint64_t frame,
                    const uint32_t *origins, uint32_t n, const char *process) {
  if (process && !strobe_capture_query_merge(c)) {
    cli_error(cmd, "%s is not a merged capture: --process chooses among the processes of a merge (strobe merge)", path);
    return -1;
  }
  char names[512] = "", a[96], b[96];
  size_t len = 0;
  int pick = -1, several = 0;
  for (uint32_t i = 0; i < n; i++) {
    const char *p = cli_origin_process(c, origins[i], a, sizeof a);
    p = p ? p : "";
    if (pick < 0 && (!process || !strcmp(p, process))) pick = (int)i;
    int seen = 0;
    for (uint32_t k = 0; k < i && !seen; k++) {
      const char *q = cli_origin_process(c, origins[k], b, sizeof b);
      seen = !strcmp(q ? q : "", p);
    }
    if (seen) continue;
    several |= i > 0;
    if (len < sizeof names) len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", p);
  }
  if (process && pick < 0) {
    cli_error(cmd, "%s: frame %llu has no %s from process '%s' (it has some from: %s)", path, (unsigned long long)frame,
              what, process, names);
    return -1;
  }
  if (!process && several) {
    cli_error(cmd, "%s: frame %llu has %s from several processes (%s): choose one with --process NAME", path,
              (unsigned long long)frame, what, names);
    return -1;
  }
  return pick;
}

/* Refuses an output that is one of the inputs (the same file under any name). */
static int same_file(const char *a, const char *b) {
  struct stat sa, sb;
  if (stat(a, &sa) || stat(b, &sb)) return 0;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static int sink(void *ctx, const void *data, size_t len) {
  return fwrite(data, 1, len, ctx) == len ? 0 : STROBE_EIO;
}

int cmd_merge(int argc, char **argv) {
  static const struct option opts[] = {
      {"output", required_argument, NULL, 'o'}, {"quiet", no_argument, NULL, 'q'}, {"help", no_argument, NULL, 'h'},
      {"same-host", no_argument, NULL, 's'},   {NULL, 0, NULL, 0}};
  const char *out = NULL;
  int quiet = 0, same_host = 0, c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
    if (c == 'o') out = optarg;
    else if (c == 'q') quiet = 1;
    else if (c == 's') same_host = 1;
    else if (c == 'h') return usage(stdout);
    else return cli_bad_option(CMD, argv, optind);
  }
  return cli_merge_files(CMD, (const char *const *)argv + optind, argc - optind, out, same_host, quiet);
}

/* Each input is a readable file, not the output, and not another input. Returns CLI_OK or a usage error. */
static int check_inputs(const char *cmd, merge_input *in, const char *const *paths, int n, const char *out) {
  for (int i = 0; i < n; i++) {
    in[i].path = paths[i];
    int rc = cli_need_file(cmd, in[i].path, "each capture is read twice");
    if (rc) return rc;
    if (same_file(in[i].path, out))
      return cli_usage_error(cmd, "the output %s is the input %s: it would be overwritten while read", out, in[i].path);
    for (int k = 0; k < i; k++)
      if (same_file(in[i].path, in[k].path))
        return cli_usage_error(cmd, "%s and %s are the same capture: merge it once", in[k].path, in[i].path);
  }
  return CLI_OK;
}

/* Reads each input once (scan_input), numbers the captures merged inputs hold, refuses duplicates, aligns
 * the inputs' clocks (align_inputs) and plans their thread and resource ids. Returns CLI_OK, or an error
 * having said why. */
static int scan_and_align(const char *cmd, merge_input *in, int n, offset_pool *pool, int same_host, int quiet) {
  uint32_t flat = 0;
  for (int i = 0; i < n; i++) {
    int rc = scan_input(&in[i], pool, cmd, quiet);
    in[i].flat = flat;
    flat += in[i].merged ? in[i].sub.ninputs : 1;
    if (!rc && flat > MAX_INPUTS) {
      cli_error(cmd, "at most %d captures at once, counting those merged captures hold (%s makes %u)", MAX_INPUTS,
                in[i].path, flat);
      rc = CLI_FAIL;
    }
    if (rc) return rc;
  }
  int rc0 = refuse_duplicates(cmd, in, n);
  if (!rc0) rc0 = align_inputs(cmd, in, n, pool, same_host);
  for (int i = 0; i < n && !rc0; i++)
    if (in[i].shift_ns > (int64_t)CLI_MAX_MONO_NS || in[i].shift_ns < -(int64_t)CLI_MAX_MONO_NS) {
      cli_error(cmd, "%s: its clock-offset samples shift it by %lld ns, past 2^62 ns: out of range (damaged samples)",
                in[i].path, (long long)in[i].shift_ns);
      rc0 = CLI_FAIL;
    }
  if (!rc0 && (plan_ids(in, n, offsetof(merge_input, tids), offsetof(merge_input, tids_to), 1ull << 32) ||
               plan_ids(in, n, offsetof(merge_input, res), offsetof(merge_input, res_to), 1ull << 48))) {
    cli_error(cmd, "out of memory for the inputs' thread and resource ids");
    rc0 = CLI_FAIL;
  }
  return rc0;
}

/* The merged clock: counting from the earliest input epoch (shifts moved so that none is negative), its
 * start, and the boot it names (NULL when none). */
static void merged_clock(merge_input *in, int n, uint64_t *epoch_out, uint64_t *start_out, const char **boot_out) {
  /* The merged clock counts from the earliest input epoch; shifts move so that none is negative. */
  int64_t low = INT64_MAX;
  for (int i = 0; i < n; i++)
    if ((int64_t)in[i].h.epoch_mono_ns + in[i].shift_ns < low) low = (int64_t)in[i].h.epoch_mono_ns + in[i].shift_ns;
  if (low < 0)
    for (int i = 0; i < n; i++) in[i].shift_ns -= low;
  uint64_t epoch = UINT64_MAX, start = UINT64_MAX;
  for (int i = 0; i < n; i++) {
    if (in[i].h.epoch_mono_ns + (uint64_t)in[i].shift_ns < epoch) epoch = in[i].h.epoch_mono_ns + (uint64_t)in[i].shift_ns;
    uint64_t s = mono_ns(&in[i], ((double)(int64_t)(in[i].h.start_ticks - in[i].h.epoch_ticks)) * in[i].h.ns_per_tick);
    if (s < start) start = s;
  }
  /* Its clock is the reference input's CLOCK_MONOTONIC unless the shifts moved (an input's epoch lay before that
   * clock's zero): then, and when every input was vouched for, it names no boot (docs/cli.md §strobe merge). */
  const char *boot = NULL;
  for (int i = 0; i < n; i++)
    if (in[i].alignment == STROBE_ALIGN_REFERENCE && in[i].h.boot_id[0] && in[i].shift_ns == 0) boot = in[i].h.boot_id;
  *epoch_out = epoch;
  *start_out = start;
  *boot_out = boot;
}

/* The merged capture holds what its inputs held: its bounds on snapshots, deep captures and content bytes are
 * their sums, and what the inputs' bounds refused stays counted. */
static void carry_content_limits(strobe__writer *w, const merge_input *in, int n) {
  uint64_t trees = 0, deeps = 0, content = 0, trees_dropped = 0, deeps_dropped = 0;
  for (int i = 0; i < n; i++) {
    trees += in[i].t.trees, deeps += in[i].t.deeps, content += in[i].t.attach_limit;
    trees_dropped += in[i].t.trees_dropped, deeps_dropped += in[i].t.deeps_dropped;
  }
  strobe__writer_content_limits(w, trees < UINT32_MAX ? (uint32_t)trees : UINT32_MAX,
                                deeps < UINT32_MAX ? (uint32_t)deeps : UINT32_MAX);
  if (content) strobe__writer_attach_limit(w, content);
  strobe__writer_carry_dropped(w, trees_dropped, deeps_dropped);
}

/* Every record of every input, in input order, into the merged capture. Returns CLI_OK or the read's error. */
static int merge_all(const char *cmd, merge_input *in, int n, merger *m, int quiet, uint64_t *records,
                     uint64_t *skipped) {
  int status = CLI_OK;
  for (int i = 0; i < n && status == CLI_OK; i++) {
    cli_input ci;
    status = cli_open(&ci, cmd, in[i].path, quiet);
    if (status) break;
    in[i].cap = ci.cap;
    in[i].thread_base = m->next_thread;
    const strobe_capture_record *r;
    while ((r = cli_next_ref(&ci))) { /* each record in place: merge_record is done with it before the next */
      (*records)++;
      *skipped += (uint64_t)merge_record(m, &in[i], r);
    }
    status = cli_finish_read(&ci);
    strobe_capture_totals t = strobe_capture_query_totals(ci.cap);
    uint64_t *dst = (uint64_t *)&m->misuse;
    const uint64_t *src = (const uint64_t *)&t.misuse;
    for (size_t k = 0; k < sizeof m->misuse / sizeof *dst; k++) dst[k] += src[k];
    uint64_t end = mono_ns(&in[i], strobe_capture_ticks_to_ns(ci.cap, t.end_ticks));
    if (end > m->end_ns) m->end_ns = end;
    m->next_thread += in[i].nthreads ? in[i].nthreads : strobe_capture_query_thread_count(ci.cap);
    cli_close(&ci);
    in[i].cap = NULL;
  }
  return status;
}

/* What the merge did, unless --quiet: records, threads, each input's alignment, content, samples within one boot. */
static void print_merged(const char *out, int n, const merger *m, const strobe_capture_merge *mb,
                         const offset_pool *pool, uint64_t records, const char *boot) {
  printf("merged %d captures into %s: %llu records, %u threads, each within %.3f ms of where it belongs\n", n, out,
         (unsigned long long)records, m->next_thread, (double)mb->error_ns / 1e6);
  for (uint32_t i = 0; i < mb->ninputs; i++) {
    const strobe_capture_merge_input *mi = &mb->inputs[i];
    printf("  %s pid %llu, boot %.8s: %s", mi->process, (unsigned long long)mi->pid,
           mi->boot_id[0] ? mi->boot_id : "?", cli_alignment_name(mi->alignment));
    if (mi->alignment == STROBE_ALIGN_REFERENCE || mi->alignment == STROBE_ALIGN_SAME_BOOT)
      printf(" (one CLOCK_MONOTONIC: exact)");
    else if (mi->alignment == STROBE_ALIGN_CLOCK_OFFSET)
      printf(" (%u clock-offset sample%s): shifted %+.3f ms +- %.3f ms", mi->hops, mi->hops == 1 ? "" : "s",
             (double)mi->shift_ns / 1e6, (double)mi->error_ns / 1e6);
    putchar('\n');
  }
  if (m->next_tree || m->next_deep || m->next_func)
    printf("  content: %llu UI-tree snapshots, %llu deep captures, %u sampled functions (renumbered in input order)\n",
           (unsigned long long)m->next_tree, (unsigned long long)m->next_deep, m->next_func);
  /* A sample between processes of one boot: its offset is 0 within its bound (docs/sessions.md §Across hosts);
   * the exact alignment is used, the sample shows how well the estimate would have placed them. */
  for (uint32_t k = 0; k < pool->n; k++) {
    const strobe_capture_clock_offset *o = &pool->s[k];
    if (strcmp(o->local_boot_id, o->sample.peer_boot_id)) continue;
    printf("  clock-offset sample of %s within boot %.8s: %+.3f ms +- %.3f ms (one clock: exact above; the sample "
           "checks the estimate)\n", o->sample.peer[0] ? o->sample.peer : "?", o->local_boot_id,
           (double)o->sample.offset_ns / 1e6, (double)o->sample.error_ns / 1e6);
  }
  printf("  host boot: %s\n", boot ? boot : "none (merge it again with --same-host, or as aligned by its inputs' samples)");
}

/* What the merge cut, said even with --quiet, and counted in the merged capture (MERGE). */
static void say_not_merged(const char *cmd, const char *out, const strobe_capture_merge *mb, uint64_t skipped) {
  int carried_cut = 0;
  for (uint32_t t = 0; t < STROBE_CAPTURE_REC_TYPES; t++) carried_cut |= mb->not_merged[t] != 0;
  if (skipped || carried_cut) {
    fprintf(stderr, "strobe %s: not merged (counted in %s, shown by strobe info):", cmd, out);
    const char *sep = " ";
    for (uint32_t t = 0; t < STROBE_CAPTURE_REC_TYPES; t++)
      if (mb->not_merged[t]) {
        fprintf(stderr, "%s%llu %s", sep, (unsigned long long)mb->not_merged[t], strobe_capture_record_type_name(t));
        sep = ", ";
      }
    fputc('\n', stderr);
  }
}

int cli_merge_files(const char *cmd, const char *const *paths, int n, const char *out, int same_host, int quiet) {
  if (n < 2) return cli_usage_error(cmd, "merge needs two captures or more (got %d)", n);
  if (n > MAX_INPUTS) return cli_usage_error(cmd, "at most %d captures at once (got %d)", MAX_INPUTS, n);
  if (!out || !strcmp(out, "-")) return cli_usage_error(cmd, "the merged capture needs a file: -o OUT.strobe");
  static merge_input in[MAX_INPUTS];
  memset(in, 0, sizeof in);
  int rc = check_inputs(cmd, in, paths, n, out);
  if (rc) return rc;
  offset_pool pool = {0};
  rc = scan_and_align(cmd, in, n, &pool, same_host, quiet);
  if (rc) {
    free(pool.s);
    free_inputs(in, n);
    return rc;
  }
  uint64_t epoch, start;
  const char *boot;
  merged_clock(in, n, &epoch, &start, &boot);
  FILE *f = fopen(out, "wb");
  if (!f) {
    cli_error(cmd, "cannot write %s: %s", out, strerror(errno));
    free(pool.s);
    free_inputs(in, n);
    return CLI_OUTPUT;
  }
  /* The wall-clock anchor (docs/capture-format.md, tag 30) of the first input that has one, moved to the
   * merged epoch: its shift puts it on the merged clock. 0 (none) when no input has one. */
  uint64_t unix0 = 0;
  for (int i = 0; i < n && !unix0; i++)
    if (in[i].h.epoch_unix_ns) unix0 = in[i].h.epoch_unix_ns - (in[i].h.epoch_mono_ns + (uint64_t)in[i].shift_ns - epoch);
  strobe__header_facts facts = {{"monotonic", 1, 1.0, epoch, epoch}, start, in[0].h.arch, 0, in[0].h.pid, 0, 0, 0,
                                unix0, boot, in[0].h.os[0] ? in[0].h.os : NULL};
  strobe__writer_desc wd = {"file", 100, 3, 0.0, 0.0, sink, f, &facts};
  merger m = {0};
  m.origin = UINT32_MAX;
  rc = strobe__writer_create(&wd, &m.w);
  if (rc) {
    cli_error(cmd, "cannot start %s: %s", out, strobe_strerror(rc));
    free(pool.s);
    free_inputs(in, n);
    fclose(f);
    remove(out);
    return CLI_OUTPUT;
  }
  carry_content_limits(m.w, in, n);
  uint64_t records = 0, skipped = 0;
  int status = merge_all(cmd, in, n, &m, quiet, &records, &skipped);
  carry_totals(m.w, in, n);
  /* How each input was placed and what could not be carried (MERGE), and the samples that placed them. */
  static strobe_capture_merge mb;
  flatten(in, n, m.not_merged, &mb);
  strobe__writer_merge(m.w, &mb);
  strobe__writer_clock_offsets(m.w, pool.s, pool.n, pool.replaced);
  rc = strobe__writer_finish(m.w, m.end_ns, &m.misuse);
  strobe__writer_destroy(m.w);
  if (fclose(f) || rc) {
    if (!status) cli_error(cmd, "writing %s failed: %s", out, rc ? strobe_strerror(rc) : strerror(errno));
    status = status ? status : CLI_OUTPUT;
  }
  for (uint32_t i = 1; i <= m.nlabels; i++) free(m.labels[i]);
  free_inputs(in, n);
  free(m.tnodes), free(m.tprops), free(m.calls), free(m.refs);
  if (status) {
    free(pool.s);
    remove(out);
    return status;
  }
  if (!quiet) print_merged(out, n, &m, &mb, &pool, records, boot);
  free(pool.s);
  say_not_merged(cmd, out, &mb, skipped);
  return CLI_OK;
}
