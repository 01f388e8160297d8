/*
 * main.c — strobe-gtk: a GTK 4 window with an animated widget whose frames
 * are timed as docs/toolkit-frame-loop.md says (frame_profile.c). Owns the
 * window, the widget (its snapshot and size_allocate vfuncs open scopes of
 * their own, so a reader can check that the paint and layout stages hold
 * them), the key and pointer handlers, the session report, the capture and
 * the per-frame log of GDK's counter. Must never reach into Strobe's
 * internals: public API only, as an application would.
 *
 *   strobe-gtk [--frames N] [--report FILE] [--capture FILE] [--gdk-log FILE] [--drive-input]
 *
 * --frames N     quit after N painted frames (default: run until the window closes)
 * --report FILE  the session report (JSON, every operation kind, stage runs)
 * --capture FILE a capture of the whole run
 * --gdk-log FILE one line per painted frame, "frame COUNTER" (GDK's frame
 *                counter in after-paint), per event GDK delivered, "event
 *                TYPE" (the GdkEventType), and per flush-events and
 *                resume-events, "flush COUNTER" and "resume COUNTER": what
 *                a test compares with the report and the capture
 * --drive-input  send itself key presses and pointer motion (X11: driver.c),
 *                and pause the animation for 300 ms at frame 20 so that
 *                motion also arrives when there is nothing to paint
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <strobe/record.h>

#include "driver.h"
#include "frame_profile.h"

/* >>widget: a row of squares that move every frame and a width that
 * changes every 8th, so frames paint and some lay out. */
#define BOUNCER_TYPE (bouncer_get_type())
G_DECLARE_FINAL_TYPE(Bouncer, bouncer, STROBE_EXAMPLE, BOUNCER, GtkWidget)

struct _Bouncer {
  GtkWidget parent;
  double phase;  /* 0..1, advanced by the tick callback */
  int extra;     /* 0..3: adds 16 px to the natural width per step */
  guint gap_ms;  /* --drive-input: the animation stops this long at frame 20, once; 0: never */
};

G_DEFINE_TYPE(Bouncer, bouncer, GTK_TYPE_WIDGET)

static void bouncer_snapshot(GtkWidget *w, GtkSnapshot *s) {
  STROBE_SCOPE("gtk_snapshot"); /* inside GTK's own paint: the paint stage must hold it */
  Bouncer *b = STROBE_EXAMPLE_BOUNCER(w);
  int width = gtk_widget_get_width(w), height = gtk_widget_get_height(w);
  for (int i = 0; i < 64; i++) {
    double x = (width - 12) * (0.5 + 0.5 * sin(6.2832 * (b->phase + i / 64.0)));
    GdkRGBA c = {(float)(i / 64.0), 0.4f, (float)(1.0 - i / 64.0), 1.0f};
    gtk_snapshot_append_color(s, &c, &GRAPHENE_RECT_INIT((float)x, (float)(i * height / 64), 12, 12));
  }
}

static void bouncer_size_allocate(GtkWidget *w, int width, int height, int baseline) {
  STROBE_SCOPE("gtk_size_allocate"); /* inside GTK's own layout: the layout stage must hold it */
  (void)w, (void)width, (void)height, (void)baseline;
}

static void bouncer_measure(GtkWidget *w, GtkOrientation o, int for_size, int *min, int *nat, int *min_base,
                            int *nat_base) {
  (void)for_size;
  *min = *nat = 200 + (o == GTK_ORIENTATION_HORIZONTAL ? 16 * STROBE_EXAMPLE_BOUNCER(w)->extra : 0);
  *min_base = *nat_base = -1;
}

static gboolean bouncer_tick(GtkWidget *w, GdkFrameClock *clock, gpointer data);

static gboolean bouncer_restart(gpointer data) {
  gtk_widget_add_tick_callback(data, bouncer_tick, NULL, NULL);
  return G_SOURCE_REMOVE;
}

static gboolean bouncer_tick(GtkWidget *w, GdkFrameClock *clock, gpointer data) {
  (void)data;
  STROBE_STAGE("animate", "update"); /* work inside a phase: a block stage nested in `update` */
  Bouncer *b = STROBE_EXAMPLE_BOUNCER(w);
  if (b->gap_ms && gdk_frame_clock_get_frame_counter(clock) >= 20) {
    /* Nothing to paint for a while: pointer motion now makes GDK run
     * flush-events without a frame (an idle pass). */
    g_timeout_add(b->gap_ms, bouncer_restart, w);
    b->gap_ms = 0;
    return G_SOURCE_REMOVE;
  }
  b->phase = (double)(gdk_frame_clock_get_frame_time(clock) % 2000000) / 2000000.0;
  if (gdk_frame_clock_get_frame_counter(clock) % 8 == 0) {
    b->extra = (b->extra + 1) % 4;
    gtk_widget_queue_resize(w);
  }
  gtk_widget_queue_draw(w);
  return G_SOURCE_CONTINUE;
}

