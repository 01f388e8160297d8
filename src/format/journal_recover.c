/*
 * journal_recover.c — strobe_capture_recover (docs/recording.md §Crash
 * journal, docs/capture-format.md §Journal): after a process died while it
 * recorded, adds to its capture the events its threads had written that the
 * file lacks, from the journal beside it, exactly once.
 *
 * Owns: reading a journal (which may be cut short, of another run, or
 * hostile: every offset, length and pointer in it is checked before use),
 * the recovery rule (the file's last JOURNAL_POS block says how far it holds
 * each journaled thread; its blocks of those threads' events after it are
 * replaced by the journal's events from that point), and the rewritten file.
 * Must never: write into the capture it reads (the result goes to a new file,
 * renamed over `out` once whole), decode past a journaled ring's bounds, or
 * emit an event naming a site or label the result does not define.
 *
 * Contents: >>journal >>log >>blocks >>decode >>recover
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "collect/collect.h"
#include "format/capture_writer.h"
#include "format/codec.h"
#include "platform/io.h"
#include "strobe/capture.h"

/* >>journal */
typedef struct jsite {
  uint64_t addr;
  strobe_site site; /* its strings point into `strs` */
} jsite;

typedef struct journal {
  const uint8_t *map;
  size_t size;
  const strobe__journal_head *head;
  jsite *sites; /* sorted by address */
  uint32_t nsites;
  char *strs;   /* the sites' and labels' strings, terminated */
  uint8_t *site_known; /* by id: 1 when the log defines it (STROBE_MAX_SITES entries) */
  const char **labels;  /* by id: the log's text, NULL when it defines none (STROBE__MAX_LABELS entries) */
  uint32_t unknown_id;  /* the placeholder site's id: one past the largest logged */
} journal;

static void journal_free(journal *j) {
  if (j->map && j->map != MAP_FAILED) munmap((void *)j->map, j->size);
  free(j->sites);
  free(j->strs);
  free(j->site_known);
  free(j->labels);
}

/* Maps the journal read-only and checks its head. */
static int journal_open(const char *path, uint64_t want_id, journal *j) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? STROBE_ENOTFOUND : STROBE_EIO;
  struct stat st;
  int rc = STROBE_EIO;
  if (fstat(fd, &st) || !S_ISREG(st.st_mode)) goto done;
  j->size = (size_t)st.st_size;
  rc = STROBE_ETRUNCATED;
  if (j->size < sizeof(strobe__journal_head)) goto done;
  j->map = mmap(NULL, j->size, PROT_READ, MAP_PRIVATE, fd, 0);
  rc = STROBE_EIO;
  if (j->map == MAP_FAILED) goto done;
  const strobe__journal_head *h = j->head = (const strobe__journal_head *)j->map;
  rc = STROBE_EBADMAGIC;
  if (memcmp(h->magic, STROBE__JOURNAL_MAGIC, 8)) goto done;
  rc = STROBE_EVERSION; /* another version, or a library whose thread state differs */
  if (h->version != STROBE__JOURNAL_VERSION || h->head_bytes != sizeof *h || h->tstate_bytes != sizeof(strobe__tstate) ||
      h->layout != strobe__journal_layout())
    goto done;
  rc = STROBE_EFOREIGN;
  if (!want_id || h->journal_id != want_id) goto done;
  rc = STROBE_ECORRUPT;
  if (h->regions > STROBE__JOURNAL_REGIONS || h->log_len > STROBE__JOURNAL_LOG_BYTES || h->log_offset > j->size ||
      j->size - h->log_offset < h->log_len)
    goto done;
  rc = 0;
done:
  close(fd);
  return rc;
}

/* >>log: site and label records, checked one by one. */
static int cmp_site(const void *a, const void *b) {
  uint64_t x = ((const jsite *)a)->addr, y = ((const jsite *)b)->addr;
  return x < y ? -1 : x > y;
}

static const char *log_str(strobe__cur *c, char **strs, size_t *used) {
  uint32_t n = strobe__cur_u32(c);
  const uint8_t *p = n <= 4096 ? strobe__cur_bytes(c, n) : NULL;
  if (!p) {
    c->bad = 1;
    return "";
  }
  char *s = *strs + *used;
  memcpy(s, p, n);
  s[n] = 0;
  *used += (size_t)n + 1;
  return s;
}

