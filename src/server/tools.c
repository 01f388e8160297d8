/*
 * tools.c — the MCP tools that STROBE_SERVER_TOOLS lists (strobe/server.h; docs/server.md §Tools):
 * start a profiling session, read it (a report, or availability with {}),
 * reset it (docs/sessions.md §Reset), end it; request a UI-tree snapshot or a deep capture into the local captures
 * and say what became of it (its status and size, never its nodes, calls or bytes: docs/sessions.md §Content); explain
 * frames of the live recording or the shown file with the library's content-free JSON (strobe_explain_json,
 * docs/explain.md); their input and output schemas; argument validation; and the stable error names every failure
 * carries.
 *
 * Owns: the tool table (one row per tool: description, arguments, output
 * schema, annotations, handler; one row per argument: its schema, built from
 * the constants its parser enforces) and the mapping from STROBE_E* codes to
 * error names.
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
#include <unistd.h>

#include "server/server_internal.h"
#include "server/viewer_internal.h"
#include "strobe/deep.h"
#include "strobe/explain.h"
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

/* >>schemas — the arguments. Each has one row: its JSON Schema, built from
 * the constants its parser enforces (so tools/list can never promise what a
 * call refuses), and that parser. A tool's row (k_rows, >>tools) lists the
 * arguments it takes. */
#define STR_(x) #x
#define STR(x) STR_(x)
#define KIND_COUNT (STROBE_OP_KIND_LIMIT - 1) /* kinds are 1..N (STROBE_OP_KINDS in strobe.h) */
#define ID_MAX_LEN (STROBE_SESSION_ID_MAX - 1) /* bytes of a session id, without its terminator */

typedef struct tool_args {
  strobe_session_desc start; /* max_samples, include_devtools, kinds */
  const char *id;            /* borrowed from the arguments; NULL when absent */
  int request;               /* strobe_ui_tree_request / strobe_deep_capture_request: default 1 */
  uint64_t sample;           /* strobe_profile_explain: an operation id; 0 when absent */
  uint32_t slowest;          /* strobe_profile_explain: 1..MAX_SLOWEST; 0 when absent */
} tool_args;

typedef enum arg_id {
  ARG_MAX_SAMPLES,
  ARG_INCLUDE_DEVTOOLS,
  ARG_KINDS,
  ARG_ID,
  ARG_REQUEST,
  ARG_SAMPLE,
  ARG_SLOWEST,
  ARG_COUNT
} arg_id;
#define MAX_SLOWEST 8              /* frames strobe_profile_explain explains at once: a result stays small */
#define SAMPLE_MAX 9007199254740991 /* 2^53 - 1: the largest integer a JSON client reads exactly */

/* A value's schema (a new reference), without its description. */
static json_t *schema_max_samples(void) {
  return json_pack("{s:s,s:i,s:i,s:i}", "type", "integer", "minimum", 1, "maximum", STROBE_MAX_SAMPLES, "default",
                   STROBE_DEFAULT_SAMPLES);
}
static json_t *schema_boolean(void) { return json_pack("{s:s}", "type", "boolean"); }
static json_t *schema_kinds(void) {
  json_t *names = json_array();
  for (uint32_t k = 1; k <= KIND_COUNT; k++) json_array_append_new(names, json_string(strobe_op_kind_name(k)));
  return json_pack("{s:s,s:{s:o},s:i,s:i,s:b}", "type", "array", "items", "enum", names, "minItems", 1, "maxItems",
                   KIND_COUNT, "uniqueItems", 1);
}
static json_t *schema_id(void) {
  return json_pack("{s:s,s:i,s:i}", "type", "string", "minLength", 1, "maxLength", ID_MAX_LEN);
}

/* max_samples: an integer, or a real with no fractional part (120.0): JSON has one number type. */
static int parse_max_samples(json_t *v, tool_args *a, const char **why) {
  double d = json_is_integer(v) ? (double)json_integer_value(v) : json_is_real(v) ? json_real_value(v) : -1;
  if (!(d >= 1 && d <= STROBE_MAX_SAMPLES) || d != (double)(int)d) {
    *why = "max_samples must be an integer from 1 to " STR(STROBE_MAX_SAMPLES);
    return STROBE_EINVAL;
  }
  a->start.max_samples = (uint32_t)d;
  return 0;
}

