/*
 * input.c — the tool's side of reading a capture: opening it with a message
 * that says what is wrong when it cannot be read, the record loop's progress
 * hook, the end-of-file verdict (clean, cut short, truncated, corrupt), clock
 * comparison between two captures, and the small shared helpers (messages,
 * number parsing, names).
 *
 * It never decides what a subcommand prints on stdout; it only speaks on
 * stderr and returns exit codes (cli.h).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "format/json_writer.h"
#include "platform/io.h"

#define PROGRESS_EVERY 65536u /* records between progress checks: far below 1 % of a second */

/* >>messages */
static void vmsg(const char *cmd, const char *fmt, va_list ap) {
  fprintf(stderr, "strobe %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

void cli_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vmsg(cmd, fmt, ap);
  va_end(ap);
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vmsg(cmd, fmt, ap);
  va_end(ap);
  fprintf(stderr, "Try 'strobe %s --help'.\n", cmd);
  return CLI_USAGE;
}

int cli_bad_option(const char *cmd, char **argv, int optind_after) {
  const char *arg = optind_after > 0 ? argv[optind_after - 1] : "?";
  return cli_usage_error(cmd, "unknown option, or option missing its value: '%s'", arg);
}

/* >>values */
int cli_parse_double(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end || errno || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

void *cli_entry(void *table, uint32_t *n, uint32_t index, size_t size) {
  void **v;
  memcpy(&v, table, sizeof v); /* table is a T ***: every object pointer converts to and from void * */
  if (index >= *n) {
    uint32_t cap = *n ? *n : 16;
    while (cap <= index) cap *= 2;
    void **p = realloc(v, cap * sizeof *p);
    if (!p) return NULL;
    for (uint32_t i = *n; i < cap; i++) p[i] = NULL;
    memcpy(table, &p, sizeof p);
    v = p;
    *n = cap;
  }
  if (!v[index]) v[index] = calloc(1, size);
  return v[index];
}

int cli_parse_u64(const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  if (*s == '-' || *s == '+') return -1;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s || *end || errno) return -1;
  *out = v;
  return 0;
}

/* >>open */
/* Why a file that strobe_capture_open refused cannot be read. */
static void explain_open(cli_input *in, int err) {
  const char *cmd = in->cmd, *path = in->path;
  if (err == STROBE_EVERSION) {
    unsigned char head[12] = {0};
    int fd = in->is_stdin ? -1 : strobe__open_regular(path); /* stdin: read once, gone */
    ssize_t n = fd >= 0 ? read(fd, head, sizeof head) : 0;
    if (fd >= 0) close(fd);
    unsigned v = n == 12 ? (unsigned)head[8] | (unsigned)head[9] << 8 | (unsigned)head[10] << 16 | (unsigned)head[11] << 24 : 0;
    cli_error(cmd, "%s: capture format version %u is not supported (this strobe reads versions %u to %u)", path, v,
              STROBE_CAPTURE_FORMAT_OLDEST, STROBE_CAPTURE_FORMAT_VERSION);
  } else if (err == STROBE_EBADMAGIC) {
    cli_error(cmd, "%s: not a Strobe capture file (it does not start with the capture magic)", path);
  } else if (err == STROBE_ETRUNCATED) {
    cli_error(cmd, "%s: truncated inside its header: nothing to read", path);
  } else if (err == STROBE_ECORRUPT) {
    cli_error(cmd, "%s: the capture header is corrupt", path);
  } else {
    cli_error(cmd, "%s: cannot read: %s", path, strobe_strerror(err));
  }
}

/* What a path that is not a regular file is, for the refusal message. */
static const char *kind_of(const struct stat *st) {
  if (S_ISDIR(st->st_mode)) return "a directory";
  if (S_ISFIFO(st->st_mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(st->st_mode)) return "a socket";
  if (S_ISCHR(st->st_mode)) return "a character device";
  if (S_ISBLK(st->st_mode)) return "a block device";
  return "something else";
}

int cli_refuse_not_regular(const char *cmd, const char *path, const char *hint) {
  struct stat st;
  const char *kind = stat(path, &st) == 0 ? kind_of(&st) : "of another kind";
  cli_error(cmd, "%s is %s, not a regular file: refused without reading it (%s)", path, kind, hint);
  return CLI_USAGE;
}

/* A capture whose crash journal is still beside it (docs/recording.md §Crash journal) is read
 * recovered: from a temporary file, removed once open, so FILE itself is not changed. Says so. */
static void read_recovered(cli_input *in, const char *cmd, const char *path) {
  if (!strobe_capture_query_header(in->cap)->journal_id) return;
  char jpath[4096], tmp[64];
  if (snprintf(jpath, sizeof jpath, "%s.journal", path) >= (int)sizeof jpath || access(jpath, F_OK) != 0) return;
  snprintf(tmp, sizeof tmp, "/tmp/strobe-recovered-XXXXXX");
  int fd = mkstemp(tmp);
  if (fd < 0) return;
  close(fd);
  strobe_capture_recovery st;
  strobe_capture *cap = NULL;
  int rc = strobe_capture_recover(path, tmp, &st);
  if (!rc) rc = strobe_capture_open(tmp, &cap);
  unlink(tmp);
  if (rc) {
    fprintf(stderr, "strobe %s: %s: its journal could not be read (%s): reading the file alone\n", cmd, path,
            strobe_strerror(rc));
    return;
  }
  strobe_capture_close(in->cap);
  in->cap = cap;
  fprintf(stderr,
          "strobe %s: %s: its process died while it recorded; %llu events of %llu threads from %s are included "
          "(strobe recover %s writes them into it)\n",
          cmd, path, (unsigned long long)st.events, (unsigned long long)st.threads, jpath, path);
}

int cli_open(cli_input *in, const char *cmd, const char *path, int quiet) {
  *in = (cli_input){cmd, path, NULL, NULL, PROGRESS_EVERY, 1, 0, NULL, 0, 0};
  int rc;
  errno = 0;
  if (cli_is_stdin(path)) {
    /* '-': standard input, read as a stream (never a terminal: nobody types a capture). */
    in->path = CLI_STDIN_NAME;
    in->is_stdin = 1;
    struct stat st;
    if (fstat(0, &st) != 0 || isatty(0) || S_ISDIR(st.st_mode)) {
      cli_error(cmd, "standard input is %s, not a capture: pipe or redirect a capture into it",
                isatty(0) ? "a terminal" : "not readable as a stream");
      return CLI_USAGE;
    }
    rc = strobe_capture_open_fd(0, &in->cap);
  } else {
    /* The library opens without blocking and refuses what is not a regular
     * file on the descriptor it reads, so a FIFO never hangs us. */
    rc = strobe_capture_open(path, &in->cap);
    if (rc == STROBE_EINVAL)
      return cli_refuse_not_regular(cmd, path, "a capture is read from a regular file, or from standard input given as '-'");
  }
  if (rc == STROBE_EIO && errno) {
    cli_error(cmd, "cannot open %s: %s", in->path, strerror(errno));
    return CLI_FAIL;
  }
  if (rc) {
    explain_open(in, rc);
    return CLI_FAIL;
  }
  if (!in->is_stdin) read_recovered(in, cmd, path);
  struct stat st;
  if (!quiet && isatty(2) && !cli_is_stdin(path) && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
    const char *base = strrchr(path, '/');
    char label[96];
    snprintf(label, sizeof label, "strobe %s: %s", cmd, base ? base + 1 : path);
    in->progress = cli_progress_start(label, (uint64_t)st.st_size);
  }
  return CLI_OK;
}

int cli_need_file(const char *cmd, const char *path, const char *why) {
  if (!cli_is_stdin(path)) return CLI_OK;
  cli_error(cmd, "cannot read standard input ('-') here: %s; save the capture to a file first", why);
  return CLI_USAGE;
}

void cli_close(cli_input *in) {
  cli_progress_end(in->progress);
  in->progress = NULL;
  strobe_capture_close(in->cap);
  in->cap = NULL;
}

const strobe_capture_record *cli_next_batch(cli_input *in) {
  if (in->until_check <= in->batch_n) {
    in->until_check = PROGRESS_EVERY;
    if (in->progress) cli_progress_update(in->progress, strobe_capture_query_position(in->cap));
  } else {
    in->until_check -= in->batch_n;
  }
  int n = strobe_capture_next_batch(in->cap, &in->batch);
  in->rc = n > 0 ? 1 : n;
  in->batch_n = n > 0 ? (uint32_t)n : 0;
  in->batch_i = n > 0;
  return n > 0 ? in->batch : NULL;
}

/* >>end of file */
const char *cli_end_state(const cli_input *in) {
  strobe_capture_totals t = strobe_capture_query_totals(in->cap);
  if (in->rc == STROBE_ETRUNCATED) return "truncated inside a block: everything before that block was read";
  if (in->rc < 0) return strobe_strerror(in->rc);
  if (t.footer) return "complete";
  return "cut short: no footer (the process was killed or is still recording)";
}

cli_cost cli_query_cost(const strobe_capture *c) {
  const strobe_capture_header *h = strobe_capture_query_header(c);
  strobe_capture_totals t = strobe_capture_query_totals(c);
  cli_cost k = {h->event_cost_ns, h->overhead_per_scope_ns, 0, t.drain_cpu_ns, t.drain_events};
  if (t.drain_events) k.drain_ns_per_event = (double)t.drain_cpu_ns / (double)t.drain_events;
  return k;
}

const char *cli_overflow_name(uint32_t mode) {
  const char *name = strobe_overflow_name(mode);
  return name ? name : "?";
}

void cli_cost_text(FILE *f, const char *label, int width, const strobe_capture *c) {
  cli_cost k = cli_query_cost(c);
  fprintf(f, "%-*s", width, label);
  if (k.event_ns > 0)
    fprintf(f, "%.1f ns per event on recording threads (calibrated by the writer; %.1f ns per scope with its values)",
            k.event_ns, k.scope_ns);
  else if (!strcmp(strobe_capture_query_header(c)->os, "windows"))
    fprintf(f, "per-event cost not recorded (a Windows writer: no thread CPU clock fine enough, docs/platforms.md)");
  else
    fprintf(f, "per-event cost not recorded (older writer)");
  if (k.drain_events)
    fprintf(f, "; drain %.1f ns CPU per event (%.3f ms over %llu events)\n", k.drain_ns_per_event,
            (double)k.drain_cpu_ns / 1e6, (unsigned long long)k.drain_events);
  else
    fprintf(f, "; drain cost not recorded\n");
}

/* Traced functions of the capture: sites flagged STROBE_SITE_CALL. */
static uint32_t call_sites(const strobe_capture *c) {
  uint32_t n = 0;
  for (uint32_t id = 1; id < strobe_capture_query_site_limit(c); id++) {
    const strobe_capture_site *s = strobe_capture_query_site(c, id);
    if (s && (s->flags & STROBE_SITE_CALL)) n++;
  }
  return n;
}

void cli_calls_text(FILE *f, const char *label, int width, const strobe_capture *c) {
  strobe_capture_totals t = strobe_capture_query_totals(c);
  uint32_t sites = call_sites(c);
  uint64_t cut = t.calls_cut_depth + t.calls_cut_stack + t.calls_cut_functions + t.calls_cut_short + t.calls_cut_order;
  if (!sites && !cut && !t.calls_excluded && !t.calls_functions) return;
  fprintf(f, "%-*s%u traced functions in the capture (%u met without a symbol); %llu calls cut", width, label, sites,
          t.calls_unresolved, (unsigned long long)cut);
  if (cut)
    fprintf(f, " (%llu deeper than max_depth, %llu past the tracer's stack, %llu past the function table",
            (unsigned long long)t.calls_cut_depth, (unsigned long long)t.calls_cut_stack,
            (unsigned long long)t.calls_cut_functions);
  if (t.calls_cut_short || t.calls_cut_order)
    fprintf(f, ", %llu shorter than the minimum time, %llu held back past another event",
            (unsigned long long)t.calls_cut_short, (unsigned long long)t.calls_cut_order);
  if (cut) fputc(')', f);
  fprintf(f, ", %llu excluded by name\n", (unsigned long long)t.calls_excluded);
}

void cli_calls_json(strobe__json *j, const strobe_capture *c) {
  strobe_capture_totals t = strobe_capture_query_totals(c);
  strobe__json_object(j, "call_tracing");
  strobe__json_uint(j, "sites", call_sites(c));
  strobe__json_uint(j, "functions", t.calls_functions);
  strobe__json_uint(j, "unresolved", t.calls_unresolved);
  strobe__json_uint(j, "cut_depth", t.calls_cut_depth);
  strobe__json_uint(j, "cut_stack", t.calls_cut_stack);
  strobe__json_uint(j, "cut_functions", t.calls_cut_functions);
  strobe__json_uint(j, "excluded", t.calls_excluded);
  strobe__json_uint(j, "cut_short", t.calls_cut_short);
  strobe__json_uint(j, "cut_order", t.calls_cut_order);
  strobe__json_end(j);
}

void cli_loss_text(FILE *f, const char *label, int width, const strobe_capture *c) {
  const strobe_capture_header *h = strobe_capture_query_header(c);
  strobe_capture_totals t = strobe_capture_query_totals(c);
  if (!t.lost) return;
  double written = (double)t.lost + (double)t.events;
  fprintf(f, "%-*s%llu events LOST (%.2f %% of those written): rings were full with overflow=%s", width, label,
          (unsigned long long)t.lost, 100.0 * (double)t.lost / written, cli_overflow_name(h->overflow));
  if (h->overflow == 0) fprintf(f, "; STROBE_OVERFLOW_GROW or _WAIT keeps them");
  fprintf(f, "; every figure below misses them\n");
}

int cli_finish_read(cli_input *in) {
  cli_progress_end(in->progress);
  in->progress = NULL;
  /* A caller that found what it wanted still judges the whole file: the rest
   * is read (and dropped) so that a bad block after it is never silent. */
  if (in->rc > 0) {
    strobe_capture_record r;
    while (cli_next(in, &r) > 0) {
    }
  }
  strobe_capture_totals t = strobe_capture_query_totals(in->cap);
  unsigned long long at = (unsigned long long)strobe_capture_query_position(in->cap);
  if (in->rc == 0) {
    if (!t.footer)
      cli_error(in->cmd, "%s: cut short: no footer (the process was killed or is still recording); "
                "using everything up to its last whole block", in->path);
    return CLI_OK;
  }
  if (in->rc == STROBE_ETRUNCATED)
    cli_error(in->cmd, "%s: truncated inside a block (file ends at byte %llu); the output covers "
              "everything before that block", in->path, at);
  else
    cli_error(in->cmd, "%s: %s (near byte %llu); the output covers what was read before it", in->path,
              strobe_strerror(in->rc), at);
  return CLI_FAIL;
}

/* >>clocks */
int cli_clock_mismatch(const char *cmd, const cli_input *a, const cli_input *b) {
  const strobe_capture_header *ha = strobe_capture_query_header(a->cap);
  const strobe_capture_header *hb = strobe_capture_query_header(b->cap);
  double ra = ha->ns_per_tick, rb = hb->ns_per_tick;
  int differ = strcmp(ha->clock_source, hb->clock_source) != 0 ||
               fabs(ra - rb) > 0.01 * (fabs(ra) > fabs(rb) ? fabs(ra) : fabs(rb));
  if (differ)
    cli_error(cmd,
              "warning: the captures come from different clocks: %s is %s at %.6g ns/tick, %s is %s at "
              "%.6g ns/tick; durations are converted to ns with each file's own calibration, but they "
              "were measured differently",
              a->path, ha->clock_source, ra, b->path, hb->clock_source, rb);
  return differ;
}

double cli_start_ns(const strobe_capture *c) {
  return strobe_capture_ticks_to_ns(c, strobe_capture_query_header(c)->start_ticks);
}

int cli_times_in_range(const char *cmd, const char *path, const strobe_capture *c) {
  const strobe_capture_header *h = strobe_capture_query_header(c);
  double end = (double)h->epoch_mono_ns + strobe_capture_ticks_to_ns(c, strobe_capture_query_totals(c).end_ticks);
  if ((double)h->epoch_mono_ns <= CLI_MAX_MONO_NS && end <= CLI_MAX_MONO_NS) return CLI_OK;
  int epoch = (double)h->epoch_mono_ns > CLI_MAX_MONO_NS;
  cli_error(cmd, "%s: its %s (%llu ns of CLOCK_MONOTONIC) lies past 2^62 ns, out of range (a damaged header or footer)",
            path, epoch ? "epoch" : "end", epoch ? (unsigned long long)h->epoch_mono_ns : (unsigned long long)fmin(end, 0x1p63));
  return CLI_FAIL;
}

/* >>names */
const char *cli_site_kind_name(uint32_t kind) { return strobe__site_kind_name(kind); }

const char *cli_thread_label(const strobe_capture *c, uint32_t index, char *buf, size_t cap) {
  const strobe_capture_thread *t = strobe_capture_query_thread(c, index);
  if (t && t->fiber) {
    snprintf(buf, cap, "fiber %s", t->name[0] ? t->name : "?");
    return buf;
  }
  if (t && t->name[0]) return t->name;
  snprintf(buf, cap, "thread %u", index);
  return buf;
}
