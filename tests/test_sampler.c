/*
 * test_sampler.c — the sampler (include/strobe/sample.h,
 * docs/exploration.md §Sampling): a thread spinning in a known function
 * gives samples whose leaf is that function and whose next frame is its
 * caller, named from the symbol tables, attributed to the thread by its OS
 * id; a scope around a sleep is off its CPU for about the sleep and a busy
 * scope on it throughout (analyze/samples.c, what `strobe report` splits);
 * a kernel that refuses perf events (a seccomp filter in a child process)
 * gives STROBE_EPERM or STROBE_EFEATURE_DISABLED with the reason, and a
 * capture recorded afterwards is unchanged, without samples; bad arguments
 * change nothing; what the drain hands its consumers is what the capture
 * reads back, record for record (time, kind, flags, every frame's name).
 * Each case reads its capture back.
 *
 * STROBE_TEST_LABELS: sampler
 */
#include <dirent.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyze/samples.h"
#include "collect/collect.h"
#include "strobe/capture.h"
#include "strobe/flight.h"
#include "strobe/gpu.h"
#include "strobe/record.h"
#include "strobe/sample.h"
#include "support/fixtures.h"
#include "support/harness.h"

/* >>workload: a leaf that spins, called by a parent, both out of line. */
static volatile uint64_t g_sink;

static uint64_t cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Spins for `ns` of the thread's CPU time: the sampler's clock, whatever the machine's load. */
__attribute__((noinline)) void sampler_test_leaf(uint64_t ns) {
  uint64_t end = cpu_ns() + ns, x = 1;
  while (cpu_ns() < end)
    for (int i = 0; i < 1000; i++) x = x * 6364136223846793005ull + 1442695040888963407ull;
  g_sink = x;
}

__attribute__((noinline)) void sampler_test_parent(uint64_t ns) {
  sampler_test_leaf(ns);
  __asm__ volatile("" ::: "memory"); /* keeps the call from becoming a tail jump */
}

typedef struct worker {
  uint64_t tid;
  uint64_t busy_ns;
} worker;

static void *spin_thread(void *arg) {
  worker *w = arg;
  w->tid = (uint64_t)syscall(SYS_gettid);
  strobe_thread_set_name("spinner");
  STROBE_SCOPE("spin");
  sampler_test_parent(w->busy_ns);
  return NULL;
}

/* >>reading */
typedef struct seen {
  strobe_capture_totals totals;
  uint64_t samples_of_tid, leaf_hits, parent_hits, samples_thread_ok;
  uint64_t samples_all, switches;
} seen;

static void read_capture(const char *path, uint64_t tid, uint32_t thread_index_of_tid, seen *s) {
  memset(s, 0, sizeof *s);
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  strobe_capture_record r;
  int rc;
  while ((rc = strobe_capture_next(cap, &r)) > 0) {
    if (r.type == STROBE_REC_SWITCH) s->switches++;
    if (r.type != STROBE_REC_SAMPLE) continue;
    s->samples_all++;
    if (r.sample->os_tid != tid) continue;
    s->samples_of_tid++;
    if (r.thread == thread_index_of_tid) s->samples_thread_ok++;
    if (r.sample->nframes < 2) continue;
    const strobe_capture_function *leaf = strobe_capture_query_function(cap, r.sample->frames[0]);
    const strobe_capture_function *up = strobe_capture_query_function(cap, r.sample->frames[1]);
    REQUIRE(leaf && up);
    if (!strcmp(leaf->name, "sampler_test_leaf")) {
      s->leaf_hits++;
      if (!strcmp(up->name, "sampler_test_parent")) s->parent_hits++;
    }
  }
  CHECK_EQ_INT(rc, 0);
  s->totals = strobe_capture_query_totals(cap);
  strobe_capture_close(cap);
}

static uint32_t thread_index(const char *path, const char *name) {
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  strobe_capture_record r;
  while (strobe_capture_next(cap, &r) > 0) {}
  uint32_t found = STROBE_CAPTURE_NO_THREAD;
  for (uint32_t i = 0; i < strobe_capture_query_thread_count(cap); i++) {
    const strobe_capture_thread *t = strobe_capture_query_thread(cap, i);
    if (t && !strcmp(t->name, name)) found = i;
  }
  strobe_capture_close(cap);
  return found;
}

