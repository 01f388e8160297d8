/*
 * host_common.c — the parts of host.h every OS shares: the boot identity
 * read once (from the OS file's strobe__host_os_boot_id) and shown as hex,
 * and STROBE_TEST_FAKE_HOST=<32 hex digits>:<signed ns> (tests only,
 * docs/sessions.md §Across hosts), which makes this process another host:
 * that boot id, and a monotonic clock shifted by that many ns wherever the
 * process shows its clock (capture headers, operation tokens, /api/clock),
 * so a test on one machine goes through the code a second host would.
 *
 * Must never: half-take a malformed STROBE_TEST_FAKE_HOST (it is ignored:
 * the real host), or report an unreadable boot id as a real one.
 */
#include "platform/host.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "strobe/strobe.h"

static uint8_t g_boot[16];
static int g_boot_rc = STROBE_EIO;
static pthread_once_t g_boot_once = PTHREAD_ONCE_INIT;
static int64_t g_shift_ns;

static int hex_nibble(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

int strobe__host_hex16(const char *text, size_t len, uint8_t out[16]) {
  uint8_t id[16];
  int nib = 0;
  for (size_t i = 0; i < len && nib < 32; i++) {
    if (text[i] == '-' || text[i] == '\n') continue;
    int v = hex_nibble(text[i]);
    if (v < 0) return -1;
    if (nib % 2 == 0)
      id[nib / 2] = (uint8_t)(v << 4);
    else
      id[nib / 2] |= (uint8_t)v;
    nib++;
  }
  if (nib != 32) return -1;
  memcpy(out, id, 16);
  return 0;
}

/* Parses STROBE_TEST_FAKE_HOST into id and g_shift_ns. Returns 1 when it is set and well formed. */
static int fake_host(uint8_t id[16]) {
  const char *v = getenv("STROBE_TEST_FAKE_HOST");
  if (!v || strlen(v) < 34 || v[32] != ':') return 0;
  for (int i = 0; i < 32; i++)
    if (hex_nibble(v[i]) < 0) return 0;
  char *end = NULL;
  errno = 0;
  long long shift = strtoll(v + 33, &end, 10);
  if (errno || !end || *end) return 0;
  if (strobe__host_hex16(v, 32, id)) return 0;
  g_shift_ns = shift;
  return 1;
}

static void read_boot_id(void) {
  uint8_t id[16];
  if (fake_host(id) || strobe__host_os_boot_id(id) == 0) {
    memcpy(g_boot, id, sizeof g_boot);
    g_boot_rc = 0;
  }
}

int strobe__host_boot_id(uint8_t out[16]) {
  pthread_once(&g_boot_once, read_boot_id);
  if (g_boot_rc) {
    memset(out, 0, 16);
    return g_boot_rc;
  }
  memcpy(out, g_boot, 16);
  return 0;
}

int64_t strobe__host_mono_shift_ns(void) {
  pthread_once(&g_boot_once, read_boot_id);
  return g_shift_ns;
}

int strobe__host_boot_hex(char out[33]) {
  uint8_t id[16];
  int rc = strobe__host_boot_id(id);
  static const char hex[] = "0123456789abcdef";
  for (int i = 0; i < 16; i++) out[2 * i] = hex[id[i] >> 4], out[2 * i + 1] = hex[id[i] & 15];
  out[rc ? 0 : 32] = 0;
  return rc;
}
