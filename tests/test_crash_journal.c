/*
 * test_crash_journal.c — the crash journal's edges (docs/recording.md §Crash
 * journal): a clean stop removes it; a journal of another run, a cut-short
 * one and hostile ones are refused with a clear error, leave the capture as it
 * was and never crash the reader; a journal that cannot be made (a file size
 * limit standing for a full disk) leaves the capture recording without one and
 * saying so; a forked child never writes into its parent's journal; a second
 * capture and the flight recorder keep none. tests/test_crash_loss.c checks
 * that nothing is lost.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe/probe.h"
#include "support/fixtures.h"
#include "support/harness.h"
#include "strobe/capture.h"
#include "strobe/flight.h"
#include "strobe/gpu.h"
#include "strobe/session.h"
#include "strobe/record.h"
#include "strobe/strobe.h"

static void journal_of(const char *path, char *out, size_t n) { snprintf(out, n, "%s.journal", path); }

/* One site each, wherever they are called from: the drain meets it at the first call's pass. */
static void units(int n) {
  for (int i = 0; i < n; i++) {
    STROBE_SCOPE("unit");
  }
}

static void child_units(int n) {
  for (int i = 0; i < n; i++) {
    STROBE_SCOPE("child_unit");
  }
}

static int exists(const char *path) { return access(path, F_OK) == 0; }

/* A child that starts a capture at a new temporary path, runs body(rec, a, b) and is killed: a capture cut
 * short with its journal beside it. */
static void crashed_by(char *path, size_t n, void (*body)(strobe_recorder *rec, int a, int b), int a, int b) {
  REQUIRE(fx_temp_file(path, n, "journal") == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    strobe_recorder *rec;
    if (strobe_record_start(&(strobe_record_desc){.path = path}, &rec)) _exit(2);
    body(rec, a, b);
    kill(getpid(), SIGKILL);
    _exit(4);
  }
  int status;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

/* crashed_by, then strobe_capture_recover in place: its figures. path and jpath get the two files' names. */
static strobe_capture_recovery recovered_after(char path[64], char jpath[80],
                                               void (*body)(strobe_recorder *rec, int a, int b), int a, int b) {
  strobe_capture_recovery st = {0};
  crashed_by(path, 64, body, a, b);
  journal_of(path, jpath, 80);
  CHECK_EQ_INT(strobe_capture_recover(path, path, &st), 0);
  return st;
}

/* `before` scopes, a flush, `after` more. */
static void flushed_then(strobe_recorder *rec, int before, int after) {
  units(before);
  if (strobe_record_flush(rec)) _exit(3);
  units(after);
}

static void crashed_capture(char *path, size_t n, int before, int after) {
  crashed_by(path, n, flushed_then, before, after);
}

/* Scopes whose END names the site `name` (NULL: any). */
static uint64_t ends_named(const char *path, const char *name) {
  strobe_capture *cap;
  if (strobe_capture_open(path, &cap)) return UINT64_MAX;
  strobe_capture_record r;
  uint64_t n = 0;
  while (strobe_capture_next(cap, &r) > 0) {
    if (r.type != STROBE_REC_END) continue;
    const strobe_capture_site *s = strobe_capture_query_site(cap, r.site);
    n += !name || (s && strcmp(s->name, name) == 0);
  }
  strobe_capture_close(cap);
  return n;
}

static uint64_t scopes_in(const char *path) { return ends_named(path, NULL); }

static uint8_t *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *len = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *p = malloc(*len ? *len : 1);
  if (p && fread(p, 1, *len, f) != *len) {
    free(p);
    p = NULL;
  }
  fclose(f);
  return p;
}

static void spit(const char *path, const uint8_t *p, size_t len) {
  FILE *f = fopen(path, "wb");
  REQUIRE(f != NULL);
  REQUIRE(fwrite(p, 1, len, f) == len);
  fclose(f);
}

/* Runs fn on a thread of its own that then exits: the test process's main thread never records, so the
 * children other cases fork inherit no thread state from an earlier capture (docs/recording.md §Crash
 * journal: such a thread stays outside a later journal). */
static void *run_fn(void *arg) {
  ((void (*)(void))arg)();
  return NULL;
}

