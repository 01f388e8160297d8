/*
 * fuzz_http.c — libFuzzer target for raw HTTP request bytes through the
 * whole server (docs/server.md): libmicrohttpd's parsing (request line,
 * headers, chunked bodies), then src/server/http.c's checks (Host, Origin,
 * token, body bounds and the early 413, the request deadline and the
 * connection accounting), routing, and the MCP path (mcp.c, tools.c), the
 * /api endpoints and the viewer's.
 *
 * Driving libmicrohttpd in-process without its sockets is not possible (it
 * owns the connection state machine), so each input goes over a loopback
 * TCP connection to a server started once in this process: the bytes are
 * written, the write side is shut, and the answer read until it is whole
 * or the server closes (at most 64 KiB; 100 ms without a byte ends it). A "@SID" in the input is replaced by the
 * live MCP session id (initialized at start), so seeds reach the tools.
 *
 * Beyond ASan/UBSan: every answer starts with an HTTP/1.x status line with a
 * 3-digit status, and every 256 inputs a known-good request must still be
 * answered 200 (the server survived and is not wedged).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/server_internal.h"

#define TOKEN "fuzz-token-0123456789abcdef"

static strobe_server *g_srv;
static uint16_t g_port;
static char g_sid[STROBE__MCP_SID_LEN + 1];
static unsigned g_runs;

static int connect_loopback(void) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons(g_port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) return fd;
  /* libFuzzer's -timeout alarm (SIGALRM) may interrupt the call: the
   * connection then completes on its own, and SO_ERROR says how it ended. */
  if (errno == EINTR) {
    struct pollfd p = {fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    int r;
    while ((r = poll(&p, 1, 5000)) < 0 && errno == EINTR) {
    }
    if (r == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) return fd;
  }
  close(fd);
  return -1;
}

/* 1 when buf holds a whole response: its headers and, when it declares a
 * Content-Length, that much body (a chunked one, through its last chunk). A
 * server that answered may keep the connection open (keep-alive), so the
 * end of the answer, not of the connection, ends the exchange. */
static int complete(const char *buf, size_t n) {
  const char *end = strstr(buf, "\r\n\r\n");
  if (!end) return 0;
  size_t head = (size_t)(end - buf) + 4;
  const char *cl = strcasestr(buf, "\r\nContent-Length: ");
  if (cl && cl < end) return n >= head + strtoull(cl + 18, NULL, 10);
  const char *te = strcasestr(buf, "\r\nTransfer-Encoding: chunked");
  if (te && te < end) return strstr(end + 4, "\r\n0\r\n\r\n") != NULL || (n - head >= 5 && !strncmp(end + 4, "0\r\n\r\n", 5));
  return 0; /* no length: until the server closes */
}

/* Sends `req`, shuts the write side, reads the answer into buf
 * (NUL-terminated) until it is whole, the server closes, or nothing came
 * for `quiet_ms`. libmicrohttpd may not notice the end of a cut request
 * until the request deadline (request_timeout_s) closes it: the fuzzer does
 * not wait for that (those connections pile up and exercise the cap). */
static size_t exchange(const char *req, size_t len, char *buf, size_t cap, int quiet_ms) {
  int fd = connect_loopback();
  if (fd < 0) { /* the server must keep accepting */
    fprintf(stderr, "fuzz_http: connect to the server failed: %s\n", strerror(errno));
    abort();
  }
  size_t off = 0;
  while (off < len) {
    ssize_t k = send(fd, req + off, len - off, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue; /* the -timeout alarm, not the server */
    if (k <= 0) break; /* the server may refuse early (413, 431) and close */
    off += (size_t)k;
  }
  shutdown(fd, SHUT_WR);
  size_t got = 0;
  while (got + 1 < cap) {
    struct pollfd p = {fd, POLLIN, 0};
    int r = poll(&p, 1, quiet_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r != 1) break;
    ssize_t k = recv(fd, buf + got, cap - 1 - got, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    got += (size_t)k;
    buf[got] = 0;
    if (complete(buf, got)) break;
  }
  buf[got] = 0;
  close(fd);
  return got;
}

static void setup(void) {
  signal(SIGPIPE, SIG_IGN);
  strobe_collector *c = strobe_default_collector();
  strobe_window w;
  if (c) strobe_window_register(c, "main", 0, &w);
  strobe_server_desc d = {.token = TOKEN, .quiet = 1, .max_body_bytes = 8192, .max_header_bytes = 4096,
                          .request_timeout_s = 1, .max_connections = 64, .max_streams = 1};
  if (strobe_server_start(&d, &g_srv)) abort();
  g_port = strobe_server_query_port(g_srv);
  static const char init[] =
      "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " TOKEN
      "\r\nContent-Type: application/json\r\nContent-Length: 58\r\n\r\n"
      "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{}}";
  static char buf[65536];
  exchange(init, sizeof init - 1, buf, sizeof buf, 5000);
  const char *h = strstr(buf, "Mcp-Session-Id: ");
  if (!h) abort();
  memcpy(g_sid, h + 16, STROBE__MCP_SID_LEN);
  g_sid[STROBE__MCP_SID_LEN] = 0;
}

static void check_answer(const char *buf, size_t n) {
  if (n == 0) return; /* closed without an answer: a malformed or cut request */
  if (n < 12 || (strncmp(buf, "HTTP/1.1 ", 9) != 0 && strncmp(buf, "HTTP/1.0 ", 9) != 0)) abort();
  for (int i = 9; i < 12; i++)
    if (buf[i] < '0' || buf[i] > '9') abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!g_srv) setup();
  if (size > 65536) return 0;
  /* "@SID" becomes the live MCP session id */
  static char req[65536 * 17];
  size_t n = 0;
  for (size_t i = 0; i < size; i++) {
    if (i + 4 <= size && !memcmp(data + i, "@SID", 4)) {
      memcpy(req + n, g_sid, STROBE__MCP_SID_LEN);
      n += STROBE__MCP_SID_LEN;
      i += 3;
    } else {
      req[n++] = (char)data[i];
    }
  }
  static char buf[65536];
  check_answer(buf, exchange(req, n, buf, sizeof buf, 100));
  if (++g_runs % 256 == 0) {
    static const char ok[] = "GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " TOKEN "\r\n\r\n";
    exchange(ok, sizeof ok - 1, buf, sizeof buf, 5000);
    if (strncmp(buf, "HTTP/1.1 200", 12) != 0) abort();
  }
  return 0;
}
