/*
 * frame_rate.h — the two frame rates every consumer of a capture shows,
 * each labelled (docs/cli.md "Frames", docs/viewer.md): over the
 * first-to-last frame span, which one long stall pulls down, and the steady
 * rate from the median interval between consecutive frames, which it does
 * not. `strobe report` and the viewer's model compute them here, so the two
 * cannot disagree.
 */
#ifndef STROBE_ANALYZE_FRAME_RATE_H
#define STROBE_ANALYZE_FRAME_RATE_H

#include <stddef.h>
#include <stdint.h>

#include "strobe/strobe.h" /* STROBE_API */

typedef struct strobe__frame_rate {
  uint64_t frames;            /* frames between the first and the last boundary: n - 1 */
  double span_ns;             /* first boundary to last */
  double fps_first_to_last;   /* frames / span; 0 when the span is 0 */
  double median_interval_ns;  /* nearest-rank median of the n - 1 intervals */
  double fps_steady;          /* 1 / median interval (fps_steady_median_interval); 0 when it is 0 */
} strobe__frame_rate;

/* The rates of n >= 2 frame boundaries (starts or marks) in ascending
 * order; `scratch` holds n - 1 doubles. All zero for n < 2. Exported from
 * libstrobe.so (not API) because libstrobe_server.so's viewer model calls
 * it: a server linked against the shared libraries must resolve it
 * (tests/install builds one). */
STROBE_API strobe__frame_rate strobe__frame_rate_of(const double *t, size_t n, double *scratch);

#endif
