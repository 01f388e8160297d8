/*
 * bench_demo_gpu.c — the demo's frame time with its GPU path, per pass
 * (docs/gpu.md §Vulkan). Runs strobe-demo twice in the same run, headless
 * for the same number of frames: with its Vulkan device (lavapipe without a
 * GPU) and with no Vulkan driver (VK_ICD_FILENAMES pointing nowhere: the
 * baseline, the same frames without GPU passes). From each capture it reads
 * the main window's passes (their median duration: the frame time, the
 * present on the sender included) and, from the GPU run, each GPU pass's
 * median device time (its spans' end - begin at the domain's nominal rate)
 * and the CPU stage that uploads, records and submits them.
 * Must never: run without printing which demo it ran, or report a figure it
 * did not measure (a run that failed prints no BENCH line for it).
 *
 * STROBE_BENCH_NEEDS: demo-gpu
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strobe/capture.h"
#include "support/fixtures.h"

#define FRAMES 90
#define MAX_SAMPLES 4096

typedef struct samples {
  double v[MAX_SAMPLES];
  int n;
} samples;

static void add(samples *s, double x) {
  if (s->n < MAX_SAMPLES) s->v[s->n++] = x;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(samples *s) {
  if (!s->n) return NAN;
  qsort(s->v, (size_t)s->n, sizeof *s->v, cmp);
  return s->v[s->n / 2];
}

typedef struct run {
  samples frame_ms;        /* main passes */
  samples submit_ms;       /* the gpu_submit stage of main passes */
  samples pass_ms[3];      /* GPU spans: upload, filter, composite */
  double ticks_per_second; /* of the demo's GPU domain */
} run;

static const char *const pass_names[3] = {"gpu_upload", "gpu_filter", "gpu_composite"};

static int run_demo(const char *dir, int gpu, run *out) {
  char cmd[2048], path[1024];
  snprintf(cmd, sizeof cmd, "%s %s --frames %d --headless --out %s > %s/stdout.txt 2>&1",
           gpu ? "" : "VK_ICD_FILENAMES=/nonexistent/strobe-bench-no-driver.json", STROBE_DEMO_PATH, FRAMES, dir, dir);
  if (system(cmd) != 0) {
    fprintf(stderr, "bench_demo_gpu: %s failed (see %s/stdout.txt)\n", cmd, dir);
    return -1;
  }
  snprintf(path, sizeof path, "%s/demo.strobe", dir);
  strobe_capture *cap;
  if (strobe_capture_open(path, &cap)) return -1;
  memset(out, 0, sizeof *out);
  static samples spans_ticks[3];
  memset(spans_ticks, 0, sizeof spans_ticks);
  strobe_capture_record r;
  while (strobe_capture_next(cap, &r) > 0) {
    if (r.type == STROBE_REC_OP_END && r.op->kind == 1 && !strcmp(r.op->window, "main")) {
      add(&out->frame_ms, r.op->duration_ns / 1e6);
      for (uint32_t i = 0; i < r.op->nstages; i++)
        if (!strcmp(strobe_capture_query_site(cap, r.op->stages[i].site)->name, "gpu_submit"))
          add(&out->submit_ms, r.op->stages[i].total_ns / 1e6);
    } else if (r.type == STROBE_REC_CLOCK_PAIR && !strcmp(r.device->domain, "demo_gpu")) {
      out->ticks_per_second = r.device->ticks_per_second;
    } else if (r.type == STROBE_REC_GPU_SPAN) {
      const char *name = strobe_capture_query_site(cap, r.site)->name;
      for (int p = 0; p < 3; p++)
        if (!strcmp(name, pass_names[p])) add(&spans_ticks[p], (double)(r.device->device_end - r.device->device_begin));
    }
  }
  strobe_capture_close(cap);
  for (int p = 0; p < 3 && out->ticks_per_second > 0; p++)
    for (int i = 0; i < spans_ticks[p].n; i++) add(&out->pass_ms[p], spans_ticks[p].v[i] / out->ticks_per_second * 1e3);
  return 0;
}

int main(void) {
  char base[256];
  if (fx_temp_dir(base, sizeof base, "bench-demo-gpu")) {
    fprintf(stderr, "bench_demo_gpu: no temporary directory\n");
    return 1;
  }
  char with_gpu[512], without[512];
  snprintf(with_gpu, sizeof with_gpu, "%s/gpu", base);
  snprintf(without, sizeof without, "%s/cpu", base);
  mkdir(with_gpu, 0755);
  mkdir(without, 0755);
  printf("bench_demo_gpu: %s, %d frames with its Vulkan device and %d with no Vulkan driver\n", STROBE_DEMO_PATH,
         FRAMES, FRAMES);
  static run g, c;
  int status = 0;
  if (run_demo(with_gpu, 1, &g) || run_demo(without, 0, &c)) return 1;
  for (int p = 0; p < 3; p++) {
    if (!g.pass_ms[p].n) {
      fprintf(stderr, "bench_demo_gpu: no %s span in the GPU run (no Vulkan device?)\n", pass_names[p]);
      status = 1;
      continue;
    }
    int n = g.pass_ms[p].n;
    printf("BENCH demo_%s_ms_p50 %.3f ms (n %d)\n", pass_names[p], median(&g.pass_ms[p]), n);
  }
  double fg = median(&g.frame_ms), fc = median(&c.frame_ms);
  printf("BENCH demo_gpu_submit_cpu_ms_p50 %.3f ms (n %d)\n", median(&g.submit_ms), g.submit_ms.n);
  printf("BENCH demo_frame_ms_p50_gpu_path %.3f ms (n %d)\n", fg, g.frame_ms.n);
  printf("BENCH demo_frame_ms_p50_no_gpu %.3f ms (n %d)\n", fc, c.frame_ms.n);
  printf("BENCH demo_frame_ratio_gpu_path %.3f ratio\n", fg / fc);
  char rm[600];
  snprintf(rm, sizeof rm, "rm -rf %s", base); /* the runs' out directories, spikes/ included */
  if (system(rm) != 0) fprintf(stderr, "bench_demo_gpu: could not remove %s\n", base);
  return status;
}
