/*
 * viewer.c — the web viewer's side of libstrobe_server: the embedded static
 * files at `/`, and the authenticated data endpoints under /api/capture/
 * (docs/viewer.md):
 *   GET  /api/capture/state            what is shown, recording, building, generation
 *   GET  /api/capture/meta[?capture=1] the model's JSON (capture=1: the compared capture)
 *        /api/capture/meta?live=1      also asks for a fresh live snapshot (202 + state)
 *   GET  /api/capture/table/<name>[?capture=1&gen=G]  one packed table, application/octet-stream
 *   GET  /api/capture/table/spans?gen=G&since=T  the live append: only the spans ending after T
 *   POST /api/capture/recorder         {"recording": true|false}: start/stop the live recorder
 *   POST /api/capture/snapshot         ask for a fresh live snapshot (202 + state)
 *   GET  /api/capture/explain?number=N why frame N was slow: the library's explanation (strobe_explain_json)
 *
 * What is shown is either files (strobe_server_view_file, as `strobe view`
 * does) or the live application through a flight recorder the server owns.
 * Snapshots, model builds and stopping the recorder run on the viewer's
 * worker thread, never on libmicrohttpd's, so MCP and the other endpoints
 * keep answering while a large snapshot is built; the browser polls
 * /api/capture/state until the generation it waits for is there.
 *
 * Owns: the models (reference counted: a response being sent keeps the one
 * it reads alive after a newer one replaced it), the live recorder, the
 * worker thread, the snapshot's memory file.
 * Must never: serve anything but the embedded files without the token, block
 * libmicrohttpd's thread on a snapshot or a build, or mix tables of two
 * generations (a table request names its generation; a stale one is 409).
 *
 * Contents: >>state >>snapshot >>worker >>assets >>routes >>api >>explain
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <microhttpd.h>

#include "server/server_internal.h"
#include "server/viewer_internal.h"
#include "strobe/explain.h"
#include "viewer/viewer_model.h"

/* >>state */
enum { SHOW_LIVE = 0, SHOW_FILE = 1 };

struct strobe__viewer {
  strobe__mutex lock;
  pthread_cond_t cond;          /* worker wake-up and "work done" */
  strobe__vmodel *model[2];     /* [0] shown, [1] compared (files only) */
  int show;                     /* SHOW_LIVE or SHOW_FILE */
  strobe_flight_recorder *fr;   /* live recorder while recording */
  int want_snapshot, want_stop, quit;
  int busy;                     /* the worker is snapshotting or building */
  int last_error;               /* of the last snapshot or build */
  uint64_t generation;          /* of model[0]; 0 = none yet */
  uint64_t next_generation;
  uint64_t stops_done;          /* counts finished recorder stops (record_stop waits on it) */
  uint32_t max_spans;
  strobe_viewer_load_stats last_stats;
  char *file;                   /* the shown file's path (SHOW_FILE), for strobe_profile_explain */
  strobe_explain *ex;           /* the shown file's explainer, built on first use (/api/capture/explain) */
  uint64_t ex_generation;       /* the generation it was built for: another file shown makes it stale */
  pthread_t worker;
  int has_worker;
};

static strobe__mutex g_create_lock = STROBE__MUTEX_INIT;

static strobe__viewer *viewer_of(strobe_server *s) {
  strobe__viewer *v = __atomic_load_n(&s->viewer, __ATOMIC_ACQUIRE);
  if (v) return v;
  strobe__mutex_lock(&g_create_lock);
  v = s->viewer;
  if (!v && (v = calloc(1, sizeof *v)) != NULL) {
    strobe__mutex_init(&v->lock);
    pthread_cond_init(&v->cond, NULL);
    v->max_spans = STROBE_VIEWER_DEFAULT_MAX_SPANS;
    __atomic_store_n(&s->viewer, v, __ATOMIC_RELEASE);
  }
  strobe__mutex_unlock(&g_create_lock);
  return v;
}

