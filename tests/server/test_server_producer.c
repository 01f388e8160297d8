/*
 * test_server_producer.c — POST /api/producer/spans (docs/server.md
 * §External producers): a batch's spans reach the capture exactly, on their
 * lanes, with their names (run-time names, flagged as content) and their
 * CLOCK_MONOTONIC times converted to host ticks; a batch with one bad span,
 * or any other malformed part, adds nothing; count limits answer 413, the
 * rate budget 429, nothing recording 409, a missing token 401, all with the
 * batch refused whole and counted; an oversized body is 413 and a body
 * trickled past request_timeout_s closes the connection, adding nothing;
 * times outside [capture start - 1 s, now + 60 s], Content-Types other than
 * application/json and lane names with path segments are refused.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "server/producer_batch.h"
#include "server_test.h"
#include "strobe/capture.h"
#include "strobe/producer.h"
#include "strobe/record.h"
#include "support/case_files.h"

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static cli_http_response post(strobe_server *s, const char *body) {
  return t_req(s, "POST", "/api/producer/spans", AUTH JSON_CT, body);
}

/* The error name of a refusal, checked against its status. */
static void expect(strobe_server *s, const char *body, int status, const char *error) {
  cli_http_response r = post(s, body);
  CHECKF(r.status == status, "%d for %.200s: %.*s", r.status, body, (int)r.body_len, r.body);
  if (error) {
    json_t *v = t_json(&r);
    const char *e = json_string_value(json_object_get(v, "error"));
    CHECKF(e && !strcmp(e, error), "error %s, want %s (%.*s)", e ? e : "none", error, (int)r.body_len, r.body);
    json_decref(v);
  }
  cli_http_response_free(&r);
}

typedef struct got {
  int n;
  char lane[8][72], name[8][160];
  uint64_t begin[8], end[8];
  uint32_t flags[8];
} got;

static void read_spans(const char *path, got *g) {
  memset(g, 0, sizeof *g);
  strobe_capture *cap;
  REQUIRE(strobe_capture_open(path, &cap) == 0);
  strobe_capture_record r;
  while (strobe_capture_next(cap, &r) > 0) {
    if (r.type != STROBE_REC_LANE_SPAN) continue;
    if (g->n < 8) {
      const strobe_capture_site *site = strobe_capture_query_site(cap, r.site);
      snprintf(g->lane[g->n], 72, "%s", r.device->queue);
      snprintf(g->name[g->n], 160, "%s", site->name);
      g->flags[g->n] = site->flags;
      g->begin[g->n] = r.device->device_begin;
      g->end[g->n] = r.device->device_end;
    }
    g->n++;
  }
  strobe_capture_close(cap);
}

static strobe_recorder *record(const char *path) {
  strobe_recorder *rec;
  REQUIRE(strobe_record_start(&(strobe_record_desc){.path = path}, &rec) == 0);
  return rec;
}

static void test_batch_round_trip(void) {
  strobe_server *s = t_server(NULL);
  const char *path = case_temp_file("producer-http");
  strobe_recorder *rec = record(path);
  uint64_t t = mono_ns();
  char body[1024];
  snprintf(body, sizeof body,
           "{\"v\":1,\"clock\":\"monotonic_ns\",\"lanes\":[\"audio\",\"py/worker-1\"],"
           "\"names\":[\"mix\",\"decode frame\",\"gc.collect\"],"
           "\"spans\":[[0,0,%llu,%llu],[0,1,%llu,%llu],[1,2,%llu,%llu]]}",
           (unsigned long long)t, (unsigned long long)(t + 5000), (unsigned long long)(t + 1000),
           (unsigned long long)(t + 2000), (unsigned long long)(t + 300), (unsigned long long)(t + 90300));
  cli_http_response r = post(s, body);
  REQUIRE_EQ_INT(r.status, 200);
  json_t *v = t_json(&r);
  CHECK_EQ_INT(json_integer_value(json_object_get(v, "recorded")), 3);
  json_decref(v);
  cli_http_response_free(&r);
  REQUIRE(strobe_record_stop(rec) == 0);
  got g;
  read_spans(path, &g);
  REQUIRE(g.n == 3);
  const char *lane[3] = {"audio", "audio", "py/worker-1"}, *name[3] = {"mix", "decode frame", "gc.collect"};
  const uint64_t b[3] = {t, t + 1000, t + 300}, e[3] = {t + 5000, t + 2000, t + 90300};
  for (int i = 0; i < 3; i++) {
    CHECK_STR_EQ(g.lane[i], lane[i]);
    CHECK_STR_EQ(g.name[i], name[i]);
    CHECK(g.flags[i] & STROBE_SITE_INTERNED); /* names from another process are content */
    CHECK_EQ_U64(g.begin[i], strobe_clock_ticks_from_mono_ns(b[i]));
    CHECK_EQ_U64(g.end[i], strobe_clock_ticks_from_mono_ns(e[i]));
  }
  strobe_server_stats st = strobe_server_query_stats(s);
  CHECK_EQ_U64(st.producer_batches, 1);
  CHECK_EQ_U64(st.producer_spans, 3);
  CHECK_EQ_U64(st.producer_refused, 0);
}

