/*
 * cmd_compare.c — `strobe compare BASE NEW --max-regression PCT`: the CI
 * performance gate. For every scope site present in both captures with at
 * least --min-n durations behind its percentile in each, the chosen metric
 * (p95 by default) of NEW is compared with BASE; a growth of more than PCT
 * percent is a regression.
 *
 * A gate must never pass on nothing: it also fails when no site was
 * compared, when a site BASE has with n >= --min-n is missing from NEW (lost
 * coverage, unless --allow-missing), and when either capture lost more
 * events than --max-lost (default 0). Every failure is named on stderr; the
 * summary counts compared, skipped (and why) and missing sites apart.
 *
 * Captures from different clocks are refused (exit 2) unless
 * --allow-clock-mismatch: a gate must not pass or fail on a unit error.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/aggregate.h"
#include "cli.h"
#include "format/json_writer.h"

static const char g_usage[] =
    "usage: strobe compare BASE NEW --max-regression PCT [--metric p50|p95|p99]\n"
    "                      [--min-n N] [--allow-missing] [--max-lost N]\n"
    "                      [--allow-clock-mismatch] [--json] [--quiet]\n"
    "\n"
    "Compares each scope site present in both captures (matched by name, file and\n"
    "line) and fails when NEW's metric exceeds BASE's by more than PCT percent.\n"
    "It also fails when nothing was compared, when a site BASE has with n >= N is\n"
    "missing from NEW (lost coverage), and when a capture lost events.\n"
    "\n"
    "  --max-regression PCT    allowed growth in percent (required, >= 0)\n"
    "  --metric p50|p95|p99    nearest-rank percentile compared (default p95)\n"
    "  --min-n N               only sites whose percentile rests on at least N\n"
    "                          durations in both captures (default 10); the others\n"
    "                          are skipped, and say in which capture n was short\n"
    "  --allow-missing         do not fail when sites of BASE are missing from NEW\n"
    "  --max-lost N            events either capture may have lost (default 0)\n"
    "  --allow-clock-mismatch  compare captures from different clocks anyway\n"
    "  --json                  machine-readable output\n"
    "  --quiet                 no progress bar\n"
    "\n"
    "BASE or NEW may be '-' (standard input).\n"
    "\n"
    "Exit: 0 passed, 1 failed (a regression, nothing compared, missing sites, lost\n"
    "events: each named on stderr) or a capture could not be read whole, 2 usage\n"
    "error, an input that is not a regular file, or captures from different clocks,\n"
    "3 output.\n";

typedef struct row {
  const site_pair *p;
  double base, now, pct; /* metric in ns; growth in percent (INFINITY from a zero base) */
  const char *status;    /* "regressed", "ok", "improved", "skipped", "missing" */
  const char *why;       /* skipped: "n < N in base", "... in new", "... in both"; else NULL */
} row;

/* What the gate counted: each failure reason has its own number. */
typedef struct verdict {
  size_t compared, regressed, improved;
  size_t skipped, skipped_base, skipped_new, skipped_both; /* n below --min-n: where */
  size_t missing;       /* in BASE with n >= --min-n, absent from NEW */
  size_t missing_small; /* in BASE with n < --min-n, absent from NEW: not coverage the gate had */
  size_t only_new;      /* in NEW only: not gated */
  uint64_t lost_base, lost_new, max_lost;
  int allow_missing;
} verdict;

static int failed(const verdict *v) {
  return v->regressed || !v->compared || (v->missing && !v->allow_missing) || v->lost_base > v->max_lost ||
         v->lost_new > v->max_lost;
}

static double metric_of(const strobe__dist *d, int metric) {
  return metric == 50 ? d->p50 : metric == 99 ? d->p99 : d->p95;
}

static int rank_of(const row *r) {
  return !strcmp(r->status, "missing") ? 0 : !strcmp(r->status, "skipped") ? 2 : 1;
}

static int by_pct(const void *x, const void *y) {
  const row *a = x, *b = y;
  int ra = rank_of(a), rb = rank_of(b);
  if (ra != rb) return ra - rb;
  if (a->pct != b->pct) return a->pct < b->pct ? 1 : -1;
  return strcmp(a->p->a->name, b->p->a->name);
}

