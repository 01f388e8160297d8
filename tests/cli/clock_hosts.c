/*
 * clock_hosts.c — two processes that stand for two hosts, for the clock
 * offset test (cli_test.py case clock_offset; docs/sessions.md §Across
 * hosts): "host" records DIR/a.strobe on this machine's clock; "peer" runs
 * under STROBE_TEST_FAKE_HOST (another boot id, its monotonic clock shifted
 * by SHIFT_NS), so its capture DIR/b.strobe and its server's /api/clock look
 * like a second host's, through the code a real one runs. Each runs a server
 * on 127.0.0.1 (tokens below), writes its port to DIR/host.port and
 * DIR/peer.port, then waits for a line on standard input; then each times a
 * marker scope (marker_a, marker_b), writing the real CLOCK_MONOTONIC
 * nanoseconds at which it began to DIR/a.mono and DIR/b.mono, and stops.
 *
 * usage: clock_hosts DIR SHIFT_NS
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strobe/record.h"
#include "strobe/server.h"
#include "support/fixtures.h"

#define HOST_TOKEN "host-token-0123456789abcdef"
#define PEER_TOKEN "peer-token-0123456789abcdef"
#define FAKE_BOOT "0123456789abcdef0123456789abcdef"

static void write_file(const char *dir, const char *name, unsigned long long v) {
  char path[1024], tmp[1100];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f || fprintf(f, "%llu\n", v) < 0 || fclose(f) || rename(tmp, path)) exit(10);
}

static int side(const char *dir, const char *name, const char *token, int go) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.strobe", dir, name[0] == 'h' ? "a" : "b");
  strobe_recorder *rec = NULL;
  strobe_server *srv = NULL;
  strobe_thread_set_name("main");
  if (strobe_record_start(&(strobe_record_desc){.path = path}, &rec)) return 11;
  if (strobe_server_start(&(strobe_server_desc){.token = token, .quiet = 1}, &srv)) return 12;
  char port_name[64];
  snprintf(port_name, sizeof port_name, "%s.port", name);
  write_file(dir, port_name, strobe_server_query_port(srv));
  char line[8];
  if (read(go, line, 1) != 1) return 13;
  uint64_t at = fx_now_ns(); /* right before the marker's BEGIN */
  if (name[0] == 'h') {
    STROBE_SCOPE("marker_a");
    fx_sleep_ms(2);
  } else {
    STROBE_SCOPE("marker_b");
    fx_sleep_ms(2);
  }
  write_file(dir, name[0] == 'h' ? "a.mono" : "b.mono", at);
  strobe_server_stop(srv);
  return strobe_record_stop(rec) ? 14 : 0;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: clock_hosts DIR SHIFT_NS\n");
    return 2;
  }
  int go[2][2];
  if (pipe(go[0]) || pipe(go[1])) return 3;
  pid_t kids[2];
  for (int k = 0; k < 2; k++) {
    kids[k] = fork();
    if (kids[k] == 0) {
      close(go[0][1]); /* neither write end: when the test is gone, the read below ends */
      close(go[1][1]);
      if (k == 1) { /* before the library reads its boot id or calibrates its clock */
        char fake[128];
        snprintf(fake, sizeof fake, "%s:%s", FAKE_BOOT, argv[2]);
        setenv("STROBE_TEST_FAKE_HOST", fake, 1);
      }
      _exit(side(argv[1], k ? "peer" : "host", k ? PEER_TOKEN : HOST_TOKEN, go[k][0]));
    }
    close(go[k][0]);
  }
  /* The test says when: a line on standard input (or its end) lets both time their markers and stop. */
  char buf[64];
  if (!fgets(buf, sizeof buf, stdin)) buf[0] = 0;
  int rc = 0;
  for (int k = 0; k < 2; k++) {
    if (write(go[k][1], "g", 1) != 1) rc = 4;
    close(go[k][1]);
  }
  for (int k = 0; k < 2; k++) {
    int st = 0;
    waitpid(kids[k], &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st)) {
      fprintf(stderr, "clock_hosts: %s exited %d\n", k ? "peer" : "host", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
      rc = 1;
    }
  }
  return rc;
}
