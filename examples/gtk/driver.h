/*
 * driver.h — strobe-gtk's --drive-input: the window sends itself input
 * through the X server, so a test sees events GDK delivers between frames
 * and inside flush-events. Owns its timer and hooks; must never touch
 * Strobe: what it sends is timed by frame_profile.c like any user's input.
 */
#ifndef STROBE_EXAMPLE_GTK_DRIVER_H
#define STROBE_EXAMPLE_GTK_DRIVER_H

#include <gtk/gtk.h>

typedef struct driver driver;

/* Starts sending input to `window` (shown, on an X11 display). Returns NULL
 * and says why on stderr when the display is not X11 or has no XTEST. */
driver *driver_start(GtkWidget *window);
/* Stops it. Accepts NULL. */
void driver_stop(driver *d);

#endif
