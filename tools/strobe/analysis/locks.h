/*
 * locks.h — lock contention for `strobe report` (docs/locks.md): per lock
 * (its name: every site of one name is one lock) how often it was taken
 * and waited for, the waits' and holds' total and longest time, and who
 * held it while others waited, with the scope the holder took it in.
 *
 * Records of different threads arrive out of time order, so a wait meets
 * its holder only after the whole capture was read: the capture is read
 * twice more (a file only, never standard input): first for the waits (a
 * wait runs from LOCK_WAIT to the same thread's LOCK_ACQUIRED), then for
 * the holds (LOCK_ACQUIRED to the same thread's LOCK_RELEASED), each hold
 * claiming the waits of its lock that began inside it. Memory is bounded by
 * locks, threads and LOCKS_MAX_WAITS waits; waits past that bound are
 * counted in the totals but matched to no holder, and the report says how
 * many.
 */
#ifndef STROBE_CLI_LOCKS_H
#define STROBE_CLI_LOCKS_H

#include <stdint.h>
#include <stdio.h>

#include "strobe/capture.h"

struct strobe__json;

#define LOCKS_MAX_WAITS (1u << 20) /* waits kept for matching to their holders (24 bytes each) */

/* Who held a lock while another thread waited for it. */
typedef struct lock_holder {
  uint32_t thread;     /* thread index */
  uint32_t scope;      /* the innermost scope open where it took the lock (site id; 0: none) */
  uint64_t waits;      /* waits that began while it held the lock */
  double wait_ns;      /* their summed time */
} lock_holder;

typedef struct lock_row {
  const char *name;          /* the lock's name (its sites') */
  uint64_t acquisitions;     /* LOCK_ACQUIRED records */
  uint64_t waits;            /* waits that ended in an acquisition (contended acquisitions) */
  double wait_ns, wait_max_ns;
  uint64_t holds;            /* acquisitions released on the same thread */
  double hold_ns, hold_max_ns;
  uint64_t unmatched;        /* acquisitions never released, releases never acquired, waits never ended */
  lock_holder top;           /* the holder the most wait time began under (waits 0: none found) */
  lock_holder *holders;      /* every (thread, scope) that held it while others waited */
  uint32_t nholders;
} lock_row;

typedef struct locks {
  lock_row *rows;            /* by total wait, largest first */
  uint32_t n;
  uint64_t waits_unmatched;  /* waits past LOCKS_MAX_WAITS, matched to no holder */
  uint64_t waits_no_holder;  /* waits that began while no recorded hold covered them */
  uint64_t waits_holders_cut; /* waits whose holder was a (thread, scope) past the 64 kept per lock */
  int available;             /* 1: the figures below are complete */
  const char *why;           /* when not available (or no locks): why */
} locks;

/* Reads `path` (the capture `c` was opened from) twice more for its lock
 * records. No locks in the capture: available 0 and why says so, CLI_OK.
 * Returns CLI_OK, or CLI_FAIL when a read failed or memory ran out (why
 * says which). */
int locks_collect(locks *l, const strobe_capture *c, const char *path, int is_stdin);
void locks_text(FILE *f, const locks *l, const strobe_capture *c);
void locks_json(struct strobe__json *j, const locks *l, const strobe_capture *c);
void locks_free(locks *l);

#endif
