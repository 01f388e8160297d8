/*
 * interp.c — an interpreter that names its functions at run time
 * (docs/recording.md §Run-time names). The functions are defined by a
 * script, so their names exist only once the script is parsed: each one
 * gets its sites from strobe_site_intern when it is defined, and every call
 * opens a scope on it (STROBE_SCOPE_SITE) and counts itself
 * (STROBE_COUNTER_ADD_SITE), as a compiled function would with
 * STROBE_FUNCTION. It records a capture, reads it back and prints the time
 * spent in each script function under its run-time name.
 *
 * The language, one definition per line:
 *   def NAME: STMT; STMT; ...      a function
 *   main: STMT; ...                what runs
 * with statements `work N` (N units of arithmetic), `call NAME` and
 * `loop N NAME` (call NAME N times).
 *
 * Usage: strobe-interp [capture-path] [script-path]
 *        (defaults: interp.strobe and the script below)
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/strobe.h"

static const char k_script[] =
    "def parse_cell: work 40\n"
    "def parse_row: loop 12 parse_cell; work 30\n"
    "def sum_column: loop 25 parse_row; work 200\n"
    "def format_report: work 3000\n"
    "def report: call sum_column; call sum_column; call format_report\n"
    "main: loop 60 report\n";

#define MAX_FUNCS 64
#define MAX_STMTS 16

typedef struct stmt {
  enum { WORK, CALL } op;
  long n;   /* WORK: units; CALL: times */
  int func; /* CALL: the callee's index */
} stmt;

typedef struct func {
  const char *name; /* into the script: not terminated */
  size_t len;
  stmt body[MAX_STMTS];
  int nbody;
  strobe_site *scope; /* interned once, when the function is defined */
  strobe_site *calls;
} func;

static func g_funcs[MAX_FUNCS];
static int g_nfuncs;
static volatile double g_sink;

static int find(const char *name, size_t len) {
  for (int i = 0; i < g_nfuncs; i++)
    if (g_funcs[i].len == len && !memcmp(g_funcs[i].name, name, len)) return i;
  return -1;
}

/* >>parse: words are runs of non-space, non-';' characters. */
static const char *word(const char **p, size_t *len) {
  while (**p == ' ' || **p == '\t') (*p)++;
  const char *w = *p;
  while (**p && !isspace((unsigned char)**p) && **p != ';' && **p != ':') (*p)++;
  *len = (size_t)(*p - w);
  return w;
}

/* Defines a function (`main` too) from one line and names it at run time.
 * Returns its index, or -1 after saying what is wrong. */
static int define(const char *line, const char *end, int lineno, int *is_main_out) {
  const char *p = line;
  size_t len;
  const char *w = word(&p, &len);
  int is_main = len == 4 && !memcmp(w, "main", 4);
  *is_main_out = is_main;
  if (!is_main && !(len == 3 && !memcmp(w, "def", 3))) goto bad;
  if (!is_main) w = word(&p, &len);
  if (!len || *p != ':' || g_nfuncs == MAX_FUNCS) goto bad;
  p++;
  func *f = &g_funcs[g_nfuncs];
  *f = (func){.name = is_main ? "main" : w, .len = is_main ? 4 : len};
  /* The name exists only now: one site per function for its scope and one for its call count. */
  f->scope = strobe_site_intern(f->name, f->len, "script", STROBE_SITE_SCOPE);
  f->calls = strobe_site_intern(f->name, f->len, "script", STROBE_SITE_COUNTER);
  int err = strobe_site_query_error(f->scope);
  if (err) fprintf(stderr, "strobe-interp: line %d: %.*s is recorded as a fallback site: %s\n", lineno,
                   (int)f->len, f->name, strobe_strerror(err));
  while (p < end) {
    const char *kw = word(&p, &len);
    if (!len) break;
    stmt *s = &f->body[f->nbody];
    if (f->nbody == MAX_STMTS) goto bad;
    if (len == 4 && !memcmp(kw, "work", 4)) {
      *s = (stmt){WORK, strtol(p, (char **)&p, 10), 0};
    } else {
      long times = 1;
      if (len == 4 && !memcmp(kw, "loop", 4)) times = strtol(p, (char **)&p, 10);
      else if (!(len == 4 && !memcmp(kw, "call", 4))) goto bad;
      const char *callee = word(&p, &len);
      int k = find(callee, len);
      if (k < 0) {
        fprintf(stderr, "strobe-interp: line %d: %.*s is not defined yet\n", lineno, (int)len, callee);
        return -1;
      }
      *s = (stmt){CALL, times, k};
    }
    f->nbody++;
    while (*p == ' ' || *p == ';') p++;
  }
  return g_nfuncs++;
bad:
  fprintf(stderr, "strobe-interp: line %d: cannot parse %.*s\n", lineno, (int)(end - line), line);
  return -1;
}

