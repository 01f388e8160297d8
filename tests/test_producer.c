/*
 * test_producer.c — external producers' spans on lanes of their own
 * (include/strobe/producer.h, docs/recording.md §External producers): spans
 * with the caller's timestamps read back from a capture exactly, on their
 * lane, in host ticks or in a clock domain mapped with its pairs; nested
 * spans keep their times; run-time names come through interned sites,
 * flagged as content; a batch with one bad span adds nothing (and is
 * counted refused); a batch bigger than a quarter of the ring is refused;
 * lanes are refused for bad names, another domain, and past
 * STROBE_MAX_PRODUCER_LANES; nothing is kept while nothing records; the flight
 * recorder keeps the spans too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strobe/capture.h"
#include "strobe/flight.h"
#include "strobe/gpu.h"
#include "strobe/producer.h"
#include "strobe/record.h"
#include "support/case_files.h"
#include "support/harness.h"

#define MAXSEEN 16

typedef struct seen {
  int n;
  char lane[MAXSEEN][72], domain[MAXSEEN][72], site[MAXSEEN][72];
  uint64_t begin[MAXSEEN], end[MAXSEEN];
  uint32_t flags[MAXSEEN];
  uint64_t total;
} seen;

static void collect(strobe_capture *cap, seen *s) {
  memset(s, 0, sizeof *s);
  strobe_capture_record r;
  int rc;
  while ((rc = strobe_capture_next(cap, &r)) > 0) {
    if (r.type != STROBE_REC_LANE_SPAN) continue;
    REQUIRE(r.device != NULL);
    if (s->n < MAXSEEN) {
      const strobe_capture_site *site = strobe_capture_query_site(cap, r.site);
      REQUIRE(site != NULL);
      snprintf(s->lane[s->n], 72, "%s", r.device->queue);
      snprintf(s->domain[s->n], 72, "%s", r.device->domain);
      snprintf(s->site[s->n], 72, "%s", site->name);
      s->flags[s->n] = site->flags;
      s->begin[s->n] = r.device->device_begin;
      s->end[s->n] = r.device->device_end;
      s->n++;
    }
  }
  CHECK_EQ_INT(rc, 0);
  s->total = strobe_capture_query_totals(cap).lane_spans;
}

static void read_file(const char *path, seen *s, strobe_capture **keep) {
  strobe_capture *cap;
  REQUIRE(strobe_capture_open(path, &cap) == 0);
  collect(cap, s);
  if (keep)
    *keep = cap;
  else
    strobe_capture_close(cap);
}

static int find(const seen *s, const char *site) {
  for (int i = 0; i < s->n; i++)
    if (!strcmp(s->site[i], site)) return i;
  return -1;
}

/* >>capture: host-tick lanes, nested spans, interned names. */
static void test_capture_round_trip(void) {
  const char *path = case_temp_file("producer");
  strobe_producer_lane audio, script;
  REQUIRE(strobe_producer_lane_create(&(strobe_producer_lane_desc){.name = "audio"}, &audio) == 0);
  REQUIRE(strobe_producer_lane_create(&(strobe_producer_lane_desc){.name = "lua/main"}, &script) == 0);
  CHECK(audio.id != script.id);
  strobe_recorder *rec;
  REQUIRE(strobe_record_start(&(strobe_record_desc){.path = path}, &rec) == 0);
  static strobe_site callback = STROBE_PRODUCER_SITE("audio_callback"), mix = STROBE_PRODUCER_SITE("mix");
  uint64_t t0 = strobe_clock_now();
  const char *fn = "update_enemies";
  strobe_site *interned = strobe_site_intern(fn, strlen(fn), "lua", STROBE_SITE_SCOPE);
  REQUIRE(interned != NULL);
  strobe_clock_info ck = strobe_query_clock();
  uint64_t mono = ck.epoch_mono_ns + 1000000; /* 1 ms after the clock's epoch, as CLOCK_MONOTONIC ns */
  uint64_t b = strobe_clock_ticks_from_mono_ns(mono), e = strobe_clock_ticks_from_mono_ns(mono + 250000);
  /* one batch over two lanes: a callback with the mix nested inside it, and a script function */
  strobe_producer_span a[3] = {
      {audio, &callback, t0 + 1000, t0 + 9000}, {audio, &mix, t0 + 2000, t0 + 5000}, {script, interned, b, e}};
  CHECK_EQ_INT(strobe_producer_spans_add(a, 3), 3);
  REQUIRE(strobe_record_stop(rec) == 0);

  seen s;
  strobe_capture *cap;
  read_file(path, &s, &cap);
  REQUIRE(s.n == 3);
  CHECK_EQ_U64(s.total, 3);
  int ic = find(&s, "audio_callback"), im = find(&s, "mix"), il = find(&s, "update_enemies");
  REQUIRE(ic >= 0 && im >= 0 && il >= 0);
  CHECK_STR_EQ(s.lane[ic], "audio");
  CHECK_STR_EQ(s.lane[im], "audio");
  CHECK_STR_EQ(s.lane[il], "lua/main");
  CHECK_STR_EQ(s.domain[ic], "");
  CHECK_EQ_U64(s.begin[ic], t0 + 1000);
  CHECK_EQ_U64(s.end[ic], t0 + 9000);
  CHECK_EQ_U64(s.begin[im], t0 + 2000);
  CHECK_EQ_U64(s.end[im], t0 + 5000);
  CHECK_EQ_U64(s.begin[il], b);
  CHECK_EQ_U64(s.end[il], e);
  CHECK(s.flags[il] & STROBE_SITE_INTERNED);
  CHECK(!(s.flags[ic] & STROBE_SITE_INTERNED));
  /* host ticks map as they are: the span is 1 ms after the epoch, 250 us long */
  strobe_capture_mapping mb, me;
  REQUIRE(strobe_capture_map_device(cap, "", b, &mb) == 0);
  REQUIRE(strobe_capture_map_device(cap, "", e, &me) == 0);
  CHECK_NEAR(mb.time_ns, strobe_capture_ticks_to_ns(cap, b), 0.0);
  CHECK_NEAR(me.time_ns - mb.time_ns, 250000.0, 100.0);
  strobe_capture_close(cap);
}

