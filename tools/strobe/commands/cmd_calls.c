/*
 * cmd_calls.c — `strobe calls FILE [--frame N] [--json]`: the deep captures
 * of a capture (docs/cli.md §strobe calls). Without --frame it lists them
 * (frame, calls, calls cut) and every frame's attachments; with one it
 * prints that frame's draw calls in order, each with its kind, pipeline,
 * pass, ranges, surface geometry, the resources it reads, and its replay
 * status (strobe/replay.h) as far as the capture's data decides it: ok, or
 * missing geometry, texture or surface geometry. Whether a kind is drawn at
 * all is the renderer's backend's to say (strobe-demo --replay), so kinds
 * are not checked here, and the output says so.
 *
 * In a merged capture every deep capture names its process (strobe merge's
 * ORIGIN, read back with cli_origin_process); --frame N chooses among
 * several processes' deep captures of one frame id only with --process,
 * and lists that process's attachments of the frame.
 *
 * Reads the capture two or three times (refuses "-"): the list, then the
 * replay engine's two passes. Memory: one entry per deep capture and per
 * frame with attachments, and the chosen deep capture with the contents it
 * references (strobe_replay_open).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "format/json_writer.h"
#include "strobe/replay.h"

static const char g_usage[] =
    "usage: strobe calls [--frame N [--process NAME]] [--json] [--quiet] FILE\n"
    "\n"
    "Lists the deep captures of a capture (strobe_deep_request) and the attachments\n"
    "of each frame, or prints one frame's draw calls in order with the resources\n"
    "each reads and its replay status: ok, or what the capture lacks to redraw it\n"
    "(missing_geometry, missing_texture, missing_surface_geometry). Kinds are not\n"
    "checked: the renderer's replay backend knows which it draws. In a merged capture\n"
    "(strobe merge) each deep capture names its process.\n"
    "\n"
    "  --frame N      the deep capture of frame N (the application's frame id)\n"
    "  --process NAME with --frame, in a merged capture: the deep capture of process NAME\n"
    "                 (as listed), needed when several processes have one of frame N\n"
    "  --json         machine-readable output\n"
    "  --quiet        no progress bar\n"
    "\n"
    "Exit: 0 listed or printed, 1 unreadable or damaged (what was read is used), 2 usage,\n"
    "'-' (the capture is read more than once), no deep capture of that frame, or deep captures\n"
    "of it from several processes and no --process, 3 output.\n";

typedef struct deep_info {
  uint64_t frame, seq;
  uint32_t ncalls;
  uint64_t dropped;
  uint32_t origin; /* a merged capture's input it came from, + 1 (strobe_capture_record.origin) */
} deep_info;

typedef struct frame_att {
  uint64_t frame;
  uint32_t stored, earlier, cut;
  uint64_t bytes;
  uint32_t origin; /* as deep_info's: a merge counts each process's attachments of a frame id apart */
} frame_att;

typedef struct calls_cmd {
  deep_info *deeps;
  uint32_t ndeeps, cap_deeps;
  frame_att *frames;
  uint32_t nframes, cap_frames;
  int failed;
} calls_cmd;

static void *grow(void *p, uint32_t *cap, uint32_t n, size_t size, int *failed) {
  if (n < *cap) return p;
  uint32_t c = *cap ? *cap * 2 : 16;
  void *q = realloc(p, (size_t)c * size);
  if (!q) {
    *failed = 1;
    return p;
  }
  *cap = c;
  return q;
}

