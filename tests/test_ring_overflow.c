/*
 * test_ring_overflow.c — a full ring drops events, never blocks the
 * application, counts every loss, and keeps the stream well formed. The
 * capture goes to a FIFO that nobody reads yet, so the drain thread stalls
 * in write() like a recorder on a hung disk; the producer keeps running.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/fixtures.h"
#include "support/harness.h"
#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/strobe.h"

#define SCOPES 200000

typedef struct sink {
  int fd; /* the FIFO's read end, held open since before the recorder opened it */
  uint8_t *data;
  size_t len;
} sink;

static void *read_fifo(void *arg) {
  sink *s = arg;
  int fd = s->fd;
  size_t cap = 1 << 20;
  s->data = malloc(cap);
  for (;;) {
    if (s->len == cap) s->data = realloc(s->data, cap *= 2);
    ssize_t n = read(fd, s->data + s->len, cap - s->len);
    if (n <= 0) break;
    s->len += (size_t)n;
  }
  close(fd);
  return NULL;
}

static void test_overflow_counted_stream_balanced(void) {
  REQUIRE_EQ_INT(strobe_setup(&(strobe_desc){.ring_events = 1024}), 0);
  char dir[64];
  REQUIRE(fx_temp_dir(dir, sizeof dir, "overflow") == 0);
  char path[256];
  snprintf(path, sizeof path, "%s/fifo", dir);
  REQUIRE(mkfifo(path, 0600) == 0);
  /* Hold the FIFO open for reading so the recorder's open() succeeds, but do not read yet. */
  int hold = open(path, O_RDONLY | O_NONBLOCK);
  REQUIRE(hold >= 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path, .flush_interval_ms = 1}, &rec), 0);
  for (int i = 0; i < SCOPES; i++) {
    STROBE_SCOPE("outer");
    STROBE_SCOPE("inner");
    STROBE_VALUE("i", i);
  }
  strobe_event_stats st = strobe_query_event_stats();
  CHECK(st.events_lost > 0); /* a 1024-slot ring cannot hold 200,000 scopes with the drain stalled */

  /* The reader takes over the held read end (blocking now), so the FIFO never
   * goes without a reader: the recorder's writes cannot meet SIGPIPE. */
  REQUIRE(fcntl(hold, F_SETFL, 0) == 0);
  sink s = {hold, NULL, 0};
  pthread_t reader;
  pthread_create(&reader, NULL, read_fifo, &s);
  CHECK_EQ_INT(strobe_record_stop(rec), 0);
  pthread_join(reader, NULL);

  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open_memory(s.data, s.len, &cap), 0);
  strobe_capture_record r;
  int rc;
  uint64_t lost_records = 0, ends = 0;
  while ((rc = strobe_capture_next(cap, &r)) > 0) {
    if (r.type == STROBE_REC_LOST) lost_records++;
    if (r.type == STROBE_REC_END) {
      CHECK(r.depth == 1 || r.depth == 2);
      ends++;
    }
  }
  CHECK_EQ_INT(rc, 0);
  strobe_capture_totals t = strobe_capture_query_totals(cap);
  CHECK_EQ_INT(t.footer, 1);
  CHECK(lost_records > 0);
  CHECK(t.lost > 0);
  CHECK_EQ_U64(t.lost, strobe_query_event_stats().events_lost);
  CHECK_EQ_U64(t.orphan_ends, 0);
  CHECK(ends > 0 && ends < 2 * SCOPES);
  printf("overflow: %llu events lost and counted, %llu scopes kept, stream balanced\n",
         (unsigned long long)t.lost, (unsigned long long)ends);
  strobe_capture_close(cap);
  free(s.data);
  unlink(path);
  rmdir(dir);
}

#define CASES(X) X(overflow_counted_stream_balanced)
HARNESS_MAIN(CASES)
