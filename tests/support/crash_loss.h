/*
 * crash_loss.h — how much recent data a kill -9 loses, shared by
 * tests/test_crash_loss.c (which checks the documented bound) and
 * bench/bench_crash_loss.c (which prints it as BENCH lines): a child process
 * records scopes into a capture file with strobe_record_start (the default
 * flush interval unless told) while `spinners` busy processes keep every CPU
 * busy; the parent kills it with SIGKILL after a varying time
 * (counted from the child's first event) and reads the file back. The loss
 * of one run is the newest event the child recorded (it publishes each
 * scope's end time, CLOCK_MONOTONIC, in memory shared with the parent)
 * minus the newest event in the file (its time mapped through the capture
 * header's epoch_mono_ns): data recorded and lost, so a child that the
 * machine did not run at all before the kill loses nothing for it. Bounded: `runs` kills of at most 400 ms
 * each.
 */
#ifndef STROBE_TESTS_CRASH_LOSS_H
#define STROBE_TESTS_CRASH_LOSS_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/strobe.h"
#include "support/fixtures.h"

typedef struct crash_loss {
  int runs;             /* kills measured on a machine loaded as specified */
  int failures;         /* runs that could not be measured (child or file trouble) */
  int disturbed;        /* kills not counted: the machine starved the witness (below) */
  double disturbed_max_ms; /* the largest loss among those */
  double witness_max_ms;   /* the witness's longest lateness before a counted kill */
  double max_ms, mean_ms, min_ms;
  uint32_t flush_ms;    /* the flush interval in force (from the capture header) */
  uint32_t drain_ms;    /* the drain interval in force */
} crash_loss;

/* A busy process in a session of its own (so in its own scheduling group,
 * like the other programs of a loaded machine), ended by the caller or, at
 * the latest, by its own alarm. Returns its pid, or -1. */
static pid_t crash_loss_spinner(unsigned max_s) {
  pid_t pid = fork();
  if (pid == 0) {
    setsid();
    alarm(max_s);
    volatile uint64_t x = 0;
    for (;;) x++;
  }
  return pid;
}

/* Shared with the child: when its first and its latest scope ended (CLOCK_MONOTONIC ns). */
typedef struct crash_loss_times {
  uint64_t first_ns, last_ns;
} crash_loss_times;

static void crash_loss_child(const char *path, uint32_t flush_ms, int ready_fd, crash_loss_times *t) {
  strobe_recorder *rec;
  if (strobe_record_start(&(strobe_record_desc){.path = path, .flush_interval_ms = flush_ms}, &rec)) _exit(2);
  {
    STROBE_SCOPE("unit");
  }
  t->first_ns = fx_now_ns();
  __atomic_store_n(&t->last_ns, t->first_ns, __ATOMIC_RELEASE);
  char c = 1; /* a first event exists: from now on, everything lost counts */
  if (write(ready_fd, &c, 1) != 1) _exit(3);
  for (;;) {
    {
      STROBE_SCOPE("unit");
      volatile uint32_t w = 0;
      for (int i = 0; i < 2000; i++) w += (uint32_t)i; /* a few microseconds of work per scope */
      (void)w;
    }
    __atomic_store_n(&t->last_ns, fx_now_ns(), __ATOMIC_RELAXED); /* this scope's END is recorded */
  }
}

#define CRASH_LOSS_UNMEASURED (-1e9)

