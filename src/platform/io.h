/*
 * io.h — file I/O the capture consumers and the reader share: writing a
 * whole buffer to a descriptor (retrying short writes and EINTR), and
 * opening a file for reading without ever blocking on it.
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

#endif
