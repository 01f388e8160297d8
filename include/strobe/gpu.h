/*
 * gpu.h — external clocks and GPU work on Strobe's timeline (docs/gpu.md):
 * clock domains fed calibration pairs, GPU spans on queue lanes, and the
 * four instants of a frame (CPU frame end, submit, GPU start and end,
 * fence seen) with the two gaps between them.
 *
 * A clock domain is any clock that is not Strobe's own: a GPU's timestamp
 * counter, an audio device's sample clock, a remote board's timer. The
 * application declares it (a name, its nominal ticks per second) and feeds
 * it calibration pairs: a device timestamp and the host ticks read just
 * before and just after reading it. Strobe fits offset and drift over a
 * sliding window of pairs, weighting each by its own width, and maps device
 * timestamps onto the host timeline with an error bound. Captures store the
 * raw pairs and raw device timestamps; readers do the mapping
 * (strobe_capture_map_device, capture.h), so a later, better fit improves
 * old data.
 *
 * Host time is Strobe's tick (strobe_clock_now), the clock every capture and
 * report uses; strobe_clock_ticks_from_mono_ns converts a CLOCK_MONOTONIC
 * reading (what VK_EXT_calibrated_timestamps returns for the host) to it.
 *
 * Thread rule: every function here is safe to call from any thread. None
 * blocks for long: the live tables take one short lock, never held around
 * application work, allocation or I/O.
 *
 * Cost rule: strobe_gpu_span_add and strobe_gpu_frame_mark, with no capture
 * recording and no session open, check their arguments, make two relaxed
 * loads and return 0. While a capture records, a span costs a few ring
 * stores (bench/bench_gpu.c: at most 2x the floor scope, excluding the
 * driver call that read the timestamps); while a session is open, also one
 * short lock to update the live frame table the sessions read.
 *
 * Content rule: domain, queue and pass names are static labels (1-64 bytes
 * of [A-Za-z0-9_]), referenced, never application data. Spans name a static
 * site (STROBE_GPU_SITE).
 *
 * Bounds: STROBE_MAX_CLOCK_DOMAINS domains and STROBE_MAX_GPU_QUEUES queues
 * per process (both live for the process: there is no destroy, as for
 * sites); the live frame table keeps the STROBE_GPU_LIVE_FRAMES most recent
 * frames (older ones are evicted and counted in strobe_gpu_stats).
 */
#ifndef STROBE_GPU_H
#define STROBE_GPU_H

#include <stdint.h>

#include "strobe/strobe.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STROBE_MAX_CLOCK_DOMAINS 16  /* domains per process */
#define STROBE_MAX_GPU_QUEUES 32     /* queue lanes per process, over all domains */
#define STROBE_CLOCK_FIT_PAIRS 32    /* default sliding window of the fit: 32 pairs, ~0.5 s at one pair a frame */
#define STROBE_CLOCK_FIT_PAIRS_MAX 1024
#define STROBE_GPU_LIVE_FRAMES 256   /* frames whose instants the live table keeps */

/* >>clock domains */

/* A declared clock domain; id 0 is "none". */
typedef struct strobe_clock_domain {
  uint32_t id;
} strobe_clock_domain;

typedef struct strobe_clock_domain_desc {
  const char *name;          /* static label, 1-64 of [A-Za-z0-9_] ("gpu0", "audio"); required */
  double ticks_per_second;   /* nominal device rate (Vulkan: 1e9 / timestampPeriod); > 0, finite; required */
  uint32_t fit_pairs;        /* pairs in the sliding fit window, 2..STROBE_CLOCK_FIT_PAIRS_MAX;
                              * 0: STROBE_CLOCK_FIT_PAIRS */
} strobe_clock_domain_desc;

