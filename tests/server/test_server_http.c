/*
 * test_server_http.c — the HTTP hardening every request passes (server.h,
 * docs/server.md "Authentication and hardening"): bearer token (missing,
 * wrong, wrong scheme, in the URL), Host and Origin (DNS rebinding), body
 * size, header size, connection limits and idle time, methods, and the
 * token file (mode 0600, path printed, removed at stop). Each bad request
 * gets its precise status and the server keeps serving.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server_test.h"
#include "trickle.h"

/* How long a poll waits before the test calls it a hang: it returns at the
 * event, so only a loaded machine ever waits long. */
#define HANG_MS 30000

static const char k_ping[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";

static void expect_status(strobe_server *s, const char *method, const char *path, const char *headers,
                          const char *body, int status) {
  cli_http_response r = t_req(s, method, path, headers, body);
  if (r.status != status)
    fprintf(stderr, "%s %s: got %d (%.*s), want %d\n", method, path, r.status, (int)r.body_len, r.body, status);
  CHECK_EQ_INT(r.status, status);
  cli_http_response_free(&r);
}

static void test_auth(void) {
  strobe_server *s = t_start(NULL);
  char sid[80];
  t_mcp_init(s, sid);
  char h[512];

  /* missing token: 401 with WWW-Authenticate: Bearer */
  cli_http_response r = t_req(s, "POST", "/mcp", JSON_CT, k_ping);
  CHECK_EQ_INT(r.status, 401);
  char v[128];
  CHECK(cli_http_header(&r, "WWW-Authenticate", v, sizeof v));
  CHECK(!strncmp(v, "Bearer", 6));
  CHECK(!strstr(r.body, TEST_TOKEN)); /* never echoed */
  cli_http_response_free(&r);

  /* wrong token, a prefix of the token, the token plus a byte, wrong scheme */
  expect_status(s, "POST", "/mcp", "Authorization: Bearer wrong-token-0123456789abcdef\r\n" JSON_CT, k_ping, 401);
  expect_status(s, "POST", "/mcp", "Authorization: Bearer test-token-0123456789abcde\r\n" JSON_CT, k_ping, 401);
  expect_status(s, "POST", "/mcp", "Authorization: Bearer " TEST_TOKEN "x\r\n" JSON_CT, k_ping, 401);
  expect_status(s, "POST", "/mcp", "Authorization: Basic " TEST_TOKEN "\r\n" JSON_CT, k_ping, 401);
  expect_status(s, "GET", "/api/info", NULL, NULL, 401);
  expect_status(s, "GET", "/api/capture/stream", NULL, NULL, 401);
  expect_status(s, "DELETE", "/mcp", NULL, NULL, 401);
  /* never accepted in the URL, even without a header */
  expect_status(s, "GET", "/api/info?token=" TEST_TOKEN, NULL, NULL, 400);
  expect_status(s, "GET", "/api/info?access_token=" TEST_TOKEN, AUTH, NULL, 400);
  /* the scheme is case-insensitive (RFC 7235) */
  snprintf(h, sizeof h, "authorization: bearer %s\r\n" JSON_CT "Mcp-Session-Id: %s\r\n", TEST_TOKEN, sid);
  expect_status(s, "POST", "/mcp", h, k_ping, 200);

  /* the server still serves */
  r = t_mcp_post(s, sid, k_ping);
  CHECK_EQ_INT(r.status, 200);
  CHECK(!strcmp(r.body, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"));
  cli_http_response_free(&r);
  strobe_server_stats st = strobe_server_query_stats(s);
  CHECK(st.rejected_auth >= 9);
  strobe_server_stop(s);
}

static void test_host_origin(void) {
  const char *origins[] = {"http://viewer.test:9000", NULL};
  const char *hosts[] = {"strobe.test", NULL};
  strobe_server_desc d = {.allowed_origins = origins, .allowed_hosts = hosts};
  strobe_server *s = t_start(&d);
  unsigned port = strobe_server_query_port(s);
  char h[512];

  /* DNS rebinding: an attacker's name resolving to 127.0.0.1 */
  expect_status(s, "GET", "/api/info", AUTH "Host: evil.example:80\r\n", NULL, 403);
  snprintf(h, sizeof h, AUTH "Host: evil.example:%u\r\n", port);
  expect_status(s, "GET", "/api/info", h, NULL, 403);
  expect_status(s, "GET", "/api/info", AUTH "Host: 127.0.0.1.evil.example\r\n", NULL, 403);
  /* a loopback name, but another port */
  snprintf(h, sizeof h, AUTH "Host: 127.0.0.1:%u\r\n", port == 1 ? 2 : port - 1);
  expect_status(s, "GET", "/api/info", h, NULL, 403);
  /* loopback names with our port or none, and the configured host */
  snprintf(h, sizeof h, AUTH "Host: localhost:%u\r\n", port);
  expect_status(s, "GET", "/api/info", h, NULL, 200);
  snprintf(h, sizeof h, AUTH "Host: [::1]:%u\r\n", port);
  expect_status(s, "GET", "/api/info", h, NULL, 200);
  expect_status(s, "GET", "/api/info", AUTH "Host: 127.0.0.1\r\n", NULL, 200);
  snprintf(h, sizeof h, AUTH "Host: strobe.test:%u\r\n", port);
  expect_status(s, "GET", "/api/info", h, NULL, 200);

  /* Origin: present and not allowed → 403, even with the right token */
  expect_status(s, "GET", "/api/info", AUTH "Origin: http://evil.example\r\n", NULL, 403);
  expect_status(s, "GET", "/api/info", AUTH "Origin: null\r\n", NULL, 403);
  snprintf(h, sizeof h, AUTH "Origin: http://127.0.0.1:%u.evil.example\r\n", port);
  expect_status(s, "GET", "/api/info", h, NULL, 403);
  expect_status(s, "POST", "/mcp", AUTH JSON_CT "Origin: https://evil.example\r\n", k_ping, 403);
  /* allowed origins */
  snprintf(h, sizeof h, AUTH "Origin: http://127.0.0.1:%u\r\n", port);
  expect_status(s, "GET", "/api/info", h, NULL, 200);
  snprintf(h, sizeof h, AUTH "Origin: http://localhost:%u\r\n", port);
  expect_status(s, "GET", "/api/info", h, NULL, 200);
  expect_status(s, "GET", "/api/info", AUTH "Origin: http://viewer.test:9000\r\n", NULL, 200);
  /* Host and Origin are checked before the token: a rebinding page learns nothing about it */
  expect_status(s, "GET", "/api/info", "Origin: http://evil.example\r\n", NULL, 403);
  CHECK(strobe_server_query_stats(s).rejected_origin >= 8);
  strobe_server_stop(s);
}

static void test_limits(void) {
  strobe_server_desc d = {.max_body_bytes = 4096, .max_header_bytes = 4096};
  strobe_server *s = t_start(&d);
  char sid[80];
  t_mcp_init(s, sid);
  char h[512];
  snprintf(h, sizeof h, AUTH JSON_CT "Mcp-Session-Id: %s\r\n", sid);

  /* body over the bound: 413, whatever it holds */
  char *big = malloc(8192);
  memset(big, ' ', 8191);
  memcpy(big, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", 39);
  big[8191] = 0;
  expect_status(s, "POST", "/mcp", h, big, 413);
  /* at the bound: accepted */
  big[4096] = 0;
  expect_status(s, "POST", "/mcp", h, big, 200);
  free(big);
  /* a declared length over the bound is refused before the body is read */
  cli_http_url u = t_url(s);
  int fd = cli_http_connect(&u);
  REQUIRE(fd >= 0);
  char req[512];
  int n = snprintf(req, sizeof req,
                   "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n" AUTH JSON_CT "Content-Length: 100000000\r\n\r\n",
                   (unsigned)u.port);
  CHECK(write(fd, req, (size_t)n) == n);
  char buf[1024];
  struct pollfd p = {fd, POLLIN, 0};
  CHECK(poll(&p, 1, HANG_MS) == 1);
  ssize_t k = read(fd, buf, sizeof buf - 1);
  CHECK(k > 12);
  buf[k] = 0;
  CHECK(!strncmp(buf, "HTTP/1.1 413", 12));
  close(fd);
  CHECK(strobe_server_query_stats(s).rejected_size >= 2);

  /* a chunked body (no Content-Length) over the bound: the 413 arrives while
   * the client is still sending, readable in full, never a reset */
  fd = cli_http_connect(&u);
  REQUIRE(fd >= 0);
  n = snprintf(req, sizeof req,
               "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n" AUTH JSON_CT "Mcp-Session-Id: %s\r\n"
               "Transfer-Encoding: chunked\r\n\r\n",
               (unsigned)u.port, sid);
  CHECK(write(fd, req, (size_t)n) == n);
  static char chunk[16384 + 16];
  int hl = snprintf(chunk, sizeof chunk, "%x\r\n", 16384);
  memset(chunk + hl, ' ', 16384);
  memcpy(chunk + hl + 16384, "\r\n", 2);
  size_t chunk_len = (size_t)hl + 16384 + 2, sent = 0, total = (size_t)256 << 20;
  /* The server answers, then closes once it discarded its bound of the body:
   * a client descheduled between poll and send meets that close in send
   * (ECONNRESET, EPIPE) with the answer already waiting, read below. */
  int answered = 0;
  while (sent < total && !answered) {
    struct pollfd q = {fd, POLLIN | POLLOUT, 0};
    if (poll(&q, 1, HANG_MS) != 1) break;
    if (q.revents & POLLIN) answered = 1;
    else if (q.revents & POLLOUT) {
      ssize_t w = send(fd, chunk, chunk_len, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (w < 0 && (errno == ECONNRESET || errno == EPIPE)) answered = 1;
      else if (w < 0 && errno != EAGAIN) break;
      if (w > 0) sent += (size_t)w;
    } else break;
  }
  CHECK(answered);    /* before the body ended (it never does) */
  CHECK(sent < total);
  size_t got = 0;
  static char resp[4096];
  for (;;) {
    struct pollfd q = {fd, POLLIN, 0};
    if (poll(&q, 1, HANG_MS) != 1) break;
    ssize_t k2 = recv(fd, resp + got, sizeof resp - 1 - got, 0);
    if (k2 <= 0) break;
    got += (size_t)k2;
  }
  resp[got] = 0;
  if (strncmp(resp, "HTTP/1.1 413", 12) != 0) fprintf(stderr, "chunked over the bound: got %zu bytes: %s\n", got, resp);
  CHECK(!strncmp(resp, "HTTP/1.1 413", 12));
  CHECK(strstr(resp, "\"payload_too_large\"") != NULL);
  close(fd);
  CHECK(strobe_server_query_stats(s).rejected_size >= 3);
  expect_status(s, "POST", "/mcp", h, k_ping, 200); /* and it serves on */

  /* headers over the bound: refused by libmicrohttpd (431), the server lives on */
  char *hh = malloc(16384);
  strcpy(hh, AUTH "X-Filler: ");
  size_t at = strlen(hh);
  memset(hh + at, 'a', 12000);
  strcpy(hh + at + 12000, "\r\n");
  cli_http_response r = t_req(s, "GET", "/api/info", hh, NULL);
  CHECK(r.status == 431 || r.status == 413);
  cli_http_response_free(&r);
  free(hh);
  expect_status(s, "GET", "/api/info", AUTH, NULL, 200);
  strobe_server_stop(s);
}

static void test_methods(void) {
  strobe_server *s = t_start(NULL);
  char sid[80], h[512];
  t_mcp_init(s, sid);
  /* GET /mcp: no server-to-client stream here */
  cli_http_response r = t_req(s, "GET", "/mcp", AUTH, NULL);
  CHECK_EQ_INT(r.status, 405);
  char allow[64];
  CHECK(cli_http_header(&r, "Allow", allow, sizeof allow) && strstr(allow, "POST"));
  cli_http_response_free(&r);
  expect_status(s, "PUT", "/mcp", AUTH JSON_CT, k_ping, 405);
  expect_status(s, "POST", "/api/info", AUTH JSON_CT, "{}", 405);
  expect_status(s, "GET", "/nope", AUTH, NULL, 404);
  /* POST without a JSON content type */
  snprintf(h, sizeof h, AUTH "Content-Type: text/plain\r\nMcp-Session-Id: %s\r\n", sid);
  expect_status(s, "POST", "/mcp", h, k_ping, 415);
  /* unknown MCP session → 404, missing one → 400 */
  expect_status(s, "POST", "/mcp", AUTH JSON_CT "Mcp-Session-Id: 0123456789\r\n", k_ping, 404);
  expect_status(s, "POST", "/mcp", AUTH JSON_CT, k_ping, 400);
  /* MCP-Protocol-Version: unsupported → 400, supported → 200, absent → 200 (2025-03-26 assumed) */
  snprintf(h, sizeof h, AUTH JSON_CT "Mcp-Session-Id: %s\r\nMCP-Protocol-Version: 1999-01-01\r\n", sid);
  expect_status(s, "POST", "/mcp", h, k_ping, 400);
  snprintf(h, sizeof h, AUTH JSON_CT "Mcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-06-18\r\n", sid);
  expect_status(s, "POST", "/mcp", h, k_ping, 200);
  /* DELETE ends the MCP session; it is unknown afterwards */
  snprintf(h, sizeof h, AUTH "Mcp-Session-Id: %s\r\n", sid);
  expect_status(s, "DELETE", "/mcp", h, NULL, 204);
  expect_status(s, "DELETE", "/mcp", h, NULL, 404);
  snprintf(h, sizeof h, AUTH JSON_CT "Mcp-Session-Id: %s\r\n", sid);
  expect_status(s, "POST", "/mcp", h, k_ping, 404);
  strobe_server_stop(s);
}

/* Seed of `server_connections_held`: 300 idle connections (more than 256)
 * and an authenticated request still answers. */
static void test_idle_connections(void) {
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur < 1024 && rl.rlim_max >= 1024) {
    rl.rlim_cur = 1024;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  strobe_server *s = t_start(NULL);
  cli_http_url u = t_url(s);
  enum { N = 300 };
  int fds[N];
  for (int i = 0; i < N; i++) {
    fds[i] = cli_http_connect(&u);
    CHECK(fds[i] >= 0);
    if (i % 2) CHECK(write(fds[i], "GET /api/info HTTP/1.1\r\n", 24) == 24); /* half a request: a slow client */
  }
  fx_sleep_ms(200); /* let the server accept them all */
  char sid[80];
  t_mcp_init(s, sid);
  cli_http_response r = t_mcp_post(s, sid, k_ping);
  CHECK_EQ_INT(r.status, 200);
  cli_http_response_free(&r);
  /* the held connections are still open (the server did not shed them) */
  int open_count = 0;
  for (int i = 0; i < N; i++) {
    struct pollfd p = {fds[i], POLLIN, 0};
    char c;
    if (poll(&p, 1, 0) == 0 || recv(fds[i], &c, 1, MSG_DONTWAIT) < 0) open_count++;
  }
  CHECK_EQ_INT(open_count, N);
  for (int i = 0; i < N; i++) close(fds[i]);
  strobe_server_stop(s);
}

/* A connection that sends nothing is closed after idle_timeout_s. */
static void test_idle_timeout(void) {
  strobe_server_desc d = {.idle_timeout_s = 1};
  strobe_server *s = t_start(&d);
  cli_http_url u = t_url(s);
  int fd = cli_http_connect(&u);
  REQUIRE(fd >= 0);
  CHECK(write(fd, "GET /api/info HTTP/1.1\r\n", 24) == 24);
  struct pollfd p = {fd, POLLIN, 0};
  double t0 = fx_now_ms();
  CHECK(poll(&p, 1, 10000) == 1); /* EOF arrives */
  char c;
  CHECK(read(fd, &c, 1) <= 0);
  REQUIRE(fx_now_ms() - t0 < 8000);
  close(fd);
  strobe_server_stop(s);
}

/* A few clients trickling header bytes, well under max_connections: each
 * connection is closed request_timeout_s after its accept, however steadily
 * its bytes come (libmicrohttpd's own timer restarts on each). */
static void test_request_deadline(void) {
  strobe_server_desc d = {.request_timeout_s = 1};
  strobe_server *s = t_server(&d);
  static trickle t;
  REQUIRE(trickle_start(&t, strobe_server_query_port(s), 20, 200, 20) == 0); /* 20 connections, never renewed */
  double t0 = fx_now_ms();
  while (fx_now_ms() - t0 < 6000 && __atomic_load_n(&t.closed_by_server, __ATOMIC_RELAXED) < 20) fx_sleep_ms(50);
  trickle_stop(&t);
  strobe_server_stats st = strobe_server_query_stats(s);
  CHECK_EQ_INT(t.connects, 20);
  CHECK_EQ_INT(t.closed_by_server, 20);
  CHECK(t.max_life_ms >= 1000 - 50 && t.max_life_ms <= 1000 + 1500);
  CHECK_EQ_U64(st.connections_timed_out, 20);
  CHECK_EQ_U64(st.connections_shed, 0);
  /* a request that completes in time is answered, and its connection lives on */
  expect_status(s, "GET", "/api/info", AUTH, NULL, 200);
}

/* docs/server.md §Authentication and hardening: 600 clients trickling header
 * bytes (one every 300 ms) hold no connection past request_timeout_s, and
 * while they keep coming (more than max_connections of them) an MCP client
 * makes 50 calls that all succeed. The calls' latency is a budget measured
 * by bench_server (slow_client_mcp_ms_p99), not asserted here. */
static void test_slow_clients(void) {
  REQUIREF(trickle_raise_nofile(4096) >= 2048, "RLIMIT_NOFILE cannot be raised to 2048 (hard limit too low)");
  strobe_server_desc d = {.request_timeout_s = 2, .max_connections = 256};
  strobe_server *s = t_server(&d);
  static trickle t;
  REQUIRE(trickle_start(&t, strobe_server_query_port(s), 600, 300, 20000) == 0);
  fx_sleep_ms(500); /* they are all in */
  char sid[80];
  t_mcp_init(s, sid);
  double t0 = fx_now_ms();
  for (int i = 0; i < 50; i++) {
    json_t *res = t_call(s, sid, "strobe_profile_read", "{}"); /* REQUIREs a 200 and a result */
    REQUIRE_TOOL_OK(res);
    json_decref(res);
  }
  /* keep trickling past two deadlines, so every first connection met its own */
  double left = 2 * 2000 + 1000 - (fx_now_ms() - t0);
  if (left > 0) fx_sleep_ms((unsigned)left);
  trickle_stop(&t);
  strobe_server_stats st = strobe_server_query_stats(s);
  fprintf(stderr, "slow clients: %u connects, %u closed by the server (longest lived %.0f ms), %u failed; "
                  "server: %llu timed out, %llu shed\n",
          t.connects, t.closed_by_server, t.max_life_ms, t.connect_failures,
          (unsigned long long)st.connections_timed_out, (unsigned long long)st.connections_shed);
  CHECK(t.closed_by_server >= 600);
  /* closed within the deadline: 2 s from accept, plus slack for a loaded machine */
  CHECK(t.max_life_ms <= 2000 + 1500);
  CHECK(t.max_open_ms <= 2000 + 1500);
  CHECK(st.connections_shed > 0); /* 600 > max_connections (256): the cap was hit (shedding may close
                                     every one before its deadline: request_deadline checks that) */
}

static void test_token_file(void) {
  /* generated token: written 0600 at token_file, the server answers to it, the file goes at stop */
  char path[256];
  snprintf(path, sizeof path, "/tmp/strobe-test-%ld.token", (long)getpid());
  unlink(path);
  strobe_server_desc d = {.token_file = path, .quiet = 1};
  unsetenv("STROBE_TOKEN");
  strobe_server *s = NULL;
  REQUIRE(strobe_server_start(&d, &s) == 0);
  CHECK(!strcmp(strobe_server_query_token_file(s), path));
  struct stat st;
  CHECK(stat(path, &st) == 0);
  CHECK_EQ_INT(st.st_mode & 0777, 0600);
  FILE *f = fopen(path, "r");
  char tok[600] = "";
  CHECK(fgets(tok, sizeof tok, f));
  fclose(f);
  tok[strcspn(tok, "\n")] = 0;
  CHECK_EQ_INT(strlen(tok), 64);
  char h[700];
  snprintf(h, sizeof h, "Authorization: Bearer %s\r\n", tok);
  expect_status(s, "GET", "/api/info", h, NULL, 200);
  expect_status(s, "GET", "/api/info", AUTH, NULL, 401);
  strobe_server_stop(s);
  CHECK(stat(path, &st) != 0 && errno == ENOENT);

  /* a symlink planted at the path is replaced, never followed */
  char target[300];
  snprintf(target, sizeof target, "%s.target", path);
  unlink(target);
  CHECK(symlink(target, path) == 0);
  REQUIRE(strobe_server_start(&d, &s) == 0);
  CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
  CHECK(access(target, F_OK) != 0);
  strobe_server_stop(s);

  /* STROBE_TOKEN: used, and no file is written */
  setenv("STROBE_TOKEN", TEST_TOKEN, 1);
  strobe_server_desc e = {.quiet = 1};
  REQUIRE(strobe_server_start(&e, &s) == 0);
  CHECK(strobe_server_query_token_file(s) == NULL);
  expect_status(s, "GET", "/api/info", AUTH, NULL, 200);
  strobe_server_stop(s);
  unsetenv("STROBE_TOKEN");
}

static void test_desc_validation(void) {
  strobe_server *s = (strobe_server *)1;
  strobe_server_desc d = {.token = "short", .quiet = 1};
  CHECK_EQ_INT(strobe_server_start(&d, &s), STROBE_EINVAL);
  CHECK(s == NULL);
  d = (strobe_server_desc){.token = "has a space in it 0123456789", .quiet = 1};
  CHECK_EQ_INT(strobe_server_start(&d, &s), STROBE_EINVAL);
  d = (strobe_server_desc){.token = TEST_TOKEN, .bind_address = "localhost", .quiet = 1};
  CHECK_EQ_INT(strobe_server_start(&d, &s), STROBE_EINVAL); /* an IP literal, never a name to resolve */
  d = (strobe_server_desc){.token = TEST_TOKEN, .max_streams = 9, .quiet = 1};
  CHECK_EQ_INT(strobe_server_start(&d, &s), STROBE_EINVAL);
  d = (strobe_server_desc){.token = TEST_TOKEN, .tools = (uint32_t)STROBE_TOOL_ALL + 1, .quiet = 1}; /* a bit past every tool */
  CHECK_EQ_INT(strobe_server_start(&d, &s), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_server_start(NULL, NULL), STROBE_EINVAL);
  strobe_server_stop(NULL);

  /* defaults, resolved and queryable */
  strobe_server *a = t_start(NULL);
  strobe_server_desc q = strobe_server_query_desc(a);
  CHECK(!strcmp(q.bind_address, "127.0.0.1"));
  CHECK(q.port == strobe_server_query_port(a) && q.port != 0);
  CHECK(q.token == NULL);
  CHECK_EQ_U64(q.max_body_bytes, 1u << 20);
  CHECK_EQ_INT(q.max_connections, 512);
  CHECK_EQ_INT(q.idle_timeout_s, 30);
  CHECK_EQ_INT(q.request_timeout_s, 10);
  CHECK_EQ_INT(q.mcp_idle_timeout_s, 120);
  CHECK_EQ_INT(q.tools, STROBE_TOOL_ALL);
  CHECK(q.collector == strobe_default_collector());

  /* a taken port is STROBE_EBUSY */
  d = (strobe_server_desc){.token = TEST_TOKEN, .port = strobe_server_query_port(a), .quiet = 1};
  CHECK_EQ_INT(strobe_server_start(&d, &s), STROBE_EBUSY);
  strobe_server_stop(a);
}

#define CASES(X)      \
  X(desc_validation)  \
  X(auth)             \
  X(host_origin)      \
  X(limits)           \
  X(methods)          \
  X(token_file)       \
  X(idle_connections) \
  X(idle_timeout)     \
  X(request_deadline) \
  X(slow_clients)
HARNESS_MAIN(CASES)
