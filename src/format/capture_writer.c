/*
 * capture_writer.c — turns ring events into EVENTS blocks (ops stream of
 * site/kind varints plus a stream of zigzag time deltas, then zstd): the
 * drain's converted events, or, when a file is its only consumer, the ring
 * events as the hot path wrote them, completed and encoded in one pass
 * (collect.h >>ring runs); and
 * operation events into OPS blocks, and site/label/thread/loss metadata into
 * their blocks, always emitting metadata before the first block that refers
 * to it.
 *
 * Owns: per-thread encode buffers (bounded: a thread's buffer is flushed as
 * soon as it reaches BLOCK_FLUSH_BYTES), the header, the footer.
 * Must never: call the sink with a partial block (crash safety depends on
 * each block arriving whole), or grow memory with the number of events.
 */
#include "format/capture_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "collect/collect.h"
#include "probe/probe.h"
#include "format/codec.h"
#include "platform/clock.h"
#include "platform/host.h"
#include "platform/invariant.h"

/* Large enough for zstd to find structure, small enough to bound memory per
 * thread and the data a reader must hold at once. */
#define BLOCK_FLUSH_BYTES (256u << 10)

/* compression_level 1, every default (docs/recording.md §What a capture
 * says it cost): zstd's level 1 with its match search told to skip ahead
 * FAST_TARGET_LENGTH bytes at a time where it finds nothing (zstd's
 * targetLength, which its fast strategy reads as acceleration), and a hash
 * table of 2^FAST_HASH_LOG entries (16 KiB: zstd picks 64 KiB for a block
 * this size) that stays in the first-level cache. On the mixed workload's
 * EVENTS payloads that costs zstd less than a third of level 1's
 * instructions for files about twice as large (still about 1.4 bytes a
 * scope); its negative levels, which accelerate by 1 to 7, are no faster
 * there. Levels 2..19 are zstd's own. */
#define FAST_LEVEL 1
#define FAST_TARGET_LENGTH 32
#define FAST_HASH_LOG 12

typedef struct wthread {
  int defined;
  int ended;
  uint64_t lost_base;     /* process-lifetime loss count when this writer first saw the thread */
  uint64_t lost_total;    /* latest process-lifetime loss count */
  uint64_t lost_written;  /* loss already written in LOST blocks, relative to lost_base */
  uint64_t events;        /* events encoded for this thread */
  strobe__buf ops, times;
  uint32_t count;
  uint64_t base_ticks, last_ticks;
  uint32_t pend_kind, pend_site, pend_need, pend_have;
  uint64_t pend_ts;
  uint64_t pend_payload[STROBE__OPEV_MAX_SLOTS]; /* the payload slots' 64-bit words... */
  uint32_t pend_data[STROBE__OPEV_MAX_SLOTS];    /* ...and 32-bit ones */
  strobe__buf opsb;       /* OPS entries not yet written */
  uint32_t nops;          /* entries in opsb */
  uint64_t ops_base, ops_last; /* ticks: the block's base and the last entry's */
  strobe__buf devb;       /* DEVICE entries not yet written (docs/capture-format.md, DEVICE) */
  uint32_t ndev;          /* entries in devb */
  uint64_t dev_base, dev_last; /* ticks: the DEVICE block's base and its last entry's */
} wthread;

struct strobe__writer {
  strobe__writer_desc desc;
  int error;
  uint64_t bytes;
  ZSTD_CCtx *cctx;
  strobe__buf sites;  /* raw SITES payload not yet written */
  strobe__buf labels; /* raw LABELS payload not yet written */
  strobe__buf meta;   /* framed THREAD blocks not yet written */
  strobe__buf raw;    /* scratch: one block's raw payload */
  strobe__buf out;    /* scratch: one framed block */
  wthread *threads;
  uint32_t nthreads;
  strobe__block_info info; /* the block being emitted, for strobe__writer_block_info */
  uint64_t start_ticks;    /* for the header; 0 = now */
  uint32_t trees;          /* TREE blocks written (or passed through) */
  uint32_t tree_limit;     /* STROBE_TREE_MAX_SNAPSHOTS, or what strobe__writer_tree_limit set */
  uint64_t trees_dropped;  /* refused past STROBE_TREE_MAX_SNAPSHOTS, and those a merge's inputs had refused */
  strobe__buf funcs;       /* raw SAMPLE_FUNCS payload not yet written */
  uint32_t funcs_written;  /* sampled function ids 1..funcs_written are in funcs or written */
  struct wsamples *samp;   /* SAMPLES entries not yet written, one stream per OS thread */
  uint32_t nsamp, cap_samp;
  int sampled;             /* the sampler delivered something: SAMPLER blocks follow */
  /* >>content: attachments and deep captures (strobe/deep.h) */
  uint64_t attach_limit;   /* content bytes per capture: STROBE_ATTACH_CAPTURE_BYTES or strobe__writer_attach_limit */
  uint64_t attach_bytes;   /* content bytes stored */
  uint64_t attach_stored, attach_refs, attach_cut, attach_cut_bytes; /* ATTACH blocks by state */
  uint64_t *res_ids;       /* resource ids whose content is stored: open addressing, 0 = empty */
  uint32_t res_cap, res_n; /* slots (a power of two) and ids in them, at most half full */
  uint32_t deeps;          /* DEEP blocks written */
  uint32_t deep_limit;     /* STROBE_DEEP_MAX_FRAMES, or what strobe__writer_content_limits set */
  uint64_t deeps_dropped;  /* refused past STROBE_DEEP_MAX_FRAMES, and those a merge's inputs had refused */
  uint64_t journal_id;     /* header field 40 (docs/capture-format.md §Journal), 0: none */
  const char *journal;     /* header field 41, NULL: none; the caller's, used by the header alone */
};

/* SAMPLES entries of one OS thread not yet written (docs/capture-format.md, SAMPLES). */
typedef struct wsamples {
  uint64_t tid;
  strobe__buf b;
  uint32_t n;
  uint64_t base, last;
} wsamples;

/* >>framing */
static void frame_into(strobe__writer *w, strobe__buf *dst, uint8_t type, const uint8_t *raw, size_t len) {
  strobe__block_header h = {type, STROBE__CODEC_RAW, (uint32_t)len, (uint32_t)len, 0};
  size_t start = dst->len;
  if (strobe__buf_reserve(dst, STROBE__BLOCK_HEADER + ZSTD_compressBound(len))) return;
  uint8_t *payload = dst->data + start + STROBE__BLOCK_HEADER;
  if (len >= 128 && w->cctx) {
    size_t z = ZSTD_compress2(w->cctx, payload, ZSTD_compressBound(len), raw, len); /* the parameters writer_create set */
    if (!ZSTD_isError(z) && z < len) {
      h.codec = STROBE__CODEC_ZSTD;
      h.stored_len = (uint32_t)z;
    }
  }
  if (h.codec == STROBE__CODEC_RAW) memcpy(payload, raw, len);
  uint8_t *hdr = dst->data + start;
  strobe__block_header_encode(hdr, &h);
  h.crc = strobe__block_crc(hdr, payload, h.stored_len);
  strobe__block_header_encode(hdr, &h);
  dst->len = start + STROBE__BLOCK_HEADER + h.stored_len;
}

static void emit(strobe__writer *w, const void *data, size_t len) {
  if (w->error || len == 0) return;
  int rc = w->desc.sink(w->desc.sink_ctx, data, len);
  if (rc < 0)
    w->error = rc;
  else
    w->bytes += len;
}

/* `failed`: the payload is incomplete (a buffer could not grow): nothing is written. */
static void emit_payload(strobe__writer *w, uint8_t type, const uint8_t *raw, size_t len, int failed) {
  w->out.len = 0;
  frame_into(w, &w->out, type, raw, len);
  if (w->out.failed || failed)
    w->error = w->error ? w->error : STROBE_ENOMEM;
  else
    emit(w, w->out.data, w->out.len);
  w->info.type = 0;
}

static void emit_block(strobe__writer *w, uint8_t type, const strobe__buf *raw) {
  emit_payload(w, type, raw->data, raw->len, raw->failed);
}

static void flush_meta(strobe__writer *w) {
  if (w->funcs.len) {
    emit_block(w, STROBE__BLK_SAMPLE_FUNCS, &w->funcs);
    w->funcs.len = 0;
  }
  if (w->sites.len) {
    emit_block(w, STROBE__BLK_SITES, &w->sites);
    w->sites.len = 0;
  }
  if (w->labels.len) {
    emit_block(w, STROBE__BLK_LABELS, &w->labels);
    w->labels.len = 0;
  }
  if (w->meta.len) {
    emit(w, w->meta.data, w->meta.len);
    w->meta.len = 0;
  }
}

/* >>header */
static void field_str(strobe__buf *b, uint16_t tag, const char *s) {
  size_t n = strlen(s);
  strobe__buf_u16(b, tag);
  strobe__buf_u16(b, (uint16_t)n);
  strobe__buf_put(b, s, n);
}

static void field_u64(strobe__buf *b, uint16_t tag, uint64_t v) {
  strobe__buf_u16(b, tag);
  strobe__buf_u16(b, 8);
  strobe__buf_u64(b, v);
}

