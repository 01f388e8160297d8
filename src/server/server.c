/*
 * server.c — libstrobe_server's lifecycle: resolves the desc's defaults in
 * one place, obtains the bearer token (desc, $STROBE_TOKEN, or generated and
 * written to a 0600 file), starts and stops the HTTP side, and implements
 * the run-time permission API (Observe scope, MCP switch, per-tool
 * permission) with the cancellation rule of docs/server.md §Permissions and
 * ownership.
 *
 * Owns: the token and its file, the permission state, the server's
 * collector reference, the viewer's owner id.
 * Must never: print or log the token (only the file's path), leave a token
 * file or a running thread behind on a failed start, or revive a cancelled
 * session when a permission is granted again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "server/server_internal.h"
#include "server/viewer_internal.h"

#define DEFAULT_BIND "127.0.0.1"
#define DEFAULT_MAX_BODY ((size_t)1 << 20)       /* 1 MiB: a JSON-RPC request is a few hundred bytes */
#define MAX_MAX_BODY ((size_t)64 << 20)
#define DEFAULT_MAX_HEADER ((size_t)16 << 10)    /* 16 KiB: browsers and the SDK send well under 2 KiB */
#define MIN_MAX_HEADER ((size_t)4 << 10)
#define MAX_MAX_HEADER ((size_t)1 << 20)
#define DEFAULT_MAX_CONNECTIONS 512u
#define MAX_MAX_CONNECTIONS 4096u
#define DEFAULT_IDLE_S 30u
#define DEFAULT_REQUEST_TIMEOUT_S 10u            /* a request on loopback takes milliseconds */
#define MAX_REQUEST_TIMEOUT_S 3600u
#define DEFAULT_MCP_IDLE_S 120u                  /* agents pause between calls, but an abandoned client
                                                    must not hold profiling slots for long */
#define DEFAULT_MAX_MCP_SESSIONS 64u
#define MAX_MAX_MCP_SESSIONS 1024u
#define DEFAULT_MAX_STREAMS 2u
#define DEFAULT_PRODUCER_RATE 100000u   /* spans per second: ~25x the demo's audio lane, far below the drain's pace */
#define MAX_PRODUCER_RATE 10000000u
#define DEFAULT_OTLP_INTERVAL_MS 1000u
#define DEFAULT_OTLP_QUEUE 4096u
#define MAX_MAX_STREAMS 4u                       /* leaves the other event consumers to recorders */
#define DEFAULT_STREAM_QUEUE ((size_t)8 << 20)

/* >>owners */
uint64_t strobe__random_owner(void) {
  uint64_t v = 0;
  while (v == 0)
    if (strobe__random(&v, sizeof v)) v = strobe__mono_ms() * 0x9e3779b97f4a7c15ull; /* not reached on Linux */
  return v;
}

/* >>token */
static int valid_token(const char *t, size_t n) {
  if (n < STROBE_SERVER_TOKEN_MIN || n > STROBE_SERVER_TOKEN_MAX) return 0;
  for (size_t i = 0; i < n; i++)
    if (t[i] < 0x21 || t[i] > 0x7e) return 0;
  return 1;
}

static char *default_token_path(void) {
  const char *dir = getenv("XDG_RUNTIME_DIR");
  if (!dir || dir[0] != '/') dir = "/tmp";
  size_t n = strlen(dir) + 48;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/strobe-%ld.token", dir, (long)getpid());
  return p;
}

/* Writes the token to `path` with mode 0600, never following a symlink
 * planted there (in /tmp a stale or hostile file is replaced, not reused). */
static int write_token_file(const char *path, const char *token, size_t len) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST) {
    struct stat st;
    if (lstat(path, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) || st.st_uid != geteuid())
      return STROBE_EIO;
    if (unlink(path) != 0) return STROBE_EIO;
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  }
  if (fd < 0) return STROBE_EIO;
  int rc = 0;
  if (fchmod(fd, 0600) != 0) rc = STROBE_EIO;
  const char *p = token;
  size_t left = len;
  while (!rc && left) {
    ssize_t k = write(fd, p, left);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      rc = STROBE_EIO;
      break;
    }
    p += k;
    left -= (size_t)k;
  }
  if (!rc && write(fd, "\n", 1) != 1) rc = STROBE_EIO;
  if (close(fd) != 0) rc = STROBE_EIO;
  if (rc) unlink(path);
  return rc;
}

/* >>desc */
static int copy_list(const char *const *in, char **out, size_t *n) {
  *n = 0;
  if (!in) return 0;
  for (size_t i = 0; in[i] && *n < STROBE_SERVER_MAX_ORIGINS; i++) {
    size_t len = strlen(in[i]);
    if (len == 0 || len > 255) return STROBE_EINVAL;
    out[*n] = strdup(in[i]);
    if (!out[*n]) return STROBE_ENOMEM;
    (*n)++;
  }
  return 0;
}

