/*
 * test_session_remote.c — operations handed between processes
 * (docs/sessions.md §Across processes, §The operation token):
 *   - a frame begun in one collector ("screen") and handed off as a token
 *     is reported there as handed off to the named peer, ending at the
 *     hand-off; the collector that resumes it ("sender") reports the whole
 *     frame: the origin's frame id and start, the origin's stages attributed
 *     to it and its own to itself, and a total that includes the hand-off gap;
 *   - the same between two real processes (a forked child with its own
 *     collector, the token over a pipe);
 *   - truncated, corrupt, bad-magic, other-version, replayed, too-old,
 *     other-boot and misaddressed tokens are refused with their error, change
 *     nothing, and are counted in the collector's stats and in reports;
 *   - the hand-off's own refusals (a buffer too small, a bad peer label, an
 *     operation that came from another process) leave the operation running;
 *   - what makes it one frame travels with it: the finisher files it under
 *     the origin's window id (whatever its own window is called) with the
 *     origin's frame id and population, and counts it as no pass begun on
 *     its own window; an operation moved between threads of one process
 *     keeps them too and is one sample;
 *   - captures carry both sides (docs/capture-format.md, OPS): the origin's
 *     OP_TAKE names the peer, the finisher's OP_RESUME names the origin
 *     collector and operation (what a merge joins them by) and the gap, and
 *     the finisher's OP_END starts at the origin's start with both sides'
 *     stages.
 *
 * STROBE_TEST_NEEDS: jansson reports
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strobe/capture.h"
#include "strobe/record.h"
#include "support/case_files.h"
#include "support/session_util.h"

static strobe_site g_render = STROBE_STAGE_SITE("render", NULL);
static strobe_site g_expand = STROBE_STAGE_SITE("expand", "render");
static strobe_site g_encode = STROBE_STAGE_SITE("encode", NULL);

/* The screen's half of a frame: render with expand inside, then the hand-off. */
static size_t screen_half(strobe_collector *c, strobe_window w, uint64_t frame, const char *peer, uint8_t *buf,
                          size_t cap) {
  int st = -1;
  strobe_op op = strobe_op_begin_frame(c, w, frame, &st);
  REQUIRE_EQ_INT(st, 0);
  strobe_stage render = strobe_stage_begin(&g_render);
  strobe_stage expand = strobe_stage_begin(&g_expand);
  fx_sleep_ms(3);
  CHECK_EQ_INT(strobe_stage_end(&expand), 0);
  fx_sleep_ms(2);
  CHECK_EQ_INT(strobe_stage_end(&render), 0);
  strobe_op taken = strobe_op_take();
  CHECK_EQ_U64(taken.id, op.id);
  size_t len = 0;
  REQUIRE_EQ_INT(strobe_op_hand_off_remote(taken, peer, buf, cap, &len), 0);
  REQUIRE(len > 0 && len <= cap);
  return len;
}

/* The sender's half: resume, encode, commit. Returns the resume status. */
static int sender_half(strobe_collector *c, strobe_window w, const uint8_t *buf, size_t len, int committed) {
  int st = -1;
  strobe_op op = strobe_op_resume_remote(c, w, buf, len, &st);
  if (st) {
    CHECK_EQ_U64(op.id, 0);
    return st;
  }
  REQUIRE(op.id != 0);
  strobe_stage encode = strobe_stage_begin(&g_encode);
  fx_sleep_ms(4);
  CHECK_EQ_INT(strobe_stage_end(&encode), 0);
  strobe_op_end(op, committed);
  return 0;
}

/* The two processes' collectors, in one process: "screen" and "sender", each with its window. */
static void pair(strobe_collector **screen, strobe_window *ws, strobe_collector **sender, strobe_window *wr) {
  *screen = su_collector(ws);
  *sender = su_collector(wr);
  CHECK_EQ_INT(strobe_collector_set_process(*screen, "screen"), 0);
  CHECK_EQ_INT(strobe_collector_set_process(*sender, "sender"), 0);
}

static void release_pair(strobe_collector *screen, strobe_collector *sender) {
  strobe_collector_release(screen);
  strobe_collector_release(sender);
}

