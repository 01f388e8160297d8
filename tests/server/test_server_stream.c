/*
 * test_server_stream.c — GET /api/capture/stream (docs/server.md "Live
 * stream"): what a client receives is the capture format and reads back
 * with the capture reader; a client that stops reading loses events that
 * are counted and reported (/api/info, strobe_server_query_stats) while the
 * application never waits; the stream limit answers 503; a client that
 * leaves is noticed; stopping the server with streams open neither hangs
 * nor leaks.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server_test.h"
#include "strobe/capture.h"

static int g_run;          /* atomic: the producer runs */
static uint64_t g_loops;   /* atomic: producer iterations */

static void *producer(void *arg) {
  (void)arg;
  strobe_thread_set_name("producer");
  while (__atomic_load_n(&g_run, __ATOMIC_ACQUIRE)) {
    STROBE_SCOPE("work");
    for (int i = 0; i < 4; i++) {
      STROBE_SCOPE("step");
      STROBE_VALUE("i", i);
    }
    __atomic_fetch_add(&g_loops, 1, __ATOMIC_RELAXED);
  }
  return NULL;
}

static pthread_t g_producer;

static void producer_stop(void *arg) {
  (void)arg;
  __atomic_store_n(&g_run, 0, __ATOMIC_RELEASE);
  pthread_join(g_producer, NULL);
}

/* Each case: the producer running on its own thread (joined when the case
 * ends) and a server with room for two streams of 64 KiB queues. */
static strobe_server *stream_fixture(void) {
  __atomic_store_n(&g_run, 1, __ATOMIC_RELEASE);
  REQUIRE(pthread_create(&g_producer, NULL, producer, NULL) == 0);
  harness_defer(producer_stop, NULL);
  strobe_server_desc d = {.max_streams = 2, .stream_queue_bytes = 64u << 10};
  return t_start(&d);
}

static json_t *info(strobe_server *s) {
  cli_http_response r = t_req(s, "GET", "/api/info", AUTH, NULL);
  CHECK_EQ_INT(r.status, 200);
  json_t *v = t_json(&r);
  cli_http_response_free(&r);
  return v;
}

static int64_t stat_of(json_t *inf, const char *name) {
  return (int64_t)json_integer_value(json_object_get(json_object_get(json_object_get(inf, "server"), "stats"), name));
}

/* Opens a stream on a raw socket with a tiny receive buffer and never reads it. */
static int stuck_client(strobe_server *s) {
  cli_http_url u = t_url(s);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int small = 4096;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_port = htons(u.port);
  a.sin_addr.s_addr = htonl(0x7f000001);
  CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
  char req[256];
  int n = snprintf(req, sizeof req, "GET /api/capture/stream HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n" AUTH "\r\n",
                   (unsigned)u.port);
  CHECK(write(fd, req, (size_t)n) == n);
  return fd;
}

/* Waits until the server holds n streams (30 s: a hang); 0 when it noticed
 * every client that left (its heartbeat write fails) and freed the streams. */
static void wait_streams(strobe_server *s, int64_t n) {
  double t0 = fx_now_ms();
  for (;;) {
    json_t *v = info(s);
    int64_t held = stat_of(v, "streams");
    json_decref(v);
    if (held == n) break;
    REQUIREF(fx_now_ms() - t0 < 30000, "the server holds %lld streams, not %lld", (long long)held, (long long)n);
    fx_sleep_ms(20);
  }
}


