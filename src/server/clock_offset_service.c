/*
 * clock_offset_service.c — clock offsets between hosts over the authenticated HTTP API
 * (docs/sessions.md §Across hosts, docs/server.md):
 *   GET  /api/clock         this host's boot id and its monotonic clock when
 *                           the request arrived (t1) and when it is answered (t2)
 *   POST /api/clock         {"url", "token", "rounds"?, "max_rtt_ms"?, "peer"?}: this
 *                           server samples the peer at url and keeps the sample
 *                           (strobe_clock_offset_add): every capture this
 *                           process finishes afterwards carries it
 * and strobe_clock_offset_measure (server.h), the NTP-style client: t0 when
 * the request leaves, t3 when the whole answer is in, on this host's clock;
 * the offset is ((t1 - t0) + (t2 - t3)) / 2 and the true offset lies within
 * half the round trip less the peer's own time, (t3 - t0 - (t2 - t1)) / 2, of
 * it. Of several round trips the one with the lowest round trip is kept.
 *
 * Owns: one connection per round trip, closed before it returns. Must never:
 * keep a sample from an answer it could not check (status, JSON, a boot id of
 * 32 hex digits, t1 <= t2, the peer's time inside the round trip), send the
 * token anywhere but the Authorization header of the URL it was given, or
 * wait longer than its timeout on a peer.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "platform/clock.h"
#include "server/server_internal.h"

#define CLOCK_REPLY_MAX 4096 /* bytes of a peer's answer, head and body */

static uint64_t host_now(void) {
  uint64_t now;
  (void)strobe_query_host_clock(NULL, &now);
  return now;
}

/* >>endpoint */
static const char *error_name(int rc) {
  switch (rc) {
    case STROBE_EIO: return "peer_unreachable";
    case STROBE_EPERM: return "peer_refused_token";
    case STROBE_EPEER: return "peer_reply";
    case STROBE_ELIMIT: return "peer_too_slow";
    default: return strobe__error_name(rc);
  }
}

int strobe__api_clock(strobe_server *s, struct MHD_Connection *conn, const char *method, const char *body, size_t len) {
  (void)s;
  if (!strcmp(method, MHD_HTTP_METHOD_GET)) {
    uint64_t t1 = host_now();
    char boot[33];
    if (strobe_query_host_clock(boot, NULL))
      return strobe__queue_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "no_boot_id",
                                 "this host names no boot: its clock cannot be compared with another's");
    uint64_t t2 = host_now();
    return strobe__queue_value(conn, MHD_HTTP_OK,
                               json_pack("{s:s,s:I,s:I,s:I,s:s}", "boot_id", boot, "recv_mono_ns", (json_int_t)t1,
                                         "reply_mono_ns", (json_int_t)t2, "pid", (json_int_t)getpid(),
                                         "strobe_version", strobe_version()));
  }
  if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
    return strobe__queue_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method_not_allowed", "GET or POST");
  json_error_t jerr;
  json_t *args = body && len ? json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr) : NULL;
  const char *url = NULL, *token = NULL, *peer = NULL;
  json_int_t rounds = 0, max_rtt_ms = 0;
  if (!args || json_unpack_ex(args, &jerr, JSON_STRICT, "{s:s,s:s,s?I,s?I,s?s}", "url", &url, "token", &token,
                              "rounds", &rounds, "max_rtt_ms", &max_rtt_ms, "peer", &peer) ||
      rounds < 0 || rounds > UINT32_MAX || max_rtt_ms < 0 || max_rtt_ms > UINT32_MAX) {
    json_decref(args);
    return strobe__queue_error(conn, MHD_HTTP_BAD_REQUEST, "bad_request",
                               "expected {\"url\": \"http://host:port\", \"token\": \"...\", \"rounds\"?: 1-64, "
                               "\"max_rtt_ms\"?: 1-60000, \"peer\"?: \"name\"}");
  }
  strobe_clock_offset_desc d = {url, token, (uint32_t)rounds, (uint32_t)max_rtt_ms, peer};
  strobe_clock_offset o;
  int rc = strobe_clock_offset_measure(&d, &o);
  json_decref(args);
  if (!rc) rc = strobe_clock_offset_add(&o);
  if (rc) {
    unsigned status = rc == STROBE_EINVAL ? MHD_HTTP_BAD_REQUEST : MHD_HTTP_BAD_GATEWAY;
    return strobe__queue_error(conn, status, error_name(rc), strobe__clock_offset_why(rc));
  }
  return strobe__queue_value(conn, MHD_HTTP_OK, strobe__clock_offset_json(&o));
}