static void on_own_thread(void (*fn)(void)) {
  pthread_t th;
  REQUIRE(pthread_create(&th, NULL, run_fn, (void *)fn) == 0);
  pthread_join(th, NULL);
}

static void clean_stop_removes_journal(void) {
  char path[64], jpath[80];
  REQUIRE(fx_temp_file(path, sizeof path, "journal") == 0);
  journal_of(path, jpath, sizeof jpath);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  CHECK(exists(jpath));
  /* One journal per process: a second capture records without one and says why. */
  char path2[64], jpath2[80];
  REQUIRE(fx_temp_file(path2, sizeof path2, "journal") == 0);
  journal_of(path2, jpath2, sizeof jpath2);
  strobe_recorder *rec2;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path2}, &rec2), 0);
  CHECK(!exists(jpath2));
  CHECK_EQ_INT(strobe_record_stop(rec2), 0);
  units(1); /* this thread attaches now: in the journal */
  CHECK_EQ_INT(strobe_record_stop(rec), 0);
  CHECK(!exists(jpath));
  /* The next capture's journal cannot hold it: it attached under the first one, and the header says so. */
  char path3[64];
  REQUIRE(fx_temp_file(path3, sizeof path3, "journal") == 0);
  strobe_recorder *rec3;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path3}, &rec3), 0);
  units(1);
  CHECK_EQ_INT(strobe_record_stop(rec3), 0);
  strobe_capture *c3;
  REQUIRE_EQ_INT(strobe_capture_open(path3, &c3), 0);
  printf("journal: %s\n", strobe_capture_query_header(c3)->journal);
  const char *note = strobe_capture_query_header(c3)->journal; /* "on", qualified (docs/capture-format.md) */
  CHECK(strncmp(note, "on", 2) == 0 && strcmp(note, "on") != 0);
  strobe_capture_close(c3);
  unlink(path3);
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path2, &cap), 0);
  CHECK(strncmp(strobe_capture_query_header(cap)->journal, "off: ", 5) == 0);
  CHECK_EQ_U64(strobe_capture_query_header(cap)->journal_id, 0);
  strobe_capture_close(cap);
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  CHECK(strobe_capture_query_header(cap)->journal_id != 0);
  strobe_capture_close(cap);
  unlink(path);
  unlink(path2);
}

static void test_foreign_journal_refused(void) {
  char a[64], b[64], ja[80], jb[80];
  crashed_capture(a, sizeof a, 100, 50);
  crashed_capture(b, sizeof b, 100, 50);
  journal_of(a, ja, sizeof ja);
  journal_of(b, jb, sizeof jb);
  REQUIRE(rename(jb, ja) == 0); /* b's journal beside a */
  size_t before_len, after_len;
  uint8_t *before = slurp(a, &before_len);
  CHECK_EQ_INT(strobe_capture_recover(a, a, NULL), STROBE_EFOREIGN);
  uint8_t *after = slurp(a, &after_len);
  CHECK(before && after && before_len == after_len && memcmp(before, after, before_len) == 0);
  free(before);
  free(after);
  unlink(ja);
  CHECK_EQ_INT(strobe_capture_recover(a, a, NULL), STROBE_ENOTFOUND);
  unlink(a);
  unlink(b);
}

/* One damaged journal: recovery refuses it with `want` (or, for the random ones, any error or a file that
 * reads), leaves the capture as it was, and never crashes. */
static void try_damaged(const char *path, const char *jpath, const uint8_t *j, size_t len, int want,
                        const uint8_t *cap0, size_t cap0_len) {
  spit(jpath, j, len);
  char out[96];
  snprintf(out, sizeof out, "%s.out", path);
  int rc = strobe_capture_recover(path, out, NULL);
  if (want) CHECK_EQ_INT(rc, want);
  if (rc == 0) {
    CHECK(scopes_in(out) != UINT64_MAX);
  } else {
    CHECK(!exists(out));
  }
  unlink(out);
  size_t l;
  uint8_t *now = slurp(path, &l);
  CHECK(now && l == cap0_len && memcmp(now, cap0, l) == 0);
  free(now);
}

