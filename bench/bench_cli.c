/*
 * bench_cli.c — speed and memory budgets of the `strobe` command-line tool
 * (issue 4) on a 100,000,000-event capture:
 *   report_events_per_s        >= 30,000,000 (single-threaded)
 *   report_peak_rss_mib        <= 64
 *   export_chrome_events_per_s >= 10,000,000
 *   export_perfetto_scopes_per_s >= 5,000,000 and
 *   export_perfetto_bytes_per_scope <= 20 (issue 16), each beside its same-run
 *   baseline: the chrome export's time (export_perfetto_time_vs_chrome) and
 *   the capture's own bytes per scope (export_perfetto_size_vs_capture).
 *   The perfetto file is written to $TMPDIR to be measured, then removed.
 *   query_group_by_site_s (docs/query.md): `strobe query` of a GROUP BY
 *   site over the spans, <= 2 s at 2,000,000 events (--events 2000000),
 *   beside the same run's report time (query_group_by_site_vs_report).
 *   merge_events_per_s (docs/cli.md §strobe merge): the capture merged with a
 *   second one of 1,000,000 events (--same-host: generated captures carry no
 *   boot id), beside its same-run baseline merge_time_vs_report, its time
 *   over `strobe report`'s on the big capture (a plain read).
 * And on a second capture of 1,000,000 operations (passes with two stages
 * holding five scopes, every scope inside an operation), the OTLP export
 * (docs/otel.md): export_otlp_spans_per_s (3 spans an operation: the pass
 * and its stages) and with --otlp-scopes (8), export_otlp_bytes_per_span,
 * beside the same run's chrome export of that capture
 * (export_otlp_time_vs_chrome). No budget: issue 16 sets none.
 *
 * The capture is synthetic and deterministic (the library's real block
 * encoder fed with made-up timestamps, like a frame loop of nested scopes
 * with a counter and a frame mark): it is written once to
 * $TMPDIR/strobe-bench-100M.strobe and reused while its size matches the
 * stamp file written beside it. The tool runs as a child process, timed with
 * CLOCK_MONOTONIC; peak RSS is the child's ru_maxrss from wait4.
 *
 * Usage: bench_cli [--events N] [--strobe PATH] [--generate-only]
 * (defaults: 100000000, the built tool). Each figure is the best of 3 runs
 * (peak RSS: the largest). --generate-only writes (or reuses) the capture,
 * prints `capture PATH EVENTS` and runs nothing: the callgrind script
 * (scripts/bench-read-callgrind.sh) reads the same capture.
 * Output lines: `BENCH <name> <value> <unit>` plus a budget line for each.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "format/capture_writer.h"
#include "format/codec.h"
#include "probe/probe.h"
#include "strobe/strobe.h"
#include "support/fixtures.h"

#ifndef STROBE_CLI_PATH
#define STROBE_CLI_PATH "strobe"
#endif
#define GEN_VERSION 2 /* bump when the generated capture changes */

/* >>generator */
enum { S_FRAME = 1, S_UPDATE, S_WORK, S_RENDER, S_DRAW, S_CALLS, S_MARK, S_COUNT };
static strobe_site g_sites[S_COUNT] = {
    [S_FRAME] = {"frame", NULL, NULL, "bench/loop.c", "frame", 1, STROBE_SITE_SCOPE, 0, 0, 0},
    [S_UPDATE] = {"update", NULL, NULL, "bench/loop.c", "update", 2, STROBE_SITE_SCOPE, 0, 0, 0},
    [S_WORK] = {"work", NULL, NULL, "bench/loop.c", "work", 3, STROBE_SITE_SCOPE, 0, 0, 0},
    [S_RENDER] = {"render", NULL, NULL, "bench/loop.c", "render", 4, STROBE_SITE_SCOPE, 0, 0, 0},
    [S_DRAW] = {"draw", NULL, NULL, "bench/loop.c", "draw", 5, STROBE_SITE_SCOPE, 0, 0, 0},
    [S_CALLS] = {"draw_calls", NULL, NULL, "bench/loop.c", "draw", 6, STROBE_SITE_COUNTER, 0, 0, 0},
    [S_MARK] = {"frame", NULL, NULL, "bench/loop.c", "main", 7, STROBE_SITE_FRAME, 0, 0, 0},
};

