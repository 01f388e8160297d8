/*
 * fuzz_producer_batch.c — libFuzzer target for the parser of POST
 * /api/producer/spans's batch (src/server/producer_batch.c,
 * strobe__batch_parse; docs/server.md §External producers). Input: the body.
 *
 * Beyond ASan/UBSan, every result is checked against what the endpoint
 * relies on to write a batch whole or not at all: an accepted batch has
 * 1..16 lanes that follow the lane rule, 1..256 names of 1..128 bytes
 * without NUL, 1..4096 spans whose lane and name indices are in range and
 * whose times are 1 <= begin <= end; a refused one says why and holds
 * nothing (its counts are 0).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/producer_batch.h"

static strobe__batch *g_b;

static int lane_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '/' || c == ':' || c == '-';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!g_b && !(g_b = malloc(sizeof *g_b))) abort();
  /* An exact-size copy, so ASan catches a read one past the end. */
  char *body = malloc(size ? size : 1);
  if (!body) return 0;
  if (size) memcpy(body, data, size);
  char why[256];
  int rc = strobe__batch_parse(body, size, g_b, why, sizeof why);
  free(body);
  const strobe__batch *b = g_b;
  if (rc) {
    if (rc != STROBE_EINVAL && rc != STROBE_ELIMIT && rc != STROBE_EVERSION) abort();
    if (!why[0] || b->n_lanes || b->n_names || b->n_spans) abort();
    return 0;
  }
  if (b->n_lanes < 1 || b->n_lanes > STROBE__BATCH_MAX_LANES || b->n_names < 1 ||
      b->n_names > STROBE__BATCH_MAX_NAMES || b->n_spans < 1 || b->n_spans > STROBE__BATCH_MAX_SPANS)
    abort();
  for (uint32_t i = 0; i < b->n_lanes; i++) {
    size_t n = strnlen(b->lanes[i], sizeof b->lanes[i]);
    if (n < 1 || n > STROBE_PRODUCER_LANE_NAME_MAX) abort();
    for (size_t k = 0; k < n; k++)
      if (!lane_char((unsigned char)b->lanes[i][k])) abort();
  }
  for (uint32_t i = 0; i < b->n_names; i++)
    if (b->name_len[i] < 1 || b->name_len[i] > STROBE__BATCH_NAME_MAX ||
        strnlen(b->names[i], sizeof b->names[i]) != b->name_len[i])
      abort();
  for (uint32_t i = 0; i < b->n_spans; i++) {
    const strobe__batch_span *s = &b->spans[i];
    if (s->lane >= b->n_lanes || s->name >= b->n_names || !s->begin || s->end < s->begin) abort();
  }
  return 0;
}
