/*
 * test_capture_reader.c — the capture reader (include/strobe/capture.h) on
 * capture files built byte by byte here with the codec helpers, so every
 * expected value is known exactly: records of every type with their depth,
 * times, durations and self times; totals; and each kind of bad input with
 * its specific error, returned only after everything before it.
 *
 * Also reads the seed files of the fuzz corpus, which a separate encoder
 * (scripts/make-fuzz-seeds.py) wrote, so the reader is checked against more
 * than the encoder in this file.
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "support/batch_check.h"
#include "support/fixtures.h"
#include "support/harness.h"
#include "format/codec.h"
#include "strobe/capture.h"

/* >>builders */

#define NS_PER_TICK 0.5
#define EPOCH 1000u

/* A header with some fields, an unknown tag (skipped) and an over-long
 * features string (truncated to the struct's array). */
static void put_header(strobe__buf *f, uint32_t version) {
  strobe__buf fields = {0};
  strobe__buf_u16(&fields, STROBE__TAG_CLOCK_SOURCE);
  strobe__buf_u16(&fields, 3);
  strobe__buf_put(&fields, "tsc", 3);
  strobe__buf_u16(&fields, STROBE__TAG_NS_PER_TICK);
  strobe__buf_u16(&fields, 8);
  strobe__buf_f64(&fields, NS_PER_TICK);
  strobe__buf_u16(&fields, STROBE__TAG_EPOCH_TICKS);
  strobe__buf_u16(&fields, 8);
  strobe__buf_u64(&fields, EPOCH);
  strobe__buf_u16(&fields, 999); /* unknown: skipped */
  strobe__buf_u16(&fields, 5);
  strobe__buf_put(&fields, "xxxxx", 5);
  strobe__buf_u16(&fields, STROBE__TAG_KIND);
  strobe__buf_u16(&fields, 4);
  strobe__buf_put(&fields, "file", 4);
  strobe__buf_u16(&fields, STROBE__TAG_RING_EVENTS);
  strobe__buf_u16(&fields, 4);
  strobe__buf_u32(&fields, 4096);
  strobe__buf_u16(&fields, STROBE__TAG_CLOCK_INVARIANT);
  strobe__buf_u16(&fields, 1);
  strobe__buf_put(&fields, "\x01", 1);
  char features[200];
  memset(features, 'f', sizeof features);
  strobe__buf_u16(&fields, STROBE__TAG_FEATURES);
  strobe__buf_u16(&fields, sizeof features);
  strobe__buf_put(&fields, features, sizeof features);

  strobe__buf_put(f, STROBE__MAGIC, STROBE__MAGIC_LEN);
  strobe__buf_u32(f, version);
  strobe__buf_u32(f, (uint32_t)fields.len);
  strobe__buf_put(f, fields.data, fields.len);
  strobe__buf_free(&fields);
}

/* A block with any codec and lengths, CRC computed over what is written. */
static void put_block_as(strobe__buf *f, uint8_t type, uint8_t codec, const void *stored, size_t stored_len,
                         uint32_t raw_len) {
  uint8_t hb[STROBE__BLOCK_HEADER];
  strobe__block_header h = {type, codec, (uint32_t)stored_len, raw_len, 0};
  strobe__block_header_encode(hb, &h);
  h.crc = strobe__block_crc(hb, stored, stored_len);
  strobe__block_header_encode(hb, &h);
  strobe__buf_put(f, hb, sizeof hb);
  strobe__buf_put(f, stored, stored_len);
}

static void put_block(strobe__buf *f, uint8_t type, const strobe__buf *p) {
  put_block_as(f, type, STROBE__CODEC_RAW, p->data, p->len, (uint32_t)p->len);
}

static void put_block_zstd(strobe__buf *f, uint8_t type, const strobe__buf *p) {
  size_t cap = ZSTD_compressBound(p->len);
  void *z = malloc(cap);
  CHECK(z);
  size_t n = ZSTD_compress(z, cap, p->data, p->len, 3);
  CHECK(!ZSTD_isError(n));
  put_block_as(f, type, STROBE__CODEC_ZSTD, z, n, (uint32_t)p->len);
  free(z);
}

static void put_site(strobe__buf *p, uint32_t id, uint32_t kind, uint32_t line, const char *name, const char *cat) {
  strobe__buf_varint(p, id);
  strobe__buf_varint(p, kind);
  strobe__buf_varint(p, line);
  strobe__buf_str(p, name);
  strobe__buf_str(p, cat);
  strobe__buf_str(p, "file.c");
  strobe__buf_str(p, "func");
  strobe__buf_str(p, kind == STROBE_SITE_STAGE ? "parent_stage" : "");
}

static void put_thread(strobe__buf *f, uint32_t index, uint64_t tid, const char *name) {
  strobe__buf p = {0};
  strobe__buf_varint(&p, index);
  strobe__buf_varint(&p, tid);
  strobe__buf_str(&p, name);
  put_block(f, STROBE__BLK_THREAD, &p);
  strobe__buf_free(&p);
}

static void put_pair(strobe__buf *f, uint8_t type, uint64_t a, uint64_t b, int two) {
  strobe__buf p = {0};
  strobe__buf_varint(&p, a);
  if (two) strobe__buf_varint(&p, b);
  put_block(f, type, &p);
  strobe__buf_free(&p);
}

/* An EVENTS block under construction. */
typedef struct evs {
  strobe__buf ops, times;
  uint64_t base, prev;
  uint32_t thread, count;
} evs;

static evs ev_start(uint32_t thread, uint64_t base) { return (evs){.thread = thread, .base = base, .prev = base}; }

static void ev_time(evs *e, uint64_t ticks) {
  strobe__buf_varint(&e->times, strobe__zigzag((int64_t)(ticks - e->prev)));
  e->prev = ticks;
  e->count++;
}
static void ev_begin(evs *e, uint64_t t, uint32_t site) {
  strobe__buf_varint(&e->ops, (uint64_t)site << 2 | STROBE__OP_BEGIN);
  ev_time(e, t);
}
static void ev_end(evs *e, uint64_t t) {
  strobe__buf_varint(&e->ops, STROBE__OP_END);
  ev_time(e, t);
}
static void ev_num(evs *e, uint64_t t, uint32_t kind, uint32_t site, double v) {
  strobe__buf_varint(&e->ops, (uint64_t)kind << 2 | STROBE__OP_OTHER);
  strobe__buf_varint(&e->ops, site);
  strobe__buf_f64(&e->ops, v);
  ev_time(e, t);
}
static void ev_frame(evs *e, uint64_t t, uint32_t site) {
  strobe__buf_varint(&e->ops, 6u << 2 | STROBE__OP_OTHER);
  strobe__buf_varint(&e->ops, site);
  ev_time(e, t);
}
static void ev_cum(evs *e, uint64_t t, uint32_t site, uint64_t count, uint64_t total, uint64_t min, uint64_t max) {
  strobe__buf_varint(&e->ops, 7u << 2 | STROBE__OP_OTHER);
  strobe__buf_varint(&e->ops, site);
  strobe__buf_varint(&e->ops, count);
  strobe__buf_varint(&e->ops, total);
  strobe__buf_varint(&e->ops, min);
  strobe__buf_varint(&e->ops, max);
  ev_time(e, t);
}
static void ev_lost(evs *e, uint64_t t, uint64_t lost, uint32_t depth) {
  strobe__buf_varint(&e->ops, 8u << 2 | STROBE__OP_OTHER);
  strobe__buf_varint(&e->ops, lost);
  strobe__buf_varint(&e->ops, depth);
  ev_time(e, t);
}

static void ev_payload(evs *e, strobe__buf *p) {
  strobe__buf_varint(p, e->thread);
  strobe__buf_varint(p, e->count);
  strobe__buf_varint(p, e->base);
  strobe__buf_varint(p, e->ops.len);
  strobe__buf_put(p, e->ops.data, e->ops.len);
  strobe__buf_put(p, e->times.data, e->times.len);
  strobe__buf_free(&e->ops);
  strobe__buf_free(&e->times);
}

static void ev_put(strobe__buf *f, evs *e, int zstd) {
  strobe__buf p = {0};
  ev_payload(e, &p);
  if (zstd) put_block_zstd(f, STROBE__BLK_EVENTS, &p);
  else put_block(f, STROBE__BLK_EVENTS, &p);
  strobe__buf_free(&p);
}

/* Header, sites 1 (scope) and 2 (scope), thread 0: the start of most bad files. */
static void put_prelude(strobe__buf *f) {
  put_header(f, 1);
  strobe__buf p = {0};
  put_site(&p, 1, STROBE_SITE_SCOPE, 1, "a", "");
  put_site(&p, 2, STROBE_SITE_SCOPE, 2, "b", "");
  put_block(f, STROBE__BLK_SITES, &p);
  strobe__buf_free(&p);
  put_thread(f, 0, 1, "t");
}

