/*
 * test_capture_vocab.c — the capture vocabularies are single tables
 * (STROBE__EVENT_KINDS, STROBE_SITE_KINDS and STROBE_MISUSE_MAP in
 * strobe/strobe.h): every row of each goes through the real capture writer
 * and comes back out of the reader. A kind added to the table without an
 * encoding the reader knows, or without a record, fails here; so does a
 * site kind the reader refuses, and a misuse counter the footer drops or
 * reorders.
 */
#include <stdlib.h>
#include <string.h>

#include "support/capture_memory.h"
#include "support/harness.h"
#include "format/capture_writer.h"
#include "format/codec.h"
#include "strobe/capture.h"

/* Fixed facts: the file does not depend on this machine. */
static const strobe__header_facts k_facts = {{"monotonic", 1, 1.0, 0, 0}, 0, "test", 0, 1, 1024, 0, 0, 0, NULL, NULL};

static strobe__writer *open_writer(strobe__buf *out) {
  strobe__writer_desc d = {"file", 100, 1, 0.0, 0.0, cm_sink, out, &k_facts};
  strobe__writer *w = NULL;
  REQUIRE_EQ_INT(strobe__writer_create(&d, &w), 0);
  return w;
}

static strobe_site k_sites[] = {
    {.name = "outer", .file = "test.c", .function = "f", .line = 1, .kind = STROBE_SITE_SCOPE},
    {.name = "row", .file = "test.c", .function = "f", .line = 2, .kind = STROBE_SITE_SCOPE},
    {.name = "Cell", .file = "test.c", .line = 3, .kind = STROBE_SITE_ELEMENT},
    {.name = "heap", .file = "test.c", .line = 4, .kind = STROBE_SITE_ALLOC},
    {.name = "heap", .file = "test.c", .line = 5, .kind = STROBE_SITE_FREE},
    {.name = "loaded", .file = "test.c", .line = 6, .kind = STROBE_SITE_MESSAGE},
    {.name = "assets", .file = "test.c", .line = 7, .kind = STROBE_SITE_LOCK},
};
#define NSITES (sizeof k_sites / sizeof k_sites[0])
#define S_OUTER 1u
#define S_ROW 2u
#define S_ELEM 3u /* an ELEMENT event names an element type (strobe.h >>elements) */
#define S_LOCK 7u /* lock events name a lock (strobe/lock.h) */
#define ELEMENT_ID 0x8badf00d12345678ull
/* The site an event of this kind names: allocations, frees, messages and
 * lock events name a site of their own kind (strobe.h >>allocations,
 * >>messages; strobe/lock.h). */
static uint32_t site_for(uint32_t kind) {
  if (kind == STROBE__EV_LOCK_WAIT || kind == STROBE__EV_LOCK_ACQUIRED || kind == STROBE__EV_LOCK_RELEASED) return S_LOCK;
  return kind == STROBE__EV_ALLOC ? 4u : kind == STROBE__EV_FREE ? 5u : kind == STROBE__EV_MESSAGE ? 6u : S_ROW;
}

/* One row of the event-kind table, as the test wrote it. */
typedef struct row {
  const char *name;
  uint32_t kind, slots, operands;
  int record;
  uint64_t ts;
  uint64_t slot[STROBE__EV_MAX_SLOTS];
} row;

static const row k_rows[] = {
#define ROW(name, number, slots, operands, record) {#name, number, slots, STROBE__OPERANDS_##operands, record, 0, {0}},
    STROBE__EVENT_KINDS(ROW)
#undef ROW
};
#define NROWS (sizeof k_rows / sizeof k_rows[0])

/* Distinct slot values per row; f64 slots carry a double's bits. */
static uint64_t slot_value(const row *r, uint32_t i) {
  if (r->operands == STROBE__OPERANDS_SITE_F64S) {
    double d = 1.5 * (double)(r->kind * 10 + i + 1);
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return bits;
  }
  return (uint64_t)(r->kind * 100 + i * 7 + 3);
}

/* Every kind with a record, written in table order inside two outer scopes
 * (so each kind that closes one, END and UNWOUND, closes something), then
 * read back record by record. */
