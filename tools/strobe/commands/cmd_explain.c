/*
 * cmd_explain.c — `strobe explain FILE [--frame N | --slowest K] [--json]`:
 * why a frame was slow, one screen per frame, from the library's frame
 * explanation (strobe/explain.h, docs/explain.md): the parts of its wall
 * time that exceeded their norm, each with what grew (on CPU, blocked,
 * preempted) and the sampled functions on CPU, then "rest as usual".
 *
 * Owns: the words and the JSON of an explanation. Must never: decide what
 * a frame is, what a part is or whether it exceeded its norm (the library
 * does), or print an unknown figure as zero.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "format/json_writer.h"
#include "analysis/frames_view.h"
#include "analysis/memory.h"
#include "strobe/explain.h"

static const char g_usage[] =
    "usage: strobe explain [--frame N | --slowest K] [--json] [--quiet] FILE\n"
    "\n"
    "Explains why frames were slow (docs/explain.md): each frame's wall time in parts\n"
    "(each stage's self time, time outside stages, the hand-off gap between processes,\n"
    "the GPU's backlog and polling), each set against its p50 over the frames of the same\n"
    "kind and window (n of them); the parts that exceeded their norm, with what grew (on\n"
    "CPU, blocked, preempted: from context switches, where the capture recorded them) and\n"
    "the sampled functions on CPU. A part without data says unknown, never zero.\n"
    "\n"
    "  --frame N    the frame numbered N (a pass's frame id; a mark interval's or top-level\n"
    "               scope's number)\n"
    "  --slowest K  the K slowest ended frames (default 1)\n"
    "  --json       machine-readable output (schema: docs/explain.md)\n"
    "  --quiet      no progress bar\n"
    "\n"
    "Exit: 0 explained, 1 unreadable or damaged capture, 2 usage (no such frame), 3 output.\n";

/* >>text */
static const char *frame_label(const strobe_frames *fx, const strobe_frame *f, char *buf, size_t cap) {
  const strobe_frame_series *s = strobe_frames_query_series(fx, f->series);
  const char *what = f->kind ? strobe_op_kind_name(f->kind) : "frame";
  const char *where = s ? s->name : f->window, *proc = fv_process(fx, f->process);
  snprintf(buf, cap, "%s %llu (%s%s%s", what, (unsigned long long)f->number, proc, *proc ? "/" : "",
           *where ? where : "-");
  return buf;
}

static const char *fig(const strobe_explain_figure *g) { return g->known ? cli_dur(g->ns) : "unknown"; }

static void part_text(FILE *o, const strobe_explain_part *p) {
  fprintf(o, "  %s %s vs p50 %s (n %llu)%s", p->name, fig(&p->wall), cli_dur(p->wall.p50_ns),
          (unsigned long long)p->wall.n, p->kind == STROBE_EXPLAIN_STAGE ? " self" : "");
  if (p->kind != STROBE_EXPLAIN_STAGE && p->kind != STROBE_EXPLAIN_OUTSIDE) {
    fputc('\n', o);
    return;
  }
  fprintf(o, ", +%s", cli_dur(p->excess_ns));
  if (!p->on_cpu.known) {
    fputs(" (on-CPU / blocked / preempted unknown: no context switches cover it, or it ran on several threads)\n", o);
    return;
  }
  fprintf(o, " — %s blocked (p50 %s), %s on CPU (p50 %s)", cli_dur(p->blocked.ns), cli_dur(p->blocked.p50_ns),
          cli_dur(p->on_cpu.ns), cli_dur(p->on_cpu.p50_ns));
  if (p->nfunctions) {
    fputs(" (top:", o);
    for (uint32_t k = 0; k < p->nfunctions; k++)
      fprintf(o, "%s %s %s", k ? "," : "", p->functions[k].name, cli_dur(p->functions[k].cpu_ns));
    fputc(')', o);
  }
  fprintf(o, ", %s preempted (p50 %s); grew most: %s", cli_dur(p->preempted.ns), cli_dur(p->preempted.p50_ns),
          strobe_explain_cause_name(p->cause));
  for (uint32_t c = STROBE_EXPLAIN_CAUSE_ON_CPU, n = 0; c <= STROBE_EXPLAIN_CAUSE_PREEMPTED; c++)
    if (p->causes & (1u << c)) fprintf(o, "%s%s", n++ ? ", " : "; over their norms: ", strobe_explain_cause_name(c));
  fputc('\n', o);
}