/* >>the valid file
 * Offsets of interesting blocks, for the truncation and corruption tests. */
typedef struct valid_file {
  strobe__buf f;
  size_t thread_block;  /* offset of the first THREAD block */
  size_t events_block;  /* offset of the first EVENTS block */
  size_t footer_block;  /* offset of the FOOTER */
} valid_file;

static valid_file build_valid(void) {
  valid_file v = {0};
  strobe__buf *f = &v.f;
  put_header(f, 1);

  strobe__buf p = {0};
  put_site(&p, 1, STROBE_SITE_SCOPE, 10, "outer", "cat");
  put_site(&p, 2, STROBE_SITE_SCOPE, 20, "inner", "");
  put_site(&p, 3, STROBE_SITE_VALUE, 30, "v", "");
  put_site(&p, 4, STROBE_SITE_COUNTER, 40, "ctr", "");
  put_site(&p, 5, STROBE_SITE_GAUGE, 50, "g", "");
  put_site(&p, 6, STROBE_SITE_FRAME, 60, "frame", "");
  put_site(&p, 7, STROBE_SITE_CUMULATIVE, 70, "loop", "");
  put_site(&p, 8, STROBE_SITE_STAGE, 80, "stage", "");
  put_block(f, STROBE__BLK_SITES, &p);
  strobe__buf_free(&p);

  v.thread_block = f->len;
  put_thread(f, 0, 1234, "main");
  put_thread(f, 1, 1235, "worker");

  v.events_block = f->len;
  evs e = ev_start(0, 1000);
  ev_end(&e, 1000); /* orphan: skipped, counted */
  ev_begin(&e, 1100, 1);
  ev_begin(&e, 1200, 2);
  ev_num(&e, 1300, 3, 3, 42.5);
  ev_cum(&e, 1400, 7, 10, 200, 10, 40);
  ev_end(&e, 1500);
  ev_begin(&e, 1600, 2);
  ev_end(&e, 1700);
  ev_num(&e, 1800, 4, 4, 3.0);
  ev_num(&e, 1900, 5, 5, 7.25);
  ev_frame(&e, 1950, 6);
  ev_end(&e, 2100);
  ev_begin(&e, 900, 1); /* before the epoch: negative time */
  ev_begin(&e, 2200, 2);
  ev_lost(&e, 2300, 5, 0); /* closes both as lost */
  ev_begin(&e, 2400, 1);   /* stays open: unfinished at end of file */
  ev_put(f, &e, 0);

  e = ev_start(1, 5000);
  ev_begin(&e, 5000, 1);
  ev_begin(&e, 5010, 2);
  ev_put(f, &e, 0);
  put_pair(f, STROBE__BLK_THREAD_END, 1, 0, 0);
  put_pair(f, STROBE__BLK_LOST, 0, 3, 1);
  put_pair(f, STROBE__BLK_CLOCK, 7777, 8888, 1);
  put_pair(f, 42, 1, 2, 1); /* a future block type: skipped */

  e = ev_start(0, 2400);
  ev_begin(&e, 2500, 2);
  ev_end(&e, 2600);
  ev_put(f, &e, 1);

  v.footer_block = f->len;
  strobe__buf_varint(&p, 9999); /* end_ticks */
  strobe__buf_varint(&p, 2);
  strobe__buf_varint(&p, 0);
  strobe__buf_varint(&p, 18);
  strobe__buf_varint(&p, 3);
  strobe__buf_varint(&p, 1);
  strobe__buf_varint(&p, 2);
  strobe__buf_varint(&p, 0);
  for (int i = 1; i <= 6; i++) strobe__buf_varint(&p, (uint64_t)i);
  put_block(f, STROBE__BLK_FOOTER, &p);
  strobe__buf_free(&p);
  CHECK(!f->failed);
  return v;
}

/* What the valid file yields, in order. */
typedef struct expect {
  strobe_capture_record_type type;
  uint32_t thread, site, depth;
  uint64_t ticks;
  double duration_ns, self_ns, value;
  uint64_t lost;
} expect;

#define T(ticks) ((double)((int64_t)(ticks) - (int64_t)EPOCH) * NS_PER_TICK)

static const expect g_expected[] = {
    {STROBE_REC_SITE, 0, 1, 0, 0, 0, 0, 0, 0},
    {STROBE_REC_SITE, 0, 2, 0, 0, 0, 0, 0, 0},
    {STROBE_REC_SITE, 0, 3, 0, 0, 0, 0, 0, 0},
    {STROBE_REC_SITE, 0, 4, 0, 0, 0, 0, 0, 0},
    {STROBE_REC_SITE, 0, 5, 0, 0, 0, 0, 0, 0},
    {STROBE_REC_SITE, 0, 6, 0, 0, 0, 0, 0, 0},
    {STROBE_REC_SITE, 0, 7, 0, 0, 0, 0, 0, 0},
    {STROBE_REC_SITE, 0, 8, 0, 0, 0, 0, 0, 0},
    {STROBE_REC_THREAD, 0, 0, 0, 0, 0, 0, 0, 0},
    {STROBE_REC_THREAD, 1, 0, 0, 0, 0, 0, 0, 0},
    {STROBE_REC_BEGIN, 0, 1, 1, 1100, 0, 0, 0, 0},
    {STROBE_REC_BEGIN, 0, 2, 2, 1200, 0, 0, 0, 0},
    {STROBE_REC_VALUE, 0, 3, 2, 1300, 0, 0, 42.5, 0},
    {STROBE_REC_CUMULATIVE, 0, 7, 2, 1400, 0, 0, 0, 0},
    {STROBE_REC_END, 0, 2, 2, 1500, 150, 150, 0, 0},
    {STROBE_REC_BEGIN, 0, 2, 2, 1600, 0, 0, 0, 0},
    {STROBE_REC_END, 0, 2, 2, 1700, 50, 50, 0, 0},
    {STROBE_REC_COUNTER, 0, 4, 1, 1800, 0, 0, 3.0, 0},
    {STROBE_REC_GAUGE, 0, 5, 1, 1900, 0, 0, 7.25, 0},
    {STROBE_REC_FRAME, 0, 6, 1, 1950, 0, 0, 0, 0},
    {STROBE_REC_END, 0, 1, 1, 2100, 500, 300, 0, 0}, /* 500 minus children 150 + 50 */
    {STROBE_REC_BEGIN, 0, 1, 1, 900, 0, 0, 0, 0},
    {STROBE_REC_BEGIN, 0, 2, 2, 2200, 0, 0, 0, 0},
    {STROBE_REC_LOST, 0, 0, 0, 2300, 0, 0, 0, 5},
    {STROBE_REC_BEGIN, 0, 1, 1, 2400, 0, 0, 0, 0},
    {STROBE_REC_BEGIN, 1, 1, 1, 5000, 0, 0, 0, 0},
    {STROBE_REC_BEGIN, 1, 2, 2, 5010, 0, 0, 0, 0},
    {STROBE_REC_THREAD_END, 1, 0, 2, 0, 0, 0, 0, 0},
    {STROBE_REC_LOST, 0, 0, 1, 0, 0, 0, 0, 3},
    {STROBE_REC_BEGIN, 0, 2, 2, 2500, 0, 0, 0, 0},
    {STROBE_REC_END, 0, 2, 2, 2600, 50, 50, 0, 0},
};
#define N_EXPECTED (sizeof g_expected / sizeof g_expected[0])

static int has_time(strobe_capture_record_type t) {
  return t != STROBE_REC_SITE && t != STROBE_REC_THREAD && t != STROBE_REC_THREAD_END &&
         !(t == STROBE_REC_LOST);
}

static void check_record(const strobe_capture_record *r, const expect *x) {
  CHECK_EQ_INT(r->type, x->type);
  CHECK_EQ_INT(r->thread, x->thread);
  CHECK_EQ_INT(r->site, x->site);
  CHECK_EQ_INT(r->depth, x->depth);
  if (has_time(x->type) || x->ticks) {
    CHECK_EQ_INT(r->ticks, x->ticks);
    CHECK_NEAR(r->time_ns, T(x->ticks), 1e-9);
  }
  CHECK_NEAR(r->duration_ns, x->duration_ns, 1e-9);
  CHECK_NEAR(r->self_ns, x->self_ns, 1e-9);
  CHECK_NEAR(r->value, x->value, 0);
  CHECK_EQ_INT(r->lost, x->lost);
  if (x->type == STROBE_REC_CUMULATIVE) {
    CHECK_EQ_INT(r->count, 10);
    CHECK_NEAR(r->total_ns, 100, 1e-9);
    CHECK_NEAR(r->min_ns, 5, 1e-9);
    CHECK_NEAR(r->max_ns, 20, 1e-9);
  }
}

