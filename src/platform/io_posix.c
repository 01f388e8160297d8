/*
 * io_posix.c — io.h on POSIX descriptors (Linux).
 */
#include "platform/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strobe/strobe.h"

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

int strobe__dup_fd(int fd) { return fcntl(fd, F_DUPFD_CLOEXEC, 0); }

int strobe__replace_file(const char *from, const char *to) { return rename(from, to) == 0 ? 0 : STROBE_EIO; }
