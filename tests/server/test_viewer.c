/*
 * test_viewer.c — the viewer's C side (src/server/viewer.c, src/viewer/viewer_model.c):
 *   - a capture file recorded here (known structure: 20 frames of
 *     frame{update{value, work x3}, render}, FRAME marks, a counter, a scope
 *     left by a longjmp, and a scope left open at the end) loads through strobe_server_view_file and
 *     its model says exactly that: 19 mark-interval frames, spans sorted by
 *     (thread, depth, start) in the lanes the meta describes, each value on
 *     its `update` span, the unwound and the open scope in the `open` table
 *     (reasons unwound and unfinished) and never as spans, counter samples as
 *     a running total;
 *   - max_spans cuts the model and counts what it cut;
 *   - a capture of operations only (strobe_op_begin_frame, stages,
 *     strobe_op_counter_add, strobe_op_end: no scope of its own, no frame mark)
 *     has its passes as the frames, numbered by the application's frame ids
 *     exactly as the session report numbers them, with window, committed
 *     flag, stage table, counters (also a series) and both frame rates;
 *   - the static files are the only thing served without the token; a table
 *     of a replaced generation is 409;
 *   - live: recording into the server's flight recorder, a snapshot on
 *     request (built off libmicrohttpd's thread), stop keeping the last one;
 *   - a capture with sampled stacks (a thread that recorded no event among
 *     them) loads, the samples no lane of their own;
 *   - operations handed between two collectors labelled as two processes
 *     (strobe_op_hand_off_remote / strobe_op_resume_remote, in one capture):
 *     both halves of frame 12 are one entry, from the origin's begin to the
 *     finisher's end, with render and encode once each (the copy the token
 *     carried left out; the frame model's stages, no process apart: one
 *     capture is one process to it); frame 13, handed off and never resumed,
 *     stays an entry; frame 14, handed off before the capture began, is the
 *     finisher's half with the origin's stages from the token;
 *     the handoffs table and meta.cross_process say so (docs/viewer.md
 *     §Across processes).
 */
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "server_test.h"
#include "support/case_files.h"
#include "strobe/record.h"
#include "strobe/session.h"
#include "strobe/strobe.h"
#include "strobe/viewer.h"

#define FRAMES 20

static uint64_t g_sink; /* keeps the busy loops */
static jmp_buf g_jump;
static volatile int g_throw = 1; /* the compiler cannot tell thrown_away never returns */

__attribute__((noinline)) static void thrown_away(void) {
  STROBE_SCOPE("thrown"); /* its END never runs: unwound by the next BEGIN */
  if (g_throw) longjmp(g_jump, 1);
}

static void record_capture(const char *path) {
  strobe_record_desc d = {path, 10, 1, 0, 0};
  strobe_recorder *r = NULL;
  REQUIRE(strobe_record_start(&d, &r) == 0);
  for (int k = 0; k < FRAMES; k++) {
    {
      STROBE_SCOPE("frame");
      {
        STROBE_SCOPE("update");
        STROBE_VALUE("items", (double)k);
        for (int i = 0; i < 3; i++) {
          STROBE_SCOPE("work");
          g_sink = fx_spin(1000, g_sink);
        }
      }
      {
        STROBE_SCOPE("render");
        STROBE_COUNTER_ADD("draws", 2);
      }
    }
    STROBE_FRAME_MARK();
  }
  if (!setjmp(g_jump)) thrown_away();
  {
    STROBE_SCOPE("stalled"); /* still open when the recorder stops: unfinished */
    CHECK(strobe_record_stop(r) == 0);
  }
}

static json_t *get_json(strobe_server *s, const char *path, int want_status) {
  cli_http_response r = t_req(s, "GET", path, AUTH, NULL);
  if (r.status != want_status) fprintf(stderr, "GET %s: %d %.*s\n", path, r.status, (int)r.body_len, r.body);
  CHECK(r.status == want_status);
  json_t *v = t_json(&r);
  cli_http_response_free(&r);
  return v;
}

/* A table's bytes (checked against the meta's size). */
static unsigned char *get_table(strobe_server *s, json_t *meta, const char *name, size_t *len) {
  char path[128];
  snprintf(path, sizeof path, "/api/capture/table/%s?gen=%lld", name,
           (long long)json_integer_value(json_object_get(meta, "generation")));
  cli_http_response r = t_req(s, "GET", path, AUTH, NULL);
  REQUIRE(r.status == 200);
  json_t *t = json_object_get(json_object_get(meta, "tables"), name);
  REQUIRE((json_int_t)r.body_len == json_integer_value(json_object_get(t, "bytes")));
  *len = r.body_len;
  unsigned char *b = (unsigned char *)r.body;
  free(r.headers);
  return b;
}

static size_t col_off(json_t *meta, const char *table, const char *col) {
  json_t *c = json_object_get(json_object_get(json_object_get(json_object_get(meta, "tables"), table), "columns"), col);
  CHECK(json_is_array(c));
  return (size_t)json_integer_value(json_array_get(c, 1));
}

