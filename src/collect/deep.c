/*
 * deep.c — attachments and deep captures (strobe/deep.h, docs/recording.md
 * §Attachments, §Deep capture): the copy of each attachment's content (rows
 * packed), the deep capture a renderer fills call by call, and the status
 * the server's tool reports; the request, the open deep capture's ownership
 * and the queue of items the drain hands to capture files are a hand-off
 * queue (handoff.h).
 *
 * Owns: every attachment and deep capture from the API call until the drain
 * gives it back (strobe__content_done), the request and status counters.
 * Must never: take a lock or allocate in strobe_deep_begin when nothing was
 * requested; hold more than STROBE_ATTACH_QUEUE_BYTES of content waiting
 * (what it refuses is counted); keep more than STROBE_DEEP_MAX_CALLS calls
 * per deep capture (counted); hand an item to anything but the drain.
 */
#include <stdlib.h>
#include <string.h>

#include "collect/collect.h"
#include "collect/handoff.h"

#define LABEL_MAX 64u     /* bytes of a kind, pipeline or pass label */
#define FIRST_CALLS 256u  /* the call array starts here and doubles up to STROBE_DEEP_MAX_CALLS */

static strobe__handoff g_q = STROBE__HANDOFF_INIT(0); /* request, open deep capture, queued items: bound by bytes */
static _Thread_local strobe__content *tls_open __attribute__((tls_model("initial-exec"))); /* the calling thread's open deep capture (g_q.open) */
static uint64_t g_queued_bytes;                  /* content bytes waiting (g_q.lock) */
static strobe_deep_status g_status;              /* attachments, refusals, the last deep capture written (g_q.lock) */

static void content_free(strobe__content *c) {
  if (!c) return;
  free(c->bytes);
  free(c->calls);
  free(c->refs);
  free(c->resources);
  free(c);
}

/* A capture file records: attachments and deep captures would have somewhere to go. */
static int recording(void) { return strobe__content_consumers() > 0; }

static int media_ok(const char *m) {
  if (!m) return 0;
  size_t n = strnlen(m, STROBE_MEDIA_TYPE_MAX + 1);
  if (n == 0 || n > STROBE_MEDIA_TYPE_MAX) return 0;
  for (size_t i = 0; i < n; i++) {
    char ch = m[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || strchr(".+/-", ch))) return 0;
  }
  return 1;
}

static int label_ok(const char *s) {
  if (!s) return 0;
  size_t n = strnlen(s, LABEL_MAX + 1);
  if (n == 0 || n > LABEL_MAX) return 0;
  for (size_t i = 0; i < n; i++) {
    char ch = s[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || strchr("_.:-", ch)))
      return 0;
  }
  return 1;
}

/* >>attach */
static int attach(const strobe_attachment *a, uint64_t frame) {
  if (!STROBE__PROFILING) return STROBE_EFEATURE_DISABLED;
  if (!a || a->resource == 0 || !media_ok(a->media_type) || !a->bytes) return STROBE_EINVAL;
  size_t size = a->size;
  if (a->row_bytes) {
    if (a->stride < a->row_bytes || a->height == 0) return STROBE_EINVAL;
    if (a->row_bytes > STROBE_ATTACH_MAX_BYTES || a->height > STROBE_ATTACH_MAX_BYTES / a->row_bytes) {
      strobe__mutex_lock(&g_q.lock);
      g_status.refused++;
      strobe__mutex_unlock(&g_q.lock);
      return STROBE_ELIMIT;
    }
    size = a->row_bytes * a->height;
  }
  if (size == 0) return STROBE_EINVAL;
  if (!recording()) return STROBE_ESTATE;
  if (size > STROBE_ATTACH_MAX_BYTES) {
    strobe__mutex_lock(&g_q.lock);
    g_status.refused++;
    strobe__mutex_unlock(&g_q.lock);
    return STROBE_ELIMIT;
  }
  strobe__content *c = calloc(1, sizeof *c);
  uint8_t *bytes = malloc(size);
  if (!c || !bytes) {
    free(c);
    free(bytes);
    return STROBE_ENOMEM;
  }
  if (a->row_bytes) { /* row padding stripped: rows packed one after the other */
    const uint8_t *src = a->bytes;
    for (uint32_t y = 0; y < a->height; y++) memcpy(bytes + (size_t)y * a->row_bytes, src + (size_t)y * a->stride, a->row_bytes);
  } else {
    memcpy(bytes, a->bytes, size);
  }
  c->type = STROBE__CONTENT_ATTACH;
  c->frame = frame;
  c->ticks = strobe__now();
  c->resource = a->resource;
  memcpy(c->media_type, a->media_type, strlen(a->media_type) + 1);
  c->width = a->width;
  c->height = a->height;
  c->size = size;
  c->bytes = bytes;
  strobe__mutex_lock(&g_q.lock);
  int full = g_queued_bytes + size > STROBE_ATTACH_QUEUE_BYTES;
  if (full) {
    g_status.refused++;
  } else {
    g_queued_bytes += size;
    g_status.attachments++;
    g_status.attachment_bytes += size;
    strobe__handoff_push_locked(&g_q, c); /* the drain takes it at its next pass */
  }
  strobe__mutex_unlock(&g_q.lock);
  if (full) {
    content_free(c);
    return STROBE_ELIMIT;
  }
  return 0;
}

int strobe_attach(const strobe_attachment *a) { return attach(a, a ? a->frame : 0); }

