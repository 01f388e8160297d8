/*
 * cmd_info.c — `strobe info FILE`: what a capture is and how it ended.
 * Header (clock, build, process, writer settings), threads, sites, totals,
 * losses, misuse counts, and a plain statement when the file was cut short;
 * its frames as the frame model sees them (strobe/frames.h: series, states,
 * rates), and with --frames every frame with its own spans and stages.
 *
 * A damaged file follows the rule every subcommand follows (docs/cli.md
 * §Damaged captures): without footer it is described and exits 0; truncated
 * inside a block or corrupt, everything read before the bad spot is
 * described, stderr says where reading stopped, and the exit is 1.
 */
#include <getopt.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "format/json_writer.h"
#include "analysis/frames_view.h"

static const char g_usage[] =
    "usage: strobe info [--json] [--quiet] [--frames] FILE\n"
    "\n"
    "Describes a capture: header (clock source, invariance, ns per tick, kind, format\n"
    "and library version, os/arch, features, self-measured overhead per scope, pid,\n"
    "ring size, flush interval), threads (index, tid or \"fiber\", name, events, lost, ended),\n"
    "sites, totals (events, scopes, lost events, orphan ends, unfinished and lost\n"
    "scopes), misuse counts, and whether the file was cut short. Its frames, as every\n"
    "subcommand counts them (docs/frames.md): operations one each wherever they ran, and\n"
    "per window (or thread) its frames by state and both frame rates.\n"
    "\n"
    "  --frames   also list every frame: number, state, series, start, duration, its own\n"
    "             spans (a second read: FILE, not '-') and its stages\n"
    "  --json     machine-readable output\n"
    "  --quiet    no progress bar\n"
    "\n"
    "Exit: 0 described (also without footer), 1 unreadable, truncated inside a block or\n"
    "corrupt (what was read is still described), 2 usage or not a regular file, 3 output.\n";

typedef struct info {
  cli_input in;
  long long bytes;
  uint32_t by_kind[STROBE__SITE_KIND_LIMIT]; /* sites per strobe_site_kind */
  uint32_t interned;                         /* sites named at run time (STROBE_SITE_INTERNED) */
  strobe_frames *fx;                         /* the frame model of what was read */
  int list;                                  /* --frames */
} info;

static const char *yes_no(int v) { return v ? "yes" : "no"; }

static void misuse_json(strobe__json *j, const strobe_misuse *m) {
#define MISUSE(name) strobe__json_uint(j, #name, m->name);
  STROBE_MISUSE_MAP(MISUSE)
#undef MISUSE
}

static void hosts_json(strobe__json *j, strobe_capture *c);

