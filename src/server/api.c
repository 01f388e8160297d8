/*
 * api.c — the viewer's JSON endpoints (authenticated like everything else):
 *   GET    /api/info            build, clock, windows, limits, server state
 *   GET    /api/sessions        every active session: id, owner kind, bounds, counts
 *   POST   /api/sessions        start a session owned by the viewer ({max_samples?, include_devtools?})
 *   GET    /api/sessions/<id>   snapshot report (JSON v1) of a viewer-owned session
 *   DELETE /api/sessions/<id>   final report of a viewer-owned session
 *   POST   /api/sessions/<id>/reset  resets a viewer-owned session (strobe_collector_reset);
 *                               answers its snapshot report right after
 *   GET    /api/tree            what became of UI-tree snapshot requests (strobe/tree.h): numbers only
 *   POST   /api/tree            requests a UI-tree snapshot of the next layout pass (the viewer's button);
 *                               409 when nothing records, so it would have nowhere to go
 *   GET    /api/deep            what became of deep-capture requests (strobe/deep.h): numbers only
 *   POST   /api/deep            requests a deep capture of the next frame (the viewer's button); 409 when no
 *                               capture file records
 * (POST /api/producer/spans, an external producer's batch of spans, is producer.c's.)
 *
 * Owns: nothing beyond one request; the viewer's owner id lives in the server.
 * Must never: read or end a session the viewer did not start (in-process and
 * MCP sessions are listed, never opened), or expose an owner id itself.
 */
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "strobe/record.h"
#include "strobe/deep.h"
#include "strobe/tree.h"
#include "server/server_internal.h"

static unsigned status_of(int rc) {
  switch (rc) {
    case STROBE_EUNKNOWN_ID: return MHD_HTTP_NOT_FOUND;
    case STROBE_EENDED:
    case STROBE_ECANCELLED: return MHD_HTTP_GONE;
    case STROBE_ENOTOWNER: return MHD_HTTP_FORBIDDEN;
    case STROBE_ELIMIT: return MHD_HTTP_TOO_MANY_REQUESTS;
    case STROBE_EINVAL: return MHD_HTTP_BAD_REQUEST;
    case STROBE_EFEATURE_DISABLED: return MHD_HTTP_NOT_IMPLEMENTED;
    case STROBE_ECLOSED: return MHD_HTTP_CONFLICT;
    default: return MHD_HTTP_INTERNAL_SERVER_ERROR;
  }
}

static int queue_rc(struct MHD_Connection *conn, int rc, const char *message) {
  return strobe__queue_error(conn, status_of(rc), strobe__error_name(rc), message ? message : strobe_strerror(rc));
}

static const char *owner_kind(const strobe_server *s, uint64_t owner) {
  if (owner == 0) return "in-process";
  if (owner == s->viewer_owner) return "viewer";
  if (s->otlp && owner == strobe__otlp_owner(s->otlp)) return "otlp_push";
  return "mcp"; /* every other owner in this process is an MCP client's, or another embedder's */
}

