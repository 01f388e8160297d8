/*
 * case_files.h — temporary files and directories that live exactly as long
 * as the running case: created under /tmp (tests/support/fixtures.h), removed
 * by the harness when the case ends, even when a REQUIRE stopped it
 * (harness_defer). Must never be used outside a case, where nothing would
 * remove them.
 */
#ifndef STROBE_TESTS_CASE_FILES_H
#define STROBE_TESTS_CASE_FILES_H

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixtures.h"
#include "harness.h"

static void case_files_remove_(void *path) {
  if (unlink((const char *)path) != 0) fx_remove_dir((const char *)path); /* a file, else a directory */
  free(path);
}

static inline const char *case_temp_(const char *tag, int dir) {
  char *path = malloc(64);
  REQUIRE(path != NULL);
  if ((dir ? fx_temp_dir(path, 64, tag) : fx_temp_file(path, 64, tag)) != 0) {
    free(path);
    path = NULL;
  }
  REQUIREF(path != NULL, "case_temp_%s(%s): nothing created under /tmp", dir ? "dir" : "file", tag);
  harness_defer(case_files_remove_, path);
  return path;
}

/* A new empty file /tmp/strobe-<tag>-XXXXXX; its path is valid until the case ends. */
static inline const char *case_temp_file(const char *tag) { return case_temp_(tag, 0); }

/* A new empty directory /tmp/strobe-<tag>-XXXXXX, removed with the files in it when the case ends. */
static inline const char *case_temp_dir(const char *tag) { return case_temp_(tag, 1); }

#endif
