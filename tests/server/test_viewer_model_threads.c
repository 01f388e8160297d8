/*
 * test_viewer_model_threads.c — two viewer models built at the same time
 * (two servers, or a live view beside a file view) share nothing
 * (src/viewer/viewer_model.c, docs/viewer.md §The model):
 *   - each thread builds, again and again, the model of its own capture in
 *     memory whose clock jumps back and forth, so every build has to sort
 *     its top-level row (the path a broken or hostile file takes), both
 *     rows the same length but in different orders;
 *   - every model it gets is exactly its own capture's: the row in start
 *     order, each span's value still on its span, the right number of spans.
 * Under ThreadSanitizer (the sanitizer_tsan sub-build) any state the two
 * builds share without a lock is a reported race and fails the test; in
 * the other builds a build that sorted with the other thread's data fails
 * the content checks whenever the two collide.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "support/capture_memory.h"
#include "support/harness.h"
#include "format/capture_writer.h"
#include "format/codec.h"
#include "strobe/strobe.h"
#include "viewer/viewer_model.h"

#define ROUNDS 8 /* builds per thread; each sorts a row of tens of thousands of spans */

/* >>capture: into memory (support/capture_memory.h), with scopes out of time order. */
static strobe_site g_scope = {"step", NULL, NULL, "t.c", "step", 1, STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0};
static strobe_site g_value = {"index", NULL, NULL, "t.c", "step", 2, STROBE_SITE_VALUE, 0, STROBE_UNIT_NONE, 0};

/* `n` top-level scopes on one thread, written in the order i = 0..n-1,
 * scope i starting at base + slot(i) * 300 ns, 100 ns long, carrying VALUE
 * i. slot(i) = (n - 1 - i * step) mod n: with step 1 the clock runs
 * straight back; with another step (coprime with n) it jumps about. Sorted
 * by start, row position slot(i) holds scope i. */
static uint32_t slot_of(uint32_t n, uint32_t step, uint32_t i) {
  return (uint32_t)(((uint64_t)n - 1u + (uint64_t)n * step - (uint64_t)i * step % n) % n);
}

static strobe__buf shuffled_capture(uint32_t n, uint32_t step, uint64_t base) {
  strobe__buf out = {0};
  strobe__header_facts facts = {{"monotonic", 1, 1.0, 0, 0}, 0, "x86_64", 0, 1, 4096, 0, 0, 0, NULL, NULL};
  strobe__writer_desc d = {"file", 100, 1, 0, 0, cm_sink, &out, &facts};
  strobe__writer *w = NULL;
  CHECK(strobe__writer_create(&d, &w) == 0);
  strobe__writer_site(w, 1, &g_scope);
  strobe__writer_site(w, 2, &g_value);
  strobe__writer_thread(w, 0, 100, "main", 0);
  strobe__event ev[4];
  for (uint32_t i = 0; i < n; i++) {
    uint64_t t = base + (uint64_t)slot_of(n, step, i) * 300u;
    ev[0] = (strobe__event){t, STROBE__EV_BEGIN, 1};
    ev[1] = (strobe__event){t + 50, STROBE__EV_VALUE, 2};
    ev[2] = (strobe__event){cm_f64_bits((double)i), STROBE__EV_PAYLOAD, 0};
    ev[3] = (strobe__event){t + 100, STROBE__EV_END, 1};
    strobe__writer_events(w, 0, ev, 4);
  }
  strobe__writer_thread_end(w, 0);
  strobe_misuse mis = {0};
  CHECK(strobe__writer_finish(w, base + (uint64_t)n * 300u, &mis) == 0);
  strobe__writer_destroy(w);
  return out;
}

/* >>checks */
static size_t col(const strobe__vtable *t, const char *name) {
  for (uint32_t i = 0; i < t->ncols; i++)
    if (!strcmp(t->cols[i].name, name)) return t->cols[i].offset;
  CHECK(!"no such column");
  return 0;
}

typedef struct job {
  uint32_t n, step;
  uint64_t base;
  strobe__buf cap;
  pthread_barrier_t *go; /* each round's builds start together, so their sorts overlap */
} job;

static void check_model(const job *j, const strobe__vmodel *m) {
  const strobe__vtable *sp = strobe__vmodel_table(m, "spans");
  REQUIRE(sp != NULL); /* on a builder thread: a failure ends the process */
  CHECK_EQ_INT(sp->rows, j->n);
  const double *start = (const double *)(const void *)(sp->data + col(sp, "start"));
  for (uint32_t k = 1; k < sp->rows; k++) CHECK(start[k] > start[k - 1]);
  const strobe__vtable *vt = strobe__vmodel_table(m, "values");
  REQUIRE(vt != NULL);
  CHECK_EQ_INT(vt->rows, j->n);
  const double *value = (const double *)(const void *)(vt->data + col(vt, "value"));
  const uint32_t *span = (const uint32_t *)(const void *)(vt->data + col(vt, "span"));
  for (uint32_t k = 0; k < vt->rows; k++) {
    CHECK(span[k] < sp->rows);
    /* The value written with scope i sits on the row where scope i ended up. */
    CHECK_EQ_INT(span[k], slot_of(j->n, j->step, (uint32_t)value[k]));
  }
}

static void *build_loop(void *arg) {
  const job *j = arg;
  strobe__vsource src = {NULL, j->cap.data, j->cap.len, "mem", "file"};
  for (int r = 0; r < ROUNDS; r++) {
    pthread_barrier_wait(j->go);
    strobe__vmodel *m = NULL;
    REQUIRE(strobe__vmodel_build(&src, 1u << 20, (uint64_t)r + 1, &m) == 0);
    CHECK_EQ_U64(m->spans, j->n);
    check_model(j, m);
    strobe__vmodel_release(m);
  }
  return NULL;
}

static void test_two_models_at_once(void) {
  /* The same size (so the two builds reach their sorts together) but
   * different orders: a sort that used the other build's row misplaces spans. */
  pthread_barrier_t go;
  REQUIRE(pthread_barrier_init(&go, NULL, 2) == 0);
  job jobs[2] = {{20000, 1, 50000000, {0}, &go}, {20000, 7, 90000000, {0}, &go}};
  for (int i = 0; i < 2; i++) jobs[i].cap = shuffled_capture(jobs[i].n, jobs[i].step, jobs[i].base);
  pthread_t th[2];
  for (int i = 0; i < 2; i++) REQUIRE(pthread_create(&th[i], NULL, build_loop, &jobs[i]) == 0);
  for (int i = 0; i < 2; i++) CHECK(pthread_join(th[i], NULL) == 0);
  for (int i = 0; i < 2; i++) strobe__buf_free(&jobs[i].cap);
  pthread_barrier_destroy(&go);
}

#define CASES(X) X(two_models_at_once)
HARNESS_MAIN(CASES)
