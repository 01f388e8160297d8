/*
 * mcp.c — the Model Context Protocol over Streamable HTTP, minus the HTTP:
 * JSON-RPC 2.0 parsing (jansson, duplicate keys rejected, size bounded by
 * the caller), version negotiation, the MCP session table (Mcp-Session-Id,
 * one profiling-session owner id per MCP session, idle expiry) and method
 * dispatch (initialize, ping, tools/list, tools/call, notifications).
 * strobe__mcp_handle is what /mcp calls for a POST and what
 * fuzz/fuzz_jsonrpc.c calls directly.
 *
 * Owns: the MCP session table and the owner ids in it.
 * Must never: answer a JSON-RPC error with a 4xx status (the SDK client then
 * loses the code), echo an id other than exactly as received, add top-level
 * keys beyond jsonrpc/id/result|error, send a body with a 202, or let an
 * ended or expired MCP session's profiling sessions live on.
 *
 * Contents: >>table >>replies >>dispatch >>handle
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server_internal.h"

/* Versions the official SDK client accepts, newest first; we serve the first. */
static const char *const k_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"};

static int supported_version(const char *v) {
  for (size_t i = 0; i < sizeof k_versions / sizeof *k_versions; i++)
    if (!strcmp(v, k_versions[i])) return 1;
  return 0;
}

/* >>table */
typedef struct mcp_session {
  int used;
  char id[STROBE__MCP_SID_LEN + 1];
  uint64_t owner;
  uint64_t last_ms; /* when its last request ended (or arrived, while one runs) */
  uint32_t busy;    /* its requests running now: a session with one is not idle */
  char version[16];
} mcp_session;

struct strobe__mcp {
  strobe__mcp_config cfg;
  strobe__mutex lock; /* the table; taken after perms.lock, never around tool work */
  mcp_session *sessions;
  uint64_t open, expired, cancelled;
};

int strobe__mcp_create(const strobe__mcp_config *cfg, strobe__mcp **out) {
  *out = NULL;
  if (!cfg || !cfg->collector || !cfg->perms || !cfg->max_sessions) return STROBE_EINVAL;
  strobe__mcp *m = calloc(1, sizeof *m);
  if (!m) return STROBE_ENOMEM;
  m->sessions = calloc(cfg->max_sessions, sizeof *m->sessions);
  if (!m->sessions) {
    free(m);
    return STROBE_ENOMEM;
  }
  m->cfg = *cfg;
  strobe__mutex_init(&m->lock);
  *out = m;
  return 0;
}

/* Ends one table entry (lock held): its profiling sessions are cancelled. */
static void end_session(strobe__mcp *m, mcp_session *e) {
  STROBE_ASSERT(strobe__mutex_held(&m->lock));
  int n = strobe_session_cancel_owner(m->cfg.collector, e->owner);
  if (n > 0) m->cancelled += (uint64_t)n;
  memset(e, 0, sizeof *e);
  m->open--;
}

void strobe__mcp_destroy(strobe__mcp *m) {
  if (!m) return;
  strobe__mutex_lock(&m->lock);
  for (uint32_t i = 0; i < m->cfg.max_sessions; i++)
    if (m->sessions[i].used) end_session(m, &m->sessions[i]);
  strobe__mutex_unlock(&m->lock);
  strobe__mutex_destroy(&m->lock);
  free(m->sessions);
  free(m);
}

int strobe__mcp_cancel_all(strobe__mcp *m) {
  STROBE_ASSERT(strobe__mutex_held(&m->cfg.perms->lock)); /* no tool can start a session meanwhile */
  int total = 0;
  strobe__mutex_lock(&m->lock);
  for (uint32_t i = 0; i < m->cfg.max_sessions; i++) {
    if (!m->sessions[i].used) continue;
    int n = strobe_session_cancel_owner(m->cfg.collector, m->sessions[i].owner);
    if (n > 0) total += n;
  }
  m->cancelled += (uint64_t)total;
  strobe__mutex_unlock(&m->lock);
  return total;
}