/* One kill: returns the loss in ms, or CRASH_LOSS_UNMEASURED. */
static double crash_loss_once(const char *path, uint32_t flush_ms, int run_ms, uint32_t *flush_in_force) {
  crash_loss_times *t = mmap(NULL, sizeof *t, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (t == MAP_FAILED) return CRASH_LOSS_UNMEASURED;
  memset(t, 0, sizeof *t);
  int p[2];
  pid_t pid = pipe(p) == 0 ? fork() : -1;
  if (pid < 0) {
    munmap(t, sizeof *t);
    return CRASH_LOSS_UNMEASURED;
  }
  if (pid == 0) {
    close(p[0]);
    crash_loss_child(path, flush_ms, p[1], t);
  }
  close(p[1]);
  char c;
  ssize_t k = read(p[0], &c, 1);
  close(p[0]);
  if (k == 1) fx_sleep_ms((unsigned)run_ms);
  kill(pid, SIGKILL);
  int status;
  waitpid(pid, &status, 0);
  uint64_t last = __atomic_load_n(&t->last_ns, __ATOMIC_ACQUIRE), first = t->first_ns;
  munmap(t, sizeof *t);
  if (k != 1 || !last) return CRASH_LOSS_UNMEASURED;
  /* A file with no event (not even a header) lost everything since the first scope. */
  double newest_mono = (double)first;
  strobe_capture *cap;
  if (strobe_capture_open(path, &cap) == 0) {
    const strobe_capture_header *h = strobe_capture_query_header(cap);
    *flush_in_force = h->flush_interval_ms;
    strobe_capture_record r;
    double newest = -1;
    while (strobe_capture_next(cap, &r) > 0)
      if ((r.type == STROBE_REC_BEGIN || r.type == STROBE_REC_END) && r.time_ns > newest) newest = r.time_ns;
    if (newest >= 0) newest_mono = (double)h->epoch_mono_ns + newest;
    strobe_capture_close(cap);
  }
  return ((double)last - newest_mono) / 1e6;
}

/* The witness: a thread of the parent (in the child's scheduling group)
 * that sleeps 2 ms at a time and notes how late it wakes. A kill before
 * which it was kept from running for half the flush interval or more was
 * made on a machine loaded beyond this measurement's own load (other
 * programs): that kill is counted apart as disturbed, and replaced. */
#define CRASH_LOSS_WITNESS_RING 8192
static struct {
  pthread_mutex_t lock;
  uint64_t at_ns[CRASH_LOSS_WITNESS_RING], late_ns[CRASH_LOSS_WITNESS_RING];
  unsigned n;
  int run;
} crash_loss_witness = {PTHREAD_MUTEX_INITIALIZER, {0}, {0}, 0, 0};

static void *crash_loss_witness_main(void *arg) {
  (void)arg;
  while (__atomic_load_n(&crash_loss_witness.run, __ATOMIC_ACQUIRE)) {
    uint64_t t0 = fx_now_ns();
    fx_sleep_ms(2);
    uint64_t t1 = fx_now_ns(), late = t1 - t0 > 2000000u ? t1 - t0 - 2000000u : 0;
    pthread_mutex_lock(&crash_loss_witness.lock);
    unsigned i = crash_loss_witness.n++ % CRASH_LOSS_WITNESS_RING;
    crash_loss_witness.at_ns[i] = t1;
    crash_loss_witness.late_ns[i] = late;
    pthread_mutex_unlock(&crash_loss_witness.lock);
  }
  return NULL;
}

/* The witness's longest lateness among wake-ups in [from_ns, to_ns], in ms. */
static double crash_loss_witness_late(uint64_t from_ns, uint64_t to_ns) {
  uint64_t worst = 0;
  pthread_mutex_lock(&crash_loss_witness.lock);
  unsigned n = crash_loss_witness.n < CRASH_LOSS_WITNESS_RING ? crash_loss_witness.n : CRASH_LOSS_WITNESS_RING;
  for (unsigned i = 0; i < n; i++)
    if (crash_loss_witness.at_ns[i] >= from_ns && crash_loss_witness.at_ns[i] <= to_ns &&
        crash_loss_witness.late_ns[i] > worst)
      worst = crash_loss_witness.late_ns[i];
  pthread_mutex_unlock(&crash_loss_witness.lock);
  return (double)worst / 1e6;
}

/* `runs` kills with `spinners` busy processes; flush_ms 0 = the default
 * interval. Disturbed kills are replaced, up to 3 x runs attempts. */
static inline crash_loss crash_loss_measure(int runs, int spinners, uint32_t flush_ms) {
  crash_loss out = {0};
  out.min_ms = 1e300;
  out.drain_ms = strobe_query_desc().drain_interval_ms;
  pid_t spin[16];
  if (spinners > 16) spinners = 16;
  for (int i = 0; i < spinners; i++) spin[i] = crash_loss_spinner(120);
  pthread_t witness;
  __atomic_store_n(&crash_loss_witness.run, 1, __ATOMIC_RELEASE);
  int has_witness = pthread_create(&witness, NULL, crash_loss_witness_main, NULL) == 0;
  double sum = 0;
  for (int i = 0; out.runs < runs && i < 3 * runs; i++) {
    char path[64];
    if (fx_temp_file(path, sizeof path, "crashloss") != 0) {
      out.failures++;
      continue;
    }
    int run_ms = 150 + (i * 37) % 250; /* kills land at every phase of the flush cycle */
    double loss = crash_loss_once(path, flush_ms, run_ms, &out.flush_ms);
    uint64_t killed_ns = fx_now_ns();
    unlink(path);
    if (loss <= CRASH_LOSS_UNMEASURED) {
      out.failures++;
      continue;
    }
    if (loss < 0) loss = 0; /* the last event came after the kill was sent, before it landed */
    double interval = out.flush_ms ? (double)out.flush_ms : 100.0;
    double late = crash_loss_witness_late(killed_ns - (uint64_t)((interval + 100.0) * 1e6), killed_ns);
    if (!has_witness || late >= interval / 2) {
      out.disturbed++;
      if (loss > out.disturbed_max_ms) out.disturbed_max_ms = loss;
      continue;
    }
    if (late > out.witness_max_ms) out.witness_max_ms = late;
    out.runs++;
    sum += loss;
    if (loss > out.max_ms) out.max_ms = loss;
    if (loss < out.min_ms) out.min_ms = loss;
  }
  __atomic_store_n(&crash_loss_witness.run, 0, __ATOMIC_RELEASE);
  if (has_witness) pthread_join(witness, NULL);
  for (int i = 0; i < spinners; i++) {
    if (spin[i] <= 0) continue;
    kill(spin[i], SIGKILL);
    waitpid(spin[i], NULL, 0);
  }
  out.mean_ms = out.runs ? sum / out.runs : 0;
  if (!out.runs) out.min_ms = 0;
  return out;
}

#endif
