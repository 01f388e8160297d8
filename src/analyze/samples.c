/*
 * samples.c — a capture's sampler records summed per function and turned
 * into off-CPU intervals per OS thread (analyze/samples.h).
 *
 * Owns: the counts and intervals it was fed. Must never: count one sample
 * twice for a function that recurses (inclusive counts are once per
 * sample), or say a range is covered that the thread's records do not span.
 */
#include "analyze/samples.h"

#include <stdlib.h>
#include <string.h>

static strobe__offcpu_thread *thread_of(strobe__samples *s, uint64_t tid) {
  for (uint32_t i = s->n_threads; i-- > 0;)
    if (s->threads[i].tid == tid) return &s->threads[i];
  if (s->n_threads == STROBE__OFFCPU_MAX_THREADS) {
    s->threads_cut++;
    return NULL;
  }
  if (s->n_threads == s->cap_threads) {
    uint32_t cap = s->cap_threads ? s->cap_threads * 2 : 16;
    strobe__offcpu_thread *p = realloc(s->threads, cap * sizeof *p);
    if (!p) {
      s->failed = 1;
      return NULL;
    }
    s->threads = p;
    s->cap_threads = cap;
  }
  strobe__offcpu_thread *t = &s->threads[s->n_threads++];
  memset(t, 0, sizeof *t);
  t->tid = tid;
  return t;
}

static void add_interval(strobe__samples *s, strobe__offcpu_thread *t, uint64_t a, uint64_t b, int preempted) {
  if (t->cut_at) return;
  if (s->intervals >= STROBE__OFFCPU_MAX_INTERVALS) {
    s->intervals_cut++;
    t->cut_at = a;
    return;
  }
  if (t->n == t->cap) {
    uint32_t cap = t->cap ? t->cap * 2 : 64;
    uint64_t *p = realloc(t->iv, (size_t)cap * 2 * sizeof *p);
    if (!p) {
      s->failed = 1;
      t->cut_at = a;
      return;
    }
    t->iv = p;
    t->cap = cap;
  }
  t->iv[2 * t->n] = (a & ~1ull) | (uint64_t)(preempted != 0); /* one tick of precision for the flag */
  t->iv[2 * t->n + 1] = b;
  t->n++;
  s->intervals++;
}

static void add_sample(strobe__samples *s, const strobe_capture_sample *smp) {
  s->samples++;
  for (uint32_t k = 0; k < smp->nframes; k++) {
    uint32_t id = smp->frames[k];
    if (id >= s->n_funcs) {
      uint32_t n = s->n_funcs ? s->n_funcs : 256;
      while (n <= id) n *= 2;
      strobe__func_count *p = realloc(s->funcs, n * sizeof *p);
      if (!p) {
        s->failed = 1;
        return;
      }
      memset(p + s->n_funcs, 0, (n - s->n_funcs) * sizeof *p);
      s->funcs = p;
      s->n_funcs = n;
    }
    if (k == 0) s->funcs[id].self++;
    int seen = 0; /* a recursive function counts once per sample */
    for (uint32_t j = 0; j < k && !seen; j++) seen = smp->frames[j] == id;
    if (!seen) s->funcs[id].inclusive++;
  }
}

void strobe__samples_add(strobe__samples *s, const strobe_capture_record *r) {
  if (r->type != STROBE_REC_SAMPLE && r->type != STROBE_REC_SWITCH) return;
  if (r->type == STROBE_REC_SAMPLE) add_sample(s, r->sample);
  strobe__offcpu_thread *t = thread_of(s, r->sample->os_tid);
  if (!t) return;
  if (!t->first || r->ticks < t->first) t->first = r->ticks;
  if (r->ticks > t->last) t->last = r->ticks;
  if (r->type != STROBE_REC_SWITCH) return;
  s->switches++;
  if (r->sample->out) {
    t->out = 1;
    t->out_at = r->ticks;
    t->out_preempted = r->sample->preempted;
  } else {
    /* Back in: off since its out, or since the records began when the
     * thread was already off then (its out came before them). */
    uint64_t from = t->out ? t->out_at : t->first;
    if (r->ticks > from) add_interval(s, t, from, r->ticks, t->out && t->out_preempted);
    t->out = 0;
  }
}

void strobe__samples_free(strobe__samples *s) {
  for (uint32_t i = 0; i < s->n_threads; i++) free(s->threads[i].iv);
  free(s->threads);
  free(s->funcs);
  memset(s, 0, sizeof *s);
}

