/*
 * cmd_view.c — `strobe view FILE [--compare B] [--port P] [--no-open]`: opens
 * a capture in the web viewer (with --merge, several captures of one host's
 * processes, merged first into a temporary capture: docs/cli.md §strobe merge). It starts libstrobe_server (the same HTTP
 * layer, embedded viewer files and /api/capture endpoints an instrumented
 * application serves live) on 127.0.0.1 with a fresh random token, loads
 * the capture (and the one to compare) into the viewer's model, prints
 *   http://127.0.0.1:PORT/#token=TOKEN
 * and serves until SIGINT or SIGTERM. The token travels only in the URL's
 * fragment, which browsers never send to a server, and the page sends it
 * back as `Authorization: Bearer`; it is never written to a file, a log or
 * a query string. The browser it starts gets http://127.0.0.1:PORT/#code=CODE
 * instead: a one-time code the viewer trades for the token on load
 * (strobe_server_make_open_code), as any local user can read a command line
 * with ps. Built only with the server (STROBE_CLI_HAVE_SERVER).
 *
 * Must never: bind anything but loopback, print the token anywhere but the
 * URL on standard output, put it in a command line, or keep serving after a
 * failed load.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "cli.h"

#ifdef STROBE_CLI_HAVE_SERVER
#include "strobe/server.h"
#include "strobe/viewer.h"
#endif

#ifndef STROBE_CLI_HAVE_SERVER
int cmd_view(int argc, char **argv) {
  (void)argc, (void)argv;
  cli_error("view", "this strobe was built without libstrobe_server (libmicrohttpd and jansson)");
  return CLI_FAIL;
}
#else

static const char g_usage[] =
    "usage: strobe view [--port P] [--no-open] [--max-spans N] [--quiet] FILE [--compare B | B]\n"
    "       strobe view [--merge] [--same-host] [options] A B C [...]\n"
    "\n"
    "Serves FILE in Strobe's web viewer from 127.0.0.1 and prints the URL to open\n"
    "(the access token is in the URL's #fragment, which the browser keeps to itself).\n"
    "Frame strip and slowest frames, flame chart of every thread, span details,\n"
    "counters, and frame-to-frame diffs; with a second capture, a capture diff.\n"
    "Runs until interrupted (Ctrl-C).\n"
    "\n"
    "  --compare B      a second capture to diff against FILE (same as a second FILE)\n"
    "  --merge          several captures side by side on one timeline, each thread a lane\n"
    "                   PROCESS/THREAD and an operation handed between processes one frame\n"
    "                   (merged as strobe merge does into a temporary capture, removed when the\n"
    "                   viewer stops); three captures or more are always merged, two only with\n"
    "                   --merge (else the second is compared)\n"
    "  --same-host      with --merge: as strobe merge --same-host\n"
    "  --port P         listen on port P (default: any free port)\n"
    "  --no-open        do not start a browser (default: xdg-open when a display is set)\n"
    "  --max-spans N    keep at most N spans in memory (default 10000000, ~20 bytes each)\n"
    "  --quiet          print only the URL\n"
    "\n"
    "Exit: 0 stopped by a signal, 1 unreadable capture or server failure, or (once\n"
    "stopped) a capture truncated inside a block or corrupt: it is shown up to the bad\n"
    "spot; 2 usage, or an input that is not a regular file.\n";

/* Reads a capture once through the tool's reader, so that every complaint
 * about it (missing, not a capture, not a regular file, truncated, corrupt)
 * is worded as every other subcommand words it (docs/cli.md §Damaged
 * captures). Returns the open error, or CLI_OK with *damaged set to
 * cli_finish_read's verdict. */
static int check_capture(const char *path, int quiet, int *damaged) {
  int rc = cli_need_file("view", path, "the viewer reads the capture twice");
  cli_input in;
  if (rc || (rc = cli_open(&in, "view", path, quiet))) return rc;
  strobe_capture_record r;
  while (cli_next(&in, &r) > 0) {
  }
  if (cli_finish_read(&in)) *damaged = CLI_FAIL;
  cli_close(&in);
  return CLI_OK;
}

