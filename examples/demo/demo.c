/*
 * demo.c — strobe-demo: a data-grid screen rendered offscreen with cairo and
 * pango, driven by scripted input, instrumented like a real toolkit, and
 * observed by every part of Strobe at once: a profiling session (the JSON
 * report), a capture file, a spike-triggered flight recorder and, unless
 * --headless, the embedded server with the viewer and MCP.
 *
 * Windows: "main" (the grid), "w1" (a nested details window rendered inside
 * main's pass), "devtools" (excluded from sessions unless they opt in).
 * Operations: input dispatch (which may trigger a root rebuild), passes with
 * stages, present in a separate sender process (the pass is taken, handed
 * off as an operation token over a Unix socket and resumed there:
 * docs/sessions.md §Across processes; that process writes its own report,
 * sender-report.json, with the whole frames, and capture, sender.strobe;
 * its clock sampled first, as another host's would be, for strobe merge),
 * superseded frames kept as committed: false, application scopes on a worker thread,
 * and a deliberate slow frame every few seconds. The pass opens like a
 * signal-driven toolkit's (frame_clock.c): a stage begun in one callback and
 * ended in the next, and wheel input dispatched inside its flush-events
 * phase, ending implicitly when the phase moves on. One edit in three is
 * rejected by a checker that longjmps out of the input handler's nested
 * scopes to the event loop, which closes them with strobe_unwind_to: the
 * capture and `strobe report` count them as unwound.
 *
 * Run-time names: each edit is a stage named after the column it edits,
 * interned at run time (kept in the capture, withheld from the report).
 *
 * Sessions: one for every kind, one for frames only beside it (240 frames
 * instead of 240 mixed operations), a watchdog thread that reads the
 * frames-only session live and tells a frame in flight from a stall, and a
 * steady-state session reset after the warm-up (strobe_collector_reset).
 * Main's passes carry their transition as a population (none, key, scroll,
 * edit) and declare GPU timestamps unavailable (an offscreen cairo renderer
 * has none: null, not zero); the details window's passes between its
 * refreshes have nothing to do and are marked idle (never samples); the
 * memory gauge is sampled inside the pass it describes.
 *
 * Counters and gauges by kind: each render's draw calls (clears, quads,
 * text), its shape cache (the demo's glyph cache: hits, misses, evictions),
 * the input events by kind, and memory by kind (surfaces, PNG buffers, text
 * caches) sampled inside main's pass; Strobe's own footprint beside them.
 *
 * The GPU path (gpu.c, built with libstrobe_vulkan): each frame of the main
 * window uploads its cairo image and runs an upload, a filter and a
 * composite pass on the Vulkan device (lavapipe without a GPU), each a GPU
 * zone; the link thread that sends frames to the sender process polls the
 * fences without waiting. Without a
 * Vulkan device the demo says so once and its reports say the GPU data is
 * unavailable (null, never zero).
 *
 * An external producer (producer_feed.c, with the server): a Python process,
 * examples/demo/producer.py, times its own "audio callbacks" and posts them
 * to POST /api/producer/spans, so the capture gets a lane py/audio written
 * by another language (docs/server.md §External producers).
 *
 * With --otlp-endpoint (make demo starts examples/demo/otlp_receiver.py and
 * passes its URL) the server pushes every completed operation there over
 * OTLP/HTTP, each stage run a child span (docs/otel.md §Push from the server).
 *
 * Recording runs with a chosen overflow mode (--overflow, grow by default:
 * no event is lost while a thread's ring may still double) and a loss
 * callback that says so at run time; at the end it prints what recording
 * cost, as the capture's header and DRAIN blocks say (docs/recording.md).
 *
 * Deep capture (docs/recording.md §Deep capture): the main view's raster
 * step is a display list of draw calls (paint.c: clears, quads, glyph-mask
 * sprites) against a geometry buffer and its glyph masks; frame 12 answers
 * one deep-capture request with every call and those resources once each,
 * and attaches its screenshot (raw ARGB32 and PNG). `strobe-demo --replay`
 * redraws it in another process (replay.c).
 *
 * Usage: strobe-demo [--frames N] [--seconds S] [--serve] [--port P]
 *                    [--token-file F] [--headless] [--out DIR]
 *                    [--overflow drop|grow|wait] [--gpu-calibration auto|ext|submit-wait]
 *        strobe-demo --replay CAPTURE --frame N [--out PNG] [--calls]
 *        strobe-demo --bench-deep N [--out DIR]
 * --frames and --seconds bound the run with --serve too; --serve alone runs
 * until interrupted.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "frame_clock.h"
#include "grid.h"
#include "replay.h"
#include "loader.h"
#include "saver.h"
#include "sender.h"
#include "strobe/capture.h"
#include "strobe/deep.h"
#include "strobe/flight.h"
#include "strobe/record.h"
#include "strobe/sample.h"
#include "strobe/session.h"
#include "strobe/strobe.h"
#include "strobe/trace.h"
#include "strobe/tree.h"
#include "view.h"
#ifdef STROBE_DEMO_GPU
#include "gpu.h"
#endif
#ifdef STROBE_DEMO_SERVER
#include "strobe/server.h"
#include "producer_feed.h"
#endif

#define FRAME_BUDGET_NS 16666667ull /* pace to ~60 frames a second */
#define STALL_EVERY_NS 3000000000ull /* one deliberately slow frame every 3 s */
#define STALL_MS 250
#define TREE_FRAME 12    /* the frame before whose pass the demo requests its one UI-tree snapshot and deep capture */
#define WARMUP_FRAMES 10 /* the steady-state session is reset after these (first layouts, cold shape cache) */

typedef struct options {
  long frames;        /* 0: run for `seconds` */
  double seconds;
  int bounded;        /* --frames or --seconds given: the run (serving too) ends there */
  int serve, headless;
  int port;
  const char *token_file;
  const char *out;
  uint32_t overflow;  /* strobe_overflow */
  uint32_t gpu_calibration; /* strobe_vulkan_calibration: 0 auto, 1 calibrated timestamps, 2 submit-and-wait */
  const char *replay;       /* --replay CAPTURE: redraw a captured frame offline (replay.c) */
  long replay_frame;        /* --frame N, with --replay; -1 when not given */
  int replay_calls;         /* --calls: list every call with its status */
  long bench_deep;          /* --bench-deep N: frame time with and without a deep capture */
  const char *otlp_endpoint; /* --otlp-endpoint URL: the server pushes completed operations there */
} options;

