/* header_cxx.cpp — the public headers compile as C++17 and the RAII wrappers work. */
#include "strobe/capture.h"
#include "strobe/deep.h"
#include "strobe/explain.h"
#include "strobe/flight.h"
#include "strobe/frames.h"
#include "strobe/record.h"
#include "strobe/server.h"
#include "strobe/session.h"
#include "strobe/strobe.h"
#include "strobe/trace.h"
#include "strobe/viewer.h"
#include "strobe/strobe.hpp"
#include "all_macros.h"

static int cxx_scopes(int n) {
  STROBE_CXX_SCOPE("cxx_scope");
  int acc = 0;
  for (int i = 0; i < n; i++) {
    STROBE_CXX_CUMULATIVE("cxx_loop");
    acc += i;
  }
  return acc;
}

int main() { return every_macro(3) == 3 && cxx_scopes(3) == 3 ? 0 : 1; }
