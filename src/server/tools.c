/*
 * tools.c — the MCP tools that STROBE_SERVER_TOOLS lists (strobe/server.h; docs/server.md §Tools):
 * start a profiling session, read it (a report, or availability with {}),
 * reset it (docs/sessions.md §Reset), end it; request a UI-tree snapshot or a deep capture into the local captures
 * and say what became of it (its status and size, never its nodes, calls or bytes: docs/sessions.md §Content); their input and
 * output schemas; argument validation; and the stable error names every failure carries.
 *
 * Owns: the tool schemas and the mapping from STROBE_E* codes to error names.
 * Must never: act on a session without checking, under perms.lock, the MCP
 * switch, the Observe scope and the tool's permission; read or end a session
 * for any owner but the caller's; build report JSON while holding a lock;
 * or report anything but content-free numbers and static labels.
 *
 * Invalid arguments (wrong type, out of range, unknown key, oversized id)
 * are tool results with isError and the name "invalid_arguments" — the
 * agent sees why — while an unknown tool is JSON-RPC -32602.
 *
 * Contents: >>schemas >>errors >>results >>tools
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "server/server_internal.h"
#include "strobe/deep.h"
#include "strobe/tree.h"

/* The tools of STROBE_SERVER_TOOLS (strobe/server.h), by index. */
typedef enum tool_id {
#define TOOL_ENUM(id, bit, name) TOOL_##id,
  STROBE_SERVER_TOOLS(TOOL_ENUM)
#undef TOOL_ENUM
  TOOL_COUNT,
  TOOL_NONE = TOOL_COUNT
} tool_id;

static const struct {
  const char *name; /* the MCP name */
  uint32_t bit;     /* STROBE_TOOL_* */
} k_tools[TOOL_COUNT] = {
#define TOOL_ROW(id, bit, name) {name, STROBE_TOOL_##id},
    STROBE_SERVER_TOOLS(TOOL_ROW)
#undef TOOL_ROW
};

/* >>schemas. Output schemas admit the error shape too: the SDK validates any
 * structuredContent it gets, isError or not. */
#define ERROR_SHAPE "{\"required\":[\"error\",\"message\"]}"
/* Each tool's schema and description; tools/list puts its name (from
 * STROBE_SERVER_TOOLS) first. */
