/*
 * errors.c — error codes to text and names (generated from STROBE_ERRNO_MAP),
 * and the library's version.
 */
#include "strobe/strobe.h"

const char *strobe_version(void) { return STROBE_VERSION_STRING; }
int strobe_version_number(void) { return STROBE_VERSION_NUMBER; }

const char *strobe_strerror(int err) {
  switch (err) {
#define XX(name, value, text) \
  case value:                 \
    return text;
    STROBE_ERRNO_MAP(XX)
#undef XX
    case 0:
      return "success";
    default:
      return "unknown error";
  }
}

const char *strobe_err_name(int err) {
  switch (err) {
#define XX(name, value, text) \
  case value:                 \
    return "STROBE_" #name;
    STROBE_ERRNO_MAP(XX)
#undef XX
    case 0:
      return "STROBE_OK";
    default:
      return "STROBE_E?";
  }
}
