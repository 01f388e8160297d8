/*
 * make_capture.c — writes deterministic capture files for the CLI tests.
 *
 * It drives the library's real block encoder (format/capture_writer.h) with
 * synthetic events whose timestamps it chooses, and fixed header facts: the
 * clock is "monotonic" at exactly 1 ns per tick and its epoch is 0. So every duration in the file is known in advance,
 * and the tests can check counts and percentiles exactly.
 *
 * What one frame k (0-based) of thread 0 "main" holds, in ns:
 *   frame                          top-level scope
 *     update
 *       work x3                    each 1000 * (1 + k % 10) * (100 + grow) / 100
 *     render
 *       draw x2                    2000 each, VALUE triangles = 100, 200
 *       COUNTER draw_calls += 2
 *     spike                        only in frame --spike K: 50000
 *   GAUGE queue_depth = k % 7
 *   FRAME mark                     after the frame scope ends
 * and thread 1 "worker", per frame: job { io (5000) } (8000 in all) with a
 * CUMULATIVE "iter" entry (10 iterations, 3000 total, min 200, max 400).
 * With --stages, frame k also runs, after render, the stage phase_update
 * holding two row_bind stages of 300 ns, and on even k the stage
 * model_update holding one row_bind of 500 ns: one stage site (declared in
 * "layout") that ran under two parents.
 *
 * With --ops, thread 0 "main" holds instead only operations, as a toolkit's
 * frame clock writes them (strobe_op_begin_frame, stages, strobe_op_counter_add,
 * strobe_op_end): no scope and no frame mark. Frame k is a pass of window
 * "main" with the application's frame id 193 + k, starting every 16 ms,
 * except that frame --stall K starts 2 s late (default 50), lasting
 * 4000 + 100 * (k % 10) ns: stage "layout" 3000 (twice: 1000 + 2000) with
 * "paint" 1500 nested in it, counter "rows" = k; frame 7 is not committed.
 * The steady frame rate is 62.5 fps; one stall pulls the first-to-last one
 * down.
 *
 * With --slow K:NS (up to 4 times) frame K also runs a `spike` leaf of NS ns
 * (frames many times over the budget). With --stage-tree frame k also runs,
 * after render, the stage layout_update holding layout_compute (3000 ns) and
 * component_after_layout (800 ns), both declared in layout_update, then the
 * stage text_shaping (1500 ns): sorted by total, a declared child follows
 * another stage (as examples/demo/view.c records them). With --pass-category
 * the `frame` scope has the category "pass" (listed as a pass beside the
 * FRAME-mark frames); with --worker-marks the worker also writes a FRAME
 * mark after each job (frames on two threads, each numbered from 1). With
 * --units the `triangles` value is declared in bytes and draws 1536 and 3072
 * (printed 1.50 KiB and 3.00 KiB).
 *
 * With --event-cost NS the header's calibrated cost per event is NS (default 8.6; 0: none).
 *
 * With --gpu thread 0 also records, after each frame k (ending at T), GPU
 * frame 500 + k as include/strobe/gpu.h writes it (docs/gpu.md): a
 * calibration pair of domain "gpu0" (2 device ticks per ns, 1 s ahead:
 * device = 2 h + 2e9, read at T between T - 50 and T + 50), the marks
 * cpu_end at T and submit at T + 1000, spans "composite" (pass main) and
 * "blur" (pass filter_group) on lane "graphics" from the GPU start
 * T + 1000 + backlog, backlog = 2000 + 100 * (k % 10), 5000 and 1000 ns
 * long, and fence_seen 300 * (1 + k % 5) ns after the GPU end; frame
 * --gpu-pass-ids (implies --gpu; with --ops) gives GPU frame k pass k's frame
 * id, 193 + k, as an application whose passes submit GPU work numbers both.
 * --gpu-bad K sees its fence 1000 ns before the GPU end (an order
 * violation).
 *
 * With --producer thread 0 also records, after each frame k (ending at T),
 * two external producer spans as src/probe/producer.c writes them
 * (include/strobe/producer.h): "mix" from T + 100 to T + 700 and "decode"
 * nested in it from T + 200 to T + 400, on lane "audio" in host ticks.
 *
 * With --other-file every site is declared in "other/app.c": sites match by
 * name, file and line, so such a capture has no site in common with one
 * made without it. With --no-marks main writes no FRAME mark: a program
 * without frames (no marks, no operations).
 *
 * With --kinds, main also counts draw calls by kind (docs/recording.md
 * §Counters and gauges by kind) in every frame's render: draw_calls/quads
 * += k % 5 and += 1 (two events), draw_calls/text += 3; and sets the gauge
 * gpu_memory/textures = 1000 * (k % 4) bytes before its FRAME mark.
 *
 * With --ui-tree, frame k's render is attributed to element Row id 1000 + k
 * and its two draws to Cells 10k + 1 and 10k + 2 (docs/recording.md
 * §Elements), and frames 4 and 9 each take a UI-tree snapshot during render:
 * Row (depth 0, bounds 0 20k 300 20, property height = 20) holding its two
 * Cells (depth 1, bounds 150i 20k 150 20, property padding = i + 0.5).
 *
 * With --memory (>>memory; docs/memory.md), frame k's update frees frame
 * k-1's 100-byte display_list block, and its render allocates display_list
 * blocks of 100 and 28 bytes (the 28 freed 10 ns later); frame 5 also
 * allocates 4096 bytes of glyphs, never freed; each worker job allocates and
 * frees 512 bytes of io_buffers at one instant, then allocates 256 bytes of
 * handoff, which main's frame k + 1 frees in its update (later in time, but
 * written to the file before the worker's events: a free read before its
 * allocation). Frame 0 logs the message
 * "frame loop started", frame 3 "loaded 42 items" (run-time text, flagged
 * STROBE_SITE_INTERNED). So the last 100-byte block, the glyphs and the
 * last handoff block are live at the end.
 *
 * Usage: make_capture OUT [--frames N] [--grow PCT] [--spike K]
 *          [--no-footer] [--unfinished] [--lost] [--unwound] [--clock NAME]
 *          [--ns-per-tick X] [--ops] [--stall K] [--stages] [--other-file]
 *          [--no-marks] [--interned] [--slow K:NS]... [--stage-tree]
 *          [--pass-category] [--worker-marks] [--units] [--kinds] [--ui-tree]
 *          [--gpu] [--gpu-bad K] [--gpu-pass-ids] [--producer] [--no-unix-epoch] [--samples]
 *          [--merge-block] [--pid N] [--thread-gap] [--epoch-mono NS] [--crash] [--memory]
 * With --samples, the sampler's records (>>samples) follow the events. With
 * --merge-block, the capture says it is a merge (a MERGE block: docs/cli.md
 * §merge) of one input of process "left" that could not carry 5 samples.
 * --pid N sets the header's pid (default 4242): a merge names it pid_<N>.
 * --thread-gap makes the worker thread 2, leaving index 1 undefined (a gap in
 * the thread indexes, as a cut or merged capture may have). --epoch-mono NS
 * puts the header's epoch at NS of CLOCK_MONOTONIC (default 0). --crash ends
 * the file as a crash handler does (docs/recording.md §Crashes): no footer, a
 * CRASH block: SIGSEGV on thread main in pass 394 › layout_compute, main in
 * frame › layout_compute › measure_row, the worker in job › io.
 * It must never depend on the real clock: the tests compare exact numbers.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/collect.h"
#include "format/capture_writer.h"
#include "format/codec.h"
#include "strobe/strobe.h"

typedef struct opts {
  const char *out;
  int frames;        /* frames on main, default 50 */
  int grow;          /* percent added to every `work` duration */
  int spike;         /* frame index that gets a `spike` span and 3x work, -1 for none */
  int no_footer;     /* stop without the FOOTER: a cut-short capture */
  int unfinished;    /* leave `stalled` open on the worker at the end */
  int lost;          /* drop the END of one `job` (a LOST marker and block) */
  int unwound;       /* job 20's END is UNWOUND (docs/recording.md, Unwinding); the footer counts 3 depth overflows */
  int stages;        /* row_bind under phase_update and model_update */
  const char *clock; /* header clock_source */
  double ns_per_tick;
  int ops;           /* main holds operations only */
  int stall;         /* --ops: the frame that starts 2 s late */
  int other_file;    /* every site in another source file: no site in common with the others */
  int no_marks;      /* no FRAME mark: a program without frames (a batch job) */
  int interned;      /* `work` is named at run time (STROBE_SITE_INTERNED) and 2 + 1 names were refused */
  int nslow;         /* --slow K:NS given nslow times */
  int slow_k[4];
  uint64_t slow_ns[4];
  int stage_tree;    /* layout_update { layout_compute, component_after_layout }, text_shaping */
  int pass_category; /* the `frame` scope's category is "pass" */
  int worker_marks;  /* the worker marks a frame after each job */
  int units;         /* `triangles` in bytes: 1536 and 3072 */
  int kinds;         /* draw calls and GPU memory by kind */
  int ui_tree;       /* element attribution and two UI-tree snapshots */
  int deep;          /* attachments in frames 4 and 9, a deep capture of frame 4 */
  int gpu;           /* GPU frames after each frame (>>gpu) */
  int gpu_bad;       /* --gpu: the frame whose fence is seen before its GPU end, -1 none */
  int gpu_pass_ids;  /* --gpu-pass-ids: GPU frame k has pass k's frame id (193 + k, --ops), not 500 + k */
  int producer;      /* two producer spans after each frame (>>producer) */
  int memory;        /* allocations, frees and messages (>>memory) */
  int no_unix_epoch; /* a header without the wall-clock anchor (tag 30), as older writers wrote */
  int samples;       /* the sampler's records and counts (>>samples) */
  int merge_block;   /* a MERGE block naming what a merge could not carry */
  int thread_gap;    /* the worker is thread 2: no thread 1 (a gap in the thread indexes) */
  uint64_t epoch_mono; /* the header's epoch on CLOCK_MONOTONIC, ns (default 0) */
  int crash;         /* no footer: a CRASH block instead (SIGSEGV on main in pass 394 > layout_compute) */
  unsigned long long pid; /* the header's pid, default 4242: a merge names an input pid_<pid> */
  double event_cost;  /* the header's event_cost_ns (--event-cost NS; default 8.6) */
} opts;

