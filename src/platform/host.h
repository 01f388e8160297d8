/*
 * host.h — who this process is, for operations handed between processes
 * (docs/sessions.md §Across processes): its pid, the host's boot identity
 * (two processes share CLOCK_MONOTONIC exactly when their boot ids are
 * equal), random identifiers for collectors, and the facts a capture's
 * header and a report state (machine, OS, thread ids). One implementation
 * file per OS (host_linux.c, host_windows.c) beside host_common.c.
 *
 * Must never: fall back to a predictable source for a random identifier, or
 * report two boots as one.
 */
#ifndef STROBE_PLATFORM_HOST_H
#define STROBE_PLATFORM_HOST_H

#include <stddef.h>
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
 * but under STROBE_TEST_FAKE_HOST (host_common.c), which stands in for a
 * second host in tests. Every time the process shows another process (a
 * capture's epoch, a token, /api/clock) is CLOCK_MONOTONIC plus this. */
int64_t strobe__host_mono_shift_ns(void);
/* A random 64-bit identifier from the OS's source, never 0. Returns 0 or
 * STROBE_EIO (*out untouched). */
int strobe__host_random_u64(uint64_t *out);

/* The calling thread's OS id (Linux: gettid; Windows: GetCurrentThreadId). */
uint64_t strobe__host_tid(void);
/* The processor as the OS names it ("x86_64", "aarch64", "AMD64"), or
 * "unknown"; static storage. */
const char *strobe__host_machine(void);
/* The OS's name as reports state it: "linux" or "windows"; static storage. */
const char *strobe__host_os(void);
/* 1 when the OS delivers crashes as POSIX signals, which the crash handler
 * (src/capture/crash.c) catches; 0 where it is not ported (Windows), and
 * strobe_setup refuses strobe_desc.crash_handler with STROBE_EUNSUPPORTED. */
int strobe__host_crash_signals(void);
/* The memory page size in bytes (4096 when the OS does not say). */
size_t strobe__host_page_size(void);

/* For host_common.c, from the OS file: this boot's 16-byte identity read
 * from the OS. Returns 0, or -1 (out untouched) when it cannot be read. */
int strobe__host_os_boot_id(uint8_t out[16]);
/* 32 hex digits in text[0..len) (dashes and newlines skipped) into out.
 * Returns 0, or -1 (out untouched) when they are not exactly 32 hex digits. */
int strobe__host_hex16(const char *text, size_t len, uint8_t out[16]);

#endif
