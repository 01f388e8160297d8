/*
 * flight.c — the flight recorder: an event consumer (like recorder.c) whose
 * capture writer hands its blocks to a fixed ring in memory instead of a
 * file, and which turns that ring into a self-contained capture file on
 * demand or when a watched frame or scope runs over its budget.
 *
 * Owns: the ring (one allocation, touched at start, never grown), its index
 * of blocks, the thread table that lets every dump define the threads its
 * blocks name, the spike trigger, and the writer thread for spike dumps.
 *
 * Must never: block the drain thread on file I/O or on a dump (dumps run on
 * the caller's thread or on the writer thread; the drain only ever takes the
 * recorder's short lock), grow memory with the number of events, or let a
 * dropped block silently break a thread's nesting (see >>resync).
 *
 * Why blocks are evicted whole: the capture writer's EVENTS blocks are per
 * thread and self-contained (their own base ticks), so dropping the oldest
 * block of a thread only shortens that thread's stream from the front. A
 * reader then sees ENDs whose BEGIN was evicted; it already counts those as
 * orphan_ends and skips them. SITES and THREAD blocks are not kept in the
 * ring: every dump re-emits the definitions it needs at its start.
 *
 * Dumps and eviction (the pinned range): a dump takes a snapshot of the ring
 * (its oldest entry and how many entries) under the lock and then writes the
 * entries oldest first without holding it; blocks are immutable once written,
 * so the bytes can be read unlocked. While a dump runs, the drain thread may
 * evict only entries the dump has already written (`pin_seq` moves forward
 * as it goes), so eviction follows the dump from behind. If the ring fills
 * up with entries the dump still needs, new blocks are refused and counted
 * (dropped_blocks) instead of waiting, and the affected threads are resynced
 * with a LOST marker (>>resync). Dumps of one recorder run one at a time.
 *
 * Contents: >>state >>ring >>threads >>resync >>trigger >>consumer >>dump
 *           >>worker >>api
 */
#include "strobe/flight.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect/collect.h"
#include "format/capture_writer.h"
#include "format/codec.h"
#include "platform/clock.h"
#include "platform/host.h"
#include "platform/invariant.h"
#include "platform/io.h"

/* ======================================================================
 * >>state
 * ====================================================================== */

#define DEFAULT_MAX_MIB 64u          /* ~25 s of one thread scoping at 1M scopes/s */
#define MAX_MAX_MIB 4096u
#define DEFAULT_MAX_AGE_MS 10000u    /* "the last 10 seconds" */
#define DEFAULT_FLUSH_MS 100u        /* as a capture file: the time bound's granularity */
#define DEFAULT_LEVEL 1              /* zstd's fastest level: the drain thread does this work */
#define DEFAULT_SPIKE_SITE "frame"   /* STROBE_FRAME_MARK's site name */
#define DEFAULT_COOLDOWN_MS 10000u
#define DEFAULT_MAX_SPIKE_FILES 100u /* a runaway trigger cannot fill the disk */
#define MAX_DAY_MS 86400000u
#define MAX_FLUSH_MS 60000u
#define MAX_POST_MS 60000u
#define MAX_THRESHOLD_MS 3600000.0
#define MIN_THRESHOLD_MS 0.001
#define SPIKE_DIR_MAX 960u  /* leaves room for "/spike-<ms>-<seq>.strobe.part" in STROBE_FLIGHT_PATH_MAX */
#define SPIKE_SITE_MAX 255u
#define CLOCK_PAIR_NS 1000000000ull  /* one calibration pair a second, as a capture file */
#define WATCH_NEST 8                 /* watched scopes open at once on a thread (recursion); deeper: not timed */

/* One ring entry: this header, then the framed block, padded to 8 bytes. */
typedef struct entry {
  uint32_t size;        /* bytes of the block that follows; MARKER: the ring goes on at offset 0 */
  uint32_t thread;      /* thread index; NO_THREAD for CLOCK */
  uint8_t type;         /* STROBE__BLK_* */
  uint8_t pad[7];
  uint64_t count;       /* EVENTS: events; LOST: events lost */
  uint64_t first, last; /* EVENTS: first and last event's ticks; others: when it arrived */
} entry;

#define MARKER UINT32_MAX
#define NO_THREAD UINT32_MAX
#define ENTRY_HDR sizeof(entry)

/* What the trigger and the resync logic know of a thread's stream (drain thread only). */
typedef struct track {
  uint32_t depth;    /* open scopes in the stream since the recorder started */
  uint32_t pend;     /* payload slots still to come for the last event */
  uint64_t last_ts;  /* ticks of the last event */
  uint64_t frame_ts; /* ticks of the last watched frame mark; 0 = none yet */
  uint32_t op_slot;  /* payload slots of an operation END seen so far, while pend > 0 */
  int op_end;        /* the event pend counts down for is an operation END */
  uint64_t op_ts;    /* ...its ticks (the operation's end) */
  uint32_t nopen;
  struct {
    uint32_t depth;
    uint64_t ts;
  } open[WATCH_NEST]; /* watched scopes still open */
} track;

/* A row per thread index ever seen (~250 bytes, like the capture writer's). */
typedef struct fthread {
  /* under fr->lock */
  int defined;        /* dumps define it (when refs > 0) */
  int end_stored;     /* its THREAD_END reached the ring or was refused: undefine once refs is 0 */
  uint64_t refs;      /* ring entries naming it */
  uint64_t os_tid;
  char name[STROBE__THREAD_NAME_MAX];
  /* drain thread only */
  int ended;              /* thread_end delivered */
  int resync;             /* an EVENTS block was refused: refuse the rest until a LOST marker is in */
  int lost_dirty;         /* ring_lost changed: tell the writer at the next flush */
  uint64_t lifetime_lost; /* the process-lifetime loss count, as last delivered */
  uint64_t ring_lost;     /* events the ring refused, added to what the writer reports as lost */
  uint64_t hole;          /* events refused since the last resync */
  track tr;
} fthread;

