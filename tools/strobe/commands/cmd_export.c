/*
 * cmd_export.c — `strobe export FILE --format chrome|speedscope|perfetto|otlp|folded|csv|html
 * [-o OUT] [--thread T] [--from MS] [--to MS]`: options, the filters every
 * format shares (export_filter.c), the output file, and the hand-off to one
 * exporter (export_*.c). The output is written while the capture is read; a
 * failed write exits 3 and removes a partial -o file.
 */
#include <getopt.h>
#include <string.h>
#include <sys/stat.h>

#include "exports/export.h"
#include "strobe/viewer.h"

static const char g_usage[] =
    "usage: strobe export FILE --format chrome|speedscope|perfetto|otlp|folded|csv|html [-o OUT]\n"
    "                    [--thread NAME|INDEX] [--from MS] [--to MS] [--compression zstd|deflate|none]\n"
    "                    [--otlp-scopes] [--service NAME] [--resource KEY=VALUE]... [--quiet]\n"
    "       strobe export FILE --format html -o report.html [--max-spans N] [--quiet]\n"
    "       strobe export FILE --attachments DIR [--force] [--quiet]\n"
    "\n"
    "  chrome      Chrome Trace Event Format JSON (Perfetto UI, chrome://tracing,\n"
    "              speedscope): X events per scope, thread names, counters as C\n"
    "              events, frame marks as instant events\n"
    "  speedscope  speedscope's own JSON: one evented profile per thread\n"
    "  perfetto    Perfetto's protobuf trace (ui.perfetto.dev, trace_processor): track\n"
    "              events with interned names, delta-encoded timestamps, thread,\n"
    "              stage, counter and operation tracks; zstd-compressed packets\n"
    "  otlp        OpenTelemetry trace data, OTLP/JSON (Jaeger, Tempo, an OTel\n"
    "              Collector): one trace per operation, its stages as child spans\n"
    "  folded      folded stacks (flamegraph.pl, inferno): 'thread;a;b;c <self ns>'\n"
    "  csv         one row per scope site, Tracy's CSV columns\n"
    "  html        Strobe's web viewer and the capture in one self-contained file that\n"
    "              opens from disk in a browser: no server, no token, no network\n"
    "\n"
    "  -o, --output OUT   write to OUT instead of standard output\n"
    "  --thread NAME|INDEX  only this thread (all digits: a thread index)\n"
    "  --from MS, --to MS only scopes lying wholly inside this range, in ms since the\n"
    "                     capture started; counters, marks by their time. Either alone\n"
    "  --compression zstd|deflate|none  perfetto only: zstd (the default; Perfetto v58\n"
    "                     and later), deflate (every Perfetto since 2019) or none\n"
    "  --attachments DIR  instead of a format: write every attachment (screenshots,\n"
    "                     resource contents: strobe/deep.h) into DIR, created if needed,\n"
    "                     as frame-F-resource-R.EXT, with DIR/index.tsv listing them;\n"
    "                     a DIR holding anything is refused unless --force (its files\n"
    "                     of those names are then replaced, never written through)\n"
    "  --otlp-scopes      otlp only: every scope inside an operation, not only its stages\n"
    "  --service NAME     otlp only: the resource's service.name\n"
    "  --resource K=V     otlp only: one more resource attribute (host.name=...); repeatable\n"
    "  --max-spans N      html only: keep at most N spans, the earliest (default 10000000): a\n"
    "                     report of a large capture cut where the bound stops it, the rest\n"
    "                     counted in its header\n"
    "  --quiet            no progress bar\n"
    "\n"
    "Unfinished scopes are never given a made-up duration: chrome writes them as\n"
    "B events without E; speedscope (which needs balanced events) closes them at the\n"
    "end of their profile under a frame named 'NAME [unfinished: never ended]'.\n"
    "See docs/cli.md.\n"
    "\n"
    "Exit: 0 ok, 1 capture unreadable, corrupt or truncated (the output then covers\n"
    "what was read), 2 usage (e.g. unknown format), 3 output could not be written.\n";

/* --format html (export_html.c, docs/viewer.md §One file): the capture checked as every subcommand reads it
 * (docs/cli.md §Damaged captures), then the report, and one line saying what it holds. */
