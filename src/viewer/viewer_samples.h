/*
 * viewer_samples.h — the sampler's records in the viewer's model
 * (docs/viewer.md §Samples, docs/exploration.md §Sampling): each OS
 * thread's sample times and off-CPU intervals, for the sample ticks and
 * gaps under its lane, and the whole capture's samples merged into one call
 * tree, for the sampled flame graph. Built by viewer_model.c's second pass,
 * emitted as the meta's "sampler" object.
 *
 * Memory is bounded: at most VS_MAX_TICKS sample times and VS_MAX_NODES
 * call-tree nodes (samples whose path needed more are counted in
 * flame_cut, their stack cut at the bound) and the analyze layer's bounds
 * for off-CPU intervals; every cut is counted in the meta.
 */
#ifndef STROBE_VIEWER_SAMPLES_H
#define STROBE_VIEWER_SAMPLES_H

#include <jansson.h>
#include <stdint.h>

#include "analyze/samples.h"
#include "strobe/capture.h"

#define VS_MAX_TICKS (1u << 20) /* sample times kept in all (8 MiB) */
#define VS_MAX_NODES (1u << 16) /* call-tree nodes of the sampled flame graph */

typedef struct vs_thread {
  uint64_t tid;
  uint32_t thread;   /* the capture's thread index, or STROBE_CAPTURE_NO_THREAD */
  double *t;         /* sample times, ns since the capture start */
  uint32_t n, cap;
} vs_thread;

typedef struct vs_node {
  uint32_t func, parent;
  uint32_t child, next; /* first child, next sibling (0: none; node 0 is the root) */
  uint64_t total, self;
} vs_node;

typedef struct strobe__vsamples {
  strobe__samples smp;   /* off-CPU intervals (analyze/samples.h) */
  vs_thread *th;
  uint32_t nth, capth;
  uint64_t ticks, ticks_cut;
  vs_node *nodes;
  uint32_t nnodes, capnodes;
  uint64_t flame_cut;    /* samples whose stack was cut at VS_MAX_NODES */
  int failed;
} strobe__vsamples;

/* Feeds one SAMPLE or SWITCH record (others are ignored); now: ns since the capture start. */
void strobe__vsamples_add(strobe__vsamples *v, const strobe_capture_record *r, double now);
/* The meta's "sampler": null when the capture has no sampler records, else
 * (docs/viewer.md §Samples) its counts, cuts, function names, threads
 * and call tree. NULL: out of memory. */
json_t *strobe__vsamples_json(const strobe__vsamples *v, const strobe_capture *c);
void strobe__vsamples_free(strobe__vsamples *v);

#endif
