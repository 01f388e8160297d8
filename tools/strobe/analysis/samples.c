/*
 * samples.c — `strobe report`'s sampler sections (samples.h): the on-CPU /
 * off-CPU split of each scope site where context switches cover its scopes,
 * and with --samples the hot functions, self and inclusive.
 *
 * Owns: the split per site (a second read of the capture). Must never:
 * split a scope the switches do not cover (it is counted apart, never
 * shown as all on-CPU), or print a function's name outside local output
 * (names are application content; this is a local report of a local file).
 */
#include "samples.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "strobe/sample.h"

int samples_split(samples_report *sr, agg *a, const strobe_capture *c, const char *path, int is_stdin) {
  memset(sr, 0, sizeof *sr);
  strobe_capture_totals t = strobe_capture_query_totals(c);
  if (!t.sample_switches || !a->smp.switches) {
    sr->why = "the capture has no context switches (strobe/sample.h: the sampler with switches on)";
    return CLI_OK;
  }
  if (is_stdin) {
    sr->why = "the on/off-CPU split reads the capture twice: give a file, not standard input";
    return CLI_OK;
  }
  sr->n_sites = strobe_capture_query_site_limit(c);
  sr->sites = calloc(sr->n_sites ? sr->n_sites : 1, sizeof *sr->sites);
  if (!sr->sites) {
    sr->failed = 1;
    sr->why = "out of memory";
    return CLI_OK;
  }
  uint64_t until = t.sample_rate_hz ? t.end_ticks : 0; /* still sampling at the end: covered to it */
  cli_input in;
  int rc = cli_open(&in, "report", path, 1);
  if (rc) return rc;
  strobe_capture_record r;
  while (cli_next(&in, &r) > 0) {
    if (r.type != STROBE_REC_END || r.unwound || r.site >= sr->n_sites || r.site >= a->n_sites) continue;
    if (!a->sites[r.site].included) continue;
    if (a->filter.thread && (r.thread >= a->n_threads || !a->thread_in[r.thread])) continue;
    double begin_ns = r.time_ns - r.duration_ns;
    if (a->filter.has_range && !(begin_ns - a->start_ns >= a->filter.from_ns && r.time_ns - a->start_ns <= a->filter.to_ns))
      continue;
    const strobe_capture_thread *th = strobe_capture_query_thread(in.cap, r.thread);
    cpu_split *s = &sr->sites[r.site];
    s->scopes++;
    uint64_t dur_ticks = (uint64_t)(r.duration_ns / strobe_capture_query_header(in.cap)->ns_per_tick + 0.5);
    uint64_t off, blocked;
    if (!th || !strobe__samples_off_cpu(&a->smp, 1, until, th->os_tid, r.ticks - dur_ticks, r.ticks, &off, &blocked)) continue;
    double ns_per_tick = strobe_capture_query_header(in.cap)->ns_per_tick;
    s->covered++;
    s->wall_ns += r.duration_ns;
    s->off_ns += (double)off * ns_per_tick;
    s->blocked_ns += (double)blocked * ns_per_tick;
  }
  rc = in.rc < 0 ? CLI_FAIL : CLI_OK;
  cli_close(&in);
  return rc;
}

void samples_report_free(samples_report *sr) {
  free(sr->sites);
  memset(sr, 0, sizeof *sr);
}

static const char *func_name(const strobe_capture *c, uint32_t id) {
  const strobe_capture_function *f = strobe_capture_query_function(c, id);
  return f ? f->name : "?";
}

static double pct(uint64_t n, uint64_t of) { return of ? 100.0 * (double)n / (double)of : 0.0; }