static int gen_sink(void *ctx, const void *data, size_t len) {
  return fwrite(data, 1, len, (FILE *)ctx) == len ? 0 : STROBE_EIO;
}

/* Writes about `events` events (whole frames of 18) to path. */
static int generate(const char *path, uint64_t events) {
  FILE *out = fopen(path, "wb");
  if (!out) return -1;
  /* Fixed header facts keep the file byte-identical from run to run. */
  strobe__header_facts facts = {{"tsc", 1, 0.385, 0, 0}, 0, "x86_64", 0, 1, 262144, 0, 0, 0, NULL, "linux"};
  strobe__writer *w;
  strobe__writer_desc d = {"file", 100, 1, 19.5, 8.6, gen_sink, out, &facts};
  if (strobe__writer_create(&d, &w)) return -1;
  for (uint32_t id = 1; id < S_COUNT; id++) strobe__writer_site(w, id, &g_sites[id]);
  strobe__writer_thread(w, 0, 1, "main", 0);
  static strobe__event ev[19 * 1024];
  uint64_t now = 1000, done = 0, frame = 0;
  while (done < events) {
    size_t n = 0;
#define EV(kind, data) ev[n++] = (strobe__event){now, (kind), (data)}
    for (int f = 0; f < 1024; f++, frame++) {
      uint64_t jitter = (frame * 2654435761u) >> 24 & 1023; /* deterministic spread of durations */
      EV(STROBE__EV_BEGIN, S_FRAME), now += 40;
      EV(STROBE__EV_BEGIN, S_UPDATE), now += 40;
      for (int i = 0; i < 3; i++) {
        EV(STROBE__EV_BEGIN, S_WORK), now += 2000 + jitter * (uint64_t)(i + 1);
        EV(STROBE__EV_END, S_WORK), now += 30;
      }
      EV(STROBE__EV_END, S_UPDATE), now += 40;
      EV(STROBE__EV_BEGIN, S_RENDER), now += 40;
      for (int i = 0; i < 2; i++) {
        EV(STROBE__EV_BEGIN, S_DRAW), now += 900 + jitter;
        EV(STROBE__EV_END, S_DRAW), now += 30;
      }
      EV(STROBE__EV_COUNTER, S_CALLS);
      ev[n++] = (strobe__event){0x4000000000000000ull /* 2.0 */, STROBE__EV_PAYLOAD, 0};
      EV(STROBE__EV_END, S_RENDER), now += 20;
      EV(STROBE__EV_END, S_FRAME);
      EV(STROBE__EV_FRAME, S_MARK), now += 300;
    }
#undef EV
    /* 18 events per frame: the counter takes two ring slots but is one event. */
    strobe__writer_events(w, 0, ev, n);
    done += 18 * 1024;
    strobe__writer_flush(w);
  }
  strobe__writer_thread_end(w, 0);
  strobe_misuse m = {0};
  int rc = strobe__writer_finish(w, now, &m);
  strobe__writer_destroy(w);
  if (fclose(out) != 0) rc = -1;
  return rc;
}

/* >>operations: the OTLP export's capture. Each frame is a pass (operation
 * events as src/session/operation.c writes them, probe/probe.h >>operation
 * events) holding stage update { 3 x work } and stage render { 2 x draw }. */
enum { O_UPDATE = 1, O_WORK, O_RENDER, O_DRAW, O_COUNT };
static strobe_site g_op_sites[O_COUNT] = {
    [O_UPDATE] = {"update", NULL, NULL, "bench/loop.c", "update", 2, STROBE_SITE_STAGE, 0, 0, 0},
    [O_WORK] = {"work", NULL, NULL, "bench/loop.c", "work", 3, STROBE_SITE_SCOPE, 0, 0, 0},
    [O_RENDER] = {"render", NULL, NULL, "bench/loop.c", "render", 4, STROBE_SITE_STAGE, 0, 0, 0},
    [O_DRAW] = {"draw", NULL, NULL, "bench/loop.c", "draw", 5, STROBE_SITE_SCOPE, 0, 0, 0},
};