static volatile sig_atomic_t g_interrupted;
static void on_signal(int sig) {
  (void)sig;
  g_interrupted = 1;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#ifdef STROBE_DEMO_GPU
/* The sender's hooks into the GPU path (sender.h). */
typedef struct gpu_hooks {
  gpu *g;
  const char *out;
  int kept; /* a composite is on disk (the link thread alone reads and writes it) */
} gpu_hooks;

static int hook_poll(void *ctx, int slot) { return gpu_poll(((gpu_hooks *)ctx)->g, slot); }

static void hook_release(void *ctx, int slot, uint64_t frame) {
  gpu_hooks *h = ctx;
  char path[1024];
  /* Keep the GPU's composite on disk beside last-frame.png: the first one read
   * back, then every 60th frame (a frame the GPU was behind on has none). */
  int keep = !h->kept || frame % 60 == 0;
  if (keep) snprintf(path, sizeof path, "%s/last-frame-gpu.png", h->out);
  gpu_release(h->g, slot, keep ? path : NULL);
  h->kept |= keep;
}
#endif

/* Run-time loss reports (at most one a second, on the drain thread). */
static void on_loss(const strobe_loss_report *r, void *user) {
  (void)user;
  fprintf(stderr, "strobe-demo: %llu events lost (%llu in all, overflow %s)\n", (unsigned long long)r->lost,
          (unsigned long long)r->lost_total, strobe_overflow_name(r->overflow));
}

/* What recording cost, as the capture says (docs/recording.md, Cost). */
static void print_cost(const char *path) {
  strobe_capture *cap;
  if (strobe_capture_open(path, &cap)) return;
  strobe_capture_record rec;
  while (strobe_capture_next(cap, &rec) > 0) {
  }
  const strobe_capture_header *h = strobe_capture_query_header(cap);
  strobe_capture_totals t = strobe_capture_query_totals(cap);
  strobe_event_stats st = strobe_query_event_stats();
  printf("recording cost: %.1f ns per event on recording threads (calibrated; %.1f ns per scope with its values); "
         "drain %.1f ns CPU per event over %llu events; overflow %s: %llu events lost, %u rings grown\n",
         h->event_cost_ns, h->overhead_per_scope_ns,
         t.drain_events ? (double)t.drain_cpu_ns / (double)t.drain_events : 0.0, (unsigned long long)t.drain_events,
         strobe_overflow_name(h->overflow), (unsigned long long)t.lost, st.rings_grown);
  strobe_capture_close(cap);
}

static int usage(const char *msg) {
  if (msg) fprintf(stderr, "strobe-demo: %s\n", msg);
  fprintf(stderr,
          "usage: strobe-demo [--frames N] [--seconds S] [--serve] [--port P] [--token-file F]\n"
          "                   [--headless] [--out DIR] [--overflow drop|grow|wait] [--otlp-endpoint URL]\n"
          "                   [--gpu-calibration auto|ext|submit-wait]\n"
          "       strobe-demo --replay CAPTURE --frame N [--out PNG] [--calls]\n"
          "       strobe-demo --bench-deep N [--out DIR]\n"
          "  --replay CAPTURE         redraw frame N of a capture from its deep capture, offline, into PNG\n"
          "                           (--out; default: no file), compared with its attached screenshot\n"
          "  --bench-deep N           N frames with and N without a deep capture: BENCH lines\n"
          "  --frames N, --seconds S  how long to run (default 10 s); honoured with --serve too:\n"
          "                           the application, and its server, stop there\n"
          "  --serve                  serve the viewer and MCP; without --frames or --seconds,\n"
          "                           until interrupted (Ctrl-C)\n"
          "  --otlp-endpoint URL      the server pushes each completed operation, its stage runs as child\n"
          "                           spans, to this OTLP/HTTP endpoint (docs/otel.md); make demo runs\n"
          "                           examples/demo/otlp_receiver.py there\n"
          "  --gpu-calibration M      how GPU timestamps are calibrated: auto (VK_EXT_calibrated_timestamps\n"
          "                           when the device has it), ext, or submit-wait (the fallback, forced)\n");
  return 2;
}

static int parse(int argc, char **argv, options *o) {
  *o = (options){0, 10.0, 0, 0, 0, 0, NULL, "out", STROBE_OVERFLOW_GROW, 0, NULL, -1, 0, 0, NULL};
  int out_given = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    char *end = NULL;
    if (!strcmp(a, "--serve")) o->serve = 1;
    else if (!strcmp(a, "--headless")) o->headless = 1;
    else if (!strcmp(a, "--frames") && v) { o->frames = strtol(v, &end, 10); i++; o->bounded = 1; if (*end || o->frames <= 0) return usage("--frames takes a positive number"); }
    else if (!strcmp(a, "--seconds") && v) { o->seconds = strtod(v, &end); i++; o->bounded = 1; if (*end || o->seconds <= 0) return usage("--seconds takes a positive number"); }
    else if (!strcmp(a, "--port") && v) { o->port = (int)strtol(v, &end, 10); i++; if (*end || o->port < 0 || o->port > 65535) return usage("--port takes 0..65535"); }
    else if (!strcmp(a, "--token-file") && v) { o->token_file = v; i++; }
    else if (!strcmp(a, "--otlp-endpoint") && v) { o->otlp_endpoint = v; i++; }
    else if (!strcmp(a, "--out") && v) { o->out = v; i++; out_given = 1; }
    else if (!strcmp(a, "--replay") && v) { o->replay = v; i++; }
    else if (!strcmp(a, "--frame") && v) { o->replay_frame = strtol(v, &end, 10); i++; if (*end || o->replay_frame < 0) return usage("--frame takes a frame id (0 or more)"); }
    else if (!strcmp(a, "--calls")) o->replay_calls = 1;
    else if (!strcmp(a, "--bench-deep") && v) { o->bench_deep = strtol(v, &end, 10); i++; if (*end || o->bench_deep <= 0) return usage("--bench-deep takes a positive number"); }
    else if (!strcmp(a, "--overflow") && v) {
      i++;
      uint32_t m = 0;
      while (strobe_overflow_name(m) && strcmp(strobe_overflow_name(m), v)) m++;
      if (!strobe_overflow_name(m)) return usage("--overflow takes drop, grow or wait");
      o->overflow = m;
    }
    else if (!strcmp(a, "--gpu-calibration") && v) {
      i++;
      static const char *const methods[] = {"auto", "ext", "submit-wait"};
      uint32_t m = 0;
      while (m < 3 && strcmp(methods[m], v)) m++;
      if (m == 3) return usage("--gpu-calibration takes auto, ext or submit-wait");
      o->gpu_calibration = m;
    }
    else if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(NULL); exit(0); }
    else return usage("unknown or incomplete option");
  }
  if (o->serve && o->headless) return usage("--serve needs the server: drop --headless");
  if (o->replay && o->replay_frame < 0) return usage("--replay needs --frame N");
  if (!o->replay && (o->replay_frame >= 0 || o->replay_calls)) return usage("--frame and --calls go with --replay");
  if (o->replay && !out_given) o->out = NULL; /* no PNG unless asked */
  return 0;
}

