/*
 * grid.h — the demo's application model: a 200 × 8 data grid with a
 * selection and a scroll position, and the scripted input that drives it.
 * Nothing here knows about Strobe; the cell text is application content,
 * which Strobe never records.
 */
#ifndef STROBE_DEMO_GRID_H
#define STROBE_DEMO_GRID_H

#include <stddef.h>
#include <stdint.h>

#define GRID_ROWS 200
#define GRID_COLS 8
#define GRID_CELL_TEXT 48

typedef struct grid {
  char cells[GRID_ROWS][GRID_COLS][GRID_CELL_TEXT];
  int selected_row, selected_col;
  int scroll_row;        /* first visible row */
  int visible_rows;      /* rows that fit the viewport */
  uint64_t revision;     /* bumped by every edit: the view rebuilds when it changes */
} grid;

typedef enum input_kind { INPUT_NONE, INPUT_KEY_DOWN, INPUT_KEY_RIGHT, INPUT_SCROLL, INPUT_EDIT } input_kind;

typedef struct input_event {
  input_kind kind;
  int amount; /* scroll rows, or edit seed */
} input_event;

/* The column titles ("id", "name", ...): the model's own data. */
extern const char *const grid_headers[GRID_COLS];

void grid_init(grid *g, int visible_rows);
/* The scripted input for frame `frame`: a repeating mix of arrow keys, wheel scrolls and edits. */
input_event grid_script(uint64_t frame);
/* Applies one input event; returns 1 when the model changed. */
int grid_apply(grid *g, input_event e);
/* Serializes the whole grid (the worker's "save"): returns bytes written. */
size_t grid_serialize(const grid *g, char *out, size_t cap);

#endif