uint64_t strobe__mcp_expire(strobe__mcp *m, uint64_t now_ms) {
  uint64_t idle_ms = (uint64_t)m->cfg.session_idle_s * 1000u, next = UINT64_MAX;
  strobe__mutex_lock(&m->lock);
  for (uint32_t i = 0; i < m->cfg.max_sessions; i++) {
    mcp_session *e = &m->sessions[i];
    if (!e->used) continue;
    if (e->busy) { /* not idle: look again once a request ending now could have expired */
      if (now_ms + idle_ms < next) next = now_ms + idle_ms;
      continue;
    }
    if (now_ms >= e->last_ms + idle_ms) {
      end_session(m, e);
      m->expired++;
    } else if (e->last_ms + idle_ms < next) {
      next = e->last_ms + idle_ms;
    }
  }
  strobe__mutex_unlock(&m->lock);
  return next;
}

void strobe__mcp_limit_note(strobe__mcp *m, uint64_t now_ms, char *buf, size_t n) {
  strobe_session_info infos[STROBE_MAX_SESSIONS];
  int count = strobe_collector_query_sessions(m->cfg.collector, infos, STROBE_MAX_SESSIONS);
  if (count > STROBE_MAX_SESSIONS) count = STROBE_MAX_SESSIONS;
  uint64_t idle_ms = (uint64_t)m->cfg.session_idle_s * 1000u, oldest = UINT64_MAX;
  int mcp_owned = 0;
  strobe__mutex_lock(&m->lock); /* after the collector's lock was let go: the order is mcp, then collector */
  for (int k = 0; k < count; k++)
    for (uint32_t i = 0; i < m->cfg.max_sessions; i++) {
      const mcp_session *e = &m->sessions[i];
      if (!e->used || e->owner != infos[k].owner) continue;
      mcp_owned++;
      if (e->last_ms < oldest) oldest = e->last_ms;
    }
  strobe__mutex_unlock(&m->lock);
  if (oldest == UINT64_MAX) {
    snprintf(buf, n,
             "%d profiling sessions are running, the limit across all consumers (none started over MCP, so "
             "none expires); end one first",
             count);
    return;
  }
  uint64_t at = oldest + idle_ms, in_ms = at > now_ms ? at - now_ms : 0;
  snprintf(buf, n,
           "%d profiling sessions are running, the limit across all consumers (%d started over MCP); the MCP "
           "client idle longest expires in %llu s (mcp_idle_timeout_s = %u), which cancels its sessions; or end "
           "one first",
           count, mcp_owned, (unsigned long long)((in_ms + 999) / 1000), (unsigned)m->cfg.session_idle_s);
}

strobe__mcp_counts strobe__mcp_query(strobe__mcp *m) {
  strobe__mcp_counts c = {0};
  strobe__mutex_lock(&m->lock);
  c.open = m->open;
  c.expired = m->expired;
  c.cancelled = m->cancelled;
  strobe__mutex_unlock(&m->lock);
  return c;
}

/* Finds a session by its header value (lock held); constant-time per entry. */
static mcp_session *find_session(strobe__mcp *m, const char *sid) {
  STROBE_ASSERT(strobe__mutex_held(&m->lock));
  size_t n = strlen(sid);
  mcp_session *hit = NULL;
  for (uint32_t i = 0; i < m->cfg.max_sessions; i++) {
    mcp_session *e = &m->sessions[i];
    if (e->used && strobe__ct_equal(sid, n, e->id, STROBE__MCP_SID_LEN)) hit = e;
  }
  return hit;
}

/* Opens a session (lock held). NULL when the table is full or randomness failed. */
static mcp_session *new_session(strobe__mcp *m, uint64_t now_ms, const char *version) {
  STROBE_ASSERT(strobe__mutex_held(&m->lock));
  mcp_session *e = NULL;
  for (uint32_t i = 0; i < m->cfg.max_sessions && !e; i++)
    if (!m->sessions[i].used) e = &m->sessions[i];
  if (!e) return NULL;
  if (strobe__random_hex(e->id, STROBE__MCP_SID_LEN / 2)) return NULL;
  uint64_t owner;
  int clash;
  do { /* 2^-64 per pair, but an owner must never be shared */
    owner = strobe__random_owner();
    clash = 0;
    for (uint32_t i = 0; i < m->cfg.max_sessions; i++)
      if (m->sessions[i].used && m->sessions[i].owner == owner) clash = 1;
  } while (clash);
  e->used = 1;
  e->owner = owner;
  e->last_ms = now_ms;
  snprintf(e->version, sizeof e->version, "%s", version);
  m->open++;
  return e;
}

