/*
 * units.h — how a number reads in its unit, for every text Strobe prints
 * (the `strobe` tool, reports read by people): durations in the unit that
 * fits them with three significant digits ("712 ns", "14.2 µs", "3.10 ms",
 * "1.25 s"), bytes as B/KiB/MiB/GiB, percent with its sign, and plain
 * numbers, by the strobe_unit a site declares (strobe.h, STROBE_UNITS).
 * Never guesses a unit from a name. JSON keeps numbers, not these texts.
 * The viewer's twin is viewer/fmt.js (the same rules, tests/viewer).
 */
#ifndef STROBE_ANALYZE_UNITS_H
#define STROBE_ANALYZE_UNITS_H

#include <stddef.h>
#include <stdint.h>

#define STROBE__FMT_CAP 32 /* room for any text below */

/* `ns` as a duration: "712 ns", "14.2 µs", "3.10 ms", "1.25 s", "-3.10 ms";
 * "-" when not finite. Writes at most cap bytes (terminated); returns buf. */
const char *strobe__fmt_duration(char *buf, size_t cap, double ns);

/* `v` in `unit` (a strobe_unit): bytes as "512 B", "1.50 KiB", "3.20 MiB";
 * ns and ms as durations; percent as "99.5%"; count, none and units without
 * a name as plain numbers (up to 6 significant digits). Returns buf. */
const char *strobe__fmt_unit(char *buf, size_t cap, double v, uint32_t unit);

/* Columns a UTF-8 text takes on a terminal (µ is two bytes, one column), for
 * padding: printf's widths count bytes. */
int strobe__fmt_columns(const char *s);

#endif
