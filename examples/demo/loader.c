/*
 * loader.c — the glyph loader (loader.h). The lock's name and the scope's
 * are static labels; nothing of the glyphs reaches Strobe.
 */
#include "loader.h"

#include <time.h>

static volatile unsigned g_glyph_sink;

/* LOADER_HOLD_US of decoding, in CPU work, so the hold shows on CPU. */
static void decode_glyphs(void) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do {
    for (int i = 0; i < 1000; i++) g_glyph_sink = g_glyph_sink * 31u + (unsigned)i;
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < LOADER_HOLD_US * 1000L);
}

static void *loader_main(void *arg) {
  loader *l = arg;
  strobe_thread_set_name("loader");
  while (!__atomic_load_n(&l->stop, __ATOMIC_ACQUIRE)) {
    {
      STROBE_SCOPE("load_glyphs");
      strobe_mutex_lock(&l->atlas);
      decode_glyphs();
      strobe_mutex_unlock(&l->atlas);
      l->loads++;
    }
    nanosleep(&(struct timespec){0, LOADER_PERIOD_MS * 1000000L}, NULL);
  }
  return NULL;
}

int loader_start(loader *l) {
  l->stop = 0;
  l->loads = l->lookups = 0;
  if (strobe_mutex_init(&l->atlas, "glyph_atlas")) return 1;
  return pthread_create(&l->thread, NULL, loader_main, l) ? 1 : 0;
}

void loader_lookup(loader *l) {
  strobe_mutex_lock(&l->atlas);
  l->lookups++;
  strobe_mutex_unlock(&l->atlas);
}

void loader_stop(loader *l) {
  __atomic_store_n(&l->stop, 1, __ATOMIC_RELEASE);
  pthread_join(l->thread, NULL);
  strobe_mutex_destroy(&l->atlas);
}
