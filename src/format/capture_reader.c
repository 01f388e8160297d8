/*
 * capture_reader.c — reads capture files (docs/capture-format.md) for
 * include/strobe/capture.h: header fields, the block loop (CRC, zstd), the
 * site, label and thread tables, the per-thread scope stacks that turn
 * BEGIN/END ops into records with depth, duration and self time, and OPS
 * entries into operation records.
 *
 * It owns no global state and streams: what it keeps is the site table, the
 * thread table (with one scope stack of at most 256 frames per thread) and
 * one block, stored and decompressed. Input is hostile: it must never read
 * out of bounds, never crash, and never allocate from a length field before
 * checking it against a fixed bound or against the bytes actually present.
 * Every error is sticky, and everything before the bad spot has already been
 * returned.
 *
 * Reading stops at the FOOTER (a clean stop writes it last); bytes after it
 * are not looked at. A header without ns_per_tick converts ticks as 1 ns.
 *
 * Contents: >>state >>source >>tables >>header >>blocks >>records >>checks >>api >>crash
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "probe/clock_fit.h"
#include "probe/probe.h"
#include "format/capture_reader.h"
#include "format/codec.h"
#include "platform/invariant.h"
#include "platform/io.h"
#include "strobe/capture.h"
#include "strobe/sample.h"
#include "strobe/tree.h"

/* ======================================================================
 * >>state
 * ====================================================================== */

/* Header fields are a few hundred bytes; 64 KiB leaves room for growth while
 * keeping a hostile fields_len from costing memory. */
#define MAX_FIELDS_LEN (64u << 10)
/* Thread indexes count threads in order of first event; a million is far
 * beyond any real process and keeps the thread table (pointers) at 8 MB. */
#define MAX_THREAD_INDEX 1000000u
#define MAX_SITE_ID 65535u
#define MAX_LABEL_ID 65535u
#define MAX_OP_STAGES 32u   /* STROBE_MAX_STAGES: a writer never puts more in one operation */
#define MAX_OP_COUNTERS 16u /* STROBE_MAX_OP_COUNTERS */
#define MAX_FUNCTION_ID (1u << 20) /* sampled functions: a writer keeps at most 65536 */
/* File payloads are read in chunks of this size, so the buffer only grows as
 * fast as bytes actually arrive, whatever stored_len claims. */
#define READ_CHUNK (1u << 20)

typedef struct frame {
  uint32_t site;   /* site id of the open scope */
  uint64_t begin;  /* ticks at BEGIN */
  uint64_t child;  /* ticks spent in direct children that ended (wrapping sum) */
} frame;

/* A retired thread-name buffer: kept until close so a name pointer handed
 * out earlier stays valid after a rename. Capacities at least double, and a
 * name is at most 4096 bytes, so a thread retires at most 7 of them. */
typedef struct name_buf {
  struct name_buf *prev;
  size_t cap;
  char s[];
} name_buf;

/* A clock domain of the capture: every pair read, for strobe_capture_map_device. */
typedef struct rdomain {
  uint32_t label;                 /* its LABELS id: names it in DEVICE entries */
  double ticks_per_second;        /* nominal, from its last pair */
  strobe__clock_pair *pairs;      /* sorted by device time when `sorted` */
  uint32_t n, cap;                /* <= STROBE_CAPTURE_MAX_PAIRS */
  int sorted;
} rdomain;

typedef struct rthread {
  strobe_capture_thread pub;
  name_buf *name;   /* current name (pub.name points into it), older ones chained */
  frame *stack;       /* open scopes, outermost first; grown on demand */
  uint32_t depth;     /* open scopes, 0..STROBE__MAX_READER_DEPTH */
  uint32_t stack_cap; /* frames allocated, 0..STROBE__MAX_READER_DEPTH */
} rthread;

struct strobe_capture {
  /* source: exactly one of f and mem */
  FILE *f;               /* strobe_capture_open: owned, buffered by stdio */
  const uint8_t *mem;    /* strobe_capture_open_memory: the caller's bytes */
  size_t mem_len, mem_pos; /* bytes; mem_pos <= mem_len */
  uint64_t file_pos;     /* bytes consumed from f (strobe_capture_query_position) */

  strobe_capture_header header; /* filled by read_header, then constant */
  int err;  /* sticky error, 0 while fine */
  int skip_damaged; /* strobe_capture_set_skip_damaged_content: an ATTACH block failing its checks is skipped */
  int done; /* clean end reached: next() returns 0 */

  /* current block */
  uint8_t *stored;  /* file payload buffer (memory payloads are used in place) */
  size_t stored_cap; /* bytes, at most ZSTD_compressBound(64 MiB) */
  uint8_t *raw;     /* decompressed payload buffer */
  size_t raw_cap;   /* bytes, at most STROBE__MAX_BLOCK_RAW */
  ZSTD_DCtx *zstd;  /* created on the first zstd block */
  int blk;          /* STROBE__BLK_SITES, _EVENTS or _OPS while records remain in it, else 0 */
  strobe__cur cur;  /* SITES: the rest of the payload */
  rthread *ev_thread; /* EVENTS: the block's thread */
  uint64_t ev_left;   /* EVENTS: events not yet decoded */
  uint64_t ev_ticks;  /* EVENTS: ticks of the previous event */
  strobe__cur ops, times; /* EVENTS: the two streams, each bounded to its bytes */
  strobe_capture_op op;   /* OPS: the operation the last OP_* record points at */
  strobe_capture_stage op_stages[MAX_OP_STAGES];
  strobe_capture_op_counter op_counters[MAX_OP_COUNTERS];
  strobe_capture_device dev;      /* DEVICE: what the last CLOCK_PAIR, GPU_SPAN or GPU_MARK record points at */
  struct rdomain *domains;        /* clock domains met in DEVICE entries, their pairs for the map */
  uint32_t ndomains;              /* <= STROBE_CAPTURE_MAX_DOMAINS */

  strobe_capture_tree tree;        /* TREE: the snapshot the last TREE record points at */
  strobe_capture_tree_node *tree_nodes; /* its nodes; grown on demand, at most STROBE_TREE_MAX_NODES */
  strobe_capture_tree_prop *tree_props; /* its properties, STROBE_TREE_MAX_PROPS per node at most */
  uint32_t tree_nodes_cap, tree_props_cap;
  char *tree_keys;                 /* its property names, each NUL-terminated, STROBE_TREE_MAX_KEYS at most */
  size_t tree_keys_cap;

  strobe_capture_attachment attach; /* ATTACH: what the last ATTACHMENT record points at */
  char attach_media[STROBE_MEDIA_TYPE_MAX + 1];
  strobe_capture_deep deep;         /* DEEP: what the last DEEP record points at */
  strobe_capture_draw_call *deep_calls; /* its calls; grown on demand, at most STROBE_DEEP_MAX_CALLS */
  strobe_draw_ref *deep_refs;       /* their references, STROBE_DEEP_MAX_REFS per call at most */
  uint32_t deep_calls_cap, deep_refs_cap;
  char *deep_labels;                /* its labels, each NUL-terminated, STROBE_DEEP_MAX_LABELS at most */
  size_t deep_labels_cap;

  strobe_capture_site **sites;     /* indexed by id; NULL where undefined */
  uint32_t sites_cap, site_limit;  /* entries allocated / one past the largest id, <= 65536 */
  char **labels;                   /* indexed by label id; NULL where undefined */
  uint32_t labels_cap;             /* entries allocated, <= MAX_LABEL_ID + 1 */
  rthread **threads;               /* indexed by thread index; NULL where undefined */
  uint32_t threads_cap, thread_limit; /* likewise, <= MAX_THREAD_INDEX + 1 */

  strobe_capture_function **funcs; /* sampled functions by id; NULL where undefined */
  uint32_t funcs_cap, func_limit;  /* entries allocated / one past the largest id, <= MAX_FUNCTION_ID + 1 */
  uint64_t smp_tid;                /* SAMPLES: the block's OS thread */
  uint32_t smp_thread;             /* ...its thread index, or STROBE_CAPTURE_NO_THREAD */
  strobe_capture_sample smp;       /* SAMPLE, SWITCH: what the last record points at */
  uint32_t smp_frames[STROBE_SAMPLE_MAX_FRAMES];

  strobe_capture_totals totals;    /* as returned by strobe_capture_query_totals */
  strobe_capture_clock_offset *offsets; /* CLOCK_OFFSETS entries, at most STROBE_CAPTURE_MAX_CLOCK_OFFSETS */
  uint32_t noffsets, offsets_cap;
  uint64_t offsets_replaced, offsets_cut;
  strobe_capture_merge *merge;     /* the MERGE block; NULL until one is read */
  strobe_capture_crash *crash;     /* the CRASH block; NULL until one is read. One allocation: the struct, its
                                    * threads, their scope pointers, then the strings */
  uint32_t origin;                 /* the last ORIGIN block's: the content blocks' input + 1 (0: none read) */
  strobe_capture_record *batch;    /* strobe_capture_next_batch's records, STROBE_CAPTURE_BATCH_MAX; NULL until used */
  uint64_t want;                   /* record types returned (strobe_capture_set_records): bit 1 << type */
};

static const uint8_t g_empty[1];

/* ======================================================================
 * >>source — bytes from a FILE or from memory
 * ====================================================================== */

/* Reads up to n bytes; returns how many (fewer only at end of input) or STROBE_EIO. */
static long long src_read(strobe_capture *c, void *dst, size_t n) {
  if (c->mem) {
    size_t left = c->mem_len - c->mem_pos;
    if (n > left) n = left;
    if (n) memcpy(dst, c->mem + c->mem_pos, n);
    c->mem_pos += n;
    return (long long)n;
  }
  size_t got = fread(dst, 1, n, c->f);
  c->file_pos += got;
  if (got < n && ferror(c->f)) return STROBE_EIO;
  return (long long)got;
}

/* Makes n bytes of input available at *out (in place for memory, else in
 * c->stored). Returns 0, STROBE_ETRUNCATED, STROBE_EIO or STROBE_ENOMEM. */
static int src_bytes(strobe_capture *c, size_t n, const uint8_t **out) {
  if (n == 0) {
    *out = g_empty;
    return 0;
  }
  if (c->mem) {
    size_t left = c->mem_len - c->mem_pos;
    if (n > left) {
      c->mem_pos = c->mem_len;
      return STROBE_ETRUNCATED;
    }
    *out = c->mem + c->mem_pos;
    c->mem_pos += n;
    return 0;
  }
  size_t have = 0;
  while (have < n) {
    size_t chunk = n - have < READ_CHUNK ? n - have : READ_CHUNK;
    if (have + chunk > c->stored_cap) {
      size_t cap = c->stored_cap * 2;
      if (cap < have + chunk) cap = have + chunk;
      if (cap > n) cap = n;
      uint8_t *p = realloc(c->stored, cap);
      if (!p) return STROBE_ENOMEM;
      c->stored = p;
      c->stored_cap = cap;
    }
    size_t got = fread(c->stored + have, 1, chunk, c->f);
    have += got;
    c->file_pos += got;
    if (got < chunk) return ferror(c->f) ? STROBE_EIO : STROBE_ETRUNCATED;
  }
  *out = c->stored;
  return 0;
}

/* ======================================================================
 * >>tables — sites and threads
 * ====================================================================== */

static const strobe_capture_site *site_at(const strobe_capture *c, uint64_t id) {
  return id < c->site_limit ? c->sites[id] : NULL;
}

static rthread *thread_at(const strobe_capture *c, uint64_t index) {
  return index < c->thread_limit ? c->threads[index] : NULL;
}

static int str_equal(const char *a, const uint8_t *b, size_t n) {
  return strlen(a) == n && (n == 0 || memcmp(a, b, n) == 0);
}

/* Makes *table (of pointers, *cap entries, NULL past the used ones) hold
 * index `id`: doubles from `first`, never past `max_cap` entries (id is
 * below it). Returns 0 or STROBE_ENOMEM. */
static int grow_table(void *table, uint32_t *cap, uint64_t id, uint32_t first, uint32_t max_cap) {
  if (id < *cap) return 0;
  void **t = *(void ***)table;
  uint64_t n = *cap ? (uint64_t)*cap * 2 : first;
  while (n <= id) n *= 2;
  if (n > max_cap) n = max_cap;
  void **p = realloc(t, (size_t)n * sizeof *p);
  if (!p) return STROBE_ENOMEM;
  memset(p + *cap, 0, (size_t)(n - *cap) * sizeof *p);
  *(void ***)table = p;
  *cap = (uint32_t)n;
  return 0;
}

#define SITE_STRS 5 /* name, category, file, function, parent */

/* Defines site `id` with the given strings (not terminated). The same id
 * again with the same contents is fine (a recorder may repeat its sites);
 * with other contents it is corrupt, since ids name static sites. */
static int define_site(strobe_capture *c, uint32_t id, uint32_t kind, uint32_t line, uint32_t unit, uint32_t flags,
                       const uint8_t *const str[SITE_STRS], const size_t len[SITE_STRS]) {
  const strobe_capture_site *old = site_at(c, id);
  if (old) {
    const char *olds[SITE_STRS] = {old->name, old->category, old->file, old->function, old->parent};
    int same = old->kind == kind && old->line == line && old->unit == unit && old->flags == flags;
    for (int i = 0; i < SITE_STRS && same; i++) same = str_equal(olds[i], str[i], len[i]);
    return same ? 0 : STROBE_ECORRUPT;
  }
  if (grow_table(&c->sites, &c->sites_cap, id, 64, MAX_SITE_ID + 1)) return STROBE_ENOMEM;
  /* One allocation: the struct, then the terminated strings. */
  size_t total = sizeof(strobe_capture_site) + SITE_STRS;
  for (int i = 0; i < SITE_STRS; i++) total += len[i];
  strobe_capture_site *s = malloc(total);
  if (!s) return STROBE_ENOMEM;
  char *p = (char *)(s + 1);
  const char **dst[SITE_STRS] = {&s->name, &s->category, &s->file, &s->function, &s->parent};
  for (int i = 0; i < SITE_STRS; i++) {
    if (len[i]) memcpy(p, str[i], len[i]);
    p[len[i]] = '\0';
    *dst[i] = p;
    p += len[i] + 1;
  }
  s->id = id;
  s->kind = kind;
  s->line = line;
  s->unit = unit;
  s->flags = flags;
  c->sites[id] = s;
  if (id >= c->site_limit) c->site_limit = id + 1;
  return 0;
}

static const char *label_at(const strobe_capture *c, uint64_t id) {
  return id < c->labels_cap ? c->labels[id] : NULL;
}

/* Defines label `id`; again with the same text is fine (every flight-recorder
 * dump and a recorder may repeat them), with another text it is corrupt. */
static int define_label(strobe_capture *c, uint64_t id, const uint8_t *text, size_t n) {
  if (id == 0 || id > MAX_LABEL_ID) return STROBE_ERANGE;
  const char *old = label_at(c, id);
  if (old) return str_equal(old, text, n) ? 0 : STROBE_ECORRUPT;
  if (grow_table(&c->labels, &c->labels_cap, id, 64, MAX_LABEL_ID + 1)) return STROBE_ENOMEM;
  char *copy = malloc(n + 1);
  if (!copy) return STROBE_ENOMEM;
  if (n) memcpy(copy, text, n);
  copy[n] = '\0';
  c->labels[id] = copy;
  return 0;
}

