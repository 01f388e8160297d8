/*
 * viewer_assets.h — the viewer's static files as libstrobe_server embeds
 * them (viewer_assets.c, generated at build time by cmake/embed.cmake from
 * viewer/): the table the server's `/` serves, and that `strobe export
 * --format html` packs into one self-contained file (docs/viewer.md §One
 * file). Read-only data: any thread may read it.
 */
#ifndef STROBE_VIEWER_ASSETS_H
#define STROBE_VIEWER_ASSETS_H

#include <stddef.h>

typedef struct strobe__asset {
  const char *path;           /* "/index.html", "/app.js" ... */
  const char *content_type;   /* with charset for text */
  const unsigned char *data;  /* NUL-terminated after len bytes */
  size_t len;
} strobe__asset;
extern const strobe__asset strobe__viewer_assets[];
extern const size_t strobe__viewer_asset_count;

#endif
