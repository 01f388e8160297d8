/*
 * loader.h — the demo's glyph loader: a worker thread that refills the
 * glyph atlas every LOADER_PERIOD_MS, holding the atlas's lock (a
 * strobe_mutex named "glyph_atlas", docs/locks.md) for LOADER_HOLD_US
 * while it does, inside its scope "load_glyphs". The UI thread takes the
 * same lock once per pass to look glyphs up (loader_lookup), and so now and
 * then waits for the loader: the lock contention `strobe report` shows.
 */
#ifndef STROBE_DEMO_LOADER_H
#define STROBE_DEMO_LOADER_H

#include <pthread.h>

#include "strobe/lock.h"

#define LOADER_PERIOD_MS 150
#define LOADER_HOLD_US 2000

typedef struct loader {
  pthread_t thread;
  strobe_mutex atlas; /* "glyph_atlas" */
  int stop;           /* atomic */
  unsigned loads, lookups;
} loader;

int loader_start(loader *l);
/* The UI side: one glyph lookup under the atlas's lock. */
void loader_lookup(loader *l);
void loader_stop(loader *l);

#endif
