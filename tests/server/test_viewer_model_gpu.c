/*
 * test_viewer_model_gpu.c — the viewer's model of a capture with GPU data
 * (src/viewer/viewer_model.c, docs/viewer.md "gpu", docs/gpu.md): each
 * queue lane is a thread of the model after the capture's own, flagged
 * gpu_lane and named "GPU <domain>/<queue>", its spans mapped onto the host
 * timeline with the capture's calibration pairs (the pair written after a
 * span moves it: the reader fits with every pair); a span that overlaps the
 * one before it on its lane goes one row below; the meta's gpu rows carry
 * each frame's instants and its order violations; a capture without GPU
 * data has gpu null and no lane.
 */
#include <jansson.h>
#include <string.h>

#include "support/capture_memory.h"
#include "support/harness.h"
#include "format/capture_writer.h"
#include "format/codec.h"
#include "probe/probe.h"
#include "strobe/strobe.h"
#include "viewer/viewer_model.h"

static strobe_site g_cpu = {"frame", NULL, NULL, "t.c", "frame", 1, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0};
static strobe_site g_gpu = {"composite", "gpu", NULL, "t.c", NULL, 2, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0};
enum { L_GPU0 = 1, L_GRAPHICS, L_MAIN };

static void gpu_event(strobe__writer *w, uint64_t ts, uint32_t sub, const uint64_t *x, const uint32_t *d, uint32_t n) {
  strobe__event ev[1 + STROBE__GPUEV_MAX_SLOTS];
  ev[0] = (strobe__event){ts, STROBE__EV_GPU, sub | n << 8};
  for (uint32_t i = 0; i < n; i++) ev[1 + i] = (strobe__event){x[i], STROBE__EV_PAYLOAD, d[i]};
  strobe__writer_events(w, 0, ev, 1 + n);
}

/* Host ticks are ns (1 ns per tick); the device ticks twice per ns, 1 s
 * ahead: device = 2 h + 2e9. One CPU scope [1000, 2000); frame 7's GPU
 * spans [3000, 8000) and, overlapping it, [7000, 9000); marks cpu_end 2000,
 * submit 2500, fence_seen 8500 (before the GPU end: a violation). */
static strobe__buf gpu_capture(int with_gpu, int late_pair) {
  strobe__buf out = {0};
  strobe__header_facts facts = {{"monotonic", 1, 1.0, 0, 0}, 0, "x86_64", 0, 1, 4096, 0, 0, 0, NULL, NULL};
  strobe__writer_desc desc = {"file", 100, 1, 0, 0, cm_sink, &out, &facts};
  strobe__writer *w = NULL;
  REQUIRE(strobe__writer_create(&desc, &w) == 0);
  strobe__writer_site(w, 1, &g_cpu);
  strobe__writer_site(w, 2, &g_gpu);
  strobe__writer_label(w, L_GPU0, "gpu0");
  strobe__writer_label(w, L_GRAPHICS, "graphics");
  strobe__writer_label(w, L_MAIN, "main");
  strobe__writer_thread(w, 0, 100, "render", 0);
  strobe__event scope[2] = {{1000, STROBE__EV_BEGIN, 1}, {2000, STROBE__EV_END, 1}};
  strobe__writer_events(w, 0, scope, 2);
  if (with_gpu) {
    uint64_t pw[3] = {2 * 500 + 2000000000u, 450, cm_f64_bits(2e9)};
    uint32_t pd[3] = {L_GPU0, 0, 0};
    gpu_event(w, 550, STROBE__GPUEV_PAIR, pw, pd, 3);
    const uint64_t marks[3][2] = {{2000, 1}, {2500, 2}, {8500, 3}};
    for (int i = 0; i < 3; i++) {
      uint64_t mw[1] = {7};
      uint32_t md[1] = {(uint32_t)marks[i][1]};
      gpu_event(w, marks[i][0], STROBE__GPUEV_MARK, mw, md, 1);
    }
    const uint64_t spans[2][2] = {{3000, 8000}, {7000, 9000}};
    for (int i = 0; i < 2; i++) {
      uint64_t sw[4] = {2 * spans[i][0] + 2000000000u, 2 * spans[i][1] + 2000000000u, 7, 0};
      uint32_t sd[4] = {L_GPU0, L_GRAPHICS, 2, L_MAIN};
      gpu_event(w, 9500, STROBE__GPUEV_SPAN, sw, sd, 4);
    }
    /* A second pair, written after the spans: with it the fit has a rate.
     * late_pair puts it 100 ns off the first pair's line, which moves the
     * spans' mapping: the reader used the later pair. */
    uint64_t h2 = 20000, dev2 = 2 * h2 + 2000000000u + (late_pair ? 200u : 0u);
    uint64_t qw[3] = {dev2, h2 - 50, cm_f64_bits(2e9)};
    gpu_event(w, h2 + 50, STROBE__GPUEV_PAIR, qw, pd, 3);
  }
  strobe_misuse none = {0};
  REQUIRE(strobe__writer_finish(w, 30000, &none) == 0);
  strobe__writer_destroy(w);
  return out;
}

static size_t col(const strobe__vtable *t, const char *name) {
  for (uint32_t i = 0; i < t->ncols; i++)
    if (!strcmp(t->cols[i].name, name)) return t->cols[i].offset;
  REQUIREF(0, "no column %s", name);
  return 0;
}

static json_t *build(strobe__buf *cap, strobe__vmodel **m) {
  strobe__vsource src = {NULL, cap->data, cap->len, "mem", "file"};
  REQUIRE(strobe__vmodel_build(&src, 1u << 20, 1, m) == 0);
  json_error_t err;
  json_t *meta = json_loadb((*m)->meta, (*m)->meta_len, 0, &err);
  REQUIRE(meta != NULL);
  return meta;
}