/* >>input errors: an edit's text goes through a checker that raises errors
 * with longjmp, as parsers and interpreters written in C do; the event loop
 * catches them and closes what the longjmp skipped with strobe_unwind_to
 * (docs/recording.md, Unwinding). One edit in three is rejected. */
static jmp_buf g_input_error;

__attribute__((noinline)) static void check_cell_text(uint64_t seed) {
  STROBE_SCOPE("check_cell_text");
  if ((seed / 12) % 3 == 1) longjmp(g_input_error, 1); /* rejected: out of three nested scopes */
}

__attribute__((noinline)) static void parse_edit(input_event e) {
  STROBE_SCOPE("parse_edit");
  check_cell_text((uint64_t)e.amount);
}

/* One input event as a toolkit dispatches it: an edit's text is checked
 * first (a rejected edit never reaches the model: it longjmps back to the
 * event loop), then an `input` operation, and a root rebuild nested inside
 * it when the model changed. */
static void dispatch_input(strobe_collector *c, strobe_window w, grid *g, input_event e) {
  STROBE_SCOPE("handle_input");
  if (e.kind == INPUT_EDIT) parse_edit(e);
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_INPUT, NULL);
  int changed;
  {
    STROBE_STAGE("input_dispatch", NULL);
    if (e.kind == INPUT_EDIT) {
      /* An edit is named after the column it edits ("edit_amount"): a name
       * made at run time from the model's column titles, so its site comes
       * from strobe_site_intern (found again on every later edit of that
       * column). The capture keeps the name; the session report, which the
       * demo did not opt in to share it with, says interned_<site id>
       * (docs/recording.md §Run-time names). */
      char name[32];
      int len = snprintf(name, sizeof name, "edit_%s", grid_headers[g->selected_col]);
      strobe_stage edit = strobe_stage_begin(strobe_site_intern(name, (size_t)len, NULL, STROBE_SITE_STAGE));
      changed = grid_apply(g, e);
      /* The edited cell's size, on a value site of the same run-time name with its unit
       * (strobe_site_intern_unit): the capture prints it as bytes. */
      STROBE_VALUE_SITE(strobe_site_intern_unit(name, (size_t)len, NULL, STROBE_SITE_VALUE, STROBE_UNIT_BYTES),
                        strlen(g->cells[g->selected_row][g->selected_col]));
      strobe_stage_end(&edit);
    } else {
      changed = grid_apply(g, e);
    }
  }
  if (changed && e.kind == INPUT_EDIT) {
    strobe_op rebuild = strobe_op_begin(c, w, STROBE_OP_REBUILD, NULL);
    {
      STROBE_STAGE("rebuild_tree", NULL);
      /* A retained-tree rebuild: re-derive every row's presentation. */
      volatile unsigned checksum = 0;
      for (int r = 0; r < GRID_ROWS; r++)
        for (int col = 0; col < GRID_COLS; col++) checksum += (unsigned)g->cells[r][col][0];
      (void)checksum;
    }
    strobe_op_end(rebuild, 1);
  }
  strobe_op_end(op, 1);
}

/* The event loop's error trap around one input event: 1 when the handler
 * raised an error (longjmp), 0 when it was dispatched. */
__attribute__((noinline)) static int dispatch_or_reject(strobe_collector *c, strobe_window w, grid *g, input_event e) {
  int depth = strobe_depth(); /* before setjmp: the scopes that stay open when an error lands */
  if (setjmp(g_input_error)) {
    strobe_unwind_to(depth); /* the handler's scopes the longjmp skipped: closed as unwound, now */
    return 1;
  }
  dispatch_input(c, w, g, e);
  return 0;
}

/* >>watchdog: reads a session live, as an agent would over MCP, and counts
 * what it saw: a frame in flight (ordinary) or a stalled one. */
typedef struct watchdog {
  strobe_collector *collector;
  char session[STROBE_SESSION_ID_MAX];
  const char *out;
  int stop; /* atomic */
  pthread_t thread;
  uint64_t reads, in_flight, stalled;
  int saved;
} watchdog;

static int write_file(const char *path, const char *data, size_t len);

static void *watchdog_main(void *arg) {
  watchdog *wd = arg;
  strobe_thread_set_name("watchdog");
  while (!__atomic_load_n(&wd->stop, __ATOMIC_ACQUIRE)) {
    usleep(40000);
    strobe_report *r = NULL;
    if (strobe_session_read(wd->collector, wd->session, 0, &r)) continue;
    strobe_report_counts k = strobe_report_query_counts(r);
    wd->reads++;
    if (k.unfinished_stalled) wd->stalled++;
    else if (k.unfinished) wd->in_flight++;
    if (k.unfinished_stalled && !wd->saved) { /* keep the first stalled read for the reader */
      char path[1024], *json = NULL;
      size_t len = 0;
      snprintf(path, sizeof path, "%s/demo-stall-read.json", wd->out);
      if (!strobe_report_json(r, &json, &len) && !write_file(path, json, len)) wd->saved = 1;
      free(json);
    }
    strobe_report_free(r);
  }
  return NULL;
}

static void print_summary(const strobe_report *r) {
  strobe_stage_summary s[64];
  int n = strobe_report_query_stages(r, s, 64);
  strobe_report_counts k = strobe_report_query_counts(r);
  printf("\nsession %s: %llu operations completed, %llu returned, %llu dropped, %llu crossed the start\n",
         strobe_report_query_id(r), (unsigned long long)k.completed, (unsigned long long)k.returned,
         (unsigned long long)k.dropped, (unsigned long long)k.boundary_excluded);
  printf("%-24s %-16s %6s %10s %10s %10s %10s\n", "stage", "nested in", "n", "p50", "p95", "p99", "max");
  for (int i = 0; i < n && i < 64; i++) {
    printf("%-24s %-16s %6llu", s[i].name, s[i].nested_in ? s[i].nested_in : "-", (unsigned long long)s[i].n);
    const double ms[4] = {s[i].p50_ms, s[i].p95_ms, s[i].p99_ms, s[i].max_ms};
    for (int q = 0; q < 4; q++) {
      char t[32];
      strobe_unit_format(t, sizeof t, ms[q], STROBE_UNIT_MS); /* "712 ns", "14.2 µs", "3.10 ms" */
      printf(" %*s", 10 + (strstr(t, "µ") ? 1 : 0), t); /* µ is two bytes, one column */
    }
    printf("\n");
  }
  printf("(nested stages are already inside their parent: do not sum)\n");
}

/* The steady-state session: reset once the warm-up was over (docs/sessions.md
 * §Reset), split by transition (§Populations), idle passes apart (§Idle passes). */
static void print_steady(const strobe_report *r) {
  strobe_report_counts k = strobe_report_query_counts(r);
  printf("\nsession %s (steady state, reset after the warm-up): %llu operations completed, %llu idle passes "
         "counted apart; percentiles per transition are in its population_summary\n",
         strobe_report_query_id(r), (unsigned long long)k.completed, (unsigned long long)k.idle);
}