void samples_text(FILE *f, const samples_report *sr, agg *a, const strobe_capture *c, const uint32_t *ids,
                  uint32_t n_ids, uint32_t functions) {
  strobe_capture_totals t = strobe_capture_query_totals(c);
  if (!t.samples && !t.switches && !t.sample_rate_hz && !t.samples_written) return; /* no sampler: nothing to say */
  fprintf(f, "\nsampler: %llu samples, %llu context switches", (unsigned long long)t.samples,
          (unsigned long long)t.switches);
  if (t.sample_rate_hz) fprintf(f, " at %u Hz of each thread's CPU time", t.sample_rate_hz);
  fputc('\n', f);
  if (t.samples_lost || t.sample_frames_cut || t.sample_addresses_cut)
    fprintf(f, "  cut: %llu records the kernel dropped (buffer full), %llu frames past %u per stack, %llu frames "
               "past the address table\n",
            (unsigned long long)t.samples_lost, (unsigned long long)t.sample_frames_cut, STROBE_SAMPLE_MAX_FRAMES,
            (unsigned long long)t.sample_addresses_cut);
  if (sr->why) {
    fprintf(f, "  on/off CPU: not split: %s\n", sr->why);
  } else {
    fprintf(f, "  on/off CPU of each scope site's wall time, over the scopes its thread's switches cover\n"
               "  (off-CPU: blocked = asleep or waiting; preempted = runnable without a CPU)%s\n",
            t.samples_lost ? "; records were dropped, so switches may be missing" : "");
    fprintf(f, "  %-32s %8s %8s %10s %10s %10s %10s\n", "site", "covered", "of", "wall", "on-CPU", "blocked",
            "preempted");
    for (uint32_t i = 0; i < n_ids; i++) {
      const cpu_split *s = ids[i] < sr->n_sites ? &sr->sites[ids[i]] : NULL;
      if (!s || !s->scopes) continue;
      fprintf(f, "  %-32.32s %8llu %8llu", strobe_capture_query_site(c, ids[i])->name,
              (unsigned long long)s->covered, (unsigned long long)s->scopes);
      cli_cell(f, 10, cli_dur(s->wall_ns));
      cli_cell(f, 10, cli_dur(s->wall_ns - s->off_ns));
      cli_cell(f, 10, cli_dur(s->blocked_ns));
      cli_cell(f, 10, cli_dur(s->off_ns - s->blocked_ns));
      fputc('\n', f);
    }
  }
  if (!functions) return;
  uint32_t n = 0;
  uint32_t *by_self = strobe__samples_top(&a->smp, 1, &n);
  uint32_t m = 0;
  uint32_t *by_incl = strobe__samples_top(&a->smp, 0, &m);
  uint64_t total = a->smp.samples;
  for (int pass = 0; pass < 2; pass++) {
    uint32_t *ids_f = pass ? by_incl : by_self, count = pass ? m : n;
    if (count > functions) count = functions;
    fprintf(f, "\nsampled functions by %s (of %llu samples; self: the leaf frame, inclusive: anywhere in the stack)\n",
            pass ? "inclusive" : "self", (unsigned long long)total);
    if (!ids_f) {
      fprintf(f, "  out of memory\n");
      continue;
    }
    if (!count) fprintf(f, "  none\n");
    else fprintf(f, "  %8s %7s %10s %7s  %s\n", "self", "%", "inclusive", "%", "function");
    for (uint32_t i = 0; i < count; i++) {
      const strobe__func_count *fc = &a->smp.funcs[ids_f[i]];
      fprintf(f, "  %8llu %6.1f%% %10llu %6.1f%%  %s\n", (unsigned long long)fc->self, pct(fc->self, total),
              (unsigned long long)fc->inclusive, pct(fc->inclusive, total), func_name(c, ids_f[i]));
    }
  }
  free(by_self);
  free(by_incl);
}

void samples_json(strobe__json *j, const samples_report *sr, agg *a, const strobe_capture *c, const uint32_t *ids,
                  uint32_t n_ids, uint32_t functions) {
  strobe_capture_totals t = strobe_capture_query_totals(c);
  if (sr->why) {
    strobe__json_null(j, "cpu_split");
  } else {
    strobe__json_array(j, "cpu_split");
    for (uint32_t i = 0; i < n_ids; i++) {
      const cpu_split *s = ids[i] < sr->n_sites ? &sr->sites[ids[i]] : NULL;
      if (!s || !s->scopes) continue;
      strobe__json_object(j, NULL);
      strobe__json_str(j, "site", strobe_capture_query_site(c, ids[i])->name);
      strobe__json_uint(j, "covered", s->covered);
      strobe__json_uint(j, "scopes", s->scopes);
      strobe__json_num(j, "wall_ns", s->wall_ns, 0);
      strobe__json_num(j, "on_cpu_ns", s->wall_ns - s->off_ns, 0);
      strobe__json_num(j, "blocked_ns", s->blocked_ns, 0);
      strobe__json_num(j, "preempted_ns", s->off_ns - s->blocked_ns, 0);
      strobe__json_end(j);
    }
    strobe__json_end(j);
  }
  if (!functions) return;
  strobe__json_object(j, "samples");
  strobe__json_uint(j, "samples", t.samples);
  strobe__json_uint(j, "switches", t.switches);
  strobe__json_uint(j, "rate_hz", t.sample_rate_hz);
  strobe__json_uint(j, "lost", t.samples_lost);
  strobe__json_uint(j, "frames_cut", t.sample_frames_cut);
  strobe__json_uint(j, "addresses_cut", t.sample_addresses_cut);
  uint32_t n = 0;
  uint32_t *ids_f = strobe__samples_top(&a->smp, 0, &n); /* by inclusive count; each says its self count */
  if (n > functions) n = functions;
  strobe__json_array(j, "functions");
  for (uint32_t i = 0; ids_f && i < n; i++) {
    const strobe__func_count *fc = &a->smp.funcs[ids_f[i]];
    const strobe_capture_function *fn = strobe_capture_query_function(c, ids_f[i]);
    strobe__json_object(j, NULL);
    strobe__json_str(j, "name", fn ? fn->name : "?");
    strobe__json_str(j, "module", fn ? fn->module : "");
    strobe__json_uint(j, "self", fc->self);
    strobe__json_uint(j, "inclusive", fc->inclusive);
    strobe__json_end(j);
  }
  strobe__json_end(j);
  strobe__json_end(j);
  free(ids_f);
}