/* Every malformed part refuses the batch whole: the capture gets nothing. */
static void test_bad_batch_adds_nothing(void) {
  strobe_server *s = t_server(NULL);
  const char *path = case_temp_file("producer-bad");
  strobe_recorder *rec = record(path);
  unsigned long long t = (unsigned long long)mono_ns();
  char body[1024];
  /* one bad span (ends before it begins) among good ones */
  snprintf(body, sizeof body,
           "{\"v\":1,\"lanes\":[\"a\"],\"names\":[\"x\"],\"spans\":[[0,0,%llu,%llu],[0,0,%llu,%llu],[0,0,%llu,%llu]]}",
           t, t + 10, t + 20, t + 19, t + 30, t + 40);
  expect(s, body, 400, "bad_batch");
  const char *bad[] = {
      "not json",
      "[]",
      "{\"v\":1,\"lanes\":[\"a\"],\"names\":[\"x\"]}",                                   /* no spans */
      "{\"v\":1,\"lanes\":[\"a\"],\"names\":[\"x\"],\"spans\":[[0,0,5,9]],\"extra\":1}", /* unknown key */
      "{\"v\":1,\"lanes\":[\"a\"],\"names\":[\"x\"],\"spans\":[[0,1,5,9]]}",             /* no name 1 */
      "{\"v\":1,\"lanes\":[\"a\"],\"names\":[\"x\"],\"spans\":[[1,0,5,9]]}",             /* no lane 1 */
      "{\"v\":1,\"lanes\":[\"has space\"],\"names\":[\"x\"],\"spans\":[[0,0,5,9]]}",     /* lane rule */
      "{\"v\":1,\"lanes\":[\"a\"],\"names\":[\"\"],\"spans\":[[0,0,5,9]]}",              /* empty name */
      "{\"v\":1,\"lanes\":[\"a\"],\"names\":[\"x\\u0000y\"],\"spans\":[[0,0,5,9]]}",     /* NUL in a name */
      "{\"v\":1,\"lanes\":[\"a\"],\"names\":[\"x\"],\"spans\":[[0,0,0,9]]}",             /* begin 0 */
      "{\"v\":1,\"lanes\":[\"a\"],\"names\":[\"x\"],\"spans\":[[0,0,5,9.5]]}",           /* not an integer */
      "{\"v\":1,\"lanes\":[\"a\"],\"names\":[\"x\"],\"spans\":[[0,0,5]]}",               /* three fields */
      "{\"v\":1,\"clock\":\"realtime\",\"lanes\":[\"a\"],\"names\":[\"x\"],\"spans\":[[0,0,5,9]]}",
      "{\"v\":1,\"v\":1,\"lanes\":[\"a\"],\"names\":[\"x\"],\"spans\":[[0,0,5,9]]}",     /* duplicate key */
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) expect(s, bad[i], 400, "bad_batch");
  expect(s, "{\"v\":2,\"lanes\":[\"a\"],\"names\":[\"x\"],\"spans\":[[0,0,5,9]]}", 400, "unsupported_version");
  /* a name one byte too long */
  char name[STROBE__BATCH_NAME_MAX + 2];
  memset(name, 'n', sizeof name - 1);
  name[sizeof name - 1] = 0;
  snprintf(body, sizeof body, "{\"v\":1,\"lanes\":[\"a\"],\"names\":[\"%s\"],\"spans\":[[0,0,%llu,%llu]]}", name, t,
           t + 1);
  expect(s, body, 400, "bad_batch");
  name[sizeof name - 2] = 0; /* 128 bytes: fits */
  snprintf(body, sizeof body, "{\"v\":1,\"lanes\":[\"a\"],\"names\":[\"%s\"],\"spans\":[[0,0,%llu,%llu]]}", name, t,
           t + 1);
  expect(s, body, 200, NULL);
  REQUIRE(strobe_record_stop(rec) == 0);
  got g;
  read_spans(path, &g);
  CHECK_EQ_INT(g.n, 1); /* the one good batch only */
  CHECK_EQ_INT(strlen(g.name[0]), 128);
  strobe_server_stats st = strobe_server_query_stats(s);
  CHECK_EQ_U64(st.producer_refused, sizeof bad / sizeof *bad + 3);
  CHECK_EQ_U64(st.producer_spans, 1);
}

