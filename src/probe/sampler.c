/*
 * sampler.c — the sampler (include/strobe/sample.h, docs/exploration.md
 * §Sampling): perf_event_open software CPU-clock events with user-space
 * call chains, one per (thread alive at start, CPU) with inherit, so every
 * thread those threads create later is sampled too; on each CPU the first
 * event owns the buffer (mmap) and the others write into it
 * (PERF_EVENT_IOC_SET_OUTPUT: the kernel refuses a buffer of its own to an
 * inherited per-thread event). With switches on, the same events carry
 * PERF_RECORD_SWITCH records.
 *
 * Owns: the events and their buffers, the records read from them and not yet
 * delivered (held until every buffer has been read past their time, so each
 * thread's records reach consumers in time order), the address table (code
 * address -> function, resolved once per address with symbols.c) and the
 * function table (names, for the capture writer), the refusal status and
 * the counts.
 * Must never: run on a recording thread (the drain thread reads the buffers,
 * strobe__sampler_poll); change anything when the kernel refuses (every
 * event opened is closed again, status says why); hand a consumer a
 * thread's records out of time order.
 *
 * Contents: >>state >>functions >>start >>read >>poll >>queries
 */

#include "strobe/sample.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef __linux__
#include <dirent.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "platform/clock.h"
#include "platform/invariant.h"
#include "probe/probe.h"
#include "strobe/gpu.h"

/* >>state */
#define MAX_CPUS 256u
#define MAX_THREADS_AT_START 4096u
#define BUFFER_PAGES 64u              /* data pages per CPU buffer (256 KiB with 4 KiB pages) */
#define HOLD_NS 1000000ull            /* records this close to the read are held for the next pass */
#define ADDR_SLOTS (1u << 18)         /* address table: at most half full */
#define MAX_ADDRESSES (ADDR_SLOTS / 2)
#define MAX_FUNCTIONS 65536u
#define FUNC_SLOTS (2u * MAX_FUNCTIONS)
#define MAX_PENDING 262144u           /* records held between passes; past it the oldest are delivered early */
#define POLL_NS 10000000ull           /* the buffers are read at most every 10 ms (drain passes come every 2) */

typedef struct cpu_buf {
  int leader;      /* fd whose buffer this is */
  void *base;      /* the mmap: one metadata page, then BUFFER_PAGES data pages */
  size_t data_size;
} cpu_buf;

typedef struct pending {
  uint64_t mono_ns;
  uint64_t tid;
  uint32_t kind;   /* STROBE__SAMPLE_* */
  uint32_t flags;
  uint32_t nframes;
  uint32_t frame0; /* index into g_ips */
} pending;

static strobe__mutex g_lock = STROBE__MUTEX_INIT; /* everything below */
static int g_running;                /* also read relaxed outside the lock */
static strobe_sampler_status g_status = {.reason = ""};
static int *g_fds;
static uint32_t g_nfds;
static cpu_buf g_bufs[MAX_CPUS];
static uint32_t g_nbufs;
static size_t g_page;
static uint8_t g_scratch[65536];     /* one record that wrapped around the buffer's end (a record's size is a u16) */
static pending *g_pend;              /* records read, not yet delivered */
static uint32_t g_npend, g_cap_pend;
static uint64_t *g_ips;              /* their frames' addresses */
static uint32_t g_nips, g_cap_ips;
static int g_flush_all;              /* stop read the buffers: deliver every pending record at the next poll */
static uint32_t g_pid;               /* this process: records of others are dropped */

#define MAX_QUIET 4u
static uint64_t g_quiet[MAX_QUIET];  /* Strobe's own threads (the drain): their switches are not recorded */
static uint32_t g_nquiet;

static uint64_t g_samples, g_switches, g_lost, g_frames_cut, g_addresses_cut; /* atomic (relaxed) */
static uint64_t g_polled_ns;                                                  /* under the drain lock: the last read */