/* A dump's view of the ring, taken under the lock. */
typedef struct snapshot {
  size_t off;          /* the oldest entry */
  uint64_t seq, count; /* its sequence number; entries to write */
  uint64_t end_ticks;  /* when it was taken: the footer's end */
} snapshot;

struct strobe_flight_recorder {
  strobe__consumer consumer;
  strobe__writer *writer; /* the ring's encoder: drain thread, or stop() after removal */
  int detached;           /* set by stop() once the consumer is removed: the writer is then stop()'s */
  strobe_flight_recorder_desc desc; /* resolved; strings point at the copies below */
  char spike_site[SPIKE_SITE_MAX + 1];
  char spike_dir[SPIKE_DIR_MAX + 1];
  strobe__cost cost;              /* the calibration, for dump headers */
  strobe__drain_cost drain_base;  /* the drain's cost when the recorder started */
  strobe_trace_stats trace_base;  /* call tracing's counts when it started (CALLS blocks) */
  strobe_sampler_stats sampler_base; /* the sampler's counts when it started (SAMPLER blocks) */
  double ns_per_tick;
  strobe_misuse misuse_base;

  /* drain thread only */
  uint64_t flush_ticks, clock_ticks, age_ticks, thr_ticks, cooldown_ticks, post_ticks;
  uint64_t last_flush, last_clock, prev_tick;
  int resync_any;
  uint64_t watch[STROBE_MAX_SITES / 64]; /* bit per site id: watched by the trigger */
  int flush_requested;                   /* atomic: a dump asks for the pending blocks */

  strobe__mutex lock;
  pthread_cond_t work_cond; /* the writer thread: a job, or quit */
  pthread_cond_t done_cond; /* a dump released its pin */

  /* >>ring, under lock */
  uint8_t *mem;
  size_t cap;            /* bytes */
  size_t head, tail;     /* oldest entry; where the next goes */
  int wrapped;           /* data runs head..end-of-lap, then 0..tail */
  uint64_t count;        /* entries */
  uint64_t head_seq;     /* sequence number of the entry at head */
  uint64_t events;       /* events in retained EVENTS entries */
  int dumping;           /* a dump holds the pin */
  uint64_t pin_seq;      /* while dumping: entries from here on may not be evicted */
  uint32_t site_limit;   /* one past the largest site id delivered */
  uint32_t label_limit;  /* one past the largest label id delivered */
  int watch_passes;      /* the trigger times pass operations (spike_site "frame") */
  fthread *threads;      /* indexed by thread index */
  uint32_t nthreads;

  /* stats, under lock */
  uint64_t evicted, dropped_blocks, dropped_events, dumps_written, dump_errors;
  uint64_t spikes_seen, spikes_dumped, spikes_suppressed;
  double last_spike_ms;
  int last_error, writer_error;
  char last_path[STROBE_FLIGHT_PATH_MAX];

  /* trigger and writer thread, under lock */
  int spike_pending;       /* a spike waits for its dump */
  uint64_t spike_due;      /* ticks: dump once a drain pass started after this */
  int triggered;           /* a spike has started a dump before (last_trigger is valid) */
  uint64_t last_trigger;   /* ticks of the spike that started the last dump */
  uint32_t spike_files;    /* spike dumps started */
  uint64_t spike_seq;      /* <seq> of the file names */
  pthread_t worker;
  int has_worker, quit, job;
  snapshot job_snap;
};

static uint64_t ms_to_ticks(double ms, double ns_per_tick) { return (uint64_t)(ms * 1e6 / ns_per_tick); }

/* ======================================================================
 * >>ring — entries, placing, eviction (all with fr->lock held)
 * ====================================================================== */

static size_t entry_bytes(uint32_t size) { return (ENTRY_HDR + (size_t)size + 7u) & ~(size_t)7u; }

static entry *at(const strobe_flight_recorder *fr, size_t off) { return (entry *)(void *)(fr->mem + off); }

/* Where the entry after one ending at `off` starts: past a wrap marker (or
 * a lap end too short for one) the ring goes on at 0. */
static size_t next_start(const strobe_flight_recorder *fr, size_t off) {
  return off + ENTRY_HDR > fr->cap || at(fr, off)->size == MARKER ? 0 : off;
}

static fthread *thread_row(strobe_flight_recorder *fr, uint32_t index) {
  return index < fr->nthreads ? &fr->threads[index] : NULL;
}

static void maybe_undefine(fthread *ft) {
  if (ft->end_stored && ft->refs == 0) ft->defined = 0;
}

static int can_evict(const strobe_flight_recorder *fr) {
  STROBE_ASSERT(strobe__mutex_held(&fr->lock));
  return fr->count > 0 && !(fr->dumping && fr->head_seq >= fr->pin_seq);
}

static void evict_head(strobe_flight_recorder *fr) {
  STROBE_ASSERT(strobe__mutex_held(&fr->lock));
  entry *e = at(fr, fr->head);
  fthread *ft = e->thread == NO_THREAD ? NULL : thread_row(fr, e->thread);
  if (ft) {
    ft->refs--;
    maybe_undefine(ft);
  }
  if (e->type == STROBE__BLK_EVENTS) fr->events -= e->count;
  fr->head += entry_bytes(e->size);
  fr->count--;
  fr->head_seq++;
  fr->evicted++;
  if (fr->count == 0) {
    fr->head = fr->tail = 0;
    fr->wrapped = 0;
  } else if (fr->wrapped && next_start(fr, fr->head) == 0) {
    fr->head = 0;
    fr->wrapped = 0;
  }
}

/* Finds room for `need` bytes, evicting the oldest entries as needed.
 * Returns the offset, or SIZE_MAX when only pinned entries stand in the way. */
static size_t place(strobe_flight_recorder *fr, size_t need) {
  STROBE_ASSERT(strobe__mutex_held(&fr->lock));
  if (need > fr->cap) return SIZE_MAX;
  for (;;) {
    if (fr->count == 0) {
      fr->head = fr->tail = 0;
      fr->wrapped = 0;
    }
    if (!fr->wrapped) {
      if (fr->cap - fr->tail >= need) return fr->tail;
      if (fr->head >= need) { /* start the next lap at 0 */
        if (fr->cap - fr->tail >= ENTRY_HDR) at(fr, fr->tail)->size = MARKER;
        fr->tail = 0;
        fr->wrapped = 1;
        return 0;
      }
    } else if (fr->head - fr->tail >= need) {
      return fr->tail;
    }
    if (!can_evict(fr)) return SIZE_MAX;
    evict_head(fr);
  }
}

