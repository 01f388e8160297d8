/*
 * capture_writer.h — encodes drained events into capture-format blocks
 * (docs/capture-format.md) and hands whole blocks to a sink: a file, the
 * flight recorder's ring, or a live stream.
 *
 * Threading: a writer is used by one thread at a time (the drain thread, or
 * its owner once the consumer is removed).
 */
#ifndef STROBE_FORMAT_CAPTURE_WRITER_H
#define STROBE_FORMAT_CAPTURE_WRITER_H

#include "strobe/capture.h"
#include <stddef.h>
#include <stdint.h>

#include "platform/clock.h"
#include "strobe/strobe.h"
#include "probe/probe.h"
#include "strobe/sample.h"
#include "strobe/trace.h"

/* Receives one whole block (or the header) per call; returns 0 or a negative STROBE_E*. */
typedef int (*strobe__sink_fn)(void *ctx, const void *data, size_t len);

/* What a header says about the machine and the run. The library states
 * this process's; generators of synthetic captures (the CLI tests' files,
 * the CLI bench) pass fixed facts, so their files are the same everywhere. */
typedef struct strobe__header_facts {
  strobe__clock_info clock;
  uint64_t start_ticks;
  const char *arch;
  int assertions;
  uint64_t pid;
  uint32_t ring_events;
  uint32_t overflow;        /* strobe_overflow */
  uint32_t ring_events_max;
  uint64_t epoch_unix_ns;   /* CLOCK_REALTIME at the epoch; 0: not written */
  const char *boot_id;      /* the host boot whose CLOCK_MONOTONIC the clock is (a merge of one boot, or aligned on
                             * it: docs/cli.md §strobe merge); NULL or "": none written */
  const char *os;           /* the OS that wrote it ("linux", "windows"); NULL: this host's (strobe__host_os) */
} strobe__header_facts;

typedef struct strobe__writer_desc {
  const char *kind;             /* "file", "flight-recorder", "stream" */
  uint32_t flush_interval_ms;   /* recorded in the header */
  int compression_level;        /* zstd level */
  double overhead_per_scope_ns; /* recorded in the header: the calibration's ns per scope */
  double event_cost_ns;         /* recorded in the header: the calibration's ns per event */
  strobe__sink_fn sink;
  void *sink_ctx;
  const strobe__header_facts *facts; /* NULL: this process's */
} strobe__writer_desc;

typedef struct strobe__writer strobe__writer;

/* Creates a writer and emits the file header through the sink. */
int strobe__writer_create(const strobe__writer_desc *desc, strobe__writer **out);
/* The same with the header's start_ticks given (0 = now): a flight-recorder
 * dump starts at its oldest retained block, not when it is written. */
int strobe__writer_create_at(const strobe__writer_desc *desc, uint64_t start_ticks, strobe__writer **out);
/* The same for a capture file with a crash journal beside it (docs/capture-format.md
 * §Journal): the header names it (journal_id, 0: none) or says why there is none
 * (`journal`: "on" or "off: ...", NULL: nothing said). */
int strobe__writer_create_journaled(const strobe__writer_desc *desc, uint64_t journal_id, const char *journal,
                                    strobe__writer **out);
/* A writer that emits no header: its blocks continue a file whose header and
 * blocks are already written (strobe_capture_recover). */
int strobe__writer_create_appending(const strobe__writer_desc *desc, strobe__writer **out);
void strobe__writer_destroy(strobe__writer *w);

void strobe__writer_site(strobe__writer *w, uint32_t id, const strobe_site *site);
void strobe__writer_label(strobe__writer *w, uint32_t id, const char *text);
void strobe__writer_thread(strobe__writer *w, uint32_t index, uint64_t os_tid, const char *name, uint64_t lost);
void strobe__writer_lost(strobe__writer *w, uint32_t index, uint64_t lost);
void strobe__writer_events(strobe__writer *w, uint32_t index, const strobe__event *ev, size_t n);
/* The usual events of a ring run (collect.h >>ring runs), encoded straight
 * from their ring form: takes a prefix of run->ev (BEGIN, END and numbers of
 * sites in run->cache), advances run->open, run->open_site and
 * run->last_ts as the drain's conversion would, and returns how many ring
 * events it took (0 when out of memory: the drain converts them and calls
 * strobe__writer_events, which says so). */
struct strobe__ring_run;
size_t strobe__writer_ring_events(strobe__writer *w, uint32_t index, struct strobe__ring_run *run);
void strobe__writer_thread_end(strobe__writer *w, uint32_t index);
/* The drain's CPU time and the events it drained since the capture started
 * (docs/capture-format.md, DRAIN): readers keep the last one. */