static void test_every_kind_round_trips(void) {
  strobe__buf out = {0};
  strobe__writer *w = open_writer(&out);
  for (uint32_t i = 0; i < NSITES; i++) strobe__writer_site(w, i + 1, &k_sites[i]);
  strobe__writer_thread(w, 0, 42, "main", 0);

  row rows[NROWS];
  memcpy(rows, k_rows, sizeof rows);
  uint64_t ts = 1000;
  uint32_t depth = 2, written = 0;
  strobe__event outer[2] = {{ts, STROBE__EV_BEGIN, S_OUTER}, {ts, STROBE__EV_BEGIN, S_OUTER}};
  strobe__writer_events(w, 0, outer, 2);
  for (size_t k = 0; k < NROWS; k++) {
    row *r = &rows[k];
    if (!r->record) {
      /* Only a PAYLOAD is no event of its own, operation events come
       * back as operations from OPS blocks (tests/test_capture_ops.c) and GPU
       * events as pair, span and mark records from DEVICE blocks
       * (tests/test_gpu.c); every other kind must come back out of an EVENTS block. */
      CHECK(r->kind == STROBE__EV_PAYLOAD || r->operands == STROBE__OPERANDS_OPS ||
            r->operands == STROBE__OPERANDS_DEVICE);
      CHECK(r->kind != STROBE__EV_PAYLOAD || r->operands == STROBE__OPERANDS_NONE);
      continue;
    }
    CHECK(r->operands != STROBE__OPERANDS_NONE);
    strobe__event ev[1 + STROBE__EV_MAX_SLOTS];
    if (r->operands == STROBE__OPERANDS_ELEMENT) { /* its ts is the id; its time the previous event's */
      r->ts = ts;
      ev[0] = (strobe__event){ELEMENT_ID, r->kind, S_ELEM};
      strobe__writer_events(w, 0, ev, 1);
      written++;
      continue;
    }
    ts += 10;
    r->ts = ts;
    ev[0] = (strobe__event){ts, r->kind, site_for(r->kind)};
    if (r->operands == STROBE__OPERANDS_LOST) ev[0] = (strobe__event){ts, r->kind | depth << 8, 5};
    for (uint32_t i = 0; i < r->slots; i++) {
      r->slot[i] = slot_value(r, i);
      ev[1 + i] = (strobe__event){r->slot[i], STROBE__EV_PAYLOAD, 0};
    }
    strobe__writer_events(w, 0, ev, 1 + r->slots);
    if (r->operands == STROBE__OPERANDS_BEGIN) depth++;
    if (r->operands == STROBE__OPERANDS_END || r->operands == STROBE__OPERANDS_UNWOUND) depth--;
    written++;
  }
  CHECK(depth >= 1);
  for (; depth > 0; depth--) {
    strobe__event end = {ts += 10, STROBE__EV_END, 0};
    strobe__writer_events(w, 0, &end, 1);
  }
  strobe_misuse none = {0};
  CHECK_EQ_INT(strobe__writer_finish(w, ts + 10, &none), 0);
  strobe__writer_destroy(w);
  CHECK(!out.failed);

  strobe_capture *c = NULL;
  REQUIRE_EQ_INT(strobe_capture_open_memory(out.data, out.len, &c), 0);
  strobe_capture_record rec;
  int r;
  /* Sites, thread, then the outer BEGINs. */
  while ((r = strobe_capture_next(c, &rec)) > 0 && rec.type != STROBE_REC_BEGIN) {
  }
  CHECK_EQ_INT(r, 1);
  CHECK_EQ_INT(rec.site, S_OUTER);
  CHECK_EQ_INT(strobe_capture_next(c, &rec), 1);
  CHECK_EQ_INT(rec.site, S_OUTER);
  uint32_t seen = 0;
  for (size_t k = 0; k < NROWS; k++) {
    const row *w_row = &rows[k];
    if (!w_row->record) continue;
    r = strobe_capture_next(c, &rec);
    REQUIREF(r == 1 && (int)rec.type == w_row->record, "kind %s: next() = %d, record %d, want record %d", w_row->name,
             r, (int)rec.type, w_row->record);
    CHECK_EQ_U64(rec.ticks, w_row->ts);
    CHECK_EQ_INT(rec.thread, 0);
    if (w_row->operands == STROBE__OPERANDS_SITE_VARINTS || w_row->operands == STROBE__OPERANDS_SITE_F64S ||
        w_row->operands == STROBE__OPERANDS_BEGIN)
      CHECK_EQ_INT(rec.site, site_for(w_row->kind));
    switch (rec.type) { /* the slots, where a record carries them */
      case STROBE_REC_ALLOC:
        CHECK_EQ_U64(rec.address, w_row->slot[0]);
        CHECK_EQ_U64(rec.bytes, w_row->slot[1]);
        break;
      case STROBE_REC_FREE: CHECK_EQ_U64(rec.address, w_row->slot[0]); break;
      case STROBE_REC_VALUE:
      case STROBE_REC_COUNTER:
      case STROBE_REC_GAUGE: {
        double want;
        memcpy(&want, &w_row->slot[0], sizeof want);
        CHECK(rec.value == want);
        break;
      }
      case STROBE_REC_CUMULATIVE:
        CHECK_EQ_U64(rec.count, w_row->slot[0]);
        CHECK_NEAR(rec.total_ns, (double)w_row->slot[1], 0.0);
        CHECK_NEAR(rec.min_ns, (double)w_row->slot[2], 0.0);
        CHECK_NEAR(rec.max_ns, (double)w_row->slot[3], 0.0);
        break;
      case STROBE_REC_LOST: CHECK_EQ_U64(rec.lost, 5); break;
      case STROBE_REC_END: CHECK_EQ_INT(rec.unwound, w_row->operands == STROBE__OPERANDS_UNWOUND); break;
      case STROBE_REC_ELEMENT:
        CHECK_EQ_INT(rec.site, S_ELEM);
        CHECK_EQ_U64(rec.element, ELEMENT_ID);
        CHECK(rec.depth >= 1);
        break;
      default: break;
    }
    seen++;
  }
  CHECK_EQ_INT(seen, written);
  while ((r = strobe_capture_next(c, &rec)) > 0) CHECK_EQ_INT(rec.type, STROBE_REC_END);
  CHECK_EQ_INT(r, 0);
  strobe_capture_totals t = strobe_capture_query_totals(c);
  CHECK(t.footer);
  CHECK_EQ_U64(t.unfinished, 0);
  CHECK_EQ_U64(t.orphan_ends, 0);
  strobe_capture_close(c);
  strobe__buf_free(&out);
}

