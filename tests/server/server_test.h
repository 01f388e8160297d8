/*
 * server_test.h — what the server tests share: a server on a free loopback
 * port with a known token, HTTP requests through the `strobe` tool's
 * loopback client (tools/strobe/io/http_client.c), and MCP helpers
 * (initialize, tools/call) that parse replies with jansson.
 */
#ifndef STROBE_TESTS_SERVER_TEST_H
#define STROBE_TESTS_SERVER_TEST_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/fixtures.h"
#include "support/harness.h"
#include "http_client.h"
#include "strobe/server.h"
#include "strobe/session.h"

#define TEST_TOKEN "test-token-0123456789abcdef"
#define AUTH "Authorization: Bearer " TEST_TOKEN "\r\n"
#define JSON_CT "Content-Type: application/json\r\n"

static inline strobe_server *t_start(strobe_server_desc *d) {
  strobe_server_desc def = {0};
  if (!d) d = &def;
  if (!d->token) d->token = TEST_TOKEN;
  d->quiet = 1;
  strobe_server *s = NULL;
  int rc = strobe_server_start(d, &s);
  REQUIREF(rc == 0 && s, "strobe_server_start: %s", strobe_strerror(rc));
  return s;
}

static void t_stop_deferred(void *s) { strobe_server_stop((strobe_server *)s); }

/* A server for the running case, stopped when the case ends (harness_defer),
 * even when a REQUIRE stopped it. */
static inline strobe_server *t_server(strobe_server_desc *d) {
  strobe_server *s = t_start(d);
  harness_defer(t_stop_deferred, s);
  return s;
}

static inline cli_http_url t_url(strobe_server *s) {
  cli_http_url u;
  const char *why;
  char text[64];
  snprintf(text, sizeof text, "http://127.0.0.1:%u/mcp", (unsigned)strobe_server_query_port(s));
  REQUIRE(cli_http_parse_url(text, &u, &why) == 0);
  return u;
}

/* One request; fails the test when no response arrives. */
static inline cli_http_response t_req(strobe_server *s, const char *method, const char *path, const char *headers,
                                      const char *body) {
  cli_http_url u = t_url(s);
  cli_http_response r;
  const char *why = "";
  int rc = cli_http_request(&u, method, path, headers, body, body ? strlen(body) : 0, 10000, 64u << 20, &r, &why);
  REQUIREF(rc == 0, "%s %s: %s", method, path, why);
  return r;
}

/* POST /mcp with the token (and session id, when given); returns the response. */
static inline cli_http_response t_mcp_post(strobe_server *s, const char *session, const char *body) {
  char h[512];
  snprintf(h, sizeof h, AUTH JSON_CT "%s%s%s", session ? "Mcp-Session-Id: " : "", session ? session : "",
           session ? "\r\n" : "");
  return t_req(s, "POST", "/mcp", h, body);
}

static inline json_t *t_json(const cli_http_response *r) {
  json_error_t e;
  json_t *v = json_loadb(r->body, r->body_len, 0, &e);
  REQUIREF(v != NULL, "bad JSON (%s): %.*s", e.text, (int)r->body_len, r->body);
  return v;
}

/* Initializes an MCP session; writes its id (64 hex digits) to sid. */
static inline void t_mcp_init(strobe_server *s, char sid[80]) {
  cli_http_response r = t_mcp_post(
      s, NULL,
      "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
      "\"capabilities\":{},\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}");
  CHECK_EQ_INT(r.status, 200);
  REQUIRE(cli_http_header(&r, "Mcp-Session-Id", sid, 80));
  CHECK_EQ_INT(strlen(sid), 64);
  cli_http_response_free(&r);
  r = t_mcp_post(s, sid, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  CHECK_EQ_INT(r.status, 202);
  CHECK_EQ_INT(r.body_len, 0);
  cli_http_response_free(&r);
}

/* tools/call; returns the JSON-RPC `result` (a new reference). */
static inline json_t *t_call(strobe_server *s, const char *sid, const char *tool, const char *args) {
  char body[1024];
  snprintf(body, sizeof body,
           "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
           tool, args ? args : "{}");
  cli_http_response r = t_mcp_post(s, sid, body);
  REQUIRE_EQ_INT(r.status, 200);
  json_t *msg = t_json(&r);
  cli_http_response_free(&r);
  json_t *result = json_object_get(msg, "result");
  if (!result) {
    char *dump = json_dumps(msg, 0);
    fprintf(stderr, "no result: %s\n", dump);
    free(dump);
  }
  REQUIRE(result != NULL);
  json_incref(result);
  json_decref(msg);
  return result;
}

/* The error name of an isError result, or NULL for a success. */
static inline const char *t_error_name(json_t *result) {
  if (!json_is_true(json_object_get(result, "isError"))) return NULL;
  return json_string_value(json_object_get(json_object_get(result, "structuredContent"), "error"));
}

static inline json_t *t_sc(json_t *result) { return json_object_get(result, "structuredContent"); }

/* A tool result that must be the named error (the case goes on), or a
 * success (the case stops: what follows reads the result's content). On
 * failure the whole result is printed. */
#define CHECK_TOOL_ERROR(result, name)                                                            \
  do {                                                                                            \
    const char *check_n_ = t_error_name(result);                                                  \
    if (!check_n_ || strcmp(check_n_, (name)) != 0) {                                             \
      char *check_d_ = json_dumps(result, 0);                                                     \
      harness_fail(__FILE__, __LINE__, 0, "CHECK_TOOL_ERROR(%s, %s): got %s", #result, #name, \
                   check_d_ ? check_d_ : "?");                                                   \
      free(check_d_);                                                                             \
    }                                                                                             \
  } while (0)

#define REQUIRE_TOOL_OK(result)                                                         \
  do {                                                                                  \
    if (t_error_name(result) || json_is_true(json_object_get(result, "isError"))) {     \
      char *check_d_ = json_dumps(result, 0);                                           \
      fprintf(stderr, "tool result: %s\n", check_d_ ? check_d_ : "?");                  \
      free(check_d_);                                                                   \
      harness_fail(__FILE__, __LINE__, 1, "REQUIRE_TOOL_OK(%s): an error result", #result); \
    }                                                                                   \
  } while (0)

/* The owner of an active session (the server's random MCP or viewer owner), 0 when
 * not found. Only its owner hears "cancelled" or "ended" about it later: anyone
 * else gets not_owner (docs/sessions.md §Bounds and lifecycle). */
static inline uint64_t t_owner_of(strobe_collector *c, const char *id) {
  strobe_session_info info[STROBE_MAX_SESSIONS];
  int n = strobe_collector_query_sessions(c, info, STROBE_MAX_SESSIONS);
  for (int i = 0; i < n && i < STROBE_MAX_SESSIONS; i++)
    if (!strcmp(info[i].id, id)) return info[i].owner;
  return 0;
}

/* The JSON-RPC error code of a reply (0 when it is not an error). */
static inline int t_rpc_code(const cli_http_response *r) {
  json_t *v = t_json(r);
  int code = (int)json_integer_value(json_object_get(json_object_get(v, "error"), "code"));
  json_decref(v);
  return code;
}

#endif
