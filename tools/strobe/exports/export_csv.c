/*
 * export_csv.c — one CSV row per scope site, in the columns of Tracy's CSV
 * export: name,src_file,src_line,total_ns,total_perc,counts,mean_ns,min_ns,
 * max_ns,std_ns. total_perc is the site's total as a percentage of the
 * capture's span (start to end); nested sites overlap, so the column does
 * not sum to 100. std_ns is the population standard deviation over every
 * scope. Rows are sorted by total, largest first; fields are quoted per
 * RFC 4180 when they hold a comma, quote or line break. The filters
 * (export.h >>filters) are the report's: a scope counts when its thread
 * passes --thread and it lies wholly inside --from/--to.
 */
#include <math.h>
#include <stdlib.h>

#include "analysis/aggregate.h"
#include "export.h"

void export_csv_field(FILE *f, const char *s) {
  if (!strpbrk(s, ",\"\r\n")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

int export_csv(cli_input *in, FILE *out, export_filter *f) {
  agg a;
  agg_filter flt = {f->thread, NULL, f->has_range, f->has_range ? f->from_ns : -INFINITY, f->has_range ? f->to_ns : INFINITY, NULL};
  if (agg_init(&a, in->cap, &flt, 0)) {
    cli_error(in->cmd, "out of memory");
    return CLI_FAIL;
  }
  agg_read_all(&a, in);
  int status = cli_finish_read(in);
  f->thread_matched = !f->thread || a.thread_matched;
  strobe_capture_totals t = strobe_capture_query_totals(in->cap);
  double span = strobe_capture_ticks_to_ns(in->cap, t.end_ticks) - cli_start_ns(in->cap);
  uint32_t n = 0;
  uint32_t *ids = agg_sorted_scopes(&a, in->cap, &n);
  if (!ids || a.failed) {
    cli_error(in->cmd, "out of memory");
    status = CLI_FAIL;
  }
  fputs("name,src_file,src_line,total_ns,total_perc,counts,mean_ns,min_ns,max_ns,std_ns\n", out);
  for (uint32_t i = 0; ids && i < n; i++) {
    const strobe_capture_site *s = strobe_capture_query_site(in->cap, ids[i]);
    const agg_site *st = &a.sites[ids[i]];
    double mean = st->total_ns / (double)st->count;
    export_csv_field(out, s->name);
    fputc(',', out);
    export_csv_field(out, s->file);
    fprintf(out, ",%u,%.0f,%.4f,%llu,%.1f,%.0f,%.0f,%.1f\n", s->line, st->total_ns,
            span > 0 ? st->total_ns / span * 100.0 : 0.0, (unsigned long long)st->count, mean, st->min_ns, st->max_ns,
            agg_stddev(st));
  }
  free(ids);
  agg_free(&a);
  return status;
}
