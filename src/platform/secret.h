/*
 * secret.h — secrets the server hands out and checks: random bytes from the
 * operating system, random hex tokens, and a constant-time comparison. One
 * implementation file per OS (secret_linux.c, secret_windows.c) beside
 * secret_common.c.
 *
 * Only libstrobe_server uses these, so the build compiles them into it
 * (CMakeLists.txt >>server); the core library's one random need, collector
 * ids in operation tokens, is platform/host.h's.
 * Must never: fall back to a predictable source, or compare a secret in
 * time that depends on where it first differs.
 */
#ifndef STROBE_PLATFORM_SECRET_H
#define STROBE_PLATFORM_SECRET_H

#include <stddef.h>

/* Fills buf from the OS's random source. Returns 0 or STROBE_EIO. */
int strobe__random(void *buf, size_t n);
/* Lower-case hex of n (<= 64) random bytes into out (2n+1 bytes). Returns 0,
 * STROBE_EINVAL (n too large) or STROBE_EIO; out is untouched on error. */
int strobe__random_hex(char *out, size_t nbytes);
/* Constant-time equality of a and b (time depends on blen only). */
int strobe__ct_equal(const char *a, size_t alen, const char *b, size_t blen);

#endif