/* 1 for a thread of Strobe's own (strobe__sampler_quiet_thread). Under g_lock. */
static int quiet(uint64_t tid) {
  for (uint32_t i = 0; i < g_nquiet; i++)
    if (g_quiet[i] == tid) return 1;
  return 0;
}

int strobe__sampler_running(void) { return __atomic_load_n(&g_running, __ATOMIC_RELAXED) != 0; }

void strobe__sampler_quiet_thread(void) {
#ifdef __linux__
  uint64_t tid = (uint64_t)syscall(SYS_gettid);
  strobe__mutex_lock(&g_lock);
  if (g_nquiet < MAX_QUIET && !quiet(tid)) g_quiet[g_nquiet++] = tid;
  strobe__mutex_unlock(&g_lock);
#endif
}
static uint32_t g_naddr, g_nfunc, g_nunresolved;                              /* atomic (relaxed) */

/* >>functions: the address table maps each code address met to the
 * function containing it; the function table holds each function once.
 * Both only grow, for the life of the process; drain thread only (under
 * g_lock). */
typedef struct addr_slot {
  uint64_t addr; /* 0: empty (address 0 is never code) */
  uint32_t func;
} addr_slot;
typedef struct func_entry {
  uint64_t key;  /* start << 1 | resolved */
  char *name, *module;
  int resolved;
} func_entry;
static addr_slot *g_addr;        /* ADDR_SLOTS */
static uint32_t *g_func_slot;    /* FUNC_SLOTS: function id, 0 empty */
static func_entry *g_funcs;      /* index = id; [0] unused */
static uint32_t g_cap_funcs;
static uint32_t g_full_func;     /* "(address table full)" once needed */

static uint32_t hash64(uint64_t v, uint32_t mask) { return (uint32_t)((v * 0x9e3779b97f4a7c15ull) >> 32) & mask; }

/* A function's id by its key, added (owning name and module) when new; 0 when
 * the table is full or out of memory (name and module are then freed). */
static uint32_t func_id(uint64_t key, char *name, char *module, int resolved) {
  uint32_t i = hash64(key, FUNC_SLOTS - 1);
  for (; g_func_slot[i]; i = (i + 1) & (FUNC_SLOTS - 1)) {
    if (g_funcs[g_func_slot[i]].key == key) {
      free(name);
      free(module);
      return g_func_slot[i];
    }
  }
  uint32_t id = g_nfunc + 1;
  if (id >= MAX_FUNCTIONS) goto refuse;
  if (id >= g_cap_funcs) {
    uint32_t cap = g_cap_funcs ? g_cap_funcs * 2 : 1024;
    func_entry *p = realloc(g_funcs, cap * sizeof *p);
    if (!p) goto refuse;
    g_funcs = p;
    g_cap_funcs = cap;
  }
  g_funcs[id] = (func_entry){key, name, module, resolved};
  g_func_slot[i] = id;
  __atomic_store_n(&g_nfunc, id, __ATOMIC_RELAXED);
  if (!resolved) __atomic_fetch_add(&g_nunresolved, 1, __ATOMIC_RELAXED);
  return id;
refuse:
  free(name);
  free(module);
  return 0;
}

/* The function of the one name every address past the tables' bounds gets. */
static uint32_t full_func(void) {
  if (!g_full_func) {
    char *name = strdup("(address table full)");
    if (name) g_full_func = func_id(1, name, NULL, 0); /* key 1: no start address is odd-shifted to 1 */
  }
  return g_full_func;
}

/* The function containing `addr`: resolved the first time, from the table after. */
static uint32_t function_of(uint64_t addr) {
  if (!addr) addr = 1;
  uint32_t i = hash64(addr, ADDR_SLOTS - 1);
  for (; g_addr[i].addr; i = (i + 1) & (ADDR_SLOTS - 1))
    if (g_addr[i].addr == addr) return g_addr[i].func;
  if (g_naddr >= MAX_ADDRESSES) {
    __atomic_fetch_add(&g_addresses_cut, 1, __ATOMIC_RELAXED);
    return full_func();
  }
  char *name = NULL, *module = NULL;
  uintptr_t start = 0;
  int rc = strobe__symbol_function((uintptr_t)addr, &name, &module, &start);
  uint32_t id = rc < 0 ? 0 : func_id((uint64_t)start << 1 | (uint64_t)(rc == 1), name, module, rc == 1);
  if (!id) { /* out of memory, or the function table is full */
    __atomic_fetch_add(&g_addresses_cut, 1, __ATOMIC_RELAXED);
    return full_func();
  }
  g_addr[i] = (addr_slot){addr, id};
  __atomic_store_n(&g_naddr, g_naddr + 1, __ATOMIC_RELAXED);
  return id;
}

