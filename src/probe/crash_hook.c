/*
 * crash_hook.c — the hook through which a crash record asks the session
 * layer for the crashing thread's open operation (probe.h >>crash): the
 * probe only holds the pointer, so the capture layer's crash handler
 * (src/capture/crash.c) reaches the session layer without including it.
 *
 * Owns: the pointer. Must never: call anything itself.
 */
#include "probe/probe.h"

strobe__crash_op_fn strobe__crash_op;
