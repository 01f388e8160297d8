/*
 * http_client.c — the loopback HTTP/1.1 client behind `strobe mcp` and the
 * server tests (http_client.h).
 *
 * Owns: one socket per request, the response buffers.
 * Must never: talk to anything but a loopback address (the URL parser
 * refuses other hosts before a socket exists), wait past the caller's
 * deadline, or grow a body past max_body.
 */
#include "http_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_HEAD (64u << 10) /* response header block */

int cli_http_parse_url(const char *url, cli_http_url *out, const char **why) {
  memset(out, 0, sizeof *out);
  if (strncmp(url, "http://", 7) != 0) {
    *why = "only http:// URLs are supported";
    return -1;
  }
  const char *h = url + 7;
  const char *end;
  if (*h == '[') {
    end = strchr(h, ']');
    if (!end) {
      *why = "unterminated [IPv6] host";
      return -1;
    }
    end++;
  } else {
    end = h + strcspn(h, ":/");
  }
  size_t hl = (size_t)(end - h);
  if (hl >= sizeof out->host) {
    *why = "host too long";
    return -1;
  }
  memcpy(out->host, h, hl);
  if (strcasecmp(out->host, "127.0.0.1") != 0 && strcasecmp(out->host, "localhost") != 0 &&
      strcmp(out->host, "[::1]") != 0) {
    *why = "only loopback hosts are allowed (127.0.0.1, localhost, [::1])";
    return -1;
  }
  out->port = 80;
  if (*end == ':') {
    char *e;
    unsigned long p = strtoul(end + 1, &e, 10);
    if (e == end + 1 || p == 0 || p > 65535 || (*e && *e != '/')) {
      *why = "bad port";
      return -1;
    }
    out->port = (uint16_t)p;
    end = e;
  }
  if (!*end) {
    strcpy(out->path, "/");
  } else {
    if (strlen(end) >= sizeof out->path) {
      *why = "path too long";
      return -1;
    }
    strcpy(out->path, end);
  }
  return 0;
}

int cli_http_connect(const cli_http_url *u) {
  int v6 = u->host[0] == '[';
  int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int rc;
  if (v6) {
    struct sockaddr_in6 a = {0};
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(u->port);
    a.sin6_addr = in6addr_loopback;
    rc = connect(fd, (struct sockaddr *)&a, sizeof a);
  } else {
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons(u->port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    rc = connect(fd, (struct sockaddr *)&a, sizeof a);
  }
  if (rc != 0) {
    close(fd);
    return -1;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int send_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n) {
    ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    c += k;
    n -= (size_t)k;
  }
  return 0;
}

typedef struct rbuf {
  char *data;
  size_t len, cap;
} rbuf;

static int rbuf_put(rbuf *b, const char *p, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n + 1) cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) return -1;
    b->data = d;
    b->cap = cap;
  }
  memcpy(b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = 0;
  return 0;
}

/* Receives more raw bytes; 1 = got some, 0 = EOF, -1 = error, -2 = deadline. */
static int fill(int fd, rbuf *raw, int64_t deadline) {
  char tmp[16384];
  for (;;) {
    int64_t left = deadline - now_ms();
    if (left <= 0) return -2;
    struct pollfd p = {fd, POLLIN, 0};
    int r = poll(&p, 1, (int)left);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) return -2;
    ssize_t k = recv(fd, tmp, sizeof tmp, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return errno == ECONNRESET ? 0 : -1;
    if (k == 0) return 0;
    return rbuf_put(raw, tmp, (size_t)k) ? -1 : 1;
  }
}

int cli_http_header(const cli_http_response *r, const char *name, char *buf, size_t n) {
  if (!r->headers) return 0;
  size_t nl = strlen(name);
  for (const char *line = r->headers; *line;) {
    const char *eol = strstr(line, "\r\n");
    if (!eol) eol = line + strlen(line);
    if ((size_t)(eol - line) > nl && !strncasecmp(line, name, nl) && line[nl] == ':') {
      const char *v = line + nl + 1;
      while (v < eol && (*v == ' ' || *v == '\t')) v++;
      size_t vl = (size_t)(eol - v);
      while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t')) vl--;
      if (n) {
        size_t c = vl < n - 1 ? vl : n - 1;
        memcpy(buf, v, c);
        buf[c] = 0;
      }
      return 1;
    }
    line = *eol ? eol + 2 : eol;
  }
  return 0;
}

void cli_http_response_free(cli_http_response *r) {
  free(r->headers);
  free(r->body);
  memset(r, 0, sizeof *r);
}

static int has_header_line(const char *block, const char *name) {
  size_t nl = strlen(name);
  for (const char *line = block; line && *line;) {
    if (!strncasecmp(line, name, nl) && line[nl] == ':') return 1;
    line = strstr(line, "\r\n");
    if (line) line += 2;
  }
  return 0;
}

