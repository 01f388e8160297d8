/*
 * io_windows.c — io.h on Windows, over the C runtime's descriptors (the
 * rest of the library writes through them too): every file is opened
 * binary (the runtime's default text mode would turn each 0x0A byte of a
 * capture into 0x0D 0x0A) and not inherited by child processes. A byte
 * _write has returned is in the system's file cache, which outlives the
 * process however it ends (TerminateProcess included), as the page cache
 * does on Linux (docs/platforms.md §Windows). strobe__write_all is
 * io_common.c's.
 *
 * Must never: open a file in text mode, or write a partial buffer silently.
 */
#include "platform/io.h"

#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <sys/stat.h>
#include <windows.h>

#include "strobe/strobe.h"

int strobe__open_regular(const char *path) {
  /* Opening never waits on Windows (no FIFOs in the file system), so the
   * type is checked after opening, on the descriptor itself. */
  int fd = _open(path, _O_RDONLY | _O_BINARY | _O_NOINHERIT);
  if (fd < 0) return -1;
  struct _stat64 st;
  if (_fstat64(fd, &st) != 0) {
    int e = errno;
    _close(fd);
    errno = e;
    return -1;
  }
  if ((st.st_mode & _S_IFMT) != _S_IFREG) {
    _close(fd);
    return STROBE__OPEN_NOT_REGULAR;
  }
  return fd;
}

int strobe__dup_fd(int fd) { return _dup(fd); }

int strobe__replace_file(const char *from, const char *to) {
  return MoveFileExA(from, to, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH) ? 0 : STROBE_EIO;
}