static uint64_t retained_bytes(const strobe_flight_recorder *fr) {
  STROBE_ASSERT(strobe__mutex_held(&fr->lock));
  if (fr->count == 0) return 0;
  return fr->wrapped ? (uint64_t)(fr->cap - fr->head + fr->tail) : (uint64_t)(fr->tail - fr->head);
}

/* The oldest and newest event ticks among `count` entries from `off`. */
static void event_range(const strobe_flight_recorder *fr, size_t off, uint64_t count, uint64_t *first,
                        uint64_t *last) {
  STROBE_ASSERT(strobe__mutex_held(&fr->lock));
  *first = *last = 0;
  int any = 0;
  for (uint64_t i = 0; i < count; i++) {
    off = next_start(fr, off);
    const entry *e = at(fr, off);
    if (e->type == STROBE__BLK_EVENTS || e->type == STROBE__BLK_OPS) {
      if (!any || (int64_t)(e->first - *first) < 0) *first = e->first;
      if (!any || (int64_t)(e->last - *last) > 0) *last = e->last;
      any = 1;
    }
    off += entry_bytes(e->size);
  }
}

/* Stores one framed block (drain thread, or stop()). */
static void store(strobe_flight_recorder *fr, uint8_t type, uint32_t thread, uint64_t count, uint64_t first,
                  uint64_t last, const void *data, size_t len) {
  STROBE_ASSERT(strobe__drain_held() || fr->detached);
  strobe__mutex_lock(&fr->lock);
  fthread *ft = thread == NO_THREAD ? NULL : thread_row(fr, thread);
  size_t off = SIZE_MAX;
  /* A thread the table does not know could not be defined by a dump: refuse. */
  int ok = (thread == NO_THREAD || ft) && len <= UINT32_MAX - 64u;
  if (ok && !(type == STROBE__BLK_EVENTS && ft->resync)) off = place(fr, entry_bytes((uint32_t)len));
  if (off != SIZE_MAX) {
    entry *e = at(fr, off);
    *e = (entry){(uint32_t)len, thread, type, {0}, count, first, last};
    memcpy(e + 1, data, len);
    fr->tail = off + entry_bytes((uint32_t)len);
    fr->count++;
    if (ft) ft->refs++;
    if (type == STROBE__BLK_EVENTS) fr->events += count;
  } else {
    fr->dropped_blocks++;
    if (type == STROBE__BLK_EVENTS) {
      fr->dropped_events += count;
      if (ft) {
        ft->ring_lost += count;
        ft->hole += count;
        ft->lost_dirty = 1;
        if (!ft->ended) ft->resync = 1;
        fr->resync_any = 1;
      }
    } else if (type == STROBE__BLK_LOST && ft) {
      ft->ring_lost += count; /* told to the writer again at the next flush */
      ft->lost_dirty = 1;
      fr->resync_any = 1;
    }
  }
  if (type == STROBE__BLK_THREAD_END && ft) {
    ft->end_stored = 1;
    maybe_undefine(ft);
  }
  strobe__mutex_unlock(&fr->lock);
}

/* The ring writer's sink. A call is either one per-thread block the writer
 * describes (strobe__writer_block_info) or a run of metadata blocks, of
 * which only CLOCK pairs are kept: dumps write their own SITES and THREAD. */
static int ring_sink(void *ctx, const void *data, size_t len) {
  strobe_flight_recorder *fr = ctx;
  if (!fr->writer) return 0; /* the ring writer's own file header: each dump writes one */
  STROBE_ASSERT(strobe__drain_held() || fr->detached);
  const strobe__block_info *info = strobe__writer_block_info(fr->writer);
  uint64_t now = strobe__now();
  if (info->type) {
    int ev = info->type == STROBE__BLK_EVENTS || info->type == STROBE__BLK_OPS;
    uint32_t thread = info->type == STROBE__BLK_TREE || info->type == STROBE__BLK_SAMPLES ? NO_THREAD : info->thread;
    store(fr, info->type, thread, info->count, ev ? info->first_ticks : now, ev ? info->last_ticks : now, data, len);
    return 0;
  }
  const uint8_t *p = data;
  while (len >= STROBE__BLOCK_HEADER) {
    strobe__block_header h;
    strobe__block_header_decode(p, &h);
    size_t n = STROBE__BLOCK_HEADER + (size_t)h.stored_len;
    if (n > len) break;
    if (h.type == STROBE__BLK_CLOCK) store(fr, STROBE__BLK_CLOCK, NO_THREAD, 0, now, now, p, n);
    p += n;
    len -= n;
  }
  return 0;
}

/* ======================================================================
 * >>threads
 * ====================================================================== */

/* Makes row `index` exist (lock held). Returns NULL when out of memory. */
static fthread *thread_grow(strobe_flight_recorder *fr, uint32_t index) {
  STROBE_ASSERT(strobe__mutex_held(&fr->lock));
  if (index >= fr->nthreads) {
    uint32_t n = fr->nthreads ? fr->nthreads : 16;
    while (n <= index) n *= 2;
    fthread *p = realloc(fr->threads, (size_t)n * sizeof *p);
    if (!p) return NULL;
    memset(p + fr->nthreads, 0, (size_t)(n - fr->nthreads) * sizeof *p);
    fr->threads = p;
    fr->nthreads = n;
  }
  return &fr->threads[index];
}

/* ======================================================================
 * >>resync
 * A refused EVENTS block leaves a hole in its thread's stream; the blocks
 * after it would then close the wrong scopes in a reader. So once a block
 * of a thread is refused, the rest of that thread's blocks are refused too
 * until the next flush, when the writer's buffer for it is empty: then a
 * LOST marker carrying the thread's true depth (as the stream shows it) goes
 * in first, exactly at the hole, and the refused events are added to what
 * the writer reports in LOST blocks. A reader closes the scopes the hole
 * swallowed as lost, and counts the refused events as lost.
 * ====================================================================== */