/* Defines sampled function `id`; again with the same contents is fine. */
static int define_function(strobe_capture *c, uint64_t id, const uint8_t *name, size_t nn, const uint8_t *module,
                           size_t nm, uint64_t resolved) {
  if (id == 0 || id > MAX_FUNCTION_ID) return STROBE_ERANGE;
  if (resolved > 1) return STROBE_ECORRUPT;
  const strobe_capture_function *old = id < c->func_limit ? c->funcs[id] : NULL;
  if (old)
    return str_equal(old->name, name, nn) && str_equal(old->module, module, nm) && old->resolved == (int)resolved
               ? 0
               : STROBE_ECORRUPT;
  if (grow_table(&c->funcs, &c->funcs_cap, id, 256, MAX_FUNCTION_ID + 1)) return STROBE_ENOMEM;
  strobe_capture_function *f = malloc(sizeof *f + nn + nm + 2);
  if (!f) return STROBE_ENOMEM;
  char *p = (char *)(f + 1);
  if (nn) memcpy(p, name, nn);
  p[nn] = '\0';
  f->name = p;
  p += nn + 1;
  if (nm) memcpy(p, module, nm);
  p[nm] = '\0';
  f->module = p;
  f->id = (uint32_t)id;
  f->resolved = (int)resolved;
  c->funcs[id] = f;
  if (id >= c->func_limit) c->func_limit = (uint32_t)id + 1;
  return 0;
}

/* The thread a SAMPLES block's OS thread is: the latest THREAD with that tid. */
static uint32_t thread_of_tid(const strobe_capture *c, uint64_t tid) {
  for (uint32_t i = c->thread_limit; i-- > 0;)
    if (c->threads[i] && c->threads[i]->pub.os_tid == tid) return i;
  return STROBE_CAPTURE_NO_THREAD;
}

/* Sets a thread's name, in place when it fits so earlier name pointers see
 * the new name rather than freed memory. */
static int set_thread_name(rthread *t, const uint8_t *s, size_t n) {
  if (!t->name || t->name->cap < n + 1) {
    size_t cap = t->name ? t->name->cap * 2 : 64;
    while (cap < n + 1) cap *= 2;
    name_buf *b = malloc(sizeof *b + cap);
    if (!b) return STROBE_ENOMEM;
    b->prev = t->name;
    b->cap = cap;
    t->name = b;
  }
  if (n) memcpy(t->name->s, s, n);
  t->name->s[n] = '\0';
  t->pub.name = t->name->s;
  return 0;
}

static int define_thread(strobe_capture *c, uint32_t index, uint64_t os_tid, const uint8_t *name, size_t n) {
  rthread *t = thread_at(c, index);
  if (!t) {
    if (grow_table(&c->threads, &c->threads_cap, index, 16, MAX_THREAD_INDEX + 1)) return STROBE_ENOMEM;
    t = calloc(1, sizeof *t);
    if (!t) return STROBE_ENOMEM;
    t->pub.index = index;
    if (set_thread_name(t, name, n)) {
      free(t);
      return STROBE_ENOMEM;
    }
    c->threads[index] = t;
    if (index >= c->thread_limit) c->thread_limit = index + 1;
  } else if (set_thread_name(t, name, n)) {
    return STROBE_ENOMEM;
  }
  t->pub.os_tid = os_tid;
  t->pub.fiber = os_tid == 0; /* docs/capture-format.md, THREAD */
  return 0;
}

static void free_thread(rthread *t) {
  for (name_buf *b = t->name, *prev; b; b = prev) {
    prev = b->prev;
    free(b);
  }
  free(t->stack);
  free(t);
}

static int push_frame(rthread *t, uint32_t site, uint64_t ticks) {
  if (t->depth >= STROBE__MAX_READER_DEPTH) return STROBE_ERANGE;
  if (t->depth == t->stack_cap) {
    uint32_t cap = t->stack_cap ? t->stack_cap * 2 : 16;
    if (cap > STROBE__MAX_READER_DEPTH) cap = STROBE__MAX_READER_DEPTH;
    frame *p = realloc(t->stack, cap * sizeof *p);
    if (!p) return STROBE_ENOMEM;
    t->stack = p;
    t->stack_cap = cap;
  }
  t->stack[t->depth++] = (frame){site, ticks, 0};
  return 0;
}

/* The file ended (cleanly or cut short): scopes still open never ended. */
static void count_unfinished(strobe_capture *c) {
  for (uint32_t i = 0; i < c->thread_limit; i++) {
    rthread *t = c->threads[i];
    if (!t) continue;
    c->totals.unfinished += t->depth;
    t->depth = 0;
  }
}

static double ticks_to_ns(const strobe_capture *c, uint64_t ticks) {
  /* Signed: ticks before the epoch (a scope begun before the collector
   * started) come out negative rather than near 2^64. */
  return (double)(int64_t)(ticks - c->header.epoch_ticks) * c->header.ns_per_tick;
}

/* A difference of ticks, signed so a clock stepping back shows as negative. */
static double span_ns(const strobe_capture *c, uint64_t ticks) {
  return (double)(int64_t)ticks * c->header.ns_per_tick;
}

/* ======================================================================
 * >>header
 * ====================================================================== */

static void copy_field_str(char *dst, size_t cap, const uint8_t *v, size_t n) {
  if (n > cap - 1) n = cap - 1;
  if (n) memcpy(dst, v, n);
  dst[n] = '\0';
}

static uint64_t le(const uint8_t *v, size_t n) {
  uint64_t x = 0;
  for (size_t i = 0; i < n; i++) x |= (uint64_t)v[i] << (8 * i);
  return x;
}

/* One header field. A known tag with the wrong size is corrupt (a changed
 * encoding would have bumped the version); unknown tags are skipped. */
static int header_field(strobe_capture_header *h, uint16_t tag, const uint8_t *v, size_t n) {
  size_t want = 0;
  switch (tag) {
    case STROBE__TAG_CLOCK_INVARIANT:
    case STROBE__TAG_OVERFLOW:
    case STROBE__TAG_ASSERTIONS: want = 1; break;
    case STROBE__TAG_RING_EVENTS:
    case STROBE__TAG_RING_EVENTS_MAX:
    case STROBE__TAG_TREE_MAX_NODES:
    case STROBE__TAG_TREE_MAX_SNAPSHOTS:
    case STROBE__TAG_ATTACH_MAX_BYTES:
    case STROBE__TAG_DEEP_MAX_CALLS:
    case STROBE__TAG_FLUSH_MS: want = 4; break;
    case STROBE__TAG_EVENT_COST_NS:
    case STROBE__TAG_NS_PER_TICK:
    case STROBE__TAG_EPOCH_TICKS:
    case STROBE__TAG_EPOCH_MONO_NS:
    case STROBE__TAG_START_TICKS:
    case STROBE__TAG_EPOCH_UNIX_NS:
    case STROBE__TAG_JOURNAL_ID:
    case STROBE__TAG_OVERHEAD_NS:
    case STROBE__TAG_EXPLICIT_COST_NS:
    case STROBE__TAG_PID: want = 8; break;
    default: want = n; break; /* strings and unknown tags */
  }
  if (n != want) return STROBE_ECORRUPT;
  uint64_t u = le(v, n < 8 ? n : 8);
  double d;
  memcpy(&d, &u, sizeof d);
  switch (tag) {
    case STROBE__TAG_CLOCK_SOURCE: copy_field_str(h->clock_source, sizeof h->clock_source, v, n); break;
    case STROBE__TAG_CLOCK_INVARIANT: h->clock_invariant = (int)u; break;
    case STROBE__TAG_NS_PER_TICK: h->ns_per_tick = d; break;
    case STROBE__TAG_EPOCH_TICKS: h->epoch_ticks = u; break;
    case STROBE__TAG_EPOCH_MONO_NS: h->epoch_mono_ns = u; break;
    case STROBE__TAG_START_TICKS: h->start_ticks = u; break;
    case STROBE__TAG_OVERHEAD_NS: h->overhead_per_scope_ns = d; break;
    case STROBE__TAG_EXPLICIT_COST_NS: h->explicit_scope_ns = d; break;
    case STROBE__TAG_STROBE_VERSION: copy_field_str(h->strobe_version, sizeof h->strobe_version, v, n); break;
    case STROBE__TAG_OS: copy_field_str(h->os, sizeof h->os, v, n); break;
    case STROBE__TAG_ARCH: copy_field_str(h->arch, sizeof h->arch, v, n); break;
    case STROBE__TAG_FEATURES: copy_field_str(h->features, sizeof h->features, v, n); break;
    case STROBE__TAG_ASSERTIONS: h->assertions = (int)u; break;
    case STROBE__TAG_PID: h->pid = u; break;
    case STROBE__TAG_RING_EVENTS: h->ring_events = (uint32_t)u; break;
    case STROBE__TAG_FLUSH_MS: h->flush_interval_ms = (uint32_t)u; break;
    case STROBE__TAG_KIND: copy_field_str(h->kind, sizeof h->kind, v, n); break;
    case STROBE__TAG_EVENT_COST_NS: h->event_cost_ns = d; break;
    case STROBE__TAG_OVERFLOW: h->overflow = (uint32_t)u; break;
    case STROBE__TAG_RING_EVENTS_MAX: h->ring_events_max = (uint32_t)u; break;
    case STROBE__TAG_TREE_MAX_NODES: h->tree_max_nodes = (uint32_t)u; break;
    case STROBE__TAG_TREE_MAX_SNAPSHOTS: h->tree_max_snapshots = (uint32_t)u; break;
    case STROBE__TAG_BOOT_ID: copy_field_str(h->boot_id, sizeof h->boot_id, v, n); break;
    case STROBE__TAG_ATTACH_MAX_BYTES: h->attach_max_bytes = (uint32_t)u; break;
    case STROBE__TAG_DEEP_MAX_CALLS: h->deep_max_calls = (uint32_t)u; break;
    case STROBE__TAG_EPOCH_UNIX_NS: h->epoch_unix_ns = u; break;
    case STROBE__TAG_JOURNAL_ID: h->journal_id = u; break;
    case STROBE__TAG_JOURNAL: copy_field_str(h->journal, sizeof h->journal, v, n); break;
    default: break;
  }
  return 0;
}

static int read_header(strobe_capture *c) {
  uint8_t fixed[16];
  long long n = src_read(c, fixed, sizeof fixed);
  if (n < 0) return (int)n;
  /* A short file whose bytes are a prefix of the magic is a capture cut
   * short (e.g. killed right after creating it), not a foreign file. */
  size_t m = n < STROBE__MAGIC_LEN ? (size_t)n : STROBE__MAGIC_LEN;
  if (memcmp(fixed, STROBE__MAGIC, m) != 0) return STROBE_EBADMAGIC;
  if (n < 12) return STROBE_ETRUNCATED;
  c->header.version = (uint32_t)le(fixed + 8, 4);
  if (c->header.version < STROBE_CAPTURE_FORMAT_OLDEST || c->header.version > STROBE__FORMAT_VERSION)
    return STROBE_EVERSION;
  if (n < 16) return STROBE_ETRUNCATED;
  uint32_t fields_len = (uint32_t)le(fixed + 12, 4);
  if (fields_len > MAX_FIELDS_LEN) return STROBE_ECORRUPT;
  const uint8_t *fields;
  int r = src_bytes(c, fields_len, &fields);
  if (r) return r;
  c->header.ns_per_tick = 1.0;
  strobe__cur cur = {fields, fields + fields_len, 0};
  while (cur.p < cur.end) {
    uint16_t tag = strobe__cur_u16(&cur);
    uint16_t len = strobe__cur_u16(&cur);
    const uint8_t *v = strobe__cur_bytes(&cur, len);
    if (cur.bad) return STROBE_ECORRUPT;
    r = header_field(&c->header, tag, v, len);
    if (r) return r;
  }
  return 0;
}

/* ======================================================================
 * >>blocks — framing, CRC, decompression, single-record blocks
 * ====================================================================== */

/* Reads the next block and leaves its payload in c->cur. Returns 1 with the
 * block's type in *type, 0 at a clean end of input, or a negative error. */
static int read_block(strobe_capture *c, uint8_t *type) {
again:;
  uint64_t at = strobe_capture_query_position(c);
  uint8_t hb[STROBE__BLOCK_HEADER];
  long long n = src_read(c, hb, sizeof hb);
  if (n < 0) return (int)n;
  if (n == 0) return 0;
  if (n < STROBE__BLOCK_HEADER) return STROBE_ETRUNCATED;
  strobe__block_header h;
  strobe__block_header_decode(hb, &h);

  /* Bound stored_len before reading it, so a corrupt length cannot make us
   * buffer gigabytes. A zstd frame never exceeds ZSTD_compressBound. */
  if (h.raw_len > STROBE__MAX_BLOCK_RAW) return STROBE_ECORRUPT;
  int known = strobe__block_known(h.type);
  if (h.codec == STROBE__CODEC_RAW) {
    if (h.stored_len != h.raw_len) return STROBE_ECORRUPT;
  } else if (h.codec == STROBE__CODEC_ZSTD) {
    if (h.stored_len > ZSTD_compressBound(h.raw_len)) return STROBE_ECORRUPT;
  } else if (known || h.stored_len > ZSTD_compressBound(STROBE__MAX_BLOCK_RAW)) {
    return STROBE_ECORRUPT; /* an unknown codec is only skippable on an unknown block */
  }

  const uint8_t *stored;
  int r = src_bytes(c, h.stored_len, &stored);
  if (r) return r;
  int damaged = strobe__block_crc(hb, stored, h.stored_len) != h.crc;
  if (damaged && c->skip_damaged && h.type == STROBE__BLK_ATTACH) {
    /* Framed whole (its length was bounded and its bytes are there): one resource's content, which no later
     * block depends on, is skipped and counted (strobe_capture_set_skip_damaged_content). */
    if (!c->totals.attach_damaged) c->totals.attach_damaged_at = at;
    c->totals.attach_damaged++;
    goto again;
  }
  if (damaged) return STROBE_ECORRUPT;
  c->totals.blocks++;

  /* Blocks left compressed (unknown types, skipped) keep their stored length. */
  const uint8_t *payload = stored;
  size_t len = h.stored_len;
  if (known && h.codec == STROBE__CODEC_ZSTD) {
    /* One frame, whose declared size (when it declares one) is raw_len:
     * checked before allocating raw_len bytes for it. */
    unsigned long long content = ZSTD_getFrameContentSize(stored, h.stored_len);
    if (content == ZSTD_CONTENTSIZE_ERROR) return STROBE_ECORRUPT;
    if (content != ZSTD_CONTENTSIZE_UNKNOWN && content != h.raw_len) return STROBE_ECORRUPT;
    size_t frame_len = ZSTD_findFrameCompressedSize(stored, h.stored_len);
    if (ZSTD_isError(frame_len) || frame_len != h.stored_len) return STROBE_ECORRUPT;
    if (h.raw_len > c->raw_cap || !c->raw) {
      size_t cap = h.raw_len ? h.raw_len : 1;
      uint8_t *p = realloc(c->raw, cap);
      if (!p) return STROBE_ENOMEM;
      c->raw = p;
      c->raw_cap = cap;
    }
    if (!c->zstd && !(c->zstd = ZSTD_createDCtx())) return STROBE_ENOMEM;
    size_t got = ZSTD_decompressDCtx(c->zstd, c->raw, h.raw_len, stored, h.stored_len);
    if (ZSTD_isError(got) || got != h.raw_len) return STROBE_ECORRUPT;
    payload = h.raw_len ? c->raw : g_empty;
    len = h.raw_len;
  }
  c->cur = (strobe__cur){payload, payload + len, 0};
  *type = h.type;
  return 1;
}

