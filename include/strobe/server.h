/*
 * server.h — libstrobe_server: an embedded HTTP server (GNU libmicrohttpd,
 * on its own thread) that serves
 *   - MCP (protocol 2025-11-25, Streamable HTTP, JSON responses) at /mcp,
 *     with the tools strobe_profile_start / _read / _end (docs/server.md §Tools);
 *   - the viewer's endpoints: GET /api/info, GET /api/capture/stream (the
 *     capture format, live), /api/sessions.
 * docs/server.md describes every endpoint, limit and error name.
 *
 * Security: binds 127.0.0.1 unless told otherwise; every request needs
 * `Authorization: Bearer <token>` (constant-time comparison); Host and
 * Origin are checked against loopback and configured values (DNS
 * rebinding); body, header, connection and idle-time limits bound what a
 * client can make it hold. The token is never logged, never accepted in a
 * URL and never appears in a report.
 *
 * Permissions (docs/server.md §Permissions and ownership): MCP tools need the server's MCP switch, the
 * Observe scope and a per-tool permission. An MCP client (one MCP session)
 * reads and ends only the profiling sessions it started. Revoking Observe,
 * disabling MCP or denying a profiling tool cancels every MCP-owned session
 * and discards its report; in-process sessions continue; granting again
 * does not revive cancelled ids.
 *
 * Thread rule: every function here is safe to call from any thread, except
 * that a server is stopped exactly once and not used after
 * strobe_server_stop. Tools run on the server's thread, so they answer
 * while the application's own threads are blocked.
 */
#ifndef STROBE_SERVER_H
#define STROBE_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "strobe/flight.h"
#include "strobe/session.h"
#include "strobe/strobe.h"
#include "strobe/viewer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct strobe_server strobe_server;

/* The MCP tools: the one list (docs/server.md). X(ID, bit, name) gives
 * STROBE_TOOL_<ID> = 1u << bit, the tool's bit in strobe_server_desc.tools
 * and strobe_server_set_tool_allowed, and its MCP name. A new tool is a line
 * here plus its schema and handler in src/server/tools.c. */
#define STROBE_SERVER_TOOLS(X)                \
  X(PROFILE_START, 0, "strobe_profile_start") \
  X(PROFILE_READ, 1, "strobe_profile_read")   \
  X(PROFILE_END, 2, "strobe_profile_end")     \
  X(PROFILE_RESET, 3, "strobe_profile_reset") \
  X(UI_TREE_REQUEST, 4, "strobe_ui_tree_request") /* requests a UI-tree snapshot into local captures; answers its status, never its nodes */ \
  X(DEEP_CAPTURE_REQUEST, 5, "strobe_deep_capture_request") /* requests a deep capture of the next frame into local capture files; answers its status and size, never a call or a byte */ \
  X(PROFILE_EXPLAIN, 6, "strobe_profile_explain") /* why frames of the live recording (or the shown file) were slow, and where an unfinished one is stuck: static labels and numbers only */

typedef enum strobe_server_tool {
#define STROBE__TOOL_BIT(id, bit, name) STROBE_TOOL_##id = 1u << (bit),
  STROBE_SERVER_TOOLS(STROBE__TOOL_BIT)
#undef STROBE__TOOL_BIT
#define STROBE__TOOL_OR(id, bit, name) | (1u << (bit))
  STROBE_TOOL_ALL = 0u STROBE_SERVER_TOOLS(STROBE__TOOL_OR) /* every tool */
#undef STROBE__TOOL_OR
} strobe_server_tool;

#define STROBE_SERVER_TOKEN_MIN 16   /* bytes; a generated token is 64 hex digits (32 random bytes) */
#define STROBE_SERVER_TOKEN_MAX 512
#define STROBE_SERVER_MAX_ORIGINS 16 /* entries of allowed_origins / allowed_hosts kept */

/* Zero means "default" for every field; strobe_server_query_desc shows the
 * values in force. */
