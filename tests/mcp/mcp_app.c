/*
 * mcp_app.c — the instrumented application the MCP SDK tests drive: it
 * starts libstrobe_server with a generated token written to --token-file,
 * registers windows "main" and "popup", renders passes with stages on a
 * loop in a thread (a popup pass inside every other main pass: two windows,
 * two frame rates), prints "PORT <n>" on stdout, and runs until stdin closes (or
 * SIGTERM), then stops the server.
 *
 * usage: mcp_app --token-file PATH [--frame-us N]
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "strobe/server.h"
#include "strobe/session.h"

static strobe_collector *g_c;
static strobe_window g_main, g_popup;
static volatile sig_atomic_t g_stop;
static int g_run = 1;   /* atomic */
static long g_frame_us = 2000;

static void spin_us(long us) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do clock_gettime(CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static void *render_loop(void *arg) {
  (void)arg;
  strobe_thread_set_name("ui");
  while (__atomic_load_n(&g_run, __ATOMIC_ACQUIRE)) {
    strobe_op op = strobe_op_begin(g_c, g_main, STROBE_OP_PASS, NULL);
    static unsigned frame;
    if (frame++ % 2 == 0) strobe_op_end(strobe_op_begin(g_c, g_popup, STROBE_OP_PASS, NULL), 1);
    {
      STROBE_STAGE("layout_update", NULL);
      {
        STROBE_STAGE("layout_compute", "layout_update");
        spin_us(g_frame_us / 4);
      }
    }
    {
      STROBE_STAGE("render", NULL);
      spin_us(g_frame_us / 4);
    }
    strobe_op_end(op, 1);
    if (g_frame_us) usleep((useconds_t)(g_frame_us / 2));
  }
  return NULL;
}

static void on_signal(int sig) {
  (void)sig;
  g_stop = 1;
}

int main(int argc, char **argv) {
  const char *token_file = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--token-file") && i + 1 < argc)
      token_file = argv[++i];
    else if (!strcmp(argv[i], "--frame-us") && i + 1 < argc)
      g_frame_us = atol(argv[++i]);
    else {
      fprintf(stderr, "usage: mcp_app --token-file PATH [--frame-us N]\n");
      return 2;
    }
  }
  if (!token_file) {
    fprintf(stderr, "mcp_app: --token-file is required\n");
    return 2;
  }
  g_c = strobe_default_collector();
  if (!g_c || strobe_window_register(g_c, "main", 0, &g_main) != 0 ||
      strobe_window_register(g_c, "popup", 0, &g_popup) != 0)
    return 1;
  unsetenv("STROBE_TOKEN"); /* the token is generated and written to the file */
  strobe_server_desc d = {.token_file = token_file};
  strobe_server *s;
  int rc = strobe_server_start(&d, &s);
  if (rc) {
    fprintf(stderr, "mcp_app: %s\n", strobe_strerror(rc));
    return 1;
  }
  pthread_t th;
  pthread_create(&th, NULL, render_loop, NULL);
  printf("PORT %u\n", (unsigned)strobe_server_query_port(s));
  fflush(stdout);

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  char buf[256];
  while (!g_stop && read(0, buf, sizeof buf) > 0) {
  }
  strobe_server_stop(s);
  __atomic_store_n(&g_run, 0, __ATOMIC_RELEASE);
  pthread_join(th, NULL);
  return 0;
}
