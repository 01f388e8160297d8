/*
 * cmd_mcp.c — `strobe mcp --url URL --token-file FILE`: a stdio bridge for
 * MCP clients that only speak stdio. It reads newline-delimited JSON-RPC
 * messages on stdin, POSTs each to the application's Streamable HTTP
 * endpoint with the bearer token, and writes each JSON response as one line
 * on stdout. It carries the Mcp-Session-Id (and the negotiated
 * MCP-Protocol-Version) from the initialize response onto later requests,
 * answers nothing for 202, ends the MCP session (HTTP DELETE) and exits 0
 * when stdin closes.
 *
 * Owns: the bridge loop and its one MCP session.
 * Must never: write anything but protocol messages to stdout (logs go to
 * stderr), print the token, or leave a request that had an id unanswered:
 * an HTTP failure becomes a JSON-RPC error for that id.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "io/http_client.h"
#include "platform/io.h"

#define CMD "mcp"
#define MAX_RESPONSE (256u << 20) /* a report is at most a few MiB; this only bounds a runaway server */
#define TOKEN_MAX CLI_TOKEN_MAX

static void help(void) {
  printf(
      "usage: strobe mcp --url URL [--token-file FILE] [--timeout-ms N]\n"
      "\n"
      "Bridges an MCP client that speaks stdio to a Strobe-instrumented application's\n"
      "MCP endpoint (Streamable HTTP): one JSON-RPC message per line on stdin, one\n"
      "response per line on stdout, logs on stderr. Exits when stdin closes.\n"
      "\n"
      "  --url URL          the endpoint, e.g. http://127.0.0.1:PORT/mcp (loopback only)\n"
      "  --token-file FILE  file holding the bearer token (the server prints its path);\n"
      "                     default: the STROBE_TOKEN environment variable\n"
      "  --timeout-ms N     per-request timeout, default 30000\n");
}

/* >>json: just enough to find a top-level member's raw value. */
static const char *skip_ws(const char *p, const char *e) {
  while (p < e && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) p++;
  return p;
}

static const char *skip_string(const char *p, const char *e) { /* p at the opening quote */
  for (p++; p < e; p++) {
    if (*p == '\\') {
      p++;
      continue;
    }
    if (*p == '"') return p + 1;
  }
  return NULL;
}

static const char *skip_value(const char *p, const char *e, int depth) {
  p = skip_ws(p, e);
  if (p >= e || depth > 64) return NULL;
  if (*p == '"') return skip_string(p, e);
  if (*p == '{' || *p == '[') {
    char close = *p == '{' ? '}' : ']';
    p = skip_ws(p + 1, e);
    if (p < e && *p == close) return p + 1;
    for (;;) {
      if (close == '}') {
        if (p >= e || *p != '"' || !(p = skip_string(p, e))) return NULL;
        p = skip_ws(p, e);
        if (p >= e || *p != ':') return NULL;
        p++;
      }
      if (!(p = skip_value(p, e, depth + 1))) return NULL;
      p = skip_ws(p, e);
      if (p < e && *p == ',') {
        p = skip_ws(p + 1, e);
        continue;
      }
      return p < e && *p == close ? p + 1 : NULL;
    }
  }
  while (p < e && !strchr(",}] \t\r\n", *p)) p++; /* number or literal */
  return p;
}

/* The raw text of top-level member `key` of the object in [s, e), or 0. */
static size_t find_member(const char *s, const char *e, const char *key, const char **val) {
  const char *p = skip_ws(s, e);
  if (p >= e || *p != '{') return 0;
  p = skip_ws(p + 1, e);
  size_t kl = strlen(key);
  while (p < e && *p == '"') {
    const char *k = p + 1;
    const char *ke = skip_string(p, e);
    if (!ke) return 0;
    p = skip_ws(ke, e);
    if (p >= e || *p != ':') return 0;
    const char *v = skip_ws(p + 1, e);
    const char *ve = skip_value(v, e, 0);
    if (!ve) return 0;
    if ((size_t)(ke - 1 - k) == kl && !memcmp(k, key, kl)) {
      *val = v;
      return (size_t)(ve - v);
    }
    p = skip_ws(ve, e);
    if (p < e && *p == ',') p = skip_ws(p + 1, e);
  }
  return 0;
}

/* >>bridge */
static void write_line(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] != '\n' && s[i] != '\r') fputc(s[i], stdout); /* JSON needs no raw newline */
  fputc('\n', stdout);
  fflush(stdout);
}

static void reply_error(const char *id, size_t idlen, int code, const char *message) {
  if (!idlen) return; /* a notification: nobody waits for an answer */
  char buf[1024];
  int n = snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%.*s,\"error\":{\"code\":%d,\"message\":\"%s\"}}",
                   (int)idlen, id, code, message);
  if (n > 0 && (size_t)n < sizeof buf) write_line(buf, (size_t)n);
}

/* Reads the token file; 0, -1 when unreadable or empty, or
 * STROBE__OPEN_NOT_REGULAR for a FIFO, device or directory (never waited on). */
int cli_read_token(const char *path, char out[CLI_TOKEN_MAX + 1]) {
  int fd = strobe__open_regular(path);
  if (fd < 0) return fd == STROBE__OPEN_NOT_REGULAR ? fd : -1;
  FILE *f = fdopen(fd, "r");
  if (!f) {
    close(fd);
    return -1;
  }
  size_t n = fread(out, 1, TOKEN_MAX, f);
  fclose(f);
  out[n] = 0;
  while (n && (out[n - 1] == '\n' || out[n - 1] == '\r' || out[n - 1] == ' ')) out[--n] = 0;
  return n ? 0 : -1;
}

