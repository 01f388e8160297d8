/*
 * test_server_api.c — the viewer's endpoints (docs/server.md "Viewer
 * API"): /api/info (build, clock, windows, limits, server state) and
 * /api/sessions (list with owner kinds; start, read, reset and end sessions
 * the viewer owns; never read or reset another owner's); /api/open trades a
 * one-time code for the token once, without the token, never twice, never a
 * wrong or replaced code, and only from an allowed Host.
 */
#include "server_test.h"

static json_t *get_json(strobe_server *s, const char *method, const char *path, const char *body, int status) {
  cli_http_response r = t_req(s, method, path, body ? AUTH JSON_CT : AUTH, body);
  if (r.status != status) fprintf(stderr, "%s %s: %d %s\n", method, path, r.status, r.body);
  CHECK_EQ_INT(r.status, status);
  json_t *v = t_json(&r);
  cli_http_response_free(&r);
  return v;
}

static const char *str(json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }

static void test_info_and_sessions(void) {
  strobe_collector *c;
  REQUIRE(strobe_collector_create(&c) == 0);
  strobe_window w, dt;
  REQUIRE(strobe_window_register(c, "main", 0, &w) == 0);
  REQUIRE(strobe_window_register(c, "devtools", STROBE_WINDOW_DEVTOOLS, &dt) == 0);
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  strobe_op_end(op, 1);
  strobe_server_desc d = {.collector = c};
  strobe_server *s = t_start(&d);

  /* >>info */
  json_t *v = get_json(s, "GET", "/api/info", NULL, 200);
  CHECK(!strcmp(str(json_object_get(v, "build"), "version"), strobe_version()));
  json_t *clk = json_object_get(v, "clock");
  CHECK(str(clk, "source") && json_real_value(json_object_get(clk, "ns_per_tick")) > 0);
  json_t *wins = json_object_get(v, "windows");
  CHECK_EQ_INT(json_array_size(wins), 2);
  int seen_main = 0, seen_dt = 0;
  for (size_t i = 0; i < 2; i++) {
    json_t *e = json_array_get(wins, i);
    if (!strcmp(str(e, "id"), "main")) {
      seen_main = 1;
      CHECK(json_is_false(json_object_get(e, "devtools")));
      CHECK_EQ_INT(json_integer_value(json_object_get(e, "passes")), 1);
    } else {
      seen_dt = json_is_true(json_object_get(e, "devtools"));
    }
  }
  CHECK(seen_main && seen_dt);
  CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(v, "limits"), "max_sessions")), 8);
  json_t *srv = json_object_get(v, "server");
  CHECK_EQ_INT(json_integer_value(json_object_get(srv, "port")), strobe_server_query_port(s));
  CHECK(!strcmp(str(srv, "mcp_protocol"), "2025-11-25"));
  CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(srv, "limits"), "max_connections")), 512);
  char *dump = json_dumps(v, 0);
  CHECK(!strstr(dump, TEST_TOKEN)); /* the token is in no response */
  free(dump);
  json_decref(v);

  /* >>sessions: one of each owner kind */
  char local[STROBE_SESSION_ID_MAX];
  strobe_report *rep0 = NULL;
  REQUIRE(strobe_session_start(c, NULL, local) == 0);
  char sid[80];
  t_mcp_init(s, sid);
  json_t *res = t_call(s, sid, "strobe_profile_start", "{}");
  REQUIRE_TOOL_OK(res);
  char mcp_id[32];
  snprintf(mcp_id, sizeof mcp_id, "%s", str(t_sc(res), "id"));
  json_decref(res);
  v = get_json(s, "POST", "/api/sessions", "{\"max_samples\":16,\"include_devtools\":true}", 201);
  char viewer_id[32];
  snprintf(viewer_id, sizeof viewer_id, "%s", str(v, "id"));
  CHECK_EQ_INT(json_integer_value(json_object_get(v, "max_samples")), 16);
  json_decref(v);
  v = get_json(s, "POST", "/api/sessions", "{\"max_samples\":999}", 400);
  CHECK(!strcmp(str(v, "error"), "invalid_arguments"));
  json_decref(v);
  v = get_json(s, "POST", "/api/sessions", "[1]", 400);
  json_decref(v);

  v = get_json(s, "GET", "/api/sessions", NULL, 200);
  json_t *list = json_object_get(v, "sessions");
  CHECK_EQ_INT(json_array_size(list), 3);
  const char *kinds[3] = {"in-process", "mcp", "viewer"}; /* oldest first */
  const char *ids[3] = {local, mcp_id, viewer_id};
  for (size_t i = 0; i < 3; i++) {
    json_t *e = json_array_get(list, i);
    CHECK(!strcmp(str(e, "id"), ids[i]));
    CHECK(!strcmp(str(e, "owner"), kinds[i]));
    CHECK(json_is_integer(json_object_get(e, "completed")));
    CHECK(json_is_number(json_object_get(e, "started_ms")));
  }
  CHECK(json_is_true(json_object_get(json_array_get(list, 2), "include_devtools")));
  json_decref(v);

  /* the viewer resets its own (docs/sessions.md §Reset), never another owner's */
  char path[96];
  strobe_op_end(strobe_op_begin(c, w, STROBE_OP_PASS, NULL), 1);
  snprintf(path, sizeof path, "/api/sessions/%s/reset", local);
  v = get_json(s, "POST", path, NULL, 403);
  CHECK(!strcmp(str(v, "error"), "not_owner"));
  json_decref(v);
  snprintf(path, sizeof path, "/api/sessions/%s/reset", mcp_id);
  v = get_json(s, "POST", path, NULL, 403);
  json_decref(v);
  v = get_json(s, "POST", "/api/sessions/profile_4242/reset", NULL, 404);
  json_decref(v);
  snprintf(path, sizeof path, "/api/sessions/%s/reset", viewer_id);
  v = get_json(s, "GET", path, NULL, 405);
  json_decref(v);
  v = get_json(s, "POST", path, NULL, 200);
  CHECK(!strcmp(str(v, "id"), viewer_id));
  CHECK_EQ_INT(json_array_size(json_object_get(v, "samples")), 0);
  CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(v, "session"), "resets")), 1);
  json_decref(v);
  v = get_json(s, "GET", "/api/sessions", NULL, 200);
  list = json_object_get(v, "sessions");
  for (size_t i = 0; i < json_array_size(list); i++) /* only the viewer's was reset */
    CHECK_EQ_INT(json_integer_value(json_object_get(json_array_get(list, i), "resets")), i == 2);
  json_decref(v);
  REQUIRE(strobe_session_read(c, local, 0, &rep0) == 0);
  CHECK_EQ_U64(strobe_report_query_counts(rep0).returned, 1); /* the in-process session kept its pass */
  strobe_report_free(rep0);

  /* the viewer reads and ends its own; other owners' are listed, never opened */
  op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  strobe_op_end(op, 1);
  snprintf(path, sizeof path, "/api/sessions/%s", viewer_id);
  v = get_json(s, "GET", path, NULL, 200);
  CHECK(!strcmp(str(v, "id"), viewer_id));
  CHECK(json_is_false(json_object_get(v, "final")));
  CHECK_EQ_INT(json_array_size(json_object_get(v, "samples")), 1);
  json_decref(v);
  v = get_json(s, "DELETE", path, NULL, 200);
  CHECK(json_is_true(json_object_get(v, "final")));
  json_decref(v);
  v = get_json(s, "DELETE", path, NULL, 410);
  CHECK(!strcmp(str(v, "error"), "ended"));
  json_decref(v);
  snprintf(path, sizeof path, "/api/sessions/%s", local);
  v = get_json(s, "GET", path, NULL, 403);
  CHECK(!strcmp(str(v, "error"), "not_owner"));
  json_decref(v);
  snprintf(path, sizeof path, "/api/sessions/%s", mcp_id);
  v = get_json(s, "DELETE", path, NULL, 403);
  json_decref(v);
  v = get_json(s, "GET", "/api/sessions/profile_4242", NULL, 404);
  CHECK(!strcmp(str(v, "error"), "unknown_id"));
  json_decref(v);
  v = get_json(s, "GET", "/api/sessions/x", NULL, 404);
  json_decref(v);
  v = get_json(s, "PUT", "/api/sessions", "{}", 405);
  json_decref(v);

  /* stop: the MCP session is cancelled, the in-process one continues */
  v = get_json(s, "POST", "/api/sessions", NULL, 201);
  snprintf(viewer_id, sizeof viewer_id, "%s", str(v, "id"));
  json_decref(v);
  uint64_t mcp_owner = t_owner_of(c, mcp_id), viewer_owner = t_owner_of(c, viewer_id);
  CHECK(mcp_owner != 0 && viewer_owner != 0);
  strobe_server_stop(s);
  strobe_report *rep;
  CHECK_EQ_INT(strobe_session_read(c, mcp_id, mcp_owner, &rep), STROBE_ECANCELLED);
  CHECK_EQ_INT(strobe_session_read(c, viewer_id, viewer_owner, &rep), STROBE_ECANCELLED);
  CHECK_EQ_INT(strobe_session_read(c, mcp_id, 0, &rep), STROBE_ENOTOWNER); /* never revealed to another owner */
  REQUIRE(strobe_session_stop(c, local, 0, &rep) == 0);
  CHECK_EQ_U64(strobe_report_query_counts(rep).completed, 2);
  strobe_report_free(rep);
  strobe_collector_release(c);
}

