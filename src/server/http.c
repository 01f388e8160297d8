/*
 * http.c — libmicrohttpd glue: the listening socket (bound by us, so a busy
 * port is a precise error), the daemon's limits (connections, idle time,
 * header memory), and the checks every request passes before any handler
 * sees it: Host and Origin (DNS rebinding) → 403, bearer token in constant
 * time → 401, no token in the URL → 400, body size → 413. Then routing to
 * mcp.c, api.c and stream.c.
 *
 * Owns: the daemon and each request's body buffer.
 * Must never: log or echo the token, read a token from the URL, buffer more
 * than max_body_bytes of a body, answer a request that failed a check with
 * anything but the check's error, or block its thread on application work.
 *
 * Connections are accounted here too (>>connections): libmicrohttpd's own
 * timeout restarts on every byte, so a client trickling one header byte at a
 * time would hold its connection forever. Each connection's current request
 * has an absolute deadline (request_timeout_s from accept, or from the end
 * of the previous request), enforced by the reaper thread, which sleeps
 * until the next deadline (a connection's, or an MCP session's idle expiry)
 * and is otherwise idle; past max_connections the oldest connection with no
 * request in progress is closed, so an authenticated request in progress is
 * never the one shed.
 *
 * Contents: >>responses >>checks >>connections >>routes >>daemon
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "server/server_internal.h"
#include "server/viewer_internal.h"

#define LISTEN_BACKLOG 512
#define SHED_HEADROOM 64u /* accepted past max_connections, closed at once (>>connections) */

/* >>responses */
struct MHD_Response *strobe__owned_response(void *body, size_t len, const char *type) {
  struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
  if (!r) {
    free(body);
    return NULL;
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
  return r;
}

struct MHD_Response *strobe__json_response(char *body, size_t len) {
  return strobe__owned_response(body, len, "application/json");
}

int strobe__queue_json(struct MHD_Connection *conn, unsigned status, char *body, size_t len) {
  struct MHD_Response *r = strobe__json_response(body, len);
  if (!r) return MHD_NO;
  enum MHD_Result ret = MHD_queue_response(conn, status, r);
  MHD_destroy_response(r);
  return ret;
}

int strobe__queue_value(struct MHD_Connection *conn, unsigned status, json_t *value) {
  char *text = value ? json_dumps(value, JSON_COMPACT) : NULL;
  json_decref(value);
  if (!text) return MHD_NO;
  return strobe__queue_json(conn, status, text, strlen(text));
}

int strobe__queue_error(struct MHD_Connection *conn, unsigned status, const char *name, const char *message) {
  return strobe__queue_value(conn, status, json_pack("{s:s,s:s}", "error", name, "message", message));
}

static int queue_empty(struct MHD_Connection *conn, unsigned status, const char *allow) {
  struct MHD_Response *r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
  if (!r) return MHD_NO;
  MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  if (allow) MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
  enum MHD_Result ret = MHD_queue_response(conn, status, r);
  MHD_destroy_response(r);
  return ret;
}

static int queue_unauthorized(struct MHD_Connection *conn) {
  json_t *v = json_pack("{s:s,s:s}", "error", "unauthorized", "message",
                        "missing or wrong bearer token (Authorization: Bearer <token>)");
  char *text = json_dumps(v, JSON_COMPACT);
  json_decref(v);
  struct MHD_Response *r = text ? strobe__json_response(text, strlen(text)) : NULL;
  if (!r) return MHD_NO;
  MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"strobe\"");
  enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_UNAUTHORIZED, r);
  MHD_destroy_response(r);
  return ret;
}

/* >>checks */
static int loopback_name(const char *h, size_t n) {
  return (n == 9 && !strncasecmp(h, "127.0.0.1", 9)) || (n == 9 && !strncasecmp(h, "localhost", 9)) ||
         (n == 5 && !strncmp(h, "[::1]", 5));
}

