/*
 * crash.c — the opt-in crash handler (strobe_desc.crash_handler,
 * docs/recording.md §Crashes): on SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT
 * it writes where the process died into every capture file recording (one
 * CRASH block: the signal, the faulting thread, each thread's open scopes
 * from its probe stack, the faulting thread's open operation and stage
 * through the session layer's hook, probe.h >>crash), then hands the signal
 * to whatever handled it before (a function, or the default action, raised
 * again), so the process dies as it would have.
 *
 * Owns: the handler's installation and the previous actions, the watched
 * files, the static buffers a record is built in.
 * Must never: allocate, lock or call anything not async-signal-safe in the
 * handler; write into the middle of a block a sink is writing (it waits a
 * bounded time for the sink to finish, then closes it: enter/leave); record
 * twice (a second fault, in another thread or inside the handler, goes
 * straight to the previous action); or run without being asked.
 *
 * Contents: >>watch >>record >>handler
 */
#include "capture/crash.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "format/capture_writer.h"
#include "format/codec.h"
#include "probe/probe.h"

#define MAX_FILES 8
#define CLAIM_TRIES 200 /* 1 ms each: the longest a crash waits for a sink's write in progress */
#define BLOCK_CAP (256u << 10)

static const int g_sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
#define NSIGS (sizeof g_sigs / sizeof *g_sigs)
static struct sigaction g_old[NSIGS];
static pthread_once_t g_install_once = PTHREAD_ONCE_INIT;

/* >>watch: each slot's fd and state pointer are stored and cleared atomically; the handler reads them. */
static struct {
  int fd;
  int *state;
} g_files[MAX_FILES];

static void on_crash(int sig, siginfo_t *si, void *uc);

static void install(void) {
  (void)strobe__crc32c(0, "", 0); /* its tables (or CPU check) are set up here, not in the handler */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_crash;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < NSIGS; i++) sigaction(g_sigs[i], &sa, &g_old[i]);
  strobe__thread_altstack(); /* the installing thread (often the main one), attached or not */
}