static void resync(strobe_flight_recorder *fr) {
  STROBE_ASSERT(strobe__drain_held());
  fr->resync_any = 0;
  for (uint32_t i = 0; i < fr->nthreads; i++) {
    fthread *ft = &fr->threads[i];
    if (ft->ended) ft->resync = 0; /* nothing follows a THREAD_END */
    if (ft->resync) {
      if (ft->tr.pend) { /* a number's payload is still to come: the marker would split it */
        fr->resync_any = 1;
      } else {
        uint64_t hole = ft->hole > UINT32_MAX ? UINT32_MAX : ft->hole;
        strobe__event m = {ft->tr.last_ts, STROBE__EV_LOST | (ft->tr.depth << 8), (uint32_t)hole};
        strobe__writer_events(fr->writer, i, &m, 1);
        ft->resync = 0;
        ft->hole = 0;
      }
    }
    if (ft->lost_dirty) {
      strobe__writer_lost(fr->writer, i, ft->lifetime_lost + ft->ring_lost);
      ft->lost_dirty = 0;
    }
  }
}

/* ======================================================================
 * >>trigger
 * ====================================================================== */

/* A spike of `ms` ending at `ts`. Returns 1 when it scheduled a dump. */
static int spike(strobe_flight_recorder *fr, uint64_t ts, double ms) {
  strobe__mutex_lock(&fr->lock);
  fr->spikes_seen++;
  fr->last_spike_ms = ms;
  int go = !fr->spike_pending && fr->spike_files < fr->desc.max_spike_files &&
           (!fr->triggered || (int64_t)(ts - fr->last_trigger) >= (int64_t)fr->cooldown_ticks);
  if (go) {
    fr->spike_pending = 1;
    fr->spike_due = ts + fr->post_ticks;
    fr->triggered = 1;
    fr->last_trigger = ts;
    fr->spike_files++;
  } else {
    fr->spikes_suppressed++;
  }
  strobe__mutex_unlock(&fr->lock);
  return go;
}

static int watched(const strobe_flight_recorder *fr, uint32_t site) {
  return site < STROBE_MAX_SITES && (fr->watch[site >> 6] >> (site & 63) & 1u);
}

static void check(strobe_flight_recorder *fr, uint64_t ts, uint64_t d) {
  if ((int64_t)d > 0 && d > fr->thr_ticks) spike(fr, ts, (double)d * fr->ns_per_tick / 1e6);
}

/* Following a thread's stream: depth for >>resync, watched scopes and frame
 * marks for the trigger. One step per kind that matters. */
static void follow_begin(strobe_flight_recorder *fr, track *tr, const strobe__event *e) {
  tr->depth++;
  if (watched(fr, e->data) && tr->nopen < WATCH_NEST) {
    tr->open[tr->nopen].depth = tr->depth;
    tr->open[tr->nopen].ts = e->ts;
    tr->nopen++;
  }
}

/* An unwound END (`measured` 0) closes the scope but is no duration: it never triggers. */
static void follow_end(strobe_flight_recorder *fr, track *tr, const strobe__event *e, int measured) {
  if (tr->depth == 0) return; /* its BEGIN predates the recorder */
  if (tr->nopen && tr->open[tr->nopen - 1].depth == tr->depth) {
    tr->nopen--;
    if (measured) check(fr, e->ts, e->ts - tr->open[tr->nopen].ts);
  }
  tr->depth--;
}

static void follow_frame(strobe_flight_recorder *fr, track *tr, const strobe__event *e) {
  if (!watched(fr, e->data)) return;
  if (tr->frame_ts) check(fr, e->ts, e->ts - tr->frame_ts);
  tr->frame_ts = e->ts;
}

/* An operation event: an END's payload slots carry its start (checked above in follow). */
static void follow_op(track *tr, const strobe__event *e) {
  tr->op_end = strobe__opev_sub(e->data) == STROBE__OPEV_END;
  tr->op_slot = 0;
  tr->op_ts = e->ts;
}

/* Events were dropped here: what was open deeper is gone, and so may be frame marks. */
static void follow_lost(track *tr, const strobe__event *e) {
  tr->depth = e->kind >> 8;
  while (tr->nopen && tr->open[tr->nopen - 1].depth > tr->depth) tr->nopen--;
  tr->frame_ts = 0;
}

static void follow(strobe_flight_recorder *fr, track *tr, const strobe__event *ev, size_t n) {
  STROBE_ASSERT(strobe__drain_held());
  for (size_t i = 0; i < n; i++) {
    const strobe__event *e = &ev[i];
    uint32_t kind = e->kind & 0xffu;
    if (tr->pend) {
      if (kind == STROBE__EV_PAYLOAD) {
        tr->pend--;
        /* An operation END's third slot: its start ticks and kind (probe/probe.h). */
        if (tr->op_end && tr->op_slot++ == 2 && (e->data & 0xffu) == STROBE_OP_PASS && fr->watch_passes)
          check(fr, tr->op_ts, tr->op_ts - e->ts);
        continue;
      }
      tr->pend = 0; /* as the writer does: the half event is dropped */
    }
    tr->op_end = 0;
    switch (kind) {
      case STROBE__EV_BEGIN: follow_begin(fr, tr, e); break;
      case STROBE__EV_END: follow_end(fr, tr, e, 1); break;
      case STROBE__EV_UNWOUND: follow_end(fr, tr, e, 0); break;
      case STROBE__EV_FRAME: follow_frame(fr, tr, e); break;
      case STROBE__EV_LOST: follow_lost(tr, e); break;
      case STROBE__EV_OP: follow_op(tr, e); break;
      case STROBE__EV_PAYLOAD: continue; /* its event predates the recorder */
      default: break;
    }
    tr->pend = strobe__payload_slots(e->kind, e->data);
    tr->last_ts = e->ts;
  }
}

