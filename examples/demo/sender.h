/*
 * sender.h — the demo's present thread. The render thread hands each
 * finished frame over (Strobe's take / hand off / resume: the operation
 * moves threads with it); the sender presents only the newest, and frames
 * it never presents are ended as committed: false — work thrown away is
 * still worth seeing.
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

typedef struct sender {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  sender_frame queue[SENDER_QUEUE];
  int count, stop;
  const char *out_dir;
  uint64_t presented, superseded;
} sender;

int sender_start(sender *s, const char *out_dir);
/* Hands the calling thread's current operation and a copy of the frame to the sender. */
void sender_submit(sender *s, const unsigned char *png, size_t len, uint64_t number);
void sender_stop(sender *s);

#endif
