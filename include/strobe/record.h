/*
 * record.h — recording a capture file: every event of every instrumented
 * thread, streamed to disk in crash-safe blocks (docs/capture-format.md).
 *
 * Several recorders may run at once (at most 8 event consumers in all,
 * counting the flight recorder and live streams); each gets every event
 * written while it is active.
 *
 * Thread rule: start and stop may be called from any thread; a recorder is
 * stopped exactly once.
 */
#ifndef STROBE_RECORD_H
#define STROBE_RECORD_H

#include <stdint.h>

#include "strobe/strobe.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct strobe_record_desc {
  const char *path;           /* file to create or truncate (mode 0644); required */
  uint32_t flush_interval_ms; /* 1..60000, default 100: the most recent data a crash can lose */
  int compression_level;      /* zstd level 1..19, default 3 */
} strobe_record_desc;

typedef struct strobe_recorder strobe_recorder;

typedef struct strobe_record_stats {
  uint64_t bytes;  /* bytes written to the file so far */
  int error;       /* first write error (negative STROBE_E*), 0 if none */
} strobe_record_stats;

/* Starts recording. Measures the per-scope overhead (at most ~1 ms) and
 * writes the header before returning. On success *out is the recorder; on
 * error *out is NULL, no file is left behind, and the code is STROBE_EINVAL
 * (bad desc), STROBE_EIO (cannot create the file), STROBE_ENOMEM,
 * STROBE_ELIMIT (8 consumers active) or STROBE_EFEATURE_DISABLED. */
STROBE_API int strobe_record_start(const strobe_record_desc *desc, strobe_recorder **out);

/* Delivers every event written before the call, writes the footer, closes the
 * file and frees the recorder. Returns 0, or the first write error (the file
 * then holds everything up to that point). Accepts NULL (returns 0). */
STROBE_API int strobe_record_stop(strobe_recorder *r);

/* Forces the pending blocks to the file now (normally every flush_interval_ms). */
STROBE_API int strobe_record_flush(strobe_recorder *r);

STROBE_API strobe_record_stats strobe_record_query(strobe_recorder *r);

#ifdef __cplusplus
}
#endif

#endif
