/*
 * gpu_frames.h — a capture's GPU data for `strobe report`, the exports and
 * the viewer's model (docs/gpu.md): GPU spans and frame instants gathered while the capture is
 * read, then mapped onto the host timeline with every calibration pair the
 * reader kept (strobe_capture_map_device), so pairs written after a span
 * improve it; per frame the four instants, the two gaps and the order
 * checks; per queue lane and pass, counts and totals.
 *
 * Memory is bounded: at most STROBE__GPU_MAX_SPANS spans and STROBE__GPU_MAX_MARKS marks are
 * kept, the rest counted in spans_cut and marks_cut and said so.
 */
#ifndef STROBE_ANALYZE_GPU_FRAMES_H
#define STROBE_ANALYZE_GPU_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/percentile.h"
#include "strobe/capture.h"

#define STROBE__GPU_MAX_SPANS (1u << 20) /* 48 MiB at most; ~4.8 h of 60 fps frames with one span each */
#define STROBE__GPU_MAX_MARKS (1u << 20)
#define STROBE__GPU_MAX_LANES 64u        /* queue lanes told apart; spans of others are counted in lanes_cut */
#define STROBE__GPU_MAX_PASSES 64u

typedef struct strobe__gpu_span_rec {
  const char *domain, *queue, *pass; /* owned by the capture */
  uint32_t site;
  uint32_t lane;                     /* index into strobe__gpu_data.lanes after strobe__gpu_resolve */
  uint64_t frame_id;
  uint64_t begin, end;               /* device ticks */
  double begin_ns, end_ns, bound_ns; /* mapped by strobe__gpu_resolve; NaN when the domain has no pair */
  int producer;                      /* 1: an external producer's span (LANE_SPAN, strobe/producer.h): on a
                                      * producer lane, in no frame and no pass */
} strobe__gpu_span_rec;

typedef struct strobe__gpu_mark_rec {
  uint64_t frame_id;
  uint32_t which;                    /* strobe_gpu_instant */
  double t_ns;
} strobe__gpu_mark_rec;

/* One frame with any GPU data, after strobe__gpu_resolve. Times in ns since the
 * epoch; NaN where not known. */
typedef struct strobe__gpu_frame_rec {
  uint64_t frame_id;
  double cpu_end, submit, gpu_begin, gpu_end, fence_seen;
  double bound_ns;                   /* the calibration bound of gpu_begin and gpu_end */
  uint32_t spans;
  uint32_t violations;               /* STROBE_GPU_ORDER_* bits */
} strobe__gpu_frame_rec;

typedef struct strobe__gpu_group {           /* a queue lane, a producer lane or a pass kind */
  const char *domain, *name;                 /* a producer lane in host ticks: domain "" */
  uint64_t spans;
  double total_ns, max_ns;
  int producer;                              /* 1: a producer lane */
} strobe__gpu_group;

typedef struct strobe__gpu_data {
  strobe__gpu_span_rec *spans;
  uint32_t n_spans, cap_spans;
  strobe__gpu_mark_rec *marks;
  uint32_t n_marks, cap_marks;
  uint64_t spans_cut, marks_cut, pairs;
  /* after strobe__gpu_resolve: */
  strobe__gpu_frame_rec *frames;                 /* sorted by frame id */
  uint32_t n_frames;
  strobe__gpu_group lanes[STROBE__GPU_MAX_LANES], passes[STROBE__GPU_MAX_PASSES];
  uint32_t n_lanes, n_passes;
  uint64_t lanes_cut, passes_cut;
  uint64_t unmapped;                 /* spans whose domain has no calibration pair */
  strobe__dist backlog, polling, gpu_time; /* ns, over the frames where both sides are known (n says how many) */
  uint64_t checked;                  /* frames with at least one order check possible */
  uint64_t violated;                 /* of them, frames with a violation */
  uint64_t by_check[4];              /* violations per check: end<=submit, submit<=start, start<=end, end<=fence */
  double worst_bound_ns;
  int failed;                        /* out of memory: figures incomplete */
  /* External producers' spans (strobe/producer.h) share the lanes and their
   * placement, never the GPU's frames, passes or figures: */
  uint32_t n_lane_spans;             /* of n_spans, producer spans */
  uint32_t n_producer_lanes;         /* of n_lanes, producer lanes (after strobe__gpu_resolve) */
  uint64_t lane_spans_unmapped;      /* producer spans whose domain has no calibration pair (not in unmapped) */
} strobe__gpu_data;

/* The three below are exported from libstrobe.so (not API) because
 * libstrobe_server.so's viewer model calls them, like strobe__frame_rate_of.
 * Keeps what a CLOCK_PAIR, GPU_SPAN or GPU_MARK record says; ignores other records. */
STROBE_API void strobe__gpu_record(strobe__gpu_data *g, const strobe_capture_record *r);
/* Once the capture is read: maps the spans, builds the frames, lanes,
 * passes and distributions. */
STROBE_API void strobe__gpu_resolve(strobe__gpu_data *g, strobe_capture *c);
/* 1 when the capture holds any GPU span or frame instant (producer spans are none). */
static inline int strobe__gpu_present(const strobe__gpu_data *g) {
  return g->n_spans - g->n_lane_spans + g->n_marks + g->spans_cut + g->marks_cut > 0;
}
/* 1 when it holds any lane to draw: GPU queues or external producers. */
static inline int strobe__gpu_lanes_present(const strobe__gpu_data *g) { return strobe__gpu_present(g) || g->n_lane_spans > 0; }
/* A lane's title, the same in every viewer and export: "GPU <domain>/<queue>"
 * or "producer <lane>" (with " [<domain>]" for a producer lane in a clock
 * domain). Writes at most cap bytes; returns buf. */
STROBE_API const char *strobe__gpu_lane_title(const strobe__gpu_group *lane, char *buf, size_t cap);
STROBE_API void strobe__gpu_free(strobe__gpu_data *g);

#endif