static int site_id(json_t *meta, const char *name) {
  size_t i;
  json_t *s;
  json_array_foreach(json_object_get(meta, "sites"), i, s) {
    if (!strcmp(json_string_value(json_object_get(s, "name")), name) &&
        json_integer_value(json_object_get(s, "kind")) != STROBE_SITE_FRAME)
      return (int)json_integer_value(json_object_get(s, "id"));
  }
  return -1;
}

static void test_file(void) {
  const char *path = case_temp_file("viewer");
  record_capture(path);
  strobe_server *s = t_server(NULL);
  strobe_viewer_load_stats st;
  CHECK(strobe_server_view_file(s, path, NULL, 0, &st) == 0);
  CHECK(st.spans == FRAMES * 6);   /* frame, update, work x3, render */
  CHECK(st.frames == FRAMES - 1);  /* mark intervals */
  CHECK(st.spans_cut == 0 && st.read_error == 0 && st.model_bytes > 0);
  CHECK(strobe_server_record_start(s, NULL) == STROBE_ESTATE); /* showing a file */

  /* Only the static files are served without the token. */
  cli_http_response r = t_req(s, "GET", "/", NULL, NULL);
  CHECK(r.status == 200 && strstr(r.body, "<script type=\"module\" src=\"app.js\">"));
  cli_http_response_free(&r);
  r = t_req(s, "GET", "/viewer.css", NULL, NULL);
  CHECK(r.status == 200);
  cli_http_response_free(&r);
  r = t_req(s, "GET", "/api/capture/meta", NULL, NULL);
  CHECK(r.status == 401);
  cli_http_response_free(&r);
  r = t_req(s, "GET", "/no-such-file.js", NULL, NULL);
  CHECK(r.status == 401); /* not an asset: the token is required before anything is said */
  cli_http_response_free(&r);
  r = t_req(s, "POST", "/", AUTH, "x");
  CHECK(r.status == 404); /* assets answer GET and HEAD only */
  cli_http_response_free(&r);

  json_t *state = get_json(s, "/api/capture/state", 200);
  CHECK(!strcmp(json_string_value(json_object_get(state, "show")), "file"));
  CHECK(json_is_false(json_object_get(state, "recording")));
  json_decref(state);

  json_t *meta = get_json(s, "/api/capture/meta", 200);
  CHECK(!strcmp(json_string_value(json_object_get(meta, "frames_are")), "marks"));
  CHECK(!strcmp(json_string_value(json_object_get(meta, "origin")), "file"));
  json_t *th = json_array_get(json_object_get(meta, "threads"), 0);
  json_t *depths = json_object_get(th, "depths");
  CHECK(json_array_size(depths) == 3);
  /* [depth, first, count]: frame x20, update+render x40, work x60 */
  json_int_t want[3][3] = {{0, 0, FRAMES}, {1, FRAMES, 2 * FRAMES}, {2, 3 * FRAMES, 3 * FRAMES}};
  for (int d = 0; d < 3; d++)
    for (int k = 0; k < 3; k++) CHECK(json_integer_value(json_array_get(json_array_get(depths, (size_t)d), (size_t)k)) == want[d][k]);

  size_t len;
  unsigned char *sp = get_table(s, meta, "spans", &len);
  const double *start = (const double *)(const void *)(sp + col_off(meta, "spans", "start"));
  const float *dur = (const float *)(const void *)(sp + col_off(meta, "spans", "dur"));
  const float *self = (const float *)(const void *)(sp + col_off(meta, "spans", "self"));
  const uint16_t *site = (const uint16_t *)(const void *)(sp + col_off(meta, "spans", "site"));
  const uint8_t *depth = sp + col_off(meta, "spans", "depth");
  int s_frame = site_id(meta, "frame"), s_update = site_id(meta, "update"), s_work = site_id(meta, "work");
  for (int i = 0; i < 6 * FRAMES; i++) {
    int d = i < FRAMES ? 0 : i < 3 * FRAMES ? 1 : 2;
    CHECK(depth[i] == d);
    CHECK(dur[i] >= 0 && self[i] >= 0 && self[i] <= dur[i] * 1.0001f);
    if (i > 0 && i != FRAMES && i != 3 * FRAMES) CHECK(start[i] >= start[i - 1] + dur[i - 1] * 0.999); /* disjoint, ascending */
    if (d == 0) CHECK(site[i] == s_frame);
    if (d == 2) CHECK(site[i] == s_work);
  }
  /* each value sits on an update span, in order */
  json_t *vt = json_object_get(json_object_get(meta, "tables"), "values");
  CHECK(json_integer_value(json_object_get(vt, "rows")) == FRAMES);
  unsigned char *vb = get_table(s, meta, "values", &len);
  const double *vval = (const double *)(const void *)(vb + col_off(meta, "values", "value"));
  const uint32_t *vspan = (const uint32_t *)(const void *)(vb + col_off(meta, "values", "span"));
  for (int k = 0; k < FRAMES; k++) {
    CHECK(vval[k] == (double)k);
    CHECK(vspan[k] < 6 * FRAMES && site[vspan[k]] == s_update);
  }
  /* the open scope: in `open`, not a span */
  json_t *ot = json_object_get(json_object_get(meta, "tables"), "open");
  CHECK(json_integer_value(json_object_get(ot, "rows")) == 2);
  unsigned char *ob = get_table(s, meta, "open", &len);
  const uint16_t *osite = (const uint16_t *)(const void *)(ob + col_off(meta, "open", "site"));
  const uint8_t *oreason = ob + col_off(meta, "open", "reason");
  json_t *reasons = json_object_get(meta, "open_reasons");
  CHECK(osite[0] == site_id(meta, "thrown"));
  CHECK(oreason[0] == json_integer_value(json_object_get(reasons, "unwound")));
  CHECK(osite[1] == site_id(meta, "stalled"));
  CHECK(oreason[1] == json_integer_value(json_object_get(reasons, "unfinished")));
  CHECK(json_integer_value(json_object_get(json_object_get(meta, "totals"), "unwound")) == 1);
  /* frames: 19 mark intervals, numbered 1..19 */
  unsigned char *fb = get_table(s, meta, "frames", &len);
  const double *fnum = (const double *)(const void *)(fb + col_off(meta, "frames", "number"));
  for (int k = 0; k < FRAMES - 1; k++) CHECK(fnum[k] == (double)k + 1);
  /* both frame rates of the marks' thread: 19 frames from the first mark to the last */
  json_t *rate = json_array_get(json_object_get(meta, "frame_rates"), 0);
  CHECK(rate && json_integer_value(json_object_get(rate, "frames")) == FRAMES - 1);
  CHECK(json_real_value(json_object_get(rate, "fps_first_to_last")) > 0);
  CHECK(json_real_value(json_object_get(rate, "fps_steady_median_interval")) > 0);
  /* the counter: a running total of +2 per frame */
  json_t *series = json_array_get(json_object_get(meta, "series"), 0);
  CHECK(!strcmp(json_string_value(json_object_get(series, "kind")), "counter"));
  CHECK(json_integer_value(json_object_get(series, "count")) == FRAMES);
  CHECK(json_real_value(json_object_get(series, "max")) == 2.0 * FRAMES);
  /* The live append (?since=T): exactly the spans ending after T and each row's first, with their indexes. */
  double since = start[FRAMES / 2] + dur[FRAMES / 2] / 2; /* inside frame FRAMES / 2: it and spans in it end after */
  char q[160];
  snprintf(q, sizeof q, "/api/capture/table/spans?gen=%lld&since=%.17g",
           (long long)json_integer_value(json_object_get(meta, "generation")), since);
  r = t_req(s, "GET", q, AUTH, NULL);
  REQUIRE(r.status == 200 && r.body_len >= 8);
  uint32_t nd, total;
  memcpy(&nd, r.body, 4);
  memcpy(&total, r.body + 4, 4);
  CHECK(total == 6 * FRAMES);
  uint32_t want_rows = 0;
  for (uint32_t i = 0; i < total; i++) want_rows += i == 0 || i == FRAMES || i == 3 * FRAMES || start[i] + dur[i] > since;
  CHECK(nd == want_rows && nd < total && nd > 3);
  size_t at = 8, off[7];
  const size_t width[7] = {8, 4, 4, 4, 2, 1, 4}; /* then frame: every span's owner, not only those sent */
  for (int c = 0; c < 7; c++) off[c] = at, at += ((size_t)(c == 6 ? total : nd) * width[c] + 7) & ~(size_t)7;
  CHECK(r.body_len == at);
  const uint32_t *owner = (const uint32_t *)(const void *)(sp + col_off(meta, "spans", "frame"));
  CHECK(at == r.body_len && !memcmp(r.body + off[6], owner, (size_t)total * 4));
  uint32_t prev_index = 0;
  for (uint32_t k = 0; k < nd && at == r.body_len; k++) {
    double st0;
    float du, sf;
    uint32_t ix;
    uint16_t si;
    memcpy(&st0, r.body + off[0] + 8 * k, 8);
    memcpy(&du, r.body + off[1] + 4 * k, 4);
    memcpy(&sf, r.body + off[2] + 4 * k, 4);
    memcpy(&ix, r.body + off[3] + 4 * k, 4);
    memcpy(&si, r.body + off[4] + 2 * k, 2);
    CHECK(ix < total && (k == 0 || ix > prev_index));
    prev_index = ix;
    if (ix >= total) break;
    CHECK(st0 == start[ix] && du == dur[ix] && sf == self[ix] && si == site[ix] && (uint8_t)r.body[off[5] + k] == depth[ix]);
    CHECK(ix == 0 || ix == FRAMES || ix == 3 * FRAMES || st0 + du > since);
  }
  cli_http_response_free(&r);
  static const char *const bad_since[] = {"/api/capture/table/spans?since=abc", "/api/capture/table/spans?since=nan",
                                           "/api/capture/table/spans?since=1e999", "/api/capture/table/spans?since=",
                                           "/api/capture/table/values?since=0"};
  for (size_t k = 0; k < sizeof bad_since / sizeof *bad_since; k++) {
    r = t_req(s, "GET", bad_since[k], AUTH, NULL);
    if (r.status != 400) fprintf(stderr, "GET %s: %d\n", bad_since[k], r.status);
    CHECK(r.status == 400);
    cli_http_response_free(&r);
  }
  free(sp);
  free(vb);
  free(ob);
  free(fb);

  /* A stale generation is refused, so tables of two models never mix. */
  r = t_req(s, "GET", "/api/capture/table/spans?gen=999", AUTH, NULL);
  CHECK(r.status == 409);
  cli_http_response_free(&r);
  r = t_req(s, "GET", "/api/capture/table/nope", AUTH, NULL);
  CHECK(r.status == 404);
  cli_http_response_free(&r);
  json_decref(meta);

  /* max_spans: the earliest 50 kept, the rest counted. */
  CHECK(strobe_server_view_file(s, path, NULL, 50, &st) == 0);
  CHECK(st.spans == 50 && st.spans_cut == 6 * FRAMES - 50);
  meta = get_json(s, "/api/capture/meta", 200);
  CHECK(json_integer_value(json_object_get(meta, "spans_cut")) == 6 * FRAMES - 50);
  CHECK(json_integer_value(json_object_get(meta, "generation")) == 2);
  json_decref(meta);

  /* Bad input: a missing file or not a capture changes nothing. */
  CHECK(strobe_server_view_file(s, "/nonexistent/x.strobe", NULL, 0, NULL) == STROBE_EIO);
  CHECK(strobe_server_view_file(s, "/proc/self/status", NULL, 0, NULL) == STROBE_EBADMAGIC);
  CHECK(strobe_server_view_file(s, path, NULL, STROBE_VIEWER_MAX_MAX_SPANS + 1, NULL) == STROBE_EINVAL);
  meta = get_json(s, "/api/capture/meta", 200);
  CHECK(json_integer_value(json_object_get(meta, "generation")) == 2);
  json_decref(meta);
}

