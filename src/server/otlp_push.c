/*
 * otlp_push.c — the server's OTLP/HTTP push (docs/otel.md §Push from the
 * server): with strobe_server_desc.otlp_endpoint set, completed operations
 * go to an OpenTelemetry endpoint (a Collector, Jaeger, Tempo) as OTLP/JSON
 * over HTTP POST, one trace per operation: the operation a root span, each
 * of its stage runs a child span with its own start and end.
 *
 * Where operations come from: a profiling session of the server's own
 * (owner otlp_owner, every kind, 240 samples, stage runs with their times:
 * docs/sessions.md §Stage runs), read every otlp_interval_ms
 * on a thread of its own. A session report is content-free (docs/sessions.md
 * §Content): static labels and numbers, run-time names as interned_<id>
 * unless the application opted in, so what leaves the process is what a
 * session report may carry. Each read queues the samples admitted since the
 * last one: the session keeps samples in admission order, so they are the
 * ones after the newest sample the last read saw (by operation id); those
 * admitted beyond the session's 240 between two reads are counted (`missed`:
 * the session's completed count went up by more than the new samples),
 * never guessed. The last collection ends the session, so nothing completes
 * unseen after it: every operation the session admitted is then exactly one
 * of sent, rejected, dropped, missed or not sent at stop.
 *
 * Owns: the queue of operations not yet sent (at most otlp_queue_max, the
 * oldest dropped and counted past it), the thread, the session, the counts.
 * Sends batches of at most OTLP_BATCH operations; a batch the endpoint did
 * not take (no connection, 429, 5xx) is sent again after a backoff doubling
 * from otlp_interval_ms to OTLP_BACKOFF_MAX_MS; one it refused (another 4xx)
 * is dropped and counted. Must never: block the application (it runs on its
 * own thread and holds no Strobe lock while it sends), grow past its queue,
 * or send a name a session report would withhold.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "platform/mix.h"
#include "server/server_internal.h"

#define OTLP_BATCH 256u               /* operations per POST */
#define OTLP_BACKOFF_MAX_MS 30000u
#define OTLP_IO_TIMEOUT_MS 5000       /* connect, send and the response's status line, each */

struct strobe__otlp {
  strobe_server *s;
  strobe_collector *c;
  char session[STROBE_SESSION_ID_MAX];
  uint64_t owner;
  char host[256], port[8], path[512];
  uint32_t interval_ms, queue_max;
  int64_t unix0_ns;                   /* Unix ns at the collector's epoch (from the session's start) */
  uint64_t key;                       /* the process's identity for trace ids */
  json_t **queue;                     /* samples, oldest first, a ring */
  uint32_t head, len;
  uint64_t last_id;                   /* id of the newest-admitted sample the last read saw; 0: none yet */
  uint64_t seen_completed;            /* the session's completed count at the last read */
  uint32_t backoff_ms;                /* 0: not backing off */
  uint64_t retry_at_ms;
  pthread_t thread;
  pthread_mutex_t lock;               /* stop and the counts */
  pthread_cond_t cond;
  int stop;
  strobe__otlp_counts n;
};

/* >>endpoint: http://host[:port]/path only (TLS: a local Collector in front). */
int strobe__otlp_parse_endpoint(const char *url, char *host, size_t hcap, char *port, size_t pcap, char *path,
                                size_t ppcap) {
  if (!url || strncmp(url, "http://", 7) != 0) return STROBE_EINVAL;
  const char *h = url + 7, *slash = strchr(h, '/'), *end = slash ? slash : h + strlen(h);
  const char *colon = NULL;
  if (*h == '[') { /* [v6]:port */
    const char *rb = memchr(h, ']', (size_t)(end - h));
    if (!rb) return STROBE_EINVAL;
    colon = rb + 1 < end && rb[1] == ':' ? rb + 1 : NULL;
    if ((size_t)(rb - h - 1) >= hcap || rb == h + 1) return STROBE_EINVAL;
    memcpy(host, h + 1, (size_t)(rb - h - 1));
    host[rb - h - 1] = 0;
  } else {
    colon = memchr(h, ':', (size_t)(end - h));
    const char *he = colon ? colon : end;
    if (he == h || (size_t)(he - h) >= hcap) return STROBE_EINVAL;
    memcpy(host, h, (size_t)(he - h));
    host[he - h] = 0;
  }
  if (colon) {
    size_t n = (size_t)(end - colon - 1);
    if (n == 0 || n >= pcap || n > 5 || strspn(colon + 1, "0123456789") < n) return STROBE_EINVAL;
    memcpy(port, colon + 1, n);
    port[n] = 0;
    if (atoi(port) < 1 || atoi(port) > 65535) return STROBE_EINVAL;
  } else {
    snprintf(port, pcap, "80");
  }
  const char *p = slash ? slash : "/v1/traces";
  if (strlen(p) >= ppcap || strpbrk(p, " \r\n")) return STROBE_EINVAL;
  snprintf(path, ppcap, "%s", p);
  return 0;
}