static int resolve_desc(strobe_server *s, const strobe_server_desc *in) {
  strobe_server_desc d = in ? *in : (strobe_server_desc){0};
  const char *bind = d.bind_address ? d.bind_address : DEFAULT_BIND;
  unsigned char addr[16];
  if (strlen(bind) >= sizeof s->bind_address ||
      (inet_pton(AF_INET, bind, addr) != 1 && inet_pton(AF_INET6, bind, addr) != 1))
    return STROBE_EINVAL;
  strcpy(s->bind_address, bind);
  d.bind_address = s->bind_address;
  if (!d.max_body_bytes) d.max_body_bytes = DEFAULT_MAX_BODY;
  if (!d.max_header_bytes) d.max_header_bytes = DEFAULT_MAX_HEADER;
  if (!d.max_connections) d.max_connections = DEFAULT_MAX_CONNECTIONS;
  if (!d.idle_timeout_s) d.idle_timeout_s = DEFAULT_IDLE_S;
  if (!d.request_timeout_s) d.request_timeout_s = DEFAULT_REQUEST_TIMEOUT_S;
  if (!d.mcp_idle_timeout_s) d.mcp_idle_timeout_s = DEFAULT_MCP_IDLE_S;
  if (!d.max_mcp_sessions) d.max_mcp_sessions = DEFAULT_MAX_MCP_SESSIONS;
  if (!d.max_streams) d.max_streams = DEFAULT_MAX_STREAMS;
  if (!d.stream_queue_bytes) d.stream_queue_bytes = DEFAULT_STREAM_QUEUE;
  if (!d.tools) d.tools = STROBE_TOOL_ALL;
  if (!d.producer_spans_per_second) d.producer_spans_per_second = DEFAULT_PRODUCER_RATE;
  if (!d.otlp_interval_ms) d.otlp_interval_ms = DEFAULT_OTLP_INTERVAL_MS;
  if (!d.otlp_queue_max) d.otlp_queue_max = DEFAULT_OTLP_QUEUE;
  if (d.otlp_interval_ms < 10 || d.otlp_interval_ms > 60000 || d.otlp_queue_max > 1048576u) return STROBE_EINVAL;
  if (d.otlp_endpoint) {
    char h[256], p[8], path[512];
    if (strlen(d.otlp_endpoint) >= sizeof s->otlp_endpoint ||
        strobe__otlp_parse_endpoint(d.otlp_endpoint, h, sizeof h, p, sizeof p, path, sizeof path))
      return STROBE_EINVAL;
    strcpy(s->otlp_endpoint, d.otlp_endpoint);
    d.otlp_endpoint = s->otlp_endpoint;
  }
  if (d.otlp_service) {
    size_t n = strlen(d.otlp_service);
    if (n < 1 || n > 64 || strspn(d.otlp_service, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != n)
      return STROBE_EINVAL;
    strcpy(s->otlp_service, d.otlp_service);
    d.otlp_service = s->otlp_service;
  }
  if (d.max_body_bytes > MAX_MAX_BODY || d.max_header_bytes < MIN_MAX_HEADER || d.max_header_bytes > MAX_MAX_HEADER ||
      d.max_connections > MAX_MAX_CONNECTIONS || d.max_mcp_sessions > MAX_MAX_MCP_SESSIONS ||
      d.max_streams > MAX_MAX_STREAMS || (d.tools & ~(uint32_t)STROBE_TOOL_ALL) || d.idle_timeout_s > 86400 ||
      d.request_timeout_s > MAX_REQUEST_TIMEOUT_S || d.mcp_idle_timeout_s > 7 * 86400 ||
      d.producer_spans_per_second > MAX_PRODUCER_RATE)
    return STROBE_EINVAL;
  int rc = copy_list(d.allowed_origins, s->origins, &s->norigins);
  if (!rc) rc = copy_list(d.allowed_hosts, s->hosts, &s->nhosts);
  if (rc) return rc;
  d.allowed_origins = NULL; /* the copies are consulted; the caller's arrays need not outlive the call */
  d.allowed_hosts = NULL;

  /* The token: desc, then environment, then generated. */
  const char *tok = d.token ? d.token : getenv("STROBE_TOKEN");
  if (tok && tok[0]) {
    size_t n = strlen(tok);
    if (!valid_token(tok, n)) return STROBE_EINVAL;
    memcpy(s->token, tok, n);
    s->token_len = n;
  } else {
    if (strobe__random_hex(s->token, 32)) return STROBE_EIO;
    s->token_len = 64;
    s->token_file = d.token_file ? strdup(d.token_file) : default_token_path();
    if (!s->token_file) return STROBE_ENOMEM;
  }
  d.token = NULL;
  d.token_file = s->token_file;
  s->desc = d;
  return 0;
}

/* >>lifecycle */
static void free_server(strobe_server *s) {
  for (size_t i = 0; i < s->norigins; i++) free(s->origins[i]);
  for (size_t i = 0; i < s->nhosts; i++) free(s->hosts[i]);
  free(s->token_file);
  strobe_collector_release(s->collector);
  strobe__mutex_destroy(&s->perms.lock);
  strobe__mutex_destroy(&s->open_lock);
  memset(s->open_code, 0, sizeof s->open_code);
  strobe__mutex_destroy(&s->streams_lock);
  strobe__mutex_destroy(&s->conns_lock);
  pthread_cond_destroy(&s->conns_cond);
  memset(s->token, 0, sizeof s->token);
  free(s);
}

int strobe_server_start(const strobe_server_desc *desc, strobe_server **out) {
  if (!out) return STROBE_EINVAL;
  *out = NULL;
  strobe_server *s = calloc(1, sizeof *s);
  if (!s) return STROBE_ENOMEM;
  strobe__mutex_init(&s->perms.lock);
  strobe__mutex_init(&s->open_lock);
  strobe__mutex_init(&s->streams_lock);
  strobe__mutex_init(&s->conns_lock);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&s->conns_cond, &ca);
  pthread_condattr_destroy(&ca);
  int wrote_token = 0;
  int rc = resolve_desc(s, desc);
  if (rc) goto fail;
  strobe_collector *c = s->desc.collector ? s->desc.collector : strobe_default_collector();
  if (!c) {
    rc = STROBE_EFEATURE_DISABLED;
    goto fail;
  }
  s->collector = strobe_collector_retain(c);
  s->desc.collector = s->collector;
  s->perms.mcp_enabled = !s->desc.mcp_disabled;
  s->perms.observe = !s->desc.observe_denied;
  s->perms.tools = s->desc.tools;
  s->viewer_owner = strobe__random_owner();

  strobe__mcp_config mc = {s->collector, &s->perms, s->desc.max_mcp_sessions, s->desc.mcp_idle_timeout_s, s};
  rc = strobe__mcp_create(&mc, &s->mcp);
  if (rc) goto fail;
  if (s->token_file) {
    rc = write_token_file(s->token_file, s->token, s->token_len);
    if (rc) goto fail;
    wrote_token = 1;
  }
  if (s->desc.otlp_endpoint && (rc = strobe__otlp_start(s, &s->otlp))) goto fail;
  rc = strobe__http_start(s);
  if (rc) {
    strobe__otlp_stop(s->otlp);
    s->otlp = NULL;
    goto fail;
  }
  if (s->token_file && !s->desc.quiet)
    fprintf(stderr, "strobe: server on http://%s%s%s:%u, bearer token in %s\n", strchr(s->bind_address, ':') ? "[" : "",
            s->bind_address, strchr(s->bind_address, ':') ? "]" : "", (unsigned)s->port, s->token_file);
  *out = s;
  return 0;
fail:
  if (wrote_token) unlink(s->token_file);
  strobe__mcp_destroy(s->mcp);
  free_server(s);
  return rc;
}