/* >>sites: ids are assigned here, in this order, from 1. */
enum { S_FRAME = 1, S_UPDATE, S_WORK, S_RENDER, S_DRAW, S_TRIANGLES, S_DRAW_CALLS,
       S_QUEUE, S_MARK, S_JOB, S_IO, S_ITER, S_STALLED, S_SPIKE, S_LAYOUT, S_PAINT, S_PHASE_UPDATE,
       S_MODEL_UPDATE, S_ROW_BIND, S_LAYOUT_UPDATE, S_LAYOUT_COMPUTE, S_AFTER_LAYOUT, S_TEXT_SHAPING,
       S_WORKER_MARK, S_DC_QUADS, S_DC_TEXT, S_GPU_TEXTURES, S_ROW_TYPE, S_CELL_TYPE, S_GPU_COMPOSITE,
       S_GPU_BLUR, S_MIX, S_DECODE, S_DL_ALLOC, S_DL_FREE, S_GLYPH_ALLOC, S_IO_ALLOC, S_IO_FREE, S_MSG_STATIC,
       S_MSG_CONTENT, S_HANDOFF_ALLOC, S_HANDOFF_FREE, S_COUNT };
enum { L_MAIN = 1, L_ROWS, L_GPU0, L_GRAPHICS, L_FILTER_GROUP, L_AUDIO }; /* label ids */

