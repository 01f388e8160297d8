/*
 * test_memory.c — allocations and messages through a real capture
 * (strobe.h >>allocations and >>messages, docs/memory.md):
 *   - N allocations of known sizes and their frees come back from the file
 *     as ALLOC and FREE records of their pool, each with its address and
 *     size, in the order the thread made them; NULL records nothing;
 *   - allocations from several threads at once all arrive, none twice;
 *   - a static message and a run-time one come back with their text, the
 *     run-time one flagged as content (STROBE_SITE_INTERNED);
 *   - with nothing recording the macros record nothing;
 *   - a child of fork() keeps allocating without a drain and exits cleanly,
 *     and the parent's capture still holds the parent's events.
 * It never asserts a time.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/strobe.h"
#include "support/fixtures.h"
#include "support/harness.h"

static strobe_recorder *start(char *path, size_t cap, const char *tag) {
  REQUIRE(fx_temp_file(path, cap, tag) == 0);
  strobe_recorder *rec = NULL;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  return rec;
}

/* What a capture holds of allocations, frees and messages. */
typedef struct tally {
  uint64_t allocs, frees, bytes, freed_addresses;
  uint64_t alloc_addr[64], alloc_size[64];
  uint32_t nalloc_kept;
  uint64_t messages, interned_messages;
  char text[4][64];
} tally;

static void read_tally(const char *path, const char *pool, tally *t) {
  memset(t, 0, sizeof *t);
  strobe_capture *c = NULL;
  REQUIRE_EQ_INT(strobe_capture_open(path, &c), 0);
  strobe_capture_record r;
  int rc;
  while ((rc = strobe_capture_next(c, &r)) > 0) {
    const strobe_capture_site *s = r.type == STROBE_REC_ALLOC || r.type == STROBE_REC_FREE || r.type == STROBE_REC_MESSAGE
                                       ? strobe_capture_query_site(c, r.site)
                                       : NULL;
    if (!s) continue;
    if (r.type == STROBE_REC_MESSAGE) {
      if (t->messages < 4) snprintf(t->text[t->messages], sizeof t->text[0], "%s", s->name);
      t->messages++;
      t->interned_messages += (s->flags & STROBE_SITE_INTERNED) != 0;
      continue;
    }
    if (strcmp(s->name, pool)) continue;
    if (r.type == STROBE_REC_ALLOC) {
      CHECK_EQ_INT(s->kind, STROBE_SITE_ALLOC);
      if (t->nalloc_kept < 64) {
        t->alloc_addr[t->nalloc_kept] = r.address;
        t->alloc_size[t->nalloc_kept++] = r.bytes;
      }
      t->allocs++;
      t->bytes += r.bytes;
    } else {
      CHECK_EQ_INT(s->kind, STROBE_SITE_FREE);
      t->frees++;
      t->freed_addresses += r.address;
    }
  }
  CHECK_EQ_INT(rc, 0);
  strobe_capture_close(c);
}

/* >>known counts */
static void test_allocations_read_back(void) {
  char path[64];
  strobe_recorder *rec = start(path, sizeof path, "mem");
  enum { N = 40 };
  void *p[N];
  uint64_t want_bytes = 0, want_freed = 0;
  for (int i = 0; i < N; i++) {
    size_t size = 16u * (size_t)(i + 1);
    p[i] = malloc(size);
    REQUIRE(p[i] != NULL);
    STROBE_ALLOC(p[i], size, "test_pool");
    want_bytes += size;
  }
  STROBE_ALLOC((void *)0, 100, "test_pool"); /* a failed allocation: nothing */
  for (int i = 0; i < N - 1; i++) { /* the last one stays live: a leak of 16 * N bytes */
    STROBE_FREE(p[i], "test_pool");
    want_freed += (uint64_t)(uintptr_t)p[i];
    free(p[i]);
  }
  STROBE_FREE((void *)0, "test_pool");
  CHECK_EQ_INT(strobe_record_stop(rec), 0);
  tally t;
  read_tally(path, "test_pool", &t);
  CHECK_EQ_U64(t.allocs, N);
  CHECK_EQ_U64(t.bytes, want_bytes);
  CHECK_EQ_U64(t.frees, N - 1);
  CHECK_EQ_U64(t.freed_addresses, want_freed);
  for (uint32_t i = 0; i < t.nalloc_kept; i++) {
    CHECK_EQ_U64(t.alloc_addr[i], (uint64_t)(uintptr_t)p[i]);
    CHECK_EQ_U64(t.alloc_size[i], 16u * (i + 1));
  }
  free(p[N - 1]);
  unlink(path);
}

