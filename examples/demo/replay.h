/*
 * replay.h — the demo's offline modes (replay.c): redrawing a captured
 * frame from its deep capture, and the deep capture's cost as BENCH lines.
 */
#ifndef STROBE_DEMO_REPLAY_H
#define STROBE_DEMO_REPLAY_H

#include <stdint.h>

/* `--replay CAPTURE --frame N [--out PNG] [--calls]`; returns the exit code. */
int demo_replay(const char *capture, uint64_t frame, const char *out_png, int list_calls);
/* `--bench-deep N`: N frames with and N without a deep capture, recorded into DIR; returns the exit code. */
int demo_bench_deep(int frames, const char *dir);

#endif