static strobe_site g_sites[S_COUNT] = {
    [S_FRAME] = {"frame", NULL, NULL, "app/loop.c", "run_frame", 10, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0},
    [S_UPDATE] = {"update", NULL, NULL, "app/loop.c", "update", 20, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0},
    [S_WORK] = {"work", "sim", NULL, "app/sim.c", "work", 30, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0},
    [S_RENDER] = {"render", NULL, NULL, "app/loop.c", "render", 40, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0},
    [S_DRAW] = {"draw", "gfx", NULL, "app/gfx.c", "draw", 50, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0},
    [S_TRIANGLES] = {"triangles", NULL, NULL, "app/gfx.c", "draw", 51, STROBE_SITE_VALUE, 0, STROBE_UNIT_COUNT, 0},
    [S_DRAW_CALLS] = {"draw_calls", NULL, NULL, "app/gfx.c", "render", 60, STROBE_SITE_COUNTER, 0, STROBE_UNIT_COUNT, 0},
    [S_QUEUE] = {"queue_depth", NULL, NULL, "app/loop.c", "run_frame", 70, STROBE_SITE_GAUGE, 0, STROBE_UNIT_NONE, 0},
    [S_MARK] = {"frame", NULL, NULL, "app/loop.c", "main", 80, STROBE_SITE_FRAME, 0, STROBE_UNIT_NONE, 0},
    [S_JOB] = {"job", NULL, NULL, "app/worker.c", "job", 90, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0},
    [S_IO] = {"io", NULL, NULL, "app/worker.c", "io", 100, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0},
    [S_ITER] = {"iter", NULL, NULL, "app/worker.c", "job", 110, STROBE_SITE_CUMULATIVE, 0, STROBE_UNIT_NONE, 0},
    [S_STALLED] = {"stalled", NULL, NULL, "app/worker.c", "stall", 120, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0},
    [S_SPIKE] = {"spike", NULL, NULL, "app/loop.c", "spike", 130, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0},
    [S_LAYOUT] = {"layout", NULL, NULL, "app/clock.c", "on_layout", 140, STROBE_SITE_STAGE, 0, STROBE_UNIT_NONE, 0},
    [S_PAINT] = {"paint", NULL, "layout", "app/clock.c", "on_paint", 150, STROBE_SITE_STAGE, 0, STROBE_UNIT_NONE, 0},
    [S_PHASE_UPDATE] = {"phase_update", NULL, NULL, "app/clock.c", "on_update", 140, STROBE_SITE_STAGE, 0, STROBE_UNIT_NONE, 0},
    [S_MODEL_UPDATE] = {"model_update", NULL, NULL, "app/model.c", "items_changed", 150, STROBE_SITE_STAGE, 0, STROBE_UNIT_NONE, 0},
    [S_ROW_BIND] = {"row_bind", NULL, "layout", "app/list.c", "bind", 160, STROBE_SITE_STAGE, 0, STROBE_UNIT_NONE, 0},
    [S_ROW_TYPE] = {"Row", NULL, NULL, "app/list.c", NULL, 170, STROBE_SITE_ELEMENT, 0, STROBE_UNIT_NONE, 0},
    [S_CELL_TYPE] = {"Cell", NULL, NULL, "app/list.c", NULL, 171, STROBE_SITE_ELEMENT, 0, STROBE_UNIT_NONE, 0},
    [S_LAYOUT_UPDATE] = {"layout_update", NULL, NULL, "app/view.c", "view_render", 170, STROBE_SITE_STAGE, 0, STROBE_UNIT_NONE, 0},
    [S_LAYOUT_COMPUTE] = {"layout_compute", NULL, "layout_update", "app/view.c", "layout_compute", 180, STROBE_SITE_STAGE, 0, STROBE_UNIT_NONE, 0},
    [S_AFTER_LAYOUT] = {"component_after_layout", NULL, "layout_update", "app/view.c", "after_layout", 190, STROBE_SITE_STAGE, 0, STROBE_UNIT_NONE, 0},
    [S_TEXT_SHAPING] = {"text_shaping", NULL, NULL, "app/view.c", "view_render", 200, STROBE_SITE_STAGE, 0, STROBE_UNIT_NONE, 0},
    [S_WORKER_MARK] = {"job_done", NULL, NULL, "app/worker.c", "job", 210, STROBE_SITE_FRAME, 0, STROBE_UNIT_NONE, 0},
    [S_DC_QUADS] = {"draw_calls", "quads", NULL, "app/gfx.c", "render", 170, STROBE_SITE_COUNTER, 0, STROBE_UNIT_COUNT, 0},
    [S_DC_TEXT] = {"draw_calls", "text", NULL, "app/gfx.c", "render", 171, STROBE_SITE_COUNTER, 0, STROBE_UNIT_COUNT, 0},
    [S_GPU_TEXTURES] = {"gpu_memory", "textures", NULL, "app/gfx.c", "render", 180, STROBE_SITE_GAUGE, 0, STROBE_UNIT_BYTES, 0},
    [S_GPU_COMPOSITE] = {"composite", "gpu", NULL, "app/gpu.c", NULL, 220, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0},
    [S_GPU_BLUR] = {"blur", "gpu", NULL, "app/gpu.c", NULL, 230, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0},
    [S_MIX] = {"mix", "producer", NULL, "app/audio.c", NULL, 240, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0},
    [S_DECODE] = {"decode", "producer", NULL, "app/audio.c", NULL, 250, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0},
    [S_DL_ALLOC] = {"display_list", NULL, NULL, "app/gfx.c", "render", 260, STROBE_SITE_ALLOC, 0, STROBE_UNIT_NONE, 0},
    [S_DL_FREE] = {"display_list", NULL, NULL, "app/gfx.c", "render", 261, STROBE_SITE_FREE, 0, STROBE_UNIT_NONE, 0},
    [S_GLYPH_ALLOC] = {"glyphs", NULL, NULL, "app/text.c", "shape", 270, STROBE_SITE_ALLOC, 0, STROBE_UNIT_NONE, 0},
    [S_IO_ALLOC] = {"io_buffers", NULL, NULL, "app/worker.c", "io", 280, STROBE_SITE_ALLOC, 0, STROBE_UNIT_NONE, 0},
    [S_IO_FREE] = {"io_buffers", NULL, NULL, "app/worker.c", "io", 281, STROBE_SITE_FREE, 0, STROBE_UNIT_NONE, 0},
    [S_MSG_STATIC] = {"frame loop started", NULL, NULL, "app/loop.c", "main", 290, STROBE_SITE_MESSAGE, 0,
                      STROBE_UNIT_NONE, 0},
    [S_MSG_CONTENT] = {"loaded 42 items", NULL, NULL, "", "", 0, STROBE_SITE_MESSAGE, 0, STROBE_UNIT_NONE,
                       STROBE_SITE_INTERNED},
    [S_HANDOFF_ALLOC] = {"handoff", NULL, NULL, "app/worker.c", "job", 300, STROBE_SITE_ALLOC, 0, STROBE_UNIT_NONE, 0},
    [S_HANDOFF_FREE] = {"handoff", NULL, NULL, "app/loop.c", "update", 301, STROBE_SITE_FREE, 0, STROBE_UNIT_NONE, 0},
};

