/*
 * test_flight_recorder.c — the flight recorder (include/strobe/flight.h):
 *
 *   desc      defaults are resolved and queryable, junk is rejected;
 *   roundtrip a dump is a complete capture the reader accepts: sites and
 *             named threads defined, every scope there exactly, each thread's
 *             events in time order, footer present;
 *   size      recording far more than the ring (1 MiB) keeps retained_bytes
 *             within it and resident memory flat, and a dump whose oldest
 *             BEGINs were evicted reads back with orphan ENDs counted;
 *   age       events older than max_age_ms are gone from the ring and dumps;
 *   spike     a burst of slow frames within the cooldown writes exactly one
 *             file holding the frames before the spike and the spike; one
 *             after the cooldown writes a second file; frame marks, post_ms,
 *             note() and a spike pending at stop work the same way;
 *   errors    a dump to an unwritable path or a full device fails with
 *             STROBE_EIO and the recorder keeps recording; so does a spike
 *             into a missing directory (counted in the stats);
 *   pinned    a dump stuck writing (a FIFO nobody reads) pins the ring: new
 *             blocks are refused and counted, never waited for, and the
 *             thread whose blocks were refused is resynced with a LOST marker
 *             so later dumps still nest correctly.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "support/case_files.h"
#include "support/harness.h"
#include "collect/collect.h" /* strobe__drain_now */
#include "strobe/capture.h"
#include "strobe/flight.h"
#include "strobe/strobe.h"

/* >>helpers */

/* A path for a capture that does not exist yet, in a directory of the case's
 * own (removed with it when the case ends). */
static void temp_path(char *buf, size_t n, const char *what) {
  snprintf(buf, n, "%s/%s.strobe", case_temp_dir("flight"), what);
}

/* What a capture holds, as the reader returns it. */
#define MAX_ENDS 4096
typedef struct summary {
  int rc;                        /* last strobe_capture_next result */
  strobe_capture_header header;
  strobe_capture_totals totals;
  uint64_t ends_named;           /* END records of site `name` */
  uint64_t ends_other;           /* END records of other sites */
  uint64_t frames;               /* FRAME records of site `name` */
  uint64_t lost_records;         /* LOST records */
  uint32_t max_depth;            /* deepest END */
  int bad_depth;                 /* an END of `name` at a depth other than `name_depth` (when set) */
  int disordered;                /* a thread's times went backwards */
  uint64_t first_ticks;          /* of the first timed record */
  uint32_t nend;                 /* END records of `name` kept below */
  double end_time[MAX_ENDS], end_dur[MAX_ENDS]; /* ns */
  uint32_t nframe;
  double frame_time[MAX_ENDS];   /* ns */
  uint64_t frame_ticks[MAX_ENDS];
  int has_site_named;            /* `name` is defined */
  char thread_names[4][64];      /* the first four threads' names */
  uint32_t nthreads;
} summary;

static void summarize(strobe_capture *c, const char *name, uint32_t name_depth, summary *s) {
  memset(s, 0, sizeof *s);
  s->header = *strobe_capture_query_header(c);
  uint64_t last[64] = {0};
  strobe_capture_record r;
  while ((s->rc = strobe_capture_next(c, &r)) > 0) {
    if (r.type >= STROBE_REC_BEGIN && r.type != STROBE_REC_THREAD_END && r.type != STROBE_REC_VALUE &&
        r.type != STROBE_REC_CUMULATIVE && r.ticks) {
      if (r.thread < 64) {
        if (last[r.thread] && r.ticks < last[r.thread]) s->disordered = 1;
        last[r.thread] = r.ticks;
      }
      if (!s->first_ticks) s->first_ticks = r.ticks;
    }
    const strobe_capture_site *site = r.site ? strobe_capture_query_site(c, r.site) : NULL;
    int named = site && name && !strcmp(site->name, name);
    if (r.type == STROBE_REC_END) {
      if (r.depth > s->max_depth) s->max_depth = r.depth;
      if (named) {
        s->ends_named++;
        if (name_depth && r.depth != name_depth) s->bad_depth = 1;
        if (s->nend < MAX_ENDS) {
          s->end_time[s->nend] = r.time_ns;
          s->end_dur[s->nend++] = r.duration_ns;
        }
      } else {
        s->ends_other++;
      }
    } else if (r.type == STROBE_REC_FRAME && named) {
      s->frames++;
      if (s->nframe < MAX_ENDS) {
        s->frame_ticks[s->nframe] = r.ticks;
        s->frame_time[s->nframe++] = r.time_ns;
      }
    } else if (r.type == STROBE_REC_LOST) {
      s->lost_records++;
    }
  }
  s->totals = strobe_capture_query_totals(c);
  for (uint32_t id = 1; id < strobe_capture_query_site_limit(c); id++) {
    const strobe_capture_site *site = strobe_capture_query_site(c, id);
    if (site && name && !strcmp(site->name, name)) s->has_site_named = 1;
  }
  s->nthreads = strobe_capture_query_thread_count(c);
  for (uint32_t i = 0, k = 0; i < s->nthreads && k < 4; i++) {
    const strobe_capture_thread *t = strobe_capture_query_thread(c, i);
    if (t) snprintf(s->thread_names[k++], sizeof s->thread_names[0], "%s", t->name);
  }
}

