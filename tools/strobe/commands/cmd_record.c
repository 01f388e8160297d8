/*
 * cmd_record.c — `strobe record [options] -- PROGRAM ARGS...`: runs an
 * unmodified program with libstrobe.so and the starter libstrobe_record.so
 * preloaded (tools/record/starter.c), so its run is written to a capture,
 * then prints one line saying what the capture holds
 * (docs/exploration.md §Recording a program).
 *
 * Owns: the options, checked before anything runs (bad ones exit 2 and
 * leave no file), turned into the environment contract the starter and
 * libstrobe's call tracing read (trace.h's STROBE_TRACE_*, the starter's
 * STROBE_RECORD_*); finding the two libraries; waiting for the program; the
 * summary.
 * Must never: record anything itself, nor touch the program's own
 * environment beyond the variables it adds (LD_PRELOAD is extended, never
 * replaced); create the output file (the program's recorder does).
 *
 * Contents: >>usage >>options >>checks >>run >>summary
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "strobe/sample.h"
#include "strobe/trace.h"

/* >>usage */
static const char g_usage[] =
    "usage: strobe record [options] [--] PROGRAM [ARGS...]\n"
    "Runs PROGRAM with Strobe preloaded and writes its run to a capture, opened before main and\n"
    "closed at exit, on a fatal signal and before an exec; then prints what it holds.\n"
    "Call tracing records every call of a program built with -finstrument-functions; a program\n"
    "built without it is sampled with stacks; hand-placed scopes are always recorded.\n\n"
    "  -o FILE            the capture (default strobe.capture); never a FIFO or a directory\n"
    "  --trace all|REGEX  trace every function (default) or those whose name matches REGEX\n"
    "  --sample HZ|off    sample at HZ (1..10000) even when tracing; off: never (default: only\n"
    "                     when the program has no -finstrument-functions hooks, at 997 Hz)\n"
    "  --switches         the sampler records context switches too\n"
    "  --depth N          record traced calls nested at most N deep (1..256, default 64)\n"
    "  --filter FUNC      record only FUNC's calls and the calls below them (repeatable)\n"
    "  --notrace FUNC     never record FUNC nor any call below it (repeatable)\n"
    "  --min-time DUR     record only traced calls lasting at least DUR (500ns, 10us, 2ms, 1s)\n"
    "  --overflow MODE    a full ring: drop (default), grow or wait (docs/recording.md)\n"
    "  --compression N    zstd level of the capture, 1..19 (default 2)\n"
    "  --follow-fork      children and exec'd images record too, to FILE.PID.GEN\n"
    "  --libcalls         record the program's calls into shared libraries (category libcall)\n"
    "  -q, --quiet        no summary line\n\n"
    "exit: 0 the capture was written (the program's own status is in the summary);\n"
    "1 no readable capture; 2 bad options, no PROGRAM, an unwritable or non-regular FILE.\n"
    "Documentation: docs/exploration.md\n";

/* >>options */
#define MAX_NAMES STROBE_TRACE_MAX_EXCLUDE

typedef struct options {
  const char *out;
  const char *trace; /* "all" or a regex */
  const char *sample; /* "auto", "off" or HZ */
  int switches, follow, quiet, libcalls;
  const char *depth, *overflow, *min_time, *compression;
  char min_ns[24]; /* --min-time in nanoseconds */
  char filter[4096], notrace[4096]; /* comma-joined names */
  int n_filter, n_notrace;
} options;

static int add_name(char *list, int *n, const char *name, const char *opt) {
  if (!*name || strchr(name, ',')) return cli_usage_error("record", "%s needs a function name without commas", opt);
  if (*n == MAX_NAMES) return cli_usage_error("record", "at most %d %s names", MAX_NAMES, opt);
  size_t len = strlen(list);
  if (len + strlen(name) + 2 > 4096) return cli_usage_error("record", "%s names too long", opt);
  snprintf(list + len, 4096 - len, "%s%s", len ? "," : "", name);
  (*n)++;
  return 0;
}

