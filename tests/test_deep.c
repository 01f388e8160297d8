/*
 * test_deep.c — attachments and deep captures (strobe/deep.h),
 * docs/recording.md §Attachments and §Deep capture:
 *   - an attachment comes back from a capture file with its frame,
 *     resource, media type, size and exact bytes; rows given with a stride
 *     come back tightly packed (padding stripped);
 *   - a resource's content is stored once per capture: a second attachment
 *     of the same id is a reference without bytes;
 *   - the per-capture content bound cuts what does not fit, counted in the
 *     file (bytes too), and a later attachment that fits is still stored;
 *   - bad attachments, deep calls and hostile ATTACH/DEEP blocks are refused
 *     with their errors;
 *   - a requested deep capture is taken by the next frame only, comes back
 *     call for call (sequence, labels, ranges, geometry, references), and
 *     its resources are captured once per resource, not once per call;
 *   - deep captures past STROBE_DEEP_MAX_FRAMES per capture are counted;
 *   - with only a flight recorder recording (no capture file), requests and
 *     attachments are refused: they go to capture files only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/capture_writer.h"
#include "format/codec.h"
#include "strobe/capture.h"
#include "strobe/deep.h"
#include "strobe/flight.h"
#include "strobe/record.h"
#include "strobe/strobe.h"
#include "support/capture_memory.h"
#include "support/fixtures.h"
#include "support/harness.h"

static strobe_recorder *start(char *path, size_t cap, const char *tag, uint64_t limit) {
  REQUIRE(fx_temp_file(path, cap, tag) == 0);
  strobe_recorder *rec = NULL;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path, .max_attachment_bytes = limit}, &rec), 0);
  return rec;
}

/* Every ATTACHMENT record of a capture, copied. */
typedef struct seen {
  uint64_t frame, resource, size;
  uint32_t state, width, height;
  char media[72];
  uint8_t *bytes;
} seen;

static int read_attachments(const char *path, seen *out, int max, strobe_capture_totals *totals) {
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  strobe_capture_record x;
  int rc, n = 0;
  while ((rc = strobe_capture_next(cap, &x)) > 0) {
    if (x.type != STROBE_REC_ATTACHMENT) continue;
    REQUIRE(n < max);
    const strobe_capture_attachment *a = x.attachment;
    seen *s = &out[n++];
    *s = (seen){a->frame, a->resource, a->size, a->state, a->width, a->height, {0}, NULL};
    snprintf(s->media, sizeof s->media, "%s", a->media_type);
    if (a->bytes) {
      s->bytes = malloc(a->size);
      memcpy(s->bytes, a->bytes, a->size);
    }
  }
  CHECK_EQ_INT(rc, 0);
  if (totals) *totals = strobe_capture_query_totals(cap);
  strobe_capture_close(cap);
  return n;
}

static void free_seen(seen *s, int n) {
  for (int i = 0; i < n; i++) free(s[i].bytes);
}

