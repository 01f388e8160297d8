/*
 * test_server_mcp.c — JSON-RPC and MCP session rules at /mcp (MCP 2025-11-25,
 * Streamable HTTP, docs/server.md "MCP"): initialize and version
 * negotiation, ids echoed exactly, errors -32700/-32600/-32601/-32602 in
 * HTTP 200 bodies with no extra top-level keys, notifications and client
 * responses → 202 with no body, ping, the MCP session table (ids, DELETE,
 * limit, idle expiry), and strobe__mcp_handle without HTTP (what the fuzzer
 * drives).
 */
#include "server/server_internal.h"
#include "server_test.h"

/* POSTs body in session sid and checks the exact reply text. */
static void expect_reply(strobe_server *s, const char *sid, const char *body, const char *want) {
  cli_http_response r = t_mcp_post(s, sid, body);
  if (r.status != 200 || strcmp(r.body, want) != 0)
    fprintf(stderr, "for %s\n got %d %s\nwant 200 %s\n", body, r.status, r.body, want);
  CHECK_EQ_INT(r.status, 200);
  CHECK(!strcmp(r.body, want));
  char ct[64];
  CHECK(cli_http_header(&r, "Content-Type", ct, sizeof ct) && !strcmp(ct, "application/json"));
  cli_http_response_free(&r);
}

static void expect_code(strobe_server *s, const char *sid, const char *body, int code, const char *id_json) {
  cli_http_response r = t_mcp_post(s, sid, body);
  CHECK_EQ_INT(r.status, 200);
  json_t *v = t_json(&r);
  if (t_rpc_code(&r) != code) fprintf(stderr, "for %s got %s\n", body, r.body);
  CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(v, "error"), "code")), code);
  CHECK(!json_object_get(v, "result"));
  CHECK(json_is_string(json_object_get(json_object_get(v, "error"), "message")));
  json_t *id = json_object_get(v, "id");
  if (id_json) {
    char *got = json_dumps(id, JSON_ENCODE_ANY);
    CHECK(!strcmp(got, id_json));
    free(got);
    CHECK_EQ_INT(json_object_size(v), 3); /* jsonrpc, id, error: nothing else */
  } else {
    CHECK(id == NULL); /* unreadable id: omitted, never null */
    CHECK_EQ_INT(json_object_size(v), 2);
  }
  json_decref(v);
  cli_http_response_free(&r);
}