/* >>replies */
static void set_body(strobe__mcp_response *resp, json_t *msg) {
  char *text = json_dumps(msg, JSON_COMPACT);
  json_decref(msg);
  if (!text) { /* out of memory: a fixed internal error with no id */
    static const char k_oom[] = "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32603,\"message\":\"Internal error\"}}";
    text = strdup(k_oom);
  }
  resp->body = text;
  resp->body_len = text ? strlen(text) : 0;
  if (!text) resp->http_status = 500;
}

/* An error reply. `id` (borrowed) is echoed when it is a valid id, else omitted. */
static void rpc_error(strobe__mcp_response *resp, int status, json_t *id, int code, const char *message) {
  json_t *err = json_pack("{s:i,s:s}", "code", code, "message", message);
  json_t *msg = json_object();
  json_object_set_new(msg, "jsonrpc", json_string("2.0"));
  if (id) json_object_set(msg, "id", id);
  json_object_set_new(msg, "error", err);
  resp->http_status = status;
  set_body(resp, msg);
}

static void rpc_result(strobe__mcp_response *resp, json_t *id, json_t *result) {
  json_t *msg = json_object();
  json_object_set_new(msg, "jsonrpc", json_string("2.0"));
  json_object_set(msg, "id", id);
  json_object_set_new(msg, "result", result ? result : json_object());
  resp->http_status = 200;
  set_body(resp, msg);
}

/* A result already serialized (taken): the envelope is built around it as text. */
static void rpc_result_text(strobe__mcp_response *resp, json_t *id, char *result, size_t len) {
  char *idtext = json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY);
  size_t idlen = idtext ? strlen(idtext) : 0;
  char *body = idtext && result ? malloc(sizeof "{\"jsonrpc\":\"2.0\",\"id\":,\"result\":}" + idlen + len) : NULL;
  if (!body) {
    free(idtext);
    free(result);
    rpc_error(resp, 200, id, -32603, "Internal error");
    return;
  }
  int n = sprintf(body, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":", idtext);
  memcpy(body + n, result, len);
  body[n + len] = '}';
  body[n + len + 1] = 0;
  resp->http_status = 200;
  resp->body = body;
  resp->body_len = (size_t)n + len + 1;
  free(idtext);
  free(result);
}

static void accepted(strobe__mcp_response *resp) {
  resp->http_status = 202;
  resp->body = NULL;
  resp->body_len = 0;
}

void strobe__mcp_response_free(strobe__mcp_response *resp) {
  if (!resp) return;
  free(resp->body);
  resp->body = NULL;
  resp->body_len = 0;
}

/* >>dispatch */
static json_t *initialize_result(const char *version) {
  return json_pack(
      "{s:s,s:{s:{s:b}},s:{s:s,s:s,s:s},s:s}", "protocolVersion", version, "capabilities", "tools", "listChanged", 0,
      "serverInfo", "name", "strobe", "title", "Strobe profiler", "version", strobe_version(), "instructions",
      "Strobe profiles the running application. strobe_profile_read {} tells whether profiling is available and "
      "the limits; strobe_profile_start returns a session id; strobe_profile_read {\"id\"} snapshots it while it "
      "runs; strobe_profile_reset {\"id\"} discards what it kept so far; strobe_profile_end {\"id\"} finalizes it. "
      "strobe_ui_tree_request and strobe_deep_capture_request ask for a UI-tree snapshot or a deep capture of the "
      "next frame in the application's local captures and answer only their status and size. "
      "strobe_profile_explain says why frames of the live recording were slow (each stage's self time against its "
      "p50, split into on CPU, blocked and preempted where known) and where an unfinished frame is stuck. Reports are "
      "content-free JSON v1: completed samples with "
      "stage timings in wall-clock ms, unfinished work reported apart (never as a duration), every percentile "
      "with its n. Nested stages are labelled: do not sum them.");
}

