/*
 * driver.c — strobe-gtk's --drive-input (see driver.h). Every 40 ms a
 * timer sends, through XTEST, pointer motion, a key press, more motion and
 * the key's release: GDK delivers the press, the release and the first
 * motion between frames, and holds the last motion back until the next
 * frame's flush-events. GDK's X11 backend rarely has more than that one
 * event queued when flush-events comes, so every third flush-events the
 * driver also queues the last motion event twice more (gdk_display_put_event,
 * from an emission hook, before GDK's own handler empties the queue): one
 * phase then dispatches three events, as a busier backend does.
 */
#include "driver.h"

#include <X11/extensions/XTest.h>
#include <gdk/x11/gdkx.h>
#include <stdio.h>

struct driver {
  GtkWidget *window;      /* weak: NULL once the window is gone */
  Display *xdisplay;
  guint timer;
  unsigned sent;          /* timer ticks so far */
  unsigned flushes;       /* flush-events seen */
  GdkEvent *last_motion;  /* a reference to the last motion event delivered, or NULL */
  gulong event_hook, flush_hook;
};

static gboolean send_input(gpointer data) {
  driver *d = data;
  if (!d->window || !gtk_widget_get_mapped(d->window)) return G_SOURCE_CONTINUE;
  int x, y;
  Window root = DefaultRootWindow(d->xdisplay), child;
  GdkSurface *surface = gtk_native_get_surface(GTK_NATIVE(d->window));
  XTranslateCoordinates(d->xdisplay, gdk_x11_surface_get_xid(surface), root, 0, 0, &x, &y, &child);
  int dx = 20 + (int)(d->sent % 100);
  KeyCode key = XKeysymToKeycode(d->xdisplay, XK_a);
  XTestFakeMotionEvent(d->xdisplay, -1, x + dx, y + 40, 0);
  XTestFakeKeyEvent(d->xdisplay, key, True, 0);
  XTestFakeMotionEvent(d->xdisplay, -1, x + dx + 5, y + 45, 0);
  XTestFakeKeyEvent(d->xdisplay, key, False, 0);
  XTestFakeMotionEvent(d->xdisplay, -1, x + dx + 10, y + 50, 0);
  XFlush(d->xdisplay);
  d->sent++;
  return G_SOURCE_CONTINUE;
}

static gboolean keep_motion(GSignalInvocationHint *hint, guint n, const GValue *params, gpointer data) {
  (void)hint, (void)n;
  driver *d = data;
  GdkEvent *e = g_value_peek_pointer(&params[1]);
  if (gdk_event_get_event_type(e) != GDK_MOTION_NOTIFY) return TRUE;
  if (d->last_motion) gdk_event_unref(d->last_motion);
  d->last_motion = gdk_event_ref(e);
  return TRUE;
}

static gboolean queue_more(GSignalInvocationHint *hint, guint n, const GValue *params, gpointer data) {
  (void)hint, (void)n, (void)params;
  driver *d = data;
  if (d->window && d->last_motion && ++d->flushes % 3 == 0) {
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    gdk_display_put_event(gtk_widget_get_display(d->window), d->last_motion);
    gdk_display_put_event(gtk_widget_get_display(d->window), d->last_motion);
    G_GNUC_END_IGNORE_DEPRECATIONS
  }
  return TRUE;
}

driver *driver_start(GtkWidget *window) {
  GdkDisplay *display = gtk_widget_get_display(window);
  int event_base, error_base, major, minor;
  if (!GDK_IS_X11_DISPLAY(display)) {
    fprintf(stderr, "strobe-gtk: --drive-input needs an X11 display (GDK_BACKEND=x11)\n");
    return NULL;
  }
  Display *x = gdk_x11_display_get_xdisplay(display);
  if (!XTestQueryExtension(x, &event_base, &error_base, &major, &minor)) {
    fprintf(stderr, "strobe-gtk: --drive-input needs the X server's XTEST extension\n");
    return NULL;
  }
  driver *d = g_new0(driver, 1);
  d->window = window;
  g_object_add_weak_pointer(G_OBJECT(window), (gpointer *)&d->window);
  d->xdisplay = x;
  d->event_hook = g_signal_add_emission_hook(g_signal_lookup("event", GDK_TYPE_SURFACE), 0, keep_motion, d, NULL);
  d->flush_hook =
      g_signal_add_emission_hook(g_signal_lookup("flush-events", GDK_TYPE_FRAME_CLOCK), 0, queue_more, d, NULL);
  d->timer = g_timeout_add(40, send_input, d);
  return d;
}

void driver_stop(driver *d) {
  if (!d) return;
  g_source_remove(d->timer);
  if (d->window) g_object_remove_weak_pointer(G_OBJECT(d->window), (gpointer *)&d->window);
  g_signal_remove_emission_hook(g_signal_lookup("event", GDK_TYPE_SURFACE), d->event_hook);
  g_signal_remove_emission_hook(g_signal_lookup("flush-events", GDK_TYPE_FRAME_CLOCK), d->flush_hook);
  if (d->last_motion) gdk_event_unref(d->last_motion);
  g_free(d);
}
