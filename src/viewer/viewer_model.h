/*
 * viewer_model.h — the viewer's model of one capture, built by
 * viewer_model.c: packed column tables the browser wraps in typed arrays and
 * a JSON description of them (docs/viewer.md). No HTTP here: the server's
 * viewer (src/server/viewer.c) serves these tables, the fuzzer builds them
 * from arbitrary bytes. Thread rule: a model is immutable once built and
 * reference-counted, so any thread may read a model it holds a reference to.
 */
#ifndef STROBE_VIEWER_MODEL_H
#define STROBE_VIEWER_MODEL_H

#include <stddef.h>
#include <stdint.h>

#define STROBE__VT_MAX_COLS 12

typedef struct strobe__vcol {
  const char *name;  /* static */
  const char *type;  /* "f64", "f32", "u32", "u16", "u8" */
  size_t offset;     /* bytes from the table's start; a multiple of 8 */
} strobe__vcol;

typedef struct strobe__vtable {
  const char *name;  /* static: "spans", "values", "cumulative", "frames", "samples", "open" */
  uint32_t rows;
  uint32_t ncols;
  strobe__vcol cols[STROBE__VT_MAX_COLS];
  unsigned char *data; /* malloc'd, `bytes` long, columns back to back */
  size_t bytes;
} strobe__vtable;

enum { STROBE__VT_SPANS, STROBE__VT_VALUES, STROBE__VT_CUMUL, STROBE__VT_FRAMES, STROBE__VT_SAMPLES,
       STROBE__VT_OPEN, STROBE__VT_OPSTAGES, STROBE__VT_OPCOUNTERS, STROBE__VT_ELEMENTS, STROBE__VT_HANDOFFS,
       STROBE__VT_OPRUNS, STROBE__VT_GPUSPANS, STROBE__VT_COUNT };

/* An image attachment the model keeps for the viewer (a frame's screenshot:
 * docs/viewer.md §Deep capture), in the meta's `attachments` by index. */
typedef struct strobe__vblob {
  char media_type[72];
  unsigned char *data; /* malloc'd */
  size_t len;
} strobe__vblob;
#define STROBE__VM_MAX_BLOBS 16u            /* images kept per model; more are counted (images_cut) */
#define STROBE__VM_MAX_BLOB_BYTES (32u << 20) /* their bytes together */

typedef struct strobe__vmodel {
  int refs;            /* atomic; the model is immutable once built */
  char *meta;          /* JSON text (docs/viewer.md, "meta") */
  size_t meta_len;
  strobe__vtable tables[STROBE__VT_COUNT];
  size_t bytes;        /* everything above */
  /* What the build kept, cut and cost (the server reports these as
   * strobe_viewer_load_stats, include/strobe/viewer.h). */
  uint64_t spans;      /* spans kept, at most the build's max_spans */
  uint64_t spans_cut;  /* completed spans past max_spans, not kept */
  uint64_t frames;     /* frame and operation entries */
  uint64_t samples;    /* counter and gauge samples */
  double build_ms;     /* time to read the capture and build the model */
  int read_error;      /* 0, or the reader's error that ended the capture early */
  strobe__vblob blobs[STROBE__VM_MAX_BLOBS]; /* image attachments (PNG) */
  uint32_t nblobs;
  uint32_t *row_first; /* the first span of each (thread, depth) row with spans, ascending; malloc'd */
  uint32_t nrows;
  uint32_t mapped_first; /* the first span of the lanes mapped from another clock (GPU queues, producers) */
} strobe__vmodel;

/* Where a capture comes from: a file (path) or bytes in memory (data, len). */
typedef struct strobe__vsource {
  const char *path;
  const void *data;
  size_t len;
  const char *label;   /* shown as the capture's name: the file's base name, "live" */
  const char *origin;  /* "file" or "live" */
} strobe__vsource;

/* Reads the capture twice (count, then fill) and builds the model, keeping
 * at most max_spans (>= 1) spans. Returns 0 with *out holding one reference,
 * or the open error / STROBE_ENOMEM / STROBE_EINVAL (*out NULL). A read error
 * after the first record is not a failure: the model holds what came before
 * it and says so (read_error, meta). */
int strobe__vmodel_build(const strobe__vsource *src, uint32_t max_spans, uint64_t generation,
                         strobe__vmodel **out);
strobe__vmodel *strobe__vmodel_retain(strobe__vmodel *m);
void strobe__vmodel_release(strobe__vmodel *m); /* accepts NULL */
/* Image attachment k (the meta's attachments[i].image), or NULL. */
const strobe__vblob *strobe__vmodel_blob(const strobe__vmodel *m, uint32_t k);
/* The table called `name`, or NULL. */
const strobe__vtable *strobe__vmodel_table(const strobe__vmodel *m, const char *name);

/* The live viewer's append (docs/viewer.md §Live append): the spans of `m`
 * that end after `since` (ns since m's start), the first span of every lane
 * row and every span of the lanes mapped from another clock (their times
 * move as calibration pairs arrive), in table order, as one packed buffer: u32 rows, u32 the model's
 * span count, then the columns start f64, dur f32, self f32, index u32 (the
 * span's row in m's spans table), site u16, depth u8, each starting on an
 * 8-byte boundary from offset 8, then frame u32 for every span of m (not
 * only those sent: the frames rows that own them, which renumber as frames
 * arrive). Returns 0 with *out malloc'd (the caller
 * frees it) and *len its bytes, STROBE_EINVAL for a NULL argument or a
 * `since` that is not a number, STROBE_ENOMEM. */
int strobe__vmodel_spans_since(const strobe__vmodel *m, double since, unsigned char **out, size_t *len);

#endif
