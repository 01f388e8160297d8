/*
 * altstack_posix.c — altstack.h with sigaltstack(2): the stack is an
 * anonymous mapping whose lowest page is PROT_NONE, so a handler that
 * overflows it faults instead of writing over other memory.
 *
 * Owns: the mappings it hands out. Must never: take the place of a thread's
 * own alternate stack.
 */
#include "platform/altstack.h"

#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <unistd.h>

static size_t page_bytes(void) {
  long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? (size_t)p : 4096u;
}

void *strobe__altstack_add(void) {
  stack_t old;
  if (sigaltstack(NULL, &old) == 0 && !(old.ss_flags & SS_DISABLE)) return NULL; /* the thread's own */
  size_t guard = page_bytes();
  char *m = mmap(NULL, guard + STROBE__ALTSTACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return NULL;
  stack_t ss = {.ss_sp = m + guard, .ss_size = STROBE__ALTSTACK_BYTES, .ss_flags = 0};
  if (mprotect(m, guard, PROT_NONE) || sigaltstack(&ss, NULL)) {
    munmap(m, guard + STROBE__ALTSTACK_BYTES);
    return NULL;
  }
  return m;
}

void strobe__altstack_free(void *stack) {
  if (!stack) return;
  size_t guard = page_bytes();
  stack_t cur;
  if (sigaltstack(NULL, &cur) == 0 && cur.ss_sp == (char *)stack + guard) {
    if (cur.ss_flags & SS_ONSTACK) return; /* running on it: left as it is */
    stack_t off = {.ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE};
    if (sigaltstack(&off, NULL)) return;
  }
  munmap(stack, guard + STROBE__ALTSTACK_BYTES);
}
