/*
 * gpu_frames.c — a capture's GPU spans and frame instants, mapped and
 * summarised for `strobe report`, the exports and the viewer's model
 * (gpu_frames.h; docs/gpu.md).
 *
 * Owns: the bounded span and mark arrays, the frames built from them, the
 * per-lane and per-pass totals. Must never: map a span before the capture
 * is read to its end (later pairs improve it), clamp a negative gap or drop
 * a frame that breaks the order (violations are counted and reported).
 */
#include "analyze/gpu_frames.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strobe/gpu.h"

static int grow(void **p, uint32_t *cap, uint32_t n, size_t size, uint32_t max) {
  if (n < *cap) return 0;
  if (*cap >= max) return -1;
  uint32_t c = *cap ? *cap * 2 : 256;
  if (c > max) c = max;
  void *q = realloc(*p, (size_t)c * size);
  if (!q) return -2;
  *p = q;
  *cap = c;
  return 0;
}

void strobe__gpu_record(strobe__gpu_data *g, const strobe_capture_record *r) {
  const strobe_capture_device *d = r->device;
  if (!d) return;
  if (r->type == STROBE_REC_CLOCK_PAIR) {
    g->pairs++;
  } else if (r->type == STROBE_REC_GPU_SPAN) {
    int rc = grow((void **)&g->spans, &g->cap_spans, g->n_spans, sizeof *g->spans, STROBE__GPU_MAX_SPANS);
    if (rc) {
      g->spans_cut++;
      if (rc == -2) g->failed = 1;
      return;
    }
    g->spans[g->n_spans++] = (strobe__gpu_span_rec){d->domain, d->queue, d->pass, r->site, 0, d->frame_id,
                                        d->device_begin, d->device_end, NAN, NAN, NAN, 0};
  } else if (r->type == STROBE_REC_LANE_SPAN) {
    int rc = grow((void **)&g->spans, &g->cap_spans, g->n_spans, sizeof *g->spans, STROBE__GPU_MAX_SPANS);
    if (rc) {
      g->spans_cut++;
      if (rc == -2) g->failed = 1;
      return;
    }
    g->spans[g->n_spans++] = (strobe__gpu_span_rec){d->domain, d->queue, "", r->site, 0, 0,
                                        d->device_begin, d->device_end, NAN, NAN, NAN, 1};
    g->n_lane_spans++;
  } else if (r->type == STROBE_REC_GPU_MARK) {
    int rc = grow((void **)&g->marks, &g->cap_marks, g->n_marks, sizeof *g->marks, STROBE__GPU_MAX_MARKS);
    if (rc) {
      g->marks_cut++;
      if (rc == -2) g->failed = 1;
      return;
    }
    g->marks[g->n_marks++] = (strobe__gpu_mark_rec){d->frame_id, d->instant, r->time_ns};
  }
}