/* >>sink */
static int sink_fn(void *ctx, const void *data, size_t len) {
  return fwrite(data, 1, len, (FILE *)ctx) == len ? 0 : STROBE_EIO;
}

/* >>events: a per-thread batch with a running clock. */
static uint64_t f64_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

typedef struct batch {
  strobe__event ev[4096];
  size_t n;
  uint64_t now; /* ticks == ns */
} batch;

static void put(batch *b, uint64_t ts, uint32_t kind, uint32_t data) {
  b->ev[b->n++] = (strobe__event){ts, kind, data};
}
static void begin(batch *b, uint32_t site) { put(b, b->now, STROBE__EV_BEGIN, site); }
static void end(batch *b, uint32_t site) { put(b, b->now, STROBE__EV_END, site); }
static void number(batch *b, uint32_t kind, uint32_t site, double v) {
  put(b, b->now, kind, site);
  put(b, f64_bits(v), STROBE__EV_PAYLOAD, 0);
}
/* A leaf scope of exactly dur ns, then a 100 ns gap. */
static void leaf(batch *b, uint32_t site, uint64_t dur) {
  begin(b, site);
  b->now += dur;
  end(b, site);
  b->now += 100;
}

static strobe__writer *g_writer; /* for the --ui-tree snapshots */

/* An ELEMENT event: the innermost scope's element; its ts is the id. */
static void element(batch *b, uint32_t type, uint64_t id) { put(b, id, STROBE__EV_ELEMENT, type); }

/* The --ui-tree snapshot of frame k, taken at b->now. */
static void snapshot(batch *b, int k) {
  strobe__tree_node nodes[3];
  strobe__tree_prop props[3];
  strobe__tree t = {0};
  t.seq = k == 4 ? 1 : 2;
  t.ticks = b->now;
  t.nnodes = 3;
  t.nprops = 3;
  t.nkeys = 2;
  t.keys[0] = "height";
  t.keys[1] = "padding";
  t.nodes = nodes;
  t.props = props;
  float y = 20.0f * (float)k;
  nodes[0] = (strobe__tree_node){1000u + (uint64_t)k, {0, y, 300, 20}, 0, S_ROW_TYPE, 0, 1};
  props[0] = (strobe__tree_prop){0, 20};
  for (uint32_t i = 0; i < 2; i++) {
    nodes[1 + i] = (strobe__tree_node){10u * (uint64_t)k + 1 + i, {150.0f * (float)i, y, 150, 20}, 1, S_CELL_TYPE,
                                       1 + i, 1};
    props[1 + i] = (strobe__tree_prop){1, i + 0.5};
  }
  strobe__writer_tree(g_writer, &t);
}

/* --deep: frame 4 attaches a geometry buffer (resource 0x10), a glyph
 * mask (0x20, A8 4 x 2) and a screenshot (0x1, image/png bytes), and its
 * deep capture draws a clear, a quad and a sprite with them, then three
 * calls that each miss something (below); frame 9 attaches the geometry buffer again (stored
 * earlier) and 0x30, which the 600-byte content bound cuts. */
static void attach(uint64_t frame, uint64_t resource, const char *media, uint32_t w, uint32_t h, const void *bytes,
                   size_t size, uint64_t now) {
  strobe__content c = {0};
  c.type = STROBE__CONTENT_ATTACH;
  c.frame = frame;
  c.ticks = now;
  c.resource = resource;
  snprintf(c.media_type, sizeof c.media_type, "%s", media);
  c.width = w;
  c.height = h;
  c.size = size;
  c.bytes = (uint8_t *)(uintptr_t)bytes;
  strobe__writer_content(g_writer, &c);
}

static void deep_content(batch *b, int k) {
  static const float prims[3][8] = {{0, 0, 300, 200, 1, 1, 1, 1}, {10, 20, 100, 22, 0.2f, 0.3f, 0.4f, 1}, {12, 24, 4, 2, 0, 0, 0, 1}};
  static const uint8_t mask[8] = {0, 255, 255, 0, 128, 64, 32, 16};
  static const uint8_t png[16] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0, 'I', 'E', 'N', 'D'};
  static uint8_t big[500];
  if (k == 4) {
    attach(4, 0x10, "application/x-strobe-demo-prims", 0, 0, prims, sizeof prims, b->now);
    attach(4, 0x20, STROBE_MEDIA_A8, 4, 2, mask, sizeof mask, b->now);
    attach(4, 0x1, "image/png", 300, 200, png, sizeof png, b->now);
    strobe__draw calls[6];
    strobe_draw_ref refs[8] = {{0x10, STROBE_DEEP_GEOMETRY}, {0x10, STROBE_DEEP_GEOMETRY}, {0x10, STROBE_DEEP_GEOMETRY},
                               {0x20, STROBE_DEEP_TEXTURE},  {0x1, STROBE_DEEP_SURFACE},   {0x10, STROBE_DEEP_GEOMETRY},
                               {0x30, STROBE_DEEP_TEXTURE},  {0x50, STROBE_DEEP_GEOMETRY}};
    calls[0] = (strobe__draw){0, 1, 2, 0, 4, 0, 1, 0, 1, 1, {0, 0, 300, 200}, {0, 0, 300, 200}};
    calls[1] = (strobe__draw){3, 1, 2, 0, 4, 1, 1, 1, 1, 1, {10, 20, 100, 22}, {0, 0, 300, 200}};
    calls[2] = (strobe__draw){4, 5, 2, 0, 4, 2, 1, 2, 2, 1, {12, 24, 4, 2}, {0, 0, 300, 200}};
    /* A surface without its geometry, a sprite whose mask (0x30) is never stored here, a quad whose
     * geometry buffer (0x50) never was: each says what it misses. */
    calls[3] = (strobe__draw){6, 7, 2, 0, 4, 0, 1, 4, 1, 0, {0}, {0}};
    calls[4] = (strobe__draw){4, 5, 2, 0, 4, 2, 1, 5, 2, 1, {12, 24, 4, 2}, {0, 0, 300, 200}};
    calls[5] = (strobe__draw){3, 1, 2, 0, 4, 0, 1, 7, 1, 1, {0, 0, 1, 1}, {0, 0, 300, 200}};
    strobe__content c = {0};
    c.type = STROBE__CONTENT_DEEP;
    c.frame = 4;
    c.ticks = b->now;
    c.seq = 1;
    c.ncalls = 6;
    c.calls = calls;
    c.refs = refs;
    c.nrefs = 8;
    c.nlabels = 8;
    const char *labels[8] = {"clear", "solid", "main", "quad", "sprite", "sprite_a8", "surface", "composite"};
    memcpy(c.labels, labels, sizeof labels);
    strobe__writer_content(g_writer, &c);
  } else if (k == 9) {
    attach(9, 0x10, "application/x-strobe-demo-prims", 0, 0, prims, sizeof prims, b->now);
    attach(9, 0x30, "application/octet-stream", 0, 0, big, sizeof big, b->now);
  }
}

