/*
 * test_server_tools.c — the MCP tools and the ownership and permission
 * rules (docs/server.md §Permissions and ownership) through the real server:
 *   - start / read while frames run / end, with the report as
 *     structuredContent and as text;
 *   - availability ({}): feature, permissions, limits, build;
 *   - every failure is an isError result with its stable name: unknown_id,
 *     ended, invalid_arguments, limit_reached, not_owner, permission_denied,
 *     cancelled;
 *   - an MCP client reads/resets/ends only sessions it started; a reset
 *     discards what its session kept and nobody else's;
 *   - revoking Observe, disabling MCP or denying a tool cancels MCP-owned
 *     sessions (their ids answer "cancelled") while an in-process session
 *     continues; granting again does not revive them;
 *   - strobe_server_stop cancels MCP sessions;
 *   - tools answer while the application's UI thread is blocked inside a
 *     pass, and report that pass as unfinished;
 *   - a stage named at run time (strobe_site_intern) reaches an MCP client
 *     as interned_<site id>, counted, unless the application opted in at
 *     setup (docs/recording.md §Run-time names);
 *   - strobe_ui_tree_request (and POST /api/tree) requests a UI-tree
 *     snapshot only while a capture records (nothing_recording otherwise),
 *     and answers its status and size, never a node: no element type name,
 *     id or property name of the snapshot reaches the client
 *     (docs/sessions.md §Content);
 *   - strobe_deep_capture_request (and POST /api/deep) likewise for a deep
 *     capture: only while a capture file records, its frame, calls,
 *     resources and bytes as numbers, never a label, an id or a byte;
 *   - the tool table (rows): every tool of STROBE_SERVER_TOOLS is listed;
 *     its input schema's limits are the constants the code enforces
 *     (STROBE_MAX_SAMPLES, STROBE_SESSION_ID_MAX, the STROBE_OP_KINDS names);
 *     each tool answers a valid input with its own output shape (no tool
 *     acts as another) and refuses, as invalid_arguments, each property
 *     just past its schema's limit and an unknown argument;
 *   - strobe_profile_explain says nothing_recording without a recording;
 *     with the server's live recorder it explains the slowest passes and a
 *     sample by its operation id, lists the pass stuck in layout as an
 *     unfinished, stalled frame (its thread unknown: no sampler here), and
 *     never carries a stage named at run time.
 */
#include <pthread.h>

#include "server_test.h"
#include "strobe/record.h"
#include "strobe/deep.h"
#include "strobe/tree.h"

static strobe_collector *g_c;
static strobe_window g_main;
static int g_run;            /* atomic: the frame loop runs */
static int g_block = 0;      /* atomic: 1 = the next pass blocks until 0 again */
static int g_blocked = 0;    /* atomic: a pass is blocked right now */
static strobe_site *g_interned; /* set before the loop starts: a stage named at run time, run in every pass */

static void *frame_loop(void *arg) {
  (void)arg;
  while (__atomic_load_n(&g_run, __ATOMIC_ACQUIRE)) {
    strobe_op op = strobe_op_begin(g_c, g_main, STROBE_OP_PASS, NULL);
    {
      STROBE_STAGE("layout", NULL);
      if (__atomic_load_n(&g_block, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&g_blocked, 1, __ATOMIC_RELEASE);
        while (__atomic_load_n(&g_block, __ATOMIC_ACQUIRE)) fx_sleep_ms(1); /* the UI thread is stuck */
        __atomic_store_n(&g_blocked, 0, __ATOMIC_RELEASE);
      }
    }
    {
      STROBE_STAGE("render", NULL);
      fx_sleep_ms(1);
    }
    if (g_interned) {
      strobe_stage st = strobe_stage_begin(g_interned);
      strobe_stage_end(&st);
    }
    strobe_op_end(op, 1);
    strobe_op_end(strobe_op_begin(g_c, g_main, STROBE_OP_INPUT, NULL), 1); /* not a frame */
  }
  return NULL;
}

static pthread_t g_frames;

static void frames_stop(void *arg) {
  (void)arg;
  __atomic_store_n(&g_block, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&g_run, 0, __ATOMIC_RELEASE);
  pthread_join(g_frames, NULL);
  strobe_collector_release(g_c);
}

/* Each case: a fresh collector with its "main" window, the application's
 * frame loop on its own thread, and (server != 0) a server on that
 * collector; all stopped when the case ends. */
static strobe_server *tools_fixture(int server) {
  REQUIRE(strobe_collector_create(&g_c) == 0);
  REQUIRE(strobe_window_register(g_c, "main", 0, &g_main) == 0);
  __atomic_store_n(&g_run, 1, __ATOMIC_RELEASE);
  REQUIRE(pthread_create(&g_frames, NULL, frame_loop, NULL) == 0);
  harness_defer(frames_stop, NULL);
  if (!server) return NULL;
  strobe_server_desc d = {.collector = g_c};
  return t_server(&d);
}

static char *session_id(json_t *start_result) {
  REQUIRE_TOOL_OK(start_result);
  return strdup(json_string_value(json_object_get(t_sc(start_result), "id")));
}

static json_t *call_id(strobe_server *s, const char *sid, const char *tool, const char *id) {
  char args[128];
  snprintf(args, sizeof args, "{\"id\":\"%s\"}", id);
  return t_call(s, sid, tool, args);
}

/* A server on the fixture, an MCP client initialized on it, and a session
 * that client started with every default; the caller frees the id. */
static char *started_session(strobe_server **s, char sid[80]) {
  *s = tools_fixture(1);
  t_mcp_init(*s, sid);
  json_t *r = t_call(*s, sid, "strobe_profile_start", "{}");
  char *id = session_id(r);
  json_decref(r);
  return id;
}

