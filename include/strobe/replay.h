/*
 * replay.h — replaying a deep capture in another process (docs/recording.md
 * §Replay): reads a capture file, takes one frame's deep capture
 * (strobe/deep.h) and the contents of the resources its draw calls read, and
 * steps through the calls, giving each a status: ok, or what is missing to
 * redraw it faithfully. A renderer plugs in through a small backend table
 * (which kinds it draws, how to draw one call); the demo's cairo backend
 * (examples/demo/paint.c) redraws a captured frame with no live application.
 *
 * The status is the point: a replay that silently drew nothing for a
 * missing resource would look like a correct blank frame. A call is
 *   - STROBE_REPLAY_UNSUPPORTED_KIND when the backend does not draw its kind;
 *   - STROBE_REPLAY_MISSING_GEOMETRY when a geometry buffer it reads has no
 *     content in the capture (never attached, or cut by the capture's bound);
 *   - STROBE_REPLAY_MISSING_TEXTURE when a texture or surface it samples has
 *     none;
 *   - STROBE_REPLAY_MISSING_SURFACE_GEOMETRY when it composites a surface but
 *     was recorded without bounds and clip (nothing says where to put it);
 *   - STROBE_REPLAY_OK otherwise,
 * checked in that order (the first that applies).
 *
 * Thread rule: a strobe_replay is used by one thread at a time; its queries
 * are pure and return memory it owns until strobe_replay_close.
 */
#ifndef STROBE_REPLAY_H
#define STROBE_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "strobe/capture.h"
#include "strobe/deep.h"
#include "strobe/strobe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(ID, value, name): the statuses, in the order they are checked after OK. */
#define STROBE_REPLAY_STATUSES(X)                           \
  X(OK, 0, "ok")                                            \
  X(UNSUPPORTED_KIND, 1, "unsupported_kind")                \
  X(MISSING_GEOMETRY, 2, "missing_geometry")                \
  X(MISSING_TEXTURE, 3, "missing_texture")                  \
  X(MISSING_SURFACE_GEOMETRY, 4, "missing_surface_geometry") \
  X(DAMAGED_CONTENT, 5, "damaged_content")

typedef enum strobe_replay_status {
#define STROBE__REPLAY_ENUM(id, value, name) STROBE_REPLAY_##id = value,
  STROBE_REPLAY_STATUSES(STROBE__REPLAY_ENUM)
#undef STROBE__REPLAY_ENUM
} strobe_replay_status;
/* How many statuses there are (one past the last value): for tables indexed by status. */
#define STROBE__REPLAY_ONE(id, value, name) +1
enum { STROBE_REPLAY_STATUS_COUNT = 0 STROBE_REPLAY_STATUSES(STROBE__REPLAY_ONE) };
#undef STROBE__REPLAY_ONE

/* The status's name ("missing_texture"); "unknown" for other values. Never NULL. */
STROBE_API const char *strobe_replay_status_name(strobe_replay_status s);

/* A resource's content, or one of the frame's attachments. */
typedef struct strobe_replay_resource {
  uint64_t id;            /* its resource id */
  const char *media_type;
  uint32_t width, height; /* images: pixels; 0 otherwise */
  const void *bytes;      /* its content (rows packed); NULL when the capture has none */
  size_t size;            /* bytes */
  uint32_t state;         /* the frame's attachment record: STROBE_CAPTURE_ATTACH_STORED, _EARLIER or _CUT */
} strobe_replay_resource;

/* What a renderer provides. */
typedef struct strobe_replay_backend {
  void *ctx;
  /* 1 when it draws calls of this kind; NULL: no kind is checked (every
   * kind counts as supported; for listings that check data only). */
  int (*supports)(void *ctx, const char *kind);
  /* Draws one call whose status is OK: res[i] is the content of
   * call->refs[i]. Returns 0, or a negative STROBE_E* that stops the run. */
  int (*draw)(void *ctx, const strobe_capture_draw_call *call, const strobe_replay_resource *const *res);
} strobe_replay_backend;

typedef struct strobe_replay strobe_replay;

