/*
 * posix_windows.h — the two POSIX calls tests/support/fixtures.h makes that
 * the mingw-w64 C runtime lacks, for the Windows cross pass only
 * (tests/cross/CMakeLists.txt force-includes it there): mkdtemp, over
 * _mktemp_s and _mkdir, and sysconf(_SC_PAGESIZE), over GetSystemInfo. Each
 * keeps its POSIX meaning. Must never be used by the library (src/ has
 * src/platform/ for that).
 */
#ifndef STROBE_TESTS_POSIX_WINDOWS_H
#define STROBE_TESTS_POSIX_WINDOWS_H

#include <direct.h>
#include <errno.h>
#include <io.h>
#include <string.h>
#include <windows.h>

/* Replaces the trailing XXXXXX of tmpl and creates that directory; returns
 * tmpl, or NULL with errno set. */
static inline char *mkdtemp(char *tmpl) {
  for (int tries = 0; tries < 100; tries++) {
    char name[1024];
    size_t n = strlen(tmpl);
    if (n >= sizeof name || n < 6 || strcmp(tmpl + n - 6, "XXXXXX") != 0) {
      errno = EINVAL;
      return NULL;
    }
    memcpy(name, tmpl, n + 1);
    if (_mktemp_s(name, n + 1) != 0) return NULL;
    if (_mkdir(name) == 0) {
      memcpy(tmpl, name, n + 1);
      return tmpl;
    }
    if (errno != EEXIST) return NULL;
  }
  return NULL;
}

#define _SC_PAGESIZE 30
static inline long sysconf(int name) {
  if (name != _SC_PAGESIZE) {
    errno = EINVAL;
    return -1;
  }
  SYSTEM_INFO si;
  GetSystemInfo(&si);
  return (long)si.dwPageSize;
}

#endif