static int generate_ops(const char *path, uint32_t frames) {
  FILE *out = fopen(path, "wb");
  if (!out) return -1;
  strobe__header_facts facts = {{"tsc", 1, 0.385, 0, 0}, 0, "x86_64", 0, 1, 262144, 0, 0, 1764633600000000000ull, NULL, "linux"};
  strobe__writer *w;
  strobe__writer_desc d = {"file", 100, 1, 19.5, 8.6, gen_sink, out, &facts};
  if (strobe__writer_create(&d, &w)) return -1;
  for (uint32_t id = 1; id < O_COUNT; id++) strobe__writer_site(w, id, &g_op_sites[id]);
  strobe__writer_label(w, 1, "main");
  strobe__writer_thread(w, 0, 1, "main", 0);
  static strobe__event ev[256 * 32]; /* 29 events a frame */
  uint64_t now = 1000;
  for (uint32_t f = 0; f < frames;) {
    size_t n = 0;
#define EV(ts, kind, data) ev[n++] = (strobe__event){(ts), (kind), (data)}
    for (int b = 0; b < 256 && f < frames; b++, f++) {
      uint64_t start = now, jitter = (f * 2654435761u) >> 24 & 1023;
      uint32_t flags = (uint32_t)STROBE_OP_PASS | STROBE__OPF_APP_FRAME;
      EV(now, STROBE__EV_OP, STROBE__OPEV_BEGIN | 3u << 8);
      EV((uint64_t)f + 1, STROBE__EV_PAYLOAD, 1);
      EV((uint64_t)f + 1, STROBE__EV_PAYLOAD, 1);
      EV(0, STROBE__EV_PAYLOAD, flags);
      now += 40;
      uint64_t u0 = now;
      EV(now, STROBE__EV_BEGIN, O_UPDATE), now += 40;
      for (int i = 0; i < 3; i++) {
        EV(now, STROBE__EV_BEGIN, O_WORK), now += 2000 + jitter;
        EV(now, STROBE__EV_END, O_WORK), now += 30;
      }
      EV(now, STROBE__EV_END, O_UPDATE);
      uint64_t u = now - u0, r0 = now += 40;
      EV(now, STROBE__EV_BEGIN, O_RENDER), now += 40;
      for (int i = 0; i < 2; i++) {
        EV(now, STROBE__EV_BEGIN, O_DRAW), now += 900 + jitter;
        EV(now, STROBE__EV_END, O_DRAW), now += 30;
      }
      EV(now, STROBE__EV_END, O_RENDER);
      uint64_t r = now - r0;
      now += 20;
      EV(now, STROBE__EV_OP, STROBE__OPEV_END | 10u << 8); /* 4 + 3 per stage */
      const uint64_t wv[10] = {(uint64_t)f + 1, (uint64_t)f + 1, start, 0, u, u, u, r, r, r};
      const uint32_t dv[10] = {1, 1, flags | STROBE__OPF_DETAIL | STROBE__OPF_COMMITTED, 2, O_UPDATE, 1, 0,
                               O_RENDER, 1, 0};
      for (int i = 0; i < 10; i++) EV(wv[i], STROBE__EV_PAYLOAD, dv[i]);
      now += 300;
    }
#undef EV
    strobe__writer_events(w, 0, ev, n);
    strobe__writer_flush(w);
  }
  strobe__writer_thread_end(w, 0);
  strobe_misuse m = {0};
  int rc = strobe__writer_finish(w, now, &m);
  strobe__writer_destroy(w);
  if (fclose(out) != 0) rc = -1;
  return rc;
}

/* >>runner */
static double now_s(void) { return (double)fx_now_ns() / 1e9; }
/* Runs argv with stdout to /dev/null; returns the exit status, the wall
 * time in *secs and the child's peak RSS in *rss_kib. */
static int run(char *const argv[], double *secs, long *rss_kib) {
  double t0 = now_s();
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0) dup2(fd, 1);
    execv(argv[0], argv);
    _exit(127);
  }
  int status;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) < 0) return -1;
  *secs = now_s() - t0;
  *rss_kib = ru.ru_maxrss;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

#define RUNS 3

/* The fastest of RUNS runs, and the largest peak RSS; nonzero (after a
 * message) when the tool failed. */
static int best_of(char *const argv[], double *secs, long *rss) {
  *secs = 1e30;
  *rss = 0;
  for (int i = 0; i < RUNS; i++) {
    double s;
    long r;
    int rc = run(argv, &s, &r);
    if (rc != 0) {
      fprintf(stderr, "bench_cli: %s %s exited %d\n", argv[0], argv[1], rc);
      return 1;
    }
    if (s < *secs) *secs = s;
    if (r > *rss) *rss = r;
  }
  return 0;
}