static void list_pass(calls_cmd *t, cli_input *in) {
  strobe_capture_record r;
  while (cli_next(in, &r) > 0) {
    if (r.type == STROBE_REC_DEEP) {
      t->deeps = grow(t->deeps, &t->cap_deeps, t->ndeeps, sizeof *t->deeps, &t->failed);
      if (t->ndeeps < t->cap_deeps)
        t->deeps[t->ndeeps++] = (deep_info){r.deep->frame, r.deep->seq, r.deep->ncalls, r.deep->calls_dropped, r.origin};
    } else if (r.type == STROBE_REC_ATTACHMENT) {
      const strobe_capture_attachment *a = r.attachment;
      frame_att *f = NULL;
      for (uint32_t i = t->nframes; i-- > 0 && !f;)
        if (t->frames[i].frame == a->frame && t->frames[i].origin == r.origin) f = &t->frames[i];
      if (!f) {
        t->frames = grow(t->frames, &t->cap_frames, t->nframes, sizeof *t->frames, &t->failed);
        if (t->nframes == t->cap_frames) continue;
        f = &t->frames[t->nframes++];
        *f = (frame_att){a->frame, 0, 0, 0, 0, r.origin};
      }
      if (a->state == STROBE_CAPTURE_ATTACH_STORED) {
        f->stored++;
        f->bytes += a->size;
      } else if (a->state == STROBE_CAPTURE_ATTACH_EARLIER) {
        f->earlier++;
      } else {
        f->cut++;
      }
    }
  }
}

static const char *role_name(uint32_t role) {
  return role == STROBE_DEEP_GEOMETRY ? "geometry" : role == STROBE_DEEP_TEXTURE ? "texture" : "surface";
}

static const char *state_name(uint32_t s) {
  return s == STROBE_CAPTURE_ATTACH_STORED ? "stored" : s == STROBE_CAPTURE_ATTACH_EARLIER ? "stored earlier" : "cut";
}

/* >>list */
static void list_text(FILE *f, const calls_cmd *t, const cli_input *in) {
  int merged = strobe_capture_query_merge(in->cap) != NULL; /* then each deep capture's process, last */
  char buf[96];
  if (!t->ndeeps) fprintf(f, "%s: no deep captures (strobe_deep_request)\n", in->path);
  else fprintf(f, "%s: %u deep capture%s\n\n  frame         calls  cut%s\n", in->path, t->ndeeps,
               t->ndeeps == 1 ? "" : "s", merged ? "           process" : "");
  for (uint32_t i = 0; i < t->ndeeps; i++) {
    fprintf(f, "  %-12" PRIu64 "  %5u  %-*" PRIu64, t->deeps[i].frame, t->deeps[i].ncalls, merged ? 12 : 0,
            t->deeps[i].dropped);
    if (merged) fprintf(f, "  %s", cli_origin_process(in->cap, t->deeps[i].origin, buf, sizeof buf));
    fprintf(f, "\n");
  }
  if (t->nframes)
    fprintf(f, "\nattachments by frame:\n  frame         stored  earlier  cut  bytes stored%s\n", merged ? "  process" : "");
  for (uint32_t i = 0; i < t->nframes; i++) {
    fprintf(f, "  %-12" PRIu64 "  %6u  %7u  %3u  %-*" PRIu64, t->frames[i].frame, t->frames[i].stored,
            t->frames[i].earlier, t->frames[i].cut, merged ? 12 : 0, t->frames[i].bytes);
    if (merged) fprintf(f, "  %s", cli_origin_process(in->cap, t->frames[i].origin, buf, sizeof buf));
    fprintf(f, "\n");
  }
}

static void list_json(strobe__json *j, const calls_cmd *t, const strobe_capture *cap) {
  char buf[96];
  strobe__json_array(j, "deep_captures");
  for (uint32_t i = 0; i < t->ndeeps; i++) {
    strobe__json_object(j, NULL);
    strobe__json_uint(j, "frame", t->deeps[i].frame);
    strobe__json_uint(j, "seq", t->deeps[i].seq);
    strobe__json_uint(j, "calls", t->deeps[i].ncalls);
    strobe__json_uint(j, "calls_dropped", t->deeps[i].dropped);
    strobe__json_str(j, "process", cli_origin_process(cap, t->deeps[i].origin, buf, sizeof buf)); /* null: not merged */
    strobe__json_end(j);
  }
  strobe__json_end(j);
  strobe__json_array(j, "attachments_by_frame");
  for (uint32_t i = 0; i < t->nframes; i++) {
    strobe__json_object(j, NULL);
    strobe__json_uint(j, "frame", t->frames[i].frame);
    strobe__json_uint(j, "stored", t->frames[i].stored);
    strobe__json_uint(j, "earlier", t->frames[i].earlier);
    strobe__json_uint(j, "cut", t->frames[i].cut);
    strobe__json_uint(j, "bytes", t->frames[i].bytes);
    strobe__json_str(j, "process", cli_origin_process(cap, t->frames[i].origin, buf, sizeof buf)); /* null: not merged */
    strobe__json_end(j);
  }
  strobe__json_end(j);
}

