/*
 * malloc_interpose.cpp — libstrobe_malloc under LD_PRELOAD (docs/memory.md
 * §The interposer), run by CTest test malloc_interpose with the library
 * preloaded. With a capture recording, the program allocates blocks of
 * known sizes through every interposed function (malloc, calloc, realloc,
 * posix_memalign, aligned_alloc, memalign, valloc, new, new[], aligned new),
 * frees all but one, and also allocates in a thread that starts and exits,
 * in a signal handler, and in a child of fork(); then it reads the capture
 * and checks, for each block it knows, an ALLOC of its pool ("malloc" or
 * "new") with its size and, but for the one kept, a FREE (check_capture
 * says how addresses used twice are counted). The capture holds other
 * blocks too (stdio's, the loader's): only known addresses are judged.
 * Thread states live on the heap (no journal), so a thread attaching
 * allocates inside a recording: the interposer's guard keeps that out. Exits 0 when every check held, 1 with the first
 * failure on stderr.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <malloc.h>
#include <initializer_list>
#include <new>

#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/strobe.h"

namespace {

struct block {
  const void *p;
  size_t size;
  const char *pool;
  bool freed;
  int allocs_seen, frees_seen, sized;
};
block g_blocks[64];
int g_n;
int g_fail;

void fail(const char *what) {
  if (!g_fail) fprintf(stderr, "malloc_interpose: %s\n", what);
  g_fail = 1;
}

void know(const void *p, size_t size, const char *pool) {
  if (!p) return fail("an allocation failed");
  if (g_n < 64) g_blocks[g_n++] = block{p, size, pool, false, 0, 0, 0};
}
void forget(const void *p) {
  for (int i = 0; i < g_n; i++)
    if (g_blocks[i].p == p && !g_blocks[i].freed) {
      g_blocks[i].freed = true;
      return;
    }
  fail("freed an unknown block");
}

void *g_thread_block;
void *in_thread(void *) {
  g_thread_block = malloc(77);
  free(malloc(5)); /* allocates and frees during its life; its exit frees TLS through the interposer too */
  return nullptr;
}

void *g_signal_block;
void on_signal(int) { g_signal_block = malloc(99); }

void allocate_everything() {
  void *a = malloc(100);
  know(a, 100, "malloc");
  void *b = calloc(10, 30);
  know(b, 300, "malloc");
  void *c = malloc(50);
  know(c, 50, "malloc");
  forget(c); /* realloc frees the first block and allocates a new one */
  void *c2 = realloc(c, 5000);
  know(c2, 5000, "malloc");
  void *d = nullptr;
  if (posix_memalign(&d, 64, 640)) fail("posix_memalign");
  know(d, 640, "malloc");
  void *e = aligned_alloc(128, 256);
  know(e, 256, "malloc");
  void *f = memalign(32, 96);
  know(f, 96, "malloc");
  void *g = valloc(10);
  know(g, 10, "malloc");
  int *h = new int[25];
  know(h, 25 * sizeof(int), "new");
  double *k = new double(1.5);
  know(k, sizeof(double), "new");
  struct alignas(64) wide {
    char x[64];
  };
  wide *w = new wide;
  know(w, sizeof(wide), "new");

  pthread_t t;
  if (pthread_create(&t, nullptr, in_thread, nullptr) || pthread_join(t, nullptr)) fail("thread");
  know(g_thread_block, 77, "malloc");
  signal(SIGUSR1, on_signal);
  raise(SIGUSR1);
  know(g_signal_block, 99, "malloc");

  pid_t pid = fork(); /* the child allocates past its ring (no drain takes it) and exits cleanly */
  if (pid == 0) {
    for (int i = 0; i < 300000; i++) free(malloc(16));
    _exit(0);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) fail("fork child");

  for (void *p : {a, b, c2, d, e, f, g, g_thread_block, g_signal_block}) {
    forget(p);
    free(p);
  }
  forget(h);
  delete[] h;
  forget(w);
  delete w;
  /* k stays allocated: the leak */
}

/* The capture's records at known addresses. Threads' blocks reach the file out of time order (a free by main of
 * the thread's block may come before the thread's allocation), and other code (stdio, the loader) may be handed
 * an address again after the program freed it, so each known block is judged by counts at its address and pool:
 * at least as many allocations, one of them of its size, and at least as many frees as known blocks freed there. */
void check_capture(const char *path) {
  strobe_capture *cap = nullptr;
  if (strobe_capture_open(path, &cap)) return fail("open the capture");
  strobe_capture_record r;
  int rc;
  while ((rc = strobe_capture_next(cap, &r)) > 0) {
    if (r.type != STROBE_REC_ALLOC && r.type != STROBE_REC_FREE) continue;
    const strobe_capture_site *s = strobe_capture_query_site(cap, r.site);
    for (int i = 0; i < g_n; i++) {
      block *b = &g_blocks[i];
      if ((uint64_t)(uintptr_t)b->p != r.address || strcmp(s->name, b->pool)) continue;
      if (r.type == STROBE_REC_ALLOC) b->allocs_seen++, b->sized += r.bytes == b->size;
      else b->frees_seen++;
    }
  }
  if (rc != 0) fail("read the capture");
  strobe_capture_close(cap);
  int kept = 0;
  for (int i = 0; i < g_n; i++) {
    int here = 0, freed_here = 0;
    for (int k = 0; k < g_n; k++)
      if (g_blocks[k].p == g_blocks[i].p && !strcmp(g_blocks[k].pool, g_blocks[i].pool))
        here++, freed_here += g_blocks[k].freed;
    const block *b = &g_blocks[i];
    if (b->allocs_seen < here || !b->sized) {
      fprintf(stderr, "malloc_interpose: block %d (%zu bytes, pool %s): %d allocations at it, %d of its size\n", i,
              b->size, b->pool, b->allocs_seen, b->sized);
      fail("a known allocation is missing");
    }
    if (b->frees_seen < freed_here) {
      fprintf(stderr, "malloc_interpose: block %d (%zu bytes, pool %s): %d frees at it, want %d\n", i, b->size,
              b->pool, b->frees_seen, freed_here);
      fail("a known free is missing");
    }
    kept += !b->freed;
  }
  if (kept != 1) fail("not exactly one block kept");
}

}  // namespace

int main() {
  char path[] = "/tmp/strobe-malloc-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return 1;
  close(fd);
  strobe_recorder *rec = nullptr;
  strobe_record_desc d = {};
  d.path = path;
  d.no_journal = 1; /* thread states on the heap: a thread attaching allocates inside the recording (the guard) */
  if (strobe_record_start(&d, &rec)) return fprintf(stderr, "malloc_interpose: record start\n"), 1;
  allocate_everything();
  if (strobe_record_stop(rec)) fail("record stop");
  check_capture(path);
  unlink(path);
  if (!g_fail) printf("malloc_interpose: %d known blocks, each allocated and freed as recorded, one kept\n", g_n);
  return g_fail;
}