/* >>deep */
int strobe_deep_request(void) {
  if (!STROBE__PROFILING) return STROBE_EFEATURE_DISABLED;
  if (!recording()) return STROBE_ESTATE;
  strobe__handoff_request(&g_q);
  return 0;
}

int strobe_deep_begin(uint64_t frame) {
  if (!strobe__handoff_requested(&g_q)) return 0;
  if (tls_open) return 0; /* this thread's deep capture is still open: the request waits */
  strobe__content *c = calloc(1, sizeof *c);
  if (!c) return 0; /* the request stays pending */
  c->seq = strobe__handoff_begin(&g_q, c, recording);
  if (!c->seq) {
    free(c);
    return 0;
  }
  tls_open = c;
  c->type = STROBE__CONTENT_DEEP;
  c->frame = frame;
  c->ticks = strobe__now();
  return 1;
}

/* The index of a label in the deep capture's table (the same pointer first,
 * then the same text); -1 when the table is full. */
static int label_of(strobe__content *c, const char *s) {
  for (uint32_t i = 0; i < c->nlabels; i++)
    if (c->labels[i] == s || strcmp(c->labels[i], s) == 0) return (int)i;
  if (c->nlabels == STROBE_DEEP_MAX_LABELS) return -1;
  c->labels[c->nlabels] = s;
  return (int)c->nlabels++;
}

int strobe_deep_call(const strobe_draw_call *call) {
  strobe__content *c = tls_open;
  if (!c) return STROBE_ESTATE;
  if (!call || !label_ok(call->kind) || !label_ok(call->pipeline) || !label_ok(call->pass) ||
      call->nrefs > STROBE_DEEP_MAX_REFS || (call->nrefs && !call->refs))
    return STROBE_EINVAL;
  for (uint32_t i = 0; i < call->nrefs; i++)
    if (call->refs[i].resource == 0 || call->refs[i].role < STROBE_DEEP_GEOMETRY || call->refs[i].role > STROBE_DEEP_SURFACE)
      return STROBE_EINVAL;
  if (c->ncalls == STROBE_DEEP_MAX_CALLS) { /* past the bound: counted, not kept */
    c->calls_dropped++;
    return 0;
  }
  uint32_t before = c->nlabels;
  int k = label_of(c, call->kind), p = label_of(c, call->pipeline), s = label_of(c, call->pass);
  if (k < 0 || p < 0 || s < 0) {
    c->nlabels = before; /* nothing appended */
    return STROBE_ELIMIT;
  }
  if (strobe__grow((void **)&c->calls, &c->cap_calls, c->ncalls + 1, sizeof *c->calls, FIRST_CALLS) ||
      strobe__grow((void **)&c->refs, &c->cap_refs, c->nrefs + call->nrefs, sizeof *c->refs, FIRST_CALLS)) {
    c->calls_dropped++; /* out of memory: counted like the bound */
    return 0;
  }
  strobe__draw *d = &c->calls[c->ncalls++];
  *d = (strobe__draw){(uint32_t)k, (uint32_t)p, (uint32_t)s, call->vertex_first, call->vertex_count,
                      call->instance_first, call->instance_count, c->nrefs, call->nrefs,
                      (uint32_t)(call->has_geometry != 0), {0}, {0}};
  if (call->has_geometry) {
    memcpy(d->bounds, call->bounds, sizeof d->bounds);
    memcpy(d->clip, call->clip, sizeof d->clip);
  }
  if (call->nrefs) memcpy(c->refs + c->nrefs, call->refs, call->nrefs * sizeof *call->refs);
  c->nrefs += call->nrefs;
  return 0;
}

int strobe_deep_resource(const strobe_attachment *a) {
  strobe__content *c = tls_open;
  if (!c) return STROBE_ESTATE;
  if (!a) return STROBE_EINVAL;
  for (uint32_t i = 0; i < c->nresources; i++)
    if (c->resources[i] == a->resource) return 1; /* once per resource, not once per call */
  if (strobe__grow((void **)&c->resources, &c->cap_resources, c->nresources + 1, sizeof *c->resources, 64)) return STROBE_ENOMEM;
  int r = attach(a, c->frame);
  if (r) return r;
  c->resources[c->nresources++] = a->resource;
  c->resource_bytes += a->row_bytes ? a->row_bytes * a->height : a->size;
  return 0;
}

int strobe_deep_end(void) {
  strobe__content *c = tls_open;
  if (!c) return STROBE_ESTATE;
  tls_open = NULL;
  int kept = (int)c->ncalls;
  strobe__handoff_end(&g_q, c); /* unbounded queue: small beside its resources, which were queued already, never refused */
  return kept;
}

/* >>drain */
strobe__content *strobe__content_take(void) { return strobe__handoff_take(&g_q); }

void strobe__content_done(strobe__content *c, uint64_t bytes) {
  strobe__mutex_lock(&g_q.lock);
  if (c->type == STROBE__CONTENT_ATTACH) {
    g_queued_bytes -= c->size;
  } else if (strobe__handoff_done_locked(&g_q, bytes)) {
    g_status.last_frame = c->frame;
    g_status.last_calls = c->ncalls;
    g_status.last_calls_dropped = c->calls_dropped;
    g_status.last_resources = c->nresources;
    g_status.last_bytes = c->resource_bytes;
  }
  strobe__mutex_unlock(&g_q.lock);
  content_free(c);
}

strobe_deep_status strobe_deep_query_status(void) {
  strobe__mutex_lock(&g_q.lock);
  strobe_deep_status s = g_status;
  STROBE__HANDOFF_COUNTS(&g_q, s);
  strobe__mutex_unlock(&g_q.lock);
  return s;
}