int strobe__api_info(strobe_server *s, struct MHD_Connection *conn) {
  strobe_clock_info clk = strobe_query_clock();
  strobe_window_info *wins = calloc(STROBE_MAX_WINDOWS, sizeof *wins);
  if (!wins) return MHD_NO;
  int nw = strobe_collector_query_windows(s->collector, wins, STROBE_MAX_WINDOWS);
  json_t *windows = json_array();
  for (int i = 0; i < nw && i < STROBE_MAX_WINDOWS; i++)
    json_array_append_new(windows, json_pack("{s:s,s:b,s:b,s:I}", "id", wins[i].id, "open", wins[i].open, "devtools",
                                             (wins[i].flags & STROBE_WINDOW_DEVTOOLS) != 0, "passes",
                                             (json_int_t)wins[i].passes));
  free(wins);
  strobe_server_stats st = strobe_server_query_stats(s);
  strobe_server_desc d = strobe_server_query_desc(s);
  strobe_event_stats ev = strobe_query_event_stats();
  json_t *streams = json_array();
  strobe__streams_json(s, streams);
  json_t *tools = json_object();
#define TOOL(id, bit, name) json_object_set_new(tools, name, json_boolean(d.tools & STROBE_TOOL_##id));
  STROBE_SERVER_TOOLS(TOOL)
#undef TOOL
  json_t *server = json_pack(
      "{s:s,s:i,s:s,s:b,s:b,s:o,"
      "s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I},"
      "s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}}",
      "bind", s->bind_address, "port", (int)s->port, "mcp_protocol", STROBE__MCP_PROTOCOL, "mcp_enabled",
      !d.mcp_disabled, "observe_granted", !d.observe_denied, "tools", tools, "limits", "max_body_bytes",
      (json_int_t)d.max_body_bytes, "max_header_bytes", (json_int_t)d.max_header_bytes, "max_connections",
      (json_int_t)d.max_connections, "idle_timeout_s", (json_int_t)d.idle_timeout_s, "mcp_idle_timeout_s",
      (json_int_t)d.mcp_idle_timeout_s, "max_mcp_sessions", (json_int_t)d.max_mcp_sessions, "max_streams",
      (json_int_t)d.max_streams, "stream_queue_bytes", (json_int_t)d.stream_queue_bytes, "stats", "requests",
      (json_int_t)st.requests, "rejected_auth", (json_int_t)st.rejected_auth, "rejected_origin",
      (json_int_t)st.rejected_origin, "rejected_size", (json_int_t)st.rejected_size, "mcp_sessions",
      (json_int_t)st.mcp_sessions, "mcp_sessions_expired", (json_int_t)st.mcp_sessions_expired, "mcp_cancelled",
      (json_int_t)st.mcp_cancelled, "streams", (json_int_t)st.streams, "stream_bytes", (json_int_t)st.stream_bytes,
      "stream_events_dropped", (json_int_t)st.stream_events_dropped, "stream_drop_episodes",
      (json_int_t)st.stream_drop_episodes);
  json_t *lim = json_object_get(server, "limits"), *sst = json_object_get(server, "stats");
  json_object_set_new(lim, "request_timeout_s", json_integer((json_int_t)d.request_timeout_s));
  json_object_set_new(sst, "connections", json_integer((json_int_t)st.connections));
  json_object_set_new(sst, "connections_timed_out", json_integer((json_int_t)st.connections_timed_out));
  json_object_set_new(sst, "connections_shed", json_integer((json_int_t)st.connections_shed));
  json_object_set_new(lim, "producer_spans_per_second", json_integer((json_int_t)d.producer_spans_per_second));
  json_object_set_new(sst, "producer_batches", json_integer((json_int_t)st.producer_batches));
  json_object_set_new(sst, "producer_spans", json_integer((json_int_t)st.producer_spans));
  json_object_set_new(sst, "producer_refused", json_integer((json_int_t)st.producer_refused));
  json_object_set_new(sst, "producer_rate_limited", json_integer((json_int_t)st.producer_rate_limited));
  json_object_set_new(server, "otlp",
                      d.otlp_endpoint
                          ? json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "endpoint", d.otlp_endpoint,
                                      "interval_ms", (json_int_t)d.otlp_interval_ms, "queue_max",
                                      (json_int_t)d.otlp_queue_max, "spans", (json_int_t)st.otlp_spans, "batches",
                                      (json_int_t)st.otlp_batches, "queued", (json_int_t)st.otlp_queued, "dropped",
                                      (json_int_t)st.otlp_dropped, "missed", (json_int_t)st.otlp_missed, "rejected",
                                      (json_int_t)st.otlp_rejected, "retries", (json_int_t)st.otlp_retries,
                                      "completed", (json_int_t)st.otlp_completed)
                          : json_null());
  json_t *info = json_pack(
      "{s:o,s:o,s:{s:s,s:b,s:f,s:I},s:o,s:I,s:o,s:{s:i},s:{s:I,s:I,s:i},s:o}", "build", strobe__build_json(),
      "server", server, "clock", "source", clk.source, "invariant", clk.invariant, "ns_per_tick", clk.ns_per_tick,
      "epoch_mono_ns", (json_int_t)clk.epoch_mono_ns, "windows", windows, "untracked_windows",
      (json_int_t)strobe_collector_query_untracked_windows(s->collector), "limits", strobe__limits_json(),
      "sessions", "active", strobe_collector_query_session_count(s->collector), "events", "written",
      (json_int_t)ev.events_written, "lost", (json_int_t)ev.events_lost, "threads_seen", (int)ev.threads_seen,
      "streams", streams);
  return strobe__queue_value(conn, MHD_HTTP_OK, info);
}

