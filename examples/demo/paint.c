/*
 * paint.c — the demo's display list (paint.h): appended by raster, executed
 * with cairo, recorded as a deep capture's draw calls, and the replay
 * backend that executes recorded calls with the same cairo operations.
 * Owns: the list's arrays. Must never: draw a replayed call from anything
 * but the bytes the capture holds (its geometry buffer and mask), or accept
 * a call whose ranges fall outside them.
 */
#include "paint.h"

#include <stdlib.h>
#include <string.h>

#include "strobe/deep.h"

static const char *const k_kind[] = {"clear", "quad", "sprite"};
static const char *const k_pipeline[] = {"solid_fill", "solid_fill", "mono_sprite"};
#define PASS "main"

/* The display list is built anew each frame, as a toolkit's is: the last
 * frame's arrays are freed and the new ones grow from 256 entries, each
 * recorded as an allocation of pool display_list (docs/memory.md). */
void paint_free(paint_list *l) {
  STROBE_FREE(l->prims, "display_list");
  free(l->prims);
  STROBE_FREE(l->cmds, "display_list");
  free(l->cmds);
  memset(l, 0, sizeof *l);
}

void paint_reset(paint_list *l) { paint_free(l); }

/* realloc, recorded: the old block's free, then the new one's allocation. */
static void *grow(void *old, size_t bytes) {
  STROBE_FREE(old, "display_list");
  void *q = realloc(old, bytes);
  STROBE_ALLOC(q ? q : old, q ? bytes : bytes / 2, "display_list"); /* failed: the old block stays (half the size) */
  return q;
}

int paint_add(paint_list *l, uint32_t kind, paint_prim p, cairo_surface_t *mask, uint64_t mask_id) {
  if (l->nprims == l->cap_prims) {
    uint32_t cap = l->cap_prims ? l->cap_prims * 2 : 256;
    paint_prim *q = grow(l->prims, cap * sizeof *q);
    if (!q) return -1;
    l->prims = q;
    l->cap_prims = cap;
  }
  if (l->ncmds == l->cap_cmds) {
    uint32_t cap = l->cap_cmds ? l->cap_cmds * 2 : 256;
    paint_cmd *q = grow(l->cmds, cap * sizeof *q);
    if (!q) return -1;
    l->cmds = q;
    l->cap_cmds = cap;
  }
  l->prims[l->nprims] = p;
  l->cmds[l->ncmds++] = (paint_cmd){kind, l->nprims++, mask, mask_id};
  return 0;
}

/* One call: the only place pixels are made, live and replayed. */
static void draw_one(cairo_t *cr, uint32_t kind, const paint_prim *p, cairo_surface_t *mask) {
  cairo_set_source_rgba(cr, p->r, p->g, p->b, p->a);
  if (kind == PAINT_CLEAR) {
    cairo_paint(cr);
  } else if (kind == PAINT_QUAD) {
    cairo_rectangle(cr, p->x, p->y, p->w, p->h);
    cairo_fill(cr);
  } else {
    cairo_mask_surface(cr, mask, p->x, p->y);
  }
}

void paint_execute(const paint_list *l, cairo_t *cr, int width, int height) {
  (void)width;
  (void)height;
  for (uint32_t i = 0; i < l->ncmds; i++) {
    const paint_cmd *c = &l->cmds[i];
    draw_one(cr, c->kind, &l->prims[c->prim], c->mask);
  }
}

