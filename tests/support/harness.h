/*
 * harness.h — the C tests' runner and check macros (libuv's test-list.h is
 * the model). Owns: the case list of a test executable, running every case
 * or one by name, recording each failed check with file:line and what it
 * compared, and the closing line "N passed, N failed" that CI reads. Must
 * never be used by the library itself, and never depends on NDEBUG (unlike
 * assert(), a check stays on in every build type).
 *
 * A test file defines its cases as `static void test_<name>(void)` and ends
 * with its list:
 *
 *   #define CASES(X) X(first_case) X(second_case)
 *   HARNESS_MAIN(CASES)
 *
 * The executable then takes:
 *   ./test_x                run every case, in list order, in this process
 *   ./test_x name [name...] run the named cases only (unknown name: exit 2)
 *   ./test_x --list         print the case names, one per line
 * and exits 0 when every check held, 1 when any failed. tests/CMakeLists.txt
 * registers each case as its own CTest test `test_x.name` (so `ctest -R`
 * selects cases, and each case runs in a fresh process: cases never see each
 * other's process state under CTest). Cases are not forked by the runner: a
 * crash ends the executable, which CTest reports as failed, and a debugger or
 * sanitizer sees the case in the process it started.
 *
 * Checks:
 *   CHECK(...)   a failure is recorded and printed, and the case goes on, so
 *                one run shows every broken rule, not only the first;
 *   REQUIRE(...) a failure is recorded and printed, and the case stops there
 *                (longjmp back to the runner): use it where the rest of the
 *                case would be meaningless or would crash (a NULL handle, a
 *                file that did not open).
 * Both are safe from any thread: a CHECK on another thread counts against
 * the running case; a REQUIRE off the case's thread cannot unwind that
 * thread, so it ends the process with exit status 1 after printing. Outside
 * any case (a process-level setup, or a main() of its own), every failed check
 * prints and exits 1.
 */
#ifndef STROBE_TESTS_HARNESS_H
#define STROBE_TESTS_HARNESS_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" { /* C++ tests link the same C harness */
#endif

typedef struct harness_case {
  const char *name;  /* the case name without its test_ prefix */
  void (*run)(void); /* static void test_<name>(void) */
} harness_case;

/* Runs the cases argv selects (see above); returns the process exit status.
 * setup, when not NULL, runs once in the process before the first case (for
 * process-wide configuration such as strobe_setup); its failed checks exit 1. */
int harness_main(int argc, char **argv, const harness_case *cases, size_t count, void (*setup)(void));

/* Records one failed check at file:line with a printf-style description;
 * stop != 0 ends the running case (REQUIRE). */
/* printf's checks; src/platform/compat_windows.h names C99's printf where
 * the compiler's own "printf" is msvcrt's. */
#ifndef STROBE__PRINTF
#define STROBE__PRINTF printf
#endif
void harness_fail(const char *file, int line, int stop, const char *fmt, ...)
    __attribute__((format(STROBE__PRINTF, 4, 5)));

/* Failed checks recorded so far in the running case (0 outside a case). */
int harness_case_failures(void);

/* Registers fn(arg) to run when the running case ends, whether it returned
 * or a REQUIRE stopped it: a fixture's teardown (stop a server, join a
 * thread, remove a file), so a stopped case leaves nothing running for the
 * next. Cleanups run last-registered first, on the case's thread; their
 * failed checks count against the case, and a REQUIRE in one ends only that
 * one. At most HARNESS_MAX_DEFER per case; one more is a failed check and
 * runs at once. Outside a case, fn runs at once. */
#define HARNESS_MAX_DEFER 16
void harness_defer(void (*fn)(void *), void *arg);

#define HARNESS_ENTRY_(name) {#name, test_##name},
#define HARNESS_MAIN_SETUP(LIST, setup)                                                           \
  static const harness_case harness_cases_[] = {LIST(HARNESS_ENTRY_)};                            \
  int main(int argc, char **argv) {                                                               \
    return harness_main(argc, argv, harness_cases_, sizeof harness_cases_ / sizeof harness_cases_[0], \
                        setup);                                                                   \
  }