static void write_json(cli_output *o, info *x) {
  strobe_capture *c = x->in.cap;
  const strobe_capture_header *h = strobe_capture_query_header(c);
  strobe_capture_totals t = strobe_capture_query_totals(c);
  strobe__json j = {0};
  strobe__json_object(&j, NULL);
  strobe__json_str(&j, "file", x->in.path);
  strobe__json_int(&j, "bytes", x->bytes);
  strobe__json_object(&j, "state");
  strobe__json_bool(&j, "complete", x->in.rc == 0 && t.footer);
  strobe__json_bool(&j, "footer", t.footer);
  strobe__json_bool(&j, "cut_short", t.cut_short || x->in.rc == STROBE_ETRUNCATED);
  strobe__json_bool(&j, "truncated_in_block", x->in.rc == STROBE_ETRUNCATED);
  if (x->in.rc < 0 && x->in.rc != STROBE_ETRUNCATED) strobe__json_str(&j, "error", strobe_err_name(x->in.rc));
  else strobe__json_null(&j, "error");
  strobe__json_str(&j, "message", cli_end_state(&x->in));
  strobe__json_end(&j);
  cli_crash_json(&j, c);

  strobe__json_object(&j, "header");
  strobe__json_uint(&j, "version", h->version);
  strobe__json_str(&j, "kind", h->kind);
  strobe__json_str(&j, "clock_source", h->clock_source);
  strobe__json_bool(&j, "clock_invariant", h->clock_invariant);
  strobe__json_num(&j, "ns_per_tick", h->ns_per_tick, 9);
  strobe__json_uint(&j, "epoch_ticks", h->epoch_ticks);
  strobe__json_uint(&j, "epoch_mono_ns", h->epoch_mono_ns);
  strobe__json_uint(&j, "start_ticks", h->start_ticks);
  strobe__json_num(&j, "overhead_per_scope_ns", h->overhead_per_scope_ns, 3);
  strobe__json_str(&j, "strobe_version", h->strobe_version);
  strobe__json_str(&j, "os", h->os);
  strobe__json_str(&j, "arch", h->arch);
  strobe__json_str(&j, "features", h->features);
  strobe__json_bool(&j, "assertions", h->assertions);
  strobe__json_uint(&j, "pid", h->pid);
  strobe__json_str(&j, "boot_id", h->boot_id[0] ? h->boot_id : NULL);
  strobe__json_uint(&j, "ring_events", h->ring_events);
  strobe__json_uint(&j, "flush_interval_ms", h->flush_interval_ms);
  strobe__json_num(&j, "event_cost_ns", h->event_cost_ns, 3);
  strobe__json_str(&j, "overflow", cli_overflow_name(h->overflow));
  strobe__json_uint(&j, "ring_events_max", h->ring_events_max);
  cli_cost cost = cli_query_cost(c);
  strobe__json_object(&j, "drain");
  strobe__json_uint(&j, "cpu_ns", cost.drain_cpu_ns);
  strobe__json_uint(&j, "events", cost.drain_events);
  if (cost.drain_events) strobe__json_num(&j, "ns_per_event", cost.drain_ns_per_event, 3);
  else strobe__json_null(&j, "ns_per_event");
  strobe__json_end(&j);
  strobe__json_end(&j);

  double start = cli_start_ns(c), end = strobe_capture_ticks_to_ns(c, t.end_ticks);
  strobe__json_object(&j, "span");
  strobe__json_num(&j, "start_ns", start, 1);
  strobe__json_num(&j, "end_ns", end, 1);
  strobe__json_num(&j, "duration_ns", end - start, 1);
  strobe__json_end(&j);

  strobe__json_array(&j, "threads");
  for (uint32_t i = 0; i < strobe_capture_query_thread_count(c); i++) {
    const strobe_capture_thread *th = strobe_capture_query_thread(c, i);
    if (!th) continue;
    strobe__json_object(&j, NULL);
    strobe__json_uint(&j, "index", th->index);
    strobe__json_uint(&j, "tid", th->os_tid);
    strobe__json_str(&j, "name", th->name);
    strobe__json_uint(&j, "events", th->events);
    strobe__json_uint(&j, "lost", th->lost);
    strobe__json_bool(&j, "ended", th->ended);
    strobe__json_bool(&j, "fiber", th->fiber);
    strobe__json_end(&j);
  }
  strobe__json_end(&j);

  strobe__json_object(&j, "sites");
  uint32_t total = 0;
  for (uint32_t k = 0; k < STROBE__SITE_KIND_LIMIT; k++) total += x->by_kind[k];
  strobe__json_uint(&j, "count", total);
#define KIND(id, number, name, timed) strobe__json_uint(&j, name, x->by_kind[number]);
  STROBE_SITE_KINDS(KIND)
#undef KIND
  strobe__json_uint(&j, "interned", x->interned);
  strobe__json_end(&j);
  cli_calls_json(&j, c);

  hosts_json(&j, c);
  strobe__json_object(&j, "totals");
  strobe__json_uint(&j, "blocks", t.blocks);
  strobe__json_uint(&j, "events", t.events);
  strobe__json_uint(&j, "scopes", t.scopes);
  fv_tally ops = fv_tally_of(x->fx);
  uint64_t nops = 0;
  for (int k = 0; k < STROBE_OP_KIND_LIMIT; k++) nops += ops.by_kind[k];
  strobe__json_uint(&j, "operations", nops); /* one each, wherever it ran (docs/frames.md) */
  strobe__json_uint(&j, "operation_ends", t.ops); /* END records: two for an operation handed between processes */
  strobe__json_uint(&j, "operation_events", t.op_events);
  strobe__json_uint(&j, "lost", t.lost);
  strobe__json_uint(&j, "orphan_ends", t.orphan_ends);
  strobe__json_uint(&j, "unfinished", t.unfinished);
  strobe__json_uint(&j, "lost_scopes", t.lost_scopes);
  strobe__json_bool(&j, "footer", t.footer);
  strobe__json_bool(&j, "cut_short", t.cut_short || x->in.rc == STROBE_ETRUNCATED);
  strobe__json_end(&j);
  if (t.footer) {
    strobe__json_object(&j, "misuse");
    misuse_json(&j, &t.misuse);
    strobe__json_end(&j);
  } else {
    strobe__json_null(&j, "misuse"); /* only the footer carries them */
  }
  strobe__json_object(&j, "frames");
  fv_series_summary_json(&j, x->fx, c);
  if (x->list) fv_frame_list_json(&j, x->fx, c, cli_start_ns(c));
  strobe__json_end(&j);
  strobe__json_end(&j);
  cli_output_json(o, &j);
}

