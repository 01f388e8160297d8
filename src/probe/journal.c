/*
 * journal.c — a capture file's crash journal (docs/recording.md §Crash
 * journal, docs/capture-format.md §Journal): a file beside the capture,
 * mapped MAP_SHARED, whose regions hold the whole state of each thread that
 * attaches while it is open (cursor, scope stack, ring), and whose log holds
 * the sites and labels the drain delivered. Every store a recording thread
 * makes lands in the page cache, which the kernel keeps when the process
 * dies however it dies, so nothing needs to run after a crash: `strobe
 * recover` reads the file.
 *
 * Owns: the journal file, its mappings and directory, the log, the region
 * allocator, and the fork rule (a child never writes into its parent's
 * journal: its copies of the mappings become private).
 * Must never: touch a region's contents after handing it out (the thread and
 * the drain own them), let a recording thread fault on a full disk (every
 * byte is allocated with posix_fallocate before it is mapped), or leave a
 * file behind when opening fails.
 *
 * Contents: >>state >>open >>log >>heap >>regions >>adopt >>fork
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "platform/host.h"
#include "platform/invariant.h"
#include "probe/probe.h"

/* Under AddressSanitizer, LeakSanitizer scans no file mapping: a ring grown
 * onto the heap (GROW, call tracing), reached only from a state in a
 * journal region, would read as leaked. Each region's state is declared a
 * root while it is mapped. */
#if defined(__SANITIZE_ADDRESS__)
#define JOURNAL_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define JOURNAL_LSAN 1
#endif
#endif
#ifdef JOURNAL_LSAN
#include <sanitizer/lsan_interface.h>
#define lsan_root_add(p, n) __lsan_register_root_region((p), (n))
#define lsan_root_remove(p, n) __lsan_unregister_root_region((p), (n))
#else
#define lsan_root_add(p, n) ((void)(p), (void)(n))
#define lsan_root_remove(p, n) ((void)(p), (void)(n))
#endif

/* >>state */
typedef struct strobe__journal {
  int fd;                      /* -1 once closed */
  uint64_t pid;                /* the process that made it: only it removes the file */
  char *path;
  strobe__journal_head *head;  /* the mapping of [0, head_map) */
  size_t head_map;
  uint64_t file_end;           /* where the next region goes */
  uint32_t live;               /* regions handed out and not freed */
  int closed;
  struct strobe__journal *next; /* every journal with live regions, for fork */
} strobe__journal;

static strobe__mutex g_jlock = STROBE__MUTEX_INIT; /* everything here */
static strobe__journal *g_open;  /* the journal new threads go to, or NULL */
static strobe__journal *g_all;   /* open, or closed with live regions */
static uint32_t g_adopt_gen;     /* atomic: bumped as each journal opens, 0 while none is open */
static uint32_t g_opened;        /* journals opened so far (g_adopt_gen's next value), under g_jlock */

#define PAGE 4096u

static uint64_t page_up(uint64_t n) { return (n + PAGE - 1) / PAGE * PAGE; }

/* The offsets recovery relies on, folded into one number: a journal written
 * by a library whose strobe__tstate is laid out otherwise is refused. */
uint32_t strobe__journal_layout(void) {
  const size_t off[] = {offsetof(strobe__tstate, hot),       offsetof(strobe__tstate, ring),
                        offsetof(strobe__tstate, ring_end),  offsetof(strobe__tstate, wrap_at),
                        offsetof(strobe__tstate, index),     offsetof(strobe__tstate, os_tid),
                        offsetof(strobe__tstate, name),      offsetof(strobe__tstate, exited),
                        offsetof(strobe__tstate, lost),      offsetof(strobe__tstate, jmark_cur),
                        offsetof(strobe__tstate, jmark),     sizeof(strobe__journal_mark),
                        sizeof(strobe__event),               STROBE_MAX_DEPTH};
  uint32_t h = 2166136261u; /* FNV-1a over the offsets */
  for (size_t i = 0; i < sizeof off / sizeof off[0]; i++) {
    h ^= (uint32_t)off[i];
    h *= 16777619u;
  }
  return h;
}

