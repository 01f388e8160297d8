/*
 * handoff.c — the hand-off queue between an application thread and the
 * drain (handoff.h): request, the one open item, the locked FIFO of closed
 * items and its written/unwritten counts.
 *
 * Owns: the queue's links and counts, never the items.
 * Must never: allocate, free, or call out while holding the lock (ready()
 * aside, which only reads); take the lock on the paths handoff.h names
 * lock-free.
 */
#include <stddef.h>

#include "collect/handoff.h"

/* The queue's link: an item's first member (handoff.h §Items). */
static void **link_of(void *item) { return (void **)item; }

static void append(strobe__handoff *q, void *item) {
  STROBE_ASSERT(strobe__mutex_held(&q->lock));
  *link_of(item) = NULL;
  if (q->tail)
    *link_of(q->tail) = item;
  else
    q->head = item;
  q->tail = item;
  __atomic_store_n(&q->queued, q->queued + 1, __ATOMIC_RELAXED);
}

void strobe__handoff_request(strobe__handoff *q) {
  strobe__mutex_lock(&q->lock);
  __atomic_store_n(&q->requested, 1, __ATOMIC_RELEASE);
  q->requests++;
  strobe__mutex_unlock(&q->lock);
}

uint64_t strobe__handoff_begin(strobe__handoff *q, const void *item, int (*ready)(void)) {
  uint64_t seq = 0;
  strobe__mutex_lock(&q->lock);
  if (q->open == NULL && __atomic_load_n(&q->requested, __ATOMIC_RELAXED) && ready()) {
    __atomic_store_n(&q->requested, 0, __ATOMIC_RELAXED);
    seq = ++q->seq;
    q->open = item;
  }
  strobe__mutex_unlock(&q->lock);
  return seq;
}

int strobe__handoff_end(strobe__handoff *q, void *item) {
  strobe__mutex_lock(&q->lock);
  STROBE_ASSERT(q->open == item); /* only the open item ends, once */
  q->open = NULL;
  q->taken++;
  int queued = q->max == 0 || q->queued < q->max;
  if (queued)
    append(q, item);
  else
    q->unwritten++;
  strobe__mutex_unlock(&q->lock);
  return queued;
}

void strobe__handoff_push_locked(strobe__handoff *q, void *item) { append(q, item); }

void *strobe__handoff_take(strobe__handoff *q) {
  if (!__atomic_load_n(&q->queued, __ATOMIC_RELAXED)) return NULL; /* the usual pass: no lock */
  strobe__mutex_lock(&q->lock);
  void *items = q->head;
  q->head = q->tail = NULL;
  __atomic_store_n(&q->queued, 0, __ATOMIC_RELAXED);
  strobe__mutex_unlock(&q->lock);
  return items;
}

int strobe__handoff_done_locked(strobe__handoff *q, uint64_t bytes) {
  STROBE_ASSERT(strobe__mutex_held(&q->lock));
  if (bytes)
    q->written++;
  else
    q->unwritten++;
  return bytes != 0;
}
