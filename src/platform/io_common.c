/*
 * io_common.c — strobe__write_all (io.h) for every OS: write(2), which the
 * Windows C runtime also has (its count an unsigned int, so at most 1 GiB
 * goes in one call here), retried after short writes and EINTR.
 *
 * Must never: report a partial write as whole.
 */
#include "platform/io.h"

#include <errno.h>
#include <unistd.h>

#include "strobe/strobe.h"

#define MAX_WRITE (1u << 30) /* bytes per call: fits both OSes' count types */

int strobe__write_all(int fd, const void *data, size_t len) {
  const char *p = data;
  while (len) {
    size_t chunk = len > MAX_WRITE ? MAX_WRITE : len;
    long n = (long)write(fd, p, (unsigned)chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      return STROBE_EIO;
    }
    p += n;
    len -= (size_t)n;
  }
  return 0;
}
