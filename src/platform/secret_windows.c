/*
 * secret_windows.c — secret.h on Windows: BCryptGenRandom with the system's
 * preferred RNG (the OS CSPRNG) for random bytes; hex and the constant-time
 * comparison are secret_common.c's.
 *
 * Must never: return fewer random bytes than asked.
 */
#include "platform/secret.h"

#include <windows.h>
#include <bcrypt.h>

#include "strobe/strobe.h"

int strobe__random(void *buf, size_t n) {
  unsigned char *p = buf;
  while (n) {
    ULONG k = n > 0x10000000u ? 0x10000000u : (ULONG)n;
    if (!BCRYPT_SUCCESS(BCryptGenRandom(NULL, p, k, BCRYPT_USE_SYSTEM_PREFERRED_RNG))) return STROBE_EIO;
    p += k;
    n -= k;
  }
  return 0;
}
