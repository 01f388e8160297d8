/*
 * test_kinds.c — counters and gauges by kind (docs/recording.md §Counters
 * and gauges by kind) and Strobe's own footprint (§Strobe's own footprint):
 * each (family, kind) pair is its own site, named after the family with
 * the kind as its category, and reads back exactly from a capture; the
 * footprint counts what each part really holds (a thread's ring, what GROW
 * added, a flight recorder's ring, the interned names' copies), and the
 * drain records it as the gauge family strobe_memory on its own thread.
 */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "collect/collect.h"
#include "probe/probe.h"
#include "support/fixtures.h"
#include "support/harness.h"
#include "strobe/capture.h"
#include "strobe/flight.h"
#include "strobe/record.h"
#include "strobe/session.h"
#include "strobe/strobe.h"

#define FRAMES 300

/* One frame's draw calls by kind, and its texture memory. */
static void frame(uint32_t i) {
  STROBE_SCOPE("frame");
  STROBE_COUNTER_ADD_KIND_UNIT("draw_calls", "quads", i % 7, STROBE_UNIT_COUNT);
  STROBE_COUNTER_ADD_KIND_UNIT("draw_calls", "text", 2.5, STROBE_UNIT_COUNT);
  STROBE_COUNTER_ADD_KIND("draw_calls", "quads", 1u); /* a second call site of the same pair: a site of its own */
  STROBE_GAUGE_SET_KIND_UNIT("gpu_memory", "textures", (uint64_t)i << 20, STROBE_UNIT_BYTES);
}

