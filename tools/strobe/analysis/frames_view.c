/*
 * frames_view.c — the CLI's presentation of the frame model (frames_view.h):
 * series labels, tallies by kind and state, the frames section (rates per
 * series, passes by state, the slowest frames) and the stage rows, in text
 * and JSON.
 *
 * Owns: wording and layout only. Must never: decide which operations are
 * frames, their states, rates, stages or spans (strobe/frames.h does), or
 * add figures the model keeps apart (two series' rates, two processes'
 * stages).
 *
 * Contents: >>labels >>tally >>slowest >>frames-json >>frames-text >>stages >>list >>summary
 */
#include "frames_view.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MS(ns) ((ns) / 1e6)

/* >>labels */
static const char *const g_source_key[STROBE_FRAME_SOURCE_LIMIT] = {"none", "pass_operations", "marks",
                                                                     "top_level_scopes"};
static const char *const g_source_text[STROBE_FRAME_SOURCE_LIMIT] = {
    "none: the capture has no pass operations, frame marks or scopes",
    "pass operations per window (completed, presented and handed-off passes count towards the rates; docs/frames.md)",
    "FRAME marks (interval between consecutive marks on a thread)",
    ("none: the capture has no pass operations and no frame marks, so no frame rate; its top-level scopes are "
     "listed by duration instead")}; /* parenthesised: one element, which Clang's -Wstring-concatenation asks */

int cli_frames_read(const char *cmd, const char *path, int quiet, int spans, strobe_frames **out, int *read_status) {
  *out = NULL;
  cli_input in;
  int rc = cli_open(&in, cmd, path, quiet);
  if (rc) return rc;
  strobe_frames *fx;
  if (strobe_frames_create(NULL, &fx)) {
    cli_close(&in);
    cli_error(cmd, "out of memory");
    return CLI_FAIL;
  }
  for (const strobe_capture_record *r; (r = cli_next_ref(&in));) strobe_frames_add(fx, in.cap, r);
  *read_status = cli_finish_read(&in);
  strobe_frames_finish(fx, in.cap);
  cli_close(&in);
  if (spans && (rc = cli_open(&in, cmd, path, 1)) == CLI_OK) { /* its damage, if any, was said by the first read */
    for (const strobe_capture_record *r; (r = cli_next_ref(&in));)
      if (r->type == STROBE_REC_END && !r->unwound)
        strobe_frames_count_span(fx, r->thread, r->time_ns - r->duration_ns, r->self_ns);
    cli_close(&in);
  }
  if (strobe_frames_query_cut(fx).failed) {
    cli_error(cmd, "out of memory: the frames are incomplete");
    *read_status = CLI_FAIL;
  }
  *out = fx;
  return rc;
}

const char *fv_source_key(uint32_t source) { return source < STROBE_FRAME_SOURCE_LIMIT ? g_source_key[source] : "none"; }
const char *fv_source_text(uint32_t source) { return source < STROBE_FRAME_SOURCE_LIMIT ? g_source_text[source] : ""; }

const char *fv_process(const strobe_frames *fx, uint32_t process) {
  if (strobe_frames_query_process_count(fx) < 2) return "";
  const char *p = strobe_frames_query_process(fx, process);
  return p ? p : "";
}

const char *fv_series_label(const strobe_frames *fx, const strobe_capture *c, uint32_t series, char *buf, size_t cap) {
  const strobe_frame_series *s = strobe_frames_query_series(fx, series);
  if (!s) return "-";
  if (s->thread != STROBE_FRAMES_NONE) return cli_thread_label(c, s->thread, buf, cap);
  const char *p = fv_process(fx, s->process);
  snprintf(buf, cap, "%s%s%s", p, p[0] ? "/" : "", s->name[0] ? s->name : "(no window)");
  return buf;
}

/* >>tally */
fv_tally fv_tally_of(const strobe_frames *fx) {
  fv_tally t = {0};
  if (strobe_frames_query_source(fx) != STROBE_FRAME_SOURCE_PASSES) return t;
  for (uint32_t i = 0; i < strobe_frames_query_count(fx); i++) {
    const strobe_frame *fr = strobe_frames_query_frame(fx, i);
    t.by_kind[fr->kind < STROBE_OP_KIND_LIMIT ? fr->kind : 0]++;
    t.without_detail += !fr->detail && fr->state != STROBE_FRAME_UNFINISHED; /* an END says; an open one cannot */
    if (fr->kind != STROBE_OP_PASS) continue;
    t.passes++;
    t.by_state[fr->state]++;
  }
  return t;
}

