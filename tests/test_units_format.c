/*
 * test_units_format.c — the texts people read for numbers (src/analyze/
 * units.h): durations in the unit that fits them with three significant
 * digits, across every boundary (a value that rounds up to 1000 of one unit
 * moves to the next; sub-µs figures stay in ns, never "0.0001 ms"); numbers
 * by their site's unit (bytes in binary multiples, ns and ms as durations,
 * percent, plain); and the column count that pads them (µ is two bytes).
 */
#include <math.h>
#include <string.h>

#include "support/harness.h"
#include "analyze/units.h"
#include "strobe/strobe.h"

#define CHECK_TEXT(got, want)                                                                     \
  do {                                                                                            \
    const char *g_ = (got);                                                                       \
    if (strcmp(g_, (want)) != 0) fprintf(stderr, "  got \"%s\", want \"%s\"\n", g_, (want));      \
    CHECK(strcmp(g_, (want)) == 0);                                                               \
  } while (0)

static char g_buf[STROBE__FMT_CAP];

static const char *dur(double ns) { return strobe__fmt_duration(g_buf, sizeof g_buf, ns); }
static const char *num(double v, uint32_t unit) { return strobe__fmt_unit(g_buf, sizeof g_buf, v, unit); }

static void test_durations(void) {
  CHECK_TEXT(dur(712), "712 ns");
  CHECK_TEXT(dur(5), "5 ns");
  CHECK_TEXT(dur(0), "0 ns");
  CHECK_TEXT(dur(0.27), "0.27 ns");
  CHECK_TEXT(dur(19.5), "19.5 ns");
  CHECK_TEXT(dur(100), "100 ns"); /* a sub-µs percentile: never "0.0001 ms" */
  CHECK_TEXT(dur(999), "999 ns");
  CHECK_TEXT(dur(1000), "1.00 µs");
  CHECK_TEXT(dur(14200), "14.2 µs");
  CHECK_TEXT(dur(14249), "14.2 µs");
  CHECK_TEXT(dur(999600), "1.00 ms"); /* 999.6 µs rounds to 1000 µs: the next unit */
  CHECK_TEXT(dur(3.1e6), "3.10 ms");
  CHECK_TEXT(dur(250.272e6), "250 ms");
  CHECK_TEXT(dur(1.25e9), "1.25 s");
  CHECK_TEXT(dur(7200e9), "7200 s");
  CHECK_TEXT(dur(-3.1e6), "-3.10 ms");
  CHECK_TEXT(dur(NAN), "-");
}

static void test_units(void) {
  CHECK_TEXT(num(512, STROBE_UNIT_BYTES), "512 B");
  CHECK_TEXT(num(1536, STROBE_UNIT_BYTES), "1.50 KiB");
  CHECK_TEXT(num(3.2 * 1024 * 1024, STROBE_UNIT_BYTES), "3.20 MiB");
  CHECK_TEXT(num(1023.9 * 1024, STROBE_UNIT_BYTES), "1.00 MiB");
  CHECK_TEXT(num(5.0 * 1024 * 1024 * 1024, STROBE_UNIT_BYTES), "5.00 GiB");
  CHECK_TEXT(num(-2048, STROBE_UNIT_BYTES), "-2.00 KiB");
  CHECK_TEXT(num(712, STROBE_UNIT_NS), "712 ns");
  CHECK_TEXT(num(14200, STROBE_UNIT_NS), "14.2 µs");
  CHECK_TEXT(num(3.1, STROBE_UNIT_MS), "3.10 ms");
  CHECK_TEXT(num(0.0001, STROBE_UNIT_MS), "100 ns");
  CHECK_TEXT(num(99.5, STROBE_UNIT_PERCENT), "99.5%");
  CHECK_TEXT(num(100, STROBE_UNIT_PERCENT), "100%");
  CHECK_TEXT(num(5, STROBE_UNIT_PERCENT), "5.00%");
  CHECK_TEXT(num(42, STROBE_UNIT_COUNT), "42");
  CHECK_TEXT(num(1234567, STROBE_UNIT_NONE), "1.23457e+06");
  CHECK_TEXT(num(0.25, STROBE_UNIT_NONE), "0.25");
  CHECK_TEXT(num(1536, 200), "1536"); /* a newer writer's unit: plain */
  CHECK_TEXT(num(INFINITY, STROBE_UNIT_PERCENT), "-");
}

/* The public form says the same, and keeps within its buffer. */
static void test_public_format(void) {
  char small[6], big[32];
  CHECK_TEXT(strobe_unit_format(big, sizeof big, 3.1, STROBE_UNIT_MS), "3.10 ms");
  CHECK_TEXT(strobe_unit_format(small, sizeof small, 1536, STROBE_UNIT_BYTES), "1.50 "); /* cut, terminated */
  CHECK(strobe_unit_format(NULL, 8, 1, STROBE_UNIT_NONE) == NULL);
}

static void test_columns(void) {
  CHECK_EQ_INT(strobe__fmt_columns("14.2 µs"), 7);
  CHECK_EQ_INT(strobe__fmt_columns("3.10 ms"), 7);
  CHECK_EQ_INT(strobe__fmt_columns(""), 0);
}

#define CASES(X) X(durations) X(units) X(public_format) X(columns)
HARNESS_MAIN(CASES)
