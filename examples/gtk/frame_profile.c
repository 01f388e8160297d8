/*
 * frame_profile.c — times a GTK 4 window's frames with Strobe, as
 * docs/toolkit-frame-loop.md describes (see frame_profile.h). Owns the
 * emission hooks on GdkFrameClock's phase signals and on GdkSurface::event,
 * the after-handlers that close each phase, and the open pass, phase and
 * input handles of each profiled window. Must never stop or change an
 * emission, and never holds a stage open across a return to the main loop
 * except the pass's own gap between flush-events and before-paint.
 *
 * Why hooks and after-handlers: GDK and GTK connect their own handlers to
 * the frame clock when the window is realized, before an application can,
 * and GLib runs handlers in connection order. An emission hook runs before
 * every handler and a handler connected with G_CONNECT_AFTER after all of
 * them, so the stage each pair opens and closes holds exactly its phase.
 */
#include "frame_profile.h"

#define FRAME_PROFILE_KEY "strobe-frame-profile"

/* >>phases: GdkFrameClock's signals, in the order GDK emits them. */
typedef enum phase_id { PH_FLUSH_EVENTS, PH_BEFORE_PAINT, PH_UPDATE, PH_LAYOUT, PH_PAINT, PH_AFTER_PAINT, PH_COUNT } phase_id;

static const char *const phase_signal[PH_COUNT] = {"flush-events", "before-paint", "update",
                                                   "layout",       "paint",        "after-paint"};
static strobe_site phase_site[PH_COUNT] = {
    STROBE_STAGE_SITE("flush_events", NULL), STROBE_STAGE_SITE("before_paint", NULL),
    STROBE_STAGE_SITE("update", NULL),       STROBE_STAGE_SITE("layout", NULL),
    STROBE_STAGE_SITE("paint", NULL),        STROBE_STAGE_SITE("after_paint", NULL),
};

typedef struct phase_end {
  frame_profile *fp;
  phase_id phase;
} phase_end;

struct frame_profile {
  strobe_collector *collector;
  strobe_window window;
  GdkFrameClock *clock;       /* the window's clock: one per toplevel, shared by its popups */
  phase_end ends[PH_COUNT];   /* the after-handlers' data */
  gulong end_ids[PH_COUNT];   /* their handler ids */
  strobe_op pass;             /* the frame: from its first phase to the end of after-paint */
  int pass_open;
  int frame_begun;            /* before-paint ran: GDK advanced its frame counter for this pass */
  strobe_stage phase;         /* the phase running now */
  int phase_open;
  strobe_op input;            /* the event being dispatched */
  int input_open;
  int input_in_phase;         /* begun inside a phase: ends with it at the latest */
  guint input_idle;           /* the idle that ends an event dispatched between frames, or 0 */
};

/* >>hooks: one set per process, shared by every profiled window. */
static gulong phase_hooks[PH_COUNT], resume_hook, event_hook;
static int attached;

static frame_profile *profile_of(gpointer clock) {
  return clock ? g_object_get_data(G_OBJECT(clock), FRAME_PROFILE_KEY) : NULL;
}

/* >>input */
static void end_input(frame_profile *fp) {
  if (fp->input_idle) g_source_remove(fp->input_idle);
  fp->input_idle = 0;
  if (fp->input_open) strobe_op_end(fp->input, 1);
  fp->input_open = 0;
}

/* Runs once the main-loop dispatch that delivered an event between frames
 * has returned: G_PRIORITY_HIGH comes before every other source, so nothing
 * else runs inside the input operation. */
static gboolean on_dispatch_over(gpointer data) {
  frame_profile *fp = data;
  fp->input_idle = 0;
  end_input(fp);
  return G_SOURCE_REMOVE;
}

/* GdkSurface::event, before GTK's own handler: every event GDK delivers,
 * inside flush-events (pointer motion GDK held back to compress it, and
 * whatever it queued behind it) or between frames (keys, buttons, crossings). */
static gboolean on_event(GSignalInvocationHint *hint, guint n, const GValue *params, gpointer data) {
  (void)hint, (void)n, (void)data;
  frame_profile *fp = profile_of(gdk_surface_get_frame_clock(g_value_get_object(&params[0])));
  if (!fp) return TRUE;
  end_input(fp); /* the previous event's dispatch is over: several events may come in one phase */
  if (fp->phase_open) {
    fp->input = strobe_op_begin_in_phase(fp->collector, fp->window, STROBE_OP_INPUT, NULL);
    fp->input_in_phase = 1;
  } else {
    fp->input = strobe_op_begin(fp->collector, fp->window, STROBE_OP_INPUT, NULL);
    fp->input_in_phase = 0;
    fp->input_idle = g_idle_add_full(G_PRIORITY_HIGH, on_dispatch_over, fp, NULL);
  }
  fp->input_open = 1;
  return TRUE;
}

/* >>phases */
/* The pass begins in whichever phase comes first: flush-events when GDK
 * had input to deliver, before-paint otherwise. In flush-events GDK's
 * counter still names the previous frame (it advances just before
 * before-paint), so the pass takes the counter plus one. */
