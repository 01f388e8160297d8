/*
 * stream.c — GET /api/capture/stream: one live capture stream
 * (strobe_stream_start, libstrobe's bounded-queue event consumer) per
 * client, sent as a chunked HTTP body. The drain thread queues blocks and
 * calls on_ready; libmicrohttpd's thread pulls them in stream_reader and
 * parks the connection (MHD_suspend_connection) while nothing is queued, so
 * an idle stream costs no CPU.
 *
 * Owns: the stream slots, their connection pointers and suspend state, the
 * per-client loss totals folded into the server's counters.
 * Must never: block the drain thread (on_ready only flips a flag and wakes
 * libmicrohttpd), touch a connection after libmicrohttpd released its
 * response, hold a slot lock while taking another Strobe lock, or leave a
 * connection suspended when the daemon stops.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <microhttpd.h>

#include "strobe/record.h"
#include "server/server_internal.h"

#define STREAM_BLOCK 65536          /* bytes libmicrohttpd asks for per reader call */
#define CLOSE_WAIT_MS 500           /* how long stop lets streams send their last chunk */

struct strobe__stream_slot {
  strobe__stream_slot *next;        /* server's list, under streams_lock */
  strobe_server *server;
  strobe_stream *stream;
  strobe__mutex lock;             /* conn and suspended */
  struct MHD_Connection *conn;      /* NULL once the response is released */
  int suspended;
  int closing;                      /* atomic: the server is stopping */
};

/* Bytes were queued: called on the drain thread, or once more by the thread
 * stopping the stream (its footer); libstrobe's capture/stream.c asserts it. */
static void on_ready(void *ctx) {
  strobe__stream_slot *sl = ctx;
  strobe__mutex_lock(&sl->lock);
  if (sl->suspended && sl->conn) {
    sl->suspended = 0;
    MHD_resume_connection(sl->conn); /* flags it and wakes the polling thread */
  }
  strobe__mutex_unlock(&sl->lock);
}

/* libmicrohttpd's thread: the next piece of the body. */
static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max) {
  (void)pos;
  strobe__stream_slot *sl = cls;
  if (__atomic_load_n(&sl->closing, __ATOMIC_ACQUIRE)) return MHD_CONTENT_READER_END_OF_STREAM;
  size_t n = strobe_stream_read(sl->stream, buf, max);
  if (n) {
    __atomic_fetch_add(&sl->server->stream_bytes, n, __ATOMIC_RELAXED);
    return (ssize_t)n;
  }
  strobe_stream_stats st = strobe_stream_query_stats(sl->stream);
  if (st.error) return MHD_CONTENT_READER_END_WITH_ERROR;
  if (st.stopped) return MHD_CONTENT_READER_END_OF_STREAM;
  strobe__mutex_lock(&sl->lock);
  int closing = __atomic_load_n(&sl->closing, __ATOMIC_ACQUIRE);
  if (!closing) sl->suspended = 1;
  strobe__mutex_unlock(&sl->lock);
  if (closing) return MHD_CONTENT_READER_END_OF_STREAM;
  /* If on_ready resumed between the unlock and here, libmicrohttpd treats
   * this suspend as cancelled and calls us again: no wake-up is lost. */
  MHD_suspend_connection(sl->conn);
  return 0;
}

/* libmicrohttpd released the response: the client left or the stream ended. */
static void stream_free(void *cls) {
  strobe__stream_slot *sl = cls;
  strobe_server *s = sl->server;
  strobe__mutex_lock(&sl->lock);
  sl->conn = NULL; /* on_ready may still run until the consumer is removed below */
  sl->suspended = 0;
  strobe__mutex_unlock(&sl->lock);
  strobe_stream_stats st = strobe_stream_query_stats(sl->stream);
  strobe_stream_free(sl->stream); /* removes the consumer: no on_ready after this */
  strobe__mutex_lock(&s->streams_lock);
  __atomic_fetch_add(&s->stream_events_dropped, st.events_dropped, __ATOMIC_RELAXED);
  __atomic_fetch_add(&s->stream_drop_episodes, st.drop_episodes, __ATOMIC_RELAXED);
  for (strobe__stream_slot **p = &s->streams; *p; p = &(*p)->next) {
    if (*p == sl) {
      *p = sl->next;
      break;
    }
  }
  s->nstreams--;
  strobe__mutex_unlock(&s->streams_lock);
  strobe__mutex_destroy(&sl->lock);
  free(sl);
}