int cli_http_request(const cli_http_url *u, const char *method, const char *path, const char *extra_headers,
                     const void *body, size_t body_len, int timeout_ms, size_t max_body, cli_http_response *out,
                     const char **why) {
  memset(out, 0, sizeof *out);
  int64_t deadline = now_ms() + timeout_ms;
  int fd = cli_http_connect(u);
  if (fd < 0) {
    *why = "cannot connect";
    return -1;
  }
  rbuf req = {0};
  char line[1400];
  snprintf(line, sizeof line, "%s %s HTTP/1.1\r\n", method, path ? path : u->path);
  int bad = rbuf_put(&req, line, strlen(line));
  if (!extra_headers || !has_header_line(extra_headers, "Host")) {
    snprintf(line, sizeof line, "Host: %s:%u\r\n", u->host, (unsigned)u->port);
    bad |= rbuf_put(&req, line, strlen(line));
  }
  if (extra_headers) bad |= rbuf_put(&req, extra_headers, strlen(extra_headers));
  if (body || !strcmp(method, "POST") || !strcmp(method, "PUT")) {
    snprintf(line, sizeof line, "Content-Length: %zu\r\n", body_len);
    bad |= rbuf_put(&req, line, strlen(line));
  }
  bad |= rbuf_put(&req, "Connection: close\r\n\r\n", 21);
  if (bad || send_all(fd, req.data, req.len) || (body_len && send_all(fd, body, body_len))) {
    free(req.data);
    close(fd);
    *why = "cannot send the request";
    return -1;
  }
  free(req.data);

  rbuf raw = {0}, dec = {0};
  int rc = 0;
  size_t head_end = 0;
  while (!head_end) {
    char *p = raw.data ? strstr(raw.data, "\r\n\r\n") : NULL;
    if (p) {
      head_end = (size_t)(p - raw.data) + 4;
      break;
    }
    if (raw.len > MAX_HEAD) {
      *why = "response head too large";
      rc = -1;
      break;
    }
    int f = fill(fd, &raw, deadline);
    if (f <= 0) {
      *why = f == -2 ? "timed out waiting for the response" : "connection closed before a response";
      rc = -1;
      break;
    }
  }
  if (rc == 0) {
    if (sscanf(raw.data, "HTTP/1.%*d %d", &out->status) != 1) {
      *why = "not an HTTP response";
      rc = -1;
    }
  }
  if (rc == 0) {
    const char *eol = strstr(raw.data, "\r\n");
    size_t hl = head_end - (size_t)(eol + 2 - raw.data);
    out->headers = malloc(hl + 1);
    if (!out->headers) rc = -1;
    if (out->headers) {
      memcpy(out->headers, eol + 2, hl);
      out->headers[hl] = 0;
    }
  }
  if (rc == 0) {
    char v[64];
    int chunked = cli_http_header(out, "Transfer-Encoding", v, sizeof v) && strcasestr(v, "chunked");
    long long clen = cli_http_header(out, "Content-Length", v, sizeof v) ? atoll(v) : -1;
    int no_body = !strcmp(method, "HEAD") || out->status == 204 || out->status == 304 || out->status < 200;
    size_t pos = head_end;
    int done = no_body || clen == 0;
    rbuf_put(&dec, "", 0);
    while (!done) {
      /* decode what has arrived */
      if (chunked) {
        for (;;) {
          char *crlf = raw.len > pos ? strstr(raw.data + pos, "\r\n") : NULL;
          if (!crlf) break;
          unsigned long long size = strtoull(raw.data + pos, NULL, 16);
          size_t start = (size_t)(crlf + 2 - raw.data);
          if (size == 0) {
            done = 1;
            break;
          }
          if (raw.len < start + size + 2) break;
          if (rbuf_put(&dec, raw.data + start, (size_t)size)) {
            rc = -1;
            done = 1;
            break;
          }
          pos = start + (size_t)size + 2;
        }
      } else {
        if (raw.len > pos) {
          rbuf_put(&dec, raw.data + pos, raw.len - pos);
          pos = raw.len;
        }
        if (clen >= 0 && dec.len >= (size_t)clen) done = 1;
      }
      if (done) break;
      if (dec.len >= max_body) {
        out->truncated = 1;
        break;
      }
      /* Compact consumed raw bytes so a long stream does not grow `raw`. */
      if (pos > (1u << 20)) {
        memmove(raw.data, raw.data + pos, raw.len - pos);
        raw.len -= pos;
        raw.data[raw.len] = 0;
        head_end = 0;
        pos = 0;
      }
      int f = fill(fd, &raw, deadline);
      if (f == 0) {
        if (chunked || clen >= 0) out->truncated = 1; /* ended early */
        break;
      }
      if (f < 0) {
        out->truncated = 1;
        break;
      }
    }
    if (dec.len > max_body) dec.len = max_body;
    out->body = dec.data ? dec.data : calloc(1, 1);
    out->body_len = dec.len;
    if (out->body) out->body[out->body_len] = 0;
    dec.data = NULL;
  }
  free(raw.data);
  free(dec.data);
  close(fd);
  if (rc) cli_http_response_free(out);
  return rc;
}