static int log_read(journal *j, strobe_capture_recovery *st) {
  const uint8_t *log = j->map + j->head->log_offset;
  size_t len = (size_t)j->head->log_len, used = 0;
  j->strs = malloc(len + 1);
  j->sites = malloc((len / 40 + 1) * sizeof *j->sites); /* a site record is at least 40 bytes */
  j->site_known = calloc(STROBE_MAX_SITES, 1);
  j->labels = calloc(STROBE__MAX_LABELS, sizeof *j->labels);
  j->unknown_id = 1;
  if (!j->strs || !j->sites || !j->site_known || !j->labels) return STROBE_ENOMEM;
  for (size_t at = 0; at < len;) {
    strobe__cur c = {log + at, log + len, 0};
    uint32_t bytes = strobe__cur_u32(&c), type = strobe__cur_u32(&c);
    if (c.bad || bytes < 8 || bytes % 8 || bytes > len - at) return STROBE_ECORRUPT;
    c.end = log + at + bytes;
    if (type == STROBE__JLOG_SITE) {
      jsite *s = &j->sites[j->nsites];
      s->addr = strobe__cur_u64(&c);
      uint32_t id = strobe__cur_u32(&c);
      s->site = (strobe_site){0};
      s->site.kind = strobe__cur_u32(&c);
      s->site.line = strobe__cur_u32(&c);
      s->site.unit = strobe__cur_u32(&c);
      s->site.flags = strobe__cur_u32(&c);
      const char **f[5] = {&s->site.name, &s->site.category, &s->site.file, &s->site.function, &s->site.parent};
      for (int i = 0; i < 5; i++) *f[i] = log_str(&c, &j->strs, &used);
      if (c.bad || !id || id >= STROBE_MAX_SITES || !strobe__site_kind_known(s->site.kind)) return STROBE_ECORRUPT;
      s->site.id = id;
      j->site_known[id] = 1;
      if (id >= j->unknown_id) j->unknown_id = id + 1;
      j->nsites++;
    } else if (type == STROBE__JLOG_LABEL) {
      uint32_t id = strobe__cur_u32(&c);
      const char *text = log_str(&c, &j->strs, &used);
      if (c.bad || !id || id >= STROBE__MAX_LABELS) return STROBE_ECORRUPT;
      j->labels[id] = text; /* the operation and GPU events that name it are recovered (opev_named) */
    } else {
      (void)st; /* a newer record kind: skipped */
    }
    at += bytes;
  }
  qsort(j->sites, j->nsites, sizeof *j->sites, cmp_site);
  /* A log that dropped records may miss sites the file defines: then no id is known to be free. */
  if (j->head->log_dropped) j->unknown_id = STROBE_MAX_SITES;
  return 0;
}

static const jsite *site_at(const journal *j, uint64_t addr) {
  jsite key = {addr, {0}};
  return bsearch(&key, j->sites, j->nsites, sizeof *j->sites, cmp_site);
}

/* >>blocks: the capture as stored. `valid` ends after its last whole block
 * whose checksum holds (what a reader returns). */
typedef struct capfile {
  const uint8_t *map;
  size_t size, header, valid;
  size_t last_pos;        /* offset of the last JOURNAL_POS block, 0: none */
  uint32_t npos;          /* its entries */
  uint32_t pos_index[STROBE__JOURNAL_REGIONS];
  uint64_t pos_count[STROBE__JOURNAL_REGIONS];
  uint8_t ended[STROBE__JOURNAL_REGIONS]; /* by journaled thread: its THREAD_END block was left out */
} capfile;

/* A block's payload as written (decompressed into *buf when it is zstd). */
static int payload_of(const uint8_t *b, const strobe__block_header *h, uint8_t **buf, const uint8_t **p) {
  if (h->codec == STROBE__CODEC_RAW) {
    *p = b + STROBE__BLOCK_HEADER;
    return h->stored_len == h->raw_len ? 0 : STROBE_ECORRUPT;
  }
  if (h->raw_len > (64u << 20)) return STROBE_ECORRUPT;
  uint8_t *d = realloc(*buf, h->raw_len + 1u);
  if (!d) return STROBE_ENOMEM;
  *buf = d;
  size_t n = ZSTD_decompress(d, h->raw_len, b + STROBE__BLOCK_HEADER, h->stored_len);
  if (ZSTD_isError(n) || n != h->raw_len) return STROBE_ECORRUPT;
  *p = d;
  return 0;
}

