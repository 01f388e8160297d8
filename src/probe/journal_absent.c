/*
 * journal_absent.c — the crash journal where it is not ported (Windows,
 * chosen by CMakeLists.txt in place of journal.c, which maps its file
 * MAP_SHARED; docs/platforms.md §Windows): opening one fails with
 * STROBE_EUNSUPPORTED, so a capture's header says "off: not available on
 * this platform" and every thread state lives on the heap; the rest is
 * reached only with a journal open, so it never runs.
 *
 * Must never: claim a journal is open, or hand out a journaled state.
 */
#include "probe/probe.h"

#include "strobe/strobe.h"

int strobe__journal_die_at;

uint32_t strobe__journal_layout(void) { return 0; }

int strobe__journal_open(const char *path, uint64_t *id) {
  (void)path, (void)id;
  return STROBE_EUNSUPPORTED;
}

void strobe__journal_close(void) {}

int strobe__journal_holds(const strobe__tstate *t) {
  (void)t;
  return 0;
}

uint64_t strobe__journal_id(void) { return 0; }

void strobe__journal_site(uint32_t id, const strobe_site *s) { (void)id, (void)s; }

void strobe__journal_label(uint32_t id, const char *text) { (void)id, (void)text; }

uint32_t strobe__journal_positions(uint32_t *index, uint64_t *count, uint32_t max) {
  (void)index, (void)count, (void)max;
  return 0;
}

strobe__tstate *strobe__journal_tstate(uint32_t cap) {
  (void)cap;
  return NULL;
}

void strobe__journal_tstate_free(strobe__tstate *t) { (void)t; }

void strobe__journal_tstate_ready(strobe__tstate *t) { (void)t; }

void strobe__journal_release(strobe__tstate *t, strobe__event *read) { (void)t, (void)read; }

/* No journal, so no point of one to die at (tests/record's crash cases are Linux's). */
void strobe__journal_die_point(int point) { (void)point; }
