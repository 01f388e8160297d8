/*
 * flight.h — the flight recorder: an always-on capture that keeps only the
 * most recent events in a fixed amount of memory and writes them out as an
 * ordinary, self-contained capture file (docs/capture-format.md) on demand,
 * or by itself when a frame or scope takes longer than a budget (a "spike").
 * See docs/flight-recorder.md.
 *
 * Memory: the ring (max_mib MiB) is allocated and every page touched when
 * the recorder starts, so it is resident from then on and never grows; the
 * oldest blocks are evicted when it is full or older than max_age_ms.
 * Beside it the recorder keeps what a capture file's recorder keeps (one
 * encode buffer per recording thread, at most ~0.5 MiB each, and a zstd
 * context) and a ~300-byte row per thread it has seen.
 *
 * It is an event consumer like strobe_record_start(): at most 8 consumers
 * (files, flight recorders, live streams) are active at once.
 *
 * Thread rule: every function here is safe to call from any thread, except
 * that a recorder is stopped exactly once and no other call on it may run
 * during or after strobe_flight_recorder_stop().
 */
#ifndef STROBE_FLIGHT_H
#define STROBE_FLIGHT_H

#include <stdint.h>

#include "strobe/strobe.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STROBE_FLIGHT_PATH_MAX 1024 /* bytes of a spike file path, with terminator */

/* Zero fields mean "default"; strobe_flight_recorder_query_desc() shows the
 * values in force. Strings are copied at start. */
typedef struct strobe_flight_recorder_desc {
  uint32_t max_mib;           /* ring size in MiB, 1..4096, default 64: the memory bound */
  uint32_t max_age_ms;        /* time bound: a block whose newest event is older is evicted;
                               * 1..86400000, default 10000 */
  uint32_t flush_interval_ms; /* pending events are sealed into ring blocks this often, 1..60000, default 100:
                               * the time bound's granularity */
  int compression_level;      /* zstd level 1..19, default 1 (the drain thread does this work; as
                               * strobe_record_desc's) */

  /* Spike trigger: off while spike_threshold_ms is 0. */
  double spike_threshold_ms;  /* a spike is a watched scope, or the interval between two watched frame
                               * marks of one thread, longer than this; 0 = no trigger; else 0.001..3600000 */
  const char *spike_site;     /* site name to watch, 1..255 bytes, default "frame" (STROBE_FRAME_MARK's name):
                               * frame sites are timed mark to mark, scope and stage sites begin to end;
                               * with "frame", pass operations (session.h) are watched too, begin to end */
  const char *spike_dir;      /* directory for spike-<unix-ms>-<seq>.strobe files; required with a threshold;
                               * at most 960 bytes */
  uint32_t cooldown_ms;       /* after a spike starts a dump, later spikes within this time are counted,
                               * not dumped: a run of slow frames gives one file; 1..86400000, default 10000 */
  uint32_t post_ms;           /* keep recording this long after the spike before dumping it, 0..60000, default 0 */
  uint32_t max_spike_files;   /* spike files written at most; later spikes are only counted; default 100 */
} strobe_flight_recorder_desc;

typedef struct strobe_flight_recorder strobe_flight_recorder;

