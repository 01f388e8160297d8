/*
 * cmd_absent.c — the subcommands not ported to Windows (chosen by
 * tools/CMakeLists.txt there in place of their own files; docs/platforms.md
 * §Windows): `record` (it preloads libraries with Linux's loader), `mcp`,
 * `view` and `clock-offset` (they speak HTTP over sockets, which the
 * Windows build has no port of, and libstrobe_server is not built there).
 * Each says so and exits 2.
 *
 * Must never: do part of its work, or exit 0.
 */
#include "cli.h"

static int absent(const char *cmd, const char *why) {
  cli_error(cmd, "not available on Windows: %s (docs/platforms.md)", why);
  return 2;
}

int cmd_record(int argc, char **argv) {
  (void)argc, (void)argv;
  return absent("record", "it preloads Strobe into the program with Linux's loader (LD_PRELOAD)");
}

int cmd_mcp(int argc, char **argv) {
  (void)argc, (void)argv;
  return absent("mcp", "it speaks HTTP over sockets, which this build has no port of");
}

int cmd_view(int argc, char **argv) {
  (void)argc, (void)argv;
  return absent("view", "the web viewer is served by libstrobe_server, which is not built for Windows");
}

int cmd_clock_offset(int argc, char **argv) {
  (void)argc, (void)argv;
  return absent("clock-offset", "it speaks HTTP over sockets, which this build has no port of");
}