static int list_sessions(strobe_server *s, struct MHD_Connection *conn) {
  strobe_session_info infos[STROBE_MAX_SESSIONS];
  int n = strobe_collector_query_sessions(s->collector, infos, STROBE_MAX_SESSIONS);
  json_t *arr = json_array();
  for (int i = 0; i < n && i < STROBE_MAX_SESSIONS; i++)
    json_array_append_new(
        arr, json_pack("{s:s,s:s,s:i,s:b,s:o,s:f,s:I,s:I,s:I,s:I,s:I}", "id", infos[i].id, "owner",
                       owner_kind(s, infos[i].owner), "max_samples", (int)infos[i].max_samples, "include_devtools",
                       infos[i].include_devtools, "kinds", strobe__kinds_json(infos[i].kinds), "started_ms", infos[i].started_ms, "completed",
                       (json_int_t)infos[i].completed, "retained", (json_int_t)infos[i].retained, "dropped",
                       (json_int_t)infos[i].dropped, "boundary_excluded", (json_int_t)infos[i].boundary_excluded,
                       "resets", (json_int_t)infos[i].resets));
  return strobe__queue_value(conn, MHD_HTTP_OK, json_pack("{s:o,s:i}", "sessions", arr, "max_sessions",
                                                          STROBE_MAX_SESSIONS));
}

static int start_session(strobe_server *s, struct MHD_Connection *conn, const char *body, size_t len) {
  json_t *args = NULL;
  if (len) {
    args = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
    if (!json_is_object(args)) {
      json_decref(args);
      return queue_rc(conn, STROBE_EINVAL, "the body must be a JSON object: {max_samples?, include_devtools?, kinds?}");
    }
  }
  strobe_session_desc o;
  const char *why = NULL;
  int rc = strobe__parse_start_args(args, &o, &why);
  json_decref(args);
  if (rc) return queue_rc(conn, rc, why);
  o.owner = s->viewer_owner;
  char id[STROBE_SESSION_ID_MAX];
  rc = strobe_session_start(s->collector, &o, id);
  if (rc) return queue_rc(conn, rc, NULL);
  return strobe__queue_value(conn, MHD_HTTP_CREATED,
                             json_pack("{s:s,s:i,s:b,s:o}", "id", id, "max_samples",
                                       (int)(o.max_samples ? o.max_samples : STROBE_DEFAULT_SAMPLES),
                                       "include_devtools", o.include_devtools, "kinds", strobe__kinds_json(o.kinds)));
}

enum { REPORT_READ, REPORT_END, REPORT_RESET };

static int session_report(strobe_server *s, struct MHD_Connection *conn, const char *id, int what) {
  if (strlen(id) >= STROBE_SESSION_ID_MAX) return queue_rc(conn, STROBE_EUNKNOWN_ID, NULL);
  strobe_report *rep = NULL;
  int rc = 0;
  /* Only the viewer's own sessions: the owner is checked by every call. */
  if (what == REPORT_RESET) rc = strobe_collector_reset(s->collector, id, s->viewer_owner);
  if (rc >= 0)
    rc = what == REPORT_END ? strobe_session_stop(s->collector, id, s->viewer_owner, &rep)
                            : strobe_session_read(s->collector, id, s->viewer_owner, &rep);
  if (rc) return queue_rc(conn, rc, NULL);
  char *text = NULL;
  size_t len = 0;
  rc = strobe_report_json(rep, &text, &len);
  strobe_report_free(rep);
  if (rc) return queue_rc(conn, rc, NULL);
  return strobe__queue_json(conn, MHD_HTTP_OK, text, len);
}

int strobe__api_sessions(strobe_server *s, struct MHD_Connection *conn, const char *method, const char *id,
                         const char *action, const char *body, size_t len) {
  if (action) { /* only "reset" is routed here */
    if (!strcmp(method, MHD_HTTP_METHOD_POST)) return session_report(s, conn, id, REPORT_RESET);
    return strobe__queue_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method_not_allowed", "use POST");
  }
  if (!id) {
    if (!strcmp(method, MHD_HTTP_METHOD_GET)) return list_sessions(s, conn);
    if (!strcmp(method, MHD_HTTP_METHOD_POST)) return start_session(s, conn, body, len);
  } else {
    if (!strcmp(method, MHD_HTTP_METHOD_GET)) return session_report(s, conn, id, REPORT_READ);
    if (!strcmp(method, MHD_HTTP_METHOD_DELETE)) return session_report(s, conn, id, REPORT_END);
  }
  return strobe__queue_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method_not_allowed",
                             id ? "use GET or DELETE" : "use GET or POST");
}