/* The frames-only session: what it kept, what it counted, both frame rates. */
static void print_frames_only(const strobe_report *r) {
  strobe_report_counts k = strobe_report_query_counts(r);
  strobe_frame_rate fr;
  printf("\nsession %s (frames only): %llu passes completed, %llu returned; %llu operations of other kinds "
         "counted, not kept\n",
         strobe_report_query_id(r), (unsigned long long)k.completed, (unsigned long long)k.returned,
         (unsigned long long)k.kind_excluded);
  char t[32];
  /* Per window, never summed (docs/sessions.md §Frame rate): first to last over
   * every main pass the session counted, steady from the returned samples. */
  if (strobe_report_query_frame_rate(r, "main", &fr) == 0 && fr.valid)
    printf("main window: %.1f passes/s over the first-to-last span of its %llu passes, %.1f steady (median of %llu "
           "intervals in the returned samples, %s)\n",
           fr.passes_per_second, (unsigned long long)fr.passes, fr.steady_passes_per_second,
           (unsigned long long)fr.intervals, strobe_unit_format(t, sizeof t, fr.median_interval_ms, STROBE_UNIT_MS));
}

static int write_file(const char *path, const char *data, size_t len) {
  FILE *fp = fopen(path, "w");
  if (!fp) return -1;
  size_t w = fwrite(data, 1, len, fp);
  return fclose(fp) == 0 && w == len ? 0 : -1;
}

/* Ends a session, writes its JSON report to DIR/NAME and prints its summary. Returns 0 or 1. */
static int end_session(strobe_collector *c, const char *id, const char *dir, const char *name,
                       void (*print)(const strobe_report *)) {
  strobe_report *report = NULL;
  int rc = strobe_session_stop(c, id, 0, &report);
  if (rc) {
    fprintf(stderr, "strobe-demo: ending session %s: %s\n", id, strobe_strerror(rc));
    return 1;
  }
  char path[1024], *json = NULL;
  size_t len = 0;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int status = 0;
  if (strobe_report_json(report, &json, &len) || write_file(path, json, len)) {
    fprintf(stderr, "strobe-demo: cannot write %s\n", path);
    status = 1;
  }
  free(json);
  /* Run info that is free text (the command line) is not in the JSON: it is
   * written beside it (docs/sessions.md §The label rule). */
  snprintf(path, sizeof path, "%s/%.*s-run.txt", dir, (int)(strlen(name) - strlen(".json")), name);
  FILE *run = fopen(path, "w");
  const char *key, *value;
  for (uint32_t i = 0; run && strobe_report_query_run_info(report, i, &key, &value) == 0; i++)
    fprintf(run, "%s=%s\n", key, value);
  if (!run || fclose(run) != 0) {
    fprintf(stderr, "strobe-demo: cannot write %s\n", path);
    status = 1;
  }
  print(report);
  strobe_report_free(report);
  return status;
}

/* >>run: what one run holds, from the collector to the views; main's steps
 * each take it. There is one, static (the sender, the watchdog and the GPU
 * hooks keep pointers into it while their threads run). */
typedef struct demo {
  options o;
  char spikes[1024];  /* DIR/spikes: the flight recorder's dumps */
  char capture[1024]; /* DIR/demo.strobe */
  strobe_collector *c;
  strobe_window w_main, w_details, w_devtools;
  char session[STROBE_SESSION_ID_MAX]; /* every kind */
  char steady[STROBE_SESSION_ID_MAX];  /* reset after the warm-up */
  watchdog wd;                         /* reads the frames-only session beside them */
  strobe_recorder *rec;
  strobe_flight_recorder *flight;
  strobe_flight_recorder_stats flight_stats; /* read before it stops */
  sender snd;
  saver sv;
  loader ld; /* the glyph loader: a lock the UI thread sometimes waits on */
  grid g;
  view main_view, details_view, devtools_view;
  void *gpu_ctx; /* gpu *, when the GPU path runs */
  const sender_gpu *gpu_hooks_p;
#ifdef STROBE_DEMO_GPU
  gpu_hooks hooks;
  sender_gpu sender_hooks;
#endif
#ifdef STROBE_DEMO_SERVER
  producer_feed feed;
  char feed_why[512];
  int feeding;
  strobe_server *server;
#endif
  uint64_t frames;   /* rendered so far */
  uint64_t rejected; /* edits rejected by a longjmp */
} demo;

/* Creates DIR unless it exists. Returns 0, or 1 having said why. */
static int make_dir(const char *dir) {
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "strobe-demo: cannot create %s: %s\n", dir, strerror(errno));
    return 1;
  }
  return 0;
}

/* The output directories, the library's setup (before the first event: the
 * overflow mode, and losses reported to us) and the collector with its
 * three windows and run info. Returns 0, or 1 having said why. */
static int open_collector(demo *d, int argc, char **argv) {
  snprintf(d->spikes, sizeof d->spikes, "%s/spikes", d->o.out);
  if (make_dir(d->o.out) || make_dir(d->spikes)) return 1;
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  int rc = strobe_setup(&(strobe_desc){.overflow = d->o.overflow, .on_loss = on_loss, .on_loss_user = NULL});
  if (rc) {
    fprintf(stderr, "strobe-demo: strobe_setup: %s\n", strobe_strerror(rc));
    return 1;
  }
  strobe_thread_set_name("ui");
  if (strobe_collector_create(&d->c) || strobe_window_register(d->c, "main", 0, &d->w_main) ||
      strobe_window_register(d->c, "w1", 0, &d->w_details) ||
      strobe_window_register(d->c, "devtools", STROBE_WINDOW_DEVTOOLS, &d->w_devtools)) {
    fprintf(stderr, "strobe-demo: cannot set up the collector\n");
    return 1;
  }
  strobe_collector_set_run_info(d->c, "fixture", "datagrid-200x8-scripted");
  strobe_collector_set_process(d->c, "screen"); /* frames are handed from "screen" to "sender" */
  /* Free text: kept beside the report, never in it (end_session). */
  char command[256] = "";
  for (int i = 0; i < argc; i++)
    snprintf(command + strlen(command), sizeof command - strlen(command), "%s%s", i ? " " : "", argv[i]);
  strobe_collector_set_run_info(d->c, "command_line", command);
  return 0;
}

/* Everything that observes: a session, the frames-only session the watchdog
 * reads, a capture file, a flight recorder; then the sender process (and
 * the external producer), and the steady-state session. Returns 0, or 1. */
