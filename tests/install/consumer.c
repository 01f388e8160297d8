/*
 * consumer.c — a program outside the Strobe tree that uses only what an
 * installed Strobe provides (the public header and the library), built by
 * tests/install/run.sh through pkg-config and through find_package.
 */
#include <stdio.h>
#include <string.h>

#include <strobe/strobe.h>

int main(void) {
  STROBE_SCOPE("x");
  const char *v = strobe_version();
  printf("strobe %s\n", v);
  /* The header and the library must come from the same release. */
  if (strcmp(v, STROBE_VERSION_STRING) != 0) {
    fprintf(stderr, "header is %s but library is %s\n", STROBE_VERSION_STRING, v);
    return 1;
  }
  return 0;
}
