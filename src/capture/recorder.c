/*
 * recorder.c — the capture-file consumer: receives drained events on the
 * drain thread, encodes them with the capture writer and writes each block
 * with one write(2). With its crash journal (docs/recording.md §Crash
 * journal) it writes every pass that delivered events, followed by a
 * JOURNAL_POS block, and a crash loses nothing `strobe recover` cannot add
 * back; without one a SIGKILL loses at most the last flush interval.
 * The flush is deadline-driven (docs/recording.md §Crash loss): pending
 * events are written when the oldest of them is a quarter of
 * flush_interval_ms old (earlier when the drain thread has lately run later
 * than the rest of the interval), so the
 * bound holds when the machine is loaded.
 *
 * Owns: the file descriptor, the journal's opening and removal, flush and clock-pair timing, the capture's
 * misuse baseline, and the list of live recorders that an exit handler
 * stops cleanly when the application forgets to.
 * Must never: block an instrumented thread (it runs only on the drain thread
 * and the thread calling start/stop).
 */
#include "strobe/record.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/crash.h"
#include "collect/collect.h"
#include "format/capture_writer.h"
#include "platform/clock.h"
#include "platform/host.h"
#include "platform/invariant.h"
#include "platform/io.h"

#define DEFAULT_FLUSH_MS 100u
#define DEFAULT_LEVEL 1
#define CLOCK_PAIR_NS 1000000000ull /* one calibration pair a second */

struct strobe_recorder {
  strobe__consumer consumer;
  strobe__writer *writer;
  int fd;
  uint32_t pid; /* the process that started it: a forked child shares fd but must never write to it */
  uint64_t flush_ticks;   /* flush interval in ticks */
  uint64_t clock_ticks;   /* calibration-pair interval in ticks */
  uint64_t last_flush, last_clock;
  uint64_t pending_since;  /* ticks of the oldest event not yet written; 0: none */
  uint64_t last_tick;      /* the previous on_tick */
  uint64_t late_max;       /* longest gap between ticks lately (decays at each flush) */
  uint64_t cost_max;       /* longest flush lately (decays at each flush) */
  strobe_misuse misuse_base;
  strobe_trace_stats trace_base; /* call tracing's counts when it started (CALLS blocks) */
  strobe_sampler_stats sampler_base; /* the sampler's counts when it started (SAMPLER blocks) */
  strobe__drain_cost drain_base; /* the drain's cost when recording started */
  int flush_requested;    /* atomic: strobe_record_flush asks the drain thread to flush */
  uint64_t bytes;         /* atomic mirror of the writer's count, for strobe_record_query_stats */
  int error;              /* atomic mirror of the writer's first error */
  int sink_state;         /* atomic: 0 idle, 1 a block being written, 2 closed by a crash (crash.h) */
  int journal;            /* 1: this capture's crash journal is open (docs/recording.md §Crash journal) */
  strobe_recorder *next;
};

#define JOURNAL_POS_MAX 1024u /* = STROBE__JOURNAL_REGIONS: every live state of one journal */
static uint32_t g_jpos_index[JOURNAL_POS_MAX]; /* drain thread only */
static uint64_t g_jpos_count[JOURNAL_POS_MAX];

static strobe__mutex g_live_lock = STROBE__MUTEX_INIT;
static strobe_recorder *g_live;
static pthread_once_t g_atexit_once = PTHREAD_ONCE_INIT;

static int file_sink(void *ctx, const void *data, size_t len) {
  strobe_recorder *r = ctx;
  if (!strobe__crash_sink_enter(&r->sink_state)) return STROBE_EIO; /* the file ends with its CRASH block */
  int rc = strobe__write_all(r->fd, data, len);
  strobe__crash_sink_leave(&r->sink_state);
  return rc;
}

/* >>consumer callbacks (drain thread) */
static void on_site(void *ctx, uint32_t id, const strobe_site *s) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_recorder *r = ctx;
  strobe__writer_site(r->writer, id, s);
  if (r->journal) strobe__journal_site(id, s);
}