int paint_record(const paint_list *l, uint64_t geometry_id, int width, int height) {
  strobe_attachment geometry = {.resource = geometry_id, .media_type = PAINT_PRIMS_MEDIA,
                                .bytes = l->prims, .size = l->nprims * sizeof *l->prims};
  int recorded = 0;
  for (uint32_t i = 0; i < l->ncmds; i++) {
    const paint_cmd *c = &l->cmds[i];
    const paint_prim *p = &l->prims[c->prim];
    strobe_draw_ref refs[2] = {{geometry_id, STROBE_DEEP_GEOMETRY}, {c->mask_id, STROBE_DEEP_TEXTURE}};
    strobe_draw_call call = {k_kind[c->kind], k_pipeline[c->kind], PASS, 0, 4, c->prim, 1, refs,
                             c->kind == PAINT_SPRITE ? 2u : 1u, 1,
                             {p->x, p->y, p->w, p->h}, {0, 0, (float)width, (float)height}};
    int rc = strobe_deep_call(&call);
    if (rc < 0) return rc;
    rc = strobe_deep_resource(&geometry); /* once per resource: later calls return 1 without copying */
    if (rc < 0) return rc;
    if (c->kind == PAINT_SPRITE) {
      cairo_surface_flush(c->mask);
      strobe_attachment m = {.resource = c->mask_id, .media_type = STROBE_MEDIA_A8,
                             .width = (uint32_t)cairo_image_surface_get_width(c->mask),
                             .height = (uint32_t)cairo_image_surface_get_height(c->mask),
                             .bytes = cairo_image_surface_get_data(c->mask),
                             .row_bytes = (size_t)cairo_image_surface_get_width(c->mask), /* one byte a pixel */
                             .stride = (size_t)cairo_image_surface_get_stride(c->mask)};
      rc = strobe_deep_resource(&m); /* cairo pads A8 rows to 4 bytes: the capture keeps them packed */
      if (rc < 0) return rc;
    }
    recorded++;
  }
  return recorded;
}

/* >>replay backend */
static int backend_supports(void *ctx, const char *kind) {
  (void)ctx;
  for (size_t i = 0; i < sizeof k_kind / sizeof k_kind[0]; i++)
    if (!strcmp(kind, k_kind[i])) return 1;
  return 0;
}

static int backend_draw(void *ctx, const strobe_capture_draw_call *call, const strobe_replay_resource *const *res) {
  paint_replay *pr = ctx;
  uint32_t kind = 0;
  while (strcmp(call->kind, k_kind[kind]) != 0) kind++; /* supported: found */
  const strobe_replay_resource *geometry = res[0];
  if (call->nrefs < 1 || call->refs[0].role != STROBE_DEEP_GEOMETRY || strcmp(geometry->media_type, PAINT_PRIMS_MEDIA) ||
      call->instance_count != 1 || (uint64_t)call->instance_first >= geometry->size / sizeof(paint_prim))
    return STROBE_EINVAL; /* not this renderer's call: the run stops rather than draw a guess */
  paint_prim p;
  memcpy(&p, (const uint8_t *)geometry->bytes + (size_t)call->instance_first * sizeof p, sizeof p);
  cairo_surface_t *mask = NULL;
  if (kind == PAINT_SPRITE) {
    const strobe_replay_resource *m = call->nrefs > 1 ? res[1] : NULL;
    if (!m || strcmp(m->media_type, STROBE_MEDIA_A8) || m->width == 0 || m->height == 0 ||
        (uint64_t)m->width * m->height != m->size)
      return STROBE_EINVAL;
    mask = cairo_image_surface_create(CAIRO_FORMAT_A8, (int)m->width, (int)m->height);
    if (cairo_surface_status(mask) != CAIRO_STATUS_SUCCESS) {
      cairo_surface_destroy(mask);
      return STROBE_ENOMEM;
    }
    cairo_surface_flush(mask);
    uint8_t *dst = cairo_image_surface_get_data(mask);
    int stride = cairo_image_surface_get_stride(mask);
    for (uint32_t y = 0; y < m->height; y++) /* the packed rows back into cairo's padded ones */
      memcpy(dst + (size_t)y * (size_t)stride, (const uint8_t *)m->bytes + (size_t)y * m->width, m->width);
    cairo_surface_mark_dirty(mask);
  }
  draw_one(pr->cr, kind, &p, mask);
  if (mask) cairo_surface_destroy(mask);
  return 0;
}

strobe_replay_backend paint_backend(paint_replay *p) { return (strobe_replay_backend){p, backend_supports, backend_draw}; }
