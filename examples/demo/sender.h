/*
 * sender.h — the demo's present side, a separate process (docs/sessions.md
 * §Across processes), as a toolkit's sender process is: the render thread
 * hands each finished frame to the link thread (strobe_op_take), which
 * writes it into an operation token (strobe_op_hand_off_remote: the frame
 * ends here, handed off to "sender") and sends token and PNG over a Unix
 * socket to the sender process. That process resumes each frame
 * (strobe_op_resume_remote), presents only the newest and ends the others as
 * committed: false (work thrown away is still worth seeing); its own session
 * report (sender-report.json) holds the whole frames, with the render
 * process's stages beside its own, and its capture is sender.strobe.
 *
 * With the GPU path (gpu.h), each frame also carries the slot of its GPU
 * work, which lives in this process: the link thread polls those fences
 * between hand-offs without ever waiting on them (a short timed wait on its
 * own queue instead), and hands each completed one to the release hook
 * (docs/gpu.md §Vulkan: the fence-seen instant is when this poll noticed it).
 *
 * Before any frame, the render process takes a clock-offset sample of the
 * sender process over the socket (docs/sessions.md §Across hosts), NTP-style
 * with strobe_query_host_clock on both sides, and keeps it
 * (strobe_clock_offset_add): its capture carries it, and `strobe merge`
 * shows it. One host and boot: the offset is 0 within its bound, a check of
 * the estimate the way two hosts would be aligned.
 */
#ifndef STROBE_DEMO_SENDER_H
#define STROBE_DEMO_SENDER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "strobe/session.h"

#define SENDER_QUEUE 4

typedef struct sender_frame {
  strobe_op op;         /* taken from the render thread */
  unsigned char *png;   /* owned */
  size_t png_len;
  uint64_t number;
} sender_frame;

typedef struct sender_gpu_frame {
  int slot;             /* the GPU path's slot */
  uint64_t number;      /* the frame */
} sender_gpu_frame;

/* The GPU path's hooks: poll answers 1 once the slot's fence signalled
 * (never waits); release is called once per completed slot. */
typedef struct sender_gpu {
  void *ctx;
  int (*poll)(void *ctx, int slot);
  void (*release)(void *ctx, int slot, uint64_t frame);
} sender_gpu;

#define SENDER_GPU_MAX 8 /* GPU frames in flight the link thread polls at most (the GPU path has fewer) */
#define SENDER_SUMMARY_MAX 512

typedef struct sender {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  sender_frame queue[SENDER_QUEUE];
  int count, stop;
  int fd;                                   /* the socket to the sender process */
  pid_t pid;                                /* the sender process */
  uint64_t handed, dropped_here, send_failed; /* handed to it; dropped before (queue full); not sent (it died) */
  uint64_t presented, superseded;           /* what the sender process did, read back at stop */
  char summary[SENDER_SUMMARY_MAX];         /* its own line about its session, read back at stop */
  sender_gpu gpu;                           /* hooks; poll NULL: no GPU path */
  sender_gpu_frame gpu_queue[SENDER_GPU_MAX]; /* under lock: GPU frames handed over, never dropped */
  int gpu_count;
  sender_gpu_frame in_flight[SENDER_GPU_MAX]; /* link thread: GPU frames whose fence it has not seen */
  int n_in_flight;
  uint64_t gpu_untracked;                     /* GPU frames beyond SENDER_GPU_MAX (not expected: the GPU path has fewer) */
  strobe_clock_offset clock;                  /* the sample of the sender process's clock, kept at spawn */
  int clock_rc;                               /* 0 when it was kept; else why not (a STROBE_E* code) */
} sender;

/* Starts the sender process (this executable again, with --sender-process),
 * waits until its session runs and takes the clock-offset sample (clock,
 * clock_rc). Call it before the sampler starts: a
 * process started after it would be sampled into this process's buffers
 * (perf_event_open's inherit follows children). Returns 0, or -1 with a
 * message on stderr. */
int sender_spawn(sender *s, const char *out_dir);
/* Starts the link thread. gpu: the GPU path's hooks, or NULL. Returns 0 or -1. */
int sender_start(sender *s, const sender_gpu *gpu);
/* Hands the calling thread's current operation and a copy of the frame to
 * the link thread; gpu_slot is the frame's GPU work to poll (-1: none). */
void sender_submit(sender *s, const unsigned char *png, size_t len, uint64_t number, int gpu_slot);
/* Hands off what is queued, closes the socket, waits for the sender process
 * and reads back what it did. */
void sender_stop(sender *s);

/* The sender process: strobe-demo --sender-process FD DIR. Returns its exit status. */
int sender_process_main(int fd, const char *out_dir);

#endif
