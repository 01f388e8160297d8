/*
 * handoff.h — the hand-off queue between an application thread and the
 * drain, shared by UI-tree snapshots (tree.c) and attachments and deep
 * captures (deep.c): a request flag, the one item open at a time (begun by
 * the first thread that sees the request, filled by that thread alone), and
 * the locked FIFO of closed items the drain takes whole at each pass and
 * gives back one by one, counted as written or unwritten.
 *
 * Owns: the request flag, the open item's ownership, the FIFO's links and
 * the counts every owner reports (requests, taken, written, unwritten).
 * Must never: allocate or free (items belong to the owner, which allocates
 * them before strobe__handoff_begin and frees them after
 * strobe__handoff_end refuses one or strobe__handoff_done gives one back);
 * take the lock in strobe__handoff_requested or in a take that finds
 * nothing queued (the layout pass and the drain's usual pass stay
 * lock-free); hold more than `max` closed items when `max` is not 0.
 *
 * Items: any struct whose FIRST member is `void *next`, the queue's link
 * (C11 6.7.2.1: a pointer to a struct, suitably converted, points to its
 * first member). The owner reads `next` when walking what take returned.
 *
 * Threading: every function but strobe__handoff_requested takes or needs
 * `lock`. An owner keeps its own status beside the counts under the same
 * lock (the _locked functions expect it held), so that a status read under
 * it is one consistent snapshot.
 */
#ifndef STROBE_COLLECT_HANDOFF_H
#define STROBE_COLLECT_HANDOFF_H

#include <stdint.h>

#include "platform/invariant.h"

typedef struct strobe__handoff {
  strobe__mutex lock;  /* everything below; the owner's status too */
  int requested;       /* atomic: a request waits for an item to begin (stored under lock) */
  const void *open;    /* the item begun and not yet ended, NULL when none */
  void *head, *tail;   /* closed items, oldest first, linked by their first member */
  uint32_t queued;     /* atomic: closed items waiting (stored under lock, read without it by take) */
  uint32_t max;        /* closed items held at most, 0: no bound */
  uint64_t seq;        /* items begun so far: the last one's number, from 1 */
  uint64_t requests;   /* strobe__handoff_request calls */
  uint64_t taken;      /* items ended (queued or refused) */
  uint64_t written;    /* items given back with bytes > 0 */
  uint64_t unwritten;  /* items refused by a full queue or given back with 0 bytes */
} strobe__handoff;

/* A queue holding at most `max` closed items (0: no bound), for static storage. */
#define STROBE__HANDOFF_INIT(max) {STROBE__MUTEX_INIT, 0, NULL, NULL, NULL, 0, (max), 0, 0, 0, 0, 0}

/* Raises the request flag and counts the request. */
void strobe__handoff_request(strobe__handoff *q);

/* 1 while a request waits: one relaxed load, no lock (the application's
 * every pass calls it). */
static inline int strobe__handoff_requested(strobe__handoff *q) {
  return __atomic_load_n(&q->requested, __ATOMIC_RELAXED);
}

/* Opens `item` when a request waits, no other item is open and ready()
 * (a check under the lock, e.g. "something records") says yes: clears the
 * request and returns the item's number (from 1). Returns 0 and changes
 * nothing otherwise; the caller frees its item. */
uint64_t strobe__handoff_begin(strobe__handoff *q, const void *item, int (*ready)(void));

/* Closes the open `item` and counts it taken. Returns 1 when it was queued
 * for the drain; 0 when the queue held `max` items: then it is counted
 * unwritten and stays the caller's to free. */
int strobe__handoff_end(strobe__handoff *q, void *item);

/* Queues an item that was never opened (an attachment), lock held: no
 * bound applies and nothing is counted (the owner counts it). */
void strobe__handoff_push_locked(strobe__handoff *q, void *item);

/* Drain thread: every closed item, oldest first, linked by `next` (NULL
 * when none: without taking the lock). */
void *strobe__handoff_take(strobe__handoff *q);

/* Drain thread, lock held, for each item take returned: counts it written
 * when its consumers wrote bytes > 0, unwritten otherwise. Returns 1 when
 * written. */
int strobe__handoff_done_locked(strobe__handoff *q, uint64_t bytes);

/* Lock held: copies the counts into an owner's status struct `s` with the
 * fields requests, pending, taken, written, unwritten (strobe_tree_status,
 * strobe_deep_status). */
#define STROBE__HANDOFF_COUNTS(q, s)                                                                 \
  ((s).requests = (q)->requests, (s).pending = strobe__handoff_requested(q), (s).taken = (q)->taken, \
   (s).written = (q)->written, (s).unwritten = (q)->unwritten)

#endif /* STROBE_COLLECT_HANDOFF_H */
