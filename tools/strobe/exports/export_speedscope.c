/*
 * export_speedscope.c — speedscope's file format
 * (https://www.speedscope.app/file-format-schema.json): one "evented"
 * profile per thread, unit nanoseconds, "at" = ns since the collector epoch,
 * frames shared by all profiles with name, file and line.
 *
 * Streaming: a capture interleaves threads, the format groups events by
 * thread, so each thread's events are spooled to an anonymous temporary file
 * (tmpfile(3)) and copied into its profile at the end. Threads are handled
 * 256 per pass over the capture so open files stay bounded. The frames table
 * is written after the profiles (JSON key order carries no meaning), so its
 * indexes are assigned on first use in one pass.
 *
 * Speedscope requires balanced open/close events, and Strobe never invents
 * an end silently. So a scope still open when its thread or the file ends is
 * closed at the end of its profile under a frame of its own named
 * "NAME [unfinished: never ended]", and a scope whose END was dropped is
 * closed where the loss was recorded, as "NAME [end lost]"; an unwound scope
 * (its END never ran: docs/recording.md, Unwinding) closes where that was
 * found, as "NAME [unwound: END never ran]". To rename a frame
 * after its open event was spooled, open events carry a fixed-width frame
 * index that is patched in place (JSON allows the padding spaces).
 *
 * The filters (export.h >>filters) decide at a scope's BEGIN whether it is
 * written: --to needs the scopes still open at --to, found by xf_scan_cuts
 * in a pass of its own before this export starts.
 *
 * GPU spans (docs/gpu.md) become one more evented profile per queue lane,
 * "GPU <domain>/<queue>", their times mapped onto the host timeline once the
 * first pass has read the whole capture (--from/--to keep the spans wholly
 * inside; --thread, which names a CPU thread, leaves them out). A span that
 * overlaps the one before it on its lane without nesting in it cannot be an
 * evented profile's event: it is left out and counted (a warning says how
 * many; the chrome export has it).
 */
#include <math.h>
#include <stdlib.h>

#include "analyze/gpu_frames.h"
#include "export.h"

#define MAX_DEPTH 256
#define BATCH 256      /* threads spooled per pass: bounds open files */
#define FRAME_FIELD 7  /* digits of a frame index, space padded: up to 9,999,999 */
#define SCHEMA "https://www.speedscope.app/file-format-schema.json"

enum { NORMAL, UNFINISHED, LOST, UNWOUND, VARIANTS }; /* a frame's variant: 2 bits of frame_site */

typedef struct open_span {
  uint32_t site;
  int emitted;        /* its O event was written (it passed the filters) */
  uint64_t field_pos; /* spool offset of the O event's frame field */
} open_span;

typedef struct sthread {
  FILE *spool;
  uint64_t bytes;     /* spooled so far: where the next event starts */
  uint64_t n_events;
  int64_t first_at, last_at;
  open_span stack[MAX_DEPTH];
  uint32_t depth;
} sthread;

typedef struct sscope {
  const strobe_capture *c;
  export_filter *f;
  uint32_t *frame_of[VARIANTS]; /* per site id: frame index + 1, 0 when not used yet */
  uint32_t n_site_slots;
  uint32_t *frame_site;         /* per frame: site id << 2 | variant */
  uint32_t n_frames, cap_frames;
  sthread *t[BATCH];
  uint32_t base;                /* first thread index of this pass */
  int64_t end_at;               /* the capture's end, ns */
  uint64_t unfinished, lost, unwound;
  strobe__gpu_data gpu;         /* the first pass's GPU spans (>>gpu) */
  uint64_t gpu_overlapping;     /* spans left out: they overlap without nesting */
  int failed;                   /* out of memory or a spool write failed */
} sscope;

static uint32_t frame_index(sscope *s, uint32_t site, int variant) {
  if (site >= s->n_site_slots) {
    uint32_t n = s->n_site_slots ? s->n_site_slots : 64;
    while (n <= site) n *= 2;
    for (int v = 0; v < VARIANTS; v++) {
      uint32_t *p = realloc(s->frame_of[v], n * sizeof *p);
      if (!p) goto oom;
      memset(p + s->n_site_slots, 0, (n - s->n_site_slots) * sizeof *p);
      s->frame_of[v] = p;
    }
    s->n_site_slots = n;
  }
  if (!s->frame_of[variant][site]) {
    if (s->n_frames == s->cap_frames) {
      uint32_t cap = s->cap_frames ? s->cap_frames * 2 : 64;
      uint32_t *p = realloc(s->frame_site, cap * sizeof *p);
      if (!p) goto oom;
      s->frame_site = p;
      s->cap_frames = cap;
    }
    s->frame_site[s->n_frames++] = site << 2 | (uint32_t)variant;
    s->frame_of[variant][site] = s->n_frames;
  }
  return s->frame_of[variant][site] - 1;
oom:
  s->failed = 1;
  return 0;
}