/* >>attachments */
static void test_attachment_round_trips_packed(void) {
  char path[64];
  strobe_recorder *rec = start(path, sizeof path, "att", 0);
  enum { W = 5, H = 3, STRIDE = 8 }; /* 5 bytes of content per row, 3 of padding */
  uint8_t rows[STRIDE * H];
  for (int i = 0; i < STRIDE * H; i++) rows[i] = (uint8_t)(i % STRIDE < W ? 10 + i : 0xEE);
  strobe_attachment a = {.frame = 42, .resource = 7, .media_type = STROBE_MEDIA_A8, .width = W, .height = H,
                         .bytes = rows, .row_bytes = W, .stride = STRIDE};
  REQUIRE_EQ_INT(strobe_attach(&a), 0);
  const char blob[] = "a scene snapshot";
  strobe_attachment b = {.frame = 43, .resource = 9, .media_type = "application/json", .bytes = blob, .size = sizeof blob};
  REQUIRE_EQ_INT(strobe_attach(&b), 0);
  a.frame = 44; /* the same resource again: stored once */
  REQUIRE_EQ_INT(strobe_attach(&a), 0);
  CHECK_EQ_INT(strobe_record_stop(rec), 0);

  seen s[8];
  strobe_capture_totals t;
  int n = read_attachments(path, s, 8, &t);
  REQUIRE_EQ_INT(n, 3);
  CHECK_EQ_U64(s[0].frame, 42);
  CHECK_EQ_U64(s[0].resource, 7);
  CHECK_STR_EQ(s[0].media, STROBE_MEDIA_A8);
  CHECK_EQ_INT(s[0].width, W);
  CHECK_EQ_INT(s[0].height, H);
  CHECK_EQ_INT(s[0].state, STROBE_CAPTURE_ATTACH_STORED);
  REQUIRE_EQ_U64(s[0].size, W * H); /* padding stripped */
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) CHECK_EQ_INT(s[0].bytes[y * W + x], rows[y * STRIDE + x]);
  CHECK_EQ_U64(s[1].frame, 43);
  REQUIRE_EQ_U64(s[1].size, sizeof blob);
  CHECK(memcmp(s[1].bytes, blob, sizeof blob) == 0);
  CHECK_EQ_U64(s[2].frame, 44);
  CHECK_EQ_INT(s[2].state, STROBE_CAPTURE_ATTACH_EARLIER);
  CHECK(s[2].bytes == NULL);
  CHECK_EQ_U64(s[2].size, W * H);
  CHECK_EQ_U64(t.attachments, 3);
  CHECK_EQ_U64(t.attach_stored, 2);
  CHECK_EQ_U64(t.attach_stored_bytes, W * H + sizeof blob);
  CHECK_EQ_U64(t.attach_earlier, 1);
  CHECK_EQ_U64(t.attach_cut, 0);
  free_seen(s, n);
  unlink(path);
}

static void test_attachment_bound_cuts_and_counts(void) {
  char path[64];
  strobe_recorder *rec = start(path, sizeof path, "attb", 1000);
  static uint8_t bytes[600];
  memset(bytes, 0x5A, sizeof bytes);
  strobe_attachment a = {.frame = 1, .resource = 1, .media_type = "application/octet-stream", .bytes = bytes, .size = 600};
  REQUIRE_EQ_INT(strobe_attach(&a), 0);
  a.resource = 2; /* 1200 > 1000: cut */
  REQUIRE_EQ_INT(strobe_attach(&a), 0);
  a.resource = 3;
  a.size = 300; /* 900 fits */
  REQUIRE_EQ_INT(strobe_attach(&a), 0);
  a.resource = 2; /* cut before, so not "stored earlier"; 900 + 100 fits now */
  a.size = 100;
  REQUIRE_EQ_INT(strobe_attach(&a), 0);
  CHECK_EQ_INT(strobe_record_stop(rec), 0);
  seen s[8];
  strobe_capture_totals t;
  int n = read_attachments(path, s, 8, &t);
  REQUIRE_EQ_INT(n, 4);
  CHECK_EQ_INT(s[0].state, STROBE_CAPTURE_ATTACH_STORED);
  CHECK_EQ_INT(s[1].state, STROBE_CAPTURE_ATTACH_CUT);
  CHECK(s[1].bytes == NULL);
  CHECK_EQ_U64(s[1].size, 600);
  CHECK_EQ_INT(s[2].state, STROBE_CAPTURE_ATTACH_STORED);
  CHECK_EQ_INT(s[3].state, STROBE_CAPTURE_ATTACH_STORED);
  CHECK_EQ_U64(t.attach_limit, 1000);
  CHECK_EQ_U64(t.attach_cut, 1);
  CHECK_EQ_U64(t.attach_cut_bytes, 600);
  CHECK_EQ_U64(t.attach_stored, 3);
  CHECK_EQ_U64(t.attach_stored_bytes, 1000);
  free_seen(s, n);
  unlink(path);
}

