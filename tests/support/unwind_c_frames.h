/* unwind_c_frames.h — three nested C scopes that call `thrower` innermost
 * (tests/support/unwind_c_frames.c, compiled without -fexceptions). */
#ifndef STROBE_TESTS_UNWIND_C_FRAMES_H
#define STROBE_TESTS_UNWIND_C_FRAMES_H
#ifdef __cplusplus
extern "C" {
#endif
void unwind_c_frames(void (*thrower)(void));
#ifdef __cplusplus
}
#endif
#endif