int cmd_mcp(int argc, char **argv) {
  static const struct option opts[] = {{"url", required_argument, NULL, 'u'},
                                       {"token-file", required_argument, NULL, 't'},
                                       {"timeout-ms", required_argument, NULL, 'T'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  const char *url = NULL, *token_file = NULL;
  uint64_t timeout = 30000;
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
    switch (c) {
      case 'u': url = optarg; break;
      case 't': token_file = optarg; break;
      case 'T':
        if (cli_parse_u64(optarg, &timeout) || timeout == 0 || timeout > 3600000)
          return cli_usage_error(CMD, "--timeout-ms takes 1..3600000");
        break;
      case 'h': help(); return CLI_OK;
      default: return cli_bad_option(CMD, argv, optind);
    }
  }
  if (optind < argc) return cli_usage_error(CMD, "unexpected argument '%s'", argv[optind]);
  if (!url) return cli_usage_error(CMD, "--url is required");
  cli_http_url u;
  const char *why;
  if (cli_http_parse_url(url, &u, &why)) return cli_usage_error(CMD, "bad --url: %s", why);
  char token[TOKEN_MAX + 1];
  if (token_file) {
    int trc = cli_read_token(token_file, token);
    if (trc == STROBE__OPEN_NOT_REGULAR) return cli_refuse_not_regular(CMD, token_file, "the token file must be a regular file");
    if (trc) {
      cli_error(CMD, "cannot read a token from %s", token_file);
      return CLI_FAIL;
    }
  } else {
    const char *env = getenv("STROBE_TOKEN");
    if (!env || !*env || strlen(env) > TOKEN_MAX) return cli_usage_error(CMD, "--token-file (or STROBE_TOKEN) is required");
    strcpy(token, env);
  }
  signal(SIGPIPE, SIG_IGN);

  char session[256] = "", version[32] = "";
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  size_t hcap = strlen(token) + 512;
  char *headers = malloc(hcap);
  if (!headers) return CLI_FAIL;
  while ((n = getline(&line, &cap, stdin)) >= 0) {
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
    if (n == 0) continue;
    const char *id = NULL;
    size_t idlen = find_member(line, line + n, "id", &id);
    const char *method = NULL;
    size_t mlen = find_member(line, line + n, "method", &method);
    int is_init = mlen == 12 && !memcmp(method, "\"initialize\"", 12);
    snprintf(headers, hcap,
             "Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
             "Accept: application/json, text/event-stream\r\n%s%s%s%s%s%s",
             token, session[0] && !is_init ? "Mcp-Session-Id: " : "", !is_init ? session : "",
             session[0] && !is_init ? "\r\n" : "", version[0] ? "MCP-Protocol-Version: " : "", version,
             version[0] ? "\r\n" : "");
    cli_http_response r;
    if (cli_http_request(&u, "POST", NULL, headers, line, (size_t)n, (int)timeout, MAX_RESPONSE, &r, &why)) {
      cli_error(CMD, "%s: %s", url, why);
      reply_error(id, idlen, -32000, "the application's MCP endpoint cannot be reached");
      continue;
    }
    char sid[256];
    if (cli_http_header(&r, "Mcp-Session-Id", sid, sizeof sid)) strcpy(session, sid);
    if (r.status == 200 && r.body_len) {
      if (is_init) { /* the negotiated version goes on every later request */
        const char *res, *pv;
        size_t rl = find_member(r.body, r.body + r.body_len, "result", &res);
        size_t pl = rl ? find_member(res, res + rl, "protocolVersion", &pv) : 0;
        if (pl >= 2 && pl - 2 < sizeof version) {
          memcpy(version, pv + 1, pl - 2);
          version[pl - 2] = 0;
        }
      }
      write_line(r.body, r.body_len);
    } else if (r.status == 202 || r.status == 204) {
      /* a notification or a response was accepted: nothing to relay */
    } else {
      cli_error(CMD, "HTTP %d from %s", r.status, url);
      const char *rid;
      if (r.body_len && find_member(r.body, r.body + r.body_len, "jsonrpc", &rid) &&
          find_member(r.body, r.body + r.body_len, "id", &rid))
        write_line(r.body, r.body_len); /* the server's own JSON-RPC error, for this id */
      else {
        char msg[96];
        snprintf(msg, sizeof msg, "HTTP %d from the application's MCP endpoint%s", r.status,
                 r.status == 401 ? " (wrong or missing token)" : r.status == 404 ? " (MCP session expired)" : "");
        reply_error(id, idlen, -32000, msg);
      }
      if (r.status == 404) session[0] = 0; /* expired: the client must initialize again */
    }
    cli_http_response_free(&r);
  }
  free(line);
  if (session[0]) { /* end our MCP session: its profiling sessions are cancelled */
    snprintf(headers, hcap, "Authorization: Bearer %s\r\nMcp-Session-Id: %s\r\n", token, session);
    cli_http_response r;
    if (cli_http_request(&u, "DELETE", NULL, headers, NULL, 0, 5000, 4096, &r, &why) == 0) cli_http_response_free(&r);
  }
  memset(token, 0, sizeof token);
  memset(headers, 0, hcap);
  free(headers);
  return CLI_OK;
}