/* The payload must be used up exactly: trailing bytes mean a different
 * encoding than this reader knows, which the version would have announced. */
static int payload_done(const strobe__cur *cur) {
  return cur->bad || cur->p != cur->end ? STROBE_ECORRUPT : 0;
}

/* A boot id as written: 32 lowercase hex digits, or (merge inputs) empty. */
static int boot_str(char dst[33], const uint8_t *v, size_t n, int may_be_empty) {
  if (n == 0 && may_be_empty) {
    dst[0] = 0;
    return 0;
  }
  if (n != 32) return STROBE_ECORRUPT;
  for (size_t i = 0; i < 32; i++)
    if (!((v[i] >= '0' && v[i] <= '9') || (v[i] >= 'a' && v[i] <= 'f'))) return STROBE_ECORRUPT;
  memcpy(dst, v, 32);
  dst[32] = 0;
  return 0;
}

/* CLOCK_OFFSETS: replaced:varint (local_boot:str peer_boot:str peer:str at_mono_ns:varint offset_ns:zigzag
 * error_ns:varint rtt_ns:varint rounds:varint)* (docs/capture-format.md). An entry that could not have been
 * written (error 0 or above the round trip, no rounds) is corrupt; past the bound entries are counted. */
static int block_clock_offsets(strobe_capture *c) {
  strobe__cur *cur = &c->cur;
  uint64_t replaced = strobe__cur_varint(cur);
  if (cur->bad) return STROBE_ECORRUPT;
  c->offsets_replaced += replaced;
  while (cur->p < cur->end) {
    size_t nl, np, nn;
    const uint8_t *local = strobe__cur_str(cur, &nl);
    const uint8_t *peer_boot = strobe__cur_str(cur, &np);
    const uint8_t *peer = strobe__cur_str(cur, &nn);
    uint64_t at = strobe__cur_varint(cur);
    int64_t offset = strobe__unzigzag(strobe__cur_varint(cur));
    uint64_t err = strobe__cur_varint(cur), rtt = strobe__cur_varint(cur), rounds = strobe__cur_varint(cur);
    if (cur->bad || !err || err > rtt || !rounds || rounds > UINT32_MAX) return STROBE_ECORRUPT;
    strobe_capture_clock_offset o;
    memset(&o, 0, sizeof o);
    if (boot_str(o.local_boot_id, local, nl, 0) || boot_str(o.sample.peer_boot_id, peer_boot, np, 0))
      return STROBE_ECORRUPT;
    copy_field_str(o.sample.peer, sizeof o.sample.peer, peer, nn);
    o.sample.at_mono_ns = at, o.sample.offset_ns = offset, o.sample.error_ns = err, o.sample.rtt_ns = rtt;
    o.sample.rounds = (uint32_t)rounds;
    if (c->noffsets == STROBE_CAPTURE_MAX_CLOCK_OFFSETS) {
      c->offsets_cut++;
      continue;
    }
    if (c->noffsets == c->offsets_cap) {
      uint32_t cap = c->offsets_cap ? c->offsets_cap * 2 : 16;
      strobe_capture_clock_offset *grown = realloc(c->offsets, cap * sizeof *grown);
      if (!grown) return STROBE_ENOMEM;
      c->offsets = grown, c->offsets_cap = cap;
    }
    c->offsets[c->noffsets++] = o;
  }
  return 0;
}

/* MERGE: inputs:varint (process:str boot:str pid:varint alignment:varint hops:varint shift_ns:zigzag
 * error_ns:varint)*inputs kinds:varint (record_type:varint count:varint)*kinds. One per capture. */
/* >>crash: CRASH (docs/capture-format.md §CRASH), read twice: sizes first, then copied into one allocation. */
static const char *signal_name(int sig, char *buf, size_t cap) {
  static const struct { int sig; const char *name; } names[] = {
      {11, "SIGSEGV"}, {7, "SIGBUS"}, {4, "SIGILL"}, {8, "SIGFPE"}, {6, "SIGABRT"}}; /* the format's (Linux's) numbers */
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (names[i].sig == sig) return names[i].name;
  snprintf(buf, cap, "signal %d", sig);
  return buf;
}

static int crash_parse(strobe__cur cur, strobe_capture_crash *out, strobe_capture_crash_thread *threads,
                       const char **scopes, char *text, size_t *nthreads, size_t *nscopes, size_t *ntext,
                       uint64_t *ticks_out) {
  size_t th = 0, sc = 0, tx = 0;
#define CRASH_STR(dst)                                            \
  do {                                                            \
    size_t n_;                                                    \
    const uint8_t *s_ = strobe__cur_str(&cur, &n_);               \
    if (cur.bad || (s_ && memchr(s_, 0, n_))) return STROBE_ECORRUPT; \
    if (text) {                                                   \
      memcpy(text + tx, s_, n_);                                  \
      text[tx + n_] = 0;                                          \
      (dst) = text + tx;                                          \
    }                                                             \
    tx += n_ + 1;                                                 \
  } while (0)
  uint64_t sig = strobe__cur_varint(&cur), ticks = strobe__cur_varint(&cur), fault = strobe__cur_varint(&cur);
  const char *fname = NULL, *kind = NULL, *stage = NULL;
  CRASH_STR(fname);
  CRASH_STR(kind);
  uint64_t frame_id = strobe__cur_varint(&cur);
  CRASH_STR(stage);
  uint64_t n = strobe__cur_varint(&cur), cut = strobe__cur_varint(&cur);
  if (cur.bad || sig > 255 || fault > UINT32_MAX || n > 64 || cut > UINT32_MAX) return STROBE_ECORRUPT;
  for (uint64_t i = 0; i < n; i++) {
    strobe_capture_crash_thread t = {0};
    uint64_t index = strobe__cur_varint(&cur);
    CRASH_STR(t.name);
    uint64_t scut = strobe__cur_varint(&cur), ns = strobe__cur_varint(&cur);
    if (cur.bad || index > UINT32_MAX || scut > STROBE_MAX_DEPTH || ns > 32) return STROBE_ECORRUPT;
    t.index = (uint32_t)index, t.scopes_cut = (uint32_t)scut, t.nscopes = (uint32_t)ns;
    t.scopes = scopes ? scopes + sc : NULL;
    for (uint64_t k = 0; k < ns; k++) {
      const char *name = NULL;
      CRASH_STR(name);
      if (scopes) scopes[sc] = name;
      sc++;
    }
    if (threads) threads[th] = t;
    th++;
  }
#undef CRASH_STR
  if (payload_done(&cur)) return STROBE_ECORRUPT;
  if (out) {
    *out = (strobe_capture_crash){(int)sig, NULL, 0, fault != 0, fault ? (uint32_t)(fault - 1) : 0, fname,
                                  kind && kind[0] ? kind : NULL, frame_id, stage, (uint32_t)n, (uint32_t)cut, threads};
  }
  *ticks_out = ticks;
  *nthreads = th, *nscopes = sc, *ntext = tx;
  return 0;
}

static int block_crash(strobe_capture *c) {
  if (c->crash) return STROBE_ECORRUPT; /* one per capture */
  size_t nt, ns, nx;
  uint64_t ticks;
  int rc = crash_parse(c->cur, NULL, NULL, NULL, NULL, &nt, &ns, &nx, &ticks);
  if (rc) return rc;
  size_t size = sizeof(strobe_capture_crash) + nt * sizeof(strobe_capture_crash_thread) + ns * sizeof(char *) + nx + 32;
  strobe_capture_crash *k = calloc(1, size);
  if (!k) return STROBE_ENOMEM;
  strobe_capture_crash_thread *threads = (strobe_capture_crash_thread *)(k + 1);
  const char **scopes = (const char **)(threads + nt);
  char *text = (char *)(scopes + ns);
  rc = crash_parse(c->cur, k, threads, scopes, text + 32, &nt, &ns, &nx, &ticks);
  if (rc) {
    free(k);
    return rc;
  }
  k->signal_name = signal_name(k->signal, text, 32);
  k->time_ns = ((double)ticks - (double)c->header.epoch_ticks) * c->header.ns_per_tick;
  c->cur.p = c->cur.end;
  c->crash = k;
  return 0;
}

const strobe_capture_crash *strobe_capture_query_crash(const strobe_capture *c) { return c ? c->crash : NULL; }

const char *strobe_capture_crash_text(const strobe_capture_crash *k, char *buf, size_t cap) {
  if (!buf || !cap) return buf;
  buf[0] = 0;
  if (!k) return buf;
  int n = snprintf(buf, cap, "%s on ", k->signal_name);
  if (n >= 0 && (size_t)n < cap)
    n += k->fault_thread_known
             ? snprintf(buf + n, cap - (size_t)n, "thread %s", k->fault_thread_name[0] ? k->fault_thread_name : "(unnamed)")
             : snprintf(buf + n, cap - (size_t)n, "a thread that recorded nothing");
  if (n < 0 || (size_t)n >= cap) return buf;
  if (!k->op_kind) {
    snprintf(buf + n, cap - (size_t)n, ", in no operation");
    return buf;
  }
  n += snprintf(buf + n, cap - (size_t)n, " in %s", k->op_kind);
  if ((size_t)n < cap && k->frame_id) n += snprintf(buf + n, cap - (size_t)n, " %llu", (unsigned long long)k->frame_id);
  if ((size_t)n < cap && k->stage[0]) snprintf(buf + n, cap - (size_t)n, " \xe2\x80\xba %s", k->stage);
  return buf;
}

static int block_merge(strobe_capture *c) {
  strobe__cur *cur = &c->cur;
  if (c->merge) return STROBE_ECORRUPT;
  uint64_t n = strobe__cur_varint(cur);
  if (cur->bad || n == 0 || n > STROBE_CAPTURE_MAX_MERGED) return STROBE_ECORRUPT;
  strobe_capture_merge *m = calloc(1, sizeof *m);
  if (!m) return STROBE_ENOMEM;
  int rc = 0;
  for (uint64_t i = 0; i < n && !rc; i++) {
    strobe_capture_merge_input *in = &m->inputs[i];
    size_t np, nb;
    const uint8_t *process = strobe__cur_str(cur, &np);
    const uint8_t *boot = strobe__cur_str(cur, &nb);
    in->pid = strobe__cur_varint(cur);
    uint64_t how = strobe__cur_varint(cur), hops = strobe__cur_varint(cur);
    in->shift_ns = strobe__unzigzag(strobe__cur_varint(cur));
    in->error_ns = strobe__cur_varint(cur);
    if (cur->bad || how > STROBE_ALIGN_VOUCHED || hops > STROBE_CAPTURE_MAX_MERGED || boot_str(in->boot_id, boot, nb, 1))
      rc = STROBE_ECORRUPT;
    copy_field_str(in->process, sizeof in->process, process ? process : (const uint8_t *)"", process ? np : 0);
    in->alignment = (uint32_t)how, in->hops = (uint32_t)hops;
    if (in->error_ns > m->error_ns) m->error_ns = in->error_ns;
  }
  uint64_t kinds = rc ? 0 : strobe__cur_varint(cur);
  if (!rc && (cur->bad || kinds > STROBE_CAPTURE_REC_TYPES)) rc = STROBE_ECORRUPT;
  for (uint64_t i = 0; i < kinds && !rc; i++) {
    uint64_t type = strobe__cur_varint(cur), count = strobe__cur_varint(cur);
    if (cur->bad || type >= STROBE_CAPTURE_REC_TYPES) rc = STROBE_ECORRUPT;
    else m->not_merged[type] += count;
  }
  if (!rc) rc = payload_done(cur);
  if (rc) {
    free(m);
    return rc;
  }
  m->ninputs = (uint32_t)n;
  c->merge = m;
  return 0;
}

static int thread_ref(strobe_capture *c, uint64_t index, rthread **out) {
  *out = thread_at(c, index);
  return *out ? 0 : STROBE_ERANGE;
}

static int block_thread(strobe_capture *c, strobe_capture_record *rec) {
  uint64_t index = strobe__cur_varint(&c->cur);
  uint64_t os_tid = strobe__cur_varint(&c->cur);
  size_t n;
  const uint8_t *name = strobe__cur_str(&c->cur, &n);
  int r = payload_done(&c->cur);
  if (r) return r;
  if (index > MAX_THREAD_INDEX) return STROBE_ERANGE;
  r = define_thread(c, (uint32_t)index, os_tid, name, n);
  if (r) return r;
  rec->type = STROBE_REC_THREAD;
  rec->thread = (uint32_t)index;
  return 1;
}

static int block_thread_end(strobe_capture *c, strobe_capture_record *rec) {
  uint64_t index = strobe__cur_varint(&c->cur);
  int r = payload_done(&c->cur);
  rthread *t;
  if (r || (r = thread_ref(c, index, &t))) return r;
  rec->type = STROBE_REC_THREAD_END;
  rec->thread = t->pub.index;
  rec->depth = t->depth; /* the scopes left unfinished */
  c->totals.unfinished += t->depth;
  t->depth = 0;
  t->pub.ended = 1;
  return 1;
}

static int block_lost(strobe_capture *c, strobe_capture_record *rec) {
  uint64_t index = strobe__cur_varint(&c->cur);
  uint64_t lost = strobe__cur_varint(&c->cur);
  int r = payload_done(&c->cur);
  rthread *t;
  if (r || (r = thread_ref(c, index, &t))) return r;
  t->pub.lost += lost;
  c->totals.lost += lost;
  rec->type = STROBE_REC_LOST;
  rec->thread = t->pub.index;
  rec->depth = t->depth; /* nothing is closed: the block says how many, not where */
  rec->lost = lost;
  return 1;
}

static int block_footer(strobe_capture *c) {
  uint64_t end_ticks = strobe__cur_varint(&c->cur);
  uint64_t nthreads = strobe__cur_varint(&c->cur);
  /* Each entry takes at least 3 bytes: bound the loop by what is there. */
  if (c->cur.bad || nthreads > (uint64_t)(c->cur.end - c->cur.p) / 3) return STROBE_ECORRUPT;
  int range = 0;
  for (uint64_t i = 0; i < nthreads; i++) {
    uint64_t index = strobe__cur_varint(&c->cur);
    (void)strobe__cur_varint(&c->cur); /* events: the writer's count, for tools that compare */
    (void)strobe__cur_varint(&c->cur); /* lost: already counted from LOST markers and blocks */
    if (!thread_at(c, index)) range = 1;
  }
  /* Footers before version 3 hold the first STROBE__MISUSE_BEFORE_V3 counters only. */
  strobe_misuse misuse;
  uint32_t counters = c->header.version >= 3 ? UINT32_MAX : STROBE__MISUSE_BEFORE_V3, i = 0;
#define MISUSE(name) misuse.name = i++ < counters ? strobe__cur_varint(&c->cur) : 0;
  STROBE_MISUSE_MAP(MISUSE)
#undef MISUSE
  int r = payload_done(&c->cur);
  if (r) return r;
  if (range) return STROBE_ERANGE;
  c->totals.footer = 1;
  c->totals.end_ticks = end_ticks;
  c->totals.misuse = misuse;
  return 0;
}

