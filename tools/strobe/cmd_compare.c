/*
 * cmd_compare.c — `strobe compare BASE NEW --max-regression PCT`: the CI
 * performance gate. For every scope site present in both captures with at
 * least --min-n durations behind its percentile in each, the chosen metric
 * (p95 by default) of NEW is compared with BASE; a growth of more than PCT
 * percent is a regression. Exit 1 names the offenders; exit 0 means none.
 *
 * Captures from different clocks are refused (exit 2) unless
 * --allow-clock-mismatch: a gate must not pass or fail on a unit error.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "cli.h"
#include "format/json_writer.h"

static const char g_usage[] =
    "usage: strobe compare BASE NEW --max-regression PCT [--metric p50|p95|p99]\n"
    "                      [--min-n N] [--allow-clock-mismatch] [--json] [--quiet]\n"
    "\n"
    "Compares each scope site present in both captures (matched by name, file and\n"
    "line) and fails when NEW's metric exceeds BASE's by more than PCT percent.\n"
    "\n"
    "  --max-regression PCT    allowed growth in percent (required, >= 0)\n"
    "  --metric p50|p95|p99    nearest-rank percentile compared (default p95)\n"
    "  --min-n N               only sites whose percentile rests on at least N\n"
    "                          durations in both captures (default 10)\n"
    "  --allow-clock-mismatch  compare captures from different clocks anyway\n"
    "  --json                  machine-readable output\n"
    "  --quiet                 no progress bar\n"
    "\n"
    "Exit: 0 no site regressed, 1 a site regressed (named on stderr) or a capture\n"
    "could not be read, 2 usage error or captures from different clocks, 3 output.\n";

typedef struct row {
  const site_pair *p;
  double base, now, pct; /* metric in ns; growth in percent (INFINITY from a zero base) */
  const char *status;    /* "regressed", "ok", "improved", "skipped" */
} row;

static double metric_of(const strobe__dist *d, int metric) {
  return metric == 50 ? d->p50 : metric == 99 ? d->p99 : d->p95;
}

static int by_pct(const void *x, const void *y) {
  const row *a = x, *b = y;
  int sa = strcmp(a->status, "skipped") == 0, sb = strcmp(b->status, "skipped") == 0;
  if (sa != sb) return sa - sb;
  if (a->pct != b->pct) return a->pct < b->pct ? 1 : -1;
  return strcmp(a->p->a->name, b->p->a->name);
}

static void write_json(cli_output *o, const char *base, const char *now, int metric, double max_pct, uint64_t min_n,
                       int mismatch, const row *rows, size_t n, size_t regressed) {
  strobe__json j = {0};
  char mname[8];
  snprintf(mname, sizeof mname, "p%d", metric);
  strobe__json_object(&j, NULL);
  strobe__json_str(&j, "base", base);
  strobe__json_str(&j, "new", now);
  strobe__json_str(&j, "metric", mname);
  strobe__json_num(&j, "max_regression_pct", max_pct, 3);
  strobe__json_uint(&j, "min_n", min_n);
  strobe__json_bool(&j, "clock_mismatch", mismatch);
  strobe__json_bool(&j, "passed", regressed == 0);
  strobe__json_uint(&j, "regressed", regressed);
  strobe__json_array(&j, "sites");
  for (size_t i = 0; i < n; i++) {
    const site_pair *p = rows[i].p;
    strobe__json_object(&j, NULL);
    strobe__json_str(&j, "name", p->a->name);
    strobe__json_str(&j, "file", p->a->file);
    strobe__json_uint(&j, "line", p->a->line);
    strobe__json_str(&j, "status", rows[i].status);
    strobe__json_num(&j, "base_ns", rows[i].base, 1);
    strobe__json_num(&j, "new_ns", rows[i].now, 1);
    strobe__json_num(&j, "change_pct", rows[i].pct, 2); /* null when the base is 0 */
    strobe__json_uint(&j, "base_n", p->da.n);
    strobe__json_uint(&j, "new_n", p->db.n);
    strobe__json_end(&j);
  }
  strobe__json_end(&j);
  strobe__json_end(&j);
  cli_output_json(o, &j);
}

static void write_text(cli_output *o, const char *base, const char *now, int metric, double max_pct, uint64_t min_n,
                       const row *rows, size_t n, size_t regressed, size_t only_one) {
  FILE *f = o->f;
  fprintf(f, "compare  base %s\n         new  %s\n", base, now);
  fprintf(f, "metric p%d (nearest-rank, ms), allowed growth %.2f%%, sites with n >= %llu in both\n\n", metric, max_pct,
          (unsigned long long)min_n);
  int width = 4;
  for (size_t i = 0; i < n; i++) {
    int l = (int)strlen(rows[i].p->a->name);
    if (l > width) width = l;
  }
  if (width > 32) width = 32;
  if (n) fprintf(f, "  %-*s %12s %12s %9s %7s %7s  %s\n", width, "site", "base", "new", "change", "n base", "n new", "status");
  for (size_t i = 0; i < n; i++) {
    const row *r = &rows[i];
    fprintf(f, "  %-*.*s %12.4f %12.4f ", width, width, r->p->a->name, r->base / 1e6, r->now / 1e6);
    if (isfinite(r->pct)) fprintf(f, "%+8.1f%%", r->pct);
    else fprintf(f, "%9s", "from 0");
    fprintf(f, " %7zu %7zu  %s\n", r->p->da.n, r->p->db.n, r->status);
  }
  if (!n) fprintf(f, "  no scope site is present in both captures\n");
  if (only_one) fprintf(f, "\n%zu sites are in only one capture (see `strobe diff`); they are not gated\n", only_one);
  fprintf(f, "\n%s: %zu of %zu compared sites regressed by more than %.2f%%\n", regressed ? "FAIL" : "PASS", regressed, n,
          max_pct);
}

