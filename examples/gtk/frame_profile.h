/*
 * frame_profile.h — GTK 4's frame clock mapped onto Strobe's passes, stages
 * and input operations, exactly as docs/toolkit-frame-loop.md says: the
 * guide's pattern as code. Owns the hooks and handlers that time one
 * window's frames; must never change what GTK does (every hook returns TRUE
 * and lets the emission run) and uses Strobe's public API only.
 *
 * Thread rule: GTK's main thread only, like GTK itself.
 */
#ifndef STROBE_EXAMPLE_GTK_FRAME_PROFILE_H
#define STROBE_EXAMPLE_GTK_FRAME_PROFILE_H

#include <gtk/gtk.h>
#include <strobe/session.h>

typedef struct frame_profile frame_profile;

/* Starts timing the frames of `window`, which must be realized (it has its
 * frame clock): each frame is a pass on Strobe window `w` of collector `c`
 * whose frame id is GDK's frame counter, each frame-clock phase a stage of
 * it, and each event GDK delivers to the window an input operation. Returns
 * NULL when the window has no frame clock yet or is already profiled. */
frame_profile *frame_profile_attach(GtkWidget *window, strobe_collector *c, strobe_window w);

/* Stops timing: a pass or input still open ends uncommitted, the handlers
 * are disconnected. Accepts NULL. */
void frame_profile_detach(frame_profile *fp);

#endif
