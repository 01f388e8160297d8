/*
 * main.c — the `strobe` command-line tool's entry point: finds the
 * subcommand in one static table and hands it the rest of the arguments
 * (argv[0] becomes the subcommand's name). It owns the top-level usage, the
 * version line, and exit code 2 for a missing or unknown subcommand.
 *
 * To add a subcommand: write tools/strobe/cmd_NAME.c with
 * `int cmd_NAME(int argc, char **argv)`, declare it in cli.h, and point its
 * table entry at it (tools/CMakeLists.txt builds every .c here). Reserved
 * names have a NULL entry until their file lands.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "strobe/capture.h"
#include "strobe/strobe.h"

typedef struct subcommand {
  const char *name;
  int (*run)(int argc, char **argv); /* NULL: reserved, not built yet */
  const char *summary;
} subcommand;

static const subcommand g_commands[] = {
    {"record", cmd_record, "run a program and write its run to a capture: strobe record [options] -- PROGRAM ARGS..."},
    {"info", cmd_info, "header, clock, threads, sites, totals, losses; whether the file was cut short"},
    {"report", cmd_report, "per-site count, total, self, p50/p95/p99/max; slowest frames; counters"},
    {"diff", cmd_diff, "per-site changes between two captures, or two frames' span trees (--frames)"},
    {"compare", cmd_compare, "CI gate: exit 1 on a regression beyond --max-regression, nothing compared, lost coverage or lost events"},
    {"tree", cmd_tree, "list the UI-tree snapshots, or print one as a tree with its elements' spans (--frame N)"},
    {"calls", cmd_calls, "list the deep captures, or print one frame's draw calls with their replay status (--frame N)"},
    {"explain", cmd_explain, "why frames were slow: each part of a frame against its p50, on CPU, blocked or preempted"},
    {"query", cmd_query, "SQL over a capture (SQLite): frames, stages, spans, samples, switches, counters, ..."},
    {"export", cmd_export, "write Chrome Trace Event JSON, speedscope JSON, Perfetto protobuf, OTLP/JSON, folded stacks, CSV or a self-contained HTML report; attachments as files"},
    {"mcp", cmd_mcp, "stdio bridge to an application's MCP endpoint: strobe mcp --url URL --token-file FILE"},
    {"view", cmd_view, "open a capture (or two, to diff) in the web viewer on 127.0.0.1"},
    {"merge", cmd_merge, "put the processes of several captures side by side on one timeline, aligned (-o OUT)"},
    {"recover", cmd_recover, "add to a capture whose process died the events its crash journal holds (FILE.journal)"},
    {"clock-offset", cmd_clock_offset, "measure this host's clock against a peer server's (NTP-style), or have a server keep it"},
};
#define N_COMMANDS (sizeof g_commands / sizeof g_commands[0])

static void usage(FILE *f) {
  fprintf(f,
          "usage: strobe <command> [options] FILE...\n"
          "       strobe <command> --help\n"
          "       strobe --version\n\ncommands:\n");
  for (size_t i = 0; i < N_COMMANDS; i++)
    if (g_commands[i].run) fprintf(f, "  %-9s %s\n", g_commands[i].name, g_commands[i].summary);
  fprintf(f,
          "\nexit codes: 0 ok; 1 capture unreadable or damaged, or compare failed its gate; 2 usage error\n"
          "or an input that is not a regular file or '-'; 3 output could not be written.\n"
          "Documentation: docs/cli.md\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return CLI_USAGE;
  }
  const char *name = argv[1];
  if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
    usage(stdout);
    return CLI_OK;
  }
  if (!strcmp(name, "--version") || !strcmp(name, "-V")) {
    printf("strobe %s (capture format %u)\n", strobe_version(), STROBE_CAPTURE_FORMAT_VERSION);
    return CLI_OK;
  }
  for (size_t i = 0; i < N_COMMANDS; i++) {
    if (strcmp(name, g_commands[i].name) != 0) continue;
    if (!g_commands[i].run) {
      fprintf(stderr, "strobe %s: not available in this build yet\n", name);
      return CLI_USAGE;
    }
    return g_commands[i].run(argc - 1, argv + 1);
  }
  fprintf(stderr, "strobe: unknown command '%s'\n\n", name);
  usage(stderr);
  return CLI_USAGE;
}
