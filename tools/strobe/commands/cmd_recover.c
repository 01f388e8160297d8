/*
 * cmd_recover.c — `strobe recover FILE [-o OUT]`: a capture whose writer died
 * while it recorded gets the events its threads had written that the file
 * lacks, from the crash journal FILE.journal beside it (docs/cli.md
 * §strobe recover FILE [-o OUT], docs/recording.md §Crash journal). In place by default, then the
 * journal is removed; with -o the result goes to OUT and FILE and its journal
 * stay as they are.
 *
 * Must never: leave FILE half rewritten (the library writes a new file and
 * renames it), or remove a journal whose events are not in a file.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define CMD "recover"

static const char g_usage[] =
    "usage: strobe recover FILE [-o OUT]\n"
    "  adds to a capture whose process died while it recorded (kill -9, a crash, _exit) the events in\n"
    "  FILE.journal that the file lacks, each once. In place, then the journal is removed; with -o OUT the\n"
    "  result goes to OUT and FILE.journal is kept.\n";

int cmd_recover(int argc, char **argv) {
  static const struct option opts[] = {{"output", required_argument, NULL, 'o'}, {"help", no_argument, NULL, 'h'}, {0}};
  const char *out = NULL;
  int ch;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
    switch (ch) {
      case 'o': out = optarg; break;
      case 'h': fputs(g_usage, stdout); return CLI_OK;
      default: return cli_bad_option(CMD, argv, optind);
    }
  }
  if (argc - optind != 1) return cli_usage_error(CMD, "expected one capture FILE");
  const char *path = argv[optind];
  int rc = cli_need_file(CMD, path, "the journal lies beside a file");
  if (rc) return rc;
  strobe_capture_recovery st;
  errno = 0;
  rc = strobe_capture_recover(path, out ? out : path, &st);
  if (rc == STROBE_ENOTFOUND) {
    cli_error(CMD, "%s: no journal beside it (%s.journal): nothing to recover", path, path);
    return CLI_FAIL;
  }
  if (rc == STROBE_EFOREIGN) {
    cli_error(CMD, "%s.journal is not the journal %s names (another run's, or the capture names none)", path, path);
    return CLI_FAIL;
  }
  if (rc) {
    cli_error(CMD, "%s: %s%s%s", path, strobe_strerror(rc), rc == STROBE_EIO && errno ? ": " : "",
              rc == STROBE_EIO && errno ? strerror(errno) : "");
    return rc == STROBE_EIO ? CLI_OUTPUT : CLI_FAIL;
  }
  if (!out) {
    char jpath[4096];
    if (snprintf(jpath, sizeof jpath, "%s.journal", path) < (int)sizeof jpath) (void)unlink(jpath);
  }
  printf("recovered %llu events of %llu threads into %s", (unsigned long long)st.events,
         (unsigned long long)st.threads, out ? out : path);
  if (st.unrecoverable) printf("; %llu could not be decoded", (unsigned long long)st.unrecoverable);
  printf("\n");
  return CLI_OK;
}
