/*
 * export_perfetto.c — Perfetto's own trace format: a stream of TracePacket
 * messages (a `Trace`, field 1 repeated), protobuf-encoded by hand here (no
 * libprotobuf), with field numbers from Perfetto's published .proto files
 * (protos/perfetto/trace/: trace_packet, clock_snapshot, interned_data,
 * track_event/). The layout is docs/cli.md §perfetto; in short:
 *
 *   - one packet sequence (trusted_packet_sequence_id) per thread, opened by
 *     a packet with SEQ_INCREMENTAL_STATE_CLEARED and a ClockSnapshot that
 *     defines a sequence-scoped incremental clock (id 64, 1 ns) against
 *     CLOCK_MONOTONIC (the primary trace clock): every later packet's
 *     timestamp is the delta from the sequence's previous one. Its
 *     TracePacketDefaults point TrackEvents at the thread's track, and every
 *     later packet says SEQ_NEEDS_INCREMENTAL_STATE;
 *   - a process track and one thread track per thread (TrackDescriptor with
 *     ProcessDescriptor / ThreadDescriptor), child tracks "stages" for a
 *     thread's stage scopes and "frames" for its frame marks, a counter track
 *     per counter or gauge site, and
 *     lanes of operations per window (passes of a pipelined frame overlap,
 *     so an operation goes to the first lane of its window that is free);
 *   - each scope is a TYPE_SLICE_BEGIN at its BEGIN and a TYPE_SLICE_END at
 *     its END; names, categories and debug-annotation names are interned
 *     (InternedData, iid = site id) on each sequence the first time they are
 *     used; the numbers attached to a scope ride on its END as debug
 *     annotations; counters and gauges are TYPE_COUNTER events (a counter
 *     shows its running sum), frame marks TYPE_INSTANT with their number;
 *   - operations live on a sequence of their own with absolute timestamps,
 *     taken from the frame model (docs/frames.md, export_ops.h) once the
 *     capture is read: a frame handed between processes is one slice, with
 *     its state, processes and population;
 *   - the packets are gathered in 256 KiB chunks, each written as one
 *     zstd_compressed_packets packet (zstd level 1: Perfetto v58 and later),
 *     or compressed_packets (zlib deflate: every Perfetto since 2019), or as
 *     they are (--compression zstd|deflate|none).
 *
 * Strobe never invents an end: a scope unfinished when its thread or the file
 * ended keeps its begin without end (Perfetto shows "did not end"); a scope
 * whose END was lost is closed where the loss was recorded, and an unwound one
 * where that was found, each END carrying a debug annotation "strobe" that
 * says so. A last instant event "strobe export" on the process track counts
 * all of them and what the filters left out.
 *
 * GPU spans (docs/gpu.md) are mapped onto the host timeline once the whole
 * capture is read (strobe__gpu_resolve: later calibration pairs improve
 * earlier spans) and written at the end on the operations' sequence: each
 * queue lane is a track of its own under the process ("GPU <domain>/<queue>"),
 * its spans slices named by their site with debug annotations pass, frame_id
 * and bound_ns, nested as recorded; a span that overlaps another partly (a
 * mapping error) goes to the lane's next track ("... (2)"), never cut. Each
 * frame's two gaps are slices on the tracks "GPU queue backlog" (submit to
 * GPU start) and "GPU polling latency" (GPU end to fence seen), pipelined
 * frames' gaps side by side on further tracks, and its instants (cpu_end,
 * submit, gpu_start, gpu_end, fence_seen) are TYPE_INSTANT events on "GPU
 * frames", each with its frame_id. A negative gap (an order violation) gets
 * no slice; the summary counts it (gpu_order_violations), with the spans
 * unmapped, not kept or not placed.
 *
 * External producers' lanes (strobe/producer.h, LANE_SPAN records) are placed
 * the same way, each a track "producer <lane>" (strobe__gpu_lane_title, the
 * chrome export's and the viewer's name) under the process, its spans slices
 * named by their site with the debug annotation bound_ns (no pass, no frame);
 * the summary counts them (producer_spans, producer_spans_unmapped,
 * producer_slices_not_placed). --from/--to keep the spans wholly inside the
 * range; --thread leaves GPU and producer tracks out, counted, as chrome does.
 *
 * Compression runs on a thread of its own while the capture is read: one
 * chunk is filled while the other is compressed and written, in order.
 *
 * Memory: per thread, its open-scope stack (<= 256), the numbers held for
 * open scopes (<= 1024) and one byte per site of interning state; per site
 * its counter state; two chunks. Never per event.
 *
 * Contents: >>protobuf >>chunks >>tracks >>scopes >>operations >>gpu >>export
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <zlib.h>
#include <zstd.h>

#include "analyze/gpu_frames.h"
#include "export.h"
#include "export_ops.h"
#include "strobe/gpu.h"

#define MAX_DEPTH 256
#define MAX_VALUES 1024        /* numbers held for open scopes of one thread; more are counted, not attached */
#define CHUNK (256u << 10)     /* packets per compressed_packets: Perfetto wants each under 512 KB */
#define MAX_LANES 1024         /* operation lanes in all; operations past them are counted */
#define OPS_SEQ 1u             /* the operations' sequence; thread i is sequence i + 2 */
#define INCR_CLOCK 64u         /* first sequence-scoped clock id (clock_snapshot.proto) */
#define CLOCK_MONOTONIC_ID 3u  /* BUILTIN_CLOCK_MONOTONIC */
#define PROCESS_UUID 1ull
#define THREAD_UUID(i) (0x100000000ull + 4ull * (i))
#define CHILD_UUID(i, k) (THREAD_UUID(i) + (k)) /* a thread's child track k (CHILD_*) */
#define COUNTER_UUID(s) (0x200000000ull + (s))
#define LANE_UUID(l) (0x300000000ull + (l))
#define GPU_UUID(t) (0x400000000ull + (t)) /* GPU track t (>>gpu) */
#define GPU_SUBLANES 16u       /* tracks per GPU lane or gap kind; spans that fit none are counted */

/* >>protobuf: wire format. A tag is (field << 3) | wire type; LEN fields are
 * opened with a one-byte length that close widens when the body outgrows it. */
enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2 };
#define TAG(field, wt) (((uint64_t)(field) << 3) | (wt))

/* Field numbers (Perfetto's protos/perfetto/trace/...). */
enum {
  TRACE_PACKET = 1,
  /* TracePacket */
  P_TIMESTAMP = 8, P_SEQ_ID = 10, P_TRACK_EVENT = 11, P_INTERNED = 12, P_SEQ_FLAGS = 13, P_CLOCK_SNAPSHOT = 6,
  P_COMPRESSED = 50, P_ZSTD_COMPRESSED = 133, P_CLOCK_ID = 58, P_DEFAULTS = 59, P_TRACK_DESCRIPTOR = 60,
  /* TracePacketDefaults */
  D_CLOCK_ID = 58, D_TRACK_EVENT_DEFAULTS = 11,
  /* TrackEventDefaults */
  TD_TRACK_UUID = 11,
  /* ClockSnapshot, ClockSnapshot.Clock */
  CS_CLOCKS = 1, CS_PRIMARY = 2, C_ID = 1, C_TIMESTAMP = 2, C_INCREMENTAL = 3, C_UNIT_NS = 4,
  /* TrackDescriptor, ProcessDescriptor, ThreadDescriptor, CounterDescriptor */
  T_UUID = 1, T_NAME = 2, T_PROCESS = 3, T_THREAD = 4, T_PARENT = 5, T_COUNTER = 8, T_DESCRIPTION = 14,
  PD_PID = 1, PD_NAME = 6, TH_PID = 1, TH_TID = 2, TH_NAME = 5, CD_UNIT = 3, CD_UNIT_NAME = 6,
  /* TrackEvent */
  E_CATEGORY_IIDS = 3, E_DEBUG = 4, E_TYPE = 9, E_NAME_IID = 10, E_TRACK_UUID = 11, E_NAME = 23,
  E_DOUBLE_COUNTER = 44,
  /* DebugAnnotation */
  A_NAME_IID = 1, A_BOOL = 2, A_UINT = 3, A_DOUBLE = 5, A_STRING = 6, A_NAME = 10,
  /* InternedData, EventName / EventCategory / DebugAnnotationName */
  I_CATEGORIES = 1, I_NAMES = 2, I_DEBUG_NAMES = 3, N_IID = 1, N_NAME = 2,
};
enum { SEQ_CLEARED = 1, SEQ_NEEDS = 2 };
enum { TYPE_BEGIN = 1, TYPE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4 };
enum { UNIT_TIME_NS = 1, UNIT_COUNT = 2, UNIT_SIZE_BYTES = 3 };