static void explanation_text(FILE *o, const strobe_explain *e, const strobe_frame_explanation *x) {
  const strobe_frames *fx = strobe_explain_query_frames(e);
  const strobe_frame *f = strobe_frames_query_frame(fx, x->frame);
  char buf[160];
  fprintf(o, "%s, %s", frame_label(fx, f, buf, sizeof buf), fig(&x->wall));
  if (x->wall.known && x->wall.p50_ns > 0)
    fprintf(o, ", %.1f× p50 %s over %llu frames", x->wall.ns / x->wall.p50_ns, cli_dur(x->wall.p50_ns),
            (unsigned long long)x->wall.n);
  fprintf(o, ", %s)%s\n", strobe_frames_state_name(f->state), x->exceeded ? ":" : ": every part as usual");
  uint32_t unknown = 0;
  for (uint32_t i = 0; i < x->nparts; i++) {
    if (x->parts[i].exceeded) part_text(o, &x->parts[i]);
    unknown += !x->parts[i].wall.known;
  }
  if (x->exceeded) fprintf(o, "  rest as usual (%u parts within their norm)\n", x->nparts - x->exceeded - unknown);
  for (uint32_t i = 0; i < x->nparts; i++)
    if (!x->parts[i].wall.known) fprintf(o, "  %s: unknown (the capture has no data for it in this frame)\n",
                                         x->parts[i].name);
}

/* One line (docs/memory.md §In strobe explain): what the frame allocated, and inside its worst stage. */
static void alloc_text(FILE *o, const strobe_frame_explanation *x, const mem_in_frame *m) {
  if (!m->known) return;
  fprintf(o, "  allocations: %llu (%s) in this frame", (unsigned long long)m->allocs, cli_num((double)m->bytes, STROBE_UNIT_BYTES));
  if (x->worst != STROBE_FRAMES_NONE && x->parts[x->worst].kind == STROBE_EXPLAIN_STAGE)
    fprintf(o, ", %llu (%s) of them inside %s", (unsigned long long)m->stage_allocs,
            cli_num((double)m->stage_bytes, STROBE_UNIT_BYTES), x->parts[x->worst].name);
  fputc('\n', o);
}

static void alloc_json(strobe__json *j, const strobe_frame_explanation *x, const mem_in_frame *m) {
  if (!m->known) {
    strobe__json_null(j, "allocations");
    return;
  }
  int stage = x->worst != STROBE_FRAMES_NONE && x->parts[x->worst].kind == STROBE_EXPLAIN_STAGE;
  strobe__json_object(j, "allocations");
  strobe__json_uint(j, "allocs", m->allocs);
  strobe__json_uint(j, "bytes", m->bytes);
  if (stage) strobe__json_str(j, "stage", x->parts[x->worst].name);
  else strobe__json_null(j, "stage");
  strobe__json_uint(j, "stage_allocs", m->stage_allocs);
  strobe__json_uint(j, "stage_bytes", m->stage_bytes);
  strobe__json_end(j);
}

static void coverage_text(FILE *o, const strobe_explain_coverage *c) {
  if (!c->switches)
    fputs("note: no context switches recorded (strobe/sample.h, switches on): on-CPU, blocked and preempted are "
          "unknown\n", o);
  else
    fputs("note: blocked = asleep or waiting; captures do not record on what (a lock, I/O, a sleep, a fence)\n", o);
  if (c->runs_cut || c->samples_cut)
    fprintf(o, "note: cut: %llu stage runs, %llu samples past the explainer's bounds (their splits unknown)\n",
            (unsigned long long)c->runs_cut, (unsigned long long)c->samples_cut);
}

/* >>json (docs/explain.md §JSON) */
static void figure_json(strobe__json *j, const char *key, const strobe_explain_figure *g) {
  strobe__json_object(j, key);
  if (g->known) strobe__json_num(j, "ns", g->ns, 0);
  else strobe__json_null(j, "ns");
  if (g->n) strobe__json_num(j, "p50_ns", g->p50_ns, 0);
  else strobe__json_null(j, "p50_ns");
  strobe__json_uint(j, "n", g->n);
  strobe__json_end(j);
}

