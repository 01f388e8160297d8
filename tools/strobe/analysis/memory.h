/*
 * memory.h — a capture's allocations and messages, for `strobe report`
 * (docs/memory.md §In strobe report): per pool the allocations, frees and
 * what was live at the end (the leaks), with the largest blocks still live;
 * per frame of the frame model (the frame owning each allocation's thread
 * and time, strobe_frames_owner) the count and bytes allocated and freed and
 * the bytes live at the frame's end, by pool; the peak of live bytes over
 * frame ends; and the messages in time order.
 *
 * A free is matched to its allocation by address, within its process (a
 * merged capture's thread names say which). Threads' records arrive
 * out of time order, so a free may be read before the allocation it frees:
 * it waits (kept by address) until that allocation comes, and one that
 * never does freed a block allocated before the capture began (counted,
 * its size unknown). The capture is read a second time, after the frame
 * model is finished (a file only, never standard input). Memory is bounded:
 * MEM_MAX_POOLS pools, MEM_MAX_BLOCKS blocks tracked at once, MEM_MAX_MESSAGES
 * messages; past them events are counted, not kept.
 */
#ifndef STROBE_CLI_MEMORY_H
#define STROBE_CLI_MEMORY_H

#include <stdint.h>
#include <stdio.h>

#include "aggregate.h"
#include "format/json_writer.h"

#define MEM_MAX_POOLS 16          /* pools kept by name; allocations of others are counted in pools_cut */
#define MEM_MAX_BLOCKS (1u << 22) /* live blocks (and early frees) tracked at once: 4 Mi, 128 MiB at most */
#define MEM_MAX_MESSAGES 100000u  /* messages kept for --messages; the rest counted */
#define MEM_LARGEST 10            /* largest live blocks listed at the end */

typedef struct mem_counts {
  uint64_t allocs, bytes;       /* allocations and their bytes */
  uint64_t frees, freed;        /* frees matched to an allocation, and the bytes they freed */
} mem_counts;

typedef struct mem_pool {
  const char *name;             /* the pool's label (a copy, owned here) */
  mem_counts all;               /* over the capture */
  uint64_t live_blocks, live_bytes; /* still allocated at the capture's end: the leaks */
  mem_counts *frame;            /* per frame of the model (strobe_frames_query_frame's index) */
  int64_t *delta;               /* per frame end (in end order): live bytes added since the previous end */
  double *live_end;             /* per frame: live bytes at its end (NaN: unfinished frame) */
} mem_pool;

typedef struct mem_block_info {
  uint64_t bytes;
  uint32_t pool, thread;
  double time_ns;               /* when it was allocated */
  uint32_t frame;               /* the frame that owns it, STROBE_FRAMES_NONE when none */
  uint32_t proc;                /* its process in a merged capture (1-based input), 0 otherwise */
} mem_block_info;

typedef struct mem_message {
  uint32_t site, thread;
  double time_ns;
} mem_message;

typedef struct mem_report {
  int recorded;                 /* 1: the capture has allocation, free or message sites */
  int available;                /* 1: the figures below hold; else `why` says why not */
  const char *why;
  mem_pool pools[MEM_MAX_POOLS];
  uint32_t npools;
  uint64_t pools_cut;           /* allocations and frees of pools past MEM_MAX_POOLS */
  uint32_t nframes;             /* frames of the model */
  mem_counts outside;           /* allocations and frees no frame owns */
  uint64_t unmatched_frees;     /* frees of blocks allocated before the capture (sizes unknown) */
  uint64_t untracked;           /* allocations past MEM_MAX_BLOCKS: their frees read as unmatched */
  uint64_t frees_missing;       /* addresses allocated again with no free recorded between */
  double peak_bytes;            /* the most bytes live at a frame's end, over every pool */
  uint32_t peak_frame;          /* that frame (STROBE_FRAMES_NONE: no finished frame) */
  mem_block_info largest[MEM_LARGEST]; /* the largest blocks live at the end, largest first */
  uint32_t nlargest;
  int messages_wanted;          /* --messages: keep them */
  mem_message *messages;
  uint32_t nmessages;
  uint64_t messages_total, messages_content; /* every message; of them, run-time text (STROBE_SITE_INTERNED) */
  int failed;                   /* out of memory */
  /* private: the block tables and the frame ends in order */
  struct mem_table *live, *early;
  uint32_t *end_order;          /* frames with an end, by end time */
  double *ends;
  uint32_t nends;
  uint32_t *proc_of;            /* thread -> its process + 1, 0: not looked up yet */
  uint32_t nproc_of;
} mem_report;

/* After the first read (a->fx finished): reads `path` again and fills m
 * (m->messages_wanted set before, when wanted). Returns CLI_OK (m->available
 * may be 0, with m->why) or the exit code of a second read that failed. */
int mem_collect(mem_report *m, agg *a, const strobe_capture *c, const char *path, int is_stdin);
void mem_free(mem_report *m);
/* The frame with the most bytes allocated first: frame indexes into out (n of them, n <= m->nframes). */
uint32_t mem_top_frames(const mem_report *m, uint32_t *out, uint32_t n);
/* Sums of a frame over every pool. */
mem_counts mem_frame_counts(const mem_report *m, uint32_t frame);
double mem_frame_live(const mem_report *m, uint32_t frame);

/* What a frame allocated (`strobe explain`, docs/memory.md §In strobe explain): the allocations it owns
 * (strobe_frames_owner) and, of them, those made while a stage of the given name was open on its thread. */
typedef struct mem_in_frame {
  int known;                    /* 0: the capture records no allocations */
  uint64_t allocs, bytes;       /* the frame's */
  uint64_t stage_allocs, stage_bytes; /* made inside a run of the stage (0 without a stage) */
} mem_in_frame;
/* Reads `path` once for n frames of fx, stages[i] the stage to look into for frames[i] (NULL: none); out[n].
 * Returns CLI_OK, or the exit code of a read that failed (after a message). */
int mem_in_frames(const char *cmd, const char *path, const strobe_frames *fx, const uint32_t *frames,
                  const char *const *stages, uint32_t n, mem_in_frame *out);

/* memory_view.c: the report's section (nothing when nothing was recorded; the top frames by bytes allocated),
 * its JSON object "allocations", and with --messages the log in time order (text, or the JSON array
 * "messages"). Times are printed since start_ns. */
void mem_text(FILE *f, const mem_report *m, const strobe_capture *c, const strobe_frames *fx, double start_ns,
              uint32_t top);
void mem_json(strobe__json *j, const mem_report *m, const strobe_frames *fx, double start_ns);
void mem_messages_text(FILE *f, const mem_report *m, const strobe_capture *c, double start_ns);
void mem_messages_json(strobe__json *j, const mem_report *m, const strobe_capture *c, double start_ns);

#endif
