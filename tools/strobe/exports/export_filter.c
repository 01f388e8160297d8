/*
 * export_filter.c — the --thread, --from and --to filters every export
 * format takes (export.h >>filters, docs/cli.md §Export filters): parsing
 * and checking their values, which threads pass, and the one extra pass over
 * a capture that finds the scopes still open at --to (or never ended) for the exporters that
 * write a scope's beginning before they know its end (perfetto, speedscope).
 *
 * It decides what is left out and counts nothing itself beyond `left_out`,
 * which the exporters add to; it never writes an export. Also the tid an
 * export shows for a thread (export.h >>threads) and a counter's series name
 * (>>names).
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

#include "analyze/gpu_frames.h"

#define MAX_DEPTH 256

typedef struct xf_cutstack {
  int passed;      /* the thread has passed --to: stack below is its snapshot */
  uint32_t depth;  /* open scopes then */
  uint64_t *ticks; /* their BEGIN ticks, by depth - 1 (MAX_DEPTH entries) */
} xf_cutstack;

static int all_digits(const char *s) {
  if (!*s) return 0;
  for (; *s; s++)
    if (!isdigit((unsigned char)*s)) return 0;
  return 1;
}

int xf_option(export_filter *f, int opt, const char *value) {
  if (opt == 't') {
    if (!*value) return cli_usage_error("export", "--thread needs a thread name or index, not an empty string");
    f->thread = value;
    return CLI_OK;
  }
  double v;
  const char *name = opt == 'F' ? "from" : "to";
  if (cli_parse_double(value, &v))
    return cli_usage_error("export", "--%s needs a number of ms since the capture started, not '%s'", name, value);
  if (v < 0) return cli_usage_error("export", "--%s is ms since the capture started: %s is before it", name, value);
  if (!f->has_range) {
    f->has_range = 1;
    f->from_ns = -INFINITY;
    f->to_ns = INFINITY;
  }
  if (opt == 'F') f->from_ns = v * 1e6;
  else f->to_ns = v * 1e6;
  return CLI_OK;
}

int xf_check(const export_filter *f) {
  if (f->has_range && !(f->to_ns > f->from_ns))
    return cli_usage_error("export", "--to (%.6g ms) must be later than --from (%.6g ms)", f->to_ns / 1e6,
                           f->from_ns / 1e6);
  return CLI_OK;
}

void xf_begin(export_filter *f, const strobe_capture *c) { f->start_ns = cli_start_ns(c); }

int xf_thread(export_filter *f, const strobe_capture *c, uint32_t index) {
  if (!f->thread) return 1;
  if (index >= f->n_threads) {
    uint32_t n = f->n_threads ? f->n_threads : 16;
    while (n <= index) n *= 2;
    uint8_t *p = realloc(f->thread_in, n);
    if (!p) return 0;
    memset(p + f->n_threads, 0, n - f->n_threads);
    f->thread_in = p;
    f->n_threads = n;
  }
  const strobe_capture_thread *t = strobe_capture_query_thread(c, index);
  int in = all_digits(f->thread) ? strtoul(f->thread, NULL, 10) == index : (t && strcmp(t->name, f->thread) == 0);
  f->thread_in[index] = (uint8_t)in;
  if (in) f->thread_matched = 1;
  return 1;
}

int xf_cut(const export_filter *f, uint32_t thread, uint32_t depth, uint64_t ticks) {
  if (thread >= f->n_cuts) return 0;
  const xf_cutstack *c = &f->cuts[thread];
  return c->passed && depth >= 1 && depth <= c->depth && c->ticks[depth - 1] == ticks;
}

static xf_cutstack *cut_of(export_filter *f, uint32_t thread) {
  if (thread >= f->n_cuts) {
    uint32_t n = f->n_cuts ? f->n_cuts : 16;
    while (n <= thread) n *= 2;
    xf_cutstack *p = realloc(f->cuts, n * sizeof *p);
    if (!p) return NULL;
    memset(p + f->n_cuts, 0, (n - f->n_cuts) * sizeof *p);
    f->cuts = p;
    f->n_cuts = n;
  }
  xf_cutstack *c = &f->cuts[thread];
  if (!c->ticks && !(c->ticks = malloc(MAX_DEPTH * sizeof *c->ticks))) return NULL;
  return c;
}

