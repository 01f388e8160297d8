/*
 * bench_server.c — the embedded server's budgets (issue "Embedded server"),
 * measured in one run against a real libstrobe_server on loopback:
 *
 *   mcp_call_ms_p99          tools/call strobe_profile_read of a 120-sample
 *                            session over HTTP (one connection per call, as
 *                            a client without keep-alive would) while the
 *                            application renders passes flat out on another
 *                            thread (budget <= 5 ms); p50 printed too;
 *   server_connections_held  idle connections held open (half of them with a
 *                            half-sent request: slow clients) while a new
 *                            authenticated request still answers 200
 *                            (budget >= 256; 400 are offered);
 *   slow_client_mcp_ms_p99   50 MCP calls (ping, one connection each) while
 *                            600 clients trickle header bytes (one every
 *                            300 ms, reconnecting when closed: more than
 *                            max_connections), budget <= 50 ms; printed
 *                            with the same 50 calls' p99 without them
 *                            (slow_client_mcp_ms_p99_quiet) and the ratio;
 *   server_idle_cpu_pct      process CPU (getrusage) over 5 s with the
 *                            server up, those connections held and no
 *                            requests (budget <= 1 %: ≈ 0; the library's
 *                            drain thread wakes 5 times a second).
 *
 * Budgets are printed, never asserted.
 */
/* STROBE_BENCH_NEEDS: server */
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "floor.h"
#include "http_client.h"
#include "server/trickle.h"
#include "strobe/server.h"
#include "strobe/session.h"

#define TOKEN "bench-token-0123456789abcdef"
#define AUTH "Authorization: Bearer " TOKEN "\r\n"
#define CALLS 500
#define WARMUP 30
#define OFFERED_CONNECTIONS 400
#define IDLE_SECONDS 5
#define SLOW_CALLS 50

static strobe_collector *g_c;
static strobe_window g_main;
static int g_run = 1; /* atomic */
static uint64_t g_frames; /* atomic */

static void *render_flat_out(void *arg) {
  (void)arg;
  while (__atomic_load_n(&g_run, __ATOMIC_ACQUIRE)) {
    strobe_op op = strobe_op_begin(g_c, g_main, STROBE_OP_PASS, NULL);
    {
      STROBE_STAGE("layout", NULL);
      STROBE_STAGE("layout_compute", "layout");
    }
    {
      STROBE_STAGE("render", NULL);
    }
    strobe_op_end(op, 1);
    __atomic_fetch_add(&g_frames, 1, __ATOMIC_RELAXED);
  }
  return NULL;
}