/* POST /api/open with `code` in X-Strobe-Open-Code (and `extra` headers); returns the status, the token in tok. */
static int open_with(strobe_server *s, const char *code, const char *extra, char *tok, size_t cap) {
  char h[256];
  snprintf(h, sizeof h, "X-Strobe-Open-Code: %s\r\n%s", code, extra ? extra : "");
  cli_http_response r = t_req(s, "POST", "/api/open", h, NULL);
  int status = r.status;
  if (tok && cap) tok[0] = 0;
  if (status == 200) {
    json_t *v = t_json(&r);
    snprintf(tok, cap, "%s", str(v, "token") ? str(v, "token") : "");
    json_decref(v);
  }
  cli_http_response_free(&r);
  return status;
}

static void test_open_code(void) {
  strobe_server *s = t_server(NULL);
  char code[STROBE_SERVER_OPEN_CODE_LEN + 1], older[STROBE_SERVER_OPEN_CODE_LEN + 1], tok[128];
  CHECK_EQ_INT(open_with(s, "0123456789abcdef0123456789abcdef", NULL, tok, sizeof tok), 403); /* none made */
  REQUIRE(strobe_server_make_open_code(s, older) == 0);
  REQUIRE(strobe_server_make_open_code(s, code) == 0);
  CHECK_EQ_INT(strlen(code), STROBE_SERVER_OPEN_CODE_LEN);
  CHECK(strcmp(code, older) != 0);
  CHECK_EQ_INT(open_with(s, older, NULL, tok, sizeof tok), 403); /* replaced by the newer one */
  char wrong[sizeof code];
  memcpy(wrong, code, sizeof code);
  wrong[0] = wrong[0] == 'a' ? 'b' : 'a';
  CHECK_EQ_INT(open_with(s, wrong, NULL, tok, sizeof tok), 403);
  CHECK_EQ_INT(open_with(s, code, "Host: evil.example\r\n", tok, sizeof tok), 403); /* DNS rebinding */
  cli_http_response r = t_req(s, "GET", "/api/open", "X-Strobe-Open-Code: 0\r\n", NULL);
  CHECK_EQ_INT(r.status, 405);
  cli_http_response_free(&r);
  CHECK_EQ_INT(open_with(s, code, NULL, tok, sizeof tok), 200); /* no Authorization: the code is the credential */
  CHECK_STR_EQ(tok, TEST_TOKEN);
  CHECK_EQ_INT(open_with(s, code, NULL, tok, sizeof tok), 403); /* once */
  CHECK_EQ_INT(strobe_server_make_open_code(NULL, code), STROBE_EINVAL);
}

#define CASES(X) X(info_and_sessions) X(open_code)
HARNESS_MAIN(CASES)