int cmd_compare(int argc, char **argv) {
  static const struct option opts[] = {{"max-regression", required_argument, NULL, 'r'},
                                       {"metric", required_argument, NULL, 'm'},
                                       {"min-n", required_argument, NULL, 'n'},
                                       {"allow-clock-mismatch", no_argument, NULL, 'A'},
                                       {"json", no_argument, NULL, 'j'},
                                       {"quiet", no_argument, NULL, 'q'},
                                       {"help", no_argument, NULL, 'h'},
                                       {0}};
  int json = 0, quiet = 0, allow = 0, have_pct = 0, metric = 95, ch;
  double max_pct = 0;
  uint64_t min_n = 10;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
    switch (ch) {
      case 'r':
        if (cli_parse_double(optarg, &max_pct) || max_pct < 0)
          return cli_usage_error("compare", "--max-regression needs a percentage >= 0, not '%s'", optarg);
        have_pct = 1;
        break;
      case 'm':
        if (!strcmp(optarg, "p50")) metric = 50;
        else if (!strcmp(optarg, "p95")) metric = 95;
        else if (!strcmp(optarg, "p99")) metric = 99;
        else return cli_usage_error("compare", "--metric must be p50, p95 or p99, not '%s'", optarg);
        break;
      case 'n':
        if (cli_parse_u64(optarg, &min_n) || min_n == 0)
          return cli_usage_error("compare", "--min-n needs a count >= 1, not '%s'", optarg);
        break;
      case 'A': allow = 1; break;
      case 'j': json = 1; break;
      case 'q': quiet = 1; break;
      case 'h': fputs(g_usage, stdout); return CLI_OK;
      default: return cli_bad_option("compare", argv, optind);
    }
  }
  if (argc - optind != 2) return cli_usage_error("compare", "expected two capture files BASE NEW");
  if (!have_pct) return cli_usage_error("compare", "--max-regression PCT is required");

  cli_input ib, in_;
  agg base, now;
  int sb = CLI_OK, sn = CLI_OK;
  int rc = diff_load("compare", argv[optind], quiet, &ib, &base, &sb);
  if (rc) return rc;
  if ((rc = diff_load("compare", argv[optind + 1], quiet, &in_, &now, &sn))) {
    agg_free(&base);
    cli_close(&ib);
    return rc;
  }
  int mismatch = cli_clock_mismatch("compare", &ib, &in_);
  site_pair *pairs = NULL;
  row *rows = NULL;
  long np = -1;
  if (mismatch && !allow) {
    cli_error("compare", "refusing to gate on captures from different clocks (use --allow-clock-mismatch to compare anyway)");
    rc = CLI_USAGE;
    goto done;
  }
  if (sb || sn) { /* a gate on partly read input would be a guess */
    cli_error("compare", "not gating on a capture that could not be read whole");
    rc = CLI_FAIL;
    goto done;
  }
  np = pair_sites(&base, ib.cap, &now, in_.cap, &pairs);
  rows = np >= 0 ? calloc((size_t)np + 1, sizeof *rows) : NULL;
  if (!rows) {
    cli_error("compare", "out of memory");
    rc = CLI_FAIL;
    goto done;
  }
  size_t n = 0, regressed = 0, only_one = 0;
  for (long i = 0; i < np; i++) {
    const site_pair *p = &pairs[i];
    if (!p->sa || !p->sb) {
      only_one++;
      continue;
    }
    row *r = &rows[n++];
    r->p = p;
    r->base = metric_of(&p->da, metric);
    r->now = metric_of(&p->db, metric);
    r->pct = r->base > 0 ? (r->now - r->base) / r->base * 100.0 : (r->now > 0 ? INFINITY : 0);
    if (p->da.n < min_n || p->db.n < min_n) r->status = "skipped";
    else if (r->pct > max_pct) r->status = "regressed", regressed++;
    else if (r->pct < -max_pct) r->status = "improved";
    else r->status = "ok";
  }
  qsort(rows, n, sizeof *rows, by_pct);
  cli_output o;
  if ((rc = cli_output_open(&o, "compare", NULL)) == CLI_OK) {
    if (json) write_json(&o, argv[optind], argv[optind + 1], metric, max_pct, min_n, mismatch, rows, n, regressed);
    else write_text(&o, argv[optind], argv[optind + 1], metric, max_pct, min_n, rows, n, regressed, only_one);
    rc = cli_output_close(&o);
  }
  for (size_t i = 0; i < n; i++) {
    if (strcmp(rows[i].status, "regressed") != 0) continue;
    if (isfinite(rows[i].pct))
      cli_error("compare", "regression: %s (%s:%u) p%d %.4f ms -> %.4f ms (%+.1f%%, allowed %.2f%%)", rows[i].p->a->name,
                rows[i].p->a->file, rows[i].p->a->line, metric, rows[i].base / 1e6, rows[i].now / 1e6, rows[i].pct,
                max_pct);
    else
      cli_error("compare", "regression: %s (%s:%u) p%d 0 ms -> %.4f ms", rows[i].p->a->name, rows[i].p->a->file,
                rows[i].p->a->line, metric, rows[i].now / 1e6);
  }
  if (!rc && regressed) rc = CLI_FAIL;
done:
  free(rows);
  free(pairs);
  agg_free(&base);
  agg_free(&now);
  cli_close(&ib);
  cli_close(&in_);
  return rc;
}