static int start_observers(demo *d) {
  int rc = strobe_session_start(d->c, &(strobe_session_desc){.max_samples = STROBE_MAX_SAMPLES}, d->session);
  d->wd.collector = d->c;
  d->wd.out = d->o.out;
  if (!rc)
    rc = strobe_session_start(
        d->c, &(strobe_session_desc){.max_samples = STROBE_MAX_SAMPLES, .kinds = STROBE_KIND_BIT(STROBE_OP_PASS)},
        d->wd.session);
  snprintf(d->capture, sizeof d->capture, "%s/demo.strobe", d->o.out);
  if (!rc) rc = strobe_record_start(&(strobe_record_desc){.path = d->capture}, &d->rec);
  if (!rc)
    rc = strobe_flight_recorder_start(&(strobe_flight_recorder_desc){.max_mib = 32, .spike_threshold_ms = 150,
                                                                     .spike_dir = d->spikes},
                                      &d->flight);
  /* The sender process (sender.h) starts before the sampler: a process
   * started after it would be sampled into this process's buffers
   * (perf_event_open's inherit follows children too). */
  if (!rc && sender_spawn(&d->snd, d->o.out)) return 1;
  /* Its clock, sampled as another host's would be (docs/sessions.md §Across hosts): kept in this capture. */
  if (!rc && !d->snd.clock_rc)
    printf("clock:        the sender process's clock is %+.3f ms +- %.3f ms from this one (best of %u round trips "
           "over its socket; one boot, so 0 within the bound): kept in this capture, strobe merge shows it\n",
           (double)d->snd.clock.offset_ns / 1e6, (double)d->snd.clock.error_ns / 1e6, d->snd.clock.rounds);
  else if (!rc)
    printf("clock:        no clock-offset sample of the sender process: %s\n", strobe_strerror(d->snd.clock_rc));
#ifdef STROBE_DEMO_SERVER
  /* So is the external producer (producer_feed.h), told where the server is once it runs. */
  d->feed = (producer_feed){0, -1};
  d->feeding = !d->o.headless &&
               producer_feed_spawn(&d->feed, STROBE_DEMO_PRODUCER_SCRIPT, d->feed_why, sizeof d->feed_why) == 0;
#endif
  /* A session that keeps the steady state only: reset once the warm-up (first
   * layouts, cold shape cache) is over. */
  if (!rc) rc = strobe_session_start(d->c, &(strobe_session_desc){.max_samples = STROBE_MAX_SAMPLES}, d->steady);
  if (rc) {
    fprintf(stderr, "strobe-demo: %s\n", strobe_strerror(rc));
    return 1;
  }
  return 0;
}

#ifdef STROBE_DEMO_SERVER
/* The server's token, from its token file or STROBE_TOKEN ("" when neither). */
static void read_server_token(strobe_server *server, char *token, size_t cap) {
  const char *tf = strobe_server_query_token_file(server);
  const char *env = getenv("STROBE_TOKEN");
  FILE *fp = tf ? fopen(tf, "r") : NULL;
  token[0] = 0;
  if (fp) {
    if (!fgets(token, (int)cap, fp)) token[0] = 0;
    token[strcspn(token, "\r\n")] = 0;
    fclose(fp);
  } else if (env) {
    snprintf(token, cap, "%s", env);
  }
}

/* The embedded server (unless --headless): prints where the viewer, MCP and
 * the OTLP push are, and connects the producer. Returns 0, or 1. */
static int start_server(demo *d) {
  if (d->o.headless) return 0;
  int rc = strobe_server_start(&(strobe_server_desc){.port = (uint16_t)d->o.port, .token_file = d->o.token_file,
                                                     .collector = d->c, .otlp_endpoint = d->o.otlp_endpoint,
                                                     .otlp_service = "strobe_demo", .otlp_interval_ms = 500},
                               &d->server);
  if (rc) {
    fprintf(stderr, "strobe-demo: cannot start the server: %s\n", strobe_strerror(rc));
    return 1;
  }
  /* The viewer URL carries the token in its fragment, which browsers never send to a server. */
  const char *tf = strobe_server_query_token_file(d->server);
  char token[STROBE_SERVER_TOKEN_MAX + 1];
  read_server_token(d->server, token, sizeof token);
  uint16_t port = strobe_server_query_port(d->server);
  printf("viewer:       http://127.0.0.1:%u/#token=%s\n", port, token);
  printf("MCP endpoint: http://127.0.0.1:%u/mcp  (Authorization: Bearer <the token in %s>)\n", port,
         tf ? tf : "$STROBE_TOKEN");
  if (d->o.otlp_endpoint)
    printf("OTLP push:    completed operations, each stage run a child span, to %s (docs/otel.md)\n",
           d->o.otlp_endpoint);
  /* Another process, in Python, feeds the capture a lane of its own over HTTP. */
  if (d->feeding) {
    producer_feed_connect(&d->feed, port, token);
    printf("producer:     examples/demo/producer.py (python3) feeds the lane py/audio over POST /api/producer/spans\n");
  } else {
    printf("producer:     no producer lane: %s\n", d->feed_why);
  }
  fflush(stdout);
  return 0;
}
#endif

/* The GPU path: a Vulkan device, or one line saying why there is none. */
static void open_gpu(demo *d) {
#ifdef STROBE_DEMO_GPU
  gpu *g_gpu = NULL;
  char why[256];
  if (gpu_open(&g_gpu, d->main_view.width, d->main_view.height, d->o.gpu_calibration, why, sizeof why) == 0) {
    printf("gpu:          %s (Vulkan; calibration by %s)\n", gpu_device_name(g_gpu), gpu_calibration_name(g_gpu));
    d->hooks = (gpu_hooks){.g = g_gpu, .out = d->o.out};
    d->sender_hooks = (sender_gpu){&d->hooks, hook_poll, hook_release};
    d->gpu_hooks_p = &d->sender_hooks;
    d->gpu_ctx = g_gpu;
    gpu_calibrate(g_gpu);
  } else {
    printf("gpu:          no Vulkan device (%s): no GPU passes; reports say GPU data unavailable (null)\n", why);
  }
#else
  (void)d;
  printf("gpu:          built without libstrobe_vulkan: no GPU passes; reports say GPU data unavailable (null)\n");
#endif
}

/* The sampler (docs/exploration.md §Sampling): every thread's call stacks
 * and context switches go into the capture beside the scopes, or one line
 * says why the kernel refused (nothing else changes then). It starts once
 * the Vulkan loader has loaded its driver and layers: its symbolizer maps
 * and unmaps ELF files on the drain thread, and ThreadSanitizer (which
 * cannot see the dynamic loader's own mappings) took a library loaded
 * where such a file had been mapped for a race with the symbolizer.
 * Threads started before it are sampled too. */
static void start_sampler(void) {
  int sampling = strobe_sampler_start(NULL);
  strobe_sampler_status st = strobe_sampler_query_status();
  if (sampling)
    printf("sampler: not started: %s (%s; perf_event_paranoid %d)\n", st.reason, strobe_strerror(sampling),
           st.paranoid);
  else
    printf("sampler: on at %u Hz, context switches %s, %u CPU buffers\n", st.rate_hz, st.switches ? "on" : "off",
           st.cpus);
  fflush(stdout);
}