static void test_kinds_read_back(void) {
  char path[64];
  REQUIRE(fx_temp_file(path, sizeof path, "kinds") == 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  for (uint32_t i = 0; i < FRAMES; i++) {
    frame(i);
    if (i % 50 == 49) CHECK_EQ_INT(strobe_record_flush(rec), 0);
  }
  CHECK_EQ_INT(strobe_record_stop(rec), 0);

  strobe_capture *c;
  REQUIRE_EQ_INT(strobe_capture_open(path, &c), 0);
  strobe_capture_record r;
  int rc;
  double quads = 0, quads_once = 0, text = 0, last_tex = -1;
  uint32_t quad_sites[2] = {0, 0}, nquad_sites = 0, tex = 0, wrong_meta = 0;
  while ((rc = strobe_capture_next(c, &r)) > 0) {
    if (r.type != STROBE_REC_COUNTER && r.type != STROBE_REC_GAUGE) continue;
    const strobe_capture_site *s = strobe_capture_query_site(c, r.site);
    REQUIRE(s != NULL);
    if (!strcmp(s->name, "draw_calls") && !strcmp(s->category, "quads")) {
      if (s->kind != STROBE_SITE_COUNTER) wrong_meta++;
      if (nquad_sites < 2 && quad_sites[0] != r.site && quad_sites[1] != r.site) quad_sites[nquad_sites++] = r.site;
      if (s->unit == STROBE_UNIT_COUNT) quads += r.value;
      else if (s->unit == STROBE_UNIT_NONE) quads_once += r.value;
      else wrong_meta++;
    } else if (!strcmp(s->name, "draw_calls") && !strcmp(s->category, "text")) {
      if (s->kind != STROBE_SITE_COUNTER || s->unit != STROBE_UNIT_COUNT) wrong_meta++;
      text += r.value;
    } else if (!strcmp(s->name, "gpu_memory") && !strcmp(s->category, "textures")) {
      if (s->kind != STROBE_SITE_GAUGE || s->unit != STROBE_UNIT_BYTES) wrong_meta++;
      if (r.value != (double)((uint64_t)tex << 20)) wrong_meta++;
      last_tex = r.value;
      tex++;
    } else {
      wrong_meta++;
    }
  }
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_INT(wrong_meta, 0);
  double want = 0;
  for (uint32_t i = 0; i < FRAMES; i++) want += i % 7;
  CHECK(quads == want);
  CHECK(quads_once == FRAMES);
  CHECK(text == 2.5 * FRAMES);
  CHECK_EQ_INT(nquad_sites, 2); /* one site per (family, kind) call site */
  CHECK_EQ_INT(tex, FRAMES);
  CHECK(last_tex == (double)((uint64_t)(FRAMES - 1) << 20));
  strobe_capture_close(c);
  unlink(path);
}

static pthread_barrier_t g_barrier;

/* Records one scope, then stays alive (its state and ring with it) until the main thread has measured. */
static void *record_one(void *arg) {
  (void)arg;
  { STROBE_SCOPE("other_thread"); }
  pthread_barrier_wait(&g_barrier);
  pthread_barrier_wait(&g_barrier);
  return NULL;
}

/* Each part of the footprint moves by what that part holds. */
static void test_footprint_parts(void) {
  REQUIRE_EQ_INT(strobe_setup(&(strobe_desc){.ring_events = 1024, .overflow = STROBE_OVERFLOW_GROW,
                                             .ring_events_max = 65536}), 0);
  strobe_recorder *rec;
  char path[64];
  REQUIRE(fx_temp_file(path, sizeof path, "kinds-foot") == 0);
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  { STROBE_SCOPE("attach"); }
  strobe__footprint a = strobe__footprint_query();
  CHECK(a.bytes[STROBE__FOOT_RINGS] >= 1025 * sizeof(strobe__event));
  CHECK_EQ_U64(a.bytes[STROBE__FOOT_RINGS_GROWN], 0);

  /* Another thread: one more ring at its attach size while it lives; its state is freed after it exits. */
  pthread_t th;
  REQUIRE_EQ_INT(pthread_barrier_init(&g_barrier, NULL, 2), 0);
  REQUIRE_EQ_INT(pthread_create(&th, NULL, record_one, NULL), 0);
  pthread_barrier_wait(&g_barrier);
  strobe__footprint live = strobe__footprint_query();
  CHECK(live.bytes[STROBE__FOOT_RINGS] - a.bytes[STROBE__FOOT_RINGS] >= 1025 * sizeof(strobe__event));
  pthread_barrier_wait(&g_barrier);
  pthread_join(th, NULL);
  pthread_barrier_destroy(&g_barrier);
  strobe__drain_now(); /* reaps the exited thread's state */
  strobe__footprint b = strobe__footprint_query();
  CHECK_EQ_U64(b.bytes[STROBE__FOOT_RINGS], a.bytes[STROBE__FOOT_RINGS]);

  /* A name copied by strobe_site_intern: at least its bytes. */
  static const char name[] = "a name made at run time for the footprint";
  (void)strobe_site_intern(name, sizeof name - 1, NULL, STROBE_SITE_SCOPE);
  strobe__footprint c = strobe__footprint_query();
  CHECK(c.bytes[STROBE__FOOT_INTERNED_NAMES] - b.bytes[STROBE__FOOT_INTERNED_NAMES] >= sizeof name);

  /* A flight recorder: exactly its ring, while it runs. */
  strobe_flight_recorder *fr;
  REQUIRE_EQ_INT(strobe_flight_recorder_start(&(strobe_flight_recorder_desc){.max_mib = 2}, &fr), 0);
  strobe__footprint d = strobe__footprint_query();
  CHECK_EQ_U64(d.bytes[STROBE__FOOT_FLIGHT_RECORDER] - c.bytes[STROBE__FOOT_FLIGHT_RECORDER], 2u << 20);
  CHECK_EQ_INT(strobe_flight_recorder_stop(fr), 0);
  strobe__footprint e = strobe__footprint_query();
  CHECK_EQ_U64(e.bytes[STROBE__FOOT_FLIGHT_RECORDER], c.bytes[STROBE__FOOT_FLIGHT_RECORDER]);

  /* GROW: bursts until this thread's ring outgrew the drain (bounded); what it grew by is counted. */
  const strobe__tstate *self = (const strobe__tstate *)(const void *)strobe__tls; /* `hot` is its first member */
  for (int burst = 0; burst < 200 && __atomic_load_n(&self->ring_events, __ATOMIC_RELAXED) == 1024; burst++)
    for (int i = 0; i < 100000; i++) STROBE_COUNTER_ADD("burst", 1);
  uint64_t grown = __atomic_load_n(&self->ring_events, __ATOMIC_RELAXED);
  REQUIRE(grown > 1024);
  strobe__footprint f = strobe__footprint_query();
  CHECK(f.bytes[STROBE__FOOT_RINGS_GROWN] >= (grown - 1024) * sizeof(strobe__event));
  strobe__drain_now(); /* frees the rings left behind: what is left is the growth itself */
  f = strobe__footprint_query();
  CHECK_EQ_U64(f.bytes[STROBE__FOOT_RINGS_GROWN], (grown - 1024) * sizeof(strobe__event));
  CHECK_EQ_U64(f.bytes[STROBE__FOOT_RINGS], e.bytes[STROBE__FOOT_RINGS]); /* the attach sizes did not change */
  CHECK_EQ_INT(strobe_record_stop(rec), 0);
  unlink(path);
}

/* While something records, the drain records the footprint about once a
 * second as gauges of the family strobe_memory, one kind per part, in
 * bytes, on its own thread. */
static void test_footprint_recorded(void) {
  char path[64];
  REQUIRE(fx_temp_file(path, sizeof path, "kinds-drain") == 0);
  strobe_recorder *rec;
  strobe_flight_recorder *fr;
  REQUIRE_EQ_INT(strobe_flight_recorder_start(&(strobe_flight_recorder_desc){.max_mib = 3}, &fr), 0);
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  { STROBE_SCOPE("work"); }
  /* Bounded wait on the condition: the first sample is due a second after recording began. */
  uint64_t deadline = fx_now_ns() + 20ull * 1000000000ull;
  int seen = 0;
  while (!seen && fx_now_ns() < deadline) {
    fx_sleep_ms(100);
    for (uint32_t id = 1; id < strobe__site_count() && !seen; id++) {
      const strobe_site *s = strobe__site_get(id);
      seen = s && s->category && !strcmp(s->name, STROBE__FOOTPRINT_FAMILY) && !strcmp(s->category, "interned_names");
    }
  }
  REQUIRE(seen);
  fx_sleep_ms(50);
  CHECK_EQ_INT(strobe_record_stop(rec), 0);
  CHECK_EQ_INT(strobe_flight_recorder_stop(fr), 0);

  strobe_capture *c;
  REQUIRE_EQ_INT(strobe_capture_open(path, &c), 0);
  strobe_capture_record r;
  int rc;
  uint32_t kinds_seen = 0, wrong = 0;
  double flight = -1;
  while ((rc = strobe_capture_next(c, &r)) > 0) {
    if (r.type != STROBE_REC_GAUGE) continue;
    const strobe_capture_site *s = strobe_capture_query_site(c, r.site);
    if (strcmp(s->name, STROBE__FOOTPRINT_FAMILY)) continue;
    if (s->unit != STROBE_UNIT_BYTES) wrong++;
    const strobe_capture_thread *t = strobe_capture_query_thread(c, r.thread);
    if (!t || strcmp(t->name, "strobe drain")) wrong++;
#define SEEN(id, label) \
    if (!strcmp(s->category, label)) kinds_seen |= 1u << STROBE__FOOT_##id;
    STROBE__FOOTPRINT_KINDS(SEEN)
#undef SEEN
    if (!strcmp(s->category, "flight_recorder")) flight = r.value;
    if (!strcmp(s->category, "rings") && r.value < 1025.0 * sizeof(strobe__event)) wrong++;
  }
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_INT(wrong, 0);
  CHECK_EQ_INT(kinds_seen, (1u << STROBE__FOOT_COUNT) - 1);
  CHECK(flight == (double)(3u << 20));
  strobe_capture_close(c);
  unlink(path);
}

/* Operation counters by kind reach captures with their kind (docs/capture-format.md, OPS payload). */
static void test_op_counters_by_kind(void) {
  char path[64];
  REQUIRE(fx_temp_file(path, sizeof path, "kinds-ops") == 0);
  strobe_collector *c = NULL;
  REQUIRE_EQ_INT(strobe_collector_create(&c), 0);
  strobe_window w;
  REQUIRE_EQ_INT(strobe_window_register(c, "main", 0, &w), 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  for (uint32_t i = 0; i < 4; i++) {
    strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
    strobe_op_counter_add_kind("draw_calls", "quads", (double)i);
    strobe_op_counter_add_kind("draw_calls", "text", 3);
    strobe_op_counter_add("rows", 7);
    strobe_op_end(op, 1);
  }
  CHECK_EQ_INT(strobe_record_stop(rec), 0);
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  strobe_capture_record r;
  int rc, ends = 0, wrong = 0;
  double quads = 0;
  while ((rc = strobe_capture_next(cap, &r)) > 0) {
    if (r.type != STROBE_REC_OP_END) continue;
    ends++;
    if (r.op->ncounters != 3) wrong++;
    for (uint32_t k = 0; k < r.op->ncounters; k++) {
      const strobe_capture_op_counter *n = &r.op->counters[k];
      if (!strcmp(n->name, "draw_calls") && !strcmp(n->kind, "quads")) quads += n->value;
      else if (!strcmp(n->name, "draw_calls") && !strcmp(n->kind, "text")) wrong += n->value != 3;
      else if (!strcmp(n->name, "rows") && !strcmp(n->kind, "")) wrong += n->value != 7;
      else wrong++;
    }
  }
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_INT(ends, 4);
  CHECK_EQ_INT(wrong, 0);
  CHECK(quads == 0 + 1 + 2 + 3);
  strobe_capture_close(cap);
  strobe_collector_close(c);
  strobe_collector_release(c);
  unlink(path);
}

#define CASES(X) X(kinds_read_back) X(op_counters_by_kind) X(footprint_parts) X(footprint_recorded)
HARNESS_MAIN(CASES)
