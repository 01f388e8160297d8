/*
 * starter.c — libstrobe_record.so, the starter `strobe record` preloads
 * (docs/exploration.md §Recording a program): in an unmodified program it
 * opens a capture before main and closes it at exit, on a fatal signal and
 * before an exec, through libstrobe's public API only.
 *
 * Owns: the environment contract cmd_record.c writes (STROBE_RECORD=path and
 * the STROBE_RECORD_* options below), the choice between call tracing and
 * the sampler, which process of a run records where (--follow-fork), and
 * the exec wrappers that close the capture and pass the contract on (or
 * take it away) in the environment of the new image.
 * Must never: start a second capture in a process (a forked child of a
 * recording process records nothing into its parent's capture, whose file
 * only its owner closes: followed, it starts its own); change the program's own signal handlers (only a
 * signal left at its default action is caught); record anything when
 * STROBE_RECORD is unset; use libstrobe's internal names (it links
 * libstrobe.so like any application, so a program linking Strobe itself
 * shares the one library and its own recorders run beside this one).
 *
 * The contract, all set by `strobe record`:
 *   STROBE_RECORD=path        the capture of the first process's first image
 *   STROBE_RECORD_ROOT=pid    that process
 *   STROBE_RECORD_FOLLOW=1    other processes and images record too, to
 *                             path.PID.GEN (GEN counts the process's execs):
 *                             a child of fork() from the fork on, an image
 *                             after an exec from its start
 *   STROBE_RECORD_GEN=n       this image's exec count (absent: 0)
 *   STROBE_RECORD_SAMPLE=auto|off|HZ  auto: the sampler when the executable
 *                             was not built with -finstrument-functions
 *   STROBE_RECORD_SWITCHES=1  the sampler records context switches too
 *   STROBE_RECORD_OVERFLOW=drop|grow|wait  strobe_desc.overflow
 *   STROBE_RECORD_COMPRESSION=N  strobe_record_desc.compression_level
 *   STROBE_RECORD_PRELOAD=... the LD_PRELOAD to give an image that is not
 *                             followed ("-": none)
 *   STROBE_RECORD_AUDIT=...   with --libcalls: the LD_AUDIT to give it ("-": none)
 *
 * Contents: >>state >>elf >>start >>stop >>fork >>exec
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT, asprintf, execvpe */
#endif
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strobe/record.h"
#include "strobe/sample.h"
#include "strobe/strobe.h"

#define EXPORT __attribute__((visibility("default")))

/* >>state */
static strobe_recorder *g_rec;  /* the capture this process writes, NULL: none */
static pid_t g_owner;           /* the process that started it */
static int g_sampling;          /* 1: this starter started the sampler */
static uint32_t g_stopping;     /* atomic: 1 once a stop began (exit, signal or exec) */
static unsigned g_gen;          /* this image's exec count */
static unsigned g_exe;          /* what the executable's symbols say (EXE_*) */
static char g_path[4096];       /* where this image records */

static const int k_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

/* >>elf
 * What the executable's dynamic and static symbol tables say, read from the
 * file (the hooks may be bound to glibc's empty ones): EXE_HOOKS, it names
 * __cyg_profile_func_enter (built with -finstrument-functions); EXE_STROBE,
 * it defines strobe_record_start (Strobe linked in statically: a copy of
 * its own, which this capture cannot see). */
#define EXE_HOOKS 1u
#define EXE_STROBE 2u