/* >>hosts: clock-offset samples and, in a merged capture, how its inputs were aligned (docs/cli.md §strobe merge). */
static void hosts_json(strobe__json *j, strobe_capture *c) {
  strobe_capture_clock_offsets co = strobe_capture_query_clock_offsets(c);
  strobe__json_object(j, "clock_offsets");
  strobe__json_uint(j, "replaced", co.replaced);
  strobe__json_uint(j, "cut", co.cut);
  strobe__json_array(j, "samples");
  for (uint32_t i = 0; i < co.count; i++) {
    const strobe_capture_clock_offset *s = &co.samples[i];
    strobe__json_object(j, NULL);
    strobe__json_str(j, "local_boot_id", s->local_boot_id);
    strobe__json_str(j, "peer", s->sample.peer);
    strobe__json_str(j, "peer_boot_id", s->sample.peer_boot_id);
    strobe__json_int(j, "offset_ns", s->sample.offset_ns);
    strobe__json_uint(j, "error_ns", s->sample.error_ns);
    strobe__json_uint(j, "rtt_ns", s->sample.rtt_ns);
    strobe__json_uint(j, "at_mono_ns", s->sample.at_mono_ns);
    strobe__json_uint(j, "rounds", s->sample.rounds);
    strobe__json_end(j);
  }
  strobe__json_end(j);
  strobe__json_end(j);
  const strobe_capture_merge *m = strobe_capture_query_merge(c);
  if (!m) {
    strobe__json_null(j, "merge");
    return;
  }
  strobe__json_object(j, "merge");
  strobe__json_uint(j, "error_ns", m->error_ns);
  strobe__json_array(j, "inputs");
  for (uint32_t i = 0; i < m->ninputs; i++) {
    const strobe_capture_merge_input *in = &m->inputs[i];
    strobe__json_object(j, NULL);
    strobe__json_str(j, "process", in->process);
    strobe__json_uint(j, "pid", in->pid);
    strobe__json_str(j, "boot_id", in->boot_id[0] ? in->boot_id : NULL);
    strobe__json_str(j, "alignment", cli_alignment_name(in->alignment));
    strobe__json_uint(j, "hops", in->hops);
    strobe__json_int(j, "shift_ns", in->shift_ns);
    strobe__json_uint(j, "error_ns", in->error_ns);
    strobe__json_end(j);
  }
  strobe__json_end(j);
  cli_not_merged_json(j, m);
  strobe__json_end(j);
}

