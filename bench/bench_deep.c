/*
 * bench_deep.c — what a deep capture costs the frame that answers it
 * (docs/recording.md §Deep capture): runs `strobe-demo --bench-deep 60`,
 * which renders the demo's main view (960 x 682, ~500 draw calls, ~240 glyph
 * masks) 60 frames without and 60 frames with a deep capture, alternating,
 * while a capture file records both, and prints the medians and their ratio
 * as BENCH lines: the frame time with a deep capture (every call recorded,
 * every resource copied once, rows packed, the raw screenshot attached)
 * against the same frames without one, measured in the same run.
 * Must never: print a figure the demo did not measure (a failed run prints
 * no BENCH line and exits 1).
 *
 * STROBE_BENCH_NEEDS: demo-cairo
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/fixtures.h"

int main(void) {
  char dir[256];
  if (fx_temp_dir(dir, sizeof dir, "bench-deep")) {
    fprintf(stderr, "bench_deep: no temporary directory\n");
    return 1;
  }
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "VK_ICD_FILENAMES=/nonexistent/strobe-bench-no-driver.json %s --bench-deep 60 --out %s",
           STROBE_DEMO_PATH, dir);
  printf("bench_deep: %s --bench-deep 60\n", STROBE_DEMO_PATH);
  fflush(stdout);
  FILE *p = popen(cmd, "r");
  if (!p) return 1;
  char line[512];
  int bench = 0;
  while (fgets(line, sizeof line, p)) {
    fputs(line, stdout);
    bench += strncmp(line, "BENCH ", 6) == 0;
  }
  int rc = pclose(p);
  char rm[300];
  snprintf(rm, sizeof rm, "rm -rf %s", dir);
  if (system(rm) != 0) fprintf(stderr, "bench_deep: could not remove %s\n", dir);
  if (rc != 0 || bench != 3) {
    fprintf(stderr, "bench_deep: the demo's run failed (exit %d, %d BENCH lines)\n", rc, bench);
    return 1;
  }
  return 0;
}