static unsigned scan_symbols(const unsigned char *base, size_t len) {
  const Elf64_Ehdr *eh = (const void *)base;
  if (len < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64) return 0;
  if (eh->e_shoff == 0 || eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > len) return 0;
  const Elf64_Shdr *sh = (const void *)(base + eh->e_shoff);
  unsigned found = 0;
  for (unsigned i = 0; i < eh->e_shnum; i++) {
    if ((sh[i].sh_type != SHT_DYNSYM && sh[i].sh_type != SHT_SYMTAB) || sh[i].sh_link >= eh->e_shnum) continue;
    const Elf64_Shdr *str = &sh[sh[i].sh_link];
    if (sh[i].sh_offset + sh[i].sh_size > len || str->sh_offset + str->sh_size > len) continue;
    const Elf64_Sym *sym = (const void *)(base + sh[i].sh_offset);
    for (size_t k = 0; k < sh[i].sh_size / sizeof *sym; k++) {
      if (sym[k].st_name >= str->sh_size) continue;
      const char *name = (const char *)base + str->sh_offset + sym[k].st_name;
      size_t room = str->sh_size - sym[k].st_name;
      if (!strncmp(name, "__cyg_profile_func_enter", room)) found |= EXE_HOOKS;
      if (!strncmp(name, "strobe_record_start", room) && sym[k].st_shndx != SHN_UNDEF) found |= EXE_STROBE;
    }
  }
  return found;
}

static unsigned exe_symbols(void) {
  int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0) return 0;
  unsigned yes = 0;
  if (fstat(fd, &st) == 0 && st.st_size > 0) {
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m != MAP_FAILED) {
      yes = scan_symbols(m, (size_t)st.st_size);
      munmap(m, (size_t)st.st_size);
    }
  }
  close(fd);
  return yes;
}

/* >>stop */
static void stop(void) {
  if (!g_rec || getpid() != g_owner || __atomic_exchange_n(&g_stopping, 1, __ATOMIC_ACQ_REL)) return;
  if (g_sampling) (void)strobe_sampler_stop();
  int rc = strobe_record_stop(g_rec);
  g_rec = NULL;
  if (rc) fprintf(stderr, "strobe record: writing %s failed: %s\n", g_path, strobe_strerror(rc));
}

/* A fatal signal left at its default action: the capture is closed first
 * (where the interrupted code holds none of the recorder's locks), then the
 * signal is raised again with its default action. */
static void on_signal(int sig) {
  int saved = errno;
  stop();
  signal(sig, SIG_DFL);
  raise(sig);
  errno = saved;
}

