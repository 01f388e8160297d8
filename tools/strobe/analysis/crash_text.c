/*
 * crash_text.c — how `strobe info` and `strobe report` say where a process
 * died (a capture's CRASH block, docs/capture-format.md §CRASH): one
 * sentence, "crashed: SIGSEGV on thread ui in pass 394 › layout_compute",
 * then each thread's open scopes; and the same as a JSON object.
 *
 * Owns: the wording. Must never: say more than the block holds (an unknown
 * thread or operation is said to be unknown, never guessed).
 */
#include <stdio.h>

#include "cli.h"
#include "format/json_writer.h"

void cli_crash_text(FILE *f, const char *label, const strobe_capture *c) {
  const strobe_capture_crash *k = strobe_capture_query_crash(c);
  if (!k) return;
  char buf[512];
  fprintf(f, "%s%s (%.3f ms after the collector epoch)\n", label, strobe_capture_crash_text(k, buf, sizeof buf), k->time_ns / 1e6);
  for (uint32_t i = 0; i < k->nthreads; i++) {
    const strobe_capture_crash_thread *t = &k->threads[i];
    fprintf(f, "  thread %u %s: ", t->index, t->name[0] ? t->name : "(unnamed)");
    if (!t->nscopes) fputs("no open scope", f);
    if (t->scopes_cut) fprintf(f, "(%u further out) \xe2\x80\xba ", t->scopes_cut);
    for (uint32_t s = 0; s < t->nscopes; s++) fprintf(f, "%s%s", s ? " \xe2\x80\xba " : "", t->scopes[s]);
    fputc('\n', f);
  }
  if (k->threads_cut) fprintf(f, "  %u more threads not described\n", k->threads_cut);
}

void cli_crash_json(struct strobe__json *j, const strobe_capture *c) {
  const strobe_capture_crash *k = strobe_capture_query_crash(c);
  if (!k) {
    strobe__json_null(j, "crash");
    return;
  }
  char buf[512];
  strobe__json_object(j, "crash");
  strobe__json_str(j, "message", strobe_capture_crash_text(k, buf, sizeof buf));
  strobe__json_str(j, "signal", k->signal_name);
  strobe__json_num(j, "time_ns", k->time_ns, 0);
  if (k->fault_thread_known) {
    strobe__json_uint(j, "thread", k->fault_thread);
    strobe__json_str(j, "thread_name", k->fault_thread_name);
  } else {
    strobe__json_null(j, "thread");
    strobe__json_null(j, "thread_name");
  }
  if (k->op_kind) {
    strobe__json_object(j, "operation");
    strobe__json_str(j, "kind", k->op_kind);
    strobe__json_uint(j, "frame_id", k->frame_id);
    if (k->stage[0]) strobe__json_str(j, "stage", k->stage);
    else strobe__json_null(j, "stage");
    strobe__json_end(j);
  } else {
    strobe__json_null(j, "operation");
  }
  strobe__json_array(j, "threads");
  for (uint32_t i = 0; i < k->nthreads; i++) {
    const strobe_capture_crash_thread *t = &k->threads[i];
    strobe__json_object(j, NULL);
    strobe__json_uint(j, "index", t->index);
    strobe__json_str(j, "name", t->name);
    strobe__json_uint(j, "scopes_cut", t->scopes_cut);
    strobe__json_array(j, "open_scopes");
    for (uint32_t s = 0; s < t->nscopes; s++) strobe__json_str(j, NULL, t->scopes[s]);
    strobe__json_end(j);
    strobe__json_end(j);
  }
  strobe__json_end(j);
  strobe__json_uint(j, "threads_cut", k->threads_cut);
  strobe__json_end(j);
}
