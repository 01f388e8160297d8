/* disabled.c — compiled with -DSTROBE_DISABLE: every macro must expand to no
 * code, so this object must reference no strobe symbol at all (checked by nm). */
#include "strobe/session.h"
#include "strobe/strobe.h"
#include "all_macros.h"

int disabled_probe(int n);
int disabled_probe(int n) { return every_macro(n); }