/* >>cases */
static void test_samples_name_the_hot_function(void) {
  char path[64];
  REQUIRE(fx_temp_file(path, sizeof path, "sampler") == 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  REQUIRE_EQ_INT(strobe_sampler_start(&(strobe_sampler_desc){.rate_hz = 1000}), 0);
  strobe_sampler_status st = strobe_sampler_query_status();
  CHECK_EQ_INT(st.running, 1);
  CHECK_EQ_INT(st.rate_hz, 1000);
  CHECK_EQ_INT(strobe_sampler_start(NULL), STROBE_EBUSY);
  /* Created after the start: sampled by inheritance. 300 ms of CPU at 1 kHz is ~300 samples. */
  worker w = {0, 300000000ull};
  pthread_t th;
  REQUIRE(pthread_create(&th, NULL, spin_thread, &w) == 0);
  pthread_join(th, NULL);
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
  REQUIRE_EQ_INT(strobe_sampler_stop(), 0);
  CHECK_EQ_INT(strobe_sampler_stop(), STROBE_ESTATE);

  seen s;
  read_capture(path, w.tid, thread_index(path, "spinner"), &s);
  /* At least half the expected samples, even on a loaded machine (CPU time is what is sampled). */
  CHECKF(s.samples_of_tid >= 150, "%llu samples of the spinning thread", (unsigned long long)s.samples_of_tid);
  CHECKF(s.leaf_hits * 10 >= s.samples_of_tid * 8, "%llu of %llu samples in the leaf", (unsigned long long)s.leaf_hits,
         (unsigned long long)s.samples_of_tid);
  CHECKF(s.parent_hits * 10 >= s.leaf_hits * 9, "%llu of %llu leaf samples called from the parent",
         (unsigned long long)s.parent_hits, (unsigned long long)s.leaf_hits);
  CHECK_EQ_U64(s.samples_thread_ok, s.samples_of_tid);
  CHECK_EQ_U64(s.totals.samples, s.samples_all);
  CHECK_EQ_INT(s.totals.sample_rate_hz, 1000);
  CHECK_EQ_INT(s.totals.sample_switches, 1);
  CHECK(s.totals.samples_written >= s.samples_of_tid);
  CHECK_EQ_U64(s.totals.samples_lost, 0);
  remove(path);
}

/* A scope around a 200 ms sleep: off its CPU, blocked, for about that; a
 * busy scope of 100 ms of CPU: never blocked (on a loaded machine it may be
 * preempted: off its CPU but runnable, which the split tells apart). */
typedef struct split_run {
  uint64_t tid;
  uint64_t sleep_begin, sleep_end, busy_begin, busy_end; /* strobe ticks */
} split_run;

static void *split_thread(void *arg) {
  split_run *r = arg;
  r->tid = (uint64_t)syscall(SYS_gettid);
  sampler_test_leaf(20000000ull); /* samples before the scopes: the records cover them */
  r->sleep_begin = strobe_clock_now();
  {
    STROBE_SCOPE("sleeping");
    struct timespec ts = {0, 200000000L};
    nanosleep(&ts, NULL);
  }
  r->sleep_end = strobe_clock_now();
  r->busy_begin = strobe_clock_now();
  {
    STROBE_SCOPE("busy");
    sampler_test_leaf(100000000ull);
  }
  r->busy_end = strobe_clock_now();
  sampler_test_leaf(20000000ull); /* and after them */
  return NULL;
}

static void test_switches_split_on_and_off_cpu(void) {
  char path[64];
  REQUIRE(fx_temp_file(path, sizeof path, "switches") == 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_sampler_start(&(strobe_sampler_desc){.rate_hz = 997}), 0);
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  split_run run = {0};
  pthread_t th;
  REQUIRE(pthread_create(&th, NULL, split_thread, &run) == 0);
  pthread_join(th, NULL);
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
  REQUIRE_EQ_INT(strobe_sampler_stop(), 0);

  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  strobe__samples smp = {0};
  strobe_capture_record r;
  while (strobe_capture_next(cap, &r) > 0) strobe__samples_add(&smp, &r);
  strobe_capture_totals t = strobe_capture_query_totals(cap);
  CHECK_EQ_INT(t.sample_switches, 1);
  CHECK(t.switches >= 2);
  double ns_per_tick = strobe_capture_query_header(cap)->ns_per_tick;
  uint64_t off = 0, blocked = 0;
  REQUIRE_EQ_INT(
      strobe__samples_off_cpu(&smp, t.sample_switches, 0, run.tid, run.sleep_begin, run.sleep_end, &off, &blocked), 1);
  double sleep_ns = (double)(run.sleep_end - run.sleep_begin) * ns_per_tick;
  CHECKF((double)blocked * ns_per_tick >= 0.9 * 200e6 && off <= run.sleep_end - run.sleep_begin,
         "sleeping scope: %.1f ms blocked, %.1f ms off-CPU of %.1f ms", (double)blocked * ns_per_tick / 1e6,
         (double)off * ns_per_tick / 1e6, sleep_ns / 1e6);
  REQUIRE_EQ_INT(
      strobe__samples_off_cpu(&smp, t.sample_switches, 0, run.tid, run.busy_begin, run.busy_end, &off, &blocked), 1);
  double busy_ns = (double)(run.busy_end - run.busy_begin) * ns_per_tick;
  CHECKF((double)blocked * ns_per_tick <= 0.05 * busy_ns && off < run.busy_end - run.busy_begin,
         "busy scope: %.1f ms blocked, %.1f ms off-CPU of %.1f ms", (double)blocked * ns_per_tick / 1e6,
         (double)off * ns_per_tick / 1e6, busy_ns / 1e6);
  /* Without switches recorded there is no split. */
  CHECK_EQ_INT(strobe__samples_off_cpu(&smp, 0, 0, run.tid, run.sleep_begin, run.sleep_end, &off, &blocked), 0);
  strobe__samples_free(&smp);
  strobe_capture_close(cap);
  remove(path);
}

/* A child whose seccomp filter answers perf_event_open with `err`: the start
 * fails with `expect`, says why, changes nothing, and a capture recorded
 * after it reads back without samples. Exit status 0 when all holds. */
static int refused_child(int err, int expect) {
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_perf_event_open, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (uint32_t)err),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {(unsigned short)(sizeof filter / sizeof filter[0]), filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) return 10;
  if (strobe_sampler_start(NULL) != expect) return 11;
  strobe_sampler_status st = strobe_sampler_query_status();
  if (st.running || st.error != expect || st.os_errno != err || !st.reason || !st.reason[0]) return 12;
  if (strobe_sampler_stop() != STROBE_ESTATE) return 13;
  char path[64];
  if (fx_temp_file(path, sizeof path, "refused")) return 14;
  strobe_recorder *rec;
  if (strobe_record_start(&(strobe_record_desc){.path = path}, &rec)) return 15;
  for (int i = 0; i < 10; i++) {
    STROBE_SCOPE("after_refusal");
    sampler_test_leaf(1000000);
  }
  if (strobe_record_stop(rec)) return 16;
  strobe_capture *cap;
  if (strobe_capture_open(path, &cap)) return 17;
  strobe_capture_record r;
  uint64_t scopes = 0, samples = 0;
  int rc;
  while ((rc = strobe_capture_next(cap, &r)) > 0) {
    scopes += r.type == STROBE_REC_END;
    samples += r.type == STROBE_REC_SAMPLE || r.type == STROBE_REC_SWITCH;
  }
  strobe_capture_totals t = strobe_capture_query_totals(cap);
  strobe_capture_close(cap);
  remove(path);
  if (rc != 0 || scopes != 10 || samples != 0 || t.sample_rate_hz != 0 || t.samples_written != 0) return 18;
  return 0;
}

