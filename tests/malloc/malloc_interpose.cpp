/*
 * malloc_interpose.cpp — libstrobe_malloc under LD_PRELOAD (docs/memory.md
 * §The interposer), run by CTest test malloc_interpose with the library
 * preloaded. With a capture recording, the program allocates blocks of
 * known sizes through every interposed function (malloc, calloc, realloc,
 * posix_memalign, aligned_alloc, memalign, valloc, new, new[], aligned new),
 * frees all but one, and also allocates in a thread that starts and exits,
 * in a signal handler, and in a child of fork(); then it reads the capture
 * and checks, for each block it knows, one ALLOC of its pool ("malloc" or
 * "new") with its size and, but for the one kept, one FREE after it. The
 * capture holds other blocks too (stdio's, the loader's): only known
 * addresses are judged. Exits 0 when every check held, 1 with the first
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
  int allocs_seen, frees_seen;
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
  if (g_n < 64) g_blocks[g_n++] = block{p, size, pool, false, 0, 0};
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

void check_capture(const char *path) {
  strobe_capture *cap = nullptr;
  if (strobe_capture_open(path, &cap)) return fail("open the capture");
  strobe_capture_record r;
  int rc;
  while ((rc = strobe_capture_next(cap, &r)) > 0) {
    if (r.type != STROBE_REC_ALLOC && r.type != STROBE_REC_FREE) continue;
    const strobe_capture_site *s = strobe_capture_query_site(cap, r.site);
    /* An address may come back (realloc may grow a block in place): each
     * record goes to the first known block at it that still waits for it. */
    for (int i = 0; i < g_n; i++) {
      block *b = &g_blocks[i];
      if ((uint64_t)(uintptr_t)b->p != r.address || strcmp(s->name, b->pool)) continue;
      if (r.type == STROBE_REC_ALLOC && b->allocs_seen == 0) {
        b->allocs_seen = 1;
        if (r.bytes != b->size) fail("an allocation's size");
        break;
      }
      if (r.type == STROBE_REC_FREE && b->allocs_seen == 1 && b->frees_seen == 0) {
        b->frees_seen = 1;
        break;
      }
    }
  }
  if (rc != 0) fail("read the capture");
  strobe_capture_close(cap);
  int leaks = 0;
  for (int i = 0; i < g_n; i++) {
    if (g_blocks[i].allocs_seen < 1) fail("a known allocation is missing");
    if (g_blocks[i].freed && g_blocks[i].frees_seen < g_blocks[i].allocs_seen) fail("a known free is missing");
    leaks += g_blocks[i].frees_seen < g_blocks[i].allocs_seen;
  }
  if (leaks != 1) fail("not exactly one block left allocated");
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
  if (strobe_record_start(&d, &rec)) return fprintf(stderr, "malloc_interpose: record start\n"), 1;
  allocate_everything();
  if (strobe_record_stop(rec)) fail("record stop");
  check_capture(path);
  unlink(path);
  if (!g_fail) printf("malloc_interpose: %d known blocks, each allocated and freed as recorded, one kept\n", g_n);
  return g_fail;
}