static void read_file(const char *path, const char *name, uint32_t name_depth, summary *s) {
  strobe_capture *c = NULL;
  REQUIRE_EQ_INT(strobe_capture_open(path, &c), 0);
  summarize(c, name, name_depth, s);
  strobe_capture_close(c);
}

static int has_thread_named(const summary *s, const char *name) {
  for (int i = 0; i < 4; i++)
    if (!strcmp(s->thread_names[i], name)) return 1;
  return 0;
}

/* Files in `dir`, and how many of them are finished spike captures. */
static int count_files(const char *dir, int *spikes) {
  DIR *d = opendir(dir);
  REQUIRE(d != NULL);
  int all = 0;
  *spikes = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    all++;
    unsigned long long ms, seq;
    char tail[16] = "";
    if (sscanf(e->d_name, "spike-%llu-%llu%15s", &ms, &seq, tail) == 3 && !strcmp(tail, ".strobe")) (*spikes)++;
  }
  closedir(d);
  return all;
}

/* Waits up to 10 s for the recorder's stats to satisfy `cond`. */
#define WAIT_FOR(fr, st, cond)                                             \
  do {                                                                     \
    double wait_t0_ = fx_now_ms();                                         \
    for (;;) {                                                             \
      st = strobe_flight_recorder_query_stats(fr);                               \
      if (cond) break;                                                     \
      REQUIRE(fx_now_ms() - wait_t0_ < 10000);                               \
      fx_sleep_ms(5);                                                         \
    }                                                                      \
  } while (0)

/* >>desc */
static void test_desc(void) {
  strobe_flight_recorder_desc d = strobe_flight_recorder_query_desc(NULL);
  CHECK_EQ_INT(d.max_mib, 64);
  CHECK_EQ_INT(d.max_age_ms, 10000);
  CHECK_EQ_INT(d.flush_interval_ms, 100);
  CHECK_EQ_INT(d.compression_level, 1);
  CHECK_EQ_INT(d.cooldown_ms, 10000);
  CHECK_EQ_INT(d.post_ms, 0);
  CHECK_EQ_INT(d.max_spike_files, 100);
  CHECK(d.spike_threshold_ms == 0.0);
  CHECK(!strcmp(d.spike_site, "frame"));

  strobe_flight_recorder *fr = (strobe_flight_recorder *)1;
  CHECK_EQ_INT(strobe_flight_recorder_start(NULL, NULL), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_flight_recorder_start(&(strobe_flight_recorder_desc){.max_mib = 5000}, &fr), STROBE_EINVAL);
  CHECK(fr == NULL);
  CHECK_EQ_INT(strobe_flight_recorder_start(&(strobe_flight_recorder_desc){.compression_level = 20}, &fr),
               STROBE_EINVAL);
  CHECK_EQ_INT(strobe_flight_recorder_start(&(strobe_flight_recorder_desc){.flush_interval_ms = 60001}, &fr),
               STROBE_EINVAL);
  /* A trigger needs a directory; a threshold must be a sane number. */
  CHECK_EQ_INT(strobe_flight_recorder_start(&(strobe_flight_recorder_desc){.spike_threshold_ms = 16}, &fr),
               STROBE_EINVAL);
  CHECK_EQ_INT(strobe_flight_recorder_start(
                   &(strobe_flight_recorder_desc){.spike_threshold_ms = -1, .spike_dir = "/tmp"}, &fr),
               STROBE_EINVAL);
  volatile double zero = 0.0;
  CHECK_EQ_INT(strobe_flight_recorder_start(
                   &(strobe_flight_recorder_desc){.spike_threshold_ms = zero / zero, .spike_dir = "/tmp"}, &fr),
               STROBE_EINVAL);
  CHECK_EQ_INT(strobe_flight_recorder_start(
                   &(strobe_flight_recorder_desc){.spike_threshold_ms = 16, .spike_dir = "/tmp", .post_ms = 60001},
                   &fr),
               STROBE_EINVAL);
  char long_dir[1000];
  memset(long_dir, 'a', sizeof long_dir - 1);
  long_dir[sizeof long_dir - 1] = 0;
  CHECK_EQ_INT(strobe_flight_recorder_start(
                   &(strobe_flight_recorder_desc){.spike_threshold_ms = 16, .spike_dir = long_dir}, &fr),
               STROBE_EINVAL);
  CHECK(fr == NULL);

  /* No trigger: notes are refused; the resolved desc is what start used. */
  REQUIRE_EQ_INT(strobe_flight_recorder_start(&(strobe_flight_recorder_desc){.max_mib = 2}, &fr), 0);
  d = strobe_flight_recorder_query_desc(fr);
  CHECK_EQ_INT(d.max_mib, 2);
  CHECK_EQ_INT(d.max_age_ms, 10000);
  CHECK_EQ_INT(strobe_flight_recorder_note(fr, 1000000000ull), STROBE_ESTATE);
  strobe_flight_recorder_stats st = strobe_flight_recorder_query_stats(fr);
  CHECK_EQ_U64(st.capacity_bytes, 2u << 20);
  CHECK_EQ_INT(strobe_flight_recorder_dump(fr, NULL), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_flight_recorder_stop(fr), 0);
  CHECK_EQ_INT(strobe_flight_recorder_stop(NULL), 0);
  st = strobe_flight_recorder_query_stats(NULL);
  CHECK_EQ_U64(st.capacity_bytes, 0);
}

