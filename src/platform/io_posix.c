/*
 * io_posix.c — strobe__write_all on POSIX descriptors (see io.h).
 */
#include "platform/io.h"

#include <errno.h>
#include <unistd.h>

#include "strobe/strobe.h"

int strobe__write_all(int fd, const void *data, size_t len) {
  const char *p = data;
  while (len) {
    ssize_t n = write(fd, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return STROBE_EIO;
    }
    p += n;
    len -= (size_t)n;
  }
  return 0;
}