typedef struct pb {
  uint8_t *p;
  size_t len, cap;
  int failed; /* out of memory: later writes are dropped */
} pb;

/* Grows the buffer for n more bytes (pb_need's slow path). */
static int pb_grow(pb *b, size_t n) {
  if (b->failed) return 0;
  size_t cap = b->cap ? b->cap : CHUNK + 4096;
  while (cap - b->len < n) cap *= 2;
  uint8_t *p = realloc(b->p, cap);
  if (!p) {
    b->failed = 1;
    return 0;
  }
  b->p = p;
  b->cap = cap;
  return 1;
}
static inline int pb_need(pb *b, size_t n) { return b->cap - b->len >= n || pb_grow(b, n); }

static inline uint8_t *put_varint(uint8_t *q, uint64_t v) {
  while (v >= 0x80) {
    *q++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *q++ = (uint8_t)v;
  return q;
}

static inline int varint_size(uint64_t v) {
  int n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

/* Every put below assumes pb_need made room: callers reserve per packet. */
static inline void pb_varint(pb *b, uint64_t v) { b->len = (size_t)(put_varint(b->p + b->len, v) - b->p); }
static inline void pb_uint(pb *b, uint32_t field, uint64_t v) {
  pb_varint(b, TAG(field, WT_VARINT));
  pb_varint(b, v);
}
static inline void pb_double(pb *b, uint32_t field, double v) {
  pb_varint(b, TAG(field, WT_I64));
  memcpy(b->p + b->len, &v, 8); /* little-endian hosts (x86_64, aarch64) */
  b->len += 8;
}
static inline void pb_str(pb *b, uint32_t field, const char *s) {
  size_t n = strlen(s);
  pb_varint(b, TAG(field, WT_LEN));
  pb_varint(b, n);
  memcpy(b->p + b->len, s, n);
  b->len += n;
}
/* Opens a LEN field; returns where its length byte is. */
static inline size_t pb_open(pb *b, uint32_t field) {
  pb_varint(b, TAG(field, WT_LEN));
  b->p[b->len] = 0;
  return b->len++;
}
static inline void pb_close(pb *b, size_t at) {
  size_t n = b->len - at - 1;
  if (n < 0x80) {
    b->p[at] = (uint8_t)n;
    return;
  }
  int k = varint_size(n); /* room: pb_need reserved the worst case per packet */
  memmove(b->p + at + k, b->p + at + 1, n);
  put_varint(b->p + at, n);
  b->len += (size_t)k - 1;
}

/* >>chunks */
typedef struct pthr pthr;

typedef struct psite {
  int defined;
  uint32_t kind;
  int has_cat;
  double sum;           /* counters: running sum of the deltas */
  int counter_track;    /* its counter track's descriptor was written */
} psite;

typedef struct pframe {
  uint32_t site;
  uint32_t vals_begin;
  uint8_t emitted; /* its BEGIN was written (it passed the filters) */
  uint8_t stage;   /* on the thread's stage track */
} pframe;

typedef struct pval {
  uint32_t site, kind; /* kind: 0 value, 1 loop count, 2 loop total ns */
  double v;
} pval;

/* A thread's child tracks: its stage scopes, its frame marks. */
enum { CHILD_STAGES = 1, CHILD_FRAMES = 2, CHILD_KINDS };
static const char *const g_child_name[CHILD_KINDS] = {NULL, "stages", "frames"};
static const char *const g_child_about[CHILD_KINDS] = {
    NULL, "this thread's stage scopes (STROBE_STAGE), apart from its other scopes",
    "this thread's FRAME marks (STROBE_FRAME): a frame runs from one mark to the next"};

enum { SENT_NAME = 1, SENT_CAT = 2, SENT_ANNOT = 4, SENT_ANNOT_COUNT = 8, SENT_ANNOT_TOTAL = 16 };

struct pthr {
  int defined, started;
  uint32_t index, seq;
  uint64_t tid;
  uint64_t last_ts;     /* the sequence's last timestamp: deltas start here */
  uint8_t child[CHILD_KINDS]; /* its child track's descriptor was written */
  uint8_t seq_head[16];       /* its packets' sequence id and flags, encoded once (>>fast) */
  uint8_t seq_head_len;
  uint64_t marks;       /* FRAME marks written */
  uint8_t *sent;        /* per site id: SENT_* on this sequence */
  uint32_t n_sent;
  pframe stack[MAX_DEPTH];
  uint32_t depth;
  pval *vals;
  uint32_t n_vals, cap_vals;
};

typedef struct lane {
  uint32_t collector;
  char *window;
  uint32_t nth;         /* 1 for a window's first lane */
  double last_end_ns;
} lane;

typedef struct perfetto {
  pb b;                 /* the current chunk of packets */
  FILE *out;
  int compress, write_failed;
  int zfailed;          /* compressing failed (written by whoever compresses) */
  /* The compressor thread and its hand-off (mu guards job, spare, the flags). */
  int threaded;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pb job, spare;
  int job_ready, spare_ready, quit;
  z_stream z;
  ZSTD_CCtx *zstd;
  uint8_t *zbuf;
  size_t zcap;
  const strobe_capture *c;
  export_filter *f;
  uint64_t pid;
  uint64_t epoch_ns;    /* CLOCK_MONOTONIC at the capture's epoch */
  uint64_t out_of_range; /* times past CLI_MAX_MONO_NS (a damaged capture), written at that bound: the export fails */
  psite *sites;
  uint32_t n_sites;
  pthr **threads;
  uint32_t n_threads;
  export_tids tids;
  lane *lanes;
  uint32_t n_lanes;
  uint64_t ops_last_ts;
  uint64_t scopes, unfinished, lost_scopes, unwound, values_dropped, clamped, ops, ops_unplaced;
  strobe__gpu_data gpu;   /* GPU spans and marks, written at the end (>>gpu) */
  uint32_t n_gpu_tracks;  /* GPU tracks described so far */
  uint64_t gpu_frames_track;
  export_ops opx;       /* the operations, from the frame model: written at the end (>>operations) */
  uint64_t gpu_unplaced;  /* GPU slices no track could take (GPU_SUBLANES) */
  uint64_t producer_unplaced; /* producer slices no track of their lane could take */
  int failed;
} perfetto;

static void write_out(perfetto *x, const void *p, size_t n) {
  if (n && fwrite(p, 1, n, x->out) != n) x->write_failed = 1;
}

/* Compresses a chunk into one packet and writes it (the compressor thread's
 * work, or the caller's when that thread could not start). */
static void compress_write(perfetto *x, pb *b) {
  int zstd = x->compress == EXPORT_PERFETTO_ZSTD;
  size_t bound = (zstd ? ZSTD_compressBound(b->len) : deflateBound(&x->z, (uLong)b->len)) + 16;
  if (bound > x->zcap) {
    uint8_t *p = realloc(x->zbuf, bound);
    if (!p) {
      x->zfailed = 1;
      b->len = 0;
      return;
    }
    x->zbuf = p;
    x->zcap = bound;
  }
  size_t clen;
  if (zstd) {
    clen = ZSTD_compress2(x->zstd, x->zbuf, x->zcap, b->p, b->len);
    b->len = 0;
    if (ZSTD_isError(clen)) {
      x->zfailed = 1;
      return;
    }
  } else {
    x->z.next_in = b->p;
    x->z.avail_in = (uInt)b->len;
    x->z.next_out = x->zbuf;
    x->z.avail_out = (uInt)x->zcap;
    int rc = deflate(&x->z, Z_FINISH);
    clen = x->zcap - x->z.avail_out;
    deflateReset(&x->z);
    b->len = 0;
    if (rc != Z_STREAM_END) {
      x->zfailed = 1;
      return;
    }
  }
  uint32_t field = zstd ? P_ZSTD_COMPRESSED : P_COMPRESSED;
  uint8_t head[24], *q = head;
  uint64_t inner = (uint64_t)varint_size(TAG(field, WT_LEN)) + (uint64_t)varint_size(clen) + clen;
  q = put_varint(q, TAG(TRACE_PACKET, WT_LEN));
  q = put_varint(q, inner);
  q = put_varint(q, TAG(field, WT_LEN));
  q = put_varint(q, clen);
  write_out(x, head, (size_t)(q - head));
  write_out(x, x->zbuf, clen);
}

/* The compressor thread: takes each full chunk, compresses and writes it, and
 * gives the buffer back, while the reader fills the other one. */
static void *compressor(void *arg) {
  perfetto *x = arg;
  pthread_mutex_lock(&x->mu);
  for (;;) {
    while (!x->job_ready && !x->quit) pthread_cond_wait(&x->cv, &x->mu);
    if (!x->job_ready) break;
    pb job = x->job;
    pthread_mutex_unlock(&x->mu);
    compress_write(x, &job);
    pthread_mutex_lock(&x->mu);
    x->spare = job;
    x->job_ready = 0;
    x->spare_ready = 1;
    pthread_cond_broadcast(&x->cv);
  }
  pthread_mutex_unlock(&x->mu);
  return NULL;
}

/* Writes the current chunk: as it is, or compressed (by the compressor
 * thread when it runs: the reader goes on in the spare buffer). */
static void flush_chunk(perfetto *x) {
  pb *b = &x->b;
  if (!b->len) return;
  if (x->compress == EXPORT_PERFETTO_PLAIN) {
    write_out(x, b->p, b->len);
    b->len = 0;
    return;
  }
  if (!x->threaded) {
    compress_write(x, b);
    return;
  }
  pthread_mutex_lock(&x->mu);
  while (!x->spare_ready) pthread_cond_wait(&x->cv, &x->mu);
  x->job = *b;
  *b = x->spare;
  x->spare_ready = 0;
  x->job_ready = 1;
  pthread_cond_broadcast(&x->cv);
  pthread_mutex_unlock(&x->mu);
}

/* A packet: opened with room for `extra` bytes of strings beyond the fixed fields. */
static inline int pkt_open(perfetto *x, size_t extra, size_t *at) {
  if (!pb_need(&x->b, 512 + 2 * extra)) {
    x->failed = 1;
    return 0;
  }
  *at = pb_open(&x->b, TRACE_PACKET);
  return 1;
}
static inline void pkt_close(perfetto *x, size_t at) {
  pb_close(&x->b, at);
  if (x->b.len >= CHUNK) flush_chunk(x);
}

/* ns since the epoch -> CLOCK_MONOTONIC ns. */
static inline uint64_t abs_ts(perfetto *x, double t_ns) {
  if (x->epoch_ns > (uint64_t)CLI_MAX_MONO_NS || !(t_ns >= -CLI_MAX_MONO_NS && t_ns <= CLI_MAX_MONO_NS)) {
    x->out_of_range++;
    return (uint64_t)CLI_MAX_MONO_NS; /* both within 2^62: the sum below cannot overflow */
  }
  int64_t v = (int64_t)x->epoch_ns + round_i64(t_ns);
  return v < 0 ? 0 : (uint64_t)v;
}

/* The delta a thread's next packet at `ts` carries; a clock stepping back is
 * clamped to the last timestamp and counted. */
static inline uint64_t delta_of(perfetto *x, pthr *t, uint64_t ts) {
  if (ts < t->last_ts) {
    x->clamped++;
    return 0;
  }
  uint64_t d = ts - t->last_ts;
  t->last_ts = ts;
  return d;
}

/* >>tracks */
static void clock_snapshot(perfetto *x, uint32_t seq, uint64_t ts, int incremental) {
  pb *b = &x->b;
  size_t at;
  if (!pkt_open(x, 0, &at)) return;
  pb_uint(b, P_TIMESTAMP, ts);
  pb_uint(b, P_CLOCK_ID, CLOCK_MONOTONIC_ID);
  pb_uint(b, P_SEQ_ID, seq);
  pb_uint(b, P_SEQ_FLAGS, SEQ_CLEARED);
  size_t cs = pb_open(b, P_CLOCK_SNAPSHOT);
  size_t c1 = pb_open(b, CS_CLOCKS);
  pb_uint(b, C_ID, CLOCK_MONOTONIC_ID);
  pb_uint(b, C_TIMESTAMP, ts);
  pb_close(b, c1);
  if (incremental) {
    size_t c2 = pb_open(b, CS_CLOCKS);
    pb_uint(b, C_ID, INCR_CLOCK);
    pb_uint(b, C_TIMESTAMP, ts);
    pb_uint(b, C_INCREMENTAL, 1);
    pb_uint(b, C_UNIT_NS, 1);
    pb_close(b, c2);
  }
  pb_uint(b, CS_PRIMARY, CLOCK_MONOTONIC_ID);
  pb_close(b, cs);
  pkt_close(x, at);
}

/* Opens a thread-sequence packet: its timestamp delta, sequence and flags. */
static inline int tpkt_open(perfetto *x, pthr *t, uint64_t ts, size_t extra, size_t *at) {
  if (!pkt_open(x, extra, at)) return 0;
  pb_uint(&x->b, P_TIMESTAMP, delta_of(x, t, ts));
  pb_uint(&x->b, P_SEQ_ID, t->seq);
  pb_uint(&x->b, P_SEQ_FLAGS, SEQ_NEEDS);
  return 1;
}

static void thread_descriptor(perfetto *x, pthr *t) {
  char label[CLI_THREAD_LABEL_MAX];
  const char *name = cli_thread_label(x->c, t->index, label, sizeof label);
  pb *b = &x->b;
  size_t at;
  if (!tpkt_open(x, t, t->last_ts, strlen(name), &at)) return;
  size_t td = pb_open(b, P_TRACK_DESCRIPTOR);
  pb_uint(b, T_UUID, THREAD_UUID(t->index)); /* a reader puts it under its process by pid */
  size_t th = pb_open(b, T_THREAD);
  pb_uint(b, TH_PID, x->pid);
  pb_uint(b, TH_TID, t->tid);
  pb_str(b, TH_NAME, name);
  pb_close(b, th);
  pb_close(b, td);
  pkt_close(x, at);
}

/* A thread's sequence begins at its first timed event: clock, defaults, track. */
static void start_thread(perfetto *x, pthr *t, uint64_t ts) {
  t->started = 1;
  t->last_ts = ts;
  clock_snapshot(x, t->seq, ts, 1);
  pb *b = &x->b;
  size_t at;
  if (!pkt_open(x, 0, &at)) return;
  pb_uint(b, P_TIMESTAMP, 0);
  pb_uint(b, P_CLOCK_ID, INCR_CLOCK);
  pb_uint(b, P_SEQ_ID, t->seq);
  pb_uint(b, P_SEQ_FLAGS, SEQ_NEEDS);
  size_t d = pb_open(b, P_DEFAULTS);
  pb_uint(b, D_CLOCK_ID, INCR_CLOCK);
  size_t te = pb_open(b, D_TRACK_EVENT_DEFAULTS);
  pb_uint(b, TD_TRACK_UUID, THREAD_UUID(t->index));
  pb_close(b, te);
  pb_close(b, d);
  pkt_close(x, at);
  thread_descriptor(x, t);
}

/* The thread's child track k, described on first use; returns its uuid. */
static uint64_t child_track(perfetto *x, pthr *t, int k) {
  uint64_t uuid = CHILD_UUID(t->index, (uint64_t)k);
  if (t->child[k]) return uuid;
  t->child[k] = 1;
  pb *b = &x->b;
  size_t at;
  if (!tpkt_open(x, t, t->last_ts, 128, &at)) return uuid;
  size_t td = pb_open(b, P_TRACK_DESCRIPTOR);
  pb_uint(b, T_UUID, uuid);
  pb_uint(b, T_PARENT, THREAD_UUID(t->index));
  pb_str(b, T_NAME, g_child_name[k]);
  pb_str(b, T_DESCRIPTION, g_child_about[k]);
  pb_close(b, td);
  pkt_close(x, at);
  return uuid;
}

static void counter_track(perfetto *x, pthr *t, uint32_t site) {
  const strobe_capture_site *s = strobe_capture_query_site(x->c, site);
  x->sites[site].counter_track = 1;
  pb *b = &x->b;
  size_t at;
  if (!tpkt_open(x, t, t->last_ts, strlen(s->name) + strlen(s->category) + 2, &at)) return;
  size_t td = pb_open(b, P_TRACK_DESCRIPTOR);
  pb_uint(b, T_UUID, COUNTER_UUID(site));
  pb_uint(b, T_PARENT, PROCESS_UUID);
  char series[640];
  pb_str(b, T_NAME, export_counter_name(s, series, sizeof series));
  size_t cd = pb_open(b, T_COUNTER);
  if (s->unit == STROBE_UNIT_BYTES) pb_uint(b, CD_UNIT, UNIT_SIZE_BYTES);
  else if (s->unit == STROBE_UNIT_NS) pb_uint(b, CD_UNIT, UNIT_TIME_NS);
  else if (s->unit == STROBE_UNIT_COUNT) pb_uint(b, CD_UNIT, UNIT_COUNT);
  else if (s->unit != STROBE_UNIT_NONE && strobe_unit_name(s->unit)) pb_str(b, CD_UNIT_NAME, strobe_unit_name(s->unit));
  pb_close(b, cd);
  pb_close(b, td);
  pkt_close(x, at);
}

static int on_thread(perfetto *x, uint32_t index) {
  if (!xf_thread(x->f, x->c, index)) return -1;
  pthr *t = cli_entry(&x->threads, &x->n_threads, index, sizeof *t);
  if (!t) return -1;
  if (!t->defined) {
    t->defined = 1;
    t->index = index;
    t->seq = index + 2;
    uint8_t *q = t->seq_head;
    q = put_varint(q, TAG(P_SEQ_ID, WT_VARINT));
    q = put_varint(q, t->seq);
    q = put_varint(q, TAG(P_SEQ_FLAGS, WT_VARINT));
    q = put_varint(q, SEQ_NEEDS);
    t->seq_head_len = (uint8_t)(q - t->seq_head);
    if ((t->tid = export_tid(&x->tids, x->c, index)) == UINT64_MAX) return -1;
  } else if (t->started && xf_thread_in(x->f, index)) {
    thread_descriptor(x, t); /* renamed */
  }
  return 0;
}

static int on_site(perfetto *x, uint32_t id) {
  if (id >= x->n_sites) {
    uint32_t n = x->n_sites ? x->n_sites : 64;
    while (n <= id) n *= 2;
    psite *p = realloc(x->sites, n * sizeof *p);
    if (!p) return -1;
    memset(p + x->n_sites, 0, (n - x->n_sites) * sizeof *p);
    x->sites = p;
    x->n_sites = n;
  }
  const strobe_capture_site *s = strobe_capture_query_site(x->c, id);
  psite *ps = &x->sites[id];
  ps->defined = 1;
  ps->kind = s->kind;
  ps->has_cat = s->category[0] != 0;
  return 0;
}

/* The thread's interning state for a site, grown to the site table. */
static inline uint8_t *sent_of(perfetto *x, pthr *t, uint32_t site) {
  if (site >= t->n_sent) {
    uint32_t n = x->n_sites;
    uint8_t *p = realloc(t->sent, n);
    if (!p) return NULL;
    memset(p + t->n_sent, 0, n - t->n_sent);
    t->sent = p;
    t->n_sent = n;
  }
  return &t->sent[site];
}

/* >>scopes */
/* Interns the site's event name (and category) on the thread's sequence when
 * this packet is its first use there. */
static void intern_name(perfetto *x, pthr *t, uint32_t site, uint8_t *sent) {
  const strobe_capture_site *s = strobe_capture_query_site(x->c, site);
  pb *b = &x->b;
  size_t in = pb_open(b, P_INTERNED);
  size_t n = pb_open(b, I_NAMES);
  pb_uint(b, N_IID, site);
  pb_str(b, N_NAME, s->name);
  pb_close(b, n);
  if (x->sites[site].has_cat) {
    size_t k = pb_open(b, I_CATEGORIES);
    pb_uint(b, N_IID, site);
    pb_str(b, N_NAME, s->category);
    pb_close(b, k);
  }
  pb_close(b, in);
  *sent |= SENT_NAME;
  (void)t;
}

static inline size_t site_strings(perfetto *x, uint32_t site) {
  const strobe_capture_site *s = strobe_capture_query_site(x->c, site);
  return strlen(s->name) + strlen(s->category) + 16;
}

/* >>fast: nearly every packet is a scope's BEGIN whose name this sequence
 * already interned or an END without numbers. Those two are written here in
 * one pass over a local pointer, the sequence's fixed fields copied from
 * seq_head: the same bytes tpkt_open and the pb_* calls write field by field
 * (which cost the export a third of its time). Both packets are under 128
 * bytes, so each length is one byte. */
#define FAST_MAX 64
static inline void fast_event(perfetto *x, pthr *t, uint64_t ts, uint32_t type, uint32_t site, int has_cat,
                              uint64_t track) {
  if (!pb_need(&x->b, FAST_MAX)) {
    x->failed = 1;
    return;
  }
  uint8_t *q = x->b.p + x->b.len;
  *q++ = TAG(TRACE_PACKET, WT_LEN);
  uint8_t *plen = q++;
  *q++ = TAG(P_TIMESTAMP, WT_VARINT);
  q = put_varint(q, delta_of(x, t, ts));
  memcpy(q, t->seq_head, sizeof t->seq_head);
  q += t->seq_head_len;
  *q++ = TAG(P_TRACK_EVENT, WT_LEN);
  uint8_t *elen = q++;
  *q++ = TAG(E_TYPE, WT_VARINT);
  *q++ = (uint8_t)type;
  if (type != TYPE_END) {
    *q++ = TAG(E_NAME_IID, WT_VARINT);
    q = put_varint(q, site);
    if (has_cat) {
      *q++ = TAG(E_CATEGORY_IIDS, WT_VARINT);
      q = put_varint(q, site);
    }
  }
  if (track) {
    *q++ = TAG(E_TRACK_UUID, WT_VARINT);
    q = put_varint(q, track);
  }
  *elen = (uint8_t)(q - elen - 1);
  *plen = (uint8_t)(q - plen - 1);
  x->b.len = (size_t)(q - x->b.p);
  if (x->b.len >= CHUNK) flush_chunk(x);
}

/* A named event (slice begin or instant) of a site on the thread's track,
 * or on `track` when not 0; a frame mark carries its number. */
static void named_event_whole(perfetto *x, pthr *t, uint8_t *sent, uint32_t site, uint64_t ts, uint32_t type,
                              uint64_t track, uint64_t mark);
static inline void named_event(perfetto *x, pthr *t, uint32_t site, uint64_t ts, uint32_t type, uint64_t track,
                               uint64_t mark) {
  uint8_t *sent = sent_of(x, t, site);
  if (!sent) {
    x->failed = 1;
    return;
  }
  if ((*sent & SENT_NAME) && !mark) fast_event(x, t, ts, type, site, x->sites[site].has_cat, track);
  else named_event_whole(x, t, sent, site, ts, type, track, mark);
}
/* named_event's packet field by field: the name to intern first, or a frame mark's number. */
static void named_event_whole(perfetto *x, pthr *t, uint8_t *sent, uint32_t site, uint64_t ts, uint32_t type,
                              uint64_t track, uint64_t mark) {
  size_t at;
  if (!tpkt_open(x, t, ts, (*sent & SENT_NAME) ? 0 : site_strings(x, site), &at)) return;
  pb *b = &x->b;
  if (!(*sent & SENT_NAME)) intern_name(x, t, site, sent);
  size_t te = pb_open(b, P_TRACK_EVENT);
  pb_uint(b, E_TYPE, type);
  pb_uint(b, E_NAME_IID, site);
  if (x->sites[site].has_cat) pb_uint(b, E_CATEGORY_IIDS, site);
  if (track) pb_uint(b, E_TRACK_UUID, track);
  if (mark) {
    size_t a = pb_open(b, E_DEBUG);
    pb_str(b, A_NAME, "mark");
    pb_uint(b, A_UINT, mark);
    pb_close(b, a);
  }
  pb_close(b, te);
  pkt_close(x, at);
}

static void on_begin(perfetto *x, pthr *t, const strobe_capture_record *r) {
  if (r->depth < 1 || r->depth > MAX_DEPTH || r->site >= x->n_sites) return;
  pframe *fr = &t->stack[r->depth - 1];
  t->depth = r->depth;
  fr->site = r->site;
  fr->vals_begin = t->n_vals;
  fr->stage = x->sites[r->site].kind == STROBE_SITE_STAGE;
  fr->emitted = xf_time_in(x->f, r->time_ns) && !xf_cut(x->f, r->thread, r->depth, r->ticks);
  if (!fr->emitted) {
    x->f->left_out++;
    return;
  }
  uint64_t ts = abs_ts(x, r->time_ns);
  if (!t->started) start_thread(x, t, ts);
  named_event(x, t, r->site, ts, TYPE_BEGIN, fr->stage ? child_track(x, t, CHILD_STAGES) : 0, 0);
}

static void annot_str(pb *b, const char *name, const char *value) {
  size_t a = pb_open(b, E_DEBUG);
  pb_str(b, A_NAME, name);
  pb_str(b, A_STRING, value);
  pb_close(b, a);
}

/* The END of the innermost open scope at `ts`; `why` (NULL for a measured
 * end) says how a scope that did not end normally was closed. */
static void end_slice_whole(perfetto *x, pthr *t, uint64_t ts, const char *why);
static inline void end_slice(perfetto *x, pthr *t, uint64_t ts, const char *why) {
  const pframe *fr = &t->stack[t->depth - 1];
  if (t->n_vals == fr->vals_begin && !why)
    fast_event(x, t, ts, TYPE_END, 0, 0, fr->stage ? CHILD_UUID(t->index, CHILD_STAGES) : 0);
  else
    end_slice_whole(x, t, ts, why);
}
/* end_slice's packet field by field: the numbers it carries (their names interned first), or why it ended. */
static void end_slice_whole(perfetto *x, pthr *t, uint64_t ts, const char *why) {
  pframe *fr = &t->stack[t->depth - 1];
  uint32_t nv = t->n_vals - fr->vals_begin;
  size_t extra = why ? strlen(why) + 16 : 0;
  for (uint32_t i = 0; i < nv && !why; i++) extra += site_strings(x, t->vals[fr->vals_begin + i].site) + 24;
  size_t at;
  if (!tpkt_open(x, t, ts, extra, &at)) return;
  pb *b = &x->b;
  if (nv && !why) { /* names of the numbers, interned on first use */
    size_t in = 0;
    int open = 0;
    for (uint32_t i = 0; i < nv; i++) {
      const pval *v = &t->vals[fr->vals_begin + i];
      uint8_t *sent = sent_of(x, t, v->site);
      uint8_t bit = v->kind == 0 ? SENT_ANNOT : v->kind == 1 ? SENT_ANNOT_COUNT : SENT_ANNOT_TOTAL;
      if (!sent || (*sent & bit)) continue;
      if (!open) {
        in = pb_open(b, P_INTERNED);
        open = 1;
      }
      const strobe_capture_site *s = strobe_capture_query_site(x->c, v->site);
      size_t n = pb_open(b, I_DEBUG_NAMES);
      pb_uint(b, N_IID, 4ull * v->site + v->kind);
      pb_varint(b, TAG(N_NAME, WT_LEN));
      const char *suffix = v->kind == 1 ? " count" : v->kind == 2 ? " total_ns" : "";
      size_t nl = strlen(s->name), sl = strlen(suffix);
      pb_varint(b, nl + sl);
      memcpy(b->p + b->len, s->name, nl);
      memcpy(b->p + b->len + nl, suffix, sl);
      b->len += nl + sl;
      pb_close(b, n);
      *sent |= bit;
    }
    if (open) pb_close(b, in);
  }
  size_t te = pb_open(b, P_TRACK_EVENT);
  pb_uint(b, E_TYPE, TYPE_END);
  if (fr->stage) pb_uint(b, E_TRACK_UUID, CHILD_UUID(t->index, CHILD_STAGES));
  if (why) {
    annot_str(b, "strobe", why);
  } else {
    for (uint32_t i = 0; i < nv; i++) {
      const pval *v = &t->vals[fr->vals_begin + i];
      size_t a = pb_open(b, E_DEBUG);
      pb_uint(b, A_NAME_IID, 4ull * v->site + v->kind);
      if (v->kind == 1) pb_uint(b, A_UINT, (uint64_t)v->v);
      else pb_double(b, A_DOUBLE, v->v);
      pb_close(b, a);
    }
  }
  pb_close(b, te);
  pkt_close(x, at);
}

static void on_end(perfetto *x, pthr *t, const strobe_capture_record *r) {
  if (r->depth < 1 || r->depth > MAX_DEPTH || r->depth != t->depth) return;
  pframe *fr = &t->stack[r->depth - 1];
  if (fr->emitted) {
    uint64_t ts = abs_ts(x, r->time_ns);
    if (r->unwound) { /* docs/recording.md, Unwinding: its span ends when that was found; values stay off it */
      x->unwound++;
      x->values_dropped += t->n_vals - fr->vals_begin;
      end_slice(x, t, ts, "unwound: its END never ran, closed when found");
    } else {
      x->scopes++;
      end_slice(x, t, ts, NULL);
    }
  }
  t->n_vals = fr->vals_begin;
  t->depth = r->depth - 1;
}

static void add_val(perfetto *x, pthr *t, uint32_t depth, uint32_t site, uint32_t kind, double v) {
  if (depth == 0 || depth != t->depth || !t->stack[depth - 1].emitted) return; /* no exported scope to carry it */
  if (t->n_vals == t->cap_vals) {
    uint32_t cap = t->cap_vals ? t->cap_vals * 2 : 16;
    pval *p = cap <= MAX_VALUES ? realloc(t->vals, cap * sizeof *p) : NULL;
    if (!p) {
      x->values_dropped++;
      return;
    }
    t->vals = p;
    t->cap_vals = cap;
  }
  t->vals[t->n_vals++] = (pval){site, kind, v};
}

static void on_number(perfetto *x, pthr *t, const strobe_capture_record *r) {
  if (r->site >= x->n_sites || !x->sites[r->site].defined) return;
  psite *s = &x->sites[r->site];
  double v = r->value;
  if (r->type == STROBE_REC_COUNTER) v = s->sum += r->value; /* the level over every thread, filtered or not */
  if (!xf_thread_in(x->f, r->thread)) return;
  if (!xf_time_in(x->f, r->time_ns)) {
    x->f->left_out++;
    return;
  }
  uint64_t ts = abs_ts(x, r->time_ns);
  if (!t->started) start_thread(x, t, ts);
  if (!s->counter_track) counter_track(x, t, r->site);
  size_t at;
  if (!tpkt_open(x, t, ts, 0, &at)) return;
  pb *b = &x->b;
  size_t te = pb_open(b, P_TRACK_EVENT);
  pb_uint(b, E_TYPE, TYPE_COUNTER);
  pb_uint(b, E_TRACK_UUID, COUNTER_UUID(r->site));
  pb_double(b, E_DOUBLE_COUNTER, v);
  pb_close(b, te);
  pkt_close(x, at);
}

/* Closes the emitted scopes deeper than depth at ts, each END saying why. */
static void close_lost(perfetto *x, pthr *t, uint32_t depth, uint64_t ts) {
  while (t->depth > depth) {
    pframe *fr = &t->stack[t->depth - 1];
    if (fr->emitted) {
      x->lost_scopes++;
      end_slice(x, t, ts, "end lost: its END was dropped with a full ring; closed where the loss was recorded");
    }
    t->n_vals = fr->vals_begin;
    t->depth--;
  }
}

static void on_lost(perfetto *x, pthr *t, const strobe_capture_record *r) {
  uint64_t ts = r->ticks ? abs_ts(x, r->time_ns) : t->last_ts;
  if (t->started || r->ticks) {
    if (!t->started) start_thread(x, t, ts);
    close_lost(x, t, r->depth, ts);
  } else {
    t->depth = r->depth < t->depth ? r->depth : t->depth;
  }
  if (!r->ticks || !xf_time_in(x->f, r->time_ns)) return;
  size_t at;
  if (!tpkt_open(x, t, ts, 32, &at)) return;
  pb *b = &x->b;
  size_t te = pb_open(b, P_TRACK_EVENT);
  pb_uint(b, E_TYPE, TYPE_INSTANT);
  pb_str(b, E_NAME, "strobe: events lost");
  size_t a = pb_open(b, E_DEBUG);
  pb_str(b, A_NAME, "lost");
  pb_uint(b, A_UINT, r->lost);
  pb_close(b, a);
  pb_close(b, te);
  pkt_close(x, at);
}

/* At thread end (and file end): open scopes stay open, never given an end. */
static void unfinished(perfetto *x, pthr *t) {
  for (uint32_t d = 0; d < t->depth; d++)
    if (t->stack[d].emitted) x->unfinished++;
  t->depth = 0;
  t->n_vals = 0;
}

/* >>operations */
static lane *lane_for(perfetto *x, const strobe_frame *op) {
  uint32_t nth = 0;
  for (uint32_t i = 0; i < x->n_lanes; i++) {
    lane *l = &x->lanes[i];
    if (l->collector != op->collector || strcmp(l->window, op->window) != 0) continue;
    nth++;
    if (l->last_end_ns <= op->begin_ns) return l;
  }
  if (x->n_lanes == MAX_LANES) return NULL;
  if (!x->n_lanes && !(x->lanes = calloc(MAX_LANES, sizeof *x->lanes))) return NULL;
  lane *l = &x->lanes[x->n_lanes];
  if (!(l->window = strdup(op->window))) return NULL;
  l->collector = (uint32_t)op->collector;
  l->nth = nth + 1;
  l->last_end_ns = -INFINITY;
  uint32_t index = x->n_lanes++;
  char name[160];
  if (l->nth == 1) snprintf(name, sizeof name, "operations %s", op->window[0] ? op->window : "(no window)");
  else snprintf(name, sizeof name, "operations %s (%u)", op->window[0] ? op->window : "(no window)", l->nth);
  pb *b = &x->b;
  size_t at;
  if (!pkt_open(x, strlen(name), &at)) return l;
  pb_uint(b, P_TIMESTAMP, x->ops_last_ts);
  pb_uint(b, P_SEQ_ID, OPS_SEQ);
  pb_uint(b, P_SEQ_FLAGS, SEQ_NEEDS);
  size_t td = pb_open(b, P_TRACK_DESCRIPTOR);
  pb_uint(b, T_UUID, LANE_UUID(index));
  pb_uint(b, T_PARENT, PROCESS_UUID);
  pb_str(b, T_NAME, name);
  pb_close(b, td);
  pkt_close(x, at);
  return l;
}

static void annot_uint(pb *b, const char *name, uint64_t v) {
  size_t a = pb_open(b, E_DEBUG);
  pb_str(b, A_NAME, name);
  pb_uint(b, A_UINT, v);
  pb_close(b, a);
}
static void annot_bool(pb *b, const char *name, int v) {
  size_t a = pb_open(b, E_DEBUG);
  pb_str(b, A_NAME, name);
  pb_uint(b, A_BOOL, v ? 1 : 0);
  pb_close(b, a);
}
static void annot_double(pb *b, const char *name, double v) {
  size_t a = pb_open(b, E_DEBUG);
  pb_str(b, A_NAME, name);
  pb_double(b, A_DOUBLE, v);
  pb_close(b, a);
}

/* One operation of the frame model (export_ops.h) on its window's first free lane: one slice, the halves of a frame
 * handed between processes joined, with the Chrome export's args (export_chrome.c write_op). */
static void op_annots(perfetto *x, uint32_t i, const strobe_frame *fr);
static void write_op(perfetto *x, uint32_t i) {
  const strobe_frame *fr = strobe_frames_query_frame(x->opx.fx, i);
  lane *l = lane_for(x, fr);
  if (!l) {
    x->ops_unplaced++;
    return;
  }
  l->last_end_ns = fr->end_ns;
  uint64_t uuid = LANE_UUID((uint64_t)(l - x->lanes));
  const char *kind = strobe_op_kind_name(fr->kind);
  if (!kind) kind = "operation";
  char name[64];
  snprintf(name, sizeof name, "%s %" PRIu64, kind, fr->number);
  uint32_t nst, nends;
  const xo_end *ends = xo_ends(&x->opx, i, &nends);
  strobe_frames_query_stages(x->opx.fx, i, &nst);
  size_t extra = strlen(fr->window) + strlen(fr->population) + 256 + (size_t)nst * 400;
  for (uint32_t k = 0; k < nends; k++) extra += (size_t)ends[k].ncounters * 400;
  pb *b = &x->b;
  size_t at;
  if (!pkt_open(x, extra, &at)) return;
  uint64_t start = abs_ts(x, fr->begin_ns), end = abs_ts(x, fr->end_ns);
  pb_uint(b, P_TIMESTAMP, start);
  pb_uint(b, P_SEQ_ID, OPS_SEQ);
  pb_uint(b, P_SEQ_FLAGS, SEQ_NEEDS);
  size_t te = pb_open(b, P_TRACK_EVENT);
  pb_uint(b, E_TYPE, TYPE_BEGIN);
  pb_uint(b, E_TRACK_UUID, uuid);
  pb_str(b, E_NAME, name);
  op_annots(x, i, fr);
  pb_close(b, te);
  pkt_close(x, at);
  if (!pkt_open(x, 0, &at)) return;
  pb_uint(b, P_TIMESTAMP, end);
  pb_uint(b, P_SEQ_ID, OPS_SEQ);
  pb_uint(b, P_SEQ_FLAGS, SEQ_NEEDS);
  te = pb_open(b, P_TRACK_EVENT);
  pb_uint(b, E_TYPE, TYPE_END);
  pb_uint(b, E_TRACK_UUID, uuid);
  pb_close(b, te);
  pkt_close(x, at);
  if (end > x->ops_last_ts) x->ops_last_ts = end;
  x->ops++;
}

static void op_annots(perfetto *x, uint32_t i, const strobe_frame *fr) {
  pb *b = &x->b;
  uint32_t nends, nst;
  const xo_end *ends = xo_ends(&x->opx, i, &nends);
  int handed_off = fr->process != fr->end_process;
  for (uint32_t k = 0; k < nends; k++) handed_off |= ends[k].handed_off;
  annot_str(b, "window", fr->window);
  annot_uint(b, "operation_id", fr->id);
  if (fr->kind == STROBE_OP_PASS) annot_uint(b, "frame_id", fr->number);
  annot_str(b, "state", strobe_frames_state_name(fr->state));
  if (strobe_frames_query_process_count(x->opx.fx) > 1) {
    annot_str(b, "process", strobe_frames_query_process(x->opx.fx, fr->process));
    annot_str(b, "end_process", strobe_frames_query_process(x->opx.fx, fr->end_process));
  }
  if (fr->population[0]) annot_str(b, "population", fr->population);
  annot_bool(b, "committed", fr->state == STROBE_FRAME_COMPLETED || fr->state == STROBE_FRAME_PRESENTED);
  annot_bool(b, "handed_off", handed_off);
  if (!fr->detail) annot_str(b, "strobe", "began before the capture: stages and counters unknown");
  xo_stage st[XO_STAGES_MAX];
  char key[320];
  xo_stages(&x->opx, i, st, XO_STAGES_MAX, &nst);
  for (uint32_t k = 0; k < nst; k++) {
    xo_stage_key(&x->opx, x->c, i, &st[k], key, sizeof key);
    annot_double(b, key, st[k].total_ns / 1e6);
  }
  for (uint32_t k = 0; k < nends; k++)
    for (uint32_t n = 0; n < ends[k].ncounters; n++) {
      xo_counter_key(&x->opx.counters[ends[k].counter0 + n], key, sizeof key);
      annot_double(b, key, x->opx.counters[ends[k].counter0 + n].value);
    }
}

/* Every operation that ended, from the model, once the capture is read. */
static void write_ops(perfetto *x) {
  if (xo_finish(&x->opx, x->c)) x->failed = 1;
  for (uint32_t i = 0; !x->failed && i < strobe_frames_query_count(x->opx.fx); i++)
    if (strobe_frames_query_frame(x->opx.fx, i)->kind && xo_frame_in(&x->opx, x->f, i)) write_op(x, i);
}

/* >>gpu: queue lanes, the frames' gaps and instants, on tracks of their own.
 * Everything goes on the operations' sequence, with absolute timestamps. */
typedef struct gpu_track {
  uint64_t uuid;
  double ends[64]; /* the open slices' ends, innermost last (spans nest at most this deep here) */
  uint32_t depth;
  double last_end; /* the latest end written (gaps: slices side by side) */
} gpu_track;

static uint64_t gpu_describe(perfetto *x, const char *name, uint32_t nth) {
  uint64_t uuid = GPU_UUID(x->n_gpu_tracks++);
  char label[320];
  if (nth <= 1) snprintf(label, sizeof label, "%s", name);
  else snprintf(label, sizeof label, "%s (%u)", name, nth);
  pb *b = &x->b;
  size_t at;
  if (!pkt_open(x, strlen(label), &at)) return uuid;
  pb_uint(b, P_TIMESTAMP, x->ops_last_ts);
  pb_uint(b, P_SEQ_ID, OPS_SEQ);
  pb_uint(b, P_SEQ_FLAGS, SEQ_NEEDS);
  size_t td = pb_open(b, P_TRACK_DESCRIPTOR);
  pb_uint(b, T_UUID, uuid);
  pb_uint(b, T_PARENT, PROCESS_UUID);
  pb_str(b, T_NAME, label);
  pb_close(b, td);
  pkt_close(x, at);
  return uuid;
}

/* One event on a GPU track: a slice's begin (name, then its annotations),
 * its end, or an instant. */
static void gpu_event(perfetto *x, uint64_t uuid, double t_ns, uint32_t type, const char *name, const char *pass,
                      uint64_t frame, double bound_ns, int producer) {
  pb *b = &x->b;
  size_t at;
  if (!pkt_open(x, (name ? strlen(name) : 0) + (pass ? strlen(pass) : 0) + 64, &at)) return;
  pb_uint(b, P_TIMESTAMP, abs_ts(x, t_ns));
  pb_uint(b, P_SEQ_ID, OPS_SEQ);
  pb_uint(b, P_SEQ_FLAGS, SEQ_NEEDS);
  size_t te = pb_open(b, P_TRACK_EVENT);
  pb_uint(b, E_TYPE, type);
  pb_uint(b, E_TRACK_UUID, uuid);
  if (type != TYPE_END) {
    pb_str(b, E_NAME, name);
    if (pass) annot_str(b, "pass", pass);
    if (!producer) annot_uint(b, "frame_id", frame); /* a producer's span is in no frame and no pass */
    if (bound_ns == bound_ns) annot_double(b, "bound_ns", bound_ns);
  }
  pb_close(b, te);
  pkt_close(x, at);
}

/* Closes a track's open slices that end by t (all of them: t = INFINITY). */
static void gpu_close_to(perfetto *x, gpu_track *t, double until) {
  while (t->depth && t->ends[t->depth - 1] <= until) {
    gpu_event(x, t->uuid, t->ends[t->depth - 1], TYPE_END, NULL, NULL, 0, NAN, 0);
    t->depth--;
  }
}

static int span_order(const void *a, const void *b) {
  const strobe__gpu_span_rec *p = *(const strobe__gpu_span_rec *const *)a, *q = *(const strobe__gpu_span_rec *const *)b;
  if (p->begin_ns != q->begin_ns) return p->begin_ns < q->begin_ns ? -1 : 1;
  if (p->end_ns != q->end_ns) return p->end_ns > q->end_ns ? -1 : 1; /* the enclosing one first */
  return 0;
}

/* A lane's spans, sorted: each on the first of the lane's tracks where it
 * nests in what is open or follows it. */
static void gpu_lane(perfetto *x, const strobe__gpu_data *g, uint32_t ln, const strobe__gpu_span_rec **spans,
                     uint32_t n) {
  gpu_track tr[GPU_SUBLANES];
  uint32_t ntr = 0;
  char name[300];
  strobe__gpu_lane_title(&g->lanes[ln], name, sizeof name);
  for (uint32_t i = 0; i < n; i++) {
    const strobe__gpu_span_rec *s = spans[i];
    gpu_track *t = NULL;
    for (uint32_t k = 0; k < ntr && !t; k++) {
      gpu_close_to(x, &tr[k], s->begin_ns);
      if (tr[k].depth < 64 && (!tr[k].depth || s->end_ns <= tr[k].ends[tr[k].depth - 1])) t = &tr[k];
    }
    if (!t && ntr < GPU_SUBLANES) {
      t = &tr[ntr++];
      t->uuid = gpu_describe(x, name, ntr);
      t->depth = 0;
    }
    if (!t) { /* partly overlapping more tracks than a lane has: counted */
      if (s->producer)
        x->producer_unplaced++;
      else
        x->gpu_unplaced++;
      continue;
    }
    const strobe_capture_site *cs = strobe_capture_query_site(x->c, s->site);
    gpu_event(x, t->uuid, s->begin_ns, TYPE_BEGIN, cs ? cs->name : "?",
              s->producer ? NULL : s->pass[0] ? s->pass : "none", s->frame_id, s->bound_ns, s->producer);
    t->ends[t->depth++] = s->end_ns;
  }
  for (uint32_t k = 0; k < ntr; k++) gpu_close_to(x, &tr[k], INFINITY);
}

/* A frame's gap as a slice, beside the gaps it overlaps (pipelined frames). */
static void gpu_gap(perfetto *x, gpu_track *tr, uint32_t *ntr, const char *track, const char *name, double from,
                    double to, uint64_t frame) {
  if (!(to >= from)) return; /* unknown, or negative: an order violation, counted */
  gpu_track *t = NULL;
  for (uint32_t k = 0; k < *ntr && !t; k++)
    if (tr[k].last_end <= from) t = &tr[k];
  if (!t && *ntr < GPU_SUBLANES) {
    t = &tr[(*ntr)++];
    t->uuid = gpu_describe(x, track, *ntr);
    t->last_end = -INFINITY;
  }
  if (!t) {
    x->gpu_unplaced++;
    return;
  }
  gpu_event(x, t->uuid, from, TYPE_BEGIN, name, NULL, frame, NAN, 0);
  gpu_event(x, t->uuid, to, TYPE_END, NULL, NULL, 0, NAN, 0);
  t->last_end = to;
}

static int frame_by_start(const void *a, const void *b) {
  const strobe__gpu_frame_rec *p = *(const strobe__gpu_frame_rec *const *)a, *q = *(const strobe__gpu_frame_rec *const *)b;
  double s = p->submit == p->submit ? p->submit : p->gpu_end, t = q->submit == q->submit ? q->submit : q->gpu_end;
  return s < t ? -1 : s > t ? 1 : 0;
}

static void write_gpu(perfetto *x, strobe_capture *c) {
  strobe__gpu_data *g = &x->gpu;
  if (!xf_gpu_lanes(x->f, g, c, (uint64_t)g->n_spans + g->n_frames, &x->failed)) return;
  const strobe__gpu_span_rec **sp = g->n_spans ? malloc(g->n_spans * sizeof *sp) : NULL;
  if (g->n_spans && !sp) {
    x->failed = 1;
    return;
  }
  for (uint32_t ln = 0; ln < g->n_lanes; ln++) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->n_spans; i++) {
      const strobe__gpu_span_rec *s = &g->spans[i];
      if (s->lane != ln || isnan(s->begin_ns)) continue; /* counted: lanes_cut, unmapped, lane_spans_unmapped */
      if (!xf_time_in(x->f, s->begin_ns) || !xf_time_in(x->f, s->end_ns)) { /* --from/--to: wholly inside */
        x->f->left_out++;
        continue;
      }
      sp[n++] = s;
    }
    if (n) qsort(sp, n, sizeof *sp, span_order);
    gpu_lane(x, g, ln, sp, n);
  }
  free(sp);
  if (!g->n_frames) return;
  const strobe__gpu_frame_rec **fr = malloc(g->n_frames * sizeof *fr);
  if (!fr) {
    x->failed = 1;
    return;
  }
  uint32_t n = 0;
  for (uint32_t i = 0; i < g->n_frames; i++) {
    const strobe__gpu_frame_rec *f = &g->frames[i];
    double first = !isnan(f->cpu_end) ? f->cpu_end : !isnan(f->submit) ? f->submit : f->gpu_begin;
    double last = !isnan(f->fence_seen) ? f->fence_seen : f->gpu_end;
    if ((!isnan(first) && !xf_time_in(x->f, first)) || (!isnan(last) && !xf_time_in(x->f, last))) {
      x->f->left_out++;
      continue;
    }
    fr[n++] = f;
  }
  if (n) qsort(fr, n, sizeof *fr, frame_by_start);
  gpu_track backlog[GPU_SUBLANES], polling[GPU_SUBLANES];
  uint32_t nb = 0, np = 0;
  for (uint32_t i = 0; i < n; i++) {
    gpu_gap(x, backlog, &nb, "GPU queue backlog", "queue backlog", fr[i]->submit, fr[i]->gpu_begin, fr[i]->frame_id);
    gpu_gap(x, polling, &np, "GPU polling latency", "polling latency", fr[i]->gpu_end, fr[i]->fence_seen,
            fr[i]->frame_id);
  }
  uint64_t instants = 0;
  for (uint32_t i = 0; i < n; i++) {
    const strobe__gpu_frame_rec *f = fr[i];
    const double at[5] = {f->cpu_end, f->submit, f->gpu_begin, f->gpu_end, f->fence_seen};
    const char *name[5] = {strobe_gpu_instant_name(STROBE_GPU_CPU_END), strobe_gpu_instant_name(STROBE_GPU_SUBMIT),
                           "gpu_start", "gpu_end", strobe_gpu_instant_name(STROBE_GPU_FENCE_SEEN)};
    for (uint32_t k = 0; k < 5; k++) {
      if (isnan(at[k])) continue;
      if (!instants++) x->gpu_frames_track = gpu_describe(x, "GPU frames", 1);
      gpu_event(x, x->gpu_frames_track, at[k], TYPE_INSTANT, name[k], NULL, f->frame_id, NAN, 0);
    }
  }
  free(fr);
}