static void field_f64(strobe__buf *b, uint16_t tag, double v) {
  strobe__buf_u16(b, tag);
  strobe__buf_u16(b, 8);
  strobe__buf_f64(b, v);
}

static void field_u32(strobe__buf *b, uint16_t tag, uint32_t v) {
  strobe__buf_u16(b, tag);
  strobe__buf_u16(b, 4);
  strobe__buf_u32(b, v);
}

static void field_u8(strobe__buf *b, uint16_t tag, uint8_t v) {
  strobe__buf_u16(b, tag);
  strobe__buf_u16(b, 1);
  strobe__buf_put(b, &v, 1);
}

static void write_header(strobe__writer *w) {
  strobe__header_facts own;
  const strobe__header_facts *x = w->desc.facts;
  if (!x) {
    strobe_desc d = strobe_query_desc();
    own = (strobe__header_facts){*strobe__clock(), w->start_ticks ? w->start_ticks : strobe__now(), strobe__host_machine(),
                                 STROBE__ASSERTIONS, (uint64_t)strobe__host_pid(), d.ring_events, d.overflow, d.ring_events_max,
                                 strobe__unix_ns_at_mono(strobe__clock()->epoch_mono_ns), NULL, NULL};
    x = &own;
  }
  strobe__buf f = {0};
  field_str(&f, STROBE__TAG_KIND, w->desc.kind);
  field_str(&f, STROBE__TAG_CLOCK_SOURCE, x->clock.source);
  field_u8(&f, STROBE__TAG_CLOCK_INVARIANT, (uint8_t)x->clock.invariant);
  field_f64(&f, STROBE__TAG_NS_PER_TICK, x->clock.ns_per_tick);
  field_u64(&f, STROBE__TAG_EPOCH_TICKS, x->clock.epoch_ticks);
  field_u64(&f, STROBE__TAG_EPOCH_MONO_NS, x->clock.epoch_mono_ns);
  field_u64(&f, STROBE__TAG_START_TICKS, x->start_ticks);
  field_f64(&f, STROBE__TAG_OVERHEAD_NS, w->desc.overhead_per_scope_ns);
  field_str(&f, STROBE__TAG_STROBE_VERSION, STROBE_VERSION_STRING);
  field_str(&f, STROBE__TAG_OS, x->os ? x->os : strobe__host_os());
  field_str(&f, STROBE__TAG_ARCH, x->arch);
  field_str(&f, STROBE__TAG_FEATURES, strobe_profiling_available() ? "profiling zstd" : "zstd");
  field_u8(&f, STROBE__TAG_ASSERTIONS, (uint8_t)x->assertions);
  field_u64(&f, STROBE__TAG_PID, x->pid);
  field_u32(&f, STROBE__TAG_RING_EVENTS, x->ring_events);
  field_u32(&f, STROBE__TAG_FLUSH_MS, w->desc.flush_interval_ms);
  field_f64(&f, STROBE__TAG_EVENT_COST_NS, w->desc.event_cost_ns);
  field_u8(&f, STROBE__TAG_OVERFLOW, (uint8_t)x->overflow);
  field_u32(&f, STROBE__TAG_RING_EVENTS_MAX, x->ring_events_max);
  field_u32(&f, STROBE__TAG_TREE_MAX_NODES, STROBE_TREE_MAX_NODES);
  field_u32(&f, STROBE__TAG_TREE_MAX_SNAPSHOTS, STROBE_TREE_MAX_SNAPSHOTS);
  if (!w->desc.facts) { /* this process's host: captures of one boot share CLOCK_MONOTONIC */
    char hex[33];
    if (!strobe__host_boot_hex(hex)) field_str(&f, STROBE__TAG_BOOT_ID, hex);
  } else if (x->boot_id && x->boot_id[0]) {
    field_str(&f, STROBE__TAG_BOOT_ID, x->boot_id);
  }
  field_u32(&f, STROBE__TAG_ATTACH_MAX_BYTES, STROBE_ATTACH_MAX_BYTES);
  field_u32(&f, STROBE__TAG_DEEP_MAX_CALLS, STROBE_DEEP_MAX_CALLS);
  if (x->epoch_unix_ns) field_u64(&f, STROBE__TAG_EPOCH_UNIX_NS, x->epoch_unix_ns);
  if (w->journal_id) field_u64(&f, STROBE__TAG_JOURNAL_ID, w->journal_id);
  if (w->journal) field_str(&f, STROBE__TAG_JOURNAL, w->journal); /* read during create only */

  strobe__buf h = {0};
  strobe__buf_put(&h, STROBE__MAGIC, STROBE__MAGIC_LEN);
  strobe__buf_u32(&h, STROBE__FORMAT_VERSION);
  strobe__buf_u32(&h, (uint32_t)f.len);
  strobe__buf_put(&h, f.data, f.len);
  if (h.failed || f.failed)
    w->error = STROBE_ENOMEM;
  else
    emit(w, h.data, h.len);
  strobe__buf_free(&f);
  strobe__buf_free(&h);
}

static int writer_new(const strobe__writer_desc *desc, uint64_t start_ticks, uint64_t journal_id, const char *journal,
                      int header, strobe__writer **out);

int strobe__writer_create(const strobe__writer_desc *desc, strobe__writer **out) {
  return strobe__writer_create_at(desc, 0, out);
}

int strobe__writer_create_at(const strobe__writer_desc *desc, uint64_t start_ticks, strobe__writer **out) {
  return writer_new(desc, start_ticks, 0, NULL, 1, out);
}

int strobe__writer_create_journaled(const strobe__writer_desc *desc, uint64_t journal_id, const char *journal,
                                    strobe__writer **out) {
  return writer_new(desc, 0, journal_id, journal, 1, out);
}

int strobe__writer_create_appending(const strobe__writer_desc *desc, strobe__writer **out) {
  return writer_new(desc, 0, 0, NULL, 0, out);
}

static int writer_new(const strobe__writer_desc *desc, uint64_t start_ticks, uint64_t journal_id, const char *journal,
                      int header, strobe__writer **out) {
  *out = NULL;
  if (!desc || !desc->sink || !desc->kind) return STROBE_EINVAL;
  strobe__writer *w = calloc(1, sizeof *w);
  if (!w) return STROBE_ENOMEM;
  w->desc = *desc;
  w->start_ticks = start_ticks;
  w->journal_id = journal_id;
  w->journal = journal;
  w->cctx = ZSTD_createCCtx();
  if (!w->cctx) goto fail;
  if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, desc->compression_level)) ||
      (desc->compression_level == FAST_LEVEL &&
       (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_targetLength, FAST_TARGET_LENGTH)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_hashLog, FAST_HASH_LOG))))) {
    w->error = STROBE_EINVAL;
    goto fail;
  }
  if (header) write_header(w);
  if (w->error) goto fail;
  *out = w;
  return 0;
fail:;
  int rc = w->error ? w->error : STROBE_ENOMEM;
  strobe__writer_destroy(w);
  return rc;
}

void strobe__writer_destroy(strobe__writer *w) {
  if (!w) return;
  for (uint32_t i = 0; i < w->nthreads; i++) {
    strobe__buf_free(&w->threads[i].ops);
    strobe__buf_free(&w->threads[i].times);
    strobe__buf_free(&w->threads[i].opsb);
    strobe__buf_free(&w->threads[i].devb);
  }
  free(w->threads);
  free(w->res_ids);
  strobe__buf_free(&w->sites);
  strobe__buf_free(&w->labels);
  strobe__buf_free(&w->meta);
  strobe__buf_free(&w->funcs);
  for (uint32_t i = 0; i < w->nsamp; i++) strobe__buf_free(&w->samp[i].b);
  free(w->samp);
  strobe__buf_free(&w->raw);
  strobe__buf_free(&w->out);
  ZSTD_freeCCtx(w->cctx);
  free(w);
}

/* >>metadata */
static wthread *thread_slot(strobe__writer *w, uint32_t index) {
  if (index >= w->nthreads) {
    uint32_t n = w->nthreads ? w->nthreads : 16;
    while (n <= index) n *= 2;
    wthread *p = realloc(w->threads, n * sizeof *p);
    if (!p) {
      w->error = w->error ? w->error : STROBE_ENOMEM;
      return NULL;
    }
    memset(p + w->nthreads, 0, (n - w->nthreads) * sizeof *p);
    w->threads = p;
    w->nthreads = n;
  }
  return &w->threads[index];
}

void strobe__writer_site(strobe__writer *w, uint32_t id, const strobe_site *s) {
  strobe__buf_varint(&w->sites, id);
  strobe__buf_varint(&w->sites, s->kind);
  strobe__buf_varint(&w->sites, s->line);
  strobe__buf_str(&w->sites, s->name);
  strobe__buf_str(&w->sites, s->category);
  strobe__buf_str(&w->sites, s->file);
  strobe__buf_str(&w->sites, s->function);
  strobe__buf_str(&w->sites, s->parent);
  strobe__buf_varint(&w->sites, s->unit & STROBE__UNIT_MASK); /* since version 2; the bits above are the hot path's */
  strobe__buf_varint(&w->sites, s->flags);                    /* since version 3 */
}