static void journal_unmap(strobe__journal *j) {
  for (strobe__journal **p = &g_all; *p; p = &(*p)->next)
    if (*p == j) {
      *p = j->next;
      break;
    }
  munmap(j->head, j->head_map);
  free(j->path);
  free(j);
}

/* >>open */
int strobe__journal_open(const char *path, uint64_t *id) {
  if (!path || !id) return STROBE_EINVAL;
  strobe__journal *j = calloc(1, sizeof *j);
  size_t head_map = (size_t)page_up(sizeof(strobe__journal_head));
  if (!j || !(j->path = strdup(path))) {
    free(j);
    return STROBE_ENOMEM;
  }
  strobe__mutex_lock(&g_jlock);
  int rc = g_open ? STROBE_EBUSY : 0;
  if (rc) goto fail;
  rc = STROBE_EIO;
  j->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (j->fd < 0) goto fail;
  /* The head only: the log grows by pwrite, regions by fallocate, so a full
   * disk is an error returned here or later, never a fault in a mapping. */
  int err = posix_fallocate(j->fd, 0, (off_t)head_map);
  if (err) {
    errno = err;
    goto fail_file;
  }
  j->head = mmap(NULL, head_map, PROT_READ | PROT_WRITE, MAP_SHARED, j->fd, 0);
  if (j->head == MAP_FAILED) goto fail_file;
  j->head_map = head_map;
  strobe__journal_head *h = j->head;
  uint64_t r = 0;
  (void)strobe__host_random_u64(&r);
  h->journal_id = r ? r : 1;
  h->version = STROBE__JOURNAL_VERSION;
  h->head_bytes = (uint32_t)sizeof *h;
  h->pid = j->pid = strobe__host_pid();
  if (strobe__host_boot_hex(h->boot_id)) h->boot_id[0] = 0;
  h->tstate_bytes = (uint32_t)sizeof(strobe__tstate);
  h->layout = strobe__journal_layout();
  h->log_offset = head_map;
  j->file_end = head_map + STROBE__JOURNAL_LOG_BYTES;
  /* The magic last: a reader finding it finds the rest. */
  __atomic_thread_fence(__ATOMIC_RELEASE);
  memcpy(h->magic, STROBE__JOURNAL_MAGIC, 8);
  *id = h->journal_id;
  j->next = g_all;
  g_all = j;
  g_open = j;
  __atomic_store_n(&g_adopt_gen, ++g_opened ? g_opened : ++g_opened, __ATOMIC_RELEASE);
  strobe__mutex_unlock(&g_jlock);
  strobe__threads_adopt_arm(); /* the threads already recording come in at their next event (>>adopt) */
  return 0;
fail_file: {
  int e = errno;
  close(j->fd);
  unlink(path);
  errno = e;
}
fail:
  strobe__mutex_unlock(&g_jlock);
  free(j->path);
  free(j);
  return rc;
}

void strobe__journal_close(void) {
  strobe__mutex_lock(&g_jlock);
  strobe__journal *j = g_open;
  g_open = NULL;
  __atomic_store_n(&g_adopt_gen, 0, __ATOMIC_RELEASE);
  if (j) {
    j->closed = 1;
    if (j->pid == strobe__host_pid()) unlink(j->path); /* a forked child never removes its parent's */
    close(j->fd);
    j->fd = -1;
    if (!j->live) journal_unmap(j);
  }
  strobe__mutex_unlock(&g_jlock);
}

int strobe__journal_holds(const strobe__tstate *t) { return t->jnl && t->jnl == __atomic_load_n(&g_open, __ATOMIC_ACQUIRE); }

uint64_t strobe__journal_id(void) {
  strobe__mutex_lock(&g_jlock);
  uint64_t id = g_open ? g_open->head->journal_id : 0;
  strobe__mutex_unlock(&g_jlock);
  return id;
}

