/*
 * bench_journal.c — what the crash journal costs (docs/recording.md §Crash
 * journal): 4 threads × 2,000,000 scopes with a value each while a capture
 * file records, once with the journal (the default) and once with
 * strobe_record_desc.no_journal, each in its own child process:
 *
 *   journal_pages_per_thread     4 KiB pages of the journal file per journaled thread (its state and ring,
 *                                allocated when the thread attaches: the ring's 4 MiB and about 10 KiB)
 *   journal_regions              journaled threads (the 4 producers and the drain thread's own gauges)
 *   journal_file_mib             the journal file's allocated size then
 *   drain_ns_per_event_journal   the drain's CPU time per event it drained (the capture's DRAIN block)
 *   drain_ns_per_event_no_journal the same without the journal
 *   drain_journal_ratio          the two, divided: what the journal adds to the drain (converting a copy, a
 *                                flush and a JOURNAL_POS block every pass that delivered events)
 *   capture_bytes_journal_ratio  the capture's size with the journal over without (smaller, more frequent blocks)
 *
 * Usage: bench_journal [scopes-per-thread]. Budgets are printed, never asserted.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "floor.h"
#include "probe/probe.h"
#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/strobe.h"

#define THREADS 4

typedef struct result {
  double drain_ns_per_event;
  double journal_bytes;  /* allocated (st_blocks) once the threads ran */
  double region_pages;   /* the largest region of the journal's directory: one thread's state and ring */
  uint32_t regions;      /* regions in use */
  double capture_bytes;
  int ok;
} result;

static uint64_t g_scopes = 2000000;
static int g_started;

static void *producer(void *arg) {
  (void)arg;
  __atomic_fetch_add(&g_started, 1, __ATOMIC_RELEASE);
  for (uint64_t i = 0; i < g_scopes; i++) {
    STROBE_SCOPE("bench_unit");
    STROBE_VALUE("i", i);
  }
  return NULL;
}

/* Reads the journal's directory (src/probe/probe.h >>journal): how many regions, and the largest. */
static void journal_regions(const char *jpath, result *out) {
  FILE *f = fopen(jpath, "rb");
  strobe__journal_head *h = malloc(sizeof *h);
  if (f && h && fread(h, sizeof *h, 1, f) == 1 && h->regions <= STROBE__JOURNAL_REGIONS) {
    out->regions = h->regions;
    for (uint32_t i = 0; i < h->regions; i++)
      if ((double)h->region[i].size / 4096.0 > out->region_pages) out->region_pages = (double)h->region[i].size / 4096.0;
  }
  free(h);
  if (f) fclose(f);
}

static void child(const char *path, int no_journal, result *out) {
  if (strobe_setup(&(strobe_desc){.overflow = STROBE_OVERFLOW_WAIT})) _exit(2);
  strobe_recorder *rec;
  if (strobe_record_start(&(strobe_record_desc){.path = path, .no_journal = no_journal}, &rec)) _exit(3);
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, producer, NULL);
  while (__atomic_load_n(&g_started, __ATOMIC_ACQUIRE) < THREADS) usleep(100);
  char jpath[256];
  snprintf(jpath, sizeof jpath, "%s.journal", path);
  struct stat st;
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  out->journal_bytes = stat(jpath, &st) == 0 ? (double)st.st_blocks * 512.0 : 0.0;
  journal_regions(jpath, out);
  if (strobe_record_stop(rec)) _exit(4);
  strobe_capture *cap;
  if (strobe_capture_open(path, &cap)) _exit(5);
  strobe_capture_record r;
  while (strobe_capture_next(cap, &r) > 0) {
  }
  strobe_capture_totals t = strobe_capture_query_totals(cap);
  out->drain_ns_per_event = t.drain_events ? (double)t.drain_cpu_ns / (double)t.drain_events : 0.0;
  strobe_capture_close(cap);
  out->capture_bytes = stat(path, &st) == 0 ? (double)st.st_size : 0.0;
  out->ok = 1;
  _exit(0);
}

static result run(int no_journal) {
  result *shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  result res = {0};
  if (shared == MAP_FAILED) return res;
  char path[] = "/tmp/strobe-bench-journal-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return res;
  close(fd);
  pid_t pid = fork();
  if (pid == 0) child(path, no_journal, shared);
  int status;
  waitpid(pid, &status, 0);
  res = *shared;
  munmap(shared, sizeof *shared);
  unlink(path);
  return res;
}

int main(int argc, char **argv) {
  if (argc > 1) g_scopes = strtoull(argv[1], NULL, 10);
  result on = run(0), off = run(1);
  if (!on.ok || !off.ok) {
    fprintf(stderr, "bench_journal: a run failed\n");
    return 1;
  }
  printf("BENCH journal_pages_per_thread %.0f pages\n", on.region_pages);
  printf("BENCH journal_regions %u threads (the 4 producers and the drain thread, which records its footprint gauges)\n",
         on.regions);
  printf("BENCH journal_file_mib %.1f MiB\n", on.journal_bytes / 1048576.0);
  printf("BENCH drain_ns_per_event_journal %.2f ns\n", on.drain_ns_per_event);
  printf("BENCH drain_ns_per_event_no_journal %.2f ns\n", off.drain_ns_per_event);
  printf("BENCH drain_journal_ratio %.3f x\n", on.drain_ns_per_event / off.drain_ns_per_event);
  printf("BENCH capture_bytes_journal_ratio %.3f x\n", on.capture_bytes / off.capture_bytes);
  bench_budget_le("drain_journal_ratio", on.drain_ns_per_event / off.drain_ns_per_event, 1.5);
  return 0;
}
