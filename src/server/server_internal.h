/*
 * server_internal.h — what the files of libstrobe_server share:
 *   server.c  desc defaults, token, lifecycle, permission API, owner ids
 *   http.c    libmicrohttpd glue: auth, Host/Origin, limits, routing
 *   mcp.c     JSON-RPC and the MCP session table (callable without HTTP)
 *   tools.c   the MCP tools (STROBE_SERVER_TOOLS), argument parsing, error names
 *   api.c     /api/info and /api/sessions
 *   clock_offset_service.c   /api/clock: this host's clock, clock offsets to peers (strobe_clock_offset_measure)
 *   stream.c  /api/capture/stream: a live capture stream per client
 *   producer.c  POST /api/producer/spans: external producers' spans (producer_batch.c parses them)
 *   otlp_push.c the OTLP/HTTP push of completed operations (otlp_endpoint), on a thread of its own
 *
 * Threading: libmicrohttpd runs one polling thread, so every request
 * handler (MCP, tools, /api) runs there, one at a time. The application
 * thread may call the permission API and strobe_server_stop concurrently;
 * `perms.lock` orders a permission change against a tool's check-and-act.
 * Lock order: perms.lock -> mcp table lock -> collector lock; a live
 * stream's slot lock is never held while taking another Strobe lock.
 */
#ifndef STROBE_SERVER_INTERNAL_H
#define STROBE_SERVER_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "platform/clock.h"  /* strobe__mono_ms */
#include "platform/invariant.h"
#include "platform/secret.h" /* tokens, session ids, constant-time checks */
#include "strobe/server.h"

#define STROBE__MCP_PROTOCOL "2025-11-25"
#define STROBE__MCP_SID_LEN 64 /* hex digits of 32 random bytes */

/* >>owners (server.c) */
/* A random owner id for profiling sessions: never 0 (in-process). */
uint64_t strobe__random_owner(void);

/* >>permissions, guarded by `lock` (server.c owns it; tools.c checks it). */
typedef struct strobe__perms {
  strobe__mutex lock;
  int mcp_enabled;
  int observe;
  uint32_t tools; /* STROBE_TOOL_* allowed */
} strobe__perms;

/* >>tools (tools.c) */
typedef struct strobe__mcp strobe__mcp;

typedef struct strobe__tool_env {
  strobe_collector *collector;
  strobe__perms *perms;
  uint64_t owner;   /* the calling MCP session's owner id */
  strobe__mcp *mcp; /* the MCP table, for limit_reached's note; may be NULL */
  strobe_server *server; /* strobe_profile_explain's capture; NULL: nothing to explain */
} strobe__tool_env;

/* The tools/list result's `tools` array (a new reference). */
json_t *strobe__tools_list(void);
/* Runs tool `name`. Returns 0 with *result set to a CallToolResult as
 * compact JSON text (malloc'd, *len bytes; tool failures are results with
 * isError; NULL when out of memory), or -32602 when no such tool exists. */
int strobe__tools_call(const strobe__tool_env *env, const char *name, json_t *arguments, char **result, size_t *len);
/* Parses strobe_profile_start's arguments (also POST /api/sessions'). NULL
 * args means {}. Returns 0, or STROBE_EINVAL with *why set to a static message. */
int strobe__parse_start_args(json_t *args, strobe_session_desc *o, const char **why);
/* strobe_session_desc.kinds as an array of kind names (0: all four). */
json_t *strobe__kinds_json(uint32_t kinds);
/* The stable error name of a STROBE_E* code ("unknown_id", "not_owner"...). */
const char *strobe__error_name(int rc);
/* {name, version, os, arch, features, assertions}: a new reference. */
json_t *strobe__build_json(void);
/* The session bounds (docs/sessions.md §Bounds and lifecycle) as an object: a new reference. */
json_t *strobe__limits_json(void);
/* What became of UI-tree snapshot requests (strobe_tree_query_status): numbers only, never a node
 * (docs/sessions.md §Content). */
json_t *strobe__tree_status_json(void);
/* What became of deep-capture requests and attachments (strobe_deep_query_status): numbers only, never a
 * call, a label or a byte of content (docs/sessions.md §Content). */
json_t *strobe__deep_status_json(void);

/* >>mcp (mcp.c) */

typedef struct strobe__mcp_config {
  strobe_collector *collector;
  strobe__perms *perms;
  uint32_t max_sessions;    /* MCP sessions at once */
  uint32_t session_idle_s;  /* idle expiry */
  strobe_server *server;    /* the capture strobe_profile_explain reads (viewer_internal.h); NULL: none */
} strobe__mcp_config;

typedef struct strobe__mcp_request {
  const char *session_id;       /* the Mcp-Session-Id header, or NULL */
  const char *protocol_version; /* the MCP-Protocol-Version header, or NULL (assume 2025-03-26) */
  uint64_t now_ms;              /* monotonic, when the request arrived; drives idle expiry */
  uint64_t (*clock_ms)(void);   /* the same clock, read when the request ends (NULL: now_ms) */
} strobe__mcp_request;

