/*
 * paint.h — the demo's renderer as a command stream: a frame's raster step
 * appends draw calls (clear, quad, sprite) to a display list whose
 * primitives live in one geometry buffer and whose glyphs are A8 masks
 * (one per shaped text, like a GPU renderer's glyph atlas), then executes
 * it with cairo. Recording that stream is a deep capture
 * (strobe/deep.h); executing a recorded one is the demo's replay backend
 * (strobe/replay.h): the same code draws live and replayed frames, so a
 * replay equals the frame pixel for pixel.
 */
#ifndef STROBE_DEMO_PAINT_H
#define STROBE_DEMO_PAINT_H

#include <cairo.h>
#include <stdint.h>

#include "strobe/replay.h"

/* One primitive of the geometry buffer: 32 bytes, little-endian floats
 * (the demo's media type "application/x-strobe-demo-prims"). */
typedef struct paint_prim {
  float x, y, w, h;   /* bounds on the surface */
  float r, g, b, a;   /* its colour (a sprite's is the glyphs') */
} paint_prim;
#define PAINT_PRIMS_MEDIA "application/x-strobe-demo-prims"

enum { PAINT_CLEAR, PAINT_QUAD, PAINT_SPRITE };

typedef struct paint_cmd {
  uint32_t kind;      /* PAINT_CLEAR, _QUAD or _SPRITE */
  uint32_t prim;      /* its primitive in the geometry buffer */
  cairo_surface_t *mask; /* SPRITE: the glyph mask (A8; owned by the text cache) */
  uint64_t mask_id;   /* SPRITE: the mask's resource id */
} paint_cmd;

typedef struct paint_list {
  paint_prim *prims;
  uint32_t nprims, cap_prims;
  paint_cmd *cmds;
  uint32_t ncmds, cap_cmds;
} paint_list;

void paint_reset(paint_list *l);
void paint_free(paint_list *l);
/* Appends one call; returns 0 or -1 (out of memory: the call is not drawn). */
int paint_add(paint_list *l, uint32_t kind, paint_prim p, cairo_surface_t *mask, uint64_t mask_id);
/* Draws the list onto cr. */
void paint_execute(const paint_list *l, cairo_t *cr, int width, int height);
/* Reports the list as the open deep capture's draw calls (strobe_deep_call)
 * with their resources once each (strobe_deep_resource): the geometry
 * buffer as `geometry_id`, each mask as its own id, rows packed. Returns the
 * calls recorded, or a negative STROBE_E*. */
int paint_record(const paint_list *l, uint64_t geometry_id, int width, int height);

/* The replay backend: draws recorded calls onto a cairo context. */
typedef struct paint_replay {
  cairo_t *cr;
} paint_replay;
strobe_replay_backend paint_backend(paint_replay *p);

#endif