/* >>slowest: the `top` frames with a duration, slowest first (ties: earlier first), through a min-heap of top
 * entries: one comparison for most frames, never a sort of them all. */
static int slower(const strobe_frames *fx, uint32_t x, uint32_t y) { /* 1 when frame x sorts before frame y */
  const strobe_frame *a = strobe_frames_query_frame(fx, x), *b = strobe_frames_query_frame(fx, y);
  double da = a->end_ns - a->begin_ns, db = b->end_ns - b->begin_ns;
  return da != db ? da > db : a->begin_ns < b->begin_ns;
}

static void sift_down(const strobe_frames *fx, uint32_t *h, uint32_t n, uint32_t i) {
  for (;;) { /* the root is the fastest kept: the first to go */
    uint32_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && slower(fx, h[m], h[l])) m = l;
    if (r < n && slower(fx, h[m], h[r])) m = r;
    if (m == i) return;
    uint32_t t = h[i];
    h[i] = h[m], h[m] = t, i = m;
  }
}

static uint32_t *slowest(const strobe_frames *fx, uint32_t top, uint32_t *n) {
  int passes = strobe_frames_query_source(fx) == STROBE_FRAME_SOURCE_PASSES;
  uint32_t *h = malloc(((size_t)top + 1) * sizeof *h), k = 0;
  if (!h) {
    *n = 0;
    return NULL;
  }
  for (uint32_t i = 0; i < strobe_frames_query_count(fx); i++) {
    const strobe_frame *fr = strobe_frames_query_frame(fx, i);
    if (fr->state == STROBE_FRAME_UNFINISHED || (passes && fr->kind != STROBE_OP_PASS)) continue;
    if (k < top) {
      h[k++] = i;
      if (k == top)
        for (uint32_t j = top / 2 + 1; j-- > 0;) sift_down(fx, h, k, j);
    } else if (slower(fx, i, h[0])) {
      h[0] = i;
      sift_down(fx, h, k, 0);
    }
  }
  for (uint32_t j = k / 2 + 1; k < top && j-- > 0;) sift_down(fx, h, k, j);
  for (uint32_t end = k; end > 1; end--) { /* heap sort: the fastest to the back */
    uint32_t t = h[0];
    h[0] = h[end - 1], h[end - 1] = t;
    sift_down(fx, h, end - 1, 0);
  }
  *n = k;
  return h;
}

/* >>frames-json */
static void states_json(strobe__json *j, const char *key, const uint64_t *by_state) {
  strobe__json_object(j, key);
#define FV_STATE(id, value, name) strobe__json_uint(j, #id, by_state[value]);
  STROBE_FRAME_STATES(FV_STATE)
#undef FV_STATE
  strobe__json_end(j);
}

static void series_json(strobe__json *j, const strobe_frames *fx, const strobe_capture *c) {
  strobe__json_array(j, "series");
  for (uint32_t i = 0; i < strobe_frames_query_series_count(fx); i++) {
    const strobe_frame_series *s = strobe_frames_query_series(fx, i);
    if (!s->has_rate) continue; /* fewer than two boundaries, or top-level scopes: no frame rate */
    char buf[CLI_THREAD_LABEL_MAX];
    strobe__json_object(j, NULL);
    strobe__json_str(j, "series", fv_series_label(fx, c, i, buf, sizeof buf));
    if (s->thread == STROBE_FRAMES_NONE) {
      strobe__json_str(j, "window", s->name);
      strobe__json_str(j, "process", strobe_frames_query_process(fx, s->process));
      strobe__json_uint(j, "passes", s->frames);
      strobe__json_uint(j, "counted", s->counted);
      states_json(j, "by_state", s->by_state);
    } else {
      strobe__json_uint(j, "thread", s->thread);
      strobe__json_str(j, "name", cli_thread_label(c, s->thread, buf, sizeof buf));
    }
    strobe__json_uint(j, "frames", s->intervals);
    strobe__json_num(j, "span_ns", s->span_ns, 1);
    strobe__json_num(j, "fps_first_to_last", s->fps_first_to_last, 3);
    strobe__json_num(j, "median_interval_ns", s->median_interval_ns, 1);
    strobe__json_num(j, "fps_steady_median_interval", s->fps_steady, 3);
    strobe__json_end(j);
  }
  strobe__json_end(j);
}

