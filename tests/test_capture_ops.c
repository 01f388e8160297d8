/*
 * test_capture_ops.c — operations, stages, operation counters and hand-offs
 * reach captures from one instrumentation (docs/capture-format.md, OPS
 * block): a capture of strobe_op_begin/stages/strobe_op_counter_add/strobe_op_end
 * with no scope and no frame mark holds every frame, whole (window, frame id,
 * committed, stages, counters, times), through a file recording and a
 * flight-recorder dump and a live stream alike; take/resume appear on the
 * threads they happened on, and the stages of both threads are in the one
 * operation; the application's frame id (strobe_op_begin_frame) is the id
 * the session report and the capture both carry, and Strobe's own count is
 * the same in both otherwise; an operation begun before any recording
 * started is still captured, flagged as having no stage detail; and a reader
 * that does not know the new block types still reads everything else of
 * such a capture (they are skippable: adding them changed no format version); a
 * pass operation over the flight recorder's threshold is a spike by itself,
 * and the spike dump names it by the application's frame id; operation
 * counters carry their units into session reports and captures; a session
 * report and a capture name every operation's window by the same declared
 * id (a nested window's, one registered again), and count it as one window.
 *
 * STROBE_TEST_NEEDS: jansson reports
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/codec.h"
#include "strobe/capture.h"
#include "strobe/flight.h"
#include "strobe/record.h"
#include "support/case_files.h"
#include "support/session_util.h"

#define FRAMES 6
#define APP_BASE 193u /* GDK's counter of the stalled frame */

static char g_path[256], g_dump[256], g_live[256];

/* The running case's capture paths: a file, a flight-recorder dump and a
 * saved live stream, in a directory removed when the case ends. */
static void use_case_paths(void) {
  const char *dir = case_temp_dir("ops");
  snprintf(g_path, sizeof g_path, "%s/file.strobe", dir);
  snprintf(g_dump, sizeof g_dump, "%s/dump.strobe", dir);
  snprintf(g_live, sizeof g_live, "%s/live.strobe", dir);
}

/* Everything a live stream queued, into a file. */
static void save_stream(strobe_stream *st, const char *path) {
  FILE *f = fopen(path, "wb");
  REQUIRE(f != NULL);
  char buf[65536];
  size_t n;
  while ((n = strobe_stream_read(st, buf, sizeof buf)) > 0) CHECK(fwrite(buf, 1, n, f) == n);
  CHECK(fclose(f) == 0);
}

typedef struct seen_op {
  uint64_t id, frame_id;
  int committed, handed_off, detail, app_frame_id;
  uint32_t end_thread, kind;
  double duration_ns;
  double layout_total_ns, paint_total_ns;
  uint32_t layout_count, paint_count, present_count;
  int layout_nested_in_none, paint_nested_in_layout;
  double rows;
  char window[32];
} seen_op;

typedef struct seen {
  seen_op ops[64];
  int nops, begins, takes, resumes;
  uint32_t take_thread, resume_thread, begin_thread_of_handed;
  uint64_t scopes_records;
} seen;

static int by_id(const void *x, const void *y) {
  const seen_op *a = x, *b = y;
  return a->id < b->id ? -1 : a->id > b->id;
}