/* What a build kept, cut and cost, as the API reports it (viewer.h). */
static strobe_viewer_load_stats stats_of(const strobe__vmodel *m) {
  return (strobe_viewer_load_stats){m->spans, m->spans_cut, m->frames, m->samples, m->bytes, m->build_ms, m->read_error};
}

/* Shows model m in `slot` (taking its reference), releasing the one there. Called with v->lock held. */
static void install(strobe__viewer *v, int slot, strobe__vmodel *m, uint64_t gen) {
  STROBE_ASSERT(strobe__mutex_held(&v->lock));
  strobe__vmodel *old = v->model[slot];
  v->model[slot] = m;
  if (slot == 0) v->generation = gen;
  strobe__vmodel_release(old);
}

/* >>snapshot: the recorder's ring → a capture in a memory file → a model. */
static int snapshot(strobe__viewer *v, strobe_flight_recorder *fr, uint64_t gen, strobe__vmodel **out) {
  int fd = memfd_create("strobe-viewer-snapshot", MFD_CLOEXEC);
  if (fd < 0) return STROBE_EIO;
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  int rc = strobe_flight_recorder_dump(fr, path); /* reopens the memory file: no disk involved */
  struct stat sb;
  void *map = MAP_FAILED;
  if (!rc && (fstat(fd, &sb) != 0 || sb.st_size <= 0)) rc = STROBE_EIO;
  if (!rc) map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (!rc && map == MAP_FAILED) rc = STROBE_ENOMEM;
  if (!rc) {
    strobe__vsource src = {NULL, map, (size_t)sb.st_size, "live", "live"};
    rc = strobe__vmodel_build(&src, v->max_spans, gen, out);
  }
  if (map != MAP_FAILED) munmap(map, (size_t)sb.st_size);
  close(fd);
  return rc;
}

/* >>worker */
static void *worker_main(void *arg) {
  strobe__viewer *v = arg;
  strobe__mutex_lock(&v->lock);
  while (!v->quit) {
    if ((v->want_snapshot || v->want_stop) && v->fr) {
      int stop = v->want_stop;
      strobe_flight_recorder *fr = v->fr;
      uint64_t gen = ++v->next_generation;
      v->want_snapshot = 0;
      v->busy = 1;
      if (stop) v->fr = NULL; /* from now on nobody else may look at it: the stop below frees it */
      strobe__mutex_unlock(&v->lock);
      strobe__vmodel *m = NULL;
      int rc = snapshot(v, fr, gen, &m);
      if (stop) strobe_flight_recorder_stop(fr);
      strobe__mutex_lock(&v->lock);
      v->busy = 0;
      v->last_error = rc;
      if (!rc) v->last_stats = stats_of(m);
      if (m && v->show == SHOW_LIVE) install(v, 0, m, gen);
      else strobe__vmodel_release(m);
      if (stop) {
        v->want_stop = 0;
        v->stops_done++;
      }
      pthread_cond_broadcast(&v->cond);
      continue;
    }
    v->want_snapshot = 0;
    if (v->want_stop) { /* nothing to stop */
      v->want_stop = 0;
      v->stops_done++;
      pthread_cond_broadcast(&v->cond);
    }
    strobe__cond_wait(&v->cond, &v->lock);
  }
  strobe__mutex_unlock(&v->lock);
  return NULL;
}

/* Called with v->lock held. */
static int ensure_worker(strobe__viewer *v) {
  STROBE_ASSERT(strobe__mutex_held(&v->lock));
  if (v->has_worker) return 0;
  if (pthread_create(&v->worker, NULL, worker_main, v) != 0) return STROBE_ENOMEM;
  v->has_worker = 1;
  return 0;
}

void strobe__viewer_destroy(strobe__viewer *v) {
  if (!v) return;
  strobe__mutex_lock(&v->lock);
  v->quit = 1;
  pthread_cond_broadcast(&v->cond);
  strobe__mutex_unlock(&v->lock);
  if (v->has_worker) pthread_join(v->worker, NULL);
  if (v->fr) strobe_flight_recorder_stop(v->fr);
  strobe__vmodel_release(v->model[0]);
  strobe__vmodel_release(v->model[1]);
  free(v->file);
  strobe_explain_destroy(v->ex);
  pthread_cond_destroy(&v->cond);
  strobe__mutex_destroy(&v->lock);
  free(v);
}