static int read_pos(capfile *f, const uint8_t *b, const strobe__block_header *h, uint8_t **buf) {
  const uint8_t *p;
  int rc = payload_of(b, h, buf, &p);
  if (rc) return rc;
  strobe__cur c = {p, p + h->raw_len, 0};
  uint64_t n = strobe__cur_varint(&c);
  if (n > STROBE__JOURNAL_REGIONS) return STROBE_ECORRUPT;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t index = strobe__cur_varint(&c);
    f->pos_count[i] = strobe__cur_varint(&c);
    if (index > UINT32_MAX) c.bad = 1;
    f->pos_index[i] = (uint32_t)index;
  }
  if (c.bad || c.p != c.end) return STROBE_ECORRUPT;
  f->npos = (uint32_t)n;
  return 0;
}

/* Walks the blocks once: where the whole ones end, and the last JOURNAL_POS. */
static int scan_blocks(capfile *f, uint8_t **buf) {
  if (f->size < 16) return STROBE_ETRUNCATED;
  uint32_t fields;
  memcpy(&fields, f->map + 12, 4);
  f->header = 16 + (size_t)fields;
  if (fields > 65536 || f->header > f->size) return STROBE_ETRUNCATED;
  size_t at = f->header;
  while (f->size - at >= STROBE__BLOCK_HEADER) {
    strobe__block_header h;
    strobe__block_header_decode(f->map + at, &h);
    if (h.stored_len > f->size - at - STROBE__BLOCK_HEADER) break; /* cut short */
    if (strobe__block_crc(f->map + at, f->map + at + STROBE__BLOCK_HEADER, h.stored_len) != h.crc) break;
    if (h.type == STROBE__BLK_JOURNAL_POS) {
      int rc = read_pos(f, f->map + at, &h, buf);
      if (rc) return rc;
      f->last_pos = at;
    }
    at += STROBE__BLOCK_HEADER + h.stored_len;
  }
  f->valid = at;
  return 0;
}

/* The thread index an EVENTS, OPS, DEVICE or THREAD_END block is about. */
static int block_thread(const uint8_t *b, const strobe__block_header *h, uint8_t **buf, uint64_t *index) {
  const uint8_t *p;
  int rc = payload_of(b, h, buf, &p);
  if (rc) return rc;
  strobe__cur c = {p, p + h->raw_len, 0};
  *index = strobe__cur_varint(&c);
  return c.bad ? STROBE_ECORRUPT : 0;
}

/* Which journaled thread `index` is (its place in live[]), or -1. */
static int journaled(const uint32_t *live, uint32_t nlive, uint64_t index) {
  for (uint32_t i = 0; i < nlive; i++)
    if (live[i] == index) return (int)i;
  return -1;
}

/* Copies the header and the whole blocks, leaving out earlier RECOVERY blocks
 * and, after the last JOURNAL_POS, the EVENTS, OPS, DEVICE and THREAD_END
 * blocks of the threads whose events come from the journal. */
static int copy_blocks(capfile *f, const uint32_t *live, uint32_t nlive, int fd, uint8_t **buf,
                       strobe_capture_recovery *st) {
  if (strobe__write_all(fd, f->map, f->header)) return STROBE_EIO;
  for (size_t at = f->header; at < f->valid;) {
    strobe__block_header h;
    strobe__block_header_decode(f->map + at, &h);
    size_t len = STROBE__BLOCK_HEADER + h.stored_len;
    int keep = h.type != STROBE__BLK_RECOVERY;
    int of_thread = h.type == STROBE__BLK_EVENTS || h.type == STROBE__BLK_OPS || h.type == STROBE__BLK_DEVICE ||
                    h.type == STROBE__BLK_THREAD_END; /* each opens with its thread's index */
    if (keep && at > f->last_pos && of_thread) {
      uint64_t index;
      int rc = block_thread(f->map + at, &h, buf, &index);
      if (rc) return rc;
      int which = journaled(live, nlive, index);
      keep = which < 0;
      st->replaced_blocks += !keep && h.type != STROBE__BLK_THREAD_END;
      if (!keep && h.type == STROBE__BLK_THREAD_END) f->ended[which] = 1;
    }
    if (keep && strobe__write_all(fd, f->map + at, len)) return STROBE_EIO;
    at += len;
  }
  return 0;
}