static void read_capture(const char *path, seen *out) {
  memset(out, 0, sizeof *out);
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  CHECK_EQ_INT(strobe_capture_query_header(cap)->version, STROBE_CAPTURE_FORMAT_VERSION);
  strobe_capture_record r;
  int rc;
  while ((rc = strobe_capture_next(cap, &r)) > 0) {
    if (r.type == STROBE_REC_END) out->scopes_records++;
    if (r.type == STROBE_REC_OP_BEGIN) out->begins++;
    if (r.type == STROBE_REC_OP_TAKE) {
      out->takes++;
      out->take_thread = r.thread;
    }
    if (r.type == STROBE_REC_OP_RESUME) {
      out->resumes++;
      out->resume_thread = r.thread;
    }
    if (r.type != STROBE_REC_OP_END) continue;
    CHECK(out->nops < 64);
    const strobe_capture_op *op = r.op;
    seen_op *s = &out->ops[out->nops++];
    s->id = op->id;
    s->kind = op->kind;
    s->frame_id = op->frame_id;
    s->committed = op->committed;
    s->handed_off = op->handed_off;
    s->detail = op->detail;
    s->app_frame_id = op->app_frame_id;
    s->end_thread = r.thread;
    s->duration_ns = op->duration_ns;
    CHECK_NEAR(op->start_ns + op->duration_ns, r.time_ns, 1.0);
    snprintf(s->window, sizeof s->window, "%s", op->window);
    for (uint32_t i = 0; i < op->nstages; i++) {
      const strobe_capture_site *site = strobe_capture_query_site(cap, op->stages[i].site);
      REQUIRE(site != NULL);
      CHECK_EQ_INT(site->kind, STROBE_SITE_STAGE);
      CHECK(op->stages[i].min_ns <= op->stages[i].max_ns);
      if (!strcmp(site->name, "layout")) {
        s->layout_total_ns = op->stages[i].total_ns;
        s->layout_count = op->stages[i].count;
        s->layout_nested_in_none = site->parent[0] == 0;
      } else if (!strcmp(site->name, "present")) {
        s->present_count = op->stages[i].count;
      } else if (!strcmp(site->name, "paint")) {
        s->paint_total_ns = op->stages[i].total_ns;
        s->paint_count = op->stages[i].count;
        s->paint_nested_in_layout = !strcmp(site->parent, "layout");
      }
    }
    for (uint32_t i = 0; i < op->ncounters; i++)
      if (!strcmp(op->counters[i].name, "rows")) s->rows = op->counters[i].value;
  }
  CHECK_EQ_INT(rc, 0);
  strobe_capture_totals t = strobe_capture_query_totals(cap);
  CHECK_EQ_U64(t.ops, (uint64_t)out->nops);
  strobe_capture_close(cap);
  /* Blocks come per thread: put operations back in the order they began. */
  qsort(out->ops, (size_t)out->nops, sizeof *out->ops, by_id);
}

