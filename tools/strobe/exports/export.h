/*
 * export.h — the exporters behind `strobe export` and the fast text writer
 * they share. Each exporter streams the capture: memory is bounded by sites,
 * threads and stack depth, never by events (speedscope additionally spools
 * each thread's events to a temporary file, because its format groups events
 * by thread and a capture interleaves threads).
 *
 * The writer (ob_*) formats numbers by hand into a 256 KiB buffer: the chrome
 * export writes one JSON object per scope, millions per second, and printf
 * would be most of its cost.
 */
#ifndef STROBE_CLI_EXPORT_H
#define STROBE_CLI_EXPORT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define OB_SIZE (256u << 10)
#define OB_SLACK 512u /* the most one unchecked ob_* sequence may write after ob_room */

typedef struct ob {
  FILE *f;
  size_t len;
  int failed; /* a write failed: the output is incomplete */
  char buf[OB_SIZE];
} ob;

void ob_flush(ob *o);
/* Makes room for n more bytes (n <= OB_SIZE). */
static inline void ob_room(ob *o, size_t n) {
  if (OB_SIZE - o->len < n) ob_flush(o);
}
static inline void ob_mem(ob *o, const void *p, size_t n) {
  if (n > OB_SIZE - o->len) {
    ob_flush(o);
    if (n > OB_SIZE) {
      if (fwrite(p, 1, n, o->f) != n) o->failed = 1;
      return;
    }
  }
  memcpy(o->buf + o->len, p, n);
  o->len += n;
}
static inline void ob_str(ob *o, const char *s) { ob_mem(o, s, strlen(s)); }
static inline void ob_ch(ob *o, char c) {
  ob_room(o, 1);
  o->buf[o->len++] = c;
}
/* Decimal integer; the caller has made room (ob_room) for 21 bytes. */
void ob_u64(ob *o, uint64_t v);
void ob_i64(ob *o, int64_t v);
/* v / 1000 with exactly three decimals ("12.345", "-0.001"): ns as us. */
void ob_milli(ob *o, int64_t v);
/* A double as JSON (shortest round-trip form, "null" when not finite). */
void ob_double(ob *o, double v);
/* A JSON string literal, escaped, with its quotes. */
void ob_json_str(ob *o, const char *s);

/* Nearest integer of a non-huge double (durations and times in ns). */
static inline int64_t round_i64(double v) { return (int64_t)(v < 0 ? v - 0.5 : v + 0.5); }

/* >>filters: --thread, --from and --to, the same for every format
 * (docs/cli.md §Export filters). A scope is exported when its thread passes
 * --thread and it lies wholly inside [from, to] (ms since the capture start,
 * header start_ticks): one open at --from or still open at --to is left
 * out, its children inside the range are kept. Counters, gauges, frame marks
 * and loss markers are kept by their time; operations when they begin and
 * end inside the range. A scope that never ended is kept only without --to
 * (its end is unknown) when it began at or after --from; one whose END was
 * lost when it began inside the range and the loss was recorded inside it. */
typedef struct export_filter {
  const char *thread;    /* NULL: every thread; all digits: a thread index; else an exact thread name */
  int has_range;
  double from_ns, to_ns; /* since the capture start; -inf / +inf when not given */
  double start_ns;       /* the capture start since the epoch (set by xf_begin) */
  uint8_t *thread_in;    /* per thread index: 1 when it passes --thread */
  uint32_t n_threads;
  int thread_matched;    /* some thread passed --thread */
  uint64_t left_out;     /* scopes, counters, marks and operations the filters left out */
  /* --to with an exporter that writes a scope's beginning before its end
   * (perfetto, speedscope): per thread, the scopes open when the thread first
   * passed --to (or at its end, or the file's, when it never did), found by
   * xf_scan_cuts in a pass of its own. */
  struct xf_cutstack *cuts;
  uint32_t n_cuts;
} export_filter;

/* Parses one filter option's value into f; CLI_OK, or CLI_USAGE after a
 * message naming the option and the bad value. `opt` is 't', 'F' or 'T'. */
int xf_option(export_filter *f, int opt, const char *value);
/* After the options: --to later than --from (else CLI_USAGE after a message). */
int xf_check(const export_filter *f);
/* Sets the origin of --from/--to from an open capture. */
void xf_begin(export_filter *f, const strobe_capture *c);
/* At a THREAD record: decides whether thread `index` passes --thread
 * (0 on out of memory: the thread is then left out and f->thread_in unset). */
int xf_thread(export_filter *f, const strobe_capture *c, uint32_t index);
/* Before an exporter writes the GPU and producer lanes of g: resolves their
 * times against the whole capture (later calibration pairs improve earlier
 * spans; a failure sets *failed) and applies --thread, which names a CPU
 * thread, so the lanes are left out and `lanes_records` counted in left_out.
 * 1 when the lanes are to be written. */
