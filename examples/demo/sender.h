/*
 * sender.h — the demo's present thread. The render thread hands each
 * finished frame over (Strobe's take / hand off / resume: the operation
 * moves threads with it); the sender presents only the newest, and frames
 * it never presents are ended as committed: false — work thrown away is
 * still worth seeing.
 *
 * With the GPU path (gpu.h), each frame also carries the slot of its GPU
 * work: the sender polls that fence between presents without ever waiting
 * on it (a short timed wait on its own queue instead), and hands each
 * completed one to the release hook (docs/gpu.md §Vulkan: the fence-seen
 * instant is when this poll noticed it).
 */
#ifndef STROBE_DEMO_SENDER_H
#define STROBE_DEMO_SENDER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

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

#define SENDER_GPU_MAX 8 /* GPU frames in flight the sender polls at most (the GPU path has fewer) */

typedef struct sender {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  sender_frame queue[SENDER_QUEUE];
  int count, stop;
  const char *out_dir;
  uint64_t presented, superseded;
  sender_gpu gpu;                           /* hooks; poll NULL: no GPU path */
  sender_gpu_frame gpu_queue[SENDER_GPU_MAX]; /* under lock: GPU frames handed over, never dropped */
  int gpu_count;
  sender_gpu_frame in_flight[SENDER_GPU_MAX]; /* sender thread: GPU frames whose fence it has not seen */
  int n_in_flight;
  uint64_t gpu_untracked;                     /* GPU frames beyond SENDER_GPU_MAX (not expected: the GPU path has fewer) */
} sender;

/* gpu: the GPU path's hooks, or NULL. */
int sender_start(sender *s, const char *out_dir, const sender_gpu *gpu);
/* Hands the calling thread's current operation and a copy of the frame to
 * the sender; gpu_slot is the frame's GPU work to poll (-1: none). */
void sender_submit(sender *s, const unsigned char *png, size_t len, uint64_t number, int gpu_slot);
void sender_stop(sender *s);

#endif