static void spin_us(long us) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do clock_gettime(CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

/* One frame: layout (twice, with paint nested once) and a counter, no scope, no mark. */
static void frame_body(void) {
  for (int k = 0; k < 2; k++) {
    STROBE_STAGE("layout", NULL);
    spin_us(200);
    if (k == 0) {
      STROBE_STAGE("paint", "layout");
      spin_us(300);
    }
  }
  strobe_op_counter_add("rows", 3);
  strobe_op_counter_add("rows", 4);
}

static strobe_op g_handed;
static void *resume_and_end(void *arg) {
  (void)arg;
  strobe_op_resume(g_handed);
  {
    STROBE_STAGE("present", NULL);
    spin_us(100);
  }
  strobe_op_end(g_handed, 1);
  return NULL;
}

/* >>one instrumentation: a file recording and a flight recorder at once */
static void ops_reach_captures(int app_ids) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char sid[STROBE_SESSION_ID_MAX];
  su_start(c, 0, sid);
  strobe_flight_recorder *fr;
  REQUIRE_EQ_INT(strobe_flight_recorder_start(NULL, &fr), 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = g_path}, &rec), 0);
  strobe_stream *live;
  REQUIRE_EQ_INT(strobe_stream_start(&(strobe_stream_desc){0}, &live), 0);

  for (int i = 0; i < FRAMES; i++) {
    int st = -1;
    strobe_op op = app_ids ? strobe_op_begin_frame(c, w, APP_BASE + 7u * (uint64_t)i, &st)
                           : strobe_op_begin(c, w, STROBE_OP_PASS, &st);
    CHECK_EQ_INT(st, 0);
    frame_body();
    if (i == 2) { /* handed to another thread, which ends it */
      CHECK(strobe_op_take().id == op.id);
      g_handed = op;
      pthread_t th;
      REQUIRE_EQ_INT(pthread_create(&th, NULL, resume_and_end, NULL), 0);
      CHECK_EQ_INT(pthread_join(th, NULL), 0);
    } else {
      strobe_op_end(op, i != 4); /* frame 4 is dropped work: committed false */
    }
  }
  strobe_op input = strobe_op_begin(c, w, STROBE_OP_INPUT, NULL);
  strobe_op_end(input, 1);

  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
  REQUIRE_EQ_INT(strobe_flight_recorder_dump(fr, g_dump), 0);
  REQUIRE_EQ_INT(strobe_flight_recorder_stop(fr), 0);
  REQUIRE_EQ_INT(strobe_stream_stop(live), 0);
  CHECK_EQ_U64(strobe_stream_query_stats(live).events_dropped, 0);
  save_stream(live, g_live);
  strobe_stream_free(live);

  json_t *doc;
  strobe_report *report = su_end(c, sid, &doc);
  json_t *samples = jreq(doc, "samples");

  const char *paths[3] = {g_path, g_dump, g_live}; /* a file, a flight-recorder dump, a live stream */
  for (int p = 0; p < 3; p++) {
    seen s;
    read_capture(paths[p], &s);
    CHECK_EQ_INT(s.scopes_records, FRAMES * 3 + 1); /* stages are scopes too: 3 per frame, +1 on the worker */
    CHECK_EQ_INT(s.nops, FRAMES + 1);
    CHECK_EQ_INT(s.begins, FRAMES + 1);
    CHECK_EQ_INT(s.takes, 1);
    CHECK_EQ_INT(s.resumes, 1);
    CHECK(s.take_thread != s.resume_thread);
    int passes = 0;
    for (int i = 0; i < s.nops; i++) {
      seen_op *o = &s.ops[i];
      CHECK(!strcmp(o->window, "main"));
      CHECK_EQ_INT(o->detail, 1);
      if (o->kind == STROBE_OP_INPUT) {
        CHECK_EQ_U64(o->frame_id, 0);
        continue;
      }
      CHECK_EQ_INT(o->kind, STROBE_OP_PASS);
      int k = passes++;
      CHECK_EQ_U64(o->frame_id, app_ids ? APP_BASE + 7u * (uint64_t)k : (uint64_t)k + 1);
      CHECK_EQ_INT(o->app_frame_id, app_ids);
      CHECK_EQ_INT(o->committed, k != 4);
      CHECK_EQ_INT(o->handed_off, k == 2);
      if (k == 2) CHECK(o->end_thread == s.resume_thread);
      CHECK_EQ_INT(o->layout_count, 2);
      CHECK_EQ_INT(o->paint_count, 1);
      CHECK_EQ_INT(o->present_count, k == 2); /* run by the thread it was handed to */
      CHECK(o->layout_nested_in_none && o->paint_nested_in_layout);
      CHECK(o->layout_total_ns >= 400e3 && o->paint_total_ns >= 300e3);
      CHECK(o->duration_ns >= o->layout_total_ns);
      CHECK_NEAR(o->rows, 7.0, 0.0);

      /* The same frame in the session report: same id, same frame id. */
      int found = 0;
      size_t j;
      json_t *smp;
      json_array_foreach(samples, j, smp) {
        if ((uint64_t)jint(smp, "id") != o->id) continue;
        found = 1;
        CHECK_EQ_U64((uint64_t)jint(smp, "frame_id"), o->frame_id);
      }
      CHECK(found);
    }
    CHECK_EQ_INT(passes, FRAMES);
  }
  json_decref(doc);
  strobe_report_free(report);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

/* >>boundary: an operation begun before any recording is captured at its
 * end, flagged as having no stage detail (not as having none). */
static void test_began_before_recording(void) {
  use_case_paths();
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  /* The thread's first operation gives it its context: the pass is then kept on the thread, without the lock
   * (docs/sessions.md §Cost when nothing listens), and its END still reaches the capture. */
  su_op(c, w, STROBE_OP_REBUILD, 1);
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = g_path}, &rec), 0);
  frame_body();
  strobe_op_end(op, 1);
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
  seen s;
  read_capture(g_path, &s);
  CHECK_EQ_INT(s.begins, 0);
  CHECK_EQ_INT(s.nops, 1);
  CHECK_EQ_INT(s.ops[0].detail, 0);
  CHECK_EQ_INT(s.ops[0].layout_count, 0);
  CHECK_EQ_U64(s.ops[0].frame_id, 1);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

