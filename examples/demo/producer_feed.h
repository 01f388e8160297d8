/*
 * producer_feed.h — runs examples/demo/producer.py beside the demo: a
 * process in another language feeding the lane `py/audio` of the demo's
 * capture over HTTP (docs/server.md §External producers).
 *
 * It is spawned before the sampler starts (perf_event_open's inherit would
 * sample a later child into the demo's buffers), and told where the server
 * is, and its token, over a pipe once the server runs.
 */
#ifndef STROBE_DEMO_PRODUCER_FEED_H
#define STROBE_DEMO_PRODUCER_FEED_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct producer_feed {
  pid_t pid; /* 0: not running */
  int fd;    /* the write end of its standard input; -1 once used */
} producer_feed;

/* Spawns `python3 script` with a pipe as its standard input. Returns 0, or
 * -1 with `why` (cap bytes) saying why not (no python3, no script): the
 * demo then runs without the lane and says so. */
int producer_feed_spawn(producer_feed *f, const char *script, char *why, size_t cap);
/* Tells it the server's URL and token (on the pipe, never on a command
 * line where ps shows it); it starts posting. */
void producer_feed_connect(producer_feed *f, uint16_t port, const char *token);
/* Asks it to send what it has and stop (SIGTERM; a feed never connected just
 * ends), and waits for it. Before the capture stops, so its last batch
 * still has somewhere to go. */
void producer_feed_stop(producer_feed *f);

#endif