void strobe__writer_label(strobe__writer *w, uint32_t id, const char *text) {
  strobe__buf_varint(&w->labels, id);
  strobe__buf_str(&w->labels, text);
}

void strobe__writer_thread(strobe__writer *w, uint32_t index, uint64_t os_tid, const char *name, uint64_t lost) {
  wthread *t = thread_slot(w, index);
  if (!t) return;
  if (!t->defined) {
    t->defined = 1;
    t->lost_base = t->lost_total = lost;
  }
  w->raw.len = 0;
  strobe__buf_varint(&w->raw, index);
  strobe__buf_varint(&w->raw, os_tid);
  strobe__buf_str(&w->raw, name);
  frame_into(w, &w->meta, STROBE__BLK_THREAD, w->raw.data, w->raw.len);
}

void strobe__writer_lost(strobe__writer *w, uint32_t index, uint64_t lost) {
  wthread *t = thread_slot(w, index);
  if (t && t->defined) t->lost_total = lost;
}

/* >>events */
static inline uint8_t *put_varint(uint8_t *p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  return p;
}

/* A thread's EVENTS ops are encoded after EVENTS_HEAD_ROOM bytes left free
 * for the block's header (four varints: thread, count, base_ticks, ops_len),
 * so that flush_thread copies only the times behind them, not the ops into
 * a scratch payload (docs/recording.md §What a capture says it cost). */
#define EVENTS_HEAD_ROOM 40
static inline void ops_start(wthread *t) {
  if (t->ops.len < EVENTS_HEAD_ROOM && !strobe__buf_reserve(&t->ops, EVENTS_HEAD_ROOM)) t->ops.len = EVENTS_HEAD_ROOM;
}

/* An OPS or DEVICE block of one thread: `thread count base_ticks entry*count`. */
static void flush_entries(strobe__writer *w, uint8_t type, uint32_t index, strobe__buf *entries, uint32_t *n,
                          uint64_t base, uint64_t last) {
  if (!*n) return;
  flush_meta(w);
  w->raw.len = 0;
  strobe__buf_varint(&w->raw, index);
  strobe__buf_varint(&w->raw, *n);
  strobe__buf_varint(&w->raw, base);
  strobe__buf_put(&w->raw, entries->data, entries->len);
  w->info = (strobe__block_info){type, index, *n, base, last};
  emit_block(w, type, &w->raw);
  entries->len = 0;
  *n = 0;
}

static void flush_thread(strobe__writer *w, uint32_t index, wthread *t) {
  if (t->count) {
    flush_meta(w);
    /* The payload is assembled in the ops buffer: the header right-aligned
     * in the room ops_start left, then times after the ops. */
    size_t ops_len = t->ops.len >= EVENTS_HEAD_ROOM ? t->ops.len - EVENTS_HEAD_ROOM : 0;
    uint8_t head[EVENTS_HEAD_ROOM], *h = head;
    h = put_varint(h, index);
    h = put_varint(h, t->count);
    h = put_varint(h, t->base_ticks);
    h = put_varint(h, ops_len);
    size_t head_len = (size_t)(h - head);
    strobe__buf_put(&t->ops, t->times.data, t->times.len);
    int failed = t->ops.failed || t->times.failed || t->ops.len < EVENTS_HEAD_ROOM;
    uint8_t *payload = failed ? head : t->ops.data + EVENTS_HEAD_ROOM - head_len;
    if (!failed) memcpy(payload, head, head_len);
    w->info = (strobe__block_info){STROBE__BLK_EVENTS, index, t->count, t->base_ticks, t->last_ticks};
    emit_payload(w, STROBE__BLK_EVENTS, payload, failed ? 0 : t->ops.len - (EVENTS_HEAD_ROOM - head_len), failed);
    t->ops.len = t->times.len = 0;
    t->count = 0;
  }
  flush_entries(w, STROBE__BLK_OPS, index, &t->opsb, &t->nops, t->ops_base, t->ops_last);
  flush_entries(w, STROBE__BLK_DEVICE, index, &t->devb, &t->ndev, t->dev_base, t->dev_last);
  uint64_t lost = t->lost_total - t->lost_base;
  if (lost > t->lost_written) {
    flush_meta(w);
    w->raw.len = 0;
    strobe__buf_varint(&w->raw, index);
    strobe__buf_varint(&w->raw, lost - t->lost_written);
    w->info = (strobe__block_info){STROBE__BLK_LOST, index, lost - t->lost_written, 0, 0};
    emit_block(w, STROBE__BLK_LOST, &w->raw);
    t->lost_written = lost;
  }
}

static void put_time(wthread *t, uint64_t ts) {
  if (t->count == 0) t->base_ticks = t->last_ticks = ts;
  strobe__buf_varint(&t->times, strobe__zigzag((int64_t)(ts - t->last_ticks)));
  t->last_ticks = ts;
  t->count++;
  t->events++;
}

/* Encodes one EVENTS entry: an event (its kind word, data and time) with
 * its payload slots, as its kind's operands say (STROBE__EVENT_KINDS in
 * strobe/strobe.h). */
static void encode(wthread *t, uint32_t word, uint32_t data, uint64_t ts, const uint64_t *slot) {
  uint32_t kind = word & 0xffu;
  ops_start(t);
  uint32_t operands = strobe__ev_operands(kind);
  switch (operands) {
    case STROBE__OPERANDS_BEGIN: strobe__buf_varint(&t->ops, (uint64_t)data << STROBE__OP_BITS | STROBE__OP_BEGIN); break;
    case STROBE__OPERANDS_END: strobe__buf_varint(&t->ops, STROBE__OP_END); break;
    case STROBE__OPERANDS_UNWOUND: strobe__buf_varint(&t->ops, (uint64_t)kind << STROBE__OP_BITS | STROBE__OP_OTHER); break;
    case STROBE__OPERANDS_SITE_VARINTS:
    case STROBE__OPERANDS_SITE_F64S:
    case STROBE__OPERANDS_LOST:
      strobe__buf_varint(&t->ops, (uint64_t)kind << STROBE__OP_BITS | STROBE__OP_OTHER);
      strobe__buf_varint(&t->ops, data);
      if (operands == STROBE__OPERANDS_LOST) strobe__buf_varint(&t->ops, word >> 8);
      for (uint32_t i = 0; i < strobe__ev_slots(kind); i++) {
        if (operands == STROBE__OPERANDS_SITE_F64S)
          strobe__buf_u64(&t->ops, slot[i]);
        else
          strobe__buf_varint(&t->ops, slot[i]);
      }
      break;
    case STROBE__OPERANDS_ELEMENT: /* its ts is the element id; its time is the previous event's */
      strobe__buf_varint(&t->ops, (uint64_t)kind << STROBE__OP_BITS | STROBE__OP_OTHER);
      strobe__buf_varint(&t->ops, data);
      strobe__buf_u64(&t->ops, ts);
      put_time(t, t->last_ticks);
      return;
    default: return; /* not an EVENTS entry: a payload whose event predates this writer */
  }
  put_time(t, ts);
}

/* One OPS or DEVICE entry (docs/capture-format.md): sub-kind, time delta, then a
 * length-prefixed body, so a reader skips sub-kinds it does not know. */
static void put_entry(wthread *t, strobe__buf *out, uint32_t *n, uint64_t *base, uint64_t *last,
                      const strobe__buf *body) {
  if (*n == 0) *base = *last = t->pend_ts;
  strobe__buf_varint(out, strobe__opev_sub(t->pend_site));
  strobe__buf_varint(out, strobe__zigzag((int64_t)(t->pend_ts - *last)));
  strobe__buf_varint(out, body->len);
  strobe__buf_put(out, body->data, body->len);
  *last = t->pend_ts;
  (*n)++;
}
static void put_op_entry(wthread *t, strobe__buf *body) {
  put_entry(t, &t->opsb, &t->nops, &t->ops_base, &t->ops_last, body);
}

/* Encodes a whole operation event (probe/probe.h >>operation events). An event
 * whose slots do not match its sub-kind cannot come from operation.c: it is
 * dropped. */