/* Reads to the end; returns the final code and the number of records. */
static int drain(strobe_capture *c, size_t *n) {
  strobe_capture_record r;
  int rc;
  *n = 0;
  while ((rc = strobe_capture_next(c, &r)) == 1) (*n)++;
  return rc;
}

/* Opens bytes, reads to the end, checks the final code and record count,
 * and that the error is sticky. Returns the totals. */
static strobe_capture_totals expect_end(const strobe__buf *f, int rc_want, size_t n_want) {
  strobe_capture *c;
  REQUIRE_EQ_INT(strobe_capture_open_memory(f->data, f->len, &c), 0);
  size_t n;
  CHECK_EQ_INT(drain(c, &n), rc_want);
  CHECK_EQ_INT(n, n_want);
  strobe_capture_record r;
  CHECK_EQ_INT(strobe_capture_next(c, &r), rc_want); /* sticky */
  CHECK_EQ_INT(strobe_capture_next(c, &r), rc_want);
  strobe_capture_totals t = strobe_capture_query_totals(c);
  strobe_capture_close(c);
  size_t read;
  CHECK_EQ_INT(batch_check(f->data, f->len, &read), 0); /* strobe_capture_next_batch: the same */
  CHECK_EQ_INT(read, n_want);
  return t;
}

/* >>tests */

static void check_valid_reader(strobe_capture *c) {
  const strobe_capture_header *h = strobe_capture_query_header(c);
  CHECK_EQ_INT(h->version, 1);
  CHECK(strcmp(h->clock_source, "tsc") == 0);
  CHECK(strcmp(h->kind, "file") == 0);
  CHECK_NEAR(h->ns_per_tick, NS_PER_TICK, 0);
  CHECK_EQ_INT(h->epoch_ticks, EPOCH);
  CHECK_EQ_INT(h->ring_events, 4096);
  CHECK_EQ_INT(h->clock_invariant, 1);
  CHECK_EQ_INT(strlen(h->features), sizeof h->features - 1);
  CHECK_NEAR(strobe_capture_ticks_to_ns(c, 0), -500, 0);

  strobe_capture_record r;
  for (size_t i = 0; i < N_EXPECTED; i++) {
    CHECK_EQ_INT(strobe_capture_next(c, &r), 1);
    check_record(&r, &g_expected[i]);
    if (r.type == STROBE_REC_THREAD_END) { /* counted at the thread's end, not the file's */
      CHECK_EQ_INT(strobe_capture_query_totals(c).unfinished, 2);
      CHECK_EQ_INT(strobe_capture_query_thread(c, 1)->ended, 1);
    }
  }
  CHECK_EQ_INT(strobe_capture_next(c, &r), 0);
  CHECK_EQ_INT(strobe_capture_next(c, &r), 0);

  strobe_capture_totals t = strobe_capture_query_totals(c);
  CHECK_EQ_INT(t.blocks, 11);
  CHECK_EQ_INT(t.events, 20);
  CHECK_EQ_INT(t.scopes, 4);
  CHECK_EQ_INT(t.lost, 3); /* LOST blocks only: a LOST op's drops are in a block too */
  CHECK_EQ_INT(t.orphan_ends, 1);
  CHECK_EQ_INT(t.unfinished, 3); /* 2 at thread 1's end, 1 on thread 0 at the end of the file */
  CHECK_EQ_INT(t.lost_scopes, 2);
  CHECK_EQ_INT(t.footer, 1);
  CHECK_EQ_INT(t.cut_short, 0);
  CHECK_EQ_INT(t.end_ticks, 9999);
  CHECK_EQ_INT(t.misuse.end_without_begin, 1);
  CHECK_EQ_INT(t.misuse.unbalanced, 2);
  CHECK_EQ_INT(t.misuse.open_at_exit, 3);
  CHECK_EQ_INT(t.misuse.depth_overflow, 4);
  CHECK_EQ_INT(t.misuse.value_without_scope, 5);
  CHECK_EQ_INT(t.misuse.cumulative_overflow, 6);

  CHECK_EQ_INT(strobe_capture_query_site_limit(c), 9);
  CHECK(strobe_capture_query_site(c, 0) == NULL);
  CHECK(strobe_capture_query_site(c, 9) == NULL);
  const strobe_capture_site *s = strobe_capture_query_site(c, 1);
  CHECK(s && s->id == 1 && s->kind == STROBE_SITE_SCOPE && s->line == 10);
  CHECK(strcmp(s->name, "outer") == 0 && strcmp(s->category, "cat") == 0);
  CHECK(strcmp(s->file, "file.c") == 0 && strcmp(s->function, "func") == 0 && strcmp(s->parent, "") == 0);
  s = strobe_capture_query_site(c, 7);
  CHECK(s && s->kind == STROBE_SITE_CUMULATIVE && strcmp(s->category, "") == 0);
  s = strobe_capture_query_site(c, 8);
  CHECK(s && s->kind == STROBE_SITE_STAGE && s->line == 80 && strcmp(s->parent, "parent_stage") == 0);

  CHECK_EQ_INT(strobe_capture_query_thread_count(c), 2);
  const strobe_capture_thread *t0 = strobe_capture_query_thread(c, 0), *t1 = strobe_capture_query_thread(c, 1);
  CHECK(t0 && t1 && !strobe_capture_query_thread(c, 2));
  CHECK(t0->index == 0 && t0->os_tid == 1234 && strcmp(t0->name, "main") == 0);
  CHECK_EQ_INT(t0->events, 18);
  CHECK_EQ_INT(t0->lost, 3);
  CHECK_EQ_INT(t0->ended, 0);
  CHECK(t1->index == 1 && t1->os_tid == 1235 && strcmp(t1->name, "worker") == 0);
  CHECK_EQ_INT(t1->events, 2);
  CHECK_EQ_INT(t1->lost, 0);
  CHECK_EQ_INT(t1->ended, 1);
}

static void test_valid(void) {
  valid_file v = build_valid();
  strobe_capture *c = NULL;
  REQUIRE_EQ_INT(strobe_capture_open_memory(v.f.data, v.f.len, &c), 0);
  check_valid_reader(c);
  strobe_capture_close(c);

  /* The same bytes through a file. */
  char path[] = "/tmp/strobe_test_capture_XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  FILE *fp = fdopen(fd, "wb");
  CHECK(fp && fwrite(v.f.data, 1, v.f.len, fp) == v.f.len);
  CHECK(fclose(fp) == 0);
  REQUIRE_EQ_INT(strobe_capture_open(path, &c), 0);
  check_valid_reader(c);
  strobe_capture_close(c);

  /* Cut inside the FOOTER's payload, through the file path too. */
  fp = fopen(path, "wb");
  CHECK(fp && fwrite(v.f.data, 1, v.f.len - 1, fp) == v.f.len - 1);
  CHECK(fclose(fp) == 0);
  REQUIRE_EQ_INT(strobe_capture_open(path, &c), 0);
  size_t n;
  CHECK_EQ_INT(drain(c, &n), STROBE_ETRUNCATED);
  CHECK_EQ_INT(n, N_EXPECTED);
  CHECK_EQ_INT(strobe_capture_query_totals(c).cut_short, 1);
  CHECK_EQ_INT(strobe_capture_query_totals(c).unfinished, 3); /* open where the file was cut */
  strobe_capture_close(c);
  remove(path);

  c = (strobe_capture *)1;
  CHECK_EQ_INT(strobe_capture_open(path, &c), STROBE_EIO); /* removed */
  CHECK(c == NULL);
  CHECK_EQ_INT(strobe_capture_open(NULL, &c), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_capture_open_memory(v.f.data, v.f.len, NULL), STROBE_EINVAL);
  strobe_capture_close(NULL);
  strobe__buf_free(&v.f);
}

/* Without its FOOTER the file reads to the end and says it was cut short. */
static void test_missing_footer(void) {
  valid_file v = build_valid();
  v.f.len = v.footer_block;
  strobe_capture_totals t = expect_end(&v.f, 0, N_EXPECTED);
  CHECK_EQ_INT(t.footer, 0);
  CHECK_EQ_INT(t.cut_short, 1);
  CHECK_EQ_INT(t.unfinished, 3);
  CHECK_EQ_INT(t.end_ticks, 5010); /* the latest event */
  CHECK_EQ_INT(t.misuse.unbalanced, 0);
  strobe__buf_free(&v.f);
}

/* Every prefix of the valid file: the header parses or is ETRUNCATED; then
 * records come in the same order as from the whole file, and the end is 0
 * at a block boundary and ETRUNCATED inside a block, with cut_short set. */