static void refused(int err, int expect) {
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) _exit(refused_child(err, expect));
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECKF(WEXITSTATUS(status) == 0, "child failed at step %d", WEXITSTATUS(status));
}

static void test_refused_by_seccomp_eacces(void) { refused(EACCES, STROBE_EPERM); }
static void test_refused_by_seccomp_enosys(void) { refused(ENOSYS, STROBE_EFEATURE_DISABLED); }

static void test_bad_arguments_change_nothing(void) {
  CHECK_EQ_INT(strobe_sampler_start(&(strobe_sampler_desc){.rate_hz = STROBE_SAMPLE_MAX_HZ + 1}), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_sampler_start(&(strobe_sampler_desc){.no_switches = 2}), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_sampler_query_status().running, 0);
  CHECK_EQ_INT(strobe_sampler_stop(), STROBE_ESTATE);
}

/* >>exact: a consumer beside the recorder keeps, per OS thread, one line per
 * record the drain delivered; the capture must read back the same lines. */
#define TAP_THREADS 64
typedef struct tap_line {
  uint64_t tid;
  char *text;
  size_t len, cap;
} tap_line;
static tap_line g_tap[TAP_THREADS], g_back[TAP_THREADS];

static void tap_add(tap_line *t, uint64_t tid, const char *line) {
  int i = 0;
  while (i < TAP_THREADS && t[i].text && t[i].tid != tid) i++;
  REQUIRE(i < TAP_THREADS);
  t[i].tid = tid;
  size_t n = strlen(line);
  if (t[i].len + n + 1 > t[i].cap) {
    t[i].cap = (t[i].len + n + 1) * 2;
    t[i].text = realloc(t[i].text, t[i].cap);
    REQUIRE(t[i].text);
  }
  memcpy(t[i].text + t[i].len, line, n + 1);
  t[i].len += n;
}

