/*
 * cmd_tree.c — `strobe tree FILE [--frame N | --snapshot K]`: the UI-tree
 * snapshots of a capture (docs/cli.md §strobe tree). Without a selection it
 * lists them (number, time, frame, nodes, what was cut); with one it
 * rebuilds that snapshot's tree from its flat preorder list with
 * strobe_capture_tree_parents (one linear pass with a stack) and prints it
 * indented by parent, each node with its type, id, bounds, properties and
 * the spans attributed to its element (docs/recording.md §Elements): in the
 * snapshot's frame when it has one, else in the whole capture.
 *
 * Frames are the frame model's (strobe/frames.h, docs/frames.md), numbered
 * as `strobe report` numbers them: a snapshot's frame is the latest to begin
 * of the frames (passes, else mark intervals) that hold the snapshot's time,
 * of its process in a merged capture; the spans counted in it are its own
 * (the innermost operation open on their thread at their begin), never all
 * those that lie inside its interval.
 *
 * In a merged capture every snapshot names its process (strobe merge's
 * ORIGIN, read back with cli_origin_process); --frame N chooses among
 * several processes' snapshots of one frame id only with --process.
 *
 * Reads the capture twice (refuses "-"): the first pass finds the snapshots
 * and frames, the second copies the chosen snapshot and sums the spans of
 * its elements. Memory: the snapshot list, one interval per frame, the
 * chosen snapshot, and one entry per distinct element id with spans.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "strobe/frames.h"
#include "format/json_writer.h"

static const char g_usage[] =
    "usage: strobe tree [--frame N [--process NAME] | --snapshot K] [--json] [--quiet] FILE\n"
    "\n"
    "Lists the UI-tree snapshots of a capture (strobe_tree_request), or prints one\n"
    "as a tree: every element its layout pass visited, indented under its parent,\n"
    "with its type, id, bounds, style properties and the spans attributed to it\n"
    "(count and total time, in the snapshot's frame). In a merged capture (strobe\n"
    "merge) each snapshot names its process.\n"
    "\n"
    "  --frame N      the snapshot taken during frame N (a pass's frame id; without\n"
    "                 pass operations, the Nth FRAME-mark interval)\n"
    "  --process NAME with --frame, in a merged capture: the snapshot of process NAME\n"
    "                 (as listed), needed when several processes have one of frame N\n"
    "  --snapshot K   the snapshot numbered K (from 1, as listed)\n"
    "  --json         machine-readable output\n"
    "  --quiet        no progress bar\n"
    "\n"
    "Exit: 0 listed or printed, 1 unreadable or damaged (what was read is used), 2 usage,\n"
    "'-' (the capture is read twice), no such frame or snapshot, or a frame with snapshots of\n"
    "several processes and no --process, 3 output.\n";

typedef struct snap_info {
  uint64_t seq, ticks;
  uint32_t nnodes;
  uint64_t nodes_dropped, props_dropped;
  int has_frame;
  uint64_t frame;        /* the frame it was taken in, when has_frame */
  uint32_t index;        /* that frame in the model */
  char window[64];
  uint32_t origin;       /* a merged capture's input it came from, + 1 (strobe_capture_record.origin) */
} snap_info;

typedef struct span_sum {
  uint64_t id;           /* 0: empty slot */
  uint64_t count;
  double total_ns;
} span_sum;

typedef struct tree_cmd {
  cli_input in;
  snap_info *snaps;
  uint32_t nsnaps, cap_snaps;
  strobe_frames *fx;     /* the frame model, from the first pass */
  /* the chosen snapshot, copied */
  strobe_capture_tree_node *nodes;
  strobe_capture_tree_prop *props;
  char **names;          /* its property names and node type names, owned */
  uint32_t nnames;
  span_sum *sums;        /* open addressing, power of two */
  uint32_t cap_sums, nsums;
  int failed;            /* out of memory */
} tree_cmd;

static int grow(void **p, uint32_t *cap, uint32_t need, size_t size) {
  if (need <= *cap) return 0;
  uint32_t n = *cap ? *cap * 2 : 64;
  while (n < need) n *= 2;
  void *q = realloc(*p, (size_t)n * size);
  if (!q) return -1;
  *p = q;
  *cap = n;
  return 0;
}

