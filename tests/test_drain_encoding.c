/*
 * test_drain_encoding.c — the drain's fast paths (docs/recording.md §What a
 * capture says it cost) write exactly what the events were: the drain's
 * conversion (site cache, open-scope stack), the writer's tight EVENTS loop
 * (BEGIN and END on one path, one-byte and longer varints), the EVENTS block
 * assembled in place in the ops buffer, and the compression settings of
 * every level. A second consumer beside the capture file keeps every event
 * the drain delivered for the recording thread; the file read back must hold
 * the same events, in the same order, with the same sites, ticks and value
 * bits, over many EVENTS blocks.
 */
/* STROBE_TEST_LABELS: serial */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/collect.h"
#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/strobe.h"
#include "support/fixtures.h"
#include "support/harness.h"

#define SITES 48      /* BEGIN ops of ids 32 and up take two bytes */
#define ROUNDS 60000  /* × 10 events: several 256 KiB EVENTS blocks */

typedef struct seen {
  uint32_t kind, data;
  uint64_t ts, bits; /* bits: a number's payload slot */
} seen;

static seen *g_seen;
static size_t g_nseen, g_capseen;
static uint32_t g_index = UINT32_MAX; /* the recording thread's index, from its THREAD delivery */

static void nop_site(void *c, uint32_t id, const strobe_site *s) { (void)c, (void)id, (void)s; }
static void nop_label(void *c, uint32_t id, const char *t) { (void)c, (void)id, (void)t; }
static void tap_thread(void *c, uint32_t i, uint64_t tid, const char *n, uint64_t l) {
  (void)c, (void)tid, (void)l;
  if (n && strcmp(n, "encoding") == 0) g_index = i;
}
static void nop_lost(void *c, uint32_t i, uint64_t l) { (void)c, (void)i, (void)l; }
static void nop_end(void *c, uint32_t i) { (void)c, (void)i; }
static void nop_tick(void *c, uint64_t now) { (void)c, (void)now; }

/* Keeps the recording thread's BEGIN, END and numbers (with their slots), as delivered. */
static void tap_events(void *ctx, uint32_t index, const strobe__event *ev, size_t n) {
  (void)ctx;
  if (index != g_index) return;
  for (size_t i = 0; i < n; i++) {
    uint32_t kind = ev[i].kind & 0xffu;
    if (kind != STROBE__EV_BEGIN && kind != STROBE__EV_END && kind != STROBE__EV_VALUE && kind != STROBE__EV_COUNTER &&
        kind != STROBE__EV_GAUGE)
      continue;
    if (g_nseen == g_capseen) {
      g_capseen = g_capseen ? 2 * g_capseen : 1 << 16;
      g_seen = realloc(g_seen, g_capseen * sizeof *g_seen);
      if (!g_seen) abort();
    }
    seen *s = &g_seen[g_nseen++];
    *s = (seen){kind, ev[i].data, ev[i].ts, 0};
    if (kind != STROBE__EV_BEGIN && kind != STROBE__EV_END && i + 1 < n) s->bits = ev[++i].ts;
  }
}

static strobe_site *g_sites[SITES];

static void intern_sites(void) {
  for (int i = 0; i < SITES; i++) {
    char name[32];
    int len = snprintf(name, sizeof name, "encoding_site_%d", i);
    g_sites[i] = strobe_site_intern(name, (size_t)len, NULL, STROBE_SITE_SCOPE);
  }
}

/* A little work so that some time deltas take two or more varint bytes. */
static uint64_t g_sink;
static void spin(uint32_t n) {
  uint64_t x = n | 1u;
  for (uint32_t i = 0; i < n; i++) x = x * 6364136223846793005ull + 1442695040888963407ull;
  __atomic_store_n(&g_sink, x, __ATOMIC_RELAXED);
}

/* One round: 10 events (4 scopes, a value, and a counter or a gauge), sites cycling over all SITES. */
static void round_of(uint32_t r) {
  STROBE_SCOPE_SITE(g_sites[r % SITES]);
  {
    STROBE_SCOPE_SITE(g_sites[(r * 7 + 3) % SITES]);
    STROBE_VALUE("encoding_value", (double)r * -1.25 + 1e15 * (r % 3 == 0)); /* varied bits, some of them negative */
    {
      STROBE_SCOPE("encoding_leaf");
      if (r % 97 == 0) spin(2000 + r % 5000);
    }
  }
  {
    STROBE_SCOPE_SITE(g_sites[(r * 13 + 5) % SITES]);
  }
  if (r & 1) {
    STROBE_COUNTER_ADD("encoding_counter", r);
  } else {
    STROBE_GAUGE_SET("encoding_gauge", -(double)r / 3.0);
  }
}