/* >>frame */
static void frame_text(FILE *f, const strobe_replay *r, const strobe_replay_status *st, uint64_t frame,
                       const char *process) {
  const strobe_capture_deep *d = strobe_replay_query_deep(r);
  uint32_t ok = 0;
  for (uint32_t i = 0; i < d->ncalls; i++) ok += st[i] == STROBE_REPLAY_OK;
  if (process) fprintf(f, "process %s, ", process);
  fprintf(f, "frame %" PRIu64 ": %u draw calls, %u with everything to redraw them, %u missing something%s\n", frame,
          d->ncalls, ok, d->ncalls - ok, d->calls_dropped ? "" : "");
  if (d->calls_dropped) fprintf(f, "%" PRIu64 " calls past the capture's bound were not recorded\n", d->calls_dropped);
  fprintf(f, "(kinds not checked: the renderer's replay backend knows which it draws)\n\n");
  for (uint32_t i = 0; i < d->ncalls; i++) {
    const strobe_capture_draw_call *c = &d->calls[i];
    fprintf(f, "%5u  %-10s %-14s %-8s v %u+%u i %u+%u", c->seq, c->kind, c->pipeline, c->pass, c->vertex_first,
            c->vertex_count, c->instance_first, c->instance_count);
    if (c->has_geometry)
      fprintf(f, "  [%g, %g, %g x %g] clip [%g, %g, %g x %g]", c->bounds[0], c->bounds[1], c->bounds[2], c->bounds[3],
              c->clip[0], c->clip[1], c->clip[2], c->clip[3]);
    for (uint32_t k = 0; k < c->nrefs; k++)
      fprintf(f, "  %s %016" PRIx64, role_name(c->refs[k].role), c->refs[k].resource);
    fprintf(f, "  %s\n", strobe_replay_status_name(st[i]));
  }
  uint32_t n;
  const strobe_replay_resource *att = strobe_replay_query_attachments(r, &n);
  fprintf(f, "\nattachments of frame %" PRIu64 ": %u\n", frame, n);
  for (uint32_t i = 0; i < n; i++)
    fprintf(f, "  %016" PRIx64 "  %-32s %5u x %-5u %9zu bytes  %s\n", att[i].id, att[i].media_type, att[i].width,
            att[i].height, att[i].bytes ? att[i].size : (size_t)0, state_name(att[i].state));
}