/* Declares a clock domain and writes its handle to *out. Declaring a name
 * again with the same ticks_per_second returns the same domain (0): a
 * library and its application may both declare it. Returns STROBE_EINVAL
 * (NULL desc or out, rate not > 0 or not finite, fit_pairs out of range),
 * STROBE_ELABEL (name breaks the label rule), STROBE_EBUSY (the name is
 * declared with another rate), STROBE_ELIMIT (STROBE_MAX_CLOCK_DOMAINS
 * declared) or STROBE_ENOMEM; on error *out is {0} and nothing changes. */
STROBE_API int strobe_clock_domain_create(const strobe_clock_domain_desc *desc, strobe_clock_domain *out);

/* Strobe's host clock now, in ticks (the timestamps of every capture). */
STROBE_API uint64_t strobe_clock_now(void);
/* A CLOCK_MONOTONIC reading (ns) converted to host ticks with the clock's
 * calibration (strobe_query_clock). Pure after the first call. */
STROBE_API uint64_t strobe_clock_ticks_from_mono_ns(uint64_t mono_ns);
/* Host ticks to nanoseconds (a duration; no epoch). */
STROBE_API double strobe_clock_ticks_to_ns(uint64_t ticks);

/* Feeds the domain one calibration pair: the device read `device_ticks`
 * somewhere between host ticks `host_before` and `host_after` (both from
 * strobe_clock_now, or converted; read immediately around the device read:
 * the pair's width is its uncertainty). The pair joins the live fit and,
 * while a capture records, the capture (raw; its readers fit again).
 * Returns 0; STROBE_EINVAL for an undeclared domain, host_after <
 * host_before, host_before 0, or a device time not after the domain's
 * previous pair (a reset or wrapped device clock: refused and counted in
 * strobe_clock_domain_stats.refused; nothing changes). */
STROBE_API int strobe_clock_domain_calibrate(strobe_clock_domain domain, uint64_t device_ticks, uint64_t host_before,
                                             uint64_t host_after);

/* A device time on the host timeline. */
typedef struct strobe_clock_mapping {
  uint64_t host_ticks;       /* the device time as host ticks (strobe_clock_now's clock) */
  double bound_ns;           /* +- error bound: the fit's worst disagreement with its pairs' intervals plus the
                              * widest pair's half-width, and, past the pairs, the nominal-rate drift allowance */
  uint32_t pairs;            /* pairs the fit used (1: offset at the nominal rate only) */
} strobe_clock_mapping;

/* Maps a device time of the domain with the live fit (its last fit_pairs
 * pairs). Returns 0; STROBE_EINVAL (undeclared domain, NULL out) or
 * STROBE_ESTATE (no pair yet): then *out is zeroed. */
STROBE_API int strobe_clock_domain_map(strobe_clock_domain domain, uint64_t device_ticks, strobe_clock_mapping *out);

typedef struct strobe_clock_domain_stats {
  uint64_t pairs;            /* pairs accepted since the domain was declared */
  uint64_t refused;          /* pairs refused (device time not after the previous pair's) */
  uint32_t window;           /* pairs in the live fit now (<= fit_pairs) */
  double drift_ppm;          /* the fitted rate against the nominal one, in parts per million; 0 below 2 pairs */
  double bound_ns;           /* the live fit's error bound inside its window; 0 with no pair */
  double widest_pair_ns;     /* the widest pair in the window (host_after - host_before) */
} strobe_clock_domain_stats;

/* Copies the domain's calibration state into *out. Returns 0 or
 * STROBE_EINVAL (undeclared domain, NULL out; *out untouched). */
STROBE_API int strobe_clock_domain_query_stats(strobe_clock_domain domain, strobe_clock_domain_stats *out);

/* >>queues */

/* A queue lane of a device: its spans are drawn on their own track. Id 0 is "none". */
typedef struct strobe_gpu_queue {
  uint32_t id;
} strobe_gpu_queue;

/* Declares a queue lane named `name` (static label: "graphics", "compute",
 * "transfer") whose timestamps are in `domain`. The same name in the same
 * domain returns the same queue. Returns 0; STROBE_EINVAL (undeclared
 * domain, NULL out), STROBE_ELABEL, STROBE_ELIMIT (STROBE_MAX_GPU_QUEUES
 * declared) or STROBE_ENOMEM; on error *out is {0}. */
