/*
 * test_gpu.c — clock domains, GPU spans and the four instants of a frame
 * (include/strobe/gpu.h, docs/gpu.md): a synthetic device clock 1 s ahead of
 * the host with +200 ppm drift and read jitter maps onto the host timeline
 * within its pairs' own uncertainty over 60 simulated seconds, live and in
 * a capture's reader; bad pairs and declarations are refused and change
 * nothing; spans, pairs and marks read back from a capture exactly (raw
 * device ticks, names, frame ids), and a reader that does not know the
 * DEVICE block still reads the rest; a frame's backlog and polling latency
 * are the gaps between its instants, and the order checks count a
 * violation beyond the calibration bound and none within it; nothing is
 * kept while nothing records; a session's report carries the frames closed
 * while it ran (backlog, polling latency, GPU time with their n, the order
 * violations) and null when there were none.
 *
 * STROBE_TEST_NEEDS: jansson reports
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/codec.h"
#include "probe/probe.h"
#include "strobe/capture.h"
#include "strobe/gpu.h"
#include "strobe/record.h"
#include "support/case_files.h"
#include "support/harness.h"
#include "support/session_util.h"

/* >>synthetic: a device clock (ns ticks) 1 s ahead of the host with +200 ppm
 * drift, read between two host reads 1 us apart, the read at a random point
 * of that microsecond. Deterministic (a fixed LCG). */
#define SYN_AHEAD_NS 1e9
#define SYN_DRIFT 200e-6
#define SYN_WIDTH_NS 1000.0
#define SYN_SECONDS 60
#define SYN_PERIOD_NS 16.0e6 /* one pair a frame at ~60 Hz */

static uint64_t g_rng = 88172645463325252ull;
static double uniform(void) {
  g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(g_rng >> 11) / 9007199254740992.0;
}

typedef struct syn {
  double npt;      /* host ns per tick */
  uint64_t host0;  /* host ticks at simulated time 0 */
} syn;

static uint64_t syn_host(const syn *s, double t_ns) { return s->host0 + (uint64_t)llround(t_ns / s->npt); }
static uint64_t syn_device(double t_ns) { return (uint64_t)llround((t_ns + SYN_AHEAD_NS) * (1.0 + SYN_DRIFT)); }
/* The host time (ns since 0) at which the device read `dev`. */
static double syn_true_ns(uint64_t dev) { return (double)dev / (1.0 + SYN_DRIFT) - SYN_AHEAD_NS; }

/* One pair at simulated time t: the read happens at t; the host reads
 * bracket it, 1 us apart, with the read at a random point between them. */
static void syn_pair(const syn *s, double t_ns, uint64_t *dev, uint64_t *before, uint64_t *after) {
  double lead = uniform() * SYN_WIDTH_NS;
  *dev = syn_device(t_ns);
  *before = syn_host(s, t_ns - lead);
  *after = syn_host(s, t_ns - lead + SYN_WIDTH_NS);
}

static syn syn_new(void) {
  syn s;
  s.npt = strobe_query_clock().ns_per_tick;
  s.host0 = strobe_clock_now() + 1000000;
  return s;
}

/* The test: over 60 simulated seconds every mapped device time,
 * inside the window and at the live edge just past the last pair, is
 * within its bound, and inside the window within 1 us. */