static void begin_pass(frame_profile *fp, phase_id first) {
  gint64 counter = gdk_frame_clock_get_frame_counter(fp->clock);
  uint64_t frame_id = (uint64_t)(first == PH_FLUSH_EVENTS ? counter + 1 : counter);
  fp->pass = strobe_op_begin_frame(fp->collector, fp->window, frame_id, NULL);
  fp->pass_open = 1;
  fp->frame_begun = 0;
}

static gboolean on_phase_begins(GSignalInvocationHint *hint, guint n, const GValue *params, gpointer data) {
  (void)hint, (void)n;
  frame_profile *fp = profile_of(g_value_get_object(&params[0]));
  if (!fp) return TRUE;
  phase_id ph = (phase_id)GPOINTER_TO_INT(data);
  end_input(fp); /* an event dispatched between frames ended before this phase */
  if (!fp->pass_open) begin_pass(fp, ph);
  if (ph == PH_BEFORE_PAINT) fp->frame_begun = 1;
  if (fp->phase_open) strobe_stage_end(&fp->phase); /* only if a handler stopped the last emission */
  fp->phase = strobe_stage_begin(&phase_site[ph]);
  fp->phase_open = 1;
  return TRUE;
}

/* Connected with G_CONNECT_AFTER: runs when GDK's and GTK's handlers of the
 * phase have returned. Events dispatched in the phase end with it. */
static void on_phase_ends(GdkFrameClock *clock, gpointer data) {
  (void)clock;
  phase_end *pe = data;
  frame_profile *fp = pe->fp;
  if (fp->phase_open) strobe_stage_end(&fp->phase);
  fp->phase_open = 0;
  if (fp->input_open && fp->input_in_phase) fp->input_open = 0; /* ended implicitly with its phase */
  if (pe->phase == PH_AFTER_PAINT && fp->pass_open) {
    strobe_op_end(fp->pass, 1);
    fp->pass_open = 0;
  }
}

/* resume-events closes a cycle that began with flush-events. When GDK then
 * had nothing to paint (no before-paint), the pass delivered input but was
 * no frame, and GDK's counter did not move: it is an idle pass. */
static gboolean on_resume_events(GSignalInvocationHint *hint, guint n, const GValue *params, gpointer data) {
  (void)hint, (void)n, (void)data;
  frame_profile *fp = profile_of(g_value_get_object(&params[0]));
  if (!fp || !fp->pass_open || fp->frame_begun) return TRUE;
  end_input(fp);
  strobe_op_mark_idle();
  strobe_op_end(fp->pass, 1);
  fp->pass_open = 0;
  return TRUE;
}

static void install_hooks(void) {
  GType clock_type = GDK_TYPE_FRAME_CLOCK;
  g_type_class_unref(g_type_class_ref(clock_type)); /* its signals exist once the class does */
  for (int ph = 0; ph < PH_COUNT; ph++)
    phase_hooks[ph] = g_signal_add_emission_hook(g_signal_lookup(phase_signal[ph], clock_type), 0,
                                                 on_phase_begins, GINT_TO_POINTER(ph), NULL);
  resume_hook = g_signal_add_emission_hook(g_signal_lookup("resume-events", clock_type), 0, on_resume_events, NULL,
                                           NULL);
  event_hook = g_signal_add_emission_hook(g_signal_lookup("event", GDK_TYPE_SURFACE), 0, on_event, NULL, NULL);
}

static void remove_hooks(void) {
  for (int ph = 0; ph < PH_COUNT; ph++)
    g_signal_remove_emission_hook(g_signal_lookup(phase_signal[ph], GDK_TYPE_FRAME_CLOCK), phase_hooks[ph]);
  g_signal_remove_emission_hook(g_signal_lookup("resume-events", GDK_TYPE_FRAME_CLOCK), resume_hook);
  g_signal_remove_emission_hook(g_signal_lookup("event", GDK_TYPE_SURFACE), event_hook);
}

/* >>attach */
frame_profile *frame_profile_attach(GtkWidget *window, strobe_collector *c, strobe_window w) {
  GdkFrameClock *clock = gtk_widget_get_frame_clock(window);
  if (!clock || profile_of(clock)) return NULL;
  frame_profile *fp = g_new0(frame_profile, 1);
  fp->collector = c;
  fp->window = w;
  fp->clock = g_object_ref(clock);
  g_object_set_data(G_OBJECT(clock), FRAME_PROFILE_KEY, fp);
  for (int ph = 0; ph < PH_COUNT; ph++) {
    fp->ends[ph] = (phase_end){fp, (phase_id)ph};
    fp->end_ids[ph] = g_signal_connect_after(clock, phase_signal[ph], G_CALLBACK(on_phase_ends), &fp->ends[ph]);
  }
  if (attached++ == 0) install_hooks();
  return fp;
}

void frame_profile_detach(frame_profile *fp) {
  if (!fp) return;
  end_input(fp);
  if (fp->phase_open) strobe_stage_end(&fp->phase);
  if (fp->pass_open) strobe_op_end(fp->pass, 0);
  for (int ph = 0; ph < PH_COUNT; ph++) g_signal_handler_disconnect(fp->clock, fp->end_ids[ph]);
  g_object_set_data(G_OBJECT(fp->clock), FRAME_PROFILE_KEY, NULL);
  g_object_unref(fp->clock);
  g_free(fp);
  if (--attached == 0) remove_hooks();
}
