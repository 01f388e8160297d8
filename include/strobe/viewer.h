/*
 * viewer.h — the web viewer that libstrobe_server serves at `/`
 * (docs/viewer.md): what it shows and where its data comes from.
 *
 * Every server serves the viewer's static files (embedded into the library
 * at build time) at `/`; they carry no data, so they are the only answers
 * given without the bearer token (Host and Origin are still checked). The
 * viewer reads its data from the authenticated /api/capture/... endpoints,
 * built in C from either
 *   - a capture file given with strobe_server_view_file() (what
 *     `strobe view FILE` does), optionally with a second one to compare; or
 *   - the live application: a flight recorder (include/strobe/flight.h)
 *     that the server runs while recording is on, snapshotted on demand.
 *     Recording is off until strobe_server_record() or the viewer's Record
 *     button turns it on, so an idle server adds no recording cost.
 *
 * Memory: a loaded capture is kept as packed columns, about 19 bytes per
 * span plus the side tables (docs/viewer.md gives the layout); at most
 * max_spans spans are kept (the earliest, in stream order), the rest is
 * counted and reported as cut.
 *
 * Thread rule: every function here is safe to call from any thread while the
 * server runs (they take the viewer's own lock; loading a file runs on the
 * caller's thread, never on the server's).
 */
#ifndef STROBE_VIEWER_H
#define STROBE_VIEWER_H

#include <stdint.h>

#include "strobe/flight.h"
#include "strobe/server.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STROBE_VIEWER_DEFAULT_MAX_SPANS 10000000u /* ~200 MB of model; 1M spans take ~20 MB */
#define STROBE_VIEWER_MAX_MAX_SPANS 100000000u

typedef struct strobe_viewer_load_stats {
  uint64_t spans;         /* spans kept in the model */
  uint64_t spans_cut;     /* completed spans past max_spans, not kept */
  uint64_t frames;        /* frame and operation entries */
  uint64_t samples;       /* counter and gauge samples */
  uint64_t model_bytes;   /* memory the model holds */
  double build_ms;        /* time to read the capture and build the model */
  int read_error;         /* 0, or the reader's error (the model holds what was read before it) */
} strobe_viewer_load_stats;

/* Loads capture file `path` (and `compare`, a second capture for the
 * two-capture diff, or NULL) as what the viewer shows, replacing a live or
 * earlier one. max_spans 0 means STROBE_VIEWER_DEFAULT_MAX_SPANS. Reads on
 * the calling thread. A capture that is cut short or truncated inside a
 * block still loads what it holds (stats->read_error says why it ended).
 * Returns 0 (stats filled when non-NULL), or STROBE_EINVAL, STROBE_EIO,
 * STROBE_EBADMAGIC, STROBE_EVERSION, STROBE_ENOMEM, or a reader error met
 * before any record; on error the viewer's data is unchanged. */
STROBE_API int strobe_server_view_file(strobe_server *s, const char *path, const char *compare, uint32_t max_spans,
                                       strobe_viewer_load_stats *stats);

/* Starts recording the live application into a flight recorder owned by
 * the server (desc NULL: the last 10 s within 64 MiB, no spike trigger), so
 * the viewer can show it. Returns 0, STROBE_ESTATE (recording already, or
 * the server shows a file), or strobe_flight_recorder_start's errors. */
STROBE_API int strobe_server_record(strobe_server *s, const strobe_flight_recorder_desc *desc);

/* Stops recording: the recorder's content is kept as the viewer's last
 * snapshot and the recorder is freed. Blocks while that snapshot is taken.
 * Returns 0, or STROBE_ESTATE when not recording. */
STROBE_API int strobe_server_record_stop(strobe_server *s);

/* 1 while the server's live recorder runs, else 0. */
STROBE_API int strobe_server_recording(const strobe_server *s);

#ifdef __cplusplus
}
#endif

#endif