static const char *const k_tool_schema[] = {
    [TOOL_PROFILE_START] =
    "{\"title\":\"Start a profiling session\","
    "\"description\":\"Starts a bounded profiling session in the running application and returns its id. It keeps "
    "the newest max_samples whole operations (frame passes, rebuilds, input dispatches, requests; application "
    "scopes apart) that start after this call and finish before it ends. At most 8 sessions run at once across "
    "all clients. Never triggers a frame, layout or input.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{"
    "\"max_samples\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":240,\"description\":\"samples kept, oldest "
    "dropped first (default 120)\"},"
    "\"include_devtools\":{\"type\":\"boolean\",\"description\":\"also admit operations of devtools windows "
    "(default false)\"},"
    "\"kinds\":{\"type\":\"array\",\"items\":{\"enum\":[\"pass\",\"rebuild\",\"input\",\"request\"]},"
    "\"minItems\":1,\"maxItems\":4,\"uniqueItems\":true,\"description\":\"operation kinds to keep (default all): "
    "[\\\"pass\\\"] keeps frames only, so max_samples holds frames; the other kinds are counted "
    "(counts.kind_excluded), never kept, and not listed as unfinished\"}},\"additionalProperties\":false},"
    "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},\"max_samples\":{\"type\":"
    "\"integer\"},\"include_devtools\":{\"type\":\"boolean\"},\"kinds\":{\"type\":\"array\",\"items\":{\"type\":"
    "\"string\"}},\"limits\":{\"type\":\"object\"},\"error\":{\"type\":"
    "\"string\"},\"message\":{\"type\":\"string\"}},\"anyOf\":[{\"required\":[\"id\",\"max_samples\","
    "\"include_devtools\",\"kinds\",\"limits\"]}," ERROR_SHAPE "]},"
    "\"annotations\":{\"title\":\"Start a profiling session\",\"readOnlyHint\":false,\"destructiveHint\":false,"
    "\"idempotentHint\":false,\"openWorldHint\":false}}",

    [TOOL_PROFILE_READ] =
    "{\"title\":\"Read a profiling session, or availability\","
    "\"description\":\"With {\\\"id\\\": ...}: a snapshot report (content-free JSON v1) of a session this client "
    "started; the session keeps running. Work still running is reported under unfinished, never as a duration; "
    "each entry's state says in_flight (an ordinary operation caught mid-way) or stalled (elapsed over 2x the "
    "p95 of the session's completed operations of its kind), and counts.unfinished_stalled counts the stalls. With {}: availability - whether profiling is compiled in, the MCP, Observe and tool "
    "permissions, limits and build metadata.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\",\"minLength\":1,"
    "\"maxLength\":31,\"description\":\"a session id returned by strobe_profile_start\"}},"
    "\"additionalProperties\":false},"
    "\"outputSchema\":{\"type\":\"object\",\"anyOf\":[{\"required\":[\"version\",\"id\",\"status\",\"samples\"]},"
    "{\"required\":[\"feature_enabled\",\"mcp_enabled\",\"observe_granted\",\"tools\",\"limits\",\"build\"]}," ERROR_SHAPE
    "]},"
    "\"annotations\":{\"title\":\"Read a profiling session\",\"readOnlyHint\":true,\"idempotentHint\":false,"
    "\"openWorldHint\":false}}",

    [TOOL_PROFILE_END] =
    "{\"title\":\"End a profiling session\","
    "\"description\":\"Finalizes a session this client started and returns its final report (content-free JSON "
    "v1). Ending one session never touches another; a finalized report never changes. The id then answers "
    "'ended'.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\",\"minLength\":1,"
    "\"maxLength\":31,\"description\":\"a session id returned by strobe_profile_start\"}},\"required\":[\"id\"],"
    "\"additionalProperties\":false},"
    "\"outputSchema\":{\"type\":\"object\",\"anyOf\":[{\"required\":[\"version\",\"id\",\"final\",\"status\","
    "\"samples\"]}," ERROR_SHAPE "]},"
    "\"annotations\":{\"title\":\"End a profiling session\",\"readOnlyHint\":false,\"destructiveHint\":false,"
    "\"idempotentHint\":false,\"openWorldHint\":false}}",

    [TOOL_PROFILE_RESET] =
    "{\"title\":\"Reset a profiling session\","
    "\"description\":\"Discards the retained samples, application-scope history and counts of a session this "
    "client started, which keeps running and from now on keeps only whole operations that start after the reset "
    "(as if it had just started; session.resets counts the resets). Never touches another client's session. "
    "Returns the session's snapshot report right after the reset (content-free JSON v1).\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\",\"minLength\":1,"
    "\"maxLength\":31,\"description\":\"a session id returned by strobe_profile_start\"}},\"required\":[\"id\"],"
    "\"additionalProperties\":false},"
    "\"outputSchema\":{\"type\":\"object\",\"anyOf\":[{\"required\":[\"version\",\"id\",\"status\","
    "\"samples\"]}," ERROR_SHAPE "]},"
    "\"annotations\":{\"title\":\"Reset a profiling session\",\"readOnlyHint\":false,\"destructiveHint\":true,"
    "\"idempotentHint\":false,\"openWorldHint\":false}}",

    [TOOL_UI_TREE_REQUEST] =
    "{\"title\":\"Request a UI-tree snapshot\","
    "\"description\":\"Asks the application to record, on its next layout pass, every element that pass visits "
    "(type, id, bounds, style numbers) into its local capture files, and answers what became of requests so far: "
    "counts and the last snapshot's size (nodes, nodes cut by the bound, bytes). The snapshot itself is application "
    "content: it never comes back through MCP; read it from the capture with `strobe tree`. With {\\\"request\\\": "
    "false} it only answers the status. Fails with nothing_recording when no capture file or flight recorder "
    "records.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"request\":{\"type\":\"boolean\",\"description\":"
    "\"false: only the status (default true)\"}},\"additionalProperties\":false},"
    "\"outputSchema\":{\"type\":\"object\",\"anyOf\":[{\"required\":[\"requested\",\"requests\",\"pending\","
    "\"written\",\"last\"]}," ERROR_SHAPE "]},"
    "\"annotations\":{\"title\":\"Request a UI-tree snapshot\",\"readOnlyHint\":false,\"destructiveHint\":false,"
    "\"idempotentHint\":false,\"openWorldHint\":false}}",

    [TOOL_DEEP_CAPTURE_REQUEST] =
    "{\"title\":\"Request a deep capture of the next frame\","
    "\"description\":\"Asks the application's renderer to record its next frame's command stream (every draw call "
    "with the resources it reads, their contents once each) and its screenshot into its local capture files, and "
    "answers what became of requests so far: counts and the last deep capture's size (frame, calls, calls cut by the "
    "bound, resources, content bytes). The calls and contents are application content: they never come back through "
    "MCP; read them from the capture with `strobe calls` or replay them offline. With {\\\"request\\\": false} it "
    "only answers the status. Fails with nothing_recording when no capture file records.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"request\":{\"type\":\"boolean\",\"description\":"
    "\"false: only the status (default true)\"}},\"additionalProperties\":false},"
    "\"outputSchema\":{\"type\":\"object\",\"anyOf\":[{\"required\":[\"requested\",\"requests\",\"pending\","
    "\"written\",\"last\"]}," ERROR_SHAPE "]},"
    "\"annotations\":{\"title\":\"Request a deep capture\",\"readOnlyHint\":false,\"destructiveHint\":false,"
    "\"idempotentHint\":false,\"openWorldHint\":false}}",
};
_Static_assert(sizeof k_tool_schema / sizeof *k_tool_schema == TOOL_COUNT, "a schema for every tool");