static void line_of(char *buf, size_t cap, uint64_t ticks, uint32_t kind, uint32_t flags) {
  snprintf(buf, cap, "%llu %u %u", (unsigned long long)ticks, kind, flags);
}

static void tap_samples(void *ctx, const strobe__cpu_sample *s, size_t n, const uint32_t *frames) {
  (void)ctx;
  for (size_t i = 0; i < n; i++) {
    char line[8192];
    line_of(line, sizeof line, s[i].ticks, s[i].kind, s[i].flags);
    for (uint32_t k = 0; k < s[i].nframes; k++) {
      const char *name = "", *module = "";
      strobe__sample_function(frames[s[i].frame0 + k], &name, &module);
      size_t l = strlen(line);
      snprintf(line + l, sizeof line - l, " %s", name);
    }
    tap_add(g_tap, s[i].tid, line);
    tap_add(g_tap, s[i].tid, "\n");
  }
}
static void nop_site(void *ctx, uint32_t id, const strobe_site *s) { (void)ctx, (void)id, (void)s; }
static void nop_label(void *ctx, uint32_t id, const char *t) { (void)ctx, (void)id, (void)t; }
static void nop_thread(void *ctx, uint32_t i, uint64_t tid, const char *n, uint64_t l) {
  (void)ctx, (void)i, (void)tid, (void)n, (void)l;
}
static void nop_lost(void *ctx, uint32_t i, uint64_t l) { (void)ctx, (void)i, (void)l; }
static void nop_events(void *ctx, uint32_t i, const strobe__event *e, size_t n) { (void)ctx, (void)i, (void)e, (void)n; }
static void nop_end(void *ctx, uint32_t i) { (void)ctx, (void)i; }
static void nop_tick(void *ctx, uint64_t now) { (void)ctx, (void)now; }