/* >>decode: one journaled thread's ring from its mark to its cursor, in the
 * hot path's form, converted as the drain would (src/collect/drain.c). */
#define RING_AT STROBE__JOURNAL_RING_AT
#define OUT_CHUNK 1024u

typedef struct ring_view {
  const uint8_t *mem;     /* the region in the mapping */
  uint64_t base, size;    /* its address in the dead process, its bytes */
  const strobe__event *ring, *end;
} ring_view;

/* A pointer of the dead process into the ring, or NULL when it is not one. */
static const strobe__event *ring_ptr(const ring_view *v, const void *p) {
  uint64_t a = (uint64_t)(uintptr_t)p;
  if (a < v->base + RING_AT || a - v->base > v->size || (a - v->base - RING_AT) % sizeof(strobe__event)) return NULL;
  const strobe__event *e = (const strobe__event *)(v->mem + (a - v->base));
  return e <= v->end ? e : NULL;
}

typedef struct decoder {
  const journal *j;
  strobe__writer *w;
  uint32_t index;
  uint32_t open;
  uint32_t open_site[STROBE_MAX_DEPTH];
  uint64_t last_ts;
  uint64_t count, file_count; /* slots seen; slots the file holds */
  strobe__event out[OUT_CHUNK + 1 + STROBE__OPEV_MAX_SLOTS]; /* a chunk, then the longest event (opev_named) */
  uint32_t nout;
  uint64_t added, skipped, unnamed;
  const strobe__tstate *t; /* the thread's state in the journal */
  char name[STROBE__THREAD_NAME_MAX];
  int defined;             /* its THREAD block is written */
} decoder;

static void put_out(decoder *d, uint64_t ts, uint32_t kind, uint32_t data) {
  d->out[d->nout++] = (strobe__event){ts, kind, data};
}

/* The site recovery names scopes by when the drain never met theirs (docs/capture-format.md §Journal). */
static const strobe_site k_unknown_site = {"strobe: site first met after the drain's last pass", NULL, NULL, "", "",
                                           0, STROBE_SITE_SCOPE, 0, 0, 0};

/* A site the log does not name: the drain never met it. The slot after a number is its payload, whose kind
 * the hot path never writes and the drain cleared (journal.c), and the slow path writes as PAYLOAD, which
 * never begins an event: so a next slot of kind 0 or PAYLOAD (data: 0..3, how the number is stored) makes it
 * a number, skipped and counted; anything else a BEGIN (or an element, which cannot be told from one),
 * recorded on the placeholder site. Returns its slots. */
static int decode_unknown(decoder *d, const strobe__event *e, const strobe__event *stop, int emit) {
  if (d->j->unknown_id >= STROBE_MAX_SITES - 1) return 0; /* no id is known free: nothing after it is decoded */
  if (e + 1 < stop && (e[1].kind == 0 || e[1].kind == STROBE__EV_PAYLOAD) && e[1].data <= STROBE__NUM_IN_SLOT) {
    if (emit) d->skipped += 2;
    d->count += 2;
    return 2;
  }
  if (d->open < STROBE_MAX_DEPTH) d->open_site[d->open] = d->j->unknown_id;
  d->open++;
  d->last_ts = e->ts;
  if (emit) {
    put_out(d, e->ts, STROBE__EV_BEGIN, d->j->unknown_id);
    d->added++;
    d->unnamed++;
  }
  d->count++;
  return 1;
}

_Static_assert(STROBE__OPEV_MAX_SLOTS >= STROBE__EV_MAX_SLOTS && STROBE__OPEV_MAX_SLOTS >= STROBE__GPUEV_MAX_SLOTS,
              "decoder.out holds the longest event after a chunk");

/* Whether every label and site an operation or GPU event names (probe.h >>operation events, >>gpu events)
 * is in the log, so the result defines it: then the event is recovered as it lies, as the drain passes it
 * on. `e` is its head, k its slots with the head. An event of a layout this library never writes is not. */