/* Grows a reader array to hold `need` entries of `size` bytes. */
static int reserve_array(void **p, uint32_t *cap, uint64_t need, size_t size) {
  if (need <= *cap) return 0;
  uint64_t n = *cap ? *cap : 64;
  while (n < need) n *= 2;
  void *q = realloc(*p, (size_t)n * size);
  if (!q) return STROBE_ENOMEM;
  *p = q;
  *cap = (uint32_t)n;
  return 0;
}

/* A TREE block (docs/capture-format.md): one snapshot, whole, as one
 * record. Bounded as the writer bounds it; nodes must name element types
 * and keep the preorder depth rule. */
#define TREE_NODE_MIN 27u /* bytes of the smallest node: depth, type, id, bounds, nprops */

/* A string table of a TREE or DEEP block: n strings (n within the block's
 * bound), copied NUL-terminated into *store (grown to *cap bytes);
 * names[i] points at each. Returns 0, STROBE_ECORRUPT for a cut string, one
 * holding a NUL, or an empty one unless empty_ok, STROBE_ENOMEM. It reads
 * the strings twice (sizes, then copies) so it needs no array of its own. */
static int read_names(strobe__cur *cur, uint64_t n, int empty_ok, char **store, size_t *cap, const char **names) {
  const uint8_t *first = cur->p;
  size_t need = 0, len;
  for (uint64_t i = 0; i < n; i++) {
    const uint8_t *text = strobe__cur_str(cur, &len);
    if (cur->bad || (len == 0 && !empty_ok) || memchr(text, 0, len)) return STROBE_ECORRUPT;
    need += len + 1;
  }
  if (need > *cap) {
    char *p = realloc(*store, need);
    if (!p) return STROBE_ENOMEM;
    *store = p;
    *cap = need;
  }
  cur->p = first;
  for (uint64_t i = 0, off = 0; i < n; i++) {
    const uint8_t *text = strobe__cur_str(cur, &len);
    memcpy(*store + off, text, len);
    (*store)[off + len] = 0;
    names[i] = *store + off;
    off += len + 1;
  }
  return 0;
}

static int block_tree(strobe_capture *c, strobe_capture_record *rec) {
  strobe__cur *cur = &c->cur;
  strobe_capture_tree *t = &c->tree;
  *t = (strobe_capture_tree){0};
  t->seq = strobe__cur_varint(cur);
  t->ticks = strobe__cur_varint(cur);
  uint64_t nnodes = strobe__cur_varint(cur);
  t->nodes_dropped = strobe__cur_varint(cur);
  t->props_dropped = strobe__cur_varint(cur);
  uint64_t nkeys = strobe__cur_varint(cur);
  if (cur->bad || nnodes > STROBE_TREE_MAX_NODES || nkeys > STROBE_TREE_MAX_KEYS ||
      nnodes > (uint64_t)(cur->end - cur->p) / TREE_NODE_MIN)
    return STROBE_ECORRUPT;
  const char *keys[STROBE_TREE_MAX_KEYS];
  int r = read_names(cur, nkeys, 1, &c->tree_keys, &c->tree_keys_cap, keys);
  if (r) return r;
  r = reserve_array((void **)&c->tree_nodes, &c->tree_nodes_cap, nnodes, sizeof *c->tree_nodes);
  if (r) return r;
  uint64_t nprops = 0;
  for (uint64_t i = 0; i < nnodes; i++) {
    strobe_capture_tree_node *n = &c->tree_nodes[i];
    uint64_t depth = strobe__cur_varint(cur), type = strobe__cur_varint(cur);
    n->id = strobe__cur_u64(cur);
    float *b[4] = {&n->x, &n->y, &n->width, &n->height};
    for (int k = 0; k < 4; k++) {
      uint32_t u = strobe__cur_u32(cur);
      memcpy(b[k], &u, sizeof u);
    }
    uint64_t np = strobe__cur_varint(cur);
    if (cur->bad || np > STROBE_TREE_MAX_PROPS) return STROBE_ECORRUPT;
    /* Preorder: the first node is a root, each next one at most one deeper. */
    if (i == 0 ? depth != 0 : depth > (uint64_t)c->tree_nodes[i - 1].depth + 1) return STROBE_ECORRUPT;
    const strobe_capture_site *site = site_at(c, type);
    if (!site) return STROBE_ERANGE;
    if (site->kind != STROBE_SITE_ELEMENT) return STROBE_ECORRUPT;
    n->depth = (uint32_t)depth;
    n->type = (uint32_t)type;
    n->nprops = (uint32_t)np;
    r = reserve_array((void **)&c->tree_props, &c->tree_props_cap, nprops + np, sizeof *c->tree_props);
    if (r) return r;
    for (uint64_t k = 0; k < np; k++) {
      uint64_t key = strobe__cur_varint(cur);
      double v = strobe__cur_f64(cur);
      if (cur->bad || key >= nkeys) return STROBE_ECORRUPT;
      c->tree_props[nprops + k] = (strobe_capture_tree_prop){keys[key], v};
    }
    nprops += np;
  }
  r = payload_done(cur);
  if (r) return r;
  /* Pointers last: the arrays may have moved while growing. */
  for (uint64_t i = 0, p = 0; i < nnodes; p += c->tree_nodes[i].nprops, i++)
    c->tree_nodes[i].props = c->tree_nodes[i].nprops ? c->tree_props + p : NULL;
  t->nnodes = (uint32_t)nnodes;
  t->nodes = c->tree_nodes;
  t->time_ns = ticks_to_ns(c, t->ticks);
  rec->type = STROBE_REC_TREE;
  rec->origin = c->origin;
  rec->ticks = t->ticks;
  rec->time_ns = t->time_ns;
  rec->tree = t;
  c->totals.trees++;
  return 1;
}

/* An ATTACH block (docs/capture-format.md): one attachment as one record,
 * its content in place in the decompressed block. */
static int media_ok(const uint8_t *m, size_t n) {
  if (n == 0 || n > STROBE_MEDIA_TYPE_MAX) return 0;
  for (size_t i = 0; i < n; i++) {
    uint8_t ch = m[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '.' || ch == '+' || ch == '/' || ch == '-'))
      return 0;
  }
  return 1;
}

static int block_attach(strobe_capture *c, strobe_capture_record *rec) {
  strobe__cur *cur = &c->cur;
  strobe_capture_attachment *a = &c->attach;
  *a = (strobe_capture_attachment){0};
  a->frame = strobe__cur_varint(cur);
  a->resource = strobe__cur_varint(cur);
  a->ticks = strobe__cur_varint(cur);
  size_t n;
  const uint8_t *media = strobe__cur_str(cur, &n);
  uint64_t width = strobe__cur_varint(cur), height = strobe__cur_varint(cur);
  uint64_t state = strobe__cur_varint(cur);
  a->size = strobe__cur_varint(cur);
  if (cur->bad || a->resource == 0 || !media_ok(media, n) || width > UINT32_MAX || height > UINT32_MAX ||
      state > STROBE_CAPTURE_ATTACH_CUT || a->size == 0 || a->size > STROBE_ATTACH_MAX_BYTES)
    return STROBE_ECORRUPT;
  if (state == STROBE_CAPTURE_ATTACH_STORED) {
    a->bytes = strobe__cur_bytes(cur, (size_t)a->size);
    if (!a->bytes) return STROBE_ECORRUPT;
  }
  int r = payload_done(cur);
  if (r) return r;
  memcpy(c->attach_media, media, n);
  c->attach_media[n] = 0;
  a->media_type = c->attach_media;
  a->width = (uint32_t)width;
  a->height = (uint32_t)height;
  a->state = (uint32_t)state;
  a->time_ns = ticks_to_ns(c, a->ticks);
  rec->type = STROBE_REC_ATTACHMENT;
  rec->origin = c->origin;
  rec->ticks = a->ticks;
  rec->time_ns = a->time_ns;
  rec->attachment = a;
  c->totals.attachments++;
  return 1;
}

/* A DEEP block (docs/capture-format.md): one frame's draw calls as one
 * record. Bounded as the writer bounds it. */
#define DEEP_CALL_MIN 10u /* bytes of the smallest call: three labels, four ranges, geometry flag, nrefs */
static int block_deep(strobe_capture *c, strobe_capture_record *rec) {
  strobe__cur *cur = &c->cur;
  strobe_capture_deep *d = &c->deep;
  *d = (strobe_capture_deep){0};
  d->seq = strobe__cur_varint(cur);
  d->frame = strobe__cur_varint(cur);
  d->ticks = strobe__cur_varint(cur);
  uint64_t ncalls = strobe__cur_varint(cur);
  d->calls_dropped = strobe__cur_varint(cur);
  uint64_t nlabels = strobe__cur_varint(cur);
  if (cur->bad || ncalls > STROBE_DEEP_MAX_CALLS || nlabels > STROBE_DEEP_MAX_LABELS ||
      ncalls > (uint64_t)(cur->end - cur->p) / DEEP_CALL_MIN)
    return STROBE_ECORRUPT;
  const char *labels[STROBE_DEEP_MAX_LABELS];
  int r = read_names(cur, nlabels, 0, &c->deep_labels, &c->deep_labels_cap, labels);
  if (r) return r;
  r = reserve_array((void **)&c->deep_calls, &c->deep_calls_cap, ncalls, sizeof *c->deep_calls);
  if (r) return r;
  uint64_t nrefs = 0;
  for (uint64_t i = 0; i < ncalls; i++) {
    strobe_capture_draw_call *k = &c->deep_calls[i];
    *k = (strobe_capture_draw_call){0};
    uint64_t v[7];
    for (int j = 0; j < 7; j++) v[j] = strobe__cur_varint(cur);
    uint64_t geometry = strobe__cur_varint(cur);
    if (cur->bad || v[0] >= nlabels || v[1] >= nlabels || v[2] >= nlabels || geometry > 1) return STROBE_ECORRUPT;
    for (int j = 3; j < 7; j++)
      if (v[j] > UINT32_MAX) return STROBE_ECORRUPT;
    if (geometry)
      for (int j = 0; j < 4; j++) {
        uint32_t b = strobe__cur_u32(cur), q = strobe__cur_u32(cur);
        memcpy(&k->bounds[j], &b, sizeof b);
        memcpy(&k->clip[j], &q, sizeof q);
      }
    uint64_t nr = strobe__cur_varint(cur);
    if (cur->bad || nr > STROBE_DEEP_MAX_REFS) return STROBE_ECORRUPT;
    r = reserve_array((void **)&c->deep_refs, &c->deep_refs_cap, nrefs + nr, sizeof *c->deep_refs);
    if (r) return r;
    for (uint64_t j = 0; j < nr; j++) {
      uint64_t role = strobe__cur_varint(cur);
      uint64_t id = strobe__cur_u64(cur);
      if (cur->bad || role < STROBE_DEEP_GEOMETRY || role > STROBE_DEEP_SURFACE || id == 0) return STROBE_ECORRUPT;
      c->deep_refs[nrefs + j] = (strobe_draw_ref){id, (uint32_t)role};
    }
    k->seq = (uint32_t)i;
    k->kind = labels[v[0]];
    k->pipeline = labels[v[1]];
    k->pass = labels[v[2]];
    k->vertex_first = (uint32_t)v[3];
    k->vertex_count = (uint32_t)v[4];
    k->instance_first = (uint32_t)v[5];
    k->instance_count = (uint32_t)v[6];
    k->has_geometry = (int)geometry;
    k->nrefs = (uint32_t)nr;
    nrefs += nr;
  }
  r = payload_done(cur);
  if (r) return r;
  /* Pointers last: the arrays may have moved while growing. */
  for (uint64_t i = 0, p = 0; i < ncalls; p += c->deep_calls[i].nrefs, i++)
    c->deep_calls[i].refs = c->deep_calls[i].nrefs ? c->deep_refs + p : NULL;
  d->ncalls = (uint32_t)ncalls;
  d->calls = c->deep_calls;
  d->time_ns = ticks_to_ns(c, d->ticks);
  rec->type = STROBE_REC_DEEP;
  rec->origin = c->origin;
  rec->ticks = d->ticks;
  rec->time_ns = d->time_ns;
  rec->deep = d;
  c->totals.deeps++;
  return 1;
}

int strobe_capture_tree_parents(const strobe_capture_tree *tree, int32_t *parent) {
  if (!tree || (!parent && tree->nnodes)) return STROBE_EINVAL;
  if (tree->nnodes && !tree->nodes) return STROBE_EINVAL;
  /* The stack holds indexes of nodes whose subtrees are still open; it is
   * never deeper than the deepest node, and a node is at most one deeper
   * than the one before it, so nnodes bounds it. */
  int32_t *stack = malloc(((size_t)tree->nnodes + 1) * sizeof *stack);
  if (!stack) return STROBE_ENOMEM;
  uint32_t top = 0;
  int r = 0;
  for (uint32_t i = 0; i < tree->nnodes; i++) {
    uint32_t depth = tree->nodes[i].depth;
    if (i == 0 ? depth != 0 : depth > tree->nodes[i - 1].depth + 1) {
      r = STROBE_ECORRUPT;
      break;
    }
    while (top && tree->nodes[stack[top - 1]].depth >= depth) top--; /* as deep or deeper: not an ancestor */
    parent[i] = top ? stack[top - 1] : -1;
    stack[top++] = (int32_t)i;
  }
  free(stack);
  return r;
}

/* A cumulative totals block (DRAIN, CALLS, SAMPLER): exactly n varints. */
static int totals_block(strobe__cur *cur, uint64_t *v, int n) {
  for (int i = 0; i < n; i++) v[i] = strobe__cur_varint(cur);
  return payload_done(cur);
}

/* Starts on a block just read. Returns 1 when it produced a record (blocks
 * holding exactly one), 0 when not (yet), or a negative error. */
/* An EVENTS block's header (docs/capture-format.md): its thread, count and
 * base ticks, and the two streams (ops, times) the events are decoded from. */
static int block_events_start(strobe_capture *c) {
  uint64_t index = strobe__cur_varint(&c->cur);
  uint64_t count = strobe__cur_varint(&c->cur);
  uint64_t base = strobe__cur_varint(&c->cur);
  uint64_t ops_len = strobe__cur_varint(&c->cur);
  if (c->cur.bad || ops_len > (uint64_t)(c->cur.end - c->cur.p)) return STROBE_ECORRUPT;
  /* Every event has at least one ops byte and one times byte. */
  if (count > ops_len || count > (uint64_t)(c->cur.end - c->cur.p) - ops_len) return STROBE_ECORRUPT;
  int r = thread_ref(c, index, &c->ev_thread);
  if (r) return r;
  c->ops = (strobe__cur){c->cur.p, c->cur.p + ops_len, 0};
  c->times = (strobe__cur){c->cur.p + ops_len, c->cur.end, 0};
  c->ev_left = count;
  c->ev_ticks = base;
  c->blk = STROBE__BLK_EVENTS;
  return 0;
}

