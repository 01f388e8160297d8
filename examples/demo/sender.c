/*
 * sender.c — the present thread (see sender.h). A slow present every 15th
 * frame lets frames pile up, so some are superseded, as on a real device;
 * GPU fences are polled before each present and every millisecond
 * while frames are in flight, so a slow present shows up as polling latency.
 */
#include "sender.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void present(sender *s, sender_frame *f) {
  strobe_op_resume(f->op);
  {
    STROBE_STAGE("present", NULL);
    if (f->number % 60 == 0) { /* keep the latest screen on disk now and then */
      char path[512];
      snprintf(path, sizeof path, "%s/last-frame.png", s->out_dir);
      FILE *fp = fopen(path, "wb");
      if (fp) {
        fwrite(f->png, 1, f->png_len, fp);
        fclose(fp);
        STROBE_COUNTER_ADD_UNIT("bytes_written", f->png_len, STROBE_UNIT_BYTES);
      }
    }
    usleep(f->number % 15 == 0 ? 70000 : 2000); /* waiting for the display; now and then a long wait */
  }
  strobe_op_end(f->op, 1);
  __atomic_fetch_add(&s->presented, 1, __ATOMIC_RELAXED);
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

static void *sender_main(void *arg) {
  sender *s = arg;
  strobe_thread_set_name("sender");
  pthread_mutex_lock(&s->lock);
  for (;;) {
    while (!s->count && !s->gpu_count && !s->stop && !s->n_in_flight) pthread_cond_wait(&s->wake, &s->lock);
    if (!s->count && !s->gpu_count && s->n_in_flight) { /* nothing to present: wait a little, then poll again */
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
    for (int i = 0; i < n - 1; i++) { /* superseded by a newer frame: never presented */
      strobe_op_resume(batch[i].op);
      strobe_op_end(batch[i].op, 0);
      __atomic_fetch_add(&s->superseded, 1, __ATOMIC_RELAXED);
      free(batch[i].png);
    }
    if (n) {
      present(s, &batch[n - 1]);
      free(batch[n - 1].png);
    }
    pthread_mutex_lock(&s->lock);
  }
  pthread_mutex_unlock(&s->lock);
  return NULL;
}

int sender_start(sender *s, const char *out_dir, const sender_gpu *gpu) {
  memset(s, 0, sizeof *s);
  s->out_dir = out_dir;
  if (gpu) s->gpu = *gpu;
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->wake, NULL);
  return pthread_create(&s->thread, NULL, sender_main, s);
}

void sender_submit(sender *s, const unsigned char *png, size_t len, uint64_t number, int gpu_slot) {
  sender_frame f = {strobe_op_take(), malloc(len ? len : 1), len, number};
  if (f.png) memcpy(f.png, png, len);
  pthread_mutex_lock(&s->lock);
  if (gpu_slot >= 0) { /* the GPU frame is never dropped: its slot comes back only through the sender's poll */
    if (s->gpu_count < SENDER_GPU_MAX)
      s->gpu_queue[s->gpu_count++] = (sender_gpu_frame){gpu_slot, number};
    else
      s->gpu_untracked++;
  }
  if (s->count == SENDER_QUEUE) { /* the sender is far behind: the oldest is dropped here */
    sender_frame old = s->queue[0];
    memmove(s->queue, s->queue + 1, (SENDER_QUEUE - 1) * sizeof *s->queue);
    s->count--;
    pthread_mutex_unlock(&s->lock);
    strobe_op_resume(old.op);
    strobe_op_end(old.op, 0);
    free(old.png);
    pthread_mutex_lock(&s->lock);
    __atomic_fetch_add(&s->superseded, 1, __ATOMIC_RELAXED);
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
}