static void test_gpu_lane(void) {
  strobe__buf cap = gpu_capture(1, 0);
  strobe__vmodel *m = NULL;
  json_t *meta = build(&cap, &m);
  json_t *threads = json_object_get(meta, "threads");
  json_t *lane = NULL;
  size_t i;
  json_t *th;
  json_array_foreach(threads, i, th) if (json_object_get(th, "gpu_lane")) lane = th;
  REQUIRE(lane != NULL);
  CHECK_STR_EQ(json_string_value(json_object_get(lane, "name")), "GPU gpu0/graphics");
  CHECK(json_integer_value(json_object_get(lane, "index")) >= 1); /* after the capture's thread 0 */
  json_t *depths = json_object_get(lane, "depths");
  REQUIRE(json_array_size(depths) == 2); /* the overlapping span went one row below */
  const strobe__vtable *sp = strobe__vmodel_table(m, "spans");
  REQUIRE(sp != NULL);
  const double *start = (const double *)(const void *)(sp->data + col(sp, "start"));
  const float *dur = (const float *)(const void *)(sp->data + col(sp, "dur"));
  const uint16_t *site = (const uint16_t *)(const void *)(sp->data + col(sp, "site"));
  uint32_t first = (uint32_t)json_integer_value(json_array_get(json_array_get(depths, 0), 1));
  uint32_t second = (uint32_t)json_integer_value(json_array_get(json_array_get(depths, 1), 1));
  /* times are ns since the capture start (0 here): exactly the host times written */
  CHECK_NEAR(start[first], 3000.0, 0.5);
  CHECK_NEAR(dur[first], 5000.0, 0.5);
  CHECK_EQ_INT(site[first], 2);
  CHECK_NEAR(start[second], 7000.0, 0.5);
  CHECK_NEAR(dur[second], 2000.0, 0.5);
  json_t *gpu = json_object_get(meta, "gpu");
  REQUIRE(json_is_object(gpu));
  json_t *rows = json_object_get(gpu, "frames");
  REQUIRE(json_array_size(rows) == 1);
  json_t *row = json_array_get(rows, 0);
  CHECK_EQ_INT(json_integer_value(json_array_get(row, 7)), 8); /* STROBE_GPU_ORDER_END_FENCE */
  CHECK_NEAR(json_number_value(json_array_get(row, 2)), 2500.0, 0.5); /* submit */
  CHECK_NEAR(json_number_value(json_array_get(row, 3)), 3000.0, 0.5); /* GPU start */
  CHECK_NEAR(json_number_value(json_array_get(row, 4)), 9000.0, 0.5); /* GPU end */
  CHECK_EQ_INT(json_integer_value(json_object_get(gpu, "frames_violating")), 1);
  /* The live append sends a GPU lane whole, whatever `since` says: its times move with each calibration pair. */
  unsigned char *d = NULL;
  size_t dlen = 0;
  CHECK_EQ_INT(m->mapped_first, first < second ? first : second); /* the GPU lane's spans: the mapped ones */
  REQUIRE(strobe__vmodel_spans_since(m, 1e12, &d, &dlen) == 0);
  uint32_t nd, total;
  memcpy(&nd, d, 4);
  memcpy(&total, d + 4, 4);
  CHECK(total == sp->rows);
  uint32_t want = 0, at = 0;
  for (uint32_t k = 0; k < sp->rows; k++) want += k >= first || k == 0;   /* the GPU lane's spans, the CPU row's first */
  CHECK_EQ_INT(nd, want);
  size_t idx_off = 8 + ((8 * (size_t)nd + 7) & ~(size_t)7) + 2 * ((4 * (size_t)nd + 7) & ~(size_t)7);
  for (uint32_t k = 0; k < nd && idx_off + 4 * (size_t)nd <= dlen; k++) {
    uint32_t ix;
    memcpy(&ix, d + idx_off + 4 * (size_t)k, 4);
    at += ix == first || ix == second;
  }
  CHECK_EQ_INT(at, 2);
  free(d);
  json_decref(meta);
  strobe__vmodel_release(m);
  strobe__buf_free(&cap);

  /* The pair written after the spans moves them: the reader fits with it. */
  cap = gpu_capture(1, 1);
  meta = build(&cap, &m);
  sp = strobe__vmodel_table(m, "spans");
  start = (const double *)(const void *)(sp->data + col(sp, "start"));
  threads = json_object_get(meta, "threads");
  json_array_foreach(threads, i, th) if (json_object_get(th, "gpu_lane")) lane = th;
  first = (uint32_t)json_integer_value(json_array_get(json_array_get(json_object_get(lane, "depths"), 0), 1));
  CHECK(start[first] < 3000.0 - 1.0); /* 200 device ticks more by 20000 ns: earlier spans map earlier */
  json_decref(meta);
  strobe__vmodel_release(m);
  strobe__buf_free(&cap);
}

static void test_no_gpu(void) {
  strobe__buf cap = gpu_capture(0, 0);
  strobe__vmodel *m = NULL;
  json_t *meta = build(&cap, &m);
  CHECK(json_is_null(json_object_get(meta, "gpu")));
  size_t i;
  json_t *th;
  json_array_foreach(json_object_get(meta, "threads"), i, th) CHECK(json_object_get(th, "gpu_lane") == NULL);
  json_decref(meta);
  strobe__vmodel_release(m);
  strobe__buf_free(&cap);
}

#define CASES(X) X(gpu_lane) X(no_gpu)
HARNESS_MAIN(CASES)
