/* disabled.c — compiled with -DSTROBE_DISABLE: every macro must expand to no
 * code, so this object must reference no strobe symbol at all (checked by nm);
 * every public header is included, so their inline deprecated aliases must
 * not leave a symbol behind either. */
#include "strobe/capture.h"
#include "strobe/flight.h"
#include "strobe/record.h"
#include "strobe/server.h"
#include "strobe/session.h"
#include "strobe/strobe.h"
#include "strobe/trace.h"
#include "strobe/viewer.h"
#include "all_macros.h"

int disabled_probe(int n);
int disabled_probe(int n) { return every_macro(n); }