STROBE_API int strobe_gpu_queue_create(strobe_clock_domain domain, const char *name, strobe_gpu_queue *out);

/* >>spans */

/* The initializer of a GPU span's site, in static storage:
 *   static strobe_site composite = STROBE_GPU_SITE("composite");
 * A GPU site is an ordinary scope site of category "gpu". */
#define STROBE_GPU_SITE(name) \
  {(name), "gpu", (const char *)0, __FILE__, (const char *)0, (uint32_t)__LINE__, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0}

/* Pass kinds seed the pass label of a span (any static label may be used;
 * these are the ones docs/gpu.md describes): work of the main pass, the main
 * pass resumed after an interruption (a filter group rendered in between),
 * a filter group's own pass, and a filter group resumed. */
#define STROBE_GPU_PASS_MAIN "main"
#define STROBE_GPU_PASS_MAIN_RESUMED "main_resumed"
#define STROBE_GPU_PASS_FILTER_GROUP "filter_group"
#define STROBE_GPU_PASS_FILTER_GROUP_RESUMED "filter_group_resumed"

/* One finished piece of GPU work, timed by the device. */
typedef struct strobe_gpu_span {
  strobe_gpu_queue queue;    /* the lane; its domain is the timestamps' clock */
  strobe_site *site;         /* static, a timed kind (STROBE_GPU_SITE); registered on first use */
  const char *pass;          /* static label: the pass kind (STROBE_GPU_PASS_*), or NULL for none */
  uint64_t frame_id;         /* the frame that issued the work (0: none), even when its results are read
                              * back frames later: the span attaches to that frame */
  uint64_t begin_ticks;      /* device ticks of the queue's domain */
  uint64_t end_ticks;        /* device ticks, >= begin_ticks */
} strobe_gpu_span;

/* Records a GPU span whose timestamps were read back (typically frames
 * after the work was issued, from a ring of query pools read without
 * waiting). It goes to every capture recording (raw device ticks), and, for
 * frame_id != 0, widens that frame's GPU start and end in the live frame
 * table (strobe_gpu_query_frame). Record a frame's spans before its
 * FENCE_SEEN mark: the mark closes the frame for sessions (a span after it
 * is still captured, and counted as late). The live frame table is kept
 * only while a session is open. Returns 0 (also when nothing records and no
 * session is open: then it keeps nothing); STROBE_EINVAL for a NULL span
 * or site, an undeclared queue, a site of an untimed kind, end before
 * begin; STROBE_ELABEL for a pass breaking the label rule. On error nothing
 * is recorded. */
STROBE_API int strobe_gpu_span_add(const strobe_gpu_span *span);

/* >>frames: the four instants (docs/gpu.md §The four instants) */

/* The host-side instants of a frame, the one table. X(ID, number, name):
 * STROBE_GPU_<ID> = number; `name` is what reports, exports and the viewer
 * call it. The GPU start and end between SUBMIT and FENCE_SEEN are not
 * marked: they are the earliest begin and latest end of the frame's spans,
 * mapped through their domain. */
#define STROBE_GPU_INSTANTS(X)                                                                       \
  X(CPU_END, 1, "cpu_end")       /* the CPU finished building the frame's command buffers */         \
  X(SUBMIT, 2, "submit")         /* the buffers are handed to the queue (marked just before vkQueueSubmit) */ \
  X(FENCE_SEEN, 3, "fence_seen") /* the CPU's non-blocking poll first saw the frame's fence signalled */

typedef enum strobe_gpu_instant {
#define STROBE__GPU_INSTANT_ENUM(id, number, name) STROBE_GPU_##id = number,
  STROBE_GPU_INSTANTS(STROBE__GPU_INSTANT_ENUM)
#undef STROBE__GPU_INSTANT_ENUM
} strobe_gpu_instant;

