/*
 * test_replay.c — replaying a deep capture from its file (strobe/replay.h),
 * docs/recording.md §Replay:
 *   - each call's status names what it lacks: the backend's kind, a geometry
 *     buffer's content, a texture's, a surface call's geometry; and a run
 *     draws exactly the OK calls, in order, with the captured bytes;
 *   - removing one resource from a capture file turns exactly the calls that
 *     use it into "missing", and every other call stays OK;
 *   - a resource stored in an earlier frame is found (stored once per
 *     resource), and the frame's attachments come with their content;
 *   - an unknown frame, a missing file and bad arguments are refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strobe/capture.h"
#include "strobe/deep.h"
#include "strobe/record.h"
#include "strobe/replay.h"
#include "support/capture_edit.h"
#include "support/fixtures.h"
#include "support/harness.h"

#define GEOM 0x100u
#define TEX_A 0x200u
#define TEX_B 0x300u
#define SURF 0x400u
#define NEVER 0x999u /* referenced, never attached */

/* A test backend: draws "quad", "sprite" and "surface", records what it drew. */
typedef struct drawn {
  uint32_t seq[32];
  uint8_t first_byte[32]; /* of its first resource */
  int n;
} drawn;

static int supports(void *ctx, const char *kind) {
  (void)ctx;
  return !strcmp(kind, "quad") || !strcmp(kind, "sprite") || !strcmp(kind, "surface");
}

static int draw(void *ctx, const strobe_capture_draw_call *call, const strobe_replay_resource *const *res) {
  drawn *d = ctx;
  if (d->n == 32) return STROBE_ELIMIT;
  d->seq[d->n] = call->seq;
  d->first_byte[d->n++] = call->nrefs ? ((const uint8_t *)res[0]->bytes)[0] : 0;
  return 0;
}

static uint8_t g_geom[64], g_tex_a[16], g_tex_b[16], g_surf[16];

static void resource(uint64_t id, const void *bytes, size_t size) {
  strobe_attachment a = {.resource = id, .media_type = "application/octet-stream", .bytes = bytes, .size = size};
  REQUIRE(strobe_deep_resource(&a) >= 0);
}

static void call(const char *kind, const strobe_draw_ref *refs, uint32_t nrefs, int geometry) {
  strobe_draw_call c = {kind, "p", "main", 0, 4, 0, 1, refs, nrefs, geometry, {1, 2, 3, 4}, {0, 0, 100, 100}};
  REQUIRE_EQ_INT(strobe_deep_call(&c), 0);
  for (uint32_t i = 0; i < nrefs; i++) {
    uint64_t id = refs[i].resource;
    if (id == GEOM) resource(id, g_geom, sizeof g_geom);
    if (id == TEX_A) resource(id, g_tex_a, sizeof g_tex_a);
    if (id == TEX_B) resource(id, g_tex_b, sizeof g_tex_b);
    if (id == SURF) resource(id, g_surf, sizeof g_surf);
  }
}

static const strobe_draw_ref R_G[] = {{GEOM, STROBE_DEEP_GEOMETRY}};
static const strobe_draw_ref R_GA[] = {{GEOM, STROBE_DEEP_GEOMETRY}, {TEX_A, STROBE_DEEP_TEXTURE}};
static const strobe_draw_ref R_GB[] = {{GEOM, STROBE_DEEP_GEOMETRY}, {TEX_B, STROBE_DEEP_TEXTURE}};
static const strobe_draw_ref R_S[] = {{SURF, STROBE_DEEP_SURFACE}};
static const strobe_draw_ref R_NEVER_G[] = {{NEVER, STROBE_DEEP_GEOMETRY}};
static const strobe_draw_ref R_NEVER_T[] = {{GEOM, STROBE_DEEP_GEOMETRY}, {NEVER, STROBE_DEEP_TEXTURE}};

/* Frame 7's deep capture: 0 quad G, 1 sprite G+A, 2 sprite G+B, 3 sprite G+A, 4 surface S with geometry. */
static void record_frame(char *path, size_t cap, const char *tag) {
  for (size_t i = 0; i < sizeof g_geom; i++) g_geom[i] = (uint8_t)(0x40 + i);
  memset(g_tex_a, 0xA1, sizeof g_tex_a);
  memset(g_tex_b, 0xB1, sizeof g_tex_b);
  memset(g_surf, 0x51, sizeof g_surf);
  REQUIRE(fx_temp_file(path, cap, tag) == 0);
  strobe_recorder *rec = NULL;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  REQUIRE_EQ_INT(strobe_deep_request(), 0);
  REQUIRE_EQ_INT(strobe_deep_begin(7), 1);
  call("quad", R_G, 1, 1);
  call("sprite", R_GA, 2, 1);
  call("sprite", R_GB, 2, 1);
  call("sprite", R_GA, 2, 1);
  call("surface", R_S, 1, 1);
  REQUIRE_EQ_INT(strobe_deep_end(), 5);
  strobe_attachment shot = {.frame = 7, .resource = 0x5107, .media_type = "image/png", .bytes = "png!", .size = 4};
  REQUIRE_EQ_INT(strobe_attach(&shot), 0);
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
}