/* >>http: one POST on its own connection; returns the status, or -1 when no
 * answer came (no connection, timeout). */
static int wait_fd(int fd, short ev) {
  struct pollfd p = {fd, ev, 0};
  int rc;
  do rc = poll(&p, 1, OTLP_IO_TIMEOUT_MS);
  while (rc < 0 && errno == EINTR);
  return rc == 1 ? 0 : -1;
}

static int post(const strobe__otlp *o, const char *body, size_t len) {
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
  if (getaddrinfo(o->host, o->port, &hints, &ai) != 0 || !ai) return -1;
  int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int status = -1;
  if (fd < 0) goto out;
  if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
    if (errno != EINPROGRESS || wait_fd(fd, POLLOUT)) goto out;
    int err = 0;
    socklen_t el = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err) goto out;
  }
  char head[1024];
  int hn = snprintf(head, sizeof head,
                    "POST %s HTTP/1.1\r\nHost: %s:%s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                    "Connection: close\r\nUser-Agent: strobe/%s\r\n\r\n",
                    o->path, o->host, o->port, len, strobe_version());
  const char *parts[2] = {head, body};
  size_t lens[2] = {(size_t)hn, len};
  for (int i = 0; i < 2; i++)
    for (size_t off = 0; off < lens[i];) {
      ssize_t w = send(fd, parts[i] + off, lens[i] - off, MSG_NOSIGNAL);
      if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && !wait_fd(fd, POLLOUT)) continue;
      if (w <= 0) goto out;
      off += (size_t)w;
    }
  char line[64];
  size_t got = 0;
  while (got < sizeof line - 1 && !memchr(line, '\n', got)) {
    ssize_t r = recv(fd, line + got, sizeof line - 1 - got, 0);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && !wait_fd(fd, POLLIN)) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  line[got] = 0;
  int code;
  if (sscanf(line, "HTTP/1.%*d %d", &code) == 1) status = code;
out:
  if (fd >= 0) close(fd);
  freeaddrinfo(ai);
  return status;
}

/* >>spans: one operation (a session report's sample) as a root span, its stage runs as child spans. */
static json_t *attr(const char *key, json_t *value) {
  return json_pack("{s:s,s:o}", "key", key, "value", value);
}
static json_t *str_v(const char *s) { return json_pack("{s:s}", "stringValue", s ? s : ""); }
static json_t *int_v(json_int_t v) {
  char b[32];
  snprintf(b, sizeof b, "%lld", (long long)v);
  return json_pack("{s:s}", "intValue", b);
}
static json_t *bool_v(int v) { return json_pack("{s:b}", "boolValue", v); }
static json_t *dbl_v(double v) { return json_pack("{s:f}", "doubleValue", v); }

/* Nearest integer (libstrobe_server links no libm). */
static int64_t round_ns(double v) { return (int64_t)(v < 0 ? v - 0.5 : v + 0.5); }

/* Integer arithmetic on the anchor: Unix ns need 61 bits, a double holds 53. */
static json_t *unix_ns(const strobe__otlp *o, double ms) {
  char b[32];
  snprintf(b, sizeof b, "%lld", (long long)(o->unix0_ns + round_ns(ms * 1e6)));
  return json_string(b);
}

/* A stage run's span id: the root's, mixed with the run's stage entry and index. */
static void span_id_of(uint64_t root, size_t entry, size_t run, char out[17]) {
  uint64_t id = strobe__mix64(root, ((uint64_t)entry << 16 | run) + 1);
  snprintf(out, 17, "%016llx", (unsigned long long)(id ? id : 1));
}

