/*
 * deep.h — attachments and deep captures of one frame (docs/recording.md
 * §Attachments, §Deep capture). An attachment is a byte blob that belongs to
 * a frame: a screenshot, a scene snapshot, a resource's contents, with its
 * media type. A deep capture is, on request, one frame's command stream as
 * the renderer issues it: per draw call a sequence number, a static kind,
 * the pipeline and pass labels, vertex and instance ranges, the resources it
 * reads by id, and its surface geometry; the contents of the resources the
 * frame touched are attachments, captured once per resource. Both go into
 * every capture file recording (strobe_record_start); a capture reader sees
 * them as ATTACHMENT and DEEP records (strobe/capture.h), and
 * strobe/replay.h steps through a deep capture in another process.
 *
 * Content rule: attachments and deep captures are application content. They
 * go only into local capture files, only when the application or its user
 * asks; never into session reports, MCP answers, live streams or
 * flight-recorder rings (an MCP tool may request a deep capture and report
 * its size and status, never its bytes: docs/sessions.md).
 *
 * Storage: a capture stores an attachment's content once per resource id
 * (later attachments of the same id are recorded as references to it),
 * compressed with the capture's zstd, and at most max_attachment_bytes of
 * content per capture (strobe/record.h); what the bound cuts is recorded
 * as a reference without content, counted, and reported by readers.
 *
 * Thread rule: strobe_attach, strobe_deep_request and the _query_status
 * functions are safe from any thread. strobe_deep_begin, _call, _resource
 * and _end belong to the thread rendering the frame: the one whose
 * strobe_deep_begin returned 1 records and ends; one deep capture is open at
 * a time in the process.
 */
#ifndef STROBE_DEEP_H
#define STROBE_DEEP_H

#include <stddef.h>
#include <stdint.h>

#include "strobe/strobe.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STROBE_ATTACH_MAX_BYTES (16u << 20)          /* content of one attachment; larger ones are refused */
#define STROBE_ATTACH_CAPTURE_BYTES (256ull << 20)   /* default content bytes per capture (strobe_record_desc) */
#define STROBE_ATTACH_QUEUE_BYTES (64u << 20)        /* content waiting for the drain; past it, refused and counted */
#define STROBE_DEEP_MAX_CALLS 65536u                 /* draw calls kept per deep capture; more are counted */
#define STROBE_DEEP_MAX_REFS 8u                      /* resource references per draw call */
#define STROBE_DEEP_MAX_LABELS 256u                  /* distinct kind, pipeline and pass labels per deep capture */
#define STROBE_DEEP_MAX_FRAMES 16u                   /* deep captures per capture; a capture refuses more, counted */
#define STROBE_MEDIA_TYPE_MAX 64u                    /* bytes of a media type */

/* Media types the demo and the replay engine use for raw pixels (any other
 * type is stored as given): cairo's ARGB32 (premultiplied, 32 bits per pixel
 * in native byte order) and 8-bit alpha, each row tightly packed. */
#define STROBE_MEDIA_ARGB32 "image/x-strobe-argb32"
#define STROBE_MEDIA_A8 "image/x-strobe-a8"

/* One attachment. */
typedef struct strobe_attachment {
  uint64_t frame;         /* the frame it belongs to: the application's frame id (a pass's, strobe/session.h) */
  uint64_t resource;      /* its resource id, not 0: content is stored once per id and capture */
  const char *media_type; /* 1-64 bytes of [a-z0-9.+/-] ("image/png", STROBE_MEDIA_ARGB32); copied */
  uint32_t width, height; /* images: pixels; 0 otherwise */
  const void *bytes;      /* the content: `size` bytes, or `height` rows `stride` apart; copied */
  size_t size;            /* 1..STROBE_ATTACH_MAX_BYTES bytes after packing */
  size_t row_bytes;       /* 0: bytes are `size` bytes as they are. Else the bytes of a row that are content: */
  size_t stride;          /* rows are `stride` apart in `bytes` (>= row_bytes), and only row_bytes of each are kept
                           * (row padding stripped: the stored size is row_bytes * height; `size` is ignored) */
} strobe_attachment;

/* Attaches a copy of the content to frame `a->frame` in every capture file
 * recording (at the drain's next pass). Returns 0; STROBE_ESTATE when no
 * capture file records (nothing is copied); STROBE_EINVAL for NULL, a
 * resource id 0, an invalid media type, no bytes, a stride below row_bytes
 * or rows without a height; STROBE_ELIMIT when the content exceeds
 * STROBE_ATTACH_MAX_BYTES or STROBE_ATTACH_QUEUE_BYTES are waiting (counted
 * in `refused`); STROBE_ENOMEM; STROBE_EFEATURE_DISABLED when profiling is
 * compiled out. On error nothing is queued. */
