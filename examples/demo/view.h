/*
 * view.h — one toolkit window of the demo: an offscreen cairo surface, a
 * pango text-shaping cache, and the frame pipeline that renders the grid
 * (update → layout → after-layout hooks → text shaping → raster → encode),
 * instrumented the way a real toolkit would be: each frame is a Strobe
 * operation, each pipeline step a stage.
 */
#ifndef STROBE_DEMO_VIEW_H
#define STROBE_DEMO_VIEW_H

#include <cairo.h>
#include <pango/pangocairo.h>

#include "grid.h"
#include "paint.h"
#include "strobe/session.h"

#define TEXT_CACHE_ENTRIES 256 /* shaped cells kept; a scrolling grid keeps evicting */

typedef struct text_entry {
  uint64_t key;        /* hash of the cell text; 0 = empty slot */
  uint64_t last_use;
  PangoLayout *layout;
  int width, height;   /* pixels */
  cairo_surface_t *mask; /* its glyphs as an A8 mask (the renderer's glyph atlas entry), or NULL */
  int mask_layout_width; /* the layout width (pango units, -1: none) the mask was rendered at */
  uint64_t mask_id;    /* the mask's resource id: its text and layout width */
} text_entry;

/* What one render drew and what its shape cache did, counted as the work
 * happens and recorded once per render as counters by kind
 * (docs/recording.md §Counters and gauges by kind). */
typedef struct view_counts {
  uint32_t clears, quads, text;        /* clear, quad and sprite (a shaped text) draw calls */
  uint32_t masks;                      /* glyph masks rendered (a text shaped anew or rewrapped) */
  uint32_t hits, misses, evictions;    /* shape cache lookups */
} view_counts;

typedef struct view {
  strobe_collector *collector;
  strobe_window window;
  int width, height;
  cairo_surface_t *surface;
  cairo_t *cr;
  PangoFontDescription *font;
  text_entry cache[TEXT_CACHE_ENTRIES];
  uint64_t use_clock;
  int col_width[GRID_COLS];
  unsigned char *png;  /* last encoded frame */
  size_t png_len, png_cap;
  view_counts counts;  /* the render in progress */
  paint_list list;     /* the render's draw calls (paint.h) */
  int deep;            /* 1: this view answers deep-capture requests (strobe/deep.h) and attaches its screenshot */
} view;

int view_init(view *v, strobe_collector *c, strobe_window w, int width, int height);
void view_free(view *v);
/* Renders one frame of the grid inside the calling thread's current operation.
 * stall_ms > 0 makes layout_compute block (the demo's deliberate slow frame).
 * `frame` is the frame id: a view with `deep` set records that frame's draw
 * calls when a deep capture was requested, and attaches its screenshot. */
void view_render(view *v, const grid *g, int stall_ms, uint64_t frame);
/* Resource ids of a frame's geometry buffer and screenshots (raw ARGB32 and PNG). */
uint64_t view_geometry_id(uint64_t frame);
uint64_t view_screenshot_id(uint64_t frame, int png);
/* Element ids (docs/recording.md §Elements) of a grid row and a cell, from
 * the model's row index and column: what spans and tree nodes carry. */
uint64_t view_row_id(int row);
uint64_t view_cell_id(int row, int col);
/* Estimated bytes held by the text cache and surface (a memory gauge). */
double view_memory_bytes(const view *v);
/* The same bytes by kind: the cairo surface, the PNG buffer, the text cache (an estimate). */
double view_surface_bytes(const view *v);
double view_png_bytes(const view *v);
double view_text_cache_bytes(const view *v);

#endif