/* The run a stage run nested in: among the runs of the stages named
 * `parent`, the innermost one enclosing it in time; its span id, or the
 * root's when none holds it (the parent ran on another thread and ended
 * first, or its run was not kept). */
static void parent_of(json_t *stages, const char *parent, double from, double to, uint64_t root, const char *root_id,
                      char out[17]) {
  size_t i, k;
  json_t *st, *run;
  double best = -1;
  snprintf(out, 17, "%s", root_id);
  if (!parent) return;
  json_array_foreach(stages, i, st) {
    const char *name = json_string_value(json_object_get(st, "name"));
    if (!name || strcmp(name, parent) != 0) continue;
    json_array_foreach(json_object_get(st, "runs"), k, run) {
      double b = json_number_value(json_array_get(run, 0)), e = json_number_value(json_array_get(run, 1));
      if (b <= from && to <= e && b > best) {
        best = b;
        span_id_of(root, i, k, out);
      }
    }
  }
}

/* One operation (a session report's sample): its root span, then a child
 * span per stage run the session kept with its times (docs/otel.md §Push
 * from the server), each appended to spans. */
static void spans_of(const strobe__otlp *o, json_t *sample, json_t *spans) {
  json_int_t id = json_integer_value(json_object_get(sample, "id"));
  const char *kind = json_string_value(json_object_get(sample, "kind"));
  char trace[33], span[17];
  uint64_t hi = strobe__mix64(o->key, (uint64_t)id), lo = strobe__mix64(hi, 0x6f746c70u);
  uint64_t root = strobe__mix64(lo, 0x726f6f74u);
  snprintf(trace, sizeof trace, "%016llx%016llx", (unsigned long long)(hi ? hi : 1), (unsigned long long)(lo ? lo : 1));
  snprintf(span, sizeof span, "%016llx", (unsigned long long)(root ? root : 1));
  json_t *a = json_array();
  json_array_append_new(a, attr("strobe.operation.kind", str_v(kind)));
  json_array_append_new(a, attr("strobe.operation.id", int_v(id)));
  json_array_append_new(a, attr("strobe.window", str_v(json_string_value(json_object_get(sample, "window")))));
  json_t *fid = json_object_get(sample, "frame_id");
  if (json_is_integer(fid)) json_array_append_new(a, attr("strobe.frame_id", int_v(json_integer_value(fid))));
  json_array_append_new(a, attr("strobe.committed", bool_v(json_is_true(json_object_get(sample, "committed")))));
  json_array_append_new(a, attr("strobe.handed_off", bool_v(json_is_true(json_object_get(sample, "handed_off")))));
  const char *pop = json_string_value(json_object_get(sample, "population"));
  if (pop) json_array_append_new(a, attr("strobe.population", str_v(pop)));
  json_int_t runs_dropped = json_integer_value(json_object_get(sample, "stage_runs_dropped"));
  if (runs_dropped) json_array_append_new(a, attr("strobe.stage_runs_dropped", int_v(runs_dropped)));
  /* Stages: each run the session kept with its times is a child span. A
   * stage with runs it could not keep (past STROBE_MAX_STAGE_RUNS, or run in
   * the process the operation came from) keeps its count and total on the
   * operation, so no time goes unsent and none is invented. */
  size_t i, k;
  json_t *st, *run, *stages = json_object_get(sample, "stages");
  char key[320];
  json_array_foreach(stages, i, st) {
    const char *name = json_string_value(json_object_get(st, "name"));
    if (!name || !json_is_true(json_object_get(st, "available"))) continue; /* declared unavailable: no number */
    json_t *runs = json_object_get(st, "runs");
    json_int_t count = json_integer_value(json_object_get(st, "count"));
    if ((json_int_t)json_array_size(runs) == count) continue;
    snprintf(key, sizeof key, "strobe.stage.%s.total_ms", name);
    json_array_append_new(a, attr(key, dbl_v(json_number_value(json_object_get(st, "total_ms")))));
    snprintf(key, sizeof key, "strobe.stage.%s.count", name);
    json_array_append_new(a, attr(key, int_v(count)));
    snprintf(key, sizeof key, "strobe.stage.%s.runs_not_sent", name);
    json_array_append_new(a, attr(key, int_v(count - (json_int_t)json_array_size(runs))));
  }
  json_array_foreach(json_object_get(sample, "counters"), i, st) {
    const char *name = json_string_value(json_object_get(st, "name"));
    const char *kind_of = json_string_value(json_object_get(st, "kind"));
    json_t *v = json_object_get(st, "value");
    if (!name || !json_is_number(v)) continue;
    snprintf(key, sizeof key, "strobe.counter.%s%s%s", name, kind_of ? "." : "", kind_of ? kind_of : "");
    json_array_append_new(a, attr(key, dbl_v(json_number_value(v))));
  }
  json_array_append_new(spans, json_pack("{s:s,s:s,s:s,s:i,s:o,s:o,s:o}", "traceId", trace, "spanId", span, "name",
                                         kind ? kind : "operation", "kind", 1, "startTimeUnixNano",
                                         unix_ns(o, json_number_value(json_object_get(sample, "start_ms"))),
                                         "endTimeUnixNano", unix_ns(o, json_number_value(json_object_get(sample, "end_ms"))),
                                         "attributes", a));
  json_array_foreach(stages, i, st) {
    const char *name = json_string_value(json_object_get(st, "name"));
    const char *nested = json_string_value(json_object_get(st, "nested_in"));
    const char *process = json_string_value(json_object_get(st, "process"));
    if (!name) continue;
    json_array_foreach(json_object_get(st, "runs"), k, run) {
      double b = json_number_value(json_array_get(run, 0)), e = json_number_value(json_array_get(run, 1));
      char id_s[17], parent[17];
      span_id_of(root, i, k, id_s);
      parent_of(stages, nested, b, e, root, span, parent);
      json_t *sa = json_array();
      json_array_append_new(sa, attr("strobe.stage", str_v(name)));
      if (process) json_array_append_new(sa, attr("strobe.stage.process", str_v(process)));
      json_array_append_new(spans, json_pack("{s:s,s:s,s:s,s:s,s:i,s:o,s:o,s:o}", "traceId", trace, "spanId", id_s,
                                             "parentSpanId", parent, "name", name, "kind", 1, "startTimeUnixNano",
                                             unix_ns(o, b), "endTimeUnixNano", unix_ns(o, e), "attributes", sa));
    }
  }
}