/* Records ROUNDS rounds at compression `level` with the tap beside the
 * file, then compares the file with what the tap saw. */
static void record_and_compare(int level) {
  g_nseen = 0;
  g_index = UINT32_MAX;
  char path[64];
  REQUIRE_EQ_INT(fx_temp_file(path, sizeof path, "drain-encoding"), 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path, .compression_level = level}, &rec), 0);
  { /* the first event attaches this thread; its index is then the drain's */
    STROBE_SCOPE_SITE(g_sites[0]);
  }
  strobe_record_flush(rec);
  strobe__consumer tap = {NULL, nop_site, nop_label, tap_thread, nop_lost, tap_events, nop_end, nop_tick, NULL, NULL, NULL};
  REQUIRE_EQ_INT(strobe__consumer_add(&tap), 0); /* delivers this thread, named, to the tap */
  REQUIRE(g_index != UINT32_MAX);
  uint64_t lost0 = strobe_query_event_stats().events_lost;
  for (uint32_t r = 0; r < ROUNDS; r++) round_of(r);
  strobe__consumer_remove(&tap); /* its final pass delivers every event to both */
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
  REQUIRE_EQ_U64(strobe_query_event_stats().events_lost, lost0); /* WAIT: nothing lost */
  REQUIRE_EQ_U64(g_nseen, (uint64_t)ROUNDS * 10); /* 4 BEGIN, 4 END, a value, a counter or a gauge */

  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  strobe_capture_record rec_;
  size_t k = 0, mismatches = 0, first_bad = SIZE_MAX, skipped = 0;
  uint32_t sites_seen_two_byte = 0;
  while (strobe_capture_next(cap, &rec_) > 0) {
    if (rec_.thread != g_index) continue;
    uint32_t kind = rec_.type == STROBE_REC_BEGIN     ? STROBE__EV_BEGIN
                    : rec_.type == STROBE_REC_END     ? STROBE__EV_END
                    : rec_.type == STROBE_REC_VALUE   ? STROBE__EV_VALUE
                    : rec_.type == STROBE_REC_COUNTER ? STROBE__EV_COUNTER
                    : rec_.type == STROBE_REC_GAUGE   ? STROBE__EV_GAUGE
                                                      : 0;
    if (!kind) continue;
    /* The attaching scope before the tap joined is in the file only. */
    if (g_nseen && k == 0 && rec_.ticks < g_seen[0].ts) {
      skipped++;
      continue;
    }
    if (k >= g_nseen) {
      mismatches++;
      break;
    }
    const seen *s = &g_seen[k];
    int ok = s->kind == kind && s->data == rec_.site && s->ts == rec_.ticks;
    if (kind != STROBE__EV_BEGIN && kind != STROBE__EV_END) {
      uint64_t bits;
      memcpy(&bits, &rec_.value, sizeof bits);
      ok = ok && bits == s->bits;
    }
    if (kind == STROBE__EV_BEGIN && rec_.site >= 32) sites_seen_two_byte++;
    if (!ok && first_bad == SIZE_MAX) first_bad = k;
    mismatches += !ok;
    k++;
  }
  strobe_capture_totals tot = strobe_capture_query_totals(cap);
  strobe_capture_close(cap);
  unlink(path);
  if (first_bad != SIZE_MAX)
    harness_fail(__FILE__, __LINE__, 0, "level %d: event %zu of %zu differs (tap kind %u data %u ts %llu)", level,
                 first_bad, g_nseen, g_seen[first_bad].kind, g_seen[first_bad].data,
                 (unsigned long long)g_seen[first_bad].ts);
  CHECK_EQ_U64(mismatches, 0);
  CHECK_EQ_U64(k, g_nseen); /* nothing missing, nothing added */
  CHECK(skipped <= 2);      /* the attaching scope's BEGIN and END */
  CHECK(sites_seen_two_byte > 0);
  CHECK(tot.blocks > 8); /* several EVENTS blocks, each assembled in place */
  CHECK_EQ_U64(tot.lost, 0);
}

static void setup(void) {
  REQUIRE_EQ_INT(strobe_setup(&(strobe_desc){.overflow = STROBE_OVERFLOW_WAIT}), 0);
  REQUIRE_EQ_INT(strobe_thread_set_name("encoding"), 0);
  intern_sites();
}

/* Level 1: zstd's level 1 with the drain's faster match search. */
static void test_default_level_reads_back_exactly(void) { record_and_compare(0); }

/* Levels 2..19 are zstd's own: the same events, however they compress. */
static void test_other_levels_read_back_exactly(void) {
  record_and_compare(2);
  record_and_compare(9);
}

#define CASES(X)                     \
  X(default_level_reads_back_exactly) \
  X(other_levels_read_back_exactly)
HARNESS_MAIN_SETUP(CASES, setup)