STROBE_API int strobe_attach(const strobe_attachment *a);

/* A draw call's reference to a resource, and what the call uses it for. */
enum {
  STROBE_DEEP_GEOMETRY = 1, /* a geometry buffer: vertices, instances, the primitives' parameters */
  STROBE_DEEP_TEXTURE = 2,  /* a texture it samples (an atlas page, a glyph mask) */
  STROBE_DEEP_SURFACE = 3   /* a composited surface: needs the call's surface geometry too */
};
typedef struct strobe_draw_ref {
  uint64_t resource;      /* a resource id, as strobe_deep_resource / strobe_attach name it */
  uint32_t role;          /* STROBE_DEEP_GEOMETRY, _TEXTURE or _SURFACE */
} strobe_draw_ref;

/* One draw call of the frame being captured. Labels are static strings
 * (1-64 of [A-Za-z0-9_.:-]), referenced, never copied. */
typedef struct strobe_draw_call {
  const char *kind;       /* the call's kind ("clear", "quad", "sprite"): what a replay backend draws */
  const char *pipeline;   /* the pipeline label bound for it (its shader identity) */
  const char *pass;       /* the render pass it went into */
  uint32_t vertex_first, vertex_count;
  uint32_t instance_first, instance_count; /* ranges into its geometry buffer */
  const strobe_draw_ref *refs; /* nrefs references, or NULL when nrefs is 0; copied */
  uint32_t nrefs;         /* 0..STROBE_DEEP_MAX_REFS */
  int has_geometry;       /* 1: bounds and clip below are its surface geometry */
  float bounds[4];        /* x, y, width, height on the frame's surface */
  float clip[4];          /* the clip (content mask) it drew under */
} strobe_draw_call;

/* Asks that the next frame (the next strobe_deep_begin) record its command
 * stream. Returns 0 (a pending request is kept: one capture answers both),
 * STROBE_ESTATE when no capture file records, or STROBE_EFEATURE_DISABLED. */
STROBE_API int strobe_deep_request(void);

/* At the start of a frame's rendering. Returns 1 when this frame records
 * (a request is pending, a capture file records and no deep capture is
 * open): report every draw call and the resources they read, then call
 * strobe_deep_end. Returns 0 otherwise, at the cost of one relaxed load when
 * nothing was requested. */
STROBE_API int strobe_deep_begin(uint64_t frame);

/* Appends one draw call (a copy) with the next sequence number. Returns 0,
 * also past STROBE_DEEP_MAX_CALLS (counted in calls_dropped, not kept);
 * STROBE_EINVAL for NULL, invalid labels, more than STROBE_DEEP_MAX_REFS
 * references, a reference with id 0 or an unknown role (nothing is
 * appended); STROBE_ELIMIT past STROBE_DEEP_MAX_LABELS distinct labels;
 * STROBE_ESTATE when the calling thread has no deep capture open. */
STROBE_API int strobe_deep_call(const strobe_draw_call *call);

/* The contents of a resource the frame touched, attached to the open deep
 * capture's frame: call it for every resource a call references; the first
 * call per resource id copies it, later ones return 1 without reading the
 * bytes (once per resource, not per call). Returns 0 (copied), 1 (already
 * captured in this deep capture), STROBE_ESTATE without an open deep
 * capture, or strobe_attach's errors (a->frame is ignored). */
STROBE_API int strobe_deep_resource(const strobe_attachment *a);

/* Closes the open deep capture and hands it to every capture file recording.
 * Returns the draw calls kept (>= 0), or STROBE_ESTATE without one open. */
STROBE_API int strobe_deep_end(void);

/* What became of attachments and deep-capture requests (the server's tool
 * reports it: numbers only). */
typedef struct strobe_deep_status {
  uint64_t requests;        /* strobe_deep_request calls that succeeded */
  int pending;              /* 1 while a request waits for a frame */
  uint64_t taken;           /* deep captures closed by strobe_deep_end */
  uint64_t written;         /* deep captures written to at least one capture */
  uint64_t unwritten;       /* closed while no capture file recorded, or refused by every capture's bound */
  uint64_t last_frame;      /* of the last one written: its frame id */
  uint32_t last_calls;      /* ... the draw calls kept */
  uint64_t last_calls_dropped;
  uint32_t last_resources;  /* ... the resources captured */
  uint64_t last_bytes;      /* ... the content bytes of those resources (before compression) */
  uint64_t attachments;     /* attachments queued (strobe_attach and strobe_deep_resource) */
  uint64_t attachment_bytes; /* their content bytes */
  uint64_t refused;         /* attachments refused: too large, or the queue was full */
} strobe_deep_status;
STROBE_API strobe_deep_status strobe_deep_query_status(void);

#ifdef __cplusplus
}
#endif

#endif /* STROBE_DEEP_H */
