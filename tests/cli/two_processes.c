/*
 * two_processes.c — records two real captures in two processes of this host
 * for the `strobe merge` test (cli_test.py case merge; docs/sessions.md
 * §Across processes): process "screen" (DIR/a.strobe) begins frame 7, runs
 * the stage render and the scope marker_a, and hands the frame to process
 * "sender" over a pipe as an operation token; "sender" (DIR/b.strobe, its
 * library started 30 ms later, so the two captures' epochs differ) resumes
 * it, runs the stage present and the scope marker_b, and commits it. Each
 * writes the CLOCK_MONOTONIC nanoseconds at which its marker began to
 * DIR/a.mono and DIR/b.mono, and the CLOCK_MONOTONIC nanoseconds just before
 * and just after each call that timed the operation ("LO HI": the time it
 * took lies between) to DIR/a.begin (strobe_op_begin_frame), DIR/a.handed
 * (strobe_op_take and the hand-off), DIR/b.resumed (strobe_op_resume_remote)
 * and DIR/b.end (strobe_op_end): the viewer's test checks the frame it joins
 * from both halves against them (tests/browser/viewer_merge.test.mjs).
 * Then "screen" begins frame 8, runs render and hands it off to "sender"
 * too, but never sends it: a half that is never resumed (DIR/a.handed8).
 *
 * usage: two_processes DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strobe/record.h"
#include "strobe/session.h"
#include "support/fixtures.h"

static void write_mono(const char *dir, const char *name, uint64_t ns) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.mono", dir, name);
  FILE *f = fopen(path, "w");
  if (!f || fprintf(f, "%llu\n", (unsigned long long)ns) < 0 || fclose(f)) exit(10);
}

/* LO HI: the CLOCK_MONOTONIC ns just before and after a call. */
static void write_bracket(const char *dir, const char *name, uint64_t lo, uint64_t hi) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (!f || fprintf(f, "%llu %llu\n", (unsigned long long)lo, (unsigned long long)hi) < 0 || fclose(f)) exit(10);
}

static strobe_recorder *start(const char *dir, const char *file, strobe_collector **c, strobe_window *w,
                              const char *process) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  strobe_recorder *rec = NULL;
  strobe_thread_set_name("main");
  if (strobe_record_start(&(strobe_record_desc){.path = path}, &rec) || strobe_collector_create(c) ||
      strobe_collector_set_process(*c, process) || strobe_window_register(*c, "main", 0, w))
    exit(11);
  return rec;
}

static int screen(const char *dir, int out) {
  strobe_collector *c;
  strobe_window w;
  strobe_recorder *rec = start(dir, "a.strobe", &c, &w, "screen");
  uint64_t b0 = fx_now_ns();
  strobe_op op = strobe_op_begin_frame(c, w, 7, NULL);
  uint64_t b1 = fx_now_ns();
  if (strobe_op_set_population("scroll")) return 16; /* carried by the hand-off to the finisher's END */
  {
    STROBE_STAGE("render", NULL);
    fx_sleep_ms(3);
  }
  {
    uint64_t at = fx_now_ns(); /* the file is written after the scope began: under load its write took ms */
    STROBE_SCOPE("marker_a");
    write_mono(dir, "a", at);
    fx_sleep_ms(2);
  }
  uint8_t token[STROBE_OP_TOKEN_MAX];
  size_t len = 0;
  uint64_t h0 = fx_now_ns();
  if (strobe_op_hand_off_remote(strobe_op_take(), "sender", token, sizeof token, &len)) return 12;
  uint64_t h1 = fx_now_ns();
  write_bracket(dir, "a.begin", b0, b1);
  write_bracket(dir, "a.handed", h0, h1);
  uint32_t n = (uint32_t)len;
  if (write(out, &n, sizeof n) != (ssize_t)sizeof n || write(out, token, len) != (ssize_t)len) return 13;
  (void)op;
  /* Frame 8: handed off, never sent, so never resumed. */
  strobe_op lost = strobe_op_begin_frame(c, w, 8, NULL);
  if (strobe_op_set_population("fling")) return 16; /* on the origin's END alone */
  {
    STROBE_STAGE("render", NULL);
    fx_sleep_ms(1);
  }
  uint8_t unsent[STROBE_OP_TOKEN_MAX];
  h0 = fx_now_ns();
  if (strobe_op_hand_off_remote(strobe_op_take(), "sender", unsent, sizeof unsent, &len)) return 15;
  h1 = fx_now_ns();
  write_bracket(dir, "a.handed8", h0, h1);
  (void)lost;
  fx_sleep_ms(5);
  return strobe_record_stop(rec) ? 14 : 0;
}

static int sender(const char *dir, int in) {
  fx_sleep_ms(30); /* its clock's epoch 30 ms after screen's */
  strobe_collector *c;
  strobe_window w;
  strobe_recorder *rec = start(dir, "b.strobe", &c, &w, "sender");
  uint32_t n = 0;
  uint8_t token[STROBE_OP_TOKEN_MAX];
  if (read(in, &n, sizeof n) != (ssize_t)sizeof n || n > sizeof token || read(in, token, n) != (ssize_t)n) return 20;
  int st = 0;
  uint64_t r0 = fx_now_ns();
  strobe_op op = strobe_op_resume_remote(c, w, token, n, &st);
  uint64_t r1 = fx_now_ns();
  if (st) return 21;
  {
    STROBE_STAGE("present", NULL);
    fx_sleep_ms(4);
  }
  {
    uint64_t at = fx_now_ns();
    STROBE_SCOPE("marker_b");
    write_mono(dir, "b", at);
    fx_sleep_ms(2);
  }
  uint64_t e0 = fx_now_ns();
  strobe_op_end(op, 1);
  uint64_t e1 = fx_now_ns();
  write_bracket(dir, "b.resumed", r0, r1);
  write_bracket(dir, "b.end", e0, e1);
  return strobe_record_stop(rec) ? 22 : 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: two_processes DIR\n");
    return 2;
  }
  int p[2];
  if (pipe(p)) return 3;
  pid_t a = fork();
  if (a == 0) {
    close(p[0]);
    _exit(screen(argv[1], p[1]));
  }
  pid_t b = fork();
  if (b == 0) {
    close(p[1]);
    _exit(sender(argv[1], p[0]));
  }
  close(p[0]);
  close(p[1]);
  int sa = 0, sb = 0;
  waitpid(a, &sa, 0);
  waitpid(b, &sb, 0);
  if (!WIFEXITED(sa) || WEXITSTATUS(sa) || !WIFEXITED(sb) || WEXITSTATUS(sb)) {
    fprintf(stderr, "two_processes: screen exited %d, sender %d\n", WEXITSTATUS(sa), WEXITSTATUS(sb));
    return 1;
  }
  return 0;
}
