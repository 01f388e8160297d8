/*
 * record.h — recording a capture file: every event of every instrumented
 * thread, streamed to disk in crash-safe blocks (docs/capture-format.md);
 * and live streams of the same format into a bounded queue.
 *
 * Several recorders may run at once (at most 8 event consumers in all,
 * counting the flight recorder and live streams); each gets every event
 * written while it is active.
 *
 * Thread rule: start and stop may be called from any thread; a recorder is
 * stopped exactly once.
 */
#ifndef STROBE_RECORD_H
#define STROBE_RECORD_H

#include <stdint.h>

#include "strobe/strobe.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct strobe_record_desc {
  const char *path;           /* file to create or truncate (mode 0644); required */
  uint32_t flush_interval_ms; /* 1..60000, default 100: the most recent data a crash can lose without the
                                 journal (plus one drain period; pending events are written when the
                                 oldest is a quarter of it old: docs/recording.md §Crash loss) */
  int compression_level;      /* zstd level 1..19, default 1: the drain thread must keep up (1 is zstd's level 1
                               * with a faster match search: docs/recording.md §What a capture says it cost) */
  uint64_t max_attachment_bytes; /* content bytes of attachments per capture (strobe/deep.h), default
                                    STROBE_ATTACH_CAPTURE_BYTES (256 MiB); past it attachments are recorded
                                    without content and counted (docs/recording.md §Attachments) */
  int no_journal;             /* 0 (default): keep a crash journal, PATH.journal, beside the file while it records,
                               * so a crash loses nothing `strobe recover` cannot add back (docs/recording.md §Crash
                               * journal); 1: none, a crash loses what was not flushed; other values are invalid */
} strobe_record_desc;

typedef struct strobe_recorder strobe_recorder;

typedef struct strobe_record_stats {
  uint64_t bytes;  /* bytes written to the file so far */
  int error;       /* first write error (negative STROBE_E*), 0 if none */
} strobe_record_stats;

/* Starts recording. Measures the per-scope overhead (at most ~1 ms) and
 * writes the header before returning. Unless desc->no_journal, it also
 * creates the crash journal PATH.journal (docs/recording.md §Crash journal),
 * which a clean stop removes; when it cannot (one per process, a full disk),
 * it records without one and the header says why: that is no error. On
 * success *out is the recorder; on
 * error *out is NULL, no file is left behind, and the code is STROBE_EINVAL
 * (bad desc), STROBE_EIO (cannot create the file), STROBE_ENOMEM,
 * STROBE_ELIMIT (8 consumers active) or STROBE_EFEATURE_DISABLED. */
STROBE_API int strobe_record_start(const strobe_record_desc *desc, strobe_recorder **out);

/* Delivers every event written before the call, writes the footer, closes the
 * file and frees the recorder. Returns 0, or the first write error (the file
 * then holds everything up to that point). Accepts NULL (returns 0). */
STROBE_API int strobe_record_stop(strobe_recorder *r);

/* Forces the pending blocks to the file now (normally every flush_interval_ms). */
STROBE_API int strobe_record_flush(strobe_recorder *r);

/* Bytes written and the first write error, as of now. A NULL recorder gives all zeros. */
STROBE_API strobe_record_stats strobe_record_query_stats(strobe_recorder *r);

/* >>live streams
 * The same capture format, produced into a bounded in-memory queue for a
 * reader that sends it somewhere live (libstrobe_server's
 * GET /api/capture/stream). The queue never blocks the drain thread: while
 * it is full, events are not encoded but dropped and counted, and the stream
 * stays well formed for readers — a dropped BEGIN withholds its END, and the
 * next event of that thread carries a LOST marker (with the depth the reader
 * must close to) while the thread's LOST blocks carry the dropped counts, so
 * strobe_capture_totals.lost includes them. */
typedef struct strobe_stream_desc {
  size_t max_queue_bytes;      /* 64 KiB..1 GiB, default 8 MiB: encoded bytes waiting for the reader */
  uint32_t flush_interval_ms;  /* 1..10000, default 50: the most a queued event waits before it is readable */
  int compression_level;       /* zstd level 1..19, default 1 (as strobe_record_desc's) */
  /* Optional. Called on the drain thread (never with a stream lock held)
   * each time bytes were queued; it must not block and may only call
   * strobe_stream_read/strobe_stream_query_stats. */
  void (*ready)(void *ctx);
  void *ready_ctx;
} strobe_stream_desc;

typedef struct strobe_stream strobe_stream;

typedef struct strobe_stream_stats {
  uint64_t bytes_produced;  /* header and blocks queued so far */
  uint64_t bytes_read;      /* handed to the reader so far */
  uint64_t bytes_queued;    /* waiting now (bounded by max_queue_bytes plus one flush) */
  uint64_t events_dropped;  /* events not encoded because the queue was full */
  uint64_t drop_episodes;   /* times the queue filled up */
  int error;                /* first error (negative STROBE_E*), 0 if none; the stream then ends */
  int stopped;              /* strobe_stream_stop ran: what is queued is all there will be */
} strobe_stream_stats;

/* Starts a live stream: measures the per-scope overhead (~1 ms), queues the
 * header and receives every event from the next drain pass on. On error *out
 * is NULL and the code is STROBE_EINVAL (bad desc), STROBE_ENOMEM,
 * STROBE_ELIMIT (8 event consumers active) or STROBE_EFEATURE_DISABLED.
 * Safe from any thread. */
STROBE_API int strobe_stream_start(const strobe_stream_desc *desc, strobe_stream **out);
/* Moves up to max queued bytes into buf and returns how many (0: nothing
 * queued right now). Never blocks. Use from one reader thread at a time. */
STROBE_API size_t strobe_stream_read(strobe_stream *s, void *buf, size_t max);
/* Counters; safe from any thread. */
STROBE_API strobe_stream_stats strobe_stream_query_stats(strobe_stream *s);
/* Delivers every event written before the call, queues the footer and
 * detaches from the drain thread; what is queued stays readable. Returns 0 or
 * the stream's error. Idempotent. */
STROBE_API int strobe_stream_stop(strobe_stream *s);
/* Stops (if needed) and frees the stream and anything still queued. Accepts NULL. */
STROBE_API void strobe_stream_free(strobe_stream *s);

/* >>deprecated: old names, kept for one release (strobe.h states the conventions). */
#if !defined(STROBE_NO_DEPRECATED)
STROBE_DEPRECATED("use strobe_record_query_stats")
static inline strobe_record_stats strobe_record_query(strobe_recorder *r) { return strobe_record_query_stats(r); }
STROBE_DEPRECATED("use strobe_stream_query_stats")
static inline strobe_stream_stats strobe_stream_query(strobe_stream *s) { return strobe_stream_query_stats(s); }
#endif

#ifdef __cplusplus
}
#endif

#endif