static char *body_of(const strobe__otlp *o, uint32_t n) {
  json_t *spans = json_array();
  for (uint32_t i = 0; i < n; i++) spans_of(o, o->queue[(o->head + i) % o->queue_max], spans);
  json_t *res = json_array();
  json_array_append_new(res, attr("service.name", str_v(o->s->desc.otlp_service ? o->s->desc.otlp_service
                                                                                  : "unknown_service:strobe")));
  json_array_append_new(res, attr("process.pid", int_v((json_int_t)getpid())));
  json_array_append_new(res, attr("telemetry.sdk.name", str_v("strobe")));
  json_array_append_new(res, attr("telemetry.sdk.language", str_v("c")));
  json_array_append_new(res, attr("telemetry.sdk.version", str_v(strobe_version())));
  json_t *req = json_pack("{s:[{s:{s:o},s:[{s:{s:s,s:s},s:o}]}]}", "resourceSpans", "resource", "attributes", res,
                          "scopeSpans", "scope", "name", "strobe", "version", strobe_version(), "spans", spans);
  char *text = req ? json_dumps(req, JSON_COMPACT) : NULL;
  json_decref(req);
  return text;
}

/* >>queue */
static void count(strobe__otlp *o, uint64_t *field, uint64_t n) {
  pthread_mutex_lock(&o->lock);
  *field += n;
  pthread_mutex_unlock(&o->lock);
}

static void drop_front(strobe__otlp *o, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) json_decref(o->queue[(o->head + i) % o->queue_max]);
  o->head = (o->head + n) % o->queue_max;
  o->len -= n;
  pthread_mutex_lock(&o->lock);
  o->n.queued = o->len;
  pthread_mutex_unlock(&o->lock);
}