static void test_damaged_journal_refused(void) {
  char path[64], jpath[80];
  crashed_capture(path, sizeof path, 2000, 1000);
  journal_of(path, jpath, sizeof jpath);
  size_t len, cap_len;
  uint8_t *j = slurp(jpath, &len), *cap = slurp(path, &cap_len);
  REQUIRE(j && cap && len > sizeof(strobe__journal_head));
  uint8_t *m = malloc(len);
  REQUIRE(m != NULL);
  strobe__journal_head *h = (strobe__journal_head *)m;
  try_damaged(path, jpath, j, 100, STROBE_ETRUNCATED, cap, cap_len);
  memcpy(m, j, len);
  m[0] ^= 1;
  try_damaged(path, jpath, m, len, STROBE_EBADMAGIC, cap, cap_len);
  memcpy(m, j, len);
  h->version = 99;
  try_damaged(path, jpath, m, len, STROBE_EVERSION, cap, cap_len);
  memcpy(m, j, len);
  h->log_len = len; /* past the file */
  try_damaged(path, jpath, m, len, STROBE_ECORRUPT, cap, cap_len);
  /* Cut inside the thread's region: its ring lies past the end. */
  REQUIRE(h->regions >= 1);
  memcpy(m, j, len);
  try_damaged(path, jpath, m, (size_t)h->region[0].offset + 4096, STROBE_ECORRUPT, cap, cap_len);
  memcpy(m, j, len);
  h->region[0].base ^= 0x100000; /* every pointer of the state now lies outside its region */
  try_damaged(path, jpath, m, len, STROBE_ECORRUPT, cap, cap_len);
  memcpy(m, j, len);
  strobe__tstate *t = (strobe__tstate *)(m + h->region[0].offset);
  t->jmark[t->jmark_cur & 1].count += 3; /* the file would hold less than was released */
  try_damaged(path, jpath, m, len, STROBE_ECORRUPT, cap, cap_len);
  memcpy(m, j, len);
  uint32_t *rec = (uint32_t *)(m + h->log_offset);
  rec[0] = 0xfffffff8u; /* a log record longer than the log */
  try_damaged(path, jpath, m, len, STROBE_ECORRUPT, cap, cap_len);
  /* Random damage to the head, the log and the state: an error or a file that reads, never a crash. */
  srand(7);
  size_t state_end = (size_t)h->region[0].offset + sizeof(strobe__tstate);
  for (int i = 0; i < 300; i++) {
    memcpy(m, j, len);
    for (int k = 0; k < 1 + i % 4; k++) {
      size_t at = (size_t)rand() % (i % 2 ? sizeof *h + 4096 : state_end);
      if (at >= (size_t)h->log_offset + 4096 && at < (size_t)h->region[0].offset) continue; /* the unused log */
      m[at] ^= (uint8_t)(1u << (rand() % 8));
    }
    try_damaged(path, jpath, m, len, 0, cap, cap_len);
  }
  /* The intact journal still recovers. */
  try_damaged(path, jpath, j, len, 0, cap, cap_len);
  CHECK_EQ_INT(strobe_capture_recover(path, path, NULL), 0);
  CHECK_EQ_U64(scopes_in(path), 3000);
  free(m);
  free(j);
  free(cap);
  unlink(jpath);
  unlink(path);
}

/* A temporary capture path, its journal's, and a child forked to record there (pid 0 in the child). */
static pid_t fork_at_temp(char path[64], char jpath[80]) {
  REQUIRE(fx_temp_file(path, 64, "journal") == 0);
  journal_of(path, jpath, 80);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  return pid;
}

/* A journal that cannot be made (here a file size limit, as a full disk would): the capture records as
 * before and its header says so. */
static void test_journal_refused_by_disk_records_without(void) {
  char path[64], jpath[80];
  pid_t pid = fork_at_temp(path, jpath);
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {16384, 16384}; /* the journal's head alone is larger */
    setrlimit(RLIMIT_FSIZE, &lim);
    strobe_recorder *rec;
    if (strobe_record_start(&(strobe_record_desc){.path = path}, &rec)) _exit(2);
    for (int i = 0; i < 50; i++) {
      STROBE_SCOPE("unit");
    }
    _exit(strobe_record_stop(rec) ? 3 : exists(jpath) ? 4 : 0);
  }
  int status;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK(!exists(jpath));
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  const strobe_capture_header *h = strobe_capture_query_header(cap);
  printf("journal: %s\n", h->journal);
  CHECK(strncmp(h->journal, "off: ", 5) == 0);
  CHECK_EQ_U64(h->journal_id, 0);
  strobe_capture_close(cap);
  CHECK_EQ_U64(scopes_in(path), 50);
  unlink(path);
}

