/*
 * cmd_diff.c — `strobe diff A B`: per-site changes between two captures
 * (count, total, p50, p95), sites matched by name, file and line, sorted by
 * the growth of their total, with sites that appeared or vanished marked.
 * `strobe diff FILE --frames N M` is handed to frame_diff.c.
 *
 * Both captures stream through aggregate.c; memory is bounded by their
 * sites. Captures from different clocks are compared with a warning.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/aggregate.h"
#include "cli.h"
#include "format/json_writer.h"

static const char g_usage[] =
    "usage: strobe diff [--json] [--quiet] A B\n"
    "       strobe diff [--json] [--quiet] [--thread NAME|INDEX | --window NAME] FILE --frames N M\n"
    "\n"
    "A B: per scope site, the change from capture A to capture B in count, total,\n"
    "p50 and p95 (nearest-rank, each with its n), sites matched by name, file and\n"
    "line, sorted by the growth of their total; sites only in B are 'appeared',\n"
    "sites only in A 'vanished'.\n"
    "\n"
    "FILE --frames N M: the spans of frames N and M (numbered as in `strobe report`:\n"
    "the pass operation with frame id N when the capture has passes, else the interval\n"
    "from the Nth FRAME mark to the next on a thread, else the Nth top-level scope;\n"
    "docs/frames.md), a span being a frame's when it began while that frame was the\n"
    "innermost operation open on its thread. Spans are matched by their path of names\n"
    "from the root (e.g. frame/update/work): which grew, shrank, appeared or vanished,\n"
    "largest change first. --window NAME (passes; \"main\", or \"process/main\" in a\n"
    "merged capture) or --thread (marks, scopes) picks the series; by default, that of\n"
    "the first frame numbered N.\n"
    "\n"
    "  --json     machine-readable output\n"
    "  --quiet    no progress bar\n"
    "\n"
    "Exit: 0 ok, 1 a capture unreadable, corrupt or truncated, 2 usage (or no such\n"
    "frame), 3 output.\n";

static double total_growth(const site_pair *p) { return (p->sb ? p->sb->total_ns : 0) - (p->sa ? p->sa->total_ns : 0); }
static double self_growth(const site_pair *p) { return (p->sb ? p->sb->self_ns : 0) - (p->sa ? p->sa->self_ns : 0); }

/* Growth of total first; on a tie (a site and the ancestors it made grow by
 * the same amount) the one whose own self time grew is the cause: first. */
static int by_growth(const void *x, const void *y) {
  const site_pair *a = x, *b = y;
  double ga = total_growth(a), gb = total_growth(b);
  if (ga != gb) return ga < gb ? 1 : -1;
  ga = self_growth(a);
  gb = self_growth(b);
  if (ga != gb) return ga < gb ? 1 : -1;
  const char *na = a->a ? a->a->name : a->b->name, *nb = b->a ? b->a->name : b->b->name;
  return strcmp(na, nb);
}

static const char *status_of(const site_pair *p) {
  if (!p->sa) return "appeared";
  if (!p->sb) return "vanished";
  if (p->sb->total_ns > p->sa->total_ns) return "grew";
  if (p->sb->total_ns < p->sa->total_ns) return "shrank";
  return "same";
}

static void side_json(strobe__json *j, const char *key, const agg_site *s, const strobe__dist *d) {
  if (!s) {
    strobe__json_null(j, key);
    return;
  }
  strobe__json_object(j, key);
  strobe__json_uint(j, "count", s->count);
  strobe__json_num(j, "total_ns", s->total_ns, 1);
  strobe__json_object(j, "p50");
  strobe__json_num(j, "ns", d->p50, 1);
  strobe__json_uint(j, "n", d->n);
  strobe__json_end(j);
  strobe__json_object(j, "p95");
  strobe__json_num(j, "ns", d->p95, 1);
  strobe__json_uint(j, "n", d->n);
  strobe__json_end(j);
  strobe__json_end(j);
}