typedef struct strobe__mcp_response {
  int http_status;                          /* 200, 202, 204, 400, 404, 503 */
  char *body;                               /* malloc'd JSON, or NULL (no body) */
  size_t body_len;
  char session_id[STROBE__MCP_SID_LEN + 1]; /* non-empty: send as Mcp-Session-Id */
} strobe__mcp_response;

int strobe__mcp_create(const strobe__mcp_config *cfg, strobe__mcp **out);
/* Cancels every MCP-owned profiling session and frees the table. Accepts NULL. */
void strobe__mcp_destroy(strobe__mcp *m);
/* Handles one POSTed message body (JSON-RPC) exactly as /mcp does, without
 * HTTP: the status, body and session header to send go to *resp (free with
 * strobe__mcp_response_free). */
void strobe__mcp_handle(strobe__mcp *m, const strobe__mcp_request *req, const char *body, size_t len,
                        strobe__mcp_response *resp);
/* DELETE /mcp: ends the request's MCP session (its profiling sessions are cancelled). */
void strobe__mcp_delete(strobe__mcp *m, const strobe__mcp_request *req, strobe__mcp_response *resp);
void strobe__mcp_response_free(strobe__mcp_response *resp);
/* Cancels the profiling sessions of every MCP session (perms.lock held by
 * the caller, so no tool can start one meanwhile). Returns how many. */
int strobe__mcp_cancel_all(strobe__mcp *m);
/* Ends MCP sessions idle past their limit (cancelling their profiling
 * sessions). Returns when the next one expires (monotonic ms), UINT64_MAX
 * when none is open. */
uint64_t strobe__mcp_expire(strobe__mcp *m, uint64_t now_ms);
/* limit_reached's message when every profiling slot is taken: which limit,
 * how many slots MCP clients hold, and when the oldest idle one's sessions
 * are cancelled by its expiry (docs/server.md §MCP). */
void strobe__mcp_limit_note(strobe__mcp *m, uint64_t now_ms, char *buf, size_t n);
typedef struct strobe__mcp_counts {
  uint64_t open, expired, cancelled;
} strobe__mcp_counts;
strobe__mcp_counts strobe__mcp_query(strobe__mcp *m);

/* >>server */
struct MHD_Daemon;
typedef struct strobe__stream_slot strobe__stream_slot;

typedef struct strobe__otlp strobe__otlp; /* otlp_push.c (>>otlp below) */

struct strobe_server {
  strobe_server_desc desc;       /* resolved defaults; strings below are owned copies */
  char bind_address[64];
  char token[STROBE_SERVER_TOKEN_MAX + 1];
  size_t token_len;
  char *token_file;              /* written by us, removed at stop; NULL otherwise */
  strobe__mutex open_lock;       /* guards the one-time open code (server.c >>open) */
  char open_code[33];            /* strobe_server_make_open_code's code, 32 hex digits; "" when none or used */
  uint64_t open_expires_ms;      /* strobe__mono_ms() past which it is refused */
  char *origins[STROBE_SERVER_MAX_ORIGINS];
  size_t norigins;
  char *hosts[STROBE_SERVER_MAX_ORIGINS];
  size_t nhosts;
  strobe_collector *collector;   /* a reference of our own */
  uint64_t viewer_owner;         /* owner of sessions started through /api/sessions */
  strobe__perms perms;
  strobe__mcp *mcp;
  struct MHD_Daemon *daemon;
  uint16_t port;
  /* live streams (stream.c), guarded by streams_lock */
  strobe__mutex streams_lock;
  strobe__stream_slot *streams;
  uint32_t nstreams;
  int stopping;
  /* connection accounting and the reaper thread (http.c), guarded by conns_lock */
  strobe__mutex conns_lock;
  pthread_cond_t conns_cond;     /* CLOCK_MONOTONIC: wakes the reaper */
  struct strobe__conn *conns;    /* every open connection, in accept order */
  uint32_t nconns, nclosing;
  uint64_t reaper_wake_ms;       /* when the reaper wakes next (UINT64_MAX: on a kick only) */
  int reaper_kicked, reaper_quit, has_reaper;
  pthread_t reaper;
  uint64_t conns_timed_out, conns_shed;
  struct strobe__viewer *viewer; /* viewer.c: made on first use, freed by strobe_server_stop */
  /* counters: atomics */
  uint64_t requests, rejected_auth, rejected_origin, rejected_size;
  uint64_t stream_bytes, stream_events_dropped, stream_drop_episodes;
  uint64_t producer_batches, producer_spans, producer_refused, producer_rate_limited;
  strobe__otlp *otlp;            /* the OTLP push; NULL when otlp_endpoint is not set */
  char otlp_endpoint[512], otlp_service[72];
  /* POST /api/producer/spans's budget (producer.c): the MHD thread only */
  double producer_tokens;
  uint64_t producer_last_ms;     /* 0: not used yet */
};