static void finish_op(strobe__writer *w, wthread *t) {
  const uint64_t *x = t->pend_payload;
  const uint32_t *d = t->pend_data;
  uint32_t n = t->pend_need, sub = strobe__opev_sub(t->pend_site);
  strobe__buf *b = &w->raw;
  b->len = 0;
  t->pend_need = 0;
  if ((sub == STROBE__OPEV_TAKE || sub == STROBE__OPEV_RESUME) && n == 1) {
    strobe__buf_varint(b, d[0]);
    strobe__buf_varint(b, x[0]);
  } else if ((sub == STROBE__OPEV_REMOTE_OUT && n == 3) || (sub == STROBE__OPEV_REMOTE_IN && n == 4)) {
    /* OUT: collector, seq, uid, peer, pid, process. IN: collector, seq, origin uid, origin process,
     * origin id, origin pid, then the gap (ticks) and this process. */
    strobe__buf_varint(b, d[0]);
    strobe__buf_varint(b, x[0]);
    strobe__buf_varint(b, x[1]);
    strobe__buf_varint(b, d[1]);
    strobe__buf_varint(b, x[2]);
    strobe__buf_varint(b, d[2]);
    if (sub == STROBE__OPEV_REMOTE_IN) {
      strobe__buf_varint(b, strobe__zigzag((int64_t)(t->pend_ts - x[3])));
      strobe__buf_varint(b, d[3]);
    }
  } else if (sub == STROBE__OPEV_BEGIN && n == 3) {
    strobe__buf_varint(b, d[0]);
    strobe__buf_varint(b, x[0]);
    strobe__buf_varint(b, d[2]);
    strobe__buf_varint(b, d[1]);
    strobe__buf_varint(b, x[1]);
  } else if (sub == STROBE__OPEV_END && n >= 4) {
    uint32_t ns = d[3] & 0xffffu, nc = d[3] >> 16;
    if (ns > STROBE__OPEV_STAGES_MAX || nc > STROBE__OPEV_COUNTERS_MAX || n != 4 + 3 * ns + nc) return;
    strobe__buf_varint(b, d[0]);
    strobe__buf_varint(b, x[0]);
    strobe__buf_varint(b, d[2] & 0xffffu); /* the flags; the population is written last */
    strobe__buf_varint(b, d[1]);
    strobe__buf_varint(b, x[1]);
    strobe__buf_varint(b, strobe__zigzag((int64_t)(t->pend_ts - x[2]))); /* duration */
    strobe__buf_varint(b, x[3] >> 32);                                  /* stages dropped */
    strobe__buf_varint(b, x[3] & 0xffffffffu);                          /* counters dropped */
    strobe__buf_varint(b, ns);
    for (uint32_t i = 0; i < ns; i++) {
      const uint64_t *s = x + 4 + 3 * i;
      const uint32_t *sd = d + 4 + 3 * i;
      strobe__buf_varint(b, sd[0]); /* site */
      strobe__buf_varint(b, sd[1]); /* count */
      strobe__buf_varint(b, s[0]);  /* total */
      strobe__buf_varint(b, s[1]);  /* min */
      strobe__buf_varint(b, s[2]);  /* max */
    }
    uint32_t population = d[2] >> 16;
    /* Run-time parents, after the units: their lists come first when there are stages, or a population. */
    int parents = ns != 0 || population != 0;
    strobe__buf_varint(b, nc);
    int kinds = 0, units = 0;
    for (uint32_t i = 0; i < nc; i++) {
      strobe__buf_varint(b, d[4 + 3 * ns + i] & 0xfffu); /* the name's label */
      strobe__buf_u64(b, x[4 + 3 * ns + i]);             /* the double's bits */
      kinds |= d[4 + 3 * ns + i] >> 16 != 0;
      units |= (d[4 + 3 * ns + i] >> 12 & 0xfu) != 0;
    }
    /* After everything a reader before them reads: counters by kind (their
     * kind labels), then their units, which need the kinds' list before them
     * (all 0 when none has a kind). */
    if (kinds || units || parents) {
      strobe__buf_varint(b, nc);
      for (uint32_t i = 0; i < nc; i++) strobe__buf_varint(b, d[4 + 3 * ns + i] >> 16);
    }
    if (units || parents) {
      strobe__buf_varint(b, nc);
      for (uint32_t i = 0; i < nc; i++) strobe__buf_varint(b, d[4 + 3 * ns + i] >> 12 & 0xfu);
    }
    if (parents) { /* each stage's run-time parent (docs/sessions.md §Stages nest at run time) */
      strobe__buf_varint(b, ns);
      for (uint32_t i = 0; i < ns; i++) {
        uint32_t p = d[4 + 3 * i + 2];
        strobe__buf_varint(b, (uint64_t)(p & ~STROBE__OPEV_STAGE_REMOTE) << 1 | (p >> 31));
      }
    }
    if (population) strobe__buf_varint(b, population); /* the operation's population, after every list */
  } else {
    return;
  }
  put_op_entry(t, b);
}

/* Encodes a whole GPU event (probe/probe.h >>gpu events) as one DEVICE
 * entry, framed like an OPS entry. Slots that do not match the sub-kind
 * cannot come from gpu.c: the event is dropped. */
static void finish_gpu(strobe__writer *w, wthread *t) {
  const uint64_t *x = t->pend_payload;
  const uint32_t *d = t->pend_data;
  uint32_t n = t->pend_need, sub = strobe__opev_sub(t->pend_site);
  strobe__buf *b = &w->raw;
  b->len = 0;
  t->pend_need = 0;
  if (sub == STROBE__GPUEV_PAIR && n == 3) {
    strobe__buf_varint(b, d[0]);  /* domain label */
    strobe__buf_u64(b, x[2]);     /* nominal ticks per second, a double's bits */
    strobe__buf_varint(b, x[0]);  /* device ticks */
    strobe__buf_varint(b, t->pend_ts >= x[1] ? t->pend_ts - x[1] : 0); /* pair width: after - before */
  } else if (sub == STROBE__GPUEV_SPAN && n == 4) {
    strobe__buf_varint(b, d[0]);  /* domain label */
    strobe__buf_varint(b, d[1]);  /* queue label */
    strobe__buf_varint(b, d[2]);  /* site */
    strobe__buf_varint(b, d[3]);  /* pass label */
    strobe__buf_varint(b, x[2]);  /* frame id */
    strobe__buf_varint(b, x[0]);  /* device begin */
    strobe__buf_varint(b, x[1] - x[0]); /* device duration */
  } else if (sub == STROBE__GPUEV_MARK && n == 1) {
    strobe__buf_varint(b, d[0]);  /* which */
    strobe__buf_varint(b, x[0]);  /* frame id */
  } else if (sub == STROBE__GPUEV_LANE_SPAN && n == 3) {
    strobe__buf_varint(b, d[0]);  /* domain label; 0: host ticks */
    strobe__buf_varint(b, d[1]);  /* lane label */
    strobe__buf_varint(b, d[2]);  /* site */
    strobe__buf_varint(b, x[0]);  /* begin */
    strobe__buf_varint(b, x[1] - x[0]); /* duration */
  } else {
    return;
  }
  put_entry(t, &t->devb, &t->ndev, &t->dev_base, &t->dev_last, b);
}

static void finish_pending(strobe__writer *w, wthread *t) {
  if (t->pend_kind == STROBE__EV_OP) {
    finish_op(w, t);
    return;
  }
  if (t->pend_kind == STROBE__EV_GPU) {
    finish_gpu(w, t);
    return;
  }
  t->pend_need = 0;
  encode(t, t->pend_kind, t->pend_site, t->pend_ts, t->pend_payload);
}

/* The common case: a run of BEGIN, END and numbers (a VALUE, COUNTER or
 * GAUGE with its payload slot) encoded in one tight loop with both buffers'
 * cursors in registers, into room reserved once: the same bytes encode()
 * and put_time() write (docs/recording.md, Cost). Returns how many ring
 * events of ev it took: it stops at any other kind, or at a number whose
 * slot is not in ev. */
#define SCOPE_RUN_MAX 1024u /* ring events per reservation: at most 15 ops bytes and 10 times bytes each */
__attribute__((noinline)) /* a function of its own in scripts/bench-drain-callgrind.sh's counts */
static size_t encode_scopes(wthread *t, const strobe__event *ev, size_t n) {
  _Static_assert(STROBE__SLOTS_VALUE == 1 && STROBE__SLOTS_COUNTER == 1 && STROBE__SLOTS_GAUGE == 1,
                 "a number is its event and one slot");
  _Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "a number's bits are copied as they lie");
  _Static_assert(STROBE__EV_END == STROBE__EV_BEGIN + 1 && STROBE__OP_END < 0x80, "BEGIN and END: one range check");
  if (n > SCOPE_RUN_MAX) n = SCOPE_RUN_MAX;
  ops_start(t);
  if ((t->ops.cap - t->ops.len < 15 * n && strobe__buf_grow(&t->ops, 15 * n)) ||
      (t->times.cap - t->times.len < 10 * n && strobe__buf_grow(&t->times, 10 * n)))
    return 0;
  uint8_t *op = t->ops.data + t->ops.len, *tp = t->times.data + t->times.len;
  if (t->count == 0) t->base_ticks = t->last_ticks = ev[0].ts;
  /* Everything the loop keeps is in locals: its byte stores may alias any
   * memory, so fields of t would be reloaded and stored at every event. */
  uint64_t last = t->last_ticks;
  const strobe__event *e = ev, *stop = ev + n;
  uint32_t slots = 0; /* numbers' payload slots taken: every other ring event is an EVENTS entry */
  for (; e < stop; e++) {
    uint32_t kind = e->kind;
    uint64_t ts = e->ts;
    /* BEGIN and END share one path, and one byte for a BEGIN of a site below 32. */
    uint64_t op_word = kind == STROBE__EV_BEGIN ? (uint64_t)e->data << STROBE__OP_BITS | STROBE__OP_BEGIN : STROBE__OP_END;
    if (kind - STROBE__EV_BEGIN <= STROBE__EV_END - STROBE__EV_BEGIN) {
      if (op_word < 0x80)
        *op++ = (uint8_t)op_word;
      else
        op = put_varint(op, op_word);
    } else if ((kind == STROBE__EV_VALUE || kind == STROBE__EV_COUNTER || kind == STROBE__EV_GAUGE) && e + 1 < stop &&
               e[1].kind == STROBE__EV_PAYLOAD) {
      uint64_t bits = e[1].ts; /* the f64, little-endian (SITE_F64S) */
      op = put_varint(op, (uint64_t)kind << STROBE__OP_BITS | STROBE__OP_OTHER);
      op = put_varint(op, e->data);
      memcpy(op, &bits, 8); /* little-endian: the same bytes as the shifts in strobe__buf_u64 */
      op += 8;
      e++; /* its slot */
      slots++;
    } else {
      break;
    }
    uint64_t z = strobe__zigzag((int64_t)(ts - last));
    last = ts;
    if (z < 0x80)
      *tp++ = (uint8_t)z;
    else
      tp = put_varint(tp, z);
  }
  uint32_t encoded = (uint32_t)(e - ev) - slots;
  t->ops.len = (size_t)(op - t->ops.data);
  t->times.len = (size_t)(tp - t->times.data);
  t->last_ticks = last;
  t->count += encoded;
  t->events += encoded;
  return (size_t)(e - ev);
}

