/* all_macros.h — one function that uses every instrumentation macro; included by
 * the header compile tests (C, C++, and with STROBE_DISABLE). */
static inline int every_macro(int n) {
  STROBE_FUNCTION();
  int acc = 0;
  {
    STROBE_SCOPE("block");
    STROBE_SCOPE_CAT("block_cat", "category");
    for (int i = 0; i < n; i++) {
      STROBE_CUMULATIVE("loop");
      acc += i;
    }
    STROBE_VALUE("acc", acc);
    STROBE_VALUE_UNIT("acc_bytes", (unsigned long)acc * 8u, STROBE_UNIT_BYTES);
    STROBE_VALUE_UNIT("acc_ms", acc * 0.5, STROBE_UNIT_MS);
  }
  STROBE_BEGIN("explicit");
  STROBE_BEGIN_CAT("explicit_cat", "category");
  STROBE_END();
  STROBE_COUNTER_ADD("counter", 1);
  STROBE_COUNTER_ADD_UNIT("counter_ns", (long long)n, STROBE_UNIT_NS);
  STROBE_GAUGE_SET("gauge", acc);
  STROBE_GAUGE_SET_UNIT("gauge_percent", (float)acc, STROBE_UNIT_PERCENT);
  STROBE_END();
  STROBE_FRAME_MARK();
  {
    /* Allocations and messages (docs/memory.md): each argument evaluated once; NULL records nothing. */
    static char block[64];
    STROBE_ALLOC(block, sizeof block, "header_pool");
    STROBE_FREE(block, "header_pool");
    STROBE_ALLOC((void *)0, 8, "header_pool");
    STROBE_MESSAGE("header message");
    STROBE_MESSAGE_TEXT("run-time text", 13);
  }
  {
    STROBE_STAGE("stage", NULL);
    STROBE_STAGE("nested_stage", "stage");
  }
  {
    /* The *_SITE forms, on a site the application declared (an interned one in real code). */
    static strobe_site scope_site = {"scope_site", NULL, NULL, __FILE__, "every_macro", __LINE__, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0};
    static strobe_site value_site = {"value_site", NULL, NULL, __FILE__, "every_macro", __LINE__, STROBE_SITE_VALUE, 0, STROBE_UNIT_NONE, 0};
    static strobe_site loop_site = {"loop_site", NULL, NULL, __FILE__, "every_macro", __LINE__, STROBE_SITE_CUMULATIVE, 0, STROBE_UNIT_NONE, 0};
    static strobe_site counter_site = {"counter_site", NULL, NULL, __FILE__, "every_macro", __LINE__, STROBE_SITE_COUNTER, 0, STROBE_UNIT_NONE, 0};
    static strobe_site gauge_site = {"gauge_site", NULL, NULL, __FILE__, "every_macro", __LINE__, STROBE_SITE_GAUGE, 0, STROBE_UNIT_NONE, 0};
    int sum = 0;
    STROBE_SCOPE_SITE(&scope_site);
    for (int i = 0; i < n; i++) {
      STROBE_CUMULATIVE_SITE(&loop_site);
      sum += i;
    }
    STROBE_VALUE_SITE(&value_site, sum);
    STROBE_COUNTER_ADD_SITE(&counter_site, 1);
    STROBE_GAUGE_SET_SITE(&gauge_site, sum);
    STROBE_BEGIN_SITE(&scope_site);
    STROBE_END();
  }
  strobe_stage explicit_stage;
  STROBE_STAGE_BEGIN(explicit_stage, "explicit_stage", NULL);
  (void)STROBE_STAGE_END(explicit_stage);
  return acc;
}
