/*
 * audit.c — libstrobe_audit.so, the dynamic linker audit module `strobe
 * record --libcalls` puts in LD_AUDIT (docs/exploration.md §Recording a
 * program): every call the executable makes through its PLT into a shared
 * library becomes a scope named after the symbol, category "libcall", on
 * the calling thread's ordinary scope stack.
 *
 * Owns: which objects and symbols are audited (calls from the executable to
 * every other object but the loader and Strobe's own; symbols that return
 * twice, never return or switch stacks are left alone), the symbol table
 * from a bound symbol to its site, and each thread's stack of open library
 * calls.
 * Must never: link libstrobe (an audit module lives in its own link
 * namespace, so it would get a second library): it calls the program's
 * libstrobe.so through addresses found in that object's symbol table; record while
 * no consumer records; be called for a symbol of libstrobe itself.
 *
 * A library call passes through glibc's profiling trampoline, which copies
 * FRAME_BYTES of the caller's stack arguments: a call passing more on the
 * stack (no function of libc does) would see the rest wrong.
 *
 * Contents: >>state >>objects >>symbols >>calls
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* the audit interface */
#endif
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* >>state */
#define FRAME_BYTES 512 /* stack argument bytes glibc copies for a call it audits on exit */
#define SLOTS 16384u    /* bound symbols followed (at most half of them: open addressing) */
#define OPEN_MAX 256    /* library calls open on one thread; deeper ones are not recorded */
#define SITE_SCOPE 1    /* STROBE_SITE_SCOPE (strobe.h STROBE_SITE_KINDS): this module includes no Strobe header */

typedef struct strobe_site strobe_site;
typedef struct entry {
  uintptr_t key;       /* the bound symbol: its defining object's cookie address and its index there */
  const char *name;    /* its name, the loader's (lives as long as the object) */
  strobe_site *site;   /* atomic: interned on its first recorded call */
} entry;

static entry g_slots[SLOTS];
static uint32_t g_used; /* under the loader's lock (la_symbind64 runs under it) */

static struct link_map *g_strobe; /* the program's libstrobe.so */
static struct {
  const uint32_t *active; /* strobe__active */
  strobe_site *(*intern)(const char *, size_t, const char *, int);
  uintptr_t (*begin)(strobe_site *, uint32_t, uintptr_t);
  void (*end)(uintptr_t);
  int ready; /* 1: found, -1: not found (nothing is recorded) */
} g_api;

static __thread uintptr_t t_open[OPEN_MAX]; /* guards of this thread's open library calls */
static __thread uintptr_t t_sp[OPEN_MAX];   /* each one's caller's stack pointer at the call */
static __thread uint32_t t_depth;
static uint64_t g_cut;                      /* atomic: calls not recorded, OPEN_MAX open on their thread */

/* >>objects */
EXPORT unsigned la_version(unsigned version) { return version >= 1 ? LAV_CURRENT : 0; }

static int named(const char *path, const char *prefix) {
  const char *base = strrchr(path, '/');
  return !strncmp(base ? base + 1 : path, prefix, strlen(prefix));
}

EXPORT unsigned la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie) {
  (void)cookie;
  if (lmid != LM_ID_BASE) return 0;
  if (named(map->l_name, "libstrobe.so")) g_strobe = map;
  if (!map->l_name[0]) return LA_FLG_BINDFROM; /* the executable */
  if (named(map->l_name, "libstrobe") || named(map->l_name, "ld-linux")) return 0;
  return LA_FLG_BINDTO;
}

/* >>symbols */
/* The loader hands the hooks a copy of the symbol, never the same address:
 * a symbol is its defining object (the address of its cookie) and index. */
static uintptr_t key_of(const uintptr_t *defcook, unsigned ndx) { return (uintptr_t)defcook ^ ((uintptr_t)ndx << 40); }

static entry *find(uintptr_t key) {
  for (uint32_t i = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 40) & (SLOTS - 1);; i = (i + 1) & (SLOTS - 1)) {
    uintptr_t k = __atomic_load_n(&g_slots[i].key, __ATOMIC_ACQUIRE);
    if (!k || k == key) return &g_slots[i];
  }
}

/* Calls that return twice, never return, or leave by another stack:
 * glibc's exit trampoline cannot follow them. */
static int unfollowable(const char *name) {
  static const char *const k_names[] = {"setjmp", "_setjmp", "sigsetjmp", "__sigsetjmp", "longjmp", "_longjmp",
                                        "siglongjmp", "__longjmp_chk", "vfork", "fork", "clone", "exit", "_exit",
                                        "_Exit", "abort", "pthread_exit", "__libc_start_main", "__stack_chk_fail",
                                        "getcontext", "setcontext", "swapcontext", "makecontext", "__cxa_throw",
                                        "__cxa_rethrow", "_Unwind_Resume", "execve", "execv", "execvp", "execvpe",
                                        "execl", "execle", "execlp", "fexecve", "__assert_fail", NULL};
  if (!strncmp(name, "__cyg_profile_func_", 19) || !strncmp(name, "strobe", 6)) return 1;
  for (int i = 0; k_names[i]; i++)
    if (!strcmp(name, k_names[i])) return 1;
  return 0;
}

