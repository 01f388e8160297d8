/*
 * memory_view.c — how `strobe report` shows allocations and messages
 * (memory.h; docs/memory.md §In strobe report), in text and JSON: the pools,
 * the frames that allocated most, the leaks and the peak; with --messages
 * the log. It presents what memory.c computed; it decides nothing.
 *
 * Must never: print a message's text into anything but the local report
 * (text and JSON of `strobe report` are local output, like the capture).
 *
 * Contents: >>text >>json >>messages
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "memory.h"

#define BYTES(v) cli_num((double)(v), STROBE_UNIT_BYTES)

/* >>text */
/* A frame as the report names it: its window's (or thread's) frame number, "main#12". */
static const char *frame_label(const strobe_frames *fx, uint32_t i, char *buf, size_t cap) {
  const strobe_frame *fr = strobe_frames_query_frame(fx, i);
  snprintf(buf, cap, "%s#%llu", fr->window ? fr->window : "", (unsigned long long)fr->number);
  return buf;
}

static void pools_text(FILE *f, const mem_report *m) {
  fprintf(f, "  %-16s %10s %10s %10s %10s %12s %12s\n", "pool", "allocs", "bytes", "frees", "freed", "live blocks",
          "live bytes");
  for (uint32_t p = 0; p < m->npools; p++) {
    const mem_pool *x = &m->pools[p];
    fprintf(f, "  %-16.16s %10llu", x->name, (unsigned long long)x->all.allocs);
    cli_cell(f, 10, BYTES(x->all.bytes));
    fprintf(f, " %10llu", (unsigned long long)x->all.frees);
    cli_cell(f, 10, BYTES(x->all.freed));
    fprintf(f, " %12llu", (unsigned long long)x->live_blocks);
    cli_cell(f, 12, BYTES(x->live_bytes));
    fputc('\n', f);
  }
}

static void frames_text(FILE *f, const mem_report *m, const strobe_frames *fx, double start_ns, uint32_t top) {
  uint32_t *ix = malloc((top ? top : 1) * sizeof *ix);
  uint32_t n = ix ? mem_top_frames(m, ix, top) : 0;
  if (!n) {
    fprintf(f, "  no frame allocated or freed anything\n");
    free(ix);
    return;
  }
  fprintf(f, "  frames that allocated the most bytes (%u of %u; every frame in --json):\n", n, m->nframes);
  fprintf(f, "  %-10s %10s %10s %10s %10s %10s %14s\n", "frame", "start", "allocs", "bytes", "frees", "freed",
          "live at end");
  for (uint32_t i = 0; i < n; i++) {
    const strobe_frame *fr = strobe_frames_query_frame(fx, ix[i]);
    mem_counts k = mem_frame_counts(m, ix[i]);
    double live = mem_frame_live(m, ix[i]);
    char lb[64];
    fprintf(f, "  %-10.10s", frame_label(fx, ix[i], lb, sizeof lb));
    cli_cell(f, 10, cli_dur(fr->begin_ns - start_ns));
    fprintf(f, " %10llu", (unsigned long long)k.allocs);
    cli_cell(f, 10, BYTES(k.bytes));
    fprintf(f, " %10llu", (unsigned long long)k.frees);
    cli_cell(f, 10, BYTES(k.freed));
    cli_cell(f, 14, isnan(live) ? "unfinished" : BYTES(live));
    fputc('\n', f);
  }
  free(ix);
}

static void leaks_text(FILE *f, const mem_report *m, const strobe_capture *c, const strobe_frames *fx,
                       double start_ns) {
  uint64_t blocks = 0, bytes = 0;
  for (uint32_t p = 0; p < m->npools; p++) blocks += m->pools[p].live_blocks, bytes += m->pools[p].live_bytes;
  fprintf(f, "  live at the end (leaks, or memory the program still held): %llu blocks, %s\n",
          (unsigned long long)blocks, BYTES(bytes));
  for (uint32_t i = 0; i < m->nlargest; i++) {
    const mem_block_info *b = &m->largest[i];
    char th[CLI_THREAD_LABEL_MAX];
    fprintf(f, "    %10s  pool %-12.12s thread %-16.16s at %s", BYTES(b->bytes), m->pools[b->pool].name,
            cli_thread_label(c, b->thread, th, sizeof th), cli_dur(b->time_ns - start_ns));
    char lb[64];
    if (b->frame != STROBE_FRAMES_NONE) fprintf(f, " in frame %s", frame_label(fx, b->frame, lb, sizeof lb));
    fputc('\n', f);
  }
}

