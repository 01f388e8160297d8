/*
 * io_posix.c — strobe__write_all and strobe__open_regular on POSIX
 * descriptors (see io.h).
 */
#include "platform/io.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
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

int strobe__open_regular(const char *path) {
  /* O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return STROBE__OPEN_NOT_REGULAR;
  }
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  return fd;
}
