/*
 * sender.c — the present thread (see sender.h). A slow present every 15th
 * frame lets frames pile up, so some are superseded, as on a real device.
 */
#include "sender.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static void *sender_main(void *arg) {
  sender *s = arg;
  strobe_thread_set_name("sender");
  pthread_mutex_lock(&s->lock);
  for (;;) {
    while (!s->count && !s->stop) pthread_cond_wait(&s->wake, &s->lock);
    if (!s->count && s->stop) break;
    sender_frame batch[SENDER_QUEUE];
    int n = s->count;
    memcpy(batch, s->queue, (size_t)n * sizeof *batch);
    s->count = 0;
    pthread_mutex_unlock(&s->lock);
    for (int i = 0; i < n - 1; i++) { /* superseded by a newer frame: never presented */
      strobe_op_resume(batch[i].op);
      strobe_op_end(batch[i].op, 0);
      __atomic_fetch_add(&s->superseded, 1, __ATOMIC_RELAXED);
      free(batch[i].png);
    }
    present(s, &batch[n - 1]);
    free(batch[n - 1].png);
    pthread_mutex_lock(&s->lock);
  }
  pthread_mutex_unlock(&s->lock);
  return NULL;
}

int sender_start(sender *s, const char *out_dir) {
  memset(s, 0, sizeof *s);
  s->out_dir = out_dir;
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->wake, NULL);
  return pthread_create(&s->thread, NULL, sender_main, s);
}

void sender_submit(sender *s, const unsigned char *png, size_t len, uint64_t number) {
  sender_frame f = {strobe_op_take(), malloc(len ? len : 1), len, number};
  if (f.png) memcpy(f.png, png, len);
  pthread_mutex_lock(&s->lock);
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