/* ======================================================================
 * >>consumer — callbacks on the drain thread
 * ====================================================================== */

static void on_site(void *ctx, uint32_t id, const strobe_site *s) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_flight_recorder *fr = ctx;
  /* The ring writer is not told: its SITES blocks would not be kept anyway. */
  if (fr->thr_ticks && id < STROBE_MAX_SITES && s->name && !strcmp(s->name, fr->spike_site) &&
      (strobe__site_timed(s->kind) || s->kind == STROBE_SITE_FRAME))
    fr->watch[id >> 6] |= 1ull << (id & 63);
  strobe__mutex_lock(&fr->lock);
  if (id >= fr->site_limit) fr->site_limit = id + 1;
  strobe__mutex_unlock(&fr->lock);
}

static void on_label(void *ctx, uint32_t id, const char *text) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_flight_recorder *fr = ctx;
  (void)text; /* as sites: every dump defines the labels it may need from the registry */
  strobe__mutex_lock(&fr->lock);
  if (id >= fr->label_limit) fr->label_limit = id + 1;
  strobe__mutex_unlock(&fr->lock);
}

static void on_thread(void *ctx, uint32_t index, uint64_t tid, const char *name, uint64_t lost) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_flight_recorder *fr = ctx;
  strobe__mutex_lock(&fr->lock);
  fthread *ft = thread_grow(fr, index);
  if (ft) {
    if (!ft->defined && !ft->end_stored) ft->lifetime_lost = lost; /* first sight */
    ft->defined = 1;
    ft->os_tid = tid;
    snprintf(ft->name, sizeof ft->name, "%s", name ? name : "");
  } else if (!fr->writer_error) {
    fr->writer_error = STROBE_ENOMEM;
  }
  strobe__mutex_unlock(&fr->lock);
  if (ft) strobe__writer_thread(fr->writer, index, tid, name, lost);
}

static void on_lost(void *ctx, uint32_t index, uint64_t lost) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_flight_recorder *fr = ctx;
  fthread *ft = thread_row(fr, index);
  if (!ft) return;
  ft->lifetime_lost = lost;
  strobe__writer_lost(fr->writer, index, lost + ft->ring_lost);
}

static void on_events(void *ctx, uint32_t index, const strobe__event *ev, size_t n) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_flight_recorder *fr = ctx;
  fthread *ft = thread_row(fr, index);
  if (!ft) return; /* its row could not be allocated: nothing of it can be dumped */
  follow(fr, &ft->tr, ev, n);
  strobe__writer_events(fr->writer, index, ev, n);
}

static void on_samples(void *ctx, const strobe__cpu_sample *s, size_t n, const uint32_t *frames) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_flight_recorder *fr = ctx;
  strobe__writer_samples(fr->writer, s, n, frames); /* SAMPLES blocks kept in the ring; dumps define the functions */
}

static void on_thread_end(void *ctx, uint32_t index) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_flight_recorder *fr = ctx;
  fthread *ft = thread_row(fr, index);
  if (!ft) return;
  ft->ended = 1;
  strobe__writer_thread_end(fr->writer, index);
}

/* A UI-tree snapshot: kept in the ring like any block, so it ages out with
 * the events around it and every dump that still holds it carries it. */
static uint64_t on_tree(void *ctx, const strobe__tree *t) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_flight_recorder *fr = ctx;
  return strobe__writer_tree(fr->writer, t);
}

/* Lock held. */
static void take_snapshot(strobe_flight_recorder *fr, snapshot *s) {
  STROBE_ASSERT(strobe__mutex_held(&fr->lock));
  s->off = fr->head;
  s->seq = fr->head_seq;
  s->count = fr->count;
  s->end_ticks = strobe__now();
  fr->dumping = 1;
  fr->pin_seq = fr->head_seq;
}

static void on_tick(void *ctx, uint64_t now) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_flight_recorder *fr = ctx;
  if (now - fr->last_clock >= fr->clock_ticks) {
    strobe__writer_clock(fr->writer, strobe__now(), strobe__mono_ns());
    fr->last_clock = now;
  }
  /* A spike is dumped once a whole drain pass started after it was due,
   * so every thread's events up to then are in the ring. */
  strobe__mutex_lock(&fr->lock);
  int spike_ready = fr->spike_pending && !fr->dumping && fr->has_worker &&
                    (int64_t)(fr->prev_tick - fr->spike_due) >= 0;
  strobe__mutex_unlock(&fr->lock);
  int requested = __atomic_exchange_n(&fr->flush_requested, 0, __ATOMIC_ACQ_REL);
  if (requested || spike_ready || now - fr->last_flush >= fr->flush_ticks) {
    strobe__writer_flush(fr->writer);
    fr->last_flush = now;
    if (fr->resync_any) resync(fr); /* every thread's buffer is empty right now */
  }
  strobe__mutex_lock(&fr->lock);
  if (now > fr->age_ticks) {
    uint64_t cutoff = now - fr->age_ticks;
    while (can_evict(fr) && (int64_t)(at(fr, fr->head)->last - cutoff) < 0) evict_head(fr);
  }
  if (spike_ready && fr->spike_pending && !fr->dumping) {
    take_snapshot(fr, &fr->job_snap);
    fr->job = 1;
    fr->spike_pending = 0;
    pthread_cond_signal(&fr->work_cond);
  }
  int werr = strobe__writer_error(fr->writer);
  if (werr) fr->writer_error = werr; /* sticky, like the writer's own */
  strobe__mutex_unlock(&fr->lock);
  fr->prev_tick = now;
}

/* ======================================================================
 * >>dump — a snapshot to a file descriptor, without holding the lock
 * ====================================================================== */

typedef struct dthread {
  uint32_t index;
  uint64_t os_tid;
  char name[STROBE__THREAD_NAME_MAX];
} dthread;

static int fd_sink(void *ctx, const void *data, size_t len) { return strobe__write_all(*(int *)ctx, data, len); }

