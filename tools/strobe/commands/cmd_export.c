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

int cmd_export(int argc, char **argv) {
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
  const char *format = NULL, *out = NULL, *compression = NULL, *attachments = NULL, *max_spans = NULL;
  export_filter flt = {0};
  otlp_opts otlp = {0};
  int otlp_given = 0;
  int quiet = 0, force = 0, ch, rc;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "f:o:qh", opts, NULL)) != -1) {
    switch (ch) {
      case 'f': format = optarg; break;
      case 'o': out = optarg; break;
      case 't':
      case 'F':
      case 'T':
        if ((rc = xf_option(&flt, ch, optarg))) return rc;
        break;
      case 'z': compression = optarg; break;
      case 'A': attachments = optarg; break;
      case 'M': max_spans = optarg; break;
      case 'P': force = 1; break;
      case 'q': quiet = 1; break;
      case 'S': otlp.scopes = 1, otlp_given = 1; break;
      case 's': otlp.service = optarg, otlp_given = 1; break;
      case 'r':
        otlp_given = 1;
        if (!strchr(optarg, '=') || optarg[0] == '=' || strchr(optarg, '=') - optarg > 255)
          return cli_usage_error("export", "--resource takes KEY=VALUE (a key of 1-255 bytes), not '%s'", optarg);
        if (otlp.nresource == sizeof otlp.resource / sizeof *otlp.resource)
          return cli_usage_error("export", "at most 32 --resource attributes");
        otlp.resource[otlp.nresource++] = optarg;
        break;
      case 'h': fputs(g_usage, stdout); return CLI_OK;
      default: return cli_bad_option("export", argv, optind);
    }
  }
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
  int compress = EXPORT_PERFETTO_ZSTD;
  if (compression) {
    if (kind != PERFETTO) return cli_usage_error("export", "--compression applies to --format perfetto only");
    if (!strcmp(compression, "none")) compress = EXPORT_PERFETTO_PLAIN;
    else if (!strcmp(compression, "deflate")) compress = EXPORT_PERFETTO_DEFLATE;
    else if (strcmp(compression, "zstd") != 0)
      return cli_usage_error("export", "unknown --compression '%s' (zstd, deflate or none)", compression);
  }
  if ((rc = xf_check(&flt))) return rc;
  const char *path = argv[optind];

  /* Open the capture first: a missing input must not leave an empty OUT behind.
   * Perfetto and speedscope write a scope's beginning before its end, so
   * --to costs them one more pass to find the scopes still open at --to. */
  cli_input in = {0};
  if ((kind == PERFETTO || kind == SPEEDSCOPE) && (rc = xf_scan_cuts(&flt, path, quiet))) {
    xf_free(&flt);
    return rc;
  }
  if (kind != SPEEDSCOPE && kind != OTLP && (rc = cli_open(&in, "export", path, quiet))) {
    xf_free(&flt);
    return rc;
  }
  if (kind == SPEEDSCOPE || kind == OTLP) { /* it opens the capture itself, once per pass; check it can */
    if ((rc = cli_need_file("export", path, kind == OTLP ? "the otlp export reads the capture twice"
                                                         : "the speedscope export reads the capture once per 256 threads")) ||
        (rc = cli_open(&in, "export", path, 1))) {
      xf_free(&flt);
      return rc;
    }
    cli_close(&in);
  }
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