static void enqueue(strobe__otlp *o, json_t *sample) {
  if (o->len == o->queue_max) {
    drop_front(o, 1);
    count(o, &o->n.dropped, 1);
  }
  o->queue[(o->head + o->len) % o->queue_max] = json_incref(sample);
  o->len++;
  pthread_mutex_lock(&o->lock);
  o->n.queued = o->len;
  pthread_mutex_unlock(&o->lock);
}

/* Reads the session (ends it when `last`); queues the samples admitted since
 * the last read and counts those admitted and gone before it as missed. */
static void collect(strobe__otlp *o, int last) {
  strobe_report *rep = NULL;
  if ((last ? strobe_session_stop : strobe_session_read)(o->c, o->session, o->owner, &rep)) return;
  char *text = NULL;
  size_t len = 0;
  int rc = strobe_report_json(rep, &text, &len);
  strobe_report_free(rep);
  if (rc) return; /* the next read catches up: counts are by admission, not by read */
  json_t *r = json_loadb(text, len, 0, NULL);
  free(text);
  if (!r) return;
  uint64_t completed = (uint64_t)json_integer_value(json_object_get(json_object_get(r, "counts"), "completed"));
  json_t *samples = json_object_get(r, "samples"); /* newest admitted first */
  size_t fresh = json_array_size(samples);
  for (size_t i = 0; o->last_id && i < fresh; i++)
    if ((uint64_t)json_integer_value(json_object_get(json_array_get(samples, i), "id")) == o->last_id) fresh = i;
  STROBE_ASSERT(completed >= o->seen_completed && completed - o->seen_completed >= fresh);
  if (completed - o->seen_completed > fresh) count(o, &o->n.missed, completed - o->seen_completed - fresh);
  o->seen_completed = completed;
  if (json_array_size(samples)) o->last_id = (uint64_t)json_integer_value(json_object_get(json_array_get(samples, 0), "id"));
  for (size_t i = fresh; i-- > 0;) enqueue(o, json_array_get(samples, i)); /* oldest first */
  pthread_mutex_lock(&o->lock);
  o->n.completed = completed;
  pthread_mutex_unlock(&o->lock);
  json_decref(r);
}

/* Sends what is queued, batch by batch, until the queue is empty or the
 * endpoint did not take one (then a backoff starts). */
static void flush(strobe__otlp *o, uint64_t now_ms) {
  while (o->len && (!o->backoff_ms || now_ms >= o->retry_at_ms)) {
    uint32_t n = o->len < OTLP_BATCH ? o->len : OTLP_BATCH;
    char *body = body_of(o, n);
    if (!body) return;
    int status = post(o, body, strlen(body));
    free(body);
    if (status >= 200 && status < 300) {
      drop_front(o, n);
      o->backoff_ms = 0;
      pthread_mutex_lock(&o->lock);
      o->n.batches++;
      o->n.spans += n;
      pthread_mutex_unlock(&o->lock);
    } else if (status >= 400 && status < 500 && status != 408 && status != 429) {
      drop_front(o, n); /* refused: sending it again would be refused again */
      count(o, &o->n.rejected, n);
    } else {
      o->backoff_ms = o->backoff_ms ? o->backoff_ms * 2 : o->interval_ms;
      if (o->backoff_ms > OTLP_BACKOFF_MAX_MS) o->backoff_ms = OTLP_BACKOFF_MAX_MS;
      o->retry_at_ms = now_ms + o->backoff_ms;
      count(o, &o->n.retries, 1);
      return;
    }
    now_ms = strobe__mono_ms();
  }
}

static void *run(void *arg) {
  strobe__otlp *o = arg;
  pthread_mutex_lock(&o->lock);
  while (!o->stop) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)o->interval_ms * 1000000u;
    ts.tv_sec += (time_t)(ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    pthread_cond_timedwait(&o->cond, &o->lock, &ts);
    int stopping = o->stop;
    pthread_mutex_unlock(&o->lock);
    collect(o, stopping);
    if (stopping) o->backoff_ms = 0; /* the last chance: one attempt, without waiting out a backoff */
    flush(o, strobe__mono_ms());
    pthread_mutex_lock(&o->lock);
  }
  pthread_mutex_unlock(&o->lock);
  return NULL;
}

