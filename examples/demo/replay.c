/*
 * replay.c — `strobe-demo --replay CAPTURE --frame N --out PNG [--calls]`:
 * redraws a captured frame in this separate process, with no live
 * application, from the frame's deep capture (strobe/replay.h) and the demo's
 * cairo backend (paint.c), writes it as a PNG, and compares it with the
 * frame's attached raw screenshot when the capture has one; and
 * `--bench-deep N`: the main view's frame time with and without a deep
 * capture, as BENCH lines (bench/bench_deep.c runs it).
 *
 * Exit: 0 every call redrawn (and equal to the screenshot, pixel for pixel,
 * when there is one); 1 a call was not OK (each is listed with its status),
 * the images differ, or the PNG could not be written; 2 usage, or a capture
 * without that frame's deep capture.
 */
#include "replay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "paint.h"
#include "strobe/deep.h"
#include "strobe/record.h"
#include "strobe/replay.h"
#include "view.h"

/* The surface a frame was drawn on: the widest clip of its calls. */
static void surface_size(const strobe_capture_deep *d, int *w, int *h) {
  float mw = 0, mh = 0;
  for (uint32_t i = 0; i < d->ncalls; i++) {
    const strobe_capture_draw_call *c = &d->calls[i];
    if (!c->has_geometry) continue;
    if (c->clip[0] + c->clip[2] > mw) mw = c->clip[0] + c->clip[2];
    if (c->clip[1] + c->clip[3] > mh) mh = c->clip[1] + c->clip[3];
  }
  *w = (int)mw;
  *h = (int)mh;
}

/* Pixels that differ between the replayed surface and a raw ARGB32 screenshot. */
static long compare(cairo_surface_t *s, const strobe_replay_resource *shot, int *max_diff) {
  int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
  int stride = cairo_image_surface_get_stride(s);
  if ((int)shot->width != w || (int)shot->height != h || shot->size != (size_t)w * (size_t)h * 4) return -1;
  const uint8_t *a = cairo_image_surface_get_data(s), *b = shot->bytes;
  long differ = 0;
  *max_diff = 0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w * 4; x += 4) {
      int any = 0;
      for (int k = 0; k < 4; k++) {
        int d = abs((int)a[(size_t)y * (size_t)stride + (size_t)(x + k)] - (int)b[(size_t)y * (size_t)w * 4 + (size_t)(x + k)]);
        if (d > *max_diff) *max_diff = d;
        any |= d;
      }
      differ += any != 0;
    }
  return differ;
}

/* Compares the replayed surface with the ARGB32 screenshot attached to the frame, when there is one.
 * Returns 1 when they differ (or differ in size), 0 otherwise. */
static int compare_screenshot(strobe_replay *r, cairo_surface_t *s, int w, int h, uint64_t frame) {
  int result = 0;
  uint32_t n;
  const strobe_replay_resource *att = strobe_replay_query_attachments(r, &n);
  const strobe_replay_resource *shot = NULL;
  for (uint32_t i = 0; i < n; i++)
    if (!strcmp(att[i].media_type, STROBE_MEDIA_ARGB32) && att[i].bytes) shot = &att[i];
  if (shot) {
    int max_diff;
    long differ = compare(s, shot, &max_diff);
    if (differ < 0) {
      printf("screenshot: %u x %u, not the replayed surface's size\n", shot->width, shot->height);
      result = 1;
    } else {
      printf("screenshot: %ld of %d pixels differ (largest channel difference %d)\n", differ, w * h, max_diff);
      if (differ) result = 1;
    }
  } else {
    printf("screenshot: none attached to frame %llu with its content: nothing to compare with\n", (unsigned long long)frame);
  }
  return result;
}