/* Times outside [capture start - 1 s, now + 60 s] (an end of 2^63 - 1 among them: 400, not 500), a body that is not
 * application/json (415) and lane names with path segments (400) are refused whole; the batch at now is kept. */
static void test_times_types_lanes(void) {
  strobe_server *s = t_server(NULL);
  const char *path = case_temp_file("producer-bounds");
  unsigned long long before = (unsigned long long)mono_ns();
  strobe_recorder *rec = record(path);
  unsigned long long t = (unsigned long long)mono_ns();
  char body[512];
  const unsigned long long spans[][2] = {
      {1, 2},                                     /* near CLOCK_MONOTONIC's zero: long before the capture began */
      {before - 1100000000ull, before},           /* 1.1 s before it began */
      {t, t + 1000000000000000ull},               /* ends 11.6 days from now */
      {t + 61000000000ull, t + 62000000000ull},   /* 61 s from now */
      {t, 9223372036854775807ull},                /* an end of 2^63 - 1 */
  };
  for (size_t i = 0; i < sizeof spans / sizeof *spans; i++) {
    snprintf(body, sizeof body, "{\"v\":1,\"lanes\":[\"a\"],\"names\":[\"x\"],\"spans\":[[0,0,%llu,%llu]]}",
             spans[i][0], spans[i][1]);
    expect(s, body, 400, "bad_batch");
  }
  const char *lanes[] = {"../x", "a/../b", "/abs", "a//b", "a/", ".", "a/./b"};
  for (size_t i = 0; i < sizeof lanes / sizeof *lanes; i++) {
    snprintf(body, sizeof body, "{\"v\":1,\"lanes\":[\"%s\"],\"names\":[\"x\"],\"spans\":[[0,0,%llu,%llu]]}",
             lanes[i], t, t + 10);
    expect(s, body, 400, "bad_batch");
  }
  snprintf(body, sizeof body, "{\"v\":1,\"lanes\":[\"py/a.b\"],\"names\":[\"x\"],\"spans\":[[0,0,%llu,%llu]]}",
           t, t + 10);
  const char *types[] = {"Content-Type: text/plain\r\n", "Content-Type: application/x-www-form-urlencoded\r\n", "",
                         "Content-Type: application/jsonp\r\n"};
  for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
    char headers[256];
    snprintf(headers, sizeof headers, AUTH "%s", types[i]);
    cli_http_response r = t_req(s, "POST", "/api/producer/spans", headers, body);
    CHECKF(r.status == 415, "%d for the type '%s'", r.status, types[i]);
    cli_http_response_free(&r);
  }
  expect(s, body, 200, NULL);
  REQUIRE(strobe_record_stop(rec) == 0);
  got g;
  read_spans(path, &g);
  REQUIRE(g.n == 1);
  CHECK_STR_EQ(g.lane[0], "py/a.b");
  CHECK_EQ_U64(strobe_server_query_stats(s).producer_spans, 1);
}

/* A JSON batch of n spans on `lanes` lanes, in a malloc'd string. */
static char *big_batch(uint32_t n, uint32_t lanes) {
  size_t cap = 64 + (size_t)n * 48 + lanes * 16;
  char *b = malloc(cap);
  REQUIRE(b != NULL);
  if (!b) return NULL; /* not reached: for the compiler, which cannot see REQUIRE stop the case */
  size_t k = (size_t)snprintf(b, cap, "{\"v\":1,\"lanes\":[");
  for (uint32_t i = 0; i < lanes; i++) k += (size_t)snprintf(b + k, cap - k, "%s\"l%u\"", i ? "," : "", i);
  k += (size_t)snprintf(b + k, cap - k, "],\"names\":[\"x\"],\"spans\":[");
  unsigned long long t = (unsigned long long)mono_ns();
  for (uint32_t i = 0; i < n; i++)
    k += (size_t)snprintf(b + k, cap - k, "%s[0,0,%llu,%llu]", i ? "," : "", t + i, t + i + 1);
  snprintf(b + k, cap - k, "]}");
  return b;
}