int xf_scan_cuts(export_filter *f, const char *path, int quiet) {
  if (!f->has_range || !isfinite(f->to_ns)) return CLI_OK;
  int rc = cli_need_file("export", path, "--to reads the capture once more to find the scopes still open at --to");
  if (rc) return rc;
  cli_input in;
  if ((rc = cli_open(&in, "export", path, quiet))) return rc;
  double to = cli_start_ns(in.cap) + f->to_ns;
  strobe_capture_record r;
  int failed = 0;
  while (cli_next(&in, &r) > 0) {
    if (r.type != STROBE_REC_BEGIN && r.type != STROBE_REC_END && r.type != STROBE_REC_COUNTER &&
        r.type != STROBE_REC_GAUGE && r.type != STROBE_REC_FRAME && r.type != STROBE_REC_LOST &&
        r.type != STROBE_REC_OP_END && r.type != STROBE_REC_THREAD_END)
      continue;
    xf_cutstack *c = cut_of(f, r.thread);
    if (!c) {
      failed = 1;
      break;
    }
    if (c->passed) continue;
    if (r.type == STROBE_REC_THREAD_END || ((r.type != STROBE_REC_LOST || r.ticks) && r.time_ns > to)) {
      c->passed = 1; /* the stack as it is now: these scopes end after --to, or never */
      continue;
    }
    if (r.type == STROBE_REC_BEGIN && r.depth >= 1 && r.depth <= MAX_DEPTH) {
      c->ticks[r.depth - 1] = r.ticks;
      c->depth = r.depth;
    } else if (r.type == STROBE_REC_END && r.depth >= 1 && r.depth <= MAX_DEPTH) {
      c->depth = r.depth - 1;
    } else if (r.type == STROBE_REC_LOST && r.depth < c->depth) {
      c->depth = r.depth;
    }
  }
  /* Scopes open at a thread's end or the file's never ended: not inside any --to. */
  for (uint32_t i = 0; i < f->n_cuts; i++)
    if (f->cuts[i].ticks) f->cuts[i].passed = 1;
  /* A damaged file is said by the export's own pass, which meets the same end. */
  cli_progress_end(in.progress);
  in.progress = NULL;
  cli_close(&in);
  if (failed) {
    cli_error("export", "out of memory");
    return CLI_FAIL;
  }
  return CLI_OK;
}

void xf_finish(const export_filter *f, const char *cmd) {
  if (f->thread && !f->thread_matched) cli_error(cmd, "warning: no thread matches --thread %s: nothing of any thread was exported", f->thread);
}

void xf_free(export_filter *f) {
  for (uint32_t i = 0; i < f->n_cuts; i++) free(f->cuts[i].ticks);
  free(f->cuts);
  free(f->thread_in);
  f->cuts = NULL;
  f->thread_in = NULL;
  f->n_cuts = f->n_threads = 0;
}

/* >>threads */
#define TID_SCAN 4096 /* threads checked for a repeated OS tid; later ones are assumed distinct */

uint64_t export_tid(export_tids *t, const strobe_capture *c, uint32_t index) {
  if (index >= t->n) {
    uint32_t n = t->n ? t->n : 16;
    while (n <= index) n *= 2;
    uint64_t *p = realloc(t->tid, n * sizeof *p);
    if (!p) return UINT64_MAX;
    for (uint32_t i = t->n; i < n; i++) p[i] = UINT64_MAX;
    t->tid = p;
    t->n = n;
  }
  if (t->tid[index] != UINT64_MAX) return t->tid[index];
  const strobe_capture_thread *th = strobe_capture_query_thread(c, index);
  /* a fiber's lane, or a thread the capture never defined: no OS tid */
  if (!th || th->fiber) return t->tid[index] = 1000000000ull + index;
  uint64_t tid = th->os_tid;
  for (uint32_t i = 0; i < t->n && i < TID_SCAN; i++) {
    if (i != index && t->tid[i] == tid) {
      tid = 1000000000ull + index; /* the OS reused the tid: keep the tracks apart */
      break;
    }
  }
  return t->tid[index] = tid;
}

void export_tids_free(export_tids *t) {
  free(t->tid);
  t->tid = NULL;
  t->n = 0;
}

/* >>names */
const char *export_counter_name(const strobe_capture_site *s, char *buf, size_t cap) {
  if (!s->category[0]) return s->name;
  snprintf(buf, cap, "%s: %s", s->name, s->category);
  return buf;
}

int xf_gpu_lanes(export_filter *f, strobe__gpu_data *g, strobe_capture *c, uint64_t lanes_records, int *failed) {
  if (!strobe__gpu_lanes_present(g)) return 0;
  strobe__gpu_resolve(g, c);
  if (g->failed) *failed = 1;
  if (f->thread) {
    f->left_out += lanes_records;
    return 0;
  }
  return 1;
}