static void test_capture_reads_back_exactly(void) {
  char path[64];
  REQUIRE(fx_temp_file(path, sizeof path, "exact") == 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  strobe__consumer tap = {NULL,    nop_site, nop_label, nop_thread, nop_lost, nop_events,
                          nop_end, nop_tick, NULL,      tap_samples, NULL, NULL};
  REQUIRE_EQ_INT(strobe__consumer_add(&tap), 0);
  /* Both consumers are there before the first record and until the last: they get the same ones. */
  REQUIRE_EQ_INT(strobe_sampler_start(&(strobe_sampler_desc){.rate_hz = 2000}), 0);
  split_run run = {0};
  pthread_t th;
  REQUIRE(pthread_create(&th, NULL, split_thread, &run) == 0);
  pthread_join(th, NULL);
  REQUIRE_EQ_INT(strobe_sampler_stop(), 0);
  strobe__consumer_remove(&tap); /* its final pass hands both every record the stop read */
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);

  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  strobe_capture_record r;
  int rc;
  uint64_t records = 0;
  while ((rc = strobe_capture_next(cap, &r)) > 0) {
    if (!r.sample) continue;
    records++;
    uint32_t kind = r.type == STROBE_REC_SAMPLE ? STROBE__SAMPLE_CPU
                    : r.sample->out             ? STROBE__SAMPLE_SWITCH_OUT
                                                : STROBE__SAMPLE_SWITCH_IN;
    uint32_t flags = (r.sample->cut ? STROBE__SAMPLE_CUT : 0u) | (r.sample->preempted ? STROBE__SAMPLE_PREEMPTED : 0u);
    char line[8192];
    line_of(line, sizeof line, r.ticks, kind, flags);
    for (uint32_t k = 0; k < r.sample->nframes; k++) {
      size_t l = strlen(line);
      snprintf(line + l, sizeof line - l, " %s", strobe_capture_query_function(cap, r.sample->frames[k])->name);
    }
    tap_add(g_back, r.sample->os_tid, line);
    tap_add(g_back, r.sample->os_tid, "\n");
  }
  CHECK_EQ_INT(rc, 0);
  CHECK(records > 100);
  int threads = 0;
  for (int i = 0; i < TAP_THREADS && g_tap[i].text; i++) {
    threads++;
    int j = 0;
    while (j < TAP_THREADS && g_back[j].text && g_back[j].tid != g_tap[i].tid) j++;
    REQUIRE(j < TAP_THREADS && g_back[j].text);
    CHECKF(g_tap[i].len == g_back[j].len && !memcmp(g_tap[i].text, g_back[j].text, g_tap[i].len),
           "thread %llu: %zu bytes delivered, %zu read back", (unsigned long long)g_tap[i].tid, g_tap[i].len,
           g_back[j].len);
  }
  for (int j = 0; j < TAP_THREADS && g_back[j].text; j++) threads--;
  CHECK_EQ_INT(threads, 0); /* no thread read back that was not delivered */
  for (int i = 0; i < TAP_THREADS; i++) free(g_tap[i].text), free(g_back[i].text);
  strobe_capture_close(cap);
  remove(path);
}

/* A flight-recorder dump carries the samples its ring kept, every function
 * they name defined (a reader refuses a frame naming an undefined one), and
 * the sampler's rate. */
static void test_flight_recorder_dump_has_samples(void) {
  char path[64];
  REQUIRE(fx_temp_file(path, sizeof path, "flight") == 0);
  strobe_flight_recorder *fr;
  REQUIRE_EQ_INT(strobe_flight_recorder_start(&(strobe_flight_recorder_desc){.max_mib = 8}, &fr), 0);
  REQUIRE_EQ_INT(strobe_sampler_start(&(strobe_sampler_desc){.rate_hz = 1000}), 0);
  worker w = {0, 200000000ull};
  pthread_t th;
  REQUIRE(pthread_create(&th, NULL, spin_thread, &w) == 0);
  pthread_join(th, NULL);
  REQUIRE_EQ_INT(strobe_flight_recorder_dump(fr, path), 0);
  REQUIRE_EQ_INT(strobe_sampler_stop(), 0);
  REQUIRE_EQ_INT(strobe_flight_recorder_stop(fr), 0);
  seen s;
  read_capture(path, w.tid, thread_index(path, "spinner"), &s);
  CHECKF(s.samples_of_tid >= 100, "%llu samples of the spinning thread in the dump", (unsigned long long)s.samples_of_tid);
  CHECKF(s.leaf_hits * 10 >= s.samples_of_tid * 8, "%llu of %llu samples in the leaf", (unsigned long long)s.leaf_hits,
         (unsigned long long)s.samples_of_tid);
  CHECK_EQ_INT(s.totals.sample_rate_hz, 1000);
  remove(path);
}

/* A child process (fork) is not sampled into the parent's buffers, and in
 * the child the sampler is not running (its events and buffers are the
 * parent's). */