/* Tools run without the table lock, so the caller's session can expire while one
 * starts a profiling session: end_session's cancellation has then already run and
 * would miss it. Checked again after the tool, under the lock: a profiling session
 * never outlives the MCP session that owns it. */
static void cancel_if_expired(strobe__mcp *m, uint64_t owner) {
  strobe__mutex_lock(&m->lock);
  int alive = 0;
  for (uint32_t i = 0; i < m->cfg.max_sessions && !alive; i++)
    alive = m->sessions[i].used && m->sessions[i].owner == owner;
  if (!alive) {
    int n = strobe_session_cancel_owner(m->cfg.collector, owner);
    if (n > 0) m->cancelled += (uint64_t)n;
  }
  strobe__mutex_unlock(&m->lock);
}

static void call_tool(strobe__mcp *m, const mcp_session *sess, json_t *id, json_t *params,
                      strobe__mcp_response *resp) {
  json_t *name = params ? json_object_get(params, "name") : NULL;
  json_t *args = params ? json_object_get(params, "arguments") : NULL;
  if (!json_is_string(name)) {
    rpc_error(resp, 200, id, -32602, "Invalid params: tools/call needs a string \"name\"");
    return;
  }
  if (args && !json_is_object(args) && !json_is_null(args)) {
    rpc_error(resp, 200, id, -32602, "Invalid params: \"arguments\" must be an object");
    return;
  }
  if (json_is_null(args)) args = NULL;
  strobe__tool_env env = {m->cfg.collector, m->cfg.perms, sess->owner, m, m->cfg.server};
  char *result = NULL;
  size_t len = 0;
  if (strobe__tools_call(&env, json_string_value(name), args, &result, &len) != 0) {
    rpc_error(resp, 200, id, -32602, "Unknown tool");
    return;
  }
  cancel_if_expired(m, sess->owner);
  rpc_result_text(resp, id, result, len);
}

/* >>handle — strobe__mcp_handle as named steps: the envelope, initialize,
 * the caller's session, then the method. Each step answers (and returns 1)
 * or lets the next one go on (0). */

/* A request's envelope: jsonrpc "2.0", an id (string or integer) or none, a
 * string method, params an object or absent. Answers everything else:
 * batches, malformed ids, client responses (202), notifications with array
 * params (202). */
static int check_envelope(json_t *msg, json_t **id, const char **method, json_t **params,
                          strobe__mcp_response *resp) {
  if (json_is_array(msg)) {
    rpc_error(resp, 200, NULL, -32600, "Invalid Request: batches are not supported");
    return 1;
  }
  if (!json_is_object(msg)) {
    rpc_error(resp, 200, NULL, -32600, "Invalid Request: not a JSON-RPC object");
    return 1;
  }
  *id = json_object_get(msg, "id");
  if (*id && !json_is_string(*id) && !json_is_integer(*id)) {
    rpc_error(resp, 200, NULL, -32600, "Invalid Request: id must be a string or an integer");
    return 1;
  }
  json_t *jsonrpc = json_object_get(msg, "jsonrpc");
  if (!json_is_string(jsonrpc) || strcmp(json_string_value(jsonrpc), "2.0") != 0) {
    rpc_error(resp, 200, *id, -32600, "Invalid Request: jsonrpc must be \"2.0\"");
    return 1;
  }
  json_t *m = json_object_get(msg, "method");
  *params = json_object_get(msg, "params");
  if (!m) {
    /* A response (or error) from the client to a server request: we send
     * none, but Streamable HTTP answers such messages with 202. */
    if (*id && (json_object_get(msg, "result") || json_object_get(msg, "error")))
      accepted(resp);
    else
      rpc_error(resp, 200, *id, -32600, "Invalid Request: no method");
    return 1;
  }
  if (!json_is_string(m)) {
    rpc_error(resp, 200, *id, -32600, "Invalid Request: method must be a string");
    return 1;
  }
  if (*params && !json_is_object(*params) && !json_is_array(*params)) {
    rpc_error(resp, 200, *id, -32600, "Invalid Request: params must be an object or an array");
    return 1;
  }
  if (json_is_array(*params)) {
    if (*id)
      rpc_error(resp, 200, *id, -32602, "Invalid params: expected an object");
    else
      accepted(resp);
    return 1;
  }
  *method = json_string_value(m);
  return 0;
}

