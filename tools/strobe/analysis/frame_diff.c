/*
 * frame_diff.c — `strobe diff FILE --frames N M`, the frame-to-frame span
 * diff (docs/cli.md §strobe diff FILE --frames N M): the spans of two frames,
 * matched by their path of names from their thread's root
 * ("frame/update/work"), with what grew, shrank, appeared or vanished,
 * largest change first.
 *
 * Frames and their spans are the frame model's (strobe/frames.h,
 * docs/frames.md), numbered as in `strobe report`: pass operations by
 * their frame id when the capture has any, else FRAME-mark intervals, else
 * top-level scopes, each numbered on its thread. A span is a frame's when
 * the model says so (the innermost operation open on its thread at its
 * begin), never because its interval lies inside the frame's. A first read
 * builds the model, the second collects the two frames' spans.
 *
 * Memory: the frame model, a path table with one node per distinct path that
 * occurs in the two frames (and their ancestors), and one stack of at most
 * 256 open scopes per thread.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "format/json_writer.h"
#include "frames_view.h"
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
  uint32_t frame[2];  /* their indexes in the model */
  uint32_t series;    /* the series they are chosen in */
  strobe_frames *fx;
  open_scope (*stack)[MAX_DEPTH]; /* per thread */
  uint32_t nstacks;
  path_table p;
  cli_input in;       /* pass 2's capture, kept open for site and thread names */
} fdiff;

/* A thread series named by --thread: all digits, its index; else its name (the model's copy). */
static int thread_matches(const strobe_frame_series *s, const char *want) {
  int digits = *want != '\0';
  for (const char *p = want; *p; p++) digits &= isdigit((unsigned char)*p) != 0;
  if (digits) return strtoul(want, NULL, 10) == s->thread;
  return s->thread != STROBE_FRAMES_NONE && strcmp(s->name, want) == 0;
}

/* The series to number frames in: the one --thread (marks, scopes) or --window (passes) names, else the
 * series of the first frame numbered N. Prints why none is found and returns CLI_USAGE. */
static int choose_series(fdiff *d, const char *thread, const char *window) {
  const strobe_frames *fx = d->fx;
  int passes = strobe_frames_query_source(fx) == STROBE_FRAME_SOURCE_PASSES;
  if (strobe_frames_query_count(fx) == 0) {
    cli_error("diff", "%s: no frames and no scopes: there are no frames to compare", d->path);
    return CLI_USAGE;
  }
  if ((passes && thread) || (!passes && window))
    return cli_usage_error("diff", "frames of %s are %s: choose them with %s", d->path,
                           strobe_frames_source_name(strobe_frames_query_source(fx)), passes ? "--window" : "--thread");
  d->series = STROBE_FRAMES_NONE;
  for (uint32_t i = 0; (thread || window) && i < strobe_frames_query_series_count(fx); i++) {
    const strobe_frame_series *s = strobe_frames_query_series(fx, i);
    char buf[CLI_THREAD_LABEL_MAX];
    if (thread ? thread_matches(s, thread)
               : !strcmp(s->name, window) || !strcmp(fv_series_label(fx, NULL, i, buf, sizeof buf), window)) {
      d->series = i;
      break;
    }
  }
  if ((thread || window) && d->series == STROBE_FRAMES_NONE)
    return cli_usage_error("diff", "no %s %s has frames in %s (its frames are %s)", thread ? "thread" : "window",
                           thread ? thread : window, d->path,
                           strobe_frames_source_name(strobe_frames_query_source(fx)));
  if (d->series == STROBE_FRAMES_NONE) {
    uint32_t i = passes ? strobe_frames_find(fx, d->want[0], STROBE_FRAMES_NONE) : 0; /* marks, scopes: the first thread */
    d->series = i == STROBE_FRAMES_NONE ? STROBE_FRAMES_NONE : strobe_frames_query_frame(fx, i)->series;
  }
  return CLI_OK;
}

static int find_frames(fdiff *d) {
  for (int side = 0; side < 2; side++) {
    d->frame[side] = d->series == STROBE_FRAMES_NONE ? STROBE_FRAMES_NONE
                                                     : strobe_frames_find(d->fx, d->want[side], d->series);
    const strobe_frame *fr = strobe_frames_query_frame(d->fx, d->frame[side]);
    if (fr && fr->state != STROBE_FRAME_UNFINISHED) continue;
    cli_error("diff", "%s: frame %llu does not exist or is not complete in that series (frames are %s)", d->path,
              (unsigned long long)d->want[side], strobe_frames_source_name(strobe_frames_query_source(d->fx)));
    return CLI_USAGE;
  }
  return CLI_OK;
}

static void add_span(fdiff *d, open_scope *stack, int side, uint32_t depth, double dur) {
  uint32_t parent = NO_NODE;
  for (uint32_t i = 0; i < depth; i++) {
    if (stack[i].node == NO_NODE) stack[i].node = path_node_of(&d->p, parent, stack[i].site);
    parent = stack[i].node;
    if (parent == NO_NODE) return;
  }
  d->p.n[parent].count[side]++;
  d->p.n[parent].total[side] += dur;
}

