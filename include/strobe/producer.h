/*
 * producer.h — spans from external producers on lanes of their own
 * (docs/recording.md §External producers): work that Strobe's scopes do not
 * time themselves, reported afterwards with the caller's own timestamps.
 * Another runtime in the process (a script engine, a JIT, a VM with its own
 * profiler), an audio thread that may not touch Strobe's hot path, a replay
 * of a recorded session, or a process in another language through the
 * server's POST /api/producer/spans (docs/server.md §External producers).
 *
 * A lane is a named row of the timeline (like a thread, but nobody's
 * thread) whose spans are in one clock: Strobe's host ticks
 * (strobe_clock_now; strobe_clock_ticks_from_mono_ns converts a
 * CLOCK_MONOTONIC reading), or a clock domain of gpu.h fed calibration pairs,
 * whose raw ticks captures keep and readers map (strobe_capture_map_device).
 * Spans on one lane may nest (a callback and the work inside it): readers
 * stack them by their times.
 *
 * Where spans go: every capture that records (file recorder, flight
 * recorder, live stream), as LANE_SPAN records (capture.h). Sessions do not
 * take them: a session aggregates operations and their stages, which a
 * producer span is not (docs/sessions.md).
 *
 * Thread rule: every function here is safe to call from any thread. None
 * blocks, except that a batch waits for room in the caller's ring when
 * strobe_desc.overflow is STROBE_OVERFLOW_WAIT, as any event does.
 *
 * Cost rule: with nothing recording, strobe_producer_spans_add checks its
 * arguments, makes one relaxed load and returns 0. While a capture records,
 * a span costs four ring stores; the batch takes one ring reservation.
 *
 * Content rule: a lane name is a label (1-64 bytes of [A-Za-z0-9_./:-]),
 * copied, whose '/'-separated segments are neither empty, "." nor ".." (a
 * lane names a row, never a path: "lua/main", not "../x" or "/x"). A span names a site: a static one (STROBE_PRODUCER_SITE) or one
 * from strobe_site_intern for names known only at run time, which captures
 * flag as content like every interned site.
 *
 * Bounds: STROBE_MAX_PRODUCER_LANES lanes per process (they live for the process, as
 * sites do), STROBE_PRODUCER_BATCH_MAX spans per call.
 */
#ifndef STROBE_PRODUCER_H
#define STROBE_PRODUCER_H

#include <stdint.h>

#include "strobe/gpu.h"
#include "strobe/strobe.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STROBE_MAX_PRODUCER_LANES 64          /* producer lanes per process */
#define STROBE_PRODUCER_BATCH_MAX 4096   /* spans per strobe_producer_spans_add call (and per HTTP batch) */
#define STROBE_PRODUCER_LANE_NAME_MAX 64      /* bytes of a lane name */

/* A declared lane; id 0 is "none". */
typedef struct strobe_producer_lane {
  uint32_t id;
} strobe_producer_lane;

typedef struct strobe_producer_lane_desc {
  const char *name;             /* 1-64 bytes of [A-Za-z0-9_./:-], no empty, "." or ".." segment between '/'
                                 * ("audio", "lua/main", "replay"); copied; required */
  strobe_clock_domain domain;   /* the spans' clock: {0} (default) Strobe's host ticks, else a declared domain */
} strobe_producer_lane_desc;

/* Declares a lane and writes its handle to *out. The same name with the
 * same domain returns the same lane. Returns 0; STROBE_EINVAL (NULL desc or
 * out, an undeclared domain), STROBE_ELABEL (the name breaks the rule),
 * STROBE_EBUSY (the name is declared with another domain), STROBE_ELIMIT
 * (STROBE_MAX_PRODUCER_LANES declared) or STROBE_ENOMEM (the label registry is full:
 * a capture could not name the lane); on error *out is {0} and nothing
 * changes. */
STROBE_API int strobe_producer_lane_create(const strobe_producer_lane_desc *desc, strobe_producer_lane *out);

/* The initializer of a producer span's site, in static storage:
 *   static strobe_site mix = STROBE_PRODUCER_SITE("mix");
 * An ordinary scope site of category "producer". */
#define STROBE_PRODUCER_SITE(name) \
  {(name), "producer", (const char *)0, __FILE__, (const char *)0, (uint32_t)__LINE__, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0}

/* One finished span, timed by its producer. */
typedef struct strobe_producer_span {
  strobe_producer_lane lane;             /* a declared lane; its clock is the times' */
  strobe_site *site;            /* a timed kind (STROBE_SITE_SCOPE): static or from strobe_site_intern */
  uint64_t begin_ticks;         /* in the lane's clock; > 0 */
  uint64_t end_ticks;           /* in the lane's clock; >= begin_ticks */
} strobe_producer_span;

/* Records n spans (on any lanes), whole or not at all: every span is
 * checked before any is written, and the batch takes one reservation in the
 * calling thread's ring, so a reader sees all of them or none. Returns n
 * when a capture records them, 0 when nothing records (then nothing is
 * kept), or an error, with nothing recorded: STROBE_EINVAL (NULL spans with
 * n > 0, n > STROBE_PRODUCER_BATCH_MAX, an undeclared lane, a NULL site, a site
 * of an untimed kind, begin 0, end before begin), STROBE_ELIMIT (the batch
 * needs more than a quarter of the ring, strobe_desc.ring_events, or the
 * ring is full: then its events are counted lost like any event a full ring
 * drops, and the call in strobe_producer_stats.batches_lost), or a site
 * registration error (sites of earlier spans of the batch may stay
 * registered: metadata, no span). */
STROBE_API int strobe_producer_spans_add(const strobe_producer_span *spans, uint32_t n);

typedef struct strobe_producer_stats {
  uint32_t lanes;               /* lanes declared */
  uint64_t spans;               /* spans written to the rings while something recorded */
  uint64_t batches;             /* calls that wrote them */
  uint64_t batches_refused;     /* calls refused by a check (EINVAL, ELIMIT for size, site errors) */
  uint64_t batches_lost;        /* calls whose batch a full ring dropped whole */
} strobe_producer_stats;

/* Process-wide counts since the library loaded. */
STROBE_API strobe_producer_stats strobe_producer_query_stats(void);

#ifdef __cplusplus
}
#endif

#endif /* STROBE_PRODUCER_H */