static int opev_named(const journal *j, const strobe__event *e, uint32_t k) {
  uint32_t labels[2 + 2 * STROBE__OPEV_COUNTERS_MAX], sites[1 + 2 * STROBE__OPEV_STAGES_MAX], nl = 0, ns = 0;
  uint32_t sub = strobe__opev_sub(e->data), n = k - 1;
  const strobe__event *p = e + 1; /* payload slots p[0..n) */
  if ((e->kind & 0xffu) == STROBE__EV_GPU) {
    if (sub == STROBE__GPUEV_PAIR && n == 3) labels[nl++] = p[0].data;
    else if (sub == STROBE__GPUEV_SPAN && n == 4) labels[nl++] = p[0].data, labels[nl++] = p[1].data,
                                                  sites[ns++] = p[2].data, labels[nl++] = p[3].data;
    else if (sub == STROBE__GPUEV_LANE_SPAN && n == 3) labels[nl++] = p[0].data, labels[nl++] = p[1].data,
                                                       sites[ns++] = p[2].data;
    else if (sub != STROBE__GPUEV_MARK || n != 1) return 0;
  } else if (sub == STROBE__OPEV_BEGIN && n == 3) {
    labels[nl++] = p[1].data;
  } else if (sub == STROBE__OPEV_END && n >= 4) {
    uint32_t nst = p[3].data & 0xffffu, nct = p[3].data >> 16;
    if (nst > STROBE__OPEV_STAGES_MAX || nct > STROBE__OPEV_COUNTERS_MAX || n != 4 + 3 * nst + nct) return 0;
    labels[nl++] = p[1].data;
    labels[nl++] = p[2].data >> 16; /* the population */
    for (uint32_t i = 0; i < nst; i++)
      sites[ns++] = p[4 + 3 * i].data, sites[ns++] = p[4 + 3 * i + 2].data & ~STROBE__OPEV_STAGE_REMOTE;
    for (uint32_t i = 0; i < nct; i++) labels[nl++] = p[4 + 3 * nst + i].data & 0xfffu, labels[nl++] = p[4 + 3 * nst + i].data >> 16;
  } else if (sub == STROBE__OPEV_REMOTE_OUT && n == 3) {
    labels[nl++] = p[1].data, labels[nl++] = p[2].data;
  } else if (sub == STROBE__OPEV_REMOTE_IN && n == 4) {
    labels[nl++] = p[1].data, labels[nl++] = p[3].data;
  } else if ((sub != STROBE__OPEV_TAKE && sub != STROBE__OPEV_RESUME) || n != 1) {
    return 0;
  }
  for (uint32_t i = 0; i < nl; i++) /* 0: none */
    if (labels[i] && (labels[i] >= STROBE__MAX_LABELS || !j->labels[labels[i]])) return 0;
  for (uint32_t i = 0; i < ns; i++)
    if (sites[i] && (sites[i] >= STROBE_MAX_SITES || !j->site_known[sites[i]])) return 0;
  return 1;
}

/* Converts the event at e (k slots, all before `stop`) into d->out when the
 * file does not hold it yet. Returns its slots, 0 when it cannot be decoded
 * (an unknown site: nothing after it can be), -1 when the ring is corrupt. */
