/*
 * bench_report_html.c — the size of the self-contained HTML report
 * (`strobe export --format html`, docs/viewer.md §One file) of the demo's
 * 10 s capture, beside that capture's own size in the same run: it runs
 * strobe-demo headless for 10 s (its default), exports its capture and
 * prints BENCH report_html_bytes, report_html_vs_capture (the ratio) and the
 * budget line (<= 3 MB). Also the export's wall time.
 * Must never: print a figure it did not measure (a failed run prints no
 * BENCH line), or leave its temporary files behind.
 *
 * STROBE_BENCH_NEEDS: demo-cairo server
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "support/fixtures.h"

int main(void) {
  char dir[256], cmd[2048], cap[512], html[512];
  if (fx_temp_dir(dir, sizeof dir, "bench-report-html")) {
    fprintf(stderr, "bench_report_html: no temporary directory\n");
    return 1;
  }
  snprintf(cap, sizeof cap, "%s/demo.strobe", dir);
  snprintf(html, sizeof html, "%s/report.html", dir);
  printf("bench_report_html: %s --seconds 10, then %s export --format html\n", STROBE_DEMO_PATH, STROBE_CLI_PATH);
  snprintf(cmd, sizeof cmd, "%s --seconds 10 --headless --out %s > %s/demo.txt 2>&1",
           STROBE_DEMO_PATH, dir, dir);
  int status = 1;
  if (system(cmd) != 0) {
    fprintf(stderr, "bench_report_html: %s failed (see %s/demo.txt)\n", cmd, dir);
    return 1;
  }
  snprintf(cmd, sizeof cmd, "%s export %s --format html -o %s --quiet", STROBE_CLI_PATH, cap, html);
  uint64_t t0 = fx_now_ns();
  int rc = system(cmd);
  double secs = (double)(fx_now_ns() - t0) / 1e9;
  struct stat sc, sh;
  if (rc != 0 || stat(cap, &sc) || stat(html, &sh)) {
    fprintf(stderr, "bench_report_html: %s failed\n", cmd);
  } else {
    double mb = (double)sh.st_size / 1e6;
    printf("BENCH report_html_bytes %lld bytes\n", (long long)sh.st_size);
    printf("BENCH report_html_capture_bytes %lld bytes\n", (long long)sc.st_size);
    printf("BENCH report_html_vs_capture %.2f ratio\n", (double)sh.st_size / (double)sc.st_size);
    printf("BENCH report_html_export_s %.2f s\n", secs);
    printf("BUDGET report_html_bytes %.2f MB <= 3 MB %s\n", mb, mb <= 3.0 ? "ok" : "OVER");
    status = 0;
  }
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "bench_report_html: could not remove %s\n", dir);
  return status;
}