static char *keep_name(tree_cmd *t, const char *s) {
  char **p = realloc(t->names, (t->nnames + 1) * sizeof *p);
  if (!p) return NULL;
  t->names = p;
  return t->names[t->nnames++] = strdup(s);
}

/* >>pass 1: snapshots and frames */
static void first_pass(tree_cmd *t) {
  if (strobe_frames_create(NULL, &t->fx)) {
    t->failed = 1;
    return;
  }
  for (const strobe_capture_record *r; (r = cli_next_ref(&t->in));) {
    strobe_frames_add(t->fx, t->in.cap, r);
    if (r->type != STROBE_REC_TREE) continue;
    if (grow((void **)&t->snaps, &t->cap_snaps, t->nsnaps + 1, sizeof *t->snaps)) {
      t->failed = 1;
      return;
    }
    t->snaps[t->nsnaps++] = (snap_info){r->tree->seq, r->tree->ticks, r->tree->nnodes, r->tree->nodes_dropped,
                                        r->tree->props_dropped, 0, 0, 0, "", r->origin};
  }
  strobe_frames_finish(t->fx, t->in.cap);
  t->failed |= strobe_frames_query_cut(t->fx).failed;
}

/* Gives each snapshot the frame it was taken in: of the model's frames that hold its time (passes of its
 * process, else the intervals of the first thread to mark, numbered as on every marking thread), the latest to
 * begin. */
static void assign_frames(tree_cmd *t) {
  uint32_t src = strobe_frames_query_source(t->fx);
  int merged = strobe_frames_query_process_count(t->fx) > 1;
  if (src != STROBE_FRAME_SOURCE_PASSES && src != STROBE_FRAME_SOURCE_MARKS) return;
  for (uint32_t s = 0; s < t->nsnaps; s++) {
    snap_info *x = &t->snaps[s];
    uint32_t marks = strobe_frames_query_count(t->fx) ? strobe_frames_query_frame(t->fx, 0)->series : 0;
    double at = strobe_capture_ticks_to_ns(t->in.cap, x->ticks);
    for (uint32_t i = 0; i < strobe_frames_query_count(t->fx); i++) {
      const strobe_frame *f = strobe_frames_query_frame(t->fx, i);
      if (f->begin_ns > at) break; /* in begin order: the last that holds it is the latest to begin */
      if (src == STROBE_FRAME_SOURCE_PASSES && f->kind != STROBE_OP_PASS) continue;
      if (f->state == STROBE_FRAME_UNFINISHED || at > f->end_ns) continue;
      if (src == STROBE_FRAME_SOURCE_MARKS && f->series != marks) continue;
      if (merged && x->origin && src == STROBE_FRAME_SOURCE_PASSES && f->process != x->origin - 1 &&
          f->end_process != x->origin - 1)
        continue; /* a pass of another process */
      x->has_frame = 1;
      x->frame = f->number;
      x->index = i;
      snprintf(x->window, sizeof x->window, "%s", f->window);
    }
  }
}

/* >>pass 2: the chosen snapshot and its elements' spans */
static span_sum *sum_slot(tree_cmd *t, uint64_t id) {
  if (t->nsums * 2 >= t->cap_sums) {
    uint32_t cap = t->cap_sums ? t->cap_sums * 2 : 1024;
    span_sum *n = calloc(cap, sizeof *n);
    if (!n) return NULL;
    for (uint32_t i = 0; i < t->cap_sums; i++) {
      if (!t->sums[i].id) continue;
      uint32_t k = (uint32_t)(t->sums[i].id * 0x9e3779b97f4a7c15ull >> 40) & (cap - 1);
      while (n[k].id) k = (k + 1) & (cap - 1);
      n[k] = t->sums[i];
    }
    free(t->sums);
    t->sums = n;
    t->cap_sums = cap;
  }
  uint32_t k = (uint32_t)(id * 0x9e3779b97f4a7c15ull >> 40) & (t->cap_sums - 1);
  while (t->sums[k].id && t->sums[k].id != id) k = (k + 1) & (t->cap_sums - 1);
  if (!t->sums[k].id) {
    t->sums[k].id = id;
    t->nsums++;
  }
  return &t->sums[k];
}