static void test_attachment_refusals(void) {
  uint8_t b[16] = {1};
  strobe_attachment ok = {.frame = 1, .resource = 1, .media_type = "image/png", .bytes = b, .size = sizeof b};
  CHECK_EQ_INT(strobe_attach(&ok), STROBE_ESTATE); /* nothing records */
  char path[64];
  strobe_recorder *rec = start(path, sizeof path, "attr", 0);
  strobe_deep_status before = strobe_deep_query_status();
  CHECK_EQ_INT(strobe_attach(NULL), STROBE_EINVAL);
  strobe_attachment a = ok;
  a.resource = 0;
  CHECK_EQ_INT(strobe_attach(&a), STROBE_EINVAL);
  a = ok;
  a.media_type = "Image/PNG"; /* upper case is not a media type here */
  CHECK_EQ_INT(strobe_attach(&a), STROBE_EINVAL);
  a.media_type = "";
  CHECK_EQ_INT(strobe_attach(&a), STROBE_EINVAL);
  a = ok;
  a.bytes = NULL;
  CHECK_EQ_INT(strobe_attach(&a), STROBE_EINVAL);
  a = ok;
  a.size = 0;
  CHECK_EQ_INT(strobe_attach(&a), STROBE_EINVAL);
  a = ok;
  a.row_bytes = 8;
  a.stride = 4; /* rows overlap */
  a.height = 2;
  CHECK_EQ_INT(strobe_attach(&a), STROBE_EINVAL);
  a = ok;
  a.size = (size_t)STROBE_ATTACH_MAX_BYTES + 1; /* refused before a byte is read */
  CHECK_EQ_INT(strobe_attach(&a), STROBE_ELIMIT);
  strobe_deep_status after = strobe_deep_query_status();
  CHECK_EQ_U64(after.refused - before.refused, 1);
  CHECK_EQ_U64(after.attachments - before.attachments, 0);
  CHECK_EQ_INT(strobe_record_stop(rec), 0);
  seen s[4];
  CHECK_EQ_INT(read_attachments(path, s, 4, NULL), 0); /* nothing refused reached the file */
  unlink(path);
}

/* >>deep */
static const strobe_draw_ref k_quad_refs[] = {{100, STROBE_DEEP_GEOMETRY}};
static const strobe_draw_ref k_sprite_refs[] = {{100, STROBE_DEEP_GEOMETRY}, {200, STROBE_DEEP_TEXTURE}};

static void test_deep_capture_round_trips(void) {
  char path[64];
  CHECK_EQ_INT(strobe_deep_begin(5), 0); /* nothing requested */
  strobe_recorder *rec = start(path, sizeof path, "deep", 0);
  CHECK_EQ_INT(strobe_deep_begin(5), 0);
  REQUIRE_EQ_INT(strobe_deep_request(), 0);
  REQUIRE_EQ_INT(strobe_deep_begin(6), 1);
  CHECK_EQ_INT(strobe_deep_begin(7), 0); /* one open at a time */
  float geometry[8 * 4];
  for (int i = 0; i < 32; i++) geometry[i] = (float)i;
  uint8_t mask[4 * 3] = {0, 64, 128, 255, 1, 2, 3, 4, 5, 6, 7, 8};
  strobe_attachment gbuf = {.resource = 100, .media_type = "application/x-demo-prims", .bytes = geometry, .size = sizeof geometry};
  strobe_attachment tex = {.resource = 200, .media_type = STROBE_MEDIA_A8, .width = 4, .height = 3, .bytes = mask, .size = sizeof mask};
  for (int i = 0; i < 6; i++) {
    int sprite = i % 2;
    strobe_draw_call c = {sprite ? "sprite" : "quad", sprite ? "sprite_a8" : "solid", "main", 0, 4, (uint32_t)i, 1,
                          sprite ? k_sprite_refs : k_quad_refs, sprite ? 2u : 1u, 1,
                          {(float)i, 2, 3, 4}, {0, 0, 100, 50}};
    REQUIRE_EQ_INT(strobe_deep_call(&c), 0);
    CHECK_EQ_INT(strobe_deep_resource(&gbuf), i == 0 ? 0 : 1); /* once per resource, not per call */
    if (sprite) CHECK_EQ_INT(strobe_deep_resource(&tex), i == 1 ? 0 : 1);
  }
  strobe_draw_call bare = {"surface", "composite", "main", 0, 0, 0, 1, NULL, 0, 0, {0}, {0}};
  REQUIRE_EQ_INT(strobe_deep_call(&bare), 0);
  CHECK_EQ_INT(strobe_deep_end(), 7);
  strobe_deep_status st = strobe_deep_query_status();
  CHECK_EQ_INT(strobe_record_stop(rec), 0);
  st = strobe_deep_query_status();
  CHECK_EQ_U64(st.last_frame, 6);
  CHECK_EQ_INT(st.last_calls, 7);
  CHECK_EQ_INT(st.last_resources, 2);
  CHECK_EQ_U64(st.last_bytes, sizeof geometry + sizeof mask);

  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  CHECK_EQ_INT(strobe_capture_query_header(cap)->deep_max_calls, STROBE_DEEP_MAX_CALLS);
  CHECK_EQ_INT(strobe_capture_query_header(cap)->attach_max_bytes, STROBE_ATTACH_MAX_BYTES);
  strobe_capture_record x;
  int rc, deeps = 0, attachments = 0;
  while ((rc = strobe_capture_next(cap, &x)) > 0) {
    if (x.type == STROBE_REC_ATTACHMENT) {
      attachments++;
      CHECK_EQ_U64(x.attachment->frame, 6); /* the deep capture's frame */
      CHECK_EQ_INT(x.attachment->state, STROBE_CAPTURE_ATTACH_STORED);
      if (x.attachment->resource == 100) CHECK(memcmp(x.attachment->bytes, geometry, sizeof geometry) == 0);
      else CHECK(memcmp(x.attachment->bytes, mask, sizeof mask) == 0);
    }
    if (x.type != STROBE_REC_DEEP) continue;
    deeps++;
    const strobe_capture_deep *d = x.deep;
    CHECK_EQ_U64(d->frame, 6);
    REQUIRE_EQ_INT(d->ncalls, 7);
    CHECK_EQ_U64(d->calls_dropped, 0);
    for (uint32_t i = 0; i < 6; i++) {
      const strobe_capture_draw_call *c = &d->calls[i];
      int sprite = i % 2;
      CHECK_EQ_INT(c->seq, i);
      CHECK_STR_EQ(c->kind, sprite ? "sprite" : "quad");
      CHECK_STR_EQ(c->pipeline, sprite ? "sprite_a8" : "solid");
      CHECK_STR_EQ(c->pass, "main");
      CHECK_EQ_INT(c->vertex_count, 4);
      CHECK_EQ_INT(c->instance_first, i);
      CHECK_EQ_INT(c->instance_count, 1);
      CHECK_EQ_INT(c->has_geometry, 1);
      CHECK(c->bounds[0] == (float)i && c->clip[2] == 100.0f && c->clip[3] == 50.0f);
      REQUIRE_EQ_INT(c->nrefs, sprite ? 2 : 1);
      CHECK_EQ_U64(c->refs[0].resource, 100);
      CHECK_EQ_INT(c->refs[0].role, STROBE_DEEP_GEOMETRY);
      if (sprite) CHECK_EQ_U64(c->refs[1].resource, 200);
    }
    CHECK_EQ_INT(d->calls[6].has_geometry, 0);
    CHECK_EQ_INT(d->calls[6].nrefs, 0);
  }
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_INT(deeps, 1);
  CHECK_EQ_INT(attachments, 2);
  strobe_capture_close(cap);
  unlink(path);
}