/* >>roundtrip */
#define RT_OUTER 200
#define RT_INNER 100

static void *roundtrip_thread(void *arg) {
  strobe_thread_set_name((const char *)arg);
  for (int i = 0; i < RT_OUTER; i++) {
    STROBE_SCOPE("rt_outer");
    STROBE_COUNTER_ADD("rt_counter", 1);
    for (int j = 0; j < RT_INNER; j++) {
      STROBE_SCOPE("rt_inner");
      STROBE_VALUE("rt_value", j);
    }
    STROBE_FRAME_MARK();
  }
  return NULL;
}

static void test_roundtrip(void) {
  strobe_flight_recorder *fr;
  REQUIRE_EQ_INT(strobe_flight_recorder_start(&(strobe_flight_recorder_desc){.max_mib = 8}, &fr), 0);
  uint64_t lost0 = strobe_query_event_stats().events_lost;
  pthread_t th[2];
  static const char *const names[2] = {"fr_alpha", "fr_beta"};
  for (int i = 0; i < 2; i++) REQUIRE(pthread_create(&th[i], NULL, roundtrip_thread, (void *)names[i]) == 0);
  for (int i = 0; i < 2; i++) CHECK(pthread_join(th[i], NULL) == 0);
  uint64_t lost = strobe_query_event_stats().events_lost - lost0;

  char path[256];
  temp_path(path, sizeof path, "roundtrip");
  REQUIRE_EQ_INT(strobe_flight_recorder_dump(fr, path), 0);
  strobe_flight_recorder_stats st = strobe_flight_recorder_query_stats(fr);
  CHECK_EQ_U64(st.dumps_written, 1);
  CHECK(st.retained_blocks > 0);
  CHECK(st.retained_bytes > 0 && st.retained_bytes <= st.capacity_bytes);
  /* per outer: BEGIN, COUNTER, 100 x (BEGIN, VALUE, END), END, FRAME */
  if (st.retained_events < (uint64_t)2 * RT_OUTER * (RT_INNER * 3 + 4) - lost)
    fprintf(stderr, "retained_events %llu, blocks %llu, lost %llu\n", (unsigned long long)st.retained_events,
            (unsigned long long)st.retained_blocks, (unsigned long long)lost);
  CHECK(st.retained_events >= (uint64_t)2 * RT_OUTER * (RT_INNER * 3 + 4) - lost);

  summary s;
  read_file(path, "rt_inner", 2, &s);
  CHECK_EQ_INT(s.rc, 0);
  CHECK(!strcmp(s.header.kind, "flight-recorder"));
  CHECK(s.header.start_ticks != 0 && s.header.start_ticks <= s.first_ticks);
  CHECK_EQ_INT(s.totals.footer, 1);
  CHECK_EQ_INT(s.totals.cut_short, 0);
  CHECK(s.has_site_named);
  CHECK(has_thread_named(&s, "fr_alpha"));
  CHECK(has_thread_named(&s, "fr_beta"));
  CHECK_EQ_INT(s.disordered, 0);
  CHECK_EQ_INT(s.bad_depth, 0);
  CHECK_EQ_U64(s.totals.orphan_ends, 0);
  CHECK(s.totals.end_ticks >= s.first_ticks);
  if (lost == 0) { /* nothing was evicted or dropped: every scope is there */
    CHECK_EQ_U64(s.ends_named, 2u * RT_OUTER * RT_INNER);
    CHECK_EQ_U64(s.ends_other, 2u * RT_OUTER);
    CHECK_EQ_U64(s.totals.unfinished, 0);
    CHECK_EQ_U64(s.totals.lost, 0);
  }
  /* The same recorder dumps again, and the second dump holds at least as much. */
  char path2[256];
  temp_path(path2, sizeof path2, "roundtrip2");
  REQUIRE_EQ_INT(strobe_flight_recorder_dump(fr, path2), 0);
  summary s2;
  read_file(path2, "rt_inner", 2, &s2);
  CHECK_EQ_INT(s2.rc, 0);
  CHECK(s2.ends_named == s.ends_named);
  CHECK_EQ_INT(strobe_flight_recorder_stop(fr), 0);
  unlink(path);
  unlink(path2);
  printf("roundtrip: %llu inner scopes read back, %llu lost by the rings\n", (unsigned long long)s.ends_named,
         (unsigned long long)lost);
}