static void test_happy_path(void) {
  strobe_server *s = tools_fixture(1);
  char sid[80];
  t_mcp_init(s, sid);
  json_t *r = t_call(s, sid, "strobe_profile_start", "{\"max_samples\":50,\"include_devtools\":false}");
  char *id = session_id(r);
  CHECK_EQ_INT(json_integer_value(json_object_get(t_sc(r), "max_samples")), 50);
  CHECK(json_is_false(json_object_get(t_sc(r), "include_devtools")));
  CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(t_sc(r), "limits"), "max_sessions")), 8);
  json_decref(r);
  fx_sleep_ms(150); /* frames complete meanwhile */

  r = call_id(s, sid, "strobe_profile_read", id);
  REQUIRE_TOOL_OK(r);
  json_t *rep = t_sc(r);
  CHECK(!strcmp(json_string_value(json_object_get(rep, "id")), id));
  CHECK(json_is_false(json_object_get(rep, "final")));
  CHECK(json_array_size(json_object_get(rep, "samples")) > 0);
  CHECK(json_array_size(json_object_get(rep, "samples")) <= 50);
  /* the same report as text */
  json_t *text = json_object_get(json_array_get(json_object_get(r, "content"), 0), "text");
  json_t *parsed = json_loads(json_string_value(text), 0, NULL);
  CHECK(parsed && json_equal(parsed, rep));
  json_decref(parsed);
  json_decref(r);

  r = call_id(s, sid, "strobe_profile_end", id);
  REQUIRE_TOOL_OK(r);
  CHECK(json_is_true(json_object_get(t_sc(r), "final")));
  CHECK(json_array_size(json_object_get(t_sc(r), "samples")) > 0);
  json_decref(r);
  /* ended: read and end again say so */
  r = call_id(s, sid, "strobe_profile_end", id);
  CHECK_TOOL_ERROR(r, "ended");
  json_decref(r);
  r = call_id(s, sid, "strobe_profile_read", id);
  CHECK_TOOL_ERROR(r, "ended");
  json_decref(r);
  free(id);
}

static void test_arguments(void) {
  strobe_server *s = tools_fixture(1);
  char sid[80];
  t_mcp_init(s, sid);
  const char *bad_start[] = {"{\"max_samples\":0}",          "{\"max_samples\":241}",
                             "{\"max_samples\":1.5}",        "{\"max_samples\":\"120\"}",
                             "{\"max_samples\":1e300}",      "{\"include_devtools\":1}",
                             "{\"max_sample\":10}",          "{\"max_samples\":-5}",
                             "{\"kinds\":[]}",               "{\"kinds\":[\"frame\"]}",
                             "{\"kinds\":\"pass\"}",          "{\"kinds\":[\"pass\",\"pass\"]}",
                             "{\"kinds\":[1]}",
                             "{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,\"g\":7,\"h\":8,\"i\":9}"};
  for (size_t i = 0; i < sizeof bad_start / sizeof *bad_start; i++) {
    json_t *r = t_call(s, sid, "strobe_profile_start", bad_start[i]);
    CHECK_TOOL_ERROR(r, "invalid_arguments");
    CHECK(json_is_string(json_object_get(t_sc(r), "message")));
    json_decref(r);
  }
  const char *bad_id[] = {"{\"id\":7}", "{\"id\":\"\"}", "{\"id\":\"profile_11111111111111111111111111111\"}",
                          "{\"id\":\"profile_1\",\"x\":1}", "{\"id\":null}"};
  for (size_t i = 0; i < sizeof bad_id / sizeof *bad_id; i++) {
    json_t *r = t_call(s, sid, "strobe_profile_read", bad_id[i]);
    CHECK_TOOL_ERROR(r, "invalid_arguments");
    json_decref(r);
    r = t_call(s, sid, "strobe_profile_end", bad_id[i]);
    CHECK_TOOL_ERROR(r, "invalid_arguments");
    json_decref(r);
  }
  json_t *r = t_call(s, sid, "strobe_profile_end", "{}");
  CHECK_TOOL_ERROR(r, "invalid_arguments"); /* end needs an id */
  json_decref(r);
  r = t_call(s, sid, "strobe_profile_read", "{\"id\":\"profile_999999\"}");
  CHECK_TOOL_ERROR(r, "unknown_id");
  json_decref(r);
  r = t_call(s, sid, "strobe_profile_end", "{\"id\":\"nonsense\"}");
  CHECK_TOOL_ERROR(r, "unknown_id");
  json_decref(r);
  /* frames only: the report keeps passes and counts the rest */
  r = t_call(s, sid, "strobe_profile_start", "{\"kinds\":[\"pass\"],\"max_samples\":5}");
  REQUIRE_TOOL_OK(r);
  json_t *kinds = json_object_get(t_sc(r), "kinds");
  CHECK(json_array_size(kinds) == 1 && !strcmp(json_string_value(json_array_get(kinds, 0)), "pass"));
  char *frames = session_id(r);
  json_decref(r);
  fx_sleep_ms(150);
  r = call_id(s, sid, "strobe_profile_end", frames);
  REQUIRE_TOOL_OK(r);
  json_t *samples = json_object_get(t_sc(r), "samples");
  CHECK(json_array_size(samples) > 0);
  CHECK(json_integer_value(json_object_get(json_object_get(t_sc(r), "counts"), "kind_excluded")) > 0);
  for (size_t i = 0; i < json_array_size(samples); i++)
    CHECK(!strcmp(json_string_value(json_object_get(json_array_get(samples, i), "kind")), "pass"));
  json_decref(r);
  free(frames);
  /* a real (whole) number is accepted as an integer */
  r = t_call(s, sid, "strobe_profile_start", "{\"max_samples\":10.0}");
  char *id = session_id(r);
  json_decref(r);
  r = call_id(s, sid, "strobe_profile_end", id);
  REQUIRE_TOOL_OK(r);
  json_decref(r);
  free(id);
}

