/*
 * frames.c — the frame tracker behind `strobe report`'s frame section: per
 * thread, the FRAME marks and top-level scopes seen (count, first, last) and
 * the N slowest frames of each kind in a bounded min-heap. Both kinds are
 * tracked in the one pass because whether the capture has frame marks is
 * only known at its end. Memory: two heaps of top_n entries plus one small
 * record per thread.
 */
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"

int frames_init(frames *f, uint32_t top_n) {
  memset(f, 0, sizeof *f);
  f->top_n = top_n;
  f->by_mark.e = calloc(top_n, sizeof(frame_entry));
  f->by_top.e = calloc(top_n, sizeof(frame_entry));
  if (!f->by_mark.e || !f->by_top.e) {
    frames_free(f);
    return -1;
  }
  return 0;
}

void frames_free(frames *f) {
  free(f->by_mark.e);
  free(f->by_top.e);
  free(f->t);
  memset(f, 0, sizeof *f);
}

static frame_thread *thread_of(frames *f, uint32_t index) {
  if (index >= f->n_threads) {
    uint32_t n = f->n_threads ? f->n_threads : 8;
    while (n <= index) n *= 2;
    frame_thread *p = realloc(f->t, n * sizeof *p);
    if (!p) {
      f->failed = 1;
      return NULL;
    }
    memset(p + f->n_threads, 0, (n - f->n_threads) * sizeof *p);
    f->t = p;
    f->n_threads = n;
  }
  return &f->t[index];
}

static void sift_down(frame_heap *h, uint32_t i) {
  for (;;) {
    uint32_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < h->n && h->e[l].dur_ns < h->e[m].dur_ns) m = l;
    if (r < h->n && h->e[r].dur_ns < h->e[m].dur_ns) m = r;
    if (m == i) return;
    frame_entry tmp = h->e[i];
    h->e[i] = h->e[m];
    h->e[m] = tmp;
    i = m;
  }
}

static void heap_offer(frame_heap *h, uint32_t cap, const frame_entry *e) {
  if (h->n < cap) {
    uint32_t i = h->n++;
    h->e[i] = *e;
    while (i > 0) { /* sift up */
      uint32_t p = (i - 1) / 2;
      if (h->e[p].dur_ns <= h->e[i].dur_ns) break;
      frame_entry tmp = h->e[i];
      h->e[i] = h->e[p];
      h->e[p] = tmp;
      i = p;
    }
    return;
  }
  if (e->dur_ns <= h->e[0].dur_ns) return; /* the common case: not among the slowest */
  h->e[0] = *e;
  sift_down(h, 0);
}

void frames_mark(frames *f, uint32_t thread, double t_ns) {
  frame_thread *t = thread_of(f, thread);
  if (!t) return;
  if (t->marks == 0) {
    t->first_mark = t_ns;
  } else {
    frame_entry e = {t_ns - t->last_mark, t->last_mark, thread, t->marks};
    heap_offer(&f->by_mark, f->top_n, &e);
  }
  t->last_mark = t_ns;
  t->marks++;
}

void frames_top(frames *f, uint32_t thread, double begin_ns, double dur_ns) {
  frame_thread *t = thread_of(f, thread);
  if (!t) return;
  if (t->tops == 0) t->first_top = begin_ns;
  t->last_top = begin_ns;
  t->tops++;
  frame_entry e = {dur_ns, begin_ns, thread, t->tops};
  heap_offer(&f->by_top, f->top_n, &e);
}

int frames_use_marks(const frames *f) {
  for (uint32_t i = 0; i < f->n_threads; i++)
    if (f->t[i].marks >= 2) return 1;
  return 0;
}

static int slowest_first(const void *x, const void *y) {
  const frame_entry *a = x, *b = y;
  if (a->dur_ns != b->dur_ns) return a->dur_ns < b->dur_ns ? 1 : -1;
  return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns;
}

const frame_entry *frames_slowest(frames *f, uint32_t *n) {
  frame_heap *h = frames_use_marks(f) ? &f->by_mark : &f->by_top;
  qsort(h->e, h->n, sizeof *h->e, slowest_first);
  *n = h->n;
  return h->e;
}
