/*
 * cli.h — what the `strobe` subcommands share: exit codes, the subcommand
 * signature, option parsing helpers, opening and reading a capture with
 * progress and honest end-of-file messages, the output file, and the
 * progress bar. Everything here is internal to the tool (cli_ prefix);
 * nothing is library API.
 *
 * Every message goes to stderr prefixed "strobe <cmd>: ". Exit codes are the
 * same for every subcommand (docs/cli.md):
 *   0  success
 *   1  the capture could not be read (missing, not a capture, corrupt,
 *      truncated inside a block: docs/cli.md §Damaged captures), or
 *      `compare` failed its gate
 *   2  usage error (bad option, bad value, an input that is not a regular
 *      file or "-", clocks that differ for compare)
 *   3  the output could not be written
 */
#ifndef STROBE_CLI_H
#define STROBE_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "format/codec.h"
#include "strobe/capture.h"

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2, CLI_OUTPUT = 3 };

/* >>subcommands: each takes argv[0] == its own name. */
int cmd_info(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_view(int argc, char **argv); /* cmd_view.c: needs libstrobe_server */
int cmd_mcp(int argc, char **argv); /* cmd_mcp.c: the stdio MCP bridge */
int cmd_tree(int argc, char **argv); /* cmd_tree.c: UI-tree snapshots */
int cmd_merge(int argc, char **argv); /* cmd_merge.c: captures of several processes on one timeline */
int cmd_clock_offset(int argc, char **argv); /* cmd_clock_offset.c: this host's clock against a peer server's */
int cmd_recover(int argc, char **argv); /* cmd_recover.c: a crashed capture's journal into it */
/* A server token from a file (cmd_mcp.c): 0, -1 when unreadable or empty, or STROBE__OPEN_NOT_REGULAR for a
 * FIFO, device or directory (never waited on). Trailing newlines and spaces are dropped. */
#define CLI_TOKEN_MAX 512
int cli_read_token(const char *path, char out[CLI_TOKEN_MAX + 1]);
/* Merges the captures paths[0..n) into out (docs/cli.md §strobe merge), speaking as
 * `strobe CMD`; same_host vouches for captures without a boot id. Returns a
 * CLI_* exit code; nothing is left at out on failure. */
/* How strobe merge placed an input (STROBE_CAPTURE_ALIGNMENTS' text), "?" past them (cmd_merge.c). */
const char *cli_alignment_name(uint32_t alignment);
int cli_merge_files(const char *cmd, const char *const *paths, int n, const char *out, int same_host, int quiet);
/* A merged capture's line in `strobe report` (its inputs, their widest bound, and what the merge could not carry,
 * by record type), and its JSON object "merge" (null for a capture that is no merge). cmd_merge.c. */
struct strobe__json;
void cli_merge_text(FILE *f, const strobe_capture *c);
/* Where the process died (crash_text.c): "LABELSIGSEGV on thread ui in pass 394 › layout_compute" and each thread's
 * open scopes, nothing without a CRASH block; the JSON object "crash" (null without one). */
void cli_crash_text(FILE *f, const char *label, const strobe_capture *c);
void cli_crash_json(struct strobe__json *j, const strobe_capture *c);
void cli_merge_json(struct strobe__json *j, const strobe_capture *c);
/* The "not_merged" object (the inputs' records a merge could not carry, by record type) that `strobe report`'s
 * and `strobe info`'s merge objects share. */
void cli_not_merged_json(struct strobe__json *j, const strobe_capture_merge *m);
/* The process a TREE, ATTACHMENT or DEEP record's origin (strobe_capture_record.origin) names in capture c: its
 * MERGE input's label, as LABEL#K (K: its place among the inputs, from 1) when another input has that label, then
 * written into buf (cap bytes); "?" when c is merged but its merge did not record it; NULL when c is not merged.
 * The MERGE block comes last: call it after the read. Owned by c or buf. cmd_merge.c. */
const char *cli_origin_process(const strobe_capture *c, uint32_t origin, char *buf, size_t cap);
/* Which of the n snapshots or deep captures (`what`) of frame `frame`, given by their origins in capture order,
 * `process` chooses: the first of that process, or with process NULL the first when all are of one process
 * (docs/cli.md §strobe merge). Otherwise prints why none is chosen (several processes, naming them; none of that
 * process; --process on a capture that is no merge) and returns -1: the caller exits CLI_USAGE. cmd_merge.c. */
int cli_pick_origin(const char *cmd, const strobe_capture *c, const char *path, const char *what, uint64_t frame,
                    const uint32_t *origins, uint32_t n, const char *process);
int cmd_record(int argc, char **argv); /* cmd_record.c: run a program with Strobe preloaded, write its capture */
int cmd_calls(int argc, char **argv); /* cmd_calls.c: deep captures and their replay status */
int cmd_explain(int argc, char **argv); /* cmd_explain.c: why frames were slow (strobe/explain.h) */
int cmd_query(int argc, char **argv); /* cmd_query.c: SQL over captures (needs SQLite) */
/* `strobe diff FILE --frames N M` (frame_diff.c); thread (marks, scopes) or window (passes) NULL: the series of
 * the first frame numbered N. */
int frame_diff(const char *path, uint64_t n, uint64_t m, const char *thread, const char *window, int json, int quiet);

/* >>messages */
/* printf's checks; src/platform/compat_windows.h names C99's printf where the
 * compiler's own "printf" is msvcrt's (no %zu). */
#ifndef STROBE__PRINTF
#define STROBE__PRINTF printf
#endif
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(STROBE__PRINTF, 2, 3)));
/* Prints "strobe CMD: MSG" and "Try 'strobe CMD --help'."; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(STROBE__PRINTF, 2, 3)));
/* The offending argument after getopt_long returned '?' or ':'; returns CLI_USAGE. */
int cli_bad_option(const char *cmd, char **argv, int optind_after);