static void test_live(void) {
  strobe_server *s = stream_fixture();
  harness_defer(t_stop_deferred, s);
  cli_http_url u = t_url(s);
  cli_http_response r = {0};
  const char *why;
  /* Read the live stream for 2 s; when a loaded machine delivered too little in that window
   * (no head yet, or fewer than 11 `work` scopes), read a new stream for twice as long, up to 32 s.
   * The checks are the same on whichever read is the last. */
  int got = -1, rc = 0, named = 0;
  uint64_t work = 0, steps = 0;
  strobe_capture *cap = NULL;
  for (int window_ms = 2000; window_ms <= 32000; window_ms *= 2) {
    if (window_ms > 2000) wait_streams(s, 0); /* the last read's stream is gone: this one is not refused for it */
    if (cap) strobe_capture_close(cap);
    cap = NULL;
    cli_http_response_free(&r);
    got = cli_http_request(&u, "GET", "/api/capture/stream", AUTH, NULL, 0, window_ms, 8u << 20, &r, &why);
    if (got != 0 || r.status != 200 || strobe_capture_open_memory(r.body, r.body_len, &cap) != 0) continue;
    strobe_capture_record rec;
    work = steps = 0;
    while ((rc = strobe_capture_next(cap, &rec)) > 0) {
      if (rec.type != STROBE_REC_END) continue;
      const char *name = strobe_capture_query_site(cap, rec.site)->name;
      work += !strcmp(name, "work");
      steps += !strcmp(name, "step");
    }
    if (work > 10) break;
  }
  CHECK(got == 0);
  CHECK_EQ_INT(r.status, 200);
  CHECK(r.truncated); /* a live stream does not end by itself */
  char ct[64];
  CHECK(cli_http_header(&r, "Content-Type", ct, sizeof ct) && !strcmp(ct, "application/vnd.strobe.capture"));
  CHECK(r.body_len > 64);
  REQUIRE(cap != NULL);
  CHECK(!strcmp(strobe_capture_query_header(cap)->kind, "stream"));
  /* the client hung up mid-stream: the end is cut short, at worst inside a block */
  CHECK(rc == 0 || rc == STROBE_ETRUNCATED);
  CHECK(work > 10 && steps >= 4 * (work - 1));
  for (uint32_t i = 0; i < strobe_capture_query_thread_count(cap); i++)
    named |= !strcmp(strobe_capture_query_thread(cap, i)->name, "producer");
  CHECK(named);
  strobe_capture_close(cap);
  cli_http_response_free(&r);

  /* the server notices the client left (its heartbeat write fails) and frees the stream */
  wait_streams(s, 0);
  CHECK(strobe_server_query_stats(s).stream_bytes > 64);
}

static void test_slow_client(void) {
  strobe_server *s = stream_fixture();
  int fd = stuck_client(s);
  uint64_t loops0 = __atomic_load_n(&g_loops, __ATOMIC_RELAXED);
  double t0 = fx_now_ms();
  int64_t dropped = 0;
  while (dropped == 0) {
    REQUIRE(fx_now_ms() - t0 < 20000);
    fx_sleep_ms(50);
    json_t *v = info(s);
    json_t *streams = json_object_get(v, "streams");
    CHECK_EQ_INT(json_array_size(streams), 1);
    dropped = (int64_t)json_integer_value(json_object_get(json_array_get(streams, 0), "events_dropped"));
    CHECK(json_integer_value(json_object_get(json_array_get(streams, 0), "bytes_queued")) <= 2 * (64 << 10) + (1 << 20));
    json_decref(v);
  }
  /* the application kept running at full speed meanwhile */
  CHECK(__atomic_load_n(&g_loops, __ATOMIC_RELAXED) - loops0 > 1000);
  strobe_server_stats st = strobe_server_query_stats(s);
  CHECK(st.stream_events_dropped > 0 && st.stream_drop_episodes > 0);

  /* the limit: two streams at once here (the stuck one and this one), the third is refused */
  int fd2 = stuck_client(s);
  wait_streams(s, 2); /* its request was read: it holds the second stream */
  cli_http_response r = t_req(s, "GET", "/api/capture/stream", AUTH, NULL);
  CHECK_EQ_INT(r.status, 503);
  CHECK(strstr(r.body, "limit_reached"));
  cli_http_response_free(&r);
  close(fd2);

  /* fd is left open: strobe_server_stop must cope with a stuck stream, at once */
  double t1 = fx_now_ms();
  strobe_server_stop(s);
  CHECK(fx_now_ms() - t1 < 5000);
  close(fd);
}

#define CASES(X) \
  X(live)        \
  X(slow_client)
HARNESS_MAIN(CASES)