int strobe__otlp_start(strobe_server *s, strobe__otlp **out) {
  *out = NULL;
  strobe__otlp *o = calloc(1, sizeof *o);
  if (!o) return STROBE_ENOMEM;
  o->s = s;
  o->c = s->collector;
  o->interval_ms = s->desc.otlp_interval_ms;
  o->queue_max = s->desc.otlp_queue_max;
  if (strobe__otlp_parse_endpoint(s->desc.otlp_endpoint, o->host, sizeof o->host, o->port, sizeof o->port, o->path,
                                  sizeof o->path)) {
    free(o);
    return STROBE_EINVAL;
  }
  o->queue = calloc(o->queue_max, sizeof *o->queue);
  if (!o->queue) {
    free(o);
    return STROBE_ENOMEM;
  }
  o->owner = strobe__random_owner();
  struct timespec rt;
  uint64_t mono0 = strobe__mono_ns();
  clock_gettime(CLOCK_REALTIME, &rt);
  int rc = strobe_session_start(
      o->c, &(strobe_session_desc){.max_samples = STROBE_MAX_SAMPLES, .owner = o->owner, .stage_runs = 1}, o->session);
  if (rc) {
    free(o->queue);
    free(o);
    return rc;
  }
  /* The session's start on both clocks: its started_ms (collector ms) was taken between mono0 and now. */
  strobe_session_info infos[STROBE_MAX_SESSIONS];
  int n = strobe_collector_query_sessions(o->c, infos, STROBE_MAX_SESSIONS);
  double started_ms = 0;
  for (int i = 0; i < n && i < STROBE_MAX_SESSIONS; i++)
    if (!strcmp(infos[i].id, o->session)) started_ms = infos[i].started_ms;
  int64_t real_ns = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec;
  o->unix0_ns = real_ns + (int64_t)(strobe__mono_ns() - mono0) / 2 - round_ns(started_ms * 1e6);
  o->key = strobe__mix64(strobe__mix64((uint64_t)getpid(), (uint64_t)o->unix0_ns / 1000u), (uint64_t)(uintptr_t)o->c);
  pthread_mutex_init(&o->lock, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&o->cond, &ca);
  pthread_condattr_destroy(&ca);
  if (pthread_create(&o->thread, NULL, run, o) != 0) {
    strobe_session_cancel_owner(o->c, o->owner);
    pthread_cond_destroy(&o->cond);
    pthread_mutex_destroy(&o->lock);
    free(o->queue);
    free(o);
    return STROBE_ENOMEM;
  }
  *out = o;
  return 0;
}

void strobe__otlp_stop(strobe__otlp *o) { strobe__otlp_stop_counts(o, 1); }

void strobe__otlp_stop_counts(strobe__otlp *o, int quiet) {
  if (!o) return;
  pthread_mutex_lock(&o->lock);
  o->stop = 1;
  pthread_cond_signal(&o->cond);
  pthread_mutex_unlock(&o->lock);
  pthread_join(o->thread, NULL);
  strobe__otlp_counts n = o->n;
  /* Its session ended with the last collection: each operation it admitted is in exactly one count. */
  STROBE_ASSERT(n.completed == n.spans + o->len + n.dropped + n.missed + n.rejected);
  if (!quiet && (o->len || n.dropped || n.missed || n.rejected)) /* said once, at the end, like the server's token path */
    fprintf(stderr,
            "strobe: OTLP push to %s: of %llu operations completed, %llu sent, %u not sent at stop, %llu dropped "
            "from a full queue, %llu missed (gone from its session before a read), %llu refused by the endpoint\n",
            o->s->desc.otlp_endpoint, (unsigned long long)n.completed, (unsigned long long)n.spans, o->len,
            (unsigned long long)n.dropped, (unsigned long long)n.missed, (unsigned long long)n.rejected);
  drop_front(o, o->len);
  strobe_session_cancel_owner(o->c, o->owner);
  pthread_cond_destroy(&o->cond);
  pthread_mutex_destroy(&o->lock);
  free(o->queue);
  free(o);
}

strobe__otlp_counts strobe__otlp_query(strobe__otlp *o) {
  strobe__otlp_counts n = {0};
  if (!o) return n;
  pthread_mutex_lock(&o->lock);
  n = o->n;
  pthread_mutex_unlock(&o->lock);
  return n;
}

uint64_t strobe__otlp_owner(const strobe__otlp *o) { return o ? o->owner : 0; }