/* >>log: whole records, appended with pwrite (a full disk is an error, not a
 * fault), then published by log_len, so a reader never sees half of one. */
static void log_put(const void *rec, uint32_t bytes) {
  strobe__mutex_lock(&g_jlock);
  strobe__journal *j = g_open;
  if (j) {
    strobe__journal_head *h = j->head;
    uint64_t at = h->log_len;
    if (at + bytes > STROBE__JOURNAL_LOG_BYTES ||
        pwrite(j->fd, rec, bytes, (off_t)(h->log_offset + at)) != (ssize_t)bytes)
      h->log_dropped++;
    else
      __atomic_store_n(&h->log_len, at + bytes, __ATOMIC_RELEASE);
  }
  strobe__mutex_unlock(&g_jlock);
}

typedef struct lbuf {
  uint8_t *p;
  size_t len, cap;
} lbuf;

static void lput(lbuf *b, const void *data, size_t n) {
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 256;
    while (cap < b->len + n) cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
      b->cap = SIZE_MAX; /* marks it failed: nothing is logged */
      return;
    }
    b->p = p;
    b->cap = cap;
  }
  if (b->cap == SIZE_MAX) return;
  memcpy(b->p + b->len, data, n);
  b->len += n;
}

static void lput_u32(lbuf *b, uint32_t v) { lput(b, &v, 4); }

static void lput_str(lbuf *b, const char *s) {
  size_t n = s ? strnlen(s, 4096) : 0; /* the capture format's bound on a string */
  lput_u32(b, (uint32_t)n);
  lput(b, s ? s : "", n);
}

static void log_finish(lbuf *b) {
  static const uint8_t zero[8];
  if (b->cap != SIZE_MAX && b->len % 8) lput(b, zero, 8 - b->len % 8);
  if (b->cap != SIZE_MAX && b->len >= 8) {
    uint32_t bytes = (uint32_t)b->len;
    memcpy(b->p, &bytes, 4);
    log_put(b->p, bytes);
  }
  free(b->p);
}

void strobe__journal_site(uint32_t id, const strobe_site *s) {
  if (!s || !__atomic_load_n(&g_open, __ATOMIC_ACQUIRE)) return;
  lbuf b = {0};
  uint64_t addr = (uint64_t)(uintptr_t)s;
  lput_u32(&b, 0);
  lput_u32(&b, STROBE__JLOG_SITE);
  lput(&b, &addr, 8);
  const uint32_t nums[5] = {id, s->kind, s->line, s->unit, s->flags};
  lput(&b, nums, sizeof nums);
  lput_str(&b, s->name);
  lput_str(&b, s->category);
  lput_str(&b, s->file);
  lput_str(&b, s->function);
  lput_str(&b, s->parent);
  log_finish(&b);
}

void strobe__journal_label(uint32_t id, const char *text) {
  if (!__atomic_load_n(&g_open, __ATOMIC_ACQUIRE)) return;
  lbuf b = {0};
  lput_u32(&b, 0);
  lput_u32(&b, STROBE__JLOG_LABEL);
  lput_u32(&b, id);
  lput_str(&b, text);
  log_finish(&b);
}

uint32_t strobe__journal_positions(uint32_t *index, uint64_t *count, uint32_t max) {
  uint32_t n = 0;
  strobe__mutex_lock(&g_jlock);
  strobe__journal *j = g_open;
  uint32_t regions = j ? j->head->regions : 0;
  for (uint32_t i = 0; i < regions && n < max; i++) {
    const strobe__journal_region *r = &j->head->region[i];
    if (r->state != STROBE__JREGION_LIVE) continue;
    const strobe__tstate *t = (const strobe__tstate *)(uintptr_t)r->base;
    uint64_t c = __atomic_load_n(&t->drained, __ATOMIC_RELAXED);
    if (!c) continue;
    index[n] = t->index;
    count[n++] = c;
  }
  strobe__mutex_unlock(&g_jlock);
  return n;
}

