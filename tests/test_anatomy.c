/*
 * test_anatomy.c — element attribution (strobe.h >>elements) and UI-tree
 * snapshots (strobe/tree.h), docs/recording.md §Elements and §UI-tree
 * snapshots:
 *   - the element id is 64-bit FNV-1a (its published test vectors), and
 *     strobe_element_id_more continues one;
 *   - attributed scopes come back from a capture file with their element
 *     (type and id) on exactly the scope they were given to, at its depth;
 *     an attribution with no scope open is misuse and recorded nowhere;
 *   - a requested snapshot is taken by the next layout pass only, comes back
 *     from the capture node for node (depth, type, id, bounds, properties),
 *     and rebuilds into the tree it was (strobe_capture_tree_parents);
 *   - nodes past STROBE_TREE_MAX_NODES, properties past
 *     STROBE_TREE_MAX_PROPS and snapshots past STROBE_TREE_MAX_SNAPSHOTS per
 *     capture are counted, in the file and in the status;
 *   - requests with nothing recording, pushes without an open snapshot and
 *     nodes breaking the preorder rule are refused with their errors;
 *   - a flight recorder's dump carries a snapshot taken while it recorded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strobe/capture.h"
#include "strobe/flight.h"
#include "strobe/record.h"
#include "strobe/strobe.h"
#include "strobe/tree.h"
#include "support/fixtures.h"
#include "support/harness.h"

STROBE_ELEMENT_TYPE(g_row_type, "Row");
STROBE_ELEMENT_TYPE(g_cell_type, "Cell");

static uint64_t cell_id(uint32_t row, uint32_t col) {
  uint64_t id = strobe_element_id(&row, sizeof row);
  return strobe_element_id_more(id, &col, sizeof col);
}

static strobe_recorder *start(char *path, size_t cap, const char *tag) {
  REQUIRE(fx_temp_file(path, cap, tag) == 0);
  strobe_recorder *rec = NULL;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  return rec;
}

/* >>ids */
static void test_element_id_is_fnv1a(void) {
  /* The published FNV-1a 64 vectors: "", "a", "foobar". */
  CHECK_EQ_U64(strobe_element_id("", 0), 0xcbf29ce484222325ull);
  CHECK_EQ_U64(strobe_element_id("a", 1), 0xaf63dc4c8601ec8cull);
  CHECK_EQ_U64(strobe_element_id("foobar", 6), 0x85944171f73967e8ull);
  CHECK_EQ_U64(strobe_element_id_more(strobe_element_id("foo", 3), "bar", 3), strobe_element_id("foobar", 6));
}

/* >>attribution */
static void test_attributed_scopes_read_back(void) {
  char path[64];
  strobe_recorder *rec = start(path, sizeof path, "attrib");
  enum { ROWS = 3, COLS = 40 };
  for (uint32_t r = 0; r < ROWS; r++) {
    STROBE_SCOPE_ELEMENT("layout_row", &g_row_type, strobe_element_id(&r, sizeof r));
    for (uint32_t c = 0; c < COLS; c++) {
      STROBE_SCOPE_ELEMENT("layout_cell", &g_cell_type, cell_id(r, c));
      STROBE_VALUE("col", c); /* a number on the same scope stays a number */
    }
    { STROBE_SCOPE("unattributed"); }
  }
  CHECK_EQ_INT(strobe_record_stop(rec), 0);

  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  strobe_capture_record x;
  int rc, depth_open = 0;
  uint32_t row = 0, col = 0, rows = 0, cells = 0, unattributed_with_element = 0;
  const char *open_name[8] = {0};
  while ((rc = strobe_capture_next(cap, &x)) > 0) {
    if (x.type == STROBE_REC_BEGIN) {
      depth_open = (int)x.depth;
      if (x.depth < 8) open_name[x.depth] = strobe_capture_query_site(cap, x.site)->name;
    } else if (x.type == STROBE_REC_ELEMENT) {
      const strobe_capture_site *type = strobe_capture_query_site(cap, x.site);
      REQUIRE(type != NULL);
      CHECK_EQ_INT(type->kind, STROBE_SITE_ELEMENT);
      CHECK_EQ_INT((int)x.depth, depth_open); /* on the scope just opened */
      if (strcmp(open_name[x.depth], "unattributed") == 0) unattributed_with_element++;
      if (strcmp(type->name, "Row") == 0) {
        CHECK_STR_EQ(open_name[x.depth], "layout_row");
        CHECK_EQ_INT(x.depth, 1);
        row = rows++;
        col = 0;
        CHECK_EQ_U64(x.element, strobe_element_id(&row, sizeof row));
      } else {
        CHECK_STR_EQ(type->name, "Cell");
        CHECK_STR_EQ(open_name[x.depth], "layout_cell");
        CHECK_EQ_INT(x.depth, 2);
        CHECK_EQ_U64(x.element, cell_id(row, col));
        col++;
        cells++;
      }
    }
  }
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_INT(rows, ROWS);
  CHECK_EQ_INT(cells, ROWS * COLS);
  CHECK_EQ_INT(unattributed_with_element, 0);
  strobe_capture_totals t = strobe_capture_query_totals(cap);
  CHECK_EQ_U64(t.scopes, ROWS * (COLS + 2));
  CHECK_EQ_U64(t.lost, 0);
  strobe_capture_close(cap);
  unlink(path);
}

