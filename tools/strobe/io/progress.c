/*
 * progress.c — the progress bar long commands draw on stderr: the share of
 * the capture file's bytes read so far. Shown only when stderr is a terminal
 * and --quiet was not given (cli_open decides); redrawn at most ten times a
 * second so it costs nothing measurable; erased when reading ends, so the
 * terminal is left as it was apart from the command's own output.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#define BAR_WIDTH 30
#define REDRAW_NS 100000000ull /* 10 Hz */

struct cli_progress {
  char label[96];
  uint64_t total;   /* file size in bytes; 0 when unknown */
  uint64_t last_ns; /* CLOCK_MONOTONIC of the last redraw, 0 before the first */
  int drawn;        /* a line is on screen and must be erased */
};

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

cli_progress *cli_progress_start(const char *label, uint64_t total_bytes) {
  cli_progress *p = calloc(1, sizeof *p);
  if (!p) return NULL; /* no bar is not an error */
  snprintf(p->label, sizeof p->label, "%s", label);
  p->total = total_bytes;
  return p; /* last_ns 0: the first update draws */
}

void cli_progress_update(cli_progress *p, uint64_t bytes) {
  if (!p || p->total == 0) return;
  uint64_t now = mono_ns();
  if (now - p->last_ns < REDRAW_NS) return;
  p->last_ns = now;
  double frac = (double)bytes / (double)p->total;
  if (frac > 1.0) frac = 1.0;
  char bar[BAR_WIDTH + 1];
  int fill = (int)(frac * BAR_WIDTH);
  memset(bar, '#', (size_t)fill);
  memset(bar + fill, '-', (size_t)(BAR_WIDTH - fill));
  bar[BAR_WIDTH] = '\0';
  fprintf(stderr, "\r%s [%s] %3d%% %.1f/%.1f MB", p->label, bar, (int)(frac * 100.0), (double)bytes / 1e6,
          (double)p->total / 1e6);
  fflush(stderr);
  p->drawn = 1;
}

void cli_progress_end(cli_progress *p) {
  if (!p) return;
  if (p->drawn) {
    fputs("\r\033[K", stderr);
    fflush(stderr);
  }
  free(p);
}
