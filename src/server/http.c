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
 * Contents: >>responses >>checks >>routes >>daemon
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "server/server_internal.h"
#include "server/viewer_internal.h"

#define LISTEN_BACKLOG 512

/* >>responses */
struct MHD_Response *strobe__json_response(char *body, size_t len) {
  struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
  if (!r) {
    free(body);
    return NULL;
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
  MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
  return r;
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

/* >>routes */
typedef struct request {
  int checked;   /* the first call (headers) has run */
  int answered;  /* a response was queued before the body was read */
  int too_big;
  char *body;
  size_t len, cap;
} request;

static int route_mcp(strobe_server *s, struct MHD_Connection *conn, const char *method, request *rq) {
  strobe__mcp_request mr = {MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Mcp-Session-Id"),
                            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "MCP-Protocol-Version"),
                            strobe__mono_ms()};
  strobe__mcp_response resp;
  if (!strcmp(method, MHD_HTTP_METHOD_POST)) {
    const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    if (!ct || strncasecmp(ct, "application/json", 16) != 0 || (ct[16] && ct[16] != ';' && ct[16] != ' '))
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
  if (resp.session_id[0]) MHD_add_response_header(r, "Mcp-Session-Id", resp.session_id);
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
    if (reject(s, conn, strobe__viewer_is_asset(url, method), &ret)) {
      rq->answered = 1;
      return (enum MHD_Result)ret;
    }
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
    if (rq->too_big || n > s->desc.max_body_bytes - rq->len) {
      /* A chunked body grew past the bound: keep nothing, answer 413 at the
       * end; a client that goes on for 4x the bound is cut off. */
      rq->too_big = 1;
      rq->len += n < s->desc.max_body_bytes ? n : s->desc.max_body_bytes;
      free(rq->body);
      rq->body = NULL;
      rq->cap = 0;
      return rq->len > 4 * s->desc.max_body_bytes ? MHD_NO : MHD_YES;
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
  if (rq->too_big) {
    __atomic_fetch_add(&s->rejected_size, 1, __ATOMIC_RELAXED);
    rq->answered = 1;
    return (enum MHD_Result)strobe__queue_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, "payload_too_large",
                                                "the request body is larger than max_body_bytes");
  }
  rq->answered = 1;
  return (enum MHD_Result)route(s, conn, url, method, rq);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe) {
  (void)cls, (void)conn, (void)toe;
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
  s->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s,
                               MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
                               MHD_OPTION_CONNECTION_LIMIT, (unsigned)s->desc.max_connections,
                               MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)s->desc.idle_timeout_s,
                               MHD_OPTION_CONNECTION_MEMORY_LIMIT, pool,
                               MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                               MHD_OPTION_END);
  if (!s->daemon) {
    close(fd);
    return STROBE_EIO;
  }
  return 0;
}

void strobe__http_stop(strobe_server *s) {
  if (!s->daemon) return;
  strobe__streams_close_all(s);
  MHD_stop_daemon(s->daemon); /* joins its thread and closes every connection */
  s->daemon = NULL;
}
