/*
 * secret_linux.c — secret.h on Linux: getrandom(2) for random bytes.
 *
 * Must never: return fewer random bytes than asked (short reads are retried)
 * or leave the raw bytes of a token in memory it returns.
 */
#include "platform/secret.h"

#include <errno.h>
#include <string.h>
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

int strobe__random_hex(char *out, size_t nbytes) {
  unsigned char raw[64];
  if (nbytes > sizeof raw) return STROBE_EINVAL;
  if (strobe__random(raw, nbytes)) return STROBE_EIO;
  static const char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < nbytes; i++) {
    out[2 * i] = hex[raw[i] >> 4];
    out[2 * i + 1] = hex[raw[i] & 15];
  }
  out[2 * nbytes] = 0;
  memset(raw, 0, sizeof raw);
  return 0;
}

int strobe__ct_equal(const char *a, size_t alen, const char *b, size_t blen) {
  /* Runs over b (the secret) in full whatever a is; only the result and
   * blen's constant length are observable. */
  volatile unsigned char diff = (unsigned char)(alen != blen);
  for (size_t i = 0; i < blen; i++) diff |= (unsigned char)(b[i] ^ (i < alen ? a[i] : 0));
  return diff == 0;
}
