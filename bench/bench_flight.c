/*
 * bench_flight.c — the flight recorder's memory over a long run: one thread
 * records 1,000,000 scopes a second, paced in 1 ms slots (a "bench_tick"
 * scope holding 999 "bench_work" scopes whose bodies spin a deterministic
 * xorshift-chosen 0–63 iterations, and a frame mark every 16 ms), while a
 * flight recorder with default bounds (64 MiB, last 10 s) and an armed spike
 * trigger (frames over 1 s, which this pacing never produces) keeps the
 * most recent events. Resident memory is sampled every 10 s.
 *
 *   flight_recorder_rss_growth_bytes
 *                         resident memory at the end minus at the first
 *                         sample after the warm-up (10 s: the time bound is
 *                         reached, so the ring is as full as it will get);
 *                         budget ≈ 0, printed against 1 MiB of allocator noise;
 *   flight_recorder_retained_seconds
 *                         what the ring covers at the end (bound: 10 s, or
 *                         less if 64 MiB fill first);
 *   flight_recorder_retained_mib, flight_recorder_scopes_per_s (achieved),
 *   flight_recorder_events_lost (rings full: the drain fell behind),
 *   flight_recorder_dump_ms, flight_recorder_dump_mib (one on-demand dump at
 *                         the end, read back: flight_recorder_dump_scopes).
 *
 * Usage: bench_flight [seconds] [scopes-per-second]
 *        default 600 s (the 10 minutes; `make bench` runs that) and
 *        1000000; `bench_flight 60` is a quick look. Lines starting with '#'
 *        are progress (one every 10 s), so a long run is watchable.
 * Budgets are printed, never asserted: the exit status is 0 whatever is measured.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "floor.h"
#include "strobe/capture.h"
#include "strobe/flight.h"
#include "strobe/strobe.h"

#define DEFAULT_SECONDS 600u
#define DEFAULT_RATE 1000000u
#define SAMPLE_S 10u                  /* progress and RSS sample period */
#define RSS_NOISE_BYTES (1u << 20)    /* what "≈ 0" allows: allocator and page-cache noise */
#define FRAME_MS 16u

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t g_sink;

static void work(void) {
  STROBE_SCOPE("bench_work");
  g_sink = fx_spin(fx_xorshift(&g_rng) & 63u, g_sink);
}

/* One slot: `n` scopes, the first enclosing the rest. */
static void slot(uint32_t n) {
  STROBE_SCOPE("bench_tick");
  for (uint32_t i = 1; i < n; i++) work();
}

static unsigned long parse(const char *s, const char *argv0) {
  char *end;
  unsigned long v = strtoul(s, &end, 10);
  if (*end || v == 0) {
    fprintf(stderr, "usage: %s [seconds] [scopes-per-second]\n", argv0);
    exit(2);
  }
  return v;
}

