/*
 * libcalls.c — an unmodified program whose calls into libc are known
 * (record_test.py, case libcalls): `N` makes N memcmp calls and 7 strlen
 * calls through the PLT, each with arguments the compiler cannot hoist,
 * and one traced function (compiled with -finstrument-functions) that
 * makes 3 of the memcmp calls, so library calls nest in traced ones.
 * Must never: link Strobe or call anything of it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile int offset; /* read on every call: no call is hoisted or folded */

__attribute__((noinline)) int compare_three(const char *a, const char *b) {
  int s = 0;
  for (int i = 0; i < 3; i++) s += memcmp(a + offset, b, 4) < 0;
  return s;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100;
  char a[16] = "hello", b[16] = "hellp";
  int s = compare_three(a, b);
  for (int i = 3; i < n; i++) s += memcmp(a + offset, b, 4 + (i & 1)) < 0;
  for (int i = 0; i < 7; i++) s += (int)strlen(a + offset + (i % 3));
  printf("%d\n", s);
  return 0;
}