/* A duration: a number and a unit (ns, us, ms, s), into nanoseconds. */
static int parse_duration(const char *s, uint64_t *ns) {
  static const struct { const char *unit; double ns; } k_units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
  char *end = NULL;
  double v = strtod(s, &end);
  if (end == s || !(v >= 0)) return -1;
  for (size_t i = 0; i < sizeof k_units / sizeof k_units[0]; i++)
    if (!strcmp(end, k_units[i].unit) && v * k_units[i].ns <= 3600e9) return *ns = (uint64_t)(v * k_units[i].ns + 0.5), 0;
  return -1;
}

static int check_values(options *o) {
  uint64_t v;
  if (o->min_time) {
    if (parse_duration(o->min_time, &v) || v == 0)
      return cli_usage_error("record", "--min-time must be a duration such as 500ns, 10us, 2ms or 1s (at most 3600s), not '%s'", o->min_time);
    snprintf(o->min_ns, sizeof o->min_ns, "%llu", (unsigned long long)v);
  }
  if (cli_parse_u64(o->compression, &v) || v < 1 || v > 19)
    return cli_usage_error("record", "--compression must be a zstd level 1..19, not '%s'", o->compression);
  if (o->depth && (cli_parse_u64(o->depth, &v) || v < 1 || v > STROBE_MAX_DEPTH))
    return cli_usage_error("record", "--depth must be 1..%d, not '%s'", STROBE_MAX_DEPTH, o->depth);
  if (strcmp(o->sample, "auto") && strcmp(o->sample, "off") &&
      (cli_parse_u64(o->sample, &v) || v < 1 || v > STROBE_SAMPLE_MAX_HZ))
    return cli_usage_error("record", "--sample must be 1..%u or off, not '%s'", STROBE_SAMPLE_MAX_HZ, o->sample);
  int known = 0;
  for (uint32_t m = 0; o->overflow && strobe_overflow_name(m); m++) known |= !strcmp(strobe_overflow_name(m), o->overflow);
  if (o->overflow && !known)
    return cli_usage_error("record", "--overflow must be drop, grow or wait, not '%s'", o->overflow);
  if (strcmp(o->trace, "all")) {
    regex_t re;
    if (!*o->trace || regcomp(&re, o->trace, REG_EXTENDED | REG_NOSUB) != 0)
      return cli_usage_error("record", "--trace must be all or an extended regular expression, not '%s'", o->trace);
    regfree(&re);
  }
  return 0;
}

static int parse(int argc, char **argv, options *o) {
  enum { TRACE = 256, SAMPLE, SWITCHES, DEPTH, FILTER, NOTRACE, OVERFLOW, FOLLOW, MIN_TIME, LIBCALLS, COMPRESSION };
  static const struct option opts[] = {
      {"trace", required_argument, NULL, TRACE},     {"sample", required_argument, NULL, SAMPLE},
      {"switches", no_argument, NULL, SWITCHES},     {"depth", required_argument, NULL, DEPTH},
      {"filter", required_argument, NULL, FILTER},   {"notrace", required_argument, NULL, NOTRACE},
      {"overflow", required_argument, NULL, OVERFLOW}, {"follow-fork", no_argument, NULL, FOLLOW},
      {"min-time", required_argument, NULL, MIN_TIME}, {"libcalls", no_argument, NULL, LIBCALLS},
      {"compression", required_argument, NULL, COMPRESSION},
      {"quiet", no_argument, NULL, 'q'},             {"help", no_argument, NULL, 'h'},
      {0}};
  int ch, rc;
  opterr = 0;
  /* "+": options end at PROGRAM, whose own options are its own. */
  while ((ch = getopt_long(argc, argv, "+o:qh", opts, NULL)) != -1) {
    switch (ch) {
      case 'o': o->out = optarg; break;
      case TRACE: o->trace = optarg; break;
      case SAMPLE: o->sample = optarg; break;
      case SWITCHES: o->switches = 1; break;
      case DEPTH: o->depth = optarg; break;
      case FILTER: if ((rc = add_name(o->filter, &o->n_filter, optarg, "--filter"))) return rc; break;
      case NOTRACE: if ((rc = add_name(o->notrace, &o->n_notrace, optarg, "--notrace"))) return rc; break;
      case OVERFLOW: o->overflow = optarg; break;
      case FOLLOW: o->follow = 1; break;
      case MIN_TIME: o->min_time = optarg; break;
      case LIBCALLS: o->libcalls = 1; break;
      case COMPRESSION: o->compression = optarg; break;
      case 'q': o->quiet = 1; break;
      case 'h': fputs(g_usage, stdout); return -1;
      default: return cli_bad_option("record", argv, optind);
    }
  }
  if (optind >= argc) return cli_usage_error("record", "expected a PROGRAM to run (strobe record [options] -- PROGRAM ARGS...)");
  return check_values(o);
}