static void statuses(const char *path, strobe_replay_status *st, uint32_t n) {
  strobe_replay *r;
  REQUIRE_EQ_INT(strobe_replay_open(path, 7, &r), 0);
  REQUIRE_EQ_INT(strobe_replay_query_deep(r)->ncalls, n);
  strobe_replay_backend b = {NULL, supports, NULL};
  for (uint32_t i = 0; i < n; i++) st[i] = strobe_replay_check(r, i, &b);
  strobe_replay_close(r);
}

static void test_each_status_names_what_is_missing(void) {
  char path[64];
  REQUIRE(fx_temp_file(path, sizeof path, "rstat") == 0);
  strobe_recorder *rec = NULL;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  memset(g_geom, 0x47, sizeof g_geom);
  memset(g_tex_a, 0xA1, sizeof g_tex_a);
  REQUIRE_EQ_INT(strobe_deep_request(), 0);
  REQUIRE_EQ_INT(strobe_deep_begin(3), 1);
  call("quad", R_G, 1, 1);              /* 0 ok */
  call("blit", R_G, 1, 1);              /* 1 unsupported kind */
  call("quad", R_NEVER_G, 1, 1);        /* 2 missing geometry */
  call("sprite", R_NEVER_T, 2, 1);      /* 3 missing texture */
  call("surface", R_S, 1, 0);           /* 4 missing surface geometry (its content is there) */
  call("sprite", R_GA, 2, 1);           /* 5 ok */
  REQUIRE_EQ_INT(strobe_deep_end(), 6);
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);

  strobe_replay *r;
  REQUIRE_EQ_INT(strobe_replay_open(path, 3, &r), 0);
  drawn d = {{0}, {0}, 0};
  strobe_replay_backend b = {&d, supports, draw};
  strobe_replay_status st[6];
  CHECK_EQ_INT(strobe_replay_run(r, &b, st), 4);
  const strobe_replay_status want[6] = {STROBE_REPLAY_OK, STROBE_REPLAY_UNSUPPORTED_KIND, STROBE_REPLAY_MISSING_GEOMETRY,
                                        STROBE_REPLAY_MISSING_TEXTURE, STROBE_REPLAY_MISSING_SURFACE_GEOMETRY,
                                        STROBE_REPLAY_OK};
  for (int i = 0; i < 6; i++) CHECKF(st[i] == want[i], "call %d: %s, want %s", i, strobe_replay_status_name(st[i]),
                                      strobe_replay_status_name(want[i]));
  REQUIRE_EQ_INT(d.n, 2); /* only the OK calls were drawn, in order, from the captured bytes */
  CHECK_EQ_INT(d.seq[0], 0);
  CHECK_EQ_INT(d.seq[1], 5);
  CHECK_EQ_INT(d.first_byte[0], 0x47);
  /* Without a backend's kinds, only the data is checked: the blit is complete. */
  CHECK_EQ_INT(strobe_replay_check(r, 1, NULL), STROBE_REPLAY_OK);
  CHECK_EQ_INT(strobe_replay_check(r, 6, NULL), STROBE_REPLAY_UNSUPPORTED_KIND); /* past the calls */
  CHECK_EQ_INT(strobe_replay_run(r, NULL, NULL), STROBE_EINVAL);
  const strobe_replay_resource *t = strobe_replay_query_resource(r, TEX_A);
  REQUIRE(t != NULL);
  CHECK_EQ_U64(t->size, sizeof g_tex_a);
  CHECK(memcmp(t->bytes, g_tex_a, sizeof g_tex_a) == 0);
  CHECK(strobe_replay_query_resource(r, NEVER) == NULL);
  strobe_replay_close(r);
  unlink(path);
}

