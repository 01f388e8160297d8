/*
 * secret_linux.c — secret.h on Linux: getrandom(2) for random bytes; hex
 * and the constant-time comparison are secret_common.c's.
 *
 * Must never: return fewer random bytes than asked (short reads are retried)
 * or leave the raw bytes of a token in memory it returns.
 */
#include "platform/secret.h"

#include <errno.h>
#include <sys/random.h>

#include "strobe/strobe.h"

int strobe__random(void *buf, size_t n) {
  unsigned char *p = buf;
  while (n) {
    ssize_t k = getrandom(p, n, 0);
    if (k < 0) {
      if (errno == EINTR) continue;
      return STROBE_EIO;
    }
    p += k;
    n -= (size_t)k;
  }
  return 0;
}
