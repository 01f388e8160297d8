/*
 * saver.c — the background save (see saver.h). The scope labels are static
 * source labels; the file path and the grid's text never reach Strobe. Its
 * calls are traced while it saves (save below).
 */
#include "saver.h"

#include "strobe/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void write_file(const char *dir, const char *buffer, size_t n) {
  char path[512];
  snprintf(path, sizeof path, "%s/grid.tsv", dir);
  FILE *fp = fopen(path, "w");
  if (fp) {
    fwrite(buffer, 1, n, fp);
    fflush(fp);
    fclose(fp);
  }
}

static size_t encode_snapshot(strobe_app_scope *write, const grid *g, char *buffer, size_t cap) {
  strobe_app_scope scope = strobe_app_scope_begin_child(write, "container_encode", STROBE_LANE_WORKER);
  size_t n = grid_serialize(g, buffer, cap);
  strobe_app_scope_end(&scope);
  return n;
}

static void write_snapshot(saver *s, const grid *g) {
  strobe_app_scope write = strobe_app_scope_begin(s->collector, "main", "local_save_write", STROBE_LANE_WORKER);
  static char buffer[GRID_ROWS * GRID_COLS * (GRID_CELL_TEXT + 1)];
  size_t n = encode_snapshot(&write, g, buffer, sizeof buffer);
  write_file(s->out_dir, buffer, n);
  strobe_app_scope_end(&write); /* synchronous wall time, including the file write */
}

/* The save is explored with call tracing (docs/exploration.md): this file
 * and grid.c are built with strobe_trace_calls (examples/CMakeLists.txt), and
 * the worker traces every call it makes while it saves, named from the
 * symbol tables (write_snapshot, encode_snapshot, grid_serialize, serialize_row,
 * write_file) and nested under the hand-placed scope. */
static void save(saver *s, const grid *g) {
  STROBE_SCOPE_CAT("background_save", "app_scope"); /* the category tells captures' readers the kind */
  strobe_trace_calls_begin();
  write_snapshot(s, g);
  strobe_trace_calls_end();
  s->saves++;
}

static void *saver_main(void *arg) {
  saver *s = arg;
  strobe_thread_set_name("saver");
  static grid local;
  pthread_mutex_lock(&s->lock);
  for (;;) {
    while (!s->pending && !s->stop) pthread_cond_wait(&s->wake, &s->lock);
    if (s->stop) break;
    local = s->snapshot;
    s->pending = 0;
    pthread_mutex_unlock(&s->lock);
    save(s, &local);
    pthread_mutex_lock(&s->lock);
  }
  pthread_mutex_unlock(&s->lock);
  return NULL;
}

int saver_start(saver *s, strobe_collector *c, const char *out_dir) {
  memset(s, 0, sizeof *s);
  s->collector = c;
  s->out_dir = out_dir;
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->wake, NULL);
  return pthread_create(&s->thread, NULL, saver_main, s);
}

void saver_request(saver *s, const grid *g) {
  pthread_mutex_lock(&s->lock);
  s->snapshot = *g;
  s->pending = 1;
  pthread_cond_signal(&s->wake);
  pthread_mutex_unlock(&s->lock);
}

void saver_stop(saver *s) {
  pthread_mutex_lock(&s->lock);
  s->stop = 1;
  pthread_cond_signal(&s->wake);
  pthread_mutex_unlock(&s->lock);
  pthread_join(s->thread, NULL);
}
