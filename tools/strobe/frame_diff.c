/*
 * frame_diff.c — `strobe diff FILE --frames N M`, the frame-to-frame span
 * diff (docs/cli.md §strobe diff FILE --frames N M): the spans of two frames of one thread, matched by their path
 * of names from the root ("frame/update/work"), with what grew, shrank,
 * appeared or vanished, largest change first.
 *
 * Frames are numbered as in `strobe report`: with FRAME marks, frame k is
 * the interval from the kth mark to the next on that thread, and a span
 * belongs to it when it begins and ends inside; without marks, frame k is the
 * kth top-level scope and everything under it. A first pass finds the thread
 * (the first to mark a frame, unless --thread says) and whether it marks
 * frames, usually from the first mark; the second stops after frame
 * max(N, M).
 *
 * Memory: a path table with one node per distinct path that occurs in the
 * two frames (and their ancestors), plus one stack of at most 256 open scopes.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "format/json_writer.h"
#include "pathtab.h"

#define MAX_DEPTH 256 /* the reader's stack bound (capture format) */
#define NO_NODE PATH_NONE

typedef struct open_scope {
  uint32_t site;
  uint32_t node; /* resolved lazily: NO_NODE until a span under it lands in a frame */
} open_scope;

typedef struct fdiff {
  const char *path;
  uint64_t want[2];   /* frame numbers N, M */
  int thread_given;
  uint32_t thread;    /* the thread whose frames are compared */
  int marks;          /* 1: frames are FRAME-mark intervals; 0: top-level scopes */
  /* pass 2 state */
  uint64_t marks_seen, tops_begun;
  double last_mark;
  double frame_start[2], frame_dur[2];
  int frame_done[2];
  open_scope stack[MAX_DEPTH];
  path_table p;
  cli_input in;       /* pass 2's capture, kept open for site and thread names */
} fdiff;

static int thread_matches(const strobe_capture *c, uint32_t index, const char *want) {
  int digits = *want != '\0';
  for (const char *s = want; *s; s++) digits &= isdigit((unsigned char)*s) != 0;
  if (digits) return strtoul(want, NULL, 10) == index;
  const strobe_capture_thread *t = strobe_capture_query_thread(c, index);
  return t && strcmp(t->name, want) == 0;
}

/* Pass 1: which thread, and does it mark frames? Stops at its first mark. */
static int find_thread(fdiff *d, const char *want, int quiet) {
  cli_input in;
  int rc = cli_open(&in, "diff", d->path, quiet);
  if (rc) return rc;
  strobe_capture_record r;
  int found = 0, first_thread = -1;
  while (!d->marks && cli_next(&in, &r) > 0) {
    if (r.type == STROBE_REC_THREAD && want && !found && thread_matches(in.cap, r.thread, want)) {
      found = 1;
      d->thread = r.thread;
    }
    if (r.type == STROBE_REC_BEGIN && first_thread < 0) first_thread = (int)r.thread;
    if (r.type == STROBE_REC_FRAME && (want ? found && r.thread == d->thread : 1)) {
      d->thread = r.thread;
      d->marks = 1;
    }
  }
  cli_close(&in); /* a read error is reported by pass 2, which meets it too */
  if (want && !found) return cli_usage_error("diff", "no thread matches --thread %s", want);
  if (!want && !d->marks) {
    if (first_thread < 0) {
      cli_error("diff", "%s: no scopes: there are no frames to compare", d->path);
      return CLI_USAGE;
    }
    d->thread = (uint32_t)first_thread;
  }
  return CLI_OK;
}

static void add_span(fdiff *d, int side, uint32_t depth, double dur) {
  uint32_t parent = NO_NODE;
  for (uint32_t i = 0; i < depth; i++) {
    if (d->stack[i].node == NO_NODE) d->stack[i].node = path_node_of(&d->p, parent, d->stack[i].site);
    parent = d->stack[i].node;
    if (parent == NO_NODE) return;
  }
  d->p.n[parent].count[side]++;
  d->p.n[parent].total[side] += dur;
}

/* Pass 2: accumulate the two frames' span trees. Leaves d->in open (the
 * sites and threads of the spans found are defined by then). Returns an exit
 * code for a failed open, else CLI_OK with *read_status from cli_finish_read. */
