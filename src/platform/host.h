/*
 * host.h — who this process is, for operations handed between processes
 * (docs/sessions.md §Across processes): its pid, the host's boot identity
 * (two processes share CLOCK_MONOTONIC exactly when their boot ids are
 * equal) and random identifiers for collectors. One implementation file
 * per platform (host_linux.c).
 *
 * Must never: fall back to a predictable source for a random identifier, or
 * report two boots as one.
 */
#ifndef STROBE_PLATFORM_HOST_H
#define STROBE_PLATFORM_HOST_H

#include <stdint.h>

/* The calling process's id. */
uint32_t strobe__host_pid(void);
/* The 16 bytes that name this boot of this host (Linux: the kernel's
 * random/boot_id). Read once and kept. Returns 0, or STROBE_EIO (out zeroed:
 * every boot id compares unequal to it, so nothing is taken as same-host). */
int strobe__host_boot_id(uint8_t out[16]);
/* The boot id as 32 lowercase hex digits (capture headers, /api/clock).
 * Returns 0, or STROBE_EIO with out empty. */
int strobe__host_boot_hex(char out[33]);
/* How far this process's shown monotonic clock is from CLOCK_MONOTONIC: 0
 * but under STROBE_TEST_FAKE_HOST (host_linux.c), which stands in for a
 * second host in tests. Every time the process shows another process (a
 * capture's epoch, a token, /api/clock) is CLOCK_MONOTONIC plus this. */
int64_t strobe__host_mono_shift_ns(void);
/* A random 64-bit identifier from the OS's source, never 0. Returns 0 or
 * STROBE_EIO (*out untouched). */
int strobe__host_random_u64(uint64_t *out);

#endif