enum { THREADS = 4, PER_THREAD = 5000 };
static void *worker(void *arg) {
  (void)arg;
  for (int i = 0; i < PER_THREAD; i++) {
    void *q = malloc(24);
    STROBE_ALLOC(q, 24, "mt_pool");
    STROBE_FREE(q, "mt_pool");
    free(q);
  }
  return NULL;
}

/* Four threads at once, 15000 events each: the default ring (256 Ki
 * events) holds them all, so every one arrives, once. */
static void test_threads_lose_nothing(void) {
  char path[64];
  strobe_recorder *rec = start(path, sizeof path, "memmt");
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++) REQUIRE_EQ_INT(pthread_create(&th[i], NULL, worker, NULL), 0);
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  CHECK_EQ_INT(strobe_record_stop(rec), 0);
  tally t;
  read_tally(path, "mt_pool", &t);
  CHECK_EQ_U64(strobe_query_event_stats().events_lost, 0);
  CHECK_EQ_U64(t.allocs, (uint64_t)THREADS * PER_THREAD);
  CHECK_EQ_U64(t.frees, (uint64_t)THREADS * PER_THREAD);
  CHECK_EQ_U64(t.bytes, 24ull * THREADS * PER_THREAD);
  unlink(path);
}

/* >>messages */
static void test_messages_read_back(void) {
  char path[64];
  strobe_recorder *rec = start(path, sizeof path, "msg");
  STROBE_MESSAGE("cache warmed");
  char run_time[32];
  int n = snprintf(run_time, sizeof run_time, "loaded %d items", 42);
  STROBE_MESSAGE_TEXT(run_time, (size_t)n);
  CHECK_EQ_INT(strobe_record_stop(rec), 0);
  tally t;
  read_tally(path, "-", &t);
  CHECK_EQ_U64(t.messages, 2);
  CHECK_EQ_U64(t.interned_messages, 1);
  CHECK(strcmp(t.text[0], "cache warmed") == 0);
  CHECK(strcmp(t.text[1], "loaded 42 items") == 0);
  unlink(path);
}

/* >>idle: nothing recording, nothing recorded (and nothing attached). */
static void test_idle_records_nothing(void) {
  strobe_event_stats before = strobe_query_event_stats();
  void *q = malloc(8);
  STROBE_ALLOC(q, 8, "idle_pool");
  STROBE_FREE(q, "idle_pool");
  STROBE_MESSAGE("idle");
  free(q);
  strobe_event_stats after = strobe_query_event_stats();
  CHECK_EQ_U64(after.events_written, before.events_written);
}

/* >>fork: the child has no drain; it allocates past its ring's size (so its slow path runs) and exits 0. */
static void test_fork_child_allocates(void) {
  char path[64];
  strobe_recorder *rec = start(path, sizeof path, "memfork");
  void *a = malloc(32);
  STROBE_ALLOC(a, 32, "fork_pool");
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    for (int i = 0; i < 300000; i++) {
      void *q = malloc(8);
      STROBE_ALLOC(q, 8, "fork_pool");
      STROBE_FREE(q, "fork_pool");
      free(q);
    }
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  STROBE_FREE(a, "fork_pool");
  free(a);
  CHECK_EQ_INT(strobe_record_stop(rec), 0);
  tally t;
  read_tally(path, "fork_pool", &t);
  CHECK_EQ_U64(t.allocs, 1);
  CHECK_EQ_U64(t.frees, 1);
  unlink(path);
}

#define CASES(X)              \
  X(allocations_read_back)    \
  X(threads_lose_nothing)     \
  X(messages_read_back)       \
  X(idle_records_nothing)     \
  X(fork_child_allocates)
HARNESS_MAIN(CASES)