/* >>size */
/* Scopes carrying random numbers: zstd cannot squeeze them, so the ring
 * really fills (a plain scope loop compresses to a fraction of a byte). */
static void burst(uint64_t n) {
  static uint64_t x = 0x9E3779B97F4A7C15ull;
  for (uint64_t i = 0; i < n; i++) {
    STROBE_SCOPE("size_inner");
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    STROBE_VALUE("size_value", (double)(x >> 11));
  }
}

static void test_size_bound(void) {
  strobe_flight_recorder *fr;
  CHECK_EQ_INT(strobe_flight_recorder_start(&(strobe_flight_recorder_desc){.max_mib = 1, .flush_interval_ms = 20},
                                            &fr),
               0);
  uint64_t lost0 = strobe_query_event_stats().events_lost;
  long rss_warm = 0;
  uint64_t max_retained = 0;
  {
    STROBE_SCOPE("size_outer"); /* its BEGIN is evicted long before its END */
    /* 1.2M scopes, ~15 MB encoded, in rounds the drain keeps up with. */
    for (int r = 0; r < 60; r++) {
      burst(20000);
      fx_sleep_ms(2);
      strobe_flight_recorder_stats st = strobe_flight_recorder_query_stats(fr);
      CHECK_EQ_U64(st.capacity_bytes, 1u << 20);
      CHECK(st.retained_bytes <= st.capacity_bytes);
      if (st.retained_bytes > max_retained) max_retained = st.retained_bytes;
      if (r == 10) rss_warm = fx_rss_bytes();
    }
  }
  long rss_end = fx_rss_bytes();
  uint64_t lost = strobe_query_event_stats().events_lost - lost0;
  strobe_flight_recorder_stats st = strobe_flight_recorder_query_stats(fr);
  CHECK(st.evicted_blocks > 0);
  CHECK(st.retained_bytes <= st.capacity_bytes);
  CHECK(max_retained > st.capacity_bytes / 2); /* it did fill up */
  CHECK_EQ_U64(st.dropped_blocks, 0);          /* no dump was running */
#ifndef STROBE_TEST_SANITIZED
  /* 1M scopes after the warm-up: the ring was allocated at start, so the
   * process grows by no more than allocator noise. */
  CHECK(rss_end - rss_warm < (1l << 20));
#endif

  char path[256];
  temp_path(path, sizeof path, "size");
  REQUIRE_EQ_INT(strobe_flight_recorder_dump(fr, path), 0);
  struct stat sb;
  CHECK(stat(path, &sb) == 0);
  CHECK((uint64_t)sb.st_size <= st.capacity_bytes + (64u << 10)); /* the ring plus metadata */
  summary s;
  read_file(path, "size_outer", 1, &s);
  CHECK_EQ_INT(s.rc, 0);
  CHECK_EQ_INT(s.totals.footer, 1);
  CHECK(s.ends_other > 10000);
  CHECK_EQ_INT(s.disordered, 0);
  CHECK_EQ_U64(s.ends_named, 0);
  /* size_outer's END, whose BEGIN was evicted, is an orphan. (When the
   * thread's ring overflowed, a LOST marker's absolute depth can make the
   * reader pair that END with a stale inner scope instead.) */
  if (lost == 0) CHECK(s.totals.orphan_ends >= 1);
  CHECK_EQ_INT(strobe_flight_recorder_stop(fr), 0);
  unlink(path);
  printf("size bound: retained %llu of %llu bytes, %llu blocks evicted, dump %lld bytes, rss %ld -> %ld, "
         "%llu orphan ends, %llu events lost by the rings\n",
         (unsigned long long)st.retained_bytes, (unsigned long long)st.capacity_bytes,
         (unsigned long long)st.evicted_blocks, (long long)sb.st_size, rss_warm, rss_end,
         (unsigned long long)s.totals.orphan_ends, (unsigned long long)lost);
}