static void hosts_text(FILE *f, strobe_capture *c) {
  strobe_capture_clock_offsets co = strobe_capture_query_clock_offsets(c);
  if (co.count || co.replaced || co.cut) {
    fprintf(f, "clock offsets %u sample%s of this host's clock against others'", co.count, co.count == 1 ? "" : "s");
    if (co.replaced) fprintf(f, " (%llu older replaced by the writer)", (unsigned long long)co.replaced);
    if (co.cut) fprintf(f, " (%llu more not kept by this reader)", (unsigned long long)co.cut);
    fputc('\n', f);
    for (uint32_t i = 0; i < co.count; i++) {
      const strobe_clock_offset *s = &co.samples[i].sample;
      fprintf(f, "  %s (boot %.8s) %+.3f ms +- %.3f ms from boot %.8s, round trip %.3f ms, best of %u, at %.3f s\n",
              s->peer[0] ? s->peer : "?", s->peer_boot_id, (double)s->offset_ns / 1e6, (double)s->error_ns / 1e6,
              co.samples[i].local_boot_id, (double)s->rtt_ns / 1e6, s->rounds, (double)s->at_mono_ns / 1e9);
    }
  }
  const strobe_capture_merge *m = strobe_capture_query_merge(c);
  if (!m) return;
  fprintf(f, "merged      %u captures, each within %.3f ms of where it belongs\n", m->ninputs, (double)m->error_ns / 1e6);
  for (uint32_t i = 0; i < m->ninputs; i++) {
    const strobe_capture_merge_input *in = &m->inputs[i];
    fprintf(f, "  %s pid %llu, boot %.8s: %s", in->process, (unsigned long long)in->pid,
            in->boot_id[0] ? in->boot_id : "?", cli_alignment_name(in->alignment));
    if (in->alignment == STROBE_ALIGN_CLOCK_OFFSET)
      fprintf(f, " (%u sample%s), shifted %+.3f ms +- %.3f ms", in->hops, in->hops == 1 ? "" : "s",
              (double)in->shift_ns / 1e6, (double)in->error_ns / 1e6);
    fputc('\n', f);
  }
  const char *sep = "not merged  ";
  for (uint32_t t = 0; t < STROBE_CAPTURE_REC_TYPES; t++)
    if (m->not_merged[t]) {
      fprintf(f, "%s%llu %s", sep, (unsigned long long)m->not_merged[t], strobe_capture_record_type_name(t));
      sep = ", ";
    }
  if (sep[0] == ',') fprintf(f, " records of the inputs (read them in the input captures)\n");
}