/* Bytes of a state and its ring of cap events (one spare slot: thread.c, drain_pos), whole pages. */
static uint64_t region_bytes(uint32_t cap) {
  return page_up(STROBE__JOURNAL_RING_AT + ((uint64_t)cap + 1) * sizeof(strobe__event));
}

/* >>heap: a state outside any journal is laid out as a region, in an
 * anonymous mapping of its own, so that a journal opened later can take it
 * in whole at the same address (>>adopt): its scope stack's frames, which
 * the guards of open scopes point at, and its ring stay where they are. */
strobe__tstate *strobe__tstate_map(uint32_t cap) {
  uint64_t size = region_bytes(cap);
  void *m = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return NULL;
  strobe__tstate *t = m;
  lsan_root_add(t, sizeof *t);
  strobe__event *ring = (strobe__event *)((char *)m + STROBE__JOURNAL_RING_AT);
  t->ring = t->read = t->hot.cur = t->dring = ring;
  t->ring_end = t->wrap_at = t->dring_end = ring + cap;
  t->ring_events = t->ring_events_max = t->ring_events_first = cap;
  return t;
}

void strobe__tstate_unmap(strobe__tstate *t) {
  lsan_root_remove(t, sizeof *t);
  munmap(t, (size_t)region_bytes((uint32_t)t->ring_events_first));
}

uint32_t strobe__journal_adopt_gen(void) { return __atomic_load_n(&g_adopt_gen, __ATOMIC_ACQUIRE); }

/* >>regions: one per thread state, its ring right after it. A freed region
 * of the same size is mapped again before the file grows. */
static int region_take(strobe__journal *j, uint64_t size, uint32_t cap, uint32_t *out) {
  strobe__journal_head *h = j->head;
  for (uint32_t i = 0; i < h->regions; i++) {
    if (h->region[i].state == STROBE__JREGION_FREED && h->region[i].size == size) {
      *out = i;
      return 0;
    }
  }
  if (h->regions == STROBE__JOURNAL_REGIONS) return STROBE_ELIMIT;
  if (posix_fallocate(j->fd, (off_t)j->file_end, (off_t)size)) return STROBE_EIO;
  uint32_t i = h->regions;
  h->region[i] = (strobe__journal_region){j->file_end, size, 0, STROBE__JREGION_FREED, cap};
  j->file_end += size;
  __atomic_store_n(&h->regions, i + 1, __ATOMIC_RELEASE);
  *out = i;
  return 0;
}

strobe__tstate *strobe__journal_tstate(uint32_t cap) {
  if (!__atomic_load_n(&g_open, __ATOMIC_ACQUIRE)) return NULL;
  uint64_t ring_at = STROBE__JOURNAL_RING_AT;
  uint64_t size = region_bytes(cap);
  strobe__tstate *t = NULL;
  strobe__mutex_lock(&g_jlock);
  strobe__journal *j = g_open;
  uint32_t i;
  if (!j || j->closed) goto done;
  if (region_take(j, size, cap, &i)) {
    j->head->heap_threads++;
    goto done;
  }
  strobe__journal_region *r = &j->head->region[i];
  void *m = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, j->fd, (off_t)r->offset);
  if (m == MAP_FAILED) {
    j->head->heap_threads++;
    goto done;
  }
  t = m;
  memset(t, 0, sizeof *t); /* a reused region holds its last thread's state */
  lsan_root_add(t, sizeof *t);
  strobe__event *ring = (strobe__event *)((char *)m + ring_at);
  t->ring = t->read = t->hot.cur = t->dring = ring;
  t->ring_end = t->wrap_at = t->dring_end = ring + cap;
  t->ring_events = t->ring_events_max = t->ring_events_first = cap;
  t->jmark[0].read = ring;
  t->jnl = j;
  t->jregion = i;
  r->base = (uint64_t)(uintptr_t)m;
  r->ring_events = cap;
  __atomic_store_n(&r->state, STROBE__JREGION_MAKING, __ATOMIC_RELEASE); /* LIVE once it has its index */
  j->live++;
