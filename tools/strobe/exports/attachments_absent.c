/*
 * attachments_absent.c — `strobe export FILE --attachments DIR` on Windows
 * (chosen by tools/CMakeLists.txt there in place of export_attachments.c,
 * whose refusal of links and sockets is written with POSIX's lstat, link
 * and O_NOFOLLOW; docs/platforms.md §Windows): it says so and exits 2.
 *
 * Must never: create DIR or write a file.
 */
#include "export.h"

int export_attachments(const char *path, const char *dir, int force, int quiet) {
  (void)path, (void)dir, (void)force, (void)quiet;
  cli_error("export", "--attachments is not available on Windows (docs/platforms.md)");
  return 2;
}