/* Reads the capture file at `path` twice: the first deep capture of frame
 * `frame`, then the contents of every resource its calls reference and
 * every attachment of that frame from its process (a resource stored in an
 * earlier frame is found there). On success *out owns all of it (strobe_replay_close). On
 * error *out is NULL and the code is STROBE_EINVAL (NULL argument),
 * strobe_capture_open's errors, a reader error met while looking for the
 * deep capture (the capture is damaged before it), STROBE_ENOTFOUND (the
 * capture holds no deep capture of that frame) or STROBE_ENOMEM. A damaged
 * attachment block (a corrupt screenshot or resource content) is no error
 * (strobe_capture_set_skip_damaged_content): it is skipped, and so is any
 * damage met after the deep capture was read (the read stops there, what
 * came before it is kept); the calls that need a content not read say
 * STROBE_REPLAY_DAMAGED_CONTENT, and strobe_replay_query_damage tells
 * where. */
STROBE_API int strobe_replay_open(const char *path, uint64_t frame, strobe_replay **out);
/* The same for the deep capture of `frame` numbered `seq` (strobe_capture_deep.seq, unique in a capture; 0: the
 * first of that frame): a merged capture (strobe merge) may hold several processes' deep captures of one frame id.
 * Of the frame's attachments it keeps those of the chosen one's process (strobe_capture_record.origin). Errors as
 * strobe_replay_open's; STROBE_ENOTFOUND also when no deep capture of that frame has that number. */
STROBE_API int strobe_replay_open_deep(const char *path, uint64_t frame, uint64_t seq, strobe_replay **out);
/* Frees everything. Accepts NULL. */
STROBE_API void strobe_replay_close(strobe_replay *r);

/* The deep capture: its calls, in order (owned by r). */
STROBE_API const strobe_capture_deep *strobe_replay_query_deep(const strobe_replay *r);
/* A referenced resource's content, or NULL when the capture has none
 * (never attached, or its content cut). */
STROBE_API const strobe_replay_resource *strobe_replay_query_resource(const strobe_replay *r, uint64_t id);
/* The frame's attachments in capture order: *count of them (owned by r);
 * `bytes` is NULL for one whose content the capture does not hold. */
STROBE_API const strobe_replay_resource *strobe_replay_query_attachments(const strobe_replay *r, uint32_t *count);

/* The first damage met reading the contents (STROBE_ECORRUPT for a skipped attachment block, or the reader
 * error that stopped the read after the deep capture), with the byte near which it was met in *at (may be
 * NULL); 0 when none. A content referenced and not read may lie in it: a call needing one is
 * STROBE_REPLAY_DAMAGED_CONTENT, never drawn. */
STROBE_API int strobe_replay_query_damage(const strobe_replay *r, uint64_t *at);

/* The status of call `index` for backend `b` (NULL: kinds are not checked).
 * An index past the calls is STROBE_REPLAY_UNSUPPORTED_KIND. */
STROBE_API strobe_replay_status strobe_replay_check(const strobe_replay *r, uint32_t index,
                                                    const strobe_replay_backend *b);

/* The same check for any call, with `has_content(ctx, id)` saying whether
 * the capture holds resource id's content (1) or not (0): for readers that
 * keep their own record of contents (the viewer's model). Pure: any thread. */
STROBE_API strobe_replay_status strobe_replay_check_call(const strobe_capture_draw_call *call,
                                                         int (*has_content)(void *ctx, uint64_t resource), void *ctx,
                                                         const strobe_replay_backend *b);

/* Steps through every call in order: checks it, and draws it with b->draw
 * when its status is OK. `status` (NULL, or one entry per call) receives
 * each call's status. Returns the number of calls that were not OK (0: the
 * whole frame was redrawn), STROBE_EINVAL (NULL r or b, or no draw), or the
 * first error b->draw returned (the calls after it are not drawn). */
STROBE_API int strobe_replay_run(const strobe_replay *r, const strobe_replay_backend *b, strobe_replay_status *status);

#ifdef __cplusplus
}
#endif

#endif /* STROBE_REPLAY_H */