json_t *strobe__clock_offset_json(const strobe_clock_offset *o) {
  return json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:i}", "peer", o->peer, "peer_boot_id", o->peer_boot_id, "offset_ns",
                   (json_int_t)o->offset_ns, "error_ns", (json_int_t)o->error_ns, "rtt_ns", (json_int_t)o->rtt_ns,
                   "at_mono_ns", (json_int_t)o->at_mono_ns, "rounds", (int)o->rounds);
}

const char *strobe__clock_offset_why(int rc) {
  switch (rc) {
    case STROBE_EINVAL: return "bad arguments: the URL must be http://host[:port], the token 16-512 visible "
                               "characters, rounds 1-64, max_rtt_ms 1-60000";
    case STROBE_EIO: return "the peer is unreachable: no connection to it";
    case STROBE_EPERM: return "the peer refused the token (401/403)";
    case STROBE_EPEER: return "the peer's answer is not a Strobe clock reply (status, JSON, boot id or times)";
    case STROBE_ELIMIT: return "no round trip came back within max_rtt_ms: its error bound would be too wide";
    default: return strobe_strerror(rc);
  }
}

/* >>client: one GET /api/clock on its own connection, timed. */
static int wait_fd(int fd, short ev, uint64_t deadline) {
  uint64_t now = strobe__mono_ns();
  if (now >= deadline) return -1;
  struct pollfd p = {fd, ev, 0};
  int rc;
  do rc = poll(&p, 1, (int)((deadline - now) / 1000000u) + 1);
  while (rc < 0 && errno == EINTR);
  return rc == 1 ? 0 : -1;
}

typedef struct round_trip {
  uint64_t t0, t1, t2, t3;
  char boot[33];
} round_trip;

static int is_hex32(const char *s) {
  if (strlen(s) != 32) return 0;
  for (int i = 0; i < 32; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
  return 1;
}

/* Checks an answer: 200, a JSON object with a boot id and the peer's two times (< 2^62 ns, t1 <= t2). */
static int parse_reply(char *reply, size_t n, round_trip *rt) {
  int status = 0;
  if (sscanf(reply, "HTTP/1.%*d %d", &status) != 1) return STROBE_EPEER;
  if (status == 401 || status == 403) return STROBE_EPERM;
  if (status != 200) return STROBE_EPEER;
  char *body = strstr(reply, "\r\n\r\n");
  if (!body) return STROBE_EPEER;
  body += 4;
  json_t *j = json_loadb(body, n - (size_t)(body - reply), JSON_REJECT_DUPLICATES, NULL);
  const char *boot = NULL;
  json_int_t t1 = -1, t2 = -1;
  int rc = STROBE_EPEER;
  if (j && !json_unpack(j, "{s:s,s:I,s:I}", "boot_id", &boot, "recv_mono_ns", &t1, "reply_mono_ns", &t2) &&
      is_hex32(boot) && t1 >= 0 && t2 >= t1 && t2 < ((json_int_t)1 << 62)) {
    memcpy(rt->boot, boot, 33);
    rt->t1 = (uint64_t)t1, rt->t2 = (uint64_t)t2;
    rc = 0;
  }
  json_decref(j);
  return rc;
}

static int one_round(const char *host, const char *port, const char *token, uint32_t max_rtt_ms, round_trip *rt) {
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
  if (getaddrinfo(host, port, &hints, &ai) != 0 || !ai) return STROBE_EIO;
  uint64_t deadline = strobe__mono_ns() + (uint64_t)max_rtt_ms * 1000000u + 1000000000u; /* + connecting */
  int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int rc = STROBE_EIO;
  char req[1024], reply[CLOCK_REPLY_MAX + 1];
  size_t got = 0;
  if (fd < 0) goto out;
  if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
    if (errno != EINPROGRESS || wait_fd(fd, POLLOUT, deadline)) goto out;
    int err = 0;
    socklen_t el = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err) goto out;
  }
  /* Connected: the round trip is the request and its answer, not the TCP handshake. */
  int hn = snprintf(req, sizeof req,
                    "GET /api/clock HTTP/1.1\r\nHost: %s:%s\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n",
                    host, port, token);
  if (hn <= 0 || (size_t)hn >= sizeof req) {
    rc = STROBE_EINVAL;
    goto out;
  }
  deadline = strobe__mono_ns() + (uint64_t)max_rtt_ms * 1000000u;
  rt->t0 = host_now();
  for (size_t off = 0; off < (size_t)hn;) {
    ssize_t w = send(fd, req + off, (size_t)hn - off, MSG_NOSIGNAL);
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && !wait_fd(fd, POLLOUT, deadline)) continue;
    if (w <= 0) goto out;
    off += (size_t)w;
  }
  for (;;) { /* to the end of the answer (Connection: close), at most CLOCK_REPLY_MAX bytes */
    if (got == CLOCK_REPLY_MAX) {
      rc = STROBE_EPEER;
      goto out;
    }
    ssize_t r = recv(fd, reply + got, CLOCK_REPLY_MAX - got, 0);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (wait_fd(fd, POLLIN, deadline)) {
        rc = STROBE_ELIMIT; /* connected, but no whole answer within max_rtt_ms: too slow to bound anything */
        goto out;
      }
      continue;
    }
    if (r < 0) goto out;
    if (r == 0) break;
    got += (size_t)r;
  }
  rt->t3 = host_now();
  reply[got] = 0;
  rc = got ? parse_reply(reply, got, rt) : STROBE_EPEER;
  /* The peer's time must fit inside the round trip, or its clock did not answer this request. */
  if (!rc && rt->t2 - rt->t1 > rt->t3 - rt->t0) rc = STROBE_EPEER;
