/*
 * test_drain_encoding.c — the drain's fast paths (docs/recording.md §What a
 * capture says it cost) write exactly what the events were. Two ways to
 * know what they were:
 *
 * - beside the capture file, a second consumer keeps every event the drain
 *   delivered for the recording thread (the drain's conversion: site cache,
 *   open-scope stack; the writer's tight EVENTS loop; the EVENTS block
 *   assembled in place; the compression settings of every level);
 * - with the capture file alone, the writer completes and encodes the ring
 *   events itself in one pass (collect.h >>ring runs), leaving the ring as
 *   the recording thread wrote it but for the stretches the drain converted
 *   for it; the test then reads the ring back itself, by the ring form
 *   strobe.h documents, as the oracle.
 *
 * Either way the file read back must hold the same events, in the same
 * order, with the same sites, ticks and value bits, over many EVENTS blocks.
 * A consumer that joins while scopes are open must see their ENDs with the
 * right sites, which only the open-scope stack that the one-pass writer
 * keeps for the drain can tell it. On runs made by hand, the one-pass
 * writer gives a VALUE that opens a block the time before it, and leaves a
 * VALUE that follows an event outside EVENTS to the drain.
 */
/* STROBE_TEST_LABELS: serial */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/collect.h"
#include "format/capture_writer.h"
#include "format/codec.h"
#include "probe/probe.h"
#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/strobe.h"
#include "support/fixtures.h"
#include "support/harness.h"

#define SITES 48      /* BEGIN ops of ids 32 and up take two bytes */
#define ROUNDS 60000  /* × ROUND_EVENTS events: several 256 KiB EVENTS blocks */
#define ROUND_EVENTS 12 /* 4 BEGIN, 4 END, three values, a counter or a gauge */
#define RING_EVENTS (1u << 21) /* the recording thread's ring holds two recordings whole (the oracle reads them) */

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
static void nop_thread(void *c, uint32_t i, uint64_t tid, const char *n, uint64_t l) { (void)c, (void)i, (void)tid, (void)n, (void)l; }
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

static strobe_site *g_num_site; /* interned: its numbers say their encoding in the slot */

/* One round: ROUND_EVENTS events (4 scopes, values of a double, an int and
 * an interned site, and a counter or a gauge), sites cycling over all SITES,
 * the last third of them first met half way (sites the drain has not seen
 * yet). */
static void round_of(uint32_t r) {
  uint32_t sites = r < ROUNDS / 2 ? 2 * SITES / 3 : SITES;
  STROBE_SCOPE_SITE(g_sites[r % sites]);
  {
    STROBE_SCOPE_SITE(g_sites[(r * 7 + 3) % sites]);
    STROBE_VALUE("encoding_value", (double)r * -1.25 + 1e15 * (r % 3 == 0)); /* varied bits, some of them negative */
    STROBE_VALUE("encoding_int", (int)r - ROUNDS / 3);                       /* an integer, converted by the drain */
    {
      STROBE_SCOPE("encoding_leaf");
      STROBE_VALUE_SITE(g_num_site, (int64_t)r * -3);
      if (r % 97 == 0) spin(2000 + r % 5000);
    }
  }
  {
    STROBE_SCOPE_SITE(g_sites[(r * 13 + 5) % sites]);
  }
  if (r & 1) {
    STROBE_COUNTER_ADD("encoding_counter", r);
  } else {
    STROBE_GAUGE_SET("encoding_gauge", -(double)r / 3.0);
  }
}

/* Compares the capture at `path` with g_seen: the recording thread's events
 * as they were, BEGIN, END and numbers. */
