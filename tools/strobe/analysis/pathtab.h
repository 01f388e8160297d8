/*
 * pathtab.h — a table of call paths: one node per distinct (parent, site)
 * pair, found through an open-addressing hash, each with two counters and
 * two sums. frame_diff.c uses it for the span trees of two frames (side 0
 * and 1); export_folded.c for self time per stack. Memory grows with the
 * number of distinct paths, never with the number of events.
 */
#ifndef STROBE_CLI_PATHTAB_H
#define STROBE_CLI_PATHTAB_H

#include <stddef.h>
#include <stdint.h>

#define PATH_NONE UINT32_MAX /* no node: the parent of a root, or out of memory */

typedef struct path_node {
  uint32_t parent;   /* PATH_NONE for a root */
  uint32_t site;     /* site id (a caller may use other keys for roots) */
  uint64_t count[2];
  double total[2];
} path_node;

typedef struct path_table {
  path_node *n;
  uint32_t len, cap;
  uint32_t *slot; /* node index + 1; 0 empty */
  size_t slots;
  int failed;     /* out of memory: later lookups return PATH_NONE */
} path_table;

/* The node for site under parent, created on first use. PATH_NONE when out of memory. */
uint32_t path_node_of(path_table *p, uint32_t parent, uint32_t site);
void path_table_free(path_table *p);

#endif