/* >>memory: an allocation or free as strobe__alloc and strobe__number write them, the drain completed. */
static void alloc_ev(batch *b, uint32_t site, uint64_t addr, uint64_t size) {
  put(b, b->now, STROBE__EV_ALLOC, site);
  put(b, addr, STROBE__EV_PAYLOAD, 0);
  put(b, size, STROBE__EV_PAYLOAD, 0);
}
static void free_ev(batch *b, uint32_t site, uint64_t addr) {
  put(b, b->now, STROBE__EV_FREE, site);
  put(b, addr, STROBE__EV_PAYLOAD, 0);
}
#define DL_A(k) (0x10000u + 0x100u * (uint64_t)(k)) /* frame k's 100-byte block; B is 28 bytes after it */
#define HANDOFF(k) (0x700000u + 0x1000u * (uint64_t)(k)) /* the worker's job k hands it to main's frame k + 1 */

static void main_frame(batch *b, const opts *o, int k) {
  uint64_t work = 1000u * (uint64_t)(1 + k % 10) * (uint64_t)(100 + o->grow) / 100u;
  if (k == o->spike) work *= 3;
  begin(b, S_FRAME);
  b->now += 100;
  begin(b, S_UPDATE);
  if (o->memory && k > 0) free_ev(b, S_DL_FREE, DL_A(k - 1));
  if (o->memory && k > 0) free_ev(b, S_HANDOFF_FREE, HANDOFF(k - 1)); /* read before the worker's allocation */
  if (o->memory && k == 0) put(b, b->now, STROBE__EV_MESSAGE, S_MSG_STATIC);
  if (o->memory && k == 3) put(b, b->now, STROBE__EV_MESSAGE, S_MSG_CONTENT);
  b->now += 100;
  for (int i = 0; i < 3; i++) leaf(b, S_WORK, work);
  end(b, S_UPDATE);
  b->now += 100;
  begin(b, S_RENDER);
  if (o->ui_tree) element(b, S_ROW_TYPE, 1000u + (uint64_t)k);
  b->now += 100;
  if (o->ui_tree && (k == 4 || k == 9)) snapshot(b, k);
  if (o->deep && (k == 4 || k == 9)) deep_content(b, k);
  for (int i = 0; i < 2; i++) {
    begin(b, S_DRAW);
    if (o->ui_tree) element(b, S_CELL_TYPE, 10u * (uint64_t)k + 1 + (uint64_t)i);
    b->now += 1000;
    number(b, STROBE__EV_VALUE, S_TRIANGLES, (o->units ? 1536.0 : 100.0) * (i + 1));
    b->now += 1000;
    end(b, S_DRAW);
    b->now += 100;
  }
  number(b, STROBE__EV_COUNTER, S_DRAW_CALLS, 2);
  if (o->memory) {
    alloc_ev(b, S_DL_ALLOC, DL_A(k), 100);
    alloc_ev(b, S_DL_ALLOC, DL_A(k) + 0x80u, 28);
    if (k == 5) alloc_ev(b, S_GLYPH_ALLOC, 0x900000u, 4096);
    b->now += 10;
    free_ev(b, S_DL_FREE, DL_A(k) + 0x80u);
  }
  if (o->kinds) {
    number(b, STROBE__EV_COUNTER, S_DC_QUADS, k % 5);
    b->now += 10;
    number(b, STROBE__EV_COUNTER, S_DC_QUADS, 1);
    number(b, STROBE__EV_COUNTER, S_DC_TEXT, 3);
  }
  end(b, S_RENDER);
  b->now += 100;
  if (k == o->spike) leaf(b, S_SPIKE, 50000);
  for (int i = 0; i < o->nslow; i++)
    if (k == o->slow_k[i]) leaf(b, S_SPIKE, o->slow_ns[i]);
  if (o->stage_tree) {
    begin(b, S_LAYOUT_UPDATE);
    b->now += 100;
    leaf(b, S_LAYOUT_COMPUTE, 3000);
    leaf(b, S_AFTER_LAYOUT, 800);
    end(b, S_LAYOUT_UPDATE);
    b->now += 100;
    leaf(b, S_TEXT_SHAPING, 1500);
  }
  if (o->stages) {
    begin(b, S_PHASE_UPDATE);
    b->now += 100;
    for (int i = 0; i < 2; i++) leaf(b, S_ROW_BIND, 300);
    end(b, S_PHASE_UPDATE);
    b->now += 100;
    if (k % 2 == 0) {
      begin(b, S_MODEL_UPDATE);
      b->now += 100;
      leaf(b, S_ROW_BIND, 500);
      end(b, S_MODEL_UPDATE);
      b->now += 100;
    }
  }
  number(b, STROBE__EV_GAUGE, S_QUEUE, k % 7);
  if (o->kinds) number(b, STROBE__EV_GAUGE, S_GPU_TEXTURES, 1000.0 * (k % 4));
  end(b, S_FRAME);
  if (!o->no_marks) put(b, b->now, STROBE__EV_FRAME, S_MARK);
  b->now += 500;
}