static void compare_file(const char *path, int level) {
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
    /* The attaching scope before the comparison began is in the file only. */
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
  if (first_bad != SIZE_MAX)
    harness_fail(__FILE__, __LINE__, 0, "level %d: event %zu of %zu differs (expected kind %u data %u ts %llu)", level,
                 first_bad, g_nseen, g_seen[first_bad].kind, g_seen[first_bad].data,
                 (unsigned long long)g_seen[first_bad].ts);
  CHECK_EQ_U64(mismatches, 0);
  CHECK_EQ_U64(k, g_nseen); /* nothing missing, nothing added */
  CHECK(skipped <= 2);      /* the attaching scope's BEGIN and END */
  CHECK(sites_seen_two_byte > 0);
  CHECK(tot.blocks > 8); /* several EVENTS blocks, each assembled in place */
  CHECK_EQ_U64(tot.lost, 0);
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
  strobe__consumer tap = {NULL, nop_site, nop_label, tap_thread, nop_lost, tap_events, nop_end, nop_tick, NULL, NULL, NULL, NULL};
  REQUIRE_EQ_INT(strobe__consumer_add(&tap), 0); /* delivers this thread, named, to the tap */
  REQUIRE(g_index != UINT32_MAX);
  uint64_t lost0 = strobe_query_event_stats().events_lost;
  for (uint32_t r = 0; r < ROUNDS; r++) round_of(r);
  strobe__consumer_remove(&tap); /* its final pass delivers every event to both */
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
  REQUIRE_EQ_U64(strobe_query_event_stats().events_lost, lost0); /* WAIT: nothing lost */
  REQUIRE_EQ_U64(g_nseen, (uint64_t)ROUNDS * ROUND_EVENTS);
  compare_file(path, level);
  unlink(path);
}

/* >>the ring as the oracle */
static void oracle_add(uint32_t kind, uint32_t data, uint64_t ts, uint64_t bits) {
  if (g_nseen == g_capseen) {
    g_capseen = g_capseen ? 2 * g_capseen : 1 << 16;
    g_seen = realloc(g_seen, g_capseen * sizeof *g_seen);
    if (!g_seen) abort();
  }
  g_seen[g_nseen++] = (seen){kind, data, ts, bits};
}

/* A number's payload bits as the double they stand for (strobe.h, STROBE__NUM_*). */
static uint64_t oracle_bits(uint64_t bits, uint32_t code) {
  double d = code == STROBE__NUM_I64 ? (double)(int64_t)bits : code == STROBE__NUM_U64 ? (double)bits : 0;
  if (code == STROBE__NUM_I64 || code == STROBE__NUM_U64) memcpy(&bits, &d, sizeof bits);
  return bits;
}

/* Reads one ring event (and a number's slot) as consumers see it: in the
 * form the hot path wrote (a site pointer over kind and data, an END
 * without its site, a number whose bits are the argument's and whose VALUE
 * has no time), or as the drain converted it in place. Returns the events
 * it used. */
static size_t oracle_event(const strobe__event *e, const strobe__event *end, uint32_t *stack, uint32_t *depth,
                           uint64_t *last_ts) {
  uint64_t word;
  memcpy(&word, &e->kind, sizeof word);
  if (word && (word & 7u) == 0) {
    const strobe_site *site = (const strobe_site *)(uintptr_t)word;
    uint32_t id = __atomic_load_n(&site->id, __ATOMIC_ACQUIRE);
    if (site->kind == STROBE_SITE_SCOPE) {
      stack[(*depth)++] = id;
      oracle_add(STROBE__EV_BEGIN, id, e->ts, 0);
      *last_ts = e->ts;
      return 1;
    }
    uint32_t kind = strobe__number_event(site->kind);
    REQUIRE(kind && e + 1 < end);
    uint32_t code = site->unit >> STROBE__NUM_SHIFT;
    uint64_t ts = kind == STROBE__EV_VALUE ? *last_ts : e->ts;
    oracle_add(kind, id, ts, oracle_bits(e[1].ts, code == STROBE__NUM_IN_SLOT ? e[1].data : code));
    *last_ts = ts;
    return 2;
  }
  uint32_t kind = e->kind & 0xffu;
  if (kind == STROBE__EV_BEGIN) {
    stack[(*depth)++] = e->data;
    oracle_add(kind, e->data, e->ts, 0);
  } else if (kind == STROBE__EV_END) {
    REQUIRE(*depth > 0);
    oracle_add(kind, stack[--*depth], e->ts, 0);
  } else if (kind == STROBE__EV_VALUE || kind == STROBE__EV_COUNTER || kind == STROBE__EV_GAUGE) {
    REQUIRE(e + 1 < end);
    oracle_add(kind, e->data, e->ts, e[1].ts);
    *last_ts = e->ts;
    return 2;
  }
  *last_ts = e->ts;
  return 1 + strobe__payload_slots(kind, e->data);
}