/* A lane in a clock domain: raw ticks kept, mapped with the capture's pairs. */
static void test_domain_lane(void) {
  const char *path = case_temp_file("producer-dom");
  strobe_recorder *rec;
  REQUIRE(strobe_record_start(&(strobe_record_desc){.path = path}, &rec) == 0);
  strobe_clock_domain dom;
  REQUIRE(strobe_clock_domain_create(&(strobe_clock_domain_desc){.name = "replay_clock", .ticks_per_second = 1e6},
                                     &dom) == 0);
  strobe_producer_lane lane;
  REQUIRE(strobe_producer_lane_create(&(strobe_producer_lane_desc){.name = "replay", .domain = dom}, &lane) == 0);
  /* the device clock: microseconds, 5 s ahead of the host */
  double npt = strobe_clock_ticks_to_ns(1000000) / 1e6;
  uint64_t h0 = strobe_clock_now();
  for (int i = 0; i < 4; i++) {
    uint64_t host = h0 + (uint64_t)(i * 1e6 / npt); /* every 1 ms */
    uint64_t dev = 5000000 + (uint64_t)(strobe_clock_ticks_to_ns(host) / 1000.0);
    REQUIRE(strobe_clock_domain_calibrate(dom, dev, host, host) == 0);
  }
  uint64_t d0 = 5000000 + (uint64_t)(strobe_clock_ticks_to_ns(h0) / 1000.0);
  static strobe_site frame = STROBE_PRODUCER_SITE("replayed_frame");
  CHECK_EQ_INT(strobe_producer_spans_add(&(strobe_producer_span){lane, &frame, d0 + 500, d0 + 1500}, 1), 1);
  REQUIRE(strobe_record_stop(rec) == 0);
  seen s;
  strobe_capture *cap;
  read_file(path, &s, &cap);
  REQUIRE(s.n == 1);
  CHECK_STR_EQ(s.domain[0], "replay_clock");
  CHECK_STR_EQ(s.lane[0], "replay");
  CHECK_EQ_U64(s.begin[0], d0 + 500);
  strobe_capture_mapping m;
  REQUIRE(strobe_capture_map_device(cap, "replay_clock", d0 + 500, &m) == 0);
  double want = strobe_capture_ticks_to_ns(cap, h0) + 500000.0;
  CHECKF(m.time_ns > want - 2000 && m.time_ns < want + 2000, "mapped %.0f ns, want %.0f", m.time_ns, want);
  strobe_capture_close(cap);
}

