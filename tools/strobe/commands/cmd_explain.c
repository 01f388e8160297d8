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
  fprintf(o, " — %s blocked (p50 %s", cli_dur(p->blocked.ns), cli_dur(p->blocked.p50_ns));
  if (p->blocked_lock_ns > 0) fprintf(o, "; waiting for a lock %s", cli_dur(p->blocked_lock_ns));
  fprintf(o, "), %s on CPU (p50 %s)",
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

static void coverage_text(FILE *o, const strobe_explain_coverage *c) {
  if (!c->switches)
    fputs("note: no context switches recorded (strobe/sample.h, switches on): on-CPU, blocked and preempted are "
          "unknown\n", o);
  else
    fputs(c->lock_waits ? "note: blocked = asleep or waiting; waits for a lock (strobe/lock.h) are named, other waits (I/O, a "
                          "sleep, a fence) are not recorded\n"
                        : "note: blocked = asleep or waiting; captures do not record on what (a lock, I/O, a sleep, a fence)\n",
          o);
  if (c->runs_cut || c->samples_cut)
    fprintf(o, "note: cut: %llu stage runs, %llu samples past the explainer's bounds (their splits unknown)\n",
            (unsigned long long)c->runs_cut, (unsigned long long)c->samples_cut);
}

/* >>main */
/* JSON: the library's (strobe_explain_json, with function names and unfinished frames), after "file". */
static int explain_json(cli_output *o, strobe_explain *e, const uint32_t *frames, uint32_t n, const char *path) {
  char *text = NULL;
  size_t len = 0;
  if (strobe_explain_json(e, frames, n, STROBE_EXPLAIN_JSON_CONTENT | STROBE_EXPLAIN_JSON_UNFINISHED, &text, &len)) {
    cli_error("explain", "out of memory");
    return CLI_FAIL;
  }
  strobe__json j = {0};
  strobe__json_object(&j, NULL);
  strobe__json_str(&j, "file", path);
  strobe__buf_put(&j.out, ",", 1);
  strobe__buf_put(&j.out, text + 1, len - 1); /* the library's object without its opening brace */
  free(text);
  return cli_output_json(o, &j);
}

/* One line (docs/memory.md §In strobe explain): what the frame allocated, and inside its worst stage. */
static void alloc_text(FILE *o, const strobe_frame_explanation *x, const mem_in_frame *m) {
  if (!m->known) return;
  fprintf(o, "  allocations: %llu (%s) in this frame", (unsigned long long)m->allocs,
          cli_num((double)m->bytes, STROBE_UNIT_BYTES));
  if (x->worst != STROBE_FRAMES_NONE && x->parts[x->worst].kind == STROBE_EXPLAIN_STAGE)
    fprintf(o, ", %llu (%s) of them inside %s", (unsigned long long)m->stage_allocs,
            cli_num((double)m->stage_bytes, STROBE_UNIT_BYTES), x->parts[x->worst].name);
  fputc('\n', o);
}

/* What each frame allocated, inside its worst stage too (one more read of the file). */
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
  mem_in_frame *m = json ? NULL : calloc(n ? n : 1, sizeof *m);
  int rc = json ? CLI_OK : m ? frames_allocs(e, frames, n, path, m) : CLI_FAIL;
  cli_output o;
  if (!rc) rc = cli_output_open(&o, "explain", NULL);
  if (rc) {
    free(m);
    return rc;
  }
  if (json) {
    rc = explain_json(&o, e, frames, n, path);
  } else {
    for (uint32_t i = 0; i < n && !rc; i++) {
      strobe_frame_explanation x;
      if (strobe_explain_frame(e, frames[i], &x)) {
        cli_error("explain", "out of memory");
        rc = CLI_FAIL;
      } else {
        if (i) fputc('\n', o.f);
        explanation_text(o.f, e, &x);
        alloc_text(o.f, &x, &m[i]);
      }
    }
    if (!rc) {
      strobe_explain_coverage cov = strobe_explain_query_coverage(e);
      coverage_text(o.f, &cov);
    }
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