typedef struct strobe_server_desc {
  const char *bind_address;            /* IPv4 or IPv6 literal; default "127.0.0.1" */
  uint16_t port;                       /* default 0: the OS picks one (strobe_server_query_port) */
  const char *token;                   /* 16..512 bytes of visible ASCII; default $STROBE_TOKEN, else 32
                                          bytes from getrandom() as hex, written to token_file */
  const char *token_file;              /* where a generated token is written (mode 0600); default
                                          $XDG_RUNTIME_DIR/strobe-<pid>.token, else /tmp/strobe-<pid>.token */
  const char *const *allowed_origins;  /* NULL-terminated extra Origin values ("http://host:port");
                                          http://127.0.0.1:PORT, http://localhost:PORT and
                                          http://[::1]:PORT are always allowed; at most 16 kept */
  const char *const *allowed_hosts;    /* NULL-terminated extra Host values ("name" or "name:port");
                                          loopback names are always allowed; at most 16 kept */
  strobe_collector *collector;         /* default strobe_default_collector(); the server holds a reference */
  size_t max_body_bytes;               /* default 1 MiB, at most 64 MiB: a larger request body is 413 */
  size_t max_header_bytes;             /* default 16 KiB, 4 KiB..1 MiB: larger request headers are refused (431) */
  uint32_t max_connections;            /* default 512, at most 4096: connections held; past it the
                                          oldest connection without a request in progress (one still
                                          sending its headers, or idle between requests) is closed */
  uint32_t idle_timeout_s;             /* default 30: a connection idle this long is closed */
  uint32_t request_timeout_s;          /* default 10, at most 3600: a request's headers and body must
                                          have arrived this many seconds after the connection was
                                          accepted (or its previous request answered), however they
                                          trickle in; else the connection is closed */
  union {
    uint32_t mcp_idle_timeout_s;       /* default 120: an MCP session with no request this long is
                                          closed and its profiling sessions cancelled */
    uint32_t mcp_session_idle_s;       /* the old name of mcp_idle_timeout_s, kept for one release */
  };
  uint32_t max_mcp_sessions;           /* default 64, at most 1024: MCP sessions at once */
  uint32_t max_streams;                /* default 2, at most 4: live capture streams at once (each is
                                          one of the process's 8 event consumers) */
  size_t stream_queue_bytes;           /* default 8 MiB: per live-stream client; a slower client loses
                                          events, counted and reported (docs/server.md) */
  uint32_t tools;                      /* STROBE_TOOL_* bits allowed; default 0 = every tool */
  int mcp_disabled;                    /* 1: start with MCP tools refused (permission_denied) */
  int observe_denied;                  /* 1: start without the Observe scope */
  int quiet;                           /* 1: print nothing to stderr (otherwise the token file's
                                          path, never the token, is printed when one is written) */
  uint32_t producer_spans_per_second;  /* POST /api/producer/spans budget: default 100000, at most
                                          10000000; a batch over what is left of the current
                                          second's is refused whole (429, docs/server.md) */
  /* OTLP/HTTP push of completed operations (docs/otel.md §Push from the server); off by default. */
  const char *otlp_endpoint;           /* "http://host[:port]/path" (OTLP/HTTP JSON, e.g.
                                          http://127.0.0.1:4318/v1/traces); NULL: no push. Copied.
                                          TLS: a local OpenTelemetry Collector in front */
  const char *otlp_service;            /* service.name of the pushed traces; default "unknown_service:strobe";
                                          a static label (1-64 of [A-Za-z0-9_.-]); copied */
  uint32_t otlp_interval_ms;           /* how often operations are collected and sent: default 1000, 10..60000;
                                          also the first retry's backoff (doubling to 30 s) */
  uint32_t otlp_queue_max;             /* operations waiting to be sent: default 4096, 1..1048576; past it the
                                          oldest are dropped and counted (strobe_server_stats.otlp_dropped) */
} strobe_server_desc;

/* >>clock offsets between hosts (docs/sessions.md §Across hosts): the
 * client side of GET /api/clock, NTP-style. */
typedef struct strobe_clock_offset_desc {
  const char *url;        /* the peer's server: "http://host[:port]" (any path is ignored) */
  const char *token;      /* the peer server's token (sent only to url, in the Authorization header) */
  uint32_t rounds;        /* round trips to take: default 8, at most 64; the lowest round trip is kept */
  uint32_t max_rtt_ms;    /* a round trip longer than this is not kept: default 1000, at most 60000 */
  const char *peer;       /* the sample's peer name; NULL: the URL's host:port */
} strobe_clock_offset_desc;
/* Measures this host's clock against the peer's: *out holds the offset
 * (peer minus here), its error bound and the round trip of the best of
 * d->rounds round trips; it is not kept (strobe_clock_offset_add keeps it,
 * POST /api/clock does both). Blocks the calling thread for at most about
 * rounds x (max_rtt_ms + 1 s). Returns 0, or (*out untouched): STROBE_EINVAL
 * (a bad desc), STROBE_EIO (unreachable: no connection),
 * STROBE_EPERM (the peer refused the token), STROBE_EPEER (an answer that is
 * not a clock reply: status, JSON, boot id, times out of order, two boots at
 * one URL), STROBE_ELIMIT (no whole answer, or no round trip, within
 * max_rtt_ms). Any thread. */