/* The name of an instant ("submit"), or NULL for a number that is none. */
static inline const char *strobe_gpu_instant_name(uint32_t which) {
  switch (which) {
    STROBE_GPU_INSTANTS(STROBE__ROW_NAME)
    default: return (const char *)0;
  }
}

/* Marks instant `which` of frame `frame_id` (> 0: the same id the frame's
 * spans carry: normally the id the application gave its pass,
 * strobe_op_begin_frame in session.h) at host ticks `host_ticks` (0: now). FENCE_SEEN closes the
 * frame: from then on sessions count its backlog (GPU start - submit) and
 * polling latency (fence seen - GPU end) and check its order (cpu_end <=
 * submit <= GPU start <= GPU end <= fence seen, each within the calibration
 * bound; violations are counted, never hidden). Marking an instant twice
 * keeps the later call. Returns 0 (keeping nothing when no capture records
 * and no session is open);
 * STROBE_EINVAL for frame_id 0 or an unknown `which`. */
STROBE_API int strobe_gpu_frame_mark(uint64_t frame_id, strobe_gpu_instant which, uint64_t host_ticks);

/* Ordering checks of a frame, as bits of strobe_gpu_frame.violations. */
enum {
  STROBE_GPU_ORDER_END_SUBMIT = 1,     /* submit before CPU frame end */
  STROBE_GPU_ORDER_SUBMIT_START = 2,   /* GPU start before submit (beyond the calibration bound) */
  STROBE_GPU_ORDER_START_END = 4,      /* GPU end before GPU start */
  STROBE_GPU_ORDER_END_FENCE = 8       /* fence seen before GPU end (beyond the calibration bound) */
};

/* A frame's four instants on the host timeline, as the live table has them. */
typedef struct strobe_gpu_frame {
  uint64_t frame_id;
  uint64_t cpu_end, submit, fence_seen; /* host ticks; 0: not marked */
  uint64_t gpu_begin, gpu_end;          /* host ticks, mapped with the live fit when the frame closed (or now,
                                         * if still open); 0: no span */
  double bound_ns;                      /* the calibration bound of gpu_begin and gpu_end */
  uint32_t spans;                       /* spans recorded for it */
  uint32_t late_spans;                  /* of them, recorded after FENCE_SEEN */
  int closed;                           /* FENCE_SEEN was marked */
  uint32_t violations;                  /* STROBE_GPU_ORDER_* bits (pairs where both sides are known) */
  double backlog_ns;                    /* GPU start - submit; NaN when either is missing */
  double polling_ns;                    /* fence seen - GPU end; NaN when either is missing */
} strobe_gpu_frame;

/* Copies frame `frame_id` from the live table. Returns 0; STROBE_EINVAL
 * (NULL out, frame_id 0) or STROBE_ERANGE (not in the table: never marked
 * nor spanned, or evicted by newer frames); *out is zeroed on error. The
 * live table fills only while a session is open (session.h): captures keep
 * the raw spans and marks instead, and their readers build the frames. */
STROBE_API int strobe_gpu_query_frame(uint64_t frame_id, strobe_gpu_frame *out);

typedef struct strobe_gpu_stats {
  uint64_t spans;            /* spans accepted while a session was open (the live table's) */
  uint64_t spans_refused;    /* strobe_gpu_span_add errors */
  uint64_t frames_closed;    /* frames that got FENCE_SEEN */
  uint64_t frames_evicted;   /* frames pushed out of the live table before FENCE_SEEN */
  uint64_t late_spans;       /* spans of a frame recorded after its FENCE_SEEN */
  uint64_t unmapped;         /* spans whose domain had no calibration pair when their frame closed */
  uint64_t violations;       /* closed frames with at least one ordering violation */
} strobe_gpu_stats;

/* Process-wide GPU counts since the library loaded. */
STROBE_API strobe_gpu_stats strobe_gpu_query_stats(void);

#ifdef __cplusplus
}
#endif

#endif /* STROBE_GPU_H */