/* A child forked while its parent records writes its scopes into its own copy of the parent's thread
 * state: none of them reaches the parent's journal. */
static void forks_a_recording_child(strobe_recorder *rec, int a, int b) {
  (void)a, (void)b;
  units(100);
  child_units(1); /* its site too is met by the drain, so a child's scopes would be named */
  if (strobe_record_flush(rec)) _exit(3);
  pid_t c = fork();
  if (c == 0) {
    child_units(5000);
    _exit(0);
  }
  waitpid(c, NULL, 0);
  units(10);
}

static void test_fork_child_never_writes_parent_journal(void) {
  char path[64], jpath[80];
  strobe_capture_recovery st = recovered_after(path, jpath, forks_a_recording_child, 0, 0);
  CHECK(exists(jpath)); /* the child never removed it */
  CHECK_EQ_U64(st.unrecoverable, 0);
  CHECK_EQ_U64(ends_named(path, "unit"), 110);
  CHECK_EQ_U64(ends_named(path, "child_unit"), 1);
  unlink(jpath);
  unlink(path);
}

/* A scope first entered after the drain's last pass (a crash on a new code path): its site is not in the
 * log, so it is recovered on the placeholder site with what nests in it, and its number is counted. */
static void enters_a_new_scope(strobe_recorder *rec, int a, int b) {
  (void)a, (void)b;
  units(100);
  if (strobe_record_flush(rec)) _exit(3);
  STROBE_SCOPE("fresh");
  STROBE_VALUE("fresh_value", 1.0);
  units(5);
  kill(getpid(), SIGKILL); /* inside "fresh" */
}

static void test_site_never_met_recovered_unnamed(void) {
  char path[64], jpath[80];
  strobe_capture_recovery st = recovered_after(path, jpath, enters_a_new_scope, 0, 0);
  CHECK_EQ_U64(st.unnamed, 1);
  CHECK_EQ_U64(st.unrecoverable, 2); /* the value: a number and its payload slot */
  CHECK_EQ_U64(st.events, 1 + 5 * 2);
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  strobe_capture_record r;
  uint64_t named = 0, nested = 0;
  int rc;
  while ((rc = strobe_capture_next(cap, &r)) > 0) {
    if (r.type != STROBE_REC_END) continue;
    const strobe_capture_site *s = strobe_capture_query_site(cap, r.site);
    named += s && strcmp(s->name, "unit") == 0;
    nested += s && strcmp(s->name, "unit") == 0 && r.depth == 2;
  }
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_U64(named, 105);
  CHECK_EQ_U64(nested, 5); /* inside the placeholder scope, still open at the crash */
  strobe_capture_totals t = strobe_capture_query_totals(cap);
  CHECK_EQ_U64(t.unfinished, 1);
  strobe_capture_close(cap);
  unlink(jpath);
  unlink(path);
}

/* The recovery rule at the two instants a crash could double or drop events: the capture wrote a pass's
 * events but not its JOURNAL_POS block (point 1: those blocks are replaced by the journal's events), or it
 * wrote the block and the drain had not yet released the slots (point 2: the journal's events are skipped
 * up to it). Either way every scope is there once. */
static void dies_at(strobe_recorder *rec, int point, int flight) {
  strobe_flight_recorder *fr; /* a second consumer: the drain converts every event itself, in a copy */
  if (flight && strobe_flight_recorder_start(&(strobe_flight_recorder_desc){0}, &fr)) _exit(5);
  flushed_then(rec, 1000, 700);
  /* The drain's next pass that delivers events dies there (atomic: the drain thread reads it). */
  __atomic_store_n(&strobe__journal_die_at, point, __ATOMIC_RELAXED);
  strobe_record_flush(rec);
}

static void die_at(int point, int flight) {
  char path[64], jpath[80];
  strobe_capture_recovery st = recovered_after(path, jpath, dies_at, point, flight);
  printf("died at point %d: recovery added %llu slots, replaced %llu blocks\n", point, (unsigned long long)st.events,
         (unsigned long long)st.replaced_blocks);
  CHECK_EQ_U64(scopes_in(path), 1700);
  CHECK_EQ_U64(st.unrecoverable, 0);
  unlink(jpath);
  unlink(path);
}