/* The grid, the three views (their cairo surfaces), the GPU path and the
 * sampler, then the threads: the sender's link, the saver, the glyph
 * loader, the watchdog.
 * Returns 0, or 1 having said why. */
static int start_rendering(demo *d) {
  STROBE_MESSAGE("rendering started"); /* a static log line (docs/memory.md §Messages) */
  grid_init(&d->g, 30);
  if (view_init(&d->main_view, d->c, d->w_main, 960, 682) ||
      view_init(&d->details_view, d->c, d->w_details, 320, 240) ||
      view_init(&d->devtools_view, d->c, d->w_devtools, 320, 160)) {
    fprintf(stderr, "strobe-demo: cannot create the cairo surfaces\n");
    return 1;
  }
  d->main_view.deep = 1; /* the grid's renderer answers the deep-capture request (paint.c) */
  open_gpu(d);
  start_sampler();
  if (sender_start(&d->snd, d->gpu_hooks_p)) return 1;
  saver_start(&d->sv, d->c, d->o.out);
  if (loader_start(&d->ld)) {
    fprintf(stderr, "strobe-demo: the glyph loader did not start\n");
    return 1;
  }
  pthread_create(&d->wd.thread, NULL, watchdog_main, &d->wd);
  return 0;
}

/* >>frame: one turn of the loop, from the scripted input to the pacing. */

/* Input volume by kind (docs/recording.md §Counters and gauges by kind): one site per kind. */
static void count_input(input_event e) {
  if (e.kind == INPUT_KEY_DOWN || e.kind == INPUT_KEY_RIGHT)
    STROBE_COUNTER_ADD_KIND_UNIT("input_events", "key", 1, STROBE_UNIT_COUNT);
  else if (e.kind == INPUT_SCROLL)
    STROBE_COUNTER_ADD_KIND_UNIT("input_events", "scroll", 1, STROBE_UNIT_COUNT);
  else if (e.kind == INPUT_EDIT)
    STROBE_COUNTER_ADD_KIND_UNIT("input_events", "edit", 1, STROBE_UNIT_COUNT);
}

/* What one frame number asks for before its pass: the UI-tree snapshot and
 * deep capture at TREE_FRAME, the steady session's reset after the warm-up. */
static void request_for_frame(demo *d, uint64_t frame) {
  if (frame == TREE_FRAME) { /* one UI-tree snapshot, of the main window's next layout (strobe/tree.h) */
    int trc = strobe_tree_request();
    if (trc) fprintf(stderr, "strobe-demo: strobe_tree_request: %s\n", strobe_strerror(trc));
    trc = strobe_deep_request(); /* and one deep capture of the same frame, with its screenshot (strobe/deep.h) */
    if (trc) fprintf(stderr, "strobe-demo: strobe_deep_request: %s\n", strobe_strerror(trc));
  }
  if (frame == WARMUP_FRAMES) { /* the warm-up is over: the steady session starts over, the others keep everything */
    if (strobe_collector_reset(d->c, d->steady, 0) != 1) fprintf(stderr, "strobe-demo: cannot reset %s\n", d->steady);
  }
}

/* The GPU half of main's pass: upload, record the passes, submit, and the
 * GPU memory gauges. Returns the frame's GPU slot, or -1 when it has none. */
static int submit_gpu_frame(demo *d, uint64_t frame) {
  int gpu_slot = -1;
#ifdef STROBE_DEMO_GPU
  if (d->gpu_ctx) {
    STROBE_STAGE("gpu_submit", NULL); /* upload, record the passes, submit: the GPU runs them after */
    gpu_slot = gpu_render(d->gpu_ctx, cairo_image_surface_get_data(d->main_view.surface),
                          cairo_image_surface_get_stride(d->main_view.surface), frame);
    /* GPU memory by kind, from the path's own allocations, sampled in the frame (docs/recording.md). */
    gpu_memory gm = gpu_query_memory(d->gpu_ctx);
    STROBE_GPU_MEMORY_SET("buffers", gm.buffers);
    STROBE_GPU_MEMORY_SET("textures", gm.textures);
    strobe_collector_gauge_set_kind(d->c, STROBE_GPU_MEMORY, "buffers", gm.buffers, STROBE_UNIT_BYTES);
    strobe_collector_gauge_set_kind(d->c, STROBE_GPU_MEMORY, "textures", gm.textures, STROBE_UNIT_BYTES);
  }
#else
  (void)d;
  (void)frame;
#endif
  return gpu_slot;
}

/* Memory, sampled inside main's pass (at most once a second in sessions): a
 * memory jump is in the frame that made it. */
static void sample_memory(demo *d) {
  view *v[3] = {&d->main_view, &d->details_view, &d->devtools_view};
  strobe_collector_gauge_set_unit(d->c, "surface_and_text_cache_bytes", view_memory_bytes(v[0]), STROBE_UNIT_BYTES);
  /* The same memory by kind, over the three views, in captures and (once a second) in the
   * session's samples: sampled in the frame that holds it. */
  double surfaces = view_surface_bytes(v[0]) + view_surface_bytes(v[1]) + view_surface_bytes(v[2]);
  double text_caches = view_text_cache_bytes(v[0]) + view_text_cache_bytes(v[1]) + view_text_cache_bytes(v[2]);
  double png_buffers = view_png_bytes(v[0]) + view_png_bytes(v[1]) + view_png_bytes(v[2]);
  strobe_collector_gauge_set_kind(d->c, "memory", "surfaces", surfaces, STROBE_UNIT_BYTES);
  strobe_collector_gauge_set_kind(d->c, "memory", "text_caches", text_caches, STROBE_UNIT_BYTES);
  STROBE_GAUGE_SET_KIND_UNIT("memory", "surfaces", surfaces, STROBE_UNIT_BYTES);
  STROBE_GAUGE_SET_KIND_UNIT("memory", "png_buffers", png_buffers, STROBE_UNIT_BYTES);
  STROBE_GAUGE_SET_KIND_UNIT("memory", "text_caches", text_caches, STROBE_UNIT_BYTES);
}

/* The nested details window renders inside main's pass, every other frame;
 * its frame clock ticks on the others too, with nothing to do: idle passes,
 * never samples. It renders on the CPU alone: its passes have no GPU
 * timestamps (null, not zero). */
static void render_details(demo *d, uint64_t frame) {
  strobe_op inner = strobe_op_begin(d->c, d->w_details, STROBE_OP_PASS, NULL);
  if (frame % 2 == 0) {
    strobe_op_mark_unavailable(STROBE_COVERAGE_STAGE, "gpu_timestamps");
    grid details = d->g;
    details.scroll_row = d->g.selected_row;
    details.visible_rows = 8;
    view_render(&d->details_view, &details, 0, frame);
  } else {
    strobe_op_mark_idle();
  }
  strobe_op_end(inner, 1);
}