static void test_deep_refusals(void) {
  CHECK_EQ_INT(strobe_deep_request(), STROBE_ESTATE); /* nowhere for it to go */
  strobe_draw_call c = {"quad", "solid", "main", 0, 4, 0, 1, k_quad_refs, 1, 0, {0}, {0}};
  CHECK_EQ_INT(strobe_deep_call(&c), STROBE_ESTATE);
  CHECK_EQ_INT(strobe_deep_end(), STROBE_ESTATE);
  char path[64];
  strobe_recorder *rec = start(path, sizeof path, "deepr", 0);
  REQUIRE_EQ_INT(strobe_deep_request(), 0);
  REQUIRE_EQ_INT(strobe_deep_begin(1), 1);
  strobe_draw_call b = c;
  b.kind = "has space";
  CHECK_EQ_INT(strobe_deep_call(&b), STROBE_EINVAL);
  b = c;
  b.pass = NULL;
  CHECK_EQ_INT(strobe_deep_call(&b), STROBE_EINVAL);
  b = c;
  b.nrefs = STROBE_DEEP_MAX_REFS + 1;
  CHECK_EQ_INT(strobe_deep_call(&b), STROBE_EINVAL);
  strobe_draw_ref zero = {0, STROBE_DEEP_GEOMETRY}, role = {5, 9};
  b = c;
  b.refs = &zero;
  CHECK_EQ_INT(strobe_deep_call(&b), STROBE_EINVAL);
  b.refs = &role;
  CHECK_EQ_INT(strobe_deep_call(&b), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_deep_call(NULL), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_deep_call(&c), 0);
  CHECK_EQ_INT(strobe_deep_end(), 1); /* only the valid call was kept */
  CHECK_EQ_INT(strobe_record_stop(rec), 0);
  unlink(path);
}