/* Counters added while nothing listens (no session, no capture) return at
 * once and are not kept (docs/sessions.md §Cost when nothing listens): an
 * operation begun under one recording and ended under the next keeps the
 * adds made while either records, not those made in between. */
static void test_counters_between_recordings(void) {
  use_case_paths();
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = g_path}, &rec), 0);
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  strobe_op_counter_add("rows", 3);
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
  strobe_op_counter_add("rows", 4); /* nothing listens */
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = g_path}, &rec), 0);
  strobe_op_counter_add("rows", 5);
  strobe_op_end(op, 1);
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
  seen s;
  read_capture(g_path, &s);
  CHECK_EQ_INT(s.nops, 1);
  CHECK_EQ_INT(s.ops[0].detail, 1);
  CHECK_NEAR(s.ops[0].rows, 8.0, 1e-9);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

/* >>compatibility: the new blocks are skippable. Retyping them to a block
 * type no reader knows (as a reader from before them sees them) leaves every
 * other record as it was; and a capture without them reads as before. */
static void test_old_readers_skip(void) {
  use_case_paths();
  ops_reach_captures(1); /* the capture with OPS and LABELS blocks, at g_path */
  FILE *f = fopen(g_path, "rb");
  REQUIRE(f != NULL);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc((size_t)n);
  CHECK(buf && fread(buf, 1, (size_t)n, f) == (size_t)n);
  fclose(f);

  strobe_capture *a, *b;
  REQUIRE_EQ_INT(strobe_capture_open_memory(buf, (size_t)n, &a), 0);
  uint8_t *old = malloc((size_t)n);
  memcpy(old, buf, (size_t)n);
  uint32_t fields_len = (uint32_t)old[12] | (uint32_t)old[13] << 8 | (uint32_t)old[14] << 16 | (uint32_t)old[15] << 24;
  size_t off = 16 + fields_len;
  int retyped = 0;
  while (off + STROBE__BLOCK_HEADER <= (size_t)n) {
    strobe__block_header h;
    strobe__block_header_decode(old + off, &h);
    if (h.type == STROBE__BLK_OPS || h.type == STROBE__BLK_LABELS) {
      h.type = 200;
      strobe__block_header_encode(old + off, &h);
      h.crc = strobe__block_crc(old + off, old + off + STROBE__BLOCK_HEADER, h.stored_len);
      strobe__block_header_encode(old + off, &h);
      retyped++;
    }
    off += STROBE__BLOCK_HEADER + h.stored_len;
  }
  CHECK(retyped >= 2);
  REQUIRE_EQ_INT(strobe_capture_open_memory(old, (size_t)n, &b), 0);
  strobe_capture_record ra, rb;
  int rca, rcb;
  uint64_t same = 0;
  for (;;) {
    do rca = strobe_capture_next(a, &ra);
    while (rca > 0 && ra.op);
    rcb = strobe_capture_next(b, &rb);
    CHECK(rcb <= 0 || rb.op == NULL);
    CHECK_EQ_INT(rca, rcb);
    if (rca <= 0) break;
    CHECK_EQ_INT(ra.type, rb.type);
    CHECK_EQ_U64(ra.ticks, rb.ticks);
    CHECK_EQ_INT(ra.site, rb.site);
    same++;
  }
  CHECK_EQ_INT(rca, 0);
  CHECK(same > 10);
  CHECK_EQ_U64(strobe_capture_query_totals(b).ops, 0);
  CHECK(strobe_capture_query_totals(a).ops > 0);
  strobe_capture_close(a);
  strobe_capture_close(b);
  free(buf);
  free(old);
}

static void test_ops_reach_captures(void) {
  use_case_paths();
  ops_reach_captures(0);
}

/* The same, with the application's own frame ids. */
static void test_ops_reach_captures_app_ids(void) {
  use_case_paths();
  ops_reach_captures(1);
}

/* >>spike: a pass operation over the threshold is a spike by itself (the
 * default spike site "frame" is the frame however it is marked), and its
 * dump names it by the application's frame id. */
