/* header_c.c — the public headers compile as C11 and every macro works. */
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
#include "all_macros.h"

int main(void) { return every_macro(3) == 3 ? 0 : 1; }
