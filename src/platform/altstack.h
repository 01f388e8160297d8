/*
 * altstack.h — an alternate signal stack per thread, so that the crash
 * handler (src/capture/crash.c, docs/recording.md §Crashes) runs when a
 * thread overflows its own stack: the kernel delivers that SIGSEGV only on a
 * stack the thread set aside. One implementation file per platform
 * (altstack_posix.c).
 *
 * Must never: replace a stack the thread (or a sanitizer's runtime) already
 * set aside, or free one the thread is running on.
 */
#ifndef STROBE_PLATFORM_ALTSTACK_H
#define STROBE_PLATFORM_ALTSTACK_H

#define STROBE__ALTSTACK_BYTES (64u << 10) /* the handler's static buffers leave it a few KiB of frames;
                                            * the rest is for the application's handler it chains to */

/* Gives the calling thread an alternate signal stack of STROBE__ALTSTACK_BYTES
 * (with a guard page below it) unless it has one. Returns the stack made
 * (to pass to strobe__altstack_free) or NULL: it had one already, or there
 * was no memory (then a stack overflow on it is not caught). */
void *strobe__altstack_add(void);
/* At the thread's exit: stops using `stack` (when it is still the thread's)
 * and frees it. NULL does nothing. */
void strobe__altstack_free(void *stack);

#endif