static int by_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static strobe__gpu_frame_rec *frame_of(strobe__gpu_data *g, uint64_t id) {
  uint32_t lo = 0, hi = g->n_frames;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (g->frames[mid].frame_id < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < g->n_frames && g->frames[lo].frame_id == id ? &g->frames[lo] : NULL;
}

/* The group (lane or pass) named so, added when new; NULL past the bound. */
static strobe__gpu_group *group_of(strobe__gpu_group *t, uint32_t *n, uint32_t max, uint64_t *cut, const char *domain,
                           const char *name, int producer) {
  for (uint32_t i = 0; i < *n; i++)
    if (!strcmp(t[i].name, name) && (!domain || !strcmp(t[i].domain, domain)) && t[i].producer == producer)
      return &t[i];
  if (*n == max) {
    (*cut)++;
    return NULL;
  }
  t[*n] = (strobe__gpu_group){domain ? domain : "", name, 0, 0, 0, producer};
  return &t[(*n)++];
}

const char *strobe__gpu_lane_title(const strobe__gpu_group *lane, char *buf, size_t cap) {
  if (!lane->producer) {
    /* A merged capture names a domain and its lane after their process ("screen/demo_gpu",
     * "screen/compute": docs/cli.md §strobe merge); the title says the process once. */
    const char *slash = strchr(lane->domain, '/'), *name = lane->name;
    size_t p = slash ? (size_t)(slash - lane->domain) + 1 : 0;
    if (p && !strncmp(name, lane->domain, p)) name += p;
    snprintf(buf, cap, "GPU %s/%s", lane->domain, name);
  } else if (lane->domain[0])
    snprintf(buf, cap, "producer %s [%s]", lane->name, lane->domain);
  else
    snprintf(buf, cap, "producer %s", lane->name);
  return buf;
}

static void add_to(strobe__gpu_group *grp, double dur) {
  if (!grp) return;
  grp->spans++;
  if (isfinite(dur)) {
    grp->total_ns += dur;
    if (dur > grp->max_ns) grp->max_ns = dur;
  }
}

/* Spans onto the host timeline, with every pair the reader kept; those
 * that cannot be mapped are counted apart. */
static void map_spans(strobe__gpu_data *g, strobe_capture *c) {
  for (uint32_t i = 0; i < g->n_spans; i++) {
    strobe__gpu_span_rec *s = &g->spans[i];
    strobe_capture_mapping b, e;
    if (strobe_capture_map_device(c, s->domain, s->begin, &b) || strobe_capture_map_device(c, s->domain, s->end, &e)) {
      if (s->producer)
        g->lane_spans_unmapped++;
      else
        g->unmapped++;
      continue;
    }
    s->begin_ns = b.time_ns;
    s->end_ns = e.time_ns;
    s->bound_ns = b.bound_ns > e.bound_ns ? b.bound_ns : e.bound_ns;
    if (!s->producer && s->bound_ns > g->worst_bound_ns) g->worst_bound_ns = s->bound_ns;
  }
}

/* Each span into its lane (domain, queue, producer) and, a device's own, its pass. */
static void group_spans(strobe__gpu_data *g) {
  for (uint32_t i = 0; i < g->n_spans; i++) {
    strobe__gpu_span_rec *s = &g->spans[i];
    double dur = s->end_ns - s->begin_ns;
    uint32_t had = g->n_lanes;
    strobe__gpu_group *lane =
        group_of(g->lanes, &g->n_lanes, STROBE__GPU_MAX_LANES, &g->lanes_cut, s->domain, s->queue, s->producer);
    if (g->n_lanes > had && s->producer) g->n_producer_lanes++;
    s->lane = lane ? (uint32_t)(lane - g->lanes) : UINT32_MAX;
    add_to(lane, dur);
    if (!s->producer)
      add_to(group_of(g->passes, &g->n_passes, STROBE__GPU_MAX_PASSES, &g->passes_cut, NULL,
                      s->pass[0] ? s->pass : "none", 0),
             dur);
  }
}

/* The frames table: every frame id a span or a mark names, once, sorted,
 * its instants unknown (NaN) until marks fill them. Returns 0, or -1 out
 * of memory. */
static int make_frames(strobe__gpu_data *g) {
  uint64_t *ids = malloc(((size_t)g->n_spans + g->n_marks + 1) * sizeof *ids);
  if (!ids) return -1;
  size_t n = 0;
  for (uint32_t i = 0; i < g->n_spans; i++)
    if (g->spans[i].frame_id) ids[n++] = g->spans[i].frame_id;
  for (uint32_t i = 0; i < g->n_marks; i++)
    if (g->marks[i].frame_id) ids[n++] = g->marks[i].frame_id;
  qsort(ids, n, sizeof *ids, by_u64);
  size_t u = 0;
  for (size_t i = 0; i < n; i++)
    if (!u || ids[u - 1] != ids[i]) ids[u++] = ids[i];
  g->frames = calloc(u ? u : 1, sizeof *g->frames);
  if (!g->frames) {
    free(ids);
    return -1;
  }
  for (size_t i = 0; i < u; i++) {
    strobe__gpu_frame_rec *f = &g->frames[i];
    f->frame_id = ids[i];
    f->cpu_end = f->submit = f->gpu_begin = f->gpu_end = f->fence_seen = NAN;
  }
  g->n_frames = (uint32_t)u;
  free(ids);
  return 0;
}

/* Each frame's instants from its marks, and its GPU interval and bound from its spans. */
static void fill_frames(strobe__gpu_data *g) {
  for (uint32_t i = 0; i < g->n_marks; i++) {
    strobe__gpu_frame_rec *f = frame_of(g, g->marks[i].frame_id);
    if (!f) continue;
    double t = g->marks[i].t_ns;
    switch (g->marks[i].which) { /* marking twice keeps the later one, as the live table does */
      case STROBE_GPU_CPU_END: f->cpu_end = isnan(f->cpu_end) || t > f->cpu_end ? t : f->cpu_end; break;
      case STROBE_GPU_SUBMIT: f->submit = isnan(f->submit) || t > f->submit ? t : f->submit; break;
      case STROBE_GPU_FENCE_SEEN: f->fence_seen = isnan(f->fence_seen) || t > f->fence_seen ? t : f->fence_seen; break;
      default: break; /* a newer writer's instant */
    }
  }
  for (uint32_t i = 0; i < g->n_spans; i++) {
    const strobe__gpu_span_rec *s = &g->spans[i];
    strobe__gpu_frame_rec *f = s->frame_id ? frame_of(g, s->frame_id) : NULL;
    if (!f) continue;
    f->spans++;
    if (isnan(s->begin_ns)) continue;
    if (isnan(f->gpu_begin) || s->begin_ns < f->gpu_begin) f->gpu_begin = s->begin_ns;
    if (isnan(f->gpu_end) || s->end_ns > f->gpu_end) f->gpu_end = s->end_ns;
    if (s->bound_ns > f->bound_ns) f->bound_ns = s->bound_ns;
  }
}

/* Gaps and order (docs/gpu.md §Ordering checks): each frame's four checks
 * where both instants are known, and the backlog, polling and GPU-time
 * distributions (negative gaps stay negative). Returns 0, or -1 out of
 * memory. */
static int check_order(strobe__gpu_data *g) {
  double *bl = malloc((g->n_frames + 1) * sizeof *bl), *po = malloc((g->n_frames + 1) * sizeof *po),
         *gt = malloc((g->n_frames + 1) * sizeof *gt);
  if (!bl || !po || !gt) {
    free(bl), free(po), free(gt);
    return -1;
  }
  size_t nb = 0, np = 0, ng = 0;
  for (uint32_t i = 0; i < g->n_frames; i++) {
    strobe__gpu_frame_rec *f = &g->frames[i];
    int checks = 0;
    if (!isnan(f->cpu_end) && !isnan(f->submit)) {
      checks++;
      if (f->submit < f->cpu_end) f->violations |= STROBE_GPU_ORDER_END_SUBMIT;
    }
    if (!isnan(f->submit) && !isnan(f->gpu_begin)) {
      checks++;
      bl[nb++] = f->gpu_begin - f->submit;
      if (f->gpu_begin + f->bound_ns < f->submit) f->violations |= STROBE_GPU_ORDER_SUBMIT_START;
    }
    if (!isnan(f->gpu_begin) && !isnan(f->gpu_end)) {
      checks++;
      gt[ng++] = f->gpu_end - f->gpu_begin;
      if (f->gpu_end < f->gpu_begin) f->violations |= STROBE_GPU_ORDER_START_END;
    }
    if (!isnan(f->gpu_end) && !isnan(f->fence_seen)) {
      checks++;
      po[np++] = f->fence_seen - f->gpu_end;
      if (f->fence_seen + f->bound_ns < f->gpu_end) f->violations |= STROBE_GPU_ORDER_END_FENCE;
    }
    if (checks) g->checked++;
    if (f->violations) g->violated++;
    for (int k = 0; k < 4; k++)
      if (f->violations & (1u << k)) g->by_check[k]++;
  }
  g->backlog = strobe__dist_of(bl, nb);
  g->polling = strobe__dist_of(po, np);
  g->gpu_time = strobe__dist_of(gt, ng);
  free(bl), free(po), free(gt);
  return 0;
}

void strobe__gpu_resolve(strobe__gpu_data *g, strobe_capture *c) {
  map_spans(g, c);
  group_spans(g);
  if (make_frames(g)) {
    g->failed = 1;
    return;
  }
  fill_frames(g);
  if (check_order(g)) g->failed = 1;
}

void strobe__gpu_free(strobe__gpu_data *g) {
  free(g->spans);
  free(g->marks);
  free(g->frames);
  memset(g, 0, sizeof *g);
}