static void write_text(cli_output *o, info *x) {
  FILE *f = o->f;
  strobe_capture *c = x->in.cap;
  const strobe_capture_header *h = strobe_capture_query_header(c);
  strobe_capture_totals t = strobe_capture_query_totals(c);
  double start = cli_start_ns(c), end = strobe_capture_ticks_to_ns(c, t.end_ticks);
  fprintf(f, "file        %s (%lld bytes)\n", x->in.path, x->bytes);
  fprintf(f, "state       %s\n", cli_end_state(&x->in));
  cli_crash_text(f, "crashed     ", c);
  cli_loss_text(f, "loss", 12, c);
  fprintf(f, "format      version %u, kind %s, written by strobe %s\n", h->version, h->kind[0] ? h->kind : "?",
          h->strobe_version[0] ? h->strobe_version : "?");
  fprintf(f, "clock       %s, %s, %.6f ns/tick\n", h->clock_source[0] ? h->clock_source : "?",
          h->clock_invariant ? "invariant" : "not invariant", h->ns_per_tick);
  fprintf(f, "platform    %s %s, features \"%s\", assertions %s\n", h->os, h->arch, h->features,
          h->assertions ? "on" : "off");
  fprintf(f, "process     pid %llu, ring %u events per thread, flush every %u ms\n", (unsigned long long)h->pid,
          h->ring_events, h->flush_interval_ms);
  /* Captures with the same boot id share CLOCK_MONOTONIC: `strobe merge` aligns them (docs/cli.md §strobe merge). */
  fprintf(f, "host boot   %s\n", h->boot_id[0] ? h->boot_id : "not recorded (an older writer, a tool or a merge)");
  if (h->journal[0]) { /* docs/recording.md §Crash journal */
    strobe_capture_totals rt = strobe_capture_query_totals(x->in.cap);
    fprintf(f, "journal     %s", h->journal);
    if (rt.recovered)
      fprintf(f, "; recovered after a crash: %llu events of %llu threads added from it, %llu not decodable",
              (unsigned long long)rt.recovered_events, (unsigned long long)rt.recovered_threads,
              (unsigned long long)rt.unrecoverable);
    fprintf(f, "\n");
  }
  if (h->overflow == STROBE_OVERFLOW_GROW)
    fprintf(f, "overflow    grow (rings double up to %u events per thread)\n", h->ring_events_max);
  else
    fprintf(f, "overflow    %s\n", cli_overflow_name(h->overflow));
  cli_cost_text(f, "cost", 12, c);
  fprintf(f, "span        %s (from %.3f to %.3f ms after the collector epoch)\n", cli_dur(end - start), start / 1e6,
          end / 1e6);

  uint32_t nt = strobe_capture_query_thread_count(c);
  fprintf(f, "threads     %u\n", nt);
  if (nt) fprintf(f, "  %5s  %10s  %-20s %12s %10s  %s\n", "index", "tid", "name", "events", "lost", "ended");
  for (uint32_t i = 0; i < nt; i++) {
    const strobe_capture_thread *th = strobe_capture_query_thread(c, i);
    if (!th) continue;
    char tid[24];
    if (th->fiber)
      snprintf(tid, sizeof tid, "fiber");
    else
      snprintf(tid, sizeof tid, "%llu", (unsigned long long)th->os_tid);
    fprintf(f, "  %5u  %10s  %-20s %12llu %10llu  %s\n", th->index, tid, th->name[0] ? th->name : "(unnamed)",
            (unsigned long long)th->events, (unsigned long long)th->lost, yes_no(th->ended));
  }
  uint32_t total = 0;
  for (uint32_t k = 0; k < STROBE__SITE_KIND_LIMIT; k++) total += x->by_kind[k];
  fprintf(f, "sites       %u", total);
  const char *sep = " (";
  for (uint32_t k = 0; k < STROBE__SITE_KIND_LIMIT; k++) {
    if (!x->by_kind[k]) continue;
    fprintf(f, "%s%u %s", sep, x->by_kind[k], cli_site_kind_name(k));
    sep = ", ";
  }
  fprintf(f, "%s", total ? ")" : "");
  if (x->interned) fprintf(f, "; %u named at run time (strobe_site_intern)", x->interned);
  fputc('\n', f);
  cli_calls_text(f, "calls", 12, c);
  fprintf(f, "totals      %llu events in %llu blocks, %llu scopes, %llu operation ends (%llu operation events)\n",
          (unsigned long long)t.events, (unsigned long long)t.blocks, (unsigned long long)t.scopes,
          (unsigned long long)t.ops, (unsigned long long)t.op_events);
  fv_series_summary_text(f, x->fx, c);
  fprintf(f, "losses      %llu events lost (ring full), %llu lost scopes (END dropped)\n", (unsigned long long)t.lost,
          (unsigned long long)t.lost_scopes);
  fprintf(f, "unfinished  %llu scopes never ended (reported apart, never given an end)\n",
          (unsigned long long)t.unfinished);
  fprintf(f, "orphan ends %llu (their BEGIN predates the capture)\n", (unsigned long long)t.orphan_ends);
  hosts_text(f, c);
  fprintf(f, "footer      %s\n", t.footer ? "present (clean stop)" : "missing");
  if (t.footer) {
    const char *msep = "misuse      ";
#define MISUSE(name)                                                               \
  fprintf(f, "%s%s %llu", msep, #name, (unsigned long long)t.misuse.name); \
  msep = ", ";
    STROBE_MISUSE_MAP(MISUSE)
#undef MISUSE
    fputc('\n', f);
  } else {
    fprintf(f, "misuse      unknown (only the footer carries the misuse counts)\n");
  }
  if (x->list) fv_frame_list_text(f, x->fx, c, cli_start_ns(c));
}

/* --frames: each frame's own spans, from a second read (docs/frames.md §Own spans). */
static void count_spans(info *x) {
  cli_input in;
  if (cli_open(&in, "info", x->in.path, 1)) return; /* it opened a moment ago; the first read says how it ends */
  for (const strobe_capture_record *r; (r = cli_next_ref(&in));)
    if (r->type == STROBE_REC_END && !r->unwound)
      strobe_frames_count_span(x->fx, r->thread, r->time_ns - r->duration_ns, r->self_ns);
  cli_close(&in);
}

int cmd_info(int argc, char **argv) {
  static const struct option opts[] = {
      {"json", no_argument, NULL, 'j'}, {"quiet", no_argument, NULL, 'q'}, {"help", no_argument, NULL, 'h'},
      {"frames", no_argument, NULL, 'f'}, {0}};
  int json = 0, quiet = 0, list = 0, ch;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
    switch (ch) {
      case 'j': json = 1; break;
      case 'q': quiet = 1; break;
      case 'f': list = 1; break;
      case 'h': fputs(g_usage, stdout); return CLI_OK;
      default: return cli_bad_option("info", argv, optind);
    }
  }
  if (argc - optind != 1) return cli_usage_error("info", "expected one capture FILE");
  if (list) {
    int need = cli_need_file("info", argv[optind], "--frames reads the capture twice");
    if (need) return need;
  }

  info x = {0};
  x.list = list;
  int rc = cli_open(&x.in, "info", argv[optind], quiet);
  if (rc) return rc;
  if (strobe_frames_create(NULL, &x.fx)) {
    cli_close(&x.in);
    cli_error("info", "out of memory");
    return CLI_FAIL;
  }
  for (const strobe_capture_record *r; (r = cli_next_ref(&x.in));) strobe_frames_add(x.fx, x.in.cap, r);
  strobe_frames_finish(x.fx, x.in.cap);
  if (list) count_spans(&x);
  struct stat st;
  if (cli_is_stdin(argv[optind])) x.bytes = (long long)strobe_capture_query_position(x.in.cap);
  else x.bytes = stat(x.in.path, &st) == 0 ? (long long)st.st_size : -1;
  for (uint32_t id = 1; id < strobe_capture_query_site_limit(x.in.cap); id++) {
    const strobe_capture_site *s = strobe_capture_query_site(x.in.cap, id);
    if (s && s->kind < STROBE__SITE_KIND_LIMIT) x.by_kind[s->kind]++;
    if (s && (s->flags & STROBE_SITE_INTERNED)) x.interned++;
  }
  cli_progress_end(x.in.progress);
  x.in.progress = NULL;

  cli_output o;
  if ((rc = cli_output_open(&o, "info", NULL))) {
    cli_close(&x.in);
    return rc;
  }
  if (json) write_json(&o, &x);
  else write_text(&o, &x);
  int status = cli_finish_read(&x.in);
  if (strobe_frames_query_cut(x.fx).failed) {
    cli_error("info", "out of memory: the frames are incomplete");
    status = CLI_FAIL;
  }
  strobe_frames_destroy(x.fx);
  cli_close(&x.in);
  rc = cli_output_close(&o);
  return rc ? rc : status;
}
