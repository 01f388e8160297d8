/*
 * explain_app.c — records the capture `strobe explain`'s test reads
 * (cli_test.py case explain; docs/explain.md): a GTK-shaped frame loop with
 * the sampler on, context switches included, where two frames are slow for
 * different reasons.
 *
 * Window "main", 40 passes (frame ids 1..40), each running the stages
 * `update`, `layout` and `paint`, each a short spin (about 100 µs of CPU).
 * Frame 20's `layout` also sleeps 100 ms (nanosleep: blocked, off its CPU);
 * frame 30's `paint` also spins 100 ms of CPU time in spin_paint. Nothing
 * else differs, so an explanation must name layout (blocked) for frame 20
 * and paint (on CPU, spin_paint on top) for frame 30.
 *
 * Each pass also hands a stand-in GPU (clock domain "gpu0", CLOCK_MONOTONIC
 * plus 1 s, calibrated each pass) one span of 50 µs on queue "graphics":
 * submitted at the pass's end, started 20 µs later (its backlog), its fence
 * seen 10 µs after it ends (polling); frame 25's span starts 80 ms after its
 * submit, so its explanation must name the GPU backlog.
 *
 * Fails (exit 20) when the sampler cannot start: the test needs real
 * context switches (strobe/sample.h says why a start is refused).
 *
 * With --no-switches the sampler records samples only: a capture whose stages have runs and no context switches.
 *
 * usage: explain_app OUT.strobe [--no-switches]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "strobe/gpu.h"
#include "strobe/record.h"
#include "strobe/sample.h"
#include "strobe/session.h"
#include "support/fixtures.h"

static volatile uint64_t g_sink;

static void short_work(void) { g_sink += fx_spin(100000, g_sink); } /* ~100 µs at a few adds per ns */

/* The deliberate CPU spin: `ms` of this thread's CPU time (not wall time: a loaded machine preempts it, and the
 * stage must still have run that long on CPU), in a function samples can name. */
__attribute__((noinline)) static void spin_paint(unsigned ms) {
  uint64_t until = fx_thread_cpu_ns() + (uint64_t)ms * 1000000u;
  while (fx_thread_cpu_ns() < until) g_sink += fx_spin(10000, g_sink);
}

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The stand-in GPU's frame `id`, submitted now (gpu.h: calibration pair, instants, one span, fence seen). */
static void gpu_frame(strobe_clock_domain d, strobe_gpu_queue q, uint64_t id) {
  static strobe_site composite = STROBE_GPU_SITE("composite");
  uint64_t before = strobe_clock_now(), device = mono_ns() + 1000000000u, after = strobe_clock_now();
  if (strobe_clock_domain_calibrate(d, device, before, after)) exit(30);
  uint64_t submit = mono_ns(), backlog = id == 25 ? 80000000u : 20000u;
  strobe_gpu_frame_mark(id, STROBE_GPU_CPU_END, 0);
  strobe_gpu_frame_mark(id, STROBE_GPU_SUBMIT, strobe_clock_ticks_from_mono_ns(submit));
  uint64_t begin = submit + 1000000000u + backlog;
  strobe_gpu_span span = {q, &composite, STROBE_GPU_PASS_MAIN, id, begin, begin + 50000u};
  if (strobe_gpu_span_add(&span)) exit(31);
  strobe_gpu_frame_mark(id, STROBE_GPU_FENCE_SEEN, strobe_clock_ticks_from_mono_ns(submit + backlog + 60000u));
}

static void pass(strobe_collector *c, strobe_window w, uint64_t id) {
  strobe_op op = strobe_op_begin_frame(c, w, id, NULL);
  {
    STROBE_STAGE("update", NULL);
    short_work();
  }
  {
    STROBE_STAGE("layout", NULL);
    short_work();
    if (id == 20) fx_sleep_ms(100); /* the deliberate blocked wait */
  }
  {
    STROBE_STAGE("paint", NULL);
    short_work();
    if (id == 30) spin_paint(100);
  }
  strobe_op_end(op, 1);
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "--no-switches"))) {
    fprintf(stderr, "usage: explain_app OUT.strobe [--no-switches]\n");
    return 2;
  }
  int rc = strobe_sampler_start(&(strobe_sampler_desc){.rate_hz = 2000, .no_switches = argc == 3});
  if (rc) {
    fprintf(stderr, "explain_app: the sampler did not start: %s (%s)\n", strobe_strerror(rc),
            strobe_sampler_query_status().reason);
    return 20;
  }
  strobe_collector *c;
  strobe_window w;
  strobe_thread_set_name("main");
  if (strobe_collector_create(&c) || strobe_window_register(c, "main", 0, &w)) return 10;
  strobe_recorder *rec = NULL;
  if (strobe_record_start(&(strobe_record_desc){.path = argv[1]}, &rec)) return 11;
  strobe_clock_domain gpu;
  strobe_gpu_queue graphics;
  if (strobe_clock_domain_create(&(strobe_clock_domain_desc){.name = "gpu0", .ticks_per_second = 1e9}, &gpu) ||
      strobe_gpu_queue_create(gpu, "graphics", &graphics))
    return 13;
  for (uint64_t id = 1; id <= 40; id++) {
    pass(c, w, id);
    gpu_frame(gpu, graphics, id);
  }
  if (strobe_record_stop(rec) || strobe_sampler_stop()) return 12; /* stopped while sampling: covered to the end */
  strobe_collector_release(c);
  return 0;
}