static void bouncer_class_init(BouncerClass *k) {
  GTK_WIDGET_CLASS(k)->snapshot = bouncer_snapshot;
  GTK_WIDGET_CLASS(k)->size_allocate = bouncer_size_allocate;
  GTK_WIDGET_CLASS(k)->measure = bouncer_measure;
}

static void bouncer_init(Bouncer *b) { gtk_widget_add_tick_callback(GTK_WIDGET(b), bouncer_tick, NULL, NULL); }

/* >>app */
typedef struct app {
  strobe_collector *collector;
  strobe_window window;
  frame_profile *profile;
  FILE *gdk_log;        /* --gdk-log, or NULL */
  long frames_left;     /* --frames: painted frames still to run; -1: until closed */
  int done;
  int closed;           /* the window was destroyed (closed by its user) */
  driver *driver;       /* --drive-input, or NULL */
  guint gap_ms;         /* --drive-input: the animation's one pause (Bouncer.gap_ms) */
  gulong log_hooks[3];  /* GdkSurface::event, flush-events, resume-events */
} app;

/* The application's own handlers: stages of the input operation GDK's
 * dispatch runs in. */
static gboolean on_key(GtkEventControllerKey *k, guint keyval, guint keycode, GdkModifierType m, gpointer data) {
  (void)k, (void)keyval, (void)keycode, (void)m, (void)data;
  STROBE_STAGE("key_handler", NULL);
  return GDK_EVENT_STOP;
}

static void on_motion(GtkEventControllerMotion *m, double x, double y, gpointer data) {
  (void)m, (void)x, (void)y, (void)data;
  STROBE_STAGE("pointer_handler", NULL);
}

/* After-paint, after every other handler: GDK's counter names the frame just painted. */
static void on_frame_painted(GdkFrameClock *clock, gpointer data) {
  app *a = data;
  if (a->gdk_log) fprintf(a->gdk_log, "frame %lld\n", (long long)gdk_frame_clock_get_frame_counter(clock));
  if (a->frames_left > 0 && --a->frames_left == 0) a->done = 1;
}

/* flush-events and resume-events, logged with the counter: a cycle with no
 * frame line between them painted nothing. */
static gboolean log_cycle(GSignalInvocationHint *hint, guint n, const GValue *params, gpointer data) {
  (void)n;
  app *a = data;
  const char *what = hint->signal_id == g_signal_lookup("flush-events", GDK_TYPE_FRAME_CLOCK) ? "flush" : "resume";
  if (a->gdk_log)
    fprintf(a->gdk_log, "%s %lld\n", what, (long long)gdk_frame_clock_get_frame_counter(g_value_get_object(&params[0])));
  return TRUE;
}

static gboolean log_event(GSignalInvocationHint *hint, guint n, const GValue *params, gpointer data) {
  (void)hint, (void)n;
  app *a = data;
  if (a->gdk_log) fprintf(a->gdk_log, "event %d\n", (int)gdk_event_get_event_type(g_value_peek_pointer(&params[1])));
  return TRUE;
}

/* Adds (on) or removes the --gdk-log hooks. */
static void log_hooks(app *a, int on) {
  guint signals[3] = {g_signal_lookup("event", GDK_TYPE_SURFACE), g_signal_lookup("flush-events", GDK_TYPE_FRAME_CLOCK),
                      g_signal_lookup("resume-events", GDK_TYPE_FRAME_CLOCK)};
  for (int i = 0; i < 3; i++) {
    if (on)
      a->log_hooks[i] = g_signal_add_emission_hook(signals[i], 0, i ? log_cycle : log_event, a, NULL);
    else
      g_signal_remove_emission_hook(signals[i], a->log_hooks[i]);
  }
}

static void on_realize(GtkWidget *window, gpointer data) {
  app *a = data;
  a->profile = frame_profile_attach(window, a->collector, a->window);
  g_signal_connect_after(gtk_widget_get_frame_clock(window), "after-paint", G_CALLBACK(on_frame_painted), a);
}

static void on_destroy(GtkWidget *window, gpointer data) {
  (void)window;
  app *a = data;
  a->closed = a->done = 1;
}