static const span_sum *sum_find(const tree_cmd *t, uint64_t id) {
  if (!t->cap_sums) return NULL;
  uint32_t k = (uint32_t)(id * 0x9e3779b97f4a7c15ull >> 40) & (t->cap_sums - 1);
  while (t->sums[k].id && t->sums[k].id != id) k = (k + 1) & (t->cap_sums - 1);
  return t->sums[k].id ? &t->sums[k] : NULL;
}

/* The open attributed scopes of one thread: element id by depth (0: none). */
typedef struct open_elems {
  uint64_t id[257];
} open_elems;

static int copy_tree(tree_cmd *t, const strobe_capture *cap, const strobe_capture_tree *tr) {
  uint32_t np = 0;
  for (uint32_t i = 0; i < tr->nnodes; i++) np += tr->nodes[i].nprops;
  t->nodes = calloc(tr->nnodes ? tr->nnodes : 1, sizeof *t->nodes);
  t->props = calloc(np ? np : 1, sizeof *t->props);
  if (!t->nodes || !t->props) return -1;
  for (uint32_t i = 0, p = 0; i < tr->nnodes; i++) {
    t->nodes[i] = tr->nodes[i];
    t->nodes[i].props = t->props + p;
    for (uint32_t k = 0; k < tr->nodes[i].nprops; k++, p++) {
      t->props[p].value = tr->nodes[i].props[k].value;
      if (!(t->props[p].name = keep_name(t, tr->nodes[i].props[k].name))) return -1;
    }
  }
  (void)cap;
  return 0;
}

/* Whether a span whose frame is `owner` counts in the snapshot's frame: the same pass, or with marks the interval
 * of that number on the span's own thread (docs/frames.md §Own spans). */
static int owned(const tree_cmd *t, const snap_info *want, uint32_t owner) {
  if (owner == STROBE_FRAMES_NONE) return 0;
  if (strobe_frames_query_source(t->fx) != STROBE_FRAME_SOURCE_MARKS) return owner == want->index;
  return strobe_frames_query_frame(t->fx, owner)->number == want->frame;
}

static void second_pass(tree_cmd *t, const snap_info *want) {
  strobe_capture_record r;
  open_elems *open = NULL;
  uint32_t nopen = 0;
  while (cli_next(&t->in, &r) > 0) {
    if (r.type == STROBE_REC_TREE && r.tree->seq == want->seq && r.tree->ticks == want->ticks && !t->nodes) {
      if (copy_tree(t, t->in.cap, r.tree)) t->failed = 1;
      continue;
    }
    if (r.type != STROBE_REC_ELEMENT && r.type != STROBE_REC_END && r.type != STROBE_REC_BEGIN) continue;
    if (r.thread >= nopen) {
      uint32_t n = nopen ? nopen : 4;
      while (n <= r.thread) n *= 2;
      open_elems *o = realloc(open, n * sizeof *o);
      if (!o) {
        t->failed = 1;
        break;
      }
      memset(o + nopen, 0, (n - nopen) * sizeof *o);
      open = o;
      nopen = n;
    }
    open_elems *o = &open[r.thread];
    if (r.depth > 256) continue;
    if (r.type == STROBE_REC_BEGIN) {
      o->id[r.depth] = 0;
    } else if (r.type == STROBE_REC_ELEMENT) {
      o->id[r.depth] = r.element;
    } else if (o->id[r.depth]) { /* the END of an attributed scope */
      uint64_t id = o->id[r.depth];
      o->id[r.depth] = 0;
      if (r.unwound) continue;
      if (want->has_frame && !owned(t, want, strobe_frames_owner(t->fx, r.thread, r.time_ns - r.duration_ns))) continue;
      span_sum *s = sum_slot(t, id);
      if (!s) {
        t->failed = 1;
        break;
      }
      s->count++;
      s->total_ns += r.duration_ns;
    }
  }
  free(open);
}

/* >>output */
static void id_hex(char *buf, size_t cap, uint64_t id) { snprintf(buf, cap, "%016" PRIx64, id); }