void strobe__writer_drain(strobe__writer *w, uint64_t cpu_ns, uint64_t events);
#define strobe__writer_drain_cost(w, cost) \
  do {                                      \
    strobe__drain_cost c_ = (cost);         \
    strobe__writer_drain((w), c_.cpu_ns, c_.events); \
  } while (0)
/* A UI-tree snapshot as one TREE block (docs/capture-format.md), after the
 * sites it names, which the caller delivered. Returns the block's raw bytes,
 * or 0 when the writer refused it: STROBE_TREE_MAX_SNAPSHOTS were written
 * (counted, and said in the TREE_TOTALS block at finish), or an error. */
struct strobe__tree;
uint64_t strobe__writer_tree(strobe__writer *w, const struct strobe__tree *t);
/* Another bound on snapshots than STROBE_TREE_MAX_SNAPSHOTS: the flight
 * recorder's ring writer lives as long as the recorder, whose ring (age and
 * size) bounds what it keeps; each dump counts what it carries. */
void strobe__writer_tree_limit(strobe__writer *w, uint32_t limit);
/* An attachment as one ATTACH block, or a deep capture as one DEEP block
 * (docs/capture-format.md), after the sites delivered so far. An
 * attachment's content is stored once per resource id, and only while the
 * capture's content bytes stay within its bound; otherwise the block says
 * where it is (stored earlier) or that it was cut (counted). Returns the
 * block's raw bytes, or 0 when the writer refused it (STROBE_DEEP_MAX_FRAMES
 * deep captures were written: counted) or failed. Totals go into a
 * CONTENT_TOTALS block at finish. */
struct strobe__content;
uint64_t strobe__writer_content(strobe__writer *w, const struct strobe__content *c);
/* Content bytes per capture (0: STROBE_ATTACH_CAPTURE_BYTES). An
 * attachment given without bytes (a merged input's whose own bound cut it)
 * is written cut, or as stored earlier when its resource is. */
void strobe__writer_attach_limit(strobe__writer *w, uint64_t bytes);
/* >>merge: what a tool re-encoding other captures' records needs (strobe
 * merge). Other bounds on snapshots and deep captures per capture than
 * STROBE_TREE_MAX_SNAPSHOTS and STROBE_DEEP_MAX_FRAMES (0: those); snapshots
 * and deep captures the inputs had refused, added to this capture's counts
 * (TREE_TOTALS, CONTENT_TOTALS); a sampled function defined by name, its id
 * the next one (one past the last defined; others are ignored), before the
 * SAMPLES entries that name it. */
void strobe__writer_content_limits(strobe__writer *w, uint32_t trees, uint32_t deeps);
void strobe__writer_carry_dropped(strobe__writer *w, uint64_t trees, uint64_t deeps);
void strobe__writer_sample_function(strobe__writer *w, uint32_t id, const char *name, const char *module,
                                    int resolved);
/* Call tracing's counts since the capture started (docs/capture-format.md,
 * CALLS; docs/exploration.md): written only when one is not 0; readers keep
 * the last one. */
void strobe__writer_calls(strobe__writer *w, strobe_trace_stats since);
/* Sampler records (probe.h >>sampler) into SAMPLES blocks, one stream per OS
 * thread, after a SAMPLE_FUNCS block defining the function ids they name
 * (docs/capture-format.md, SAMPLES). */
void strobe__writer_samples(strobe__writer *w, const strobe__cpu_sample *s, size_t n, const uint32_t *frames);
/* Defines every function the process's sampler has named (a flight-recorder
 * dump, whose retained SAMPLES blocks may name any of them). */
void strobe__writer_sample_functions(strobe__writer *w);
/* The sampler's state and counts since the capture started (SAMPLER block):
 * written only once the sampler ran during the capture; readers keep the last. */
void strobe__writer_sampler(strobe__writer *w, const strobe_sampler_status *st, strobe_sampler_stats since);
/* A calibration pair for readers that want to check drift. */
void strobe__writer_clock(strobe__writer *w, uint64_t ticks, uint64_t mono_ns);
/* Writes every pending block. Returns 0 or the first sink error (sticky). */
int strobe__writer_flush(strobe__writer *w);
/* Flushes and writes the footer. */
/* A CLOCK_OFFSETS block (docs/capture-format.md): n samples, each with the
 * host that took it, and how many its writer replaced. Nothing when both are
 * 0. strobe__writer_finish writes this process's own when desc.facts is NULL. */