static void test_pass_spike_dump(void) {
  const char *dir = case_temp_dir("spikes");
  strobe_flight_recorder *fr;
  REQUIRE(strobe_flight_recorder_start(&(strobe_flight_recorder_desc){.spike_threshold_ms = 100, .spike_dir = dir},
                                       &fr) == 0);
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  for (int i = 0; i < 4; i++) {
    strobe_op op = strobe_op_begin_frame(c, w, 4240u + (uint64_t)i, NULL);
    {
      STROBE_STAGE("layout", NULL);
      spin_us(i == 2 ? 150000 : 1000); /* frame 4242 stalls */
    }
    strobe_op_end(op, 1);
  }
  strobe_flight_recorder_stats st = {0};
  for (int tries = 0; tries < 500 && st.spikes_dumped == 0; tries++) {
    fx_sleep_ms(10);
    st = strobe_flight_recorder_query_stats(fr);
  }
  CHECK_EQ_U64(st.spikes_dumped, 1);
  CHECK(st.last_spike_ms >= 150.0);
  CHECK_EQ_INT(strobe_flight_recorder_stop(fr), 0);
  if (st.spikes_dumped) {
    seen s;
    read_capture(st.last_spike_path, &s);
    int found = 0;
    for (int i = 0; i < s.nops; i++)
      if (s.ops[i].frame_id == 4242u && s.ops[i].duration_ns >= 150e6 && s.ops[i].app_frame_id) found = 1;
    CHECK(found);
  }
  strobe_collector_close(c);
  strobe_collector_release(c);
}

/* A collector with a session and a file recording at g_path, for one case. */
static strobe_collector *start_recording(strobe_window *w, char *id, strobe_recorder **rec) {
  use_case_paths();
  strobe_collector *c = su_collector(w);
  su_start(c, 0, id);
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = g_path}, rec), 0);
  return c;
}

/* Operation counters with units (strobe_op_counter_add_unit, _kind_unit;
 * docs/recording.md §Units): the unit of a counter's first add that named one
 * reaches the session report (each sample's counters and counter_summary)
 * and the capture (OPS payload); a counter without one says none, and a
 * unit outside STROBE_UNITS is none and counted as a replaced label. */
static void test_op_counter_units(void) {
  strobe_window w;
  char id[STROBE_SESSION_ID_MAX];
  strobe_recorder *rec;
  strobe_collector *c = start_recording(&w, id, &rec);
  for (uint32_t i = 0; i < 3; i++) {
    strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
    strobe_op_counter_add_unit("bytes_read", 1024.0, STROBE_UNIT_BYTES);
    strobe_op_counter_add_unit("bytes_read", 1, STROBE_UNIT_COUNT); /* summed; the first unit stays */
    strobe_op_counter_add("upload_ms", 0.5);                           /* none first, then a unit: it takes it */
    strobe_op_counter_add_kind_unit("upload_ms", "textures", 2.5, STROBE_UNIT_MS);
    strobe_op_counter_add_kind_unit("upload_ms", "textures", 0.5, STROBE_UNIT_MS);
    strobe_op_counter_add_unit("upload_ms", 0.25, STROBE_UNIT_MS);
    strobe_op_counter_add("rows", 7);
    strobe_op_counter_add_unit("odd", 1, (strobe_unit)STROBE_UNIT_LIMIT);
    strobe_op_end(op, 1);
  }
  CHECK_EQ_INT(strobe_record_stop(rec), 0);
  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(jreq(doc, "counts"), "labels_replaced"), 3); /* the bad unit, once per operation */
  json_t *sample = json_array_get(jreq(doc, "samples"), 0);
  json_t *counters = jreq(sample, "counters");
  const struct {
    const char *name, *kind, *unit;
    double value;
  } want[] = {{"bytes_read", NULL, "bytes", 1025}, {"upload_ms", NULL, "ms", 0.75},
              {"upload_ms", "textures", "ms", 3}, {"rows", NULL, "none", 7}, {"odd", NULL, "none", 1}};
  size_t i;
  json_t *e;
  int matched = 0;
  json_array_foreach(counters, i, e) {
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
      json_t *kind = json_object_get(e, "kind");
      int same_kind = want[k].kind ? json_is_string(kind) && !strcmp(json_string_value(kind), want[k].kind)
                                   : json_is_null(kind);
      if (strcmp(jstr(e, "name"), want[k].name) || !same_kind) continue;
      CHECKF(!strcmp(jstr(e, "unit"), want[k].unit), "%s/%s: unit %s, want %s", want[k].name,
             want[k].kind ? want[k].kind : "-", jstr(e, "unit"), want[k].unit);
      double v = json_number_value(json_object_get(e, "value"));
      CHECKF(v == want[k].value, "%s: value %g, want %g", want[k].name, v, want[k].value);
      matched++;
    }
  }
  CHECK_EQ_INT(matched, 5);
  int summarised = 0;
  json_array_foreach(jreq(doc, "counter_summary"), i, e) {
    const char *want_unit = !strcmp(jstr(e, "name"), "bytes_read") ? "bytes" : !strcmp(jstr(e, "name"), "rows") ? "none" : NULL;
    if (!want_unit) continue;
    CHECK_STR_EQ(jstr(e, "unit"), want_unit);
    summarised++;
  }
  CHECK_EQ_INT(summarised, 2);
  json_decref(doc);

  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(g_path, &cap), 0);
  strobe_capture_record r;
  int rc, ends = 0, wrong = 0;
  while ((rc = strobe_capture_next(cap, &r)) > 0) {
    if (r.type != STROBE_REC_OP_END) continue;
    ends++;
    wrong += r.op->ncounters != 5;
    for (uint32_t k = 0; k < r.op->ncounters; k++) {
      const strobe_capture_op_counter *n = &r.op->counters[k];
      uint32_t u = !strcmp(n->name, "bytes_read") ? STROBE_UNIT_BYTES
                   : !strcmp(n->name, "upload_ms") ? STROBE_UNIT_MS
                                                  : STROBE_UNIT_NONE;
      if (n->unit != u) {
        wrong++;
        fprintf(stderr, "op %d counter %s/%s: unit %u, want %u\n", ends, n->name, n->kind, n->unit, u);
      }
    }
  }
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_INT(ends, 3);
  CHECK_EQ_INT(wrong, 0);
  strobe_capture_close(cap);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