/* Main's pass. One instrumentation per frame: this operation (with the
 * application's frame number as its frame id) and its stages feed the
 * session, the capture, the flight recorder's spike trigger, the viewer and
 * `strobe report` alike: no frame mark, no extra scope. It ends in the
 * sender process, which it is handed to. */
static void render_main_pass(demo *d, frame_clock *fc, uint64_t frame, input_event e, input_event pointer,
                             int stall) {
  strobe_op pass = strobe_op_begin_frame(d->c, d->w_main, frame, NULL); /* gpu.h's frames share the id (from 1: frame 0 has no GPU work) */
  frame_clock_flush_events(fc, &d->g, pointer);
  frame_clock_before_paint(fc); /* the pointer's input operation ends here: the pass is current again */
  /* Steady re-renders and frames carrying a transition answer different
   * questions: their percentiles are split, each with its n. */
  strobe_op_set_population(e.kind == INPUT_NONE     ? "none"
                           : e.kind == INPUT_SCROLL ? "scroll"
                           : e.kind == INPUT_EDIT   ? "edit"
                                                    : "key");
  loader_lookup(&d->ld); /* the glyph atlas, under its lock: now and then the loader holds it */
  view_render(&d->main_view, &d->g, stall, frame);
  int gpu_slot = submit_gpu_frame(d, frame);
  /* A pass with GPU work has its GPU frame (same id) in the session report's `gpu` key
   * (docs/gpu.md); one without (no device, frame 0, or the GPU behind) says its GPU
   * timestamps are unavailable: null, not zero. */
  if (gpu_slot < 0) strobe_op_mark_unavailable(STROBE_COVERAGE_STAGE, "gpu_timestamps");
  sample_memory(d);
  render_details(d, frame);
  sender_submit(&d->snd, d->main_view.png, d->main_view.png_len, frame, gpu_slot); /* the pass moves to the sender */
  (void)pass;
}

/* After main's pass: the devtools window, a background save, the GPU's
 * calibration, and the pass's memory level in captures. */
static void after_pass(demo *d, uint64_t frame) {
  if (frame % 8 == 0) {
    strobe_op dt = strobe_op_begin(d->c, d->w_devtools, STROBE_OP_PASS, NULL);
    view_render(&d->devtools_view, &d->g, 0, frame);
    strobe_op_end(dt, 1);
  }
  if (frame % 30 == 10) saver_request(&d->sv, &d->g);
#ifdef STROBE_DEMO_GPU
  if (d->gpu_ctx && frame % 10 == 9) gpu_calibrate(d->gpu_ctx); /* six pairs a second: the fit follows drift */
#endif
  /* The pass's memory level in captures too, with its unit: reports and the viewer print it as MiB. */
  STROBE_GAUGE_SET_UNIT("surface_and_text_cache", view_memory_bytes(&d->main_view), STROBE_UNIT_BYTES);
}

/* The frame loop: until interrupted, or --frames/--seconds (--serve alone
 * keeps the application alive, and rendering, until interrupted), paced to
 * FRAME_BUDGET_NS with one deliberately slow frame every STALL_EVERY_NS (or
 * every 90 frames with --frames). */
static void run_frames(demo *d) {
  frame_clock fc = {d->c, d->w_main, {0, 0, 0, NULL}};
  uint64_t start = now_ns(), next_stall = start + STALL_EVERY_NS / 2;
  for (d->frames = 0;; d->frames++) {
    uint64_t frame = d->frames, t = now_ns();
    if (g_interrupted) break;
    if ((!d->o.serve || d->o.bounded) &&
        (d->o.frames ? (long)frame >= d->o.frames : (double)(t - start) / 1e9 >= d->o.seconds))
      break;
    input_event e = grid_script(frame);
    count_input(e);
    /* Keys and edits are dispatched between frames; the wheel is pointer
     * input, delivered inside the pass's flush-events phase. */
    input_event pointer = {INPUT_NONE, 0};
    if (e.kind == INPUT_SCROLL)
      pointer = e;
    else if (e.kind != INPUT_NONE)
      d->rejected += (uint64_t)dispatch_or_reject(d->c, d->w_main, &d->g, e);
    request_for_frame(d, frame);
    int stall = 0;
    if (d->o.frames ? frame % 90 == 45 : t >= next_stall) {
      stall = STALL_MS;
      next_stall = t + STALL_EVERY_NS;
    }
    render_main_pass(d, &fc, frame, e, pointer, stall);
    after_pass(d, frame);
    uint64_t spent = now_ns() - t;
    STROBE_GAUGE_SET_UNIT("frame_budget_used", 100.0 * (double)spent / (double)FRAME_BUDGET_NS, STROBE_UNIT_PERCENT);
    if (spent < FRAME_BUDGET_NS) usleep((useconds_t)((FRAME_BUDGET_NS - spent) / 1000));
  }
}

/* >>end: stop what observes, write the reports, print what the run did. */

/* Stops the threads, ends the three sessions (their reports written and
 * summarised), then the producer, the flight recorder, the capture, the
 * sampler and the server. Returns 0, or 1 when something was not written. */
static int stop_observers(demo *d) {
  sender_stop(&d->snd); /* after every GPU frame's fence was seen */
  saver_stop(&d->sv);
  loader_stop(&d->ld);
  __atomic_store_n(&d->wd.stop, 1, __ATOMIC_RELEASE);
  pthread_join(d->wd.thread, NULL);
  /* How far the run went, in the reports' run info: make demo replays frame
   * TREE_FRAME's deep capture only when the run reached it. */
  char frames_text[24];
  snprintf(frames_text, sizeof frames_text, "%llu", (unsigned long long)d->frames);
  strobe_collector_set_run_info(d->c, "frames", frames_text);
  int status = end_session(d->c, d->session, d->o.out, "demo-report.json", print_summary);
  status |= end_session(d->c, d->wd.session, d->o.out, "demo-frames-report.json", print_frames_only);
  status |= end_session(d->c, d->steady, d->o.out, "demo-steady-report.json", print_steady);
  printf("watchdog: %llu live reads of %s: %llu caught a frame in flight, %llu a stalled one%s\n",
         (unsigned long long)d->wd.reads, d->wd.session, (unsigned long long)d->wd.in_flight,
         (unsigned long long)d->wd.stalled, d->wd.saved ? " (the first saved as demo-stall-read.json)" : "");
#ifdef STROBE_DEMO_SERVER
  /* A producer slower to start than the run is long (python3 on a loaded
   * machine) gets up to 10 s more for its first batch: stopped before that,
   * it would end without sending. */
  for (int i = 0; d->feeding && d->server && i < 200 && !strobe_server_query_stats(d->server).producer_batches; i++)
    usleep(50000);
  producer_feed_stop(&d->feed); /* its last batch, while the capture still records */
#endif
  d->flight_stats = strobe_flight_recorder_query_stats(d->flight);
  strobe_flight_recorder_stop(d->flight);
  int rc = strobe_record_stop(d->rec);
  if (strobe_sampler_query_status().running) strobe_sampler_stop();
  if (rc) {
    fprintf(stderr, "strobe-demo: writing the capture: %s\n", strobe_strerror(rc));
    status = 1;
  }
#ifdef STROBE_DEMO_SERVER
  if (d->server) {
    strobe_server_stats ss = strobe_server_query_stats(d->server);
    if (ss.producer_batches || ss.producer_refused)
      printf("producer: %llu spans in %llu batches over HTTP on lane py/audio, %llu batches refused "
             "(strobe report out/demo.strobe lists the lane)\n",
             (unsigned long long)ss.producer_spans, (unsigned long long)ss.producer_batches,
             (unsigned long long)ss.producer_refused);
  }
  strobe_server_stop(d->server);
#endif
  return status;
}

