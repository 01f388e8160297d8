/*
 * frame_states.c — records two real captures for the frame-model truth test
 * (cli_test.py case frames_truth; docs/frames.md): every state a frame can
 * be in, and a GTK-shaped frame loop.
 *
 * DIR/states.strobe, one process with two collectors, "screen" and
 * "sender" (a token handed between collectors of one process travels as
 * between processes: docs/sessions.md §Across processes). Window "main" of
 * screen: frame 1 completed; frame 2 dropped (ended uncommitted); frame 3
 * taken off the main thread and completed on another; frames 4 and 5
 * handed to sender, which resumes them, runs `encode` and commits 4
 * (presented) and drops 5 (superseded); frame 6 handed off and never
 * resumed (handed off); frame 7 begun and still open when the recording
 * stops (unfinished). Each frame runs one `work` scope on the thread that
 * holds it, and each stage is a scope too. Populations: frame 1 "cold",
 * frame 3 "warm", 4 and 5 "scroll" (across the hand-off), 6 "fling"; frames
 * 2 and 7 none.
 *
 * DIR/gtk.strobe, shaped like a GTK 4 frame clock: windows "main" and
 * "w1" (w1's passes every other frame); in each main pass the stage
 * `update` is opened in one callback and closed in another
 * (strobe_stage_begin/end), `row_bind` (declared inside `layout`, where it
 * never runs) runs twice inside update and once inside `model_update`, and
 * an input dispatch begins inside the pass and owns the `click` scope run
 * inside it; then `layout` runs with `measure` under it.
 *
 * DIR/tree.strobe: a pass that stays open (taken off its thread, waiting to
 * be handed off) while three more lay out the same elements (>>tree).
 *
 * usage: frame_states DIR
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "strobe/record.h"
#include "strobe/session.h"
#include "strobe/tree.h"
#include "support/fixtures.h"

static strobe_recorder *record(const char *dir, const char *file) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  strobe_recorder *rec = NULL;
  if (strobe_record_start(&(strobe_record_desc){.path = path}, &rec)) exit(11);
  return rec;
}

static void release(strobe_collector *c) {
  strobe_collector_close(c);
  strobe_collector_release(c);
}

static void work(void) {
  STROBE_SCOPE("work");
  fx_sleep_ms(1);
}

static strobe_op g_moved;
static void *finish_moved(void *arg) { /* frame 3's second thread */
  (void)arg;
  strobe_thread_set_name("worker");
  strobe_op_resume(g_moved);
  {
    STROBE_STAGE("present", NULL);
    work();
  }
  strobe_op_end(g_moved, 1);
  return NULL;
}

/* Frame id on screen's window, handed to sender and ended there (committed or not); or never resumed. */
static void cross(strobe_collector *screen, strobe_window ws, strobe_collector *sender, strobe_window wt, uint64_t id,
                  int resume, int committed) {
  strobe_op_begin_frame(screen, ws, id, NULL);
  if (strobe_op_set_population(resume ? "scroll" : "fling")) exit(16); /* the hand-off carries it */
  {
    STROBE_STAGE("render", NULL);
    work();
  }
  unsigned char token[STROBE_OP_TOKEN_MAX];
  size_t len = 0;
  if (strobe_op_hand_off_remote(strobe_op_take(), "sender", token, sizeof token, &len)) exit(12);
  if (!resume) return;
  int st = 0;
  strobe_op op = strobe_op_resume_remote(sender, wt, token, len, &st);
  if (st) exit(13);
  {
    STROBE_STAGE("encode", NULL);
    work();
  }
  strobe_op_end(op, committed);
}

static void states(const char *dir) {
  strobe_collector *a, *b;
  strobe_window wa, wb;
  strobe_thread_set_name("main");
  if (strobe_collector_create(&a) || strobe_collector_set_process(a, "screen") ||
      strobe_window_register(a, "main", 0, &wa) || strobe_collector_create(&b) ||
      strobe_collector_set_process(b, "sender") || strobe_window_register(b, "main", 0, &wb))
    exit(10);
  strobe_recorder *rec = record(dir, "states.strobe");
  for (uint64_t id = 1; id <= 2; id++) {
    strobe_op op = strobe_op_begin_frame(a, wa, id, NULL);
    if (id == 1 && strobe_op_set_population("cold")) exit(16); /* frame 2 has none */
    {
      STROBE_STAGE("render", NULL);
      work();
    }
    strobe_op_end(op, id == 1);
  }
  g_moved = strobe_op_begin_frame(a, wa, 3, NULL);
  if (strobe_op_set_population("warm")) exit(16); /* set on one thread, ended on another */
  {
    STROBE_STAGE("render", NULL);
    work();
  }
  strobe_op_take();
  pthread_t th;
  if (pthread_create(&th, NULL, finish_moved, NULL) || pthread_join(th, NULL)) exit(14);
  cross(a, wa, b, wb, 4, 1, 1);
  cross(a, wa, b, wb, 5, 1, 0);
  cross(a, wa, b, wb, 6, 0, 0);
  strobe_op open = strobe_op_begin_frame(a, wa, 7, NULL);
  work();
  if (strobe_record_stop(rec)) exit(15);
  strobe_op_end(open, 1); /* after the recording: unfinished in it */
  release(a);
  release(b);
}

