/*
 * view.c — the demo's frame pipeline with cairo and pango. Stages are
 * declared where the work happens; nested ones name their parent so reports
 * say "nested in layout_update, do not sum". The shape cache reports
 * hit/miss/eviction counters on the current operation; each render's draw
 * calls and shape cache activity are also counters by kind.
 *
 * The grid, its rows and its cells are elements (docs/recording.md
 * §Elements): the after-layout hooks' scopes are attributed to the row or
 * cell they work on, and when a UI-tree snapshot was requested that pass
 * records every element it visits with its resolved bounds (§UI-tree
 * snapshots). An element's id hashes the model's own identity for it (the
 * row index, then the column), never its text.
 */
#include "view.h"

#include <png.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "strobe/deep.h"
#include "strobe/tree.h"

#define ROW_HEIGHT 22
#define PADDING 6

/* Glyph masks are recorded as allocations of pool glyph_masks (docs/memory.md):
 * their pixel bytes, which cairo allocates for each surface. */
static void mask_destroy(cairo_surface_t *m) {
  STROBE_FREE(m, "glyph_masks");
  cairo_surface_destroy(m);
}

int view_init(view *v, strobe_collector *c, strobe_window w, int width, int height) {
  memset(v, 0, sizeof *v);
  v->collector = c;
  v->window = w;
  v->width = width;
  v->height = height;
  v->surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
  if (cairo_surface_status(v->surface) != CAIRO_STATUS_SUCCESS) return -1;
  v->cr = cairo_create(v->surface);
  v->font = pango_font_description_from_string("DejaVu Sans 10");
  for (int i = 0; i < GRID_COLS; i++) v->col_width[i] = width / GRID_COLS;
  return 0;
}

void view_free(view *v) {
  for (int i = 0; i < TEXT_CACHE_ENTRIES; i++) {
    if (v->cache[i].layout) g_object_unref(v->cache[i].layout);
    if (v->cache[i].mask) mask_destroy(v->cache[i].mask);
  }
  paint_free(&v->list);
  pango_font_description_free(v->font);
  cairo_destroy(v->cr);
  cairo_surface_destroy(v->surface);
  free(v->png);
}

double view_surface_bytes(const view *v) {
  return (double)cairo_image_surface_get_stride(v->surface) * cairo_image_surface_get_height(v->surface);
}

double view_png_bytes(const view *v) { return (double)v->png_cap; }

double view_text_cache_bytes(const view *v) {
  double bytes = 0;
  for (int i = 0; i < TEXT_CACHE_ENTRIES; i++)
    if (v->cache[i].layout) bytes += 512.0 + (double)v->cache[i].width * 8; /* an estimate, labelled as such */
  return bytes;
}

double view_memory_bytes(const view *v) { return view_surface_bytes(v) + view_png_bytes(v) + view_text_cache_bytes(v); }

static uint64_t hash_text(const char *s) {
  uint64_t h = 1469598103934665603ull;
  while (*s) h = (h ^ (unsigned char)*s++) * 1099511628211ull;
  return h | 1; /* never 0: 0 marks an empty slot */
}

/* The shaped layout for a cell's text: a cache hit, or shaping with pango
 * and evicting the least recently used entry. */
static text_entry *shape(view *v, const char *text) {
  uint64_t key = hash_text(text);
  text_entry *victim = &v->cache[0];
  for (int i = 0; i < TEXT_CACHE_ENTRIES; i++) {
    text_entry *e = &v->cache[i];
    if (e->key == key) {
      e->last_use = ++v->use_clock;
      v->counts.hits++;
      strobe_op_counter_add("shape_cache_hit", 1);
      return e;
    }
    if (e->last_use < victim->last_use) victim = e;
  }
  v->counts.misses++;
  strobe_op_counter_add("shape_cache_miss", 1);
  if (victim->layout) {
    v->counts.evictions++;
    strobe_op_counter_add("shape_cache_eviction", 1);
    g_object_unref(victim->layout);
  }
  if (victim->mask) mask_destroy(victim->mask);
  victim->mask = NULL;
  victim->layout = pango_cairo_create_layout(v->cr);
  pango_layout_set_font_description(victim->layout, v->font);
  pango_layout_set_text(victim->layout, text, -1);
  pango_layout_get_pixel_size(victim->layout, &victim->width, &victim->height); /* forces shaping */
  victim->key = key;
  victim->last_use = ++v->use_clock;
  return victim;
}

