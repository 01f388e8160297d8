/*
 * io.h — file I/O the capture consumers and the reader share: writing a
 * whole buffer to a descriptor (retrying short writes and EINTR), opening a
 * file for reading without ever blocking on it, a descriptor's duplicate,
 * and a file replaced by another whole. One file per OS: io_posix.c (Linux),
 * io_windows.c (the C runtime's descriptors, always binary).
 */
#ifndef STROBE_PLATFORM_IO_H
#define STROBE_PLATFORM_IO_H

#include <stddef.h>

/* Writes all `len` bytes; returns 0 or STROBE_EIO. */
int strobe__write_all(int fd, const void *data, size_t len);

/* Opens path read-only without blocking (O_NONBLOCK, then fstat on the
 * descriptor itself, so a file swapped in between cannot fool it) and
 * accepts only a regular file: a FIFO, socket, device or directory is never
 * waited on. Returns the descriptor (blocking mode restored, close-on-exec),
 * -1 with errno set when open or fstat failed, or STROBE__OPEN_NOT_REGULAR
 * (nothing left open). */
#define STROBE__OPEN_NOT_REGULAR (-2)
int strobe__open_regular(const char *path);

/* A new descriptor for the file fd names (close-on-exec); the caller keeps
 * fd. Returns it, or -1 with errno set. */
int strobe__dup_fd(int fd);

/* Renames from over to, replacing to when it exists, in one step where the
 * OS allows it (rename(2); MoveFileEx with MOVEFILE_REPLACE_EXISTING).
 * Returns 0 or STROBE_EIO (both files as they were). */
int strobe__replace_file(const char *from, const char *to);

#endif
