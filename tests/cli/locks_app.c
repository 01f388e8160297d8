/*
 * locks_app.c — records the capture the lock test reads (locks_test.py,
 * test cli_locks; docs/locks.md), with known counts.
 *
 * Lock "assets", a strobe_mutex. Thread "ui" takes it 10 times uncontended,
 * once with a successful try, once more while it tries it again (EBUSY:
 * nothing recorded); then thread "loader" takes it inside its scope
 * "load_assets" and keeps it until "ui", inside its scope "layout", is
 * seen blocked in the lock (its /proc state, a condition, not a time):
 * 14 acquisitions, 1 wait, held by loader in load_assets while ui waited.
 *
 * Lock "cache", annotated by hand on "ui" (STROBE_LOCK_*): taken and let
 * go twice, a wait that no recorded hold covers, a third hold, and a fourth
 * acquisition never released: 4 acquisitions, 1 wait (no holder), 3 holds,
 * 1 event without its pair.
 *
 * Before the capture starts, "assets" is taken once while nothing records
 * (not in the capture). Bad input to strobe_mutex_init exits 3..5.
 *
 * usage: locks_app OUT.strobe
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "strobe/lock.h"
#include "strobe/record.h"
#include "support/fixtures.h"

static strobe_mutex g_assets;
STROBE_LOCK_SITE(g_cache, "cache");
static volatile pid_t g_ui_tid;
static volatile int g_ui_locking;   /* 1: ui is about to block in the lock */
static volatile int g_loader_holds; /* 1: loader holds "assets" */

/* The state letter of thread `tid` of this process ('S': sleeping, as a thread blocked in a futex is). */
static char thread_state(pid_t tid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
  FILE *f = fopen(path, "r");
  if (!f) return '?';
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  const char *p = strrchr(buf, ')');
  return p && p[1] == ' ' ? p[2] : '?';
}

static void *loader(void *arg) {
  (void)arg;
  strobe_thread_set_name("loader");
  STROBE_SCOPE("load_assets");
  if (strobe_mutex_lock(&g_assets)) exit(6);
  __atomic_store_n(&g_loader_holds, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(&g_ui_locking, __ATOMIC_ACQUIRE)) fx_sleep_ms(1);
  while (thread_state(g_ui_tid) != 'S') fx_sleep_ms(1); /* ui is blocked in the lock */
  fx_sleep_ms(5);
  if (strobe_mutex_unlock(&g_assets)) exit(7);
  return NULL;
}

static void cache_annotations(void) {
  for (int i = 0; i < 2; i++) {
    STROBE_LOCK_ACQUIRED(&g_cache);
    STROBE_LOCK_RELEASED(&g_cache);
  }
  STROBE_LOCK_WAIT(&g_cache);
  STROBE_LOCK_ACQUIRED(&g_cache);
  STROBE_LOCK_RELEASED(&g_cache);
  STROBE_LOCK_ACQUIRED(&g_cache); /* never released */
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  if (strobe_mutex_init(NULL, "assets") != STROBE_EINVAL) return 3;
  strobe_mutex bad;
  if (strobe_mutex_init(&bad, "") != STROBE_EINVAL) return 4;
  if (strobe_mutex_init(&g_assets, "assets")) return 5;
  strobe_mutex_lock(&g_assets); /* nothing records yet */
  strobe_mutex_unlock(&g_assets);

  strobe_recorder *rec = NULL;
  if (strobe_record_start(&(strobe_record_desc){.path = argv[1]}, &rec)) return 10;
  strobe_thread_set_name("ui");
  g_ui_tid = (pid_t)syscall(SYS_gettid);
  for (int i = 0; i < 10; i++) {
    strobe_mutex_lock(&g_assets);
    strobe_mutex_unlock(&g_assets);
  }
  if (strobe_mutex_trylock(&g_assets)) return 11;
  strobe_mutex_unlock(&g_assets);
  strobe_mutex_lock(&g_assets);
  if (strobe_mutex_trylock(&g_assets) != EBUSY) return 12;
  strobe_mutex_unlock(&g_assets);
  cache_annotations();

  pthread_t th;
  {
    STROBE_SCOPE("layout");
    if (pthread_create(&th, NULL, loader, NULL)) return 13;
    while (!__atomic_load_n(&g_loader_holds, __ATOMIC_ACQUIRE)) fx_sleep_ms(1);
    __atomic_store_n(&g_ui_locking, 1, __ATOMIC_RELEASE);
    if (strobe_mutex_lock(&g_assets)) return 14;
    strobe_mutex_unlock(&g_assets);
  }
  pthread_join(th, NULL);
  if (strobe_record_stop(rec)) return 15;
  return strobe_mutex_destroy(&g_assets) ? 16 : 0;
}
