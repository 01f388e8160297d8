/*
 * host_linux.c — host.h on Linux: getpid, the kernel's boot id
 * (/proc/sys/kernel/random/boot_id, a UUID that changes at every boot, and
 * with it CLOCK_MONOTONIC's origin) and getrandom.
 *
 * STROBE_TEST_FAKE_HOST=<32 hex digits>:<signed ns> (tests only,
 * docs/sessions.md §Across hosts) makes this process another host: that boot
 * id, and a monotonic clock shifted by that many ns wherever the process
 * shows its clock (capture headers, operation tokens, /api/clock), so a test
 * on one machine goes through the code a second host would. A malformed value
 * is ignored (the real host), never half-taken.
 */
#include "platform/host.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "strobe/strobe.h"

uint32_t strobe__host_pid(void) { return (uint32_t)getpid(); }

static uint8_t g_boot[16];
static int g_boot_rc = STROBE_EIO;
static pthread_once_t g_boot_once = PTHREAD_ONCE_INIT;

static int hex_nibble(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

static int64_t g_shift_ns;

/* Parses STROBE_TEST_FAKE_HOST into id and g_shift_ns. Returns 1 when it is set and well formed. */
static int fake_host(uint8_t id[16]) {
  const char *v = getenv("STROBE_TEST_FAKE_HOST");
  if (!v || strlen(v) < 34 || v[32] != ':') return 0;
  for (int i = 0; i < 32; i++) {
    int hi = hex_nibble(v[i]);
    if (hi < 0) return 0;
    if (i % 2 == 0) id[i / 2] = (uint8_t)(hi << 4);
    else id[i / 2] |= (uint8_t)hi;
  }
  char *end = NULL;
  errno = 0;
  long long shift = strtoll(v + 33, &end, 10);
  if (errno || !end || *end) return 0;
  g_shift_ns = shift;
  return 1;
}

static void read_boot_id(void) {
  uint8_t fake[16];
  if (fake_host(fake)) {
    memcpy(g_boot, fake, sizeof g_boot);
    g_boot_rc = 0;
    return;
  }
  int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char text[64];
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return;
  uint8_t id[16];
  int nib = 0;
  for (ssize_t i = 0; i < n && nib < 32; i++) {
    if (text[i] == '-' || text[i] == '\n') continue;
    int v = hex_nibble(text[i]);
    if (v < 0) return;
    if (nib % 2 == 0)
      id[nib / 2] = (uint8_t)(v << 4);
    else
      id[nib / 2] |= (uint8_t)v;
    nib++;
  }
  if (nib != 32) return;
  memcpy(g_boot, id, sizeof g_boot);
  g_boot_rc = 0;
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

int strobe__host_random_u64(uint64_t *out) {
  uint64_t v = 0;
  do {
    uint8_t *p = (uint8_t *)&v;
    size_t left = sizeof v;
    while (left) {
      ssize_t k = getrandom(p, left, 0);
      if (k < 0) {
        if (errno == EINTR) continue;
        return STROBE_EIO;
      }
      p += k;
      left -= (size_t)k;
    }
  } while (v == 0);
  *out = v;
  return 0;
}