/* >>checks */
/* The output must be a regular file that can be written, or a new name in
 * a directory that can be: checked without creating or opening it. */
static int check_output(const char *path) {
  struct stat st;
  if (stat(path, &st) == 0) {
    if (!S_ISREG(st.st_mode))
      return cli_usage_error("record", "%s: not a regular file (a FIFO, device or directory cannot hold a capture)", path);
    if (access(path, W_OK) != 0) return cli_usage_error("record", "%s: not writable: %s", path, strerror(errno));
    return 0;
  }
  if (errno != ENOENT) return cli_usage_error("record", "%s: %s", path, strerror(errno));
  char dir[PATH_MAX];
  const char *slash = strrchr(path, '/');
  if (!slash) snprintf(dir, sizeof dir, ".");
  else snprintf(dir, sizeof dir, "%.*s", (int)(slash == path ? 1 : slash - path), path);
  if (access(dir, W_OK | X_OK) != 0) return cli_usage_error("record", "%s: cannot create it in %s: %s", path, dir, strerror(errno));
  return 0;
}

/* Whether PROGRAM names an executable file, as execvp will look for it. */
static int findable(const char *prog) {
  if (strchr(prog, '/')) return access(prog, X_OK) == 0;
  const char *path = getenv("PATH");
  char buf[PATH_MAX];
  for (const char *p = path ? path : "/usr/bin:/bin"; p; p = strchr(p, ':') ? strchr(p, ':') + 1 : NULL) {
    size_t len = strchr(p, ':') ? (size_t)(strchr(p, ':') - p) : strlen(p);
    if (snprintf(buf, sizeof buf, "%.*s/%s", (int)len, len ? p : ".", prog) < (int)sizeof buf && access(buf, X_OK) == 0)
      return 1;
  }
  return 0;
}

/* The two libraries to preload, "libstrobe.so:libstrobe_record.so": the build
 * tree's when this is the build tree's strobe, else the installed ones;
 * STROBE_RECORD_LIBS overrides both. */
static char g_libs[3 * PATH_MAX], g_audit[PATH_MAX + 64];

/* The installed libraries' paths, each relative to bin/ in `rel` ("a:b"),
 * made absolute against this executable's directory. */
static const char *installed(const char *rel, char *out, size_t cap) {
  char dir[PATH_MAX];
  ssize_t got = readlink("/proc/self/exe", dir, sizeof dir - 1);
  dir[got > 0 ? got : 0] = 0;
  char *slash = strrchr(dir, '/');
  if (slash) *slash = 0;
  size_t len = 0;
  out[0] = 0;
  for (const char *p = rel; p && *p; p = strchr(p, ':') ? strchr(p, ':') + 1 : NULL) {
    size_t n = strchr(p, ':') ? (size_t)(strchr(p, ':') - p) : strlen(p);
    int w = snprintf(out + len, cap - len, "%s%s/%.*s", len ? ":" : "", dir, (int)n, p);
    if (w < 0 || (size_t)w >= cap - len) break;
    len += (size_t)w;
  }
  return out;
}

static int in_build_tree(void) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = 0;
    char *build = realpath(STROBE_RECORD_BUILD_CLI, NULL);
    int in_build = build && !strcmp(build, self);
    free(build);
    return in_build;
  }
  return 0;
}

static const char *libraries(void) {
  const char *env = getenv("STROBE_RECORD_LIBS");
  if (env && *env) return env;
  return in_build_tree() ? STROBE_RECORD_BUILD_LIBS : installed(STROBE_RECORD_INSTALL_LIBS, g_libs, sizeof g_libs);
}

