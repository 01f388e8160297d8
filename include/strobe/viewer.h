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
 *     Recording is off until strobe_server_record_start() or the viewer's
 *     Record button turns it on, so an idle server adds no recording cost.
 *
 * Memory: a loaded capture is kept as packed columns, about 19 bytes per
 * span plus the side tables (docs/viewer.md gives the layout); at most
 * max_spans spans are kept (the earliest, in stream order), the rest is
 * counted and reported as cut.
 *
 * This header holds the viewer's bounds and load statistics; the functions
 * that load a file into a server's viewer or record for it are server
 * functions, declared in server.h (>>viewer) with their thread rule. It
 * still includes server.h, so code that included only viewer.h for them
 * keeps compiling.
 */
#ifndef STROBE_VIEWER_H
#define STROBE_VIEWER_H

#include <stdint.h>

#include "strobe/strobe.h"

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

#ifdef __cplusplus
}
#endif

#include "strobe/server.h" /* the viewer functions (strobe_server_view_file...), see above */

#endif