static void test_fit_synthetic_domain(void) {
  strobe_clock_domain d;
  REQUIRE(strobe_clock_domain_create(&(strobe_clock_domain_desc){.name = "synthetic", .ticks_per_second = 1e9}, &d) ==
          0);
  syn s = syn_new();
  double worst_in = 0, worst_edge = 0, worst_excess = 0, bias = 0;
  int checked = 0;
  for (double t = 0; t < SYN_SECONDS * 1e9; t += SYN_PERIOD_NS) {
    uint64_t dev, before, after;
    syn_pair(&s, t, &dev, &before, &after);
    REQUIRE(strobe_clock_domain_calibrate(d, dev, before, after) == 0);
    if (t < 2 * SYN_PERIOD_NS) continue;
    /* inside the window: halfway between the last two pairs */
    double probes[2] = {t - SYN_PERIOD_NS / 2, t + SYN_PERIOD_NS / 2};
    for (int k = 0; k < 2; k++) {
      uint64_t pdev = syn_device(probes[k]);
      strobe_clock_mapping m;
      REQUIRE(strobe_clock_domain_map(d, pdev, &m) == 0);
      double truth = (double)s.host0 * s.npt + syn_true_ns(pdev);
      double err = fabs((double)m.host_ticks * s.npt - truth);
      if (err - m.bound_ns > worst_excess) worst_excess = err - m.bound_ns;
      if (k == 0 && err > worst_in) worst_in = err;
      if (k == 0) bias += (double)m.host_ticks * s.npt - truth;
      if (k == 1 && err > worst_edge) worst_edge = err;
      checked++;
    }
  }
  CHECK(checked > 7000);
  /* Each pair's read lies anywhere in its interval: the midpoint fit is
   * unbiased, so the mean signed error over ~3600 probes is near 0 (a fit
   * anchored on either end of the pairs would be 500 ns off). */
  bias /= checked / 2;
  CHECKF(fabs(bias) <= 100.0, "mapped times are biased by %.1f ns", bias);
  CHECKF(worst_in <= 1000.0, "mapped error inside the window %.1f ns > 1 us", worst_in);
  CHECKF(worst_excess <= 0.0, "a mapped time was %.1f ns outside its own bound", worst_excess);
  CHECKF(worst_edge <= 2000.0, "mapped error past the last pair %.1f ns", worst_edge);
  strobe_clock_domain_stats st;
  REQUIRE(strobe_clock_domain_query_stats(d, &st) == 0);
  CHECK_EQ_U64(st.pairs, (uint64_t)ceil(SYN_SECONDS * 1e9 / SYN_PERIOD_NS));
  CHECK_EQ_INT(st.window, STROBE_CLOCK_FIT_PAIRS);
  CHECKF(fabs(st.drift_ppm - 200.0) < 5.0, "fitted drift %.2f ppm, not +200", st.drift_ppm);
  CHECKF(st.bound_ns > 0 && st.bound_ns <= 2 * SYN_WIDTH_NS, "bound %.1f ns", st.bound_ns);
  printf("synthetic: worst %.1f ns in the window, %.1f ns past it, bound %.1f ns, drift %.3f ppm\n", worst_in, worst_edge, st.bound_ns, st.drift_ppm);
  CHECK_NEAR(st.widest_pair_ns, SYN_WIDTH_NS, 2 * s.npt + 1.0);
}