/* >>ring runs */
/* A varint whose value is usually below 0x80 (a time delta, a small site
 * id's BEGIN): one predictable branch for the usual byte, a second for two. */
static inline uint8_t *put_varint_small(uint8_t *p, uint64_t v) {
  if (__builtin_expect(v < 0x80, 1)) {
    *p = (uint8_t)v;
    return p + 1;
  }
  if (v < 0x4000) {
    p[0] = (uint8_t)(v | 0x80);
    p[1] = (uint8_t)(v >> 7);
    return p + 2;
  }
  return put_varint(p, v);
}

/* Whether a ring event is a number of a cached VALUE site. */
static inline int ring_is_value(const strobe__site_info *cache, const strobe__event *e) {
  uint64_t word;
  memcpy(&word, &e->kind, sizeof word);
  const strobe__site_info *si = &cache[strobe__site_slot(word)];
  return (word & 7u) == 0 && si->site == (const strobe_site *)(uintptr_t)word && si->ev == STROBE__EV_VALUE;
}

/* encode_scopes for events in their ring form (collect.h >>ring runs): it
 * completes them as the drain's convert_run would (the site cache, the
 * open-scope stack, a VALUE's time) while it encodes them, and stops at
 * anything else, leaving it to the drain: a site not cached, an element, a
 * number whose site could not be registered or whose slot is not in the
 * run, any other kind. Takes at most SCOPE_RUN_MAX events, and a number's
 * slot past them. Returns how many it took. */
__attribute__((noinline)) /* a function of its own in scripts/bench-drain-callgrind.sh's counts */
static size_t encode_ring(wthread *t, strobe__ring_run *r, const strobe__event *ev, size_t n) {
  _Static_assert(STROBE__EV_VALUE + 2 == STROBE__EV_GAUGE && STROBE__EV_COUNTER == STROBE__EV_VALUE + 1,
                 "the numbers: one range check");
  _Static_assert((STROBE__EV_GAUGE << STROBE__OP_BITS | STROBE__OP_OTHER) < 0x80, "a number's op is one byte");
  _Static_assert(STROBE__OP_END < 0x80, "END is one byte");
  size_t lim = n > SCOPE_RUN_MAX ? SCOPE_RUN_MAX : n;
  ops_start(t);
  if ((t->ops.cap - t->ops.len < 15 * (lim + 1) && strobe__buf_grow(&t->ops, 15 * (lim + 1))) ||
      (t->times.cap - t->times.len < 10 * (lim + 1) && strobe__buf_grow(&t->times, 10 * (lim + 1))))
    return 0;
  uint8_t *op = t->ops.data + t->ops.len, *tp = t->times.data + t->times.len;
  /* Locals, as in encode_scopes: the byte stores may alias anything. */
  const strobe__site_info *cache = r->cache;
  uint32_t *open_site = r->open_site;
  uint32_t open = r->open;
  uint64_t last = t->last_ticks;
  const strobe__event *e = ev, *stop = ev + lim, *end = ev + n;
  /* A VALUE's time is the time of the event before it (the drain's last_ts),
   * which is the last one encoded once the loop encoded one: the loop keeps
   * that one. A block's base is its first event's time. */
  if (t->count == 0)
    t->base_ticks = last = ring_is_value(cache, ev) ? r->last_ts : ev->ts;
  else if (last != r->last_ts && ring_is_value(cache, ev))
    return 0; /* a VALUE after an event that is not in EVENTS (an operation...): the drain converts it */
  size_t slots = 0;
  for (; e < stop; e++) {
    uint64_t word, ts = e->ts;
    memcpy(&word, &e->kind, sizeof word); /* kind and data: an inline BEGIN's or number's site pointer */
    if ((word & 7u) == 0) {               /* no in-ring kind is a multiple of 8 (strobe.h) */
      const strobe__site_info *si = &cache[strobe__site_slot(word)];
      if (__builtin_expect(si->site != (const strobe_site *)(uintptr_t)word, 0)) break;
      uint32_t id = si->id, kind = si->ev;
      if (kind == STROBE__EV_BEGIN) {
        if (open < STROBE_MAX_DEPTH) open_site[open] = id;
        open++;
        op = put_varint_small(op, (uint64_t)id << STROBE__OP_BITS | STROBE__OP_BEGIN);
      } else if (kind - STROBE__EV_VALUE <= STROBE__EV_GAUGE - STROBE__EV_VALUE && e + 1 < end) {
        /* A number and its slot: the slot's ts holds the bits, its data an
         * interned site's number code (strobe__number_coded). */
        if (kind == STROBE__EV_VALUE) ts = last;
        uint64_t bits = strobe__number_bits(e[1].ts, si->num == STROBE__NUM_IN_SLOT ? e[1].data : si->num);
        *op++ = (uint8_t)(kind << STROBE__OP_BITS | STROBE__OP_OTHER);
        op = put_varint_small(op, id);
        memcpy(op, &bits, 8); /* little-endian f64 (SITE_F64S) */
        op += 8;
        e++;
        slots++;
      } else {
        break;
      }
    } else if ((uint32_t)word == STROBE__EV_END) {
      if (open) open--;
      *op++ = STROBE__OP_END;
    } else {
      break;
    }
    uint64_t z = strobe__zigzag((int64_t)(ts - last));
    last = ts;
    tp = put_varint_small(tp, z);
  }
  size_t taken = (size_t)(e - ev);
  uint32_t encoded = (uint32_t)(taken - slots);
  t->ops.len = (size_t)(op - t->ops.data);
  t->times.len = (size_t)(tp - t->times.data);
  if (encoded) t->last_ticks = r->last_ts = last;
  t->count += encoded;
  t->events += encoded;
  r->open = open;
  return taken;
}

size_t strobe__writer_ring_events(strobe__writer *w, uint32_t index, strobe__ring_run *r) {
  wthread *t = thread_slot(w, index);
  if (!t || t->pend_need) return 0; /* the drain converts them and calls strobe__writer_events */
  size_t taken = 0;
  while (taken < r->n) {
    size_t want = r->n - taken > SCOPE_RUN_MAX ? SCOPE_RUN_MAX : r->n - taken;
    size_t k = encode_ring(t, r, r->ev + taken, r->n - taken);
    taken += k;
    if (t->ops.len + t->times.len + t->opsb.len + t->devb.len >= BLOCK_FLUSH_BYTES) flush_thread(w, index, t);
    if (k < want) break; /* it stopped at an event the drain converts */
  }
  return taken;
}

void strobe__writer_events(strobe__writer *w, uint32_t index, const strobe__event *ev, size_t n) {
  wthread *t = thread_slot(w, index);
  if (!t) return;
  _Static_assert(STROBE__OP_END < 0x80, "END is one byte");
  for (size_t i = 0; i < n;) {
    if (!t->pend_need) {
      size_t k = encode_scopes(t, ev + i, n - i);
      if (k) {
        i += k;
        if (t->ops.len + t->times.len + t->opsb.len + t->devb.len >= BLOCK_FLUSH_BYTES) flush_thread(w, index, t);
        continue;
      }
    }
    const strobe__event *e = &ev[i++];
    uint32_t kind = e->kind & 0xffu;
    if (t->pend_need) {
      if (kind != STROBE__EV_PAYLOAD) { /* cannot happen with a well-behaved producer: drop the half event */
        t->pend_need = 0;
      } else {
        t->pend_data[t->pend_have] = e->data;
        t->pend_payload[t->pend_have++] = e->ts;
        if (t->pend_have == t->pend_need) finish_pending(w, t);
        continue;
      }
    }
    uint32_t slots = strobe__payload_slots(kind, e->data);
    if (slots || kind == STROBE__EV_OP || kind == STROBE__EV_GPU) { /* encoded once its payload slots are in */
      t->pend_kind = kind;
      t->pend_site = e->data;
      t->pend_ts = e->ts;
      t->pend_have = 0;
      t->pend_need = slots;
      if ((kind == STROBE__EV_OP && slots > STROBE__OPEV_MAX_SLOTS) || (kind == STROBE__EV_GPU && slots > STROBE__GPUEV_MAX_SLOTS))
        t->pend_need = 0; /* cannot come from operation.c or gpu.c */
      else if (slots == 0) finish_pending(w, t);
    } else {
      encode(t, e->kind, e->data, e->ts, NULL);
    }
    if (t->ops.len + t->times.len + t->opsb.len + t->devb.len >= BLOCK_FLUSH_BYTES) flush_thread(w, index, t);
  }
  if (t->ops.failed || t->times.failed || t->opsb.failed || t->devb.failed) w->error = w->error ? w->error : STROBE_ENOMEM;
}

