/*
 * tree.c — UI-tree snapshots (strobe/tree.h, docs/recording.md §UI-tree
 * snapshots): the request flag, the one open snapshot that a layout pass
 * fills node by node, the queue of closed snapshots the drain hands to its
 * consumers, and the status the server's tool reports.
 *
 * Owns: every snapshot from strobe_tree_begin until the drain gives it back
 * (strobe__tree_done), the request and status counters.
 * Must never: take a lock or allocate in strobe_tree_begin when nothing was
 * requested; keep more than STROBE_TREE_MAX_NODES nodes or
 * STROBE_TREE_MAX_PROPS properties per node (what it cuts is counted); hold
 * more than QUEUE_MAX closed snapshots (a drain that cannot keep up loses
 * the newest, counted as unwritten); hand a snapshot to anything but the
 * drain.
 */
#include <stdlib.h>
#include <string.h>

#include "collect/collect.h"
#include "collect/handoff.h"

#define QUEUE_MAX 4u         /* closed snapshots waiting for a drain pass */
#define PROP_NAME_MAX 64u    /* bytes of a property name */
#define FIRST_NODES 256u     /* the node array starts here and doubles up to STROBE_TREE_MAX_NODES */

static strobe__handoff g_q = STROBE__HANDOFF_INIT(QUEUE_MAX); /* request, open snapshot, closed ones */
static _Thread_local strobe__tree *tls_open __attribute__((tls_model("initial-exec"))); /* the calling thread's open snapshot (g_q.open) */
static strobe_tree_status g_status;          /* the last snapshot written (g_q.lock) */

static void tree_free(strobe__tree *t) {
  if (!t) return;
  free(t->nodes);
  free(t->props);
  free(t);
}

int strobe_tree_request(void) {
  if (!STROBE__PROFILING) return STROBE_EFEATURE_DISABLED;
  if (!(__atomic_load_n(&strobe__active, __ATOMIC_ACQUIRE) & STROBE__ACTIVE_EVENTS)) return STROBE_ESTATE;
  strobe__handoff_request(&g_q);
  return 0;
}

static int recording(void) { return (__atomic_load_n(&strobe__active, __ATOMIC_ACQUIRE) & STROBE__ACTIVE_EVENTS) != 0; }

int strobe_tree_begin(void) {
  if (!strobe__handoff_requested(&g_q)) return 0;
  if (tls_open) return 0; /* this thread's snapshot is still open: the request waits for the next pass */
  strobe__tree *t = calloc(1, sizeof *t);
  if (!t) return 0; /* the request stays pending */
  t->seq = strobe__handoff_begin(&g_q, t, recording);
  if (!t->seq) {
    free(t);
    return 0;
  }
  tls_open = t;
  t->ticks = strobe__now();
  return 1;
}

/* The index of a property name in the snapshot's key table: the same
 * pointer is found first, then the same text; -1 when the table is full. */
static int key_of(strobe__tree *t, const char *name) {
  for (uint32_t i = 0; i < t->nkeys; i++)
    if (t->keys[i] == name || strcmp(t->keys[i], name) == 0) return (int)i;
  if (t->nkeys == STROBE_TREE_MAX_KEYS) return -1;
  t->keys[t->nkeys] = name;
  return (int)t->nkeys++;
}

static int prop_name_ok(const char *name) {
  if (!name) return 0;
  size_t n = strnlen(name, PROP_NAME_MAX + 1);
  return n > 0 && n <= PROP_NAME_MAX;
}

int strobe_tree_push(const strobe_tree_node *node) {
  strobe__tree *t = tls_open;
  if (!t) return STROBE_ESTATE;
  if (!node || !node->type || node->type->kind != STROBE_SITE_ELEMENT || (node->nprops && !node->props))
    return STROBE_EINVAL;
  uint32_t prev = t->nnodes ? t->nodes[t->nnodes - 1].depth : 0;
  if (t->nnodes == 0 ? node->depth != 0 : node->depth > prev + 1) return STROBE_EINVAL;
  for (uint32_t i = 0; i < node->nprops; i++)
    if (!prop_name_ok(node->props[i].name)) return STROBE_EINVAL;
  int id = strobe_site_register(node->type);
  if (id <= 0) return STROBE_EINVAL;
  if (t->nnodes == STROBE_TREE_MAX_NODES) { /* past the bound: the rest of the pass is counted, not kept */
    t->nodes_dropped++;
    return 0;
  }
  uint32_t keep = node->nprops < STROBE_TREE_MAX_PROPS ? node->nprops : STROBE_TREE_MAX_PROPS;
  if (strobe__grow((void **)&t->nodes, &t->cap_nodes, t->nnodes + 1, sizeof *t->nodes, FIRST_NODES) ||
      strobe__grow((void **)&t->props, &t->cap_props, t->nprops + keep, sizeof *t->props, FIRST_NODES)) {
    t->nodes_dropped++; /* out of memory: counted like the bound */
    return 0;
  }
  strobe__tree_node *n = &t->nodes[t->nnodes++];
  *n = (strobe__tree_node){node->id, {node->x, node->y, node->width, node->height}, node->depth, (uint32_t)id,
                           t->nprops, 0};
  t->props_dropped += node->nprops - keep;
  for (uint32_t i = 0; i < keep; i++) {
    int k = key_of(t, node->props[i].name);
    if (k < 0) {
      t->props_dropped++;
      continue;
    }
    t->props[t->nprops++] = (strobe__tree_prop){(uint32_t)k, node->props[i].value};
    n->nprops++;
  }
  return 0;
}

int strobe_tree_end(void) {
  strobe__tree *t = tls_open;
  if (!t) return STROBE_ESTATE;
  tls_open = NULL;
  int kept = (int)t->nnodes;
  if (!strobe__handoff_end(&g_q, t)) tree_free(t); /* QUEUE_MAX waiting: counted unwritten */
  return kept;
}

strobe__tree *strobe__tree_take(void) { return strobe__handoff_take(&g_q); }

void strobe__tree_done(strobe__tree *t, uint64_t bytes) {
  strobe__mutex_lock(&g_q.lock);
  if (strobe__handoff_done_locked(&g_q, bytes)) {
    g_status.last_nodes = t->nnodes;
    g_status.last_nodes_dropped = t->nodes_dropped;
    g_status.last_bytes = bytes;
  }
  strobe__mutex_unlock(&g_q.lock);
  tree_free(t);
}

strobe_tree_status strobe_tree_query_status(void) {
  strobe__mutex_lock(&g_q.lock);
  strobe_tree_status s = g_status;
  STROBE__HANDOFF_COUNTS(&g_q, s);
  strobe__mutex_unlock(&g_q.lock);
  return s;
}