/* Operations and GPU events are in the rings too: recovery adds them, as the drain passes them on, when the
 * log names every label and site they name (docs/recording.md §Crash journal). Frames 1..10 are flushed
 * (their window, stage, counter and instant met), then 11..60 are in the pass that dies before its
 * JOURNAL_POS block: those come from the journal. */
static void frames(strobe_collector *col, strobe_window w, uint64_t from, uint64_t to) {
  for (uint64_t id = from; id <= to; id++) {
    strobe_op op = strobe_op_begin_frame(col, w, id, NULL);
    {
      STROBE_STAGE("layout", NULL);
      strobe_op_counter_add("glyphs", 3);
    }
    if (strobe_gpu_frame_mark(id, STROBE_GPU_CPU_END, 0)) _exit(6);
    strobe_op_end(op, 1);
  }
}

static void records_frames_then_dies(strobe_recorder *rec, int a, int b) {
  (void)a, (void)b;
  strobe_collector *col;
  strobe_window w;
  if (strobe_collector_create(&col) || strobe_window_register(col, "main", 0, &w)) _exit(5);
  frames(col, w, 1, 10);
  if (strobe_record_flush(rec)) _exit(3);
  /* The next pass that delivers events dies after writing them, before JOURNAL_POS. */
  __atomic_store_n(&strobe__journal_die_at, 1, __ATOMIC_RELAXED);
  frames(col, w, 11, 60);
  strobe_record_flush(rec);
}

static void test_operations_recovered(void) {
  char path[64], jpath[80];
  strobe_capture_recovery st = recovered_after(path, jpath, records_frames_then_dies, 0, 0);
  printf("operations: recovery added %llu slots, %llu unrecoverable\n", (unsigned long long)st.events,
         (unsigned long long)st.unrecoverable);
  CHECK_EQ_U64(st.unrecoverable, 0);
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  strobe_capture_record r;
  int rc;
  uint64_t ends = 0, marks = 0, ids = 0, stages = 0;
  while ((rc = strobe_capture_next(cap, &r)) > 0) {
    if (r.type == STROBE_REC_OP_END) {
      ends++;
      ids += r.op->frame_id;
      stages += r.op->nstages == 1;
    }
    marks += r.type == STROBE_REC_GPU_MARK;
  }
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_U64(ends, 60);
  CHECK_EQ_U64(ids, 60 * 61 / 2); /* each frame once */
  CHECK_EQ_U64(stages, 60);
  CHECK_EQ_U64(marks, 60);
  strobe_capture_close(cap);
  unlink(jpath);
  unlink(path);
}

/* A thread that records (into a flight recorder) before the capture starts, with a scope open across the
 * start: it joins the journal at its next event, its state mapped over itself, so the open scope's guard
 * still matches (no misuse counted when it closes, else the child exits 6). The scopes after the join come
 * back from the journal (the pass that writes the last 50 dies before its JOURNAL_POS block). */
static void test_thread_joins_with_a_scope_open(void) {
  char path[64], jpath[80];
  pid_t pid = fork_at_temp(path, jpath);
  if (pid == 0) {
    strobe_flight_recorder *fr;
    if (strobe_flight_recorder_start(&(strobe_flight_recorder_desc){0}, &fr)) _exit(2);
    strobe_recorder *rec = NULL;
    {
      STROBE_SCOPE("outer");
      units(10); /* attached, on the heap: no journal yet */
      if (strobe_record_start(&(strobe_record_desc){.path = path}, &rec)) _exit(3);
      units(100); /* the first of these joins the journal */
      if (strobe__journal_holds((strobe__tstate *)strobe__tls) != 1) _exit(4);
      if (strobe_record_flush(rec)) _exit(5);
      __atomic_store_n(&strobe__journal_die_at, 1, __ATOMIC_RELAXED);
      units(50);
    }
    strobe_misuse m = strobe_query_misuse();
    if (m.unbalanced || m.end_without_begin) _exit(6); /* the guards matched */
    strobe_record_flush(rec);
    for (;;) pause(); /* the drain dies at point 1 */
  }
  int status;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECKF(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "status %#x", status);
  strobe_capture_recovery st = {0};
  REQUIRE_EQ_INT(strobe_capture_recover(path, path, &st), 0);
  CHECK_EQ_U64(st.unrecoverable, 0);
  CHECK(st.threads >= 1);
  CHECK_EQ_U64(ends_named(path, "unit"), 150); /* (outer's END closes a scope the capture never saw begin) */
  unlink(jpath);
  unlink(path);
}