void strobe__writer_thread_end(strobe__writer *w, uint32_t index) {
  wthread *t = thread_slot(w, index);
  if (t) t->ended = 1;
}

void strobe__writer_drain(strobe__writer *w, uint64_t cpu_ns, uint64_t events) {
  w->raw.len = 0;
  strobe__buf_varint(&w->raw, cpu_ns);
  strobe__buf_varint(&w->raw, events);
  frame_into(w, &w->meta, STROBE__BLK_DRAIN, w->raw.data, w->raw.len);
}

/* >>trees, >>content: snapshots and deep captures are bounded per capture the same way: past the
 * bound a block is refused and counted; a block written counts toward it. */
static int bound_refuses(uint32_t written, uint32_t limit, uint64_t *dropped) {
  if (written < limit) return 0;
  (*dropped)++;
  return 1;
}

/* Emits w->raw as one block of `type`, counted in *written; its raw bytes, or 0 on error. */
static uint64_t emit_counted(strobe__writer *w, uint8_t type, uint32_t *written) {
  uint64_t raw = w->raw.len;
  emit_block(w, type, &w->raw);
  if (w->error) return 0;
  (*written)++;
  return raw;
}

/* >>trees */
static void buf_f32(strobe__buf *b, float v) {
  uint32_t u;
  memcpy(&u, &v, sizeof u);
  strobe__buf_u32(b, u);
}

uint64_t strobe__writer_tree(strobe__writer *w, const strobe__tree *t) {
  if (w->error || bound_refuses(w->trees, w->tree_limit ? w->tree_limit : STROBE_TREE_MAX_SNAPSHOTS, &w->trees_dropped))
    return 0;
  flush_meta(w); /* the element types' sites */
  strobe__buf *b = &w->raw;
  b->len = 0;
  strobe__buf_varint(b, t->seq);
  strobe__buf_varint(b, t->ticks);
  strobe__buf_varint(b, t->nnodes);
  strobe__buf_varint(b, t->nodes_dropped);
  strobe__buf_varint(b, t->props_dropped);
  strobe__buf_varint(b, t->nkeys);
  for (uint32_t i = 0; i < t->nkeys; i++) strobe__buf_str(b, t->keys[i]);
  for (uint32_t i = 0; i < t->nnodes; i++) {
    const strobe__tree_node *n = &t->nodes[i];
    strobe__buf_varint(b, n->depth);
    strobe__buf_varint(b, n->type);
    strobe__buf_u64(b, n->id);
    for (int k = 0; k < 4; k++) buf_f32(b, n->bounds[k]);
    strobe__buf_varint(b, n->nprops);
    for (uint32_t k = 0; k < n->nprops; k++) {
      const strobe__tree_prop *p = &t->props[n->prop0 + k];
      uint64_t bits;
      memcpy(&bits, &p->value, sizeof bits);
      strobe__buf_varint(b, p->key);
      strobe__buf_u64(b, bits);
    }
  }
  w->info = (strobe__block_info){STROBE__BLK_TREE, UINT32_MAX, t->nnodes, t->ticks, t->ticks};
  return emit_counted(w, STROBE__BLK_TREE, &w->trees);
}

void strobe__writer_tree_limit(strobe__writer *w, uint32_t limit) { w->tree_limit = limit; }

/* >>content */
static uint32_t res_slot(uint64_t id, uint32_t cap) { return (uint32_t)((id * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1); }

/* 1 when the content of resource `id` is stored in this capture. */
static int resource_stored(const strobe__writer *w, uint64_t id) {
  if (!w->res_cap) return 0;
  for (uint32_t i = res_slot(id, w->res_cap);; i = (i + 1) & (w->res_cap - 1)) {
    if (w->res_ids[i] == id) return 1;
    if (w->res_ids[i] == 0) return 0;
  }
}

/* Records that resource `id` is stored: 0 or STROBE_ENOMEM. */
static int resource_add(strobe__writer *w, uint64_t id) {
  if ((w->res_n + 1) * 2 > w->res_cap) { /* at most half full: rehash into twice the slots */
    uint32_t cap = w->res_cap ? w->res_cap * 2 : 256;
    uint64_t *ids = calloc(cap, sizeof *ids);
    if (!ids) return STROBE_ENOMEM;
    for (uint32_t k = 0; k < w->res_cap; k++) {
      uint64_t v = w->res_ids[k];
      if (!v) continue;
      uint32_t i = res_slot(v, cap);
      while (ids[i]) i = (i + 1) & (cap - 1);
      ids[i] = v;
    }
    free(w->res_ids);
    w->res_ids = ids;
    w->res_cap = cap;
  }
  uint32_t i = res_slot(id, w->res_cap);
  while (w->res_ids[i]) i = (i + 1) & (w->res_cap - 1);
  w->res_ids[i] = id;
  w->res_n++;
  return 0;
}

static uint64_t writer_attach(strobe__writer *w, const strobe__content *c) {
  uint32_t state = STROBE_CAPTURE_ATTACH_STORED;
  if (resource_stored(w, c->resource))
    state = STROBE_CAPTURE_ATTACH_EARLIER;
  else if (!c->bytes || w->attach_bytes + c->size > (w->attach_limit ? w->attach_limit : STROBE_ATTACH_CAPTURE_BYTES))
    state = STROBE_CAPTURE_ATTACH_CUT; /* not stored: a later, smaller attachment of the id may still fit; no bytes:
                                        * a merged input's attachment its own bound had cut */
  if (state == STROBE_CAPTURE_ATTACH_STORED) {
    int r = resource_add(w, c->resource);
    if (r) {
      w->error = w->error ? w->error : r;
      return 0;
    }
  }
  strobe__buf *b = &w->raw;
  b->len = 0;
  strobe__buf_varint(b, c->frame);
  strobe__buf_varint(b, c->resource);
  strobe__buf_varint(b, c->ticks);
  strobe__buf_str(b, c->media_type);
  strobe__buf_varint(b, c->width);
  strobe__buf_varint(b, c->height);
  strobe__buf_varint(b, state);
  strobe__buf_varint(b, c->size);
  if (state == STROBE_CAPTURE_ATTACH_STORED) strobe__buf_put(b, c->bytes, c->size);
  uint64_t raw = b->len;
  emit_block(w, STROBE__BLK_ATTACH, b);
  if (w->error) return 0;
  if (state == STROBE_CAPTURE_ATTACH_STORED) {
    w->attach_stored++;
    w->attach_bytes += c->size;
  } else if (state == STROBE_CAPTURE_ATTACH_EARLIER) {
    w->attach_refs++;
  } else {
    w->attach_cut++;
    w->attach_cut_bytes += c->size;
  }
  return raw;
}

static uint64_t writer_deep(strobe__writer *w, const strobe__content *c) {
  if (bound_refuses(w->deeps, w->deep_limit ? w->deep_limit : STROBE_DEEP_MAX_FRAMES, &w->deeps_dropped)) return 0;
  strobe__buf *b = &w->raw;
  b->len = 0;
  strobe__buf_varint(b, c->seq);
  strobe__buf_varint(b, c->frame);
  strobe__buf_varint(b, c->ticks);
  strobe__buf_varint(b, c->ncalls);
  strobe__buf_varint(b, c->calls_dropped);
  strobe__buf_varint(b, c->nlabels);
  for (uint32_t i = 0; i < c->nlabels; i++) strobe__buf_str(b, c->labels[i]);
  for (uint32_t i = 0; i < c->ncalls; i++) {
    const strobe__draw *d = &c->calls[i];
    strobe__buf_varint(b, d->kind);
    strobe__buf_varint(b, d->pipeline);
    strobe__buf_varint(b, d->pass);
    strobe__buf_varint(b, d->vertex_first);
    strobe__buf_varint(b, d->vertex_count);
    strobe__buf_varint(b, d->instance_first);
    strobe__buf_varint(b, d->instance_count);
    strobe__buf_varint(b, d->has_geometry);
    if (d->has_geometry)
      for (int k = 0; k < 4; k++) {
        buf_f32(b, d->bounds[k]);
        buf_f32(b, d->clip[k]);
      }
    strobe__buf_varint(b, d->nrefs);
    for (uint32_t k = 0; k < d->nrefs; k++) {
      strobe__buf_varint(b, c->refs[d->ref0 + k].role);
      strobe__buf_u64(b, c->refs[d->ref0 + k].resource);
    }
  }
  return emit_counted(w, STROBE__BLK_DEEP, &w->deeps);
}

uint64_t strobe__writer_content(strobe__writer *w, const strobe__content *c) {
  if (w->error) return 0;
  flush_meta(w);
  return c->type == STROBE__CONTENT_ATTACH ? writer_attach(w, c) : writer_deep(w, c);
}

void strobe__writer_attach_limit(strobe__writer *w, uint64_t bytes) { w->attach_limit = bytes; }

void strobe__writer_content_limits(strobe__writer *w, uint32_t trees, uint32_t deeps) {
  w->tree_limit = trees;
  w->deep_limit = deeps;
}

void strobe__writer_carry_dropped(strobe__writer *w, uint64_t trees, uint64_t deeps) {
  w->trees_dropped += trees;
  w->deeps_dropped += deeps;
}

void strobe__writer_calls(strobe__writer *w, strobe_trace_stats s) {
  /* `excluded` counts every call a name rule left out: exclude, notrace
   * subtrees, calls outside the filter roots, functions the match did not select. */
  const uint64_t v[] = {s.cut_depth, s.cut_stack, s.cut_functions, s.excluded + s.notraced + s.filtered, s.functions,
                        s.unresolved, s.cut_short, s.cut_order};
  uint64_t any = 0;
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) any |= v[i];
  if (!any) return; /* no call tracing: captures stay as they were */
  /* The two min_ns counts only when one is not 0: other captures keep the 6 fields older readers take. */
  size_t n = s.cut_short || s.cut_order ? 8 : 6;
  w->raw.len = 0;
  for (size_t i = 0; i < n; i++) strobe__buf_varint(&w->raw, v[i]);
  frame_into(w, &w->meta, STROBE__BLK_CALLS, w->raw.data, w->raw.len);
}