done:
  strobe__mutex_unlock(&g_jlock);
  return t;
}

void strobe__journal_tstate_free(strobe__tstate *t) {
  strobe__journal *j = t->jnl;
  strobe__mutex_lock(&g_jlock);
  strobe__journal_region *r = &j->head->region[t->jregion];
  lsan_root_remove(t, sizeof *t);
  munmap(t, (size_t)r->size);
  __atomic_store_n(&r->state, STROBE__JREGION_FREED, __ATOMIC_RELEASE);
  if (--j->live == 0 && j->closed) journal_unmap(j);
  strobe__mutex_unlock(&g_jlock);
}

/* Clears the kind and data of slots [from, to): the inline path never writes a number's payload slot's
 * kind, so a slot whose kind is 0 after a site pointer is that number's payload, wherever the drain never
 * met the site (docs/capture-format.md §Journal). */
static void clear_words(strobe__event *from, strobe__event *to) {
  for (strobe__event *e = from; e < to; e++) strobe__put_word(e, 0);
}

void strobe__journal_tstate_ready(strobe__tstate *t) {
  if (!t->jnl) return;
  strobe__mutex_lock(&g_jlock);
  __atomic_store_n(&t->jnl->head->region[t->jregion].state, STROBE__JREGION_LIVE, __ATOMIC_RELEASE);
  strobe__mutex_unlock(&g_jlock);
}

void strobe__journal_release(strobe__tstate *t, strobe__event *read) {
  strobe__event *old = t->read;
  if (t->retired_done) {
    /* it left the journal: its ring grew onto the heap (thread.c, grow), recovery leaves it alone */
  } else if (read < old) { /* the producer wrapped: [old, wrap_at) then the ring's start */
    clear_words(old, __atomic_load_n(&t->wrap_at, __ATOMIC_RELAXED));
    clear_words(t->dring, read);
  } else {
    clear_words(old, read);
  }
  uint32_t next = t->jmark_cur ^ 1u;
  strobe__journal_mark *m = &t->jmark[next];
  m->count = __atomic_load_n(&t->drained, __ATOMIC_RELAXED);
  m->read = read;
  m->last_ts = t->last_ts;
  m->open = t->open;
  uint32_t keep = t->open < STROBE_MAX_DEPTH ? t->open : STROBE_MAX_DEPTH;
  memcpy(m->open_site, t->open_site, keep * sizeof m->open_site[0]);
  __atomic_store_n(&t->jmark_cur, next, __ATOMIC_RELEASE);
  __atomic_store_n(&t->read, read, __ATOMIC_RELEASE); /* now the producer may write over them */
}

int strobe__journal_die_at;

void strobe__journal_die_point(int point) {
  if (__atomic_load_n(&strobe__journal_die_at, __ATOMIC_RELAXED) == point) kill(getpid(), SIGKILL);
}

/* >>adopt: a state made before the journal opened joins it. Its owner calls
 * this from a slow path holding the drain lock and the thread list lock, so
 * nobody writes the state or its ring meanwhile: their bytes go to a new
 * region, which is then mapped over them (MAP_FIXED) at the same address.
 * The mark is the drain's position as of its last pass, whose events the
 * capture has written, followed by a JOURNAL_POS block (recorder.c): every
 * slot before `read` is in the file, every one after it in the region. */
static int write_all_at(int fd, const void *p, uint64_t n, uint64_t at) {
  for (uint64_t done = 0; done < n;) {
    ssize_t w = pwrite(fd, (const char *)p + done, (size_t)(n - done), (off_t)(at + done));
    if (w <= 0) return -1;
    done += (uint64_t)w;
  }
  return 0;
}