/* >>assets */
static const strobe__asset *find_asset(const char *url) {
  if (!url) return NULL;
  if (!strcmp(url, "/")) url = "/index.html";
  for (size_t i = 0; i < strobe__viewer_asset_count; i++)
    if (!strcmp(url, strobe__viewer_assets[i].path)) return &strobe__viewer_assets[i];
  return NULL;
}

int strobe__viewer_is_asset(const char *url, const char *method) {
  return method && (!strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD)) &&
         find_asset(url) != NULL;
}

int strobe__viewer_asset(struct MHD_Connection *conn, const char *url) {
  const strobe__asset *a = find_asset(url);
  if (!a) return strobe__queue_error(conn, MHD_HTTP_NOT_FOUND, "not_found", "no such file");
  struct MHD_Response *r =
      MHD_create_response_from_buffer(a->len, (void *)(uintptr_t)a->data, MHD_RESPMEM_PERSISTENT);
  if (!r) return MHD_NO;
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, a->content_type);
  MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
  MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
  MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
  MHD_add_response_header(r, "X-Frame-Options", "DENY");
  MHD_add_response_header(r, "Content-Security-Policy",
                          "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
                          "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'");
  enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
  MHD_destroy_response(r);
  return ret;
}

/* >>routes */
static void release_cb(void *cls) { strobe__vmodel_release(cls); }

/* Queues `len` bytes at `data`, owned by model m (a reference is taken and
 * dropped when libmicrohttpd is done with the body). */
static int queue_model_bytes(struct MHD_Connection *conn, strobe__vmodel *m, const void *data, size_t len,
                             const char *type) {
  strobe__vmodel_retain(m);
  struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback_cls(len, (void *)(uintptr_t)data, release_cb, m);
  if (!r) {
    strobe__vmodel_release(m);
    return MHD_NO;
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
  enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
  MHD_destroy_response(r);
  return ret;
}

/* Called with v->lock held. */
static json_t *state_json(strobe__viewer *v) {
  STROBE_ASSERT(strobe__mutex_held(&v->lock));
  json_t *st = json_pack("{s:s,s:b,s:b,s:I,s:b,s:b}", "show", v->show == SHOW_FILE ? "file" : "live", "recording",
                         v->fr != NULL, "building", v->busy || v->want_snapshot || v->want_stop, "generation",
                         (json_int_t)v->generation, "has_capture", v->model[0] != NULL, "has_compare",
                         v->model[1] != NULL);
  json_object_set_new(st, "last_error", v->last_error ? json_string(strobe_err_name(v->last_error)) : json_null());
  /* What /api/capture/explain can read now (strobe__viewer_explain_source): the recording, or the file shown; not a
   * stopped recording's last snapshot. */
  json_object_set_new(st, "explainable", json_boolean((v->fr && !v->want_stop) || (v->show == SHOW_FILE && v->file)));
  if (v->fr) {
    strobe_flight_recorder_stats fs = strobe_flight_recorder_query_stats(v->fr);
    strobe_flight_recorder_desc fd = strobe_flight_recorder_query_desc(v->fr);
    json_object_set_new(st, "recorder",
                        json_pack("{s:I,s:I,s:I,s:f,s:I,s:i,s:i}", "capacity_bytes", (json_int_t)fs.capacity_bytes,
                                  "retained_bytes", (json_int_t)fs.retained_bytes, "retained_events",
                                  (json_int_t)fs.retained_events, "retained_seconds", fs.retained_seconds,
                                  "dropped_events", (json_int_t)fs.dropped_events, "max_mib", (int)fd.max_mib,
                                  "max_age_ms", (int)fd.max_age_ms));
  }
  if (v->model[0])
    json_object_set_new(st, "last_build", json_pack("{s:I,s:I,s:I,s:f}", "spans", (json_int_t)v->last_stats.spans,
                                                    "spans_cut", (json_int_t)v->last_stats.spans_cut, "model_bytes",
                                                    (json_int_t)v->last_stats.model_bytes, "build_ms",
                                                    v->last_stats.build_ms));
  return st;
}

static int queue_state(struct MHD_Connection *conn, strobe__viewer *v, unsigned status) {
  strobe__mutex_lock(&v->lock);
  json_t *st = state_json(v);
  strobe__mutex_unlock(&v->lock);
  return strobe__queue_value(conn, status, st);
}

/* Asks the worker for a snapshot when recording; returns 1 when one is coming. */
static int request_snapshot(strobe__viewer *v) {
  strobe__mutex_lock(&v->lock);
  int ok = v->show == SHOW_LIVE && v->fr && !ensure_worker(v);
  if (ok) {
    v->want_snapshot = 1;
    pthread_cond_broadcast(&v->cond);
  }
  strobe__mutex_unlock(&v->lock);
  return ok;
}

static int set_recording(strobe__viewer *v, int on, const strobe_flight_recorder_desc *desc) {
  strobe__mutex_lock(&v->lock);
  int rc = 0;
  if (v->show != SHOW_LIVE) {
    rc = STROBE_ESTATE;
  } else if (on) {
    if (v->fr || v->want_stop) {
      rc = STROBE_ESTATE;
    } else if ((rc = ensure_worker(v)) == 0) {
      rc = strobe_flight_recorder_start(desc, &v->fr);
      if (rc) v->fr = NULL;
    }
  } else {
    if (!v->fr || v->want_stop) {
      rc = STROBE_ESTATE;
    } else {
      v->want_stop = 1;
      pthread_cond_broadcast(&v->cond);
    }
  }
  strobe__mutex_unlock(&v->lock);
  return rc;
}

static int wants_compare(struct MHD_Connection *conn) {
  const char *c = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "capture");
  return c && !strcmp(c, "1");
}