static json_t *stage_of(json_t *sample, const char *name) { return su_named(jreq(sample, "stages"), name); }

/* What the origin's report says: handed off to the peer, its own stages, ending at the hand-off. */
static void check_origin(json_t *doc, uint64_t frame) {
  REQUIRE_EQ_INT(jlen(doc, "samples"), 1);
  json_t *s = json_array_get(jreq(doc, "samples"), 0);
  CHECK_EQ_U64(jint(s, "frame_id"), frame);
  CHECK(!jbool(s, "committed"));
  CHECK_STR_EQ(jstr(s, "handed_off_to"), "sender");
  CHECK(jnull(s, "from"));
  CHECK_EQ_INT(jlen(s, "stages"), 2);
  CHECK_STR_EQ(jstr(stage_of(s, "render"), "process"), "screen");
  CHECK_STR_EQ(jstr(stage_of(s, "expand"), "process"), "screen");
  CHECK(jnum(s, "total_ms") >= 5.0);
  CHECK_EQ_INT(jint(doc, "cross_process.handed_off"), 1);
  CHECK_STR_EQ(jstr(doc, "process.name"), "screen");
}

/* What the finisher's report says: the whole frame, both sides' stages, the gap inside total. */
static void check_finisher(json_t *doc, uint64_t frame, double min_gap_ms, long long origin_pid) {
  REQUIRE_EQ_INT(jlen(doc, "samples"), 1);
  json_t *s = json_array_get(jreq(doc, "samples"), 0);
  CHECK_EQ_U64(jint(s, "frame_id"), frame);
  CHECK(jbool(s, "committed"));
  CHECK(jnull(s, "handed_off_to"));
  CHECK_STR_EQ(jstr(s, "from.process"), "screen");
  CHECK_EQ_INT(jint(s, "from.pid"), origin_pid);
  CHECK_EQ_INT(jlen(s, "stages"), 3);
  json_t *render = stage_of(s, "render"), *expand = stage_of(s, "expand"), *encode = stage_of(s, "encode");
  REQUIRE(render && expand && encode);
  CHECK_STR_EQ(jstr(render, "process"), "screen");
  CHECK_STR_EQ(jstr(expand, "process"), "screen");
  CHECK_STR_EQ(jstr(expand, "nested_in"), "render");
  CHECK_STR_EQ(jstr(encode, "process"), "sender");
  CHECK(jnum(render, "total_ms") >= 5.0);
  CHECK(jnum(expand, "total_ms") >= 3.0);
  CHECK(jnum(encode, "total_ms") >= 4.0);
  double gap = jnum(s, "from.gap_ms");
  CHECKF(gap >= min_gap_ms, "gap %.3f ms, slept %.3f", gap, min_gap_ms);
  /* total spans the origin's start to the end here: its stages, the gap and ours. */
  double total = jnum(s, "total_ms");
  CHECKF(total >= jnum(render, "total_ms") + gap + jnum(encode, "total_ms") - 0.01,
         "total %.3f < render %.3f + gap %.3f + encode %.3f", total, jnum(render, "total_ms"), gap,
         jnum(encode, "total_ms"));
  CHECK(jnum(s, "start_ms") <= jnum(s, "from.handed_off_ms"));
  CHECK(jnum(s, "from.handed_off_ms") <= jnum(s, "from.resumed_ms"));
  CHECK_EQ_INT(jint(doc, "cross_process.resumed"), 1);
  CHECK_EQ_INT(jint(doc, "cross_process.refused"), 0);
  CHECK_STR_EQ(jstr(doc, "process.name"), "sender");
}