static void catch_signals(void) {
  for (size_t i = 0; i < sizeof k_signals / sizeof k_signals[0]; i++) {
    struct sigaction old;
    if (sigaction(k_signals[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO)) continue;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    (void)sigaction(k_signals[i], &sa, NULL);
  }
}

/* >>start */
static int overflow_mode(const char *name, uint32_t *mode) {
  for (uint32_t m = 0; strobe_overflow_name(m); m++)
    if (!strcmp(strobe_overflow_name(m), name)) return *mode = m, 0;
  return -1;
}

/* The sampler as STROBE_RECORD_SAMPLE asks (auto: only for an executable
 * without call-tracing hooks); a refusal is said, not fatal. */
static void start_sampler(unsigned exe) {
  const char *s = getenv("STROBE_RECORD_SAMPLE");
  if (!s || !strcmp(s, "off") || (!strcmp(s, "auto") && (exe & EXE_HOOKS))) return;
  strobe_sampler_desc sd = {0};
  sd.rate_hz = strcmp(s, "auto") ? (uint32_t)strtoul(s, NULL, 10) : 0;
  const char *sw = getenv("STROBE_RECORD_SWITCHES");
  sd.no_switches = !(sw && !strcmp(sw, "1"));
  int rc = strobe_sampler_start(&sd);
  if (rc == 0)
    g_sampling = 1;
  else if (rc != STROBE_EBUSY) /* EBUSY: the program's own sampler (STROBE_SAMPLE) runs */
    fprintf(stderr, "strobe record: no sampling (%s): %s\n", strobe_strerror(rc), strobe_sampler_query_status().reason);
}

/* Where this image records, or 0 when it records nothing (not the first
 * process and not followed). */
static int choose_path(const char *path) {
  const char *root = getenv("STROBE_RECORD_ROOT"), *follow = getenv("STROBE_RECORD_FOLLOW"),
             *gen = getenv("STROBE_RECORD_GEN");
  g_gen = gen ? (unsigned)strtoul(gen, NULL, 10) : 0;
  int first = root && strtol(root, NULL, 10) == (long)getpid() && g_gen == 0;
  if (!first && !(follow && !strcmp(follow, "1"))) return 0;
  int n = first ? snprintf(g_path, sizeof g_path, "%s", path)
                : snprintf(g_path, sizeof g_path, "%s.%ld.%u", path, (long)getpid(), g_gen);
  return n > 0 && (size_t)n < sizeof g_path;
}

static void start(unsigned exe) {
  strobe_record_desc rd = {0};
  rd.path = g_path;
  const char *level = getenv("STROBE_RECORD_COMPRESSION");
  rd.compression_level = level ? atoi(level) : 0; /* 1..19; a bad one is refused by strobe_record_start, said */
  int rc = strobe_record_start(&rd, &g_rec);
  if (rc) {
    fprintf(stderr, "strobe record: cannot record to %s: %s\n", g_path, strobe_strerror(rc));
    return;
  }
  g_owner = getpid();
  __atomic_store_n(&g_stopping, 0, __ATOMIC_RELEASE);
  start_sampler(exe);
}

/* >>fork
 * Followed, a child of fork() records its own run from the fork on, to
 * path.PID.0 (it has made no exec yet). libstrobe's own fork handlers ran
 * before this one (registered when it loaded): the parent's capture is not
 * the child's, and the events the parent had not yet written stay the
 * parent's (a new capture starts with the next pass). Without following,
 * the child records nothing, as before. */
static void on_fork_child(void) {
  int had = g_rec != NULL;
  g_rec = NULL; /* the parent's: only its owner writes and closes it */
  g_sampling = 0;
  g_gen = 0;
  const char *path = getenv("STROBE_RECORD");
  if (!path || snprintf(g_path, sizeof g_path, "%s.%ld.0", path, (long)getpid()) >= (int)sizeof g_path) return;
  start(g_exe);
  if (g_rec && !had) {
    atexit(stop);
    catch_signals();
  }
}

__attribute__((constructor)) static void starter(void) {
  const char *path = getenv("STROBE_RECORD"), *ov = getenv("STROBE_RECORD_OVERFLOW");
  if (!path || !*path || !choose_path(path)) return;
  uint32_t mode;
  if (ov && overflow_mode(ov, &mode) == 0 && mode != STROBE_OVERFLOW_DROP) {
    strobe_desc d = strobe_query_desc();
    d.overflow = mode;
    if (strobe_setup(&d) != 0) fprintf(stderr, "strobe record: --overflow %s refused: the program set up Strobe first\n", ov);
  }
  unsigned exe = g_exe = exe_symbols();
  if (exe & EXE_STROBE)
    fprintf(stderr, "strobe record: this program has Strobe linked in statically: its own scopes and traced calls "
                    "go to that copy, not to %s (link libstrobe.so to record them here)\n", g_path);
  start(exe);
  const char *follow = getenv("STROBE_RECORD_FOLLOW");
  if (follow && !strcmp(follow, "1")) (void)pthread_atfork(NULL, NULL, on_fork_child);
  if (!g_rec) return;
  atexit(stop);
  catch_signals();
}

/* >>exec
 * An exec replaces the image without running atexit: the capture is closed
 * first. The new image records only when followed (its own file, the next
 * GEN); otherwise the contract and the preload are taken out of its
 * environment. A failed exec goes on recording into the next GEN's file. */
static char **next_env(char *const envp[], char *own[3]) {
  size_t n = 0;
  while (envp && envp[n]) n++;
  char **out = malloc((n + 4) * sizeof *out);
  if (!out) return NULL;
  const char *follow = getenv("STROBE_RECORD_FOLLOW"), *pre = getenv("STROBE_RECORD_PRELOAD"),
             *audit = getenv("STROBE_RECORD_AUDIT");
  int followed = follow && !strcmp(follow, "1");
  size_t k = 0;
  own[0] = own[1] = own[2] = NULL;
  for (size_t i = 0; i < n; i++) {
    if (!strncmp(envp[i], "STROBE_RECORD_GEN=", 18)) continue;
    if (!followed && (!strncmp(envp[i], "STROBE_RECORD", 13) || !strncmp(envp[i], "LD_PRELOAD=", 11) ||
                      (audit && !strncmp(envp[i], "LD_AUDIT=", 9))))
      continue;
    out[k++] = envp[i];
  }
  if (followed && asprintf(&own[0], "STROBE_RECORD_GEN=%u", getpid() == g_owner ? g_gen + 1 : 0) > 0) out[k++] = own[0];
  if (!followed && pre && strcmp(pre, "-") && asprintf(&own[1], "LD_PRELOAD=%s", pre) > 0) out[k++] = own[1];
  if (!followed && audit && strcmp(audit, "-") && asprintf(&own[2], "LD_AUDIT=%s", audit) > 0) out[k++] = own[2];
  out[k] = NULL;
  return out;
}

typedef int (*execve_fn)(const char *, char *const[], char *const[]);

static int exec_with(int search, const char *file, char *const argv[], char *const envp[]) {
  execve_fn real = (execve_fn)dlsym(RTLD_NEXT, search ? "execvpe" : "execve");
  if (!real) return errno = ENOSYS, -1;
  if (!getenv("STROBE_RECORD")) return real(file, argv, envp);
  char *own[3];
  char **env = next_env(envp, own);
  if (!env) return errno = ENOMEM, -1;
  int recording = g_rec && getpid() == g_owner;
  stop();
  int rc = real(file, argv, env);
  int saved = errno;
  free(env);
  for (int i = 0; i < 3; i++) free(own[i]);
  if (recording) {
    g_gen++;
    const char *path = getenv("STROBE_RECORD");
    if (snprintf(g_path, sizeof g_path, "%s.%ld.%u", path, (long)getpid(), g_gen) < (int)sizeof g_path) start(exe_symbols());
  }
  errno = saved;
  return rc;
}

extern char **environ;

EXPORT int execve(const char *path, char *const argv[], char *const envp[]) { return exec_with(0, path, argv, envp); }
EXPORT int execv(const char *path, char *const argv[]) { return exec_with(0, path, argv, environ); }
EXPORT int execvpe(const char *file, char *const argv[], char *const envp[]) { return exec_with(1, file, argv, envp); }
EXPORT int execvp(const char *file, char *const argv[]) { return exec_with(1, file, argv, environ); }

/* execl, execlp, execle: the list into an array (an exec's arguments fit
 * the stack: the kernel bounds them to a quarter of it). */
static int exec_list(int search, int with_env, const char *file, const char *arg0, va_list ap) {
  va_list c;
  va_copy(c, ap);
  size_t n = arg0 ? 1 : 0;
  if (arg0)
    while (va_arg(c, char *)) n++;
  va_end(c);
  char *argv[n + 1];
  for (size_t i = 0; i < n; i++) argv[i] = i ? va_arg(ap, char *) : (char *)arg0;
  if (arg0) (void)va_arg(ap, char *); /* the list's NULL */
  argv[n] = NULL;
  char *const *envp = with_env ? va_arg(ap, char *const *) : environ;
  return exec_with(search, file, argv, envp);
}

EXPORT int execl(const char *path, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  int rc = exec_list(0, 0, path, arg, ap);
  va_end(ap);
  return rc;
}
EXPORT int execle(const char *path, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  int rc = exec_list(0, 1, path, arg, ap);
  va_end(ap);
  return rc;
}
EXPORT int execlp(const char *file, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  int rc = exec_list(1, 0, file, arg, ap);
  va_end(ap);
  return rc;
}