/* >>age */
static void test_age_bound(void) {
  strobe_flight_recorder *fr;
  CHECK_EQ_INT(strobe_flight_recorder_start(
                   &(strobe_flight_recorder_desc){.max_mib = 4, .max_age_ms = 300, .flush_interval_ms = 20}, &fr),
               0);
  for (int i = 0; i < 10000; i++) {
    STROBE_SCOPE("age_old");
  }
  fx_sleep_ms(900); /* three times the bound: every block of age_old is older than 300 ms */
  strobe_flight_recorder_stats st = strobe_flight_recorder_query_stats(fr);
  CHECK_EQ_U64(st.retained_events, 0);
  CHECK(st.evicted_blocks > 0);
  for (int i = 0; i < 1000; i++) {
    STROBE_SCOPE("age_new");
  }
  char path[256];
  temp_path(path, sizeof path, "age");
  REQUIRE_EQ_INT(strobe_flight_recorder_dump(fr, path), 0);
  st = strobe_flight_recorder_query_stats(fr);
  CHECK(st.retained_events >= 2000);
  CHECK(st.retained_seconds < 0.3 + 0.1);
  summary s;
  read_file(path, "age_new", 1, &s);
  CHECK_EQ_INT(s.rc, 0);
  CHECK_EQ_U64(s.ends_named, 1000);
  CHECK_EQ_U64(s.ends_other, 0); /* no age_old */
  CHECK_EQ_U64(s.totals.orphan_ends, 0);
  CHECK_EQ_INT(strobe_flight_recorder_stop(fr), 0);
  unlink(path);
}

/* >>spike */
static void frame_fast(void) {
  STROBE_SCOPE("tick");
  for (int i = 0; i < 10; i++) {
    STROBE_SCOPE("tick_work");
  }
}

static void frame_slow(unsigned ms) {
  STROBE_SCOPE("tick");
  STROBE_SCOPE("tick_work");
  fx_sleep_ms(ms);
}

/* A spike directory of the case's own, removed with its dumps when the case ends. */
static void make_dir(char *dir, size_t n, const char *what) {
  snprintf(dir, n, "%s", case_temp_dir(what));
}

static void test_spike_scope(void) {
  char dir[256];
  make_dir(dir, sizeof dir, "spike");
  strobe_flight_recorder *fr;
  CHECK_EQ_INT(strobe_flight_recorder_start(&(strobe_flight_recorder_desc){.max_mib = 4,
                                                                           .spike_threshold_ms = 30,
                                                                           .spike_site = "tick",
                                                                           .spike_dir = dir,
                                                                           .cooldown_ms = 1000},
                                            &fr),
               0);
  for (int i = 0; i < 20; i++) frame_fast();
  /* A burst of slow frames, all within the cooldown (1 s: a loaded machine
   * stretches each 60 ms sleep, at times by hundreds of ms). */
  frame_slow(60);
  double t_first = fx_now_ms(); /* after the first spike's end, the cooldown's start */
  for (int i = 0; i < 2; i++) frame_slow(60);
  for (int i = 0; i < 5; i++) frame_fast();
  strobe_flight_recorder_stats st;
  WAIT_FOR(fr, st, st.spikes_dumped >= 1);
  while (fx_now_ms() - t_first < 1000 + 300) fx_sleep_ms(10); /* past the cooldown, and time for a wrong second dump */
  st = strobe_flight_recorder_query_stats(fr);
  CHECK_EQ_U64(st.spikes_seen, 3);
  CHECK_EQ_U64(st.spikes_dumped, 1);
  CHECK_EQ_U64(st.spikes_suppressed, 2);
  CHECK_EQ_U64(st.dumps_written, 1);
  CHECK(st.last_spike_ms >= 60.0);
  int spikes;
  CHECK_EQ_INT(count_files(dir, &spikes), 1);
  CHECK_EQ_INT(spikes, 1);
  CHECK(strncmp(st.last_spike_path, dir, strlen(dir)) == 0);

  /* The file holds the spike and the frames before it. */
  char first[STROBE_FLIGHT_PATH_MAX];
  memcpy(first, st.last_spike_path, sizeof first);
  summary s;
  read_file(first, "tick", 1, &s);
  CHECK_EQ_INT(s.rc, 0);
  CHECK_EQ_INT(s.totals.footer, 1);
  CHECK(s.nend >= 21);
  uint32_t slow = 0, fast_before = 0;
  double first_slow_time = -1;
  for (uint32_t i = 0; i < s.nend; i++) {
    if (s.end_dur[i] >= 30e6) {
      if (!slow++) first_slow_time = s.end_time[i];
    }
  }
  CHECK(slow >= 1);
  for (uint32_t i = 0; i < s.nend; i++)
    if (s.end_dur[i] < 30e6 && s.end_time[i] < first_slow_time) fast_before++;
  CHECK_EQ_INT(fast_before, 20);

  /* After the cooldown, one more slow frame: a second file. */
  frame_slow(60);
  WAIT_FOR(fr, st, st.spikes_dumped >= 2);
  CHECK_EQ_INT(count_files(dir, &spikes), 2);
  CHECK_EQ_INT(spikes, 2);
  CHECK(strcmp(st.last_spike_path, first) != 0);
  read_file(st.last_spike_path, "tick", 1, &s);
  CHECK_EQ_INT(s.rc, 0);
  CHECK_EQ_INT(s.nend, 20 + 3 + 5 + 1); /* every frame so far: nothing was evicted */
  CHECK_EQ_INT(strobe_flight_recorder_stop(fr), 0);
}