static void on_label(void *ctx, uint32_t id, const char *text) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_recorder *r = ctx;
  strobe__writer_label(r->writer, id, text);
  if (r->journal) strobe__journal_label(id, text);
}

static void on_thread(void *ctx, uint32_t index, uint64_t tid, const char *name, uint64_t lost) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_recorder *r = ctx;
  strobe__writer_thread(r->writer, index, tid, name, lost);
}

static void on_lost(void *ctx, uint32_t index, uint64_t lost) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_recorder *r = ctx;
  strobe__writer_lost(r->writer, index, lost);
}

/* Events from `ts` on are about to be written: the flush deadline counts
 * from the oldest. The run's first event is its oldest; a time outside the
 * last few intervals (a payload slot, a VALUE's time left to the drain, a
 * clock oddity) counts as recorded now. */
static void pending_from(strobe_recorder *r, uint64_t ts) {
  uint64_t now = strobe__now();
  if (ts > now || now - ts > 4 * r->flush_ticks) ts = now;
  if (!r->pending_since || ts < r->pending_since) r->pending_since = ts;
}

static void on_events(void *ctx, uint32_t index, const strobe__event *ev, size_t n) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_recorder *r = ctx;
  if (n) pending_from(r, ev[0].ts);
  strobe__writer_events(r->writer, index, ev, n);
}

/* The drain's only consumer: encodes the usual events from the ring (collect.h >>ring runs). */
static size_t on_ring_events(void *ctx, uint32_t index, strobe__ring_run *run) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_recorder *r = ctx;
  if (run->n) pending_from(r, run->ev[0].ts);
  return strobe__writer_ring_events(r->writer, index, run);
}

static void on_thread_end(void *ctx, uint32_t index) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_recorder *r = ctx;
  strobe__writer_thread_end(r->writer, index);
}

static uint64_t on_tree(void *ctx, const strobe__tree *t) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_recorder *r = ctx;
  return strobe__writer_tree(r->writer, t);
}

static void on_samples(void *ctx, const strobe__cpu_sample *s, size_t n, const uint32_t *frames) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_recorder *r = ctx;
  strobe__writer_samples(r->writer, s, n, frames);
}

static void write_sampler(strobe_recorder *r) {
  strobe_sampler_status st = strobe_sampler_query_status();
  strobe__writer_sampler(r->writer, &st, strobe__sampler_stats_since(&r->sampler_base));
}

static uint64_t on_content(void *ctx, const strobe__content *c) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_recorder *r = ctx;
  return strobe__writer_content(r->writer, c);
}

static void on_tick(void *ctx, uint64_t now) {
  STROBE_ASSERT(strobe__drain_held());
  strobe_recorder *r = ctx;
  if (now - r->last_clock >= r->clock_ticks) {
    strobe__writer_clock(r->writer, strobe__now(), strobe__mono_ns());
    strobe__writer_drain_cost(r->writer, strobe__drain_cost_since(&r->drain_base));
    strobe__writer_calls(r->writer, strobe__trace_stats_since(&r->trace_base));
    write_sampler(r);
    r->last_clock = now;
  }
  uint64_t gap = now - r->last_tick;
  r->last_tick = now;
  if (gap > r->late_max) r->late_max = gap;
  /* Written before the oldest pending event is flush_interval old. The
   * drain thread runs late on a loaded machine (ticks 50 ms apart were seen
   * with every CPU busy, docs/recording.md §Crash loss) and the flush takes
   * time, so the flush starts when the oldest is a quarter of the interval
   * old, or earlier still when the ticks have lately come later than three
   * quarters of it (late_max) or flushes taken longer (cost_max). */
  uint64_t guard = r->late_max + r->cost_max;
  if (guard < r->flush_ticks / 4 * 3) guard = r->flush_ticks / 4 * 3;
  if (guard > r->flush_ticks - r->flush_ticks / 8) guard = r->flush_ticks - r->flush_ticks / 8;
  int due = r->pending_since && now - r->pending_since >= r->flush_ticks - guard;
  /* With a journal, every pass that delivered events writes them: the drain
   * lets journaled producers reuse their slots only once they are in the
   * file, and the JOURNAL_POS block after them says how far it holds each
   * thread (docs/capture-format.md §Journal). */
  if (r->journal && r->pending_since) due = 1;
  if (due || now - r->last_flush >= r->flush_ticks || __atomic_exchange_n(&r->flush_requested, 0, __ATOMIC_ACQ_REL)) {
    strobe__writer_flush(r->writer);
    if (r->journal) {
      strobe__journal_die_point(1);
      uint32_t n = strobe__journal_positions(g_jpos_index, g_jpos_count, JOURNAL_POS_MAX);
      strobe__writer_journal_pos(r->writer, g_jpos_index, g_jpos_count, n);
    }
    uint64_t done = strobe__now();
    if (done - now > r->cost_max) r->cost_max = done - now;
    r->late_max -= r->late_max / 16;
    r->cost_max -= r->cost_max / 16;
    r->last_flush = done;
    r->pending_since = 0;
  }
  __atomic_store_n(&r->bytes, strobe__writer_bytes(r->writer), __ATOMIC_RELAXED);
  __atomic_store_n(&r->error, strobe__writer_error(r->writer), __ATOMIC_RELAXED);
}