/* The audit module of --libcalls (STROBE_RECORD_AUDIT overrides it). */
static const char *audit_module(void) {
  const char *env = getenv("STROBE_RECORD_AUDIT_MODULE");
  if (env && *env) return env;
  return in_build_tree() ? STROBE_RECORD_BUILD_AUDIT : installed(STROBE_RECORD_INSTALL_AUDIT, g_audit, sizeof g_audit);
}

/* >>run */
static int set_env(const options *o, const char *libs) {
  const char *pre = getenv("LD_PRELOAD");
  char *preload = NULL;
  if (asprintf(&preload, "%s%s%s", libs, pre && *pre ? ":" : "", pre && *pre ? pre : "") < 0) return -1;
  int rc = setenv("LD_PRELOAD", preload, 1) | setenv("STROBE_RECORD_PRELOAD", pre && *pre ? pre : "-", 1) |
           setenv("STROBE_RECORD", o->out, 1) | setenv("STROBE_RECORD_SAMPLE", o->sample, 1) |
           setenv("STROBE_TRACE", "all", 1) | setenv("STROBE_RECORD_COMPRESSION", o->compression, 1);
  free(preload);
  char pid[32];
  snprintf(pid, sizeof pid, "%ld", (long)getpid());
  rc |= setenv("STROBE_RECORD_ROOT", pid, 1);
  unsetenv("STROBE_RECORD_GEN");
  if (strcmp(o->trace, "all")) rc |= setenv("STROBE_TRACE_MATCH", o->trace, 1);
  if (o->depth) rc |= setenv("STROBE_TRACE_DEPTH", o->depth, 1);
  if (o->min_time) rc |= setenv("STROBE_TRACE_MIN_NS", o->min_ns, 1);
  if (o->n_filter) rc |= setenv("STROBE_TRACE_FILTER", o->filter, 1);
  if (o->n_notrace) rc |= setenv("STROBE_TRACE_NOTRACE", o->notrace, 1);
  if (o->switches) rc |= setenv("STROBE_RECORD_SWITCHES", "1", 1);
  if (o->follow) rc |= setenv("STROBE_RECORD_FOLLOW", "1", 1);
  if (o->overflow) rc |= setenv("STROBE_RECORD_OVERFLOW", o->overflow, 1);
  if (o->libcalls) {
    const char *audit = getenv("LD_AUDIT");
    char *value = NULL;
    if (asprintf(&value, "%s%s%s", audit_module(), audit && *audit ? ":" : "", audit && *audit ? audit : "") < 0) return -1;
    rc |= setenv("STROBE_RECORD_AUDIT", audit && *audit ? audit : "-", 1) | setenv("LD_AUDIT", value, 1);
    free(value);
  }
  return rc;
}

static pid_t g_child;
static void forward(int sig) {
  if (g_child > 0) kill(g_child, sig);
}

/* Runs the program and waits for it; returns its wait status, or -1 when
 * it could not be started (said). */