static void worker_job(batch *b, const opts *o, int k) {
  begin(b, S_JOB);
  b->now += 1000;
  leaf(b, S_IO, 5000);
  if (o->memory) { /* allocated and freed at one instant: never live at a frame's end */
    alloc_ev(b, S_IO_ALLOC, 0x500000u + 0x1000u * (uint64_t)k, 512);
    free_ev(b, S_IO_FREE, 0x500000u + 0x1000u * (uint64_t)k);
    alloc_ev(b, S_HANDOFF_ALLOC, HANDOFF(k), 256);
  }
  b->now += 1900;
  if (o->lost && k == 10) {
    /* The job's END (and 3 more events) were dropped: depth 0 after loss. */
    put(b, b->now, STROBE__EV_LOST | (0u << 8), 4);
    b->now += 1000;
    return;
  }
  put(b, b->now, STROBE__EV_CUMULATIVE, S_ITER);
  put(b, 10, STROBE__EV_PAYLOAD, 0);
  put(b, 3000, STROBE__EV_PAYLOAD, 0);
  put(b, 200, STROBE__EV_PAYLOAD, 0);
  put(b, 400, STROBE__EV_PAYLOAD, 0);
  if (o->unwound && k == 20)
    put(b, b->now, STROBE__EV_UNWOUND, S_JOB);
  else
    end(b, S_JOB);
  if (o->worker_marks) put(b, b->now, STROBE__EV_FRAME, S_WORKER_MARK);
  b->now += 1000;
}

/* An operation event as operation.c writes it (collect.h >>operation events). */
static void op_event(batch *b, uint32_t sub, const uint64_t *w, const uint32_t *d, uint32_t n) {
  put(b, b->now, STROBE__EV_OP, sub | n << 8);
  for (uint32_t i = 0; i < n; i++) put(b, w[i], STROBE__EV_PAYLOAD, d[i]);
}

static void ops_frame(batch *b, const opts *o, int k) {
  uint64_t start = 1000000u + 16000000u * (uint64_t)k + (k >= o->stall ? 2000000000u : 0u);
  uint64_t frame_id = 193u + (uint64_t)k, dur = 4000u + 100u * (uint64_t)(k % 10);
  uint32_t flags = 1u /* pass */ | STROBE__OPF_APP_FRAME;
  b->now = start;
  uint64_t w0[3] = {(uint64_t)k + 1, frame_id, 0};
  uint32_t d0[3] = {1, L_MAIN, flags};
  op_event(b, STROBE__OPEV_BEGIN, w0, d0, 3);
  b->now = start + dur;
  double rows = (double)k;
  uint64_t rows_bits;
  memcpy(&rows_bits, &rows, sizeof rows_bits);
  flags |= STROBE__OPF_DETAIL | (k == 7 ? 0u : STROBE__OPF_COMMITTED);
  uint64_t w[4 + 6 + 1] = {(uint64_t)k + 1, frame_id, start, 0, 3000, 1000, 2000, 1500, 1500, 1500, rows_bits};
  uint32_t d[4 + 6 + 1] = {1, L_MAIN, flags, 2u | 1u << 16, S_LAYOUT, 2, 0, S_PAINT, 1, S_LAYOUT, L_ROWS};
  op_event(b, STROBE__OPEV_END, w, d, 11);
}

/* >>gpu: events as src/probe/gpu.c writes them (probe/probe.h >>gpu events). */
static void gpu_event(batch *b, uint64_t ts, uint32_t sub, const uint64_t *w, const uint32_t *d, uint32_t n) {
  put(b, ts, STROBE__EV_GPU, sub | n << 8);
  for (uint32_t i = 0; i < n; i++) put(b, w[i], STROBE__EV_PAYLOAD, d[i]);
}
static uint64_t gpu_device(uint64_t h) { return 2 * h + 2000000000u; }

static void gpu_frame(batch *b, const opts *o, int k) {
  uint64_t t = b->now, id = (o->gpu_pass_ids ? 193u : 500u) + (uint64_t)k;
  uint64_t start = t + 1000 + 2000 + 100 * (uint64_t)(k % 10), end = start + 6000;
  uint64_t fence = k == o->gpu_bad ? end - 1000 : end + 300 * (uint64_t)(1 + k % 5);
  uint64_t pw[3] = {gpu_device(t), t - 50, f64_bits(2e9)};
  uint32_t pd[3] = {L_GPU0, 0, 0};
  gpu_event(b, t + 50, STROBE__GPUEV_PAIR, pw, pd, 3);
  const uint64_t marks[3][2] = {{t, 1}, {t + 1000, 2}, {fence, 3}}; /* cpu_end, submit, fence_seen */
  for (int i = 0; i < 3; i++) {
    uint64_t mw[1] = {id};
    uint32_t md[1] = {(uint32_t)marks[i][1]};
    gpu_event(b, marks[i][0], STROBE__GPUEV_MARK, mw, md, 1);
  }
  uint64_t cw[4] = {gpu_device(start), gpu_device(start + 5000), id, 0};
  uint32_t cd[4] = {L_GPU0, L_GRAPHICS, S_GPU_COMPOSITE, L_MAIN};
  gpu_event(b, fence + 10, STROBE__GPUEV_SPAN, cw, cd, 4);
  uint64_t bw[4] = {gpu_device(start + 5000), gpu_device(end), id, 0};
  uint32_t bd[4] = {L_GPU0, L_GRAPHICS, S_GPU_BLUR, L_FILTER_GROUP};
  gpu_event(b, fence + 10, STROBE__GPUEV_SPAN, bw, bd, 4);
  b->now = fence + 100;
}

/* >>producer: spans as src/probe/producer.c writes them (probe/probe.h >>gpu events). */
static void producer_spans(batch *b) {
  uint64_t t = b->now;
  const uint64_t span[2][3] = {{t + 100, t + 700, S_MIX}, {t + 200, t + 400, S_DECODE}};
  for (int i = 0; i < 2; i++) {
    uint64_t w[3] = {span[i][0], span[i][1], 0};
    uint32_t d[3] = {0, L_AUDIO, (uint32_t)span[i][2]};
    gpu_event(b, t + 800, STROBE__GPUEV_LANE_SPAN, w, d, 3);
  }
  b->now = t + 1000;
}

/* >>samples: three sampled functions, and as src/probe/sampler.c hands them (by thread, then time) a
 * stack every 10 us of main (draw_rows in main; every third one deeper, in an unresolved libgl frame)
 * and of the worker (main alone), the worker switched out 100 ns after each of its samples (preempted
 * every other time) and back in 400 ns later; then the sampler's counts. */
