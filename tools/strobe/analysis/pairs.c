/*
 * pairs.c — matches the scope sites of two captures for `diff` and
 * `compare`. Site ids are per process, so two runs of the same program may
 * number the same site differently; sites are the same when name, file and
 * line agree. Uses one open-addressing table sized from the site count, so
 * the cost is linear in the number of sites.
 */
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "format/codec.h"

static uint64_t site_hash(const strobe_capture_site *s) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (const char *p = s->name; *p; p++) h = (h ^ (uint8_t)*p) * 1099511628211ull;
  h = (h ^ 0xff) * 1099511628211ull;
  for (const char *p = s->file; *p; p++) h = (h ^ (uint8_t)*p) * 1099511628211ull;
  return (h ^ s->line) * 1099511628211ull;
}

static int same_site(const strobe_capture_site *x, const strobe_capture_site *y) {
  return x->line == y->line && strcmp(x->name, y->name) == 0 && strcmp(x->file, y->file) == 0;
}

static int is_scope(const strobe_capture_site *s) {
  return s && strobe__site_timed(s->kind);
}

long pair_sites(agg *a, const strobe_capture *ca, agg *b, const strobe_capture *cb, site_pair **out) {
  *out = NULL;
  size_t cap = 16;
  while (cap < 2u * ((size_t)a->n_sites + b->n_sites)) cap *= 2;
  uint32_t *slot = calloc(cap, sizeof *slot);   /* index into pairs + 1; 0 empty */
  site_pair *pairs = calloc((size_t)a->n_sites + b->n_sites + 1, sizeof *pairs);
  if (!slot || !pairs) {
    free(slot);
    free(pairs);
    return -1;
  }
  long n = 0;
  for (uint32_t id = 1; id < a->n_sites; id++) {
    const strobe_capture_site *s = strobe_capture_query_site(ca, id);
    if (!is_scope(s) || !a->sites[id].count || !a->sites[id].included) continue;
    size_t i = site_hash(s) & (cap - 1);
    while (slot[i] && !same_site(pairs[slot[i] - 1].a, s)) i = (i + 1) & (cap - 1);
    if (slot[i]) continue; /* the same site twice in one capture: keep the first */
    pairs[n] = (site_pair){s, NULL, &a->sites[id], NULL, agg_dist(&a->sites[id]), {0}};
    slot[i] = (uint32_t)++n;
  }
  for (uint32_t id = 1; id < b->n_sites; id++) {
    const strobe_capture_site *s = strobe_capture_query_site(cb, id);
    if (!is_scope(s) || !b->sites[id].count || !b->sites[id].included) continue;
    size_t i = site_hash(s) & (cap - 1);
    for (; slot[i]; i = (i + 1) & (cap - 1)) {
      site_pair *p = &pairs[slot[i] - 1];
      if (same_site(p->a ? p->a : p->b, s)) break;
    }
    if (slot[i]) {
      site_pair *p = &pairs[slot[i] - 1];
      if (p->b) continue;
      p->b = s;
      p->sb = &b->sites[id];
      p->db = agg_dist(p->sb);
    } else {
      pairs[n] = (site_pair){NULL, s, NULL, &b->sites[id], {0}, agg_dist(&b->sites[id])};
      slot[i] = (uint32_t)++n;
    }
  }
  free(slot);
  *out = pairs;
  return n;
}
