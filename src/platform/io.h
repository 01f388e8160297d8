/*
 * io.h — file output the capture consumers share: writing a whole buffer to
 * a descriptor, retrying short writes and EINTR.
 */
#ifndef STROBE_PLATFORM_IO_H
#define STROBE_PLATFORM_IO_H

#include <stddef.h>

/* Writes all `len` bytes; returns 0 or STROBE_EIO. */
int strobe__write_all(int fd, const void *data, size_t len);

#endif