/* >>values: parse a whole argument or fail (0 on success, -1 on junk). */
int cli_parse_double(const char *s, double *out);
int cli_parse_u64(const char *s, uint64_t *out);

/* >>input */
typedef struct cli_progress cli_progress;

typedef struct cli_input {
  const char *cmd;        /* for messages */
  const char *path;
  strobe_capture *cap;    /* open capture */
  cli_progress *progress; /* NULL when not shown */
  uint64_t until_check;   /* records left before the next progress update */
  int rc;                 /* last read's result: 1 while records come, 0 at the end, or a negative error */
  int is_stdin;           /* read from standard input ('-'): a stream, read once */
  const strobe_capture_record *batch; /* the last strobe_capture_next_batch's records... */
  uint32_t batch_n, batch_i;          /* ...how many, and the next one to hand out */
} cli_input;

/* Opens path; on failure prints why ("no such file", "not a Strobe capture
 * file", "format version 7 is not supported") and returns CLI_FAIL. Path
 * "-" is standard input, read as a stream (in->path becomes CLI_STDIN_NAME).
 * Anything that is not a regular file (a FIFO, device, socket, directory)
 * is refused without being waited on, and a terminal on standard input too:
 * CLI_USAGE. The progress bar is shown when stderr is a terminal, quiet is 0
 * and the input is a file. */
int cli_open(cli_input *in, const char *cmd, const char *path, int quiet);
#define CLI_STDIN_NAME "standard input"
static inline int cli_is_stdin(const char *path) { return path[0] == '-' && path[1] == 0; }
/* For subcommands that read a capture more than once: CLI_USAGE (after a
 * message giving why) when path is "-", else CLI_OK. */
int cli_need_file(const char *cmd, const char *path, const char *why);
/* Prints "PATH is a FIFO (named pipe), not a regular file: refused ... (HINT)"; returns CLI_USAGE. */
int cli_refuse_not_regular(const char *cmd, const char *path, const char *hint);
void cli_close(cli_input *in);

/* Reads every record of the capture, updating the progress bar (the read
 * loop every subcommand runs), a batch at a time (strobe_capture_next_batch).
 * cli_next_ref returns the next record, valid until the next call, or NULL
 * at the end or at an error (in->rc says which); cli_next copies it into
 * *rec and returns 1, or returns 0 at the end and the error at an error. */
const strobe_capture_record *cli_next_batch(cli_input *in);
static inline const strobe_capture_record *cli_next_ref(cli_input *in) {
  return in->batch_i < in->batch_n ? &in->batch[in->batch_i++] : cli_next_batch(in);
}
static inline int cli_next(cli_input *in, strobe_capture_record *rec) {
  const strobe_capture_record *r = cli_next_ref(in);
  if (!r) return in->rc < 0 ? in->rc : 0;
  *rec = *r;
  return 1;
}

/* After the read loop: clears the progress bar and says, on stderr, how the
 * file ended when it did not end cleanly ("cut short: no footer ...",
 * "truncated inside a block ...", or the reader's error). Returns CLI_OK for
 * a clean end or a file without footer that ends on a block boundary, and
 * CLI_FAIL for a reader error (including a truncated block): the output made
 * from what was read is still complete up to that point. */
int cli_finish_read(cli_input *in);

/* One line describing how the file ended, for info/report text and JSON:
 * "complete", "cut short: no footer (...)", "truncated inside a block", or
 * the reader's error text. */
const char *cli_end_state(const cli_input *in);

/* The cost figures of a capture (docs/recording.md, Cost): the writer's
 * calibrated cost per event on recording threads, and the drain's CPU time
 * per drained event while it recorded. A figure the capture does not carry
 * is 0 (an older writer; no DRAIN block yet). */