/* >>export */
static void on_record(perfetto *x, const strobe_capture_record *r) {
  if (r->device) {
    strobe__gpu_record(&x->gpu, r);
    return;
  }
  if (r->type == STROBE_REC_SITE) {
    if (on_site(x, r->site)) x->failed = 1;
    return;
  }
  if (r->type == STROBE_REC_THREAD) {
    if (on_thread(x, r->thread)) x->failed = 1;
    return;
  }
  if (r->type >= STROBE_REC_OP_BEGIN && r->type <= STROBE_REC_OP_RESUME) {
    xo_add(&x->opx, x->c, r); /* written at the end, from the frame model (write_ops) */
    return;
  }
  pthr *t = r->thread < x->n_threads ? x->threads[r->thread] : NULL;
  if (!t) return;
  if (r->type == STROBE_REC_COUNTER || r->type == STROBE_REC_GAUGE) {
    on_number(x, t, r);
    return;
  }
  if (!xf_thread_in(x->f, r->thread)) return;
  switch (r->type) {
    case STROBE_REC_BEGIN: on_begin(x, t, r); break;
    case STROBE_REC_END: on_end(x, t, r); break;
    case STROBE_REC_VALUE: add_val(x, t, r->depth, r->site, 0, r->value); break;
    case STROBE_REC_CUMULATIVE:
      add_val(x, t, r->depth, r->site, 1, (double)r->count);
      add_val(x, t, r->depth, r->site, 2, r->total_ns);
      break;
    case STROBE_REC_FRAME:
      if (r->site >= x->n_sites) break;
      if (!xf_time_in(x->f, r->time_ns)) {
        x->f->left_out++;
        break;
      }
      if (!t->started) start_thread(x, t, abs_ts(x, r->time_ns));
      named_event(x, t, r->site, abs_ts(x, r->time_ns), TYPE_INSTANT, child_track(x, t, CHILD_FRAMES), ++t->marks);
      break;
    case STROBE_REC_LOST: on_lost(x, t, r); break;
    case STROBE_REC_THREAD_END: unfinished(x, t); break;
    default: break;
  }
}