static json_t *wait_state(strobe_server *s, int recording, json_int_t min_gen) {
  for (int k = 0; k < 500; k++) {
    json_t *st = get_json(s, "/api/capture/state", 200);
    if (json_is_true(json_object_get(st, "recording")) == recording && json_is_false(json_object_get(st, "building")) &&
        json_integer_value(json_object_get(st, "generation")) >= min_gen)
      return st;
    json_decref(st);
    fx_sleep_ms(20);
  }
  REQUIRE(!"the viewer's state never settled");
  return NULL;
}

static void busy_frames(int n) {
  for (int k = 0; k < n; k++) {
    {
      STROBE_SCOPE("live_frame");
      STROBE_SCOPE("live_work");
      g_sink = fx_spin(2000, g_sink);
    }
    STROBE_FRAME_MARK();
  }
}

static void test_live(void) {
  strobe_server *s = t_start(NULL); /* stopped below, while recording */
  CHECK(strobe_server_recording(s) == 0);
  CHECK(strobe_server_record_stop(s) == STROBE_ESTATE);
  json_t *m = get_json(s, "/api/capture/meta", 404); /* nothing yet */
  json_decref(m);
  cli_http_response r = t_req(s, "POST", "/api/capture/snapshot", AUTH, "");
  CHECK(r.status == 409); /* not recording */
  cli_http_response_free(&r);

  /* Start from the viewer's button. */
  r = t_req(s, "POST", "/api/capture/recorder", AUTH JSON_CT, "{\"recording\": true}");
  CHECK(r.status == 200);
  cli_http_response_free(&r);
  CHECK(strobe_server_recording(s) == 1);
  r = t_req(s, "POST", "/api/capture/recorder", AUTH JSON_CT, "{\"recording\": true}");
  CHECK(r.status == 409); /* already */
  cli_http_response_free(&r);
  r = t_req(s, "POST", "/api/capture/recorder", AUTH JSON_CT, "{\"recording\": 1}");
  CHECK(r.status == 400);
  cli_http_response_free(&r);
  busy_frames(50);

  r = t_req(s, "GET", "/api/capture/meta?live=1", AUTH, NULL);
  CHECK(r.status == 202);
  cli_http_response_free(&r);
  json_decref(wait_state(s, 1, 1));
  json_t *meta = get_json(s, "/api/capture/meta", 200);
  CHECK(!strcmp(json_string_value(json_object_get(meta, "origin")), "live"));
  CHECK(json_integer_value(json_object_get(json_object_get(json_object_get(meta, "tables"), "spans"), "rows")) >= 100);
  CHECK(site_id(meta, "live_work") > 0);
  json_decref(meta);

  /* Stop: the last snapshot stays. */
  busy_frames(10);
  CHECK(strobe_server_record_stop(s) == 0);
  CHECK(strobe_server_recording(s) == 0);
  json_t *st = wait_state(s, 0, 2);
  CHECK(json_is_true(json_object_get(st, "has_capture")));
  json_decref(st);
  meta = get_json(s, "/api/capture/meta", 200);
  CHECK(json_integer_value(json_object_get(json_object_get(json_object_get(meta, "tables"), "spans"), "rows")) >= 120);
  json_decref(meta);

  /* Recording again, then stopping the server while recording. */
  CHECK(strobe_server_record_start(s, NULL) == 0);
  busy_frames(5);
  strobe_server_stop(s);
}