typedef struct cli_cost {
  double event_ns;           /* header event_cost_ns */
  double scope_ns;           /* header overhead_per_scope_ns: per scope, its values and counters included */
  double drain_ns_per_event; /* DRAIN: cpu_ns / events */
  uint64_t drain_cpu_ns, drain_events;
} cli_cost;
cli_cost cli_query_cost(const strobe_capture *c);
/* "cost  8.6 ns per event on recording threads (calibrated) ... drain 4.1 ns CPU per event ..." with
 * `label` padded to `width`, then a newline. */
void cli_cost_text(FILE *f, const char *label, int width, const strobe_capture *c);
/* When events were lost: one line saying how many, of how many written,
 * and what keeps them (the writer's overflow mode), with `label` padded to
 * `width`; nothing otherwise. */
void cli_loss_text(FILE *f, const char *label, int width, const strobe_capture *c);
struct strobe__json;
/* When the capture has traced calls (docs/exploration.md): one line saying
 * how many functions were traced, how many had no symbol, and every call cut
 * and why, with `label` padded to `width`; nothing otherwise. */
void cli_calls_text(FILE *f, const char *label, int width, const strobe_capture *c);
/* The same as the object "call_tracing" of a JSON document. */
void cli_calls_json(struct strobe__json *j, const strobe_capture *c);
/* The name of a strobe_overflow mode ("drop", "grow", "wait"), "?" for others. */
const char *cli_overflow_name(uint32_t mode);

/* 1 when two captures' clocks differ (source, or ns per tick by more than
 * 1 %), after printing a warning naming both. */
int cli_clock_mismatch(const char *cmd, const cli_input *a, const cli_input *b);

/* Times: ns since the epoch of a capture's start (header start_ticks). */
double cli_start_ns(const strobe_capture *c);
/* Largest CLOCK_MONOTONIC time a tool places, in ns (2^62: 146 years of uptime): past it, sums of times and
 * shifts would overflow 64 bits (docs/cli.md §Bad input). */
#define CLI_MAX_MONO_NS 4611686018427387904.0
/* 0 when the capture's epoch (header) and end (footer, or the last record read) lie within CLI_MAX_MONO_NS of
 * CLOCK_MONOTONIC's zero; else prints which time of `path` is out of range and returns CLI_FAIL. */
int cli_times_in_range(const char *cmd, const char *path, const strobe_capture *c);

/* >>output: -o FILE or stdout. */
typedef struct cli_output {
  const char *cmd;
  const char *path; /* NULL for stdout */
  FILE *f;
} cli_output;

/* Opens the output; on failure prints why and returns CLI_OUTPUT. */
int cli_output_open(cli_output *o, const char *cmd, const char *path);
/* Flushes and closes; returns CLI_OUTPUT (after a message) when any write
 * failed, else CLI_OK. A failed output file is removed. */
int cli_output_close(cli_output *o);

/* Writes a finished JSON document (and a newline) to the output and frees
 * its buffer. Returns CLI_OK, or CLI_FAIL when building it ran out of memory. */
struct strobe__json;
int cli_output_json(cli_output *o, struct strobe__json *j);

/* >>units: texts for people (src/analyze/units.h): a duration in the unit
 * that fits it ("712 ns", "14.2 µs", "3.10 ms"), a number in its site's unit.
 * From a ring of 16 buffers, so one printf may take up to 16 of them. */
const char *cli_dur(double ns);
const char *cli_num(double v, uint32_t unit);
/* A change: its sign ("+", "-", "±"), then the duration ("+14.2 µs"). */
const char *cli_change(double ns);
/* The printf width ("%*s") that right-aligns UTF-8 text s in w columns. */
int cli_w(int w, const char *s);
/* A space, then s right-aligned in w columns: one cell of a text table. */
void cli_cell(FILE *f, int w, const char *s);

/* >>progress (progress.c) */
cli_progress *cli_progress_start(const char *label, uint64_t total_bytes);
void cli_progress_update(cli_progress *p, uint64_t bytes);
void cli_progress_end(cli_progress *p); /* clears the line and frees; accepts NULL */

/* >>names */
const char *cli_site_kind_name(uint32_t kind);
/* A thread's display name: its name, or "thread N" when unnamed; a fiber's
 * lane (strobe.h >>fibers) is "fiber NAME". Returns buf or the name; buf of
 * CLI_THREAD_LABEL_MAX bytes holds any of them. */
#define CLI_THREAD_LABEL_MAX 80
const char *cli_thread_label(const strobe_capture *c, uint32_t index, char *buf, size_t cap);

/* >>entries: state kept per thread (or per any small index) of a capture.
 * The entry at `index` of a table of pointers (`table` is a T *** cast to
 * void *, `*n` its length), allocated zeroed (`size` bytes) on first use;
 * the table doubles from 16 to hold index, its new slots NULL. Returns NULL
 * when out of memory (the table stays valid, the entry absent). The caller
 * frees each entry and the table. */
void *cli_entry(void *table, uint32_t *n, uint32_t index, size_t size);

#endif