static void test_availability(void) {
  strobe_server *s = tools_fixture(1);
  char sid[80];
  t_mcp_init(s, sid);
  json_t *r = t_call(s, sid, "strobe_profile_read", "{}");
  REQUIRE_TOOL_OK(r);
  json_t *a = t_sc(r);
  CHECK(json_is_true(json_object_get(a, "feature_enabled")));
  CHECK(json_is_true(json_object_get(a, "mcp_enabled")));
  CHECK(json_is_true(json_object_get(a, "observe_granted")));
  CHECK(json_is_true(json_object_get(json_object_get(a, "tools"), "strobe_profile_start")));
  json_t *lim = json_object_get(a, "limits");
  CHECK_EQ_INT(json_integer_value(json_object_get(lim, "max_sessions")), 8);
  CHECK_EQ_INT(json_integer_value(json_object_get(lim, "max_samples")), 240);
  CHECK_EQ_INT(json_integer_value(json_object_get(lim, "default_samples")), 120);
  CHECK_EQ_INT(json_integer_value(json_object_get(lim, "max_windows")), 64);
  CHECK_EQ_INT(json_integer_value(json_object_get(lim, "ended_ids_remembered")), 64);
  json_t *b = json_object_get(a, "build");
  CHECK(!strcmp(json_string_value(json_object_get(b, "version")), strobe_version()));
  CHECK(!strcmp(json_string_value(json_object_get(b, "os")), "linux"));
  CHECK(json_is_string(json_object_get(b, "arch")));
  CHECK(json_is_array(json_object_get(b, "features")));
  json_decref(r);
  /* no arguments at all is availability too */
  char body[256];
  snprintf(body, sizeof body,
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"strobe_profile_read\"}}");
  cli_http_response h = t_mcp_post(s, sid, body);
  CHECK(strstr(h.body, "\"feature_enabled\":true"));
  cli_http_response_free(&h);
}

static void test_limit(void) {
  strobe_server *s = tools_fixture(1);
  char sid[80];
  t_mcp_init(s, sid);
  char *ids[STROBE_MAX_SESSIONS];
  for (int i = 0; i < STROBE_MAX_SESSIONS; i++) {
    json_t *r = t_call(s, sid, "strobe_profile_start", "{\"max_samples\":1}");
    ids[i] = session_id(r);
    json_decref(r);
  }
  json_t *r = t_call(s, sid, "strobe_profile_start", "{}");
  CHECK_TOOL_ERROR(r, "limit_reached");
  json_decref(r);
  for (int i = 0; i < STROBE_MAX_SESSIONS; i++) {
    r = call_id(s, sid, "strobe_profile_end", ids[i]);
    REQUIRE_TOOL_OK(r);
    json_decref(r);
    free(ids[i]);
  }
}

static void test_ownership(void) {
  strobe_server *s = tools_fixture(1);
  char a[80], b[80];
  t_mcp_init(s, a);
  t_mcp_init(s, b);
  json_t *r = t_call(s, a, "strobe_profile_start", "{}");
  char *ida = session_id(r);
  json_decref(r);
  /* B can neither read nor end A's session; A's session is untouched */
  r = call_id(s, b, "strobe_profile_read", ida);
  CHECK_TOOL_ERROR(r, "not_owner");
  json_decref(r);
  r = call_id(s, b, "strobe_profile_end", ida);
  CHECK_TOOL_ERROR(r, "not_owner");
  json_decref(r);
  /* B's availability does not list A's session among its own */
  r = t_call(s, b, "strobe_profile_read", "{}");
  CHECK_EQ_INT(json_array_size(json_object_get(json_object_get(t_sc(r), "sessions"), "yours")), 0);
  json_decref(r);
  r = t_call(s, a, "strobe_profile_read", "{}");
  CHECK_EQ_INT(json_array_size(json_object_get(json_object_get(t_sc(r), "sessions"), "yours")), 1);
  json_decref(r);
  /* an in-process session is nobody's over MCP */
  char local[STROBE_SESSION_ID_MAX];
  REQUIRE(strobe_session_start(g_c, NULL, local) == 0);
  r = call_id(s, a, "strobe_profile_read", local);
  CHECK_TOOL_ERROR(r, "not_owner");
  json_decref(r);
  r = call_id(s, a, "strobe_profile_end", ida);
  REQUIRE_TOOL_OK(r);
  json_decref(r);
  strobe_report *rep;
  REQUIRE(strobe_session_stop(g_c, local, 0, &rep) == 0);
  strobe_report_free(rep);
  free(ida);
  /* DELETE of B's MCP session cancels B's sessions only */
  r = t_call(s, b, "strobe_profile_start", "{}");
  char *idb = session_id(r);
  json_decref(r);
  uint64_t bowner = t_owner_of(g_c, idb);
  char h[256];
  snprintf(h, sizeof h, AUTH "Mcp-Session-Id: %s\r\n", b);
  cli_http_response d = t_req(s, "DELETE", "/mcp", h, NULL);
  CHECK_EQ_INT(d.status, 204);
  cli_http_response_free(&d);
  CHECK_EQ_INT(strobe_session_read(g_c, idb, bowner, &rep), STROBE_ECANCELLED);
  free(idb);
}

