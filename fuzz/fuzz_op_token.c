/*
 * fuzz_op_token.c — libFuzzer target for operation tokens
 * (docs/sessions.md §The operation token): any bytes go through
 * strobe_op_resume_remote in a collector labelled "sender". It must never
 * crash, hang or leak; a token it accepts becomes an operation that ends
 * like any other, and every refusal is counted exactly once.
 *
 * Mutated tokens nearly always fail their checksum, or come from another
 * boot, which would keep the fuzzer out of the parser. So each input is
 * tried as is (which fuzzes those checks) and, when it is long enough, again
 * with this host's boot id at offset 16 and the closing FNV-1a 64 recomputed.
 * The seed (corpus/fuzz_op_token/frame-3-stages.tok) is a pass handed from
 * "screen" to "sender" with three stages, one nested, of window "main" in
 * population "scroll" (token layout version 2).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "platform/host.h"
#include "strobe/session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static strobe_collector *g_c;
static strobe_window g_w;

static uint64_t refusals(void) {
  strobe_remote_stats s;
  strobe_collector_query_remote_stats(g_c, &s);
  return s.refused_malformed + s.refused_truncated + s.refused_version + s.refused_corrupt + s.refused_replayed +
         s.refused_foreign + s.refused_limit;
}

static void try_token(const uint8_t *data, size_t size) {
  uint64_t before = refusals();
  int st = 1;
  strobe_op op = strobe_op_resume_remote(g_c, g_w, data, size, &st);
  if (op.id) {
    if (st) abort(); /* an operation only with success */
    STROBE_STAGE("fuzz_stage", NULL);
    strobe_op_end(op, 1);
  } else if (st == 0 || refusals() != before + 1) {
    abort(); /* every refusal has its code and is counted once */
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!g_c) {
    if (strobe_collector_create(&g_c) || strobe_collector_set_process(g_c, "sender") ||
        strobe_window_register(g_c, "main", 0, &g_w))
      abort();
    char id[STROBE_SESSION_ID_MAX];
    strobe_session_start(g_c, NULL, id); /* stages are kept: the copy into the operation runs */
  }
  try_token(data, size);
  if (size < 40 || size > STROBE_OP_TOKEN_MAX) return 0;
  uint8_t *copy = malloc(size);
  if (!copy) return 0;
  memcpy(copy, data, size);
  strobe__host_boot_id(copy + 16);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size - 8; i++) h = (h ^ copy[i]) * 0x100000001b3ull;
  for (int i = 0; i < 8; i++) copy[size - 8 + i] = (uint8_t)(h >> (8 * i));
  try_token(copy, size);
  free(copy);
  return 0;
}