/* >>eval: the interpreter loop. Each call is a scope on the callee's interned site. */
static void eval(int index) {
  func *f = &g_funcs[index];
  STROBE_SCOPE_SITE(f->scope);
  STROBE_COUNTER_ADD_SITE(f->calls, 1);
  for (int i = 0; i < f->nbody; i++) {
    const stmt *s = &f->body[i];
    if (s->op == WORK) {
      double acc = 0;
      for (long k = 0; k < s->n; k++) acc += (double)(k % 7) * 0.5;
      g_sink += acc;
    } else {
      for (long k = 0; k < s->n; k++) eval(s->func);
    }
  }
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return buf;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "interp.strobe";
  const char *script = argc > 2 ? read_file(argv[2]) : k_script;
  if (!script) {
    fprintf(stderr, "strobe-interp: cannot read %s\n", argv[2]);
    return 1;
  }
  strobe_recorder *rec;
  int rc = strobe_record_start(&(strobe_record_desc){.path = path}, &rec);
  if (rc) {
    fprintf(stderr, "strobe-interp: cannot record to %s: %s\n", path, strobe_strerror(rc));
    return 1;
  }
  int entry = -1, lineno = 0;
  for (const char *line = script; *line;) {
    const char *end = strchr(line, '\n');
    if (!end) end = line + strlen(line);
    lineno++;
    if (end > line) {
      int is_main, index = define(line, end, lineno, &is_main);
      if (index < 0) return 1;
      if (is_main) entry = index;
    }
    line = *end ? end + 1 : end;
  }
  if (entry < 0) {
    fprintf(stderr, "strobe-interp: the script has no main\n");
    return 1;
  }
  eval(entry);
  rc = strobe_record_stop(rec);
  if (rc) {
    fprintf(stderr, "strobe-interp: writing %s failed: %s\n", path, strobe_strerror(rc));
    return 1;
  }

  /* Read the capture back: the names are there, flagged as run-time names. */
  strobe_capture *cap;
  rc = strobe_capture_open(path, &cap);
  if (rc) {
    fprintf(stderr, "strobe-interp: cannot read %s: %s\n", path, strobe_strerror(rc));
    return 1;
  }
  static uint64_t count[STROBE_MAX_SITES];
  static double total_ns[STROBE_MAX_SITES];
  strobe_capture_record r;
  while ((rc = strobe_capture_next(cap, &r)) > 0)
    if (r.type == STROBE_REC_END) {
      count[r.site]++;
      total_ns[r.site] += r.duration_ns;
    }
  if (rc < 0) fprintf(stderr, "strobe-interp: %s: %s\n", path, strobe_strerror(rc));
  printf("recorded %s: %d script functions, named at run time\n", path, g_nfuncs);
  printf("%-16s %-9s %10s %14s\n", "function", "name", "calls", "total ms");
  for (uint32_t id = 1; id < strobe_capture_query_site_limit(cap); id++) {
    const strobe_capture_site *s = strobe_capture_query_site(cap, id);
    if (s && count[id])
      printf("%-16s %-9s %10llu %14.3f\n", s->name, (s->flags & STROBE_SITE_INTERNED) ? "run-time" : "static",
             (unsigned long long)count[id], total_ns[id] / 1e6);
  }
  strobe_capture_close(cap);
  return rc < 0 ? 1 : 0;
}