json_t *strobe__tools_list(void) {
  /* Parsed per call (a few microseconds): no shared mutable state. */
  json_t *list = json_array();
  for (int t = 0; list && t < TOOL_COUNT; t++) {
    json_t *tool = json_pack("{s:s}", "name", k_tools[t].name);
    json_t *schema = k_tool_schema[t] ? json_loads(k_tool_schema[t], 0, NULL) : NULL;
    int bad = !tool || !schema || json_object_update(tool, schema);
    json_decref(schema);
    if (bad) json_decref(tool);
    if (bad || json_array_append_new(list, tool)) { /* append_new takes the tool even when it fails */
      json_decref(list);
      list = NULL;
    }
  }
  return list;
}

/* >>errors */
const char *strobe__error_name(int rc) {
  switch (rc) {
    case STROBE_EUNKNOWN_ID: return "unknown_id";
    case STROBE_EENDED: return "ended";
    case STROBE_ECANCELLED: return "cancelled";
    case STROBE_ENOTOWNER: return "not_owner";
    case STROBE_ELIMIT: return "limit_reached";
    case STROBE_EFEATURE_DISABLED: return "feature_disabled";
    case STROBE_EINVAL: return "invalid_arguments";
    case STROBE_EPERM: return "permission_denied";
    case STROBE_ECLOSED: return "closed";
    case STROBE_ENOMEM: return "out_of_memory";
    case STROBE_ESTATE: return "nothing_recording";
    default: return "internal";
  }
}

static const char *error_message(int rc) {
  switch (rc) {
    case STROBE_EUNKNOWN_ID: return "unknown session id (only the last 64 ended ids are remembered)";
    case STROBE_EENDED: return "the session has already ended";
    case STROBE_ECANCELLED: return "the session was cancelled (a permission was revoked or its MCP session ended)";
    case STROBE_ENOTOWNER: return "the session belongs to another client";
    case STROBE_ELIMIT: return "8 profiling sessions are already running; end one first";
    case STROBE_EFEATURE_DISABLED: return "profiling is compiled out of this build";
    case STROBE_ECLOSED: return "the application's root tree has closed; no new session can start";
    case STROBE_ENOMEM: return "out of memory";
    case STROBE_ESTATE: return "nothing records (no capture file or flight recorder): a snapshot goes only into local captures";
    default: return strobe_strerror(rc);
  }
}