static void test_child_process_not_sampled(void) {
  char path[64];
  REQUIRE(fx_temp_file(path, sizeof path, "child") == 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  REQUIRE_EQ_INT(strobe_sampler_start(&(strobe_sampler_desc){.rate_hz = 1000}), 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int running = strobe_sampler_query_status().running;
    sampler_test_leaf(200000000ull);
    _exit(running ? 1 : 0);
  }
  sampler_test_leaf(50000000ull); /* the parent is sampled meanwhile */
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the sampler runs in the child (status %d)", status);
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
  REQUIRE_EQ_INT(strobe_sampler_stop(), 0);
  seen s;
  read_capture(path, (uint64_t)pid, STROBE_CAPTURE_NO_THREAD, &s);
  CHECKF(s.samples_of_tid == 0, "%llu samples of the child process", (unsigned long long)s.samples_of_tid);
  CHECKF(s.samples_all >= 25, "%llu samples of the parent", (unsigned long long)s.samples_all);
  remove(path);
}

/* >>quiet: Strobe's drain thread is sampled but its switches are not
 * recorded (it records no scope, and switches at every pass), whether it
 * existed when the sampler started (its events are opened without switch
 * records) or began after (it inherited them: its records are dropped as
 * they are read); the scopes' thread's switches still are. The drain thread
 * is the one recording adds to this case's process. */
static uint32_t task_ids(uint64_t *tids, uint32_t max) {
  uint32_t n = 0;
  DIR *d = opendir("/proc/self/task");
  REQUIRE(d != NULL);
  for (struct dirent *e; (e = readdir(d)) != NULL && n < max;)
    if (e->d_name[0] >= '0' && e->d_name[0] <= '9') tids[n++] = strtoull(e->d_name, NULL, 10);
  closedir(d);
  return n;
}

static void *no_op_thread(void *arg) { return arg; }

static void drain_switches_not_recorded(int sampler_first) {
  /* A sanitizer runtime may start a helper thread at the first
   * pthread_create (ThreadSanitizer does): start one first, so that the only
   * thread recording adds is the drain. */
  pthread_t warm;
  REQUIRE(pthread_create(&warm, NULL, no_op_thread, NULL) == 0);
  pthread_join(warm, NULL);
  uint64_t before[8], after[8];
  uint32_t nb = task_ids(before, 8);
  char path[64];
  REQUIRE(fx_temp_file(path, sizeof path, "quiet") == 0);
  strobe_recorder *rec;
  if (sampler_first) REQUIRE_EQ_INT(strobe_sampler_start(&(strobe_sampler_desc){.rate_hz = 997}), 0);
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  uint32_t na = task_ids(after, 8);
  uint64_t drain = 0;
  for (uint32_t i = 0; i < na; i++) {
    int old = 0;
    for (uint32_t k = 0; k < nb; k++) old |= after[i] == before[k];
    if (!old) drain = after[i];
  }
  REQUIRE(na == nb + 1 && drain != 0); /* the drain thread, begun by the first recording */
  /* The drain thread marks itself first thing: given time, its events open without switch records. */
  if (!sampler_first) fx_sleep_ms(100);
  if (!sampler_first) REQUIRE_EQ_INT(strobe_sampler_start(&(strobe_sampler_desc){.rate_hz = 997}), 0);
  split_run run = {0};
  pthread_t th;
  REQUIRE(pthread_create(&th, NULL, split_thread, &run) == 0); /* 200 ms asleep: the drain passes ~100 times */
  pthread_join(th, NULL);
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
  REQUIRE_EQ_INT(strobe_sampler_stop(), 0);
  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  strobe_capture_record r;
  uint64_t drain_switches = 0, scope_switches = 0;
  while (strobe_capture_next(cap, &r) > 0) {
    if (r.type != STROBE_REC_SWITCH) continue;
    drain_switches += r.sample->os_tid == drain;
    scope_switches += r.sample->os_tid == run.tid;
  }
  strobe_capture_close(cap);
  remove(path);
  CHECK_EQ_U64(drain_switches, 0);
  CHECK(scope_switches >= 2); /* out and back in around its sleep, at least */
}

static void test_drain_switches_not_recorded(void) { drain_switches_not_recorded(0); }
static void test_drain_switches_not_recorded_sampler_first(void) { drain_switches_not_recorded(1); }

#define CASES(X)                           \
  X(drain_switches_not_recorded)          \
  X(drain_switches_not_recorded_sampler_first) \
  X(samples_name_the_hot_function)        \
  X(switches_split_on_and_off_cpu)        \
  X(refused_by_seccomp_eacces)            \
  X(refused_by_seccomp_enosys)            \
  X(bad_arguments_change_nothing)         \
  X(capture_reads_back_exactly)           \
  X(flight_recorder_dump_has_samples)     \
  X(child_process_not_sampled)
HARNESS_MAIN(CASES)