static void samples(strobe__writer *w, uint64_t from, uint64_t to) {
  strobe__writer_sample_function(w, 1, "main", "/usr/bin/app", 1);
  strobe__writer_sample_function(w, 2, "draw_rows", "/usr/bin/app", 1);
  strobe__writer_sample_function(w, 3, "?? /usr/lib/libgl.so", "/usr/lib/libgl.so", 0);
  static strobe__cpu_sample s[4096];
  static uint32_t frames[3 * 4096];
  uint32_t n = 0, nf = 0, k = 0;
  for (uint64_t t = from; t < to && n + 3 <= 4096; t += 10000, k++) {
    uint32_t deep = k % 3 == 2;
    s[n++] = (strobe__cpu_sample){t, 1000, STROBE__SAMPLE_CPU, 0, 2 + deep, nf};
    if (deep) frames[nf++] = 3;
    frames[nf++] = 2;
    frames[nf++] = 1;
  }
  uint32_t main_samples = n;
  for (uint64_t t = from + 5000; t < to && n + 3 <= 4096; t += 10000, k++) {
    s[n++] = (strobe__cpu_sample){t, 1001, STROBE__SAMPLE_CPU, 0, 1, nf};
    frames[nf++] = 1;
    s[n++] = (strobe__cpu_sample){t + 100, 1001, STROBE__SAMPLE_SWITCH_OUT, k % 2 ? STROBE__SAMPLE_PREEMPTED : 0, 0, 0};
    s[n++] = (strobe__cpu_sample){t + 500, 1001, STROBE__SAMPLE_SWITCH_IN, 0, 0, 0};
  }
  strobe__writer_samples(w, s, n, frames);
  uint32_t worker_samples = (n - main_samples) / 3;
  strobe_sampler_status st = {.running = 1, .rate_hz = 1000, .switches = 1};
  strobe_sampler_stats stats = {.samples = main_samples + worker_samples, .switches = 2 * worker_samples,
                                .functions = 3, .unresolved = 1};
  strobe__writer_sampler(w, &st, stats);
}

static int usage(void) {
  fprintf(stderr,
          "usage: make_capture OUT [--frames N] [--grow PCT] [--spike K] [--no-footer]\n"
          "                        [--unfinished] [--lost] [--unwound] [--clock NAME] [--ns-per-tick X]\n"
          "                        [--ops] [--stall K] [--stages] [--other-file]\n"
          "                        [--no-marks] [--interned] [--slow K:NS]... [--stage-tree]\n"
          "                        [--pass-category] [--worker-marks] [--units] [--kinds] [--ui-tree] [--deep]\n"
          "                        [--gpu] [--gpu-bad K] [--gpu-pass-ids] [--producer] [--no-unix-epoch] [--samples]\n"
          "                        [--merge-block] [--pid N] [--thread-gap] [--epoch-mono NS] [--crash] [--memory]\n");
  return 2;
}

/* The CRASH block --crash ends the file with, written as the crash handler writes it (strobe__crash_block). */
static int write_crash(FILE *f, uint64_t ticks, uint32_t worker) {
  static strobe__crash_facts k;
  static uint8_t block[4096];
  k = (strobe__crash_facts){SIGSEGV, ticks, 1, 0, "main", "pass", 394, "layout_compute", 2, 0, {{0}}};
  k.threads[0] = (strobe__crash_thread){0, "main", 3, 0, {"frame", "layout_compute", "measure_row"}};
  k.threads[1] = (strobe__crash_thread){worker, "worker", 2, 0, {"job", "io"}};
  size_t n = strobe__crash_block(block, sizeof block, &k);
  return n && fwrite(block, 1, n, f) == n ? 0 : 1;
}

