/*
 * secret_common.c — the parts of secret.h every OS shares: random hex
 * tokens over the OS file's strobe__random, and the constant-time
 * comparison.
 *
 * Must never: leave the raw bytes of a token in memory it returns, or
 * compare a secret in time that depends on where it first differs.
 */
#include "platform/secret.h"

#include <string.h>

#include "strobe/strobe.h"

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
