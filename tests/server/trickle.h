/*
 * trickle.h — slow-header clients, shared by tests/server/test_server_http.c
 * (slow_clients) and bench/bench_server.c (slow_client_mcp_ms_p99): a thread
 * that keeps `n` loopback connections open, each sending one byte of a
 * never-ending request header every `byte_ms`, and opens a new one (at most
 * once per `byte_ms` per slot, and `max_connects` in all) when the server
 * closes one. It records how long each connection the server closed had
 * lived, as the client saw it (from connect() to the end being seen).
 * Bounded in count (n, max_connects) and time (the caller stops it).
 */
#ifndef STROBE_TESTS_SERVER_TRICKLE_H
#define STROBE_TESTS_SERVER_TRICKLE_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "support/fixtures.h"

#define TRICKLE_MAX 1024

typedef struct trickle {
  uint16_t port;
  int n, byte_ms, max_connects;
  int stop; /* atomic: set by the caller */
  int fds[TRICKLE_MAX];
  double opened_ms[TRICKLE_MAX], last_ms[TRICKLE_MAX];
  unsigned sent[TRICKLE_MAX];
  /* results, read after trickle_stop */
  unsigned connects, closed_by_server, connect_failures; /* closed_by_server: atomic */
  double max_life_ms;      /* longest life of a connection the server closed */
  double max_open_ms;      /* longest life of one still open at the stop */
  pthread_t thread;
} trickle;

/* Raises the soft descriptor limit to `want` (within the hard limit).
 * Returns the limit now in force. */
static inline long trickle_raise_nofile(long want) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return -1;
  if ((long)rl.rlim_cur < want) {
    rl.rlim_cur = (rlim_t)want <= rl.rlim_max ? (rlim_t)want : rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
  }
  return (long)rl.rlim_cur;
}

static inline int trickle_connect(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0 && errno != EINPROGRESS) {
    close(fd);
    return -1;
  }
  return fd;
}

static inline void trickle_closed(trickle *t, int i, double now) {
  double life = now - t->opened_ms[i];
  if (life > t->max_life_ms) t->max_life_ms = life;
  __atomic_fetch_add(&t->closed_by_server, 1u, __ATOMIC_RELAXED); /* read while running */
  close(t->fds[i]);
  t->fds[i] = -1;
  t->last_ms[i] = now;
}

static void *trickle_main(void *arg) {
  trickle *t = (trickle *)arg;
  static const char head[] = "GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
  static struct pollfd pf[TRICKLE_MAX];
  static int idx[TRICKLE_MAX];
  while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE)) {
    double now = fx_now_ms();
    int np = 0;
    for (int i = 0; i < t->n; i++) {
      if (t->fds[i] < 0) {
        if (now - t->last_ms[i] < t->byte_ms || (int)t->connects >= t->max_connects) continue;
        t->fds[i] = trickle_connect(t->port);
        t->last_ms[i] = now;
        if (t->fds[i] < 0) {
          t->connect_failures++;
          continue;
        }
        t->connects++;
        t->opened_ms[i] = now;
        t->sent[i] = 0;
        continue;
      }
      if (now - t->last_ms[i] >= t->byte_ms) {
        char c = t->sent[i] < sizeof head - 1 ? head[t->sent[i]] : 'a';
        ssize_t k = send(t->fds[i], &c, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k == 1) {
          t->sent[i]++;
          t->last_ms[i] = now;
        } else if (k < 0 && errno != EAGAIN && errno != ENOTCONN) {
          trickle_closed(t, i, now);
          continue;
        }
      }
      pf[np].fd = t->fds[i];
      pf[np].events = POLLIN;
      pf[np].revents = 0;
      idx[np++] = i;
    }
    if (poll(pf, (nfds_t)np, 20) <= 0) {
      if (np == 0) fx_sleep_ms(20);
      continue;
    }
    now = fx_now_ms();
    for (int k = 0; k < np; k++) {
      if (!pf[k].revents) continue;
      char buf[256];
      ssize_t r = recv(pf[k].fd, buf, sizeof buf, MSG_DONTWAIT);
      if (r == 0 || (r < 0 && errno != EAGAIN)) trickle_closed(t, idx[k], now);
    }
  }
  double now = fx_now_ms();
  for (int i = 0; i < t->n; i++) {
    if (t->fds[i] < 0) continue;
    if (now - t->opened_ms[i] > t->max_open_ms) t->max_open_ms = now - t->opened_ms[i];
    close(t->fds[i]);
    t->fds[i] = -1;
  }
  return NULL;
}

/* Starts n (<= TRICKLE_MAX) trickling connections to 127.0.0.1:port. */
static inline int trickle_start(trickle *t, uint16_t port, int n, int byte_ms, int max_connects) {
  memset(t, 0, sizeof *t);
  t->port = port;
  t->n = n < TRICKLE_MAX ? n : TRICKLE_MAX;
  t->byte_ms = byte_ms;
  t->max_connects = max_connects;
  double now = fx_now_ms();
  for (int i = 0; i < t->n; i++) {
    t->fds[i] = -1;
    t->last_ms[i] = now - byte_ms; /* connect at once */
  }
  return pthread_create(&t->thread, NULL, trickle_main, t);
}

static inline void trickle_stop(trickle *t) {
  __atomic_store_n(&t->stop, 1, __ATOMIC_RELEASE);
  pthread_join(t->thread, NULL);
}

#endif