static void test_every_prefix(void) {
  valid_file v = build_valid();
  size_t header_len = 16 + (v.f.data[12] | (size_t)v.f.data[13] << 8);
  char path[] = "/tmp/strobe_test_prefix_XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  /* Each prefix from memory (even len) or from a file (odd len): both sources. */
  for (size_t len = 0; len < v.f.len; len++) {
    strobe_capture *c;
    int rc;
    if (len % 2) {
      FILE *fp = fopen(path, "wb");
      CHECK(fp && fwrite(v.f.data, 1, len, fp) == len);
      CHECK(fclose(fp) == 0);
      rc = strobe_capture_open(path, &c);
    } else {
      rc = strobe_capture_open_memory(v.f.data, len, &c);
      size_t read;
      CHECK_EQ_INT(batch_check(v.f.data, len, &read), 0);
    }
    if (len < header_len) {
      CHECK_EQ_INT(rc, STROBE_ETRUNCATED);
      CHECK(c == NULL);
      continue;
    }
    CHECK_EQ_INT(rc, 0);
    strobe_capture_record r;
    size_t n = 0;
    while ((rc = strobe_capture_next(c, &r)) == 1) {
      CHECK(n < N_EXPECTED);
      CHECK_EQ_INT(r.type, g_expected[n].type);
      CHECK_EQ_INT(r.site, g_expected[n].site);
      CHECK_EQ_INT(r.depth, g_expected[n].depth);
      n++;
    }
    CHECK(rc == 0 || rc == STROBE_ETRUNCATED);
    /* A boundary is exactly where the next block's header starts. */
    int boundary = len == header_len;
    for (size_t off = header_len; off < len;) {
      uint32_t stored = (uint32_t)v.f.data[off + 4] | (uint32_t)v.f.data[off + 5] << 8 |
                        (uint32_t)v.f.data[off + 6] << 16 | (uint32_t)v.f.data[off + 7] << 24;
      off += STROBE__BLOCK_HEADER + stored;
      if (off == len) boundary = 1;
    }
    CHECK_EQ_INT(rc, boundary ? 0 : STROBE_ETRUNCATED);
    strobe_capture_totals t = strobe_capture_query_totals(c);
    CHECK_EQ_INT(t.cut_short, 1);
    CHECK_EQ_INT(t.footer, 0);
    CHECK_EQ_INT(strobe_capture_next(c, &r), rc);
    strobe_capture_close(c);
  }
  remove(path);
  /* Cut inside the first EVENTS block: the sites and threads, then ETRUNCATED. */
  v.f.len = v.events_block + STROBE__BLOCK_HEADER + 3;
  CHECK_EQ_INT(expect_end(&v.f, STROBE_ETRUNCATED, 10).cut_short, 1);
  strobe__buf_free(&v.f);
}

static void test_header_errors(void) {
  strobe__buf f = {0};
  put_header(&f, 1);
  strobe_capture *c = (strobe_capture *)1;

  f.data[1] = 'X';
  CHECK_EQ_INT(strobe_capture_open_memory(f.data, f.len, &c), STROBE_EBADMAGIC);
  CHECK(c == NULL);
  CHECK_EQ_INT(strobe_capture_open_memory(f.data, 3, &c), STROBE_EBADMAGIC);
  CHECK_EQ_INT(strobe_capture_open_memory("hello", 5, &c), STROBE_EBADMAGIC);
  f.data[1] = 'S';
  CHECK_EQ_INT(strobe_capture_open_memory(f.data, 0, &c), STROBE_ETRUNCATED);
  CHECK_EQ_INT(strobe_capture_open_memory(f.data, 5, &c), STROBE_ETRUNCATED);
  CHECK_EQ_INT(strobe_capture_open_memory(f.data, 10, &c), STROBE_ETRUNCATED);
  CHECK_EQ_INT(strobe_capture_open_memory(f.data, 15, &c), STROBE_ETRUNCATED);
  CHECK_EQ_INT(strobe_capture_open_memory(f.data, f.len - 1, &c), STROBE_ETRUNCATED);
  CHECK(c == NULL);
  REQUIRE_EQ_INT(strobe_capture_open_memory(f.data, f.len, &c), 0);
  strobe_capture_close(c);

  /* A version after this reader's, and version 0, even with nothing after the version. */
  f.data[8] = STROBE_CAPTURE_FORMAT_VERSION + 1;
  CHECK_EQ_INT(strobe_capture_open_memory(f.data, f.len, &c), STROBE_EVERSION);
  CHECK_EQ_INT(strobe_capture_open_memory(f.data, 12, &c), STROBE_EVERSION);
  f.data[8] = 0;
  CHECK_EQ_INT(strobe_capture_open_memory(f.data, f.len, &c), STROBE_EVERSION);
  f.data[8] = 1;

  /* fields_len beyond 64 KiB. */
  f.data[14] = 2;
  CHECK_EQ_INT(strobe_capture_open_memory(f.data, f.len, &c), STROBE_ECORRUPT);
  f.data[14] = 0;

  /* A field running past fields_len, and a known field of the wrong size. */
  strobe__buf g = {0};
  strobe__buf_put(&g, STROBE__MAGIC, STROBE__MAGIC_LEN);
  strobe__buf_u32(&g, 1);
  strobe__buf_u32(&g, 6);
  strobe__buf_u16(&g, STROBE__TAG_PID);
  strobe__buf_u16(&g, 8);
  strobe__buf_u16(&g, 0);
  CHECK_EQ_INT(strobe_capture_open_memory(g.data, g.len, &c), STROBE_ECORRUPT);
  g.data[18] = 2; /* pid of 2 bytes */
  CHECK_EQ_INT(strobe_capture_open_memory(g.data, g.len, &c), STROBE_ECORRUPT);
  strobe__buf_free(&g);

  /* No fields at all: defaults. */
  strobe__buf_put(&g, STROBE__MAGIC, STROBE__MAGIC_LEN);
  strobe__buf_u32(&g, 1);
  strobe__buf_u32(&g, 0);
  REQUIRE_EQ_INT(strobe_capture_open_memory(g.data, g.len, &c), 0);
  CHECK_NEAR(strobe_capture_query_header(c)->ns_per_tick, 1.0, 0);
  CHECK_EQ_INT(strobe_capture_query_header(c)->kind[0], 0);
  strobe_capture_record r;
  CHECK_EQ_INT(strobe_capture_next(c, &r), 0);
  CHECK_EQ_INT(strobe_capture_query_totals(c).cut_short, 1);
  strobe_capture_close(c);
  strobe__buf_free(&g);
  strobe__buf_free(&f);
}

/* A CRC mismatch anywhere in a block (header or payload) is ECORRUPT,
 * after every record of the blocks before it. */
/* CRC-32C bit by bit, as the format defines it (docs/capture-format.md):
 * the reference the library's table-driven one must match. */
static uint32_t crc32c_bitwise(const uint8_t *p, size_t n) {
  uint32_t crc = ~0u;
  while (n--) {
    crc ^= *p++;
    for (int k = 0; k < 8; k++) crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
  }
  return ~crc;
}

static void test_crc(void) {
  /* The checksum itself: the standard check value, then every length and
   * alignment of a buffer, whole and in two parts (a block's CRC is taken
   * over its header, then its payload). */
  CHECK_EQ_U64(strobe__crc32c(0, "123456789", 9), 0xE3069283u);
  CHECK_EQ_U64(strobe__crc32c_tables(0, "123456789", 9), 0xE3069283u);
  uint8_t bytes[300];
  for (size_t i = 0; i < sizeof bytes; i++) bytes[i] = (uint8_t)(i * 131u + 7u);
  for (size_t off = 0; off < 8; off++)
    for (size_t n = 0; off + n <= sizeof bytes; n += 1 + n / 16) {
      uint32_t want = crc32c_bitwise(bytes + off, n);
      CHECK_EQ_U64(strobe__crc32c(0, bytes + off, n), want);
      CHECK_EQ_U64(strobe__crc32c(strobe__crc32c(0, bytes + off, n / 3), bytes + off + n / 3, n - n / 3), want);
      /* The tables, which strobe__crc32c skips where the CPU computes it. */
      CHECK_EQ_U64(strobe__crc32c_tables(0, bytes + off, n), want);
      CHECK_EQ_U64(strobe__crc32c(strobe__crc32c_tables(0, bytes + off, n / 3), bytes + off + n / 3, n - n / 3), want);
    }
  valid_file v = build_valid();
  v.f.data[v.thread_block + STROBE__BLOCK_HEADER + 1] ^= 1; /* the os_tid byte */
  expect_end(&v.f, STROBE_ECORRUPT, 8);
  v.f.data[v.thread_block + STROBE__BLOCK_HEADER + 1] ^= 1;
  v.f.data[v.thread_block + 12] ^= 0x80; /* the CRC itself */
  expect_end(&v.f, STROBE_ECORRUPT, 8);
  v.f.data[v.thread_block + 12] ^= 0x80;
  v.f.data[v.thread_block + 2] = 1; /* reserved bytes are covered too */
  expect_end(&v.f, STROBE_ECORRUPT, 8);
  v.f.data[v.thread_block + 2] = 0;
  expect_end(&v.f, 0, N_EXPECTED);
  strobe__buf_free(&v.f);
}