int main(int argc, char **argv) {
  unsigned long seconds = argc > 1 ? parse(argv[1], argv[0]) : DEFAULT_SECONDS;
  unsigned long rate = argc > 2 ? parse(argv[2], argv[0]) : DEFAULT_RATE;
  uint32_t per_ms = (uint32_t)(rate / 1000u ? rate / 1000u : 1u);
  unsigned long warm_s = seconds >= 2 * SAMPLE_S ? SAMPLE_S : seconds / 2;

  char dir[64];
  if (fx_temp_dir(dir, sizeof dir, "bench-flight") != 0) {
    perror("bench_flight: temporary directory");
    return 1;
  }
  long rss_before = fx_rss_bytes();
  strobe_flight_recorder *fr;
  int rc = strobe_flight_recorder_start(
      &(strobe_flight_recorder_desc){.spike_threshold_ms = 1000, .spike_dir = dir}, &fr);
  if (rc) {
    fprintf(stderr, "bench_flight: cannot start: %s\n", strobe_strerror(rc));
    return 1;
  }
  long rss_started = fx_rss_bytes();
  strobe_flight_recorder_desc d = strobe_flight_recorder_query_desc(fr);
  printf("# bench_flight: %lu s at %lu scopes/s; ring %u MiB, last %u ms; rss %ld -> %ld bytes at start\n", seconds,
         (unsigned long)per_ms * 1000u, d.max_mib, d.max_age_ms, rss_before, rss_started);
  fflush(stdout);

  uint64_t lost0 = strobe_query_event_stats().events_lost;
  uint64_t t0 = fx_now_ns(), scopes = 0, late_slots = 0;
  long rss_warm = -1, rss_min = -1, rss_max = -1;
  uint64_t total_ms = (uint64_t)seconds * 1000u;
  for (uint64_t ms = 0; ms < total_ms; ms++) {
    slot(per_ms);
    scopes += per_ms;
    if (ms % FRAME_MS == FRAME_MS - 1) STROBE_FRAME_MARK();
    if ((ms + 1) % (SAMPLE_S * 1000u) == 0) {
      long rss = fx_rss_bytes();
      strobe_flight_recorder_stats st = strobe_flight_recorder_query_stats(fr);
      unsigned long at = (unsigned long)((ms + 1) / 1000u);
      if (at >= warm_s && rss_warm < 0) rss_warm = rss;
      if (rss_warm >= 0) {
        if (rss_min < 0 || rss < rss_min) rss_min = rss;
        if (rss > rss_max) rss_max = rss;
      }
      printf("# t=%lus rss=%ld retained=%.1f MiB (%llu blocks, %.2f s) evicted=%llu dropped=%llu lost=%llu\n", at,
             rss, (double)st.retained_bytes / 1048576.0, (unsigned long long)st.retained_blocks,
             st.retained_seconds, (unsigned long long)st.evicted_blocks, (unsigned long long)st.dropped_blocks,
             (unsigned long long)(strobe_query_event_stats().events_lost - lost0));
      fflush(stdout);
    }
    /* Pace: sleep to this slot's deadline; a slot that ran late is not made up twice. */
    uint64_t deadline = t0 + (ms + 1) * 1000000ull;
    uint64_t now = fx_now_ns();
    if (now < deadline) {
      struct timespec ts = {(time_t)(deadline / 1000000000ull), (long)(deadline % 1000000000ull)};
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    } else if (now - deadline > 1000000ull) {
      late_slots++;
    }
  }
  uint64_t wall = fx_now_ns() - t0;
  long rss_end = fx_rss_bytes();
  if (rss_warm < 0) rss_warm = rss_end;
  strobe_flight_recorder_stats st = strobe_flight_recorder_query_stats(fr);
  uint64_t lost = strobe_query_event_stats().events_lost - lost0;

  /* One dump of everything retained, read back. */
  char path[128];
  snprintf(path, sizeof path, "%s/dump.strobe", dir);
  uint64_t d0 = fx_now_ns();
  rc = strobe_flight_recorder_dump(fr, path);
  double dump_ms = (double)(fx_now_ns() - d0) / 1e6;
  if (rc) fprintf(stderr, "bench_flight: dump: %s\n", strobe_strerror(rc));
  struct stat sb;
  double dump_mib = stat(path, &sb) == 0 ? (double)sb.st_size / 1048576.0 : 0.0;
  uint64_t dump_scopes = 0;
  strobe_capture *cap;
  if (strobe_capture_open(path, &cap) == 0) {
    strobe_capture_record r;
    while (strobe_capture_next(cap, &r) > 0) dump_scopes += r.type == STROBE_REC_END;
    strobe_capture_close(cap);
  }
  strobe_flight_recorder_stats st2 = strobe_flight_recorder_query_stats(fr);
  strobe_flight_recorder_stop(fr);
  fx_remove_dir(dir);

  long growth = rss_end - rss_warm;
  printf("BENCH flight_recorder_rss_growth_bytes %ld bytes\n", growth);
  printf("BUDGET flight_recorder_rss_growth_bytes %ld <= %u %s\n", growth, RSS_NOISE_BYTES,
         growth <= (long)RSS_NOISE_BYTES ? "ok" : "OVER");
  printf("BENCH flight_recorder_retained_seconds %.2f s\n", st.retained_seconds);
  printf("BENCH flight_recorder_retained_mib %.1f MiB\n", (double)st.retained_bytes / 1048576.0);
  printf("BENCH flight_recorder_scopes_per_s %.0f scopes/s\n", (double)scopes / ((double)wall / 1e9));
  printf("BENCH flight_recorder_events_lost %llu events\n", (unsigned long long)lost);
  printf("BENCH flight_recorder_dump_ms %.1f ms\n", dump_ms);
  printf("BENCH flight_recorder_dump_mib %.1f MiB\n", dump_mib);
  printf("BENCH flight_recorder_dump_scopes %llu scopes\n", (unsigned long long)dump_scopes);
  printf("# bench_flight: %llu scopes in %.1f s (%llu late slots); rss before start %ld, after start %ld, "
         "warm %ld, min %ld, max %ld, end %ld; ring %llu/%llu bytes, %llu blocks evicted, %llu dropped; "
         "spikes %llu; dumps %llu\n",
         (unsigned long long)scopes, (double)wall / 1e9, (unsigned long long)late_slots, rss_before, rss_started,
         rss_warm, rss_min, rss_max, rss_end, (unsigned long long)st.retained_bytes,
         (unsigned long long)st.capacity_bytes, (unsigned long long)st.evicted_blocks,
         (unsigned long long)st2.dropped_blocks, (unsigned long long)st2.spikes_seen,
         (unsigned long long)st2.dumps_written);
  return 0;
}