static void test_element_without_scope_is_misuse(void) {
  char path[64];
  strobe_recorder *rec = start(path, sizeof path, "nosc");
  uint64_t before = strobe_query_misuse().value_without_scope;
  STROBE_ELEMENT_SITE(&g_cell_type, cell_id(1, 2));
  CHECK_EQ_U64(strobe_query_misuse().value_without_scope, before + 1);
  CHECK_EQ_INT(strobe_record_stop(rec), 0);
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  strobe_capture_record x;
  int rc;
  uint32_t elements = 0;
  while ((rc = strobe_capture_next(cap, &x)) > 0) elements += x.type == STROBE_REC_ELEMENT;
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_INT(elements, 0);
  CHECK_EQ_U64(strobe_capture_query_totals(cap).misuse.value_without_scope, 1);
  strobe_capture_close(cap);
  unlink(path);
}

/* >>trees */

/* A small tree, in preorder:      0 Window
 *                                  1 Row r0
 *                                   2 Cell, 2 Cell
 *                                  1 Row r1
 *                                   2 Cell
 *                                    3 Cell (a cell's child)
 *                                  1 Row r2                          */
static const uint32_t k_depth[] = {0, 1, 2, 2, 1, 2, 3, 1};
static const int32_t k_parent[] = {-1, 0, 1, 1, 0, 4, 5, 0};
#define TREE_N (sizeof k_depth / sizeof k_depth[0])

static void push_small_tree(void) {
  STROBE_ELEMENT_TYPE(window_type, "Window");
  for (uint32_t i = 0; i < TREE_N; i++) {
    strobe_tree_prop props[2] = {{"padding", 2.5 * i}, {"opacity", 1.0 / (i + 1)}};
    strobe_tree_node n = {k_depth[i], k_depth[i] == 0 ? &window_type : k_depth[i] == 1 ? &g_row_type : &g_cell_type,
                          cell_id(i, 7), 10.0f * (float)i, 0.5f + (float)i, 100.25f, 20.0f,
                          props, i % 3};
    CHECK_EQ_INT(strobe_tree_push(&n), 0);
  }
}

static void check_small_tree(const strobe_capture *cap, const strobe_capture_tree *t) {
  REQUIRE_EQ_INT(t->nnodes, TREE_N);
  CHECK_EQ_U64(t->nodes_dropped, 0);
  CHECK_EQ_U64(t->props_dropped, 0);
  for (uint32_t i = 0; i < TREE_N; i++) {
    const strobe_capture_tree_node *n = &t->nodes[i];
    CHECK_EQ_INT(n->depth, k_depth[i]);
    CHECK_STR_EQ(strobe_capture_query_site(cap, n->type)->name,
                 k_depth[i] == 0 ? "Window" : k_depth[i] == 1 ? "Row" : "Cell");
    CHECK_EQ_U64(n->id, cell_id(i, 7));
    CHECK(n->x == 10.0f * (float)i && n->y == 0.5f + (float)i && n->width == 100.25f && n->height == 20.0f);
    REQUIRE_EQ_INT(n->nprops, i % 3);
    if (n->nprops > 0) {
      CHECK_STR_EQ(n->props[0].name, "padding");
      CHECK(n->props[0].value == 2.5 * i);
    }
    if (n->nprops > 1) {
      CHECK_STR_EQ(n->props[1].name, "opacity");
      CHECK(n->props[1].value == 1.0 / (i + 1));
    }
  }
  int32_t parent[TREE_N];
  REQUIRE_EQ_INT(strobe_capture_tree_parents(t, parent), 0);
  for (uint32_t i = 0; i < TREE_N; i++) CHECKF(parent[i] == k_parent[i], "node %u: parent %d, want %d", i, parent[i], k_parent[i]);
}