static void list_text(FILE *f, const tree_cmd *t) {
  if (!t->nsnaps) {
    fprintf(f, "%s: no UI-tree snapshots (strobe_tree_request asks for one)\n", t->in.path);
    return;
  }
  fprintf(f, "%s: %u UI-tree snapshot(s)", t->in.path, t->nsnaps);
  strobe_capture_totals tot = strobe_capture_query_totals(t->in.cap);
  if (tot.trees_dropped) fprintf(f, "; %" PRIu64 " more refused past the capture's bound", tot.trees_dropped);
  int merged = strobe_capture_query_merge(t->in.cap) != NULL; /* then each snapshot's process, last */
  fprintf(f, "\n  #  time        frame           nodes  cut (nodes, properties)%s\n", merged ? "  process" : "");
  for (uint32_t i = 0; i < t->nsnaps; i++) {
    const snap_info *x = &t->snaps[i];
    char frame[96] = "-", buf[96];
    if (x->has_frame)
      snprintf(frame, sizeof frame, "%" PRIu64 "%s%s", x->frame, x->window[0] ? " " : "", x->window);
    char cut[48];
    snprintf(cut, sizeof cut, "%" PRIu64 ", %" PRIu64, x->nodes_dropped, x->props_dropped);
    fprintf(f, "%3" PRIu64 "  %-10s  %-14s %6u  %-*s", x->seq,
            cli_dur(strobe_capture_ticks_to_ns(t->in.cap, x->ticks) - cli_start_ns(t->in.cap)), frame, x->nnodes,
            merged ? 23 : 0, cut);
    if (merged) fprintf(f, "  %s", cli_origin_process(t->in.cap, x->origin, buf, sizeof buf));
    fputc('\n', f);
  }
}

/* What the list and the tree both say of a snapshot. */
static void snap_fields(strobe__json *j, const tree_cmd *t, const snap_info *x) {
  strobe__json_uint(j, "snapshot", x->seq);
  strobe__json_num(j, "time_ns", strobe_capture_ticks_to_ns(t->in.cap, x->ticks) - cli_start_ns(t->in.cap), 0);
  if (x->has_frame) strobe__json_uint(j, "frame", x->frame);
  else strobe__json_null(j, "frame");
  strobe__json_str(j, "window", x->window[0] ? x->window : NULL);
  strobe__json_uint(j, "nodes", x->nnodes);
  strobe__json_uint(j, "nodes_dropped", x->nodes_dropped);
  strobe__json_uint(j, "props_dropped", x->props_dropped);
  char buf[96];
  strobe__json_str(j, "process", cli_origin_process(t->in.cap, x->origin, buf, sizeof buf)); /* null: not merged */
}

static void list_json(strobe__json *j, const tree_cmd *t) {
  strobe__json_array(j, "snapshots");
  for (uint32_t i = 0; i < t->nsnaps; i++) {
    const snap_info *x = &t->snaps[i];
    strobe__json_object(j, NULL);
    snap_fields(j, t, x);
    strobe__json_end(j);
  }
  strobe__json_end(j);
}

static const char *type_name(const tree_cmd *t, uint32_t type) {
  const strobe_capture_site *s = strobe_capture_query_site(t->in.cap, type);
  return s ? s->name : "?";
}

static void tree_text(FILE *f, const tree_cmd *t, const snap_info *x, const int32_t *parent) {
  fprintf(f, "snapshot %" PRIu64 " at %s", x->seq,
          cli_dur(strobe_capture_ticks_to_ns(t->in.cap, x->ticks) - cli_start_ns(t->in.cap)));
  if (x->has_frame) fprintf(f, ", frame %" PRIu64 "%s%s", x->frame, x->window[0] ? " of window " : "", x->window);
  char buf[96];
  const char *process = cli_origin_process(t->in.cap, x->origin, buf, sizeof buf);
  if (process) fprintf(f, ", process %s", process);
  fprintf(f, ": %u nodes", x->nnodes);
  if (x->nodes_dropped || x->props_dropped)
    fprintf(f, " (%" PRIu64 " more nodes and %" PRIu64 " properties cut by the bounds)", x->nodes_dropped,
            x->props_dropped);
  fprintf(f, "\nspans attributed to each element: %s\n", x->has_frame ? "in this frame" : "in the whole capture");
  /* Indent by the rebuilt parent chain: a node is one level under its parent. */
  uint32_t *level = calloc(x->nnodes ? x->nnodes : 1, sizeof *level);
  for (uint32_t i = 0; level && i < x->nnodes; i++) {
    const strobe_capture_tree_node *n = &t->nodes[i];
    level[i] = parent[i] < 0 ? 0 : level[parent[i]] + 1;
    char id[24];
    id_hex(id, sizeof id, n->id);
    fprintf(f, "%*s%s %s [%g, %g, %g x %g]", (int)(2 * level[i]), "", type_name(t, n->type), id, (double)n->x,
            (double)n->y, (double)n->width, (double)n->height);
    for (uint32_t k = 0; k < n->nprops; k++) fprintf(f, " %s=%g", n->props[k].name, n->props[k].value);
    const span_sum *s = sum_find(t, n->id);
    if (s) fprintf(f, "  spans %" PRIu64 " (%s)", s->count, cli_dur(s->total_ns));
    fputc('\n', f);
  }
  free(level);
}