void mem_text(FILE *f, const mem_report *m, const strobe_capture *c, const strobe_frames *fx, double start_ns,
              uint32_t top) {
  if (!m->recorded) return; /* no allocation or message was recorded: nothing to say */
  if (!m->available) {
    fprintf(f, "\nallocations: not shown: %s\n", m->why);
    return;
  }
  if (!m->npools && !m->pools_cut) return; /* messages only */
  fprintf(f, "\nallocations (docs/memory.md): by pool over the capture\n");
  pools_text(f, m);
  frames_text(f, m, fx, start_ns, top);
  if (m->outside.allocs || m->outside.frees)
    fprintf(f, "  outside every frame: %llu allocations (%s), %llu frees (%s)\n", (unsigned long long)m->outside.allocs,
            BYTES(m->outside.bytes), (unsigned long long)m->outside.frees, BYTES(m->outside.freed));
  leaks_text(f, m, c, fx, start_ns);
  if (m->peak_frame != STROBE_FRAMES_NONE) {
    const strobe_frame *fr = strobe_frames_query_frame(fx, m->peak_frame);
    char lb[64];
    fprintf(f, "  peak live: %s at the end of frame %s, %s after the start (sampled at frame ends)\n",
            BYTES(m->peak_bytes), frame_label(fx, m->peak_frame, lb, sizeof lb), cli_dur(fr->end_ns - start_ns));
  }
  if (m->unmatched_frees)
    fprintf(f, "  %llu frees of blocks allocated before the capture began (their sizes are not known)\n",
            (unsigned long long)m->unmatched_frees);
  if (m->frees_missing)
    fprintf(f, "  %llu addresses allocated again with no free recorded between (the free was lost)\n",
            (unsigned long long)m->frees_missing);
  if (m->untracked || m->pools_cut)
    fprintf(f, "  not counted: %llu allocations past %u blocks tracked at once, %llu events of pools past %u\n",
            (unsigned long long)m->untracked, MEM_MAX_BLOCKS, (unsigned long long)m->pools_cut, MEM_MAX_POOLS);
}

/* >>json */
static void counts_json(strobe__json *j, const mem_counts *k) {
  strobe__json_uint(j, "allocs", k->allocs);
  strobe__json_uint(j, "bytes", k->bytes);
  strobe__json_uint(j, "frees", k->frees);
  strobe__json_uint(j, "freed_bytes", k->freed);
}

static void frame_json(strobe__json *j, const mem_report *m, const strobe_frames *fx, uint32_t i) {
  const strobe_frame *fr = strobe_frames_query_frame(fx, i);
  strobe__json_object(j, NULL);
  strobe__json_uint(j, "index", i);
  strobe__json_uint(j, "number", fr->number);
  mem_counts k = mem_frame_counts(m, i);
  counts_json(j, &k);
  double live = mem_frame_live(m, i);
  if (isnan(live)) strobe__json_null(j, "live_end_bytes");
  else strobe__json_num(j, "live_end_bytes", live, 0);
  strobe__json_array(j, "pools");
  for (uint32_t p = 0; p < m->npools; p++) {
    strobe__json_object(j, NULL);
    strobe__json_str(j, "name", m->pools[p].name);
    counts_json(j, &m->pools[p].frame[i]);
    if (isnan(m->pools[p].live_end[i])) strobe__json_null(j, "live_end_bytes");
    else strobe__json_num(j, "live_end_bytes", m->pools[p].live_end[i], 0);
    strobe__json_end(j);
  }
  strobe__json_end(j);
  strobe__json_end(j);
}

static void leaks_json(strobe__json *j, const mem_report *m, const strobe_frames *fx, double start_ns) {
  strobe__json_array(j, "largest_live");
  for (uint32_t i = 0; i < m->nlargest; i++) {
    const mem_block_info *b = &m->largest[i];
    strobe__json_object(j, NULL);
    strobe__json_uint(j, "bytes", b->bytes);
    strobe__json_str(j, "pool", m->pools[b->pool].name);
    strobe__json_uint(j, "thread", b->thread);
    strobe__json_num(j, "at_ns", b->time_ns - start_ns, 1);
    if (b->frame == STROBE_FRAMES_NONE) strobe__json_null(j, "frame");
    else strobe__json_uint(j, "frame", strobe_frames_query_frame(fx, b->frame)->number);
    strobe__json_end(j);
  }
  strobe__json_end(j);
}