/* Bad input is refused with its code and changes nothing. */
static void test_refusals(void) {
  strobe_clock_domain d, again;
  REQUIRE(strobe_clock_domain_create(&(strobe_clock_domain_desc){.name = "refusals", .ticks_per_second = 1e8}, &d) ==
          0);
  CHECK_EQ_INT(strobe_clock_domain_create(&(strobe_clock_domain_desc){.name = "refusals", .ticks_per_second = 1e8},
                                          &again),
               0);
  CHECK_EQ_INT(again.id, d.id);
  CHECK_EQ_INT(strobe_clock_domain_create(&(strobe_clock_domain_desc){.name = "refusals", .ticks_per_second = 2e8},
                                          &again),
               STROBE_EBUSY);
  CHECK_EQ_INT(again.id, 0);
  CHECK_EQ_INT(strobe_clock_domain_create(&(strobe_clock_domain_desc){.name = "bad name", .ticks_per_second = 1},
                                          &again),
               STROBE_ELABEL);
  CHECK_EQ_INT(strobe_clock_domain_create(&(strobe_clock_domain_desc){.name = "zero_rate"}, &again), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_clock_domain_create(&(strobe_clock_domain_desc){.name = "one_pair", .ticks_per_second = 1,
                                                                      .fit_pairs = 1},
                                          &again),
               STROBE_EINVAL);
  strobe_clock_mapping m;
  CHECK_EQ_INT(strobe_clock_domain_map(d, 5, &m), STROBE_ESTATE);
  CHECK_EQ_INT(strobe_clock_domain_calibrate(d, 1000, 500, 400), STROBE_EINVAL);  /* after < before */
  CHECK_EQ_INT(strobe_clock_domain_calibrate(d, 1000, 0, 400), STROBE_EINVAL);    /* no host time */
  CHECK_EQ_INT(strobe_clock_domain_calibrate((strobe_clock_domain){999}, 1, 1, 2), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_clock_domain_calibrate(d, 1000, 500, 600), 0);
  CHECK_EQ_INT(strobe_clock_domain_calibrate(d, 1000, 700, 800), STROBE_EINVAL); /* device time not after */
  CHECK_EQ_INT(strobe_clock_domain_calibrate(d, 900, 700, 800), STROBE_EINVAL);
  strobe_clock_domain_stats st;
  REQUIRE(strobe_clock_domain_query_stats(d, &st) == 0);
  CHECK_EQ_U64(st.pairs, 1);
  CHECK_EQ_U64(st.refused, 2);
  REQUIRE(strobe_clock_domain_map(d, 1000, &m) == 0);
  CHECK_EQ_U64(m.host_ticks, 550); /* the one pair's midpoint: the refused ones changed nothing */
  strobe_gpu_queue q;
  CHECK_EQ_INT(strobe_gpu_queue_create((strobe_clock_domain){0}, "graphics", &q), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_gpu_queue_create(d, "no-dash", &q), STROBE_ELABEL);
  REQUIRE(strobe_gpu_queue_create(d, "graphics", &q) == 0);
  static strobe_site site = STROBE_GPU_SITE("refused_span");
  static strobe_site value_site = {"not_timed", NULL, NULL, __FILE__, NULL, __LINE__, STROBE_SITE_VALUE, 0, 0, 0};
  strobe_gpu_stats before = strobe_gpu_query_stats();
  CHECK_EQ_INT(strobe_gpu_span_add(NULL), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_gpu_span_add(&(strobe_gpu_span){.queue = q, .site = &site, .begin_ticks = 9, .end_ticks = 8}),
               STROBE_EINVAL);
  CHECK_EQ_INT(strobe_gpu_span_add(&(strobe_gpu_span){.queue = {77}, .site = &site, .end_ticks = 8}), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_gpu_span_add(&(strobe_gpu_span){.queue = q, .site = &value_site, .end_ticks = 8}),
               STROBE_EINVAL);
  CHECK_EQ_U64(strobe_gpu_query_stats().spans_refused - before.spans_refused, 4);
  CHECK_EQ_INT(strobe_gpu_frame_mark(0, STROBE_GPU_SUBMIT, 0), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_gpu_frame_mark(3, (strobe_gpu_instant)9, 0), STROBE_EINVAL);
}

/* While nothing records and no session holds the live table, spans and
 * marks are accepted and kept nowhere. */
static void test_idle_keeps_nothing(void) {
  strobe_clock_domain d;
  strobe_gpu_queue q;
  REQUIRE(strobe_clock_domain_create(&(strobe_clock_domain_desc){.name = "idle", .ticks_per_second = 1e9}, &d) == 0);
  REQUIRE(strobe_gpu_queue_create(d, "graphics", &q) == 0);
  static strobe_site site = STROBE_GPU_SITE("idle_span");
  strobe_gpu_stats before = strobe_gpu_query_stats();
  CHECK_EQ_INT(strobe_gpu_span_add(&(strobe_gpu_span){.queue = q, .site = &site, .frame_id = 31337, .end_ticks = 5}),
               0);
  CHECK_EQ_INT(strobe_gpu_frame_mark(31337, STROBE_GPU_FENCE_SEEN, 0), 0);
  strobe_gpu_frame f;
  CHECK_EQ_INT(strobe_gpu_query_frame(31337, &f), STROBE_ERANGE);
  CHECK_EQ_U64(strobe_gpu_query_stats().spans, before.spans);
  CHECK_EQ_U64(strobe_gpu_query_stats().frames_closed, before.frames_closed);
  CHECK_EQ_INT(site.id, 0); /* not even registered */
}

/* >>frames: a device whose ticks are host ticks exactly (pairs of width 0
 * and rate 1), so every expected gap is exact. */
