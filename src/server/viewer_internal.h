/*
 * viewer_internal.h — what the viewer's files in libstrobe_server share:
 *   viewer_model.c  a capture → the viewer's model: packed binary tables and
 *                   a JSON description of them (docs/viewer.md)
 *   viewer.c        the viewer's state (shown file or live recorder), its
 *                   worker thread, the /api/capture/... routes and the
 *                   embedded static files at `/`
 *   viewer_assets.c generated at build time by cmake/embed.cmake from viewer/
 *
 * Hooks in the rest of the server (kept to single lines): http.c lets the
 * static files through without a token and routes /api/capture/ here;
 * server.c destroys the viewer state at stop; struct strobe_server holds it.
 */
#ifndef STROBE_VIEWER_INTERNAL_H
#define STROBE_VIEWER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "strobe/viewer.h"

/* >>assets (viewer_assets.c, generated) */
typedef struct strobe__asset {
  const char *path;           /* "/index.html", "/app.js" ... */
  const char *content_type;   /* with charset for text */
  const unsigned char *data;
  size_t len;
} strobe__asset;
extern const strobe__asset strobe__viewer_assets[];
extern const size_t strobe__viewer_asset_count;

/* >>model (viewer_model.c) */
#define STROBE__VT_MAX_COLS 8

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
       STROBE__VT_OPEN, STROBE__VT_COUNT };

typedef struct strobe__vmodel {
  int refs;            /* atomic; the model is immutable once built */
  char *meta;          /* JSON text (docs/viewer.md, "meta") */
  size_t meta_len;
  strobe__vtable tables[STROBE__VT_COUNT];
  size_t bytes;        /* everything above */
} strobe__vmodel;

/* Where a capture comes from: a file (path) or bytes in memory (data, len). */
typedef struct strobe__vsource {
  const char *path;
  const void *data;
  size_t len;
  const char *label;   /* shown as the capture's name: the file's base name, "live" */
  const char *origin;  /* "file" or "live" */
} strobe__vsource;

/* Reads the capture twice (count, then fill) and builds the model. Returns 0
 * with *out holding one reference, or the open error / STROBE_ENOMEM /
 * STROBE_EINVAL. A read error after the first record is not a failure: the
 * model holds what came before it and says so (st->read_error, meta). */
int strobe__vmodel_build(const strobe__vsource *src, uint32_t max_spans, uint64_t generation,
                         strobe__vmodel **out, strobe_viewer_load_stats *st);
strobe__vmodel *strobe__vmodel_retain(strobe__vmodel *m);
void strobe__vmodel_release(strobe__vmodel *m); /* accepts NULL */
/* The table called `name`, or NULL. */
const strobe__vtable *strobe__vmodel_table(const strobe__vmodel *m, const char *name);

/* >>viewer (viewer.c) */
struct strobe_server;
struct MHD_Connection;
typedef struct strobe__viewer strobe__viewer;

/* 1 when a GET of `url` is one of the embedded static files (served without
 * the token). */
int strobe__viewer_is_asset(const char *url, const char *method);
int strobe__viewer_asset(struct MHD_Connection *conn, const char *url);
/* /api/capture/meta, /table/<name>, /recorder, /snapshot (authenticated). */
int strobe__viewer_api(struct strobe_server *s, struct MHD_Connection *conn, const char *url, const char *method,
                       const char *body, size_t len);
/* Stops the worker and the recorder and frees everything. Accepts NULL. */
void strobe__viewer_destroy(strobe__viewer *v);

#endif