static void test_spike_frames(void) {
  char dir[256];
  make_dir(dir, sizeof dir, "frames");
  strobe_flight_recorder *fr;
  /* Default site "frame": STROBE_FRAME_MARK, timed mark to mark; post_ms
   * keeps the frames after the spike too. */
  CHECK_EQ_INT(strobe_flight_recorder_start(&(strobe_flight_recorder_desc){.max_mib = 4,
                                                                           .spike_threshold_ms = 30,
                                                                           .spike_dir = dir,
                                                                           .post_ms = 50},
                                            &fr),
               0);
  for (int i = 0; i < 10; i++) {
    STROBE_SCOPE("mark_work");
    STROBE_FRAME_MARK();
  }
  fx_sleep_ms(60); /* the slow frame */
  STROBE_FRAME_MARK();
  /* Frames after the spike, past post_ms; the tick read after each mark is
   * no earlier than the mark itself. */
  static uint64_t after[1024];
  uint32_t nafter = 0;
  double t0 = fx_now_ms();
  while (fx_now_ms() - t0 < 150 && nafter < 1024) {
    STROBE_FRAME_MARK();
    after[nafter++] = strobe__now();
    fx_sleep_ms(2);
  }
  strobe_flight_recorder_stats st;
  WAIT_FOR(fr, st, st.spikes_dumped >= 1);
  CHECK(st.spikes_seen >= 1); /* a loaded machine may stretch another frame too: cooldown */
  summary s;
  read_file(st.last_spike_path, "frame", 0, &s);
  CHECK_EQ_INT(s.rc, 0);
  CHECK(s.nframe >= 11);
  /* The 10 frames, the gap, and every frame marked within post_ms after it:
   * the dump is taken only once those were drained. */
  uint32_t gap = 0;
  for (uint32_t i = 1; i < s.nframe && !gap; i++)
    if (s.frame_time[i] - s.frame_time[i - 1] >= 30e6) gap = i;
  CHECK(gap >= 10);
  uint64_t post = (uint64_t)(50e6 / s.header.ns_per_tick);
  CHECK(s.totals.end_ticks >= s.frame_ticks[gap] + post);
  uint32_t expected = 0;
  for (uint32_t i = 0; i < nafter; i++) expected += after[i] <= s.frame_ticks[gap] + post;
  CHECK(s.nframe - 1 - gap >= expected);
  printf("spike frames: %u frames before the spike, %u after it in the file (%u marked within post_ms)\n", gap,
         s.nframe - 1 - gap, expected);
  CHECK_EQ_INT(strobe_flight_recorder_stop(fr), 0);
}

/* note(): a duration the application measured; a spike pending at stop is
 * written by stop. */