/* An OPS, DEVICE or SAMPLES block's header: `thread count base_ticks
 * entry*count` (SAMPLES: the OS thread id first); its entries are decoded
 * one record at a time. */
static int block_entries_start(strobe_capture *c, uint8_t type) {
  uint64_t index = strobe__cur_varint(&c->cur);
  uint64_t count = strobe__cur_varint(&c->cur);
  uint64_t base = strobe__cur_varint(&c->cur);
  /* Every entry has at least three bytes. */
  if (c->cur.bad || count > (uint64_t)(c->cur.end - c->cur.p) / 3) return STROBE_ECORRUPT;
  if (type == STROBE__BLK_SAMPLES) {
    c->smp_tid = index;
    c->smp_thread = thread_of_tid(c, index);
  } else {
    int r = thread_ref(c, index, &c->ev_thread);
    if (r) return r;
  }
  c->ev_left = count;
  c->ev_ticks = base;
  c->blk = type;
  return 0;
}

/* A RECOVERY block: what a recovery added from the crash journal. */
static int block_recovery(strobe_capture *c) {
  uint64_t v[3];
  int r = totals_block(&c->cur, v, 3);
  if (r) return r;
  c->totals.recovered = 1;
  c->totals.recovered_events = v[0];
  c->totals.recovered_threads = v[1];
  c->totals.unrecoverable = v[2];
  return 0;
}

/* A CALLS block (6 fields, or 8 with the two min_ns counts): what call
 * tracing cut and named. */
/* DRAIN and RINGS: two cumulative figures each, the last block's are the capture's. */
static int block_two_totals(strobe_capture *c, uint8_t type) {
  uint64_t v[2];
  int r = totals_block(&c->cur, v, 2);
  if (r) return r;
  uint64_t *to[2] = {&c->totals.drain_cpu_ns, &c->totals.drain_events};
  if (type == STROBE__BLK_RINGS) to[0] = &c->totals.rings_grown, to[1] = &c->totals.producer_waits;
  *to[0] = v[0], *to[1] = v[1];
  return 0;
}

static int block_calls_totals(strobe_capture *c) {
  uint64_t v[8] = {0};
  int r = totals_block(&c->cur, v, 6);
  if (r == STROBE_ECORRUPT && c->cur.p < c->cur.end) { /* 8 fields: the two min_ns counts follow */
    v[6] = strobe__cur_varint(&c->cur);
    v[7] = strobe__cur_varint(&c->cur);
    r = payload_done(&c->cur);
  }
  if (r) return r;
  if (v[4] > UINT32_MAX || v[5] > v[4]) return STROBE_ECORRUPT;
  c->totals.calls_cut_depth = v[0];
  c->totals.calls_cut_stack = v[1];
  c->totals.calls_cut_functions = v[2];
  c->totals.calls_excluded = v[3];
  c->totals.calls_functions = (uint32_t)v[4];
  c->totals.calls_unresolved = (uint32_t)v[5];
  c->totals.calls_cut_short = v[6];
  c->totals.calls_cut_order = v[7];
  return 0;
}

/* A SAMPLER block: the sampler's rate, what it wrote, lost and named. */
static int block_sampler_totals(strobe_capture *c) {
  uint64_t v[9];
  int r = totals_block(&c->cur, v, 9);
  if (r) return r;
  if (v[0] > STROBE_SAMPLE_MAX_HZ || v[1] > 1 || v[7] > UINT32_MAX || v[8] > v[7]) return STROBE_ECORRUPT;
  c->totals.sample_rate_hz = (uint32_t)v[0];
  c->totals.sample_switches = (int)v[1];
  c->totals.samples_written = v[2];
  c->totals.switches_written = v[3];
  c->totals.samples_lost = v[4];
  c->totals.sample_frames_cut = v[5];
  c->totals.sample_addresses_cut = v[6];
  c->totals.sample_functions = (uint32_t)v[7];
  c->totals.sample_unresolved = (uint32_t)v[8];
  return 0;
}

/* A CONTENT_TOTALS block: attachments stored and cut, deep captures dropped. */
static int block_content_totals(strobe_capture *c) {
  uint64_t v[8];
  for (int i = 0; i < 8; i++) v[i] = strobe__cur_varint(&c->cur);
  int r = payload_done(&c->cur);
  if (r) return r;
  c->totals.attach_limit = v[0];
  c->totals.attach_stored = v[1];
  c->totals.attach_stored_bytes = v[2];
  c->totals.attach_earlier = v[3];
  c->totals.attach_cut = v[4];
  c->totals.attach_cut_bytes = v[5];
  (void)v[6]; /* the DEEP records say how many this file holds */
  c->totals.deeps_dropped = v[7];
  return 0;
}

static int start_block(strobe_capture *c, uint8_t type, strobe_capture_record *rec) {
  switch (type) {
    case STROBE__BLK_SITES:
      c->blk = STROBE__BLK_SITES;
      return 0;
    case STROBE__BLK_THREAD: return block_thread(c, rec);
    case STROBE__BLK_EVENTS: return block_events_start(c);
    case STROBE__BLK_OPS:
    case STROBE__BLK_DEVICE:
    case STROBE__BLK_SAMPLES: return block_entries_start(c, type);
    case STROBE__BLK_LABELS:
      while (c->cur.p < c->cur.end) {
        uint64_t id = strobe__cur_varint(&c->cur);
        size_t n;
        const uint8_t *text = strobe__cur_str(&c->cur, &n);
        if (c->cur.bad) return STROBE_ECORRUPT;
        int r = define_label(c, id, text, n);
        if (r) return r;
      }
      return 0;
    case STROBE__BLK_THREAD_END: return block_thread_end(c, rec);
    case STROBE__BLK_CLOCK: return 0; /* calibration pairs are not used yet */
    case STROBE__BLK_RECOVERY: return block_recovery(c); /* docs/capture-format.md §Journal */
    case STROBE__BLK_DRAIN:
    case STROBE__BLK_RINGS: return block_two_totals(c, type);
    case STROBE__BLK_CALLS: return block_calls_totals(c); /* cumulative: the last block is the figure */
    case STROBE__BLK_SAMPLE_FUNCS:
      while (c->cur.p < c->cur.end) {
        uint64_t id = strobe__cur_varint(&c->cur);
        size_t nn, nm;
        const uint8_t *name = strobe__cur_str(&c->cur, &nn);
        const uint8_t *module = strobe__cur_str(&c->cur, &nm);
        uint64_t resolved = strobe__cur_varint(&c->cur);
        if (c->cur.bad) return STROBE_ECORRUPT;
        int r = define_function(c, id, name, nn, module, nm, resolved);
        if (r) return r;
      }
      return 0;
    case STROBE__BLK_SAMPLER: return block_sampler_totals(c); /* cumulative: the last block is the figure */
    case STROBE__BLK_LOST: return block_lost(c, rec);
    case STROBE__BLK_TREE: return block_tree(c, rec);
    case STROBE__BLK_TREE_TOTALS: {
      uint64_t written = strobe__cur_varint(&c->cur);
      uint64_t dropped = strobe__cur_varint(&c->cur);
      int r = payload_done(&c->cur);
      if (r) return r;
      (void)written; /* the TREE records say how many this file holds */
      c->totals.trees_dropped = dropped;
      return 0;
    }
    case STROBE__BLK_CLOCK_OFFSETS: return block_clock_offsets(c);
    case STROBE__BLK_MERGE: return block_merge(c);
    case STROBE__BLK_CRASH: return block_crash(c);
    case STROBE__BLK_ORIGIN: { /* a merged capture's content blocks after it: of input `origin - 1` */
      uint64_t origin = strobe__cur_varint(&c->cur);
      int r = payload_done(&c->cur);
      if (r) return r;
      if (origin > STROBE_CAPTURE_MAX_MERGED) return STROBE_ECORRUPT;
      c->origin = (uint32_t)origin;
      return 0;
    }
    case STROBE__BLK_ATTACH: return block_attach(c, rec);
    case STROBE__BLK_DEEP: return block_deep(c, rec);
    case STROBE__BLK_CONTENT_TOTALS: return block_content_totals(c);
    case STROBE__BLK_FOOTER: {
      int r = block_footer(c);
      if (r) return r;
      count_unfinished(c);
      c->done = 1;
      return 0;
    }
    default: return 0; /* a newer block type: skipped */
  }
}

/* ======================================================================
 * >>records — SITES entries and EVENTS ops, one record per call
 * ====================================================================== */

/* Returns 1 with the next site, 0 when the block is used up, or an error. */
static int step_sites(strobe_capture *c, strobe_capture_record *rec) {
  strobe__cur *cur = &c->cur;
  if (cur->p == cur->end) return 0;
  uint64_t id = strobe__cur_varint(cur);
  uint64_t kind = strobe__cur_varint(cur);
  uint64_t line = strobe__cur_varint(cur);
  const uint8_t *str[SITE_STRS];
  size_t len[SITE_STRS];
  for (int i = 0; i < SITE_STRS; i++) str[i] = strobe__cur_str(cur, &len[i]);
  uint64_t unit = c->header.version >= 2 ? strobe__cur_varint(cur) : STROBE_UNIT_NONE; /* version 2 added it */
  uint64_t flags = c->header.version >= 3 ? strobe__cur_varint(cur) : 0;               /* version 3 added them */
  if (cur->bad || line > UINT32_MAX || unit > UINT32_MAX || flags > UINT32_MAX) return STROBE_ECORRUPT;
  if (id == 0 || id > MAX_SITE_ID) return STROBE_ERANGE;
  if (kind > UINT32_MAX || !strobe__site_kind_known((uint32_t)kind)) return STROBE_ECORRUPT;
  if (kind == STROBE_SITE_ELEMENT && c->header.version < 4) return STROBE_ECORRUPT; /* version 4 added it */
  if (kind >= STROBE_SITE_ALLOC && c->header.version < 5) return STROBE_ECORRUPT;   /* version 5 added them */
  int r = define_site(c, (uint32_t)id, (uint32_t)kind, (uint32_t)line, (uint32_t)unit, (uint32_t)flags, str, len);
  if (r) return r;
  rec->type = STROBE_REC_SITE;
  rec->site = (uint32_t)id;
  return 1;
}

/* A site operand of a DEVICE entry's body: ERANGE unless it names a defined site. */
static int site_operand_of(strobe_capture *c, strobe__cur *b, uint32_t *site) {
  uint64_t id = strobe__cur_varint(b);
  *site = id <= MAX_SITE_ID ? (uint32_t)id : 0;
  if (b->bad) return STROBE_ECORRUPT;
  return site_at(c, id) ? 0 : STROBE_ERANGE;
}

/* Reads a site operand: ERANGE unless it names a defined site. */
static int site_operand(strobe_capture *c, uint32_t *site) {
  uint64_t id = strobe__cur_varint(&c->ops);
  *site = id <= MAX_SITE_ID ? (uint32_t)id : 0;
  if (c->ops.bad) return STROBE_ECORRUPT;
  return site_at(c, id) ? 0 : STROBE_ERANGE;
}

/* What a reader returns for an event kind (the `record` column of
 * STROBE__EVENT_KINDS), 0 for kinds it does not know. */
static int kind_record(uint32_t kind) {
  switch (kind) {
#define RECORD(name, number, slots, operands, record) \
  case number: return record;
    STROBE__EVENT_KINDS(RECORD)
#undef RECORD
    default: return 0;
  }
}

/* An unwound END (its END never ran, so its duration is when that was
 * found, not the scope's): closes the innermost scope, flagged, giving its
 * parent no child time. Returns 0 for an orphan (its BEGIN predates the
 * capture): counted, no record. decode_events closes scopes that ended. */
static int close_unwound(strobe_capture *c, rthread *t, uint64_t ticks, strobe_capture_record *rec) {
  if (t->depth == 0) {
    c->totals.orphan_ends++;
    return 0;
  }
  frame *f = &t->stack[--t->depth];
  uint64_t dur = ticks - f->begin;
  rec->type = STROBE_REC_END;
  rec->site = f->site;
  rec->depth = t->depth + 1;
  rec->duration_ns = span_ns(c, dur);
  rec->self_ns = span_ns(c, dur - f->child);
  rec->unwound = 1;
  c->totals.unwound++;
  return 1;
}

/* A LOST marker (data: events lost; hi: the depth after the loss): scopes
 * deeper than that lost their END. */
static int event_lost(strobe_capture *c, rthread *t, uint64_t lost, uint64_t depth, strobe_capture_record *rec) {
  if (depth > STROBE__MAX_READER_DEPTH) return STROBE_ERANGE;
  while (t->depth > depth) {
    t->depth--;
    c->totals.lost_scopes++;
  }
  /* Not added to the loss totals: the thread's LOST blocks count these
   * same drops (and those no marker followed), so adding both would count
   * them twice. */
  rec->depth = t->depth;
  rec->lost = lost;
  return 1;
}

/* An allocation, a free or a message (version 5): its site must be of the
 * matching kind (a pool's allocations, its frees, a message). */
static int event_memory(strobe_capture *c, strobe_capture_record *rec, const uint64_t *slot) {
  uint32_t want = rec->type == STROBE_REC_ALLOC  ? STROBE_SITE_ALLOC
                  : rec->type == STROBE_REC_FREE ? STROBE_SITE_FREE
                                                 : STROBE_SITE_MESSAGE;
  if (c->header.version < 5 || site_at(c, rec->site)->kind != want) return STROBE_ECORRUPT;
  rec->address = rec->type == STROBE_REC_MESSAGE ? 0 : slot[0];
  rec->bytes = rec->type == STROBE_REC_ALLOC ? slot[1] : 0;
  return 1;
}

/* An op OTHER: the kind's operands, as its row of STROBE__EVENT_KINDS says,
 * then the record filled from them. */
