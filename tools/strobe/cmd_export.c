/*
 * cmd_export.c — `strobe export FILE --format chrome|speedscope|folded|csv
 * [-o OUT]`: options, the output file, and the hand-off to one exporter
 * (export_*.c). The output is written while the capture is read; a failed
 * write exits 3 and removes a partial -o file.
 */
#include <getopt.h>
#include <string.h>

#include "export.h"

static const char g_usage[] =
    "usage: strobe export FILE --format chrome|speedscope|folded|csv [-o OUT] [--quiet]\n"
    "\n"
    "  chrome      Chrome Trace Event Format JSON (Perfetto UI, chrome://tracing,\n"
    "              speedscope): X events per scope, thread names, counters as C\n"
    "              events, frame marks as instant events\n"
    "  speedscope  speedscope's own JSON: one evented profile per thread\n"
    "  folded      folded stacks (flamegraph.pl, inferno): 'thread;a;b;c <self ns>'\n"
    "  csv         one row per scope site, Tracy's CSV columns\n"
    "\n"
    "  -o, --output OUT   write to OUT instead of standard output\n"
    "  --quiet            no progress bar\n"
    "\n"
    "Unfinished scopes are never given a made-up duration: chrome writes them as\n"
    "B events without E; speedscope (which needs balanced events) closes them at the\n"
    "end of their profile under a frame named 'NAME [unfinished: never ended]'.\n"
    "See docs/cli.md.\n"
    "\n"
    "Exit: 0 ok, 1 capture unreadable, corrupt or truncated (the output then covers\n"
    "what was read), 2 usage (e.g. unknown format), 3 output could not be written.\n";

int cmd_export(int argc, char **argv) {
  static const struct option opts[] = {{"format", required_argument, NULL, 'f'},
                                       {"output", required_argument, NULL, 'o'},
                                       {"quiet", no_argument, NULL, 'q'},
                                       {"help", no_argument, NULL, 'h'},
                                       {0}};
  const char *format = NULL, *out = NULL;
  int quiet = 0, ch;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "f:o:qh", opts, NULL)) != -1) {
    switch (ch) {
      case 'f': format = optarg; break;
      case 'o': out = optarg; break;
      case 'q': quiet = 1; break;
      case 'h': fputs(g_usage, stdout); return CLI_OK;
      default: return cli_bad_option("export", argv, optind);
    }
  }
  if (argc - optind != 1) return cli_usage_error("export", "expected one capture FILE");
  if (!format) return cli_usage_error("export", "--format is required (chrome, speedscope, folded or csv)");
  enum { CHROME, SPEEDSCOPE, FOLDED, CSV } kind;
  if (!strcmp(format, "chrome")) kind = CHROME;
  else if (!strcmp(format, "speedscope")) kind = SPEEDSCOPE;
  else if (!strcmp(format, "folded")) kind = FOLDED;
  else if (!strcmp(format, "csv")) kind = CSV;
  else return cli_usage_error("export", "unknown format '%s' (chrome, speedscope, folded or csv)", format);
  const char *path = argv[optind];

  /* Open the capture first: a missing input must not leave an empty OUT behind. */
  cli_input in = {0};
  int rc;
  if (kind != SPEEDSCOPE && (rc = cli_open(&in, "export", path, quiet))) return rc;
  if (kind == SPEEDSCOPE) { /* it opens the capture itself, once per pass; check it can */
    if ((rc = cli_need_file("export", path, "the speedscope export reads the capture once per 256 threads")))
      return rc;
    if ((rc = cli_open(&in, "export", path, 1))) return rc;
    cli_close(&in);
  }
  cli_output o;
  if ((rc = cli_output_open(&o, "export", out))) {
    if (in.cap) cli_close(&in);
    return rc;
  }
  int status;
  switch (kind) {
    case CHROME: status = export_chrome(&in, o.f); break;
    case SPEEDSCOPE: status = export_speedscope(path, quiet, o.f); break;
    case FOLDED: status = export_folded(&in, o.f); break;
    default: status = export_csv(&in, o.f); break;
  }
  if (in.cap) cli_close(&in);
  rc = cli_output_close(&o);
  return rc ? rc : status;
}