/* initialize: opens an MCP session in the table at the version agreed. */
static void initialize(strobe__mcp *m, const strobe__mcp_request *req, json_t *id, json_t *params,
                       strobe__mcp_response *resp) {
  if (!id) { /* a notification cannot initialize anything */
    accepted(resp);
    return;
  }
  json_t *pv = params ? json_object_get(params, "protocolVersion") : NULL;
  const char *want = json_string_value(pv);
  const char *version = want && supported_version(want) ? want : STROBE__MCP_PROTOCOL;
  strobe__mutex_lock(&m->lock);
  mcp_session *e = new_session(m, req->now_ms, version);
  uint64_t oldest = UINT64_MAX;
  if (e)
    memcpy(resp->session_id, e->id, sizeof resp->session_id);
  else
    for (uint32_t i = 0; i < m->cfg.max_sessions; i++)
      if (m->sessions[i].used && m->sessions[i].last_ms < oldest) oldest = m->sessions[i].last_ms;
  strobe__mutex_unlock(&m->lock);
  if (e) {
    rpc_result(resp, id, initialize_result(version));
    return;
  }
  /* Full: which limit, and when the idlest session expires (docs/server.md §MCP). */
  char msg[256];
  uint64_t at = oldest == UINT64_MAX ? req->now_ms : oldest + (uint64_t)m->cfg.session_idle_s * 1000u;
  uint64_t in_ms = at > req->now_ms ? at - req->now_ms : 0;
  snprintf(msg, sizeof msg,
           "Too many MCP sessions: max_mcp_sessions (%u) are open; the one idle longest expires in %llu s "
           "(mcp_idle_timeout_s = %u); or end one (HTTP DELETE)",
           (unsigned)m->cfg.max_sessions, (unsigned long long)((in_ms + 999) / 1000), (unsigned)m->cfg.session_idle_s);
  rpc_error(resp, 503, id, -32603, msg);
}

/* Everything but initialize belongs to an initialized session: finds the
 * caller's (a copy in *sess: the methods run without the table lock) and
 * marks it used now and, for a method, busy. Answers when there is none, and
 * notifications. */
static int caller_session(strobe__mcp *m, const strobe__mcp_request *req, json_t *id, mcp_session *sess,
                          strobe__mcp_response *resp) {
  if (!req->session_id) {
    rpc_error(resp, 400, id, -32600, "Bad Request: Mcp-Session-Id header is required");
    return 1;
  }
  strobe__mutex_lock(&m->lock);
  mcp_session *e = find_session(m, req->session_id);
  if (e) {
    e->last_ms = req->now_ms;
    if (id) e->busy++; /* a method runs, until request_ended */
    *sess = *e;
  }
  strobe__mutex_unlock(&m->lock);
  if (!e) {
    rpc_error(resp, 404, id, -32001, "Session not found");
    return 1;
  }
  if (!id) { /* notifications/initialized, notifications/cancelled, ...: nothing to answer */
    accepted(resp);
    return 1;
  }
  return 0;
}

/* The end of a method caller_session let run: the session is idle from now
 * on, not from when the request arrived, so a slow request never expires the
 * client that waits for it (docs/server.md §MCP). The session may be gone
 * (DELETE meanwhile): then nothing is left to mark. */
static void request_ended(strobe__mcp *m, const strobe__mcp_request *req, uint64_t owner) {
  uint64_t end_ms = req->clock_ms ? req->clock_ms() : req->now_ms;
  strobe__mutex_lock(&m->lock);
  for (uint32_t i = 0; i < m->cfg.max_sessions; i++) {
    mcp_session *e = &m->sessions[i];
    if (!e->used || e->owner != owner || !e->busy) continue;
    e->busy--;
    if (end_ms > e->last_ms) e->last_ms = end_ms;
  }
  strobe__mutex_unlock(&m->lock);
}

