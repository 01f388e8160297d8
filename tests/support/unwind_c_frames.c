/*
 * unwind_c_frames.c — C frames for test_unwind_cxx.cpp, compiled without
 * -fexceptions (tests/CMakeLists.txt): a C++ exception unwinds through them
 * without running their cleanups, so their scopes' ENDs never run. Owns
 * nothing else; must stay C and keep its scopes in three C frames.
 */
#include "support/unwind_c_frames.h"

#include "strobe/strobe.h"

__attribute__((noinline)) static void c_level3(void (*thrower)(void)) {
  STROBE_SCOPE("c_level3");
  thrower();
}

__attribute__((noinline)) static void c_level2(void (*thrower)(void)) {
  STROBE_SCOPE("c_level2");
  c_level3(thrower);
}

__attribute__((noinline)) void unwind_c_frames(void (*thrower)(void)) {
  STROBE_SCOPE("c_level1");
  c_level2(thrower);
}