static int collect(fdiff *d, int quiet, int *read_status) {
  cli_input *in = &d->in;
  int rc = cli_open(in, "diff", d->path, quiet);
  if (rc) return rc;
  uint64_t last = d->want[0] > d->want[1] ? d->want[0] : d->want[1];
  strobe_capture_record r;
  while (cli_next(in, &r) > 0) {
    if (r.thread != d->thread) continue;
    if (r.type == STROBE_REC_BEGIN && r.depth >= 1 && r.depth <= MAX_DEPTH) {
      if (r.depth == 1 && !d->marks && ++d->tops_begun > last) break;
      d->stack[r.depth - 1] = (open_scope){r.site, NO_NODE};
    } else if (r.type == STROBE_REC_END && r.depth >= 1 && r.depth <= MAX_DEPTH) {
      double begin = r.time_ns - r.duration_ns;
      for (int side = 0; side < 2; side++) {
        if (d->marks) {
          if (d->marks_seen == d->want[side] && begin >= d->last_mark) add_span(d, side, r.depth, r.duration_ns);
        } else if (d->tops_begun == d->want[side]) {
          add_span(d, side, r.depth, r.duration_ns);
          if (r.depth == 1) {
            d->frame_done[side] = 1;
            d->frame_start[side] = begin;
            d->frame_dur[side] = r.duration_ns;
          }
        }
      }
    } else if (r.type == STROBE_REC_FRAME && d->marks) {
      for (int side = 0; side < 2; side++) {
        if (d->marks_seen == d->want[side] && d->marks_seen > 0) {
          d->frame_done[side] = 1;
          d->frame_start[side] = d->last_mark;
          d->frame_dur[side] = r.time_ns - d->last_mark;
        }
      }
      d->last_mark = r.time_ns;
      if (++d->marks_seen > last) break;
    }
  }
  *read_status = cli_finish_read(in);
  if (d->p.failed) {
    cli_error("diff", "out of memory");
    return CLI_FAIL;
  }
  return CLI_OK;
}

/* >>output */
static size_t path_of(const fdiff *d, const strobe_capture *c, uint32_t id, char *buf, size_t cap) {
  uint32_t chain[MAX_DEPTH];
  int n = 0;
  for (uint32_t x = id; x != NO_NODE && n < MAX_DEPTH; x = d->p.n[x].parent) chain[n++] = x;
  size_t len = 0;
  buf[0] = '\0';
  for (int i = n - 1; i >= 0; i--) {
    const strobe_capture_site *s = strobe_capture_query_site(c, d->p.n[chain[i]].site);
    int w = snprintf(buf + len, cap - len, "%s%s", i == n - 1 ? "" : "/", s ? s->name : "?");
    if (w < 0 || (size_t)w >= cap - len) return cap - 1;
    len += (size_t)w;
  }
  return len;
}

static const char *status_of(const path_node *x) {
  if (!x->count[0]) return "appeared";
  if (!x->count[1]) return "vanished";
  if (x->total[1] > x->total[0]) return "grew";
  if (x->total[1] < x->total[0]) return "shrank";
  return "same";
}