static int visible_rows(const view *v) { return v->height / ROW_HEIGHT - 1; }

STROBE_ELEMENT_TYPE(g_grid_type, "Grid");
STROBE_ELEMENT_TYPE(g_row_type, "Row");
STROBE_ELEMENT_TYPE(g_cell_type, "Cell");

uint64_t view_row_id(int row) { return strobe_element_id_more(strobe_element_id("row", 3), &row, sizeof row); }
uint64_t view_cell_id(int row, int col) { return strobe_element_id_more(view_row_id(row), &col, sizeof col); }

/* One node of a requested snapshot (a no-op on every other pass). */
static void tree_node(int snap, uint32_t depth, strobe_site *type, uint64_t id, int x, int y, int w, int h,
                      const strobe_tree_prop *props, uint32_t nprops) {
  if (!snap) return;
  strobe_tree_node n = {depth, type, id, (float)x, (float)y, (float)w, (float)h, props, nprops};
  (void)strobe_tree_push(&n);
}

static void layout_compute(view *v, const grid *g, int stall_ms) {
  STROBE_STAGE("layout_compute", "layout_update");
  /* Column widths from the widest visible cell; measuring shapes text. */
  int widths[GRID_COLS] = {0};
  int last = g->scroll_row + visible_rows(v);
  for (int r = g->scroll_row; r < last && r < GRID_ROWS; r++) {
    STROBE_CUMULATIVE("row_layout");
    for (int c = 0; c < GRID_COLS; c++) {
      text_entry *e = shape(v, g->cells[r][c]);
      if (e->width + 2 * PADDING > widths[c]) widths[c] = e->width + 2 * PADDING;
    }
  }
  int total = 0;
  for (int c = 0; c < GRID_COLS; c++) total += widths[c];
  for (int c = 0; c < GRID_COLS; c++) v->col_width[c] = total ? widths[c] * v->width / total : v->width / GRID_COLS;
  if (stall_ms > 0) usleep((useconds_t)stall_ms * 1000); /* the deliberate slow frame */
}

static void after_layout(view *v, const grid *g) {
  STROBE_STAGE("component_after_layout", "layout_update");
  /* The pass that visits every element with its resolved bounds: the one a
   * requested UI-tree snapshot records (strobe/tree.h). */
  int snap = strobe_tree_begin() == 1;
  int last = g->scroll_row + visible_rows(v);
  strobe_tree_prop grid_props[] = {{"visible_rows", (double)visible_rows(v)}, {"scroll_row", (double)g->scroll_row}};
  tree_node(snap, 0, &g_grid_type, strobe_element_id("grid", 4), 0, 0, v->width, v->height, grid_props, 2);
  /* Per-row component hooks: clamp text that would overflow its column. */
  for (int r = g->scroll_row, y = ROW_HEIGHT; r < last && r < GRID_ROWS; r++, y += ROW_HEIGHT) {
    STROBE_CUMULATIVE("row_after_layout");
    STROBE_SCOPE_ELEMENT("row_hooks", &g_row_type, view_row_id(r));
    strobe_tree_prop row_props[] = {{"selected", r == g->selected_row}};
    tree_node(snap, 1, &g_row_type, view_row_id(r), 0, y, v->width, ROW_HEIGHT, row_props, 1);
    for (int c = 0, x = 0; c < GRID_COLS; x += v->col_width[c], c++) {
      STROBE_SCOPE_ELEMENT("clamp_cell", &g_cell_type, view_cell_id(r, c));
      text_entry *e = shape(v, g->cells[r][c]);
      int clamped = e->width > v->col_width[c] - 2 * PADDING;
      if (clamped) pango_layout_set_width(e->layout, (v->col_width[c] - 2 * PADDING) * PANGO_SCALE);
      strobe_tree_prop cell_props[] = {{"padding", PADDING}, {"text_width", e->width}, {"clamped", clamped}};
      tree_node(snap, 2, &g_cell_type, view_cell_id(r, c), x, y, v->col_width[c], ROW_HEIGHT, cell_props, 3);
    }
  }
  if (snap) (void)strobe_tree_end();
}