/* One bad span refuses the whole batch: nothing of it reaches the capture. */
static void test_bad_span_adds_nothing(void) {
  const char *path = case_temp_file("producer-bad");
  strobe_producer_lane lane;
  REQUIRE(strobe_producer_lane_create(&(strobe_producer_lane_desc){.name = "worker_lane"}, &lane) == 0);
  strobe_recorder *rec;
  REQUIRE(strobe_record_start(&(strobe_record_desc){.path = path}, &rec) == 0);
  static strobe_site ok = STROBE_PRODUCER_SITE("ok_span");
  static strobe_site value = {"not_timed", NULL, NULL, __FILE__, NULL, __LINE__, STROBE_SITE_VALUE, 0, 0, 0};
  uint64_t t0 = strobe_clock_now();
  strobe_producer_stats before = strobe_producer_query_stats();
  strobe_producer_span batch[5];
  for (int i = 0; i < 5; i++)
    batch[i] = (strobe_producer_span){lane, &ok, t0 + 10 * (uint64_t)i + 1, t0 + 10 * (uint64_t)i + 5};
  batch[3].end_ticks = batch[3].begin_ticks - 1; /* ends before it begins */
  CHECK_EQ_INT(strobe_producer_spans_add(batch, 5), STROBE_EINVAL);
  batch[3].end_ticks = batch[3].begin_ticks + 1;
  batch[4].site = &value; /* a site that is no span */
  CHECK_EQ_INT(strobe_producer_spans_add(batch, 5), STROBE_EINVAL);
  batch[4].site = &ok;
  batch[0].begin_ticks = 0;
  CHECK_EQ_INT(strobe_producer_spans_add(batch, 5), STROBE_EINVAL);
  batch[0].begin_ticks = t0 + 1;
  batch[2].lane = (strobe_producer_lane){0}; /* one span on no lane */
  CHECK_EQ_INT(strobe_producer_spans_add(batch, 5), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_producer_spans_add(batch, STROBE_PRODUCER_BATCH_MAX + 1), STROBE_EINVAL);
  strobe_producer_stats after = strobe_producer_query_stats();
  CHECK_EQ_U64(after.batches_refused - before.batches_refused, 5);
  CHECK_EQ_U64(after.spans - before.spans, 0);
  REQUIRE(strobe_record_stop(rec) == 0);
  seen s;
  read_file(path, &s, NULL);
  CHECK_EQ_INT(s.n, 0);
  CHECK_EQ_U64(s.total, 0);
}

/* A batch needing more than a quarter of the ring is refused whole. */
static void test_batch_bigger_than_ring(void) {
  REQUIRE(strobe_setup(&(strobe_desc){.ring_events = 1024}) == 0);
  const char *path = case_temp_file("producer-ring");
  strobe_producer_lane lane;
  REQUIRE(strobe_producer_lane_create(&(strobe_producer_lane_desc){.name = "big"}, &lane) == 0);
  strobe_recorder *rec;
  REQUIRE(strobe_record_start(&(strobe_record_desc){.path = path}, &rec) == 0);
  static strobe_site sp = STROBE_PRODUCER_SITE("sp");
  static strobe_producer_span batch[100];
  uint64_t t0 = strobe_clock_now();
  for (int i = 0; i < 100; i++) batch[i] = (strobe_producer_span){lane, &sp, t0 + (uint64_t)i + 1, t0 + (uint64_t)i + 2};
  CHECK_EQ_INT(strobe_producer_spans_add(batch, 100), STROBE_ELIMIT); /* 400 events > 1024 / 4 */
  CHECK_EQ_INT(strobe_producer_spans_add(batch, 64), 64);              /* 256: fits */
  REQUIRE(strobe_record_stop(rec) == 0);
  seen s;
  read_file(path, &s, NULL);
  CHECK_EQ_U64(s.total, 64);
}