static strobe_clock_domain exact_domain(const char *name, uint64_t *base) {
  strobe_clock_domain d;
  double tps = 1e9 / strobe_query_clock().ns_per_tick; /* a device tick is a host tick */
  REQUIRE(strobe_clock_domain_create(&(strobe_clock_domain_desc){.name = name, .ticks_per_second = tps}, &d) == 0);
  *base = strobe_clock_now();
  for (uint64_t i = 0; i < 8; i++) REQUIRE(strobe_clock_domain_calibrate(d, *base + i * 1000000, *base + i * 1000000, *base + i * 1000000) == 0);
  return d;
}

static void test_frame_gaps_and_order(void) {
  strobe__gpu_live_hold(1);
  uint64_t b;
  strobe_clock_domain d = exact_domain("exact", &b);
  strobe_gpu_queue q;
  REQUIRE(strobe_gpu_queue_create(d, "graphics", &q) == 0);
  static strobe_site pass1 = STROBE_GPU_SITE("pass1"), pass2 = STROBE_GPU_SITE("pass2");
  strobe_gpu_stats s0 = strobe_gpu_query_stats();
  uint64_t seq0 = strobe__gpu_frames_seq();
  /* frame 5001: in order; backlog 3000 ticks, polling 700 ticks */
  REQUIRE(strobe_gpu_frame_mark(5001, STROBE_GPU_CPU_END, b + 1000) == 0);
  REQUIRE(strobe_gpu_frame_mark(5001, STROBE_GPU_SUBMIT, b + 2000) == 0);
  REQUIRE(strobe_gpu_span_add(&(strobe_gpu_span){q, &pass1, STROBE_GPU_PASS_MAIN, 5001, b + 5000, b + 8000}) == 0);
  REQUIRE(strobe_gpu_span_add(&(strobe_gpu_span){q, &pass2, STROBE_GPU_PASS_FILTER_GROUP, 5001, b + 8000, b + 9300}) ==
          0);
  REQUIRE(strobe_gpu_frame_mark(5001, STROBE_GPU_FENCE_SEEN, b + 10000) == 0);
  strobe_gpu_frame f;
  REQUIRE(strobe_gpu_query_frame(5001, &f) == 0);
  double npt = strobe_query_clock().ns_per_tick;
  CHECK(f.closed);
  CHECK_EQ_INT(f.spans, 2);
  CHECK_EQ_U64(f.gpu_begin, b + 5000);
  CHECK_EQ_U64(f.gpu_end, b + 9300);
  CHECK_NEAR(f.backlog_ns, 3000 * npt, 1e-6);
  CHECK_NEAR(f.polling_ns, 700 * npt, 1e-6);
  CHECK_EQ_INT(f.violations, 0);
  /* frame 5002: the fence seen 400 ticks before the GPU end, far beyond the
   * bound (half a tick); the GPU start before submit too; submit before end */
  REQUIRE(strobe_gpu_frame_mark(5002, STROBE_GPU_CPU_END, b + 3000) == 0);
  REQUIRE(strobe_gpu_frame_mark(5002, STROBE_GPU_SUBMIT, b + 2500) == 0);
  REQUIRE(strobe_gpu_span_add(&(strobe_gpu_span){q, &pass1, NULL, 5002, b + 2000, b + 6000}) == 0);
  REQUIRE(strobe_gpu_frame_mark(5002, STROBE_GPU_FENCE_SEEN, b + 5600) == 0);
  REQUIRE(strobe_gpu_query_frame(5002, &f) == 0);
  CHECK_EQ_INT(f.violations,
               STROBE_GPU_ORDER_END_SUBMIT | STROBE_GPU_ORDER_SUBMIT_START | STROBE_GPU_ORDER_END_FENCE);
  CHECK(f.polling_ns < 0 && f.backlog_ns < 0); /* negative gaps are reported as they are, not clamped */
  /* a span after the fence: late, not folded in */
  REQUIRE(strobe_gpu_span_add(&(strobe_gpu_span){q, &pass2, NULL, 5002, b + 6000, b + 9000}) == 0);
  REQUIRE(strobe_gpu_query_frame(5002, &f) == 0);
  CHECK_EQ_U64(f.gpu_end, b + 6000);
  CHECK_EQ_INT(f.late_spans, 1);
  strobe_gpu_stats s1 = strobe_gpu_query_stats();
  CHECK_EQ_U64(s1.violations - s0.violations, 1);
  CHECK_EQ_U64(s1.late_spans - s0.late_spans, 1);
  CHECK_EQ_U64(s1.frames_closed - s0.frames_closed, 2);
  strobe_gpu_frame closed[4];
  uint64_t missed = 9;
  CHECK_EQ_INT(strobe__gpu_frames_since(seq0, closed, 4, &missed), 2);
  CHECK_EQ_U64(missed, 0);
  CHECK_EQ_U64(closed[0].frame_id, 5001);
  CHECK_EQ_U64(closed[1].frame_id, 5002);
  strobe__gpu_live_hold(-1);
}