EXPORT uintptr_t la_symbind64(Elf64_Sym *sym, unsigned ndx, uintptr_t *refcook, uintptr_t *defcook,
                              unsigned *flags, const char *name) {
  (void)refcook;
  if (unfollowable(name) || g_used >= SLOTS / 2) {
    *flags |= LA_SYMB_NOPLTENTER | LA_SYMB_NOPLTEXIT;
    return sym->st_value;
  }
  entry *e = find(key_of(defcook, ndx));
  if (!e->key) {
    e->name = name;
    g_used++;
    __atomic_store_n(&e->key, key_of(defcook, ndx), __ATOMIC_RELEASE);
  }
  return sym->st_value;
}

/* >>calls
 * libstrobe's functions, looked up in its dynamic symbol table by hand:
 * dlsym, called from this namespace while the loader runs an audit hook,
 * crashes glibc 2.36. The table runs up to the string table (the order
 * every linker lays them out in). */
static void *lookup(struct link_map *map, const char *name) {
  const Elf64_Sym *symtab = NULL;
  const char *strtab = NULL;
  for (const Elf64_Dyn *d = map->l_ld; d->d_tag != DT_NULL; d++) {
    uintptr_t p = d->d_un.d_ptr < map->l_addr ? d->d_un.d_ptr + map->l_addr : d->d_un.d_ptr;
    if (d->d_tag == DT_SYMTAB) symtab = (const void *)p;
    if (d->d_tag == DT_STRTAB) strtab = (const void *)p;
  }
  if (!symtab || !strtab || (const char *)symtab >= strtab) return NULL;
  for (const Elf64_Sym *s = symtab; (const char *)(s + 1) <= strtab; s++)
    if (s->st_shndx != SHN_UNDEF && s->st_value && !strcmp(strtab + s->st_name, name))
      return (void *)(map->l_addr + s->st_value);
  return NULL;
}

static int api(void) {
  int ready = __atomic_load_n(&g_api.ready, __ATOMIC_ACQUIRE);
  if (ready) return ready > 0;
  struct link_map *h = g_strobe;
  if (h) {
    g_api.active = lookup(h, "strobe__active");
    *(void **)&g_api.intern = lookup(h, "strobe_site_intern");
    *(void **)&g_api.begin = lookup(h, "strobe__begin_slow");
    *(void **)&g_api.end = lookup(h, "strobe__end_slow");
  }
  ready = h && g_api.active && g_api.intern && g_api.begin && g_api.end ? 1 : -1;
  __atomic_store_n(&g_api.ready, ready, __ATOMIC_RELEASE);
  return ready > 0;
}

EXPORT uintptr_t la_x86_64_gnu_pltenter(Elf64_Sym *sym, unsigned ndx, uintptr_t *refcook, uintptr_t *defcook,
                                        La_x86_64_regs *regs, unsigned *flags, const char *name, long *framesizep) {
  (void)refcook, (void)flags, (void)name;
  if (!api()) return sym->st_value;
  /* Calls whose exits never ran (an exception or a longjmp through them)
   * were made from this caller's frame or deeper ones (a live call's caller
   * is shallower than any call made meanwhile): forgotten here, closed as
   * unwound by the library's own stack rule (docs/recording.md §Unwinding). */
  while (t_depth && t_sp[t_depth - 1] <= regs->lr_rsp) t_depth--;
  if (t_depth >= OPEN_MAX) {
    __atomic_fetch_add(&g_cut, 1, __ATOMIC_RELAXED);
    return sym->st_value;
  }
  entry *e = find(key_of(defcook, ndx));
  uintptr_t guard = 0;
  if (!e->key || !__atomic_load_n(g_api.active, __ATOMIC_RELAXED)) return sym->st_value; /* no exit hook either */
  {
    strobe_site *site = __atomic_load_n(&e->site, __ATOMIC_ACQUIRE);
    if (!site) { /* a race interns twice: the same site comes back */
      site = g_api.intern(e->name, strlen(e->name), "libcall", SITE_SCOPE);
      __atomic_store_n(&e->site, site, __ATOMIC_RELEASE);
    }
    /* The call's frame: just above the return address, as a traced call's (calltrace.c). */
    if (site) guard = g_api.begin(site, 0, regs->lr_rsp + sizeof(void *));
  }
  if (!guard) return sym->st_value;
  t_sp[t_depth] = regs->lr_rsp;
  t_open[t_depth++] = guard;
  *framesizep = FRAME_BYTES;
  return sym->st_value;
}

EXPORT unsigned la_x86_64_gnu_pltexit(Elf64_Sym *sym, unsigned ndx, uintptr_t *refcook, uintptr_t *defcook,
                                      const La_x86_64_regs *inregs, La_x86_64_retval *outregs, const char *name) {
  (void)sym, (void)ndx, (void)refcook, (void)defcook, (void)inregs, (void)outregs, (void)name;
  if (!t_depth) return 0;
  g_api.end(t_open[--t_depth]);
  return 0;
}

/* What the bound cut is said once, when the process ends. */
__attribute__((destructor)) static void say_cut(void) {
  uint64_t cut = __atomic_load_n(&g_cut, __ATOMIC_RELAXED);
  if (cut)
    fprintf(stderr, "strobe record: %llu library calls not recorded: %d were open on their thread\n",
            (unsigned long long)cut, OPEN_MAX);
}