static void test_limits(void) {
  strobe_server *s = t_server(&(strobe_server_desc){.producer_spans_per_second = 1000});
  const char *path = case_temp_file("producer-limits");
  /* nothing records yet: refused, nowhere to go */
  char *one = big_batch(1, 1);
  expect(s, one, 409, "nothing_recording");
  strobe_recorder *rec = record(path);
  char *over = big_batch(STROBE_PRODUCER_BATCH_MAX + 1, 1);
  expect(s, over, 413, "batch_too_large");
  char *lanes = big_batch(1, STROBE__BATCH_MAX_LANES + 1);
  expect(s, lanes, 413, "batch_too_large");
  /* the rate: 1000 spans a second; a batch of 1000 takes the whole second's budget, so the same batch
   * again within that second is refused (one taking longer than that under load proves nothing) */
  char *b1000 = big_batch(1000, 1);
  uint64_t t0 = mono_ns();
  expect(s, b1000, 200, NULL);
  cli_http_response r = post(s, b1000);
  int fast = mono_ns() - t0 < 900000000u, recorded = 1000;
  if (fast) CHECKF(r.status == 429, "a second batch within the second: %d", r.status);
  if (r.status == 200) recorded += 1000;
  cli_http_response_free(&r);
  uint64_t limited = fast ? 1 : strobe_server_query_stats(s).producer_rate_limited;
  /* no token */
  r = t_req(s, "POST", "/api/producer/spans", JSON_CT, one);
  CHECK_EQ_INT(r.status, 401);
  cli_http_response_free(&r);
  REQUIRE(strobe_record_stop(rec) == 0);
  got g;
  read_spans(path, &g);
  CHECK_EQ_INT(g.n, recorded);
  strobe_server_stats st = strobe_server_query_stats(s);
  CHECK_EQ_U64(st.producer_rate_limited, limited);
  CHECK_EQ_U64(st.producer_refused, 3 + limited);
  free(one), free(over), free(lanes), free(b1000);
}

/* An oversized body is 413 before it is read; a body trickled past
 * request_timeout_s closes the connection; neither adds a span. */
static void test_oversized_and_trickled(void) {
  strobe_server *s = t_server(&(strobe_server_desc){.max_body_bytes = 4096, .request_timeout_s = 1});
  const char *path = case_temp_file("producer-size");
  strobe_recorder *rec = record(path);
  char *big = big_batch(200, 1); /* ~9 KB */
  REQUIRE(strlen(big) > 4096);
  cli_http_response r = post(s, big);
  CHECK_EQ_INT(r.status, 413);
  cli_http_response_free(&r);
  /* trickled: headers, then one body byte every 300 ms */
  char *small = big_batch(2, 1);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(strobe_server_query_port(s))};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
  char head[256];
  int hn = snprintf(head, sizeof head,
                    "POST /api/producer/spans HTTP/1.1\r\nHost: 127.0.0.1\r\n" AUTH JSON_CT "Content-Length: %zu\r\n\r\n",
                    strlen(small));
  REQUIRE(write(fd, head, (size_t)hn) == hn);
  struct timeval tv = {0, 300000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  int closed = 0;
  for (size_t i = 0; i < strlen(small) && i < 40 && !closed; i++) { /* 40 bytes: 12 s, far past the timeout */
    if (send(fd, small + i, 1, MSG_NOSIGNAL) != 1) closed = 1;
    char c;
    ssize_t got_bytes = recv(fd, &c, 1, 0);
    if (got_bytes == 0 || (got_bytes < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) closed = 1;
    if (got_bytes > 0) closed = 1; /* an answer before the body is whole: a timeout's, never a success */
  }
  CHECK(closed);
  close(fd);
  REQUIRE(strobe_record_stop(rec) == 0);
  got g;
  read_spans(path, &g);
  CHECK_EQ_INT(g.n, 0);
  CHECK_EQ_U64(strobe_server_query_stats(s).producer_spans, 0);
  free(big), free(small);
}

#define CASES(X)          \
  X(batch_round_trip)     \
  X(bad_batch_adds_nothing) \
  X(limits)               \
  X(times_types_lanes)    \
  X(oversized_and_trickled)
HARNESS_MAIN(CASES)