#define HARNESS_MAIN(LIST) HARNESS_MAIN_SETUP(LIST, NULL)

/* >>checks: each has a CHECK_ form (go on) and a REQUIRE_ form (stop the case). */
/* The outer macros stringize their arguments (as written, before expansion:
 * NULL stays NULL) and pass the text on. */
#define HARNESS_COND_(cond, text, stop, what)                                   \
  do {                                                                          \
    if (!(cond)) harness_fail(__FILE__, __LINE__, stop, "%s(%s)", what, text); \
  } while (0)
#define CHECK(cond) HARNESS_COND_(cond, #cond, 0, "CHECK")
#define REQUIRE(cond) HARNESS_COND_(cond, #cond, 1, "REQUIRE")

/* Integers compared and printed as one type: long long for any integer
 * (_INT), unsigned long long for 64-bit counts (_U64). */
#define HARNESS_EQ_(type, fmt, a, b, text, stop, what)                                        \
  do {                                                                                        \
    type harness_a_ = (type)(a), harness_b_ = (type)(b);                                      \
    if (harness_a_ != harness_b_)                                                             \
      harness_fail(__FILE__, __LINE__, stop, "%s(%s): " fmt " != " fmt, what, text, harness_a_, \
                   harness_b_);                                                               \
  } while (0)
#define CHECK_EQ_INT(a, b) HARNESS_EQ_(long long, "%lld", a, b, #a ", " #b, 0, "CHECK_EQ_INT")
#define REQUIRE_EQ_INT(a, b) HARNESS_EQ_(long long, "%lld", a, b, #a ", " #b, 1, "REQUIRE_EQ_INT")
#define CHECK_EQ_U64(a, b) HARNESS_EQ_(unsigned long long, "%llu", a, b, #a ", " #b, 0, "CHECK_EQ_U64")
#define REQUIRE_EQ_U64(a, b) HARNESS_EQ_(unsigned long long, "%llu", a, b, #a ", " #b, 1, "REQUIRE_EQ_U64")

/* Doubles within an absolute tolerance (NaN never passes; no fabs, so tests
 * need not link libm). */
#define CHECK_NEAR(a, b, eps)                                                                     \
  do {                                                                                            \
    double harness_a_ = (double)(a), harness_b_ = (double)(b);                                    \
    double harness_d_ = harness_a_ > harness_b_ ? harness_a_ - harness_b_ : harness_b_ - harness_a_; \
    if (!(harness_d_ <= (double)(eps)))                                                           \
      harness_fail(__FILE__, __LINE__, 0, "CHECK_NEAR(%s, %s, %s): %.17g vs %.17g", #a, #b, #eps, \
                   harness_a_, harness_b_);                                                       \
  } while (0)

/* Strings, both printed on failure; NULL equals only NULL. */
#define HARNESS_STR_EQ_(a, b, text, stop, what)                                                          \
  do {                                                                                             \
    const char *harness_a_ = (a), *harness_b_ = (b);                                               \
    if (harness_a_ != harness_b_ && (!harness_a_ || !harness_b_ || strcmp(harness_a_, harness_b_))) \
      harness_fail(__FILE__, __LINE__, stop, "%s(%s): \"%s\" != \"%s\"", what, text,         \
                   harness_a_ ? harness_a_ : "(null)", harness_b_ ? harness_b_ : "(null)");        \
  } while (0)
#define CHECK_STR_EQ(a, b) HARNESS_STR_EQ_(a, b, #a ", " #b, 0, "CHECK_STR_EQ")
#define REQUIRE_STR_EQ(a, b) HARNESS_STR_EQ_(a, b, #a ", " #b, 1, "REQUIRE_STR_EQ")

/* A failed condition with a description of the caller's own (printf format). */
#define CHECKF(cond, ...)                                                  \
  do {                                                                     \
    if (!(cond)) harness_fail(__FILE__, __LINE__, 0, __VA_ARGS__);        \
  } while (0)
#define REQUIREF(cond, ...)                                                \
  do {                                                                     \
    if (!(cond)) harness_fail(__FILE__, __LINE__, 1, __VA_ARGS__);        \
  } while (0)

#ifdef __cplusplus
}
#endif

#endif