static int export_html_cmd(const char *path, const char *out, const char *max_spans, const export_filter *flt, int other,
                           int quiet) {
  uint64_t keep = STROBE_VIEWER_DEFAULT_MAX_SPANS;
  if (max_spans && (cli_parse_u64(max_spans, &keep) || keep < 1 || keep > STROBE_VIEWER_MAX_MAX_SPANS))
    return cli_usage_error("export", "--max-spans needs a number of spans from 1 to %u, not '%s'", STROBE_VIEWER_MAX_MAX_SPANS,
                           max_spans);
  if (other || flt->thread || flt->has_range)
    return cli_usage_error("export", "--format html takes no --thread, --from, --to, --compression or otlp option: "
                                     "a report holds the whole capture (cutting it to a range is not implemented)");
  if (!out || cli_is_stdin(out)) return cli_usage_error("export", "--format html needs -o FILE.html");
  cli_input in;
  int rc = cli_need_file("export", path, "the html export reads the capture twice");
  if (rc || (rc = cli_open(&in, "export", path, quiet))) return rc;
  strobe_capture_record r;
  while (cli_next(&in, &r) > 0) {
  }
  int damaged = cli_finish_read(&in) ? CLI_FAIL : CLI_OK;
  cli_close(&in);
  export_html_result res = {0};
  if ((rc = export_html(path, out, (uint32_t)keep, &res))) return rc;
  struct stat st;
  double capture = stat(path, &st) ? 0 : (double)st.st_size;
  if (!quiet)
    fprintf(stderr, "strobe export: %s: %llu spans, %llu frames; %.2f MB, %.2f x the capture's %.2f MB\n", out,
            (unsigned long long)res.spans, (unsigned long long)res.frames, (double)res.bytes / 1e6,
            capture > 0 ? (double)res.bytes / capture : 0.0, capture / 1e6);
  if (res.spans_cut && !quiet)
    fprintf(stderr, "strobe export: %s holds the capture's first %llu spans: %llu later ones cut by --max-spans (its header says so)\n",
            out, (unsigned long long)res.spans, (unsigned long long)res.spans_cut);
  return damaged;
}

/* The command line, as cmd_export reads it. */
typedef struct export_args {
  const char *format, *out, *compression, *attachments, *max_spans; /* NULL when not given */
  export_filter flt; /* --thread, --from, --to */
  otlp_opts otlp;    /* --otlp-scopes, --service, --resource */
  int otlp_given, quiet, force;
} export_args;

/* Reads the options into x. Returns -1 to go on, or the exit status (--help, or a usage error said). */
static int parse_export_args(int argc, char **argv, export_args *x) {
  static const struct option opts[] = {{"format", required_argument, NULL, 'f'},
                                       {"output", required_argument, NULL, 'o'},
                                       {"thread", required_argument, NULL, 't'},
                                       {"from", required_argument, NULL, 'F'},
                                       {"to", required_argument, NULL, 'T'},
                                       {"compression", required_argument, NULL, 'z'},
                                       {"attachments", required_argument, NULL, 'A'},
                                       {"force", no_argument, NULL, 'P'},
                                       {"quiet", no_argument, NULL, 'q'},
                                       {"otlp-scopes", no_argument, NULL, 'S'},
                                       {"service", required_argument, NULL, 's'},
                                       {"resource", required_argument, NULL, 'r'},
                                       {"max-spans", required_argument, NULL, 'M'},
                                       {"help", no_argument, NULL, 'h'},
                                       {0}};
  int ch, rc;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "f:o:qh", opts, NULL)) != -1) {
    switch (ch) {
      case 'f': x->format = optarg; break;
      case 'o': x->out = optarg; break;
      case 't':
      case 'F':
      case 'T':
        if ((rc = xf_option(&x->flt, ch, optarg))) return rc;
        break;
      case 'z': x->compression = optarg; break;
      case 'A': x->attachments = optarg; break;
      case 'M': x->max_spans = optarg; break;
      case 'P': x->force = 1; break;
      case 'q': x->quiet = 1; break;
      case 'S': x->otlp.scopes = 1, x->otlp_given = 1; break;
      case 's': x->otlp.service = optarg, x->otlp_given = 1; break;
      case 'r':
        x->otlp_given = 1;
        if (!strchr(optarg, '=') || optarg[0] == '=' || strchr(optarg, '=') - optarg > 255)
          return cli_usage_error("export", "--resource takes KEY=VALUE (a key of 1-255 bytes), not '%s'", optarg);
        if (x->otlp.nresource == sizeof x->otlp.resource / sizeof *x->otlp.resource)
          return cli_usage_error("export", "at most 32 --resource attributes");
        x->otlp.resource[x->otlp.nresource++] = optarg;
        break;
      case 'h': fputs(g_usage, stdout); return CLI_OK;
      default: return cli_bad_option("export", argv, optind);
    }
  }
  return -1;
}

/* --compression for a perfetto export (zstd by default) into *compress. Returns CLI_OK or a usage error. */
static int compression_of(int perfetto, const char *compression, int *compress) {
  *compress = EXPORT_PERFETTO_ZSTD;
  if (!compression) return CLI_OK;
  if (!perfetto) return cli_usage_error("export", "--compression applies to --format perfetto only");
  if (!strcmp(compression, "none")) *compress = EXPORT_PERFETTO_PLAIN;
  else if (!strcmp(compression, "deflate")) *compress = EXPORT_PERFETTO_DEFLATE;
  else if (strcmp(compression, "zstd") != 0)
    return cli_usage_error("export", "unknown --compression '%s' (zstd, deflate or none)", compression);
  return CLI_OK;
}