void fv_frames_json(strobe__json *j, const strobe_frames *fx, const strobe_capture *c, double start_ns, uint32_t top) {
  uint32_t src = strobe_frames_query_source(fx);
  strobe_frames_cut cut = strobe_frames_query_cut(fx);
  strobe__json_object(j, "frames");
  strobe__json_str(j, "source", fv_source_key(src));
  strobe__json_str(j, "definition", fv_source_text(src));
  if (src == STROBE_FRAME_SOURCE_PASSES) {
    fv_tally t = fv_tally_of(fx);
    strobe__json_uint(j, "passes", t.passes);
    strobe__json_uint(j, "uncommitted", t.by_state[STROBE_FRAME_DROPPED] + t.by_state[STROBE_FRAME_SUPERSEDED]);
    states_json(j, "by_state", t.by_state);
  }
  strobe__json_uint(j, "marks_cut", cut.marks);
  strobe__json_uint(j, "scopes_cut", cut.scopes);
  strobe__json_uint(j, "frames_not_listed", cut.listed);
  series_json(j, fx, c);
  uint32_t n;
  uint32_t *ix = slowest(fx, top, &n);
  strobe__json_array(j, "slowest");
  for (uint32_t i = 0; i < n; i++) {
    const strobe_frame *fr = strobe_frames_query_frame(fx, ix[i]);
    char buf[CLI_THREAD_LABEL_MAX];
    strobe__json_object(j, NULL);
    strobe__json_uint(j, "thread", fr->thread);
    strobe__json_str(j, "thread_name", cli_thread_label(c, fr->thread, buf, sizeof buf));
    strobe__json_str(j, "series", fv_series_label(fx, c, fr->series, buf, sizeof buf));
    if (src == STROBE_FRAME_SOURCE_PASSES) {
      strobe__json_str(j, "window", fr->window);
      strobe__json_str(j, "process", strobe_frames_query_process(fx, fr->process));
      strobe__json_str(j, "state", strobe_frames_state_name(fr->state));
      strobe__json_bool(j, "counted", fr->counted);
      if (fr->population[0]) strobe__json_str(j, "population", fr->population);
      else strobe__json_null(j, "population");
    }
    strobe__json_uint(j, "frame", fr->number);
    strobe__json_num(j, "start_ms", MS(fr->begin_ns - start_ns), 6);
    strobe__json_num(j, "duration_ns", fr->end_ns - fr->begin_ns, 1);
    strobe__json_end(j);
  }
  strobe__json_end(j);
  free(ix);
  strobe__json_end(j);
}

/* >>frames-text */
static void states_text(FILE *f, const fv_tally *t) {
  fprintf(f, "  %llu passes:", (unsigned long long)t->passes);
  const char *sep = " ";
#define FV_STATE_TEXT(id, value, name)                                                  \
  if (t->by_state[value]) {                                                            \
    fprintf(f, "%s%llu %s", sep, (unsigned long long)t->by_state[value], name);       \
    sep = ", ";                                                                        \
  }
  STROBE_FRAME_STATES(FV_STATE_TEXT)
#undef FV_STATE_TEXT
  uint64_t out = t->passes - t->by_state[STROBE_FRAME_COMPLETED] - t->by_state[STROBE_FRAME_PRESENTED] -
                 t->by_state[STROBE_FRAME_HANDED_OFF];
  fprintf(f, "%s\n", out ? "; the others are listed, not in the rates" : "");
}

static void slowest_text(FILE *f, const strobe_frames *fx, const strobe_capture *c, double start_ns, uint32_t top) {
  uint32_t src = strobe_frames_query_source(fx), n;
  uint32_t *ix = slowest(fx, top, &n);
  if (n) {
    int tops = src == STROBE_FRAME_SOURCE_TOP_SCOPES, passes = src == STROBE_FRAME_SOURCE_PASSES;
    fprintf(f, "  slowest %u%s:\n  %-20s %10s %14s %14s\n", n, tops ? " top-level scopes" : "",
            passes ? "window" : "thread", tops ? "scope" : "frame", "start ms", "duration");
  }
  for (uint32_t i = 0; i < n; i++) {
    const strobe_frame *fr = strobe_frames_query_frame(fx, ix[i]);
    char buf[CLI_THREAD_LABEL_MAX];
    const char *name = src == STROBE_FRAME_SOURCE_PASSES ? fv_series_label(fx, c, fr->series, buf, sizeof buf)
                                                         : cli_thread_label(c, fr->thread, buf, sizeof buf);
    fprintf(f, "  %-20s %10llu %14.4f", name, (unsigned long long)fr->number, MS(fr->begin_ns - start_ns));
    cli_cell(f, 14, cli_dur(fr->end_ns - fr->begin_ns));
    fprintf(f, "%s%s\n", fr->state == STROBE_FRAME_COMPLETED ? "" : "  ",
            fr->state == STROBE_FRAME_COMPLETED ? "" : strobe_frames_state_name(fr->state));
  }
  free(ix);
}