/* >>http (http.c) */
int strobe__http_start(strobe_server *s);
void strobe__http_stop(strobe_server *s);
/* The connection fields of *st (open, timed out, shed). */
void strobe__conns_totals(strobe_server *s, strobe_server_stats *st);

struct MHD_Connection;
struct MHD_Response;
/* A response of `type` (takes `body`, malloc'd: freed with it, or at once on failure, NULL) with the headers
 * every answer carries. */
struct MHD_Response *strobe__owned_response(void *body, size_t len, const char *type);
/* A JSON response (takes `body`, malloc'd) with the headers every answer carries. */
struct MHD_Response *strobe__json_response(char *body, size_t len);
/* Queues a JSON body (taken) with `status`; returns the MHD result. */
int strobe__queue_json(struct MHD_Connection *conn, unsigned status, char *body, size_t len);
/* Queues {"error": name, "message": message}. */
int strobe__queue_error(struct MHD_Connection *conn, unsigned status, const char *name, const char *message);
/* Queues a jansson value (reference stolen) as the JSON body. */
int strobe__queue_value(struct MHD_Connection *conn, unsigned status, json_t *value);

/* POST /api/open (api.c >>open, the code made in server.c >>open): the one-time code in X-Strobe-Open-Code exchanged for the token. Called
 * without authentication (the code is the credential), after the Host and Origin checks. */
int strobe__api_open(strobe_server *s, struct MHD_Connection *conn, const char *method);

/* >>api (api.c), called on the MHD thread after authentication */
int strobe__api_info(strobe_server *s, struct MHD_Connection *conn);
/* GET /api/tree: snapshot status; POST /api/tree: request a UI-tree snapshot, then the status. */
int strobe__api_tree(strobe_server *s, struct MHD_Connection *conn, const char *method);
/* GET /api/deep: deep-capture status; POST /api/deep: request a deep capture of the next frame, then the status. */
int strobe__api_deep(strobe_server *s, struct MHD_Connection *conn, const char *method);
/* /api/sessions[/<id>[/<action>]]: id NULL for the collection; action NULL, or "reset". */
int strobe__api_sessions(strobe_server *s, struct MHD_Connection *conn, const char *method, const char *id,
                         const char *action, const char *body, size_t len);

/* >>clock (clock_offset_service.c): GET /api/clock answers this host's clock; POST /api/clock samples a peer and keeps it. */
int strobe__api_clock(strobe_server *s, struct MHD_Connection *conn, const char *method, const char *body, size_t len);
json_t *strobe__clock_offset_json(const strobe_clock_offset *o);
/* What a strobe_clock_offset_measure error means, for people (static text). */
const char *strobe__clock_offset_why(int rc);

/* >>otlp (otlp_push.c): the OTLP/HTTP push, when otlp_endpoint is set. */
typedef struct strobe__otlp_counts {
  uint64_t spans, batches, queued, dropped, missed, rejected, retries;
  uint64_t completed; /* operations its session admitted, as of the last read */
} strobe__otlp_counts;
/* Checks "http://host[:port]/path" and splits it (port "80" and path
 * "/v1/traces" when absent); 0 or STROBE_EINVAL. Pure. */
int strobe__otlp_parse_endpoint(const char *url, char *host, size_t hcap, char *port, size_t pcap, char *path,
                                size_t ppcap);
/* Starts the push (its session and thread) for s's resolved desc. */
int strobe__otlp_start(strobe_server *s, strobe__otlp **out);
/* Collects and sends one last time, ends its session, frees it; unless
 * quiet, one line on stderr when anything was not sent. Accepts NULL. */
void strobe__otlp_stop(strobe__otlp *o);
void strobe__otlp_stop_counts(strobe__otlp *o, int quiet);
strobe__otlp_counts strobe__otlp_query(strobe__otlp *o);
uint64_t strobe__otlp_owner(const strobe__otlp *o); /* its session's owner; 0 for NULL */

/* POST /api/producer/spans (producer.c): an external producer's batch of spans. */
int strobe__api_producer(strobe_server *s, struct MHD_Connection *conn, const char *method, const char *body,
                         size_t len);

/* >>stream (stream.c) */
int strobe__stream_open(strobe_server *s, struct MHD_Connection *conn);
/* Ends every live stream and waits (bounded) until libmicrohttpd let go of them. */
void strobe__streams_close_all(strobe_server *s);
/* Per-stream counters into `out` (a JSON array, appended). */
void strobe__streams_json(strobe_server *s, json_t *out);
/* Fills the stream fields of *st: live streams plus those already closed. */
void strobe__streams_totals(strobe_server *s, strobe_server_stats *st);

#endif