/* A GPU start before submit by less than the calibration bound is no
 * violation: the pairs cannot tell the two apart. */
static void test_order_within_bound(void) {
  strobe__gpu_live_hold(1);
  strobe_clock_domain d;
  double npt = strobe_query_clock().ns_per_tick;
  REQUIRE(strobe_clock_domain_create(&(strobe_clock_domain_desc){.name = "wide", .ticks_per_second = 1e9 / npt}, &d) ==
          0);
  uint64_t b = strobe_clock_now();
  /* pairs 2000 ticks wide: a bound of at least 1000 ticks */
  for (uint64_t i = 0; i < 8; i++) REQUIRE(strobe_clock_domain_calibrate(d, b + i * 100000, b + i * 100000 - 1000, b + i * 100000 + 1000) == 0);
  strobe_gpu_queue q;
  REQUIRE(strobe_gpu_queue_create(d, "compute", &q) == 0);
  static strobe_site site = STROBE_GPU_SITE("within");
  REQUIRE(strobe_gpu_frame_mark(6001, STROBE_GPU_SUBMIT, b + 50000) == 0);
  REQUIRE(strobe_gpu_span_add(&(strobe_gpu_span){q, &site, NULL, 6001, b + 49500, b + 60000}) == 0);
  REQUIRE(strobe_gpu_frame_mark(6001, STROBE_GPU_FENCE_SEEN, b + 59500) == 0);
  strobe_gpu_frame f;
  REQUIRE(strobe_gpu_query_frame(6001, &f) == 0);
  CHECK(f.bound_ns >= 1000 * npt);
  CHECK_EQ_INT(f.violations, 0);
  /* ...and beyond it is one */
  REQUIRE(strobe_gpu_frame_mark(6002, STROBE_GPU_SUBMIT, b + 50000) == 0);
  REQUIRE(strobe_gpu_span_add(&(strobe_gpu_span){q, &site, NULL, 6002, b + 40000, b + 60000}) == 0);
  REQUIRE(strobe_gpu_frame_mark(6002, STROBE_GPU_FENCE_SEEN, b + 70000) == 0);
  REQUIRE(strobe_gpu_query_frame(6002, &f) == 0);
  CHECK_EQ_INT(f.violations, STROBE_GPU_ORDER_SUBMIT_START);
  strobe__gpu_live_hold(-1);
}

/* >>capture: what was recorded reads back exactly, and maps like the live fit. */
typedef struct seen {
  int pairs, spans, marks;
  uint64_t pair_dev[8], pair_before[8], pair_after[8];
  char span_pass[4][32], span_queue[4][32], span_site[4][32];
  uint64_t span_frame[4], span_begin[4], span_end[4];
  uint64_t mark_frame[4], mark_ticks[4];
  uint32_t mark_which[4];
} seen;