static void test_tree_snapshot_round_trips(void) {
  char path[64];
  strobe_recorder *rec = start(path, sizeof path, "tree");
  CHECK_EQ_INT(strobe_tree_begin(), 0); /* nothing requested: this pass records nothing */
  REQUIRE_EQ_INT(strobe_tree_request(), 0);
  CHECK_EQ_INT(strobe_tree_query_status().pending, 1);
  REQUIRE_EQ_INT(strobe_tree_begin(), 1);
  CHECK_EQ_INT(strobe_tree_query_status().pending, 0);
  push_small_tree();
  CHECK_EQ_INT(strobe_tree_end(), (int)TREE_N);
  CHECK_EQ_INT(strobe_tree_begin(), 0); /* the request was answered: the next pass records nothing */
  CHECK_EQ_INT(strobe_record_stop(rec), 0);
  strobe_tree_status st = strobe_tree_query_status();
  CHECK_EQ_U64(st.requests, 1);
  CHECK_EQ_U64(st.taken, 1);
  CHECK_EQ_U64(st.written, 1);
  CHECK_EQ_INT(st.last_nodes, TREE_N);
  CHECK(st.last_bytes > TREE_N * 27);

  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  CHECK_EQ_INT(strobe_capture_query_header(cap)->tree_max_nodes, STROBE_TREE_MAX_NODES);
  CHECK_EQ_INT(strobe_capture_query_header(cap)->tree_max_snapshots, STROBE_TREE_MAX_SNAPSHOTS);
  strobe_capture_record x;
  int rc, trees = 0;
  while ((rc = strobe_capture_next(cap, &x)) > 0) {
    if (x.type != STROBE_REC_TREE) continue;
    trees++;
    CHECK_EQ_U64(x.tree->seq, 1);
    CHECK(x.tree->time_ns >= 0.0);
    check_small_tree(cap, x.tree);
  }
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_INT(trees, 1);
  CHECK_EQ_U64(strobe_capture_query_totals(cap).trees, 1);
  CHECK_EQ_U64(strobe_capture_query_totals(cap).trees_dropped, 0);
  strobe_capture_close(cap);
  unlink(path);
}

static void test_tree_bounds_are_counted(void) {
  char path[64];
  strobe_recorder *rec = start(path, sizeof path, "tbound");
  /* One snapshot past the node bound, with one node past the property bound. */
  REQUIRE_EQ_INT(strobe_tree_request(), 0);
  REQUIRE_EQ_INT(strobe_tree_begin(), 1);
  strobe_tree_prop many[STROBE_TREE_MAX_PROPS + 3];
  for (uint32_t i = 0; i < STROBE_TREE_MAX_PROPS + 3; i++) many[i] = (strobe_tree_prop){"w", (double)i};
  for (uint32_t i = 0; i < STROBE_TREE_MAX_NODES + 5; i++) {
    strobe_tree_node n = {i ? 1 : 0, &g_cell_type, i, 0, 0, 1, 1, i == 1 ? many : NULL,
                          i == 1 ? STROBE_TREE_MAX_PROPS + 3 : 0};
    CHECK_EQ_INT(strobe_tree_push(&n), 0);
  }
  CHECK_EQ_INT(strobe_tree_end(), STROBE_TREE_MAX_NODES);
  /* Then more snapshots than a capture keeps. */
  for (int s = 0; s < STROBE_TREE_MAX_SNAPSHOTS + 1; s++) {
    REQUIRE_EQ_INT(strobe_tree_request(), 0);
    REQUIRE_EQ_INT(strobe_tree_begin(), 1);
    strobe_tree_node root = {0, &g_row_type, (uint64_t)s, 0, 0, 1, 1, NULL, 0};
    CHECK_EQ_INT(strobe_tree_push(&root), 0);
    CHECK_EQ_INT(strobe_tree_end(), 1);
    strobe_record_flush(rec); /* one pass each: the drain's queue holds a few at a time */
  }
  CHECK_EQ_INT(strobe_record_stop(rec), 0);

  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  strobe_capture_record x;
  int rc, trees = 0;
  while ((rc = strobe_capture_next(cap, &x)) > 0) {
    if (x.type != STROBE_REC_TREE) continue;
    if (trees++ == 0) {
      CHECK_EQ_INT(x.tree->nnodes, STROBE_TREE_MAX_NODES);
      CHECK_EQ_U64(x.tree->nodes_dropped, 5);
      CHECK_EQ_U64(x.tree->props_dropped, 3);
      CHECK_EQ_INT(x.tree->nodes[1].nprops, STROBE_TREE_MAX_PROPS);
    }
  }
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_INT(trees, STROBE_TREE_MAX_SNAPSHOTS);
  strobe_capture_totals t = strobe_capture_query_totals(cap);
  CHECK_EQ_U64(t.trees, STROBE_TREE_MAX_SNAPSHOTS);
  CHECK_EQ_U64(t.trees_dropped, 2); /* 1 + 17 taken, 16 kept */
  strobe_capture_close(cap);
  unlink(path);
}