void strobe__writer_clock_offsets(strobe__writer *w, const strobe_capture_clock_offset *o, size_t n,
                                  uint64_t replaced);
/* The MERGE block of a merged capture (strobe merge): its inputs, their alignment, what was not merged. */
void strobe__writer_merge(strobe__writer *w, const strobe_capture_merge *m);
/* The ORIGIN block of a merged capture: the TREE, ATTACH and DEEP blocks written after it, until the next, are of
 * MERGE input `origin - 1` (0: not known, an input merged before merges recorded it). */
void strobe__writer_origin(strobe__writer *w, uint32_t origin);
int strobe__writer_finish(strobe__writer *w, uint64_t end_ticks, const strobe_misuse *misuse);
/* A JOURNAL_POS block, written now (after a flush: docs/capture-format.md
 * §Journal): the file holds thread index[i]'s first count[i] ring events. */
void strobe__writer_journal_pos(strobe__writer *w, const uint32_t *index, const uint64_t *count, uint32_t n);
/* A RECOVERY block, written now: what strobe_capture_recover added. */
void strobe__writer_recovery(strobe__writer *w, uint64_t events, uint64_t threads, uint64_t unrecoverable);
/* The first error seen (0 if none). */
int strobe__writer_error(const strobe__writer *w);
/* Bytes handed to the sink so far. */
uint64_t strobe__writer_bytes(const strobe__writer *w);

/* What a sink call carries when it is one EVENTS, OPS, LOST or THREAD_END block,
 * for sinks that index blocks (the flight recorder's ring); `type` is 0 for
 * every other call. Valid only inside the sink call. */
typedef struct strobe__block_info {
  uint8_t type;        /* STROBE__BLK_EVENTS, _OPS, _LOST, _THREAD_END, _TREE, _SAMPLES, or 0 */
  uint32_t thread;     /* thread index (UINT32_MAX for TREE and SAMPLES) */
  uint64_t count;      /* EVENTS, OPS: events (entries) in the block; LOST: events lost */
  uint64_t first_ticks, last_ticks; /* EVENTS, OPS: its first and last event */
} strobe__block_info;
const strobe__block_info *strobe__writer_block_info(const strobe__writer *w);

/* >>crash: what a crash handler knows when the process dies (src/capture/crash.c), as one CRASH block
 * (docs/capture-format.md §CRASH). Strings are static labels (site names, operation kinds) or thread names. */
#define STROBE__CRASH_MAX_THREADS 64 /* threads described; the rest counted in threads_cut */
#define STROBE__CRASH_MAX_SCOPES 32  /* open scopes kept per thread, the innermost; the rest counted */
typedef struct strobe__crash_thread {
  uint32_t index;                  /* the thread's index in captures */
  const char *name;
  uint32_t nscopes;                /* scopes[0] outermost kept, scopes[nscopes - 1] innermost */
  uint32_t scopes_cut;             /* open scopes further out, not kept */
  const char *scopes[STROBE__CRASH_MAX_SCOPES];
} strobe__crash_thread;
typedef struct strobe__crash_facts {
  int signal;
  uint64_t ticks;                  /* when the handler ran */
  int fault_known;                 /* 1: the faulting thread is a recorded thread (fault_index) */
  uint32_t fault_index;
  const char *fault_name;          /* its name ("" when unknown) */
  const char *op_kind;             /* the faulting thread's open operation ("pass", ...); NULL: none */
  uint64_t frame_id;               /* its frame id (passes) */
  const char *stage;               /* its innermost open stage; "" when none */
  uint32_t nthreads, threads_cut;
  strobe__crash_thread threads[STROBE__CRASH_MAX_THREADS];
} strobe__crash_facts;
/* Encodes f as one whole framed CRASH block (raw, with its CRC) into out. Returns its length, or 0 when it does
 * not fit in cap. Async-signal-safe: no allocation, no lock (strobe__crc32c must have run once before). */
size_t strobe__crash_block(uint8_t *out, size_t cap, const strobe__crash_facts *f);

/* Passes one whole framed block through unchanged, after any pending
 * metadata (a flight-recorder dump replays its retained blocks this way),
 * counting an EVENTS block's events or a LOST block's loss into the footer
 * of its thread, which strobe__writer_thread defined. `info` says what the
 * block is (type 0: neither). */
void strobe__writer_block(strobe__writer *w, const strobe__block_info *info, const void *data, size_t len);

#endif