/* The recording thread's events in its ring from `from` to `to` (through
 * its wrap when it wrapped), into g_seen. Read after the recording stopped:
 * the drain is done with them. */
static void oracle_read(strobe__event *from, strobe__event *to) {
  strobe__tstate *t = (strobe__tstate *)strobe__tls;
  uint32_t stack[STROBE_MAX_DEPTH + 1], depth = 0;
  uint64_t last_ts = 0;
  strobe__event *wrap = __atomic_load_n(&t->wrap_at, __ATOMIC_RELAXED);
  strobe__event *runs[2][2] = {{from, to < from ? wrap : to}, {t->ring, to < from ? to : t->ring}};
  for (int i = 0; i < 2; i++)
    for (strobe__event *e = runs[i][0]; e < runs[i][1];) e += oracle_event(e, runs[i][1], stack, &depth, &last_ts);
  CHECK_EQ_INT((int)depth, 0);
}

/* The capture file alone: the writer encodes the ring events itself. */
static void record_alone_and_compare(int level) {
  g_nseen = 0;
  char path[64];
  REQUIRE_EQ_INT(fx_temp_file(path, sizeof path, "drain-encoding"), 0);
  strobe_recorder *rec;
  /* No journal: this thread (attached by an earlier case) would join it, and a journaled ring is converted in
   * a copy and its released slots cleared (docs/recording.md §Crash journal): the oracle reads the ring. */
  strobe_record_desc d = {.path = path, .compression_level = level, .no_journal = 1};
  REQUIRE_EQ_INT(strobe_record_start(&d, &rec), 0);
  { /* attaches this thread */
    STROBE_SCOPE_SITE(g_sites[0]);
  }
  strobe_record_flush(rec);
  strobe__tstate *t = (strobe__tstate *)strobe__tls;
  REQUIRE_EQ_U64(t->ring_events, RING_EVENTS);
  g_index = t->index;
  uint64_t lost0 = strobe_query_event_stats().events_lost;
  strobe__event *from = strobe__tls->cur;
  for (uint32_t r = 0; r < ROUNDS; r++) round_of(r);
  strobe__event *to = strobe__tls->cur;
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
  REQUIRE_EQ_U64(strobe_query_event_stats().events_lost, lost0);
  oracle_read(from, to);
  REQUIRE_EQ_U64(g_nseen, (uint64_t)ROUNDS * ROUND_EVENTS);
  compare_file(path, level);
  unlink(path);
}

static void setup(void) {
  REQUIRE_EQ_INT(strobe_setup(&(strobe_desc){.overflow = STROBE_OVERFLOW_WAIT, .ring_events = RING_EVENTS}), 0);
  REQUIRE_EQ_INT(strobe_thread_set_name("encoding"), 0);
  intern_sites();
  g_num_site = strobe_site_intern("encoding_interned_value", strlen("encoding_interned_value"), NULL, STROBE_SITE_VALUE);
  REQUIRE(g_num_site != NULL);
}

/* Level 1: zstd's level 1 with the drain's faster match search. */
static void test_default_level_reads_back_exactly(void) { record_and_compare(0); }

/* Levels 2..19 are zstd's own: the same events, however they compress. */
static void test_other_levels_read_back_exactly(void) {
  record_and_compare(2);
  record_and_compare(9);
}

/* The file alone: its writer completes and encodes the ring events in one
 * pass, the drain converting only what it leaves (sites met for the first
 * time, sites that share a cache entry). */
static void test_file_alone_reads_back_exactly(void) {
  record_alone_and_compare(0);
  record_alone_and_compare(3);
}