int main(int argc, char **argv) {
  opts o = {.out = NULL, .frames = 50, .spike = -1, .clock = "monotonic", .ns_per_tick = 1.0, .stall = 50,
            .gpu_bad = -1, .pid = 4242, .event_cost = 8.6};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int more = i + 1 < argc;
    if (!strcmp(a, "--frames") && more) o.frames = atoi(argv[++i]);
    else if (!strcmp(a, "--grow") && more) o.grow = atoi(argv[++i]);
    else if (!strcmp(a, "--spike") && more) o.spike = atoi(argv[++i]);
    else if (!strcmp(a, "--clock") && more) o.clock = argv[++i];
    else if (!strcmp(a, "--ns-per-tick") && more) o.ns_per_tick = atof(argv[++i]);
    else if (!strcmp(a, "--event-cost") && more) o.event_cost = atof(argv[++i]);
    else if (!strcmp(a, "--no-footer")) o.no_footer = 1;
    else if (!strcmp(a, "--unfinished")) o.unfinished = 1;
    else if (!strcmp(a, "--lost")) o.lost = 1;
    else if (!strcmp(a, "--unwound")) o.unwound = 1;
    else if (!strcmp(a, "--ops")) o.ops = 1;
    else if (!strcmp(a, "--stall") && more) o.stall = atoi(argv[++i]);
    else if (!strcmp(a, "--stages")) o.stages = 1;
    else if (!strcmp(a, "--other-file")) o.other_file = 1;
    else if (!strcmp(a, "--no-marks")) o.no_marks = 1;
    else if (!strcmp(a, "--interned")) o.interned = 1;
    else if (!strcmp(a, "--ui-tree")) o.ui_tree = 1;
    else if (!strcmp(a, "--deep")) o.deep = 1;
    else if (!strcmp(a, "--stage-tree")) o.stage_tree = 1;
    else if (!strcmp(a, "--pass-category")) o.pass_category = 1;
    else if (!strcmp(a, "--worker-marks")) o.worker_marks = 1;
    else if (!strcmp(a, "--units")) o.units = 1;
    else if (!strcmp(a, "--gpu")) o.gpu = 1;
    else if (!strcmp(a, "--gpu-pass-ids")) o.gpu = o.gpu_pass_ids = 1;
    else if (!strcmp(a, "--producer")) o.producer = 1;
    else if (!strcmp(a, "--no-unix-epoch")) o.no_unix_epoch = 1;
    else if (!strcmp(a, "--samples")) o.samples = 1;
    else if (!strcmp(a, "--merge-block")) o.merge_block = 1;
    else if (!strcmp(a, "--thread-gap")) o.thread_gap = 1;
    else if (!strcmp(a, "--crash")) o.crash = 1, o.no_footer = 1;
    else if (!strcmp(a, "--epoch-mono") && more) o.epoch_mono = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(a, "--pid") && more) o.pid = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(a, "--gpu-bad") && more) o.gpu_bad = atoi(argv[++i]);
    else if (!strcmp(a, "--slow") && more && o.nslow < 4) {
      char *end = NULL;
      o.slow_k[o.nslow] = (int)strtol(argv[++i], &end, 10);
      if (!end || *end != ':') return usage();
      o.slow_ns[o.nslow++] = strtoull(end + 1, NULL, 10);
    }
    else if (!strcmp(a, "--kinds")) o.kinds = 1;
    else if (!strcmp(a, "--memory")) o.memory = 1;
    else if (a[0] != '-' && !o.out) o.out = a;
    else return usage();
  }
  if (!o.out || o.frames < 1 || o.frames > 100000) return usage();

  FILE *f = fopen(o.out, "wb");
  if (!f) {
    perror(o.out);
    return 1;
  }
  /* The header's clock is the one asked for, with epoch 0, on no real machine. */
  /* A fixed wall-clock anchor (2025-12-02 00:00:00 UTC): the OTLP export's Unix times are exact. */
  strobe__header_facts facts = {{o.clock, 1, o.ns_per_tick, 0, o.epoch_mono}, 0, "x86_64", 0, o.pid, 262144, 0, 0,
                                1764633600000000000ull, NULL, "linux"}; /* os fixed too: the same bytes from every build */
  if (o.no_unix_epoch) facts.epoch_unix_ns = 0;
  strobe__writer *w;
  strobe__writer_desc d = {"file", 100, 3, 19.5, o.event_cost, sink_fn, f, &facts};
  if (strobe__writer_create(&d, &w)) {
    fprintf(stderr, "make_capture: cannot create the writer\n");
    return 1;
  }
  g_writer = w;
  if (o.deep) strobe__writer_attach_limit(w, 600); /* frame 9's 500 new bytes do not fit */
  /* As strobe_site_intern makes it: a copied name, no source location. */
  if (o.interned)
    g_sites[S_WORK] = (strobe_site){"eval sum_rows(x, y)", NULL, NULL, "", "", 0, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, STROBE_SITE_INTERNED};
  if (o.pass_category) g_sites[S_FRAME].category = "pass";
  if (o.units) g_sites[S_TRIANGLES].unit = STROBE_UNIT_BYTES;
  /* Stage sites only for --ops (layout, paint), --stages (those and the row_bind ones) and
   * --stage-tree (all of them), so ids stay contiguous; the worker's mark site last, only with
   * --worker-marks (then every site before it is declared, the stages too); the memory sites with --memory. */
  int tree = o.stage_tree || o.worker_marks;
  for (uint32_t id = 1; id < S_COUNT; id++)
    if (id >= S_DL_ALLOC ? o.memory
        : id >= S_MIX ? o.producer
        : id >= S_GPU_COMPOSITE ? (o.gpu || o.producer)
        : id >= S_ROW_TYPE ? o.ui_tree
        : id >= S_DC_QUADS ? o.kinds
        : id == S_WORKER_MARK ? o.worker_marks
        : id >= S_LAYOUT_UPDATE ? tree
        : id >= S_PHASE_UPDATE ? (o.stages || tree)
                               : (o.ops || o.stages || tree || id < S_LAYOUT)) {
      strobe_site s = g_sites[id];
      if (o.other_file) s.file = "other/app.c"; /* sites match by name, file and line */
      strobe__writer_site(w, id, &s);
    }
  if (o.ops || o.gpu || o.producer) {
    strobe__writer_label(w, L_MAIN, "main");
    strobe__writer_label(w, L_ROWS, "rows");
  }
  if (o.gpu || o.producer) { /* label ids stay contiguous */
    strobe__writer_label(w, L_GPU0, "gpu0");
    strobe__writer_label(w, L_GRAPHICS, "graphics");
    strobe__writer_label(w, L_FILTER_GROUP, "filter_group");
  }
  if (o.producer) strobe__writer_label(w, L_AUDIO, "audio");
  strobe__writer_thread(w, 0, 1000, "main", 0);
  const uint32_t worker = o.thread_gap ? 2 : 1;
  strobe__writer_thread(w, worker, 1001, "worker", 0);

  static batch m, wk;
  m.now = 1000000;  /* 1 ms after the epoch */
  wk.now = 1000500;
  for (int k = 0; k < o.frames; k++) {
    if (o.ops)
      ops_frame(&m, &o, k);
    else
      main_frame(&m, &o, k);
    if (o.gpu) gpu_frame(&m, &o, k);
    if (o.producer) producer_spans(&m);
    worker_job(&wk, &o, k);
    if (m.n > 3500 || wk.n > 3500 || k == o.frames - 1) {
      strobe__writer_events(w, 0, m.ev, m.n);
      strobe__writer_events(w, worker, wk.ev, wk.n);
      m.n = wk.n = 0;
      strobe__writer_flush(w);
    }
  }
  if (o.samples) samples(w, 1000000, m.now);
  if (o.lost) strobe__writer_lost(w, worker, 4);
  if (o.merge_block) {
    static strobe_capture_merge mb;
    mb.ninputs = 1;
    snprintf(mb.inputs[0].process, sizeof mb.inputs[0].process, "left");
    mb.inputs[0].pid = 4242;
    mb.inputs[0].alignment = STROBE_ALIGN_VOUCHED;
    mb.not_merged[STROBE_REC_SAMPLE] = 5;
    strobe__writer_merge(w, &mb);
  }
  /* The drain's cost: 2,600 ns of CPU over the 1,300 events (2 ns per event). */
  strobe__writer_drain(w, 2600, 1300);
  if (o.unfinished) {
    begin(&wk, S_STALLED);
    strobe__writer_events(w, worker, wk.ev, wk.n);
    wk.n = 0;
  }
  strobe__writer_thread_end(w, 0);
  int rc;
  if (o.no_footer) {
    rc = strobe__writer_flush(w);
    if (!rc && o.crash) rc = write_crash(f, m.now, worker);
  } else {
    strobe_misuse mis = {.open_at_exit = o.unfinished ? 1u : 0u,
                         .depth_overflow = o.unwound ? 3u : 0u,
                         .intern_invalid = o.interned ? 2u : 0u,
                         .intern_full = o.interned ? 1u : 0u};
    uint64_t end_ticks = m.now > wk.now ? m.now : wk.now;
    rc = strobe__writer_finish(w, end_ticks, &mis);
  }
  strobe__writer_destroy(w);
  if (fclose(f) != 0 || rc) {
    fprintf(stderr, "make_capture: writing %s failed\n", o.out);
    return 1;
  }
  return 0;
}
