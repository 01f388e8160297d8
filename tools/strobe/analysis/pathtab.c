/*
 * pathtab.c — the call-path table of pathtab.h: nodes in one array, a
 * power-of-two hash of (parent, site) kept at most half full.
 */
#include "pathtab.h"

#include <stdlib.h>

static uint64_t key_hash(uint32_t parent, uint32_t site) {
  uint64_t k = ((uint64_t)parent << 32) ^ site;
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  return k ^ (k >> 29);
}

static int rehash(path_table *p) {
  size_t slots = p->slots ? p->slots * 2 : 256;
  uint32_t *s = calloc(slots, sizeof *s);
  if (!s) return -1;
  for (uint32_t i = 0; i < p->len; i++) {
    size_t h = key_hash(p->n[i].parent, p->n[i].site) & (slots - 1);
    while (s[h]) h = (h + 1) & (slots - 1);
    s[h] = i + 1;
  }
  free(p->slot);
  p->slot = s;
  p->slots = slots;
  return 0;
}

uint32_t path_node_of(path_table *p, uint32_t parent, uint32_t site) {
  if (p->failed) return PATH_NONE;
  if (2 * ((size_t)p->len + 1) > p->slots && rehash(p)) goto oom;
  size_t h = key_hash(parent, site) & (p->slots - 1);
  for (; p->slot[h]; h = (h + 1) & (p->slots - 1)) {
    const path_node *x = &p->n[p->slot[h] - 1];
    if (x->parent == parent && x->site == site) return p->slot[h] - 1;
  }
  if (p->len == p->cap) {
    uint32_t cap = p->cap ? p->cap * 2 : 64;
    path_node *q = cap > p->cap ? realloc(p->n, (size_t)cap * sizeof *q) : NULL;
    if (!q) goto oom;
    p->n = q;
    p->cap = cap;
  }
  p->n[p->len] = (path_node){parent, site, {0, 0}, {0, 0}};
  p->slot[h] = p->len + 1;
  return p->len++;
oom:
  p->failed = 1;
  return PATH_NONE;
}

void path_table_free(path_table *p) {
  free(p->n);
  free(p->slot);
  *p = (path_table){0};
}