static int post(const cli_http_url *u, const char *sid, const char *body, cli_http_response *r) {
  char h[256];
  snprintf(h, sizeof h, AUTH "Content-Type: application/json\r\n%s%s%s", sid ? "Mcp-Session-Id: " : "",
           sid ? sid : "", sid ? "\r\n" : "");
  const char *why;
  return cli_http_request(u, "POST", "/mcp", h, body, strlen(body), 10000, 64u << 20, r, &why);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(void) {
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur < 4096 && rl.rlim_max >= 4096) {
    rl.rlim_cur = 4096;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  g_c = strobe_default_collector();
  strobe_window_register(g_c, "main", 0, &g_main);
  strobe_server_desc d = {.token = TOKEN, .quiet = 1};
  strobe_server *s;
  if (strobe_server_start(&d, &s)) {
    fprintf(stderr, "bench_server: cannot start the server\n");
    return 1;
  }
  cli_http_url u;
  const char *why;
  char url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%u/mcp", (unsigned)strobe_server_query_port(s));
  cli_http_parse_url(url, &u, &why);

  /* >>mcp_call_ms_p99 */
  pthread_t th;
  pthread_create(&th, NULL, render_flat_out, NULL);
  cli_http_response r;
  if (post(&u, NULL, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{}}", &r)) return 1;
  char sid[80] = "";
  cli_http_header(&r, "Mcp-Session-Id", sid, sizeof sid);
  cli_http_response_free(&r);
  post(&u, sid,
       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"strobe_profile_start\","
       "\"arguments\":{\"max_samples\":120}}}",
       &r);
  int ok = strstr(r.body, "\"id\":\"profile_") != NULL;
  cli_http_response_free(&r);
  if (!ok) {
    fprintf(stderr, "bench_server: strobe_profile_start failed\n");
    return 1;
  }
  const char *read_body =
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"strobe_profile_read\","
      "\"arguments\":{\"id\":\"profile_1\"}}}";
  usleep(100000); /* the ring fills to 120 samples */
  static double ms[CALLS];
  size_t bytes = 0;
  for (int i = 0; i < WARMUP + CALLS; i++) {
    uint64_t t0 = fx_now_ns();
    int rc = post(&u, sid, read_body, &r);
    uint64_t t1 = fx_now_ns();
    if (rc || r.status != 200 || strstr(r.body, "\"isError\":true")) {
      fprintf(stderr, "bench_server: read failed (%d)\n", r.status);
      return 1;
    }
    bytes = r.body_len;
    cli_http_response_free(&r);
    if (i >= WARMUP) ms[i - WARMUP] = (double)(t1 - t0) / 1e6;
  }
  qsort(ms, CALLS, sizeof *ms, cmp_double);
  uint64_t frames = __atomic_load_n(&g_frames, __ATOMIC_RELAXED);
  __atomic_store_n(&g_run, 0, __ATOMIC_RELEASE);
  pthread_join(th, NULL);
  printf("BENCH mcp_call_ms_p50 %.3f ms\n", ms[CALLS / 2]);
  printf("BENCH mcp_call_ms_p99 %.3f ms\n", ms[CALLS * 99 / 100]);
  printf("BENCH mcp_call_response_bytes %zu bytes\n", bytes);
  printf("BENCH mcp_call_frames_rendered %llu frames\n", (unsigned long long)frames);
  bench_budget_le("mcp_call_ms_p99", ms[CALLS * 99 / 100], 5.0);

  /* >>slow_client_mcp_ms_p99: the same 50 pings without, then with, 600 trickling clients */
  static double quiet[SLOW_CALLS], slow[SLOW_CALLS];
  static trickle tr;
  for (int pass = 0; pass < 2; pass++) {
    double *out = pass ? slow : quiet;
    if (pass && trickle_start(&tr, strobe_server_query_port(s), 600, 300, 20000) != 0) return 1;
    if (pass) usleep(500000); /* they are all in */
    for (int i = 0; i < SLOW_CALLS; i++) {
      uint64_t t0 = fx_now_ns();
      int rc = post(&u, sid, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}", &r);
      uint64_t t1 = fx_now_ns();
      if (rc || r.status != 200) {
        fprintf(stderr, "bench_server: ping %d failed%s\n", i, pass ? " among slow clients" : "");
        return 1;
      }
      cli_http_response_free(&r);
      out[i] = (double)(t1 - t0) / 1e6;
    }
    if (pass) trickle_stop(&tr);
    qsort(out, SLOW_CALLS, sizeof *out, cmp_double);
  }
  double slow_p99 = slow[SLOW_CALLS * 99 / 100], quiet_p99 = quiet[SLOW_CALLS * 99 / 100];
  printf("BENCH slow_client_mcp_ms_p99_quiet %.3f ms\n", quiet_p99);
  printf("BENCH slow_client_mcp_ms_p99 %.3f ms\n", slow_p99);
  printf("BENCH slow_client_mcp_ratio %.2f x\n", quiet_p99 > 0 ? slow_p99 / quiet_p99 : 0.0);
  printf("BENCH slow_client_connects %u connections\n", tr.connects);
  printf("BENCH slow_client_closed_by_server %u connections\n", tr.closed_by_server);
  bench_budget_le("slow_client_mcp_ms_p99", slow_p99, 50.0);

  /* >>server_connections_held */
  int fds[OFFERED_CONNECTIONS];
  int opened = 0;
  for (int i = 0; i < OFFERED_CONNECTIONS; i++) {
    fds[i] = cli_http_connect(&u);
    if (fds[i] < 0) break;
    opened++;
    if (i % 2 && write(fds[i], "GET /api/info HTTP/1.1\r\n", 24) != 24) break;
  }
  usleep(300000);
  int answered = post(&u, sid, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}", &r) == 0 && r.status == 200;
  if (answered) cli_http_response_free(&r);
  int held = 0;
  for (int i = 0; i < opened; i++) {
    char c;
    ssize_t k = recv(fds[i], &c, 1, MSG_DONTWAIT);
    if (k < 0) held++; /* nothing to read and not closed: still held */
  }
  printf("BENCH server_connections_held %d connections\n", answered ? held : 0);
  printf("BUDGET server_connections_held %d >= 256 %s\n", answered ? held : 0,
         answered && held >= 256 ? "ok" : "UNDER");

  /* >>server_idle_cpu_pct, with those connections still held */
  struct rusage a, b;
  getrusage(RUSAGE_SELF, &a);
  uint64_t w0 = fx_now_ns();
  sleep(IDLE_SECONDS);
  getrusage(RUSAGE_SELF, &b);
  uint64_t w1 = fx_now_ns();
  double cpu = (double)(b.ru_utime.tv_sec - a.ru_utime.tv_sec + b.ru_stime.tv_sec - a.ru_stime.tv_sec) +
               (double)(b.ru_utime.tv_usec - a.ru_utime.tv_usec + b.ru_stime.tv_usec - a.ru_stime.tv_usec) / 1e6;
  double pct = 100.0 * cpu / ((double)(w1 - w0) / 1e9);
  printf("BENCH server_idle_cpu_pct %.3f %%\n", pct);
  bench_budget_le("server_idle_cpu_pct", pct, 1.0);

  for (int i = 0; i < opened; i++) close(fds[i]);
  strobe_server_stop(s);
  return 0;
}
