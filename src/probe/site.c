/*
 * site.c — the site registry: gives each instrumentation point a small
 * integer id the first time it fires, and maps ids back to their static
 * metadata for consumers. Append-only; a registered site is never removed
 * (sites live in static storage, so unloading an instrumented module while
 * recording is not supported).
 */
#include <pthread.h>

#include "probe/probe.h"
#include "platform/invariant.h"

/* [0] unused: id 0 means "not yet registered". The last id is kept for the
 * fallback site, so user sites get ids 1..STROBE_MAX_SITES-2. */
static strobe_site *g_sites[STROBE_MAX_SITES];
static uint32_t g_count = 1;
static strobe__mutex g_lock = STROBE__MUTEX_INIT;
static strobe_site g_fallback = {"strobe: unregistered site", "strobe", NULL, __FILE__, "strobe__site_id_for_stream",
                                 __LINE__, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0};

static int register_below(strobe_site *site, uint32_t end) {
  if (!site || !site->name) return STROBE_EINVAL;
  uint32_t id = __atomic_load_n(&site->id, __ATOMIC_ACQUIRE);
  if (id) return (int)id;
  strobe__mutex_lock(&g_lock);
  id = site->id;
  if (!id) {
    if (g_count >= end) {
      strobe__mutex_unlock(&g_lock);
      return STROBE_ELIMIT;
    }
    id = g_count;
    g_sites[id] = site;
    __atomic_store_n(&g_count, id + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&site->id, id, __ATOMIC_RELEASE);
  }
  strobe__mutex_unlock(&g_lock);
  return (int)id;
}

int strobe_site_register(strobe_site *site) { return register_below(site, STROBE_MAX_SITES - 1); }

uint32_t strobe__site_id_for_stream(strobe_site *site) {
  uint32_t id = __atomic_load_n(&site->id, __ATOMIC_ACQUIRE);
  if (id) return id;
  if (site->flags & STROBE_SITE_CALL) strobe__call_site_name(site); /* named before any consumer sees it */
  int rc = strobe_site_register(site);
  return rc > 0 ? (uint32_t)rc : (uint32_t)register_below(&g_fallback, STROBE_MAX_SITES);
}

uint32_t strobe__site_count(void) { return __atomic_load_n(&g_count, __ATOMIC_ACQUIRE); }

const strobe_site *strobe__site_get(uint32_t id) {
  return id > 0 && id < strobe__site_count() ? g_sites[id] : NULL;
}

/* probe.h >>fork: the registry is whole whenever its lock is free. */
void strobe__sites_fork(int phase) {
  if (phase == STROBE__FORK_PREPARE)
    strobe__mutex_lock(&g_lock);
  else
    strobe__mutex_unlock(&g_lock);
}