/* strobe_profile_reset: the caller's own session only (docs/sessions.md §Reset). */
static void test_reset(void) {
  strobe_server *s = tools_fixture(1);
  char a[80], b[80];
  t_mcp_init(s, a);
  t_mcp_init(s, b);
  json_t *r = t_call(s, a, "strobe_profile_start", "{}");
  char *ida = session_id(r);
  json_decref(r);
  r = t_call(s, b, "strobe_profile_start", "{}");
  char *idb = session_id(r);
  json_decref(r);
  char local[STROBE_SESSION_ID_MAX];
  REQUIRE(strobe_session_start(g_c, NULL, local) == 0);
  /* Wait (bounded) until every session holds passes. */
  strobe_report *rep = NULL;
  for (int i = 0; i < 2000; i++) {
    REQUIRE(strobe_session_read(g_c, local, 0, &rep) == 0);
    uint64_t n = strobe_report_query_counts(rep).returned;
    strobe_report_free(rep);
    if (n >= 4) break;
    fx_sleep_ms(5);
  }

  /* B may not reset A's session: refused, and A's session keeps its samples. */
  r = call_id(s, b, "strobe_profile_reset", ida);
  CHECK_TOOL_ERROR(r, "not_owner");
  json_decref(r);
  r = call_id(s, b, "strobe_profile_reset", local);
  CHECK_TOOL_ERROR(r, "not_owner");
  json_decref(r);
  r = call_id(s, a, "strobe_profile_read", ida);
  REQUIRE_TOOL_OK(r);
  CHECK(json_integer_value(json_object_get(json_object_get(t_sc(r), "counts"), "completed")) >= 4);
  CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(t_sc(r), "session"), "resets")), 0);
  json_decref(r);

  /* A resets its own: the snapshot right after holds nothing from before. */
  r = call_id(s, a, "strobe_profile_reset", ida);
  REQUIRE_TOOL_OK(r);
  json_t *rep_a = t_sc(r);
  CHECK(!strcmp(json_string_value(json_object_get(rep_a, "id")), ida));
  CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(rep_a, "session"), "resets")), 1);
  CHECK(json_is_number(json_object_get(json_object_get(rep_a, "session"), "reset_ms")));
  double reset_ms = json_number_value(json_object_get(json_object_get(rep_a, "session"), "reset_ms"));
  size_t i;
  json_t *smp;
  json_array_foreach(json_object_get(rep_a, "samples"), i, smp)
    CHECK(json_number_value(json_object_get(smp, "start_ms")) >= reset_ms);
  json_decref(r);
  r = call_id(s, b, "strobe_profile_read", idb);
  REQUIRE_TOOL_OK(r);
  CHECK(json_integer_value(json_object_get(json_object_get(t_sc(r), "counts"), "completed")) >= 4);
  CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(t_sc(r), "session"), "resets")), 0);
  json_decref(r);
  REQUIRE(strobe_session_read(g_c, local, 0, &rep) == 0);
  CHECK(strobe_report_query_counts(rep).completed >= 4);
  strobe_report_free(rep);
  r = t_call(s, a, "strobe_profile_reset", "{}");
  CHECK_TOOL_ERROR(r, "invalid_arguments");
  json_decref(r);
  r = call_id(s, a, "strobe_profile_end", ida);
  REQUIRE_TOOL_OK(r);
  json_decref(r);
  r = call_id(s, a, "strobe_profile_reset", ida);
  CHECK_TOOL_ERROR(r, "ended");
  json_decref(r);
  REQUIRE(strobe_session_stop(g_c, local, 0, &rep) == 0);
  strobe_report_free(rep);
  free(ida);
  free(idb);
}

static int set_read_tool(strobe_server *s, int v);

/* One revocation kind: `revoke` then `grant` through the given setter. */
static void check_revocation(strobe_server *s, int (*set)(strobe_server *, int), const char *what) {
  char sid[80];
  t_mcp_init(s, sid);
  json_t *r = t_call(s, sid, "strobe_profile_start", "{}");
  char *id1 = session_id(r);
  json_decref(r);
  r = t_call(s, sid, "strobe_profile_start", "{}");
  char *id2 = session_id(r);
  json_decref(r);
  char local[STROBE_SESSION_ID_MAX];
  REQUIRE(strobe_session_start(g_c, NULL, local) == 0);
  uint64_t owner1 = t_owner_of(g_c, id1);
  fx_sleep_ms(30);

  int n = set(s, 0); /* revoke */
  if (n != 2) fprintf(stderr, "%s: cancelled %d\n", what, n);
  CHECK_EQ_INT(n, 2);
  r = call_id(s, sid, "strobe_profile_read", id1);
  CHECK_TOOL_ERROR(r, "permission_denied");
  json_decref(r);
  r = t_call(s, sid, "strobe_profile_start", "{}");
  if (set == set_read_tool) { /* only the denied tool is refused */
    char *id4 = session_id(r);
    json_t *e = call_id(s, sid, "strobe_profile_end", id4); /* end is still allowed */
    REQUIRE_TOOL_OK(e);
    json_decref(e);
    free(id4);
  } else {
    CHECK_TOOL_ERROR(r, "permission_denied");
  }
  json_decref(r);
  /* availability still answers, and says what is missing */
  r = t_call(s, sid, "strobe_profile_read", "{}");
  REQUIRE_TOOL_OK(r);
  CHECK(json_is_false(json_object_get(json_object_get(t_sc(r), "tools"), "strobe_profile_read")));
  json_decref(r);
  /* the in-process session continues, collecting frames */
  strobe_report *rep;
  REQUIRE(strobe_session_read(g_c, local, 0, &rep) == 0);
  strobe_report_free(rep);

  CHECK_EQ_INT(set(s, 1), 0); /* grant again: nothing revived */
  r = call_id(s, sid, "strobe_profile_read", id1);
  CHECK_TOOL_ERROR(r, "cancelled");
  json_decref(r);
  r = call_id(s, sid, "strobe_profile_end", id2);
  CHECK_TOOL_ERROR(r, "cancelled");
  json_decref(r);
  CHECK_EQ_INT(strobe_session_read(g_c, id1, owner1, &rep), STROBE_ECANCELLED);
  /* new sessions work again */
  r = t_call(s, sid, "strobe_profile_start", "{}");
  char *id3 = session_id(r);
  json_decref(r);
  r = call_id(s, sid, "strobe_profile_end", id3);
  REQUIRE_TOOL_OK(r);
  json_decref(r);
  REQUIRE(strobe_session_stop(g_c, local, 0, &rep) == 0);
  CHECK(strobe_report_query_counts(rep).completed > 0);
  strobe_report_free(rep);
  free(id1);
  free(id2);
  free(id3);
}

static int set_observe(strobe_server *s, int v) { return strobe_server_set_observe(s, v); }
static int set_mcp(strobe_server *s, int v) { return strobe_server_set_mcp_enabled(s, v); }
static int set_read_tool(strobe_server *s, int v) { return strobe_server_set_tool_allowed(s, STROBE_TOOL_PROFILE_READ, v); }

