/*
 * frames.c — the frame tracker behind `strobe report`'s frame section: pass
 * operations per window, FRAME marks and top-level scopes per thread (count,
 * first, last, start times), and the N slowest frames of each kind in a
 * bounded min-heap. All kinds are tracked in the one pass because which one
 * the capture has is only known at its end. Two rates per series, each
 * labelled: first-to-last (frames over the span, which one long stall pulls
 * down) and steady (from the median interval between consecutive frames).
 * Memory: three heaps of top_n entries, one small record per thread and
 * window, and at most FRAMES_MAX_TIMES start times per kind (the rest
 * counted).
 */
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "cli.h"
#include "analyze/frame_rate.h"

int frames_init(frames *f, uint32_t top_n) {
  memset(f, 0, sizeof *f);
  f->top_n = top_n;
  f->by_mark.e = calloc(top_n, sizeof(frame_entry));
  f->by_top.e = calloc(top_n, sizeof(frame_entry));
  f->by_op.e = calloc(top_n, sizeof(frame_entry));
  if (!f->by_mark.e || !f->by_top.e || !f->by_op.e) {
    frames_free(f);
    return -1;
  }
  return 0;
}

void frames_free(frames *f) {
  free(f->by_mark.e);
  free(f->by_top.e);
  free(f->by_op.e);
  for (int i = 0; i < FRAMES_SOURCES; i++) free(f->times[i].e);
  for (uint32_t i = 0; i < f->n_windows; i++) free(f->windows[i]);
  for (uint32_t i = 0; i < f->n_threads; i++) free(f->t[i]);
  free(f->t);
  memset(f, 0, sizeof *f);
}

static frame_thread *thread_of(frames *f, uint32_t index) {
  if (index < f->n_threads && f->t[index]) return f->t[index]; /* once a frame: cli_entry's call spared */
  frame_thread *t = cli_entry(&f->t, &f->n_threads, index, sizeof *t);
  if (!t) f->failed = 1;
  return t;
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

static void time_push(frames *f, int source, uint32_t key, double t_ns) {
  frame_times *ft = &f->times[source];
  if (ft->n == FRAMES_MAX_TIMES) {
    ft->cut++;
    return;
  }
  if (ft->n == ft->cap) {
    uint64_t cap = ft->cap ? ft->cap * 2 : 256;
    frame_time *p = realloc(ft->e, cap * sizeof *p);
    if (!p) {
      f->failed = 1;
      return;
    }
    ft->e = p;
    ft->cap = cap;
  }
  ft->e[ft->n++] = (frame_time){key, t_ns};
}

/* The index of a window id among the passes' windows, added if new; -1 past the bound. */
static int window_of(frames *f, const char *id) {
  for (uint32_t i = 0; i < f->n_windows; i++)
    if (!strcmp(f->windows[i], id)) return (int)i;
  if (f->n_windows == FRAMES_MAX_WINDOWS) return -1;
  char *copy = strdup(id);
  if (!copy) {
    f->failed = 1;
    return -1;
  }
  f->windows[f->n_windows] = copy;
  return (int)f->n_windows++;
}

void frames_op(frames *f, uint32_t thread, const strobe_capture_op *op) {
  if (op->kind != 1 /* STROBE_OP_PASS */) return;
  int w = window_of(f, op->window);
  if (w < 0) {
    f->windows_cut++;
    return;
  }
  f->passes++;
  if (!op->committed) f->uncommitted++;
  /* As session reports: only committed passes count towards a frame rate. */
  if (op->committed) time_push(f, FRAMES_FROM_OPS, (uint32_t)w, op->start_ns);
  frame_entry e = {op->duration_ns, op->start_ns, thread, op->frame_id, (uint32_t)w, op->committed};
  heap_offer(&f->by_op, f->top_n, &e);
}

void frames_mark(frames *f, uint32_t thread, double t_ns) {
  frame_thread *t = thread_of(f, thread);
  if (!t) return;
  time_push(f, FRAMES_FROM_MARKS, thread, t_ns);
  if (t->marks == 0) {
    t->first_mark = t_ns;
  } else {
    frame_entry e = {t_ns - t->last_mark, t->last_mark, thread, t->marks, 0, 1};
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
  time_push(f, FRAMES_FROM_TOPS, thread, begin_ns);
  frame_entry e = {dur_ns, begin_ns, thread, t->tops, 0, 1};
  heap_offer(&f->by_top, f->top_n, &e);
}

int frames_use_marks(const frames *f) {
  for (uint32_t i = 0; i < f->n_threads; i++)
    if (f->t[i] && f->t[i]->marks >= 2) return 1;
  return 0;
}

static int slowest_first(const void *x, const void *y) {
  const frame_entry *a = x, *b = y;
  if (a->dur_ns != b->dur_ns) return a->dur_ns < b->dur_ns ? 1 : -1;
  return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns;
}

int frames_source(const frames *f) {
  return f->passes ? FRAMES_FROM_OPS : frames_use_marks(f) ? FRAMES_FROM_MARKS : FRAMES_FROM_TOPS;
}

static int by_key_time(const void *x, const void *y) {
  const frame_time *a = x, *b = y;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  return a->t_ns < b->t_ns ? -1 : a->t_ns > b->t_ns;
}

frame_series *frames_series(frames *f, uint32_t *n) {
  *n = 0;
  frame_times *ft = &f->times[frames_source(f)];
  if (ft->n < 2) return NULL;
  /* Passes of one window end on several threads, so their blocks arrive out
   * of order; most series arrive in order, and checking costs one pass where
   * sorting a sorted series cost n log n comparison calls. */
  int sorted = 1;
  for (uint64_t i = 1; i < ft->n && sorted; i++) sorted = by_key_time(&ft->e[i - 1], &ft->e[i]) <= 0;
  if (!sorted) qsort(ft->e, (size_t)ft->n, sizeof *ft->e, by_key_time);
  frame_series *out = calloc((size_t)ft->n, sizeof *out);
  double *gaps = malloc((size_t)ft->n * sizeof *gaps);
  if (!out || !gaps) {
    free(out);
    free(gaps);
    f->failed = 1;
    return NULL;
  }
  double *starts = malloc((size_t)ft->n * sizeof *starts);
  if (!starts) {
    free(out);
    free(gaps);
    f->failed = 1;
    return NULL;
  }
  for (uint64_t i = 0; i < ft->n;) {
    uint64_t j = i;
    while (j < ft->n && ft->e[j].key == ft->e[i].key) j++;
    if (j - i >= 2) {
      for (uint64_t k = i; k < j; k++) starts[k - i] = ft->e[k].t_ns;
      strobe__frame_rate r = strobe__frame_rate_of(starts, (size_t)(j - i), gaps);
      out[(*n)++] = (frame_series){ft->e[i].key, r.frames, r.span_ns, r.fps_first_to_last, r.median_interval_ns,
                                   r.fps_steady};
    }
    i = j;
  }
  free(starts);
  free(gaps);
  return out;
}

const frame_entry *frames_slowest(frames *f, uint32_t *n) {
  int src = frames_source(f);
  frame_heap *h = src == FRAMES_FROM_OPS ? &f->by_op : src == FRAMES_FROM_MARKS ? &f->by_mark : &f->by_top;
  qsort(h->e, h->n, sizeof *h->e, slowest_first);
  *n = h->n;
  return h->e;
}