/* >>operations only */
#define OP_FRAMES 12
#define OP_BASE 5000u

static void spin_us(long us) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do clock_gettime(CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static void test_ops_file(void) {
  const char *path = case_temp_file("viewer-ops");
  strobe_collector *c = NULL;
  strobe_window w;
  REQUIRE(strobe_collector_create(&c) == 0 && strobe_window_register(c, "main", 0, &w) == 0);
  char sid[STROBE_SESSION_ID_MAX];
  REQUIRE(strobe_session_start(c, NULL, sid) == 0);
  strobe_recorder *r = NULL;
  REQUIRE(strobe_record_start(&(strobe_record_desc){path, 10, 1, 0, 0}, &r) == 0);
  for (int k = 0; k < OP_FRAMES; k++) {
    if (k == OP_FRAMES / 2) spin_us(500000); /* one stall: the first-to-last rate drops, the steady one does not */
    strobe_op op = strobe_op_begin_frame(c, w, OP_BASE + 3u * (uint64_t)k, NULL);
    {
      STROBE_STAGE("layout", NULL);
      spin_us(500);
      STROBE_STAGE("paint", "layout");
      spin_us(500);
    }
    strobe_op_counter_add("rows", (double)k);
    strobe_op_end(op, k != 3);
    spin_us(3000);
  }
  REQUIRE(strobe_record_stop(r) == 0);
  strobe_report *rep = NULL;
  REQUIRE(strobe_session_stop(c, sid, 0, &rep) == 0);
  char *rjson = NULL;
  REQUIRE(strobe_report_json(rep, &rjson, NULL) == 0);
  json_t *report = json_loads(rjson, 0, NULL);
  REQUIRE(report != NULL);

  strobe_server *s = t_start(NULL);
  strobe_viewer_load_stats st;
  REQUIRE(strobe_server_view_file(s, path, NULL, 0, &st) == 0);
  CHECK(st.frames == OP_FRAMES);
  json_t *meta = get_json(s, "/api/capture/meta", 200);
  CHECK(!strcmp(json_string_value(json_object_get(meta, "frames_are")), "pass_operations"));
  json_t *windows = json_object_get(meta, "windows");
  CHECK(json_array_size(windows) == 1 && !strcmp(json_string_value(json_array_get(windows, 0)), "main"));
  size_t len;
  unsigned char *fb = get_table(s, meta, "frames", &len);
  const double *fnum = (const double *)(const void *)(fb + col_off(meta, "frames", "number"));
  const double *fid = (const double *)(const void *)(fb + col_off(meta, "frames", "id"));
  const uint16_t *fwin = (const uint16_t *)(const void *)(fb + col_off(meta, "frames", "window"));
  const uint8_t *fkind = fb + col_off(meta, "frames", "kind");
  const uint8_t *fflags = fb + col_off(meta, "frames", "flags");
  CHECK(!strcmp(json_string_value(json_array_get(json_object_get(meta, "frame_kinds"), fkind[0])), "pass"));
  json_t *samples = json_object_get(report, "samples");
  for (int k = 0; k < OP_FRAMES; k++) {
    CHECK(fnum[k] == (double)(OP_BASE + 3u * (unsigned)k)); /* in start order: the application's ids */
    CHECK(fwin[k] == 0 && fkind[k] == fkind[0]);
    CHECK(((fflags[k] & 2) != 0) == (k != 3)); /* committed */
    CHECK((fflags[k] & 8) != 0);              /* the application's frame id */
    /* The session report names the same operation with the same frame id. */
    int found = 0;
    size_t i;
    json_t *smp;
    json_array_foreach(samples, i, smp) {
      if ((double)json_integer_value(json_object_get(smp, "id")) != fid[k]) continue;
      found = 1;
      CHECK((double)json_integer_value(json_object_get(smp, "frame_id")) == fnum[k]);
    }
    CHECK(found);
  }
  /* the stage table of each operation: layout and paint, by frame row */
  json_t *ost = json_object_get(json_object_get(meta, "tables"), "opstages");
  CHECK(json_integer_value(json_object_get(ost, "rows")) == 2 * OP_FRAMES);
  unsigned char *sb = get_table(s, meta, "opstages", &len);
  const uint32_t *sframe = (const uint32_t *)(const void *)(sb + col_off(meta, "opstages", "frame"));
  const uint16_t *ssite = (const uint16_t *)(const void *)(sb + col_off(meta, "opstages", "site"));
  const double *stotal = (const double *)(const void *)(sb + col_off(meta, "opstages", "total"));
  for (int i = 0; i < 2 * OP_FRAMES; i++) {
    CHECK(sframe[i] == (uint32_t)i / 2);
    CHECK(ssite[i] == site_id(meta, "layout") || ssite[i] == site_id(meta, "paint"));
    CHECK(stotal[i] >= (ssite[i] == site_id(meta, "layout") ? 1000e3 : 500e3));
  }
  /* counters: one per operation, and a series of them */
  unsigned char *kb = get_table(s, meta, "opcounters", &len);
  const double *kval = (const double *)(const void *)(kb + col_off(meta, "opcounters", "value"));
  for (int k = 0; k < OP_FRAMES; k++) CHECK(kval[k] == (double)k);
  int series_found = 0;
  size_t i;
  json_t *sr;
  json_array_foreach(json_object_get(meta, "series"), i, sr) {
    if (strcmp(json_string_value(json_object_get(sr, "kind")), "op_counter")) continue;
    series_found = 1;
    CHECK(!strcmp(json_string_value(json_object_get(sr, "name")), "rows"));
    CHECK(json_integer_value(json_object_get(sr, "count")) == OP_FRAMES);
    CHECK(json_real_value(json_object_get(sr, "max")) == OP_FRAMES - 1);
  }
  CHECK(series_found);
  /* both rates, over the committed passes of the window */
  json_t *rate = json_array_get(json_object_get(meta, "frame_rates"), 0);
  REQUIRE(rate && !strcmp(json_string_value(json_object_get(rate, "window")), "main"));
  CHECK(json_integer_value(json_object_get(rate, "frames")) == OP_FRAMES - 2);
  double ftl = json_real_value(json_object_get(rate, "fps_first_to_last"));
  double steady = json_real_value(json_object_get(rate, "fps_steady_median_interval"));
  if (!(ftl > 0 && steady > 1.5 * ftl)) fprintf(stderr, "rates %g %g\n", ftl, steady);
  CHECK(ftl > 0 && steady > 1.5 * ftl);
  free(fb);
  free(sb);
  free(kb);
  json_decref(meta);
  json_decref(report);
  free(rjson);
  strobe_report_free(rep);
  strobe_server_stop(s);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

/* A site named at run time reaches the viewer under its name, flagged
 * (docs/recording.md §Run-time names): the viewer is local. */
static void test_interned_file(void) {
  const char *path = case_temp_file("viewer-interned");
  strobe_recorder *r = NULL;
  REQUIRE(strobe_record_start(&(strobe_record_desc){path, 10, 1, 0, 0}, &r) == 0);
  char name[] = "fn sum_rows(x)";
  strobe_site *fn = strobe_site_intern(name, sizeof name - 1, "script", STROBE_SITE_SCOPE);
  for (int k = 0; k < 5; k++) {
    STROBE_SCOPE("static_outer");
    STROBE_SCOPE_SITE(fn);
    g_sink = fx_spin(1000, g_sink);
  }
  REQUIRE(strobe_record_stop(r) == 0);
  strobe_server *s = t_server(NULL);
  CHECK(strobe_server_view_file(s, path, NULL, 0, NULL) == 0);
  json_t *meta = get_json(s, "/api/capture/meta", 200);
  int seen = 0;
  size_t i;
  json_t *site;
  json_array_foreach(json_object_get(meta, "sites"), i, site) {
    const char *n = json_string_value(json_object_get(site, "name"));
    if (!strcmp(n, name)) {
      seen++;
      CHECK(json_is_true(json_object_get(site, "interned")));
      CHECK_EQ_INT(json_integer_value(json_object_get(site, "count")), 5);
    } else if (!strcmp(n, "static_outer")) {
      seen++;
      CHECK(json_is_false(json_object_get(site, "interned")));
    }
  }
  CHECK_EQ_INT(seen, 2);
  json_decref(meta);
}

/* A capture with sampled stacks (the fuzz seed ok-v4-samples.strb: SAMPLES records, one of a thread
 * that recorded no event, STROBE_CAPTURE_NO_THREAD) loads: the samples are no lane and no span, the
 * scopes are all there. The model builder once looped for ever on that thread index. */
static void test_samples_file(void) {
  char path[1024];
  const char *here = __FILE__, *cut = strstr(here, "tests/server/test_viewer.c");
  REQUIRE(cut != NULL);
  snprintf(path, sizeof path, "%.*sfuzz/corpus/fuzz_capture_reader/ok-v4-samples.strb", (int)(cut - here), here);
  strobe_server *s = t_server(NULL);
  strobe_viewer_load_stats st;
  CHECK(strobe_server_view_file(s, path, NULL, 0, &st) == 0);
  CHECK(st.spans >= 1);
  json_t *meta = get_json(s, "/api/capture/meta", 200);
  CHECK_EQ_INT(json_array_size(json_object_get(meta, "threads")), 1);
  json_decref(meta);
}

/* One frame's screen half: begin, the stage render for `ms`, hand off to "sender". */
static size_t screen_frame(strobe_collector *c, strobe_window w, uint64_t frame, long ms, uint8_t *buf, size_t cap) {
  int st = -1;
  strobe_op op = strobe_op_begin_frame(c, w, frame, &st);
  REQUIRE(st == 0 && op.id != 0);
  {
    STROBE_STAGE("render", NULL);
    spin_us(ms * 1000);
  }
  size_t len = 0;
  REQUIRE(strobe_op_hand_off_remote(strobe_op_take(), "sender", buf, cap, &len) == 0);
  return len;
}

/* Its sender half: resume, the stage encode for `ms`, end. */
static void sender_frame(strobe_collector *c, strobe_window w, const uint8_t *buf, size_t len, long ms, int committed) {
  int st = -1;
  strobe_op op = strobe_op_resume_remote(c, w, buf, len, &st);
  REQUIRE(st == 0 && op.id != 0);
  {
    STROBE_STAGE("encode", NULL);
    spin_us(ms * 1000);
  }
  strobe_op_end(op, committed);
}

static void test_cross_process_file(void) {
  const char *path = case_temp_file("viewer-xproc");
  strobe_collector *screen = NULL, *sender = NULL;
  strobe_window ws = {0}, wr = {0};
  REQUIRE(strobe_collector_create(&screen) == 0 && strobe_window_register(screen, "main", 0, &ws) == 0);
  REQUIRE(strobe_collector_create(&sender) == 0 && strobe_window_register(sender, "main", 0, &wr) == 0);
  REQUIRE(strobe_collector_set_process(screen, "screen") == 0 && strobe_collector_set_process(sender, "sender") == 0);
  uint8_t t12[STROBE_OP_TOKEN_MAX], t13[STROBE_OP_TOKEN_MAX], t14[STROBE_OP_TOKEN_MAX];
  char sid[STROBE_SESSION_ID_MAX]; /* screen keeps its stages before the capture too, so its tokens carry them */
  REQUIRE(strobe_session_start(screen, NULL, sid) == 0);
  size_t n14 = screen_frame(screen, ws, 14, 1, t14, sizeof t14); /* its origin half before the capture */
  strobe_recorder *r = NULL;
  REQUIRE(strobe_record_start(&(strobe_record_desc){path, 10, 1, 0, 0}, &r) == 0);
  size_t n12 = screen_frame(screen, ws, 12, 3, t12, sizeof t12);
  spin_us(2000); /* the hand-off gap */
  sender_frame(sender, wr, t12, n12, 4, 1);
  (void)screen_frame(screen, ws, 13, 1, t13, sizeof t13); /* never resumed */
  sender_frame(sender, wr, t14, n14, 1, 0);
  REQUIRE(strobe_record_stop(r) == 0);

  strobe_server *s = t_start(NULL);
  strobe_viewer_load_stats st;
  REQUIRE(strobe_server_view_file(s, path, NULL, 0, &st) == 0);
  json_t *meta = get_json(s, "/api/capture/meta", 200);
  json_t *xp = json_object_get(meta, "cross_process");
  CHECK(json_integer_value(json_object_get(xp, "joined")) == 1);
  CHECK(json_integer_value(json_object_get(xp, "resumed_without_origin")) == 1);
  CHECK(json_integer_value(json_object_get(xp, "not_resumed")) == 1);
  json_t *procs = json_object_get(meta, "processes");
  int screen_k = -1, sender_k = -1;
  for (size_t k = 0; k < json_array_size(procs); k++) {
    if (!strcmp(json_string_value(json_array_get(procs, k)), "screen")) screen_k = (int)k;
    if (!strcmp(json_string_value(json_array_get(procs, k)), "sender")) sender_k = (int)k;
  }
  REQUIRE(screen_k >= 0 && sender_k >= 0);
  size_t len;
  unsigned char *fb = get_table(s, meta, "frames", &len);
  const double *fnum = (const double *)(const void *)(fb + col_off(meta, "frames", "number"));
  const double *fstart = (const double *)(const void *)(fb + col_off(meta, "frames", "start"));
  const double *fdur = (const double *)(const void *)(fb + col_off(meta, "frames", "dur"));
  const uint8_t *fflags = fb + col_off(meta, "frames", "flags");
  uint32_t nframes = (uint32_t)json_integer_value(json_object_get(json_object_get(json_object_get(meta, "tables"), "frames"), "rows"));
  CHECK(nframes == 3); /* 12 once, 13, 14: no entry per half */
  int row[15] = {0};
  for (uint32_t k = 0; k < nframes && k < 3; k++) {
    CHECK(fnum[k] >= 12 && fnum[k] <= 14 && !row[(int)fnum[k]]);
    if (fnum[k] >= 12 && fnum[k] <= 14) row[(int)fnum[k]] = (int)k + 1;
    CHECK((fflags[k] & 32) != 0); /* each crossed processes */
  }
  REQUIRE(row[12] && row[13] && row[14]);
  int f12 = row[12] - 1, f13 = row[13] - 1, f14 = row[14] - 1;
  CHECK((fflags[f12] & 2) && !(fflags[f13] & 2) && !(fflags[f14] & 2)); /* committed: 12 only */
  unsigned char *hb = get_table(s, meta, "handoffs", &len);
  const double *handed = (const double *)(const void *)(hb + col_off(meta, "handoffs", "handed"));
  const double *resumed = (const double *)(const void *)(hb + col_off(meta, "handoffs", "resumed"));
  const uint32_t *hframe = (const uint32_t *)(const void *)(hb + col_off(meta, "handoffs", "frame"));
  const uint16_t *horigin = (const uint16_t *)(const void *)(hb + col_off(meta, "handoffs", "origin"));
  const uint16_t *hfin = (const uint16_t *)(const void *)(hb + col_off(meta, "handoffs", "finisher"));
  const uint8_t *hstate = hb + col_off(meta, "handoffs", "state");
  CHECK(json_integer_value(json_object_get(json_object_get(json_object_get(meta, "tables"), "handoffs"), "rows")) == 3);
  for (int k = 0; k < 3; k++) {
    CHECK(hframe[k] == (uint32_t)k); /* by frame */
    CHECK(horigin[k] == screen_k && hfin[k] == sender_k);
    int want = hframe[k] == (uint32_t)f12 ? 1 : hframe[k] == (uint32_t)f13 ? 3 : 2;
    CHECK(hstate[k] == want);
    if (want == 3) CHECK(resumed[k] != resumed[k]); /* NaN: not resumed here */
    else CHECK(resumed[k] - handed[k] >= 0);
  }
  /* Frame 12 from the origin's begin to the finisher's end: render 3 ms + the 2 ms gap + encode 4 ms inside. */
  CHECK(fdur[f12] >= 9e6);
  CHECK(handed[f12] >= fstart[f12] + 3e6 && resumed[f12] - handed[f12] >= 2e6 &&
        fstart[f12] + fdur[f12] >= resumed[f12] + 4e6);
  /* Where frame 12 ran: the origin's stretch up to its hand-off, the finisher's from its resume. */
  unsigned char *rb = get_table(s, meta, "opruns", &len);
  uint32_t nruns = (uint32_t)json_integer_value(json_object_get(json_object_get(json_object_get(meta, "tables"), "opruns"), "rows"));
  const double *rt0 = (const double *)(const void *)(rb + col_off(meta, "opruns", "t0"));
  const double *rt1 = (const double *)(const void *)(rb + col_off(meta, "opruns", "t1"));
  const uint32_t *rframe = (const uint32_t *)(const void *)(rb + col_off(meta, "opruns", "frame"));
  const uint8_t *rpart = rb + col_off(meta, "opruns", "part");
  int parts12 = 0;
  for (uint32_t i = 0; i < nruns; i++) {
    CHECK(rt0[i] <= rt1[i] && (i == 0 || rframe[i] >= rframe[i - 1]));
    if (rframe[i] != (uint32_t)f12) continue;
    parts12 |= rpart[i];
    /* its begin here, and the start the finisher took from the token: one instant through two conversions */
    if (rpart[i] == 1) CHECK(fabs(rt0[i] - fstart[f12]) < 1e3 && rt1[i] <= handed[f12]);
    if (rpart[i] == 2) CHECK(rt0[i] == resumed[f12] && rt1[i] == fstart[f12] + fdur[f12]);
  }
  CHECK(parts12 == 3);
  free(rb);
  unsigned char *sb = get_table(s, meta, "opstages", &len);
  uint32_t nst = (uint32_t)json_integer_value(json_object_get(json_object_get(json_object_get(meta, "tables"), "opstages"), "rows"));
  const uint32_t *sframe = (const uint32_t *)(const void *)(sb + col_off(meta, "opstages", "frame"));
  const uint16_t *ssite = (const uint16_t *)(const void *)(sb + col_off(meta, "opstages", "site"));
  const uint16_t *sproc = (const uint16_t *)(const void *)(sb + col_off(meta, "opstages", "process"));
  int render[3] = {0}, encode[3] = {0};
  for (uint32_t i = 0; i < nst; i++) {
    int f = sframe[i] == (uint32_t)f12 ? 0 : sframe[i] == (uint32_t)f13 ? 1 : 2;
    const char *name = NULL;
    size_t k;
    json_t *site;
    json_array_foreach(json_object_get(meta, "sites"), k, site) {
      if (json_integer_value(json_object_get(site, "id")) == ssite[i]) name = json_string_value(json_object_get(site, "name"));
    }
    REQUIRE(name != NULL);
    /* One capture is one process to the frame model, whatever its collectors call themselves (docs/frames.md
     * §States): its stages carry no process, as `strobe info --frames` gives none apart. */
    if (!strcmp(name, "render")) {
      render[f]++;
      CHECK(sproc[i] == 0xFFFF);
    }
    if (!strcmp(name, "encode")) {
      encode[f]++;
      CHECK(sproc[i] == 0xFFFF);
    }
  }
  CHECK(render[0] == 1 && encode[0] == 1); /* 12: each once, in its process */
  CHECK(render[1] == 1 && encode[1] == 0); /* 13: the origin's half */
  CHECK(render[2] == 1 && encode[2] == 1); /* 14: the origin's stage from the token, attributed to screen */
  free(fb);
  free(hb);
  free(sb);
  json_decref(meta);
  strobe_server_stop(s);
  strobe_report *rep = NULL;
  CHECK(strobe_session_stop(screen, sid, 0, &rep) == 0);
  strobe_report_free(rep);
  strobe_collector_close(screen);
  strobe_collector_close(sender);
  strobe_collector_release(screen);
  strobe_collector_release(sender);
}

#define CASES(X)     \
  X(file)            \
  X(cross_process_file) \
  X(ops_file)        \
  X(live)            \
  X(interned_file)   \
  X(samples_file)
HARNESS_MAIN(CASES)