STROBE_API int strobe_clock_offset_measure(const strobe_clock_offset_desc *d, strobe_clock_offset *out);

/* Starts the server on its own thread. On success *out is the server (stop
 * it with strobe_server_stop). On error *out is NULL, nothing is left
 * running or written, and the code is STROBE_EINVAL (a desc field out of
 * range, a token that is too short/long or not visible ASCII, a bind
 * address that is not an IP literal), STROBE_EBUSY (the port is taken),
 * STROBE_EIO (the token file cannot be written, or the server cannot
 * start), STROBE_ENOMEM or STROBE_EFEATURE_DISABLED (no collector: profiling
 * compiled out and none given). */
STROBE_API int strobe_server_start(const strobe_server_desc *desc, strobe_server **out);

/* Stops serving (open connections are closed, live streams end), cancels
 * every profiling session started over MCP or /api/sessions, removes a
 * token file it wrote, drops its collector reference and frees the server.
 * Accepts NULL. */
STROBE_API void strobe_server_stop(strobe_server *s);

/* The TCP port it listens on. */
STROBE_API uint16_t strobe_server_query_port(const strobe_server *s);
/* Path of the token file it wrote, or NULL when the token came from the desc
 * or $STROBE_TOKEN. Owned by the server; valid until strobe_server_stop. */
STROBE_API const char *strobe_server_query_token_file(const strobe_server *s);
/* A one-time code that opens the viewer without the token in any command
 * line (docs/server.md §Opening the viewer): a browser started on
 * http://HOST:PORT/#code=CODE trades it once, within 10 minutes, for the
 * token (POST /api/open with the header X-Strobe-Open-Code: CODE, answered
 * {"token": ...}; the viewer does it on load). A new code replaces the
 * last. Writes STROBE_SERVER_OPEN_CODE_LEN hex digits and a NUL to out.
 * Returns 0, STROBE_EINVAL (s or out NULL) or STROBE_EIO (no randomness);
 * on error nothing changes. Safe to call from any thread. */
#define STROBE_SERVER_OPEN_CODE_LEN 32 /* hex digits: 16 random bytes */
STROBE_API int strobe_server_make_open_code(strobe_server *s, char out[STROBE_SERVER_OPEN_CODE_LEN + 1]);
/* The desc in force, defaults resolved, port and permissions as they are
 * now. Pointers (bind_address, token_file, collector) are owned by the
 * server; token, allowed_origins and allowed_hosts are always NULL. */
STROBE_API strobe_server_desc strobe_server_query_desc(const strobe_server *s);

/* >>permissions (docs/server.md §Permissions and ownership). Each returns the number of MCP-owned sessions it
 * cancelled (>= 0), or STROBE_EINVAL. Granting never revives anything. */
/* Grants (1) or revokes (0) the Observe scope. Revoking cancels every MCP-owned session. */
STROBE_API int strobe_server_set_observe(strobe_server *s, int granted);
/* Enables (1) or disables (0) MCP tools. Disabling cancels every MCP-owned session. */
STROBE_API int strobe_server_set_mcp_enabled(strobe_server *s, int enabled);
/* Allows (1) or denies (0) the tools in the STROBE_TOOL_* mask `tools`.
 * Denying any of them cancels every MCP-owned session. */
STROBE_API int strobe_server_set_tool_allowed(strobe_server *s, uint32_t tools, int allowed);