static void part_json(strobe__json *j, const strobe_explain_part *p) {
  strobe__json_object(j, NULL);
  strobe__json_str(j, "kind", strobe_explain_part_name(p->kind));
  strobe__json_str(j, "name", p->name);
  strobe__json_bool(j, "content", 0);
  figure_json(j, "time", &p->wall);
  strobe__json_num(j, "excess_ns", p->excess_ns, 0);
  strobe__json_bool(j, "exceeded", p->exceeded);
  if (p->kind == STROBE_EXPLAIN_STAGE || p->kind == STROBE_EXPLAIN_OUTSIDE) {
    if (p->kind == STROBE_EXPLAIN_STAGE) figure_json(j, "total", &p->total);
    figure_json(j, "on_cpu", &p->on_cpu);
    figure_json(j, "blocked", &p->blocked);
    figure_json(j, "preempted", &p->preempted);
    strobe__json_str(j, "cause", strobe_explain_cause_name(p->cause));
    strobe__json_array(j, "causes");
    for (uint32_t c = STROBE_EXPLAIN_CAUSE_ON_CPU; c <= STROBE_EXPLAIN_CAUSE_PREEMPTED; c++)
      if (p->causes & (1u << c)) strobe__json_str(j, NULL, strobe_explain_cause_name(c));
    strobe__json_end(j);
    strobe__json_array(j, "functions");
    for (uint32_t k = 0; k < p->nfunctions; k++) {
      strobe__json_object(j, NULL);
      strobe__json_str(j, "name", p->functions[k].name);
      strobe__json_uint(j, "samples", p->functions[k].samples);
      strobe__json_num(j, "cpu_ns", p->functions[k].cpu_ns, 0);
      strobe__json_end(j);
    }
    strobe__json_end(j);
  }
  strobe__json_end(j);
}

static void explanation_json(strobe__json *j, const strobe_explain *e, const strobe_frame_explanation *x,
                             const mem_in_frame *m) {
  const strobe_frames *fx = strobe_explain_query_frames(e);
  const strobe_frame *f = strobe_frames_query_frame(fx, x->frame);
  const strobe_frame_series *s = strobe_frames_query_series(fx, f->series);
  strobe__json_object(j, NULL);
  strobe__json_str(j, "kind", f->kind ? strobe_op_kind_name(f->kind) : "frame");
  strobe__json_uint(j, "number", f->number);
  strobe__json_str(j, "series", s ? s->name : f->window);
  strobe__json_str(j, "process", strobe_frames_query_process(fx, f->process));
  strobe__json_str(j, "state", strobe_frames_state_name(f->state));
  figure_json(j, "wall", &x->wall);
  strobe__json_uint(j, "exceeded", x->exceeded);
  if (x->worst != STROBE_FRAMES_NONE) strobe__json_uint(j, "worst", x->worst);
  else strobe__json_null(j, "worst");
  strobe__json_array(j, "parts");
  for (uint32_t i = 0; i < x->nparts; i++) part_json(j, &x->parts[i]);
  strobe__json_end(j);
  alloc_json(j, x, m);
  strobe__json_end(j);
}

static void coverage_json(strobe__json *j, const strobe_explain_coverage *c) {
  strobe__json_object(j, "coverage");
  strobe__json_bool(j, "switches", c->switches);
  strobe__json_bool(j, "samples", c->samples);
  strobe__json_uint(j, "sample_rate_hz", c->sample_rate_hz);
  strobe__json_bool(j, "gpu", c->gpu);
  strobe__json_bool(j, "wait_reason", 0);
  strobe__json_uint(j, "stage_runs", c->runs);
  strobe__json_uint(j, "stage_runs_cut", c->runs_cut);
  strobe__json_uint(j, "samples_cut", c->samples_cut);
  strobe__json_end(j);
}

/* >>main */
/* What each frame allocated, inside its worst stage too (a fourth read of the file). */
static int frames_allocs(strobe_explain *e, const uint32_t *frames, uint32_t n, const char *path, mem_in_frame *m) {
  const char **stages = calloc(n ? n : 1, sizeof *stages);
  if (!stages) return CLI_FAIL;
  for (uint32_t i = 0; i < n; i++) {
    strobe_frame_explanation x;
    if (!strobe_explain_frame(e, frames[i], &x) && x.worst != STROBE_FRAMES_NONE &&
        x.parts[x.worst].kind == STROBE_EXPLAIN_STAGE)
      stages[i] = x.parts[x.worst].name;
  }
  int rc = mem_in_frames("explain", path, strobe_explain_query_frames(e), frames, stages, n, m);
  free(stages);
  return rc;
}