static int decode_one(decoder *d, const strobe__event *e, const strobe__event *stop) {
  uint32_t kind = e->kind, k = 1;
  int emit = d->count >= d->file_count, known = 1;
  uint32_t first = d->nout;
  if ((kind & 7u) == 0 && kind != STROBE__EV_RING_LOST) { /* a site pointer (strobe.h): BEGIN, number, element */
    const jsite *s = site_at(d->j, (uint64_t)e->data << 32 | kind);
    if (!s) return decode_unknown(d, e, stop, emit);
    uint32_t num = strobe__number_event(s->site.kind);
    if (num) {
      k = 2;
      if (e + 1 >= stop) return -1;
      uint32_t code = s->site.unit >> STROBE__NUM_SHIFT;
      if (num != STROBE__EV_VALUE) d->last_ts = e->ts;
      put_out(d, num == STROBE__EV_VALUE ? d->last_ts : e->ts, num, s->site.id);
      put_out(d, strobe__number_bits(e[1].ts, code == STROBE__NUM_IN_SLOT ? e[1].data : code), STROBE__EV_PAYLOAD, 0);
    } else if (s->site.kind == STROBE_SITE_ALLOC || s->site.kind == STROBE_SITE_FREE) {
      uint32_t ev = s->site.kind == STROBE_SITE_ALLOC ? STROBE__EV_ALLOC : STROBE__EV_FREE; /* strobe__alloc */
      k = 1 + strobe__ev_slots(ev);
      if (e + k > stop) return -1;
      d->last_ts = e->ts;
      put_out(d, e->ts, ev, s->site.id);
      for (uint32_t i = 1; i < k; i++) put_out(d, e[i].ts, STROBE__EV_PAYLOAD, 0);
    } else if (s->site.kind == STROBE_SITE_ELEMENT) {
      put_out(d, e->ts, STROBE__EV_ELEMENT, s->site.id);
    } else {
      if (d->open < STROBE_MAX_DEPTH) d->open_site[d->open] = s->site.id;
      d->open++;
      d->last_ts = e->ts;
      put_out(d, e->ts, STROBE__EV_BEGIN, s->site.id);
    }
  } else {
    uint32_t low = kind & 0xffu;
    if (low == STROBE__EV_OP || low == STROBE__EV_GPU || low == STROBE__EV_CUMULATIVE)
      k = 1 + strobe__payload_slots(kind, e->data);
    if (e + k > stop) return -1;
    if (strobe__ev_closes(kind)) {
      if (d->open) d->open--;
      put_out(d, e->ts, kind, d->open < STROBE_MAX_DEPTH ? d->open_site[d->open] : 0);
      d->last_ts = e->ts;
    } else if (low == STROBE__EV_RING_LOST) {
      uint32_t depth = kind >> 8;
      if (depth < d->open) d->open = depth;
      put_out(d, e->ts, STROBE__EV_LOST | d->open << 8, e->data);
      d->last_ts = e->ts;
    } else if (low == STROBE__EV_FRAME || low == STROBE__EV_CUMULATIVE || low == STROBE__EV_MESSAGE ||
               low == STROBE__EV_LOCK_WAIT || low == STROBE__EV_LOCK_ACQUIRED || low == STROBE__EV_LOCK_RELEASED) {
      known = e->data && e->data < STROBE_MAX_SITES && d->j->site_known[e->data];
      for (uint32_t i = 0; i < k && known; i++) put_out(d, e[i].ts, i ? STROBE__EV_PAYLOAD : kind, i ? 0 : e->data);
      d->last_ts = e->ts;
    } else if (low == STROBE__EV_OP || low == STROBE__EV_GPU) {
      known = opev_named(d->j, e, k); /* else one names a label or site first met after the drain's last pass */
      for (uint32_t i = 0; i < k && known; i++) put_out(d, e[i].ts, i ? STROBE__EV_PAYLOAD : kind, e[i].data);
      d->last_ts = e->ts;
    } else {
      return -1; /* no such event in a ring */
    }
  }
  if (!emit || !known) d->nout = first;
  if (emit) {
    d->added += known ? k : 0;
    d->skipped += known ? 0 : k;
  }
  d->count += k;
  return (int)k;
}

/* Defines the thread in the result the first time something of it is written (never after its end). */
static void define_thread(decoder *d) {
  if (d->defined) return;
  strobe__writer_thread(d->w, d->index, d->t->os_tid, d->name, d->t->lost);
  d->defined = 1;
}

static void flush_out(decoder *d) {
  if (d->nout) {
    define_thread(d);
    strobe__writer_events(d->w, d->index, d->out, d->nout);
  }
  d->nout = 0;
}

/* Decodes [e, stop). Returns 0, 1 when it stopped at an undecodable event, or an error. */
static int decode_span(decoder *d, const strobe__event *e, const strobe__event *stop) {
  while (e < stop) {
    int k = decode_one(d, e, stop);
    if (k < 0) return STROBE_ECORRUPT;
    if (k == 0) {
      d->skipped += (uint64_t)(stop - e);
      return 1;
    }
    if (d->count > d->file_count && d->count - (uint64_t)k < d->file_count) return STROBE_ECORRUPT; /* not on an event */
    e += k;
    if (d->nout >= OUT_CHUNK) flush_out(d);
  }
  return 0;
}