typedef struct strobe_server_stats {
  uint64_t requests;             /* HTTP requests answered */
  uint64_t rejected_auth;        /* 401: missing or wrong token */
  uint64_t rejected_origin;      /* 403: Host or Origin not allowed */
  uint64_t rejected_size;        /* 413: body over max_body_bytes */
  uint64_t mcp_sessions;         /* MCP sessions open now */
  uint64_t mcp_sessions_expired; /* ended by idle expiry */
  uint64_t mcp_cancelled;        /* profiling sessions cancelled by permission changes, MCP session end or expiry */
  uint64_t streams;              /* live capture streams open now */
  uint64_t stream_bytes;         /* capture bytes sent to live clients, all streams */
  uint64_t stream_events_dropped; /* events live clients lost because they read too slowly, all streams */
  uint64_t stream_drop_episodes; /* times a live client's queue filled up, all streams */
  uint64_t connections;          /* TCP connections open now */
  uint64_t connections_timed_out; /* closed because a request was not complete within request_timeout_s */
  uint64_t connections_shed;     /* closed to stay within max_connections (oldest without a request first) */
  uint64_t producer_batches;     /* POST /api/producer/spans batches recorded (docs/server.md §External producers) */
  uint64_t producer_spans;       /* their spans */
  uint64_t producer_refused;     /* batches refused whole (malformed, limits, rate, nothing recording) */
  uint64_t producer_rate_limited; /* of them, over producer_spans_per_second */
  /* OTLP push (docs/otel.md §Push from the server); all 0 without otlp_endpoint: */
  uint64_t otlp_spans;           /* operations the endpoint took (one root span each) */
  uint64_t otlp_batches;         /* POSTs it answered 2xx */
  uint64_t otlp_queued;          /* operations waiting now */
  uint64_t otlp_dropped;         /* dropped from a full queue (otlp_queue_max), oldest first */
  uint64_t otlp_missed;          /* completed and gone from the push's session (240 samples) before it was read */
  uint64_t otlp_rejected;        /* in batches the endpoint refused (4xx but 408 and 429): not sent again */
  uint64_t otlp_retries;         /* batches to send again: no connection, timeout, 408, 429 or 5xx */
  uint64_t otlp_completed;       /* operations the push's session admitted, as of its last read: each is exactly
                                  * one of sent (otlp_spans), queued, dropped, missed or rejected */
} strobe_server_stats;
STROBE_API strobe_server_stats strobe_server_query_stats(const strobe_server *s);

/* >>viewer: what the web viewer at `/` shows (viewer.h, docs/viewer.md).
 * Safe from any thread while the server runs: these take the viewer's own
 * lock; loading a file runs on the caller's thread, never on the server's. */
/* Loads capture file `path` (and `compare`, a second capture for the
 * two-capture diff, or NULL) as what the viewer shows, replacing a live or
 * earlier one. max_spans 0 means STROBE_VIEWER_DEFAULT_MAX_SPANS. Reads on
 * the calling thread. A capture that is cut short or truncated inside a
 * block still loads what it holds (stats->read_error says why it ended).
 * Returns 0 (stats filled when non-NULL), or STROBE_EINVAL, STROBE_EIO,
 * STROBE_EBADMAGIC, STROBE_EVERSION, STROBE_ENOMEM, or a reader error met
 * before any record; on error the viewer's data is unchanged. */
STROBE_API int strobe_server_view_file(strobe_server *s, const char *path, const char *compare, uint32_t max_spans,
                                       strobe_viewer_load_stats *stats);

/* Starts recording the live application into a flight recorder owned by
 * the server (desc NULL: the last 10 s within 64 MiB, no spike trigger), so
 * the viewer can show it. Returns 0, STROBE_ESTATE (recording already, or
 * the server shows a file), or strobe_flight_recorder_start's errors. */
STROBE_API int strobe_server_record_start(strobe_server *s, const strobe_flight_recorder_desc *desc);

/* Stops recording: the recorder's content is kept as the viewer's last
 * snapshot and the recorder is freed. Blocks while that snapshot is taken.
 * Returns 0, or STROBE_ESTATE when not recording. */
STROBE_API int strobe_server_record_stop(strobe_server *s);

/* 1 while the server's live recorder runs, else 0 (also for NULL). */
STROBE_API int strobe_server_recording(const strobe_server *s);

/* >>deprecated: old names, kept for one release (strobe.h states the conventions). */
#if !defined(STROBE_NO_DEPRECATED)
STROBE_DEPRECATED("use strobe_server_query_port")
static inline uint16_t strobe_server_port(const strobe_server *s) { return strobe_server_query_port(s); }
STROBE_DEPRECATED("use strobe_server_query_token_file")
static inline const char *strobe_server_token_file(const strobe_server *s) { return strobe_server_query_token_file(s); }
STROBE_DEPRECATED("use strobe_server_query_stats")
static inline strobe_server_stats strobe_server_query(const strobe_server *s) { return strobe_server_query_stats(s); }
STROBE_DEPRECATED("use strobe_server_record_start")
static inline int strobe_server_record(strobe_server *s, const strobe_flight_recorder_desc *desc) {
  return strobe_server_record_start(s, desc);
}
#endif

#ifdef __cplusplus
}
#endif

#endif
