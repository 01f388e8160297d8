/*
 * push_app.c — an application whose server pushes its operations over
 * OTLP/HTTP (docs/otel.md §Push from the server), for tests/otel/push.test.mjs:
 * it runs N passes, each with the stage layout holding the stage measure,
 * the stage paint twice, and a stage named at run time (strobe_site_intern:
 * content, which a push must not send), waits until
 * every pass is accounted for in the server's counts (WAIT "sent": sent,
 * refused, dropped or missed, none left queued; WAIT "stuck": queued behind
 * an endpoint that never takes them, dropped or missed, after a retry;
 * bounded at 30 s), prints those counts (with `completed`, the operations the
 * push's session admitted) as one JSON line and stops the server.
 *
 * usage: push_app ENDPOINT N QUEUE_MAX INTERVAL_MS sent|stuck
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "strobe/server.h"
#include "strobe/session.h"

int main(int argc, char **argv) {
  if (argc != 6 || (strcmp(argv[5], "sent") && strcmp(argv[5], "stuck"))) {
    fprintf(stderr, "usage: push_app ENDPOINT N QUEUE_MAX INTERVAL_MS sent|stuck\n");
    return 2;
  }
  int stuck = !strcmp(argv[5], "stuck");
  unsigned n = (unsigned)atoi(argv[2]);
  strobe_collector *c;
  strobe_window w;
  if (strobe_collector_create(&c) || strobe_window_register(c, "main", 0, &w)) return 1;
  strobe_server *s;
  int rc = strobe_server_start(&(strobe_server_desc){.token = "push-test-token-0123456789", .quiet = 1, .collector = c,
                                                     .otlp_endpoint = argv[1], .otlp_service = "push_app",
                                                     .otlp_queue_max = (uint32_t)atoi(argv[3]),
                                                     .otlp_interval_ms = (uint32_t)atoi(argv[4])},
                               &s);
  if (rc) {
    fprintf(stderr, "push_app: strobe_server_start: %s\n", strobe_strerror(rc));
    return 1;
  }
  const char *secret = "customer_invoice_4711"; /* follows the label rule: only the opt-in would send it */
  strobe_site *named = strobe_site_intern(secret, strlen(secret), NULL, STROBE_SITE_STAGE);
  for (unsigned i = 0; i < n; i++) {
    strobe_op op = strobe_op_begin_frame(c, w, 1000 + i, NULL);
    {
      STROBE_STAGE("layout", NULL);
      usleep(200);
      {
        STROBE_STAGE("measure", NULL);
        usleep(100);
      }
    }
    for (int k = 0; k < 2; k++) {
      STROBE_STAGE("paint", NULL);
      usleep(100);
    }
    strobe_stage st = strobe_stage_begin(named);
    usleep(100);
    strobe_stage_end(&st);
    strobe_op_counter_add("rows", (double)i);
    strobe_op_end(op, 1);
    usleep(1000);
  }
  strobe_server_stats st = {0};
  for (int waited = 0; waited < 3000; waited++) { /* every pass accounted for, or 30 s */
    st = strobe_server_query_stats(s);
    uint64_t gone = st.otlp_dropped + st.otlp_missed;
    if (!stuck && st.otlp_spans + st.otlp_rejected + gone >= n && !st.otlp_queued) break;
    if (stuck && st.otlp_queued + gone >= n && st.otlp_retries > 0) break;
    usleep(10000);
  }
  printf("{\"spans\":%llu,\"batches\":%llu,\"queued\":%llu,\"dropped\":%llu,\"missed\":%llu,\"rejected\":%llu,"
         "\"retries\":%llu,\"completed\":%llu,\"secret_site\":%u}\n",
         (unsigned long long)st.otlp_spans, (unsigned long long)st.otlp_batches, (unsigned long long)st.otlp_queued,
         (unsigned long long)st.otlp_dropped, (unsigned long long)st.otlp_missed,
         (unsigned long long)st.otlp_rejected, (unsigned long long)st.otlp_retries,
         (unsigned long long)st.otlp_completed, named->id);
  fflush(stdout);
  strobe_server_stop(s);
  strobe_collector_release(c);
  return 0;
}