static int serve(const char *path, const char *compare, uint64_t port, int no_open, uint64_t max_spans, int quiet,
                 int merge_hint);
static int view_merged(const char *const *paths, int n, const char *compare, int same_host, uint64_t port, int no_open,
                       uint64_t max_spans, int quiet);

static void open_browser(const char *url) {
  if (!getenv("DISPLAY") && !getenv("WAYLAND_DISPLAY")) return;
  signal(SIGCHLD, SIG_IGN); /* no zombie: the child is never waited for */
  pid_t pid = fork();
  if (pid != 0) return;
  /* The child: stdout and stderr away (browsers chat), then the opener. */
  FILE *f = freopen("/dev/null", "w", stdout);
  f = f ? freopen("/dev/null", "w", stderr) : f;
  (void)f;
  execlp("xdg-open", "xdg-open", url, (char *)NULL);
  _exit(127);
}

int cmd_view(int argc, char **argv) {
  static const struct option opts[] = {{"compare", required_argument, NULL, 'c'},
                                       {"port", required_argument, NULL, 'p'},
                                       {"no-open", no_argument, NULL, 'n'},
                                       {"max-spans", required_argument, NULL, 'm'},
                                       {"quiet", no_argument, NULL, 'q'},
                                       {"merge", no_argument, NULL, 'M'},
                                       {"same-host", no_argument, NULL, 'S'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  const char *compare = NULL;
  uint64_t port = 0, max_spans = 0;
  int no_open = 0, quiet = 0, merge = 0, same_host = 0, c;
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":hqp:", opts, NULL)) != -1) {
    switch (c) {
      case 'c': compare = optarg; break;
      case 'p':
        if (cli_parse_u64(optarg, &port) || port > 65535)
          return cli_usage_error("view", "--port takes 0..65535, not '%s'", optarg);
        break;
      case 'n': no_open = 1; break;
      case 'm':
        if (cli_parse_u64(optarg, &max_spans) || max_spans < 1 || max_spans > STROBE_VIEWER_MAX_MAX_SPANS)
          return cli_usage_error("view", "--max-spans takes 1..%u, not '%s'", STROBE_VIEWER_MAX_MAX_SPANS, optarg);
        break;
      case 'q': quiet = 1; break;
      case 'M': merge = 1; break;
      case 'S': same_host = 1; break;
      case 'h': fputs(g_usage, stdout); return CLI_OK;
      default: return cli_bad_option("view", argv, optind);
    }
  }
  int nfiles = argc - optind;
  if (nfiles < 1) return cli_usage_error("view", "a capture file is required");
  if (merge || (nfiles > 2 && !compare)) {
    if (!merge && !quiet) cli_error("view", "%d captures: merged side by side on one timeline (strobe view --merge)", nfiles);
    return view_merged((const char *const *)argv + optind, nfiles, compare, same_host, port, no_open, max_spans, quiet);
  }
  if (same_host) return cli_usage_error("view", "--same-host goes with several captures merged (--merge)");
  if (nfiles > 2 || (nfiles == 2 && compare))
    return cli_usage_error("view", "--compare takes one capture against one FILE; to see several side by side: strobe view --merge A B [...]");
  const char *path = argv[optind];
  if (nfiles == 2) compare = argv[optind + 1];
  return serve(path, compare, port, no_open, max_spans, quiet, nfiles == 2);
}

/* --merge: the captures merged into a temporary capture, served, then removed. */
static int view_merged(const char *const *paths, int n, const char *compare, int same_host, uint64_t port, int no_open,
                       uint64_t max_spans, int quiet) {
  if (compare) return cli_usage_error("view", "several captures merged show one timeline: no --compare");
  const char *tmp = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
  char merged[1024];
  snprintf(merged, sizeof merged, "%s/strobe-view-merge-XXXXXX", tmp);
  int fd = mkstemp(merged); /* 0600, ours: the merge writes into it */
  if (fd < 0) {
    cli_error("view", "cannot create a temporary capture in %s: %s", tmp, strerror(errno));
    return CLI_OUTPUT;
  }
  close(fd);
  int rc = cli_merge_files("view", paths, n, merged, same_host, 1);
  if (!rc) rc = serve(merged, NULL, port, no_open, max_spans, quiet, 0);
  remove(merged);
  return rc;
}