void strobe_server_stop(strobe_server *s) {
  if (!s) return;
  strobe__http_stop(s); /* no handler runs after this */
  strobe__viewer_destroy(s->viewer);
  strobe__mutex_lock(&s->perms.lock);
  strobe__mcp_destroy(s->mcp); /* MCP shutdown cancels its own sessions (docs/server.md §Permissions and ownership) */
  s->mcp = NULL;
  strobe__mutex_unlock(&s->perms.lock);
  strobe_session_cancel_owner(s->collector, s->viewer_owner);
  if (s->otlp) { /* a last collection and send, then its session ends */
    strobe__otlp *o = s->otlp;
    s->otlp = NULL;
    strobe__otlp_stop_counts(o, s->desc.quiet);
  }
  if (s->token_file) unlink(s->token_file);
  free_server(s);
}

uint16_t strobe_server_query_port(const strobe_server *s) { return s ? s->port : 0; }

const char *strobe_server_query_token_file(const strobe_server *s) { return s ? s->token_file : NULL; }

/* >>open: a browser is opened on a one-time code, never on the token, so no command line (xdg-open's, the
 * browser's: readable by every local user with ps) carries the token (docs/server.md §Opening the viewer). */
#define OPEN_CODE_TTL_MS 600000u /* 10 minutes: a browser slow to start still gets there */