/* GTK's frame clock: update opened by one callback, closed by the next. */
static strobe_stage g_update;
static void before_paint(void) {
  static strobe_site site = STROBE_STAGE_SITE("update", NULL);
  g_update = strobe_stage_begin(&site);
}
static void after_paint(void) { strobe_stage_end(&g_update); }

static void main_pass(strobe_collector *c, strobe_window w, strobe_window wi, uint64_t id) {
  strobe_op pass = strobe_op_begin_frame(c, w, id, NULL);
  before_paint();
  for (int k = 0; k < 2; k++) {
    STROBE_STAGE("row_bind", "layout");
    work();
  }
  strobe_op input = strobe_op_begin(c, wi, STROBE_OP_INPUT, NULL); /* an event dispatched inside the pass */
  {
    STROBE_SCOPE("click");
    fx_sleep_ms(1);
  }
  strobe_op_end(input, 1);
  after_paint();
  {
    STROBE_STAGE("model_update", NULL);
    STROBE_STAGE("row_bind", "layout");
    work();
  }
  {
    STROBE_STAGE("layout", NULL);
    STROBE_STAGE("measure", "layout");
    work();
  }
  strobe_op_end(pass, 1);
}

static void gtk(const char *dir) {
  strobe_collector *c;
  strobe_window w, w1;
  if (strobe_collector_create(&c) || strobe_window_register(c, "main", 0, &w) || strobe_window_register(c, "w1", 0, &w1))
    exit(20);
  strobe_recorder *rec = record(dir, "gtk.strobe");
  for (uint64_t id = 100; id < 106; id++) {
    main_pass(c, w, w, id);
    if (id % 2) continue;
    strobe_op op = strobe_op_begin_frame(c, w1, id, NULL);
    {
      STROBE_STAGE("layout", NULL);
      work();
    }
    strobe_op_end(op, 1);
  }
  if (strobe_record_stop(rec)) exit(21);
  release(c);
}

/* >>tree: DIR/tree.strobe. Pass 12 lays out one Row of three Cells, each a scope attributed to its element,
 * with a UI-tree snapshot of them, and is taken off the main thread to be handed off; passes 13 to 15 lay out the
 * same elements on the main thread while 12 waits; then another thread resumes 12 and ends it. Pass 12 owns one
 * span of each element; the others ran while its interval was open, and are not its own. */
STROBE_ELEMENT_TYPE(g_row_type, "Row");
STROBE_ELEMENT_TYPE(g_cell_type, "Cell");

static void lay_out(int snapshot) {
  int snap = snapshot && strobe_tree_begin();
  STROBE_SCOPE_ELEMENT("row", &g_row_type, 1000);
  if (snap) strobe_tree_push(&(strobe_tree_node){0, &g_row_type, 1000, 0, 0, 300, 20, NULL, 0});
  for (uint64_t k = 1; k <= 3; k++) {
    if (snap) strobe_tree_push(&(strobe_tree_node){1, &g_cell_type, k, (float)k * 100, 0, 100, 20, NULL, 0});
    STROBE_SCOPE_ELEMENT("cell", &g_cell_type, k);
    fx_sleep_ms(1);
  }
  if (snap) strobe_tree_end();
}

static strobe_op g_waiting;
static void *end_waiting(void *arg) {
  (void)arg;
  strobe_op_resume(g_waiting);
  strobe_op_end(g_waiting, 1);
  return NULL;
}

static void tree(const char *dir) {
  strobe_collector *c;
  strobe_window w;
  if (strobe_collector_create(&c) || strobe_window_register(c, "main", 0, &w)) exit(30);
  strobe_recorder *rec = record(dir, "tree.strobe");
  if (strobe_tree_request()) exit(31);
  g_waiting = strobe_op_begin_frame(c, w, 12, NULL);
  lay_out(1);
  strobe_op_take();
  for (uint64_t id = 13; id <= 15; id++) {
    strobe_op op = strobe_op_begin_frame(c, w, id, NULL);
    lay_out(0);
    strobe_op_end(op, 1);
  }
  pthread_t th;
  if (pthread_create(&th, NULL, end_waiting, NULL) || pthread_join(th, NULL)) exit(32);
  if (strobe_record_stop(rec)) exit(33);
  release(c);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: frame_states DIR\n");
    return 2;
  }
  states(argv[1]);
  gtk(argv[1]);
  tree(argv[1]);
  return 0;
}