/* Serves path (and compare) until SIGINT or SIGTERM. merge_hint: the compared capture was the second
 * FILE, which may have been meant side by side (--merge): once loaded, say how. */
static int serve(const char *path, const char *compare, uint64_t port, int no_open, uint64_t max_spans, int quiet,
                 int merge_hint) {

  int damaged = CLI_OK, rc = check_capture(path, quiet, &damaged);
  if (!rc && compare) rc = check_capture(compare, quiet, &damaged);
  if (rc) return rc;

  /* The token: 32 random bytes as hex, never stored anywhere but here. */
  unsigned char raw[32];
  char token[65];
  if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) {
    cli_error("view", "cannot read the OS's random source: %s", strerror(errno));
    return CLI_FAIL;
  }
  for (size_t i = 0; i < sizeof raw; i++) snprintf(token + 2 * i, 3, "%02x", raw[i]);

  /* SIGINT/SIGTERM are taken with sigwait below; block them before any
   * server thread exists so every thread inherits the mask. */
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, NULL);

  strobe_server_desc d;
  memset(&d, 0, sizeof d);
  d.bind_address = "127.0.0.1";
  d.port = (uint16_t)port;
  d.token = token;
  d.quiet = 1;
  strobe_server *s = NULL;
  rc = strobe_server_start(&d, &s);
  memset(raw, 0, sizeof raw);
  if (rc) {
    memset(token, 0, sizeof token);
    if (rc == STROBE_EBUSY) cli_error("view", "port %llu is in use", (unsigned long long)port);
    else cli_error("view", "cannot start the server: %s", strobe_strerror(rc));
    return CLI_FAIL;
  }
  strobe_viewer_load_stats st;
  rc = strobe_server_view_file(s, path, compare, (uint32_t)max_spans, &st);
  if (rc) {
    const char *bad = compare && access(path, R_OK) == 0 ? compare : path;
    if (rc == STROBE_EIO && access(bad, R_OK) != 0) cli_error("view", "%s: %s", bad, strerror(errno));
    else cli_error("view", "%s%s%s: %s", path, compare ? " or " : "", compare ? compare : "", strobe_strerror(rc));
    strobe_server_stop(s);
    memset(token, 0, sizeof token);
    return CLI_FAIL;
  }
  if (!quiet) {
    cli_error("view", "%s: %llu spans, %llu frames, %.1f MiB in memory, loaded in %.0f ms", path,
            (unsigned long long)st.spans, (unsigned long long)st.frames, (double)st.model_bytes / (1 << 20),
            st.build_ms);
    if (st.spans_cut) cli_error("view", "%s: %llu more spans not kept (--max-spans)", path, (unsigned long long)st.spans_cut);
    if (merge_hint)
      cli_error("view", "comparing %s against %s (to see them side by side on one timeline: strobe view --merge)",
                compare, path);
  }
  /* The server keeps its own copy of the token; ours goes once printed. */
  char url[160];
  snprintf(url, sizeof url, "http://127.0.0.1:%u/#token=%s", (unsigned)strobe_server_query_port(s), token);
  memset(token, 0, sizeof token);
  printf("%s\n", url);
  fflush(stdout);
  if (!quiet) cli_error("view", "serving until interrupted (Ctrl-C)");
  memset(url, 0, sizeof url);
  char code[STROBE_SERVER_OPEN_CODE_LEN + 1];
  if (!no_open && !strobe_server_make_open_code(s, code)) { /* the browser's command line: a code used once */
    snprintf(url, sizeof url, "http://127.0.0.1:%u/#code=%s", (unsigned)strobe_server_query_port(s), code);
    open_browser(url);
    memset(url, 0, sizeof url);
  }

  int sig = 0;
  while (sigwait(&stop, &sig) != 0) {
  }
  strobe_server_stop(s);
  return damaged;
}
#endif