json_t *strobe__tree_status_json(void) {
  strobe_tree_status st = strobe_tree_query_status();
  return json_pack("{s:I,s:b,s:I,s:I,s:I,s:{s:i,s:I,s:I},s:{s:i,s:i,s:i}}", "requests", (json_int_t)st.requests,
                   "pending", st.pending, "taken", (json_int_t)st.taken, "written", (json_int_t)st.written,
                   "unwritten", (json_int_t)st.unwritten, "last", "nodes", (int)st.last_nodes, "nodes_dropped",
                   (json_int_t)st.last_nodes_dropped, "bytes", (json_int_t)st.last_bytes, "limits", "max_nodes",
                   STROBE_TREE_MAX_NODES, "max_props", STROBE_TREE_MAX_PROPS, "max_snapshots_per_capture",
                   STROBE_TREE_MAX_SNAPSHOTS);
}

int strobe__api_tree(strobe_server *s, struct MHD_Connection *conn, const char *method) {
  (void)s;
  if (!strcmp(method, MHD_HTTP_METHOD_POST)) {
    int rc = strobe_tree_request();
    if (rc == STROBE_ESTATE)
      return strobe__queue_error(conn, MHD_HTTP_CONFLICT, "nothing_recording",
                                 "nothing records (no capture file or flight recorder): start recording first, "
                                 "a snapshot goes only into local captures");
    if (rc) return queue_rc(conn, rc, NULL);
    return strobe__queue_value(conn, MHD_HTTP_ACCEPTED, strobe__tree_status_json());
  }
  if (strcmp(method, MHD_HTTP_METHOD_GET) != 0)
    return strobe__queue_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method_not_allowed", "GET or POST");
  return strobe__queue_value(conn, MHD_HTTP_OK, strobe__tree_status_json());
}

json_t *strobe__deep_status_json(void) {
  strobe_deep_status st = strobe_deep_query_status();
  return json_pack("{s:I,s:b,s:I,s:I,s:I,s:{s:I,s:i,s:I,s:i,s:I},s:I,s:I,s:I,s:{s:i,s:i,s:i,s:I}}", "requests",
                   (json_int_t)st.requests, "pending", st.pending, "taken", (json_int_t)st.taken, "written",
                   (json_int_t)st.written, "unwritten", (json_int_t)st.unwritten, "last", "frame",
                   (json_int_t)st.last_frame, "calls", (int)st.last_calls, "calls_dropped",
                   (json_int_t)st.last_calls_dropped, "resources", (int)st.last_resources, "bytes",
                   (json_int_t)st.last_bytes, "attachments", (json_int_t)st.attachments, "attachment_bytes",
                   (json_int_t)st.attachment_bytes, "attachments_refused", (json_int_t)st.refused, "limits",
                   "max_calls", (int)STROBE_DEEP_MAX_CALLS, "max_refs", (int)STROBE_DEEP_MAX_REFS,
                   "max_deep_captures_per_capture", (int)STROBE_DEEP_MAX_FRAMES, "max_attachment_bytes",
                   (json_int_t)STROBE_ATTACH_MAX_BYTES);
}

int strobe__api_deep(strobe_server *s, struct MHD_Connection *conn, const char *method) {
  (void)s;
  if (!strcmp(method, MHD_HTTP_METHOD_POST)) {
    int rc = strobe_deep_request();
    if (rc == STROBE_ESTATE)
      return strobe__queue_error(conn, MHD_HTTP_CONFLICT, "nothing_recording",
                                 "no capture file records: start recording first, a deep capture goes only into "
                                 "local capture files");
    if (rc) return queue_rc(conn, rc, NULL);
    return strobe__queue_value(conn, MHD_HTTP_ACCEPTED, strobe__deep_status_json());
  }
  if (strcmp(method, MHD_HTTP_METHOD_GET) != 0)
    return strobe__queue_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method_not_allowed", "GET or POST");
  return strobe__queue_value(conn, MHD_HTTP_OK, strobe__deep_status_json());
}