static void test_note_and_stop(void) {
  char dir[256];
  make_dir(dir, sizeof dir, "note");
  strobe_flight_recorder *fr;
  CHECK_EQ_INT(strobe_flight_recorder_start(&(strobe_flight_recorder_desc){.max_mib = 2,
                                                                           .spike_threshold_ms = 10,
                                                                           .spike_dir = dir,
                                                                           .post_ms = 60000},
                                            &fr),
               0);
  for (int i = 0; i < 100; i++) {
    STROBE_SCOPE("note_work");
  }
  CHECK_EQ_INT(strobe_flight_recorder_note(fr, 5000000), 0);  /* 5 ms: under the threshold */
  CHECK_EQ_INT(strobe_flight_recorder_note(fr, 50000000), 1); /* 50 ms: a spike, dump pending */
  CHECK_EQ_INT(strobe_flight_recorder_note(fr, 50000000), 0); /* pending already: counted only */
  strobe_flight_recorder_stats st = strobe_flight_recorder_query_stats(fr);
  CHECK_EQ_U64(st.spikes_seen, 2);
  CHECK_EQ_U64(st.spikes_dumped, 0);
  CHECK_EQ_INT(strobe_flight_recorder_stop(fr), 0); /* writes it without waiting 60 s */
  int spikes;
  CHECK_EQ_INT(count_files(dir, &spikes), 1);
  CHECK_EQ_INT(spikes, 1);
  DIR *d = opendir(dir);
  struct dirent *e;
  char p[1200] = "";
  while ((e = readdir(d)) != NULL)
    if (e->d_name[0] != '.') snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
  closedir(d);
  summary s;
  read_file(p, "note_work", 1, &s);
  CHECK_EQ_INT(s.rc, 0);
  CHECK_EQ_U64(s.ends_named, 100);
}

/* >>errors */
static void test_errors(void) {
  strobe_flight_recorder *fr;
  CHECK_EQ_INT(strobe_flight_recorder_start(&(strobe_flight_recorder_desc){.max_mib = 2,
                                                                           .spike_threshold_ms = 5,
                                                                           .spike_site = "err_frame",
                                                                           .spike_dir = "/nonexistent-strobe-dir"},
                                            &fr),
               0);
  for (int i = 0; i < 1000; i++) {
    STROBE_SCOPE("err_work");
  }
  CHECK_EQ_INT(strobe_flight_recorder_dump(fr, "/nonexistent-strobe-dir/x.strobe"), STROBE_EIO);
  if (access("/dev/full", W_OK) == 0) {
    CHECK_EQ_INT(strobe_flight_recorder_dump(fr, "/dev/full"), STROBE_EIO);
    struct stat sb;
    CHECK(stat("/dev/full", &sb) == 0); /* never unlinked */
  }
  {
    STROBE_SCOPE("err_frame");
    fx_sleep_ms(20);
  }
  strobe_flight_recorder_stats st;
  WAIT_FOR(fr, st, st.dump_errors >= 1);
  CHECK_EQ_INT(st.error, STROBE_EIO);
  CHECK_EQ_U64(st.spikes_dumped, 0);
  CHECK_EQ_U64(st.dumps_written, 0);
  CHECK(st.last_spike_path[0] == 0);

  /* Still recording, and a good path works. */
  for (int i = 0; i < 1000; i++) {
    STROBE_SCOPE("err_after");
  }
  char path[256];
  temp_path(path, sizeof path, "errors");
  REQUIRE_EQ_INT(strobe_flight_recorder_dump(fr, path), 0);
  summary s;
  read_file(path, "err_after", 1, &s);
  CHECK_EQ_INT(s.rc, 0);
  CHECK_EQ_U64(s.ends_named, 1000);
  CHECK_EQ_INT(strobe_flight_recorder_stop(fr), 0);
  unlink(path);
}

/* >>pinned */
typedef struct dump_job {
  strobe_flight_recorder *fr;
  const char *path;
  int rc;
} dump_job;

static void *dump_thread(void *arg) {
  dump_job *j = arg;
  j->rc = strobe_flight_recorder_dump(j->fr, j->path);
  return NULL;
}

/* Nested scopes carrying random numbers (incompressible, see burst()). */
static void nested(uint64_t outers) {
  static uint64_t x = 0x2545F4914F6CDD1Dull;
  for (uint64_t i = 0; i < outers; i++) {
    STROBE_SCOPE("pin_outer");
    for (int k = 0; k < 20; k++) {
      STROBE_SCOPE("pin_inner");
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      STROBE_VALUE("pin_value", (double)(x >> 11));
    }
  }
}

