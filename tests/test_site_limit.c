/*
 * test_site_limit.c — an exhausted site registry: the inline BEGIN stores a
 * site pointer and the drain registers the site, so a scope whose site
 * cannot be registered any more is still recorded, under the fallback site
 * "strobe: unregistered site", and the stream stays balanced. Explicit
 * registration says STROBE_ELIMIT; sites registered earlier keep their ids.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/fixtures.h"
#include "support/harness.h"
#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/strobe.h"

#define USER_SITES (STROBE_MAX_SITES - 2) /* the last id is kept for the fallback site */

static strobe_site one_too_many = {"one_too_many", NULL, NULL, __FILE__, "main", __LINE__, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0};

static void test_full_registry_falls_back(void) {
  strobe_site *sites = calloc(USER_SITES, sizeof *sites);
  REQUIRE(sites != NULL);
  for (int i = 0; i < USER_SITES; i++) {
    sites[i] = (strobe_site){"filler", NULL, NULL, __FILE__, "main", (uint32_t)i, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0};
    CHECK(strobe_site_register(&sites[i]) > 0);
  }
  CHECK_EQ_INT(strobe_site_register(&one_too_many), STROBE_ELIMIT);
  CHECK_EQ_INT(strobe_site_register(&sites[7]), (int)sites[7].id); /* idempotent, even when full */

  char path[64];
  REQUIRE(fx_temp_file(path, sizeof path, "site-limit") == 0);
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  for (int i = 0; i < 3; i++) {
    uintptr_t outer = strobe__is_active() ? strobe__begin(&sites[0]) : 0;
    uintptr_t inner = strobe__is_active() ? strobe__begin(&one_too_many) : 0;
    CHECK(strobe_thread_query_scope() == &one_too_many); /* the thread's own stack knows the real site */
    strobe__scope_cleanup(&inner);
    strobe__scope_cleanup(&outer);
  }
  CHECK_EQ_INT(strobe_record_stop(rec), 0);
  CHECK_EQ_U64(one_too_many.id, 0);

  strobe_capture *cap;
  REQUIRE_EQ_INT(strobe_capture_open(path, &cap), 0);
  strobe_capture_record r;
  int rc;
  uint64_t filler_ends = 0, fallback_ends = 0;
  while ((rc = strobe_capture_next(cap, &r)) > 0) {
    if (r.type != STROBE_REC_END) continue;
    const strobe_capture_site *s = strobe_capture_query_site(cap, r.site);
    REQUIRE(s != NULL);
    if (!strcmp(s->name, "filler")) {
      CHECK_EQ_INT(r.depth, 1);
      filler_ends++;
    } else if (!strcmp(s->name, "strobe: unregistered site")) {
      CHECK_EQ_INT(r.depth, 2);
      fallback_ends++;
    }
  }
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_U64(filler_ends, 3);
  CHECK_EQ_U64(fallback_ends, 3);
  strobe_capture_totals t = strobe_capture_query_totals(cap);
  CHECK_EQ_U64(t.orphan_ends, 0);
  CHECK_EQ_U64(t.unfinished, 0);
  strobe_capture_close(cap);
  unlink(path);
  free(sites);
}

#define CASES(X) X(full_registry_falls_back)
HARNESS_MAIN(CASES)