int strobe_server_make_open_code(strobe_server *s, char out[STROBE_SERVER_OPEN_CODE_LEN + 1]) {
  if (!s || !out) return STROBE_EINVAL;
  char code[STROBE_SERVER_OPEN_CODE_LEN + 1];
  if (strobe__random_hex(code, STROBE_SERVER_OPEN_CODE_LEN / 2)) return STROBE_EIO;
  strobe__mutex_lock(&s->open_lock);
  memcpy(s->open_code, code, sizeof code);
  s->open_expires_ms = strobe__mono_ms() + OPEN_CODE_TTL_MS;
  strobe__mutex_unlock(&s->open_lock);
  memcpy(out, code, sizeof code);
  memset(code, 0, sizeof code);
  return 0;
}

strobe_server_desc strobe_server_query_desc(const strobe_server *s) {
  strobe_server_desc d = {0};
  if (!s) return d;
  d = s->desc;
  d.port = s->port;
  strobe__mutex_lock((strobe__mutex *)&s->perms.lock);
  d.tools = s->perms.tools;
  d.mcp_disabled = !s->perms.mcp_enabled;
  d.observe_denied = !s->perms.observe;
  strobe__mutex_unlock((strobe__mutex *)&s->perms.lock);
  return d;
}

/* >>permissions: the change and the cancellation happen under perms.lock, so
 * a tool that checked the old permission has finished acting on it, and no
 * tool can start a session between the change and the cancellation. */
static int change(strobe_server *s, int *field, int value, uint32_t tools_mask, int tools_allowed) {
  if (!s) return STROBE_EINVAL;
  strobe__mutex_lock(&s->perms.lock);
  int revoke;
  if (field) {
    revoke = *field && !value;
    *field = value != 0;
  } else {
    revoke = !tools_allowed && (s->perms.tools & tools_mask);
    if (tools_allowed)
      s->perms.tools |= tools_mask;
    else
      s->perms.tools &= ~tools_mask;
  }
  int n = revoke && s->mcp ? strobe__mcp_cancel_all(s->mcp) : 0;
  strobe__mutex_unlock(&s->perms.lock);
  return n;
}

int strobe_server_set_observe(strobe_server *s, int granted) {
  return s ? change(s, &s->perms.observe, granted, 0, 0) : STROBE_EINVAL;
}

int strobe_server_set_mcp_enabled(strobe_server *s, int enabled) {
  return s ? change(s, &s->perms.mcp_enabled, enabled, 0, 0) : STROBE_EINVAL;
}

int strobe_server_set_tool_allowed(strobe_server *s, uint32_t tools, int allowed) {
  if (!s || !tools || (tools & ~(uint32_t)STROBE_TOOL_ALL)) return STROBE_EINVAL;
  return change(s, NULL, 0, tools, allowed);
}

strobe_server_stats strobe_server_query_stats(const strobe_server *s) {
  strobe_server_stats st = {0};
  if (!s) return st;
  st.requests = __atomic_load_n(&s->requests, __ATOMIC_RELAXED);
  st.rejected_auth = __atomic_load_n(&s->rejected_auth, __ATOMIC_RELAXED);
  st.rejected_origin = __atomic_load_n(&s->rejected_origin, __ATOMIC_RELAXED);
  st.rejected_size = __atomic_load_n(&s->rejected_size, __ATOMIC_RELAXED);
  st.stream_bytes = __atomic_load_n(&s->stream_bytes, __ATOMIC_RELAXED);
  if (s->mcp) {
    strobe__mcp_counts mc = strobe__mcp_query(s->mcp);
    st.mcp_sessions = mc.open;
    st.mcp_sessions_expired = mc.expired;
    st.mcp_cancelled = mc.cancelled;
  }
  st.producer_batches = __atomic_load_n(&s->producer_batches, __ATOMIC_RELAXED);
  st.producer_spans = __atomic_load_n(&s->producer_spans, __ATOMIC_RELAXED);
  st.producer_refused = __atomic_load_n(&s->producer_refused, __ATOMIC_RELAXED);
  st.producer_rate_limited = __atomic_load_n(&s->producer_rate_limited, __ATOMIC_RELAXED);
  strobe__otlp_counts oc = strobe__otlp_query(s->otlp);
  st.otlp_spans = oc.spans;
  st.otlp_batches = oc.batches;
  st.otlp_queued = oc.queued;
  st.otlp_dropped = oc.dropped;
  st.otlp_missed = oc.missed;
  st.otlp_rejected = oc.rejected;
  st.otlp_retries = oc.retries;
  st.otlp_completed = oc.completed;
  strobe__streams_totals((strobe_server *)s, &st);
  strobe__conns_totals((strobe_server *)s, &st);
  return st;
}