/* The entry's glyphs as an A8 mask, rendered again only when its layout
 * changed (a new text, or a clamp that rewraps it): what a GPU renderer's
 * glyph atlas holds, and what its sprite calls sample. */
static cairo_surface_t *mask_of(view *v, text_entry *e) {
  int lw = pango_layout_get_width(e->layout);
  if (e->mask && e->mask_layout_width == lw) return e->mask;
  if (e->mask) mask_destroy(e->mask);
  int w, h;
  pango_layout_get_pixel_size(e->layout, &w, &h);
  e->mask = cairo_image_surface_create(CAIRO_FORMAT_A8, w > 0 ? w : 1, h > 0 ? h : 1);
  STROBE_ALLOC(e->mask, (size_t)cairo_image_surface_get_stride(e->mask) * (size_t)cairo_image_surface_get_height(e->mask),
               "glyph_masks");
  cairo_t *cr = cairo_create(e->mask);
  pango_cairo_show_layout(cr, e->layout);
  cairo_destroy(cr);
  cairo_surface_flush(e->mask);
  e->mask_layout_width = lw;
  e->mask_id = strobe_element_id_more(e->key, &lw, sizeof lw) | 1; /* text and wrap width name the content */
  v->counts.masks++;
  return e->mask;
}

static void quad(view *v, float x, float y, float w, float h, float r, float g, float b) {
  (void)paint_add(&v->list, PAINT_QUAD, (paint_prim){x, y, w, h, r, g, b, 1}, NULL, 0);
  v->counts.quads++;
}

static void text(view *v, text_entry *e, float x, float y, float r, float g, float b) {
  cairo_surface_t *m = mask_of(v, e);
  float w = (float)cairo_image_surface_get_width(m), h = (float)cairo_image_surface_get_height(m);
  (void)paint_add(&v->list, PAINT_SPRITE, (paint_prim){x, y, w, h, r, g, b, 1}, m, e->mask_id);
  v->counts.text++;
}

/* Builds the frame's draw calls (paint.h), then executes them with cairo. */
static void raster(view *v, const grid *g) {
  STROBE_STAGE("raster", NULL);
  paint_reset(&v->list);
  (void)paint_add(&v->list, PAINT_CLEAR, (paint_prim){0, 0, (float)v->width, (float)v->height, 0.97f, 0.97f, 0.98f, 1},
                  NULL, 0);
  v->counts.clears++;
  quad(v, 0, 0, (float)v->width, ROW_HEIGHT, 0.20f, 0.24f, 0.32f);
  for (int c = 0, x = 0; c < GRID_COLS; x += v->col_width[c], c++) {
    text_entry *e = shape(v, grid_headers[c]);
    text(v, e, (float)(x + PADDING), (float)((ROW_HEIGHT - e->height) / 2), 1, 1, 1);
  }
  int last = g->scroll_row + visible_rows(v);
  for (int r = g->scroll_row, y = ROW_HEIGHT; r < last && r < GRID_ROWS; r++, y += ROW_HEIGHT) {
    STROBE_CUMULATIVE("row_raster");
    if (r == g->selected_row)
      quad(v, 0, (float)y, (float)v->width, ROW_HEIGHT, 0.80f, 0.88f, 1.0f);
    else if (r % 2)
      quad(v, 0, (float)y, (float)v->width, ROW_HEIGHT, 0.93f, 0.94f, 0.96f);
    int x = 0;
    for (int c = 0; c < GRID_COLS; c++) {
      text_entry *e = shape(v, g->cells[r][c]);
      text(v, e, (float)(x + PADDING), (float)(y + (ROW_HEIGHT - e->height) / 2), 0.1f, 0.1f, 0.12f);
      x += v->col_width[c];
      quad(v, (float)(x - 1), (float)y, 1, ROW_HEIGHT, 0.82f, 0.83f, 0.86f);
    }
  }
  paint_execute(&v->list, v->cr, v->width, v->height);
  cairo_surface_flush(v->surface);
}