typedef struct strobe_flight_recorder_stats {
  uint64_t capacity_bytes;   /* the ring: max_mib MiB */
  uint64_t retained_bytes;   /* ring bytes in use (blocks, their index entries, wrap padding); <= capacity_bytes */
  uint64_t retained_blocks;  /* blocks in the ring */
  uint64_t retained_events;  /* events in those blocks */
  double retained_seconds;   /* from the oldest retained event to the newest; 0 when none */
  uint64_t evicted_blocks;   /* blocks dropped from the old end (size or age bound) */
  uint64_t dropped_blocks;   /* new blocks refused because a dump in progress still needed the whole ring */
  uint64_t dropped_events;   /* events in those blocks (readers see them as lost) */
  uint64_t dumps_written;    /* capture files written, on demand and by spikes */
  uint64_t dump_errors;      /* spike dumps that failed (on-demand dumps return their error instead) */
  uint64_t spikes_seen;      /* watched scopes or frames over the threshold, and notes over it */
  uint64_t spikes_dumped;    /* spike files written */
  uint64_t spikes_suppressed;/* spikes not dumped: in cooldown, a dump pending, or max_spike_files reached */
  double last_spike_ms;      /* duration of the last spike seen; 0 before the first */
  int error;                 /* 0, the encoder's sticky error (recording stopped), else the last spike dump's error */
  char last_spike_path[STROBE_FLIGHT_PATH_MAX]; /* the last spike file written; "" before the first */
} strobe_flight_recorder_stats;

/* Starts the flight recorder (desc may be NULL: every default, no trigger).
 * Allocates and touches the ring, measures the per-scope overhead (at most
 * ~1 ms), and starts a writer thread when a trigger is set. On error *out is
 * NULL and the code is STROBE_EINVAL (bad desc), STROBE_ENOMEM, STROBE_ELIMIT
 * (8 consumers active) or STROBE_EFEATURE_DISABLED. */
STROBE_API int strobe_flight_recorder_start(const strobe_flight_recorder_desc *desc, strobe_flight_recorder **out);

/* Stops recording. A spike dump in progress is finished, and a spike whose
 * dump was still pending is written now (without waiting for post_ms); then
 * everything is freed. Returns 0, or the error of that pending spike's dump.
 * Accepts NULL. */
STROBE_API int strobe_flight_recorder_stop(strobe_flight_recorder *fr);

/* Writes what the ring holds, plus every event drained before the call, to
 * `path` (created or truncated, mode 0644) as a complete capture: header,
 * SITES and THREAD definitions, the retained blocks oldest first, FOOTER.
 * Blocks on the calling thread while writing (and while another dump of this
 * recorder finishes); recording goes on meanwhile. Returns 0, or
 * STROBE_EINVAL, STROBE_EIO (cannot create or write `path`: nothing is left
 * there) or STROBE_ENOMEM; the recorder keeps running either way. */
STROBE_API int strobe_flight_recorder_dump(strobe_flight_recorder *fr, const char *path);

/* Reports a frame or operation the application timed itself (for work that
 * is not a watched site, e.g. a strobe_op): over the threshold it is a spike
 * like any other. Never blocks for long. Returns 1 when it started a dump,
 * 0 when not, STROBE_EINVAL, or STROBE_ESTATE when no trigger is set. */
STROBE_API int strobe_flight_recorder_note(strobe_flight_recorder *fr, uint64_t duration_ns);

/* Counters and bounds as of now. A NULL recorder gives all zeros. */
STROBE_API strobe_flight_recorder_stats strobe_flight_recorder_query_stats(strobe_flight_recorder *fr);

/* The configuration in force, defaults resolved; the strings belong to the
 * recorder (valid until stop). A NULL recorder gives the defaults. */
STROBE_API strobe_flight_recorder_desc strobe_flight_recorder_query_desc(const strobe_flight_recorder *fr);

/* >>deprecated: old names, kept for one release (strobe.h states the conventions). */
#if !defined(STROBE_NO_DEPRECATED)
STROBE_DEPRECATED("use strobe_flight_recorder_query_stats")
static inline strobe_flight_recorder_stats strobe_flight_recorder_query(strobe_flight_recorder *fr) {
  return strobe_flight_recorder_query_stats(fr);
}
STROBE_DEPRECATED("use strobe_flight_recorder_query_desc")
static inline strobe_flight_recorder_desc strobe_flight_recorder_get_desc(const strobe_flight_recorder *fr) {
  return strobe_flight_recorder_query_desc(fr);
}
#endif

#ifdef __cplusplus
}
#endif

#endif
