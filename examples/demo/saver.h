/*
 * saver.h — the demo's background save: a worker thread that serializes a
 * snapshot of the grid and writes it to disk, instrumented with Strobe
 * application scopes on the worker lane (local_save_write ⊃ container_encode)
 * and explored with call tracing (its calls while it saves, docs/exploration.md).
 */
#ifndef STROBE_DEMO_SAVER_H
#define STROBE_DEMO_SAVER_H

#include <pthread.h>

#include "grid.h"
#include "strobe/session.h"

typedef struct saver {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  grid snapshot;
  int pending, stop;
  strobe_collector *collector;
  const char *out_dir;
  unsigned saves;
} saver;

int saver_start(saver *s, strobe_collector *c, const char *out_dir);
/* Queues a save of the grid as it is now (a copy is taken). */
void saver_request(saver *s, const grid *g);
void saver_stop(saver *s);

#endif