__attribute__((noinline)) static int event_other(strobe_capture *c, rthread *t, uint64_t op, uint64_t ticks,
                                                 strobe_capture_record *rec) {
  uint64_t kind = op >> STROBE__OP_BITS;
  uint32_t k = kind <= 0xffu ? (uint32_t)kind : 0;
  uint32_t operands = strobe__ev_operands(k), slots = strobe__ev_slots(k);
  uint64_t hi = 0, slot[STROBE__EV_MAX_SLOTS] = {0};
  int r;
  rec->depth = t->depth;
  rec->type = (strobe_capture_record_type)kind_record(k);
  switch (operands) {
    case STROBE__OPERANDS_SITE_VARINTS:
    case STROBE__OPERANDS_SITE_F64S:
      if ((r = site_operand(c, &rec->site))) return r;
      for (uint32_t i = 0; i < slots; i++)
        slot[i] = operands == STROBE__OPERANDS_SITE_F64S ? strobe__cur_u64(&c->ops) : strobe__cur_varint(&c->ops);
      break;
    case STROBE__OPERANDS_LOST:
      slot[0] = strobe__cur_varint(&c->ops); /* the event's data */
      hi = strobe__cur_varint(&c->ops);      /* the kind word's high bits */
      break;
    case STROBE__OPERANDS_UNWOUND: return rec->type ? close_unwound(c, t, ticks, rec) : STROBE_ECORRUPT;
    case STROBE__OPERANDS_ELEMENT: { /* the innermost open scope's element: its type (a site of kind element), its id */
      if ((r = site_operand(c, &rec->site))) return r;
      rec->element = strobe__cur_u64(&c->ops);
      if (c->ops.bad || !rec->type) return STROBE_ECORRUPT;
      return site_at(c, rec->site)->kind == STROBE_SITE_ELEMENT ? 1 : STROBE_ECORRUPT;
    }
    default: return STROBE_ECORRUPT; /* operands of unknown size: cannot go on */
  }
  if (c->ops.bad || !rec->type) return STROBE_ECORRUPT;
  double ns = c->header.ns_per_tick;
  switch (rec->type) {
    case STROBE_REC_VALUE:
    case STROBE_REC_COUNTER:
    case STROBE_REC_GAUGE: memcpy(&rec->value, &slot[0], sizeof rec->value); return 1;
    case STROBE_REC_CUMULATIVE: /* statistics in ticks */
      rec->count = slot[0];
      rec->total_ns = (double)slot[1] * ns;
      rec->min_ns = (double)slot[2] * ns;
      rec->max_ns = (double)slot[3] * ns;
      return 1;
    case STROBE_REC_LOST: return event_lost(c, t, slot[0], hi, rec);
    case STROBE_REC_ALLOC:
    case STROBE_REC_FREE:
    case STROBE_REC_MESSAGE: return event_memory(c, rec, slot);
    case STROBE_REC_LOCK_WAIT:
    case STROBE_REC_LOCK_ACQUIRED:
    case STROBE_REC_LOCK_RELEASED: return site_at(c, rec->site)->kind == STROBE_SITE_LOCK ? 1 : STROBE_ECORRUPT;
    default: return 1; /* the site and time say it all (FRAME) */
  }
}

/* Every field of a record zeroed before it is filled. A copy of a zero
 * record, not memset: for this size GCC's memset is `rep stos`, whose start-up
 * cost made it the reader's largest single cost (half of `strobe report` on
 * the bench's capture); the copy is a few vector stores. */
static inline void clear_record(strobe_capture_record *rec) {
  static const strobe_capture_record zero;
  *rec = zero;
}

/* A BEGIN or END record in rec's place: a record of another type left
 * there by an earlier call is cleared first (those two set every field
 * they use). */
static inline __attribute__((always_inline)) void scope_record(strobe_capture_record *rec, strobe_capture_record_type type,
                                                               uint32_t site, uint32_t depth) {
  if (rec->type != 0 && rec->type != STROBE_REC_BEGIN && rec->type != STROBE_REC_END) clear_record(rec);
  rec->type = type;
  rec->site = site;
  rec->depth = depth;
  rec->unwound = 0;
}

/* An END: closes the innermost open scope, adding its duration to its
 * parent's children. Returns 1 with its record in rec, 0 when there is
 * none (an orphan, whose BEGIN predates the capture: counted; or END
 * records not wanted). */
static inline __attribute__((always_inline)) int end_scope(strobe_capture *c, frame *stack, uint32_t *depth,
                                                           uint64_t ticks, strobe_capture_record *rec) {
  if (*depth == 0) {
    c->totals.orphan_ends++;
    return 0;
  }
  const frame *f = &stack[--*depth];
  uint64_t dur = ticks - f->begin;
  if (*depth) stack[*depth - 1].child += dur;
  c->totals.scopes++;
  if (!(c->want >> STROBE_REC_END & 1)) return 0;
  scope_record(rec, STROBE_REC_END, f->site, *depth + 1);
  rec->duration_ns = span_ns(c, dur);
  rec->self_ns = span_ns(c, dur - f->child);
  return 1;
}

/* An event other than BEGIN and END (event_other) into rec, with the
 * decoder's ops cursor and depth handed over and back. Returns 1 with a
 * wanted record, 0 when there is none (an orphan unwound END, or one not
 * wanted: rec cleared), or an error (rec cleared). */
static inline __attribute__((always_inline)) int other_record(strobe_capture *c, rthread *t, strobe__cur *ops,
                                                              uint32_t *depth, uint64_t op, uint64_t ticks,
                                                              strobe_capture_record *rec) {
  if (rec->type != 0) clear_record(rec);
  c->ops.p = ops->p; /* event_other reads its operands from c->ops, and the stack from t */
  t->depth = *depth;
  int r = event_other(c, t, op, ticks, rec);
  ops->p = c->ops.p, *depth = t->depth;
  if (r <= 0 || !(c->want >> rec->type & 1)) {
    clear_record(rec); /* an orphan unwound END (no record), one not wanted, or an error */
    return r < 0 ? r : 0;
  }
  return 1;
}

/* Decodes the EVENTS block's next events into out[*n..max), one record per
 * event but orphan ENDs, until max or the block is used up; *n counts the
 * records filled. Returns 0, or an error after the records before it (the
 * stream's state as strobe_capture_next leaves it at that error).
 *
 * The reader's hot loop (`strobe report` spends most of its reading here):
 * the streams, clock, scope stack and counts live in locals, stored back
 * once, and BEGIN and END are decoded here (what event_begin and
 * close_scope do for one record), the rest through event_other. A record
 * slot holds nothing but zeroes or a BEGIN or END, whose nine fields (type,
 * thread, site, depth, ticks, time_ns, duration_ns, self_ns, unwound) each
 * BEGIN and END writes whole, so those two need no clearing first. */
static inline __attribute__((always_inline)) int decode_events(strobe_capture *c, strobe_capture_record *out,
                                                               uint32_t *n, uint32_t max) {
  rthread *t = c->ev_thread; /* c->want and the clock are read where used: less to set up per call */
  strobe__cur ops = c->ops, times = c->times;
  const uint64_t left0 = c->ev_left;
  uint64_t left = left0, ticks = c->ev_ticks, last = c->totals.end_ticks;
  frame *stack = t->stack;
  uint32_t depth = t->depth;
  strobe_capture_record *rec = out + *n, *const rec_end = out + max;
  int r = 0, unread = 0;
  while (left > 0 && rec < rec_end) {
    left--;
    uint64_t op, delta;
    int ok = strobe__cur_take_varint(&ops, &op); /* both decoded, then judged: one branch */
    ok &= strobe__cur_take_varint(&times, &delta);
    if (!ok) {
      r = STROBE_ECORRUPT;
      unread = 1; /* not counted as read (below) */
      break;
    }
    /* Unsigned: a hostile delta wraps instead of overflowing. */
    ticks += (uint64_t)strobe__unzigzag(delta);
    if (ticks > last) last = ticks;
    uint32_t code = (uint32_t)op & ((1u << STROBE__OP_BITS) - 1);
    if (code == STROBE__OP_END) {
      if (op != STROBE__OP_END) {
        r = STROBE_ECORRUPT;
        break;
      }
      if (!end_scope(c, stack, &depth, ticks, rec)) continue;
    } else if (code == STROBE__OP_BEGIN) {
      uint64_t id = op >> STROBE__OP_BITS;
      if (!site_at(c, id)) {
        r = STROBE_ERANGE;
        break;
      }
      if (depth < t->stack_cap) {
        stack[depth++] = (frame){(uint32_t)id, ticks, 0};
      } else {
        t->depth = depth;
        r = push_frame(t, (uint32_t)id, ticks);
        stack = t->stack, depth = t->depth;
        if (r) break;
      }
      if (!(c->want >> STROBE_REC_BEGIN & 1)) continue;
      scope_record(rec, STROBE_REC_BEGIN, (uint32_t)id, depth);
      rec->duration_ns = rec->self_ns = 0;
    } else {
      r = other_record(c, t, &ops, &depth, op, ticks, rec);
      if (r <= 0) {
        if (r < 0) break;
        continue;
      }
      r = 0;
    }
    rec->thread = t->pub.index;
    rec->ticks = ticks;
    rec->time_ns = ticks_to_ns(c, ticks);
    rec++;
  }

  /* Both streams must be used up exactly. */
  if (!r && left == 0 && (ops.p != ops.end || times.p != times.end)) r = STROBE_ECORRUPT;
  c->ops.p = ops.p;
  c->times.p = times.p;
  c->ev_left = left;
  c->ev_ticks = ticks;
  t->depth = depth;
  c->totals.events += left0 - left - (uint64_t)unread;
  t->pub.events += left0 - left - (uint64_t)unread;
  if (!c->totals.footer) c->totals.end_ticks = last;
  *n = (uint32_t)(rec - out);
  if (!r && left == 0) c->blk = 0; /* on to the next block */
  return r;
}

/* decode_events for a batch, and for one record (strobe_capture_next: the
 * loop and its set-up simplified for max 1). */
static int decode_batch(strobe_capture *c, strobe_capture_record *out, uint32_t *n) {
  return decode_events(c, out, n, STROBE_CAPTURE_BATCH_MAX);
}
static int decode_one(strobe_capture *c, strobe_capture_record *rec, uint32_t *n) { return decode_events(c, rec, n, 1); }

/* A label operand of an OPS entry: 0 is "none" (""), others must be defined. */
static int label_operand(strobe_capture *c, strobe__cur *b, const char **out) {
  uint64_t id = strobe__cur_varint(b);
  if (b->bad) return STROBE_ECORRUPT;
  *out = id ? label_at(c, id) : "";
  return *out ? 0 : STROBE_ERANGE;
}

/* The fields every operation entry starts with. */
static int op_ident(strobe_capture *c, strobe__cur *b, int full) {
  strobe_capture_op *op = &c->op;
  uint64_t collector = strobe__cur_varint(b);
  op->id = strobe__cur_varint(b);
  if (collector > UINT32_MAX) return STROBE_ECORRUPT;
  op->collector = (uint32_t)collector;
  op->window = "";
  if (!full) return b->bad ? STROBE_ECORRUPT : 0;
  uint64_t flags = strobe__cur_varint(b);
  int r = label_operand(c, b, &op->window);
  if (r) return r;
  op->frame_id = strobe__cur_varint(b);
  if (b->bad || flags > UINT32_MAX) return STROBE_ECORRUPT;
  op->kind = (uint32_t)(flags & 0xffu);
  op->committed = (flags & STROBE__OPF_COMMITTED) != 0;
  op->handed_off = (flags & STROBE__OPF_HANDED_OFF) != 0;
  op->detail = (flags & STROBE__OPF_DETAIL) != 0;
  op->app_frame_id = (flags & STROBE__OPF_APP_FRAME) != 0;
  op->devtools = (flags & STROBE__OPF_DEVTOOLS) != 0;
  op->idle = (flags & STROBE__OPF_IDLE) != 0;
  return 0;
}

/* The rest of an END entry: duration, stages and counters. */
static int op_end_body(strobe_capture *c, strobe__cur *b, uint64_t end_ticks) {
  strobe_capture_op *op = &c->op;
  int64_t dur = strobe__unzigzag(strobe__cur_varint(b));
  uint64_t sdrop = strobe__cur_varint(b), cdrop = strobe__cur_varint(b);
  uint64_t ns = strobe__cur_varint(b);
  if (b->bad || ns > MAX_OP_STAGES || sdrop > UINT32_MAX || cdrop > UINT32_MAX) return STROBE_ECORRUPT;
  op->start_ticks = end_ticks - (uint64_t)dur;
  op->start_ns = ticks_to_ns(c, op->start_ticks);
  op->duration_ns = span_ns(c, (uint64_t)dur);
  op->stages_dropped = (uint32_t)sdrop;
  op->counters_dropped = (uint32_t)cdrop;
  for (uint64_t i = 0; i < ns; i++) {
    strobe_capture_stage *st = &c->op_stages[i];
    uint64_t site = strobe__cur_varint(b), count = strobe__cur_varint(b);
    uint64_t total = strobe__cur_varint(b), min = strobe__cur_varint(b), max = strobe__cur_varint(b);
    if (b->bad || count > UINT32_MAX) return STROBE_ECORRUPT;
    if (!site_at(c, site)) return STROBE_ERANGE;
    *st = (strobe_capture_stage){(uint32_t)site, (uint32_t)count, span_ns(c, total), span_ns(c, min), span_ns(c, max), 0, 0};
  }
  uint64_t nc = strobe__cur_varint(b);
  if (b->bad || nc > MAX_OP_COUNTERS) return STROBE_ECORRUPT;
  for (uint64_t i = 0; i < nc; i++) {
    int r = label_operand(c, b, &c->op_counters[i].name);
    if (r) return r;
    c->op_counters[i].value = strobe__cur_f64(b);
    c->op_counters[i].kind = "";
    c->op_counters[i].unit = STROBE_UNIT_NONE;
  }
  if (b->bad) return STROBE_ECORRUPT;
  if (b->p < b->end) { /* counters by kind: one kind label per counter (0: none) */
    uint64_t nk = strobe__cur_varint(b);
    if (b->bad || nk != nc) return STROBE_ECORRUPT;
    for (uint64_t i = 0; i < nk; i++) {
      int r = label_operand(c, b, &c->op_counters[i].kind);
      if (r) return r;
    }
  }
  if (b->p < b->end) { /* then their units (docs/recording.md §Units), one per counter */
    uint64_t nu = strobe__cur_varint(b);
    if (b->bad || nu != nc) return STROBE_ECORRUPT;
    for (uint64_t i = 0; i < nu; i++) {
      uint64_t unit = strobe__cur_varint(b);
      if (b->bad || unit > UINT32_MAX) return STROBE_ECORRUPT;
      c->op_counters[i].unit = (uint32_t)unit; /* a newer writer's unit: kept, strobe_unit_name says NULL */
    }
  }
  op->stage_parents = 0;
  if (b->p < b->end) { /* then each stage's run-time parent and process (docs/capture-format.md §OPS payload) */
    uint64_t np = strobe__cur_varint(b);
    if (b->bad || np != ns) return STROBE_ECORRUPT;
    for (uint64_t i = 0; i < np; i++) {
      uint64_t v = strobe__cur_varint(b), parent = v >> 1;
      if (b->bad) return STROBE_ECORRUPT;
      if (parent && !site_at(c, parent)) return STROBE_ERANGE;
      c->op_stages[i].parent = (uint32_t)parent;
      c->op_stages[i].remote = (int)(v & 1u);
    }
    op->stage_parents = 1;
  }
  op->population = "";
  if (b->p < b->end) { /* then its population, a LABELS id (docs/capture-format.md §OPS payload) */
    int r = label_operand(c, b, &op->population);
    if (r) return r;
  }
  op->nstages = (uint32_t)ns;
  op->ncounters = (uint32_t)nc;
  return 0;
}

/* The next entry of an OPS or DEVICE block (`sub dt len body`): its
 * sub-kind, its time (which advances the block's clock) and a cursor over
 * its body alone. Returns 0 or STROBE_ECORRUPT. */