static void frame_json(strobe__json *j, const strobe_replay *r, const strobe_replay_status *st, uint64_t frame,
                       const char *process) {
  const strobe_capture_deep *d = strobe_replay_query_deep(r);
  strobe__json_uint(j, "frame", frame);
  strobe__json_str(j, "process", process); /* null: not merged */
  strobe__json_uint(j, "calls_dropped", d->calls_dropped);
  strobe__json_bool(j, "kinds_checked", 0);
  strobe__json_array(j, "calls");
  for (uint32_t i = 0; i < d->ncalls; i++) {
    const strobe_capture_draw_call *c = &d->calls[i];
    strobe__json_object(j, NULL);
    strobe__json_uint(j, "seq", c->seq);
    strobe__json_str(j, "kind", c->kind);
    strobe__json_str(j, "pipeline", c->pipeline);
    strobe__json_str(j, "pass", c->pass);
    strobe__json_uint(j, "vertex_first", c->vertex_first);
    strobe__json_uint(j, "vertex_count", c->vertex_count);
    strobe__json_uint(j, "instance_first", c->instance_first);
    strobe__json_uint(j, "instance_count", c->instance_count);
    if (c->has_geometry) {
      strobe__json_array(j, "bounds");
      for (int k = 0; k < 4; k++) strobe__json_num(j, NULL, c->bounds[k], 3);
      strobe__json_end(j);
      strobe__json_array(j, "clip");
      for (int k = 0; k < 4; k++) strobe__json_num(j, NULL, c->clip[k], 3);
      strobe__json_end(j);
    } else {
      strobe__json_null(j, "bounds");
      strobe__json_null(j, "clip");
    }
    strobe__json_array(j, "resources");
    for (uint32_t k = 0; k < c->nrefs; k++) {
      char id[24];
      snprintf(id, sizeof id, "%016" PRIx64, c->refs[k].resource);
      strobe__json_object(j, NULL);
      strobe__json_str(j, "id", id);
      strobe__json_str(j, "role", role_name(c->refs[k].role));
      strobe__json_bool(j, "content", strobe_replay_query_resource(r, c->refs[k].resource) != NULL);
      strobe__json_end(j);
    }
    strobe__json_end(j);
    strobe__json_str(j, "status", strobe_replay_status_name(st[i]));
    strobe__json_end(j);
  }
  strobe__json_end(j);
  uint32_t n;
  const strobe_replay_resource *att = strobe_replay_query_attachments(r, &n);
  strobe__json_array(j, "attachments");
  for (uint32_t i = 0; i < n; i++) {
    char id[24];
    snprintf(id, sizeof id, "%016" PRIx64, att[i].id);
    strobe__json_object(j, NULL);
    strobe__json_str(j, "resource", id);
    strobe__json_str(j, "media_type", att[i].media_type);
    strobe__json_uint(j, "width", att[i].width);
    strobe__json_uint(j, "height", att[i].height);
    strobe__json_uint(j, "bytes", att[i].bytes ? att[i].size : 0);
    strobe__json_str(j, "state", state_name(att[i].state));
    strobe__json_end(j);
  }
  strobe__json_end(j);
}