/* The methods of an initialized session: the one list. */
static void ping(strobe__mcp *m, const mcp_session *sess, json_t *id, json_t *params, strobe__mcp_response *resp) {
  (void)m, (void)sess, (void)params;
  rpc_result(resp, id, json_object());
}

static void list_tools(strobe__mcp *m, const mcp_session *sess, json_t *id, json_t *params,
                       strobe__mcp_response *resp) {
  (void)m, (void)sess, (void)params;
  rpc_result(resp, id, json_pack("{s:o}", "tools", strobe__tools_list()));
}

static const struct {
  const char *name;
  void (*run)(strobe__mcp *m, const mcp_session *sess, json_t *id, json_t *params, strobe__mcp_response *resp);
} k_methods[] = {{"ping", ping}, {"tools/list", list_tools}, {"tools/call", call_tool}};

/* A body jansson refused. Valid JSON whose only fault is an integer beyond
 * the signed 64-bit range (an id of 2^64, say) is not a parse error: it is a
 * request this server cannot represent exactly, so it is an Invalid Request
 * (-32600), with the id echoed when it is a string and omitted otherwise,
 * since an integer id can no longer be echoed exactly (docs/server.md §MCP).
 * Everything else is -32700. */
static void unrepresentable(const char *body, size_t len, strobe__mcp_response *resp) {
  json_t *msg = body ? json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, NULL) : NULL;
  if (!msg) {
    rpc_error(resp, 200, NULL, -32700, "Parse error");
    return;
  }
  json_t *id = json_is_object(msg) ? json_object_get(msg, "id") : NULL;
  rpc_error(resp, 200, json_is_string(id) ? id : NULL, -32600,
            "Invalid Request: a number is beyond the signed 64-bit integer range (the id, or one in params)");
  json_decref(msg);
}

void strobe__mcp_handle(strobe__mcp *m, const strobe__mcp_request *req, const char *body, size_t len,
                        strobe__mcp_response *resp) {
  memset(resp, 0, sizeof *resp);
  resp->http_status = 200;
  if (req->protocol_version && !supported_version(req->protocol_version)) {
    rpc_error(resp, 400, NULL, -32600, "Bad Request: unsupported MCP-Protocol-Version");
    return;
  }
  strobe__mcp_expire(m, req->now_ms);

  json_error_t jerr;
  json_t *msg = body ? json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr) : NULL;
  if (!msg) {
    unrepresentable(body, len, resp);
    return;
  }
  json_t *id = NULL, *params = NULL;
  const char *method = NULL;
  mcp_session sess = {0};
  if (check_envelope(msg, &id, &method, &params, resp)) {
    /* answered */
  } else if (!strcmp(method, "initialize")) {
    initialize(m, req, id, params, resp);
  } else if (!caller_session(m, req, id, &sess, resp)) {
    size_t k = 0, n = sizeof k_methods / sizeof *k_methods;
    while (k < n && strcmp(method, k_methods[k].name) != 0) k++;
    if (k < n)
      k_methods[k].run(m, &sess, id, params, resp);
    else
      rpc_error(resp, 200, id, -32601, "Method not found");
    request_ended(m, req, sess.owner);
  }
  json_decref(msg);
}

void strobe__mcp_delete(strobe__mcp *m, const strobe__mcp_request *req, strobe__mcp_response *resp) {
  memset(resp, 0, sizeof *resp);
  if (req->protocol_version && !supported_version(req->protocol_version)) {
    rpc_error(resp, 400, NULL, -32600, "Bad Request: unsupported MCP-Protocol-Version");
    return;
  }
  strobe__mcp_expire(m, req->now_ms);
  if (!req->session_id) {
    rpc_error(resp, 400, NULL, -32600, "Bad Request: Mcp-Session-Id header is required");
    return;
  }
  strobe__mutex_lock(&m->lock);
  mcp_session *e = find_session(m, req->session_id);
  if (e) end_session(m, e);
  strobe__mutex_unlock(&m->lock);
  if (!e) {
    rpc_error(resp, 404, NULL, -32001, "Session not found");
    return;
  }
  resp->http_status = 204;
}