static int parse_include_devtools(json_t *v, tool_args *a, const char **why) {
  *why = "include_devtools must be a boolean";
  if (!json_is_boolean(v)) return STROBE_EINVAL;
  a->start.include_devtools = json_is_true(v);
  return 0;
}

/* kinds: a non-empty array of distinct kind names. */
static int parse_kinds(json_t *v, tool_args *a, const char **why) {
  *why = "kinds must be a non-empty array of distinct operation kinds (the schema's enum)";
  if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > KIND_COUNT) return STROBE_EINVAL;
  uint32_t bits = 0;
  size_t i;
  json_t *e;
  json_array_foreach(v, i, e) {
    uint32_t bit = 0;
    for (uint32_t k = 1; k <= KIND_COUNT && json_is_string(e); k++)
      if (!strcmp(json_string_value(e), strobe_op_kind_name(k))) bit = STROBE_KIND_BIT(k);
    if (!bit || (bits & bit)) return STROBE_EINVAL;
    bits |= bit;
  }
  a->start.kinds = bits;
  return 0;
}

/* id: a string of 1..ID_MAX_LEN bytes with no NUL inside. */
static int parse_id(json_t *v, tool_args *a, const char **why) {
  size_t n = json_string_length(v);
  if (!json_is_string(v) || n == 0 || n > ID_MAX_LEN || strlen(json_string_value(v)) != n) {
    *why = "id must be a session id string such as \"profile_1\" (1 to " STR(ID_MAX_LEN) " bytes)";
    return STROBE_EINVAL;
  }
  a->id = json_string_value(v);
  return 0;
}

static json_t *schema_sample(void) {
  return json_pack("{s:s,s:i,s:I}", "type", "integer", "minimum", 1, "maximum", (json_int_t)SAMPLE_MAX);
}
static json_t *schema_slowest(void) {
  return json_pack("{s:s,s:i,s:i,s:i}", "type", "integer", "minimum", 1, "maximum", MAX_SLOWEST, "default", 1);
}

/* An integer from lo to hi, or a real with no fractional part; -1 otherwise. */
static double whole_in(json_t *v, double lo, double hi) {
  double d = json_is_integer(v) ? (double)json_integer_value(v) : json_is_real(v) ? json_real_value(v) : -1;
  return d >= lo && d <= hi && d == (double)(int64_t)d ? d : -1;
}

static int parse_sample(json_t *v, tool_args *a, const char **why) {
  double d = whole_in(v, 1, (double)SAMPLE_MAX);
  *why = "sample must be an operation id (an integer of at least 1): a session sample's or unfinished entry's id";
  if (d < 0) return STROBE_EINVAL;
  a->sample = (uint64_t)d;
  return 0;
}

static int parse_slowest(json_t *v, tool_args *a, const char **why) {
  double d = whole_in(v, 1, MAX_SLOWEST);
  *why = "slowest must be an integer from 1 to " STR(MAX_SLOWEST);
  if (d < 0) return STROBE_EINVAL;
  a->slowest = (uint32_t)d;
  return 0;
}

static int parse_request(json_t *v, tool_args *a, const char **why) {
  *why = "request must be a boolean";
  if (!json_is_boolean(v)) return STROBE_EINVAL;
  a->request = json_is_true(v);
  return 0;
}

