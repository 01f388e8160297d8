/*
 * export_folded.c — folded stacks for flamegraph.pl, inferno and speedscope:
 * one line per distinct stack, "thread;outer;inner <self ns>", where the
 * number is the self time (duration minus direct children) of every
 * completed scope with that stack, summed and rounded to whole ns. Lines
 * with no self time are left out. ';' in names becomes ':' and line breaks
 * become spaces, so every line parses.
 *
 * Aggregated by stack in a path table (memory grows with distinct stacks,
 * never with events) and written at the end. Unfinished, lost and unwound
 * scopes (docs/recording.md, Unwinding) add nothing: they have no duration;
 * their completed children still count. With --from/--to (export.h
 * >>filters) a scope counts when it lies wholly inside the range; its stack
 * still names the scopes around it.
 */
#include <stdlib.h>

#include "export.h"
#include "analysis/pathtab.h"

#define MAX_DEPTH 256
#define ROOT_KEY 0x80000000u /* a thread's root node: site = ROOT_KEY | thread index */

typedef struct fthread {
  uint32_t root;
  uint32_t stack[MAX_DEPTH]; /* node of each open scope */
  double begin[MAX_DEPTH];   /* its BEGIN time, ns */
} fthread;

static void put_name(ob *o, const char *s) {
  for (; *s; s++) {
    char c = *s == ';' ? ':' : (*s == '\n' || *s == '\r') ? ' ' : *s;
    ob_ch(o, c);
  }
}

static void put_path(ob *o, const strobe_capture *c, const path_table *p, uint32_t id) {
  uint32_t chain[MAX_DEPTH + 1];
  int n = 0;
  for (uint32_t x = id; x != PATH_NONE && n <= MAX_DEPTH; x = p->n[x].parent) chain[n++] = x;
  for (int i = n - 1; i >= 0; i--) {
    const path_node *x = &p->n[chain[i]];
    if (x->site & ROOT_KEY) {
      char label[CLI_THREAD_LABEL_MAX];
      put_name(o, cli_thread_label(c, x->site & ~ROOT_KEY, label, sizeof label));
    } else {
      const strobe_capture_site *s = strobe_capture_query_site(c, x->site);
      ob_ch(o, ';');
      put_name(o, s ? s->name : "?");
    }
  }
}

int export_folded(cli_input *in, FILE *out, export_filter *f) {
  path_table p = {0};
  fthread **threads = NULL;
  uint32_t n_threads = 0;
  int failed = 0;
  strobe_capture_record r;
  xf_begin(f, in->cap);
  while (cli_next(in, &r) > 0) {
    if (r.type == STROBE_REC_THREAD && !xf_thread(f, in->cap, r.thread)) failed = 1;
    if (r.type != STROBE_REC_BEGIN && r.type != STROBE_REC_END) continue;
    if (!xf_thread_in(f, r.thread)) continue;
    if (r.depth < 1 || r.depth > MAX_DEPTH) continue;
    if (r.thread >= n_threads) {
      uint32_t n = n_threads ? n_threads : 16;
      while (n <= r.thread) n *= 2;
      fthread **q = realloc(threads, n * sizeof *q);
      if (!q) {
        failed = 1;
        break;
      }
      memset(q + n_threads, 0, (n - n_threads) * sizeof *q);
      threads = q;
      n_threads = n;
    }
    fthread *t = threads[r.thread];
    if (!t) {
      if (!(t = threads[r.thread] = malloc(sizeof *t))) {
        failed = 1;
        break;
      }
      t->root = path_node_of(&p, PATH_NONE, ROOT_KEY | r.thread);
    }
    if (r.type == STROBE_REC_BEGIN) {
      uint32_t parent = r.depth == 1 ? t->root : t->stack[r.depth - 2];
      t->stack[r.depth - 1] = parent == PATH_NONE ? PATH_NONE : path_node_of(&p, parent, r.site);
      t->begin[r.depth - 1] = r.time_ns;
    } else {
      uint32_t id = t->stack[r.depth - 1];
      if (id == PATH_NONE || r.unwound) continue;
      if (!xf_time_in(f, t->begin[r.depth - 1]) || !xf_time_in(f, r.time_ns)) {
        f->left_out++;
        continue;
      }
      p.n[id].count[0]++;
      p.n[id].total[0] += r.self_ns;
    }
  }
  int status = cli_finish_read(in);
  if (failed || p.failed) {
    cli_error(in->cmd, "out of memory: the export is incomplete");
    status = CLI_FAIL;
  }
  ob *o = malloc(sizeof *o);
  int wfail = 0;
  if (o) {
    *o = (ob){.f = out};
    for (uint32_t i = 0; i < p.len; i++) {
      int64_t self = round_i64(p.n[i].total[0]);
      if (!p.n[i].count[0] || self <= 0) continue;
      put_path(o, in->cap, &p, i);
      ob_room(o, 32);
      o->buf[o->len++] = ' ';
      ob_i64(o, self);
      o->buf[o->len++] = '\n';
    }
    ob_flush(o);
    wfail = o->failed;
    free(o);
  } else {
    status = CLI_FAIL;
  }
  for (uint32_t i = 0; i < n_threads; i++) free(threads[i]);
  free(threads);
  path_table_free(&p);
  return wfail ? CLI_OUTPUT : status;
}