static void test_permissions(void) {
  strobe_server *s = tools_fixture(1);
  check_revocation(s, set_observe, "observe");
  check_revocation(s, set_mcp, "mcp");
  /* denying one tool cancels every MCP-owned session; that tool is refused, others are not */
  char sid[80];
  t_mcp_init(s, sid);
  json_t *r = t_call(s, sid, "strobe_profile_start", "{}");
  char *id = session_id(r);
  json_decref(r);
  CHECK_EQ_INT(strobe_server_set_tool_allowed(s, STROBE_TOOL_PROFILE_END, 0), 1);
  r = call_id(s, sid, "strobe_profile_end", id);
  CHECK_TOOL_ERROR(r, "permission_denied");
  json_decref(r);
  r = call_id(s, sid, "strobe_profile_read", id);
  CHECK_TOOL_ERROR(r, "cancelled");
  json_decref(r);
  CHECK_EQ_INT(strobe_server_set_tool_allowed(s, STROBE_TOOL_PROFILE_END, 1), 0);
  free(id);
  check_revocation(s, set_read_tool, "read tool");
  /* granting what is granted, or denying what is denied, cancels nothing */
  CHECK_EQ_INT(strobe_server_set_observe(s, 1), 0);
  CHECK_EQ_INT(strobe_server_set_tool_allowed(s, 0, 0), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_server_set_tool_allowed(s, (uint32_t)STROBE_TOOL_ALL + 1, 0), STROBE_EINVAL); /* the bit past every tool */
}

/* The application's UI thread is stuck inside a pass; the tools answer at once. */
static void test_ui_blocked(void) {
  strobe_server *s;
  char sid[80];
  char *id = started_session(&s, sid);
  json_t *r;
  __atomic_store_n(&g_block, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(&g_blocked, __ATOMIC_ACQUIRE)) fx_sleep_ms(1);
  fx_sleep_ms(50);
  double t0 = fx_now_ms();
  r = call_id(s, sid, "strobe_profile_read", id);
  double dt = fx_now_ms() - t0;
  REQUIRE_TOOL_OK(r);
  CHECK(dt < 1000);
  CHECK(__atomic_load_n(&g_blocked, __ATOMIC_ACQUIRE)); /* still stuck: the answer did not wait for it */
  json_t *ops = json_object_get(t_sc(r), "unfinished"); /* the report's one shape: an array */
  REQUIRE(json_is_array(ops));
  CHECK(json_array_size(ops) >= 1);
  char *dump = json_dumps(ops, 0);
  CHECK(strstr(dump, "\"main\"") && strstr(dump, "layout")); /* its window and current phase */
  free(dump);
  /* The status follows from the report itself: unfinished without samples, partial with some. */
  const char *status = json_string_value(json_object_get(t_sc(r), "status"));
  size_t samples = json_array_size(json_object_get(t_sc(r), "samples"));
  CHECK_STR_EQ(status, samples ? "partial" : "unfinished");
  json_decref(r);
  r = call_id(s, sid, "strobe_profile_end", id);
  REQUIRE_TOOL_OK(r);
  json_decref(r);
  __atomic_store_n(&g_block, 0, __ATOMIC_RELEASE);
  free(id);
}

static void test_stop_cancels(void) {
  tools_fixture(0);
  strobe_server_desc d = {.collector = g_c};
  strobe_server *s = t_start(&d);
  char sid[80];
  t_mcp_init(s, sid);
  json_t *r = t_call(s, sid, "strobe_profile_start", "{}");
  char *id = session_id(r);
  json_decref(r);
  char local[STROBE_SESSION_ID_MAX];
  REQUIRE(strobe_session_start(g_c, NULL, local) == 0);
  uint64_t owner = t_owner_of(g_c, id);
  strobe_server_stop(s);
  strobe_report *rep;
  CHECK_EQ_INT(strobe_session_read(g_c, id, owner, &rep), STROBE_ECANCELLED);
  REQUIRE(strobe_session_stop(g_c, local, 0, &rep) == 0); /* the in-process one continued */
  strobe_report_free(rep);
  free(id);
}

/* >>interned names: the report an MCP client reads, as the tool returns it. */
static json_t *read_with_interned_stage(const char *name, char placeholder[32]) {
  g_interned = strobe_site_intern(name, strlen(name), NULL, STROBE_SITE_STAGE);
  REQUIRE_EQ_INT(strobe_site_query_error(g_interned), 0);
  snprintf(placeholder, 32, "interned_%u", g_interned->id);
  strobe_server *s;
  char sid[80];
  char *id = started_session(&s, sid);
  json_t *r, *rep = NULL;
  for (int tries = 0; tries < 500 && !rep; tries++) { /* until a pass completed inside the session */
    fx_sleep_ms(10);
    r = call_id(s, sid, "strobe_profile_read", id);
    REQUIRE_TOOL_OK(r);
    json_t *summary = json_object_get(t_sc(r), "stage_summary");
    if (json_array_size(summary) >= 3) rep = r;
    else json_decref(r);
  }
  REQUIRE(rep != NULL);
  free(id);
  return rep;
}

static int result_mentions(json_t *result, const char *needle) {
  char *text = json_dumps(result, 0); /* structuredContent and the text content both */
  int found = text && strstr(text, needle);
  free(text);
  return found;
}

static void test_interned_names_withheld(void) {
  char placeholder[32];
  json_t *r = read_with_interned_stage("lua_fn_secret_42", placeholder);
  CHECK(!result_mentions(r, "lua_fn_secret_42"));
  CHECK(result_mentions(r, placeholder));
  json_t *names = json_object_get(t_sc(r), "interned_names");
  CHECK(json_is_false(json_object_get(names, "included")));
  CHECK_EQ_INT(json_integer_value(json_object_get(names, "withheld")), 1);
  json_decref(r);
}

static void test_interned_names_opted_in(void) {
  REQUIRE_EQ_INT(strobe_setup(&(strobe_desc){.report_interned_names = 1}), 0);
  char placeholder[32];
  json_t *r = read_with_interned_stage("lua_fn_shared_42", placeholder);
  CHECK(result_mentions(r, "lua_fn_shared_42"));
  CHECK(!result_mentions(r, placeholder));
  json_t *names = json_object_get(t_sc(r), "interned_names");
  CHECK(json_is_true(json_object_get(names, "included")));
  CHECK_EQ_INT(json_integer_value(json_object_get(names, "withheld")), 0);
  json_decref(r);
}

