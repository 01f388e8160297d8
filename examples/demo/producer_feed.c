/*
 * producer_feed.c — the demo's external producer process (producer_feed.h):
 * spawned with posix_spawnp, its standard input a pipe that carries the
 * server's URL and token, stopped with SIGTERM and reaped.
 *
 * Owns: the child's pid and the pipe's write end. Must never: leave the
 * child running past producer_feed_stop, or pass the token on its command
 * line or in its environment (both visible to other users' ps).
 */
#include "producer_feed.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int producer_feed_spawn(producer_feed *f, const char *script, char *why, size_t cap) {
  f->pid = 0;
  f->fd = -1;
  if (access(script, R_OK) != 0) {
    snprintf(why, cap, "%s: %s", script, strerror(errno));
    return -1;
  }
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    snprintf(why, cap, "pipe: %s", strerror(errno));
    return -1;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, p[0], 0);
  char *argv[] = {"python3", (char *)script, NULL};
  int rc = posix_spawnp(&f->pid, "python3", &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(p[0]);
  if (rc) {
    close(p[1]);
    f->pid = 0;
    snprintf(why, cap, "cannot run python3: %s", strerror(rc));
    return -1;
  }
  f->fd = p[1];
  return 0;
}

void producer_feed_connect(producer_feed *f, uint16_t port, const char *token) {
  if (f->fd < 0) return;
  char line[700];
  int n = snprintf(line, sizeof line, "http://127.0.0.1:%u %s\n", (unsigned)port, token);
  if (n > 0 && (size_t)n < sizeof line && write(f->fd, line, (size_t)n) != n) {
    /* it went away: producer_feed_stop reaps it */
  }
  close(f->fd);
  f->fd = -1;
}

void producer_feed_stop(producer_feed *f) {
  if (f->fd >= 0) { /* never connected: end of input ends it */
    close(f->fd);
    f->fd = -1;
  }
  if (!f->pid) return;
  kill(f->pid, SIGTERM);
  int st;
  while (waitpid(f->pid, &st, 0) < 0 && errno == EINTR) {
  }
  f->pid = 0;
}