void mem_json(strobe__json *j, const mem_report *m, const strobe_frames *fx, double start_ns) {
  strobe__json_object(j, "allocations");
  strobe__json_bool(j, "available", m->available);
  if (m->available) strobe__json_null(j, "why");
  else strobe__json_str(j, "why", m->why ? m->why : "");
  strobe__json_array(j, "pools");
  for (uint32_t p = 0; m->available && p < m->npools; p++) {
    strobe__json_object(j, NULL);
    strobe__json_str(j, "name", m->pools[p].name);
    counts_json(j, &m->pools[p].all);
    strobe__json_uint(j, "live_blocks", m->pools[p].live_blocks);
    strobe__json_uint(j, "live_bytes", m->pools[p].live_bytes);
    strobe__json_end(j);
  }
  strobe__json_end(j);
  strobe__json_array(j, "frames");
  for (uint32_t i = 0; m->available && m->npools && i < m->nframes; i++) frame_json(j, m, fx, i);
  strobe__json_end(j);
  strobe__json_object(j, "outside_frames");
  counts_json(j, &m->outside);
  strobe__json_end(j);
  leaks_json(j, m, fx, start_ns);
  if (m->available && m->peak_frame != STROBE_FRAMES_NONE) {
    strobe__json_num(j, "peak_live_bytes", m->peak_bytes, 0);
    strobe__json_uint(j, "peak_frame", strobe_frames_query_frame(fx, m->peak_frame)->number);
  } else {
    strobe__json_null(j, "peak_live_bytes");
    strobe__json_null(j, "peak_frame");
  }
  strobe__json_uint(j, "unmatched_frees", m->unmatched_frees);
  strobe__json_uint(j, "frees_missing", m->frees_missing);
  strobe__json_uint(j, "untracked", m->untracked);
  strobe__json_uint(j, "pools_cut", m->pools_cut);
  strobe__json_uint(j, "messages", m->messages_total);
  strobe__json_uint(j, "messages_content", m->messages_content);
  strobe__json_end(j);
}

/* >>messages: the log, in time order (records of different threads arrive out of it). */
static const mem_message *g_sort_msgs;
static int by_time(const void *a, const void *b) {
  const mem_message *x = &g_sort_msgs[*(const uint32_t *)a], *y = &g_sort_msgs[*(const uint32_t *)b];
  if (x->time_ns != y->time_ns) return x->time_ns < y->time_ns ? -1 : 1;
  return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static uint32_t *messages_in_order(const mem_report *m) {
  uint32_t *ix = malloc((m->nmessages ? m->nmessages : 1) * sizeof *ix);
  if (!ix) return NULL;
  for (uint32_t i = 0; i < m->nmessages; i++) ix[i] = i;
  g_sort_msgs = m->messages;
  if (m->nmessages) qsort(ix, m->nmessages, sizeof *ix, by_time);
  return ix;
}

void mem_messages_text(FILE *f, const mem_report *m, const strobe_capture *c, double start_ns) {
  fprintf(f, "\nmessages: %llu (%llu with run-time text, marked [content])\n", (unsigned long long)m->messages_total,
          (unsigned long long)m->messages_content);
  uint32_t *ix = messages_in_order(m);
  for (uint32_t i = 0; ix && i < m->nmessages; i++) {
    const mem_message *x = &m->messages[ix[i]];
    const strobe_capture_site *s = strobe_capture_query_site(c, x->site);
    char th[CLI_THREAD_LABEL_MAX];
    fprintf(f, "  %12s  %-16.16s %s%s\n", cli_dur(x->time_ns - start_ns), cli_thread_label(c, x->thread, th, sizeof th),
            s ? s->name : "?", s && (s->flags & STROBE_SITE_INTERNED) ? "  [content]" : "");
  }
  if (m->messages_total > m->nmessages)
    fprintf(f, "  %llu more not listed (past %u)\n", (unsigned long long)(m->messages_total - m->nmessages),
            MEM_MAX_MESSAGES);
  free(ix);
}

void mem_messages_json(strobe__json *j, const mem_report *m, const strobe_capture *c, double start_ns) {
  strobe__json_array(j, "messages");
  uint32_t *ix = messages_in_order(m);
  for (uint32_t i = 0; ix && i < m->nmessages; i++) {
    const mem_message *x = &m->messages[ix[i]];
    const strobe_capture_site *s = strobe_capture_query_site(c, x->site);
    strobe__json_object(j, NULL);
    strobe__json_num(j, "at_ns", x->time_ns - start_ns, 1);
    strobe__json_uint(j, "thread", x->thread);
    strobe__json_str(j, "text", s ? s->name : "");
    strobe__json_bool(j, "content", s && (s->flags & STROBE_SITE_INTERNED));
    strobe__json_end(j);
  }
  strobe__json_end(j);
  free(ix);
  strobe__json_uint(j, "messages_not_listed", m->messages_total - m->nmessages);
}
