/*
 * symbols.c — names for code addresses, from the process's own symbol
 * tables (docs/exploration.md §Symbols): every object loaded (the
 * executable, PIE or not, and each shared object) is reported to libdwfl at
 * the load base dl_iterate_phdr gives; a name comes from .symtab when the
 * object has one (static functions included), else .dynsym; C++ names are
 * demangled with the C++ runtime's __cxa_demangle when the process has one.
 *
 * Owns: the one Dwfl session (under g_lock), made again when objects were
 * loaded since (dlpi_adds) and an address falls outside every module.
 * Must never: run on a recording thread's hot path (it opens files, reads
 * symbol tables and allocates: call tracing calls it from the drain, once
 * per function, and so does the sampler, once per sampled address,
 * docs/exploration.md §Symbols), or hand out a name it did not copy.
 */
#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "platform/invariant.h"
#include "probe/probe.h"

static strobe__mutex g_lock = STROBE__MUTEX_INIT;
static Dwfl *g_dwfl;                /* under g_lock */
static unsigned long long g_adds;  /* dlpi_adds when last reported, under g_lock */
static char *g_debuginfo_path;      /* libdwfl's callbacks want a char ** */

static const Dwfl_Callbacks k_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .debuginfo_path = &g_debuginfo_path,
};

typedef char *(*demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

/* >>report */
static int report_object(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  int *first = arg;
  const char *path = info->dlpi_name;
  char exe[4096];
  if (*first) { /* the executable: dl_iterate_phdr names it "" */
    *first = 0;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 0;
    exe[n] = '\0';
    path = exe;
  }
  g_adds = info->dlpi_adds;
  if (!path || path[0] != '/') return 0; /* the vDSO: no file to read */
  (void)dwfl_report_elf(g_dwfl, path, path, -1, info->dlpi_addr, false);
  return 0;
}

/* A new session of every object loaded now (libdwfl does not take the same
 * file reported again into an existing session: it loses the module). */
static int report_all(void) {
  if (g_dwfl) dwfl_end(g_dwfl);
  if (!(g_dwfl = dwfl_begin(&k_callbacks))) return -1;
  dwfl_report_begin(g_dwfl);
  int first = 1;
  dl_iterate_phdr(report_object, &first);
  if (dwfl_report_end(g_dwfl, NULL, NULL) == 0) return 0;
  dwfl_end(g_dwfl);
  g_dwfl = NULL;
  return -1;
}

static int adds_of(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  *(unsigned long long *)arg = info->dlpi_adds;
  return 1; /* the first object carries the count */
}

/* The session, reported when first needed or when objects were loaded since. */
static Dwfl *session(int refresh) {
  if (g_dwfl && !refresh) return g_dwfl;
  unsigned long long adds = 0;
  dl_iterate_phdr(adds_of, &adds);
  if (g_dwfl && adds == g_adds) return g_dwfl;
  return report_all() == 0 ? g_dwfl : NULL;
}

/* >>demangle
 * The C++ runtime's demangler: the process's own when it has one, else
 * libstdc++ loaded now (a C program that calls C++ code may not link it
 * itself); without either, names stay mangled. Under g_lock. */
static char *demangled(const char *raw) {
  static demangle_fn fn;
  static int looked;
  if (raw[0] != '_' || raw[1] != 'Z') return NULL;
  if (!looked) {
    looked = 1;
    fn = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    void *lib = fn ? NULL : dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
    if (lib) fn = (demangle_fn)dlsym(lib, "__cxa_demangle"); /* kept open for the process's life */
  }
  int status = -1;
  char *out = fn ? fn(raw, NULL, NULL, &status) : NULL;
  if (status != 0) {
    free(out);
    return NULL;
  }
  return out;
}

static const char *base_name(const char *path) {
  const char *slash = path ? strrchr(path, '/') : NULL;
  return slash ? slash + 1 : path ? path : "";
}

/* >>lookup
 * `inside` 0 (call tracing): `addr` is a function's own entry, and an address
 * inside a symbol is not named by it. 1 (the sampler): `addr` is any code
 * address, named by the function containing it, whose start goes to *start;
 * one that no symbol covers is named by its object alone ("?? object"), its
 * start the object's base, since every address inside differs. */
static int lookup(uintptr_t addr, int inside, char **name, char **module, uintptr_t *start_out) {
  *name = NULL;
  if (module) *module = NULL;
  strobe__mutex_lock(&g_lock);
  Dwfl *d = session(0);
  Dwfl_Module *mod = d ? dwfl_addrmodule(d, addr) : NULL;
  if (d && !mod && (d = session(1)) != NULL) mod = dwfl_addrmodule(d, addr);
  const char *raw = NULL, *path = NULL;
  Dwarf_Addr start = 0;
  if (mod) {
    GElf_Sym sym;
    GElf_Off off = 0;
    path = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
    raw = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
    if (raw && (!*raw || (GELF_ST_TYPE(sym.st_info) != STT_FUNC && GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC)))
      raw = NULL;
    if (raw && off != 0 && !inside) raw = NULL; /* inside another symbol: not this function's own name */
    if (start_out) *start_out = raw ? (uintptr_t)(addr - off) : (uintptr_t)start;
  }
  int resolved = raw != NULL;
  if (raw) {
    *name = demangled(raw);
    if (!*name) *name = strdup(raw);
  } else {
    /* Says so: what is known is the object and the offset in it. */
    char buf[512];
    if (mod && inside)
      snprintf(buf, sizeof buf, "?? %s", base_name(path));
    else if (inside)
      snprintf(buf, sizeof buf, "?? (no object)");
    else if (mod)
      snprintf(buf, sizeof buf, "?? %s+0x%llx", base_name(path), (unsigned long long)(addr - start));
    else
      snprintf(buf, sizeof buf, "?? 0x%llx", (unsigned long long)addr);
    *name = strdup(buf);
  }
  if (module && path) *module = strdup(path);
  strobe__mutex_unlock(&g_lock);
  if (!*name) {
    if (module) {
      free(*module);
      *module = NULL;
    }
    return -1;
  }
  return resolved;
}

int strobe__symbol_name(uintptr_t addr, char **name, char **module) { return lookup(addr, 0, name, module, NULL); }

int strobe__symbol_function(uintptr_t addr, char **name, char **module, uintptr_t *start) {
  *start = 0;
  return lookup(addr, 1, name, module, start);
}

typedef struct find_ctx {
  int (*want)(const char *name, void *user); /* 1: this spelling (raw or demangled) is one */
  void (*fn)(uintptr_t addr, void *user);
  void *user;
  int found;
} find_ctx;

static int find_in_module(Dwfl_Module *mod, void **userdata, const char *mname, Dwarf_Addr start, void *arg) {
  (void)userdata, (void)mname, (void)start;
  find_ctx *f = arg;
  int n = dwfl_module_getsymtab(mod);
  for (int i = 1; i < n; i++) {
    GElf_Sym sym;
    GElf_Addr addr;
    const char *raw = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);
    if (!raw || !*raw || GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF) continue;
    int match = f->want(raw, f->user);
    if (!match && raw[0] == '_' && raw[1] == 'Z') {
      char *d = demangled(raw);
      match = d && f->want(d, f->user);
      free(d);
    }
    if (match) {
      f->fn((uintptr_t)addr, f->user);
      f->found++;
    }
  }
  return DWARF_CB_OK;
}

int strobe__symbol_find_if(int (*want)(const char *name, void *user), void (*fn)(uintptr_t addr, void *user),
                           void *user) {
  find_ctx f = {want, fn, user, 0};
  strobe__mutex_lock(&g_lock);
  Dwfl *d = session(1);
  if (d) dwfl_getmodules(d, find_in_module, &f, 0);
  strobe__mutex_unlock(&g_lock);
  return d ? f.found : -1;
}

typedef struct named {
  const char *name;
  void (*fn)(uintptr_t addr, void *user);
  void *user;
} named;
static int is_named(const char *name, void *user) { return !strcmp(name, ((named *)user)->name); }
static void pass_on(uintptr_t addr, void *user) { ((named *)user)->fn(addr, ((named *)user)->user); }

int strobe__symbol_find(const char *name, void (*fn)(uintptr_t addr, void *user), void *user) {
  named n = {name, fn, user};
  return strobe__symbol_find_if(is_named, pass_on, &n);
}