/* Three scopes opened while the file records alone end after a second
 * consumer joined: it must get their ENDs with their sites, from the stack
 * the one-pass writer kept for the drain. */
static uint32_t g_ends[8], g_nends;
static void end_tap(void *ctx, uint32_t index, const strobe__event *ev, size_t n) {
  (void)ctx;
  if (index != g_index) return;
  for (size_t i = 0; i < n; i++)
    if ((ev[i].kind & 0xffu) == STROBE__EV_END && g_nends < 8) g_ends[g_nends++] = ev[i].data;
}

static void test_joining_consumer_gets_open_scopes_ends(void) {
  /* Three outer sites and an inner one in different cache entries, so that
   * the outer BEGINs are completed by the writer, not converted. */
  strobe_site *outer[3], *inner = NULL;
  uint8_t used[STROBE__SITE_CACHE] = {0};
  for (int i = 0, n = 0; i < SITES && n < 4; i++) {
    uint32_t slot = strobe__site_slot((uintptr_t)g_sites[i]);
    if (used[slot]) continue;
    used[slot] = 1;
    if (n < 3)
      outer[n++] = g_sites[i];
    else
      inner = g_sites[i], n++;
  }
  REQUIRE(inner != NULL);
  char path[64];
  REQUIRE_EQ_INT(fx_temp_file(path, sizeof path, "drain-encoding"), 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  for (int i = 0; i < 3; i++) { /* every site met once: cached from now on */
    STROBE_SCOPE_SITE(outer[i]);
  }
  {
    STROBE_SCOPE_SITE(inner);
  }
  strobe_record_flush(rec);
  g_index = ((strobe__tstate *)strobe__tls)->index;
  g_nends = 0;
  strobe__consumer tap = {NULL, nop_site, nop_label, nop_thread, nop_lost, end_tap, nop_end, nop_tick, NULL, NULL, NULL, NULL};
  {
    STROBE_SCOPE_SITE(outer[0]);
    {
      STROBE_SCOPE_SITE(outer[1]);
      {
        STROBE_SCOPE_SITE(outer[2]);
        for (int i = 0; i < 1000; i++) {
          STROBE_SCOPE_SITE(inner);
        }
        strobe_record_flush(rec); /* the file alone took them */
        REQUIRE_EQ_INT(strobe__consumer_add(&tap), 0);
      }
    }
  }
  strobe__consumer_remove(&tap);
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
  unlink(path);
  REQUIRE_EQ_U64(g_nends, 3);
  CHECK_EQ_U64(g_ends[0], outer[2]->id);
  CHECK_EQ_U64(g_ends[1], outer[1]->id);
  CHECK_EQ_U64(g_ends[2], outer[0]->id);
}

/* The one-pass writer on a run made by hand: a VALUE's time when it opens a
 * block (the time before it, which the drain holds, not the block's), and
 * a VALUE after an event the EVENTS stream does not hold (an operation),
 * which it must leave to the drain. */
static int mem_sink(void *ctx, const void *data, size_t len) {
  strobe__buf *b = ctx;
  strobe__buf_put(b, data, len);
  return b->failed ? STROBE_ENOMEM : 0;
}

static void ring_word(strobe__event *e, uint64_t ts, const void *site) {
  uint64_t word = (uint64_t)(uintptr_t)site;
  e->ts = ts;
  memcpy(&e->kind, &word, sizeof word);
}

static void test_one_pass_value_times(void) {
  static strobe_site cands[4] = {{.name = "one_pass_scope_a", .kind = STROBE_SITE_SCOPE},
                                 {.name = "one_pass_scope_b", .kind = STROBE_SITE_SCOPE},
                                 {.name = "one_pass_value_a", .kind = STROBE_SITE_VALUE},
                                 {.name = "one_pass_value_b", .kind = STROBE_SITE_VALUE}};
  strobe_site *scope = &cands[0], *value = &cands[2];
  if (strobe__site_slot((uintptr_t)scope) == strobe__site_slot((uintptr_t)value)) value = &cands[3];
  if (strobe__site_slot((uintptr_t)scope) == strobe__site_slot((uintptr_t)value)) scope = &cands[1];
  REQUIRE(strobe__site_slot((uintptr_t)scope) != strobe__site_slot((uintptr_t)value));
  static strobe__site_info cache[STROBE__SITE_CACHE];
  cache[strobe__site_slot((uintptr_t)scope)] = (strobe__site_info){scope, 1, STROBE__EV_BEGIN, STROBE__NUM_F64};
  cache[strobe__site_slot((uintptr_t)value)] = (strobe__site_info){value, 2, STROBE__EV_VALUE, STROBE__NUM_F64};

  strobe__buf out = {0};
  strobe__writer *w;
  strobe__writer_desc wd = {"file", 100, 1, 0, 0, mem_sink, &out, NULL};
  REQUIRE_EQ_INT(strobe__writer_create(&wd, &w), 0);
  strobe__writer_site(w, 1, scope);
  strobe__writer_site(w, 2, value);
  strobe__writer_thread(w, 0, 1234, "one_pass", 0);
  uint32_t open_site[STROBE_MAX_DEPTH];
  strobe__ring_run run = {NULL, 0, cache, 0, open_site, 0};

  strobe__event ev[4];
  ring_word(&ev[0], 900, scope); /* BEGIN at 900, then the block is written */
  run.ev = ev, run.n = 1;
  REQUIRE_EQ_U64(strobe__writer_ring_events(w, 0, &run), 1);
  CHECK_EQ_U64(run.last_ts, 900);
  REQUIRE_EQ_INT(strobe__writer_flush(w), 0);

  double v = 2.5;
  ring_word(&ev[0], 7, value); /* a VALUE opens the next block: its ring time is nobody's */
  memcpy(&ev[1].ts, &v, sizeof v);
  ev[1].kind = 0, ev[1].data = STROBE__NUM_F64;
  ev[2] = (strobe__event){1100, STROBE__EV_END, 0};
  run.ev = ev, run.n = 3;
  REQUIRE_EQ_U64(strobe__writer_ring_events(w, 0, &run), 3);
  CHECK_EQ_U64(run.open, 0);
  CHECK_EQ_U64(run.last_ts, 1100);

  run.last_ts = 1200; /* the drain converted an operation event at 1200: not in EVENTS */
  ring_word(&ev[0], 7, value);
  run.ev = ev, run.n = 2;
  CHECK_EQ_U64(strobe__writer_ring_events(w, 0, &run), 0); /* the drain converts that VALUE */
  strobe_misuse none = {0};
  REQUIRE_EQ_INT(strobe__writer_finish(w, 2000, &none), 0);
  strobe__writer_destroy(w);

  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open_memory(out.data, out.len, &cap), 0);
  strobe_capture_record r;
  uint64_t ticks[4] = {0};
  uint32_t types[4] = {0}, n = 0;
  double got = 0;
  while (strobe_capture_next(cap, &r) > 0 && n < 4) {
    if (r.type != STROBE_REC_BEGIN && r.type != STROBE_REC_END && r.type != STROBE_REC_VALUE) continue;
    if (r.type == STROBE_REC_VALUE) got = r.value;
    types[n] = r.type, ticks[n++] = r.ticks;
  }
  strobe_capture_close(cap);
  strobe__buf_free(&out);
  REQUIRE_EQ_U64(n, 3);
  CHECK_EQ_INT((int)types[1], STROBE_REC_VALUE);
  CHECK_EQ_U64(ticks[0], 900);
  CHECK_EQ_U64(ticks[1], 900); /* the BEGIN's, across the block boundary */
  CHECK_EQ_U64(ticks[2], 1100);
  CHECK(got == 2.5);
}

#define CASES(X)                       \
  X(one_pass_value_times)              \
  X(default_level_reads_back_exactly)  \
  X(other_levels_read_back_exactly)    \
  X(file_alone_reads_back_exactly)     \
  X(joining_consumer_gets_open_scopes_ends)
HARNESS_MAIN_SETUP(CASES, setup)