/* Takes a reference to the model a request names, or NULL. */
static strobe__vmodel *model_for(strobe__viewer *v, int slot, uint64_t *gen) {
  strobe__mutex_lock(&v->lock);
  strobe__vmodel *m = strobe__vmodel_retain(v->model[slot]);
  *gen = v->generation;
  strobe__mutex_unlock(&v->lock);
  return m;
}

static int api_meta(strobe__viewer *v, struct MHD_Connection *conn) {
  const char *live = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "live");
  if (live && !strcmp(live, "1") && request_snapshot(v)) return queue_state(conn, v, MHD_HTTP_ACCEPTED);
  uint64_t gen;
  strobe__vmodel *m = model_for(v, wants_compare(conn), &gen);
  if (!m) return strobe__queue_error(conn, MHD_HTTP_NOT_FOUND, "no_capture",
                                     "nothing to show yet: open a file with `strobe view`, or start recording");
  int ret = queue_model_bytes(conn, m, m->meta, m->meta_len, "application/json");
  strobe__vmodel_release(m);
  return ret;
}

/* ?since=T on the spans table (docs/viewer.md §Live append): only the spans
 * ending after T (ns since this model's start) and each lane row's first
 * span, with their indexes (strobe__vmodel_spans_since's layout), so a live
 * viewer fetches only what is new since the snapshot it shows. */
static int api_spans_since(struct MHD_Connection *conn, const strobe__vmodel *m, const char *name, const char *since) {
  if (strcmp(name, "spans"))
    return strobe__queue_error(conn, MHD_HTTP_BAD_REQUEST, "invalid_argument", "since applies to the spans table only");
  char *end = NULL;
  errno = 0;
  double t = strtod(since, &end);
  if (!*since || !end || *end || errno || !isfinite(t))
    return strobe__queue_error(conn, MHD_HTTP_BAD_REQUEST, "invalid_argument", "since must be a finite number of ns");
  unsigned char *data = NULL;
  size_t len = 0;
  int rc = strobe__vmodel_spans_since(m, t, &data, &len);
  if (rc) return strobe__queue_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, strobe_err_name(rc), strobe_strerror(rc));
  struct MHD_Response *r = strobe__owned_response(data, len, "application/octet-stream");
  if (!r) return MHD_NO;
  enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
  MHD_destroy_response(r);
  return ret;
}