/* A thread that exits just before the crash: its last events and its end are in the file, its region is
 * not freed yet. Recovery adds nothing to it, and the file still reads (no thread defined after its end). */
static void *exiting_thread(void *arg) {
  (void)arg;
  units(100);
  return NULL;
}

static void thread_exits_then_dies(strobe_recorder *rec, int a, int b) {
  (void)a, (void)b;
  units(10);
  if (strobe_record_flush(rec)) _exit(3);
  /* After the JOURNAL_POS covering its end, before its region is freed. */
  __atomic_store_n(&strobe__journal_die_at, 3, __ATOMIC_RELAXED);
  pthread_t th;
  if (pthread_create(&th, NULL, exiting_thread, NULL)) _exit(5);
  pthread_join(th, NULL);
  strobe_record_flush(rec);
}

static void test_thread_ended_before_death(void) {
  char path[64], jpath[80];
  strobe_capture_recovery st = recovered_after(path, jpath, thread_exits_then_dies, 0, 0);
  CHECK_EQ_U64(st.threads, 2); /* the ended thread's region was still there */
  CHECK_EQ_U64(st.events, 0);
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  strobe_capture_record r;
  int rc, ends = 0;
  while ((rc = strobe_capture_next(cap, &r)) > 0) ends += r.type == STROBE_REC_THREAD_END;
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_INT(ends, 1);
  strobe_capture_close(cap);
  CHECK_EQ_U64(scopes_in(path), 110);
  unlink(jpath);
  unlink(path);
}

static void test_death_before_journal_pos(void) { die_at(1, 0); }
static void test_death_before_release(void) { die_at(2, 0); }
static void test_death_before_journal_pos_two_consumers(void) { die_at(1, 1); }

/* The flight recorder is memory-only: it keeps no journal. */
static void flight_recorder_keeps_none(void) {
  strobe_flight_recorder *fr;
  REQUIRE_EQ_INT(strobe_flight_recorder_start(&(strobe_flight_recorder_desc){0}, &fr), 0);
  for (int i = 0; i < 100; i++) {
    STROBE_SCOPE("unit");
  }
  CHECK_EQ_U64(strobe__journal_id(), 0);
  char dir[64], dump[96], jdump[112];
  REQUIRE(fx_temp_dir(dir, sizeof dir, "journal") == 0);
  snprintf(dump, sizeof dump, "%s/dump.strobe", dir);
  journal_of(dump, jdump, sizeof jdump);
  CHECK_EQ_INT(strobe_flight_recorder_dump(fr, dump), 0);
  CHECK(!exists(jdump));
  CHECK_EQ_INT(strobe_flight_recorder_stop(fr), 0);
  unlink(dump);
  rmdir(dir);
}

static void test_clean_stop_removes_journal(void) { on_own_thread(clean_stop_removes_journal); }
static void test_flight_recorder_keeps_none(void) { on_own_thread(flight_recorder_keeps_none); }

/* The cases that record in this process come last: its drain thread then runs, and a child forked while
 * it holds its lock could not start a capture. */
#define CASES(X)                                   \
  X(foreign_journal_refused)                       \
  X(damaged_journal_refused)                       \
  X(journal_refused_by_disk_records_without)       \
  X(fork_child_never_writes_parent_journal)        \
  X(site_never_met_recovered_unnamed)              \
  X(death_before_journal_pos)                      \
  X(death_before_release)                          \
  X(death_before_journal_pos_two_consumers)        \
  X(thread_ended_before_death)                     \
  X(operations_recovered)                          \
  X(thread_joins_with_a_scope_open)                \
  X(clean_stop_removes_journal)                    \
  X(flight_recorder_keeps_none)
HARNESS_MAIN(CASES)