void fv_frames_text(FILE *f, const strobe_frames *fx, const strobe_capture *c, double start_ns, uint32_t top) {
  uint32_t src = strobe_frames_query_source(fx), rates = 0;
  fprintf(f, "\nframes: %s\n", fv_source_text(src));
  for (uint32_t i = 0; i < strobe_frames_query_series_count(fx); i++) {
    const strobe_frame_series *s = strobe_frames_query_series(fx, i);
    if (!s->has_rate) continue;
    char buf[CLI_THREAD_LABEL_MAX];
    rates++;
    fprintf(f, "  %-20s %.2f fps over the first-to-last frame span (%llu frames in %s): fps_first_to_last\n"
               "  %-20s %.2f fps steady, from the median frame interval of %s: fps_steady_median_interval\n",
            fv_series_label(fx, c, i, buf, sizeof buf), s->fps_first_to_last, (unsigned long long)s->intervals,
            cli_dur(s->span_ns), "", s->fps_steady, cli_dur(s->median_interval_ns));
  }
  if (!rates && src != STROBE_FRAME_SOURCE_TOP_SCOPES) fprintf(f, "  fewer than two frames: no frame rate\n");
  fv_tally t = fv_tally_of(fx);
  if (src == STROBE_FRAME_SOURCE_PASSES && t.passes) states_text(f, &t);
  strobe_frames_cut cut = strobe_frames_query_cut(fx);
  if (cut.marks || cut.scopes)
    fprintf(f, "  not kept: %llu frame marks and %llu top-level scopes past the index's bound: in no frame\n",
            (unsigned long long)cut.marks, (unsigned long long)cut.scopes);
  if (cut.listed)
    fprintf(f, "  %llu later frames are in the rates but not listed (past the index's %u)\n",
            (unsigned long long)cut.listed, STROBE_FRAMES_MAX_DEFAULT);
  slowest_text(f, fx, c, start_ns, top);
}

/* >>stages: a row per (stage, run-time parent, process); the declared parent where the capture has no other. */
static const char *site_name(const strobe_capture *c, uint32_t id) {
  const strobe_capture_site *s = id ? strobe_capture_query_site(c, id) : NULL;
  return s ? s->name : NULL;
}

static const char *parent_of(const strobe_frames_stage_summary *s, const strobe_capture *c) {
  if (s->parent_known) return site_name(c, s->parent);
  const strobe_capture_site *cs = strobe_capture_query_site(c, s->site);
  return cs && cs->parent[0] ? cs->parent : NULL;
}

void fv_stages_json(strobe__json *j, const strobe_frames *fx, const strobe_capture *c, fv_site_filter keep,
                    const void *ctx) {
  strobe__json_array(j, "stages");
  for (uint32_t i = 0; i < strobe_frames_query_stage_count(fx); i++) {
    const strobe_frames_stage_summary *s = strobe_frames_query_stage_summary(fx, i);
    if (keep && !keep(ctx, s->site)) continue;
    const char *parent = parent_of(s, c);
    strobe__json_object(j, NULL);
    strobe__json_uint(j, "id", s->site);
    strobe__json_str(j, "name", site_name(c, s->site));
    if (parent) strobe__json_str(j, "nested_in", parent);
    else strobe__json_null(j, "nested_in");
    strobe__json_str(j, "nested_in_from", s->parent_known ? "run-time" : "declared");
    strobe__json_str(j, "process", strobe_frames_query_process(fx, s->process));
    strobe__json_uint(j, "n", s->n);
    strobe__json_uint(j, "runs", s->runs);
    strobe__json_num(j, "total_ns", s->total_ns, 1);
    const char *key[] = {"p50", "p95", "max"};
    const double ns[] = {s->p50_ns, s->p95_ns, s->max_ns};
    for (int k = 0; k < 3; k++) { /* each with its n: the operations that ran it */
      strobe__json_object(j, key[k]);
      strobe__json_num(j, "ns", ns[k], 1);
      strobe__json_uint(j, "n", s->n);
      strobe__json_end(j);
    }
    strobe__json_end(j);
  }
  strobe__json_end(j);
}