static int next_entry(strobe_capture *c, uint64_t *sub, uint64_t *ticks, strobe__cur *b) {
  c->ev_left--;
  *sub = strobe__cur_varint(&c->cur);
  uint64_t delta = strobe__cur_varint(&c->cur);
  size_t len = (size_t)strobe__cur_varint(&c->cur);
  const uint8_t *body = strobe__cur_bytes(&c->cur, len);
  if (c->cur.bad) return STROBE_ECORRUPT;
  /* Unsigned: a hostile delta wraps instead of overflowing. */
  *ticks = c->ev_ticks + (uint64_t)strobe__unzigzag(delta);
  c->ev_ticks = *ticks;
  *b = (strobe__cur){body ? body : g_empty, (body ? body : g_empty) + len, 0};
  return 0;
}

/* The rest of a REMOTE_OUT or REMOTE_IN entry (docs/capture-format.md, OPS):
 * an operation handed to, or resumed from, another process. */
static int op_remote_body(strobe_capture *c, strobe__cur *b, uint64_t sub, uint64_t ticks) {
  strobe_capture_op *op = &c->op;
  op->remote = 1;
  op->origin_collector = strobe__cur_varint(b);
  int r = label_operand(c, b, &op->peer); /* OUT: where it went; IN: where it came from */
  if (r) return r;
  uint64_t a = strobe__cur_varint(b), pid = a;
  if (sub == STROBE__OPEV_REMOTE_IN) { /* origin uid, origin process, origin id, origin pid, gap, process */
    op->origin_id = a;
    pid = strobe__cur_varint(b);
    int64_t gap = strobe__unzigzag(strobe__cur_varint(b));
    if (b->bad || gap < 0) return STROBE_ECORRUPT;
    op->gap_ns = span_ns(c, (uint64_t)gap);
    op->handed_off_ticks = ticks - (uint64_t)gap;
  } else { /* uid, peer, pid, process */
    op->origin_id = op->id;
    op->handed_off_ticks = ticks;
  }
  if (b->bad || pid > UINT32_MAX) return STROBE_ECORRUPT;
  op->origin_pid = (uint32_t)pid;
  return label_operand(c, b, &op->process);
}

/* Returns 1 with the next operation record of the OPS block, 0 when it is
 * used up, or an error. Entries of sub-kinds this reader does not know are
 * skipped whole (their time still counts), and so are fields after the ones
 * it knows at the end of a body. */
static int step_ops(strobe_capture *c, strobe_capture_record *rec) {
  rthread *t = c->ev_thread;
  while (c->ev_left > 0) {
    uint64_t sub, ticks;
    strobe__cur b;
    if (next_entry(c, &sub, &ticks, &b)) return STROBE_ECORRUPT;
    memset(&c->op, 0, sizeof c->op);
    c->op.stages = c->op_stages;
    c->op.counters = c->op_counters;
    int r;
    switch (sub) {
      case STROBE__OPEV_BEGIN:
        if ((r = op_ident(c, &b, 1))) return r;
        c->op.start_ticks = ticks;
        c->op.start_ns = ticks_to_ns(c, ticks);
        rec->type = STROBE_REC_OP_BEGIN;
        break;
      case STROBE__OPEV_END:
        if ((r = op_ident(c, &b, 1)) || (r = op_end_body(c, &b, ticks))) return r;
        rec->type = STROBE_REC_OP_END;
        c->totals.ops++;
        break;
      case STROBE__OPEV_TAKE:
      case STROBE__OPEV_RESUME:
        if ((r = op_ident(c, &b, 0))) return r;
        rec->type = sub == STROBE__OPEV_TAKE ? STROBE_REC_OP_TAKE : STROBE_REC_OP_RESUME;
        break;
      case STROBE__OPEV_REMOTE_OUT:
      case STROBE__OPEV_REMOTE_IN:
        if ((r = op_ident(c, &b, 0)) || (r = op_remote_body(c, &b, sub, ticks))) return r;
        rec->type = sub == STROBE__OPEV_REMOTE_OUT ? STROBE_REC_OP_TAKE : STROBE_REC_OP_RESUME;
        break;
      default: continue; /* a newer kind of operation event */
    }
    if (!c->totals.footer && ticks > c->totals.end_ticks) c->totals.end_ticks = ticks;
    c->totals.op_events++;
    rec->thread = t->pub.index;
    rec->ticks = ticks;
    rec->time_ns = ticks_to_ns(c, ticks);
    rec->depth = t->depth;
    rec->op = &c->op;
    return 1;
  }
  return c->cur.p == c->cur.end ? 0 : STROBE_ECORRUPT;
}

/* >>samples — SAMPLES entries: sampled stacks and context switches */

/* Returns 1 with the next SAMPLE or SWITCH record, 0 when the block is used
 * up, or an error. Entries of kinds this reader does not know are skipped
 * (their time still counts), and so are fields after the known ones. */
static int step_samples(strobe_capture *c, strobe_capture_record *rec) {
  while (c->ev_left > 0) {
    uint64_t sub, ticks;
    strobe__cur b;
    if (next_entry(c, &sub, &ticks, &b)) return STROBE_ECORRUPT;
    memset(&c->smp, 0, sizeof c->smp);
    c->smp.os_tid = c->smp_tid;
    c->smp.frames = c->smp_frames;
    if (sub == STROBE__SAMPLE_CPU) {
      uint64_t flags = strobe__cur_varint(&b);
      uint64_t n = strobe__cur_varint(&b);
      if (b.bad || n > STROBE_SAMPLE_MAX_FRAMES) return STROBE_ECORRUPT;
      for (uint64_t k = 0; k < n; k++) {
        uint64_t id = strobe__cur_varint(&b);
        if (b.bad) return STROBE_ECORRUPT;
        if (id >= c->func_limit || !c->funcs[id]) return STROBE_ERANGE;
        c->smp_frames[k] = (uint32_t)id;
      }
      c->smp.nframes = (uint32_t)n;
      c->smp.cut = (flags & STROBE__SAMPLE_CUT) != 0;
      rec->type = STROBE_REC_SAMPLE;
      c->totals.samples++;
    } else if (sub == STROBE__SAMPLE_SWITCH_OUT || sub == STROBE__SAMPLE_SWITCH_IN) {
      uint64_t flags = sub == STROBE__SAMPLE_SWITCH_OUT ? strobe__cur_varint(&b) : 0;
      if (b.bad) return STROBE_ECORRUPT;
      c->smp.out = sub == STROBE__SAMPLE_SWITCH_OUT;
      c->smp.preempted = (flags & STROBE__SAMPLE_PREEMPTED) != 0;
      rec->type = STROBE_REC_SWITCH;
      c->totals.switches++;
    } else {
      continue; /* a newer kind */
    }
    rec->thread = c->smp_thread;
    rec->ticks = ticks;
    rec->time_ns = ticks_to_ns(c, ticks);
    rec->sample = &c->smp;
    return 1;
  }
  return c->cur.p == c->cur.end ? 0 : STROBE_ECORRUPT;
}

/* >>device — DEVICE entries: clock pairs, GPU spans, frame instants */

/* The reader's domain of label `label` (which must be defined), added
 * when new; NULL past STROBE_CAPTURE_MAX_DOMAINS or out of memory (*err says which). */
static rdomain *domain_for(strobe_capture *c, uint32_t label, int *err) {
  *err = 0;
  for (uint32_t i = 0; i < c->ndomains; i++)
    if (c->domains[i].label == label) return &c->domains[i];
  if (c->ndomains == STROBE_CAPTURE_MAX_DOMAINS) {
    *err = STROBE_ELIMIT;
    return NULL;
  }
  if (!c->domains) {
    c->domains = calloc(STROBE_CAPTURE_MAX_DOMAINS, sizeof *c->domains);
    if (!c->domains) {
      *err = STROBE_ENOMEM;
      return NULL;
    }
  }
  rdomain *d = &c->domains[c->ndomains++];
  d->label = label;
  d->sorted = 1;
  return d;
}

/* Keeps a pair for the map; past the bound it is counted, not kept. */
static int keep_pair(strobe_capture *c, uint32_t label, double tps, const strobe__clock_pair *p) {
  int err;
  rdomain *d = domain_for(c, label, &err);
  if (!d) {
    if (err == STROBE_ENOMEM) return err;
    c->totals.clock_pairs_dropped++;
    return 0;
  }
  d->ticks_per_second = tps;
  if (d->n == STROBE_CAPTURE_MAX_PAIRS) {
    c->totals.clock_pairs_dropped++;
    return 0;
  }
  if (d->n == d->cap) {
    uint32_t cap = d->cap ? d->cap * 2 : 64;
    if (cap > STROBE_CAPTURE_MAX_PAIRS) cap = STROBE_CAPTURE_MAX_PAIRS;
    strobe__clock_pair *q = realloc(d->pairs, cap * sizeof *q);
    if (!q) return STROBE_ENOMEM;
    d->pairs = q;
    d->cap = cap;
  }
  if (d->n && p->device < d->pairs[d->n - 1].device) d->sorted = 0; /* another thread's block, earlier */
  d->pairs[d->n++] = *p;
  return 0;
}

/* The body of one DEVICE entry at `ticks`. Returns the record type, 0 for
 * a sub-kind this reader does not know (skipped), or an error. */
static int device_entry(strobe_capture *c, uint64_t sub, strobe__cur *b, uint64_t ticks, strobe_capture_record *rec) {
  strobe_capture_device *d = &c->dev;
  int r;
  switch (sub) {
    case STROBE__GPUEV_PAIR: {
      uint64_t label = strobe__cur_varint(b);
      double tps = strobe__cur_f64(b);
      d->device_ticks = strobe__cur_varint(b);
      uint64_t width = strobe__cur_varint(b);
      if (b->bad || width > ticks || !(tps > 0) || label > MAX_LABEL_ID) return STROBE_ECORRUPT;
      if (!label || !(d->domain = label_at(c, label))) return STROBE_ERANGE;
      d->ticks_per_second = tps;
      d->host_after = ticks;
      d->host_before = ticks - width;
      strobe__clock_pair p = {d->device_ticks, d->host_before, d->host_after};
      if ((r = keep_pair(c, (uint32_t)label, tps, &p))) return r;
      c->totals.clock_pairs++;
      return STROBE_REC_CLOCK_PAIR;
    }
    case STROBE__GPUEV_SPAN: {
      uint64_t domain = strobe__cur_varint(b);
      if (b->bad) return STROBE_ECORRUPT;
      if (!domain || domain > MAX_LABEL_ID || !(d->domain = label_at(c, domain))) return STROBE_ERANGE;
      if ((r = label_operand(c, b, &d->queue)) || (r = site_operand_of(c, b, &rec->site)) ||
          (r = label_operand(c, b, &d->pass)))
        return r;
      if (!d->queue[0]) return STROBE_ERANGE; /* a span is always on a lane */
      d->frame_id = strobe__cur_varint(b);
      d->device_begin = strobe__cur_varint(b);
      uint64_t dur = strobe__cur_varint(b);
      if (b->bad || dur > UINT64_MAX - d->device_begin) return STROBE_ECORRUPT;
      d->device_end = d->device_begin + dur;
      c->totals.gpu_spans++;
      return STROBE_REC_GPU_SPAN;
    }
    case STROBE__GPUEV_MARK: {
      uint64_t which = strobe__cur_varint(b);
      d->frame_id = strobe__cur_varint(b);
      if (b->bad || which > UINT32_MAX) return STROBE_ECORRUPT;
      d->instant = (uint32_t)which;
      c->totals.gpu_marks++;
      return STROBE_REC_GPU_MARK;
    }
    case STROBE__GPUEV_LANE_SPAN: {
      uint64_t domain = strobe__cur_varint(b);
      if (b->bad || domain > MAX_LABEL_ID) return STROBE_ECORRUPT;
      if (domain && !(d->domain = label_at(c, domain))) return STROBE_ERANGE;
      if ((r = label_operand(c, b, &d->queue)) || (r = site_operand_of(c, b, &rec->site))) return r;
      if (!d->queue[0]) return STROBE_ERANGE; /* a span is always on a lane */
      d->device_begin = strobe__cur_varint(b);
      uint64_t dur = strobe__cur_varint(b);
      if (b->bad || dur > UINT64_MAX - d->device_begin) return STROBE_ECORRUPT;
      d->device_end = d->device_begin + dur;
      c->totals.lane_spans++;
      return STROBE_REC_LANE_SPAN;
    }
    default: return 0; /* a newer kind of device entry */
  }
}

/* Returns 1 with the next record of the DEVICE block, 0 when it is used
 * up, or an error. Framed like OPS: unknown sub-kinds and trailing fields
 * are skipped. */
static int step_device(strobe_capture *c, strobe_capture_record *rec) {
  rthread *t = c->ev_thread;
  while (c->ev_left > 0) {
    uint64_t sub, ticks;
    strobe__cur b;
    if (next_entry(c, &sub, &ticks, &b)) return STROBE_ECORRUPT;
    memset(&c->dev, 0, sizeof c->dev);
    c->dev.domain = c->dev.queue = c->dev.pass = "";
    int type = device_entry(c, sub, &b, ticks, rec);
    if (type < 0) return type;
    if (type == 0) continue;
    if (!c->totals.footer && ticks > c->totals.end_ticks) c->totals.end_ticks = ticks;
    rec->type = (strobe_capture_record_type)type;
    rec->thread = t->pub.index;
    rec->ticks = ticks;
    rec->time_ns = ticks_to_ns(c, ticks);
    rec->device = &c->dev;
    return 1;
  }
  return c->cur.p == c->cur.end ? 0 : STROBE_ECORRUPT;
}

static int pair_cmp(const void *a, const void *b) {
  uint64_t x = ((const strobe__clock_pair *)a)->device, y = ((const strobe__clock_pair *)b)->device;
  return (x > y) - (x < y);
}

int strobe_capture_map_device(strobe_capture *c, const char *domain, uint64_t device_ticks,
                              strobe_capture_mapping *out) {
  if (out) memset(out, 0, sizeof *out);
  if (!c || !domain || !out) return STROBE_EINVAL;
  if (!domain[0]) { /* the host clock: a producer lane in host ticks */
    out->time_ns = ticks_to_ns(c, device_ticks);
    return 0;
  }
  rdomain *d = NULL;
  for (uint32_t i = 0; i < c->ndomains && !d; i++) {
    const char *name = label_at(c, c->domains[i].label);
    if (name && !strcmp(name, domain)) d = &c->domains[i];
  }
  if (!d || !d->n) return STROBE_ESTATE;
  if (!d->sorted) {
    qsort(d->pairs, d->n, sizeof *d->pairs, pair_cmp);
    d->sorted = 1;
  }
  /* The window: STROBE_CLOCK_FIT_PAIRS pairs around the first at or after the time. */
  uint32_t lo = 0, hi = d->n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (d->pairs[mid].device < device_ticks) lo = mid + 1;
    else hi = mid;
  }
  uint32_t k = d->n < STROBE_CLOCK_FIT_PAIRS ? d->n : STROBE_CLOCK_FIT_PAIRS;
  uint32_t first = lo > k / 2 ? lo - k / 2 : 0;
  if (first + k > d->n) first = d->n - k;
  double npt = c->header.ns_per_tick > 0 ? c->header.ns_per_tick : 1.0;
  strobe__clock_fit fit;
  if (strobe__clock_fit_pairs(d->pairs + first, k, 1e9 / d->ticks_per_second / npt, &fit)) return STROBE_ESTATE;
  double bound;
  uint64_t host = strobe__clock_fit_map(&fit, device_ticks, &bound);
  out->time_ns = ticks_to_ns(c, host);
  out->bound_ns = bound * npt;
  out->pairs = fit.pairs;
  return 0;
}