/* Checks region r and gives its thread state and ring; NULL when they are not sound. */
static const strobe__tstate *region_state(const journal *j, const strobe__journal_region *r, ring_view *v) {
  uint64_t ring_bytes = ((uint64_t)r->ring_events + 1u) * sizeof(strobe__event);
  if (r->offset % 4096u || r->offset > j->size || r->size > j->size - r->offset || r->ring_events < 1024u ||
      r->ring_events > (1u << 24) || r->size < RING_AT + ring_bytes)
    return NULL;
  const strobe__tstate *t = (const strobe__tstate *)(j->map + r->offset);
  *v = (ring_view){j->map + r->offset, r->base, r->size, NULL, NULL};
  v->ring = (const strobe__event *)(v->mem + RING_AT);
  v->end = v->ring + r->ring_events;
  return t;
}

/* Whether a thread left its journal: its ring grew onto the heap (thread.c, grow). Else its state must say
 * its ring is where it was made; -1 when it does not. */
static int left_journal(const strobe__tstate *t, const ring_view *v) {
  if (__atomic_load_n(&t->retired, __ATOMIC_RELAXED)) return 1;
  return ring_ptr(v, t->ring) == v->ring && ring_ptr(v, t->ring_end) == v->end ? 0 : -1;
}

static int recover_thread(const journal *j, const strobe__journal_region *r, const capfile *f, int end_dropped,
                          decoder *d, strobe_capture_recovery *st) {
  ring_view v;
  const strobe__tstate *t = region_state(j, r, &v);
  if (!t) return STROBE_ECORRUPT;
  const strobe__journal_mark *m = &t->jmark[t->jmark_cur & 1u];
  const strobe__event *read = ring_ptr(&v, m->read), *cur = ring_ptr(&v, t->hot.cur), *wrap = ring_ptr(&v, t->wrap_at);
  if (!read || !cur || !wrap || (cur < read && wrap < read)) return STROBE_ECORRUPT;
  d->index = t->index;
  d->open = m->open;
  memcpy(d->open_site, m->open_site, sizeof d->open_site);
  d->last_ts = m->last_ts;
  d->count = d->file_count = m->count;
  for (uint32_t i = 0; i < f->npos; i++)
    if (f->pos_index[i] == t->index) d->file_count = f->pos_count[i];
  if (d->file_count < m->count) return STROBE_ECORRUPT; /* the file never says it holds less than was released */
  d->added = d->skipped = d->unnamed = 0;
  d->nout = 0;
  d->t = t;
  memcpy(d->name, t->name, sizeof d->name);
  d->name[sizeof d->name - 1] = 0;
  int rc = decode_span(d, read, cur >= read ? cur : wrap);
  if (rc == 0 && cur < read) rc = decode_span(d, v.ring, cur);
  if (rc < 0) return rc;
  flush_out(d);
  if (d->count < d->file_count && rc == 0) return STROBE_ECORRUPT; /* the file holds more than the ring ever had */
  if (t->exited && (end_dropped || d->added)) {
    define_thread(d);
    strobe__writer_thread_end(d->w, t->index);
  }
  st->events += d->added;
  st->unrecoverable += d->skipped;
  st->unnamed += d->unnamed;
  st->threads++;
  return 0;
}

/* >>recover */
static int map_file(const char *path, capfile *f) {
  int fd = strobe__open_regular(path);
  if (fd < 0) return fd == STROBE__OPEN_NOT_REGULAR ? STROBE_EINVAL : STROBE_EIO;
  struct stat st;
  int rc = fstat(fd, &st) ? STROBE_EIO : 0;
  f->size = rc ? 0 : (size_t)st.st_size;
  if (!rc && f->size) {
    f->map = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (f->map == MAP_FAILED) {
      f->map = NULL;
      rc = STROBE_EIO;
    }
  }
  close(fd);
  return rc;
}

static int tmp_sink(void *ctx, const void *data, size_t len) { return strobe__write_all(*(int *)ctx, data, len); }