int main(int argc, char **argv) {
  uint64_t events = 100000000;
  const char *cli = STROBE_CLI_PATH;
  int generate_only = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--generate-only")) generate_only = 1;
    else if (i + 1 < argc && !strcmp(argv[i], "--events")) events = strtoull(argv[++i], NULL, 10);
    else if (i + 1 < argc && !strcmp(argv[i], "--strobe")) cli = argv[++i];
  }
  const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  char path[512], stamp[600];
  snprintf(path, sizeof path, "%s/strobe-bench-%" PRIu64 ".strobe", tmp, events);
  snprintf(stamp, sizeof stamp, "%s.stamp", path);

  /* Reuse the capture when the stamp names this generator and the size matches. */
  struct stat st;
  long long want = -1;
  int ver = 0;
  FILE *sf = fopen(stamp, "r");
  if (sf) {
    if (fscanf(sf, "%d %lld", &ver, &want) != 2) want = -1;
    fclose(sf);
  }
  if (ver != GEN_VERSION || stat(path, &st) != 0 || st.st_size != want) {
    double t0 = now_s();
    if (generate(path, events) != 0 || stat(path, &st) != 0) {
      fprintf(stderr, "bench_cli: cannot write %s: %s\n", path, strerror(errno));
      return 1;
    }
    sf = fopen(stamp, "w");
    if (sf) {
      fprintf(sf, "%d %lld\n", GEN_VERSION, (long long)st.st_size);
      fclose(sf);
    }
    printf("generated %s (%lld bytes) in %.1f s\n", path, (long long)st.st_size, now_s() - t0);
  } else {
    printf("reusing %s (%lld bytes)\n", path, (long long)st.st_size);
  }
  /* The generator rounds up to whole batches: the events in the file. */
  uint64_t in_file = (events + 18 * 1024 - 1) / (18 * 1024) * (18 * 1024);
  if (generate_only) {
    printf("capture %s %" PRIu64 "\n", path, in_file);
    return 0;
  }

  /* Best of RUNS: the machine may be shared, and the budget is about what
   * the tool can do, not about its neighbours. Peak RSS is the largest seen. */
  double secs;
  long rss;
  char *report[] = {(char *)cli, "report", "--quiet", path, NULL};
  if (best_of(report, &secs, &rss)) return 1;
  double ev_s = (double)in_file / secs, report_secs = secs;
  printf("BENCH report_events_per_s %.0f events/s\n", ev_s);
  printf("BENCH report_peak_rss_mib %.1f MiB\n", (double)rss / 1024.0);
  printf("BUDGET report_events_per_s %.0f >= 30000000 %s\n", ev_s, ev_s >= 3e7 ? "ok" : "OVER");
  printf("BUDGET report_peak_rss_mib %.1f <= 64 %s\n", (double)rss / 1024.0, rss <= 64 * 1024 ? "ok" : "OVER");

  /* strobe query (docs/query.md): GROUP BY site streams every span through SQLite, beside report's read. */
  char *query[] = {(char *)cli, "query", "--quiet", path,
                   "SELECT site, count(*), sum(dur_ns), sum(self_ns) FROM spans GROUP BY site", NULL};
  if (best_of(query, &secs, &rss)) return 1;
  printf("BENCH query_group_by_site_s %.3f s\n", secs);
  printf("BENCH query_group_by_site_report_s %.3f s\n", report_secs);
  printf("BENCH query_group_by_site_vs_report %.2f ratio\n", secs / report_secs);
  printf("BENCH query_peak_rss_mib %.1f MiB\n", (double)rss / 1024.0);
  if (in_file <= 2100000)
    printf("BUDGET query_group_by_site_s %.3f <= 2 (2M events) %s\n", secs, secs <= 2 ? "ok" : "OVER");

  char *export[] = {(char *)cli, "export", "--quiet", "--format", "chrome", "-o", "/dev/null", path, NULL};
  if (best_of(export, &secs, &rss)) return 1;
  ev_s = (double)in_file / secs;
  printf("BENCH export_chrome_events_per_s %.0f events/s\n", ev_s);
  printf("BENCH export_chrome_peak_rss_mib %.1f MiB\n", (double)rss / 1024.0);
  printf("BUDGET export_chrome_events_per_s %.0f >= 10000000 %s\n", ev_s, ev_s >= 1e7 ? "ok" : "OVER");
  double chrome_secs = secs;

  /* 7 scopes per frame of 18 events (the generator above). */
  double scopes = (double)(in_file / 18 * 7);
  char pf[600];
  snprintf(pf, sizeof pf, "%s.pftrace", path);
  char *perfetto[] = {(char *)cli, "export", "--quiet", "--format", "perfetto", "-o", pf, path, NULL};
  if (best_of(perfetto, &secs, &rss)) return 1;
  struct stat pst;
  if (stat(pf, &pst) != 0) {
    fprintf(stderr, "bench_cli: %s not written\n", pf);
    return 1;
  }
  remove(pf);
  double sc_s = scopes / secs, bps = (double)pst.st_size / scopes;
  printf("BENCH export_perfetto_scopes_per_s %.0f scopes/s\n", sc_s);
  printf("BENCH export_perfetto_bytes_per_scope %.2f bytes\n", bps);
  printf("BENCH export_perfetto_time_vs_chrome %.2f ratio\n", secs / chrome_secs);
  printf("BENCH export_perfetto_size_vs_capture %.2f ratio\n", (double)pst.st_size / (double)st.st_size);
  printf("BENCH export_perfetto_peak_rss_mib %.1f MiB\n", (double)rss / 1024.0);
  printf("BUDGET export_perfetto_scopes_per_s %.0f >= 5000000 %s\n", sc_s, sc_s >= 5e6 ? "ok" : "OVER");
  printf("BUDGET export_perfetto_bytes_per_scope %.2f <= 20 %s\n", bps, bps <= 20 ? "ok" : "OVER");

  /* merge: every record re-encoded onto one timeline, against a plain read. */
  char second[600];
  snprintf(second, sizeof second, "%s.second.strobe", path);
  if (generate(second, 1000000) != 0) {
    fprintf(stderr, "bench_cli: cannot write %s\n", second);
    return 1;
  }
  uint64_t merged_events = in_file + (1000000 + 18 * 1024 - 1) / (18 * 1024) * (18 * 1024);
  char *merge[] = {(char *)cli, "merge", "--quiet", "--same-host", path, second, "-o", "/dev/null", NULL};
  int mrc = best_of(merge, &secs, &rss);
  remove(second);
  if (mrc) return 1;
  printf("BENCH merge_events_per_s %.0f events/s\n", (double)merged_events / secs);
  printf("BENCH merge_time_vs_report %.2f ratio\n", secs / report_secs);
  printf("BENCH merge_peak_rss_mib %.1f MiB\n", (double)rss / 1024.0);
  /* OTLP: its own capture of operations, made every run (a few seconds). */
  const uint32_t ops = 1000000;
  char opath[600], oj[640];
  snprintf(opath, sizeof opath, "%s/strobe-bench-ops-%u.strobe", tmp, ops);
  snprintf(oj, sizeof oj, "%s.otlp.json", opath);
  if (generate_ops(opath, ops) != 0) {
    fprintf(stderr, "bench_cli: cannot write %s\n", opath);
    return 1;
  }
  char *ochrome[] = {(char *)cli, "export", "--quiet", "--format", "chrome", "-o", "/dev/null", opath, NULL};
  if (best_of(ochrome, &chrome_secs, &rss)) return 1;
  for (int with_scopes = 0; with_scopes < 2; with_scopes++) {
    char *otlp[] = {(char *)cli, "export", "--quiet", "--format", "otlp", "-o", oj, opath,
                    with_scopes ? "--otlp-scopes" : NULL, NULL};
    if (best_of(otlp, &secs, &rss)) return 1;
    struct stat ost;
    if (stat(oj, &ost) != 0) {
      fprintf(stderr, "bench_cli: %s not written\n", oj);
      return 1;
    }
    remove(oj);
    double spans = (double)ops * (with_scopes ? 8 : 3);
    const char *tag = with_scopes ? "_scopes" : "";
    printf("BENCH export_otlp%s_spans_per_s %.0f spans/s\n", tag, spans / secs);
    printf("BENCH export_otlp%s_bytes_per_span %.1f bytes\n", tag, (double)ost.st_size / spans);
    printf("BENCH export_otlp%s_time_vs_chrome %.2f ratio\n", tag, secs / chrome_secs);
    printf("BENCH export_otlp%s_peak_rss_mib %.1f MiB\n", tag, (double)rss / 1024.0);
  }
  remove(opath);
  return 0;
}