/* >>lifecycle */
/* Threads recording now whose state is not in the journal just opened: they attached before it
 * (docs/recording.md §Crash journal). */
static uint32_t threads_outside(void) {
  uint32_t n = 0;
  strobe__threads_lock();
  for (strobe__tstate *t = strobe__threads_head(); t; t = t->next) n += !strobe__journal_holds(t) && !t->exited;
  strobe__threads_unlock();
  return n;
}

/* PATH.journal (docs/recording.md §Crash journal); NULL when out of memory. */
static char *journal_path(const char *path) {
  size_t n = strlen(path);
  char *p = malloc(n + sizeof ".journal");
  if (p) {
    memcpy(p, path, n);
    memcpy(p + n, ".journal", sizeof ".journal");
  }
  return p;
}

static void stop_all_at_exit(void) {
  for (;;) {
    /* A forked child inherits its parent's recorders and their open files:
     * at its exit it closes none of them, or its footer would end the
     * parent's capture (docs/recording.md §Crash loss). */
    strobe__mutex_lock(&g_live_lock);
    strobe_recorder *r = g_live;
    while (r && r->pid != strobe__host_pid()) r = r->next;
    strobe__mutex_unlock(&g_live_lock);
    if (!r) return;
    strobe_record_stop(r);
  }
}

static void register_atexit(void) { atexit(stop_all_at_exit); }