static void test_zstd(void) {
  /* A good zstd block decodes (the valid file has one; here SITES too). */
  strobe__buf f = {0}, p = {0};
  put_header(&f, 1);
  put_site(&p, 9, STROBE_SITE_GAUGE, 99, "zz", "cat");
  put_block_zstd(&f, STROBE__BLK_SITES, &p);
  size_t good_len = f.len;
  expect_end(&f, 0, 1);

  /* Garbage that claims to be zstd, with a correct CRC. */
  put_block_as(&f, STROBE__BLK_THREAD, STROBE__CODEC_ZSTD, "garbage!garbage!", 16, 100);
  expect_end(&f, STROBE_ECORRUPT, 1);

  /* A real frame whose size is not raw_len (too large and too small). */
  size_t cap = ZSTD_compressBound(p.len);
  void *z = malloc(cap);
  CHECK(z);
  size_t zn = ZSTD_compress(z, cap, p.data, p.len, 1);
  CHECK(!ZSTD_isError(zn));
  f.len = good_len;
  put_block_as(&f, STROBE__BLK_SITES, STROBE__CODEC_ZSTD, z, zn, (uint32_t)p.len + 1);
  expect_end(&f, STROBE_ECORRUPT, 1);
  f.len = good_len;
  put_block_as(&f, STROBE__BLK_SITES, STROBE__CODEC_ZSTD, z, zn, (uint32_t)p.len - 1);
  expect_end(&f, STROBE_ECORRUPT, 1);

  /* Two frames where one is allowed. */
  uint8_t two[1024];
  CHECK(2 * zn <= sizeof two);
  memcpy(two, z, zn);
  memcpy(two + zn, z, zn);
  f.len = good_len;
  put_block_as(&f, STROBE__BLK_SITES, STROBE__CODEC_ZSTD, two, 2 * zn, (uint32_t)(2 * p.len));
  expect_end(&f, STROBE_ECORRUPT, 1);

  /* Frames without a declared size: one decodes, two are rejected. */
  ZSTD_CCtx *cc = ZSTD_createCCtx();
  CHECK(cc && !ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 0)));
  zn = ZSTD_compress2(cc, z, cap, p.data, p.len);
  CHECK(!ZSTD_isError(zn) && ZSTD_getFrameContentSize(z, zn) == ZSTD_CONTENTSIZE_UNKNOWN);
  ZSTD_freeCCtx(cc);
  f.len = good_len;
  put_block_as(&f, STROBE__BLK_SITES, STROBE__CODEC_ZSTD, z, zn, (uint32_t)p.len);
  expect_end(&f, 0, 2); /* site 9 again, identical */
  memcpy(two, z, zn);
  memcpy(two + zn, z, zn);
  f.len = good_len;
  put_block_as(&f, STROBE__BLK_SITES, STROBE__CODEC_ZSTD, two, 2 * zn, (uint32_t)(2 * p.len));
  expect_end(&f, STROBE_ECORRUPT, 1);

  /* Unknown codec on a known block; raw codec with stored != raw. */
  f.len = good_len;
  put_block_as(&f, STROBE__BLK_SITES, 7, p.data, p.len, (uint32_t)p.len);
  expect_end(&f, STROBE_ECORRUPT, 1);
  f.len = good_len;
  put_block_as(&f, STROBE__BLK_SITES, STROBE__CODEC_RAW, p.data, p.len, (uint32_t)p.len + 1);
  expect_end(&f, STROBE_ECORRUPT, 1);
  /* ... but an unknown codec on an unknown block is skipped. */
  f.len = good_len;
  put_block_as(&f, 200, 7, p.data, p.len, 12345);
  expect_end(&f, 0, 1);

  /* raw_len above 64 MiB, whatever follows. */
  f.len = good_len;
  put_block_as(&f, STROBE__BLK_SITES, STROBE__CODEC_ZSTD, z, zn, STROBE__MAX_BLOCK_RAW + 1);
  expect_end(&f, STROBE_ECORRUPT, 1);
  /* A huge claimed stored_len on a cut file is truncation, not an allocation. */
  f.len = good_len;
  strobe__block_header h = {STROBE__BLK_SITES, STROBE__CODEC_RAW, STROBE__MAX_BLOCK_RAW, STROBE__MAX_BLOCK_RAW, 0};
  uint8_t hb[STROBE__BLOCK_HEADER];
  strobe__block_header_encode(hb, &h);
  strobe__buf_put(&f, hb, sizeof hb);
  strobe__buf_put(&f, "abc", 3);
  expect_end(&f, STROBE_ETRUNCATED, 1);

  free(z);
  strobe__buf_free(&p);
  strobe__buf_free(&f);
}

/* A file of the prelude plus one SITES payload. */
static int sites_result(const strobe__buf *sites, size_t *n) {
  strobe__buf f = {0};
  put_prelude(&f);
  put_block(&f, STROBE__BLK_SITES, sites);
  strobe_capture *c;
  REQUIRE_EQ_INT(strobe_capture_open_memory(f.data, f.len, &c), 0);
  int rc = drain(c, n);
  strobe_capture_close(c);
  strobe__buf_free(&f);
  return rc;
}

static void test_sites(void) {
  strobe__buf p = {0};
  size_t n;
  put_site(&p, 3, STROBE_SITE_SCOPE, 1, "x", "");
  put_site(&p, 0, STROBE_SITE_SCOPE, 1, "zero", "");
  CHECK_EQ_INT(sites_result(&p, &n), STROBE_ERANGE);
  CHECK_EQ_INT(n, 4); /* 2 + thread + site 3 */
  strobe__buf_free(&p);

  put_site(&p, 65536, STROBE_SITE_SCOPE, 1, "big", "");
  CHECK_EQ_INT(sites_result(&p, &n), STROBE_ERANGE);
  strobe__buf_free(&p);

  put_site(&p, 65535, STROBE_SITE_SCOPE, 1, "max", "");
  CHECK_EQ_INT(sites_result(&p, &n), 0);
  CHECK_EQ_INT(n, 4);
  strobe__buf_free(&p);

  put_site(&p, 4, 8, 1, "kind8", "");
  CHECK_EQ_INT(sites_result(&p, &n), STROBE_ECORRUPT);
  strobe__buf_free(&p);
  put_site(&p, 4, 0, 1, "kind0", "");
  CHECK_EQ_INT(sites_result(&p, &n), STROBE_ECORRUPT);
  strobe__buf_free(&p);

  /* The same definition again is fine; a different one is corrupt. */
  put_site(&p, 1, STROBE_SITE_SCOPE, 1, "a", "");
  CHECK_EQ_INT(sites_result(&p, &n), 0);
  CHECK_EQ_INT(n, 4);
  strobe__buf_free(&p);
  put_site(&p, 1, STROBE_SITE_SCOPE, 1, "A", "");
  CHECK_EQ_INT(sites_result(&p, &n), STROBE_ECORRUPT);
  strobe__buf_free(&p);
  put_site(&p, 1, STROBE_SITE_STAGE, 1, "a", ""); /* same strings but a parent and kind */
  CHECK_EQ_INT(sites_result(&p, &n), STROBE_ECORRUPT);
  strobe__buf_free(&p);

  /* A string cut by the end of the payload. */
  put_site(&p, 5, STROBE_SITE_SCOPE, 1, "abcdef", "");
  p.len -= 3;
  CHECK_EQ_INT(sites_result(&p, &n), STROBE_ECORRUPT);
  strobe__buf_free(&p);
}

/* A file of the prelude plus one EVENTS block of thread 0 built by `fill`. */
static strobe_capture_totals events_result(void (*fill)(evs *), int rc_want, size_t n_want) {
  strobe__buf f = {0};
  put_prelude(&f);
  evs e = ev_start(0, 100);
  fill(&e);
  ev_put(&f, &e, 0);
  strobe_capture_totals t = expect_end(&f, rc_want, 3 + n_want);
  strobe__buf_free(&f);
  return t;
}

static void fill_undefined_site(evs *e) {
  ev_begin(e, 100, 1);
  ev_begin(e, 101, 3);
}
static void fill_undefined_value_site(evs *e) { ev_num(e, 100, 3, 9, 1.0); }
static void fill_deep(evs *e) {
  for (uint64_t i = 0; i < 257; i++) ev_begin(e, 100 + i, 1);
}
static void fill_256(evs *e) {
  for (uint64_t i = 0; i < 256; i++) ev_begin(e, 100 + i, 2);
  for (uint64_t i = 0; i < 256; i++) ev_end(e, 1000 + i);
}
static void fill_unknown_kind(evs *e) {
  ev_begin(e, 100, 1);
  strobe__buf_varint(&e->ops, 9u << 2 | STROBE__OP_OTHER);
  ev_time(e, 101);
}
static void fill_op3(evs *e) {
  strobe__buf_varint(&e->ops, 3);
  ev_time(e, 101);
}
static void fill_lost_deep(evs *e) { ev_lost(e, 100, 1, 257); }
static void fill_lost_shallow(evs *e) {
  ev_begin(e, 100, 1);
  ev_lost(e, 101, 4, 9); /* deeper than what the reader has open: closes nothing */
  ev_end(e, 102);
}
static void fill_orphans(evs *e) {
  ev_end(e, 100);
  ev_end(e, 101);
  ev_begin(e, 102, 1);
  ev_end(e, 103);
  ev_end(e, 104);
}