static void test_frame_across_collectors(void) {
  strobe_window ws, wr;
  strobe_collector *screen, *sender;
  pair(&screen, &ws, &sender, &wr);
  CHECK_EQ_INT(strobe_collector_set_process(sender, "not a label"), STROBE_ELABEL);
  char a[STROBE_SESSION_ID_MAX], b[STROBE_SESSION_ID_MAX];
  su_start(screen, 0, a);
  su_start(sender, 0, b);
  uint8_t buf[STROBE_OP_TOKEN_MAX];
  size_t len = screen_half(screen, ws, 41, "sender", buf, sizeof buf);
  fx_sleep_ms(10); /* the hand-off gap: in the pipe, the mailbox, the other process's loop */
  REQUIRE_EQ_INT(sender_half(sender, wr, buf, len, 1), 0);
  json_t *da, *db;
  strobe_report *ra = su_end(screen, a, &da), *rb = su_end(sender, b, &db);
  check_origin(da, 41);
  check_finisher(db, 41, 10.0, (long long)getpid());
  /* Same host: one clock. The finisher's frame starts where the origin's did. */
  json_t *sa = json_array_get(jreq(da, "samples"), 0), *sb = json_array_get(jreq(db, "samples"), 0);
  CHECK_STR_EQ(jstr(sb, "from.collector"), jstr(da, "process.collector"));
  CHECK_EQ_INT(jint(sb, "from.op"), jint(sa, "id"));
  strobe_remote_stats st;
  CHECK_EQ_INT(strobe_collector_query_remote_stats(sender, &st), 0);
  CHECK_EQ_U64(st.resumed, 1);
  json_decref(da);
  json_decref(db);
  strobe_report_free(ra);
  strobe_report_free(rb);
  release_pair(screen, sender);
}

/* A dropped frame on the finishing side is a sample with committed: false, like any. */
static void test_dropped_by_the_finisher(void) {
  strobe_window ws, wr;
  strobe_collector *screen, *sender;
  pair(&screen, &ws, &sender, &wr);
  char b[STROBE_SESSION_ID_MAX];
  su_start(sender, 0, b);
  uint8_t buf[STROBE_OP_TOKEN_MAX];
  size_t len = screen_half(screen, ws, 5, "sender", buf, sizeof buf);
  REQUIRE_EQ_INT(sender_half(sender, wr, buf, len, 0), 0);
  json_t *db;
  strobe_report *rb = su_end(sender, b, &db);
  REQUIRE_EQ_INT(jlen(db, "samples"), 1);
  json_t *s = json_array_get(jreq(db, "samples"), 0);
  CHECK(!jbool(s, "committed"));
  CHECK_STR_EQ(jstr(s, "from.process"), "screen");
  json_decref(db);
  strobe_report_free(rb);
  release_pair(screen, sender);
}