static void write_json(cli_output *o, const cli_input *ia, const cli_input *ib, int mismatch, site_pair *p, long n) {
  strobe__json j = {0};
  strobe__json_object(&j, NULL);
  strobe__json_str(&j, "a", ia->path);
  strobe__json_str(&j, "b", ib->path);
  strobe__json_bool(&j, "clock_mismatch", mismatch);
  strobe__json_str(&j, "sorted_by", "growth of total (b - a), then of self time, largest first");
  strobe__json_array(&j, "sites");
  for (long i = 0; i < n; i++) {
    const strobe_capture_site *s = p[i].a ? p[i].a : p[i].b;
    double ta = p[i].sa ? p[i].sa->total_ns : 0, tb = p[i].sb ? p[i].sb->total_ns : 0;
    strobe__json_object(&j, NULL);
    strobe__json_str(&j, "name", s->name);
    strobe__json_str(&j, "file", s->file);
    strobe__json_uint(&j, "line", s->line);
    strobe__json_str(&j, "status", status_of(&p[i]));
    side_json(&j, "a", p[i].sa, &p[i].da);
    side_json(&j, "b", p[i].sb, &p[i].db);
    strobe__json_num(&j, "total_change_ns", tb - ta, 1);
    strobe__json_num(&j, "self_change_ns", self_growth(&p[i]), 1);
    if (p[i].sa && p[i].sb && ta > 0) strobe__json_num(&j, "total_change_pct", (tb - ta) / ta * 100.0, 2);
    else strobe__json_null(&j, "total_change_pct");
    if (p[i].sa && p[i].sb) {
      strobe__json_num(&j, "p50_change_ns", p[i].db.p50 - p[i].da.p50, 1);
      strobe__json_num(&j, "p95_change_ns", p[i].db.p95 - p[i].da.p95, 1);
    } else {
      strobe__json_null(&j, "p50_change_ns");
      strobe__json_null(&j, "p95_change_ns");
    }
    strobe__json_end(&j);
  }
  strobe__json_end(&j);
  strobe__json_end(&j);
  cli_output_json(o, &j);
}

/* A duration cell, or "-" for a side without the site. */
static void cell_dur(FILE *f, int w, int present, double ns) { cli_cell(f, w, present ? cli_dur(ns) : "-"); }

static void write_text(cli_output *o, const cli_input *ia, const cli_input *ib, site_pair *p, long n) {
  FILE *f = o->f;
  fprintf(f, "diff  A = %s\n      B = %s\n", ia->path, ib->path);
  fprintf(f, "per scope site, sorted by growth of total (B - A), then of self time; times in the unit that fits each;\n"
             "p50/p95 nearest-rank over n durations\n\n");
  if (n == 0) {
    fprintf(f, "  no completed scopes in either capture\n");
    return;
  }
  int width = 4;
  for (long i = 0; i < n; i++) {
    int l = (int)strlen((p[i].a ? p[i].a : p[i].b)->name);
    if (l > width) width = l;
  }
  if (width > 32) width = 32;
  fprintf(f, "  %-*s %9s %9s %10s %10s %11s %8s %11s %10s %10s %10s %10s %7s %7s  %s\n", width, "site", "count A",
          "count B", "total A", "total B", "change", "change%", "self change", "p50 A", "p50 B", "p95 A", "p95 B", "n A",
          "n B", "status");
  for (long i = 0; i < n; i++) {
    const site_pair *q = &p[i];
    const strobe_capture_site *s = q->a ? q->a : q->b;
    double ta = q->sa ? q->sa->total_ns : 0, tb = q->sb ? q->sb->total_ns : 0;
    fprintf(f, "  %-*.*s", width, width, s->name);
    if (q->sa) fprintf(f, " %9llu", (unsigned long long)q->sa->count);
    else fprintf(f, " %9s", "-");
    if (q->sb) fprintf(f, " %9llu", (unsigned long long)q->sb->count);
    else fprintf(f, " %9s", "-");
    cell_dur(f, 10, q->sa != NULL, ta);
    cell_dur(f, 10, q->sb != NULL, tb);
    cli_cell(f, 11, cli_change(tb - ta));
    if (q->sa && q->sb && ta > 0) fprintf(f, " %+7.1f%%", (tb - ta) / ta * 100.0);
    else fprintf(f, " %8s", q->sa ? "-" : "new");
    cli_cell(f, 11, cli_change(self_growth(q)));
    cell_dur(f, 10, q->sa != NULL, q->da.p50);
    cell_dur(f, 10, q->sb != NULL, q->db.p50);
    cell_dur(f, 10, q->sa != NULL, q->da.p95);
    cell_dur(f, 10, q->sb != NULL, q->db.p95);
    if (q->sa) fprintf(f, " %7zu", q->da.n);
    else fprintf(f, " %7s", "-");
    if (q->sb) fprintf(f, " %7zu", q->db.n);
    else fprintf(f, " %7s", "-");
    fprintf(f, "  %s\n", status_of(q));
  }
}