/* The process track, then the exporter's own counts at the capture's end. */
static void process_track(perfetto *x, uint64_t ts) {
  clock_snapshot(x, OPS_SEQ, ts, 0);
  pb *b = &x->b;
  size_t at;
  if (!pkt_open(x, 64, &at)) return;
  pb_uint(b, P_TIMESTAMP, ts);
  pb_uint(b, P_CLOCK_ID, CLOCK_MONOTONIC_ID); /* the defaults below apply to later packets only */
  pb_uint(b, P_SEQ_ID, OPS_SEQ);
  pb_uint(b, P_SEQ_FLAGS, SEQ_NEEDS);
  size_t d = pb_open(b, P_DEFAULTS);
  pb_uint(b, D_CLOCK_ID, CLOCK_MONOTONIC_ID);
  pb_close(b, d);
  size_t td = pb_open(b, P_TRACK_DESCRIPTOR);
  pb_uint(b, T_UUID, PROCESS_UUID);
  size_t p = pb_open(b, T_PROCESS);
  pb_uint(b, PD_PID, x->pid);
  pb_str(b, PD_NAME, "strobe capture");
  pb_close(b, p);
  pb_close(b, td);
  pkt_close(x, at);
}

static void summary(perfetto *x, const cli_input *in) {
  strobe_capture_totals tot = strobe_capture_query_totals(x->c);
  uint64_t ts = abs_ts(x, strobe_capture_ticks_to_ns(x->c, tot.end_ticks));
  if (ts < x->ops_last_ts) ts = x->ops_last_ts;
  pb *b = &x->b;
  size_t at;
  if (!pkt_open(x, 256, &at)) return;
  pb_uint(b, P_TIMESTAMP, ts);
  pb_uint(b, P_SEQ_ID, OPS_SEQ);
  pb_uint(b, P_SEQ_FLAGS, SEQ_NEEDS);
  size_t te = pb_open(b, P_TRACK_EVENT);
  pb_uint(b, E_TYPE, TYPE_INSTANT);
  pb_uint(b, E_TRACK_UUID, PROCESS_UUID);
  pb_str(b, E_NAME, "strobe export");
  char exporter[64];
  snprintf(exporter, sizeof exporter, "strobe %s", strobe_version());
  annot_str(b, "exporter", exporter);
  annot_str(b, "capture_state", cli_end_state(in));
  annot_uint(b, "scopes", x->scopes);
  annot_uint(b, "operations", x->ops);
  annot_uint(b, "lost_events", tot.lost);
  annot_uint(b, "unfinished_scopes", x->unfinished);
  annot_uint(b, "lost_scopes", x->lost_scopes);
  annot_uint(b, "unwound_scopes", x->unwound);
  annot_uint(b, "values_not_attached", x->values_dropped);
  annot_uint(b, "timestamps_clamped", x->clamped);
  annot_uint(b, "operations_not_placed", x->ops_unplaced);
  annot_uint(b, "left_out_by_filters", x->f->left_out);
  if (x->gpu.n_lane_spans) {
    annot_uint(b, "producer_spans", x->gpu.n_lane_spans);
    annot_uint(b, "producer_spans_unmapped", x->gpu.lane_spans_unmapped);
    annot_uint(b, "producer_slices_not_placed", x->producer_unplaced);
  }
  if (strobe__gpu_lanes_present(&x->gpu)) /* GPU and producer spans past the reader's bounds (gpu_frames.h) */
    annot_uint(b, "gpu_spans_not_kept", x->gpu.spans_cut + x->gpu.lanes_cut);
  if (strobe__gpu_present(&x->gpu)) {
    annot_uint(b, "gpu_spans", x->gpu.n_spans - x->gpu.n_lane_spans);
    annot_uint(b, "gpu_spans_unmapped", x->gpu.unmapped);
    annot_uint(b, "gpu_slices_not_placed", x->gpu_unplaced);
    annot_uint(b, "gpu_order_violations", x->gpu.violated);
  }
  pb_close(b, te);
  pkt_close(x, at);
}

