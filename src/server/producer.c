/*
 * producer.c — POST /api/producer/spans: a process in another language adds
 * its spans to the live capture, on lanes of its own (docs/server.md
 * §External producers; the batch format: producer_batch.h). Authenticated
 * like every route; answered on the MHD thread.
 *
 * Owns: the spans-per-second budget (a token bucket holding one second of
 * the rate, refilled as time passes; the MHD thread alone touches it) and
 * the endpoint's counters. Must never: write part of a batch (the batch is
 * parsed and checked whole, its lanes and names made, and only then written
 * in one strobe_producer_spans_add call, which is itself whole or nothing), or
 * answer success for spans nothing recorded.
 */
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "collect/collect.h" /* strobe__recording_since_mono_ns */
#include "server/producer_batch.h"
#include "server/server_internal.h"
#include "strobe/producer.h"

static int recording(void) {
  return (__atomic_load_n(&strobe__active, __ATOMIC_ACQUIRE) & STROBE__ACTIVE_EVENTS) != 0;
}

static int refused(strobe_server *s, struct MHD_Connection *conn, unsigned status, const char *name,
                   const char *message) {
  __atomic_fetch_add(&s->producer_refused, 1, __ATOMIC_RELAXED);
  return strobe__queue_error(conn, status, name, message);
}

/* The times a span may have (docs/server.md §External producers): from 1 s before the capture that has recorded
 * longest began (a producer's clock read just before it) to 60 s past now (a batch in flight, a clock read
 * early); outside is a client's mistake, never placed days or minutes away on the timeline. */
#define EARLY_NS 1000000000ull
#define LATE_NS 60000000000ull

/* Refuses the first span outside [capture start - 1 s, now + 60 s]: 1 (answered in *ret), else 0. */
static int out_of_bounds(strobe_server *s, struct MHD_Connection *conn, const strobe__batch *b, int *ret) {
  uint64_t start = strobe__recording_since_mono_ns(), now = strobe__mono_ns();
  uint64_t lo = start > EARLY_NS ? start - EARLY_NS : 0, hi = now + LATE_NS;
  for (uint32_t i = 0; i < b->n_spans; i++) {
    const strobe__batch_span *in = &b->spans[i];
    if (in->begin >= lo && in->end <= hi) continue;
    char msg[320];
    snprintf(msg, sizeof msg, "spans[%u]: %s %llu ns lies %s (monotonic ns %llu): spans lie between 1 s before the "
             "capture began and 60 s from now", i, in->begin < lo ? "begin" : "end",
             (unsigned long long)(in->begin < lo ? in->begin : in->end),
             in->begin < lo ? "before the capture began" : "more than 60 s from now",
             (unsigned long long)(in->begin < lo ? lo + EARLY_NS : now));
    *ret = refused(s, conn, MHD_HTTP_BAD_REQUEST, "bad_batch", msg);
    return 1;
  }
  return 0;
}

/* Takes n spans from the budget, or nothing: 1 when they fit. */
static int budget_take(strobe_server *s, uint32_t n) {
  uint64_t now = strobe__mono_ms();
  double rate = (double)s->desc.producer_spans_per_second;
  if (!s->producer_last_ms) s->producer_tokens = rate;
  else s->producer_tokens += (double)(now - s->producer_last_ms) * rate / 1000.0;
  if (s->producer_tokens > rate) s->producer_tokens = rate;
  s->producer_last_ms = now;
  if (s->producer_tokens < (double)n) return 0;
  s->producer_tokens -= (double)n;
  return 1;
}

/* Creates (or finds) the batch's lanes. Returns 0, or 1 with the refusal
 * queued in *ret. */
static int open_lanes(strobe_server *s, struct MHD_Connection *conn, const strobe__batch *b,
                      strobe_producer_lane *lanes, int *ret) {
  char msg[320];
  for (uint32_t i = 0; i < b->n_lanes; i++) {
    int rc = strobe_producer_lane_create(&(strobe_producer_lane_desc){.name = b->lanes[i]}, &lanes[i]);
    if (rc) {
      snprintf(msg, sizeof msg, "lanes[%u] \"%s\": %s%s", i, b->lanes[i], strobe_strerror(rc),
               rc == STROBE_ELIMIT ? " (at most 64 lanes per process, STROBE_MAX_PRODUCER_LANES)"
               : rc == STROBE_EBUSY ? " (the process declared this lane in a clock domain)"
                                    : "");
      *ret = refused(s, conn, rc == STROBE_ELABEL ? MHD_HTTP_BAD_REQUEST : MHD_HTTP_CONFLICT,
                     rc == STROBE_ELIMIT ? "lane_limit" : rc == STROBE_ELABEL ? "bad_batch" : "lane_refused", msg);
      return 1;
    }
  }
  return 0;
}

/* Interns the batch's span names as producer scope sites. Returns 0, or 1
 * with the refusal queued in *ret. */