static const strobe__offcpu_thread *find_thread(const strobe__samples *s, uint64_t tid) {
  for (uint32_t i = s->n_threads; i-- > 0;)
    if (s->threads[i].tid == tid) return &s->threads[i];
  return NULL;
}

int strobe__samples_cover(const strobe__samples *s, int switches_on, uint64_t until, uint64_t tid, uint64_t *from,
                          uint64_t *to) {
  const strobe__offcpu_thread *t = switches_on ? find_thread(s, tid) : NULL;
  *from = *to = 0;
  if (!t) return 0;
  *from = t->first;
  *to = until > t->last ? until : t->last;
  if (t->cut_at && t->cut_at < *to) *to = t->cut_at;
  return *to >= *from;
}

int strobe__samples_off_cpu(const strobe__samples *s, int switches_on, uint64_t until, uint64_t tid, uint64_t begin,
                            uint64_t end, uint64_t *off, uint64_t *blocked) {
  uint64_t scratch, from, to;
  if (!blocked) blocked = &scratch;
  *off = *blocked = 0;
  if (end < begin || !strobe__samples_cover(s, switches_on, until, tid, &from, &to) || begin < from || end > to) return 0;
  const strobe__offcpu_thread *t = find_thread(s, tid);
  /* The first interval ending after `begin` (binary search), then every one starting before `end`. */
  uint32_t lo = 0, hi = t->n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (t->iv[2 * mid + 1] <= begin) lo = mid + 1;
    else hi = mid;
  }
  uint64_t sum = 0, asleep = 0;
  for (uint32_t k = lo; k < t->n && (t->iv[2 * k] & ~1ull) < end; k++) {
    uint64_t start = t->iv[2 * k] & ~1ull;
    uint64_t a = start > begin ? start : begin;
    uint64_t b = t->iv[2 * k + 1] < end ? t->iv[2 * k + 1] : end;
    if (b <= a) continue;
    sum += b - a;
    if (!(t->iv[2 * k] & 1)) asleep += b - a;
  }
  *off = sum;
  *blocked = asleep;
  return 1;
}

int strobe__samples_state_at(const strobe__samples *s, int switches_on, uint64_t until, uint64_t tid, uint64_t at,
                             int *state, uint64_t *since) {
  uint64_t from, to;
  *state = 0, *since = 0;
  if (!strobe__samples_cover(s, switches_on, until, tid, &from, &to) || at < from || at > to) return 0;
  const strobe__offcpu_thread *t = find_thread(s, tid);
  if (t->out && t->out_at <= at) { /* off its CPU from its last switch out to the end of the records */
    *state = t->out_preempted ? 2 : 1;
    *since = t->out_at;
    return 1;
  }
  /* On its CPU since the end of its last off-CPU interval before `at`, or since the records began. */
  uint32_t lo = 0, hi = t->n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (t->iv[2 * mid + 1] <= at) lo = mid + 1;
    else hi = mid;
  }
  if (lo < t->n && (t->iv[2 * lo] & ~1ull) <= at) { /* inside an interval that ended later */
    *state = t->iv[2 * lo] & 1 ? 2 : 1;
    *since = t->iv[2 * lo] & ~1ull;
    return 1;
  }
  *since = lo ? t->iv[2 * lo - 1] : t->first;
  return 1;
}

static const strobe__samples *g_sort;
static int g_sort_self;

static int by_count(const void *x, const void *y) {
  const strobe__func_count *a = &g_sort->funcs[*(const uint32_t *)x], *b = &g_sort->funcs[*(const uint32_t *)y];
  uint64_t ka = g_sort_self ? a->self : a->inclusive, kb = g_sort_self ? b->self : b->inclusive;
  uint64_t la = g_sort_self ? a->inclusive : a->self, lb = g_sort_self ? b->inclusive : b->self;
  if (ka != kb) return ka < kb ? 1 : -1;
  if (la != lb) return la < lb ? 1 : -1;
  return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

uint32_t *strobe__samples_top(const strobe__samples *s, int by_self, uint32_t *n) {
  *n = 0;
  uint32_t *ids = malloc((s->n_funcs ? s->n_funcs : 1) * sizeof *ids);
  if (!ids) return NULL;
  for (uint32_t id = 1; id < s->n_funcs; id++)
    if (s->funcs[id].inclusive) ids[(*n)++] = id;
  g_sort = s;
  g_sort_self = by_self;
  qsort(ids, *n, sizeof *ids, by_count);
  return ids;
}
