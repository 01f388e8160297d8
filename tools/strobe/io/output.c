/*
 * output.c — where a subcommand's result goes: standard output, or the file
 * named by -o. Owns the "cannot write" messages and exit code 3: an output
 * that cannot be created, or a write that fails later (disk full, closed
 * pipe reader), is reported once, and a partial output file is removed so
 * nobody mistakes it for a whole one. Also the texts of durations and of
 * numbers in their units that every subcommand prints (>>units).
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "analyze/units.h"
#include "cli.h"
#include "format/json_writer.h"

#define OUT_BUFFER (1u << 20) /* stdio buffer: few, large writes */

int cli_output_open(cli_output *o, const char *cmd, const char *path) {
  *o = (cli_output){cmd, NULL, stdout};
  if (path && strcmp(path, "-") != 0) {
    o->path = path;
    o->f = fopen(path, "w");
    if (!o->f) {
      cli_error(cmd, "cannot write %s: %s", path, strerror(errno));
      return CLI_OUTPUT;
    }
  }
  setvbuf(o->f, NULL, _IOFBF, OUT_BUFFER);
  return CLI_OK;
}

int cli_output_close(cli_output *o) {
  if (!o->f) return CLI_OK;
  int failed = ferror(o->f);
  int err = failed ? errno : 0;
  if (fflush(o->f) != 0) {
    failed = 1;
    err = errno;
  }
  if (o->path) {
    if (fclose(o->f) != 0 && !failed) {
      failed = 1;
      err = errno;
    }
  }
  o->f = NULL;
  if (!failed) return CLI_OK;
  cli_error(o->cmd, "writing %s failed: %s", o->path ? o->path : "standard output",
            err ? strerror(err) : "write error");
  if (o->path) remove(o->path);
  return CLI_OUTPUT;
}

int cli_output_json(cli_output *o, strobe__json *j) {
  int failed = j->out.failed;
  if (!failed) {
    fwrite(j->out.data, 1, j->out.len, o->f);
    fputc('\n', o->f);
  }
  strobe__buf_free(&j->out);
  if (failed) {
    cli_error(o->cmd, "out of memory while building the JSON output");
    return CLI_FAIL;
  }
  return CLI_OK;
}

/* >>units */
static char *next_buf(void) {
  static char ring[16][STROBE__FMT_CAP];
  static unsigned next;
  return ring[next++ % 16];
}

const char *cli_dur(double ns) { return strobe__fmt_duration(next_buf(), STROBE__FMT_CAP, ns); }

const char *cli_num(double v, uint32_t unit) { return strobe__fmt_unit(next_buf(), STROBE__FMT_CAP, v, unit); }

const char *cli_change(double ns) {
  char *buf = next_buf();
  char d[STROBE__FMT_CAP];
  snprintf(buf, STROBE__FMT_CAP, "%s%s", ns > 0 ? "+" : ns < 0 ? "-" : "±", strobe__fmt_duration(d, sizeof d, fabs(ns)));
  return buf;
}

int cli_w(int w, const char *s) { return w + (int)strlen(s) - strobe__fmt_columns(s); }

void cli_cell(FILE *f, int w, const char *s) { fprintf(f, " %*s", cli_w(w, s), s); }