int strobe__journal_adopt(strobe__tstate *t) {
  uint32_t cap = (uint32_t)t->ring_events_first;
  uint64_t size = region_bytes(cap);
  if (t->jnl || t->fiber || __atomic_load_n(&t->retired, __ATOMIC_RELAXED) || t->ring != strobe__journal_ring(t))
    return STROBE_ESTATE; /* in a journal already, a fiber, or its ring grew onto the heap */
  strobe__mutex_lock(&g_jlock);
  strobe__journal *j = g_open;
  uint32_t i;
  int rc = !j || j->closed ? STROBE_ESTATE : region_take(j, size, cap, &i);
  if (rc) {
    if (j && !j->closed) j->head->heap_threads++;
    goto done;
  }
  strobe__journal_region *r = &j->head->region[i];
  rc = STROBE_EIO;
  if (write_all_at(j->fd, t, size, r->offset)) goto done; /* the region stays free */
  if (mmap(t, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, j->fd, (off_t)r->offset) == MAP_FAILED)
    goto done; /* Linux checks a fixed mapping before it replaces the old one: the state is as it was */
  t->jnl = j;
  t->jregion = i;
  strobe__journal_mark *m = &t->jmark[0];
  m->count = __atomic_load_n(&t->drained, __ATOMIC_RELAXED);
  m->read = t->read;
  m->last_ts = t->last_ts;
  m->open = t->open;
  uint32_t keep = t->open < STROBE_MAX_DEPTH ? t->open : STROBE_MAX_DEPTH;
  memcpy(m->open_site, t->open_site, keep * sizeof m->open_site[0]);
  __atomic_store_n(&t->jmark_cur, 0, __ATOMIC_RELEASE);
  r->base = (uint64_t)(uintptr_t)t;
  r->ring_events = cap;
  j->live++;
  j->head->adopted++;
  __atomic_store_n(&r->state, STROBE__JREGION_LIVE, __ATOMIC_RELEASE);
  rc = 0;
done:
  strobe__mutex_unlock(&g_jlock);
  return rc;
}

/* >>fork: the child gets private copies of every journal mapping (its one
 * thread keeps its state, the parent's file never sees its stores), and no
 * journal to make states in. The parent runs on while the child copies: the
 * heads go first (the parent's later regions and frees must not show), and a
 * region the parent mapped after the fork, which the child lacks, is left. */
static int mapped(void *at, size_t len) { return msync(at, len, MS_ASYNC) == 0; }

static void private_copy(void *at, size_t len) {
  void *tmp = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (tmp == MAP_FAILED) return; /* then the child shares its parent's pages: nothing better can be done */
  memcpy(tmp, at, len);
  if (mremap(tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, at) == MAP_FAILED) munmap(tmp, len);
}

static void fork_child(void) {
  for (strobe__journal *j = g_all; j; j = j->next) private_copy(j->head, j->head_map);
  for (strobe__journal *j = g_all; j; j = j->next) {
    strobe__journal_head *h = j->head;
    for (uint32_t i = 0; i < h->regions && i < STROBE__JOURNAL_REGIONS; i++) {
      strobe__journal_region *r = &h->region[i];
      void *at = (void *)(uintptr_t)r->base;
      if ((r->state == STROBE__JREGION_LIVE || r->state == STROBE__JREGION_MAKING) && mapped(at, (size_t)r->size))
        private_copy(at, (size_t)r->size);
    }
    j->closed = 1;
    if (j->fd >= 0) close(j->fd);
    j->fd = -1;
  }
  g_open = NULL;
}

/* probe.h >>fork, called by the collect layer's handlers in their lock order. */
void strobe__journal_fork(int phase) {
  if (phase == STROBE__FORK_PREPARE) {
    strobe__mutex_lock(&g_jlock);
    return;
  }
  if (phase == STROBE__FORK_CHILD) fork_child();
  strobe__mutex_unlock(&g_jlock);
}