static void test_events(void) {
  events_result(fill_undefined_site, STROBE_ERANGE, 1);
  events_result(fill_undefined_value_site, STROBE_ERANGE, 0);
  events_result(fill_deep, STROBE_ERANGE, 256);
  strobe_capture_totals t = events_result(fill_256, 0, 512);
  CHECK_EQ_INT(t.scopes, 256);
  events_result(fill_unknown_kind, STROBE_ECORRUPT, 1);
  events_result(fill_op3, STROBE_ECORRUPT, 0);
  events_result(fill_lost_deep, STROBE_ERANGE, 0);
  t = events_result(fill_lost_shallow, 0, 3);
  CHECK_EQ_INT(t.lost_scopes, 0);
  CHECK_EQ_INT(t.lost, 0);
  CHECK_EQ_INT(t.scopes, 1);
  t = events_result(fill_orphans, 0, 2);
  CHECK_EQ_INT(t.orphan_ends, 3);
  CHECK_EQ_INT(t.events, 5);
  CHECK_EQ_INT(t.end_ticks, 104);

  /* An EVENTS block naming an undefined thread; a thread index too large. */
  strobe__buf f = {0};
  put_prelude(&f);
  evs e = ev_start(1, 100);
  ev_begin(&e, 100, 1);
  ev_put(&f, &e, 0);
  expect_end(&f, STROBE_ERANGE, 3);
  f.len = 0;
  put_prelude(&f);
  put_thread(&f, 1000001, 5, "x");
  expect_end(&f, STROBE_ERANGE, 3);
  f.len = 0;
  put_prelude(&f);
  put_thread(&f, 1000000, 5, "x");
  expect_end(&f, 0, 4);
  f.len = 0;
  put_prelude(&f);
  put_pair(&f, STROBE__BLK_THREAD_END, 3, 0, 0);
  expect_end(&f, STROBE_ERANGE, 3);
  f.len = 0;
  put_prelude(&f);
  put_pair(&f, STROBE__BLK_LOST, 3, 1, 1);
  expect_end(&f, STROBE_ERANGE, 3);

  /* count larger than the ops bytes could hold; ops_len past the payload;
   * a leftover times byte. */
  strobe__buf p = {0};
  uint64_t bad[][4] = {{0, 5, 100, 2}, {0, 1, 100, 50}};
  for (int i = 0; i < 2; i++) {
    f.len = 0;
    put_prelude(&f);
    p.len = 0;
    for (int k = 0; k < 4; k++) strobe__buf_varint(&p, bad[i][k]);
    strobe__buf_put(&p, "\x04\x04\x00\x00", 4); /* two BEGINs of site 1 */
    put_block(&f, STROBE__BLK_EVENTS, &p);
    expect_end(&f, STROBE_ECORRUPT, 3);
  }
  f.len = 0;
  put_prelude(&f);
  e = ev_start(0, 100);
  ev_begin(&e, 100, 1);
  strobe__buf_varint(&e.times, 0);
  ev_put(&f, &e, 0);
  expect_end(&f, STROBE_ECORRUPT, 4); /* after the BEGIN */

  /* A FOOTER naming an undefined thread; one with trailing bytes. */
  f.len = 0;
  put_prelude(&f);
  p.len = 0;
  for (int k = 0; k < 11; k++) strobe__buf_varint(&p, k == 1 ? 1 : k == 2 ? 5 : 0);
  put_block(&f, STROBE__BLK_FOOTER, &p);
  expect_end(&f, STROBE_ERANGE, 3);
  f.len = 0;
  put_prelude(&f);
  p.len = 0;
  for (int k = 0; k < 9; k++) strobe__buf_varint(&p, 0);
  put_block(&f, STROBE__BLK_FOOTER, &p);
  expect_end(&f, STROBE_ECORRUPT, 3);
  p.len--;
  f.len = 0;
  put_prelude(&f);
  put_block(&f, STROBE__BLK_FOOTER, &p);
  CHECK_EQ_INT(expect_end(&f, 0, 3).footer, 1);
  strobe__buf_free(&p);
  strobe__buf_free(&f);
}

/* strobe_capture_next_batch (expect_end and every_prefix compare it with
 * strobe_capture_next on every file here): a block's events fill whole
 * batches, slots that held other records are rewritten whole, and the
 * error after a batch's records comes at the next call. */
static void test_batches(void) {
  strobe__buf f = {0};
  put_prelude(&f);
  evs e = ev_start(0, 100);
  uint64_t t = 100;
  for (int i = 0; i < 300; i++) { /* BEGINs, ENDs, orphans, values and LOSTs through several batches */
    ev_begin(&e, t++, 1 + (uint32_t)(i % 2));
    if (i % 7 == 0) ev_lost(&e, t++, 2, 0); /* closes the scope: the END below is an orphan */
    if (i % 5 == 0) ev_frame(&e, t++, 2);
    ev_end(&e, t++);
  }
  ev_put(&f, &e, 1);
  expect_end(&f, 0, 3 + 300 + 43 + 60 + 257); /* sites, thread, BEGINs, LOSTs, frames, ENDs */

  strobe_capture *c;
  REQUIRE_EQ_INT(strobe_capture_open_memory(f.data, f.len, &c), 0);
  const strobe_capture_record *recs;
  int n;
  while ((n = strobe_capture_next_batch(c, &recs)) == 1 && recs[0].type != STROBE_REC_BEGIN) {
  }
  CHECK_EQ_INT(n, STROBE_CAPTURE_BATCH_MAX); /* the events come a whole batch at a time */
  strobe_capture_close(c);

  /* A bad op after 200 good events: those first, the error at the next call. */
  f.len = 0;
  put_prelude(&f);
  e = ev_start(0, 100);
  for (int i = 0; i < 100; i++) ev_begin(&e, 100 + (uint64_t)i, 1), ev_end(&e, 100 + (uint64_t)i);
  strobe__buf_varint(&e.ops, 3); /* op code 3: unknown */
  ev_time(&e, 300);
  ev_put(&f, &e, 0);
  expect_end(&f, STROBE_ECORRUPT, 3 + 200);
  REQUIRE_EQ_INT(strobe_capture_open_memory(f.data, f.len, &c), 0);
  int got = 0;
  while ((n = strobe_capture_next_batch(c, &recs)) > 0) got += n;
  CHECK_EQ_INT(n, STROBE_ECORRUPT);
  CHECK_EQ_INT(got, 3 + 200);
  CHECK_EQ_INT(strobe_capture_next_batch(c, &recs), STROBE_ECORRUPT);
  CHECK(recs == NULL);
  CHECK_EQ_INT(strobe_capture_next_batch(NULL, &recs), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_capture_next_batch(c, NULL), STROBE_EINVAL);
  strobe_capture_close(c);
  strobe__buf_free(&f);
}

/* strobe_capture_set_records: the records wanted, in the order of the
 * whole stream, every field the same, and the same totals; the others are
 * read (scope stacks, durations, counts), only not returned. */