uint32_t strobe__sample_function_count(void) {
  strobe__mutex_lock(&g_lock);
  uint32_t n = g_nfunc + 1;
  strobe__mutex_unlock(&g_lock);
  return n;
}

int strobe__sample_function(uint32_t id, const char **name, const char **module) {
  strobe__mutex_lock(&g_lock);
  int r = -1;
  if (id >= 1 && id <= g_nfunc) {
    *name = g_funcs[id].name;
    *module = g_funcs[id].module ? g_funcs[id].module : "";
    r = g_funcs[id].resolved;
  }
  strobe__mutex_unlock(&g_lock);
  return r;
}

/* >>start */
#ifdef __linux__
static int read_paranoid(void) {
  FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
  int v = -100;
  if (f) {
    if (fscanf(f, "%d", &v) != 1) v = -100;
    fclose(f);
  }
  return v;
}

/* The CPUs the kernel lists online ("0-3,6"), at most MAX_CPUS. */
static uint32_t online_cpus(int *cpus) {
  uint32_t n = 0;
  FILE *f = fopen("/sys/devices/system/cpu/online", "re");
  if (f) {
    int a, b;
    char sep;
    while (n < MAX_CPUS && fscanf(f, "%d", &a) == 1) {
      b = a;
      if (fscanf(f, "%c", &sep) == 1 && sep == '-') {
        if (fscanf(f, "%d", &b) != 1) break;
        if (fscanf(f, "%c", &sep) != 1) sep = '\n';
      }
      for (int c = a; c <= b && n < MAX_CPUS; c++) cpus[n++] = c;
      if (sep != ',') break;
    }
    fclose(f);
  }
  if (!n) {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    for (long i = 0; i < c && n < MAX_CPUS; i++) cpus[n++] = (int)i;
  }
  return n;
}

/* The process's threads now (their tids), at most MAX_THREADS_AT_START. */
static uint32_t thread_ids(pid_t *tids) {
  uint32_t n = 0;
  DIR *d = opendir("/proc/self/task");
  if (!d) {
    tids[n++] = (pid_t)syscall(SYS_gettid);
    return n;
  }
  for (struct dirent *e; (e = readdir(d)) != NULL && n < MAX_THREADS_AT_START;) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    tids[n++] = (pid_t)atoi(e->d_name);
  }
  closedir(d);
  return n;
}

static void close_all(void) {
  for (uint32_t i = 0; i < g_nbufs; i++)
    if (g_bufs[i].base) munmap(g_bufs[i].base, g_page + g_bufs[i].data_size);
  for (uint32_t i = 0; i < g_nfds; i++) close(g_fds[i]);
  free(g_fds);
  g_fds = NULL;
  g_nfds = g_nbufs = 0;
  memset(g_bufs, 0, sizeof g_bufs);
}

static int refuse(int code, int err, const char *reason) {
  close_all();
  g_status.error = code;
  g_status.os_errno = err;
  g_status.paranoid = read_paranoid();
  g_status.reason = reason;
  return code;
}

