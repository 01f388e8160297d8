/*
 * frame_clock_app.c — the GTK-shaped application explain.test.mjs drives
 * over MCP (strobe_profile_explain, docs/server.md §Tools): one window
 * "main" whose frame clock runs the stages `update`, `layout` and `paint`
 * each pass (as examples/gtk's frame_profile.c names GdkFrameClock's
 * phases), each a short spin of about 100 µs, with the sampler on (context
 * switches included) and the server's live recorder recording.
 *
 * Three passes are slow for known reasons: pass 30's `layout` also sleeps
 * 100 ms (blocked, off its CPU); pass 40's `paint` also spins 100 ms of CPU
 * time in spin_paint (a function name the MCP answer must never carry);
 * pass 50's `layout` waits on a condition variable until stdin closes: the
 * unfinished, stalled frame. It owns nothing the library does not; it must
 * never decide what the explanation says.
 *
 * Prints "PORT <n>" once the server listens; exits 20 when the sampler
 * cannot start (the test needs real context switches: strobe/sample.h).
 *
 * usage: frame_clock_app --token-file PATH
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "strobe/flight.h"
#include "strobe/sample.h"
#include "strobe/server.h"
#include "strobe/session.h"
#include "support/fixtures.h"

static strobe_collector *g_c;
static strobe_window g_main;
static volatile uint64_t g_sink;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_release; /* under g_mu: stdin closed, the stalled pass may go on */

static void short_work(void) { g_sink += fx_spin(100000, g_sink); } /* ~100 µs at a few adds per ns */

/* `ms` of this thread's CPU time (a loaded machine preempts it; the stage must still have run that long on CPU). */
__attribute__((noinline)) static void spin_paint(unsigned ms) {
  uint64_t until = fx_thread_cpu_ns() + (uint64_t)ms * 1000000u;
  while (fx_thread_cpu_ns() < until) g_sink += fx_spin(10000, g_sink);
}

static void stall_until_released(void) {
  pthread_mutex_lock(&g_mu);
  while (!g_release) pthread_cond_wait(&g_cv, &g_mu);
  pthread_mutex_unlock(&g_mu);
}

static void pass(uint64_t id) {
  strobe_op op = strobe_op_begin_frame(g_c, g_main, id, NULL);
  {
    STROBE_STAGE("update", NULL);
    short_work();
  }
  {
    STROBE_STAGE("layout", NULL);
    short_work();
    if (id == 30) fx_sleep_ms(100); /* the deliberate blocked wait */
    if (id == 50) stall_until_released();
  }
  {
    STROBE_STAGE("paint", NULL);
    short_work();
    if (id == 40) spin_paint(100); /* the deliberate CPU spin */
  }
  strobe_op_end(op, 1);
}

static void *frame_clock(void *arg) {
  (void)arg;
  strobe_thread_set_name("frame_clock");
  for (uint64_t id = 1; id <= 50; id++) {
    pass(id);
    fx_sleep_ms(1); /* the clock's wait for the next vblank */
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3 || strcmp(argv[1], "--token-file")) {
    fprintf(stderr, "usage: frame_clock_app --token-file PATH\n");
    return 2;
  }
  int rc = strobe_sampler_start(&(strobe_sampler_desc){.rate_hz = 2000});
  if (rc) {
    fprintf(stderr, "frame_clock_app: the sampler did not start: %s (%s)\n", strobe_strerror(rc),
            strobe_sampler_query_status().reason);
    return 20;
  }
  g_c = strobe_default_collector();
  if (!g_c || strobe_window_register(g_c, "main", 0, &g_main) != 0) return 1;
  unsetenv("STROBE_TOKEN"); /* the token is generated and written to the file */
  strobe_server *s;
  if ((rc = strobe_server_start(&(strobe_server_desc){.token_file = argv[2]}, &s)) ||
      (rc = strobe_server_record_start(s, &(strobe_flight_recorder_desc){.max_mib = 16}))) {
    fprintf(stderr, "frame_clock_app: %s\n", strobe_strerror(rc));
    return 1;
  }
  pthread_t th;
  if (pthread_create(&th, NULL, frame_clock, NULL)) return 1;
  printf("PORT %u\n", (unsigned)strobe_server_query_port(s));
  fflush(stdout);
  char buf[256];
  while (read(0, buf, sizeof buf) > 0) {
  }
  strobe_server_stop(s);
  pthread_mutex_lock(&g_mu);
  g_release = 1;
  pthread_cond_signal(&g_cv);
  pthread_mutex_unlock(&g_mu);
  pthread_join(th, NULL);
  strobe_sampler_stop();
  return 0;
}