/* Host: a loopback name with no port or the server's own, or a configured value. */
static int host_allowed(const strobe_server *s, const char *host) {
  if (!host) return 0;
  for (size_t i = 0; i < s->nhosts; i++)
    if (!strcasecmp(host, s->hosts[i])) return 1;
  const char *end = host + strlen(host);
  const char *colon = host[0] == '[' ? strchr(host, ']') : strchr(host, ':');
  if (host[0] == '[') colon = colon && colon[1] == ':' ? colon + 1 : NULL;
  size_t namelen = colon ? (size_t)(colon - host) : (size_t)(end - host);
  if (!loopback_name(host, namelen)) {
    for (size_t i = 0; i < s->nhosts; i++) /* a configured bare name with any port */
      if (!strchr(s->hosts[i], ':') && strlen(s->hosts[i]) == namelen && !strncasecmp(host, s->hosts[i], namelen))
        return colon != NULL;
    return 0;
  }
  if (!colon) return 1;
  char port[8];
  snprintf(port, sizeof port, "%u", (unsigned)s->port);
  return !strcmp(colon + 1, port);
}

static int origin_allowed(const strobe_server *s, const char *origin) {
  for (size_t i = 0; i < s->norigins; i++)
    if (!strcasecmp(origin, s->origins[i])) return 1;
  static const char *const names[] = {"127.0.0.1", "localhost", "[::1]"};
  for (size_t i = 0; i < 3; i++) {
    char want[64];
    snprintf(want, sizeof want, "http://%s:%u", names[i], (unsigned)s->port);
    if (!strcasecmp(origin, want)) return 1;
  }
  return 0;
}

/* Authorization: Bearer <token>, the scheme case-insensitive (RFC 7235). */
static int token_ok(const strobe_server *s, const char *auth) {
  if (!auth || strncasecmp(auth, "Bearer ", 7) != 0) return 0;
  const char *t = auth + 7;
  while (*t == ' ') t++;
  size_t n = strlen(t);
  while (n && (t[n - 1] == ' ' || t[n - 1] == '\t')) n--;
  return strobe__ct_equal(t, n, s->token, s->token_len);
}

/* Runs every check; queues the rejection and returns 1 when the request is refused. */
static int reject(strobe_server *s, struct MHD_Connection *conn, int public_asset, int *ret) {
  const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
  if (!host_allowed(s, host)) {
    __atomic_fetch_add(&s->rejected_origin, 1, __ATOMIC_RELAXED);
    *ret = strobe__queue_error(conn, MHD_HTTP_FORBIDDEN, "forbidden_host",
                               "the Host header is not a loopback name of this server or a configured host");
    return 1;
  }
  const char *origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ORIGIN);
  if (origin && !origin_allowed(s, origin)) {
    __atomic_fetch_add(&s->rejected_origin, 1, __ATOMIC_RELAXED);
    *ret = strobe__queue_error(conn, MHD_HTTP_FORBIDDEN, "forbidden_origin", "this Origin is not allowed");
    return 1;
  }
  if (MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "token") ||
      MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "access_token")) {
    __atomic_fetch_add(&s->rejected_auth, 1, __ATOMIC_RELAXED);
    *ret = strobe__queue_error(conn, MHD_HTTP_BAD_REQUEST, "token_in_url",
                               "the token is accepted only in the Authorization header, never in the URL");
    return 1;
  }
  if (public_asset) return 0; /* the viewer's embedded static files carry no data (viewer.c) */
  if (!token_ok(s, MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION))) {
    __atomic_fetch_add(&s->rejected_auth, 1, __ATOMIC_RELAXED);
    *ret = queue_unauthorized(conn);
    return 1;
  }
  const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
  if (cl) {
    char *end;
    errno = 0;
    unsigned long long n = strtoull(cl, &end, 10);
    if (errno || end == cl || n > s->desc.max_body_bytes) {
      __atomic_fetch_add(&s->rejected_size, 1, __ATOMIC_RELAXED);
      *ret = strobe__queue_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, "payload_too_large",
                                 "the request body is larger than max_body_bytes");
      return 1;
    }
  }
  return 0;
}

/* >>connections — phases of a connection's current request */
enum {
  CONN_WAITING, /* no complete request headers yet: accepted, or idle after a request */
  CONN_BODY,    /* headers in and checked; the body is arriving */
  CONN_ANSWER,  /* answered or answering (a live stream lasts): no deadline */
};

typedef struct strobe__conn {
  struct strobe__conn *prev, *next;
  int fd;
  int phase;
  int closing;       /* shut down by us; libmicrohttpd closes it on its next look */
  uint64_t since_ms; /* accept, or the end of the previous request */
} strobe__conn;

static uint64_t deadline_of(const strobe_server *s, const strobe__conn *e) {
  return e->since_ms + (uint64_t)s->desc.request_timeout_s * 1000u;
}

