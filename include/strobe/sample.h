/*
 * sample.h — the sampler (docs/exploration.md §Sampling): every thread of
 * the process sampled with its user-space call stack at a chosen rate, and,
 * when asked, each time a thread was switched off its CPU and back, through
 * Linux's perf_event_open with a software clock. No privileges beyond a
 * stock kernel's defaults: perf_event_paranoid up to 2 lets a process
 * sample its own user-space code.
 *
 * Samples and switches land in capture files beside the scopes (SAMPLES
 * blocks, docs/capture-format.md), their frames named once per address from
 * the process's own symbol tables on the drain thread, like call tracing's
 * functions; `strobe report --samples` prints the hot functions, and
 * `strobe report` splits a scope's wall time into on-CPU and off-CPU where
 * switches were recorded.
 *
 * Cost rule: nothing on the recording threads' paths. The kernel takes a
 * sample in the timer interrupt of the sampled thread (walking its frame
 * pointers) and appends it to a buffer per CPU; the drain thread reads the
 * buffers at each pass. Call stacks follow frame pointers: code built
 * without them (-fomit-frame-pointer, GCC's default at -O2 on x86-64) gives
 * short or wrong stacks below its frames.
 *
 * Content rule: sampled function names are application content, like call
 * tracing's: capture files keep them; session reports and MCP never carry
 * them.
 *
 * Thread rule: any thread; start and stop are serialised by a lock.
 */
#ifndef STROBE_SAMPLE_H
#define STROBE_SAMPLE_H

#include <stdint.h>

#include "strobe/strobe.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STROBE_SAMPLE_DEFAULT_HZ 997u /* samples per second of CPU time per thread (prime: no lockstep with 1 kHz timers) */
#define STROBE_SAMPLE_MAX_HZ 10000u
#define STROBE_SAMPLE_MAX_FRAMES 64u  /* frames kept per sample, leaf first; deeper ones are cut and counted */

/* The sampler's configuration. Zero fields mean "default". The environment
 * gives the same at load time for programs that never call
 * strobe_sampler_start: STROBE_SAMPLE=HZ (or "on" for the default rate),
 * STROBE_SAMPLE_SWITCHES=0 to leave switches out. */
typedef struct strobe_sampler_desc {
  uint32_t rate_hz;  /* samples per second of a thread's CPU time, 1..STROBE_SAMPLE_MAX_HZ; 0: 997 */
  uint32_t no_switches; /* 0 (default): record context switches too; 1: samples only. 0 or 1, else STROBE_EINVAL */
} strobe_sampler_desc;

/* Starts sampling every thread of the process: those alive now and every
 * thread they create later. Returns 0; STROBE_EINVAL for fields out of
 * range; STROBE_EBUSY when the sampler runs already; STROBE_EPERM when the
 * kernel refused (EACCES/EPERM: perf_event_paranoid above 2, or a seccomp
 * filter); STROBE_EFEATURE_DISABLED when this system has no perf events
 * (ENOSYS, ENOENT, EOPNOTSUPP) or profiling was compiled out;
 * STROBE_EUNSUPPORTED on Windows, which has no sampler (docs/platforms.md);
 * STROBE_ENOMEM; STROBE_EIO for any other refusal. On error nothing was
 * started and nothing else changed; strobe_sampler_query_status says why.
 * Samples reach captures that record while it runs (docs/exploration.md
 * §Sampling). */
STROBE_API int strobe_sampler_start(const strobe_sampler_desc *desc);
/* Stops sampling and frees the kernel buffers, after a last drain pass has
 * delivered what they held. Returns 0; STROBE_ESTATE when not running. */
STROBE_API int strobe_sampler_stop(void);

/* The sampler's state and why the last start failed. Static labels and
 * numbers only (content-free). */
typedef struct strobe_sampler_status {
  int running;          /* 1 between a successful start and stop */
  uint32_t rate_hz;     /* when running */
  int switches;         /* when running: 1 when context switches are recorded */
  int error;            /* the last start's result (0 when it succeeded or none was tried) */
  int os_errno;         /* errno of the refused perf_event_open (0: none) */
  int paranoid;         /* /proc/sys/kernel/perf_event_paranoid when the last start failed; -100: unreadable */
  const char *reason;   /* static text saying why the last start failed; "" when it did not */
  uint32_t cpus;        /* CPU buffers read when running */
  uint32_t threads;     /* threads the sampler attached to at start (those created later inherit it) */
} strobe_sampler_status;
STROBE_API strobe_sampler_status strobe_sampler_query_status(void);

/* What the sampler recorded and cut since the library loaded (process-wide). */
typedef struct strobe_sampler_stats {
  uint64_t samples;        /* samples read */
  uint64_t switches;       /* switch records read (out and in) */
  uint64_t lost;           /* records the kernel dropped (a CPU buffer was full: PERF_RECORD_LOST) */
  uint64_t frames_cut;     /* frames not kept: past STROBE_SAMPLE_MAX_FRAMES */
  uint64_t addresses_cut;  /* frames named "(address table full)": past the address table's bound */
  uint32_t addresses;      /* distinct code addresses met */
  uint32_t functions;      /* distinct functions they resolved to */
  uint32_t unresolved;     /* of them, objects with no symbol there ("?? object") */
} strobe_sampler_stats;
STROBE_API strobe_sampler_stats strobe_sampler_query_stats(void);

#ifdef __cplusplus
}
#endif

#endif