void fv_stages_text(FILE *f, const strobe_frames *fx, const strobe_capture *c, fv_site_filter keep, const void *ctx) {
  int header = 0, declared = 0, procs = strobe_frames_query_process_count(fx) > 1;
  for (uint32_t i = 0; i < strobe_frames_query_stage_count(fx); i++) {
    const strobe_frames_stage_summary *s = strobe_frames_query_stage_summary(fx, i);
    if (keep && !keep(ctx, s->site)) continue;
    if (!header++)
      fprintf(f, "  stages (per operation totals; n is the operations that ran it; nested in: the stage open around "
                 "it when it ran)\n  %-24s %-20s %-12s %8s %10s %10s %10s\n",
              "stage", "nested in", procs ? "process" : "", "n", "p50", "p95", "max");
    const char *parent = parent_of(s, c);
    char pb[96];
    snprintf(pb, sizeof pb, "%s%s", parent ? parent : "-", parent && !s->parent_known ? " (declared)" : "");
    declared |= !s->parent_known;
    fprintf(f, "  %-24s %-20s %-12s %8llu", site_name(c, s->site), pb, fv_process(fx, s->process),
            (unsigned long long)s->n);
    cli_cell(f, 10, cli_dur(s->p50_ns));
    cli_cell(f, 10, cli_dur(s->p95_ns));
    cli_cell(f, 10, cli_dur(s->max_ns));
    fputc('\n', f);
  }
  if (header) fprintf(f, "  (nested stages are already inside their parent: do not sum)\n");
  if (declared)
    fprintf(f, "  (declared): the capture predates run-time parents; the parent shown is the one the source declares\n");
}

/* >>list: every frame with its state, series, processes, own spans and stages (strobe info --frames). */
static void frame_stages_json(strobe__json *j, const strobe_frames *fx, const strobe_capture *c, uint32_t i) {
  uint32_t n;
  const strobe_frame_stage *st = strobe_frames_query_stages(fx, i, &n);
  strobe__json_array(j, "stages");
  for (uint32_t k = 0; k < n; k++) {
    const char *parent = st[k].parent_known ? site_name(c, st[k].parent) : NULL;
    strobe__json_object(j, NULL);
    strobe__json_str(j, "name", site_name(c, st[k].site));
    if (parent) strobe__json_str(j, "nested_in", parent);
    else strobe__json_null(j, "nested_in");
    strobe__json_str(j, "process", strobe_frames_query_process(fx, st[k].process));
    strobe__json_uint(j, "count", st[k].count);
    strobe__json_num(j, "total_ns", st[k].total_ns, 1);
    strobe__json_end(j);
  }
  strobe__json_end(j);
}

void fv_frame_list_json(strobe__json *j, const strobe_frames *fx, const strobe_capture *c, double start_ns) {
  strobe__json_array(j, "list");
  for (uint32_t i = 0; i < strobe_frames_query_count(fx); i++) {
    const strobe_frame *fr = strobe_frames_query_frame(fx, i);
    char buf[CLI_THREAD_LABEL_MAX];
    strobe__json_object(j, NULL);
    strobe__json_uint(j, "number", fr->number);
    strobe__json_str(j, "kind", fr->kind ? strobe_op_kind_name(fr->kind) : "frame");
    strobe__json_str(j, "state", strobe_frames_state_name(fr->state));
    strobe__json_bool(j, "counted", fr->counted);
    strobe__json_str(j, "series", fr->series == STROBE_FRAMES_NONE ? "" : fv_series_label(fx, c, fr->series, buf, sizeof buf));
    strobe__json_str(j, "window", fr->window);
    if (fr->population[0]) strobe__json_str(j, "population", fr->population);
    else strobe__json_null(j, "population");
    strobe__json_str(j, "process", strobe_frames_query_process(fx, fr->process));
    strobe__json_str(j, "end_process", strobe_frames_query_process(fx, fr->end_process));
    strobe__json_str(j, "thread", cli_thread_label(c, fr->thread, buf, sizeof buf));
    strobe__json_num(j, "start_ms", MS(fr->begin_ns - start_ns), 6);
    if (fr->state == STROBE_FRAME_UNFINISHED) strobe__json_null(j, "duration_ns");
    else strobe__json_num(j, "duration_ns", fr->end_ns - fr->begin_ns, 1);
    strobe__json_uint(j, "spans", fr->spans);
    strobe__json_num(j, "spans_self_ns", fr->spans_self_ns, 1);
    strobe__json_bool(j, "detail", fr->detail);
    frame_stages_json(j, fx, c, i);
    strobe__json_end(j);
  }
  strobe__json_end(j);
}

