/*
 * grid.c — the demo's data grid: deterministic generated content, input
 * handling, and serialization for the background save.
 */
#include "grid.h"

#include <stdio.h>
#include <string.h>

#include "strobe/strobe.h"

static const char *const words[] = {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
                                    "india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa"};

const char *const grid_headers[GRID_COLS] = {"id", "name", "owner", "amount", "site", "date", "region", "team"};

static void fill_cell(grid *g, int r, int c, uint64_t seed) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + (uint64_t)(r * GRID_COLS + c);
  x ^= x >> 29;
  switch (c) {
    case 0: snprintf(g->cells[r][c], GRID_CELL_TEXT, "#%04d", r); break;
    case 3: snprintf(g->cells[r][c], GRID_CELL_TEXT, "%.2f", (double)(x % 100000) / 100.0); break;
    case 5: snprintf(g->cells[r][c], GRID_CELL_TEXT, "2026-%02d-%02d", (int)(x % 12) + 1, (int)(x % 28) + 1); break;
    default:
      snprintf(g->cells[r][c], GRID_CELL_TEXT, "%s %s %u", words[x % 16], words[(x >> 8) % 16], (unsigned)(x % 1000));
  }
}

void grid_init(grid *g, int visible_rows) {
  memset(g, 0, sizeof *g);
  g->visible_rows = visible_rows;
  for (int r = 0; r < GRID_ROWS; r++)
    for (int c = 0; c < GRID_COLS; c++) fill_cell(g, r, c, 1);
}

input_event grid_script(uint64_t frame) {
  switch (frame % 12) {
    case 1: case 2: case 3: return (input_event){INPUT_KEY_DOWN, 1};
    case 5: return (input_event){INPUT_KEY_RIGHT, 1};
    case 7: case 8: return (input_event){INPUT_SCROLL, 3};
    case 10: return (input_event){INPUT_EDIT, (int)frame};
    default: return (input_event){INPUT_NONE, 0};
  }
}

static void keep_selection_visible(grid *g) {
  if (g->selected_row < g->scroll_row) g->scroll_row = g->selected_row;
  if (g->selected_row >= g->scroll_row + g->visible_rows) g->scroll_row = g->selected_row - g->visible_rows + 1;
}

int grid_apply(grid *g, input_event e) {
  switch (e.kind) {
    case INPUT_KEY_DOWN:
      g->selected_row = (g->selected_row + e.amount) % GRID_ROWS;
      keep_selection_visible(g);
      return 1;
    case INPUT_KEY_RIGHT:
      g->selected_col = (g->selected_col + e.amount) % GRID_COLS;
      return 1;
    case INPUT_SCROLL:
      g->scroll_row = (g->scroll_row + e.amount) % (GRID_ROWS - g->visible_rows);
      return 1;
    case INPUT_EDIT: {
      fill_cell(g, g->selected_row, g->selected_col, (uint64_t)e.amount);
      g->revision++;
      /* A log line with run-time text: content, kept in local captures only (docs/memory.md §Messages). */
      char line[64];
      int n = snprintf(line, sizeof line, "edited cell %d,%d (revision %llu)", g->selected_row, g->selected_col,
                       (unsigned long long)g->revision);
      if (n > 0 && (size_t)n < sizeof line) STROBE_MESSAGE_TEXT(line, (size_t)n);
      return 1;
    }
    default:
      return 0;
  }
}

/* One row as tab-separated text; the bytes written (at most cap). A function
 * of its own, so the save worker's call trace shows the rows (saver.c). */
static size_t serialize_row(const grid *g, int r, char *out, size_t cap) {
  size_t n = 0;
  for (int c = 0; c < GRID_COLS && n < cap; c++) {
    int w = snprintf(out + n, cap - n, "%s%c", g->cells[r][c], c + 1 == GRID_COLS ? '\n' : '\t');
    if (w < 0) break;
    n += (size_t)w;
  }
  return n < cap ? n : cap;
}

size_t grid_serialize(const grid *g, char *out, size_t cap) {
  size_t n = 0;
  for (int r = 0; r < GRID_ROWS && n < cap; r++) n += serialize_row(g, r, out + n, cap - n);
  return n < cap ? n : cap;
}