int strobe__stream_open(strobe_server *s, struct MHD_Connection *conn) {
  strobe__mutex_lock(&s->streams_lock);
  int full = s->stopping || s->nstreams >= s->desc.max_streams;
  if (!full) s->nstreams++; /* reserved; released by stream_free or below */
  strobe__mutex_unlock(&s->streams_lock);
  if (full)
    return strobe__queue_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "limit_reached",
                               "the live stream limit (max_streams) is reached");
  strobe__stream_slot *sl = calloc(1, sizeof *sl);
  int rc = STROBE_ENOMEM;
  if (sl) {
    strobe__mutex_init(&sl->lock);
    sl->server = s;
    sl->conn = conn;
    strobe_stream_desc d = {.max_queue_bytes = s->desc.stream_queue_bytes, .ready = on_ready, .ready_ctx = sl};
    rc = strobe_stream_start(&d, &sl->stream);
  }
  struct MHD_Response *r = NULL;
  if (rc == 0) r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK, stream_reader, sl, stream_free);
  if (!r) {
    if (sl) {
      strobe_stream_free(sl->stream);
      strobe__mutex_destroy(&sl->lock);
      free(sl);
    }
    strobe__mutex_lock(&s->streams_lock);
    s->nstreams--;
    strobe__mutex_unlock(&s->streams_lock);
    if (rc == STROBE_ELIMIT)
      return strobe__queue_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "limit_reached",
                                 "8 event consumers (recorders, streams) are already active");
    if (rc == STROBE_EFEATURE_DISABLED)
      return strobe__queue_error(conn, MHD_HTTP_NOT_IMPLEMENTED, "feature_disabled",
                                 "profiling is compiled out of this build");
    return strobe__queue_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", "could not start the stream");
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/vnd.strobe.capture");
  MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
  strobe__mutex_lock(&s->streams_lock);
  sl->next = s->streams;
  s->streams = sl;
  strobe__mutex_unlock(&s->streams_lock);
  enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
  MHD_destroy_response(r); /* the connection holds it now; stream_free runs when it lets go */
  return ret;
}

void strobe__streams_close_all(strobe_server *s) {
  strobe__mutex_lock(&s->streams_lock);
  s->stopping = 1;
  for (strobe__stream_slot *sl = s->streams; sl; sl = sl->next) {
    strobe__mutex_lock(&sl->lock);
    __atomic_store_n(&sl->closing, 1, __ATOMIC_RELEASE);
    if (sl->suspended && sl->conn) {
      sl->suspended = 0;
      MHD_resume_connection(sl->conn);
    }
    strobe__mutex_unlock(&sl->lock);
  }
  strobe__mutex_unlock(&s->streams_lock);
  /* Resumed streams end their body on libmicrohttpd's thread (the reader
   * sees `closing` before it could park again, so none is suspended without
   * a pending resume, which MHD_stop_daemon processes first). Give them a
   * moment to send their last chunk; a client that stopped reading is
   * closed by the daemon's stop. */
  for (int waited = 0; waited < CLOSE_WAIT_MS; waited += 2) {
    strobe__mutex_lock(&s->streams_lock);
    uint32_t n = s->nstreams;
    strobe__mutex_unlock(&s->streams_lock);
    if (n == 0) break;
    nanosleep(&(struct timespec){0, 2000000}, NULL);
  }
}

void strobe__streams_json(strobe_server *s, json_t *out) {
  strobe__mutex_lock(&s->streams_lock);
  for (strobe__stream_slot *sl = s->streams; sl; sl = sl->next) {
    strobe_stream_stats st = strobe_stream_query_stats(sl->stream);
    json_array_append_new(out, json_pack("{s:I,s:I,s:I,s:I,s:I,s:b}", "bytes_produced", (json_int_t)st.bytes_produced,
                                         "bytes_sent", (json_int_t)st.bytes_read, "bytes_queued",
                                         (json_int_t)st.bytes_queued, "events_dropped", (json_int_t)st.events_dropped,
                                         "drop_episodes", (json_int_t)st.drop_episodes, "failed", st.error != 0));
  }
  strobe__mutex_unlock(&s->streams_lock);
}

void strobe__streams_totals(strobe_server *s, strobe_server_stats *st) {
  strobe__mutex_lock(&s->streams_lock);
  st->streams = s->nstreams;
  st->stream_events_dropped = __atomic_load_n(&s->stream_events_dropped, __ATOMIC_RELAXED);
  st->stream_drop_episodes = __atomic_load_n(&s->stream_drop_episodes, __ATOMIC_RELAXED);
  for (strobe__stream_slot *sl = s->streams; sl; sl = sl->next) {
    strobe_stream_stats ss = strobe_stream_query_stats(sl->stream);
    st->stream_events_dropped += ss.events_dropped;
    st->stream_drop_episodes += ss.drop_episodes;
  }
  strobe__mutex_unlock(&s->streams_lock);
}
