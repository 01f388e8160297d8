/* test_errors.c — every error code has distinct text and a name; the version
 * functions agree with the header. */
#include <string.h>

#include "support/fixtures.h"
#include "support/harness.h"
#include "strobe/strobe.h"

static void test_codes_names_and_version(void) {
  CHECK(!strcmp(strobe_version(), STROBE_VERSION_STRING));
  CHECK_EQ_INT(strobe_version_number(), STROBE_VERSION_NUMBER);
  const int codes[] = {
#define XX(name, value, text) STROBE_##name,
      STROBE_ERRNO_MAP(XX)
#undef XX
  };
  size_t n = sizeof codes / sizeof codes[0];
  for (size_t i = 0; i < n; i++) {
    CHECK(codes[i] < 0);
    CHECK(strcmp(strobe_strerror(codes[i]), "unknown error") != 0);
    CHECK(!strncmp(strobe_err_name(codes[i]), "STROBE_E", 8));
    for (size_t j = 0; j < i; j++) {
      CHECK(codes[i] != codes[j]);
      CHECK(strcmp(strobe_strerror(codes[i]), strobe_strerror(codes[j])) != 0);
    }
  }
  CHECK(!strcmp(strobe_err_name(STROBE_EINVAL), "STROBE_EINVAL"));
  CHECK(!strcmp(strobe_strerror(12345), "unknown error"));
  CHECK(!strcmp(strobe_err_name(12345), "STROBE_E?"));
  CHECK(!strcmp(strobe_strerror(0), "success"));
  CHECK_EQ_INT(strobe_profiling_available(), 1);
}

#define CASES(X) X(codes_names_and_version)
HARNESS_MAIN(CASES)