static void write_json(cli_output *o, const char *base, const char *now, int metric, double max_pct, uint64_t min_n,
                       int mismatch, const row *rows, size_t n, const verdict *v) {
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
  strobe__json_bool(&j, "passed", !failed(v));
  strobe__json_uint(&j, "compared", v->compared);
  strobe__json_uint(&j, "regressed", v->regressed);
  strobe__json_uint(&j, "improved", v->improved);
  strobe__json_object(&j, "skipped");
  strobe__json_uint(&j, "count", v->skipped);
  strobe__json_uint(&j, "n_short_in_base", v->skipped_base);
  strobe__json_uint(&j, "n_short_in_new", v->skipped_new);
  strobe__json_uint(&j, "n_short_in_both", v->skipped_both);
  strobe__json_end(&j);
  strobe__json_uint(&j, "missing", v->missing);
  strobe__json_bool(&j, "allow_missing", v->allow_missing);
  strobe__json_uint(&j, "missing_below_min_n", v->missing_small);
  strobe__json_uint(&j, "only_in_new", v->only_new);
  strobe__json_object(&j, "lost_events");
  strobe__json_uint(&j, "base", v->lost_base);
  strobe__json_uint(&j, "new", v->lost_new);
  strobe__json_uint(&j, "max_lost", v->max_lost);
  strobe__json_end(&j);
  strobe__json_array(&j, "sites");
  for (size_t i = 0; i < n; i++) {
    const site_pair *p = rows[i].p;
    int has_new = p->sb != NULL;
    strobe__json_object(&j, NULL);
    strobe__json_str(&j, "name", p->a->name);
    strobe__json_str(&j, "file", p->a->file);
    strobe__json_uint(&j, "line", p->a->line);
    strobe__json_str(&j, "status", rows[i].status);
    if (rows[i].why) strobe__json_str(&j, "why", rows[i].why);
    else strobe__json_null(&j, "why");
    strobe__json_num(&j, "base_ns", rows[i].base, 1);
    if (has_new) strobe__json_num(&j, "new_ns", rows[i].now, 1);
    else strobe__json_null(&j, "new_ns");
    if (has_new) strobe__json_num(&j, "change_pct", rows[i].pct, 2); /* null when the base is 0 */
    else strobe__json_null(&j, "change_pct");
    strobe__json_uint(&j, "base_n", p->da.n);
    strobe__json_uint(&j, "new_n", has_new ? p->db.n : 0);
    strobe__json_end(&j);
  }
  strobe__json_end(&j);
  strobe__json_end(&j);
  cli_output_json(o, &j);
}

static void write_text(cli_output *o, const char *base, const char *now, int metric, double max_pct, uint64_t min_n,
                       const row *rows, size_t n, const verdict *v) {
  FILE *f = o->f;
  fprintf(f, "compare  base %s\n         new  %s\n", base, now);
  fprintf(f, "metric p%d (nearest-rank), allowed growth %.2f%%, sites with n >= %llu in both\n\n", metric, max_pct,
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
    fprintf(f, "  %-*.*s", width, width, r->p->a->name);
    cli_cell(f, 12, cli_dur(r->base));
    if (!r->p->sb) fprintf(f, " %12s %9s", "-", "-");
    else if (isfinite(r->pct)) {
      cli_cell(f, 12, cli_dur(r->now));
      fprintf(f, " %+8.1f%%", r->pct);
    } else {
      cli_cell(f, 12, cli_dur(r->now));
      fprintf(f, " %9s", "from 0");
    }
    fprintf(f, " %7zu %7zu  %s", r->p->da.n, r->p->sb ? r->p->db.n : 0, r->status);
    if (r->why) fprintf(f, " (%s)", r->why);
    fputc('\n', f);
  }
  if (!n) fprintf(f, "  no scope site is present in both captures\n");
  if (v->only_new) fprintf(f, "\n%zu sites are only in NEW (see `strobe diff`); they are not gated\n", v->only_new);
  if (v->missing_small)
    fprintf(f, "%zu sites of BASE with n < %llu are not in NEW; below --min-n, they are not gated\n", v->missing_small,
            (unsigned long long)min_n);
  fprintf(f, "\n%s: %zu compared (%zu regressed by more than %.2f%%, %zu improved); %zu skipped (n < %llu: %zu in base, "
          "%zu in new, %zu in both); %zu missing from NEW%s; events lost: base %llu, new %llu (allowed %llu)\n",
          failed(v) ? "FAIL" : "PASS", v->compared, v->regressed, max_pct, v->improved, v->skipped,
          (unsigned long long)min_n, v->skipped_base, v->skipped_new, v->skipped_both, v->missing,
          v->missing && v->allow_missing ? " (allowed)" : "", (unsigned long long)v->lost_base,
          (unsigned long long)v->lost_new, (unsigned long long)v->max_lost);
}