static void tree_json(strobe__json *j, const tree_cmd *t, const snap_info *x, const int32_t *parent) {
  strobe__json_object(j, "snapshot");
  snap_fields(j, t, x);
  strobe__json_str(j, "spans_in", x->has_frame ? "frame" : "capture");
  strobe__json_end(j);
  strobe__json_array(j, "nodes");
  for (uint32_t i = 0; i < x->nnodes; i++) {
    const strobe_capture_tree_node *n = &t->nodes[i];
    char id[24];
    id_hex(id, sizeof id, n->id);
    strobe__json_object(j, NULL);
    strobe__json_uint(j, "index", i);
    strobe__json_int(j, "parent", parent[i]);
    strobe__json_uint(j, "depth", n->depth);
    strobe__json_str(j, "type", type_name(t, n->type));
    strobe__json_str(j, "id", id);
    strobe__json_array(j, "bounds");
    strobe__json_num(j, NULL, n->x, 3);
    strobe__json_num(j, NULL, n->y, 3);
    strobe__json_num(j, NULL, n->width, 3);
    strobe__json_num(j, NULL, n->height, 3);
    strobe__json_end(j);
    strobe__json_object(j, "props");
    for (uint32_t k = 0; k < n->nprops; k++) strobe__json_num(j, n->props[k].name, n->props[k].value, 6);
    strobe__json_end(j);
    const span_sum *s = sum_find(t, n->id);
    strobe__json_object(j, "spans");
    strobe__json_uint(j, "count", s ? s->count : 0);
    strobe__json_num(j, "total_ns", s ? s->total_ns : 0.0, 1);
    strobe__json_end(j);
    strobe__json_end(j);
  }
  strobe__json_end(j);
}

static void tree_free(tree_cmd *t) {
  free(t->snaps);
  strobe_frames_destroy(t->fx);
  free(t->nodes);
  free(t->props);
  for (uint32_t i = 0; i < t->nnames; i++) free(t->names[i]);
  free(t->names);
  free(t->sums);
}