/* ======================================================================
 * >>checks — the reader's promises about each record it returns
 * (format/capture_reader.h, docs/invariants.md §Data the reader returns)
 * ====================================================================== */

/* A UI-tree snapshot in preorder, its props where its counts say. */
static void check_tree(const strobe_capture *c, const strobe_capture_tree *t) {
  STROBE_ASSERT(t->nnodes <= STROBE_TREE_MAX_NODES && (t->nodes || !t->nnodes));
  for (uint32_t i = 0; i < t->nnodes; i++) {
    const strobe_capture_tree_node *n = &t->nodes[i];
    STROBE_ASSERT(i == 0 ? n->depth == 0 : n->depth <= t->nodes[i - 1].depth + 1);
    STROBE_ASSERT(site_at(c, n->type) && site_at(c, n->type)->kind == STROBE_SITE_ELEMENT);
    STROBE_ASSERT(n->nprops <= STROBE_TREE_MAX_PROPS && (n->nprops ? n->props != NULL : n->props == NULL));
  }
}

/* A deep capture's calls in order and within their bounds, each resource reference in a known role. */
static void check_deep(const strobe_capture_deep *d) {
  STROBE_ASSERT(d->ncalls <= STROBE_DEEP_MAX_CALLS && (d->calls || !d->ncalls));
  for (uint32_t i = 0; i < d->ncalls; i++) {
    const strobe_capture_draw_call *k = &d->calls[i];
    STROBE_ASSERT(k->seq == i && k->kind && k->pipeline && k->pass);
    STROBE_ASSERT(k->nrefs <= STROBE_DEEP_MAX_REFS && (k->nrefs ? k->refs != NULL : k->refs == NULL));
    for (uint32_t j = 0; j < k->nrefs; j++)
      STROBE_ASSERT(k->refs[j].resource != 0 && k->refs[j].role >= STROBE_DEEP_GEOMETRY &&
                    k->refs[j].role <= STROBE_DEEP_SURFACE);
  }
}

void strobe__capture_check_record(const strobe_capture *c, const strobe_capture_record *r) {
  STROBE_ASSERT(r->type >= STROBE_REC_SITE && r->type < STROBE_CAPTURE_REC_TYPES);
  switch (r->type) {
    case STROBE_REC_BEGIN:
    case STROBE_REC_END:
      STROBE_ASSERT(thread_at(c, r->thread) != NULL); /* the thread's stack holds the scope */
      STROBE_ASSERT(r->depth >= 1 && r->depth <= thread_at(c, r->thread)->stack_cap);
      STROBE_ASSERT(site_at(c, r->site) != NULL);
      break;
    case STROBE_REC_OP_BEGIN:
    case STROBE_REC_OP_END:
    case STROBE_REC_OP_TAKE:
    case STROBE_REC_OP_RESUME: STROBE_ASSERT(r->op != NULL); break;
    case STROBE_REC_CLOCK_PAIR:
    case STROBE_REC_GPU_SPAN:
    case STROBE_REC_GPU_MARK:
    case STROBE_REC_LANE_SPAN: STROBE_ASSERT(r->device != NULL); break;
    case STROBE_REC_SAMPLE:
    case STROBE_REC_SWITCH: STROBE_ASSERT(r->sample != NULL); break;
    case STROBE_REC_ATTACHMENT: STROBE_ASSERT(r->attachment != NULL); break;
    case STROBE_REC_TREE:
      STROBE_ASSERT(r->tree != NULL);
      if (r->tree) check_tree(c, r->tree);
      break;
    case STROBE_REC_DEEP:
      STROBE_ASSERT(r->deep != NULL);
      if (r->deep) check_deep(r->deep);
      break;
    default: break;
  }
}

/* ======================================================================
 * >>api
 * ====================================================================== */

static int fail(strobe_capture *c, int err) {
  c->err = err;
  if (err == STROBE_ETRUNCATED) {
    /* The file ends here: what is still open never ended in it. */
    c->totals.cut_short = 1;
    count_unfinished(c);
  }
  return err;
}

/* The next record of every block but an EVENTS block's events, into *rec
 * (cleared): 1 with a record, 0 at the clean end, 2 when an EVENTS block's
 * events are next (decode_events reads them), or an error (not yet sticky). */
static int next_record(strobe_capture *c, strobe_capture_record *rec) {
  for (;;) {
    clear_record(rec);
    int r = 0;
    if (c->blk == STROBE__BLK_EVENTS) return 2;
    if (c->blk == STROBE__BLK_SITES) r = step_sites(c, rec);
    else if (c->blk == STROBE__BLK_OPS) r = step_ops(c, rec);
    else if (c->blk == STROBE__BLK_DEVICE) r = step_device(c, rec);
    else if (c->blk == STROBE__BLK_SAMPLES) r = step_samples(c, rec);
    if (r > 0 && !(c->want >> rec->type & 1)) continue; /* read, not returned */
    if (r) return r;
    c->blk = 0;
    uint8_t type = 0;
    r = read_block(c, &type);
    if (r < 0) return r;
    if (r == 0) { /* clean end of input without a FOOTER */
      c->totals.cut_short = 1;
      count_unfinished(c);
      c->done = 1;
      return 0;
    }
    r = start_block(c, type, rec);
    if (r > 0 && !(c->want >> rec->type & 1)) r = 0;
    if (r) return r;
    if (c->done) return 0;
  }
}

static int next_one(strobe_capture *c, strobe_capture_record *rec);

int strobe_capture_next(strobe_capture *c, strobe_capture_record *rec) {
  int r = next_one(c, rec);
  if (STROBE__ASSERTIONS && r == 1) strobe__capture_check_record(c, rec);
  return r;
}

static int next_one(strobe_capture *c, strobe_capture_record *rec) {
  if (!c || !rec) return STROBE_EINVAL;
  if (c->err) return c->err;
  if (c->done) return 0;
  for (;;) {
    int r = 2;
    if (c->blk == STROBE__BLK_EVENTS) clear_record(rec); /* next_record's clearing, without its call */
    else r = next_record(c, rec);
    if (r == 2) {
      uint32_t n = 0;
      r = decode_one(c, rec, &n);
      if (r < 0) {
        fail(c, r);
        return n ? 1 : r; /* a record first, the error at the next call */
      }
      if (n) return 1;
      continue; /* the block is used up */
    }
    return r < 0 ? fail(c, r) : r;
  }
}

int strobe_capture_next_batch(strobe_capture *c, const strobe_capture_record **recs) {
  if (recs) *recs = NULL;
  if (!c || !recs) return STROBE_EINVAL;
  if (c->err) return c->err;
  if (c->done) return 0;
  if (!c->batch && !(c->batch = calloc(STROBE_CAPTURE_BATCH_MAX, sizeof *c->batch))) return fail(c, STROBE_ENOMEM);
  uint32_t n = 0;
  int r = 0;
  while (n < STROBE_CAPTURE_BATCH_MAX) {
    if (c->blk == STROBE__BLK_EVENTS) {
      if ((r = decode_batch(c, c->batch, &n)) < 0) break;
      continue; /* the batch is full, or the block used up */
    }
    strobe_capture_record *rec = &c->batch[n];
    r = next_record(c, rec);
    if (r == 2) continue;
    if (r == 1) n++;
    else clear_record(rec); /* the end, or an error: no record in it */
    break; /* a record of another block ends the batch: what it points at is the capture's until the next call */
  }
  if (r < 0) {
    fail(c, r);
    if (!n) return r;
  }
  if (n) *recs = c->batch;
  for (uint32_t i = 0; STROBE__ASSERTIONS && i < n; i++) strobe__capture_check_record(c, &c->batch[i]);
  return (int)n;
}

void strobe_capture_close(strobe_capture *c) {
  if (!c) return;
  free(c->offsets);
  free(c->merge);
  free(c->crash);
  free(c->batch);
  if (c->f) fclose(c->f);
  for (uint32_t i = 0; i < c->site_limit; i++) free(c->sites[i]);
  free(c->sites);
  for (uint32_t i = 0; i < c->labels_cap; i++) free(c->labels[i]);
  free(c->labels);
  for (uint32_t i = 0; i < c->func_limit; i++) free(c->funcs[i]);
  free(c->funcs);
  for (uint32_t i = 0; i < c->thread_limit; i++)
    if (c->threads[i]) free_thread(c->threads[i]);
  free(c->threads);
  for (uint32_t i = 0; i < c->ndomains; i++) free(c->domains[i].pairs);
  free(c->domains);
  free(c->stored);
  free(c->raw);
  free(c->tree_nodes);
  free(c->deep_calls);
  free(c->deep_refs);
  free(c->deep_labels);
  free(c->tree_props);
  free(c->tree_keys);
  ZSTD_freeDCtx(c->zstd);
  free(c);
}

static int open_common(strobe_capture *c, strobe_capture **out) {
  c->want = STROBE_CAPTURE_ALL_RECORDS;
  int r = read_header(c);
  if (r) {
    strobe_capture_close(c);
    return r;
  }
  *out = c;
  return 0;
}

/* Reads the capture from descriptor fd, which it takes (closed on error too;
 * fd < 0: open failed, errno says why). */
static int open_descriptor(int fd, strobe_capture **out) {
  strobe_capture *c = fd >= 0 ? calloc(1, sizeof *c) : NULL;
  if (c) c->f = fdopen(fd, "rb");
  if (!c || !c->f) {
    int e = fd < 0 ? errno : c ? errno : ENOMEM;
    if (fd >= 0) close(fd);
    free(c);
    errno = e;
    return e == ENOMEM ? STROBE_ENOMEM : STROBE_EIO;
  }
  return open_common(c, out);
}

int strobe_capture_open(const char *path, strobe_capture **out) {
  if (!out) return STROBE_EINVAL;
  *out = NULL;
  if (!path) return STROBE_EINVAL;
  /* Never waits on what is not a regular file (a FIFO without a writer
   * would block forever): streams come in through strobe_capture_open_fd. */
  int fd = strobe__open_regular(path);
  if (fd == STROBE__OPEN_NOT_REGULAR) return STROBE_EINVAL;
  return open_descriptor(fd, out);
}

int strobe_capture_open_fd(int fd, strobe_capture **out) {
  if (!out) return STROBE_EINVAL;
  *out = NULL;
  if (fd < 0) return STROBE_EINVAL;
  return open_descriptor(strobe__dup_fd(fd), out); /* the caller keeps fd */
}

int strobe_capture_open_memory(const void *data, size_t len, strobe_capture **out) {
  if (!out) return STROBE_EINVAL;
  *out = NULL;
  if (!data && len) return STROBE_EINVAL;
  strobe_capture *c = calloc(1, sizeof *c);
  if (!c) return STROBE_ENOMEM;
  c->mem = data ? data : g_empty;
  c->mem_len = len;
  return open_common(c, out);
}

const strobe_capture_header *strobe_capture_query_header(const strobe_capture *c) { return c ? &c->header : NULL; }

int strobe_capture_set_records(strobe_capture *c, uint64_t types) {
  if (!c || !types || (types & ~STROBE_CAPTURE_ALL_RECORDS)) return STROBE_EINVAL;
  c->want = types;
  return 0;
}

uint32_t strobe_capture_query_site_limit(const strobe_capture *c) { return c ? c->site_limit : 0; }

const strobe_capture_site *strobe_capture_query_site(const strobe_capture *c, uint32_t id) {
  return c ? site_at(c, id) : NULL;
}

uint32_t strobe_capture_query_thread_count(const strobe_capture *c) { return c ? c->thread_limit : 0; }

const strobe_capture_thread *strobe_capture_query_thread(const strobe_capture *c, uint32_t index) {
  rthread *t = c ? thread_at(c, index) : NULL;
  return t ? &t->pub : NULL;
}

strobe_capture_clock_offsets strobe_capture_query_clock_offsets(const strobe_capture *c) {
  if (!c) return (strobe_capture_clock_offsets){0, NULL, 0, 0};
  return (strobe_capture_clock_offsets){c->noffsets, c->offsets, c->offsets_replaced, c->offsets_cut};
}

const strobe_capture_merge *strobe_capture_query_merge(const strobe_capture *c) { return c ? c->merge : NULL; }

const char *strobe_capture_record_type_name(uint32_t type) {
  switch ((strobe_capture_record_type)type) {
    case STROBE_REC_SITE: return "site";
    case STROBE_REC_THREAD: return "thread";
    case STROBE_REC_BEGIN: return "begin";
    case STROBE_REC_END: return "end";
    case STROBE_REC_VALUE: return "value";
    case STROBE_REC_COUNTER: return "counter";
    case STROBE_REC_GAUGE: return "gauge";
    case STROBE_REC_FRAME: return "frame";
    case STROBE_REC_CUMULATIVE: return "cumulative";
    case STROBE_REC_LOST: return "lost";
    case STROBE_REC_THREAD_END: return "thread_end";
    case STROBE_REC_OP_BEGIN: return "op_begin";
    case STROBE_REC_OP_END: return "op_end";
    case STROBE_REC_OP_TAKE: return "op_take";
    case STROBE_REC_OP_RESUME: return "op_resume";
    case STROBE_REC_CLOCK_PAIR: return "clock_pair";
    case STROBE_REC_GPU_SPAN: return "gpu_span";
    case STROBE_REC_GPU_MARK: return "gpu_mark";
    case STROBE_REC_ELEMENT: return "element";
    case STROBE_REC_TREE: return "tree";
    case STROBE_REC_SAMPLE: return "sample";
    case STROBE_REC_SWITCH: return "switch";
    case STROBE_REC_ATTACHMENT: return "attachment";
    case STROBE_REC_DEEP: return "deep";
    case STROBE_REC_LANE_SPAN: return "lane_span";
    case STROBE_REC_ALLOC: return "alloc";
    case STROBE_REC_FREE: return "free";
    case STROBE_REC_MESSAGE: return "message";
    case STROBE_REC_LOCK_WAIT: return "lock_wait";
    case STROBE_REC_LOCK_ACQUIRED: return "lock_acquired";
    case STROBE_REC_LOCK_RELEASED: return "lock_released";
  }
  return "unknown";
}

strobe_capture_totals strobe_capture_query_totals(const strobe_capture *c) {
  return c ? c->totals : (strobe_capture_totals){0};
}

int strobe_capture_set_skip_damaged_content(strobe_capture *c, int on) {
  if (!c) return STROBE_EINVAL;
  c->skip_damaged = on != 0;
  return 0;
}

uint64_t strobe_capture_query_position(const strobe_capture *c) {
  if (!c) return 0;
  return c->mem ? (uint64_t)c->mem_pos : c->file_pos;
}

uint32_t strobe_capture_query_function_limit(const strobe_capture *c) { return c ? c->func_limit : 0; }

const strobe_capture_function *strobe_capture_query_function(const strobe_capture *c, uint32_t id) {
  return c && id < c->func_limit ? c->funcs[id] : NULL;
}

double strobe_capture_ticks_to_ns(const strobe_capture *c, uint64_t ticks) { return c ? ticks_to_ns(c, ticks) : 0.0; }
