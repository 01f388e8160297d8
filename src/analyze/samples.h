/*
 * samples.h — what a capture's sampler records say (docs/exploration.md
 * §Sampling), for `strobe report` and the viewer's model: each function's
 * sample counts, self (the leaf frame) and inclusive (anywhere in the stack,
 * once per sample), and each OS thread's off-CPU intervals from its context
 * switches, so a scope's wall time splits into on-CPU and off-CPU where the
 * switches cover it.
 *
 * Memory is bounded: at most STROBE__OFFCPU_MAX_INTERVALS intervals are
 * kept in all (the rest counted in intervals_cut, and the threads they
 * belong to no longer count as covered past the cut) and
 * STROBE__OFFCPU_MAX_THREADS threads told apart (records of others counted
 * in threads_cut).
 */
#ifndef STROBE_ANALYZE_SAMPLES_H
#define STROBE_ANALYZE_SAMPLES_H

#include <stdint.h>

#include "strobe/capture.h"

#define STROBE__OFFCPU_MAX_INTERVALS (1u << 22) /* 64 MiB at most */
#define STROBE__OFFCPU_MAX_THREADS 4096u

typedef struct strobe__func_count {
  uint64_t self;      /* samples with this function as the leaf */
  uint64_t inclusive; /* samples with it anywhere in the stack (once per sample) */
} strobe__func_count;

typedef struct strobe__offcpu_thread {
  uint64_t tid;
  uint64_t first, last;   /* ticks of its first and last sampler record: what the records cover */
  uint64_t out_at;        /* ticks of a SWITCH out not yet matched by its SWITCH in */
  int out;                /* 1 between an out and its in */
  int out_preempted;      /* that out was a preemption (still runnable) */
  uint64_t *iv;           /* off-CPU intervals [iv[2k], iv[2k+1]), in time order; bit 0 of the start set when
                           * the thread was preempted (runnable, waiting for a CPU), clear when it blocked */
  uint32_t n, cap;        /* intervals */
  uint64_t cut_at;        /* 0, or the ticks from which its intervals were cut (not covered after) */
} strobe__offcpu_thread;

typedef struct strobe__samples {
  strobe__func_count *funcs; /* by function id */
  uint32_t n_funcs;
  uint64_t samples, switches;
  uint64_t unknown_frames;   /* frames whose function id the capture did not define (never, from a reader) */
  strobe__offcpu_thread *threads;
  uint32_t n_threads, cap_threads;
  uint64_t intervals, intervals_cut, threads_cut;
  int failed;                /* out of memory: figures are incomplete */
} strobe__samples;

/* Feeds one record (only SAMPLE and SWITCH ones are used). */
STROBE_API void strobe__samples_add(strobe__samples *s, const strobe_capture_record *r);
STROBE_API void strobe__samples_free(strobe__samples *s);
/* Off-CPU ticks of OS thread `tid` between begin and end (ticks): in all
 * (*off), and of them while it was blocked (*blocked: asleep, waiting for a
 * lock or I/O; the rest it was preempted, runnable but without a CPU).
 * Returns 1 when its context switches cover that range (the capture
 * recorded switches, `switches_on`, and the range lies between the thread's
 * first sampler record and its last, or `until` when that is later: the
 * capture's end when the sampler still ran then, since a thread that kept
 * its CPU writes no switch), 0 when there is no data (both are then 0).
 * `blocked` may be NULL. Pure. */
int strobe__samples_off_cpu(const strobe__samples *s, int switches_on, uint64_t until, uint64_t tid, uint64_t begin,
                            uint64_t end, uint64_t *off, uint64_t *blocked);
/* The range of ticks [*from, *to] OS thread `tid`'s context switches cover (the rule strobe__samples_off_cpu
 * states): 1, or 0 when they cover nothing (switches off, no such thread). For consumers that split many
 * intervals themselves (the viewer's tooltips) with the same rule. */
STROBE_API int strobe__samples_cover(const strobe__samples *s, int switches_on, uint64_t until, uint64_t tid,
                                     uint64_t *from, uint64_t *to);
/* Where OS thread `tid` was at `at` (ticks; the capture's end for a frame still running): *state 0 on its CPU,
 * 1 blocked, 2 preempted, since *since (ticks: its last switch, or its first sampler record). Returns 1 when its
 * switches cover `at` (as strobe__samples_off_cpu's rule), 0 when there is no data (*state and *since then 0). */
int strobe__samples_state_at(const strobe__samples *s, int switches_on, uint64_t until, uint64_t tid, uint64_t at,
                             int *state, uint64_t *since);
/* Function ids with samples, sorted by self (then inclusive) count descending
 * when by_self, else by inclusive; *n gets their number. Caller frees. */
uint32_t *strobe__samples_top(const strobe__samples *s, int by_self, uint32_t *n);

#endif