static void read_back(const char *path, seen *s, strobe_capture **keep) {
  memset(s, 0, sizeof *s);
  strobe_capture *cap;
  REQUIRE(strobe_capture_open(path, &cap) == 0);
  strobe_capture_record r;
  int rc;
  while ((rc = strobe_capture_next(cap, &r)) > 0) {
    const strobe_capture_device *d = r.device;
    if (r.type == STROBE_REC_CLOCK_PAIR && !strcmp(d->domain, "roundtrip") && s->pairs < 8) {
      s->pair_dev[s->pairs] = d->device_ticks;
      s->pair_before[s->pairs] = d->host_before;
      s->pair_after[s->pairs] = d->host_after;
      CHECK_EQ_U64(r.ticks, d->host_after);
      CHECK_NEAR(d->ticks_per_second, 1e9, 0);
      s->pairs++;
    } else if (r.type == STROBE_REC_GPU_SPAN && !strcmp(d->domain, "roundtrip") && s->spans < 4) {
      snprintf(s->span_pass[s->spans], 32, "%s", d->pass);
      snprintf(s->span_queue[s->spans], 32, "%s", d->queue);
      snprintf(s->span_site[s->spans], 32, "%s", strobe_capture_query_site(cap, r.site)->name);
      s->span_frame[s->spans] = d->frame_id;
      s->span_begin[s->spans] = d->device_begin;
      s->span_end[s->spans] = d->device_end;
      s->spans++;
    } else if (r.type == STROBE_REC_GPU_MARK && d->frame_id >= 7001 && d->frame_id <= 7002 && s->marks < 4) {
      s->mark_frame[s->marks] = d->frame_id;
      s->mark_ticks[s->marks] = r.ticks;
      s->mark_which[s->marks] = d->instant;
      s->marks++;
    } else {
      CHECK(r.device == NULL || r.type >= STROBE_REC_CLOCK_PAIR);
    }
  }
  CHECK_EQ_INT(rc, 0);
  if (keep)
    *keep = cap;
  else
    strobe_capture_close(cap);
}

static void test_capture_round_trip(void) {
  const char *path = case_temp_file("gpu");
  strobe_recorder *rec;
  REQUIRE(strobe_record_start(&(strobe_record_desc){.path = path}, &rec) == 0);
  strobe_clock_domain d;
  REQUIRE(strobe_clock_domain_create(&(strobe_clock_domain_desc){.name = "roundtrip", .ticks_per_second = 1e9}, &d) ==
          0);
  strobe_gpu_queue q;
  REQUIRE(strobe_gpu_queue_create(d, "graphics", &q) == 0);
  syn s = syn_new();
  uint64_t dev[8], before[8], after[8];
  for (int i = 0; i < 8; i++) {
    syn_pair(&s, i * SYN_PERIOD_NS, &dev[i], &before[i], &after[i]);
    REQUIRE(strobe_clock_domain_calibrate(d, dev[i], before[i], after[i]) == 0);
  }
  static strobe_site main_pass = STROBE_GPU_SITE("main_pass"), filter = STROBE_GPU_SITE("filter");
  uint64_t g0 = syn_device(3.2e6), g1 = syn_device(5.1e6), g2 = syn_device(7.0e6);
  REQUIRE(strobe_gpu_span_add(&(strobe_gpu_span){q, &main_pass, STROBE_GPU_PASS_MAIN, 7001, g0, g1}) == 0);
  REQUIRE(strobe_gpu_span_add(&(strobe_gpu_span){q, &filter, STROBE_GPU_PASS_FILTER_GROUP_RESUMED, 7001, g1, g2}) ==
          0);
  REQUIRE(strobe_gpu_frame_mark(7001, STROBE_GPU_CPU_END, syn_host(&s, 1.0e6)) == 0);
  REQUIRE(strobe_gpu_frame_mark(7001, STROBE_GPU_SUBMIT, syn_host(&s, 1.5e6)) == 0);
  REQUIRE(strobe_gpu_frame_mark(7001, STROBE_GPU_FENCE_SEEN, syn_host(&s, 9.0e6)) == 0);
  REQUIRE(strobe_record_stop(rec) == 0);

  seen got;
  strobe_capture *cap;
  read_back(path, &got, &cap);
  REQUIRE(got.pairs == 8);
  for (int i = 0; i < 8; i++) {
    CHECK_EQ_U64(got.pair_dev[i], dev[i]);
    CHECK_EQ_U64(got.pair_before[i], before[i]);
    CHECK_EQ_U64(got.pair_after[i], after[i]);
  }
  REQUIRE(got.spans == 2);
  CHECK_STR_EQ(got.span_pass[0], "main");
  CHECK_STR_EQ(got.span_pass[1], "filter_group_resumed");
  CHECK_STR_EQ(got.span_queue[0], "graphics");
  CHECK_STR_EQ(got.span_site[0], "main_pass");
  CHECK_STR_EQ(got.span_site[1], "filter");
  CHECK_EQ_U64(got.span_frame[0], 7001);
  CHECK_EQ_U64(got.span_begin[0], g0);
  CHECK_EQ_U64(got.span_end[0], g1);
  CHECK_EQ_U64(got.span_end[1], g2);
  REQUIRE(got.marks == 3);
  uint32_t which_seen = 0;
  for (int i = 0; i < 3; i++) {
    CHECK_EQ_U64(got.mark_frame[i], 7001);
    which_seen |= 1u << got.mark_which[i];
    if (got.mark_which[i] == STROBE_GPU_SUBMIT) CHECK_EQ_U64(got.mark_ticks[i], syn_host(&s, 1.5e6));
  }
  CHECK_EQ_INT(which_seen, (1u << STROBE_GPU_CPU_END) | (1u << STROBE_GPU_SUBMIT) | (1u << STROBE_GPU_FENCE_SEEN));
  /* the reader's map: within its bound of the truth, and within 1 us */
  strobe_capture_mapping m;
  REQUIRE(strobe_capture_map_device(cap, "roundtrip", g1, &m) == 0);
  double truth = strobe_capture_ticks_to_ns(cap, s.host0) + syn_true_ns(g1);
  CHECKF(fabs(m.time_ns - truth) <= m.bound_ns, "reader map off by %.1f ns, bound %.1f", fabs(m.time_ns - truth),
         m.bound_ns);
  CHECK(fabs(m.time_ns - truth) <= 1000.0);
  CHECK_EQ_INT(m.pairs, 8);
  CHECK_EQ_INT(strobe_capture_map_device(cap, "no_such_domain", g1, &m), STROBE_ESTATE);
  strobe_capture_totals t = strobe_capture_query_totals(cap);
  CHECK(t.clock_pairs >= 8 && t.gpu_spans >= 2 && t.gpu_marks >= 3);
  CHECK_EQ_U64(t.clock_pairs_dropped, 0);
  strobe_capture_close(cap);
}