/* Writes the snapshot as a complete capture through a writer of its own:
 * header, SITES and THREAD, the retained blocks as they are, and the footer
 * with the events and losses of those blocks. The caller holds the pin
 * (fr->dumping) and releases it afterwards. */
static int write_dump(strobe_flight_recorder *fr, const snapshot *s, int fd) {
  STROBE_ASSERT(!strobe__drain_held()); /* file I/O: never on the drain thread */
  /* Threads the retained blocks name, and the time span, under the lock:
   * the pinned entries and the rows they reference cannot go away. */
  strobe__mutex_lock(&fr->lock);
  STROBE_ASSERT(fr->dumping);
  uint32_t n = 0;
  for (uint32_t i = 0; i < fr->nthreads; i++) n += fr->threads[i].defined && fr->threads[i].refs > 0;
  dthread *t = calloc(n ? n : 1, sizeof *t);
  uint32_t k = 0;
  for (uint32_t i = 0; t && i < fr->nthreads && k < n; i++) {
    const fthread *ft = &fr->threads[i];
    if (!ft->defined || ft->refs == 0) continue;
    t[k].index = i;
    t[k].os_tid = ft->os_tid;
    memcpy(t[k].name, ft->name, sizeof t[k].name);
    k++;
  }
  uint64_t first, last;
  event_range(fr, s->off, s->count, &first, &last);
  uint32_t site_limit = fr->site_limit, label_limit = fr->label_limit;
  strobe__mutex_unlock(&fr->lock);
  if (!t) return STROBE_ENOMEM;

  strobe__writer *w = NULL;
  strobe__writer_desc wd = {"flight-recorder", fr->desc.flush_interval_ms, fr->desc.compression_level,
                            fr->cost.scope_ns, fr->cost.event_ns, fd_sink, &fd, NULL};
  int rc = strobe__writer_create_at(&wd, first ? first : s->end_ticks, &w);
  if (!rc) {
    for (uint32_t id = 1; id < site_limit; id++) {
      const strobe_site *site = strobe__site_get(id);
      if (site) strobe__writer_site(w, id, site);
    }
    for (uint32_t id = 1; id < label_limit; id++) {
      const char *label = strobe__label_get(id);
      if (label) strobe__writer_label(w, id, label);
    }
    for (uint32_t i = 0; i < k; i++) strobe__writer_thread(w, t[i].index, t[i].os_tid, t[i].name, 0);
    strobe__writer_sample_functions(w); /* every function a retained SAMPLES block may name */
    rc = strobe__writer_flush(w);
  }
  free(t);

  /* The retained blocks, oldest first; each written one lets eviction pass it. */
  size_t off = s->off;
  for (uint64_t i = 0; i < s->count && !rc; i++) {
    strobe__mutex_lock(&fr->lock);
    fr->pin_seq = s->seq + i;
    off = next_start(fr, off);
    entry e = *at(fr, off);
    strobe__mutex_unlock(&fr->lock);
    strobe__block_info info = {e.type, e.thread, e.count, e.first, e.last};
    strobe__writer_block(w, &info, at(fr, off) + 1, e.size);
    rc = strobe__writer_error(w);
    off += entry_bytes(e.size);
  }
  if (!rc) {
    strobe_misuse m = strobe__misuse_since(&fr->misuse_base);
    strobe__writer_drain_cost(w, strobe__drain_cost_since(&fr->drain_base)); /* since the recorder started: its dumps are windows of it */
    strobe__writer_calls(w, strobe__trace_stats_since(&fr->trace_base));
    strobe_sampler_status st = strobe_sampler_query_status();
    strobe__writer_sampler(w, &st, strobe__sampler_stats_since(&fr->sampler_base));
    rc = strobe__writer_finish(w, s->end_ticks, &m);
  }
  strobe__writer_destroy(w);
  return rc;
}

/* Releases the pin and records the outcome. */
static void dump_done(strobe_flight_recorder *fr, int rc, int spiked, const char *path) {
  strobe__mutex_lock(&fr->lock);
  fr->dumping = 0;
  if (rc == 0) {
    fr->dumps_written++;
    if (spiked) {
      fr->spikes_dumped++;
      snprintf(fr->last_path, sizeof fr->last_path, "%s", path);
    }
  } else if (spiked) {
    fr->dump_errors++;
    fr->last_error = rc;
  }
  pthread_cond_broadcast(&fr->done_cond);
  strobe__mutex_unlock(&fr->lock);
}

/* ======================================================================
 * >>worker — writes spike dumps off the drain thread
 * ====================================================================== */

static int write_spike(strobe_flight_recorder *fr, const snapshot *s, uint64_t seq, char path[STROBE_FLIGHT_PATH_MAX]) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  unsigned long long unix_ms = (unsigned long long)ts.tv_sec * 1000ull + (unsigned long long)ts.tv_nsec / 1000000ull;
  char tmp[STROBE_FLIGHT_PATH_MAX + 8]; /* + ".part" */
  snprintf(path, STROBE_FLIGHT_PATH_MAX, "%s/spike-%llu-%llu.strobe", fr->spike_dir, unix_ms, (unsigned long long)seq);
  snprintf(tmp, sizeof tmp, "%s.part", path);
  /* Written under a temporary name and renamed whole: a watcher of the
   * directory never sees a half-written capture. */
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int rc = fd < 0 ? STROBE_EIO : write_dump(fr, s, fd);
  if (fd >= 0 && close(fd) != 0 && !rc) rc = STROBE_EIO;
  if (!rc && strobe__replace_file(tmp, path) != 0) rc = STROBE_EIO;
  if (rc && fd >= 0) unlink(tmp);
  return rc;
}

static void *worker_main(void *arg) {
  strobe_flight_recorder *fr = arg;
  strobe__mutex_lock(&fr->lock);
  for (;;) {
    while (!fr->job && !fr->quit) strobe__cond_wait(&fr->work_cond, &fr->lock);
    if (!fr->job) break;
    snapshot s = fr->job_snap;
    fr->job = 0;
    uint64_t seq = ++fr->spike_seq;
    strobe__mutex_unlock(&fr->lock);
    char path[STROBE_FLIGHT_PATH_MAX];
    int rc = write_spike(fr, &s, seq, path);
    dump_done(fr, rc, 1, path);
    strobe__mutex_lock(&fr->lock);
  }
  strobe__mutex_unlock(&fr->lock);
  return NULL;
}