/* Reads one capture into an aggregate; returns CLI_OK or CLI_FAIL (after a message). */
int diff_load(const char *cmd, const char *path, int quiet, cli_input *in, agg *a, int *read_status) {
  int rc = cli_open(in, cmd, path, quiet);
  if (rc) return rc;
  if (agg_init(a, in->cap, NULL, 0)) {
    cli_error(cmd, "out of memory");
    cli_close(in);
    return CLI_FAIL;
  }
  agg_read_all(a, in);
  *read_status = cli_finish_read(in);
  if (a->failed) {
    cli_error(cmd, "%s: out of memory while reading", path);
    *read_status = CLI_FAIL;
  }
  return CLI_OK;
}

int cmd_diff(int argc, char **argv) {
  static const struct option opts[] = {{"frames", no_argument, NULL, 'f'}, {"thread", required_argument, NULL, 't'},
                                       {"window", required_argument, NULL, 'w'},
                                       {"json", no_argument, NULL, 'j'},   {"quiet", no_argument, NULL, 'q'},
                                       {"help", no_argument, NULL, 'h'},   {0}};
  int json = 0, quiet = 0, by_frames = 0, ch;
  const char *thread = NULL, *window = NULL;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
    switch (ch) {
      case 'f': by_frames = 1; break;
      case 't': thread = optarg; break;
      case 'w': window = optarg; break;
      case 'j': json = 1; break;
      case 'q': quiet = 1; break;
      case 'h': fputs(g_usage, stdout); return CLI_OK;
      default: return cli_bad_option("diff", argv, optind);
    }
  }
  int nargs = argc - optind;
  if (by_frames) {
    /* getopt moved the operands to the end: FILE N M. */
    uint64_t n, m;
    if (nargs != 3) return cli_usage_error("diff", "--frames expects FILE --frames N M");
    if (cli_parse_u64(argv[optind + 1], &n) || cli_parse_u64(argv[optind + 2], &m) || n == 0 || m == 0)
      return cli_usage_error("diff", "--frames needs two frame numbers (1, 2, ...), not '%s' '%s'", argv[optind + 1],
                             argv[optind + 2]);
    int rc = cli_need_file("diff", argv[optind], "--frames reads the capture twice");
    return rc ? rc : frame_diff(argv[optind], n, m, thread, window, json, quiet);
  }
  if (thread || window) return cli_usage_error("diff", "--%s applies to --frames only", thread ? "thread" : "window");
  if (nargs != 2) return cli_usage_error("diff", "expected two capture files A B (or FILE --frames N M)");
  if (cli_is_stdin(argv[optind]) && cli_is_stdin(argv[optind + 1]))
    return cli_usage_error("diff", "only one of A and B can be standard input ('-')");

  cli_input ia, ib;
  agg a, b;
  int sa = CLI_OK, sb = CLI_OK;
  int rc = diff_load("diff", argv[optind], quiet, &ia, &a, &sa);
  if (rc) return rc;
  if ((rc = diff_load("diff", argv[optind + 1], quiet, &ib, &b, &sb))) {
    agg_free(&a);
    cli_close(&ia);
    return rc;
  }
  int mismatch = cli_clock_mismatch("diff", &ia, &ib);
  site_pair *pairs;
  long n = pair_sites(&a, ia.cap, &b, ib.cap, &pairs);
  cli_output o;
  if (n < 0) {
    cli_error("diff", "out of memory");
    rc = CLI_FAIL;
  } else if ((rc = cli_output_open(&o, "diff", NULL)) == CLI_OK) {
    qsort(pairs, (size_t)n, sizeof *pairs, by_growth);
    if (json) write_json(&o, &ia, &ib, mismatch, pairs, n);
    else write_text(&o, &ia, &ib, pairs, n);
    rc = cli_output_close(&o);
  }
  free(pairs);
  agg_free(&a);
  agg_free(&b);
  cli_close(&ia);
  cli_close(&ib);
  if (rc) return rc;
  return sa ? sa : sb;
}