/* >>window ids: a session report and a capture name each operation's window
 * alike, by the id it was registered with (docs/sessions.md §Frame rate): a
 * nested window's passes, and a window closed and registered again. */
static void test_window_ids_agree(void) {
  use_case_paths();
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  strobe_window popup = su_window(c, "w1", 0);
  char sid[STROBE_SESSION_ID_MAX];
  su_start(c, 0, sid);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = g_path}, &rec), 0);
  for (int i = 0; i < 6; i++) {
    if (i == 3) { /* another registration of the same id */
      CHECK_EQ_INT(strobe_window_close(c, popup), 0);
      popup = su_window(c, "w1", 0);
    }
    strobe_op pass = strobe_op_begin_frame(c, w, 100 + (uint64_t)i, NULL);
    strobe_op_end(strobe_op_begin(c, popup, STROBE_OP_PASS, NULL), 1);
    strobe_op_end(pass, 1);
  }
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
  json_t *doc;
  strobe_report_free(su_end(c, sid, &doc));
  seen s;
  read_capture(g_path, &s);
  CHECK_EQ_INT(s.nops, 12);
  int matched = 0, popups = 0;
  for (int i = 0; i < s.nops; i++) {
    size_t j;
    json_t *smp;
    json_array_foreach(jreq(doc, "samples"), j, smp) {
      if ((uint64_t)jint(smp, "id") != s.ops[i].id) continue;
      matched++;
      CHECK_STR_EQ(jstr(smp, "window"), s.ops[i].window);
      popups += !strcmp(s.ops[i].window, "w1");
    }
  }
  CHECK_EQ_INT(matched, 12);
  CHECK_EQ_INT(popups, 6);
  json_t *e;
  size_t k;
  json_array_foreach(jreq(doc, "frame_rate.by_window"), k, e) CHECK_EQ_INT(jint(e, "passes"), 6); /* w1: one window */
  CHECK_EQ_INT(jlen(doc, "frame_rate.by_window"), 2);
  json_decref(doc);
  strobe_collector_release(c);
}