static int api_table(strobe__viewer *v, struct MHD_Connection *conn, const char *name) {
  uint64_t gen;
  int slot = wants_compare(conn);
  strobe__vmodel *m = model_for(v, slot, &gen);
  if (!m) return strobe__queue_error(conn, MHD_HTTP_NOT_FOUND, "no_capture", "nothing to show yet");
  const char *want = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "gen");
  if (want && slot == 0 && strtoull(want, NULL, 10) != gen) {
    strobe__vmodel_release(m);
    return strobe__queue_error(conn, MHD_HTTP_CONFLICT, "stale_generation",
                               "a newer snapshot replaced that one: fetch /api/capture/meta again");
  }
  const char *since = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "since");
  if (since) {
    int ret = api_spans_since(conn, m, name, since);
    strobe__vmodel_release(m);
    return ret;
  }
  const strobe__vtable *t = strobe__vmodel_table(m, name);
  int ret = t ? queue_model_bytes(conn, m, t->data, t->bytes, "application/octet-stream")
              : strobe__queue_error(conn, MHD_HTTP_NOT_FOUND, "not_found", "no such table");
  strobe__vmodel_release(m);
  return ret;
}

/* GET /api/capture/image/<k>: an image attachment the model kept (a frame's
 * screenshot for the deep-capture tab and the UI-tree outline; the meta's
 * attachments[i].image is k). Local content for the local viewer only: MCP
 * never serves it (docs/sessions.md §Content). */
static int api_image(strobe__viewer *v, struct MHD_Connection *conn, const char *index) {
  uint64_t gen;
  strobe__vmodel *m = model_for(v, wants_compare(conn), &gen);
  if (!m) return strobe__queue_error(conn, MHD_HTTP_NOT_FOUND, "no_capture", "nothing to show yet");
  char *end = NULL;
  unsigned long k = strtoul(index, &end, 10);
  const strobe__vblob *x = *index && end && !*end ? strobe__vmodel_blob(m, (uint32_t)k) : NULL;
  int ret = x ? queue_model_bytes(conn, m, x->data, x->len, x->media_type)
              : strobe__queue_error(conn, MHD_HTTP_NOT_FOUND, "not_found", "no such image in this capture");
  strobe__vmodel_release(m);
  return ret;
}

static int api_recorder(strobe__viewer *v, struct MHD_Connection *conn, const char *body, size_t len) {
  json_t *args = len ? json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL) : NULL;
  json_t *rec = json_object_get(args, "recording");
  if (!json_is_boolean(rec)) {
    json_decref(args);
    return strobe__queue_error(conn, MHD_HTTP_BAD_REQUEST, "invalid_argument", "the body must be {\"recording\": true|false}");
  }
  int on = json_is_true(rec);
  json_decref(args);
  int rc = set_recording(v, on, NULL);
  if (rc == STROBE_ESTATE)
    return strobe__queue_error(conn, MHD_HTTP_CONFLICT, "invalid_state",
                               on ? "already recording, or showing a file" : "not recording");
  if (rc) return strobe__queue_error(conn, rc == STROBE_ELIMIT ? MHD_HTTP_TOO_MANY_REQUESTS : MHD_HTTP_INTERNAL_SERVER_ERROR,
                                     strobe_err_name(rc), strobe_strerror(rc));
  return queue_state(conn, v, on ? MHD_HTTP_OK : MHD_HTTP_ACCEPTED);
}

/* An explainer of what is shown now (viewer_internal.h's source): the file's is kept (v->ex, under v->lock) until
 * another file is shown; a live recording's is built from a fresh dump each time and *owned set. */