static GtkWidget *build_window(app *a) {
  GtkWidget *window = gtk_window_new();
  gtk_window_set_title(GTK_WINDOW(window), "strobe-gtk");
  gtk_window_set_default_size(GTK_WINDOW(window), 320, 240);
  g_signal_connect(window, "realize", G_CALLBACK(on_realize), a);
  g_signal_connect(window, "destroy", G_CALLBACK(on_destroy), a);
  GtkEventController *keys = gtk_event_controller_key_new();
  g_signal_connect(keys, "key-pressed", G_CALLBACK(on_key), a);
  gtk_widget_add_controller(window, keys);
  GtkEventController *motion = gtk_event_controller_motion_new();
  g_signal_connect(motion, "motion", G_CALLBACK(on_motion), a);
  gtk_widget_add_controller(window, motion);
  Bouncer *bouncer = g_object_new(BOUNCER_TYPE, NULL);
  bouncer->gap_ms = a->gap_ms;
  gtk_window_set_child(GTK_WINDOW(window), GTK_WIDGET(bouncer));
  return window;
}

/* >>options */
typedef struct options {
  long frames;
  const char *report, *capture, *gdk_log;
  int drive_input;
} options;

static int parse_options(int argc, char **argv, options *o) {
  *o = (options){.frames = -1};
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(arg, "--drive-input")) {
      o->drive_input = 1;
      continue;
    }
    if (!val) {
      fprintf(stderr, "strobe-gtk: %s needs a value (or is unknown); see the top of examples/gtk/main.c\n", arg);
      return -1;
    }
    char *end;
    if (!strcmp(arg, "--frames")) {
      errno = 0;
      o->frames = strtol(val, &end, 10);
      if (errno || *end || o->frames < 1) {
        fprintf(stderr, "strobe-gtk: --frames wants a positive count, not '%s'\n", val);
        return -1;
      }
    } else if (!strcmp(arg, "--report")) o->report = val;
    else if (!strcmp(arg, "--capture")) o->capture = val;
    else if (!strcmp(arg, "--gdk-log")) o->gdk_log = val;
    else {
      fprintf(stderr, "strobe-gtk: unknown option %s\n", arg);
      return -1;
    }
    i++;
  }
  return 0;
}

static int write_report(strobe_collector *c, const char *session, const char *path) {
  strobe_report *r = NULL;
  char *json = NULL;
  size_t len = 0;
  int rc = strobe_session_stop(c, session, 0, &r);
  if (!rc) rc = strobe_report_json(r, &json, &len);
  strobe_report_free(r);
  if (rc) {
    fprintf(stderr, "strobe-gtk: the session report failed: %s\n", strobe_strerror(rc));
    return 1;
  }
  FILE *f = fopen(path, "w");
  int bad = !f || fwrite(json, 1, len, f) != len;
  if (f && fclose(f)) bad = 1;
  free(json);
  if (bad) fprintf(stderr, "strobe-gtk: cannot write %s: %s\n", path, strerror(errno));
  return bad;
}

/* Runs the window until it closes or --frames painted frames. */
static int run(app *a, const options *o) {
  GtkWidget *window = build_window(a);
  gtk_window_present(GTK_WINDOW(window));
  if (o->drive_input && !(a->driver = driver_start(window))) {
    gtk_window_destroy(GTK_WINDOW(window));
    return 1;
  }
  while (!a->done) g_main_context_iteration(NULL, TRUE);
  driver_stop(a->driver);
  frame_profile_detach(a->profile);
  if (!a->closed) gtk_window_destroy(GTK_WINDOW(window));
  return 0;
}

int main(int argc, char **argv) {
  options o;
  if (parse_options(argc, argv, &o)) return 2;
  gtk_init();
  app a = {.frames_left = o.frames, .gap_ms = o.drive_input ? 300 : 0};
  strobe_recorder *rec = NULL;
  char session[STROBE_SESSION_ID_MAX] = "";
  int rc = strobe_collector_create(&a.collector);
  if (!rc) rc = strobe_window_register(a.collector, "main", 0, &a.window);
  if (!rc && o.report)
    rc = strobe_session_start(a.collector, &(strobe_session_desc){.max_samples = STROBE_MAX_SAMPLES, .stage_runs = 1},
                              session);
  if (!rc && o.capture) rc = strobe_record_start(&(strobe_record_desc){.path = o.capture}, &rec);
  if (rc) {
    fprintf(stderr, "strobe-gtk: cannot start profiling: %s\n", strobe_strerror(rc));
    return 1;
  }
  if (o.gdk_log && !(a.gdk_log = fopen(o.gdk_log, "w"))) {
    fprintf(stderr, "strobe-gtk: cannot write %s: %s\n", o.gdk_log, strerror(errno));
    return 1;
  }
  log_hooks(&a, 1);
  int status = run(&a, &o);
  log_hooks(&a, 0);
  if (o.report && write_report(a.collector, session, o.report)) status = 1;
  if (rec && strobe_record_stop(rec)) status = 1;
  if (a.gdk_log && fclose(a.gdk_log)) status = 1;
  strobe_collector_close(a.collector);
  strobe_collector_release(a.collector);
  return status;
}