static int explain_frames(strobe_explain *e, const uint32_t *frames, uint32_t n, int json, const char *path) {
  mem_in_frame *m = calloc(n ? n : 1, sizeof *m);
  int rc = m ? frames_allocs(e, frames, n, path, m) : CLI_FAIL;
  cli_output o;
  if (!rc) rc = cli_output_open(&o, "explain", NULL);
  if (rc) {
    free(m);
    return rc;
  }
  strobe_explain_coverage cov = strobe_explain_query_coverage(e);
  strobe__json j = {0};
  if (json) {
    strobe__json_object(&j, NULL);
    strobe__json_str(&j, "file", path);
    coverage_json(&j, &cov);
    strobe__json_array(&j, "frames");
  }
  for (uint32_t i = 0; i < n && !rc; i++) {
    strobe_frame_explanation x;
    if (strobe_explain_frame(e, frames[i], &x)) {
      cli_error("explain", "out of memory");
      rc = CLI_FAIL;
    } else if (json) {
      explanation_json(&j, e, &x, &m[i]);
    } else {
      if (i) fputc('\n', o.f);
      explanation_text(o.f, e, &x);
      alloc_text(o.f, &x, &m[i]);
    }
  }
  if (json) {
    strobe__json_end(&j);
    strobe__json_end(&j);
    if (!rc) rc = cli_output_json(&o, &j);
    else strobe__buf_free(&j.out);
  } else if (!rc) {
    coverage_text(o.f, &cov);
  }
  int out = cli_output_close(&o);
  free(m);
  return rc ? rc : out;
}

static int pick(strobe_explain *e, int has_frame, uint64_t number, uint64_t k, uint32_t **frames, uint32_t *n) {
  const strobe_frames *fx = strobe_explain_query_frames(e);
  if (has_frame) {
    uint32_t i = strobe_frames_find(fx, number, STROBE_FRAMES_NONE);
    if (i == STROBE_FRAMES_NONE)
      return cli_usage_error("explain", "no frame numbered %llu (strobe info --frames lists them)",
                             (unsigned long long)number);
    *frames = malloc(sizeof **frames);
    if (!*frames) return CLI_FAIL;
    (*frames)[0] = i, *n = 1;
    return CLI_OK;
  }
  *frames = malloc((size_t)k * sizeof **frames);
  if (!*frames) return CLI_FAIL;
  *n = strobe_explain_slowest(e, (uint32_t)k, *frames);
  if (!*n) {
    cli_error("explain", "the capture has no ended frame to explain (docs/frames.md §Which frames)");
    return CLI_FAIL;
  }
  return CLI_OK;
}

int cmd_explain(int argc, char **argv) {
  static const struct option opts[] = {{"frame", required_argument, NULL, 'f'}, {"slowest", required_argument, NULL, 's'},
                                       {"json", no_argument, NULL, 'j'},        {"quiet", no_argument, NULL, 'q'},
                                       {"help", no_argument, NULL, 'h'},        {0}};
  int json = 0, quiet = 0, has_frame = 0, has_k = 0, ch;
  uint64_t number = 0, k = 1;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
    switch (ch) {
      case 'f':
        if (cli_parse_u64(optarg, &number)) return cli_usage_error("explain", "--frame wants a frame number");
        has_frame = 1;
        break;
      case 's':
        if (cli_parse_u64(optarg, &k) || !k || k > 1000)
          return cli_usage_error("explain", "--slowest wants a count from 1 to 1000");
        has_k = 1;
        break;
      case 'j': json = 1; break;
      case 'q': quiet = 1; break;
      case 'h': fputs(g_usage, stdout); return CLI_OK;
      default: return cli_bad_option("explain", argv, optind);
    }
  }
  if (argc - optind != 1) return cli_usage_error("explain", "expected one capture FILE");
  if (has_frame && has_k) return cli_usage_error("explain", "--frame and --slowest exclude each other");
  const char *path = argv[optind];
  int rc = cli_need_file("explain", path, "an explanation reads the capture three times");
  if (rc) return rc;
  cli_input in; /* the CLI's words for a missing, foreign or damaged file */
  if ((rc = cli_open(&in, "explain", path, quiet))) return rc;
  while (cli_next_ref(&in)) {}
  rc = cli_finish_read(&in);
  cli_close(&in);
  if (rc) {
    cli_error("explain", "nothing explained: the frame model refuses a damaged capture rather than guess its frames");
    return rc;
  }
  strobe_explain *e;
  int err = strobe_explain_open(path, NULL, &e);
  if (err) {
    cli_error("explain", "%s: %s", path, strobe_strerror(err));
    return CLI_FAIL;
  }
  uint32_t *frames = NULL, n = 0;
  rc = pick(e, has_frame, number, k, &frames, &n);
  if (!rc) rc = explain_frames(e, frames, n, json, path);
  free(frames);
  strobe_explain_destroy(e);
  return rc;
}