/* Wakes the reaper (conns_lock held) when `when` comes before its wake-up. */
static void kick_locked(strobe_server *s, uint64_t when) {
  if (when < s->reaper_wake_ms) {
    s->reaper_kicked = 1;
    pthread_cond_signal(&s->conns_cond);
  }
}

static void kick(strobe_server *s) {
  strobe__mutex_lock(&s->conns_lock);
  kick_locked(s, 0);
  strobe__mutex_unlock(&s->conns_lock);
}

/* Closes a connection from outside libmicrohttpd's thread (conns_lock held):
 * shutdown() makes its next read see the end, and libmicrohttpd closes it
 * and tells on_connection, which takes conns_lock before the descriptor is
 * closed, so `fd` is still this connection's. */
static void close_conn(strobe_server *s, strobe__conn *e) {
  STROBE_ASSERT(strobe__mutex_held(&s->conns_lock));
  shutdown(e->fd, SHUT_RDWR);
  e->closing = 1;
  s->nclosing++;
}

/* Past max_connections: closes the oldest connection with no request in
 * progress (conns_lock held). The newest may be that one. */
static void shed(strobe_server *s) {
  while (s->nconns - s->nclosing > s->desc.max_connections) {
    strobe__conn *victim = NULL;
    for (strobe__conn *e = s->conns; e; e = e->next)
      if (!e->closing && e->phase == CONN_WAITING && (!victim || e->since_ms < victim->since_ms)) victim = e;
    if (!victim) return; /* every one is answering or receiving an authenticated body */
    close_conn(s, victim);
    s->conns_shed++;
  }
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code) {
  strobe_server *s = cls;
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    strobe__conn *e = ci ? calloc(1, sizeof *e) : NULL;
    if (!e) { /* cannot account for it: refuse it */
      if (ci) shutdown(ci->connect_fd, SHUT_RDWR);
      return;
    }
    e->fd = ci->connect_fd;
    e->phase = CONN_WAITING;
    e->since_ms = strobe__mono_ms();
    strobe__mutex_lock(&s->conns_lock);
    e->prev = NULL;
    e->next = s->conns;
    if (s->conns) s->conns->prev = e;
    s->conns = e;
    s->nconns++;
    shed(s);
    kick_locked(s, deadline_of(s, e));
    strobe__mutex_unlock(&s->conns_lock);
    *socket_context = e;
    return;
  }
  strobe__conn *e = *socket_context;
  if (!e) return;
  strobe__mutex_lock(&s->conns_lock);
  if (e->prev) e->prev->next = e->next;
  else s->conns = e->next;
  if (e->next) e->next->prev = e->prev;
  s->nconns--;
  if (e->closing) s->nclosing--;
  strobe__mutex_unlock(&s->conns_lock);
  free(e);
  *socket_context = NULL;
}

static void set_phase(strobe_server *s, struct MHD_Connection *conn, int phase) {
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  strobe__conn *e = ci ? ci->socket_context : NULL;
  if (!e) return;
  strobe__mutex_lock(&s->conns_lock);
  e->phase = phase;
  if (phase == CONN_WAITING) {
    e->since_ms = strobe__mono_ms();
    kick_locked(s, deadline_of(s, e));
  }
  strobe__mutex_unlock(&s->conns_lock);
}

/* The reaper: closes connections whose request missed its deadline and
 * expires idle MCP sessions, then sleeps until the next such instant (or a
 * kick). With nothing pending it sleeps until kicked: no periodic timer. */
static void *reaper_main(void *arg) {
  strobe_server *s = arg;
  strobe__mutex_lock(&s->conns_lock);
  while (!s->reaper_quit) {
    uint64_t now = strobe__mono_ms(), next = UINT64_MAX;
    for (strobe__conn *e = s->conns; e; e = e->next) {
      if (e->closing || e->phase == CONN_ANSWER) continue;
      uint64_t dl = deadline_of(s, e);
      if (dl <= now) {
        close_conn(s, e);
        s->conns_timed_out++;
      } else if (dl < next) {
        next = dl;
      }
    }
    s->reaper_kicked = 0;
    s->reaper_wake_ms = UINT64_MAX; /* awake: a kick during the MCP pass below is noted */
    strobe__mutex_unlock(&s->conns_lock);
    uint64_t mcp_next = strobe__mcp_expire(s->mcp, now); /* mcp lock, then the collector's: never under conns_lock */
    strobe__mutex_lock(&s->conns_lock);
    if (mcp_next < next) next = mcp_next;
    if (s->reaper_kicked || s->reaper_quit) continue;
    s->reaper_wake_ms = next;
    if (next == UINT64_MAX) {
      strobe__cond_wait(&s->conns_cond, &s->conns_lock);
    } else {
      next += 20; /* a few deadlines per wake-up rather than one each */
      struct timespec ts = {(time_t)(next / 1000u), (long)(next % 1000u) * 1000000L};
      strobe__cond_timedwait(&s->conns_cond, &s->conns_lock, &ts);
    }
  }
  strobe__mutex_unlock(&s->conns_lock);
  return NULL;
}