static int explainer(strobe_server *s, strobe__viewer *v, strobe_explain **out, int *owned) {
  *out = NULL;
  *owned = 0;
  strobe__mutex_lock(&v->lock);
  int cached = v->ex && v->ex_generation == v->generation && v->show == SHOW_FILE && !v->fr;
  if (cached) *out = v->ex;
  uint64_t gen = v->generation;
  strobe__mutex_unlock(&v->lock);
  if (cached) return 0;
  int fd;
  const char *source;
  int rc = strobe__viewer_explain_source(s, &fd, &source);
  if (rc) return rc;
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  rc = strobe_explain_open(path, NULL, out); /* keeps nothing of the file */
  close(fd);
  if (rc || strcmp(source, "file")) {
    *owned = !rc;
    return rc;
  }
  strobe__mutex_lock(&v->lock);
  strobe_explain_destroy(v->ex);
  v->ex = *out;
  v->ex_generation = gen;
  strobe__mutex_unlock(&v->lock);
  return 0;
}

/* GET /api/capture/explain?number=N (docs/viewer.md §Explanation): the explanation of the first frame numbered N,
 * with run-time names (the viewer is local: docs/explain.md §JSON). On libmicrohttpd's thread, as every request: the
 * first one on a file, and each on a live recording, read the capture three times (strobe_explain_open). */
/* ?excess=1: every ended frame's excess over its norm (strobe_explain_excess) as [kind, number, thread (the capture
 * thread it began on), excess_ns] rows. */
static int queue_excess(struct MHD_Connection *conn, const strobe_explain *e) {
  const strobe_frames *fx = strobe_explain_query_frames(e);
  uint32_t n = strobe_frames_query_count(fx);
  double *excess = malloc(((size_t)n + 1) * sizeof *excess);
  json_t *rows = json_array();
  int rc = excess && rows ? strobe_explain_excess(e, excess) : STROBE_ENOMEM;
  for (uint32_t i = 0; !rc && i < n; i++) {
    const strobe_frame *f = strobe_frames_query_frame(fx, i);
    if (isnan(excess[i])) continue;
    json_array_append_new(rows, json_pack("[s,I,i,f]", f->kind ? strobe_op_kind_name(f->kind) : "frame",
                                          (json_int_t)f->number, (int)f->thread, excess[i]));
  }
  free(excess);
  if (rc) {
    json_decref(rows);
    return strobe__queue_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, strobe_err_name(rc), strobe_strerror(rc));
  }
  return strobe__queue_value(conn, MHD_HTTP_OK, json_pack("{s:o}", "frames", rows));
}

/* The frame numbered `number` that began on capture thread `thread` (a decimal index; NULL: the first of that number
 * on any thread, strobe_frames_find): marks are numbered per thread, passes per window. */
static uint32_t frame_numbered(const strobe_frames *fx, uint64_t number, const char *thread) {
  char *end = NULL;
  unsigned long t = thread && *thread ? strtoul(thread, &end, 10) : 0;
  if (!end || *end) return strobe_frames_find(fx, number, STROBE_FRAMES_NONE);
  uint32_t n = strobe_frames_query_count(fx);
  for (uint32_t i = 0; i < n; i++) {
    const strobe_frame *f = strobe_frames_query_frame(fx, i);
    if (f->number == number && f->thread == t) return i;
  }
  return STROBE_FRAMES_NONE;
}