static void put_event(sscope *s, sthread *t, char type, uint32_t frame, int64_t at, int record_field) {
  char ev[96];
  int n = snprintf(ev, sizeof ev, "%s{\"type\":\"%c\",\"frame\":%-*u,\"at\":%lld}", t->n_events ? "," : "", type,
                   FRAME_FIELD, frame, (long long)at);
  if (record_field) t->stack[t->depth - 1].field_pos = t->bytes + (t->n_events ? 1 : 0) + 20; /* {"type":"O","frame": */
  if (fwrite(ev, 1, (size_t)n, t->spool) != (size_t)n) s->failed = 1;
  t->bytes += (uint64_t)n;
  t->n_events++;
  if (t->n_events == 1) t->first_at = at;
  t->last_at = at;
}

/* Renames an open event's frame in the spool, then closes it at `at`. */
static void close_as(sscope *s, sthread *t, int variant, int64_t at) {
  open_span *o = &t->stack[t->depth - 1];
  uint32_t frame = frame_index(s, o->site, variant);
  char field[FRAME_FIELD + 1];
  snprintf(field, sizeof field, "%-*u", FRAME_FIELD, frame);
  if (fseek(t->spool, (long)o->field_pos, SEEK_SET) != 0 || fwrite(field, 1, FRAME_FIELD, t->spool) != FRAME_FIELD ||
      fseek(t->spool, 0, SEEK_END) != 0)
    s->failed = 1;
  if (at < t->last_at) at = t->last_at; /* "at" must not decrease */
  put_event(s, t, 'C', frame, at, 0);
  t->depth--;
  if (variant == LOST) s->lost++;
  else if (variant == UNWOUND) s->unwound++;
  else s->unfinished++;
}

static sthread *thread_in_batch(sscope *s, uint32_t index) {
  if (index < s->base || index >= s->base + BATCH) return NULL;
  sthread **slot = &s->t[index - s->base];
  if (!*slot) {
    sthread *t = calloc(1, sizeof *t);
    if (!t || !(t->spool = tmpfile())) {
      free(t);
      s->failed = 1;
      return NULL;
    }
    *slot = t;
  }
  return *slot;
}

/* Pops the innermost open scope: closed as `variant` when it was written. */
static void pop_as(sscope *s, sthread *t, int variant, int64_t at) {
  if (t->stack[t->depth - 1].emitted) close_as(s, t, variant, at);
  else t->depth--;
}

static void on_record(sscope *s, const strobe_capture_record *r) {
  if (r->device) {
    if (s->base == 0) strobe__gpu_record(&s->gpu, r);
    return;
  }
  if (r->type == STROBE_REC_THREAD && !xf_thread(s->f, s->c, r->thread)) s->failed = 1;
  if (r->type == STROBE_REC_SITE || r->type == STROBE_REC_THREAD) return;
  if (!xf_thread_in(s->f, r->thread)) return;
  sthread *t = thread_in_batch(s, r->thread);
  if (!t) return;
  int64_t at = round_i64(r->time_ns);
  switch (r->type) {
    case STROBE_REC_BEGIN:
      if (r->depth != t->depth + 1 || r->depth > MAX_DEPTH) return; /* cannot happen with the reader's stacks */
      t->stack[t->depth++] = (open_span){r->site, 0, 0};
      if (!xf_time_in(s->f, r->time_ns) || xf_cut(s->f, r->thread, r->depth, r->ticks)) {
        s->f->left_out++;
        return;
      }
      t->stack[t->depth - 1].emitted = 1;
      put_event(s, t, 'O', frame_index(s, r->site, NORMAL), at, 1);
      return;
    case STROBE_REC_END:
      if (r->depth != t->depth || t->depth == 0) return;
      if (!t->stack[t->depth - 1].emitted) {
        t->depth--;
        return;
      }
      if (r->unwound) { /* named apart: its END never ran (docs/recording.md, Unwinding) */
        close_as(s, t, UNWOUND, at);
        return;
      }
      put_event(s, t, 'C', frame_index(s, r->site, NORMAL), at, 0);
      t->depth--;
      return;
    case STROBE_REC_LOST:
      if (!r->ticks) return; /* a LOST block: totals only, nothing closed */
      while (t->depth > r->depth) pop_as(s, t, LOST, at);
      return;
    case STROBE_REC_THREAD_END:
      while (t->depth > 0) pop_as(s, t, UNFINISHED, t->last_at);
      return;
    default: return;
  }
}