static const fdiff *g_sort;
static int by_change(const void *x, const void *y) {
  const path_node *a = &g_sort->p.n[*(const uint32_t *)x], *b = &g_sort->p.n[*(const uint32_t *)y];
  double ca = fabs(a->total[1] - a->total[0]), cb = fabs(b->total[1] - b->total[0]);
  if (ca != cb) return ca < cb ? 1 : -1;
  return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

static void write_out(cli_output *o, fdiff *d, const strobe_capture *c, int json, const uint32_t *ids, uint32_t n) {
  char tbuf[CLI_THREAD_LABEL_MAX], path[4096];
  const char *tname = cli_thread_label(c, d->thread, tbuf, sizeof tbuf);
  const char *def = d->marks ? "FRAME marks (interval between consecutive marks)" : "top-level scopes (no frame marks)";
  if (json) {
    strobe__json j = {0};
    strobe__json_object(&j, NULL);
    strobe__json_str(&j, "file", d->path);
    strobe__json_object(&j, "thread");
    strobe__json_uint(&j, "index", d->thread);
    strobe__json_str(&j, "name", tname);
    strobe__json_end(&j);
    strobe__json_str(&j, "frames_are", d->marks ? "marks" : "top_level_scopes");
    for (int side = 0; side < 2; side++) {
      strobe__json_object(&j, side ? "b" : "a");
      strobe__json_uint(&j, "frame", d->want[side]);
      strobe__json_num(&j, "start_ms", (d->frame_start[side] - cli_start_ns(c)) / 1e6, 6);
      strobe__json_num(&j, "duration_ns", d->frame_dur[side], 1);
      strobe__json_end(&j);
    }
    strobe__json_array(&j, "spans");
    for (uint32_t i = 0; i < n; i++) {
      const path_node *x = &d->p.n[ids[i]];
      path_of(d, c, ids[i], path, sizeof path);
      strobe__json_object(&j, NULL);
      strobe__json_str(&j, "path", path);
      strobe__json_str(&j, "status", status_of(x));
      if (x->count[0]) strobe__json_num(&j, "before_ns", x->total[0], 1);
      else strobe__json_null(&j, "before_ns");
      if (x->count[1]) strobe__json_num(&j, "after_ns", x->total[1], 1);
      else strobe__json_null(&j, "after_ns");
      strobe__json_num(&j, "change_ns", x->total[1] - x->total[0], 1);
      strobe__json_uint(&j, "count_before", x->count[0]);
      strobe__json_uint(&j, "count_after", x->count[1]);
      strobe__json_end(&j);
    }
    strobe__json_end(&j);
    strobe__json_end(&j);
    cli_output_json(o, &j);
    return;
  }
  FILE *f = o->f;
  fprintf(f, "frames %llu and %llu of thread %s in %s\nframes are %s\n", (unsigned long long)d->want[0],
          (unsigned long long)d->want[1], tname, d->path, def);
  fprintf(f, "  frame %llu: %s   frame %llu: %s   change %s\n\n", (unsigned long long)d->want[0],
          cli_dur(d->frame_dur[0]), (unsigned long long)d->want[1], cli_dur(d->frame_dur[1]),
          cli_change(d->frame_dur[1] - d->frame_dur[0]));
  if (!n) {
    fprintf(f, "  no spans completed inside either frame\n");
    return;
  }
  fprintf(f, "  spans by path (inclusive, summed over calls), largest change first\n");
  fprintf(f, "  %-40s %12s %12s %12s %7s %7s  %s\n", "path", "before", "after", "change", "n before", "n after",
          "status");
  for (uint32_t i = 0; i < n; i++) {
    const path_node *x = &d->p.n[ids[i]];
    path_of(d, c, ids[i], path, sizeof path);
    fprintf(f, "  %-40s", path);
    cli_cell(f, 12, x->count[0] ? cli_dur(x->total[0]) : "-");
    cli_cell(f, 12, x->count[1] ? cli_dur(x->total[1]) : "-");
    cli_cell(f, 12, cli_change(x->total[1] - x->total[0]));
    fprintf(f, " %7llu %7llu  %s\n", (unsigned long long)x->count[0], (unsigned long long)x->count[1], status_of(x));
  }
}

int frame_diff(const char *path, uint64_t n, uint64_t m, const char *thread, int json, int quiet) {
  fdiff *d = calloc(1, sizeof *d);
  if (!d) return CLI_FAIL;
  d->path = path;
  d->want[0] = n;
  d->want[1] = m;
  int read_status = CLI_OK;
  int rc = find_thread(d, thread, quiet);
  if (!rc) rc = collect(d, quiet, &read_status);
  if (!rc) {
    for (int side = 0; side < 2; side++) {
      if (d->frame_done[side]) continue;
      cli_error("diff", "%s: frame %llu does not exist or is not complete on that thread (frames are %s)", path,
                (unsigned long long)d->want[side], d->marks ? "FRAME-mark intervals" : "top-level scopes");
      rc = read_status ? read_status : CLI_USAGE;
      break;
    }
  }
  if (!rc) {
    {
      uint32_t *ids = malloc(((size_t)d->p.len + 1) * sizeof *ids);
      uint32_t k = 0;
      for (uint32_t i = 0; ids && i < d->p.len; i++)
        if (d->p.n[i].count[0] || d->p.n[i].count[1]) ids[k++] = i;
      g_sort = d;
      if (ids) qsort(ids, k, sizeof *ids, by_change);
      cli_output o;
      if (!ids) {
        cli_error("diff", "out of memory");
        rc = CLI_FAIL;
      } else if ((rc = cli_output_open(&o, "diff", NULL)) == CLI_OK) {
        write_out(&o, d, d->in.cap, json, ids, k);
        rc = cli_output_close(&o);
      }
      free(ids);
    }
  }
  if (d->in.cap) cli_close(&d->in);
  path_table_free(&d->p);
  free(d);
  return rc ? rc : read_status;
}