/* >>samples */
static void flush_samples(strobe__writer *w, wsamples *q) {
  if (!q->n) return;
  flush_meta(w); /* the functions its frames name */
  w->raw.len = 0;
  strobe__buf_varint(&w->raw, q->tid);
  strobe__buf_varint(&w->raw, q->n);
  strobe__buf_varint(&w->raw, q->base);
  strobe__buf_put(&w->raw, q->b.data, q->b.len);
  if (q->b.failed) w->raw.failed = 1;
  w->info = (strobe__block_info){STROBE__BLK_SAMPLES, UINT32_MAX, q->n, q->base, q->last}; /* by OS thread: no index */
  emit_block(w, STROBE__BLK_SAMPLES, &w->raw);
  q->b.len = 0;
  q->b.failed = 0;
  q->n = 0;
}

static wsamples *samples_of(strobe__writer *w, uint64_t tid) {
  for (uint32_t i = 0; i < w->nsamp; i++)
    if (w->samp[i].tid == tid) return &w->samp[i];
  if (w->nsamp == w->cap_samp) {
    uint32_t cap = w->cap_samp ? w->cap_samp * 2 : 16;
    wsamples *p = realloc(w->samp, cap * sizeof *p);
    if (!p) return NULL;
    w->samp = p;
    w->cap_samp = cap;
  }
  wsamples *q = &w->samp[w->nsamp++];
  memset(q, 0, sizeof *q);
  q->tid = tid;
  return q;
}

static void put_function(strobe__writer *w, uint32_t id, const char *name, const char *module, int resolved) {
  strobe__buf_varint(&w->funcs, id);
  strobe__buf_str(&w->funcs, name);
  strobe__buf_str(&w->funcs, module);
  strobe__buf_varint(&w->funcs, resolved == 1);
  w->funcs_written = id;
}

/* Defines the sampled functions up to id `top` this writer has not defined
 * yet (ids come in order), into the next SAMPLE_FUNCS block. */
static void define_functions(strobe__writer *w, uint32_t top) {
  for (uint32_t id = w->funcs_written + 1; id <= top; id++) {
    const char *name = "", *module = "";
    int resolved = strobe__sample_function(id, &name, &module);
    put_function(w, id, name, module, resolved);
  }
}

void strobe__writer_sample_function(strobe__writer *w, uint32_t id, const char *name, const char *module,
                                    int resolved) {
  if (id == w->funcs_written + 1) put_function(w, id, name, module, resolved);
}

void strobe__writer_sample_functions(strobe__writer *w) { define_functions(w, strobe__sample_function_count() - 1); }

void strobe__writer_samples(strobe__writer *w, const strobe__cpu_sample *s, size_t n, const uint32_t *frames) {
  if (w->error) return;
  w->sampled = 1;
  uint32_t top = 0;
  for (size_t i = 0; i < n; i++)
    for (uint32_t k = 0; k < s[i].nframes; k++)
      if (frames[s[i].frame0 + k] > top) top = frames[s[i].frame0 + k];
  define_functions(w, top);
  wsamples *q = NULL;
  strobe__buf body = {0};
  for (size_t i = 0; i < n; i++) {
    if (!q || q->tid != s[i].tid) q = samples_of(w, s[i].tid);
    if (!q) {
      w->error = STROBE_ENOMEM;
      break;
    }
    if (!q->n) q->base = q->last = s[i].ticks;
    body.len = 0;
    if (s[i].kind == STROBE__SAMPLE_CPU) {
      strobe__buf_varint(&body, s[i].flags & STROBE__SAMPLE_CUT);
      strobe__buf_varint(&body, s[i].nframes);
      for (uint32_t k = 0; k < s[i].nframes; k++) strobe__buf_varint(&body, frames[s[i].frame0 + k]);
    } else if (s[i].kind == STROBE__SAMPLE_SWITCH_OUT) {
      strobe__buf_varint(&body, s[i].flags & STROBE__SAMPLE_PREEMPTED);
    }
    strobe__buf_varint(&q->b, s[i].kind);
    strobe__buf_varint(&q->b, strobe__zigzag((int64_t)(s[i].ticks - q->last)));
    strobe__buf_varint(&q->b, body.len);
    strobe__buf_put(&q->b, body.data, body.len);
    if (body.failed) q->b.failed = 1;
    q->last = s[i].ticks;
    q->n++;
    if (q->b.len >= BLOCK_FLUSH_BYTES) flush_samples(w, q);
  }
  strobe__buf_free(&body);
}

void strobe__writer_sampler(strobe__writer *w, const strobe_sampler_status *st, strobe_sampler_stats s) {
  if (!w->sampled && !st->running) return; /* no sampler: captures stay as they were */
  w->sampled = 1;
  const uint64_t v[] = {st->running ? st->rate_hz : 0, (uint64_t)(st->running && st->switches), s.samples, s.switches,
                        s.lost, s.frames_cut, s.addresses_cut, s.functions, s.unresolved};
  w->raw.len = 0;
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) strobe__buf_varint(&w->raw, v[i]);
  frame_into(w, &w->meta, STROBE__BLK_SAMPLER, w->raw.data, w->raw.len);
}

void strobe__writer_clock(strobe__writer *w, uint64_t ticks, uint64_t mono_ns) {
  w->raw.len = 0;
  strobe__buf_varint(&w->raw, ticks);
  strobe__buf_varint(&w->raw, mono_ns);
  frame_into(w, &w->meta, STROBE__BLK_CLOCK, w->raw.data, w->raw.len);
}

int strobe__writer_flush(strobe__writer *w) {
  flush_meta(w);
  for (uint32_t i = 0; i < w->nsamp; i++) flush_samples(w, &w->samp[i]);
  for (uint32_t i = 0; i < w->nthreads; i++) {
    wthread *t = &w->threads[i];
    if (!t->defined) continue;
    flush_thread(w, i, t);
    if (t->ended == 1) {
      w->raw.len = 0;
      strobe__buf_varint(&w->raw, i);
      w->info = (strobe__block_info){STROBE__BLK_THREAD_END, i, 0, 0, 0};
      emit_block(w, STROBE__BLK_THREAD_END, &w->raw);
      t->ended = 2; /* written */
      strobe__buf_free(&t->ops);
      strobe__buf_free(&t->times);
      strobe__buf_free(&t->opsb);
      strobe__buf_free(&t->devb);
    }
  }
  return w->error;
}

void strobe__writer_clock_offsets(strobe__writer *w, const strobe_capture_clock_offset *o, size_t n,
                                  uint64_t replaced) {
  if (!n && !replaced) return;
  strobe__buf b = {0};
  strobe__buf_varint(&b, replaced);
  for (size_t i = 0; i < n; i++) {
    const strobe_clock_offset *s = &o[i].sample;
    strobe__buf_str(&b, o[i].local_boot_id);
    strobe__buf_str(&b, s->peer_boot_id);
    strobe__buf_str(&b, s->peer);
    strobe__buf_varint(&b, s->at_mono_ns);
    strobe__buf_varint(&b, strobe__zigzag(s->offset_ns));
    strobe__buf_varint(&b, s->error_ns);
    strobe__buf_varint(&b, s->rtt_ns);
    strobe__buf_varint(&b, s->rounds);
  }
  emit_block(w, STROBE__BLK_CLOCK_OFFSETS, &b);
  strobe__buf_free(&b);
}