static void test_records_wanted(void) {
  valid_file v = build_valid();
  static const uint64_t masks[] = {
      STROBE_CAPTURE_ALL_RECORDS & ~(1ull << STROBE_REC_BEGIN), /* strobe report's */
      1ull << STROBE_REC_END,
      1ull << STROBE_REC_SITE | 1ull << STROBE_REC_THREAD | 1ull << STROBE_REC_LOST,
      1ull << STROBE_REC_VALUE | 1ull << STROBE_REC_FRAME | 1ull << STROBE_REC_CUMULATIVE};
  for (size_t m = 0; m < sizeof masks / sizeof masks[0]; m++) {
    for (int batched = 0; batched < 2; batched++) {
      strobe_capture *all, *some;
      REQUIRE_EQ_INT(strobe_capture_open_memory(v.f.data, v.f.len, &all), 0);
      REQUIRE_EQ_INT(strobe_capture_open_memory(v.f.data, v.f.len, &some), 0);
      CHECK_EQ_INT(strobe_capture_set_records(some, masks[m]), 0);
      strobe_capture_record r;
      const strobe_capture_record *recs = NULL;
      int n = 0, i = 0, rc, kept = 0;
      while ((rc = strobe_capture_next(all, &r)) == 1) {
        if (!(masks[m] >> r.type & 1)) continue;
        if (i == n) { /* the next record of `some`, one at a time or a batch at a time */
          static strobe_capture_record one;
          n = batched ? strobe_capture_next_batch(some, &recs) : strobe_capture_next(some, &one);
          if (!batched) recs = &one;
          i = 0;
          REQUIRE(n > 0);
        }
        CHECK(batch_same_record(&r, &recs[i++]));
        kept++;
      }
      CHECK_EQ_INT(rc, 0);
      CHECK_EQ_INT(i, n); /* nothing more */
      CHECK_EQ_INT(batched ? strobe_capture_next_batch(some, &recs) : strobe_capture_next(some, &r), 0);
      CHECK(kept > 0);
      strobe_capture_totals a = strobe_capture_query_totals(all), b = strobe_capture_query_totals(some);
      CHECK(a.events == b.events && a.scopes == b.scopes && a.orphan_ends == b.orphan_ends &&
            a.lost_scopes == b.lost_scopes && a.unfinished == b.unfinished && a.end_ticks == b.end_ticks);
      strobe_capture_close(all);
      strobe_capture_close(some);
    }
  }
  strobe_capture *c;
  REQUIRE_EQ_INT(strobe_capture_open_memory(v.f.data, v.f.len, &c), 0);
  CHECK_EQ_INT(strobe_capture_set_records(c, 0), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_capture_set_records(c, 1), STROBE_EINVAL); /* type 0 is none */
  CHECK_EQ_INT(strobe_capture_set_records(c, STROBE_CAPTURE_ALL_RECORDS + 2), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_capture_set_records(NULL, STROBE_CAPTURE_ALL_RECORDS), STROBE_EINVAL);
  strobe_capture_record r;
  CHECK_EQ_INT(strobe_capture_next(c, &r), 1); /* nothing changed: every record */
  CHECK_EQ_INT(r.type, STROBE_REC_SITE);
  strobe_capture_close(c);
  strobe__buf_free(&v.f);
}

/* A rename keeps the thread and keeps old name pointers readable. */
static void test_rename(void) {
  strobe__buf f = {0};
  put_prelude(&f);
  put_thread(&f, 0, 2, "renamed");
  char longname[300];
  memset(longname, 'n', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  put_thread(&f, 0, 3, longname);
  strobe_capture *c;
  REQUIRE_EQ_INT(strobe_capture_open_memory(f.data, f.len, &c), 0);
  strobe_capture_record r;
  for (int i = 0; i < 3; i++) CHECK_EQ_INT(strobe_capture_next(c, &r), 1);
  const strobe_capture_thread *t = strobe_capture_query_thread(c, 0);
  const char *first = t->name;
  CHECK(strcmp(first, "t") == 0);
  CHECK_EQ_INT(strobe_capture_next(c, &r), 1);
  CHECK_EQ_INT(r.type, STROBE_REC_THREAD);
  CHECK(strcmp(t->name, "renamed") == 0 && t->os_tid == 2);
  CHECK(strcmp(first, "renamed") == 0); /* same buffer, overwritten in place */
  CHECK_EQ_INT(strobe_capture_next(c, &r), 1);
  CHECK(strcmp(t->name, longname) == 0 && t->os_tid == 3);
  CHECK(strcmp(first, "renamed") == 0); /* the old buffer lives until close */
  CHECK_EQ_INT(strobe_capture_query_thread_count(c), 1);
  CHECK_EQ_INT(strobe_capture_next(c, &r), 0);
  strobe_capture_close(c);
  strobe__buf_free(&f);
}

/* The fuzz corpus seeds: most come from scripts/make-fuzz-seeds.py, an
 * encoder independent of this file (ok-v5-memory too); ok-gpu and the ok-v4-* ones were written
 * by the library (fuzz/fuzz_capture_reader.c names the tools that made the
 * v4 ones). Each is named <expected end>-<what>.strb. */
static void test_seeds(void) {
  char dir[4096];
  const char *slash = strrchr(__FILE__, '/');
  int prefix = slash ? (int)(slash - __FILE__) + 1 : 0;
  snprintf(dir, sizeof dir, "%.*s../fuzz/corpus/fuzz_capture_reader", prefix, __FILE__);
  DIR *d = opendir(dir);
  REQUIRE(d != NULL);
  static const struct {
    const char *prefix;
    int rc;
  } ends[] = {{"ok-", 0}, {"etruncated-", STROBE_ETRUNCATED}, {"ecorrupt-", STROBE_ECORRUPT},
              {"erange-", STROBE_ERANGE}};
  int seen = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (!strstr(de->d_name, ".strb")) continue;
    int want = 1;
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
      if (strncmp(de->d_name, ends[i].prefix, strlen(ends[i].prefix)) == 0) want = ends[i].rc;
    CHECK(want != 1);
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    strobe_capture *c;
    REQUIRE_EQ_INT(strobe_capture_open(path, &c), 0);
    size_t n;
    int rc = drain(c, &n);
    FILE *in = fopen(path, "rb");
    static uint8_t bytes[1 << 20];
    size_t len = in ? fread(bytes, 1, sizeof bytes, in) : 0;
    if (in) fclose(in);
    CHECK(len > 0 && len < sizeof bytes);
    size_t read;
    CHECK_EQ_INT(batch_check(bytes, len, &read), 0);
    CHECK_EQ_INT(read, n);
    if (rc != want) fprintf(stderr, "seed %s: %d\n", de->d_name, rc);
    CHECK_EQ_INT(rc, want);
    CHECK(n > 0);
    strobe_capture_totals t = strobe_capture_query_totals(c);
    if (strcmp(de->d_name, "ok-full.strb") == 0) {
      CHECK_EQ_INT(t.footer, 1);
      CHECK_EQ_INT(t.cut_short, 0);
      CHECK_EQ_INT(t.orphan_ends, 1);
      CHECK_EQ_INT(t.lost_scopes, 1);
      CHECK(t.unfinished > 0 && t.scopes > 0 && t.lost > 0);
    }
    if (strcmp(de->d_name, "ok-v3-kinds.strb") == 0) { /* counters by kind: sites and an operation's */
      CHECK_STR_EQ(strobe_capture_query_site(c, 1)->category, "quads");
      CHECK_STR_EQ(strobe_capture_query_site(c, 3)->category, "textures");
      CHECK_STR_EQ(strobe_capture_query_site(c, 4)->category, "");
      CHECK_EQ_U64(t.ops, 1);
      strobe_capture *again;
      REQUIRE_EQ_INT(strobe_capture_open(path, &again), 0);
      strobe_capture_record r;
      int kinds = 0;
      while (strobe_capture_next(again, &r) > 0) {
        if (r.type != STROBE_REC_OP_END) continue;
        REQUIRE_EQ_INT(r.op->ncounters, 3);
        CHECK_STR_EQ(r.op->counters[0].kind, "quads");
        CHECK_STR_EQ(r.op->counters[1].kind, "text");
        CHECK_STR_EQ(r.op->counters[2].kind, "");
        CHECK_STR_EQ(r.op->counters[2].name, "encoded_bytes");
        kinds++;
      }
      CHECK_EQ_INT(kinds, 1);
      strobe_capture_close(again);
    }
    if (strcmp(de->d_name, "ok-v4-recovered.strb") == 0) { /* JOURNAL_POS skipped, RECOVERY read */
      CHECK_EQ_INT(t.recovered, 1);
      CHECK_EQ_U64(t.recovered_events, 40);
      CHECK_EQ_U64(t.recovered_threads, 1);
      CHECK_EQ_U64(t.scopes, 30);
      CHECK(strobe_capture_query_header(c)->journal_id != 0);
    }
    if (strcmp(de->d_name, "ok-v4-merge.strb") == 0) { /* two inputs' content, each after its ORIGIN */
      strobe_capture *again;
      REQUIRE_EQ_INT(strobe_capture_open(path, &again), 0);
      strobe_capture_record r;
      uint32_t content = 0, from[3] = {0};
      while (strobe_capture_next(again, &r) > 0)
        if (r.type == STROBE_REC_TREE || r.type == STROBE_REC_ATTACHMENT || r.type == STROBE_REC_DEEP) {
          content++;
          if (r.origin < 3) from[r.origin]++;
        }
      const strobe_capture_merge *m = strobe_capture_query_merge(again);
      REQUIRE(m != NULL);
      CHECK_EQ_INT(m->ninputs, 2);
      CHECK(from[1] > 0);
      CHECK_EQ_INT(from[1], from[2]); /* the same made-up capture twice */
      CHECK_EQ_INT(from[1] + from[2], content);
      strobe_capture_close(again);
    }
    if (strcmp(de->d_name, "ok-v5-memory.strb") == 0) { /* allocations, frees and messages (docs/memory.md) */
      strobe_capture *again;
      REQUIRE_EQ_INT(strobe_capture_open(path, &again), 0);
      strobe_capture_record r;
      uint64_t total = 0, freed = 0, allocs = 0, messages = 0, interned = 0;
      while (strobe_capture_next(again, &r) > 0) {
        if (r.type == STROBE_REC_ALLOC) allocs++, total += r.bytes;
        if (r.type == STROBE_REC_FREE) freed += r.address == 0x7f0000001000u;
        if (r.type == STROBE_REC_MESSAGE)
          messages++, interned += (strobe_capture_query_site(again, r.site)->flags & STROBE_SITE_INTERNED) != 0;
      }
      CHECK_EQ_U64(allocs, 3);
      CHECK_EQ_U64(total, 64 + 128 + 4096);
      CHECK_EQ_U64(freed, 1);
      CHECK_EQ_U64(messages, 2);
      CHECK_EQ_U64(interned, 1);
      strobe_capture_close(again);
    }
    if (strcmp(de->d_name, "ok-zstd.strb") == 0) { /* every block a zstd frame */
      CHECK_EQ_INT(t.footer, 1);
      CHECK_EQ_INT(t.scopes, 1);
      CHECK_EQ_INT(t.events, 3);
    }
    strobe_capture_close(c);
    seen++;
  }
  closedir(d);
  CHECK(seen >= 5);
}