static int api_explain(strobe_server *s, strobe__viewer *v, struct MHD_Connection *conn) {
  int excess = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "excess") != NULL;
  const char *arg = excess ? "0" : MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "number");
  char *end = NULL;
  errno = 0;
  unsigned long long number = arg && *arg >= '0' && *arg <= '9' ? strtoull(arg, &end, 10) : 0;
  if (!end || *end || errno)
    return strobe__queue_error(conn, MHD_HTTP_BAD_REQUEST, "invalid_arguments", "number=N: the frame's number");
  strobe_explain *e;
  int owned, rc = explainer(s, v, &e, &owned);
  if (rc == STROBE_ESTATE)
    return strobe__queue_error(conn, MHD_HTTP_CONFLICT, "nothing_recording", "no file shown and nothing recording");
  if (rc) return strobe__queue_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, strobe_err_name(rc), strobe_strerror(rc));
  if (excess) {
    int ret = queue_excess(conn, e);
    if (owned) strobe_explain_destroy(e);
    return ret;
  }
  uint32_t i = frame_numbered(strobe_explain_query_frames(e), number,
                              MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "thread"));
  char *json = NULL;
  size_t len = 0;
  rc = i == STROBE_FRAMES_NONE ? STROBE_ERANGE : strobe_explain_json(e, &i, 1, STROBE_EXPLAIN_JSON_CONTENT, &json, &len);
  if (owned) strobe_explain_destroy(e);
  if (rc == STROBE_ERANGE) return strobe__queue_error(conn, MHD_HTTP_NOT_FOUND, "no_such_frame", "no frame of that number");
  if (rc) return strobe__queue_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, strobe_err_name(rc), strobe_strerror(rc));
  return strobe__queue_json(conn, MHD_HTTP_OK, json, len);
}

int strobe__viewer_api(strobe_server *s, struct MHD_Connection *conn, const char *url, const char *method,
                       const char *body, size_t len) {
  strobe__viewer *v = viewer_of(s);
  if (!v) return MHD_NO;
  int get = !strcmp(method, MHD_HTTP_METHOD_GET), post = !strcmp(method, MHD_HTTP_METHOD_POST);
  const char *sub = url + strlen("/api/capture/");
  if (!strcmp(sub, "state")) {
    if (!get) return strobe__queue_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method_not_allowed", "use GET");
    return queue_state(conn, v, MHD_HTTP_OK);
  }
  if (!strcmp(sub, "meta")) {
    if (!get) return strobe__queue_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method_not_allowed", "use GET");
    return api_meta(v, conn);
  }
  if (!strncmp(sub, "table/", 6)) {
    if (!get) return strobe__queue_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method_not_allowed", "use GET");
    return api_table(v, conn, sub + 6);
  }
  if (!strncmp(sub, "image/", 6)) {
    if (!get) return strobe__queue_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method_not_allowed", "use GET");
    return api_image(v, conn, sub + 6);
  }
  if (!strcmp(sub, "recorder")) {
    if (get) return queue_state(conn, v, MHD_HTTP_OK);
    if (!post) return strobe__queue_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method_not_allowed", "use GET or POST");
    return api_recorder(v, conn, body, len);
  }
  if (!strcmp(sub, "explain")) {
    if (!get) return strobe__queue_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method_not_allowed", "use GET");
    return api_explain(s, v, conn);
  }
  if (!strcmp(sub, "snapshot")) {
    if (!post) return strobe__queue_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method_not_allowed", "use POST");
    if (!request_snapshot(v))
      return strobe__queue_error(conn, MHD_HTTP_CONFLICT, "not_recording", "start recording first");
    return queue_state(conn, v, MHD_HTTP_ACCEPTED);
  }
  return strobe__queue_error(conn, MHD_HTTP_NOT_FOUND, "not_found", "no such endpoint");
}

/* >>api */
static const char *base_name(const char *path) {
  const char *b = strrchr(path, '/');
  return b ? b + 1 : path;
}