int cmd_tree(int argc, char **argv) {
  static const struct option opts[] = {{"frame", required_argument, NULL, 'f'},
                                       {"snapshot", required_argument, NULL, 's'},
                                       {"process", required_argument, NULL, 'p'},
                                       {"json", no_argument, NULL, 'j'},
                                       {"quiet", no_argument, NULL, 'q'},
                                       {"help", no_argument, NULL, 'h'},
                                       {0}};
  int json = 0, quiet = 0, ch, by_frame = 0, by_snap = 0;
  uint64_t frame = 0, snap = 0;
  const char *process = NULL;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
    switch (ch) {
      case 'f':
        if (cli_parse_u64(optarg, &frame)) return cli_usage_error("tree", "--frame takes a frame number, not '%s'", optarg);
        by_frame = 1;
        break;
      case 's':
        if (cli_parse_u64(optarg, &snap) || snap == 0)
          return cli_usage_error("tree", "--snapshot takes a snapshot number from 1, not '%s'", optarg);
        by_snap = 1;
        break;
      case 'p': process = optarg; break;
      case 'j': json = 1; break;
      case 'q': quiet = 1; break;
      case 'h': fputs(g_usage, stdout); return CLI_OK;
      default: return cli_bad_option("tree", argv, optind);
    }
  }
  if (argc - optind != 1) return cli_usage_error("tree", "expected one capture FILE");
  if (by_frame && by_snap) return cli_usage_error("tree", "--frame and --snapshot choose the same thing: give one");
  if (process && !by_frame)
    return cli_usage_error("tree", "--process chooses among a frame's snapshots: it goes with --frame N");
  const char *path = argv[optind];
  int rc = cli_need_file("tree", path, "it reads the capture twice");
  if (rc) return rc;

  tree_cmd t = {0};
  if ((rc = cli_open(&t.in, "tree", path, quiet))) return rc;
  first_pass(&t);
  int status = cli_finish_read(&t.in);
  assign_frames(&t);
  const snap_info *want = NULL;
  if (by_frame || by_snap) {
    uint32_t *origins = by_frame ? malloc((t.nsnaps ? t.nsnaps : 1) * sizeof *origins) : NULL, n = 0;
    for (uint32_t i = 0; i < t.nsnaps && (by_frame || !want); i++)
      if (by_snap ? t.snaps[i].seq == snap : t.snaps[i].has_frame && t.snaps[i].frame == frame) {
        if (origins) origins[n] = t.snaps[i].origin;
        if (!n++) want = &t.snaps[i];
      }
    if (by_frame && !origins) t.failed = 1;
    if (want && origins) { /* of several processes' snapshots of frame N, the one --process names */
      int k = cli_pick_origin("tree", t.in.cap, t.in.path, "UI-tree snapshots", frame, origins, n, process);
      want = NULL;
      for (uint32_t i = 0, m = 0; k >= 0 && i < t.nsnaps && !want; i++)
        if (t.snaps[i].has_frame && t.snaps[i].frame == frame && m++ == (uint32_t)k) want = &t.snaps[i];
      if (k < 0) {
        free(origins);
        cli_close(&t.in);
        tree_free(&t);
        return CLI_USAGE;
      }
    }
    free(origins);
    if (!want && !t.failed) {
      if (by_snap) cli_error("tree", "%s: no snapshot %" PRIu64 " (it has %u)", t.in.path, snap, t.nsnaps);
      else cli_error("tree", "%s: no UI-tree snapshot was taken in frame %" PRIu64 " (`strobe tree %s` lists them)",
                     t.in.path, frame, t.in.path);
      cli_close(&t.in);
      tree_free(&t);
      return CLI_USAGE;
    }
  }
  int32_t *parent = NULL;
  if (want) {
    cli_close(&t.in);
    if ((rc = cli_open(&t.in, "tree", path, quiet))) {
      tree_free(&t);
      return rc;
    }
    second_pass(&t, want);
    status |= cli_finish_read(&t.in);
    parent = calloc(want->nnodes ? want->nnodes : 1, sizeof *parent);
    /* The one linear pass with a stack (strobe/capture.h). */
    if (!t.failed && (!t.nodes || !parent)) t.failed = 1;
    if (!t.failed) {
      strobe_capture_tree copy = {want->seq, want->ticks, 0, want->nnodes, want->nodes_dropped, want->props_dropped,
                                  t.nodes};
      if (strobe_capture_tree_parents(&copy, parent)) t.failed = 1;
    }
  }
  if (t.failed) {
    cli_error("tree", "%s: out of memory", t.in.path);
    free(parent);
    cli_close(&t.in);
    tree_free(&t);
    return CLI_FAIL;
  }
  cli_progress_end(t.in.progress);
  t.in.progress = NULL;
  cli_output o;
  if ((rc = cli_output_open(&o, "tree", NULL))) {
    free(parent);
    cli_close(&t.in);
    tree_free(&t);
    return rc;
  }
  if (json) {
    strobe__json j = {0};
    strobe__json_object(&j, NULL);
    strobe__json_str(&j, "file", t.in.path);
    strobe__json_uint(&j, "snapshots_refused", strobe_capture_query_totals(t.in.cap).trees_dropped);
    if (want) tree_json(&j, &t, want, parent);
    else list_json(&j, &t);
    strobe__json_end(&j);
    rc = cli_output_json(&o, &j);
    if (rc) status = rc;
  } else if (want) {
    tree_text(o.f, &t, want, parent);
  } else {
    list_text(o.f, &t);
  }
  free(parent);
  cli_close(&t.in);
  tree_free(&t);
  rc = cli_output_close(&o);
  return rc ? rc : status;
}