static void test_pinned(void) {
  strobe_flight_recorder *fr;
  CHECK_EQ_INT(strobe_flight_recorder_start(&(strobe_flight_recorder_desc){.max_mib = 1, .flush_interval_ms = 10},
                                            &fr),
               0);
  for (int r = 0; r < 20; r++) { /* ~2 MiB encoded: the ring is full */
    nested(1000);
    fx_sleep_ms(2);
  }
  char fifo[256];
  temp_path(fifo, sizeof fifo, "fifo");
  CHECK(mkfifo(fifo, 0600) == 0);
  int rfd = open(fifo, O_RDONLY | O_NONBLOCK);
  REQUIRE(rfd >= 0);
  dump_job job = {fr, fifo, 1};
  pthread_t th;
  REQUIRE(pthread_create(&th, NULL, dump_thread, &job) == 0);
  /* Wait until the dump has started writing (its snapshot is taken), then
   * until the pipe is full and it is stuck. */
  int avail = 0;
  double t0 = fx_now_ms();
  while (avail < 60000) {
    CHECK(ioctl(rfd, FIONREAD, &avail) == 0);
    REQUIRE(fx_now_ms() - t0 < 10000);
    fx_sleep_ms(2);
  }

  /* Much more than the ring holds, while the dump pins it. */
  strobe_flight_recorder_stats st;
  for (int r = 0; r < 40; r++) {
    nested(1000);
    fx_sleep_ms(2);
  }
  /* Every event of the burst goes through the drain before the dump is
   * released, so what follows the release is only the resync and a little. */
  strobe__drain_now();
  WAIT_FOR(fr, st, st.dropped_blocks > 0);
  CHECK(st.dropped_events > 0);
  CHECK(st.retained_bytes <= st.capacity_bytes);

  /* Unstick it: read everything. */
  CHECK(fcntl(rfd, F_SETFL, 0) == 0);
  size_t cap = 4u << 20, len = 0;
  uint8_t *buf = malloc(cap);
  REQUIRE(buf != NULL);
  for (;;) {
    if (len == cap) {
      cap *= 2;
      buf = realloc(buf, cap);
      REQUIRE(buf != NULL);
    }
    ssize_t n = read(rfd, buf + len, cap - len);
    REQUIRE(n >= 0);
    if (n == 0) break;
    len += (size_t)n;
  }
  CHECK(pthread_join(th, NULL) == 0);
  close(rfd);
  unlink(fifo);
  CHECK_EQ_INT(job.rc, 0);
  strobe_capture *c;
  REQUIRE_EQ_INT(strobe_capture_open_memory(buf, len, &c), 0);
  summary s;
  summarize(c, "pin_inner", 2, &s);
  strobe_capture_close(c);
  CHECK_EQ_INT(s.rc, 0);
  CHECK_EQ_INT(s.totals.footer, 1);
  CHECK(s.ends_named > 0);
  CHECK(s.max_depth <= 2);
  free(buf);

  /* The thread whose blocks were refused was resynced: a later dump holds
   * the hole as a LOST marker and LOST totals, and nests correctly. */
  for (int r = 0; r < 3; r++) { /* a little (~60 KB): the hole must not be evicted by size */
    nested(20);
    fx_sleep_ms(20);
  }
  char path[256];
  temp_path(path, sizeof path, "pinned");
  REQUIRE_EQ_INT(strobe_flight_recorder_dump(fr, path), 0);
  read_file(path, "pin_inner", 2, &s);
  CHECK_EQ_INT(s.rc, 0);
  CHECK(s.totals.lost > 0);
  CHECK(s.lost_records > 0);
  CHECK(s.max_depth <= 2);
  CHECK_EQ_INT(s.disordered, 0); /* the marker sits in time order too */
  st = strobe_flight_recorder_query_stats(fr);
  printf("pinned: %llu blocks (%llu events) refused during the stuck dump; later dump: %llu lost, "
         "%llu lost scopes, %llu orphan ends\n",
         (unsigned long long)st.dropped_blocks, (unsigned long long)st.dropped_events,
         (unsigned long long)s.totals.lost, (unsigned long long)s.totals.lost_scopes,
         (unsigned long long)s.totals.orphan_ends);
  CHECK_EQ_INT(strobe_flight_recorder_stop(fr), 0);
  unlink(path);
}

/* Sanitized builds slow the drain: a ring large enough that the bounds under
 * test, not the ring, decide what is kept (set once, before any case records). */
static void setup(void) {
#ifdef STROBE_TEST_SANITIZED
  REQUIRE_EQ_INT(strobe_setup(&(strobe_desc){.ring_events = 1u << 21}), 0);
#endif
}

#define CASES(X)   \
  X(desc)          \
  X(roundtrip)     \
  X(size_bound)    \
  X(age_bound)     \
  X(spike_scope)   \
  X(spike_frames)  \
  X(note_and_stop) \
  X(errors)        \
  X(pinned)       
HARNESS_MAIN_SETUP(CASES, setup)