/* strobe_ui_tree_request: a request, its status and size, never its content. */
static void test_ui_tree_request(void) {
  strobe_server *s = tools_fixture(1);
  char sid[80];
  t_mcp_init(s, sid);
  json_t *r = t_call(s, sid, "strobe_ui_tree_request", "{}");
  CHECK_TOOL_ERROR(r, "nothing_recording"); /* no capture: the snapshot would have nowhere to go */
  json_decref(r);
  r = t_call(s, sid, "strobe_ui_tree_request", "{\"request\":1}");
  CHECK_TOOL_ERROR(r, "invalid_arguments");
  json_decref(r);
  cli_http_response h = t_req(s, "POST", "/api/tree", AUTH JSON_CT, "{}");
  CHECK_EQ_INT(h.status, 409);
  cli_http_response_free(&h);

  char path[64];
  REQUIRE(fx_temp_file(path, sizeof path, "mcptree") == 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  r = t_call(s, sid, "strobe_ui_tree_request", "{}");
  REQUIRE_TOOL_OK(r);
  CHECK(json_is_true(json_object_get(t_sc(r), "requested")));
  CHECK(json_is_true(json_object_get(t_sc(r), "pending")));
  CHECK_EQ_INT(json_integer_value(json_object_get(t_sc(r), "requests")), 1);
  json_decref(r);
  /* The application's next layout pass: a secret-named element type and property. */
  STROBE_ELEMENT_TYPE(secret_type, "SecretPanel");
  strobe_tree_prop props[] = {{"secret_width", 123.0}};
  REQUIRE_EQ_INT(strobe_tree_begin(), 1);
  for (uint32_t i = 0; i < 5; i++) {
    strobe_tree_node n = {i ? 1u : 0u, &secret_type, 0xabcdef0123456789ull + i, 0, 0, 10, 10, props, 1};
    CHECK_EQ_INT(strobe_tree_push(&n), 0);
  }
  CHECK_EQ_INT(strobe_tree_end(), 5);
  strobe_record_flush(rec);
  r = t_call(s, sid, "strobe_ui_tree_request", "{\"request\":false}");
  REQUIRE_TOOL_OK(r);
  json_t *sc = t_sc(r);
  CHECK(json_is_false(json_object_get(sc, "requested")));
  CHECK(json_is_false(json_object_get(sc, "pending")));
  CHECK_EQ_INT(json_integer_value(json_object_get(sc, "written")), 1);
  CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(sc, "last"), "nodes")), 5);
  CHECK(json_integer_value(json_object_get(json_object_get(sc, "last"), "bytes")) > 5 * 27);
  CHECK(!result_mentions(r, "SecretPanel") && !result_mentions(r, "secret_width") && !result_mentions(r, "abcdef"));
  json_decref(r);
  h = t_req(s, "POST", "/api/tree", AUTH JSON_CT, "{}"); /* the viewer's button */
  CHECK_EQ_INT(h.status, 202);
  CHECK(h.body && strstr(h.body, "\"pending\":true") && !strstr(h.body, "SecretPanel"));
  cli_http_response_free(&h);
  CHECK_EQ_INT(strobe_record_stop(rec), 0);
  unlink(path);
}

