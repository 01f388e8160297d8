/*
 * tree.h — UI-tree snapshots (docs/recording.md §UI-tree snapshots): on
 * request, the next layout pass records every element it visits, in visit
 * order, as a flat list of nodes (depth, element type, element id, resolved
 * bounds, a few numeric style properties under static names), into every
 * capture file and flight recorder that records. The tree is rebuilt from
 * that list later, by strobe_capture_tree_parents (strobe/capture.h), the
 * `strobe tree` command and the viewer's UI-tree tab.
 *
 * Content rule: a snapshot is application content. It goes only into local
 * capture files (strobe_record_start) and flight-recorder dumps, and only
 * when the application or its user asks; never into session reports, MCP
 * answers or live streams (an MCP tool may request one and report its size
 * and status, never its nodes: docs/sessions.md).
 *
 * Node types and ids are element attribution's (strobe.h >>elements): a
 * STROBE_ELEMENT_TYPE site and a strobe_element_id, so a tree node and the
 * spans attributed to the same element compare directly.
 *
 * Thread rule: strobe_tree_request and strobe_tree_query_status are safe
 * from any thread. strobe_tree_begin, _push and _end belong to the thread
 * running the layout pass: the one whose strobe_tree_begin returned 1 pushes
 * and ends; one snapshot is open at a time in the process.
 */
#ifndef STROBE_TREE_H
#define STROBE_TREE_H

#include <stdint.h>

#include "strobe/strobe.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STROBE_TREE_MAX_NODES 16384   /* nodes kept per snapshot; more are counted (nodes_dropped) */
#define STROBE_TREE_MAX_PROPS 8       /* style properties kept per node; more are counted (props_dropped) */
#define STROBE_TREE_MAX_KEYS 64       /* distinct property names per snapshot; properties under more are counted */
#define STROBE_TREE_MAX_SNAPSHOTS 16  /* snapshots per capture; a capture refuses more and counts them */

/* A numeric style property: `name` a static label (1-64 of [A-Za-z0-9_],
 * referenced, never copied), `value` its resolved number. */
typedef struct strobe_tree_prop {
  const char *name;
  double value;
} strobe_tree_prop;

/* One visited element. */
typedef struct strobe_tree_node {
  uint32_t depth;            /* 0 for a root; at most one deeper than the node pushed before it */
  strobe_site *type;         /* its element type (STROBE_ELEMENT_TYPE): kind STROBE_SITE_ELEMENT */
  uint64_t id;               /* strobe_element_id of the application's identity for it */
  float x, y, width, height; /* resolved bounds */
  const strobe_tree_prop *props; /* nprops properties, or NULL when nprops is 0; copied */
  uint32_t nprops;
} strobe_tree_node;

/* Asks that the next layout pass (the next strobe_tree_begin) record a
 * snapshot. Returns 0 (a request already pending is kept: one snapshot
 * answers both), STROBE_ESTATE when nothing records (no capture file or
 * flight recorder: the snapshot would have nowhere to go, so none is
 * requested), or STROBE_EFEATURE_DISABLED when profiling is compiled out. */
STROBE_API int strobe_tree_request(void);

/* At the start of a layout pass. Returns 1 when this pass records a
 * snapshot (a request is pending, something records, and no snapshot is
 * open): push every node the pass visits, then call strobe_tree_end. Returns
 * 0 otherwise, at the cost of one relaxed load when nothing was requested. */
STROBE_API int strobe_tree_begin(void);

/* Appends one node to the open snapshot (a copy: `node` and its props may
 * be reused at once). Returns 0, also when the node is past
 * STROBE_TREE_MAX_NODES (then it is counted in nodes_dropped, not kept);
 * STROBE_EINVAL for NULL, a type that is no STROBE_SITE_ELEMENT site or
 * cannot be registered, a first node deeper than 0 or a node more than one
 * deeper than the one before it, a property with an invalid name (nothing is
 * appended); STROBE_ESTATE when the calling thread has no snapshot open. */
STROBE_API int strobe_tree_push(const strobe_tree_node *node);

/* Closes the open snapshot and hands it to every capture file and flight
 * recorder recording (at the drain's next pass). Returns the nodes kept (>=
 * 0), or STROBE_ESTATE when the calling thread has no snapshot open. */
STROBE_API int strobe_tree_end(void);

/* What became of requests, for callers that asked (the server's tool). */
typedef struct strobe_tree_status {
  uint64_t requests;       /* strobe_tree_request calls that succeeded */
  int pending;             /* 1 while a request waits for a layout pass */
  uint64_t taken;          /* snapshots closed by strobe_tree_end */
  uint64_t written;        /* snapshots handed to at least one capture */
  uint64_t unwritten;      /* snapshots closed while nothing recorded any more: discarded */
  uint32_t last_nodes;     /* of the last snapshot written: nodes kept */
  uint64_t last_nodes_dropped;
  uint64_t last_bytes;     /* its encoded size in a capture (before compression) */
} strobe_tree_status;
STROBE_API strobe_tree_status strobe_tree_query_status(void);

#ifdef __cplusplus
}
#endif

#endif /* STROBE_TREE_H */