void strobe__crash_watch(int fd, int *sink_state) {
  if (!strobe_query_desc().crash_handler) return;
  pthread_once(&g_install_once, install);
  for (int i = 0; i < MAX_FILES; i++) {
    int *none = NULL;
    if (__atomic_load_n(&g_files[i].state, __ATOMIC_ACQUIRE)) continue;
    __atomic_store_n(&g_files[i].fd, fd, __ATOMIC_RELAXED);
    if (__atomic_compare_exchange_n(&g_files[i].state, &none, sink_state, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
      return;
  }
}

void strobe__crash_unwatch(const int *sink_state) {
  for (int i = 0; i < MAX_FILES; i++)
    if (__atomic_load_n(&g_files[i].state, __ATOMIC_ACQUIRE) == sink_state)
      __atomic_store_n(&g_files[i].state, NULL, __ATOMIC_RELEASE);
}

int strobe__crash_sink_enter(int *sink_state) {
  int idle = 0;
  return __atomic_compare_exchange_n(sink_state, &idle, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

void strobe__crash_sink_leave(int *sink_state) { __atomic_store_n(sink_state, 0, __ATOMIC_RELEASE); }

/* >>record: what every thread was doing, from the probe's state as it is (no lock: the process is dying; a
 * thread list changing under it costs at most a thread). */
static strobe__crash_facts g_facts;
static uint8_t g_block[BLOCK_CAP];

static void thread_scopes(const strobe__tstate *t, strobe__crash_thread *out) {
  const strobe__frame *top = __atomic_load_n(&t->hot.top, __ATOMIC_RELAXED);
  const strobe__frame *first = &t->hot.stack[1], *last = &t->hot.stack[STROBE_MAX_DEPTH];
  uint32_t n = 0, open = 0;
  if (top < first || top > last) return; /* never attached, or not a stack we know */
  for (const strobe__frame *f = first; f <= top; f++) open += f->word >= 8;
  out->scopes_cut = open > STROBE__CRASH_MAX_SCOPES ? open - STROBE__CRASH_MAX_SCOPES : 0;
  uint32_t skip = out->scopes_cut;
  for (const strobe__frame *f = first; f <= top; f++) {
    if (f->word < 8) continue; /* the slow path's bookkeeping, never a scope */
    if (skip) {
      skip--;
      continue;
    }
    const strobe_site *s = (const strobe_site *)(f->word & ~(uintptr_t)7);
    out->scopes[n++] = s->name ? s->name : "?";
  }
  out->nscopes = n;
}

static void gather(int sig) {
  strobe__crash_facts *f = &g_facts;
  f->signal = sig;
  f->ticks = strobe__now();
  f->fault_name = "";
  f->stage = "";
  const strobe__thread *self = strobe__tls;
  for (strobe__tstate *t = strobe__threads_head_unlocked(); t; t = __atomic_load_n(&t->next, __ATOMIC_ACQUIRE)) {
    if (t->fiber && &t->hot != self) continue;
    if (&t->hot == self) {
      f->fault_known = 1;
      f->fault_index = t->index;
      f->fault_name = t->name;
    }
    if (f->nthreads == STROBE__CRASH_MAX_THREADS) {
      f->threads_cut++;
      continue;
    }
    strobe__crash_thread *out = &f->threads[f->nthreads++];
    out->index = t->index;
    out->name = t->name;
    thread_scopes(t, out);
  }
  strobe__crash_op_fn op = __atomic_load_n(&strobe__crash_op, __ATOMIC_RELAXED);
  if (op && !op(&f->op_kind, &f->frame_id, &f->stage)) f->op_kind = NULL;
}

/* Writes the record to every watched file whose sink it can claim within CLAIM_TRIES ms. */
static void write_record(void) {
  size_t n = strobe__crash_block(g_block, sizeof g_block, &g_facts);
  while (!n && g_facts.nthreads > 1) { /* too big: the threads furthest from the fault go first */
    g_facts.nthreads--, g_facts.threads_cut++;
    n = strobe__crash_block(g_block, sizeof g_block, &g_facts);
  }
  for (int i = 0; i < MAX_FILES && n; i++) {
    int *state = __atomic_load_n(&g_files[i].state, __ATOMIC_ACQUIRE);
    if (!state) continue;
    int fd = __atomic_load_n(&g_files[i].fd, __ATOMIC_RELAXED), claimed = 0;
    for (int k = 0; k < CLAIM_TRIES && !claimed; k++) {
      int idle = 0;
      claimed = __atomic_compare_exchange_n(state, &idle, 2, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
      if (!claimed) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
      }
    }
    if (!claimed) continue; /* a write in progress on the faulting thread itself: the file stays whole */
    for (size_t done = 0; done < n;) {
      ssize_t w = write(fd, g_block + done, n - done);
      if (w <= 0) break;
      done += (size_t)w;
    }
  }
}

/* >>handler */
static void chain(int sig, siginfo_t *si, void *uc) {
  for (size_t i = 0; i < NSIGS; i++) {
    if (g_sigs[i] != sig) continue;
    const struct sigaction *old = &g_old[i];
    if (old->sa_flags & SA_SIGINFO) {
      if (old->sa_sigaction) old->sa_sigaction(sig, si, uc);
    } else if (old->sa_handler == SIG_DFL) {
      raise(sig); /* blocked while this handler runs: the default action follows its return */
    } else if (old->sa_handler != SIG_IGN) {
      old->sa_handler(sig);
    }
  }
}

static void on_crash(int sig, siginfo_t *si, void *uc) {
  static int crashing;
  int errno_saved = errno;
  /* Every signal goes back to its previous action first: a fault inside this handler, or in another thread
   * meanwhile, is handled as it would have been without Strobe. */
  for (size_t i = 0; i < NSIGS; i++) sigaction(g_sigs[i], &g_old[i], NULL);
  if (!__atomic_exchange_n(&crashing, 1, __ATOMIC_ACQ_REL)) {
    gather(sig);
    write_record();
  }
  errno = errno_saved;
  chain(sig, si, uc);
}