static void test_tree_refusals(void) {
  CHECK_EQ_INT(strobe_tree_request(), STROBE_ESTATE); /* nothing records: nowhere for it to go */
  CHECK_EQ_INT(strobe_tree_begin(), 0);
  strobe_tree_node n = {0, &g_cell_type, 1, 0, 0, 1, 1, NULL, 0};
  CHECK_EQ_INT(strobe_tree_push(&n), STROBE_ESTATE);
  CHECK_EQ_INT(strobe_tree_end(), STROBE_ESTATE);

  char path[64];
  strobe_recorder *rec = start(path, sizeof path, "tref");
  REQUIRE_EQ_INT(strobe_tree_request(), 0);
  REQUIRE_EQ_INT(strobe_tree_begin(), 1);
  strobe_tree_node deep = {1, &g_cell_type, 1, 0, 0, 1, 1, NULL, 0};
  CHECK_EQ_INT(strobe_tree_push(&deep), STROBE_EINVAL); /* the first node is a root */
  CHECK_EQ_INT(strobe_tree_push(&n), 0);
  deep.depth = 2;
  CHECK_EQ_INT(strobe_tree_push(&deep), STROBE_EINVAL); /* two deeper than the node before */
  strobe_site scope = {"not_a_type", NULL, NULL, __FILE__, "f", 1, STROBE_SITE_SCOPE, 0, 0, 0};
  strobe_tree_node wrong = {1, &scope, 1, 0, 0, 1, 1, NULL, 0};
  CHECK_EQ_INT(strobe_tree_push(&wrong), STROBE_EINVAL);
  strobe_tree_prop bad = {"", 1.0};
  strobe_tree_node badp = {1, &g_cell_type, 1, 0, 0, 1, 1, &bad, 1};
  CHECK_EQ_INT(strobe_tree_push(&badp), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_tree_push(NULL), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_tree_end(), 1); /* only the valid root was kept */
  CHECK_EQ_INT(strobe_record_stop(rec), 0);
  unlink(path);
}

static void test_tree_parents_rebuild(void) {
  /* The stack rule, on its own: pop while the top is as deep or deeper. */
  strobe_capture_tree_node nodes[TREE_N];
  memset(nodes, 0, sizeof nodes);
  for (uint32_t i = 0; i < TREE_N; i++) nodes[i].depth = k_depth[i];
  strobe_capture_tree t = {0};
  t.nnodes = TREE_N;
  t.nodes = nodes;
  int32_t parent[TREE_N];
  REQUIRE_EQ_INT(strobe_capture_tree_parents(&t, parent), 0);
  for (uint32_t i = 0; i < TREE_N; i++) CHECKF(parent[i] == k_parent[i], "node %u: parent %d, want %d", i, parent[i], k_parent[i]);
  /* Two roots side by side. */
  nodes[4].depth = 0;
  nodes[5].depth = 1;
  nodes[6].depth = 1;
  nodes[7].depth = 2;
  REQUIRE_EQ_INT(strobe_capture_tree_parents(&t, parent), 0);
  CHECK_EQ_INT(parent[4], -1);
  CHECK_EQ_INT(parent[5], 4);
  CHECK_EQ_INT(parent[6], 4);
  CHECK_EQ_INT(parent[7], 6);
  nodes[7].depth = 3; /* two deeper than the node before it */
  CHECK_EQ_INT(strobe_capture_tree_parents(&t, parent), STROBE_ECORRUPT);
  CHECK_EQ_INT(strobe_capture_tree_parents(NULL, parent), STROBE_EINVAL);
}

static void test_flight_dump_carries_tree(void) {
  strobe_flight_recorder *fr;
  REQUIRE_EQ_INT(strobe_flight_recorder_start(&(strobe_flight_recorder_desc){0}, &fr), 0);
  { STROBE_SCOPE("before"); }
  REQUIRE_EQ_INT(strobe_tree_request(), 0);
  REQUIRE_EQ_INT(strobe_tree_begin(), 1);
  push_small_tree();
  CHECK_EQ_INT(strobe_tree_end(), (int)TREE_N);
  char path[64];
  REQUIRE(fx_temp_file(path, sizeof path, "ftree") == 0);
  REQUIRE_EQ_INT(strobe_flight_recorder_dump(fr, path), 0);
  CHECK_EQ_INT(strobe_flight_recorder_stop(fr), 0);
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  strobe_capture_record x;
  int rc, trees = 0;
  while ((rc = strobe_capture_next(cap, &x)) > 0)
    if (x.type == STROBE_REC_TREE) {
      trees++;
      check_small_tree(cap, x.tree);
    }
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_INT(trees, 1);
  strobe_capture_close(cap);
  unlink(path);
}

#define CASES(X)                     \
  X(element_id_is_fnv1a)             \
  X(attributed_scopes_read_back)     \
  X(element_without_scope_is_misuse) \
  X(tree_snapshot_round_trips)       \
  X(tree_bounds_are_counted)         \
  X(tree_refusals)                   \
  X(tree_parents_rebuild)            \
  X(flight_dump_carries_tree)
HARNESS_MAIN(CASES)