/* >>results */
static json_t *text_block(const char *text, size_t len) {
  return json_pack("{s:s,s:s%}", "type", "text", "text", text, len);
}

/* Serializes a result (reference stolen); NULL when out of memory. */
static char *dump_result(json_t *v, size_t *len) {
  char *text = v ? json_dumps(v, JSON_COMPACT) : NULL;
  json_decref(v);
  *len = text ? strlen(text) : 0;
  return text;
}

static json_t *tool_error(int rc, const char *message) {
  const char *name = strobe__error_name(rc);
  if (!message) message = error_message(rc);
  char text[480];
  snprintf(text, sizeof text, "%s: %s", name, message);
  return json_pack("{s:[o],s:{s:s,s:s},s:b}", "content", text_block(text, strlen(text)), "structuredContent",
                   "error", name, "message", message, "isError", 1);
}

/* A successful result: `value` as structuredContent and as a text block. */
static json_t *tool_value(json_t *value) {
  char *text = json_dumps(value, JSON_COMPACT);
  if (!text) {
    json_decref(value);
    return tool_error(STROBE_ENOMEM, NULL);
  }
  json_t *r = json_pack("{s:[o],s:o}", "content", text_block(text, strlen(text)), "structuredContent", value);
  free(text);
  return r;
}

/* Appends s as a JSON string literal. */
static int put_escaped(char *out, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  char *o = out;
  *o++ = '"';
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      *o++ = '\\';
      *o++ = (char)c;
    } else if (c < 0x20) {
      *o++ = '\\';
      *o++ = 'u';
      *o++ = '0';
      *o++ = '0';
      *o++ = hex[c >> 4];
      *o++ = hex[c & 15];
    } else {
      *o++ = (char)c;
    }
  }
  *o++ = '"';
  return (int)(o - out);
}

/* A report as a CallToolResult: its JSON as the text block and, spliced in
 * unparsed, as structuredContent. The report writer emits strict JSON, so
 * this skips a parse and a re-serialization (milliseconds for 240 samples)
 * on the server's thread. */
static char *tool_report(strobe_report *rep, size_t *len) {
  char *text = NULL;
  size_t n = 0;
  int rc = strobe_report_json(rep, &text, &n);
  strobe_report_free(rep);
  if (rc) return dump_result(tool_error(rc, NULL), len);
  static const char a[] = "{\"content\":[{\"type\":\"text\",\"text\":";
  static const char b[] = "}],\"structuredContent\":";
  char *out = malloc(sizeof a + sizeof b + 6 * n + n + 8);
  if (!out) {
    free(text);
    return NULL;
  }
  char *o = out;
  memcpy(o, a, sizeof a - 1);
  o += sizeof a - 1;
  o += put_escaped(o, text, n);
  memcpy(o, b, sizeof b - 1);
  o += sizeof b - 1;
  memcpy(o, text, n);
  o += n;
  *o++ = '}';
  *o = 0;
  *len = (size_t)(o - out);
  free(text);
  return out;
}

json_t *strobe__build_json(void) {
  struct utsname u;
  if (uname(&u) != 0) strcpy(u.machine, "unknown");
  json_t *features = json_array();
  if (strobe_profiling_available()) json_array_append_new(features, json_string("profiling"));
  json_array_append_new(features, json_string("zstd"));
  json_array_append_new(features, json_string("server"));
  json_array_append_new(features, json_string("mcp"));
  return json_pack("{s:s,s:s,s:s,s:s,s:o,s:b}", "name", "strobe", "version", strobe_version(), "os", "linux", "arch",
                   u.machine, "features", features, "assertions", STROBE__ASSERTIONS);
}