static open_scope *stack_of(fdiff *d, uint32_t thread) {
  if (thread >= d->nstacks) {
    uint32_t n = d->nstacks ? d->nstacks : 4;
    while (n <= thread) n *= 2;
    open_scope(*s)[MAX_DEPTH] = realloc(d->stack, (size_t)n * sizeof *s);
    if (!s) return NULL;
    d->stack = s;
    d->nstacks = n;
  }
  return d->stack[thread];
}

/* Pass 2: each completed span whose frame (strobe_frames_owner) is one of the two, under its path. Leaves d->in
 * open (the sites and threads of the spans found are defined by then). Returns an exit code for a failed open,
 * else CLI_OK with *read_status from cli_finish_read. */
static int collect(fdiff *d, int quiet, int *read_status) {
  cli_input *in = &d->in;
  int rc = cli_open(in, "diff", d->path, quiet);
  if (rc) return rc;
  strobe_capture_record r;
  while (cli_next(in, &r) > 0) {
    if ((r.type != STROBE_REC_BEGIN && r.type != STROBE_REC_END) || r.depth < 1 || r.depth > MAX_DEPTH) continue;
    open_scope *stack = stack_of(d, r.thread);
    if (!stack) {
      d->p.failed = 1;
      break;
    }
    if (r.type == STROBE_REC_BEGIN) {
      stack[r.depth - 1] = (open_scope){r.site, NO_NODE};
      continue;
    }
    if (r.unwound) continue; /* no duration */
    uint32_t owner = strobe_frames_owner(d->fx, r.thread, r.time_ns - r.duration_ns);
    for (int side = 0; side < 2; side++)
      if (owner == d->frame[side]) add_span(d, stack, side, r.depth, r.duration_ns);
  }
  *read_status = in->rc < 0 ? CLI_FAIL : CLI_OK;
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
  char sbuf[CLI_THREAD_LABEL_MAX], path[4096];
  uint32_t src = strobe_frames_query_source(d->fx);
  const char *series = fv_series_label(d->fx, c, d->series, sbuf, sizeof sbuf);
  const strobe_frame *fr[2] = {strobe_frames_query_frame(d->fx, d->frame[0]), strobe_frames_query_frame(d->fx, d->frame[1])};
  if (json) {
    strobe__json j = {0};
    strobe__json_object(&j, NULL);
    strobe__json_str(&j, "file", d->path);
    strobe__json_str(&j, "frames_are", fv_source_key(src));
    strobe__json_str(&j, "series", series);
    const strobe_frame_series *fs = strobe_frames_query_series(d->fx, d->series);
    if (fs && fs->thread != STROBE_FRAMES_NONE) {
      strobe__json_object(&j, "thread");
      strobe__json_uint(&j, "index", fs->thread);
      strobe__json_str(&j, "name", series);
      strobe__json_end(&j);
    }
    for (int side = 0; side < 2; side++) {
      strobe__json_object(&j, side ? "b" : "a");
      strobe__json_uint(&j, "frame", d->want[side]);
      strobe__json_str(&j, "state", strobe_frames_state_name(fr[side]->state));
      strobe__json_num(&j, "start_ms", (fr[side]->begin_ns - cli_start_ns(c)) / 1e6, 6);
      strobe__json_num(&j, "duration_ns", fr[side]->end_ns - fr[side]->begin_ns, 1);
      strobe__json_uint(&j, "spans", fr[side]->spans);
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
  double dur[2] = {fr[0]->end_ns - fr[0]->begin_ns, fr[1]->end_ns - fr[1]->begin_ns};
  fprintf(f, "frames %llu and %llu of %s %s in %s\nframes are %s; a span is a frame's when %s (docs/frames.md)\n",
          (unsigned long long)d->want[0], (unsigned long long)d->want[1],
          src == STROBE_FRAME_SOURCE_PASSES ? "window" : "thread", series, d->path, fv_source_text(src),
          src == STROBE_FRAME_SOURCE_PASSES ? "the frame was the innermost operation open on its thread at its begin"
                                            : "it began inside the frame");
  fprintf(f, "  frame %llu: %s (%s, %llu spans)   frame %llu: %s (%s, %llu spans)   change %s\n\n",
          (unsigned long long)d->want[0], cli_dur(dur[0]), strobe_frames_state_name(fr[0]->state),
          (unsigned long long)fr[0]->spans, (unsigned long long)d->want[1], cli_dur(dur[1]),
          strobe_frames_state_name(fr[1]->state), (unsigned long long)fr[1]->spans, cli_change(dur[1] - dur[0]));
  if (!n) {
    fprintf(f, "  no span belongs to either frame\n");
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

int frame_diff(const char *path, uint64_t n, uint64_t m, const char *thread, const char *window, int json,
               int quiet) {
  fdiff *d = calloc(1, sizeof *d);
  if (!d) return CLI_FAIL;
  d->path = path;
  d->want[0] = n;
  d->want[1] = m;
  int read_status = CLI_OK;
  int rc = cli_frames_read("diff", path, quiet, 1, &d->fx, &read_status); /* with each frame's own spans */
  if (!rc) rc = choose_series(d, thread, window);
  if (!rc) rc = find_frames(d);
  int second = CLI_OK; /* the first read said how the file ends */
  if (!rc) rc = collect(d, 1, &second);
  if (!rc) {
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
  if (d->in.cap) cli_close(&d->in);
  strobe_frames_destroy(d->fx);
  free(d->stack);
  path_table_free(&d->p);
  free(d);
  return rc ? rc : read_status;
}