/* What a refused perf_event_open means (sample.h). */
static int refused_open(int err) {
  switch (err) {
    case EACCES:
    case EPERM:
      return refuse(STROBE_EPERM, err,
                    "perf_event_open refused (EACCES/EPERM): perf_event_paranoid is above 2, or a seccomp filter or "
                    "container policy forbids perf events");
    case ENOSYS:
      return refuse(STROBE_EFEATURE_DISABLED, err,
                    "perf_event_open is not available (ENOSYS): a kernel without perf events, or a seccomp filter "
                    "that answers ENOSYS");
    case ENOENT:
    case EOPNOTSUPP:
      return refuse(STROBE_EFEATURE_DISABLED, err, "the kernel has no software CPU clock event with call chains");
    case EMFILE:
    case ENFILE:
      return refuse(STROBE_ELIMIT, err, "perf_event_open ran out of file descriptors (EMFILE/ENFILE)");
    case ENOMEM: return refuse(STROBE_ENOMEM, err, "perf_event_open: out of kernel memory");
    default: return refuse(STROBE_EIO, err, "perf_event_open failed (see os_errno)");
  }
}

static long open_event(struct perf_event_attr *attr, pid_t tid, int cpu) {
  return syscall(SYS_perf_event_open, attr, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* A child of fork() has none of the sampler's threads: it forgets the
 * parent's events and buffers (the mappings are shared with the parent). */
static void forget_in_child(void) {
  g_lock = (strobe__mutex)STROBE__MUTEX_INIT; /* another thread of the parent may have held it */
  close_all();
  g_npend = g_nips = 0;
  g_status.running = 0;
  __atomic_store_n(&g_running, 0, __ATOMIC_RELEASE);
}

/* The perf event every sampled thread gets: CPU-clock samples at d's rate
 * with user-space call chains, on CLOCK_MONOTONIC, inherited by new threads. */
static void sample_attr(struct perf_event_attr *attr, const strobe_sampler_desc *d) {
  memset(attr, 0, sizeof *attr);
  attr->size = sizeof *attr;
  attr->type = PERF_TYPE_SOFTWARE;
  attr->config = PERF_COUNT_SW_CPU_CLOCK;
  attr->sample_period = 1000000000ull / d->rate_hz; /* ns of the thread's CPU time */
  attr->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
  attr->inherit = 1;
  attr->inherit_thread = 1; /* threads only: a child process (fork) is not sampled into these buffers */
  attr->exclude_kernel = 1; /* what paranoid level 2 allows, and all a user-space profile needs */
  attr->exclude_hv = 1;
  attr->exclude_callchain_kernel = 1;
  attr->sample_id_all = 1;
  attr->use_clockid = 1;
  attr->clockid = CLOCK_MONOTONIC; /* converted to ticks with strobe_clock_ticks_from_mono_ns */
  attr->sample_max_stack = STROBE_SAMPLE_MAX_FRAMES + 1; /* + the PERF_CONTEXT_USER marker */

}

/* Opens one CPU's events, one per thread (tids, ntid), the first owning the
 * CPU's buffer and the others writing into it. attr loses the fields an
 * older kernel refuses, for the next CPUs too. Returns 0, or what refuse
 * returns. */
static int open_cpu(struct perf_event_attr *attr, const strobe_sampler_desc *d, const pid_t *tids, uint32_t ntid,
                    int cpu) {
  int leader = -1;
  for (uint32_t t = 0; t < ntid; t++) {
    /* Strobe's own threads (the drain) are sampled, their switches not recorded. */
    attr->context_switch = d->no_switches || quiet((uint64_t)tids[t]) ? 0 : 1;
    long fd = open_event(attr, tids[t], cpu);
    if (fd < 0 && errno == EINVAL && attr->inherit_thread) { /* kernels before 5.13: records of children are dropped */
      attr->inherit_thread = 0;
      fd = open_event(attr, tids[t], cpu);
    }
    if (fd < 0 && errno == EINVAL && attr->sample_max_stack) { /* kernels before 4.8 do not know the field */
      attr->sample_max_stack = 0;
      fd = open_event(attr, tids[t], cpu);
    }
    if (fd < 0) {
      int err = errno;
      if (err == ESRCH) continue;           /* the thread exited meanwhile */
      if (err == ENODEV && t == 0) break;   /* the CPU went offline meanwhile */
      return refused_open(err);
    }
    g_fds[g_nfds++] = (int)fd;
    if (leader < 0) {
      size_t size = g_page * (1 + BUFFER_PAGES);
      void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
      if (base == MAP_FAILED) {
        int err = errno;
        return refuse(err == EPERM || err == EACCES ? STROBE_EPERM : STROBE_ENOMEM, err,
                      "mmap of a perf buffer refused: perf_event_mlock_kb is too small, or RLIMIT_MEMLOCK");
      }
      g_bufs[g_nbufs++] = (cpu_buf){(int)fd, base, g_page * BUFFER_PAGES};
      leader = (int)fd;
    } else if (ioctl((int)fd, PERF_EVENT_IOC_SET_OUTPUT, leader) != 0) {
      int err = errno;
      return refuse(STROBE_EIO, err, "PERF_EVENT_IOC_SET_OUTPUT refused");
    }
  }
  return 0;
}

static int start_locked(const strobe_sampler_desc *d) {
  static int atfork;
  if (!atfork) atfork = pthread_atfork(NULL, NULL, forget_in_child) == 0;
  g_pid = (uint32_t)getpid();
  int cpus[MAX_CPUS];
  uint32_t ncpu = online_cpus(cpus);
  pid_t *tids = malloc(MAX_THREADS_AT_START * sizeof *tids);
  if (!tids) return refuse(STROBE_ENOMEM, ENOMEM, "out of memory");
  uint32_t ntid = thread_ids(tids);
  g_page = (size_t)sysconf(_SC_PAGESIZE);
  if (!g_addr) {
    g_addr = calloc(ADDR_SLOTS, sizeof *g_addr);
    g_func_slot = calloc(FUNC_SLOTS, sizeof *g_func_slot);
    if (!g_addr || !g_func_slot) {
      free(g_addr), free(g_func_slot);
      g_addr = NULL, g_func_slot = NULL;
      free(tids);
      return refuse(STROBE_ENOMEM, ENOMEM, "out of memory");
    }
  }
  g_fds = malloc((size_t)ncpu * ntid * sizeof *g_fds);
  if (!g_fds) {
    free(tids);
    return refuse(STROBE_ENOMEM, ENOMEM, "out of memory");
  }
  struct perf_event_attr attr;
  sample_attr(&attr, d);
  for (uint32_t c = 0; c < ncpu; c++) {
    int rc = open_cpu(&attr, d, tids, ntid, cpus[c]);
    if (rc) {
      free(tids);
      return rc;
    }
  }
  free(tids);
  if (!g_nbufs) return refuse(STROBE_EIO, ESRCH, "no thread or CPU to sample");
  g_status = (strobe_sampler_status){1, d->rate_hz, !d->no_switches, 0, 0, 0, "", g_nbufs, ntid};
  return 0;
}
#endif

int strobe_sampler_start(const strobe_sampler_desc *desc) {
  strobe_sampler_desc d = desc ? *desc : (strobe_sampler_desc){0};
  if (!d.rate_hz) d.rate_hz = STROBE_SAMPLE_DEFAULT_HZ;
  if (d.rate_hz > STROBE_SAMPLE_MAX_HZ || d.no_switches > 1) return STROBE_EINVAL;
  strobe__mutex_lock(&g_lock);
  int rc;
  if (g_running) {
    rc = STROBE_EBUSY;
  } else if (!STROBE__PROFILING) {
    rc = STROBE_EFEATURE_DISABLED;
    g_status.error = rc;
    g_status.reason = "profiling was compiled out of this build";
  } else {
#ifdef __linux__
    rc = start_locked(&d);
#else
    rc = STROBE_EFEATURE_DISABLED;
    g_status.error = rc;
    g_status.reason = "the sampler needs Linux perf events";
#endif
    if (rc == 0) __atomic_store_n(&g_running, 1, __ATOMIC_RELEASE);
  }
  strobe__mutex_unlock(&g_lock);
  return rc;
}

/* >>read */
#ifdef __linux__
static int grow(void **p, uint32_t *cap, uint64_t need, size_t size) {
  if (need <= *cap) return 0;
  uint64_t n = *cap ? *cap : 1024;
  while (n < need) n *= 2;
  if (n > UINT32_MAX / 2) return -1;
  void *q = realloc(*p, (size_t)n * size);
  if (!q) return -1;
  *p = q;
  *cap = (uint32_t)n;
  return 0;
}

static uint64_t u64_at(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* One record (whole, in rec[0..size)) into the pending list. */
static void take_record(const uint8_t *rec, uint32_t size) {
  struct perf_event_header h;
  memcpy(&h, rec, sizeof h);
  const uint8_t *p = rec + sizeof h, *end = rec + size;
  if (h.type == PERF_RECORD_LOST) {
    if (end - p >= 16) __atomic_fetch_add(&g_lost, u64_at(p + 8), __ATOMIC_RELAXED);
    return;
  }
  if (h.type != PERF_RECORD_SAMPLE && h.type != PERF_RECORD_SWITCH) return;
  if (end - p < 16) return;
  pending r = {0};
  uint32_t pid, tid;
  memcpy(&pid, p, sizeof pid); /* pid u32, tid u32 */
  memcpy(&tid, p + 4, sizeof tid);
  if (pid != g_pid) return; /* a child process that inherited the events (a kernel without inherit_thread) */
  r.tid = tid;
  r.mono_ns = u64_at(p + 8);
  p += 16;
  if (h.type == PERF_RECORD_SWITCH) {
    if (quiet(tid)) return; /* a Strobe thread begun after the sampler, whose events it inherited */
    r.kind = h.misc & PERF_RECORD_MISC_SWITCH_OUT ? STROBE__SAMPLE_SWITCH_OUT : STROBE__SAMPLE_SWITCH_IN;
    if (h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) r.flags |= STROBE__SAMPLE_PREEMPTED;
    __atomic_fetch_add(&g_switches, 1, __ATOMIC_RELAXED);
  } else {
    r.kind = STROBE__SAMPLE_CPU;
    uint64_t nr = end - p >= 8 ? u64_at(p) : 0;
    p += 8;
    if (nr > (uint64_t)(end - p) / 8) nr = (uint64_t)(end - p) / 8;
    if (grow((void **)&g_ips, &g_cap_ips, (uint64_t)g_nips + nr, sizeof *g_ips)) {
      __atomic_fetch_add(&g_lost, 1, __ATOMIC_RELAXED);
      return;
    }
    r.frame0 = g_nips;
    for (uint64_t i = 0; i < nr; i++) {
      uint64_t ip = u64_at(p + 8 * i);
      if (ip >= (uint64_t)PERF_CONTEXT_MAX) continue; /* a context marker (PERF_CONTEXT_USER), not an address */
      if (r.nframes == STROBE_SAMPLE_MAX_FRAMES) {
        r.flags |= STROBE__SAMPLE_CUT;
        __atomic_fetch_add(&g_frames_cut, 1, __ATOMIC_RELAXED);
        continue;
      }
      g_ips[g_nips++] = ip;
      r.nframes++;
    }
    __atomic_fetch_add(&g_samples, 1, __ATOMIC_RELAXED);
  }
  if (grow((void **)&g_pend, &g_cap_pend, (uint64_t)g_npend + 1, sizeof *g_pend)) {
    __atomic_fetch_add(&g_lost, 1, __ATOMIC_RELAXED);
    return;
  }
  g_pend[g_npend++] = r;
}

/* Every whole record of one CPU's buffer, then the space is given back. */
static void read_buffer(cpu_buf *b) {
  struct perf_event_mmap_page *meta = b->base;
  uint8_t *data = (uint8_t *)b->base + g_page;
  uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = meta->data_tail;
  size_t mask = b->data_size - 1;
  while (tail + sizeof(struct perf_event_header) <= head) {
    struct perf_event_header h;
    size_t off = (size_t)(tail & mask);
    for (size_t i = 0; i < sizeof h; i++) ((uint8_t *)&h)[i] = data[(off + i) & mask];
    if (h.size < sizeof h || tail + h.size > head) break;
    const uint8_t *rec = data + off;
    if (off + h.size > b->data_size) { /* wraps: copy it whole */
      size_t first = b->data_size - off;
      memcpy(g_scratch, data + off, first);
      memcpy(g_scratch + first, data, h.size - first);
      rec = g_scratch;
    }
    take_record(rec, h.size);
    tail += h.size;
  }
  __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}
#endif

int strobe_sampler_stop(void) {
  strobe__mutex_lock(&g_lock);
  int rc = STROBE_ESTATE;
  if (g_running) {
#ifdef __linux__
    for (uint32_t i = 0; i < g_nfds; i++) ioctl(g_fds[i], PERF_EVENT_IOC_DISABLE, 0);
    for (uint32_t i = 0; i < g_nbufs; i++) read_buffer(&g_bufs[i]);
    close_all();
#endif
    __atomic_store_n(&g_flush_all, 1, __ATOMIC_RELAXED); /* nothing more will come: the next poll delivers all */
    g_status.running = 0;
    __atomic_store_n(&g_running, 0, __ATOMIC_RELEASE);
    rc = 0;
  }
  strobe__mutex_unlock(&g_lock);
  return rc;
}

/* >>poll */
static int by_tid_time(const void *a, const void *b) {
  const pending *x = a, *y = b;
  if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
  if (x->mono_ns != y->mono_ns) return x->mono_ns < y->mono_ns ? -1 : 1;
  return 0;
}

void strobe__sampler_poll(int deliver, int final, strobe__sample_sink sink, void *ctx) {
  if (!__atomic_load_n(&g_running, __ATOMIC_ACQUIRE) && !__atomic_load_n(&g_npend, __ATOMIC_RELAXED)) return;
  /* At most every POLL_NS but for a last pass or a stop: a pass reads few records, so the
   * fixed cost of a read is paid 100 times a second, not 500. */
  uint64_t now = strobe__mono_ns();
  if (!final && !__atomic_load_n(&g_flush_all, __ATOMIC_RELAXED) && now - g_polled_ns < POLL_NS) return;
  g_polled_ns = now;
  strobe__mutex_lock(&g_lock);
  uint64_t horizon = now - HOLD_NS;
#ifdef __linux__
  for (uint32_t i = 0; i < g_nbufs; i++) read_buffer(&g_bufs[i]);
#endif
  if (final || g_flush_all || g_npend > MAX_PENDING) horizon = UINT64_MAX;
  __atomic_store_n(&g_flush_all, 0, __ATOMIC_RELAXED);
  if (!deliver) { /* nobody records: read to keep the buffers empty, keep nothing */
    g_npend = g_nips = 0;
    strobe__mutex_unlock(&g_lock);
    return;
  }
  if (g_npend) qsort(g_pend, g_npend, sizeof *g_pend, by_tid_time); /* g_pend is NULL until a record came */
  /* Deliver what is at or before the horizon, compacting the rest (and its frames) to the front. */
  strobe__cpu_sample *out = NULL;
  uint32_t *frames = NULL;
  uint32_t nout = 0, nframes = 0, keep = 0, keep_ips = 0;
  size_t cap_out = g_npend, cap_frames = g_nips;
  out = malloc((cap_out ? cap_out : 1) * sizeof *out);
  frames = malloc((cap_frames ? cap_frames : 1) * sizeof *frames);
  uint64_t *ips = g_nips ? malloc(g_nips * sizeof *ips) : NULL;
  if (!out || !frames || (g_nips && !ips)) {
    __atomic_fetch_add(&g_lost, g_npend, __ATOMIC_RELAXED);
    g_npend = g_nips = 0;
    goto done;
  }
  if (g_nips) memcpy(ips, g_ips, g_nips * sizeof *ips);
  for (uint32_t i = 0; i < g_npend; i++) {
    pending r = g_pend[i];
    if (r.mono_ns > horizon) {
      if (r.nframes) memmove(g_ips + keep_ips, ips + r.frame0, r.nframes * sizeof *ips); /* ips: NULL when no frames */
      r.frame0 = keep_ips;
      keep_ips += r.nframes;
      g_pend[keep++] = r;
      continue;
    }
    strobe__cpu_sample *s = &out[nout++];
    s->ticks = strobe_clock_ticks_from_mono_ns(r.mono_ns);
    s->tid = r.tid;
    s->kind = r.kind;
    s->flags = r.flags;
    s->nframes = r.nframes;
    s->frame0 = nframes;
    for (uint32_t k = 0; k < r.nframes; k++) {
      /* A return address points after its call: the call is the byte before. */
      uint64_t ip = ips[r.frame0 + k];
      frames[nframes++] = function_of(k == 0 ? ip : ip - 1);
    }
  }
  g_npend = keep;
  g_nips = keep_ips;
  strobe__mutex_unlock(&g_lock); /* consumers read function names through it (strobe__sample_function) */
  if (nout) sink(ctx, out, nout, frames);
  free(out);
  free(frames);
  free(ips);
  return;
done:
  strobe__mutex_unlock(&g_lock);
  free(out);
  free(frames);
  free(ips);
}

/* >>queries */
strobe_sampler_status strobe_sampler_query_status(void) {
  strobe__mutex_lock(&g_lock);
  strobe_sampler_status s = g_status;
  strobe__mutex_unlock(&g_lock);
  return s;
}

strobe_sampler_stats strobe_sampler_query_stats(void) {
  strobe_sampler_stats s;
  s.samples = __atomic_load_n(&g_samples, __ATOMIC_RELAXED);
  s.switches = __atomic_load_n(&g_switches, __ATOMIC_RELAXED);
  s.lost = __atomic_load_n(&g_lost, __ATOMIC_RELAXED);
  s.frames_cut = __atomic_load_n(&g_frames_cut, __ATOMIC_RELAXED);
  s.addresses_cut = __atomic_load_n(&g_addresses_cut, __ATOMIC_RELAXED);
  s.addresses = __atomic_load_n(&g_naddr, __ATOMIC_RELAXED);
  s.functions = __atomic_load_n(&g_nfunc, __ATOMIC_RELAXED);
  s.unresolved = __atomic_load_n(&g_nunresolved, __ATOMIC_RELAXED);
  return s;
}

strobe_sampler_stats strobe__sampler_stats_since(const strobe_sampler_stats *base) {
  strobe_sampler_stats s = strobe_sampler_query_stats();
  s.samples -= base->samples;
  s.switches -= base->switches;
  s.lost -= base->lost;
  s.frames_cut -= base->frames_cut;
  s.addresses_cut -= base->addresses_cut;
  return s;
}

/* STROBE_SAMPLE=HZ|on and STROBE_SAMPLE_SWITCHES=0 at load time (sample.h):
 * a bad value is said on stderr and starts nothing; a refusal too. */
__attribute__((constructor)) static void sampler_from_env(void) {
  const char *v = getenv("STROBE_SAMPLE");
  if (!v || !*v || !strcmp(v, "off") || !strcmp(v, "0")) return;
  strobe_sampler_desc d = {0};
  if (strcmp(v, "on") != 0) {
    char *end;
    unsigned long hz = strtoul(v, &end, 10);
    if (*end || hz == 0 || hz > STROBE_SAMPLE_MAX_HZ) {
      fprintf(stderr, "strobe: STROBE_SAMPLE=%s: expected on, off or a rate in Hz (1..%u); sampler not started\n", v,
              STROBE_SAMPLE_MAX_HZ);
      return;
    }
    d.rate_hz = (uint32_t)hz;
  }
  const char *sw = getenv("STROBE_SAMPLE_SWITCHES");
  if (sw && !strcmp(sw, "0")) d.no_switches = 1;
  int rc = strobe_sampler_start(&d);
  if (rc) {
    strobe_sampler_status st = strobe_sampler_query_status();
    fprintf(stderr, "strobe: sampler not started: %s (%s; perf_event_paranoid %d)\n", st.reason, strobe_strerror(rc),
            st.paranoid);
  }
}
