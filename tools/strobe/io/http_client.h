/*
 * http_client.h — a minimal HTTP/1.1 client for loopback servers, used by
 * `strobe mcp` (the stdio bridge) and by the server tests. One request per
 * connection; only http:// URLs whose host is 127.0.0.1, localhost or
 * [::1]; bodies with Content-Length, chunked, or read to EOF.
 *
 * Nothing here is library API (cli_ prefix, like the rest of the tool).
 */
#ifndef STROBE_CLI_HTTP_CLIENT_H
#define STROBE_CLI_HTTP_CLIENT_H

#include <stddef.h>
#include <stdint.h>

typedef struct cli_http_url {
  char host[64];   /* "127.0.0.1", "localhost" or "[::1]" as written */
  uint16_t port;   /* 80 when the URL has none */
  char path[1024]; /* "/mcp"; "/" when the URL has none */
} cli_http_url;

/* Parses a loopback http:// URL. Returns 0, or -1 with *why set (static text). */
int cli_http_parse_url(const char *url, cli_http_url *out, const char **why);

typedef struct cli_http_response {
  int status;       /* e.g. 200; 0 when no status line arrived */
  char *headers;    /* the raw header lines, NUL-terminated (malloc) */
  char *body;       /* the decoded body, NUL-terminated (malloc); never NULL after success */
  size_t body_len;
  int truncated;    /* stopped at max_body bytes or at the deadline before the body ended */
} cli_http_response;

/* Sends one request on a new connection and reads the response until the
 * body ends, max_body decoded bytes arrived, or timeout_ms passed (then
 * `truncated` is set and what arrived is kept). extra_headers is a block of
 * "Name: value\r\n" lines or NULL; a "Host:" line there replaces the default.
 * Returns 0, or -1 with *why set when the connection or the response head
 * failed. */
int cli_http_request(const cli_http_url *u, const char *method, const char *path, const char *extra_headers,
                     const void *body, size_t body_len, int timeout_ms, size_t max_body, cli_http_response *out,
                     const char **why);

/* Copies the value of header `name` (case-insensitive) into buf. Returns 1 when present. */
int cli_http_header(const cli_http_response *r, const char *name, char *buf, size_t n);
void cli_http_response_free(cli_http_response *r);

/* Opens a TCP connection to the URL's host and port (for tests that hold
 * connections open). Returns the socket or -1. */
int cli_http_connect(const cli_http_url *u);

#endif