int strobe_record_start(const strobe_record_desc *desc, strobe_recorder **out) {
  if (!out) return STROBE_EINVAL;
  *out = NULL;
  if (!STROBE__PROFILING) return STROBE_EFEATURE_DISABLED;
  if (!desc || !desc->path || !desc->path[0]) return STROBE_EINVAL;
  uint32_t flush_ms = desc->flush_interval_ms ? desc->flush_interval_ms : DEFAULT_FLUSH_MS;
  int level = desc->compression_level ? desc->compression_level : DEFAULT_LEVEL;
  if (flush_ms > 60000 || level < 1 || level > 19 || desc->no_journal < 0 || desc->no_journal > 1) return STROBE_EINVAL;

  const strobe__clock_info *clk = strobe__clock();
  strobe_recorder *r = calloc(1, sizeof *r);
  if (!r) return STROBE_ENOMEM;
  int rc = STROBE_EIO;
  r->fd = open(desc->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (r->fd < 0) goto fail;
  r->pid = strobe__host_pid();
  r->flush_ticks = (uint64_t)((double)flush_ms * 1e6 / clk->ns_per_tick);
  r->clock_ticks = (uint64_t)((double)CLOCK_PAIR_NS / clk->ns_per_tick);
  r->last_flush = r->last_clock = r->last_tick = strobe__now();
  r->misuse_base = strobe_query_misuse();
  strobe__cost cost = strobe__measure_cost();
  r->drain_base = strobe__drain_query_cost();
  r->trace_base = strobe_trace_query_stats();
  r->sampler_base = strobe_sampler_query_stats();
  /* The crash journal beside the file (docs/recording.md §Crash journal): without one, the capture says
   * why and records as before. */
  char note[96] = "on";
  uint64_t jid = 0;
  char *jpath = journal_path(desc->path);
  if (jpath) unlink(jpath); /* a journal of the file this start truncates */
  int jrc = desc->no_journal ? STROBE_ESTATE : jpath ? strobe__journal_open(jpath, &jid) : STROBE_ENOMEM;
  if (jrc == 0) r->journal = 1;
  uint32_t outside = jrc == 0 ? threads_outside() : 0;
  if (outside) snprintf(note, sizeof note, "on; %u thread(s) that attached before it stay outside it", outside);
  if (jrc) snprintf(note, sizeof note, "off: %s", desc->no_journal ? "no_journal"
                                              : jrc == STROBE_EBUSY ? "another capture of this process has the journal"
                                              : jrc == STROBE_EIO ? strerror(errno) : strobe_strerror(jrc));
  free(jpath);
  strobe__writer_desc wd = {"file", flush_ms, level, cost.scope_ns, cost.event_ns, file_sink, r, NULL};
  rc = strobe__writer_create_journaled(&wd, jid, note, &r->writer);
  if (rc) goto fail;
  strobe__writer_attach_limit(r->writer, desc->max_attachment_bytes);
  r->consumer = (strobe__consumer){r, on_site, on_label, on_thread, on_lost, on_events, on_thread_end, on_tick, on_tree,
                                   on_samples, on_content, on_ring_events};
  rc = strobe__consumer_add(&r->consumer);
  if (rc) goto fail;
  strobe__crash_watch(r->fd, &r->sink_state); /* only with strobe_desc.crash_handler */
  pthread_once(&g_atexit_once, register_atexit);
  strobe__mutex_lock(&g_live_lock);
  r->next = g_live;
  g_live = r;
  strobe__mutex_unlock(&g_live_lock);
  *out = r;
  return 0;
fail:
  if (r->journal) strobe__journal_close();
  strobe__writer_destroy(r->writer);
  if (r->fd >= 0) {
    close(r->fd);
    unlink(desc->path);
  }
  free(r);
  return rc;
}

int strobe_record_stop(strobe_recorder *r) {
  if (!r) return 0;
  strobe__mutex_lock(&g_live_lock);
  for (strobe_recorder **p = &g_live; *p; p = &(*p)->next) {
    if (*p == r) {
      *p = r->next;
      break;
    }
  }
  strobe__mutex_unlock(&g_live_lock);
  strobe__consumer_remove(&r->consumer);
  strobe__crash_unwatch(&r->sink_state);
  strobe__writer_drain_cost(r->writer, strobe__drain_cost_since(&r->drain_base));
  strobe__writer_calls(r->writer, strobe__trace_stats_since(&r->trace_base));
  write_sampler(r);
  strobe_misuse m = strobe__misuse_since(&r->misuse_base);
  int rc = strobe__writer_finish(r->writer, strobe__now(), &m);
  if (close(r->fd) != 0 && rc == 0) rc = STROBE_EIO;
  if (r->journal) strobe__journal_close(); /* a clean stop: the file holds everything */
  strobe__writer_destroy(r->writer);
  free(r);
  return rc;
}

int strobe_record_flush(strobe_recorder *r) {
  if (!r) return STROBE_EINVAL;
  /* First deliver every event written before this call (the drain thread's
   * own pass could otherwise take the request before they arrive), then
   * have the next pass's on_tick write them. */
  strobe__drain_now();
  __atomic_store_n(&r->flush_requested, 1, __ATOMIC_RELEASE);
  strobe__drain_now();
  return __atomic_load_n(&r->error, __ATOMIC_RELAXED);
}

strobe_record_stats strobe_record_query_stats(strobe_recorder *r) {
  strobe_record_stats s = {0};
  if (!r) return s;
  s.bytes = __atomic_load_n(&r->bytes, __ATOMIC_RELAXED);
  s.error = __atomic_load_n(&r->error, __ATOMIC_RELAXED);
  return s;
}