int demo_replay(const char *capture, uint64_t frame, const char *out_png, int list_calls) {
  strobe_replay *r;
  int rc = strobe_replay_open(capture, frame, &r);
  if (rc == STROBE_ENOTFOUND) {
    fprintf(stderr, "strobe-demo: %s has no deep capture of frame %llu\n", capture, (unsigned long long)frame);
    return 2;
  }
  if (rc) {
    fprintf(stderr, "strobe-demo: cannot replay %s: %s\n", capture, strobe_strerror(rc));
    return rc == STROBE_EINVAL ? 2 : 1;
  }
  const strobe_capture_deep *d = strobe_replay_query_deep(r);
  int w, h;
  surface_size(d, &w, &h);
  if (w <= 0 || h <= 0) {
    fprintf(stderr, "strobe-demo: frame %llu's calls carry no surface geometry: nothing says how large it was\n",
            (unsigned long long)frame);
    strobe_replay_close(r);
    return 1;
  }
  cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
  paint_replay pr = {cairo_create(s)};
  strobe_replay_backend b = paint_backend(&pr);
  strobe_replay_status *status = calloc(d->ncalls ? d->ncalls : 1, sizeof *status);
  int not_ok = status ? strobe_replay_run(r, &b, status) : STROBE_ENOMEM;
  cairo_destroy(pr.cr);
  cairo_surface_flush(s);
  int result = 0;
  if (not_ok < 0) {
    fprintf(stderr, "strobe-demo: replay stopped: %s\n", strobe_strerror(not_ok));
    result = 1;
  } else {
    uint32_t counts[STROBE_REPLAY_STATUS_COUNT] = {0};
    for (uint32_t i = 0; i < d->ncalls; i++) {
      counts[status[i]]++;
      if (list_calls || status[i] != STROBE_REPLAY_OK)
        printf("call %u %s %s: %s\n", d->calls[i].seq, d->calls[i].kind, d->calls[i].pipeline,
               strobe_replay_status_name(status[i]));
    }
    printf("replayed frame %llu: %u calls, %u ok", (unsigned long long)frame, d->ncalls, counts[STROBE_REPLAY_OK]);
    for (int k = 1; k < STROBE_REPLAY_STATUS_COUNT; k++)
      if (counts[k]) printf(", %u %s", counts[k], strobe_replay_status_name((strobe_replay_status)k));
    printf("%s\n", d->calls_dropped ? " (calls past the capture's bound were not recorded)" : "");
    if (not_ok > 0) result = 1;
    uint64_t at;
    int damage = strobe_replay_query_damage(r, &at);
    if (damage) {
      fprintf(stderr, "strobe-demo: %s: %s near byte %llu: the contents after it were not read\n", capture,
              strobe_strerror(damage), (unsigned long long)at);
      result = 1;
    }
  }
  if (out_png && cairo_surface_write_to_png(s, out_png) != CAIRO_STATUS_SUCCESS) {
    fprintf(stderr, "strobe-demo: cannot write %s\n", out_png);
    result = 1;
  } else if (out_png) {
    printf("wrote %s (%d x %d)\n", out_png, w, h);
  }
  result |= compare_screenshot(r, s, w, h, frame);
  free(status);
  cairo_surface_destroy(s);
  strobe_replay_close(r);
  return result;
}

/* >>bench */
static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

int demo_bench_deep(int frames, const char *dir) {
  char path[512];
  snprintf(path, sizeof path, "%s/bench-deep.strobe", dir);
  strobe_recorder *rec;
  int rc = strobe_record_start(&(strobe_record_desc){.path = path}, &rec);
  if (rc) {
    fprintf(stderr, "strobe-demo: cannot record %s: %s\n", path, strobe_strerror(rc));
    return 1;
  }
  view v;
  if (view_init(&v, NULL, (strobe_window){0}, 960, 682)) {
    strobe_record_stop(rec);
    return 1;
  }
  v.deep = 1;
  grid g;
  grid_init(&g, 30);
  uint64_t *plain = calloc((size_t)frames, sizeof *plain), *deep = calloc((size_t)frames, sizeof *deep);
  int np = 0, nd = 0, failed = 0;
  for (int i = 0; i < 2 * frames + 20; i++) { /* 20 warm-up frames fill the shape cache; then plain and deep alternate */
    int want_deep = i >= 20 && i % 2 == 1;
    if (want_deep && strobe_deep_request() != 0) failed = 1;
    uint64_t t = now_ns();
    view_render(&v, &g, 0, (uint64_t)i);
    uint64_t spent = now_ns() - t;
    if (i >= 20) {
      if (want_deep && nd < frames) deep[nd++] = spent;
      else if (!want_deep && np < frames) plain[np++] = spent;
    }
    strobe_record_flush(rec); /* the drain writes each deep capture before the next: the queue stays short */
  }
  strobe_deep_status st = strobe_deep_query_status();
  view_free(&v);
  strobe_record_stop(rec);
  unlink(path);
  if (failed || st.taken != (uint64_t)nd || np == 0 || nd == 0) {
    fprintf(stderr, "strobe-demo: the deep captures were not all taken (%llu of %d)\n", (unsigned long long)st.taken, nd);
    free(plain);
    free(deep);
    return 1;
  }
  qsort(plain, (size_t)np, sizeof *plain, cmp_u64);
  qsort(deep, (size_t)nd, sizeof *deep, cmp_u64);
  double p = (double)plain[np / 2], q = (double)deep[nd / 2];
  printf("BENCH demo_frame_ns %.0f ns\n", p);
  printf("BENCH demo_frame_deep_capture_ns %.0f ns\n", q);
  printf("BENCH demo_deep_capture_frame_ratio %.2f ratio\n", q / p);
  printf("(median of %d frames each, the main view's render at 960 x 682: %u calls and %u resources, %llu content bytes "
         "per deep capture)\n",
         np, st.last_calls, st.last_resources, (unsigned long long)st.last_bytes);
  free(plain);
  free(deep);
  return 0;
}