static const struct {
  const char *name;
  json_t *(*schema)(void);
  int (*parse)(json_t *v, tool_args *a, const char **why);
  const char *description;
} k_args[ARG_COUNT] = {
    [ARG_MAX_SAMPLES] = {"max_samples", schema_max_samples, parse_max_samples,
                         "samples kept, oldest dropped first (default " STR(STROBE_DEFAULT_SAMPLES) ")"},
    [ARG_INCLUDE_DEVTOOLS] = {"include_devtools", schema_boolean, parse_include_devtools,
                              "also admit operations of devtools windows (default false)"},
    [ARG_KINDS] = {"kinds", schema_kinds, parse_kinds,
                   "operation kinds to keep (default all): [\"pass\"] keeps frames only, so max_samples holds "
                   "frames; the other kinds are counted (counts.kind_excluded), never kept, and not listed as "
                   "unfinished"},
    [ARG_ID] = {"id", schema_id, parse_id, "a session id returned by strobe_profile_start"},
    [ARG_REQUEST] = {"request", schema_boolean, parse_request, "false: only the status (default true)"},
    [ARG_SAMPLE] = {"sample", schema_sample, parse_sample,
                    "an operation id to explain: a sample's or an unfinished entry's id in a session report"},
    [ARG_SLOWEST] = {"slowest", schema_slowest, parse_slowest,
                     "explain the K slowest ended frames of the recording, slowest first (default 1 without sample)"},
};

#define ARG(a) (1u << (a))
/* Output schemas admit the error shape too: the SDK validates any
 * structuredContent it gets, isError or not. */
#define ERROR_SHAPE "{\"required\":[\"error\",\"message\"]}"
#define REPORT_OUTPUT(...) "{\"type\":\"object\",\"anyOf\":[{\"required\":[" __VA_ARGS__ "]}," ERROR_SHAPE "]}"
#define STATUS_OUTPUT REPORT_OUTPUT("\"requested\",\"requests\",\"pending\",\"written\",\"last\"")
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

/* The admitted kinds as names (0 = every kind). */
json_t *strobe__kinds_json(uint32_t kinds) {
  json_t *a = json_array();
  for (uint32_t k = 1; k <= KIND_COUNT; k++)
    if (!kinds || (kinds & STROBE_KIND_BIT(k))) json_array_append_new(a, json_string(strobe_op_kind_name(k)));
  return a;
}

/* >>tools */
#define MAX_ARG_KEYS 8 /* each tool takes at most three */

/* Parses `args` (NULL means {}) against the arguments `takes` (ARG bits), of
 * which `required` must be present. Returns 0, or STROBE_EINVAL with *why set
 * to a static message. */
static int parse_args(json_t *args, uint32_t takes, uint32_t required, tool_args *a, const char **why) {
  memset(a, 0, sizeof *a);
  a->request = 1;
  if (args && !json_is_object(args)) {
    *why = "arguments must be an object";
    return STROBE_EINVAL;
  }
  uint32_t seen = 0;
  const char *key;
  json_t *v;
  json_object_foreach(args, key, v) {
    int k = 0;
    while (k < ARG_COUNT && !((takes & ARG(k)) && !strcmp(key, k_args[k].name))) k++;
    if (k == ARG_COUNT) {
      *why = "unknown argument: the tool's inputSchema lists those it takes";
      return STROBE_EINVAL;
    }
    if (k_args[k].parse(v, a, why)) return STROBE_EINVAL;
    seen |= ARG(k);
  }
  if (required & ~seen) {
    *why = "a required argument is missing: the tool's inputSchema lists them";
    return STROBE_EINVAL;
  }
  return 0;
}