static void frames_json(sscope *s, ob *o) {
  ob_str(o, "],\"shared\":{\"frames\":[");
  for (uint32_t i = 0; i < s->n_frames; i++) {
    uint32_t site = s->frame_site[i] >> 2, variant = s->frame_site[i] & 3;
    const strobe_capture_site *cs = strobe_capture_query_site(s->c, site);
    char name[4200];
    snprintf(name, sizeof name, "%s%s", cs ? cs->name : "?",
             variant == UNFINISHED ? " [unfinished: never ended]"
             : variant == LOST     ? " [end lost]"
             : variant == UNWOUND  ? " [unwound: END never ran]"
                                   : "");
    ob_str(o, i ? ",\n{\"name\":" : "\n{\"name\":");
    ob_json_str(o, name);
    if (cs && cs->file[0]) {
      ob_str(o, ",\"file\":");
      ob_json_str(o, cs->file);
      ob_str(o, ",\"line\":");
      ob_room(o, 24);
      ob_u64(o, cs ? cs->line : 0);
    }
    ob_ch(o, '}');
  }
  ob_str(o, "]}}\n");
}

/* >>gpu: one evented profile per queue lane, spans in begin order. */
static int by_begin(const void *a, const void *b) {
  const strobe__gpu_span_rec *x = *(const strobe__gpu_span_rec *const *)a, *y = *(const strobe__gpu_span_rec *const *)b;
  if (x->begin_ns != y->begin_ns) return x->begin_ns < y->begin_ns ? -1 : 1;
  return (x->end_ns < y->end_ns) - (x->end_ns > y->end_ns); /* the longer one first: it holds the other */
}

static void put_gpu_event(sscope *s, ob *o, char type, uint32_t site, double at_ns, uint32_t *events) {
  ob_room(o, 96);
  o->len += (size_t)snprintf(o->buf + o->len, 96, "%s{\"type\":\"%c\",\"frame\":%u,\"at\":%lld}", (*events)++ ? "," : "",
                             type, frame_index(s, site, NORMAL), (long long)round_i64(at_ns));
}

static void write_gpu_profiles(sscope *s, ob *o, strobe_capture *c, export_filter *f, int *first_profile) {
  strobe__gpu_data *g = &s->gpu;
  if (!xf_gpu_lanes(f, g, c, g->n_spans, &s->failed)) return;
  const strobe__gpu_span_rec **v = malloc(((size_t)g->n_spans + 1) * sizeof *v);
  if (!v) {
    s->failed = 1;
    return;
  }
  for (uint32_t lane = 0; lane < g->n_lanes; lane++) {
    size_t n = 0;
    for (uint32_t i = 0; i < g->n_spans; i++) {
      const strobe__gpu_span_rec *sp = &g->spans[i];
      if (sp->lane != lane || isnan(sp->begin_ns)) continue;
      if (!xf_time_in(f, sp->begin_ns) || !xf_time_in(f, sp->end_ns)) {
        f->left_out++;
        continue;
      }
      v[n++] = sp;
    }
    if (!n) continue;
    if (n) qsort(v, n, sizeof *v, by_begin);
    char name[300];
    strobe__gpu_lane_title(&g->lanes[lane], name, sizeof name);
    ob_str(o, *first_profile ? "\n" : ",\n");
    *first_profile = 0;
    ob_str(o, "{\"type\":\"evented\",\"name\":");
    ob_json_str(o, name);
    ob_str(o, ",\"unit\":\"nanoseconds\",\"startValue\":");
    ob_room(o, 64);
    ob_i64(o, round_i64(v[0]->begin_ns));
    double last = v[0]->end_ns;
    for (size_t i = 0; i < n; i++)
      if (v[i]->end_ns > last) last = v[i]->end_ns;
    ob_str(o, ",\"endValue\":");
    ob_room(o, 32);
    ob_i64(o, round_i64(last));
    ob_str(o, ",\"events\":[");
    const strobe__gpu_span_rec *stack[MAX_DEPTH];
    uint32_t depth = 0, events = 0;
    for (size_t i = 0; i <= n; i++) {
      /* Close what ends before this span begins (all of it at the end). */
      while (depth && (i == n || round_i64(stack[depth - 1]->end_ns) <= round_i64(v[i]->begin_ns))) {
        depth--;
        put_gpu_event(s, o, 'C', stack[depth]->site, stack[depth]->end_ns, &events);
      }
      if (i == n) break;
      if ((depth && round_i64(v[i]->end_ns) > round_i64(stack[depth - 1]->end_ns)) || depth == MAX_DEPTH) {
        s->gpu_overlapping++;
        continue;
      }
      stack[depth++] = v[i];
      put_gpu_event(s, o, 'O', v[i]->site, v[i]->begin_ns, &events);
    }
    ob_str(o, "]}");
  }
  free(v);
}