/* ======================================================================
 * >>api
 * ====================================================================== */

static void resolve(strobe_flight_recorder_desc *d) {
  if (!d->max_mib) d->max_mib = DEFAULT_MAX_MIB;
  if (!d->max_age_ms) d->max_age_ms = DEFAULT_MAX_AGE_MS;
  if (!d->flush_interval_ms) d->flush_interval_ms = DEFAULT_FLUSH_MS;
  if (!d->compression_level) d->compression_level = DEFAULT_LEVEL;
  if (!d->spike_site || !d->spike_site[0]) d->spike_site = DEFAULT_SPIKE_SITE;
  if (!d->cooldown_ms) d->cooldown_ms = DEFAULT_COOLDOWN_MS;
  if (!d->max_spike_files) d->max_spike_files = DEFAULT_MAX_SPIKE_FILES;
}

static int validate(const strobe_flight_recorder_desc *d) {
  if (d->max_mib > MAX_MAX_MIB || d->max_age_ms > MAX_DAY_MS || d->flush_interval_ms > MAX_FLUSH_MS)
    return STROBE_EINVAL;
  if (d->compression_level < 1 || d->compression_level > 19) return STROBE_EINVAL;
  if (d->cooldown_ms > MAX_DAY_MS || d->post_ms > MAX_POST_MS) return STROBE_EINVAL;
  double thr = d->spike_threshold_ms;
  if (!(thr == 0.0 || (thr >= MIN_THRESHOLD_MS && thr <= MAX_THRESHOLD_MS))) return STROBE_EINVAL; /* NaN too */
  if (strlen(d->spike_site) > SPIKE_SITE_MAX) return STROBE_EINVAL;
  if (thr > 0.0 && (!d->spike_dir || !d->spike_dir[0])) return STROBE_EINVAL;
  if (d->spike_dir && strlen(d->spike_dir) > SPIKE_DIR_MAX) return STROBE_EINVAL;
  return 0;
}

strobe_flight_recorder_desc strobe_flight_recorder_query_desc(const strobe_flight_recorder *fr) {
  if (fr) return fr->desc;
  strobe_flight_recorder_desc d = {0};
  resolve(&d);
  return d;
}

/* Tells the spike worker to quit and waits for it; it finishes a job it has
 * before it looks at quit. */
static void stop_worker(strobe_flight_recorder *fr) {
  if (!fr->has_worker) return;
  strobe__mutex_lock(&fr->lock);
  fr->quit = 1;
  pthread_cond_signal(&fr->work_cond);
  strobe__mutex_unlock(&fr->lock);
  pthread_join(fr->worker, NULL);
}

static void destroy(strobe_flight_recorder *fr) {
  strobe__writer_destroy(fr->writer);
  if (fr->mem) strobe__footprint_add(STROBE__FOOT_FLIGHT_RECORDER, -(int64_t)fr->cap);
  free(fr->mem);
  free(fr->threads);
  pthread_cond_destroy(&fr->work_cond);
  pthread_cond_destroy(&fr->done_cond);
  strobe__mutex_destroy(&fr->lock);
  free(fr);
}

int strobe_flight_recorder_start(const strobe_flight_recorder_desc *desc, strobe_flight_recorder **out) {
  if (!out) return STROBE_EINVAL;
  *out = NULL;
  if (!STROBE__PROFILING) return STROBE_EFEATURE_DISABLED;
  strobe_flight_recorder_desc d = desc ? *desc : (strobe_flight_recorder_desc){0};
  resolve(&d);
  int rc = validate(&d);
  if (rc) return rc;

  strobe_flight_recorder *fr = calloc(1, sizeof *fr);
  if (!fr) return STROBE_ENOMEM;
  snprintf(fr->spike_site, sizeof fr->spike_site, "%s", d.spike_site);
  snprintf(fr->spike_dir, sizeof fr->spike_dir, "%s", d.spike_dir ? d.spike_dir : "");
  d.spike_site = fr->spike_site;
  d.spike_dir = d.spike_dir ? fr->spike_dir : NULL;
  fr->desc = d;
  strobe__mutex_init(&fr->lock);
  pthread_cond_init(&fr->work_cond, NULL);
  pthread_cond_init(&fr->done_cond, NULL);

  const strobe__clock_info *clk = strobe__clock();
  fr->ns_per_tick = clk->ns_per_tick;
  fr->flush_ticks = ms_to_ticks(d.flush_interval_ms, clk->ns_per_tick);
  fr->clock_ticks = (uint64_t)((double)CLOCK_PAIR_NS / clk->ns_per_tick);
  fr->age_ticks = ms_to_ticks(d.max_age_ms, clk->ns_per_tick);
  fr->thr_ticks = d.spike_threshold_ms > 0.0 ? ms_to_ticks(d.spike_threshold_ms, clk->ns_per_tick) : 0;
  if (d.spike_threshold_ms > 0.0 && fr->thr_ticks == 0) fr->thr_ticks = 1;
  /* "frame" is the frame however the application marks it: frame marks, or
   * pass operations (strobe_op_begin with STROBE_OP_PASS), begin to end. */
  fr->watch_passes = fr->thr_ticks && !strcmp(fr->spike_site, DEFAULT_SPIKE_SITE);
  fr->cooldown_ticks = ms_to_ticks(d.cooldown_ms, clk->ns_per_tick);
  fr->post_ticks = ms_to_ticks(d.post_ms, clk->ns_per_tick);

  /* The whole ring now, every page touched, so it is resident from the
   * start and the process does not creep up by max_mib as the ring's write
   * position sweeps through it. (A plain memset to zero after malloc may be
   * turned into calloc, which leaves fresh pages untouched.) */
  rc = STROBE_ENOMEM;
  fr->cap = (size_t)d.max_mib << 20;
  fr->mem = malloc(fr->cap);
  if (!fr->mem) goto fail;
  strobe__footprint_add(STROBE__FOOT_FLIGHT_RECORDER, (int64_t)fr->cap);
  size_t step = strobe__host_page_size();
  for (size_t i = 0; i < fr->cap; i += step) ((volatile uint8_t *)fr->mem)[i] = 0;

  fr->cost = strobe__measure_cost();
  fr->drain_base = strobe__drain_query_cost();
  fr->trace_base = strobe_trace_query_stats();
  fr->sampler_base = strobe_sampler_query_stats();
  fr->misuse_base = strobe_query_misuse();
  fr->last_flush = fr->last_clock = fr->prev_tick = strobe__now();
  strobe__writer_desc wd = {"flight-recorder", d.flush_interval_ms, d.compression_level, fr->cost.scope_ns,
                            fr->cost.event_ns, ring_sink, fr, NULL};
  rc = strobe__writer_create(&wd, &fr->writer);
  if (rc) goto fail;
  strobe__writer_tree_limit(fr->writer, UINT32_MAX); /* the ring bounds its snapshots (strobe__writer_tree_limit) */
  if (fr->thr_ticks) {
    rc = STROBE_ENOMEM;
    if (pthread_create(&fr->worker, NULL, worker_main, fr) != 0) goto fail;
    fr->has_worker = 1;
  }
  fr->consumer = (strobe__consumer){fr, on_site, on_label, on_thread, on_lost, on_events, on_thread_end, on_tick, on_tree,
                                   on_samples,
                                   NULL /* attachments and deep captures: capture files only (strobe/deep.h) */,
                                   NULL /* follow() reads converted events (collect.h >>ring runs) */};
  rc = strobe__consumer_add(&fr->consumer);
  if (rc) goto fail;
  *out = fr;
  return 0;
fail:
  stop_worker(fr);
  destroy(fr);
  return rc;
}

