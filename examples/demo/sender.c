/*
 * sender.c — the present side as a separate process (see sender.h): the
 * link thread of the render process and the sender process's loop. A slow
 * present every 15th frame lets frames pile up, so some are superseded, as
 * on a real device; GPU fences are polled before each hand-off and every
 * millisecond while frames are in flight, so a slow socket write shows up as
 * polling latency. The wire: per frame a header (token and PNG lengths,
 * frame number), the operation token, the PNG; at the end, from the sender
 * process, its counts and one summary line. Before the frames, clock round
 * trips (>>clock): a 'c' asked, its times answered; an 'e' ends them.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* SOCK_CLOEXEC, MSG_NOSIGNAL */
#endif
#include "sender.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "strobe/record.h"

extern char **environ;

typedef struct wire_head {
  uint32_t token_len, png_len;
  uint64_t number;
} wire_head;

typedef struct wire_clock {
  char boot[33], pad[7]; /* the sender host's boot id */
  uint64_t t1, t2;       /* its CLOCK_MONOTONIC when the question arrived and just before the answer */
} wire_clock;

typedef struct wire_result {
  uint64_t presented, superseded;
  uint32_t summary_len, pad;
} wire_result;

static int write_all(int fd, const void *data, size_t n) {
  const char *p = data;
  while (n) {
    ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

/* 0, or -1 on an error or the end of the stream. */
static int read_all(int fd, void *data, size_t n) {
  char *p = data;
  while (n) {
    ssize_t k = read(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

/* >>link: the render process's side */

/* Hands the frame's operation to the sender process and sends it: the
 * operation ends here as handed off to "sender". */
static void hand_off(sender *s, sender_frame *f) {
  STROBE_SCOPE("hand_off_frame");
  uint8_t token[STROBE_OP_TOKEN_MAX];
  size_t len = 0;
  int rc = strobe_op_hand_off_remote(f->op, "sender", token, sizeof token, &len);
  if (rc) { /* no token (profiling compiled out, or an operation ended already): the frame still goes */
    if (f->op.id) {
      strobe_op_resume(f->op);
      strobe_op_end(f->op, 0);
    }
    len = 0;
  }
  wire_head h = {(uint32_t)len, (uint32_t)f->png_len, f->number};
  if (write_all(s->fd, &h, sizeof h) || write_all(s->fd, token, len) || write_all(s->fd, f->png, f->png_len))
    s->send_failed++;
  else
    s->handed++;
  STROBE_COUNTER_ADD_UNIT("bytes_sent", sizeof h + len + f->png_len, STROBE_UNIT_BYTES);
}

/* Polls every GPU frame in flight once (never waits) and releases the completed ones. */
static void poll_gpu(sender *s) {
  for (int i = 0; i < s->n_in_flight;) {
    sender_gpu_frame *f = &s->in_flight[i];
    if (s->gpu.poll(s->gpu.ctx, f->slot)) {
      s->gpu.release(s->gpu.ctx, f->slot, f->number);
      s->in_flight[i] = s->in_flight[--s->n_in_flight];
    } else {
      i++;
    }
  }
}

#define POLL_INTERVAL_NS 1000000 /* between fence polls while GPU frames are in flight: the polling latency's floor */

static void *link_main(void *arg) {
  sender *s = arg;
  strobe_thread_set_name("link");
  pthread_mutex_lock(&s->lock);
  for (;;) {
    while (!s->count && !s->gpu_count && !s->stop && !s->n_in_flight) pthread_cond_wait(&s->wake, &s->lock);
    if (!s->count && !s->gpu_count && s->n_in_flight) { /* nothing to send: wait a little, then poll again */
      struct timespec until;
      clock_gettime(CLOCK_REALTIME, &until);
      until.tv_nsec += POLL_INTERVAL_NS;
      if (until.tv_nsec >= 1000000000) until.tv_sec++, until.tv_nsec -= 1000000000;
      pthread_cond_timedwait(&s->wake, &s->lock, &until);
    }
    if (!s->count && !s->gpu_count && s->stop && !s->n_in_flight) break;
    sender_frame batch[SENDER_QUEUE];
    int n = s->count;
    memcpy(batch, s->queue, (size_t)n * sizeof *batch);
    s->count = 0;
    for (int i = 0; i < s->gpu_count; i++) {
      if (s->n_in_flight < SENDER_GPU_MAX)
        s->in_flight[s->n_in_flight++] = s->gpu_queue[i];
      else
        s->gpu_untracked++;
    }
    s->gpu_count = 0;
    pthread_mutex_unlock(&s->lock);
    if (s->n_in_flight) poll_gpu(s);
    for (int i = 0; i < n; i++) { /* every frame goes: the sender process decides which it presents */
      hand_off(s, &batch[i]);
      free(batch[i].png);
    }
    pthread_mutex_lock(&s->lock);
  }
  pthread_mutex_unlock(&s->lock);
  return NULL;
}

/* >>clock: CLOCK_ROUNDS round trips, the one with the lowest round trip kept as the sample
 * (docs/sessions.md §Across hosts: the peer's clock minus ours is ((t1 - t0) + (t2 - t3)) / 2, within half
 * the round trip less the peer's own time). Returns 0 with *o filled, or a STROBE_E* code. */
#define CLOCK_ROUNDS 8
static int measure_clock(int fd, strobe_clock_offset *o) {
  memset(o, 0, sizeof *o);
  snprintf(o->peer, sizeof o->peer, "sender");
  uint32_t rounds = 0;
  for (int i = 0; i < CLOCK_ROUNDS; i++) {
    uint64_t t0 = 0, t3 = 0;
    wire_clock a;
    strobe_query_host_clock(NULL, &t0);
    if (write_all(fd, "c", 1) || read_all(fd, &a, sizeof a)) return STROBE_EIO;
    strobe_query_host_clock(NULL, &t3);
    a.boot[32] = 0;
    if (a.t2 < a.t1 || t3 <= t0 || a.t2 - a.t1 >= t3 - t0) continue; /* not a clock reply: nothing kept */
    rounds++;
    uint64_t rtt = t3 - t0;
    if (o->rounds && rtt >= o->rtt_ns) continue;
    uint64_t err = (rtt - (a.t2 - a.t1)) / 2;
    o->rounds = 1; /* a kept round: the count is set below */
    o->rtt_ns = rtt;
    o->error_ns = err ? err : 1;
    o->offset_ns = (((int64_t)(a.t1 - t0)) + ((int64_t)a.t2 - (int64_t)t3)) / 2;
    o->at_mono_ns = t0 + rtt / 2;
    memcpy(o->peer_boot_id, a.boot, sizeof o->peer_boot_id);
  }
  if (write_all(fd, "e", 1)) return STROBE_EIO;
  if (!rounds) return STROBE_EPEER;
  o->rounds = rounds;
  return strobe_clock_offset_add(o);
}

int sender_spawn(sender *s, const char *out_dir) {
  memset(s, 0, sizeof *s);
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
    fprintf(stderr, "strobe-demo: socketpair: %s\n", strerror(errno));
    return -1;
  }
  int big = 4 << 20; /* a few frames in flight without blocking the link thread */
  setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
  setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  /* The child's end survives exec; ours does not (nothing else we start gets it). */
  fcntl(sv[1], F_SETFD, 0);
  char fd_arg[16];
  snprintf(fd_arg, sizeof fd_arg, "%d", sv[1]);
  char *const args[] = {"strobe-demo", "--sender-process", fd_arg, (char *)out_dir, NULL};
  int rc = posix_spawn(&s->pid, "/proc/self/exe", NULL, NULL, args, environ);
  close(sv[1]);
  char ready = 0;
  if (rc || read_all(sv[0], &ready, 1) || ready != 'r') {
    fprintf(stderr, "strobe-demo: the sender process did not start: %s\n", rc ? strerror(rc) : "no ready message");
    close(sv[0]);
    if (!rc) waitpid(s->pid, NULL, 0);
    return -1;
  }
  s->fd = sv[0];
  s->clock_rc = measure_clock(s->fd, &s->clock);
  return 0;
}

int sender_start(sender *s, const sender_gpu *gpu) {
  if (gpu) s->gpu = *gpu;
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->wake, NULL);
  return pthread_create(&s->thread, NULL, link_main, s) ? -1 : 0;
}

void sender_submit(sender *s, const unsigned char *png, size_t len, uint64_t number, int gpu_slot) {
  sender_frame f = {strobe_op_take(), malloc(len ? len : 1), len, number};
  if (f.png) memcpy(f.png, png, len);
  else f.png_len = 0;
  pthread_mutex_lock(&s->lock);
  if (gpu_slot >= 0) { /* the GPU frame is never dropped: its slot comes back only through the link's poll */
    if (s->gpu_count < SENDER_GPU_MAX)
      s->gpu_queue[s->gpu_count++] = (sender_gpu_frame){gpu_slot, number};
    else
      s->gpu_untracked++;
  }
  if (s->count == SENDER_QUEUE) { /* the link is far behind: the oldest is dropped here, never sent */
    sender_frame old = s->queue[0];
    memmove(s->queue, s->queue + 1, (SENDER_QUEUE - 1) * sizeof *s->queue);
    s->count--;
    pthread_mutex_unlock(&s->lock);
    strobe_op_resume(old.op);
    strobe_op_end(old.op, 0);
    free(old.png);
    pthread_mutex_lock(&s->lock);
    s->dropped_here++;
  }
  s->queue[s->count++] = f;
  pthread_cond_signal(&s->wake);
  pthread_mutex_unlock(&s->lock);
}

void sender_stop(sender *s) {
  pthread_mutex_lock(&s->lock);
  s->stop = 1;
  pthread_cond_signal(&s->wake);
  pthread_mutex_unlock(&s->lock);
  pthread_join(s->thread, NULL);
  pthread_mutex_destroy(&s->lock);
  pthread_cond_destroy(&s->wake);
  shutdown(s->fd, SHUT_WR); /* the sender process presents what it has, then answers */
  wire_result r;
  if (!read_all(s->fd, &r, sizeof r) && r.summary_len < sizeof s->summary &&
      !read_all(s->fd, s->summary, r.summary_len)) {
    s->presented = r.presented;
    s->superseded = r.superseded;
    s->summary[r.summary_len] = 0;
  } else {
    snprintf(s->summary, sizeof s->summary, "sender process: no answer (it failed)");
  }
  close(s->fd);
  int status = 0;
  waitpid(s->pid, &status, 0);
}

/* >>sender process */
typedef struct message {
  wire_head h;
  uint8_t token[STROBE_OP_TOKEN_MAX];
  unsigned char *png;
} message;

/* 1 with a whole message, 0 at the end of the stream, -1 on an error. */
static int read_message(int fd, message *m) {
  ssize_t k;
  do k = read(fd, &m->h, 1);
  while (k < 0 && errno == EINTR);
  if (k == 0) return 0;
  if (k < 0 || read_all(fd, (char *)&m->h + 1, sizeof m->h - 1) || m->h.token_len > sizeof m->token ||
      m->h.png_len > (64u << 20))
    return -1;
  m->png = malloc(m->h.png_len ? m->h.png_len : 1);
  if (!m->png || read_all(fd, m->token, m->h.token_len) || read_all(fd, m->png, m->h.png_len)) {
    free(m->png);
    m->png = NULL;
    return -1;
  }
  return 1;
}

static void present(const char *out_dir, const message *m) {
  STROBE_STAGE("present", NULL);
  if (m->h.number % 60 == 0) { /* keep the latest screen on disk now and then */
    char path[1024];
    snprintf(path, sizeof path, "%s/last-frame.png", out_dir);
    FILE *fp = fopen(path, "wb");
    if (fp) {
      fwrite(m->png, 1, m->h.png_len, fp);
      fclose(fp);
      STROBE_COUNTER_ADD_UNIT("bytes_written", m->h.png_len, STROBE_UNIT_BYTES);
    }
  }
  usleep(m->h.number % 15 == 0 ? 70000 : 2000); /* waiting for the display; now and then a long wait */
}

/* Resumes a frame another process handed off (inert without a token, or refused: counted). */
static strobe_op resume(strobe_collector *c, strobe_window w, const message *m) {
  int st = 0;
  strobe_op op = m->h.token_len ? strobe_op_resume_remote(c, w, m->token, m->h.token_len, &st) : (strobe_op){0, c};
  if (st) fprintf(stderr, "strobe-demo sender: frame %llu refused: %s\n", (unsigned long long)m->h.number,
                  strobe_strerror(st));
  return op;
}

#define BATCH 16

/* >>clock: answers the render process's round trips ('c': this host's boot id and clock twice) until it
 * says it is done ('e'). Returns 0, or 1 when the socket failed. */
static int answer_clock(int fd) {
  for (char q = 0; q != 'e';) {
    wire_clock a;
    memset(&a, 0, sizeof a);
    if (read_all(fd, &q, 1) || (q != 'c' && q != 'e')) return 1;
    if (q == 'e') break;
    strobe_query_host_clock(a.boot, &a.t1);
    strobe_query_host_clock(NULL, &a.t2);
    if (write_all(fd, &a, sizeof a)) return 1;
  }
  return 0;
}

/* Resumes every frame handed over until the stream ends: of those that arrived together only the newest is
 * presented, the others end as superseded (committed false). Returns 0, or 1 when the stream failed. */
static int present_frames(int fd, strobe_collector *c, strobe_window w, const char *out_dir, uint64_t *presented,
                          uint64_t *superseded) {
  static message batch[BATCH];
  int status = 0;
  for (;;) {
    int n = 0, r = read_message(fd, &batch[0]);
    if (r <= 0) {
      status = r < 0;
      break;
    }
    n = 1;
    /* Whatever else has arrived: only the newest is presented. */
    struct pollfd p = {fd, POLLIN, 0};
    while (n < BATCH && poll(&p, 1, 0) == 1 && (p.revents & POLLIN) && (r = read_message(fd, &batch[n])) > 0) n++;
    for (int i = 0; i < n - 1; i++) { /* superseded by a newer frame: never presented */
      strobe_op op = resume(c, w, &batch[i]);
      strobe_op_end(op, 0);
      (*superseded)++;
      free(batch[i].png);
    }
    strobe_op op = resume(c, w, &batch[n - 1]);
    present(out_dir, &batch[n - 1]);
    strobe_op_end(op, 1);
    (*presented)++;
    free(batch[n - 1].png);
    if (r <= 0) { /* the stream ended (or failed) while draining */
      status = r < 0;
      break;
    }
  }
  return status;
}

int sender_process_main(int fd, const char *out_dir) {
  strobe_thread_set_name("sender");
  strobe_collector *c = NULL;
  strobe_window w;
  char id[STROBE_SESSION_ID_MAX], path[1024], report_path[1024];
  snprintf(path, sizeof path, "%s/sender.strobe", out_dir);
  snprintf(report_path, sizeof report_path, "%s/sender-report.json", out_dir);
  strobe_recorder *rec = NULL;
  /* Its own collector, named "sender" (the name frames are handed to), its
   * own session and capture; the frames' window is main's. */
  if (strobe_collector_create(&c) || strobe_collector_set_process(c, "sender") ||
      strobe_window_register(c, "main", 0, &w) ||
      strobe_session_start(c, &(strobe_session_desc){.max_samples = STROBE_MAX_SAMPLES}, id) ||
      strobe_record_start(&(strobe_record_desc){.path = path}, &rec)) {
    fprintf(stderr, "strobe-demo sender: cannot set up its collector, session and capture\n");
    return 1;
  }
  if (write_all(fd, "r", 1)) return 1;
  if (answer_clock(fd)) return 1;
  uint64_t presented = 0, superseded = 0;
  int status = present_frames(fd, c, w, out_dir, &presented, &superseded);
  strobe_report *report = NULL;
  char *json = NULL;
  size_t len = 0;
  if (strobe_session_stop(c, id, 0, &report) || strobe_report_json(report, &json, &len)) status = 1;
  FILE *fp = json ? fopen(report_path, "w") : NULL;
  if (!fp || fwrite(json, 1, len, fp) != len) status = 1;
  if (fp && fclose(fp)) status = 1;
  free(json);
  strobe_report_counts k = report ? strobe_report_query_counts(report) : (strobe_report_counts){0};
  strobe_report_free(report);
  if (strobe_record_stop(rec)) status = 1;
  strobe_remote_stats rs;
  strobe_collector_query_remote_stats(c, &rs);
  unsigned long long refused = rs.refused_malformed + rs.refused_truncated + rs.refused_version +
                               rs.refused_corrupt + rs.refused_replayed + rs.refused_foreign + rs.refused_limit;
  wire_result res = {presented, superseded, 0, 0};
  char summary[SENDER_SUMMARY_MAX];
  int sl = snprintf(summary, sizeof summary,
                    "sender process (pid %d): %llu frames resumed from screen (%llu tokens refused), %llu "
                    "presented, %llu superseded; its session kept %llu whole frames, each with screen's stages "
                    "and its own (%s), its capture is %s",
                    (int)getpid(), (unsigned long long)rs.resumed, refused, (unsigned long long)presented,
                    (unsigned long long)superseded, (unsigned long long)k.returned, report_path, path);
  res.summary_len = sl < 0 ? 0 : sl >= (int)sizeof summary ? (uint32_t)sizeof summary - 1 : (uint32_t)sl;
  if (write_all(fd, &res, sizeof res) || write_all(fd, summary, res.summary_len)) status = 1;
  close(fd);
  strobe_collector_close(c);
  strobe_collector_release(c);
  return status;
}
