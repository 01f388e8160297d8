/*
 * viewer_internal.h — what the viewer's files in libstrobe_server share:
 *   viewer.c        the viewer's state (shown file or live recorder), its
 *                   worker thread, the /api/capture/... routes and the
 *                   embedded static files at `/`
 *   viewer_assets.c generated at build time by cmake/embed.cmake from viewer/
 * The model they serve is built below the server, without HTTP, by
 * src/viewer/viewer_model.c (viewer/viewer_model.h).
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

/* >>assets (viewer_assets.c, generated): server/viewer_assets.h */
#include "server/viewer_assets.h"

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
/* The capture strobe_profile_explain reads: the live recorder's ring dumped now into a memory file ("live"), else
 * the file the viewer shows ("file"). Returns 0 with *fd open (the caller closes it) and *source a static word;
 * STROBE_ESTATE when neither exists, STROBE_EIO or STROBE_ENOMEM (nothing left open). On the caller's thread: the
 * dump blocks it (strobe/flight.h). */
int strobe__viewer_explain_source(struct strobe_server *s, int *fd, const char **source);

#endif