/* Writes the profiles of this pass's threads and frees their spools. */
static void write_profiles(sscope *s, ob *o, int64_t start_at, int *first_profile) {
  for (uint32_t i = 0; i < BATCH; i++) {
    sthread *t = s->t[i];
    if (!t) continue;
    s->t[i] = NULL;
    if (t->n_events) {
      char label[CLI_THREAD_LABEL_MAX];
      ob_str(o, *first_profile ? "\n" : ",\n");
      *first_profile = 0;
      ob_str(o, "{\"type\":\"evented\",\"name\":");
      ob_json_str(o, cli_thread_label(s->c, s->base + i, label, sizeof label));
      ob_str(o, ",\"unit\":\"nanoseconds\",\"startValue\":");
      ob_room(o, 64);
      ob_i64(o, t->first_at < start_at ? t->first_at : start_at);
      ob_str(o, ",\"endValue\":");
      ob_room(o, 32);
      ob_i64(o, t->last_at);
      ob_str(o, ",\"events\":[");
      ob_flush(o);
      rewind(t->spool);
      char buf[1 << 16];
      size_t n;
      while ((n = fread(buf, 1, sizeof buf, t->spool)) > 0) ob_mem(o, buf, n);
      if (ferror(t->spool)) s->failed = 1;
      ob_str(o, "]}");
    }
    fclose(t->spool);
    free(t);
  }
}

int export_speedscope(const char *path, int quiet, FILE *out, export_filter *f) {
  sscope *s = calloc(1, sizeof *s);
  ob *o = malloc(sizeof *o);
  if (!s || !o) {
    free(s);
    free(o);
    cli_error("export", "out of memory");
    return CLI_FAIL;
  }
  *o = (ob){.f = out};
  const char *base = strrchr(path, '/');
  ob_str(o, "{\"$schema\":\"" SCHEMA "\",\"exporter\":\"strobe ");
  ob_str(o, strobe_version());
  ob_str(o, "\",\"name\":");
  ob_json_str(o, base ? base + 1 : path);
  ob_str(o, ",\"activeProfileIndex\":0,\"profiles\":[");
  int status = CLI_OK, first_profile = 1;
  uint32_t threads = 1;
  for (s->base = 0; s->base < threads && status == CLI_OK && !s->failed; s->base += BATCH) {
    cli_input in;
    int rc = cli_open(&in, "export", path, quiet);
    if (rc) {
      status = rc;
      break;
    }
    s->c = in.cap;
    s->f = f;
    xf_begin(f, in.cap);
    strobe_capture_record r;
    while (cli_next(&in, &r) > 0) on_record(s, &r);
    strobe_capture_totals tot = strobe_capture_query_totals(in.cap);
    s->end_at = round_i64(strobe_capture_ticks_to_ns(in.cap, tot.end_ticks));
    for (uint32_t i = 0; i < BATCH; i++) { /* still open at the end of the file */
      sthread *t = s->t[i];
      if (!t) continue;
      int64_t end = t->last_at > s->end_at ? t->last_at : s->end_at;
      while (t->depth > 0) pop_as(s, t, UNFINISHED, end);
    }
    if (s->base == 0) {
      status = cli_finish_read(&in);
    } else { /* later passes meet the same end: said once */
      cli_progress_end(in.progress);
      in.progress = NULL;
    }
    threads = strobe_capture_query_thread_count(in.cap);
    write_profiles(s, o, round_i64(cli_start_ns(in.cap)), &first_profile);
    if (s->base == 0) write_gpu_profiles(s, o, in.cap, f, &first_profile);
    if (s->base + BATCH >= threads) frames_json(s, o); /* needs the capture's site table */
    cli_close(&in);
  }
  ob_flush(o);
  if (s->failed) {
    cli_error("export", "out of memory or temporary file error: the export is incomplete");
    status = CLI_FAIL;
  }
  if (s->gpu_overlapping)
    cli_error("export", "warning: %llu GPU spans overlap the span before them on their lane without nesting in it: "
                        "left out of the speedscope profile (the chrome export has them)",
              (unsigned long long)s->gpu_overlapping);
  if (first_profile && status == CLI_OK)
    cli_error("export", "warning: %s has no scopes: the speedscope file has no profiles", path);
  int wfail = o->failed;
  for (uint32_t i = 0; i < BATCH; i++)
    if (s->t[i]) {
      fclose(s->t[i]->spool);
      free(s->t[i]);
    }
  for (int v = 0; v < VARIANTS; v++) free(s->frame_of[v]);
  free(s->frame_site);
  strobe__gpu_free(&s->gpu);
  free(s);
  free(o);
  return wfail ? CLI_OUTPUT : status;
}