out:
  if (fd >= 0) close(fd);
  freeaddrinfo(ai);
  explicit_bzero(req, sizeof req); /* it held the token */
  return rc;
}

int strobe_clock_offset_measure(const strobe_clock_offset_desc *d, strobe_clock_offset *out) {
  if (!d || !out || !d->token) return STROBE_EINVAL;
  uint32_t rounds = d->rounds ? d->rounds : 8, max_rtt_ms = d->max_rtt_ms ? d->max_rtt_ms : 1000;
  size_t tl = strlen(d->token);
  if (rounds > 64 || max_rtt_ms > 60000 || tl < STROBE_SERVER_TOKEN_MIN || tl > 512) return STROBE_EINVAL;
  for (size_t i = 0; i < tl; i++)
    if (d->token[i] <= ' ' || d->token[i] > '~') return STROBE_EINVAL;
  if (d->peer && strlen(d->peer) >= sizeof out->peer) return STROBE_EINVAL;
  char host[256], port[8], path[512];
  if (strobe__otlp_parse_endpoint(d->url, host, sizeof host, port, sizeof port, path, sizeof path)) return STROBE_EINVAL;
  round_trip best = {0};
  uint64_t best_rtt = UINT64_MAX;
  int last = 0, kept = 0;
  for (uint32_t i = 0; i < rounds; i++) {
    round_trip rt = {0};
    int rc = one_round(host, port, d->token, max_rtt_ms, &rt);
    if (rc == STROBE_EPERM || rc == STROBE_EPEER || rc == STROBE_EINVAL) return rc; /* asking again changes nothing */
    if (rc) {
      last = rc;
      continue;
    }
    uint64_t rtt = (rt.t3 - rt.t0) - (rt.t2 - rt.t1);
    if (rtt > (uint64_t)max_rtt_ms * 1000000u) {
      last = STROBE_ELIMIT;
      continue;
    }
    if (kept && strcmp(rt.boot, best.boot)) return STROBE_EPEER; /* two hosts answered at one URL */
    if (rtt < best_rtt) best = rt, best_rtt = rtt;
    kept++;
  }
  if (!kept) return last ? last : STROBE_EIO;
  strobe_clock_offset o;
  memset(&o, 0, sizeof o);
  if (d->peer) snprintf(o.peer, sizeof o.peer, "%s", d->peer);
  else snprintf(o.peer, sizeof o.peer, "%.56s:%.6s", host, port); /* a longer host name is cut */
  memcpy(o.peer_boot_id, best.boot, 33);
  /* In signed arithmetic: the peer's clock may be far from ours (below 2^62 ns each, checked). */
  int64_t a = (int64_t)best.t1 - (int64_t)best.t0, b = (int64_t)best.t2 - (int64_t)best.t3;
  o.offset_ns = a / 2 + b / 2 + (a % 2 + b % 2) / 2;
  o.rtt_ns = best_rtt ? best_rtt : 1;
  o.error_ns = (o.rtt_ns + 1) / 2;
  o.at_mono_ns = best.t0 + (best.t3 - best.t0) / 2;
  o.rounds = rounds;
  *out = o;
  return 0;
}