/* >>two processes: the child is the sender; the token and its report travel over pipes. */
static int read_all(int fd, void *buf, size_t n) {
  uint8_t *p = buf;
  while (n) {
    ssize_t k = read(fd, p, n);
    if (k <= 0) return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

static int write_all(int fd, const void *buf, size_t n) {
  const uint8_t *p = buf;
  while (n) {
    ssize_t k = write(fd, p, n);
    if (k <= 0) return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

static void sender_process(int in, int out) {
  strobe_collector *c = NULL;
  strobe_window w;
  char id[STROBE_SESSION_ID_MAX];
  uint32_t len = 0;
  uint8_t buf[STROBE_OP_TOKEN_MAX];
  if (strobe_collector_create(&c) || strobe_window_register(c, "sender", 0, &w) ||
      strobe_collector_set_process(c, "sender") || strobe_session_start(c, NULL, id))
    _exit(2);
  if (write_all(out, "r", 1) || read_all(in, &len, sizeof len) || len > sizeof buf || read_all(in, buf, len)) _exit(3);
  int st = -1;
  strobe_op op = strobe_op_resume_remote(c, w, buf, len, &st);
  if (st || !op.id) _exit(4);
  strobe_stage encode = strobe_stage_begin(&g_encode);
  fx_sleep_ms(4);
  strobe_stage_end(&encode);
  strobe_op_end(op, 1);
  strobe_report *r = NULL;
  char *json = NULL;
  size_t n = 0;
  if (strobe_session_stop(c, id, 0, &r) || strobe_report_json(r, &json, &n)) _exit(5);
  uint32_t n32 = (uint32_t)n;
  if (write_all(out, &n32, sizeof n32) || write_all(out, json, n)) _exit(6);
  _exit(0);
}

static void test_frame_across_processes(void) {
  int to_child[2], from_child[2];
  REQUIRE_EQ_INT(pipe(to_child), 0);
  REQUIRE_EQ_INT(pipe(from_child), 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(to_child[1]);
    close(from_child[0]);
    sender_process(to_child[0], from_child[1]);
  }
  close(to_child[0]);
  close(from_child[1]);
  char ready;
  REQUIRE_EQ_INT(read_all(from_child[0], &ready, 1), 0); /* its session is running */
  strobe_window ws;
  strobe_collector *screen = su_collector(&ws);
  CHECK_EQ_INT(strobe_collector_set_process(screen, "screen"), 0);
  char a[STROBE_SESSION_ID_MAX];
  su_start(screen, 0, a);
  uint8_t buf[STROBE_OP_TOKEN_MAX];
  uint32_t len = (uint32_t)screen_half(screen, ws, 77, "sender", buf, sizeof buf);
  fx_sleep_ms(8);
  REQUIRE_EQ_INT(write_all(to_child[1], &len, sizeof len), 0);
  REQUIRE_EQ_INT(write_all(to_child[1], buf, len), 0);
  uint32_t n = 0;
  REQUIRE_EQ_INT(read_all(from_child[0], &n, sizeof n), 0);
  char *json = calloc(1, (size_t)n + 1);
  REQUIRE(json != NULL);
  REQUIRE_EQ_INT(read_all(from_child[0], json, n), 0);
  int status = 0;
  REQUIRE_EQ_INT(waitpid(pid, &status, 0), pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  json_error_t err;
  json_t *db = json_loads(json, 0, &err);
  REQUIRE(db != NULL);
  rc_save(json, n); /* the report_schema test validates the child's report too */
  check_finisher(db, 77, 8.0, (long long)getpid());
  CHECK(jint(db, "process.pid") == (long long)pid);
  json_t *da;
  strobe_report *ra = su_end(screen, a, &da);
  check_origin(da, 77);
  json_decref(da);
  json_decref(db);
  free(json);
  strobe_report_free(ra);
  strobe_collector_release(screen);
  close(to_child[1]);
  close(from_child[0]);
}

/* >>refusals: a token is checked whole before anything changes. */
static uint64_t fnv1a(const uint8_t *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

/* Rewrites the closing checksum (docs/sessions.md §The operation token), so
 * a changed field is judged on its own, not as corruption. */
static void reseal(uint8_t *buf, size_t len) {
  uint64_t h = fnv1a(buf, len - 8);
  for (int i = 0; i < 8; i++) buf[len - 8 + i] = (uint8_t)(h >> (8 * i));
}

static int resume_status(strobe_collector *c, strobe_window w, const uint8_t *buf, size_t len) {
  int st = -1;
  strobe_op op = strobe_op_resume_remote(c, w, buf, len, &st);
  if (op.id) strobe_op_end(op, 1);
  return st;
}

static void test_bad_tokens_refused_and_counted(void) {
  strobe_window ws, wr;
  strobe_collector *screen, *sender;
  pair(&screen, &ws, &sender, &wr);
  char b[STROBE_SESSION_ID_MAX];
  su_start(sender, 0, b);
  uint8_t good[STROBE_OP_TOKEN_MAX], bad[STROBE_OP_TOKEN_MAX];
  size_t len = screen_half(screen, ws, 9, "sender", good, sizeof good);

  /* Cut short, by one byte and to nothing. */
  CHECK_EQ_INT(resume_status(sender, wr, good, len - 1), STROBE_ETOKEN);
  CHECK_EQ_INT(resume_status(sender, wr, good, 3), STROBE_ETOKEN);
  CHECK_EQ_INT(resume_status(sender, wr, NULL, 0), STROBE_ETOKEN);
  /* One bit flipped inside: the checksum. */
  memcpy(bad, good, len);
  bad[len / 2] ^= 0x10;
  CHECK_EQ_INT(resume_status(sender, wr, bad, len), STROBE_ETOKEN);
  /* Not a token at all, and a token with bytes after it. */
  memcpy(bad, good, len);
  bad[0] = 'X';
  CHECK_EQ_INT(resume_status(sender, wr, bad, len), STROBE_ETOKEN);
  memcpy(bad, good, len);
  bad[len] = 0;
  CHECK_EQ_INT(resume_status(sender, wr, bad, len + 1), STROBE_ETOKEN);
  /* Another layout version (the one before this: no window id or population), well sealed. */
  memcpy(bad, good, len);
  bad[4] = (uint8_t)(STROBE_OP_TOKEN_VERSION - 1);
  reseal(bad, len);
  CHECK_EQ_INT(resume_status(sender, wr, bad, len), STROBE_ETOKEN);
  /* A kind that is no operation kind, well sealed. */
  memcpy(bad, good, len);
  bad[12] = 9;
  reseal(bad, len);
  CHECK_EQ_INT(resume_status(sender, wr, bad, len), STROBE_ETOKEN);
  /* Another boot (its clock is not ours), well sealed. */
  memcpy(bad, good, len);
  bad[16] ^= 0xff;
  reseal(bad, len);
  CHECK_EQ_INT(resume_status(sender, wr, bad, len), STROBE_EFOREIGN);
  /* A hand-off in our future on our own clock, well sealed. */
  memcpy(bad, good, len);
  bad[64 + 7] = 0x7f;
  reseal(bad, len);
  CHECK_EQ_INT(resume_status(sender, wr, bad, len), STROBE_ETOKEN);

  strobe_remote_stats st;
  CHECK_EQ_INT(strobe_collector_query_remote_stats(sender, &st), 0);
  CHECK_EQ_U64(st.resumed, 0);
  CHECK_EQ_U64(st.refused_truncated, 3);
  CHECK_EQ_U64(st.refused_corrupt, 1);
  CHECK_EQ_U64(st.refused_malformed, 4);
  CHECK_EQ_U64(st.refused_version, 1);
  CHECK_EQ_U64(st.refused_foreign, 1);

  /* The good one once; a second time it is a replay. */
  CHECK_EQ_INT(resume_status(sender, wr, good, len), 0);
  CHECK_EQ_INT(resume_status(sender, wr, good, len), STROBE_EREPLAY);
  /* Addressed to another process. */
  uint8_t other[STROBE_OP_TOKEN_MAX];
  size_t olen = screen_half(screen, ws, 10, "printer", other, sizeof other);
  CHECK_EQ_INT(resume_status(sender, wr, other, olen), STROBE_EFOREIGN);

  json_t *db;
  strobe_report *rb = su_end(sender, b, &db);
  CHECK_EQ_INT(jint(db, "cross_process.resumed"), 1);
  CHECK_EQ_INT(jint(db, "cross_process.refused_by.truncated"), 3);
  CHECK_EQ_INT(jint(db, "cross_process.refused_by.corrupt"), 1);
  CHECK_EQ_INT(jint(db, "cross_process.refused_by.malformed"), 4);
  CHECK_EQ_INT(jint(db, "cross_process.refused_by.version"), 1);
  CHECK_EQ_INT(jint(db, "cross_process.refused_by.foreign"), 2);
  CHECK_EQ_INT(jint(db, "cross_process.refused_by.replayed"), 1);
  CHECK_EQ_INT(jint(db, "cross_process.refused"), 12);
  /* Refusals add no sample: only the good token's frame is there. */
  CHECK_EQ_INT(jlen(db, "samples"), 1);
  json_decref(db);
  strobe_report_free(rb);
  release_pair(screen, sender);
}

/* Out of order is fine inside the window; older than it is refused as a possible replay. */
static void test_replay_window(void) {
  strobe_window ws, wr;
  strobe_collector *screen, *sender;
  pair(&screen, &ws, &sender, &wr);
  enum { N = STROBE_REMOTE_REPLAY_WINDOW + 4 };
  static uint8_t tokens[N][512];
  size_t lens[N];
  for (int i = 0; i < N; i++) {
    int st = -1;
    strobe_op op = strobe_op_begin(screen, ws, STROBE_OP_REQUEST, &st);
    REQUIRE_EQ_INT(st, 0);
    REQUIRE_EQ_INT(strobe_op_hand_off_remote(op, "sender", tokens[i], sizeof tokens[i], &lens[i]), 0);
  }
  CHECK_EQ_INT(resume_status(sender, wr, tokens[N - 1], lens[N - 1]), 0);
  CHECK_EQ_INT(resume_status(sender, wr, tokens[N - 2], lens[N - 2]), 0);                /* older, in the window */
  CHECK_EQ_INT(resume_status(sender, wr, tokens[N - STROBE_REMOTE_REPLAY_WINDOW], lens[N - STROBE_REMOTE_REPLAY_WINDOW]),
               0);                                                                       /* the oldest it holds */
  CHECK_EQ_INT(resume_status(sender, wr, tokens[N - 2], lens[N - 2]), STROBE_EREPLAY);   /* again */
  CHECK_EQ_INT(resume_status(sender, wr, tokens[0], lens[0]), STROBE_EREPLAY);           /* past the window */
  strobe_remote_stats st;
  CHECK_EQ_INT(strobe_collector_query_remote_stats(sender, &st), 0);
  CHECK_EQ_U64(st.resumed, 3);
  CHECK_EQ_U64(st.refused_replayed, 2);
  release_pair(screen, sender);
}

/* The hand-off's own refusals change nothing: the operation is still the caller's. */
static void test_hand_off_refusals(void) {
  strobe_window ws, wr;
  strobe_collector *screen, *sender;
  pair(&screen, &ws, &sender, &wr);
  char a[STROBE_SESSION_ID_MAX];
  su_start(screen, 0, a);
  int st = -1;
  strobe_op op = strobe_op_begin(screen, ws, STROBE_OP_PASS, &st);
  REQUIRE_EQ_INT(st, 0);
  uint8_t small[16], buf[STROBE_OP_TOKEN_MAX];
  size_t len = 0;
  CHECK_EQ_INT(strobe_op_hand_off_remote(op, "sender", small, sizeof small, &len), STROBE_ELIMIT);
  CHECK(len > sizeof small);
  CHECK_EQ_INT(strobe_op_hand_off_remote(op, "send er", buf, sizeof buf, &len), STROBE_ELABEL);
  CHECK_EQ_INT(strobe_op_hand_off_remote(op, "sender", NULL, sizeof buf, &len), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_op_hand_off_remote((strobe_op){0, screen}, "sender", buf, sizeof buf, &len), STROBE_EINVAL);
  /* Still running: a read shows it unfinished, and it hands off fine now. */
  json_t *d;
  strobe_report *r = su_read(screen, a, &d);
  CHECK_EQ_INT(jint(d, "counts.unfinished"), 1);
  json_decref(d);
  strobe_report_free(r);
  CHECK_EQ_INT(strobe_op_hand_off_remote(op, "sender", buf, sizeof buf, &len), 0);
  /* Ended here: a second hand-off of the same handle is refused. */
  CHECK_EQ_INT(strobe_op_hand_off_remote(op, "sender", buf, sizeof buf, &len), STROBE_EINVAL);
  /* An operation resumed from another process is handed on no further. */
  strobe_op in = strobe_op_resume_remote(sender, wr, buf, len, &st);
  REQUIRE_EQ_INT(st, 0);
  CHECK_EQ_INT(strobe_op_hand_off_remote(in, "screen", buf, sizeof buf, &len), STROBE_ESTATE);
  strobe_op_end(in, 1);
  strobe_report_free(su_end(screen, a, NULL));
  release_pair(screen, sender);
}

/* >>captures: both sides of the hand-off, joinable. */
/* Starts a capture into the case's directory; its path in path[512]. */
static strobe_recorder *start_capture(char path[512]) {
  snprintf(path, 512, "%s/x.strobe", case_temp_dir("remote"));
  strobe_recorder *rec = NULL;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  return rec;
}

static void test_captures_carry_both_sides(void) {
  char path[512];
  strobe_recorder *rec = start_capture(path);
  strobe_window ws, wr;
  strobe_collector *screen, *sender;
  pair(&screen, &ws, &sender, &wr);
  uint8_t buf[STROBE_OP_TOKEN_MAX];
  size_t len = screen_half(screen, ws, 12, "sender", buf, sizeof buf);
  fx_sleep_ms(6);
  REQUIRE_EQ_INT(sender_half(sender, wr, buf, len, 1), 0);
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);

  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  strobe_capture_record r;
  int rc, takes = 0, resumes = 0, ends = 0;
  uint64_t out_collector = 0, out_id = 0, in_collector = 0, in_id = 0;
  double origin_start = -1, origin_end = -1, finish_start = -1, finish_dur = 0, gap = -1, take_time = -1;
  int stages_both = 0;
  while ((rc = strobe_capture_next(cap, &r)) > 0) {
    const strobe_capture_op *op = r.op;
    if (r.type == STROBE_REC_OP_TAKE && op->remote) {
      takes++;
      CHECK_STR_EQ(op->peer, "sender");
      CHECK_STR_EQ(op->process, "screen");
      CHECK_EQ_U64(op->origin_pid, (uint64_t)getpid());
      out_collector = op->origin_collector;
      out_id = op->origin_id;
      take_time = r.time_ns;
    }
    if (r.type == STROBE_REC_OP_RESUME && op->remote) {
      resumes++;
      CHECK_STR_EQ(op->peer, "screen");
      CHECK_STR_EQ(op->process, "sender");
      in_collector = op->origin_collector;
      in_id = op->origin_id;
      gap = op->gap_ns;
    }
    if (r.type != STROBE_REC_OP_END || op->frame_id != 12) continue;
    ends++;
    if (!op->committed) { /* the origin's side, ending at the hand-off */
      origin_start = op->start_ns;
      origin_end = r.time_ns;
      continue;
    }
    finish_start = op->start_ns;
    finish_dur = op->duration_ns;
    int render = 0, encode = 0;
    for (uint32_t i = 0; i < op->nstages; i++) {
      const strobe_capture_site *site = strobe_capture_query_site(cap, op->stages[i].site);
      REQUIRE(site != NULL);
      render |= !strcmp(site->name, "render");
      encode |= !strcmp(site->name, "encode");
    }
    stages_both = render && encode;
  }
  CHECK_EQ_INT(rc, 0);
  strobe_capture_close(cap);
  CHECK_EQ_INT(takes, 1);
  CHECK_EQ_INT(resumes, 1);
  CHECK_EQ_INT(ends, 2);
  /* What a merge joins the two sides by. */
  CHECK(out_collector != 0);
  CHECK_EQ_U64(in_collector, out_collector);
  CHECK_EQ_U64(in_id, out_id);
  /* One clock: the finisher's frame starts where the origin's did, and spans the gap. */
  CHECK_NEAR(finish_start, origin_start, 2000.0);
  CHECK_NEAR(take_time, origin_end, 1.0);
  CHECKF(gap >= 6e6, "gap %.0f ns", gap);
  CHECK(finish_dur >= (origin_end - origin_start) + gap);
  CHECK(stages_both);
  release_pair(screen, sender);
}

/* >>one frame: window, frame id and population travel with the operation. */
static uint64_t passes_of(strobe_collector *c, const char *window) {
  strobe_window_info infos[STROBE_MAX_WINDOWS];
  int n = strobe_collector_query_windows(c, infos, STROBE_MAX_WINDOWS);
  for (int i = 0; i < n && i < STROBE_MAX_WINDOWS; i++)
    if (!strcmp(infos[i].id, window)) return infos[i].passes;
  return UINT64_MAX;
}

static void test_window_and_population_travel(void) {
  char path[512];
  strobe_recorder *rec = start_capture(path);
  strobe_window ws, wr;
  strobe_collector *screen, *sender;
  pair(&screen, &ws, &sender, &wr); /* both windows are "main" */
  strobe_window link = su_window(sender, "link", 0); /* the finisher runs it under a window of another name */
  char b[STROBE_SESSION_ID_MAX];
  su_start(sender, 0, b);
  int st = -1;
  strobe_op op = strobe_op_begin_frame(screen, ws, 33, &st);
  REQUIRE_EQ_INT(st, 0);
  CHECK_EQ_INT(strobe_op_set_population("scroll"), 0);
  {
    strobe_stage render = strobe_stage_begin(&g_render);
    CHECK_EQ_INT(strobe_stage_end(&render), 0);
  }
  uint8_t buf[STROBE_OP_TOKEN_MAX];
  size_t len = 0;
  strobe_op taken = strobe_op_take();
  CHECK_EQ_U64(taken.id, op.id);
  REQUIRE_EQ_INT(strobe_op_hand_off_remote(taken, "sender", buf, sizeof buf, &len), 0);
  REQUIRE_EQ_INT(sender_half(sender, link, buf, len, 1), 0);
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
  json_t *db;
  strobe_report *rb = su_end(sender, b, &db);
  REQUIRE_EQ_INT(jlen(db, "samples"), 1);
  json_t *s = json_array_get(jreq(db, "samples"), 0);
  CHECK_STR_EQ(jstr(s, "window"), "main");
  CHECK_EQ_U64(jint(s, "frame_id"), 33);
  CHECK_STR_EQ(jstr(s, "population"), "scroll");
  CHECK_STR_EQ(jstr(json_array_get(jreq(db, "frame_rate.by_window"), 0), "window"), "main");
  /* Begun once, in the screen: no pass begun on either of the finisher's windows. */
  CHECK_EQ_U64(passes_of(screen, "main"), 1);
  CHECK_EQ_U64(passes_of(sender, "link"), 0);
  CHECK_EQ_U64(passes_of(sender, "main"), 0);
  json_decref(db);
  strobe_report_free(rb);
  /* The capture names the finisher's side by the same window. */
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  strobe_capture_record r;
  int ends = 0;
  while (strobe_capture_next(cap, &r) > 0)
    if (r.type == STROBE_REC_OP_END && r.op->frame_id == 33) {
      ends++;
      CHECK_STR_EQ(r.op->window, "main");
    }
  strobe_capture_close(cap);
  CHECK_EQ_INT(ends, 2);
  release_pair(screen, sender);
}

/* Between two threads of one process: the same operation, one sample, its population kept. */
static void *resume_and_end(void *arg) {
  strobe_op *op = arg;
  strobe_op_resume(*op);
  STROBE_STAGE("encode", NULL);
  strobe_op_end(*op, 1);
  return NULL;
}

static void test_thread_hand_off_keeps_population(void) {
  strobe_window w;
  strobe_collector *c = su_collector(&w);
  char id[STROBE_SESSION_ID_MAX];
  su_start(c, 0, id);
  strobe_op op = strobe_op_begin_frame(c, w, 8, NULL);
  CHECK_EQ_INT(strobe_op_set_population("edit"), 0);
  strobe_op taken = strobe_op_take();
  CHECK_EQ_U64(taken.id, op.id);
  pthread_t th;
  REQUIRE_EQ_INT(pthread_create(&th, NULL, resume_and_end, &taken), 0);
  pthread_join(th, NULL);
  json_t *doc;
  strobe_report_free(su_end(c, id, &doc));
  CHECK_EQ_INT(jint(doc, "counts.completed"), 1);
  REQUIRE_EQ_INT(jlen(doc, "samples"), 1);
  json_t *s = json_array_get(jreq(doc, "samples"), 0);
  CHECK(jbool(s, "handed_off"));
  CHECK_STR_EQ(jstr(s, "population"), "edit");
  CHECK_STR_EQ(jstr(s, "window"), "main");
  CHECK_EQ_U64(jint(s, "frame_id"), 8);
  CHECK_EQ_INT(jint(doc, "frame_rate.passes"), 1);
  json_decref(doc);
  strobe_collector_release(c);
}

#define CASES(X)                                                                                             \
  X(frame_across_collectors) X(dropped_by_the_finisher) X(frame_across_processes) X(bad_tokens_refused_and_counted) \
  X(replay_window) X(hand_off_refusals) X(captures_carry_both_sides) X(window_and_population_travel)             \
  X(thread_hand_off_keeps_population)
HARNESS_MAIN(CASES)
