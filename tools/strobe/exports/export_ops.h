/*
 * export_ops.h — the operations the Chrome and Perfetto exports write, taken
 * from the frame model (strobe/frames.h, docs/frames.md): fed the OP_*
 * records while the export streams the capture, it holds the model and each
 * END's counters and cuts, so that at the end each operation is one slice
 * (a frame handed between processes is one, not two) with its state. It
 * owns no output and never writes: the exporters format what it gives.
 *
 * Memory: the model, plus one entry per END and one per END's counter (their
 * names are the capture's labels: valid while the capture is open).
 * One thread.
 */
#ifndef STROBE_CLI_EXPORT_OPS_H
#define STROBE_CLI_EXPORT_OPS_H

#include <stdint.h>

#include "export.h"
#include "strobe/capture.h"
#include "strobe/frames.h"

typedef struct xo_end {
  uint64_t collector, id;
  uint32_t frame;                            /* its frame in the model */
  uint32_t counter0, ncounters;              /* into export_ops.counters */
  uint32_t stages_dropped, counters_dropped;
  int handed_off;                            /* moved between threads at least once */
} xo_end;

typedef struct export_ops {
  strobe_frames *fx;
  xo_end *ends;                              /* after xo_finish: ordered by frame */
  uint32_t nends, cap_ends;
  strobe_capture_op_counter *counters;
  uint32_t ncounters, cap_counters;
  uint32_t *first;                           /* after xo_finish: frame i's ENDs are ends[first[i] .. first[i + 1]) */
  int failed;                                /* out of memory: the operations are incomplete */
} export_ops;

/* A new, empty set; 0, or -1 out of memory. */
int xo_init(export_ops *x);
/* Takes one record of the capture (every record may be given: all but OP_* are ignored). */
void xo_add(export_ops *x, const strobe_capture *c, const strobe_capture_record *r);
/* Finishes the model once the capture is read; 0, or -1 out of memory (failed says so too). */
int xo_finish(export_ops *x, const strobe_capture *c);
/* Frame i is exported: it ended (unfinished operations have no end to draw) and passes the filters (where it
 * ended, its begin and end: export.h >>filters); one that ended and is filtered out is counted in left_out. */
int xo_frame_in(const export_ops *x, export_filter *f, uint32_t i);
/* The ENDs of frame i (both halves of a frame handed between processes), *n of them. */
const xo_end *xo_ends(const export_ops *x, uint32_t i, uint32_t *n);
void xo_free(export_ops *x);

/* Frame i's stages summed per (stage, process), whatever their run-time parents (an args key is one number), at
 * most cap of them: *n. */
typedef struct xo_stage { uint32_t site, process; double total_ns; } xo_stage;
void xo_stages(const export_ops *x, uint32_t i, xo_stage *out, uint32_t cap, uint32_t *n);
#define XO_STAGES_MAX 128
/* The args keys: "stage NAME ms" (", in PROCESS" for a stage that ran in another process than the frame began
 * in) and "counter FAMILY/KIND (UNIT)". */
void xo_stage_key(const export_ops *x, const strobe_capture *c, uint32_t i, const xo_stage *st, char *buf, size_t cap);
void xo_counter_key(const strobe_capture_op_counter *k, char *buf, size_t cap);

#endif /* STROBE_CLI_EXPORT_OPS_H */