json_t *strobe__limits_json(void) {
  return json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "max_sessions", STROBE_MAX_SESSIONS, "max_samples",
                   STROBE_MAX_SAMPLES, "default_samples", STROBE_DEFAULT_SAMPLES, "max_windows", STROBE_MAX_WINDOWS,
                   "ended_ids_remembered", STROBE_MAX_ENDED_IDS, "max_app_scopes", STROBE_MAX_APP_SCOPE_HISTORY,
                   "max_live_operations", STROBE_MAX_LIVE_OPS, "max_live_app_scopes", STROBE_MAX_LIVE_APP_SCOPES);
}

static const char *const k_kind_names[] = {"pass", "rebuild", "input", "request"}; /* STROBE_OP_PASS.. */

/* The admitted kinds as names (0 = every kind). */
json_t *strobe__kinds_json(uint32_t kinds) {
  json_t *a = json_array();
  for (int k = 0; k < 4; k++)
    if (!kinds || (kinds & STROBE_KIND_BIT(STROBE_OP_PASS + k))) json_array_append_new(a, json_string(k_kind_names[k]));
  return a;
}

/* >>tools */
static tool_id lookup(const char *name) {
  for (int t = 0; t < TOOL_COUNT; t++)
    if (!strcmp(name, k_tools[t].name)) return (tool_id)t;
  return TOOL_NONE;
}

#define MAX_ARG_KEYS 8 /* each tool takes at most two */

/* kinds: a non-empty array of distinct kind names. */
static int parse_kinds(json_t *v, uint32_t *kinds, const char **why) {
  *why = "kinds must be a non-empty array of distinct kinds: pass, rebuild, input, request";
  if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > 4) return STROBE_EINVAL;
  uint32_t bits = 0;
  size_t i;
  json_t *e;
  json_array_foreach(v, i, e) {
    uint32_t bit = 0;
    for (int k = 0; k < 4 && json_is_string(e); k++)
      if (!strcmp(json_string_value(e), k_kind_names[k])) bit = STROBE_KIND_BIT(STROBE_OP_PASS + k);
    if (!bit || (bits & bit)) return STROBE_EINVAL;
    bits |= bit;
  }
  *kinds = bits;
  return 0;
}

int strobe__parse_start_args(json_t *args, strobe_session_desc *o, const char **why) {
  memset(o, 0, sizeof *o);
  if (!args) return 0;
  if (!json_is_object(args)) {
    *why = "arguments must be an object";
    return STROBE_EINVAL;
  }
  const char *key;
  json_t *v;
  json_object_foreach(args, key, v) {
    if (!strcmp(key, "max_samples")) {
      /* An integer, or a real with no fractional part (120.0): JSON has one number type. */
      double d = json_is_integer(v) ? (double)json_integer_value(v) : json_is_real(v) ? json_real_value(v) : -1;
      if (!(d >= 1 && d <= STROBE_MAX_SAMPLES) || d != (double)(int)d) {
        *why = "max_samples must be an integer from 1 to 240";
        return STROBE_EINVAL;
      }
      o->max_samples = (uint32_t)d;
    } else if (!strcmp(key, "include_devtools")) {
      if (!json_is_boolean(v)) {
        *why = "include_devtools must be a boolean";
        return STROBE_EINVAL;
      }
      o->include_devtools = json_is_true(v);
    } else if (!strcmp(key, "kinds")) {
      if (parse_kinds(v, &o->kinds, why)) return STROBE_EINVAL;
    } else {
      *why = "unknown argument (accepted: max_samples, include_devtools, kinds)";
      return STROBE_EINVAL;
    }
  }
  return 0;
}