int strobe__parse_start_args(json_t *args, strobe_session_desc *o, const char **why) {
  tool_args a;
  int rc = parse_args(args, ARG(ARG_MAX_SAMPLES) | ARG(ARG_INCLUDE_DEVTOOLS) | ARG(ARG_KINDS), 0, &a, why);
  *o = rc ? (strobe_session_desc){0} : a.start;
  return rc;
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

/* Every tool's gate: 0 with perms.lock held when profiling is compiled in and
 * tool t is permitted; otherwise the error, without the lock. Check and act
 * under perms.lock: a revocation either happens before (and this call is
 * refused) or after (and cancels what this call started). */
static int lock_permitted(const strobe__tool_env *env, tool_id t, const char **why) {
  if (!strobe_profiling_available()) return STROBE_EFEATURE_DISABLED;
  strobe__mutex_lock(&env->perms->lock);
  if (permitted(env->perms, t, why)) return 0;
  strobe__mutex_unlock(&env->perms->lock);
  return STROBE_EPERM;
}

/* A failed tool as its result: permission and limit failures say why. */
static char *failed(const strobe__tool_env *env, int rc, const char *why, size_t *len) {
  char note[400];
  if (rc == STROBE_ELIMIT && env->mcp) {
    strobe__mcp_limit_note(env->mcp, strobe__mono_ms(), note, sizeof note);
    why = note;
  }
  return dump_result(tool_error(rc, rc == STROBE_EPERM || rc == STROBE_ELIMIT ? why : NULL), len);
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

/* The handlers, one per row: each runs its tool on parsed arguments and
 * returns the CallToolResult (NULL when out of memory). */
typedef char *tool_run(const strobe__tool_env *env, tool_id t, const tool_args *a, size_t *len);

static char *run_start(const strobe__tool_env *env, tool_id t, const tool_args *a, size_t *len) {
  const char *why = NULL;
  strobe_session_desc o = a->start;
  char sid[STROBE_SESSION_ID_MAX] = "";
  int rc = lock_permitted(env, t, &why);
  if (!rc) {
    o.owner = env->owner;
    rc = strobe_session_start(env->collector, &o, sid);
    strobe__mutex_unlock(&env->perms->lock);
  }
  if (rc) return failed(env, rc, why, len);
  uint32_t max = o.max_samples ? o.max_samples : STROBE_DEFAULT_SAMPLES;
  return dump_result(tool_value(json_pack("{s:s,s:i,s:b,s:o,s:o}", "id", sid, "max_samples", (int)max,
                                          "include_devtools", o.include_devtools, "kinds", strobe__kinds_json(o.kinds),
                                          "limits", strobe__limits_json())),
                     len);
}

/* read, reset and end: an action on the caller's own session (the owner is
 * checked by each call) under perms.lock, answered with the session's report. */
static char *session_report(const strobe__tool_env *env, tool_id t, const tool_args *a, size_t *len) {
  const char *why = NULL;
  strobe_report *rep = NULL;
  int rc = lock_permitted(env, t, &why);
  if (!rc) {
    if (t == TOOL_PROFILE_END) {
      rc = strobe_session_stop(env->collector, a->id, env->owner, &rep);
    } else {
      if (t == TOOL_PROFILE_RESET) rc = strobe_collector_reset(env->collector, a->id, env->owner);
      if (rc >= 0) rc = strobe_session_read(env->collector, a->id, env->owner, &rep);
    }
    strobe__mutex_unlock(&env->perms->lock);
  }
  return rc ? failed(env, rc, why, len) : tool_report(rep, len);
}

/* read without an id is availability, which needs no permission: it says which are missing. */
static char *run_read(const strobe__tool_env *env, tool_id t, const tool_args *a, size_t *len) {
  return a->id ? session_report(env, t, a, len) : dump_result(tool_value(availability(env)), len);
}

/* strobe_ui_tree_request and strobe_deep_capture_request, once permitted:
 * numbers and the error name only. */
static char *run_request(const strobe__tool_env *env, tool_id t, const tool_args *a, size_t *len) {
  const char *why = NULL;
  int rc = lock_permitted(env, t, &why);
  if (rc) return failed(env, rc, why, len);
  strobe__mutex_unlock(&env->perms->lock);
  int tree = t == TOOL_UI_TREE_REQUEST;
  rc = !a->request ? 0 : tree ? strobe_tree_request() : strobe_deep_request();
  if (rc == STROBE_ESTATE && !tree) /* its own words: a flight recorder alone takes no deep capture */
    return dump_result(tool_error(rc, "no capture file records: a deep capture goes only into local capture files"), len);
  if (rc) return dump_result(tool_error(rc, NULL), len);
  json_t *v = tree ? strobe__tree_status_json() : strobe__deep_status_json();
  if (v) json_object_set_new(v, "requested", json_boolean(a->request));
  return dump_result(v ? tool_value(v) : tool_error(STROBE_ENOMEM, NULL), len);
}

/* strobe_profile_explain's frames: the sample's (the first frame with that operation id), then the slowest K. */
static json_t *explain_value(strobe_explain *e, const tool_args *a, const char *source, int *rc) {
  const strobe_frames *fx = strobe_explain_query_frames(e);
  uint32_t frames[1 + MAX_SLOWEST], n = 0, count = strobe_frames_query_count(fx), i = 0;
  if (a->sample) {
    while (i < count && strobe_frames_query_frame(fx, i)->id != a->sample) i++;
    if (i < count) frames[n++] = i;
  }
  if (a->slowest || !a->sample) n += strobe_explain_slowest(e, a->slowest ? a->slowest : 1, frames + n);
  char *text = NULL;
  size_t len = 0;
  *rc = strobe_explain_json(e, frames, n, STROBE_EXPLAIN_JSON_UNFINISHED, &text, &len);
  if (*rc) return NULL;
  json_t *v = json_loadb(text, len, 0, NULL);
  free(text);
  if (!v) {
    *rc = STROBE_ENOMEM;
    return NULL;
  }
  json_object_set_new(v, "source", json_string(source));
  if (a->sample) json_object_set_new(v, "sample_found", json_boolean(i < count));
  return v;
}

/* strobe_profile_explain, once permitted: the capture of viewer_internal.h explained by the library, content-free.
 * The dump and the explainer's three reads run on the caller's thread (docs/server.md §Tools: their cost). */
static char *run_explain(const strobe__tool_env *env, tool_id t, const tool_args *a, size_t *len) {
  const char *why = NULL, *source = NULL;
  int rc = lock_permitted(env, t, &why), fd = -1;
  if (rc) return failed(env, rc, why, len);
  strobe__mutex_unlock(&env->perms->lock);
  rc = env->server ? strobe__viewer_explain_source(env->server, &fd, &source) : STROBE_ESTATE;
  if (rc == STROBE_ESTATE)
    return dump_result(tool_error(rc, "nothing to explain: the server records no live capture "
                                      "(strobe_server_record_start, the viewer's record button) and shows no file"),
                       len);
  if (rc) return dump_result(tool_error(rc, NULL), len);
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  strobe_explain *e = NULL;
  rc = strobe_explain_open(path, NULL, &e); /* keeps nothing of the file: it may be closed now */
  close(fd);
  json_t *v = rc ? NULL : explain_value(e, a, source, &rc);
  strobe_explain_destroy(e);
  return dump_result(v ? tool_value(v) : tool_error(rc ? rc : STROBE_ENOMEM, NULL), len);
}

/* The tools: one row each, by STROBE_SERVER_TOOLS index. tools/list is built
 * from the rows (name, description, input schema from the arguments' rows,
 * output schema, annotations) and tools/call parses the row's arguments and
 * runs its handler: a tool without a row is neither listed nor run. */
typedef struct tool_row {
  const char *title;       /* also the annotations' title when `short_title` is NULL */
  const char *short_title; /* annotations.title */
  const char *description;
  uint32_t takes, required; /* ARG bits */
  const char *output_schema;
  unsigned read_only : 1, destructive : 1;
  tool_run *run;
} tool_row;

static const tool_row k_rows[TOOL_COUNT] = {
    [TOOL_PROFILE_START] =
        {"Start a profiling session", NULL,
         "Starts a bounded profiling session in the running application and returns its id. It keeps the newest "
         "max_samples whole operations (frame passes, rebuilds, input dispatches, requests; application scopes "
         "apart) that start after this call and finish before it ends. At most " STR(STROBE_MAX_SESSIONS)
         " sessions run at once across all clients. Never triggers a frame, layout or input.",
         ARG(ARG_MAX_SAMPLES) | ARG(ARG_INCLUDE_DEVTOOLS) | ARG(ARG_KINDS), 0,
         "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},\"max_samples\":{\"type\":\"integer\"},"
         "\"include_devtools\":{\"type\":\"boolean\"},\"kinds\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
         "\"limits\":{\"type\":\"object\"},\"error\":{\"type\":\"string\"},\"message\":{\"type\":\"string\"}},"
         "\"anyOf\":[{\"required\":[\"id\",\"max_samples\",\"include_devtools\",\"kinds\",\"limits\"]}," ERROR_SHAPE
         "]}",
         0, 0, run_start},
    [TOOL_PROFILE_READ] =
        {"Read a profiling session, or availability", "Read a profiling session",
         "With {\"id\": ...}: a snapshot report (content-free JSON v1) of a session this client started; the "
         "session keeps running. Work still running is reported under unfinished, never as a duration; each "
         "entry's state says in_flight (an ordinary operation caught mid-way) or stalled (elapsed over 2x the p95 "
         "of the session's completed operations of its kind), and counts.unfinished_stalled counts the stalls. "
         "With {}: availability - whether profiling is compiled in, the MCP, Observe and tool permissions, limits "
         "and build metadata.",
         ARG(ARG_ID), 0,
         "{\"type\":\"object\",\"anyOf\":[{\"required\":[\"version\",\"id\",\"status\",\"samples\"]},"
         "{\"required\":[\"feature_enabled\",\"mcp_enabled\",\"observe_granted\",\"tools\",\"limits\",\"build\"]},"
         ERROR_SHAPE "]}",
         1, 0, run_read},
    [TOOL_PROFILE_END] =
        {"End a profiling session", NULL,
         "Finalizes a session this client started and returns its final report (content-free JSON v1). Ending one "
         "session never touches another; a finalized report never changes. The id then answers 'ended'.",
         ARG(ARG_ID), ARG(ARG_ID), REPORT_OUTPUT("\"version\",\"id\",\"final\",\"status\",\"samples\""), 0, 0,
         session_report},
    [TOOL_PROFILE_RESET] =
        {"Reset a profiling session", NULL,
         "Discards the retained samples, application-scope history and counts of a session this client started, "
         "which keeps running and from now on keeps only whole operations that start after the reset (as if it "
         "had just started; session.resets counts the resets). Never touches another client's session. Returns "
         "the session's snapshot report right after the reset (content-free JSON v1).",
         ARG(ARG_ID), ARG(ARG_ID), REPORT_OUTPUT("\"version\",\"id\",\"status\",\"samples\""), 0, 1,
         session_report},
    [TOOL_UI_TREE_REQUEST] =
        {"Request a UI-tree snapshot", NULL,
         "Asks the application to record, on its next layout pass, every element that pass visits (type, id, "
         "bounds, style numbers) into its local capture files, and answers what became of requests so far: counts "
         "and the last snapshot's size (nodes, nodes cut by the bound, bytes). The snapshot itself is application "
         "content: it never comes back through MCP; read it from the capture with `strobe tree`. With "
         "{\"request\": false} it only answers the status. Fails with nothing_recording when no capture file or "
         "flight recorder records.",
         ARG(ARG_REQUEST), 0, STATUS_OUTPUT, 0, 0, run_request},
    [TOOL_DEEP_CAPTURE_REQUEST] =
        {"Request a deep capture of the next frame", "Request a deep capture",
         "Asks the application's renderer to record its next frame's command stream (every draw call with the "
         "resources it reads, their contents once each) and its screenshot into its local capture files, and "
         "answers what became of requests so far: counts and the last deep capture's size (frame, calls, calls cut "
         "by the bound, resources, content bytes). The calls and contents are application content: they never "
         "come back through MCP; read them from the capture with `strobe calls` or replay them offline. With "
         "{\"request\": false} it only answers the status. Fails with nothing_recording when no capture file "
         "records.",
         ARG(ARG_REQUEST), 0, STATUS_OUTPUT, 0, 0, run_request},
    [TOOL_PROFILE_EXPLAIN] =
        {"Explain why frames were slow", "Explain slow frames",
         "Explains frames of the application's live recording (the server's flight recorder, snapshotted now; else "
         "the capture file the viewer shows): each frame's wall time in parts (each stage's self time, the time "
         "outside stages, the hand-off gap between processes, the GPU's backlog and polling), each against its p50 "
         "over the ended frames of the same kind and window (with n), the parts that exceeded their norm, and "
         "whether a part's extra time was on CPU, blocked or preempted (from context switches when the sampler "
         "records them; null means unknown, never zero). Also every unfinished frame: how long it has run against "
         "its peers' p95 (stalled past " STR(STROBE_STALL_FACTOR) "x), the stage open now and whether its thread is "
         "on CPU or blocked. Times in ns; static labels and numbers only (sampled function names stay in local "
         "captures: functions_withheld counts them). Fails with nothing_recording when the server records nothing "
         "and shows no file.",
         ARG(ARG_SAMPLE) | ARG(ARG_SLOWEST), 0,
         "{\"type\":\"object\",\"properties\":{\"source\":{\"enum\":[\"live\",\"file\"]},"
         "\"coverage\":{\"type\":\"object\",\"required\":[\"switches\",\"samples\",\"gpu\",\"wait_reason\"]},"
         "\"frames\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"kind\",\"number\","
         "\"op\",\"series\",\"state\",\"wall\",\"exceeded\",\"worst\",\"parts\"]}},"
         "\"unfinished\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"op\",\"elapsed_ns\","
         "\"p95_ns\",\"n\",\"stall\",\"stage\",\"stage_elapsed_ns\",\"thread_now\",\"thread_since_ns\"],"
         "\"properties\":{\"stall\":{\"enum\":[\"stalled\",\"in_flight\",\"no_baseline\"]}}}},"
         "\"unfinished_cut\":{\"type\":\"integer\"},\"sample_found\":{\"type\":\"boolean\"},"
         "\"error\":{\"type\":\"string\"},\"message\":{\"type\":\"string\"}},"
         "\"anyOf\":[{\"required\":[\"source\",\"coverage\",\"frames\",\"unfinished\",\"unfinished_cut\"]},"
         ERROR_SHAPE "]}",
         1, 0, run_explain},
};

/* A row's input schema: its arguments' schemas with their descriptions. */
static json_t *input_schema(const tool_row *row) {
  json_t *props = json_object(), *required = json_array();
  for (int k = 0; k < ARG_COUNT; k++) {
    if (!(row->takes & ARG(k))) continue;
    json_t *p = k_args[k].schema();
    if (p) json_object_set_new(p, "description", json_string(k_args[k].description));
    json_object_set_new(props, k_args[k].name, p);
    if (row->required & ARG(k)) json_array_append_new(required, json_string(k_args[k].name));
  }
  json_t *schema = json_pack("{s:s,s:o,s:b}", "type", "object", "properties", props, "additionalProperties", 0);
  if (schema && json_array_size(required)) json_object_set(schema, "required", required);
  json_decref(required);
  return schema;
}

static json_t *tool_json(tool_id t) {
  const tool_row *row = &k_rows[t];
  json_t *output = json_loads(row->output_schema, 0, NULL);
  return json_pack("{s:s,s:s,s:s,s:o,s:o*,s:{s:s,s:b,s:b,s:b,s:b}}", "name", k_tools[t].name, "title", row->title,
                   "description", row->description, "inputSchema", input_schema(row), "outputSchema", output,
                   "annotations", "title", row->short_title ? row->short_title : row->title, "readOnlyHint",
                   row->read_only, "destructiveHint", row->destructive, "idempotentHint", 0, "openWorldHint", 0);
}

json_t *strobe__tools_list(void) {
  /* Built per call (a few microseconds): no shared mutable state. */
  json_t *list = json_array();
  for (int t = 0; list && t < TOOL_COUNT; t++) {
    if (!k_rows[t].run) continue; /* no row: not offered (test_server_tools.rows says which) */
    json_t *tool = tool_json((tool_id)t);
    if (!tool || json_array_append_new(list, tool)) { /* append_new takes the tool even when it fails */
      json_decref(list);
      list = NULL;
    }
  }
  return list;
}

/* The tool of that name that has a row, or TOOL_NONE. */
static tool_id lookup(const char *name) {
  for (int t = 0; t < TOOL_COUNT; t++)
    if (k_rows[t].run && !strcmp(name, k_tools[t].name)) return (tool_id)t;
  return TOOL_NONE;
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
  tool_args a;
  if (parse_args(args, k_rows[t].takes, k_rows[t].required, &a, &why)) {
    *result = dump_result(tool_error(STROBE_EINVAL, why), len);
    return 0;
  }
  *result = k_rows[t].run(env, t, &a, len);
  return 0;
}