static int run(const options *o, char **argv) {
  const char *libs = libraries();
  for (const char *p = libs; p; p = strchr(p, ':') ? strchr(p, ':') + 1 : NULL) {
    char lib[PATH_MAX];
    size_t len = strchr(p, ':') ? (size_t)(strchr(p, ':') - p) : strlen(p);
    snprintf(lib, sizeof lib, "%.*s", (int)len, p);
    if (access(lib, R_OK) != 0) {
      cli_error("record", "cannot find %s (set STROBE_RECORD_LIBS=libstrobe.so:libstrobe_record.so)", lib);
      return -1;
    }
  }
  if (o->libcalls && !*STROBE_RECORD_BUILD_AUDIT && !getenv("STROBE_RECORD_AUDIT_MODULE")) {
    cli_error("record", "--libcalls is not available on this platform: its audit module reads x86-64's PLT "
                        "registers (docs/platforms.md)");
    return -1;
  }
  if (o->libcalls && access(audit_module(), R_OK) != 0) {
    cli_error("record", "cannot find %s (set STROBE_RECORD_AUDIT_MODULE=libstrobe_audit.so)", audit_module());
    return -1;
  }
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) return cli_error("record", "pipe: %s", strerror(errno)), -1;
  /* The terminal's ^C and ^\ reach the program, which closes its capture;
   * this process waits for it. TERM and HUP are passed on. */
  signal(SIGINT, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  signal(SIGTERM, forward);
  signal(SIGHUP, forward);
  g_child = fork();
  if (g_child < 0) return cli_error("record", "fork: %s", strerror(errno)), -1;
  if (g_child == 0) {
    signal(SIGINT, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    close(ready[0]);
    if (set_env(o, libs) == 0) execvp(argv[0], argv);
    int e = errno;
    (void)!write(ready[1], &e, sizeof e);
    _exit(127);
  }
  close(ready[1]);
  int e = 0;
  ssize_t got = read(ready[0], &e, sizeof e); /* EOF (0 bytes): the exec happened (the pipe is close-on-exec) */
  close(ready[0]);
  int status = 0;
  while (waitpid(g_child, &status, 0) < 0 && errno == EINTR) {
  }
  if (got == (ssize_t)sizeof e) {
    cli_error("record", "cannot run %s: %s", argv[0], strerror(e));
    return -1;
  }
  return status;
}

/* >>summary */
static void say_status(char *buf, size_t cap, int status) {
  if (WIFEXITED(status)) snprintf(buf, cap, "exited with status %d", WEXITSTATUS(status));
  else if (WIFSIGNALED(status)) snprintf(buf, cap, "was killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
  else snprintf(buf, cap, "ended with wait status %d", status);
}

static int summary(const options *o, const char *prog, int status) {
  char how[96];
  say_status(how, sizeof how, status);
  strobe_capture *c = NULL;
  int rc = strobe_capture_open(o->out, &c);
  if (rc) {
    cli_error("record", "%s %s and left no readable capture in %s: %s", prog, how, o->out, strobe_strerror(rc));
    return CLI_FAIL;
  }
  (void)strobe_capture_set_records(c, 0);
  strobe_capture_record r;
  while ((rc = strobe_capture_next(c, &r)) > 0) {
  }
  strobe_capture_totals t = strobe_capture_query_totals(c);
  uint64_t bytes = strobe_capture_query_position(c);
  uint32_t libfns = 0; /* library functions called (--libcalls): sites of category "libcall" */
  for (uint32_t id = 1; id < strobe_capture_query_site_limit(c); id++) {
    const strobe_capture_site *s = strobe_capture_query_site(c, id);
    libfns += s && !strcmp(s->category, "libcall");
  }
  strobe_capture_close(c);
  if (!o->quiet)
    fprintf(stderr,
            "strobe record: %s %s; %s: %llu bytes, %llu scopes of %u traced functions and %u library functions, "
            "%llu samples, %llu lost%s%s (strobe report %s)\n",
            prog, how, o->out, (unsigned long long)bytes, (unsigned long long)t.scopes, t.calls_functions, libfns,
            (unsigned long long)t.samples, (unsigned long long)t.lost, t.cut_short ? ", cut short" : "",
            rc < 0 ? ", damaged" : "", o->out);
  return rc < 0 ? CLI_FAIL : CLI_OK;
}

int cmd_record(int argc, char **argv) {
  /* Level 2, not the library's 1: traced calls come in long regular runs that
   * level 1's faster match search misses (fib(31): 1.63 bytes a call at 1,
   * 0.35 at 2, for 5.6 against 7.1 ns of drain CPU an event: bench_record). */
  options o = {.out = "strobe.capture", .trace = "all", .sample = "auto", .compression = "2"};
  int rc = parse(argc, argv, &o);
  if (rc) return rc < 0 ? CLI_OK : rc;
  char **prog = argv + optind;
  if ((rc = check_output(o.out))) return rc;
  if (!findable(prog[0])) return cli_usage_error("record", "%s: no such program (or not executable)", prog[0]);
  /* The run writes it anew: an older capture there must not pass for this run's. */
  if (unlink(o.out) != 0 && errno != ENOENT) return cli_usage_error("record", "%s: %s", o.out, strerror(errno));
  int status = run(&o, prog);
  if (status < 0) return CLI_FAIL;
  return summary(&o, prog[0], status);
}