uint64_t view_geometry_id(uint64_t frame) { return 0x67656f0000000000ull | (frame & 0xffffffffffull); }
uint64_t view_screenshot_id(uint64_t frame, int png) {
  return (png ? 0x706e670000000000ull : 0x7267620000000000ull) | (frame & 0xffffffffffull);
}

/* The frame's draw calls with their resources, and its screenshot as raw
 * pixels (what a replay is compared with, rows packed), when this frame
 * answers a deep-capture request (strobe/deep.h). */
static void deep_capture(view *v, uint64_t frame) {
  STROBE_STAGE("deep_capture", NULL);
  int rc = paint_record(&v->list, view_geometry_id(frame), v->width, v->height);
  if (rc < 0) fprintf(stderr, "strobe-demo: recording the deep capture: %s\n", strobe_strerror(rc));
  (void)strobe_deep_end();
  strobe_attachment shot = {.frame = frame, .resource = view_screenshot_id(frame, 0), .media_type = STROBE_MEDIA_ARGB32,
                            .width = (uint32_t)v->width, .height = (uint32_t)v->height,
                            .bytes = cairo_image_surface_get_data(v->surface), .row_bytes = (size_t)v->width * 4,
                            .stride = (size_t)cairo_image_surface_get_stride(v->surface)};
  rc = strobe_attach(&shot);
  if (rc) fprintf(stderr, "strobe-demo: attaching the screenshot: %s\n", strobe_strerror(rc));
}

static void png_append(png_structp png, png_bytep data, size_t len) {
  view *v = png_get_io_ptr(png);
  if (v->png_len + len > v->png_cap) {
    size_t cap = v->png_cap ? v->png_cap * 2 : 65536;
    while (cap < v->png_len + len) cap *= 2;
    unsigned char *p = realloc(v->png, cap);
    if (!p) png_error(png, "out of memory");
    v->png = p;
    v->png_cap = cap;
  }
  memcpy(v->png + v->png_len, data, len);
  v->png_len += len;
}
static void png_no_flush(png_structp png) { (void)png; }

/* The frame as an RGB PNG (the views are opaque: cairo's premultiplied
 * ARGB32, B G R A in memory, is R G B with the fourth byte dropped), encoded
 * for speed as a toolkit streaming its frames would: zlib level 1 and no row
 * filter. cairo_surface_write_to_png's defaults (level 6, every filter
 * tried on every row) took four times as long for 2% fewer bytes on this
 * grid, most of each frame. Leaves png_len 0 when it fails. */