/* The UI-tree snapshot and the deep capture frame TREE_FRAME took, or why none. */
static void print_tree_and_deep(const demo *d) {
  strobe_tree_status ts = strobe_tree_query_status();
  strobe_deep_status ds = strobe_deep_query_status();
  if (d->frames <= TREE_FRAME) { /* a short run (--seconds, --frames) never reached the frame that takes them */
    printf("ui tree and deep capture: none taken: the run ended after %llu frame%s, before frame %d, the one the "
           "demo snapshots and captures deep (a run of %d frames or more reaches it)\n",
           (unsigned long long)d->frames, d->frames == 1 ? "" : "s", TREE_FRAME, TREE_FRAME + 1);
    return;
  }
  printf("ui tree: %llu snapshot(s) written to the capture, the last %u nodes (%llu dropped), %llu bytes "
         "(strobe tree %s/demo.strobe)\n",
         (unsigned long long)ts.written, ts.last_nodes, (unsigned long long)ts.last_nodes_dropped,
         (unsigned long long)ts.last_bytes, d->o.out);
  printf("deep capture: %llu written, frame %llu: %u draw calls (%llu dropped), %u resources, %llu content bytes; "
         "%llu attachments (strobe calls %s/demo.strobe --frame %llu; strobe-demo --replay %s/demo.strobe --frame %llu)\n",
         (unsigned long long)ds.written, (unsigned long long)ds.last_frame, ds.last_calls,
         (unsigned long long)ds.last_calls_dropped, ds.last_resources, (unsigned long long)ds.last_bytes,
         (unsigned long long)ds.attachments, d->o.out, (unsigned long long)ds.last_frame, d->o.out,
         (unsigned long long)ds.last_frame);
}

/* What the GPU path did, then closes it. */
static void close_gpu(demo *d) {
#ifdef STROBE_DEMO_GPU
  if (!d->gpu_ctx) return;
  gpu_stats gs = gpu_query_stats(d->gpu_ctx);
  printf("gpu: %llu frames submitted, %llu GPU zones read back without waiting (%llu frames unrecorded: ring full), "
         "%llu frames without GPU passes (the GPU was %d frames behind), %llu fence polls, %llu calibration pairs\n",
         (unsigned long long)gs.frames, (unsigned long long)gs.vk.zones_recorded,
         (unsigned long long)gs.vk.frames_unrecorded, (unsigned long long)gs.skipped, GPU_FRAMES,
         (unsigned long long)gs.polls, (unsigned long long)gs.vk.calibrations);
  gpu_memory gm = gpu_query_memory(d->gpu_ctx);
  printf("gpu memory: %.0f bytes in buffers, %.0f in textures (gauges gpu_memory/buffers, gpu_memory/textures; "
         "no swapchain: offscreen)\n", gm.buffers, gm.textures);
  gpu_close(d->gpu_ctx);
#else
  (void)d;
#endif
}

/* What the run did, once everything stopped: input errors, the traced save
 * worker, frames and their hand-off, the tree and deep capture, the files,
 * what recording cost and the GPU path. */
static void print_run(demo *d) {
  printf("input: %llu edits rejected by a longjmp to the event loop; %llu scopes closed as unwound\n",
         (unsigned long long)d->rejected, (unsigned long long)strobe_query_event_stats().scopes_unwound);
  strobe_trace_stats calls = strobe_trace_query_stats();
  printf("save worker: its calls traced while saving (docs/exploration.md): %u functions named from the symbol "
         "tables, %u without a symbol; %llu calls cut\n",
         calls.resolved, calls.unresolved,
         (unsigned long long)(calls.cut_depth + calls.cut_stack + calls.cut_functions));
  printf("\n%llu frames (%llu handed to the sender process, %llu presented there, %llu superseded there, %llu "
         "dropped before the hand-off), %u background saves, %llu spikes dumped to %s\n",
         (unsigned long long)d->frames, (unsigned long long)d->snd.handed, (unsigned long long)d->snd.presented,
         (unsigned long long)d->snd.superseded, (unsigned long long)d->snd.dropped_here, d->sv.saves,
         (unsigned long long)d->flight_stats.spikes_dumped, d->spikes);
  printf("%s\n", d->snd.summary);
  print_tree_and_deep(d);
  printf("wrote %s/demo.strobe (capture) and %s/demo-report.json (session report)\n", d->o.out, d->o.out);
  print_cost(d->capture);
  close_gpu(d);
}

int main(int argc, char **argv) {
  /* The same executable is the sender process (sender.h), started by sender_start. */
  if (argc == 4 && !strcmp(argv[1], "--sender-process")) return sender_process_main(atoi(argv[2]), argv[3]);
  static demo d;
  int rc = parse(argc, argv, &d.o);
  if (rc) return rc;
  if (d.o.replay) return demo_replay(d.o.replay, (uint64_t)d.o.replay_frame, d.o.out, d.o.replay_calls);
  if (d.o.bench_deep) return make_dir(d.o.out) ? 1 : demo_bench_deep((int)d.o.bench_deep, d.o.out);
#ifndef STROBE_DEMO_SERVER
  if (d.o.serve) {
    fprintf(stderr, "strobe-demo: built without libstrobe_server: --serve is not available\n");
    return 2;
  }
  d.o.headless = 1;
#endif
  if (open_collector(&d, argc, argv) || start_observers(&d)) return 1;
#ifdef STROBE_DEMO_SERVER
  if (start_server(&d)) return 1;
#endif
  if (start_rendering(&d)) return 1;
  run_frames(&d);
  int status = stop_observers(&d);
  print_run(&d);
  view_free(&d.main_view);
  view_free(&d.details_view);
  view_free(&d.devtools_view);
  strobe_collector_close(d.c);
  strobe_collector_release(d.c);
  return status;
}