/* ORIGIN (docs/capture-format.md): the input of a merge the content blocks
 * after it came from, 1..STROBE_CAPTURE_MAX_MERGED (0: not known); above the
 * most inputs a merge holds it is corrupt. */
static void test_origin_bound(void) {
  static const uint64_t origins[] = {0, 1, STROBE_CAPTURE_MAX_MERGED, STROBE_CAPTURE_MAX_MERGED + 1, 1u << 20};
  for (size_t i = 0; i < sizeof origins / sizeof origins[0]; i++) {
    uint64_t v = origins[i];
    strobe__buf f = {0}, p = {0};
    put_header(&f, 4);
    strobe__buf_varint(&p, v);
    put_block(&f, STROBE__BLK_ORIGIN, &p);
    strobe__buf_free(&p);
    strobe_capture *c;
    REQUIRE_EQ_INT(strobe_capture_open_memory(f.data, f.len, &c), 0);
    size_t n;
    CHECK_EQ_INT(drain(c, &n), v > STROBE_CAPTURE_MAX_MERGED ? STROBE_ECORRUPT : 0);
    strobe_capture_close(c);
    strobe__buf_free(&f);
  }
}

/* Version 2 sites carry a unit after the parent: read back as written, a
 * unit number this reader has no name for is kept (printed as a plain
 * number), the same site with another unit is corrupt, and an entry cut
 * before its unit is corrupt. Version 1 sites (every other case here) have
 * no unit and read as STROBE_UNIT_NONE. */
static int v2_sites(const uint32_t *units, const int *with_unit, int n, strobe_capture **out) {
  strobe__buf f = {0}, p = {0};
  put_header(&f, 2);
  for (int i = 0; i < n; i++) {
    put_site(&p, 1 + (uint32_t)i, STROBE_SITE_GAUGE, 7, "g", "");
    if (with_unit[i]) strobe__buf_varint(&p, units[i]);
  }
  put_block(&f, STROBE__BLK_SITES, &p);
  strobe__buf_free(&p);
  strobe_capture *c = NULL;
  REQUIRE_EQ_INT(strobe_capture_open_memory(f.data, f.len, &c), 0);
  size_t got;
  int rc = drain(c, &got);
  strobe__buf_free(&f);
  if (out)
    *out = c;
  else
    strobe_capture_close(c);
  return rc;
}

static void test_site_units(void) {
  const uint32_t units[] = {STROBE_UNIT_BYTES, STROBE_UNIT_PERCENT, 200};
  const int all[] = {1, 1, 1};
  strobe_capture *c;
  CHECK_EQ_INT(v2_sites(units, all, 3, &c), 0);
  CHECK_EQ_INT(strobe_capture_query_header(c)->version, 2);
  CHECK_EQ_INT(strobe_capture_query_site(c, 1)->unit, STROBE_UNIT_BYTES);
  CHECK_EQ_INT(strobe_capture_query_site(c, 2)->unit, STROBE_UNIT_PERCENT);
  CHECK_EQ_INT(strobe_capture_query_site(c, 3)->unit, 200);
  CHECK(strobe_unit_name(strobe_capture_query_site(c, 3)->unit) == NULL);
  strobe_capture_close(c);

  /* Site 1 twice, with another unit the second time. */
  strobe__buf f = {0}, p = {0};
  put_header(&f, 2);
  put_site(&p, 1, STROBE_SITE_GAUGE, 7, "g", "");
  strobe__buf_varint(&p, STROBE_UNIT_BYTES);
  put_site(&p, 1, STROBE_SITE_GAUGE, 7, "g", "");
  strobe__buf_varint(&p, STROBE_UNIT_MS);
  put_block(&f, STROBE__BLK_SITES, &p);
  REQUIRE_EQ_INT(strobe_capture_open_memory(f.data, f.len, &c), 0);
  size_t got;
  CHECK_EQ_INT(drain(c, &got), STROBE_ECORRUPT);
  strobe_capture_close(c);
  strobe__buf_free(&f);
  strobe__buf_free(&p);

  /* A version 2 entry without its unit: the payload ends inside it. */
  const int cut[] = {0};
  CHECK_EQ_INT(v2_sites(units, cut, 1, NULL), STROBE_ECORRUPT);

  /* Version 1: no unit in the entry, none in the site. */
  put_prelude(&f);
  REQUIRE_EQ_INT(strobe_capture_open_memory(f.data, f.len, &c), 0);
  CHECK_EQ_INT(drain(c, &got), 0);
  CHECK_EQ_INT(strobe_capture_query_header(c)->version, 1);
  CHECK_EQ_INT(strobe_capture_query_site(c, 1)->unit, STROBE_UNIT_NONE);
  strobe_capture_close(c);
  strobe__buf_free(&f);
}

/* A path that is not a regular file (a FIFO nobody writes, a device, a
 * directory) is refused with STROBE_EINVAL at once; a blocking open of the
 * FIFO would wait forever, so an alarm turns a hang into a failure. A pipe is
 * read as a stream through strobe_capture_open_fd, record for record as the
 * bytes in memory, and the caller keeps its descriptor. */
typedef struct pipe_job {
  int fd;
  const strobe__buf *f;
} pipe_job;

static void *write_pipe(void *arg) {
  pipe_job *j = arg;
  for (size_t at = 0; at < j->f->len;) { /* in small pieces: the reader must wait for them */
    size_t n = j->f->len - at < 7 ? j->f->len - at : 7;
    ssize_t w = write(j->fd, j->f->data + at, n);
    if (w <= 0) break;
    at += (size_t)w;
  }
  close(j->fd);
  return NULL;
}

static void test_not_regular(void) {
  char dir[128], fifo[192];
  REQUIRE(fx_temp_dir(dir, sizeof dir, "reader") == 0);
  snprintf(fifo, sizeof fifo, "%s/fifo", dir);
  REQUIRE(mkfifo(fifo, 0600) == 0);
  alarm(20); /* a hang kills the test: SIGALRM's default action */
  strobe_capture *c = (strobe_capture *)1;
  CHECK_EQ_INT(strobe_capture_open(fifo, &c), STROBE_EINVAL);
  CHECK(c == NULL);
  CHECK_EQ_INT(strobe_capture_open("/dev/zero", &c), STROBE_EINVAL);
  CHECK_EQ_INT(strobe_capture_open(dir, &c), STROBE_EINVAL);
  alarm(0);
  remove(fifo);
  rmdir(dir);

  valid_file v = build_valid();
  int p[2];
  REQUIRE(pipe(p) == 0);
  pipe_job job = {p[1], &v.f};
  pthread_t th;
  REQUIRE(pthread_create(&th, NULL, write_pipe, &job) == 0);
  REQUIRE_EQ_INT(strobe_capture_open_fd(p[0], &c), 0);
  CHECK(close(p[0]) == 0); /* ours to close: the capture reads its own duplicate */
  check_valid_reader(c);
  strobe_capture_close(c);
  pthread_join(th, NULL);
  CHECK_EQ_INT(strobe_capture_open_fd(-1, &c), STROBE_EINVAL);
  CHECK(c == NULL);
  strobe__buf_free(&v.f);
}

#define CASES(X)    \
  X(valid)          \
  X(site_units)     \
  X(not_regular)    \
  X(missing_footer) \
  X(every_prefix)   \
  X(header_errors)  \
  X(crc)            \
  X(zstd)           \
  X(sites)          \
  X(events)         \
  X(batches)        \
  X(records_wanted) \
  X(rename)         \
  X(seeds)          \
  X(origin_bound)
HARNESS_MAIN(CASES)
