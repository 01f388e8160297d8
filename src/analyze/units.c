/*
 * units.c — the texts of numbers in their units (units.h, and the public
 * strobe_unit_format in strobe.h). Pure functions of their arguments: no
 * state, no allocation, safe from any thread.
 */
#include "analyze/units.h"

#include <math.h>
#include <stdio.h>

#include "strobe/strobe.h"

typedef struct scale {
  double factor;
  const char *suffix;
} scale;

static const scale DURATIONS[] = {{1, " ns"}, {1e3, " µs"}, {1e6, " ms"}, {1e9, " s"}};
static const scale BINARY[] = {{1, " B"},
                               {1024.0, " KiB"},
                               {1024.0 * 1024, " MiB"},
                               {1024.0 * 1024 * 1024, " GiB"},
                               {1024.0 * 1024 * 1024 * 1024, " TiB"}};

/* Decimals that give three significant digits to |v| in [0, 1000). */
static int decimals(double a) { return a >= 99.95 ? 0 : a >= 9.995 ? 1 : 2; }

/* v in the largest of the n scales it reaches, three significant digits; a
 * value that rounds up to 1000 of one scale moves to the next. `whole`: the
 * first scale prints integers without decimals ("712 ns", "512 B"). */
static const char *scaled(char *buf, size_t cap, double v, const scale *s, int n, int whole) {
  if (!isfinite(v)) {
    snprintf(buf, cap, "-");
    return buf;
  }
  double a = fabs(v);
  int k = 0;
  while (k + 1 < n && a >= s[k + 1].factor) k++;
  double x = a / s[k].factor;
  if (k + 1 < n && x >= 999.5) { /* "1000 µs" reads as "1.00 ms" */
    k++;
    x = a / s[k].factor;
  }
  int d = decimals(x);
  if (k == 0 && whole && x == floor(x)) d = 0;
  if (k == 0 && x < 1 && x > 0) d = 2; /* 0.27 ns */
  snprintf(buf, cap, "%s%.*f%s", v < 0 ? "-" : "", d, x, s[k].suffix);
  return buf;
}

const char *strobe__fmt_duration(char *buf, size_t cap, double ns) {
  return scaled(buf, cap, ns, DURATIONS, 4, 1);
}

const char *strobe__fmt_unit(char *buf, size_t cap, double v, uint32_t unit) {
  switch (unit) {
    case STROBE_UNIT_BYTES: return scaled(buf, cap, v, BINARY, 5, 1);
    case STROBE_UNIT_NS: return strobe__fmt_duration(buf, cap, v);
    case STROBE_UNIT_MS: return strobe__fmt_duration(buf, cap, v * 1e6);
    case STROBE_UNIT_PERCENT:
      if (!isfinite(v)) break;
      snprintf(buf, cap, "%.*f%%", fabs(v) >= 1000 ? 0 : decimals(fabs(v)), v);
      return buf;
    default: break; /* count, none, and units this build has no name for */
  }
  if (!isfinite(v))
    snprintf(buf, cap, "-");
  else
    snprintf(buf, cap, "%.6g", v);
  return buf;
}

int strobe__fmt_columns(const char *s) {
  int n = 0;
  for (; *s; s++) n += ((unsigned char)*s & 0xc0) != 0x80; /* continuation bytes take no column */
  return n;
}

const char *strobe_unit_format(char *buf, size_t cap, double v, uint32_t unit) {
  if (!buf || !cap) return buf;
  return strobe__fmt_unit(buf, cap, v, unit);
}