/* Everything after the header check: the file's blocks, then the journal's events. */
static int rebuild(const journal *j, capfile *f, int fd, uint8_t **buf, strobe_capture_recovery *st) {
  const strobe__journal_head *h = j->head;
  /* The threads whose events come from the journal: live regions, but for threads that left it. */
  uint32_t live[STROBE__JOURNAL_REGIONS], nlive = 0;
  uint8_t from[STROBE__JOURNAL_REGIONS] = {0};
  for (uint32_t i = 0; i < h->regions; i++) {
    if (h->region[i].state != STROBE__JREGION_LIVE) continue;
    ring_view v;
    const strobe__tstate *t = region_state(j, &h->region[i], &v);
    int left = t ? left_journal(t, &v) : -1;
    if (left < 0) return STROBE_ECORRUPT;
    st->left_threads += (uint64_t)left;
    if (left) continue;
    from[i] = 1;
    live[nlive++] = t->index;
  }
  int rc = copy_blocks(f, live, nlive, fd, buf, st);
  if (rc) return rc;
  strobe__writer *w;
  strobe__writer_desc wd = {"file", 0, 1, 0, 0, tmp_sink, &fd, NULL};
  if ((rc = strobe__writer_create_appending(&wd, &w))) return rc;
  for (uint32_t i = 0; i < j->nsites; i++) strobe__writer_site(w, j->sites[i].site.id, &j->sites[i].site);
  for (uint32_t id = 1; id < STROBE__MAX_LABELS; id++) /* the log's labels: those the file has are the same */
    if (j->labels[id]) strobe__writer_label(w, id, j->labels[id]);
  /* The placeholder, at an id no site of the file has (the log holds every site the file defines). */
  if (j->unknown_id < STROBE_MAX_SITES - 1) strobe__writer_site(w, j->unknown_id, &k_unknown_site);
  decoder *d = calloc(1, sizeof *d);
  rc = d ? 0 : STROBE_ENOMEM;
  for (uint32_t i = 0, n = 0; i < h->regions && !rc; i++) {
    if (!from[i]) continue;
    *d = (decoder){.j = j, .w = w};
    rc = recover_thread(j, &h->region[i], f, f->ended[n++], d, st);
  }
  free(d);
  if (!rc) {
    strobe__writer_recovery(w, st->events, st->threads, st->unrecoverable);
    rc = strobe__writer_flush(w);
  }
  strobe__writer_destroy(w);
  return rc;
}

int strobe_capture_recover(const char *path, const char *out, strobe_capture_recovery *stats) {
  if (!path || !out) return STROBE_EINVAL;
  strobe_capture *cap;
  int rc = strobe_capture_open(path, &cap);
  if (rc) return rc;
  uint64_t id = strobe_capture_query_header(cap)->journal_id;
  strobe_capture_close(cap);
  size_t n = strlen(path), on = strlen(out);
  char *jpath = malloc(n + sizeof ".journal"), *tmp = malloc(on + sizeof ".recover-XXXXXX");
  journal j = {0};
  capfile *f = calloc(1, sizeof *f);
  uint8_t *buf = NULL;
  strobe_capture_recovery st = {0};
  int fd = -1;
  rc = STROBE_ENOMEM;
  if (!jpath || !tmp || !f) goto done;
  memcpy(jpath, path, n);
  memcpy(jpath + n, ".journal", sizeof ".journal");
  if ((rc = journal_open(jpath, id, &j)) || (rc = log_read(&j, &st)) || (rc = map_file(path, f)) ||
      (rc = scan_blocks(f, &buf)))
    goto done;
  memcpy(tmp, out, on);
  memcpy(tmp + on, ".recover-XXXXXX", sizeof ".recover-XXXXXX");
  fd = mkstemp(tmp);
  if (fd >= 0) (void)fchmod(fd, 0644); /* as strobe_record_start makes captures */
  rc = fd < 0 ? STROBE_EIO : rebuild(&j, f, fd, &buf, &st);
  if (fd >= 0 && close(fd) && !rc) rc = STROBE_EIO;
  if (!rc && rename(tmp, out)) rc = STROBE_EIO;
  if (rc && fd >= 0) unlink(tmp);
  if (!rc && stats) *stats = st;
done:
  if (f && f->map) munmap((void *)f->map, f->size);
  journal_free(&j);
  free(f);
  free(buf);
  free(jpath);
  free(tmp);
  return rc;
}