static void test_deep_frames_bound_is_counted(void) {
  char path[64];
  strobe_recorder *rec = start(path, sizeof path, "deepb", 0);
  strobe_draw_call c = {"quad", "solid", "main", 0, 4, 0, 1, NULL, 0, 0, {0}, {0}};
  for (uint32_t i = 0; i < STROBE_DEEP_MAX_FRAMES + 2; i++) {
    REQUIRE_EQ_INT(strobe_deep_request(), 0);
    REQUIRE_EQ_INT(strobe_deep_begin(i), 1);
    REQUIRE_EQ_INT(strobe_deep_call(&c), 0);
    REQUIRE_EQ_INT(strobe_deep_end(), 1);
  }
  CHECK_EQ_INT(strobe_record_stop(rec), 0);
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  strobe_capture_record x;
  int rc;
  while ((rc = strobe_capture_next(cap, &x)) > 0) {}
  CHECK_EQ_INT(rc, 0);
  strobe_capture_totals t = strobe_capture_query_totals(cap);
  CHECK_EQ_U64(t.deeps, STROBE_DEEP_MAX_FRAMES);
  CHECK_EQ_U64(t.deeps_dropped, 2);
  strobe_capture_close(cap);
  unlink(path);
}

/* >>hostile: hand-framed blocks after a valid header */
static const strobe__header_facts k_facts = {{"monotonic", 1, 1.0, 0, 0}, 0, "test", 0, 1, 1024, 0, 0, 0, NULL, NULL};

static void put_block(strobe__writer *w, uint8_t type, const strobe__buf *payload) {
  uint8_t frame[STROBE__BLOCK_HEADER + 512];
  REQUIRE(payload->len <= 512);
  strobe__block_header h = {type, STROBE__CODEC_RAW, (uint32_t)payload->len, (uint32_t)payload->len, 0};
  strobe__block_header_encode(frame, &h);
  memcpy(frame + STROBE__BLOCK_HEADER, payload->data, payload->len);
  h.crc = strobe__block_crc(frame, frame + STROBE__BLOCK_HEADER, payload->len);
  strobe__block_header_encode(frame, &h);
  strobe__block_info info = {0};
  strobe__writer_block(w, &info, frame, STROBE__BLOCK_HEADER + payload->len);
}

/* Reads a file of one hand-made block; returns the reader's last result. */
static int read_one(uint8_t type, const strobe__buf *payload) {
  strobe__buf out = {0};
  strobe__writer_desc d = {"file", 100, 1, 0.0, 0.0, cm_sink, &out, &k_facts};
  strobe__writer *w = NULL;
  REQUIRE_EQ_INT(strobe__writer_create(&d, &w), 0);
  put_block(w, type, payload);
  strobe_misuse m = {0};
  strobe__writer_finish(w, 1, &m);
  strobe__writer_destroy(w);
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open_memory(out.data, out.len, &cap), 0);
  strobe_capture_record x;
  int rc;
  while ((rc = strobe_capture_next(cap, &x)) > 0) {}
  strobe_capture_close(cap);
  strobe__buf_free(&out);
  return rc;
}

static void attach_payload(strobe__buf *b, uint64_t resource, const char *media, uint64_t state, uint64_t size, size_t have) {
  b->len = 0;
  strobe__buf_varint(b, 1);        /* frame */
  strobe__buf_varint(b, resource);
  strobe__buf_varint(b, 0);        /* ticks */
  strobe__buf_str(b, media);
  strobe__buf_varint(b, 0);
  strobe__buf_varint(b, 0);
  strobe__buf_varint(b, state);
  strobe__buf_varint(b, size);
  for (size_t i = 0; i < have; i++) strobe__buf_put(b, "x", 1);
}

static void deep_payload(strobe__buf *b, uint64_t ncalls, uint64_t label, uint64_t role) {
  b->len = 0;
  strobe__buf_varint(b, 1);
  strobe__buf_varint(b, 1);
  strobe__buf_varint(b, 0);
  strobe__buf_varint(b, ncalls);
  strobe__buf_varint(b, 0);
  strobe__buf_varint(b, 1); /* one label */
  strobe__buf_str(b, "quad");
  for (uint64_t i = 0; i < 1; i++) {
    strobe__buf_varint(b, label);
    strobe__buf_varint(b, 0);
    strobe__buf_varint(b, 0);
    for (int k = 0; k < 4; k++) strobe__buf_varint(b, 1);
    strobe__buf_varint(b, 0); /* no geometry */
    strobe__buf_varint(b, 1); /* one reference */
    strobe__buf_varint(b, role);
    strobe__buf_u64(b, 77);
  }
}