/* Each misuse counter gets its own value; the footer must give each back
 * under its own name. */
static void test_misuse_counters_round_trip(void) {
  strobe__buf out = {0};
  strobe__writer *w = open_writer(&out);
  strobe_misuse m, want;
  uint64_t v = 11;
#define SET(name) m.name = want.name = (v += 1000);
  STROBE_MISUSE_MAP(SET)
#undef SET
  CHECK_EQ_INT(strobe__writer_finish(w, 5, &m), 0);
  strobe__writer_destroy(w);

  strobe_capture *c = NULL;
  REQUIRE_EQ_INT(strobe_capture_open_memory(out.data, out.len, &c), 0);
  strobe_capture_record rec;
  while (strobe_capture_next(c, &rec) > 0) {
  }
  strobe_capture_totals t = strobe_capture_query_totals(c);
  CHECK(t.footer);
#define CMP(name) CHECK_EQ_U64(t.misuse.name, want.name);
  STROBE_MISUSE_MAP(CMP)
#undef CMP
  strobe_capture_close(c);
  strobe__buf_free(&out);
}

/* Every site kind is accepted with its number; the number after the
 * largest is not a kind, and the reader says the block is corrupt. */
static void test_every_site_kind_round_trips(void) {
  static const uint32_t kinds[] = {
#define KIND(id, number, name, timed) number,
      STROBE_SITE_KINDS(KIND)
#undef KIND
  };
  uint32_t n = sizeof kinds / sizeof *kinds;
  for (uint32_t pass = 0; pass < 2; pass++) {
    strobe__buf out = {0};
    strobe__writer *w = open_writer(&out);
    for (uint32_t i = 0; i < n; i++) {
      strobe_site site = {.name = "s", .file = "f.c", .function = "f", .line = i, .kind = kinds[i]};
      strobe__writer_site(w, i + 1, &site);
    }
    if (pass == 1) { /* one site of no kind */
      strobe_site bad = {.name = "bad", .file = "f.c", .function = "f", .line = 1, .kind = STROBE__SITE_KIND_LIMIT};
      strobe__writer_site(w, n + 1, &bad);
    }
    strobe__writer_thread(w, 0, 1, "main", 0); /* flushes the SITES block before the footer */
    strobe_misuse none = {0};
    CHECK_EQ_INT(strobe__writer_finish(w, 5, &none), 0);
    strobe__writer_destroy(w);

    strobe_capture *c = NULL;
    REQUIRE_EQ_INT(strobe_capture_open_memory(out.data, out.len, &c), 0);
    strobe_capture_record rec;
    int r;
    uint32_t sites = 0;
    while ((r = strobe_capture_next(c, &rec)) > 0) {
      if (rec.type != STROBE_REC_SITE) continue;
      CHECK_EQ_INT(strobe_capture_query_site(c, rec.site)->kind, kinds[rec.site - 1]);
      sites++;
    }
    CHECK_EQ_INT(sites, n);
    CHECK_EQ_INT(r, pass == 0 ? 0 : STROBE_ECORRUPT);
    strobe_capture_close(c);
    strobe__buf_free(&out);
  }
}