/* The id argument: present (or, for read, absent = availability), a string of 1..31 bytes. */
static int parse_id_args(json_t *args, int required, const char **id, const char **why) {
  *id = NULL;
  if (!args) {
    if (!required) return 0;
    *why = "id is required";
    return STROBE_EINVAL;
  }
  const char *key;
  json_t *v;
  json_object_foreach(args, key, v) {
    if (strcmp(key, "id") != 0) {
      *why = "unknown argument (accepted: id)";
      return STROBE_EINVAL;
    }
    size_t n = json_string_length(v);
    if (!json_is_string(v) || n == 0 || n >= STROBE_SESSION_ID_MAX || strlen(json_string_value(v)) != n) {
      *why = "id must be a session id string such as \"profile_1\"";
      return STROBE_EINVAL;
    }
    *id = json_string_value(v);
  }
  if (!*id && required) {
    *why = "id is required";
    return STROBE_EINVAL;
  }
  return 0;
}

/* Checks the MCP switch, Observe and the tool's permission; perms.lock held. */
static int permitted(const strobe__perms *p, tool_id t, const char **why) {
  STROBE_ASSERT(strobe__mutex_held(&p->lock));
  if (!p->mcp_enabled) {
    *why = "MCP is disabled in this application";
    return 0;
  }
  if (!p->observe) {
    *why = "the Observe scope is not granted";
    return 0;
  }
  if (!(p->tools & k_tools[t].bit)) {
    *why = "this tool is not permitted";
    return 0;
  }
  return 1;
}

static json_t *availability(const strobe__tool_env *env) {
  strobe__perms *p = env->perms;
  strobe__mutex_lock(&p->lock);
  int mcp = p->mcp_enabled, observe = p->observe;
  uint32_t tools = p->tools;
  strobe__mutex_unlock(&p->lock);
  json_t *allowed = json_object();
  for (int t = 0; t < TOOL_COUNT; t++)
    json_object_set_new(allowed, k_tools[t].name, json_boolean(mcp && observe && (tools & k_tools[t].bit)));
  strobe_session_info infos[STROBE_MAX_SESSIONS];
  int n = strobe_collector_query_sessions(env->collector, infos, STROBE_MAX_SESSIONS);
  json_t *yours = json_array();
  for (int i = 0; i < n && i < STROBE_MAX_SESSIONS; i++)
    if (infos[i].owner == env->owner) json_array_append_new(yours, json_string(infos[i].id));
  return json_pack("{s:b,s:b,s:b,s:o,s:o,s:{s:i,s:o},s:o,s:{s:s,s:s}}", "feature_enabled",
                   strobe_profiling_available(), "mcp_enabled", mcp, "observe_granted", observe, "tools", allowed,
                   "limits", strobe__limits_json(), "sessions", "active", n < 0 ? 0 : n, "yours", yours, "build",
                   strobe__build_json(), "units", "timings", "wall-clock milliseconds", "timestamps",
                   "milliseconds since the collector's creation (monotonic, not calendar time)");
}

/* strobe_ui_tree_request's and strobe_deep_capture_request's one argument: request (a boolean, default true). */
static int parse_tree_args(json_t *args, int *request, const char **why) {
  *request = 1;
  const char *key;
  json_t *v;
  if (!args) return 0;
  json_object_foreach(args, key, v) {
    if (strcmp(key, "request") != 0 || !json_is_boolean(v)) {
      *why = "the one argument is request, a boolean";
      return STROBE_EINVAL;
    }
    *request = json_is_true(v);
  }
  return 0;
}

/* strobe_ui_tree_request, after its permission check: numbers and the error name only. */
static char *tree_request(int request, size_t *len) {
  int rc = request ? strobe_tree_request() : 0;
  if (rc) return dump_result(tool_error(rc, NULL), len);
  json_t *v = strobe__tree_status_json();
  if (v) json_object_set_new(v, "requested", json_boolean(request));
  return dump_result(v ? tool_value(v) : tool_error(STROBE_ENOMEM, NULL), len);
}

/* strobe_deep_capture_request, after its permission check: numbers and the error name only. */
static char *deep_request(int request, size_t *len) {
  int rc = request ? strobe_deep_request() : 0;
  if (rc == STROBE_ESTATE) /* its own words: a flight recorder alone takes no deep capture */
    return dump_result(tool_error(rc, "no capture file records: a deep capture goes only into local capture files"), len);
  if (rc) return dump_result(tool_error(rc, NULL), len);
  json_t *v = strobe__deep_status_json();
  if (v) json_object_set_new(v, "requested", json_boolean(request));
  return dump_result(v ? tool_value(v) : tool_error(STROBE_ENOMEM, NULL), len);
}