void strobe__conns_totals(strobe_server *s, strobe_server_stats *st) {
  strobe__mutex_lock(&s->conns_lock);
  st->connections = s->nconns;
  st->connections_timed_out = s->conns_timed_out;
  st->connections_shed = s->conns_shed;
  strobe__mutex_unlock(&s->conns_lock);
}

/* libmicrohttpd (0.9.75) accepts a response only before a body is read or
 * after all of it arrived, so a chunked body over the bound is answered on
 * the socket itself, from the handler (MHD's thread, nothing else written
 * on this connection meanwhile): the 413 with `Connection: close`, then a
 * FIN. The connection stays open while the rest of the body is discarded
 * (bounded), so the client reads the answer instead of a reset. Returns 0
 * when the answer could not be written whole. */
static int answer_early_413(struct MHD_Connection *conn) {
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
  if (!ci) return 0;
  static const char k_body[] =
      "{\"error\":\"payload_too_large\",\"message\":\"the request body is larger than max_body_bytes\"}";
  char msg[512];
  int n = snprintf(msg, sizeof msg,
                   "HTTP/1.1 413 Content Too Large\r\nConnection: close\r\nContent-Type: application/json\r\n"
                   "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nContent-Length: %zu\r\n\r\n%s",
                   sizeof k_body - 1, k_body);
  ssize_t k = send(ci->connect_fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
  shutdown(ci->connect_fd, SHUT_WR);
  return k == n;
}

/* >>routes */
typedef struct request {
  int checked;   /* the first call (headers) has run */
  int answered;  /* a response was queued before the body was read */
  int too_big;
  char *body;
  size_t len, cap;
} request;

/* 1 when the request says its body is JSON (Content-Type: application/json, parameters allowed). */
static int json_body(struct MHD_Connection *conn) {
  const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
  return ct && strncasecmp(ct, "application/json", 16) == 0 && (!ct[16] || ct[16] == ';' || ct[16] == ' ');
}

static int route_mcp(strobe_server *s, struct MHD_Connection *conn, const char *method, request *rq) {
  strobe__mcp_request mr = {MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Mcp-Session-Id"),
                            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "MCP-Protocol-Version"),
                            strobe__mono_ms(), strobe__mono_ms};
  strobe__mcp_response resp;
  if (!strcmp(method, MHD_HTTP_METHOD_POST)) {
    if (!json_body(conn))
      return strobe__queue_error(conn, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type",
                                 "POST /mcp takes Content-Type: application/json");
    strobe__mcp_handle(s->mcp, &mr, rq->body ? rq->body : "", rq->len, &resp);
  } else if (!strcmp(method, MHD_HTTP_METHOD_DELETE)) {
    strobe__mcp_delete(s->mcp, &mr, &resp);
  } else {
    /* GET would open a server-to-client SSE stream; this server sends none. */
    return queue_empty(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "POST, DELETE");
  }
  struct MHD_Response *r;
  if (resp.body) {
    r = strobe__json_response(resp.body, resp.body_len);
    resp.body = NULL;
  } else {
    r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
  }
  if (!r) return MHD_NO;
  if (resp.session_id[0]) {
    MHD_add_response_header(r, "Mcp-Session-Id", resp.session_id);
    kick(s); /* a new MCP session: the reaper plans its idle expiry */
  }
  enum MHD_Result ret = MHD_queue_response(conn, (unsigned)resp.http_status, r);
  MHD_destroy_response(r);
  strobe__mcp_response_free(&resp);
  return ret;
}