int strobe_server_view_file(strobe_server *s, const char *path, const char *compare, uint32_t max_spans,
                            strobe_viewer_load_stats *stats) {
  if (!s || !path || max_spans > STROBE_VIEWER_MAX_MAX_SPANS) return STROBE_EINVAL;
  strobe__viewer *v = viewer_of(s);
  if (!v) return STROBE_ENOMEM;
  strobe__mutex_lock(&v->lock);
  int recording = v->fr != NULL || v->want_stop;
  uint64_t gen = ++v->next_generation;
  strobe__mutex_unlock(&v->lock);
  if (recording) return STROBE_ESTATE;
  if (!max_spans) max_spans = STROBE_VIEWER_DEFAULT_MAX_SPANS;
  strobe__vmodel *m[2] = {NULL, NULL};
  strobe__vsource a = {path, NULL, 0, base_name(path), "file"};
  int rc = strobe__vmodel_build(&a, max_spans, gen, &m[0]);
  if (!rc && compare) {
    strobe__vsource b = {compare, NULL, 0, base_name(compare), "file"};
    rc = strobe__vmodel_build(&b, max_spans, gen, &m[1]);
  }
  if (rc) {
    strobe__vmodel_release(m[0]);
    strobe__vmodel_release(m[1]);
    return rc;
  }
  strobe_viewer_load_stats st = stats_of(m[0]);
  char *file = strdup(path); /* NULL when out of memory: the file is shown, strobe_profile_explain says nothing_recording */
  strobe__mutex_lock(&v->lock);
  free(v->file);
  v->file = file;
  v->show = SHOW_FILE;
  v->last_stats = st;
  v->last_error = 0;
  install(v, 1, m[1], gen);
  install(v, 0, m[0], gen);
  strobe__mutex_unlock(&v->lock);
  if (stats) *stats = st;
  return 0;
}

/* >>explain: the capture strobe_profile_explain reads (server_internal.h). Dumping under v->lock keeps the worker from
 * stopping the recorder meanwhile (it takes fr out under the lock first); the worker's own snapshot may dump at the
 * same time, which the recorder serialises (strobe/flight.h). */
int strobe__viewer_explain_source(strobe_server *s, int *fd, const char **source) {
  *fd = -1;
  *source = NULL;
  strobe__viewer *v = s ? __atomic_load_n(&s->viewer, __ATOMIC_ACQUIRE) : NULL;
  if (!v) return STROBE_ESTATE;
  strobe__mutex_lock(&v->lock);
  int rc = STROBE_ESTATE;
  if (v->fr && !v->want_stop) {
    *source = "live";
    *fd = memfd_create("strobe-explain-snapshot", MFD_CLOEXEC);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", *fd);
    rc = *fd < 0 ? STROBE_EIO : strobe_flight_recorder_dump(v->fr, path);
  } else if (v->show == SHOW_FILE && v->file) {
    *source = "file";
    *fd = open(v->file, O_RDONLY | O_CLOEXEC);
    rc = *fd < 0 ? STROBE_EIO : 0;
  }
  strobe__mutex_unlock(&v->lock);
  if (rc && *fd >= 0) {
    close(*fd);
    *fd = -1;
  }
  return rc;
}

int strobe_server_record_start(strobe_server *s, const strobe_flight_recorder_desc *desc) {
  if (!s) return STROBE_EINVAL;
  strobe__viewer *v = viewer_of(s);
  return v ? set_recording(v, 1, desc) : STROBE_ENOMEM;
}

int strobe_server_record_stop(strobe_server *s) {
  if (!s) return STROBE_EINVAL;
  strobe__viewer *v = viewer_of(s);
  if (!v) return STROBE_ENOMEM;
  strobe__mutex_lock(&v->lock);
  uint64_t before = v->stops_done;
  int pending = v->want_stop;
  strobe__mutex_unlock(&v->lock);
  int rc = pending ? 0 : set_recording(v, 0, NULL);
  if (rc) return rc;
  strobe__mutex_lock(&v->lock);
  while (v->stops_done == before && !v->quit) strobe__cond_wait(&v->cond, &v->lock);
  strobe__mutex_unlock(&v->lock);
  return 0;
}

int strobe_server_recording(const strobe_server *s) {
  if (!s) return 0;
  strobe__viewer *v = __atomic_load_n(&s->viewer, __ATOMIC_ACQUIRE);
  if (!v) return 0;
  strobe__mutex_lock(&v->lock);
  int on = v->fr != NULL && !v->want_stop;
  strobe__mutex_unlock(&v->lock);
  return on;
}