int strobe__tools_call(const strobe__tool_env *env, const char *name, json_t *args, char **result, size_t *len) {
  *result = NULL;
  *len = 0;
  tool_id t = lookup(name);
  if (t == TOOL_NONE) return -32602;
  if (args && json_object_size(args) > MAX_ARG_KEYS) {
    *result = dump_result(tool_error(STROBE_EINVAL, "too many arguments"), len);
    return 0;
  }
  const char *why = NULL;
  const char *id = NULL;
  strobe_session_desc opts;
  int request = 0;
  int rc = t == TOOL_PROFILE_START     ? strobe__parse_start_args(args, &opts, &why)
           : t == TOOL_UI_TREE_REQUEST || t == TOOL_DEEP_CAPTURE_REQUEST ? parse_tree_args(args, &request, &why)
                                       : parse_id_args(args, t != TOOL_PROFILE_READ, &id, &why);
  if (rc) {
    *result = dump_result(tool_error(rc, why), len);
    return 0;
  }
  if (t == TOOL_PROFILE_READ && !id) { /* availability needs no permission: it says which are missing */
    *result = dump_result(tool_value(availability(env)), len);
    return 0;
  }
  if (!strobe_profiling_available()) {
    *result = dump_result(tool_error(STROBE_EFEATURE_DISABLED, NULL), len);
    return 0;
  }

  /* Check and act under perms.lock: a revocation either happens before (and
   * this call is refused) or after (and cancels what this call started). */
  strobe__perms *p = env->perms;
  strobe_report *rep = NULL;
  char sid[STROBE_SESSION_ID_MAX] = "";
  strobe__mutex_lock(&p->lock);
  if (!permitted(p, t, &why)) {
    rc = STROBE_EPERM;
  } else if (t == TOOL_UI_TREE_REQUEST) {
    strobe__mutex_unlock(&p->lock);
    *result = tree_request(request, len);
    return 0;
  } else if (t == TOOL_DEEP_CAPTURE_REQUEST) {
    strobe__mutex_unlock(&p->lock);
    *result = deep_request(request, len);
    return 0;
  } else if (t == TOOL_PROFILE_START) {
    opts.owner = env->owner;
    rc = strobe_session_start(env->collector, &opts, sid);
  } else if (t == TOOL_PROFILE_READ) {
    rc = strobe_session_read(env->collector, id, env->owner, &rep);
  } else if (t == TOOL_PROFILE_RESET) {
    /* Only the caller's own session (the owner is checked by the reset), then its fresh snapshot. */
    rc = strobe_collector_reset(env->collector, id, env->owner);
    if (rc >= 0) rc = strobe_session_read(env->collector, id, env->owner, &rep);
  } else {
    rc = strobe_session_stop(env->collector, id, env->owner, &rep);
  }
  strobe__mutex_unlock(&p->lock);

  char note[400];
  if (rc == STROBE_ELIMIT && env->mcp) {
    strobe__mcp_limit_note(env->mcp, strobe__mono_ms(), note, sizeof note);
    why = note;
  }
  if (rc) {
    *result = dump_result(tool_error(rc, rc == STROBE_EPERM || rc == STROBE_ELIMIT ? why : NULL), len);
    return 0;
  }
  if (t != TOOL_PROFILE_START) {
    *result = tool_report(rep, len);
    return 0;
  }
  uint32_t max = opts.max_samples ? opts.max_samples : STROBE_DEFAULT_SAMPLES;
  *result = dump_result(tool_value(json_pack("{s:s,s:i,s:b,s:o,s:o}", "id", sid, "max_samples", (int)max,
                                             "include_devtools", opts.include_devtools, "kinds",
                                             strobe__kinds_json(opts.kinds), "limits", strobe__limits_json())),
                        len);
  return 0;
}