void fv_frame_list_text(FILE *f, const strobe_frames *fx, const strobe_capture *c, double start_ns) {
  fprintf(f, "\nframes (%s; own spans: docs/frames.md)\n  %-22s %10s %-11s %14s %12s %8s %12s  %s\n",
          fv_source_text(strobe_frames_query_source(fx)), "series", "frame", "state", "start ms", "duration",
          "spans", "span self", "population");
  for (uint32_t i = 0; i < strobe_frames_query_count(fx); i++) {
    const strobe_frame *fr = strobe_frames_query_frame(fx, i);
    char buf[CLI_THREAD_LABEL_MAX];
    const char *series = fr->series == STROBE_FRAMES_NONE ? strobe_op_kind_name(fr->kind)
                                                          : fv_series_label(fx, c, fr->series, buf, sizeof buf);
    fprintf(f, "  %-22s %10llu %-11s %14.4f", series, (unsigned long long)fr->number,
            strobe_frames_state_name(fr->state), MS(fr->begin_ns - start_ns));
    cli_cell(f, 12, fr->state == STROBE_FRAME_UNFINISHED ? "-" : cli_dur(fr->end_ns - fr->begin_ns));
    fprintf(f, " %8llu", (unsigned long long)fr->spans);
    cli_cell(f, 12, cli_dur(fr->spans_self_ns));
    fprintf(f, "  %s\n", fr->population[0] ? fr->population : "-");
  }
}

/* >>summary: the series and their states, for strobe info. */
void fv_series_summary_json(strobe__json *j, const strobe_frames *fx, const strobe_capture *c) {
  fv_tally t = fv_tally_of(fx);
  strobe__json_str(j, "source", fv_source_key(strobe_frames_query_source(fx)));
  strobe__json_uint(j, "frames", strobe_frames_query_count(fx));
  strobe__json_object(j, "operations");
#define FV_KIND(id, number, name) strobe__json_uint(j, name, t.by_kind[number]);
  STROBE_OP_KINDS(FV_KIND)
#undef FV_KIND
  strobe__json_end(j);
  strobe__json_array(j, "series");
  for (uint32_t i = 0; i < strobe_frames_query_series_count(fx); i++) {
    const strobe_frame_series *s = strobe_frames_query_series(fx, i);
    char buf[CLI_THREAD_LABEL_MAX];
    strobe__json_object(j, NULL);
    strobe__json_str(j, "label", fv_series_label(fx, c, i, buf, sizeof buf));
    strobe__json_uint(j, "frames", s->frames);
    strobe__json_uint(j, "counted", s->counted);
    states_json(j, "by_state", s->by_state);
    if (s->has_rate) {
      strobe__json_num(j, "fps_first_to_last", s->fps_first_to_last, 3);
      strobe__json_num(j, "fps_steady_median_interval", s->fps_steady, 3);
    } else {
      strobe__json_null(j, "fps_first_to_last");
      strobe__json_null(j, "fps_steady_median_interval");
    }
    strobe__json_end(j);
  }
  strobe__json_end(j);
}

void fv_series_summary_text(FILE *f, const strobe_frames *fx, const strobe_capture *c) {
  fprintf(f, "frames      %u (%s)\n", strobe_frames_query_count(fx), fv_source_text(strobe_frames_query_source(fx)));
  for (uint32_t i = 0; i < strobe_frames_query_series_count(fx); i++) {
    const strobe_frame_series *s = strobe_frames_query_series(fx, i);
    char buf[CLI_THREAD_LABEL_MAX];
    fprintf(f, "            %s: %llu", fv_series_label(fx, c, i, buf, sizeof buf), (unsigned long long)s->frames);
    const char *sep = " (";
    for (uint32_t k = 0; k < STROBE_FRAME_STATE_LIMIT; k++) {
      if (!s->by_state[k] || (k == STROBE_FRAME_COMPLETED && s->by_state[k] == s->frames)) continue;
      fprintf(f, "%s%llu %s", sep, (unsigned long long)s->by_state[k], strobe_frames_state_name(k));
      sep = ", ";
    }
    fprintf(f, "%s", sep[0] == ',' ? ")" : "");
    if (s->has_rate) fprintf(f, "; %.2f fps first to last, %.2f steady", s->fps_first_to_last, s->fps_steady);
    fputc('\n', f);
  }
}