static void test_initialize(void) {
  strobe_server *s = t_server(NULL);
  /* echo a supported version; the session id header is visible ASCII */
  cli_http_response r = t_mcp_post(s, NULL,
                                   "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
                                   "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":"
                                   "\"t\",\"version\":\"1\"}}}");
  CHECK_EQ_INT(r.status, 200);
  char sid[80];
  REQUIRE(cli_http_header(&r, "Mcp-Session-Id", sid, sizeof sid));
  for (const char *p = sid; *p; p++) CHECK(*p >= 0x21 && *p <= 0x7e);
  json_t *v = t_json(&r);
  CHECK_EQ_INT(json_object_size(v), 3);
  CHECK(json_integer_value(json_object_get(v, "id")) == 0 && json_is_integer(json_object_get(v, "id")));
  json_t *res = json_object_get(v, "result");
  CHECK(!strcmp(json_string_value(json_object_get(res, "protocolVersion")), "2025-06-18"));
  CHECK(json_is_false(json_object_get(json_object_get(json_object_get(res, "capabilities"), "tools"), "listChanged")));
  json_t *info = json_object_get(res, "serverInfo");
  CHECK(!strcmp(json_string_value(json_object_get(info, "name")), "strobe"));
  CHECK(!strcmp(json_string_value(json_object_get(info, "version")), strobe_version()));
  json_decref(v);
  cli_http_response_free(&r);

  /* an unsupported requested version: the server answers with its own latest */
  r = t_mcp_post(s, NULL,
                 "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                 "\"2099-01-01\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
  v = t_json(&r);
  CHECK(!strcmp(json_string_value(json_object_get(json_object_get(v, "result"), "protocolVersion")), "2025-11-25"));
  CHECK(!strcmp(json_string_value(json_object_get(v, "id")), "init"));
  char sid2[80];
  CHECK(cli_http_header(&r, "Mcp-Session-Id", sid2, sizeof sid2) && strcmp(sid, sid2) != 0);
  json_decref(v);
  cli_http_response_free(&r);
}

static void test_errors(void) {
  strobe_server *s = t_server(NULL);
  char sid[80];
  t_mcp_init(s, sid);
  /* -32700: malformed JSON, duplicate keys, empty body, a bare scalar */
  expect_code(s, sid, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":", -32700, NULL);
  expect_code(s, sid, "{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"ping\"}", -32700, NULL);
  expect_code(s, sid, "", -32700, NULL);
  expect_code(s, sid, "42", -32700, NULL);
  expect_code(s, sid, "{\"a\":\"\\u0000\"}", -32700, NULL);
  /* -32600: wrong shapes; the id is echoed when it is readable */
  expect_code(s, sid, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", -32600, NULL);
  expect_code(s, sid, "[]", -32600, NULL);
  expect_code(s, sid, "{\"jsonrpc\":\"1.0\",\"id\":5,\"method\":\"ping\"}", -32600, "5");
  expect_code(s, sid, "{\"id\":5,\"method\":\"ping\"}", -32600, "5");
  expect_code(s, sid, "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", -32600, NULL);
  expect_code(s, sid, "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", -32600, NULL);
  expect_code(s, sid, "{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"ping\"}", -32600, NULL);
  expect_code(s, sid, "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":7}", -32600, "\"x\"");
  expect_code(s, sid, "{\"jsonrpc\":\"2.0\",\"id\":\"x\"}", -32600, "\"x\"");
  expect_code(s, sid, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"params\":\"p\"}", -32600, "3");
  /* valid JSON with an integer beyond the signed 64-bit range is no parse
   * error: -32600, the id echoed when it is a string, else omitted (it
   * cannot be echoed exactly) */
  expect_code(s, sid, "{\"jsonrpc\":\"2.0\",\"id\":18446744073709551616,\"method\":\"ping\"}", -32600, NULL);
  expect_code(s, sid, "{\"jsonrpc\":\"2.0\",\"id\":-9223372036854775809,\"method\":\"ping\"}", -32600, NULL);
  expect_code(s, sid,
              "{\"jsonrpc\":\"2.0\",\"id\":\"big\",\"method\":\"tools/call\",\"params\":{\"name\":"
              "\"strobe_profile_start\",\"arguments\":{\"max_samples\":18446744073709551616}}}",
              -32600, "\"big\"");
  /* ...but malformed JSON with such a number stays a parse error */
  expect_code(s, sid, "{\"jsonrpc\":\"2.0\",\"id\":18446744073709551616,\"method\":}", -32700, NULL);
  /* -32601: unknown methods */
  expect_code(s, sid, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"resources/list\"}", -32601, "9");
  expect_code(s, sid, "{\"jsonrpc\":\"2.0\",\"id\":\"m\",\"method\":\"\"}", -32601, "\"m\"");
  /* -32602: unknown tool, malformed tools/call params */
  expect_code(s, sid,
              "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"rm_rf\","
              "\"arguments\":{}}}",
              -32602, "4");
  expect_code(s, sid, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{}}", -32602, "4");
  expect_code(s, sid,
              "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
              "\"strobe_profile_read\",\"arguments\":[1]}}",
              -32602, "4");
  expect_code(s, sid, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":[1]}", -32602, "4");
}

static void test_ids_and_notifications(void) {
  strobe_server *s = t_server(NULL);
  char sid[80];
  t_mcp_init(s, sid);
  /* ids exactly as sent: 0, negative, beyond 2^53, strings with escapes */
  expect_reply(s, sid, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}");
  expect_reply(s, sid, "{\"jsonrpc\":\"2.0\",\"id\":-17,\"method\":\"ping\"}",
               "{\"jsonrpc\":\"2.0\",\"id\":-17,\"result\":{}}");
  expect_reply(s, sid, "{\"jsonrpc\":\"2.0\",\"id\":9007199254740993,\"method\":\"ping\"}",
               "{\"jsonrpc\":\"2.0\",\"id\":9007199254740993,\"result\":{}}");
  expect_reply(s, sid, "{\"jsonrpc\":\"2.0\",\"id\":9223372036854775807,\"method\":\"ping\"}",
               "{\"jsonrpc\":\"2.0\",\"id\":9223372036854775807,\"result\":{}}");
  expect_reply(s, sid, "{\"jsonrpc\":\"2.0\",\"id\":-9223372036854775808,\"method\":\"ping\"}",
               "{\"jsonrpc\":\"2.0\",\"id\":-9223372036854775808,\"result\":{}}");
  expect_reply(s, sid, "{\"method\":\"ping\",\"id\":\"a\\\"b\",\"jsonrpc\":\"2.0\",\"params\":{}}",
               "{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\",\"result\":{}}");
  expect_reply(s, sid, "{\"jsonrpc\":\"2.0\",\"id\":\"\",\"method\":\"ping\"}",
               "{\"jsonrpc\":\"2.0\",\"id\":\"\",\"result\":{}}");
  /* notifications and client responses: 202, no body */
  const char *accepted[] = {
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":3}}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"no/such/notification\"}",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
      "{\"jsonrpc\":\"2.0\",\"id\":\"e\",\"error\":{\"code\":-1,\"message\":\"x\"}}",
  };
  for (size_t i = 0; i < sizeof accepted / sizeof *accepted; i++) {
    cli_http_response r = t_mcp_post(s, sid, accepted[i]);
    CHECK_EQ_INT(r.status, 202);
    CHECK_EQ_INT(r.body_len, 0);
    cli_http_response_free(&r);
  }
  /* tools/list: every tool of STROBE_SERVER_TOOLS, in its order, under its
   * name, each inputSchema with type object */
  static const char *const names[] = {
#define NAME(id, bit, name) name,
      STROBE_SERVER_TOOLS(NAME)
#undef NAME
  };
  size_t ntools = sizeof names / sizeof *names;
  cli_http_response r = t_mcp_post(s, sid, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{}}");
  json_t *v = t_json(&r);
  json_t *tools = json_object_get(json_object_get(v, "result"), "tools");
  CHECK_EQ_INT(json_array_size(tools), ntools);
  for (size_t i = 0; i < ntools; i++) {
    json_t *t = json_array_get(tools, i);
    CHECK(!strcmp(json_string_value(json_object_get(t, "name")), names[i]));
    CHECK(!strcmp(json_string_value(json_object_get(json_object_get(t, "inputSchema"), "type")), "object"));
    CHECK(!strcmp(json_string_value(json_object_get(json_object_get(t, "outputSchema"), "type")), "object"));
    CHECK(json_is_string(json_object_get(t, "description")));
  }
  json_decref(v);
  cli_http_response_free(&r);
}

static void test_session_table(void) {
  /* 5 s: the steps before the wait stay within it on a loaded machine (sanitizer builds are slow) */
  strobe_server_desc d = {.max_mcp_sessions = 2, .mcp_idle_timeout_s = 5};
  strobe_server *s = t_start(&d);
  char a[80], b[80];
  t_mcp_init(s, a);
  t_mcp_init(s, b);
  /* the table is full: initialize is refused with 503 and a JSON-RPC error */
  cli_http_response r = t_mcp_post(s, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}");
  CHECK_EQ_INT(r.status, 503);
  CHECK_EQ_INT(t_rpc_code(&r), -32603);
  cli_http_response_free(&r);
  /* a profiling session of A: expiry cancels it */
  double t_last = fx_now_ms(); /* A's last request ends after this */
  json_t *res = t_call(s, a, "strobe_profile_start", "{}");
  REQUIRE_TOOL_OK(res);
  char pid[32];
  snprintf(pid, sizeof pid, "%s", json_string_value(json_object_get(t_sc(res), "id")));
  json_decref(res);
  CHECK_EQ_INT(strobe_collector_query_session_count(strobe_default_collector()), 1);
  uint64_t powner = t_owner_of(strobe_default_collector(), pid);
  /* the server's watchdog expires both once idle past 5 s, with no request needed to notice */
  double t0 = fx_now_ms();
  while (strobe_server_query_stats(s).mcp_sessions_expired < 2) {
    REQUIRE(fx_now_ms() - t0 < 60000);
    fx_sleep_ms(50);
  }
  CHECK(fx_now_ms() - t_last >= 4990); /* not before A was idle for 5 s */
  r = t_mcp_post(s, a, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
  CHECK_EQ_INT(r.status, 404); /* expired */
  cli_http_response_free(&r);
  CHECK_EQ_INT(strobe_collector_query_session_count(strobe_default_collector()), 0);
  strobe_server_stats st = strobe_server_query_stats(s);
  CHECK_EQ_U64(st.mcp_sessions_expired, 2);
  CHECK_EQ_U64(st.mcp_sessions, 0);
  CHECK(st.mcp_cancelled >= 1);
  /* and the id now answers "cancelled" in-process */
  strobe_report *rep;
  CHECK_EQ_INT(strobe_session_read(strobe_default_collector(), pid, powner, &rep), STROBE_ECANCELLED);
  t_mcp_init(s, a); /* room again */
  strobe_server_stop(s);
}

/* The number after "expires in " in a message, or -1. */
static long expires_in_s(const char *msg) {
  const char *p = msg ? strstr(msg, "expires in ") : NULL;
  return p ? strtol(p + 11, NULL, 10) : -1;
}

/* docs/server.md §MCP: a client that starts profiling and vanishes (no
 * DELETE, no further request) loses its MCP session after
 * mcp_idle_timeout_s, and its profiling sessions are cancelled then, with no
 * other request needed to notice. While its sessions hold every slot, the
 * refusal says which limit and when the idle client expires. */
static void test_abandoned_client(void) {
  strobe_server_desc d = {.mcp_idle_timeout_s = 3, .max_mcp_sessions = 2};
  strobe_server *s = t_server(&d);
  strobe_collector *c = strobe_default_collector();
  char a[80], b[80];
  t_mcp_init(s, a);
  json_t *res;
  for (int i = 0; i < STROBE_MAX_SESSIONS; i++) {
    res = t_call(s, a, "strobe_profile_start", "{}");
    REQUIRE_TOOL_OK(res);
    json_decref(res);
  }
  double t_last = fx_now_ms(); /* A's last request */
  t_mcp_init(s, b);
  /* every slot is A's: B's refusal names the limit and A's expiry */
  res = t_call(s, b, "strobe_profile_start", "{}");
  CHECK_TOOL_ERROR(res, "limit_reached");
  const char *msg = json_string_value(json_object_get(t_sc(res), "message"));
  long in_s = expires_in_s(msg);
  if (in_s < 1 || in_s > 3) fprintf(stderr, "limit_reached: %s\n", msg ? msg : "(none)");
  CHECK(in_s >= 1 && in_s <= 3);
  json_decref(res);
  /* the MCP session table is full too: initialize's 503 says when one expires */
  cli_http_response r = t_mcp_post(s, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}");
  CHECK_EQ_INT(r.status, 503);
  json_t *v = t_json(&r);
  in_s = expires_in_s(json_string_value(json_object_get(json_object_get(v, "error"), "message")));
  CHECK(in_s >= 1 && in_s <= 3);
  json_decref(v);
  cli_http_response_free(&r);
  /* A has vanished, and B is silent too: no request reaches the server, yet
   * A's sessions end once it has been idle 3 s. */
  int count = STROBE_MAX_SESSIONS;
  while (fx_now_ms() - t_last < 10000) {
    count = strobe_collector_query_session_count(c);
    if (count == 0) break;
    fx_sleep_ms(50);
  }
  double ended_after = fx_now_ms() - t_last;
  CHECK_EQ_INT(count, 0);
  CHECK(ended_after >= 3000 - 50); /* not before its time */
  CHECK(ended_after <= 3000 + 2000); /* and soon after it */
  strobe_server_stats st = strobe_server_query_stats(s);
  CHECK(st.mcp_sessions_expired >= 1);
  CHECK(st.mcp_cancelled >= STROBE_MAX_SESSIONS);
  /* the slots are free again (B expired as well: a new MCP session) */
  t_mcp_init(s, b);
  res = t_call(s, b, "strobe_profile_start", "{}");
  REQUIRE_TOOL_OK(res);
  json_decref(res);
}

/* The handler without HTTP, as fuzz/fuzz_jsonrpc.c drives it. */
static void test_direct(void) {
  strobe_collector *c;
  REQUIRE(strobe_collector_create(&c) == 0);
  strobe__perms perms = {.mcp_enabled = 1, .observe = 1, .tools = STROBE_TOOL_ALL};
  strobe__mutex_init(&perms.lock);
  strobe__mcp_config cfg = {c, &perms, 4, 600, NULL};
  strobe__mcp *m;
  REQUIRE(strobe__mcp_create(&cfg, &m) == 0);
  strobe__mcp_request req = {NULL, NULL, 1000, NULL};
  strobe__mcp_response resp;
  const char init[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}";
  strobe__mcp_handle(m, &req, init, sizeof init - 1, &resp);
  CHECK_EQ_INT(resp.http_status, 200);
  CHECK_EQ_INT(strlen(resp.session_id), STROBE__MCP_SID_LEN);
  char sid[STROBE__MCP_SID_LEN + 1];
  strcpy(sid, resp.session_id);
  strobe__mcp_response_free(&resp);
  req.session_id = sid;
  const char start[] =
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"strobe_profile_start\"}}";
  strobe__mcp_handle(m, &req, start, sizeof start - 1, &resp);
  CHECK_EQ_INT(resp.http_status, 200);
  CHECK(strstr(resp.body, "\"id\":\"profile_1\""));
  strobe__mcp_response_free(&resp);
  CHECK_EQ_INT(strobe_collector_query_session_count(c), 1);
  strobe__mcp_handle(m, &req, "{", 1, &resp);
  CHECK_EQ_INT(resp.http_status, 200);
  CHECK(strstr(resp.body, "-32700"));
  strobe__mcp_response_free(&resp);
  strobe__mcp_destroy(m); /* cancels what its sessions started */
  CHECK_EQ_INT(strobe_collector_query_session_count(c), 0);
  strobe__mutex_destroy(&perms.lock);
  strobe_collector_release(c);
}

/* Idle is counted from the end of a session's last request, and a session
 * whose request is still running is never idle: the handler's end-of-request
 * clock stands in for a tool call that outlasts the timeout, and expires the
 * table while the call is still running. */
static strobe__mcp *g_slow_mcp;
static uint64_t g_slow_end_ms;
static uint64_t g_expired_during_call;
static uint64_t slow_request_end(void) {
  strobe__mcp_expire(g_slow_mcp, g_slow_end_ms); /* the reaper, during the call */
  g_expired_during_call = strobe__mcp_query(g_slow_mcp).expired;
  return g_slow_end_ms;
}

static void test_slow_request_not_idle(void) {
  strobe_collector *c;
  REQUIRE(strobe_collector_create(&c) == 0);
  strobe__perms perms = {.mcp_enabled = 1, .observe = 1, .tools = STROBE_TOOL_ALL};
  strobe__mutex_init(&perms.lock);
  strobe__mcp_config cfg = {c, &perms, 2, 3, NULL}; /* idle: 3 s */
  REQUIRE(strobe__mcp_create(&cfg, &g_slow_mcp) == 0);
  strobe__mcp_request req = {NULL, NULL, 1000, NULL};
  strobe__mcp_response resp;
  const char init[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}";
  strobe__mcp_handle(g_slow_mcp, &req, init, sizeof init - 1, &resp);
  REQUIRE(resp.http_status == 200);
  char sid[STROBE__MCP_SID_LEN + 1];
  strcpy(sid, resp.session_id);
  strobe__mcp_response_free(&resp);
  /* a call arriving at 2 s that ends at 9 s: 7 s in flight */
  req = (strobe__mcp_request){sid, NULL, 2000, slow_request_end};
  g_slow_end_ms = 9000;
  const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}";
  strobe__mcp_handle(g_slow_mcp, &req, ping, sizeof ping - 1, &resp);
  CHECK_EQ_INT(resp.http_status, 200);
  strobe__mcp_response_free(&resp);
  CHECK_EQ_INT(g_expired_during_call, 0); /* running: not idle */
  /* 2.9 s after the call ended it is still open; at 3 s it expires */
  CHECK_EQ_INT(strobe__mcp_expire(g_slow_mcp, 11900), 12000);
  CHECK_EQ_INT(strobe__mcp_query(g_slow_mcp).expired, 0);
  strobe__mcp_expire(g_slow_mcp, 12000);
  CHECK_EQ_INT(strobe__mcp_query(g_slow_mcp).expired, 1);
  strobe__mcp_destroy(g_slow_mcp);
  strobe__mutex_destroy(&perms.lock);
  strobe_collector_release(c);
}

#define CASES(X)           \
  X(initialize)            \
  X(errors)                \
  X(ids_and_notifications) \
  X(session_table)         \
  X(abandoned_client)      \
  X(slow_request_not_idle) \
  X(direct)
HARNESS_MAIN(CASES)