/* The reader fits the 60 s synthetic domain from a capture: later pairs
 * improve the mapping of a span recorded before them. */
static void test_reader_fit_synthetic(void) {
  const char *path = case_temp_file("gpu60");
  strobe_recorder *rec;
  REQUIRE(strobe_record_start(&(strobe_record_desc){.path = path}, &rec) == 0);
  strobe_clock_domain d;
  REQUIRE(strobe_clock_domain_create(&(strobe_clock_domain_desc){.name = "synthetic60", .ticks_per_second = 1e9},
                                     &d) == 0);
  syn s = syn_new();
  for (double t = 0; t < SYN_SECONDS * 1e9; t += SYN_PERIOD_NS) {
    uint64_t dev, before, after;
    syn_pair(&s, t, &dev, &before, &after);
    REQUIRE(strobe_clock_domain_calibrate(d, dev, before, after) == 0);
  }
  REQUIRE(strobe_record_stop(rec) == 0);
  strobe_capture *cap;
  REQUIRE(strobe_capture_open(path, &cap) == 0);
  strobe_capture_record r;
  while (strobe_capture_next(cap, &r) > 0) {
  }
  double worst = 0, worst_excess = 0;
  for (double t = 0.5e9; t < SYN_SECONDS * 1e9 - 0.5e9; t += 0.25e9 + 1234567) {
    uint64_t dev = syn_device(t);
    strobe_capture_mapping m;
    REQUIRE(strobe_capture_map_device(cap, "synthetic60", dev, &m) == 0);
    double truth = strobe_capture_ticks_to_ns(cap, s.host0) + syn_true_ns(dev);
    double err = fabs(m.time_ns - truth);
    if (err > worst) worst = err;
    if (err - m.bound_ns > worst_excess) worst_excess = err - m.bound_ns;
  }
  CHECKF(worst <= 1000.0, "reader's mapped error %.1f ns > 1 us", worst);
  CHECKF(worst_excess <= 0, "a mapped time %.1f ns outside its bound", worst_excess);
  strobe_capture_close(cap);
}