/* Stops the recording and the session that start_recording began, and opens the capture. */
static strobe_capture *stop_and_open(strobe_collector *c, const char *id, strobe_recorder *rec) {
  CHECK_EQ_INT(strobe_record_stop(rec), 0);
  strobe_report_free(su_end(c, id, NULL));
  strobe_capture *cap = NULL;
  REQUIRE_EQ_INT(strobe_capture_open(g_path, &cap), 0);
  return cap;
}

/* >>run-time parents: a capture carries the parent each stage ran under
 * (docs/capture-format.md §OPS payload), not only the one it declares:
 * row_bind, declared inside layout, runs twice under update and once
 * directly in the operation, so the END holds it twice with those parents. */
static void test_stage_parents(void) {
  strobe_window w;
  char id[STROBE_SESSION_ID_MAX];
  strobe_recorder *rec;
  strobe_collector *c = start_recording(&w, id, &rec);
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  {
    STROBE_STAGE("update", NULL);
    for (int k = 0; k < 2; k++) {
      STROBE_STAGE("row_bind", "layout");
      spin_us(50);
    }
  }
  {
    STROBE_STAGE("row_bind", "layout");
    spin_us(50);
  }
  strobe_op_end(op, 1);
  strobe_capture *cap = stop_and_open(c, id, rec);
  strobe_capture_record r;
  int rc, ends = 0, under_update = 0, at_top = 0;
  while ((rc = strobe_capture_next(cap, &r)) > 0) {
    if (r.type != STROBE_REC_OP_END) continue;
    ends++;
    CHECK_EQ_INT(r.op->stage_parents, 1);
    for (uint32_t k = 0; k < r.op->nstages; k++) {
      const strobe_capture_stage *st = &r.op->stages[k];
      const char *name = strobe_capture_query_site(cap, st->site)->name;
      const char *parent = st->parent ? strobe_capture_query_site(cap, st->parent)->name : "";
      CHECK_EQ_INT(st->remote, 0);
      if (strcmp(name, "row_bind")) continue;
      if (!strcmp(parent, "update")) under_update += (int)st->count;
      else if (!parent[0]) at_top += (int)st->count;
      else CHECKF(0, "row_bind under %s", parent);
    }
  }
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_INT(ends, 1);
  CHECK_EQ_INT(under_update, 2);
  CHECK_EQ_INT(at_top, 1);
  strobe_capture_close(cap);
  strobe_collector_close(c);
}

/* >>populations: each END carries its operation's population after every
 * other field (docs/capture-format.md §OPS payload), with stages or without
 * (the lists before it are written empty then), and none reads as "". */
static void test_populations(void) {
  strobe_window w;
  char id[STROBE_SESSION_ID_MAX];
  strobe_recorder *rec;
  strobe_collector *c = start_recording(&w, id, &rec);
  const char *want[3] = {"scroll", "", "cold"};
  for (int i = 0; i < 3; i++) {
    strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
    if (want[i][0]) CHECK_EQ_INT(strobe_op_set_population(want[i]), 0);
    if (i == 2) { /* the last one has a stage; the first has none */
      STROBE_STAGE("update", NULL);
      spin_us(20);
    }
    strobe_op_end(op, 1);
  }
  strobe_capture *cap = stop_and_open(c, id, rec);
  strobe_capture_record r;
  int rc, ends = 0;
  while ((rc = strobe_capture_next(cap, &r)) > 0) {
    if (r.type != STROBE_REC_OP_END) continue;
    if (ends < 3) {
      CHECK_STR_EQ(r.op->population, want[ends]);
      CHECK_EQ_INT(r.op->nstages, ends == 2 ? 1u : 0u);
    }
    ends++;
  }
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_INT(ends, 3);
  strobe_capture_close(cap);
  strobe_collector_close(c);
}

#define CASES(X)                  \
  X(window_ids_agree)             \
  X(populations)                  \
  X(op_counter_units)             \
  X(stage_parents)                \
  X(ops_reach_captures)           \
  X(ops_reach_captures_app_ids)   \
  X(old_readers_skip)             \
  X(began_before_recording)       \
  X(counters_between_recordings)  \
  X(pass_spike_dump)
HARNESS_MAIN(CASES)