/* Every unit is written with its number and read back with it and its name
 * (the hot path's bits above it stay out of the file); a version 1 capture's
 * sites read as unit none (tests/test_capture_reader.c). */
static void test_every_unit_round_trips(void) {
  static const uint32_t units[] = {
#define UNIT(id, number, name) number,
      STROBE_UNITS(UNIT)
#undef UNIT
  };
  uint32_t n = sizeof units / sizeof *units;
  CHECK_EQ_INT(n, STROBE_UNIT_LIMIT);
  strobe__buf out = {0};
  strobe__writer *w = open_writer(&out);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t hot = (uint32_t)STROBE__NUM_I64 << STROBE__NUM_SHIFT;
    strobe_site site = {.name = "n", .file = "f.c", .function = "f", .line = i, .kind = STROBE_SITE_GAUGE,
                        .unit = units[i] | hot};
    strobe__writer_site(w, i + 1, &site);
  }
  strobe__writer_thread(w, 0, 1, "main", 0);
  strobe_misuse none = {0};
  CHECK_EQ_INT(strobe__writer_finish(w, 5, &none), 0);
  strobe__writer_destroy(w);

  strobe_capture *c = NULL;
  REQUIRE_EQ_INT(strobe_capture_open_memory(out.data, out.len, &c), 0);
  CHECK_EQ_INT(strobe_capture_query_header(c)->version, STROBE_CAPTURE_FORMAT_VERSION);
  strobe_capture_record rec;
  int r;
  uint32_t seen = 0;
  while ((r = strobe_capture_next(c, &rec)) > 0) {
    if (rec.type != STROBE_REC_SITE) continue;
    const strobe_capture_site *s = strobe_capture_query_site(c, rec.site);
    CHECK_EQ_INT(s->unit, units[rec.site - 1]);
    CHECK(strobe_unit_name(s->unit) != NULL);
    seen++;
  }
  CHECK_EQ_INT(r, 0);
  CHECK_EQ_INT(seen, n);
  CHECK(strobe_unit_name(STROBE_UNIT_LIMIT) == NULL);
  strobe_capture_close(c);
  strobe__buf_free(&out);
}

#define CASES(X) \
  X(every_kind_round_trips) X(every_site_kind_round_trips) X(misuse_counters_round_trip) X(every_unit_round_trips)
HARNESS_MAIN(CASES)
