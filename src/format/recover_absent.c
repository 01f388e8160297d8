/*
 * recover_absent.c — strobe_capture_recover where the crash journal is not
 * ported (Windows, chosen by CMakeLists.txt in place of journal_recover.c,
 * which maps the journal it reads; docs/platforms.md §Windows): it returns
 * STROBE_EUNSUPPORTED and writes nothing.
 *
 * Must never: write or rename a file.
 */
#include "strobe/capture.h"
#include "strobe/strobe.h"

int strobe_capture_recover(const char *path, const char *out, strobe_capture_recovery *stats) {
  (void)path, (void)out, (void)stats;
  return STROBE_EUNSUPPORTED;
}