static void encode_png(view *v) {
  v->png_len = 0;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  if (!info) {
    png_destroy_write_struct(&png, NULL);
    return;
  }
  if (setjmp(png_jmpbuf(png))) { /* png_error (out of memory): nothing encoded */
    v->png_len = 0;
    png_destroy_write_struct(&png, &info);
    return;
  }
  png_set_write_fn(png, v, png_append, png_no_flush);
  png_set_compression_level(png, 1);
  png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
  png_set_IHDR(png, info, (png_uint_32)v->width, (png_uint_32)v->height, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_BASE, PNG_FILTER_TYPE_BASE);
  png_write_info(png, info);
  png_set_filler(png, 0, PNG_FILLER_AFTER); /* the A byte of each pixel, dropped */
  png_set_bgr(png);
  const unsigned char *data = cairo_image_surface_get_data(v->surface);
  int stride = cairo_image_surface_get_stride(v->surface);
  for (int y = 0; y < v->height; y++) png_write_row(png, (png_const_bytep)(data + (size_t)y * (size_t)stride));
  png_write_end(png, info);
  png_destroy_write_struct(&png, &info);
}

/* One render's counts as counters by kind: one event per kind and render,
 * each (family, kind) its own site; the draw calls on the current operation
 * too, so session reports summarise them per frame. */
static void publish_counts(const view *v) {
  const view_counts *n = &v->counts;
  strobe_op_counter_add_kind_unit("draw_calls", "clears", n->clears, STROBE_UNIT_COUNT); /* reports say "count" */
  strobe_op_counter_add_kind_unit("draw_calls", "quads", n->quads, STROBE_UNIT_COUNT);
  strobe_op_counter_add_kind_unit("draw_calls", "text", n->text, STROBE_UNIT_COUNT);
  STROBE_COUNTER_ADD_KIND_UNIT("draw_calls", "clears", n->clears, STROBE_UNIT_COUNT);
  STROBE_COUNTER_ADD_KIND_UNIT("draw_calls", "quads", n->quads, STROBE_UNIT_COUNT);
  STROBE_COUNTER_ADD_KIND_UNIT("draw_calls", "text", n->text, STROBE_UNIT_COUNT);
  STROBE_COUNTER_ADD_KIND_UNIT("shape_cache", "hits", n->hits, STROBE_UNIT_COUNT);
  STROBE_COUNTER_ADD_KIND_UNIT("shape_cache", "misses", n->misses, STROBE_UNIT_COUNT);
  STROBE_COUNTER_ADD_KIND_UNIT("shape_cache", "evictions", n->evictions, STROBE_UNIT_COUNT);
}

void view_render(view *v, const grid *g, int stall_ms, uint64_t frame) {
  memset(&v->counts, 0, sizeof v->counts);
  int deep = v->deep && strobe_deep_begin(frame) == 1;
  {
    STROBE_STAGE("update", NULL);
    /* Animations and derived state: here, the viewport height in rows. */
    cairo_identity_matrix(v->cr);
  }
  {
    STROBE_STAGE("layout_update", NULL);
    layout_compute(v, g, stall_ms);
    after_layout(v, g);
  }
  {
    STROBE_STAGE("text_shaping", NULL);
    /* Shape the rows just below the viewport too, so scrolling hits the cache. */
    int first = g->scroll_row + visible_rows(v);
    for (int r = first; r < first + 4 && r < GRID_ROWS; r++)
      for (int c = 0; c < GRID_COLS; c++) (void)shape(v, g->cells[r][c]);
  }
  raster(v, g);
  if (deep) deep_capture(v, frame);
  {
    STROBE_STAGE("encode", NULL);
    encode_png(v);
    strobe_op_counter_add("encoded_bytes", (double)v->png_len);
    STROBE_VALUE_UNIT("png_size", v->png_len, STROBE_UNIT_BYTES); /* on the encode scope, printed as KiB */
  }
  if (deep) { /* the same screenshot as PNG, for people and the viewer's thumbnail */
    strobe_attachment png = {.frame = frame, .resource = view_screenshot_id(frame, 1), .media_type = "image/png",
                             .width = (uint32_t)v->width, .height = (uint32_t)v->height, .bytes = v->png,
                             .size = v->png_len};
    int rc = strobe_attach(&png);
    if (rc) fprintf(stderr, "strobe-demo: attaching the PNG screenshot: %s\n", strobe_strerror(rc));
  }
  publish_counts(v);
}
