/*
 * lock.c — strobe_mutex's set-up (strobe/lock.h): a pthread mutex named by
 * a lock site with an id from the start, so that its events take the
 * inline path (lock, trylock and unlock are inline in strobe/lock.h).
 *
 * Must never: change what the pthread mutex does or returns.
 */
#include <string.h>

#include "strobe/lock.h"

int strobe_mutex_init(strobe_mutex *m, const char *name) {
  if (!m || !name) return STROBE_EINVAL;
  strobe_site *site = strobe_site_intern(name, strlen(name), NULL, STROBE_SITE_LOCK);
  if (strobe_site_query_error(site) == STROBE_EINVAL) return STROBE_EINVAL; /* counted as misuse too */
  if (pthread_mutex_init(&m->mutex, NULL) != 0) return STROBE_ENOMEM;
  (void)strobe_site_register(site); /* an id now, or the slow path tries again at each event */
  m->site = site;
  return 0;
}

int strobe_mutex_destroy(strobe_mutex *m) { return m ? pthread_mutex_destroy(&m->mutex) : STROBE_EINVAL; }
