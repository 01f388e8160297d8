/*
 * saver.c — the background save (see saver.h). The scope labels are static
 * source labels; the file path and the grid's text never reach Strobe.
 */
#include "saver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void save(saver *s, const grid *g) {
  STROBE_SCOPE_CAT("background_save", "app_scope"); /* the category tells captures' readers the kind */
  strobe_app_scope write = strobe_app_scope_begin(s->collector, "main", "local_save_write", STROBE_LANE_WORKER);
  static char buffer[GRID_ROWS * GRID_COLS * (GRID_CELL_TEXT + 1)];
  size_t n;
  {
    strobe_app_scope encode = strobe_app_scope_begin_child(&write, "container_encode", STROBE_LANE_WORKER);
    n = grid_serialize(g, buffer, sizeof buffer);
    strobe_app_scope_end(&encode);
  }
  char path[512];
  snprintf(path, sizeof path, "%s/grid.tsv", s->out_dir);
  FILE *fp = fopen(path, "w");
  if (fp) {
    fwrite(buffer, 1, n, fp);
    fflush(fp);
    fclose(fp);
  }
  strobe_app_scope_end(&write); /* synchronous wall time, including the file write */
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