static int intern_names(strobe_server *s, struct MHD_Connection *conn, const strobe__batch *b, strobe_site **sites,
                        int *ret) {
  char msg[320];
  for (uint32_t i = 0; i < b->n_names; i++) {
    sites[i] = strobe_site_intern(b->names[i], b->name_len[i], "producer", STROBE_SITE_SCOPE);
    int rc = strobe_site_query_error(sites[i]);
    if (rc) {
      snprintf(msg, sizeof msg, "names[%u]: %s%s", i, strobe_strerror(rc),
               rc == STROBE_ELIMIT ? " (the process's run-time names are full, STROBE_MAX_INTERNED)" : "");
      *ret = refused(s, conn, rc == STROBE_ELIMIT ? MHD_HTTP_CONFLICT : MHD_HTTP_BAD_REQUEST,
                     rc == STROBE_ELIMIT ? "name_limit" : "bad_batch", msg);
      return 1;
    }
  }
  return 0;
}

int strobe__api_producer(strobe_server *s, struct MHD_Connection *conn, const char *method, const char *body,
                         size_t len) {
  if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
    return strobe__queue_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method_not_allowed", "use POST");
  strobe__batch *b = malloc(sizeof *b);
  strobe_producer_span *spans = NULL;
  if (!b) return MHD_NO;
  char why[256], msg[320];
  int ret, rc = strobe__batch_parse(body, len, b, why, sizeof why);
  if (rc) {
    ret = refused(s, conn, rc == STROBE_ELIMIT ? MHD_HTTP_CONTENT_TOO_LARGE : MHD_HTTP_BAD_REQUEST,
                  rc == STROBE_ELIMIT ? "batch_too_large" : rc == STROBE_EVERSION ? "unsupported_version" : "bad_batch",
                  why);
    goto done;
  }
  if (!recording()) {
    ret = refused(s, conn, MHD_HTTP_CONFLICT, "nothing_recording",
                  "nothing records (no capture file, flight recorder or live stream): spans would go nowhere");
    goto done;
  }
  if (out_of_bounds(s, conn, b, &ret)) goto done;
  if (b->n_spans > s->desc.producer_spans_per_second || !budget_take(s, b->n_spans)) {
    __atomic_fetch_add(&s->producer_rate_limited, 1, __ATOMIC_RELAXED);
    snprintf(msg, sizeof msg, "over %u spans per second (producer_spans_per_second): the whole batch is refused",
             s->desc.producer_spans_per_second);
    ret = refused(s, conn, MHD_HTTP_TOO_MANY_REQUESTS, "rate_limited", msg);
    goto done;
  }
  strobe_producer_lane lanes[STROBE__BATCH_MAX_LANES];
  if (open_lanes(s, conn, b, lanes, &ret)) goto done;
  strobe_site *sites[STROBE__BATCH_MAX_NAMES];
  if (intern_names(s, conn, b, sites, &ret)) goto done;
  spans = malloc(b->n_spans * sizeof *spans);
  if (!spans) {
    ret = MHD_NO;
    goto done;
  }
  for (uint32_t i = 0; i < b->n_spans; i++) {
    const strobe__batch_span *in = &b->spans[i];
    uint64_t begin = strobe_clock_ticks_from_mono_ns(in->begin), end = strobe_clock_ticks_from_mono_ns(in->end);
    if (!begin) {
      snprintf(msg, sizeof msg, "spans[%u]: begins before this process's clock epoch (monotonic ns %llu)", i,
               (unsigned long long)in->begin);
      ret = refused(s, conn, MHD_HTTP_BAD_REQUEST, "bad_batch", msg);
      goto done;
    }
    spans[i] = (strobe_producer_span){.lane = lanes[in->lane], .site = sites[in->name], .begin_ticks = begin, .end_ticks = end};
  }
  rc = strobe_producer_spans_add(spans, b->n_spans);
  if (rc == 0) {
    ret = refused(s, conn, MHD_HTTP_CONFLICT, "nothing_recording", "recording stopped before the spans were written");
  } else if (rc < 0) {
    ret = refused(s, conn, rc == STROBE_ELIMIT ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_INTERNAL_SERVER_ERROR,
                  rc == STROBE_ELIMIT ? "ring_full" : "internal",
                  rc == STROBE_ELIMIT ? "the server thread's ring has no room for the batch: it was dropped whole "
                                        "(counted lost); send smaller batches or retry"
                                      : strobe_strerror(rc));
  } else {
    __atomic_fetch_add(&s->producer_batches, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&s->producer_spans, (uint64_t)rc, __ATOMIC_RELAXED);
    ret = strobe__queue_value(conn, MHD_HTTP_OK,
                              json_pack("{s:i,s:i,s:i}", "recorded", rc, "lanes", (int)b->n_lanes, "names",
                                        (int)b->n_names));
  }
done:
  free(spans);
  free(b);
  return ret;
}