/* Each reason the gate failed, on stderr. */
static void say_failures(const row *rows, size_t n, int metric, double max_pct, const verdict *v,
                         const char *base, const char *now) {
  for (size_t i = 0; i < n; i++) {
    const row *r = &rows[i];
    if (!strcmp(r->status, "regressed")) {
      if (isfinite(r->pct))
        cli_error("compare", "regression: %s (%s:%u) p%d %s -> %s (%+.1f%%, allowed %.2f%%)", r->p->a->name,
                  r->p->a->file, r->p->a->line, metric, cli_dur(r->base), cli_dur(r->now), r->pct, max_pct);
      else
        cli_error("compare", "regression: %s (%s:%u) p%d 0 ns -> %s", r->p->a->name, r->p->a->file,
                  r->p->a->line, metric, cli_dur(r->now));
    } else if (!strcmp(r->status, "missing") && !v->allow_missing) {
      cli_error("compare", "coverage lost: %s (%s:%u) has %zu durations in BASE and none in NEW (--allow-missing "
                "accepts it)", r->p->a->name, r->p->a->file, r->p->a->line, r->p->da.n);
    }
  }
  if (!v->compared)
    cli_error("compare", "nothing was compared: %s (a gate never passes on nothing)",
              n ? "every site common to both captures has n below --min-n in one of them"
                : "no scope site has completed scopes in both captures");
  if (v->lost_base > v->max_lost)
    cli_error("compare", "%s lost %llu events (allowed %llu: --max-lost)", base, (unsigned long long)v->lost_base,
              (unsigned long long)v->max_lost);
  if (v->lost_new > v->max_lost)
    cli_error("compare", "%s lost %llu events (allowed %llu: --max-lost)", now, (unsigned long long)v->lost_new,
              (unsigned long long)v->max_lost);
}

int cmd_compare(int argc, char **argv) {
  static const struct option opts[] = {{"max-regression", required_argument, NULL, 'r'},
                                       {"metric", required_argument, NULL, 'm'},
                                       {"min-n", required_argument, NULL, 'n'},
                                       {"allow-missing", no_argument, NULL, 'M'},
                                       {"max-lost", required_argument, NULL, 'L'},
                                       {"allow-clock-mismatch", no_argument, NULL, 'A'},
                                       {"json", no_argument, NULL, 'j'},
                                       {"quiet", no_argument, NULL, 'q'},
                                       {"help", no_argument, NULL, 'h'},
                                       {0}};
  int json = 0, quiet = 0, allow = 0, have_pct = 0, metric = 95, ch;
  double max_pct = 0;
  uint64_t min_n = 10;
  verdict v = {0};
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
      case 'M': v.allow_missing = 1; break;
      case 'L':
        if (cli_parse_u64(optarg, &v.max_lost))
          return cli_usage_error("compare", "--max-lost needs a count >= 0, not '%s'", optarg);
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
  if (cli_is_stdin(argv[optind]) && cli_is_stdin(argv[optind + 1]))
    return cli_usage_error("compare", "only one of BASE and NEW can be standard input ('-')");

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
  v.lost_base = strobe_capture_query_totals(ib.cap).lost;
  v.lost_new = strobe_capture_query_totals(in_.cap).lost;
  size_t n = 0;
  for (long i = 0; i < np; i++) {
    const site_pair *p = &pairs[i];
    if (!p->sa) { /* only in NEW: new code, not gated */
      v.only_new++;
      continue;
    }
    if (!p->sb && p->da.n < min_n) { /* BASE had too few to gate on it either */
      v.missing_small++;
      continue;
    }
    row *r = &rows[n++];
    r->p = p;
    r->base = metric_of(&p->da, metric);
    if (!p->sb) {
      r->status = "missing";
      v.missing++;
      continue;
    }
    r->now = metric_of(&p->db, metric);
    r->pct = r->base > 0 ? (r->now - r->base) / r->base * 100.0 : (r->now > 0 ? INFINITY : 0);
    int short_base = p->da.n < min_n, short_new = p->db.n < min_n;
    if (short_base || short_new) {
      r->status = "skipped";
      v.skipped++;
      if (short_base && short_new) r->why = "n below --min-n in both", v.skipped_both++;
      else if (short_base) r->why = "n below --min-n in base", v.skipped_base++;
      else r->why = "n below --min-n in new", v.skipped_new++;
      continue;
    }
    v.compared++;
    if (r->pct > max_pct) r->status = "regressed", v.regressed++;
    else if (r->pct < -max_pct) r->status = "improved", v.improved++;
    else r->status = "ok";
  }
  qsort(rows, n, sizeof *rows, by_pct);
  cli_output o;
  if ((rc = cli_output_open(&o, "compare", NULL)) == CLI_OK) {
    if (json) write_json(&o, ib.path, in_.path, metric, max_pct, min_n, mismatch, rows, n, &v);
    else write_text(&o, ib.path, in_.path, metric, max_pct, min_n, rows, n, &v);
    rc = cli_output_close(&o);
  }
  say_failures(rows, n, metric, max_pct, &v, ib.path, in_.path);
  if (!rc && failed(&v)) rc = CLI_FAIL;
done:
  free(rows);
  free(pairs);
  agg_free(&base);
  agg_free(&now);
  cli_close(&ib);
  cli_close(&in_);
  return rc;
}