/* strobe_deep_capture_request: a request, its status and size, never a call, a label or a byte. */
static void test_deep_capture_request(void) {
  strobe_server *s = tools_fixture(1);
  char sid[80];
  t_mcp_init(s, sid);
  json_t *r = t_call(s, sid, "strobe_deep_capture_request", "{}");
  CHECK_TOOL_ERROR(r, "nothing_recording"); /* no capture file: the deep capture would have nowhere to go */
  json_decref(r);
  r = t_call(s, sid, "strobe_deep_capture_request", "{\"request\":\"yes\"}");
  CHECK_TOOL_ERROR(r, "invalid_arguments");
  json_decref(r);
  cli_http_response h = t_req(s, "POST", "/api/deep", AUTH JSON_CT, "{}");
  CHECK_EQ_INT(h.status, 409);
  cli_http_response_free(&h);

  char path[64];
  REQUIRE(fx_temp_file(path, sizeof path, "mcpdeep") == 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  r = t_call(s, sid, "strobe_deep_capture_request", "{}");
  REQUIRE_TOOL_OK(r);
  CHECK(json_is_true(json_object_get(t_sc(r), "requested")));
  CHECK(json_is_true(json_object_get(t_sc(r), "pending")));
  json_decref(r);
  /* The application's next frame: a secret-named pipeline and secret bytes. */
  REQUIRE_EQ_INT(strobe_deep_begin(77), 1);
  static const char secret[] = "SECRETBYTES-SECRETBYTES";
  strobe_draw_ref ref = {0x5ec7e7, STROBE_DEEP_TEXTURE};
  for (int i = 0; i < 3; i++) {
    strobe_draw_call c = {"quad", "SecretPipeline", "main", 0, 4, (uint32_t)i, 1, &ref, 1, 0, {0}, {0}};
    CHECK_EQ_INT(strobe_deep_call(&c), 0);
    strobe_attachment a = {.resource = 0x5ec7e7, .media_type = "text/plain", .bytes = secret, .size = sizeof secret};
    CHECK(strobe_deep_resource(&a) >= 0);
  }
  CHECK_EQ_INT(strobe_deep_end(), 3);
  strobe_record_flush(rec);
  r = t_call(s, sid, "strobe_deep_capture_request", "{\"request\":false}");
  REQUIRE_TOOL_OK(r);
  json_t *sc = t_sc(r);
  CHECK(json_is_false(json_object_get(sc, "requested")));
  CHECK(json_is_false(json_object_get(sc, "pending")));
  CHECK_EQ_INT(json_integer_value(json_object_get(sc, "written")), 1);
  json_t *last = json_object_get(sc, "last");
  CHECK_EQ_INT(json_integer_value(json_object_get(last, "frame")), 77);
  CHECK_EQ_INT(json_integer_value(json_object_get(last, "calls")), 3);
  CHECK_EQ_INT(json_integer_value(json_object_get(last, "resources")), 1);
  CHECK_EQ_INT(json_integer_value(json_object_get(last, "bytes")), (long long)sizeof secret);
  CHECK(!result_mentions(r, "SecretPipeline") && !result_mentions(r, "SECRETBYTES") && !result_mentions(r, "5ec7e7"));
  json_decref(r);
  h = t_req(s, "POST", "/api/deep", AUTH JSON_CT, "{}"); /* the viewer's button */
  CHECK_EQ_INT(h.status, 202);
  CHECK(h.body && strstr(h.body, "\"pending\":true") && !strstr(h.body, "Secret"));
  cli_http_response_free(&h);
  CHECK_EQ_INT(strobe_record_stop(rec), 0);
  unlink(path);
}

/* The tools/list entry of `name`, or NULL (a borrowed reference into list). */
static json_t *listed(json_t *list, const char *name) {
  for (size_t i = 0; i < json_array_size(list); i++)
    if (!strcmp(json_string_value(json_object_get(json_array_get(list, i), "name")), name))
      return json_array_get(list, i);
  return NULL;
}

/* The schema's limits, checked against the constants the code enforces. */
static void check_limits(const char *tool, json_t *props) {
  json_t *p = json_object_get(props, "max_samples");
  if (p) {
    CHECKF(json_integer_value(json_object_get(p, "minimum")) == 1, "%s.max_samples minimum", tool);
    CHECKF(json_integer_value(json_object_get(p, "maximum")) == STROBE_MAX_SAMPLES, "%s.max_samples maximum", tool);
  }
  if ((p = json_object_get(props, "id")))
    CHECKF(json_integer_value(json_object_get(p, "maxLength")) == STROBE_SESSION_ID_MAX - 1, "%s.id maxLength", tool);
  if ((p = json_object_get(props, "kinds"))) {
    json_t *names = json_object_get(json_object_get(p, "items"), "enum");
    CHECKF(json_integer_value(json_object_get(p, "maxItems")) == STROBE_OP_KIND_LIMIT - 1, "%s.kinds maxItems", tool);
    CHECKF(json_array_size(names) == STROBE_OP_KIND_LIMIT - 1, "%s.kinds: %zu names", tool, json_array_size(names));
    for (uint32_t k = 1; k < STROBE_OP_KIND_LIMIT; k++)
      CHECKF(!strcmp(json_string_value(json_array_get(names, k - 1)), strobe_op_kind_name(k)), "%s.kinds[%u]", tool,
             k - 1);
  }
}

/* A valid value of a property, at its schema's limit; the session id for id. */
static json_t *valid_value(json_t *p, const char *name, const char *id) {
  const char *type = json_string_value(json_object_get(p, "type"));
  if (!strcmp(name, "id")) return json_string(id);
  if (!strcmp(type, "integer")) return json_integer(json_integer_value(json_object_get(p, "maximum")));
  if (!strcmp(type, "array")) return json_deep_copy(json_object_get(json_object_get(p, "items"), "enum"));
  return json_false(); /* booleans: include_devtools false, request false (status only) */
}

/* Values just past a property's schema: wrong type, and each limit crossed by one. */
static json_t *invalid_values(json_t *p) {
  const char *type = json_string_value(json_object_get(p, "type"));
  json_t *bad = json_array();
  json_array_append_new(bad, strcmp(type, "string") ? json_string("x") : json_integer(1));
  if (!strcmp(type, "integer")) {
    json_array_append_new(bad, json_integer(json_integer_value(json_object_get(p, "maximum")) + 1));
    json_array_append_new(bad, json_integer(json_integer_value(json_object_get(p, "minimum")) - 1));
  } else if (!strcmp(type, "string")) {
    char longest[256];
    size_t n = (size_t)json_integer_value(json_object_get(p, "maxLength")) + 1;
    REQUIRE(n < sizeof longest);
    memset(longest, 'p', n);
    longest[n] = 0;
    json_array_append_new(bad, json_string(longest));
    json_array_append_new(bad, json_string(""));
  } else if (!strcmp(type, "array")) {
    json_t *many = json_deep_copy(json_object_get(json_object_get(p, "items"), "enum"));
    json_array_append(many, json_array_get(many, 0)); /* maxItems + 1, one repeated */
    json_array_append_new(bad, many);
    json_array_append_new(bad, json_array());
    json_array_append_new(bad, json_pack("[s]", "no_such_kind"));
  }
  return bad;
}

static json_t *call_json(strobe_server *s, const char *sid, const char *tool, json_t *args) {
  char *text = json_dumps(args, JSON_COMPACT);
  REQUIRE(text && strlen(text) < 900);
  json_t *r = t_call(s, sid, tool, text);
  free(text);
  return r;
}

static void test_rows(void) {
  strobe_server *s = tools_fixture(1);
  REQUIRE_EQ_INT(strobe_server_record_start(s, NULL), 0); /* strobe_profile_explain's capture */
  char sid[80];
  t_mcp_init(s, sid);
  cli_http_response h = t_mcp_post(s, sid, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
  json_t *msg = t_json(&h);
  cli_http_response_free(&h);
  json_t *list = json_object_get(json_object_get(msg, "result"), "tools");
  const char *names[] = {
#define TOOL_NAME(id, bit, name) name,
      STROBE_SERVER_TOOLS(TOOL_NAME)
#undef TOOL_NAME
  };
  CHECK_EQ_INT(json_array_size(list), sizeof names / sizeof *names);
  for (size_t t = 0; t < sizeof names / sizeof *names; t++) {
    json_t *tool = listed(list, names[t]);
    CHECKF(tool != NULL, "%s has no row: not listed", names[t]);
    if (!tool) continue;
    json_t *props = json_object_get(json_object_get(tool, "inputSchema"), "properties");
    check_limits(names[t], props);
    /* valid: every property at its limit, a fresh session's id for id */
    json_t *r = t_call(s, sid, "strobe_profile_start", "{}");
    char *id = session_id(r);
    json_decref(r);
    json_t *args = json_object();
    const char *key;
    json_t *p;
    json_object_foreach(props, key, p) json_object_set_new(args, key, valid_value(p, key, id));
    r = call_json(s, sid, names[t], args);
    REQUIRE_TOOL_OK(r);
    json_t *first = json_array_get(json_object_get(json_object_get(tool, "outputSchema"), "anyOf"), 0);
    size_t i;
    json_t *field;
    json_array_foreach(json_object_get(first, "required"), i, field)
      CHECKF(json_object_get(t_sc(r), json_string_value(field)) != NULL, "%s answered without its %s", names[t],
             json_string_value(field));
    json_decref(r);
    /* invalid: each property just past its schema, then an unknown argument */
    json_object_foreach(props, key, p) {
      json_t *bad = invalid_values(p), *v;
      json_array_foreach(bad, i, v) {
        json_t *one = json_deep_copy(args);
        json_object_set(one, key, v);
        r = call_json(s, sid, names[t], one);
        CHECK_TOOL_ERROR(r, "invalid_arguments");
        json_decref(r);
        json_decref(one);
      }
      json_decref(bad);
    }
    json_object_set_new(args, "no_such_argument", json_true());
    r = call_json(s, sid, names[t], args);
    CHECK_TOOL_ERROR(r, "invalid_arguments");
    json_decref(r);
    json_decref(args);
    r = call_id(s, sid, "strobe_profile_end", id); /* ended already by strobe_profile_end's own row */
    json_decref(r);
    free(id);
  }
  json_decref(msg);
}

/* strobe_profile_explain until `done` says its result will do (cap: 300 calls, 6 s of pauses); the result. */
static json_t *explain_until(strobe_server *s, const char *sid, const char *args, int (*done)(json_t *sc)) {
  for (int tries = 0; tries < 300; tries++) {
    json_t *r = t_call(s, sid, "strobe_profile_explain", args);
    REQUIRE_TOOL_OK(r);
    if (done(t_sc(r))) return r;
    json_decref(r);
    fx_sleep_ms(20);
  }
  REQUIRE(!"strobe_profile_explain never gave the result waited for");
  return NULL;
}

static int three_frames(json_t *sc) { return json_array_size(json_object_get(sc, "frames")) == 3; }

static int stalled_in_layout(json_t *sc) {
  json_t *u = json_array_get(json_object_get(sc, "unfinished"), 0);
  return u && !strcmp(json_string_value(json_object_get(u, "stall")), "stalled") &&
         json_is_string(json_object_get(u, "stage")) && !strcmp(json_string_value(json_object_get(u, "stage")), "layout");
}

static void test_explain(void) {
  g_interned = strobe_site_intern("lua_fn_explain_secret", 21, NULL, STROBE_SITE_STAGE);
  strobe_server *s = tools_fixture(1);
  char sid[80];
  t_mcp_init(s, sid);
  json_t *r = t_call(s, sid, "strobe_profile_explain", "{}");
  CHECK_TOOL_ERROR(r, "nothing_recording");
  json_decref(r);
  REQUIRE_EQ_INT(strobe_server_record_start(s, NULL), 0);
  r = explain_until(s, sid, "{\"slowest\":3}", three_frames); /* three passes ended: a baseline */
  json_t *sc = t_sc(r), *first = NULL;
  for (size_t k = 0; k < 3 && !first; k++) { /* one with stages: a pass begun before the recording has none known */
    json_t *f = json_array_get(json_object_get(sc, "frames"), k);
    if (json_array_size(json_object_get(f, "parts")) > 1) first = f;
  }
  REQUIRE(first != NULL);
  CHECK(!strcmp(json_string_value(json_object_get(sc, "source")), "live"));
  CHECK(json_is_false(json_object_get(json_object_get(sc, "coverage"), "switches")));
  CHECK(!strcmp(json_string_value(json_object_get(first, "kind")), "pass"));
  size_t i;
  json_t *part;
  int interned = 0;
  json_array_foreach(json_object_get(first, "parts"), i, part) {
    if (!json_is_true(json_object_get(part, "content"))) continue;
    interned++;
    CHECK(json_is_null(json_object_get(part, "name")));
  }
  CHECK_EQ_INT(interned, 1);
  char args[96];
  snprintf(args, sizeof args, "{\"sample\":%lld}", json_integer_value(json_object_get(first, "op")));
  json_t *one = t_call(s, sid, "strobe_profile_explain", args);
  REQUIRE_TOOL_OK(one);
  json_t *got = json_array_get(json_object_get(t_sc(one), "frames"), 0);
  CHECK(json_is_true(json_object_get(t_sc(one), "sample_found")) && json_array_size(json_object_get(t_sc(one), "frames")) == 1);
  CHECK(json_equal(json_object_get(got, "op"), json_object_get(first, "op")));
  CHECK(!result_mentions(r, "lua_fn_explain_secret") && !result_mentions(one, "lua_fn_explain_secret"));
  json_decref(one);
  json_decref(r);
  __atomic_store_n(&g_block, 1, __ATOMIC_RELEASE); /* the next pass sticks in layout */
  r = explain_until(s, sid, "{}", stalled_in_layout);
  json_t *u = json_array_get(json_object_get(t_sc(r), "unfinished"), 0);
  CHECK(json_number_value(json_object_get(u, "elapsed_ns")) >
        STROBE_STALL_FACTOR * json_number_value(json_object_get(u, "p95_ns")));
  CHECK(json_is_null(json_object_get(u, "stage_parent")) && json_integer_value(json_object_get(u, "n")) >= 3);
  CHECK(!strcmp(json_string_value(json_object_get(u, "thread_now")), "unknown")); /* no sampler here */
  CHECK(json_is_null(json_object_get(u, "thread_since_ns")));
  CHECK(!result_mentions(r, "lua_fn_explain_secret"));
  json_decref(r);
  r = t_call(s, sid, "strobe_profile_explain", "{\"sample\":9007199254740991}");
  REQUIRE_TOOL_OK(r);
  CHECK(json_is_false(json_object_get(t_sc(r), "sample_found")));
  json_decref(r);
}

#define CASES(X)  \
  X(happy_path)   \
  X(rows)         \
  X(arguments)    \
  X(availability) \
  X(limit)        \
  X(ownership)    \
  X(reset)        \
  X(permissions)  \
  X(ui_blocked)   \
  X(stop_cancels) \
  X(interned_names_withheld) \
  X(interned_names_opted_in) \
  X(ui_tree_request) \
  X(deep_capture_request) \
  X(explain)
HARNESS_MAIN(CASES)
