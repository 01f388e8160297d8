/*
 * bench_session.c — the sessions issue's budgets, measured in one run:
 *
 *   scope_ratio_session      a STROBE_STAGE inside an operation while one
 *                            session is active (phase publication + per-
 *                            operation aggregation), against the same-run
 *                            floor (budget <= 1.6); scope_ns_in_op_session
 *                            also prints a plain STROBE_SCOPE there (sessions
 *                            alone add nothing to ordinary scopes);
 *   session_read_us_p99,     read and end latency with 8 sessions x 240
 *   session_end_us_p99       samples x 32 stages (budget <= 1000 each);
 *   session_alloc_per_sample_shared
 *                            allocations made by completing one operation
 *                            that all 8 sessions admit (budget = 1: the
 *                            payload is allocated once and shared).
 *
 * Minimum-of-rounds for per-scope figures; percentiles over repeated calls
 * for latencies. Budgets are printed, never asserted. Allocations are
 * counted by tests/support/alloc_count.h.
 *
 * STROBE_BENCH_NEEDS: alloc-count
 */
#include <string.h>

#include "floor.h"
#include "analyze/percentile.h"
#include "support/alloc_count.h"
#include "strobe/session.h"

#define ROUND 20000u
#define ROUNDS 200
#define LATENCY_CALLS 200

__attribute__((noinline)) static void stage_loop(uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    STROBE_STAGE("bench_stage", NULL);
  }
}

__attribute__((noinline)) static void scope_loop(uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    STROBE_SCOPE("bench_scope_in_op");
  }
}

static strobe_site *g_stage_sites;
static strobe_window g_window;

/* One pass with 32 distinct stages, as a dense toolkit frame has. */
static void pass_with_32_stages(strobe_collector *c, strobe_window w) {
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  for (int s = 0; s < STROBE_MAX_STAGES; s++) {
    strobe_stage g = strobe_stage_begin(&g_stage_sites[s]);
    strobe_stage_end(&g);
  }
  strobe_op_end(op, 1);
}

/* p99 of read (or end) in microseconds; *json_p99 gets read/end plus the JSON export. */
static double latency_p99(strobe_collector *c, char ids[][STROBE_SESSION_ID_MAX], int end, double *json_p99) {
  static double us[LATENCY_CALLS], json_us[LATENCY_CALLS];
  for (int i = 0; i < LATENCY_CALLS; i++) {
    strobe_report *r = NULL;
    uint64_t a = fx_now_ns();
    int rc = end ? strobe_session_stop(c, ids[i % 8], 0, &r) : strobe_session_read(c, ids[i % 8], 0, &r);
    uint64_t b = fx_now_ns();
    if (rc) fprintf(stderr, "bench_session: %s\n", strobe_strerror(rc));
    char *json = NULL;
    strobe_report_json(r, &json, NULL);
    uint64_t e = fx_now_ns();
    free(json);
    strobe_report_free(r);
    us[i] = (double)(b - a) / 1e3;
    json_us[i] = (double)(e - a) / 1e3;
    if (end) { /* keep 8 full sessions: restart and refill the ended one */
      strobe_session_start(c, &(strobe_session_desc){.max_samples = 240}, ids[i % 8]);
      for (int k = 0; k < 240; k++) pass_with_32_stages(c, g_window);
    }
  }
  *json_p99 = strobe__dist_of(json_us, LATENCY_CALLS).p99;
  return strobe__dist_of(us, LATENCY_CALLS).p99;
}

int main(void) {
  if (floor_setup()) return 1;
  strobe_collector *c;
  strobe_window w;
  if (strobe_collector_create(&c) || strobe_window_register(c, "main", 0, &w)) return 1;
  g_window = w;

  /* 32 stage sites with distinct names, built at run time like static ones. */
  g_stage_sites = calloc(STROBE_MAX_STAGES, sizeof *g_stage_sites);
  static char names[STROBE_MAX_STAGES][16];
  for (int s = 0; s < STROBE_MAX_STAGES; s++) {
    snprintf(names[s], sizeof names[s], "stage_%02d", s);
    g_stage_sites[s] = (strobe_site){names[s], NULL, s ? names[s - 1] : NULL, __FILE__, __func__,
                                     (uint32_t)__LINE__, STROBE_SITE_STAGE, 0, STROBE_UNIT_NONE, 0};
  }

  /* >>per-scope cost inside an operation, one session active */
  char id[STROBE_SESSION_ID_MAX];
  strobe_session_start(c, NULL, id);
  strobe_op op = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  stage_loop(ROUND);
  scope_loop(ROUND);
  floor_loop(ROUND);
  double floor_ns = 1e300, stage_ns = 1e300, scope_ns = 1e300;
  for (int r = 0; r < ROUNDS; r++) {
    double f = bench_time_round(floor_loop, ROUND);
    double s = bench_time_round(stage_loop, ROUND);
    double p = bench_time_round(scope_loop, ROUND);
    if (f < floor_ns) floor_ns = f;
    if (s < stage_ns) stage_ns = s;
    if (p < scope_ns) scope_ns = p;
  }
  strobe_op_end(op, 1);
  strobe_report *r;
  strobe_session_stop(c, id, 0, &r);
  strobe_report_free(r);

  /* >>read/end latency: 8 sessions x 240 samples x 32 stages */
  char ids[8][STROBE_SESSION_ID_MAX];
  for (int k = 0; k < 8; k++) strobe_session_start(c, &(strobe_session_desc){.max_samples = 240}, ids[k]);
  for (int k = 0; k < 240; k++) pass_with_32_stages(c, w);
  double read_json_p99, end_json_p99;
  double read_p99 = latency_p99(c, ids, 0, &read_json_p99);

  /* >>allocations per shared sample: all 8 sessions admit one operation */
  strobe_op one = strobe_op_begin(c, w, STROBE_OP_PASS, NULL);
  alloc_count_start();
  strobe_op_end(one, 1);
  uint64_t allocs = (uint64_t)alloc_count_stop();

  double end_p99 = latency_p99(c, ids, 1, &end_json_p99);

  printf("BENCH scope_ns_floor %.3f ns\n", floor_ns);
  printf("BENCH stage_ns_session %.3f ns\n", stage_ns);
  printf("BENCH scope_ns_in_op_session %.3f ns\n", scope_ns);
  printf("BENCH scope_ratio_session %.3f ratio\n", stage_ns / floor_ns);
  bench_budget_le("scope_ratio_session", stage_ns / floor_ns, 1.6);
  printf("BENCH session_read_us_p99 %.1f us\n", read_p99);
  bench_budget_le("session_read_us_p99", read_p99, 1000);
  printf("BENCH session_read_json_us_p99 %.1f us\n", read_json_p99);
  printf("BENCH session_end_us_p99 %.1f us\n", end_p99);
  printf("BENCH session_end_json_us_p99 %.1f us\n", end_json_p99);
  bench_budget_le("session_end_us_p99", end_p99, 1000);
  printf("BENCH session_alloc_per_sample_shared %llu allocations\n", (unsigned long long)allocs);
  bench_budget_le("session_alloc_per_sample_shared", (double)allocs, 1);
  strobe_collector_release(c);
  return 0;
}