/* >>session: the report of a session carries the GPU frames closed while it ran. */
static void test_session_report_gpu(void) {
  strobe_collector *c = su_collector(NULL);
  char idle[STROBE_SESSION_ID_MAX], early[STROBE_SESSION_ID_MAX], id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, idle);
  json_t *doc;
  strobe_report_free(su_end(c, idle, &doc));
  CHECK(jnull(doc, "gpu")); /* no GPU frame: unavailable, not zeros */
  json_decref(doc);
  su_start(c, 0, early); /* holds the live table open before `id` starts */
  uint64_t b;
  strobe_clock_domain d = exact_domain("session_exact", &b);
  strobe_gpu_queue q;
  REQUIRE(strobe_gpu_queue_create(d, "graphics", &q) == 0);
  static strobe_site site = STROBE_GPU_SITE("session_pass");
  REQUIRE(strobe_gpu_frame_mark(8999, STROBE_GPU_SUBMIT, b) == 0);
  REQUIRE(strobe_gpu_span_add(&(strobe_gpu_span){q, &site, NULL, 8999, b + 10, b + 20}) == 0);
  REQUIRE(strobe_gpu_frame_mark(8999, STROBE_GPU_FENCE_SEEN, b + 30) == 0); /* closed before `id` started */
  su_start(c, 0, id);
  double npt = strobe_query_clock().ns_per_tick;
  for (uint64_t k = 0; k < 5; k++) {
    uint64_t t = b + 100000 * (k + 1), start = t + 1000 + 1000 * (k + 1), end = start + 5000;
    REQUIRE(strobe_gpu_frame_mark(9000 + k, STROBE_GPU_CPU_END, t) == 0);
    REQUIRE(strobe_gpu_frame_mark(9000 + k, STROBE_GPU_SUBMIT, t + 1000) == 0);
    REQUIRE(strobe_gpu_span_add(&(strobe_gpu_span){q, &site, STROBE_GPU_PASS_MAIN, 9000 + k, start, end}) == 0);
    REQUIRE(strobe_gpu_frame_mark(9000 + k, STROBE_GPU_FENCE_SEEN, k == 4 ? end - 700 : end + 200 * (k + 1)) == 0);
  }
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "gpu.frames"), 5);
  CHECK_EQ_INT(jint(doc, "gpu.frames_not_kept"), 0);
  CHECK_EQ_INT(jint(doc, "gpu.queue_backlog_ms.n"), 5);
  CHECK_NEAR(jnum(doc, "gpu.queue_backlog_ms.p50_ms"), 3000 * npt / 1e6, 2e-6);
  CHECK_NEAR(jnum(doc, "gpu.queue_backlog_ms.max_ms"), 5000 * npt / 1e6, 2e-6);
  CHECK_EQ_INT(jint(doc, "gpu.polling_latency_ms.n"), 5);
  CHECK_NEAR(jnum(doc, "gpu.polling_latency_ms.max_ms"), 800 * npt / 1e6, 2e-6);
  CHECK_EQ_INT(jint(doc, "gpu.gpu_time_ms.n"), 5);
  CHECK_EQ_INT(jint(doc, "gpu.order.frames_violating"), 1);
  CHECK_EQ_INT(jint(doc, "gpu.order.fence_before_end"), 1);
  CHECK_EQ_INT(jint(doc, "gpu.order.start_before_submit"), 0);
  json_decref(doc);
  su_end_free(c, early);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

#define CASES(X)           \
  X(fit_synthetic_domain)  \
  X(refusals)              \
  X(idle_keeps_nothing)    \
  X(frame_gaps_and_order)  \
  X(order_within_bound)    \
  X(capture_round_trip)    \
  X(reader_fit_synthetic)  \
  X(session_report_gpu)
HARNESS_MAIN(CASES)