int export_perfetto(cli_input *in, FILE *out, export_filter *f, int compress) {
  perfetto *x = calloc(1, sizeof *x);
  if (!x) {
    cli_error(in->cmd, "out of memory");
    return CLI_FAIL;
  }
  x->out = out;
  x->compress = compress;
  x->c = in->cap;
  x->f = f;
  const strobe_capture_header *h = strobe_capture_query_header(in->cap);
  x->pid = h->pid;
  x->epoch_ns = h->epoch_mono_ns;
  xf_begin(f, in->cap);
  if (compress == EXPORT_PERFETTO_DEFLATE && deflateInit(&x->z, Z_BEST_SPEED) != Z_OK) {
    free(x);
    cli_error(in->cmd, "cannot start zlib's deflate");
    return CLI_FAIL;
  }
  if (compress == EXPORT_PERFETTO_ZSTD &&
      (!(x->zstd = ZSTD_createCCtx()) || ZSTD_isError(ZSTD_CCtx_setParameter(x->zstd, ZSTD_c_compressionLevel, 1)))) {
    ZSTD_freeCCtx(x->zstd);
    free(x);
    cli_error(in->cmd, "cannot start zstd");
    return CLI_FAIL;
  }
  if (compress != EXPORT_PERFETTO_PLAIN) { /* compress while reading; without the thread, in turn */
    pthread_mutex_init(&x->mu, NULL);
    pthread_cond_init(&x->cv, NULL);
    x->spare_ready = 1;
    x->threaded = pthread_create(&x->thread, NULL, compressor, x) == 0;
  }
  uint64_t t0 = abs_ts(x, cli_start_ns(in->cap));
  x->ops_last_ts = t0;
  if (xo_init(&x->opx)) x->failed = 1;
  process_track(x, t0);

  for (const strobe_capture_record *r; (r = cli_next_ref(in));) on_record(x, r);
  for (uint32_t i = 0; i < x->n_threads; i++)
    if (x->threads[i]) unfinished(x, x->threads[i]);
  int status = cli_finish_read(in);
  if (!status) status = cli_times_in_range(in->cmd, in->path, in->cap);
  if (!status && x->out_of_range) {
    cli_error(in->cmd, "%s: %llu times lie past 2^62 ns of CLOCK_MONOTONIC, out of range (a damaged capture)", in->path,
              (unsigned long long)x->out_of_range);
    status = CLI_FAIL;
  }
  write_ops(x);
  write_gpu(x, in->cap);
  summary(x, in);
  flush_chunk(x);
  if (x->threaded) {
    pthread_mutex_lock(&x->mu);
    x->quit = 1;
    pthread_cond_broadcast(&x->cv);
    pthread_mutex_unlock(&x->mu);
    pthread_join(x->thread, NULL);
  }
  if (compress != EXPORT_PERFETTO_PLAIN) {
    pthread_mutex_destroy(&x->mu);
    pthread_cond_destroy(&x->cv);
  }
  if (x->zfailed) {
    cli_error(in->cmd, "compressing the trace failed: the export is incomplete");
    status = CLI_FAIL;
  }
  if (x->failed || x->b.failed) {
    cli_error(in->cmd, "out of memory: the export is incomplete");
    status = CLI_FAIL;
  }
  int wfail = x->write_failed;
  if (compress == EXPORT_PERFETTO_DEFLATE) deflateEnd(&x->z);
  ZSTD_freeCCtx(x->zstd);
  for (uint32_t i = 0; i < x->n_threads; i++) {
    if (!x->threads[i]) continue;
    free(x->threads[i]->vals);
    free(x->threads[i]->sent);
    free(x->threads[i]);
  }
  for (uint32_t i = 0; i < x->n_lanes; i++) free(x->lanes[i].window);
  free(x->lanes);
  free(x->threads);
  export_tids_free(&x->tids);
  strobe__gpu_free(&x->gpu);
  xo_free(&x->opx);
  free(x->sites);
  free(x->zbuf);
  free(x->b.p);
  free(x->spare.p);
  free(x);
  return wfail ? CLI_OUTPUT : status;
}