int strobe_flight_recorder_stop(strobe_flight_recorder *fr) {
  if (!fr) return 0;
  strobe__consumer_remove(&fr->consumer); /* no callback runs after this */
  fr->detached = 1;
  int rc = 0;
  strobe__mutex_lock(&fr->lock);
  while (fr->dumping) strobe__cond_wait(&fr->done_cond, &fr->lock);
  int pending = fr->spike_pending && fr->has_worker;
  uint64_t before = fr->dump_errors;
  strobe__mutex_unlock(&fr->lock);
  if (pending) { /* the spike was drained; its post_ms is cut short */
    strobe__writer_flush(fr->writer);
    strobe__mutex_lock(&fr->lock);
    take_snapshot(fr, &fr->job_snap);
    fr->job = 1;
    fr->spike_pending = 0;
    pthread_cond_signal(&fr->work_cond);
    strobe__mutex_unlock(&fr->lock);
  }
  stop_worker(fr);
  if (pending && fr->dump_errors != before) rc = fr->last_error;
  destroy(fr);
  return rc;
}

int strobe_flight_recorder_dump(strobe_flight_recorder *fr, const char *path) {
  if (!fr || !path || !path[0]) return STROBE_EINVAL;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return STROBE_EIO;
  snapshot s;
  for (;;) {
    /* The first pass delivers every event written before it began. The
     * request is made after it, so whichever pass takes it (the second one,
     * or the drain thread's own, which then finishes before the second can
     * start) seals all of them into the ring. Asking before the first pass
     * could let a drain-thread pass already under way take the request and
     * flush before the last events were delivered. */
    strobe__drain_now();
    __atomic_store_n(&fr->flush_requested, 1, __ATOMIC_RELEASE);
    strobe__drain_now();
    strobe__mutex_lock(&fr->lock);
    if (!fr->dumping) {
      take_snapshot(fr, &s);
      strobe__mutex_unlock(&fr->lock);
      break;
    }
    while (fr->dumping) strobe__cond_wait(&fr->done_cond, &fr->lock);
    strobe__mutex_unlock(&fr->lock); /* then seal again: the wait may have been long */
  }
  int rc = write_dump(fr, &s, fd);
  dump_done(fr, rc, 0, NULL);
  struct stat st;
  int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (close(fd) != 0 && !rc) rc = STROBE_EIO;
  if (rc && regular) unlink(path); /* never a device or a FIFO */
  return rc;
}

int strobe_flight_recorder_note(strobe_flight_recorder *fr, uint64_t duration_ns) {
  if (!fr) return STROBE_EINVAL;
  if (!fr->thr_ticks) return STROBE_ESTATE;
  double ms = (double)duration_ns / 1e6;
  if (ms <= fr->desc.spike_threshold_ms) return 0;
  int go = spike(fr, strobe__now(), ms);
  strobe__drain_wake();
  return go;
}

strobe_flight_recorder_stats strobe_flight_recorder_query_stats(strobe_flight_recorder *fr) {
  strobe_flight_recorder_stats s;
  memset(&s, 0, sizeof s);
  if (!fr) return s;
  strobe__mutex_lock(&fr->lock);
  s.capacity_bytes = fr->cap;
  s.retained_bytes = retained_bytes(fr);
  s.retained_blocks = fr->count;
  s.retained_events = fr->events;
  uint64_t first, last;
  event_range(fr, fr->head, fr->count, &first, &last);
  s.retained_seconds = (double)(int64_t)(last - first) * fr->ns_per_tick / 1e9;
  s.evicted_blocks = fr->evicted;
  s.dropped_blocks = fr->dropped_blocks;
  s.dropped_events = fr->dropped_events;
  s.dumps_written = fr->dumps_written;
  s.dump_errors = fr->dump_errors;
  s.spikes_seen = fr->spikes_seen;
  s.spikes_dumped = fr->spikes_dumped;
  s.spikes_suppressed = fr->spikes_suppressed;
  s.last_spike_ms = fr->last_spike_ms;
  s.error = fr->writer_error ? fr->writer_error : fr->last_error;
  memcpy(s.last_spike_path, fr->last_path, sizeof s.last_spike_path);
  strobe__mutex_unlock(&fr->lock);
  return s;
}