/* Opens the capture before the output, so a missing input leaves no empty OUT behind. Perfetto and
 * speedscope write a scope's beginning before its end, so --to costs them one more pass (scans_cuts) to find
 * the scopes still open at --to; an exporter that opens the capture itself, once per pass (reads_itself),
 * has it checked here and closed (in->cap NULL). Returns CLI_OK, or the exit status (flt freed). */
static int open_export_input(const char *path, int quiet, export_filter *flt, int scans_cuts, int reads_itself,
                             const char *why_twice, cli_input *in) {
  int rc;
  if (scans_cuts && (rc = xf_scan_cuts(flt, path, quiet))) {
    xf_free(flt);
    return rc;
  }
  if (!reads_itself && (rc = cli_open(in, "export", path, quiet))) {
    xf_free(flt);
    return rc;
  }
  if (reads_itself) {
    if ((rc = cli_need_file("export", path, why_twice)) || (rc = cli_open(in, "export", path, 1))) {
      xf_free(flt);
      return rc;
    }
    cli_close(in);
  }
  return CLI_OK;
}

int cmd_export(int argc, char **argv) {
  export_args x = {0};
  int rc = parse_export_args(argc, argv, &x);
  if (rc >= 0) return rc;
  const char *format = x.format, *out = x.out, *compression = x.compression, *attachments = x.attachments;
  const char *max_spans = x.max_spans;
  export_filter flt = x.flt;
  otlp_opts otlp = x.otlp;
  int otlp_given = x.otlp_given, quiet = x.quiet, force = x.force;
  if (argc - optind != 1) return cli_usage_error("export", "expected one capture FILE");
  if (attachments) {
    if (format || out || compression || flt.thread || flt.has_range)
      return cli_usage_error("export", "--attachments DIR takes no --format, -o, --compression or filter");
    if (!attachments[0]) return cli_usage_error("export", "--attachments needs a directory");
    return export_attachments(argv[optind], attachments, force, quiet);
  }
  if (force) return cli_usage_error("export", "--force applies to --attachments DIR only");
  if (!format) return cli_usage_error("export", "--format is required (chrome, speedscope, perfetto, otlp, folded, csv or html)");
  if (!strcmp(format, "html")) return export_html_cmd(argv[optind], out, max_spans, &flt, compression || otlp_given, quiet);
  if (max_spans) return cli_usage_error("export", "--max-spans applies to --format html only");
  enum { CHROME, SPEEDSCOPE, PERFETTO, OTLP, FOLDED, CSV } kind;
  if (!strcmp(format, "chrome")) kind = CHROME;
  else if (!strcmp(format, "speedscope")) kind = SPEEDSCOPE;
  else if (!strcmp(format, "perfetto")) kind = PERFETTO;
  else if (!strcmp(format, "otlp")) kind = OTLP;
  else if (!strcmp(format, "folded")) kind = FOLDED;
  else if (!strcmp(format, "csv")) kind = CSV;
  else return cli_usage_error("export", "unknown format '%s' (chrome, speedscope, perfetto, otlp, folded, csv or html)", format);
  if (otlp_given && kind != OTLP)
    return cli_usage_error("export", "--otlp-scopes, --service and --resource apply to --format otlp only");
  int compress;
  if ((rc = compression_of(kind == PERFETTO, compression, &compress))) return rc;
  if ((rc = xf_check(&flt))) return rc;
  const char *path = argv[optind];
  cli_input in = {0};
  rc = open_export_input(path, quiet, &flt, kind == PERFETTO || kind == SPEEDSCOPE, kind == SPEEDSCOPE || kind == OTLP,
                         kind == OTLP ? "the otlp export reads the capture twice"
                                      : "the speedscope export reads the capture once per 256 threads",
                         &in);
  if (rc) return rc;
  cli_output o;
  if ((rc = cli_output_open(&o, "export", out))) {
    if (in.cap) cli_close(&in);
    xf_free(&flt);
    return rc;
  }
  int status;
  switch (kind) {
    case CHROME: status = export_chrome(&in, o.f, &flt); break;
    case SPEEDSCOPE: status = export_speedscope(path, quiet, o.f, &flt); break;
    case PERFETTO: status = export_perfetto(&in, o.f, &flt, compress); break;
    case OTLP: status = export_otlp(path, quiet, o.f, &flt, &otlp); break;
    case FOLDED: status = export_folded(&in, o.f, &flt); break;
    default: status = export_csv(&in, o.f, &flt); break;
  }
  if (in.cap) cli_close(&in);
  rc = cli_output_close(&o);
  xf_finish(&flt, "export");
  xf_free(&flt);
  return rc ? rc : status;
}