int cmd_calls(int argc, char **argv) {
  static const struct option opts[] = {{"frame", required_argument, NULL, 'f'},
                                       {"process", required_argument, NULL, 'p'},
                                       {"json", no_argument, NULL, 'j'},
                                       {"quiet", no_argument, NULL, 'q'},
                                       {"help", no_argument, NULL, 'h'},
                                       {0}};
  int json = 0, quiet = 0, ch, by_frame = 0;
  uint64_t frame = 0;
  const char *process = NULL;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
    switch (ch) {
      case 'f':
        if (cli_parse_u64(optarg, &frame)) return cli_usage_error("calls", "--frame takes a frame id, not '%s'", optarg);
        by_frame = 1;
        break;
      case 'p': process = optarg; break;
      case 'j': json = 1; break;
      case 'q': quiet = 1; break;
      case 'h': fputs(g_usage, stdout); return CLI_OK;
      default: return cli_bad_option("calls", argv, optind);
    }
  }
  if (argc - optind != 1) return cli_usage_error("calls", "expected one capture FILE");
  if (process && !by_frame)
    return cli_usage_error("calls", "--process chooses among a frame's deep captures: it goes with --frame N");
  const char *path = argv[optind];
  int rc = cli_need_file("calls", path, "it reads the capture more than once");
  if (rc) return rc;
  calls_cmd t = {0};
  cli_input in;
  if ((rc = cli_open(&in, "calls", path, quiet))) return rc;
  strobe_capture_set_skip_damaged_content(in.cap, 1); /* one damaged content block hides nothing else */
  list_pass(&t, &in);
  int status = cli_finish_read(&in);
  strobe_capture_totals dt = strobe_capture_query_totals(in.cap);
  if (dt.attach_damaged) {
    cli_error("calls", "%s: %" PRIu64 " damaged attachment blocks skipped (the first at byte %" PRIu64 "): their "
              "content is not in the output, and calls needing it say damaged_content", in.path, dt.attach_damaged,
              dt.attach_damaged_at);
    status = CLI_FAIL;
  }
  strobe_replay *r = NULL;
  strobe_replay_status *st = NULL;
  char buf[96];
  const char *chosen = NULL; /* the chosen deep capture's process: NULL when not merged */
  if (!t.failed && by_frame) {
    /* Of several processes' deep captures of frame N, the one --process names (its number is unique in a merge). */
    uint32_t *origins = malloc((t.ndeeps ? t.ndeeps : 1) * sizeof *origins), n = 0;
    for (uint32_t i = 0; origins && i < t.ndeeps; i++)
      if (t.deeps[i].frame == frame) origins[n++] = t.deeps[i].origin;
    int k = !origins ? -2 : n ? cli_pick_origin("calls", in.cap, in.path, "deep captures", frame, origins, n, process) : 0;
    free(origins);
    const deep_info *want = NULL; /* the kth of frame N */
    for (uint32_t i = 0, m = 0; k >= 0 && n && i < t.ndeeps && !want; i++)
      if (t.deeps[i].frame == frame && m++ == (uint32_t)k) want = &t.deeps[i];
    if (want) chosen = cli_origin_process(in.cap, want->origin, buf, sizeof buf);
    if (k < 0) {
      if (k == -2) cli_error("calls", "%s: out of memory", in.path);
      cli_close(&in);
      free(t.deeps);
      free(t.frames);
      return k == -2 ? CLI_FAIL : CLI_USAGE;
    }
    uint64_t seq = want ? want->seq : 0;
    rc = strobe_replay_open_deep(path, frame, seq, &r);
    if (rc == STROBE_ENOTFOUND) {
      cli_error("calls", "%s: no deep capture of frame %" PRIu64 " (`strobe calls %s` lists them)", in.path, frame,
                in.path);
      cli_close(&in);
      free(t.deeps);
      free(t.frames);
      return CLI_USAGE;
    }
    if (rc) {
      cli_error("calls", "%s: cannot read frame %" PRIu64 "'s deep capture: %s", in.path, frame, strobe_strerror(rc));
      cli_close(&in);
      free(t.deeps);
      free(t.frames);
      return rc == STROBE_ENOMEM ? CLI_FAIL : CLI_FAIL;
    }
    const strobe_capture_deep *d = strobe_replay_query_deep(r);
    st = calloc(d->ncalls ? d->ncalls : 1, sizeof *st);
    if (!st) t.failed = 1;
    for (uint32_t i = 0; st && i < d->ncalls; i++) st[i] = strobe_replay_check(r, i, NULL);
    uint64_t at;
    int damage = strobe_replay_query_damage(r, &at);
    if (damage && !dt.attach_damaged) { /* the reader stopped after the deep capture: said by cli_finish_read */
      cli_error("calls", "%s: the contents after byte %" PRIu64 " were not read: calls needing one say damaged_content",
                in.path, at);
      status = CLI_FAIL;
    }
  }
  if (t.failed) {
    cli_error("calls", "%s: out of memory", in.path);
    strobe_replay_close(r);
    cli_close(&in);
    free(t.deeps);
    free(t.frames);
    return CLI_FAIL;
  }
  cli_output o;
  if ((rc = cli_output_open(&o, "calls", NULL)) == CLI_OK) {
    if (json) {
      strobe__json j = {0};
      strobe__json_object(&j, NULL);
      strobe__json_str(&j, "file", in.path);
      strobe_capture_totals tot = strobe_capture_query_totals(in.cap);
      strobe__json_uint(&j, "deep_captures_refused", tot.deeps_dropped);
      strobe__json_uint(&j, "attachments_cut", tot.attach_cut);
      strobe__json_uint(&j, "attachment_bytes_cut", tot.attach_cut_bytes);
      if (r) frame_json(&j, r, st, frame, chosen);
      else list_json(&j, &t, in.cap);
      strobe__json_end(&j);
      rc = cli_output_json(&o, &j);
      if (rc) status = rc;
    } else {
      if (r) frame_text(o.f, r, st, frame, chosen);
      else list_text(o.f, &t, &in);
      strobe_capture_totals tot = strobe_capture_query_totals(in.cap);
      if (tot.deeps_dropped)
        fprintf(o.f, "%" PRIu64 " deep captures refused past the capture's bound\n", tot.deeps_dropped);
      if (tot.attach_cut)
        fprintf(o.f, "%" PRIu64 " attachments (%" PRIu64 " bytes) cut by the capture's content bound: not in it\n",
                tot.attach_cut, tot.attach_cut_bytes);
    }
    rc = cli_output_close(&o);
  }
  free(st);
  strobe_replay_close(r);
  cli_close(&in);
  free(t.deeps);
  free(t.frames);
  return rc ? rc : status;
}