void strobe__writer_merge(strobe__writer *w, const strobe_capture_merge *m) {
  strobe__buf b = {0};
  strobe__buf_varint(&b, m->ninputs);
  for (uint32_t i = 0; i < m->ninputs; i++) {
    const strobe_capture_merge_input *in = &m->inputs[i];
    strobe__buf_str(&b, in->process);
    strobe__buf_str(&b, in->boot_id);
    strobe__buf_varint(&b, in->pid);
    strobe__buf_varint(&b, in->alignment);
    strobe__buf_varint(&b, in->hops);
    strobe__buf_varint(&b, strobe__zigzag(in->shift_ns));
    strobe__buf_varint(&b, in->error_ns);
  }
  uint32_t kinds = 0;
  for (uint32_t t = 0; t < STROBE_CAPTURE_REC_TYPES; t++) kinds += m->not_merged[t] != 0;
  strobe__buf_varint(&b, kinds);
  for (uint32_t t = 0; t < STROBE_CAPTURE_REC_TYPES; t++)
    if (m->not_merged[t]) {
      strobe__buf_varint(&b, t);
      strobe__buf_varint(&b, m->not_merged[t]);
    }
  emit_block(w, STROBE__BLK_MERGE, &b);
  strobe__buf_free(&b);
}

void strobe__writer_origin(strobe__writer *w, uint32_t origin) {
  w->raw.len = 0;
  strobe__buf_varint(&w->raw, origin);
  emit_block(w, STROBE__BLK_ORIGIN, &w->raw);
}

/* This process's clock-offset samples (strobe.h >>hosts), taken on this host's boot. */
static void own_clock_offsets(strobe__writer *w) {
  strobe_clock_offset s[STROBE_CLOCK_OFFSETS_MAX];
  strobe_capture_clock_offset o[STROBE_CLOCK_OFFSETS_MAX];
  uint64_t replaced = 0;
  uint32_t n = strobe__clock_offsets_copy(s, &replaced);
  char boot[33];
  if (strobe__host_boot_hex(boot)) return; /* no boot of our own: a sample would name no host */
  for (uint32_t i = 0; i < n; i++) {
    memcpy(o[i].local_boot_id, boot, sizeof boot);
    o[i].sample = s[i];
  }
  strobe__writer_clock_offsets(w, o, n, replaced);
}

int strobe__writer_finish(strobe__writer *w, uint64_t end_ticks, const strobe_misuse *m) {
  strobe__writer_flush(w);
  w->raw.len = 0;
  strobe__buf_varint(&w->raw, end_ticks);
  uint32_t defined = 0;
  for (uint32_t i = 0; i < w->nthreads; i++) defined += (uint32_t)w->threads[i].defined;
  strobe__buf_varint(&w->raw, defined);
  for (uint32_t i = 0; i < w->nthreads; i++) {
    wthread *t = &w->threads[i];
    if (!t->defined) continue;
    strobe__buf_varint(&w->raw, i);
    strobe__buf_varint(&w->raw, t->events);
    strobe__buf_varint(&w->raw, t->lost_total - t->lost_base);
  }
#define MISUSE(name) strobe__buf_varint(&w->raw, m->name);
  STROBE_MISUSE_MAP(MISUSE)
#undef MISUSE
  if (w->trees || w->trees_dropped) { /* before the footer, which ends the file */
    strobe__buf totals = {0};
    strobe__buf_varint(&totals, w->trees);
    strobe__buf_varint(&totals, w->trees_dropped);
    emit_block(w, STROBE__BLK_TREE_TOTALS, &totals);
    strobe__buf_free(&totals);
  }
  if (w->attach_stored || w->attach_refs || w->attach_cut || w->deeps || w->deeps_dropped) {
    strobe__buf totals = {0};
    strobe__buf_varint(&totals, w->attach_limit ? w->attach_limit : STROBE_ATTACH_CAPTURE_BYTES);
    strobe__buf_varint(&totals, w->attach_stored);
    strobe__buf_varint(&totals, w->attach_bytes);
    strobe__buf_varint(&totals, w->attach_refs);
    strobe__buf_varint(&totals, w->attach_cut);
    strobe__buf_varint(&totals, w->attach_cut_bytes);
    strobe__buf_varint(&totals, w->deeps);
    strobe__buf_varint(&totals, w->deeps_dropped);
    emit_block(w, STROBE__BLK_CONTENT_TOTALS, &totals);
    strobe__buf_free(&totals);
  }
  if (!w->desc.facts) own_clock_offsets(w); /* a tool writing other hosts' facts carries their samples itself */
  emit_block(w, STROBE__BLK_FOOTER, &w->raw);
  return w->error;
}

void strobe__writer_block(strobe__writer *w, const strobe__block_info *info, const void *data, size_t len) {
  if (info->type == STROBE__BLK_TREE) w->trees++; /* a flight-recorder dump's retained snapshot */
  if (info->type == STROBE__BLK_SAMPLES) w->sampled = 1; /* its SAMPLER block follows at the end */
  wthread *t = info->type == STROBE__BLK_EVENTS || info->type == STROBE__BLK_LOST ? thread_slot(w, info->thread) : NULL;
  if (t && t->defined && info->type == STROBE__BLK_EVENTS) t->events += info->count;
  if (t && t->defined && info->type == STROBE__BLK_LOST) {
    t->lost_total += info->count;
    t->lost_written += info->count; /* written: this block is it */
  }
  flush_meta(w);
  emit(w, data, len);
}

void strobe__writer_journal_pos(strobe__writer *w, const uint32_t *index, const uint64_t *count, uint32_t n) {
  if (!n) return;
  w->raw.len = 0;
  strobe__buf_varint(&w->raw, n);
  for (uint32_t i = 0; i < n; i++) {
    strobe__buf_varint(&w->raw, index[i]);
    strobe__buf_varint(&w->raw, count[i]);
  }
  emit_block(w, STROBE__BLK_JOURNAL_POS, &w->raw);
}

void strobe__writer_recovery(strobe__writer *w, uint64_t events, uint64_t threads, uint64_t unrecoverable) {
  w->raw.len = 0;
  strobe__buf_varint(&w->raw, events);
  strobe__buf_varint(&w->raw, threads);
  strobe__buf_varint(&w->raw, unrecoverable);
  emit_block(w, STROBE__BLK_RECOVERY, &w->raw);
}

int strobe__writer_error(const strobe__writer *w) { return w->error; }
const strobe__block_info *strobe__writer_block_info(const strobe__writer *w) { return &w->info; }
uint64_t strobe__writer_bytes(const strobe__writer *w) { return w->bytes; }

/* >>crash: a CRASH block into a caller's buffer, for a signal handler: a bounded cursor, no strobe__buf. */
typedef struct crash_out {
  uint8_t *p, *end;
} crash_out;

static void crash_varint(crash_out *o, uint64_t v) {
  while (o->p < o->end) {
    uint8_t b = (uint8_t)(v & 0x7f);
    v >>= 7;
    *o->p++ = (uint8_t)(b | (v ? 0x80 : 0));
    if (!v) return;
  }
  o->end = NULL; /* did not fit */
}

static void crash_str(crash_out *o, const char *s) {
  size_t n = 0;
  while (s && n < STROBE__MAX_STR && s[n]) n++;
  crash_varint(o, n);
  if (!o->end || (size_t)(o->end - o->p) < n) {
    o->end = NULL;
    return;
  }
  memcpy(o->p, s, n);
  o->p += n;
}

size_t strobe__crash_block(uint8_t *out, size_t cap, const strobe__crash_facts *f) {
  if (cap <= STROBE__BLOCK_HEADER) return 0;
  crash_out o = {out + STROBE__BLOCK_HEADER, out + cap};
  crash_varint(&o, (uint64_t)f->signal);
  crash_varint(&o, f->ticks);
  crash_varint(&o, f->fault_known ? (uint64_t)f->fault_index + 1 : 0);
  crash_str(&o, f->fault_name);
  crash_str(&o, f->op_kind);
  crash_varint(&o, f->frame_id);
  crash_str(&o, f->stage);
  crash_varint(&o, f->nthreads);
  crash_varint(&o, f->threads_cut);
  for (uint32_t i = 0; i < f->nthreads && o.end; i++) {
    const strobe__crash_thread *t = &f->threads[i];
    crash_varint(&o, t->index);
    crash_str(&o, t->name);
    crash_varint(&o, t->scopes_cut);
    crash_varint(&o, t->nscopes);
    for (uint32_t k = 0; k < t->nscopes && o.end; k++) crash_str(&o, t->scopes[k]);
  }
  if (!o.end) return 0;
  size_t n = (size_t)(o.p - (out + STROBE__BLOCK_HEADER));
  strobe__block_header h = {STROBE__BLK_CRASH, STROBE__CODEC_RAW, (uint32_t)n, (uint32_t)n, 0};
  strobe__block_header_encode(out, &h);
  h.crc = strobe__block_crc(out, out + STROBE__BLOCK_HEADER, n);
  strobe__block_header_encode(out, &h);
  return STROBE__BLOCK_HEADER + n;
}