static void test_lane_refusals(void) {
  strobe_producer_lane l = {7};
  CHECK_EQ_INT(strobe_producer_lane_create(&(strobe_producer_lane_desc){.name = "has space"}, &l), STROBE_ELABEL);
  CHECK_EQ_INT(l.id, 0);
  CHECK_EQ_INT(strobe_producer_lane_create(&(strobe_producer_lane_desc){.name = ""}, &l), STROBE_ELABEL);
  CHECK_EQ_INT(strobe_producer_lane_create(&(strobe_producer_lane_desc){.name = NULL}, &l), STROBE_ELABEL);
  char long_name[STROBE_PRODUCER_LANE_NAME_MAX + 2];
  memset(long_name, 'a', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = 0;
  CHECK_EQ_INT(strobe_producer_lane_create(&(strobe_producer_lane_desc){.name = long_name}, &l), STROBE_ELABEL);
  /* a lane names a row, never a path: no empty, "." or ".." segment */
  const char *paths[] = {"..", "../x", "a/../b", "a/..", "/abs", "a//b", "a/", ".", "a/./b"};
  for (size_t i = 0; i < sizeof paths / sizeof *paths; i++)
    CHECKF(strobe_producer_lane_create(&(strobe_producer_lane_desc){.name = paths[i]}, &l) == STROBE_ELABEL, "%s",
           paths[i]);
  REQUIRE(strobe_producer_lane_create(&(strobe_producer_lane_desc){.name = "py/a..b/.c"}, &l) == 0);
  CHECK_EQ_INT(strobe_producer_lane_create(&(strobe_producer_lane_desc){.name = "x", .domain = {9}}, &l), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_producer_lane_create(NULL, &l), STROBE_EINVAL);
  strobe_producer_lane a, b;
  REQUIRE(strobe_producer_lane_create(&(strobe_producer_lane_desc){.name = "same"}, &a) == 0);
  REQUIRE(strobe_producer_lane_create(&(strobe_producer_lane_desc){.name = "same"}, &b) == 0);
  CHECK_EQ_INT(a.id, b.id);
  strobe_clock_domain dom;
  REQUIRE(strobe_clock_domain_create(&(strobe_clock_domain_desc){.name = "other", .ticks_per_second = 1e3}, &dom) ==
          0);
  CHECK_EQ_INT(strobe_producer_lane_create(&(strobe_producer_lane_desc){.name = "same", .domain = dom}, &b), STROBE_EBUSY);
  uint32_t made = strobe_producer_query_stats().lanes;
  char name[16];
  for (uint32_t i = made; i < STROBE_MAX_PRODUCER_LANES; i++) {
    snprintf(name, sizeof name, "lane_%u", i);
    REQUIRE(strobe_producer_lane_create(&(strobe_producer_lane_desc){.name = name}, &b) == 0);
  }
  CHECK_EQ_INT(strobe_producer_lane_create(&(strobe_producer_lane_desc){.name = "one_too_many"}, &b), STROBE_ELIMIT);
  CHECK_EQ_INT(b.id, 0);
  CHECK_EQ_INT(strobe_producer_query_stats().lanes, STROBE_MAX_PRODUCER_LANES);
}

static void test_idle_keeps_nothing(void) {
  strobe_producer_lane lane;
  REQUIRE(strobe_producer_lane_create(&(strobe_producer_lane_desc){.name = "idle"}, &lane) == 0);
  static strobe_site sp = STROBE_PRODUCER_SITE("idle_span");
  strobe_producer_stats before = strobe_producer_query_stats();
  CHECK_EQ_INT(strobe_producer_spans_add(&(strobe_producer_span){lane, &sp, 10, 20}, 1), 0);
  strobe_producer_stats after = strobe_producer_query_stats();
  CHECK_EQ_U64(after.spans, before.spans);
  CHECK_EQ_U64(after.batches, before.batches);
}

/* The flight recorder keeps producer spans like every event: a dump holds them. */
static void test_flight_recorder(void) {
  const char *path = case_temp_file("producer-flight");
  strobe_producer_lane lane;
  REQUIRE(strobe_producer_lane_create(&(strobe_producer_lane_desc){.name = "flight_lane"}, &lane) == 0);
  strobe_flight_recorder *fl;
  REQUIRE(strobe_flight_recorder_start(NULL, &fl) == 0);
  static strobe_site sp = STROBE_PRODUCER_SITE("flight_span");
  uint64_t t0 = strobe_clock_now();
  CHECK_EQ_INT(strobe_producer_spans_add(&(strobe_producer_span){lane, &sp, t0, t0 + 77}, 1), 1);
  REQUIRE(strobe_flight_recorder_dump(fl, path) == 0);
  REQUIRE(strobe_flight_recorder_stop(fl) == 0);
  seen s;
  read_file(path, &s, NULL);
  REQUIRE(s.n == 1);
  CHECK_STR_EQ(s.site[0], "flight_span");
  CHECK_EQ_U64(s.end[0] - s.begin[0], 77);
}

#define CASES(X)          \
  X(capture_round_trip)   \
  X(domain_lane)          \
  X(bad_span_adds_nothing) \
  X(batch_bigger_than_ring) \
  X(lane_refusals)        \
  X(idle_keeps_nothing)   \
  X(flight_recorder)
HARNESS_MAIN(CASES)