static void test_removing_a_resource_misses_exactly_its_calls(void) {
  char path[64], cut[80];
  record_frame(path, sizeof path, "rdrop");
  strobe_replay_status st[5];
  statuses(path, st, 5);
  for (int i = 0; i < 5; i++) CHECKF(st[i] == STROBE_REPLAY_OK, "call %d whole: %s", i, strobe_replay_status_name(st[i]));

  snprintf(cut, sizeof cut, "%s.cut", path);
  REQUIRE_EQ_INT(ce_drop_resource(path, cut, TEX_A), 1);
  statuses(cut, st, 5);
  const strobe_replay_status want_a[5] = {STROBE_REPLAY_OK, STROBE_REPLAY_MISSING_TEXTURE, STROBE_REPLAY_OK,
                                          STROBE_REPLAY_MISSING_TEXTURE, STROBE_REPLAY_OK};
  for (int i = 0; i < 5; i++) CHECKF(st[i] == want_a[i], "without A, call %d: %s", i, strobe_replay_status_name(st[i]));

  REQUIRE_EQ_INT(ce_drop_resource(path, cut, GEOM), 1);
  statuses(cut, st, 5);
  for (int i = 0; i < 4; i++) CHECKF(st[i] == STROBE_REPLAY_MISSING_GEOMETRY, "without G, call %d: %s", i,
                                     strobe_replay_status_name(st[i]));
  CHECK_EQ_INT(st[4], STROBE_REPLAY_OK); /* the surface reads no geometry buffer */

  REQUIRE_EQ_INT(ce_drop_resource(path, cut, SURF), 1);
  statuses(cut, st, 5);
  for (int i = 0; i < 4; i++) CHECK_EQ_INT(st[i], STROBE_REPLAY_OK);
  CHECK_EQ_INT(st[4], STROBE_REPLAY_MISSING_TEXTURE);
  unlink(cut);
  unlink(path);
}

static void test_earlier_resources_and_attachments_are_found(void) {
  char path[64];
  REQUIRE(fx_temp_file(path, sizeof path, "rearly") == 0);
  strobe_recorder *rec = NULL;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  memset(g_tex_b, 0xB2, sizeof g_tex_b);
  memset(g_geom, 0x33, sizeof g_geom);
  strobe_attachment early = {.frame = 1, .resource = TEX_B, .media_type = STROBE_MEDIA_A8, .width = 4, .height = 4,
                             .bytes = g_tex_b, .size = sizeof g_tex_b};
  REQUIRE_EQ_INT(strobe_attach(&early), 0); /* frame 1 stores B's content */
  REQUIRE_EQ_INT(strobe_deep_request(), 0);
  REQUIRE_EQ_INT(strobe_deep_begin(2), 1);
  call("sprite", R_GB, 2, 1); /* frame 2's capture of B is a reference to frame 1's */
  REQUIRE_EQ_INT(strobe_deep_end(), 1);
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
  strobe_replay *r;
  REQUIRE_EQ_INT(strobe_replay_open(path, 2, &r), 0);
  CHECK_EQ_INT(strobe_replay_check(r, 0, NULL), STROBE_REPLAY_OK);
  const strobe_replay_resource *b = strobe_replay_query_resource(r, TEX_B);
  REQUIRE(b != NULL);
  CHECK_EQ_INT(b->width, 4);
  CHECK(memcmp(b->bytes, g_tex_b, sizeof g_tex_b) == 0);
  uint32_t n;
  const strobe_replay_resource *att = strobe_replay_query_attachments(r, &n);
  REQUIRE_EQ_INT(n, 2); /* frame 2's: the geometry buffer, and B stored earlier (its content found) */
  int saw_b = 0;
  for (uint32_t i = 0; i < n; i++)
    if (att[i].id == TEX_B) {
      saw_b = 1;
      CHECK_EQ_INT(att[i].state, STROBE_CAPTURE_ATTACH_EARLIER);
      REQUIRE(att[i].bytes != NULL);
      CHECK(memcmp(att[i].bytes, g_tex_b, sizeof g_tex_b) == 0);
    }
  CHECK(saw_b);
  strobe_replay_close(r);
  unlink(path);
}

static void test_refusals(void) {
  char path[64];
  record_frame(path, sizeof path, "rref");
  strobe_replay *r = (strobe_replay *)1;
  CHECK_EQ_INT(strobe_replay_open(path, 8, &r), STROBE_ENOTFOUND); /* no deep capture of frame 8 */
  CHECK(r == NULL);
  CHECK_EQ_INT(strobe_replay_open(NULL, 7, &r), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_replay_open(path, 7, NULL), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_replay_open("/nonexistent/capture.strobe", 7, &r), STROBE_EIO);
  CHECK(!strcmp(strobe_replay_status_name(STROBE_REPLAY_MISSING_TEXTURE), "missing_texture"));
  CHECK(!strcmp(strobe_replay_status_name((strobe_replay_status)99), "unknown"));
  strobe_replay_close(NULL);
  unlink(path);
}

#define CASES(X)                                 \
  X(each_status_names_what_is_missing)           \
  X(removing_a_resource_misses_exactly_its_calls) \
  X(earlier_resources_and_attachments_are_found) \
  X(refusals)
HARNESS_MAIN(CASES)