static int route(strobe_server *s, struct MHD_Connection *conn, const char *url, const char *method,
                 request *rq) {
  int get = !strcmp(method, MHD_HTTP_METHOD_GET);
  if (!strcmp(url, "/mcp")) return route_mcp(s, conn, method, rq);
  if (!strcmp(url, "/api/info")) {
    if (!get) return queue_empty(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET");
    return strobe__api_info(s, conn);
  }
  if (!strcmp(url, "/api/open")) return strobe__api_open(s, conn, method);
  if (!strcmp(url, "/api/tree")) return strobe__api_tree(s, conn, method);
  if (!strcmp(url, "/api/clock")) return strobe__api_clock(s, conn, method, rq->body, rq->len);
  if (!strcmp(url, "/api/deep")) return strobe__api_deep(s, conn, method);
  if (!strcmp(url, "/api/producer/spans")) {
    if (!strcmp(method, MHD_HTTP_METHOD_POST) && !json_body(conn))
      return strobe__queue_error(conn, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type",
                                 "POST /api/producer/spans takes Content-Type: application/json");
    return strobe__api_producer(s, conn, method, rq->body, rq->len);
  }
  if (strobe__viewer_is_asset(url, method)) return strobe__viewer_asset(conn, url);
  if (!strncmp(url, "/api/capture/", 13) && strcmp(url, "/api/capture/stream") != 0)
    return strobe__viewer_api(s, conn, url, method, rq->body, rq->len);
  if (!strcmp(url, "/api/capture/stream")) {
    if (!get) return queue_empty(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET");
    return strobe__stream_open(s, conn);
  }
  if (!strcmp(url, "/api/sessions")) return strobe__api_sessions(s, conn, method, NULL, NULL, rq->body, rq->len);
  if (!strncmp(url, "/api/sessions/", 14) && url[14] && !strchr(url + 14, '/'))
    return strobe__api_sessions(s, conn, method, url + 14, NULL, rq->body, rq->len);
  /* /api/sessions/<id>/reset: the id is copied out (bounded like every session id). */
  const char *slash = !strncmp(url, "/api/sessions/", 14) ? strchr(url + 14, '/') : NULL;
  if (slash && slash > url + 14 && !strcmp(slash, "/reset")) {
    char id[STROBE_SESSION_ID_MAX];
    size_t n = (size_t)(slash - (url + 14));
    if (n >= sizeof id) return strobe__queue_error(conn, MHD_HTTP_NOT_FOUND, "unknown_id", "unknown session id");
    memcpy(id, url + 14, n);
    id[n] = 0;
    return strobe__api_sessions(s, conn, method, id, "reset", rq->body, rq->len);
  }
  return strobe__queue_error(conn, MHD_HTTP_NOT_FOUND, "not_found", "no such endpoint");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls) {
  (void)version;
  strobe_server *s = cls;
  request *rq = *con_cls;
  if (!rq) {
    rq = calloc(1, sizeof *rq);
    if (!rq) return MHD_NO;
    *con_cls = rq;
    __atomic_fetch_add(&s->requests, 1, __ATOMIC_RELAXED);
    int ret;
    /* The viewer's files carry no data, and /api/open's credential is its one-time code: no token asked. */
    if (reject(s, conn, strobe__viewer_is_asset(url, method) || !strcmp(url, "/api/open"), &ret)) {
      rq->answered = 1;
      set_phase(s, conn, CONN_ANSWER);
      return (enum MHD_Result)ret;
    }
    set_phase(s, conn, CONN_BODY); /* still under the request's deadline */
    rq->checked = 1;
    return MHD_YES; /* the body, if any, comes in the next calls */
  }
  if (rq->answered) { /* refused already: discard whatever body follows */
    *upload_size = 0;
    return MHD_YES;
  }
  if (*upload_size) {
    size_t n = *upload_size;
    *upload_size = 0;
    if (rq->too_big) { /* answered 413 already: discard, up to 4x the bound */
      rq->len += n < s->desc.max_body_bytes ? n : s->desc.max_body_bytes;
      return rq->len > 4 * s->desc.max_body_bytes ? MHD_NO : MHD_YES;
    }
    if (n > s->desc.max_body_bytes - rq->len) {
      /* A body without Content-Length (chunked) grew past the bound: keep
       * nothing and answer 413 now, not at the body's end. */
      rq->too_big = 1;
      rq->len += n;
      free(rq->body);
      rq->body = NULL;
      rq->cap = 0;
      __atomic_fetch_add(&s->rejected_size, 1, __ATOMIC_RELAXED);
      return answer_early_413(conn) ? MHD_YES : MHD_NO;
    }
    if (rq->len + n > rq->cap) {
      size_t cap = rq->cap ? rq->cap : 1024;
      while (cap < rq->len + n) cap *= 2;
      if (cap > s->desc.max_body_bytes) cap = s->desc.max_body_bytes;
      char *p = realloc(rq->body, cap);
      if (!p) return MHD_NO;
      rq->body = p;
      rq->cap = cap;
    }
    memcpy(rq->body + rq->len, upload, n);
    rq->len += n;
    return MHD_YES;
  }
  if (rq->too_big) return MHD_NO; /* the 413 is out; the body's end closes the connection */
  rq->answered = 1;
  set_phase(s, conn, CONN_ANSWER);
  return (enum MHD_Result)route(s, conn, url, method, rq);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe) {
  (void)toe;
  set_phase(cls, conn, CONN_WAITING); /* the next request's deadline starts now */
  request *rq = *con_cls;
  if (!rq) return;
  free(rq->body);
  free(rq);
  *con_cls = NULL;
}

/* >>daemon */
static int listen_socket(strobe_server *s, int *fd_out, int *v6) {
  struct sockaddr_storage ss;
  memset(&ss, 0, sizeof ss);
  socklen_t len;
  struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
  struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
  if (inet_pton(AF_INET, s->bind_address, &a4->sin_addr) == 1) {
    a4->sin_family = AF_INET;
    a4->sin_port = htons(s->desc.port);
    len = sizeof *a4;
    *v6 = 0;
  } else if (inet_pton(AF_INET6, s->bind_address, &a6->sin6_addr) == 1) {
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons(s->desc.port);
    len = sizeof *a6;
    *v6 = 1;
  } else {
    return STROBE_EINVAL;
  }
  int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return STROBE_EIO;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (*v6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  if (bind(fd, (struct sockaddr *)&ss, len) != 0) {
    int e = errno;
    close(fd);
    return e == EADDRINUSE || e == EACCES ? STROBE_EBUSY : STROBE_EIO;
  }
  if (listen(fd, LISTEN_BACKLOG) != 0 || getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
    close(fd);
    return STROBE_EIO;
  }
  s->port = ntohs(*v6 ? a6->sin6_port : a4->sin_port);
  *fd_out = fd;
  return 0;
}

int strobe__http_start(strobe_server *s) {
  int fd, v6;
  int rc = listen_socket(s, &fd, &v6);
  if (rc) return rc;
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_ALLOW_SUSPEND_RESUME;
  flags |= MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES ? MHD_USE_EPOLL : MHD_USE_POLL;
  if (v6) flags |= MHD_USE_IPv6;
  /* libmicrohttpd keeps request headers in a per-connection pool that also
   * holds its read and write buffers: twice the header bound leaves room for
   * both while headers over the bound are refused (431). */
  size_t pool = s->desc.max_header_bytes * 2;
  /* libmicrohttpd refuses connections past its own limit before we see
   * them; ours (shed) closes the oldest waiting one instead, so its limit
   * leaves room for the connections accepted but not yet closed. */
  unsigned mhd_limit = s->desc.max_connections + SHED_HEADROOM;
  s->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s,
                               MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
                               MHD_OPTION_CONNECTION_LIMIT, mhd_limit,
                               MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
                               MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)s->desc.idle_timeout_s,
                               MHD_OPTION_CONNECTION_MEMORY_LIMIT, pool,
                               MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                               MHD_OPTION_END);
  if (!s->daemon) {
    close(fd);
    return STROBE_EIO;
  }
  s->reaper_wake_ms = UINT64_MAX;
  if (pthread_create(&s->reaper, NULL, reaper_main, s) != 0) {
    MHD_stop_daemon(s->daemon);
    s->daemon = NULL;
    return STROBE_EIO;
  }
  s->has_reaper = 1;
  return 0;
}

void strobe__http_stop(strobe_server *s) {
  if (s->has_reaper) {
    strobe__mutex_lock(&s->conns_lock);
    s->reaper_quit = 1;
    pthread_cond_signal(&s->conns_cond);
    strobe__mutex_unlock(&s->conns_lock);
    pthread_join(s->reaper, NULL);
    s->has_reaper = 0;
  }
  if (!s->daemon) return;
  strobe__streams_close_all(s);
  MHD_stop_daemon(s->daemon); /* joins its thread and closes every connection */
  s->daemon = NULL;
}