static void test_hostile_blocks_are_refused(void) {
  strobe__buf b = {0};
  attach_payload(&b, 1, "image/png", STROBE_CAPTURE_ATTACH_STORED, 4, 4);
  CHECK_EQ_INT(read_one(STROBE__BLK_ATTACH, &b), 0); /* the well-formed one reads */
  attach_payload(&b, 1, "image/png", STROBE_CAPTURE_ATTACH_STORED, 400, 4); /* claims more than it holds */
  CHECK_EQ_INT(read_one(STROBE__BLK_ATTACH, &b), STROBE_ECORRUPT);
  attach_payload(&b, 1, "image/png", STROBE_CAPTURE_ATTACH_STORED, 4, 5); /* bytes after the content */
  CHECK_EQ_INT(read_one(STROBE__BLK_ATTACH, &b), STROBE_ECORRUPT);
  attach_payload(&b, 0, "image/png", STROBE_CAPTURE_ATTACH_STORED, 4, 4); /* resource 0 */
  CHECK_EQ_INT(read_one(STROBE__BLK_ATTACH, &b), STROBE_ECORRUPT);
  attach_payload(&b, 1, "image/png\n", STROBE_CAPTURE_ATTACH_STORED, 4, 4); /* not a media type */
  CHECK_EQ_INT(read_one(STROBE__BLK_ATTACH, &b), STROBE_ECORRUPT);
  attach_payload(&b, 1, "image/png", 3, 4, 0); /* no such state */
  CHECK_EQ_INT(read_one(STROBE__BLK_ATTACH, &b), STROBE_ECORRUPT);
  attach_payload(&b, 1, "image/png", STROBE_CAPTURE_ATTACH_CUT, (uint64_t)STROBE_ATTACH_MAX_BYTES + 1, 0); /* oversize */
  CHECK_EQ_INT(read_one(STROBE__BLK_ATTACH, &b), STROBE_ECORRUPT);
  deep_payload(&b, 1, 0, STROBE_DEEP_TEXTURE);
  CHECK_EQ_INT(read_one(STROBE__BLK_DEEP, &b), 0);
  deep_payload(&b, 1, 1, STROBE_DEEP_TEXTURE); /* a label index past the table */
  CHECK_EQ_INT(read_one(STROBE__BLK_DEEP, &b), STROBE_ECORRUPT);
  deep_payload(&b, 1, 0, 0); /* no such role */
  CHECK_EQ_INT(read_one(STROBE__BLK_DEEP, &b), STROBE_ECORRUPT);
  deep_payload(&b, 1000000, 0, STROBE_DEEP_TEXTURE); /* more calls than bytes to hold them */
  CHECK_EQ_INT(read_one(STROBE__BLK_DEEP, &b), STROBE_ECORRUPT);
  strobe__buf_free(&b);
}

static void test_flight_recorder_alone_takes_none(void) {
  strobe_flight_recorder *fr;
  REQUIRE_EQ_INT(strobe_flight_recorder_start(&(strobe_flight_recorder_desc){0}, &fr), 0);
  uint8_t b[4] = {1, 2, 3, 4};
  strobe_attachment a = {.frame = 1, .resource = 1, .media_type = "image/png", .bytes = b, .size = sizeof b};
  CHECK_EQ_INT(strobe_attach(&a), STROBE_ESTATE);
  CHECK_EQ_INT(strobe_deep_request(), STROBE_ESTATE);
  CHECK_EQ_INT(strobe_flight_recorder_stop(fr), 0);
}

#define CASES(X)                          \
  X(attachment_round_trips_packed)        \
  X(attachment_bound_cuts_and_counts)     \
  X(attachment_refusals)                  \
  X(deep_capture_round_trips)             \
  X(deep_refusals)                        \
  X(deep_frames_bound_is_counted)         \
  X(hostile_blocks_are_refused)          \
  X(flight_recorder_alone_takes_none)
HARNESS_MAIN(CASES)