struct strobe__gpu_data;
int xf_gpu_lanes(export_filter *f, struct strobe__gpu_data *g, strobe_capture *c, uint64_t lanes_records, int *failed);
/* 1 when records of thread `index` are exported. */
static inline int xf_thread_in(const export_filter *f, uint32_t index) {
  return !f->thread || (index < f->n_threads && f->thread_in[index]);
}
/* 1 when time t (ns since the epoch) lies inside the range. */
static inline int xf_time_in(const export_filter *f, double t_ns) {
  double rel = t_ns - f->start_ns;
  return !f->has_range || (rel >= f->from_ns && rel <= f->to_ns);
}
/* 1 when the thread's BEGIN at `depth` and `ticks` opened a scope that was
 * still open when its thread first passed --to, or that never ended (xf_scan_cuts). */
int xf_cut(const export_filter *f, uint32_t thread, uint32_t depth, uint64_t ticks);
/* Reads the capture at path once (it must be a file) to find, per thread,
 * the scopes still open when the thread first passed --to. Nothing to do
 * without --to. CLI_OK, or an exit code after a message. */
int xf_scan_cuts(export_filter *f, const char *path, int quiet);
/* After the export: warns when --thread matched no thread. */
void xf_finish(const export_filter *f, const char *cmd);
void xf_free(export_filter *f);

/* >>threads: the tid an export shows for a thread: its OS tid, or
 * 1000000000 + its index when an earlier thread (of the first 4096) had the
 * same one (the OS reused it), so the threads' tracks stay apart. */
typedef struct export_tids {
  uint64_t *tid; /* per thread index; UINT64_MAX: not given yet */
  uint32_t n;
} export_tids;
/* Returns the tid for thread index (the same on later calls); UINT64_MAX when
 * out of memory. */
uint64_t export_tid(export_tids *t, const strobe_capture *c, uint32_t index);
void export_tids_free(export_tids *t);

/* >>names: a counter's or gauge's series name: its family, and its kind
 * when it has one (docs/recording.md §Counters and gauges by kind: the kind
 * is the site's category), "draw_calls: quads"; so kinds stay apart. */
const char *export_counter_name(const strobe_capture_site *s, char *buf, size_t cap);

/* >>exporters: each reads the whole capture from in (opened by cli_open)
 * and writes to out, with the filters applied. Return CLI_OK, or the exit
 * code after a message. */
int export_chrome(cli_input *in, FILE *out, export_filter *f);
/* Speedscope reads the capture more than once (see export_speedscope.c), so it
 * takes the path and options and opens the capture itself. */
int export_speedscope(const char *path, int quiet, FILE *out, export_filter *f);
int export_folded(cli_input *in, FILE *out, export_filter *f);
int export_csv(cli_input *in, FILE *out, export_filter *f);
/* One CSV field, quoted (RFC 4180) when it holds a comma, a quote or a line break; strobe query --csv too. */
void export_csv_field(FILE *f, const char *s);
/* `strobe export FILE --attachments DIR` (export_attachments.c): every
 * attachment into DIR, refusing a DIR that exists as anything but a directory, or holds anything unless force. */
int export_attachments(const char *path, const char *dir, int force, int quiet);
/* Perfetto's protobuf trace (export_perfetto.c), its packets compressed
 * with zstd (zstd_compressed_packets), deflate (compressed_packets) or not. */
enum { EXPORT_PERFETTO_ZSTD, EXPORT_PERFETTO_DEFLATE, EXPORT_PERFETTO_PLAIN };
int export_perfetto(cli_input *in, FILE *out, export_filter *f, int compress);
/* OpenTelemetry's OTLP/JSON trace data (export_otlp.c, docs/otel.md): it reads
 * the capture twice, so it takes the path and opens it itself. */
typedef struct otlp_opts {
  int scopes;                /* 1: every scope inside an operation, not only its stages */
  const char *service;       /* service.name; NULL: "unknown_service:strobe" */
  const char *resource[32];  /* extra resource attributes, "key=value" */
  uint32_t nresource;
} otlp_opts;
int export_otlp(const char *path, int quiet, FILE *out, export_filter *f, const otlp_opts *o);

/* The web viewer and one capture's data in one self-contained HTML file
 * (export_html.c, docs/viewer.md §One file), written to out (a file). It
 * reads the capture twice (the viewer's model), so it takes the path; it
 * holds the capture's first max_spans spans (the viewer's bound, docs/viewer.md §Memory bound): the rest is
 * counted and the viewer's header says so. */
typedef struct export_html_result {
  uint64_t spans, spans_cut, frames; /* what the report's model holds and cut */
  uint64_t bytes;                    /* the report's size */
} export_html_result;
int export_html(const char *path, const char *out, uint32_t max_spans, export_html_result *res);

#endif
