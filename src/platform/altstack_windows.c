/*
 * altstack_windows.c — altstack.h where the crash handler is not ported
 * (docs/platforms.md §Windows: strobe_setup refuses crash_handler there), so
 * no thread is ever given an alternate stack.
 *
 * Must never: allocate.
 */
#include "platform/altstack.h"

#include <stddef.h>

void *strobe__altstack_add(void) { return NULL; }

void strobe__altstack_free(void *stack) { (void)stack; }
